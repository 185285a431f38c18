/*
 * plot: the lifecycle results model (what `myriad lifecycle` measures and writes to results.json),
 * reading it back, the least-squares fits and projections, and the HTML report with charts drawn
 * by gnuplot (SVG, inlined). Shared by `myriad lifecycle` and `myriad report`.
 */
#ifndef MYRIAD_PLOT_H
#define MYRIAD_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/json.h"

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
int lc_phase_by_name(const char *name);

enum lc_status { LC_NOT_RUN, LC_OK, LC_FAILED, LC_SKIPPED };
extern const char *const lc_status_names[];

struct lc_point {
	double t, v, rate;
};

struct lc_phase {
	enum lc_status status;
	int exit_status; /* -1: none (not run, or killed: see error) */
	double wall_s, peak_rss_kib, rate; /* NAN when absent */
	const char *rate_unit;             /* "files/s", "entries/s" */
	double min_mem_kib;                /* xfs_repair -m: the minimum it states (NAN: none) */
	char *error, *command;
	struct lc_point *tl;
	size_t ntl;
};

struct lc_cycle {
	char *fs;
	uint64_t files;
	bool complete;
	char *image, *device, *mkfs_options;
	double image_bytes;
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

/* Linear t = a + b*N and power law t = c*N^k (log-log least squares); R² of each measured on
 * the original values, so they compare. model is the better one ("linear"/"power"), or
 * "constant" (the mean) when neither reaches R² 0.5, or "no trend" (projected NaN) when the better
 * one makes the value shrink as N grows: a time or a memory that falls with more files is noise,
 * not a law. Needs LC_FIT_MIN_SCALES distinct N. */
#define LC_FIT_MIN_SCALES 3
struct lc_fit {
	int n;
	double a, b, r2_lin;
	bool have_pow;
	double c, k, r2_pow;
	const char *model;
	double projected;
};
bool lc_fit(const double *x, const double *y, int n, double at, struct lc_fit *f);

/* One projected metric of one filesystem. */
struct lc_proj {
	char *series;      /* filesystem (and run) */
	const char *what;  /* phase title, or "checker peak RSS" */
	const char *unit;  /* "s", "KiB" */
	struct lc_fit fit;
	double largest_n, largest_v; /* the largest measured point */
};
/* Every projection over results' cycles to files files. Returns the count; *out to free with
 * lc_proj_free. */
size_t lc_projections(struct lc_results *const *runs, size_t nruns, double files, struct lc_proj **out);
void lc_proj_free(struct lc_proj *p, size_t n);
/* The projections as a JSON array under key. */
void lc_proj_json(struct json *j, const char *key, const struct lc_proj *p, size_t n, double files);

/* gnuplot commands that set axis ('x' or 'y') to span [lo, hi] with readable, distinct tick labels:
 * on a log axis at 1, 2, 5 per decade (only powers of ten past three decades), on a linear one every
 * 1, 2 or 5 x 10^k (4 to 7 ticks); si labels count with k, M, G (250k, 1.5M), otherwise plain
 * numbers. Nothing for an empty range. */
void lc_axis_tics(struct sbuf *out, char axis, double lo, double hi, bool logscale, bool si);

/* results.json: everything in r, plus the projections to r->project files. */
void lc_results_json(const struct lc_results *r, struct sbuf *out);

/* Read a results.json with lc_parse. NULL with a message in err. */
struct lc_results *lc_load(const char *path, char *err, size_t errlen);
/* Parse the bytes of a results.json (source: the file's name, kept in the results). NULL with a
 * message in err when it is not JSON or not lifecycle's results: no cycles array, a cycle without
 * a filesystem name or file count, a phase twice. */
struct lc_results *lc_parse(const char *data, size_t len, const char *source, char *err, size_t errlen);
void lc_cycle_clear(struct lc_cycle *c);
void lc_free(struct lc_results *r);

/* Write report.html for one or more runs (atomically). Charts need gnuplot; without it the page
 * says so and still has every table. Returns 0, or -1 with a message printed. */
int lc_render_html(struct lc_results *const *runs, size_t nruns, const char *path);

/* Append s HTML-escaped. */
struct sbuf;
void html_escape(struct sbuf *b, const char *s);

/* Write doc to path atomically (temporary file, fsync, rename). -1 with errno. */
int write_file_atomic(const char *path, const char *data, size_t len);

#endif
