/*
 * scratch: what every unit test that touches the filesystem needs, written once: a directory of
 * its own under /tmp (scratch_dir), trees made in it from lists of paths (scratch_mk,
 * scratch_tree), and its removal without a shell (scratch_remove: no `system("rm -rf ...")`, no
 * quoting of odd names, never across a mount or through a symlink). Header-only, as each
 * tests/unit/test_*.c is built alone against the library.
 */
#ifndef MYRIAD_TEST_SCRATCH_H
#define MYRIAD_TEST_SCRATCH_H

#include <fcntl.h>
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Make a new directory /tmp/myriad-unit-NAME.XXXXXX into buf (at least 64 bytes); buf, or NULL
 * with errno. */
static inline char *scratch_dir(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "/tmp/myriad-unit-%s.XXXXXX", name);
	return mkdtemp(buf);
}

/* Remove name in dfd and everything under it: by fd, one level at a time, so paths longer than
 * PATH_MAX go too; never through a symlink, never into another filesystem. */
static inline int scratch_remove_at(int dfd, const char *name, dev_t dev)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return unlinkat(dfd, name, 0) == 0 || errno == ENOENT ? 0 : -1;
	struct stat st;
	DIR *d = fstat(fd, &st) == 0 && (dev == 0 || st.st_dev == dev) ? fdopendir(fd) : NULL;
	if (!d) {
		close(fd);
		errno = EXDEV;
		return -1;
	}
	int rc = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && scratch_remove_at(dirfd(d), e->d_name, st.st_dev))
			rc = -1;
	closedir(d);
	return rc == 0 && unlinkat(dfd, name, AT_REMOVEDIR) == 0 ? 0 : -1;
}

/* Remove dir and everything under it (bottom-up, symlinks not followed, mounts not crossed). 0, or
 * -1 with errno. */
static inline int scratch_remove(const char *dir) { return scratch_remove_at(AT_FDCWD, dir, 0); }

/* Make top/rel: a directory when dir, else an empty file. 0, or -1 with errno. */
static inline int scratch_mk(const char *top, const char *rel, bool dir)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/%s", top, rel);
	if (dir)
		return mkdir(p, 0755);
	int fd = open(p, O_CREAT | O_WRONLY | O_EXCL | O_CLOEXEC, 0644);
	return fd < 0 ? -1 : close(fd);
}

/* Make the directories dirs[0..ndirs) (parents first), then the files files[0..nfiles), under top.
 * 0, or -1 with errno at the first that fails. */
static inline int scratch_tree(const char *top, const char *const *dirs, size_t ndirs, const char *const *files,
			       size_t nfiles)
{
	for (size_t i = 0; i < ndirs; i++)
		if (scratch_mk(top, dirs[i], true) != 0)
			return -1;
	for (size_t i = 0; i < nfiles; i++)
		if (scratch_mk(top, files[i], false) != 0)
			return -1;
	return 0;
}

#endif
