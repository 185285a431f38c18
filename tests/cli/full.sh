# Full filesystems. copy into a small ext4 (blocks run out) and into a tmpfs with nr_inodes (inodes
# run out) stops cleanly: a message naming the resource, state saved, exit 3, and nothing
# half-written passes for complete: every DST file that looks finished is identical to its SRC,
# and once room is made the same command completes, rewriting the partly written file, with
# --check and a digest agreeing. fill (beyond fill_full.sh): no partly written file is left, the
# state is kept, and without state the message still names the resource.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
export XDG_STATE_HOME=$S/state
if ! is_root; then
	skip "full filesystems need root (loop devices, tmpfs mounts)"
	exit 0
fi

# digest DIR: md5 over every entry's path, type, mode and mtime, every non-directory's size and
# every file's contents (directory sizes differ between filesystems).
digest() {
	(
		cd "$1" || exit 1
		find . -mindepth 1 ! -type d -printf '%P %y %m %s %T@\n' | sort
		find . -mindepth 1 -type d -printf '%P %y %m %T@\n' | sort
		find . -type f -print0 | sort -z | xargs -0 md5sum
	) | md5sum | cut -d' ' -f1
}
# looks_done SRC DST: DST files with SRC's size and mtime (what a re-run skips) that differ from SRC.
looks_done_but_differ() {
	(
		cd "$2" || exit 1
		find . -type f -printf '%P\n' | while IFS= read -r f; do
			[ "$(stat -c '%s %Y' "$1/$f")" = "$(stat -c '%s %Y' "$f")" ] && ! cmp -s "$1/$f" "$f" && echo "$f"
		done
	)
}

# ---- copy: blocks run out ----
E=$S/ext4
if mount_image ext4 128M "$E" 2>"$S/why"; then
	A=$S/big
	mkdir -p "$A/sub"
	for i in 1 2 3; do head -c 12M /dev/urandom >"$A/f$i"; head -c 12M /dev/urandom >"$A/sub/g$i"; done
	dd if=/dev/zero of="$E/ballast" bs=1M count=60 status=none
	"$MYRIAD" copy --state "$S/st1" "$A" "$E/dst" >/dev/null 2>"$S/err"
	expect_eq "copy, out of space: exit 3" 3 $?
	grep -q ": write: No space left on device: the destination is out of space" "$S/err" &&
		ok "copy, out of space: the message names the file, the operation and the resource" ||
		fail "copy, out of space: stderr: $(cat "$S/err")"
	grep -q "stopped: destination out of space; state saved in $S/st1: run the same command again" "$S/err" &&
		ok "copy, out of space: says the state is saved and how to go on" || fail "copy, out of space: $(tail -1 "$S/err")"
	[ -s "$S/st1/snapshot" ] && ok "copy, out of space: the state is there" || fail "copy, out of space: no state in $S/st1"
	expect_eq "copy, out of space: no DST file that looks finished differs from SRC" "" \
		"$(looks_done_but_differ "$A" "$E/dst")"
	partial=$(cd "$E/dst" && find . -type f -size +0 -printf '%P\n' | while read -r f; do
		[ "$(stat -c %s "$f")" -lt "$(stat -c %s "$A/$f")" ] && echo "$f"; done | head -1)
	[ -n "$partial" ] && ok "copy, out of space: a file was left partly written ($partial)" ||
		skip "copy, out of space: no file happened to be left partly written"
	rm "$E/ballast"
	"$MYRIAD" copy --state "$S/st1" "$A" "$E/dst" >/dev/null 2>"$S/err"
	expect_eq "copy, out of space: once room is made the same command completes" 0 $?
	[ -n "$partial" ] && { cmp -s "$A/$partial" "$E/dst/$partial" && ok "copy, out of space: the partly written file was redone" ||
		fail "copy, out of space: $partial differs"; }
	"$MYRIAD" copy --no-state --check "$A" "$E/dst" >/dev/null 2>&1
	expect_eq "copy, out of space: then --check passes" 0 $?
	expect_eq "copy, out of space: then the digests agree" "$(digest "$A")" "$(digest "$E/dst")"
	[ ! -e "$S/st1" ] && ok "copy, out of space: the finished run removed its state" || fail "state left: $(ls "$S/st1")"

	# Without state, the message still says what ran out.
	rm -rf "$E/dst"
	dd if=/dev/zero of="$E/ballast" bs=1M count=60 status=none
	"$MYRIAD" copy --no-state "$A" "$E/dst" >/dev/null 2>"$S/err"
	expect_eq "copy --no-state, out of space: exit 3" 3 $?
	grep -q "stopped: destination out of space; no state was kept" "$S/err" && ok "copy --no-state, out of space: says why it stopped" ||
		fail "copy --no-state, out of space: $(tail -1 "$S/err")"
	rm -rf "$E/dst" "$E/ballast"

	# fill: a partly written file is removed, the state is kept; without it the message says why.
	dd if=/dev/zero of="$E/ballast" bs=1M count=100 status=none
	"$MYRIAD" fill -n 1000 -s 64k --fanout 100 --no-state "$E/fill" >/dev/null 2>"$S/err"
	expect_eq "fill --no-state, out of space: exit 3" 3 $?
	grep -q "stopped: out of space; no state was kept" "$S/err" && ok "fill --no-state, out of space: says why it stopped" ||
		fail "fill --no-state, out of space: $(cat "$S/err")"
	rm -rf "$E/fill"
	"$MYRIAD" fill -n 1000 -s 64k --fanout 100 --state "$S/st2" "$E/fill" >/dev/null 2>"$S/err"
	expect_eq "fill, out of space: exit 3" 3 $?
	grep -q "stopped: out of space; state saved in $S/st2" "$S/err" && ok "fill, out of space: says why and that the state is saved" ||
		fail "fill, out of space: $(cat "$S/err")"
	[ -s "$S/st2/snapshot" ] && ok "fill, out of space: the state is there" || fail "fill, out of space: no state in $S/st2"
	expect_eq "fill, out of space: no partly written file is left" "" "$(find "$E/fill" -type f -name 'f*' -size -64k)"
	rm "$E/ballast"
	"$MYRIAD" fill -n 1000 -s 64k --fanout 100 --state "$S/st2" "$E/fill" >/dev/null 2>&1
	expect_eq "fill, out of space: once room is made the same command completes" 0 $?
	"$MYRIAD" verify --no-state "$E/fill" >/dev/null 2>&1
	expect_eq "fill, out of space: then verify passes" 0 $?
else
	skip "small ext4: $(cat "$S/why")"
fi

# ---- copy: inodes run out ----
T=$S/tmpfs
mkdir -p "$T"
if mount -t tmpfs -o size=64m,nr_inodes=200 tmpfs "$T"; then
	on_exit "umount '$T'"
	A=$S/many
	"$MKTREE" "$A" --files 300 --fanout 10 --size 1000 >/dev/null
	"$MYRIAD" copy --state "$S/st3" "$A" "$T/dst" >/dev/null 2>"$S/err"
	expect_eq "copy, out of inodes: exit 3" 3 $?
	grep -q "No space left on device: the destination is out of inodes" "$S/err" &&
		ok "copy, out of inodes: the message names the resource" || fail "copy, out of inodes: stderr: $(cat "$S/err")"
	grep -q "stopped: destination out of inodes; state saved in $S/st3" "$S/err" &&
		ok "copy, out of inodes: says the state is saved" || fail "copy, out of inodes: $(tail -1 "$S/err")"
	expect_eq "copy, out of inodes: no DST file that looks finished differs from SRC" "" \
		"$(looks_done_but_differ "$A" "$T/dst")"
	mount -o remount,nr_inodes=2000 "$T"
	"$MYRIAD" copy --state "$S/st3" "$A" "$T/dst" >/dev/null 2>&1
	expect_eq "copy, out of inodes: once there are inodes the same command completes" 0 $?
	"$MYRIAD" copy --no-state --check "$A" "$T/dst" >/dev/null 2>&1
	expect_eq "copy, out of inodes: then --check passes" 0 $?
	expect_eq "copy, out of inodes: then the digests agree" "$(digest "$A")" "$(digest "$T/dst")"
else
	skip "cannot mount a tmpfs with nr_inodes here"
fi
