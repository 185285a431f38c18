/*
 * fill across the ranks of an MPI job (myriad-mpi only; fill_int.h declares the hooks, fill.c calls
 * them). The layout's units are split as verify's, unit u to rank u mod P (fill_unit_of), so no two
 * ranks ever create in one directory; rank 0 makes DIR and checks it may be filled, writes the
 * manifest before any rank starts and the final one after every rank is done; each rank counts in a
 * tally of its own in the job's state directory. docs/mpi.md says what the job promises.
 */
#include "cmd/fill/fill_int.h"

#include "engine/spread.h"
#include "job/jobspread.h"
#include "util/signals.h"

static struct job_spread js; /* one fill per process */

int fill_job_max(int v) { return spread_max(v); }

int fill_ranks_begin(struct fill *f, struct job_opts *jo)
{
	f->js = &js;
	int rc = job_spread_begin(f->js, jo, NULL, NULL, 0);
	f->rank = f->js->rank;
	f->ranks = f->js->ranks;
	if (!rc && f->ranks > 1 && f->until_full) {
		if (f->rank == 0)
			warnx_("--until-full runs in one process only (under mpirun: -np 1): a full filesystem would stop "
			       "each rank at another point of its share");
		rc = EXIT_USAGE;
	}
	return rc;
}

/* Rank 0 made DIR and decided whether it may be filled; then the others open it. */
bool fill_ranks_agree(struct fill *f, int *rc)
{
	if (!spread_all(!*rc)) {
		job_spread_ready(f->js, false); /* refused: the parts' names go */
		*rc = spread_max(*rc ? *rc : EXIT_USAGE);
		return false;
	}
	if (f->rank > 0 && (f->dirfd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		warnx_("rank %d: %s: open: %s", f->rank, f->dir, strerror(errno));
		*rc = EXIT_USAGE;
	}
	return true;
}

void fill_ranks_identity(struct sbuf *id) { ser_str(id, "mpi"); }

/* Every rank gets here: rank 0 hands each its part of the job's snapshot, and says whether the job
 * resumes (its ranks' tallies then fold their earlier runs') or re-checks a complete fill. */
bool fill_ranks_snapshot(struct fill *f, int *rc, const struct sbuf **snap, bool *resumed, bool *again)
{
	int shared = spread_share_snapshot(*rc == 0, *snap, job_snapshot_name(&f->job), &f->js->rank_snap);
	if (shared < 0) {
		job_spread_ready(f->js, false);
		*rc = spread_max(*rc ? *rc : EXIT_USAGE);
		return false;
	}
	*snap = shared > 0 ? &f->js->rank_snap : NULL;
	*resumed = spread_max(f->rank == 0 && *resumed);
	*again = spread_max(f->rank == 0 && *again);
	return true;
}

/* A look at each leaf: on rank 0 alone, the others asleep meanwhile. */
int fill_ranks_again(struct fill *f, struct manifest *m, const struct job_opts *jo, int threads)
{
	if (!job_spread_ready(f->js, true) || f->rank > 0) {
		spread_barrier();
		return spread_max(0);
	}
	int ranks = f->ranks;
	f->ranks = 1;
	int rc = fill_again(f, m, jo, threads);
	f->ranks = ranks;
	spread_barrier();
	return spread_max(rc);
}

void fill_ranks_state_dir(struct fill *f, char *dir) { job_spread_state_dir(&f->job, dir); }

bool fill_ranks_ready(struct fill *f, bool ok) { return job_spread_ready(f->js, ok); }

/* This rank's counts for the job's progress line: files done, created, errors. */
static void fill_count(void *ctx, uint64_t v[3])
{
	struct fill *f = ctx;
	pool_lock(f->pool);
	v[0] = f->created + f->existing;
	v[1] = f->created;
	pool_unlock(f->pool);
	v[2] = pool_errors(f->pool);
}

void fill_ranks_start(struct fill *f)
{
	f->js->sp = spread_new_pool(f->pool, fill_leaf_name, f->rank == 0 ? job_snapshot(&f->job) : NULL);
	spread_progress_source(f->js->sp, fill_count, f);
	job_spread_outputs(f->js, &f->job, NULL);
}

/* Every rank re-checked its own units; the job goes on only if every one could. A rank stopped by a
 * signal of its own says so; rank 0 speaks for the job. */
void fill_ranks_rechecked(struct fill *f, int *stopped, int *halt)
{
	int mine = *stopped;
	*stopped = spread_max(*stopped);
	*halt = spread_max(*halt);
	f->job.quiet = f->rank > 0;
	if (*stopped && !mine)
		f->job.stop_reason = "another rank stopped (its message says why)";
	else if (*stopped && f->rank > 0 && sig_stop_signal())
		warnx_("rank %d: stopped by signal %d", f->rank, sig_stop_signal());
	if (*stopped || *halt)
		fill_ranks_gather(f);
}

enum run_result fill_ranks_execute(struct fill *f, const struct run_hooks *hooks)
{
	return job_spread_execute(f->js, &f->job, hooks);
}

void fill_ranks_progress(struct fill *f, uint64_t v[3], struct sbuf *stuck)
{
	if (f->js->sp) /* the job's counts, and the other ranks' workers stuck in the kernel */
		spread_progress_add(f->js->sp, v, stuck);
}

/*
 * After a run across ranks (collective, every rank once): the job's counts, latencies, timeline and
 * failures on rank 0, where the summary reads them (fill_totals, fill_errors); the other ranks'
 * --errors parts appended to rank 0's. A rank but 0 closes its tally first, so that rank 0 may
 * remove the state directory once it has the sums.
 */
void fill_ranks_gather(struct fill *f)
{
	uint64_t files, created, there, made;
	bool exact;
	fill_totals(f, &files, &created, &there, &exact, &made);
	if (f->rank > 0 && f->tally) {
		tally_close(f->tally);
		f->tally = NULL;
	}
	enum { N = 14 };
	uint64_t v[N] = {files,	     created,	 there,	      made,	      !exact,	      pool_errors(f->pool),
			 f->job.errlog.count, f->created, f->existing, f->bytes, f->skipped, f->rechecked, f->short_units,
			 f->remade};
	spread_sum(v, N);
	job_spread_hists(f->h, OP_N);
	job_spread_timeline(&f->tl, v[7] + v[8]);
	job_spread_end(f->js);
	if (f->rank == 0) {
		f->gathered = true;
		f->g_files = v[0];
		f->g_created = v[1];
		f->g_there = v[2];
		f->g_made = v[3];
		f->g_exact = v[4] == 0;
		f->g_errors = v[5];
		f->job.errlog.count = v[6];
		f->created = v[7];
		f->existing = v[8];
		f->bytes = v[9];
		f->skipped = v[10];
		f->rechecked = v[11];
		f->short_units = v[12];
		f->remade = v[13];
	}
}
