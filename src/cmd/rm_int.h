/*
 * rm's private model, shared by its files: rm.c (the command: options, the operands checked, the
 * walk that removes, summaries) and rm_mpi.c (the same removal across the ranks of an MPI job).
 */
#ifndef MYRIAD_RM_INT_H
#define MYRIAD_RM_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "job/job.h"
#include "engine/walk.h"
#include "io/guard.h"
#include "report/hist.h"
#include "state/tally.h"
#include "util/throttle.h"

enum { T_FILES, T_DIRS }; /* the tally's counters */

struct rm {
	bool dry_run;
	uint64_t files, dirs;
	struct hist unlink_lat;
	struct timeline tl;
	struct walk *walk;
	struct job job;
	struct tally *tally; /* what every run of the job removed (dry run: none) */
	bool tally_exact;    /* false: an earlier run's tally was lost; counts are the snapshot's */
	int rank, ranks;     /* this rank of the job (0 of 1 in one process) */
	/* Across ranks, on rank 0 (see rm_mpi.c): what the other ranks' tallies say they removed, and
	 * the time and sessions of the unlink pass before the walk that removes the directories. */
	uint64_t base_files, base_dirs;
	bool base_exact;
	bool quiet_errors; /* the walk's failures are the unlink pass's: none is the job's */
	int threads;       /* the walk's workers (threads_for, once per run) */
	bool inode_order;  /* the walk visits each buffer in inode order (rm_config) */
	double base_s;
	uint64_t base_sessions;
	struct job_opts *jo;     /* the run's common options */
	struct rm_ranks *rk;     /* the job across ranks (rm_mpi.c); NULL in one process */
};

struct rm_opts; /* rm.c's */

/* ---- rm.c ---- */

/* The operands that are there (present[], *npresent; checked[]: what each was when checked) after
 * each passed the guard. *missing: the first operand that is gone. EXIT_OK, or EXIT_USAGE after
 * saying why. */
int rm_check_operands(const struct rm_opts *o, char **present, struct guard_operand *checked, size_t *npresent,
		      const char **missing);
/* Files and directories removed by the whole job so far. */
void rm_counts(struct rm *c, uint64_t *files, uint64_t *dirs);
/* The tally's settle hook: an entry a kill cut from its count is counted if it is gone. */
void rm_settle(void *ctx, unsigned counter, const char *rec, size_t len, uint64_t since, uint64_t *totals);
/* The progress line (a run_hooks progress callback). */
void rm_progress(void *ctx, struct sbuf *line);
/* The summary on stdout (stderr with --json -) and with --json. */
void rm_report(struct rm *c, const struct rm_opts *o, enum run_result res);
/* The walk of rm over roots: post-order, every directory removed once empty; at most rate entries
 * per second (0: no limit), with throttle. */
void rm_config(struct rm *c, const struct rm_opts *o, char **roots, size_t nroots, uint64_t rate,
	       struct throttle *throttle, struct walk_config *cfg);
/* The operand the walk found replaced since it was checked, or NULL. */
const char *rm_replaced_operand(struct walk *w, char **roots, size_t nroots, const struct guard_operand *checked);
/* Remove the operands roots with the job's walk, from its snapshot snap (NULL: afresh), at rate
 * entries per second. The exit code. */
int rm_walk(struct rm *c, const struct rm_opts *o, char **roots, size_t nroots, const struct guard_operand *checked,
	    const struct sbuf *snap, uint64_t rate);

/* ---- rm_mpi.c: rm across the ranks of an MPI job (myriad-mpi) ----
 * rm.c takes the same steps in myriad and myriad-mpi; where a job of ranks does more (check the
 * operands on every rank, the unlink pass shared by the ranks, then rank 0's: docs/mpi.md), it
 * calls one of these. rm_mpi.c defines them for myriad-mpi; myriad has the one-process versions
 * below. */
#ifdef MYRIAD_MPI
/* The operands checked (rm_check_operands) by every rank, rank 0 first, and seen alike by every
 * rank. false: refused, *rc the job's exit code. */
bool rm_ranks_check(struct rm *c, struct rm_opts *o, char **roots, struct guard_operand *checked, size_t *nroots,
		    const char **missing, int *rc);
/* A job of ranks is another job than one process's: said in its identity. */
void rm_ranks_identity(struct sbuf *id);
/* The walk's hooks (*hooks) with its snapshots wrapped as the directories pass's. */
void rm_ranks_pass2(struct rm *c, struct run_hooks *hooks);
/* The progress line's counts v and stuck workers: in the unlink pass, the job's. */
void rm_ranks_progress(struct rm *c, uint64_t v[3], struct sbuf *stuck);
/* The removal after job_begin (rc its result, snap rank 0's snapshot): the unlink pass across the
 * ranks, then rank 0's. The exit code, the same on every rank. */
int rm_ranks_run(struct rm *c, struct rm_opts *o, char **roots, size_t nroots, const struct guard_operand *checked,
		 const struct sbuf *snap, int rc, uint64_t rate);
#else
static inline bool rm_ranks_check(struct rm *c, struct rm_opts *o, char **roots, struct guard_operand *checked,
				  size_t *nroots, const char **missing, int *rc)
{
	*rc = rm_check_operands(o, roots, checked, nroots, missing);
	return *rc == EXIT_OK;
}
static inline void rm_ranks_identity(struct sbuf *id) {}
static inline void rm_ranks_pass2(struct rm *c, struct run_hooks *hooks) {}
static inline void rm_ranks_progress(struct rm *c, uint64_t v[3], struct sbuf *stuck) {}
static inline int rm_ranks_run(struct rm *c, struct rm_opts *o, char **roots, size_t nroots,
			       const struct guard_operand *checked, const struct sbuf *snap, int rc, uint64_t rate)
{
	return rc ? rc : rm_walk(c, o, roots, nroots, checked, snap, rate);
}
#endif

#endif
