/* cgroup_mem: a memory-limited cgroup for one child (see cgroup_mem.h). */
#include "io/cgroup_mem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/mounts.h"
#include "util/util.h"

static int put(const char *dir, const char *file, const char *text)
{
	char p[4400];
	snprintf(p, sizeof(p), "%s/%s", dir, file);
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	int e = errno;
	close(fd);
	errno = e;
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

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

/* Does the space-separated list in dir/file hold word? */
static bool file_has_word(const char *dir, const char *file, const char *word)
{
	char p[4400], line[1024] = "";
	snprintf(p, sizeof(p), "%s/%s", dir, file);
	FILE *f = fopen(p, "re");
	if (!f)
		return false;
	bool got = fgets(line, sizeof(line), f) != NULL;
	fclose(f);
	size_t n = strlen(word);
	for (char *s = line; got && (s = strstr(s, word)); s += n)
		if ((s == line || s[-1] == ' ') && (s[n] == ' ' || s[n] == '\n' || !s[n]))
			return true;
	return false;
}

/* The directory of this process's cgroup in the v2 hierarchy (version 2) or in v1's memory one
 * (version 1), from mountinfo and /proc/self/cgroup. */
static bool own_dir(int version, char *out, size_t n)
{
	char own[4096] = "", line[8192];
	bool have = false;
	FILE *f = fopen("/proc/self/cgroup", "re");
	while (f && !have && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = 0;
		bool v2line = !strcmp(line, "0") && c1[1] == 0;
		bool memline = false;
		for (char *s, *t = strtok_r(c1 + 1, ",", &s); t && version == 1; t = strtok_r(NULL, ",", &s))
			memline |= !strcmp(t, "memory");
		if ((version == 2 && v2line) || memline) {
			snprintf(own, sizeof(own), "%s", c2 + 1);
			have = true;
		}
	}
	if (f)
		fclose(f);
	f = have ? fopen("/proc/self/mountinfo", "re") : NULL;
	bool found = false;
	while (f && !found && fgets(line, sizeof(line), f)) {
		char *fld[6], *s, *dash = strstr(line, " - ");
		int k = 0;
		if (!dash)
			continue;
		*dash = 0;
		for (char *t = strtok_r(line, " ", &s); t && k < 6; t = strtok_r(NULL, " ", &s))
			fld[k++] = t;
		char *fstype = strtok_r(dash + 3, " ", &s), *src = strtok_r(NULL, " ", &s);
		char *opts = src ? strtok_r(NULL, " \n", &s) : NULL;
		if (k < 5 || !opts)
			continue;
		bool ok = version == 2 ? !strcmp(fstype, "cgroup2") : !strcmp(fstype, "cgroup");
		if (ok && version == 1) {
			ok = false;
			for (char *s2, *t = strtok_r(opts, ",", &s2); t; t = strtok_r(NULL, ",", &s2))
				ok |= !strcmp(t, "memory");
		}
		if (!ok)
			continue;
		mounts_unescape(fld[3]);
		mounts_unescape(fld[4]);
		size_t rl = strcmp(fld[3], "/") ? strlen(fld[3]) : 0;
		if (rl && (strncmp(own, fld[3], rl) || (own[rl] && own[rl] != '/')))
			continue;
		int m = snprintf(out, n, "%s%s", fld[4], own + rl);
		while (m > 1 && out[m - 1] == '/')
			out[--m] = 0;
		found = (size_t)m < n;
	}
	if (f)
		fclose(f);
	return found;
}

/* Where a v2 group can go with the memory controller on: beside our cgroup (its parent), or
 * below the root when we are in it. */
static bool v2_parent(char *parent, size_t n)
{
	char own[4096], root[4096];
	if (!own_dir(2, own, sizeof(own)))
		return false;
	snprintf(parent, n, "%s", own);
	snprintf(root, sizeof(root), "%s", own);
	if (access(strcat(root, "/cgroup.type"), F_OK) == 0) /* not the root: it has a type */
		*strrchr(parent, '/') = 0;
	if (!file_has_word(parent, "cgroup.controllers", "memory"))
		return false;
	return file_has_word(parent, "cgroup.subtree_control", "memory") ||
	       put(parent, "cgroup.subtree_control", "+memory") == 0;
}

static int made(struct cgroup_mem *cg, uint64_t limit, char *why, size_t whylen)
{
	char v[32];
	snprintf(v, sizeof(v), "%llu\n", (unsigned long long)limit);
	const char *file = cg->version == 2 ? "memory.max" : "memory.limit_in_bytes";
	if (put(cg->dir, file, v) != 0) {
		snprintf(why, whylen, "%s/%s: %s", cg->dir, file, strerror(errno));
		return -1;
	}
	/* Without swap: a checker pushed to swap would not be killed, only crawl (ENOENT: swap is not
	 * accounted, so there is none to limit). */
	if (cg->version == 2 && put(cg->dir, "memory.swap.max", "0\n") != 0 && errno != ENOENT) {
		snprintf(why, whylen, "%s/memory.swap.max: %s", cg->dir, strerror(errno));
		return -1;
	}
	if (cg->version == 1 && put(cg->dir, "memory.memsw.limit_in_bytes", v) != 0 && errno != ENOENT) {
		snprintf(why, whylen, "%s/memory.memsw.limit_in_bytes: %s", cg->dir, strerror(errno));
		return -1;
	}
	return 0;
}

int cgroup_mem_make(struct cgroup_mem *cg, const char *name, uint64_t limit,
		    int (*pre)(const char *path, void *arg), void *arg, char *why, size_t whylen)
{
	char parent[4096];
	cg->version = 0;
	if (v2_parent(parent, sizeof(parent)))
		cg->version = 2;
	else if (own_dir(1, parent, sizeof(parent)) && access(parent, W_OK) == 0)
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

int cgroup_mem_enter(const struct cgroup_mem *cg) { return put(cg->dir, "cgroup.procs", "0\n"); }

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
