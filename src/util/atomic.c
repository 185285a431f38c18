/* atomic: whole-or-nothing file writes, temporary file + fsync + rename + directory fsync (see atomic.h). */
#include "util/atomic.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"

/* Make tmp afresh. A stale one is removed first (with ATOMIC_REPLACE_TMP whatever it is, else
 * only a regular file): one retry, so a second EEXIST is a race and fails as such. */
static int create_tmp(int dirfd, const char *tmp, mode_t mode, unsigned flags)
{
	for (int tries = 0;; tries++) {
		int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd >= 0 || errno != EEXIST || tries)
			return fd;
		struct stat st;
		if (!(flags & ATOMIC_REPLACE_TMP) && fstatat(dirfd, tmp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    !S_ISREG(st.st_mode)) {
			errno = EEXIST;
			return -1;
		}
		/* unlinking a name never follows it; a directory there fails here and stays */
		if (unlinkat(dirfd, tmp, 0) != 0 && errno != ENOENT)
			return -1;
	}
}

int atomic_write_at(int dirfd, const char *name, const char *tmp, const void *data, size_t len, mode_t mode,
		    unsigned flags, off_t reserve)
{
	bool durable = !(flags & ATOMIC_NOSYNC);
	int fd = create_tmp(dirfd, tmp, mode, flags);
	if (fd < 0)
		return -1;
	int r = -1;
	if (write_all(fd, data, len) == 0) {
		if (reserve > 0)
			(void)fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, reserve); /* it moves with the rename */
		if (!durable || fsync(fd) == 0) {
			r = ATOMIC_RENAME_FAILED;
			int closed = close(fd);
			fd = -1;
			/* rename replaces whatever entry is at name, never what it points to */
			if (closed == 0 && renameat(dirfd, tmp, dirfd, name) == 0)
				return durable && fsync(dirfd) != 0 ? ATOMIC_RENAME_FAILED : 0;
		}
	}
	int e = errno;
	if (fd >= 0)
		close(fd);
	unlinkat(dirfd, tmp, 0);
	errno = e;
	return r;
}

int atomic_write_file(const char *path, const void *data, size_t len)
{
	char *dir_copy = xstrdup(path), *base_copy = xstrdup(path);
	const char *dir = dirname(dir_copy), *base = basename(base_copy);
	char tmp[4096];
	int r = -1;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%d", base, (int)getpid()) >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
	} else {
		int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dirfd >= 0) {
			r = atomic_write_at(dirfd, base, tmp, data, len, 0644, 0, 0) == 0 ? 0 : -1;
			int e = errno;
			close(dirfd);
			errno = e;
		}
	}
	int e = errno;
	free(dir_copy);
	free(base_copy);
	errno = e;
	return r;
}
