# fill's guards: it never writes through a link planted in its tree (the manifest's temporary
# file, a file's or a directory's path, the manifest itself), reports what is in its way and goes
# on without claiming completeness; and a re-run never claims what is not so (a leaf removed by hand
# after a kill -9, or after the fill had completed, is made again). Everything runs in a sandbox.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
export XDG_STATE_HOME=$S/state
if ! sandbox 512m; then
	skip "fill guards: no sandbox (needs root for a tmpfs of its own)"
	exit 0
fi

victim() { echo "precious data" >"$1"; }
intact() { [ "$(cat "$1")" = "precious data" ]; }

# A symlink named as the manifest's temporary file, in an otherwise empty DIR.
mkdir t1
victim victim1
ln -s ../victim1 t1/.myriad-fill.tmp
"$MYRIAD" fill -n 10 t1 >/dev/null 2>err
expect_eq "planted .myriad-fill.tmp link in an empty DIR: refused (exit 2)" 2 $?
intact victim1 && ok "planted .myriad-fill.tmp link: the file it points to is untouched" ||
	fail "victim1 now: $(head -c 200 victim1)"
expect_eq "planted .myriad-fill.tmp link: nothing made in DIR" ".myriad-fill.tmp" "$(ls -A t1)"

# A symlink named lost+found is not the filesystem's lost+found.
mkdir t2
ln -s ../victim1 t2/lost+found
"$MYRIAD" fill -n 10 t2 >/dev/null 2>&1
expect_eq "a link named lost+found: DIR is not empty (exit 2)" 2 $?

# The manifest itself a symlink (to a real manifest elsewhere): not this tree's, refused.
"$MYRIAD" fill -n 10 t3real >/dev/null 2>&1
mkdir t3
ln -s ../t3real/.myriad-fill t3/.myriad-fill
"$MYRIAD" fill -n 10 t3 >/dev/null 2>err
expect_eq "manifest a symlink: fill refuses (exit 2)" "2 " "$? $(ls t3 | tr '\n' ' ')"
grep -q "not a usable fill manifest: a symbolic link" err && ok "manifest a symlink: says so" ||
	fail "message: $(cat err)"
"$MYRIAD" verify t3 >/dev/null 2>&1
expect_eq "manifest a symlink: verify refuses (exit 2)" 2 $?

# An unfinished fill (SIGINT), then links planted where the re-run writes.
"$MYRIAD" fill -n 6000 --fanout 100 -s 1k --rate 2000 t4 >/dev/null 2>&1 &
pid=$!
sleep 0.6
kill -INT $pid
wait $pid
expect_eq "setup: fill stopped by SIGINT (exit 3)" 3 $?
victim victim4
victim victim5
victim victim6
victim victim7
mkdir -p outdir t4/d55 t4/d57 t4/d58 t4/d59
ln -s ../victim4 t4/.myriad-fill.tmp
ln -s ../../victim5 t4/d55/f5510                  # a symlink where a file goes
ln victim6 t4/d57/f5720                           # a hard link where a file goes
mkfifo t4/d58/f5830                                # a FIFO: opening it for writing would hang
ln -s ../outdir t4/d56                             # a symlink where a directory goes
timeout 60 "$MYRIAD" fill -n 6000 --fanout 100 -s 1k --errors errs4 t4 >out4 2>err4
rc=$?
expect_eq "links in the way: the fill goes on to the end, exit 1" 1 $rc
intact victim4 && ok "links in the way: the manifest is not written through .myriad-fill.tmp" ||
	fail "victim4 now: $(head -c 200 victim4)"
intact victim5 && ok "links in the way: a symlink at a file's path is not written through" ||
	fail "victim5 now: $(head -c 200 victim5)"
intact victim6 && ok "links in the way: a hard link at a file's path is not rewritten" ||
	fail "victim6 now: $(head -c 200 victim6)"
expect_eq "links in the way: nothing made in the directory a planted link points to" "" "$(ls -A outdir)"
grep -q "t4/.myriad-fill.tmp: a symbolic link, not a file fill left: refusing" err4 &&
	ok "links in the way: the planted temporary file is named" || fail "stderr: $(cat err4)"
expect_eq "links in the way: each entry reported once, with its path" \
	"t4/d55/f5510 t4/d56 t4/d57/f5720 t4/d58/f5830" \
	"$(sed -E 's/^\{"path":"([^"]*)".*/\1/' errs4 | sort | tr '\n' ' ' | sed 's/ $//')"
grep -q "^fill incomplete: 5,897 files" out4 && grep -q "103 files not made" out4 &&
	ok "links in the way: summary says incomplete, counts the files made and those not" ||
	fail "summary: $(cat out4)"
grep -q "^status incomplete" t4/.myriad-fill && ok "links in the way: the manifest says incomplete" ||
	fail "manifest: $(cat t4/.myriad-fill)"
"$MYRIAD" verify --quick t4 >/dev/null 2>&1
expect_eq "links in the way: verify says not OK" 1 $?
expect_eq "links in the way: every other directory filled" 5897 "$(find t4 -type f -name 'f*' -links 1 | wc -l)"

# The entries removed, the same command completes the fill.
rm t4/.myriad-fill.tmp t4/d55/f5510 t4/d57/f5720 t4/d58/f5830 t4/d56
"$MYRIAD" fill -n 6000 --fanout 100 -s 1k t4 >out 2>&1
expect_eq "in the way no more: the re-run completes (exit 0)" 0 $?
"$MYRIAD" verify t4 >/dev/null 2>&1
expect_eq "in the way no more: verify OK" 0 $?

# Each alone (the fill above stopped at its first one before this change): a hard link, then a FIFO.
for kind in hardlink fifo; do
	"$MYRIAD" fill -n 2000 --fanout 100 -s 1k --rate 500 "t-$kind" >/dev/null 2>&1 &
	pid=$!
	sleep 0.3
	kill -INT $pid
	wait $pid
	mkdir -p "t-$kind/d15"
	victim "victim-$kind"
	if [ $kind = hardlink ]; then ln "victim-$kind" "t-$kind/d15/f1550"; else mkfifo "t-$kind/d15/f1550"; fi
	timeout 30 "$MYRIAD" fill -n 2000 --fanout 100 -s 1k "t-$kind" >/dev/null 2>&1
	expect_eq "a $kind alone at a file's path: reported, the rest made (exit 1)" 1 $?
	[ $kind = fifo ] || { intact "victim-$kind" && ok "a hard link alone at a file's path: not rewritten" ||
		fail "victim-$kind now: $(head -c 100 "victim-$kind")"; }
done

# A symlink planted where an upper directory goes: its whole subtree is left out, reported once.
"$MYRIAD" fill -n 20000 --fanout 100 t5 --rate 4000 >/dev/null 2>&1 &
pid=$!
sleep 0.5
kill -INT $pid
wait $pid
mkdir -p outdir2
rm -rf t5/d1
ln -s ../outdir2 t5/d1
"$MYRIAD" fill -n 20000 --fanout 100 --errors errs5 t5 >/dev/null 2>&1
expect_eq "link at an upper directory: exit 1" 1 $?
expect_eq "link at an upper directory: nothing made where it points" "" "$(ls -A outdir2)"
expect_eq "link at an upper directory: reported once" '{"path":"t5/d1","op":"open"' "$(cut -d, -f1,2 errs5)"
expect_eq "link at an upper directory: the rest filled" 10000 "$(find t5 -type f -name 'f*' | wc -l)"

# kill -9, a leaf removed by hand, the same command: the leaf is made again, the count is true.
"$MYRIAD" fill -n 6000 --fanout 100 --rate 3000 --checkpoint-interval 0.05 t6 >/dev/null 2>&1 &
pid=$!
sleep 1.2
kill -9 $pid
wait $pid 2>/dev/null
expect_eq "setup: the first leaf was complete before the kill" 100 "$(ls t6/d0 | wc -l)"
rm -rf t6/d0
"$MYRIAD" fill -n 6000 --fanout 100 --json j6 t6 >out6 2>&1
expect_eq "kill -9, leaf removed: the re-run exits 0" 0 $?
"$MYRIAD" verify t6 >/dev/null 2>&1
expect_eq "kill -9, leaf removed: verify OK" 0 $?
expect_eq "kill -9, leaf removed: the JSON counts every file once, 100 made again" "6000 100" \
	"$(json_num j6 files) $(json_num j6 remade)"
grep -q "re-checked the last file of the .* done before this run: .* 100 files made again" out6 &&
	ok "kill -9, leaf removed: the summary says what was made again" || fail "summary: $(cat out6)"

# The fill complete (no state left), then a leaf and a leaf's last file removed: the same command
# re-checks, makes them again; with nothing lost it says so.
rm -rf t6/d7
rm t6/d9/f999
"$MYRIAD" fill -n 6000 --fanout 100 t6 >out 2>&1
expect_eq "complete, then files removed: the re-run exits 0" 0 $?
grep -q "complete (6000 files): 101 files lost since" out && ok "complete, then files removed: says it made 101 again" ||
	fail "output: $(cat out)"
"$MYRIAD" verify t6 >/dev/null 2>&1
expect_eq "complete, then files removed: verify OK" 0 $?
"$MYRIAD" fill -n 6000 --fanout 100 t6 >out 2>&1
grep -q "nothing to do" out && ok "complete and intact: nothing to do" || fail "output: $(cat out)"
