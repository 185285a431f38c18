/*
 * spread: one walk spread over the ranks of an MPI job. Built only into myriad-mpi (`make mpi`,
 * -DMYRIAD_MPI); the plain build neither compiles nor needs it. docs/mpi.md describes the protocol.
 *
 * Every rank runs the one traversal engine (engine/walk, its threads) as a shared walk on its
 * share; rank 0 starts with the operands. A rank that runs dry asks a random other rank for work;
 * that rank answers with the shallowest half of its frontier (walk_give) or with "none".
 * Termination is detected without a central list, by Safra's token ring over the counts of work
 * messages sent and received; rank 0 then tells every rank the walk is over. Only the main thread
 * calls MPI (MPI_THREAD_FUNNELED): the run loop's tick polls for messages every millisecond, and a
 * worker that runs dry wakes it at once. No rank holds more than its own frontier.
 */
#ifndef MYRIAD_SPREAD_H
#define MYRIAD_SPREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* Take part in the job with shared walk w (rank 0's with the operands, the others' empty). */
struct spread *spread_new(struct walk *w);
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

/*
 * An output file's part: every rank but 0 writes its part of an output into a temporary file of
 * its own, created here next to final (in $TMPDIR when final is NULL or "-"), its name in path
 * (size bytes). Returns it open for reading (for spread_gather_part), or -1 with a message. The
 * caller opens it for writing and then removes the name.
 */
int spread_part_create(const char *final, char *path, size_t size);
/* Collective: rank 0 appends every other rank's part (part_fd, read from its start), in rank
 * order and a chunk at a time, to out; the others send theirs. 0, or -1 (the failure recorded). */
int spread_gather_part(int part_fd, struct outfile *out);

#endif
