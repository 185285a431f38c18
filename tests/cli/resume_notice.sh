# A resume is never silent: walk, fill, copy, rm and verify stopped by SIGINT and run again say on
# stderr, before any work, which run they resume (its command line), and how to start over
# (--fresh). --fresh discards the state and starts from zero. walk streaming paths to standard
# output keeps no state, so a re-run prints every path (an interrupted `walk --print` re-run used to
# print only what was left, and exit 0). Runs in a sandbox: rm and copy write and remove.
. "$(dirname "$0")/../lib.sh"
if ! sandbox 1g; then
	skip "every case: no sandbox (needs root for a tmpfs of its own)"
	exit 0
fi
W=$PWD
export XDG_STATE_HOME=$SANDBOX/state
STATES=$XDG_STATE_HOME/myriad
"$MKTREE" "$W/t" --files 20000 --fanout 100 >/dev/null
total=$(find "$W/t" | wc -l)

# interrupt CMD...: run CMD, SIGINT it after a second; its exit status.
interrupt() {
	"$@" --progress 0 >/dev/null 2>"$W/err" &
	local pid=$!
	sleep 1
	kill -INT $pid
	wait $pid
}

# notice NAME CMDLINE CMD...: CMD resumes the run of CMDLINE and says so first, with --fresh.
notice() {
	local name=$1 line=$2
	shift 2
	"$@" --progress 0 >/dev/null 2>"$W/err2"
	local rc=$?
	local first
	first=$(head -n 1 "$W/err2")
	case $first in
	*"resuming the earlier run of this job: '$line'"*started*"last snapshot"*) ok "$name: the first line names the run resumed" ;;
	*) fail "$name: first line of stderr: [$first]" ;;
	esac
	grep -q -- "--fresh" "$W/err2" && ok "$name: says how to start over (--fresh)" || fail "$name: stderr: $(cat "$W/err2")"
	expect_eq "$name: the resumed run finishes" 0 $rc
}

interrupt "$MYRIAD" walk --rate 5k "$W/t"
expect_eq "walk: stopped by SIGINT, state kept" 3 $?
notice "walk" "myriad walk --rate 5k --progress 0 $W/t" "$MYRIAD" walk --json "$W/w.json" "$W/t"
expect_eq "walk: the resumed run counts every entry, in 2 sessions" "$total 2" \
	"$(json_num "$W/w.json" entries) $(json_num "$W/w.json" sessions)"

interrupt "$MYRIAD" fill -n 20000 --rate 5k "$W/f"
expect_eq "fill: stopped by SIGINT, state kept" 3 $?
notice "fill" "myriad fill -n 20000 --rate 5k --progress 0 $W/f" "$MYRIAD" fill -n 20000 "$W/f"

interrupt "$MYRIAD" copy --rate 5k "$W/t" "$W/c"
expect_eq "copy: stopped by SIGINT, state kept" 3 $?
notice "copy" "myriad copy --rate 5k --progress 0 $W/t $W/c" "$MYRIAD" copy "$W/t" "$W/c"
expect_eq "copy: the resumed copy is whole" "$total" "$(find "$W/c" | wc -l)"

interrupt "$MYRIAD" rm --rate 5k "$W/c"
expect_eq "rm: stopped by SIGINT, state kept" 3 $?
notice "rm" "myriad rm --rate 5k --progress 0 $W/c" "$MYRIAD" rm "$W/c"
[ ! -e "$W/c" ] && ok "rm: the resumed rm removed the tree" || fail "rm: $W/c is still there"

# verify has no --rate: one thread on 150,000 files, frozen (SIGSTOP) as soon as its first snapshot
# is saved, then sent SIGINT and let go; it stops at once.
"$MYRIAD" fill -n 150000 -s 0 "$W/v" >/dev/null 2>&1
"$MYRIAD" verify -j 1 --checkpoint-interval 0.05 --progress 0 "$W/v" >/dev/null 2>"$W/err" &
pid=$!
for _ in $(seq 1000); do
	compgen -G "$STATES/verify-*/snapshot" >/dev/null && break
	sleep 0.005
done
kill -STOP $pid
kill -INT $pid
kill -CONT $pid
wait $pid
expect_eq "verify: stopped by SIGINT, state kept" 3 $?
notice "verify" "myriad verify -j 1 --checkpoint-interval 0.05 --progress 0 $W/v" "$MYRIAD" verify "$W/v"
expect_eq "every resumed job removed its state at the end" "" "$(ls -A "$STATES")"

# --fresh: the state is discarded, saying so, and the run counts from zero (one session).
interrupt "$MYRIAD" walk --rate 5k "$W/t"
"$MYRIAD" walk --fresh --json "$W/w.json" --progress 0 "$W/t" >/dev/null 2>"$W/err2"
expect_eq "walk --fresh: finishes" 0 $?
grep -q "fresh: discarding the earlier run's state: 'myriad walk --rate 5k" "$W/err2" &&
	ok "walk --fresh: says which run's state it discards" || fail "walk --fresh: stderr: $(cat "$W/err2")"
! grep -q "resuming" "$W/err2" && ok "walk --fresh: does not resume" || fail "walk --fresh: stderr: $(cat "$W/err2")"
expect_eq "walk --fresh: counts from zero: all entries in 1 session" "$total 1" \
	"$(json_num "$W/w.json" entries) $(json_num "$W/w.json" sessions)"
expect_eq "walk --fresh: the state is gone at the end" "" "$(ls -A "$STATES")"
"$MYRIAD" walk --fresh --no-state "$W/t" >/dev/null 2>"$W/err2"
expect_eq "--fresh with --no-state: a usage error" 2 $?

cp -a "$W/t" "$W/r"
interrupt "$MYRIAD" rm --rate 5k "$W/r"
"$MYRIAD" rm --fresh --progress 0 "$W/r" >/dev/null 2>"$W/err2"
expect_eq "rm --fresh: starts over and finishes" 0 $?
grep -q "fresh: discarding" "$W/err2" && [ ! -e "$W/r" ] && ok "rm --fresh: says so, the tree is removed" ||
	fail "rm --fresh: stderr: $(cat "$W/err2"), left: $(ls "$W/r" 2>&1 | head -3)"

# walk --print to standard output: no state is kept, a re-run prints every path.
"$MYRIAD" walk --print --rate 5k --progress 0 "$W/t" >"$W/p1" 2>"$W/err" &
pid=$!
sleep 1
kill -INT $pid
wait $pid
expect_eq "walk --print interrupted: exit 3" 3 $?
grep -q "no state was kept: paths streamed to standard output cannot be resumed exactly" "$W/err" &&
	ok "walk --print interrupted: says no state was kept, and why" || fail "walk --print: stderr: $(cat "$W/err")"
expect_eq "walk --print interrupted: no state left behind" "" "$(ls -A "$STATES")"
n=$("$MYRIAD" walk --print --progress 0 "$W/t" 2>"$W/err2" | wc -l)
expect_eq "walk --print re-run: every entry printed (not only those left)" "$total" "$n"
! grep -q "resuming" "$W/err2" && ok "walk --print re-run: starts over" || fail "walk --print re-run: $(cat "$W/err2")"
"$MYRIAD" walk --print --state "$W/st" "$W/t" >/dev/null 2>"$W/err2"
expect_eq "walk --print --state: refused (nothing to resume exactly)" "2 no" \
	"$? $([ -e "$W/st" ] && echo yes || echo no)"
# -o FILE stays resumable, each path exactly once.
interrupt "$MYRIAD" walk --rate 5k -o "$W/out" "$W/t"
expect_eq "walk -o FILE interrupted: state kept" "3 1" "$? $(ls "$STATES" | wc -l)"
"$MYRIAD" walk -o "$W/out" --progress 0 "$W/t" >/dev/null 2>"$W/err2"
grep -q "resuming" "$W/err2" && ok "walk -o FILE re-run: resumes, saying so" || fail "walk -o: stderr: $(cat "$W/err2")"
expect_eq "walk -o FILE: each path exactly once across the resume" "$(find "$W/t" | sort | md5sum)" \
	"$(sort "$W/out" | md5sum)"
