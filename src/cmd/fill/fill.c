/*
 * myriad fill: create N files in the deterministic layout (state/layout.h) at the kernel's pace.
 * The plan is a pool over the layout's leaf directories — a worker owns a whole leaf, so no two
 * threads create in one directory, where creates serialize on its lock — and the action creates the
 * leaf's files in order. A small fill (fewer than FILL_MIN_UNITS leaves) splits each leaf into
 * consecutive parts only where that helps (fill_parts): with --sync file, so that all the workers
 * of an fsync-bound fill have work to the end rather than waiting for a few leaves, and for files
 * with data when there are fewer leaves than workers. Creation is
 * idempotent (O_EXCL, an existing file of the right size is accepted), so a resumed fill redoes
 * only the leaves that were in progress, after a cheap re-check of those its snapshot counts done.
 * Nothing is written through a link: an entry in the way is reported and left out, and the fill
 * then ends incomplete. DIR/.myriad-fill records the parameters and, at the end, exactly which
 * files exist.
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
#include "util/throttle.h"
#include "io/dir.h"
#include "report/hist.h"
#include "report/json.h"
#include "report/progress.h"
#include "state/manifest.h"
#include "state/tally.h"
#include "util/util.h"
#include "cmd/fill/fill_int.h"

static const char fill_help[] =
    "Usage: myriad fill [OPTIONS] DIR\n"
    "Create N files under DIR in a balanced, deterministic tree: file i's path, size and contents\n"
    "are functions of (i, --seed, --fanout, --size), so `myriad verify DIR` can check them.\n"
    "Resumable: after any interruption, run the same command again.\n"
    "\n"
    "  -n, --files N            number of files, 0 to 10^15 (1M = 1,000,000), required; 0: an\n"
    "                           empty fill, complete\n"
    "  -s, --size SIZE          file size: 0 (default), 4k, 20k ... up to 2^63-1; or a range 1k-64k,\n"
    "                           drawn per file\n"
    "      --fanout N           at most N entries per directory, 2 to 10M (default 1000)\n"
    "  -j, --threads N          workers, 1 to 4096 (default: one per CPU; 32 per CPU with --sync\n"
    "                           file, where every file waits for the disk)\n"
    "      --sync MODE          none (default): leave data to the kernel; file: fsync each file\n"
    "                           before close; end: syncfs once at the end\n"
    "      --until-full         create until the filesystem runs out of space or inodes, then stop\n"
    "                           cleanly with success; the manifest records which files exist\n"
    "      --seed N             seed for sizes and contents (default 0)\n"
    "      --rate N             create at most N files per second\n"
    "%s"
    "\n"
    "DIR is created if missing. A non-empty DIR without a fill manifest of its own (lost+found\n"
    "aside), or with one made with other parameters, is refused and left untouched.\n"
    "A re-run or resumed fill re-checks the last file of each leaf it counts done and makes again\n"
    "what was lost since. No link is ever written through: an entry in the way of a file or a\n"
    "directory (a symlink, a hard-linked file, a FIFO) is reported and left alone with what lies\n"
    "below it; the rest is filled, and the fill ends incomplete (exit 1).\n"
    "Out of space or inodes without --until-full: the fill stops with state saved (exit 3); free\n"
    "space and run the same command to complete it.\n"
    "After a machine crash, --sync file guarantees every file counted in the last snapshot;\n"
    "with none or end, re-run the fill and then verify: files whose data was lost are rewritten\n"
    "only if their size is wrong, so run verify (without --quick) after a crash.\n"
    "A resumed fill's counts are the whole job's: a file an interrupted run made counts as created,\n"
    "not as already there, even after kill -9.\n";

void fill_state_save(struct sbuf *b, const struct fill_state *s)
{
	ser_u64(b, s->created);
	ser_u64(b, s->existing);
	ser_u64(b, s->bytes);
	for (int i = 0; i < FILL_OPS; i++)
		hist_save(b, &s->h[i]);
	timeline_save(b, &s->tl);
	ser_u64(b, s->skipped);
}

bool fill_state_load(struct fill_state *s, struct deser *d)
{
	s->created = deser_u64(d);
	s->existing = deser_u64(d);
	s->bytes = deser_u64(d);
	for (int i = 0; i < FILL_OPS; i++)
		if (!hist_load(&s->h[i], d))
			return false;
	if (!timeline_load(&s->tl, d))
		return false;
	/* Last, and absent from the snapshots of myriad 0.1.0 (which left no entry out). */
	s->skipped = d->len - d->pos >= 8 ? deser_u64(d) : 0;
	return !d->bad;
}

/* 40 KiB: static, as the pool's lock serializes snapshots. */
static struct fill_state state_buf;

static void fill_save(void *ctx, struct sbuf *b)
{
	struct fill *f = ctx;
	struct fill_state *s = &state_buf;
	s->created = f->created;
	s->existing = f->existing;
	s->bytes = f->bytes;
	s->skipped = f->skipped;
	memcpy(s->h, f->h, sizeof(s->h));
	s->tl = f->tl;
	fill_state_save(b, s);
}

static bool fill_load(void *ctx, struct deser *d)
{
	struct fill *f = ctx;
	struct fill_state *s = &state_buf;
	if (!fill_state_load(s, d))
		return false;
	f->created = s->created;
	f->existing = s->existing;
	f->bytes = s->bytes;
	f->skipped = s->skipped;
	memcpy(f->h, s->h, sizeof(f->h));
	f->tl = s->tl;
	return true;
}

void fill_leaf_name(void *ctx, uint64_t u, struct sbuf *out)
{
	struct fill *f = ctx;
	char rel[1024];
	size_t rl = layout_dir_path(&f->lay, f->lay.depth, fill_unit_of(f, u) / f->parts, rel);
	escape_path(out, f->dir, strlen(f->dir));
	if (rl)
		sbuf_printf(out, "/%s", rel);
}

static void fill_progress(void *ctx, struct sbuf *line)
{
	struct fill *f = ctx;
	pool_lock(f->pool);
	uint64_t v[3] = {f->created + f->existing, f->created, pool_errors(f->pool)};
	pool_unlock(f->pool);
	struct sbuf stuck = {0};
	pool_stuck(f->pool, &stuck, 5, fill_leaf_name);
	fill_ranks_progress(f, v, &stuck);
	double el = pool_elapsed(f->pool);
	sbuf_adds(line, "fill: ");
	progress_format(line, "files", v[0], f->lay.files, el, el > 0 ? v[1] / el : 0, v[2]);
	sbuf_add(line, stuck.data, stuck.len);
	sbuf_free(&stuck);
}

/* Is DIR empty but for lost+found (a directory) and fill's own names (regular files)? Another kind
 * of entry under one of those names — a symlink planted as the manifest's temporary file — is not
 * nothing: DIR is then not empty. */
static int fill_dir_is_empty(int dfd)
{
	static const char *const ignore[] = {"lost+found", MANIFEST_NAME, MANIFEST_NAME ".tmp", NULL};
	for (int i = 0; ignore[i]; i++) {
		struct stat st;
		if (fstatat(dfd, ignore[i], &st, AT_SYMLINK_NOFOLLOW) != 0) {
			if (errno != ENOENT)
				return -1;
		} else if ((st.st_mode & S_IFMT) != (i == 0 ? S_IFDIR : S_IFREG)) {
			return 0;
		}
	}
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int empty = dir_is_empty(fd, ignore);
	close(fd);
	return empty;
}

/* Count the complete files at the start of an unfinished leaf (a halted --until-full fill), given
 * in increasing order, each at most once. */
static void record_partial_leaf(void *ctx, uint64_t leaf)
{
	struct manifest *m = ((void **)ctx)[0];
	struct fill *f = ((void **)ctx)[1];
	if (f->last_partial == leaf + 1)
		return;
	f->last_partial = leaf + 1;
	char path[1024];
	size_t len = layout_dir_path(&f->lay, f->lay.depth, leaf, path);
	uint64_t first = leaf * f->lay.fanout, n = layout_leaf_files(&f->lay, leaf), count = 0;
	int dfd = dir_open_at(f->dirfd, path, len);
	if (dfd >= 0) {
		for (; count < n; count++) {
			char name[32];
			struct stat st;
			layout_file_name(first + count, name);
			if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
			    (uint64_t)st.st_size != layout_file_size(&f->lay, first + count))
				break;
		}
		/* Files after the first gap are not part of the fill: remove those fill made (regular
		 * files of one link), never an entry someone else put there. */
		for (uint64_t s = count; s < n; s++) {
			char name[32];
			layout_file_name(first + s, name);
			fill_remove_made(dfd, name, NULL);
		}
		close(dfd);
	}
	m->partial = xrealloc(m->partial, (m->npartial + 1) * sizeof(*m->partial));
	m->partial[m->npartial++] = (struct partial_leaf){leaf, count};
}

/* An unfinished unit: its leaf is partial. */
static void record_partial(void *ctx, uint64_t unit)
{
	struct fill *f = ((void **)ctx)[1];
	record_partial_leaf(ctx, fill_unit_of(f, unit) / f->parts);
}

/* What a unit is, for messages: a leaf directory, or in a small fill part of one. */
static const char *unit_word(const struct fill *f) { return f->parts > 1 ? "directory parts" : "directories"; }

/*
 * The files of the finished units (*files), how many of them the job made over all its runs
 * (*created: the tally, less the files of this run's re-check, counted when first made) and how
 * many were there before it (*there); *made: the files the job made, in unfinished units too (0
 * when not known exactly). A unit a killed run left unfinished is redone, finding the files that
 * run made: the snapshot's counts would call them already there. With the tally lost, the
 * snapshot's counts, and *exact false. After a run across ranks, on rank 0: the job's.
 */
void fill_totals(const struct fill *f, uint64_t *files, uint64_t *created, uint64_t *there, bool *exact,
			uint64_t *made)
{
	if (f->gathered) {
		*files = f->g_files;
		*created = f->g_created;
		*there = f->g_there;
		*exact = f->g_exact;
		*made = f->g_made;
		return;
	}
	*files = f->created + f->existing;
	*created = f->created;
	*exact = !f->tally || f->tally_exact;
	*made = 0;
	if (f->tally && f->tally_exact) {
		uint64_t all = tally_total(f->tally, T_CREATED);
		*made = all > f->remade ? all - f->remade : 0;
		*created = *made < *files ? *made : *files;
	}
	*there = *files - *created;
}

/* The errors of the run (the job's, after a run across ranks). */
static uint64_t fill_errors(const struct fill *f) { return f->gathered ? f->g_errors : pool_errors(f->pool); }

static void summary(struct fill *f, FILE *out, double el, const char *status)
{
	char a[32], b[32], c[32], d[32], e[32], g[32], h[32];
	uint64_t files, created, there, made, errors = fill_errors(f);
	bool exact;
	fill_totals(f, &files, &created, &there, &exact, &made);
	unsigned runs = pool_sessions(f->pool);
	fprintf(out, "fill %s: %s %s (%s created, %s already there%s), %s written; %s %s; %.2f s, %s files/s, %s/s\n",
		status, fmt_count(a, files), plural(files, "file", "files"), fmt_count(b, created), fmt_count(c, there),
		!exact ? "; at least: an earlier run's count of what it made was lost"
		: runs > 1 ? "; whole job"
			   : "",
		fmt_bytes(d, f->bytes), fmt_count(e, errors), plural(errors, "error", "errors"), el,
		fmt_count(g, el > 0 ? (uint64_t)(created / el) : 0), fmt_bytes(h, el > 0 ? (uint64_t)(f->bytes / el) : 0));
	if (!strcmp(status, "stopped") && made > created)
		fprintf(out, "  and %s %s made in directories not finished yet: a resume counts them\n",
			fmt_count(a, made - created), plural(made - created, "file", "files"));
	for (int i = 0; i < OP_N; i++)
		if (f->h[i].count)
			fprintf(out, "  %-6s p50 %.1f us, p90 %.1f us, p99 %.1f us, p99.9 %.1f us, max %.1f us\n",
				op_names[i], hist_quantile(&f->h[i], 0.5) / 1e3, hist_quantile(&f->h[i], 0.9) / 1e3,
				hist_quantile(&f->h[i], 0.99) / 1e3, hist_quantile(&f->h[i], 0.999) / 1e3,
				f->h[i].max / 1e3);
	if (f->rechecked)
		fprintf(out, "  re-checked the last file of the %s %s done before this run: %s found short, %s %s made again\n",
			fmt_count(a, f->rechecked), unit_word(f), fmt_count(b, f->short_units), fmt_count(c, f->remade),
			plural(f->remade, "file", "files"));
	if (f->skipped)
		fprintf(out, "  %s %s not made: entries fill did not make are in their way (see above); remove them and "
			     "run the same command again\n",
			fmt_count(a, f->skipped), plural(f->skipped, "file", "files"));
}

static void summary_json(struct fill *f, struct sbuf *b, const char *status, double el, int threads)
{
	struct json j;
	json_document(&j, b, "fill");
	json_bytes(&j, "dir", f->dir, strlen(f->dir));
	json_str(&j, "status", status);
	json_u64(&j, "files_requested", f->lay.files);
	uint64_t files, created, there, made;
	bool exact;
	fill_totals(f, &files, &created, &there, &exact, &made);
	json_u64(&j, "files", files);
	json_u64(&j, "created", created);
	json_u64(&j, "already_there", there);
	json_bool(&j, "counts_exact", exact);
	json_u64(&j, "not_made", f->skipped);
	json_u64(&j, "rechecked_dirs", f->rechecked);
	json_u64(&j, "remade", f->remade);
	json_u64(&j, "bytes", f->bytes);
	json_u64(&j, "fanout", f->lay.fanout);
	json_u64(&j, "size_min", f->lay.size_min);
	json_u64(&j, "size_max", f->lay.size_max);
	json_u64(&j, "seed", f->lay.seed);
	json_str(&j, "sync", f->sync == SYNC_FILE ? "file" : f->sync == SYNC_END ? "end" : "none");
	json_u64(&j, "threads", threads);
	json_u64(&j, "leaf_parts", f->parts); /* units per leaf: 1, every worker owns whole directories */
	json_u64(&j, "sessions", pool_sessions(f->pool));
	json_u64(&j, "errors", fill_errors(f));
	if (f->ranks > 1)
		json_u64(&j, "ranks", (uint64_t)f->ranks);
	json_double(&j, "elapsed_s", el);
	json_double(&j, "files_per_s", el > 0 ? f->created / el : 0);
	json_double(&j, "bytes_per_s", el > 0 ? f->bytes / el : 0);
	json_open(&j, "latency", '{');
	for (int i = 0; i < OP_N; i++)
		hist_json(&j, op_names[i], &f->h[i]);
	json_close(&j, '}');
	timeline_json(&j, "timeline", &f->tl);
	json_close(&j, '}');
}

/* Say why the fill stops on the error halt (when: "after N files"...), for job_end. */
static void stop_reason(struct fill *f, int halt, const char *when)
{
	if (out_of_room(halt)) {
		bool inodes = !strcmp(full_resource(f->dirfd), "inodes");
		warnx_("%s is out of %s (%s) %s: free some, then run the same command to complete the fill", f->dir,
		       inodes ? "inodes" : "space", strerror(halt), when);
		f->job.stop_reason = inodes ? "out of inodes" : "out of space";
	} else {
		f->job.stop_reason = "the tree cannot be made (see above)";
	}
}

/*
 * DIR holds this fill, complete per its manifest m, and there is no state: re-check it (recheck_run)
 * rather than take the manifest's word, make again the files lost since, and say which it did.
 * When files cannot be made again, the manifest is rewritten to say incomplete, so that the next
 * run makes every file the tree lacks.
 */
int fill_again(struct fill *f, struct manifest *m, const struct job_opts *jo, int threads)
{
	FILE *out = job_json_stdout(jo) ? stderr : stdout;
	f->claims = m;
	struct recheck r = {.f = f, .units = f->lay.leaves * f->parts};
	if (recheck_run(&r, threads, jo) == RUN_STOPPED)
		return job_end(&f->job, RUN_STOPPED, 0);
	uint64_t have = manifest_file_count(m, &f->lay) - f->skipped;
	const char *status = "complete";
	if (f->recheck_halt || f->skipped) {
		m->complete = false;
		manifest_write(f->dirfd, f->dir, m);
		status = f->recheck_halt ? "stopped" : "incomplete";
	}
	if (f->recheck_halt)
		stop_reason(f, f->recheck_halt, "while making again files lost since the fill was complete");
	else if (f->skipped)
		warnx_("%s: %llu files lost since the fill was complete cannot be made again: entries fill did not make "
		       "are in their way (see above); its manifest now says incomplete",
		       f->dir, (unsigned long long)f->skipped);
	else if (f->short_units)
		fprintf(out, "fill: %s holds this fill, complete (%llu files): %llu files lost since, from %llu %s, made again\n",
			f->dir, (unsigned long long)have, (unsigned long long)f->remade, (unsigned long long)f->short_units,
			unit_word(f));
	else
		fprintf(out, "fill: %s already holds this fill, complete (%llu files; the last file of each of its %llu %s "
			     "is there, `myriad verify` checks every file): nothing to do\n",
			f->dir, (unsigned long long)have, (unsigned long long)f->rechecked, unit_word(f));
	if (jo->json) {
		struct sbuf doc = {0};
		struct json j;
		json_document(&j, &doc, "fill");
		json_bytes(&j, "dir", f->dir, strlen(f->dir));
		json_str(&j, "status", status);
		json_u64(&j, "files_requested", f->lay.files);
		json_u64(&j, "files", have);
		json_u64(&j, "created", f->remade);
		json_u64(&j, "already_there", have - f->remade);
		json_u64(&j, "not_made", f->skipped);
		json_u64(&j, "rechecked_dirs", f->rechecked);
		json_u64(&j, "remade", f->remade);
		json_u64(&j, "errors", f->job.errlog.count);
		json_close(&j, '}');
		write_json_file(jo->json, &doc);
		sbuf_free(&doc);
	}
	return job_end(&f->job, f->recheck_halt ? RUN_STOPPED : RUN_DONE, f->job.errlog.count + (f->skipped != 0));
}

struct fill_opts {
	struct job_opts jo; /* with --rate */
	uint64_t files, fanout, smin, smax, seed;
	enum sync_mode sync;
	bool until_full;
	const char *dir;
};

enum { OPT_FANOUT = OPT_CMD_BASE, OPT_SYNC, OPT_UNTIL_FULL, OPT_SEED };

static int fill_parse(int argc, char **argv, void *opts)
{
	static const struct option longopts[] = {
	    JOB_LONG_OPTIONS,
	    {"files", required_argument, 0, 'n'},
	    {"size", required_argument, 0, 's'},
	    {"fanout", required_argument, 0, OPT_FANOUT},
	    {"sync", required_argument, 0, OPT_SYNC},
	    {"until-full", no_argument, 0, OPT_UNTIL_FULL},
	    {"seed", required_argument, 0, OPT_SEED},
	    JOB_RATE_OPTION,
	    {0, 0, 0, 0},
	};
	struct fill_opts *o = opts;
	job_opts_init(&o->jo);
	o->jo.rate_unit = "files";
	o->fanout = 1000;
	bool have_files = false;
	int opt, rc;
	while ((opt = job_getopt(&o->jo, argc, argv, "j:n:s:", longopts, fill_help, &rc))) {
		switch (opt) {
		case 'n':
			if (!parse_count(optarg, &o->files) || o->files > 1000000000000000ull)
				return usage_error("--files: '%s' is not a count from 0 to 10^15 (e.g. 1M)", optarg);
			have_files = true;
			break;
		case 's':
			/* 2^63-1: the largest file a filesystem can hold (off_t). */
			if (!parse_size_range(optarg, &o->smin, &o->smax) || o->smax > INT64_MAX)
				return usage_error("--size: '%s' is not a size from 0 to 2^63-1 (the largest file; e.g. 4k) "
						   "or a range LO-HI with LO <= HI (e.g. 1k-64k)",
						   optarg);
			break;
		case OPT_FANOUT:
			if (!parse_count(optarg, &o->fanout) || o->fanout < 2 || o->fanout > 10000000)
				return usage_error("--fanout: '%s' is not a number from 2 to 10M", optarg);
			break;
		case OPT_SYNC:
			if (!strcmp(optarg, "none"))
				o->sync = SYNC_NONE;
			else if (!strcmp(optarg, "file"))
				o->sync = SYNC_FILE;
			else if (!strcmp(optarg, "end"))
				o->sync = SYNC_END;
			else
				return usage_error("--sync: '%s' is not none, file or end", optarg);
			break;
		case OPT_UNTIL_FULL: o->until_full = true; break;
		case OPT_SEED:
			if (!parse_count(optarg, &o->seed))
				return usage_error("--seed: '%s' is not a number from 0 to 2^64-1", optarg);
			break;
		default: return usage_hint();
		}
	}
	if (rc != OPTS_RUN)
		return rc;
	if (!have_files)
		return usage_error("--files N is required");
	if (optind + 1 != argc)
		return usage_error(optind == argc ? "missing operand: the directory to fill" : "one directory only");
	o->dir = argv[optind];
	if (job_check_named(argv + optind, 1))
		return EXIT_USAGE;
	struct layout lay;
	if (!layout_init(&lay, o->files, o->fanout, o->smin, o->smax, o->seed))
		return usage_error("--files %llu --fanout %llu: the tree would be deeper than %d levels: raise --fanout",
				   (unsigned long long)o->files, (unsigned long long)o->fanout, LAYOUT_DEPTH_MAX);
	return OPTS_RUN;
}

static void fill_opts_free(void *opts)
{
	struct fill_opts *o = opts;
	job_opts_free(&o->jo);
}

/*
 * Make and open DIR (f->dirfd) and read its manifest into m: *mr as manifest_read returns. DIR must
 * be empty or hold this very fill. 0, or EXIT_USAGE after saying why.
 */
static int open_dir(struct fill *f, const struct fill_opts *o, struct manifest *m, int *mr)
{
	if (mkdir(f->dir, 0755) != 0 && errno != EEXIST) {
		warnx_("%s: mkdir: %s", f->dir, strerror(errno));
		return EXIT_USAGE;
	}
	f->dirfd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (f->dirfd < 0) {
		warnx_("%s: open: %s", f->dir, strerror(errno));
		return EXIT_USAGE;
	}
	*mr = manifest_read(f->dirfd, f->dir, m);
	if (*mr < 0)
		return EXIT_USAGE;
	if (*mr > 0 && (m->files != o->files || m->fanout != o->fanout || m->size_min != o->smin ||
			m->size_max != o->smax || m->seed != o->seed)) {
		warnx_("%s holds a fill with other parameters (--files %llu --fanout %llu --size %llu-%llu --seed %llu): "
		       "refusing to touch it",
		       f->dir, (unsigned long long)m->files, (unsigned long long)m->fanout, (unsigned long long)m->size_min,
		       (unsigned long long)m->size_max, (unsigned long long)m->seed);
		return EXIT_USAGE;
	}
	if (*mr == 0 && fill_dir_is_empty(f->dirfd) != 1) {
		warnx_("%s is not empty and holds no fill manifest: refusing to fill it", f->dir);
		return EXIT_USAGE;
	}
	return 0;
}

static void fill_identity(struct sbuf *id, const struct fill_opts *o)
{
	job_identity(id, "fill");
	identity_add_path(id, o->dir);
	ser_u64(id, o->files);
	ser_u64(id, o->fanout);
	ser_u64(id, o->smin);
	ser_u64(id, o->smax);
	ser_u64(id, o->seed);
	ser_u64(id, o->until_full);
}

/*
 * After the run: a full filesystem with --until-full ends the fill where it is, recording in nm
 * exactly which files exist; another halt stops it with state saved; a fill done writes its manifest
 * (complete unless files were left out). Returns the fill's status for the summary; *res becomes
 * RUN_STOPPED on a halt. Across ranks (where --until-full is refused) it gathers the job's counts
 * to rank 0 (fill_ranks_gather), which alone writes the manifest; a halt on any rank stops the job, whose
 * snapshot is then its last round's (the units made since are made again on resume, finding their
 * files there, and the ranks' tallies count them once).
 */
static const char *fill_conclude(struct fill *f, struct manifest *nm, const struct run_hooks *hooks,
				   enum run_result *res)
{
	int halt = fill_job_max(pool_halted(f->pool));
	const char *status = "complete";
	if (*res == RUN_DONE && halt && f->until_full && out_of_room(halt)) {
		/* Full: record exactly which files exist; the fill is complete as far as it could go. */
		void *ctx[2] = {nm, f};
		uint64_t next = pool_next_unit(f->pool);
		nm->claimed = (next + f->parts - 1) / f->parts;
		pool_unfinished(f->pool, record_partial, ctx);
		if (next % f->parts) /* a leaf whose later parts were never started */
			record_partial_leaf(ctx, next / f->parts);
		/* The units' counts miss the files of unfinished units and include those removed after a
		 * gap in a partial leaf: count what the manifest says exists. */
		uint64_t have = manifest_file_count(nm, &f->lay);
		f->created = have > f->existing ? have - f->existing : 0;
		printf("fill: %s is out of %s: stopped as asked (--until-full)\n", f->dir, full_resource(f->dirfd));
		status = "full";
		halt = 0;
	} else if (*res == RUN_DONE && halt) {
		/* Out of room, or the tree cannot be made: keep the state, stop (exit 3). */
		if (!f->js) /* one process saves its state now; a job of ranks keeps its last round's */
			run_checkpoint(hooks, f->job.ckpt, true);
		*res = RUN_STOPPED;
		status = "stopped";
	}
	if (*res == RUN_DONE && f->sync == SYNC_END && syncfs(f->dirfd) != 0)
		warnx_("%s: syncfs: %s", f->dir, strerror(errno));
	fill_ranks_gather(f);
	if (f->rank > 0)
		return status;
	if (halt) {
		char when[64];
		snprintf(when, sizeof(when), "after %llu files", (unsigned long long)(f->created + f->existing));
		stop_reason(f, halt, when);
	}
	if (*res == RUN_DONE) {
		/* Complete only when no file was left out: a manifest never claims what is not there. */
		nm->complete = !f->skipped;
		if (f->skipped)
			status = "incomplete";
		if (manifest_write(f->dirfd, f->dir, nm) != 0)
			f->job.errlog.count++; /* reported; the fill itself is complete: exit 1 */
	} else if (strcmp(status, "stopped")) {
		status = "stopped";
	}
	return status;
}

/* Run the fill over its pool (f->pool, made from snap): first the re-check of the units a resumed
 * fill's snapshot counts done, then the fill; then its summary. The exit code. */
static int fill_execute(struct fill *f, const struct fill_opts *o, struct manifest *nm, const struct sbuf *snap,
			int threads)
{
	int stopped = 0, halt = 0;
	fill_ranks_start(f);
	if (snap) {
		/* The units the snapshot counts done: still so? */
		struct recheck r = {.f = f, .units = pool_next_unit(f->pool)};
		pool_unfinished(f->pool, collect_undone, &r);
		stopped = recheck_run(&r, threads, &o->jo) == RUN_STOPPED;
		halt = stopped ? 0 : f->recheck_halt;
	}
	fill_ranks_rechecked(f, &stopped, &halt);
	if (stopped)
		return fill_job_max(job_end(&f->job, RUN_STOPPED, 0));
	if (halt) {
		if (f->rank == 0)
			stop_reason(f, halt, "while making again files lost since the last snapshot");
		return fill_job_max(job_end(&f->job, RUN_STOPPED, 0));
	}
	struct run_hooks hooks = pool_run_hooks(f->pool, fill_progress, NULL);
	enum run_result res = fill_ranks_execute(f, &hooks);
	double el = pool_elapsed(f->pool);
	timeline_force(&f->tl, el, f->created + f->existing);
	const char *status = fill_conclude(f, nm, &hooks, &res);
	if (f->rank == 0) {
		summary(f, job_json_stdout(&o->jo) ? stderr : stdout, el, status);
		if (o->jo.json) {
			struct sbuf doc = {0};
			summary_json(f, &doc, status, el, threads);
			write_json_file(o->jo.json, &doc);
			sbuf_free(&doc);
		}
	}
	int rc = job_end(&f->job, res, fill_errors(f) + (f->skipped != 0)); /* files left out: exit 1 */
	if (res == RUN_DONE)
		pool_free(f->pool);
	return fill_job_max(rc);
}

/* The split of small leaves where that helps; a resumed fill's as the run that saved its snapshot
 * did (the split is not part of the job's identity: --sync and -j may change on resume); across
 * ranks, rank 0's (-j may differ by node). */
static uint64_t fill_split_of(const struct fill *f, const struct sbuf *snap, int threads)
{
	uint64_t parts = fill_parts(&f->lay, f->sync, threads);
	uint64_t saved_units;
	uint64_t resumed_parts = snap && pool_snapshot_units(snap, &saved_units)
				     ? fill_resumed_parts(&f->lay, saved_units, f->rank, f->ranks)
				     : 0;
	if (resumed_parts)
		parts = resumed_parts;
	return (uint64_t)fill_job_max(f->rank == 0 ? (int)parts : 0);
}

/* The fill begun (job_begin's rc, the manifest m read as open_dir says in mr, the job's snapshot
 * snap): a complete fill re-checked, or the pool made and run. The exit code. */
static int fill_start(struct fill *f, const struct fill_opts *o, struct manifest *m, int mr, int rc,
		      const struct sbuf *snap, int threads)
{
	if (snap && mr == 0 && f->rank == 0) {
		/* The tree this state was filling is gone (removed by hand): start afresh. */
		warnx_("%s holds no fill manifest, so its saved state (%s) is stale: starting afresh", f->dir,
		       ckpt_dir(f->job.ckpt));
		snap = NULL;
		f->job.resumed = false;
		if (errlog_open(&f->job.errlog, o->jo.errors, false, 0, 0) != 0)
			rc = EXIT_USAGE;
	}
	bool resumed = snap != NULL;
	bool again = mr > 0 && m->complete && !snap;
	if (!fill_ranks_snapshot(f, &rc, &snap, &resumed, &again)) {
		manifest_free(m);
		return rc;
	}
	f->parts = fill_split_of(f, snap, threads);
	if (again) {
		/* A complete fill, re-checked where it lies: on rank 0 alone (a look at each leaf). */
		rc = fill_ranks_again(f, m, &o->jo, threads);
		manifest_free(m);
		return rc;
	}
	manifest_free(m);
	struct manifest nm = {.files = o->files, .fanout = o->fanout, .size_min = o->smin, .size_max = o->smax,
			      .seed = o->seed, .layout_version = LAYOUT_VERSION, .claimed = f->lay.leaves};
	if (f->rank == 0 && mr == 0 && manifest_write(f->dirfd, f->dir, &nm) != 0)
		rc = EXIT_USAGE;

	/* Before any file is made: it settles what the earlier runs made. Slots for the re-check's
	 * workers and the fill's. Each rank counts in a tally of its own in the job's state directory. */
	char tdir[PATH_MAX] = "";
	fill_ranks_state_dir(f, tdir);
	f->tally = tally_open(*tdir ? tdir : NULL, (unsigned)f->rank,
			      threads + (threads > RECHECK_MIN_THREADS ? threads : RECHECK_MIN_THREADS), resumed,
			      fill_settle, f, &f->tally_exact);
	throttle_init(&f->throttle, o->jo.rate);
	f->throttled = o->jo.rate > 0;
	timeline_init(&f->tl, 0.5);
	struct pool_config cfg = {
	    .units = pool_rank_units(f->lay.leaves * f->parts, f->rank, f->ranks),
	    .threads = threads,
	    .visitor = {.ctx = f, .local_size = sizeof(struct local), .run = fill_unit, .commit = fill_commit,
			.local_free = fill_local_free, .save = fill_save, .load = fill_load},
	    .errlog = &f->job.errlog,
	    .snapshot_name = job_snapshot_name(&f->job),
	};
	f->pool = rc ? NULL : pool_new(&cfg, snap);
	if (!fill_ranks_ready(f, f->pool != NULL)) {
		manifest_free(&nm);
		return fill_job_max(rc ? rc : EXIT_USAGE);
	}
	rc = fill_execute(f, o, &nm, snap, threads);
	manifest_free(&nm);
	return rc;
}

static int fill_run(void *opts)
{
	struct fill_opts *o = opts;
	struct fill f;
	memset(&f, 0, sizeof(f));
	f.sync = o->sync;
	f.until_full = o->until_full;
	f.dir = o->dir;
	f.rank = 0;
	f.ranks = 1;
	layout_init(&f.lay, o->files, o->fanout, o->smin, o->smax, o->seed);
	struct manifest m;
	memset(&m, 0, sizeof(m));
	int mr = 0;
	int rc = fill_ranks_begin(&f, &o->jo);
	/* Rank 0 makes DIR and decides whether it may be filled (across ranks, the others then open it). */
	if (!rc && f.rank == 0)
		rc = open_dir(&f, o, &m, &mr);
	if (!fill_ranks_agree(&f, &rc)) {
		manifest_free(&m);
		return rc;
	}

	/* One per CPU; 32 per CPU with --sync file, where every file waits for the disk. */
	int threads = job_threads(&o->jo, f.sync == SYNC_FILE ? 32 : 1, 0, 0);
	struct sbuf id = {0};
	fill_identity(&id, o);
	fill_ranks_identity(&id);
	char *trees[] = {(char *)f.dir};
	if (!rc)
		rc = job_begin(&f.job, &o->jo, "fill", &id, trees, 1);
	sbuf_free(&id);
	return fill_start(&f, o, &m, mr, rc, rc ? NULL : job_snapshot(&f.job), threads);
}

const struct command cmd_fill = {"fill", "create N files in a deterministic tree, fast and resumably",
				 sizeof(struct fill_opts), fill_parse, fill_run, fill_opts_free};
