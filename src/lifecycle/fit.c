/*
 * fit: the linear and power-law fits and the projections made from them (see fit.h). Every
 * series and metric with enough distinct scales gets one; the model that explains more of the
 * variation projects, and a fit that says a time shrinks with more files projects nothing.
 */
#include "lifecycle/fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* ---- fits ---- */

static double r2_of(const double *x, const double *y, int n, double (*f)(const struct lc_fit *, double),
		    const struct lc_fit *fit)
{
	double mean = 0, ssr = 0, sst = 0;
	for (int i = 0; i < n; i++)
		mean += y[i];
	mean /= n;
	for (int i = 0; i < n; i++) {
		double e = y[i] - f(fit, x[i]);
		ssr += e * e;
		sst += (y[i] - mean) * (y[i] - mean);
	}
	if (sst <= 0)
		return ssr <= 1e-300 ? 1 : 0;
	return 1 - ssr / sst;
}

static double f_lin(const struct lc_fit *f, double x) { return f->a + f->b * x; }
static double f_pow(const struct lc_fit *f, double x) { return f->c * pow(x, f->k); }

static void least_squares(const double *x, const double *y, int n, double *a, double *b)
{
	double mx = 0, my = 0, sxx = 0, sxy = 0;
	for (int i = 0; i < n; i++)
		mx += x[i], my += y[i];
	mx /= n, my /= n;
	for (int i = 0; i < n; i++) {
		sxx += (x[i] - mx) * (x[i] - mx);
		sxy += (x[i] - mx) * (y[i] - my);
	}
	*b = sxx > 0 ? sxy / sxx : 0;
	*a = my - *b * mx;
}

bool lc_fit(const double *x, const double *y, int n, double at, struct lc_fit *f)
{
	memset(f, 0, sizeof(*f));
	f->n = n;
	int distinct = 0;
	for (int i = 0; i < n; i++) {
		bool seen = false;
		for (int j = 0; j < i; j++)
			seen |= x[j] == x[i];
		distinct += !seen;
	}
	if (distinct < LC_FIT_MIN_SCALES)
		return false; /* two points fit any model exactly: they tell nothing of the trend */
	least_squares(x, y, n, &f->a, &f->b);
	f->r2_lin = r2_of(x, y, n, f_lin, f);
	f->have_pow = true;
	for (int i = 0; i < n; i++)
		if (!(x[i] > 0 && y[i] > 0))
			f->have_pow = false;
	if (f->have_pow) {
		double *lx = xmalloc(n * sizeof(double)), *ly = xmalloc(n * sizeof(double)), la;
		for (int i = 0; i < n; i++)
			lx[i] = log(x[i]), ly[i] = log(y[i]);
		least_squares(lx, ly, n, &la, &f->k);
		f->c = exp(la);
		f->r2_pow = r2_of(x, y, n, f_pow, f);
		free(lx);
		free(ly);
	}
	double lin = f_lin(f, at);
	double best = f->have_pow && f->r2_pow > f->r2_lin ? f->r2_pow : f->r2_lin;
	if (best < 0.5) {
		/* Neither model explains the variation (e.g. mount time): no trend, project the mean. */
		double m = 0;
		for (int i = 0; i < n; i++)
			m += y[i];
		f->model = "constant";
		f->projected = m / n;
		return true;
	}
	/* Ties go to the power law, which cannot project below zero. */
	bool pow_wins = f->have_pow && (f->r2_pow >= f->r2_lin || lin <= 0);
	if (pow_wins ? f->k < 0 : f->b < 0) {
		f->model = "no trend";
		f->projected = NAN;
	} else if (pow_wins) {
		f->model = "power";
		f->projected = f_pow(f, at);
	} else {
		f->model = "linear";
		f->projected = lin;
	}
	return true;
}

/* ---- the metrics of a series ---- */

/* Every metric that is fitted: each charted phase's time, the checker's peak RSS (-1) and
 * xfs_repair's stated minimum (-2). Returns the count. */
static int metric_list(int metrics[PH_N + 2])
{
	int nm = 0;
	for (int i = 0; i < PH_N; i++)
		if (lc_phases[i].chart)
			metrics[nm++] = i;
	metrics[nm++] = -1;
	metrics[nm++] = -2;
	return nm;
}

static const char *metric_what(int m)
{
	return m >= 0 ? lc_phases[m].title : m == -1 ? "checker peak RSS" : "xfs_repair stated minimum memory";
}

static const char *metric_unit(int m) { return m >= 0 ? "s" : "KiB"; }

/* The phase whose status says whether metric m ran. */
static int metric_phase(int m) { return m >= 0 ? m : m == -1 ? PH_CHECK : PH_CHECK_MINMEM; }

/* The points of metric m of filesystem fs in r into x and y (room for r->ncycles): each measured
 * value, and with failed also each cycle where the phase ran without measuring it (y NAN), so a
 * hindcast knows the largest scale failed. A checker's peak RSS under a limit of its own is not a
 * point at all: it measured the limit (lc_check_self_limited). Returns the count. */
static int points_of(const struct lc_results *r, const char *fs, int m, bool failed, double *x, double *y)
{
	int k = 0;
	for (size_t i = 0; i < r->ncycles; i++) {
		const struct lc_cycle *c = &r->cycles[i];
		double v;
		if (strcmp(c->fs, fs) || (m == -1 && lc_check_self_limited(&c->ph[PH_CHECK])))
			continue;
		if (lc_metric_of(c, m, &v))
			x[k] = (double)c->files, y[k++] = v;
		else if (failed && c->ph[metric_phase(m)].status != LC_NOT_RUN)
			x[k] = (double)c->files, y[k++] = NAN;
	}
	return k;
}

/* Call each(ctx, series, metric, x, y, k) for every series of runs and every metric, with the
 * k points of that metric (points_of, failed as given). The one loop projections and hindcasts
 * share. */
static void each_series_metric(struct lc_results *const *runs, size_t nruns, bool failed,
			       void (*each)(void *ctx, const struct lc_series *s, int m, const double *x,
					    const double *y, int k),
			       void *ctx)
{
	struct lc_series *ser;
	size_t nser = lc_series_collect(runs, nruns, &ser);
	int metrics[PH_N + 2], nm = metric_list(metrics);
	for (size_t s = 0; s < nser; s++)
		for (int m = 0; m < nm; m++) {
			const struct lc_results *r = runs[ser[s].run];
			double *x = xmalloc((r->ncycles + 1) * sizeof(double)), *y = xmalloc((r->ncycles + 1) * sizeof(double));
			int k = points_of(r, ser[s].fs, metrics[m], failed, x, y);
			each(ctx, &ser[s], metrics[m], x, y, k);
			free(x);
			free(y);
		}
	lc_series_free(ser, nser);
}

struct proj_acc {
	struct lc_proj *p;
	size_t n;
	double files;
};

/* One series and metric's projection to acc->files, when its points allow a fit. */
static void proj_one(void *ctx, const struct lc_series *s, int m, const double *x, const double *y, int k)
{
	struct proj_acc *acc = ctx;
	double ln = 0, lv = 0;
	for (int i = 0; i < k; i++)
		if (x[i] >= ln)
			ln = x[i], lv = y[i];
	struct lc_fit fit;
	if (k < 2 || !lc_fit(x, y, k, acc->files, &fit))
		return;
	acc->p = xrealloc(acc->p, (acc->n + 1) * sizeof(*acc->p));
	acc->p[acc->n++] = (struct lc_proj){
	    .series = xstrdup(s->name),
	    .fs = s->fs,
	    .metric = m,
	    .what = metric_what(m),
	    .unit = metric_unit(m),
	    .fit = fit,
	    .largest_n = ln,
	    .largest_v = lv,
	};
}

size_t lc_projections(struct lc_results *const *runs, size_t nruns, double files, struct lc_proj **out)
{
	struct proj_acc acc = {NULL, 0, files};
	each_series_metric(runs, nruns, false, proj_one, &acc);
	*out = acc.p;
	return acc.n;
}

void lc_proj_free(struct lc_proj *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(p[i].series);
	free(p);
}

void lc_proj_json(struct json *j, const char *key, const struct lc_proj *p, size_t n, double files)
{
	json_open(j, key, '[');
	for (size_t i = 0; i < n; i++) {
		json_open(j, NULL, '{');
		json_str(j, "fs", p[i].series);
		json_str(j, "metric", p[i].what);
		json_str(j, "unit", p[i].unit);
		json_u64(j, "points", p[i].fit.n);
		json_open(j, "linear", '{');
		json_double(j, "a", p[i].fit.a);
		json_double(j, "b", p[i].fit.b);
		json_double(j, "r2", p[i].fit.r2_lin);
		json_close(j, '}');
		if (p[i].fit.have_pow) {
			json_open(j, "power", '{');
			json_double(j, "c", p[i].fit.c);
			json_double(j, "k", p[i].fit.k);
			json_double(j, "r2", p[i].fit.r2_pow);
			json_close(j, '}');
		}
		json_str(j, "model", p[i].fit.model);
		json_double(j, "files", files);
		json_double(j, "projected", p[i].fit.projected);
		json_close(j, '}');
	}
	json_close(j, ']');
}

/* ---- hindcasts ---- */

#define STR_(x) #x
#define STR(x) STR_(x)

bool lc_hindcast_of(const double *x, const double *y, int n, struct lc_hindcast *h)
{
	h->why = NULL;
	h->at = 0, h->measured = NAN, h->fitted_up_to = 0, h->points = 0;
	h->predicted = h->ratio = h->percent = h->factor = NAN;
	memset(&h->fit, 0, sizeof(h->fit));
	for (int i = 0; i < n; i++)
		if (x[i] > h->at)
			h->at = x[i];
	for (int i = 0; i < n; i++)
		if (x[i] == h->at && isfinite(y[i]))
			h->measured = y[i]; /* the last one there, as the page's tables show */
	/* N/10 as x*10 <= N: exact for the decimal scales lifecycle runs (10^5 * 10 == 10^6). */
	double *fx = xmalloc((n + 1) * sizeof(double)), *fy = xmalloc((n + 1) * sizeof(double));
	for (int i = 0; i < n; i++)
		if (isfinite(y[i]) && x[i] * 10 <= h->at) {
			fx[h->points] = x[i], fy[h->points++] = y[i];
			if (x[i] > h->fitted_up_to)
				h->fitted_up_to = x[i];
		}
	bool fitted = h->points >= 2 && lc_fit(fx, fy, h->points, h->at, &h->fit);
	free(fx);
	free(fy);
	if (!isfinite(h->measured))
		h->why = "nothing measured at N (the phase failed or was skipped there)";
	else if (!fitted)
		h->why = "needs " STR(LC_FIT_MIN_SCALES) " scales at or below N/10";
	else if (!isfinite(h->fit.projected))
		h->why = "the fit at or below N/10 has no trend (it shrinks as files grow)";
	else if (!(h->measured > 0))
		h->why = "measured 0 at N: no ratio";
	if (h->why)
		return false;
	h->predicted = h->fit.projected;
	h->ratio = h->predicted / h->measured;
	h->percent = (h->ratio - 1) * 100;
	h->factor = h->at / h->fitted_up_to;
	return true;
}

struct hind_acc {
	struct lc_hindcast *h;
	size_t n;
};

/* One series and metric's hindcast, when anything was measured. */
static void hind_one(void *ctx, const struct lc_series *s, int m, const double *x, const double *y, int k)
{
	struct hind_acc *acc = ctx;
	bool any = false;
	for (int i = 0; i < k; i++)
		any |= isfinite(y[i]);
	if (!any)
		return;
	acc->h = xrealloc(acc->h, (acc->n + 1) * sizeof(*acc->h));
	struct lc_hindcast *h = &acc->h[acc->n++];
	lc_hindcast_of(x, y, k, h);
	h->series = xstrdup(s->name);
	h->fs = s->fs;
	h->metric = m;
	h->what = metric_what(m);
	h->unit = metric_unit(m);
}

size_t lc_hindcasts(struct lc_results *const *runs, size_t nruns, struct lc_hindcast **out)
{
	struct hind_acc acc = {NULL, 0};
	each_series_metric(runs, nruns, true, hind_one, &acc);
	*out = acc.h;
	return acc.n;
}

void lc_hindcast_free(struct lc_hindcast *h, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(h[i].series);
	free(h);
}

void lc_hindcast_json(struct json *j, const char *key, const struct lc_hindcast *h, size_t n)
{
	json_open(j, key, '[');
	for (size_t i = 0; i < n; i++) {
		json_open(j, NULL, '{');
		json_str(j, "fs", h[i].series);
		json_str(j, "metric", h[i].what);
		json_str(j, "unit", h[i].unit);
		json_double(j, "at", h[i].at);
		json_double(j, "measured", h[i].measured);
		if (h[i].why) {
			json_str(j, "reason", h[i].why);
		} else {
			json_double(j, "fitted_up_to", h[i].fitted_up_to);
			json_u64(j, "points", (uint64_t)h[i].points);
			json_str(j, "model", h[i].fit.model);
			json_double(j, "predicted", h[i].predicted);
			json_double(j, "ratio", h[i].ratio);
			json_double(j, "percent", h[i].percent);
			json_double(j, "extrapolation", h[i].factor);
		}
		json_close(j, '}');
	}
	json_close(j, ']');
}

/* ---- the original experiment's figures ---- */

/*
 * Ric Wheeler, "One billion files: pushing scalability limits of Linux filesystems", LinuxCon
 * 2010: ext4 at 10^9 files took about 4 hours to mkfs, about 4 days to create the files, and its
 * fsck about 2.5 hours needing about 10 GB of RAM; XFS's checker needed about 30 GB. 2010
 * hardware: an order of magnitude to set beside the projections, nothing more.
 */
const struct lc_reference lc_reference_2010[] = {
    {"ext4", PH_MKFS, 4 * 3600.0, "s", "mkfs", "about 4 hours"},
    {"ext4", PH_FILL, 4 * 86400.0, "s", "creating the files", "about 4 days"},
    {"ext4", PH_CHECK, 2.5 * 3600, "s", "fsck", "about 2.5 hours"},
    {"ext4", -1, 10e9 / 1024, "KiB", "fsck's memory", "about 10 GB"},
    {"xfs", -1, 30e9 / 1024, "KiB", "xfs_repair's memory", "about 30 GB"},
};
const size_t lc_nreference_2010 = sizeof(lc_reference_2010) / sizeof(lc_reference_2010[0]);

const struct lc_reference *lc_reference_for(const char *fs, int metric)
{
	for (size_t i = 0; i < lc_nreference_2010; i++)
		if (lc_reference_2010[i].metric == metric && !strcmp(lc_reference_2010[i].fs, fs))
			return &lc_reference_2010[i];
	return NULL;
}

void lc_reference_json(struct json *j, const char *key)
{
	json_open(j, key, '{');
	json_str(j, "source", "Ric Wheeler, \"One billion files\", LinuxCon 2010");
	json_str(j, "note", "the original experiment's figures on 2010 hardware, not measured here");
	json_double(j, "files", LC_REFERENCE_FILES);
	json_open(j, "figures", '[');
	for (size_t i = 0; i < lc_nreference_2010; i++) {
		const struct lc_reference *r = &lc_reference_2010[i];
		json_open(j, NULL, '{');
		json_str(j, "fs", r->fs);
		json_str(j, "metric", metric_what(r->metric));
		json_str(j, "what", r->what);
		json_str(j, "unit", r->unit);
		json_double(j, "value", r->value);
		json_str(j, "stated", r->stated);
		json_close(j, '}');
	}
	json_close(j, ']');
	json_close(j, '}');
}
