/* cgroup_io: a kernel-enforced I/O limit on one block device for this process (see cgroup_io.h). */
#include "io/cgroup_io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "io/mounts.h"
#include "util/util.h"

bool cgroup_io_parse(const char *s, struct cgroup_io_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	char *copy = xstrdup(s), *save = NULL;
	bool any = false, ok = true;
	for (char *t = strtok_r(copy, ", \t", &save); t && ok; t = strtok_r(NULL, ", \t", &save)) {
		char *eq = strchr(t, '=');
		uint64_t v = 0, *dst = NULL;
		bool bytes = false;
		if (eq) {
			*eq = 0;
			if (!strcmp(t, "rbps"))
				dst = &spec->rbps, bytes = true;
			else if (!strcmp(t, "wbps"))
				dst = &spec->wbps, bytes = true;
			else if (!strcmp(t, "riops"))
				dst = &spec->riops;
			else if (!strcmp(t, "wiops"))
				dst = &spec->wiops;
		}
		ok = dst && (bytes ? parse_size(eq + 1, &v) : parse_count(eq + 1, &v)) && v > 0;
		if (ok)
			*dst = v;
		any = true;
	}
	free(copy);
	return ok && any;
}

/* ---- files ---- */

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	int e = errno;
	close(fd);
	errno = e;
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* The first line of a small file, without its newline, into buf. */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	bool ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return errno = EIO, -1;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* Is word one of the words (separated by sep) of list? */
static bool has_word(const char *list, const char *word, const char *sep)
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

/* One line of /proc/self/mountinfo, split (the strings point into the line). */
struct mnt {
	unsigned major, minor;
	char *root, *point, *fstype, *source, *superopts;
};

static bool parse_mount(char *line, struct mnt *m)
{
	char *f[6], *save = NULL;
	int n = 0;
	for (char *t = strtok_r(line, " \n", &save); t; t = strtok_r(NULL, " \n", &save)) {
		if (n < 6)
			f[n++] = t;
		else if (!strcmp(t, "-"))
			break;
	}
	if (n < 6 || sscanf(f[2], "%u:%u", &m->major, &m->minor) != 2)
		return false;
	m->root = f[3];
	m->point = f[4];
	m->fstype = strtok_r(NULL, " \n", &save);
	m->source = strtok_r(NULL, " \n", &save);
	m->superopts = strtok_r(NULL, " \n", &save);
	if (!m->fstype || !m->source || !m->superopts)
		return false;
	mounts_unescape(m->root);
	mounts_unescape(m->point);
	mounts_unescape(m->source);
	return true;
}

/* Find the last mount that match() accepts; copies its fields into out (strings malloc'd). */
static bool find_mount(bool (*match)(const struct mnt *, const void *), const void *arg, struct mnt *out)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return false;
	char *line = NULL;
	size_t cap = 0;
	bool found = false;
	while (getline(&line, &cap, f) > 0) {
		struct mnt m;
		if (!parse_mount(line, &m) || !match(&m, arg))
			continue;
		if (found) {
			free(out->root), free(out->point), free(out->fstype), free(out->source), free(out->superopts);
		}
		*out = m;
		out->root = xstrdup(m.root), out->point = xstrdup(m.point), out->fstype = xstrdup(m.fstype);
		out->source = xstrdup(m.source), out->superopts = xstrdup(m.superopts);
		found = true;
	}
	free(line);
	fclose(f);
	return found;
}

static void mount_free(struct mnt *m)
{
	free(m->root), free(m->point), free(m->fstype), free(m->source), free(m->superopts);
}

/* ---- the device ---- */

/* Is dev a block device the kernel knows? Then resolve a partition to its disk. */
static bool whole_disk(unsigned *major, unsigned *minor)
{
	char p[PATH_MAX], line[64];
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u", *major, *minor);
	if (access(p, F_OK) != 0)
		return false;
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/partition", *major, *minor);
	if (access(p, F_OK) != 0)
		return true;
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/../dev", *major, *minor);
	return read_line(p, line, sizeof(line)) == 0 && sscanf(line, "%u:%u", major, minor) == 2;
}

static bool same_dev(const struct mnt *m, const void *arg)
{
	const dev_t *d = arg;
	return makedev(m->major, m->minor) == *d;
}

static char why_buf[512];

int cgroup_io_device(const char *path, unsigned *major, unsigned *minor, const char **why)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		snprintf(why_buf, sizeof(why_buf), "%s: stat: %s", path, strerror(errno));
		*why = why_buf;
		return -1;
	}
	*major = major(st.st_dev);
	*minor = minor(st.st_dev);
	if (whole_disk(major, minor))
		return 0;
	/* No block device of its own (btrfs, overlay, tmpfs, NFS...): what was it mounted from? */
	struct mnt m;
	if (!find_mount(same_dev, &st.st_dev, &m)) {
		snprintf(why_buf, sizeof(why_buf), "%s is on device %u:%u, which is not a block device", path, *major,
			 *minor);
		*why = why_buf;
		return -1;
	}
	struct stat bs;
	bool ok = m.source[0] == '/' && stat(m.source, &bs) == 0 && S_ISBLK(bs.st_mode);
	if (ok) {
		*major = major(bs.st_rdev);
		*minor = minor(bs.st_rdev);
		ok = whole_disk(major, minor);
	}
	if (!ok) {
		snprintf(why_buf, sizeof(why_buf), "%s is on %s (%s), not on a block device", path, m.fstype, m.source);
		*why = why_buf;
	}
	mount_free(&m);
	return ok ? 0 : -1;
}

/* ---- the cgroup ---- */

static struct {
	bool applied;
	int version;
	char home[PATH_MAX]; /* the cgroup to move back to */
	char made[PATH_MAX + 64]; /* the one made for us */
	char desc[160];
} g;

static bool is_cgroup2(const struct mnt *m, const void *arg) { return !strcmp(m->fstype, "cgroup2"); }
static bool is_blkio(const struct mnt *m, const void *arg)
{
	return !strcmp(m->fstype, "cgroup") && has_word(m->superopts, "blkio", ",");
}

/* This process's cgroup path in the hierarchy whose /proc/self/cgroup controller list is ctl
 * ("" for v2's unified line), into out. */
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
		if (*ctl ? has_word(c1 + 1, ctl, ",") : (c1[1] == 0 && !strncmp(line, "0", 1))) {
			snprintf(out, len, "%s", c2 + 1);
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* The directory of cgroup path cg in the hierarchy mounted as m. */
static bool cgroup_dir(const struct mnt *m, const char *cg, char *out, size_t len)
{
	size_t rl = strcmp(m->root, "/") ? strlen(m->root) : 0;
	if (rl && (strncmp(cg, m->root, rl) || (cg[rl] && cg[rl] != '/')))
		return false; /* outside what this mount shows */
	int n = snprintf(out, len, "%s%s", m->point, cg + rl);
	while (n > 1 && out[n - 1] == '/')
		out[--n] = 0;
	return (size_t)n < len;
}

/* Remove cgroups myriad-CMD.PID in dir whose process is gone (left by a run that was killed). */
static void remove_stale(const char *dir, const char *cmd)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	char prefix[64];
	int pl = snprintf(prefix, sizeof(prefix), "myriad-%s.", cmd);
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		if (strncmp(de->d_name, prefix, pl))
			continue;
		long pid = strtol(de->d_name + pl, &end, 10);
		if (*end || pid <= 0 || pid == getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		char p[PATH_MAX + 256];
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		rmdir(p); /* fails, harmlessly, if something still runs in it */
	}
	closedir(d);
}

static int move_to(const char *dir)
{
	char p[PATH_MAX + 128], pid[32];
	snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	return write_file(p, pid);
}

static int fail_msg(const char *what, const char *path)
{
	warnx_("--cgroup-io: %s %s: %s", what, path, strerror(errno));
	return -1;
}

/* cgroup v2: parent is where the new cgroup goes; io (and memory, so that buffered writes are
 * charged to it) must be enabled for its children. */
static int setup_v2(const char *parent, const struct cgroup_io_spec *s, unsigned major, unsigned minor)
{
	char p[PATH_MAX + 128], have[512] = "", on[512] = "";
	snprintf(p, sizeof(p), "%s/cgroup.controllers", parent);
	read_line(p, have, sizeof(have));
	snprintf(p, sizeof(p), "%s/cgroup.subtree_control", parent);
	read_line(p, on, sizeof(on));
	if (!has_word(on, "io", " ") && write_file(p, "+io") != 0)
		return fail_msg("cannot enable the io controller in", p);
	bool memory = has_word(on, "memory", " ") || (has_word(have, "memory", " ") && write_file(p, "+memory") == 0);
	if (mkdir(g.made, 0755) != 0)
		return fail_msg("mkdir", g.made);
	char limit[256];
	int n = snprintf(limit, sizeof(limit), "%u:%u", major, minor);
	const char *keys[] = {"rbps", "wbps", "riops", "wiops"};
	const uint64_t vals[] = {s->rbps, s->wbps, s->riops, s->wiops};
	for (int i = 0; i < 4; i++)
		if (vals[i])
			n += snprintf(limit + n, sizeof(limit) - n, " %s=%llu", keys[i], (unsigned long long)vals[i]);
	snprintf(p, sizeof(p), "%s/io.max", g.made);
	if (write_file(p, limit) != 0)
		return fail_msg("cannot write the limit to", p);
	if (!memory && (s->wbps || s->wiops))
		warnx_("--cgroup-io: the memory controller is not available in %s: buffered writes are not limited, "
		       "only reads and direct I/O (use --bwlimit to limit writes)",
		       parent);
	return 0;
}

/* cgroup v1: the new cgroup goes below the current blkio one; limits hold hierarchically. */
static int setup_v1(const struct cgroup_io_spec *s, unsigned major, unsigned minor)
{
	if (mkdir(g.made, 0755) != 0)
		return fail_msg("mkdir", g.made);
	const char *files[] = {"read_bps", "write_bps", "read_iops", "write_iops"};
	const uint64_t vals[] = {s->rbps, s->wbps, s->riops, s->wiops};
	for (int i = 0; i < 4; i++) {
		if (!vals[i])
			continue;
		char p[PATH_MAX + 128], limit[64];
		snprintf(p, sizeof(p), "%s/blkio.throttle.%s_device", g.made, files[i]);
		snprintf(limit, sizeof(limit), "%u:%u %llu", major, minor, (unsigned long long)vals[i]);
		if (write_file(p, limit) != 0)
			return fail_msg("cannot write the limit to", p);
	}
	return 0;
}

static void remove_at_exit(void) { cgroup_io_remove(); }

int cgroup_io_apply(const struct cgroup_io_spec *s, const char *path, const char *cmd)
{
	unsigned major, minor;
	const char *why;
	if (cgroup_io_device(path, &major, &minor, &why) != 0) {
		warnx_("--cgroup-io: %s: an I/O limit needs a block device", why);
		return -1;
	}
	struct mnt m;
	char own[PATH_MAX], parent[PATH_MAX];
	int rc = -1;
	/* cgroup v2 where its io controller can be had, else v1's blkio. */
	if (find_mount(is_cgroup2, NULL, &m)) {
		char ctl[512] = "", p[PATH_MAX + 32];
		if (own_cgroup("", own, sizeof(own)) && cgroup_dir(&m, own, g.home, sizeof(g.home))) {
			snprintf(parent, sizeof(parent), "%s", g.home);
			/* Not the root: a sibling, since a cgroup with processes may not have children with
			 * controllers. */
			if (strcmp(g.home, m.point))
				*strrchr(parent, '/') = 0;
			snprintf(p, sizeof(p), "%s/cgroup.controllers", parent);
			if (read_line(p, ctl, sizeof(ctl)) == 0 && has_word(ctl, "io", " "))
				g.version = 2;
		}
		mount_free(&m);
	}
	if (!g.version && find_mount(is_blkio, NULL, &m)) {
		if (own_cgroup("blkio", own, sizeof(own)) && cgroup_dir(&m, own, g.home, sizeof(g.home))) {
			snprintf(parent, sizeof(parent), "%s", g.home);
			g.version = 1;
		}
		mount_free(&m);
	}
	if (!g.version) {
		warnx_("--cgroup-io: no cgroup I/O controller to use: neither cgroup v2's io controller nor v1's blkio "
		       "hierarchy is available (see /proc/self/mountinfo); use --bwlimit instead");
		return -1;
	}
	remove_stale(parent, cmd);
	snprintf(g.made, sizeof(g.made), "%s/myriad-%s.%d", parent, cmd, (int)getpid());
	rc = g.version == 2 ? setup_v2(parent, s, major, minor) : setup_v1(s, major, minor);
	if (rc == 0 && move_to(g.made) != 0)
		rc = fail_msg("cannot move into", g.made);
	if (rc != 0) {
		rmdir(g.made);
		g.version = 0;
		return -1;
	}
	g.applied = true;
	atexit(remove_at_exit);
	int n = snprintf(g.desc, sizeof(g.desc), "v%d %u:%u", g.version, major, minor);
	const char *keys[] = {"rbps", "wbps", "riops", "wiops"};
	const uint64_t vals[] = {s->rbps, s->wbps, s->riops, s->wiops};
	for (int i = 0; i < 4; i++)
		if (vals[i])
			n += snprintf(g.desc + n, sizeof(g.desc) - n, " %s=%llu", keys[i], (unsigned long long)vals[i]);
	if (g.version == 1)
		warnx_("--cgroup-io: cgroup v1 blkio (%s): limits reads and direct I/O on device %u:%u, not buffered "
		       "writes, which the kernel writes back outside the cgroup: use --bwlimit to limit writes",
		       g.made, major, minor);
	return 0;
}

void cgroup_io_describe(struct sbuf *b)
{
	if (g.applied)
		sbuf_adds(b, g.desc);
}

void cgroup_io_remove(void)
{
	if (!g.applied)
		return;
	g.applied = false;
	if (move_to(g.home) != 0)
		warnx_("--cgroup-io: cannot move back to %s: %s; %s stays", g.home, strerror(errno), g.made);
	else if (rmdir(g.made) != 0)
		warnx_("--cgroup-io: rmdir %s: %s", g.made, strerror(errno));
}
