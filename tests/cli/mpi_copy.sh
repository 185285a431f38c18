# myriad-mpi copy under mpirun (oversubscribed), in a tmpfs of its own with the working directory
# deep inside: for P = 1, 2, 4 ranks on a hostile tree with hard-link groups spread over many
# directories, DST equals one process's copy (every entry's type, mode, owner, size, links, times,
# target, content and xattrs; every directory's mode, owner and mtime), with one process's counts,
# exit status and one summary; a second run finds everything up to date, as one process's does;
# more than one rank copies; --delete and --max-delete, --dry-run and --check give one process's
# counts; a rank that sees another SRC by the same name is refused before anything is written; a
# file that cannot be read (faultfs, EIO) is reported once on stderr and in --errors; a full DST
# stops the job (exit 3) and the same command completes once there is room; --bwlimit holds for
# the whole job; kill -9 of a rank at random moments, then the same command: DST equals SRC, every
# entry counted once, every session counted; killed in rank 0's pass, resumed from it; a resume
# with another -np is refused.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_mpi.sh"

if ! sandbox 1g 2>"$S/sandbox.err"; then
	skip "copy across ranks: $(cat "$S/sandbox.err")"
	exit 0
fi
W=$SANDBOX
# ckeys JSON: the counts of a copy's summary.
ckeys() { for k in files dirs symlinks others bytes skipped deleted errors; do json_num "$1" $k; done | tr '\n' ' '; }
# dir_digest DIR: every directory's path, mode, owner and mtime (tree_digest leaves directories out).
dir_digest() { (cd "$1" && find . -type d -printf '%P %m %U %G %T@\n' | sort | md5sum); }
same_as_src() { [ "$(tree_digest "$1")$(dir_digest "$1")" = "$(tree_digest "$2")$(dir_digest "$2")" ]; }

# SRC: the hostile tree, 4,000 files in 40 directories, hard-link groups whose names lie in
# different directories (so in different ranks' shares), a directory with its own mode and times.
T=$W/src
make_hostile_tree "$T"
"$MKTREE" "$T/many" --files 4000 --fanout 40
find "$T/many" -type f | sort >"$W/many.files"
for i in $(seq 1 40); do
	f=$(sed -n "$((i * 90))p" "$W/many.files")
	printf 'linked %s' "$i" >"$f"
	ln "$f" "$(dirname "$(sed -n "$(((i * 90 + 2000) % 4000 + 1))p" "$W/many.files")")/hl$i"
	ln "$f" "$T/sub/hl$i"
done
mkdir -p "$T/modes/inner"
echo x >"$T/modes/inner/f"
chmod 0751 "$T/modes"
touch -d '2001-02-03 04:05:06.789' "$T/modes/inner" "$T/modes"
"$MYRIAD" copy --no-state --json "$W/c1.json" "$T" "$W/one" >/dev/null 2>&1
want_rc=$?
"$MYRIAD" copy --no-state --json "$W/again1.json" "$T" "$W/one" >/dev/null 2>&1
for P in 1 2 4; do
	run_mpi $P copy --no-state --json "$W/c$P.json" "$T" "$W/np$P" >"$W/csum$P" 2>&1
	expect_eq "copy np $P: exit status as one process ($want_rc)" $want_rc $?
	same_as_src "$W/one" "$W/np$P" && ok "copy np $P: DST equals one process's (entries, links, times, directories)" ||
		fail "copy np $P: DST differs from one process's"
	expect_eq "copy np $P: counts equal one process's" "$(ckeys "$W/c1.json")" "$(ckeys "$W/c$P.json")"
	expect_eq "copy np $P: one summary (rank 0's)" 1 "$(grep -c '^copy: ' "$W/csum$P")"
	expect_eq "copy np $P: hard links kept across ranks (hl7's inode has 3 names in DST)" 3 \
		"$(stat -c %h "$W/np$P/sub/hl7")"
	run_mpi $P copy --no-state --json "$W/again$P.json" "$T" "$W/np$P" >/dev/null 2>&1
	expect_eq "copy np $P again: everything up to date, as one process's second run" \
		"$(ckeys "$W/again1.json")" "$(ckeys "$W/again$P.json")"
done
expect_eq "copy np 4: the JSON names 4 ranks" 4 "$(json_num "$W/c4.json" ranks)"
n=$(nonzero_ranks "$W/c4.json")
[ "$n" -gt 1 ] && ok "copy np 4: $n ranks copied" || fail "copy np 4: only $n rank copied"
"$MYRIAD" copy --check "$T" "$W/np4" >/dev/null 2>&1
expect_eq "copy np 4: copy --check of SRC against it: equal" 0 $?
expect_eq "copy: no output part and no rank's tally left" "0 " "$(parts_left) $(ls -A "$S/state/myriad" 2>/dev/null)"

# --delete, --max-delete, --dry-run and --check across ranks: one process's counts.
extras() { mkdir -p "$1/gone/deeper" && touch "$1/gone/deeper/x" "$1/many/extra1" "$1/extra2"; }
"$MYRIAD" copy --no-state "$W/np2" "$W/del1" >/dev/null && "$MYRIAD" copy --no-state "$W/np2" "$W/del2" >/dev/null && extras "$W/del1" && extras "$W/del2"
"$MYRIAD" copy --no-state --dry-run --delete --json "$W/dry1.json" "$T" "$W/del1" >/dev/null 2>&1
run_mpi 2 copy --no-state --dry-run --delete --json "$W/dry2.json" "$T" "$W/del2" >/dev/null 2>&1
rc=$?
expect_eq "copy np 2 --dry-run --delete: exit 0, one process's counts" "0 $(ckeys "$W/dry1.json")" "$rc $(ckeys "$W/dry2.json")"
# check_lines FILE DST: a --check's differences and summary, DST's name and the time left out.
check_lines() { grep -aE '^(myriad copy|copy --check)' "$1" | sed "s|$2|DST|; s/; [0-9.]* s$//" | sort | md5sum; }
"$MYRIAD" copy --no-state --check "$T" "$W/del1" >"$W/chk1" 2>&1
want=$?
run_mpi 2 copy --no-state --check "$T" "$W/del2" >"$W/chk2" 2>&1
rc=$?
expect_eq "copy np 2 --check: one process's status, differences and summary" "$want $(check_lines "$W/chk1" "$W/del1")" \
	"$rc $(check_lines "$W/chk2" "$W/del2")"
"$MYRIAD" copy --no-state --delete --max-delete 2 --json "$W/md1.json" "$T" "$W/del1" >/dev/null 2>&1
want=$?
run_mpi 2 copy --no-state --delete --max-delete 2 --json "$W/md2.json" "$T" "$W/del2" >/dev/null 2>&1
rc=$?
expect_eq "copy np 2 --delete --max-delete 2: one process's status and counts" "$want $(ckeys "$W/md1.json")" \
	"$rc $(ckeys "$W/md2.json")"
run_mpi 2 copy --no-state --delete --json "$W/del2.json" "$T" "$W/del2" >/dev/null 2>&1
expect_eq "copy np 2 --delete: exit 0" 0 $?
same_as_src "$W/one" "$W/del2" && ok "copy np 2 --delete: the extras are gone, DST equals one process's copy" ||
	fail "copy np 2 --delete: DST differs: $(find "$W/del2" -name 'extra*' -o -name gone)"

# DST trees where SRC has files (--delete replaces them): deleted once, by rank 0's pass, counted
# and within --max-delete as one process's (a rank of the files pass deleted them uncounted, and
# with no budget yet, said "--max-delete reached" and made the job fail).
for i in $(seq 20); do
	mkdir -p "$W/xs/d$i" "$W/xd1/d$i/x/sub" "$W/xd2/d$i/x/sub"
	echo "$i" >"$W/xs/d$i/x"
	touch "$W/xd1/d$i/x/a" "$W/xd1/d$i/x/sub/b" "$W/xd2/d$i/x/a" "$W/xd2/d$i/x/sub/b"
done
"$MYRIAD" copy --no-state --delete --max-delete 1000 --json "$W/x1.json" "$W/xs" "$W/xd1" >/dev/null 2>&1
want=$?
run_mpi 2 copy --no-state --delete --max-delete 1000 --json "$W/x2.json" "$W/xs" "$W/xd2" >/dev/null 2>"$W/x2.err"
rc=$?
expect_eq "copy np 2 --delete, DST trees where SRC has files: one process's status and counts, no limit said" \
	"$want $(ckeys "$W/x1.json")0" "$rc $(ckeys "$W/x2.json")$(grep -c 'max-delete' "$W/x2.err")"
same_as_src "$W/xd1" "$W/xd2" && ok "copy np 2 --delete, DST trees where SRC has files: DST equals one process's" ||
	fail "copy np 2 --delete, DST trees where SRC has files: DST differs"

# A rank that sees another SRC by the same name (mpirun starts each rank in its own directory
# here): refused (exit 2) before anything is written, rank 1 saying why.
mkdir -p "$W/wa/x/sub" "$W/wb/x/sub"
touch "$W/wa/x/sub/f" "$W/wb/x/sub/f"
timeout 120 mpirun --allow-run-as-root --oversubscribe -np 1 --wdir "$W/wa" "$MPI" copy x y : \
	-np 1 --wdir "$W/wb" "$MPI" copy x y >/dev/null 2>"$W/wdir"
expect_eq "copy across ranks, another SRC by that name on rank 1: refused (exit 2)" 2 $?
expect_eq "copy across ranks, another SRC by that name: rank 1 says why; no DST made" "1 0" \
	"$(grep -c "rank 1: refusing to copy 'x'" "$W/wdir") $(find "$W/wa" "$W/wb" -name y | wc -l)"

# A full DST: the job stops (exit 3, state kept); with room, the same command completes.
mkdir -p "$W/fullsrc"
for i in $(seq 8); do mkdir "$W/fullsrc/d$i" && head -c 400000 /dev/urandom >"$W/fullsrc/d$i/f"; done
mkdir -p "$W/small"
mount -t tmpfs -o size=1m tmpfs "$W/small" && on_exit "umount -l '$W/small'"
run_mpi 2 copy "$W/fullsrc" "$W/small/dst" >/dev/null 2>"$W/full.err"
expect_eq "copy np 2 into a full DST: stops with exit 3, saying the destination is out of space" "3 1" \
	"$? $(grep -c 'out of space' "$W/full.err" | awk '{print ($1 > 0)}')"
mount -o remount,size=8m "$W/small"
run_mpi 2 copy --json "$W/full.json" "$W/fullsrc" "$W/small/dst" >/dev/null 2>&1
expect_eq "copy np 2, then with room: exit 0, every file counted once" "0 8" "$? $(json_num "$W/full.json" files)"
same_as_src "$W/fullsrc" "$W/small/dst" && ok "copy np 2 after a full DST: DST equals SRC" || fail "copy np 2 after a full DST: DST differs"
umount "$W/small"

# --bwlimit is the job's: 8 MiB at 4 MiB/s over 2 ranks takes about 2 s (each rank at the whole
# limit would take 1 s).
mkdir -p "$W/bw"
for i in $(seq 16); do mkdir "$W/bw/d$i" && head -c 524288 /dev/urandom >"$W/bw/d$i/f"; done
run_mpi 2 copy --no-state --bwlimit 4M --json "$W/bw.json" "$W/bw" "$W/bwdst" >/dev/null 2>&1
el=$(json_num "$W/bw.json" elapsed_s)
awk -v e="$el" 'BEGIN { exit !(e >= 1.5) }' && ok "copy np 2 --bwlimit 4M: 8 MiB took ${el}s (the job's limit)" ||
	fail "copy np 2 --bwlimit 4M: 8 MiB in ${el}s: the limit is per rank"

if [ -e /dev/fuse ]; then
	# A file that cannot be read: reported once (the files pass says nothing; rank 0's pass does).
	"$MKTREE" "$W/fb/t" --files 2000 --fanout 100
	if mount_faultfs "$W/fb" "$W/fm" --rule 'open:/t/d5/f55*:EIO'; then
		"$MYRIAD" copy --no-state "$W/fm/t" "$W/fone" >/dev/null 2>&1
		want=$?
		run_mpi 2 copy --no-state --errors "$W/ferrs" "$W/fm/t" "$W/fdst" >/dev/null 2>"$W/ferr"
		expect_eq "copy np 2, an unreadable file: one process's status ($want)" "$want" $?
		expect_eq "copy np 2, an unreadable file: reported once on stderr and in --errors" "1 1" \
			"$(grep -c 'd5/f55: open: Input/output error' "$W/ferr") $(wc -l <"$W/ferrs")"
		expect_eq "copy np 2, an unreadable file: everything else copied" "$(find "$W/fone" | wc -l)" \
			"$(find "$W/fdst" | wc -l)"
	else
		fail "faultfs (copy EIO) did not mount"
	fi
	# hard_links X: five hard-link groups of two names in different directories of $W/Xb/t; total:
	# its files (names).
	hard_links() {
		find "$W/$1b/t" -type f | sort >"$W/$1.files"
		for i in 1 2 3 4 5; do
			ln "$(sed -n "$((i * 300))p" "$W/$1.files")" "$(dirname "$(sed -n "$((i * 300 + 1500))p" "$W/$1.files")")/hl$i"
		done
		total=$(find "$W/$1b/t" -type f | wc -l)
	}
	if slow_tree "$W" k 'all:*:delay=1' && hard_links k; then
		kargs=(-j 1 --checkpoint-interval 0.05 --json "$W/k.json" "$W/km/t" "$W/kdst")
		kill_three_times copy "${kargs[@]}"
		run_mpi 2 copy "${kargs[@]}" >/dev/null 2>"$W/k.err"
		expect_eq "copy np 2: kill -9 x$kills, then the same command: exit 0" 0 $?
		same_as_src "$W/kb/t" "$W/kdst" && ok "copy np 2: kill -9: DST equals SRC (hard links too)" ||
			fail "copy np 2: kill -9: DST differs from SRC"
		if [ "$kills" = 3 ]; then
			expect_eq "copy np 2: kill -9: every file copied counted once, exactly (the job's)" "$total true" \
				"$(json_num "$W/k.json" files) $(grep -o '"counts_exact":[a-z]*' "$W/k.json" | cut -d: -f2)"
			expect_eq "copy np 2: kill -9: every killed job was resumed (sessions = kills + 1)" 4 \
				"$(json_num "$W/k.json" sessions)"
		else
			skip "copy np 2: kill -9: exact counts over the job (one of the three jobs completed before its kill: a new job then began)"
		fi
		expect_eq "copy np 2: no state and no rank's tally left" "" "$(ls -A "$S/state/myriad" 2>/dev/null)"
		other_np_refused copy 1.5 -j 1 "$W/km/t" "$W/kdst2"
		run_mpi 1 copy -j 1 "$W/km/t" "$W/kdst2" >/dev/null 2>"$W/np1.refused"
		expect_eq "copy: a resume with one rank is refused too (exit 2), naming -np 2" "2 1" \
			"$? $(grep -c 'mpirun -np 2' "$W/np1.refused")"
		run_mpi 2 copy -j 1 "$W/km/t" "$W/kdst2" >/dev/null 2>&1
		expect_eq "copy: the same -np then completes" 0 $?
	else
		fail "faultfs (copy kill) did not mount"
	fi
	# Killed while rank 0 gives the directories their metadata (DST behind faultfs, the
	# directories' utimensat slowed down): resumed from rank 0's pass.
	mkdir -p "$W/pb" "$W/psrc"
	"$MKTREE" "$W/psrc/t" --files 2000 --fanout 100
	if mount_faultfs "$W/pb" "$W/pm" --rule 'utimens:/dst/d[0-9]:delay=60' --rule 'utimens:/dst/d1[0-9]:delay=60'; then
		pargs=(-j 1 --checkpoint-interval 0.05 --json "$W/p.json" "$W/psrc/t" "$W/pm/dst")
		run_mpi 2 copy "${pargs[@]}" >/dev/null 2>&1 &
		pp=$!
		for _ in $(seq 400); do
			[ "$(head -c 8 "$S"/state/myriad/*/snapshot 2>/dev/null)" = MYRCPPH2 ] && break
			sleep 0.05
		done
		sleep 0.3
		kill -9 "$(pgrep -f "^$MPI copy" | head -n 1)" 2>/dev/null
		wait $pp
		expect_eq "copy np 2: killed in rank 0's pass (its snapshot says so)" MYRCPPH2 \
			"$(head -c 8 "$S"/state/myriad/*/snapshot 2>/dev/null)"
		run_mpi 4 copy "${pargs[@]}" >/dev/null 2>"$W/pnp"
		expect_eq "copy: in rank 0's pass, a resume with another -np is refused (exit 2)" 2 $?
		grep -q 'mpirun -np 2' "$W/pnp" && ok "copy: that refusal names -np 2" || fail "copy -np: $(cat "$W/pnp")"
		run_mpi 2 copy "${pargs[@]}" >/dev/null 2>&1
		expect_eq "copy np 2: resumed in rank 0's pass: exit 0" 0 $?
		same_as_src "$W/psrc/t" "$W/pb/dst" && ok "copy np 2: resumed in rank 0's pass: DST equals SRC" ||
			fail "copy np 2: resumed in rank 0's pass: DST differs"
		expect_eq "copy np 2: resumed in rank 0's pass: every file counted once; 2 sessions" "2000 true 2" \
			"$(json_num "$W/p.json" files) $(grep -o '"counts_exact":[a-z]*' "$W/p.json" | cut -d: -f2) $(json_num "$W/p.json" sessions)"
	else
		fail "faultfs (copy rank 0's pass) did not mount"
	fi
else
	skip "copy faultfs cases across ranks: no /dev/fuse"
fi
cd "$S" || exit 1
