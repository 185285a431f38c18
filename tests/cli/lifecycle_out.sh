# lifecycle's --out is new, empty or its own (its mark .myriad-lifecycle, or a results.json that
# loads as lifecycle's): a directory holding a results.json that is not lifecycle's, a user's file,
# a made.list that is not its record (listing a user's file named like one of its images), or, in
# its own directory, a report.html that is not myriad's, is refused with exit 2, by --dry-run too,
# naming the entry and what to do, and nothing in it changes. Its own --out is resumed as before; a
# damaged results.json is kept under a free name (results.json.bad.1 beside an older .bad), never
# over a file. myriad report -o writes over its own pages only. All in a tmpfs of its own.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)

is_root || { skip "lifecycle needs root (loop devices, mkfs, mount)"; exit 0; }
for t in mkfs.ext4 e2fsck losetup; do
	command -v $t >/dev/null || { skip "$t is not installed (scripts/deps test)"; exit 0; }
done
sandbox 1g 2>"$S/sandbox.err" || { skip "every --out case: $(cat "$S/sandbox.err")"; exit 0; }
W=$PWD
mkdir -p img

# lc OUT [OPTIONS...]: one small lifecycle run (ext4, 1,000 files) with --out OUT; stdout and
# stderr in $S/out and $S/err.
lc() {
	local out=$1
	shift
	"$MYRIAD" lifecycle --fs ext4 --scales 1000 --image-dir "$W/img" --out "$out" "$@" >"$S/out" 2>"$S/err"
}

# digest DIR: every entry of DIR with its contents (empty when DIR is missing).
digest() { [ -e "$1" ] && tree_digest "$1"; }

# refused NAME DIR ENTRY [OPTIONS...]: lifecycle (with --dry-run, then without) exits 2, names
# DIR/ENTRY and what to do, and DIR is as it was.
refused() {
	local name=$1 dir=$2 entry=$3 before mode rc
	shift 3
	before=$(digest "$dir")
	for mode in --dry-run ""; do
		lc "$dir" $mode "$@"
		rc=$?
		if [ $rc != 2 ] || [ "$before" != "$(digest "$dir")" ]; then
			fail "$name${mode:+ ($mode)}: want exit 2 and $dir unchanged, got exit $rc: $(head -c 400 "$S/err")"
		elif ! grep -q "refusing --out $dir: $dir/$entry .*choose another --out.* or remove $dir/$entry" "$S/err"; then
			fail "$name${mode:+ ($mode)}: the refusal does not name $dir/$entry and what to do: $(cat "$S/err")"
		elif [ -n "$mode" ] && grep -q "every check passed" "$S/out"; then
			fail "$name ($mode): says every check passed"
		else
			ok "$name${mode:+ ($mode)}: exit 2, names $entry and what to do, nothing changed"
		fi
	done
}

# A results.json that is not lifecycle's, beside a report.html and a results.json.bad of the user's.
mkdir foreign
echo '{"mine": true}' >foreign/results.json
echo '<p>my page</p>' >foreign/report.html
echo older >foreign/results.json.bad
refused "a results.json not lifecycle's" foreign results.json

# A directory of the user's, with neither mark nor results.json.
mkdir notes
echo keep >notes/notes.txt
refused "a user's directory" notes notes.txt

# A made.list that is not lifecycle's record, listing a user's empty file named like one of
# lifecycle's images: the start-up clean-up of a killed run's leftovers must not take it.
mkdir plant
: >plant/myriad-lifecycle-ext4-1000-4242.img
printf 'image\t%s\n' "$W/plant/myriad-lifecycle-ext4-1000-4242.img" >plant/made.list
refused "a made.list not lifecycle's" plant made.list --image-dir "$W/plant"
expect_eq "a made.list not lifecycle's: the user's file named like an image is still there" yes \
	"$([ -f plant/myriad-lifecycle-ext4-1000-4242.img ] && echo yes || echo no)"

# A new --out: made, marked, run; the same --out again resumes (the cycle is not run again).
lc own
rc=$?
expect_eq "a new --out: exit 0, marked with .myriad-lifecycle" "0 yes" "$rc $([ -s own/.myriad-lifecycle ] && echo yes || echo no)"
lc own
expect_eq "the same --out again: exit 0, the cycle already complete" "0 1" "$? $(grep -c 'already complete' "$S/out")"
lc own --dry-run
expect_eq "the same --out, --dry-run: exit 0, says it is lifecycle's" "0 1" "$? $(grep -c "out: own is lifecycle's" "$S/out")"

# Made before the mark: a results.json of lifecycle's is enough; the run marks it.
mkdir legacy
cp own/results.json legacy/
lc legacy
expect_eq "an unmarked --out with lifecycle's results.json: exit 0, resumed, marked" "0 1 yes" \
	"$? $(grep -c 'already complete' "$S/out") $([ -s legacy/.myriad-lifecycle ] && echo yes || echo no)"

# Its own --out, but a report.html of the user's in it.
echo '<p>my page</p>' >legacy/report.html
refused "lifecycle's --out with a report.html not myriad's" legacy report.html

# A results.json damaged in its own (marked) --out: kept as results.json.bad.1, the older .bad kept.
head -c 100 own/results.json >"$S/cut" && cat "$S/cut" >own/results.json
echo older >own/results.json.bad
lc own --dry-run
expect_eq "a damaged results.json, --dry-run: exit 0, says it would be kept aside, nothing moved" "0 1 yes" \
	"$? $(grep -c 'would be kept as results.json.bad' "$S/out") $(cmp -s "$S/cut" own/results.json && echo yes || echo no)"
lc own
rc=$?
expect_eq "a damaged results.json: exit 0, kept as results.json.bad.1, the older results.json.bad untouched" \
	"0 yes older" "$rc $(cmp -s "$S/cut" own/results.json.bad.1 && echo yes || echo no) $(cat own/results.json.bad)"

# A results.json that does not load in an unmarked directory: whose it is cannot be told.
mkdir cut
cp "$S/cut" cut/results.json
refused "an unmarked --out with a results.json that does not load" cut results.json

# myriad report -o: its own pages only.
echo mine >mine.txt
"$MYRIAD" report own/results.json -o mine.txt >/dev/null 2>"$S/err"
expect_eq "report -o a file not a report: exit 2, unchanged" "2 mine" "$? $(head -c 40 mine.txt | head -1)"
grep -q "mine.txt.*not a report of myriad's.*choose another -o, or remove mine.txt" "$S/err" &&
	ok "report -o a file not a report: says so and what to do" || fail "report -o: $(cat "$S/err")"
cp own/results.json "$S/r.json"
"$MYRIAD" report own/results.json -o own/results.json >/dev/null 2>&1
expect_eq "report -o its own results.json: exit 2, unchanged" "2 yes" \
	"$? $(cmp -s "$S/r.json" own/results.json && echo yes || echo no)"
"$MYRIAD" report own/results.json -o own/report.html >/dev/null 2>&1
expect_eq "report -o a report of myriad's: exit 0, written over" 0 $?
"$MYRIAD" report own/results.json -o new.html >/dev/null 2>&1
expect_eq "report -o a new file: exit 0, written" "0 yes" "$? $([ -s new.html ] && echo yes || echo no)"
