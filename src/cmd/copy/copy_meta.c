/*
 * copy_meta: an entry's metadata in DST (owner, xattrs and ACLs, mode, times), and when an entry
 * counts as finished. The mtime goes last: an entry with the source's size and mtime is complete,
 * which is all a resumed run needs to skip it.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/copy/copy_int.h"
#include "io/copy.h"

bool copy_same_time(const struct statx_timestamp *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == (uint32_t)b->tv_nsec;
}

bool copy_same_type(const struct statx *s, const struct stat *d) { return (s->stx_mode & S_IFMT) == (d->st_mode & S_IFMT); }

/* Is the DST entry finished: same type, and for a non-directory same size and mtime? */
bool copy_up_to_date(const struct statx *s, const struct stat *d)
{
	if (!copy_same_type(s, d))
		return false;
	return S_ISDIR(d->st_mode) || (s->stx_size == (uint64_t)d->st_size && copy_same_time(&s->stx_mtime, &d->st_mtim));
}

unsigned copy_given_meta(const struct copy_at *a)
{
	const struct copy *c = a->c;
	const struct statx *s = a->e->stx;
	if (!a->l->cplain)
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

/* Owner, xattrs, mode, then times (last: a finished entry is one with its mtime). The DST entry:
 * the open file a->out, else e's name in a->dfd; with e NULL, the directory a->dfd. sx: the
 * source's xattr reference; a->has: what the entry already has (HAS_*). Returns 0 or -1 with
 * errno and a->op. */
int copy_set_meta(struct copy_at *a, const struct statx *s, const struct xref *sx, bool times)
{
	int fd = a->e ? a->out : a->dfd, dfd = a->e ? a->dfd : -1;
	const char *name = a->e ? a->e->name : NULL;
	unsigned has = a->has;
	bool lnk = S_ISLNK(s->stx_mode);
	if (a->c->root && !(has & HAS_OWNER) && (fd >= 0 ? fchown(fd, s->stx_uid, s->stx_gid)
				: fchownat(dfd, name, s->stx_uid, s->stx_gid, AT_SYMLINK_NOFOLLOW)) != 0) {
		a->op = "chown";
		return -1;
	}
	struct xref dx = {fd, dfd, name};
	if (copy_xattrs(sx, &dx, NULL, &a->op) != 0)
		return -1;
	/* (An access ACL copied above sets the group bits from its mask: the source's, as its mode.) */
	if (!lnk && !(has & HAS_MODE) && (fd >= 0 ? fchmod(fd, s->stx_mode & 07777) : fchmodat(dfd, name, s->stx_mode & 07777, AT_SYMLINK_NOFOLLOW)) != 0) {
		a->op = "chmod";
		return -1;
	}
	if (!times)
		return 0;
	struct timespec ts[2] = {{s->stx_atime.tv_sec, s->stx_atime.tv_nsec}, {s->stx_mtime.tv_sec, s->stx_mtime.tv_nsec}};
	if ((fd >= 0 ? futimens(fd, ts) : utimensat(dfd, name, ts, AT_SYMLINK_NOFOLLOW)) != 0) {
		a->op = "utimensat";
		return -1;
	}
	return 0;
}

/* A finished entry: fix a mode or owner that changed since (cheap, both are known). */
void copy_touch_up(const struct copy_at *a)
{
	const struct statx *s = a->e->stx;
	const struct stat *have = a->have;
	if (a->c->root && (have->st_uid != s->stx_uid || have->st_gid != s->stx_gid))
		fchownat(a->dfd, a->e->name, s->stx_uid, s->stx_gid, AT_SYMLINK_NOFOLLOW);
	if (!S_ISLNK(have->st_mode) && (have->st_mode & 07777) != (s->stx_mode & 07777u))
		fchmodat(a->dfd, a->e->name, s->stx_mode & 07777, AT_SYMLINK_NOFOLLOW);
}
