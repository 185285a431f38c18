# Counts agree with findings, and a resumed job's totals are the whole job's.
# 1. For walk, fill, verify, rm and copy on a tree that produces findings (faultfs errors, planted
#    damages), the records of --errors equal the summary's and the JSON's counts, and each damaged
#    entry is reported once (verify: a file replaced by a directory or a symlink is a wrong type,
#    not also an extra).
# 2. rm, fill and copy stopped by SIGINT and then killed with kill -9 several times: the final
#    run's totals are the whole job's (rm: every entry of the tree; fill: N created on an empty
#    DIR, N less those there before the job; copy: every file and byte of SRC).
# Everything runs in a sandbox (rm and copy write and remove).
. "$(dirname "$0")/../lib.sh"

sandbox 1g || { skip "counts: no sandbox ($(sandbox 2>&1))"; exit 0; }
W=$PWD
S=$(scratch)
export XDG_STATE_HOME=$W/xdg

lines() { [ -s "$1" ] && wc -l <"$1" || echo 0; }
# summary_num FILE WORD: the number before WORD in the summary line (e.g. "errors").
summary_num() { grep -o "[0-9,]* $2" "$1" | tail -1 | cut -d' ' -f1 | tr -d ,; }

# agree NAME ERRFILE OUTFILE JSONFILE: --errors records = JSON errors = summary errors.
agree() {
	local n j s
	n=$(lines "$2")
	j=$(json_num "$4" errors)
	s=$(summary_num "$3" errors)
	if [ "$n" -gt 0 ] && [ "$n" = "$j" ] && [ "$n" = "$s" ]; then
		ok "$1: $n records in --errors = summary's and JSON's errors"
	else
		fail "$1: --errors has $n records, JSON says $j, summary $s"
	fi
}

# ---- 1. findings ----
if [ -e /dev/fuse ]; then
	FB=$W/fb
	mkdir -p "$FB"
	"$MYRIAD" fill -n 300 --fanout 10 -s 10-100 --no-state "$FB/t" >/dev/null 2>&1
	FM=$S/fm
	mount_faultfs "$FB" "$FM" --rule 'opendir:/t/d1/d3:EIO' --rule 'readdir:/t/d2/d5:EIO' \
		--rule 'open:/t/d0/d4/f4[0-2]:EIO' --rule 'unlink:/t/d0/d7/f7[3-4]:EIO' --rule 'rmdir:/t/d2/d9:EIO' || {
		fail "faultfs did not mount"
		exit 0
	}
	"$MYRIAD" walk --no-state --errors "$W/w.err" --json "$W/w.json" "$FM/t" >"$W/w.out" 2>/dev/null
	agree "walk on a failing disk" "$W/w.err" "$W/w.out" "$W/w.json"
	"$MYRIAD" copy --no-state --errors "$W/c.err" --json "$W/c.json" "$FM/t" "$W/cdst" >"$W/c.out" 2>/dev/null
	agree "copy from a failing disk" "$W/c.err" "$W/c.out" "$W/c.json"
	"$MYRIAD" verify --no-state --errors "$W/v.err" --json "$W/v.json" "$FM/t" >"$W/v.out" 2>/dev/null
	n=$(lines "$W/v.err")
	j=$(($(json_num "$W/v.json" errors) + $(json_num "$W/v.json" missing) + $(json_num "$W/v.json" wrong_type) +
		$(json_num "$W/v.json" wrong_size) + $(json_num "$W/v.json" corrupt) + $(json_num "$W/v.json" extra)))
	s=0
	for k in missing "wrong type" "wrong size" corrupt extra errors; do s=$((s + $(summary_num "$W/v.out" "$k"))); done
	[ "$n" -gt 0 ] && [ "$n" = "$j" ] && [ "$n" = "$s" ] && ok "verify on a failing disk: $n records = findings + errors" ||
		fail "verify on a failing disk: --errors has $n records, JSON says $j, summary $s"
	"$MYRIAD" rm --no-state --errors "$W/r.err" --json "$W/r.json" "$FM/t" >"$W/r.out" 2>/dev/null
	agree "rm on a failing disk" "$W/r.err" "$W/r.out" "$W/r.json"
else
	skip "faultfs needs /dev/fuse: walk, copy, verify, rm on a failing disk"
fi

# fill: entries planted in its way while it was stopped are each reported once, and counted.
F=$W/fill
"$MYRIAD" fill -n 300 --fanout 10 --state "$W/fst" --rate 500 "$F" >/dev/null 2>&1 &
pid=$!
for i in $(seq 100); do [ -e "$F/d0/d0/f1" ] && break; sleep 0.02; done
kill -INT $pid
wait $pid
ln -s /nonexistent "$F/d2"     # a directory of the tree: its files are left out
mkdir -p "$F/d1/d9" && ln -s /nonexistent "$F/d1/d9/f199" && mkfifo "$F/d1/d9/f198" # files
"$MYRIAD" fill -n 300 --fanout 10 --state "$W/fst" --errors "$W/f.err" --json "$W/f.json" "$F" >"$W/f.out" 2>/dev/null
agree "fill with entries in its way" "$W/f.err" "$W/f.out" "$W/f.json"
expect_eq "fill: each entry in the way reported once" 3 "$(lines "$W/f.err")"

# verify: each damage is one finding.
V=$W/v
"$MYRIAD" fill -n 200 --fanout 10 -s 10 --no-state "$V" >/dev/null 2>&1
rm "$V/d0/d1/f11" && mkdir "$V/d0/d1/f11" && touch "$V/d0/d1/f11/inside" # a file replaced by a directory
rm "$V/d0/d1/f12" && ln -s /etc/passwd "$V/d0/d1/f12"                  # ... by a symlink
rm -r "$V/d1/d3" && ln -s /tmp "$V/d1/d3"                               # a directory by a symlink (10 files)
rm -r "$V/d1/d4" && touch "$V/d1/d4"                                    # ... by a file (10 files)
touch "$V/d0/stray" "$V/d0/d1/f999"                                     # extras
rm "$V/d0/d2/f20"                                                       # missing
printf 'XXXXXXXXXX' >"$V/d0/d2/f21"                                     # corrupt
"$MYRIAD" verify --no-state --errors "$W/v2.err" --json "$W/v2.json" "$V" >"$W/v2.out" 2>/dev/null
got=""
for k in missing wrong_type wrong_size corrupt extra; do got="$got $(json_num "$W/v2.json" $k)"; done
expect_eq "verify: each damaged entry is one finding (missing, wrong type, wrong size, corrupt, extra)" " 21 4 0 1 2" "$got"
expect_eq "verify: --errors holds as many records (no entry twice)" 28 "$(lines "$W/v2.err")"
expect_eq "verify: no path reported twice" 0 "$(sed -E 's/^\{"path":"([^"]*)".*/\1/' "$W/v2.err" | sort | uniq -d | wc -l)"

# ---- 2. totals of a resumed job ----
# interrupt CMD...: run CMD in the background until it has worked a little, then stop it: SIGINT
# the first time, kill -9 after. Sets nruns; lastrc, and $W/run.out when it finished first.
nruns=0
interrupt() {
	local sig=KILL pid
	[ $nruns = 0 ] && sig=INT
	[ "${lastrc:-1}" = 0 ] && return # done already
	"$@" >"$W/run.tmp" 2>&1 &
	pid=$!
	sleep "0.$((3 + RANDOM % 4))"
	kill -$sig $pid 2>/dev/null
	wait $pid 2>/dev/null
	lastrc=$?
	[ $lastrc = 0 ] && mv "$W/run.tmp" "$W/run.out"
	nruns=$((nruns + 1))
}
# finish CMD...: run CMD to the end unless the last interrupted run finished; $W/run.out, lastrc.
finish() {
	[ "${lastrc:-1}" = 0 ] && return
	"$@" >"$W/run.out" 2>&1
	lastrc=$?
}

# rm
T=$W/rmtree
"$MYRIAD" fill -n 20000 --fanout 100 --no-state "$T" >/dev/null 2>&1
want=$(find "$T" | wc -l)
nruns=0 lastrc=
for i in 1 2 3 4; do interrupt "$MYRIAD" rm --state "$W/rst" --rate 8000 --checkpoint-interval 0.2 --json "$W/rm.json" "$T"; done
finish "$MYRIAD" rm --state "$W/rst" --json "$W/rm.json" "$T"
got=$(($(json_num "$W/rm.json" files) + $(json_num "$W/rm.json" directories)))
[ $lastrc = 0 ] && [ ! -e "$T" ] && expect_eq "rm stopped by SIGINT then kill -9 three times: files + directories of the whole job = entries of the tree" "$want" "$got" ||
	fail "rm resumed: exit $lastrc, $T $([ -e "$T" ] && echo still there)"
grep -q 'whole job' "$W/run.out" && ok "rm's resumed summary says its counts are the whole job's" || fail "rm summary: $(cat "$W/run.out")"

# the same without --rate, killed at once again and again: an unlink cut from its count is counted
T=$W/rmtree2
"$MYRIAD" fill -n 50000 --fanout 50 --no-state "$T" >/dev/null 2>&1
want=$(find "$T" | wc -l)
for i in 1 2 3 4 5; do
	[ -e "$T" ] || break
	"$MYRIAD" rm --state "$W/rst2" --rate 20000 --checkpoint-interval 0.05 --json "$W/rm2.json" "$T" >/dev/null 2>&1 &
	pid=$!
	sleep "0.$((1 + RANDOM % 3))"
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
done
[ -e "$T" ] && "$MYRIAD" rm --state "$W/rst2" --json "$W/rm2.json" "$T" >/dev/null 2>&1
expect_eq "rm killed outright again and again: whole-job total = entries of the tree" "$want" \
	"$(($(json_num "$W/rm2.json" files) + $(json_num "$W/rm2.json" directories)))"

# rm --dry-run stopped and resumed: it walks again from the operands, and counts each entry once
T=$W/drtree
"$MYRIAD" fill -n 20000 --fanout 100 --no-state "$T" >/dev/null 2>&1
want=$(find "$T" | wc -l)
nruns=0 lastrc=
interrupt "$MYRIAD" rm --dry-run --state "$W/drst" --rate 8000 --checkpoint-interval 0.2 --json "$W/dr.json" "$T"
finish "$MYRIAD" rm --dry-run --state "$W/drst" --json "$W/dr.json" "$T"
expect_eq "rm --dry-run stopped by SIGINT and resumed: each entry counted once" "$want" \
	"$(($(json_num "$W/dr.json" files) + $(json_num "$W/dr.json" directories)))"

# fill, on an empty DIR: every file is created by the job
F=$W/fill2
nruns=0 lastrc=
for i in 1 2 3 4; do interrupt "$MYRIAD" fill -n 20000 --fanout 100 --state "$W/fst2" --rate 6000 --checkpoint-interval 0.2 --json "$W/fill.json" "$F"; done
finish "$MYRIAD" fill -n 20000 --fanout 100 --state "$W/fst2" --json "$W/fill.json" "$F"
expect_eq "fill stopped by SIGINT then kill -9 three times: created, already there = whole job's" "0 20000 0" \
	"$lastrc $(json_num "$W/fill.json" created) $(json_num "$W/fill.json" already_there)"
# ... and on a DIR a stateless fill had begun: already there = the files there before the job
F=$W/fill3
"$MYRIAD" fill -n 20000 --fanout 100 --no-state --rate 8000 "$F" >/dev/null 2>&1 &
pid=$!
sleep 0.5
kill -INT $pid
wait $pid
before=$(find "$F" -type f -name 'f*' | wc -l)
nruns=1 lastrc=
for i in 1 2; do interrupt "$MYRIAD" fill -n 20000 --fanout 100 --state "$W/fst3" --rate 6000 --checkpoint-interval 0.2 --json "$W/fill3.json" "$F"; done
finish "$MYRIAD" fill -n 20000 --fanout 100 --state "$W/fst3" --json "$W/fill3.json" "$F"
expect_eq "fill resumed on a DIR with $before files before the job: created = N - already there" \
	"$((20000 - before)) $before" "$(json_num "$W/fill3.json" created) $(json_num "$W/fill3.json" already_there)"

# copy
C=$W/csrc
"$MYRIAD" fill -n 20000 --fanout 100 -s 0-2k --no-state "$C" >/dev/null 2>&1
ln -s f1 "$C/d0/link1"
ln -s f2 "$C/d0/link2"
nfiles=$(find "$C" -type f | wc -l)
nbytes=$(find "$C" -type f -printf '%s\n' | awk '{s += $1} END {print s}')
nruns=0 lastrc=
for i in 1 2 3 4; do interrupt "$MYRIAD" copy --state "$W/cst" --rate 8000 --checkpoint-interval 0.2 --json "$W/copy.json" "$C" "$W/cdst2"; done
finish "$MYRIAD" copy --state "$W/cst" --json "$W/copy.json" "$C" "$W/cdst2"
expect_eq "copy stopped by SIGINT then kill -9 three times: files, bytes, symlinks copied = the whole job's" \
	"0 $nfiles $nbytes 2" \
	"$lastrc $(json_num "$W/copy.json" files) $(json_num "$W/copy.json" bytes) $(json_num "$W/copy.json" symlinks)"
grep -q 'whole job' "$W/run.out" && ok "copy's resumed summary says which counts are the whole job's" ||
	fail "copy summary: $(cat "$W/run.out")"
