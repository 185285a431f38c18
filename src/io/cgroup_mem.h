/*
 * cgroup_mem: a memory-limited cgroup for one child (lifecycle's checker), so that when the child
 * outgrows the limit the kernel's OOM killer can only pick it, never the parent or the machine's
 * other work. cgroup v2 where its memory controller can be had (memory.max, memory.swap.max = 0),
 * else v1's memory hierarchy (memory.limit_in_bytes, and memsw when swap is accounted). The group
 * goes beside the caller's own cgroup (v2: a cgroup with processes may not have children with
 * controllers) or below it (v1). The child moves itself in between fork and exec.
 */
#ifndef MYRIAD_CGROUP_MEM_H
#define MYRIAD_CGROUP_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cgroup_mem {
	int version;      /* 1 or 2; 0: none made */
	char dir[4200];   /* the group's directory */
};

/*
 * Make a group named name (beside or below the caller's cgroup) limited to limit bytes without
 * swap. The parent directory is in cg->dir first, so a caller can record it before it is made
 * (pre, when not NULL, is called with the path; non-zero stops). 0, or -1 with why set (no memory
 * controller writable, or the limit refused) and nothing left behind.
 */
int cgroup_mem_make(struct cgroup_mem *cg, const char *name, uint64_t limit,
		    int (*pre)(const char *path, void *arg), void *arg, char *why, size_t whylen);

/* In the child, before exec: move the calling process into the group. 0 or -1 with errno. */
int cgroup_mem_enter(const struct cgroup_mem *cg);

/* How many processes of the group the OOM killer has killed (memory.events or
 * memory.oom_control's oom_kill), or -1 when the kernel does not say. */
long long cgroup_mem_oom_kills(const struct cgroup_mem *cg);

/* Did the group's usage reach its limit? 1 yes, 0 no, -1 when the kernel does not say. v2:
 * memory.events' max; v1: a failcnt, or the peak usage at the limit (Linux 6.x leaves v1's
 * failcnt at 0). With no oom_kill count (v1 before Linux 4.13) a SIGKILL after the limit was
 * reached is the one sign of the OOM killer. */
int cgroup_mem_limit_reached(const struct cgroup_mem *cg);

/* Remove the group (retried briefly: a child just reaped may still be leaving it). 0 or -1. */
int cgroup_mem_remove(struct cgroup_mem *cg);

#endif
