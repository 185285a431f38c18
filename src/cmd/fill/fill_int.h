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
#ifdef MYRIAD_MPI
#include "job/jobspread.h"
#endif

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
	/* After a run across ranks, on rank 0 (fill_gather): the job's totals, as fill_totals gives
	 * them, and its errors. */
	bool gathered, g_exact;
	uint64_t g_files, g_created, g_there, g_made, g_errors;
#ifdef MYRIAD_MPI
	struct job_spread js;
#endif
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

#endif
