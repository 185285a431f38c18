/*
 * copy_check: --check, comparing each entry with its DST twin (type, size, mtime, mode, owner,
 * symlink target, xattrs, hard links, then the data) and each directory's metadata once its
 * contents are done; every difference is reported, nothing is written.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/copy/copy_int.h"
#include "io/copy.h"
#include "io/dir.h"

/* Compare a regular file's data with its DST twin (same size). 0 equal, 1 different (detail says
 * where), -1 failed (reported). */
static int check_content(struct copy_at *a, char *detail, size_t dlen)
{
	struct copy *c = a->c;
	const struct walk_entry *e = a->e;
	struct sbuf p = {0};
	int in = copy_open_src(a), out = -1, rc = -1, which = 1;
	if (in < 0)
		goto out;
	out = dir_open_file(a->dfd, e->name);
	if (out < 0) {
		copy_fail_op(a, e->name, "open", errno);
		goto out;
	}
	uint64_t at = 0;
	rc = copy_compare(in, out, e->stx->stx_size, c->bw.rate > 0 ? &c->bw : NULL, &a->l->bytes, &c->live_bytes,
			  &at, &which);
	if (rc < 0) {
		int err = errno;
		if (which == 0)
			copy_src_path(&p, a->d, e->name);
		else
			copy_dst_path(&p, c, a->d, e->name);
		copy_fail(a, &p, "read", err);
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

/* What differs between the entry and its DST twin (a->have) that both stats show, or NULL. */
static const char *check_stat(const struct copy_at *a)
{
	const struct statx *s = a->e->stx;
	const struct stat *have = a->have;
	if (!have)
		return "missing";
	if (!copy_same_type(s, have))
		return "different type";
	if (S_ISDIR(have->st_mode))
		return NULL;
	if (s->stx_size != (uint64_t)have->st_size)
		return "different size";
	if (!copy_same_time(&s->stx_mtime, &have->st_mtim))
		return "different mtime";
	if (!S_ISLNK(have->st_mode) && (have->st_mode & 07777) != (s->stx_mode & 07777u))
		return "different mode";
	if (have->st_uid != s->stx_uid || have->st_gid != s->stx_gid)
		return "different owner";
	return NULL;
}

bool copy_check_entry(struct copy_at *a)
{
	const struct walk_entry *e = a->e;
	const struct stat *have = a->have;
	const char *what = check_stat(a);
	char detail[64] = "";
	if (!what && S_ISDIR(have->st_mode))
		return false; /* its metadata is compared once its contents are (dir_done) */
	if (!what && S_ISLNK(have->st_mode)) {
		char x[PATH_MAX + 1], y[PATH_MAX + 1];
		ssize_t nx = readlinkat(a->d->fd, e->name, x, PATH_MAX), ny = readlinkat(a->dfd, e->name, y, PATH_MAX);
		if (nx != ny || nx < 0 || memcmp(x, y, nx))
			what = "different symlink target";
	}
	if (!what) {
		bool diff = false;
		const char *op;
		struct xref sx = {-1, a->d->fd, e->name}, dx = {-1, a->dfd, e->name};
		if (copy_xattrs(&sx, &dx, &diff, &op) == 0 && diff)
			what = "different xattrs";
	}
	if (!what && e->stx->stx_nlink > 1 && (what = copy_check_links(a)))
		snprintf(detail, sizeof(detail), "DST has a separate file where SRC has a hard link");
	if (!what && S_ISREG(have->st_mode)) {
		int r = check_content(a, detail, sizeof(detail));
		if (r < 0)
			return true;
		if (r > 0)
			what = "content differs";
	}
	if (!what) {
		if (S_ISREG(have->st_mode))
			a->l->files++;
		else
			a->l->others++;
		return false;
	}
	struct sbuf p = {0};
	copy_dst_path(&p, a->c, a->d, e->name);
	copy_problem(a, &p, what, *detail ? detail : "differs from SRC");
	sbuf_free(&p);
	return true;
}

/* Directory metadata compare (--check). */
void copy_check_dir(const struct copy_at *a, int sfd)
{
	struct stat s, t;
	if (fstat(sfd, &s) != 0 || fstat(a->dfd, &t) != 0)
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
		struct xref sx = {sfd, -1, NULL}, dx = {a->dfd, -1, NULL};
		if (copy_xattrs(&sx, &dx, &diff, &op) == 0 && diff)
			what = "different xattrs";
	}
	if (what) {
		struct sbuf p = {0};
		copy_dst_path(&p, a->c, a->d, NULL);
		copy_problem(a, &p, what, "differs from SRC");
		sbuf_free(&p);
	}
}
