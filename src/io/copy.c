/* copy: data, xattrs and tree removal for myriad copy (see copy.h). */
#include "io/copy.h"

#include <dirent.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "io/dir.h"
#include "util/util.h"

/* The source device on which copy_file_range last failed with EXDEV, ENOSYS or EOPNOTSUPP (it
 * cannot, whatever the file): files from it go straight to read/write, one wasted call per run
 * instead of one per file. */
static _Atomic uint64_t no_cfr_dev = UINT64_MAX;

/* Copy [off, end) with copy_file_range, or with pread/pwrite where the kernel cannot. Returns the
 * offset reached (end, or less when the source ended early), or -1 with errno and *op. */
static off_t copy_range(int in, int out, uint64_t dev, off_t off, off_t end, struct throttle *bw, uint64_t *bytes,
			_Atomic uint64_t *live, const char **op)
{
	static __thread char *buf;
	bool use_cfr = no_cfr_dev != dev;
	while (off < end) {
		size_t n = end - off > COPY_CHUNK ? COPY_CHUNK : (size_t)(end - off);
		if (bw)
			throttle_take(bw, n);
		ssize_t r = -1;
		if (use_cfr) {
			loff_t a = off, b = off;
			r = copy_file_range(in, &a, out, &b, n, 0);
			if (r < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP ||
				      errno == EBADF)) {
				use_cfr = false;
				if (errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP)
					no_cfr_dev = dev; /* the device's answer, not this file's */
				r = -1;
			} else if (r < 0) {
				*op = "copy_file_range";
				return -1;
			}
		}
		if (!use_cfr) {
			if (!buf)
				buf = xmalloc(COPY_CHUNK);
			r = pread(in, buf, n, off);
			if (r < 0) {
				*op = "read";
				return -1;
			}
			if (pwrite_all(out, buf, r, off) != 0) {
				*op = "write";
				return -1;
			}
		}
		if (r == 0)
			break; /* the source shrank: the caller sees it in its before/after compare */
		off += r;
		*bytes += r;
		if (live)
			*live += r;
	}
	return off;
}

int copy_data(int in, int out, const struct copy_src *src, struct throttle *bw, uint64_t *bytes,
	      _Atomic uint64_t *live, const char **op)
{
	off_t off = 0, end = (off_t)src->size, reached = 0;
	/* As many bytes allocated as the size: no holes to find (what cp also assumes). */
	bool dense = src->blocks * 512 >= src->size;
	while (off < end) {
		off_t data = dense ? off : lseek(in, off, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			break; /* a hole up to the end */
		off_t hole = dense || data < 0 ? end : lseek(in, data, SEEK_HOLE);
		if (data < 0) /* no SEEK_DATA here: everything is data */
			data = off;
		if (hole < 0 || hole > end)
			hole = end;
		reached = copy_range(in, out, src->dev, data, hole, bw, bytes, live, op);
		if (reached < 0)
			return -1;
		if (reached < hole)
			break; /* the source shrank */
		off = hole;
	}
	/* A hole at the end (or a source that shrank) leaves out short: give it the size. */
	if (reached < end && ftruncate(out, end) != 0) {
		*op = "ftruncate";
		return -1;
	}
	return 0;
}

int copy_buffer(const void *data, size_t len, int out, uint64_t *bytes, _Atomic uint64_t *live, const char **op)
{
	if (pwrite_all(out, data, len, 0) != 0) {
		*op = "write";
		return -1;
	}
	*bytes += len;
	if (live)
		*live += len;
	return 0;
}

int copy_compare(int a, int b, uint64_t size, struct throttle *bw, uint64_t *bytes, _Atomic uint64_t *live,
		 uint64_t *at, int *which)
{
	static __thread char *ba, *bb;
	if (!ba) {
		ba = xmalloc(COPY_CHUNK);
		bb = xmalloc(COPY_CHUNK);
	}
	for (uint64_t off = 0; off < size;) {
		size_t n = size - off > COPY_CHUNK ? COPY_CHUNK : (size_t)(size - off);
		if (bw)
			throttle_take(bw, n);
		ssize_t ra = pread_all(a, ba, n, (off_t)off);
		if (ra < 0) {
			*which = 0;
			return -1;
		}
		ssize_t rb = pread_all(b, bb, n, (off_t)off);
		if (rb < 0) {
			*which = 1;
			return -1;
		}
		*bytes += ra;
		if (live)
			*live += ra;
		size_t same = 0, m = ra < rb ? ra : rb;
		if (memcmp(ba, bb, m) != 0)
			while (ba[same] == bb[same])
				same++;
		else
			same = m;
		if (same < (size_t)ra || same < (size_t)rb || (size_t)ra < n) {
			*at = off + same; /* a difference, or one of them ended early */
			return 1;
		}
		off += n;
	}
	return 0;
}

/* "/proc/self/fd/N/NAME": a short path to a name under any directory fd, for the l*xattr calls. */
static void xpath(char *buf, size_t len, const struct xref *x)
{
	snprintf(buf, len, "/proc/self/fd/%d/%s", x->dirfd, x->name);
}

static ssize_t x_list(const struct xref *x, char *list, size_t size)
{
	if (x->fd >= 0)
		return flistxattr(x->fd, list, size);
	char p[320];
	xpath(p, sizeof(p), x);
	return llistxattr(p, list, size);
}

static ssize_t x_get(const struct xref *x, const char *key, void *val, size_t size)
{
	if (x->fd >= 0)
		return fgetxattr(x->fd, key, val, size);
	char p[320];
	xpath(p, sizeof(p), x);
	return lgetxattr(p, key, val, size);
}

static int x_set(const struct xref *x, const char *key, const void *val, size_t size)
{
	if (x->fd >= 0)
		return fsetxattr(x->fd, key, val, size, 0);
	char p[320];
	xpath(p, sizeof(p), x);
	return lsetxattr(p, key, val, size, 0);
}

/* The xattr names of x into a malloc'd buffer (*len bytes; NULL when there are none). */
static char *x_names(const struct xref *x, ssize_t *len)
{
	for (;;) {
		ssize_t n = x_list(x, NULL, 0);
		if (n < 0 && (errno == ENOTSUP || errno == EOPNOTSUPP))
			n = 0;
		if (n <= 0) {
			*len = n;
			return NULL;
		}
		char *b = xmalloc(n);
		ssize_t m = x_list(x, b, n);
		if (m >= 0) {
			*len = m;
			return b;
		}
		free(b);
		if (errno != ERANGE) {
			*len = -1;
			return NULL;
		}
	}
}

/* The value of key on x into a malloc'd buffer (*len bytes), or NULL with errno. */
static char *x_value(const struct xref *x, const char *key, ssize_t *len)
{
	for (;;) {
		ssize_t n = x_get(x, key, NULL, 0);
		if (n < 0)
			return NULL;
		char *b = xmalloc(n + 1);
		ssize_t m = x_get(x, key, b, n);
		if (m >= 0) {
			*len = m;
			return b;
		}
		free(b);
		if (errno != ERANGE)
			return NULL;
	}
}

/* Does to hold key with exactly val? */
static bool x_same(const struct xref *to, const char *key, const char *val, ssize_t len)
{
	ssize_t l2;
	char *v2 = x_value(to, key, &l2);
	bool same = v2 && l2 == len && !memcmp(v2, val, len);
	free(v2);
	return same;
}

int copy_xattrs(const struct xref *from, const struct xref *to, bool *diff, const char **op)
{
	ssize_t len;
	char *names = x_names(from, &len);
	if (len < 0) {
		*op = "listxattr";
		return -1;
	}
	int rc = 0;
	size_t count = 0;
	for (ssize_t i = 0; i < len && rc == 0; i += strlen(names + i) + 1) {
		ssize_t vlen;
		char *val = x_value(from, names + i, &vlen);
		count++;
		if (!val) {
			if (errno == ENODATA)
				continue; /* removed meanwhile */
			*op = "getxattr";
			rc = -1;
		} else if (diff) {
			if (!x_same(to, names + i, val, vlen))
				*diff = true;
		} else if (x_set(to, names + i, val, vlen) != 0) {
			*op = "setxattr";
			rc = -1;
		}
		free(val);
	}
	free(names);
	if (rc == 0 && diff && !*diff) { /* same values for every source name: extra names on to? */
		ssize_t tlen;
		char *tn = x_names(to, &tlen);
		size_t tcount = 0;
		for (ssize_t i = 0; i < tlen; i += strlen(tn + i) + 1)
			tcount++;
		if (tcount != count)
			*diff = true;
		free(tn);
	}
	return rc;
}

/* ---- remove_tree ---- */

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
	if (unlinkat(dirfd, name, flags) == 0) {
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
 * the root of another mount than t->mnt (told, left alone); -1 with errno. The mount is checked on
 * the open fd, so a mount made between a check and the open cannot slip in. */
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
	if (id->mnt == t->mnt)
		return fd;
	close(fd);
	t->kept = true;
	if (t->mount_point)
		t->mount_point(t->arg, t->where.data, t->where.len);
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
		int unlink_err = 0;
		if (de->d_type != DT_DIR) {
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
			 * before Linux 6.6) the names removed before it made it skip some. Read again. */
			if (cur->reopened && !cur->kept && lseek(fd, 0, SEEK_SET) == 0) {
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

/* ---- dir_within ---- */

/* Is path a equal to or under path b (both absolute)? */
static bool path_under(const char *a, const char *b)
{
	size_t n = strlen(b);
	if (n == 1 && b[0] == '/')
		return true;
	return !strncmp(a, b, n) && (a[n] == 0 || a[n] == '/');
}

/* Undo mountinfo's octal escapes (\040 for a space...) in place. */
static void unescape_octal(char *s)
{
	char *w = s;
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = 0;
}

/* Mount mnt from /proc/self/mountinfo: its filesystem ("major:minor"), its root (the path in that
 * filesystem it shows) and its mount point (PATH_MAX bytes each). 0, or -1 with errno. */
static int mount_of(uint64_t mnt, char dev[32], char *root, char *point)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -1;
	char *line = NULL, *save;
	size_t cap = 0;
	int rc = -1;
	errno = ENOENT;
	while (rc != 0 && getline(&line, &cap, f) > 0) {
		char *id = strtok_r(line, " ", &save), *parent = strtok_r(NULL, " ", &save);
		char *d = strtok_r(NULL, " ", &save), *r = strtok_r(NULL, " ", &save), *p = strtok_r(NULL, " ", &save);
		if (!p || !parent || strtoull(id, NULL, 10) != mnt || strlen(d) >= 32 || strlen(r) >= PATH_MAX ||
		    strlen(p) >= PATH_MAX)
			continue;
		strcpy(dev, d);
		strcpy(root, r);
		strcpy(point, p);
		unescape_octal(root);
		unescape_octal(point);
		rc = 0;
	}
	free(line);
	fclose(f);
	return rc;
}

/* The path of directory fd inside its filesystem (its mount's root joined with its path under the
 * mount point), into fspath, and that filesystem into dev. 0, or -1 when it cannot be told. */
static int fs_path_of(int fd, uint64_t mnt, char dev[32], char *fspath)
{
	char link[64], path[PATH_MAX], root[PATH_MAX], point[PATH_MAX];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0 || mount_of(mnt, dev, root, point) != 0)
		return -1;
	path[n] = 0;
	if (path[0] != '/' || !path_under(path, point))
		return -1;
	const char *rel = strcmp(point, "/") ? path + strlen(point) : path;
	if (snprintf(fspath, PATH_MAX, "%s%s", strcmp(root, "/") || !*rel ? root : "", rel) >= PATH_MAX)
		return -1;
	return 0;
}

int dir_within(int a, int b)
{
	struct fs_id bi, ci, ui;
	char bdev[32], bfs[PATH_MAX], cdev[32], croot[PATH_MAX], cpoint[PATH_MAX];
	if (fs_identity(b, "", &bi) != 0)
		return -1;
	bool have_fs = fs_path_of(b, bi.mnt, bdev, bfs) == 0;
	int cur = openat(a, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return -1;
	int rc = -1;
	for (;;) {
		if (fs_identity(cur, "", &ci) != 0)
			break;
		if (fs_id_same(&ci, &bi)) {
			rc = 1;
			break;
		}
		int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (up < 0 || fs_identity(up, "", &ui) != 0) {
			if (up >= 0)
				close(up);
			break;
		}
		bool top = fs_id_same(&ci, &ui) && ci.mnt == ui.mnt;
		/* The root of a mount: above it, ".." leaves its filesystem. Where the mount shows only
		 * part of b's filesystem, that part's own place in it may lie under b. */
		if ((top || ci.mnt != ui.mnt) && have_fs && mount_of(ci.mnt, cdev, croot, cpoint) == 0 &&
		    !strcmp(cdev, bdev) && path_under(croot, bfs)) {
			close(up);
			rc = 1;
			break;
		}
		close(cur);
		cur = up;
		if (top) {
			rc = 0;
			break;
		}
	}
	int e = errno;
	close(cur);
	errno = e;
	return rc;
}
