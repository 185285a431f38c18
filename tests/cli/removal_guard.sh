# The rules every removing command shares (src/job/removal.c, io/guard, io/rmtree), tried on rm,
# find -delete and copy --delete alike, each in the sandbox with the working directory deep inside:
# - the run's own files (--json, --errors, --state, find's -o and -fprint) inside what would be
#   removed, also named through a symlink or a bind mount: refused, exit 2, nothing written;
# - operands inside each other or named twice (also as "./D/" or through a bind mount): refused,
#   exit 2, nothing removed (they raced each other, with counts that changed from run to run);
# - copy --delete into "link/" (a symlink's target) or into /: refused, exit 2;
# - copy --delete into the working directory or a directory above it: the working directory and its
#   ancestors are never removed (reported "not deleted", exit 1), whatever else goes; copy without
#   --delete never removes an empty working directory to make way for a file.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
export XDG_STATE_HOME=$S/state
if ! sandbox 2>"$S/why"; then
	skip "removal guards: $(cat "$S/why")"
	exit 0
fi
W=$SANDBOX

# A fresh tree: $W/t/D/{sub/f,g}, a source $W/t/src/{x/f}, a directory elsewhere $W/t/else/{k,
# keep/k}, a symlink $W/t/dl to it, a bind mount $W/t/Dbind of D; the working directory $W/a/b/c.
build() {
	cd / || exit 1
	mountpoint -q "$W/t/Dbind" && umount "$W/t/Dbind"
	rm -rf --one-file-system "$W/t" "$W/a"
	mkdir -p "$W/t/D/sub" "$W/t/src/x" "$W/t/else/keep" "$W/t/Dbind" "$W/a/b/c"
	touch "$W/t/D/sub/f" "$W/t/D/g" "$W/t/src/x/f" "$W/t/else/k" "$W/t/else/keep/k"
	ln -s "$W/t/else" "$W/t/dl"
	ln -s "$W/t/D" "$W/t/Dl"
	cd "$W/t" || exit 1
}
on_exit "mountpoint -q '$W/t/Dbind' && umount '$W/t/Dbind'"
listing() { find "$W" -path "$W/t/Dbind" -prune -o -printf '%p %y %i\n' | sort; }

# refused NAME PATTERN CMD...: from $W/t on a fresh tree, CMD exits 2 with a message matching
# PATTERN (grep -E), nothing in the sandbox changes, and no state is left behind.
refused() {
	local name=$1 pattern=$2 before after rc
	shift 2
	build
	[ -n "${BIND:-}" ] && mount --bind "$W/t/D" "$W/t/Dbind"
	before=$(listing)
	"$@" >/dev/null 2>"$S/err"
	rc=$?
	after=$(listing)
	if [ "$rc" != 2 ]; then
		fail "$name: want exit 2, got $rc: $(head -c 300 "$S/err")"
	elif ! grep -qE -- "$pattern" "$S/err"; then
		fail "$name: the message does not say why: $(head -c 300 "$S/err")"
	elif [ "$before" != "$after" ]; then
		fail "$name: the sandbox changed: $(diff <(echo "$before") <(echo "$after") | head -5 | tr '\n' ' ')"
	elif [ -n "$(find "$S/state" -mindepth 2 -maxdepth 2 2>/dev/null)" ]; then
		fail "$name: state left behind: $(find "$S/state" -mindepth 2 | head -3 | tr '\n' ' ')"
	else
		ok "$name"
	fi
	rm -rf "$S/state"
}

own="would be removed as"
# Own files inside what is removed, named directly, through a symlink, and through a bind mount.
for via in D Dl Dbind; do
	BIND=$([ "$via" = Dbind ] && echo 1)
	refused "rm --json $via/j D" "$own" "$MYRIAD" rm --json "$via/j" D
	refused "rm --errors $via/sub/e D" "$own" "$MYRIAD" rm --errors "$via/sub/e" D
	refused "rm --state $via/st D" "$own" "$MYRIAD" rm --state "$via/st" D
	refused "find D -delete --json $via/j" "$own" "$MYRIAD" find --json "$via/j" D -delete
	refused "find D -delete --state $via/new/deeper" "$own" "$MYRIAD" find --state "$via/new/deeper" D -delete
	refused "find D -delete -o $via/out" "$own" "$MYRIAD" find -o "$via/out" D -delete
	refused "find D -fprint $via/sub/p -delete" "$own" "$MYRIAD" find D -fprint "$via/sub/p" -delete
	refused "copy --delete --errors $via/e src D" "$own" "$MYRIAD" copy --delete --errors "$via/e" src D
	refused "copy --delete --json $via/j src D" "$own" "$MYRIAD" copy --delete --json "$via/j" src D
done
BIND=
refused "rm --state D D (the operand itself)" "$own" "$MYRIAD" rm --state D D
# Named through a symlink beside the tree whose target is inside it: the writers follow it.
mklinks() { mkdir -p "$W/t/D/sub/x" && ln -s "$W/t/D/sub/x" "$W/t/else/sl" && ln -s "$W/t/D/sub/l.txt" "$W/t/else/l" &&
	ln -s ../D/g "$W/t/else/fl"; }
for c in "rm --state else/sl D" "rm --json else/l D" "rm --errors else/fl D" "find D -delete -fprint else/l" \
	"find --state else/sl D -delete" "copy --delete --json else/l src D"; do
	build
	mklinks
	before=$(listing)
	# shellcheck disable=SC2086
	"$MYRIAD" $c >/dev/null 2>"$S/err"
	rc=$?
	expect_eq "$c (a symlink beside D into it): exit 2, refused as its own file, nothing changed" \
		"2 1 same" "$rc $(grep -c "$own" "$S/err") $([ "$before" = "$(listing)" ] && echo same || echo changed)"
	rm -rf "$S/state"
done

# Operands inside each other, or the same twice.
same="same directory"
inside="inside '.*', another operand"
refused "rm D D" "$same" "$MYRIAD" rm D D
refused "rm D ./D/" "$same" "$MYRIAD" rm D ./D/
refused "rm D $W/t/D" "$same" "$MYRIAD" rm D "$W/t/D"
refused "rm D D/sub" "$inside" "$MYRIAD" rm D D/sub
refused "rm D/sub D" "$inside" "$MYRIAD" rm D/sub D
refused "rm --dry-run D D/sub" "$inside" "$MYRIAD" rm --dry-run D D/sub
BIND=1 refused "rm D/sub Dbind (a bind mount of D)" "$inside" "$MYRIAD" rm D/sub Dbind
refused "find D D -delete" "$same" "$MYRIAD" find D D -delete
refused "find . D -delete" "$inside" "$MYRIAD" find . D -delete
refused "find D/sub D -delete" "$inside" "$MYRIAD" find D/sub D -delete

# Many operands at once (rm dir*): each one's place told once (the check compared each pair
# through the mount table: 400 operands took 46 s, 1,100 over 8 minutes).
build
mkdir -p many
for i in $(seq 600); do mkdir "many/d$i"; done
(cd many && timeout 30 "$MYRIAD" rm --no-state --dry-run d* >/dev/null 2>"$S/err")
expect_eq "rm --dry-run over 600 operands: exit 0 within 30 s" "0 " "$? $(head -c 200 "$S/err")"

# copy --delete's DST through the same guards as rm's operands.
refused "copy --delete src dl/ (a symlink's target)" "symlink" "$MYRIAD" copy --delete src dl/
refused "copy --delete --dry-run src dl/" "symlink" "$MYRIAD" copy --delete --dry-run src dl/
refused "copy --delete --dry-run src / (never emptied)" "it is /" "$MYRIAD" copy --delete --dry-run src /

# copy --delete into an ancestor of the working directory: the extras beside the chain go; the
# working directory and each directory above it stay, and are not entered (as mount points).
for dst in .. ../.. "$W/a/b"; do
	build
	mkdir -p "$W/a/b/extra/deep" "$W/a/extra2"
	touch "$W/a/b/c/mine" "$W/a/b/extra/deep/f" "$W/a/extra2/f"
	cd "$W/a/b/c" || exit 1
	"$MYRIAD" copy --no-state --delete "$W/t/src" "$dst" >/dev/null 2>"$S/err"
	rc=$?
	kept=$([ -f "$W/a/b/c/mine" ] && [ -d "$W/a/b" ] && echo kept)
	said=$(grep -c "not deleted.*working directory" "$S/err")
	case $dst in
	../..) gone=$([ ! -e "$W/a/extra2" ] && [ -e "$W/a/b/extra" ] && echo "beside gone, under the chain kept") ;;
	*) gone=$([ ! -e "$W/a/b/extra" ] && echo "beside gone, under the chain kept") ;;
	esac
	expect_eq "copy --delete src $dst from a/b/c: exit 1, the working directory kept and said, extras beside it gone" \
		"1 kept 1 beside gone, under the chain kept" "$rc $kept $said $gone"
done
# DST the working directory itself: DST is never removed, its extras are.
build
touch "$W/a/b/c/extra"
cd "$W/a/b/c" || exit 1
"$MYRIAD" copy --no-state --delete "$W/t/src" . >/dev/null 2>"$S/err"
expect_eq "copy --delete src . : exit 0, extras gone, the copy made" "0 no yes" \
	"$? $([ -e extra ] && echo yes || echo no) $([ -f x/f ] && echo yes || echo no)"

# Without --delete, an empty working directory in DST where SRC has a file is not removed to make
# way for it.
build
mkdir -p "$W/a/b/c/w" "$W/t/s2"
touch "$W/t/s2/w"
cd "$W/a/b/c/w" || exit 1
"$MYRIAD" copy --no-state "$W/t/s2" .. >/dev/null 2>"$S/err"
rc=$?
expect_eq "copy into .. where SRC has a file named as the (empty) working directory: it stays, exit 1" \
	"1 yes" "$rc $([ -d "$W/a/b/c/w" ] && echo yes || echo no)"
cd / || exit 1
