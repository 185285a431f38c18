# du: the value of every directory equals GNU du's (--inodes, -b, -B1, -h) on a hostile tree, a
# tree with hard links and /usr; --max-depth, --summarize, --top, --total, --count-links, --xdev
# equal theirs in du; repeated and nested operands count once (du -c's lines and total); a hard
# link spanning directories counts once in every total that holds all its names, also with the map
# spilled to disk (--link-memory 0); bad operands and depths are usage errors; `.` and `..` print
# as du prints them; a closed pipe ends it quietly; killed with -9 at random moments or stopped by
# SIGINT and resumed, its output (-o FILE, --top) is what an uninterrupted run gives; on a failing
# filesystem (faultfs) failures are reported, exit 1, and the values equal du's on the same mount.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
export XDG_STATE_HOME=$S/state
T=$S/tree
mkdir -p "$T"
make_hostile_tree "$T/h"
"$MKTREE" "$T/m" --files 20000 --fanout 40 --size 3000 >/dev/null
# Hard links inside one directory (so that every directory's value is order-free), and one
# name of each in a directory of its own.
mkdir -p "$T/links/same" "$T/span/a/deep" "$T/span/b"
for i in $(seq 50); do
	head -c $((i * 1000)) /dev/zero >"$T/links/same/f$i"
	ln "$T/links/same/f$i" "$T/links/same/g$i"
	head -c $((i * 700)) /dev/zero >"$T/span/a/deep/x$i"
	ln "$T/span/a/deep/x$i" "$T/span/b/y$i"
	ln "$T/span/a/deep/x$i" "$T/span/a/z$i"
done
head -c 5000 /dev/zero >"$T/links/outside" # a link whose other name is outside the operand
ln "$T/links/outside" "$S/outside-name"

# du -0 sorted by path: "VALUE<TAB>PATH" records.
sorted() { sort -z -t$'\t' -k2; }
same_as_du() { # NAME DIR MYRIAD-OPTIONS -- DU-OPTIONS
	local name=$1 dir=$2 mo=() duo=()
	shift 2
	while [ "$1" != -- ]; do mo+=("$1"); shift; done
	shift
	duo=("$@")
	local rc try
	for try in 1 2; do # twice: a real tree may change under both (a package installed meanwhile)
		"$MYRIAD" du --no-state -0 "${mo[@]}" "$dir" 2>"$S/err" | sorted >"$S/mine"
		rc=${PIPESTATUS[0]}
		du -0 "${duo[@]}" "$dir" 2>/dev/null | sorted >"$S/theirs"
		cmp -s "$S/mine" "$S/theirs" && break
	done
	if [ "$rc" = 0 ] && cmp -s "$S/mine" "$S/theirs"; then
		ok "$name: equals du ${duo[*]} ($(tr -cd '\0' <"$S/mine" | wc -c) directories)"
	else
		fail "$name: exit $rc, differs from du ${duo[*]}: $(diff <(tr '\0' '\n' <"$S/mine") <(tr '\0' '\n' <"$S/theirs") | head -5 | tr '\n' ' ') $(head -c 300 "$S/err")"
	fi
}

for dir in "$T/h" "$T/m" "$T/links"; do
	n=$(basename "$dir")
	same_as_du "$n --inodes" "$dir" --inodes -- --inodes
	same_as_du "$n -b" "$dir" -b -- -b
	same_as_du "$n default (-B1)" "$dir" -- -B1
	same_as_du "$n -h" "$dir" -h -- -h
done
same_as_du "--count-links" "$T/span" -l -b -- -l -b
same_as_du "--max-depth 1" "$T/m" --max-depth 1 --inodes -- --max-depth 1 --inodes
same_as_du "--max-depth 0" "$T/m" --max-depth 0 -b -- --max-depth 0 -b
same_as_du "--summarize" "$T/h" -s -B1 -- -s -B1
same_as_du "--exclude" "$T/m" --exclude 'd1*' --inodes -- --exclude 'd1*' --inodes
for d in /usr/share /usr/lib; do
	[ -d $d ] && same_as_du "$d -B1 (a real tree)" $d -B1 -- -B1
done

# Hard links spanning directories: GNU du charges each inode to the name it meets first, in its
# order; every total that holds all the names is the same whichever that is.
for u in --inodes -b -B1; do
	want=$(du -s $u "$T/span" "$T/span/a" 2>/dev/null | head -1 | cut -f1)
	got=$("$MYRIAD" du --no-state -s $u "$T/span" 2>/dev/null | cut -f1)
	expect_eq "hard links across directories, $u: the operand counts each inode once" "$want" "$got"
	got=$("$MYRIAD" du --no-state --link-memory 0 $u "$T/span" 2>/dev/null | awk -F'\t' -v p="$T/span" '$2 == p { print $1 }')
	expect_eq "hard links across directories, $u, the map on disk (--link-memory 0)" "$want" "$got"
done
"$MYRIAD" du --no-state --inodes "$T/links" >/dev/null 2>&1 && ok "a link whose other name is outside is counted" ||
	fail "links with outside names"
"$MYRIAD" du --no-state --json "$S/j.json" -s -b "$T/span" >/dev/null 2>&1
expect_eq "--json: apparent bytes of the operand" "$(du -sb "$T/span" | cut -f1)" "$(json_num "$S/j.json" apparent_bytes)"
expect_eq "--json: entries" "$(du -s --inodes "$T/span" | cut -f1)" "$(json_num "$S/j.json" entries)"

# --top N: the N largest values of du's lines, largest first; --total: du -c's last line.
got=$("$MYRIAD" du --no-state --top 7 --inodes "$T/m" 2>/dev/null | cut -f1 | tr '\n' ' ')
want=$(du --inodes "$T/m" | sort -rn | head -7 | cut -f1 | tr '\n' ' ')
expect_eq "--top 7: the 7 largest, largest first" "$want" "$got"
got=$("$MYRIAD" du --no-state -s -c -b "$T/m" "$T/links" 2>/dev/null | tail -1)
expect_eq "--total: du -c's total line" "$(du -s -c -b "$T/m" "$T/links" | tail -1)" "$got"
got=$("$MYRIAD" du --no-state -s -b "$T/links" "$T/m" 2>/dev/null | cut -f2 | tr '\n' ' ')
expect_eq "--summarize: one line per operand, in operand order" "$T/links $T/m " "$got"

# Repeated and nested operands, as GNU du: a directory is counted (and printed) once, under the
# first operand that reaches it; the total counts everything once.
# Names past ASCII and not UTF-8, compared in both locales.
mkdir -p "$T/nest/süb/déep" "$T/nest/süb/"$'\xe9x'
head -c 10000 /dev/zero >"$T/nest/f"
head -c 5000 /dev/zero >"$T/nest/süb/g"
head -c 3000 /dev/zero >"$T/nest/süb/déep/h"
head -c 700 /dev/zero >"$T/nest/süb/"$'\xe9x/\xe9'
N=$T/nest
B=$N/süb
for ops in "$N $N" "$N $B" "$B $N" "$B/déep $B $N" "$N $N/./süb/.." "$B/déep $B/déep/.. $N"; do
	for o in "" -s --inodes; do
		l=C.UTF-8
		[ "$o" = -s ] && l=C
		LC_ALL=$l du -c -B1 $o $ops 2>/dev/null | LC_ALL=C sort >"$S/theirs"
		LC_ALL=$l "$MYRIAD" du --no-state -c $o $ops 2>"$S/err" | LC_ALL=C sort >"$S/mine"
		name="-c $o on ${ops//$N/N} ($l): du -c's lines and total"
		cmp -s "$S/mine" "$S/theirs" && ok "$name" ||
			fail "$name: $(diff "$S/mine" "$S/theirs" | head -6 | tr '\n' ' ') $(head -c 200 "$S/err")"
	done
done

# Usage errors: exit 2, naming what is wrong.
for args in "--max-depth -1" "--max-depth x" "--top 0" "--inodes -b" "-B2" "-s --max-depth 2"; do
	"$MYRIAD" du --no-state $args "$T/m" >/dev/null 2>"$S/err"
	rc=$?
	[ $rc = 2 ] && [ -s "$S/err" ] && ok "'$args': usage error" || fail "'$args': exit $rc: $(cat "$S/err")"
done
"$MYRIAD" du --no-state "$T/m" "$S/nonexistent" >/dev/null 2>"$S/err"
rc=$?
[ $rc = 2 ] && grep -q "nonexistent" "$S/err" && ok "a nonexistent operand: exit 2, named" || fail "nonexistent: $rc $(cat "$S/err")"
"$MYRIAD" du --no-state "$T/links/outside" >/dev/null 2>"$S/err"
expect_eq "a file operand: exit 2" 2 $?
"$MYRIAD" du >/dev/null 2>&1
expect_eq "no operand: exit 2" 2 $?

# . and .. print as du prints them.
(cd "$T/m" && "$MYRIAD" du --no-state -0 --inodes . 2>/dev/null | sorted) >"$S/mine"
(cd "$T/m" && du -0 --inodes . | sorted) >"$S/theirs"
check "operand .: equals du ." cmp -s "$S/mine" "$S/theirs"
(cd "$T/links/same" && "$MYRIAD" du --no-state -0 -b .. 2>/dev/null | sorted) >"$S/mine"
(cd "$T/links/same" && du -0 -b .. | sorted) >"$S/theirs"
check "operand ..: equals du .." cmp -s "$S/mine" "$S/theirs"

# A closed pipe ends the run quietly (SIGPIPE), keeping no state.
"$MYRIAD" du "$T/m" 2>"$S/err" | head -1 >/dev/null
rc=${PIPESTATUS[0]}
expect_eq "| head -1: ends by SIGPIPE, quietly" "141 " "$rc $(cat "$S/err")"
expect_eq "| head -1: no state left" "" "$(ls "$S/state/myriad" 2>/dev/null)"

# kill -9 at random moments, resumed each time: the same lines, each once; also --top to stdout.
# Hard-link groups all over a tree, their names met far apart: the resumed map must be the one
# the killed run had (which directory an inode is charged to depends on the order names are met,
# so below spread and span only the operands' own lines are compared).
"$MKTREE" "$T/spread" --files 12000 --fanout 30 --size 100 >/dev/null
find "$T/spread" -type f | awk 'NR % 10 == 0' >"$S/files"
paste -d' ' "$S/files" <(tac "$S/files") | while read -r a b; do ln "$a" "$b.ln"; done
only() { grep -av -e "$T/spread/" -e "$T/span/" "$1" | sort; }
"$MYRIAD" du --no-state -b -o "$S/base" "$T" >/dev/null 2>&1
"$MYRIAD" du --no-state --top 20 --exclude spread --exclude span "$T" >"$S/base-top" 2>/dev/null
for mode in out top; do
	rm -f "$S/out" "$S/top"
	kills=0
	for i in $(seq 6); do
		touch "$S/k.mark"
		if [ $mode = out ]; then
			"$MYRIAD" du -b --rate 8k --checkpoint-interval 0.05 --link-memory 0 -o "$S/out" "$T" >/dev/null 2>&1 &
		else
			"$MYRIAD" du --rate 8k --checkpoint-interval 0.05 --top 20 --exclude spread --exclude span "$T" >"$S/top" 2>/dev/null &
		fi
		pid=$!
		wait_for_glob "$S/state/myriad/*/snapshot" 20 "$S/k.mark" || fail "kill -9: no checkpoint within 20 s"
		sleep "0.$((RANDOM % 4 + 1))"
		last=done
		kill -9 $pid 2>/dev/null && kills=$((kills + 1)) last=killed
		wait $pid 2>/dev/null
		# A run that finished as the signal came (kill succeeds on a process exiting) removed its
		# state: the next run starts afresh, and says nothing of resuming.
		[ -n "$(ls "$S/state/myriad")" ] || last=done
	done
	if [ $mode = out ]; then
		"$MYRIAD" du -b --link-memory 0 -o "$S/out" "$T" >/dev/null 2>"$S/err"
		rc=$?
		expect_eq "kill -9 x$kills, -o FILE: resumed run exits 0" "0" "$rc"
		expect_eq "kill -9 x$kills, -o FILE: the lines of an uninterrupted run, each once" \
			"$(only "$S/base" | md5sum)" "$(only "$S/out" | md5sum)"
		expect_eq "kill -9 x$kills, -o FILE: as many lines" "$(wc -l <"$S/base")" "$(wc -l <"$S/out")"
	else
		"$MYRIAD" du --top 20 --exclude spread --exclude span "$T" >"$S/top" 2>"$S/err"
		expect_eq "kill -9 x$kills, --top 20 on stdout: resumed, the same list" "$(cat "$S/base-top")" "$(cat "$S/top")"
	fi
	if [ $last = killed ]; then
		grep -q "resuming" "$S/err" && ok "kill -9 ($mode): the last run resumed" || fail "kill -9 ($mode): not resumed: $(cat "$S/err")"
	fi
	expect_eq "kill -9 ($mode): state removed at the end" "" "$(ls "$S/state/myriad")"
done

# SIGINT: exit 3 with state saved; the same command finishes the job with the same lines.
rm -f "$S/out"
"$MYRIAD" du -b --rate 20k -o "$S/out" "$T" >/dev/null 2>"$S/err" &
pid=$!
sleep 1
kill -INT $pid
wait $pid
expect_eq "SIGINT: exit 3" 3 $?
grep -q "resume" "$S/err" && ok "SIGINT: says how to resume" || fail "SIGINT: message: $(cat "$S/err")"
"$MYRIAD" du -b -o "$S/out" "$T" >/dev/null 2>&1
expect_eq "SIGINT: the resumed run gives the lines of an uninterrupted run" \
	"$(only "$S/base" | md5sum) $(wc -l <"$S/base")" "$(only "$S/out" | md5sum) $(wc -l <"$S/out")"

# --xdev: a filesystem mounted inside is neither entered nor counted, as du -x.
if is_root; then
	mkdir -p "$S/x/a/mnt"
	head -c 3000 /dev/zero >"$S/x/a/f"
	if mount -t tmpfs -o size=1m inner "$S/x/a/mnt"; then
		on_exit "umount '$S/x/a/mnt'"
		mkdir "$S/x/a/mnt/sub"
		head -c 5000 /dev/zero >"$S/x/a/mnt/sub/in"
		same_as_du "--xdev" "$S/x" -x -b -- -x -b
		same_as_du "without --xdev, the mount is counted" "$S/x" -b -- -b
	else
		skip "--xdev: cannot mount a tmpfs"
	fi
else
	skip "--xdev: needs root to mount a filesystem inside the tree"
fi

# A failing filesystem (tests/faultfs): a directory that cannot be opened, one that cannot be read
# to the end, a file whose stat fails: each reported with path, operation and reason, exit 1, and
# every other value equal to du's on the same failing mount.
if is_root && [ -e /dev/fuse ]; then
	B=$S/backing
	"$MKTREE" "$B/t" --files 2000 --fanout 100 --size 1000 >/dev/null
	if mount_faultfs "$B" "$S/fm" --rule 'opendir:/t/d3:EIO' --rule 'readdir:/t/d5:EIO' \
		--rule 'getattr:/t/d7/f7*:EIO'; then
		for u in --inodes -b; do
			"$MYRIAD" du --no-state -0 $u "$S/fm" 2>"$S/err" | sorted >"$S/mine"
			rc=${PIPESTATUS[0]}
			du -0 $u "$S/fm" 2>/dev/null | sorted >"$S/theirs"
			expect_eq "faults, $u: exit 1" 1 $rc
			check "faults, $u: every directory's value equals du's on the same mount" cmp -s "$S/mine" "$S/theirs"
		done
		grep -q "t/d3: open: Input/output error" "$S/err" && grep -q "t/d5: readdir: Input/output error" "$S/err" &&
			grep -q "t/d7/f7.*: stat: Input/output error" "$S/err" &&
			ok "faults: each reported with path, operation and reason" || fail "faults: stderr: $(head -c 400 "$S/err")"
	else
		fail "faultfs did not mount"
	fi
else
	skip "faults: faultfs needs root and /dev/fuse"
fi

# Memory does not grow with the tree: peak RSS on 300k entries within 1.25x of 50k entries', and
# on 100k subdirectories of one directory (each an open directory while it waits) within 1.25x of
# 10k subdirectories' (-j 2: each worker's buffers are not per-file state).
if [ -x /usr/bin/time ]; then
	R=$S/rss
	mkdir -p "$R"
	if is_root && mount -t tmpfs -o size=2g,nr_inodes=1000000 tmpfs "$R"; then on_exit "umount '$R'"; fi
	"$MKTREE" "$R/small" --files 50000 --fanout 1000 >/dev/null
	"$MKTREE" "$R/large" --files 300000 --fanout 1000 >/dev/null
	"$MKTREE" "$R/narrow" --dirs-only --files 10000 --fanout 10000 >/dev/null
	"$MKTREE" "$R/wide" --dirs-only --files 100000 --fanout 100000 >/dev/null
	for pair in small:large narrow:wide; do
		a=${pair%%:*} b=${pair##*:}
		ra=$(peak_rss_kib "$MYRIAD" du --no-state -j 2 -s "$R/$a")
		rb=$(peak_rss_kib "$MYRIAD" du --no-state -j 2 -s "$R/$b")
		[ "$rb" -le $((ra * 125 / 100)) ] && ok "memory: $b: peak RSS $rb KiB within 1.25x of $a's $ra KiB" ||
			fail "memory: $b: peak RSS $rb KiB > 1.25 x $a's $ra KiB"
	done
else
	skip "memory: GNU time is not installed"
fi
