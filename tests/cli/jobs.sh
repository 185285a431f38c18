# myriad jobs: lists the states stopped runs left (id, command line, started, last snapshot, size,
# running), with --json; removes them by id or by age (--older-than), never one a running job
# holds, never a directory without myriad's marker; --state DIR looks elsewhere. Runs in a sandbox:
# it removes directories.
. "$(dirname "$0")/../lib.sh"
if ! sandbox; then
	skip "every case: no sandbox (needs root for a tmpfs of its own)"
	exit 0
fi
W=$PWD
export XDG_STATE_HOME=$SANDBOX/state
STATES=$XDG_STATE_HOME/myriad
"$MKTREE" "$W/t1" --files 20000 --fanout 100 >/dev/null
"$MKTREE" "$W/t2" --files 20000 --fanout 100 >/dev/null

# stop CMD...: run CMD and SIGINT it after a second (its state stays).
stop() {
	"$@" --progress 0 >/dev/null 2>&1 &
	local pid=$!
	sleep 1
	kill -INT $pid
	wait $pid
}
# id_of TEXT: the ID of the listed job whose command line contains TEXT.
id_of() { "$MYRIAD" jobs 2>/dev/null | grep -F -- "$1" | awk '{print $1}'; }

stop "$MYRIAD" walk --rate 5k "$W/t1"
stop "$MYRIAD" walk --stat --rate 5k "$W/t2"
"$MYRIAD" jobs >"$W/list" 2>"$W/err"
expect_eq "jobs: exit 0" 0 $?
grep -qF "myriad walk --rate 5k --progress 0 $W/t1" "$W/list" &&
	grep -qF "myriad walk --stat --rate 5k --progress 0 $W/t2" "$W/list" &&
	ok "jobs: lists both stopped jobs with their command lines" || fail "jobs: listing: $(cat "$W/list" "$W/err")"
grep -q "at the last snapshot: walk: [0-9,]* entries" "$W/list" && ok "jobs: shows how far each got" ||
	fail "jobs: no progress: $(cat "$W/list")"
id1=$(id_of "$W/t1")
id2=$(id_of "$W/t2")
[ -n "$id1" ] && [ -d "$STATES/$id1" ] && [ -d "$STATES/$id2" ] && ok "jobs: the ID is the state directory's name" ||
	fail "jobs: ids [$id1] [$id2], states: $(ls "$STATES")"

"$MYRIAD" jobs --json "$W/j" 2>/dev/null
python3 - "$W/j" "$W/t1" "$id1" <<'EOF' && ok "jobs --json: each job's fields" || fail "jobs --json: $(cat "$W/j")"
import json, sys
d = json.load(open(sys.argv[1]))
j = {x["id"]: x for x in d["jobs"]}[sys.argv[3]]
assert len(d["jobs"]) == 2, d
assert j["command"].endswith(sys.argv[2]), j
assert j["running"] is False and j["pid"] is None, j
assert j["started"] > 1e9 and j["last_snapshot"] >= j["started"], j
assert j["disk_bytes"] > 0 and j["snapshot_bytes"] > 0 and "entries" in j["progress"], j
EOF

"$MYRIAD" jobs rm "$id1" >"$W/out" 2>&1
expect_eq "jobs rm ID: exit 0" 0 $?
[ ! -e "$STATES/$id1" ] && [ -d "$STATES/$id2" ] && ok "jobs rm ID: removes that one only" ||
	fail "jobs rm: states left: $(ls "$STATES")"
grep -qF "removed $id1" "$W/out" && ok "jobs rm ID: says what it removed" || fail "jobs rm: $(cat "$W/out")"
"$MYRIAD" walk --progress 0 --json "$W/w.json" "$W/t1" >/dev/null 2>"$W/err"
expect_eq "after jobs rm, the walk starts over (1 session, no notice)" "1" \
	"$(json_num "$W/w.json" sessions)$(grep -c resuming "$W/err" | sed 's/^0$//')"

"$MYRIAD" jobs rm "$id2" nonesuch >/dev/null 2>"$W/err"
expect_eq "jobs rm: an unknown ID refuses all (exit 2)" 2 $?
[ -d "$STATES/$id2" ] && ok "jobs rm: nothing removed when one ID is unknown" || fail "jobs rm: $id2 removed"

# --older-than: by the age of the state's newest file.
stop "$MYRIAD" walk --rate 5k "$W/t1"
id1=$(id_of "$W/t1")
touch -d "10 days ago" "$STATES/$id2"/*
"$MYRIAD" jobs rm --older-than 7d >"$W/out" 2>&1
expect_eq "jobs rm --older-than 7d: exit 0" 0 $?
[ ! -e "$STATES/$id2" ] && [ -d "$STATES/$id1" ] && ok "jobs rm --older-than 7d: removes the old state, keeps the new" ||
	fail "--older-than: states left: $(ls "$STATES"); $(cat "$W/out")"
"$MYRIAD" jobs rm --older-than 7 >/dev/null 2>&1
expect_eq "jobs rm --older-than without a unit: usage error" 2 $?
[ -d "$STATES/$id1" ] && ok "jobs rm --older-than: a bad age removes nothing" || fail "--older-than 7 removed $id1"

# A running job's state is never removed.
"$MYRIAD" walk --rate 2k --progress 0 "$W/t2" >/dev/null 2>&1 &
pid=$!
sleep 1
id2=$(id_of "$W/t2")
"$MYRIAD" jobs | grep -F "$id2" | grep -q "pid $pid" && ok "jobs: a running job is shown with its pid" ||
	fail "jobs: running: $("$MYRIAD" jobs 2>&1)"
before=$(ls "$STATES/$id2")
"$MYRIAD" jobs rm "$id2" >/dev/null 2>"$W/err"
rc=$?
[ $rc -ne 0 ] && [ "$(ls "$STATES/$id2")" = "$before" ] && ok "jobs rm ID of a running job: refused (exit $rc), state intact" ||
	fail "jobs rm running: exit $rc, state: $(ls "$STATES/$id2" 2>&1)"
grep -q "running job holds it (pid $pid)" "$W/err" && ok "jobs rm of a running job: says which run holds it" ||
	fail "jobs rm running: $(cat "$W/err")"
touch -d "10 days ago" "$STATES/$id2"/*
"$MYRIAD" jobs rm --older-than 1d >/dev/null 2>"$W/err"
rc=$?
[ $rc -ne 0 ] && [ -d "$STATES/$id2" ] && ok "jobs rm --older-than: an old state a run holds is kept (exit $rc)" ||
	fail "--older-than running: exit $rc; $(cat "$W/err")"
# --older-than 0s: every stopped job's state (it was refused); still never one a run holds.
id1=$(id_of "$W/t1")
"$MYRIAD" jobs rm --older-than 0s >"$W/out" 2>"$W/err"
rc=$?
[ -n "$id1" ] && [ ! -e "$STATES/$id1" ] && [ -d "$STATES/$id2" ] && [ -e "$STATES/$id2/snapshot" ] &&
	ok "jobs rm --older-than 0s: removes the stopped job's state, keeps the running one's (exit $rc)" ||
	fail "--older-than 0s: exit $rc, states left: $(ls "$STATES"): $(cat "$W/out" "$W/err")"
for age in " 1d" +1d -0s 1e1d 0x1d 1dd; do
	"$MYRIAD" jobs rm --older-than "$age" >/dev/null 2>"$W/err"
	expect_eq "jobs rm --older-than '$age': refused" "2 yes" "$? $(grep -q "from 0" "$W/err" && echo yes)"
done
kill -0 $pid 2>/dev/null && ok "the running job was not disturbed" || fail "the running walk died"
kill -INT $pid
wait $pid

# Directories without myriad's marker are never removed, whatever their age or names.
mkdir -p "$STATES/walk-0123456789abcdef" "$STATES/notes"
echo "not myriad's" >"$STATES/notes/myriad-state"
printf 'x' >"$STATES/walk-0123456789abcdef/snapshot"
printf 'x' >"$STATES/walk-0123456789abcdef/command"
touch -d "30 days ago" "$STATES/notes"/* "$STATES/walk-0123456789abcdef"/*
for id in walk-0123456789abcdef notes; do
	"$MYRIAD" jobs rm "$id" >/dev/null 2>"$W/err"
	expect_eq "jobs rm $id (no marker): refused" 2 $?
	grep -q "not myriad's state" "$W/err" && ok "jobs rm $id (no marker): says why" || fail "jobs rm $id: $(cat "$W/err")"
done
"$MYRIAD" jobs rm --older-than 1d >/dev/null 2>&1
[ -s "$STATES/walk-0123456789abcdef/snapshot" ] && [ -s "$STATES/notes/myriad-state" ] &&
	ok "jobs rm --older-than: directories without the marker are left alone" || fail "unmarked removed: $(ls -R "$STATES")"
"$MYRIAD" jobs 2>"$W/err" | grep -q notes && fail "jobs: lists a directory without the marker" ||
	ok "jobs: a directory without the marker is not listed"
grep -q "notes: not listed" "$W/err" && ok "jobs: says it left it out" || fail "jobs: stderr: $(cat "$W/err")"

# --state DIR: one state directory given to a command, or a directory of them.
stop "$MYRIAD" walk --rate 5k --state "$W/st" "$W/t1"
"$MYRIAD" jobs --state "$W/st" | grep -qF "st  " && ok "jobs --state DIR: lists that state" ||
	fail "jobs --state: $("$MYRIAD" jobs --state "$W/st" 2>&1)"
"$MYRIAD" jobs --state "$W/st" rm st >/dev/null 2>&1
expect_eq "jobs --state DIR rm ID: removed" "0 no" "$? $([ -e "$W/st" ] && echo yes || echo no)"
"$MYRIAD" jobs --state "$W/nowhere" >"$W/out" 2>&1
expect_eq "jobs --state on a missing directory: nothing saved, exit 0" "0" "$?"

# A run refused on another job's state, or on a corrupt snapshot, changes nothing of it: `myriad
# jobs` and the real resume still show the stopped job's command line (it was overwritten).
stop "$MYRIAD" walk --rate 5k --state "$W/st2" "$W/t1"
want="myriad walk --rate 5k --state $W/st2 --progress 0 $W/t1"
before=$(cd "$W/st2" && stat -c '%n %s %Y' * | md5sum)
"$MYRIAD" walk --stat --state "$W/st2" "$W/t2" >/dev/null 2>"$W/err"
expect_eq "a walk on another job's --state: refused" 2 $?
"$MYRIAD" jobs --state "$W/st2" | grep -qF "$want" && ok "refused on another job's state: jobs shows the stopped job's command" ||
	fail "refused on another job's state: jobs shows $("$MYRIAD" jobs --state "$W/st2" 2>&1)"
expect_eq "refused on another job's state: its files unchanged" "$before" "$(cd "$W/st2" && stat -c '%n %s %Y' * | md5sum)"
cp "$W/st2/snapshot" "$W/snap.good"
printf 'garbage' >"$W/st2/snapshot"
touch -d "3 days ago" "$W/st2"/*
"$MYRIAD" walk --progress 0 --state "$W/st2" "$W/t1" >/dev/null 2>"$W/err"
expect_eq "a walk on a corrupt snapshot: refused" 2 $?
"$MYRIAD" jobs --state "$W/st2" | grep -F "$want" | grep -q "3 days\|$(date -d '3 days ago' +%F)" &&
	ok "refused on a corrupt snapshot: jobs shows the command line and the age it had" ||
	fail "refused on a corrupt snapshot: jobs shows $("$MYRIAD" jobs --state "$W/st2" 2>&1)"
cp "$W/snap.good" "$W/st2/snapshot"
"$MYRIAD" walk --rate 5k --progress 0 --state "$W/st2" "$W/t1" >/dev/null 2>"$W/err"
grep -qF "resuming the earlier run of this job: '$want'" "$W/err" &&
	ok "after both refusals, the real resume names the stopped job's command line" || fail "resume: $(cat "$W/err")"

# An empty ID names the operand (it said ": No such file..." of the base directory).
"$MYRIAD" jobs rm '' >/dev/null 2>"$W/err"
expect_eq "jobs rm '': refused, naming the empty operand" "2 yes" "$? $(grep -q "'': an empty operand" "$W/err" && echo yes)"
# The default location: $XDG_STATE_HOME/myriad when set (root too), else /var/lib/myriad for root
# (an empty XDG_STATE_HOME is unset: root's went to ~/.local/state/myriad). Listing only.
if is_root; then
	expect_eq "jobs as root with XDG_STATE_HOME set: looks there" "$XDG_STATE_HOME/myriad" \
		"$("$MYRIAD" jobs --json - 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')"
	expect_eq "jobs as root with XDG_STATE_HOME empty: /var/lib/myriad" "/var/lib/myriad" \
		"$(XDG_STATE_HOME= HOME=$W "$MYRIAD" jobs --json - 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')"
else
	skip "the default location for root: not root"
fi
"$MYRIAD" jobs --help | grep -q -- "--state DIR.*\$XDG_STATE_HOME/myriad" && ok "jobs --help: names \$XDG_STATE_HOME first" ||
	fail "jobs --help: $("$MYRIAD" jobs --help | grep -A2 -- --state)"

"$MYRIAD" jobs --help | grep -q -- "--older-than" && ok "jobs --help describes --older-than" || fail "jobs --help"
"$MYRIAD" jobs rm >/dev/null 2>&1
expect_eq "jobs rm without IDs or age: usage error" 2 $?
"$MYRIAD" jobs frobnicate >/dev/null 2>&1
expect_eq "jobs with an unknown action: usage error" 2 $?
