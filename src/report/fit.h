/*
 * fit: least-squares fits of a measured metric against the file count, and the projections they
 * give to a scale nobody measured (a billion files). Both results.json (report/results) and the
 * page (report/page) carry them; each is an extrapolation, and says so where it is shown.
 */
#ifndef MYRIAD_FIT_H
#define MYRIAD_FIT_H

#include <stdbool.h>
#include <stddef.h>

#include "report/json.h"
#include "report/results.h"

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
/* Free what lc_projections returned. */
void lc_proj_free(struct lc_proj *p, size_t n);
/* The projections as a JSON array under key. */
void lc_proj_json(struct json *j, const char *key, const struct lc_proj *p, size_t n, double files);

#endif
