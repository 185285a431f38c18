# rm removes any tree bottom-up, never follows symlinks or crosses filesystems, keeps what
# --exclude names, reports what it cannot remove and removes the rest, and an interrupted rm
# finishes when re-run. Every tree removed here is in the sandbox (a tmpfs of its own, the working
# directory inside it); the state and reports are in the scratch directory. The operand guards
# (., .., /, the working directory, symlinks) are tested in rm_guard.sh.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
export XDG_STATE_HOME=$S/state
if ! sandbox 1g 2>"$S/why"; then
	skip "rm: $(cat "$S/why")"
	exit 0
fi
W=$SANDBOX
T=$W/t
mkdir -p "$T" "$W/outside/keepme"
touch "$W/outside/keepme/precious"
make_hostile_tree "$T/h"
ln -s "$W/outside/keepme" "$T/h/link-to-outside"
"$MKTREE" "$T/many" --files 50000 --fanout 100
n=$(find "$T" -printf x | wc -c)

"$MYRIAD" rm --dry-run --json "$S/dry.json" "$T" >/dev/null 2>&1
expect_eq "--dry-run: exit 0" 0 $?
expect_eq "--dry-run: counts what find sees" "$n" $(($(json_num "$S/dry.json" files) + $(json_num "$S/dry.json" directories)))
expect_eq "--dry-run: removes nothing" "$n" "$(find "$T" -printf x | wc -c)"

"$MYRIAD" rm --json "$S/rm.json" "$T" >/dev/null 2>"$S/err"
expect_eq "rm: exit 0" 0 $?
[ ! -e "$T" ] && ok "rm: the tree is gone (hostile names, deep paths, every file type)" || fail "rm: left $(find "$T" | head)"
expect_eq "rm: counts every entry" "$n" $(($(json_num "$S/rm.json" files) + $(json_num "$S/rm.json" directories)))
[ -e "$W/outside/keepme/precious" ] && ok "rm: a symlink to a directory outside is removed, not followed" ||
	fail "rm followed a symlink"
grep -q '"timeline":\[\[' "$S/rm.json" && ok "rm: JSON has the removal timeline" || fail "json: $(head -c 200 "$S/rm.json")"

# --exclude keeps matching entries and the directories above them.
"$MKTREE" "$T" --files 2000 --fanout 100
touch "$T/d3/keep.me" "$T/d7/keep.me"
"$MYRIAD" rm --exclude '*.me' "$T" >/dev/null 2>&1
expect_eq "--exclude: exit 0" 0 $?
expect_eq "--exclude: only the kept entries and their parents remain" \
	"$T $T/d3 $T/d3/keep.me $T/d7 $T/d7/keep.me" "$(find "$T" | sort | tr '\n' ' ' | sed 's/ $//')"
rm -rf "$T"

# --exclude NAME/ keeps directories of that name (and all under them), not files; a pattern with a
# '/' elsewhere matches no name: refused before anything is removed (it used to remove all, exit 0).
# mkkeep DIR: a directory keep with a subtree, a file keep, and t/keep.
mkkeep() { mkdir -p "$1/d1/keep/sub" "$1/d2" "$1/t/keep" && touch "$1/d1/keep/sub/f" "$1/d2/keep" "$1/d2/other"; }
mkkeep "$T"
"$MYRIAD" rm --exclude 'keep/' "$T" >/dev/null 2>"$S/err"
expect_eq "--exclude keep/: exit 0" 0 $?
expect_eq "--exclude keep/: the directories keep and their subtrees stay, the file keep goes" \
	"$T $T/d1 $T/d1/keep $T/d1/keep/sub $T/d1/keep/sub/f $T/t $T/t/keep" "$(find "$T" | sort | tr '\n' ' ' | sed 's/ $//')"
rm -rf "$T"
mkkeep "$T"
before=$(find "$T" | sort)
for pat in t/keep '*/keep' "$T/t/keep" '' /; do
	"$MYRIAD" rm --exclude "$pat" "$T" >/dev/null 2>"$S/err"
	rc=$?
	expect_eq "--exclude '$pat': refused (exit 2), nothing removed" "2 yes" "$rc $([ "$(find "$T" | sort)" = "$before" ] && echo yes || echo no)"
done
"$MYRIAD" rm --exclude t/keep "$T" 2>&1 | grep -qF "myriad rm: --exclude 't/keep': patterns match one name, not a path ('/' may only end a pattern, for directories); to leave out t/keep, exclude 'keep'" &&
	ok "--exclude t/keep: says why and what to exclude instead" || fail "--exclude t/keep: $("$MYRIAD" rm --exclude t/keep "$T" 2>&1)"
rm -rf "$T"
# The same where the filesystem gives no entry types (DT_UNKNOWN): the engine stats to tell.
if mkdir -p "$W/back" && mount_faultfs "$W/back" "$W/ff" --dt-unknown 2>"$S/why"; then
	mkkeep "$W/ff/t"
	"$MYRIAD" rm --exclude 'keep/' "$W/ff/t" >/dev/null 2>"$S/err"
	expect_eq "--exclude keep/ without entry types: the directories keep stay, the file keep goes" \
		"0 $W/back/t $W/back/t/d1 $W/back/t/d1/keep $W/back/t/d1/keep/sub $W/back/t/d1/keep/sub/f $W/back/t/t $W/back/t/t/keep" \
		"$? $(find "$W/back/t" | sort | tr '\n' ' ' | sed 's/ $//')"
else
	skip "--exclude keep/ without entry types: faultfs: $(cat "$S/why")"
fi

# An empty operand is named as such (it said ": No such file or directory"), and refuses the
# whole command: nothing removed.
mkdir -p "$W/e/x"
"$MYRIAD" rm "$W/e" '' >/dev/null 2>"$S/err"
expect_eq "rm DIR '': refused, naming the empty operand, DIR kept" "2 yes yes" \
	"$? $(grep -q "myriad rm: '': an empty operand" "$S/err" && echo yes) $([ -d "$W/e/x" ] && echo yes)"
for args in "copy '' $W/e2" "copy $W/e ''" "fill -n 1 ''"; do
	eval "\"\$MYRIAD\" $args" >/dev/null 2>"$S/err"
	expect_eq "$args: refused, naming the empty operand" "2 yes" "$? $(grep -q "'': an empty operand" "$S/err" && echo yes)"
done
rm -rf "$W/e"

# Bad operands.
"$MYRIAD" rm / 2>"$S/err"
expect_eq "rm /: refused with exit 2" 2 $?
grep -q "refusing" "$S/err" && ok "rm /: says it refuses" || fail "message: $(cat "$S/err")"
(cd "$W/a/b" && "$MYRIAD" rm ../../../../../../../.. 2>/dev/null)
expect_eq "rm of a path that resolves to /: refused" 2 $?
"$MYRIAD" rm "$W/missing" 2>/dev/null
expect_eq "rm of a missing operand: exit 2" 2 $?
touch "$W/file"
"$MYRIAD" rm "$W/file" 2>/dev/null
expect_eq "rm of a non-directory: exit 2" 2 $?
mkdir -p "$W/x/y"
"$MYRIAD" rm --ionice bogus "$W/x" 2>/dev/null
expect_eq "rm --ionice bogus: exit 2" 2 $?
"$MYRIAD" rm --ionice idle --rate 100k "$W/x" >/dev/null 2>&1
expect_eq "rm --ionice idle --rate: works" "0 no" "$? $([ -e "$W/x" ] && echo yes || echo no)"

# Interrupted and resumed: the tree ends up gone.
"$MKTREE" "$T" --files 60000 --fanout 100
"$MYRIAD" rm --rate 20k "$T" >/dev/null 2>&1 &
pid=$!
sleep 0.7
kill -INT $pid
wait $pid
expect_eq "SIGINT: exit 3" 3 $?
# Each run must resume the one before (a fresh start would also end with the tree gone): each says
# so on stderr, and the last one's JSON counts every run (SIGINT's, three killed, its own).
resumed=0
for i in 1 2 3; do
	"$MYRIAD" rm --rate 20k --checkpoint-interval 0.05 "$T" >/dev/null 2>"$S/k$i.err" &
	pid=$!
	sleep 0.$((RANDOM % 5 + 2))
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	grep -q "resuming the earlier run" "$S/k$i.err" && resumed=$((resumed + 1))
done
expect_eq "kill -9: each killed run resumed the one before" 3 "$resumed"
"$MYRIAD" rm --json "$S/r.json" "$T" >/dev/null 2>"$S/k.err"
expect_eq "kill -9 then the same command: exit 0" 0 $?
grep -q "resuming the earlier run" "$S/k.err" && ok "kill -9 then the same command: it says it resumes" ||
	fail "kill -9 then the same command: no resume notice: $(head -c 300 "$S/k.err")"
expect_eq "kill -9 then the same command: a resume, the 5th run of the job (JSON sessions)" 5 \
	"$(json_num "$S/r.json" sessions)"
[ ! -e "$T" ] && ok "kill -9 then the same command: the tree is gone" || fail "left: $(find "$T" | wc -l) entries"
expect_eq "no state is left behind" "" "$(ls "$S/state/myriad" 2>/dev/null)"

# Killed after the last rmdir but before its state was removed: the same command (operand relative
# to the working directory, and now gone) sees the job done, exits 0 and removes the state.
"$MKTREE" "$T" --files 20000 --fanout 100
(cd "$W" && exec "$MYRIAD" rm --rate 5k t) >/dev/null 2>&1 &
pid=$!
sleep 0.5
kill -9 $pid
wait $pid 2>/dev/null
rm -rf "$T" # what the killed run would have removed before its end
(cd "$W" && "$MYRIAD" rm t) >/dev/null 2>"$S/err"
expect_eq "killed after the tree was gone: the same command exits 0" 0 $?
expect_eq "killed after the tree was gone: the state is removed" "" "$(ls "$S/state/myriad" 2>/dev/null)"

# Killed while it removed the state of the finished job (the snapshot already gone): the same
# command exits 0 too.
"$MKTREE" "$T" --files 20000 --fanout 100
"$MYRIAD" rm --rate 5k "$T" >/dev/null 2>&1 &
pid=$!
sleep 0.5
kill -9 $pid
wait $pid 2>/dev/null
rm -rf "$T" "$S"/state/myriad/*/snapshot # where the killed run's ending had got to
"$MYRIAD" rm "$T" >/dev/null 2>"$S/err"
expect_eq "killed while removing its finished state: the same command exits 0" 0 $?
expect_eq "killed while removing its finished state: the state is removed" "" "$(ls "$S/state/myriad" 2>/dev/null)"

# Every operand is checked before any work starts: one missing (no saved job) is exit 2, and the
# others are left alone.
mkdir -p "$W/present/sub"
"$MYRIAD" rm --json "$S/m.json" "$W/missing" "$W/present" >/dev/null 2>"$S/err"
expect_eq "a missing operand among others: exit 2" 2 $?
[ -d "$W/present/sub" ] && ok "a missing operand among others: nothing removed" || fail "the present operand was removed"
grep -q "$W/missing" "$S/err" && ok "a missing operand among others: named" || fail "message: $(cat "$S/err")"
expect_eq "a missing operand among others: no state left" "" "$(ls "$S/state/myriad" 2>/dev/null)"
rm -rf "$W/present"

if is_root; then
	# A mount point inside is reported and left alone, with its parents.
	mkdir -p "$T/x/mnt" "$T/y"
	touch "$T/x/f" "$T/y/g"
	mount -t tmpfs -o size=1m tmpfs "$T/x/mnt" && on_exit "umount '$T/x/mnt'"
	touch "$T/x/mnt/inside"
	"$MYRIAD" rm "$T" >/dev/null 2>"$S/err"
	expect_eq "mount point inside: exit 1" 1 $?
	grep -q "mount point: $T/x/mnt" "$S/err" && ok "mount point inside: reported" || fail "stderr: $(cat "$S/err")"
	expect_eq "mount point inside: it, its contents and its parents stay; the rest goes" \
		"$T $T/x $T/x/mnt $T/x/mnt/inside" "$(find "$T" | sort | tr '\n' ' ' | sed 's/ $//')"
	umount "$T/x/mnt"
	rm -rf "$T"

	# Entries that cannot be removed (faultfs): reported, everything else removed.
	if [ -e /dev/fuse ]; then
		B=$W/backing
		"$MKTREE" "$B/t" --files 3000 --fanout 100
		mount_faultfs "$B" "$W/m" --rule 'unlink:/t/d5/f55*:EACCES' --rule 'rmdir:/t/d9:EBUSY' ||
			fail "faultfs did not mount"
		"$MYRIAD" rm --errors "$S/errs" "$W/m/t" >/dev/null 2>"$S/err"
		expect_eq "unremovable entries: exit 1" 1 $?
		# mktree names files f0..f99 in each directory: the rule matches d5/f55 only.
		expect_eq "unremovable entries: each reported (1 unlink, 1 rmdir)" 2 "$(wc -l <"$S/errs")"
		grep -q "d5/f55: unlink: Permission denied" "$S/err" && ok "unremovable: path, operation, reason" ||
			fail "stderr: $(head -3 "$S/err")"
		expect_eq "unremovable entries: everything else is removed" \
			"$B/t $B/t/d5 $B/t/d5/f55 $B/t/d9" "$(find "$B/t" | sort | tr '\n' ' ' | sed 's/ $//')"

		# Stopped after a failure and resumed: the resumed pass meets the failed entries again, and
		# the final run reports each once (in its count and its --errors file).
		"$MKTREE" "$W/b2/t" --files 1000 --fanout 10
		mount_faultfs "$W/b2" "$W/m2" --rule 'unlink:/t/*/f7:EACCES' || fail "faultfs did not mount"
		"$MYRIAD" rm --rate 500 --checkpoint-interval 0.1 --errors "$S/errs2" "$W/m2/t" >/dev/null 2>&1 &
		pid=$!
		for _ in $(seq 200); do [ -s "$S/errs2" ] && break; sleep 0.05; done
		kill -TERM $pid
		wait $pid
		rc=$?
		"$MYRIAD" rm --errors "$S/errs2" --json "$S/j2" "$W/m2/t" >/dev/null 2>&1
		expect_eq "failures, stopped and resumed: exit 3 then 1" "3 1" "$rc $?"
		expect_eq "failures, stopped and resumed: each of the 100 once in --errors and the count" "100 100 100" \
			"$(wc -l <"$S/errs2") $(sort -u "$S/errs2" | wc -l) $(json_num "$S/j2" errors)"
	else
		skip "faultfs needs /dev/fuse"
	fi
else
	skip "mount points and faultfs need root"
fi

# On real filesystems: the tree is gone, and the default workers suit the filesystem: one on XFS
# and btrfs (parallel unlinks contend inside them), one per CPU or more elsewhere.
if is_root; then
	for fs in ext4 xfs btrfs; do
		M=$W/img-$fs
		if ! mount_image $fs 1G "$M" 2>"$S/why"; then
			skip "$fs: $(cat "$S/why")"
			continue
		fi
		make_hostile_tree "$M/t/h"
		"$MKTREE" "$M/t/m" --files 5000 --fanout 100 >/dev/null
		"$MYRIAD" rm --json "$S/$fs.rm.json" "$M/t" >/dev/null 2>"$S/err"
		expect_eq "$fs: exit 0, the tree is gone, nothing else" "0 no" \
			"$? $([ -e "$M/t" ] && echo yes || echo no)$(ls "$M" | grep -vx lost+found | sed 's/^/ /')"
		threads=$(json_num "$S/$fs.rm.json" threads)
		case $fs in
		xfs | btrfs) expect_eq "$fs: one worker by default" 1 "$threads" ;;
		*) [ "${threads:-0}" -ge "$(nproc)" ] && ok "$fs: $threads workers by default" ||
			fail "$fs: $threads workers by default, want at least $(nproc)" ;;
		esac
	done
else
	skip "loop-mounted filesystems need root"
fi
