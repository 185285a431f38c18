#!/usr/bin/env bash
# bench/fill.sh: `myriad fill` against fs_mark and a bare create loop, on a fresh ext4 per run.
#
#   sudo bench/fill.sh [--files N] [--runs R] [--sync-files N] [--ckpt-runs R] [--keep]
#                      [--only empty|4k|sync|ckpt|verify]
#
# Every timed fill starts on a freshly made filesystem: before each run the loop device is
# unmounted, mkfs.ext4'd again (inode tables zeroed up front, so no background init runs) and
# remounted, and the tool fills an empty directory on it. Rates are files / wall seconds of the
# whole command, for every tool (fs_mark's own files/sec, a sum of per-thread rates, is not used).
# Tools are timed in alternation, R rounds, after one untimed check round that counts the files
# each tool made (and prints myriad's own summary with its latency percentiles). Sections:
#   empty   N empty files, 2 threads: myriad fill (checkpointing on) | fs_mark -S 0 -s 0 -t 2 |
#           bench/create_loop.c (mknodat, one system call per file)
#   4k      N/4 files of 4 KiB: myriad fill -s 4k | fs_mark -s 4096
#   sync    --sync-files files (default 20000), fsync before close: myriad --sync file -j 2 / -j 16
#           vs fs_mark -S 1 -t 2 / -t 16; myriad's default threads vs the best of -j 1..64
#   ckpt    myriad fill with its checkpoint vs --no-state, N files, --ckpt-runs rounds (default 9)
#   verify  myriad verify --quick vs myriad walk --stat, the same N-file tree, warm cache
# Prints per-section tables (median, min, max wall seconds; files/s), ratios, then a summary of
# the bars with PASS/MISS. The exit status is 0 when the bench ran, whatever the bars say.
#
# MYRIAD=path overrides the binary (default build/myriad, built with make when not overridden).
# Needs root (loop mounts, mkfs). Everything is unmounted and deleted at exit, also on failure or
# Ctrl-C; --keep keeps the image file (its path is printed).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
TOP=$BENCH_TOP

usage() {
	sed -n '2,25s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
	exit "${1:-2}"
}

FILES=1000000 RUNS=5 SYNC_FILES=20000 CKPT_RUNS="" ONLY=""
while [ $# -gt 0 ]; do
	case $1 in
	--files) FILES=${2:?--files needs a number}; shift 2 ;;
	--runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
	--sync-files) SYNC_FILES=${2:?--sync-files needs a number}; shift 2 ;;
	--ckpt-runs) CKPT_RUNS=${2:?--ckpt-runs needs a number}; shift 2 ;;
	--keep) BENCH_KEEP=1; shift ;;
	--only) ONLY=${2:?--only needs a section}; shift 2 ;;
	-h | --help) usage 0 ;;
	*) echo "fill.sh: unknown argument '$1'" >&2; usage 2 ;;
	esac
done
CKPT_RUNS=${CKPT_RUNS:-$((RUNS > 9 ? RUNS : 9))}
for v in FILES SYNC_FILES; do
	case ${!v} in '' | *[!0-9]*) echo "fill.sh: ${v,,}: not a number: ${!v}" >&2; exit 2 ;; esac
done
for v in RUNS CKPT_RUNS; do
	case ${!v} in '' | *[!0-9]* | 0) echo "fill.sh: ${v,,}: not a positive number: ${!v}" >&2; exit 2 ;; esac
done
case $ONLY in '' | empty | 4k | sync | ckpt | verify) ;; *) echo "fill.sh: --only: empty, 4k, sync, ckpt or verify, not $ONLY" >&2; exit 2 ;; esac
# fs_mark's -n is per thread: N must split evenly over 2 threads (N/4 too, for 4k), and the
# sync files over 16.
if [ "$FILES" -lt 1000 ] || [ $((FILES % 8)) != 0 ]; then
	echo "fill.sh: --files must be a multiple of 8, at least 1000" >&2; exit 2
fi
if [ "$SYNC_FILES" -lt 16 ] || [ $((SYNC_FILES % 16)) != 0 ]; then
	echo "fill.sh: --sync-files must be a multiple of 16" >&2; exit 2
fi
[ "$(id -u)" = 0 ] || { echo "fill.sh: needs root (loop mounts, mkfs): sudo $0 $*" >&2; exit 2; }

want() { [ -z "$ONLY" ] || [ "$ONLY" = "$1" ]; }

# ---------------------------------------------------------------------------------------------
# Tools.
need_pkgs fsmark e2fsprogs time make gcc libc6-dev
if [ -z "${MYRIAD:-}" ]; then
	need_pkgs libxxhash-dev liburing-dev
	make -s -C "$TOP" build/myriad >&2 || bench_die "make build/myriad failed"
	MYRIAD=$TOP/build/myriad
fi
[ -x "$MYRIAD" ] || bench_die "no executable myriad at $MYRIAD"
command -v fs_mark >/dev/null || bench_die "no fs_mark (Debian package fsmark)"

# A work directory on the root filesystem: a copy of the myriad binary (every run times the same
# one, even if the checkout is rebuilt meanwhile), the bare loop's binary, fs_mark's log, and
# myriad's checkpoint state (--state WORK/fill: the same disk as the default /var/lib/myriad, but
# removed at exit whatever happens).
WORK=$(mktemp -d "${TMPDIR:-/tmp}/myriad-bench-fill.XXXXXX")
bench_on_exit "rm -rf '$WORK'"
MYRIAD_SRC=$MYRIAD MYRIAD=$WORK/myriad
cp "$MYRIAD_SRC" "$MYRIAD" || bench_die "cannot copy $MYRIAD_SRC"
"$MYRIAD" --version >/dev/null 2>&1 || bench_die "$MYRIAD_SRC does not run (being rebuilt?)"
LOOPBIN=$WORK/create_loop
gcc -O2 -pthread -o "$LOOPBIN" "$TOP/bench/create_loop.c" || bench_die "cannot compile bench/create_loop.c"
STATE=$WORK/fill FSLOG=$WORK/fs_mark.log


# ---------------------------------------------------------------------------------------------
# The image: one loop device, made a fresh ext4 before every timed run (fresh_fs). Sized for the
# largest section: N empty files and their directories (at most one inode per 4 KiB, so 8 KiB of
# image per inode), plus the 4k section's data.
FILES4=$((FILES / 4))
inodes=$((FILES + FILES / 5 + 100000))
bytes=$((inodes * 8192))
want 4k && bytes=$((bytes + FILES4 * 4096 * 5 / 4))
size_g=$(((bytes + (1 << 30) - 1) >> 30))
[ "$size_g" -ge 8 ] || size_g=8
MKFS_OPTS=(-N "$inodes")

MNT=$(mktemp -d /tmp/myriad-bench-mnt.XXXXXX)
bench_on_exit "rmdir '$MNT'"
bench_image ext4 "${size_g}G" "$MNT" "${MKFS_OPTS[@]}"
D=$MNT/t # the directory every tool fills (fs_mark: D/1, D/2 ...)

# fresh_fs: unmount (which writes back what the last run left dirty), mkfs.ext4 the loop device
# with the options bench_image used (mke2fs discards the device first: the image is sparse again),
# mount it again and make the empty directory D (fs_mark does not make the parents of its -d).
# The PREP of every timed fill run.
fresh_fs() {
	local i
	for i in 1 2 3 4 5; do
		umount "$MNT" 2>/dev/null && break
		sleep 1
	done
	! mountpoint -q "$MNT" || bench_die "cannot unmount $MNT"
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "${MKFS_OPTS[@]}" "$BENCH_LOOP" >&2 ||
		bench_die "mkfs.ext4 $BENCH_LOOP failed"
	mount -o "${BENCH_MOUNT_OPTS:-noatime}" "$BENCH_LOOP" "$MNT" || bench_die "mount $BENCH_LOOP failed"
	mkdir "$D"
	sync
}

# fsmark_cmd FILES THREADS SYNC SIZE: the fs_mark command line for FILES files over THREADS
# threads, each thread in a directory of its own (-t is the total thread count, spread round robin
# over the -d directories, which fs_mark makes but not their parents; -n is per thread), in
# subdirectories of 1000 files like myriad's --fanout 1000 (fs_mark refuses -D 1: up to 1000 files
# per thread go straight into its -d directory). Sets FSM=(...).
fsmark_cmd() {
	local t=$2 per=$(($1 / $2)) k
	FSM=(fs_mark -k -L 1 -S "$3" -s "$4" -t "$t" -n "$per")
	[ "$per" -le 1000 ] || FSM+=(-D $(((per + 999) / 1000)) -N 1000)
	FSM+=(-l "$FSLOG")
	for ((k = 1; k <= t; k++)); do FSM+=(-d "$D/$k"); done
}

# fsmark_fits FILES THREADS: can fs_mark make FILES files over THREADS threads? It refuses more
# than 1,000,000 files per thread ("Max files is 1000000"); says so when it cannot.
FSMARK_MAX=${FSMARK_MAX:-1000000} # fs_mark's own limit (overridable, to try the left-out path)
fsmark_fits() {
	[ $(($1 / $2)) -le $FSMARK_MAX ] && return 0
	echo "   fs_mark: left out: it makes at most $FSMARK_MAX files per thread, this asks $(($1 / $2))"
	return 1
}

# count_files: regular files under D (myriad's manifest aside).
count_files() { { find "$D" -type f ! -name '.myriad-fill*' 2>/dev/null || true; } | wc -l; }

# check_round FILES LABEL CMD... [-- LABEL CMD...]: one untimed run of each command on a fresh
# filesystem; says how many files each made (a warning, also in the summary, when not FILES) and
# shows myriad's own summary (its rate and create/write/fsync latency percentiles).
CHECK_BAD=()
check_round() {
	local files=$1 label got rc out=$WORK/check.out
	shift
	while [ $# -gt 0 ]; do
		[ "$1" = -- ] && shift
		label=$1
		shift
		local -a cmd=()
		while [ $# -gt 0 ] && [ "$1" != -- ]; do cmd+=("$1"); shift; done
		fresh_fs
		rc=0
		"${cmd[@]}" >"$out" 2>&1 || rc=$?
		got=$(count_files)
		if [ "$got" = "$files" ] && [ "$rc" = 0 ]; then
			echo "   check: $label made $got files"
		else
			echo "   check: WARNING: $label made $got files, not $files (exit status $rc); its output ends:"
			tail -n 5 "$out" | sed 's/^/          /'
			CHECK_BAD+=("$label")
		fi
		case ${cmd[0]} in
		"$MYRIAD") grep -E '^(fill |  [a-z]+ +p50)' "$out" | sed 's/^/          /' || true ;;
		esac
	done
}

# report_rates FILES LABEL...: files per wall-clock second at each label's median time.
report_rates() {
	local files=$1 l m
	shift
	printf '%-28s %10s %11s %14s\n' LABEL files 'median s' 'files/s'
	for l in "$@"; do
		m=$(median_of "$l")
		printf '%-28s %10d %11.3f %14s\n' "$l" "$files" "$m" \
			"$(awk -v n="$files" -v s="$m" 'BEGIN { if (s > 0) printf "%.0f", n / s; else print "inf" }')"
	done
}

# versus LIMIT A B...: the ratio of A against each B (equal file counts: a ratio of rates), with a
# bar "ratio >= LIMIT" for each, INVALID when either side had a failed run: a peer that stopped
# early is no yardstick.
versus() {
	local limit=$1 a=$2 b
	shift 2
	for b in "$@"; do
		ratio "$a" "$b"
		bar_check "$a vs $b" "$RATIO" ">=" "$limit" "$a" "$b"
	done
}


echo "== myriad fill bench: ext4 (${size_g}G sparse image, $inodes inodes, fresh mkfs before every run)," \
	"$(human "$FILES") files, $RUNS rounds, $(nproc) CPUs, $(uname -r)"
echo "   myriad:  $MYRIAD_SRC ($("$MYRIAD" --version 2>/dev/null | head -n 1); timed from a copy)"
echo "   peers:   fs_mark $(dpkg-query -W -f='${Version}' fsmark 2>/dev/null); bare loop: bench/create_loop.c (gcc -O2)"
echo "   load:    $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min) at start; ratios come from alternating runs"

# ---------------------------------------------------------------------------------------------
if want empty; then
	n=$(human "$FILES")
	section empty "$n empty files, 2 threads, directories of 1000 (myriad: default, checkpointing on)"
	fsmark_cmd "$FILES" 2 0 0
	fsm=()
	if fsmark_fits "$FILES" 2; then
		echo "   fs_mark: ${FSM[*]}"
		fsm=(-- empty/fs_mark "${FSM[@]}")
	fi
	set -- empty/myriad "$MYRIAD" fill -n "$FILES" --state "$STATE" "$D" \
		"${fsm[@]}" \
		-- empty/loop "$LOOPBIN" "$D" "$FILES" 2
	check_round "$FILES" "$@"
	alternate "$RUNS" fresh_fs -- "$@"
	labels=(empty/myriad empty/loop)
	[ ${#fsm[@]} -eq 0 ] || labels=(empty/myriad empty/fs_mark empty/loop)
	report_medians "${labels[@]}"
	report_rates "$FILES" "${labels[@]}"
	versus 0.90 empty/myriad empty/loop
	if [ ${#fsm[@]} -gt 0 ]; then
		versus 0.95 empty/myriad empty/fs_mark
		ratio empty/loop empty/fs_mark
	fi
fi

if want 4k; then
	n=$(human "$FILES4")
	section 4k "$n files of 4 KiB (N/4, to keep the image small), 2 threads"
	fsmark_cmd "$FILES4" 2 0 4096
	if fsmark_fits "$FILES4" 2; then
		echo "   fs_mark: ${FSM[*]}"
		set -- 4k/myriad "$MYRIAD" fill -n "$FILES4" -s 4k --state "$STATE" "$D" \
			-- 4k/fs_mark "${FSM[@]}"
		check_round "$FILES4" "$@"
		alternate "$RUNS" fresh_fs -- "$@"
		report_medians 4k/myriad 4k/fs_mark
		report_rates "$FILES4" 4k/myriad 4k/fs_mark
		versus 0.95 4k/myriad 4k/fs_mark
	fi
fi

if want sync; then
	n=$(human "$SYNC_FILES")
	section sync "$n empty files, fsync before every close (myriad --sync file; fs_mark -S 1)"
	fsmark_cmd "$SYNC_FILES" 2 1 0
	fsm2=("${FSM[@]}")
	fsmark_cmd "$SYNC_FILES" 16 1 0
	fsm16=("${FSM[@]}")
	echo "   fs_mark -t 2:  ${fsm2[*]}"
	echo "   fs_mark -t 16: ${fsm16[*]}"
	echo "   myriad default threads: 32 per CPU = $((32 * $(nproc)))"
	myr=("$MYRIAD" fill -n "$SYNC_FILES" --sync file --state "$STATE")
	set -- sync/myriad-j2 "${myr[@]}" -j 2 "$D" \
		-- sync/fs_mark-t2 "${fsm2[@]}" \
		-- sync/myriad-j16 "${myr[@]}" -j 16 "$D" \
		-- sync/fs_mark-t16 "${fsm16[@]}" \
		-- sync/myriad-default "${myr[@]}" "$D"
	check_round "$SYNC_FILES" "$@"
	sweep=(sync/myriad-j1 sync/myriad-j2 sync/myriad-j4 sync/myriad-j8 sync/myriad-j16 sync/myriad-j32 sync/myriad-j64)
	for j in 1 4 8 32 64; do set -- "$@" -- "sync/myriad-j$j" "${myr[@]}" -j "$j" "$D"; done
	alternate "$RUNS" fresh_fs -- "$@"
	report_medians sync/myriad-j2 sync/fs_mark-t2 sync/myriad-j16 sync/fs_mark-t16 sync/myriad-default \
		sync/myriad-j1 sync/myriad-j4 sync/myriad-j8 sync/myriad-j32 sync/myriad-j64
	report_rates "$SYNC_FILES" sync/fs_mark-t2 sync/fs_mark-t16 sync/myriad-default "${sweep[@]}"
	versus 0.95 sync/myriad-j2 sync/fs_mark-t2
	versus 0.95 sync/myriad-j16 sync/fs_mark-t16
	best="" bestm=""
	for l in "${sweep[@]}"; do
		m=$(median_of "$l")
		if [ -z "$bestm" ] || awk -v m="$m" -v b="$bestm" 'BEGIN { exit !(m < b) }'; then best=$l bestm=$m; fi
	done
	echo "fastest -j: $best"
	ratio sync/myriad-default "$best"
	bar_check "sync/myriad-default vs best -j ($best)" "$RATIO" ">=" 0.90 sync/myriad-default "$best"
fi

if want ckpt; then
	n=$(human "$FILES")
	section ckpt "checkpoint overhead: $n empty files, myriad fill default vs --no-state, $CKPT_RUNS rounds"
	set -- ckpt/default "$MYRIAD" fill -n "$FILES" --state "$STATE" "$D" \
		-- ckpt/no-state "$MYRIAD" fill -n "$FILES" --no-state "$D"
	check_round "$FILES" "$@"
	alternate "$CKPT_RUNS" fresh_fs -- "$@"
	report_medians ckpt/default ckpt/no-state
	report_rates "$FILES" ckpt/default ckpt/no-state
	slow=$(awk -v a="$(median_of ckpt/default)" -v b="$(median_of ckpt/no-state)" 'BEGIN { printf "%.3f", a / b }')
	echo "checkpointing costs $(awk -v s="$slow" 'BEGIN { printf "%+.1f%%", (s - 1) * 100 }') (median time default / --no-state = $slow)"
	bar_check "ckpt/default time / ckpt/no-state time" "$slow" "<=" 1.03 ckpt/default ckpt/no-state
fi

if want verify; then
	n=$(human "$FILES")
	section verify "myriad verify --quick vs myriad walk --stat, one $n-file tree, warm cache (both --no-state)"
	fresh_fs
	t0=$EPOCHREALTIME
	"$MYRIAD" fill -n "$FILES" --no-state "$D" >/dev/null || bench_die "myriad fill of the verify tree failed"
	sync
	bench_log "filled $D in $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"
	alternate -w "$RUNS" : \
		-- verify/verify-quick "$MYRIAD" verify --quick --no-state "$D" \
		-- verify/walk-stat "$MYRIAD" walk --stat --no-state "$D"
	report_medians verify/verify-quick verify/walk-stat
	ratio verify/verify-quick verify/walk-stat
	slow=$(awk -v a="$(median_of verify/verify-quick)" -v b="$(median_of verify/walk-stat)" 'BEGIN { printf "%.2f", a / b }')
	echo "verify --quick takes ${slow}x the time of walk --stat"
	bar_check "verify/verify-quick time / walk-stat time" "$slow" "<=" 1.5 verify/verify-quick verify/walk-stat
fi

bench_summary
[ ${#CHECK_BAD[@]} = 0 ] || echo "WARNING: wrong file count or exit status in the check round: ${CHECK_BAD[*]}"
