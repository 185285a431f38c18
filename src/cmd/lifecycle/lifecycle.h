/*
 * lifecycle: what the files of myriad lifecycle share (private to src/cmd/lifecycle*.c).
 * lifecycle.c is the command (options, the runs over filesystems and scales, results.json);
 * lifecycle_cycle.c runs one (filesystem, scale) cycle as a table of phases; lifecycle_phase.c
 * runs one phase in a child and records its time, memory and status; lifecycle_record.c keeps
 * the record of what was made. The results' model is lifecycle/results.h, the HTML report lifecycle/page.h.
 */
#ifndef MYRIAD_LIFECYCLE_H
#define MYRIAD_LIFECYCLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lifecycle/results.h"
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
	uint64_t checker_mem; /* --checker-mem in bytes; 0: MemAvailable at each checker */
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

/* ---- lifecycle_out.c: whose directory --out is ---- */

/* lifecycle's mark in a --out it has taken. */
#define LC_MARK_NAME ".myriad-lifecycle"

/* May lifecycle write in --out? Yes (-1) when it is new, empty, or lifecycle's own (its mark, or a
 * results.json that loads as lifecycle's) with every file it writes over still of its kind (a
 * report of myriad's, its record, its config; a results.json that does not load only where its
 * mark is). Else EXIT_USAGE, after naming the entry that is not lifecycle's and what to do. With
 * --dry-run, says what it found. Nothing is written. */
int lc_out_check(const struct lc *x);

/* Put lifecycle's mark in out (kept when it is there). 0, or -1 with errno. */
int lc_out_mark(const char *out);

/* Move the damaged file path aside to path.bad, or path.bad.N, the first name not taken (never
 * over an existing file); its new name in kept. 0, or -1 with errno. */
int lc_out_keep_bad(const char *path, char *kept, size_t n);

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

/* Run argv as a phase like lc_run_phase, contained: in a cgroup of its own limited to limit_kib
 * (no swap) when one can be made, so that the OOM killer can only take it. Records how in the
 * phase's mem.contained, and a kill by the OOM killer (lc_oom_killed) as "killed: out of memory
 * at limit X". */
bool lc_run_contained(struct lc *x, struct lc_cycle *c, int id, char *const argv[], int ok_exit, double limit_kib);

/* Did the OOM killer end a contained phase that failed? st is its wait status (-1: not run),
 * oom_kills its group's count and limit_reached whether it reached its limit (-1: unknown). Kept apart so that the kernels
 * without an oom_kill count (SIGKILL after the limit was hit decides there) are tested too. */
bool lc_oom_killed(int st, long long oom_kills, int limit_reached, bool stop);

/* ---- lifecycle_check.c ---- */

/* xfs_repair -n -m 1: the minimum memory xfs_repair states it needs (run before the check, so
 * that it can cap -m). */
bool lc_check_minmem(struct lc *x, struct lc_cycle *c, char *checker);

/* The read-only checker, its memory planned first: the peak predicted from the smaller cycles,
 * the limit (--checker-mem or MemAvailable now), and then run as it is, with xfs_repair -m, with
 * e2fsck's scratch files on disk, or not at all ("does not fit"); contained in every case. */
bool lc_check(struct lc *x, struct lc_cycle *c, const struct fs_kind *k, char *checker);

/* ---- lifecycle_fit.c: what a cycle needs, known before it runs (pure functions) ---- */

/* The apparent size of a cycle's sparse image (lifecycle_cycle makes it this size). */
uint64_t lc_image_bytes(uint64_t files, uint64_t size_max);

/* What fs writes whatever the file count, on an image of image_bytes: journal or log, per-group
 * metadata. Kept apart so that measured cycles on small images scale to a large one. */
double lc_disk_fixed(const char *fs, double image_bytes);

/* The bytes a cycle's image will take from lifecycle's mkfs parameters alone: the fixed part,
 * and per file its inode, directory entries and data blocks. */
double lc_disk_formula(const char *fs, uint64_t files, uint64_t size_max);

/* The margin added to every disk estimate: a fraction of it and a constant. */
#define LC_DISK_MARGIN 0.15
#define LC_DISK_MARGIN_BYTES (256.0 * 1024 * 1024)

struct lc_disk_est {
	double raw, bytes; /* without and with the margin */
	int points;	   /* measured cycles it had */
	char from[96];	   /* what it is made from, for messages */
};

/* The disk a cycle of fs at files will take: a linear fit of the image allocations of 2+ smaller
 * complete cycles in r (less their fixed part, plus this image's), else the formula; with the
 * margin. r may be NULL. */
void lc_disk_estimate(const struct lc_results *r, const char *fs, uint64_t files, uint64_t size_max,
		      struct lc_disk_est *e);

/* The checker's peak RSS (KiB) at files for fs: a linear fit in N over the smaller complete cycles
 * of r whose checker ran without a limit of its own, never below the largest of them. false when
 * there are fewer than 2 distinct scales. */
bool lc_mem_predict(const struct lc_results *r, const char *fs, uint64_t files, double *kib);

/* How to run checker under limit_kib: "none" (it fits, or nothing is predicted), "-m"
 * (xfs_repair), "scratch_files" (e2fsck) or "skipped" (btrfs, which cannot use less; xfs_repair
 * when its stated minimum exceeds the limit). NAN inputs count as unknown. */
const char *lc_mem_plan(const char *checker, double predicted_kib, double stated_min_kib, double limit_kib);

/* ---- lifecycle_cycle.c ---- */

/* Make IMAGE_DIR/myriad-lifecycle-FS-N-PID[-K].EXT, written to the record as kind before it is
 * made: "image", a file (its fd), or "dir" or "scratch" (a directory whose files the clean-up may
 * remove: lifecycle_record.h), a directory (0). -1 with errno. */
int lc_make_recorded(struct lc *x, const char *kind, const char *ext, const char *fs, uint64_t files, char *path, size_t n);

/* One (filesystem, scale) cycle: image, loop device, the phases, teardown; appended to the results
 * and saved after every phase. Everything it made is gone when it returns (or stays in the
 * record when it cannot be removed). */
void lc_run_cycle(struct lc *x, const struct fs_kind *k, uint64_t files);

#endif
