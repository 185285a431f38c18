#!/usr/bin/env bash
# bench/walk.sh: `myriad walk` against bfs, fd (fdfind) and GNU find on the same tree.
#
#   sudo bench/walk.sh [--files N] [--runs R] [--fs ext4|xfs|btrfs] [--keep]
#                      [--only warm|print0|stat|cold|rss|deep] [--depth D]
#
# Makes a sparse loop-mounted image in /var/tmp, fills it with build/mktree (N empty files in
# directories of 1000 entries) and times the tools in alternation, R rounds, one section at a time:
#   warm    count the tree, warm cache:  myriad walk --no-state | bfs -false | fdfind -uu | find -false
#   print0  stream every path:           myriad walk --no-state --print0 | bfs -print0
#   stat    stat every entry:            myriad walk --no-state --stat | bfs -size 0 | find -size 0
#   cold    as warm, caches dropped before every run (one untimed round first)
#   rss     peak RSS of myriad walk on N/10 and 2N files (fanout 1000) and on N files in one directory
#   deep    a chain D deep (default 5000; a directory and a file per level), warm:
#           myriad walk --no-state | find -false | bfs -false
# Prints per-section tables of medians and ratios, then a summary of the bars with PASS/MISS.
# The exit status is 0 when the bench ran, whatever the bars say.
#
# MYRIAD=path overrides the binary (default build/myriad, built with make when not overridden).
# Needs root (loop mounts, drop_caches). Everything is unmounted and deleted at exit, also on
# failure or Ctrl-C; --keep keeps the image file (its path is printed).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
TOP=$BENCH_TOP

usage() {
	sed -n '2,20s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
	exit "${1:-2}"
}

FILES=1000000 RUNS=5 FS=ext4 ONLY="" DEPTH=5000
while [ $# -gt 0 ]; do
	case $1 in
	--files) FILES=${2:?--files needs a number}; shift 2 ;;
	--runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
	--fs) FS=${2:?--fs needs ext4, xfs or btrfs}; shift 2 ;;
	--keep) BENCH_KEEP=1; shift ;;
	--only) ONLY=${2:?--only needs a section}; shift 2 ;;
	--depth) DEPTH=${2:?--depth needs a number}; shift 2 ;;
	-h | --help) usage 0 ;;
	*) echo "walk.sh: unknown argument '$1'" >&2; usage 2 ;;
	esac
done
case $FILES in '' | *[!0-9]*) echo "walk.sh: --files: not a number: $FILES" >&2; exit 2 ;; esac
case $RUNS in '' | *[!0-9]* | 0) echo "walk.sh: --runs: not a positive number: $RUNS" >&2; exit 2 ;; esac
case $FS in ext4 | xfs | btrfs) ;; *) echo "walk.sh: --fs: ext4, xfs or btrfs, not $FS" >&2; exit 2 ;; esac
case $ONLY in '' | warm | print0 | stat | cold | rss | deep) ;; *) echo "walk.sh: --only: warm, print0, stat, cold, rss or deep, not $ONLY" >&2; exit 2 ;; esac
case $DEPTH in '' | *[!0-9]* | 0) echo "walk.sh: --depth: not a positive number: $DEPTH" >&2; exit 2 ;; esac
[ "$FILES" -ge 10 ] || { echo "walk.sh: --files must be at least 10" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "walk.sh: needs root (loop mounts, drop_caches): sudo $0 $*" >&2; exit 2; }

want() { [ -z "$ONLY" ] || [ "$ONLY" = "$1" ]; }

# ---------------------------------------------------------------------------------------------
# Tools.
need_pkgs bfs fd-find findutils time make gcc libc6-dev
MKTREE=$TOP/build/mktree
make -s -C "$TOP" build/mktree >&2
if [ -z "${MYRIAD:-}" ]; then
	need_pkgs libxxhash-dev liburing-dev
	make -s -C "$TOP" build/myriad >&2 || bench_die "make build/myriad failed"
	MYRIAD=$TOP/build/myriad
fi
[ -x "$MYRIAD" ] || bench_die "no executable myriad at $MYRIAD"


# ---------------------------------------------------------------------------------------------
# Image and trees.
SMALL=$((FILES / 10)) BIG=$((FILES * 2)) FLAT=$FILES
total=0
if want warm || want print0 || want stat || want cold; then total=$((total + FILES)); fi
if want rss; then total=$((total + SMALL + BIG + FLAT)); fi
if want deep; then total=$((total + 2 * DEPTH)); fi
inodes=$((total + total / 5 + 100000))       # files, their directories and slack
size_g=$(((inodes * 8192 + (1 << 30) - 1) >> 30)) # ext4 allows at most one inode per 4 KiB
[ "$size_g" -ge 8 ] || size_g=8
mkfs_opts=()
[ "$FS" = ext4 ] && mkfs_opts=(-N "$inodes")

MNT=$(mktemp -d /tmp/myriad-bench-mnt.XXXXXX)
bench_on_exit "rmdir '$MNT'"
bench_image "$FS" "${size_g}G" "$MNT" "${mkfs_opts[@]}"

mktree() { # mktree LABEL DIR ARGS...: make a tree, say how long it took
	local label=$1 t0 t1
	shift
	t0=$EPOCHREALTIME
	"$MKTREE" -j "$(nproc)" "$@" || bench_die "mktree $* failed"
	t1=$EPOCHREALTIME
	bench_log "made $label ($1) in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"
}
T=$MNT/tree
if want warm || want print0 || want stat || want cold; then
	mktree "$(human "$FILES") files, fanout 1000" "$T" --files "$FILES" --fanout 1000
fi
if want rss; then
	mktree "$(human "$SMALL") files" "$MNT/rss-small" --files "$SMALL" --fanout 1000
	mktree "$(human "$BIG") files" "$MNT/rss-big" --files "$BIG" --fanout 1000
	mktree "$(human "$FLAT") files in one directory" "$MNT/rss-flat" --files "$FLAT" --flat
fi
if want deep; then
	mktree "a chain $DEPTH deep" "$MNT/deep" --chain "$DEPTH"
fi
sync

echo "== myriad walk bench: $FS, $(human "$FILES") files, $RUNS rounds, $(nproc) CPUs, $(uname -r)"
echo "   myriad: $MYRIAD"
# shellcheck disable=SC2185
echo "   peers:  $(bfs --version 2>/dev/null | head -n 1); $(fdfind --version 2>/dev/null | head -n 1); $(find --version 2>/dev/null | head -n 1)"

# Sanity: every tool should see the same tree (informational; the timings stand regardless).
if want warm || want print0 || want stat || want cold; then
	expect=$(bfs "$T" 2>/dev/null | wc -l) || true
	echo "   tree:   $T: $expect entries (bfs, counting the root)"
	got=$("$MYRIAD" walk --no-state --print0 "$T" 2>/dev/null | tr -cd '\0' | wc -c) || true
	[ "$got" = "$expect" ] || echo "   warning: myriad walk --print0 printed $got paths, bfs printed $expect"
	echo "   myriad walk says: $("$MYRIAD" walk --no-state "$T" 2>&1 | tail -n 1)" || true
fi



# ---------------------------------------------------------------------------------------------
if want warm; then
	section warm "count every entry, warm cache (one warm-up round first)"
	alternate -w "$RUNS" : \
		-- warm/myriad "$MYRIAD" walk --no-state "$T" \
		-- warm/bfs bfs "$T" -false \
		-- warm/fdfind fdfind -uu . "$T" \
		-- warm/find find "$T" -false
	report_medians warm/myriad warm/bfs warm/fdfind warm/find
	versus 2 warm/myriad warm/bfs warm/fdfind
	ratio warm/myriad warm/find
fi

if want print0; then
	section print0 "print every path NUL-terminated to /dev/null, warm cache"
	alternate -w "$RUNS" : \
		-- print0/myriad "$MYRIAD" walk --no-state --print0 "$T" \
		-- print0/bfs bfs "$T" -print0
	report_medians print0/myriad print0/bfs
	versus 1.5 print0/myriad print0/bfs
fi

if want stat; then
	section stat "stat every entry, warm cache"
	alternate -w "$RUNS" : \
		-- stat/myriad "$MYRIAD" walk --no-state --stat "$T" \
		-- stat/bfs bfs "$T" -size 0 \
		-- stat/find find "$T" -size 0
	report_medians stat/myriad stat/bfs stat/find
	versus 1.8 stat/myriad stat/bfs stat/find
fi

if want cold; then
	section cold "count every entry, caches dropped before every run"
	alternate -w "$RUNS" drop_caches \
		-- cold/myriad "$MYRIAD" walk --no-state "$T" \
		-- cold/bfs bfs "$T" -false \
		-- cold/fdfind fdfind -uu . "$T" \
		-- cold/find find "$T" -false
	report_medians cold/myriad cold/bfs cold/fdfind cold/find
	fastest="" best=""
	for p in cold/bfs cold/fdfind cold/find; do
		m=$(median_of "$p")
		if [ -z "$best" ] || awk -v m="$m" -v b="$best" 'BEGIN { exit !(m < b) }'; then best=$m fastest=$p; fi
	done
	for p in cold/bfs cold/fdfind cold/find; do ratio cold/myriad "$p"; done
	echo "fastest peer: $fastest"
	ratio cold/myriad "$fastest" >/dev/null
	bar_check "cold/myriad vs fastest peer ($fastest)" "$RATIO" ">=" 2 cold/myriad
fi

if want deep; then
	section deep "a chain $DEPTH directories deep (paths of $((2 * DEPTH)) bytes), warm cache"
	alternate -w "$RUNS" : \
		-- deep/myriad "$MYRIAD" walk --no-state "$MNT/deep" \
		-- deep/find find "$MNT/deep" -false \
		-- deep/bfs bfs "$MNT/deep" -false
	report_medians deep/myriad deep/find deep/bfs
	ratio deep/myriad deep/bfs
	versus 0.5 deep/myriad deep/find
fi

if want rss; then
	s=$(human "$SMALL") b=$(human "$BIG") f=$(human "$FLAT")
	section rss "peak RSS of myriad walk --no-state: $s files, $b files, $f files in one directory (bfs for reference)"
	alternate -w "$RUNS" : \
		-- "rss/myriad-$s" "$MYRIAD" walk --no-state "$MNT/rss-small" \
		-- "rss/myriad-$b" "$MYRIAD" walk --no-state "$MNT/rss-big" \
		-- "rss/myriad-flat$f" "$MYRIAD" walk --no-state "$MNT/rss-flat" \
		-- "rss/bfs-$b" bfs "$MNT/rss-big" -false \
		-- "rss/bfs-flat$f" bfs "$MNT/rss-flat" -false
	report_medians "rss/myriad-$s" "rss/myriad-$b" "rss/myriad-flat$f" "rss/bfs-$b" "rss/bfs-flat$f"
	rs=$(rss_median_of "rss/myriad-$s") rb=$(rss_median_of "rss/myriad-$b")
	growth=$(awk -v a="$rs" -v b="$rb" 'BEGIN { if (a <= 0) print "inf"; else printf "%.2f", b / a }')
	max=0
	for l in "rss/myriad-$s" "rss/myriad-$b" "rss/myriad-flat$f"; do
		m=$(max_rss_of "$l")
		[ "$m" -le "$max" ] || max=$m
	done
	echo "peak RSS $b / $s files: ${growth}x; largest peak RSS of any myriad run: $max KiB"
	bar_check "rss/myriad $b vs $s files (ratio)" "$growth" "<=" 1.25 "rss/myriad-$s" "rss/myriad-$b"
	bar_check "rss/myriad largest peak (KiB; 16 MiB)" "$max" "<" 16384 "rss/myriad-$s" "rss/myriad-$b" "rss/myriad-flat$f"
fi

bench_summary
