/*
 * blkdev: block device identity from stat and sysfs (see blkdev.h).
 */
#include "io/blkdev.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

bool blkdev_rdev(const char *path, dev_t *rdev)
{
	struct stat st;
	if (path[0] != '/' || stat(path, &st) != 0 || !S_ISBLK(st.st_mode))
		return false;
	*rdev = st.st_rdev;
	return true;
}

bool blkdev_sysfs_line(const char *path, char *buf, size_t n)
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

bool blkdev_name(dev_t rdev, char *name, size_t n)
{
	char p[64], real[4096];
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u", major(rdev), minor(rdev));
	if (!realpath(p, real))
		return false;
	snprintf(name, n, "%s", strrchr(real, '/') + 1);
	return true;
}
