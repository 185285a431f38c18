/*
 * myriad find: GNU find's expression language (findexpr) as the action of the one traversal engine.
 * Each entry is evaluated in the worker that read it; the entry is statted only if the evaluation
 * reaches a test that needs its metadata, with the fields the expression needs (names and types
 * come from getdents), in inode order when every entry is statted. Output goes
 * through per-worker buffers committed with the walk's batches, so -o FILE and -fprint FILE hold
 * every line exactly once across a resume.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <locale.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmds.h"
#include "cmd/find/findexpr.h"
#include "job/job.h"
#include "job/removal.h"
#include "engine/walk.h"
#include "io/dir.h"
#include "io/guard.h"
#include "report/json.h"
#include "report/outfile.h"
#include "report/progress.h"
#include "util/util.h"

static const char find_help[] =
    "Usage: myriad find [OPTIONS] [DIR...] [EXPRESSION]\n"
    "Search the trees under each DIR (default: .) in parallel for entries matching EXPRESSION, in\n"
    "GNU find's language; resumable. The set of results equals find's; their order differs.\n"
    "\n"
    "Options (before the directories):\n"
    "  -j, --threads N          worker threads (default: one per CPU, growing to 8 per CPU, at\n"
    "                           least 16, while they wait for the disk)\n"
    "  -o, --output FILE        write what -print, -print0 and -printf write to FILE instead of\n"
    "                           standard output; each line appears exactly once, also across a\n"
    "                           resume (so does what -fprint and -fprintf write)\n"
    "      --exclude GLOB       skip entries whose name matches GLOB (a skipped directory is not\n"
    "                           entered; GLOB/: only directories; a name, not a path); repeatable\n"
    "      --rate N             read at most N entries per second (to spare a busy system)\n"
    "%s"
    "\n"
    "Expression (operators by precedence: ( ), ! -not, -a -and (implied), -o -or, ','):\n"
    "  tests    -name -iname -path -ipath -wholename -regex -iregex PATTERN (in the locale's\n"
    "           characters, as GNU find); -type -xtype [fdlpsbc,]; -size [+-]N[cwbkMG]; -empty;\n"
    "           -newer -anewer -cnewer FILE; -samefile FILE; -mtime -atime -ctime [+-]DAYS;\n"
    "           -mmin -amin -cmin [+-]MINUTES (fractions allowed); -user -group NAME;\n"
    "           -uid -gid -links -inum [+-]N; -nouser; -nogroup; -perm [-/]MODE; -true; -false\n"
    "  options  -maxdepth N; -mindepth N; -xdev (-mount); -depth; -regextype TYPE\n"
    "  actions  -print; -print0; -fprint FILE; -fprint0 FILE; -printf FORMAT;\n"
    "           -fprintf FILE FORMAT; -prune; -quit; -delete (-print if the expression has no\n"
    "           action)\n"
    "  -printf directives: %%p %%P %%f %%h %%d %%s %%m %%M %%u %%U %%g %%G %%i %%n %%y %%l %%k %%b %%T@\n"
    "           %%A@ %%C@ %%%%, escapes \\n \\t \\0 \\\\ \\NNN \\c (unknown ones printed as written,\n"
    "           with a warning, as GNU find)\n"
    "\n"
    "DIR must be a directory (a symlink to one is followed); nothing under it is followed.\n"
    "-delete works bottom-up (it implies -depth) with rm's guards: a DIR that is a symlink, a DIR\n"
    "inside another or named twice, and the run's own files under a DIR are refused (exit 2);\n"
    "'.', '..', / and the working directory with those above it are searched but never deleted;\n"
    "mount points are not entered nor deleted (reported), bind mounts included (-xdev alone\n"
    "compares st_dev, as GNU find).\n"
    "Exit status: 0 all read; 1 some entries failed (reported on stderr and with --errors);\n"
    "2 usage error (an unknown predicate, a missing or bad argument); 3 stopped by a signal or a\n"
    "failed output with state saved: run the same command to resume (results on standard output\n"
    "cannot be resumed exactly: such a run keeps no state). When the reader of the results goes\n"
    "(| head), find ends at once, quietly, by SIGPIPE (status 141).\n";

struct local {
	uint64_t visited, matched, deleted;
	struct sbuf *out; /* one per output (allocated on first use) */
	bool prune;       /* the last entry visited is not to be entered */
	/* The entry being evaluated and what has been looked up about it. */
	const struct walk_dir *d;
	const struct walk_entry *e;
	const struct walk_dir *self; /* with -delete, in dir_done: the directory itself is the entry
				      * (d is then NULL and e made up from it) */
	struct fs_id self_id;        /* its identity, for the guards */
	struct errbatch *errs;
	struct statx stx;
	bool have_stx, have_path;
	struct sbuf path;
	size_t relstart;
};

struct find_cmd {
	struct fx_expr *x;
	unsigned stat_mask;
	size_t nouts;       /* 1 + the -fprint files */
	struct outfile *outs;
	bool *used;         /* outs[i] is written to */
	uint64_t *resume_len;
	uint64_t visited, matched, deleted;
	bool del;           /* the expression has -delete: post-order, rm's guards */
	bool need_depth;    /* an entry's depth matters (-maxdepth, -mindepth > 1, %d): it is counted
			     * from its path, else taken as 1 below an operand */
	struct guard guard; /* with del: / and the working directory with those above it */
	enum guard_verdict *op_verdict; /* with del: each operand's, which is not deleted unless OK */
	char **roots;       /* the operands */
	size_t nroots;
	atomic_bool quit;   /* -quit was reached */
	bool quit_saved;
	struct walk *walk;
	struct job job;
};

/* The depth of the entries of directory d: 1 + the components of its path below the operand. */
static int entry_depth(const struct walk_dir *d)
{
	if (!d)
		return 0;
	int n = 1;
	const char *p = d->path + d->relstart, *end = d->path + d->pathlen;
	if (p < end)
		n++;
	while ((p = memchr(p, '/', end - p)))
		p++, n++;
	return n;
}

/* The depth of directory d itself: the components of its path below the operand. */
static int dir_depth(const struct walk_dir *d)
{
	return d->relstart == d->pathlen ? 0 : entry_depth(d) - 1;
}

/* The path of directory d relative to its operand's fd ("" for the operand). */
static const char *dir_rel(const struct walk_dir *d)
{
	return d->relstart == d->pathlen ? "" : d->path + d->relstart;
}

struct ctx {
	struct fx_ctx fx;
	struct find_cmd *c;
	struct local *l;
};

static const struct statx *ctx_stat(struct fx_ctx *fx)
{
	struct ctx *k = (struct ctx *)fx;
	struct local *l = k->l;
	if (l->have_stx)
		return &l->stx;
	if (l->e->type == DT_UNKNOWN) /* the walk's own stat failed (reported) */
		return NULL;
	if (l->self) /* statted before its evaluation began; it failed */
		return NULL;
	int dfd = l->d ? l->d->fd : AT_FDCWD;
	int flags = l->d ? AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT : AT_NO_AUTOMOUNT; /* an operand is followed */
	if (statx(dfd, l->e->name, flags, k->c->stat_mask, &l->stx) != 0) {
		int err = errno;
		if (err != ENOENT) { /* gone since it was read: not an error */
			size_t len, rel;
			const char *p = fx->path(fx, &len, &rel);
			errlog_report(l->errs, p, len, "stat", err);
		}
		return NULL;
	}
	l->have_stx = true;
	return &l->stx;
}

static const char *ctx_path(struct fx_ctx *fx, size_t *len, size_t *relstart)
{
	struct ctx *k = (struct ctx *)fx;
	struct local *l = k->l;
	if (!l->have_path && l->self) {
		sbuf_clear(&l->path);
		sbuf_add(&l->path, l->self->path, l->self->pathlen);
		sbuf_addc(&l->path, 0);
		l->path.len--;
		l->relstart = l->self->relstart;
		l->have_path = true;
	}
	if (!l->have_path) {
		sbuf_clear(&l->path);
		walk_path(&l->path, l->d, l->e);
		sbuf_addc(&l->path, 0);
		l->path.len--;
		if (!l->d)
			l->relstart = l->path.len;
		else if (l->d->relstart == l->d->pathlen)
			l->relstart = l->path.len - l->e->namelen;
		else
			l->relstart = l->d->relstart;
		l->have_path = true;
	}
	*len = l->path.len;
	*relstart = l->relstart;
	return l->path.data;
}

static int ctx_dir_empty(struct fx_ctx *fx)
{
	struct ctx *k = (struct ctx *)fx;
	struct local *l = k->l;
	int fd = l->self ? dir_open_at(l->self->rootfd, dir_rel(l->self), strlen(dir_rel(l->self)))
		 : l->d ? dir_open_file(l->d->fd, l->e->name)
			: open(l->e->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = fd < 0 ? -1 : dir_is_empty(fd, NULL);
	int err = errno;
	if (fd >= 0)
		close(fd);
	if (r < 0 && err != ENOENT) {
		size_t len, rel;
		const char *p = fx->path(fx, &len, &rel);
		errlog_report(l->errs, p, len, fd < 0 ? "open" : "readdir", err);
	}
	return r;
}

/* -xtype on a symlink: its target's type, as GNU find's -P: a link that dangles (or whose
 * target's path goes through a non-directory) is itself; other failures (a loop) are reported. */
static unsigned char ctx_target_type(struct fx_ctx *fx)
{
	struct ctx *k = (struct ctx *)fx;
	struct local *l = k->l;
	struct stat st;
	if (fstatat(l->d ? l->d->fd : AT_FDCWD, l->e->name, &st, 0) == 0)
		return IFTODT(st.st_mode);
	int err = errno;
	if (err == ENOENT || err == ENOTDIR)
		return DT_LNK;
	size_t len, rel;
	const char *p = fx->path(fx, &len, &rel);
	errlog_report(l->errs, p, len, "stat", err);
	fx->failed = true;
	return DT_UNKNOWN;
}

static int ctx_readlink(struct fx_ctx *fx, struct sbuf *b)
{
	struct ctx *k = (struct ctx *)fx;
	struct local *l = k->l;
	char buf[4096];
	ssize_t n = readlinkat(l->d ? l->d->fd : AT_FDCWD, l->e->name, buf, sizeof(buf));
	if (n < 0) {
		int err = errno;
		if (err != ENOENT) {
			size_t len, rel;
			const char *p = fx->path(fx, &len, &rel);
			errlog_report(l->errs, p, len, "readlink", err);
		}
		return -1;
	}
	sbuf_add(b, buf, (size_t)n);
	return 0;
}

/* May -delete remove the directory with this identity (not /, the working directory nor one above
 * it)? Reported when it may not. */
static bool guard_allows(struct find_cmd *c, struct local *l, const struct fs_id *id, struct fx_ctx *fx)
{
	enum guard_verdict v = guard_id(&c->guard, id);
	if (v == GUARD_OK)
		return true;
	size_t len, rel;
	const char *p = fx->path(fx, &len, &rel);
	errlog_problem(l->errs, p, len, "not deleted", guard_rule(v));
	return false;
}

/* -delete on an operand its guard verdict keeps: "." quietly, and true (as GNU find's -delete on
 * "."); anything else reported, and false ("d/." and "./" too, which GNU find cannot rmdir). */
static bool keep_operand(struct find_cmd *c, struct local *l, unsigned root, struct fx_ctx *fx)
{
	enum guard_verdict v = c->op_verdict[root];
	size_t len, rel;
	const char *p = fx->path(fx, &len, &rel);
	if (v == GUARD_DOT && len == 1 && p[0] == '.')
		return true;
	errlog_problem(l->errs, p, len, "not deleted", guard_rule(v));
	return false;
}

/* -delete: unlink the entry, or remove the (by now empty) directory, with rm's guards. */
static bool ctx_remove(struct fx_ctx *fx)
{
	struct ctx *k = (struct ctx *)fx;
	struct local *l = k->l;
	struct find_cmd *c = k->c;
	struct fs_id id;
	int r;
	const char *op = "unlink";
	if (l->self) { /* a directory after everything under it (post-order) */
		const struct walk_dir *d = l->self;
		if (d->mount) /* reported by the walk: a mount point is left alone */
			return false;
		if (d->relstart == d->pathlen && c->op_verdict[d->root] != GUARD_OK)
			return keep_operand(c, l, d->root, fx);
		if (d->relstart != d->pathlen && !guard_allows(c, l, &l->self_id, fx))
			return false;
		op = "rmdir";
		r = walk_rmdir(d, false);
	} else if (l->e->type == DT_UNKNOWN) { /* its stat failed (reported): what it is is unknown */
		return false;
	} else if (!l->d) { /* an operand not entered (-maxdepth 0) */
		unsigned root = 0;
		while (root + 1 < c->nroots && strcmp(c->roots[root], l->e->name) != 0)
			root++;
		if (c->op_verdict[root] != GUARD_OK)
			return keep_operand(c, l, root, fx);
		op = "rmdir";
		r = rmdir(l->e->name);
	} else if (l->e->type == DT_DIR) { /* a directory not entered (-maxdepth) */
		if (fs_identity(l->d->fd, l->e->name, &id) == 0 && !guard_allows(c, l, &id, fx))
			return false;
		op = "rmdir";
		r = unlinkat(l->d->fd, l->e->name, AT_REMOVEDIR);
	} else {
		r = unlinkat(l->d->fd, l->e->name, 0);
	}
	if (r != 0) {
		int err = errno;
		if (err == ENOENT) /* gone already: what -delete wanted */
			return true;
		size_t len, rel;
		const char *p = fx->path(fx, &len, &rel);
		errlog_report(l->errs, p, len, op, err);
		return false;
	}
	l->deleted++;
	return true;
}

/* Evaluate the expression on entry e (an operand or not, at depth), set up in l; its output goes to
 * l->out. */
static void evaluate(struct find_cmd *c, struct local *l, const struct walk_entry *e, bool operand, int depth)
{
	const struct fx_expr *x = c->x;
	if (!l->out)
		l->out = xcalloc(c->nouts, sizeof(*l->out));
	size_t mark[c->nouts];
	for (size_t i = 0; i < c->nouts; i++)
		mark[i] = l->out[i].len;
	struct ctx k = {.fx = {.name = e->name, .namelen = e->namelen, .operand = operand, .type = e->type,
			       .ino = e->ino, .depth = depth, .stat = ctx_stat, .path = ctx_path,
			       .dir_empty = ctx_dir_empty, .target_type = ctx_target_type, .readlink = ctx_readlink, .remove = ctx_remove,
			       .out = l->out, .user = l},
			.c = c, .l = l};
	if (fx_eval(x, &k.fx))
		l->matched++;
	if (k.fx.prune)
		l->prune = true;
	if (k.fx.quit) {
		l->prune = true;
		if (!atomic_exchange(&c->quit, true)) {
			if (c->walk) /* NULL while the operands are visited: they are then not entered */
				walk_cancel(c->walk);
		} else {
			/* Another worker's -quit came first: this entry's output goes (find acts on none after). */
			for (size_t i = 0; i < c->nouts; i++)
				l->out[i].len = mark[i];
		}
	}
}

static bool on_entry(void *ctx, void *lp, const struct walk_dir *d, const struct walk_entry *e,
		     struct errbatch *errs)
{
	struct find_cmd *c = ctx;
	struct local *l = lp;
	const struct fx_expr *x = c->x;
	l->prune = true;
	if (atomic_load_explicit(&c->quit, memory_order_relaxed))
		return false;
	int depth = c->need_depth ? entry_depth(d) : d != NULL;
	l->prune = x->maxdepth >= 0 && depth >= x->maxdepth;
	l->visited++;
	/* With -delete a directory that will be entered is evaluated after its contents, in
	 * on_dir_done (as find's -depth). */
	if (c->del && e->type == DT_DIR && !l->prune)
		return false;
	if (depth < x->mindepth || (x->maxdepth >= 0 && depth > x->maxdepth))
		return false;
	l->self = NULL;
	l->d = d;
	l->e = e;
	l->errs = errs;
	l->have_stx = l->have_path = false;
	evaluate(c, l, e, d == NULL, depth);
	return false;
}

/* With -delete: a directory, once everything under it has been visited (and maybe deleted). */
static bool on_dir_done(void *ctx, void *lp, const struct walk_dir *d, bool keep, struct errbatch *errs)
{
	struct find_cmd *c = ctx;
	struct local *l = lp;
	const struct fx_expr *x = c->x;
	(void)keep; /* -delete is tried whatever stays below: rmdir says why it fails, as find's */
	if (atomic_load_explicit(&c->quit, memory_order_relaxed))
		return false;
	int depth = dir_depth(d);
	if (depth < x->mindepth)
		return false;
	/* The directory as an entry: its name, and its metadata looked up now (by path from the
	 * operand: its fd is closed by now). */
	const char *name = d->path;
	size_t namelen = d->pathlen;
	if (d->relstart != d->pathlen) {
		const char *slash = memrchr(d->path, '/', d->pathlen);
		name = slash ? slash + 1 : d->path;
		namelen = d->pathlen - (size_t)(name - d->path);
	}
	struct walk_entry e = {.name = name, .namelen = namelen, .type = DT_DIR};
	l->self = d;
	l->d = NULL;
	l->e = &e;
	l->errs = errs;
	l->have_path = false;
	/* Opened in pieces: its path may be longer than PATH_MAX. */
	const char *rel = dir_rel(d);
	int fd = dir_open_at(d->rootfd, rel, strlen(rel));
	l->have_stx = fd >= 0 && statx(fd, "", AT_EMPTY_PATH, c->stat_mask | STATX_INO, &l->stx) == 0 &&
		      fs_identity(fd, "", &l->self_id) == 0;
	int err = errno;
	if (fd >= 0)
		close(fd);
	if (!l->have_stx) {
		if (err != ENOENT) /* gone since: nothing to evaluate */
			errlog_report(errs, d->path, d->pathlen, fd < 0 ? "open" : "stat", err);
		l->self = NULL;
		return false;
	}
	e.ino = l->stx.stx_ino;
	evaluate(c, l, &e, d->relstart == d->pathlen, depth);
	l->self = NULL;
	return false;
}

static bool on_enter(void *ctx, void *lp, const struct walk_dir *d, const struct walk_entry *e)
{
	struct local *l = lp;
	return !l->prune;
}

static void on_commit(void *ctx, void *lp)
{
	struct find_cmd *c = ctx;
	struct local *l = lp;
	c->visited += l->visited;
	c->matched += l->matched;
	c->deleted += l->deleted;
	l->visited = l->matched = l->deleted = 0;
	for (size_t i = 0; l->out && i < c->nouts; i++)
		if (l->out[i].len) {
			(void)outfile_write(&c->outs[i], l->out[i].data, l->out[i].len); /* a failure stops the run */
			sbuf_clear(&l->out[i]);
		}
}

static void on_local_free(void *ctx, void *lp)
{
	struct find_cmd *c = ctx;
	struct local *l = lp;
	for (size_t i = 0; l->out && i < c->nouts; i++)
		sbuf_free(&l->out[i]);
	free(l->out);
	sbuf_free(&l->path);
}

static void on_save(void *ctx, struct sbuf *b)
{
	struct find_cmd *c = ctx;
	ser_u64(b, c->visited);
	ser_u64(b, c->matched);
	ser_u64(b, c->deleted);
	ser_u64(b, atomic_load(&c->quit));
	fx_save(c->x, b);
	ser_u64(b, c->nouts);
	for (size_t i = 0; i < c->nouts; i++)
		ser_u64(b, c->used[i] ? c->outs[i].len : 0);
}

/* Only decodes: the outputs are reopened at their lengths once the whole snapshot checked out. */
static bool on_load(void *ctx, struct deser *d)
{
	struct find_cmd *c = ctx;
	c->visited = deser_u64(d);
	c->matched = deser_u64(d);
	c->deleted = deser_u64(d);
	uint64_t q = deser_u64(d);
	if (q > 1 || !fx_load(c->x, d) || deser_u64(d) != c->nouts)
		return false;
	atomic_store(&c->quit, q == 1);
	for (size_t i = 0; i < c->nouts; i++)
		c->resume_len[i] = deser_u64(d);
	return !d->bad;
}

static void on_progress(void *ctx, struct sbuf *line)
{
	struct find_cmd *c = ctx;
	walk_lock(c->walk);
	uint64_t n = c->visited, m = c->matched;
	walk_unlock(c->walk);
	double el = walk_elapsed(c->walk);
	char b[32];
	sbuf_adds(line, "find: ");
	progress_format(line, "entries", n, 0, el, el > 0 ? n / el : 0, walk_errors(c->walk));
	sbuf_printf(line, " (%s matched)", fmt_count(b, m));
	walk_stuck(c->walk, line, 5);
}

static void on_sync(void *ctx)
{
	struct find_cmd *c = ctx;
	for (size_t i = 0; i < c->nouts; i++)
		if (c->used[i])
			outfile_sync(&c->outs[i]);
	if (c->job.errlog.have_file)
		outfile_sync(&c->job.errlog.file);
}

struct find_opts {
	struct job_opts jo;
	const char *output;
	char **roots;
	size_t nroots;
	char **expr;
	int nexpr;
	struct fx_expr x;
	bool out0; /* output 0 is written to */
};

static char dot[] = ".";
static char *dot_roots[] = {dot};

/* -o FILE and the -fprint files: each writable, distinct, and none --json's, --errors' or in the
 * --state directory. 0 or EXIT_USAGE. */
static int find_check_outputs(const struct find_opts *o)
{
	struct job_output outs[o->x.nfiles + 1];
	outs[0] = (struct job_output){"--output", o->output};
	for (size_t i = 0; i < o->x.nfiles; i++) {
		if (!job_output_ok("-fprint", o->x.files[i]))
			return EXIT_USAGE;
		outs[i + 1] = (struct job_output){"-fprint", o->x.files[i]};
	}
	return job_check_outputs(&o->jo, outs, o->x.nfiles + 1);
}

static int find_parse(int argc, char **argv, void *opts)
{
	static const struct option longopts[] = {
	    JOB_LONG_OPTIONS,
	    {"output", required_argument, 0, 'o'},
	    JOB_EXCLUDE_OPTION,
	    JOB_RATE_OPTION,
	    {0, 0, 0, 0},
	};
	struct find_opts *o = opts;
	job_opts_init(&o->jo);
	/* Names are matched as GNU find matches them, by the characters of the user's locale and its
	 * order for ranges; numbers, messages and the JSON summary stay the C locale's. */
	setlocale(LC_CTYPE, "");
	setlocale(LC_COLLATE, "");
	/* The expression starts at its first predicate, '(' or '!'; options and directories precede it. */
	int start = 1;
	while (start < argc && !fx_starts_expr(argv[start]))
		start++;
	int opt, rc;
	while ((opt = job_getopt(&o->jo, start, argv, "+j:o:", longopts, find_help, &rc))) {
		switch (opt) {
		case 'o':
			if (!job_output_ok("--output", optarg))
				return EXIT_USAGE;
			o->output = optarg;
			break;
		default: return usage_hint();
		}
	}
	o->jo.argc = argc; /* the whole command line is the job's */
	if (rc != OPTS_RUN)
		return rc;
	o->roots = argv + optind;
	o->nroots = start - optind;
	for (size_t i = 0; i < o->nroots; i++)
		if (o->roots[i][0] == '-' && o->roots[i][1])
			return usage_error("%s: unknown option or predicate (options come before the directories, "
					   "predicates after them)", o->roots[i]);
	if (job_check_named(o->roots, o->nroots))
		return EXIT_USAGE;
	if (o->nroots == 0) {
		o->roots = dot_roots;
		o->nroots = 1;
	}
	o->expr = argv + start;
	o->nexpr = argc - start;
	if (fx_parse(&o->x, o->nexpr, o->expr) != 0)
		return usage_error("%s", o->x.err);
	if (find_check_outputs(o))
		return EXIT_USAGE;
	o->out0 = o->x.uses_stdout || !o->x.has_action;
	if (o->out0 && (!o->output || !strcmp(o->output, "-"))) {
		if (job_json_stdout(&o->jo))
			return usage_error("--json -: the summary would mix with the results on standard output: "
					   "give --json FILE, or the results -o FILE");
		if (o->jo.state)
			return usage_error("--state: results on standard output cannot be resumed exactly, so such a "
					   "run keeps no state: write them with -o FILE (or -fprint FILE), or drop --state");
		o->jo.unresumable = "results on standard output cannot be resumed exactly (with -o FILE they can)";
	}
	return OPTS_RUN;
}

static void find_opts_free(void *opts)
{
	struct find_opts *o = opts;
	job_opts_free(&o->jo);
	fx_free(&o->x);
}

/* The job's identity: the operands, the expression word by word, the outputs. */
static void find_identity(struct sbuf *id, const struct find_opts *o)
{
	job_identity(id, "find");
	identity_add_operands(id, o->roots, o->nroots);
	ser_u64(id, (uint64_t)o->nexpr);
	for (int i = 0; i < o->nexpr; i++)
		ser_str(id, o->expr[i]);
	identity_add_excludes(id, &o->jo);
	if (o->output && (!strcmp(o->output, "-") || identity_add_path(id, o->output) != 0))
		ser_str(id, o->output);
	for (size_t i = 0; i < o->x.nfiles; i++)
		if (identity_add_path(id, o->x.files[i]) != 0)
			ser_str(id, o->x.files[i]);
}

static void summary_json(struct find_cmd *c, struct sbuf *b, const struct find_opts *o, bool complete, double el)
{
	struct json j;
	json_document(&j, b, "find");
	json_open(&j, "roots", '[');
	for (size_t i = 0; i < o->nroots; i++)
		json_bytes(&j, NULL, o->roots[i], strlen(o->roots[i]));
	json_close(&j, ']');
	json_bool(&j, "complete", complete);
	json_bool(&j, "quit", atomic_load(&c->quit));
	json_u64(&j, "sessions", walk_sessions(c->walk));
	json_u64(&j, "entries", c->visited);
	json_u64(&j, "matched", c->matched);
	if (c->del)
		json_u64(&j, "deleted", c->deleted);
	json_u64(&j, "errors", walk_errors(c->walk));
	json_double(&j, "elapsed_s", el);
	json_double(&j, "entries_per_s", el > 0 ? c->visited / el : 0);
	json_u64(&j, "threads", walk_threads(c->walk));
	json_close(&j, '}');
}

/* Is fd the same open file as fd 1 (-fprint /dev/stdout)? */
static bool same_file(int fd, int fd1)
{
	struct stat a, b;
	return fd == fd1 || (fd >= 0 && fstat(fd, &a) == 0 && fstat(fd1, &b) == 0 && a.st_dev == b.st_dev &&
			     a.st_ino == b.st_ino);
}

/* A summary only where it does not mix with the results (find prints none), and with --json. */
static void find_report(struct find_cmd *c, const struct find_opts *o, enum run_result res)
{
	double el = walk_elapsed(c->walk);
	bool results_on_stdout = false;
	for (size_t i = 0; i < c->nouts; i++)
		results_on_stdout |= c->used[i] && same_file(c->outs[i].fd, 1);
	if (!results_on_stdout) {
		struct summary sm;
		FILE *sf = summary_open(&sm);
		char b1[32], b2[32], b3[32], b4[32], b5[32];
		uint64_t e = walk_errors(c->walk);
		char del[48] = "";
		if (c->del)
			snprintf(del, sizeof(del), ", %s deleted", fmt_count(b5, c->deleted));
		fprintf(sf, "find %s%s %s visited, %s matched%s; %s %s; %.2f s, %s entries/s\n",
			res == RUN_STOPPED ? "stopped after " : "", fmt_count(b1, c->visited),
			plural(c->visited, "entry", "entries"), fmt_count(b2, c->matched), del, fmt_count(b3, e),
			plural(e, "error", "errors"), el, fmt_count(b4, el > 0 ? (uint64_t)(c->visited / el) : c->visited));
		summary_show(&sm, !job_json_stdout(&o->jo));
	}
	if (o->jo.json) {
		struct sbuf doc = {0};
		summary_json(c, &doc, o, res == RUN_DONE, el);
		write_json_file(o->jo.json, &doc);
		sbuf_free(&doc);
	}
}

static int open_outputs(struct find_cmd *c, const struct find_opts *o, bool resume)
{
	for (size_t i = 0; i < c->nouts; i++) {
		if (!c->used[i])
			continue;
		const char *path = i == 0 ? o->output : o->x.files[i - 1];
		if (outfile_open(&c->outs[i], path, 1, resume, resume ? c->resume_len[i] : 0) != 0)
			return -1;
	}
	return 0;
}

/* -delete's checks of the operands, before anything is touched: a symlink is never followed (exit 2);
 * '.', '..', / and the working directory with those above it are searched but never deleted
 * themselves (their verdicts kept in c->op_verdict). *checked: each operand as checked. */
static int delete_guards(struct find_cmd *c, struct guard_operand **checked)
{
	if (guard_init(&c->guard) != 0)
		return usage_error("-delete: cannot identify the working directory and every directory above it, "
				   "which are never deleted: %s", strerror(errno));
	c->op_verdict = xcalloc(c->nroots, sizeof(*c->op_verdict));
	*checked = xcalloc(c->nroots, sizeof(**checked));
	for (size_t i = 0; i < c->nroots; i++) {
		const char *root = c->roots[i];
		enum guard_verdict v = guard_check(&c->guard, root, &(*checked)[i]);
		if (v == GUARD_ERRNO)
			return usage_error("%s: %s", root, strerror(errno));
		if (v == GUARD_LINK_SLASH || (v != GUARD_DOT && (*checked)[i].type == S_IFLNK))
			return usage_error("refusing -delete under '%s': it is a symlink, and -delete never follows "
					   "one (give the directory it points to)", root);
		if (v == GUARD_DOT) { /* checked by what it names, for guard_same */
			int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (fd < 0 || fs_identity(fd, "", &(*checked)[i].id) != 0) {
				int e = errno;
				if (fd >= 0)
					close(fd);
				return usage_error("%s: %s", root, strerror(e));
			}
			close(fd);
			(*checked)[i].type = S_IFDIR;
		}
		c->op_verdict[i] = v;
	}
	return EXIT_OK;
}

/* -delete's checks of the run as a whole: no operand inside another, none of the run's own files
 * (state, --json, --errors, -o, -fprint's) under an operand. */
static int delete_own_files(const struct find_opts *o, const struct sbuf *id)
{
	int rc = removal_check_overlap(o->roots, o->nroots, "-delete under");
	struct removal_own *own = xcalloc(1 + o->x.nfiles, sizeof(*own));
	own[0] = (struct removal_own){"--output", o->output};
	for (size_t i = 0; i < o->x.nfiles; i++)
		own[1 + i] = (struct removal_own){"-fprint", o->x.files[i]};
	if (!rc)
		rc = removal_check_own(&o->jo, "find", id, o->roots, o->nroots, own, 1 + o->x.nfiles, "-delete under");
	free(own);
	return rc;
}

static int find_run(void *opts)
{
	struct find_opts *o = opts;
	for (size_t i = 0; i < o->nroots; i++) {
		struct stat st;
		if (stat(o->roots[i], &st) != 0)
			return usage_error("%s: %s", o->roots[i], strerror(errno));
		if (!S_ISDIR(st.st_mode))
			return usage_error("%s: not a directory", o->roots[i]);
	}
	struct find_cmd c = {.x = &o->x, .nouts = 1 + o->x.nfiles, .del = o->x.has_delete,
			     .need_depth = o->x.maxdepth >= 0 || o->x.mindepth > 1 || o->x.uses_depth,
			     .roots = o->roots, .nroots = o->nroots};
	struct guard_operand *checked = NULL;
	int rc = c.del ? delete_guards(&c, &checked) : EXIT_OK;
	if (rc != EXIT_OK)
		goto out;
	/* What any test needs, and the type (the walk's fallback where getdents gives none). */
	c.stat_mask = o->x.stat_mask | STATX_TYPE;
	c.outs = xcalloc(c.nouts, sizeof(*c.outs));
	c.used = xcalloc(c.nouts, sizeof(*c.used));
	c.resume_len = xcalloc(c.nouts, sizeof(*c.resume_len));
	c.used[0] = o->out0;
	for (size_t i = 1; i < c.nouts; i++)
		c.used[i] = true;
	for (size_t i = 0; i < c.nouts; i++)
		c.outs[i].fd = -1;
	int threads = job_threads(&o->jo, 8, 16, 128);

	struct sbuf id = {0};
	find_identity(&id, o);
	rc = c.del ? delete_own_files(o, &id) : EXIT_OK;
	if (!rc)
		rc = job_begin(&c.job, &o->jo, "find", &id, o->roots, o->nroots);
	sbuf_free(&id);
	if (rc)
		goto out;
	const struct sbuf *snap = job_snapshot(&c.job);
	rc = EXIT_USAGE;
	/* A resume takes the first session's origin and reference values from its snapshot (the
	 * reference file may have changed or gone since). */
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	if (!snap && fx_resolve(&o->x, now) != 0) {
		usage_error("%s", o->x.err);
		job_end(&c.job, RUN_DONE, 0);
		goto out;
	}
	if (!snap && open_outputs(&c, o, false) != 0)
		goto out;
	struct throttle throttle;
	struct walk_config cfg = {
	    .roots = o->roots,
	    .nroots = o->nroots,
	    .threads = threads,
	    .min_threads = o->jo.threads ? 0 : cpu_count(),
	    .xdev = o->x.xdev || c.del,
	    /* -xdev as GNU find's (st_dev); -delete never crosses a bind mount either */
	    .xdev_by_dev = !c.del,
	    .excludes = o->jo.excludes,
	    .nexcludes = o->jo.nexcludes,
	    .stat_mask = 0, /* statted by the expression, when it needs to */
	    .inode_order = fx_stats_every_entry(&o->x),
	    .visitor = {.ctx = &c, .local_size = sizeof(struct local), .entry = on_entry, .enter = on_enter,
			.dir_done = c.del ? on_dir_done : NULL, .commit = on_commit, .local_free = on_local_free,
			.save = on_save, .load = on_load},
	    /* -delete as rm: never into a subtree moved out of the tree, never into a mount point */
	    .open_by_path = c.del,
	    .report_mounts = c.del,
	    .errlog = &c.job.errlog,
	    .snapshot_name = job_snapshot_name(&c.job),
	    .throttle = o->jo.rate ? &throttle : NULL,
	};
	throttle_init(&throttle, o->jo.rate);
	c.walk = walk_new(&cfg, snap);
	if (!c.walk)
		goto out;
	/* The walk opened each operand again, by its path: with -delete it must be what was checked. */
	for (size_t i = 0; c.del && i < o->nroots; i++)
		if (!guard_same(&checked[i], walk_root_fd(c.walk, i))) {
			usage_error("refusing -delete under '%s': it was replaced while it was checked", o->roots[i]);
			walk_free(c.walk);
			if (snap || ckpt_started(c.job.ckpt))
				ckpt_close(c.job.ckpt); /* the job stays as it was */
			else
				ckpt_finish(c.job.ckpt);
			goto out;
		}
	if (snap && open_outputs(&c, o, true) != 0)
		goto out;
	if (atomic_load(&c.quit))
		walk_cancel(c.walk);
	struct run_hooks hooks = walk_run_hooks(c.walk, on_progress, on_sync);
	enum run_result res = job_execute(&c.job, &hooks);
	find_report(&c, o, res);
	for (size_t i = 0; i < c.nouts; i++)
		if (c.used[i])
			outfile_close(&c.outs[i]);
	rc = job_end(&c.job, res, walk_errors(c.walk));
	if (res == RUN_DONE)
		walk_free(c.walk);
out:
	free(c.outs);
	free(c.used);
	free(c.resume_len);
	free(checked);
	free(c.op_verdict);
	if (c.del)
		guard_free(&c.guard);
	return rc;
}

const struct command cmd_find = {"find", "search trees with find's expressions in parallel; resumable",
				 sizeof(struct find_opts), find_parse, find_run, find_opts_free};
