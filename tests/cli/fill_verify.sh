# fill and verify: a filled tree verifies; damage is found exactly, each finding with its path;
# fill refuses what is not its own; an interrupted fill (SIGINT, kill -9) completes when re-run.
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

# Damage: 2 deleted, 1 truncated, 1 byte flipped, 1 stranger.
rm "$F/d1/f300" "$F/d75/f15099"
truncate -s 100 "$F/d3/f777"
printf '\xff' | dd of="$F/d4/f901" bs=1 seek=500 conv=notrunc 2>/dev/null
touch "$F/d42/stranger"
"$MYRIAD" verify --errors "$S/errs" "$F" >/dev/null 2>"$S/err"
expect_eq "verify: damaged tree exits 1" 1 $?
want="corrupt $F/d4/f901
extra $F/d42/stranger
missing $F/d1/f300
missing $F/d75/f15099
wrong size $F/d3/f777"
got=$(sed -E 's/^\{"path":"([^"]*)","problem":"([^"]*)".*/\2 \1/' "$S/errs" | sort)
expect_eq "verify: names exactly the 5 damaged entries" "$want" "$got"
expect_eq "verify: each finding also on stderr" 5 "$(grep -c "myriad verify: " "$S/err")"
# The same, each leaf's files read ahead together, and read one by one: the same 5 findings.
for pf in on off; do
	MYRIAD_PREFETCH=$pf "$MYRIAD" verify --no-state --json "$S/pf.json" --errors "$S/pf.errs" "$F" >/dev/null 2>&1
	expect_eq "verify, MYRIAD_PREFETCH=$pf: the same 5 findings, exit 1" "1 $want" \
		"$? $(sed -E 's/^\{"path":"([^"]*)","problem":"([^"]*)".*/\2 \1/' "$S/pf.errs" | sort)"
	ahead=$(json_num "$S/pf.json" files_read_ahead)
	if [ $pf = on ]; then
		[ "$ahead" -gt 0 ] && ok "verify, MYRIAD_PREFETCH=on: $ahead files read ahead" || fail "verify: files_read_ahead $ahead"
	else
		expect_eq "verify, MYRIAD_PREFETCH=off: none read ahead" 0 "$ahead"
	fi
done
"$MYRIAD" verify --quick --errors "$S/qerrs" "$F" >/dev/null 2>&1
expect_eq "verify --quick: finds all but the flipped byte" 4 "$(wc -l <"$S/qerrs")"

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
"$MYRIAD" verify "$S/other" 2>"$S/err"
expect_eq "verify: no manifest is exit 2" 2 $?
grep -q "no fill manifest" "$S/err" && ok "verify: says there is no manifest" || fail "message: $(cat "$S/err")"
cp -r "$S/g" "$S/g2"
sed -i 's/^files 300/files 301/' "$S/g2/.myriad-fill"
"$MYRIAD" verify "$S/g2" 2>"$S/err"
expect_eq "verify: a tampered manifest is exit 2" 2 $?
grep -q "checksum" "$S/err" && ok "verify: says the manifest is corrupt" || fail "message: $(cat "$S/err")"
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

# verify interrupted and resumed reports what an uninterrupted one does.
rm "$S/k/d10/f10010"
mkdir "$S/k/d20/strange-dir"
touch "$S/k/d20/zz"
"$MYRIAD" verify --no-state --errors "$S/ve1" "$S/k" >/dev/null 2>&1
for i in 1 2 3; do
	"$MYRIAD" verify -j 1 --checkpoint-interval 0.02 --errors "$S/ve2" "$S/k" >/dev/null 2>&1 &
	pid=$!
	sleep 0.2
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
done
"$MYRIAD" verify --errors "$S/ve2" --json "$S/v.json" "$S/k" >/dev/null 2>&1
expect_eq "verify: resumed after kill -9, exit 1 for the damage" 1 $?
expect_eq "verify: resumed report equals an uninterrupted one" "$(sort "$S/ve1")" "$(sort "$S/ve2")"
expect_eq "verify: resumed JSON counts each file once" 60000 "$(json_num "$S/v.json" checked)"
