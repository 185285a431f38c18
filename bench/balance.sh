#!/usr/bin/env bash
# bench/balance.sh: is the work spread when every operation waits (a network filesystem)?
#
#   sudo bench/balance.sh [--runs R] [--delay MS] [--no-mpi]
#
# Mounts tests/faultfs over a backing directory in /var/tmp with every operation delayed by MS
# milliseconds (default 1: a network round trip) and times `walk --stat` there, in alternation,
# R rounds (default 3):
#   one     one directory of 4,500 files:              -j 1 against -j 8 (one process)
#   skew    a skewed tree, 90% of its 10,000 files under one subdirectory (90 directories of 100),
#           the rest in 10 directories of 100 beside it: -j 1 against -j 8
#   mpi     the same two trees with mpirun: -np 1 -j 1 against -np 8 -j 1 (oversubscribed), when
#           build/myriad-mpi is there (`make mpi`) and --no-mpi is not given; mpirun's own start-up
#           (`mpirun -np 8 true`) is timed beside it and the ratio without it printed too
# Bars (issue 16): skew 8 workers >= 6x one worker; one directory >= 4x; the same across ranks.
# Prints tables of medians and ratios and a summary of the bars. Exit status 0 when it ran.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
TOP=$BENCH_TOP
RUNS=3 DELAY=1 MPI=1
while [ $# -gt 0 ]; do
	case $1 in
	--runs) RUNS=${2:?}; shift 2 ;;
	--delay) DELAY=${2:?}; shift 2 ;;
	--no-mpi) MPI=0; shift ;;
	-h | --help) sed -n '2,17s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 0 ;;
	*) echo "balance.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || bench_die "needs root (faultfs mounts with allow_other)"
[ -e /dev/fuse ] || bench_die "no /dev/fuse"
need_pkgs fuse3 libfuse3-dev
make -C "$TOP" -s build/myriad build/faultfs
MYRIAD=$TOP/build/myriad MYRIAD_MPI=$TOP/build/myriad-mpi FAULTFS=$TOP/build/faultfs
if [ "$MPI" = 1 ] && [ ! -x "$MYRIAD_MPI" ]; then
	bench_log "no build/myriad-mpi (make mpi): the mpi section is left out"
	MPI=0
fi

W=$(mktemp -d /var/tmp/myriad-bench-balance.XXXXXX)
bench_on_exit "rm -rf '$W'"
mkdir -p "$W/b/one" "$W/m"
(cd "$W/b/one" && seq -f 'f%.0f' 1 4500 | xargs touch)
for d in $(seq 1 90); do mkdir -p "$W/b/skew/big/d$d"; (cd "$W/b/skew/big/d$d" && seq -f 'f%.0f' 1 100 | xargs touch); done
for d in $(seq 1 10); do mkdir -p "$W/b/skew/d$d"; (cd "$W/b/skew/d$d" && seq -f 'f%.0f' 1 100 | xargs touch); done
"$FAULTFS" --rule "all:*:delay=$DELAY" "$W/b" "$W/m"
bench_on_exit "fusermount3 -u '$W/m' || umount -l '$W/m'"
export XDG_STATE_HOME=$W/state

MPIRUN=(mpirun --allow-run-as-root --oversubscribe)
for tree in one skew; do
	section "$tree" "walk --stat on faultfs, every operation delayed ${DELAY} ms ($(find "$W/b/$tree" | wc -l) entries)"
	alternate "$RUNS" : -- "$tree-j1" "$MYRIAD" walk --stat --no-state -j 1 "$W/m/$tree" \
		-- "$tree-j8" "$MYRIAD" walk --stat --no-state -j 8 "$W/m/$tree"
	report_medians "$tree-j1" "$tree-j8"
	versus "$([ $tree = one ] && echo 4 || echo 6)" "$tree-j8" "$tree-j1"
	if [ "$MPI" = 1 ]; then
		alternate "$RUNS" : -- "$tree-np1" "${MPIRUN[@]}" -np 1 "$MYRIAD_MPI" walk --stat -j 1 "$W/m/$tree" \
			-- "$tree-np8" "${MPIRUN[@]}" -np 8 "$MYRIAD_MPI" walk --stat -j 1 "$W/m/$tree"
		alternate "$RUNS" : -- start-np8 "${MPIRUN[@]}" -np 8 true
		report_medians "$tree-np1" "$tree-np8" start-np8
		versus "$([ $tree = one ] && echo 4 || echo 6)" "$tree-np8" "$tree-np1"
		awk -v a="$(median_of "$tree-np1")" -v b="$(median_of "$tree-np8")" -v s="$(median_of start-np8)" \
			'BEGIN { printf "with mpirun -np 8 true (%.2f s) taken off np8: %.2fx\n", s, a / (b - s) }'
	fi
done
bench_summary
