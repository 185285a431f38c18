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
static int check_content(struct copy *c, struct local *l, const struct walk_dir *d, const struct walk_entry *e,
			 int dfd, struct errbatch *errs, char *detail, size_t dlen)
{
	struct sbuf p = {0};
	int in = copy_open_src(c, l, d, e, errs), out = -1, rc = -1, which = 1;
	if (in < 0)
		goto out;
	out = dir_open_file(dfd, e->name);
	if (out < 0) {
		copy_dst_path(&p, c, d, e->name);
		copy_fail(c, errs, &p, "open", errno);
		goto out;
	}
	uint64_t at = 0;
	rc = copy_compare(in, out, e->stx->stx_size, c->bw.rate > 0 ? &c->bw : NULL, &l->bytes, &c->live_bytes, &at,
			  &which);
	if (rc < 0) {
		int err = errno;
		if (which == 0)
			copy_src_path(&p, d, e->name);
		else
			copy_dst_path(&p, c, d, e->name);
		copy_fail(c, errs, &p, "read", err);
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

bool copy_check_entry(struct copy *c, struct local *l, const struct walk_dir *d, const struct walk_entry *e, int dfd,
		      const struct stat *have, struct errbatch *errs)
{
	const struct statx *s = e->stx;
	const char *what = NULL;
	char detail[64] = "";
	if (!have)
		what = "missing";
	else if (!copy_same_type(s, have))
		what = "different type";
	else if (S_ISDIR(have->st_mode))
		return false; /* its metadata is compared once its contents are (dir_done) */
	else if (s->stx_size != (uint64_t)have->st_size)
		what = "different size";
	else if (!copy_same_time(&s->stx_mtime, &have->st_mtim))
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
	if (!what && s->stx_nlink > 1 && (what = copy_check_links(c, d, e, have)))
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
	copy_dst_path(&p, c, d, e->name);
	copy_problem(c, errs, &p, what, *detail ? detail : "differs from SRC");
	sbuf_free(&p);
	return true;
}

/* Directory metadata compare (--check). */
void copy_check_dir(struct copy *c, const struct walk_dir *d, int sfd, int dfd, struct errbatch *errs)
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
		copy_dst_path(&p, c, d, NULL);
		copy_problem(c, errs, &p, what, "differs from SRC");
		sbuf_free(&p);
	}
}
