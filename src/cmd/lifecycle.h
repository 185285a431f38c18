/*
 * lifecycle: what the files of myriad lifecycle share (private to src/cmd/lifecycle*.c).
 * lifecycle.c is the command (options, the runs over filesystems and scales, results.json);
 * lifecycle_cycle.c runs one (filesystem, scale) cycle as a table of phases; lifecycle_phase.c
 * runs one phase in a child and records its time, memory and status; lifecycle_record.c keeps
 * the record of what was made. The results' model is report/results.h, the HTML report report/page.h.
 */
#ifndef MYRIAD_LIFECYCLE_H
#define MYRIAD_LIFECYCLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/results.h"
#include "util/signals.h"

#define PREFIX "myriad-lifecycle-"

/* A filesystem lifecycle can compare: its mkfs, its read-only checker, the package of both. */
struct fs_kind {
	const char *name, *mkfs, *checker, *package;
};

#define LC_NFS 4
extern const struct fs_kind lc_fs_kinds[LC_NFS];

/* One lifecycle run: its options, its results, and the cycle being run. */
struct lc {
	/* options */
	uint64_t files, project, size_max;
	const char *size, *image_dir, *device, *out;
	bool dry_run, yes;
	uint64_t *scales;
	size_t nscales;
	const struct fs_kind *fs[LC_NFS];
	size_t nfs;
	char *mkfs_opts[LC_NFS];
	/* state */
	struct lc_results *res;
	char results_path[4096], report_path[4096], logdir[4096];
	bool failed;
	int record; /* OUT/made.list: what the run made and has not yet removed */
	/* the cycle being run */
	char img[4096], mnt[4096], dev[256];
	bool have_loop;
};

/* A stop was asked for (SIGINT, SIGTERM): each step of a cycle ends the cycle then. */
static inline bool done(void) { return sig_stop_requested(); }

/* ---- lifecycle.c ---- */

/* Rewrite results.json (atomically, with the time of this update): after every phase, so that a
 * run killed at any point leaves what it measured. */
void lc_save(struct lc *x);

/* ---- lifecycle_phase.c ---- */

/* (Children run through util/proc.h's proc_run; tools are found with proc_find_tool.) */

/* LOGDIR/FS-N-PHASE.EXT: where a phase's output (log) and a myriad phase's --json go. */
void lc_log_path(struct lc *x, const struct lc_cycle *c, int id, char *buf, size_t n, const char *ext);

/* Run one phase: argv (or fn) in a child; record wall time, peak RSS, status. true when it
 * succeeded (exit 0, or ok_exit when that is >= 0). A failure not caused by a stop request marks
 * the run failed. */
bool lc_run_phase(struct lc *x, struct lc_cycle *c, int id, char *const argv[], int (*fn)(void), int ok_exit);

/* Run myriad's own subcommand sub (with extra options) on MNT/tree as a phase, and take its rate
 * (rate_key of its --json, in unit) and timeline into the phase. */
bool lc_run_myriad(struct lc *x, struct lc_cycle *c, int id, const char *sub, const char *const *extra,
		   const char *rate_key, const char *unit);

/* The phase's child for a cold cache: sync and drop the page cache, dentries and inodes. */
int lc_drop_caches(void);

/* Print a phase's line (time, peak RSS, rate, its error). */
void lc_print_phase(const struct lc_cycle *c, int id);

/* Record a phase as skipped for why, print it and save. */
void lc_skip_phase(struct lc *x, struct lc_cycle *c, int id, const char *why);

/* ---- lifecycle_cycle.c ---- */

/* One (filesystem, scale) cycle: image, loop device, the phases, teardown; appended to the results
 * and saved after every phase. Everything it made is gone when it returns (or stays in the
 * record when it cannot be removed). */
void lc_run_cycle(struct lc *x, const struct fs_kind *k, uint64_t files);

#endif
