/*
 * verify's private model, shared by its files: verify.c (the command: options, the check of each
 * directory, the run, summaries) and verify_mpi.c (the same check across the ranks of an MPI job).
 */
#ifndef MYRIAD_VERIFY_INT_H
#define MYRIAD_VERIFY_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "job/cmdstate.h"
#include "job/job.h"
#include "engine/pool.h"
#include "state/layout.h"
#include "state/manifest.h"
#include "util/sbuf.h"

enum { P_MISSING, P_TYPE, P_SIZE, P_CORRUPT, P_EXTRA, P_N = VERIFY_PROBLEMS };

struct verify {
	struct layout lay;
	struct manifest m;
	const char *dir;
	int dirfd;
	bool quick;
	bool fs_root; /* DIR is a mount point: lost+found is the filesystem's */
	uint64_t checked, bytes, expected;
	uint64_t ahead; /* files of this run whose contents came from the read-ahead */
	bool prefetch;  /* read a leaf's files ahead, a window at a time (check_leaf) */
	uint64_t problems[P_N];
	struct pool *pool;
	struct job job;
	/* Under mpirun (myriad-mpi): this rank checks the layout's units rank, rank + ranks, ...; its
	 * pool's unit i is the layout's unit i * ranks + rank. One process: rank 0 of 1. */
	int rank, ranks;
	struct job_spread *js; /* the job across ranks (verify_mpi.c); NULL in one process */
};

/* ---- verify.c ---- */

/* This process's files checked, findings and errors (findings included) so far. */
void verify_count(void *ctx, uint64_t n[3]);
/* The directory of this rank's pool unit u, for the progress line's stuck workers. */
void verify_unit_name(void *ctx, uint64_t u, struct sbuf *out);

/* ---- verify_mpi.c: verify across the ranks of an MPI job (myriad-mpi) ----
 * verify.c takes the same steps in myriad and myriad-mpi; where a job of ranks does more (share the
 * snapshot, spread the pool, gather the counts to rank 0: docs/mpi.md), it calls one of these.
 * verify_mpi.c defines them for myriad-mpi; myriad has the one-process versions below. */
#ifdef MYRIAD_MPI
/* The job's largest v (the same on every rank): the exit code. */
int verify_job_max(int v);
/* This rank and the job's size (every rank, whatever DIR gave). 0 or an exit code. */
int verify_ranks_begin(struct verify *v, struct job_opts *jo);
/* A job of ranks is another job than one process's: said in its identity. */
void verify_ranks_identity(struct sbuf *id);
/* After job_begin (rc): this rank's part of the job's snapshot (*snap, NULL for a fresh start).
 * rc, or an exit code when the snapshot cannot be used. */
int verify_ranks_snapshot(struct verify *v, int rc, const struct sbuf **snap);
/* The pool made (ok) on every rank? Otherwise none starts. */
bool verify_ranks_ready(struct verify *v, bool ok);
/* Run the pool (hooks) as job_execute does, across the job; then the job's counts on rank 0. */
enum run_result verify_ranks_execute(struct verify *v, const struct run_hooks *hooks);
/* The progress line's counts n and stuck workers: the job's. */
void verify_ranks_progress(struct verify *v, uint64_t n[3], struct sbuf *stuck);
#else
static inline int verify_job_max(int v) { return v; }
static inline int verify_ranks_begin(struct verify *v, struct job_opts *jo) { return 0; }
static inline void verify_ranks_identity(struct sbuf *id) {}
static inline int verify_ranks_snapshot(struct verify *v, int rc, const struct sbuf **snap)
{
	*snap = rc ? NULL : job_snapshot(&v->job);
	return rc;
}
static inline bool verify_ranks_ready(struct verify *v, bool ok) { return ok; }
static inline enum run_result verify_ranks_execute(struct verify *v, const struct run_hooks *hooks)
{
	return job_execute(&v->job, hooks);
}
static inline void verify_ranks_progress(struct verify *v, uint64_t n[3], struct sbuf *stuck) {}
#endif

#endif
