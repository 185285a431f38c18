# myriad find gives GNU find's result set (compared sorted, NUL-separated) for many expressions on
# one built tree: names (odd ones too), types, sizes at unit edges, times set with touch -d, owners,
# modes, links, depths, -prune, operators and their precedence, -printf; its errors exit 2 naming
# the predicate; a closed stdout ends it by SIGPIPE without state; -quit acts once; and -fprint
# (and -o FILE) hold each result exactly once across kill -9 and resume.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
export XDG_STATE_HOME=$S/state
T=$S/tree
mkdir -p "$T"
"$MKTREE" "$T/bulk" --files 3000 --fanout 100
make_hostile_tree "$T/h"
mkdir -p "$T/sz" "$T/tm" "$T/own" "$T/md" "$T/e/empty" "$T/e/full/sub" "$T/sub/sub" "$T/CaSe"
: >"$T/e/empty0"
touch "$T/e/full/sub/x" "$T/CaSe/Mixed.TXT" "$T/CaSe/lower.txt" "$T/sub/sub/deep.c" "$T/sub/top.c"
for n in 0 1 2 3 511 512 513 1023 1024 1025 4096 1048575 1048576 1048577; do
	truncate -s "$n" "$T/sz/s$n"
done
touch "$T/own/mine"
if is_root; then
	touch "$T/own/nobody" "$T/own/orphan" "$T/own/orphangrp"
	chown nobody "$T/own/nobody"
	chown 4242 "$T/own/orphan"
	chgrp 4243 "$T/own/orphangrp"
fi
for m in 644 600 755 700 4755 2750 1777 444 000; do
	touch "$T/md/m$m" && chmod "$m" "$T/md/m$m"
done
touch "$T/md/hard"
ln "$T/md/hard" "$T/md/hard2"
ln "$T/md/hard" "$T/sub/hard3"
ln -s ../md/hard "$T/sub/symhard"
# A first pass of each, so that reading directories changes no atime between the runs compared.
find "$T" >/dev/null 2>&1
"$MYRIAD" find --no-state "$T" >/dev/null 2>&1

# fcmp NAME EXPR...: the same entries as find's for ( EXPR ) -print0 (a non-empty set).
fcmp() {
	local name=$1; shift
	find "$T" \( "$@" \) -print0 2>/dev/null | sort -z >"$S/want"
	"$MYRIAD" find --no-state "$T" \( "$@" \) -print0 2>"$S/err" | sort -z >"$S/got"
	local n
	n=$(tr -cd '\0' <"$S/want" | wc -c)
	if [ "$n" -eq 0 ] && [ "${ALLOW_EMPTY:-}" != 1 ]; then
		fail "$name: find itself matches nothing (a test that cannot fail)"
	elif cmp -s "$S/want" "$S/got"; then
		ok "$name ($n entries)"
	else
		fail "$name: differs from find's: $(diff <(tr '\0' '\n' <"$S/want") <(tr '\0' '\n' <"$S/got") | head -5 | tr '\n' ' ') $(head -c 300 "$S/err")"
	fi
}
# raw NAME EXPR...: the same output (sorted by NUL-terminated records) as find's, the actions given.
raw() {
	local name=$1; shift
	find "$T" "$@" 2>/dev/null | sort -z >"$S/want"
	"$MYRIAD" find --no-state "$T" "$@" 2>"$S/err" | sort -z >"$S/got"
	if [ ! -s "$S/want" ]; then
		fail "$name: find itself prints nothing"
	elif cmp -s "$S/want" "$S/got"; then
		ok "$name ($(wc -c <"$S/want") bytes)"
	else
		fail "$name: differs from find's: $(diff <(tr '\0' '\n' <"$S/want") <(tr '\0' '\n' <"$S/got") | head -5 | tr '\n' ' ') $(head -c 300 "$S/err")"
	fi
}

fcmp "everything" -true
fcmp "-name glob" -name '*1*'
fcmp "-name exact" -name f7
fcmp "-name on an operand's last component" -name tree
fcmp "-name hidden" -name '.*'
fcmp "-name with a newline" -name $'*\n*'
fcmp "-name with a leading dash" -name '-*'
fcmp "-name bracket" -name 'f[0-3]'
fcmp "-iname" -iname '*.txt'
fcmp "-path" -path '*/sub/*'
fcmp "-ipath" -ipath '*/case/*'
# Patterns of literals and stars are matched without fnmatch (util/glob): prefix, suffix, runs
# between stars, case folding, '*' across '/', and the empty pattern.
fcmp "-name two runs" -name 'f*1*'
fcmp "-name prefix and suffix" -name 'f*1'
fcmp "-name star alone" -name '*'
fcmp "-iname prefix and suffix" -iname 'F*1'
fcmp "-iname exact" -iname 'SUB'
fcmp "-path star across slashes" -path '*b*/f*'
fcmp "-ipath runs" -ipath '*/SUB*H*3'
ALLOW_EMPTY=1 fcmp "-name empty pattern" -name ''
fcmp "-wholename" -wholename "$T/sz/*"
fcmp "-regex (emacs syntax)" -regex '.*/f[0-9]\(0\|5\)'
fcmp "-regextype posix-extended -regex" -regextype posix-extended -regex '.*/s(0|1|2)'
fcmp "-iregex" -iregex '.*mixed\.txt'
for t in f d l p s; do fcmp "-type $t" -type $t; done
is_root && fcmp "-type b,c" -type b,c
fcmp "-type f,l" -type f,l
for s in 0 -1 +0 1 2 -2 +1 3c 512c -512c +512c 1k -1k +1k 2k 1M -1M +1M 1025c 1w; do
	fcmp "-size $s" -type f -size $s
done
fcmp "-size on directories" -type d -size +0
fcmp "-empty" -empty
fcmp "-empty files" -type f -empty
fcmp "! -empty dirs" -type d ! -empty
# Times relative to now, set just before they are compared (20 s from every edge find compares with).
touch -d '-10 days' "$T/tm/d10"
touch -d '-2 days -3 hours' "$T/tm/d2"
touch -d '-1 day -1 hour' "$T/tm/d1"
touch -d '-23 hours -59 minutes -40 seconds' "$T/tm/h24"
touch -d '-5 hours' "$T/tm/h5"
for m in 29 30 31 59 60 61; do
	touch -d "-$m minutes -20 seconds" "$T/tm/m$m"
	touch -d "-$m minutes +20 seconds" "$T/tm/p$m"
done
touch -d '+1 day' "$T/tm/future"
touch -d '+30 seconds' "$T/tm/soon"
touch -a -d '-4 days' "$T/tm/d10" "$T/tm/d2"
touch -d '-1 day -12 hours' "$S/ref"
for m in 0 1 2 -1 -2 +0 +1 +2 +9 -11; do fcmp "-mtime $m" -path "$T/tm/*" -mtime $m; done
for m in -60 60 +60 -100 +29 30 -31 0 -1 +1; do fcmp "-mmin $m" -path "$T/tm/*" -mmin $m; done
fcmp "-mtime 0 everywhere" -mtime 0
fcmp "-newer" -newer "$S/ref"
fcmp "! -newer" -path "$T/tm/*" ! -newer "$S/ref"
fcmp "-cnewer" -cnewer "$S/ref"
fcmp "-atime +3 (files)" -type f -atime +3
fcmp "-amin -60 (files)" -type f -amin -60
fcmp "-anewer (files)" -type f -anewer "$S/ref"
fcmp "-ctime 0" -ctime 0
fcmp "-cmin -600" -cmin -600
fcmp "-user" -user "$(id -un)"
fcmp "-uid" -uid "$(id -u)"
fcmp "-group" -group "$(id -gn)"
fcmp "-gid +0 or 0" -gid -1000000
if is_root; then
	fcmp "-user nobody" -user nobody
	fcmp "-nouser" -nouser
	fcmp "-nogroup" -nogroup
	fcmp "-uid +4000" -uid +4000
	fcmp "-user by number" -user 4242
fi
for p in 644 -644 /111 -4000 /6000 -1000 0 /0 -u+x -u+w -g=rx,u=rwx a+r,u+w u=rwx,g=rx,o=rx; do fcmp "-perm $p" -path "$T/md/*" -perm $p; done
fcmp "-links 3" -links 3
fcmp "-links +1 files" -type f -links +1
fcmp "-links -2" -links -2
fcmp "-inum" -inum "$(stat -c %i "$T/md/hard")"
fcmp "-samefile" -samefile "$T/md/hard"
fcmp "-samefile a symlink (not followed)" -samefile "$T/sub/symhard"
fcmp "-maxdepth 0" -maxdepth 0
fcmp "-maxdepth 1" -maxdepth 1
fcmp "-maxdepth 2 -name" -maxdepth 2 -name 'd*'
fcmp "-mindepth 3" -mindepth 3
fcmp "-mindepth 1 (depth taken as 1 below the operand, not counted)" -mindepth 1
fcmp "-mindepth 2 -maxdepth 3" -mindepth 2 -maxdepth 3
fcmp "-mindepth 1 -maxdepth 1 -type d" -mindepth 1 -maxdepth 1 -type d
fcmp "-xdev" -xdev -name 'f9*'
fcmp "-depth" -depth -type d
fcmp "-false" -false -o -name f1
fcmp "-not" -not -name '*1*'
fcmp "! !" ! ! -name 'f2*'
# Precedence: -a over -o over ','; ! over -a; parentheses.
fcmp "a -o b c: -a binds tighter" -name 'f1*' -o -name 'f2*' -type d
fcmp "( a -o b ) c" \( -name 'f1*' -o -name 'd*' \) -type d
fcmp "! a b: ! binds tighter" ! -name 'f*' -type f
fcmp "! ( a b )" ! \( -name 'f*' -type f \)
fcmp "a -a b -o c -a d" -name '*1' -a -type f -o -name 'd1' -a -type d
fcmp "-o chain" -name f1 -o -name f2 -o -name f3 -o -name d2
fcmp "nested parentheses" \( \( -name 'f1*' -o -name 'f2*' \) -a \( -path '*d1*' -o -path '*d2*' \) \) -o -type l
fcmp "comma: the right side's value" -name f1 , -name f2
fcmp "-and -or words" -name 'f5*' -and -type f -or -type p
raw "-prune -o -print" -path "$T/bulk" -prune -o -print0
raw "-prune a directory name everywhere" -name sub -prune -o -type f -print0
raw "-prune on the operand" -prune -print0
raw "-print0 and -print both" -name 'f1?' -print0 -name 'f12' -print0
raw "comma actions" -name 'f1' -print0 , -name 'f2' -print0
raw "-printf %p %P %f %h %d" -name 'f1*' -printf '%p|%P|%f|%h|%d\0'
raw "-printf metadata" -path "$T/[smo]*" -printf '%p %s %m %M %U %G %u %g %n %y %i %k %b\0'
raw "-printf times" -path "$T/tm/*" -printf '%p %T@ %A@ %C@\0'
raw "-printf %l and escapes" -type l -printf '%p -> %l\t\\%%\0'
raw "-printf %y of everything" -printf '%y %p\0'
raw "-printf %d of everything (depth counted only when asked)" -printf '%d %p\0'
raw "-printf on the operand" -maxdepth 0 -printf '[%p][%P][%f][%h][%d]\0'
raw "-fprint0 to standard output's file" -name 'f3*' -fprint0 /dev/stdout
# -fprint and -fprintf into files (the same file named twice is one output), beside -print0.
find "$T/bulk" -name 'f3*' -fprint "$S/gf1" -o -name 'f4*' -fprintf "$S/gf2" '%f\n' -o -name 'f5*' -fprint "$S/gf1"
"$MYRIAD" find --no-state -o "$S/mo" "$T/bulk" -name 'f3*' -fprint "$S/mf1" -o -name 'f4*' -fprintf "$S/mf2" '%f\n' \
	-o -name 'f5*' -fprint "$S/mf1" -o -name 'f6*' -print0 >"$S/msum"
expect_eq "-fprint FILE: find's lines" "$(sort "$S/gf1" | md5sum)" "$(sort "$S/mf1" | md5sum)"
expect_eq "-fprintf FILE: find's lines" "$(sort "$S/gf2" | md5sum)" "$(sort "$S/mf2" | md5sum)"
expect_eq "-print0 beside them goes to -o FILE" "$(find "$T/bulk" -name 'f6*' -print0 | sort -z | md5sum)" \
	"$(sort -z "$S/mo" | md5sum)"
[ "$(wc -l <"$S/gf1")" -gt 100 ] && ok "-fprint: a real result set" || fail "-fprint: find wrote $(wc -l <"$S/gf1") lines"

# -print's default on a tree without newlines: lines, as find's.
"$MYRIAD" find --no-state "$T/bulk" -name 'f4*' | sort >"$S/got"
find "$T/bulk" -name 'f4*' | sort >"$S/want"
cmp -s "$S/want" "$S/got" && [ -s "$S/want" ] && ok "default action -print, newline-terminated" ||
	fail "default -print differs"
# Operands: several, with a trailing slash, and the default '.'.
a=$(cd "$T" && find sz/ md -name 's1*' -o -name 'm7*' | sort | md5sum)
b=$(cd "$T" && "$MYRIAD" find --no-state sz/ md -name 's1*' -o -name 'm7*' | sort | md5sum)
expect_eq "several operands, a trailing slash" "$a" "$b"
a=$(cd "$T/md" && find -name 'm*' | sort | md5sum)
b=$(cd "$T/md" && "$MYRIAD" find --no-state -name 'm*' | sort | md5sum)
expect_eq "no operand: '.'" "$a" "$b"
a=$(cd "$T/md" && find | sort | md5sum)
b=$(cd "$T/md" && "$MYRIAD" find --no-state | sort | md5sum)
expect_eq "no operand, no expression" "$a" "$b"

# -quit: acts on one entry, then ends (exit 0); -quit alone prints nothing.
out=$("$MYRIAD" find --no-state -j 4 "$T" -name 'f*' -print -quit)
rc=$?
expect_eq "-print -quit: exit 0" 0 $rc
expect_eq "-print -quit: one result" 1 "$(printf '%s\n' "$out" | grep -c .)"
case $out in "$T"/*/f*) ok "-print -quit: the result is a match" ;; *) fail "-print -quit printed [$out]" ;; esac
"$MYRIAD" find --no-state "$T" -quit | grep -qF "$T" && fail "-quit alone printed a path" || ok "-quit alone prints no path"
"$MYRIAD" find --no-state --json "$S/q.json" "$T" -name f1 -quit >/dev/null
n=$(json_num "$S/q.json" entries)
[ "$n" -lt 3000 ] && ok "-quit stops the walk early ($n entries visited)" || fail "-quit visited $n entries"

# Errors: exit 2, naming the predicate, nothing printed.
err_case() {
	local name=$1 want=$2; shift 2
	out=$("$MYRIAD" find --no-state "$T" "$@" 2>"$S/err")
	rc=$?
	if [ $rc -eq 2 ] && grep -qF -- "$want" "$S/err" && [ -z "$out" ]; then
		ok "error: $name (exit 2, names '$want')"
	else
		fail "error: $name: exit $rc, stdout [$(echo "$out" | head -c 100)], stderr [$(head -c 300 "$S/err")]"
	fi
}
err_case "unknown predicate" "-frobnicate" -frobnicate
err_case "missing argument" "-name" -name
err_case "missing argument of -fprintf" "-fprintf" -fprintf "$S/x"
err_case "bad number" "-mtime" -mtime 1x
err_case "bad size" "-size" -size 3q
err_case "bad size, empty" "-size" -size ''
err_case "bad type" "-type" -type q
err_case "bad depth" "-maxdepth" -maxdepth -1
err_case "bad mode" "-perm" -perm 99
err_case "bad regex" "-regex" -regex '\('
err_case "regex too large to compile" "too large" -regextype posix-extended -regex '((a|b)?){4096}'
err_case "bad -printf directive" "%Z" -printf '%Z'
err_case "unknown user" "-user" -user no_such_user_xyz
err_case "unknown group" "-group" -group no_such_group_xyz
err_case "missing reference file" "-newer" -newer "$S/nonexistent"
err_case "unclosed (" "(" \( -name a
err_case "stray )" ")" -name a \)
err_case "empty ( )" "(" \( \)
err_case "-o with nothing before" "-o" -o -name a
err_case "-o with nothing after" "-o" -name a -o
err_case "! at the end" "!" -name a !
err_case "a path after the expression" "paths must precede" -name a "$T"
out=$("$MYRIAD" find --no-state "$S/nonexistent" 2>"$S/err")
expect_eq "a missing operand: exit 2" 2 $?
grep -q nonexistent "$S/err" && ok "a missing operand is named" || fail "message: $(cat "$S/err")"

# Unreadable directory (not as root: root reads everything): reported, exit 1, the rest found.
if ! is_root; then
	skip "unreadable directory: as root every directory is readable"
else
	setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null &&
		U=(setpriv --reuid=65534 --regid=65534 --clear-groups) || U=()
	if [ ${#U[@]} -eq 0 ]; then
		skip "unreadable directory: setpriv not available"
	else
		R=$S/ro
		mkdir -p "$R/open" "$R/closed"
		touch "$R/open/a" "$R/closed/b"
		chmod 755 "$S" "$R" "$R/open"
		chmod 700 "$R/closed"
		"${U[@]}" "$MYRIAD" find --no-state "$R" -name '*' >"$S/out" 2>"$S/err"
		expect_eq "unreadable directory: exit 1" 1 $?
		grep -q "closed" "$S/err" && ok "unreadable directory: reported by path" || fail "stderr: $(cat "$S/err")"
		grep -qx "$R/open/a" "$S/out" && ok "unreadable directory: the rest is found" || fail "out: $(cat "$S/out")"
	fi
fi

# -xdev with another filesystem mounted inside: the mount point is evaluated, not entered.
if is_root; then
	X=$S/x
	mkdir -p "$X/here/m" "$X/here/d"
	touch "$X/here/d/f1" "$X/here/f2"
	if mount -t tmpfs myriad-find-test "$X/here/m" 2>/dev/null; then
		on_exit "umount '$X/here/m'"
		mkdir "$X/here/m/inside" && touch "$X/here/m/f3" "$X/here/m/inside/f4"
		a=$(find "$X" -xdev -print0 | sort -z | md5sum)
		b=$("$MYRIAD" find --no-state "$X" -xdev -print0 | sort -z | md5sum)
		n=$("$MYRIAD" find --no-state "$X" -xdev -name 'f*' | wc -l)
		expect_eq "-xdev: find's set, the mount point listed, not entered (2 files)" "$a 2" "$b $n"
		b=$("$MYRIAD" find --no-state "$X" -print0 | sort -z | md5sum)
		expect_eq "without -xdev: the mount is searched" "$(find "$X" -print0 | sort -z | md5sum)" "$b"
	else
		skip "-xdev: cannot mount a tmpfs"
	fi
else
	skip "-xdev with a mount inside: needs root"
fi

# A reference file that is gone: exit 2 before anything is read, no state left.
"$MYRIAD" find "$T" -newer "$S/gone" -fprint "$S/nf" 2>"$S/err"
expect_eq "a missing -newer file with a resumable run: exit 2" "2 " "$? $(ls "$S/state/myriad" 2>/dev/null)"

# A reader that goes: SIGPIPE (141), quickly, no state left.
t0=$(date +%s%N)
"$MYRIAD" find "$T" -name 'f*' | head -1 >/dev/null
rc=${PIPESTATUS[0]}
expect_eq "closed stdout: ends by SIGPIPE" 141 "$rc"
expect_eq "closed stdout: no state left" "" "$(ls "$S/state/myriad" 2>/dev/null)"

# --json: the counts.
"$MYRIAD" find --no-state --json "$S/j.json" -o "$S/o" "$T/bulk" -name 'f1*' >"$S/sum"
expect_eq "--json: entries visited" "$(find "$T/bulk" | wc -l)" "$(json_num "$S/j.json" entries)"
expect_eq "--json: matched" "$(find "$T/bulk" -name 'f1*' | wc -l)" "$(json_num "$S/j.json" matched)"
grep -q "matched" "$S/sum" && ok "-o FILE: the summary on standard output" || fail "summary: $(cat "$S/sum")"
out=$("$MYRIAD" find --no-state "$T/bulk" -name f1 2>&1 >/dev/null)
expect_eq "results on standard output: no summary anywhere (as find)" "" "$out"

# --state with results on standard output is refused.
"$MYRIAD" find --state "$S/st" "$T" -name a >/dev/null 2>"$S/err"
expect_eq "--state with results on standard output: exit 2" 2 $?

# Resume: kill -9 at random moments; -fprint0 and -o FILE end with each result exactly once.
B=$S/big
"$MKTREE" "$B" --files 120000 --fanout 100
find "$B" -name '*1*' -fprint0 "$S/w1" -o -type d -print0 | sort -z | md5sum >"$S/want2"
sort -z "$S/w1" | md5sum >"$S/want1"
rm -f "$S/fp" "$S/oo"
big=(--json "$S/k.json" -o "$S/oo" "$B" -name '*1*' -fprint0 "$S/fp" -o -type d -print0)
kills=0
for i in $(seq 6); do
	kill9_after_checkpoint "$S/state" 6 "$MYRIAD" find --rate 30k --checkpoint-interval 0.05 "${big[@]}"
	count_kill $?
done
"$MYRIAD" find "${big[@]}" >/dev/null 2>&1
expect_eq "kill -9 x$kills: the final run exits 0" 0 $?
expect_eq "kill -9: -fprint0 FILE holds each match exactly once" "$(cat "$S/want1")" "$(sort -z "$S/fp" | md5sum)"
expect_eq "kill -9: -o FILE holds each match exactly once" "$(cat "$S/want2")" "$(sort -z "$S/oo" | md5sum)"
expect_eq "kill -9: every killed run was resumed (sessions = kills + 1)" $((kills + 1)) "$(json_num "$S/k.json" sessions)"
expect_eq "kill -9: entries visited equal the tree's" "$(find "$B" | wc -l)" "$(json_num "$S/k.json" entries)"
expect_eq "state removed after the finished run" "" "$(ls "$S/state/myriad")"
