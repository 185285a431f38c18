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

# scratch: the script's temporary directory, removed at exit. (Made here, not in the function:
# S=$(scratch) runs in a subshell, whose cleanups would never run.)
T_SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/myriad-test.XXXXXX")
on_exit "rm -rf --one-file-system '$T_SCRATCH'"
scratch() { echo "$T_SCRATCH"; }

is_root() { [ "$(id -u)" = 0 ]; }

# sandbox [SIZE]: for tests of commands that remove or overwrite. Mounts a tmpfs of its own on
# $SANDBOX (unmounted at exit) and makes the working directory $SANDBOX/a/b/c, so that a slip (a
# `..` taken, a link followed) costs that tmpfs, never the machine's files. Call it in the script's
# own shell, not in $(...). Returns non-zero, saying why, when it cannot (needs root).
sandbox() {
	is_root || { echo "needs root (a tmpfs of its own for a destructive test)" >&2; return 1; }
	SANDBOX=$T_SCRATCH/sandbox
	mkdir -p "$SANDBOX" || return 1
	mount -t tmpfs -o "size=${1:-256m}" myriad-sandbox "$SANDBOX" || { echo "mount tmpfs failed" >&2; return 1; }
	on_exit "cd /; umount '$SANDBOX' || umount -l '$SANDBOX'"
	mkdir -p "$SANDBOX/a/b/c" && cd "$SANDBOX/a/b/c"
}

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

# make_hostile_tree DIR: every file type, hostile names (newlines, invalid UTF-8, leading dashes,
# 255-byte names), a path longer than PATH_MAX, symlink loops and dangling links.
make_hostile_tree() {
	local d=$1 long i
	mkdir -p "$d/sub/deeper" "$d/-dash" "$d"/$'new\nline' "$d"/$'bad\xff\xfeutf8'
	touch "$d/file" "$d/sub/f1" "$d/sub/deeper/f2" "$d"/$'new\nline'/$'in\nside' "$d"/$'bad\xff\xfeutf8'/$'\x80' \
		"$d/-dash/-n" "$d/ spaces " "$d/.hidden"
	printf 'data' >"$d/sub/with-data"
	ln -s file "$d/link"
	ln -s /nonexistent/target "$d/dangling"
	ln -s loop2 "$d/loop1"
	ln -s loop1 "$d/loop2"
	ln -s . "$d/sub/self"
	ln -s .. "$d/sub/deeper/up"
	mkfifo "$d/fifo"
	perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Local => $ARGV[0], Listen => 1) or die "socket: $!"' "$d/sock"
	if is_root; then
		mknod "$d/blockdev" b 7 250
		mknod "$d/chardev" c 1 3
	fi
	long=$(printf 'n%.0s' $(seq 255))
	touch "$d/$long"
	mkdir "$d/${long/n/m}"
	touch "$d/${long/n/m}/$long"
	# A path longer than PATH_MAX: 24 levels of 200-byte names, built step by step.
	(
		cd "$d" || exit 1
		for i in $(seq 24); do
			name=$(printf "L$i%.0s" $(seq 100) | cut -c1-200)
			mkdir "$name" && cd "$name" || exit 1
		done
		touch deepfile
		ln -s deepfile deeplink
	)
}

# tree_digest DIR: one md5 over every entry's (path, type, mode, owner, size, links, mtime ns,
# symlink target), every file's content and every xattr (ACLs included). Directory sizes are
# left out: they depend on the filesystem's history, not on what the directory holds.
tree_digest() {
	(
		cd "$1" || exit 1
		find . ! -type d -printf '%P\t%y %m %U %G %s %n %T@ %l\0' | sort -z
		find . -type d -printf '%P\t%y %m %U %G %T@\0' | sort -z
		find . -type f -print0 | sort -z | xargs -0 -r md5sum 2>/dev/null
		find . -print0 | sort -z | xargs -0 -r getfattr -h -d -m - 2>/dev/null
	) | md5sum | cut -d' ' -f1
}
# same_tree A B: are the two trees equal by tree_digest?
same_tree() { [ "$(tree_digest "$1")" = "$(tree_digest "$2")" ]; }

# rsync_diff A B: what rsync -naHAXc --delete would change to make B equal A (checksums, hard
# links, ACLs, xattrs), one name a line; nothing when they are equal. (rsync cannot reach a path
# longer than PATH_MAX: its "IO error" note is dropped; tree_digest covers those.)
rsync_diff() {
	rsync -naHAXc --delete --out-format='%n' "$1/" "$2/" 2>/dev/null | grep -v -e '^\./$' -e '^IO error encountered'
}

# find_counts DIR: "total f d l p s b c" as find sees them (no stat of targets, like walk).
find_counts() {
	local t out
	out=$(find "$1" -printf x | wc -c)
	for t in f d l p s b c; do out="$out $(find "$1" -type $t -printf x | wc -c)"; done
	echo "$out"
}

# walk_counts JSONFILE: the same fields from a walk --json summary.
walk_counts() {
	local j=$1 t out
	out=$(json_num "$j" entries)
	for t in f d l p s b c; do out="$out $(grep -o "\"$t\":[0-9]*" "$j" | head -1 | cut -d: -f2)"; done
	echo "$out"
}

# link_groups DIR: the hard-link structure of DIR's files, one line per inode listing its names
# (sorted), the lines sorted: equal for two trees whose files are linked alike.
link_groups() {
	(cd "$1" && find . -type f -printf '%i %P\n') | sort -k2 |
		awk '{ g[$1] = g[$1] " " $2 } END { for (i in g) print g[i] }' | sort
}

# json_num FILE KEY: the first numeric value of KEY in a flat JSON document.
json_num() { grep -o "\"$2\":[0-9.e+-]*" "$1" | head -1 | cut -d: -f2; }

# peak_rss_kib CMD...: run CMD (output discarded) and print its peak RSS in KiB.
peak_rss_kib() {
	local f
	f=$(mktemp)
	/usr/bin/time -f %M -o "$f" "$@" >/dev/null 2>&1
	tail -n 1 "$f"
	rm -f "$f"
}

# wait_for_glob PATTERN [SECONDS] [NEWER]: wait (default up to 20 s) until a non-empty file matches
# the glob PATTERN (and, given NEWER, is newer than that file); status 0 once one does, 1 on
# timeout. For tests that must kill a run only after a checkpoint of its own, on machines where
# start-up can take longer than a fixed sleep.
wait_for_glob() {
	local i f
	for ((i = 0; i < ${2:-20} * 50; i++)); do
		for f in $1; do [ -s "$f" ] && { [ -z "${3:-}" ] || [ "$f" -nt "$3" ]; } && return 0; done
		sleep 0.02
	done
	return 1
}

# kill9_after_checkpoint STATE MAXTENTHS CMD...: start CMD (output discarded) in the background, wait
# for its first checkpoint of its own (a snapshot under STATE newer than the call), sleep a random
# 0.1..MAXTENTHS/10 s, then kill -9 it. Status 0 if the kill landed (the run was still going, its
# state is there to resume), 2 if CMD completed first (its state removed: the next run starts
# afresh; kill succeeds on a process that is exiting, so only the state tells), 1 if it ended
# otherwise; a missing checkpoint within 20 s is a failure of its own. Callers count the kills
# since the last completion: count_kill STATUS.
kill9_after_checkpoint() {
	local state=$1 max=$2 pid mark
	shift 2
	mark=$(mktemp "$T_SCRATCH/k.mark.XXXXXX")
	"$@" >/dev/null 2>&1 &
	pid=$!
	wait_for_glob "$state/myriad/*/snapshot" 20 "$mark" || fail "kill -9: no checkpoint within 20 s"
	rm -f "$mark"
	sleep "0.$((RANDOM % max + 1))"
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	local rc=$?
	[ -n "$(ls "$state/myriad" 2>/dev/null)" ] || return 2
	[ $rc = 137 ] && return 0
	return 1
}
# count_kill STATUS: kills (the runs killed since the last that completed) after a
# kill9_after_checkpoint that returned STATUS.
count_kill() { case $1 in 0) kills=$((kills + 1)) ;; 2) kills=0 ;; esac; }
