# myriad lifecycle touches only what it made. (a) A foreign mount whose path holds
# /myriad-lifecycle-, a foreign loop device over a file named myriad-lifecycle-x.img and foreign
# myriad-lifecycle-* files in --image-dir survive a run. (b) After kill -9, a run with another
# --out leaves the killed run's loop device and mount alone; a run with the same --out removes
# exactly them and finishes; a recorded loop device now backed by a foreign image (and mounted on
# the recorded mount point) is left alone. (c) --device is refused (exit 2, before mkfs) for a
# loop device whose image is mounted through another one, a mounted loop device, a loop device
# used as swap, a device held by device-mapper, and the root filesystem's device (with --dry-run
# and without --yes, so nothing could format it even with a broken guard); --dry-run touches
# nothing.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)

is_root || { skip "lifecycle needs root (loop devices, mkfs, mount)"; exit 0; }
for t in mkfs.ext4 e2fsck losetup findmnt; do
	command -v $t >/dev/null || { skip "$t is not installed (scripts/deps test)"; exit 0; }
done
sandbox 64m || { skip "no sandbox: the foreign mount needs a tmpfs of its own"; exit 0; }
SB=$SANDBOX
IMG=$S/img
mkdir -p "$IMG"

# backing DEV: the file a loop device is backed by (empty when detached).
backing() { losetup -nO BACK-FILE "$1" 2>/dev/null | sed 's/ *$//'; }
# detach_if DEV FILE: detach DEV if FILE still backs it (a binary that detached it wrongly lets
# another process take the number: that one is not ours to detach).
detach_if() { [ "$(backing "$1")" = "$2" ] && losetup -d "$1"; }
# attach FILE: a loop device over FILE in $LOOPDEV, detached at exit.
attach() {
	LOOPDEV=$(losetup --find --show "$1") || return 1
	on_exit "detach_if '$LOOPDEV' '$1'"
}

# ---- (a) foreign things that look like lifecycle's ----
FM=$SB/x/myriad-lifecycle-foo
mkdir -p "$FM"
mount -t tmpfs foreign "$FM" && on_exit "umount '$FM' || umount -l '$FM'"
echo keep >"$FM/data"
mkdir -p "$S/else"
truncate -s 16M "$S/else/myriad-lifecycle-x.img"
attach "$S/else/myriad-lifecycle-x.img"
FLOOP=$LOOPDEV
echo foreign >"$IMG/myriad-lifecycle-y.img"
echo foreign >"$IMG/myriad-lifecycle-ext4-2000.img" # the name the binary before used for its image
mkdir "$IMG/myriad-lifecycle-z.mnt"
foreign_ok() {
	mountpoint -q "$FM" && [ "$(cat "$FM/data" 2>/dev/null)" = keep ] &&
		[ "$(backing "$FLOOP")" = "$S/else/myriad-lifecycle-x.img" ] && [ -e "$S/else/myriad-lifecycle-x.img" ] &&
		[ "$(cat "$IMG/myriad-lifecycle-y.img" 2>/dev/null)" = foreign ] &&
		[ "$(cat "$IMG/myriad-lifecycle-ext4-2000.img" 2>/dev/null)" = foreign ] && [ -d "$IMG/myriad-lifecycle-z.mnt" ]
}
foreign_state() {
	echo "mount: $(findmnt -no SOURCE "$FM"); loop $FLOOP: $(backing "$FLOOP"); image dir: $(ls "$IMG" | tr '\n' ' ')"
}
foreign_ok || fail "planting the foreign things: $(foreign_state)"
# What lifecycle made in IMG (anything but the planted names).
own_files() { ls "$IMG" | grep -v -e '^myriad-lifecycle-[xyz]\.' -e '^myriad-lifecycle-ext4-2000\.img$'; }

"$MYRIAD" lifecycle --fs ext4 --scales 2000 --image-dir "$IMG" --out "$S/a" >"$S/a.out" 2>"$S/a.err"
expect_eq "a small run next to foreign myriad-lifecycle-* things: exit 0" 0 $?
foreign_ok && ok "foreign mount, loop device and image-dir files are still there" ||
	fail "foreign things touched: $(foreign_state); stderr: $(head -c 600 "$S/a.err")"
expect_eq "the run left nothing of its own in --image-dir" "" "$(own_files)"
[ ! -e "$S/a/made.list" ] && ok "the record is removed when everything it lists is gone" || fail "made.list: $(cat "$S/a/made.list")"

# ---- (b) kill -9, then runs with another and with the same --out ----
# killed_run OUT: a run killed with -9 during its fill; sets LEFT_IMG, LEFT_LOOP, LEFT_MNT (what it left).
killed_run() {
	local out=$1 pid
	"$MYRIAD" lifecycle --fs ext4 --scales 400k --image-dir "$IMG" --out "$out" >/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 300); do [ -e "$out/logs/ext4-400000-fill.log" ] && break; sleep 0.1; done
	sleep 0.3
	kill -9 $pid
	wait $pid 2>/dev/null
	sleep 0.5 # its running phase dies with it (PR_SET_PDEATHSIG)
	LEFT_IMG=$(ls "$IMG"/myriad-lifecycle-ext4-400000*.img 2>/dev/null | head -1)
	LEFT_LOOP=$([ -n "$LEFT_IMG" ] && losetup -nO NAME -j "$LEFT_IMG" | head -1)
	LEFT_MNT=$([ -n "$LEFT_LOOP" ] && findmnt -nro TARGET -S "$LEFT_LOOP" | head -1)
	# Should lifecycle fail to remove them, the test does.
	on_exit "umount -l '$LEFT_MNT'; rmdir '$LEFT_MNT'; detach_if '$LEFT_LOOP' '$LEFT_IMG'; rm -f '$LEFT_IMG'"
	[ -n "$LEFT_IMG" ] && [ -n "$LEFT_LOOP" ] && [ -n "$LEFT_MNT" ]
}

K=$S/kill
if ! killed_run "$K"; then
	skip "kill -9: the killed run left no image, loop device and mount to clean up ($LEFT_IMG $LEFT_LOOP $LEFT_MNT)"
else
	ok "kill -9 during fill leaves its image, loop device and mount (as expected)"
	"$MYRIAD" lifecycle --fs ext4 --scales 2000 --image-dir "$IMG" --out "$S/other" >/dev/null 2>"$S/other.err"
	expect_eq "kill -9, then a run with another --out: exit 0" 0 $?
	[ "$(backing "$LEFT_LOOP")" = "$LEFT_IMG" ] && [ "$(findmnt -nro SOURCE "$LEFT_MNT")" = "$LEFT_LOOP" ] &&
		ok "a run with another --out leaves the killed run's loop device and mount alone" ||
		fail "another --out took the killed run's things: loop $(backing "$LEFT_LOOP"), mount $(findmnt -nro SOURCE "$LEFT_MNT"); $(head -c 600 "$S/other.err")"
	"$MYRIAD" lifecycle --fs ext4 --scales 2000 --image-dir "$IMG" --out "$K" >/dev/null 2>"$S/kill.err"
	expect_eq "kill -9, then a run with the same --out: exit 0" 0 $?
	grep -q "cleaning up after an earlier run: unmounting $LEFT_MNT" "$S/kill.err" &&
		grep -q "cleaning up after an earlier run: detaching $LEFT_LOOP" "$S/kill.err" &&
		ok "the same --out says what it cleans up" || fail "clean-up messages: $(cat "$S/kill.err")"
	[ -z "$(findmnt -nro SOURCE "$LEFT_MNT")" ] && [ "$(backing "$LEFT_LOOP")" != "$LEFT_IMG" ] && [ ! -e "$LEFT_IMG" ] &&
		[ ! -e "$LEFT_MNT" ] && ok "the same --out removes the killed run's mount, loop device, image and mount point" ||
		fail "left: mount $(findmnt -nro SOURCE "$LEFT_MNT"), loop $(backing "$LEFT_LOOP"), image $(ls "$LEFT_IMG" 2>&1)"
	foreign_ok && ok "after both runs the foreign things are still there" || fail "foreign things touched: $(foreign_state)"
	expect_eq "nothing of lifecycle's own left in --image-dir" "" "$(own_files)"
fi

# The record is checked against what is there now: the killed run's loop device detached and
# given a foreign image, mounted on the recorded mount point.
K2=$S/kill2
if ! killed_run "$K2"; then
	skip "record check: the killed run left nothing"
else
	umount "$LEFT_MNT" && detach_if "$LEFT_LOOP" "$LEFT_IMG"
	truncate -s 32M "$S/swapped.img" && mkfs.ext4 -q -F "$S/swapped.img" >/dev/null 2>&1
	if ! losetup "$LEFT_LOOP" "$S/swapped.img" 2>/dev/null; then
		skip "record check: $LEFT_LOOP was taken before the test could reuse it"
	else
		on_exit "detach_if '$LEFT_LOOP' '$S/swapped.img'"
		mount "$LEFT_LOOP" "$LEFT_MNT" && echo swapped >"$LEFT_MNT/data"
		"$MYRIAD" lifecycle --fs ext4 --scales 2000 --image-dir "$IMG" --out "$K2" >/dev/null 2>"$S/kill2.err"
		expect_eq "record check: the run with the same --out: exit 0" 0 $?
		[ "$(backing "$LEFT_LOOP")" = "$S/swapped.img" ] && [ "$(cat "$LEFT_MNT/data" 2>/dev/null)" = swapped ] &&
			ok "a recorded loop device now backed by another image, and its mount, are left alone" ||
			fail "record check: loop $(backing "$LEFT_LOOP"), mount $(findmnt -nro SOURCE "$LEFT_MNT"); $(cat "$S/kill2.err")"
		grep -q "leaving $LEFT_LOOP alone" "$S/kill2.err" && ok "record check: says what it leaves alone and why" ||
			fail "record check: stderr: $(cat "$S/kill2.err")"
		[ ! -e "$LEFT_IMG" ] && ok "record check: the killed run's own image is removed" || fail "image left: $LEFT_IMG"
		umount "$LEFT_MNT"
	fi
fi

# ---- (c) --device refusals ----
# refused NAME DEV PATTERN: lifecycle --device DEV --yes on a test loop device exits 2, saying PATTERN.
refused() {
	local name=$1 dev=$2 pat=$3
	"$MYRIAD" lifecycle --device "$dev" --yes --fs ext4 --scales 1000 --out "$S/dev-$name" >"$S/dev.out" 2>"$S/dev.err"
	local rc=$?
	[ $rc = 2 ] && grep -q "refusing --device $dev: .*$pat" "$S/dev.err" && ok "--device $name: refused, exit 2: $(head -1 "$S/dev.err")" ||
		fail "--device $name: exit $rc: $(head -c 400 "$S/dev.err")"
	grep -q "mkfs" "$S/dev.out" && fail "--device $name: a phase ran: $(head -c 300 "$S/dev.out")"
}

truncate -s 64M "$S/mounted.img" && mkfs.ext4 -q -F "$S/mounted.img" >/dev/null 2>&1
attach "$S/mounted.img"
LA=$LOOPDEV
mkdir -p "$SB/mnt-a"
mount "$LA" "$SB/mnt-a" && on_exit "umount '$SB/mnt-a'"
head -c 100000 /dev/urandom >"$SB/mnt-a/data"
sum=$(md5sum <"$SB/mnt-a/data")
uuid=$(blkid -p -o value -s UUID "$S/mounted.img")
attach "$S/mounted.img"
LB=$LOOPDEV
refused "image-mounted-elsewhere" "$LB" "also attached as $LA"
refused "mounted" "$LA" "mounted on $SB/mnt-a"
sync
echo 3 >/proc/sys/vm/drop_caches
[ "$(findmnt -nro SOURCE "$SB/mnt-a")" = "$LA" ] && [ "$(md5sum <"$SB/mnt-a/data")" = "$sum" ] &&
	[ "$(blkid -p -o value -s UUID "$S/mounted.img")" = "$uuid" ] &&
	ok "--device refusals: the image is still mounted, its data and filesystem UUID intact" ||
	fail "the mounted image was touched (UUID $uuid -> $(blkid -p -o value -s UUID "$S/mounted.img"))"

truncate -s 32M "$S/swap.img"
attach "$S/swap.img"
LS=$LOOPDEV
if mkswap "$LS" >/dev/null 2>&1 && swapon "$LS" 2>/dev/null; then
	on_exit "swapoff '$LS'"
	refused "swap" "$LS" "swap"
	grep -q "^$LS " /proc/swaps && ok "--device swap: still swap" || fail "--device swap: no longer in /proc/swaps"
else
	skip "--device swap: swapon on a loop device does not work here"
fi

truncate -s 32M "$S/held.img"
attach "$S/held.img"
LH=$LOOPDEV
DM=myriad-test-$$
if command -v dmsetup >/dev/null && dmsetup create "$DM" --table "0 65536 linear $LH 0" 2>/dev/null; then
	on_exit "dmsetup remove '$DM'"
	refused "held" "$LH" "in use by dm-"
else
	skip "--device held by another device: dmsetup cannot make a linear device here"
fi

# The device that holds /: only with --dry-run and without --yes, so that not even a broken guard
# could format it.
ROOTDEV=$(findmnt -no SOURCE /)
if [ -b "$ROOTDEV" ]; then
	"$MYRIAD" lifecycle --device "$ROOTDEV" --dry-run --fs ext4 --out "$S/root" >/dev/null 2>"$S/root.err"
	rc=$?
	[ $rc = 2 ] && grep -q "refusing --device $ROOTDEV: .*mounted on / (it holds the running system)" "$S/root.err" &&
		ok "--device holding / (dry run): refused, exit 2: $(head -1 "$S/root.err")" ||
		fail "--device holding / (dry run): exit $rc: $(head -c 400 "$S/root.err")"
	[ ! -e "$S/root" ] && ok "--device holding /: nothing made" || fail "--device holding /: --out was made"
else
	skip "--device holding /: / is on $ROOTDEV, not a block device"
fi

# --dry-run on a free device passes its checks and touches nothing.
truncate -s 32M "$S/free.img"
head -c 65536 /dev/urandom | dd of="$S/free.img" conv=notrunc status=none
attach "$S/free.img"
LF=$LOOPDEV
sum=$(md5sum <"$S/free.img")
"$MYRIAD" lifecycle --device "$LF" --dry-run --fs ext4 --out "$S/dry" >"$S/dry.out" 2>"$S/dry.err"
rc=$?
[ $rc = 0 ] && grep -q "every check passed" "$S/dry.out" && ok "--dry-run on a free device (no --yes): exit 0, checks passed" ||
	fail "--dry-run: exit $rc: $(cat "$S/dry.out" "$S/dry.err" | head -c 400)"
[ "$(md5sum <"$S/free.img")" = "$sum" ] && [ ! -e "$S/dry" ] && ok "--dry-run: the device is unchanged, nothing made" ||
	fail "--dry-run touched something"
