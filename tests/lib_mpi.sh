# Shared by the tests of myriad-mpi (tests/cli/mpi*.sh), sourced after lib.sh: skips the script when
# OpenMPI is not installed, builds build/myriad-mpi (make mpi), makes the scratch directory $S with
# the state and temporary files in it, and gives the helpers below for jobs under mpirun.
if ! command -v mpirun >/dev/null || ! command -v mpicc >/dev/null; then
	skip "mpirun or mpicc not installed (apt-get install openmpi-bin libopenmpi-dev)"
	exit 0
fi
if ! make -s -j1 -C "$TOP" mpi >/dev/null; then
	fail "make mpi failed"
	exit 0
fi
MPI=$TOP/build/myriad-mpi
S=$(scratch)
export XDG_STATE_HOME=$S/state TMPDIR=$S/tmp
mkdir -p "$TMPDIR"
# mpirun NP ARGS...: myriad-mpi under mpirun (as root too; more ranks than CPUs).
run_mpi() {
	local np=$1
	shift
	timeout 300 mpirun --allow-run-as-root --oversubscribe -np "$np" "$MPI" "$@"
}
# nonzero_ranks JSON: how many ranks counted entries.
nonzero_ranks() { grep -o '"rank_entries":\[[0-9,]*\]' "$1" | grep -o '[0-9][0-9]*' | grep -vc '^0$'; }
parts_left() { find "$S" -xdev -name '.myriad-part*' | wc -l; }
# kill_rank_after_checkpoint NP ARGS...: as kill9_after_checkpoint, for a job: one rank is killed
# (mpirun then ends the job), or with KILL_ALL=1 every rank at once (the whole job: a node lost, a
# scheduler's kill). Status 0 when the job was killed, 2 when it had already completed (its state
# removed: the next run starts afresh), 1 when no rank was found.
kill_rank_after_checkpoint() {
	local np=$1 pid mark victim
	shift
	mark=$(mktemp "$S/k.mark.XXXXXX")
	run_mpi "$np" "$@" >/dev/null 2>&1 &
	pid=$!
	wait_for_glob "$S/state/myriad/*/snapshot" 20 "$mark" || fail "np $np: no checkpoint within 20 s"
	rm -f "$mark"
	sleep "0.$((RANDOM % 5 + 1))"
	if [ "${KILL_ALL:-0}" = 1 ]; then
		victim=$(pgrep -f "^$MPI $1" | tr '\n' ' ') # every rank in one kill(1), not mpirun
	else
		victim=$(pgrep -f "^$MPI $1" | shuf -n 1) # a rank, not mpirun
	fi
	[ -n "$victim" ] && kill -9 $victim 2>/dev/null
	wait $pid 2>/dev/null
	[ -n "$(ls "$S/state/myriad")" ] || return 2 # completed: its state is gone
	[ -n "$victim" ]
}
# kill_jobs LABEL NP N ARGS...: N jobs of NP ranks (myriad-mpi ARGS), each killed after a
# checkpoint (kill_rank_after_checkpoint): the 1st, 3rd, ... by one rank, the 2nd, 4th, ... by every
# rank at once. kills: how many since the last job that completed (which removed the state: the
# next run starts afresh). Fails only when no job at all was killed (a job may complete before its
# kill on a busy machine).
kill_jobs() {
	local label=$1 np=$2 n=$3 killed=0 i rc
	shift 3
	kills=0
	for i in $(seq "$n"); do
		KILL_ALL=$((1 - i % 2)) kill_rank_after_checkpoint "$np" "$@"
		rc=$?
		count_kill $rc
		[ $rc = 0 ] && killed=$((killed + 1))
	done
	[ $killed -gt 0 ] && ok "$label: $killed jobs killed mid-run" || fail "$label: no job was killed"
}
# kill_three_times CMD ARGS...: kill_jobs with three jobs of 2 ranks.
kill_three_times() { kill_jobs "$1 np 2" 2 3 "$@"; }

# other_np_refused CMD WAIT ARGS...: a job of 2 ranks (CMD ARGS, checkpointing every 0.05 s) with a
# rank killed after its first checkpoint, then the same command with 4 ranks: refused (exit 2),
# naming -np 2. A job that completes before its kill (a loaded machine: a fixed WAIT let it) leaves
# no state to refuse, and is run again, up to five times. (WAIT is kept for the callers.)
other_np_refused() {
	local cmd=$1 try rc=2
	shift 2
	for try in 1 2 3 4 5; do
		KILL_ALL=0 kill_rank_after_checkpoint 2 "$cmd" --checkpoint-interval 0.05 "$@"
		rc=$?
		[ $rc = 2 ] || break
	done
	if [ $rc != 0 ]; then
		skip "$cmd: a resume with another -np: the job completed before its kill five times"
		return
	fi
	run_mpi 4 "$cmd" "$@" >/dev/null 2>"$S/np.refused"
	expect_eq "$cmd: a resume with another -np is refused (exit 2)" 2 $?
	grep -q 'mpirun -np 2' "$S/np.refused" && ok "$cmd: the refusal names -np 2" ||
		fail "$cmd -np: $(cat "$S/np.refused")"
}

# slow_tree BASE X RULE...: 3,000 files in BASE/Xb/t behind faultfs at BASE/Xm with the RULEs (the
# first that fires decides); total: its entries.
slow_tree() {
	local base=$1 x=$2 r=()
	shift 2
	"$MKTREE" "$base/${x}b/t" --files 3000 --fanout 30
	total=$(($(find "$base/${x}b/t" | wc -l)))
	for rule; do r+=(--rule "$rule"); done
	mount_faultfs "$base/${x}b" "$base/${x}m" "${r[@]}"
}
