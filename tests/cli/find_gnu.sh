# myriad find against GNU find, case by case where they used to differ, in LC_ALL=C (bytes) and
# LC_ALL=C.UTF-8 (characters): -name/-iname/-path/-regex on non-ASCII, invalid UTF-8 and newline
# names; -regex's '.' and newlines per -regextype; -printf's unknown escapes and directives (printed
# as written, with a warning) and %h/%f on operands with trailing slashes; -xtype; fractional
# -mtime and -mmin; -delete on 'd/.'; -xdev on a bind mount of the same filesystem.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
export XDG_STATE_HOME=$S/state
T=$S/tree
mkdir -p "$T/n"
make_hostile_tree "$T/h"
# é É ß, the Kelvin sign (folds to k in UTF-8), a lone \xe9 (not UTF-8), a newline, ASCII kin
for n in é É ß $'\xe9' $'a\xe9b' $'\xe2\x84\xaa' k K e E a ab SS $'nl\nx' '[' 'a{2}' aa 'a]' İ i $'\xa9'; do
	touch "$T/n/$n"
done
mkdir "$T/n/Édir" && touch "$T/n/Édir/é"

LOCALES="C"
if locale -a 2>/dev/null | grep -qix 'c\.utf-\?8'; then
	LOCALES="C C.UTF-8"
else
	skip "C.UTF-8: the locale is not installed, only LC_ALL=C is compared"
fi

# gcmp NAME EXPR...: in each locale, the same entries as GNU find's for ( EXPR ) -print0 (a
# non-empty set unless ALLOW_EMPTY=1, for a case that myriad's wrong answer would make non-empty).
gcmp() {
	local name=$1 l n; shift
	for l in $LOCALES; do
		LC_ALL=$l find "$T" \( "$@" \) -print0 2>/dev/null | LC_ALL=C sort -z >"$S/want"
		LC_ALL=$l "$MYRIAD" find --no-state "$T" \( "$@" \) -print0 2>"$S/err" | LC_ALL=C sort -z >"$S/got"
		n=$(tr -cd '\0' <"$S/want" | wc -c)
		if [ "$n" -eq 0 ] && [ "${ALLOW_EMPTY:-}" != 1 ]; then
			fail "$name ($l): GNU find itself matches nothing (a test that cannot fail)"
		elif cmp -s "$S/want" "$S/got"; then
			ok "$name ($l, $n entries)"
		else
			fail "$name ($l): differs from GNU find's: $(diff <(tr '\0' '\n' <"$S/want") <(tr '\0' '\n' <"$S/got") | head -5 | tr '\n' ' ' | cat -v) $(head -c 300 "$S/err")"
		fi
	done
}

gcmp "-name '?'" -name '?'
gcmp "-name '??'" -name '??'
gcmp "-name '[é]'" -name '[é]'
gcmp "-name '[!a]'" -path "$T/n/*" -name '[!a]'
gcmp "-name '*é*'" -name '*é*'
gcmp "-name invalid byte" -name $'*\xe9*'
gcmp "-name '*' on every name" -name '*'
gcmp "-name range" -name '[a-z]'
gcmp "-iname é" -iname 'é'
gcmp "-iname É*" -iname 'É*'
gcmp "-iname k (Kelvin sign)" -iname 'k'
gcmp "-iname i (dotted capital I)" -iname 'i'
gcmp "-iname *S*" -iname '*S*'
gcmp "-iname a*b" -iname 'A*B'
gcmp "-path '*/?'" -path '*/?'
ALLOW_EMPTY=1 gcmp "-ipath '*/édir/*'" -ipath '*/édir/*'
for rt in emacs findutils-default posix-extended posix-basic; do
	ALLOW_EMPTY=1 gcmp "-regextype $rt '.' and a newline" -regextype $rt -regex '.*/nl.x'
	gcmp "-regextype $rt '.' on one character" -regextype $rt -regex '.*/n/.'
	gcmp "-regextype $rt '.*' on every name" -regextype $rt -regex '.*'
done
gcmp "-regex emacs has no intervals" -regex '.*/a\{2\}'
gcmp "-regex emacs has no classes" -regex '.*/[[:alpha:]]'
gcmp "-regex emacs '[^a]' takes a newline" -regex '.*/nl[^a]x'
gcmp "-iregex É" -iregex '.*/é'

# pcmp NAME DIR FORMAT: what -printf FORMAT prints on DIR (depth 1 at most) is GNU find's, and so
# is whether a warning is given (stderr empty or not).
pcmp() {
	local name=$1 dir=$2 fmt=$3 wwarn gwarn
	(cd "$T/p" && find "$dir" -maxdepth 1 -printf "$fmt" 2>"$S/werr" | LC_ALL=C sort -z >"$S/want")
	(cd "$T/p" && "$MYRIAD" find --no-state "$dir" -maxdepth 1 -printf "$fmt" 2>"$S/err" | LC_ALL=C sort -z >"$S/got")
	wwarn=$([ -s "$S/werr" ] && echo warned || echo quiet)
	gwarn=$(grep -q 'warning' "$S/err" && echo warned || echo quiet)
	if cmp -s "$S/want" "$S/got" && [ "$wwarn" = "$gwarn" ]; then
		ok "$name ($(wc -c <"$S/want") bytes, $wwarn)"
	else
		fail "$name: GNU find printed [$(od -c "$S/want" | head -3 | tr -s ' ' | tr '\n' ' ')] ($wwarn), myriad [$(od -c "$S/got" | head -3 | tr -s ' ' | tr '\n' ' ')] ($gwarn) $(head -c 200 "$S/err")"
	fi
}
mkdir -p "$T/p/d/sub"
touch "$T/p/d/f"
for e in '\8' '\9' '\q' '\x41' '\e' '\18' '\777' '\\' '\c' 'x\'; do
	pcmp "-printf escape '$e'" d "<$e>\n"
done
for e in '%z' '%!' '%é' '%W' '%%'; do
	pcmp "-printf directive '$e'" d "<$e>\n"
done
for op in d d/ d// / . ./ .// d/sub/ d/sub// d/. ./d/ .//d d/./ ..; do
	pcmp "-printf %h|%f on '$op'" "$op" '%h|%f|%p\n'
done

# -xtype: a symlink's target's type, the link itself when it dangles; a loop is an error.
mkdir -p "$T/x/d"
touch "$T/x/f"
ln -s f "$T/x/lf"
ln -s d "$T/x/ld"
ln -s nowhere "$T/x/dangle"
ln -s f/x "$T/x/notdir"
mkfifo "$T/x/p"
for t in f d l p f,l; do
	gcmp "-xtype $t" -path "$T/x*" -xtype $t
done
ln -s loop "$T/x/loop"
"$MYRIAD" find --no-state "$T/x" -xtype l >/dev/null 2>"$S/err"
rc=$?
grep -q "$T/x/loop.*symbolic links" "$S/err" && expect_eq "-xtype on a symlink loop: reported, exit 1 (as GNU find)" 1 $rc ||
	fail "-xtype on a symlink loop: no error naming it: $(head -c 200 "$S/err")"
rm "$T/x/loop"

# Fractional ages, 2 s from every edge the tests compare with, set again before each case (one
# takes well under a second).
mkdir -p "$T/tm"
tcmp() {
	local now a
	now=$(date +%s)
	for a in 43198 43202 86398 86402 129598 129602 172798 172802 215998 216002 259198 259202 -100; do
		touch -d "@$((now - a))" "$T/tm/a$a"
	done
	gcmp "$@"
}
for m in 1 -1 +1 1.5 -1.5 +1.5 2.5 0.5 -0.5 +0.5 .5 1. +.25; do
	tcmp "-mtime $m" -path "$T/tm/*" -mtime $m
done
for m in 2160.5 -2160.5 +2160.5 720.1 +0.5 -1440.25; do
	tcmp "-mmin $m" -path "$T/tm/*" -mmin $m
done
tcmp "-amin -2160.5" -path "$T/tm/*" -amin -2160.5
tcmp "-ctime -0.5" -path "$T/tm/*" -ctime -0.5

# In a sandbox: -delete on 'd/.', and -xdev across a bind mount and a tmpfs.
if ! sandbox 64m 2>"$S/sberr"; then
	skip "-delete on d/., -xdev on mounts: $(cat "$S/sberr")"
	exit 0
fi
# dcmp NAME OPERAND: GNU find and myriad, each -delete on OPERAND (in a copy of the same tree, run
# from inside w/), leave the same entries with the same exit status; myriad names the operand.
dcmp() {
	local name=$1 op=$2 wrc grc
	for who in gnu myriad; do
		rm -rf "$who" && mkdir -p "$who/w/d/sub" && touch "$who/w/d/f" "$who/w/d/sub/g"
	done
	(cd gnu/w && find "$op" -delete 2>/dev/null)
	wrc=$?
	(cd myriad/w && "$MYRIAD" find --no-state "$op" -delete >/dev/null 2>"$S/err")
	grc=$?
	local want got
	want="$wrc $(cd gnu && find . | LC_ALL=C sort | tr '\n' ' ')"
	got="$grc $(cd myriad && find . | LC_ALL=C sort | tr '\n' ' ')"
	if [ "$want" != "$got" ]; then
		fail "$name: GNU find [$want], myriad [$got]"
	elif [ "$grc" -ne 0 ] && ! grep -qF "$op" "$S/err"; then
		fail "$name: exit $grc without naming '$op': $(head -c 200 "$S/err")"
	else
		ok "$name (exit $grc)"
	fi
}
dcmp "-delete on d/.: its contents go, d stays, an error naming it" d/.
dcmp "-delete on d/./" d/./
dcmp "-delete on ./" ./
dcmp "-delete on . : quiet, exit 0" .

# -xdev: GNU find compares st_dev, so it walks into a bind mount of the same filesystem and not into
# another filesystem; -delete crosses neither (a safety guard of its own).
mkdir -p x/src/in x/bind x/tmp
touch x/src/in/file x/top
mount --bind x/src x/bind && on_exit "umount '$SANDBOX/a/b/c/x/bind'"
mount -t tmpfs none x/tmp && on_exit "umount '$SANDBOX/a/b/c/x/tmp'"
touch x/tmp/other
find x -xdev -print0 | LC_ALL=C sort -z | tr '\0' ' ' >"$S/want"
"$MYRIAD" find --no-state x -xdev -print0 | LC_ALL=C sort -z | tr '\0' ' ' >"$S/got"
expect_eq "-xdev: into the bind mount of the same filesystem, not into the tmpfs (as GNU find)" \
	"$(cat "$S/want")" "$(cat "$S/got")"
"$MYRIAD" find --no-state x -path '*/bind/*' -delete >/dev/null 2>"$S/err"
rc=$?
[ -e x/src/in/file ] && [ -e x/tmp/other ] && grep -q 'mount point: x/bind' "$S/err" &&
	expect_eq "-delete: never into a bind mount nor a tmpfs (reported, exit 1)" 1 $rc ||
	fail "-delete crossed a mount or said nothing: $(ls -R x | tr '\n' ' ') $(head -c 200 "$S/err")"
