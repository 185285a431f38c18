/* dir: getdents64 and symlink-free directory opening (see dir.h). */
#include "io/dir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/statfs.h>
#include <unistd.h>

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

static int have_openat2 = 1;

/* Open one piece (shorter than PATH_MAX) without following symlinks. */
static int open_piece(int dirfd, const char *path)
{
	if (have_openat2) {
		struct open_how how = {.flags = DIR_FLAGS, .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
		int fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
		if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
			return fd;
		have_openat2 = 0;
	}
	/* Old kernels: only the last component is protected. */
	return openat(dirfd, path, DIR_FLAGS);
}

int dir_open_at(int dirfd, const char *rel, size_t rel_len)
{
	if (rel_len == 0)
		return open_piece(dirfd, ".");
	if (rel_len < PATH_MAX) {
		if (rel[rel_len] == 0)
			return open_piece(dirfd, rel);
		char tmp[PATH_MAX];
		memcpy(tmp, rel, rel_len);
		tmp[rel_len] = 0;
		return open_piece(dirfd, tmp);
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
		int next = open_piece(fd, piece);
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

unsigned long fs_type(const char *path)
{
	struct statfs sf;
	return statfs(path, &sf) == 0 ? (unsigned long)sf.f_type : 0;
}
