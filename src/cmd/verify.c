/*
 * myriad verify: check a tree made by fill against its manifest. The plan is a pool over every
 * directory of the layout (leaves first, then the levels above them); the action checks that each
 * expected file is there with its size and contents (--quick: type and size) and reports every
 * entry fill did not make, deciding from the layout function alone — no list in memory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmds.h"
#include "job/cmdstate.h"
#include "job/job.h"
#include "state/layout.h"
#include "engine/pool.h"
#include "io/dir.h"
#include "io/prefetch.h"
#include "report/json.h"
#include "report/outfile.h"
#include "report/progress.h"
#include "state/manifest.h"
#include "util/util.h"
#include "cmd/verify_int.h"

static const char verify_help[] =
    "Usage: myriad verify [OPTIONS] DIR\n"
    "Check a tree made by `myriad fill` against its manifest (DIR/.myriad-fill): every expected\n"
    "file exists with its size and contents, and nothing else is there. Works on copies of the tree.\n"
    "\n"
    "      --quick              check presence, type and size only (no contents)\n"
    "  -j, --threads N          workers, 1 to 4096 (default: 2 per CPU)\n"
    "%s"
    "\n"
    "Findings (missing, wrong type, wrong size, corrupt, extra), each with its path, go to stderr\n"
    "(the first 100) and all of them to --errors FILE, each entry once: an entry of the wrong type\n"
    "is a wrong type, not also an extra. On ext4, XFS and btrfs a leaf's small files\n"
    "are read 64 at a time with one io_uring submission (MYRIAD_PREFETCH=off: one by one).\n"
    "Exit status: 0 the tree is exactly as fill made it; 1 it is not, or the fill never finished;\n"
    "2 DIR holds no manifest (or a bad one); 3 stopped by a signal with state saved.\n";

static const char *const problem_names[] = {"missing", "wrong type", "wrong size", "corrupt", "extra"};
static const char *const problem_keys[] = {"missing", "wrong_type", "wrong_size", "corrupt", "extra"};

/* A file of the window of a leaf being checked (check_leaf). */
struct leaf_file {
	char name[32];
	uint64_t size; /* what fill made it */
	int err;       /* its statx's errno (ENOENT: missing), or 0 */
	struct statx stx;
};

struct local {
	uint64_t checked, bytes, ahead;
	uint64_t problems[P_N];
	char *buf, *want;
	struct sbuf path;
	struct leaf_file win[PREFETCH_FILES];
	struct prefetch *pf; /* reads a window's files ahead (NULL: one by one) */
};

#define READ_BUF (1u << 20)

static uint64_t expected_in_leaf(const struct verify *v, uint64_t leaf)
{
	return manifest_leaf_files(&v->m, leaf, layout_leaf_files(&v->lay, leaf));
}

/* This rank's pool unit u (the layout's unit u * ranks + rank): a leaf for layout units < leaves;
 * then the levels above, deepest first. */
static void unit_dir(const struct verify *v, uint64_t u, unsigned *level, uint64_t *index)
{
	u = pool_rank_unit(u, v->rank, v->ranks); /* this rank's pool unit u is the layout's */
	if (u < v->lay.leaves || v->lay.depth == 0) {
		*level = v->lay.depth;
		*index = u;
		return;
	}
	u -= v->lay.leaves;
	for (unsigned k = v->lay.depth; k-- > 0;) {
		if (u < v->lay.dirs_at[k]) {
			*level = k;
			*index = u;
			return;
		}
		u -= v->lay.dirs_at[k];
	}
	*level = 0;
	*index = 0;
}

static uint64_t total_units(const struct layout *l)
{
	uint64_t n = l->leaves;
	if (l->depth == 0)
		return n ? n : 1; /* DIR itself is the only directory */
	for (unsigned k = 0; k < l->depth; k++)
		n += l->dirs_at[k];
	return n;
}

static void problem(struct local *l, struct errbatch *errs, const char *dirpath, const char *name, int kind,
		    const char *detail)
{
	sbuf_clear(&l->path);
	sbuf_adds(&l->path, dirpath);
	if (name) {
		if (l->path.len && l->path.data[l->path.len - 1] != '/')
			sbuf_addc(&l->path, '/');
		sbuf_adds(&l->path, name);
	}
	errlog_problem(errs, l->path.data, l->path.len, problem_names[kind], detail);
	l->problems[kind]++;
}

static void io_error(struct local *l, struct errbatch *errs, const char *dirpath, const char *name, const char *op,
		     int err)
{
	sbuf_clear(&l->path);
	sbuf_printf(&l->path, "%s%s%s", dirpath, name ? "/" : "", name ? name : "");
	errlog_report(errs, l->path.data, l->path.len, op, err);
}

/* Compare n bytes read at off of file i with what fill wrote there: true when equal, else
 * *bad_at is the first differing offset. */
static bool same_data(struct verify *v, struct local *l, uint64_t i, uint64_t off, const char *got, size_t n,
		      uint64_t *bad_at)
{
	layout_file_data(&v->lay, i, off, l->want, n);
	if (memcmp(got, l->want, n) == 0)
		return true;
	for (size_t k = 0; k < n; k++)
		if (got[k] != l->want[k]) {
			*bad_at = off + k;
			break;
		}
	return false;
}

/* Check the contents of file i (name in dfd, of the expected size): -1 when right, or a problem
 * (P_CORRUPT with *bad_at, P_SIZE when it changed while read, P_MISSING), or -2 with *err and
 * *op. pre: what the read-ahead has of it (NULL: nothing; else its fd, which is closed here). */
static int check_contents(struct verify *v, struct local *l, int dfd, const char *name, uint64_t i, uint64_t size,
			  const struct prefetched *pre, uint64_t *bad_at, int *err, const char **op)
{
	*op = "open";
	int fd = pre ? pre->fd : dir_open_file(dfd, name);
	if (fd < 0) {
		*err = pre ? pre->err : errno;
		return *err == ENOENT ? P_MISSING : -2;
	}
	*op = "read";
	int r = -1;
	uint64_t off = 0;
	if (pre && pre->data) { /* read ahead: its first size + 1 bytes, asked for after the statx */
		size_t n = pre->len > size ? size : pre->len;
		if (!same_data(v, l, i, 0, pre->data, n, bad_at))
			r = P_CORRUPT;
		else if (pre->len != size)
			r = P_SIZE;
		else
			l->bytes += n;
		close(fd);
		return r;
	}
	if (pre && pre->err) { /* its read, not retried */
		*err = pre->err;
		close(fd);
		return -2;
	}
	for (;;) {
		ssize_t n = read(fd, l->buf, READ_BUF);
		if (n < 0) {
			*err = errno;
			r = -2;
			break;
		}
		if (n == 0)
			break;
		if (off + n > size) {
			r = P_SIZE;
			break;
		}
		if (!same_data(v, l, i, off, l->buf, n, bad_at)) {
			r = P_CORRUPT;
			break;
		}
		off += n;
		l->bytes += n;
	}
	close(fd);
	if (r == -1 && off != size)
		r = P_SIZE;
	return r;
}

/* Check the files of a leaf, PREFETCH_FILES at a time: each window's files are statted, those
 * whose contents are to be compared read ahead together (l->pf, where there is one), then each
 * is judged in order. */
static void check_leaf(struct verify *v, struct local *l, int dfd, const char *path, uint64_t leaf, struct errbatch *errs)
{
	uint64_t first = leaf * v->lay.fanout, n = expected_in_leaf(v, leaf);
	char detail[96];
	for (uint64_t w = 0; w < n; w += PREFETCH_FILES) {
		size_t wn = n - w < PREFETCH_FILES ? n - w : PREFETCH_FILES;
		if (l->pf)
			prefetch_reset(l->pf);
		for (size_t k = 0; k < wn; k++) {
			uint64_t i = first + w + k, size = layout_file_size(&v->lay, i);
			struct leaf_file *f = &l->win[k];
			layout_file_name(i, f->name);
			f->size = size;
			f->err = 0;
			if (dfd < 0 || statx(dfd, f->name, AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_SIZE, &f->stx) != 0)
				f->err = dfd < 0 ? ENOENT : errno;
			else if (l->pf && !v->quick && S_ISREG(f->stx.stx_mode) && f->stx.stx_size == size && size > 0 &&
				 size <= PREFETCH_FILE_MAX)
				prefetch_add(l->pf, dfd, f->name, size + 1); /* + 1: a file grown since shows */
		}
		if (l->pf)
			prefetch_submit(l->pf);
		for (size_t k = 0; k < wn; k++) {
			struct leaf_file *f = &l->win[k];
			uint64_t i = first + w + k, size = f->size;
			const char *name = f->name;
			l->checked++;
			pool_progressed();
			if (f->err) {
				if (f->err != ENOENT)
					io_error(l, errs, path, name, "stat", f->err);
				else
					problem(l, errs, path, name, P_MISSING, NULL);
				continue;
			}
			if (!S_ISREG(f->stx.stx_mode)) {
				problem(l, errs, path, name, P_TYPE, "not a regular file");
				continue;
			}
			if (f->stx.stx_size != size) {
				snprintf(detail, sizeof(detail), "expected %llu bytes, found %llu", (unsigned long long)size,
					 (unsigned long long)f->stx.stx_size);
				problem(l, errs, path, name, P_SIZE, detail);
				continue;
			}
			if (v->quick || size == 0)
				continue;
			uint64_t bad_at = 0;
			int err = 0;
			const char *op;
			struct prefetched pre;
			bool ahead = l->pf && prefetch_take(l->pf, name, &pre);
			int r = check_contents(v, l, dfd, name, i, size, ahead ? &pre : NULL, &bad_at, &err, &op);
			if (r == -2)
				io_error(l, errs, path, name, op, err);
			else if (r == P_CORRUPT) {
				snprintf(detail, sizeof(detail), "first difference at byte %llu", (unsigned long long)bad_at);
				problem(l, errs, path, name, P_CORRUPT, detail);
			} else if (r >= 0)
				problem(l, errs, path, name, r, r == P_SIZE ? "size changed while reading" : NULL);
			if (ahead && pre.data)
				l->ahead++;
		}
	}
	if (l->pf)
		prefetch_reset(l->pf);
}

/* Is this entry of directory (level, index) one that fill made: 1 yes; 0 no (an extra); -1 its name
 * is that of a directory fill made, but it is not one (a wrong type). A file's name in a leaf is
 * fill's whatever its type: check_leaf judges its type, so that it is reported once. */
static int expected_entry(struct verify *v, unsigned level, uint64_t index, const char *name, unsigned char type)
{
	if (level == 0 && (!strcmp(name, MANIFEST_NAME) || (v->fs_root && !strcmp(name, "lost+found"))))
		return 1;
	uint64_t x;
	if (level == v->lay.depth) {
		uint64_t first = index * v->lay.fanout;
		return layout_parse_file(name, &x) && x >= first && x < first + expected_in_leaf(v, index);
	}
	if (!layout_parse_dir(name, &x) || x >= v->lay.fanout)
		return 0;
	uint64_t child = index * v->lay.fanout + x;
	if (child >= v->lay.dirs_at[level + 1])
		return 0;
	/* The child's first leaf must be one the fill claimed. */
	uint64_t first_leaf = child;
	for (unsigned k = level + 1; k < v->lay.depth; k++)
		first_leaf *= v->lay.fanout;
	if (first_leaf >= v->m.claimed)
		return 0;
	return type == DT_DIR || type == DT_UNKNOWN ? 1 : -1;
}

static int verify_unit(void *ctx, void *lp, uint64_t u, struct errbatch *errs)
{
	struct verify *v = ctx;
	struct local *l = lp;
	if (!l->buf) {
		l->buf = xmalloc(READ_BUF);
		l->want = xmalloc(READ_BUF);
		l->pf = v->prefetch ? prefetch_new() : NULL;
	}
	unsigned level;
	uint64_t index;
	unit_dir(v, u, &level, &index);
	char rel[1024], path[4096 + 1024];
	size_t rl = layout_dir_path(&v->lay, level, index, rel);
	snprintf(path, sizeof(path), "%s%s%s", v->dir, rl ? "/" : "", rel);
	/* No symlink is followed on the way: one planted in the tree is an extra entry, not a way out. */
	int dfd = dir_open_at(v->dirfd, rel, rl);
	bool gone = dfd < 0 && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP);
	if (dfd < 0 && !gone)
		io_error(l, errs, path, NULL, "open", errno);
	/* A missing directory's files are missing; those of one that cannot be opened are unknown. */
	if (level == v->lay.depth && index < v->lay.leaves && (dfd >= 0 || gone))
		check_leaf(v, l, dfd, path, index, errs);
	if (dfd < 0)
		return 0;
	char buf[32768];
	for (;;) {
		ssize_t n = dir_read(dfd, buf, sizeof(buf));
		if (n < 0)
			io_error(l, errs, path, NULL, "readdir", errno);
		if (n <= 0)
			break;
		for (ssize_t off = 0; off < n;) {
			struct linux_dirent64 *de = (void *)(buf + off);
			off += de->d_reclen;
			if (dir_is_dot(de->d_name))
				continue;
			int e = expected_entry(v, level, index, de->d_name, de->d_type);
			if (e == 0)
				problem(l, errs, path, de->d_name, P_EXTRA, NULL);
			else if (e < 0) /* its files are reported missing by its own unit */
				problem(l, errs, path, de->d_name, P_TYPE, "not a directory");
		}
	}
	close(dfd);
	return 0;
}

static void verify_local_free(void *ctx, void *lp)
{
	struct local *l = lp;
	prefetch_free(l->pf);
	free(l->buf);
	free(l->want);
	sbuf_free(&l->path);
}

static void verify_commit(void *ctx, void *lp)
{
	struct verify *v = ctx;
	struct local *l = lp;
	v->checked += l->checked;
	v->bytes += l->bytes;
	v->ahead += l->ahead;
	l->ahead = 0;
	for (int k = 0; k < P_N; k++)
		v->problems[k] += l->problems[k];
	l->checked = l->bytes = 0;
	memset(l->problems, 0, sizeof(l->problems));
}

void verify_state_save(struct sbuf *b, const struct verify_state *s)
{
	ser_u64(b, s->checked);
	ser_u64(b, s->bytes);
	for (int k = 0; k < VERIFY_PROBLEMS; k++)
		ser_u64(b, s->problems[k]);
}

bool verify_state_load(struct verify_state *s, struct deser *d)
{
	s->checked = deser_u64(d);
	s->bytes = deser_u64(d);
	for (int k = 0; k < VERIFY_PROBLEMS; k++)
		s->problems[k] = deser_u64(d);
	return !d->bad;
}

static void verify_save(void *ctx, struct sbuf *b)
{
	struct verify *v = ctx;
	struct verify_state s = {.checked = v->checked, .bytes = v->bytes};
	memcpy(s.problems, v->problems, sizeof(s.problems));
	verify_state_save(b, &s);
}

static bool verify_load(void *ctx, struct deser *d)
{
	struct verify *v = ctx;
	struct verify_state s;
	if (!verify_state_load(&s, d))
		return false;
	v->checked = s.checked;
	v->bytes = s.bytes;
	memcpy(v->problems, s.problems, sizeof(v->problems));
	return true;
}

static uint64_t findings(const struct verify *v)
{
	uint64_t n = 0;
	for (int k = 0; k < P_N; k++)
		n += v->problems[k];
	return n;
}

/* The directory of unit u, for the progress line. */
void verify_unit_name(void *ctx, uint64_t u, struct sbuf *out)
{
	struct verify *v = ctx;
	unsigned level;
	uint64_t index;
	char rel[1024];
	unit_dir(v, u, &level, &index);
	size_t rl = layout_dir_path(&v->lay, level, index, rel);
	escape_path(out, v->dir, strlen(v->dir));
	if (rl)
		sbuf_printf(out, "/%s", rel);
}

/* This process's files checked, findings and errors (findings included) so far. */
void verify_count(void *ctx, uint64_t n[3])
{
	struct verify *v = ctx;
	pool_lock(v->pool);
	n[0] = v->checked;
	n[1] = findings(v);
	n[2] = pool_errors(v->pool);
	pool_unlock(v->pool);
}

static void verify_progress(void *ctx, struct sbuf *line)
{
	struct verify *v = ctx;
	uint64_t n[3];
	verify_count(v, n);
	struct sbuf stuck = {0};
	verify_ranks_progress(v, n, &stuck);
	double el = pool_elapsed(v->pool);
	char b[32];
	sbuf_adds(line, "verify: ");
	progress_format(line, "files", n[0], v->expected, el, el > 0 ? n[0] / el : 0, n[2] - n[1]);
	sbuf_printf(line, ", %s findings", fmt_count(b, n[1]));
	if (v->ranks > 1)
		sbuf_printf(line, ", %d ranks", v->ranks);
	pool_stuck(v->pool, line, 5, verify_unit_name);
	sbuf_add(line, stuck.data, stuck.len);
	sbuf_free(&stuck);
}

static void summary(struct verify *v, FILE *out, double el, bool ok, bool stopped)
{
	char a[32], b[32], c[32];
	uint64_t errors = pool_errors(v->pool) - findings(v);
	fprintf(out, "verify%s: %s of %s %s checked%s", stopped ? " stopped" : "", fmt_count(a, v->checked),
		fmt_count(b, v->expected), plural(v->expected, "file", "files"), v->quick ? " (quick: type and size)" : "");
	for (int k = 0; k < P_N; k++)
		fprintf(out, ", %s %s", fmt_count(c, v->problems[k]), problem_names[k]);
	fprintf(out, ", %s %s; %.2f s, %s files/s\n", fmt_count(a, errors), plural(errors, "error", "errors"), el,
		fmt_count(b, el > 0 ? (uint64_t)(v->checked / el) : 0));
	if (!stopped)
		fprintf(out, "%s\n",
			!v->m.complete ? "NOT OK: the fill never finished (its manifest says incomplete)"
			: ok	       ? "OK: the tree is exactly as fill made it"
				       : "NOT OK: the tree differs from what fill made");
}

static void summary_json(struct verify *v, struct sbuf *b, double el, bool ok, bool stopped)
{
	struct json j;
	json_document(&j, b, "verify");
	json_bytes(&j, "dir", v->dir, strlen(v->dir));
	json_bool(&j, "quick", v->quick);
	json_bool(&j, "complete", !stopped);
	json_bool(&j, "fill_complete", v->m.complete);
	json_bool(&j, "ok", ok);
	json_u64(&j, "expected", v->expected);
	json_u64(&j, "checked", v->checked);
	json_u64(&j, "bytes_read", v->bytes);
	json_u64(&j, "files_read_ahead", v->ahead);
	for (int k = 0; k < P_N; k++)
		json_u64(&j, problem_keys[k], v->problems[k]);
	json_u64(&j, "errors", pool_errors(v->pool) - findings(v));
	json_u64(&j, "sessions", pool_sessions(v->pool));
	if (v->ranks > 1)
		json_u64(&j, "ranks", (uint64_t)v->ranks);
	json_double(&j, "elapsed_s", el);
	json_double(&j, "files_per_s", el > 0 ? v->checked / el : 0);
	json_close(&j, '}');
}

struct verify_opts {
	struct job_opts jo;
	bool quick;
	const char *dir;
};

enum { OPT_QUICK = OPT_CMD_BASE };

static int verify_parse(int argc, char **argv, void *opts)
{
	static const struct option longopts[] = {
	    JOB_LONG_OPTIONS,
	    {"quick", no_argument, 0, OPT_QUICK},
	    {0, 0, 0, 0},
	};
	struct verify_opts *o = opts;
	job_opts_init(&o->jo);
	int opt, rc;
	while ((opt = job_getopt(&o->jo, argc, argv, "j:", longopts, verify_help, &rc))) {
		switch (opt) {
		case OPT_QUICK: o->quick = true; break;
		default: return usage_hint();
		}
	}
	if (rc != OPTS_RUN)
		return rc;
	if (optind + 1 != argc)
		return usage_error(optind == argc ? "missing operand: the directory to verify" : "one directory only");
	o->dir = argv[optind];
	return job_check_named(argv + optind, 1) ? EXIT_USAGE : OPTS_RUN;
}

static void verify_opts_free(void *opts)
{
	struct verify_opts *o = opts;
	job_opts_free(&o->jo);
}

/* Open DIR and read its manifest and layout into v. 0, or EXIT_USAGE after saying why. */
static int open_tree(struct verify *v)
{
	v->dirfd = open(v->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (v->dirfd < 0) {
		warnx_("%s: open: %s", v->dir, strerror(errno));
		return EXIT_USAGE;
	}
	int mr = manifest_read(v->dirfd, v->dir, &v->m);
	if (mr == 0)
		warnx_("%s holds no fill manifest (%s): nothing to verify against", v->dir, MANIFEST_NAME);
	if (mr <= 0)
		return EXIT_USAGE;
	if (!layout_init(&v->lay, v->m.files, v->m.fanout, v->m.size_min, v->m.size_max, v->m.seed) ||
	    v->m.claimed > v->lay.leaves) {
		warnx_("%s/%s: its parameters do not make a layout", v->dir, MANIFEST_NAME);
		return EXIT_USAGE;
	}
	v->expected = manifest_file_count(&v->m, &v->lay);
	struct stat st, parent;
	char up[4200];
	snprintf(up, sizeof(up), "%s/..", v->dir);
	v->fs_root = fstat(v->dirfd, &st) == 0 && stat(up, &parent) == 0 && st.st_dev != parent.st_dev;
	return 0;
}

/* Make the pool (from this rank's snapshot snap, or afresh) and run it: 0 with its outcome in *res,
 * or -1 when the snapshot cannot be used (said why). */
static int verify_execute(struct verify *v, const struct verify_opts *o, const struct sbuf *snap,
			  enum run_result *res)
{
	struct pool_config cfg = {
	    .units = total_units(&v->lay),
	    .threads = job_threads(&o->jo, 2, 0, 0),
	    .visitor = {.ctx = v, .local_size = sizeof(struct local), .run = verify_unit, .commit = verify_commit,
			.save = verify_save, .load = verify_load, .local_free = verify_local_free},
	    .errlog = &v->job.errlog,
	    .snapshot_name = job_snapshot_name(&v->job),
	};
	cfg.units = pool_rank_units(cfg.units, v->rank, v->ranks); /* this rank's share */
	v->pool = pool_new(&cfg, snap);
	if (!verify_ranks_ready(v, v->pool != NULL))
		return -1;
	struct run_hooks hooks = pool_run_hooks(v->pool, verify_progress, NULL);
	*res = verify_ranks_execute(v, &hooks);
	return 0;
}

static int verify_run(void *opts)
{
	struct verify_opts *o = opts;
	struct verify v;
	memset(&v, 0, sizeof(v));
	v.quick = o->quick;
	v.dir = o->dir;
	v.rank = 0;
	v.ranks = 1;
	v.prefetch = !v.quick && prefetch_wanted(v.dir, true);
	int rc = open_tree(&v);
	int rc0 = verify_ranks_begin(&v, &o->jo);
	if (!rc)
		rc = rc0;
	errlog_stderr_limit(100);

	struct sbuf id = {0};
	job_identity(&id, "verify");
	identity_add_path(&id, v.dir);
	ser_u64(&id, v.quick);
	verify_ranks_identity(&id);
	char *trees[] = {(char *)v.dir};
	if (!rc)
		rc = job_begin(&v.job, &o->jo, "verify", &id, trees, 1);
	sbuf_free(&id);
	const struct sbuf *snap;
	rc = verify_ranks_snapshot(&v, rc, &snap); /* across ranks, each rank's part of the job's */
	if (rc) {
		manifest_free(&v.m);
		return verify_job_max(rc);
	}
	enum run_result res;
	if (verify_execute(&v, o, snap, &res) != 0) {
		manifest_free(&v.m);
		return verify_job_max(EXIT_USAGE);
	}
	double el = pool_elapsed(v.pool);
	bool stopped = res != RUN_DONE;
	bool ok = v.m.complete && pool_errors(v.pool) == 0;
	if (v.rank == 0) {
		struct summary sm;
		summary(&v, summary_open(&sm), el, ok, stopped);
		summary_show(&sm, !job_json_stdout(&o->jo));
		if (o->jo.json) {
			struct sbuf doc = {0};
			summary_json(&v, &doc, el, ok, stopped);
			write_json_file(o->jo.json, &doc);
			sbuf_free(&doc);
		}
	}
	rc = job_end(&v.job, res, ok ? 0 : 1);
	if (!stopped)
		pool_free(v.pool);
	manifest_free(&v.m);
	return verify_job_max(rc);
}

const struct command cmd_verify = {"verify", "check a filled tree against its manifest: missing, changed, extra",
				   sizeof(struct verify_opts), verify_parse, verify_run, verify_opts_free};
