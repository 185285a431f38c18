# Memory per rank does not grow with the tree under mpirun (2 ranks of -j 2, in a tmpfs of its own,
# the working directory deep inside it): every rank's peak RSS for walk --stat -o, copy and rm of
# the copy of 200k files is within 1.25x of the same for 20k files (no rank, rank 0 included, holds
# a list of entries: -o's parts and copy's second pass stream), and walk --stat of 200k files in
# one directory (read in slices by both ranks) within 1.25x of 20k in one directory.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_mpi.sh"
[ -x /usr/bin/time ] || { skip "GNU time is not installed (scripts/deps installs it)"; exit 0; }
if ! sandbox 1g 2>"$S/sandbox.err"; then
	skip "memory across ranks: $(cat "$S/sandbox.err")"
	exit 0
fi
D=$SANDBOX/m
mkdir -p "$D"
# rank_rss ARGS...: myriad-mpi ARGS under mpirun -np 2, each rank under GNU time writing a file of
# its own (their stderr lines interleave); the largest peak RSS (KiB) of the ranks (empty when a
# rank's was not reported).
rank_rss() {
	rm -f "$S"/rss.*
	timeout 300 mpirun --allow-run-as-root --oversubscribe -np 2 \
		sh -c 'exec /usr/bin/time -f "%M" -o "$0.$OMPI_COMM_WORLD_RANK" "$@"' "$S/rss" "$MPI" "$@" >/dev/null 2>&1
	cat "$S"/rss.* 2>/dev/null | awk '/^[0-9]+$/ { n++; if ($1 > m) m = $1 } END { if (n == 2) print m }'
}
"$MKTREE" "$D/small" --files 20000 --fanout 1000 >/dev/null
"$MKTREE" "$D/large" --files 200000 --fanout 1000 >/dev/null
"$MKTREE" "$D/flat1" --flat --files 20000 >/dev/null
"$MKTREE" "$D/flat2" --flat --files 200000 >/dev/null
within() { # LABEL SMALL LARGE
	if [ -z "$2" ] || [ -z "$3" ]; then
		fail "$1: a rank's peak RSS was not reported ($2, $3)"
	elif [ "$3" -le $(($2 * 125 / 100)) ]; then
		ok "$1: $3 KiB, within 1.25x of $2 KiB"
	else
		fail "$1: $3 KiB > 1.25 x $2 KiB"
	fi
}
declare -A walk copy rm
for t in small large flat1 flat2; do
	walk[$t]=$(rank_rss walk --no-state -j 2 --stat -o "$D/$t.out" "$D/$t")
	rm -f "$D/$t.out"
done
for t in small large; do
	copy[$t]=$(rank_rss copy --no-state -j 2 "$D/$t" "$D/$t.copy")
	rm[$t]=$(rank_rss rm --no-state -j 2 "$D/$t.copy")
	[ -e "$D/$t.copy" ] && fail "rm across ranks left $t.copy"
done
within "np 2 walk --stat -o: 200k files against 20k, largest rank" "${walk[small]}" "${walk[large]}"
within "np 2 walk --stat -o: 200k files in one directory against 20k, largest rank" "${walk[flat1]}" "${walk[flat2]}"
within "np 2 copy: 200k files against 20k, largest rank" "${copy[small]}" "${copy[large]}"
within "np 2 rm: 200k files against 20k, largest rank" "${rm[small]}" "${rm[large]}"
