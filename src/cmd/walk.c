/*
 * myriad walk: enumerate trees. The plan is the traversal engine over the operands; the action
 * counts entries by type (and bytes with --stat) and streams paths. Everything else — threads,
 * checkpoint, progress, errors — is the engine's and job's.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmds.h"
#include "job/cmdstate.h"
#include "job/job.h"
#include "engine/walk.h"
#include "report/json.h"
#include "report/outfile.h"
#include "util/signals.h"
#include "util/util.h"
#include "cmd/walk_int.h"

static const char walk_help[] =
    "Usage: myriad walk [OPTIONS] DIR...\n"
    "Enumerate every entry under each DIR (DIR included) in parallel, with getdents64 and without\n"
    "stat() unless asked; never sorted, memory bounded, resumable after any interruption.\n"
    "\n"
    "  -j, --threads N          worker threads (default: one per CPU, growing to 8 per CPU, at\n"
    "                           least 16, while they wait for the disk: a cold cache wants\n"
    "                           many reads in flight)\n"
    "      --stat               statx every entry; adds apparent and allocated bytes\n"
    "      --print              stream paths, one per line, in discovery order (never sorted)\n"
    "      --print0             the same, each path followed by a NUL byte\n"
    "  -o, --output FILE        write the paths to FILE instead of standard output; each path\n"
    "                           appears exactly once, also across a resume. Paths streamed to\n"
    "                           standard output cannot be resumed exactly: such a run keeps no\n"
    "                           state, and run again it starts over\n"
    "      --type TYPES         count and print only these types: f d l p s b c (e.g. f,l);\n"
    "                           repeated, the lists add up\n"
    "      --exclude GLOB       skip entries whose name matches GLOB (a skipped directory is not\n"
    "                           entered; GLOB/: only directories; a name, not a path); repeatable\n"
    "      --xdev               do not descend into mount points (other filesystems, bind mounts)\n"
    "      --rate N             read at most N entries per second (to spare a busy system)\n"
    "%s"
    "\n"
    "Operands that are symlinks to directories are followed; nothing under them is.\n"
    "Exit status: 0 all read; 1 some entries failed (reported on stderr and with --errors);\n"
    "2 usage error; 3 stopped by a signal or a failed output (a full disk) with state saved: run\n"
    "the same command to resume. When the reader of the paths goes (| head), the walk ends at\n"
    "once, quietly, by SIGPIPE (status 141), keeping no state.\n";

static const char type_letters[] = "fdlpsbc";
static const char *const type_names[] = {"files",   "directories",   "symlinks",     "fifos",
					 "sockets", "block devices", "char devices", "of unknown type"};
static const char *const type_name_one[] = {"file",   "directory",    "symlink",     "fifo",
					    "socket", "block device", "char device", "of unknown type"};
static const char *const type_keys[] = {"f", "d", "l", "p", "s", "b", "c", "unknown"};

struct local {
	struct totals t;
	struct sbuf out;
};

static int type_index(unsigned char dt)
{
	switch (dt) {
	case DT_REG: return T_F;
	case DT_DIR: return T_D;
	case DT_LNK: return T_L;
	case DT_FIFO: return T_P;
	case DT_SOCK: return T_S;
	case DT_BLK: return T_B;
	case DT_CHR: return T_C;
	}
	return T_U;
}

static bool on_entry(void *ctx, void *lp, const struct walk_dir *d, const struct walk_entry *e,
		     struct errbatch *errs)
{
	struct walk_cmd *c = ctx;
	struct local *l = lp;
	int t = type_index(e->type);
	if (!(c->type_mask & (1u << t)))
		return false;
	l->t.by_type[t]++;
	if (e->stx) {
		l->t.apparent += e->stx->stx_size;
		l->t.allocated += e->stx->stx_blocks * 512;
	}
	if (c->print) {
		walk_path(&l->out, d, e);
		sbuf_addc(&l->out, c->print == 1 ? '\n' : '\0');
	}
	return false;
}

static void on_commit(void *ctx, void *lp)
{
	struct walk_cmd *c = ctx;
	struct local *l = lp;
	for (int i = 0; i < T_N; i++)
		c->t.by_type[i] += l->t.by_type[i];
	c->t.apparent += l->t.apparent;
	c->t.allocated += l->t.allocated;
	memset(&l->t, 0, sizeof(l->t));
	if (l->out.len) {
		(void)outfile_write(&c->out, l->out.data, l->out.len); /* a failure stops the run */
		sbuf_clear(&l->out);
	}
}

/* The unknown-type count goes last, so a snapshot of 0.1 (without it) still loads. */
void walk_state_save(struct sbuf *b, const struct walk_state *s)
{
	for (int i = 0; i < T_U; i++)
		ser_u64(b, s->by_type[i]);
	ser_u64(b, s->apparent);
	ser_u64(b, s->allocated);
	ser_u64(b, s->output_len);
	ser_u64(b, s->by_type[T_U]);
}

bool walk_state_load(struct walk_state *s, struct deser *d)
{
	for (int i = 0; i < T_U; i++)
		s->by_type[i] = deser_u64(d);
	s->apparent = deser_u64(d);
	s->allocated = deser_u64(d);
	s->output_len = deser_u64(d);
	s->by_type[T_U] = d->pos < d->len ? deser_u64(d) : 0;
	return !d->bad;
}

static void on_save(void *ctx, struct sbuf *b)
{
	struct walk_cmd *c = ctx;
	struct walk_state s = {.apparent = c->t.apparent, .allocated = c->t.allocated, .output_len = c->out.len};
	memcpy(s.by_type, c->t.by_type, sizeof(s.by_type));
	walk_state_save(b, &s);
}

/* Only decodes: the --output file is reopened at this length once the whole snapshot checked out. */
static bool on_load(void *ctx, struct deser *d)
{
	struct walk_cmd *c = ctx;
	struct walk_state s;
	if (!walk_state_load(&s, d))
		return false;
	memcpy(c->t.by_type, s.by_type, sizeof(c->t.by_type));
	c->t.apparent = s.apparent;
	c->t.allocated = s.allocated;
	c->resume_output_len = s.output_len;
	return true;
}

uint64_t total_entries(const struct totals *t)
{
	uint64_t n = 0;
	for (int i = 0; i < T_N; i++)
		n += t->by_type[i];
	return n;
}

void walk_count(void *ctx, uint64_t v[3])
{
	struct walk_cmd *c = ctx;
	walk_lock(c->walk);
	v[0] = total_entries(&c->t);
	v[1] = c->t.by_type[T_D];
	v[2] = walk_errors(c->walk);
	walk_unlock(c->walk);
}

static void on_progress(void *ctx, struct sbuf *line)
{
	struct walk_cmd *c = ctx;
	uint64_t v[3];
	walk_count(c, v);
	if (walk_ranks_progress(c, line, v)) /* under mpirun: the job's line */
		return;
	job_walk_progress_errors(line, c->walk, "walk", v[0], v[1], v[2], "");
}

static void on_sync(void *ctx)
{
	struct walk_cmd *c = ctx;
	outfile_sync(&c->out);
	if (c->job.errlog.have_file)
		outfile_sync(&c->job.errlog.file);
}

/* Add the types of list s (f,d,l...) to *mask. */
static bool parse_types(const char *s, unsigned *mask)
{
	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s == ',')
			continue;
		const char *p = strchr(type_letters, *s);
		if (!p)
			return false;
		*mask |= 1u << (p - type_letters);
	}
	return true;
}

static void summary_text(struct walk_cmd *c, FILE *f, double el)
{
	char b1[32], b2[32];
	uint64_t n = total_entries(&c->t);
	fprintf(f, "%s %s", fmt_count(b1, n), plural(n, "entry", "entries"));
	const char *sep = ": ";
	for (int i = 0; i < T_N; i++)
		if (c->t.by_type[i] || i <= T_D) {
			fprintf(f, "%s%s %s", sep, fmt_count(b1, c->t.by_type[i]),
				c->t.by_type[i] == 1 ? type_name_one[i] : type_names[i]);
			sep = ", ";
		}
	if (c->stat)
		fprintf(f, "; %s apparent, %s allocated", fmt_bytes(b1, c->t.apparent), fmt_bytes(b2, c->t.allocated));
	fprintf(f, "; %s %s; %.2f s, %s entries/s\n", fmt_count(b1, walk_errors(c->walk)),
		plural(walk_errors(c->walk), "error", "errors"), el,
		fmt_count(b2, el > 0 ? (uint64_t)(n / el) : n));
}

static void summary_json(struct walk_cmd *c, struct sbuf *b, char *const *roots, size_t nroots, int threads,
			 bool complete, double el)
{
	struct json j;
	json_document(&j, b, "walk");
	json_open(&j, "roots", '[');
	for (size_t i = 0; i < nroots; i++)
		json_bytes(&j, NULL, roots[i], strlen(roots[i]));
	json_close(&j, ']');
	json_bool(&j, "complete", complete);
	json_u64(&j, "sessions", walk_sessions(c->walk));
	uint64_t n = total_entries(&c->t);
	json_u64(&j, "entries", n);
	json_open(&j, "by_type", '{');
	for (int i = 0; i < T_N; i++) {
		if (i != T_U || c->t.by_type[T_U])
			json_u64(&j, type_keys[i], c->t.by_type[i]);
	}
	json_close(&j, '}');
	json_u64(&j, "directories", c->t.by_type[T_D]);
	if (c->stat) {
		json_u64(&j, "apparent_bytes", c->t.apparent);
		json_u64(&j, "allocated_bytes", c->t.allocated);
	}
	json_u64(&j, "errors", walk_errors(c->walk));
	json_double(&j, "elapsed_s", el);
	json_double(&j, "entries_per_s", el > 0 ? n / el : 0);
	json_u64(&j, "threads", c->threads_total ? (uint64_t)c->threads_total : (uint64_t)walk_threads(c->walk));
	if (c->ranks) {
		json_u64(&j, "ranks", (uint64_t)c->ranks);
		json_open(&j, "rank_entries", '[');
		for (int r = 0; r < c->ranks; r++)
			json_u64(&j, NULL, c->rank_entries[r]);
		json_close(&j, ']');
	}
	json_close(&j, '}');
}

struct walk_opts {
	struct job_opts jo; /* with --exclude and --rate */
	unsigned type_mask;
	int print;
	bool stat, xdev;
	const char *output;
	struct sbuf types; /* the --type lists given, joined by ',': part of the job's identity */
	char **roots;
	size_t nroots;
};

enum { OPT_STAT = OPT_CMD_BASE, OPT_PRINT, OPT_PRINT0, OPT_TYPE, OPT_XDEV };

static int walk_parse(int argc, char **argv, void *opts)
{
	static const struct option longopts[] = {
	    JOB_LONG_OPTIONS,
	    {"stat", no_argument, 0, OPT_STAT},
	    {"print", no_argument, 0, OPT_PRINT},
	    {"print0", no_argument, 0, OPT_PRINT0},
	    {"output", required_argument, 0, 'o'},
	    {"type", required_argument, 0, OPT_TYPE},
	    JOB_EXCLUDE_OPTION,
	    {"xdev", no_argument, 0, OPT_XDEV},
	    JOB_RATE_OPTION,
	    {0, 0, 0, 0},
	};
	struct walk_opts *o = opts;
	o->type_mask = (1u << T_N) - 1;
	job_opts_init(&o->jo);
	int opt, rc;
	while ((opt = job_getopt(&o->jo, argc, argv, "j:o:", longopts, walk_help, &rc))) {
		switch (opt) {
		case OPT_STAT: o->stat = true; break;
		case OPT_PRINT:
		case OPT_PRINT0:
			if (o->print && o->print != 1 + (opt == OPT_PRINT0))
				return usage_error("--print and --print0 contradict each other: choose one");
			o->print = 1 + (opt == OPT_PRINT0);
			break;
		case 'o':
			if (!job_output_ok("--output", optarg))
				return EXIT_USAGE;
			o->output = optarg;
			break;
		case OPT_TYPE:
			/* Repeated, the lists add up (--type f --type d is f,d), as find's -type f -o -type d. */
			if (!o->types.len)
				o->type_mask = 0;
			else
				sbuf_addc(&o->types, ',');
			sbuf_adds(&o->types, optarg);
			if (!parse_types(optarg, &o->type_mask))
				return usage_error("--type: '%s' is not a list of f, d, l, p, s, b, c", optarg);
			break;
		case OPT_XDEV: o->xdev = true; break;
		default: return usage_hint();
		}
	}
	if (rc != OPTS_RUN)
		return rc;
	if (job_check_outputs(&o->jo, &(struct job_output){"--output", o->output}, 1))
		return EXIT_USAGE;
	if (o->output && !o->print)
		o->print = 1;
	if (o->print && (!o->output || !strcmp(o->output, "-"))) {
		if (job_json_stdout(&o->jo))
			return usage_error("--json -: the summary would mix with the paths on standard output: "
					   "give --json FILE, or the paths -o FILE");
		/* A resume would repeat or lose what followed the last snapshot, unseen by the reader. */
		if (o->jo.state)
			return usage_error("--state: paths streamed to standard output cannot be resumed exactly, so "
					   "such a run keeps no state: write them with -o FILE, or drop --state");
		o->jo.unresumable = "paths streamed to standard output cannot be resumed exactly (with -o FILE "
				    "they can)";
	}
	o->roots = argv + optind;
	o->nroots = argc - optind;
	if (o->nroots == 0)
		return usage_error("missing operand: the directories to walk");
	return OPTS_RUN;
}

static void walk_opts_free(void *opts)
{
	struct walk_opts *o = opts;
	job_opts_free(&o->jo);
	sbuf_free(&o->types);
}

/* The job's identity: what changes its result, not how fast it runs. */
static void walk_identity(struct sbuf *id, const struct walk_opts *o)
{
	job_identity(id, "walk");
	identity_add_operands(id, o->roots, o->nroots);
	ser_u64(id, o->stat);
	ser_u64(id, o->print);
	ser_u64(id, o->xdev);
	/* The --type text as 0.1 wrote it for one --type, so its states resume. */
	ser_bytes(id, o->types.len ? o->types.data : "", o->types.len);
	identity_add_excludes(id, &o->jo);
	if (o->output && (!strcmp(o->output, "-") || identity_add_path(id, o->output) != 0))
		ser_str(id, o->output);
	walk_ranks_identity(id);
}

/* The summary on stdout (or stderr: not among the paths) and with --json. */
static void walk_report(struct walk_cmd *c, const struct walk_opts *o, enum run_result res, int threads)
{
	double el = walk_elapsed(c->walk);
	bool json_stdout = job_json_stdout(&o->jo);
	struct summary sm;
	FILE *sf = summary_open(&sm);
	if (res == RUN_STOPPED)
		fprintf(sf, "walk stopped after ");
	summary_text(c, sf, el);
	summary_show(&sm, c->out.fd != 1 && !json_stdout); /* not among the paths */
	if (o->jo.json) {
		struct sbuf doc = {0};
		summary_json(c, &doc, o->roots, o->nroots, threads, res == RUN_DONE, el);
		write_json_file(o->jo.json, &doc);
		sbuf_free(&doc);
	}
}

/* Check the operands, open the state, the outputs and the walk: 0, or an exit code after saying why.
 * output is where this process writes its paths (an MPI rank's part, see walk_mpi.c). */
static int walk_setup(struct walk_cmd *c, struct walk_opts *o, const char *output, struct throttle *throttle,
		      int *threads)
{
	int rc = job_check_dirs(o->roots, o->nroots);
	if (!rc) {
		/* Up to 8 per CPU (at least 16) when reads wait on the disk; one per CPU to start with. */
		*threads = job_threads(&o->jo, 8, 16, 128);
		struct sbuf id = {0};
		walk_identity(&id, o);
		rc = job_begin(&c->job, &o->jo, "walk", &id, o->roots, o->nroots);
		sbuf_free(&id);
	}
	const struct sbuf *snap;
	rc = walk_ranks_snapshot(c, rc, &snap); /* across ranks, each rank's part of the job's */
	if (rc)
		return rc;
	c->out.fd = -1;
	if (c->print && !snap && outfile_open(&c->out, output, 1, false, 0) != 0)
		return EXIT_USAGE;

	struct walk_config cfg = {
	    .roots = o->roots,
	    .nroots = o->nroots,
	    .threads = *threads,
	    .min_threads = o->jo.threads ? 0 : cpu_count(),
	    .xdev = o->xdev,
	    .excludes = o->jo.excludes,
	    .nexcludes = o->jo.nexcludes,
	    .stat_mask = c->stat ? STATX_SIZE | STATX_BLOCKS : 0,
	    .visitor = {.ctx = c, .local_size = sizeof(struct local), .entry = on_entry, .commit = on_commit,
			.save = on_save, .load = on_load},
	    .errlog = &c->job.errlog,
	    .snapshot_name = job_snapshot_name(&c->job),
	    .throttle = o->jo.rate ? throttle : NULL,
	    .shared = c->ranks > 0,
	    .shared_empty = c->rank > 0,
	};
	throttle_init(throttle, o->jo.rate);
	c->walk = walk_new(&cfg, snap);
	if (!c->walk)
		return EXIT_USAGE;
	if (c->print && snap && outfile_open(&c->out, output, 1, true, c->resume_output_len) != 0)
		return EXIT_USAGE;
	return 0;
}

static int walk_run(void *opts)
{
	struct walk_opts *o = opts;
	struct walk_cmd c = {.type_mask = o->type_mask, .print = o->print, .stat = o->stat, .output = o->output};
	struct throttle throttle;
	int threads = 0, rc;
	const char *output = c.output;
	rc = walk_ranks_begin(&c, &o->jo, &output);
	/* Every rank calls walk_setup: across ranks, it holds collectives. */
	int rc2 = walk_setup(&c, o, output, &throttle, &threads);
	if (!rc)
		rc = rc2;
	if (!walk_ranks_ready(&c, rc == 0))
		return rc ? rc : EXIT_USAGE;
	struct run_hooks hooks = walk_run_hooks(c.walk, on_progress, on_sync);
	enum run_result res = walk_ranks_execute(&c, &hooks);
	/* The totals are final now, or frozen by the stop snapshot. */
	if (c.rank == 0)
		walk_report(&c, o, res, threads);
	if (c.print)
		outfile_close(&c.out);
	rc = job_end(&c.job, res, walk_errors(c.walk));
	if (res == RUN_DONE)
		walk_free(c.walk);
	free(c.rank_entries);
	return walk_job_max(rc);
}

const struct command cmd_walk = {"walk", "enumerate trees in parallel: counts, sizes, paths; resumable",
				 sizeof(struct walk_opts), walk_parse, walk_run, walk_opts_free};
