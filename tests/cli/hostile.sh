# Hostile trees for every command. One tree holds names with newlines, invalid UTF-8 and leading
# dashes, 255-byte names, a path longer than PATH_MAX, a chain 5000 directories deep, a directory
# of 100k entries, symlink loops and every file type: walk counts it as find does, copy reproduces
# it (--check and a digest), rm removes it all. verify and fill work in a DIR with a hostile name;
# JSON outputs give every name's bytes back (surrogateescape). Symlinks planted in a tree are
# never followed out of it, also when a directory is swapped for a symlink or a file while the
# command runs (made deterministic with a faultfs hold). As an ordinary user, unreadable
# directories are reported once and the rest is done. Bad input gets exit 2 and a message naming
# what is wrong, for every subcommand.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
export XDG_STATE_HOME=$S/state
chmod 755 "$S" # the unprivileged user must reach its tree and binary

# json_paths FILE KEY: the KEY field (a string or a list of them) of every JSON document or line
# in FILE, decoded back to bytes, each followed by a NUL; the file must be valid UTF-8.
json_paths() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
out = sys.stdout.buffer
with open(sys.argv[1], encoding="utf-8", errors="strict") as f:
    for line in f:
        if line.strip():
            v = json.loads(line)[sys.argv[2]]
            for p in v if isinstance(v, list) else [v]:
                out.write(p.encode("utf-8", "surrogateescape") + b"\0")
EOF
}
# same_bytes NAME FILE KEY PATH...: the KEY paths of FILE are exactly these bytes (any order).
same_bytes() {
	local name=$1 f=$2 k=$3
	shift 3
	if [ "$(json_paths "$f" "$k" | sort -z | md5sum)" = "$(printf '%s\0' "$@" | sort -z | md5sum)" ]; then
		ok "$name"
	else
		fail "$name: $(head -c 400 "$f")"
	fi
}
# records FILE: "PATH<tab>OP-or-PROBLEM" for each line of an --errors file, NUL-terminated, sorted.
records() {
	python3 - "$1" <<'EOF' | sort -z
import json, sys
out = sys.stdout.buffer
for line in open(sys.argv[1], encoding="utf-8"):
    d = json.loads(line)
    out.write(d["path"].encode("utf-8", "surrogateescape") + b"\t" + (d.get("op") or d["problem"]).encode() + b"\0")
EOF
}
# digest DIR: md5 over every entry's path, type, mode, owner, mtime and symlink target, every
# non-directory's size, and the contents of every file whose path the kernel takes whole.
digest() {
	(
		cd "$1" || exit 1
		find . -mindepth 1 ! -type d -printf '%P\t%y %m %U %G %s %T@ %l\0' | sort -z
		find . -mindepth 1 -type d -printf '%P\t%y %m %U %G %T@\0' | sort -z
		find . -type f -size +0 -print0 | sort -z | xargs -0 md5sum 2>/dev/null
	) | md5sum | cut -d' ' -f1
}
# deep_chain DIR N: N nested directories "d" under DIR, a file with data at the bottom.
deep_chain() {
	python3 - "$1" "$2" <<'EOF'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
for i in range(int(sys.argv[2])):
    os.mkdir("d", dir_fd=fd)
    nfd = os.open("d", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = nfd
w = os.open(b"bottom\n\xff", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
os.write(w, b"the bottom of the chain")
os.close(w)
os.symlink("../../..", "up", dir_fd=fd)
EOF
}
# deep_read DIR N: the bottom file's contents, read through N levels (a path no syscall takes whole).
deep_read() {
	python3 - "$1" "$2" <<'EOF'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
for i in range(int(sys.argv[2])):
    nfd = os.open("d", os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)
    os.close(fd)
    fd = nfd
r = os.open(b"bottom\n\xff", os.O_RDONLY, dir_fd=fd)
sys.stdout.write(os.read(r, 100).decode())
EOF
}

# ---- one hostile tree through walk, copy and rm ----
T=$S/tree
mkdir -p "$T/deep"
make_hostile_tree "$T/h"
deep_chain "$T/deep" 5000
"$MKTREE" "$T/big" --flat --files 100000
n=$(find "$T" -printf x | wc -c)

"$MYRIAD" walk --no-state --progress 0 --json "$S/w.json" "$T" >/dev/null 2>"$S/err"
expect_eq "walk: exit 0 on the hostile tree ($n entries: deep, wide, odd names)" "0 " "$? $(cat "$S/err")"
expect_eq "walk: counts by type equal find's" "$(find_counts "$T")" "$(walk_counts "$S/w.json")"
"$MYRIAD" walk --no-state --progress 0 --print0 "$T" 2>/dev/null | sort -z | md5sum >"$S/m1"
expect_eq "walk: --print0 gives every path's bytes, as find does" "$(find "$T" -print0 | sort -z | md5sum)" "$(cat "$S/m1")"

C=$S/copy
"$MYRIAD" copy --no-state --progress 0 --json "$S/c.json" "$T" "$C" >/dev/null 2>"$S/err"
expect_eq "copy: exit 0 on the hostile tree" "0 " "$? $(cat "$S/err")"
"$MYRIAD" copy --no-state --progress 0 --check "$T" "$C" >/dev/null 2>"$S/err"
expect_eq "copy: --check finds no difference" "0 " "$? $(cat "$S/err")"
expect_eq "copy: the digests agree" "$(digest "$T")" "$(digest "$C")"
expect_eq "copy: the file at the bottom of the 5000-deep chain has its data" "the bottom of the chain" \
	"$(deep_read "$C/deep" 5000)"

"$MYRIAD" rm --no-state --progress 0 --json "$S/r.json" "$C" >/dev/null 2>"$S/err"
expect_eq "rm: exit 0 on the hostile tree" "0 " "$? $(cat "$S/err")"
[ ! -e "$C" ] && ok "rm: the tree is gone" || fail "rm: left $(find "$C" | head -3)"
expect_eq "rm: counts every entry" "$n" $(($(json_num "$S/r.json" files) + $(json_num "$S/r.json" directories)))
[ -e "$T/h/file" ] && ok "rm: the symlinks in the copy led nowhere else" || fail "rm: the source tree was touched"

# ---- names in JSON: every byte comes back ----
B=$'-b\nad\xff\xfe '
mkdir -p "$S/$B"
cp -a "$T/h/sub" "$S/$B/src"
"$MYRIAD" walk --no-state --progress 0 --json "$S/j1" -- "$S/$B/src" "$T/h/-dash" >/dev/null 2>&1
same_bytes "walk --json: the roots' bytes come back" "$S/j1" roots "$S/$B/src" "$T/h/-dash"
"$MYRIAD" copy --no-state --progress 0 --json "$S/j2" -- "$S/$B/src" "$S/$B/-dst" >/dev/null 2>&1
same_bytes "copy --json: SRC's bytes come back" "$S/j2" src "$S/$B/src"
same_bytes "copy --json: DST's bytes come back" "$S/j2" dst "$S/$B/-dst"
names=($'new\nline' $'bad\xff\xfeutf8' '-dash' "$(printf 'x%.0s' $(seq 255))" $'tab\there' '\udcff')
for nm in "${names[@]}"; do echo changed >"$S/$B/-dst/$nm"; done
"$MYRIAD" copy --no-state --progress 0 --check --errors "$S/j3" -- "$S/$B/src" "$S/$B/-dst" >/dev/null 2>&1
expect_eq "copy --check: extra entries with odd names: exit 1" 1 $?
want=("$S/$B/-dst") # its mtime changed
for nm in "${names[@]}"; do want+=("$S/$B/-dst/$nm"); done
same_bytes "copy --check --errors: each odd name's bytes come back" "$S/j3" path "${want[@]}"
(cd "$S/$B" && "$MYRIAD" rm --dry-run --no-state --json "$S/j4" -- -dst >/dev/null 2>&1)
same_bytes "rm --json: the roots' bytes come back" "$S/j4" roots -dst
(cd "$S/$B" && "$MYRIAD" rm --no-state --progress 0 -- -dst >/dev/null 2>&1)
expect_eq "rm -- -DIR: exit 0, gone" "0 no" "$? $([ -e "$S/$B/-dst" ] && echo yes || echo no)"

# ---- fill and verify in a DIR with a hostile name ----
F=$S/$B/-fill
(cd "$S/$B" && "$MYRIAD" fill -n 300 --fanout 10 -s 100 --no-state --json "$S/j5" -- -fill >/dev/null 2>&1)
expect_eq "fill -- -DIR (under a name with a newline and invalid UTF-8): exit 0" 0 $?
same_bytes "fill --json: DIR's bytes come back" "$S/j5" dir -fill
(cd "$S/$B" && "$MYRIAD" verify --no-state -- -fill >/dev/null 2>&1)
expect_eq "verify -- -DIR: exit 0" 0 $?
"$MYRIAD" verify --no-state --json "$S/j6" "$F" >/dev/null 2>&1
same_bytes "verify --json: DIR's bytes come back" "$S/j6" dir "$F"
want=()
for nm in "${names[@]}"; do touch "$F/d1/$nm" && want+=("$F/d1/$nm"); done
ln -s loop2 "$F/d2/loop1"
ln -s loop1 "$F/d2/loop2"
want+=("$F/d2/loop1" "$F/d2/loop2")
"$MYRIAD" verify --no-state --errors "$S/j7" -- "$F" >/dev/null 2>&1
expect_eq "verify: extra entries with odd names and a symlink loop: exit 1" 1 $?
same_bytes "verify --errors: exactly those extras, each name's bytes back" "$S/j7" path "${want[@]}"
rm -f "${want[@]}"
# A directory of the tree replaced by a symlink to an identical copy outside: not followed.
mkdir -p "$S/outside"
mv "$F/d1" "$S/outside/d1"
ln -s "$S/outside/d1" "$F/d1"
"$MYRIAD" verify --no-state --json "$S/j8" -- "$F" >/dev/null 2>&1
expect_eq "verify: a symlinked directory is not followed (its 100 files are missing, it is a wrong type)" "1 100 1 0" \
	"$? $(json_num "$S/j8" missing) $(json_num "$S/j8" wrong_type) $(json_num "$S/j8" extra)"
# A fill resumed in a tree where a symlink was planted does not write through it: it reports it,
# leaves its subtree out and fills the rest (exit 1; more in fill_guard.sh).
F2=$S/fill2
"$MYRIAD" fill -n 300 --fanout 10 --state "$S/fst" "$F2" --rate 500 >/dev/null 2>&1 &
pid=$!
for i in $(seq 100); do [ -e "$F2/d0/d0/f1" ] && break; sleep 0.02; done
kill -INT $pid
wait $pid
rm -rf "$F2/d2" "$S/outside2"
mkdir "$S/outside2"
ln -s "$S/outside2" "$F2/d2"
"$MYRIAD" fill -n 300 --fanout 10 --state "$S/fst" "$F2" >/dev/null 2>"$S/err"
expect_eq "fill: a symlink planted in its tree is not written through (exit 1, the target untouched)" "1 " \
	"$? $(ls "$S/outside2")"
grep -qE "$F2/d2.*(Too many levels of symbolic links|Not a directory)" "$S/err" && ok "fill: says where the tree cannot be made" ||
	fail "fill: stderr: $(cat "$S/err")"
rm -rf "$F2" "$S/fst"

# ---- a 100k-entry directory for verify ----
"$MYRIAD" fill -n 100000 --fanout 100000 --no-state "$S/wide" >/dev/null 2>&1
expect_eq "fill: 100k files in one directory" 100000 "$(find "$S/wide" -name 'f*' | wc -l)"
"$MYRIAD" verify --no-state "$S/wide" >/dev/null 2>&1
expect_eq "verify: 100k files in one directory: exit 0" 0 $?
rm "$S/wide/f77777"
"$MYRIAD" verify --no-state --errors "$S/j9" "$S/wide" >/dev/null 2>&1
expect_eq "verify: one of 100k missing: exit 1, found" "1 $S/wide/f77777" "$? $(json_paths "$S/j9" path | tr -d '\0')"
rm -rf "$S/wide"

# ---- a directory swapped for a symlink or a file while the command runs ----
if is_root && [ -e /dev/fuse ]; then
	SB=$S/sb
	# wait_held PID: until a thread of PID has waited on faultfs for a while (the hold).
	wait_held() {
		local i seen=0
		for i in $(seq 200); do
			if cat /proc/"$1"/task/*/wchan 2>/dev/null | grep -q request_wait_answer; then
				seen=$((seen + 1))
				[ $seen -ge 4 ] && return 0
			else
				seen=0
			fi
			sleep 0.05
		done
		fail "no operation of pid $1 was held"
	}
	# race NAME SWAP CMD...: run CMD on $SM/t while opendir of /t/X is held; meanwhile X is moved
	# out of the tree and SWAP (symlink or file) takes its place; then the hold is released.
	race() {
		local name=$1 swap=$2
		shift 2
		rm -rf "$SB" "$S/away"
		mkdir -p "$SB/t/X/sub" "$SB/t/Y" "$SB/outside"
		touch "$SB/t/X/x1" "$SB/t/X/x2" "$SB/t/X/sub/x3" "$SB/t/Y/y1" "$SB/t/a" "$SB/outside/precious1" \
			"$SB/outside/precious2"
		SM=$S/sm
		mount_faultfs "$SB" "$SM" --pidfile "$S/sm.pid" --rule 'opendir:/t/X:hold,count=1' ||
			{ fail "$name: faultfs did not mount"; return 1; }
		"$@" >"$S/race.out" 2>"$S/race.err" &
		local pid=$!
		wait_held $pid
		mv "$SB/t/X" "$S/away"
		if [ "$swap" = symlink ]; then ln -s ../outside "$SB/t/X"; else echo file >"$SB/t/X"; fi
		kill -USR2 "$(cat "$S/sm.pid")"
		wait $pid
		race_rc=$?
		fusermount3 -u "$SM"
		[ -e "$SB/outside/precious1" ] && [ -e "$SB/outside/precious2" ] && [ -e "$S/away/sub/x3" ] ||
			fail "$name: something outside the tree was touched"
	}
	race "walk, dir swapped for a file" file "$MYRIAD" walk --no-state --json "$S/rw.json" "$S/sm/t"
	expect_eq "walk, dir swapped for a file: exit 0 (it vanished), nothing else counted" "0 5" \
		"$race_rc $(json_num "$S/rw.json" entries)"
	race "walk, dir swapped for a symlink" symlink "$MYRIAD" walk --no-state --print "$S/sm/t"
	expect_eq "walk, dir swapped for a symlink: not followed" "0 " "$race_rc $(grep precious "$S/race.out")"
	race "rm, dir swapped for a symlink" symlink "$MYRIAD" rm --no-state "$S/sm/t"
	expect_eq "rm, dir swapped for a symlink: exit 0, the tree is gone, the symlink's target and the moved directory stay" \
		"0 no " "$race_rc $([ -e "$SB/t" ] && echo yes || echo no) $(cat "$S/race.err")"
	race "rm, dir swapped for a file" file "$MYRIAD" rm --no-state "$S/sm/t"
	expect_eq "rm, dir swapped for a file: exit 0, the tree is gone" "0 no " \
		"$race_rc $([ -e "$SB/t" ] && echo yes || echo no) $(cat "$S/race.err")"
	rm -rf "$S/rdst"
	race "copy, dir swapped for a symlink" symlink "$MYRIAD" copy --no-state "$S/sm/t" "$S/rdst"
	expect_eq "copy, dir swapped for a symlink: exit 1, reported as a change, nothing from outside copied" \
		"1 myriad copy: changed while copied: $S/sm/t/X (no longer a directory: the next run copies what is there then)" \
		"$race_rc $(cat "$S/race.err")"
	expect_eq "copy, dir swapped for a symlink: nothing from outside is in DST" "" "$(find "$S/rdst" -name 'precious*')"
	"$MYRIAD" copy --no-state "$SB/t" "$S/rdst" >/dev/null 2>"$S/err"
	expect_eq "copy, dir swapped for a symlink: the next run copies the symlink" "0 " "$? $(cat "$S/err")"
	"$MYRIAD" copy --no-state --check "$SB/t" "$S/rdst" >/dev/null 2>&1
	expect_eq "copy, dir swapped for a symlink: then --check passes" 0 $?
	# verify: a leaf swapped for a symlink to an identical copy of itself.
	rm -rf "$SB" "$S/away"
	mkdir -p "$SB"
	"$MYRIAD" fill -n 300 --fanout 10 -s 50 --no-state "$SB/t" >/dev/null
	mkdir -p "$SB/outside"
	mount_faultfs "$SB" "$S/sm" --pidfile "$S/sm.pid" --rule 'opendir:/t/d1/d3:hold,count=1' || fail "faultfs did not mount"
	"$MYRIAD" verify --no-state --json "$S/rv.json" "$S/sm/t" >/dev/null 2>&1 &
	pid=$!
	wait_held $pid
	cp -a "$SB/t/d1/d3" "$SB/outside/d3"
	mv "$SB/t/d1/d3" "$S/away"
	ln -s ../../outside/d3 "$SB/t/d1/d3"
	kill -USR2 "$(cat "$S/sm.pid")"
	wait $pid
	expect_eq "verify, leaf swapped for a symlink to a copy: not followed (its 10 files missing)" "1 10" \
		"$? $(json_num "$S/rv.json" missing)"
	fusermount3 -u "$S/sm"
else
	skip "races: faultfs needs root and /dev/fuse"
fi

# ---- unreadable directories, as an ordinary user ----
if is_root && command -v setpriv >/dev/null; then
	N=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	mkdir -p "$S/bin" "$S/nst" "$S/nout"
	cp "$MYRIAD" "$S/bin/myriad"
	chown 65534:65534 "$S/nst" "$S/nout"
	U=$S/u
	L=$'locked\n\xff'
	mkdir -p "$U/src/a" "$U/src/$L/inner" "$U/src/noexec" "$U/dst"
	touch "$U/src/a/f" "$U/src/$L/inner/g" "$U/src/noexec/x"
	echo secret >"$U/src/a/unreadable"
	chown -R 65534:65534 "$U"
	chown 0:0 "$U/src/$L" "$U/src/noexec" "$U/src/a/unreadable"
	chmod 000 "$U/src/$L"
	chmod 600 "$U/src/a/unreadable"
	chmod 644 "$U/src/noexec" # listable, not searchable
	"${N[@]}" "$S/bin/myriad" walk --state "$S/nst/w" --errors "$S/nout/u1" --json "$S/nout/u1.json" "$U/src" >/dev/null 2>"$S/err"
	expect_eq "nobody, walk: exit 1" 1 $?
	expect_eq "nobody, walk: stderr shows the name escaped (newline, invalid UTF-8)" \
		"myriad walk: $U/src/locked\\n\\xff: open: Permission denied" "$(cat "$S/err")"
	same_bytes "nobody, walk: the unreadable directory is reported, its name's bytes back" "$S/nout/u1" path "$U/src/$L"
	expect_eq "nobody, walk: everything else is counted" 7 "$(json_num "$S/nout/u1.json" entries)"
	"${N[@]}" "$S/bin/myriad" copy --state "$S/nst/c" --errors "$S/nout/u2" "$U/src" "$U/dst/c" >/dev/null 2>"$S/err"
	expect_eq "nobody, copy: exit 1" 1 $?
	expect_eq "nobody, copy: each unreadable entry reported once, its name's bytes back" \
		"$(printf '%s\t%s\0' "$U/src/$L" open "$U/src/a/unreadable" open "$U/src/noexec/x" stat | sort -z | md5sum)" \
		"$(records "$S/nout/u2" | md5sum)"
	[ -e "$U/dst/c/a/f" ] && ok "nobody, copy: everything else is copied" || fail "nobody, copy: a/f missing"
	"${N[@]}" "$S/bin/myriad" rm --state "$S/nst/r" --errors "$S/nout/u3" "$U/src" >/dev/null 2>"$S/err"
	expect_eq "nobody, rm: exit 1" 1 $?
	expect_eq "nobody, rm: what it cannot remove stays, the rest is gone" \
		"$(printf '%s\0' "$U/src" "$U/src/$L" "$U/src/noexec" "$U/src/noexec/x" | sort -z | md5sum)" \
		"$(find "$U/src" ! -path '*/inner*' -print0 | sort -z | md5sum)"
	expect_eq "nobody, rm: each reported once, its name's bytes back" \
		"$(printf '%s\t%s\0' "$U/src/$L" open "$U/src/noexec/x" unlink | sort -z | md5sum)" "$(records "$S/nout/u3" | md5sum)"
	# verify: a leaf directory and a file nobody can read.
	"$MYRIAD" fill -n 300 --fanout 10 -s 100 --no-state "$U/f" >/dev/null
	chmod 000 "$U/f/d1/d3" "$U/f/d2/d4/f245"
	"${N[@]}" "$S/bin/myriad" verify --state "$S/nst/v" --errors "$S/nout/u4" --json "$S/nout/u4.json" "$U/f" >/dev/null 2>&1
	expect_eq "nobody, verify: exit 1" 1 $?
	expect_eq "nobody, verify: the unreadable directory and file are reported as such, nothing as missing" \
		"$U/f/d1/d3 open
$U/f/d2/d4/f245 open" "$(sed -E 's/^\{"path":"([^"]*)","(op|problem)":"([^"]*)".*/\1 \3/' "$S/nout/u4" | sort)"
	expect_eq "nobody, verify: everything else is checked" 290 "$(json_num "$S/nout/u4.json" checked)"
	"${N[@]}" "$S/bin/myriad" fill -n 10 --state "$S/nst/f" "$U/f/d1/d3/new" >/dev/null 2>"$S/err"
	expect_eq "nobody, fill into a directory it cannot write: exit 2, says why" \
		"2 myriad fill: $U/f/d1/d3/new: mkdir: Permission denied" "$? $(cat "$S/err")"
	expect_eq "nobody: the state directories were all removed or never made" "" "$(ls "$S/nst")"
else
	skip "unprivileged runs need root and setpriv"
fi

# ---- bad input: exit 2 and a message naming what is wrong, for every subcommand ----
touch "$S/file"
mkdir -p "$S/dir"
# usage NAME PATTERN ARGS...: myriad ARGS exits 2, its stderr matches PATTERN, and nothing ran.
usage() {
	local name=$1 pat=$2
	shift 2
	"$MYRIAD" "$@" >"$S/out" 2>"$S/err"
	local rc=$?
	if [ $rc = 2 ] && grep -qE -- "$pat" "$S/err" && [ ! -s "$S/out" ]; then
		ok "bad input, $name"
	else
		fail "bad input, $name: exit $rc, stderr: $(head -3 "$S/err") stdout: $(head -c 200 "$S/out")"
	fi
}
usage "no command" "^Usage: myriad COMMAND"
usage "unknown command" "unknown command 'bogus'" bogus
"$MYRIAD" fill -n 10 --no-state "$S/vf" >/dev/null
# Valid operands for each command, so that only the option is wrong.
declare -A ops=([walk]="$S/dir" [verify]="$S/vf" [rm]="$S/dir" [copy]="$S/dir $S/d2" [fill]="-n 10 $S/dir")
for cmd in walk verify rm copy fill; do
	# shellcheck disable=SC2086
	set -- ${ops[$cmd]}
	usage "$cmd: unknown option" "^myriad $cmd: unrecognized option '--bogus'" $cmd --bogus "$@"
	usage "$cmd: missing option argument" "^myriad $cmd: option '--json' requires an argument" $cmd "$@" --json
	usage "$cmd: bad thread count" "--threads: '0' is not" $cmd -j 0 "$@"
	usage "$cmd: bad --progress" "--progress: 'x' is not" $cmd --progress x "$@"
	usage "$cmd: --state with --no-state" "--state and --no-state" $cmd --state "$S/st" --no-state "$@"
	usage "$cmd: --json into a missing directory" "--json $S/nowhere/j: No such file or directory" $cmd --json "$S/nowhere/j" "$@"
	usage "$cmd: --errors into a missing directory" "--errors $S/nowhere/e: No such file or directory" $cmd --errors "$S/nowhere/e" "$@"
	usage "$cmd: --state on a file" "state directory $S/file" $cmd --state "$S/file" "$@"
done
usage "walk: no operand" "missing operand" walk
usage "walk: missing operand" "$S/missing: No such file or directory" walk "$S/dir" "$S/missing"
usage "walk: a file operand" "$S/file: not a directory" walk "$S/file"
usage "walk: --print with --print0" "--print and --print0" walk --print --print0 "$S/dir"
usage "walk: -o into a missing directory" "--output $S/nowhere/o: No such file or directory" walk -o "$S/nowhere/o" "$S/dir"
usage "walk: bad --type" "--type: 'q'" walk --type q "$S/dir"
usage "rm: no operand" "missing operand" rm
usage "rm: missing operand" "$S/missing: No such file or directory" rm "$S/missing"
usage "rm: a file operand" "$S/file: not a directory" rm "$S/file"
usage "rm: /" "refusing to remove '/': it is /" rm /
usage "rm: bad --ionice" "--ionice: 'be:9'" rm --ionice be:9 "$S/dir"
usage "copy: one operand" "need two operands" copy "$S/dir"
usage "copy: three operands" "need two operands" copy "$S/dir" "$S/d2" "$S/d3"
usage "copy: missing SRC" "$S/missing: No such file or directory" copy "$S/missing" "$S/d2"
usage "copy: a file as SRC" "$S/file: not a directory" copy "$S/file" "$S/d2"
usage "copy: a file as DST" "$S/file: not a directory" copy "$S/dir" "$S/file"
usage "copy: DST's parent missing" "$S/nowhere/d: No such file or directory" copy "$S/dir" "$S/nowhere/d"
usage "copy: onto itself" "onto itself" copy "$S/dir" "$S/dir/"
usage "copy: DST inside SRC" "inside it" copy "$S/dir" "$S/dir/in"
usage "copy: --check with --dry-run" "--check and --dry-run" copy --check --dry-run "$S/dir" "$S/d2"
usage "copy: bad --bwlimit" "--bwlimit: '1x'" copy --bwlimit 1x "$S/dir" "$S/d2"
usage "verify: no operand" "missing operand" verify
usage "verify: two operands" "one directory only" verify "$S/dir" "$S/dir"
usage "verify: missing operand" "$S/missing: open: No such file or directory" verify "$S/missing"
usage "verify: a file operand" "$S/file: open: Not a directory" verify "$S/file"
usage "verify: no manifest" "holds no fill manifest" verify "$S/dir"
usage "fill: no --files" "--files N is required" fill "$S/f"
usage "fill: no operand" "missing operand" fill -n 10
usage "fill: a file operand" "$S/file: open: Not a directory" fill -n 10 "$S/file"
usage "fill: parent missing" "$S/nowhere/f: mkdir: No such file or directory" fill -n 10 "$S/nowhere/f"
usage "fill: bad --size" "--size: '1q'" fill -n 10 -s 1q "$S/f"
usage "fill: a non-empty DIR" "not empty" fill -n 10 "$S"
usage "lifecycle: unknown option" "^myriad lifecycle: unrecognized option '--bogus'" lifecycle --bogus
usage "lifecycle: bad --files" "--files: 'x' is not" lifecycle -n x
usage "lifecycle: unknown filesystem" "unknown filesystem 'bogus'" lifecycle --fs bogus
usage "lifecycle: --device without --yes" "add --yes" lifecycle --device "$S/file"
usage "lifecycle: an operand" "unexpected operand 'extra'" lifecycle extra
usage "report: no operand" "missing operand" report
usage "report: missing results" "$S/missing.json: open: No such file or directory" report "$S/missing.json" -o "$S/r.html"
usage "report: results that are not JSON" "$S/file: unexpected end" report "$S/file" -o "$S/r.html"
expect_eq "bad input: nothing was made" "" "$(ls -d "$S/d2" "$S/f" "$S/dir/in" "$S/st" "$S/nowhere" "$S/r.html" 2>/dev/null)"
expect_eq "bad input: no state was left behind" "" "$(ls "$S/state/myriad" 2>/dev/null)"
