/*
 * jobspread: what every command that runs across the ranks of an MPI job (myriad-mpi) does around
 * its engine, written once: the options a rank but 0 does not own (the state, the progress line,
 * its own outputs), handing each rank its part of the job's snapshot, starting together or not at
 * all, registering the outputs whose parts rank 0 gathers, and the run with one voice on a stop.
 * Built only into myriad-mpi (-DMYRIAD_MPI); docs/mpi.md describes the protocol underneath.
 */
#ifndef MYRIAD_JOBSPREAD_H
#define MYRIAD_JOBSPREAD_H

#include <limits.h>
#include <stdbool.h>

#include "cmd/job.h"
#include "engine/spread.h"
#include "report/hist.h"
#include "report/outfile.h"

#define JOB_SPREAD_OUTS 3 /* outputs a command may have besides --errors */

struct job_spread {
	int rank, ranks;
	int nouts;                                 /* the command's outputs, then --errors when given */
	char path[JOB_SPREAD_OUTS + 1][PATH_MAX];  /* a rank but 0: each output's part, by name */
	int fd[JOB_SPREAD_OUTS + 1][2];            /* the part and its spare (-1: none) */
	bool want[JOB_SPREAD_OUTS + 1];
	struct sbuf rank_snap;                     /* this rank's part of the job's snapshot */
	struct spread *sp;
};

/*
 * Before job_begin, every rank: this rank and the job's size; --rate shared out between the ranks.
 * On a rank but 0: no state, no progress line, and for each of the nouts outputs outs[k] that will
 * be written (want[k]; outs[k] a file name, or NULL or "-" for standard output) and for --errors, a
 * part (spread_part_create) whose name replaces outs[k] and o->errors: the command opens it as the
 * output. 0, or EXIT_USAGE after a message.
 */
int job_spread_begin(struct job_spread *js, struct job_opts *o, const char **outs, const bool *want, int nouts);

/*
 * After job_begin (rc its result), every rank: rank 0 hands each rank its part of the job's
 * snapshot. Returns rc, or EXIT_USAGE when the snapshot cannot be used (rank 0 says why); *snap is
 * this rank's part to resume from, or NULL for a fresh start.
 */
int job_spread_snapshot(struct job_spread *js, struct job *j, int rc, const struct sbuf **snap);

/* Every rank, once the outputs are open: their names are removed; true when every rank has ok
 * (otherwise none starts: a rank that is not has said why). */
bool job_spread_ready(struct job_spread *js, bool ok);

/* Once js->sp is made (spread_new_walk or spread_new_pool, with job_snapshot on rank 0): register
 * the outputs outs[k] (the nouts of job_spread_begin, want[k] as there) and --errors. */
void job_spread_outputs(struct job_spread *js, struct job *j, struct outfile **outs);

/* Run the engine behind inner as job_execute does, spread over the job: every rank ends together;
 * a rank stopped by another says nothing, rank 0 speaks for the job. */
enum run_result job_spread_execute(struct job_spread *js, struct job *j, const struct run_hooks *inner);

/* After the run, every rank (collective): rank 0 appends the others' parts to the outputs; frees. */
void job_spread_end(struct job_spread *js);

/* Collective: the job's latencies on rank 0, in h[0..n-1] (every rank's counts added, the largest
 * the largest). */
void job_spread_hists(struct hist *h, int n);

/* Collective: the job's timeline on rank 0: at each of rank 0's sample times, every rank's count
 * then, added up; its last point is total (rank 0's argument: the job's, once every rank is done,
 * though another rank's last point may come just after rank 0's). */
void job_spread_timeline(struct timeline *tl, uint64_t total);

#endif
