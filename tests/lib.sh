# Shared helpers for myriad's CLI tests and benchmarks. Source it from a test script.
#
# A test script reports each case with exactly one of ok / fail / skip; scripts/test counts the
# lines "PASS ...", "FAIL ...", "SKIP ..." that these print. Everything a script mounts or
# attaches is registered with on_exit and torn down by the EXIT trap, even when the script fails.

set -u
TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
MYRIAD=${MYRIAD:-$TOP/build/myriad}
FAULTFS=${FAULTFS:-$TOP/build/faultfs}
MKTREE=${MKTREE:-$TOP/build/mktree}
T_NAME=$(basename "$0" .sh)

ok()   { echo "PASS $T_NAME: $*"; }
fail() { echo "FAIL $T_NAME: $*"; }
skip() { echo "SKIP $T_NAME: $*"; }

# check NAME CMD...: run CMD; pass when it exits 0.
check() {
	local name=$1; shift
	if "$@"; then ok "$name"; else fail "$name (command: $*)"; fi
}

# expect_eq NAME WANT GOT
expect_eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else fail "$1: want [$2], got [$3]"; fi
}

_cleanups=()
on_exit() { _cleanups+=("$*"); }
_run_cleanups() {
	local i
	for ((i = ${#_cleanups[@]} - 1; i >= 0; i--)); do eval "${_cleanups[$i]}" >/dev/null 2>&1 || true; done
}
trap _run_cleanups EXIT

# scratch: a fresh temporary directory removed at exit.
scratch() {
	local d
	d=$(mktemp -d "${TMPDIR:-/tmp}/myriad-test.XXXXXX")
	on_exit "rm -rf '$d'"
	echo "$d"
}

is_root() { [ "$(id -u)" = 0 ]; }

# mount_image FS SIZE MNT: make a sparse image of SIZE, mkfs it as FS, loop-mount it on MNT.
# Returns non-zero (and says why on stderr) when that is not possible here.
mount_image() {
	local fs=$1 size=$2 mnt=$3 img
	is_root || { echo "needs root" >&2; return 1; }
	command -v "mkfs.$fs" >/dev/null || { echo "mkfs.$fs not installed" >&2; return 1; }
	img=$(mktemp "${TMPDIR:-/var/tmp}/myriad-img.XXXXXX")
	on_exit "rm -f '$img'"
	truncate -s "$size" "$img"
	case $fs in
	ext4) mkfs.ext4 -q -F "$img" ;;
	xfs) mkfs.xfs -q -f "$img" ;;
	btrfs) mkfs.btrfs -q -f "$img" ;;
	*) "mkfs.$fs" "$img" ;;
	esac >/dev/null 2>&1 || { echo "mkfs.$fs failed" >&2; return 1; }
	mkdir -p "$mnt"
	mount -o loop "$img" "$mnt" || { echo "mount failed" >&2; return 1; }
	on_exit "umount '$mnt' || umount -l '$mnt'"
}

# mount_faultfs BACKING MNT [faultfs options...]: mount the fault-injecting filesystem.
mount_faultfs() {
	local backing=$1 mnt=$2; shift 2
	[ -e /dev/fuse ] || { echo "no /dev/fuse" >&2; return 1; }
	mkdir -p "$mnt"
	"$FAULTFS" "$@" "$backing" "$mnt" || return 1
	on_exit "fusermount3 -u '$mnt' || umount -l '$mnt'"
}
