#!/usr/bin/env bash
# bench/find.sh: `myriad find` against bfs, fd and GNU find on the same tree, same expressions.
#
#   sudo bench/find.sh [--files N] [--runs R] [--fs ext4|xfs|btrfs] [--keep]
#                      [--only name|stat|io500|cold]
#
# Makes a sparse loop-mounted image in /var/tmp, fills it with build/mktree (N empty files in
# directories of 1000 entries; every 100th file (f*01) gets 3901 bytes, for the IO500 expression) and
# times the tools in alternation, R rounds, one section at a time, results to /dev/null:
#   name    -name '*01*'                          (no stat), warm cache
#   stat    -mtime -1 -size +0                    (a stat of every entry), warm cache
#   io500   -newer REF -size 3901c -name '*01*'   (IO500's find phase), warm cache
#   cold    name and stat with caches dropped before every run
# fd (fdfind) runs its nearest equivalent: -g '*01*'; --changed-within 1d -S +1b (its size filter
# keeps files only, so its set lacks the directories); --changed-after REF's mtime -S 3901b -g '*01*'.
# First checks that the tools print the same result set for each expression. Prints tables of
# medians and ratios, then the bars (myriad >= 2x bfs in each section) with PASS/MISS; fd and find
# are reported. The exit status is 0 when the bench ran, whatever the bars say.
#
# MYRIAD=path overrides the binary (default build/myriad, built with make when not overridden).
# Needs root (loop mounts, drop_caches). Everything is unmounted and deleted at exit.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
TOP=$BENCH_TOP

usage() {
	sed -n '2,23s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
	exit "${1:-2}"
}

FILES=1000000 RUNS=5 FS=ext4 ONLY=""
while [ $# -gt 0 ]; do
	case $1 in
	--files) FILES=${2:?--files needs a number}; shift 2 ;;
	--runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
	--fs) FS=${2:?--fs needs ext4, xfs or btrfs}; shift 2 ;;
	--keep) BENCH_KEEP=1; shift ;;
	--only) ONLY=${2:?--only needs a section}; shift 2 ;;
	-h | --help) usage 0 ;;
	*) echo "find.sh: unknown argument '$1'" >&2; usage 2 ;;
	esac
done
case $FILES in '' | *[!0-9]*) echo "find.sh: --files: not a number: $FILES" >&2; exit 2 ;; esac
case $RUNS in '' | *[!0-9]* | 0) echo "find.sh: --runs: not a positive number: $RUNS" >&2; exit 2 ;; esac
case $FS in ext4 | xfs | btrfs) ;; *) echo "find.sh: --fs: ext4, xfs or btrfs, not $FS" >&2; exit 2 ;; esac
case $ONLY in '' | name | stat | io500 | cold) ;; *) echo "find.sh: --only: name, stat, io500 or cold, not $ONLY" >&2; exit 2 ;; esac
[ "$FILES" -ge 1000 ] || { echo "find.sh: --files must be at least 1000" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "find.sh: needs root (loop mounts, drop_caches): sudo $0 $*" >&2; exit 2; }

want() { [ -z "$ONLY" ] || [ "$ONLY" = "$1" ]; }

need_pkgs bfs fd-find findutils time make gcc libc6-dev
MKTREE=$TOP/build/mktree
make -s -C "$TOP" build/mktree >&2
if [ -z "${MYRIAD:-}" ]; then
	need_pkgs libxxhash-dev liburing-dev
	make -s -C "$TOP" build/myriad >&2 || bench_die "make build/myriad failed"
	MYRIAD=$TOP/build/myriad
fi
[ -x "$MYRIAD" ] || bench_die "no executable myriad at $MYRIAD"

inodes=$((FILES + FILES / 5 + 100000))
size_g=$(((inodes * 8192 + (1 << 30) - 1) >> 30))
[ "$size_g" -ge 8 ] || size_g=8
mkfs_opts=()
[ "$FS" = ext4 ] && mkfs_opts=(-N "$inodes")
MNT=$(mktemp -d /tmp/myriad-bench-mnt.XXXXXX)
bench_on_exit "rmdir '$MNT'"
bench_image "$FS" "${size_g}G" "$MNT" "${mkfs_opts[@]}"

T=$MNT/tree
REF=$MNT/ref
touch -d '-1 hour' "$REF"
t0=$EPOCHREALTIME
"$MKTREE" -j "$(nproc)" "$T" --files "$FILES" --fanout 1000 || bench_die "mktree failed"
# Every 100th file (f*01 names) holds 3901 bytes: a non-empty result for -size +0 and the IO500 test.
find "$T" -name 'f*01' -exec sh -c 'for f; do head -c 3901 /dev/zero >"$f"; done' sh {} +
sync
bench_log "made the tree ($FILES files) in $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"

NAME=(-name '*01*')
STAT=(-mtime -1 -size +0)
IO500=(-newer "$REF" -size 3901c -name '*01*')
# fd's nearest equivalents (its first operand is a pattern; it marks directories with a trailing /)
FD_NAME=(-uu -g '*01*' "$T")
FD_STAT=(-uu --changed-within 1d -S +1b . "$T")
FD_IO500=(-uu --changed-after "$(date -r "$REF" '+%Y-%m-%d %H:%M:%S')" -S 3901b -g '*01*' "$T")

echo "== myriad find bench: $FS, $FILES files, $RUNS rounds, $(nproc) CPUs, $(uname -r)"
echo "   myriad: $MYRIAD"
echo "   peers:  $(bfs --version 2>/dev/null | head -n 1); $(fdfind --version 2>/dev/null | head -n 1); $(find --version 2>/dev/null | head -n 1)"

# Sanity: the same result set from each tool, for each expression.
for e in NAME STAT IO500; do
	declare -n ex=$e
	m=$("$MYRIAD" find --no-state "$T" "${ex[@]}" -print0 | sort -z | md5sum)
	b=$(bfs "$T" "${ex[@]}" -print0 | sort -z | md5sum)
	f=$(find "$T" "${ex[@]}" -print0 | sort -z | md5sum)
	n=$(find "$T" "${ex[@]}" | wc -l)
	if [ "$m" = "$b" ] && [ "$m" = "$f" ]; then
		echo "   $e (${ex[*]}): the same $n results from myriad, bfs and find"
	else
		echo "   warning: $e (${ex[*]}): the result sets differ (find: $n results)"
	fi
	declare -n fx=FD_$e
	# fd's size filter keeps files only: its set is compared with find's files
	ft=()
	[ "$e" = STAT ] && ft=(-type f)
	d=$(fdfind "${fx[@]}" -0 | tr '\0\n' '\n\0' | sed 's:/$::' | tr '\0\n' '\n\0' | sort -z | md5sum)
	f=$(find "$T" "${ft[@]}" "${ex[@]}" -print0 | sort -z | md5sum)
	if [ "$d" = "$f" ]; then
		echo "   $e: fd ${fx[*]:0:${#fx[@]}-1}: the same set as find ${ft[*]} ${ex[*]}"
	else
		echo "   warning: $e: fd's result set differs from find ${ft[*]} ${ex[*]}'s"
	fi
	unset -n ex fx
done

section() { echo; echo "== $1: $2"; }
versus() {
	local limit=$1 a=$2 b
	shift 2
	for b in "$@"; do
		ratio "$a" "$b"
		bar_check "$a vs $b" "$RATIO" ">=" "$limit" "$a"
	done
}

# run SECTION PREP EXPR-ARRAY-NAME
run() {
	local s=$1 prep=$2
	declare -n ex=$3 fx=FD_$3
	alternate -w "$RUNS" "$prep" \
		-- "$s/myriad" "$MYRIAD" find --no-state "$T" "${ex[@]}" \
		-- "$s/bfs" bfs "$T" "${ex[@]}" \
		-- "$s/fdfind" fdfind "${fx[@]}" \
		-- "$s/find" find "$T" "${ex[@]}"
	report_medians "$s/myriad" "$s/bfs" "$s/fdfind" "$s/find"
	versus 2 "$s/myriad" "$s/bfs"
	ratio "$s/myriad" "$s/fdfind"
	ratio "$s/myriad" "$s/find"
}

if want name; then section name "-name '*01*', warm cache"; run name : NAME; fi
if want stat; then section stat "-mtime -1 -size +0, warm cache"; run stat : STAT; fi
if want io500; then section io500 "-newer REF -size 3901c -name '*01*', warm cache"; run io500 : IO500; fi
if want cold; then
	section cold-name "-name '*01*', caches dropped before every run"
	run cold-name drop_caches NAME
	section cold-stat "-mtime -1 -size +0, caches dropped before every run"
	run cold-stat drop_caches STAT
fi

bench_summary
