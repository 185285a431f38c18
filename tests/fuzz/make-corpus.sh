#!/usr/bin/env bash
# Make the seed corpora of the fuzz targets (tests/fuzz/corpus/TARGET/) from real files that
# build/myriad writes: checkpoints of interrupted walk, rm, copy, fill and verify runs, fill
# manifests (also of a fill stopped by a full filesystem, as root), a lifecycle results.json (as
# root) and the commands' --json summaries; plus real command lines and option values. The seeds
# are small and committed; run this again when a file format changes. Usage: tests/fuzz/make-corpus.sh
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
M=$TOP/build/myriad
C=$TOP/tests/fuzz/corpus
[ -x "$M" ] || { echo "build myriad first (make)" >&2; exit 1; }
S=$(mktemp -d "${TMPDIR:-/tmp}/myriad-corpus.XXXXXX")
MNT=
cleanup() { [ -z "$MNT" ] || umount "$MNT" 2>/dev/null || true; rm -rf "$S"; }
trap cleanup EXIT
mkdir -p "$C"/{options,numbers,manifest,walk_state,pool_state,results}

# seed TARGET NAME PREFIX_HEX FILE [strip]: PREFIX (the harness's selector bytes) then FILE,
# without its last 8 bytes (the checksum the harness makes) when strip is given.
seed() {
	python3 - "$C/$1/$2" "$3" "$4" "${5:-}" <<'EOF'
import sys
out, prefix, path, strip = sys.argv[1:5]
data = open(path, 'rb').read()
if strip:
    data = data[:-8]
open(out, 'wb').write(bytes.fromhex(prefix) + data)
EOF
}

# stopped NAME CMD...: run a myriad command with state in $S/st-NAME, stop it with SIGINT after a
# moment, and leave its snapshot in $S/snap-NAME.
stopped() {
	local name=$1 pid
	shift
	rm -rf "$S/st-$name"
	"$M" "$@" --state "$S/st-$name" --checkpoint-interval 0.05 --progress 0 >/dev/null 2>&1 &
	pid=$!
	sleep 0.7
	kill -INT $pid 2>/dev/null || true
	wait $pid || true
	cp "$S/st-$name/snapshot" "$S/snap-$name"
}

# Trees: small, with several levels, so that frontiers hold a few records.
mktree() {
	local d=$1 i j
	for i in 1 2 3 4 5 6; do
		for j in 1 2 3 4 5 6; do
			mkdir -p "$d/d$i/e$j"
			for k in 1 2 3 4 5 6 7 8; do : >"$d/d$i/e$j/f$k"; done
		done
	done
	printf 'data' >"$d/d1/with-data"
	ln -s d1 "$d/link"
}
mkdir -p "$S/top/cwd"
mktree "$S/top/cwd"
mktree "$S/top/other"

# walk_state: the harness's operands are "." and "..". Selector: 0 walk, 1 rm, 2 copy.
(cd "$S/top/cwd" && stopped walk walk --rate 300 --stat -o "$S/walk.out" . ..)
seed walk_state walk-stopped 00 "$S/snap-walk" strip
seed walk_state walk-stopped-raw 80 "$S/snap-walk"
cp -a "$S/top/cwd" "$S/rmtree"
stopped rm rm --rate 200 "$S/rmtree"
seed walk_state rm-stopped 01 "$S/snap-rm" strip
stopped copy copy --rate 200 "$S/top/cwd" "$S/copydst"
seed walk_state copy-stopped 02 "$S/snap-copy" strip

# pool_state: selector 0 fill, 1 verify; then the job's units - 1 (big-endian u16), read from
# the snapshot (after elapsed, sessions, errors, errors length and the command's blob).
pool_seed() {
	python3 - "$C/pool_state/$1" "$2" "$3" <<'EOF'
import struct, sys
out, sel, path = sys.argv[1:4]
data = open(path, 'rb').read()
pos = 8 + 4 * 8
vlen = struct.unpack_from('<Q', data, pos)[0]
units = struct.unpack_from('<Q', data, pos + 8 + vlen)[0]
open(out, 'wb').write(bytes([int(sel, 16)]) + struct.pack('>H', units - 1) + data[:-8])
EOF
}
stopped fill fill -n 30000 --fanout 10 --size 0-2k --seed 7 --rate 5000 "$S/filled"
pool_seed fill-stopped 00 "$S/snap-fill"
cp "$S/filled/.myriad-fill" "$S/manifest-incomplete"
"$M" fill -n 30000 --fanout 10 --size 0-2k --seed 7 --state "$S/st-fill" --progress 0 "$S/filled" >/dev/null
cp "$S/filled/.myriad-fill" "$S/manifest-complete"
rm -rf "$S/st-verify"
"$M" verify --state "$S/st-verify" --checkpoint-interval 0.01 --progress 0 -j 1 "$S/filled" >/dev/null 2>&1 &
pid=$!
sleep 0.3
kill -9 $pid 2>/dev/null || true
wait $pid || true
pool_seed verify-killed 01 "$S/st-verify/snapshot"

# manifest: selector bit 0 set = the file as it is; clear = without its checksum line (the
# harness makes it).
manifest_seed() {
	seed manifest "$1-raw" 01 "$2"
	python3 - "$C/manifest/$1" "$2" <<'EOF'
import sys
out, path = sys.argv[1:3]
data = open(path, 'rb').read()
open(out, 'wb').write(b'\x00' + data[:data.rindex(b'checksum ')])
EOF
}
manifest_seed incomplete "$S/manifest-incomplete"
manifest_seed complete "$S/manifest-complete"
if [ "$(id -u)" = 0 ]; then
	# A fill stopped by a full filesystem records its partly filled directories.
	MNT=$S/tmpfs
	mkdir -p "$MNT"
	mount -t tmpfs -o size=1m,nr_inodes=700 myriad-corpus "$MNT"
	"$M" fill -n 5000 --fanout 10 --until-full --no-state --progress 0 "$MNT/t" >/dev/null
	cp "$MNT/t/.myriad-fill" "$S/manifest-full"
	umount "$MNT"
	MNT=
	manifest_seed until-full "$S/manifest-full"
	# results: a small lifecycle run.
	"$M" lifecycle --fs ext4 -n 2000 --scales 1000,2000 --out "$S/lc" >/dev/null 2>&1 || true
	[ -s "$S/lc/results.json" ] && cp "$S/lc/results.json" "$C/results/lifecycle-results.json"
else
	echo "make-corpus: not root: no until-full manifest nor lifecycle results.json made" >&2
fi
# results: the subcommands' --json summaries are JSON that lifecycle reads back too.
"$M" walk --no-state --stat --json "$C/results/walk-summary.json" "$S/top" >/dev/null
"$M" verify --no-state --json "$C/results/verify-summary.json" "$S/filled" >/dev/null
"$M" rm --no-state --json "$C/results/rm-summary.json" "$S/filled" >/dev/null

# options: the command's index in cmds.c's table, then its arguments separated by NUL bytes.
opt_seed() {
	local idx=$1 name=$2
	shift 2
	{ printf "\\x$(printf %02x "$idx")"; printf '%s\0' "$@"; } >"$C/options/$name"
}
opt_seed 0 copy-1 --delete --bwlimit 50M --rate 1k --ionice be:3 --max-errors 10 -j 4 --exclude '*.tmp' src dst
opt_seed 0 copy-2 --check --xdev --json - --errors e.jsonl src dst
opt_seed 1 fill-1 -n 1M -s 1k-64k --fanout 100 --sync file --seed 3 --rate 50k dir
opt_seed 1 fill-2 --files 10k --size 4k --until-full --checkpoint-interval 0.5 --progress 0 --state st dir
opt_seed 2 lifecycle-1 --fs ext4,xfs --scales 100k,300k,1M --project 1G -s 4k --out o --mkfs-opts 'ext4=-E lazy_itable_init=0'
opt_seed 2 lifecycle-2 --device /dev/null --yes -n 1M --image-dir /var/tmp
opt_seed 3 report-1 -o r.html --project 10G a.json b.json
opt_seed 4 rm-1 --dry-run --exclude keep --rate 100 --ionice idle --no-state d1 d2
opt_seed 5 verify-1 --quick -j 8 --json out.json dir
opt_seed 6 walk-1 --stat --print0 -o paths --type f,d --exclude '*.o' --xdev --rate 1M -j 16 a b
opt_seed 6 walk-2 --help

# numbers: the option values the parsers share.
i=0
for v in 1M 4k 20MiB 1k-64k 50M 512B 0 18446744073709551615 16E be:7 idle 0.5 1e3 4096 3.3M 1.5k 0.51k 1.2345k; do
	printf '%s' "$v" >"$C/numbers/value-$i"
	i=$((i + 1))
done
du -sh "$C"/* | sed 's/^/make-corpus: /'
