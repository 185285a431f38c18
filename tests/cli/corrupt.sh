# Damaged files that myriad reads back: a fill manifest, the checkpoint snapshot of each resumable
# command (walk, rm, copy, fill, verify), a walk's --output file, results.json for `myriad report`.
# Each is made for real, then cut at several lengths and changed at several offsets, and the real
# command run on it must refuse it: exit 2, naming the file and what is wrong, touching nothing
# (no resume from a wrong state, no crash, no exit 0 with garbage). The intact file still works,
# so a refusal is the damage's doing. Bad options of every subcommand: exit 2 naming the option.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)

# damages FILE: the damages to try, one a line: "cut N" (keep the first N bytes) or "flip N"
# (change the byte at offset N): at the start, inside and at the very end.
damages() {
	local n
	n=$(stat -c %s "$1")
	printf 'cut %s\n' 0 1 8 15 16 $((n / 3)) $((n / 2)) $((n - 9)) $((n - 1)) | sort -un -k2
	printf 'flip %s\n' 0 7 8 $((n / 4)) $((n / 2)) $((3 * n / 4)) $((n - 9)) $((n - 1)) | sort -un -k2
}

# damage HOW N FILE: apply one damage in place.
damage() {
	local b
	if [ "$1" = cut ]; then
		truncate -s "$2" "$3"
		return
	fi
	b=$(od -An -tu1 -j "$2" -N1 "$3")
	# shellcheck disable=SC2059
	printf "$(printf '\\%03o' $((b ^ 1)))" | dd of="$3" bs=1 seek="$2" conv=notrunc status=none
}

# refused CASE FILE CMD...: CMD must exit 2 with a message naming FILE. Prints what went wrong.
refused() {
	local what=$1 file=$2 rc
	shift 2
	"$@" >"$S/out" 2>"$S/err"
	rc=$?
	if [ $rc -ne 2 ] || ! grep -qF -- "$file" "$S/err"; then
		echo "$what: exit $rc (want 2 naming $file); stderr: $(head -c 300 "$S/err" | tr '\n' ' ')"
		return 1
	fi
	grep -qiE "checksum|truncated|corrupt|cannot be used|not a usable|malformed|expected|unexpected|bad value|not the results|shorter" \
		"$S/err" || { echo "$what: says not what is wrong: $(head -c 300 "$S/err")"; return 1; }
}

# tree_sum DIR: names, types and sizes of everything under DIR (to see that nothing changed).
tree_sum() { (cd "$1" && find . -printf '%p %y %s\n' | sort | md5sum); }

command -v python3 >/dev/null || { skip "python3 is not installed (scripts/deps test)"; exit 0; }

# ---- the fill manifest, read by verify and by fill (resume) ----
F=$S/filled
"$MYRIAD" fill -n 3000 --fanout 10 --size 0-1k --seed 5 --no-state "$F" >/dev/null
cp "$F/.myriad-fill" "$S/manifest.good"
before=$(tree_sum "$F")
bad=0 n=0
while read -r how at; do
	cp "$S/manifest.good" "$F/.myriad-fill"
	damage "$how" "$at" "$F/.myriad-fill"
	refused "verify, manifest $how $at" "$F/.myriad-fill" "$MYRIAD" verify --no-state "$F" || bad=$((bad + 1))
	refused "fill, manifest $how $at" "$F/.myriad-fill" \
		"$MYRIAD" fill -n 3000 --fanout 10 --size 0-1k --seed 5 --no-state "$F" || bad=$((bad + 1))
	n=$((n + 2))
done < <(damages "$S/manifest.good")
cp "$S/manifest.good" "$F/.myriad-fill"
expect_eq "manifest: $n runs of verify and fill on damaged copies refused" 0 $bad
expect_eq "manifest: the refusals left the tree as it was" "$before" "$(tree_sum "$F")"
"$MYRIAD" verify --no-state "$F" >/dev/null 2>&1
expect_eq "manifest: the intact manifest verifies (exit 0)" 0 $?

# ---- checkpoint snapshots ----
# stopped NAME CMD...: run CMD with --state $S/st-NAME and kill it (-9) a moment after its first
# snapshot; the state stays in $S/st-NAME. Its --json summary goes to a FIFO that nobody reads:
# a run that finishes sooner blocks there, before it removes its state.
stopped() {
	local name=$1 pid i
	shift
	rm -f "$S/fifo"
	mkfifo "$S/fifo"
	"$@" --state "$S/st-$name" --checkpoint-interval 0.02 --progress 0 --json "$S/fifo" >/dev/null 2>&1 &
	pid=$!
	for i in $(seq 1000); do
		[ -s "$S/st-$name/snapshot" ] && break
		sleep 0.01
	done
	sleep 0.2
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	[ -s "$S/st-$name/snapshot" ]
}

# snapshot_case NAME WATCHED CMD...: damage copies of $S/st-NAME's snapshot; CMD (run with
# --state on the copy) must refuse each and leave WATCHED (a directory, or a file) unchanged; then
# CMD on the intact state must finish (exit 0).
snapshot_case() {
	local name=$1 watched=$2 bad=0 n=0 sum how at
	shift 2
	sum=$(if [ -d "$watched" ]; then tree_sum "$watched"; else md5sum <"$watched"; fi)
	while read -r how at; do
		rm -rf "$S/damaged-state"
		cp -a "$S/st-$name" "$S/damaged-state"
		damage "$how" "$at" "$S/damaged-state/snapshot"
		refused "$name, snapshot $how $at" "$S/damaged-state/snapshot" "$@" --state "$S/damaged-state" --progress 0 ||
			bad=$((bad + 1))
		n=$((n + 1))
	done < <(damages "$S/st-$name/snapshot")
	expect_eq "$name: $n damaged snapshots refused" 0 $bad
	expect_eq "$name: the refusals changed nothing" "$sum" \
		"$(if [ -d "$watched" ]; then tree_sum "$watched"; else md5sum <"$watched"; fi)"
	"$@" --state "$S/st-$name" --progress 0 >/dev/null 2>"$S/err"
	expect_eq "$name: the intact snapshot resumes to the end (exit 0)" 0 $?
}

T=$S/tree
"$MKTREE" "$T" --files 4000 --fanout 20 >/dev/null
if stopped walk "$MYRIAD" walk --rate 4k -o "$S/walk.out" "$T"; then
	snapshot_case walk "$S/walk.out" "$MYRIAD" walk -o "$S/walk.out" "$T"
	# The --output file's length is in the snapshot: a shorter file is refused, not appended to.
	stopped walk2 "$MYRIAD" walk --rate 4k -o "$S/walk2.out" "$T"
	truncate -s 0 "$S/walk2.out"
	refused "walk, --output cut" "$S/walk2.out" "$MYRIAD" walk -o "$S/walk2.out" --state "$S/st-walk2" "$T"
	check "walk: an --output file shorter than its snapshot says is refused" [ $? -eq 0 ]
else
	fail "walk: no snapshot to damage"
fi

cp -a "$T" "$S/rmtree"
if stopped rm "$MYRIAD" rm --rate 4k "$S/rmtree"; then
	snapshot_case rm "$S/rmtree" "$MYRIAD" rm "$S/rmtree"
else
	fail "rm: no snapshot to damage"
fi

if stopped copy "$MYRIAD" copy --rate 4k "$T" "$S/copied"; then
	snapshot_case copy "$S/copied" "$MYRIAD" copy "$T" "$S/copied"
else
	fail "copy: no snapshot to damage"
fi

if stopped fill "$MYRIAD" fill -n 4000 --fanout 20 --rate 4k "$S/fill2"; then
	snapshot_case fill "$S/fill2" "$MYRIAD" fill -n 4000 --fanout 20 "$S/fill2"
else
	fail "fill: no snapshot to damage"
fi

if stopped verify "$MYRIAD" verify -j 1 "$S/fill2"; then
	snapshot_case verify "$S/fill2" "$MYRIAD" verify -j 1 "$S/fill2"
else
	fail "verify: no snapshot to damage"
fi

# ---- results.json, read by myriad report ----
R=$TOP/tests/fuzz/corpus/results/lifecycle-results.json # a real one, made by tests/fuzz/make-corpus.sh
if [ -s "$R" ]; then
	cp "$R" "$S/results.json"
	"$MYRIAD" report -o "$S/report.html" "$S/results.json" >/dev/null 2>"$S/err"
	expect_eq "report: the intact results.json renders (exit 0)" 0 $?
	# Cuts anywhere but in the final newline, and changes to the bytes that make it JSON or
	# lifecycle's: braces, brackets, quotes, colons, commas, the command's name.
	n=$(stat -c %s "$R")
	offsets=$(python3 - "$R" <<'EOF'
import sys
d = open(sys.argv[1], 'rb').read()
picks = [d.index(b'{'), d.index(b'"'), d.index(b':'), d.index(b','), d.index(b'[', d.index(b'"cycles"')),
         d.index(b'lifecycle"') + 3, d.rindex(b']'), d.rindex(b'}')]
print(' '.join(str(p) for p in picks))
EOF
)
	bad=0 k=0
	for spec in "cut 0" "cut 1" "cut $((n / 5))" "cut $((n / 2))" "cut $((n - 2))" $(for o in $offsets; do echo "flip:$o"; done); do
		spec=${spec/:/ }
		cp "$R" "$S/results.json"
		rm -f "$S/report.html"
		damage $spec "$S/results.json"
		refused "report, results.json $spec" "$S/results.json" "$MYRIAD" report -o "$S/report.html" "$S/results.json" ||
			bad=$((bad + 1))
		[ -e "$S/report.html" ] && { echo "report: results.json $spec: a report was written"; bad=$((bad + 1)); }
		k=$((k + 1))
	done
	expect_eq "report: $k damaged results.json refused, no report written" 0 $bad
else
	fail "report: $R is missing (tests/fuzz/make-corpus.sh makes it)"
fi

# ---- bad options: exit 2, naming the option ----
bad=0 k=0
while IFS='|' read -r opt args; do
	[ -n "$opt" ] || continue
	# shellcheck disable=SC2086
	"$MYRIAD" $args >"$S/out" 2>"$S/err"
	rc=$?
	if [ $rc -ne 2 ] || ! grep -qF -- "$opt" "$S/err"; then
		echo "myriad $args: exit $rc (want 2 naming $opt); stderr: $(head -c 200 "$S/err" | tr '\n' ' ')"
		bad=$((bad + 1))
	fi
	k=$((k + 1))
done <<EOF
--bogus|walk --bogus $S
--type|walk --type q $S
--type|walk --type
--rate|walk --rate 0 $S
--rate|walk --rate 1x $S
--threads|walk -j 0 $S
--threads|walk -j 99999 $S
--progress|walk --progress nan $S
--progress|walk --progress -1 $S
--checkpoint-interval|walk --checkpoint-interval 0 $S
--checkpoint-interval|walk --checkpoint-interval inf $S
--bogus|fill --bogus -n 1 $S/x
--files|fill -n 1x $S/x
--files|fill -n +5 $S/x
--files|fill -n 2P $S/x
--size|fill -n 1 -s 64k-1k $S/x
--size|fill -n 1 -s 1k-2k-3k $S/x
--fanout|fill -n 1 --fanout 1 $S/x
--fanout|fill -n 1P --fanout 2 $S/x
--sync|fill -n 1 --sync sometimes $S/x
--seed|fill -n 1 --seed -3 $S/x
--files|fill $S/x
--bogus|verify --bogus $S
--threads|verify -j x $S
--bogus|rm --bogus $S/none
--ionice|rm --ionice rt:1 $S/none
--rate|rm --rate 0 $S/none
--bogus|copy --bogus $S/a $S/b
--bwlimit|copy --bwlimit 0 $S/a $S/b
--bwlimit|copy --bwlimit 5q $S/a $S/b
--max-errors|copy --max-errors 0 $S/a $S/b
--check|copy --check --dry-run $S/a $S/b
--bogus|lifecycle --bogus
--scales|lifecycle --scales 1k,x
--fs|lifecycle --fs ext4,zfs
--mkfs-opts|lifecycle --mkfs-opts nofs
--size|lifecycle -s 9k-1k
--project|lifecycle --project 0
--yes|lifecycle --device /dev/null
--bogus|report --bogus x.json
--project|report --project 0 x.json
EOF
expect_eq "options: $k bad options or values, each refused with exit 2 naming it" 0 $bad
