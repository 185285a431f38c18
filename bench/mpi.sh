#!/usr/bin/env bash
# bench/mpi.sh: the overhead of spreading a walk over MPI ranks (docs/mpi.md). On one warm tree,
# in alternation, R rounds each:
#   plain   build/myriad walk --stat --no-state -j 2T TREE               (one process, 2T threads)
#   mpi     mpirun -np 2 build/myriad-mpi walk --stat --no-state -j T TREE (2 ranks x T threads)
#   start   mpirun -np 2 true                                            (mpirun's launch)
#   null    mpirun -np 2 NULL    (a program that only calls MPI_Init_thread and MPI_Finalize:
#                                 MPI's whole start-up and shut-down, built here with mpicc)
# and prints the medians of wall seconds and of CPU seconds (user + system, children included: a
# figure that holds on a machine shared with other work, where wall time measures the share of the
# CPUs a job's threads win), and the ratios (median(mpi) - median(start)) / median(plain), start
# being either the launch alone or the null MPI job.
# With --ranks N,M,..., then runs the walk with N, M, ... ranks of -j 1 (oversubscribed) and prints,
# per rank count, the median time and the work requests and directories moved (MYRIAD_MPI_DEBUG).
#
#   bench/mpi.sh [--tree DIR | --files N] [--threads T] [--runs R] [--ranks LIST]
#
# --files N (default 1000000) makes the tree with build/mktree under /var/tmp (removed at exit);
# --tree DIR walks an existing one. Needs `make` and `make mpi`; runs as root too.
set -euo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TREE="" FILES=1000000 T=1 RUNS=5 RANKS=""
while [ $# -gt 0 ]; do
	case $1 in
	--tree) TREE=${2:?}; shift 2 ;;
	--files) FILES=${2:?}; shift 2 ;;
	--threads) T=${2:?}; shift 2 ;;
	--runs) RUNS=${2:?}; shift 2 ;;
	--ranks) RANKS=${2:?}; shift 2 ;;
	-h | --help) sed -n '2,14s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 0 ;;
	*) echo "mpi.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
MYRIAD=$TOP/build/myriad MPI=$TOP/build/myriad-mpi
[ -x "$MYRIAD" ] && [ -x "$MPI" ] || { echo "mpi.sh: run make and make mpi first" >&2; exit 2; }
MPIRUN=(mpirun --allow-run-as-root --oversubscribe)
W=$(mktemp -d /var/tmp/myriad-bench-mpi.XXXXXX) # the null MPI program, timings, the tree made here
trap 'rm -rf "$W"' EXIT
if [ -z "$TREE" ]; then
	TREE=$W/t
	"$TOP/build/mktree" "$TREE" --files "$FILES"
fi
NULL=$W/mpi-null
printf '#include <mpi.h>\nint main(int c, char **v) { int p; MPI_Init_thread(&c, &v, MPI_THREAD_FUNNELED, &p); return MPI_Finalize(); }\n' >"$W/null.c"
mpicc -O2 -o "$NULL" "$W/null.c" || { echo "mpi.sh: mpicc could not build the null MPI program" >&2; exit 2; }
export XDG_STATE_HOME=${TMPDIR:-/tmp}/myriad-bench-mpi-state

# secs CMD...: "WALL CPU" seconds of CMD.
secs() {
	local f
	f=$(mktemp)
	/usr/bin/time -f '%e %U %S' -o "$f" "$@" >/dev/null 2>&1 || true
	awk '{ print $1, $2 + $3 }' "$f"
	rm -f "$f"
}
median() { cut -d' ' -f"${1:-1}" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

"$MYRIAD" walk --stat --no-state "$TREE" >/dev/null 2>&1 # warm the cache
: >"$W/plain"; : >"$W/mpi"; : >"$W/start"; : >"$W/null"
for ((i = 0; i < RUNS; i++)); do
	secs "$MYRIAD" walk --stat --no-state -j $((2 * T)) "$TREE" >>"$W/plain"
	secs "${MPIRUN[@]}" -np 2 "$MPI" walk --stat --no-state -j "$T" "$TREE" >>"$W/mpi"
	secs "${MPIRUN[@]}" -np 2 true >>"$W/start"
	secs "${MPIRUN[@]}" -np 2 "$NULL" >>"$W/null"
done
for k in 1 2; do
	p=$(median $k <"$W/plain") m=$(median $k <"$W/mpi") s=$(median $k <"$W/start") z=$(median $k <"$W/null")
	what=$([ $k = 1 ] && echo wall || echo CPU)
	printf '%s, %d runs, medians of %s s: plain -j %d %.3f; mpirun -np 2 -j %d %.3f; mpirun -np 2 true %.3f; null MPI job %.3f; ' \
		"$TREE" "$RUNS" "$what" $((2 * T)) "$p" "$T" "$m" "$s" "$z"
	printf 'ratio (mpi - launch) / plain: %.2f; (mpi - null MPI job) / plain: %.2f\n' \
		"$(awk -v m="$m" -v s="$s" -v p="$p" 'BEGIN { print (m - s) / p }')" \
		"$(awk -v m="$m" -v s="$z" -v p="$p" 'BEGIN { print (m - s) / p }')"
done

for n in ${RANKS//,/ }; do
	: >/tmp/mpi-bench-n
	for ((i = 0; i < RUNS; i++)); do
		secs "${MPIRUN[@]}" -np "$n" "$MPI" walk -j 1 "$TREE" >>/tmp/mpi-bench-n
	done
	MYRIAD_MPI_DEBUG=1 "${MPIRUN[@]}" -np "$n" "$MPI" walk -j 1 "$TREE" 2>&1 >/dev/null |
		awk -v n="$n" -v t="$(median </tmp/mpi-bench-n)" '/directories received/ { r += $7; g += $10; q += $12; if ($5 > 0) w++ }
			END { printf "%d ranks: median %.3f s; %d requests, %d directories moved, %d ranks with work\n", n, t, q, g, w }'
	rm -f /tmp/mpi-bench-n
done
