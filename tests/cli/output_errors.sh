# Output errors are errors: a failed write to standard output, -o, --json or --errors is said once
# (path, operation, reason), stops the run, and the exit status is not 0: 3 (stopped, state of the
# last snapshot before the failure kept, so a re-run completes the output) while the work was
# going on, 1 once it was done. A closed pipe (`| head`) ends the run at once and quietly, by
# SIGPIPE as find does, and leaves no state that a later listing would resume from.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
export XDG_STATE_HOME=$S/state
T=$S/t
"$MKTREE" "$T" --files 20000 --fanout 100 >/dev/null
n=$(find "$T" -printf x | wc -c)
full="No space left on device"

# once NAME FILE TEXT: TEXT is on exactly one line of FILE.
once() {
	local k
	k=$(grep -cF -- "$3" "$2")
	[ "$k" = 1 ] && ok "$1" || fail "$1: '$3' on $k lines of: $(head -c 600 "$2")"
}
# said NAME FILE TEXT: TEXT is in FILE.
said() { grep -qF -- "$3" "$2" && ok "$1" || fail "$1: no '$3' in: $(head -c 600 "$2")"; }

# Paths to a full standard output: said once, the run stops (3), the summary says so on stderr.
"$MYRIAD" walk --no-state --print "$T" >/dev/full 2>"$S/e1"
expect_eq "walk --print >/dev/full: exit 3 (stopped)" 3 $?
once "walk --print >/dev/full: the failure is said once" "$S/e1" "standard output: write: $full"
said "walk --print >/dev/full: the summary on stderr says the walk stopped" "$S/e1" "walk stopped after"
said "walk --print >/dev/full: the last line says why" "$S/e1" "stopped: standard output could not be written"

# The summary itself to a full standard output: the work is done, exit 1, the summary on stderr.
"$MYRIAD" walk --no-state "$T" >/dev/full 2>"$S/e2"
expect_eq "walk >/dev/full (summary): exit 1" 1 $?
once "walk >/dev/full (summary): the failure is said once" "$S/e2" "standard output: write: $full"
said "walk >/dev/full (summary): the summary goes to stderr" "$S/e2" "entries: 20,000 files"

"$MYRIAD" walk --no-state -o /dev/full "$T" >"$S/o3" 2>"$S/e3"
expect_eq "walk -o /dev/full: exit 3 (stopped)" 3 $?
once "walk -o /dev/full: the failure is said once" "$S/e3" "/dev/full: write: $full"
said "walk -o /dev/full: the summary says the walk stopped" "$S/o3" "walk stopped after"

"$MYRIAD" walk --no-state --json /dev/full "$T" >/dev/null 2>"$S/e4"
expect_eq "walk --json /dev/full: exit 1" 1 $?
once "walk --json /dev/full: the failure is said once" "$S/e4" "/dev/full: write: $full"
"$MYRIAD" walk --no-state --json - "$T" >/dev/full 2>"$S/e4"
expect_eq "walk --json - >/dev/full: exit 1" 1 $?
once "walk --json - >/dev/full: said once, naming standard output" "$S/e4" "standard output: write: $full"

# A closed pipe: the walk ends at once (--rate 4000 over 20,000 entries took 5 s before), quietly,
# by SIGPIPE, and keeps no state: the next run lists everything.
s=$(date +%s%N)
"$MYRIAD" walk --print --rate 4000 "$T" 2>"$S/e5" | head -1 >/dev/null
rc=${PIPESTATUS[0]}
ms=$((($(date +%s%N) - s) / 1000000))
[ "$ms" -lt 1000 ] && ok "walk --print | head -1: ends in ${ms} ms (< 1 s)" ||
	fail "walk --print | head -1: took ${ms} ms"
expect_eq "walk --print | head -1: ends by SIGPIPE, as find (141)" 141 "$rc"
expect_eq "walk --print | head -1: nothing on stderr" "" "$(cat "$S/e5")"
expect_eq "walk --print | head -1: no state kept" "" "$(ls -A "$XDG_STATE_HOME/myriad" 2>/dev/null)"
expect_eq "after | head, the same walk lists every entry" "$n" "$("$MYRIAD" walk --print "$T" 2>/dev/null | wc -l)"

# --rate spreads its budget over entries: output flows, so a closed pipe ends a slow walk at once
# (it charged a directory's 300 entries at a time: --rate 10 | head -1 took 30 s), and the average
# holds (200 entries at --rate 100: about 2 s; the first 0.1 s worth may go at once).
R=$S/rate
mkdir -p "$R/d300" "$R/d199"
(cd "$R/d300" && touch $(seq -f 'f%g' 300)) && (cd "$R/d199" && touch $(seq -f 'f%g' 199))
for cmd in walk find; do
	s=$(date +%s%N)
	timeout 10 "$MYRIAD" $cmd --rate 10 $([ $cmd = walk ] && echo --print) "$R/d300" 2>/dev/null | head -1 >/dev/null
	ms=$((($(date +%s%N) - s) / 1000000))
	[ "$ms" -lt 2000 ] && ok "$cmd --rate 10 | head -1 over 300 entries: ends in ${ms} ms (< 2 s)" ||
		fail "$cmd --rate 10 | head -1 over 300 entries: took ${ms} ms"
done
for cmd in walk du; do
	s=$(date +%s%N)
	"$MYRIAD" $cmd --no-state --rate 100 "$R/d199" >/dev/null 2>&1
	ms=$((($(date +%s%N) - s) / 1000000))
	[ "$ms" -ge 1700 ] && [ "$ms" -le 2600 ] && ok "$cmd --rate 100 over 200 entries: ${ms} ms (1.7 to 2.6 s)" ||
		fail "$cmd --rate 100 over 200 entries: ${ms} ms, not 1.7 to 2.6 s"
done

# -o FILE on a filesystem that fills up: said once, stopped with state; with room, the same
# command completes the list, each path once.
if is_root && mkdir -p "$S/tiny" && mount -t tmpfs -o size=64k myriad-tiny "$S/tiny"; then
	on_exit "umount '$S/tiny' || umount -l '$S/tiny'"
	"$MYRIAD" walk --state "$S/st6" -o "$S/tiny/list" "$T" >/dev/null 2>"$S/e6"
	expect_eq "-o on a full tmpfs: exit 3 (stopped)" 3 $?
	once "-o on a full tmpfs: the failure is said once" "$S/e6" "$S/tiny/list: write: $full"
	said "-o on a full tmpfs: the state is kept to resume" "$S/e6" "state saved in $S/st6"
	mount -o remount,size=16m "$S/tiny"
	"$MYRIAD" walk --state "$S/st6" -o "$S/tiny/list" "$T" >/dev/null 2>"$S/e6"
	expect_eq "-o, room made, same command: exit 0" 0 $?
	expect_eq "-o, room made: every path listed" "$n" "$(wc -l <"$S/tiny/list")"
	expect_eq "-o, room made: no path twice" "" "$(sort "$S/tiny/list" | uniq -d | head -3)"
else
	skip "-o on a full tmpfs: needs root to mount a tmpfs"
fi

# --errors to a full file, with failures to log (faultfs: opendir fails with EIO in 5 directories).
if is_root && [ -e /dev/fuse ]; then
	B=$S/backing
	"$MKTREE" "$B/t" --files 2000 --fanout 100 >/dev/null
	M=$S/m
	if mount_faultfs "$B" "$M" --rule 'opendir:/t/d3:EIO' --rule 'opendir:/t/d5:EIO' \
		--rule 'opendir:/t/d7:EIO' --rule 'opendir:/t/d9:EIO' --rule 'opendir:/t/d11:EIO'; then
		"$MYRIAD" walk --no-state -j 1 --errors /dev/full "$M" >/dev/null 2>"$S/e7"
		expect_eq "walk --errors /dev/full: exit 3 (stopped)" 3 $?
		once "walk --errors /dev/full: the failure is said once" "$S/e7" "/dev/full: write: $full"
		said "walk --errors /dev/full: the last line says why" "$S/e7" "stopped: /dev/full could not be written"
	else
		fail "faultfs did not mount"
	fi
else
	skip "walk --errors /dev/full: faultfs needs root and /dev/fuse"
fi

# The other commands: --json and the summary to a full file, verify's --errors. fill, copy and rm
# write, so they run in a sandbox.
if ! sandbox 256m 2>"$S/why"; then
	skip "fill, verify, copy, rm: $(cat "$S/why")"
	exit 0
fi
"$MYRIAD" fill --no-state -n 300 --fanout 20 f1 --json /dev/full >/dev/null 2>"$S/e8"
expect_eq "fill --json /dev/full: exit 1" 1 $?
once "fill --json /dev/full: said once" "$S/e8" "/dev/full: write: $full"
"$MYRIAD" fill --no-state -n 300 --fanout 20 f2 >/dev/full 2>"$S/e8"
expect_eq "fill >/dev/full (summary): exit 1" 1 $?
once "fill >/dev/full (summary): said once" "$S/e8" "standard output: write: $full"

"$MYRIAD" verify --no-state f1 --json /dev/full >/dev/null 2>"$S/e9"
expect_eq "verify --json /dev/full: exit 1" 1 $?
once "verify --json /dev/full: said once" "$S/e9" "/dev/full: write: $full"
"$MYRIAD" verify --no-state f1 >/dev/full 2>"$S/e9"
expect_eq "verify >/dev/full (summary): exit 1" 1 $?
once "verify >/dev/full (summary): said once" "$S/e9" "standard output: write: $full"
said "verify >/dev/full (summary): the summary goes to stderr" "$S/e9" "OK: the tree is exactly as fill made it"
find f2 -type f -name '*1*' -delete
"$MYRIAD" verify --no-state -j 1 f2 --errors /dev/full >/dev/null 2>"$S/e9"
expect_eq "verify --errors /dev/full (files missing): exit 3 (stopped)" 3 $?
once "verify --errors /dev/full: said once" "$S/e9" "/dev/full: write: $full"

"$MYRIAD" copy --no-state f1 c1 --json /dev/full >/dev/null 2>"$S/e10"
expect_eq "copy --json /dev/full: exit 1" 1 $?
once "copy --json /dev/full: said once" "$S/e10" "/dev/full: write: $full"
"$MYRIAD" copy --no-state f1 c2 >/dev/full 2>"$S/e10"
expect_eq "copy >/dev/full (summary): exit 1" 1 $?
once "copy >/dev/full (summary): said once" "$S/e10" "standard output: write: $full"

"$MYRIAD" rm --no-state c1 --json /dev/full >/dev/null 2>"$S/e11"
expect_eq "rm --json /dev/full: exit 1" 1 $?
once "rm --json /dev/full: said once" "$S/e11" "/dev/full: write: $full"
"$MYRIAD" rm --no-state c2 >/dev/full 2>"$S/e11"
expect_eq "rm >/dev/full (summary): exit 1" 1 $?
once "rm >/dev/full (summary): said once" "$S/e11" "standard output: write: $full"
said "rm >/dev/full (summary): the summary goes to stderr" "$S/e11" "directories removed"

# Two outputs in one file, or an output in the state directory: refused before anything is done
# (exit 2, nothing written, the state untouched), naming both options. By name once resolved, and by
# device and inode (a hard link, a symlink). The path list used to be lost, exit 0.
O=$S/two
mkdir -p "$O/st"
touch "$O/x"
ln "$O/x" "$O/hard"
ln -s x "$O/sym"
# refused NAME WANT1 WANT2 CMD...: CMD exits 2, names both, writes nothing in $O.
refused() {
	local name=$1 w1=$2 w2=$3
	shift 3
	local before after
	before=$(cd "$O" && find . -printf '%p %s %T@\n' | sort)
	"$@" >"$S/out" 2>"$S/err"
	local rc=$?
	after=$(cd "$O" && find . -printf '%p %s %T@\n' | sort)
	if [ $rc = 2 ] && grep -qF -- "$w1" "$S/err" && grep -qF -- "$w2" "$S/err" && [ "$before" = "$after" ] && [ ! -s "$S/out" ]; then
		ok "$name: refused up front, naming both"
	else
		fail "$name: exit $rc, changed: $([ "$before" = "$after" ] && echo no || echo yes): $(cat "$S/err")"
	fi
}
refused "walk -o X --json X" "--json $O/x" "--output $O/x" "$MYRIAD" walk -o "$O/x" --json "$O/x" "$T"
refused "walk -o X --errors ./X" "--errors" "--output" "$MYRIAD" walk -o "$O/x" --errors "$O/../two/x" "$T"
refused "walk --json X --errors HARDLINK" "--json $O/x" "--errors $O/hard" "$MYRIAD" walk --json "$O/x" --errors "$O/hard" "$T"
refused "du --json X -o SYMLINK" "--json" "--output $O/sym" "$MYRIAD" du --json "$O/x" -o "$O/sym" "$T"
refused "find --json X -fprint X" "--json" "-fprint" "$MYRIAD" find --json "$O/x" "$T" -fprint "$O/x"
refused "find -o X -fprint SYMLINK" "--output" "-fprint $O/sym" "$MYRIAD" find -o "$O/x" "$T" -fprint "$O/sym"
refused "find -o NEW -fprint NEW" "--output" "-fprint" "$MYRIAD" find -o "$O/new" "$T" -fprint "$O/./new"
refused "walk -o in the --state directory" "--output $O/st/out" "--state $O/st" "$MYRIAD" walk --state "$O/st" -o "$O/st/out" "$T"
refused "walk --json the --state directory" "--json $O/st2" "--state $O/st2" "$MYRIAD" walk --state "$O/st2" --json "$O/st2" "$T"
refused "du --errors in the --state directory" "--errors" "--state" "$MYRIAD" du -s --state "$O/st" --errors "$O/st/e" "$T"
"$MYRIAD" walk --no-state -o /dev/null --json /dev/null "$T" >/dev/null 2>&1
expect_eq "walk -o /dev/null --json /dev/null: not a file to lose, allowed" 0 $?
# --json - is standard output: a named output that is standard output too would mix with it.
refused "walk -o /dev/stdout --json -" "--json -" "--output /dev/stdout" "$MYRIAD" walk -o /dev/stdout --json - "$T"
refused "find --json - -fprint /dev/stdout" "--json -" "-fprint /dev/stdout" "$MYRIAD" find --json - "$T" -fprint /dev/stdout
refused "walk --json - --errors /dev/stdout" "--json -" "--errors /dev/stdout" "$MYRIAD" walk --json - --errors /dev/stdout "$T"
"$MYRIAD" find -o - "$T" -fprint /dev/stdout 2>/dev/null | wc -l >"$S/n"
expect_eq "find -o - -fprint /dev/stdout: one output, as before" "$n" "$(cat "$S/n")"
"$MYRIAD" walk --no-state --json - --errors - "$T" 2>&1 | grep -c '"entries"' >"$S/n"
expect_eq "walk --json - --errors - (both standard streams): allowed, as before" 1 "$(cat "$S/n")"

# An empty file or directory name is refused up front, naming the option (--json '' used to walk
# everything, then fail with exit 1 and a message naming no option).
for args in "walk --json ''" "walk --errors ''" "walk -o ''" "walk --state ''" "du -o ''" "find --json ''" \
	"find -o ''" "rm --json ''" "copy --errors ''" "verify --state ''" "jobs --state ''" "jobs --json ''" \
	"report -o ''" "lifecycle --out ''" "lifecycle --image-dir ''"; do
	set -- $args
	"$MYRIAD" "$1" "$2" '' $([ "$1" = jobs ] || [ "$1" = lifecycle ] || echo "$T") >"$S/out" 2>"$S/err"
	rc=$?
	[ $rc = 2 ] && grep -qF -- "${2/#-o/--output} ''" "$S/err" && ok "$args: refused up front, naming the option" ||
		fail "$args: exit $rc: $(cat "$S/err")"
done
"$MYRIAD" find "$T" -fprint '' >"$S/out" 2>"$S/err"
rc=$?
[ $rc = 2 ] && grep -qF -- "-fprint ''" "$S/err" && ok "find -fprint '': refused up front, naming the action" ||
	fail "find -fprint '': exit $rc: $(cat "$S/err")"
