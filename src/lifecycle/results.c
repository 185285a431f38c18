/*
 * results: the lifecycle results model, results.json written and read back (see results.h).
 * The reader is strict about structure (a cycle must name its filesystem and file count) and
 * lenient about content (an unknown phase is skipped), so results of another version still load.
 */
#include "lifecycle/results.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lifecycle/fit.h"
#include "lifecycle/flat.h"
#include "report/json.h"
#include "lifecycle/jsonread.h"
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

/* ---- series: one filesystem of one run ---- */

size_t lc_series_collect(struct lc_results *const *runs, size_t nruns, struct lc_series **out)
{
	struct lc_series *s = NULL;
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
			s[n++] = (struct lc_series){name.data, fs, (int)r};
		}
	*out = s;
	return n;
}

void lc_series_free(struct lc_series *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(s[i].name);
	free(s);
}

bool lc_metric_of(const struct lc_cycle *c, int metric, double *v)
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

bool lc_check_self_limited(const struct lc_phase *p)
{
	return p->mem.set && p->mem.how && strcmp(p->mem.how, "none");
}

/* ---- results.json ---- */

static void str_or_null(struct json *j, const char *key, const char *s)
{
	if (s)
		json_str(j, key, s);
	else
		json_null(j, key);
}

/* One phase of a cycle, one that ran (not LC_NOT_RUN), with the shape of its rate when its
 * timeline is long enough (host_mem_kib: for the hint at a fill's drop, else NAN). */
static void phase_json(struct json *j, const char *name, const struct lc_phase *p, double host_mem_kib)
{
	json_open(j, NULL, '{');
	json_str(j, "name", name);
	json_str(j, "status", lc_status_names[p->status]);
	if (p->exit_status >= 0)
		json_i64(j, "exit_status", p->exit_status);
	else
		json_null(j, "exit_status");
	json_double(j, "wall_s", p->wall_s);
	json_double(j, "peak_rss_kib", p->peak_rss_kib);
	if (isfinite(p->rate)) {
		json_double(j, "rate", p->rate);
		json_str(j, "rate_unit", p->rate_unit ? p->rate_unit : "per s");
	}
	if (isfinite(p->min_mem_kib))
		json_double(j, "min_memory_kib", p->min_mem_kib);
	str_or_null(j, "error", p->error);
	str_or_null(j, "command", p->command);
	if (p->mem.set) {
		json_open(j, "memory", '{');
		json_double(j, "predicted_kib", p->mem.predicted_kib);
		json_double(j, "limit_kib", p->mem.limit_kib);
		str_or_null(j, "limit_from", p->mem.limit_from);
		str_or_null(j, "contained", p->mem.contained);
		str_or_null(j, "how", p->mem.how);
		str_or_null(j, "outcome", p->mem.outcome);
		json_close(j, '}');
	}
	if (p->ntl) {
		json_open(j, "timeline", '[');
		for (size_t t = 0; t < p->ntl; t++) {
			json_open(j, NULL, '[');
			json_double(j, NULL, p->tl[t].t);
			json_double(j, NULL, p->tl[t].v);
			json_double(j, NULL, p->tl[t].rate);
			json_close(j, ']');
		}
		json_close(j, ']');
		lc_rate_shape_json(j, p->tl, p->ntl, host_mem_kib);
	}
	json_close(j, '}');
}

/* One cycle: what it ran on, and each phase that ran. */
static void cycle_json(struct json *j, const struct lc_cycle *c, double host_mem_kib)
{
	json_open(j, NULL, '{');
	json_str(j, "fs", c->fs);
	json_u64(j, "files", c->files);
	json_bool(j, "complete", c->complete);
	str_or_null(j, "image", c->image);
	json_double(j, "image_bytes", c->image_bytes);
	json_double(j, "image_alloc_bytes", c->image_alloc_bytes);
	if (isfinite(c->disk_estimate_bytes)) {
		json_open(j, "disk_estimate", '{');
		json_double(j, "bytes", c->disk_estimate_bytes);
		str_or_null(j, "from", c->disk_estimate_from);
		json_close(j, '}');
	}
	str_or_null(j, "device", c->device);
	str_or_null(j, "mkfs_options", c->mkfs_options);
	if (c->lazy_itable_init >= 0)
		json_bool(j, "lazy_itable_init", c->lazy_itable_init);
	else
		json_null(j, "lazy_itable_init");
	if (c->have_usage) {
		json_open(j, "after_fill", '{');
		json_double(j, "bytes_total", c->bytes_total);
		json_double(j, "bytes_used", c->bytes_used);
		json_double(j, "inodes_total", c->inodes_total);
		json_double(j, "inodes_used", c->inodes_used);
		json_close(j, '}');
	}
	json_open(j, "phases", '[');
	for (int k = 0; k < PH_N; k++)
		if (c->ph[k].status != LC_NOT_RUN)
			phase_json(j, lc_phases[k].name, &c->ph[k], k == PH_FILL ? host_mem_kib : NAN);
	json_close(j, ']');
	json_close(j, '}');
}

void lc_results_json(const struct lc_results *r, struct sbuf *out)
{
	struct json j;
	json_document(&j, out, "lifecycle");
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
	for (size_t i = 0; i < r->ncycles; i++)
		cycle_json(&j, &r->cycles[i], r->mem_kib);
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
	struct lc_hindcast *hc;
	size_t nh = lc_hindcasts(&one, 1, &hc);
	lc_hindcast_json(&j, "hindcasts", hc, nh);
	lc_hindcast_free(hc, nh);
	lc_reference_json(&j, "reference_2010");
	struct lc_rss_flat *rf;
	size_t nrf = lc_rss_flatness(&one, 1, &rf);
	lc_rss_flat_json(&j, "myriad_memory", rf, nrf);
	lc_rss_flat_free(rf, nrf);
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

/* One of the words a writer of this version uses, or NULL: the model keeps static strings. */
static const char *word_of(const char *s, const char *const *words)
{
	for (; s && *words; words++)
		if (!strcmp(s, *words))
			return *words;
	return NULL;
}

/* A checker phase's "memory" object into m (absent: m stays unset). */
static void memplan_from_json(const struct jv *o, struct lc_memplan *m)
{
	static const char *const from[] = {"--checker-mem", "MemAvailable", NULL};
	static const char *const cont[] = {"cgroup v2", "cgroup v1", "none", NULL};
	static const char *const how[] = {"none", "-m", "scratch_files", "skipped", NULL};
	if (!o || o->type != JV_OBJ)
		return;
	m->set = true;
	m->predicted_kib = num_or_nan(o, "predicted_kib");
	m->limit_kib = num_or_nan(o, "limit_kib");
	m->limit_from = word_of(jv_str(o, "limit_from", NULL), from);
	m->contained = word_of(jv_str(o, "contained", NULL), cont);
	m->how = word_of(jv_str(o, "how", NULL), how);
	m->outcome = dup_or_null(jv_str(o, "outcome", NULL));
}

/* One cycle object into c (cleared by the caller on failure). NULL, or what is wrong. */
static const char *cycle_from_json(const struct jv *o, struct lc_cycle *c)
{
	for (int k = 0; k < PH_N; k++) {
		c->ph[k].exit_status = -1;
		c->ph[k].wall_s = c->ph[k].peak_rss_kib = c->ph[k].rate = c->ph[k].min_mem_kib = NAN;
	}
	c->image_alloc_bytes = c->disk_estimate_bytes = NAN;
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
	c->image_alloc_bytes = num_or_nan(o, "image_alloc_bytes");
	const struct jv *de = jv_get(o, "disk_estimate");
	c->disk_estimate_bytes = num_or_nan(de, "bytes");
	c->disk_estimate_from = dup_or_null(jv_str(de, "from", NULL));
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
		memplan_from_json(jv_get(po, "memory"), &p->mem);
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
	free(c->disk_estimate_from);
	for (int k = 0; k < PH_N; k++) {
		free(c->ph[k].mem.outcome);
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

