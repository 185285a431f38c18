/* dir_within: is one directory inside another, by identity (see dir_within.h). */
#include "io/dir_within.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/dir.h"

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
