/*
 * verify across the ranks of an MPI job (myriad-mpi only; verify_int.h declares the hooks, verify.c
 * calls them). The fill's layout numbers its directories; rank r checks directories r, r + P, ...
 * (P ranks), each rank with its threads, as one process's pool of units; rank 0 keeps the job's
 * state, prints the summary and gathers the counts and the --errors parts. docs/mpi.md says more.
 */
#include "cmd/verify_int.h"

#include <string.h>

#include "state/ser.h"
#include "engine/spread.h"
#include "job/jobspread.h"

static struct job_spread js; /* one verify per process */

int verify_job_max(int v) { return spread_max(v); }

int verify_ranks_begin(struct verify *v, struct job_opts *jo)
{
	v->js = &js;
	int rc = job_spread_begin(v->js, jo, NULL, NULL, 0);
	v->rank = v->js->rank;
	v->ranks = v->js->ranks;
	return rc;
}

void verify_ranks_identity(struct sbuf *id) { ser_str(id, "mpi"); }

/* Every rank gets here: rank 0 hands each its part of the job's snapshot. */
int verify_ranks_snapshot(struct verify *v, int rc, const struct sbuf **snap)
{
	return job_spread_snapshot(v->js, &v->job, rc, snap);
}

bool verify_ranks_ready(struct verify *v, bool ok) { return job_spread_ready(v->js, ok); }

/* After the run: the job's counts and failures on rank 0 (the --errors file now holds them all),
 * the other ranks' parts appended. */
static void verify_gather(struct verify *v)
{
	enum { N = P_N + 4 };
	uint64_t n[N] = {v->checked, v->bytes, v->ahead, v->job.errlog.count};
	memcpy(n + 4, v->problems, sizeof(v->problems));
	spread_sum(n, N);
	job_spread_end(v->js);
	if (v->rank == 0) {
		v->checked = n[0];
		v->bytes = n[1];
		v->ahead = n[2];
		v->job.errlog.count = n[3];
		memcpy(v->problems, n + 4, sizeof(v->problems));
	}
}

enum run_result verify_ranks_execute(struct verify *v, const struct run_hooks *hooks)
{
	v->js->sp = spread_new_pool(v->pool, verify_unit_name, v->rank == 0 ? job_snapshot(&v->job) : NULL);
	spread_progress_source(v->js->sp, verify_count, v);
	job_spread_outputs(v->js, &v->job, NULL);
	enum run_result res = job_spread_execute(v->js, &v->job, hooks);
	verify_gather(v);
	return res;
}

void verify_ranks_progress(struct verify *v, uint64_t n[3], struct sbuf *stuck)
{
	if (v->js->sp) /* the job's counts, and the other ranks' workers stuck in the kernel */
		spread_progress_add(v->js->sp, n, stuck);
}
