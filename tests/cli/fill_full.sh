# fill on full filesystems: out of blocks (a small ext4) and out of inodes (a tmpfs with nr_inodes)
# stop cleanly with a message naming the resource, state saved, exit 3, and the same command
# completes once room is made; --until-full stops with success and its manifest says exactly which
# files exist, so verify passes. A filesystem root holding only lost+found can be filled.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
export XDG_STATE_HOME=$S/state
if ! is_root; then
	skip "full filesystems need root (loop devices, tmpfs mounts)"
	exit 0
fi

# Blocks run out.
M=$S/ext4
if mount_image ext4 64M "$M" 2>"$S/why"; then
	dd if=/dev/zero of="$M/ballast" bs=1M count=40 status=none
	"$MYRIAD" fill -n 400 -s 64k --fanout 100 "$M/fill" >"$S/out" 2>"$S/err"
	expect_eq "out of space: exit 3" 3 $?
	grep -q "out of space" "$S/err" && ok "out of space: the message names the resource" ||
		fail "out of space: stderr: $(cat "$S/err")"
	grep -q "run the same command" "$S/err" && ok "out of space: says how to complete it" || fail "stderr: $(cat "$S/err")"
	"$MYRIAD" verify --quick "$M/fill" >/dev/null 2>&1
	expect_eq "out of space: verify says the fill is not finished" 1 $?
	rm "$M/ballast"
	"$MYRIAD" fill -n 400 -s 64k --fanout 100 "$M/fill" >/dev/null 2>&1
	expect_eq "out of space: after room is made the same command completes" 0 $?
	"$MYRIAD" verify "$M/fill" >/dev/null 2>&1
	expect_eq "out of space: then verify passes (nothing half-written kept)" 0 $?

	# A filesystem's root holding only lost+found.
	rm -rf "$M/fill"
	"$MYRIAD" fill -n 2000 --fanout 100 "$M" >/dev/null 2>&1
	expect_eq "a filesystem root with lost+found can be filled" 0 $?
	"$MYRIAD" verify "$M" >/dev/null 2>&1
	expect_eq "... and verifies (lost+found is not extra)" 0 $?
else
	skip "small ext4: $(cat "$S/why")"
fi

# Inodes run out.
T=$S/tmpfs
mkdir -p "$T"
if mount -t tmpfs -o size=64m,nr_inodes=600 tmpfs "$T"; then
	on_exit "umount '$T'"
	"$MYRIAD" fill -n 1000 --fanout 100 "$T/fill" >/dev/null 2>"$S/err"
	expect_eq "out of inodes: exit 3" 3 $?
	grep -q "out of inodes" "$S/err" && ok "out of inodes: the message names the resource" ||
		fail "out of inodes: stderr: $(cat "$S/err")"
	rm -rf "$T/fill"
	"$MYRIAD" fill -n 1000 --fanout 100 --until-full --json "$S/uf.json" "$T/full" >"$S/out" 2>&1
	expect_eq "--until-full: stops with success" 0 $?
	grep -q '"status":"full"' "$S/uf.json" && ok "--until-full: status full" || fail "json: $(cat "$S/uf.json")"
	n=$(find "$T/full" -type f -name 'f*' | wc -l)
	expect_eq "--until-full: the JSON counts the files that exist" "$n" "$(json_num "$S/uf.json" files)"
	"$MYRIAD" verify "$T/full" >/dev/null 2>"$S/err"
	expect_eq "--until-full: verify passes on exactly the files the manifest records" 0 $?
	[ "$n" -gt 0 ] && [ "$n" -lt 1000 ] && ok "--until-full: made $n of 1000 files" || fail "made $n files"
	rm "$T/full/d0/f1"
	"$MYRIAD" verify "$T/full" >/dev/null 2>&1
	expect_eq "--until-full: verify still finds a missing file" 1 $?
	rm -rf "$T/full"
	"$MYRIAD" fill -n 1000 --fanout 100 "$T/fill" >/dev/null 2>&1
	expect_eq "out of inodes: fails again while inodes are short" 3 $?
	mount -o remount,nr_inodes=2000 "$T"
	"$MYRIAD" fill -n 1000 --fanout 100 "$T/fill" >/dev/null 2>&1
	expect_eq "out of inodes: completes once there are inodes" 0 $?
	"$MYRIAD" verify "$T/fill" >"$S/v" 2>&1
	expect_eq "out of inodes: then verify passes" 0 $?
	if grep -q "NOT OK" "$S/v"; then cat "$S/v" >&2; fi
else
	skip "cannot mount a tmpfs with nr_inodes here"
fi
