/*
 * loopdev: loop devices through their ioctls. Attaching is left to losetup (run and timed as a
 * phase by myriad lifecycle); what is here asks the kernel for a free device number, for the file
 * that backs a device (by identity, so a file replaced under the same name is not mistaken for
 * the one attached), and detaches.
 */
#ifndef MYRIAD_LOOPDEV_H
#define MYRIAD_LOOPDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The number N of a free /dev/loopN (LOOP_CTL_GET_FREE on /dev/loop-control, which makes one if
 * none is free), or -1 with errno. Another process may take it before it is attached. */
int loopdev_get_free(void);

/* The file backing the loop device dev: its identity (LOOP_GET_STATUS64) and its path (sysfs,
 * without " (deleted)"; empty when sysfs does not say). false when dev is not a loop device or
 * is not attached. */
bool loopdev_backing(const char *dev, dev_t *bdev, ino_t *bino, char *path, size_t n);

/* Detach the loop device dev (LOOP_CLR_FD). A busy device is marked to detach itself when its
 * last user goes; one not attached counts as detached. 0, or -1 with errno. */
int loopdev_detach(const char *dev);

#endif
