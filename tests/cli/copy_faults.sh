# copy on a source that misbehaves, through the fault-injecting filesystem: a file that grows while
# it is copied is reported and left without its mtime, so the next run copies it again; entries
# that fail in a run that is stopped and resumed are reported once by the final run.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
export XDG_STATE_HOME=$S/state
B=$S/dst

if ! is_root || [ ! -e /dev/fuse ]; then
	skip "faultfs needs root and /dev/fuse"
	exit 0
fi

# A file that grows while copy reads it: faultfs holds the first read of it until the test, having
# appended to the file, releases it with SIGUSR2.
FB=$S/fbacking
mkdir -p "$FB/t/d"
head -c 200000 /dev/urandom >"$FB/t/grow"
echo steady >"$FB/t/d/steady"
mount_faultfs "$FB" "$S/m" --pidfile "$S/fpid" --rule 'read:/t/grow:hold' || fail "faultfs did not mount"
"$MYRIAD" copy --errors "$S/errs" "$S/m/t" "$B" >/dev/null 2>"$S/err" &
pid=$!
for _ in $(seq 100); do [ -e "$B/grow" ] && break; sleep 0.05; done # created, its read held
sleep 0.2
head -c 1000 /dev/urandom >>"$FB/t/grow"
# File times come from a coarse clock (a tick of a few ms): released at once, the copy's writes on
# an idle machine could share the append's tick, giving the copy the source's mtime by chance.
sleep 0.05
kill -USR2 "$(cat "$S/fpid")"
wait $pid
expect_eq "source grew while copied: exit 1" 1 $?
grep -q "changed while copied: $S/m/t/grow" "$S/err" && ok "source grew while copied: reported with its path" ||
	fail "stderr: $(head -3 "$S/err")"
expect_eq "source grew while copied: one line in --errors" 1 "$(grep -c 'changed while copied' "$S/errs")"
[ "$(stat -c %Y.%y "$B/grow")" != "$(stat -c %Y.%y "$FB/t/grow")" ] &&
	ok "source grew while copied: its copy has no mtime of the source (left incomplete)" ||
	fail "the copy of a changed file got the source's mtime"
expect_eq "source grew while copied: the rest is copied" steady "$(cat "$B/d/steady")"
"$MYRIAD" copy --json "$S/j2" "$S/m/t" "$B" >/dev/null 2>&1
expect_eq "the next run: exit 0, copies that file again (1 file)" "0 1" "$? $(json_num "$S/j2" files)"
cmp -s "$FB/t/grow" "$B/grow" && [ "$(stat -c %y "$B/grow")" = "$(stat -c %y "$FB/t/grow")" ] &&
	ok "the next run: its data and mtime match the source" || fail "the next run: $B/grow differs"
fusermount3 -u "$S/m"
rm -rf "$B" "$S/state" "$FB" "$S/errs"

# Failed entries, a run stopped (SIGTERM) after the first failure and resumed: the final run
# reports each failed entry once, in its count and in the --errors file.
"$MKTREE" "$FB/t" --files 300 --fanout 10 --size 100 >/dev/null
mount_faultfs "$FB" "$S/m" --rule 'open:/t/d1/d2/f2:EIO' --rule 'open:/t/d2/d8/f8:EACCES' ||
	fail "faultfs did not mount"
"$MYRIAD" copy --rate 100 --checkpoint-interval 0.1 --errors "$S/errs" --json "$S/j1" "$S/m/t" "$B" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 200); do [ -s "$S/errs" ] && break; sleep 0.05; done
kill -TERM $pid
wait $pid
rc=$?
first=$(wc -l <"$S/errs")
"$MYRIAD" copy --errors "$S/errs" --json "$S/j" "$S/m/t" "$B" >/dev/null 2>&1
expect_eq "stopped after a failure ($first in --errors), resumed: exit 3 then 1" "3 1" "$rc $?"
expect_eq "resumed: each failed entry once in --errors" \
	"$S/m/t/d1/d2/f2 $S/m/t/d2/d8/f8" "$(grep -o '"path":"[^"]*"' "$S/errs" | cut -d'"' -f4 | sort | xargs)"
expect_eq "resumed: the summary counts them once, over 2 sessions" "2 2" \
	"$(json_num "$S/j" errors) $(json_num "$S/j" sessions)"
expect_eq "resumed: everything else is copied" 298 "$(find "$B" -type f | wc -l)"
waited=$(json_num "$S/j1" rate_throttle_wait_s)
awk -v w="$waited" 'BEGIN { exit !(w > 0.1) }' && ok "--json: the time the --rate throttle held the copy ($waited s)" ||
	fail "--json rate_throttle_wait_s: [$waited]"
