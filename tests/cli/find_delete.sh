# myriad find -delete, in a tmpfs of its own with the working directory deep inside it: the same
# tree left behind as GNU find -delete leaves, the same printed set and exit status, for many
# expressions on twin copies of one tree (hostile names included); rm's guards (a symlink operand
# refused, '.' and the working directory with those above it kept, a mount point left alone, a
# symlink deleted as a link); -prune refused without -depth; and a resume after kill -9 that ends
# with GNU's tree.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
export XDG_STATE_HOME=$S/state
if ! sandbox 512m 2>"$S/why"; then
	skip "every -delete case: $(cat "$S/why")"
	exit 0
fi
W=$PWD # $SANDBOX/a/b/c

# build DIR: the tree each case starts from (made afresh, as cp cannot copy the path longer than
# PATH_MAX): bulk files, empty and full directories, hostile names, links.
build() {
	local P=$1
	mkdir -p "$P"
	"$MKTREE" "$P/bulk" --files 2000 --fanout 50 >/dev/null
	make_hostile_tree "$P/h"
	mkdir -p "$P/e/empty" "$P/e/full/sub" "$P/d1/d2/d3" "$P/keep"
	touch "$P/e/full/sub/x.tmp" "$P/d1/a.tmp" "$P/d1/d2/b.tmp" "$P/d1/d2/d3/c.tmp" "$P/keep/k" "$P/d1/x"
	truncate -s 5000 "$P/d1/big.tmp"
	ln -s ../keep "$P/d1/tokeep"
	ln -s /nonexistent "$P/d1/dangling.tmp"
}
P=$SANDBOX/proto
build "$P"

# dcmp NAME EXPR...: find -delete and myriad find -delete on twin copies: the same tree left, the
# same -print0 set, the same exit status.
dcmp() {
	local name=$1; shift
	rm -rf "$W/gnu" "$W/my"
	build "$W/gnu"
	build "$W/my"
	(cd "$W/gnu" && find . "$@" -print0 2>/dev/null) | sort -z >"$S/want"
	local wrc=${PIPESTATUS[0]}
	(cd "$W/my" && "$MYRIAD" find --no-state . "$@" -print0 2>"$S/err") | sort -z >"$S/got"
	local grc=${PIPESTATUS[0]}
	(cd "$W/gnu" && find . | sort) >"$S/tree.want"
	(cd "$W/my" && find . | sort) >"$S/tree.got"
	local left gone
	left=$(wc -l <"$S/tree.want")
	gone=$(($(cd "$P" && find . | wc -l) - left))
	if [ "$gone" -eq 0 ]; then
		fail "$name: find itself deletes nothing (a test that cannot fail)"
	elif ! cmp -s "$S/tree.want" "$S/tree.got"; then
		fail "$name: the trees left differ: $(diff "$S/tree.want" "$S/tree.got" | head -5 | cut -c1-100 | tr '\n' ' ') $(head -c 300 "$S/err")"
	elif ! cmp -s "$S/want" "$S/got"; then
		fail "$name: the printed sets differ: $(diff <(tr '\0' '\n' <"$S/want") <(tr '\0' '\n' <"$S/got") | head -5 | cut -c1-100 | tr '\n' ' ')"
	elif [ "$wrc" != "$grc" ]; then
		fail "$name: exit $grc, find's $wrc: $(head -c 300 "$S/err")"
	else
		ok "$name ($gone deleted, $left left, exit $grc)"
	fi
}
dcmp "-delete (everything under '.')" -delete
dcmp "-name '*.tmp' -delete" -name '*.tmp' -delete
dcmp "-type f -size +0 -delete" -type f -size +0 -delete
dcmp "-mindepth 2 -delete" -mindepth 2 -delete
dcmp "-mindepth 1 -name 'd*' -delete (depth taken, not counted)" -mindepth 1 -name 'd*' -delete
dcmp "-maxdepth 2 -type f -delete" -maxdepth 2 -type f -delete
dcmp "-maxdepth 2 -type d -empty -delete" -maxdepth 2 -type d -empty -delete
dcmp "-empty -delete (bottom-up: d3 empties, then d2 does not)" -empty -delete
dcmp "-name 'd*' -delete: a full directory fails (rmdir), exit 1" -name 'd*' -delete
dcmp "-type l -delete: links go, their targets stay" -type l -delete
dcmp "-path '*/h/*' -delete (hostile names)" -path '*/h/*' -delete
dcmp "! -name 'k' -delete -o -print" ! -name k -delete -o -true
dcmp "-depth -name x -prune -o -name '*.tmp' -delete" -depth -name x -prune -o -name '*.tmp' -delete

# Guards.
reset_tree() { rm -rf "$W/t" && build "$W/t"; }
reset_tree
ln -sfn "$W/t" "$W/lnk"
before=$(cd "$W/t" && find . | sort | md5sum)
"$MYRIAD" find --no-state "$W/lnk" -delete 2>"$S/err"
expect_eq "a symlink operand: exit 2" 2 $?
grep -q "never follows" "$S/err" && ok "a symlink operand: says symlinks are never followed" ||
	fail "a symlink operand: stderr [$(head -c 300 "$S/err")]"
"$MYRIAD" find --no-state "$W/lnk/" -delete 2>/dev/null
expect_eq "'link/' as operand: exit 2" 2 $?
expect_eq "the symlinked tree is untouched" "$before" "$(cd "$W/t" && find . | sort | md5sum)"
"$MYRIAD" find --no-state "$W/t" -name k -prune -delete 2>"$S/err"
expect_eq "-prune without -depth: exit 2 (as find)" 2 $?
expect_eq "-prune without -depth: nothing deleted" "$before" "$(cd "$W/t" && find . | sort | md5sum)"

(cd "$W/t" && "$MYRIAD" find --no-state . -delete 2>"$S/err")
expect_eq "'.': exit 0" 0 $?
expect_eq "'.': its contents go, '.' stays, quietly" "t|" "$(ls -A "$W" | grep -x t | tr '\n' '|')$(ls -A "$W/t")"

# From deep inside the sandbox: ../.. is searched, but the working directory and those above it stay.
reset_tree
mkdir -p "$W/deep/er" && touch "$W/deep/er/f" "$W/deep/g"
(cd "$W/deep/er" && "$MYRIAD" find --no-state ../.. -delete 2>"$S/err")
expect_eq "../.. from deep inside: exit 1 (the kept directories are reported)" 1 $?
[ -d "$W/deep/er" ] && [ ! -e "$W/deep/er/f" ] && [ ! -e "$W/deep/g" ] && [ ! -e "$W/t" ] &&
	ok "../..: everything else under it went; the working directory and its parents stayed" ||
	fail "../..: left $(find "$W" | head -20 | cut -c1-100 | tr '\n' ' ')"
grep -q "not deleted: ../../deep/er (the working directory" "$S/err" &&
	ok "../..: the working directory is named as kept, with the reason" ||
	fail "../..: stderr [$(head -c 400 "$S/err")]"

# A mount point inside the tree: left alone, reported; what is beside it goes.
reset_tree
mkdir -p "$W/t/mnt"
if mount -t tmpfs inner "$W/t/mnt"; then
	on_exit "umount '$W/t/mnt' || umount -l '$W/t/mnt'"
	touch "$W/t/mnt/inside.tmp"
	"$MYRIAD" find --no-state "$W/t" -delete 2>"$S/err"
	expect_eq "a mount point inside: exit 1" 1 $?
	[ -e "$W/t/mnt/inside.tmp" ] && ok "a mount point inside: not entered, its files stay" ||
		fail "a mount point inside: its files were deleted"
	expect_eq "a mount point inside: everything else went" "t t/mnt t/mnt/inside.tmp" \
		"$(cd "$W" && find t | sort | tr '\n' ' ' | sed 's/ $//')"
	grep -q "mount point" "$S/err" && ok "a mount point inside: reported as one" ||
		fail "a mount point inside: stderr [$(head -c 300 "$S/err")]"
	umount "$W/t/mnt"
else
	skip "a mount point inside: mount tmpfs failed"
fi

# --json counts what went; the summary says it.
reset_tree
"$MYRIAD" find --no-state --json "$S/j.json" "$W/t" -name '*.tmp' -delete >"$S/out" 2>"$S/err"
expect_eq "--json: deleted = find's count of *.tmp" "$(find "$P" -name '*.tmp' | wc -l)" "$(json_num "$S/j.json" deleted)"
grep -q "matched, $(find "$P" -name '*.tmp' | wc -l) deleted;" "$S/out" && ok "the summary says how many were deleted" ||
	fail "summary: [$(head -c 300 "$S/out")]"

# Resume: kill -9 at random moments, then the same command: GNU's tree is left, and -fprint0 holds
# no path twice (those deleted since the last checkpoint are gone before they could be printed again).
B=$W/big
"$MKTREE" "$B" --files 60000 --fanout 50 >/dev/null
cp -a "$B" "$W/bigwant"
(cd "$W/bigwant" && find . -type f -name '*1*' -delete)
want=$(cd "$W/bigwant" && find . | sort | md5sum)
rm -rf "$W/bigwant"
big=(--json "$S/k.json" "$B" -type f -name '*1*' -delete -fprint0 "$S/fp")
kills=0
for i in $(seq 5); do
	kill9_after_checkpoint "$S/state" 6 "$MYRIAD" find --rate 20k --checkpoint-interval 0.05 "${big[@]}"
	count_kill $?
done
"$MYRIAD" find "${big[@]}" >/dev/null 2>&1
expect_eq "kill -9 x$kills: the final run exits 0" 0 $?
expect_eq "kill -9: the tree left is GNU find's" "$want" "$(cd "$B" && find . | sort | md5sum)"
expect_eq "kill -9: -fprint0 holds no path twice" "" "$(sort -z "$S/fp" | uniq -zd | tr '\0' '\n' | head -3)"
expect_eq "kill -9: every killed run was resumed (sessions = kills + 1)" $((kills + 1)) "$(json_num "$S/k.json" sessions)"
expect_eq "state removed after the finished run" "" "$(ls "$S/state/myriad" 2>/dev/null)"

# SIGINT: the resumed run ends with GNU's tree; -fprint0 holds only deleted paths, none twice (those
# deleted by a batch the stop cut off are gone before they could be printed: documented).
rm -rf "$B" && "$MKTREE" "$B" --files 60000 --fanout 50 >/dev/null
(cd "$B" && find . -type f -name '*1*' | sed "s|^\.|$B|" | sort) >"$S/want.list"
rm -f "$S/fp"
"$MYRIAD" find --rate 20k "${big[@]}" >/dev/null 2>&1 &
pid=$!
sleep 0.5
kill -INT $pid
wait $pid
expect_eq "SIGINT: exit 3" 3 $?
"$MYRIAD" find "${big[@]}" >/dev/null 2>&1
expect_eq "SIGINT: the resumed run exits 0" 0 $?
expect_eq "SIGINT: no file matching is left" "" "$(find "$B" -type f -name '*1*' | head -3)"
tr '\0' '\n' <"$S/fp" | sort >"$S/got.list"
expect_eq "SIGINT: -fprint0 holds only deleted paths, none twice" "" \
	"$(comm -13 "$S/want.list" "$S/got.list" | head -3)$(uniq -d "$S/got.list" | head -3)"
