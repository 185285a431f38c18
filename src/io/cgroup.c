/* cgroup: control files and this process's own cgroup (see cgroup.h). */
#include "io/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "io/mounts.h"

int cgroup_write(const char *dir, const char *file, const char *text)
{
	char p[PATH_MAX + 256];
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

int cgroup_read_line(const char *dir, const char *file, char *buf, size_t len)
{
	char p[PATH_MAX + 256];
	snprintf(p, sizeof(p), "%s/%s", dir, file);
	FILE *f = fopen(p, "re");
	if (!f)
		return -1;
	bool ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return errno = EIO, -1;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

bool cgroup_has_word(const char *list, const char *word, const char *sep)
{
	size_t n = strlen(word);
	for (const char *p = list; *p;) {
		size_t k = strcspn(p, sep);
		if (k == n && !strncmp(p, word, n))
			return true;
		p += k;
		p += *p != 0;
	}
	return false;
}

bool cgroup_file_has_word(const char *dir, const char *file, const char *word)
{
	char line[1024];
	return cgroup_read_line(dir, file, line, sizeof(line)) == 0 && cgroup_has_word(line, word, " ");
}

/* This process's cgroup path in the hierarchy whose /proc/self/cgroup controller list holds ctl
 * ("" for v2's unified line "0::PATH"), into out. */
static bool own_cgroup(const char *ctl, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return false;
	char line[PATH_MAX + 64];
	bool found = false;
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = 0;
		if (*ctl ? cgroup_has_word(c1 + 1, ctl, ",") : (c1[1] == 0 && !strcmp(line, "0"))) {
			snprintf(out, len, "%s", c2 + 1);
			found = true;
		}
	}
	fclose(f);
	return found;
}

bool cgroup_own_dir(const char *ctl, char *dir, size_t len, bool *root)
{
	char own[PATH_MAX];
	if (!own_cgroup(ctl, own, sizeof(own)))
		return false;
	size_t n;
	struct mount_entry *m = mounts_read(&n);
	bool found = false;
	/* The last mount of that hierarchy that shows our cgroup (a later one lies on top). */
	for (size_t i = n; i-- > 0 && !found;) {
		bool hier = *ctl ? !strcmp(m[i].fstype, "cgroup") && cgroup_has_word(m[i].opts, ctl, ",")
				 : !strcmp(m[i].fstype, "cgroup2");
		size_t rl = strcmp(m[i].root, "/") ? strlen(m[i].root) : 0;
		if (!hier || (rl && (strncmp(own, m[i].root, rl) || (own[rl] && own[rl] != '/'))))
			continue; /* another hierarchy, or one that does not show our cgroup */
		int k = snprintf(dir, len, "%s%s", m[i].point, own + rl);
		while (k > 1 && dir[k - 1] == '/')
			dir[--k] = 0;
		*root = !strcmp(dir, m[i].point);
		found = (size_t)k < len;
	}
	mounts_free(m, n);
	return found;
}

bool cgroup_v2_parent(char *home, size_t hlen, char *parent, size_t plen)
{
	bool root;
	if (!cgroup_own_dir("", home, hlen, &root))
		return false;
	snprintf(parent, plen, "%s", home);
	char *slash = strrchr(parent, '/');
	if (!root && slash && slash != parent)
		*slash = 0;
	return true;
}
