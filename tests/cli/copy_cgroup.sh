# copy --cgroup-io: the copy runs in a cgroup of its own whose limit on DST's block device is what
# was asked (read back from the cgroup), holds (a read-limited copy from a loop-mounted image with
# its caches dropped takes as long as the limit says), and goes away at exit; refused (exit 2) where
# it cannot work. Also the progress line: bytes, rate, and the share done with an ETA when SRC is a
# whole filesystem.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
export XDG_STATE_HOME=$S/state

"$MYRIAD" copy --cgroup-io wbps=fast "$S" "$S/x" 2>/dev/null
expect_eq "--cgroup-io with a bad value: exit 2" 2 $?

if ! is_root; then
	skip "--cgroup-io: making cgroups needs root"
	exit 0
fi
mkdir -p "$S/src"
echo small >"$S/src/f"

# Where the I/O controller is: v2's io.max, else v1's blkio.throttle files.
v1_root=$(awk '$0 ~ / - cgroup / && $NF ~ /(^|,)blkio(,|$)/ { print $5; exit }' /proc/self/mountinfo)
v2_root=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
version=
if [ -n "$v2_root" ] && grep -qw io "$v2_root/cgroup.controllers" 2>/dev/null; then
	version=2
elif [ -n "$v1_root" ]; then
	version=1
fi

# DST on tmpfs: no block device to limit.
mkdir -p "$S/tmpfs"
mount -t tmpfs -o size=1M tmpfs "$S/tmpfs" && on_exit "umount '$S/tmpfs'"
"$MYRIAD" copy --cgroup-io wbps=10M "$S/src" "$S/tmpfs/dst" >/dev/null 2>"$S/err"
expect_eq "--cgroup-io, DST on tmpfs: exit 2, DST not made" "2 no" "$? $([ -e "$S/tmpfs/dst" ] && echo yes || echo no)"
grep -q "tmpfs.*not on a block device" "$S/err" && ok "--cgroup-io, DST on tmpfs: says it is not on a block device" ||
	fail "stderr: $(cat "$S/err")"

# No cgroup hierarchy with an I/O controller (all cgroup mounts hidden in a mount namespace).
if unshare -m --propagation private true 2>/dev/null; then
	unshare -m --propagation private bash -c '
		awk '\''$0 ~ / - cgroup2? / { print $5 }'\'' /proc/self/mountinfo | sort -r | xargs -r -n1 umount -l
		exec "$0" copy --cgroup-io wbps=10M "$1" "$2"' "$MYRIAD" "$S/src" "$S/nocg" >/dev/null 2>"$S/err"
	expect_eq "--cgroup-io without an I/O controller: exit 2, nothing made" "2 no" \
		"$? $([ -e "$S/nocg" ] && echo yes || echo no)"
	grep -q "no cgroup I/O controller" "$S/err" && ok "--cgroup-io without an I/O controller: says so" ||
		fail "stderr: $(cat "$S/err")"
else
	skip "--cgroup-io without an I/O controller: unshare -m is not permitted here"
fi

if [ -z "$version" ]; then
	skip "--cgroup-io: neither cgroup v2's io controller nor v1's blkio is available here"
	exit 0
fi
if ! mount_image ext4 128M "$S/img" 2>"$S/err"; then
	skip "--cgroup-io: cannot mount an ext4 image here ($(cat "$S/err"))"
	exit 0
fi
dev=$(stat -c '%Hd:%Ld' "$S/img")

# A cgroup left by a killed run (its process gone) is removed by the next one.
sh -c 'exit 0' &
dead=$!
wait $dead
if [ $version = 1 ]; then parent=$v1_root$(awk -F: '$2 ~ /(^|,)blkio(,|$)/ { print $3 }' /proc/self/cgroup)
else parent=$(dirname "$v2_root$(awk -F: '$1 == 0 { print $3 }' /proc/self/cgroup)/x"); fi
parent=${parent%/}
mkdir "$parent/myriad-copy.$dead"
"$MYRIAD" copy --cgroup-io wbps=10M "$S/src" "$S/img/small" >/dev/null 2>&1
expect_eq "--cgroup-io: exit 0, a stale cgroup of a dead run removed" "0 no" \
	"$? $([ -d "$parent/myriad-copy.$dead" ] && echo yes || echo no)"
rmdir "$parent/myriad-copy.$dead" 2>/dev/null

# 24 MiB read at rbps=8M: 3 s. SRC is a bind mount of a directory of the image (a filesystem root,
# so the progress line knows the share done), DST on the same device.
mkdir -p "$S/img/src" "$S/bsrc"
for i in 1 2 3 4; do head -c 6M /dev/urandom >"$S/img/src/f$i"; done
sync
for f in "$S"/img/src/f*; do dd if="$f" iflag=nocache count=0 status=none; done # drop their cached pages
mount --bind "$S/img/src" "$S/bsrc" && on_exit "umount '$S/bsrc'"
t0=$(date +%s.%N)
"$MYRIAD" copy --cgroup-io rbps=8M,wbps=100M --progress 0.5 --json "$S/cg.json" "$S/bsrc" "$S/img/dst" \
	>/dev/null 2>"$S/err" &
pid=$!
limits= cgdir=$S/none
for _ in $(seq 100); do
	if [ $version = 1 ]; then
		cg=$(awk -F: '$2 ~ /(^|,)blkio(,|$)/ { print $3 }' /proc/$pid/cgroup 2>/dev/null)
		cgdir=$v1_root$cg
		limits=$(cat "$cgdir/blkio.throttle.read_bps_device" "$cgdir/blkio.throttle.write_bps_device" \
			2>/dev/null | xargs)
	else
		cg=$(awk -F: '$1 == 0 { print $3 }' /proc/$pid/cgroup 2>/dev/null)
		cgdir=$v2_root$cg
		limits=$(cat "$cgdir/io.max" 2>/dev/null | xargs)
	fi
	case $cg in */myriad-copy.$pid) [ -n "$limits" ] && break ;; esac
	sleep 0.05
done
wait $pid
rc=$?
t1=$(date +%s.%N)
expect_eq "--cgroup-io rbps=8M,wbps=100M: exit 0" 0 $rc
if [ $version = 1 ]; then
	expect_eq "--cgroup-io: the cgroup v1 limits on DST's device $dev, read back" "$dev 8388608 $dev 104857600" "$limits"
	grep -q "not buffered writes.*--bwlimit" "$S/err" && ok "--cgroup-io, cgroup v1: says buffered writes are not limited" ||
		fail "stderr: $(cat "$S/err")"
else
	expect_eq "--cgroup-io: the cgroup v2 io.max on DST's device $dev, read back" \
		"$dev rbps=8388608 wbps=104857600 riops=max wiops=max" "$limits"
fi
expect_eq "--cgroup-io: its cgroup ($cgdir) is gone at exit" no "$([ -d "$cgdir" ] && echo yes || echo no)"
# The copy's own time (its JSON) and the wall time including start and exit: both within 15%.
rate=$(awk -v e="$(json_num "$S/cg.json" elapsed_s)" 'BEGIN { printf "%.2f", 24 / e }')
wall=$(echo "$t0 $t1" | awk '{ printf "%.2f", 24 / ($2 - $1) }')
awk -v r="$rate" -v w="$wall" 'BEGIN { exit !(r >= 6.8 && r <= 9.2 && w >= 6.8) }' &&
	ok "--cgroup-io rbps=8M: read at $rate MiB/s ($wall MiB/s over the wall time)" ||
	fail "--cgroup-io rbps=8M: read at $rate MiB/s, $wall MiB/s over the wall time (want 8 within 15%)"
grep -q "\"cgroup_io\":\"v$version $dev rbps=8388608 wbps=104857600\"" "$S/cg.json" &&
	ok "--json: the cgroup limit applied" || fail "--json: $(cat "$S/cg.json")"
same_tree "$S/bsrc" "$S/img/dst" && ok "--cgroup-io: the copy is identical" || fail "--cgroup-io: trees differ"
grep -Eq '^copy: [0-9.]+ [KM]iB copied, [0-9.]+ [KM]iB/s, ~[0-9]+% of SRC, ETA [0-9]' "$S/err" &&
	ok "progress line: bytes copied, byte rate, share of SRC and ETA" || fail "progress: $(grep '^copy:' "$S/err" | head -2)"
