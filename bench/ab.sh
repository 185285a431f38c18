#!/usr/bin/env bash
# bench/ab.sh: two myriad binaries, A (the baseline) and B (the change), timed in alternation on
# the same trees, to show that a change moved no figure it should not have (or by how much it did).
#
#   sudo bench/ab.sh --a OLD_BINARY [--b NEW_BINARY] [--files N] [--runs R] [--fs ext4|xfs|btrfs]
#                    [--only fill|walk|stat|verify|rm|copy]
#
# On one fresh loop-mounted filesystem: fill (N empty files, default threads), walk and walk --stat
# with a warm cache, verify --quick of a filled tree, rm of an N-file tree (remade untimed before
# every run), copy of an N/4-file tree of 4 KiB files into an empty DST (emptied untimed before
# every run). Each run is timed with its whole command (wall seconds); R rounds, the two binaries
# in rotation. Prints, per operation, the medians, min and max of A and B, the ratio
# median(B)/median(A) (above 1: B is slower) and A's own spread (max/min of its runs): a ratio
# inside that spread is noise on this machine. Exit status 0 when the bench ran.
#
# --b defaults to build/myriad (built with make). Both binaries are copied aside before timing.
# Needs root. Everything made is removed at exit.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
TOP=$BENCH_TOP

usage() {
	sed -n '2,18s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
	exit "${1:-2}"
}

A="" B="" FILES=200000 RUNS=5 FS=ext4 ONLY=""
while [ $# -gt 0 ]; do
	case $1 in
	--a) A=${2:?--a needs a binary}; shift 2 ;;
	--b) B=${2:?--b needs a binary}; shift 2 ;;
	--files) FILES=${2:?--files needs a number}; shift 2 ;;
	--runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
	--fs) FS=${2:?--fs needs ext4, xfs or btrfs}; shift 2 ;;
	--only) ONLY=${2:?--only needs an operation}; shift 2 ;;
	-h | --help) usage 0 ;;
	*) echo "ab.sh: unknown argument '$1'" >&2; usage 2 ;;
	esac
done
[ -n "$A" ] || { echo "ab.sh: --a OLD_BINARY is required" >&2; usage 2; }
case $FILES in '' | *[!0-9]*) bench_die "--files: '$FILES' is not a count" ;; esac
case $RUNS in '' | 0 | *[!0-9]*) bench_die "--runs: '$RUNS' is not a count of at least 1" ;; esac
case $ONLY in '' | fill | walk | stat | verify | rm | copy) ;; *) bench_die "--only: unknown operation '$ONLY'" ;; esac
if [ -z "$B" ]; then
	make -s -C "$TOP" build/myriad build/mktree >/dev/null || bench_die "make failed"
	B=$TOP/build/myriad
fi
make -s -C "$TOP" build/mktree >/dev/null || bench_die "make build/mktree failed"
MKTREE=$TOP/build/mktree
WORK=$_bench_tmp
cp "$A" "$WORK/A" && cp "$B" "$WORK/B" || bench_die "cannot copy the binaries"
"$WORK/A" --version >/dev/null && "$WORK/B" --version >/dev/null || bench_die "a binary does not run"

MNT=$WORK/mnt
bench_image "$FS" "$((FILES / 1000 * 40 + 4096))M" "$MNT"
want() { [ -z "$ONLY" ] || [ "$ONLY" = "$1" ]; }
ops=()

# ab NAME PREP CMD-ARGS...: alternate "A CMD-ARGS" and "B CMD-ARGS" (myriad subcommand and options,
# with @X@ standing for the binary's letter where each needs its own path).
ab() {
	local name=$1 prep=$2 a=() b=() w
	shift 2
	for w in "$@"; do a+=("${w//@X@/A}"); b+=("${w//@X@/B}"); done
	alternate "$RUNS" "$prep" -- "$name/A" "$WORK/A" "${a[@]}" -- "$name/B" "$WORK/B" "${b[@]}"
	ops+=("$name")
}

if want fill; then
	# Each binary fills its own directory; the one left by its previous run goes untimed first.
	ab fill 'rm -rf "$MNT"/fill.*; sync' fill --no-state --progress 0 -n "$FILES" "$MNT/fill.@X@"
	rm -rf "$MNT"/fill.*
fi
if want walk || want stat || want verify; then
	"$WORK/B" fill --no-state --progress 0 -n "$FILES" "$MNT/tree" >/dev/null
	want walk && ab walk : walk --no-state --progress 0 "$MNT/tree"
	want stat && ab stat : walk --no-state --progress 0 --stat "$MNT/tree"
	want verify && ab verify : verify --no-state --progress 0 --quick "$MNT/tree"
	rm -rf "$MNT/tree"
fi
if want rm; then
	ab rm '"$MKTREE" "$MNT/rmtree" --files "$FILES" >/dev/null; sync' rm --no-state --progress 0 "$MNT/rmtree"
fi
if want copy; then
	"$MKTREE" "$MNT/src" --files "$((FILES / 4))" --size 4096 >/dev/null
	ab copy 'rm -rf "$MNT/dst"; sync' copy --no-state --progress 0 "$MNT/src" "$MNT/dst"
	rm -rf "$MNT/src" "$MNT/dst"
fi

echo "== A: $A ($("$WORK/A" --version | head -n 1))"
echo "== B: $B ($("$WORK/B" --version | head -n 1))"
echo "== $FILES files on $FS, $RUNS rounds"
report_medians
echo
printf '%-8s %12s %12s %10s %12s\n' OP 'median A s' 'median B s' 'B/A' "A's spread"
for op in "${ops[@]}"; do
	ma=$(median_of "$op/A") mb=$(median_of "$op/B")
	spread=$(_bench_stats "${_bench_times[$op/A]}" | awk '{ printf "%.2f", ($3 > 0 ? $4 / $3 : 0) }')
	printf '%-8s %12.4f %12.4f %10.2f %12s\n' "$op" "$ma" "$mb" "$(awk -v a="$ma" -v b="$mb" 'BEGIN { printf "%.2f", (a > 0 ? b / a : 0) }')" "$spread"
	bar_check "$op: median(B)/median(A)" "$(awk -v a="$ma" -v b="$mb" 'BEGIN { printf "%.2f", (a > 0 ? b / a : 0) }')" "<=" "$spread" "$op/A" "$op/B"
done
bench_summary
