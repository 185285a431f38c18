/*
 * lifecycle_guard: the record of what a lifecycle run made and its verified teardown, and the
 * --device guard (see lifecycle_guard.h). Both read the kernel's own tables (mountinfo, sysfs,
 * /proc/swaps, LOOP_GET_STATUS64) at the moment they act, never names alone: a foreign mount,
 * loop device or image that merely looks like lifecycle's is never touched.
 */
#include "cmd/lifecycle_guard.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/sbuf.h"
#include "util/util.h"

/* ---- escaping: the octal \ooo of mountinfo and /proc/swaps, also used in the record ---- */

static void esc(struct sbuf *b, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p <= ' ' || *p == '\\' || *p == 0x7f)
			sbuf_printf(b, "\\%03o", *p);
		else
			sbuf_addc(b, (char)*p);
}

/* Undo esc (and the kernel's escapes) in place. */
static void unesc(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' &&
		    r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = 0;
}

/* ---- the kernel's tables ---- */

struct mnt {
	dev_t dev;	 /* st_dev of the filesystem (anonymous for btrfs) */
	char *point, *src; /* unescaped */
};

/* Every mount of our mount namespace, in mountinfo order (later ones lie on top). */
static struct mnt *mounts_read(size_t *n)
{
	*n = 0;
	FILE *f = fopen("/proc/self/mountinfo", "r");
	if (!f)
		return NULL;
	struct mnt *m = NULL;
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		unsigned ma, mi;
		char point[4096], src[4096];
		char *dash = strstr(line, " - ");
		if (!dash || sscanf(line, "%*s %*s %u:%u %*s %4095s", &ma, &mi, point) != 3 ||
		    sscanf(dash + 3, "%*s %4095s", src) != 1)
			continue;
		unesc(point);
		unesc(src);
		m = xrealloc(m, (*n + 1) * sizeof(*m));
		m[(*n)++] = (struct mnt){makedev(ma, mi), xstrdup(point), xstrdup(src)};
	}
	free(line);
	fclose(f);
	return m;
}

static void mounts_free(struct mnt *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(m[i].point);
		free(m[i].src);
	}
	free(m);
}

static bool is_blk(const char *path, dev_t *rdev)
{
	struct stat st;
	if (path[0] != '/' || stat(path, &st) != 0 || !S_ISBLK(st.st_mode))
		return false;
	*rdev = st.st_rdev;
	return true;
}

/* The mount point of a mount of the block device rdev (by its device number or its source), or
 * NULL. Prefers "/" so that the refusal says it holds the running system. */
static const char *mounted_on(const struct mnt *m, size_t n, dev_t rdev)
{
	const char *found = NULL;
	for (size_t i = 0; i < n; i++) {
		dev_t s;
		if (m[i].dev == rdev || (is_blk(m[i].src, &s) && s == rdev))
			if (!found || !strcmp(m[i].point, "/"))
				found = m[i].point;
	}
	return found;
}

static bool read_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool ok = fgets(buf, (int)n, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = 0;
	return ok;
}

/* The kernel name (sda1, loop3) of the block device rdev, from sysfs. */
static bool blk_name(dev_t rdev, char *name, size_t n)
{
	char p[64], real[4096];
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u", major(rdev), minor(rdev));
	if (!realpath(p, real))
		return false;
	snprintf(name, n, "%s", strrchr(real, '/') + 1);
	return true;
}

/* A loop device's backing file: its identity (LOOP_GET_STATUS64) and path (sysfs, without
 * " (deleted)"). false when it is not a loop device or not attached. */
static bool loop_backing(const char *dev, dev_t *bdev, ino_t *bino, char *path, size_t n)
{
	int fd = open(dev, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	struct loop_info64 li;
	bool ok = ioctl(fd, LOOP_GET_STATUS64, &li) == 0;
	close(fd);
	if (!ok)
		return false;
	*bdev = (dev_t)li.lo_device;
	*bino = (ino_t)li.lo_inode;
	path[0] = 0;
	dev_t rdev;
	char name[256], p[512];
	if (is_blk(dev, &rdev) && blk_name(rdev, name, sizeof(name))) {
		snprintf(p, sizeof(p), "/sys/block/%s/loop/backing_file", name);
		if (read_line(p, path, n)) {
			char *del = strstr(path, " (deleted)");
			if (del && !del[10])
				*del = 0;
		}
	}
	return true;
}

/* Is the block device dev (a swap partition), or else the file dev:ino (a swap file), in use as
 * swap? */
static bool in_swaps(bool blk, dev_t dev, ino_t ino)
{
	FILE *f = fopen("/proc/swaps", "r");
	char line[4200], file[4096];
	bool swap = false;
	struct stat st;
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%4095s", file) != 1)
			continue;
		unesc(file);
		if (stat(file, &st) == 0 && (blk ? S_ISBLK(st.st_mode) && st.st_rdev == dev
					      : S_ISREG(st.st_mode) && st.st_dev == dev && st.st_ino == ino))
			swap = true;
	}
	if (f)
		fclose(f);
	return swap;
}

/* ---- the device guard ---- */

static bool refuse(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool refuse(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
	return true;
}

/* Is the device name (rdev) or anything stacked on it (holders, recursively) mounted, swap, or
 * backing a loop device? The sentence goes to why, about "what" (e.g. "/dev/sda" or "its
 * partition sda1"). depth bounds the recursion through holders and loop devices. */
static bool blk_in_use(const struct mnt *m, size_t nm, const char *what, const char *name, dev_t rdev, int depth,
		       char *why, size_t n)
{
	const char *on = mounted_on(m, nm, rdev);
	if (on)
		return refuse(why, n, "%s is mounted on %s%s", what, on,
			      !strcmp(on, "/") ? " (it holds the running system)" : "");
	if (in_swaps(true, rdev, 0))
		return refuse(why, n, "%s is in use as swap (/proc/swaps)", what);
	/* Devices built on it: device-mapper, md, bcache... */
	char p[512];
	snprintf(p, sizeof(p), "/sys/class/block/%s/holders", name);
	DIR *d = opendir(p);
	struct dirent *e;
	bool held = false;
	while (d && !held && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		held = true;
		char dv[32], sub[512] = "";
		unsigned ma, mi;
		snprintf(p, sizeof(p), "/sys/class/block/%s/dev", e->d_name);
		if (depth > 0 && read_line(p, dv, sizeof(dv)) && sscanf(dv, "%u:%u", &ma, &mi) == 2)
			blk_in_use(m, nm, e->d_name, e->d_name, makedev(ma, mi), depth - 1, sub, sizeof(sub));
		refuse(why, n, "%s is in use by %s%s%s%s", what, e->d_name, sub[0] ? " (" : "", sub, sub[0] ? ")" : "");
	}
	if (d)
		closedir(d);
	if (held)
		return true;
	/* A loop device whose backing file is this device. */
	d = opendir("/sys/block");
	bool backs = false;
	while (d && !backs && (e = readdir(d))) {
		char back[4096];
		dev_t b;
		snprintf(p, sizeof(p), "/sys/block/%s/loop/backing_file", e->d_name);
		if (strncmp(e->d_name, "loop", 4) != 0 || !read_line(p, back, sizeof(back)) || !is_blk(back, &b) ||
		    b != rdev)
			continue;
		backs = refuse(why, n, "%s backs the loop device /dev/%s", what, e->d_name);
	}
	if (d)
		closedir(d);
	return backs;
}

/* A loop device: is its image (or the device under it) in use? */
static bool loop_in_use(const struct mnt *m, size_t nm, const char *path, const char *name, char *why, size_t n)
{
	dev_t bdev, rdev;
	ino_t bino;
	char back[4096];
	snprintf(back, sizeof(back), "/sys/class/block/%s/loop", name);
	if (access(back, F_OK) != 0 || !loop_backing(path, &bdev, &bino, back, sizeof(back)))
		return false;
	char sub[1024] = "", w[4200], bname[256];
	/* A loop device over a block device: the guard applies to that device. */
	if (is_blk(back, &rdev) && blk_name(rdev, bname, sizeof(bname))) {
		snprintf(w, sizeof(w), "its backing device %s", back);
		if (blk_in_use(m, nm, w, bname, rdev, 4, sub, sizeof(sub)))
			return refuse(why, n, "%s is a loop device over %s: %s", path, back, sub);
	}
	/* The same image attached again, e.g. by mount -o loop. */
	DIR *d = opendir("/sys/block");
	struct dirent *e;
	bool shared = false;
	while (d && !shared && (e = readdir(d))) {
		char other[300];
		dev_t od, orv;
		ino_t oi;
		char ob[4096];
		snprintf(other, sizeof(other), "/dev/%s", e->d_name);
		if (strncmp(e->d_name, "loop", 4) != 0 || !strcmp(e->d_name, name) ||
		    !loop_backing(other, &od, &oi, ob, sizeof(ob)) || od != bdev || oi != bino)
			continue;
		shared = true;
		if (is_blk(other, &orv))
			blk_in_use(m, nm, other, e->d_name, orv, 4, sub, sizeof(sub));
		refuse(why, n, "%s: its image %s is also attached as %s%s%s", path, back, other, sub[0] ? ", and " : "",
		       sub);
	}
	if (d)
		closedir(d);
	if (shared)
		return true;
	/* The image used as a swap file. */
	return in_swaps(false, bdev, bino) ? refuse(why, n, "%s: its image %s is in use as a swap file", path, back)
					   : false;
}

bool lc_device_refusal(const char *path, char *why, size_t n)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return refuse(why, n, "%s: %s", path, strerror(errno));
	if (!S_ISBLK(st.st_mode))
		return refuse(why, n, "%s is not a block device", path);
	char name[256], sys[300], real[4096];
	if (!blk_name(st.st_rdev, name, sizeof(name)))
		return refuse(why, n, "%s: not found in /sys/dev/block, so it cannot be checked", path);
	size_t nm;
	struct mnt *m = mounts_read(&nm);
	if (!m)
		return refuse(why, n, "/proc/self/mountinfo cannot be read, so %s cannot be checked", path);
	bool bad = blk_in_use(m, nm, path, name, st.st_rdev, 4, why, n);
	/* Its partitions: a mounted sda1 forbids formatting sda. */
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u", major(st.st_rdev), minor(st.st_rdev));
	DIR *d = !bad && realpath(sys, real) ? opendir(real) : NULL;
	struct dirent *e;
	while (d && !bad && (e = readdir(d))) {
		char p[4400], dv[32], what[300];
		unsigned ma, mi;
		snprintf(p, sizeof(p), "%s/%s/partition", real, e->d_name);
		if (e->d_name[0] == '.' || access(p, F_OK) != 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s/dev", real, e->d_name);
		if (!read_line(p, dv, sizeof(dv)) || sscanf(dv, "%u:%u", &ma, &mi) != 2)
			continue;
		snprintf(what, sizeof(what), "%s: its partition %s", path, e->d_name);
		bad = blk_in_use(m, nm, what, e->d_name, makedev(ma, mi), 4, why, n);
	}
	if (d)
		closedir(d);
	if (!bad)
		bad = loop_in_use(m, nm, path, name, why, n);
	mounts_free(m, nm);
	if (bad)
		return true;
	/* Last, the kernel's own word: a mounted, swapped-on or held device refuses an exclusive open.
	 * (Without permission to open it, the run's own root check refuses.) */
	int fd = open(path, O_RDONLY | O_EXCL | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 && errno == EBUSY)
		return refuse(why, n, "%s is in use: the kernel refuses an exclusive open (EBUSY)", path);
	if (fd >= 0)
		close(fd);
	return false;
}

/* ---- the record ---- */

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

int lc_record_add(int fd, const char *kind, const char *a, const char *b, const struct stat *id)
{
	struct sbuf l = {0};
	sbuf_adds(&l, kind);
	sbuf_addc(&l, '\t');
	esc(&l, a);
	if (b) {
		sbuf_addc(&l, '\t');
		esc(&l, b);
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
		unesc(f[1]);
		x.a = xstrdup(f[1]);
		if (two) {
			unesc(f[2]);
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
	if (!l->have_id || !loop_backing(l->a, &d, &i, back, sizeof(back)))
		return false;
	return d == l->dev && i == l->ino && (!back[0] || !strcmp(back, l->b));
}

static bool same_source(const char *mounted, const char *recorded)
{
	dev_t a, b;
	return !strcmp(mounted, recorded) || (is_blk(mounted, &a) && is_blk(recorded, &b) && a == b);
}

/* The source of the topmost mount on point, or NULL (a copy). */
static char *top_mount_source(const char *point)
{
	size_t n;
	struct mnt *m = mounts_read(&n);
	char *src = NULL;
	for (size_t i = n; i-- > 0 && !src;)
		if (!strcmp(m[i].point, point))
			src = xstrdup(m[i].src);
	mounts_free(m, n);
	return src;
}

/* A recorded mount: still there with the recorded source, and its loop device (when it is one the
 * run made) still backed by the recorded image? */
static bool mount_is_ours(const struct item *mt, const struct item *it, size_t n)
{
	char *src = top_mount_source(mt->b);
	bool ours = src && same_source(src, mt->a);
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

/* Unmount the mounts on point while the topmost is ours: retried while busy (a phase just killed
 * may still hold it), then detached lazily. */
static void unmount_ours(const struct item *mt, const struct item *it, size_t n, bool announce)
{
	if (announce && mount_is_ours(mt, it, n))
		warnx_("cleaning up after an earlier run: unmounting %s (%s)", mt->b, mt->a);
	for (int i = 0; i < 20 && mount_is_ours(mt, it, n); i++)
		if (umount2(mt->b, 0) != 0)
			usleep(100000);
	if (mount_is_ours(mt, it, n) && umount2(mt->b, MNT_DETACH) != 0)
		warnx_("cannot unmount %s: %s", mt->b, strerror(errno));
}

void lc_unmount(const char *point, const char *src)
{
	struct item mt = {.kind = "mount", .a = (char *)src, .b = (char *)point};
	unmount_ours(&mt, &mt, 1, false);
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
		char *src = top_mount_source(x->b);
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
			int lfd = open(x->a, O_RDONLY | O_CLOEXEC);
			/* A busy device is marked to detach itself when its last user goes. */
			if (lfd < 0 || (ioctl(lfd, LOOP_CLR_FD, 0) != 0 && errno != ENXIO))
				warnx_("cannot detach %s: %s", x->a, strerror(errno));
			if (lfd >= 0)
				close(lfd);
		} else if (announce) {
			dev_t d;
			ino_t ino;
			char back[4096];
			if (loop_backing(x->a, &d, &ino, back, sizeof(back)))
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
