# copy --check compares contents, not only metadata; hard links keep their groups when the link map
# spills to disk (also across kill -9 and resume); with --xdev a mount point under SRC is copied as
# cp -ax and rsync -ax copy it, and --delete / --check leave its DST contents alone.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
export XDG_STATE_HOME=$S/state
A=$S/src
B=$S/dst

# --check: same size and mtime, different bytes (one in the first byte block, one past the first
# MiB, where the comparison reads its second chunk).
mkdir -p "$A/d"
printf 'hello world' >"$A/d/small"
head -c 3000000 /dev/zero >"$A/big"
"$MYRIAD" copy --no-state "$A" "$B" >/dev/null 2>&1
"$MYRIAD" copy --check --no-state "$A" "$B" >/dev/null 2>"$S/err"
expect_eq "--check on a fresh copy: exit 0" "0" "$?"
printf 'hellO' | dd of="$B/d/small" conv=notrunc status=none
printf 'Z' | dd of="$B/big" bs=1 seek=2500000 conv=notrunc status=none
touch -r "$A/d/small" "$B/d/small"
touch -r "$A/big" "$B/big"
"$MYRIAD" copy --check --no-state --errors "$S/errs" "$A" "$B" >/dev/null 2>"$S/err"
expect_eq "--check, same size and mtime, other bytes: exit 1" 1 $?
grep -qx "myriad copy: content differs: $B/d/small (first difference at byte 4)" "$S/err" &&
	grep -qx "myriad copy: content differs: $B/big (first difference at byte 2500000)" "$S/err" &&
	ok "--check: 'content differs' with the path and where" || fail "--check stderr: $(head -3 "$S/err")"
expect_eq "--check: both in --errors" 2 "$(grep -c '"problem":"content differs"' "$S/errs")"
rm -rf "$A" "$B"

# Hard links: 1500 inodes with three names each in three directories (each group pending across
# directories), copied with a 4 KiB link map by one worker (so a/ is done before b/ and c/ are
# begun and every group waits): it spills, and every group is kept. (With many workers the three
# directories go side by side and how many groups wait depends on timing: 330 in one CI run.)
mkdir -p "$A/a" "$A/b" "$A/c"
(cd "$A" && perl -e 'for $i (1..1500) { open F, ">a/f$i" or die; print F $i; close F;
	link "a/f$i", "b/g$i" or die; link "a/f$i", "c/h$i" or die }')
"$MYRIAD" copy -j 1 --link-memory 4k --json "$S/l.json" "$A" "$B" >/dev/null 2>"$S/err"
expect_eq "hard links, 4 KiB link map: exit 0" 0 $?
spilled=$(json_num "$S/l.json" hardlinks_spilled)
[ "${spilled:-0}" -gt 1000 ] && ok "hard links: the map spilled to disk ($spilled inodes)" ||
	fail "hard links: hardlinks_spilled [$spilled]"
[ "$(link_groups "$A")" = "$(link_groups "$B")" ] && same_tree "$A" "$B" &&
	ok "hard links: the same 1500 link groups, trees identical" || fail "hard links: groups differ"
expect_eq "hard links: nothing left in the state directory" "" "$(ls -A "$S/state/myriad" 2>/dev/null)"
"$MYRIAD" copy --check --link-memory 4k "$A" "$B" >/dev/null 2>"$S/err"
expect_eq "hard links: --check on the copy: exit 0" 0 $?
cp -p "$B/b/g77" "$S/g77" && mv "$S/g77" "$B/b/g77" && touch -r "$A/b" "$B/b" # only the link is gone
"$MYRIAD" copy --check --link-memory 4k "$A" "$B" >/dev/null 2>"$S/err"
expect_eq "hard links: --check after a link was broken: exit 1" 1 $?
# The names are compared with the first one the walk meets: b/g77 alone when that is a/f77 or
# c/h77, the other two when it is b/g77 (workers in parallel meet them in either order).
got=$(grep -v '^copy' "$S/err" | sed -n "s|^myriad copy: not hard-linked as in SRC: $B/\(.*\) (DST has a separate file where SRC has a hard link)\$|\1|p" | sort | tr '\n' ' ')
lines=$(grep -vc '^copy' "$S/err")
case "$got/$lines" in
"b/g77 /1" | "a/f77 c/h77 /2") ok "hard links: --check names the names that are not one inode, and only them ($got)" ;;
*) fail "hard links: --check after a broken link: $(head -3 "$S/err")" ;;
esac
rm -rf "$B"
for i in 1 2 3; do
	"$MYRIAD" copy --link-memory 4k --rate 3000 --checkpoint-interval 0.05 "$A" "$B" >/dev/null 2>&1 &
	pid=$!
	sleep 0.$((RANDOM % 4 + 3))
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
done
"$MYRIAD" copy --link-memory 4k "$A" "$B" >/dev/null 2>&1
expect_eq "hard links, spilling, kill -9 then the same command: exit 0" 0 $?
[ "$(link_groups "$A")" = "$(link_groups "$B")" ] && same_tree "$A" "$B" &&
	ok "hard links, spilling, kill -9 and resumed: the same link groups" || fail "hard links after resume: groups differ"
"$MYRIAD" copy --link-memory 1x "$A" "$B" >/dev/null 2>&1
expect_eq "--link-memory 1x: exit 2" 2 $?
rm -rf "$A" "$B"

# --xdev and a mount point under SRC: what cp -ax and rsync -ax make of it (in a tmpfs of its own:
# --delete runs).
if is_root && sandbox 64m; then
	A=$PWD/src B=$PWD/dst
	mkdir -p "$A/mnt" "$A/d"
	echo data >"$A/d/f"
	chmod 0750 "$A/mnt"
	touch -d '2001-01-01' "$A/mnt"
	mount -t tmpfs -o size=1M,mode=1777 tmpfs "$A/mnt" && on_exit "umount '$A/mnt'"
	echo inner >"$A/mnt/inner"
	touch -d '2005-05-05 05:05:05.5' "$A/mnt"
	"$MYRIAD" copy --xdev "$A" "$B" >/dev/null 2>&1
	expect_eq "--xdev: exit 0" 0 $?
	cp -ax "$A" "$PWD/cp"
	expect_eq "--xdev: the mount point is an empty directory with the mode and times cp -ax gives it" \
		"$(stat -c '%F %a %u:%g %y' "$PWD/cp/mnt") $(ls -A "$PWD/cp/mnt" | wc -l)" \
		"$(stat -c '%F %a %u:%g %y' "$B/mnt") $(ls -A "$B/mnt" | wc -l)"
	expect_eq "--xdev: the other directories are copied" data "$(cat "$B/d/f")"
	echo junk >"$B/mnt/junk"
	touch -r "$A/mnt" "$B/mnt"
	"$MYRIAD" copy --check --xdev "$A" "$B" >/dev/null 2>"$S/err"
	expect_eq "--check --xdev: what is in DST's mount point is not compared (exit 0)" 0 $?
	"$MYRIAD" copy --delete --xdev "$A" "$B" >/dev/null 2>&1
	[ -e "$B/mnt/junk" ] && ok "--delete --xdev: DST's mount point contents stay, as with rsync -ax --delete" ||
		fail "--delete --xdev removed $B/mnt/junk"
	umount "$A/mnt"
	# A bind mount of the same filesystem under SRC is a mount point too (copy decided by st_dev).
	mkdir -p "$PWD/other" "$A/bind"
	echo other >"$PWD/other/o"
	mount --bind "$PWD/other" "$A/bind" && on_exit "umount '$A/bind'"
	mkdir -p "$B/bind" && echo junk >"$B/bind/junk"
	"$MYRIAD" copy --delete --xdev "$A" "$B" >/dev/null 2>&1
	expect_eq "--delete --xdev, a bind mount under SRC: not copied into, DST's contents there stay" \
		"junk" "$(ls -A "$B/bind" | tr '\n' ' ' | sed 's/ $//')"
	umount "$A/bind"
else
	skip "--xdev mount point: mounting a tmpfs needs root"
fi
