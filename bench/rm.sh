#!/usr/bin/env bash
# bench/rm.sh: `myriad rm` against `rm -rf`, each removing an identical fresh copy of the tree.
#
#   sudo bench/rm.sh [--files N] [--runs R] [--fs ext4|xfs|btrfs|all] [--only cold|warm] [--keep]
#
# Builds the tree once per filesystem (build/mktree: N empty files in directories of 1000 entries)
# on a sparse loop-mounted image, unmounts it and keeps that image as the pristine copy. Before
# every timed removal the pristine image is copied to a scratch image that is loop-mounted in its
# place, so every run, of every tool, starts from the same bytes. Three commands, timed in
# alternation, R rounds, each followed by `sync -f` of the filesystem inside its time:
#   myriad        myriad rm --no-state DIR
#   myriad-state  myriad rm DIR (checkpointing, as by default; state in a temporary directory)
#   rm-rf         rm -rf DIR (GNU coreutils)
# Sections:
#   cold    sync and drop caches right before each removal         bar: myriad >= 2x rm -rf
#   warm    a `myriad walk --no-state --stat` of the tree first     bar: myriad >= 1.5x rm -rf
# (bars for both myriad variants). --fs all runs ext4, xfs and btrfs in turn. Prints per-section
# tables (median, min, max wall seconds), ratios, then a summary of the bars with PASS/MISS. The
# exit status is 0 when the bench ran, whatever the bars say.
#
# MYRIAD=path overrides the binary (default build/myriad, built with make when not overridden).
# Needs root (loop mounts, drop_caches). Everything is unmounted and deleted at exit, also on
# failure or Ctrl-C; --keep keeps the pristine image (its path is printed).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
TOP=$BENCH_TOP

usage() {
	sed -n '2,24s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
	exit "${1:-2}"
}

FILES=1000000 RUNS=5 FS=ext4 ONLY=""
while [ $# -gt 0 ]; do
	case $1 in
	--files) FILES=${2:?--files needs a number}; shift 2 ;;
	--runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
	--fs) FS=${2:?--fs needs ext4, xfs, btrfs or all}; shift 2 ;;
	--only) ONLY=${2:?--only needs cold or warm}; shift 2 ;;
	--keep) BENCH_KEEP=1; shift ;;
	-h | --help) usage 0 ;;
	*) echo "rm.sh: unknown argument '$1'" >&2; usage 2 ;;
	esac
done
case $FILES in '' | *[!0-9]*) echo "rm.sh: --files: not a number: $FILES" >&2; exit 2 ;; esac
case $RUNS in '' | *[!0-9]* | 0) echo "rm.sh: --runs: not a positive number: $RUNS" >&2; exit 2 ;; esac
case $FS in ext4 | xfs | btrfs) FSLIST=("$FS") ;; all) FSLIST=(ext4 xfs btrfs) ;;
*) echo "rm.sh: --fs: ext4, xfs, btrfs or all, not $FS" >&2; exit 2 ;; esac
case $ONLY in '' | cold | warm) ;; *) echo "rm.sh: --only: cold or warm, not $ONLY" >&2; exit 2 ;; esac
[ "$FILES" -ge 10 ] || { echo "rm.sh: --files must be at least 10" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "rm.sh: needs root (loop mounts, drop_caches): sudo $0 $*" >&2; exit 2; }

want() { [ -z "$ONLY" ] || [ "$ONLY" = "$1" ]; }

# ---------------------------------------------------------------------------------------------
# Tools.
need_pkgs coreutils util-linux time make gcc libc6-dev
MKTREE=$TOP/build/mktree
make -s -C "$TOP" build/mktree >&2
if [ -z "${MYRIAD:-}" ]; then
	need_pkgs libxxhash-dev liburing-dev
	make -s -C "$TOP" build/myriad >&2 || bench_die "make build/myriad failed"
	MYRIAD=$TOP/build/myriad
fi
[ -x "$MYRIAD" ] || bench_die "no executable myriad at $MYRIAD"

# A work directory on the root filesystem: the myriad binary that is timed (a copy, so that a
# rebuild of the checkout during the bench does not change or remove it), myriad-state's
# checkpoint (--state WORK/state: the same disk as the default /var/lib/myriad, but removed at exit
# whatever happens) and the JSON summary of the last myriad run.
WORK=$(mktemp -d "${TMPDIR:-/tmp}/myriad-bench-rm.XXXXXX")
bench_on_exit "rm -rf '$WORK'"
STATE=$WORK/state JSON=$WORK/last.json
MYRIAD_SRC=$MYRIAD MYRIAD=$WORK/myriad
cp "$MYRIAD_SRC" "$MYRIAD" || bench_die "cannot copy $MYRIAD_SRC"
"$MYRIAD" --version >/dev/null 2>&1 || bench_die "$MYRIAD_SRC does not run (being rebuilt?)"

secs_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

# ---------------------------------------------------------------------------------------------
# Fresh copies. A removal destroys its tree, so every timed run needs a new one, and both tools must
# get the same one. Rebuilding the tree with mktree before each run costs about 20 s for 1M files
# (mktree plus the sync of what it wrote) and gives a similar but not identical tree (mktree's
# threads race for inode numbers). Copying the pristine image instead costs about 2 s for 1M
# files (the sparse image holds about 330 MB on ext4, 590 MB on XFS: inode tables, directory
# blocks, journal; where /var/tmp cannot reflink, cp --reflink=auto makes a sparse copy) and
# every run starts from exactly the same bytes: same inode numbers, same directory blocks, same
# free-space layout, a clean journal. So: copy, loop-mount the copy (direct I/O, like
# bench_image), and throw it away after.
# The pristine image stays attached to its loop device, unmounted, until exit (bench_image detaches
# it then; detaching it earlier would let that exit cleanup hit a loop device someone else got).
MNT=$(mktemp -d /tmp/myriad-bench-mnt.XXXXXX)
bench_on_exit "rmdir '$MNT'"
RUN_IMG=$(mktemp /var/tmp/myriad-bench-rm-run.XXXXXX.img)
bench_on_exit "rm -f '$RUN_IMG'"
RUN_LOOP="" PRISTINE="" CUR_FS="" T=$MNT/t
run_teardown() { # unmount (lazily if it stays busy) and detach the current copy, if any
	if mountpoint -q "$MNT"; then
		for _ in 1 2 3 4 5; do
			umount "$MNT" 2>/dev/null && break
			sleep 1
		done
		if mountpoint -q "$MNT"; then
			bench_log "warning: $MNT is busy: unmounting it lazily"
			umount -l "$MNT"
		fi
	fi
	if [ -n "$RUN_LOOP" ]; then
		losetup -d "$RUN_LOOP" || bench_log "warning: losetup -d $RUN_LOOP failed"
		RUN_LOOP=""
	fi
}
bench_on_exit run_teardown

# Checks on the run before: the tree is gone and myriad (when it ran) counted all of it. A failed
# check is a warning and is counted; the timings stand, the summary says how many failed.
CHECK_FAILS=0
check_last_run() {
	local f d
	if [ -e "$T" ]; then
		bench_log "warning: $T still exists after the last removal"
		CHECK_FAILS=$((CHECK_FAILS + 1))
	fi
	if [ -s "$JSON" ]; then
		f=$(grep -o '"files": *[0-9]*' "$JSON" | grep -o '[0-9]*$') || f='?'
		d=$(grep -o '"directories": *[0-9]*' "$JSON" | grep -o '[0-9]*$') || d='?'
		if [ "$f" != "$TREE_FILES" ] || [ "$d" != "$TREE_DIRS" ]; then
			bench_log "warning: myriad rm removed $f files and $d directories, the tree has $TREE_FILES and $TREE_DIRS"
			CHECK_FAILS=$((CHECK_FAILS + 1))
		fi
		rm -f "$JSON"
	fi
}

# fresh_copy cold|warm: the PREP of every timed run. Check and drop the last copy, copy the
# pristine image, attach and mount the copy; then either sync and drop every cache (cold) or read
# the whole tree, names and inodes, with a stat walk, and sync (warm). The walk is a --stat one
# because every unlink needs the file's inode: a plain walk would cache the directories only,
# where a tree just made has its inodes in memory too. The closing sync (drop_caches syncs too)
# writes back the copy itself, so the timed `sync -f` has only the removal to write.
fresh_copy() {
	[ -z "$RUN_LOOP" ] || check_last_run
	run_teardown
	rm -f "$RUN_IMG"
	cp --reflink=auto --sparse=always "$PRISTINE" "$RUN_IMG" || bench_die "cp $PRISTINE failed"
	RUN_LOOP=$(losetup --find --show --direct-io=on "$RUN_IMG" 2>/dev/null) ||
		RUN_LOOP=$(losetup --find --show "$RUN_IMG") || bench_die "losetup failed for $RUN_IMG"
	mount -o "${BENCH_MOUNT_OPTS:-noatime}" "$RUN_LOOP" "$MNT" || bench_die "mount $RUN_LOOP ($CUR_FS copy) failed"
	[ -d "$T" ] || bench_die "the copy has no $T"
	if [ "$1" = cold ]; then
		drop_caches
	else
		"$MYRIAD" walk --no-state --stat --progress 0 "$T" >/dev/null 2>&1 || bench_die "warm-up walk failed"
		sync
	fi
}

# The timed commands: TOOL ARGS..., then `sync -f MNT` (syncfs of the benchmark filesystem: for
# ext4 and XFS a journal commit of every unlink, for btrfs a transaction commit) inside the time,
# so that no tool wins by leaving work in the page cache. syncfs rather than a global sync, so
# that writeback of whatever else runs on the machine is not timed. The tool's exit status is kept.
# shellcheck disable=SC2016 # expanded by that sh
SYNCED=(sh -c '"$@"; rc=$?; sync -f "$0" || rc=$?; exit "$rc"' "$MNT")

# section FS NAME TITLE: a header.
section() { echo; echo "== $1 $2: $3"; }

# versus LIMIT A B: print the ratio of A against B and record a bar "ratio >= LIMIT".
versus() {
	ratio "$2" "$3"
	bar_check "$2 vs $3" "$RATIO" ">=" "$1" "$2"
}

echo "== myriad rm bench: ${FSLIST[*]}, $(human "$FILES") empty files in directories of 1000, $RUNS rounds, $(nproc) CPUs, $(uname -r)"
echo "   myriad: $MYRIAD_SRC ($("$MYRIAD" --version 2>/dev/null | head -n 1); timed from a copy)"
echo "   peer:   $(rm --version | head -n 1)"

for fs in "${FSLIST[@]}"; do
	# -------------------------------------------------------------------------------------
	# The pristine image: N files and their directories (ext4 allows at most one inode per
	# 4 KiB, so 8 KiB of image per inode).
	inodes=$((FILES + FILES / 5 + 100000))
	size_g=$(((inodes * 8192 + (1 << 30) - 1) >> 30))
	[ "$size_g" -ge 8 ] || size_g=8
	mkfs_opts=()
	[ "$fs" = ext4 ] && mkfs_opts=(-N "$inodes")
	bench_image "$fs" "${size_g}G" "$MNT" "${mkfs_opts[@]}"
	PRISTINE=$BENCH_IMAGE CUR_FS=$fs
	t0=$EPOCHREALTIME
	"$MKTREE" -j "$(nproc)" "$T" --files "$FILES" --fanout 1000 || bench_die "mktree failed"
	made=$(secs_since "$t0")
	TREE_FILES=$(find "$T" -type f | wc -l) TREE_DIRS=$(find "$T" -type d | wc -l)
	[ "$TREE_FILES" = "$FILES" ] || bench_die "mktree made $TREE_FILES files, not $FILES"
	umount "$MNT" || bench_die "cannot unmount the pristine $fs image"
	bench_log "made the pristine $fs tree ($TREE_FILES files, $TREE_DIRS directories) in $made s;" \
		"the image holds $(du -h "$PRISTINE" | cut -f1)"

	echo
	echo "== $fs: $T, $TREE_FILES files and $TREE_DIRS directories on a fresh copy of the pristine image per run"
	for sec in cold warm; do
		want "$sec" || continue
		if [ "$sec" = cold ]; then
			section "$fs" cold "caches dropped (after sync) right before every removal; time includes sync -f"
			limit=2
		else
			section "$fs" warm "myriad walk --no-state --stat before every removal; time includes sync -f"
			limit=1.5
		fi
		p=$fs/$sec
		alternate "$RUNS" "fresh_copy $sec" \
			-- "$p/myriad" "${SYNCED[@]}" "$MYRIAD" rm --no-state --progress 0 --json "$JSON" "$T" \
			-- "$p/myriad-state" "${SYNCED[@]}" "$MYRIAD" rm --state "$STATE" --progress 0 --json "$JSON" "$T" \
			-- "$p/rm-rf" "${SYNCED[@]}" rm -rf "$T"
		check_last_run
		report_medians "$p/myriad" "$p/myriad-state" "$p/rm-rf"
		versus "$limit" "$p/myriad" "$p/rm-rf"
		versus "$limit" "$p/myriad-state" "$p/rm-rf"
		ratio "$p/myriad" "$p/myriad-state"
	done
	run_teardown
done

echo
if [ "$CHECK_FAILS" = 0 ]; then
	echo "checks: every removal left no tree behind; every myriad run counted $TREE_FILES files, $TREE_DIRS directories"
else
	echo "checks: $CHECK_FAILS FAILED (see the warnings above): the timings of those runs are suspect"
fi
bench_summary
