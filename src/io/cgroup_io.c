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

#include "io/cgroup.h"
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
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/..", *major, *minor);
	return cgroup_read_line(p, "dev", line, sizeof(line)) == 0 && sscanf(line, "%u:%u", major, minor) == 2;
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
	/* No block device of its own (btrfs, overlay, tmpfs, NFS...): what was it mounted from? The
	 * last mount of that device. */
	size_t nm;
	struct mount_entry *mt = mounts_read(&nm), *m = NULL;
	for (size_t i = nm; i-- > 0 && !m;)
		if (mt[i].dev == st.st_dev)
			m = &mt[i];
	if (!m) {
		snprintf(why_buf, sizeof(why_buf), "%s is on device %u:%u, which is not a block device", path, *major,
			 *minor);
		*why = why_buf;
		mounts_free(mt, nm);
		return -1;
	}
	struct stat bs;
	bool ok = m->src[0] == '/' && stat(m->src, &bs) == 0 && S_ISBLK(bs.st_mode);
	if (ok) {
		*major = major(bs.st_rdev);
		*minor = minor(bs.st_rdev);
		ok = whole_disk(major, minor);
	}
	if (!ok) {
		snprintf(why_buf, sizeof(why_buf), "%s is on %s (%s), not on a block device", path, m->fstype, m->src);
		*why = why_buf;
	}
	mounts_free(mt, nm);
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
	char pid[32];
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	return cgroup_write(dir, "cgroup.procs", pid);
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
	cgroup_read_line(parent, "cgroup.controllers", have, sizeof(have));
	cgroup_read_line(parent, "cgroup.subtree_control", on, sizeof(on));
	snprintf(p, sizeof(p), "%s/cgroup.subtree_control", parent);
	if (!cgroup_has_word(on, "io", " ") && cgroup_write(parent, "cgroup.subtree_control", "+io") != 0)
		return fail_msg("cannot enable the io controller in", p);
	bool memory = cgroup_has_word(on, "memory", " ") ||
		      (cgroup_has_word(have, "memory", " ") && cgroup_write(parent, "cgroup.subtree_control", "+memory") == 0);
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
	if (cgroup_write(g.made, "io.max", limit) != 0)
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
		char file[64], p[PATH_MAX + 128], limit[64];
		snprintf(file, sizeof(file), "blkio.throttle.%s_device", files[i]);
		snprintf(p, sizeof(p), "%s/%s", g.made, file);
		snprintf(limit, sizeof(limit), "%u:%u %llu", major, minor, (unsigned long long)vals[i]);
		if (cgroup_write(g.made, file, limit) != 0)
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
	char parent[PATH_MAX];
	int rc = -1;
	bool root;
	/* cgroup v2 where its io controller can be had, else v1's blkio. */
	if (cgroup_v2_parent(g.home, sizeof(g.home), parent, sizeof(parent)) &&
	    cgroup_file_has_word(parent, "cgroup.controllers", "io"))
		g.version = 2;
	else if (cgroup_own_dir("blkio", g.home, sizeof(g.home), &root)) {
		snprintf(parent, sizeof(parent), "%s", g.home);
		g.version = 1;
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
