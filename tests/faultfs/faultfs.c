/*
 * faultfs - a fault-injecting FUSE passthrough filesystem for myriad's tests.
 *
 * It mirrors a BACKING directory at MOUNTPOINT and passes every operation through to
 * it, except where a --rule says otherwise: a rule can make chosen operations on chosen
 * paths fail with an errno, sleep for a while, or block until SIGUSR2. This lets the
 * tests provoke I/O errors, permission errors, slow or stuck filesystems, and
 * DT_UNKNOWN directory entries in a controlled and reproducible way, and count what
 * the code under test actually asked the filesystem to do (--stats).
 *
 * Built by `make build/faultfs`; run `build/faultfs --help` for the command line.
 * Implementation notes:
 *  - The backing directory is opened once; every operation uses *at() syscalls
 *    relative to that fd (the xattr calls and truncate() use the process working
 *    directory, which is set to the backing directory after daemonizing).
 *  - Attribute and entry caching in the kernel is disabled (timeouts 0) and
 *    READDIRPLUS is turned off, so every stat / lookup / readdir reaches faultfs and
 *    rules fire deterministically.
 *    A kernel LOOKUP reaches us as getattr too, so `stat FILE` counts two getattrs.
 *  - readdir reports the backing DIR*'s telldir() cookies as entry offsets, so a
 *    caller can lseek() a directory fd to a d_off it saw earlier (even on a different
 *    fd) and continue right after that entry.
 *  - Open files and directories keep a backing fd in fi->fh. Unlinked-but-open files
 *    are removed at once (hard_remove; no .fuse_hidden files) and stay usable through
 *    their handle; rules then match the path the file was opened under.
 *  - As root, we mount /dev/fuse ourselves to get parallel lookups (see PATCH_INIT),
 *    and give objects created for another uid that caller's ownership.
 */
#define FUSE_USE_VERSION 31

#include <fuse.h>
#include <fuse_lowlevel.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <linux/fuse.h>
#include <poll.h>
#include <stddef.h>
#include <sys/mount.h>
#include <sys/uio.h>

#define UNUSED __attribute__((unused))

/* ------------------------------------------------------------------------------------ */
/* Operation names                                                                       */

#define FOR_EACH_OP(X)                                                                  \
	X(getattr) X(readdir) X(opendir) X(releasedir) X(open) X(create) X(read) X(write) \
	X(release) X(fsync) X(flush) X(mkdir) X(mknod) X(unlink) X(rmdir) X(rename)       \
	X(link) X(symlink) X(readlink) X(chmod) X(chown) X(truncate) X(utimens) X(statfs) \
	X(setxattr) X(getxattr) X(listxattr) X(removexattr) X(copy_file_range)            \
	X(fallocate) X(lseek) X(access) X(fsyncdir)

enum op {
#define X(n) OP_##n,
	FOR_EACH_OP(X)
#undef X
	OP_COUNT
};

static const char *const op_names[OP_COUNT] = {
#define X(n) #n,
	FOR_EACH_OP(X)
#undef X
};

/* ------------------------------------------------------------------------------------ */
/* Errno names                                                                           */

static const struct { const char *name; int value; } errno_names[] = {
#define E(n) { #n, n },
	E(EPERM) E(ENOENT) E(ESRCH) E(EINTR) E(EIO) E(ENXIO) E(E2BIG) E(ENOEXEC) E(EBADF)
	E(ECHILD) E(EAGAIN) E(EWOULDBLOCK) E(ENOMEM) E(EACCES) E(EFAULT) E(ENOTBLK) E(EBUSY)
	E(EEXIST) E(EXDEV) E(ENODEV) E(ENOTDIR) E(EISDIR) E(EINVAL) E(ENFILE) E(EMFILE)
	E(ENOTTY) E(ETXTBSY) E(EFBIG) E(ENOSPC) E(ESPIPE) E(EROFS) E(EMLINK) E(EPIPE) E(EDOM)
	E(ERANGE) E(EDEADLK) E(ENAMETOOLONG) E(ENOLCK) E(ENOSYS) E(ENOTEMPTY) E(ELOOP)
	E(ENOMSG) E(EIDRM) E(ENODATA) E(ETIME) E(EREMOTE) E(ENOLINK) E(EPROTO) E(EBADMSG)
	E(EOVERFLOW) E(EILSEQ) E(EUSERS) E(ENOTSOCK) E(EOPNOTSUPP) E(ENOTSUP) E(ENOBUFS)
	E(ECONNRESET) E(ECONNREFUSED) E(ECONNABORTED) E(ENOTCONN) E(ESHUTDOWN) E(ETIMEDOUT)
	E(EHOSTDOWN) E(EHOSTUNREACH) E(ENETDOWN) E(ENETUNREACH) E(EALREADY) E(EINPROGRESS)
	E(ESTALE) E(EUCLEAN) E(EDQUOT) E(ECANCELED) E(ENOMEDIUM) E(EMEDIUMTYPE) E(ENOKEY)
	E(EKEYEXPIRED) E(EKEYREVOKED) E(EKEYREJECTED) E(EOWNERDEAD) E(ENOTRECOVERABLE)
	E(EREMOTEIO) E(EBADFD) E(ENOTUNIQ) E(ERESTART) E(ESTRPIPE) E(ENOSTR) E(ENOSR)
#undef E
};

/* ------------------------------------------------------------------------------------ */
/* Global state                                                                          */

enum action { ACT_ERRNO, ACT_DELAY, ACT_HOLD };

struct rule {
	const char *spec;      /* as given, for messages */
	uint64_t ops;          /* bit per enum op */
	char *glob;
	enum action action;
	int err;               /* ACT_ERRNO */
	long delay_ms;         /* ACT_DELAY */
	unsigned long long after;
	unsigned long long count;
	int has_count;
	double prob;
	int has_prob;
	/* run-time state, under rules_mu */
	unsigned long long seen;  /* matching ops that reached this rule */
	unsigned long long fired;
	unsigned long long draws;
};

static struct rule *rules;
static size_t nrules;
static pthread_mutex_t rules_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t seed = 1;

static int base_fd = -1;       /* the backing directory */
static int dt_unknown;
static int direct_io;           /* no page cache: one read/write request per call */
static int as_root;
static char *stats_path;
static char *pid_path;
static struct fuse *the_fuse;
static char mount_dev[32];     /* "major:minor" of our mount, from mountinfo */

static unsigned long long op_count[OP_COUNT];
static unsigned long long fail_count[OP_COUNT];
static unsigned delayed_now, delayed_max; /* delayed ops sleeping at once: now, and the most seen */

static pthread_mutex_t stats_mu = PTHREAD_MUTEX_INITIALIZER;

static pthread_mutex_t hold_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cv;
static int holds_open;                /* set by SIGUSR2 or once the filesystem goes away */

/* ------------------------------------------------------------------------------------ */
/* Stats                                                                                 */

static void write_stats_locked(void)
{
	char *buf = NULL, *tmp = NULL;
	size_t len = 0;
	FILE *m;
	int fd = -1;

	if (!stats_path)
		return;
	m = open_memstream(&buf, &len);
	if (!m)
		return;
	for (int i = 0; i < OP_COUNT; i++) {
		unsigned long long n = __atomic_load_n(&op_count[i], __ATOMIC_RELAXED);
		if (n)
			fprintf(m, "%s %llu\n", op_names[i], n);
	}
	for (int i = 0; i < OP_COUNT; i++) {
		unsigned long long n = __atomic_load_n(&fail_count[i], __ATOMIC_RELAXED);
		if (n)
			fprintf(m, "fail %s %llu\n", op_names[i], n);
	}
	if (__atomic_load_n(&delayed_max, __ATOMIC_RELAXED))
		fprintf(m, "delayed_max %u\n", __atomic_load_n(&delayed_max, __ATOMIC_RELAXED));
	if (fclose(m) != 0)
		goto out;
	if (asprintf(&tmp, "%s.tmp.%ld", stats_path, (long)getpid()) < 0) {
		tmp = NULL;
		goto out;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		goto out;
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, buf + off, len - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			goto out;
		}
		off += (size_t)w;
	}
	if (close(fd) != 0) {
		fd = -1;
		goto out;
	}
	fd = -1;
	if (rename(tmp, stats_path) == 0) {
		free(tmp);
		tmp = NULL;
	}
out:
	if (fd >= 0)
		close(fd);
	if (tmp) {
		unlink(tmp);
		free(tmp);
	}
	free(buf);
}

static void write_stats(void)
{
	pthread_mutex_lock(&stats_mu);
	write_stats_locked();
	pthread_mutex_unlock(&stats_mu);
}

/* ------------------------------------------------------------------------------------ */
/* Hold / release                                                                        */

/* Is our mount still in this namespace's mount table? (A lazily unmounted filesystem
 * disappears from it while requests that hold it busy are still pending.) */
static int still_mounted(void)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	int found = 0;

	if (!mount_dev[0])
		return 1;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return 1;
	while (!found && getline(&line, &cap, f) > 0) {
		char dev[32];
		if (sscanf(line, "%*s %*s %31s", dev) == 1 && strcmp(dev, mount_dev) == 0)
			found = 1;
	}
	free(line);
	fclose(f);
	return found;
}

static int session_gone(void)
{
	return the_fuse && fuse_session_exited(fuse_get_session(the_fuse));
}

static void open_holds(void)
{
	pthread_mutex_lock(&hold_mu);
	holds_open = 1;
	pthread_cond_broadcast(&hold_cv);
	pthread_mutex_unlock(&hold_mu);
}

/*
 * A "hold" rule fired: block until SIGUSR2 has been received (from then on holds do not
 * block at all) or the filesystem is unmounted. Returns 0 then, or -EINTR when the
 * caller is interrupted meanwhile: the kernel sends FUSE_INTERRUPT when the waiting
 * thread gets a signal, and a dying process could not exit until its request is
 * answered. Polls every 50 ms for the interrupt and every 200 ms for the unmount.
 */
static int hold_wait(void)
{
	unsigned ticks = 0;
	int r = 0;

	pthread_mutex_lock(&hold_mu);
	while (!holds_open) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += 50 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (pthread_cond_timedwait(&hold_cv, &hold_mu, &ts) != ETIMEDOUT)
			continue;
		if (fuse_interrupted()) {
			r = -EINTR;
			break;
		}
		if (++ticks % 4 == 0) {
			pthread_mutex_unlock(&hold_mu);
			int gone = session_gone() || !still_mounted();
			pthread_mutex_lock(&hold_mu);
			if (gone) {
				holds_open = 1;
				pthread_cond_broadcast(&hold_cv);
			}
		}
	}
	pthread_mutex_unlock(&hold_mu);
	return r;
}

/* ------------------------------------------------------------------------------------ */
/* Rules                                                                                 */

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* The k-th draw of rule i in [0,1): a pure function of (seed, i, k), so a rule's
 * decisions depend only on the seed and on how many ops reached it. */
static double draw(size_t i, unsigned long long k)
{
	uint64_t x = mix64(seed ^ mix64((uint64_t)i + 1) ^ mix64(k * 0x632be59bd9b4e019ULL + 7));
	return (double)(x >> 11) * (1.0 / 9007199254740992.0);
}

static int glob_match(const char *glob, const char *p1, const char *p2)
{
	if (fnmatch(glob, p1 ? p1 : "", 0) == 0)
		return 1;
	return p2 && fnmatch(glob, p2, 0) == 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/*
 * Count OP and apply the first rule that fires for it. P1 is the path the op is
 * about, P2 a second path (rename/link target, copy_file_range destination) or NULL;
 * a rule matches when its glob matches either. Returns 0 to proceed or -errno.
 */
static int fault(enum op op, const char *p1, const char *p2)
{
	struct rule *hit = NULL;

	__atomic_add_fetch(&op_count[op], 1, __ATOMIC_RELAXED);
	if (!nrules)
		return 0;
	pthread_mutex_lock(&rules_mu);
	for (size_t i = 0; i < nrules; i++) {
		struct rule *r = &rules[i];
		if (!(r->ops & (UINT64_C(1) << op)) || !glob_match(r->glob, p1, p2))
			continue;
		if (r->seen++ < r->after)
			continue;
		if (r->has_count && r->fired >= r->count)
			continue;
		if (r->has_prob && !(draw(i, r->draws++) < r->prob))
			continue;
		r->fired++;
		hit = r;
		break;
	}
	pthread_mutex_unlock(&rules_mu);
	if (!hit)
		return 0;
	switch (hit->action) {
	case ACT_ERRNO:
		__atomic_add_fetch(&fail_count[op], 1, __ATOMIC_RELAXED);
		return -hit->err;
	case ACT_DELAY: {
		unsigned now = __atomic_add_fetch(&delayed_now, 1, __ATOMIC_RELAXED);
		unsigned max = __atomic_load_n(&delayed_max, __ATOMIC_RELAXED);
		while (now > max && !__atomic_compare_exchange_n(&delayed_max, &max, now, 0, __ATOMIC_RELAXED,
								 __ATOMIC_RELAXED))
			;
		sleep_ms(hit->delay_ms);
		__atomic_sub_fetch(&delayed_now, 1, __ATOMIC_RELAXED);
		return 0;
	}
	case ACT_HOLD:
		return hold_wait();
	}
	return 0;
}

static int parse_ull(const char *s, unsigned long long *out)
{
	char *end;
	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return (errno || *end) ? -1 : 0;
}

static int parse_errno(const char *s)
{
	unsigned long long n;
	for (size_t i = 0; i < sizeof errno_names / sizeof errno_names[0]; i++)
		if (strcasecmp(s, errno_names[i].name) == 0)
			return errno_names[i].value;
	if (parse_ull(s, &n) == 0 && n >= 1 && n <= 4095)
		return (int)n;
	return -1;
}

static void die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die_usage(const char *fmt, ...)
{
	va_list ap;
	fputs("faultfs: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n(try faultfs --help)\n", stderr);
	exit(2);
}

static void add_rule(const char *spec)
{
	struct rule r = { .spec = spec };
	const char *c1 = strchr(spec, ':'), *c2 = strrchr(spec, ':');
	char *ops, *act, *tok, *save;

	if (!c1 || c1 == c2)
		die_usage("rule '%s': expected OPS:GLOB:ACTION[,MODIFIER...]", spec);
	ops = strndup(spec, (size_t)(c1 - spec));
	r.glob = strndup(c1 + 1, (size_t)(c2 - c1 - 1));
	act = strdup(c2 + 1);
	if (!ops || !r.glob || !act)
		die_usage("out of memory");
	if (!*r.glob)
		die_usage("rule '%s': empty glob (use * to match everything)", spec);

	for (tok = strtok_r(ops, "+", &save); tok; tok = strtok_r(NULL, "+", &save)) {
		int found = 0;
		if (strcmp(tok, "all") == 0) {
			r.ops = (UINT64_C(1) << OP_COUNT) - 1;
			continue;
		}
		for (int i = 0; i < OP_COUNT; i++)
			if (strcmp(tok, op_names[i]) == 0) {
				r.ops |= UINT64_C(1) << i;
				found = 1;
			}
		if (!found)
			die_usage("rule '%s': unknown operation '%s'", spec, tok);
	}
	if (!r.ops)
		die_usage("rule '%s': no operations", spec);

	tok = strtok_r(act, ",", &save);
	if (!tok)
		die_usage("rule '%s': missing action", spec);
	if (strcmp(tok, "hold") == 0) {
		r.action = ACT_HOLD;
	} else if (strncmp(tok, "delay=", 6) == 0) {
		unsigned long long ms;
		if (parse_ull(tok + 6, &ms) != 0 || ms > 86400000ULL)
			die_usage("rule '%s': bad delay '%s' (milliseconds)", spec, tok + 6);
		r.action = ACT_DELAY;
		r.delay_ms = (long)ms;
	} else {
		r.action = ACT_ERRNO;
		r.err = parse_errno(tok);
		if (r.err < 0)
			die_usage("rule '%s': unknown action or errno '%s'", spec, tok);
	}
	while ((tok = strtok_r(NULL, ",", &save))) {
		if (strncmp(tok, "after=", 6) == 0) {
			if (parse_ull(tok + 6, &r.after) != 0)
				die_usage("rule '%s': bad after= value '%s'", spec, tok + 6);
		} else if (strncmp(tok, "count=", 6) == 0) {
			if (parse_ull(tok + 6, &r.count) != 0)
				die_usage("rule '%s': bad count= value '%s'", spec, tok + 6);
			r.has_count = 1;
		} else if (strncmp(tok, "prob=", 5) == 0) {
			char *end;
			errno = 0;
			r.prob = strtod(tok + 5, &end);
			if (errno || end == tok + 5 || *end || !(r.prob >= 0.0 && r.prob <= 1.0))
				die_usage("rule '%s': bad prob= value '%s' (want 0..1)", spec, tok + 5);
			r.has_prob = 1;
		} else {
			die_usage("rule '%s': unknown modifier '%s'", spec, tok);
		}
	}
	free(ops);
	free(act);

	struct rule *n = realloc(rules, (nrules + 1) * sizeof *rules);
	if (!n)
		die_usage("out of memory");
	rules = n;
	rules[nrules++] = r;
}

/* ------------------------------------------------------------------------------------ */
/* Helpers for the operations                                                            */

/* An open file or directory. */
struct handle {
	int fd;
	DIR *dp;                 /* directories only; fd == dirfd(dp) */
	struct dirent *entry;    /* read from dp but not yet handed out */
	off_t off;               /* position of dp, as a telldir cookie (0 = start) */
	char path[];             /* path at open time, for rules once it is unlinked */
};

static struct handle *new_handle(const char *path)
{
	size_t n = strlen(path) + 1;
	struct handle *h = calloc(1, sizeof *h + n);
	if (h)
		memcpy(h->path, path, n);
	return h;
}

#define HANDLE(fi) ((struct handle *)(uintptr_t)(fi)->fh)

/* The path an fh-based op should match rules against. */
static const char *op_path(const char *path, struct fuse_file_info *fi)
{
	if (path)
		return path;
	return fi ? HANDLE(fi)->path : NULL;
}

/* Turn a FUSE path ("/a/b") into one relative to base_fd ("a/b", or "." for "/"). */
static int rel(const char *path, const char **out)
{
	if (!path)
		return -ENOENT;
	if (strlen(path) >= PATH_MAX)
		return -ENAMETOOLONG;
	while (*path == '/')
		path++;
	*out = *path ? path : ".";
	return 0;
}

#define REL(path, var)                        \
	const char *var;                      \
	do {                                  \
		int rel_err_ = rel(path, &var); \
		if (rel_err_)                 \
			return rel_err_;      \
	} while (0)

#define FAULT(op, p1, p2)                         \
	do {                                      \
		int fault_err_ = fault(op, p1, p2); \
		if (fault_err_)                   \
			return fault_err_;        \
	} while (0)

#define SYS(expr) ((expr) < 0 ? -errno : 0)

static int parent_is_setgid(const char *rp)
{
	const char *slash = strrchr(rp, '/');
	struct stat st;
	int r;

	if (!slash) {
		r = fstatat(base_fd, ".", &st, 0);
	} else {
		char *parent = strndup(rp, (size_t)(slash - rp));
		if (!parent)
			return 0;
		r = fstatat(base_fd, parent, &st, 0);
		free(parent);
	}
	return r == 0 && (st.st_mode & S_ISGID);
}

/*
 * We run as root but the caller may not be: give a newly created object the caller's
 * uid, and its gid unless the parent directory is set-group-ID (then the backing
 * filesystem has already given it the parent's group). FD >= 0 names the object,
 * otherwise RP (relative to base_fd, not followed if a symlink).
 */
static int set_owner(const char *rp, int fd, mode_t mode)
{
	struct fuse_context *ctx = fuse_get_context();
	gid_t gid;
	int r;

	if (!as_root || (ctx->uid == 0 && ctx->gid == 0))
		return 0;
	gid = parent_is_setgid(rp) ? (gid_t)-1 : ctx->gid;
	r = fd >= 0 ? fchown(fd, ctx->uid, gid)
		    : fchownat(base_fd, rp, ctx->uid, gid, AT_SYMLINK_NOFOLLOW);
	if (r < 0)
		return -errno;
	/* chown clears set-user/group-ID bits on regular files: put them back */
	if (S_ISREG(mode) && (mode & (S_ISUID | S_ISGID))) {
		r = fd >= 0 ? fchmod(fd, mode & 07777) : fchmodat(base_fd, rp, mode & 07777, 0);
		if (r < 0)
			return -errno;
	}
	return 0;
}

static int open_flags(int flags)
{
	/* O_DIRECT would need aligned buffers; the kernel side does not need it. */
	return (flags & ~O_DIRECT) | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW;
}

/* ------------------------------------------------------------------------------------ */
/* Operations                                                                            */

static void *ff_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	cfg->use_ino = 1;
	cfg->readdir_ino = 1;
	cfg->hard_remove = 1;      /* no .fuse_hidden files; fh ops keep working */
	cfg->nullpath_ok = 0;
	cfg->entry_timeout = 0;
	cfg->attr_timeout = 0;
	cfg->negative_timeout = 0;
	cfg->kernel_cache = 0;
	cfg->direct_io = direct_io;
	conn->want &= ~(unsigned)(FUSE_CAP_READDIRPLUS | FUSE_CAP_READDIRPLUS_AUTO);
	/* let lookups/readdirs in one directory run concurrently, so that one held or
	 * delayed op does not block its siblings (libfuse locks paths itself) */
	if (conn->capable & FUSE_CAP_PARALLEL_DIROPS)
		conn->want |= FUSE_CAP_PARALLEL_DIROPS;
	return NULL;
}

static int ff_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	FAULT(OP_getattr, op_path(path, fi), NULL);
	if (fi)
		return SYS(fstat(HANDLE(fi)->fd, st));
	REL(path, rp);
	return SYS(fstatat(base_fd, rp, st, AT_SYMLINK_NOFOLLOW));
}

static int ff_access(const char *path, int mask)
{
	FAULT(OP_access, path, NULL);
	REL(path, rp);
	return SYS(faccessat(base_fd, rp, mask, 0));
}

static int ff_readlink(const char *path, char *buf, size_t size)
{
	ssize_t n;

	FAULT(OP_readlink, path, NULL);
	REL(path, rp);
	if (size == 0)
		return -EINVAL;
	n = readlinkat(base_fd, rp, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static int ff_mknod(const char *path, mode_t mode, dev_t rdev)
{
	FAULT(OP_mknod, path, NULL);
	REL(path, rp);
	if (mknodat(base_fd, rp, mode, rdev) < 0)
		return -errno;
	return set_owner(rp, -1, mode);
}

static int ff_mkdir(const char *path, mode_t mode)
{
	FAULT(OP_mkdir, path, NULL);
	REL(path, rp);
	if (mkdirat(base_fd, rp, mode) < 0)
		return -errno;
	return set_owner(rp, -1, S_IFDIR | mode);
}

static int ff_unlink(const char *path)
{
	FAULT(OP_unlink, path, NULL);
	REL(path, rp);
	return SYS(unlinkat(base_fd, rp, 0));
}

static int ff_rmdir(const char *path)
{
	FAULT(OP_rmdir, path, NULL);
	REL(path, rp);
	return SYS(unlinkat(base_fd, rp, AT_REMOVEDIR));
}

static int ff_symlink(const char *target, const char *path)
{
	FAULT(OP_symlink, path, NULL);
	REL(path, rp);
	if (symlinkat(target, base_fd, rp) < 0)
		return -errno;
	return set_owner(rp, -1, S_IFLNK | 0777);
}

static int ff_rename(const char *from, const char *to, unsigned int flags)
{
	FAULT(OP_rename, from, to);
	REL(from, rf);
	REL(to, rt);
	return SYS(renameat2(base_fd, rf, base_fd, rt, flags));
}

static int ff_link(const char *from, const char *to)
{
	FAULT(OP_link, from, to);
	REL(from, rf);
	REL(to, rt);
	return SYS(linkat(base_fd, rf, base_fd, rt, 0));
}

static int ff_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	FAULT(OP_chmod, op_path(path, fi), NULL);
	if (fi)
		return SYS(fchmod(HANDLE(fi)->fd, mode));
	REL(path, rp);
	return SYS(fchmodat(base_fd, rp, mode, 0));
}

static int ff_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	FAULT(OP_chown, op_path(path, fi), NULL);
	if (fi)
		return SYS(fchown(HANDLE(fi)->fd, uid, gid));
	REL(path, rp);
	return SYS(fchownat(base_fd, rp, uid, gid, AT_SYMLINK_NOFOLLOW));
}

static int ff_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	FAULT(OP_truncate, op_path(path, fi), NULL);
	if (fi) {
		if (ftruncate(HANDLE(fi)->fd, size) == 0)
			return 0;
		/* e.g. a handle opened read-only by open(O_RDONLY|O_TRUNC) */
		if ((errno != EBADF && errno != EINVAL) || !path)
			return -errno;
	}
	REL(path, rp);
	return SYS(truncate(rp, size));   /* cwd is the backing directory */
}

static int ff_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	FAULT(OP_utimens, op_path(path, fi), NULL);
	if (fi)
		return SYS(futimens(HANDLE(fi)->fd, tv));
	REL(path, rp);
	return SYS(utimensat(base_fd, rp, tv, AT_SYMLINK_NOFOLLOW));
}

static int ff_open(const char *path, struct fuse_file_info *fi)
{
	struct handle *h;

	FAULT(OP_open, path, NULL);
	REL(path, rp);
	h = new_handle(path);
	if (!h)
		return -ENOMEM;
	h->fd = openat(base_fd, rp, open_flags(fi->flags));
	if (h->fd < 0) {
		int e = errno;
		free(h);
		return -e;
	}
	fi->fh = (uintptr_t)h;
	return 0;
}

static int ff_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	struct handle *h;
	int flags, created = 1, r;

	FAULT(OP_create, path, NULL);
	REL(path, rp);
	h = new_handle(path);
	if (!h)
		return -ENOMEM;
	flags = open_flags(fi->flags) & ~(O_CREAT | O_EXCL);
	/* Only chown what we really created, never a file that appeared meanwhile. */
	h->fd = openat(base_fd, rp, flags | O_CREAT | O_EXCL, mode);
	if (h->fd < 0 && errno == EEXIST && !(fi->flags & O_EXCL)) {
		created = 0;
		h->fd = openat(base_fd, rp, flags);
	}
	if (h->fd < 0) {
		r = -errno;
		free(h);
		return r;
	}
	if (created && (r = set_owner(rp, h->fd, S_IFREG | mode)) != 0) {
		close(h->fd);
		unlinkat(base_fd, rp, 0);
		free(h);
		return r;
	}
	fi->fh = (uintptr_t)h;
	return 0;
}

static int ff_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	size_t done = 0;

	FAULT(OP_read, op_path(path, fi), NULL);
	while (done < size) {
		ssize_t n = pread(HANDLE(fi)->fd, buf + done, size - done, off + (off_t)done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (done)
				break;
			return -errno;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (int)done;
}

static int ff_write(const char *path, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	size_t done = 0;

	FAULT(OP_write, op_path(path, fi), NULL);
	while (done < size) {
		ssize_t n = pwrite(HANDLE(fi)->fd, buf + done, size - done, off + (off_t)done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (done)
				break;
			return -errno;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (int)done;
}

static int ff_statfs(const char *path, struct statvfs *st)
{
	int fd, r;

	FAULT(OP_statfs, path, NULL);
	REL(path, rp);
	fd = openat(base_fd, rp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = SYS(fstatvfs(fd, st));
	close(fd);
	return r;
}

static int ff_flush(const char *path, struct fuse_file_info *fi)
{
	int fd;

	FAULT(OP_flush, op_path(path, fi), NULL);
	/* close a duplicate so the backing filesystem sees a close(2) now */
	fd = dup(HANDLE(fi)->fd);
	if (fd < 0)
		return -errno;
	return SYS(close(fd));
}

static int ff_release(const char *path, struct fuse_file_info *fi)
{
	struct handle *h = HANDLE(fi);
	int r = fault(OP_release, op_path(path, fi), NULL);

	/* always free the handle; an injected error is only reported */
	close(h->fd);
	free(h);
	return r;
}

static int ff_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	FAULT(OP_fsync, op_path(path, fi), NULL);
	return SYS(datasync ? fdatasync(HANDLE(fi)->fd) : fsync(HANDLE(fi)->fd));
}

static int ff_setxattr(const char *path, const char *name, const char *value, size_t size,
		       int flags)
{
	FAULT(OP_setxattr, path, NULL);
	REL(path, rp);
	return SYS(lsetxattr(rp, name, value, size, flags));
}

static int ff_getxattr(const char *path, const char *name, char *value, size_t size)
{
	ssize_t n;

	FAULT(OP_getxattr, path, NULL);
	REL(path, rp);
	n = lgetxattr(rp, name, value, size);
	return n < 0 ? -errno : (int)n;
}

static int ff_listxattr(const char *path, char *list, size_t size)
{
	ssize_t n;

	FAULT(OP_listxattr, path, NULL);
	REL(path, rp);
	n = llistxattr(rp, list, size);
	return n < 0 ? -errno : (int)n;
}

static int ff_removexattr(const char *path, const char *name)
{
	FAULT(OP_removexattr, path, NULL);
	REL(path, rp);
	return SYS(lremovexattr(rp, name));
}

static int ff_opendir(const char *path, struct fuse_file_info *fi)
{
	struct handle *h;
	int fd, e;

	FAULT(OP_opendir, path, NULL);
	REL(path, rp);
	h = new_handle(path);
	if (!h)
		return -ENOMEM;
	fd = openat(base_fd, rp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		goto fail;
	h->dp = fdopendir(fd);
	if (!h->dp) {
		e = errno;
		close(fd);
		errno = e;
		goto fail;
	}
	h->fd = fd;
	fi->fh = (uintptr_t)h;
	return 0;
fail:
	e = errno;
	free(h);
	return -e;
}

static int ff_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags UNUSED)
{
	struct handle *h = HANDLE(fi);

	FAULT(OP_readdir, op_path(path, fi), NULL);
	if (off != h->off) {
		seekdir(h->dp, off);
		h->entry = NULL;
		h->off = off;
	}
	for (;;) {
		struct stat st;
		off_t next;

		if (!h->entry) {
			errno = 0;
			h->entry = readdir(h->dp);
			if (!h->entry) {
				if (errno)
					return -errno;
				break;
			}
		}
		memset(&st, 0, sizeof st);
		st.st_ino = h->entry->d_ino;
		st.st_mode = dt_unknown ? 0 : DTTOIF(h->entry->d_type) & S_IFMT;
		/* the cookie of the next entry: where a seek to this entry's d_off resumes */
		next = telldir(h->dp);
		if (filler(buf, h->entry->d_name, &st, next, 0))
			break;   /* reply full: hand this entry out next time */
		h->entry = NULL;
		h->off = next;
	}
	return 0;
}

static int ff_releasedir(const char *path, struct fuse_file_info *fi)
{
	struct handle *h = HANDLE(fi);
	int r = fault(OP_releasedir, op_path(path, fi), NULL);

	closedir(h->dp);
	free(h);
	return r;
}

static int ff_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi)
{
	FAULT(OP_fsyncdir, op_path(path, fi), NULL);
	return SYS(datasync ? fdatasync(HANDLE(fi)->fd) : fsync(HANDLE(fi)->fd));
}

static int ff_fallocate(const char *path, int mode, off_t off, off_t len,
			struct fuse_file_info *fi)
{
	FAULT(OP_fallocate, op_path(path, fi), NULL);
	if (!fi)
		return -EBADF;
	return SYS(fallocate(HANDLE(fi)->fd, mode, off, len));
}

static ssize_t ff_copy_file_range(const char *path_in, struct fuse_file_info *fi_in,
				  off_t off_in, const char *path_out,
				  struct fuse_file_info *fi_out, off_t off_out, size_t size,
				  int flags)
{
	ssize_t n;

	FAULT(OP_copy_file_range, op_path(path_in, fi_in), op_path(path_out, fi_out));
	n = copy_file_range(HANDLE(fi_in)->fd, &off_in, HANDLE(fi_out)->fd, &off_out, size,
			    (unsigned)flags);
	return n < 0 ? -errno : n;
}

static off_t ff_lseek(const char *path, off_t off, int whence, struct fuse_file_info *fi)
{
	off_t r;

	FAULT(OP_lseek, op_path(path, fi), NULL);
	r = lseek(HANDLE(fi)->fd, off, whence);
	return r < 0 ? -errno : r;
}

static const struct fuse_operations ff_ops = {
	.init = ff_init,
	.getattr = ff_getattr,
	.access = ff_access,
	.readlink = ff_readlink,
	.mknod = ff_mknod,
	.mkdir = ff_mkdir,
	.unlink = ff_unlink,
	.rmdir = ff_rmdir,
	.symlink = ff_symlink,
	.rename = ff_rename,
	.link = ff_link,
	.chmod = ff_chmod,
	.chown = ff_chown,
	.truncate = ff_truncate,
	.utimens = ff_utimens,
	.open = ff_open,
	.create = ff_create,
	.read = ff_read,
	.write = ff_write,
	.statfs = ff_statfs,
	.flush = ff_flush,
	.release = ff_release,
	.fsync = ff_fsync,
	.setxattr = ff_setxattr,
	.getxattr = ff_getxattr,
	.listxattr = ff_listxattr,
	.removexattr = ff_removexattr,
	.opendir = ff_opendir,
	.readdir = ff_readdir,
	.releasedir = ff_releasedir,
	.fsyncdir = ff_fsyncdir,
	.fallocate = ff_fallocate,
	.copy_file_range = ff_copy_file_range,
	.lseek = ff_lseek,
};

/* ------------------------------------------------------------------------------------ */
/* Main                                                                                  */

static void usage(FILE *out)
{
	fputs(
"usage: faultfs [OPTIONS] BACKING MOUNTPOINT\n"
"Mount a passthrough view of BACKING on MOUNTPOINT that injects faults.\n"
"Unmount with: fusermount3 -u MOUNTPOINT\n"
"\n"
"  --rule SPEC     add a fault rule (repeatable; first rule that fires decides)\n"
"  --dt-unknown    readdir reports DT_UNKNOWN as every entry's type\n"
"  --direct-io     bypass the page cache, so each read or write a caller makes\n"
"                  reaches faultfs once (the kernel retries a failed cached read)\n"
"  --stats FILE    write op counts to FILE on SIGUSR1 and at exit:\n"
"                  lines \"OP COUNT\", \"fail OP COUNT\" (injected failures) and\n"
"                  \"delayed_max N\" (the most delayed ops sleeping at once)\n"
"  --seed N        seed for prob= rules (default 1)\n"
"  --pidfile FILE  write the daemon's pid to FILE once the mount is ready;\n"
"                  removed at exit, after the final stats are written\n"
"  --foreground    do not daemonize\n"
"  --debug         print FUSE requests (implies --foreground)\n"
"  -h, --help      this help\n"
"\n"
"SPEC is OPS:GLOB:ACTION[,MODIFIER...]\n"
"  OPS       '+'-separated operation names, or 'all'\n"
"  GLOB      fnmatch(3) pattern (no flags: * matches /) on the path from the\n"
"            mount root, e.g. /dir/file; * matches everything. rename, link and\n"
"            copy_file_range match when either path does.\n"
"  ACTION    errno name (EIO, EACCES, ENOSPC, ...) or number: fail with it\n"
"            delay=MS: sleep MS milliseconds, then proceed\n"
"            hold: block until SIGUSR2 (releases all held ops; later ones pass\n"
"            at once) or unmount; fail with EINTR if the caller is interrupted\n"
"  MODIFIER  after=N  fire only from the (N+1)th matching op on\n"
"            count=N  fire at most N times\n"
"            prob=P   fire with probability P (0..1), reproducible with --seed\n"
"Kernel lookups count as getattr. Beware: an injected ENOSYS makes the kernel\n"
"stop sending some ops (flush, fsync, xattrs, ...) for good.\n"
"\n"
"Operations:\n  ", out);
	for (int i = 0; i < OP_COUNT; i++)
		fprintf(out, "%s%s", op_names[i], i + 1 < OP_COUNT ? (i % 6 == 5 ? ",\n  " : ", ") : "\n");
}

/* Exit 2 unless the directory that will hold FILE exists and is writable. */
static void check_dir_of(const char *opt, const char *file)
{
	char *dir = strdup(file), *slash;

	if (!dir)
		die_usage("out of memory");
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (access(dir, W_OK) != 0)
		die_usage("%s %s: directory %s: %s", opt, file, dir, strerror(errno));
	free(dir);
}

/* Absolute form of PATH (which need not exist) so it survives chdir. */
static char *absolute(const char *path)
{
	char cwd[PATH_MAX], *r;
	if (path[0] == '/')
		return strdup(path);
	if (!getcwd(cwd, sizeof cwd))
		return NULL;
	if (asprintf(&r, "%s/%s", cwd, path) < 0)
		return NULL;
	return r;
}

/* Undo mountinfo's octal escapes in place. */
static void unescape(char *s)
{
	char *d = s;
	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '7' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = '\0';
}

/* Remember the device number of the topmost fuse mount on MNT. */
static void find_mount_dev(const char *mnt)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;

	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		char dev[32], *point = NULL, *sep, *fstype;
		if (sscanf(line, "%*s %*s %31s %*s %ms", dev, &point) != 2)
			continue;
		unescape(point);
		sep = strstr(line, " - ");
		fstype = sep ? sep + 3 : NULL;
		if (fstype && strncmp(fstype, "fuse", 4) == 0 && strcmp(point, mnt) == 0)
			snprintf(mount_dev, sizeof mount_dev, "%s", dev);
		free(point);
	}
	free(line);
	fclose(f);
}

static void *signal_thread(void *arg UNUSED)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	for (;;) {
		int sig;
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig == SIGUSR1)
			write_stats();
		else if (sig == SIGUSR2)
			open_holds();
	}
	return NULL;
}

/* Start signal_thread with the terminating signals blocked too, so that libfuse's exit
 * handler always runs in the main thread and interrupts its wait. */
static int start_signal_thread(pthread_t *tid)
{
	static const int term[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT };
	sigset_t set, old;
	int r;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof term / sizeof term[0]; i++)
		sigaddset(&set, term[i]);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	r = pthread_create(tid, NULL, signal_thread, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r)
		errno = r;
	return r ? -1 : 0;
}

static int write_pidfile(void)
{
	char *tmp;
	FILE *f;
	int ok;

	if (!pid_path)
		return 0;
	if (asprintf(&tmp, "%s.tmp.%ld", pid_path, (long)getpid()) < 0)
		return -1;
	f = fopen(tmp, "we");
	if (!f) {
		free(tmp);
		return -1;
	}
	fprintf(f, "%ld\n", (long)getpid());
	ok = fclose(f) == 0 && rename(tmp, pid_path) == 0;
	if (!ok)
		unlink(tmp);
	free(tmp);
	return ok ? 0 : -1;
}

/*
 * Parallel directory operations. The kernel serializes lookups and readdirs within a
 * directory unless the INIT reply carries FUSE_PARALLEL_DIROPS, and libfuse before 3.17
 * never sets it. Without it a held or delayed lookup would freeze every other lookup in
 * that directory. So when we are root we mount /dev/fuse ourselves, hand the fd to
 * libfuse as "custom I/O", and add the flag to the INIT reply on its way out (libfuse's
 * high-level layer does its own path locking and is fine with parallel lookups).
 */
#if FUSE_MAJOR_VERSION == 3 && FUSE_MINOR_VERSION < 17
#define PATCH_INIT 1
#else
#define PATCH_INIT 0
#endif

static int dev_fd = -1;               /* /dev/fuse, when we mounted it ourselves */
/* INIT is the first request and is answered before the kernel sends any other, but
 * several threads read /dev/fuse, hence the atomics. */
static uint64_t init_unique;
static int init_offered, init_patched;
#define LOAD(v) __atomic_load_n(&(v), __ATOMIC_ACQUIRE)
#define STORE(v, x) __atomic_store_n(&(v), (x), __ATOMIC_RELEASE)

static ssize_t io_read(int fd, void *buf, size_t len, void *userdata UNUSED)
{
	ssize_t n = read(fd, buf, len);

	if (!LOAD(init_patched) &&
	    n >= (ssize_t)(sizeof(struct fuse_in_header) + offsetof(struct fuse_init_in, flags) + 4)) {
		const struct fuse_in_header *in = buf;
		if (in->opcode == FUSE_INIT) {
			struct fuse_init_in arg;
			memcpy(&arg, (const char *)buf + sizeof *in, offsetof(struct fuse_init_in, flags) + 4);
			STORE(init_unique, in->unique);
			STORE(init_offered, (arg.flags & FUSE_PARALLEL_DIROPS) != 0);
		}
	}
	return n;
}

static ssize_t io_writev(int fd, struct iovec *iov, int count, void *userdata UNUSED)
{
	if (!LOAD(init_patched) && LOAD(init_offered) && count >= 2 &&
	    iov[0].iov_len >= sizeof(struct fuse_out_header) &&
	    iov[1].iov_len >= offsetof(struct fuse_init_out, flags) + 4) {
		struct fuse_out_header *out = iov[0].iov_base;
		if (out->unique == LOAD(init_unique) && out->error == 0) {
			uint32_t flags;
			char *p = (char *)iov[1].iov_base + offsetof(struct fuse_init_out, flags);
			memcpy(&flags, p, sizeof flags);
			flags |= FUSE_PARALLEL_DIROPS;
			memcpy(p, &flags, sizeof flags);
			STORE(init_patched, 1);
		}
	}
	return writev(fd, iov, count);
}

/* Mount MNT ourselves (root only); returns 0, or -1 with a message printed. */
static int mount_self(const char *mnt, mode_t rootmode)
{
	static const struct fuse_custom_io io = { .read = io_read, .writev = io_writev };
	char opts[256];

	dev_fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (dev_fd < 0) {
		fprintf(stderr, "faultfs: /dev/fuse: %s\n", strerror(errno));
		return -1;
	}
	snprintf(opts, sizeof opts,
		 "fd=%d,rootmode=%o,user_id=%u,group_id=%u,default_permissions,allow_other",
		 dev_fd, (unsigned)(rootmode & S_IFMT), (unsigned)getuid(), (unsigned)getgid());
	if (mount("faultfs", mnt, "fuse.faultfs", MS_NOSUID | MS_NODEV, opts) < 0) {
		size_t n = strlen(opts);
		snprintf(opts + n, sizeof opts - n, ",subtype=faultfs");
		if (mount("faultfs", mnt, "fuse", MS_NOSUID | MS_NODEV, opts) < 0) {
			fprintf(stderr, "faultfs: mount on %s: %s\n", mnt, strerror(errno));
			close(dev_fd);
			dev_fd = -1;
			return -1;
		}
	}
	if (fuse_session_custom_io(fuse_get_session(the_fuse), &io, dev_fd) != 0) {
		fprintf(stderr, "faultfs: cannot attach /dev/fuse to the session\n");
		umount2(mnt, MNT_DETACH);
		return -1;
	}
	return 0;
}

/* Undo mount_self() unless the kernel already dropped the connection (then the mount
 * is gone and something else may be mounted on MNT by now). */
static void unmount_self(const char *mnt)
{
	struct pollfd p = { .fd = dev_fd, .events = 0 };

	if (poll(&p, 1, 0) == 1 && (p.revents & POLLERR))
		return;
	umount2(mnt, MNT_DETACH);
}

/*
 * With FUSE_USE_VERSION 31 the header only offers the old fuse_loop_mt(), whose thread
 * limit is fixed at 10; libfuse >= 3.12 exports the newer loop under this name, which
 * takes a config where the limit can be raised so that held and delayed ops do not
 * starve everything else.
 */
#if FUSE_MAJOR_VERSION > 3 || (FUSE_MAJOR_VERSION == 3 && FUSE_MINOR_VERSION >= 12)
#define HAVE_LOOP_312 1
int fuse_loop_mt_312(struct fuse *f, struct fuse_loop_config *config);
#else
#define HAVE_LOOP_312 0
#endif

/* Fork; the parent exits 0 once the child reports it is ready (mounted, pid file
 * written, signals handled), so the caller's shell continues with the mount in place. */
static int ready_fd = -1;

static void daemonize(void)
{
	int p[2];
	pid_t pid;
	char c = 'n';

	if (pipe2(p, O_CLOEXEC) < 0) {
		perror("faultfs: pipe");
		exit(1);
	}
	pid = fork();
	if (pid < 0) {
		perror("faultfs: fork");
		exit(1);
	}
	if (pid > 0) {
		close(p[1]);
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(c == 'y' ? 0 : 1);
	}
	close(p[0]);
	ready_fd = p[1];
	setsid();
}

static void report_ready(int ok)
{
	char c = ok ? 'y' : 'n';
	int nul;

	if (ready_fd < 0)
		return;
	if (ok && (nul = open("/dev/null", O_RDWR)) >= 0) {
		dup2(nul, 0);
		dup2(nul, 1);
		dup2(nul, 2);
		if (nul > 2)
			close(nul);
	}
	if (write(ready_fd, &c, 1) < 0) {
		/* parent gone: nothing to tell */
	}
	close(ready_fd);
	ready_fd = -1;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "rule", required_argument, NULL, 'r' },
		{ "dt-unknown", no_argument, NULL, 'u' },
		{ "direct-io", no_argument, NULL, 'D' },
		{ "stats", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'S' },
		{ "pidfile", required_argument, NULL, 'p' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "debug", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int foreground = 0, debug = 0, c, res;
	char *backing, *mnt, *opts;
	struct stat st;
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	pthread_condattr_t ca;
	pthread_t tid;
	sigset_t sigs;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hf", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			add_rule(optarg);
			break;
		case 'u':
			dt_unknown = 1;
			break;
		case 'D':
			direct_io = 1;
			break;
		case 's':
			if (!*optarg || !(stats_path = absolute(optarg)))
				die_usage("bad --stats file '%s'", optarg);
			check_dir_of("--stats", stats_path);
			break;
		case 'S': {
			unsigned long long v;
			if (parse_ull(optarg, &v) != 0)
				die_usage("bad --seed '%s' (want an unsigned integer)", optarg);
			seed = v;
			break;
		}
		case 'p':
			if (!*optarg || !(pid_path = absolute(optarg)))
				die_usage("bad --pidfile '%s'", optarg);
			check_dir_of("--pidfile", pid_path);
			break;
		case 'f':
			foreground = 1;
			break;
		case 'd':
			debug = foreground = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			die_usage("option '%s' needs an argument", argv[optind - 1]);
		default:
			if (optopt)
				die_usage("unknown option '-%c'", optopt);
			die_usage("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		die_usage(argc - optind < 2 ? "missing BACKING and/or MOUNTPOINT"
					    : "too many arguments");
	backing = argv[optind];
	base_fd = open(backing, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (base_fd < 0)
		die_usage("backing directory '%s': %s", backing, strerror(errno));
	mnt = realpath(argv[optind + 1], NULL);
	if (!mnt || stat(mnt, &st) < 0)
		die_usage("mount point '%s': %s", argv[optind + 1], strerror(errno));
	if (!S_ISDIR(st.st_mode))
		die_usage("mount point '%s': %s", argv[optind + 1], strerror(ENOTDIR));

	as_root = geteuid() == 0;
	umask(0);   /* the kernel has already applied the caller's umask */

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&hold_cv, &ca);
	pthread_condattr_destroy(&ca);

	if (asprintf(&opts, "fsname=faultfs,subtype=faultfs,default_permissions%s",
		     as_root ? ",allow_other" : "") < 0)
		return 1;
	if (fuse_opt_add_arg(&args, argv[0]) || fuse_opt_add_arg(&args, "-o") ||
	    fuse_opt_add_arg(&args, opts) || (debug && fuse_opt_add_arg(&args, "-d"))) {
		fprintf(stderr, "faultfs: out of memory\n");
		return 1;
	}
	the_fuse = fuse_new(&args, &ff_ops, sizeof ff_ops, NULL);
	fuse_opt_free_args(&args);
	free(opts);
	if (!the_fuse) {
		fprintf(stderr, "faultfs: fuse_new failed\n");
		return 1;
	}
	if (PATCH_INIT && as_root) {
		if (mount_self(mnt, st.st_mode) != 0) {
			fuse_destroy(the_fuse);
			return 1;
		}
	} else if (fuse_mount(the_fuse, mnt) != 0) {
		fprintf(stderr, "faultfs: cannot mount on %s\n", mnt);
		fuse_destroy(the_fuse);
		return 1;
	}
	find_mount_dev(mnt);

	/* SIGUSR1/2 are only ever taken by signal_thread (mask is inherited by all threads,
	 * including the daemon child, so an early signal cannot kill us). */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGUSR1);
	sigaddset(&sigs, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);

	if (!foreground)
		daemonize();
	if (fchdir(base_fd) < 0 || write_pidfile() < 0 ||
	    fuse_set_signal_handlers(fuse_get_session(the_fuse)) != 0 ||
	    start_signal_thread(&tid) != 0) {
		fprintf(stderr, "faultfs: setup failed: %s\n", strerror(errno));
		report_ready(0);
		if (dev_fd >= 0)
			unmount_self(mnt);
		fuse_unmount(the_fuse);
		fuse_destroy(the_fuse);
		return 1;
	}
	report_ready(1);

#if HAVE_LOOP_312
	{
		struct fuse_loop_config *lc = fuse_loop_cfg_create();
		if (lc) {
			fuse_loop_cfg_set_max_threads(lc, 128);
			res = fuse_loop_mt_312(the_fuse, lc);
			fuse_loop_cfg_destroy(lc);
		} else {
			res = fuse_loop_mt(the_fuse, 0);
		}
	}
#else
	res = fuse_loop_mt(the_fuse, 0);
#endif

	open_holds();

	/* Final stats; keep the lock so a late SIGUSR1 cannot write an older snapshot. */
	pthread_mutex_lock(&stats_mu);
	write_stats_locked();

	fuse_remove_signal_handlers(fuse_get_session(the_fuse));
	if (dev_fd >= 0)
		unmount_self(mnt);
	fuse_unmount(the_fuse);
	fuse_destroy(the_fuse);
	if (pid_path)
		unlink(pid_path);
	free(mnt);
	return res ? 1 : 0;
}
