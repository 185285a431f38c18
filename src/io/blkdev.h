/*
 * blkdev: a block device's identity as the kernel knows it. A path is taken for a block device
 * only after stat says so (names lie: a regular file may be called /dev/loop3), and its kernel
 * name comes from sysfs, the one table that links device numbers, partitions, holders and loop
 * backing files. The lower layer of loopdev, mounts and devbusy.
 */
#ifndef MYRIAD_BLKDEV_H
#define MYRIAD_BLKDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Is path (absolute) a block device? Its device number in *rdev then. A relative path is never
 * one: mountinfo and /proc/swaps sources like "tmpfs" must not resolve in the working directory. */
bool blkdev_rdev(const char *path, dev_t *rdev);

/* The kernel name (sda1, loop3) of the block device rdev, from /sys/dev/block. false when sysfs
 * does not know it. */
bool blkdev_name(dev_t rdev, char *name, size_t n);

/* The first line of a small file (a sysfs attribute), without its newline. false when it cannot
 * be read. */
bool blkdev_sysfs_line(const char *path, char *buf, size_t n);

#endif
