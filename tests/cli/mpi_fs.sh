# myriad-mpi on loop-mounted ext4 and XFS (each image a scratch mount of its own, the working
# directory deep inside it): at 1, 2 and 4 ranks on a hostile tree with 3,000 more files and hard
# links, walk --stat gives one process's counts and bytes and each path once; copy gives one
# process's DST (every entry and directory's metadata, hard links) and counts; rm removes the copy
# with one process's counts.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_mpi.sh"

ckeys() { for k in files dirs symlinks others bytes skipped deleted errors; do json_num "$1" $k; done | tr '\n' ' '; }
rkeys() { for k in files directories errors; do json_num "$1" $k; done | tr '\n' ' '; }
dir_digest() { (cd "$1" && find . -type d -printf '%P %m %U %G %T@\n' | sort | md5sum); }
for fs in ext4 xfs; do
	D=$S/$fs
	if ! mount_image "$fs" 2g "$D" 2>"$S/img.err"; then
		skip "$fs: $(cat "$S/img.err")"
		continue
	fi
	mkdir -p "$D/cwd/a/b/c"
	cd "$D/cwd/a/b/c" || exit 1
	T=$D/t
	make_hostile_tree "$T"
	"$MKTREE" "$T/many" --files 3000 --fanout 30
	ln "$T/sub/with-data" "$T/many/hl1"
	ln "$T/sub/with-data" "$T/hl2"
	"$MYRIAD" walk --no-state --stat --json "$D/w1.json" "$T" >/dev/null 2>&1
	"$MYRIAD" copy --no-state --json "$D/c1.json" "$T" "$D/one" >/dev/null 2>&1
	want_crc=$?
	"$MYRIAD" copy --no-state "$T" "$D/rmone" >/dev/null 2>&1
	"$MYRIAD" rm --no-state --json "$D/r1.json" "$D/rmone" >/dev/null 2>&1
	want_rrc=$?
	for P in 1 2 4; do
		run_mpi $P walk --no-state --stat --print0 --json "$D/w$P.json" -o "$D/o$P" "$T" >/dev/null 2>&1
		expect_eq "$fs np $P walk --stat: exit 0, one process's counts and bytes, each path once" \
			"0 $(walk_counts "$D/w1.json") $(json_num "$D/w1.json" apparent_bytes) $(find "$T" -print0 | sort -z | md5sum)" \
			"$? $(walk_counts "$D/w$P.json") $(json_num "$D/w$P.json" apparent_bytes) $(sort -z "$D/o$P" | md5sum)"
		run_mpi $P copy --no-state --json "$D/c$P.json" "$T" "$D/np$P" >/dev/null 2>&1
		rc=$?
		expect_eq "$fs np $P copy: one process's status and counts" "$want_crc $(ckeys "$D/c1.json")" \
			"$rc $(ckeys "$D/c$P.json")"
		[ "$(tree_digest "$D/one")$(dir_digest "$D/one")" = "$(tree_digest "$D/np$P")$(dir_digest "$D/np$P")" ] &&
			ok "$fs np $P copy: DST equals one process's (entries, directories, hard links)" ||
			fail "$fs np $P copy: DST differs from one process's"
		run_mpi $P rm --no-state --json "$D/r$P.json" "$D/np$P" >/dev/null 2>&1
		rc=$?
		expect_eq "$fs np $P rm of the copy: one process's status and counts, the tree gone" \
			"$want_rrc $(rkeys "$D/r1.json")gone" "$rc $(rkeys "$D/r$P.json")$([ -e "$D/np$P" ] && echo left || echo gone)"
	done
	cd "$S" || exit 1
done
