/*
 * tally: counts of work done (files removed, created, copied) that outlive the process. The
 * snapshot's counts are those of its moment, and a resumed run that walks again cannot tell the
 * work done after it from the work done before the job: so each worker counts in a slot of its
 * own in a file of the state directory mapped shared, which the kernel keeps when the process is
 * stopped or killed (kill -9; not a machine crash). An action whose outcome a kill could separate
 * from its count is announced first (tally_begin: which counter, and a record naming the entry);
 * a resume asks the command whether each announced action was done, so the totals stay exact.
 */
#ifndef MYRIAD_TALLY_H
#define MYRIAD_TALLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TALLY_COUNTERS 8
#define TALLY_REC_MAX 4000 /* bytes of an announced entry's record; longer ones are not recorded */

struct tally;
struct tally_slot;

/*
 * Open the tally of a job in state directory dir (NULL: in memory only, for --no-state), with
 * room for nslots workers: the file "tally", or with part > 0 "tally-PART" (rank PART's, in a job
 * across the ranks of an MPI job: each rank counts in a file of its own, as a file mapped shared
 * is not kept coherent between machines). With resume, the totals start from those of the file left by the
 * job's earlier runs; for each action announced there and not counted, settle(ctx, counter,
 * record, length, since, totals) adds to totals what of it was done (since: when the run that
 * announced it started, CLOCK_REALTIME_COARSE ns, to tell what it made from what was there).
 * Never fails: *exact is false when the earlier file was missing or damaged (the caller then
 * falls back to its snapshot's counts, and says so).
 */
typedef void tally_settle_fn(void *ctx, unsigned counter, const char *rec, size_t len, uint64_t since,
			     uint64_t *totals);
struct tally *tally_open(const char *dir, unsigned part, unsigned nslots, bool resume, tally_settle_fn *settle,
			 void *ctx, bool *exact);

/* A slot for one worker (call once per worker; NULL when all nslots are taken: its counts are then
 * lost, which a caller sizing nslots to its threads never sees). */
struct tally_slot *tally_claim(struct tally *t);

/* Add n to counter k of the slot (its worker only). s may be NULL. */
void tally_add(struct tally_slot *s, unsigned k, uint64_t n);

/* Announce that the worker is about to do an action counted by counter k, on the entry named by
 * a[/b] (b may be NULL); tally_end closes it, counting one when done. s may be NULL. */
void tally_begin(struct tally_slot *s, unsigned k, const char *a, size_t alen, const char *b, size_t blen);
void tally_end(struct tally_slot *s, unsigned k, bool done);

/* Counter k over the whole job so far (every run). */
uint64_t tally_total(const struct tally *t, unsigned k);

/* Unmap and free (the file stays: the state directory's owner removes it). */
void tally_close(struct tally *t);

#endif
