/*
 * myriad copy: copy the contents of SRC into DST, as cp -a / rsync -aHAX would (data with holes,
 * directories, symlinks, hard links, special files, mode, owner, nanosecond times, xattrs and
 * ACLs). The plan is the traversal engine over SRC; the visitor creates each entry in DST
 * (directories pre-order) and gives each directory its mode, owner and times post-order, once
 * its contents are in. An entry whose DST twin has the same type, size and mtime is skipped: a
 * file's mtime is set only once its data is complete, so a resume simply walks SRC again.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cmd/cmds.h"
#include "cmd/cmdstate.h"
#include "cmd/job.h"
#include "engine/cgroup_io.h"
#include "engine/walk.h"
#include "io/copy.h"
#include "io/prefetch.h"
#include "io/dir.h"
#include "report/json.h"
#include "report/progress.h"
#include "state/linkmap.h"
#include "state/tally.h"
#include "util/util.h"

static const char copy_help[] =
    "Usage: myriad copy [OPTIONS] SRC DST\n"
    "Copy the contents of directory SRC into DST (created if missing): files (sparse), directories,\n"
    "symlinks, hard links, fifos, sockets, devices, mode, owner, nanosecond times, xattrs, ACLs.\n"
    "Resumable: an entry already in DST with the same type, size and mtime is skipped.\n"
    "\n"
    "  -j, --threads N          workers (default: one per CPU, growing to 8 per CPU, at least 16,\n"
    "                           while they wait for the disk)\n"
    "      --delete             remove entries of DST that are not in SRC (excluded names stay);\n"
    "                           never enters nor removes a mount point in DST (reported, exit 1)\n"
    "      --max-delete N       delete at most N entries (each file and directory counts); when\n"
    "                           reached, say so, delete nothing more, copy on, exit 1\n"
    "      --check              compare only: write nothing, report every difference (exit 0 when\n"
    "                           DST equals SRC, else 1)\n"
    "      --dry-run            count what would be copied, write nothing\n"
    "      --xdev               do not descend into other filesystems under SRC (a mount point\n"
    "                           becomes an empty directory, as with cp -ax and rsync -ax)\n"
    "      --exclude GLOB       skip entries whose name matches; repeatable\n"
    "      --rate N             visit at most N entries per second\n"
    "      --bwlimit BYTES      copy at most BYTES of data per second (e.g. 50M)\n"
    "      --ionice CLASS       idle, or be:0..7 (best effort, 0 highest): the I/O priority to run at\n"
    "      --cgroup-io SPEC     run in a cgroup with a kernel I/O limit on DST's block device:\n"
    "                           rbps=BYTES, wbps=BYTES, riops=N, wiops=N (e.g. wbps=50M); cgroup v1\n"
    "                           limits reads and direct I/O, not buffered writes (use --bwlimit)\n"
    "      --max-errors N       stop (state saved, exit 3) after N failed entries\n"
    "      --link-memory SIZE   memory for hard links whose other names are still to come (default\n"
    "                           64M); beyond it they spill to a file in the state directory\n"
    "%s"
    "\n"
    "Symlinks are never followed. A failed entry is reported (path, operation, reason) and the copy\n"
    "goes on (exit 1). Out of space or quota on DST: the copy stops with state saved (exit 3); free\n"
    "space and run the same command again. A source file that changes while it is copied is\n"
    "reported and copied again by the next run. Small files on ext4, XFS and btrfs copied to\n"
    "another filesystem are read ahead a directory's next 64 at a time with one io_uring\n"
    "submission (MYRIAD_PREFETCH=off: one by one). --check compares type, size, mtime, mode, owner,\n"
    "symlink targets, xattrs, hard links and file contents. A resumed run walks SRC again: its\n"
    "summary counts what every run copied, and what it found up to date and the failures of its\n"
    "own pass, where each entry that still fails appears once (the --errors file starts afresh).\n"
    "Refused (exit 2): SRC missing or not a directory, SRC equal to DST, DST inside SRC, SRC\n"
    "inside DST with --delete (compared by device and inode, so a bind mount or a symlink is no way\n"
    "round), and --delete from an empty SRC into a non-empty DST unless --max-delete is given.\n";

struct local {
	uint64_t files, dirs, links, others, bytes, skipped, deleted, seen_entries, seen_bytes, ahead;
	struct tally_slot *slot; /* this worker's counts of the whole job (claimed at its first entry) */
	bool claimed;
	/* The DST directory of the last SRC directory visited (kept across commits). */
	struct sbuf cpath;
	int cfd;
	bool cvalid;
	/* That DST directory was empty when this worker opened it (copying, not checking): every name
	 * in it was made by this run, which makes each name once, when it visits it, so a name about
	 * to be visited is not there yet and needs no stat. */
	bool cfresh;
	/* And it is neither setgid nor has a default ACL: what is created in it gets exactly the mode
	 * asked for (less the umask) and this process's owner and group. */
	bool cplain;
	/* Why it could not be opened, and whether no caller has reported that yet. */
	int cerr;
	bool cuntold;
	/* Small files of the next entries, read together (copy_prepare; NULL: not here, or no
	 * io_uring), and what open_src took of it for the entry being copied (pre.data NULL: read
	 * it from the fd). */
	struct prefetch *pf;
	bool pf_tried;
	struct prefetched pre;
};

struct copy {
	bool dry_run, check, del, root, xdev;
	dev_t src_dev;
	uint64_t dst_mnt; /* DST's mount: --delete never enters nor removes a directory on another */
	bool max_delete_set;
	uint64_t max_delete;
	_Atomic uint64_t delete_budget; /* deletions --max-delete still allows */
	atomic_bool max_delete_hit;
	struct tally *tally; /* what every run of the job copied and deleted (NULL: --check, --dry-run) */
	bool tally_exact;    /* false: an earlier run's tally was lost; counts are the snapshot's */
	mode_t umask;
	uid_t uid;
	gid_t gid;
	uint64_t max_errors;
	char *src, *dst;
	int dstfd;
	char *const *excludes;
	size_t nexcludes;
	struct throttle bw;
	pthread_mutex_t link_lock;
	struct linkmap *links;
	const char *link_dir; /* where it spills (NULL: $TMPDIR) */
	struct sbuf link_path; /* the first name of a linked inode (link_lock) */
	atomic_bool link_failed_said, stopping;
	atomic_uint_fast64_t failed;
	uint64_t files, dirs, nlink_made, others, bytes, skipped, deleted;
	uint64_t ahead; /* files of this run whose data came from copy_prepare's read-ahead */
	/* For the progress line, this run's (a resume walks again): data bytes moved so far (counted as
	 * they move), entries visited and allocated bytes of those not copied (both as batches commit),
	 * when it began; what SRC's filesystem holds when SRC is one (0: unknown). */
	_Atomic uint64_t live_bytes;
	uint64_t seen_entries, seen_bytes, run_start_ns, fs_entries, fs_bytes;
	struct walk *walk;
	struct job job;
	bool prefetch; /* copy_prepare reads small files ahead (see there) */
};

#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT 0x00002000
#endif

/* Memory for hard-linked inodes whose other links are still to come, before they spill to disk. */
#define LINK_MEMORY_DEFAULT (64u << 20)

/* ---- messages and stopping ---- */

/* Stop the copy (once): say why, at length in message, in short in the final line. */
static void request_stop(struct copy *c, const char *message, const char *reason)
{
	if (atomic_exchange(&c->stopping, true))
		return;
	warnx_("%s", message);
	c->job.stop_reason = reason;
	raise(SIGTERM); /* the run loop takes the final snapshot and exits 3 */
}

static bool out_of_room(int e) { return e == ENOSPC || e == EDQUOT; }

/* Report a failed operation on path; stop on a full DST or at --max-errors. */
static void fail(struct copy *c, struct errbatch *errs, const struct sbuf *path, const char *op, int err)
{
	if (out_of_room(err) && !c->dry_run && !c->check) {
		/* Not a failed entry: the copy stops and the next run copies it. */
		static const char *const reasons[] = {"destination over quota", "destination out of inodes",
						      "destination out of space"};
		const char *reason = reasons[err == EDQUOT ? 0 : !strcmp(full_resource(c->dstfd), "inodes") ? 1 : 2];
		struct sbuf m = {0};
		escape_path(&m, path->data, path->len);
		sbuf_printf(&m, ": %s: %s: the destination is %s (%s, then run the same command again)", op,
			    strerror(err), reason + strlen("destination "), err == EDQUOT ? "raise it" : "free some");
		request_stop(c, m.data, reason);
		sbuf_free(&m);
		return;
	}
	errlog_report(errs, path->data, path->len, op, err);
	if (c->max_errors && atomic_fetch_add(&c->failed, 1) + 1 >= c->max_errors)
		request_stop(c, "--max-errors reached", "--max-errors reached");
}

static void problem(struct copy *c, struct errbatch *errs, const struct sbuf *path, const char *what, const char *detail)
{
	errlog_problem(errs, path->data, path->len, what, detail);
	if (c->max_errors && !c->check && atomic_fetch_add(&c->failed, 1) + 1 >= c->max_errors)
		request_stop(c, "--max-errors reached", "--max-errors reached");
}

/* The relative path of directory d under its operand ("" for the operand). */
static const char *rel_of(const struct walk_dir *d, size_t *len)
{
	*len = d->pathlen - d->relstart;
	return d->path + d->relstart;
}

/* DST's path of name in d (for messages), into b. */
static void dst_path(struct sbuf *b, const struct copy *c, const struct walk_dir *d, const char *name)
{
	size_t rl;
	const char *rel = rel_of(d, &rl);
	sbuf_clear(b);
	sbuf_adds(b, c->dst);
	if (rl) {
		sbuf_addc(b, '/');
		sbuf_add(b, rel, rl);
	}
	if (name) {
		sbuf_addc(b, '/');
		sbuf_adds(b, name);
	}
}

/* SRC's path of name in d (NULL: d itself), into b. */
static void src_path(struct sbuf *b, const struct walk_dir *d, const char *name)
{
	sbuf_clear(b);
	if (!name) {
		sbuf_add(b, d->path, d->pathlen);
		return;
	}
	struct walk_entry e = {name, strlen(name), 0, 0, NULL};
	walk_path(b, d, &e);
}

/* The path of name in d (NULL: d itself) on the side that operation op works on: SRC for the
 * operations that read the source, DST for every other. */
static void op_path(struct sbuf *b, const struct copy *c, const struct walk_dir *d, const char *name, const char *op)
{
	static const char *const src_ops[] = {"read", "readlink", "listxattr", "getxattr", "statx"};
	for (size_t i = 0; i < ARRAY_LEN(src_ops); i++)
		if (!strcmp(op, src_ops[i])) {
			src_path(b, d, name);
			return;
		}
	dst_path(b, c, d, name);
}

static bool is_excluded(const struct copy *c, const char *name)
{
	for (size_t i = 0; i < c->nexcludes; i++)
		if (fnmatch(c->excludes[i], name, 0) == 0)
			return true;
	return false;
}

/* ---- DST directories ---- */

/* DST's directory for SRC directory d, cached per worker: an fd, or -1 with errno. */
static int dst_dir(struct copy *c, struct local *l, const struct walk_dir *d)
{
	if (l->cvalid && l->cpath.len == d->pathlen && !memcmp(l->cpath.data, d->path, d->pathlen)) {
		if (l->cfd < 0) /* told once, to the first caller that reports (see copy_prepare) */
			errno = l->cuntold ? l->cerr : ENOENT, l->cuntold = false;
		return l->cfd;
	}
	if (l->cvalid && l->cfd >= 0)
		close(l->cfd);
	size_t rl;
	const char *rel = rel_of(d, &rl);
	l->cfd = c->dstfd < 0 ? (errno = ENOENT, -1) : dir_open_at(c->dstfd, rel, rl);
	int e = errno;
	l->cerr = e;
	l->cuntold = false;
	l->cfresh = l->cplain = false;
	if (l->cfd >= 0 && !c->check && !c->dry_run && dir_is_empty(l->cfd, NULL) == 1) {
		l->cfresh = true;
		struct stat st;
		l->cplain = fstat(l->cfd, &st) == 0 && !(st.st_mode & S_ISGID) &&
			    fgetxattr(l->cfd, "system.posix_acl_default", NULL, 0) < 0 &&
			    (errno == ENODATA || errno == ENOTSUP);
	}
	sbuf_clear(&l->cpath);
	sbuf_add(&l->cpath, d->path, d->pathlen);
	l->cvalid = true;
	errno = e;
	return l->cfd;
}

/* ---- hard links ---- */

/* Open the directory of target (a path relative to DST) and stat target there: the directory's
 * fd with *tname its last component and *ts filled, or -1 with errno (fd closed). */
static int stat_in_dst(struct copy *c, const char *target, size_t tlen, const char **tname, struct stat *ts)
{
	const char *slash = memrchr(target, '/', tlen);
	*tname = slash ? slash + 1 : target;
	int tfd = dir_open_at(c->dstfd, target, slash ? (size_t)(slash - target) : 0);
	if (tfd >= 0 && fstatat(tfd, *tname, ts, AT_SYMLINK_NOFOLLOW) != 0) {
		int e = errno;
		close(tfd);
		errno = e;
		return -1;
	}
	return tfd;
}

/* Make name in dfd a hard link to target, a path relative to DST (unless it already is one). 0 or -1
 * with errno. */
static int link_to(struct copy *c, const char *target, size_t tlen, int dfd, const char *name, const struct stat *have,
		   bool *skipped)
{
	const char *tname;
	struct stat ts;
	int tfd = stat_in_dst(c, target, tlen, &tname, &ts);
	if (tfd < 0)
		return -1;
	int rc = 0;
	if (have && have->st_ino == ts.st_ino && have->st_dev == ts.st_dev)
		*skipped = true;
	else if (have && !S_ISDIR(have->st_mode) && unlinkat(dfd, name, 0) != 0 && errno != ENOENT)
		rc = -1;
	else
		rc = linkat(tfd, tname, dfd, name, 0);
	int e = errno;
	close(tfd);
	errno = e;
	return rc;
}

/* The hard-link map failed (its spill file): say so once; the links concerned become copies. */
static void link_map_failed(struct copy *c, int err)
{
	if (!atomic_exchange(&c->link_failed_said, true))
		warnx_("hard-link map: spill file in %s: %s: hard links not yet seen are copied as separate files",
		       c->link_dir ? c->link_dir : "$TMPDIR", strerror(err));
}

/* Remember the first DST name of an inode with more links to come. false when it cannot be. */
static bool link_add(struct copy *c, uint64_t dev, uint64_t ino, uint32_t left, const struct walk_dir *d,
		     const char *name)
{
	size_t rl;
	const char *rel = rel_of(d, &rl);
	struct sbuf *b = &c->link_path;
	sbuf_clear(b);
	sbuf_add(b, rel, rl);
	if (rl)
		sbuf_addc(b, '/');
	sbuf_adds(b, name);
	if (linkmap_add(c->links, dev, ino, left, b->data, b->len) == 0)
		return true;
	link_map_failed(c, errno);
	return false;
}

/* ---- creating entries ---- */

static bool same_time(const struct statx_timestamp *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == (uint32_t)b->tv_nsec;
}

static bool same_type(const struct statx *s, const struct stat *d) { return (s->stx_mode & S_IFMT) == (d->st_mode & S_IFMT); }

/* Is the DST entry finished: same type, and for a non-directory same size and mtime? */
static bool up_to_date(const struct statx *s, const struct stat *d)
{
	if (!same_type(s, d))
		return false;
	return S_ISDIR(d->st_mode) || (s->stx_size == (uint64_t)d->st_size && same_time(&s->stx_mtime, &d->st_mtim));
}

/* What a new entry already has when it is made in DST directory l->cfd (see create_entry). */
enum { HAS_OWNER = 1, HAS_MODE = 2 };

static unsigned given_meta(const struct copy *c, const struct local *l, const struct statx *s)
{
	if (!l->cplain)
		return 0;
	unsigned has = 0;
	if (s->stx_uid == c->uid && s->stx_gid == c->gid)
		has |= HAS_OWNER;
	/* A file is made with its mode when the umask keeps all of it and it has no setuid, setgid or
	 * sticky bit (which chown would clear, and which are not for a file half-written). */
	mode_t m = s->stx_mode & 07777;
	if (S_ISREG(s->stx_mode) && !(m & 07000) && !(m & c->umask))
		has |= HAS_MODE;
	return has;
}

/* Owner, xattrs, mode, then times (last: a finished entry is one with its mtime). fd: the open
 * DST file or -1; sx: the source's xattr reference; has: what the entry already has (HAS_*).
 * Returns 0 or -1 with errno and *op. */
static int set_meta(struct copy *c, const struct statx *s, int dfd, const char *name, int fd,
		    const struct xref *sx, bool times, unsigned has, const char **op)
{
	bool lnk = S_ISLNK(s->stx_mode);
	if (c->root && !(has & HAS_OWNER) && (fd >= 0 ? fchown(fd, s->stx_uid, s->stx_gid)
				: fchownat(dfd, name, s->stx_uid, s->stx_gid, AT_SYMLINK_NOFOLLOW)) != 0) {
		*op = "chown";
		return -1;
	}
	struct xref dx = {fd, dfd, name};
	if (copy_xattrs(sx, &dx, NULL, op) != 0)
		return -1;
	/* (An access ACL copied above sets the group bits from its mask: the source's, as its mode.) */
	if (!lnk && !(has & HAS_MODE) && (fd >= 0 ? fchmod(fd, s->stx_mode & 07777) : fchmodat(dfd, name, s->stx_mode & 07777, AT_SYMLINK_NOFOLLOW)) != 0) {
		*op = "chmod";
		return -1;
	}
	if (!times)
		return 0;
	struct timespec ts[2] = {{s->stx_atime.tv_sec, s->stx_atime.tv_nsec}, {s->stx_mtime.tv_sec, s->stx_mtime.tv_nsec}};
	if ((fd >= 0 ? futimens(fd, ts) : utimensat(dfd, name, ts, AT_SYMLINK_NOFOLLOW)) != 0) {
		*op = "utimensat";
		return -1;
	}
	return 0;
}

enum { T_FILES, T_LINKS, T_OTHERS, T_BYTES, T_DELETED }; /* the tally's counters */

static struct tally_slot *copy_slot(struct copy *c, struct local *l)
{
	if (!l->claimed && c->tally)
		l->slot = tally_claim(c->tally);
	l->claimed = true;
	return l->slot;
}

/* Announce the entry name of d, about to be finished (its mtime set last), counted by counter k
 * once it is: its path relative to SRC and DST. */
static struct tally_slot *announce(struct copy *c, struct local *l, unsigned k, const struct walk_dir *d,
				   const char *name)
{
	struct tally_slot *s = copy_slot(c, l);
	size_t rl = d->pathlen - d->relstart;
	if (rl)
		tally_begin(s, k, d->path + d->relstart, rl, name, strlen(name));
	else
		tally_begin(s, k, name, strlen(name), NULL, 0);
	return s;
}

/* Is the entry a killed run was finishing, rec relative to SRC and DST, up to date in DST (so
 * that a resumed pass counts it up to date, not copied)? Then count it, and a file's bytes. */
static void copy_settle(void *ctx, unsigned counter, const char *rec, size_t len, uint64_t since, uint64_t *totals)
{
	struct copy *c = ctx;
	(void)since;
	struct sbuf a = {0}, b = {0};
	sbuf_printf(&a, "%s/%.*s", c->src, (int)len, rec);
	sbuf_printf(&b, "%s/%.*s", c->dst, (int)len, rec);
	struct statx sx;
	struct stat st;
	if (statx(AT_FDCWD, a.data, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx) == 0 &&
	    fstatat(AT_FDCWD, b.data, &st, AT_SYMLINK_NOFOLLOW) == 0 && up_to_date(&sx, &st)) {
		totals[counter]++;
		if (counter == T_FILES && S_ISREG(st.st_mode) && st.st_nlink == 1)
			totals[T_BYTES] += st.st_size;
	}
	sbuf_free(&a);
	sbuf_free(&b);
}

/* Copy a regular file's data into out (already created) and finish it. */
static bool fill_file(struct copy *c, struct local *l, const struct walk_dir *d, const struct walk_entry *e, int dfd,
		      int in, int out, unsigned has, struct errbatch *errs)
{
	struct sbuf p = {0};
	const char *op = "open";
	bool failed = true;
	uint64_t bytes = 0;
	const struct statx *s = e->stx;
	struct copy_src src = {s->stx_size, s->stx_blocks, makedev(s->stx_dev_major, s->stx_dev_minor)};
	struct tally_slot *slot = announce(c, l, T_FILES, d, e->name);
	int rc;
	if (l->pre.data && l->pre.len == src.size) { /* read ahead by copy_prepare, after the statx */
		rc = copy_buffer(l->pre.data, l->pre.len, out, &bytes, &c->live_bytes, &op);
		l->ahead += rc == 0;
	} else if (l->pre.err) { /* its read, which is not retried */
		rc = -1, op = "read", errno = l->pre.err;
	} else {
		rc = copy_data(in, out, &src, c->bw.rate > 0 ? &c->bw : NULL, &bytes, &c->live_bytes, &op);
	}
	l->bytes += bytes;
	if (rc != 0) {
		int err = errno;
		op_path(&p, c, d, e->name, op);
		fail(c, errs, &p, op, err);
		goto out;
	}
	struct stat after;
	bool changed = fstat(in, &after) != 0 || (uint64_t)after.st_size != e->stx->stx_size ||
		       !same_time(&e->stx->stx_mtime, &after.st_mtim);
	struct xref sx = {in, -1, NULL};
	if (set_meta(c, e->stx, dfd, e->name, out, &sx, !changed, has, &op) != 0) {
		int err = errno;
		op_path(&p, c, d, e->name, op);
		fail(c, errs, &p, op, err);
		goto out;
	}
	if (changed) {
		src_path(&p, d, e->name);
		problem(c, errs, &p, "changed while copied", "its copy keeps no mtime: the next run copies it again");
		goto out;
	}
	l->files++;
	failed = false;
out:
	close(in);
	if (close(out) != 0 && !failed) {
		/* Its data may not be all there although it has its final size and mtime: remove it, so
		 * that the next run copies it again instead of taking it for complete. */
		int err = errno;
		unlinkat(dfd, e->name, 0);
		dst_path(&p, c, d, e->name);
		fail(c, errs, &p, "close", err);
		failed = true;
		l->files--; /* counted above: it is not copied after all */
	}
	if (!failed) /* before the count: a kill between them leaves both to copy_settle */
		tally_add(slot, T_BYTES, bytes);
	tally_end(slot, T_FILES, !failed);
	sbuf_free(&p);
	return failed;
}

/* Open a source file for reading (without touching its atime when allowed): fd, or -1 reported.
 * A file copy_prepare read ahead comes with its fd and data (l->pre, for fill_file). */
static int open_src(struct copy *c, struct local *l, const struct walk_dir *d, const struct walk_entry *e,
		    struct errbatch *errs)
{
	l->pre = (struct prefetched){-1, 0, NULL, 0};
	if (e->type != DT_REG)
		return INT_MAX; /* nothing to open */
	int in;
	if (l->pf && prefetch_take(l->pf, e->name, &l->pre)) {
		in = l->pre.fd;
		errno = l->pre.err;
	} else {
		in = dir_open_file(d->fd, e->name);
	}
	if (in < 0) {
		struct sbuf p = {0};
		src_path(&p, d, e->name);
		fail(c, errs, &p, "open", errno);
		sbuf_free(&p);
	}
	return in;
}

/* Create the DST entry (a file: open, returned in *out) with no metadata yet, but for what has
 * (HAS_*: given_meta) says it is made with. 0 or -1, *op set. */
static int create_entry(const struct walk_dir *d, const struct walk_entry *e, int dfd, unsigned has, int *out,
			const char **op)
{
	const struct statx *s = e->stx;
	*out = -1;
	switch (s->stx_mode & S_IFMT) {
	case S_IFREG:
		*op = "open";
		*out = openat(dfd, e->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			      has & HAS_MODE ? s->stx_mode & 0777 : 0600);
		return *out < 0 ? -1 : 0;
	case S_IFLNK: {
		char target[PATH_MAX + 1];
		*op = "readlink";
		ssize_t n = readlinkat(d->fd, e->name, target, PATH_MAX);
		if (n < 0)
			return -1;
		target[n] = 0;
		*op = "symlink";
		return symlinkat(target, dfd, e->name);
	}
	default:
		*op = "mknod";
		return mknodat(dfd, e->name, (s->stx_mode & S_IFMT) | 0600, makedev(s->stx_rdev_major, s->stx_rdev_minor));
	}
}

/* --max-delete ran out: say so once; the copy goes on, deleting nothing more, and ends with exit 1. */
static void max_delete_reached(struct copy *c)
{
	if (!atomic_exchange(&c->max_delete_hit, true))
		warnx_("--max-delete %llu reached: nothing more is deleted (the copy goes on; exit 1)",
		       (unsigned long long)c->max_delete);
}

/* Where remove_tree reports a mount point it leaves alone. */
struct mount_note {
	struct copy *c;
	const struct walk_dir *d;
	struct errbatch *errs;
};

static void mount_left_alone(struct copy *c, struct errbatch *errs, const struct sbuf *path)
{
	problem(c, errs, path, "mount point left alone",
		"--delete never enters nor removes a mount in DST: unmount it to have it deleted");
}

static void note_mount_point(void *arg, const char *rel, size_t len)
{
	struct mount_note *m = arg;
	struct sbuf p = {0};
	dst_path(&p, m->c, m->d, NULL);
	sbuf_addc(&p, '/');
	sbuf_add(&p, rel, len);
	mount_left_alone(m->c, m->errs, &p);
	sbuf_free(&p);
}

/* Delete name in DST directory dfd (of d) and all under it, as --delete does: every entry counted
 * and taken from --max-delete, nothing under a mount point. 0, or -1 (reported). */
static int delete_tree(struct copy *c, struct local *l, const struct walk_dir *d, int dfd, const char *name,
		       struct errbatch *errs)
{
	struct mount_note note = {c, d, errs};
	struct rm_tree t = {.budget = c->max_delete_set ? &c->delete_budget : NULL,
			    .mnt = c->dst_mnt,
			    .mount_point = note_mount_point,
			    .arg = &note};
	int rc = remove_tree(dfd, name, &t);
	int err = errno;
	l->deleted += t.removed;
	tally_add(copy_slot(c, l), T_DELETED, t.removed);
	if (rc != 0 && err == ECANCELED) {
		max_delete_reached(c);
	} else if (rc != 0 && !t.kept && err != ENOENT) { /* (a mount point kept it: said already) */
		struct sbuf p = {0};
		dst_path(&p, c, d, t.where.data);
		fail(c, errs, &p, t.op, err);
		sbuf_free(&p);
	}
	sbuf_free(&t.where);
	return rc == 0 || err == ENOENT ? 0 : -1;
}

/* Make way for a new entry: remove a DST non-directory or empty directory (with --delete, any
 * directory tree, but never a mount point). 0; -1 with errno and *op; 1 failed, reported. */
static int clear_dst(struct copy *c, struct local *l, const struct walk_dir *d, int dfd, const char *name,
		     const struct stat *have, struct errbatch *errs, const char **op)
{
	if (!have)
		return 0;
	if (S_ISDIR(have->st_mode)) {
		/* An empty directory goes (nothing is lost); a full one only with --delete. */
		*op = "rmdir";
		if (!c->del)
			return unlinkat(dfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT ? -1 : 0;
		return delete_tree(c, l, d, dfd, name, errs) ? 1 : 0;
	}
	*op = "unlink";
	return unlinkat(dfd, name, 0) != 0 && errno != ENOENT ? -1 : 0;
}

/* Copy a non-directory. Returns true when it failed. */
static bool make_entry(struct copy *c, struct local *l, const struct walk_dir *d, const struct walk_entry *e, int dfd,
		       const struct stat *have, struct errbatch *errs)
{
	struct sbuf p = {0};
	const char *op = "unlink";
	int out = -1;
	bool failed = true;
	int in = open_src(c, l, d, e, errs);
	if (in < 0)
		return true;
	unsigned has = given_meta(c, l, e->stx);
	int rc = clear_dst(c, l, d, dfd, e->name, have, errs, &op);
	if (rc == 0 && create_entry(d, e, dfd, has, &out, &op) != 0)
		rc = -1;
	if (rc != 0) {
		int err = errno;
		if (rc < 0) {
			op_path(&p, c, d, e->name, op);
			fail(c, errs, &p, op, err);
		}
		if (in != INT_MAX)
			close(in);
	} else if (out >= 0) {
		failed = fill_file(c, l, d, e, dfd, in, out, has, errs);
	} else {
		struct xref sx = {-1, d->fd, e->name};
		unsigned k = S_ISLNK(e->stx->stx_mode) ? T_LINKS : T_OTHERS;
		struct tally_slot *slot = announce(c, l, k, d, e->name);
		if (set_meta(c, e->stx, dfd, e->name, -1, &sx, true, has, &op) != 0) {
			int err = errno;
			op_path(&p, c, d, e->name, op);
			fail(c, errs, &p, op, err);
		} else {
			failed = false;
			if (k == T_LINKS)
				l->links++;
			else
				l->others++;
		}
		tally_end(slot, k, !failed);
	}
	sbuf_free(&p);
	return failed;
}

/* An entry with more links: link it to its inode's first DST name, or be that first name.
 * Returns 0 when handled (*failed set), 1 when the caller copies it as a plain entry. */
static int hard_link(struct copy *c, struct local *l, const struct walk_dir *d, const struct walk_entry *e, int dfd,
		     const struct stat *have, bool done, struct errbatch *errs, bool *failed)
{
	const struct statx *s = e->stx;
	uint64_t dev = makedev(s->stx_dev_major, s->stx_dev_minor);
	*failed = false;
	pthread_mutex_lock(&c->link_lock);
	int found = linkmap_take(c->links, dev, s->stx_ino, &c->link_path);
	if (found < 0)
		link_map_failed(c, errno);
	if (found > 0) {
		bool skipped = false;
		struct tally_slot *slot = announce(c, l, T_FILES, d, e->name);
		int rc = link_to(c, c->link_path.data, c->link_path.len, dfd, e->name, have, &skipped);
		int err = errno;
		tally_end(slot, T_FILES, rc == 0 && !skipped);
		pthread_mutex_unlock(&c->link_lock);
		if (rc != 0) {
			struct sbuf b = {0};
			dst_path(&b, c, d, e->name);
			fail(c, errs, &b, "link", err);
			sbuf_free(&b);
			*failed = true;
		} else if (skipped) {
			l->skipped++;
		} else {
			l->files++;
		}
		return 0;
	}
	bool added = link_add(c, dev, s->stx_ino, s->stx_nlink - 1, d, e->name);
	if (!added || done || !S_ISREG(s->stx_mode)) {
		/* Not a file to fill: finishing it under the lock keeps later links from racing it. */
		if (done)
			l->skipped++;
		else if (added)
			*failed = make_entry(c, l, d, e, dfd, have, errs);
		pthread_mutex_unlock(&c->link_lock);
		return added ? 0 : 1;
	}
	/* A file: create it under the lock (so later links find it), fill it outside. */
	const char *op = "unlink";
	int out = -1;
	int in = open_src(c, l, d, e, errs);
	if (in < 0) {
		pthread_mutex_unlock(&c->link_lock);
		*failed = true;
		return 0;
	}
	unsigned has = given_meta(c, l, e->stx);
	int rc = clear_dst(c, l, d, dfd, e->name, have, errs, &op);
	if (rc == 0 && create_entry(d, e, dfd, has, &out, &op) != 0)
		rc = -1;
	int err = errno;
	pthread_mutex_unlock(&c->link_lock);
	if (rc != 0) {
		struct sbuf b = {0};
		dst_path(&b, c, d, e->name);
		if (rc < 0)
			fail(c, errs, &b, op, err);
		sbuf_free(&b);
		close(in);
		*failed = true;
		return 0;
	}
	*failed = fill_file(c, l, d, e, dfd, in, out, has, errs);
	return 0;
}

/* A finished entry: fix a mode or owner that changed since (cheap, both are known). */
static void touch_up(struct copy *c, const struct walk_entry *e, int dfd, const struct stat *have)
{
	const struct statx *s = e->stx;
	if (c->root && (have->st_uid != s->stx_uid || have->st_gid != s->stx_gid))
		fchownat(dfd, e->name, s->stx_uid, s->stx_gid, AT_SYMLINK_NOFOLLOW);
	if (!S_ISLNK(have->st_mode) && (have->st_mode & 07777) != (s->stx_mode & 07777u))
		fchmodat(dfd, e->name, s->stx_mode & 07777, AT_SYMLINK_NOFOLLOW);
}

/* ---- --check ---- */

/* Compare a regular file's data with its DST twin (same size). 0 equal, 1 different (detail says
 * where), -1 failed (reported). */
static int check_content(struct copy *c, struct local *l, const struct walk_dir *d, const struct walk_entry *e,
			 int dfd, struct errbatch *errs, char *detail, size_t dlen)
{
	struct sbuf p = {0};
	int in = open_src(c, l, d, e, errs), out = -1, rc = -1, which = 1;
	if (in < 0)
		goto out;
	out = dir_open_file(dfd, e->name);
	if (out < 0) {
		dst_path(&p, c, d, e->name);
		fail(c, errs, &p, "open", errno);
		goto out;
	}
	uint64_t at = 0;
	rc = copy_compare(in, out, e->stx->stx_size, c->bw.rate > 0 ? &c->bw : NULL, &l->bytes, &c->live_bytes, &at,
			  &which);
	if (rc < 0) {
		int err = errno;
		if (which == 0)
			src_path(&p, d, e->name);
		else
			dst_path(&p, c, d, e->name);
		fail(c, errs, &p, "read", err);
	} else if (rc > 0) {
		snprintf(detail, dlen, "first difference at byte %llu", (unsigned long long)at);
	}
out:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	sbuf_free(&p);
	return rc;
}

/* A SRC inode with more names: is DST's name (have) the same inode as DST's twin of its first
 * SRC name? NULL when it is (or it is the first), else what differs. Under link_lock. */
static const char *check_links(struct copy *c, const struct walk_dir *d, const struct walk_entry *e,
			       const struct stat *have)
{
	const struct statx *s = e->stx;
	uint64_t dev = makedev(s->stx_dev_major, s->stx_dev_minor);
	const char *what = NULL;
	pthread_mutex_lock(&c->link_lock);
	int found = linkmap_take(c->links, dev, s->stx_ino, &c->link_path);
	if (found < 0) {
		link_map_failed(c, errno);
	} else if (found == 0) {
		link_add(c, dev, s->stx_ino, s->stx_nlink - 1, d, e->name);
	} else {
		const char *tname;
		struct stat ts;
		int tfd = stat_in_dst(c, c->link_path.data, c->link_path.len, &tname, &ts);
		if (tfd < 0 || ts.st_ino != have->st_ino || ts.st_dev != have->st_dev)
			what = "not hard-linked as in SRC";
		if (tfd >= 0)
			close(tfd);
	}
	pthread_mutex_unlock(&c->link_lock);
	return what;
}

static bool check_entry(struct copy *c, struct local *l, const struct walk_dir *d, const struct walk_entry *e, int dfd,
			const struct stat *have, struct errbatch *errs)
{
	const struct statx *s = e->stx;
	const char *what = NULL;
	char detail[64] = "";
	if (!have)
		what = "missing";
	else if (!same_type(s, have))
		what = "different type";
	else if (S_ISDIR(have->st_mode))
		return false; /* its metadata is compared once its contents are (dir_done) */
	else if (s->stx_size != (uint64_t)have->st_size)
		what = "different size";
	else if (!same_time(&s->stx_mtime, &have->st_mtim))
		what = "different mtime";
	else if (!S_ISLNK(have->st_mode) && (have->st_mode & 07777) != (s->stx_mode & 07777u))
		what = "different mode";
	else if (have->st_uid != s->stx_uid || have->st_gid != s->stx_gid)
		what = "different owner";
	if (!what && S_ISLNK(have->st_mode)) {
		char a[PATH_MAX + 1], b[PATH_MAX + 1];
		ssize_t na = readlinkat(d->fd, e->name, a, PATH_MAX), nb = readlinkat(dfd, e->name, b, PATH_MAX);
		if (na != nb || na < 0 || memcmp(a, b, na))
			what = "different symlink target";
	}
	if (!what) {
		bool diff = false;
		const char *op;
		struct xref sx = {-1, d->fd, e->name}, dx = {-1, dfd, e->name};
		if (copy_xattrs(&sx, &dx, &diff, &op) == 0 && diff)
			what = "different xattrs";
	}
	if (!what && s->stx_nlink > 1 && (what = check_links(c, d, e, have)))
		snprintf(detail, sizeof(detail), "DST has a separate file where SRC has a hard link");
	if (!what && S_ISREG(have->st_mode)) {
		int r = check_content(c, l, d, e, dfd, errs, detail, sizeof(detail));
		if (r < 0)
			return true;
		if (r > 0)
			what = "content differs";
	}
	if (!what) {
		if (S_ISREG(have->st_mode))
			l->files++;
		else
			l->others++;
		return false;
	}
	struct sbuf p = {0};
	dst_path(&p, c, d, e->name);
	problem(c, errs, &p, what, *detail ? detail : "differs from SRC");
	sbuf_free(&p);
	return true;
}

/* ---- the visitor ---- */

static bool copy_entry(void *ctx, void *lp, const struct walk_dir *d, const struct walk_entry *e, struct errbatch *errs)
{
	struct copy *c = ctx;
	struct local *l = lp;
	if (!d || !e->stx)
		return false; /* the operand: DST itself, made before the walk */
	l->seen_entries++;
	if (e->type != DT_REG)
		l->seen_bytes += e->stx->stx_blocks * 512; /* files: as their data moves, or when skipped */
	struct sbuf p = {0};
	int dfd = dst_dir(c, l, d);
	if (dfd < 0 && !(errno == ENOENT && c->dry_run)) {
		/* ENOENT: its parent could not be made (reported there) or, checking, is missing. */
		if (errno != ENOENT) {
			dst_path(&p, c, d, NULL);
			fail(c, errs, &p, "open", errno);
			sbuf_free(&p);
		}
		return true;
	}
	struct stat st;
	const struct stat *have = NULL;
	if (dfd >= 0 && !l->cfresh) { /* (in a fresh directory it is not there yet: see struct local) */
		if (fstatat(dfd, e->name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			have = &st;
		} else if (errno != ENOENT) {
			dst_path(&p, c, d, e->name);
			fail(c, errs, &p, "stat", errno);
			sbuf_free(&p);
			return true;
		}
	}
	if (c->check)
		return check_entry(c, l, d, e, dfd, have, errs);
	bool done = have && up_to_date(e->stx, have);
	if (c->dry_run) {
		if (done && e->type != DT_DIR)
			l->skipped++;
		else if (e->type == DT_REG)
			l->files++, l->bytes += e->stx->stx_size;
		else if (e->type != DT_DIR)
			l->others++;
		return false;
	}
	if (e->type == DT_DIR) {
		if (have && !S_ISDIR(have->st_mode) && unlinkat(dfd, e->name, 0) != 0 && errno != ENOENT) {
			dst_path(&p, c, d, e->name);
			fail(c, errs, &p, "unlink", errno);
		} else if ((!have || !S_ISDIR(have->st_mode)) && mkdirat(dfd, e->name, 0700) != 0 && errno != EEXIST) {
			dst_path(&p, c, d, e->name);
			fail(c, errs, &p, "mkdir", errno);
		} else if (have && S_ISDIR(have->st_mode) && !c->root && (have->st_mode & 0700) != 0700) {
			fchmodat(dfd, e->name, (have->st_mode & 07777) | 0700, AT_SYMLINK_NOFOLLOW); /* (contents go in) */
		}
		bool bad = p.len != 0;
		sbuf_free(&p);
		return bad;
	}
	bool failed = false;
	if (e->stx->stx_nlink > 1 && hard_link(c, l, d, e, dfd, have, done, errs, &failed) == 0)
		return failed;
	if (done) {
		touch_up(c, e, dfd, have);
		l->skipped++;
		l->seen_bytes += e->stx->stx_blocks * 512;
		return false;
	}
	return make_entry(c, l, d, e, dfd, have, errs);
}

/* The next entries of a directory, before they are visited: when they go into a DST directory
 * this run made (nothing there to compare with), open the small files among them and read them
 * all with one submission (io/prefetch.h: adjacent files merge into few disk requests). Files
 * with other links wait for hard_link, which may link them instead. */
static void copy_prepare(void *ctx, void *lp, const struct walk_dir *d, const struct walk_entry *es, size_t n)
{
	struct copy *c = ctx;
	struct local *l = lp;
	/* First the last batch goes (its names pointed into a getdents buffer that may have been
	 * reused since: prefetch_take matches by address). */
	if (l->pf)
		prefetch_reset(l->pf);
	if (!c->prefetch || atomic_load(&c->stopping))
		return;
	if (!l->pf) {
		if (l->pf_tried)
			return;
		l->pf_tried = true;
		if (!(l->pf = prefetch_new()))
			return;
	}
	if (dst_dir(c, l, d) < 0) {
		l->cuntold = true; /* the first entry reports why (a failure is never tried twice) */
		return;
	}
	if (!l->cfresh)
		return;
	/* Not files with holes (written whole from the buffer, they would lose them) */
	for (size_t i = 0; i < n; i++) {
		const struct statx *s = es[i].stx;
		if (es[i].type == DT_REG && s && s->stx_nlink == 1 && s->stx_size > 0 &&
		    s->stx_size <= PREFETCH_FILE_MAX && s->stx_blocks * 512 >= s->stx_size &&
		    !prefetch_add(l->pf, d->fd, es[i].name, s->stx_size))
			break;
	}
	prefetch_submit(l->pf);
}

static void copy_local_free(void *ctx, void *lp)
{
	struct local *l = lp;
	prefetch_free(l->pf);
	if (l->cvalid && l->cfd >= 0)
		close(l->cfd);
	sbuf_free(&l->cpath);
}

/* --delete / --check: entries of DST directory dfd that SRC directory sfd lacks. */
static void extras(struct copy *c, struct local *l, const struct walk_dir *d, int sfd, int dfd, struct errbatch *errs)
{
	char buf[65536];
	struct sbuf p = {0};
	ssize_t n;
	struct stat st;
	while ((n = dir_read(dfd, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n;) {
			const struct linux_dirent64 *de = (const void *)(buf + off);
			off += de->d_reclen;
			if (dir_is_dot(de->d_name) || is_excluded(c, de->d_name) ||
			    fstatat(sfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
				continue;
			dst_path(&p, c, d, de->d_name);
			if (c->check)
				problem(c, errs, &p, "extra", "not in SRC");
			else if (!c->dry_run)
				delete_tree(c, l, d, dfd, de->d_name, errs);
			else if (rm_budget_take(c->max_delete_set ? &c->delete_budget : NULL))
				l->deleted++;
			else
				max_delete_reached(c);
		}
	}
	sbuf_free(&p);
}

/* Directory metadata compare (--check). */
static void check_dir(struct copy *c, const struct walk_dir *d, int sfd, int dfd, struct errbatch *errs)
{
	struct stat s, t;
	if (fstat(sfd, &s) != 0 || fstat(dfd, &t) != 0)
		return;
	const char *what = NULL;
	if ((s.st_mode & 07777) != (t.st_mode & 07777))
		what = "different mode";
	else if (s.st_uid != t.st_uid || s.st_gid != t.st_gid)
		what = "different owner";
	else if (s.st_mtim.tv_sec != t.st_mtim.tv_sec || s.st_mtim.tv_nsec != t.st_mtim.tv_nsec)
		what = "different mtime";
	else {
		bool diff = false;
		const char *op;
		struct xref sx = {sfd, -1, NULL}, dx = {dfd, -1, NULL};
		if (copy_xattrs(&sx, &dx, &diff, &op) == 0 && diff)
			what = "different xattrs";
	}
	if (what) {
		struct sbuf p = {0};
		dst_path(&p, c, d, NULL);
		problem(c, errs, &p, what, "differs from SRC");
		sbuf_free(&p);
	}
}

/* Is DST directory dfd (of d) on another mount than DST, so --delete leaves it alone? Its root is
 * reported (what lies below it is not entered, nor reported again). */
static bool dst_mount(struct copy *c, const struct walk_dir *d, int dfd, struct errbatch *errs)
{
	struct fs_id here, up;
	if (d->pathlen == d->relstart || fs_identity(dfd, "", &here) != 0 || here.mnt == c->dst_mnt)
		return false;
	if (fs_identity(dfd, "..", &up) == 0 && up.mnt != here.mnt) {
		struct sbuf p = {0};
		dst_path(&p, c, d, NULL);
		mount_left_alone(c, errs, &p);
		sbuf_free(&p);
	}
	return true;
}

static bool copy_dir_done(void *ctx, void *lp, const struct walk_dir *d, bool keep, struct errbatch *errs)
{
	struct copy *c = ctx;
	struct local *l = lp;
	if (d->unread)
		return false; /* reported when it was read; its DST twin stays unfinished for the next run */
	size_t rl;
	const char *rel = rel_of(d, &rl);
	struct sbuf p = {0};
	int dfd = -1, sfd = dir_open_at(d->rootfd, rel, rl);
	if (sfd < 0) {
		int err = errno;
		src_path(&p, d, NULL);
		if (err == ENOTDIR || err == ELOOP) /* replaced by a file or a symlink since it was read */
			problem(c, errs, &p, c->check ? "changed while compared" : "changed while copied",
				"no longer a directory: the next run copies what is there then");
		else if (err != ENOENT)
			fail(c, errs, &p, "open", err);
		goto out;
	}
	if (c->dstfd >= 0)
		dfd = dir_open_at(c->dstfd, rel, rl);
	if (dfd < 0) {
		/* ENOENT: it could not be made (reported then), or, checking, it is missing (reported). */
		if (c->dstfd >= 0 && errno != ENOENT && !c->dry_run) {
			int err = errno;
			dst_path(&p, c, d, NULL);
			fail(c, errs, &p, "open", err);
		}
		if (c->dry_run)
			l->dirs++;
		goto out;
	}
	/* With --xdev, a mount point under SRC is copied as cp -x and rsync -x do: an empty directory
	 * with the metadata of what is mounted there (all that SRC's path shows), its DST contents left
	 * alone by --delete and --check, since nothing under it is copied. */
	bool mount_point = c->xdev && d->mount; /* the engine's word: another filesystem or a bind mount */
	if (c->check) {
		if (!mount_point)
			extras(c, l, d, sfd, dfd, errs);
		check_dir(c, d, sfd, dfd, errs);
		l->dirs++;
		goto out;
	}
	if (c->del && !mount_point && !dst_mount(c, d, dfd, errs))
		extras(c, l, d, sfd, dfd, errs);
	if (c->dry_run) {
		l->dirs++;
		goto out;
	}
	struct statx s;
	const char *op = "statx";
	if (statx(sfd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &s) == 0) {
		struct xref sx = {sfd, -1, NULL};
		if (set_meta(c, &s, -1, NULL, dfd, &sx, true, 0, &op) == 0) {
			l->dirs++;
			goto out;
		}
	}
	int err = errno;
	op_path(&p, c, d, NULL, op);
	fail(c, errs, &p, op, err);
out:
	if (sfd >= 0)
		close(sfd);
	if (dfd >= 0)
		close(dfd);
	sbuf_free(&p);
	return false;
}

static void copy_commit(void *ctx, void *lp)
{
	struct copy *c = ctx;
	struct local *l = lp;
	c->files += l->files;
	c->dirs += l->dirs;
	c->nlink_made += l->links;
	c->others += l->others;
	c->bytes += l->bytes;
	c->skipped += l->skipped;
	c->deleted += l->deleted;
	c->seen_entries += l->seen_entries;
	c->seen_bytes += l->seen_bytes;
	c->ahead += l->ahead;
	l->ahead = 0;
	l->files = l->dirs = l->links = l->others = l->bytes = l->skipped = l->deleted = 0;
	l->seen_entries = l->seen_bytes = 0;
}

void copy_state_save(struct sbuf *b, const struct copy_state *s)
{
	for (size_t i = 0; i < COPY_COUNTERS; i++)
		ser_u64(b, s->v[i]);
}

bool copy_state_load(struct copy_state *s, struct deser *d)
{
	for (size_t i = 0; i < COPY_COUNTERS; i++)
		s->v[i] = deser_u64(d);
	return !d->bad;
}

static void copy_save(void *ctx, struct sbuf *b)
{
	struct copy *c = ctx;
	struct copy_state s = {{c->files, c->dirs, c->nlink_made, c->others, c->bytes, c->skipped, c->deleted}};
	copy_state_save(b, &s);
}

static bool copy_load(void *ctx, struct deser *d)
{
	struct copy *c = ctx;
	uint64_t *v[COPY_COUNTERS] = {&c->files, &c->dirs,    &c->nlink_made, &c->others,
				      &c->bytes, &c->skipped, &c->deleted};
	struct copy_state s;
	if (!copy_state_load(&s, d))
		return false;
	for (size_t i = 0; i < COPY_COUNTERS; i++)
		*v[i] = s.v[i];
	/* A resume walks SRC again: what was copied or deleted stays counted, but every directory and
	 * every finished entry is met (and counted) again, as is every failure (the engine's part). */
	c->dirs = c->skipped = 0;
	return true;
}

/* "copy: 1.2 GiB copied, 45.0 MiB/s[, ~35% of SRC, ETA 2m10s]; 12,345 entries, 2,000/s, 0 errors, 1m02s".
 * The share done is known when SRC is a whole filesystem: what this run has seen (entries, allocated
 * bytes) against what the filesystem holds; the ETA is this run's, since a resume walks again. */
static void copy_progress(void *ctx, struct sbuf *line)
{
	struct copy *c = ctx;
	walk_lock(c->walk);
	uint64_t n = c->files + c->dirs + c->nlink_made + c->others + c->skipped, bytes = c->bytes;
	uint64_t seen_n = c->seen_entries, seen_b = c->seen_bytes;
	walk_unlock(c->walk);
	uint64_t moved = c->live_bytes;
	double el = walk_elapsed(c->walk), run_el = (now_ns() - c->run_start_ns) / 1e9;
	char b[32], r[32];
	if (c->dry_run) /* nothing moves: what was counted */
		moved = bytes;
	sbuf_printf(line, "copy%s: %s %s, %s/s", c->check ? " (check)" : c->dry_run ? " (dry run)" : "",
		    fmt_bytes(b, moved), c->check ? "compared" : c->dry_run ? "to copy" : "copied",
		    fmt_bytes(r, run_el > 0 ? (uint64_t)(moved / run_el) : 0));
	seen_b += moved;
	double f = 0;
	if (c->fs_entries)
		f = (double)seen_n / c->fs_entries;
	if (c->fs_bytes && (double)seen_b / c->fs_bytes > f)
		f = (double)seen_b / c->fs_bytes;
	if (f > 0 && f < 1) {
		sbuf_printf(line, ", ~%.0f%% of SRC", 100 * f);
		progress_eta(line, f, run_el);
	}
	sbuf_adds(line, "; ");
	progress_format(line, "entries", n, 0, el, el > 0 ? n / el : 0, walk_errors(c->walk));
	walk_stuck(c->walk, line, 5);
}

/* When SRC is the root of a filesystem, what it holds (for the progress line's share and ETA). */
static void estimate_total(struct copy *c)
{
	struct statx sx;
	struct statfs sf;
	if (statx(AT_FDCWD, c->src, 0, STATX_BASIC_STATS, &sx) != 0 ||
	    !(sx.stx_attributes_mask & sx.stx_attributes & STATX_ATTR_MOUNT_ROOT) || statfs(c->src, &sf) != 0)
		return;
	c->fs_bytes = (uint64_t)(sf.f_blocks - sf.f_bfree) * sf.f_frsize;
	c->fs_entries = sf.f_files > sf.f_ffree ? sf.f_files - sf.f_ffree : 0;
}

/* ---- operands ---- */

/* Open directory p (O_PATH, following symlinks as the path does), or when it does not exist yet,
 * its parent, where it is to be made (copy makes DST, not its parents). fd, or -1 with errno. */
static int open_dst_place(const char *p)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", p) >= (int)sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = open(buf, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 || errno != ENOENT)
		return fd;
	size_t n = strlen(buf);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = 0;
	char *slash = strrchr(buf, '/');
	if (!slash)
		strcpy(buf, ".");
	else
		slash[slash == buf] = 0;
	return open(buf, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* Does directory path hold an entry that --exclude does not name? 1 yes, 0 no, -1 with errno. */
static int has_entries(const struct copy *c, const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	_Alignas(8) char buf[4096];
	ssize_t n;
	int found = 0;
	while (!found && (n = dir_read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t off = 0; off < n && !found;) {
			const struct linux_dirent64 *de = (const void *)(buf + off);
			off += de->d_reclen;
			found = !dir_is_dot(de->d_name) && !is_excluded(c, de->d_name);
		}
	int e = errno;
	close(fd);
	errno = e;
	return n < 0 ? -1 : found;
}

/* Where SRC and DST lie, by identity (device and inode, so that a bind mount or a symlink is no way
 * round): SRC equal to DST, DST inside SRC (DST to be made: its parent), and
 * with --delete SRC inside DST. 0 or EXIT_USAGE. */
static int check_overlap(struct copy *c, bool dst_exists)
{
	int sfd = open(c->src, O_PATH | O_DIRECTORY | O_CLOEXEC), dfd = open_dst_place(c->dst), rc = 0;
	const char *bad = sfd < 0 ? c->src : dfd < 0 ? c->dst : NULL;
	struct fs_id si, di;
	if (bad) {
		rc = usage_error("%s: %s", bad, strerror(errno));
	} else if (fs_identity(sfd, "", &si) != 0 || fs_identity(dfd, "", &di) != 0) {
		rc = usage_error("%s: statx: %s", c->dst, strerror(errno));
	} else if (dst_exists && fs_id_same(&si, &di)) {
		rc = usage_error("refusing to copy '%s' onto itself: '%s' is the same directory (same device and inode)",
				 c->src, c->dst);
	} else {
		int in = dir_within(dfd, sfd);
		int out = in == 0 && c->del && dst_exists ? dir_within(sfd, dfd) : 0;
		if (in < 0 || out < 0)
			rc = usage_error("%s: cannot tell where it lies: %s", c->dst, strerror(errno));
		else if (in)
			rc = usage_error("refusing to copy '%s' into '%s', which is inside it (also through a bind "
					 "mount or a symlink): the copy would copy itself",
					 c->src, c->dst);
		else if (out)
			rc = usage_error("refusing --delete: SRC '%s' is inside DST '%s' (also through a bind mount or a "
					 "symlink): it would be deleted as it is copied",
					 c->src, c->dst);
	}
	if (sfd >= 0)
		close(sfd);
	if (dfd >= 0)
		close(dfd);
	return rc;
}

/* Check SRC and DST; make DST unless nothing may be written. 0 or an exit code. */
static int check_operands(struct copy *c)
{
	struct stat st;
	if (lstat(c->src, &st) != 0)
		return usage_error("%s: %s", c->src, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return usage_error("%s: not a directory", c->src);
	c->src_dev = st.st_dev;
	bool dst_exists = lstat(c->dst, &st) == 0;
	if (dst_exists && !S_ISDIR(st.st_mode))
		return usage_error("%s: not a directory", c->dst);
	int rc = check_overlap(c, dst_exists);
	if (rc || !c->del || c->check || !dst_exists)
		return rc;
	/* --delete with nothing in SRC empties DST: only when the user said how much may go. */
	int src_has = has_entries(c, c->src), dst_has = has_entries(c, c->dst);
	if (src_has < 0 || dst_has < 0)
		return usage_error("%s: %s", src_has < 0 ? c->src : c->dst, strerror(errno));
	if (src_has || !dst_has)
		return 0;
	if (!c->max_delete_set)
		return usage_error("refusing --delete: SRC '%s' is empty and DST '%s' is not: everything in it would be "
				   "deleted (to go ahead, give --max-delete N, the most entries it may delete)",
				   c->src, c->dst);
	warnx_("warning: SRC '%s' is empty: --delete deletes everything in DST '%s', up to %llu entries "
	       "(--max-delete)",
	       c->src, c->dst, (unsigned long long)c->max_delete);
	return 0;
}

/* What the whole job copied and deleted, over all its runs, in place of the counts of the last
 * snapshot (which miss what a run did after it): the tally's, when it was kept. */
static void whole_job_counts(struct copy *c)
{
	if (!c->tally || !c->tally_exact)
		return;
	c->files = tally_total(c->tally, T_FILES);
	c->nlink_made = tally_total(c->tally, T_LINKS);
	c->others = tally_total(c->tally, T_OTHERS);
	c->bytes = tally_total(c->tally, T_BYTES);
	c->deleted = tally_total(c->tally, T_DELETED);
}

static void print_summary(struct copy *c, enum run_result res, double el, uint64_t errors, FILE *out)
{
	char a[32], b[32], s[32], e[32], by[32], u[32], x[32], y[32];
	unsigned runs = walk_sessions(c->walk);
	uint64_t n = c->files + c->dirs + c->nlink_made + c->others;
	if (c->check) {
		fprintf(out, "copy --check%s: %s %s equal; %s %s; %.2f s\n", res == RUN_DONE ? "" : " stopped",
			fmt_count(a, n), plural(n, "entry", "entries"), fmt_count(e, errors),
			plural(errors, "difference", "differences"), el);
		return;
	}
	fprintf(out, "copy%s%s: %s %s (%s), %s %s, %s other %s %s%s; %s up to date; %s deleted; "
		     "%s %s%s; %.2f s\n",
		c->dry_run ? " (dry run)" : "", res == RUN_DONE ? "" : " stopped", fmt_count(a, c->files),
		plural(c->files, "file", "files"), fmt_bytes(by, c->bytes), fmt_count(b, c->dirs),
		plural(c->dirs, "directory", "directories"), fmt_count(s, c->nlink_made + c->others),
		plural(c->nlink_made + c->others, "entry", "entries"),
		c->dry_run ? "would be copied" : "copied",
		c->tally && !c->tally_exact ? " (at least: an earlier run's count was lost)"
		: runs > 1 && !c->dry_run   ? " (files, other entries, deleted: whole job; directories, up to date, errors: this run's pass)"
					    : "",
		fmt_count(u, c->skipped), fmt_count(x, c->deleted), fmt_count(y, errors), plural(errors, "error", "errors"),
		c->max_delete_hit ? " (--max-delete reached)" : "", el);
}

static void write_summary(struct copy *c, const char *path, enum run_result res, double el, uint64_t errors,
			  const struct throttle *rate)
{
	struct sbuf doc = {0};
	struct json j;
	json_init(&j, &doc);
	json_open(&j, NULL, '{');
	json_str(&j, "myriad_version", MYRIAD_VERSION);
	json_str(&j, "command", "copy");
	json_bytes(&j, "src", c->src, strlen(c->src));
	json_bytes(&j, "dst", c->dst, strlen(c->dst));
	json_bool(&j, "dry_run", c->dry_run);
	json_bool(&j, "check", c->check);
	json_bool(&j, "complete", res == RUN_DONE);
	json_u64(&j, "files", c->files);
	json_u64(&j, "dirs", c->dirs);
	json_u64(&j, "symlinks", c->nlink_made);
	json_u64(&j, "others", c->others);
	json_u64(&j, "bytes", c->bytes);
	json_u64(&j, "skipped", c->skipped);
	json_u64(&j, "deleted", c->deleted);
	json_bool(&j, "counts_exact", !c->tally || c->tally_exact);
	json_bool(&j, "max_delete_reached", c->max_delete_hit);
	json_u64(&j, "hardlinks_spilled", linkmap_spilled(c->links));
	json_u64(&j, "files_read_ahead", c->ahead);
	json_u64(&j, "errors", errors);
	json_u64(&j, "sessions", walk_sessions(c->walk));
	json_u64(&j, "threads", walk_threads(c->walk));
	json_double(&j, "elapsed_s", el);
	uint64_t n = c->files + c->dirs + c->nlink_made + c->others + c->skipped;
	json_double(&j, "entries_per_s", el > 0 ? n / el : 0);
	json_double(&j, "bytes_per_s", el > 0 ? c->bytes / el : 0);
	json_double(&j, "rate_throttle_wait_s", rate ? rate->waited_ns / 1e9 : 0);
	json_double(&j, "bwlimit_throttle_wait_s", c->bw.waited_ns / 1e9);
	struct sbuf cg = {0};
	cgroup_io_describe(&cg);
	if (cg.len)
		json_bytes(&j, "cgroup_io", cg.data, cg.len);
	sbuf_free(&cg);
	json_close(&j, '}');
	write_json_file(path, &doc);
	sbuf_free(&doc);
}

struct copy_opts {
	struct job_opts jo; /* with --exclude, --rate and --ionice */
	bool dry_run, check, del, xdev;
	uint64_t bwlimit, max_errors, link_memory, max_delete;
	bool max_delete_set;
	struct cgroup_io_spec cgio;
	bool use_cgio;
	char *src, *dst;
};

enum {
	OPT_DRY_RUN = OPT_CMD_BASE,
	OPT_DELETE,
	OPT_CHECK,
	OPT_XDEV,
	OPT_BWLIMIT,
	OPT_MAX_ERRORS,
	OPT_LINK_MEMORY,
	OPT_CGROUP_IO,
	OPT_MAX_DELETE
};

static int copy_parse(int argc, char **argv, void *opts)
{
	static const struct option longopts[] = {
	    JOB_LONG_OPTIONS,
	    {"dry-run", no_argument, 0, OPT_DRY_RUN},
	    JOB_EXCLUDE_OPTION,
	    JOB_RATE_OPTION,
	    JOB_IONICE_OPTION,
	    {"delete", no_argument, 0, OPT_DELETE},
	    {"check", no_argument, 0, OPT_CHECK},
	    {"xdev", no_argument, 0, OPT_XDEV},
	    {"bwlimit", required_argument, 0, OPT_BWLIMIT},
	    {"max-errors", required_argument, 0, OPT_MAX_ERRORS},
	    {"link-memory", required_argument, 0, OPT_LINK_MEMORY},
	    {"cgroup-io", required_argument, 0, OPT_CGROUP_IO},
	    {"max-delete", required_argument, 0, OPT_MAX_DELETE},
	    {0, 0, 0, 0},
	};
	struct copy_opts *o = opts;
	job_opts_init(&o->jo);
	o->link_memory = LINK_MEMORY_DEFAULT;
	int opt, rc;
	while ((opt = job_getopt(&o->jo, argc, argv, "j:", longopts, copy_help, &rc))) {
		switch (opt) {
		case OPT_DRY_RUN: o->dry_run = true; break;
		case OPT_DELETE: o->del = true; break;
		case OPT_CHECK: o->check = true; break;
		case OPT_XDEV: o->xdev = true; break;
		case OPT_BWLIMIT:
			if (!parse_size(optarg, &o->bwlimit) || !o->bwlimit)
				return usage_error("--bwlimit: '%s' is not a number of bytes per second from 1 to 16E-1 (e.g. 50M)",
						   optarg);
			break;
		case OPT_MAX_ERRORS:
			if (!parse_count(optarg, &o->max_errors) || !o->max_errors)
				return usage_error("--max-errors: '%s' is not a number from 1 to 2^64-1", optarg);
			break;
		case OPT_CGROUP_IO:
			if (!cgroup_io_parse(optarg, &o->cgio))
				return usage_error("--cgroup-io: '%s' is not a list of rbps=BYTES, wbps=BYTES, riops=N, "
						   "wiops=N (e.g. wbps=50M)",
						   optarg);
			o->use_cgio = true;
			break;
		case OPT_LINK_MEMORY:
			if (!parse_size(optarg, &o->link_memory))
				return usage_error("--link-memory: '%s' is not a size from 0 to 16E-1 (e.g. 64M)", optarg);
			break;
		case OPT_MAX_DELETE:
			if (!parse_count(optarg, &o->max_delete))
				return usage_error("--max-delete: '%s' is not a number of entries from 0 to 2^64-1", optarg);
			o->max_delete_set = true;
			break;
		default: return usage_hint();
		}
	}
	if (rc != OPTS_RUN)
		return rc;
	if (argc - optind != 2)
		return usage_error("need two operands: SRC DST");
	if (o->check && o->dry_run)
		return usage_error("--check and --dry-run do not go together");
	if (o->max_delete_set && !o->del)
		return usage_error("--max-delete limits --delete, which is not given");
	o->src = argv[optind];
	o->dst = argv[optind + 1];
	return OPTS_RUN;
}

static void copy_opts_free(void *opts)
{
	struct copy_opts *o = opts;
	job_opts_free(&o->jo);
}

static int copy_run(void *opts)
{
	struct copy_opts *o = opts;
	static struct copy c; /* large and shared by the workers */
	memset(&c, 0, sizeof(c));
	c.dry_run = o->dry_run;
	c.check = o->check;
	c.del = o->del;
	c.max_errors = o->max_errors;
	c.max_delete = o->max_delete;
	c.max_delete_set = o->max_delete_set;
	c.src = o->src;
	c.dst = o->dst;
	c.excludes = o->jo.excludes;
	c.nexcludes = o->jo.nexcludes;
	c.uid = geteuid();
	c.gid = getegid();
	c.root = c.uid == 0;
	c.umask = umask(077);
	umask(c.umask);
	c.xdev = o->xdev;
	int rc = check_operands(&c);
	if (rc)
		return rc;
	struct stat st;
	bool dst_exists = lstat(c.dst, &st) == 0;
	if (c.check && !dst_exists) {
		warnx_("%s: missing", c.dst);
		return EXIT_FAILED;
	}
	if (apply_ionice(o->jo.ioprio) != 0)
		return EXIT_USAGE;
	if (o->use_cgio) {
		char where[PATH_MAX];
		if (!path_resolve(c.dst, where))
			return usage_error("%s: %s", c.dst, strerror(errno));
		if (!dst_exists) /* it will be made in its parent */
			*(strrchr(where, '/') == where ? where + 1 : strrchr(where, '/')) = 0;
		if (cgroup_io_apply(&o->cgio, where, "copy") != 0)
			return EXIT_USAGE;
	}
	struct sbuf id = {0};
	job_identity(&id, "copy");
	identity_add_path(&id, c.src);
	identity_add_path(&id, c.dst); /* a relative DST is another job in another directory */
	ser_str(&id, c.src);
	ser_str(&id, c.dst);
	ser_u64(&id, c.dry_run | c.check << 1 | c.del << 2 | c.xdev << 3);
	identity_add_excludes(&id, &o->jo);
	char *trees[2] = {c.src, c.dst};
	rc = job_begin(&c.job, &o->jo, "copy", &id, trees, dst_exists ? 2 : 1);
	sbuf_free(&id);
	if (rc)
		return rc;
	if (!dst_exists && !c.dry_run && mkdir(c.dst, 0700) != 0) {
		warnx_("%s: mkdir: %s", c.dst, strerror(errno));
		ckpt_finish(c.job.ckpt);
		return EXIT_FAILED;
	}
	c.dstfd = open(c.dst, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c.dstfd < 0 && !(c.dry_run && errno == ENOENT)) {
		warnx_("%s: open: %s", c.dst, strerror(errno));
		ckpt_finish(c.job.ckpt);
		return EXIT_FAILED;
	}
	struct fs_id dst_id;
	if (c.dstfd >= 0 && fs_identity(c.dstfd, "", &dst_id) != 0) {
		warnx_("%s: statx: %s", c.dst, strerror(errno));
		ckpt_finish(c.job.ckpt);
		return EXIT_FAILED;
	}
	c.dst_mnt = c.dstfd >= 0 ? dst_id.mnt : 0;
	pthread_mutex_init(&c.link_lock, NULL);
	c.link_dir = c.job.ckpt ? ckpt_dir(c.job.ckpt) : NULL;
	c.links = linkmap_new(o->link_memory, c.link_dir);
	throttle_init(&c.bw, (double)o->bwlimit);
	/* Read small files ahead: not when --bwlimit paces every chunk, nor within one filesystem,
	 * where copy_file_range may share their blocks (a reflink) instead of copying them. */
	struct stat dst_st;
	c.prefetch = !c.check && !c.dry_run && o->bwlimit == 0 &&
		     prefetch_wanted(c.src, fstat(c.dstfd, &dst_st) == 0 && dst_st.st_dev != c.src_dev);
	struct throttle throttle;
	throttle_init(&throttle, o->jo.rate);
	char *roots[1] = {c.src};
	struct walk_config cfg = {
	    .roots = roots,
	    .nroots = 1,
	    .threads = job_threads(&o->jo, 8, 16, 0),
	    .min_threads = o->jo.threads ? 0 : cpu_count(),
	    .xdev = c.xdev,
	    .restart_on_resume = true,
	    .excludes = c.excludes,
	    .nexcludes = c.nexcludes,
	    .stat_mask = STATX_TYPE | STATX_MODE | STATX_NLINK | STATX_UID | STATX_GID | STATX_ATIME | STATX_MTIME |
			 STATX_INO | STATX_SIZE | STATX_BLOCKS,
	    .visitor = {.ctx = &c, .local_size = sizeof(struct local), .entry = copy_entry, .prepare = copy_prepare,
			.dir_done = copy_dir_done, .commit = copy_commit, .save = copy_save, .load = copy_load,
			.local_free = copy_local_free},
	    .errlog = &c.job.errlog,
	    .snapshot_name = job_snapshot_name(&c.job),
	    .throttle = o->jo.rate ? &throttle : NULL,
	};
	c.walk = walk_new(&cfg, job_snapshot(&c.job));
	if (!c.walk)
		return EXIT_USAGE;
	if (!c.check && !c.dry_run) { /* before anything is copied: it settles what the earlier runs did */
		c.tally = tally_open(c.job.ckpt ? ckpt_dir(c.job.ckpt) : NULL, cfg.threads, job_snapshot(&c.job) != NULL,
				     copy_settle, &c, &c.tally_exact);
		if (c.tally_exact)
			c.deleted = tally_total(c.tally, T_DELETED);
	}
	/* A resumed run has deleted some already (copy_load): the limit is the command's, not each run's. */
	c.delete_budget = c.max_delete > c.deleted ? c.max_delete - c.deleted : 0;
	estimate_total(&c);
	c.run_start_ns = now_ns();
	struct run_hooks hooks = walk_run_hooks(c.walk, copy_progress, NULL);
	enum run_result res = job_execute(&c.job, &hooks);
	double el = walk_elapsed(c.walk);
	uint64_t errors = walk_errors(c.walk);
	whole_job_counts(&c);
	print_summary(&c, res, el, errors, job_json_stdout(&o->jo) ? stderr : stdout);
	if (o->jo.json)
		write_summary(&c, o->jo.json, res, el, errors, o->jo.rate ? &throttle : NULL);
	rc = job_end(&c.job, res, errors);
	if (rc == EXIT_OK && c.max_delete_hit)
		rc = EXIT_FAILED; /* what --delete should have deleted is not all gone */
	if (res == RUN_DONE) {
		walk_free(c.walk);
		linkmap_free(c.links);
		tally_close(c.tally);
	}
	return rc;
}

const struct command cmd_copy = {"copy", "copy a tree like cp -a: sparse, hard links, xattrs; resumable, throttled",
				 sizeof(struct copy_opts), copy_parse, copy_run, copy_opts_free};
