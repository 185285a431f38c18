/*
 * walk across the ranks of an MPI job (myriad-mpi only; walk_int.h declares the hooks, walk.c calls
 * them). Every rank walks its share of one shared walk (engine/spread, job/jobspread). Rank 0 keeps
 * the job's state; a rank but 0 writes its paths and --errors lines into parts of its own, sent to
 * rank 0 at each round and at the end; rank 0's progress line shows the job's.
 */
#include "cmd/walk_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state/ser.h"
#include "engine/spread.h"
#include "job/jobspread.h"
#include "util/util.h"

static struct job_spread js; /* one walk per process */

int walk_job_max(int v) { return spread_max(v); }

int walk_ranks_begin(struct walk_cmd *c, struct job_opts *jo, const char **output)
{
	c->js = &js;
	bool want = c->print;
	int rc = job_spread_begin(c->js, jo, output, &want, 1);
	c->rank = c->js->rank;
	c->ranks = c->js->ranks;
	return rc;
}

/* A job of ranks is another job than one process's: its snapshot holds every rank's part. */
void walk_ranks_identity(struct sbuf *id) { ser_str(id, "mpi"); }

/* Every rank gets here: rank 0 hands each its part of the job's snapshot. */
int walk_ranks_snapshot(struct walk_cmd *c, int rc, const struct sbuf **snap)
{
	return job_spread_snapshot(c->js, &c->job, rc, snap);
}

bool walk_ranks_ready(struct walk_cmd *c, bool ok) { return job_spread_ready(c->js, ok); }

/* After the run: the job's totals, failures and per-rank entries on rank 0, the parts appended. */
static void walk_spread_gather(struct walk_cmd *c, struct spread *sp)
{
	enum { N = T_N + 4 };
	uint64_t v[N], mine = total_entries(&c->t);
	memcpy(v, c->t.by_type, sizeof(c->t.by_type));
	v[T_N] = c->t.apparent;
	v[T_N + 1] = c->t.allocated;
	v[T_N + 2] = c->job.errlog.count;
	v[T_N + 3] = (uint64_t)walk_threads(c->walk);
	spread_sum(v, N);
	c->rank_entries = xcalloc((size_t)c->ranks, sizeof(*c->rank_entries));
	spread_gather(mine, c->rank_entries);
	uint64_t recv, given, req;
	spread_stats(sp, &recv, &given, &req);
	if (getenv("MYRIAD_MPI_DEBUG"))
		fprintf(stderr, "myriad walk: rank %d: %" PRIu64 " entries, %" PRIu64 " directories received, %" PRIu64
			" given, %" PRIu64 " requests\n", c->rank, mine, recv, given, req);
	job_spread_end(c->js);
	if (c->rank == 0) {
		memcpy(c->t.by_type, v, sizeof(c->t.by_type));
		c->t.apparent = v[T_N];
		c->t.allocated = v[T_N + 1];
		c->job.errlog.count = v[T_N + 2]; /* the job's failures: the --errors file now holds them all */
		c->threads_total = (int)v[T_N + 3];
	}
}

enum run_result walk_ranks_execute(struct walk_cmd *c, const struct run_hooks *hooks)
{
	c->sp = c->js->sp = spread_new_walk(c->walk, c->rank == 0 ? job_snapshot(&c->job) : NULL);
	spread_progress_source(c->sp, walk_count, c);
	struct outfile *outs[] = {&c->out};
	job_spread_outputs(c->js, &c->job, outs);
	enum run_result res = job_spread_execute(c->js, &c->job, hooks);
	walk_spread_gather(c, c->sp);
	c->sp = NULL;
	return res;
}

/* Under mpirun: the job's counts, and the other ranks' workers stuck in the kernel. */
bool walk_ranks_progress(struct walk_cmd *c, struct sbuf *line, uint64_t v[3])
{
	if (!c->sp)
		return false;
	struct sbuf stuck = {0}, after = {0};
	spread_progress_add(c->sp, v, &stuck);
	sbuf_printf(&after, ", %d ranks", c->ranks);
	job_walk_progress_errors(line, c->walk, "walk", v[0], v[1], v[2], after.data);
	sbuf_add(line, stuck.data, stuck.len);
	sbuf_free(&stuck);
	sbuf_free(&after);
	return true;
}
