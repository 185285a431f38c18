/*
 * copy_make: making an entry in DST: clearing what is in its way, creating it (file, symlink,
 * fifo, socket, device), filling a file's data and finishing it with its metadata, each announced
 * to the job's tally first so that a run killed half-way is counted right by the next.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cmd/copy/copy_int.h"
#include "io/copy.h"
#include "io/dir.h"
#include "io/prefetch.h"


struct tally_slot *copy_slot(struct copy *c, struct local *l)
{
	if (!l->claimed && c->tally)
		l->slot = tally_claim(c->tally);
	l->claimed = true;
	return l->slot;
}

/* Announce the entry, about to be finished (its mtime set last), counted by counter k once it
 * is: its path relative to SRC and DST. */
struct tally_slot *copy_announce(const struct copy_at *a, unsigned k)
{
	struct tally_slot *s = copy_slot(a->c, a->l);
	const struct walk_dir *d = a->d;
	const char *name = a->e->name;
	size_t rl = d->pathlen - d->relstart;
	if (rl)
		tally_begin(s, k, d->path + d->relstart, rl, name, strlen(name));
	else
		tally_begin(s, k, name, strlen(name), NULL, 0);
	return s;
}

/* Is the entry a killed run was finishing, rec relative to SRC and DST, up to date in DST (so
 * that a resumed pass counts it up to date, not copied)? Then count it, and a file's bytes. */
void copy_settle(void *ctx, unsigned counter, const char *rec, size_t len, uint64_t since, uint64_t *totals)
{
	struct copy *c = ctx;
	(void)since;
	struct sbuf a = {0}, b = {0};
	sbuf_printf(&a, "%s/%.*s", c->src, (int)len, rec);
	sbuf_printf(&b, "%s/%.*s", c->dst, (int)len, rec);
	struct statx sx;
	struct stat st;
	if (statx(AT_FDCWD, a.data, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx) == 0 &&
	    fstatat(AT_FDCWD, b.data, &st, AT_SYMLINK_NOFOLLOW) == 0 && copy_up_to_date(&sx, &st)) {
		totals[counter]++;
		if (counter == T_FILES && S_ISREG(st.st_mode) && st.st_nlink == 1)
			totals[T_BYTES] += st.st_size;
	}
	sbuf_free(&a);
	sbuf_free(&b);
}

/* Move a regular file's data from a->in (or copy_prepare's read-ahead) to a->out, the bytes
 * counted into *bytes. 0, or -1 with errno and a->op. */
static int move_data(struct copy_at *a, uint64_t *bytes)
{
	struct copy *c = a->c;
	struct local *l = a->l;
	const struct statx *s = a->e->stx;
	struct copy_src src = {s->stx_size, s->stx_blocks, makedev(s->stx_dev_major, s->stx_dev_minor)};
	int rc;
	a->op = "open";
	if (l->pre.data && l->pre.len == src.size) { /* read ahead by copy_prepare, after the statx */
		rc = copy_buffer(l->pre.data, l->pre.len, a->out, bytes, &c->live_bytes, &a->op);
		l->ahead += rc == 0;
	} else if (l->pre.err) { /* its read, which is not retried */
		rc = -1, a->op = "read", errno = l->pre.err;
	} else {
		rc = copy_data(a->in, a->out, &src, c->bw.rate > 0 ? &c->bw : NULL, bytes, &c->live_bytes, &a->op);
	}
	l->bytes += *bytes;
	return rc;
}

/* Copy a regular file's data into a->out (already created) and finish it. */
bool copy_fill_file(struct copy_at *a)
{
	const struct walk_entry *e = a->e;
	bool failed = true;
	uint64_t bytes = 0;
	struct tally_slot *slot = copy_announce(a, T_FILES);
	if (move_data(a, &bytes) != 0) {
		copy_fail_op(a, e->name, a->op, errno);
		goto out;
	}
	struct stat after;
	bool changed = fstat(a->in, &after) != 0 || (uint64_t)after.st_size != e->stx->stx_size ||
		       !copy_same_time(&e->stx->stx_mtime, &after.st_mtim);
	struct xref sx = {a->in, -1, NULL};
	if (copy_set_meta(a, e->stx, &sx, !changed) != 0) {
		copy_fail_op(a, e->name, a->op, errno);
		goto out;
	}
	if (changed) {
		struct sbuf p = {0};
		copy_src_path(&p, a->d, e->name);
		copy_problem(a, &p, "changed while copied", "its copy keeps no mtime: the next run copies it again");
		sbuf_free(&p);
		goto out;
	}
	a->l->files++;
	failed = false;
out:
	close(a->in);
	if (close(a->out) != 0 && !failed) {
		/* Its data may not be all there although it has its final size and mtime: remove it, so
		 * that the next run copies it again instead of taking it for complete. */
		int err = errno;
		unlinkat(a->dfd, e->name, 0);
		copy_fail_op(a, e->name, "close", err);
		failed = true;
		a->l->files--; /* counted above: it is not copied after all */
	}
	if (!failed) /* before the count: a kill between them leaves both to copy_settle */
		tally_add(slot, T_BYTES, bytes);
	tally_end(slot, T_FILES, !failed);
	return failed;
}

/* Open a source file for reading (without touching its atime when allowed): fd, or -1 reported.
 * A file copy_prepare read ahead comes with its fd and data (l->pre, for copy_fill_file). */
int copy_open_src(struct copy_at *a)
{
	struct local *l = a->l;
	const struct walk_entry *e = a->e;
	l->pre = (struct prefetched){-1, 0, NULL, 0};
	if (e->type != DT_REG)
		return a->in = INT_MAX; /* nothing to open */
	if (l->pf && prefetch_take(l->pf, e->name, &l->pre)) {
		a->in = l->pre.fd;
		errno = l->pre.err;
	} else {
		a->in = dir_open_file(a->d->fd, e->name);
	}
	if (a->in < 0) {
		struct sbuf p = {0};
		copy_src_path(&p, a->d, e->name);
		copy_fail(a, &p, "open", errno);
		sbuf_free(&p);
	}
	return a->in;
}

/* Create the DST entry (a file: open, into a->out) with no metadata yet, but for what a->has
 * (copy_given_meta) says it is made with. 0 or -1, a->op set. */
int copy_create_entry(struct copy_at *a)
{
	const struct walk_entry *e = a->e;
	const struct statx *s = e->stx;
	int dfd = a->dfd;
	a->out = -1;
	switch (s->stx_mode & S_IFMT) {
	case S_IFREG:
		a->op = "open";
		a->out = openat(dfd, e->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				a->has & HAS_MODE ? s->stx_mode & 0777 : 0600);
		return a->out < 0 ? -1 : 0;
	case S_IFLNK: {
		char target[PATH_MAX + 1];
		a->op = "readlink";
		ssize_t n = readlinkat(a->d->fd, e->name, target, PATH_MAX);
		if (n < 0)
			return -1;
		target[n] = 0;
		a->op = "symlink";
		return symlinkat(target, dfd, e->name);
	}
	default:
		a->op = "mknod";
		return mknodat(dfd, e->name, (s->stx_mode & S_IFMT) | 0600, makedev(s->stx_rdev_major, s->stx_rdev_minor));
	}
}

/* Make way for a new entry: remove a DST non-directory or empty directory (with --delete, any
 * directory tree, but never a mount point). 0; -1 with errno and a->op; 1 failed, reported. */
int copy_clear_dst(struct copy_at *a)
{
	const struct stat *have = a->have;
	const char *name = a->e->name;
	if (!have)
		return 0;
	if (S_ISDIR(have->st_mode)) {
		/* An empty directory goes (nothing is lost); a full one only with --delete. */
		a->op = "rmdir";
		struct fs_id id;
		enum guard_verdict v = fs_identity(a->dfd, name, &id) == 0 ? guard_id(&a->c->guard, &id) : GUARD_OK;
		if (v != GUARD_OK) { /* the working directory (empty) or one above it: rm's guard keeps it */
			struct sbuf p = {0};
			copy_dst_path(&p, a->c, a->d, name);
			copy_problem(a, &p, "not deleted", guard_rule(v));
			sbuf_free(&p);
			return 1;
		}
		if (!a->c->del)
			return unlinkat(a->dfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT ? -1 : 0;
		return copy_delete_tree(a, name) ? 1 : 0;
	}
	a->op = "unlink";
	return unlinkat(a->dfd, name, 0) != 0 && errno != ENOENT ? -1 : 0;
}

/* A symlink, fifo, socket or device just created: its metadata, announced and counted. */
static bool finish_other(struct copy_at *a)
{
	const struct walk_entry *e = a->e;
	bool failed = true;
	struct xref sx = {-1, a->d->fd, e->name};
	unsigned k = S_ISLNK(e->stx->stx_mode) ? T_LINKS : T_OTHERS;
	struct tally_slot *slot = copy_announce(a, k);
	if (copy_set_meta(a, e->stx, &sx, true) != 0) {
		copy_fail_op(a, e->name, a->op, errno);
	} else {
		failed = false;
		if (k == T_LINKS)
			a->l->links++;
		else
			a->l->others++;
	}
	tally_end(slot, k, !failed);
	return failed;
}

/* Copy a non-directory. Returns true when it failed. */
bool copy_make_entry(struct copy_at *a)
{
	a->op = "unlink";
	a->out = -1;
	if (copy_open_src(a) < 0)
		return true;
	a->has = copy_given_meta(a);
	int rc = copy_clear_dst(a);
	if (rc == 0 && copy_create_entry(a) != 0)
		rc = -1;
	if (rc != 0) {
		int err = errno;
		if (rc < 0)
			copy_fail_op(a, a->e->name, a->op, err);
		if (a->in != INT_MAX)
			close(a->in);
		return true;
	}
	return a->out >= 0 ? copy_fill_file(a) : finish_other(a);
}
