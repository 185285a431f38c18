/*
 * ckpt: state directories, locking and atomic snapshots for resumable commands (see ckpt.h).
 *
 * Layout of a state directory:
 *   myriad-state  the marker: "myriad state directory 1" and who made the directory (myriad, or
 *                 the user who gave it empty to --state); nothing is written in a non-empty
 *                 directory without it
 *   lock          flock()ed by the running process; holds its pid for humans
 *   command       the command line, for humans browsing /var/lib/myriad
 *   identity      the job's identity blob, compared on resume
 *   snapshot      the last complete snapshot (written as snapshot.tmp, fsynced, renamed)
 *   progress      the progress line at that snapshot, for the resume notice and `myriad jobs`
 *   links         du's journal of hard-linked inodes met (ckpt_open_file)
 *   tally-R       the tally of rank R > 0 of a job across the ranks of an MPI job (state/tally.h)
 * The marker's modification time is when the job started (--fresh dates it anew).
 * Those names (and their .tmp) are the only entries myriad creates, opens for writing or removes
 * there, never through a symbolic link.
 */
#include "state/ckpt.h"

#include <dirent.h>
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
#include "util/atomic.h"
#include "util/util.h"

#define MARKER "myriad-state"
static const char marker_magic[] = "myriad state directory 1\n";
static const char made_by_myriad[] = "made-by: myriad\n";
static const char made_by_user[] = "made-by: user\n";

/* Every name myriad writes in a state directory, in the order a finished job removes them: the
 * identity goes last but for the lock (see ckpt_finish), the marker after everything. */
static const char *const own_names[] = {"snapshot", "snapshot.tmp", "progress", "progress.tmp", "identity.tmp",
					"command",  "command.tmp",  "identity", "lock",		"tally",
					"tally.tmp", "links",	     MARKER ".tmp", MARKER}; /* tally: state/tally.h */
/* What --fresh discards: the earlier run's progress and counts (its identity last, as in
 * ckpt_finish). */
static const char *const run_names[] = {"snapshot", "snapshot.tmp", "progress", "progress.tmp", "tally",
					"tally.tmp", "links",	     "identity.tmp", "identity"};

/* errno for an entry of ours that is not a regular file of its own (a FIFO, a hard link...). */
#define ENOTOWN EMEDIUMTYPE

struct ckpt {
	char *dir;
	char *snapshot_path;
	int dirfd;
	int lockfd;
	bool owned; /* made by myriad: removed with the last of its files */
	bool identity_saved;
	char *summary; /* the command line, written with the first snapshot (NULL: none) */
	bool started; /* no snapshot, but an earlier run's identity */
	struct sbuf identity;
	struct ckpt_info *prev; /* what an earlier run left, read before this one wrote anything */
};

static const char *errstr(int e)
{
	if (e == ELOOP)
		return "a symbolic link (not followed)";
	if (e == ENOTOWN)
		return "not a regular file of its own";
	return strerror(e);
}

/* Make path and its missing parents: 1 when the last component was made here, 0 when it was
 * there, -1 with errno. */
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
	return r == 0 ? 1 : errno == EEXIST ? 0 : -1;
}

char *ckpt_default_base(void)
{
	char buf[PATH_MAX];
	const char *xdg = getenv("XDG_STATE_HOME");
	/* $XDG_STATE_HOME wins for root too (the tests and a root's own setup rely on it); empty is
	 * unset, as the XDG specification says. */
	if (xdg && *xdg) {
		snprintf(buf, sizeof(buf), "%s/myriad", xdg);
	} else if (geteuid() == 0) {
		return xstrdup("/var/lib/myriad");
	} else {
		const char *home = getenv("HOME");
		snprintf(buf, sizeof(buf), "%s/.local/state/myriad", home && *home ? home : "/tmp");
	}
	return xstrdup(buf);
}

char *ckpt_dir_for(const char *cmd, const char *state_dir, const struct sbuf *identity)
{
	if (state_dir)
		return xstrdup(state_dir);
	char *base = ckpt_default_base();
	size_t n = strlen(base) + strlen(cmd) + 32;
	char *dir = xmalloc(n);
	snprintf(dir, n, "%s/%s-%016llx", base, cmd, (unsigned long long)XXH64(identity->data, identity->len, 0));
	free(base);
	return dir;
}

/* Open an entry of the state directory that must be a regular file with one name, never through a
 * symbolic link (ELOOP) nor blocking on a FIFO. -1 with errno (ENOTOWN: not such a file). */
static int open_own(int dirfd, const char *name, int flags)
{
	int fd = openat(dirfd, name, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
		close(fd);
		errno = ENOTOWN;
		return -1;
	}
	return fd;
}

/* Write name whole through name.tmp, made afresh (a planted link or hard link there is replaced,
 * never written through: the state directory is myriad's own), and rename it over name. */
static int write_file_at(int dirfd, const char *name, const void *data, size_t len, bool durable)
{
	char tmp[64];
	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	unsigned flags = ATOMIC_REPLACE_TMP | (durable ? 0 : ATOMIC_NOSYNC);
	return atomic_write_at(dirfd, name, tmp, data, len, 0600, flags, 0) == 0 ? 0 : -1;
}

/* Read name (at most max bytes, 0: no limit) into buf. -1 with errno (ENOTOWN, ELOOP...). */
static int read_file_at(int dirfd, const char *name, struct sbuf *buf, size_t max)
{
	int fd = open_own(dirfd, name, O_RDONLY);
	if (fd < 0)
		return -1;
	char tmp[65536];
	ssize_t n = 0;
	size_t want = sizeof(tmp);
	while ((!max || buf->len < max) && (n = read(fd, tmp, max && max - buf->len < want ? max - buf->len : want)) > 0)
		sbuf_add(buf, tmp, n);
	int e = errno;
	close(fd);
	errno = e;
	return n < 0 ? -1 : 0;
}

enum dir_kind {
	DIR_MARKED,  /* has myriad's marker */
	DIR_EMPTY,   /* nothing in it (under the default location: but maybe a marker.tmp) */
	DIR_OLD,     /* a state directory of a myriad before the marker: only its names, a real job */
	DIR_FOREIGN, /* anything else: not myriad's to write in */
};

/* An old myriad's state directory: only myriad's names, as regular files; an identity that is a
 * myriad job's; a snapshot, if any, a whole myriad blob. false with the first thing that is not so. */
static bool old_state_dir(int dirfd, char *why, size_t whylen)
{
	struct sbuf b = {0};
	bool ok = read_file_at(dirfd, "identity", &b, 0) == 0 && b.len >= 8 && !memcmp(b.data, "MYRID001", 8);
	if (!ok) {
		snprintf(why, whylen, "its 'identity' is not a myriad job's");
		sbuf_free(&b);
		return false;
	}
	b.len = 0;
	const char *bad;
	int r = read_file_at(dirfd, "snapshot", &b, 0);
	ok = (r != 0 && errno == ENOENT) || (r == 0 && b.len >= 8 && !memcmp(b.data, "MYR", 3) && ser_check(b.data, b.len, &bad));
	if (!ok)
		snprintf(why, whylen, "its 'snapshot' is not a whole myriad snapshot");
	sbuf_free(&b);
	return ok;
}

/* What the directory open as dirfd is; for DIR_MARKED, who made it (*owned); for DIR_FOREIGN, why
 * it is not myriad's. in_base: it is under the default location, where a marker.tmp can only be
 * left by a run killed while it marked the directory. -1 with errno when it cannot be read. */
static int dir_kind(int dirfd, bool in_base, bool *owned, char *why, size_t whylen)
{
	struct sbuf m = {0};
	int r = read_file_at(dirfd, MARKER, &m, 256);
	if (r == 0 || errno != ENOENT) {
		size_t n = strlen(marker_magic);
		bool ok = r == 0 && m.len > n && !memcmp(m.data, marker_magic, n);
		*owned = ok && m.len - n == strlen(made_by_myriad) && !memcmp(m.data + n, made_by_myriad, m.len - n);
		ok = ok && (*owned || (m.len - n == strlen(made_by_user) && !memcmp(m.data + n, made_by_user, m.len - n)));
		sbuf_free(&m);
		if (ok)
			return DIR_MARKED;
		snprintf(why, whylen, "its '%s' is not myriad's marker", MARKER);
		return DIR_FOREIGN;
	}
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	int kind = DIR_EMPTY;
	struct dirent *e;
	errno = 0;
	while (kind != DIR_FOREIGN && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		bool marker_tmp = !strcmp(e->d_name, MARKER ".tmp");
		if (marker_tmp && in_base)
			continue;
		size_t i = 0;
		while (i < ARRAY_LEN(own_names) && strcmp(e->d_name, own_names[i]))
			i++;
		struct stat st;
		if (marker_tmp) {
			snprintf(why, whylen, "'" MARKER ".tmp' was left by a run killed while it marked the directory: remove it");
			kind = DIR_FOREIGN;
		} else if (i == ARRAY_LEN(own_names)) {
			snprintf(why, whylen, "'%s' is not one of myriad's files", e->d_name);
			kind = DIR_FOREIGN;
		} else if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
			   st.st_nlink != 1) {
			snprintf(why, whylen, "'%s' is not a regular file of its own", e->d_name);
			kind = DIR_FOREIGN;
		} else {
			kind = DIR_OLD;
		}
		errno = 0;
	}
	int err = errno;
	closedir(d);
	if (err) {
		errno = err;
		return -1;
	}
	if (kind == DIR_OLD && !old_state_dir(dirfd, why, whylen))
		kind = DIR_FOREIGN;
	return kind;
}

static int write_marker(struct ckpt *c)
{
	struct sbuf m = {0};
	sbuf_adds(&m, marker_magic);
	sbuf_adds(&m, c->owned ? made_by_myriad : made_by_user);
	int r = write_file_at(c->dirfd, MARKER, m.data, m.len, true);
	sbuf_free(&m);
	return r;
}

/* A text file of the state directory (at most max bytes), without its final newlines; NULL when
 * there is none or it cannot be read. */
static char *read_text_at(int dirfd, const char *name, size_t max)
{
	struct sbuf b = {0};
	if (read_file_at(dirfd, name, &b, max) != 0 || !b.len) {
		sbuf_free(&b);
		return NULL;
	}
	while (b.len && b.data[b.len - 1] == '\n')
		b.len--;
	sbuf_addc(&b, 0);
	return b.data;
}

/* Fill in from the directory open as dirfd; only reads. */
static void inspect_at(int dirfd, struct ckpt_info *in)
{
	memset(in, 0, sizeof(*in));
	in->command = read_text_at(dirfd, "command", 65536);
	in->progress = read_text_at(dirfd, "progress", 4096);
	for (size_t i = 0; i < ARRAY_LEN(own_names); i++) {
		struct stat st;
		if (fstatat(dirfd, own_names[i], &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
			continue;
		in->disk_bytes += (uint64_t)st.st_blocks * 512;
		if (st.st_mtime > in->last_written)
			in->last_written = st.st_mtime;
		if (!strcmp(own_names[i], MARKER))
			in->started = st.st_mtime;
		else if (!strcmp(own_names[i], "snapshot")) {
			in->snapshot_time = st.st_mtime;
			in->snapshot_bytes = st.st_size;
		} else if (!strcmp(own_names[i], "identity"))
			in->has_identity = true;
	}
	char pid[32] = "";
	int fd = open_own(dirfd, "lock", O_RDONLY);
	if (fd < 0)
		return;
	ssize_t n = pread(fd, pid, sizeof(pid) - 1, 0);
	pid[n > 0 ? n : 0] = 0;
	in->pid = atol(pid);
	/* A shared lock is refused only while a run holds its exclusive one; ours goes with the close. */
	in->running = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
	close(fd);
}

void ckpt_info_free(struct ckpt_info *in)
{
	if (!in)
		return;
	free(in->command);
	free(in->progress);
	memset(in, 0, sizeof(*in));
}

/* Open dir and check that it carries myriad's marker: the fd, or -1 with errno (0 and why set: it
 * does not). */
static int open_marked(const char *dir, bool *owned, char *why, size_t whylen)
{
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -1;
	int kind = dir_kind(dirfd, false, owned, why, whylen);
	if (kind == DIR_MARKED)
		return dirfd;
	int e = errno;
	close(dirfd);
	if (kind < 0) {
		errno = e;
		return -1;
	}
	if (kind != DIR_FOREIGN)
		snprintf(why, whylen, kind == DIR_EMPTY ? "it is empty" : "it has no '%s' marker (an older myriad's?)", MARKER);
	errno = 0;
	return -1;
}

int ckpt_inspect(const char *dir, struct ckpt_info *in, char *why, size_t whylen)
{
	bool owned;
	int dirfd = open_marked(dir, &owned, why, whylen);
	if (dirfd < 0)
		return errno ? -1 : 0;
	inspect_at(dirfd, in);
	close(dirfd);
	return 1;
}

/* Is name a rank's tally, "tally-R" or "tally-R.tmp" (R: digits)? */
static bool rank_tally_name(const char *name)
{
	if (strncmp(name, "tally-", 6) != 0)
		return false;
	const char *p = name + 6, *d = p;
	while (*p >= '0' && *p <= '9')
		p++;
	return p > d && (!*p || !strcmp(p, ".tmp"));
}

/* Unlink names in dirfd (ENOENT is fine), and with them the ranks' tallies (regular files only).
 * 0, or -1 with the first other errno. */
static int unlink_names(int dirfd, const char *const *names, size_t n)
{
	int err = 0;
	for (size_t i = 0; i < n; i++)
		if (unlinkat(dirfd, names[i], 0) != 0 && errno != ENOENT && !err)
			err = errno;
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d && fd >= 0)
		close(fd);
	for (struct dirent *e; d && (e = readdir(d));)
		if ((e->d_type == DT_REG || e->d_type == DT_UNKNOWN) && rank_tally_name(e->d_name)) {
			struct stat st;
			if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
			    unlinkat(dirfd, e->d_name, 0) != 0 && errno != ENOENT && !err)
				err = errno;
		}
	if (d)
		closedir(d);
	errno = err;
	return err ? -1 : 0;
}

enum ckpt_remove_result ckpt_remove(const char *dir, struct ckpt_info *in, char *why, size_t whylen)
{
	struct ckpt_info tmp;
	if (!in)
		in = &tmp;
	memset(in, 0, sizeof(*in));
	bool owned;
	int dirfd = open_marked(dir, &owned, why, whylen);
	if (dirfd < 0)
		return errno ? CKPT_ERROR : CKPT_NOT_OURS;
	inspect_at(dirfd, in);
	enum ckpt_remove_result r = CKPT_ERROR;
	int lockfd = open_own(dirfd, "lock", O_RDWR | O_CREAT);
	if (lockfd >= 0 && flock(lockfd, LOCK_EX | LOCK_NB) != 0) {
		if (errno == EWOULDBLOCK) {
			in->running = true;
			r = CKPT_BUSY;
		}
	} else if (lockfd >= 0 && unlink_names(dirfd, own_names, ARRAY_LEN(own_names)) == 0) {
		r = CKPT_REMOVED;
		if (owned && rmdir(dir) != 0 && errno == ENOTEMPTY)
			snprintf(why, whylen, "the directory is kept: it holds files that are not myriad's");
	}
	int e = errno;
	if (lockfd >= 0)
		close(lockfd);
	close(dirfd);
	if (in == &tmp)
		ckpt_info_free(in);
	errno = e;
	return r;
}

struct ckpt *ckpt_open(const char *cmd, const char *state_dir, const struct sbuf *identity,
		       const char *summary)
{
	struct ckpt *c = xcalloc(1, sizeof(*c));
	c->lockfd = c->dirfd = -1;
	c->dir = ckpt_dir_for(cmd, state_dir, identity);
	c->snapshot_path = xmalloc(strlen(c->dir) + sizeof("/snapshot"));
	sprintf(c->snapshot_path, "%s/snapshot", c->dir);
	int made = mkdir_p(c->dir, 0700);
	if (made < 0) {
		warnx_("cannot make the state directory %s: %s: give --state a directory you can write, or keep no "
		       "state with --no-state",
		       c->dir, strerror(errno));
		goto fail;
	}
	c->dirfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c->dirfd < 0) {
		warnx_("state directory %s: open: %s", c->dir, strerror(errno));
		goto fail;
	}
	char why[NAME_MAX + 64] = "";
	int kind = dir_kind(c->dirfd, !state_dir, &c->owned, why, sizeof(why));
	if (kind < 0) {
		warnx_("state directory %s: read: %s", c->dir, strerror(errno));
		goto fail;
	}
	if (kind == DIR_FOREIGN) {
		warnx_("refusing state directory %s: it is not empty and not myriad's (%s); nothing in it was "
		       "touched: %sgive --state a new or empty directory",
		       c->dir, why, state_dir ? "" : "remove it, or ");
		goto fail;
	}
	/* Directories under the default base are myriad's own, even when a run was killed between
	 * making one and marking it. */
	if (kind != DIR_MARKED)
		c->owned = made || !state_dir;
	/* An empty directory is marked before anything else is put in it; an old one once its lock is
	 * held (its old run may still be going). */
	if (kind == DIR_EMPTY && write_marker(c) != 0) {
		warnx_("state directory %s: %s: %s", c->dir, MARKER, errstr(errno));
		goto fail;
	}
	c->lockfd = open_own(c->dirfd, "lock", O_RDWR | O_CREAT);
	if (c->lockfd < 0) {
		warnx_("state directory %s: lock: %s", c->dir, errstr(errno));
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
	if (kind == DIR_MARKED || kind == DIR_OLD) {
		c->prev = xmalloc(sizeof(*c->prev));
		inspect_at(c->dirfd, c->prev);
		c->prev->running = false; /* the lock is ours now */
	}
	if (kind == DIR_OLD && write_marker(c) != 0) {
		warnx_("state directory %s: %s: %s", c->dir, MARKER, errstr(errno));
		goto fail;
	}
	sbuf_add(&c->identity, identity->data, identity->len);
	c->summary = summary ? xstrdup(summary) : NULL;
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
	if (read_file_at(c->dirfd, "snapshot", buf, 0) != 0) {
		if (errno == ENOENT) {
			c->started = read_file_at(c->dirfd, "identity", &id, 0) == 0 && id.len == c->identity.len &&
				     memcmp(id.data, c->identity.data, id.len) == 0;
			sbuf_free(&id);
			return 0;
		}
		warnx_("state %s/snapshot: read: %s", c->dir, errstr(errno));
		return -1;
	}
	const char *why;
	if (!ser_check(buf->data, buf->len, &why)) {
		warnx_("state %s/snapshot: cannot be used: %s; start over with --fresh (discarding it), or use --no-state",
		       c->dir, why);
		return -1;
	}
	if (read_file_at(c->dirfd, "identity", &id, 0) != 0 || id.len != c->identity.len ||
	    memcmp(id.data, c->identity.data, id.len) != 0) {
		warnx_("state %s belongs to a different job (other operands or options): "
		       "pass another --state DIR or --no-state, or discard it with --fresh",
		       c->dir);
		sbuf_free(&id);
		return -1;
	}
	sbuf_free(&id);
	return 1;
}

bool ckpt_started(const struct ckpt *c) { return c && c->started; }

int ckpt_open_file(const struct ckpt *c, const char *name)
{
	int fd = open_own(c->dirfd, name, O_RDWR | O_CREAT);
	if (fd >= 0) /* blocking again, for plain reads and writes */
		(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

const struct ckpt_info *ckpt_previous(const struct ckpt *c) { return c->prev; }

int ckpt_discard(struct ckpt *c)
{
	if (unlink_names(c->dirfd, run_names, ARRAY_LEN(run_names)) != 0 || write_marker(c) != 0) {
		warnx_("state %s: discarding the earlier run's state: %s", c->dir, errstr(errno));
		return -1;
	}
	c->started = false;
	return 0;
}

void ckpt_save_progress(struct ckpt *c, const char *line, size_t len)
{
	if (write_file_at(c->dirfd, "progress", line, len, false) != 0) {
		/* Only informs: the snapshot is what counts. */
	}
}

/* Make the directory this run's: its pid in the lock, its command line. Done with the first
 * snapshot, not on opening, so that a run refused after ckpt_open (another job's state, a corrupt
 * snapshot, bad operands) leaves the earlier run's files as they were: `myriad jobs` and the
 * resume still show its command line, and its age (the newest file) is not reset. */
static int claim(struct ckpt *c)
{
	char pid[32];
	int n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(c->lockfd, 0) != 0 || pwrite(c->lockfd, pid, n, 0) != n) {
		/* The pid is informational only. */
	}
	if (c->summary && write_file_at(c->dirfd, "command", c->summary, strlen(c->summary), false) != 0)
		return -1;
	return 0;
}

int ckpt_save(struct ckpt *c, const void *data, size_t len)
{
	/* The identity is written with this run's first snapshot, before it: a snapshot is never
	 * paired with another job's identity. */
	if (!c->identity_saved) {
		if (claim(c) != 0 ||
		    write_file_at(c->dirfd, "identity", c->identity.data, c->identity.len, true) != 0)
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
	unlink_names(c->dirfd, own_names, ARRAY_LEN(own_names));
	if (c->owned)
		rmdir(c->dir); /* fails, as it should, when something else was put in it */
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
	free(c->summary);
	ckpt_info_free(c->prev);
	free(c->prev);
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
