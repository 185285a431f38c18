/*
 * results: the lifecycle results model — what `myriad lifecycle` measures, per filesystem and
 * scale, phase by phase — and its file form, results.json: writing it (with the projections of
 * lifecycle/fit) and reading it back, so `myriad report` can re-render or compare runs long after
 * the machine that measured them is gone. The page (lifecycle/page) and the fits read this model;
 * nothing here draws or fits.
 */
#ifndef MYRIAD_RESULTS_H
#define MYRIAD_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sbuf;

/* The phases of one cycle, in the order they run. */
enum lc_phase_id {
	PH_ATTACH,
	PH_MKFS,
	PH_MOUNT,
	PH_FILL,
	PH_DROP1,
	PH_WALK,
	PH_DROP2,
	PH_WALK_STAT,
	PH_UMOUNT,
	PH_CHECK,
	PH_CHECK_MINMEM,
	PH_REMOUNT,
	PH_VERIFY,
	PH_RM,
	PH_UMOUNT2,
	PH_DETACH,
	PH_N
};

struct lc_phase_info {
	const char *name;  /* key in results.json */
	const char *title; /* for the report */
	bool chart;        /* gets a time chart and a projection */
};
extern const struct lc_phase_info lc_phases[PH_N];
/* The phase called name in results.json (PH_*), or -1: a phase of another version, which a
 * reader skips rather than refuses. */
int lc_phase_by_name(const char *name);

enum lc_status { LC_NOT_RUN, LC_OK, LC_FAILED, LC_SKIPPED };
extern const char *const lc_status_names[];

struct lc_point {
	double t, v, rate;
};

/* How a checker phase's memory was handled: what was predicted for it, the limit it met, how
 * that limit was applied, and what came of it (set: the phase is a checker's and was planned). */
struct lc_memplan {
	bool set;
	double predicted_kib; /* NAN: no prediction (fewer than 2 smaller scales) */
	double limit_kib;
	const char *limit_from; /* "--checker-mem", "MemAvailable" */
	const char *contained;  /* "cgroup v2", "cgroup v1", "none" */
	const char *how;        /* "none", "-m", "scratch_files", "skipped" */
	char *outcome;          /* "ok", "failed", "killed: out of memory at limit X", "does not fit: ..." */
};

struct lc_phase {
	enum lc_status status;
	int exit_status; /* -1: none (not run, or killed: see error) */
	double wall_s, peak_rss_kib, rate; /* NAN when absent */
	const char *rate_unit;             /* "files/s", "entries/s" */
	double min_mem_kib;                /* xfs_repair -m: the minimum it states (NAN: none) */
	char *error, *command;
	struct lc_memplan mem;
	struct lc_point *tl;
	size_t ntl;
};

struct lc_cycle {
	char *fs;
	uint64_t files;
	bool complete;
	char *image, *device, *mkfs_options;
	double image_bytes;
	/* What the image file really took (st_blocks * 512, the largest seen after fill; NAN: not
	 * measured, as with --device), and the estimate made before the cycle (NAN: none). */
	double image_alloc_bytes, disk_estimate_bytes;
	char *disk_estimate_from;
	int lazy_itable_init; /* -1: not ext4 / unknown */
	bool have_usage;
	double bytes_total, bytes_used, inodes_total, inodes_used;
	int run; /* which results file (report of several runs) */
	struct lc_phase ph[PH_N];
};

struct lc_kv {
	char *k, *v;
};

struct lc_results {
	char *source; /* the file it was read from, if any */
	char *version, *started, *updated, *kernel, *cpu_model;
	double cpus, mem_kib;
	struct lc_kv *tools;
	size_t ntools;
	double files, project, size;
	char *image_dir, *device;
	uint64_t *scales;
	size_t nscales;
	struct lc_cycle *cycles;
	size_t ncycles;
	bool complete, gnuplot;
};

/* One series: one filesystem of one run (fs points into the run; name is "fs" for a single run,
 * "fs (run N)" when several are compared). The unit every chart line and projection is made of. */
struct lc_series {
	char *name;
	const char *fs;
	int run;
};
/* Every series of runs, in the order first seen. Returns the count; *out to free with
 * lc_series_free. */
size_t lc_series_collect(struct lc_results *const *runs, size_t nruns, struct lc_series **out);
void lc_series_free(struct lc_series *s, size_t n);
/* The value of metric in cycle c: a phase's wall time (metric = the phase, >= 0), -1 the checker's
 * peak RSS, -2 xfs_repair's stated minimum memory (KiB). False when that was not measured (failed,
 * skipped, absent), so fits and charts skip the point rather than plot a zero. */
bool lc_metric_of(const struct lc_cycle *c, int metric, double *v);
/* True when checker phase p ran under a memory limit of its own (xfs_repair -m, e2fsck's scratch
 * files): its peak RSS then shows the limit, not what the checker needs, and no fit may use it. */
bool lc_check_self_limited(const struct lc_phase *p);

/* results.json: everything in r, plus the projections to r->project files, their hindcasts and
 * the 2010 figures (lifecycle/fit). */
void lc_results_json(const struct lc_results *r, struct sbuf *out);

/* Read a results.json with lc_parse. NULL with a message in err. */
struct lc_results *lc_load(const char *path, char *err, size_t errlen);
/* Parse the bytes of a results.json (source: the file's name, kept in the results). NULL with a
 * message in err when it is not JSON or not lifecycle's results: no cycles array, a cycle without
 * a filesystem name or file count, a phase twice. */
struct lc_results *lc_parse(const char *data, size_t len, const char *source, char *err, size_t errlen);
/* Free what one cycle holds and zero it: a resumed lifecycle drops the incomplete cycles of the
 * results it reads back, to measure them again. */
void lc_cycle_clear(struct lc_cycle *c);
/* Free results and everything they hold (NULL: nothing). */
void lc_free(struct lc_results *r);


#endif
