/*
 * flat: where a phase's rate drops and stays down, and whether myriad's own memory stays flat
 * across scales (see flat.h).
 */
#include "lifecycle/flat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* ---- the rate over one run ---- */

/* The grid the timeline is judged on: GRID steps of D/GRID (0.5% of the run), so the rule reads
 * the same whatever the sampling interval (the timeline doubles its interval as it fills). */
#define GRID 200

/* A timeline with the points that go back in time or count left out. */
struct curve {
	double *t, *v;
	size_t n;
};

/* v at time s, interpolated linearly between the points (clamped at the ends). */
static double v_at(const struct curve *c, double s)
{
	if (s <= c->t[0])
		return c->v[0];
	if (s >= c->t[c->n - 1])
		return c->v[c->n - 1];
	size_t lo = 0, hi = c->n - 1;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (c->t[mid] <= s)
			lo = mid;
		else
			hi = mid;
	}
	return c->v[lo] + (c->v[hi] - c->v[lo]) * (s - c->t[lo]) / (c->t[hi] - c->t[lo]);
}

/* The mean rate over [a, b]. */
static double rate_over(const struct curve *c, double a, double b)
{
	return (v_at(c, b) - v_at(c, a)) / (b - a);
}

/*
 * Where the step is, near grid index i (the first index the rule accepts, at most one window
 * after the step): the time where the rate, smoothed over a window centred on it, crosses halfway
 * from the level before (the window before i) to the level after (the window after next). On a
 * clean step that crossing is the step itself, where the rule's own index can be half a window
 * early.
 */
static double step_time(const struct curve *c, int i, double h)
{
	const int W = (int)lround(LC_DROP_WINDOW * GRID);
	double t0 = c->t[0], w = W * h;
	double before = rate_over(c, t0 + (i - W) * h, t0 + i * h);
	double after = rate_over(c, t0 + (i + W) * h, t0 + (i + 2 * W) * h);
	double mid = (before + after) / 2, prev_u = NAN, prev_r = NAN;
	for (int k = i - W > W / 2 ? i - W : W / 2; k <= i + W; k++) {
		double u = t0 + k * h, r = rate_over(c, u - w / 2, u + w / 2);
		if (r <= mid) {
			if (isnan(prev_r) || prev_r == r)
				return u;
			return prev_u + (u - prev_u) * (prev_r - mid) / (prev_r - r);
		}
		prev_u = u, prev_r = r;
	}
	return t0 + i * h;
}

/* The first grid index where every window after it, up to the tail and for at least the lasting
 * stretch, runs below LC_DROP_FRACTION of the window before it; -1 when there is none. */
static int first_drop(const struct curve *c, double h)
{
	const int W = (int)lround(LC_DROP_WINDOW * GRID), cut = GRID - (int)lround(LC_DROP_TAIL * GRID),
		  lasting = (int)lround(LC_DROP_LASTING * GRID);
	double r[GRID + 1], sufmax[GRID + 1];
	for (int j = 0; j + W <= GRID; j++)
		r[j] = rate_over(c, c->t[0] + j * h, c->t[0] + (j + W) * h);
	/* sufmax[j]: the fastest window starting at j or later that ends before the tail. */
	sufmax[cut - W] = r[cut - W];
	for (int j = cut - W - 1; j >= 0; j--)
		sufmax[j] = r[j] > sufmax[j + 1] ? r[j] : sufmax[j + 1];
	for (int i = W; i <= cut - lasting; i++)
		if (r[i - W] > 0 && sufmax[i] < LC_DROP_FRACTION * r[i - W])
			return i;
	return -1;
}

bool lc_rate_shape(const struct lc_point *tl, size_t n, struct lc_rate_shape *out)
{
	memset(out, 0, sizeof(*out));
	struct curve c = {xmalloc((n + 1) * sizeof(double)), xmalloc((n + 1) * sizeof(double)), 0};
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(tl[i].t) || !isfinite(tl[i].v))
			continue;
		if (c.n && (tl[i].t <= c.t[c.n - 1] || tl[i].v < c.v[c.n - 1]))
			continue;
		c.t[c.n] = tl[i].t;
		c.v[c.n++] = tl[i].v;
	}
	double t0 = c.n ? c.t[0] : 0, t1 = c.n ? c.t[c.n - 1] : 0, D = t1 - t0;
	if (c.n >= LC_DROP_MIN_POINTS && D > 0 && c.v[c.n - 1] > c.v[0]) {
		out->judged = true;
		out->first_tenth = rate_over(&c, t0, t0 + D / 10);
		out->last_tenth = rate_over(&c, t1 - D / 10, t1);
		double h = D / GRID;
		int i = first_drop(&c, h);
		if (i >= 0) {
			double u = step_time(&c, i, h);
			out->drop = true;
			out->at_s = u;
			out->at_count = v_at(&c, u);
			out->before = (out->at_count - c.v[0]) / (u - t0);
			out->after = (c.v[c.n - 1] - out->at_count) / (t1 - u);
			out->fall = out->before > 0 ? 1 - out->after / out->before : NAN;
		}
	}
	free(c.t);
	free(c.v);
	return out->judged;
}

void lc_rate_shape_json(struct json *j, const struct lc_point *tl, size_t n, double host_mem_kib)
{
	struct lc_rate_shape s;
	if (!lc_rate_shape(tl, n, &s))
		return;
	json_open(j, "rate_tenths", '{');
	json_double(j, "first", s.first_tenth);
	json_double(j, "last", s.last_tenth);
	json_close(j, '}');
	if (!s.drop) {
		json_null(j, "rate_drop");
		return;
	}
	json_open(j, "rate_drop", '{');
	json_double(j, "at_count", round(s.at_count));
	json_double(j, "at_s", s.at_s);
	json_double(j, "before", s.before);
	json_double(j, "after", s.after);
	json_double(j, "fall_percent", s.fall * 100);
	if (isfinite(host_mem_kib) && host_mem_kib > 0 && s.at_count >= 1)
		json_double(j, "host_mem_bytes_per_file", round(host_mem_kib * 1024 / s.at_count));
	json_close(j, '}');
}

/* ---- myriad's own memory across scales ---- */

const int lc_myriad_phases[] = {PH_FILL, PH_WALK, PH_WALK_STAT, PH_VERIFY, PH_RM};
const size_t lc_nmyriad_phases = sizeof(lc_myriad_phases) / sizeof(lc_myriad_phases[0]);

/* The row of series s and phase k, from the smallest and the largest scale with a peak RSS;
 * false when fewer than two scales have one. */
static bool rss_row(const struct lc_results *R, const struct lc_series *s, int k, struct lc_rss_flat *f)
{
	*f = (struct lc_rss_flat){.fs = s->fs, .phase = k, .small_n = INFINITY, .large_n = -1};
	for (size_t i = 0; i < R->ncycles; i++) {
		const struct lc_cycle *c = &R->cycles[i];
		const struct lc_phase *p = &c->ph[k];
		if (strcmp(c->fs, s->fs) || p->status != LC_OK || !isfinite(p->peak_rss_kib) || !(p->peak_rss_kib > 0))
			continue;
		double n = (double)c->files;
		if (n <= f->small_n)
			f->small_n = n, f->small_kib = p->peak_rss_kib;
		if (n >= f->large_n)
			f->large_n = n, f->large_kib = p->peak_rss_kib;
	}
	if (!(f->large_n > f->small_n))
		return false;
	f->ratio = f->large_kib / f->small_kib;
	f->flat = f->ratio <= LC_RSS_FLAT_RATIO;
	return true;
}

size_t lc_rss_flatness(struct lc_results *const *runs, size_t nruns, struct lc_rss_flat **out)
{
	struct lc_series *ser;
	size_t nser = lc_series_collect(runs, nruns, &ser), n = 0;
	struct lc_rss_flat *f = xcalloc(nser * lc_nmyriad_phases + 1, sizeof(*f));
	for (size_t s = 0; s < nser; s++)
		for (size_t k = 0; k < lc_nmyriad_phases; k++)
			if (rss_row(runs[ser[s].run], &ser[s], lc_myriad_phases[k], &f[n]))
				f[n++].series = xstrdup(ser[s].name);
	lc_series_free(ser, nser);
	*out = f;
	return n;
}

void lc_rss_flat_free(struct lc_rss_flat *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(f[i].series);
	free(f);
}

void lc_rss_flat_json(struct json *j, const char *key, const struct lc_rss_flat *f, size_t n)
{
	json_open(j, key, '{');
	json_double(j, "flat_within", LC_RSS_FLAT_RATIO);
	json_str(j, "note", "peak RSS of each myriad phase at the largest scale over the smallest, per filesystem");
	json_open(j, "phases", '[');
	for (size_t i = 0; i < n; i++) {
		json_open(j, NULL, '{');
		json_str(j, "fs", f[i].series);
		json_str(j, "phase", lc_phases[f[i].phase].name);
		json_double(j, "smallest_files", f[i].small_n);
		json_double(j, "smallest_peak_rss_kib", f[i].small_kib);
		json_double(j, "largest_files", f[i].large_n);
		json_double(j, "largest_peak_rss_kib", f[i].large_kib);
		json_double(j, "ratio", f[i].ratio);
		json_str(j, "verdict", f[i].flat ? "flat" : "grows");
		json_close(j, '}');
	}
	json_close(j, ']');
	json_close(j, '}');
}
