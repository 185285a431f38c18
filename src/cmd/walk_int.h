/*
 * walk's private model, shared by its files: walk.c (the command: options, the visitor, the run,
 * summaries) and walk_mpi.c (the same walk shared by the ranks of an MPI job).
 */
#ifndef MYRIAD_WALK_INT_H
#define MYRIAD_WALK_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "job/cmdstate.h"
#include "job/job.h"
#include "engine/walk.h"
#include "report/outfile.h"
#include "util/sbuf.h"

/* T_U: entries whose type is unknown because their stat failed (reported as errors, listed as
 * find lists them, matched by no --type). */
enum { T_F, T_D, T_L, T_P, T_S, T_B, T_C, T_U, T_N = WALK_TYPES };

struct totals {
	uint64_t by_type[T_N];
	uint64_t apparent, allocated;
};

struct walk_cmd {
	unsigned type_mask; /* bits of T_* to count and print */
	int print;          /* 0: none, 1: newline-terminated, 2: NUL-terminated */
	bool stat;
	struct outfile out;
	const char *output;
	uint64_t resume_output_len; /* from the snapshot */
	struct totals t;
	struct walk *walk;
	struct job job;
	/* Under MPI (myriad-mpi): this rank, how many (0: one process), and on rank 0 after the run,
	 * every rank's entries and the job's workers. */
	int rank, ranks;
	uint64_t *rank_entries;
	int threads_total;
	struct spread *sp;     /* the job (NULL: one process) */
	struct job_spread *js; /* the job across ranks (walk_mpi.c); NULL in one process */
};

/* ---- walk.c ---- */

/* Entries of every type in t. */
uint64_t total_entries(const struct totals *t);
/* This process's entries, directories and errors so far. */
void walk_count(void *ctx, uint64_t v[3]);

/* ---- walk_mpi.c: walk across the ranks of an MPI job (myriad-mpi) ----
 * walk.c takes the same steps in myriad and myriad-mpi; where a job of ranks does more (share the
 * snapshot and the walk, gather the totals and the outputs' parts to rank 0: docs/mpi.md), it calls
 * one of these. walk_mpi.c defines them for myriad-mpi; myriad has the one-process versions below. */
#ifdef MYRIAD_MPI
/* The job's largest v (the same on every rank): the exit code. */
int walk_job_max(int v);
/* This rank and the job's size; a rank but 0 writes its paths (*output, when c prints) and --errors
 * lines into parts of its own. 0 or an exit code. */
int walk_ranks_begin(struct walk_cmd *c, struct job_opts *jo, const char **output);
/* A job of ranks is another job than one process's: said in its identity. */
void walk_ranks_identity(struct sbuf *id);
/* After job_begin (rc): this rank's part of the job's snapshot (*snap, NULL for a fresh start).
 * rc, or an exit code when the snapshot cannot be used. */
int walk_ranks_snapshot(struct walk_cmd *c, int rc, const struct sbuf **snap);
/* The walk made (ok) on every rank? Otherwise none starts. */
bool walk_ranks_ready(struct walk_cmd *c, bool ok);
/* Run the walk (hooks) as job_execute does, shared by the job; then its totals on rank 0. */
enum run_result walk_ranks_execute(struct walk_cmd *c, const struct run_hooks *hooks);
/* The progress line with this rank's counts v: the job's line instead (true), or one process's. */
bool walk_ranks_progress(struct walk_cmd *c, struct sbuf *line, uint64_t v[3]);
#else
static inline int walk_job_max(int v) { return v; }
static inline int walk_ranks_begin(struct walk_cmd *c, struct job_opts *jo, const char **output) { return 0; }
static inline void walk_ranks_identity(struct sbuf *id) {}
static inline int walk_ranks_snapshot(struct walk_cmd *c, int rc, const struct sbuf **snap)
{
	*snap = rc ? NULL : job_snapshot(&c->job);
	return rc;
}
static inline bool walk_ranks_ready(struct walk_cmd *c, bool ok) { return ok; }
static inline enum run_result walk_ranks_execute(struct walk_cmd *c, const struct run_hooks *hooks)
{
	return job_execute(&c->job, hooks);
}
static inline bool walk_ranks_progress(struct walk_cmd *c, struct sbuf *line, uint64_t v[3]) { return false; }
#endif

#endif
