/* cgroup_mem: a memory-limited cgroup for one child (see cgroup_mem.h). */
#include "io/cgroup_mem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/cgroup.h"
#include "util/util.h"

/* The value after "key " in a file of "key value" lines, or -1. */
static long long keyed(const char *dir, const char *file, const char *key)
{
	char p[4400], line[256];
	snprintf(p, sizeof(p), "%s/%s", dir, file);
	FILE *f = fopen(p, "re");
	long long v = -1;
	size_t kl = strlen(key);
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ' ')
			v = atoll(line + kl + 1);
	if (f)
		fclose(f);
	return v;
}

/* Where a v2 group can go with the memory controller on (see cgroup_v2_parent). */
static bool v2_parent(char *parent, size_t n)
{
	char home[4096];
	if (!cgroup_v2_parent(home, sizeof(home), parent, n) || !cgroup_file_has_word(parent, "cgroup.controllers", "memory"))
		return false;
	return cgroup_file_has_word(parent, "cgroup.subtree_control", "memory") ||
	       cgroup_write(parent, "cgroup.subtree_control", "+memory") == 0;
}

static int made(struct cgroup_mem *cg, uint64_t limit, char *why, size_t whylen)
{
	char v[32];
	snprintf(v, sizeof(v), "%llu\n", (unsigned long long)limit);
	const char *file = cg->version == 2 ? "memory.max" : "memory.limit_in_bytes";
	if (cgroup_write(cg->dir, file, v) != 0) {
		snprintf(why, whylen, "%s/%s: %s", cg->dir, file, strerror(errno));
		return -1;
	}
	/* Without swap: a checker pushed to swap would not be killed, only crawl (ENOENT: swap is not
	 * accounted, so there is none to limit). */
	if (cg->version == 2 && cgroup_write(cg->dir, "memory.swap.max", "0\n") != 0 && errno != ENOENT) {
		snprintf(why, whylen, "%s/memory.swap.max: %s", cg->dir, strerror(errno));
		return -1;
	}
	if (cg->version == 1 && cgroup_write(cg->dir, "memory.memsw.limit_in_bytes", v) != 0 && errno != ENOENT) {
		snprintf(why, whylen, "%s/memory.memsw.limit_in_bytes: %s", cg->dir, strerror(errno));
		return -1;
	}
	return 0;
}

int cgroup_mem_make(struct cgroup_mem *cg, const char *name, uint64_t limit,
		    int (*pre)(const char *path, void *arg), void *arg, char *why, size_t whylen)
{
	char parent[4096];
	bool root;
	cg->version = 0;
	if (v2_parent(parent, sizeof(parent)))
		cg->version = 2;
	else if (cgroup_own_dir("memory", parent, sizeof(parent), &root) && access(parent, W_OK) == 0)
		cg->version = 1;
	if (!cg->version) {
		snprintf(why, whylen, "no writable cgroup memory controller (neither cgroup v2's nor v1's)");
		return -1;
	}
	snprintf(cg->dir, sizeof(cg->dir), "%s/%s", parent, name);
	if ((pre && pre(cg->dir, arg) != 0) || mkdir(cg->dir, 0755) != 0) {
		snprintf(why, whylen, "mkdir %s: %s", cg->dir, strerror(errno));
		cg->version = 0;
		return -1;
	}
	if (made(cg, limit, why, whylen) != 0) {
		rmdir(cg->dir);
		cg->version = 0;
		return -1;
	}
	return 0;
}

int cgroup_mem_enter(const struct cgroup_mem *cg) { return cgroup_write(cg->dir, "cgroup.procs", "0\n"); }

long long cgroup_mem_oom_kills(const struct cgroup_mem *cg)
{
	if (cg->version == 2)
		return keyed(cg->dir, "memory.events", "oom_kill");
	return cg->version == 1 ? keyed(cg->dir, "memory.oom_control", "oom_kill") : -1;
}

/* The number in a file of one value, or -1. */
static long long single(const char *dir, const char *file)
{
	char p[4400], line[64];
	snprintf(p, sizeof(p), "%s/%s", dir, file);
	FILE *f = fopen(p, "re");
	long long v = f && fgets(line, sizeof(line), f) ? atoll(line) : -1;
	if (f)
		fclose(f);
	return v;
}

int cgroup_mem_limit_reached(const struct cgroup_mem *cg)
{
	if (cg->version == 2) {
		long long max = keyed(cg->dir, "memory.events", "max");
		return max < 0 ? -1 : max > 0;
	}
	if (cg->version != 1)
		return -1;
	static const char *const v1[][3] = {{"memory.failcnt", "memory.max_usage_in_bytes", "memory.limit_in_bytes"},
					    {"memory.memsw.failcnt", "memory.memsw.max_usage_in_bytes",
					     "memory.memsw.limit_in_bytes"}};
	int said = -1;
	for (int i = 0; i < 2; i++) {
		long long fail = single(cg->dir, v1[i][0]), peak = single(cg->dir, v1[i][1]), lim = single(cg->dir, v1[i][2]);
		if (fail > 0 || (peak > 0 && lim > 0 && peak >= lim))
			return 1;
		if (fail == 0 || (peak >= 0 && lim > 0))
			said = 0;
	}
	return said;
}

int cgroup_mem_remove(struct cgroup_mem *cg)
{
	if (!cg->version)
		return 0;
	for (int i = 0; i < 100; i++) {
		if (rmdir(cg->dir) == 0 || errno == ENOENT) {
			cg->version = 0;
			return 0;
		}
		if (errno != EBUSY)
			break;
		usleep(10000);
	}
	return -1;
}
