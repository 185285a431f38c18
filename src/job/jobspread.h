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

#include "job/job.h"
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
 * (otherwise none starts: a rank that is not has said why, and this rank's part of the snapshot is
 * freed). */
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

/* Collective: the job's state directory (rank 0's, where every rank keeps its tally), into
 * dir[PATH_MAX] on every rank ("" without state). */
void job_spread_state_dir(const struct job *j, char *dir);

/*
 * Collective: does this rank see rank 0's operands? paths[i] must be the directory rank 0 sees by
 * that name, by inode number inos[i] (which a shared filesystem gives every client alike, where
 * device numbers differ between machines), not another of the same name: a node where mpirun's
 * working directory does not exist starts its rank in $HOME, where a relative operand names
 * something else. n may differ between ranks (operands missing on some). refusing says what is
 * refused ("refusing to remove"). false after saying why.
 */
bool job_spread_same_dirs(char *const *paths, const uint64_t *inos, size_t n, const char *refusing);

/*
 * A command's second pass on rank 0 alone, after the pass spread over the ranks (rm's directories,
 * copy's directories and hard links): a walk of one process whose snapshots are the walk's
 * wrapped with the job's number of ranks, the first pass's time and sessions and nv counters of
 * the command's, so that a resume knows which pass the job is in and what the first one did.
 * The command keeps the values; the wrapper reads and writes them through the pointers.
 */
#define JOB_PASS2_VALUES 4
struct job_pass2 {
	const char *magic; /* 8 characters, the command's */
	int ranks;
	double *base_s;           /* the first pass's time */
	uint64_t *base_sessions;  /* the first pass's sessions (the one that went on counted once) */
	uint64_t *v[JOB_PASS2_VALUES]; /* the command's counters from the first pass */
	size_t nv;
	struct run_hooks inner; /* the walk's, under job_pass2_hooks */
};
/* The hooks of p's walk (walk_hooks), its snapshots wrapped. */
struct run_hooks job_pass2_hooks(struct job_pass2 *p, const struct run_hooks *walk_hooks);
/* Rank 0: is snap (a job snapshot, its file name) a second pass's? Then its walk snapshot goes into
 * walk and the values to p's pointers: true. false after saying why it cannot be used (cmd names
 * the command: malformed, or saved by a job of another number of ranks). */
bool job_pass2_unwrap(struct job_pass2 *p, const struct sbuf *snap, const char *name, const char *cmd,
		      struct sbuf *walk);

#endif
