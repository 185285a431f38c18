# walk stops on SIGINT/SIGTERM within a second with state saved (exit 3); a walk killed with -9 at
# random moments and re-run ends with exactly the totals of an uninterrupted walk, and --output
# holds every path exactly once. A second run on the same state is refused.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
export XDG_STATE_HOME=$S/state
T=$S/tree
"$MKTREE" "$T/a" --files 150000 --fanout 100
"$MKTREE" "$T/flat" --flat --files 30000
"$MKTREE" "$T/dirs" --dirs-only --files 6000 --fanout 6000
make_hostile_tree "$T/h"

"$MYRIAD" walk --no-state --stat --json "$S/base.json" "$T" >/dev/null 2>&1
base=$(walk_counts "$S/base.json")
base_bytes=$(json_num "$S/base.json" apparent_bytes)
find "$T" -print0 | sort -z | md5sum >"$S/base.md5"

# SIGINT: exit 3 within a second, state kept, the same command finishes the job exactly.
for sig in INT TERM; do
	rm -f "$S/out"
	"$MYRIAD" walk --rate 60k --stat --json "$S/s.json" -o "$S/out" --print0 "$T" >/dev/null 2>"$S/err" &
	pid=$!
	sleep 1.2
	t0=$(date +%s%N)
	kill -$sig $pid
	wait $pid
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	expect_eq "SIG$sig: exit 3" 3 $rc
	[ $ms -lt 1000 ] && ok "SIG$sig: stopped within a second ($ms ms)" || fail "SIG$sig: took $ms ms"
	grep -q "resume" "$S/err" && ok "SIG$sig: says how to resume" || fail "SIG$sig: message: $(cat "$S/err")"
	[ -n "$(ls "$S/state/myriad")" ] && ok "SIG$sig: state saved" || fail "SIG$sig: no state"
	"$MYRIAD" walk --stat --json "$S/s.json" -o "$S/out" --print0 "$T" >/dev/null 2>&1
	expect_eq "SIG$sig: resumed run exits 0" 0 $?
	expect_eq "SIG$sig: resumed totals equal an uninterrupted walk's" "$base $base_bytes" \
		"$(walk_counts "$S/s.json") $(json_num "$S/s.json" apparent_bytes)"
	expect_eq "SIG$sig: --output holds each path exactly once" "$(cat "$S/base.md5")" "$(sort -z "$S/out" | md5sum)"
	expect_eq "SIG$sig: the summary counts the sessions" 2 "$(json_num "$S/s.json" sessions)"
	expect_eq "SIG$sig: state removed after the resumed run finished" "" "$(ls "$S/state/myriad")"
done

# kill -9 at random moments, resumed each time, with a short checkpoint interval.
rm -f "$S/out"
kills=0
for i in $(seq 8); do
	# Killed at a random moment after this session's first checkpoint: a kill before it would leave
	# no trace of the session (on a loaded machine, start-up alone can outlast a short sleep).
	kill9_after_checkpoint "$S/state" 6 "$MYRIAD" walk --rate 40k --checkpoint-interval 0.05 --stat \
		--json "$S/k.json" -o "$S/out" --print0 "$T"
	count_kill $?
done
"$MYRIAD" walk --stat --json "$S/k.json" -o "$S/out" --print0 "$T" >/dev/null 2>&1
expect_eq "kill -9 x$kills: final run exits 0" 0 $?
expect_eq "kill -9: totals equal an uninterrupted walk's" "$base $base_bytes" \
	"$(walk_counts "$S/k.json") $(json_num "$S/k.json" apparent_bytes)"
expect_eq "kill -9: --output holds each path exactly once" "$(cat "$S/base.md5")" "$(sort -z "$S/out" | md5sum)"
sess=$(json_num "$S/k.json" sessions)
expect_eq "kill -9: every killed run was resumed (sessions = kills + 1)" $((kills + 1)) "$sess"

# A resumed session killed before its first checkpoint interval still counts as a session.
"$MYRIAD" walk --rate 20k --stat --json "$S/c.json" "$T" >/dev/null 2>&1 &
pid=$!
sleep 0.5
kill -INT $pid
wait $pid
"$MYRIAD" walk --rate 20k --checkpoint-interval 100 --stat --json "$S/c.json" "$T" >/dev/null 2>&1 &
pid=$!
sleep 0.5
kill -9 $pid
wait $pid 2>/dev/null
"$MYRIAD" walk --stat --json "$S/c.json" "$T" >/dev/null 2>&1
expect_eq "a resumed session killed before its first checkpoint is counted (3 sessions)" 3 \
	"$(json_num "$S/c.json" sessions)"

# A second run on the same state is refused while the first runs.
"$MYRIAD" walk --rate 20k "$T" >/dev/null 2>&1 &
pid=$!
sleep 0.5
"$MYRIAD" walk --rate 20k "$T" >/dev/null 2>"$S/err"
expect_eq "second run on the same state: exit 2" 2 $?
grep -q "in use" "$S/err" && ok "second run: says the state is in use" || fail "message: $(cat "$S/err")"
kill -INT $pid
wait $pid
# Different options make a different job, with its own state.
"$MYRIAD" walk --stat "$T" >/dev/null 2>&1
expect_eq "a walk with other options does not take the stopped walk's state" 1 "$(ls "$S/state/myriad" | wc -l)"
"$MYRIAD" walk "$T" >/dev/null 2>&1
expect_eq "the stopped walk then resumes and finishes" "" "$(ls "$S/state/myriad")"

# A corrupt snapshot is refused with a clear message, not silently used.
"$MYRIAD" walk --rate 20k --state "$S/st" "$T" >/dev/null 2>&1 &
pid=$!
sleep 0.5
kill -INT $pid
wait $pid
printf 'garbage' | dd of="$S/st/snapshot" bs=1 seek=20 conv=notrunc 2>/dev/null
"$MYRIAD" walk --state "$S/st" "$T" >/dev/null 2>"$S/err"
expect_eq "corrupt snapshot: exit 2" 2 $?
grep -q "checksum" "$S/err" && ok "corrupt snapshot: says it is corrupt" || fail "message: $(cat "$S/err")"

# A relative --output (a file that only the first run creates) is the same job on resume.
(cd "$S" && exec "$MYRIAD" walk --rate 60k --json rel.json -o rel.out --print0 tree) >/dev/null 2>&1 &
pid=$!
sleep 1
kill -INT $pid
wait $pid
expect_eq "relative --output: SIGINT gives exit 3" 3 $?
(cd "$S" && "$MYRIAD" walk --json rel.json -o rel.out --print0 tree) >/dev/null 2>&1
expect_eq "relative --output: the same command exits 0" 0 $?
expect_eq "relative --output: it resumed the stopped walk (2 sessions)" 2 "$(json_num "$S/rel.json" sessions)"
expect_eq "relative --output: each path exactly once" "$(cd "$S" && find tree -print0 | sort -z | md5sum)" \
	"$(sort -z "$S/rel.out" | md5sum)"
expect_eq "relative --output: no state left behind" "" "$(ls "$S/state/myriad")"
