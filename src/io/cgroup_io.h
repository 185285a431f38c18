/*
 * cgroup_io: --cgroup-io, an I/O limit that the kernel enforces on one block device, beside the
 * throttle module's own pacing. The calling process moves into a new cgroup made for it,
 * myriad-CMD.PID: with cgroup v2 beside its current cgroup (a v2 cgroup with processes may not
 * have children with controllers), limited by io.max; with only cgroup v1, below its current
 * blkio cgroup, limited by blkio.throttle.{read,write}_{bps,iops}_device. v1 limits reads and
 * direct I/O but not buffered writes, which the kernel writes back outside the cgroup. At exit
 * the process moves back and the cgroup is removed; a cgroup left by a killed run is removed by
 * the next one.
 */
#ifndef MYRIAD_CGROUP_IO_H
#define MYRIAD_CGROUP_IO_H

#include <stdbool.h>
#include <stdint.h>

#include "util/sbuf.h"

/* Limits per second; 0: none. */
struct cgroup_io_spec {
	uint64_t rbps, wbps, riops, wiops;
};

/* Parse "wbps=50M,rbps=10M,riops=100,wiops=100" (any of them, at least one; bytes take binary
 * suffixes, operations decimal ones; commas or spaces between). false when malformed. */
bool cgroup_io_parse(const char *s, struct cgroup_io_spec *spec);

/*
 * The whole-disk block device that holds path, as the kernel's I/O controller knows it: the
 * device of path's filesystem (for a filesystem without one, such as btrfs, the block device it
 * was mounted from), a partition resolved to its disk. 0, or -1 with why (for a message) set.
 */
int cgroup_io_device(const char *path, unsigned *major, unsigned *minor, const char **why);

/*
 * Move the calling process (all its threads, and those it starts later) into a new cgroup limiting
 * the device that holds path. cmd names the cgroup (myriad-CMD.PID). On success 0, and the
 * cgroup is removed at exit (or by cgroup_io_remove); prints on stderr, for v1, that buffered
 * writes are not limited. -1 with a message on stderr when there is no I/O controller to use,
 * path is not on a block device, or the cgroup cannot be made.
 */
int cgroup_io_apply(const struct cgroup_io_spec *spec, const char *path, const char *cmd);

/* What was applied, as "v1 7:3 rbps=8388608" (nothing when cgroup_io_apply was not called). */
void cgroup_io_describe(struct sbuf *b);

/* Move back to the original cgroup and remove the new one (also done at exit). */
void cgroup_io_remove(void);

#endif
