/* dir: getdents64, symlink-free directory opening, and dir_within (see dir.h). */
#include "io/dir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/statfs.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "io/mounts.h"
#include "util/util.h"

ssize_t dir_read(int fd, void *buf, size_t size) { return syscall(SYS_getdents64, fd, buf, size); }

int dir_is_empty(int fd, const char *const *ignore)
{
	_Alignas(8) char buf[1024];
	for (;;) {
		ssize_t n = dir_read(fd, buf, sizeof(buf));
		if (n <= 0)
			return n < 0 ? -1 : 1;
		for (ssize_t off = 0; off < n;) {
			const struct linux_dirent64 *de = (const void *)(buf + off);
			bool ignored = dir_is_dot(de->d_name);
			for (const char *const *i = ignore; i && *i && !ignored; i++)
				ignored = !strcmp(de->d_name, *i);
			if (!ignored)
				return 0;
			off += de->d_reclen;
		}
	}
}

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

/* Cleared for good by the first ENOSYS or EPERM (a kernel before 5.6, a seccomp profile). */
static atomic_bool have_openat2 = true;

/* Without openat2: open rel[0..len) one component at a time, each with O_NOFOLLOW relative to
 * the directory just opened, so no symlink is followed anywhere on the way, as with
 * RESOLVE_NO_SYMLINKS (plain openat of "a/b" would follow a symlink swapped in for a). Costs one
 * openat per component. */
static int open_components(int dirfd, const char *rel, size_t len)
{
	char name[NAME_MAX + 1] = ".";
	int fd = dirfd;
	for (size_t pos = 0; pos < len || fd == dirfd;) {
		const char *slash = memchr(rel + pos, '/', len - pos);
		size_t end = slash ? (size_t)(slash - rel) : len, n = end - pos;
		if (n > NAME_MAX) {
			if (fd != dirfd)
				close(fd);
			errno = ENAMETOOLONG;
			return -1;
		}
		pos = end + 1;
		if (n == 0 && (fd != dirfd || pos < len))
			continue; /* "a//b", "a/", "/a": empty components name no directory */
		memcpy(name, rel + end - n, n);
		name[n ? n : 1] = 0; /* nothing at all: dirfd itself, as "." */
		int next = openat(fd, name, DIR_FLAGS);
		if (fd != dirfd)
			close(fd);
		if (next < 0)
			return -1;
		fd = next;
	}
	return fd;
}

/* Open one piece (shorter than PATH_MAX) without following symlinks. */
static int open_piece(int dirfd, const char *path, size_t len)
{
	if (atomic_load_explicit(&have_openat2, memory_order_relaxed)) {
		struct open_how how = {.flags = DIR_FLAGS, .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
		int fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
		if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
			return fd;
		atomic_store_explicit(&have_openat2, false, memory_order_relaxed);
	}
	return open_components(dirfd, path, len);
}

int dir_open_at(int dirfd, const char *rel, size_t rel_len)
{
	if (rel_len == 0)
		return open_piece(dirfd, ".", 1);
	if (!atomic_load_explicit(&have_openat2, memory_order_relaxed))
		return open_components(dirfd, rel, rel_len);
	if (rel_len < PATH_MAX) {
		if (rel[rel_len] == 0)
			return open_piece(dirfd, rel, rel_len);
		char tmp[PATH_MAX];
		memcpy(tmp, rel, rel_len);
		tmp[rel_len] = 0;
		return open_piece(dirfd, tmp, rel_len);
	}
	/* Longer than the kernel takes at once: open it in pieces that end at a '/'. */
	char piece[PATH_MAX];
	int fd = dirfd;
	size_t pos = 0;
	while (pos < rel_len) {
		size_t end = rel_len;
		if (end - pos >= PATH_MAX) {
			end = pos + PATH_MAX - 1;
			while (end > pos && rel[end] != '/')
				end--;
			if (end == pos) {
				errno = ENAMETOOLONG;
				goto fail;
			}
		}
		memcpy(piece, rel + pos, end - pos);
		piece[end - pos] = 0;
		int next = open_piece(fd, piece, end - pos);
		if (fd != dirfd)
			close(fd);
		if (next < 0)
			return -1;
		fd = next;
		pos = end;
		while (pos < rel_len && rel[pos] == '/')
			pos++;
	}
	return fd;
fail:
	if (fd != dirfd) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return -1;
}

int dir_open_file(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOATIME);
	if (fd < 0 && errno == EPERM)
		fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	return fd;
}

/* stx_mnt_id (struct statx from linux/stat.h, which linux/openat2.h brings in). */
static uint64_t statx_mnt_id(const struct statx *s) { return s->stx_mnt_id; }

/* The mount id of open file fd from /proc/self/fdinfo (Linux 3.15+), or -1 with errno. */
static int fdinfo_mnt_id(int fd, uint64_t *mnt)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	int in = open(path, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	ssize_t n = read(in, buf, sizeof(buf) - 1);
	close(in);
	if (n <= 0) {
		errno = n < 0 ? errno : EIO;
		return -1;
	}
	buf[n] = 0;
	const char *m = strstr(buf, "mnt_id:");
	if (!m) {
		errno = ENOSYS;
		return -1;
	}
	*mnt = strtoull(m + 7, NULL, 10);
	return 0;
}

int fs_identity(int dirfd, const char *name, struct fs_id *id)
{
	struct statx sx;
	int flags = AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | (*name ? 0 : AT_EMPTY_PATH);
	if (statx(dirfd, name, flags, STATX_TYPE | STATX_INO | STATX_MNT_ID, &sx) != 0)
		return -1;
	id->dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	id->ino = sx.stx_ino;
	if (sx.stx_mask & STATX_MNT_ID) {
		id->mnt = statx_mnt_id(&sx);
		return 0;
	}
	if (!*name)
		return fdinfo_mnt_id(dirfd, &id->mnt);
	int fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int r = fdinfo_mnt_id(fd, &id->mnt);
	int e = errno;
	close(fd);
	errno = e;
	return r;
}

unsigned long fs_type(const char *path)
{
	struct statfs sf;
	return statfs(path, &sf) == 0 ? (unsigned long)sf.f_type : 0;
}

/* ---- dir_within ---- */

bool dir_path_under(const char *a, const char *b)
{
	size_t n = strlen(b);
	if (n == 1 && b[0] == '/')
		return true;
	return !strncmp(a, b, n) && (a[n] == 0 || a[n] == '/');
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
		mounts_unescape(root);
		mounts_unescape(point);
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
	if (path[0] != '/' || !dir_path_under(path, point))
		return -1;
	const char *rel = strcmp(point, "/") ? path + strlen(point) : path;
	if (snprintf(fspath, PATH_MAX, "%s%s", strcmp(root, "/") || !*rel ? root : "", rel) >= PATH_MAX)
		return -1;
	return 0;
}

int dir_fs_path(int fd, char dev[32], char *fspath)
{
	struct fs_id id;
	return fs_identity(fd, "", &id) == 0 ? fs_path_of(fd, id.mnt, dev, fspath) : -1;
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
		    !strcmp(cdev, bdev) && dir_path_under(croot, bfs)) {
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
