/*
 * lifecycle_record: the record of what a lifecycle run made and its verified teardown (see
 * lifecycle_record.h). Each check reads the kernel's own tables (mountinfo, LOOP_GET_STATUS64,
 * the file's identity) at the moment it acts, never names alone: a foreign mount, loop device or
 * image that merely looks like lifecycle's is never touched.
 */
#include "cmd/lifecycle/lifecycle_record.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/dir.h"
#include "io/loopdev.h"
#include "io/mounts.h"
#include "util/sbuf.h"
#include "util/util.h"

int lc_record_open(const char *dir)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/" LC_RECORD_NAME, dir);
	int fd = open(p, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	/* The file's name must last too. */
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return fd;
}

/* Is line (len bytes, no newline) an item lc_record_add writes: a known kind, a tab, a path? */
static bool record_line_ok(const char *line, size_t len)
{
	static const char *const kinds[] = {"image", "dir", "scratch", "loop", "mount"};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(*kinds); i++) {
		size_t k = strlen(kinds[i]);
		if (len > k + 1 && !memcmp(line, kinds[i], k) && line[k] == '\t')
			return true;
	}
	return false;
}

bool lc_record_is_ours(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (64 << 20)) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	struct sbuf s = {0};
	char buf[65536];
	ssize_t r;
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		sbuf_add(&s, buf, (size_t)r);
	close(fd);
	bool ok = r == 0;
	/* (A last line cut short by a kill is not read: record_read drops it too.) */
	for (char *p = s.data, *nl; ok && p && (nl = memchr(p, '\n', s.len - (size_t)(p - s.data))); p = nl + 1)
		ok = record_line_ok(p, (size_t)(nl - p));
	sbuf_free(&s);
	return ok;
}

int lc_record_add(int fd, const char *kind, const char *a, const char *b, const struct stat *id)
{
	struct sbuf l = {0};
	sbuf_adds(&l, kind);
	sbuf_addc(&l, '\t');
	mounts_escape(&l, a);
	if (b) {
		sbuf_addc(&l, '\t');
		mounts_escape(&l, b);
	}
	if (id)
		sbuf_printf(&l, "\t%llu:%llu", (unsigned long long)id->st_dev, (unsigned long long)id->st_ino);
	sbuf_addc(&l, '\n');
	int rc = write_all(fd, l.data, l.len) == 0 && fdatasync(fd) == 0 ? 0 : -1;
	sbuf_free(&l);
	return rc;
}

struct item {
	char kind[8];
	char *a, *b;
	bool have_id;
	dev_t dev;
	ino_t ino;
};

/* The record's items, in order; a last line cut short by a kill is dropped. */
static struct item *record_read(int fd, size_t *n)
{
	*n = 0;
	struct sbuf s = {0};
	char buf[65536];
	ssize_t r;
	off_t off = 0;
	while ((r = pread(fd, buf, sizeof(buf), off)) > 0) {
		sbuf_add(&s, buf, (size_t)r);
		off += r;
	}
	struct item *it = NULL;
	char *p = s.data, *end = s.data + s.len;
	while (p && p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
		*nl = 0;
		char *f[4] = {0};
		int nf = 0;
		for (char *save, *t = strtok_r(p, "\t", &save); t && nf < 4; t = strtok_r(NULL, "\t", &save))
			f[nf++] = t;
		p = nl + 1;
		if (nf < 2 || strlen(f[0]) >= sizeof(it->kind))
			continue;
		struct item x = {0};
		snprintf(x.kind, sizeof(x.kind), "%s", f[0]);
		bool two = !strcmp(x.kind, "loop") || !strcmp(x.kind, "mount");
		if (two && nf < 3)
			continue;
		const char *id = f[two ? 3 : 2];
		unsigned long long d, i;
		if (id && sscanf(id, "%llu:%llu", &d, &i) == 2) {
			x.have_id = true;
			x.dev = (dev_t)d;
			x.ino = (ino_t)i;
		}
		mounts_unescape(f[1]);
		x.a = xstrdup(f[1]);
		if (two) {
			mounts_unescape(f[2]);
			x.b = xstrdup(f[2]);
		}
		it = xrealloc(it, (*n + 1) * sizeof(*it));
		it[(*n)++] = x;
	}
	sbuf_free(&s);
	return it;
}

/* The last record of this kind and first field (an image's or a directory's identity comes in a
 * second line; a device is attached or mounted again), or NULL. */
static const struct item *latest(const struct item *it, size_t n, const char *kind, const char *a)
{
	for (size_t i = n; i-- > 0;)
		if (!strcmp(it[i].kind, kind) && !strcmp(it[i].a, a))
			return &it[i];
	return NULL;
}

/* Is x the last of the records saying the same (mount: same source and mount point)? */
static bool is_last(const struct item *it, size_t n, const struct item *x)
{
	for (const struct item *y = x + 1; y < it + n; y++)
		if (!strcmp(y->kind, x->kind) && !strcmp(y->a, x->a) && (!x->b || !strcmp(y->b, x->b)))
			return false;
	return true;
}

/* Is the loop device of this record still backed by the recorded image? */
static bool loop_is_ours(const struct item *l)
{
	dev_t d;
	ino_t i;
	char back[4096];
	if (!l->have_id || !loopdev_backing(l->a, &d, &i, back, sizeof(back)))
		return false;
	return d == l->dev && i == l->ino && (!back[0] || !strcmp(back, l->b));
}

/* A recorded mount: still there with the recorded source, and its loop device (when it is one the
 * run made) still backed by the recorded image? */
static bool mount_is_ours(const struct item *mt, const struct item *it, size_t n)
{
	char *src = mounts_top_source(mt->b);
	bool ours = src && mounts_same_source(src, mt->a);
	free(src);
	const struct item *l = latest(it, n, "loop", mt->a);
	return ours && (!l || loop_is_ours(l));
}

static bool image_is_ours(const struct item *im)
{
	struct stat st;
	if (lstat(im->a, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	if (im->have_id)
		return st.st_dev == im->dev && st.st_ino == im->ino;
	/* Killed between its creation and the record of its identity: still empty then. */
	return st.st_size == 0 && st.st_nlink == 1;
}

static bool dir_is_ours(const struct item *di)
{
	struct stat st;
	if (lstat(di->a, &st) != 0 || !S_ISDIR(st.st_mode))
		return false;
	return !di->have_id || (st.st_dev == di->dev && st.st_ino == di->ino);
}

struct mount_ctx {
	const struct item *mt, *it;
	size_t n;
};

static bool mount_ctx_ours(const void *arg)
{
	const struct mount_ctx *m = arg;
	return mount_is_ours(m->mt, m->it, m->n);
}

/* Unmount the mounts on point while the topmost is ours: retried while busy (a phase just killed
 * may still hold it), then detached lazily. */
static void unmount_ours(const struct item *mt, const struct item *it, size_t n, bool announce)
{
	if (announce && mount_is_ours(mt, it, n))
		warnx_("cleaning up after an earlier run: unmounting %s (%s)", mt->b, mt->a);
	struct mount_ctx m = {mt, it, n};
	if (mounts_unmount_while(mt->b, mount_ctx_ours, &m) != 0)
		warnx_("cannot unmount %s: %s", mt->b, strerror(errno));
}

int lc_scratch_remove(const char *path, dev_t dev, ino_t ino, int *files)
{
	*files = 0;
	char parent[4200];
	const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
	snprintf(parent, sizeof(parent), "%.*s", slash ? (int)(slash == path ? 1 : slash - path) : 1, slash ? path : ".");
	int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int fd = pfd < 0 ? -1 : openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	int rc = -1, e = ESTALE;
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino) {
		DIR *d = fdopendir(fd);
		struct dirent *de;
		fd = d ? -1 : fd;
		while (d && (de = readdir(d)))
			if (!dir_is_dot(de->d_name) && fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) && unlinkat(dirfd(d), de->d_name, 0) == 0)
				++*files;
		if (d)
			closedir(d);
		/* The name may have been given to another directory meanwhile: removed only if it is not. */
		if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			e = errno;
		else if (st.st_dev == dev && st.st_ino == ino && (rc = unlinkat(pfd, name, AT_REMOVEDIR)) != 0)
			e = errno;
	} else if (fd < 0) {
		e = errno;
	}
	if (fd >= 0)
		close(fd);
	if (pfd >= 0)
		close(pfd);
	errno = e;
	return rc;
}

/* A recorded scratch directory: emptied of its files and removed (only rmdir without a recorded
 * identity: it was killed before e2fsck could put anything in it). */
static void scratch_clean(const struct item *x, bool announce)
{
	int files = 0;
	if (!dir_is_ours(x)) {
		struct stat st;
		if (announce && x->have_id && lstat(x->a, &st) == 0)
			warnx_("leaving %s alone: it is not the scratch directory this --out's earlier run made", x->a);
		return;
	}
	if (!x->have_id) {
		rmdir(x->a);
		return;
	}
	if (lc_scratch_remove(x->a, x->dev, x->ino, &files) == 0) {
		if (announce && files)
			warnx_("cleaning up after an earlier run: removed %s and the %d file%s in it", x->a, files,
			       files == 1 ? "" : "s");
		else if (announce)
			warnx_("cleaning up after an earlier run: removed %s", x->a);
	} else if (errno != ENOENT) {
		warnx_("cannot remove %s: %s", x->a, strerror(errno));
	}
}

bool lc_record_clean(int fd, bool announce)
{
	size_t n;
	struct item *it = record_read(fd, &n);
	for (size_t i = 0; i < n; i++) {
		const struct item *x = &it[i];
		if (strcmp(x->kind, "mount") != 0 || !is_last(it, n, x))
			continue;
		unmount_ours(x, it, n, announce);
		char *src = mounts_top_source(x->b);
		if (announce && src && !mount_is_ours(x, it, n))
			warnx_("leaving %s alone: what is mounted there (%s) is not what this --out's earlier run mounted",
			       x->b, src);
		free(src);
	}
	for (size_t i = 0; i < n; i++) {
		const struct item *x = &it[i];
		if (strcmp(x->kind, "loop") != 0 || !is_last(it, n, x))
			continue;
		if (loop_is_ours(x)) {
			if (announce)
				warnx_("cleaning up after an earlier run: detaching %s (%s)", x->a, x->b);
			/* A busy device is marked to detach itself when its last user goes. */
			if (loopdev_detach(x->a) != 0)
				warnx_("cannot detach %s: %s", x->a, strerror(errno));
		} else if (announce) {
			dev_t d;
			ino_t ino;
			char back[4096];
			if (loopdev_backing(x->a, &d, &ino, back, sizeof(back)))
				warnx_("leaving %s alone: it is backed by %s now, not by %s", x->a, back, x->b);
		}
	}
	for (size_t i = 0; i < n; i++) {
		const struct item *x = &it[i];
		if (strcmp(x->kind, "image") != 0 || !is_last(it, n, x) || !image_is_ours(x))
			continue;
		if (announce)
			warnx_("cleaning up after an earlier run: removing %s", x->a);
		if (unlink(x->a) != 0)
			warnx_("cannot remove %s: %s", x->a, strerror(errno));
	}
	for (size_t i = 0; i < n; i++) {
		const struct item *x = &it[i];
		if (!strcmp(x->kind, "dir") && is_last(it, n, x) && dir_is_ours(x))
			rmdir(x->a);
		if (!strcmp(x->kind, "scratch") && is_last(it, n, x))
			scratch_clean(x, announce);
	}
	/* Anything of ours left (a busy mount, a loop device detaching itself later)? Then the record
	 * stays for the next try. */
	bool left = false;
	for (size_t i = 0; i < n; i++) {
		const struct item *x = &it[i];
		if (!strcmp(x->kind, "mount"))
			left |= mount_is_ours(x, it, n);
		else if (!strcmp(x->kind, "loop"))
			left |= is_last(it, n, x) && loop_is_ours(x);
		else if (!strcmp(x->kind, "image"))
			left |= is_last(it, n, x) && image_is_ours(x);
		else if (!strcmp(x->kind, "scratch"))
			left |= is_last(it, n, x) && x->have_id && dir_is_ours(x);
	}
	if (!left && (ftruncate(fd, 0) != 0 || fdatasync(fd) != 0))
		left = true;
	for (size_t i = 0; i < n; i++) {
		free(it[i].a);
		free(it[i].b);
	}
	free(it);
	return !left;
}
