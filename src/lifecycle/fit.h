/*
 * fit: least-squares fits of a measured metric against the file count, and the projections they
 * give to a scale nobody measured (a billion files). Both results.json (lifecycle/results) and the
 * page (lifecycle/page) carry them; each is an extrapolation, and says so where it is shown.
 */
#ifndef MYRIAD_FIT_H
#define MYRIAD_FIT_H

#include <stdbool.h>
#include <stddef.h>

#include "report/json.h"
#include "lifecycle/results.h"

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
	const char *fs;    /* the filesystem alone (points into the results), to match references */
	int metric;        /* as lc_metric_of */
	const char *what;  /* phase title, or "checker peak RSS" */
	const char *unit;  /* "s", "KiB" */
	struct lc_fit fit;
	double largest_n, largest_v; /* the largest measured point */
};
/* Every projection over results' cycles to files files. Returns the count; *out to free with
 * lc_proj_free. */
size_t lc_projections(struct lc_results *const *runs, size_t nruns, double files, struct lc_proj **out);
/* Free what lc_projections returned. */
void lc_proj_free(struct lc_proj *p, size_t n);
/* The projections as a JSON array under key. */
void lc_proj_json(struct json *j, const char *key, const struct lc_proj *p, size_t n, double files);

/*
 * A hindcast: how wrong the same fit was where the answer is known. Of one series and metric,
 * take the largest scale N that ran, fit only the scales at or below N/10, predict N and compare
 * with what N measured. A projection to --project extrapolates further still, so an error of
 * this size is the least to expect of it.
 */
struct lc_hindcast {
	char *series;      /* as lc_proj (lc_hindcast_of leaves these five alone) */
	const char *fs, *what, *unit;
	int metric;
	const char *why;   /* NULL: made; else why there is none (a constant string) */
	double at;         /* N: the largest scale the metric ran at */
	double measured;   /* at N (NAN: failed there) */
	double fitted_up_to; /* the largest fitted scale (<= N/10), 0 when none */
	int points;        /* measurements fitted */
	struct lc_fit fit; /* of those points, projected to N */
	double predicted, ratio, percent; /* predicted/measured, and (ratio-1)*100 */
	double factor;     /* N / fitted_up_to: how far the hindcast extrapolated */
};
/* The hindcast of one series and metric from its n points (x files, y value; y NAN where the
 * phase ran but failed or measured nothing). Fills the numbers of *h; false with h->why set
 * when none is possible. Apart from lc_hindcasts so the arithmetic can be checked alone. */
bool lc_hindcast_of(const double *x, const double *y, int n, struct lc_hindcast *h);
/* Every series and metric that has a measurement, with its hindcast or why there is none (the
 * order of lc_projections). Returns the count; *out to free with lc_hindcast_free. */
size_t lc_hindcasts(struct lc_results *const *runs, size_t nruns, struct lc_hindcast **out);
void lc_hindcast_free(struct lc_hindcast *h, size_t n);
/* The hindcasts as a JSON array under key (a missing one with its fs, metric and reason). */
void lc_hindcast_json(struct json *j, const char *key, const struct lc_hindcast *h, size_t n);

/*
 * What the original experiment measured at 10^9 files (Ric Wheeler, "One billion files",
 * LinuxCon 2010): theirs, on 2010 hardware, not measured here. Shown beside the projections so a
 * reader can set the two side by side.
 */
struct lc_reference {
	const char *fs;
	int metric;        /* as lc_metric_of */
	double value;      /* in unit, approximate */
	const char *unit;  /* "s", "KiB" */
	const char *what;  /* what was measured, in the talk's words */
	const char *stated; /* the figure as the talk put it */
};
#define LC_REFERENCE_FILES 1e9
extern const struct lc_reference lc_reference_2010[];
extern const size_t lc_nreference_2010;
/* The 2010 figure for fs and metric, or NULL. */
const struct lc_reference *lc_reference_for(const char *fs, int metric);
/* The 2010 figures as a JSON object under key, with their source. */
void lc_reference_json(struct json *j, const char *key);

#endif
