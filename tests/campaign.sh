#!/usr/bin/env bash
# campaign: kill -9 campaigns for fill, verify, walk, copy and rm (issue 7: "myriad loses nothing
# under faults").
#
# For each command: an uninterrupted reference run (its duration picks the kill moments), then
# one job run again and again on the same state, each session killed with SIGKILL — right at
# start, a few ms in, at random moments spread over the reference duration, once its work is
# visibly done (output complete, tree gone...), once it has finished its work but not yet removed
# its state (its --json is a FIFO it blocks on), and once its JSON summary is written (while it
# removes its state, or just after: then the job had finished, and the campaign ends there, since
# running the command again would start a new job) — and finally run to the end. Each session
# gets a random --checkpoint-interval and -j (neither is part of a job's identity). The end state
# must be exactly right:
#   fill    verify exits 0, exactly N files, and the JSON counts N
#   verify  on a damaged tree (files deleted, truncated, corrupted, replaced by a directory, a
#           leaf directory gone, extra files and a directory added): the --errors report (as a
#           set of lines) and the JSON counts equal an uninterrupted verify's
#   walk    totals and the sorted --output equal an uninterrupted walk's, and find's
#   copy    (hard links, symlinks, a sparse file, xattrs, ACLs, modes, owners, odd names, a path
#           longer than PATH_MAX) copy --check exits 0, rsync -naHAXc --delete lists nothing,
#           and tree_digest (path, type, mode, owner, size, links, mtime, target, content,
#           xattrs) is equal
#   rm      the tree is gone, a sibling directory it had symlinks to is untouched
# and no state is left behind. During each campaign a second identical run, started while one
# is live (frozen with SIGSTOP so it cannot finish first), must be refused (exit 2, "in use")
# without touching the first's state; the first then carries on.
#
# Usage: tests/campaign.sh [OPTIONS]
#   --files N      size knob: files per tree (default 20000)
#   --kills K      kills per command (default 20)
#   --cmd CMD      fill, verify, walk, copy, rm or all (default all; also a comma list)
#   --dir D        scratch location (default /var/tmp; /dev/shm for tmpfs)
#   --fs FS        run on a loop-mounted FS image (ext4, xfs, btrfs) made in D
#   --seed S       seed for the kill moments and session options (default: random, printed)
#   --keep         keep the scratch directory and its logs (to look at a failure; with --fs the
#                  image stays mounted: umount it, then remove the directory and the image)
# Prints one PASS/FAIL line per check (the test suite's format) and a summary; exits 1 when a
# check failed. Run it nice'd: nice -n 19 ionice -c3 tests/campaign.sh --files 300000
set -u
FILES=20000 KILLS=20 CMDS=all DIR=/var/tmp FS= SEED= KEEP=no
while [ $# -gt 0 ]; do
	case $1 in
	--files) FILES=$2; shift ;;
	--kills) KILLS=$2; shift ;;
	--cmd) CMDS=$2; shift ;;
	--dir) DIR=$2; shift ;;
	--fs) FS=$2; shift ;;
	--seed) SEED=$2; shift ;;
	--keep) KEEP=yes ;;
	-h | --help) sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "campaign: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done
case $FILES$KILLS in *[!0-9]*) echo "campaign: --files and --kills take numbers" >&2; exit 2 ;; esac
[ "$CMDS" = all ] && CMDS=fill,verify,walk,copy,rm
for c in ${CMDS//,/ }; do
	case $c in fill | verify | walk | copy | rm) ;; *) echo "campaign: unknown command $c" >&2; exit 2 ;; esac
done
[ -d "$DIR" ] || { echo "campaign: $DIR is not a directory" >&2; exit 2; }
[ -n "$SEED" ] || SEED=$(( $(date +%s%N) % 1000000007 ))
RANDOM=$SEED

export TMPDIR=$DIR
. "$(dirname "$0")/lib.sh"
[ -x "$MYRIAD" ] || { echo "campaign: $MYRIAD missing: run make first" >&2; exit 2; }
W=$(scratch)
[ $KEEP = yes ] && _cleanups=() && echo "campaign: keeping $W"
if [ -n "$FS" ]; then
	# Room for three trees of N small files (4 KiB blocks) and their inodes, as a sparse image.
	img=$((FILES * 64 / 1024 + 1024))
	mount_image "$FS" "${img}M" "$W/mnt" || { skip "cannot mount a $FS image here"; exit 0; }
	W=$W/mnt
fi
export XDG_STATE_HOME=$W/state
mkdir -p "$W/log"
cd "$W" || exit 2 # operands are relative, as a user types them: the state must find them again
echo "campaign: seed $SEED, $FILES files, $KILLS kills, commands $CMDS, in $(df --output=fstype . | tail -1) at $W"

npass=0 nfail=0 total_kills=0 total_resumes=0
pass() { ok "$@"; npass=$((npass + 1)); }
flunk() { fail "$@"; nfail=$((nfail + 1)); }
same() { if [ "$2" = "$3" ]; then pass "$1"; else flunk "$1: want [$2], got [$3]"; fi; }
SUMMARY=()

now_ms() { echo $(($(date +%s%N) / 1000000)); }
secs() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }
# rnd N: a random number in [0, N) in R (no subshell: RANDOM must advance in this shell).
rnd() { R=$((((RANDOM << 15) | RANDOM) % $1)); }
# alive PID: is it running (not exited, not a zombie)?
alive() { local s; read -r _ _ s _ <"/proc/$1/stat" 2>/dev/null && [ "$s" != Z ]; }
# poll PID COND...: until COND holds or PID ends (or 20 minutes). 0 when COND held.
poll() {
	local pid=$1 end=$((SECONDS + 1200))
	shift
	while alive "$pid" && [ $SECONDS -lt $end ]; do "$@" && return 0; done
	return 1
}
# lock_held_by PID: does PID hold a lock in this campaign's state directories?
lock_held_by() {
	local f p
	for f in "$XDG_STATE_HOME"/myriad/*/lock; do
		[ -e "$f" ] && read -r p <"$f" 2>/dev/null && [ "$p" = "$1" ] && return 0
	done
	return 1
}
# blocked_on_fifo PID: is PID's main thread waiting for a FIFO's reader?
blocked_on_fifo() {
	local w=
	read -r w <"/proc/$1/wchan" 2>/dev/null
	[ "$w" = wait_for_partner ]
}
done_or_blocked() { blocked_on_fifo "$1" || "$2"; }
state_of() { ls -d "$XDG_STATE_HOME"/myriad/"$1"-* 2>/dev/null; }

# campaign NAME REF_MS DONE_COND JSON EXPECT_RC CMD...: the kill -9 campaign of one job. Sessions
# are CMD with random session options; the last session runs to the end. Sets C_RC (the exit
# status of the run that finished), C_KILLS, C_SESSIONS, C_RESUMES, C_MS.
campaign() {
	local name=$1 ref=$2 done_cond=$3 json=$4 want_rc=$5
	shift 5
	local cmd=("$@") kinds=() i kind rc pid t0 refusal=pending
	local -a sopts
	if [ "$KILLS" -ge 6 ]; then
		kinds=(start early)
		for ((i = 6; i < KILLS; i++)); do kinds+=(random); done
		kinds+=(done ending json)
	elif [ "$KILLS" -ge 4 ]; then
		kinds=(start early)
		for ((i = 4; i < KILLS; i++)); do kinds+=(random); done
		kinds+=(ending json)
	else
		for ((i = 0; i < KILLS; i++)); do kinds+=(random); done
	fi
	kinds+=(final)
	# The random moments: sorted uniform points in the first 60% of the reference duration; each
	# random session is killed after the gap to the next one. A resumed session redoes a little
	# and starts up first, so they rarely finish the job (a warm cache can be faster than the
	# reference): the last kills hit its end.
	local nrand=0 points=() gaps=() prev=0 p
	for kind in "${kinds[@]}"; do [ $kind = random ] && nrand=$((nrand + 1)); done
	for ((i = 0; i < nrand; i++)); do
		rnd $((ref * 6 / 10 + 1))
		points+=($R)
	done
	for p in $(printf '%s\n' "${points[@]}" | sort -n); do
		gaps+=($((p - prev)))
		prev=$p
	done
	C_KILLS=0 C_SESSIONS=0 C_RESUMES=0 C_RC=
	t0=$(now_ms)
	for kind in "${kinds[@]}"; do
		local ckpts=(0.01 0.03 0.1 0.3 1 5) threads=(1 2 4 16)
		rnd ${#ckpts[@]}
		sopts=(--checkpoint-interval "${ckpts[R]}")
		rnd 5
		[ $R -lt 4 ] && sopts+=(-j "${threads[R]}")
		[ $kind = final ] && sopts=()
		local run=("${cmd[@]:0:2}" "${sopts[@]}" "${cmd[@]:2}")
		local sd snap=no
		for sd in $(state_of "$name"); do [ -e "$sd/snapshot" ] && snap=yes; done
		[ $snap = yes ] && C_RESUMES=$((C_RESUMES + 1))
		C_SESSIONS=$((C_SESSIONS + 1))
		local log=$W/log/$name.$C_SESSIONS
		echo "${run[*]} # $kind" >"$log.cmd"
		rm -f "$json"
		# ending: the JSON summary is a FIFO, so the run blocks right after its work is done and
		# before it removes its state; it is killed there. (done too: should its condition come
		# too late to see, it is killed there instead of finishing the job.)
		[ $kind = ending ] || [ $kind = done ] && mkfifo "$json"
		"${run[@]}" >"$log.out" 2>"$log.err" &
		pid=$!
		if [ $refusal = pending ] && [ $kind != start ] && [ $kind != early ] && [ $kind != final ] &&
			poll $pid lock_held_by $pid; then
			second_run "$name" $pid "${run[@]}"
			refusal=done
		fi
		case $kind in
		start) ;;
		early) rnd 30; sleep "$(secs $((R + 1)))" ;;
		random)
			sleep "$(secs "${gaps[0]}")"
			gaps=("${gaps[@]:1}")
			;;
		done) poll $pid done_or_blocked $pid "$done_cond" ;;
		ending) poll $pid blocked_on_fifo $pid ;;
		json) poll $pid test -s "$json" ;;
		final) ;;
		esac
		[ $kind != final ] && kill -9 $pid 2>/dev/null
		wait $pid 2>/dev/null
		rc=$?
		if [ $rc = 137 ] && [ $kind != final ]; then
			C_KILLS=$((C_KILLS + 1))
			if [ -z "$(state_of "$name")" ] && [ -f "$json" ] && [ -s "$json" ]; then
				# The kill came after the job had written its summary and removed its state:
				# it had finished, and running the command again would start a new job.
				C_RC=after-end
				break
			fi
			continue
		fi
		C_RC=$rc
		if [ "$rc" != "$want_rc" ]; then
			flunk "$name: session $C_SESSIONS ($kind) exited $rc, not $want_rc: $(tail -c 400 "$log.err" | tr '\n' ' ')"
			[ $rc = 0 ] || [ $rc = 1 ] || continue
		fi
		break # it ran to the end (a kill that came too late counts as no kill)
	done
	C_MS=$(($(now_ms) - t0))
	[ $refusal = done ] || flunk "$name: no session lived long enough to test a second run's refusal"
	[ -n "$C_RC" ] || flunk "$name: never ran to the end"
	same "$name: no state is left behind" "" "$(state_of "$name")"
	total_kills=$((total_kills + C_KILLS))
	total_resumes=$((total_resumes + C_RESUMES))
	echo "campaign: $name: $C_KILLS kills over $C_SESSIONS sessions ($C_RESUMES resumed from a snapshot), $(secs $C_MS) s; reference run $(secs "$ref") s"
}

# second_run NAME PID CMD...: with PID (holding the job's lock) frozen, the same command must be
# refused and leave the state as it was; PID then carries on.
second_run() {
	local name=$1 pid=$2
	shift 2
	kill -STOP $pid
	local before after rc
	before=$(cd "$XDG_STATE_HOME/myriad" && ls -lR --time-style=+%s.%N 2>&1)
	timeout 60 "$@" >"$W/log/$name.second.out" 2>"$W/log/$name.second.err"
	rc=$?
	after=$(cd "$XDG_STATE_HOME/myriad" && ls -lR --time-style=+%s.%N 2>&1)
	same "$name: a second identical run while one is live: exit 2" 2 $rc
	grep -q "in use" "$W/log/$name.second.err" && pass "$name: ... it says the state is in use" ||
		flunk "$name: second run's message: $(cat "$W/log/$name.second.err")"
	same "$name: ... and leaves the live run's state as it was" "$before" "$after"
	lock_held_by $pid && pass "$name: ... the live run still holds the lock" || flunk "$name: the lock moved"
	kill -CONT $pid
}

# ended NAME WANT: the job's last run exited WANT, or had finished when the last kill came.
ended() {
	if [ "$C_RC" = after-end ]; then
		pass "$1: the job finished (the last kill came after it had removed its state)"
	else
		same "$1: the run ends with exit $2" "$2" "$C_RC"
	fi
}

# timed CMD...: run it, set T_MS to its duration and T_RC to its exit status.
timed() {
	local t0
	t0=$(now_ms)
	"$@" >"$W/log/ref.out" 2>"$W/log/ref.err"
	T_RC=$?
	T_MS=$(($(now_ms) - t0))
}

tally() { SUMMARY+=("$1: $2, $(printf '%3d' "$C_KILLS") kills, $(printf '%3d' "$C_RESUMES") resumes, $C_SESSIONS sessions, campaign $(secs $C_MS) s, reference $(secs "$3") s"); }
result_of() { local f0=$1; [ $nfail -eq "$f0" ] && echo PASS || echo FAIL; }

FANOUT=100
FILL=(fill -n "$FILES" -s 0-2k --fanout $FANOUT --seed 11)

# A fill tree for verify, walk and copy: the fill campaign's, or made here.
need_fill_tree() {
	[ -d fill ] || "$MYRIAD" "${FILL[@]}" --no-state fill >/dev/null 2>"$W/log/mkfill.err" ||
		{ echo "campaign: making the fill tree failed: $(cat "$W/log/mkfill.err")" >&2; exit 1; }
}

do_fill() {
	local f0=$nfail
	timed "$MYRIAD" "${FILL[@]}" --no-state ref-fill
	same "fill: reference run exits 0" 0 $T_RC
	local ref=$T_MS
	"$MYRIAD" rm --no-state ref-fill >/dev/null 2>&1
	fill_done() { grep -qs '^status complete' fill/.myriad-fill; }
	campaign fill $ref fill_done fill.json 0 "$MYRIAD" "${FILL[@]}" --json fill.json fill
	ended fill 0
	"$MYRIAD" verify --no-state fill >"$W/log/fill.verify" 2>&1
	same "fill: verify passes on the result" 0 $?
	same "fill: exactly N files" "$FILES" "$(find fill -type f -name 'f*' | wc -l)"
	same "fill: nothing but the layout's files, directories and the manifest" "" \
		"$(find fill -mindepth 1 ! -type d ! -name 'f*' ! -name .myriad-fill)"
	same "fill: the JSON counts N files" "$FILES" "$(json_num fill.json files)"
	tally fill "$(result_of $f0)" $ref
}

# damage DIR: files deleted, truncated, corrupted, one replaced by a directory, a leaf directory
# removed, extra files and an extra directory. Picks by sorted position: the same on every run.
damage() {
	local d=$1 list i f
	mapfile -t list < <(find "$d" -type f -name 'f*' -size +16c | sort)
	local n=${#list[@]}
	for i in 1 3 7; do rm "${list[$((n * i / 11))]}"; done
	for i in 2 5; do truncate -s 9 "${list[$((n * i / 11))]}"; done
	for i in 4 8; do
		f=${list[$((n * i / 11))]}
		# Complement byte 12: certainly different from what fill wrote.
		local b
		b=$(od -An -tu1 -j12 -N1 "$f" | tr -d ' ')
		printf "\\$(printf '%03o' $((255 - b)))" | dd of="$f" bs=1 seek=12 conv=notrunc status=none
	done
	f=${list[$((n * 6 / 11))]}
	rm "$f" && mkdir "$f"
	f=${list[$((n * 9 / 11))]}
	rm -r "$(dirname "$f")"
	f=${list[$((n * 10 / 11))]}
	touch "$(dirname "$f")/stranger" "$d/stranger-at-top"
	mkdir "$(dirname "${list[0]}")/extra-dir" && touch "$(dirname "${list[0]}")/extra-dir/inside"
}

do_verify() {
	local f0=$nfail
	need_fill_tree
	damage fill
	timed "$MYRIAD" verify --no-state --errors ref-verify.errs --json ref-verify.json fill
	same "verify: reference run on the damaged tree exits 1" 1 $T_RC
	local ref=$T_MS nref
	nref=$(wc -l <ref-verify.errs)
	[ "$nref" -gt 100 ] && pass "verify: the damage makes $nref findings" || flunk "verify: only $nref findings"
	verify_done() { [ "$(wc -l <verify.errs)" -ge "$nref" ]; } 2>/dev/null
	campaign verify $ref verify_done verify.json 1 "$MYRIAD" verify --errors verify.errs --json verify.json fill
	ended verify 1
	same "verify: the report equals an uninterrupted verify's (as a set of lines)" \
		"$(sort ref-verify.errs | md5sum)" "$(sort verify.errs | md5sum)"
	same "verify: each finding is reported once" "$nref" "$(wc -l <verify.errs)"
	local k want= got=
	for k in expected checked bytes_read missing wrong_type wrong_size corrupt extra errors; do
		want="$want $k=$(json_num ref-verify.json $k)"
		got="$got $k=$(json_num verify.json $k)"
	done
	same "verify: the JSON counts equal an uninterrupted verify's" "$want" "$got"
	tally verify "$(result_of $f0)" $ref
}

do_walk() {
	local f0=$nfail
	mkdir -p walk
	if [ -d fill ]; then mv fill walk/fill; else "$MKTREE" walk/m --files "$FILES" --fanout $FANOUT; fi
	"$MKTREE" walk/flat --flat --files $((FILES / 10 + 1))
	make_hostile_tree walk/h
	timed "$MYRIAD" walk --no-state --stat --json ref-walk.json -o ref-walk.out --print0 walk
	same "walk: reference run exits 0" 0 $T_RC
	local ref=$T_MS refsize
	refsize=$(stat -c %s ref-walk.out)
	same "walk: the reference output is what find lists" "$(find walk -print0 | sort -z | md5sum)" \
		"$(sort -z ref-walk.out | md5sum)"
	walk_done() { [ "$(stat -c %s walk.out 2>/dev/null || echo 0)" -ge "$refsize" ]; }
	campaign walk $ref walk_done walk.json 0 "$MYRIAD" walk --stat --json walk.json -o walk.out --print0 walk
	ended walk 0
	same "walk: totals equal an uninterrupted walk's" \
		"$(walk_counts ref-walk.json) $(json_num ref-walk.json apparent_bytes) $(json_num ref-walk.json allocated_bytes)" \
		"$(walk_counts walk.json) $(json_num walk.json apparent_bytes) $(json_num walk.json allocated_bytes)"
	same "walk: --output, sorted, equals an uninterrupted walk's (each path exactly once)" \
		"$(sort -z ref-walk.out | md5sum)" "$(sort -z walk.out | md5sum)"
	tally walk "$(result_of $f0)" $ref
}

# The copy source: the walk tree (or a new one) with hard links within and across directories,
# symlinks, a sparse file, xattrs, ACLs, modes, owners and old times.
make_src() {
	local s=src i f list
	mkdir -p $s
	if [ -d walk ]; then mv walk $s/t; else
		"$MKTREE" $s/t --files "$FILES" --fanout $FANOUT --size 1500
		make_hostile_tree $s/h
	fi
	truncate -s 64M $s/sparse
	printf 'middle' | dd of=$s/sparse bs=1 seek=33554432 conv=notrunc status=none
	mapfile -t list < <(find $s/t -type f -name 'f*' | sort)
	local n=${#list[@]} links=$((FILES / 2000 + 20))
	mkdir -p $s/links
	for ((i = 0; i < links; i++)); do
		f=${list[$((n * i / links))]}
		ln "$f" "$s/links/l$i"
		ln "$f" "$(dirname "${list[$((n - 1 - n * i / links))]}")/x$i" 2>/dev/null # across directories
	done
	ln "${list[0]}" "$s/links/third"
	ln -s ../sparse $s/links/rel
	ln -s "$W/nowhere" $s/links/dangling
	for ((i = 0; i < 20; i++)); do setfattr -n user.k$i -v "v$i" "${list[$((n * i / 20))]}" 2>/dev/null; done
	setfattr -n user.dir -v yes $s/links 2>/dev/null
	setfacl -m u:nobody:r "${list[1]}" 2>/dev/null
	setfacl -d -m g:nogroup:rx $s/links 2>/dev/null
	chmod 0751 "$(dirname "${list[2]}")"
	chmod 4755 "${list[3]}"
	chmod 0400 "${list[4]}"
	is_root && chown 123:456 "${list[5]}" "$(dirname "${list[6]}")"
	touch -h -d '2001-02-03 04:05:06.123456789' "${list[7]}" "$(dirname "${list[8]}")" $s/links/rel $s
}

do_copy() {
	local f0=$nfail
	make_src
	timed "$MYRIAD" copy --no-state src ref-copy
	same "copy: reference run exits 0" 0 $T_RC
	local ref=$T_MS srct
	same_tree src ref-copy && pass "copy: the reference copy equals its source" || flunk "copy: the reference copy differs"
	timed "$MYRIAD" rm --no-state ref-copy # rm's reference, when rm runs after copy
	RM_REF=$T_MS
	srct=$(stat -c %y src)
	copy_done() { [ "$(stat -c %y dst 2>/dev/null)" = "$srct" ]; }
	campaign copy $ref copy_done copy.json 0 "$MYRIAD" copy --json copy.json src dst
	ended copy 0
	"$MYRIAD" copy --check src dst >"$W/log/copy.check" 2>&1
	same "copy: copy --check exits 0" 0 $?
	same "copy: rsync -naHAXc --delete lists nothing" "" "$(rsync_diff src dst)"
	same "copy: tree_digest equal (paths, types, modes, owners, sizes, links, mtimes, targets, data, xattrs)" \
		"$(tree_digest src)" "$(tree_digest dst)"
	same "copy: the sparse file stays sparse" yes "$([ "$(stat -c %b dst/sparse)" -lt 1024 ] && echo yes || echo no)"
	tally copy "$(result_of $f0)" $ref
}

do_rm() {
	local f0=$nfail ref
	if [ ! -d dst ]; then
		"$MKTREE" dst/t --files "$FILES" --fanout $FANOUT --size 100
		make_hostile_tree dst/h
		"$MKTREE" ref-rm/t --files "$FILES" --fanout $FANOUT --size 100
		make_hostile_tree ref-rm/h
		timed "$MYRIAD" rm --no-state ref-rm
		same "rm: reference run exits 0" 0 $T_RC
		RM_REF=$T_MS
	fi
	ref=$RM_REF
	mkdir -p sibling/d
	echo keep >sibling/d/file
	ln -s ../sibling dst/to-sibling
	ln -s "$W/sibling/d/file" dst/to-sibling-file
	local sib
	sib=$(tree_digest sibling)
	[ -d src ] && sib="$sib $(tree_digest src)"
	rm_done() { [ ! -e dst ]; }
	campaign rm "$ref" rm_done rm.json 0 "$MYRIAD" rm --json rm.json dst
	ended rm 0
	same "rm: the tree is gone" no "$([ -e dst ] && echo yes || echo no)"
	local now
	now=$(tree_digest sibling)
	[ -d src ] && now="$now $(tree_digest src)"
	same "rm: nothing outside it is touched (a sibling it linked to, the copy's source)" "$sib" "$now"
	tally rm "$(result_of $f0)" "$ref"
}

# The shell's own notes about killed jobs ("Killed ...") go to a log, not between the results.
exec 3>&2 2>>"$W/log/shell.err"
T_ALL=$(now_ms)
for c in fill verify walk copy rm; do
	case ",$CMDS," in *",$c,"*) "do_$c" ;; esac
done
echo
echo "campaign summary (seed $SEED, $FILES files, $KILLS kills per command, $(df --output=fstype . | tail -1)):"
for s in "${SUMMARY[@]}"; do echo "  $s"; done
echo "  checks: $npass passed, $nfail failed; kills delivered: $total_kills; resumes from a snapshot: $total_resumes; $(secs $(($(now_ms) - T_ALL))) s"
[ $nfail -eq 0 ]
