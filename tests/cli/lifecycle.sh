# myriad lifecycle: a full run on ext4, XFS and btrfs loop images records every phase (with the
# checker's time and peak RSS) and a projection to 10^9 files; report.html has charts that a
# headless browser renders; nothing is left behind (loop devices, mounts, images), also after
# SIGINT (kill -9: lifecycle_guard.sh, where the next run with the same --out cleans up exactly
# what the killed one left); refusals (not root, --device without --yes)
# exit 2; a re-run skips complete cycles; myriad report puts runs side by side.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)

# leftovers: loop devices, mounts and images of myriad lifecycle (empty when none).
leftovers() {
	{ losetup -a | grep myriad-lifecycle-; grep myriad-lifecycle- /proc/mounts; ls /var/tmp | grep '^myriad-lifecycle-'; } 2>/dev/null
}

# Refusals.
"$MYRIAD" lifecycle --device /dev/loop-nonexistent --out "$S/dev" >/dev/null 2>"$S/err"
expect_eq "--device without --yes: exit 2" 2 $?
grep -q -- "--yes" "$S/err" && ok "--device without --yes: says to add --yes" || fail "stderr: $(cat "$S/err")"
if is_root; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$MYRIAD" lifecycle -n 1000 --out "$S/nonroot" >/dev/null 2>"$S/err"
else
	"$MYRIAD" lifecycle -n 1000 --out "$S/nonroot" >/dev/null 2>"$S/err"
fi
expect_eq "not root: exit 2" 2 $?
grep -q "needs root" "$S/err" && grep -q "sudo" "$S/err" && ok "not root: says why and what to run" ||
	fail "not root: stderr: $(cat "$S/err")"

if ! is_root; then
	skip "lifecycle runs need root (loop devices, mkfs, mount, drop_caches)"
	exit 0
fi
for t in mkfs.ext4 mkfs.xfs mkfs.btrfs e2fsck xfs_repair btrfs; do
	command -v $t >/dev/null || { skip "lifecycle runs: $t is not installed (scripts/deps test)"; exit 0; }
done
command -v python3 >/dev/null || { skip "lifecycle runs: python3 is not installed"; exit 0; }

# A full run on three filesystems.
O=$S/out
start=$(date +%s)
"$MYRIAD" lifecycle --fs ext4,xfs,btrfs -n 50000 --out "$O" >"$S/run.out" 2>"$S/run.err"
rc=$?
expect_eq "ext4,xfs,btrfs -n 50000: exit 0 ($(($(date +%s) - start)) s)" 0 $rc
[ $rc = 0 ] || { tail -n 20 "$S/run.out" "$S/run.err" >&2; }
python3 - "$O/results.json" >"$S/check" 2>&1 <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
want = ["attach", "mkfs", "mount", "fill", "drop_caches", "walk", "drop_caches_2", "walk_stat", "umount",
        "check", "remount", "verify", "rm", "umount_2", "detach"]
cyc = {(c["fs"], c["files"]): c for c in d["cycles"]}
for fs in ("ext4", "xfs", "btrfs"):
    for n in (5000, 16666, 50000):
        c = cyc.get((fs, n))
        if not c or not c["complete"]:
            bad.append(f"{fs} {n}: no complete cycle"); continue
        ph = {p["name"]: p for p in c["phases"]}
        for w in want + (["check_min_memory"] if fs == "xfs" else []):
            p = ph.get(w)
            if not p or p["status"] != "ok":
                bad.append(f"{fs} {n} {w}: {p}"); continue
            if not (p["wall_s"] or 0) > 0 or not (p["peak_rss_kib"] or 0) > 0:
                bad.append(f"{fs} {n} {w}: no wall time or peak RSS")
        if fs == "xfs" and not (ph.get("check_min_memory", {}).get("min_memory_kib") or 0) > 0:
            bad.append(f"xfs {n}: no stated minimum memory")
        if not ph["fill"].get("timeline") or not ph["rm"].get("timeline"):
            bad.append(f"{fs} {n}: fill/rm timeline missing")
        if not ph["fill"].get("rate"):
            bad.append(f"{fs} {n}: no fill rate")
        if fs != "btrfs" and not c.get("after_fill", {}).get("inodes_used", 0) >= n:
            bad.append(f"{fs} {n}: inode use after fill: {c.get('after_fill')}")
        if not c.get("after_fill", {}).get("bytes_used", 0) > 0:
            bad.append(f"{fs} {n}: space use after fill: {c.get('after_fill')}")
        if fs == "ext4" and c.get("lazy_itable_init") is None:
            bad.append("ext4: lazy_itable_init not recorded")
for k in ("kernel", "cpu_model", "mem_kib"):
    if not d["host"].get(k): bad.append(f"host {k} missing")
for k in ("mkfs.ext4", "e2fsck", "mkfs.xfs", "xfs_repair", "mkfs.btrfs", "btrfs"):
    if not d["tools"].get(k): bad.append(f"tool version {k} missing")
pr = d["projection"]
if pr["files"] != 1e9: bad.append(f"projection to {pr['files']}")
for fs in ("ext4", "xfs", "btrfs"):
    for m in ("create files (myriad fill)", "filesystem check, read-only", "checker peak RSS"):
        f = [x for x in pr["fits"] if x["fs"] == fs and x["metric"] == m]
        # A projection is positive, or "no trend" (a fit that shrank with N) with none.
        if not f or "r2" not in f[0]["linear"] or not (
                (f[0]["projected"] or 0) > 0 or (f[0]["model"] == "no trend" and f[0]["projected"] is None)):
            bad.append(f"projection {fs} {m}: {f}")
print("\n".join(bad) if bad else "ok")
EOF
[ "$(cat "$S/check")" = ok ] && ok "results.json: every phase of every cycle, checker time and RSS, projection to 1e9" ||
	fail "results.json: $(head -c 2000 "$S/check")"
n=$(grep -o '<svg' "$O/report.html" | wc -l)
[ "$n" -ge 3 ] && ok "report.html has $n charts" || fail "report.html has $n charts"
grep -q "extrapolation" "$O/report.html" && ok "report.html says the projection is an extrapolation" ||
	fail "no extrapolation note"
grep -q "lazy_itable_init=1" "$O/report.html" && ok "report.html says ext4's inode tables were initialised lazily" ||
	fail "no lazy_itable_init note"
grep -Eq '(src|href)="?https?:' "$O/report.html" && fail "report.html loads something from the network" ||
	ok "report.html is self-contained"
expect_eq "nothing left behind after a run" "" "$(leftovers)"

# Rendered by a headless browser.
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
	skip "headless rendering: chromium is not installed (scripts/deps test installs it)"
else
	chrome() {
		timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
			--disable-component-update --disable-sync --no-first-run --user-data-dir="$(mktemp -d "$S/chr.XXXXXX")" "$@"
	}
	chrome --screenshot="$S/report.png" --window-size=1200,3000 "file://$O/report.html" >/dev/null 2>&1
	sz=$(stat -c %s "$S/report.png" 2>/dev/null || echo 0)
	[ "$sz" -gt 50000 ] && ok "headless chromium: screenshot of report.html ($sz bytes)" ||
		fail "headless chromium: screenshot is $sz bytes"
	chrome --dump-dom "file://$O/report.html" >"$S/dom.html" 2>/dev/null
	total=$(grep -o '<svg' "$S/dom.html" | wc -l)
	drawn=$(grep -oE 'data-rendered-width="[0-9]+" data-rendered-height="[0-9]+"' "$S/dom.html" |
		awk -F'"' '$2 > 100 && $4 > 100' | wc -l)
	[ "$total" -ge 3 ] && [ "$drawn" = "$total" ] && ok "headless chromium: all $total charts laid out with non-zero size" ||
		fail "headless chromium: $drawn of $total charts have a non-zero laid-out size"
fi

# A re-run with the same --out skips the complete cycles.
start=$(date +%s)
"$MYRIAD" lifecycle --fs ext4,xfs,btrfs -n 50000 --out "$O" >"$S/rerun.out" 2>&1
rc=$?
n=$(grep -c "already complete" "$S/rerun.out")
[ $rc = 0 ] && [ "$n" = 9 ] && ok "re-run skips the 9 complete cycles ($(($(date +%s) - start)) s)" ||
	fail "re-run: exit $rc, $n cycles skipped: $(tail -n 5 "$S/rerun.out")"

# myriad report: two runs side by side.
cp "$O/results.json" "$S/second.json"
"$MYRIAD" report "$O/results.json" "$S/second.json" -o "$S/both.html" >/dev/null 2>&1
expect_eq "myriad report of two runs: exit 0" 0 $?
grep -q "ext4 (run 2)" "$S/both.html" && ok "myriad report: runs side by side" || fail "no 'ext4 (run 2)' series"
"$MYRIAD" report "$S/nonexistent.json" -o "$S/x.html" >/dev/null 2>&1
expect_eq "myriad report of a missing file: exit 2" 2 $?

# SIGINT during a run: the child is stopped, everything is torn down, exit 3.
I=$S/int
"$MYRIAD" lifecycle --fs ext4 --scales 400k --out "$I" >"$S/int.out" 2>"$S/int.err" &
pid=$!
for _ in $(seq 300); do [ -e "$I/logs/ext4-400000-fill.log" ] && break; sleep 0.1; done
sleep 0.5
kill -INT $pid
wait $pid
expect_eq "SIGINT during fill: exit 3" 3 $?
expect_eq "SIGINT: no loop device, mount or image left" "" "$(leftovers)"
grep -q '"status":"failed"' "$I/results.json" && grep -q '"complete":false' "$I/results.json" &&
	ok "SIGINT: results.json records the interrupted phase" || fail "results.json: $(head -c 600 "$I/results.json")"
