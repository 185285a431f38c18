# myriad lifecycle, what a cycle needs known before it runs (issue 15): --checker-mem's edge values;
# a run whose image cannot fit in --image-dir's free space refused with exit 2 and the numbers, with
# nothing made; the image's real allocation recorded; a checker whose predicted peak exceeds a tiny
# --checker-mem run with e2fsck's scratch files (contained, killed or not) or skipped as "does not
# fit" (xfs_repair's stated minimum), and the cycle still completes with rm done; after a kill -9
# during e2fsck, the next run removes the scratch directory with the files e2fsck left in it.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)

is_root || { skip "lifecycle needs root"; exit 0; }
for t in mkfs.ext4 mkfs.xfs e2fsck xfs_repair python3; do
	command -v $t >/dev/null || { skip "$t is not installed (scripts/deps test)"; exit 0; }
done
leftovers() {
	{ losetup -a | grep "$1/myriad-lifecycle-"; grep "$1/myriad-lifecycle-" /proc/mounts; ls "$1" | grep '^myriad-lifecycle-'
	  find /sys/fs/cgroup -maxdepth 6 -type d -name 'myriad-lifecycle-*'; } 2>/dev/null
}

# --checker-mem: refused below 1M, at 0, beyond 16E-1 and as garbage; 1M and 8E taken.
for v in 0 1 1k 1023k garbage 16E ""; do
	"$MYRIAD" lifecycle --dry-run --fs ext4 -n 1000 --checker-mem "$v" --out "$S/o" >/dev/null 2>"$S/err"
	rc=$?
	[ $rc = 2 ] && grep -q -- "--checker-mem: '$v' is not a size of at least 1M" "$S/err" &&
		ok "--checker-mem '$v': exit 2, names the option and why" || fail "--checker-mem '$v': exit $rc: $(cat "$S/err")"
done
for v in 1M 8E 8G; do
	"$MYRIAD" lifecycle --dry-run --fs ext4 -n 1000 --checker-mem $v --out "$S/o" >/dev/null 2>"$S/err"
	expect_eq "--checker-mem $v --dry-run: exit 0" 0 $?
done

# A tiny --image-dir: refused before anything is made, with the numbers.
T=$S/tiny
mkdir -p "$T" && mount -t tmpfs -o size=8m myriad-fit-tiny "$T" && on_exit "umount '$T'"
"$MYRIAD" lifecycle --fs ext4,xfs --scales 1000,2000 --image-dir "$T" --out "$S/refused" >"$S/out" 2>"$S/err"
expect_eq "image dir of 8 MiB: exit 2" 2 $?
grep -Eq "needs about [0-9.]+ MiB for (ext4|xfs) at 2,000 files \(estimate from .*mkfs parameters.*margin\), $T has [0-9.]+ (MiB|KiB) free" "$S/err" &&
	ok "the refusal says what it needs, for which cycle, from what, and what is free" || fail "stderr: $(cat "$S/err")"
[ ! -e "$S/refused" ] && [ -z "$(ls -A "$T")" ] && ok "refused: nothing made (no --out, nothing in the image dir)" ||
	fail "refused, yet made: $(ls -A "$S/refused" "$T" 2>&1)"
"$MYRIAD" lifecycle --dry-run --fs ext4,xfs --scales 1000,2000 --image-dir "$T" --out "$S/refused" >"$S/out" 2>"$S/err"
rc=$?
[ $rc = 2 ] && grep -q "disk: ext4  at 2,000 files: about" "$S/out" && grep -q "disk: xfs   at 1,000 files: about" "$S/out" &&
	grep -q "15% + 256.0 MiB margin; $T has" "$S/out" && ok "--dry-run prints the estimates per filesystem and scale, and refuses" ||
	fail "--dry-run: exit $rc: $(cat "$S/out" "$S/err")"

# Two ext4 cycles measured without a limit...
O=$S/out.d I=$S/img
mkdir -p "$I"
"$MYRIAD" lifecycle --fs ext4 --scales 2000,5000 --image-dir "$I" --out "$O" >"$S/a.out" 2>"$S/a.err"
expect_eq "ext4 at 2k and 5k: exit 0" 0 $?
# ...then ext4 and xfs at 10k with --checker-mem 1M: e2fsck's predicted peak exceeds it (scratch
# files, contained), xfs_repair's stated minimum exceeds it (does not fit).
"$MYRIAD" lifecycle --fs ext4,xfs --scales 10000 --checker-mem 1M --image-dir "$I" --out "$O" >"$S/b.out" 2>"$S/b.err"
rc=$?
[ $rc = 0 ] || [ $rc = 1 ] && ok "--checker-mem 1M: runs through (exit $rc)" || fail "exit $rc: $(tail "$S/b.out" "$S/b.err")"
grep -q "check.*skipped: does not fit: needs about [0-9.]* MiB, machine has 1.0 MiB (--checker-mem)" "$S/b.out" &&
	ok "xfs: the check is skipped, with what it needs and what there is" || fail "stdout: $(cat "$S/b.out")"
grep -q "predicted peak .* limit 1.0 MiB (--checker-mem), contained: .*e2fsck scratch files on disk" "$S/b.out" &&
	ok "ext4: the check's note says prediction, limit, containment and scratch files" || fail "stdout: $(cat "$S/b.out")"
python3 - "$O/results.json" >"$S/check" 2>&1 <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
cyc = {(c["fs"], c["files"]): c for c in d["cycles"]}
for k in (("ext4", 2000), ("ext4", 5000), ("ext4", 10000), ("xfs", 10000)):
    c = cyc.get(k)
    if not c or not c["complete"]:
        bad.append(f"{k}: not complete"); continue
    ph = {p["name"]: p for p in c["phases"]}
    if not (c.get("image_alloc_bytes") or 0) > 1e6: bad.append(f"{k}: image_alloc_bytes {c.get('image_alloc_bytes')}")
    if not (c.get("disk_estimate", {}).get("bytes") or 0) > c["image_alloc_bytes"]:
        bad.append(f"{k}: estimate {c.get('disk_estimate')} below the allocation {c['image_alloc_bytes']}")
    if ph.get("rm", {}).get("status") != "ok": bad.append(f"{k}: rm {ph.get('rm')}")
    m = ph["check"].get("memory")
    if not m or not m["limit_kib"] or m["limit_from"] not in ("MemAvailable", "--checker-mem"):
        bad.append(f"{k}: check memory {m}")
e = {p["name"]: p for p in cyc[("ext4", 10000)]["phases"]}["check"]
m = e["memory"]
if not (m["predicted_kib"] and m["limit_kib"] == 1024 and m["how"] == "scratch_files"
        and m["outcome"] in ("ok", "failed", "killed: out of memory at limit 1.0 MiB")):
    bad.append(f"ext4 10000 check: {e}")
if m["outcome"] == "killed: out of memory at limit 1.0 MiB" and (e["status"] != "failed" or e["error"] != m["outcome"]):
    bad.append(f"ext4 10000 check killed, yet not recorded so: {e}")
if "a linear fit over 2 measured ext4 cycles" not in cyc[("ext4", 10000)]["disk_estimate"]["from"]:
    bad.append(f"ext4 10000 estimate: {cyc[('ext4', 10000)]['disk_estimate']}")
x = {p["name"]: p for p in cyc[("xfs", 10000)]["phases"]}
if not (x["check"]["status"] == "skipped" and x["check"]["memory"]["how"] == "skipped"
        and x["check"]["memory"]["outcome"].startswith("does not fit: needs about")
        and x["check_min_memory"]["status"] == "ok"):
    bad.append(f"xfs 10000: {x['check']} {x['check_min_memory']}")
a = {p["name"]: p for p in cyc[("ext4", 2000)]["phases"]}["check"]
if a["status"] != "ok" or a["memory"]["how"] != "none" or a["memory"]["predicted_kib"] is not None:
    bad.append(f"ext4 2000 check (no prediction, no limit of its own): {a}")
print("\n".join(bad) if bad else "ok")
EOF
[ "$(cat "$S/check")" = ok ] && ok "results.json: allocations, estimates, each check's memory plan and outcome; rm done" ||
	fail "results.json: $(head -c 3000 "$S/check")"
[ ! -e "$O/e2fsck-scratch.conf" ] && ok "the e2fsck config and scratch directory are removed" || fail "left: $O/e2fsck-scratch.conf"

# A kill -9 during e2fsck with scratch files leaves them in the scratch directory, which the record
# lists (as lifecycle writes it: "scratch", the path, then again with its dev:ino). The next run with
# the same --out removes the files and the directory; a link in it goes, its target stays; a
# directory put where a recorded one was is left alone. (The killed run's --out has lifecycle's
# mark, as every --out it has taken: $O's.)
K=$S/killed SC=$I/myriad-lifecycle-ext4-10000-999999.scratch RP=$I/myriad-lifecycle-ext4-10000-999998.scratch
mkdir -p "$K" "$SC" "$RP"
cp "$O/.myriad-lifecycle" "$K/"
head -c 100000 /dev/urandom >"$SC/dirinfo-RJ3zYV" && : >"$SC/icount-QTnPLs"
echo target >"$S/target" && ln -s "$S/target" "$SC/link"
printf 'scratch\t%s\nscratch\t%s\t%s\nscratch\t%s\t%s\n' "$SC" "$SC" "$(stat -c %d:%i "$SC")" "$RP" "$(stat -c %d:%i "$RP")" >"$K/made.list"
exec 9<"$RP" # held open while it is replaced: the new directory cannot take its inode number
rmdir "$RP" && mkdir "$RP" && echo foreign >"$RP/data"
exec 9<&-
"$MYRIAD" lifecycle --fs ext4 --scales 1000 --image-dir "$I" --out "$K" >"$S/k.out" 2>"$S/k.err"
expect_eq "the run after a kill -9 during the check: exit 0" 0 $?
[ ! -e "$SC" ] && grep -q "cleaning up after an earlier run: removed $SC and the 3 files in it" "$S/k.err" &&
	ok "the recorded scratch directory is removed with e2fsck's files in it" || fail "left: $(ls -la "$SC" 2>&1); stderr: $(cat "$S/k.err")"
[ "$(cat "$S/target")" = target ] && ok "a link in it is removed as a link: its target is untouched" || fail "target: $(ls -la "$S/target" 2>&1)"
[ "$(cat "$RP/data" 2>/dev/null)" = foreign ] && grep -q "leaving $RP alone: it is not the scratch directory" "$S/k.err" &&
	ok "a directory in place of a recorded scratch directory is left alone, and said so" || fail "$RP: $(ls -la "$RP" 2>&1); stderr: $(cat "$S/k.err")"
[ ! -e "$K/made.list" ] && ok "the record is gone after the run" || fail "made.list: $(cat "$K/made.list")"
rm -r "$RP"

expect_eq "nothing left behind (images, loops, mounts, scratch, cgroups)" "" "$(leftovers "$I")"
