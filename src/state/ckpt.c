/*
 * ckpt: state directories, locking and atomic snapshots for resumable commands (see ckpt.h).
 *
 * Layout of a state directory:
 *   lock      flock()ed by the running process; holds its pid for humans
 *   command   the command line, for humans browsing /var/lib/myriad
 *   identity  the job's identity blob, compared on resume
 *   snapshot  the last complete snapshot (written as snapshot.tmp, fsynced, renamed)
 */
#include "state/ckpt.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "state/ser.h"
#include "util/util.h"

struct ckpt {
	char *dir;
	char *snapshot_path;
	int dirfd;
	int lockfd;
	bool identity_saved;
	bool started; /* no snapshot, but an earlier run's identity */
	struct sbuf identity;
};

static int mkdir_p(const char *path, mode_t mode)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, mode) != 0 && errno != EEXIST) {
			free(p);
			return -1;
		}
		*s = '/';
	}
	int r = mkdir(p, mode);
	free(p);
	return (r == 0 || errno == EEXIST) ? 0 : -1;
}

static char *default_base(void)
{
	char buf[PATH_MAX];
	const char *xdg = getenv("XDG_STATE_HOME");
	if (geteuid() == 0 && !xdg)
		return xstrdup("/var/lib/myriad");
	if (xdg && *xdg) {
		snprintf(buf, sizeof(buf), "%s/myriad", xdg);
	} else {
		const char *home = getenv("HOME");
		snprintf(buf, sizeof(buf), "%s/.local/state/myriad", home && *home ? home : "/tmp");
	}
	return xstrdup(buf);
}

static int write_file_at(int dirfd, const char *name, const void *data, size_t len, bool durable)
{
	char tmp[64];
	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (write_all(fd, data, len) != 0 || (durable && fsync(fd) != 0)) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	if (close(fd) != 0 || renameat(dirfd, tmp, dirfd, name) != 0)
		return -1;
	if (durable && fsync(dirfd) != 0)
		return -1;
	return 0;
}

static int read_file_at(int dirfd, const char *name, struct sbuf *buf)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	char tmp[65536];
	ssize_t n;
	while ((n = read(fd, tmp, sizeof(tmp))) > 0)
		sbuf_add(buf, tmp, n);
	int e = errno;
	close(fd);
	errno = e;
	return n < 0 ? -1 : 0;
}

struct ckpt *ckpt_open(const char *cmd, const char *state_dir, const struct sbuf *identity,
		       const char *summary)
{
	struct ckpt *c = xcalloc(1, sizeof(*c));
	c->lockfd = c->dirfd = -1;
	if (state_dir) {
		c->dir = xstrdup(state_dir);
	} else {
		char *base = default_base();
		size_t n = strlen(base) + strlen(cmd) + 32;
		c->dir = xmalloc(n);
		snprintf(c->dir, n, "%s/%s-%016llx", base, cmd,
			 (unsigned long long)XXH64(identity->data, identity->len, 0));
		free(base);
	}
	c->snapshot_path = xmalloc(strlen(c->dir) + sizeof("/snapshot"));
	sprintf(c->snapshot_path, "%s/snapshot", c->dir);
	if (mkdir_p(c->dir, 0700) != 0) {
		warnx_("state directory %s: mkdir: %s", c->dir, strerror(errno));
		goto fail;
	}
	c->dirfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c->dirfd < 0) {
		warnx_("state directory %s: open: %s", c->dir, strerror(errno));
		goto fail;
	}
	c->lockfd = openat(c->dirfd, "lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (c->lockfd < 0) {
		warnx_("state directory %s: lock: %s", c->dir, strerror(errno));
		goto fail;
	}
	if (flock(c->lockfd, LOCK_EX | LOCK_NB) != 0) {
		char pid[32] = "";
		ssize_t n = pread(c->lockfd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = 0;
		pid[strcspn(pid, "\n")] = 0;
		if (errno == EWOULDBLOCK)
			warnx_("state directory %s is in use by another run (pid %s): wait for it to finish or stop it",
			       c->dir, *pid ? pid : "?");
		else
			warnx_("state directory %s: flock: %s", c->dir, strerror(errno));
		goto fail;
	}
	char pid[32];
	int n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(c->lockfd, 0) != 0 || pwrite(c->lockfd, pid, n, 0) != n) {
		/* The pid is informational only. */
	}
	sbuf_add(&c->identity, identity->data, identity->len);
	if (summary && write_file_at(c->dirfd, "command", summary, strlen(summary), false) != 0) {
		warnx_("state directory %s: write: %s", c->dir, strerror(errno));
		goto fail;
	}
	return c;
fail:
	ckpt_close(c);
	return NULL;
}

const char *ckpt_dir(const struct ckpt *c) { return c->dir; }

const char *ckpt_snapshot_path(const struct ckpt *c) { return c->snapshot_path; }

int ckpt_load(struct ckpt *c, struct sbuf *buf)
{
	struct sbuf id = {0};
	if (read_file_at(c->dirfd, "snapshot", buf) != 0) {
		if (errno == ENOENT) {
			c->started = read_file_at(c->dirfd, "identity", &id) == 0 && id.len == c->identity.len &&
				     memcmp(id.data, c->identity.data, id.len) == 0;
			sbuf_free(&id);
			return 0;
		}
		warnx_("state %s/snapshot: read: %s", c->dir, strerror(errno));
		return -1;
	}
	const char *why;
	if (!ser_check(buf->data, buf->len, &why)) {
		warnx_("state %s/snapshot: cannot be used: %s; remove the state directory or use --no-state", c->dir, why);
		return -1;
	}
	if (read_file_at(c->dirfd, "identity", &id) != 0 || id.len != c->identity.len ||
	    memcmp(id.data, c->identity.data, id.len) != 0) {
		warnx_("state %s belongs to a different job (other operands or options): "
		       "remove it, or pass --state DIR or --no-state",
		       c->dir);
		sbuf_free(&id);
		return -1;
	}
	sbuf_free(&id);
	return 1;
}

bool ckpt_started(const struct ckpt *c) { return c && c->started; }

int ckpt_save(struct ckpt *c, const void *data, size_t len)
{
	/* The identity is written with this run's first snapshot, before it: a snapshot is never
	 * paired with another job's identity. */
	if (!c->identity_saved) {
		if (write_file_at(c->dirfd, "identity", c->identity.data, c->identity.len, true) != 0)
			goto fail;
		c->identity_saved = true;
	}
	if (write_file_at(c->dirfd, "snapshot", data, len, true) != 0)
		goto fail;
	return 0;
fail:
	warnx_("state %s: saving snapshot: %s", c->dir, strerror(errno));
	return -1;
}

void ckpt_finish(struct ckpt *c)
{
	if (!c)
		return;
	static const char *names[] = {"snapshot", "snapshot.tmp", "identity.tmp", "command", "command.tmp",
				      "identity", "lock"};
	for (size_t i = 0; i < ARRAY_LEN(names); i++)
		unlinkat(c->dirfd, names[i], 0);
	rmdir(c->dir);
	ckpt_close(c);
}

void ckpt_close(struct ckpt *c)
{
	if (!c)
		return;
	if (c->lockfd >= 0)
		close(c->lockfd);
	if (c->dirfd >= 0)
		close(c->dirfd);
	sbuf_free(&c->identity);
	free(c->snapshot_path);
	free(c->dir);
	free(c);
}

bool path_resolve(const char *p, char *out)
{
	if (realpath(p, out))
		return true;
	if (errno != ENOENT)
		return false;
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s", p) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return false;
	}
	size_t n = strlen(tmp);
	while (n > 1 && tmp[n - 1] == '/')
		tmp[--n] = 0;
	char *slash = strrchr(tmp, '/');
	char parent[PATH_MAX];
	const char *base = slash ? slash + 1 : tmp;
	if (slash == tmp)
		strcpy(parent, "/");
	else if (slash) {
		*slash = 0;
		if (!realpath(tmp, parent))
			return false;
	} else if (!getcwd(parent, sizeof(parent)))
		return false;
	if (snprintf(out, PATH_MAX, "%s%s%s", parent, strcmp(parent, "/") ? "/" : "", base) >= PATH_MAX) {
		errno = ENAMETOOLONG;
		return false;
	}
	return true;
}

bool path_inside(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (strncmp(path, dir, n) != 0)
		return false;
	return path[n] == 0 || path[n] == '/' || (n == 1 && dir[0] == '/');
}
