/*
 * plot: lifecycle results — the model's JSON form and reading it back, the fits and projections,
 * and report.html with gnuplot's SVG charts inlined (see plot.h).
 */
#include "report/plot.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report/jsonread.h"
#include "util/sbuf.h"
#include "util/util.h"

const struct lc_phase_info lc_phases[PH_N] = {
    [PH_ATTACH] = {"attach", "attach loop device", false},
    [PH_MKFS] = {"mkfs", "mkfs", true},
    [PH_MOUNT] = {"mount", "mount (empty)", true},
    [PH_FILL] = {"fill", "create files (myriad fill)", true},
    [PH_DROP1] = {"drop_caches", "sync + drop caches", false},
    [PH_WALK] = {"walk", "walk, cold cache (myriad walk)", true},
    [PH_DROP2] = {"drop_caches_2", "drop caches", false},
    [PH_WALK_STAT] = {"walk_stat", "walk --stat, cold cache", true},
    [PH_UMOUNT] = {"umount", "umount (full)", true},
    [PH_CHECK] = {"check", "filesystem check, read-only", true},
    [PH_CHECK_MINMEM] = {"check_min_memory", "xfs_repair -n -m 1 (stated minimum memory)", false},
    [PH_REMOUNT] = {"remount", "mount (full)", true},
    [PH_VERIFY] = {"verify", "verify --quick", true},
    [PH_RM] = {"rm", "remove all files (myriad rm)", true},
    [PH_UMOUNT2] = {"umount_2", "umount (empty)", false},
    [PH_DETACH] = {"detach", "detach loop device", false},
};

const char *const lc_status_names[] = {"not_run", "ok", "failed", "skipped"};

int lc_phase_by_name(const char *name)
{
	for (int i = 0; i < PH_N; i++)
		if (!strcmp(lc_phases[i].name, name))
			return i;
	return -1;
}

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

/* ---- series: one filesystem of one run ---- */

struct series {
	char *name;
	const char *fs;
	int run;
};

static size_t collect_series(struct lc_results *const *runs, size_t nruns, struct series **out)
{
	struct series *s = NULL;
	size_t n = 0;
	for (size_t r = 0; r < nruns; r++)
		for (size_t i = 0; i < runs[r]->ncycles; i++) {
			const char *fs = runs[r]->cycles[i].fs;
			bool seen = false;
			for (size_t k = 0; k < n; k++)
				seen |= s[k].run == (int)r && !strcmp(s[k].fs, fs);
			if (seen)
				continue;
			s = xrealloc(s, (n + 1) * sizeof(*s));
			struct sbuf name = {0};
			if (nruns > 1)
				sbuf_printf(&name, "%s (run %zu)", fs, r + 1);
			else
				sbuf_adds(&name, fs);
			sbuf_addc(&name, 0);
			s[n++] = (struct series){name.data, fs, (int)r};
		}
	*out = s;
	return n;
}

static void free_series(struct series *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(s[i].name);
	free(s);
}

/* metric: a phase's wall time (phase >= 0), or -1 checker peak RSS, -2 xfs_repair's minimum. */
static bool metric_of(const struct lc_cycle *c, int metric, double *v)
{
	if (metric >= 0) {
		const struct lc_phase *p = &c->ph[metric];
		*v = p->wall_s;
		return p->status == LC_OK && isfinite(p->wall_s);
	}
	if (metric == -1) {
		const struct lc_phase *p = &c->ph[PH_CHECK];
		*v = p->peak_rss_kib;
		return p->status == LC_OK && isfinite(p->peak_rss_kib) && p->peak_rss_kib > 0;
	}
	const struct lc_phase *p = &c->ph[PH_CHECK_MINMEM];
	*v = p->min_mem_kib;
	return isfinite(p->min_mem_kib) && p->min_mem_kib > 0;
}

size_t lc_projections(struct lc_results *const *runs, size_t nruns, double files, struct lc_proj **out)
{
	struct series *ser;
	size_t nser = collect_series(runs, nruns, &ser), n = 0;
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
				if (strcmp(c->fs, ser[s].fs) || !metric_of(c, metrics[m], &v))
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
	free_series(ser, nser);
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

/* ---- results.json ---- */

static void str_or_null(struct json *j, const char *key, const char *s)
{
	if (s)
		json_str(j, key, s);
	else
		json_null(j, key);
}

void lc_results_json(const struct lc_results *r, struct sbuf *out)
{
	struct json j;
	json_init(&j, out);
	json_open(&j, NULL, '{');
	json_header(&j, "lifecycle");
	json_bool(&j, "complete", r->complete);
	str_or_null(&j, "started", r->started);
	str_or_null(&j, "updated", r->updated);
	json_open(&j, "host", '{');
	str_or_null(&j, "kernel", r->kernel);
	str_or_null(&j, "cpu_model", r->cpu_model);
	json_double(&j, "cpus", r->cpus);
	json_double(&j, "mem_kib", r->mem_kib);
	json_close(&j, '}');
	json_open(&j, "tools", '{');
	for (size_t i = 0; i < r->ntools; i++)
		json_str(&j, r->tools[i].k, r->tools[i].v);
	json_close(&j, '}');
	json_open(&j, "config", '{');
	json_double(&j, "files", r->files);
	json_open(&j, "scales", '[');
	for (size_t i = 0; i < r->nscales; i++)
		json_u64(&j, NULL, r->scales[i]);
	json_close(&j, ']');
	json_double(&j, "project", r->project);
	json_double(&j, "size", r->size);
	str_or_null(&j, "image_dir", r->image_dir);
	str_or_null(&j, "device", r->device);
	json_bool(&j, "gnuplot", r->gnuplot);
	json_close(&j, '}');
	json_open(&j, "cycles", '[');
	for (size_t i = 0; i < r->ncycles; i++) {
		const struct lc_cycle *c = &r->cycles[i];
		json_open(&j, NULL, '{');
		json_str(&j, "fs", c->fs);
		json_u64(&j, "files", c->files);
		json_bool(&j, "complete", c->complete);
		str_or_null(&j, "image", c->image);
		json_double(&j, "image_bytes", c->image_bytes);
		str_or_null(&j, "device", c->device);
		str_or_null(&j, "mkfs_options", c->mkfs_options);
		if (c->lazy_itable_init >= 0)
			json_bool(&j, "lazy_itable_init", c->lazy_itable_init);
		else
			json_null(&j, "lazy_itable_init");
		if (c->have_usage) {
			json_open(&j, "after_fill", '{');
			json_double(&j, "bytes_total", c->bytes_total);
			json_double(&j, "bytes_used", c->bytes_used);
			json_double(&j, "inodes_total", c->inodes_total);
			json_double(&j, "inodes_used", c->inodes_used);
			json_close(&j, '}');
		}
		json_open(&j, "phases", '[');
		for (int k = 0; k < PH_N; k++) {
			const struct lc_phase *p = &c->ph[k];
			if (p->status == LC_NOT_RUN)
				continue;
			json_open(&j, NULL, '{');
			json_str(&j, "name", lc_phases[k].name);
			json_str(&j, "status", lc_status_names[p->status]);
			if (p->exit_status >= 0)
				json_i64(&j, "exit_status", p->exit_status);
			else
				json_null(&j, "exit_status");
			json_double(&j, "wall_s", p->wall_s);
			json_double(&j, "peak_rss_kib", p->peak_rss_kib);
			if (isfinite(p->rate)) {
				json_double(&j, "rate", p->rate);
				json_str(&j, "rate_unit", p->rate_unit ? p->rate_unit : "per s");
			}
			if (isfinite(p->min_mem_kib))
				json_double(&j, "min_memory_kib", p->min_mem_kib);
			str_or_null(&j, "error", p->error);
			str_or_null(&j, "command", p->command);
			if (p->ntl) {
				json_open(&j, "timeline", '[');
				for (size_t t = 0; t < p->ntl; t++) {
					json_open(&j, NULL, '[');
					json_double(&j, NULL, p->tl[t].t);
					json_double(&j, NULL, p->tl[t].v);
					json_double(&j, NULL, p->tl[t].rate);
					json_close(&j, ']');
				}
				json_close(&j, ']');
			}
			json_close(&j, '}');
		}
		json_close(&j, ']');
		json_close(&j, '}');
	}
	json_close(&j, ']');
	struct lc_results *one = (struct lc_results *)r;
	struct lc_proj *p;
	size_t np = lc_projections(&one, 1, r->project, &p);
	json_open(&j, "projection", '{');
	json_double(&j, "files", r->project);
	json_str(&j, "note", "an extrapolation from the measured scales by least squares, not a measurement");
	lc_proj_json(&j, "fits", p, np, r->project);
	json_close(&j, '}');
	lc_proj_free(p, np);
	json_close(&j, '}');
	sbuf_addc(out, '\n');
}

static char *dup_or_null(const char *s) { return s ? xstrdup(s) : NULL; }

static double num_or_nan(const struct jv *v, const char *key) { return jv_num(v, key, NAN); }

static const char *rate_unit_of(const char *s)
{
	if (!s)
		return NULL;
	return !strcmp(s, "files/s") ? "files/s" : !strcmp(s, "entries/s") ? "entries/s" : "per s";
}

/* A count read back from JSON (a double): NAN, negative, fractional or huge values are not one. */
static bool count_of(const struct jv *v, const char *key, uint64_t *out)
{
	double d = jv_num(v, key, NAN);
	if (!(d >= 0 && d < 18446744073709551616.0) || d != floor(d))
		return false;
	*out = (uint64_t)d;
	return true;
}

/* exit_status: a small non-negative integer, or -1 (null: none). */
static int exit_status_of(const struct jv *v)
{
	double d = jv_num(v, "exit_status", -1);
	return d >= 0 && d <= 255 && d == floor(d) ? (int)d : -1;
}

/* One cycle object into c (cleared by the caller on failure). NULL, or what is wrong. */
static const char *cycle_from_json(const struct jv *o, struct lc_cycle *c)
{
	for (int k = 0; k < PH_N; k++) {
		c->ph[k].exit_status = -1;
		c->ph[k].wall_s = c->ph[k].peak_rss_kib = c->ph[k].rate = c->ph[k].min_mem_kib = NAN;
	}
	if (o->type != JV_OBJ || !jv_str(o, "fs", NULL))
		return "not an object with a filesystem name (fs)";
	c->fs = xstrdup(jv_str(o, "fs", ""));
	if (!count_of(o, "files", &c->files))
		return "files is not a count";
	c->complete = jv_bool(o, "complete", false);
	c->image = dup_or_null(jv_str(o, "image", NULL));
	c->device = dup_or_null(jv_str(o, "device", NULL));
	c->mkfs_options = dup_or_null(jv_str(o, "mkfs_options", NULL));
	c->image_bytes = jv_num(o, "image_bytes", 0);
	const struct jv *li = jv_get(o, "lazy_itable_init");
	c->lazy_itable_init = li && li->type == JV_BOOL ? li->b : -1;
	const struct jv *u = jv_get(o, "after_fill");
	if (u) {
		c->have_usage = true;
		c->bytes_total = num_or_nan(u, "bytes_total");
		c->bytes_used = num_or_nan(u, "bytes_used");
		c->inodes_total = num_or_nan(u, "inodes_total");
		c->inodes_used = num_or_nan(u, "inodes_used");
	}
	const struct jv *ps = jv_get(o, "phases");
	if (ps && ps->type != JV_ARR)
		return "phases is not an array";
	bool seen[PH_N] = {0};
	for (size_t k = 0; ps && k < ps->n; k++) {
		const struct jv *po = &ps->items[k];
		if (po->type != JV_OBJ || !jv_str(po, "name", NULL))
			return "a phase is not an object with a name";
		int id = lc_phase_by_name(jv_str(po, "name", ""));
		if (id < 0)
			continue; /* a phase of a later version */
		if (seen[id])
			return "a phase appears twice";
		seen[id] = true;
		struct lc_phase *p = &c->ph[id];
		const char *st = jv_str(po, "status", "");
		p->status = LC_NOT_RUN;
		for (int s = 1; s <= LC_SKIPPED; s++)
			if (!strcmp(st, lc_status_names[s]))
				p->status = s;
		p->exit_status = exit_status_of(po);
		p->wall_s = num_or_nan(po, "wall_s");
		p->peak_rss_kib = num_or_nan(po, "peak_rss_kib");
		p->rate = num_or_nan(po, "rate");
		p->rate_unit = rate_unit_of(jv_str(po, "rate_unit", NULL));
		p->min_mem_kib = num_or_nan(po, "min_memory_kib");
		p->error = dup_or_null(jv_str(po, "error", NULL));
		p->command = dup_or_null(jv_str(po, "command", NULL));
		const struct jv *tl = jv_get(po, "timeline");
		if (tl && tl->type == JV_ARR && tl->n) {
			p->tl = xcalloc(tl->n, sizeof(*p->tl));
			for (size_t q = 0; q < tl->n; q++) {
				const struct jv *pt = &tl->items[q];
				if (pt->type != JV_ARR || pt->n < 3)
					continue;
				p->tl[p->ntl++] = (struct lc_point){jv_num(&pt->items[0], NULL, 0), jv_num(&pt->items[1], NULL, 0),
								    jv_num(&pt->items[2], NULL, 0)};
			}
		}
	}
	return NULL;
}

struct lc_results *lc_parse(const char *data, size_t len, const char *source, char *err, size_t errlen)
{
	struct jv *d = jv_parse(data, len, err, errlen);
	if (!d)
		return NULL;
	if (d->type != JV_OBJ || strcmp(jv_str(d, "command", ""), "lifecycle") != 0) {
		snprintf(err, errlen, "not the results of myriad lifecycle");
		jv_free(d);
		return NULL;
	}
	const struct jv *cy = jv_get(d, "cycles");
	if (!cy || cy->type != JV_ARR) {
		snprintf(err, errlen, "cycles: missing or not an array");
		jv_free(d);
		return NULL;
	}
	struct lc_results *r = xcalloc(1, sizeof(*r));
	r->source = xstrdup(source);
	r->version = dup_or_null(jv_str(d, "myriad_version", NULL));
	r->started = dup_or_null(jv_str(d, "started", NULL));
	r->updated = dup_or_null(jv_str(d, "updated", NULL));
	r->complete = jv_bool(d, "complete", false);
	const struct jv *h = jv_get(d, "host");
	r->kernel = dup_or_null(jv_str(h, "kernel", NULL));
	r->cpu_model = dup_or_null(jv_str(h, "cpu_model", NULL));
	r->cpus = jv_num(h, "cpus", 0);
	r->mem_kib = jv_num(h, "mem_kib", 0);
	const struct jv *t = jv_get(d, "tools");
	if (t && t->type == JV_OBJ) {
		r->tools = xcalloc(t->n + 1, sizeof(*r->tools));
		for (size_t i = 0; i < t->n; i++)
			if (t->items[i].type == JV_STR)
				r->tools[r->ntools++] = (struct lc_kv){xstrdup(t->keys[i]), xstrdup(t->items[i].str)};
	}
	const struct jv *cf = jv_get(d, "config");
	r->files = jv_num(cf, "files", 0);
	r->project = jv_num(cf, "project", 1e9);
	r->size = jv_num(cf, "size", 0);
	r->image_dir = dup_or_null(jv_str(cf, "image_dir", NULL));
	r->device = dup_or_null(jv_str(cf, "device", NULL));
	r->gnuplot = jv_bool(cf, "gnuplot", false);
	const struct jv *sc = jv_get(cf, "scales");
	if (sc && sc->type == JV_ARR) {
		r->scales = xcalloc(sc->n + 1, sizeof(uint64_t));
		for (size_t i = 0; i < sc->n; i++)
			if (count_of(&sc->items[i], NULL, &r->scales[r->nscales]))
				r->nscales++;
	}
	r->cycles = xcalloc(cy->n + 1, sizeof(struct lc_cycle));
	for (size_t i = 0; i < cy->n; i++) {
		const char *why = cycle_from_json(&cy->items[i], &r->cycles[r->ncycles++]);
		if (why) {
			snprintf(err, errlen, "cycle %zu: %s", i + 1, why);
			lc_free(r);
			jv_free(d);
			return NULL;
		}
	}
	jv_free(d);
	return r;
}

struct lc_results *lc_load(const char *path, char *err, size_t errlen)
{
	struct sbuf b = {0};
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "open: %s", strerror(errno));
		return NULL;
	}
	char buf[65536];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		sbuf_add(&b, buf, n);
	int e = errno;
	close(fd);
	struct lc_results *r = NULL;
	if (n < 0)
		snprintf(err, errlen, "read: %s", strerror(e));
	else
		r = lc_parse(b.data ? b.data : "", b.len, path, err, errlen);
	sbuf_free(&b);
	return r;
}

void lc_cycle_clear(struct lc_cycle *c)
{
	free(c->fs);
	free(c->image);
	free(c->device);
	free(c->mkfs_options);
	for (int k = 0; k < PH_N; k++) {
		free(c->ph[k].error);
		free(c->ph[k].command);
		free(c->ph[k].tl);
	}
	memset(c, 0, sizeof(*c));
}

void lc_free(struct lc_results *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->ncycles; i++)
		lc_cycle_clear(&r->cycles[i]);
	for (size_t i = 0; i < r->ntools; i++) {
		free(r->tools[i].k);
		free(r->tools[i].v);
	}
	free(r->tools);
	free(r->cycles);
	free(r->scales);
	free(r->source);
	free(r->version);
	free(r->started);
	free(r->updated);
	free(r->kernel);
	free(r->cpu_model);
	free(r->image_dir);
	free(r->device);
	free(r);
}

/* ---- files ---- */

int write_file_atomic(const char *path, const char *data, size_t len)
{
	struct sbuf tmp = {0};
	sbuf_printf(&tmp, "%s.tmp.%d", path, (int)getpid());
	sbuf_addc(&tmp, 0);
	int fd = open(tmp.data, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		sbuf_free(&tmp);
		return -1;
	}
	if (write_all(fd, data, len) != 0 || fsync(fd) != 0) {
		int e = errno;
		close(fd);
		unlink(tmp.data);
		sbuf_free(&tmp);
		errno = e;
		return -1;
	}
	close(fd);
	int rc = rename(tmp.data, path);
	int e = errno;
	if (rc != 0)
		unlink(tmp.data);
	sbuf_free(&tmp);
	errno = e;
	return rc;
}

void html_escape(struct sbuf *b, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': sbuf_adds(b, "&lt;"); break;
		case '>': sbuf_adds(b, "&gt;"); break;
		case '&': sbuf_adds(b, "&amp;"); break;
		case '"': sbuf_adds(b, "&quot;"); break;
		default: sbuf_addc(b, *s);
		}
	}
}

/* ---- axis ticks ---- */

/* Format v with at most decimals digits after the point, trailing zeros dropped; si: with a
 * k/M/G suffix chosen by unit (1, 1e3, 1e6, 1e9). */
static void tick_label(struct sbuf *b, double v, int decimals, double unit, bool si)
{
	static const char *const suffix[] = {"", "k", "M", "G", "T"};
	char buf[64];
	snprintf(buf, sizeof(buf), "%.*f", decimals, si ? v / unit : v);
	if (strchr(buf, '.')) {
		char *e = buf + strlen(buf) - 1;
		while (*e == '0')
			*e-- = 0;
		if (*e == '.')
			*e = 0;
	}
	if (!strcmp(buf, "-0"))
		strcpy(buf, "0");
	sbuf_adds(b, buf);
	if (si && v != 0)
		sbuf_adds(b, suffix[(int)lround(log10(unit) / 3)]);
}

/* The SI unit (1, 1e3, 1e6 ...) for labelling values up to m. */
static double si_unit(double m)
{
	double u = 1;
	while (m >= 1000 * u && u < 1e12)
		u *= 1000;
	return u;
}

/* Digits after the point needed to tell ticks step apart, in the given unit. */
static int decimals_for(double step, double unit)
{
	int d = (int)ceil(-log10(step / unit) - 1e-9);
	return d < 0 ? 0 : d > 6 ? 6 : d;
}

void lc_axis_tics(struct sbuf *out, char axis, double lo, double hi, bool logscale, bool si)
{
	if (!(lo <= hi) || !isfinite(lo) || !isfinite(hi) || (logscale && lo <= 0))
		return; /* no data: gnuplot's own */
	double ticks[64];
	int n = 0;
	if (logscale) {
		double decades = log10(hi / lo);
		static const double all[] = {1, 2, 5}, ones[] = {1};
		const double *m = decades <= 3 ? all : ones;
		int nm = decades <= 3 ? 3 : 1;
		double p = pow(10, floor(log10(lo) + 1e-9));
		/* Start at the last tick at or below lo, end at the first at or above hi. */
		int start = 0;
		for (int i = nm - 1; i >= 0; i--)
			if (m[i] * p <= lo * (1 + 1e-9)) {
				start = i;
				break;
			}
		for (int i = start; n < 64; i = (i + 1) % nm) {
			double t = m[i] * p;
			ticks[n++] = t;
			if (t >= hi * (1 - 1e-9))
				break;
			if (i == nm - 1)
				p *= 10;
		}
	} else {
		if (hi == lo)
			hi = lo + (lo ? fabs(lo) : 1);
		double raw = (hi - lo) / 6, p = pow(10, floor(log10(raw))), step = p;
		for (double f = 1; f <= 10; f = f == 1 ? 2 : f == 2 ? 5 : 10)
			if ((step = f * p) >= raw)
				break;
		double first = floor(lo / step + 1e-9) * step, last = ceil(hi / step - 1e-9) * step;
		for (double t = first; t <= last + step / 2 && n < 64; t += step)
			ticks[n++] = fabs(t) < step / 1e6 ? 0 : t;
	}
	if (n < 1)
		return;
	double step = n > 1 ? ticks[1] - ticks[0] : 1;
	/* The range a hair wider than the end ticks, so rounding cannot drop their labels. */
	double lo_r = logscale ? ticks[0] * (1 - 1e-6) : ticks[0] - step * 1e-6;
	double hi_r = logscale ? ticks[n - 1] * (1 + 1e-6) : ticks[n - 1] + step * 1e-6;
	sbuf_printf(out, "set %crange [%.12g:%.12g]\nset %ctics (", axis, lo_r, hi_r, axis);
	for (int i = 0; i < n; i++) {
		/* Each tick in its own unit (200k, 1.2M); log ticks need only their own digits, linear
		 * ones the step's. */
		double u = si ? si_unit(fabs(ticks[i])) : 1;
		int d = decimals_for(logscale ? ticks[i] : step, u);
		sbuf_adds(out, i ? ", \"" : "\"");
		tick_label(out, ticks[i], d, u, si);
		sbuf_printf(out, "\" %.9g", ticks[i]);
	}
	sbuf_adds(out, ")\n");
}

/* ---- gnuplot ---- */

static bool have_gnuplot(void)
{
	const char *path = getenv("PATH");
	struct sbuf p = {0};
	sbuf_printf(&p, "%s:/usr/bin:/bin:/usr/local/bin", path ? path : "");
	sbuf_addc(&p, 0);
	bool found = false;
	for (char *save, *d = strtok_r(p.data, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		char f[4096];
		snprintf(f, sizeof(f), "%s/gnuplot", d);
		found = access(f, X_OK) == 0;
	}
	sbuf_free(&p);
	return found;
}

struct chart {
	const char *dir;
	int seq;
	struct sbuf script; /* terminal, titles, axes */
	struct sbuf plots;  /* the plot command's series */
	int nplots;
	struct sbuf *html;
	int rendered;
	bool logx, logy, six, siy;       /* log axes; counts labelled with k/M/G */
	double xlo, xhi, ylo, yhi;       /* the data's range */
};

/* Start a chart: terminal, title, axes (log or linear; si: the axis counts things, labelled 10k,
 * 1.5M; otherwise plain numbers). */
static void chart_begin(struct chart *c, const char *title, const char *xlabel, const char *ylabel, bool logx,
			bool logy, bool six, bool siy)
{
	c->seq++;
	c->nplots = 0;
	c->logx = logx, c->logy = logy, c->six = six, c->siy = siy;
	c->xlo = c->ylo = INFINITY;
	c->xhi = c->yhi = -INFINITY;
	sbuf_clear(&c->script);
	sbuf_clear(&c->plots);
	sbuf_printf(&c->script,
		    "set terminal svg size 520,340 font 'sans,11' background rgb 'white'\n"
		    "set output '%s/c%d.svg'\n"
		    "set title \"%s\"\nset xlabel \"%s\"\nset ylabel \"%s\"\n"
		    "set termoption noenhanced\nset grid\nset key top left box opaque\n%s%s",
		    c->dir, c->seq, title, xlabel, ylabel, logx ? "set logscale x\n" : "", logy ? "set logscale y\n" : "");
}

/* Add a series: points (x, y); style "linespoints" or "lines". */
static void chart_series(struct chart *c, const char *name, const double *x, const double *y, size_t n,
			 const char *style)
{
	if (!n)
		return;
	char f[4096];
	snprintf(f, sizeof(f), "%s/c%d-%d.dat", c->dir, c->seq, c->nplots);
	FILE *fp = fopen(f, "w");
	if (!fp)
		return;
	for (size_t i = 0; i < n; i++) {
		fprintf(fp, "%.9g %.9g\n", x[i], y[i]);
		c->xlo = fmin(c->xlo, x[i]), c->xhi = fmax(c->xhi, x[i]);
		c->ylo = fmin(c->ylo, y[i]), c->yhi = fmax(c->yhi, y[i]);
	}
	fclose(fp);
	sbuf_printf(&c->plots, "%s'%s' using 1:2 with %s lw 2 title \"", c->nplots ? ", \\\n  " : "plot ", f, style);
	for (const char *s = name; *s; s++)
		if (*s != '"' && *s != '\\' && *s != '\'')
			sbuf_addc(&c->plots, *s);
	sbuf_adds(&c->plots, "\"");
	c->nplots++;
}

static int run_gnuplot(const char *script_path)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);
		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execlp("gnuplot", "gnuplot", script_path, (char *)NULL);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
	}
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* Render the chart and inline its SVG, with a caption. */
static void chart_end(struct chart *c, const char *caption)
{
	if (!c->nplots)
		return;
	lc_axis_tics(&c->script, 'x', c->xlo, c->xhi, c->logx, c->six);
	lc_axis_tics(&c->script, 'y', c->ylo, c->yhi, c->logy, c->siy);
	sbuf_add(&c->script, c->plots.data, c->plots.len);
	sbuf_addc(&c->script, '\n');
	char sp[4096], svg[4096];
	snprintf(sp, sizeof(sp), "%s/c%d.gp", c->dir, c->seq);
	snprintf(svg, sizeof(svg), "%s/c%d.svg", c->dir, c->seq);
	FILE *fp = fopen(sp, "w");
	if (!fp)
		return;
	fwrite(c->script.data, 1, c->script.len, fp);
	fclose(fp);
	sbuf_adds(c->html, "<figure>");
	struct sbuf s = {0};
	fp = run_gnuplot(sp) == 0 ? fopen(svg, "r") : NULL;
	if (fp) {
		char buf[65536];
		size_t n;
		while ((n = fread(buf, 1, sizeof(buf), fp)) > 0)
			sbuf_add(&s, buf, n);
		fclose(fp);
	}
	sbuf_addc(&s, 0);
	const char *start = s.data ? strstr(s.data, "<svg") : NULL;
	if (start) {
		sbuf_adds(c->html, start);
		c->rendered++;
	} else {
		sbuf_adds(c->html, "<p class=warn>gnuplot failed to draw this chart.</p>");
	}
	sbuf_free(&s);
	sbuf_adds(c->html, "<figcaption>");
	html_escape(c->html, caption);
	sbuf_adds(c->html, "</figcaption></figure>\n");
}

/* ---- the page ---- */

static void fmt_num(struct sbuf *b, double v, const char *fmt)
{
	if (isfinite(v))
		sbuf_printf(b, fmt, v);
	else
		sbuf_adds(b, "&ndash;");
}

static void fmt_files(struct sbuf *b, double n)
{
	char buf[32];
	sbuf_adds(b, fmt_count(buf, (uint64_t)n));
}

static void fmt_duration(struct sbuf *b, double s)
{
	if (!isfinite(s))
		sbuf_adds(b, "&ndash;");
	else if (s < 120)
		sbuf_printf(b, "%.3g s", s);
	else if (s < 7200)
		sbuf_printf(b, "%.3g min", s / 60);
	else if (s < 172800)
		sbuf_printf(b, "%.3g h", s / 3600);
	else
		sbuf_printf(b, "%.3g days", s / 86400);
}

static void fmt_kib(struct sbuf *b, double k)
{
	if (!isfinite(k))
		sbuf_adds(b, "&ndash;");
	else if (k < 1024)
		sbuf_printf(b, "%.0f KiB", k);
	else if (k < 1024 * 1024)
		sbuf_printf(b, "%.3g MiB", k / 1024);
	else
		sbuf_printf(b, "%.3g GiB", k / 1024 / 1024);
}

static const char css[] =
    "body{font-family:sans-serif;max-width:1150px;margin:1em auto;padding:0 1em;color:#222}"
    "h1{font-size:1.5em}h2{margin-top:1.6em;border-bottom:1px solid #ccc}"
    "table{border-collapse:collapse;font-size:.85em;margin:.5em 0}"
    "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right;vertical-align:top}"
    "th{background:#f0f0f0}td.l,th.l{text-align:left}"
    ".warn{background:#fff3cd;border:1px solid #e0c060;padding:.5em}"
    ".failed{color:#a00}.skipped{color:#888}"
    "figure{display:inline-block;margin:.5em}figcaption{font-size:.85em;max-width:520px}"
    "svg{width:520px;height:340px}";

/* The value of metric for series s at exactly n files (its last cycle there), or false. */
static bool value_at(struct lc_results *const *runs, const struct series *s, int metric, uint64_t n, double *v)
{
	const struct lc_results *R = runs[s->run];
	bool found = false;
	for (size_t i = 0; i < R->ncycles; i++)
		if (R->cycles[i].files == n && !strcmp(R->cycles[i].fs, s->fs))
			found |= metric_of(&R->cycles[i], metric, v);
	return found;
}

/* The largest file count at which two or more series measured metric (0: none). */
static uint64_t largest_shared_scale(struct lc_results *const *runs, const struct series *ser, size_t nser, int metric)
{
	uint64_t best = 0;
	for (size_t s = 0; s < nser; s++) {
		const struct lc_results *R = runs[ser[s].run];
		for (size_t i = 0; i < R->ncycles; i++) {
			uint64_t n = R->cycles[i].files;
			double v;
			if (n <= best || strcmp(R->cycles[i].fs, ser[s].fs) || !metric_of(&R->cycles[i], metric, &v))
				continue;
			int have = 0;
			for (size_t t = 0; t < nser; t++)
				have += value_at(runs, &ser[t], metric, n, &v);
			if (have >= 2)
				best = n;
		}
	}
	return best;
}

/*
 * The verdict at the top of the page: per charted phase, the fastest filesystem at the largest
 * scale two or more of them reached, and how far ahead of the next it was; then each checker's
 * peak memory there. Nothing when fewer than two series share a scale.
 */
static void render_verdict(struct sbuf *h, struct lc_results *const *runs, const struct series *ser, size_t nser)
{
	bool opened = false;
	for (int k = 0; k < PH_N; k++) {
		if (!lc_phases[k].chart)
			continue;
		uint64_t n = largest_shared_scale(runs, ser, nser, k);
		if (!n)
			continue;
		int best = -1, next = -1;
		double bv = INFINITY, nv = INFINITY, v;
		for (size_t s = 0; s < nser; s++) {
			if (!value_at(runs, &ser[s], k, n, &v))
				continue;
			if (v < bv)
				next = best, nv = bv, best = (int)s, bv = v;
			else if (v < nv)
				next = (int)s, nv = v;
		}
		if (!opened) {
			sbuf_adds(h, "<h2>Verdict</h2>\n<table><tr><th class=l>phase</th><th>at</th><th class=l>fastest</th>"
				     "<th>time</th><th class=l>next</th><th>time</th><th>ahead by</th></tr>\n");
			opened = true;
		}
		sbuf_adds(h, "<tr><td class=l>");
		html_escape(h, lc_phases[k].title);
		sbuf_adds(h, "</td><td>");
		fmt_files(h, (double)n);
		sbuf_adds(h, " files</td><td class=l><b>");
		html_escape(h, ser[best].name);
		sbuf_adds(h, "</b></td><td>");
		fmt_duration(h, bv);
		sbuf_adds(h, "</td><td class=l>");
		html_escape(h, ser[next].name);
		sbuf_adds(h, "</td><td>");
		fmt_duration(h, nv);
		sbuf_adds(h, "</td><td>");
		if (bv > 0)
			sbuf_printf(h, "%.2f&times;", nv / bv);
		else
			sbuf_adds(h, "&ndash;");
		sbuf_adds(h, "</td></tr>\n");
	}
	if (!opened)
		return;
	sbuf_adds(h, "</table>\n");
	uint64_t n = largest_shared_scale(runs, ser, nser, -1);
	if (!n)
		return;
	sbuf_adds(h, "<p>Checker memory (peak RSS of the read-only check) at ");
	fmt_files(h, (double)n);
	sbuf_adds(h, " files: ");
	bool first = true;
	for (size_t s = 0; s < nser; s++) {
		double v, m;
		if (!value_at(runs, &ser[s], -1, n, &v))
			continue;
		sbuf_adds(h, first ? "" : "; ");
		first = false;
		html_escape(h, ser[s].name);
		sbuf_adds(h, " ");
		fmt_kib(h, v);
		if (value_at(runs, &ser[s], -2, n, &m)) {
			sbuf_adds(h, " (xfs_repair states a minimum of ");
			fmt_kib(h, m);
			sbuf_adds(h, ")");
		}
	}
	sbuf_adds(h, ".</p>\n");
}

int lc_render_html(struct lc_results *const *runs, size_t nruns, const char *path)
{
	struct sbuf h = {0};
	struct series *ser;
	size_t nser = collect_series(runs, nruns, &ser);
	double project = nruns ? runs[0]->project : 1e9;
	if (!(project > 0))
		project = 1e9;

	sbuf_adds(&h, "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
		      "<title>myriad lifecycle report</title><style>");
	sbuf_adds(&h, css);
	sbuf_adds(&h, "</style></head><body>\n<h1>myriad lifecycle: the billion-file experiment, re-run</h1>\n"
		      "<p>Each cycle makes a filesystem on a loop device (or a real device), fills it with N files "
		      "(<code>myriad fill</code>), walks it with a cold cache with and without <code>stat</code>, "
		      "checks it read-only (<code>e2fsck -fn</code>, <code>xfs_repair -n</code>, "
		      "<code>btrfs check --readonly</code>), verifies and removes every file. This repeats "
		      "Ric Wheeler's 2010 &ldquo;One billion files&rdquo; experiment at the scales below; each "
		      "phase ran in its own process, timed by wall clock, its peak RSS from <code>wait4()</code>.</p>\n");

	render_verdict(&h, runs, ser, nser);

	/* Runs. */
	for (size_t r = 0; r < nruns; r++) {
		const struct lc_results *R = runs[r];
		sbuf_printf(&h, "<h2>Run %zu%s</h2>\n<table>", r + 1, R->complete ? "" : " (incomplete)");
		sbuf_adds(&h, "<tr><th class=l>results</th><td class=l>");
		html_escape(&h, R->source ? R->source : "results.json");
		sbuf_adds(&h, "</td></tr><tr><th class=l>started / updated</th><td class=l>");
		html_escape(&h, R->started);
		sbuf_adds(&h, " / ");
		html_escape(&h, R->updated);
		sbuf_adds(&h, "</td></tr><tr><th class=l>kernel</th><td class=l>");
		html_escape(&h, R->kernel);
		sbuf_adds(&h, "</td></tr><tr><th class=l>CPU</th><td class=l>");
		html_escape(&h, R->cpu_model);
		sbuf_printf(&h, " &times; %.0f</td></tr><tr><th class=l>memory</th><td class=l>", R->cpus);
		fmt_kib(&h, R->mem_kib);
		sbuf_adds(&h, "</td></tr><tr><th class=l>scales (files)</th><td class=l>");
		for (size_t i = 0; i < R->nscales; i++) {
			if (i)
				sbuf_adds(&h, ", ");
			fmt_files(&h, (double)R->scales[i]);
		}
		sbuf_printf(&h, "; file size %.0f bytes</td></tr><tr><th class=l>storage</th><td class=l>", R->size);
		if (R->device) {
			sbuf_adds(&h, "block device ");
			html_escape(&h, R->device);
		} else {
			sbuf_adds(&h, "sparse image files on loop devices in ");
			html_escape(&h, R->image_dir);
		}
		sbuf_adds(&h, "</td></tr>");
		for (size_t i = 0; i < R->ntools; i++) {
			sbuf_adds(&h, "<tr><th class=l>");
			html_escape(&h, R->tools[i].k);
			sbuf_adds(&h, "</th><td class=l>");
			html_escape(&h, R->tools[i].v);
			sbuf_adds(&h, "</td></tr>");
		}
		sbuf_adds(&h, "</table>\n");
		bool lazy = false;
		for (size_t i = 0; i < R->ncycles; i++)
			lazy |= R->cycles[i].lazy_itable_init == 1;
		if (lazy)
			sbuf_adds(&h, "<p class=warn>ext4 was made with <code>lazy_itable_init=1</code> (mkfs.ext4's "
				      "default): mkfs did not zero the inode tables, so it is fast, and the kernel's "
				      "<code>ext4lazyinit</code> thread zeroes them in the background after the first "
				      "mount, competing with the fill. Pass <code>--mkfs-opts ext4='-E "
				      "lazy_itable_init=0'</code> to pay that cost inside mkfs instead.</p>\n");
	}

	/* Charts. */
	bool gp = have_gnuplot();
	struct chart ch = {.html = &h};
	char dir[] = "/tmp/myriad-plot.XXXXXX";
	if (gp && !mkdtemp(dir))
		gp = false;
	ch.dir = dir;
	sbuf_adds(&h, "<h2>Charts</h2>\n");
	if (!gp)
		sbuf_adds(&h, "<p class=warn>gnuplot is not installed, so this page has no charts (install the "
			      "Debian package <code>gnuplot-nox</code> and run <code>myriad report results.json -o "
			      "report.html</code> to draw them). Every number is in the tables below.</p>\n");
	size_t maxc = 1;
	for (size_t r = 0; r < nruns; r++)
		maxc += runs[r]->ncycles;
	double *x = xmalloc(maxc * sizeof(double)), *y = xmalloc(maxc * sizeof(double));
	if (gp) {
		for (int k = 0; k < PH_N; k++) {
			if (!lc_phases[k].chart)
				continue;
			char title[160];
			snprintf(title, sizeof(title), "%s: time against files", lc_phases[k].title);
			chart_begin(&ch, title, "files", "seconds", true, true, true, false);
			for (size_t s = 0; s < nser; s++) {
				const struct lc_results *R = runs[ser[s].run];
				size_t n = 0;
				for (size_t i = 0; i < R->ncycles; i++) {
					double v;
					if (!strcmp(R->cycles[i].fs, ser[s].fs) && metric_of(&R->cycles[i], k, &v)) {
						x[n] = (double)R->cycles[i].files;
						y[n++] = v > 1e-4 ? v : 1e-4;
					}
				}
				chart_series(&ch, ser[s].name, x, y, n, "linespoints");
			}
			chart_end(&ch, k == PH_CHECK ? "Read-only checker wall time (e2fsck -fn, xfs_repair -n, btrfs "
							"check --readonly), log-log."
						     : "Wall time of the phase, log-log.");
		}
		/* Rate timelines at each series' largest complete scale. */
		for (int which = 0; which < 2; which++) {
			int k = which ? PH_RM : PH_FILL;
			chart_begin(&ch, which ? "Remove rate against files still present (largest scale)"
					       : "Create rate against files present (largest scale)",
				    "files present", which ? "entries removed per second" : "files created per second",
				    false, false, true, true);
			for (size_t s = 0; s < nser; s++) {
				const struct lc_results *R = runs[ser[s].run];
				const struct lc_phase *best = NULL;
				uint64_t bestn = 0;
				for (size_t i = 0; i < R->ncycles; i++) {
					const struct lc_phase *p = &R->cycles[i].ph[k];
					if (!strcmp(R->cycles[i].fs, ser[s].fs) && p->ntl >= 2 && R->cycles[i].files >= bestn)
						best = p, bestn = R->cycles[i].files;
				}
				if (!best)
					continue;
				double *tx = xmalloc(best->ntl * sizeof(double)), *ty = xmalloc(best->ntl * sizeof(double));
				double total = best->tl[best->ntl - 1].v;
				for (size_t i = 0; i < best->ntl; i++) {
					tx[i] = which ? total - best->tl[i].v : best->tl[i].v;
					ty[i] = best->tl[i].rate;
				}
				char name[256];
				snprintf(name, sizeof(name), "%s, %s files", ser[s].name, fmt_count((char[32]){0}, bestn));
				chart_series(&ch, name, tx, ty, best->ntl, "linespoints");
				free(tx);
				free(ty);
			}
			chart_end(&ch, which ? "myriad rm's timeline: entries removed per second against the entries "
					       "still present (the tree empties from right to left)."
					     : "myriad fill's timeline: files created per second against files already "
					       "present.");
		}
		/* Checker memory. */
		chart_begin(&ch, "Filesystem checker: peak memory against files", "files", "MiB", true, true, true, false);
		for (int m = -1; m >= -2; m--)
			for (size_t s = 0; s < nser; s++) {
				const struct lc_results *R = runs[ser[s].run];
				size_t n = 0;
				for (size_t i = 0; i < R->ncycles; i++) {
					double v;
					if (!strcmp(R->cycles[i].fs, ser[s].fs) && metric_of(&R->cycles[i], m, &v)) {
						x[n] = (double)R->cycles[i].files;
						y[n++] = v / 1024;
					}
				}
				char name[256];
				snprintf(name, sizeof(name), m == -1 ? "%s: peak RSS" : "%s: xfs_repair's stated minimum",
					 ser[s].name);
				chart_series(&ch, name, x, y, n, "linespoints");
			}
		chart_end(&ch, "Peak resident memory of the read-only checker (ru_maxrss), and the minimum "
			       "xfs_repair says it needs (from xfs_repair -n -m 1).");
		if (!ch.rendered)
			sbuf_adds(&h, "<p>No chart: no phase has data yet.</p>\n");
	}
	free(x);
	free(y);

	/* Projections. */
	struct lc_proj *p;
	size_t np = lc_projections(runs, nruns, project, &p);
	sbuf_adds(&h, "<h2>Projection to ");
	fmt_files(&h, project);
	sbuf_adds(&h, " files</h2>\n<p class=warn><b>These are extrapolations, not measurements.</b> Each "
		      "phase's time (and the checker's memory) is fitted against the file count over the measured "
		      "scales, by least squares on a linear model t = a + b&middot;N and on a power law t = "
		      "c&middot;N<sup>k</sup> (log-log); the model with the better R&sup2; (computed on the "
		      "original values) projects; when neither reaches R&sup2; 0.5 there is no trend and the "
		      "mean of the measurements stands (model &ldquo;constant&rdquo;); a fit that would make a time "
		      "or a memory shrink as files grow projects nothing (&ldquo;no trend&rdquo;). A fit needs "
		      "three or more scales (two points fit any model exactly). Caches, journals, allocation "
		      "groups and memory behave differently far beyond the measured range: treat the numbers as "
		      "an order of magnitude.</p>\n");
	if (!np)
		sbuf_adds(&h, "<p>No projection: each filesystem needs results at three or more scales.</p>\n");
	else {
		sbuf_adds(&h, "<table><tr><th class=l>filesystem</th><th class=l>metric</th><th>points</th>"
			      "<th>largest measured</th><th>linear a + b&middot;N</th><th>R&sup2;</th>"
			      "<th>power c&middot;N<sup>k</sup></th><th>R&sup2;</th><th class=l>model</th>"
			      "<th>projected</th></tr>\n");
		for (size_t i = 0; i < np; i++) {
			bool s = !strcmp(p[i].unit, "s");
			sbuf_adds(&h, "<tr><td class=l>");
			html_escape(&h, p[i].series);
			sbuf_adds(&h, "</td><td class=l>");
			html_escape(&h, p[i].what);
			sbuf_printf(&h, "</td><td>%d</td><td>", p[i].fit.n);
			if (s)
				fmt_duration(&h, p[i].largest_v);
			else
				fmt_kib(&h, p[i].largest_v);
			sbuf_adds(&h, " at ");
			fmt_files(&h, p[i].largest_n);
			sbuf_printf(&h, "</td><td>%.4g + %.4g&middot;N</td><td>%.4f</td><td>", p[i].fit.a, p[i].fit.b,
				    p[i].fit.r2_lin);
			if (p[i].fit.have_pow)
				sbuf_printf(&h, "%.4g&middot;N<sup>%.3f</sup></td><td>%.4f", p[i].fit.c, p[i].fit.k,
					    p[i].fit.r2_pow);
			else
				sbuf_adds(&h, "&ndash;</td><td>&ndash;");
			sbuf_printf(&h, "</td><td class=l>%s</td><td><b>", p[i].fit.model);
			if (s)
				fmt_duration(&h, p[i].fit.projected);
			else
				fmt_kib(&h, p[i].fit.projected);
			sbuf_adds(&h, "</b></td></tr>\n");
		}
		sbuf_adds(&h, "</table>\n");
	}
	lc_proj_free(p, np);

	/* Every number. */
	sbuf_adds(&h, "<h2>Every cycle</h2>\n<table><tr><th class=l>filesystem</th><th>files</th>"
		      "<th class=l>mkfs options</th><th>lazy itable init</th><th>image</th><th>space used</th>"
		      "<th>inodes used / total</th><th class=l>cycle</th></tr>\n");
	for (size_t s = 0; s < nser; s++) {
		const struct lc_results *R = runs[ser[s].run];
		for (size_t i = 0; i < R->ncycles; i++) {
			const struct lc_cycle *c = &R->cycles[i];
			if (strcmp(c->fs, ser[s].fs))
				continue;
			sbuf_adds(&h, "<tr><td class=l>");
			html_escape(&h, ser[s].name);
			sbuf_adds(&h, "</td><td>");
			fmt_files(&h, (double)c->files);
			sbuf_adds(&h, "</td><td class=l><code>");
			html_escape(&h, c->mkfs_options);
			sbuf_printf(&h, "</code></td><td>%s</td><td>",
				    c->lazy_itable_init < 0 ? "&ndash;" : c->lazy_itable_init ? "yes" : "no");
			fmt_kib(&h, c->image_bytes / 1024);
			sbuf_adds(&h, "</td><td>");
			if (c->have_usage) {
				fmt_kib(&h, c->bytes_used / 1024);
				sbuf_adds(&h, " of ");
				fmt_kib(&h, c->bytes_total / 1024);
				sbuf_adds(&h, "</td><td>");
				if (c->inodes_total > 0) {
					fmt_files(&h, c->inodes_used);
					sbuf_adds(&h, " / ");
					fmt_files(&h, c->inodes_total);
				} else {
					sbuf_adds(&h, "dynamic (no inode count)");
				}
			} else {
				sbuf_adds(&h, "&ndash;</td><td>&ndash;");
			}
			sbuf_printf(&h, "</td><td class=l>%s</td></tr>\n", c->complete ? "complete" : "incomplete");
		}
	}
	sbuf_adds(&h, "</table>\n<table><tr><th class=l>filesystem</th><th>files</th><th class=l>phase</th>"
		      "<th class=l>status</th><th>exit</th><th>wall s</th><th>peak RSS KiB</th><th>rate</th>"
		      "<th class=l>notes</th></tr>\n");
	for (size_t s = 0; s < nser; s++) {
		const struct lc_results *R = runs[ser[s].run];
		for (size_t i = 0; i < R->ncycles; i++) {
			const struct lc_cycle *c = &R->cycles[i];
			if (strcmp(c->fs, ser[s].fs))
				continue;
			for (int k = 0; k < PH_N; k++) {
				const struct lc_phase *ph = &c->ph[k];
				if (ph->status == LC_NOT_RUN)
					continue;
				sbuf_printf(&h, "<tr class=%s><td class=l>", lc_status_names[ph->status]);
				html_escape(&h, ser[s].name);
				sbuf_adds(&h, "</td><td>");
				fmt_files(&h, (double)c->files);
				sbuf_printf(&h, "</td><td class=l>%s</td><td class=l>%s</td><td>", lc_phases[k].name,
					    lc_status_names[ph->status]);
				if (ph->exit_status >= 0)
					sbuf_printf(&h, "%d", ph->exit_status);
				sbuf_adds(&h, "</td><td>");
				fmt_num(&h, ph->wall_s, "%.4f");
				sbuf_adds(&h, "</td><td>");
				fmt_num(&h, ph->peak_rss_kib, "%.0f");
				sbuf_adds(&h, "</td><td>");
				if (isfinite(ph->rate))
					sbuf_printf(&h, "%.0f %s", ph->rate, ph->rate_unit ? ph->rate_unit : "/s");
				sbuf_adds(&h, "</td><td class=l>");
				if (isfinite(ph->min_mem_kib)) {
					sbuf_adds(&h, "states it needs at least ");
					fmt_kib(&h, ph->min_mem_kib);
					sbuf_adds(&h, ". ");
				}
				html_escape(&h, ph->error);
				if (ph->command) {
					sbuf_adds(&h, " <code>");
					html_escape(&h, ph->command);
					sbuf_adds(&h, "</code>");
				}
				sbuf_adds(&h, "</td></tr>\n");
			}
		}
	}
	sbuf_adds(&h, "</table>\n<p>Written by myriad " MYRIAD_VERSION ". Re-render or compare runs with "
		      "<code>myriad report RESULTS.json... -o report.html</code>.</p>\n");
	/* Record each chart's laid-out size on the element, so a headless browser's DOM dump shows the
	 * charts really rendered. No network, nothing else. */
	sbuf_adds(&h, "<script>document.querySelectorAll('svg').forEach(function(s){var r=s.getBoundingClientRect();"
		      "s.setAttribute('data-rendered-width',Math.round(r.width));"
		      "s.setAttribute('data-rendered-height',Math.round(r.height));});</script>\n</body></html>\n");
	free_series(ser, nser);
	sbuf_free(&ch.script);
	sbuf_free(&ch.plots);
	if (gp) {
		struct sbuf rm = {0};
		sbuf_printf(&rm, "%s", dir);
		sbuf_addc(&rm, 0);
		/* Remove the scratch files. */
		for (int i = 1; i <= ch.seq; i++)
			for (int k = -2; k < 64; k++) {
				char f[4200];
				if (k == -2)
					snprintf(f, sizeof(f), "%s/c%d.gp", dir, i);
				else if (k == -1)
					snprintf(f, sizeof(f), "%s/c%d.svg", dir, i);
				else
					snprintf(f, sizeof(f), "%s/c%d-%d.dat", dir, i, k);
				unlink(f);
			}
		rmdir(dir);
		sbuf_free(&rm);
	}
	int rc = write_file_atomic(path, h.data, h.len);
	if (rc != 0)
		warnx_("%s: %s", path, strerror(errno));
	sbuf_free(&h);
	return rc;
}
