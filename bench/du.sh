#!/usr/bin/env bash
# bench/du.sh: `myriad du` against GNU du and gdu on the same tree.
#
#   sudo bench/du.sh [--files N] [--runs R] [--fs ext4|xfs|btrfs] [--keep] [--only warm|cold|all|rss]
#
# Makes a sparse loop-mounted image in /var/tmp, fills it with build/mktree (N files of 100 bytes
# in directories of 1000 entries, a hard link to every 100th file in another directory), checks
# that the three agree on the totals, and times them in alternation, R rounds, one section at a time:
#   warm    allocated bytes of the tree, warm cache: myriad du -s | du -s -B1 | gdu -n -p -s
#   cold    the same, caches dropped before every run (one untimed round first)
#   all     a line per directory, warm:              myriad du -B1 | du -B1
#   rss     peak RSS of myriad du -s and gdu on N/10 and 2N files (fanout 1000)
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

FILES=1000000 RUNS=5 FS=ext4 ONLY=""
while [ $# -gt 0 ]; do
	case $1 in
	--files) FILES=${2:?--files needs a number}; shift 2 ;;
	--runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
	--fs) FS=${2:?--fs needs ext4, xfs or btrfs}; shift 2 ;;
	--keep) BENCH_KEEP=1; shift ;;
	--only) ONLY=${2:?--only needs a section}; shift 2 ;;
	-h | --help) usage 0 ;;
	*) echo "du.sh: unknown argument '$1'" >&2; usage 2 ;;
	esac
done
case $FILES in '' | *[!0-9]*) echo "du.sh: --files: not a number: $FILES" >&2; exit 2 ;; esac
case $RUNS in '' | *[!0-9]* | 0) echo "du.sh: --runs: not a positive number: $RUNS" >&2; exit 2 ;; esac
case $FS in ext4 | xfs | btrfs) ;; *) echo "du.sh: --fs: ext4, xfs or btrfs, not $FS" >&2; exit 2 ;; esac
case $ONLY in '' | warm | cold | all | rss) ;; *) echo "du.sh: --only: warm, cold, all or rss, not $ONLY" >&2; exit 2 ;; esac
[ "$FILES" -ge 10 ] || { echo "du.sh: --files must be at least 10" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "du.sh: needs root (loop mounts, drop_caches): sudo $0 $*" >&2; exit 2; }

want() { [ -z "$ONLY" ] || [ "$ONLY" = "$1" ]; }

# ---------------------------------------------------------------------------------------------
# Tools.
need_pkgs gdu coreutils time make gcc libc6-dev
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
SMALL=$((FILES / 10)) BIG=$((FILES * 2))
total=0
if want warm || want cold || want all; then total=$((total + FILES)); fi
if want rss; then total=$((total + SMALL + BIG)); fi
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
# Hard links: every 100th file gets a second name in the directory listed last-but-one.
add_links() {
	find "$1" -type f | awk 'NR % 100 == 0' >"$_bench_tmp/files"
	paste -d' ' "$_bench_tmp/files" <(tac "$_bench_tmp/files") | while read -r a b; do ln "$a" "$b.ln"; done
	bench_log "added $(wc -l <"$_bench_tmp/files") hard links in $1"
}
T=$MNT/tree
if want warm || want cold || want all; then
	mktree "$(human "$FILES") files, fanout 1000" "$T" --files "$FILES" --fanout 1000 --size 100
	add_links "$T"
fi
if want rss; then
	mktree "$(human "$SMALL") files" "$MNT/rss-small" --files "$SMALL" --fanout 1000
	mktree "$(human "$BIG") files" "$MNT/rss-big" --files "$BIG" --fanout 1000
fi
sync

echo "== myriad du bench: $FS, $(human "$FILES") files, $RUNS rounds, $(nproc) CPUs, $(uname -r)"
echo "   myriad: $MYRIAD"
echo "   peers:  $(du --version | head -n 1); gdu $(gdu --version 2>/dev/null | awk '/Version/ { print $2 }')"

# Sanity: the three agree on the tree (informational; the timings stand regardless).
if want warm || want cold || want all; then
	for u in --inodes -b -B1; do
		echo "   du -s $u: myriad $("$MYRIAD" du --no-state -s $u "$T" | cut -f1), GNU du $(du -s $u "$T" | cut -f1)"
	done
	echo "   gdu -s (allocated): $(gdu -n -p -s --no-prefix "$T" 2>/dev/null | awk '{ print $1 }')"
	mine=$("$MYRIAD" du --no-state "$T" | sort -k2 | md5sum) theirs=$(du -B1 "$T" | sort -k2 | md5sum)
	[ "$mine" = "$theirs" ] && echo "   every directory's line equals du -B1's" ||
		echo "   warning: lines differ from du -B1's (a hard link spanning directories is charged where met first)"
fi


# ---------------------------------------------------------------------------------------------
if want warm; then
	section warm "allocated bytes of the tree, warm cache (one warm-up round first)"
	alternate -w "$RUNS" : \
		-- warm/myriad "$MYRIAD" du --no-state -s "$T" \
		-- warm/du du -s -B1 "$T" \
		-- warm/gdu gdu -n -p -s --no-prefix "$T"
	report_medians warm/myriad warm/du warm/gdu
	ratio warm/myriad warm/du
	ratio warm/myriad warm/gdu
fi

if want cold; then
	section cold "allocated bytes of the tree, caches dropped before every run"
	alternate -w "$RUNS" drop_caches \
		-- cold/myriad "$MYRIAD" du --no-state -s "$T" \
		-- cold/du du -s -B1 "$T" \
		-- cold/gdu gdu -n -p -s --no-prefix "$T"
	report_medians cold/myriad cold/du cold/gdu
	versus 2 cold/myriad cold/du
	versus 1.5 cold/myriad cold/gdu
fi

if want all; then
	section all "a line per directory, warm cache"
	alternate -w "$RUNS" : \
		-- all/myriad "$MYRIAD" du --no-state "$T" \
		-- all/du du -B1 "$T"
	report_medians all/myriad all/du
	ratio all/myriad all/du
fi

if want rss; then
	s=$(human "$SMALL") b=$(human "$BIG")
	section rss "peak RSS of myriad du -s --no-state on $s and $b files (gdu and du for reference)"
	alternate "$RUNS" : \
		-- "rss/myriad-$s" "$MYRIAD" du --no-state -s "$MNT/rss-small" \
		-- "rss/myriad-$b" "$MYRIAD" du --no-state -s "$MNT/rss-big" \
		-- "rss/gdu-$s" gdu -n -p -s "$MNT/rss-small" \
		-- "rss/gdu-$b" gdu -n -p -s "$MNT/rss-big" \
		-- "rss/du-$b" du -s "$MNT/rss-big"
	report_medians "rss/myriad-$s" "rss/myriad-$b" "rss/gdu-$s" "rss/gdu-$b" "rss/du-$b"
	rs=$(rss_median_of "rss/myriad-$s") rb=$(rss_median_of "rss/myriad-$b")
	growth=$(awk -v a="$rs" -v b="$rb" 'BEGIN { if (a <= 0) print "inf"; else printf "%.2f", b / a }')
	echo "peak RSS of myriad du, $b / $s files: ${growth}x"
	bar_check "rss/myriad du $b vs $s files (ratio)" "$growth" "<=" 1.25 "rss/myriad-$s" "rss/myriad-$b"
fi

bench_summary
