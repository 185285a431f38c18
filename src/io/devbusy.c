/*
 * devbusy: why a block device must not be formatted (see devbusy.h). Every answer comes from the
 * kernel's own tables at the moment of asking (mountinfo, sysfs holders and partitions,
 * /proc/swaps, LOOP_GET_STATUS64) and last from the kernel itself (an exclusive open), never from
 * names alone.
 */
#include "io/devbusy.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "io/blkdev.h"
#include "io/loopdev.h"
#include "io/mounts.h"

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
		mounts_unescape(file);
		if (stat(file, &st) == 0 && (blk ? S_ISBLK(st.st_mode) && st.st_rdev == dev
					      : S_ISREG(st.st_mode) && st.st_dev == dev && st.st_ino == ino))
			swap = true;
	}
	if (f)
		fclose(f);
	return swap;
}

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
static bool blk_in_use(const struct mount_entry *m, size_t nm, const char *what, const char *name, dev_t rdev,
		       int depth, char *why, size_t n)
{
	const char *on = mounts_on_dev(m, nm, rdev);
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
		if (depth > 0 && blkdev_sysfs_line(p, dv, sizeof(dv)) && sscanf(dv, "%u:%u", &ma, &mi) == 2)
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
		if (strncmp(e->d_name, "loop", 4) != 0 || !blkdev_sysfs_line(p, back, sizeof(back)) || !blkdev_rdev(back, &b) ||
		    b != rdev)
			continue;
		backs = refuse(why, n, "%s backs the loop device /dev/%s", what, e->d_name);
	}
	if (d)
		closedir(d);
	return backs;
}

/* A loop device: is its image (or the device under it) in use? */
static bool loop_in_use(const struct mount_entry *m, size_t nm, const char *path, const char *name, char *why, size_t n)
{
	dev_t bdev, rdev;
	ino_t bino;
	char back[4096];
	snprintf(back, sizeof(back), "/sys/class/block/%s/loop", name);
	if (access(back, F_OK) != 0 || !loopdev_backing(path, &bdev, &bino, back, sizeof(back)))
		return false;
	char sub[1024] = "", w[4200], bname[256];
	/* A loop device over a block device: the guard applies to that device. */
	if (blkdev_rdev(back, &rdev) && blkdev_name(rdev, bname, sizeof(bname))) {
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
		    !loopdev_backing(other, &od, &oi, ob, sizeof(ob)) || od != bdev || oi != bino)
			continue;
		shared = true;
		if (blkdev_rdev(other, &orv))
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

bool devbusy_refusal(const char *path, char *why, size_t n)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return refuse(why, n, "%s: %s", path, strerror(errno));
	if (!S_ISBLK(st.st_mode))
		return refuse(why, n, "%s is not a block device", path);
	char name[256], sys[300], real[4096];
	if (!blkdev_name(st.st_rdev, name, sizeof(name)))
		return refuse(why, n, "%s: not found in /sys/dev/block, so it cannot be checked", path);
	size_t nm;
	struct mount_entry *m = mounts_read(&nm);
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
		if (!blkdev_sysfs_line(p, dv, sizeof(dv)) || sscanf(dv, "%u:%u", &ma, &mi) != 2)
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

