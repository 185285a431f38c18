/*
 * copy_dst: the DST directory each SRC directory's entries go into. Entries of one directory come
 * to a worker together, so each worker keeps the last one open (struct local), and notes whether
 * this run made it empty: then nothing in it needs a stat, and what is made there gets its owner
 * and mode for free (copy_given_meta).
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cmd/copy/copy_int.h"
#include "io/dir.h"

/* DST's directory for SRC directory d, cached per worker: an fd, or -1 with errno. */
int copy_dst_dir(struct copy *c, struct local *l, const struct walk_dir *d)
{
	if (l->cvalid && l->cpath.len == d->pathlen && !memcmp(l->cpath.data, d->path, d->pathlen)) {
		if (l->cfd < 0) /* told once, to the first caller that reports (see copy_prepare) */
			errno = l->cuntold ? l->cerr : ENOENT, l->cuntold = false;
		return l->cfd;
	}
	if (l->cvalid && l->cfd >= 0)
		close(l->cfd);
	size_t rl;
	const char *rel = copy_rel_of(d, &rl);
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
