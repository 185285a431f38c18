/*
 * fill's private model, shared by its files: fill.c (the command: options, runs, summaries),
 * fill_make.c (a unit's files made, counted, and what is in their way) and fill_recheck.c (the
 * cheap look a resumed or re-run fill takes at the units it counts done).
 */
#ifndef MYRIAD_FILL_INT_H
#define MYRIAD_FILL_INT_H

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

enum { OP_CREATE, OP_WRITE, OP_FSYNC, OP_CLOSE, OP_N = FILL_OPS };
static const char *const op_names[] = {"create", "write", "fsync", "close"};
enum sync_mode { SYNC_NONE, SYNC_FILE, SYNC_END };

struct local {
	uint64_t created, existing, bytes;
	uint64_t skipped; /* files not made: an entry fill did not make is in the way */
	uint64_t rechecked, short_units; /* the re-check: units looked at, found short */
	struct hist h[OP_N];
	char *buf;
	struct tally_slot *slot; /* this worker's count of the files the job made (claimed at its first) */
	bool claimed;
};

struct fill {
	struct layout lay;
	const char *dir;
	int dirfd;
	enum sync_mode sync;
	bool until_full;
	struct throttle throttle;
	bool throttled;
	uint64_t created, existing, bytes;
	uint64_t skipped; /* files left out (entries in the way), across resumes: the fill is then not complete */
	uint64_t rechecked, short_units, remade; /* the re-check of units done before (recheck_run) */
	int recheck_halt;			  /* the errno that stopped the re-check's remaking, or 0 */
	const struct manifest *claims; /* a complete manifest being re-checked: the files it says exist */
	struct hist h[OP_N];
	struct timeline tl;
	struct pool *pool;
	struct job job;
	struct tally *tally; /* the files every run of the job made (NULL: not counted so) */
	bool tally_exact;    /* false: an earlier run's tally was lost; counts are the snapshot's */
	uint64_t parts;	     /* units per leaf: 1, or more for a small fill */
	uint64_t last_partial; /* the last leaf record_partial saw, plus one (0: none yet) */
	int rank, ranks;       /* this rank of the job (0 of 1 in one process): see fill_unit_of */
	/* After a run across ranks, on rank 0 (fill_ranks_gather): the job's totals, as fill_totals gives
	 * them, and its errors. */
	bool gathered, g_exact;
	uint64_t g_files, g_created, g_there, g_made, g_errors;
	struct job_spread *js; /* the job across ranks (fill_mpi.c); NULL in one process */
};

/* The unit of the whole fill that this rank's pool calls u (pool_rank_unit). */
static inline uint64_t fill_unit_of(const struct fill *f, uint64_t u) { return pool_rank_unit(u, f->rank, f->ranks); }

/* A fill of fewer leaves than this may split them into parts of at least FILL_MIN_PART files
 * (fill_parts says when). The split is decided when the fill starts; a resumed fill, whatever its
 * -j and --sync, takes the one its snapshot was made with (fill_resumed_parts). */
#define FILL_MIN_UNITS 512
#define FILL_MIN_PART 32

enum { T_CREATED }; /* the tally's counter */

/* Out of space or inodes: what stops a fill (or ends --until-full). */
static inline bool out_of_room(int e) { return e == ENOSPC || e == EDQUOT; }

/* A re-check waits on lookups, not on the CPU: without -j, at least this many workers (a cold
 * re-check of 10,000 leaves on ext4: 2.1 s with 2, 0.55 s with 16). */
#define RECHECK_MIN_THREADS 16

/* ---- fill.c ---- */

/* The directory of this rank's unit u (its leaf), for the progress line's stuck workers. */
void fill_leaf_name(void *ctx, uint64_t u, struct sbuf *out);
/* The job's totals: files there, created, already there, made by this job (*exact: counted by the
 * tally; otherwise a lower bound). */
void fill_totals(const struct fill *f, uint64_t *files, uint64_t *created, uint64_t *there, bool *exact,
		 uint64_t *made);
/* A complete fill of DIR with no state: re-checked, what was lost made again, said. The exit code. */
int fill_again(struct fill *f, struct manifest *m, const struct job_opts *jo, int threads);

/* ---- fill_make.c ---- */

/* The parts of a leaf when leaves are split: 1 for a fill of FILL_MIN_UNITS leaves or more, else
 * enough for FILL_MIN_UNITS units, each of at least FILL_MIN_PART files. */
uint64_t fill_split(const struct layout *lay);
/* Units per leaf for a fill that starts with these options on threads workers: fill_split where
 * splitting helps — with --sync file (each file's fsync runs outside the directory's lock), or for
 * files with data when there are fewer leaves than workers (which would otherwise idle) — and 1
 * otherwise, so that no two workers create in one directory, where creates serialize on its lock
 * (on ext4, a 200-leaf fill of empty files split so: 0.86x the pace of one worker per directory). */
uint64_t fill_parts(const struct layout *lay, enum sync_mode sync, int threads);
/* Units per leaf of a fill resumed from rank's snapshot (of ranks; 0 of 1 in one process) of units
 * units, its share of the fill's (pool_rank_units): 1 or fill_split, whichever the run that saved
 * it used; 0 when neither fits. */
uint64_t fill_resumed_parts(const struct layout *lay, uint64_t units, int rank, int ranks);
/* The pool's action: make unit's files (idempotent: complete ones are counted as there). */
int fill_unit(void *ctx, void *lp, uint64_t unit, struct errbatch *errs);
/* Fold a worker's counts into the totals (pool lock held). */
void fill_commit(void *ctx, void *lp);
/* Release a worker's buffers. */
void fill_local_free(void *ctx, void *lp);
/* The tally's settle hook: an action a kill cut from its count is counted if it was done. */
void fill_settle(void *ctx, unsigned counter, const char *rec, size_t len, uint64_t since, uint64_t *totals);
/* Remove name in dfd only while it is still the file fill made (made: its stat, or NULL for any
 * regular file of one link). */
void fill_remove_made(int dfd, const char *name, const struct stat *made);
/* The files of this rank's unit (its first *s0 and end *s1 in its leaf); the leaf's number. */
uint64_t unit_files(const struct fill *f, uint64_t unit, uint64_t *s0, uint64_t *s1);

/* ---- fill_recheck.c ---- */


/*
 * The re-check. A resumed fill trusts its snapshot for the units done before, and a fill found
 * complete its manifest; but a directory may have been removed by hand since. Before the fill
 * says it is complete, each such unit gets one cheap look — its leaf opened (without following a
 * link), the unit's last file statted, closed: three system calls per leaf directory, whatever its
 * files — on the fill's workers. A unit whose last file is missing or short (files are made in
 * order) is made again like a unit in progress. Files removed from the middle of a unit are not
 * seen here: verify checks every file.
 */
struct recheck {
	struct fill *f;
	uint64_t units;	  /* units [0, units) were done before this run, except undone[] */
	uint64_t *undone; /* increasing; at most the pool's window */
	size_t nundone;
	struct pool *pool;
};

/* A pool_unfinished callback: note unit as not done (r: a struct recheck). */
void collect_undone(void *ctx, uint64_t unit);
/* Run the re-check of r's units on threads workers (jo: the progress and stop options). */
enum run_result recheck_run(struct recheck *r, int threads, const struct job_opts *jo);

/* ---- fill_mpi.c: the fill across the ranks of an MPI job (myriad-mpi) ----
 * fill.c takes the same steps in myriad and myriad-mpi; where a job of ranks does more (agree,
 * share the snapshot, gather the counts to rank 0: docs/mpi.md), it calls one of these. fill_mpi.c
 * defines them for myriad-mpi; myriad has the one-process versions below, which do what one
 * process does there (mostly nothing). */
#ifdef MYRIAD_MPI
/* The job's largest v (the same on every rank): the exit code, a halt, the split. */
int fill_job_max(int v);
/* Before the checks: this rank and the job's size; --until-full refused across ranks. 0 or an exit code. */
int fill_ranks_begin(struct fill *f, struct job_opts *jo);
/* After rank 0's checks of DIR (*rc): does every rank go on? Then the others open DIR (*rc set when
 * one cannot). false: refused, *rc the job's exit code. */
bool fill_ranks_agree(struct fill *f, int *rc);
/* A job of ranks is another job than one process's: said in its identity. */
void fill_ranks_identity(struct sbuf *id);
/* After job_begin (*rc): each rank's part of the job's snapshot (*snap), whether the job resumes
 * and whether it re-checks a complete fill (rank 0's *resumed and *again). false: end with *rc. */
bool fill_ranks_snapshot(struct fill *f, int *rc, const struct sbuf **snap, bool *resumed, bool *again);
/* A complete fill re-checked (fill_again) on rank 0 alone while the others wait. The exit code. */
int fill_ranks_again(struct fill *f, struct manifest *m, const struct job_opts *jo, int threads);
/* Where this rank keeps its tally (dir[PATH_MAX]; "" without state). */
void fill_ranks_state_dir(struct fill *f, char *dir);
/* The pool made (ok) on every rank? Otherwise none starts. */
bool fill_ranks_ready(struct fill *f, bool ok);
/* The pool spread over the job, before the re-check and the run. */
void fill_ranks_start(struct fill *f);
/* After each rank's re-check: the job stops, or halts, if any rank does (*stopped, *halt). */
void fill_ranks_rechecked(struct fill *f, int *stopped, int *halt);
/* Run the pool (hooks) as job_execute does, across the job. */
enum run_result fill_ranks_execute(struct fill *f, const struct run_hooks *hooks);
/* The progress line's counts v and stuck workers: the job's. */
void fill_ranks_progress(struct fill *f, uint64_t v[3], struct sbuf *stuck);
/* After the run (collective): the job's counts, latencies, timeline and errors on rank 0. */
void fill_ranks_gather(struct fill *f);
#else
static inline int fill_job_max(int v) { return v; }
static inline int fill_ranks_begin(struct fill *f, struct job_opts *jo) { return 0; }
static inline bool fill_ranks_agree(struct fill *f, int *rc) { return *rc == 0; }
static inline void fill_ranks_identity(struct sbuf *id) {}
static inline bool fill_ranks_snapshot(struct fill *f, int *rc, const struct sbuf **snap, bool *resumed, bool *again)
{
	return *rc == 0;
}
static inline int fill_ranks_again(struct fill *f, struct manifest *m, const struct job_opts *jo, int threads)
{
	return fill_again(f, m, jo, threads);
}
static inline void fill_ranks_state_dir(struct fill *f, char *dir)
{
	if (f->job.ckpt)
		snprintf(dir, PATH_MAX, "%s", ckpt_dir(f->job.ckpt));
}
static inline bool fill_ranks_ready(struct fill *f, bool ok) { return ok; }
static inline void fill_ranks_start(struct fill *f) {}
static inline void fill_ranks_rechecked(struct fill *f, int *stopped, int *halt) {}
static inline enum run_result fill_ranks_execute(struct fill *f, const struct run_hooks *hooks)
{
	return job_execute(&f->job, hooks);
}
static inline void fill_ranks_progress(struct fill *f, uint64_t v[3], struct sbuf *stuck) {}
static inline void fill_ranks_gather(struct fill *f) {}
#endif

#endif
