# shellcheck shell=bash
# Shared helpers for myriad's benchmark scripts (bench/*.sh). Source it from a bash script:
#
#   . "$(dirname "$0")/lib.sh"
#
# What it gives:
#   need_pkgs PKG...            install the Debian packages that are missing (apt-get update once)
#   bench_image FS SIZE MNT [MKFS-OPTION...]
#                               sparse image in /var/tmp, mkfs, loop-mount on MNT; torn down at exit
#   bench_on_exit CMD           run CMD (a shell string) at exit, last registered first
#   drop_caches                 sync and drop the page/dentry/inode caches
#   measure LABEL CMD...        run CMD once (stdout to /dev/null), record wall seconds + peak RSS
#   alternate [-w] RUNS PREP -- LABEL CMD... -- LABEL CMD...
#                               RUNS rounds; each round runs every command once, in rotation,
#                               with PREP (a shell string, e.g. drop_caches or :) before each
#   report_medians [LABEL...]   table: label, runs, median s, min, max, median peak RSS KiB
#   ratio A B                   "A is X.XXx faster than B" with X = median(B)/median(A); sets RATIO
#   median_of LABEL / rss_median_of LABEL / max_rss_of LABEL   print one number
#   bar_check NAME VALUE OP LIMIT [LABEL...]
#                               record a bar (OP is >= <= < >) for bench_summary; INVALID when a
#                               LABEL had non-zero exits
#   bench_summary               print every recorded bar with its value and PASS/MISS
#   human N                     a count for labels: 100000 -> 100k, 2000000 -> 2M
#   section NAME TITLE          a section's header
#   versus LIMIT A B...         ratio A against each B, each a bar "ratio >= LIMIT"
#
# Benchmarks are about ratios of medians between tools timed in alternation on the same tree, so
# that noise (other load, cache state, CPU frequency) hits every tool alike.
#
# Sourcing it sets EXIT/INT/TERM/HUP traps: register cleanups with bench_on_exit rather than with
# a trap of your own (which would replace them).
#
# Environment: BENCH_QUIET=1 hides the per-run progress lines (they go to stderr).
#              BENCH_KEEP=1 keeps images (prints their paths) instead of deleting them at exit.

export LC_ALL=C # EPOCHREALTIME, printf and awk all use '.' as the decimal point
BENCH_TOP=${BENCH_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BENCH_QUIET=${BENCH_QUIET:-0}
BENCH_KEEP=${BENCH_KEEP:-0}

bench_log() { echo "bench: $*" >&2; }
bench_die() { echo "bench: error: $*" >&2; exit 1; }

# ---------------------------------------------------------------------------------------------
# Cleanup: a stack of shell strings run by the EXIT trap. INT/TERM/HUP become an exit so that the
# EXIT trap runs on Ctrl-C too.
_bench_cleanups=() _bench_kept=()
bench_on_exit() { _bench_cleanups+=("$*"); }
_bench_run_cleanups() {
	local rc=$? i
	trap - EXIT INT TERM HUP
	for ((i = ${#_bench_cleanups[@]} - 1; i >= 0; i--)); do
		eval "${_bench_cleanups[$i]}" >/dev/null 2>&1 || true
	done
	_bench_cleanups=()
	for i in "${_bench_kept[@]}"; do echo "bench: kept image $i" >&2; done
	[ -z "${_bench_tmp-}" ] || rm -rf "$_bench_tmp" 2>/dev/null || true
	exit "$rc"
}
trap _bench_run_cleanups EXIT
trap 'echo "bench: interrupted" >&2; exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

_bench_tmp=$(mktemp -d "${TMPDIR:-/tmp}/myriad-bench.XXXXXX")

# ---------------------------------------------------------------------------------------------
# need_pkgs PKG...: install, with apt-get, those of the named Debian packages that are not installed.
# Runs `apt-get update` once per script, and only when something is missing.
_bench_apt_updated=0
need_pkgs() {
	local p missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	[ "$(id -u)" = 0 ] || bench_die "missing packages (${missing[*]}) and not root to install them"
	bench_log "installing ${missing[*]}"
	if [ "$_bench_apt_updated" = 0 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || bench_die "apt-get update failed"
		_bench_apt_updated=1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
		bench_die "apt-get install ${missing[*]} failed"
}

# ---------------------------------------------------------------------------------------------
# bench_image FS SIZE MNT [MKFS-OPTION...]: make a sparse image of SIZE (truncate syntax: 8G) in
# /var/tmp, mkfs it as FS (ext4, xfs or btrfs; extra options go to mkfs), attach it to a loop
# device (direct I/O when the kernel allows it, so cold-cache runs read the disk rather than a
# second copy in the host page cache) and mount it on MNT with BENCH_MOUNT_OPTS (default noatime,
# so walks do not dirty directory inodes). Unmount, detach and delete are registered for exit.
# Sets BENCH_IMAGE (the image file) and BENCH_LOOP (the loop device).
bench_image() {
	local fs=$1 size=$2 mnt=$3 img loop opts=${BENCH_MOUNT_OPTS:-noatime}
	shift 3
	[ "$(id -u)" = 0 ] || bench_die "bench_image needs root"
	case $fs in
	ext4) need_pkgs e2fsprogs ;;
	xfs) need_pkgs xfsprogs ;;
	btrfs) need_pkgs btrfs-progs ;;
	*) bench_die "bench_image: unsupported filesystem '$fs'" ;;
	esac
	img=$(mktemp /var/tmp/myriad-bench-"$fs".XXXXXX.img)
	if [ "$BENCH_KEEP" = 1 ]; then
		_bench_kept+=("$img")
	else
		bench_on_exit "rm -f '$img'"
	fi
	truncate -s "$size" "$img" || bench_die "truncate $img failed"
	case $fs in
	ext4) mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$@" "$img" ;;
	xfs) mkfs.xfs -q -f "$@" "$img" ;;
	btrfs) mkfs.btrfs -q -f "$@" "$img" ;;
	esac >&2 || bench_die "mkfs.$fs failed on $img"
	loop=$(losetup --find --show --direct-io=on "$img" 2>/dev/null) ||
		loop=$(losetup --find --show "$img") || bench_die "losetup failed for $img"
	bench_on_exit "losetup -d '$loop'"
	mkdir -p "$mnt"
	mount -o "$opts" "$loop" "$mnt" || bench_die "mount $loop on $mnt failed"
	bench_on_exit "umount '$mnt' || { sleep 1; umount '$mnt'; } || umount -l '$mnt'"
	# shellcheck disable=SC2034 # for the caller
	BENCH_IMAGE=$img BENCH_LOOP=$loop
	bench_log "$fs image $img ($size sparse) on $loop (direct I/O: $(losetup -n -O DIO "$loop" 2>/dev/null | tr -d ' ' || echo '?')) mounted at $mnt"
}

# ---------------------------------------------------------------------------------------------
# drop_caches: write back dirty data and drop clean page cache, dentries and inodes.
_bench_drop_warned=0
drop_caches() {
	sync
	if ! echo 3 >/proc/sys/vm/drop_caches 2>/dev/null; then
		[ "$_bench_drop_warned" = 1 ] || bench_log "warning: cannot drop caches (not root?): 'cold' runs are warm"
		_bench_drop_warned=1
	fi
}

# ---------------------------------------------------------------------------------------------
# Measurements. Per label: space-separated wall seconds and peak RSS (KiB), in run order.
declare -A _bench_times=() _bench_rss=() _bench_cpu=() _bench_nz=() _bench_warned=()
_bench_labels=()
[ -x /usr/bin/time ] || need_pkgs time

# measure LABEL CMD...: run CMD (an executable and its arguments, not a shell function; use
# sh -c '...' for a pipeline) once, stdout to /dev/null, stderr kept aside (shown with the first
# non-zero exit of that label). Records wall seconds (EPOCHREALTIME, microseconds) and peak RSS
# (GNU time %M, KiB) and CPU seconds, user plus system, of the command and its children (GNU time
# %U + %S: the share of the machine a tool needs, which wall time on a busy machine hides). A
# non-zero exit is a warning, printed once per label, never fatal: bfs and
# find exit 1 on permission errors and still did the walk.
measure() {
	local label=$1 t0 t1 rc=0 secs rss cpu out="$_bench_tmp/time.out" err="$_bench_tmp/stderr.out"
	shift
	[ $# -gt 0 ] || bench_die "measure $label: no command"
	[ -n "${_bench_times[$label]+x}" ] || { _bench_labels+=("$label"); _bench_times[$label]=""; _bench_rss[$label]=""; _bench_cpu[$label]=""; _bench_nz[$label]=0; }
	t0=$EPOCHREALTIME
	/usr/bin/time -f '%U %S %M' -o "$out" "$@" >/dev/null 2>"$err" || rc=$?
	t1=$EPOCHREALTIME
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
	read -r cpu rss <<<"$(tail -n 1 "$out" 2>/dev/null | awk 'NF == 3 { printf "%.2f %s", $1 + $2, $3 }')"
	case $rss in '' | *[!0-9]*) rss=0 ;; esac
	case $cpu in '' | *[!0-9.]*) cpu=0 ;; esac
	_bench_times[$label]+="$secs "
	_bench_rss[$label]+="$rss "
	_bench_cpu[$label]+="$cpu "
	if [ "$rc" != 0 ]; then
		_bench_nz[$label]=$((_bench_nz[$label] + 1))
		if [ -z "${_bench_warned[$label]+x}" ]; then
			_bench_warned[$label]=1
			bench_log "warning: $label: '$*' exited with status $rc (reported once per label); its stderr began:"
			head -n 5 "$err" | sed 's/^/    /' >&2
		fi
	fi
	[ "$BENCH_QUIET" = 1 ] || printf 'bench:   %-24s %9.3f s %9s KiB %7s s CPU%s\n' "$label" "$secs" "$rss" "$cpu" \
		"$([ "$rc" = 0 ] || echo "  (exit $rc)")" >&2
}

# alternate [-w] RUNS PREP -- LABEL CMD... [-- LABEL CMD...]...
# RUNS rounds; every round runs each command once, starting one further along the list each round
# (round r starts with command r mod N), so neither order nor drifting noise favours a tool. PREP
# is a shell string evaluated before every timed command (drop_caches for cold runs, : for none).
# -w: first one untimed warm-up round (each command once, output discarded).
# A command cannot itself contain a bare "--" argument: wrap such a command in a function.
alternate() {
	local warm=0 runs prep n=0 i r k
	if [ "${1-}" = -w ]; then warm=1; shift; fi
	runs=$1 prep=$2
	shift 2
	[ "${1-}" = -- ] || bench_die "alternate: expected -- after PREP"
	local -a labels=() cmds=()
	while [ $# -gt 0 ]; do
		[ "$1" = -- ] && shift
		[ $# -gt 0 ] || break
		labels[n]=$1
		shift
		local c=""
		while [ $# -gt 0 ] && [ "$1" != -- ]; do c+="$(printf '%q ' "$1")"; shift; done
		[ -n "$c" ] || bench_die "alternate: no command for ${labels[n]}"
		cmds[n]=$c
		n=$((n + 1))
	done
	if [ "$warm" = 1 ]; then
		[ "$BENCH_QUIET" = 1 ] || bench_log "warm-up round"
		for ((i = 0; i < n; i++)); do
			eval "$prep"
			eval "${cmds[i]}" >/dev/null 2>&1 || true
		done
	fi
	for ((r = 0; r < runs; r++)); do
		[ "$BENCH_QUIET" = 1 ] || bench_log "round $((r + 1))/$runs"
		for ((k = 0; k < n; k++)); do
			i=$(((r + k) % n))
			eval "$prep"
			eval "measure $(printf '%q' "${labels[i]}") ${cmds[i]}"
		done
	done
}

# _bench_stats LIST: "count median min max" of the numbers in LIST.
_bench_stats() {
	tr -s ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g | awk '
		{ v[NR] = $1 }
		END {
			if (NR == 0) { print "0 0 0 0"; exit }
			m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%d %.6f %.6f %.6f\n", NR, m, v[1], v[NR]
		}'
}

median_of() {
	[ -n "${_bench_times[$1]+x}" ] || bench_die "no measurements for '$1'"
	_bench_stats "${_bench_times[$1]}" | awk '{ print $2 }'
}
rss_median_of() {
	[ -n "${_bench_rss[$1]+x}" ] || bench_die "no measurements for '$1'"
	_bench_stats "${_bench_rss[$1]}" | awk '{ printf "%d\n", $2 }'
}
max_rss_of() {
	[ -n "${_bench_rss[$1]+x}" ] || bench_die "no measurements for '$1'"
	_bench_stats "${_bench_rss[$1]}" | awk '{ printf "%d\n", $4 }'
}

# report_medians [LABEL...]: the table for the given labels (default: all, in first-seen order).
report_medians() {
	local l rs cs n med min max rmed note
	[ $# -gt 0 ] || set -- "${_bench_labels[@]}"
	printf '%-28s %5s %11s %11s %11s %14s %10s\n' LABEL runs 'median s' 'min s' 'max s' 'med RSS KiB' 'med CPU s'
	for l in "$@"; do
		[ -n "${_bench_times[$l]+x}" ] || { printf '%-28s (no runs)\n' "$l"; continue; }
		read -r n med min max <<<"$(_bench_stats "${_bench_times[$l]}")"
		read -r _ rs _ _ <<<"$(_bench_stats "${_bench_rss[$l]}")"
		read -r _ cs _ _ <<<"$(_bench_stats "${_bench_cpu[$l]}")"
		rmed=$(printf '%.0f' "$rs")
		note=""
		[ "${_bench_nz[$l]}" = 0 ] || note="  ($((_bench_nz[$l])) non-zero exits)"
		printf '%-28s %5d %11.4f %11.4f %11.4f %14s %10.2f%s\n' "$l" "$n" "$med" "$min" "$max" "$rmed" "$cs" "$note"
	done
}

# ratio A B: print "A is X.XXx faster than B", X = median(B) / median(A) (X < 1: A is slower).
# Also leaves X in RATIO.
ratio() {
	local a b
	a=$(median_of "$1") b=$(median_of "$2")
	RATIO=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a <= 0) print "inf"; else printf "%.2f", b / a }')
	echo "$1 is ${RATIO}x faster than $2"
}

# ---------------------------------------------------------------------------------------------
# Bars: bar_check NAME VALUE OP LIMIT [LABEL...] records one; bench_summary prints them all.
# The result is PASS or MISS, or INVALID when any LABEL given (the tool under test) had a run
# that exited non-zero: a crashed walk is not a fast one.
_bench_bars=()
nonzero_of() { echo "${_bench_nz[$1]:-0}"; }
bar_check() {
	local name=$1 value=$2 op=$3 limit=$4 ok l bad=""
	shift 4
	for l in "$@"; do [ "${_bench_nz[$l]:-0}" = 0 ] || bad+=" $l"; done
	ok=$(awk -v v="$value" -v l="$limit" -v op="$op" 'BEGIN {
		if (v == "inf") v = 1e300
		if (op == ">=") r = v >= l; else if (op == "<=") r = v <= l
		else if (op == ">") r = v > l; else if (op == "<") r = v < l; else r = 0
		print r ? "PASS" : "MISS" }')
	[ -z "$bad" ] || ok="INVALID (non-zero exits:$bad)"
	_bench_bars+=("$(printf '%-44s %-10s %12s  %s' "$name" "$op $limit" "$value" "$ok")")
}
bench_summary() {
	local b
	echo
	echo "== summary"
	printf '%-44s %-10s %12s  %s\n' BAR WANT MEASURED RESULT
	[ ${#_bench_bars[@]} -gt 0 ] || { echo "(no bars measured)"; return 0; }
	for b in "${_bench_bars[@]}"; do echo "$b"; done
}

# ---------------------------------------------------------------------------------------------
# Shared by the bench scripts (a script may define its own variant after sourcing this file).

# Human-readable counts for labels: 100000 -> 100k, 2000000 -> 2M.
human() {
	awk -v n="$1" 'BEGIN {
		if (n >= 1e6 && n % 1e5 == 0) { s = sprintf("%.1fM", n / 1e6) }
		else if (n >= 1e3 && n % 100 == 0) { s = sprintf("%.1fk", n / 1e3) }
		else { s = n }
		sub(/\.0/, "", s); print s }'
}

# section NAME TITLE: a header.
section() { echo; echo "== $1: $2"; }

# versus LIMIT A B...: print the ratio of A against each B and record a bar "ratio >= LIMIT" for each.
versus() {
	local limit=$1 a=$2 b
	shift 2
	for b in "$@"; do
		ratio "$a" "$b"
		bar_check "$a vs $b" "$RATIO" ">=" "$limit" "$a"
	done
}
