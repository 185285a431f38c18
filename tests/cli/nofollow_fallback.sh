# Without openat2 (kernels before 5.6, or a seccomp profile that refuses it: build/noopenat2
# makes it fail with ENOSYS or EPERM), directories are still opened without following a symlink
# anywhere on the way: a directory of the tree swapped for a symlink to a directory outside while
# rm, copy --delete or copy runs does not lead them out of the tree. Each race swaps t/X (whose
# 200 subdirectories s0..s199 are still to do) for a symlink to "outside", which holds
# s0..s199 too, each with a precious file; afterwards outside must be exactly as it was.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
export XDG_STATE_HOME=$S/state
NOOPENAT2=${NOOPENAT2:-$TOP/build/noopenat2}
N=200

# ---- the tool itself: openat2 fails as asked, everything else works ----
cat >"$S/o2.py" <<'EOF'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
how = (ctypes.c_uint64 * 3)(os.O_RDONLY | os.O_DIRECTORY, 0, 0)
r = libc.syscall(437, -100, b"/", ctypes.byref(how), 24)  # openat2(AT_FDCWD, "/", ...)
print("ok" if r >= 0 else os.strerror(ctypes.get_errno()), os.path.isdir("/"))
EOF
expect_eq "noopenat2: openat2 works without it" "ok True" "$(python3 "$S/o2.py")"
expect_eq "noopenat2: openat2 answers ENOSYS under it, other calls work" "Function not implemented True" \
	"$("$NOOPENAT2" python3 "$S/o2.py")"
expect_eq "noopenat2 --errno 1: openat2 answers EPERM" "Operation not permitted True" \
	"$("$NOOPENAT2" --errno 1 python3 "$S/o2.py")"
if command -v strace >/dev/null; then
	mkdir -p "$S/st/a/b"
	"$NOOPENAT2" strace -f -e trace=openat2,openat -o "$S/strace" "$MYRIAD" walk --no-state "$S/st" >/dev/null 2>&1
	grep -q 'openat2(.*ENOSYS' "$S/strace" && grep -q 'openat([0-9]*, "b", [^)]*O_NOFOLLOW' "$S/strace" &&
		! grep -q '"a/b"' "$S/strace" && ok "under noopenat2, walk opens a/b one component at a time (strace)" ||
		fail "strace: $(grep -e openat2 -e '"a' -e '"b' "$S/strace" | head -5)"
else
	skip "strace not installed"
fi

# ---- dir_open_at's unit tests again, through the fallback ----
if [ -x "$TOP/build/unit/test_dir" ]; then
	"$NOOPENAT2" "$TOP/build/unit/test_dir" >"$S/unit" 2>&1
	expect_eq "unit test_dir, openat2 answering ENOSYS: passes" "0 " "$? $(grep FAILED "$S/unit")"
	"$NOOPENAT2" --errno 1 "$TOP/build/unit/test_dir" >"$S/unit" 2>&1
	expect_eq "unit test_dir, openat2 answering EPERM: passes" "0 " "$? $(grep FAILED "$S/unit")"
fi

# ---- races: a directory swapped for a symlink to outside, mid-run ----
if ! sandbox 2>"$S/why"; then
	skip "races: $(cat "$S/why")"
	exit 0
fi
X=$PWD

# mkdirs DIR [FILE]: DIR/s0..s$((N-1)), each holding FILE (none when empty).
mkdirs() {
	local i
	for ((i = 0; i < N; i++)); do
		mkdir -p "$1/s$i"
		[ -z "${2:-}" ] || echo "$2 $i" >"$1/s$i/$2"
	done
}
# intact: outside holds exactly its N precious files with their data, nothing else.
intact() {
	local lost new
	lost=$((N - $(for ((i = 0; i < N; i++)); do cat "$X/outside/s$i/precious" 2>/dev/null; echo; done | grep -c '^precious')))
	new=$(find "$X/outside" -mindepth 2 ! -name precious | wc -l)
	echo "lost $lost, new $new"
}
# swapper DIR COND ARG...: in the background, poll (every 2 ms) until COND holds, then swap DIR/X
# for a symlink to outside at once (renameat2 RENAME_EXCHANGE: X is never missing, where mv then
# ln would let a walk find it gone and finish first) and move X to away. COND: "fewer NAME K"
# (fewer than K of DIR/X/*/NAME are left), "more NAME K" (at least K are there), "after SECONDS".
# All in one process started beforehand: starting one at the moment takes too long on a busy
# machine.
swapper() {
	python3 - "$X" "$@" <<'EOF' &
import ctypes, glob, os, sys, time
x, d, cond, arg = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
t0 = time.time()
def met():
    if cond == "after":
        return time.time() - t0 >= float(arg)
    n, k = len(glob.glob(os.path.join(d, "X", "*", arg))), int(sys.argv[5])
    return n < k if cond == "fewer" else n >= k
while not met():
    if time.time() - t0 > 60:
        sys.exit("swapper: the command made no progress")
    time.sleep(0.002)
os.symlink(os.path.join(x, "outside"), os.path.join(d, "X.new"))
libc = ctypes.CDLL(None, use_errno=True)
if libc.renameat2(-100, os.path.join(d, "X").encode(), -100, os.path.join(d, "X.new").encode(), 2) != 0:
    sys.exit("swapper: renameat2: " + os.strerror(ctypes.get_errno()))
os.rename(os.path.join(d, "X.new"), os.path.join(x, "away"))
EOF
	swapper_pid=$!
}
# race NAME DIR COND ARG K CMD...: with a swapper on DIR, COND, ARG, K (K ignored for "after"),
# run CMD under noopenat2; its exit in race_rc.
race() {
	local name=$1
	swapper "$2" "$3" "$4" "$5"
	shift 5
	"$NOOPENAT2" "$@" >"$S/race.out" 2>"$S/race.err"
	race_rc=$?
	wait $swapper_pid || fail "$name: no swap"
}
# setup: outside/s*/precious, the tree t/X/s*/f, no away.
setup() {
	rm -rf "$X/t" "$X/d" "$X/outside" "$X/away"
	mkdirs "$X/outside" precious
	mkdirs "$X/t/X" f
	touch "$X/t/top"
}

setup
race "rm" "$X/t" fewer f $((N - 10)) "$MYRIAD" rm --no-state --rate 100 "$X/t"
expect_eq "rm --rate, no openat2, t/X swapped for a symlink to outside mid-run: nothing outside removed" \
	"lost 0, new 0" "$(intact)"
expect_eq "rm: the tree is gone (the symlink with it), exit 0" "0 no " \
	"$race_rc $([ -e "$X/t" ] && echo yes || echo no) $(head -3 "$S/race.err")"

setup
mkdirs "$X/d/X" old
race "copy --delete" "$X/d" more f 10 \
	"$MYRIAD" copy --no-state --delete --rate 100 "$X/t" "$X/d"
expect_eq "copy --delete --rate, no openat2, DST/X swapped for a symlink to outside: nothing outside removed or written" \
	"lost 0, new 0" "$(intact)"
expect_eq "copy --delete: exit 1, each DST directory it could no longer reach reported, the symlink left" \
	"1 0 $X/outside" "$race_rc $(grep -vc ': open: Not a directory$' "$S/race.err") $(readlink "$X/d/X")"

setup
mkdir -p "$X/d/X"
race "copy" "$X/d" more f 10 "$MYRIAD" copy --no-state --rate 100 "$X/t" "$X/d"
expect_eq "copy --rate, no openat2, DST/X swapped for a symlink to outside: nothing written outside" \
	"lost 0, new 0" "$(intact)"
expect_eq "copy: exit 1, each DST directory it could no longer reach reported" "1 0" \
	"$race_rc $(grep -vc ': open: Not a directory$' "$S/race.err")"

setup
race "walk" "$X/t" after 1.5 - "$MYRIAD" walk --no-state --rate 100 --print "$X/t"
expect_eq "walk --rate, no openat2, t/X swapped for a symlink to outside: nothing outside listed" "0" \
	"$(grep -c "precious" "$S/race.out")"
