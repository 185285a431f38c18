# copy --dry-run counts what the real run then does: for each shape of SRC and DST (extra files,
# extra directory trees nested deep, a file where DST has a directory tree, with and without
# --delete, and a directory where DST has a file or a symlink, symlinks, hard links new, half there
# and stale, a sparse file, --max-delete, a mount point in a file's way), the --json counts (files,
# dirs, symlinks, others, bytes, skipped, deleted, errors) and the exit status of `copy --dry-run`
# equal those of the real run after it on the same trees (both with --delete but where said), and
# the dry run changed nothing. All in a tmpfs of its own.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
export XDG_STATE_HOME=$S/state
if ! sandbox 256m 2>"$S/sandbox.err"; then
	skip "every --dry-run --delete case: $(cat "$S/sandbox.err")"
	exit 0
fi

KEYS="files dirs symlinks others bytes skipped deleted errors"

# counts JSON: the counts of a copy --json summary, "key=value" on one line.
counts() {
	local k out=""
	for k in $KEYS; do out="$out $k=$(json_num "$1" "$k")"; done
	echo "${out# }"
}

# same_counts NAME [OPTIONS...]: the dry run's counts and exit status, then the real run's, on
# src and dst of the working directory, both with $DELETE; the dry run must not change dst.
DELETE=--delete
same_counts() {
	local name=$1 before dry real rd rr
	shift
	before=$(tree_digest dst 2>/dev/null)
	"$MYRIAD" copy --no-state --dry-run ${DELETE:+"$DELETE"} "$@" --json "$S/dry.json" src dst >/dev/null 2>"$S/dry.err"
	rd=$?
	if [ "$before" != "$(tree_digest dst 2>/dev/null)" ]; then
		fail "$name: the dry run changed DST"
		return
	fi
	dry="exit=$rd $(counts "$S/dry.json")"
	"$MYRIAD" copy --no-state ${DELETE:+"$DELETE"} "$@" --json "$S/real.json" src dst >/dev/null 2>"$S/real.err"
	rr=$?
	real="exit=$rr $(counts "$S/real.json")"
	expect_eq "$name: the dry run's counts are the real run's" "$real" "$dry"
}

fresh() { rm -rf src dst && mkdir -p src dst; }

# Extra files, extra trees nested deep and wide, an extra symlink to /.
fresh
mkdir -p src/keep dst/keep dst/extra/a/b/c dst/keep/x/y
echo k >src/keep/k
touch dst/extra/a/b/c/f dst/extra/a/g dst/extra/h dst/keep/x/y/z dst/keep/x/w dst/gone
for i in $(seq 40); do mkdir -p "dst/wide/d$i/e" && touch "dst/wide/d$i/e/f" "dst/wide/d$i/g"; done
ln -s / dst/extralink
same_counts "extra files and trees"
same_counts "extra files and trees, then up to date"

# A file where DST has a directory tree; a directory (with contents) where DST has a file, and one
# where DST has a symlink.
fresh
echo f >src/was-dir
mkdir -p dst/was-dir/sub src/was-file/in src/was-link
echo q >dst/was-dir/sub/q
echo old >dst/was-file
echo w >src/was-file/in/w
echo v >src/was-file/v
echo l >src/was-link/l
ln -s /tmp dst/was-link
same_counts "a file replaced by a directory and a directory by a file"

# Without --delete: an empty DST directory in a file's way goes, a full one cannot (both runs
# report it).
fresh
echo f >src/full && echo f >src/empty
mkdir -p dst/full/sub dst/empty
touch dst/full/sub/q
DELETE= same_counts "a directory in a file's way, without --delete"

# Symlinks: new, up to date, changed.
fresh
echo t >src/t
ln -s t src/new-link
ln -s t src/same-link
ln -s nowhere src/changed-link
"$MYRIAD" copy --no-state src dst >/dev/null 2>&1
rm src/changed-link dst/new-link
ln -s elsewhere src/changed-link
same_counts "symlinks new, up to date and changed"

# Hard links: a new group; a group whose first name is up to date and whose other names are a
# separate file or missing in DST; a group whose names in DST are linked but stale.
fresh
mkdir -p src/g1 src/g2 src/g3
echo one >src/g1/a && ln src/g1/a src/g1/b && ln src/g1/a src/g2/c
echo two >src/g2/a && ln src/g2/a src/g2/b && ln src/g2/a src/g3/c
echo three >src/g3/a && ln src/g3/a src/g3/b
"$MYRIAD" copy --no-state src dst >/dev/null 2>&1
rm dst/g2/b dst/g3/c && cp -p src/g2/a dst/g2/b
touch -d 2001-01-01 src/g3/a
echo four >src/g1/new && ln src/g1/new src/g1/new2
# One worker: which name of a group is met first decides what is copied and what linked, in the
# dry run as in the real run, and with several workers that order changes from run to run.
same_counts "hard links new, half there and stale" -j 1

# A sparse file: its data is copied, not its holes.
fresh
truncate -s 4M src/sparse
echo end >>src/sparse
printf 'dense' >src/dense
same_counts "a sparse file's bytes"

# --max-delete: the dry run stops counting where the real run stops deleting.
fresh
echo k >src/keep
for d in x1 x2; do
	mkdir -p "dst/$d/sub"
	for i in $(seq 5); do touch "dst/$d/f$i" "dst/$d/sub/g$i"; done
done
same_counts "--max-delete 7" --max-delete 7

# A mount point where SRC has a file: neither run can make the file; the mount stays.
fresh
mkdir -p dst/m dst/around/deep
echo f >src/m
touch dst/around/deep/g
if mount -t tmpfs -o size=1m myriad-test dst/m; then
	on_exit "umount '$PWD/dst/m' || umount -l '$PWD/dst/m'"
	touch dst/m/precious
	same_counts "a mount point in a file's way"
	expect_eq "a mount point in a file's way: the mount's contents intact" yes \
		"$([ -e dst/m/precious ] && echo yes || echo no)"
	umount dst/m
else
	skip "a mount point in a file's way: cannot mount a tmpfs"
fi
