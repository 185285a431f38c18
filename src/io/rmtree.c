/* rmtree: remove a tree below a directory fd without recursion (see rmtree.h). */
#include "io/rmtree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/dir.h"
#include "util/util.h"

bool rm_budget_take(_Atomic uint64_t *budget)
{
	if (!budget)
		return true;
	uint64_t n = atomic_load(budget);
	while (n > 0)
		if (atomic_compare_exchange_weak(budget, &n, n - 1))
			return true;
	return false;
}

/* One directory on remove_tree's way down: what it must still be when the walk comes back up to
 * it through "..", where its reading goes on, and where its name ends in t->where. */
struct rt_level {
	uint64_t dev, ino;
	int64_t resume; /* d_off of the entry gone down into: reading goes on after it */
	size_t end;     /* its path is where[0, end) */
	bool kept;      /* something under it stays (a mount point): it cannot go */
	bool reopened;  /* read on from resume by a new open: read once more from the start */
};

/* t->where = where[0, end) + "/" + name (name NULL: just the first part), NUL-terminated. */
static void rt_path(struct rm_tree *t, size_t end, const char *name)
{
	t->where.len = end;
	if (name) {
		sbuf_addc(&t->where, '/');
		sbuf_adds(&t->where, name);
	}
	sbuf_addc(&t->where, 0);
	t->where.len--;
}

/* Remove one entry (flags: 0 or AT_REMOVEDIR) if the budget allows. 0, or -1 with errno. */
static int rt_unlink(struct rm_tree *t, int dirfd, const char *name, int flags)
{
	if (!rm_budget_take(t->budget)) {
		errno = ECANCELED;
		return -1;
	}
	if (t->count_only || unlinkat(dirfd, name, flags) == 0) {
		t->removed++;
		return 0;
	}
	int e = errno;
	if (t->budget)
		atomic_fetch_add(t->budget, 1);
	errno = e;
	return -1;
}

/* Open directory name in dirfd (its path in t->where) to empty it: the fd with *id; -2 when it is
 * the root of another mount than t->mnt, or a directory t->guard keeps (told, left alone); -1 with
 * errno. Both are checked on the open fd, so a mount or a rename between a check and the open cannot
 * slip in. */
static int rt_open(struct rm_tree *t, int dirfd, const char *name, struct fs_id *id)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fs_identity(fd, "", id) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	enum guard_verdict v = t->guard ? guard_id(t->guard, id) : GUARD_OK;
	if (id->mnt == t->mnt && v == GUARD_OK)
		return fd;
	close(fd);
	t->kept = true;
	if (t->left_alone)
		t->left_alone(t->arg, t->where.data, t->where.len, id->mnt == t->mnt ? v : GUARD_OK);
	return -2;
}

/* Leave the emptied directory lv[*depth - 1] (open as *fd) for its parent: go up through "..",
 * which must still be the directory we came down from, remove the child unless something in it
 * was kept, and seek the parent back to where its reading stopped. 0, or -1 with errno and t->op. */
static int rt_up(struct rm_tree *t, int *fd, struct rt_level *lv, size_t *depth)
{
	struct rt_level *cur = &lv[*depth - 1], *up = &lv[*depth - 2];
	struct fs_id pid;
	t->op = "open ..";
	rt_path(t, cur->end, NULL);
	int pfd = openat(*fd, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return -1;
	if (fs_identity(pfd, "", &pid) != 0 || pid.dev != up->dev || pid.ino != up->ino || pid.mnt != t->mnt) {
		close(pfd);
		errno = ESTALE; /* moved while it was emptied */
		return -1;
	}
	close(*fd);
	*fd = pfd;
	char cname[NAME_MAX + 1];
	size_t start = up->end + 1, len = cur->end - start;
	memcpy(cname, t->where.data + start, len);
	cname[len] = 0;
	bool kept = cur->kept;
	(*depth)--;
	if (kept) {
		up->kept = true;
	} else if (rt_unlink(t, *fd, cname, AT_REMOVEDIR) != 0) {
		t->op = "rmdir";
		rt_path(t, up->end, cname);
		return -1;
	}
	rt_path(t, up->end, NULL);
	t->op = "lseek";
	if (lseek(*fd, up->resume, SEEK_SET) < 0)
		return -1;
	up->reopened = true;
	return 0;
}

/* Counting only, nothing is unlinked to find out: is this entry of unknown type a directory? */
static bool rt_unknown_dir(const struct rm_tree *t, int fd, const struct linux_dirent64 *de)
{
	struct stat st;
	return t->count_only && de->d_type == DT_UNKNOWN && fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISDIR(st.st_mode);
}

/* Remove the non-directories of one getdents buffer (n bytes) of the directory open as *fd; at
 * the first directory, go down into it (holding only its fd: *fd becomes it, a level is pushed on
 * *lv) and leave the rest of the buffer to be read again. 0, or -1 with errno and t->op. */
static int rt_scan(struct rm_tree *t, int *fd, const char *buf, ssize_t n, struct rt_level **lv, size_t *depth,
		   size_t *cap)
{
	struct rt_level *cur = &(*lv)[*depth - 1];
	for (ssize_t off = 0; off < n;) {
		const struct linux_dirent64 *de = (const void *)(buf + off);
		off += de->d_reclen;
		if (dir_is_dot(de->d_name))
			continue;
		if (t->keep && t->keep->n && excludes_match(t->keep, *fd, de->d_name, de->d_type)) {
			cur->kept = t->kept = true; /* excluded: it stays, and the directories above it */
			continue;
		}
		int unlink_err = 0;
		if (de->d_type != DT_DIR && !rt_unknown_dir(t, *fd, de)) {
			if (rt_unlink(t, *fd, de->d_name, 0) == 0 || errno == ENOENT)
				continue;
			unlink_err = errno;
			if (errno != EISDIR && errno != EPERM) {
				t->op = "unlink";
				rt_path(t, cur->end, de->d_name);
				return -1;
			}
		}
		/* A directory: go down into it, holding only its fd. */
		rt_path(t, cur->end, de->d_name);
		struct fs_id cid;
		t->op = "open";
		int cfd = rt_open(t, *fd, de->d_name, &cid);
		if (cfd == -2) {
			cur->kept = true;
			continue;
		}
		if (cfd < 0) {
			if (errno == ENOENT)
				continue;
			if (unlink_err && errno == ENOTDIR) /* not a directory: the unlink's own failure */
				t->op = "unlink", errno = unlink_err;
			return -1;
		}
		if (*depth == *cap)
			*lv = xrealloc(*lv, (*cap *= 2) * sizeof(**lv));
		(*lv)[*depth - 1].resume = de->d_off;
		(*lv)[(*depth)++] = (struct rt_level){cid.dev, cid.ino, 0, t->where.len, false, false};
		close(*fd);
		*fd = cfd;
		return 0; /* the rest of this buffer is read again from resume */
	}
	return 0;
}

int remove_tree(int dirfd, const char *name, struct rm_tree *t)
{
	t->removed = 0;
	t->kept = false;
	t->op = "stat";
	sbuf_clear(&t->where);
	rt_path(t, 0, NULL);
	sbuf_adds(&t->where, name);
	rt_path(t, t->where.len, NULL);
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return -1;
	t->op = "unlink";
	if (!S_ISDIR(st.st_mode))
		return rt_unlink(t, dirfd, name, 0);
	struct fs_id id;
	t->op = "open";
	int fd = rt_open(t, dirfd, name, &id);
	if (fd < 0) {
		if (fd == -2)
			errno = EBUSY;
		return -1;
	}
	size_t depth = 1, cap = 16;
	struct rt_level *lv = xmalloc(cap * sizeof(*lv));
	lv[0] = (struct rt_level){id.dev, id.ino, 0, t->where.len, false, false};
	_Alignas(8) char buf[32768];
	int rc = -1;
	for (;;) {
		struct rt_level *cur = &lv[depth - 1];
		ssize_t n = dir_read(fd, buf, sizeof(buf));
		if (n < 0) {
			t->op = "getdents";
			rt_path(t, cur->end, NULL);
			goto out;
		}
		if (n == 0) {
			/* Read on from a position taken on another open: where positions are ordinals (tmpfs
			 * before Linux 6.6) the names removed before it made it skip some. Read again (not
			 * when counting: nothing was removed, and what was read would be counted twice). */
			if (cur->reopened && !cur->kept && !t->count_only && lseek(fd, 0, SEEK_SET) == 0) {
				cur->reopened = false;
				continue;
			}
			if (depth == 1)
				break;
			if (rt_up(t, &fd, lv, &depth) != 0)
				goto out;
			continue;
		}
		if (rt_scan(t, &fd, buf, n, &lv, &depth, &cap) != 0)
			goto out;
	}
	close(fd);
	fd = -1;
	rt_path(t, lv[0].end, NULL);
	t->op = "rmdir";
	if (lv[0].kept)
		errno = ENOTEMPTY;
	else
		rc = rt_unlink(t, dirfd, name, AT_REMOVEDIR);
out:;
	int e = errno;
	if (fd >= 0)
		close(fd);
	free(lv);
	errno = e;
	return rc;
}
