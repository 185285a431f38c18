# Every numeric option of every command, RUN at its edges: 0, 1, its largest value, just past it,
# and garbage (negative, overflowing, exponent, empty, a trailing letter). Each run on a tiny tree
# must give a result (exit 0, 1 or 3) or a refusal (exit 2) whose message names the option and
# its allowed range, never a signal and never a hang (30 s timeout). Values that mean something at
# 0 are checked for that meaning: fill -n 0 makes an empty, complete fill; --progress 0 prints no
# status line; copy --max-delete 0 deletes nothing; --link-memory 0 still links every name. A -j
# larger than the system grants threads for goes on with fewer instead of aborting.
# Everything runs in a sandbox (rm, copy --delete and fill write).
. "$(dirname "$0")/../lib.sh"

sandbox 256m || { skip "edges: no sandbox ($(sandbox 2>&1))"; exit 0; }
W=$PWD # $SANDBOX/a/b/c
GARBAGE=(99999999999999999999 1e999 -1 "" 1x)
MAX64=18446744073709551615
n=0
bad=0

# A tiny tree of each kind: SRC for walk/rm/copy, FILL (a fill) for verify.
mkdir -p src/sub && touch src/a src/sub/b && echo data >src/sub/c
"$MYRIAD" fill -n 5 --no-state fill >/dev/null 2>&1 || fail "setup: fill -n 5"

# runit CMD OPT VAL ARGS...: run `myriad CMD OPT VAL ARGS...` on a fresh tree where one is written
# to (rm, copy's DST, fill's DIR); sets rc, out, err. %T in ARGS is the fresh tree's name.
runit() {
	local cmd=$1 opt=$2 val=$3 t a
	shift 3
	n=$((n + 1))
	t=$W/t$n
	case $cmd in
	rm) cp -a src "$t" ;;
	esac
	local args=()
	for a in "$@"; do args+=("${a//%T/$t}"); done
	timeout -s KILL 30 "$MYRIAD" "$cmd" "$opt" "$val" --state "$W/st$n" "${args[@]}" >"$W/out" 2>"$W/err"
	rc=$?
	rm -rf "$t" "$W/st$n" "$W/d$n"
}

# The operands of each command's run.
operands() {
	case $1 in
	walk) echo "src" ;;
	du) echo "-s src" ;;
	fill) echo "-n 3 %T" ;;
	verify) echo "fill" ;;
	rm) echo "%T" ;;
	copy) echo "--delete src %T" ;;
	esac
}

# edge WANT CMD OPT VAL [ARGS...]: WANT is "run" (a result: exit 0, 1 or 3) or "refuse" (exit 2
# naming OPT's long name, given as NAME=... in OPTNAME, and its range).
edge() {
	local want=$1 cmd=$2 opt=$3 val=$4 why=""
	shift 4
	runit "$cmd" "$opt" "$val" "$@"
	if [ $rc -ge 124 ]; then
		why="exit $rc (a signal or a hang)"
	elif [ "$want" = run ] && [ $rc -eq 2 ]; then
		why="refused: $(head -c 200 "$W/err" | tr "\n" " ")"
	elif [ "$want" = refuse ] && [ $rc -ne 2 ]; then
		why="exit $rc, want 2"
	elif [ "$want" = refuse ] && ! grep -q -- "$OPTNAME" "$W/err"; then
		why="message does not name $OPTNAME: $(head -c 200 "$W/err" | tr "\n" " ")"
	elif [ "$want" = refuse ] && ! grep -qE "from [0-9.]+ (\([a-z]+\) )?to|0\.\.7" "$W/err"; then
		why="message gives no range: $(head -c 200 "$W/err" | tr "\n" " ")"
	fi
	if [ -n "$why" ]; then
		fail "$cmd $opt '$val': $why"
		bad=$((bad + 1))
	fi
}

# ---- the options every long command shares ----
for cmd in walk du fill verify rm copy; do
	# shellcheck disable=SC2046
	ops=$(operands $cmd)
	before=$bad
	OPTNAME=--threads
	for v in 1 4096 256; do edge run $cmd -j $v $ops; done
	for v in 0 4097 "${GARBAGE[@]}"; do edge refuse $cmd -j "$v" $ops; done
	OPTNAME=--progress
	for v in 0 0.1 1 1e9; do edge run $cmd --progress $v $ops; done
	# Below 0.1 s (but 0) it flooded stderr: 1e-9 wrote 297,000 lines a second.
	for v in 0.001 0.09 1e-9 1e10 nan inf 0x10 " 1" "${GARBAGE[@]}"; do edge refuse $cmd --progress "$v" $ops; done
	OPTNAME=--checkpoint-interval
	for v in 0.01 1 1e9; do edge run $cmd --checkpoint-interval $v $ops; done
	for v in 0 0.001 1e10 "${GARBAGE[@]}"; do edge refuse $cmd --checkpoint-interval "$v" $ops; done
	[ $bad = "$before" ] && ok "$cmd: -j, --progress, --checkpoint-interval at 0, 1, max, past max and garbage"
done

# --progress 0: no status line at all.
runit walk --progress 0 src
[ $rc = 0 ] && [ ! -s "$W/err" ] && ok "walk --progress 0 prints nothing on stderr" ||
	fail "walk --progress 0: exit $rc, stderr: $(head -c 200 "$W/err" | tr "\n" " ")"

# ---- --rate (walk, du, fill, rm, copy): 0 refused, 1 runs slowly but runs ----
before=$bad
OPTNAME=--rate
for cmd in walk du fill rm copy; do
	ops=$(operands $cmd)
	for v in 5000 $MAX64; do edge run $cmd --rate $v $ops; done
	for v in 0 18446744073709551616 "${GARBAGE[@]}"; do edge refuse $cmd --rate "$v" $ops; done
done
edge run fill --rate 1 -n 2 %T
[ $bad = "$before" ] && ok "--rate of walk, du, fill, rm, copy at 0, 1, max, past max and garbage"

# ---- fill ----
before=$bad
OPTNAME=--files
for v in 1 1000; do edge run fill -n $v %T; done
for v in 1000000000000001 "${GARBAGE[@]}"; do edge refuse fill -n "$v" %T; done
OPTNAME=--size
for v in 0 1 0-0 1-1 0-1 1k-64k; do edge run fill -s $v -n 3 %T; done
# Past 2^63-1 no file can be that large (off_t): refused, not attempted.
for v in 16E 8E 15E 9223372036854775808 1-8E 1-0 1k- -1k "${GARBAGE[@]}"; do edge refuse fill -s "$v" -n 3 %T; done
edge run fill -s 9223372036854775807 -n 1 %T # out of space in the sandbox: a result (exit 3), not a crash
OPTNAME=--fanout
for v in 2 10M; do edge run fill --fanout $v -n 5 %T; done
for v in 0 1 10000001 "${GARBAGE[@]}"; do edge refuse fill --fanout "$v" -n 5 %T; done
OPTNAME=--seed
for v in 0 1 $MAX64; do edge run fill --seed $v -n 3 %T; done
for v in 18446744073709551616 "${GARBAGE[@]}"; do edge refuse fill --seed "$v" -n 3 %T; done
[ $bad = "$before" ] && ok "fill: -n, -s, --fanout, --seed at 0, 1, max, past max and garbage"

# fill -n 0: an empty fill, complete, that verify accepts; a re-run has nothing to do.
"$MYRIAD" fill -n 0 --state "$W/zst" --json "$W/f0.json" "$W/zero" >"$W/out" 2>"$W/err"
rc=$?
expect_eq "fill -n 0 exits 0 (was SIGFPE)" 0 $rc
grep -q '^status complete' "$W/zero/.myriad-fill" 2>/dev/null && grep -q '^files 0' "$W/zero/.myriad-fill" &&
	ok "fill -n 0 writes a complete manifest of zero files" || fail "fill -n 0: no complete manifest of 0 files"
expect_eq "fill -n 0: --json says 0 files, complete" "0 complete" \
	"$(json_num "$W/f0.json" files 2>/dev/null) $(grep -s -o '"status":"[a-z]*"' "$W/f0.json" | cut -d'"' -f4)"
"$MYRIAD" verify "$W/zero" >"$W/out" 2>&1
expect_eq "verify of a fill -n 0 exits 0" 0 $?
"$MYRIAD" fill -n 0 "$W/zero" >"$W/out" 2>&1
expect_eq "fill -n 0 again: nothing to do, exit 0" 0 $?
[ ! -e "$W/zst/myriad-state" ] && ok "fill -n 0 leaves no state behind" ||
	fail "fill -n 0 left a state directory"
rm -rf "$W/zero"

# ---- copy ----
before=$bad
OPTNAME=--bwlimit
for v in 1 1k 15E $MAX64; do edge run copy --bwlimit $v src %T; done
for v in 0 16E 18446744073709551616 "${GARBAGE[@]}"; do edge refuse copy --bwlimit "$v" src %T; done
OPTNAME=--max-errors
for v in 1 $MAX64; do edge run copy --max-errors $v src %T; done
for v in 0 18446744073709551616 "${GARBAGE[@]}"; do edge refuse copy --max-errors "$v" src %T; done
OPTNAME=--link-memory
for v in 0 1 64M 15E $MAX64; do edge run copy --link-memory $v src %T; done
for v in 16E 18446744073709551616 "${GARBAGE[@]}"; do edge refuse copy --link-memory "$v" src %T; done
OPTNAME=--max-delete
for v in 0 1 $MAX64; do edge run copy --max-delete $v --delete src %T; done
for v in 18446744073709551616 "${GARBAGE[@]}"; do edge refuse copy --max-delete "$v" --delete src %T; done
OPTNAME=--cgroup-io
for v in rbps=0 wiops=0 wbps=16E wiops=99999999999999999999 0 "" 1x; do
	runit copy --cgroup-io "$v" src %T
	[ $rc = 2 ] && grep -q -- --cgroup-io "$W/err" || { fail "copy --cgroup-io '$v': exit $rc"; bad=$((bad + 1)); }
done
OPTNAME=--ionice
for cmd in rm copy; do
	for v in idle be:0 be:7; do edge run $cmd --ionice $v $(operands $cmd); done
	for v in be:8 be:-1 be: "${GARBAGE[@]}"; do edge refuse $cmd --ionice "$v" $(operands $cmd); done
done
[ $bad = "$before" ] && ok "copy: --bwlimit, --max-errors, --link-memory, --max-delete, --cgroup-io; rm/copy --ionice"

# ---- du: --max-depth, --top, --link-memory ----
before=$bad
OPTNAME=--max-depth
for v in 0 1 1M; do edge run du --max-depth $v -o "$W/o" src; done
for v in 1000001 "${GARBAGE[@]}"; do edge refuse du --max-depth "$v" -o "$W/o" src; done
OPTNAME=--top
for v in 1 1M; do edge run du --top $v src; done
for v in 0 1000001 "${GARBAGE[@]}"; do edge refuse du --top "$v" src; done
OPTNAME=--link-memory
for v in 0 1 64M 15E $MAX64; do edge run du --link-memory $v -s src; done
for v in 16E 18446744073709551616 "${GARBAGE[@]}"; do edge refuse du --link-memory "$v" -s src; done
[ $bad = "$before" ] && ok "du: --max-depth, --top, --link-memory at 0, 1, max, past max and garbage"

# --link-memory 0: every hard link goes through the spill file and is still made a link.
mkdir -p hl/x && echo a >hl/a && ln hl/a hl/x/l1 && ln hl/a hl/x/l2
"$MYRIAD" copy --no-state --link-memory 0 hl "$W/hl2" >/dev/null 2>&1
expect_eq "copy --link-memory 0 links every name" "3 3" "$(stat -c %h "$W/hl2/a") $(stat -c %h "$W/hl2/x/l2")"
# --max-delete 0: nothing deleted, said so, exit 1.
mkdir -p "$W/md/extra" && touch "$W/md/extra/f"
"$MYRIAD" copy --no-state --delete --max-delete 0 src "$W/md" >"$W/out" 2>"$W/err"
rc=$?
[ $rc = 1 ] && [ -e "$W/md/extra/f" ] && grep -q 'max-delete' "$W/err" && ok "copy --max-delete 0 deletes nothing, says so, exit 1" ||
	fail "copy --max-delete 0: exit $rc, extra/f $([ -e "$W/md/extra/f" ] && echo kept || echo deleted)"

# ---- a -j beyond what the system grants: fewer threads, not an abort ----
for cmd in walk fill verify rm copy; do
	ops=$(operands $cmd)
	n=$((n + 1))
	[ $cmd = rm ] && cp -a src "$W/t$n"
	# shellcheck disable=SC2086
	(ulimit -v 2000000 && exec timeout -s KILL 60 "$MYRIAD" $cmd -j 4096 --no-state ${ops//%T/$W/t$n}) >"$W/out" 2>"$W/err"
	rc=$?
	rm -rf "$W/t$n"
	[ $rc -le 1 ] && ok "$cmd -j 4096 with threads scarce: runs with fewer (exit $rc)" ||
		fail "$cmd -j 4096 with threads scarce: exit $rc: $(tail -c 200 "$W/err")"
done

# ---- lifecycle (checked by --dry-run) and report ----
lc() { "$MYRIAD" lifecycle --dry-run --out "$W/lo" "$@" >"$W/out" 2>"$W/err"; }
before=$bad
for spec in "--files 0" "--files 1000000000000001" "--files 99999999999999999999" "--files -1" "--files 1x" \
	"--scales 0" "--scales 1,0" "--scales 1000000000000001" "--scales -1" "--scales 1x" \
	"--project 0" "--project 18446744073709551616" "--project -1" "--project 1x" \
	"--size 16E" "--size 1k-0" "--size -1" "--size 1x"; do
	# shellcheck disable=SC2086
	lc $spec
	rc=$?
	{ [ $rc = 2 ] && grep -q -- "${spec%% *}" "$W/err" && grep -qE 'from [0-9]+ to' "$W/err"; } ||
		{ fail "lifecycle $spec: exit $rc: $(head -c 200 "$W/err" | tr "\n" " ")"; bad=$((bad + 1)); }
done
for spec in "--files 1" "--files 1000" "--scales 1" "--scales 1,1" "--project 1" "--project $MAX64" "--size 0" "--size 1-1"; do
	# shellcheck disable=SC2086
	lc $spec
	rc=$?
	# exit 2 may say the machine cannot run it (no mkfs): only a refusal of the option is wrong
	[ $rc -ge 124 ] || { [ $rc = 2 ] && grep -q -- "${spec%% *}:" "$W/err"; } &&
		{ fail "lifecycle $spec: exit $rc: $(head -c 200 "$W/err" | tr "\n" " ")"; bad=$((bad + 1)); }
done
for spec in "--size 15E" "--files 1000000000000000" "--size 1T --scales 1000000000000000"; do
	# shellcheck disable=SC2086
	lc $spec
	rc=$?
	[ $rc = 2 ] && grep -q 'image would be larger' "$W/err" ||
		{ fail "lifecycle $spec: exit $rc, want 2 (image too large): $(head -c 200 "$W/err" | tr "\n" " ")"; bad=$((bad + 1)); }
done
[ $bad = "$before" ] && ok "lifecycle: --files, --scales, --project, --size at 0, 1, max, past max and garbage"

R=$TOP/tests/fuzz/corpus/results/lifecycle-results.json
before=$bad
for v in 1 1000 $MAX64; do
	timeout -s KILL 30 "$MYRIAD" report --project $v -o "$W/r.html" "$R" >"$W/out" 2>"$W/err"
	rc=$?
	[ $rc = 0 ] || { fail "report --project $v: exit $rc"; bad=$((bad + 1)); }
done
for v in 0 18446744073709551616 "${GARBAGE[@]}"; do
	"$MYRIAD" report --project "$v" -o "$W/r.html" "$R" >"$W/out" 2>"$W/err"
	rc=$?
	[ $rc = 2 ] && grep -q -- '--project' "$W/err" && grep -qE 'from 1 to' "$W/err" ||
		{ fail "report --project '$v': exit $rc: $(head -c 200 "$W/err" | tr "\n" " ")"; bad=$((bad + 1)); }
done
[ $bad = "$before" ] && ok "report --project at 0, 1, max, past max and garbage"
