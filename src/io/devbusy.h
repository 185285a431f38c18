/*
 * devbusy: the guard before formatting a block device. A device is busy when it, a partition of
 * it, or anything stacked on it (device-mapper, md, a loop device over it; recursively) is
 * mounted, swap, held or backing a loop device; a loop device also when its image is attached
 * again or swapped on; and last when the kernel refuses an exclusive open. myriad lifecycle
 * --device asks before anything else and again before every mkfs.
 */
#ifndef MYRIAD_DEVBUSY_H
#define MYRIAD_DEVBUSY_H

#include <stdbool.h>
#include <stddef.h>

/* Why the block device at path must not be formatted: true with one sentence in why (naming what
 * holds it, e.g. "/dev/sda: its partition sda1 is mounted on / (it holds the running system)");
 * false when nothing does. A path that is no block device, or cannot be checked, is refused too. */
bool devbusy_refusal(const char *path, char *why, size_t n);

#endif
