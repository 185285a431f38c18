# verify: a tree fill made is checked against its manifest, and each damage is found exactly, once,
# with its path and kind (missing, wrong type, wrong size, corrupt, extra), on stderr, in --errors
# and in the JSON counts, whether each leaf's files are read ahead together or one by one; --quick
# finds all but changed contents and reads no data; a verify stopped by SIGINT or killed with -9
# resumes (saying so) and reports what an uninterrupted one does; a missing or tampered manifest
# and bad operands are exit 2. (fill's side of fill and verify: fill_verify.sh.)
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
export XDG_STATE_HOME=$S/state
F=$S/f
# "KIND PATH" per line of an --errors file, sorted.
findings() { sed -E 's/^\{"path":"([^"]*)","problem":"([^"]*)".*/\2 \1/' "$1" | sort; }
# flip FILE OFFSET: change the byte at OFFSET (to its value + 1).
flip() {
	local b
	b=$(dd if="$1" bs=1 skip="$2" count=1 2>/dev/null | od -An -tu1 | tr -d ' ')
	printf "\\$(printf '%03o' $(((b + 1) % 256)))" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

"$MYRIAD" fill -n 20000 --fanout 200 -s 1k-8k --seed 7 "$F" >/dev/null 2>&1
expect_eq "fill for verify: exit 0" 0 $?
"$MYRIAD" verify --errors "$S/e0" --json "$S/v0.json" "$F" >"$S/v0" 2>&1
expect_eq "intact tree: exit 0, no finding" "0 0" "$? $(wc -l <"$S/e0")"
expect_eq "intact tree: JSON ok, every file checked" "true 20000" \
	"$(grep -o '"ok":[a-z]*' "$S/v0.json" | cut -d: -f2) $(json_num "$S/v0.json" checked)"

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

# More damage: a file replaced by a directory (with contents), a symlink and a FIFO (each a wrong
# type, not also an extra, and nothing under the directory reported); a file grown by a byte, a
# file corrupt at its first byte and one at its last; an extra directory with contents (one
# finding, not one per entry in it); a whole leaf directory gone (each of its files missing).
rm "$F/d5/f1001" "$F/d6/f1201" "$F/d7/f1401"
mkdir "$F/d5/f1001" && touch "$F/d5/f1001/inside"
ln -s f1202 "$F/d6/f1201"
mkfifo "$F/d7/f1401"
printf 'x' >>"$F/d8/f1601"
flip "$F/d9/f1801" 0
flip "$F/d10/f2001" $(($(stat -c %s "$F/d10/f2001") - 1))
mkdir -p "$F/d11/xdir/deeper" && touch "$F/d11/xdir/a" "$F/d11/xdir/deeper/b"
leaf=$(find "$F/d12" -type f | wc -l)
rm -rf "$F/d12"
"$MYRIAD" verify --errors "$S/e2" --json "$S/v2.json" "$F" >/dev/null 2>"$S/err2"
expect_eq "more damage: exit 1" 1 $?
got=$(findings "$S/e2" | grep -v -e " $F/d12/" | grep -v -F -e "$F/d1/f300" -e "$F/d75/f15099" -e "$F/d3/f777" \
	-e "$F/d4/f901" -e "$F/d42/stranger")
want="corrupt $F/d10/f2001
corrupt $F/d9/f1801
extra $F/d11/xdir
wrong size $F/d8/f1601
wrong type $F/d5/f1001
wrong type $F/d6/f1201
wrong type $F/d7/f1401"
expect_eq "more damage: each found once, of its kind, nothing under a directory in a file's place" "$want" "$got"
expect_eq "a leaf directory gone: each of its $leaf files missing, nothing else there" \
	"$leaf $leaf" "$(findings "$S/e2" | grep -c "^missing $F/d12/") $(grep -c "$F/d12" "$S/e2")"
n=$(wc -l <"$S/e2")
# (stderr has the first 100 findings.)
expect_eq "more damage: --errors, stderr (the first 100) and the JSON counts agree" "$((n < 100 ? n : 100)) $n" \
	"$(grep -c "myriad verify: " "$S/err2") $(($(json_num "$S/v2.json" missing) + $(json_num "$S/v2.json" wrong_type) + \
		$(json_num "$S/v2.json" wrong_size) + $(json_num "$S/v2.json" corrupt) + $(json_num "$S/v2.json" extra)))"
expect_eq "more damage: JSON counts by kind (missing, wrong type, wrong size, extra)" \
	"$((leaf + 2)) 3 2 2" \
	"$(json_num "$S/v2.json" missing) $(json_num "$S/v2.json" wrong_type) $(json_num "$S/v2.json" wrong_size) $(json_num "$S/v2.json" extra)"

# --quick: presence, type and size only: everything but the changed contents, and no data read.
"$MYRIAD" verify --quick --errors "$S/q2" --json "$S/q2.json" "$F" >/dev/null 2>&1
expect_eq "--quick: exit 1" 1 $?
expect_eq "--quick: the same findings less the corrupt ones" "$(findings "$S/e2" | grep -v '^corrupt ')" "$(findings "$S/q2")"
expect_eq "--quick: reads no file's data" "0 true" \
	"$(json_num "$S/q2.json" bytes_read) $(grep -o '"quick":[a-z]*' "$S/q2.json" | cut -d: -f2)"
# --errors -: the same JSON lines on standard error.
"$MYRIAD" verify --no-state --quick --errors - "$F" 2>&1 >/dev/null | grep '^{"path"' | sort >"$S/q3"
expect_eq "--errors -: the JSON lines on standard error" "$(sort "$S/q2")" "$(cat "$S/q3")"

# Refusals: exit 2.
mkdir -p "$S/other" && echo keep >"$S/other/precious"
"$MYRIAD" verify "$S/other" 2>"$S/err"
expect_eq "verify: no manifest is exit 2" 2 $?
grep -q "no fill manifest" "$S/err" && ok "verify: says there is no manifest" || fail "message: $(cat "$S/err")"
"$MYRIAD" fill -n 300 --fanout 200 -s 1k-8k --seed 7 "$S/g2" >/dev/null 2>&1
sed -i 's/^files 300/files 301/' "$S/g2/.myriad-fill"
"$MYRIAD" verify "$S/g2" 2>"$S/err"
expect_eq "verify: a tampered manifest is exit 2" 2 $?
grep -q "checksum" "$S/err" && ok "verify: says the manifest is corrupt" || fail "message: $(cat "$S/err")"
"$MYRIAD" verify 2>"$S/err"
expect_eq "verify: no operand is exit 2" 2 $?
"$MYRIAD" verify "$F" "$S/g2" 2>"$S/err"
expect_eq "verify: two operands is exit 2" 2 $?
"$MYRIAD" verify "$S/nonexistent" 2>"$S/err"
expect_eq "verify: a missing DIR is exit 2" 2 $?

# verify interrupted and resumed reports what an uninterrupted one does.
K=$S/k
"$MYRIAD" fill -n 60000 -s 0-3k "$K" >/dev/null 2>&1
rm "$K/d10/f10010"
mkdir "$K/d20/strange-dir"
touch "$K/d20/zz"
"$MYRIAD" verify --no-state --errors "$S/ve1" "$K" >/dev/null 2>&1
for i in 1 2 3; do
	"$MYRIAD" verify -j 1 --checkpoint-interval 0.02 --errors "$S/ve2" "$K" >/dev/null 2>&1 &
	pid=$!
	# Killed only after its first checkpoint: a kill that lands before it leaves nothing to resume.
	wait_for_glob "$S/state/myriad/*/snapshot" || fail "verify: no snapshot within 20 s"
	sleep 0.1
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
done
"$MYRIAD" verify --errors "$S/ve2" --json "$S/v.json" "$K" >/dev/null 2>"$S/ve2.err"
expect_eq "verify: resumed after kill -9, exit 1 for the damage" 1 $?
expect_eq "verify: resumed report equals an uninterrupted one" "$(sort "$S/ve1")" "$(sort "$S/ve2")"
expect_eq "verify: resumed JSON counts each file once" 60000 "$(json_num "$S/v.json" checked)"
grep -q "resuming the earlier run" "$S/ve2.err" && ok "verify: the run after kill -9 says it resumes" ||
	fail "verify after kill -9: no resume notice: $(head -c 300 "$S/ve2.err")"
[ "$(json_num "$S/v.json" sessions)" -gt 1 ] && ok "verify: resumed, JSON sessions $(json_num "$S/v.json" sessions)" ||
	fail "verify: JSON sessions $(json_num "$S/v.json" sessions) after kill -9"

# SIGINT: exit 3, state saved; the same command resumes and completes with the same report. The
# run reads K through faultfs, which holds its 5,001st open until SIGUSR2: the run cannot have
# finished when SIGINT lands, however loaded the machine (a timed sleep let it finish first).
KF=$S/kf
if mount_faultfs "$K" "$KF" --pidfile "$S/fpid" --rule 'open:*:hold,after=5000' 2>"$S/ff.err"; then
	"$MYRIAD" verify -j 1 --errors "$S/ve3" --json "$S/v3a.json" "$KF" >/dev/null 2>&1 &
	pid=$!
	wait_for_glob "$S/state/myriad/*/snapshot" || fail "verify through faultfs: no snapshot within 20 s"
	sleep 0.3
	kill -INT $pid
	wait $pid
	expect_eq "verify: SIGINT gives exit 3, incomplete" "3 false" "$? $(grep -o '"complete":[a-z]*' "$S/v3a.json" | cut -d: -f2)"
	kill -USR2 "$(cat "$S/fpid")"
	"$MYRIAD" verify --errors "$S/ve3" --json "$S/v3.json" "$KF" >/dev/null 2>&1
	rc=$?
	expect_eq "verify: resumed after SIGINT, exit 1, the same report, every file once" \
		"1 $(sort "$S/ve1" | md5sum) 60000" "$rc $(sed "s|$KF|$K|g" "$S/ve3" | sort | md5sum) $(json_num "$S/v3.json" checked)"
	fusermount3 -u "$KF"
else
	skip "verify: SIGINT and resume (faultfs holds the run): $(head -c 200 "$S/ff.err")"
fi
expect_eq "verify: a finished verify leaves no state" "" "$(ls "$S/state/myriad" 2>/dev/null)"
