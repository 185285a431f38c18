/*
 * pool: the engine for work that is numbered in advance (fill and verify: the units are the
 * layout's directories). N workers claim units in increasing order and may finish them in any
 * order; each unit's results are committed with it under one lock, so a snapshot — every unit
 * below a watermark done, plus a bitmap of the units done in a bounded window above it — is exact,
 * and a resumed run redoes only the units that were in progress. A worker never runs more than
 * the window ahead of the oldest unfinished unit, which keeps the snapshot small.
 *
 * Like walk, a pool plugs into run_loop for progress, checkpoints and signals.
 */
#ifndef MYRIAD_POOL_H
#define MYRIAD_POOL_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/run.h"
#include "report/errlog.h"
#include "state/ser.h"

struct pool_visitor {
	void *ctx;
	size_t local_size;
	/* Do unit u (no lock held). Return 0, or an errno that halts the whole run (ENOSPC...):
	 * the unit then stays unfinished and no further unit starts. */
	int (*run)(void *ctx, void *local, uint64_t unit, struct errbatch *errs);
	/* Fold the batch into the totals (lock held), reset local. */
	void (*commit)(void *ctx, void *local);
	/* Optional: release what a worker's local holds (pool_free, after the workers have ended). */
	void (*local_free)(void *ctx, void *local);
	/* Append / read back the command's part of a snapshot (lock held). */
	void (*save)(void *ctx, struct sbuf *b);
	bool (*load)(void *ctx, struct deser *d);
};

struct pool_config {
	uint64_t units;
	int threads;
	struct pool_visitor visitor;
	struct errlog *errlog;
	const char *snapshot_name; /* the snapshot's file, for messages (NULL: "checkpoint snapshot") */
};

struct pool;

/* Prepare (restoring from snapshot when given). NULL with a message when it is unusable. */
struct pool *pool_new(const struct pool_config *cfg, const struct sbuf *snapshot);
/* The number of units of the pool that saved snapshot (pool_config.units), read without restoring
 * anything: a command whose units depend on more than its job's identity (fill's split of small
 * leaves) makes them as that run did. false when the snapshot is malformed (pool_new says why). */
bool pool_snapshot_units(const struct sbuf *snapshot, uint64_t *units);
void pool_start(struct pool *p);
struct run_hooks pool_run_hooks(struct pool *p, void (*progress)(void *ctx, struct sbuf *line),
				void (*sync)(void *ctx));
/* Wait for the workers (after run_loop returned). */
void pool_join(struct pool *p);
void pool_free(struct pool *p);

/* The errno that halted the run (0 if none). */
int pool_halted(struct pool *p);
/* Units finished, elapsed seconds (across resumes), sessions, errors. */
uint64_t pool_units_done(struct pool *p);
double pool_elapsed(struct pool *p);
uint64_t pool_sessions(struct pool *p);
uint64_t pool_errors(struct pool *p);
/* Call fn(ctx, unit), in increasing order, for every unit below pool_next_unit that is not
 * finished — claimed and left unfinished, or (after a resume) never claimed but below a unit
 * finished before — with the lock held: e.g. to record the partly filled directories when a fill
 * halts. */
void pool_unfinished(struct pool *p, void (*fn)(void *ctx, uint64_t unit), void *ctx);
/* The first unit from which on no unit was ever started, in this run or before a resume. */
uint64_t pool_next_unit(struct pool *p);
/* Take a snapshot as the run loop does (without stopping the workers), calling first(arg) before
 * it under the same hold of the lock (as walk_snapshot_then: an MPI rank swaps its output parts). */
void pool_snapshot_then(struct pool *p, struct sbuf *b, void (*first)(void *arg), void *arg);
/* Is every unit finished (or the run halted) and every worker done? It then stays so. */
bool pool_idle(struct pool *p);
void pool_lock(struct pool *p);
void pool_unlock(struct pool *p);

/* Called by a worker within its unit each time it moves on to the next item (a file), so that only
 * an item stuck in the kernel counts as a lack of progress. */
void pool_progressed(void);

/* Append "; N workers without progress, longest S s in NAME" for workers that have made no progress
 * for min_s seconds or more (an operation held in the kernel), or nothing. name appends the unit's
 * name (its directory) to out. */
void pool_stuck(struct pool *p, struct sbuf *line, double min_s,
		void (*name)(void *ctx, uint64_t unit, struct sbuf *out));

/* A pool of all units split between ranks (engine/spread): rank r of ranks takes the units r,
 * r + ranks, r + 2 ranks... Its pool's unit u is the whole's pool_rank_unit; it has
 * pool_rank_units of them. In one process (rank 0 of 1), u itself and all. */
static inline uint64_t pool_rank_unit(uint64_t u, int rank, int ranks)
{
	return u * (uint64_t)ranks + (uint64_t)rank;
}
static inline uint64_t pool_rank_units(uint64_t all, int rank, int ranks)
{
	return all > (uint64_t)rank ? (all - (uint64_t)rank + (uint64_t)ranks - 1) / (uint64_t)ranks : 0;
}

#endif
