/*
 * spread: one walk, or one pool of numbered units, spread over the ranks of an MPI job. Built only into myriad-mpi (`make mpi`,
 * -DMYRIAD_MPI); the plain build neither compiles nor needs it. docs/mpi.md describes the protocol.
 *
 * Every rank runs the one traversal engine (engine/walk, its threads) as a shared walk on its
 * share; rank 0 starts with the operands. A rank that runs dry asks a random other rank for work;
 * that rank answers with the shallowest half of its frontier (walk_give) or with "none".
 * Termination is detected without a central list, by Safra's token ring over the counts of work
 * messages sent and received; rank 0 then tells every rank the walk is over. Only the main thread
 * calls MPI (MPI_THREAD_FUNNELED): the run loop's tick polls for messages every millisecond, and a
 * worker that runs dry wakes it at once. No rank holds more than its own frontier.
 *
 * A pool (fill, verify: units numbered in advance) is split between the ranks before it starts,
 * unit u to rank u mod ranks (the command maps its pool's units so); a rank done with its share
 * waits for the others, answering rounds and the token, and nothing moves between ranks.
 */
#ifndef MYRIAD_SPREAD_H
#define MYRIAD_SPREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/pool.h"
#include "engine/run.h"
#include "engine/walk.h"
#include "report/outfile.h"

/* Start MPI (in main, before a command runs). 0, or -1 with a message. */
int spread_init(int *argc, char ***argv);
/* End MPI (every rank, after the command). */
void spread_finalize(void);
/* This rank, and how many there are (1 without mpirun). */
int spread_rank(void);
int spread_size(void);

struct spread;

/*
 * Collective, before the walks are made: does every rank have ok? Then rank 0 checks the job's
 * snapshot job_snap (NULL: a fresh start; name: its file, for messages) and hands each rank its
 * part, into mine. Returns 1 to resume from mine, 0 to start afresh (no snapshot, or one saved
 * before the first round completed), -1 when some rank was not ok or the snapshot cannot be used
 * (on rank 0, a message says why: malformed, or saved by a job with another number of ranks).
 */
int spread_share_snapshot(bool ok, const struct sbuf *job_snap, const char *name, struct sbuf *mine);

/*
 * Take part in the job with shared walk w (rank 0's with the operands, the others' empty), or with
 * pool p of this rank's units (unit_name names one for the progress line, as pool_stuck's name).
 * resumed is the job's snapshot when it resumes (rank 0), kept as the one to save if the job stops
 * before its first round.
 *
 * Checkpoints: rank 0's run loop takes its periodic snapshots through the hooks; each is a round
 * over every rank (docs/mpi.md) that gives the job's snapshot, every rank's part of it taken while
 * no work is in flight between ranks. The other ranks keep no state of their own.
 */
struct spread *spread_new_walk(struct walk *w, const struct sbuf *resumed);
struct spread *spread_new_pool(struct pool *p, void (*unit_name)(void *ctx, uint64_t unit, struct sbuf *out),
			       const struct sbuf *resumed);

/*
 * Register an output of the job (paths, --errors lines): every rank, in the same order, before
 * the run. On rank 0, out is the output itself. On the others, out's descriptor is replaced by
 * part_fd, a temporary file (spread_part_create, open for reading and writing), and spare_fd
 * (another) takes turns with it: at each round the bytes written since the last one go to rank 0,
 * which appends them to its out, so out holds each line once, in the job's snapshot's length.
 */
void spread_add_output(struct spread *s, struct outfile *out, int part_fd, int spare_fd);

/*
 * The job's progress line. count gives the command's entries, directories and errors so far (any
 * thread; it takes what locks it needs): every rank but 0 sends them to rank 0 twice a second,
 * with its workers stuck in the kernel (walk_stuck). spread_progress_add (rank 0) adds the other
 * ranks' last counts to v and appends "; rank R: N workers without progress..." to stuck for each
 * rank that has some.
 */
void spread_progress_source(struct spread *s, void (*count)(void *ctx, uint64_t v[3]), void *ctx);
void spread_progress_add(struct spread *s, uint64_t v[3], struct sbuf *stuck);
void spread_free(struct spread *s);

/* The hooks for run_loop: the walk's, with done meaning the whole job's walk is over and tick
 * (every millisecond) answering and sending messages. */
struct run_hooks spread_hooks(struct spread *s, const struct run_hooks *walk_hooks);

/*
 * After run_loop: a rank that stopped (a signal, a failed output) tells the others to stop too;
 * then every rank waits until all have got here, dropping messages still in flight. Returns
 * RUN_STOPPED when any rank stopped.
 */
enum run_result spread_finish(struct spread *s, enum run_result r);
/* Did this rank stop because another one did? */
bool spread_peer_stopped(const struct spread *s);
/* Directories this rank received from others / gave to others, work requests it sent. */
void spread_stats(const struct spread *s, uint64_t *received, uint64_t *given, uint64_t *requests);

/* Collectives: every rank calls them, in the same order. */
bool spread_all(bool ok);                      /* ok on every rank? (on every rank) */
void spread_sum(uint64_t *v, size_t n);        /* the sums, on rank 0 */
void spread_gather(uint64_t v, uint64_t *all); /* every rank's v, on rank 0 (all: spread_size()) */
int spread_max(int v);                         /* the largest v, on every rank */
void spread_max_u64(uint64_t *v, size_t n);    /* the largest of each, on rank 0 */
void spread_bcast(void *buf, size_t n);        /* rank 0's n bytes at buf, on every rank */
/* Wait until every rank is here, asleep (a blocking MPI call would spin on a CPU that a rank still
 * working on this node needs). */
void spread_barrier(void);

/*
 * An output file's part: every rank but 0 writes its part of an output into a temporary file of
 * its own, created here next to final (in $TMPDIR when final is NULL or "-"), its name in path
 * (size bytes). Returns it open for reading (for spread_gather_part), or -1 with a message. The
 * caller opens it for writing and then removes the name.
 */
int spread_part_create(const char *final, char *path, size_t size);
/* Collective, after the run: rank 0 appends what every other rank wrote since the last round to
 * the outputs, output by output, in rank order and a chunk at a time. 0, or -1 (the failure
 * recorded). */
int spread_gather_outputs(struct spread *s);

#endif
