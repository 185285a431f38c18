#!/usr/bin/env bash
# bench/copy.sh: `myriad copy` against rsync -aHAX and cp -a, from one ext4 image to another.
#
#   sudo bench/copy.sh [--files N] [--runs R] [--only speed|resume|bwlimit|rate] [--keep]
#
# Two sparse loop-mounted ext4 images: SRC holds the source tree, made once; DST is made a fresh
# ext4 again (mkfs, outside the timing) before every copy, so every run of every tool writes into
# the same empty filesystem. The source tree: N files of 4 KiB in directories of 1000 entries
# (build/mktree), four 100 MiB files of random data, one sparse file (64 MiB, 3 MiB of data),
# hard links, symlinks (to a file, a directory, nowhere), user/trusted xattrs and POSIX ACLs.
# Sections:
#   speed    cold cache (caches dropped before every run), time includes `sync -f DST`:
#            myriad copy --no-state | rsync -aHAX SRC/ DST/ | cp -a SRC/. DST/, in alternation,
#            R rounds                           bars: myriad >= 2x rsync, >= 1.3x cp -a
#   resume   a clean copy, then a copy killed with SIGKILL at 40% of the clean copy's time and run
#            again to completion; after each, `rsync -naHAXc --delete -i SRC/ DST/` must list
#            nothing                            bars: 0 differences, both times
#   bwlimit  myriad copy --bwlimit 20M of the four 100 MiB files, R rounds: bytes copied / wall
#            time including `sync -f DST`       bar: within 10% of 20 MiB/s
#   rate     myriad copy --rate R of the N-file tree, R = N/20 entries/s (about 20 s), R rounds;
#            the progress line every second, time-stamped as it arrives: entries per second over
#            every 10-second window of each run      bar: every window within 10% of R
# Prints per-section tables (median, min, max wall seconds), ratios, then a summary of the bars
# with PASS/MISS. The exit status is 0 when the bench ran, whatever the bars say.
#
# Waits (before every section) while another bench script
# (bench/walk.sh, fill.sh, rm.sh) runs: two benches at once skew each other's timings.
# MYRIAD=path overrides the binary (default build/myriad, built with make when not overridden).
# Needs root (loop mounts, drop_caches). Everything is unmounted and deleted at exit, also on
# failure or Ctrl-C; --keep keeps the image files (their paths are printed).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
TOP=$BENCH_TOP

usage() {
	sed -n '2,27s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
	exit "${1:-2}"
}

FILES=200000 RUNS=3 ONLY=""
while [ $# -gt 0 ]; do
	case $1 in
	--files) FILES=${2:?--files needs a number}; shift 2 ;;
	--runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
	--only) ONLY=${2:?--only needs a section}; shift 2 ;;
	--keep) BENCH_KEEP=1; shift ;;
	-h | --help) usage 0 ;;
	*) echo "copy.sh: unknown argument '$1'" >&2; usage 2 ;;
	esac
done
case $FILES in '' | *[!0-9]*) echo "copy.sh: --files: not a number: $FILES" >&2; exit 2 ;; esac
case $RUNS in '' | *[!0-9]* | 0) echo "copy.sh: --runs: not a positive number: $RUNS" >&2; exit 2 ;; esac
case $ONLY in '' | speed | resume | bwlimit | rate) ;; *) echo "copy.sh: --only: speed, resume, bwlimit or rate, not $ONLY" >&2; exit 2 ;; esac
[ "$FILES" -ge 100 ] || { echo "copy.sh: --files must be at least 100" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "copy.sh: needs root (loop mounts, drop_caches): sudo $0 $*" >&2; exit 2; }

want() { [ -z "$ONLY" ] || [ "$ONLY" = "$1" ]; }

# wait_quiet: wait while another bench script runs (the machine may be shared with other benches).
wait_quiet() {
	local waited=0 others
	while others=$(pgrep -f 'bench/(walk|fill|rm)\.sh' | tr '\n' ' ') && [ -n "$others" ]; do
		[ $((waited % 60)) != 0 ] || bench_log "waiting: another bench is running (pids $others)"
		sleep 5
		waited=$((waited + 5))
	done
	[ "$waited" = 0 ] || { bench_log "waited $waited s for other benches"; WAITED=$((WAITED + waited)); }
}
WAITED=0

# ---------------------------------------------------------------------------------------------
# Tools.
need_pkgs rsync coreutils attr acl e2fsprogs time make gcc libc6-dev
MKTREE=$TOP/build/mktree
make -s -C "$TOP" build/mktree >&2
if [ -z "${MYRIAD:-}" ]; then
	need_pkgs libxxhash-dev liburing-dev
	make -s -C "$TOP" build/myriad >&2 || bench_die "make build/myriad failed"
	MYRIAD=$TOP/build/myriad
fi
[ -x "$MYRIAD" ] || bench_die "no executable myriad at $MYRIAD"

# A work directory on the root filesystem: a copy of the myriad binary (every run times the same
# one, even if the checkout is rebuilt meanwhile), myriad's checkpoint state for the resume
# section (the same disk as the default /var/lib/myriad, removed at exit) and JSON summaries.
WORK=$(mktemp -d "${TMPDIR:-/tmp}/myriad-bench-copy.XXXXXX")
bench_on_exit "rm -rf '$WORK'"
cp "$MYRIAD" "$WORK/myriad" || bench_die "cannot copy $MYRIAD"
MYRIAD_SRC=$MYRIAD MYRIAD=$WORK/myriad
"$MYRIAD" --version >/dev/null 2>&1 || bench_die "$MYRIAD_SRC does not run (being rebuilt?)"

secs_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

# ---------------------------------------------------------------------------------------------
# The images. Source and destination are two filesystems (two loop devices on two image files),
# as in a backup or a migration: no tool can take a same-filesystem shortcut, and DST can be
# re-made with mkfs before every run, which empties it far faster than rm -rf and leaves every run
# the same starting point (a discarded, sparse image; no freed blocks or orphans of the previous
# run). Both images sit on the same host disk. Sized for N 4 KiB files (1.25x for metadata),
# 400 MiB of big files, the sparse file and slack; at most one inode per 4 KiB: 8 KiB per inode.
inodes=$((FILES + FILES / 500 + 100000))
bytes=$((FILES * 4096 * 5 / 4 + inodes * 1024 + (2 << 30)))
size_g=$(((bytes + (1 << 30) - 1) >> 30))
[ "$size_g" -ge 8 ] || size_g=8
MKFS_OPTS=(-N "$inodes")

MNT_SRC=$(mktemp -d /tmp/myriad-bench-copy-src.XXXXXX)
MNT_DST=$(mktemp -d /tmp/myriad-bench-copy-dst.XXXXXX)
bench_on_exit "rmdir '$MNT_SRC' '$MNT_DST'"
bench_image ext4 "${size_g}G" "$MNT_SRC" "${MKFS_OPTS[@]}"
bench_image ext4 "${size_g}G" "$MNT_DST" "${MKFS_OPTS[@]}"
DST_LOOP=$BENCH_LOOP
S=$MNT_SRC/src D=$MNT_DST/dst

# fresh_dst: unmount DST (writing back what the last run left), mkfs.ext4 it again (mke2fs
# discards the device first), mount it and make the empty directory D. Outside any timing.
fresh_dst() {
	local i
	for i in 1 2 3 4 5; do
		umount "$MNT_DST" 2>/dev/null && break
		sleep 1
	done
	! mountpoint -q "$MNT_DST" || bench_die "cannot unmount $MNT_DST"
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "${MKFS_OPTS[@]}" "$DST_LOOP" >&2 ||
		bench_die "mkfs.ext4 $DST_LOOP failed"
	mount -o "${BENCH_MOUNT_OPTS:-noatime}" "$DST_LOOP" "$MNT_DST" || bench_die "mount $DST_LOOP failed"
	mkdir "$D"
}
cold_dst() { fresh_dst; drop_caches; } # the PREP of every timed copy

# The source tree.
t0=$EPOCHREALTIME
"$MKTREE" -j "$(nproc)" "$S/tree" --files "$FILES" --fanout 1000 --size 4096 || bench_die "mktree failed"
mkdir -p "$S/big" "$S/extra/dir"
for i in 1 2 3 4; do
	head -c $((100 << 20)) /dev/urandom >"$S/big/file$i" || bench_die "cannot write $S/big/file$i"
done
sp=$S/extra/sparse # 64 MiB, data at 0, 32 MiB and the last MiB
truncate -s 64M "$sp"
for off in 0 32 63; do dd if=/dev/urandom of="$sp" bs=1M count=1 seek="$off" conv=notrunc status=none; done
k=0
for f in $(find "$S/tree" -type f | head -n 20 || true); do
	k=$((k + 1))
	if [ "$k" -le 10 ]; then
		ln "$f" "$S/extra/hardlink$k"                                     # 10 extra links
		setfattr -n user.bench -v "value $k" "$f"                         # user xattrs
	else
		ln -s "$f" "$S/extra/symlink$k"                                   # absolute symlinks
		setfattr -n user.long -v "$(head -c 2000 /dev/zero | tr '\0' x)" "$f"
	fi
done
ln "$S/big/file1" "$S/extra/big-hardlink"                                    # a hard link to 100 MiB
ln -s ../big/file2 "$S/extra/rel-symlink"
ln -s dir "$S/extra/dir-symlink"
ln -s /nonexistent/target "$S/extra/dangling"
setfattr -n user.dir -v yes "$S/extra/dir"
setfattr -n trusted.bench -v trusted "$S/big/file3"
echo acl >"$S/extra/acl-file"
setfacl -m u:nobody:rw- "$S/extra/acl-file"
setfacl -d -m g:nogroup:r-x "$S/extra/dir"
sync
TREE_FILES=$(find "$S" -type f | wc -l) TREE_DIRS=$(find "$S" -type d | wc -l)
TREE_BYTES=$(du -sb --apparent-size "$S" | cut -f1) BIG_BYTES=$(du -sb --apparent-size "$S/big" | cut -f1)
bench_log "made the source tree in $(secs_since "$t0") s"

echo "== myriad copy bench: ext4 -> ext4 (two ${size_g}G sparse images, DST re-made with mkfs before every run)," \
	"$(human "$FILES") files of 4 KiB, $RUNS rounds, $(nproc) CPUs, $(uname -r)"
echo "   myriad: $MYRIAD_SRC ($("$MYRIAD" --version 2>/dev/null | head -n 1); timed from a copy)"
echo "   peers:  $(rsync --version | head -n 1); $(cp --version | head -n 1)"
echo "   tree:   $TREE_FILES regular files, $TREE_DIRS directories, $((TREE_BYTES >> 20)) MiB apparent" \
	"($(du -sm "$S" | cut -f1) MiB allocated), plus hard links, symlinks, xattrs, ACLs"

# The timed commands: TOOL ARGS..., then `sync -f DST` (syncfs of the destination filesystem)
# inside the time, so that no tool wins by leaving its writes in the page cache; syncfs rather
# than a global sync, so that writeback of whatever else runs on the machine is not timed. The
# tool's exit status is kept.
# shellcheck disable=SC2016 # expanded by that sh
SYNCED=(sh -c '"$@"; rc=$?; sync -f "$0" || rc=$?; exit "$rc"' "$MNT_DST")

# differences: the lines `rsync -naHAXc --delete -i` lists for SRC vs D (itemized changes: content
# by checksum, type, size, times, perms, owner, hard links, ACLs, xattrs, extra entries in D),
# kept in WORK/diff; prints their count.
differences() {
	rsync -naHAXc --delete -i "$S/" "$D/" >"$WORK/diff" 2>&1 || echo "rsync exited $?" >>"$WORK/diff"
	wc -l <"$WORK/diff"
}
show_diff() {
	if [ -s "$WORK/diff" ]; then
		echo "   first differences:"
		head -n 10 "$WORK/diff" | sed 's/^/      /'
	fi
}


# ---------------------------------------------------------------------------------------------
if want speed; then
	wait_quiet
	section speed "copy the whole tree, caches dropped and DST re-made before every run; time includes sync -f DST"
	alternate "$RUNS" cold_dst \
		-- speed/myriad "${SYNCED[@]}" "$MYRIAD" copy --no-state --progress 0 --json "$WORK/speed.json" "$S" "$D" \
		-- speed/rsync "${SYNCED[@]}" rsync -aHAX "$S/" "$D/" \
		-- speed/cp "${SYNCED[@]}" cp -a "$S/." "$D/"
	report_medians speed/myriad speed/rsync speed/cp
	for p in rsync cp; do
		m=$(median_of "speed/$p")
		printf '   %-8s %8.1f MiB/s, %9.0f files/s\n' "$p" \
			"$(awk -v b="$TREE_BYTES" -v s="$m" 'BEGIN { print b / s / 1048576 }')" \
			"$(awk -v n="$TREE_FILES" -v s="$m" 'BEGIN { print n / s }')"
	done
	m=$(median_of speed/myriad)
	printf '   %-8s %8.1f MiB/s, %9.0f files/s (threads: %s)\n' myriad \
		"$(awk -v b="$TREE_BYTES" -v s="$m" 'BEGIN { print b / s / 1048576 }')" \
		"$(awk -v n="$TREE_FILES" -v s="$m" 'BEGIN { print n / s }')" \
		"$(grep -o '"threads": *[0-9]*' "$WORK/speed.json" | grep -o '[0-9]*$' || echo '?')"
	ratio speed/myriad speed/rsync
	bar_check "speed/myriad vs speed/rsync" "$RATIO" ">=" 2 speed/myriad
	ratio speed/myriad speed/cp
	bar_check "speed/myriad vs speed/cp" "$RATIO" ">=" 1.3 speed/myriad
	# The last run was some tool's: check that myriad's copy is right too (not timed).
	cold_dst
	"$MYRIAD" copy --no-state --progress 0 "$S" "$D" >/dev/null 2>&1 || echo "   WARNING: check copy by myriad exited non-zero"
	n=$(differences)
	echo "   myriad's copy vs SRC: $n differences listed by rsync -naHAXc --delete -i"
	show_diff
fi

if want resume; then
	wait_quiet
	section resume "a clean copy; then a copy killed with SIGKILL at 40% of the clean time, run again to completion"
	STATE=$WORK/state
	COPY=("$MYRIAD" copy --state "$STATE" --progress 0 --json "$WORK/resume.json" "$S" "$D")
	rm -rf "$STATE"
	cold_dst
	measure resume/clean "${SYNCED[@]}" "${COPY[@]}"
	clean=$(median_of resume/clean)
	n=$(differences)
	echo "   clean copy ($clean s with sync, checkpointing on): rsync lists $n differences"
	show_diff
	bar_check "resume: differences after a clean copy" "$n" "<=" 0 resume/clean
	echo "   myriad copy --check after the clean copy: exit $("$MYRIAD" copy --check --no-state --progress 0 "$S" "$D" >/dev/null 2>&1; echo $?)"

	rm -rf "$STATE"
	cold_dst
	kill_at=$(awk -v t="$clean" 'BEGIN { printf "%.2f", t * 0.4 }')
	"${COPY[@]}" >"$WORK/killed.out" 2>&1 &
	pid=$!
	sleep "$kill_at"
	if kill -0 "$pid" 2>/dev/null; then
		kill -9 "$pid"
		wait "$pid" 2>/dev/null || true
		echo "   killed with SIGKILL after $kill_at s: DST held $(find "$D" | wc -l) entries," \
			"$(du -sm "$D" | cut -f1) MiB; state: $(du -sk "$STATE" 2>/dev/null | cut -f1 || echo 0) KiB"
	else
		wait "$pid" || true
		echo "   WARNING: the copy finished before the kill at $kill_at s: nothing to resume"
	fi
	drop_caches
	measure resume/rerun "${SYNCED[@]}" "${COPY[@]}"
	n=$(differences)
	echo "   re-run to completion: $(median_of resume/rerun) s with sync (clean copy: $clean s); rsync lists $n differences"
	echo "   re-run summary: $(grep -oE '"(files|skipped|bytes)": *[0-9]+' "$WORK/resume.json" | tr '\n' ' ' || true)"
	show_diff
	bar_check "resume: differences after kill -9 + re-run" "$n" "<=" 0 resume/rerun
	echo "   myriad copy --check after the resumed copy: exit $("$MYRIAD" copy --check --no-state --progress 0 "$S" "$D" >/dev/null 2>&1; echo $?)"
	a=$(du -k "$S/extra/sparse" | cut -f1) b=$(du -k "$D/extra/sparse" | cut -f1)
	echo "   sparse file: $a KiB allocated in SRC, $b KiB in DST (64 MiB apparent)"
	rm -rf "$STATE"
fi

if want bwlimit; then
	wait_quiet
	section bwlimit "myriad copy --bwlimit 20M of $((BIG_BYTES >> 20)) MiB (four 100 MiB files); time includes sync -f DST"
	S_ALL=$S S=$S/big # differences() compares S with D
	alternate "$RUNS" cold_dst \
		-- bwlimit/myriad "${SYNCED[@]}" "$MYRIAD" copy --no-state --progress 0 --bwlimit 20M --json "$WORK/bw.json" "$S" "$D"
	report_medians bwlimit/myriad
	copied=$(grep -oE '"bytes": *[0-9]+' "$WORK/bw.json" | grep -oE '[0-9]+$' || echo 0)
	n=$(differences)
	m=$(median_of bwlimit/myriad)
	rate=$(awk -v b="$copied" -v s="$m" 'BEGIN { printf "%.2f", b / s / 1048576 }')
	rel=$(awk -v r="$rate" 'BEGIN { printf "%.3f", r / 20 }')
	echo "   copied $copied bytes (JSON of the last run; the files hold $BIG_BYTES), rsync lists $n differences"
	echo "   rate: $rate MiB/s at the median time = ${rel}x the 20 MiB/s asked"
	show_diff
	bar_check "bwlimit: rate / 20 MiB/s" "$rel" ">=" 0.90 bwlimit/myriad
	bar_check "bwlimit: rate / 20 MiB/s" "$rel" "<=" 1.10 bwlimit/myriad
	bar_check "bwlimit: differences after the copy" "$n" "<=" 0 bwlimit/myriad
	S=$S_ALL
fi

if want rate; then
	wait_quiet
	RATE=$((FILES / 20))
	section rate "myriad copy --rate $RATE of the $(human "$FILES")-file tree; entries/s over every 10 s window"
	# STAMP FILE CMD...: run CMD, its stderr's progress lines (one a line when stderr is not a
	# terminal) to FILE, each prefixed with the time it arrived.
	# shellcheck disable=SC2016 # expanded by that bash
	STAMP=(bash -c 'f=$1; shift; "$@" 2> >(while IFS= read -r l; do echo "$EPOCHREALTIME $l"; done >"$f")
		rc=$?; wait $!; exit $rc' stamp)
	: >"$WORK/rate.windows"
	for r in $(seq "$RUNS"); do
		cold_dst
		t0=$EPOCHREALTIME
		"${STAMP[@]}" "$WORK/rate.$r" "$MYRIAD" copy --no-state --progress 1 --rate "$RATE" "$S/tree" "$D" >/dev/null ||
			echo "   run $r: myriad exited $?"
		bench_log "rate run $r: $(secs_since "$t0") s"
		# Windows: from every sample, to the first sample at least 10 s later.
		awk -v r="$r" 'BEGIN { n = 0 } { gsub(",", ""); for (i = 1; i <= NF; i++) if ($i == "entries" && $(i + 1) ~ /\/s$/) { t[n] = $1; e[n] = $(i - 1); n++ } }
			END { for (a = 0; a < n; a++) for (b = a + 1; b < n; b++) if (t[b] - t[a] >= 10) {
				printf "%d %.2f %.1f\n", r, t[a] - t[0], (e[b] - e[a]) / (t[b] - t[a]); break } }' \
			"$WORK/rate.$r" >>"$WORK/rate.windows"
	done
	read -r nw lo hi <<<"$(awk 'NR == 1 { lo = hi = $3 } { if ($3 < lo) lo = $3; if ($3 > hi) hi = $3 }
		END { print NR, lo + 0, hi + 0 }' "$WORK/rate.windows")"
	rlo=$(awk -v a="$lo" -v r="$RATE" 'BEGIN { printf "%.3f", a / r }')
	rhi=$(awk -v a="$hi" -v r="$RATE" 'BEGIN { printf "%.3f", a / r }')
	echo "   $nw windows of 10 s over $RUNS runs: $lo to $hi entries/s (${rlo}x to ${rhi}x the $RATE asked)"
	[ "$nw" -gt 0 ] || { rlo=0 rhi=0; echo "   no 10 s window measured (runs shorter than 10 s?)"; }
	bar_check "rate: slowest 10 s window / rate asked" "$rlo" ">=" 0.90
	bar_check "rate: fastest 10 s window / rate asked" "$rhi" "<=" 1.10
fi

[ "$WAITED" = 0 ] || echo "note: waited $WAITED s in all for other benches to finish"
bench_summary
