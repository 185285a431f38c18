# copy reproduces a tree exactly (every file type, hostile names, a path longer than PATH_MAX,
# holes, hard links, xattrs, ACLs), skips what is done, resumes after kill -9, reports what it
# cannot read and copies the rest, stops cleanly when DST is full, and holds --bwlimit.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
export XDG_STATE_HOME=$S/state
A=$S/src
B=$S/dst

make_hostile_tree "$A"
"$MKTREE" "$A/data" --files 2000 --fanout 40 --size 3000 >/dev/null
truncate -s 100M "$A/sparse"
printf 'middle' | dd of="$A/sparse" bs=1 seek=52428800 conv=notrunc status=none
ln "$A/sub/with-data" "$A/hard1"
ln "$A/sub/with-data" "$A/data/hard2"
chmod 0751 "$A/sub"
chmod 4755 "$A/sub/f1"
if is_root; then chown 123:456 "$A/sub/deeper/f2"; fi
have_xattr=no
if command -v setfattr >/dev/null && setfattr -n user.color -v blue "$A/file" 2>/dev/null; then
	setfattr -n user.dir -v yes "$A/sub"
	have_xattr=yes
fi
have_acl=no
if command -v setfacl >/dev/null && setfacl -m u:nobody:r "$A/sub/with-data" 2>/dev/null; then
	setfacl -d -m g:nogroup:rx "$A/sub" && have_acl=yes
fi
touch -d '2001-02-03 04:05:06.123456789' "$A/sub/deeper" "$A/data/d3"

"$MYRIAD" copy --json "$S/c.json" "$A" "$B" >/dev/null 2>"$S/err"
expect_eq "copy: exit 0" 0 $?
same_tree "$A" "$B" && ok "copy: identical by digest (types, names, long path, modes, owners, times ns, data, xattrs)" ||
	fail "copy: digests differ"
out=$(rsync_diff "$A" "$B")
expect_eq "copy: rsync -naHAXc --delete lists nothing" "" "$out"
expect_eq "copy: the long path's file is there" 1 "$(find "$B" -name deepfile | wc -l)"
blocks=$(stat -c %b "$B/sparse")
[ "$blocks" -lt 1024 ] && ok "copy: sparse file stays sparse ($blocks blocks)" || fail "sparse file has $blocks blocks"
expect_eq "copy: sparse file data" "middle" "$(dd if="$B/sparse" bs=1 skip=52428800 count=6 status=none)"
expect_eq "copy: hard links share one inode" 1 \
	"$(stat -c %i "$B/sub/with-data" "$B/hard1" "$B/data/hard2" | sort -u | wc -l)"
expect_eq "copy: JSON counts files" 1 "$(grep -c '"files":[1-9]' "$S/c.json")"
# SRC and DST on one filesystem: no read-ahead, copy_file_range may share blocks (a reflink).
expect_eq "copy: within one filesystem nothing is read ahead" 0 "$(json_num "$S/c.json" files_read_ahead)"
if [ $have_xattr = yes ]; then
	expect_eq "copy: xattr" blue "$(getfattr --only-values -n user.color "$B/file" 2>/dev/null)"
else skip "xattrs: setfattr missing or unsupported"; fi
if [ $have_acl = yes ]; then
	expect_eq "copy: ACLs (access and default)" "$(getfacl -p "$A/sub/with-data" "$A/sub" 2>/dev/null | sed "s|$A|X|")" \
		"$(getfacl -p "$B/sub/with-data" "$B/sub" 2>/dev/null | sed "s|$B|X|")"
else skip "ACLs: setfacl missing or unsupported"; fi

"$MYRIAD" copy --json "$S/c2.json" "$A" "$B" >/dev/null 2>&1
expect_eq "second run: exit 0, nothing copied" "0 0" "$? $(json_num "$S/c2.json" files)"
"$MYRIAD" copy --check "$A" "$B" >/dev/null 2>&1
expect_eq "--check on equal trees: exit 0" 0 $?
changed=$(cd "$B" && find data -type f | sort | head -1)
printf 'x' >>"$B/$changed"
touch "$B/extra"
"$MYRIAD" copy --check "$A" "$B" >/dev/null 2>"$S/err"
expect_eq "--check after a change: exit 1" 1 $?
grep -q "$changed" "$S/err" && grep -q "extra.*$B/extra" "$S/err" && ok "--check: lists the changed file and the extra one" ||
	fail "--check: $(head -3 "$S/err")"
"$MYRIAD" copy "$A" "$B" >/dev/null 2>&1
[ -e "$B/extra" ] && ok "without --delete: an extra DST file stays" || fail "extra file removed without --delete"
# (--delete: copy_delete.sh, in a tmpfs of its own.)
"$MYRIAD" copy --dry-run "$A" "$S/dry" >/dev/null 2>&1
expect_eq "--dry-run: exit 0, writes nothing" "0 no" "$? $([ -e "$S/dry" ] && echo yes || echo no)"

# New files are made with their mode and owner where the DST directory gives them exactly that (an
# empty, plain directory: no chmod or chown needed), and get them set where it does not: a umask
# that takes bits away, setuid/setgid/sticky bits, a DST directory with a default ACL or the
# setgid bit and another group. Holes at the end, and files as dense as their size.
M=$S/modes
mkdir -p "$M/plain"
for m in 0000 0444 0600 0640 0666 0777 2755 4711 1644; do
	printf '%s' "$m" >"$M/plain/m$m"
	chmod "$m" "$M/plain/m$m"
done
head -c 4096 /dev/urandom >"$M/plain/tail-hole" && truncate -s 1M "$M/plain/tail-hole"
head -c 8192 /dev/urandom >"$M/plain/dense"
: >"$M/plain/empty"
if is_root; then chown 123:456 "$M/plain/m0640"; fi
(umask 022 && "$MYRIAD" copy "$M" "$S/m1" >/dev/null 2>"$S/err")
expect_eq "modes, umask 022: exit 0" 0 $?
same_tree "$M" "$S/m1" && ok "modes, umask 022: every mode, owner and size as in SRC" ||
	fail "modes, umask 022: $(cd "$S/m1/plain" && stat -c '%n %a %U %G %s' * | tr '\n' ' ')"
b=$(stat -c %b "$S/m1/plain/tail-hole")
expect_eq "a hole at the end: the size kept" 1048576 "$(stat -c %s "$S/m1/plain/tail-hole")"
[ "$b" -lt 100 ] && ok "a hole at the end stays a hole ($b blocks)" || fail "tail hole: $b blocks"
if command -v setfacl >/dev/null && mkdir "$S/m2" && setfacl -d -m u::rwx,g::---,o::--- "$S/m2" 2>/dev/null; then
	chmod 2775 "$S/m2"
	if is_root; then chgrp 789 "$S/m2"; fi
	"$MYRIAD" copy "$M" "$S/m2" >/dev/null 2>"$S/err"
	expect_eq "into a DST with a default ACL and setgid: exit 0" 0 $?
	expect_eq "into a DST with a default ACL and setgid: the files' modes and groups are SRC's" \
		"$(cd "$M/plain" && stat -c '%n %a %G' * | sort)" "$(cd "$S/m2/plain" && stat -c '%n %a %G' * | sort)"
else skip "default ACL on DST: setfacl missing or unsupported"; fi
rm -rf "$M" "$S/m1" "$S/m2"

# Refusals: exit 2, nothing written.
"$MYRIAD" copy "$S/missing" "$S/r1" 2>/dev/null
expect_eq "missing SRC: exit 2, nothing made" "2 no" "$? $([ -e "$S/r1" ] && echo yes || echo no)"
"$MYRIAD" copy "$A" "$A/inside" 2>/dev/null
expect_eq "DST inside SRC: exit 2, nothing made" "2 no" "$? $([ -e "$A/inside" ] && echo yes || echo no)"
"$MYRIAD" copy "$A" "$A/" 2>/dev/null
expect_eq "SRC equal to DST: exit 2" 2 $?
rm -rf "$B"

# kill -9 at random moments, then the same command: identical.
R=$S/big
"$MKTREE" "$R" --files 20000 --fanout 100 --size 2000 >/dev/null
for i in 1 2 3 4; do
	"$MYRIAD" copy --rate 20k --checkpoint-interval 0.05 "$R" "$B" >/dev/null 2>&1 &
	pid=$!
	sleep 0.$((RANDOM % 5 + 2))
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
done
"$MYRIAD" copy "$R" "$B" >/dev/null 2>&1
expect_eq "kill -9 then the same command: exit 0" 0 $?
same_tree "$R" "$B" && ok "kill -9 then the same command: identical" || fail "kill -9: trees differ"
expect_eq "no state is left behind" "" "$(ls "$S/state/myriad" 2>/dev/null)"
rm -rf "$B"

# A relative DST lies under the working directory: the same words typed elsewhere are another job,
# and each resumes its own.
mkdir -p "$S/w1" "$S/w2"
(cd "$S/w1" && exec "$MYRIAD" copy --rate 5k "$R" dst) >/dev/null 2>&1 &
pid=$!
sleep 0.5
kill -INT $pid
wait $pid
expect_eq "relative DST: SIGINT gives exit 3" 3 $?
(cd "$S/w2" && "$MYRIAD" copy --json "$S/w2.json" "$R" dst) >/dev/null 2>&1
expect_eq "relative DST: the same command in another directory is a new job" "0 1" "$? $(json_num "$S/w2.json" sessions)"
(cd "$S/w1" && "$MYRIAD" copy --json "$S/w1.json" "$R" dst) >/dev/null 2>&1
expect_eq "relative DST: the stopped one then resumes its own state" "0 2" "$? $(json_num "$S/w1.json" sessions)"
same_tree "$R" "$S/w1/dst" && same_tree "$R" "$S/w2/dst" && ok "relative DST: both copies identical" ||
	fail "relative DST: trees differ"
expect_eq "relative DST: no state left behind" "" "$(ls "$S/state/myriad" 2>/dev/null)"
rm -rf "$R" "$S/w1" "$S/w2"

if is_root && [ -e /dev/fuse ]; then
	FB=$S/fbacking
	"$MKTREE" "$FB/t" --files 300 --fanout 10 --size 100 >/dev/null
	mount_faultfs "$FB" "$S/m" --rule 'open:/t/d2/d6/f6:EIO' || fail "faultfs did not mount"
	"$MYRIAD" copy --errors "$S/errs" "$S/m/t" "$B" >/dev/null 2>"$S/err"
	expect_eq "EIO on one source file: exit 1" 1 $?
	grep -q "$S/m/t/d2/d6/f6: open: Input/output error" "$S/err" && ok "EIO: path, operation, reason" ||
		fail "stderr: $(head -3 "$S/err")"
	expect_eq "EIO: one error in --errors" 1 "$(wc -l <"$S/errs")"
	expect_eq "EIO: everything else is copied" 299 "$(find "$B" -type f | wc -l)"
	rm -rf "$B"
	"$MYRIAD" copy --max-errors 1 "$S/m/t" "$B" >/dev/null 2>&1
	expect_eq "--max-errors 1: stops with exit 3" 3 $?
	fusermount3 -u "$S/m"
	rm -rf "$B" "$S/state"
else
	skip "faultfs needs root and /dev/fuse"
fi

# The read-ahead's edges: sizes around its 64 KiB limit, an empty file, a hard-linked small file,
# small sparse files, a symlink, a fifo, and more 60 KB files than its 1 MiB buffer holds, in one
# directory.
P=$S/pf
mkdir -p "$P/d"
for n in 0 1 4095 4096 65535 65536 65537 200000; do head -c "$n" /dev/urandom >"$P/d/size$n"; done
for i in $(seq 40); do head -c 60000 /dev/urandom >"$P/d/big$i"; done
ln "$P/d/size4096" "$P/d/linked"
truncate -s 64K "$P/d/hole"                                         # sparse: no data at all
printf abc | dd of="$P/d/tailhole" bs=1 seek=61440 conv=notrunc status=none # data after a hole
ln -s size1 "$P/d/sym"
mkfifo "$P/d/fifo"
MYRIAD_PREFETCH=on "$MYRIAD" copy --no-state --json "$S/pf.json" "$P" "$S/pfdst" >/dev/null 2>"$S/err"
expect_eq "read-ahead edges: exit 0" 0 $?
same_tree "$P" "$S/pfdst" && ok "read-ahead edges: identical by digest" || fail "read-ahead edges: digests differ"
expect_eq "read-ahead edges: hard link kept" "$(stat -c %i "$S/pfdst/d/size4096")" "$(stat -c %i "$S/pfdst/d/linked")"
expect_eq "read-ahead edges: small sparse files keep their holes (blocks in DST as in SRC)" \
	"$(stat -c %b "$P/d/hole" "$P/d/tailhole" | xargs)" "$(stat -c %b "$S/pfdst/d/hole" "$S/pfdst/d/tailhole" | xargs)"
ahead=$(json_num "$S/pf.json" files_read_ahead)
# 44 candidates (1 B .. 64 KiB, one link, no holes): at least a full buffer's worth (17 of 60 KB),
# and never a file over 64 KiB, an empty, sparse or linked one.
[ "$ahead" -ge 17 ] && [ "$ahead" -le 44 ] && ok "read-ahead edges: $ahead of 44 candidates read ahead" ||
	fail "read-ahead edges: files_read_ahead $ahead"

# Many workers under a small open-file limit: the read-ahead keeps to its share of fds (it held up
# to 64 per worker, and 32 workers under 256 fds failed thousands of opens).
"$MKTREE" "$S/fdsrc" --files 8000 --fanout 200 --size 1000 >/dev/null
(
	ulimit -n 256
	MYRIAD_PREFETCH=on exec "$MYRIAD" copy --no-state -j 32 --errors "$S/fd.errs" "$S/fdsrc" "$S/fddst"
) >/dev/null 2>&1
expect_eq "32 workers, 256 fds, read-ahead on: exit 0, no failure" "0 0" "$? $(wc -l <"$S/fd.errs")"
same_tree "$S/fdsrc" "$S/fddst" && ok "32 workers, 256 fds: identical" || fail "32 workers, 256 fds: trees differ"
rm -rf "$S/fdsrc" "$S/fddst"

if mount_image ext4 64M "$S/img" 2>/dev/null; then
	E=$S/esrc
	"$MKTREE" "$E" --files 40 --fanout 10 --size 1000000 >/dev/null
	dd if=/dev/zero of="$S/img/filler" bs=1M count=30 status=none
	"$MYRIAD" copy "$E" "$S/img/dst" >/dev/null 2>"$S/err"
	expect_eq "ENOSPC: stops with exit 3" 3 $?
	grep -q "out of space" "$S/err" && ok "ENOSPC: says so" || fail "stderr: $(head -3 "$S/err")"
	rm "$S/img/filler"
	"$MYRIAD" copy "$E" "$S/img/dst" >/dev/null 2>&1
	expect_eq "ENOSPC: after space is freed the same command completes" 0 $?
	same_tree "$E" "$S/img/dst" && ok "ENOSPC: then identical" || fail "ENOSPC: trees differ"
	# The same with small files only, which are read ahead in batches: the write that finds no
	# room is one of theirs.
	rm -rf "$S/img/dst" "$E"
	"$MKTREE" "$E" --files 3000 --fanout 100 --size 16384 >/dev/null
	dd if=/dev/zero of="$S/img/filler" bs=1M count=30 status=none
	"$MYRIAD" copy --json "$S/nospc.json" "$E" "$S/img/dst" >/dev/null 2>"$S/err"
	expect_eq "ENOSPC, small files read ahead: stops with exit 3" 3 $?
	ahead=$(json_num "$S/nospc.json" files_read_ahead)
	[ "${ahead:-0}" -gt 0 ] && ok "ENOSPC, small files read ahead: $ahead were" || fail "ENOSPC (small): files_read_ahead [$ahead]"
	rm "$S/img/filler"
	"$MYRIAD" copy "$E" "$S/img/dst" >/dev/null 2>&1
	expect_eq "ENOSPC, small files read ahead: after space is freed the same command completes" 0 $?
	same_tree "$E" "$S/img/dst" && ok "ENOSPC, small files read ahead: then identical" || fail "ENOSPC (small): trees differ"
	umount "$S/img"
else
	skip "ENOSPC: cannot mount an ext4 image here"
fi

# --bwlimit 20M on 200 MiB, timed with a final sync: within 10% of 10 s.
W=$S/bw
mkdir -p "$W"
for i in 1 2 3 4; do dd if=/dev/zero of="$W/f$i" bs=1M count=50 status=none; done
sync
t0=$(date +%s.%N)
"$MYRIAD" copy --bwlimit 20M --json "$S/bw.json" "$W" "$S/bwdst" >/dev/null 2>&1 && sync
t1=$(date +%s.%N)
rate=$(echo "$t0 $t1" | awk '{printf "%.2f", 200 / ($2 - $1)}')
awk -v r="$rate" 'BEGIN { exit !(r >= 18 && r <= 22) }' && ok "--bwlimit 20M: $rate MiB/s" ||
	fail "--bwlimit 20M: $rate MiB/s"
waited=$(json_num "$S/bw.json" bwlimit_throttle_wait_s)
awk -v w="$waited" 'BEGIN { exit !(w > 1) }' && ok "--json: the time the --bwlimit throttle held the copy ($waited s)" ||
	fail "--json bwlimit_throttle_wait_s: [$waited]"
