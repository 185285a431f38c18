# fill, checked by verify: a filled tree verifies; fill refuses what is not its own; an interrupted
# fill (SIGINT, kill -9) completes when re-run. (verify's own cases, damages found exactly,
# --quick, its resume: verify.sh.)
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
export XDG_STATE_HOME=$S/state
F=$S/f
"$MYRIAD" fill -n 20000 --fanout 200 -s 1k-8k --seed 7 --json "$S/fill.json" "$F" >"$S/out" 2>&1
expect_eq "fill: exit 0" 0 $?
expect_eq "fill: exactly N files, plus the manifest" 20001 "$(find "$F" -type f | wc -l)"
expect_eq "fill: no directory holds more than --fanout entries" "" \
	"$(find "$F" -type d -exec sh -c 'n=$(ls -A "$1" | wc -l); [ "$n" -gt 201 ] && echo "$1"' _ {} \;)"
expect_eq "fill: JSON counts the files" 20000 "$(json_num "$S/fill.json" files)"
grep -q '"p99_us"' "$S/fill.json" && grep -q '"timeline":\[\[' "$S/fill.json" &&
	ok "fill: JSON has latency percentiles and a timeline" || fail "fill JSON: $(head -c 300 "$S/fill.json")"
grep -q "create p50" "$S/out" && ok "fill: summary shows latency percentiles" || fail "summary: $(cat "$S/out")"
sizes=$(find "$F" -name 'f*' -printf '%s\n' | sort -n | sed -n '1p;$p' | tr '\n' ' ')
[ "${sizes% }" != "1024 1024" ] && ok "fill: sizes drawn from the range ($sizes)" || fail "sizes: $sizes"

"$MYRIAD" verify "$F" >"$S/v" 2>&1
expect_eq "verify: intact tree exits 0" 0 $?
grep -q "OK" "$S/v" && ok "verify: says OK" || fail "verify output: $(cat "$S/v")"
"$MYRIAD" verify --quick "$F" >/dev/null 2>&1
expect_eq "verify --quick: intact tree exits 0" 0 $?

# Reproducible: the same parameters give byte-identical trees.
"$MYRIAD" fill -n 300 --fanout 200 -s 1k-8k --seed 7 "$S/g" >/dev/null 2>&1
cmp -s "$F/d0/f150" "$S/g/d0/f150" && ok "fill: contents are a function of the parameters" || fail "contents differ"

# Refusals: nothing touched, exit 2.
mkdir -p "$S/other"
echo keep >"$S/other/precious"
"$MYRIAD" fill -n 10 "$S/other" >/dev/null 2>"$S/err"
expect_eq "fill: a non-empty DIR without a manifest is refused" 2 $?
expect_eq "fill: ... and left untouched" "precious" "$(ls "$S/other")"
"$MYRIAD" fill -n 20001 --fanout 200 -s 1k-8k --seed 7 "$F" >/dev/null 2>"$S/err"
expect_eq "fill: a manifest with other parameters is refused" 2 $?
grep -q "other parameters" "$S/err" && ok "fill: says the parameters differ" || fail "message: $(cat "$S/err")"
"$MYRIAD" fill -n 1x "$S/x" 2>/dev/null
expect_eq "fill: a bad count is a usage error" 2 $?
"$MYRIAD" fill -n 10 -s 4q "$S/x" 2>/dev/null
expect_eq "fill: a bad size is a usage error" 2 $?
"$MYRIAD" fill -n 10 -s 8k-1k "$S/x" 2>/dev/null
expect_eq "fill: an inverted size range is a usage error" 2 $?
"$MYRIAD" fill "$S/x" 2>/dev/null
expect_eq "fill: --files is required" 2 $?
"$MYRIAD" fill -n 300 --fanout 200 -s 1k-8k --seed 7 "$S/g" >"$S/out" 2>&1
expect_eq "fill: re-running a finished fill exits 0" 0 $?
grep -q "nothing to do" "$S/out" && ok "fill: says it is already complete" || fail "output: $(cat "$S/out")"

# SIGINT, then the same command completes.
"$MYRIAD" fill -n 30000 --rate 10k -s 0-2k "$S/h" >/dev/null 2>"$S/err" &
pid=$!
sleep 1
kill -INT $pid
wait $pid
expect_eq "fill: SIGINT gives exit 3" 3 $?
"$MYRIAD" verify --quick "$S/h" >/dev/null 2>&1
expect_eq "verify: an unfinished fill is exit 1" 1 $?
"$MYRIAD" fill -n 30000 -s 0-2k "$S/h" >/dev/null 2>&1
expect_eq "fill: resumed after SIGINT, exit 0" 0 $?
"$MYRIAD" verify "$S/h" >/dev/null 2>&1
expect_eq "fill: resumed after SIGINT, verify passes" 0 $?

# kill -9 at random moments, resumed each time.
for i in $(seq 6); do
	"$MYRIAD" fill -n 60000 --rate 15k -s 0-3k --checkpoint-interval 0.05 "$S/k" >/dev/null 2>&1 &
	pid=$!
	sleep "0.$((RANDOM % 7 + 2))"
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
done
"$MYRIAD" fill -n 60000 -s 0-3k --json "$S/k.json" "$S/k" >/dev/null 2>&1
expect_eq "fill: killed -9 six times, then re-run: exit 0" 0 $?
expect_eq "fill: killed -9: exactly N files" 60000 "$(find "$S/k" -type f -name 'f*' | wc -l)"
"$MYRIAD" verify "$S/k" >/dev/null 2>&1
expect_eq "fill: killed -9: verify passes" 0 $?
expect_eq "fill: killed -9: the JSON counts every file once" 60000 "$(json_num "$S/k.json" files)"


# The split of small leaves among workers: only where it helps. Empty files without --sync file:
# one worker per directory (two in one would serialize on its lock); --sync file splits them. A
# fill interrupted under one decision resumes under the other's options, keeping its split.
"$MYRIAD" fill -n 20000 --no-state --json "$S/p0.json" "$S/p0" >/dev/null 2>&1
expect_eq "fill: empty files, 20 leaves: one worker per directory (leaf_parts 1)" 1 "$(json_num "$S/p0.json" leaf_parts)"
"$MYRIAD" fill -n 20000 -s 1k --no-state -j 64 --json "$S/p1.json" "$S/p1" >/dev/null 2>&1
[ "$(json_num "$S/p1.json" leaf_parts)" -gt 1 ] && ok "fill: files with data, fewer leaves than workers: leaves split" ||
	fail "leaf_parts with -j 64: $(json_num "$S/p1.json" leaf_parts)"
split_resume() { # LABEL FIRST-OPTIONS -- RESUME-OPTIONS: interrupted, resumed with the other options
	local label=$1 d=$S/r$2 first=() again=()
	shift 2
	while [ "$1" != -- ]; do first+=("$1"); shift; done
	shift
	again=("$@")
	"$MYRIAD" fill -n 20000 --rate 10k --json "$d.1.json" "${first[@]}" "$d" >/dev/null 2>&1 &
	local pid=$!
	sleep 0.7
	kill -INT $pid
	wait $pid
	expect_eq "fill: $label: SIGINT gives exit 3" 3 $?
	"$MYRIAD" fill -n 20000 --json "$d.2.json" "${again[@]}" "$d" >"$d.out" 2>&1
	expect_eq "fill: $label: resumed, exit 0" 0 $?
	grep -q "cannot be used" "$d.out" && fail "fill: $label: snapshot refused: $(cat "$d.out")"
	expect_eq "fill: $label: resumed with the first run's split, the JSON counts every file once" \
		"$(json_num "$d.1.json" leaf_parts) 20000 2" \
		"$(json_num "$d.2.json" leaf_parts) $(json_num "$d.2.json" files) $(json_num "$d.2.json" sessions)"
	"$MYRIAD" verify "$d" >/dev/null 2>&1
	expect_eq "fill: $label: verify passes" 0 $?
}
split_resume "split (--sync file), resumed without --sync" 1 --sync file -- 
split_resume "unsplit, resumed with --sync file" 2 -- --sync file
