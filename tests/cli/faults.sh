# verify, rm and copy (faultfs as SRC and as DST) on a failing disk: every injected error is
# reported with path, operation and reason, everything else is processed, the exit status is 1,
# and no failed operation is tried twice (faultfs --stats). With an operation held in the kernel
# the other workers go on, the progress line names the stuck directory, SIGINT stops the run
# within a second (exit 3), and once released the same command completes.
# (walk on a failing disk: walk_faults.sh.)
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
export XDG_STATE_HOME=$S/state
if ! is_root || [ ! -e /dev/fuse ]; then
	skip "faultfs needs root and /dev/fuse"
	exit 0
fi

# ff_mount NAME BACKING MNT [faultfs options]: mount with --stats $S/NAME.stats, --pidfile $S/NAME.pid.
ff_mount() {
	local n=$1 b=$2 m=$3
	shift 3
	mount_faultfs "$b" "$m" --stats "$S/$n.stats" --pidfile "$S/$n.pid" "$@" || {
		fail "$n: faultfs did not mount"
		exit 0
	}
}
# ff_umount NAME MNT: unmount and wait until faultfs has written its final stats.
ff_umount() {
	local i
	fusermount3 -u "$2"
	for i in $(seq 50); do [ -e "$S/$1.pid" ] || return 0; sleep 0.1; done
}
# fails NAME: "op count" for each operation faultfs failed, sorted.
fails() { awk '$1 == "fail" {print $2, $3}' "$S/$1.stats" | sort | tr '\n' ' ' | sed 's/ $//'; }
# errors FILE: "path op-or-problem" for each line of an --errors file, sorted.
errors() { sed -E 's/^\{"path":"([^"]*)","(op|problem)":"([^"]*)".*/\1 \3/' "$1" | sort; }
# digest_except DIR LIST: md5 over the type, mode, size, mtime and contents of the entries of
# DIR named in LIST (relative paths, one a line). A missing entry shows up as a difference.
digest_except() {
	(
		cd "$1" || exit 1
		while IFS= read -r p; do
			stat -c '%n %F %a %s %Y' -- "$p" 2>&1
			[ -f "$p" ] && md5sum <"$p"
		done <"$2"
	) | md5sum | cut -d' ' -f1
}

# ---- verify ----
VB=$S/vb
mkdir -p "$VB"
"$MYRIAD" fill -n 300 --fanout 10 -s 100-3000 "$VB/t" >/dev/null
# fill's layout: leaf k holds f(10k)..f(10k+9) in d(k/10)/dk%10.
VM=$S/vm
# failing_verify TAG PREFETCH LABEL: verify on faultfs with MYRIAD_PREFETCH=PREFETCH (auto: not on
# FUSE; on: each leaf's files opened and read ahead through io_uring).
failing_verify() {
	ff_mount "$1" "$VB" "$VM" --direct-io --rule 'open:/t/d1/d3/f13[0-4]:EIO' --rule 'read:/t/d2/d4/f24[0-2]:EIO' \
		--rule 'opendir:/t/d0/d5:EIO' --rule 'readdir:/t/d2/d7:EIO'
	MYRIAD_PREFETCH=$2 "$MYRIAD" verify --no-state --errors "$S/v.errs" --json "$S/v.json" "$VM/t" >/dev/null 2>"$S/v.err"
	expect_eq "verify$3: injected errors give exit 1" 1 $?
	want="$VM/t/d0/d5 open
$VM/t/d1/d3/f130 open
$VM/t/d1/d3/f131 open
$VM/t/d1/d3/f132 open
$VM/t/d1/d3/f133 open
$VM/t/d1/d3/f134 open
$VM/t/d2/d4/f240 read
$VM/t/d2/d4/f241 read
$VM/t/d2/d4/f242 read
$VM/t/d2/d7 readdir"
	expect_eq "verify$3: each injected error is reported with its operation, and nothing else" "$want" "$(errors "$S/v.errs")"
	expect_eq "verify$3: stderr names path, operation and reason" \
		"$(echo "$want" | sed 's/^/myriad verify: /; s/ \([a-z]*\)$/: \1: Input\/output error/')" "$(sort "$S/v.err")"
	expect_eq "verify$3: files of a directory that cannot be opened are not called missing" 0 "$(json_num "$S/v.json" missing)"
	expect_eq "verify$3: everything else is checked" 290 "$(json_num "$S/v.json" checked)"
	ff_umount "$1" "$VM"
	expect_eq "verify$3: no failed operation is tried twice" "open 5 opendir 1 read 3 readdir 1" "$(fails "$1")"
	local ahead
	ahead=$(json_num "$S/v.json" files_read_ahead)
	if [ "$2" = on ]; then
		[ "$ahead" -gt 250 ] && ok "verify$3: $ahead files came from the read-ahead" || fail "verify$3: files_read_ahead $ahead"
	else
		expect_eq "verify$3: not read ahead on FUSE" 0 "$ahead"
	fi
}
failing_verify v auto ""
failing_verify vp on " (files read ahead)"

# ---- rm ----
RB=$S/rb
"$MKTREE" "$RB/t" --files 300 --fanout 10 >/dev/null # t/d0..d2/d0..d9/f0..f9
RM=$S/rm
ff_mount r "$RB" "$RM" --rule 'unlink:/t/d1/d1/f[01]:EIO' --rule 'rmdir:/t/d2/d3:EIO' \
	--rule 'opendir:/t/d0/d3:EIO' --rule 'readdir:/t/d1/d4:EIO'
"$MYRIAD" rm --no-state --errors "$S/r.errs" "$RM/t" >/dev/null 2>"$S/r.err"
expect_eq "rm: injected errors give exit 1" 1 $?
want="$RM/t/d0/d3 open
$RM/t/d1/d1/f0 unlink
$RM/t/d1/d1/f1 unlink
$RM/t/d1/d4 readdir
$RM/t/d2/d3 rmdir"
expect_eq "rm: each injected error is reported, and no consequence of one (a parent not empty)" \
	"$want" "$(errors "$S/r.errs")"
expect_eq "rm: stderr names path, operation and reason" \
	"$(echo "$want" | sed 's/^/myriad rm: /; s/ \([a-z]*\)$/: \1: Input\/output error/')" "$(sort "$S/r.err")"
ff_umount r "$RM"
expect_eq "rm: no failed operation is tried twice" "opendir 1 readdir 1 rmdir 1 unlink 2" "$(fails r)"
want="t t/d0 t/d0/d3 $(printf 't/d0/d3/f%s ' 0 1 2 3 4 5 6 7 8 9)t/d1 t/d1/d1 t/d1/d1/f0 t/d1/d1/f1 t/d1/d4 \
$(printf 't/d1/d4/f%s ' 0 1 2 3 4 5 6 7 8 9)t/d2 t/d2/d3"
expect_eq "rm: everything else is removed" "$(echo $want | tr ' ' '\n' | sort | tr '\n' ' ')" \
	"$(cd "$RB" && find t | sort | tr '\n' ' ')"

# ---- copy: faultfs as SRC ----
CB=$S/cb
"$MKTREE" "$CB/t" --files 300 --fanout 10 --size 3000 >/dev/null
ln -s f0 "$CB/t/d0/d0/sl"
CM=$S/cm
# failing_src TAG PREFETCH LABEL: copy from faultfs with MYRIAD_PREFETCH=PREFETCH (auto: not on
# FUSE; on: small files opened and read ahead through io_uring, whose failures must be reported as
# once, too).
failing_src() {
	ff_mount "$1" "$CB" "$CM" --direct-io --rule 'opendir:/t/d0/d3:EIO' --rule 'readdir:/t/d1/d4:EIO' \
		--rule 'open:/t/d1/d1/f1:EIO' --rule 'read:/t/d1/d2/f2:EIO' --rule 'readlink:/t/d0/d0/sl:EIO' \
		--rule 'listxattr:/t/d0/d1/f1:EIO'
	rm -rf "$S/cs.dst"
	MYRIAD_PREFETCH=$2 "$MYRIAD" copy --no-state --errors "$S/cs.errs" --json "$S/cs.json" "$CM/t" "$S/cs.dst" \
		>/dev/null 2>"$S/cs.err"
	expect_eq "copy from a failing SRC$3: exit 1" 1 $?
	local ahead
	ahead=$(json_num "$S/cs.json" files_read_ahead)
	if [ "$2" = on ]; then
		[ "$ahead" -gt 200 ] && ok "copy from a failing SRC$3: $ahead files came from the read-ahead" ||
			fail "copy from a failing SRC$3: files_read_ahead $ahead"
	else
		expect_eq "copy from a failing SRC$3: not read ahead on FUSE" 0 "$ahead"
	fi
	want="$CM/t/d0/d0/sl readlink
$CM/t/d0/d1/f1 listxattr
$CM/t/d0/d3 open
$CM/t/d1/d1/f1 open
$CM/t/d1/d2/f2 read
$CM/t/d1/d4 readdir"
	expect_eq "copy from a failing SRC$3: each error reported once, with the SRC path" "$want" "$(errors "$S/cs.errs")"
	expect_eq "copy from a failing SRC$3: stderr names path, operation and reason" \
		"$(echo "$want" | sed 's/^/myriad copy: /; s/ \([a-z]*\)$/: \1: Input\/output error/')" "$(sort "$S/cs.err")"
	(cd "$CB/t" && find . -mindepth 1 ! -path './d0/d3/*' ! -path './d1/d4/*' ! -path ./d1/d1/f1 ! -path ./d1/d2/f2 \
		! -path ./d0/d1/f1 ! -path ./d0/d0/sl ! -type d | sort) >"$S/cs.list"
	expect_eq "copy from a failing SRC$3: everything else is copied ($(wc -l <"$S/cs.list") entries)" \
		"$(digest_except "$CB/t" "$S/cs.list")" "$(digest_except "$S/cs.dst" "$S/cs.list")"
	ff_umount "$1" "$CM"
	expect_eq "copy from a failing SRC$3: no failed operation is tried twice" \
		"listxattr 1 open 1 opendir 1 read 1 readdir 1 readlink 1" "$(fails "$1")"
}
failing_src cs auto ""
failing_src csp on " (small files read ahead)"
ff_mount cs2 "$CB" "$CM"
"$MYRIAD" copy --no-state "$CM/t" "$S/cs.dst" >/dev/null 2>&1
expect_eq "copy from a failing SRC: healed, the same command completes" 0 $?
"$MYRIAD" copy --no-state --check "$CB/t" "$S/cs.dst" >/dev/null 2>&1
expect_eq "copy from a failing SRC: then --check finds no difference" 0 $?
ff_umount cs2 "$CM"

# ---- copy: faultfs as DST ----
L=$S/local
"$MKTREE" "$L" --files 300 --fanout 10 --size 3000 >/dev/null
ln -s f0 "$L/d0/d0/sl"
# A new file is made with its mode and owner where it can be: these two need a chmod and a chown.
chmod 4755 "$L/d2/d1/f3"
chown 123:456 "$L/d2/d1/f4"
have_xattr=no
setfattr -n user.k -v v "$L/d0/d1/f1" 2>/dev/null && have_xattr=yes
DB=$S/db
mkdir -p "$DB/d/d2/d0" "$DB/d/extra"
echo stale >"$DB/d/d2/d0/f6"
touch "$DB/d/extra/x"
DM=$S/dm
ff_mount cd "$DB" "$DM" --direct-io --rule 'mkdir:/d/d0/d3:EIO' --rule 'create:/d/d1/d1/f1:EIO' \
	--rule 'write:/d/d1/d2/f2:EIO' --rule 'symlink:/d/d0/d0/sl:EIO' --rule 'setxattr:/d/d0/d1/f1:EIO' \
	--rule 'utimens:/d/d2/d2/f5:EIO' --rule 'chmod:/d/d2/d1/f3:EIO' --rule 'chown:/d/d2/d1/f4:EIO' \
	--rule 'unlink:/d/d2/d0/f6:EIO' --rule 'rmdir:/d/extra:EIO' --rule 'flush:/d/d2/d1/f7:EIO'
"$MYRIAD" copy --delete --no-state --errors "$S/cd.errs" "$L" "$DM/d" >/dev/null 2>"$S/cd.err"
expect_eq "copy to a failing DST: exit 1" 1 $?
want="$DM/d/d0/d0/sl symlink
$([ $have_xattr = yes ] && echo "$DM/d/d0/d1/f1 setxattr")
$DM/d/d0/d3 mkdir
$DM/d/d1/d1/f1 open
$DM/d/d1/d2/f2 write
$DM/d/d2/d0/f6 unlink
$DM/d/d2/d1/f3 chmod
$DM/d/d2/d1/f4 chown
$DM/d/d2/d1/f7 close
$DM/d/d2/d2/f5 utimensat
$DM/d/extra rmdir"
want=$(echo "$want" | sed '/^$/d')
expect_eq "copy to a failing DST: each error reported once, with the DST path" "$want" "$(errors "$S/cd.errs")"
expect_eq "copy to a failing DST: stderr names path, operation and reason" \
	"$(echo "$want" | sed 's/^/myriad copy: /; s/ \([a-z]*\)$/: \1: Input\/output error/')" "$(sort "$S/cd.err")"
(cd "$L" && find . -mindepth 1 ! -path './d0/d3*' ! -path ./d1/d1/f1 ! -path ./d1/d2/f2 ! -path ./d0/d1/f1 \
	! -path ./d0/d0/sl ! -path ./d2/d2/f5 ! -path ./d2/d1/f3 ! -path ./d2/d1/f4 ! -path ./d2/d0/f6 ! -path ./d2/d1/f7 ! -type d |
	sort) >"$S/cd.list"
expect_eq "copy to a failing DST: everything else is copied ($(wc -l <"$S/cd.list") entries)" \
	"$(digest_except "$L" "$S/cd.list")" "$(digest_except "$DB/d" "$S/cd.list")"
[ ! -e "$DB/d/d2/d1/f7" ] && ok "copy to a failing DST: a file whose close failed is not left to pass for complete" ||
	fail "copy to a failing DST: $DB/d/d2/d1/f7 is there after its close failed"
ff_umount cd "$DM"
want="chmod 1 chown 1 create 1 flush 1 mkdir 1 rmdir 1$([ $have_xattr = yes ] && echo " setxattr 1") symlink 1 unlink 1 utimens 1 write 1"
expect_eq "copy to a failing DST: no failed operation is tried twice" "$want" "$(fails cd)"
ff_mount cd2 "$DB" "$DM"
"$MYRIAD" copy --delete --no-state "$L" "$DM/d" >/dev/null 2>&1
expect_eq "copy to a failing DST: healed, the same command completes" 0 $?
"$MYRIAD" copy --no-state --check "$L" "$DB/d" >/dev/null 2>&1
expect_eq "copy to a failing DST: then --check finds no difference" 0 $?
ff_umount cd2 "$DM"

# A DST directory that cannot be opened the first time it is tried (by the worker that reads the
# next entries ahead): the failure is reported by its first entry, not taken for its parent's.
mkdir -p "$S/db2/d"
ff_mount co "$S/db2" "$S/dm2" --rule 'opendir:/d/d1/d0:EIO,count=1'
"$MYRIAD" copy --no-state --errors "$S/co.errs" "$L" "$S/dm2/d" >/dev/null 2>"$S/co.err"
expect_eq "copy, a DST directory that fails to open once: exit 1, reported with its path" \
	"1 $S/dm2/d/d1/d0 open" "$? $(errors "$S/co.errs")"
ff_umount co "$S/dm2"
expect_eq "copy, a DST directory that fails to open once: tried once" "opendir 1" "$(fails co)"

# ---- an operation held in the kernel, for each command at once ----
# verify (a file's open), rm (an unlink; an rmdir), copy (a SRC read, a DST write).
"$MKTREE" "$S/hb/t" --files 300 --fanout 10 >/dev/null
"$MKTREE" "$S/hb2/t" --files 300 --fanout 10 >/dev/null
ff_mount hv "$VB" "$VM" --rule 'open:/t/d1/d3/f135:hold,count=1'
ff_mount hr "$S/hb" "$RM" --rule 'unlink:/t/d1/d3/f5:hold,count=1'
ff_mount hs "$CB" "$CM" --direct-io --rule 'read:/t/d2/d2/f2:hold,count=1'
rm -rf "${DB:?}"/*
ff_mount hd "$DB" "$DM" --direct-io --rule 'write:/d/d1/d2/f2:hold,count=1'
ff_mount hr2 "$S/hb2" "$S/rm2" --rule 'rmdir:/t/d1/d3:hold,count=1'
names=(verify rm copy-src copy-dst rm-rmdir)
cmds=("verify $VM/t" "rm $RM/t" "copy $CM/t $S/hs.dst" "copy $L $DM/d" "rm $S/rm2/t")
# (A held rmdir keeps the kernel's lock on its parent: siblings' rmdirs wait behind it, and the
# one that began first may be named.)
stuck=("$VM/t/d1/d3" "$RM/t/d1/d3" "$CM/t/d2/d2" "$L/d1/d2" "$S/rm2/t/d1/d[0-9]")
pids=()
for i in 0 1 2 3 4; do
	# shellcheck disable=SC2086
	"$MYRIAD" ${cmds[$i]} --progress 1 --state "$S/st$i" --json "$S/h$i.json" >/dev/null 2>"$S/h$i.err" &
	pids[$i]=$!
done
sleep 6.5
for i in 0 1 2 3 4; do
	t0=$(date +%s%N)
	kill -INT "${pids[$i]}"
	wait "${pids[$i]}"
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	expect_eq "held op, ${names[$i]}: SIGINT gives exit 3" 3 $rc
	[ $ms -lt 1000 ] && ok "held op, ${names[$i]}: stopped within a second ($ms ms)" ||
		fail "held op, ${names[$i]}: took $ms ms"
	grep -q "[0-9] workers\\? without progress, longest [0-9]* s in ${stuck[$i]}\$" "$S/h$i.err" &&
		ok "held op, ${names[$i]}: the progress line names the stuck directory" ||
		fail "held op, ${names[$i]}: progress: $(grep -v stopped "$S/h$i.err" | tail -1)"
done
expect_eq "held op, verify: the other workers went on (all but the held directory checked)" 290 \
	"$(json_num "$S/h0.json" checked)"
n=$(find "$S/hb/t" | wc -l)
[ "$n" -le 13 ] && ok "held op, rm: the other workers went on ($n entries left)" || fail "held op, rm: $n entries left"
# The held rmdir also holds t/d1 itself: a lookup in t/d1 whose dentry is no longer cached (FUSE
# entries time out after a second) waits too, so what is left under t/d1 depends on timing.
left=$(find "$S/hb2/t" -mindepth 1 ! -path "$S/hb2/t/d1" ! -path "$S/hb2/t/d1/*")
expect_eq "held op, rm-rmdir: the other workers went on (nothing is left outside t/d1)" "" "$left"
n=$(find "$S/hs.dst" -type f | wc -l)
[ "$n" -ge 290 ] && ok "held op, copy-src: the other workers went on ($n files copied)" || fail "held op, copy-src: $n files"
n=$(find "$DB/d" -type f | wc -l)
[ "$n" -ge 290 ] && ok "held op, copy-dst: the other workers went on ($n files copied)" || fail "held op, copy-dst: $n files"
for n in hv hr hs hd hr2; do kill -USR2 "$(cat "$S/$n.pid")"; done
for i in 0 1 2 3 4; do
	# shellcheck disable=SC2086
	"$MYRIAD" ${cmds[$i]} --state "$S/st$i" >/dev/null 2>"$S/h$i.err"
	expect_eq "held op, ${names[$i]}: released, the same command completes" 0 $?
done
[ ! -e "$S/hb/t" ] && ok "held op, rm: then the tree is gone" || fail "held op, rm: $(find "$S/hb/t" | head -3)"
[ ! -e "$S/hb2/t" ] && ok "held op, rm-rmdir: then the tree is gone" || fail "held op, rm-rmdir: $(find "$S/hb2/t" | head -3)"
"$MYRIAD" copy --no-state --check "$CB/t" "$S/hs.dst" >/dev/null 2>&1
expect_eq "held op, copy-src: then --check finds no difference" 0 $?
"$MYRIAD" copy --no-state --check "$L" "$DB/d" >/dev/null 2>&1
expect_eq "held op, copy-dst: then --check finds no difference" 0 $?
