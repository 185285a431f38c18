/*
 * rm across the ranks of an MPI job (myriad-mpi only; rm_int.h declares the hooks, rm.c calls
 * them), in two passes. The unlink pass: every rank walks its share of the tree (engine/spread,
 * the walk shared as walk's is) and unlinks the non-directories it meets, removing no directory,
 * since a directory's entries may be walked by other ranks; its failures are counted apart and
 * never shown, as the next pass meets every entry that stayed. The directories pass: rank 0 alone
 * removes what is left — the directories, nearly empty, and whatever failed — as one process's rm
 * does, post-order, reporting each failure once. Each rank counts what it removed in a tally of
 * its own in the job's state directory, so the job's counts stay exact after kill -9 of any rank.
 * The job's snapshot is the spread's (MYRSPRD1) in the unlink pass and rank 0's walk wrapped with
 * the number of ranks, the pass's time and sessions (MYRRMPH2) in the directories pass: a resume
 * knows which pass it is in.
 */
#include "cmd/rm_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "state/ser.h"
#include "engine/spread.h"
#include "job/jobspread.h"
#include "report/errlog.h"
#include "util/util.h"

struct rm_ranks {
	struct job_spread js;
	struct errlog quiet;	/* the unlink pass's failures: counted apart, never shown */
	struct job_pass2 pass2; /* the directories pass's snapshots */
};
static struct rm_ranks rk; /* one rm per process */

#define RM_PASS2_MAGIC "MYRRMPH2"

/* The directories pass's wrapper: the job's ranks, the unlink pass's time and sessions. */
static void rm_pass2_init(struct rm *c)
{
	c->rk->pass2 = (struct job_pass2){.magic = RM_PASS2_MAGIC, .ranks = c->ranks, .base_s = &c->base_s,
					  .base_sessions = &c->base_sessions};
}

/* This rank's counts for the job's progress line: entries removed, directories, errors. */
static void rm_count(void *ctx, uint64_t v[3])
{
	struct rm *c = ctx;
	uint64_t files, dirs;
	rm_counts(c, &files, &dirs);
	v[0] = files + dirs;
	v[1] = dirs;
	v[2] = 0; /* the unlink pass's failures are the directories pass's to report */
}

/*
 * The unlink pass, on every rank, from this rank's part of the job's snapshot (part, or NULL; snap:
 * the job's, on rank 0). Returns the run's outcome in *res; on rank 0, the job's counts, latencies
 * and timeline so far. -1 when the job cannot start (said why).
 */
static int rm_unlink_pass(struct rm *c, const struct rm_opts *o, char **roots, size_t nroots,
			  const struct guard_operand *checked, const struct sbuf *part, const struct sbuf *snap,
			  enum run_result *res)
{
	struct throttle throttle;
	struct walk_config cfg;
	rm_config(c, o, roots, nroots, c->jo->rate, &throttle, &cfg); /* this rank's share of --rate */
	cfg.visitor.dir_done = NULL; /* no directory is removed in this pass */
	cfg.shared = true;
	cfg.shared_empty = c->rank > 0;
	cfg.errlog = &c->rk->quiet;
	c->quiet_errors = true;
	errlog_stderr_limit(0);
	c->walk = walk_new(&cfg, part);
	const char *changed = c->walk ? rm_replaced_operand(c->walk, roots, nroots, checked) : NULL;
	if (changed)
		warnx_("refusing to remove '%s': it was replaced while it was checked", changed);
	if (!job_spread_ready(&c->rk->js, c->walk && !changed)) {
		errlog_stderr_limit(UINT64_MAX);
		return -1;
	}
	c->rk->js.sp = spread_new_walk(c->walk, c->rank == 0 ? snap : NULL);
	spread_progress_source(c->rk->js.sp, rm_count, c);
	job_spread_outputs(&c->rk->js, &c->job, NULL);
	struct run_hooks hooks = walk_run_hooks(c->walk, rm_progress, NULL);
	*res = job_spread_execute(&c->rk->js, &c->job, &hooks);
	errlog_stderr_limit(UINT64_MAX);
	/* The job's counters, latencies and timeline on rank 0. */
	uint64_t v[2] = {c->files, c->dirs};
	spread_sum(v, 2);
	job_spread_hists(&c->unlink_lat, 1);
	job_spread_timeline(&c->tl, v[0] + v[1]);
	job_spread_end(&c->rk->js);
	if (c->rank == 0) {
		c->files = v[0];
		c->dirs = v[1];
	}
	return 0;
}

/* Collective: does this rank see rank 0's operands (the same directories, by inode number)? */
static bool same_operands(char **roots, const struct guard_operand *checked, size_t nroots)
{
	uint64_t *ids = xcalloc(nroots + 1, sizeof(*ids));
	for (size_t i = 0; i < nroots; i++)
		ids[i] = checked[i].id.ino;
	bool same = job_spread_same_dirs(roots, ids, nroots, "refusing to remove");
	free(ids);
	return same;
}

enum { UNLINK = 1, DIRS = 2 }; /* the passes */

/* Rank 0: which pass the job is in (a dry run removes nothing: rank 0 counts alone), and for the
 * directories pass its walk's snapshot in walk_snap; then every rank: the job's pass, or 0 when it
 * is refused (*rc the job's exit code). */
static int rm_which_pass(struct rm *c, const struct sbuf *snap, int *rc, struct sbuf *walk_snap)
{
	int pass = 0;
	if (!*rc && c->rank == 0) {
		if (snap && snap->len >= 8 && !memcmp(snap->data, "MYRSPRD1", 8) && !c->dry_run)
			pass = UNLINK;
		else if (snap) {
			rm_pass2_init(c);
			pass = job_pass2_unwrap(&c->rk->pass2, snap, job_snapshot_name(&c->job), "rm", walk_snap) ? DIRS : 0;
		}
		else
			pass = c->dry_run ? DIRS : UNLINK;
		if (!pass)
			*rc = EXIT_USAGE;
	}
	if (!spread_all(!*rc)) {
		job_spread_ready(&c->rk->js, false);
		if (c->rank == 0 && !*rc)
			job_refused(&c->job);
		*rc = spread_max(*rc ? *rc : EXIT_USAGE);
		return 0;
	}
	return spread_max(pass);
}

/* What the other ranks removed (their tallies hold every run's), on rank 0. */
static void rm_others_removed(struct rm *c)
{
	uint64_t t[3] = {0, 0, 0};
	if (c->rank > 0 && c->tally) {
		t[0] = tally_total(c->tally, T_FILES);
		t[1] = tally_total(c->tally, T_DIRS);
		t[2] = !c->tally_exact;
		tally_close(c->tally);
		c->tally = NULL;
	}
	spread_sum(t, 3);
	if (c->rank == 0) {
		c->base_files = t[0];
		c->base_dirs = t[1];
		c->base_exact = t[2] == 0;
	}
}

/* After the unlink pass (pass, res): rank 0 removes the directories (from walk_snap when the job
 * resumes that pass), the others end. This rank's exit code. */
static int rm_last_pass(struct rm *c, struct rm_opts *o, char **roots, size_t nroots,
			const struct guard_operand *checked, int pass, enum run_result res, const struct sbuf *walk_snap,
			uint64_t rate)
{
	int rc = 0;
	c->job.quiet = c->rank > 0;
	if (pass == UNLINK && res == RUN_STOPPED) {
		if (c->rank == 0)
			rm_report(c, o, res);
		rc = job_end(&c->job, res, 0);
	} else if (c->rank == 0) {
		if (pass == UNLINK) { /* on to the directories, in a walk of their own */
			c->base_s = walk_elapsed(c->walk);
			c->base_sessions = walk_sessions(c->walk) - 1;
			walk_free(c->walk);
			c->walk = NULL;
			c->quiet_errors = false;
			/* A resumed job's --errors file is opened by its walk from the snapshot: the unlink
			 * pass's walk had the quiet log, and this walk starts afresh. Its failures start
			 * afresh too (this pass meets every one). */
			if (c->job.resumed && errlog_open(&c->job.errlog, c->jo->errors, false, 0, 0) != 0)
				rc = EXIT_USAGE;
		}
		if (!rc)
			rc = rm_walk(c, o, roots, nroots, checked, walk_snap->len ? walk_snap : NULL, rate);
	} else {
		rc = job_end(&c->job, RUN_DONE, 0);
		if (c->walk)
			walk_free(c->walk);
	}
	return rc;
}

/*
 * rm across ranks (see above): every rank, after job_begin (rc its result, snap rank 0's job
 * snapshot). The exit code, the same on every rank.
 */
int rm_ranks_run(struct rm *c, struct rm_opts *o, char **roots, size_t nroots, const struct guard_operand *checked,
		 const struct sbuf *snap, int rc, uint64_t rate)
{
	struct sbuf walk_snap = {0};
	int pass = rm_which_pass(c, snap, &rc, &walk_snap);
	if (!pass) {
		sbuf_free(&walk_snap);
		return rc;
	}
	int resumed = spread_max(c->rank == 0 && snap != NULL);
	/* In the unlink pass, each rank's part of the job's snapshot (its number of ranks checked)
	 * before any tally is opened. */
	int shared = pass == UNLINK ? spread_share_snapshot(true, c->rank == 0 ? snap : NULL, job_snapshot_name(&c->job),
							    &c->rk->js.rank_snap)
				    : 0;
	if (shared < 0) {
		job_spread_ready(&c->rk->js, false);
		if (c->rank == 0)
			job_refused(&c->job);
		return spread_max(EXIT_USAGE);
	}
	if (!c->dry_run) {
		/* Before anything is removed: each rank's tally settles what its earlier runs did. */
		char tdir[PATH_MAX];
		job_spread_state_dir(&c->job, tdir);
		/* Slots for the workers of both passes (on rank 0, each pass's claim their own). */
		c->tally = tally_open(*tdir ? tdir : NULL, (unsigned)c->rank, 2 * c->threads,
				      resumed, rm_settle, NULL, &c->tally_exact);
	}
	enum run_result res = RUN_DONE;
	if (pass == UNLINK &&
	    rm_unlink_pass(c, o, roots, nroots, checked, shared > 0 ? &c->rk->js.rank_snap : NULL, snap, &res) != 0) {
		if (c->rank == 0)
			job_refused(&c->job);
		return spread_max(EXIT_USAGE);
	}
	if (pass == DIRS)
		job_spread_ready(&c->rk->js, true); /* the parts' names go: only rank 0 works from here */
	rm_others_removed(c);
	rc = rm_last_pass(c, o, roots, nroots, checked, pass, res, &walk_snap, rate);
	sbuf_free(&walk_snap);
	spread_barrier(); /* asleep while rank 0 removes the directories */
	return spread_max(rc);
}

/* Rank 0 checks the operands first (and alone says why it refuses them); then every other rank,
 * against its own working directory and the directories above it. */
bool rm_ranks_check(struct rm *c, struct rm_opts *o, char **roots, struct guard_operand *checked, size_t *nroots,
		    const char **missing, int *rc)
{
	c->rk = &rk;
	*rc = job_spread_begin(&c->rk->js, c->jo, NULL, NULL, 0);
	c->rank = c->rk->js.rank;
	c->ranks = c->rk->js.ranks;
	if (!*rc && c->rank == 0)
		*rc = rm_check_operands(o, roots, checked, nroots, missing);
	if (spread_all(!*rc) && c->rank > 0)
		*rc = rm_check_operands(o, roots, checked, nroots, missing);
	if (spread_all(!*rc) && !same_operands(roots, checked, *nroots))
		*rc = EXIT_USAGE;
	if (!spread_all(!*rc)) {
		job_spread_ready(&c->rk->js, false);
		*rc = spread_max(*rc ? *rc : EXIT_USAGE);
		return false;
	}
	return true;
}

void rm_ranks_identity(struct sbuf *id) { ser_str(id, "mpi"); }

void rm_ranks_pass2(struct rm *c, struct run_hooks *hooks)
{
	rm_pass2_init(c);
	*hooks = job_pass2_hooks(&c->rk->pass2, hooks);
}

void rm_ranks_progress(struct rm *c, uint64_t v[3], struct sbuf *stuck)
{
	if (c->rk->js.sp) { /* the unlink pass: the job's counts, and the other ranks' workers stuck */
		v[2] = 0;  /* its failures are the directories pass's to report */
		spread_progress_add(c->rk->js.sp, v, stuck);
	}
}
