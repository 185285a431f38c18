# myriad-mpi (`make mpi`) under mpirun: for P = 1, 2, 4 ranks (oversubscribed), walk's counts, set of
# paths (-o FILE, --print0), JSON totals and exit status equal one process's (build/myriad) on a
# hostile tree; on a skewed tree (90% of its entries under one subdirectory) more than one rank does
# work; a directory that cannot be opened (faultfs, EACCES) is reported once, with exit 1 as one
# process; SIGTERM to one rank stops the job (exit 3) and the job resumes; kill -9 of a rank at
# random moments, then the same command: -o FILE and --errors hold each line once, totals exact;
# a resume with another -np is refused (exit 2) keeping the state; --state DIR and --fresh work;
# no part file is left behind. verify across ranks: on a damaged fill, the same counts, --errors
# lines and exit status as one process; kill -9 of a rank, then the same command, on a slow
# (faultfs) mount: each finding once, counts exact. fill across ranks: the tree, manifest, counts,
# latencies and timeline equal one process's; a complete fill re-checked; --until-full refused;
# kill -9 of a rank then the same command: every file, each counted once; -np mismatch refused;
# --fresh; no rank's tally left. rm across ranks (in a tmpfs of its own, the working directory deep
# inside): a hostile tree gone with one process's counts and status at 1, 2, 4 ranks; --dry-run; '..'
# refused once; a mount point inside kept and reported once; unremovable entries (faultfs) reported
# once each; kill -9 of a rank, then the same command: tree gone, counts exact, sessions; another -np
# refused. Commands that do not run across ranks (find) are refused (exit 2). copy: mpi_copy.sh.
# Each kill -9 campaign kills its jobs in turn by one rank and by every rank at once (kill_jobs).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_mpi.sh"

T=$S/tree
make_hostile_tree "$T"
"$MKTREE" "$T/many" --files 20000 --fanout 50
"$MYRIAD" walk --no-state --stat --json "$S/one.json" "$T" >/dev/null 2>&1
want_counts=$(walk_counts "$S/one.json")
want_bytes=$(json_num "$S/one.json" apparent_bytes)
find "$T" -print0 | sort -z | md5sum >"$S/find.md5"

# Skewed: 90% of the entries under big/, spread over many directories.
K=$S/skew
"$MKTREE" "$K/big" --files 90000 --fanout 100
"$MKTREE" "$K/small" --files 10000 --fanout 100
want_skew=$(find_counts "$K")
find "$K" | sort | md5sum >"$S/kfind.md5"

for P in 1 2 4; do
	run_mpi $P walk --stat --json "$S/j$P.json" "$T" >"$S/sum$P" 2>"$S/err$P"
	expect_eq "np $P: exit 0" 0 $?
	expect_eq "np $P: counts by type equal one process's" "$want_counts" "$(walk_counts "$S/j$P.json")"
	expect_eq "np $P: --stat apparent bytes equal one process's" "$want_bytes" "$(json_num "$S/j$P.json" apparent_bytes)"
	expect_eq "np $P: one summary line (rank 0's)" 1 "$(grep -c entries "$S/sum$P")"
	expect_eq "np $P: the JSON names $P ranks" "$P" "$(json_num "$S/j$P.json" ranks)"

	run_mpi $P walk --print0 -o "$S/out$P" "$T" >/dev/null 2>&1
	expect_eq "np $P: -o FILE holds every path exactly once" "$(cat "$S/find.md5")" "$(sort -z "$S/out$P" | md5sum)"
	run_mpi $P walk --print0 "$T" 2>/dev/null | sort -z | md5sum >"$S/p$P.md5"
	expect_eq "np $P: --print0 to standard output: every path exactly once" "$(cat "$S/find.md5")" "$(cat "$S/p$P.md5")"
	expect_eq "np $P: no output part left behind" 0 "$(parts_left)"

	run_mpi $P walk -j 1 --json "$S/k$P.json" -o "$S/kout" "$K" >/dev/null 2>&1
	expect_eq "np $P: skewed tree: counts equal find's" "$want_skew" "$(walk_counts "$S/k$P.json")"
	expect_eq "np $P: skewed tree: -o FILE holds every path exactly once" "$(cat "$S/kfind.md5")" \
		"$(sort "$S/kout" | md5sum)"
	if [ $P -gt 1 ]; then
		n=$(nonzero_ranks "$S/k$P.json")
		[ "$n" -ge 2 ] && ok "np $P: skewed tree: $n ranks did work" ||
			fail "np $P: skewed tree: only $n rank did work: $(grep -o '"rank_entries":[^]]*]' "$S/k$P.json")"
	fi
done

# Directories that cannot be opened: each reported once, by the rank that met it; exit status 1.
if is_root && [ -e /dev/fuse ]; then
	B=$S/backing
	"$MKTREE" "$B/t" --files 20000 --fanout 400
	M=$S/m
	if mount_faultfs "$B" "$M" --rule 'opendir:/t/d*7:EACCES'; then
		"$MYRIAD" walk --no-state --json "$S/f.json" "$M" >/dev/null 2>"$S/ferr"
		want_rc=$?
		expect_eq "faultfs: one process exits 1" 1 $want_rc
		expect_eq "faultfs: one process reports 5 directories" 5 "$(grep -c 'open: Permission denied' "$S/ferr")"
		for P in 1 2 4; do
			run_mpi $P walk -j 1 --json "$S/f$P.json" --errors "$S/e$P.jsonl" "$M" >/dev/null 2>"$S/ferr$P"
			expect_eq "np $P: unreadable directory: exit status as one process" $want_rc $?
			expect_eq "np $P: unreadable directories: each reported once on stderr" "$(sort "$S/ferr")" \
				"$(grep 'open: Permission denied' "$S/ferr$P" | sort)"
			expect_eq "np $P: unreadable directories: one --errors line each" 5 \
				"$(grep -c '"op":"open"' "$S/e$P.jsonl")"
			expect_eq "np $P: unreadable directory: counts equal one process's" \
				"$(walk_counts "$S/f.json") $(json_num "$S/f.json" errors)" \
				"$(walk_counts "$S/f$P.json") $(json_num "$S/f$P.json" errors)"
		done
		expect_eq "no --errors part left behind" 0 "$(parts_left)"
		# Killed and resumed, the --errors file still holds each failure once.
		rm -f "$S/ek.jsonl"
		args=(-j 1 --checkpoint-interval 0.05 --json "$S/ek.json" --errors "$S/ek.jsonl" "$M")
		kill_jobs "np 2: --errors" 2 3 walk --rate 8k "${args[@]}"
		run_mpi 2 walk "${args[@]}" >/dev/null 2>&1
		expect_eq "np 2: kill -9 x$kills: the resumed job exits 1 (the failures)" 1 $?
		expect_eq "np 2: kill -9: the --errors file holds each failure once (distinct, lines)" "5 5" \
			"$(grep '"op":"open"' "$S/ek.jsonl" | sort -u | wc -l) $(wc -l <"$S/ek.jsonl")"
		expect_eq "np 2: kill -9: counts and errors equal one process's" \
			"$(walk_counts "$S/f.json") $(json_num "$S/f.json" errors)" \
			"$(walk_counts "$S/ek.json") $(json_num "$S/ek.json" errors)"
		# SIGTERM to one rank stops the whole job: exit 3, saying no state was kept; no hang.
		M2=$S/slow
		"$MKTREE" "$S/backing2/t" --files 2000 --fanout 50
		"$MYRIAD" walk --no-state --json "$S/f0.json" "$S/backing2" >/dev/null 2>&1
		if mount_faultfs "$S/backing2" "$M2" --rule 'all:*:delay=3'; then
			mpirun --allow-run-as-root --oversubscribe -np 2 "$MPI" walk -j 1 --stat "$M2" >/dev/null 2>"$S/stop" &
			mp=$!
			sleep 1.5
			kill -TERM "$(pgrep -P $mp | tail -1)"
			for _ in $(seq 100); do kill -0 $mp 2>/dev/null || break; sleep 0.1; done
			if kill -0 $mp 2>/dev/null; then
				fail "SIGTERM to rank 1: the job still runs 10 s later"
				kill -KILL $mp
			else
				wait $mp
				expect_eq "SIGTERM to rank 1: the job exits 3" 3 $?
			fi
			expect_eq "SIGTERM to rank 1: rank 0 says the job stopped, its state saved" 1 \
				"$(grep -c 'stopped: another rank stopped.*state saved in' "$S/stop")"
			expect_eq "SIGTERM to rank 1: rank 1 says it was stopped by the signal" 1 \
				"$(grep -c 'rank 1: stopped by signal 15' "$S/stop")"
			mpirun --allow-run-as-root --oversubscribe -np 2 "$MPI" walk -j 1 --stat --json "$S/stop.json" \
				"$M2" >/dev/null 2>"$S/stop2"
			expect_eq "SIGTERM to rank 1: the job resumed ends with one process's counts" \
				"$(walk_counts "$S/f0.json")" "$(walk_counts "$S/stop.json")"
		else
			fail "faultfs (delay) did not mount"
		fi
		# One progress line for the job: its counts, and every rank's workers stuck in the kernel
		# (four directories whose opendir takes 6 s; two ranks of one worker each read two).
		mkdir -p "$S/backing3/t"/{a,b,c,d}
		touch "$S/backing3/t"/{a,b,c,d}/f
		M3=$S/stuck
		if mount_faultfs "$S/backing3" "$M3" --rule 'opendir:/t/?:delay=6000'; then
			run_mpi 2 walk -j 1 --no-state --progress 0.5 "$M3" 2>&1 >/dev/null | tr '\r' '\n' >"$S/prog"
			grep -q '2 ranks' "$S/prog" && ok "progress: one line for the job (2 ranks)" ||
				fail "progress: $(tail -2 "$S/prog")"
			grep -q '; rank 1: 1 worker without progress, longest [0-9]* s in .*/t/[a-d]' "$S/prog" &&
				ok "progress: a rank's worker stuck in the kernel is named with its rank" ||
				fail "progress: stuck rank not named: $(grep -m1 'without' "$S/prog")"
		else
			fail "faultfs (stuck) did not mount"
		fi
	else
		fail "faultfs did not mount"
	fi
else
	skip "unreadable directory: faultfs needs root and /dev/fuse"
fi

# Checkpoints across ranks. kill -9 of one rank at random moments (mpirun then ends the job), and
# the same command again: -o FILE holds every path exactly once, the totals are an uninterrupted
# walk's, every killed session counted.
for P in 2 4; do
	rm -f "$S/ko"
	args=(-j 2 --stat --checkpoint-interval 0.05 --json "$S/ko.json" --print0 -o "$S/ko" "$T")
	kill_jobs "np $P" $P 4 walk --rate 6k "${args[@]}"
	expect_eq "np $P: kill -9 of a rank: no rank left running" "" "$(pgrep -f "^$MPI walk")"
	run_mpi $P walk "${args[@]}" >/dev/null 2>"$S/ko.err"
	expect_eq "np $P: kill -9 x$kills: the resumed job exits 0" 0 $?
	expect_eq "np $P: kill -9: -o FILE holds every path exactly once" "$(cat "$S/find.md5")" "$(sort -z "$S/ko" | md5sum)"
	expect_eq "np $P: kill -9: counts and bytes equal an uninterrupted walk's" "$want_counts $want_bytes" \
		"$(walk_counts "$S/ko.json") $(json_num "$S/ko.json" apparent_bytes)"
	expect_eq "np $P: kill -9: every killed job was resumed (sessions = kills + 1)" $((kills + 1)) \
		"$(json_num "$S/ko.json" sessions)"
	expect_eq "np $P: kill -9: state removed after the finished job" "" "$(ls "$S/state/myriad")"
	expect_eq "np $P: kill -9: no output part left behind" 0 "$(parts_left)"
done

# One huge directory on a slow filesystem is sliced between the ranks (walk_give asks the worker
# reading it to cut slices of a few hundred entries off it): more than one rank counts its
# entries, each path once; kill -9 of a rank at random moments, then the same command: each path
# once, counts exact, every session counted (a slice is in exactly one rank's snapshot).
if is_root && [ -e /dev/fuse ]; then
	mkdir -p "$S/hb/one"
	(cd "$S/hb/one" && seq -f 'f%.0f' 1 3000 | xargs touch)
	if mount_faultfs "$S/hb" "$S/hm" --rule 'all:*:delay=1'; then
		run_mpi 4 walk -j 1 --stat --no-state --json "$S/h.json" -o "$S/ho" "$S/hm/one" >/dev/null 2>&1
		expect_eq "one directory of 3,000 (1 ms per operation), np 4: exit 0, 3,001 entries, each path once" \
			"0 3001 3001" "$? $(json_num "$S/h.json" entries) $(sort -u "$S/ho" | wc -l)"
		n=$(nonzero_ranks "$S/h.json")
		[ "$n" -gt 1 ] && ok "one directory, np 4: $n ranks counted its entries" ||
			fail "one directory, np 4: only $n rank counted its entries"
		rm -f "$S/ho"
		hargs=(-j 1 --stat --checkpoint-interval 0.05 --json "$S/hk.json" -o "$S/ho" "$S/hm/one")
		kill_jobs "one directory np 4" 4 3 walk "${hargs[@]}"
		run_mpi 4 walk "${hargs[@]}" >/dev/null 2>&1
		expect_eq "one directory np 4: kill -9 x$kills, then the same command: exit 0, each path once" "0 3001 3001" \
			"$? $(wc -l <"$S/ho") $(sort -u "$S/ho" | wc -l)"
		expect_eq "one directory np 4: kill -9: entries and directories exact, every killed job resumed" "3001 1 $((kills + 1))" \
			"$(json_num "$S/hk.json" entries) $(json_num "$S/hk.json" directories) $(json_num "$S/hk.json" sessions)"
	else
		fail "faultfs (one directory) did not mount"
	fi
	# Files created and removed in the directory while its slices are read (ext4: new names land
	# anywhere in hash order): each file there for the whole walk seen once, no path twice. Slices
	# that ended after so many entries lost 27-30 of the 3,000 and could list a path twice.
	if mount_image ext4 512m "$S/cb" 2>"$S/img.err"; then
		mkdir "$S/cb/one"
		(cd "$S/cb/one" && seq -f 'f%.0f' 1 3000 | xargs touch && seq -f 'd%.0f' 1 600 | xargs touch)
		if mount_faultfs "$S/cb" "$S/cm" --rule 'all:*:delay=1'; then
			(sleep 0.5; cd "$S/cb/one" &&
				perl -e 'for $i (1..600) { open F, ">n$i"; close F; unlink "d$i"; select(undef, undef, undef, 0.004) }') &
			run_mpi 4 walk -j 1 --stat --no-state -o "$S/co" "$S/cm/one" >/dev/null 2>&1
			rc=$?
			wait
			expect_eq "one directory np 4, 600 files created and 600 removed meanwhile: exit 0, each of the 3,000 others once, no path twice" \
				"0 3000 3000 $(wc -l <"$S/co")" \
				"$rc $(grep -c '/f[0-9]*$' "$S/co") $(grep '/f[0-9]*$' "$S/co" | sort -u | wc -l) $(sort -u "$S/co" | wc -l)"
		else
			fail "faultfs (one directory on ext4) did not mount"
		fi
	else
		skip "one directory with files created meanwhile: $(cat "$S/img.err")"
	fi
else
	skip "one directory across ranks: faultfs needs root and /dev/fuse"
fi

# A resume with another number of ranks is refused, naming the number to use; --fresh starts over;
# --state DIR is rank 0's.
run_mpi 2 walk --rate 5k --checkpoint-interval 0.05 --state "$S/st" -o "$S/so" "$T" >/dev/null 2>&1 &
pid=$!
wait_for_glob "$S/st/snapshot" 20 || fail "--state DIR: no snapshot in DIR within 20 s"
pkill -TERM -f "^$MPI walk" # the ranks, not mpirun (which, signalled, exits 1 whatever they return)
wait $pid
expect_eq "SIGTERM to every rank: the job exits 3" 3 $?
run_mpi 4 walk --state "$S/st" -o "$S/so" "$T" >/dev/null 2>"$S/np.err"
expect_eq "resume with -np 4 of a job of 2 ranks: exit 2" 2 $?
grep -q "saved by a job of 2 ranks, this one has 4: run it again with mpirun -np 2" "$S/np.err" &&
	ok "resume with another -np: says which to use" || fail "resume with another -np: $(grep myriad "$S/np.err")"
[ -s "$S/st/snapshot" ] && ok "resume with another -np: the state is kept" || fail "the refused resume lost the state"
run_mpi 2 walk --state "$S/st" -o "$S/so" "$T" >/dev/null 2>"$S/np.err"
expect_eq "resume with the same -np: exit 0" 0 $?
grep -q "resuming the earlier run" "$S/np.err" && ok "resume with the same -np: resumed" || fail "not resumed: $(cat "$S/np.err")"
expect_eq "--state DIR: -o FILE holds every path exactly once" "$(find "$T" | sort | md5sum)" "$(sort "$S/so" | md5sum)"
expect_eq "--state DIR: removed after the finished job" "" "$(ls -A "$S/st" 2>/dev/null)"
run_mpi 2 walk --fresh --state "$S/st" -o "$S/so" "$T" >/dev/null 2>"$S/np.err"
expect_eq "--fresh under mpirun: exit 0" 0 $?
expect_eq "--fresh: -o FILE holds every path exactly once" "$(find "$T" | sort | md5sum)" "$(sort "$S/so" | md5sum)"

# verify across ranks: the layout's directories are split between the ranks (unit u to rank u mod P).
F=$S/vb/f
mkdir -p "$S/vb"
"$MYRIAD" fill --no-state -n 3000 --fanout 40 --size 1k-6k "$F" >/dev/null 2>&1
cp -a "$F" "$S/clean"
rm "$(find "$F" -type f -name '*7' | head -1)"
truncate -s 10 "$(find "$F" -type f -size +2k | sed -n 5p)"
printf 'X' | dd of="$(find "$F" -type f -size +2k | sed -n 9p)" bs=1 seek=100 conv=notrunc 2>/dev/null
touch "$(find "$F" -mindepth 1 -type d | sed -n 3p)/stray"
vkeys() { for k in checked missing wrong_type wrong_size corrupt extra errors; do json_num "$1" $k; done | tr '\n' ' '; }
"$MYRIAD" verify --no-state --json "$S/v1.json" --errors "$S/ve1.jsonl" "$F" >/dev/null 2>&1
want_vrc=$?
expect_eq "verify, one process: the damage found (exit 1)" 1 $want_vrc
expect_eq "verify, one process: 1 missing, 1 wrong size, 1 corrupt, 1 extra" "1 1 1 1" \
	"$(for k in missing wrong_size corrupt extra; do json_num "$S/v1.json" $k; done | tr '\n' ' ' | sed 's/ $//')"
for P in 1 2 4; do
	run_mpi $P verify --json "$S/v$P.json" --errors "$S/ve$P.jsonl" "$F" >"$S/vsum$P" 2>/dev/null
	expect_eq "verify np $P: exit status as one process" $want_vrc $?
	expect_eq "verify np $P: counts equal one process's" "$(vkeys "$S/v1.json")" "$(vkeys "$S/v$P.json")"
	expect_eq "verify np $P: --errors lines equal one process's" "$(sort "$S/ve1.jsonl" | md5sum)" \
		"$(sort "$S/ve$P.jsonl" | md5sum)"
	expect_eq "verify np $P: one summary (rank 0's), NOT OK" 1 "$(grep -c 'NOT OK' "$S/vsum$P")"
done
run_mpi 4 verify --json "$S/vc.json" "$S/clean" >"$S/vcsum" 2>&1
expect_eq "verify np 4: an intact fill: exit 0" 0 $?
expect_eq "verify np 4: an intact fill: every file checked, OK" "3000 1" \
	"$(json_num "$S/vc.json" checked) $(grep -c '^OK' "$S/vcsum")"
expect_eq "verify np 4: the JSON names 4 ranks" 4 "$(json_num "$S/vc.json" ranks)"
run_mpi 2 verify --json "$S/vn.json" "$S/nofill" >/dev/null 2>"$S/vnerr"
expect_eq "verify np 2: a missing directory: exit 2" 2 $?
grep -q "nofill" "$S/vnerr" && ok "verify np 2: a missing directory is named" || fail "verify np 2: $(cat "$S/vnerr")"
if is_root && [ -e /dev/fuse ]; then
	VM=$S/vm
	if mount_faultfs "$S/vb" "$VM" --rule 'all:*:delay=1'; then
		"$MYRIAD" verify --no-state -j 1 --json "$S/vf1.json" --errors "$S/vfe1.jsonl" "$VM/f" >/dev/null 2>&1
		rm -f "$S/vk.jsonl"
		args=(-j 1 --checkpoint-interval 0.05 --json "$S/vk.json" --errors "$S/vk.jsonl" "$VM/f")
		kill_three_times verify "${args[@]}"
		run_mpi 2 verify "${args[@]}" >/dev/null 2>&1
		expect_eq "verify np 2: kill -9 x$kills: the resumed job exits as one process" $want_vrc $?
		expect_eq "verify np 2: kill -9: counts equal an uninterrupted run's" "$(vkeys "$S/vf1.json")" \
			"$(vkeys "$S/vk.json")"
		expect_eq "verify np 2: kill -9: the --errors file holds each finding once" \
			"$(sort "$S/vfe1.jsonl" | md5sum)" "$(sort "$S/vk.jsonl" | md5sum)"
		expect_eq "verify np 2: kill -9: every killed job was resumed (sessions = kills + 1)" $((kills + 1)) \
			"$(json_num "$S/vk.json" sessions)"
		other_np_refused verify 1 -j 1 "$VM/f"
		run_mpi 2 verify -j 1 --fresh "$VM/f" >/dev/null 2>&1
		expect_eq "verify: --fresh across 2 ranks starts over and ends as one process" $want_vrc $?
	else
		fail "faultfs (verify) did not mount"
	fi
else
	skip "verify kill -9 across ranks: faultfs needs root and /dev/fuse"
fi
expect_eq "verify: no output part left behind" 0 "$(parts_left)"

# fill across ranks: the layout's units are split between the ranks (unit u to rank u mod P).
fkeys() { for k in files created already_there not_made bytes errors; do json_num "$1" $k; done | tr '\n' ' '; }
# last_point JSON: the files count of the timeline's last point.
last_point() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["timeline"][-1][1])' "$1"; }
mkdir -p "$S/fb"
"$MYRIAD" fill --no-state -n 4000 --fanout 30 --size 0-3k --json "$S/f1.json" "$S/fb/one" >/dev/null 2>&1
for P in 2 4; do
	run_mpi $P fill --json "$S/f$P.json" --errors "$S/fe$P" -n 4000 --fanout 30 --size 0-3k "$S/fb/np$P" \
		>"$S/fsum$P" 2>&1
	expect_eq "fill np $P: exit 0" 0 $?
	expect_eq "fill np $P: counts equal one process's" "$(fkeys "$S/f1.json")" "$(fkeys "$S/f$P.json")"
	expect_eq "fill np $P: the tree and its manifest equal one process's" "" \
		"$(diff -r "$S/fb/one" "$S/fb/np$P" 2>&1 | head -n 3)"
	expect_eq "fill np $P: one summary (rank 0's)" 1 "$(grep -c '^fill complete' "$S/fsum$P")"
	expect_eq "fill np $P: the JSON names $P ranks" $P "$(json_num "$S/f$P.json" ranks)"
	expect_eq "fill np $P: the latencies count every rank's files" 4000 \
		"$(grep -o '"create":{"count":[0-9]*' "$S/f$P.json" | grep -o '[0-9]*$')"
	expect_eq "fill np $P: the timeline ends at every file of the job" 4000 "$(last_point "$S/f$P.json")"
done
run_mpi 2 fill -n 4000 --fanout 30 --size 0-3k "$S/fb/np2" >"$S/fagain" 2>&1
expect_eq "fill np 2 on its complete fill: exit 0" 0 $?
grep -q 'already holds this fill, complete' "$S/fagain" && ok "fill np 2 on its complete fill: nothing to do" ||
	fail "fill np 2 again: $(cat "$S/fagain")"
rm -r "$(find "$S/fb/np2" -mindepth 2 -type d -links 2 | sed -n 5p)"
run_mpi 2 fill -n 4000 --fanout 30 --size 0-3k "$S/fb/np2" >"$S/fagain" 2>&1
expect_eq "fill np 2, a leaf removed: exit 0" 0 $?
expect_eq "fill np 2, a leaf removed: made again, the tree equals one process's" "" \
	"$(diff -r "$S/fb/one" "$S/fb/np2" 2>&1 | head -n 3)"
run_mpi 2 fill --until-full -n 100 "$S/fb/full" >/dev/null 2>"$S/ffull"
expect_eq "fill np 2 --until-full: refused (exit 2)" 2 $?
[ ! -e "$S/fb/full" ] && ok "fill np 2 --until-full: refused before any work" || fail "fill --until-full wrote $S/fb/full"
grep -q 'until-full' "$S/ffull" && ok "fill np 2 --until-full: says why" || fail "fill --until-full: $(cat "$S/ffull")"
run_mpi 2 fill -n 100 "$S/fb/np4" >/dev/null 2>"$S/fother"
expect_eq "fill np 2 on a fill with other parameters: exit 2" 2 $?
expect_eq "fill np 2 on another fill: says why, once (rank 0)" 1 "$(grep -c 'other parameters' "$S/fother")"
if is_root && [ -e /dev/fuse ]; then
	mkdir -p "$S/fslow"
	if mount_faultfs "$S/fslow" "$S/fm" --rule 'all:*:delay=1'; then
		fargs=(-j 1 --checkpoint-interval 0.05 --json "$S/fk.json" -n 1500 --fanout 20 --size 0-1k "$S/fm/t")
		kill_three_times fill "${fargs[@]}"
		run_mpi 2 fill "${fargs[@]}" >/dev/null 2>"$S/fk.err"
		expect_eq "fill np 2: kill -9 x$kills: the resumed job exits 0" 0 $?
		expect_eq "fill np 2: kill -9: every file made, each counted once as created (exact)" "1500 1500 0 true" \
			"$(json_num "$S/fk.json" files) $(json_num "$S/fk.json" created) $(json_num "$S/fk.json" already_there) $(grep -o '"counts_exact":[a-z]*' "$S/fk.json" | cut -d: -f2)"
		expect_eq "fill np 2: kill -9: every killed job was resumed (sessions = kills + 1)" $((kills + 1)) \
			"$(json_num "$S/fk.json" sessions)"
		"$MYRIAD" verify --no-state "$S/fslow/t" >/dev/null 2>&1
		expect_eq "fill np 2: kill -9: the tree verifies as one process's" 0 $?
		expect_eq "fill np 2: no state and no rank's tally left" "" "$(ls -A "$S/state/myriad" 2>/dev/null)"
		other_np_refused fill 1.5 -j 1 -n 1500 --fanout 20 "$S/fm/u"
		ls "$S"/state/myriad/*/tally-1 >/dev/null 2>&1 && ok "fill np 2: rank 1 counts in a tally of its own" ||
			fail "fill np 2: no tally-1 in $(ls "$S"/state/myriad/*)"
		run_mpi 2 fill -j 1 --fresh -n 1500 --fanout 20 "$S/fm/u" >/dev/null 2>&1
		expect_eq "fill: --fresh across 2 ranks completes" 0 $?
		expect_eq "fill: --fresh: no rank's tally left" "" "$(ls -A "$S/state/myriad" 2>/dev/null)"
	else
		fail "faultfs (fill) did not mount"
	fi
else
	skip "fill kill -9 across ranks: faultfs needs root and /dev/fuse"
fi
expect_eq "fill: no output part left behind" 0 "$(parts_left)"

# rm across ranks: every rank unlinks its share's files, then rank 0 removes the directories. Only
# inside a scratch mount of its own, the working directory deep inside it.
if is_root; then
	R=$S/rmfs
	mkdir -p "$R"
	mount -t tmpfs -o size=1g tmpfs "$R" && on_exit "umount -l '$R'"
	mkdir -p "$R/cwd/a/b/c"
	cd "$R/cwd/a/b/c" || exit 1
	make_hostile_tree "$R/t0"
	"$MKTREE" "$R/t0/many" --files 6000 --fanout 40
	rkeys() { for k in files directories errors; do json_num "$1" $k; done | tr '\n' ' '; }
	# removed JSON: the entries an rm says it removed, and whether its counts are exact.
	removed() { echo "$(($(json_num "$1" files) + $(json_num "$1" directories))) $(grep -o '"counts_exact":[a-z]*' "$1" | cut -d: -f2)"; }
	gone() { [ -e "$1" ] && echo "left" || echo "gone"; }
	"$MYRIAD" copy --no-state "$R/t0" "$R/one" >/dev/null
	"$MYRIAD" rm --json "$R/r1.json" "$R/one" >/dev/null 2>&1
	want_rrc=$?
	for P in 1 2 4; do
		"$MYRIAD" copy --no-state "$R/t0" "$R/np$P" >/dev/null
		run_mpi $P rm --json "$R/r$P.json" "$R/np$P" >"$R/rsum$P" 2>&1
		expect_eq "rm np $P: exit status as one process ($want_rrc)" $want_rrc $?
		[ ! -e "$R/np$P" ] && ok "rm np $P: the tree is gone" || fail "rm np $P: left $(find "$R/np$P" | head -3)"
		expect_eq "rm np $P: counts equal one process's" "$(rkeys "$R/r1.json")" "$(rkeys "$R/r$P.json")"
		expect_eq "rm np $P: one summary (rank 0's)" 1 "$(grep -c '^rm: ' "$R/rsum$P")"
	done
	expect_eq "rm np 4: the JSON names 4 ranks" 4 "$(json_num "$R/r4.json" ranks)"
	"$MYRIAD" copy --no-state "$R/t0" "$R/dry" >/dev/null
	"$MYRIAD" rm --dry-run --json "$R/d1.json" "$R/dry" >/dev/null 2>&1
	before=$(find "$R/dry" | wc -l)
	run_mpi 2 rm --dry-run --json "$R/d2.json" "$R/dry" >/dev/null 2>&1
	expect_eq "rm np 2 --dry-run: exit 0" 0 $?
	expect_eq "rm np 2 --dry-run: counts equal one process's, nothing removed" \
		"$(rkeys "$R/d1.json")$before" "$(rkeys "$R/d2.json")$(find "$R/dry" | wc -l)"
	# Ranks that see another directory by the operand's name (mpirun starts each in its own working
	# directory here): refused before anything is removed.
	mkdir -p "$R/wa/x/sub" "$R/wb/x/sub"
	touch "$R/wa/x/sub/f" "$R/wb/x/sub/f"
	timeout 120 mpirun --allow-run-as-root --oversubscribe -np 1 --wdir "$R/wa" "$MPI" rm x : \
		-np 1 --wdir "$R/wb" "$MPI" rm x >/dev/null 2>"$R/wdir"
	expect_eq "rm across ranks, another directory by the same name on rank 1: refused (exit 2)" 2 $?
	expect_eq "rm across ranks, another directory by that name: rank 1 says why; both trees stay" "1 2" \
		"$(grep -c "rank 1: refusing to remove 'x'" "$R/wdir") $(find "$R/wa" "$R/wb" -name f | wc -l)"
	run_mpi 2 rm .. >/dev/null 2>"$R/dotdot"
	expect_eq "rm np 2 ..: refused (exit 2)" 2 $?
	expect_eq "rm np 2 ..: said once (rank 0), nothing removed" "1 $R/cwd/a/b/c" \
		"$(grep -c "refusing to remove '..'" "$R/dotdot") $(pwd)"
	mkdir -p "$R/mp/x/mnt" "$R/mp/y"
	touch "$R/mp/y/f"
	mount -t tmpfs -o size=1m tmpfs "$R/mp/x/mnt" && on_exit "umount '$R/mp/x/mnt'"
	touch "$R/mp/x/mnt/inside"
	run_mpi 2 rm "$R/mp" >/dev/null 2>"$R/mperr"
	expect_eq "rm np 2, a mount point inside: exit 1" 1 $?
	expect_eq "rm np 2, a mount point inside: reported once; it, its contents and its parents stay" \
		"1 $R/mp $R/mp/x $R/mp/x/mnt $R/mp/x/mnt/inside" \
		"$(grep -c "mount point: $R/mp/x/mnt" "$R/mperr") $(find "$R/mp" | sort | tr '\n' ' ' | sed 's/ $//')"
	umount "$R/mp/x/mnt"
	if [ -e /dev/fuse ]; then
		"$MKTREE" "$R/fb/t" --files 3000 --fanout 100
		if mount_faultfs "$R/fb" "$R/fm" --rule 'unlink:/t/d5/f55*:EACCES' --rule 'rmdir:/t/d9:EBUSY'; then
			run_mpi 2 rm --errors "$R/ferrs" "$R/fm/t" >/dev/null 2>"$R/ferr"
			expect_eq "rm np 2, unremovable entries: exit 1" 1 $?
			expect_eq "rm np 2, unremovable entries: each reported once (1 unlink, 1 rmdir)" "2 1 1" \
				"$(wc -l <"$R/ferrs") $(grep -c 'd5/f55: unlink: Permission denied' "$R/ferr") $(grep -c 'd9: rmdir' "$R/ferr")"
			expect_eq "rm np 2, unremovable entries: everything else is removed" \
				"$R/fb/t $R/fb/t/d5 $R/fb/t/d5/f55 $R/fb/t/d9" "$(find "$R/fb/t" | sort | tr '\n' ' ' | sed 's/ $//')"
		else
			fail "faultfs (rm) did not mount"
		fi
		if slow_tree "$R" k 'all:*:delay=1'; then
			rargs=(-j 1 --checkpoint-interval 0.05 --json "$R/rk.json" "$R/km/t")
			kill_three_times rm "${rargs[@]}"
			[ -e "$R/kb/t" ] || "$MKTREE" "$R/kb/t" --files 3000 --fanout 30 # the last job completed
			run_mpi 2 rm "${rargs[@]}" >/dev/null 2>"$R/rk.err"
			expect_eq "rm np 2: kill -9 x$kills: the resumed job exits 0, the tree gone" "0 gone" "$? $(gone "$R/kb/t")"
			expect_eq "rm np 2: kill -9: every entry counted once, exactly" "$total true" "$(removed "$R/rk.json")"
			expect_eq "rm np 2: kill -9: every killed job was resumed (sessions = kills + 1)" $((kills + 1)) \
				"$(json_num "$R/rk.json" sessions)"
			expect_eq "rm np 2: no state and no rank's tally left" "" "$(ls -A "$S/state/myriad" 2>/dev/null)"
			"$MKTREE" "$R/kb/u" --files 3000 --fanout 30
			other_np_refused rm 1.5 -j 1 "$R/km/u"
			run_mpi 2 rm -j 1 "$R/km/u" >/dev/null 2>&1
			expect_eq "rm: the same -np then completes" "0 gone" "$? $(gone "$R/kb/u")"
		else
			fail "faultfs (rm kill) did not mount"
		fi
		# Killed in the unlink pass, then resumed: the directories pass's failure (d2 cannot be
		# removed) goes to --errors once (its log is opened afresh, not by the unlink pass's walk).
		if slow_tree "$R" e 'rmdir:/t/d2:EBUSY' 'all:*:delay=1'; then
			eargs=(-j 1 --checkpoint-interval 0.05 --errors "$R/e.jsonl" "$R/em/t")
			kill_jobs "rm np 2 --errors" 2 1 rm "${eargs[@]}"
			run_mpi 2 rm "${eargs[@]}" >/dev/null 2>"$R/e.err"
			expect_eq "rm np 2, resumed: exit 1 (d2 stays)" 1 $?
			expect_eq "rm np 2, resumed: the failure in --errors and on stderr once each; d2 and nothing else stays" \
				"1 1 $R/eb/t $R/eb/t/d2" \
				"$(grep -c '"op":"rmdir"' "$R/e.jsonl") $(grep -c 'd2: rmdir' "$R/e.err") $(find "$R/eb/t" | sort | tr '\n' ' ' | sed 's/ $//')"
		else
			fail "faultfs (rm --errors) did not mount"
		fi
		# Killed while rank 0 removes the directories (rmdir slowed down): resumed from that pass.
		if slow_tree "$R" p 'rmdir:*:delay=40'; then
			pargs=(-j 1 --checkpoint-interval 0.05 --json "$R/p.json" "$R/pm/t")
			run_mpi 2 rm "${pargs[@]}" >/dev/null 2>&1 &
			pp=$!
			for _ in $(seq 300); do [ -z "$(find "$R/pb/t" -type f | head -n 1)" ] && break; sleep 0.05; done
			sleep 0.7
			kill -9 "$(pgrep -f "^$MPI rm" | head -n 1)" 2>/dev/null
			wait $pp
			expect_eq "rm np 2: killed in the directories pass (its snapshot is rank 0's walk)" MYRRMPH2 \
				"$(head -c 8 "$S"/state/myriad/*/snapshot 2>/dev/null)"
			run_mpi 4 rm "${pargs[@]}" >/dev/null 2>"$R/pnp"
			expect_eq "rm: in the directories pass, a resume with another -np is refused (exit 2)" 2 $?
			grep -q 'mpirun -np 2' "$R/pnp" && ok "rm: that refusal names -np 2" || fail "rm -np: $(cat "$R/pnp")"
			run_mpi 2 rm "${pargs[@]}" >/dev/null 2>&1
			expect_eq "rm np 2: resumed in the directories pass: exit 0, the tree gone" "0 gone" "$? $(gone "$R/pb/t")"
			expect_eq "rm np 2: resumed in the directories pass: every entry counted once; 2 sessions" \
				"$total true 2" "$(removed "$R/p.json") $(json_num "$R/p.json" sessions)"
		else
			fail "faultfs (rm directories pass) did not mount"
		fi
	else
		skip "rm faultfs cases across ranks: no /dev/fuse"
	fi
	cd "$S" || exit 1
else
	skip "rm across ranks: a scratch mount of its own needs root"
fi

# Other commands across ranks: refused before any work.
mkdir -p "$S/fsrc"
run_mpi 2 find "$S/fsrc" -fprint "$S/fout" >/dev/null 2>"$S/ferr"
expect_eq "find across 2 ranks: exit 2" 2 $?
[ ! -e "$S/fout" ] && ok "find across 2 ranks: refused before any work" || fail "find across ranks wrote $S/fout"
