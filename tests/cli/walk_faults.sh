# walk on a failing filesystem (tests/faultfs): an EIO or EACCES subtree is reported with path,
# operation and reason, the rest is walked, nothing is retried, exit 1; entries typed DT_UNKNOWN
# are typed correctly through statx; a walk with an operation stuck in the kernel still stops on
# SIGINT within a second.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
export XDG_STATE_HOME=$S/state
if ! is_root || [ ! -e /dev/fuse ]; then
	skip "faultfs needs root and /dev/fuse"
	exit 0
fi
B=$S/backing
"$MKTREE" "$B/t" --files 2000 --fanout 100
make_hostile_tree "$B/h"
rm -rf "$B"/h/L1L1* # FUSE's high-level API cannot reach paths longer than PATH_MAX
total=$(find "$B" -printf x | wc -c)
in_d3=$(find "$B/t/d3" -printf x | wc -c)
in_d5=$(find "$B/t/d5" -mindepth 1 -printf x | wc -c)

M=$S/m1
mount_faultfs "$B" "$M" --rule 'opendir:/t/d3:EIO' --rule 'readdir:/t/d5:EIO' --stats "$S/stats1" ||
	{ fail "faultfs did not mount"; exit 0; }
"$MYRIAD" walk --no-state --errors "$S/errs.jsonl" --json "$S/j1" "$M" >/dev/null 2>"$S/err"
expect_eq "EIO: exit 1" 1 $?
grep -q "t/d3: open: Input/output error" "$S/err" && ok "EIO on open: reported with path, operation, reason" ||
	fail "EIO on open: stderr: $(cat "$S/err")"
grep -q "t/d5: readdir: Input/output error" "$S/err" && ok "EIO on readdir: reported with path, operation, reason" ||
	fail "EIO on readdir: stderr: $(cat "$S/err")"
# d3 itself is listed (found in its parent), its 100 files are not; d5's entries are not.
expect_eq "EIO: everything else is walked" $((total - (in_d3 - 1) - in_d5)) "$(json_num "$S/j1" entries)"
expect_eq "EIO: the summary counts 2 errors" 2 "$(json_num "$S/j1" errors)"
expect_eq "--errors holds one JSON line per failure" 2 "$(grep -c '"errno":5' "$S/errs.jsonl")"
grep -q '"op":"open"' "$S/errs.jsonl" && grep -q '"op":"readdir"' "$S/errs.jsonl" &&
	ok "--errors lines name the operation" || fail "--errors: $(cat "$S/errs.jsonl")"
fusermount3 -u "$M"
sleep 0.2
expect_eq "no retries: the failing opendir was tried once" "1" "$(awk '$1 == "fail" && $2 == "opendir" {print $3}' "$S/stats1")"
expect_eq "no retries: the failing readdir was tried once" "1" "$(awk '$1 == "fail" && $2 == "readdir" {print $3}' "$S/stats1")"

M=$S/m2
mount_faultfs "$B" "$M" --rule 'opendir:/t/d7:EACCES' || { fail "faultfs did not mount"; exit 0; }
"$MYRIAD" walk --no-state "$M" >/dev/null 2>"$S/err"
expect_eq "EACCES: exit 1" 1 $?
grep -q "t/d7: open: Permission denied" "$S/err" && ok "EACCES: reported" || fail "EACCES: stderr: $(cat "$S/err")"

# DT_UNKNOWN: types come from statx and match the backing tree's.
M=$S/m3
mount_faultfs "$B" "$M" --dt-unknown || { fail "faultfs did not mount"; exit 0; }
"$MYRIAD" walk --no-state --json "$S/j3" "$M" >/dev/null 2>"$S/err"
expect_eq "DT_UNKNOWN: exit 0" 0 $?
expect_eq "DT_UNKNOWN: counts by type equal find's on the backing tree" "$(find_counts "$B")" "$(walk_counts "$S/j3")"
"$MYRIAD" walk --no-state --type l --print "$M/h" 2>/dev/null | sed "s|^$M|$B|" | sort >"$S/l1"
find "$B/h" -type l | sort >"$S/l2"
check "DT_UNKNOWN: --type l finds exactly the symlinks" cmp -s "$S/l1" "$S/l2"

# DT_UNKNOWN and a stat that fails (a failing disk): the name was read from its directory, so the
# entry is listed and counted, as find lists it, while the failure is reported (once per entry).
# Before, such entries vanished from the listing and the counts.
M=$S/m5
mount_faultfs "$B" "$M" --dt-unknown --rule 'getattr:/t/d4/f*:EIO' || { fail "faultfs did not mount"; exit 0; }
n_d4=$(find "$B/t/d4" -mindepth 1 -printf x | wc -c)
"$MYRIAD" walk --no-state --print --json "$S/j5" --errors "$S/e5" "$M/t" >"$S/p5" 2>"$S/err"
expect_eq "DT_UNKNOWN, stat fails: exit 1" 1 $?
expect_eq "DT_UNKNOWN, stat fails: every name is listed" "$(find "$B/t" -printf x | wc -c)" "$(wc -l <"$S/p5")"
expect_eq "DT_UNKNOWN, stat fails: and counted" "$(find "$B/t" -printf x | wc -c)" "$(json_num "$S/j5" entries)"
expect_eq "DT_UNKNOWN, stat fails: counted as of unknown type" "$n_d4" "$(json_num "$S/j5" unknown)"
expect_eq "DT_UNKNOWN, stat fails: one error per entry, summary = --errors" "$n_d4 $n_d4" \
	"$(json_num "$S/j5" errors) $(grep -c '"op":"stat"' "$S/e5")"
"$MYRIAD" walk --no-state --type f --print "$M/t/d4" >"$S/p5f" 2>/dev/null
expect_eq "DT_UNKNOWN, stat fails: --type f matches none of them (as find -type f)" 0 "$(wc -l <"$S/p5f")"
fusermount3 -u "$M"

# An operation held in the kernel: the others go on, and SIGINT still stops the walk at once.
M=$S/m4
mount_faultfs "$B" "$M" --rule 'opendir:/t/d9:hold,count=1' || { fail "faultfs did not mount"; exit 0; }
ffpid=$(pgrep -f "faultfs.*$M" | head -1)
"$MYRIAD" walk --progress 1 --json "$S/j4" --state "$S/st4" "$M" >/dev/null 2>"$S/err" &
pid=$!
sleep 6.5
t0=$(date +%s%N)
kill -INT $pid
wait $pid
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
expect_eq "held opendir: SIGINT gives exit 3" 3 $rc
[ $ms -lt 1000 ] && ok "held opendir: stopped within a second ($ms ms)" || fail "held opendir: took $ms ms"
grep -q "1 worker without progress, longest [0-9]* s in $M/t/d9" "$S/err" &&
	ok "held opendir: the progress line names the stuck directory" || fail "progress: $(tail -2 "$S/err")"
expect_eq "held opendir: all but the held directory was walked first" $((total - 100)) "$(json_num "$S/j4" entries)"
[ -n "$ffpid" ] && kill -USR2 "$ffpid"
"$MYRIAD" walk --json "$S/j4" --state "$S/st4" "$M" >/dev/null 2>&1
expect_eq "held opendir: released, the resumed walk completes with every entry" "$total" "$(json_num "$S/j4" entries)"
fusermount3 -u "$M"

# One slow directory is not one worker's job: with every stat delayed (a network filesystem), idle
# workers stat the entries of the directory another worker reads. The delayed stats overlap
# (faultfs counts how many sleep at once: before, always 1), and the result is the same: every
# name listed once, each failed stat reported once with its path. Before, -j 8 went no faster
# than -j 1 in a directory of 4,500 entries with 1 ms per operation.
mkdir -p "$B/one"
for i in $(seq 0 199); do printf x >"$B/one/f$i"; done
M=$S/m6
mount_faultfs "$B" "$M" --stats "$S/stats6" --rule 'getattr:/one/f1[0-9]:EIO' --rule 'getattr:/one/f*:delay=10' ||
	{ fail "faultfs did not mount"; exit 0; }
"$MYRIAD" walk --no-state --stat -j 4 --print --json "$S/j6" --errors "$S/e6" "$M/one" >"$S/p6" 2>"$S/err"
expect_eq "slow directory: exit 1 (the failed stats)" 1 $?
fusermount3 -u "$M"
for ((i = 0; i < 50; i++)); do grep -q delayed_max "$S/stats6" 2>/dev/null && break; sleep 0.1; done # written at exit
most=$(awk '$1 == "delayed_max" { print $2 }' "$S/stats6")
[ "${most:-0}" -ge 3 ] && ok "slow directory: -j 4 has its stats in flight together (at most $most at once)" ||
	fail "slow directory: stats in flight at once: ${most:-none} (want 3 or more of 4 workers)"
expect_eq "slow directory: every name listed once" "$( (echo "$M/one"; for i in $(seq 0 199); do echo "$M/one/f$i"; done) | sort)" \
	"$(sort "$S/p6")"
expect_eq "slow directory: each failed stat reported once (summary, --errors)" "10 10" \
	"$(json_num "$S/j6" errors) $(grep -c '"op":"stat"' "$S/e6")"
expect_eq "slow directory: the failures are f10..f19, with their paths" "$(for i in $(seq 10 19); do echo "$M/one/f$i"; done | sort)" \
	"$(grep -o "$M/one/f[0-9]*" "$S/e6" | sort)"
expect_eq "slow directory: the sizes of the 190 statted files (1 byte each) and the directory counted" \
	$((190 + $(stat -c %s "$B/one"))) "$(json_num "$S/j6" apparent_bytes)"
