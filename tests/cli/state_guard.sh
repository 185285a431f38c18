# --state DIR is myriad's own only when myriad can tell: a new or empty directory (then marked with
# myriad-state), a marked one, or an older myriad's state (only its files, a real job). Any other
# directory is refused with exit 2 and nothing in it created, changed or removed; no file of a
# state directory is written through a symbolic or hard link; a finished job removes only myriad's
# files, and the directory only when myriad made it. Runs in a sandbox: myriad before these guards
# removed files of the user's directory.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
# An older myriad, for its state format: OLD_MYRIAD, or 0.1 (commit 680700a, before the marker) built
# from this repository's history.
OLD=${OLD_MYRIAD:-$S/old/build/myriad}
if [ ! -x "$OLD" ] && git -C "$TOP" cat-file -e 680700a^{commit} 2>/dev/null; then
	mkdir -p "$S/old" && git -C "$TOP" archive 680700a | tar -x -C "$S/old" &&
		make -s -C "$S/old" build/myriad >/dev/null 2>&1 || echo "building myriad 0.1 failed" >&2
fi
if ! sandbox; then
	skip "state guards: no sandbox (the old behaviour removes files)"
	exit 0
fi
W=$PWD
export XDG_STATE_HOME=$W/xdg
"$MKTREE" "$W/tree" --files 20000 --fanout 50
touch "$W/victim"
mkdir "$W/empty"
entries=$(find "$W/tree" | wc -l)

# listing DIR: every entry with type, links, size and content sum.
listing() { (cd "$1" && find . -printf '%p %y %n %s %l\n' | sort && find . -type f -print0 | sort -z | xargs -0 -r md5sum); }

# stopped DIR CMD...: start CMD with --state DIR slowly and stop it (SIGINT) once DIR holds a snapshot.
stopped() {
	local dir=$1 pid i
	shift
	"$@" --state "$dir" --progress 0 >/dev/null 2>&1 &
	pid=$!
	for i in $(seq 100); do
		[ -s "$dir/snapshot" ] && break
		sleep 0.05
	done
	sleep 0.1
	kill -INT $pid
	wait $pid
}

# refused_untouched CASE DIR CMD...: CMD with --state DIR exits 2 naming DIR, and DIR (and the
# victim file) are as they were.
refused_untouched() {
	local what=$1 dir=$2 before rc
	shift 2
	before=$(listing "$dir"; md5sum <"$W/victim")
	"$@" --state "$dir" --progress 0 >/dev/null 2>"$S/err"
	rc=$?
	expect_eq "$what: exit 2" 2 $rc
	grep -qF "$dir" "$S/err" && ok "$what: the message names the directory" ||
		fail "$what: message: $(head -c 300 "$S/err")"
	expect_eq "$what: nothing in it created, changed or removed" "$before" "$(listing "$dir"; md5sum <"$W/victim")"
}

# ---- a user's directory holding files with myriad's names ----
user_dir() {
	rm -rf "$W/proj"
	mkdir "$W/proj"
	for n in "$@" notes.txt; do echo "the user's $n" >"$W/proj/$n"; done
}
user_dir lock command identity snapshot.tmp
refused_untouched "walk, user's lock/command/identity/snapshot.tmp" "$W/proj" "$MYRIAD" walk "$W/tree"
grep -q "not myriad's" "$S/err" && grep -qF -- "--state a new or empty directory" "$S/err" &&
	ok "walk, user's directory: says why and what to give instead" || fail "walk, user's directory: message: $(cat "$S/err")"
user_dir lock command identity snapshot.tmp snapshot
refused_untouched "walk, user's files and a snapshot" "$W/proj" "$MYRIAD" walk "$W/tree"
refused_untouched "fill into an empty directory, user's files" "$W/proj" "$MYRIAD" fill -n 10 "$W/empty"
expect_eq "fill, user's state directory: the target stays empty" "" "$(ls -A "$W/empty")"
# Only myriad's names, but not a job of myriad's: refused all the same.
user_dir lock identity snapshot
rm "$W/proj/notes.txt"
refused_untouched "walk, only myriad's names but not myriad's files" "$W/proj" "$MYRIAD" walk "$W/tree"
# A marker that is not myriad's.
user_dir lock
echo "my state" >"$W/proj/myriad-state"
refused_untouched "walk, a myriad-state file that is not the marker" "$W/proj" "$MYRIAD" walk "$W/tree"

# ---- links planted in a state directory of myriad's ----
rm -rf "$W/st"
stopped "$W/st" "$MYRIAD" walk --rate 4k "$W/tree"
[ -s "$W/st/snapshot" ] && ok "links: a stopped walk's state" || fail "links: no stopped state in $W/st"
grep -qx "made-by: myriad" "$W/st/myriad-state" 2>/dev/null && ok "a directory myriad made is marked as made by myriad" ||
	fail "no marker in $W/st: $(ls -A "$W/st")"
rm "$W/st/lock"
ln -s ../victim "$W/st/lock"
refused_untouched "a lock that is a symbolic link" "$W/st" "$MYRIAD" walk "$W/tree"
grep -q "lock: a symbolic link (not followed)" "$S/err" && ok "a symbolic lock: says so" || fail "a symbolic lock: message: $(cat "$S/err")"
rm -f "$W/st/lock"
ln "$W/victim" "$W/st/lock"
refused_untouched "a lock that is a hard link to another file" "$W/st" "$MYRIAD" walk "$W/tree"
rm -rf "$W/st"
stopped "$W/st" "$MYRIAD" walk --rate 4k "$W/tree"
echo "the victim" >"$W/victim"
ln -sf ../victim "$W/st/snapshot.tmp"
ln -sf ../victim "$W/st/command.tmp"
ln -f "$W/victim" "$W/st/identity.tmp"
sum=$(md5sum <"$W/victim")
"$MYRIAD" walk --state "$W/st" --progress 0 --json "$S/j" "$W/tree" >/dev/null 2>"$S/err"
expect_eq "planted .tmp links: the walk resumes and finishes" "0 2" "$? $(json_num "$S/j" sessions)"
expect_eq "planted .tmp links: not written through" "$sum" "$(md5sum <"$W/victim")"
[ ! -e "$W/st" ] && ok "planted .tmp links: the state directory myriad made is removed" ||
	fail "planted .tmp links: left: $(ls -A "$W/st")"

# ---- resume after kill -9, in a new directory and in the user's empty one ----
for kind in new empty; do
	rm -rf "$W/k"
	[ $kind = empty ] && mkdir "$W/k" && touch -d @1000000000 "$W/k"
	"$MYRIAD" walk --rate 4k --checkpoint-interval 0.05 --state "$W/k" "$W/tree" >/dev/null 2>&1 &
	pid=$!
	sleep 1
	kill -9 $pid
	wait $pid 2>/dev/null
	[ -s "$W/k/snapshot" ] && ok "kill -9, $kind directory: state saved" || fail "kill -9, $kind directory: no snapshot"
	"$MYRIAD" walk --state "$W/k" --progress 0 --json "$S/j" "$W/tree" >/dev/null 2>&1
	expect_eq "kill -9, $kind directory: the re-run resumes and finishes" "0 2 $entries" \
		"$? $(json_num "$S/j" sessions) $(json_num "$S/j" entries)"
	if [ $kind = new ]; then
		[ ! -e "$W/k" ] && ok "kill -9, new directory: removed at the end" || fail "left: $(ls -A "$W/k")"
	else
		expect_eq "kill -9, the user's empty directory: kept, empty" "directory " \
			"$(stat -c %F "$W/k") $(ls -A "$W/k")"
	fi
done
mkdir "$W/u"
echo keep >"$W/u/mine"
"$MYRIAD" walk --state "$W/u/st" "$W/tree" >/dev/null 2>&1
expect_eq "a state directory made inside the user's directory: removed, the rest kept" "mine" "$(ls -A "$W/u")"

# ---- the state directory of a myriad before the marker ----
if [ -x "$OLD" ]; then
	rm -rf "$W/old"
	stopped "$W/old" "$OLD" walk --rate 4k "$W/tree"
	if [ -s "$W/old/snapshot" ] && [ ! -e "$W/old/myriad-state" ]; then
		cp -a "$W/old" "$W/old-bad"
		"$MYRIAD" walk --state "$W/old" --progress 0 --json "$S/j" "$W/tree" >/dev/null 2>"$S/err"
		expect_eq "an older myriad's state: resumed and finished" "0 2 $entries" \
			"$? $(json_num "$S/j" sessions) $(json_num "$S/j" entries)"
		expect_eq "an older myriad's --state directory: its files removed, the directory kept" "directory " \
			"$(stat -c %F "$W/old") $(ls -A "$W/old")"
		printf 'x' | dd of="$W/old-bad/snapshot" bs=1 seek=12 conv=notrunc status=none
		refused_untouched "an older myriad's state with a damaged snapshot" "$W/old-bad" "$MYRIAD" walk "$W/tree"
		# The default location: made by myriad, so removed once the job is done.
		"$OLD" walk --rate 4k --progress 0 "$W/tree" >/dev/null 2>&1 &
		pid=$!
		sleep 1
		kill -INT $pid
		wait $pid
		"$MYRIAD" walk --progress 0 --json "$S/j" "$W/tree" >/dev/null 2>&1
		expect_eq "an older myriad's default state: resumed, finished, removed" "0 2 " \
			"$? $(json_num "$S/j" sessions) $(ls -A "$XDG_STATE_HOME/myriad")"
	else
		skip "$OLD made no old-format state"
	fi
else
	skip "no older myriad at $OLD for its state format"
fi

# ---- refusals before anything is made ----
"$MYRIAD" walk --state "$W/tree/st" "$W/tree" >/dev/null 2>"$S/err"
expect_eq "a state directory inside the tree: refused, not made" "2 no" "$? $([ -e "$W/tree/st" ] && echo yes || echo no)"
if command -v setpriv >/dev/null; then
	mkdir "$W/ro" && chmod 555 "$W/ro"
	chmod o+x "$T_SCRATCH" "$SANDBOX" "$SANDBOX/a" "$SANDBOX/a/b" # for nobody to reach $W
	env -u XDG_STATE_HOME HOME="$W/ro" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$MYRIAD" walk "$W/tree" >/dev/null 2>"$S/err"
	rc=$?
	grep -qF -- "--state" "$S/err" && grep -qF -- "--no-state" "$S/err" && [ "$(wc -l <"$S/err")" = 1 ] &&
		ok "an unwritable HOME: one line naming --state and --no-state" || fail "unwritable HOME: $(cat "$S/err")"
	expect_eq "an unwritable HOME: exit 2" 2 $rc
else
	skip "unwritable HOME: no setpriv"
fi
