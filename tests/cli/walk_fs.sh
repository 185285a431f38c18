# walk on real filesystems: loop-mounted ext4, XFS and btrfs images (counts and paths equal
# find's), and --xdev, which lists a mount point but does not descend into it, as find -xdev.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
export XDG_STATE_HOME=$S/state
if ! is_root; then
	skip "loop-mounted filesystems need root"
	exit 0
fi
for fs in ext4 xfs btrfs; do
	M=$S/mnt-$fs
	if ! mount_image $fs 1G "$M" 2>"$S/why"; then
		skip "$fs: $(cat "$S/why")"
		continue
	fi
	make_hostile_tree "$M/h"
	"$MKTREE" "$M/t" --files 20000 --fanout 500
	"$MYRIAD" walk --json "$S/$fs.json" "$M" >/dev/null 2>"$S/err"
	expect_eq "$fs: exit 0" 0 $?
	expect_eq "$fs: counts by type equal find's" "$(find_counts "$M")" "$(walk_counts "$S/$fs.json")"
	"$MYRIAD" walk --no-state --print0 "$M" 2>/dev/null | sort -z | md5sum >"$S/m1"
	find "$M" -print0 | sort -z | md5sum >"$S/m2"
	expect_eq "$fs: --print0 set equals find's" "$(cat "$S/m2")" "$(cat "$S/m1")"
	"$MYRIAD" walk --no-state --stat --json "$S/$fs.s.json" "$M/t" >/dev/null 2>&1
	want=$(find "$M/t" -printf '%b\n' | awk '{s+=$1*512} END {print s}')
	expect_eq "$fs: --stat allocated bytes equal find's" "$want" "$(json_num "$S/$fs.s.json" allocated_bytes)"
done

# --xdev: a filesystem mounted inside the tree is listed, not entered.
X=$S/xdev
mkdir -p "$X/a/b"
touch "$X/a/f"
if mount -t tmpfs -o size=1m tmpfs "$X/a/b"; then
	on_exit "umount '$X/a/b'"
	touch "$X/a/b/inside1" "$X/a/b/inside2"
	"$MYRIAD" walk --no-state --xdev --print "$X" 2>/dev/null | sort >"$S/x1"
	find "$X" -xdev | sort >"$S/x2"
	check "--xdev lists the mount point but not what is inside, as find -xdev" cmp -s "$S/x1" "$S/x2"
	"$MYRIAD" walk --no-state --print "$X" 2>/dev/null | grep -c inside >"$S/x3"
	expect_eq "without --xdev the mounted filesystem is walked" 2 "$(cat "$S/x3")"
else
	skip "--xdev: cannot mount a tmpfs here"
fi
