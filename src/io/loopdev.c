/*
 * loopdev: loop device ioctls (see loopdev.h).
 */
#include "io/loopdev.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "io/blkdev.h"

int loopdev_get_free(void)
{
	int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	int nr = ctl >= 0 ? ioctl(ctl, LOOP_CTL_GET_FREE) : -1;
	int e = errno;
	if (ctl >= 0)
		close(ctl);
	errno = e;
	return nr;
}

bool loopdev_backing(const char *dev, dev_t *bdev, ino_t *bino, char *path, size_t n)
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
	if (blkdev_rdev(dev, &rdev) && blkdev_name(rdev, name, sizeof(name))) {
		snprintf(p, sizeof(p), "/sys/block/%s/loop/backing_file", name);
		if (blkdev_sysfs_line(p, path, n)) {
			char *del = strstr(path, " (deleted)");
			if (del && !del[10])
				*del = 0;
		}
	}
	return true;
}

int loopdev_detach(const char *dev)
{
	int fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int rc = ioctl(fd, LOOP_CLR_FD, 0) != 0 && errno != ENXIO ? -1 : 0;
	int e = errno;
	close(fd);
	errno = e;
	return rc;
}
