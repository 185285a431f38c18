# Memory does not grow with the tree: peak RSS walking 500k entries is within 1.25x of walking
# 100k, also with 500k entries in one directory, and 300k subdirectories in one directory take no
# more than 50k do (the frontier would grow with them without its bound); and 16 workers reading
# 32 directories of 5,000 subdirectories each at once (the shape of a 10^8 tree's upper levels,
# where walk's RSS grew 1.5x) take no more than directories of 5,000 files do.
# The thread count is fixed (-j 2): the default grows the pool with I/O waits, and each worker has
# its own buffers, which is not per-file state.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
[ -x /usr/bin/time ] || { skip "GNU time is not installed (scripts/deps installs it)"; exit 0; }
# The trees go on a tmpfs when we may mount one: making 1.5M entries on a disk takes minutes.
if is_root && mkdir -p "$S/t" && mount -t tmpfs -o size=4g,nr_inodes=3000000 tmpfs "$S/t"; then
	on_exit "umount '$S/t'"
	S=$S/t
fi
"$MKTREE" "$S/small" --files 100000 --fanout 1000
"$MKTREE" "$S/large" --files 500000 --fanout 1000
"$MKTREE" "$S/flat" --flat --files 500000
"$MKTREE" "$S/wide1" --dirs-only --files 50000 --fanout 50000
"$MKTREE" "$S/wide2" --dirs-only --files 300000 --fanout 300000
for opt in "" "--stat" "--print0"; do
	small=$(peak_rss_kib "$MYRIAD" walk --no-state -j 2 $opt "$S/small")
	large=$(peak_rss_kib "$MYRIAD" walk --no-state -j 2 $opt "$S/large")
	flat=$(peak_rss_kib "$MYRIAD" walk --no-state -j 2 $opt "$S/flat")
	wide1=$(peak_rss_kib "$MYRIAD" walk --no-state -j 2 $opt "$S/wide1")
	wide2=$(peak_rss_kib "$MYRIAD" walk --no-state -j 2 $opt "$S/wide2")
	lim=$((small * 125 / 100))
	for pair in "500k entries:$large" "500k in one directory:$flat"; do
		name=${pair%%:*} rss=${pair##*:}
		[ "$rss" -le "$lim" ] && ok "walk ${opt:-(count)}: $name: peak RSS $rss KiB within 1.25x of 100k's $small KiB" ||
			fail "walk ${opt:-(count)}: $name: peak RSS $rss KiB > 1.25 x 100k's $small KiB"
	done
	[ "$wide2" -le $((wide1 * 125 / 100)) ] &&
		ok "walk ${opt:-(count)}: 300k subdirectories in one directory: $wide2 KiB, within 1.25x of 50k's $wide1 KiB" ||
		fail "walk ${opt:-(count)}: 300k subdirectories in one directory: $wide2 KiB > 1.25 x 50k's $wide1 KiB"
done

# 16 workers that each read a directory of 5,000 subdirectories held every subdirectory's record
# until the directory's batch was committed: 7-9 MiB where 5,000-file directories took 3-4 MiB.
# Now a worker commits every 128 subdirectories, so the frontier's high-water mark holds. The
# baseline has as many top directories (32 of 5,000 files), so that all 16 workers have work in
# both (each worker that runs touches ~70 KiB of buffers: 20 directories left some idle, and the
# baseline's spread then made the 1.25x bar flaky); medians of 5.
"$MKTREE" "$S/wide5k" --files 160000 --fanout 5000
"$MKTREE" "$S/fans" --dirs-only --files 160000 --fanout 5000
median5() { printf '%s\n' "$@" | sort -n | sed -n 3p; }
for opt in "" "--stat"; do
	r=() f=()
	for i in 1 2 3 4 5; do
		r+=("$(peak_rss_kib "$MYRIAD" walk --no-state -j 16 $opt "$S/wide5k")")
		f+=("$(peak_rss_kib "$MYRIAD" walk --no-state -j 16 $opt "$S/fans")")
	done
	base=$(median5 "${r[@]}") fans=$(median5 "${f[@]}")
	[ "$fans" -le $((base * 125 / 100)) ] &&
		ok "walk -j 16 ${opt:-(count)}: 32 directories of 5,000 subdirectories: $fans KiB, within 1.25x of 5,000-file directories' $base KiB" ||
		fail "walk -j 16 ${opt:-(count)}: 32 directories of 5,000 subdirectories: $fans KiB > 1.25 x 5,000-file directories' $base KiB"
done
