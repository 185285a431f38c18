# walk on trees of every shape: counts and the --print0 set equal what find reports; options;
# bad operands; output formats.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
export XDG_STATE_HOME=$S/state
T=$S/tree
mkdir -p "$T"
make_hostile_tree "$T"

"$MYRIAD" walk --json "$S/w.json" "$T" >"$S/summary" 2>"$S/err"
expect_eq "hostile tree: exit 0" 0 $?
expect_eq "hostile tree: counts by type equal find's" "$(find_counts "$T")" "$(walk_counts "$S/w.json")"
expect_eq "hostile tree: no errors reported" "" "$(cat "$S/err")"
grep -q "entries" "$S/summary" && ok "a one-line text summary is printed" || fail "no text summary: $(cat "$S/summary")"

"$MYRIAD" walk --print0 "$T" 2>/dev/null | sort -z | md5sum >"$S/m1"
find "$T" -print0 | sort -z | md5sum >"$S/m2"
expect_eq "hostile tree: --print0 set equals find -print0" "$(cat "$S/m2")" "$(cat "$S/m1")"

"$MYRIAD" walk --no-state -o "$S/out" --print0 "$T" >/dev/null 2>&1
expect_eq "--output FILE holds the same paths" "$(cat "$S/m2")" "$(sort -z "$S/out" | md5sum)"

"$MYRIAD" walk --print "$T/sub" 2>/dev/null | sort >"$S/p1"
find "$T/sub" | sort >"$S/p2"
check "--print lists one path per line" cmp -s "$S/p1" "$S/p2"

"$MYRIAD" walk --no-state --print --type f,l "$T/sub" 2>/dev/null | sort >"$S/p1"
find "$T/sub" \( -type f -o -type l \) | sort >"$S/p2"
check "--type f,l prints only files and symlinks" cmp -s "$S/p1" "$S/p2"

"$MYRIAD" walk --no-state --print --exclude 'deep*' --exclude 'mmm*' "$T" 2>/dev/null | sort >"$S/p1"
find "$T" \( -name 'deep*' -o -name 'mmm*' \) -prune -o -print | sort >"$S/p2"
check "--exclude skips matching entries and does not enter directories" cmp -s "$S/p1" "$S/p2"

# --exclude NAME/: directories only; a '/' elsewhere (a path) or an empty pattern is refused, in
# every command that takes --exclude (such a pattern used to match nothing, silently).
K=$S/kx
mkdir -p "$K/a/keep/in" "$K/b"
touch "$K/a/keep/in/f" "$K/b/keep"
"$MYRIAD" walk --no-state --print --exclude 'keep//' "$K" 2>/dev/null | sort >"$S/p1"
find "$K" -name keep -type d -prune -o -print | sort >"$S/p2"
check "--exclude keep//: skips the directories keep, lists the file keep" cmp -s "$S/p1" "$S/p2"
"$MYRIAD" du --no-state --inodes -s --exclude 'keep/' "$K" 2>/dev/null | cut -f1 >"$S/n"
expect_eq "du --exclude keep/: counts the file keep, not the directory's subtree" "$(wc -l <"$S/p2")" "$(cat "$S/n")"
for args in "walk ''" "walk $K ''" "du ''" "find ''" "verify ''"; do
	eval "\"\$MYRIAD\" $args" >/dev/null 2>"$S/err"
	expect_eq "$args: refused, naming the empty operand" "2 yes" "$? $(grep -q "'': an empty operand" "$S/err" && echo yes)"
done
for cmd in walk find du; do
	for pat in a/keep '*/keep' ''; do
		"$MYRIAD" $cmd --no-state --exclude "$pat" "$K" >"$S/out" 2>"$S/err"
		rc=$?
		grep -qF -- "--exclude '$pat': " "$S/err" && [ ! -s "$S/out" ] && [ $rc = 2 ] &&
			ok "$cmd --exclude '$pat': refused up front, naming the pattern" || fail "$cmd --exclude '$pat': exit $rc: $(cat "$S/err" "$S/out")"
	done
done

"$MYRIAD" walk --no-state --stat --json "$S/s.json" "$T/sub" >/dev/null 2>&1
want=$(find "$T/sub" -printf '%s\n' | awk '{s+=$1} END {print s}')
expect_eq "--stat apparent bytes equal find -printf %s" "$want" "$(json_num "$S/s.json" apparent_bytes)"
want=$(find "$T/sub" -printf '%b\n' | awk '{s+=$1*512} END {print s}')
expect_eq "--stat allocated bytes equal find's %b" "$want" "$(json_num "$S/s.json" allocated_bytes)"

# Several operands, a trailing slash, -j 1.
"$MYRIAD" walk --no-state -j 1 --print "$T/sub/" "$T/-dash" 2>/dev/null | sort >"$S/p1"
find "$T/sub/" "$T/-dash" | sort >"$S/p2"
check "several operands, trailing slash, -j 1" cmp -s "$S/p1" "$S/p2"

# A 100k-entry directory.
"$MKTREE" "$S/big" --flat --files 100000
"$MYRIAD" walk --no-state --json "$S/b.json" "$S/big" >/dev/null 2>&1
expect_eq "100k-entry directory: counts equal find's" "$(find_counts "$S/big")" "$(walk_counts "$S/b.json")"
"$MYRIAD" walk --no-state --print0 "$S/big" 2>/dev/null | sort -z | md5sum >"$S/m1"
find "$S/big" -print0 | sort -z | md5sum >"$S/m2"
expect_eq "100k-entry directory: --print0 set equals find's" "$(cat "$S/m2")" "$(cat "$S/m1")"

# Bad operands and options: exit 2 before any work, naming the problem.
"$MYRIAD" walk "$S/missing" 2>"$S/err"
expect_eq "missing operand: exit 2" 2 $?
grep -q "missing" "$S/err" && ok "missing operand: message names the path" || fail "message: $(cat "$S/err")"
"$MYRIAD" walk "$T" "$T/file" 2>"$S/err" >/dev/null
expect_eq "non-directory operand: exit 2" 2 $?
grep -q "not a directory" "$S/err" && ok "non-directory operand: says so" || fail "message: $(cat "$S/err")"
"$MYRIAD" walk 2>/dev/null
expect_eq "no operand: exit 2" 2 $?
"$MYRIAD" walk --bogus "$T" 2>/dev/null
expect_eq "unknown option: exit 2" 2 $?
"$MYRIAD" walk -j 0 "$T" 2>/dev/null
expect_eq "bad thread count: exit 2" 2 $?
"$MYRIAD" walk --type fx "$T" 2>/dev/null
expect_eq "bad --type: exit 2" 2 $?
"$MYRIAD" walk --help | grep -q -- "--print0" && ok "--help describes the options" || fail "--help"
"$MYRIAD" --version | grep -q "^myriad [0-9]" && ok "--version" || fail "--version"

# JSON summary names the roots as bytes, reversibly.
"$MYRIAD" walk --no-state --json - "$T"/$'bad\xff\xfeutf8' 2>/dev/null >"$S/j"
grep -q 'bad\\udcff\\udcfeutf8' "$S/j" && ok "JSON encodes invalid UTF-8 reversibly" || fail "JSON: $(cat "$S/j")"

# State: a finished run removes its state; the default state lives under XDG_STATE_HOME.
"$MYRIAD" walk "$T" >/dev/null 2>&1
expect_eq "a finished run leaves no state behind" "" "$(ls "$S/state/myriad" 2>/dev/null)"
"$MYRIAD" walk --state "$T/sub/state" "$T" >/dev/null 2>"$S/err"
expect_eq "a state directory inside the tree is refused" 2 $?

# Found in a review of the docs: --type f --type d kept only d; --json - with --print mixed the
# summary into the paths on standard output.
D=$(scratch)/types
mkdir -p "$D/d" && touch "$D/f" && ln -s f "$D/l"
expect_eq "--type f --type d: the lists add up" "$D $D/d $D/f" \
	"$("$MYRIAD" walk --no-state --type f --type d --print "$D" 2>/dev/null | sort | tr '\n' ' ' | sed 's/ $//')"
"$MYRIAD" walk --no-state --json - --print "$D" >"$D.out" 2>&1
expect_eq "--json - with --print to standard output: refused (exit 2)" 2 $?
grep -q -- "--json -: the summary would mix with the paths" "$D.out" && ok "--json - --print: says why" ||
	fail "--json - --print: $(cat "$D.out")"
"$MYRIAD" walk --no-state --json - --print -o "$D.list" "$D" >/dev/null 2>&1
expect_eq "--json - with -o FILE: fine" "0 4" "$? $(wc -l <"$D.list")"
"$MYRIAD" walk --no-state --type '' "$D" >/dev/null 2>&1
expect_eq "--type '': exit 2" 2 $?

# "1 files", "1 errors": a count of one takes the singular (found in a review of the output).
D=$(scratch)/one
mkdir -p "$D" && touch "$D/f"
"$MYRIAD" walk --no-state "$D" 2>/dev/null | grep -q '^2 entries: 1 file, 1 directory; 0 errors;' &&
	ok "summary: 1 file, 1 directory" || fail "summary: $("$MYRIAD" walk --no-state "$D" 2>&1)"
"$MYRIAD" fill --no-state -n 1 "$D/fill" 2>/dev/null | grep -q '^fill complete: 1 file (1 created' &&
	ok "fill -n 1: says 1 file" || fail "fill -n 1: $("$MYRIAD" fill --no-state -n 1 "$D/fill2" 2>&1)"

# A tree 5,000 deep (paths ~10 kB, longer than PATH_MAX): each directory opened by its path from
# the operand made the walk quadratic (1.2-1.6 s where find took 0.14-0.25 s). Now it opens each
# child by name in the parent it holds: the same set as find, in at most 2x find's time (the best of
# three runs each, so one slow run of either does not decide).
D=$(scratch)/deep
"$MKTREE" "$D" --chain 5000
"$MYRIAD" walk --no-state --print0 "$D" 2>/dev/null | sort -z | md5sum >"$S/m1"
find "$D" -print0 | sort -z | md5sum >"$S/m2"
expect_eq "depth 5000: --print0 set equals find's" "$(cat "$S/m2")" "$(cat "$S/m1")"
best_ms() { # best_ms CMD...: the fastest of three runs, in ms
	local i t0 t best=
	for i in 1 2 3; do
		t0=$(date +%s%N)
		"$@" >/dev/null 2>&1
		t=$((($(date +%s%N) - t0) / 1000000))
		[ -z "$best" ] || [ "$t" -lt "$best" ] && best=$t
	done
	echo "$best"
}
walk_ms=$(best_ms "$MYRIAD" walk --no-state "$D")
find_ms=$(best_ms find "$D" -printf '')
[ "$walk_ms" -le $((2 * find_ms + 20)) ] && ok "depth 5000: walk within 2x find (${walk_ms} ms vs ${find_ms} ms)" ||
	fail "depth 5000: walk took ${walk_ms} ms, find ${find_ms} ms (more than 2x)"
rm -rf "$D"
