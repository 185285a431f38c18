/*
 * fit: the linear and power-law fits and the projections made from them (see fit.h). Every
 * series and metric with enough distinct scales gets one; the model that explains more of the
 * variation projects, and a fit that says a time shrinks with more files projects nothing.
 */
#include "report/fit.h"

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

size_t lc_projections(struct lc_results *const *runs, size_t nruns, double files, struct lc_proj **out)
{
	struct lc_series *ser;
	size_t nser = lc_series_collect(runs, nruns, &ser), n = 0;
	struct lc_proj *p = NULL;
	int metrics[PH_N + 2], nm = 0;
	for (int i = 0; i < PH_N; i++)
		if (lc_phases[i].chart)
			metrics[nm++] = i;
	metrics[nm++] = -1;
	metrics[nm++] = -2;
	for (size_t s = 0; s < nser; s++)
		for (int m = 0; m < nm; m++) {
			const struct lc_results *r = runs[ser[s].run];
			double *x = xmalloc((r->ncycles + 1) * sizeof(double)), *y = xmalloc((r->ncycles + 1) * sizeof(double));
			int k = 0;
			double ln = 0, lv = 0;
			for (size_t i = 0; i < r->ncycles; i++) {
				const struct lc_cycle *c = &r->cycles[i];
				double v;
				if (strcmp(c->fs, ser[s].fs) || !lc_metric_of(c, metrics[m], &v))
					continue;
				x[k] = (double)c->files, y[k] = v;
				if (x[k] >= ln)
					ln = x[k], lv = v;
				k++;
			}
			struct lc_fit fit;
			if (k >= 2 && lc_fit(x, y, k, files, &fit)) {
				p = xrealloc(p, (n + 1) * sizeof(*p));
				p[n] = (struct lc_proj){
				    .series = xstrdup(ser[s].name),
				    .what = metrics[m] >= 0 ? lc_phases[metrics[m]].title
					    : metrics[m] == -1 ? "checker peak RSS"
							       : "xfs_repair stated minimum memory",
				    .unit = metrics[m] >= 0 ? "s" : "KiB",
				    .fit = fit,
				    .largest_n = ln,
				    .largest_v = lv,
				};
				n++;
			}
			free(x);
			free(y);
		}
	lc_series_free(ser, nser);
	*out = p;
	return n;
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
