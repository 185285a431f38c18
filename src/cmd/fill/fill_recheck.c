/*
 * fill's re-check: before a resumed fill (or a re-run of a finished one) says it is complete, one
 * cheap look at each unit it counts done, and the short ones made again. See fill_int.h.
 */
#include "cmd/fill/fill_int.h"

void collect_undone(void *ctx, uint64_t unit)
{
	struct recheck *r = ctx;
	r->undone = xrealloc(r->undone, (r->nundone + 1) * sizeof(*r->undone));
	r->undone[r->nundone++] = unit;
}

static bool undone(const struct recheck *r, uint64_t unit)
{
	size_t lo = 0, hi = r->nundone;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->undone[mid] < unit)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->nundone && r->undone[lo] == unit;
}

/* Is file i of leaf still there as fill made it (a regular file of its size)? An entry in the way
 * — a link where the leaf or the file should be — was reported and counted when the unit was done,
 * and passes here; any other failure is left for the remaking to report. */
static bool last_file_there(const struct fill *f, uint64_t leaf, uint64_t i)
{
	char path[1024], name[32];
	size_t len = layout_dir_path(&f->lay, f->lay.depth, leaf, path);
	int dfd = dir_open_at(f->dirfd, path, len);
	if (dfd < 0)
		return errno == ENOTDIR || errno == ELOOP;
	layout_file_name(i, name);
	struct stat st;
	int r = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW);
	close(dfd);
	return r == 0 && (!S_ISREG(st.st_mode) || (uint64_t)st.st_size == layout_file_size(&f->lay, i));
}

static int recheck_unit(void *ctx, void *lp, uint64_t unit, struct errbatch *errs)
{
	struct recheck *r = ctx;
	struct fill *f = r->f;
	struct local *l = lp;
	uint64_t s0, s1, leaf = unit_files(f, unit, &s0, &s1);
	if (undone(r, unit) || s0 == s1)
		return 0;
	pool_progressed();
	l->rechecked++;
	if (last_file_there(f, leaf, leaf * f->lay.fanout + s1 - 1))
		return 0;
	l->short_units++;
	return fill_unit(f, lp, unit, errs);
}

/* Fold a re-check batch in: what it made again is counted apart (the files were counted when
 * their unit was first done). */
static void recheck_commit(void *ctx, void *lp)
{
	struct fill *f = ((struct recheck *)ctx)->f;
	struct local *l = lp;
	f->rechecked += l->rechecked;
	f->short_units += l->short_units;
	f->remade += l->created;
	f->bytes += l->bytes;
	f->skipped += l->skipped;
	for (int i = 0; i < OP_N; i++) {
		hist_merge(&f->h[i], &l->h[i]);
		memset(&l->h[i], 0, sizeof(l->h[i]));
	}
	l->created = l->existing = l->bytes = l->skipped = l->rechecked = l->short_units = 0;
}

static void recheck_save(void *ctx, struct sbuf *b) { (void)ctx, (void)b; } /* never saved: redone */

static void recheck_local_free(void *ctx, void *lp) { fill_local_free(((struct recheck *)ctx)->f, lp); }

static void recheck_progress(void *ctx, struct sbuf *line)
{
	struct recheck *r = ctx;
	double el = pool_elapsed(r->pool);
	uint64_t done = pool_units_done(r->pool);
	sbuf_adds(line, "fill: re-checking what was done before: ");
	progress_format(line, "directories", done, r->units, el, el > 0 ? done / el : 0, pool_errors(r->pool));
}


/* Run the re-check of r's units with the fill's workers (progress and signals as any run; no state:
 * a stopped re-check is done again). RUN_STOPPED on a signal; f->recheck_halt when remaking
 * stopped on an error. Frees r's list. */
enum run_result recheck_run(struct recheck *r, int threads, const struct job_opts *jo)
{
	struct fill *f = r->f;
	struct pool_config cfg = {
	    .units = r->units,
	    .threads = jo->threads || threads > RECHECK_MIN_THREADS ? threads : RECHECK_MIN_THREADS,
	    .visitor = {.ctx = r, .local_size = sizeof(struct local), .run = recheck_unit, .commit = recheck_commit,
			.local_free = recheck_local_free, .save = recheck_save},
	    .errlog = &f->job.errlog,
	};
	r->pool = pool_new(&cfg, NULL);
	struct run_hooks h = pool_run_hooks(r->pool, recheck_progress, NULL);
	h.start(h.ctx);
	struct run_opts ro = {.progress_s = jo->progress_s, .checkpoint_s = 1};
	enum run_result res = run_loop(&h, &ro);
	free(r->undone);
	if (res == RUN_STOPPED)
		return res; /* the workers are frozen; the process exits */
	f->recheck_halt = pool_halted(r->pool);
	pool_free(r->pool);
	return res;
}
