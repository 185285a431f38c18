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

/* Announce the entry name of d, about to be finished (its mtime set last), counted by counter k
 * once it is: its path relative to SRC and DST. */
struct tally_slot *copy_announce(struct copy *c, struct local *l, unsigned k, const struct walk_dir *d,
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

/* Copy a regular file's data into out (already created) and finish it. */
bool copy_fill_file(struct copy *c, struct local *l, const struct walk_dir *d, const struct walk_entry *e, int dfd,
		    int in, int out, unsigned has, struct errbatch *errs)
{
	struct sbuf p = {0};
	const char *op = "open";
	bool failed = true;
	uint64_t bytes = 0;
	const struct statx *s = e->stx;
	struct copy_src src = {s->stx_size, s->stx_blocks, makedev(s->stx_dev_major, s->stx_dev_minor)};
	struct tally_slot *slot = copy_announce(c, l, T_FILES, d, e->name);
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
		copy_op_path(&p, c, d, e->name, op);
		copy_fail(c, errs, &p, op, err);
		goto out;
	}
	struct stat after;
	bool changed = fstat(in, &after) != 0 || (uint64_t)after.st_size != e->stx->stx_size ||
		       !copy_same_time(&e->stx->stx_mtime, &after.st_mtim);
	struct xref sx = {in, -1, NULL};
	if (copy_set_meta(c, e->stx, dfd, e->name, out, &sx, !changed, has, &op) != 0) {
		int err = errno;
		copy_op_path(&p, c, d, e->name, op);
		copy_fail(c, errs, &p, op, err);
		goto out;
	}
	if (changed) {
		copy_src_path(&p, d, e->name);
		copy_problem(c, errs, &p, "changed while copied", "its copy keeps no mtime: the next run copies it again");
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
		copy_dst_path(&p, c, d, e->name);
		copy_fail(c, errs, &p, "close", err);
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
 * A file copy_prepare read ahead comes with its fd and data (l->pre, for copy_fill_file). */
int copy_open_src(struct copy *c, struct local *l, const struct walk_dir *d, const struct walk_entry *e,
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
		copy_src_path(&p, d, e->name);
		copy_fail(c, errs, &p, "open", errno);
		sbuf_free(&p);
	}
	return in;
}

/* Create the DST entry (a file: open, returned in *out) with no metadata yet, but for what has
 * (HAS_*: copy_given_meta) says it is made with. 0 or -1, *op set. */
int copy_create_entry(const struct walk_dir *d, const struct walk_entry *e, int dfd, unsigned has, int *out,
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

/* Make way for a new entry: remove a DST non-directory or empty directory (with --delete, any
 * directory tree, but never a mount point). 0; -1 with errno and *op; 1 failed, reported. */
int copy_clear_dst(struct copy *c, struct local *l, const struct walk_dir *d, int dfd, const char *name,
		   const struct stat *have, struct errbatch *errs, const char **op)
{
	if (!have)
		return 0;
	if (S_ISDIR(have->st_mode)) {
		/* An empty directory goes (nothing is lost); a full one only with --delete. */
		*op = "rmdir";
		struct fs_id id;
		enum guard_verdict v = fs_identity(dfd, name, &id) == 0 ? guard_id(&c->guard, &id) : GUARD_OK;
		if (v != GUARD_OK) { /* the working directory (empty) or one above it: rm's guard keeps it */
			struct sbuf p = {0};
			copy_dst_path(&p, c, d, name);
			copy_problem(c, errs, &p, "not deleted", guard_rule(v));
			sbuf_free(&p);
			return 1;
		}
		if (!c->del)
			return unlinkat(dfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT ? -1 : 0;
		return copy_delete_tree(c, l, d, dfd, name, errs) ? 1 : 0;
	}
	*op = "unlink";
	return unlinkat(dfd, name, 0) != 0 && errno != ENOENT ? -1 : 0;
}

/* Copy a non-directory. Returns true when it failed. */
bool copy_make_entry(struct copy *c, struct local *l, const struct walk_dir *d, const struct walk_entry *e, int dfd,
		     const struct stat *have, struct errbatch *errs)
{
	struct sbuf p = {0};
	const char *op = "unlink";
	int out = -1;
	bool failed = true;
	int in = copy_open_src(c, l, d, e, errs);
	if (in < 0)
		return true;
	unsigned has = copy_given_meta(c, l, e->stx);
	int rc = copy_clear_dst(c, l, d, dfd, e->name, have, errs, &op);
	if (rc == 0 && copy_create_entry(d, e, dfd, has, &out, &op) != 0)
		rc = -1;
	if (rc != 0) {
		int err = errno;
		if (rc < 0) {
			copy_op_path(&p, c, d, e->name, op);
			copy_fail(c, errs, &p, op, err);
		}
		if (in != INT_MAX)
			close(in);
	} else if (out >= 0) {
		failed = copy_fill_file(c, l, d, e, dfd, in, out, has, errs);
	} else {
		struct xref sx = {-1, d->fd, e->name};
		unsigned k = S_ISLNK(e->stx->stx_mode) ? T_LINKS : T_OTHERS;
		struct tally_slot *slot = copy_announce(c, l, k, d, e->name);
		if (copy_set_meta(c, e->stx, dfd, e->name, -1, &sx, true, has, &op) != 0) {
			int err = errno;
			copy_op_path(&p, c, d, e->name, op);
			copy_fail(c, errs, &p, op, err);
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
