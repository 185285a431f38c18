/*
 * page: report.html, the page `myriad lifecycle` writes after each cycle and `myriad report`
 * re-renders from results.json (one run, or several side by side). One self-contained file: the
 * CSS and gnuplot's SVG charts (lifecycle/chart) inline, no network. Top to bottom: the verdict, each
 * run's machine and tools, the charts, where rates dropped and whether myriad's memory stayed flat
 * (page_flat), the projections and how far to trust them (page_fit), every cycle and phase.
 */
#include "lifecycle/page.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lifecycle/chart.h"
#include "lifecycle/html.h"
#include "util/atomic.h"
#include "util/sbuf.h"
#include "util/util.h"

/* ---- cells: a missing number shows as a dash ---- */

static void fmt_num(struct sbuf *b, double v, const char *fmt)
{
	if (isfinite(v))
		sbuf_printf(b, fmt, v);
	else
		sbuf_adds(b, "&ndash;");
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

/* ---- the sections, top to bottom ---- */

/* The value of metric for series s at exactly n files (its last cycle there), or false. */
static bool value_at(struct lc_results *const *runs, const struct lc_series *s, int metric, uint64_t n, double *v)
{
	const struct lc_results *R = runs[s->run];
	bool found = false;
	for (size_t i = 0; i < R->ncycles; i++)
		if (R->cycles[i].files == n && !strcmp(R->cycles[i].fs, s->fs))
			found |= lc_metric_of(&R->cycles[i], metric, v);
	return found;
}

/* The largest file count at which two or more series measured metric (0: none). */
static uint64_t largest_shared_scale(struct lc_results *const *runs, const struct lc_series *ser, size_t nser, int metric)
{
	uint64_t best = 0;
	for (size_t s = 0; s < nser; s++) {
		const struct lc_results *R = runs[ser[s].run];
		for (size_t i = 0; i < R->ncycles; i++) {
			uint64_t n = R->cycles[i].files;
			double v;
			if (n <= best || strcmp(R->cycles[i].fs, ser[s].fs) || !lc_metric_of(&R->cycles[i], metric, &v))
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
static void render_verdict(struct sbuf *h, struct lc_results *const *runs, const struct lc_series *ser, size_t nser)
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
		html_files(h, (double)n);
		sbuf_adds(h, " files</td><td class=l><b>");
		html_escape(h, ser[best].name);
		sbuf_adds(h, "</b></td><td>");
		html_duration(h, bv);
		sbuf_adds(h, "</td><td class=l>");
		html_escape(h, ser[next].name);
		sbuf_adds(h, "</td><td>");
		html_duration(h, nv);
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
	html_files(h, (double)n);
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
		html_kib(h, v);
		if (value_at(runs, &ser[s], -2, n, &m)) {
			sbuf_adds(h, " (xfs_repair states a minimum of ");
			html_kib(h, m);
			sbuf_adds(h, ")");
		}
	}
	sbuf_adds(h, ".</p>\n");
}

/* The page's head, its CSS and what the experiment is. */
#define PAGE_TITLE "<title>myriad lifecycle report</title>"

static void render_head(struct sbuf *h)
{
	sbuf_adds(h, "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>" PAGE_TITLE "<style>");
	sbuf_adds(h, css);
	sbuf_adds(h, "</style></head><body>\n<h1>myriad lifecycle: the billion-file experiment, re-run</h1>\n"
		      "<p>Each cycle makes a filesystem on a loop device (or a real device), fills it with N files "
		      "(<code>myriad fill</code>), walks it with a cold cache with and without <code>stat</code>, "
		      "checks it read-only (<code>e2fsck -fn</code>, <code>xfs_repair -n</code>, "
		      "<code>btrfs check --readonly</code>), verifies and removes every file. This repeats "
		      "Ric Wheeler's 2010 &ldquo;One billion files&rdquo; experiment at the scales below; each "
		      "phase ran in its own process, timed by wall clock, its peak RSS from <code>wait4()</code>.</p>\n");
}

/* One run's machine, tools and storage, and a warning when ext4's lazy inode-table init will have
 * competed with the fill. */
static void render_run(struct sbuf *h, const struct lc_results *R, size_t r)
{
	sbuf_printf(h, "<h2>Run %zu%s</h2>\n<table>", r + 1, R->complete ? "" : " (incomplete)");
	sbuf_adds(h, "<tr><th class=l>results</th><td class=l>");
	html_escape(h, R->source ? R->source : "results.json");
	sbuf_adds(h, "</td></tr><tr><th class=l>started / updated</th><td class=l>");
	html_escape(h, R->started);
	sbuf_adds(h, " / ");
	html_escape(h, R->updated);
	sbuf_adds(h, "</td></tr><tr><th class=l>kernel</th><td class=l>");
	html_escape(h, R->kernel);
	sbuf_adds(h, "</td></tr><tr><th class=l>CPU</th><td class=l>");
	html_escape(h, R->cpu_model);
	sbuf_printf(h, " &times; %.0f</td></tr><tr><th class=l>memory</th><td class=l>", R->cpus);
	html_kib(h, R->mem_kib);
	sbuf_adds(h, "</td></tr><tr><th class=l>scales (files)</th><td class=l>");
	for (size_t i = 0; i < R->nscales; i++) {
		if (i)
			sbuf_adds(h, ", ");
		html_files(h, (double)R->scales[i]);
	}
	sbuf_printf(h, "; file size %.0f bytes</td></tr><tr><th class=l>storage</th><td class=l>", R->size);
	if (R->device) {
		sbuf_adds(h, "block device ");
		html_escape(h, R->device);
	} else {
		sbuf_adds(h, "sparse image files on loop devices in ");
		html_escape(h, R->image_dir);
	}
	sbuf_adds(h, "</td></tr>");
	for (size_t i = 0; i < R->ntools; i++) {
		sbuf_adds(h, "<tr><th class=l>");
		html_escape(h, R->tools[i].k);
		sbuf_adds(h, "</th><td class=l>");
		html_escape(h, R->tools[i].v);
		sbuf_adds(h, "</td></tr>");
	}
	sbuf_adds(h, "</table>\n");
	bool lazy = false;
	for (size_t i = 0; i < R->ncycles; i++)
		lazy |= R->cycles[i].lazy_itable_init == 1;
	if (lazy)
		sbuf_adds(h, "<p class=warn>ext4 was made with <code>lazy_itable_init=1</code> (mkfs.ext4's "
			      "default): mkfs did not zero the inode tables, so it is fast, and the kernel's "
			      "<code>ext4lazyinit</code> thread zeroes them in the background after the first "
			      "mount, competing with the fill. Pass <code>--mkfs-opts ext4='-E "
			      "lazy_itable_init=0'</code> to pay that cost inside mkfs instead.</p>\n");
}

/* The points of metric for series s: (files, value) of each cycle that measured it, into x and y
 * (room for every cycle of its run). Returns the count. */
static size_t series_points(struct lc_results *const *runs, const struct lc_series *s, int metric, double *x,
			    double *y)
{
	const struct lc_results *R = runs[s->run];
	size_t n = 0;
	for (size_t i = 0; i < R->ncycles; i++) {
		double v;
		if (!strcmp(R->cycles[i].fs, s->fs) && lc_metric_of(&R->cycles[i], metric, &v)) {
			x[n] = (double)R->cycles[i].files;
			y[n++] = v;
		}
	}
	return n;
}

/* Each charted phase's wall time against files, log-log; times under 0.1 ms drawn at 0.1 ms (a
 * log axis has no zero). */
static void chart_phase_times(struct chart *ch, struct lc_results *const *runs, const struct lc_series *ser,
			      size_t nser, double *x, double *y)
{
	for (int k = 0; k < PH_N; k++) {
		if (!lc_phases[k].chart)
			continue;
		char title[160];
		snprintf(title, sizeof(title), "%s: time against files", lc_phases[k].title);
		chart_begin(ch, title, "files", "seconds", true, true, true, false);
		for (size_t s = 0; s < nser; s++) {
			size_t n = series_points(runs, &ser[s], k, x, y);
			for (size_t i = 0; i < n; i++)
				y[i] = y[i] > 1e-4 ? y[i] : 1e-4;
			chart_series(ch, ser[s].name, x, y, n, "linespoints");
		}
		chart_end(ch, k == PH_CHECK ? "Read-only checker wall time (e2fsck -fn, xfs_repair -n, btrfs "
					      "check --readonly), log-log."
					    : "Wall time of the phase, log-log.");
	}
}

/* Rate timelines of fill and rm at each series' largest complete scale. */
static void chart_rates(struct chart *ch, struct lc_results *const *runs, const struct lc_series *ser, size_t nser)
{
	for (int which = 0; which < 2; which++) {
		int k = which ? PH_RM : PH_FILL;
		chart_begin(ch, which ? "Remove rate against files still present (largest scale)"
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
			chart_series(ch, name, tx, ty, best->ntl, "linespoints");
			free(tx);
			free(ty);
		}
		chart_end(ch, which ? "myriad rm's timeline: entries removed per second against the entries "
				      "still present (the tree empties from right to left)."
				    : "myriad fill's timeline: files created per second against files already "
				      "present.");
	}
}

/* The checker's peak memory and xfs_repair's stated minimum against files. */
static void chart_memory(struct chart *ch, struct lc_results *const *runs, const struct lc_series *ser, size_t nser,
			 double *x, double *y)
{
	chart_begin(ch, "Filesystem checker: peak memory against files", "files", "MiB", true, true, true, false);
	for (int m = -1; m >= -2; m--)
		for (size_t s = 0; s < nser; s++) {
			size_t n = series_points(runs, &ser[s], m, x, y);
			for (size_t i = 0; i < n; i++)
				y[i] /= 1024;
			char name[256];
			snprintf(name, sizeof(name), m == -1 ? "%s: peak RSS" : "%s: xfs_repair's stated minimum",
				 ser[s].name);
			chart_series(ch, name, x, y, n, "linespoints");
		}
	chart_end(ch, "Peak resident memory of the read-only checker (ru_maxrss), and the minimum "
		      "xfs_repair says it needs (from xfs_repair -n -m 1). A checker run under a limit of "
		      "its own (xfs_repair -m, e2fsck scratch files) shows that limit, not its need: the "
		      "fits leave such a point out.");
}

/* The charts, or why there are none. */
static void render_charts(struct sbuf *h, struct lc_results *const *runs, size_t nruns, const struct lc_series *ser,
			  size_t nser)
{
	struct chart ch;
	bool gp = chart_open(&ch, h);
	sbuf_adds(h, "<h2>Charts</h2>\n");
	if (!gp)
		sbuf_adds(h, "<p class=warn>gnuplot is not installed, so this page has no charts (install the "
			      "Debian package <code>gnuplot-nox</code> and run <code>myriad report results.json -o "
			      "report.html</code> to draw them). Every number is in the tables below.</p>\n");
	size_t maxc = 1;
	for (size_t r = 0; r < nruns; r++)
		maxc += runs[r]->ncycles;
	double *x = xmalloc(maxc * sizeof(double)), *y = xmalloc(maxc * sizeof(double));
	if (gp) {
		chart_phase_times(&ch, runs, ser, nser, x, y);
		chart_rates(&ch, runs, ser, nser);
		chart_memory(&ch, runs, ser, nser, x, y);
		if (!ch.rendered)
			sbuf_adds(h, "<p>No chart: no phase has data yet.</p>\n");
	}
	free(x);
	free(y);
	chart_close(&ch);
}

/* Each cycle of each series, grouped by series (the order of the tables' rows), into row. */
static void each_cycle(struct sbuf *h, struct lc_results *const *runs, const struct lc_series *ser, size_t nser,
		       void (*row)(struct sbuf *h, const char *series, const struct lc_cycle *c))
{
	for (size_t s = 0; s < nser; s++) {
		const struct lc_results *R = runs[ser[s].run];
		for (size_t i = 0; i < R->ncycles; i++)
			if (!strcmp(R->cycles[i].fs, ser[s].fs))
				row(h, ser[s].name, &R->cycles[i]);
	}
}

/* A cycle's row: its filesystem, options and the space and inodes the fill used. */
static void cycle_row(struct sbuf *h, const char *series, const struct lc_cycle *c)
{
	sbuf_adds(h, "<tr><td class=l>");
	html_escape(h, series);
	sbuf_adds(h, "</td><td>");
	html_files(h, (double)c->files);
	sbuf_adds(h, "</td><td class=l><code>");
	html_escape(h, c->mkfs_options);
	sbuf_printf(h, "</code></td><td>%s</td><td>",
		    c->lazy_itable_init < 0 ? "&ndash;" : c->lazy_itable_init ? "yes" : "no");
	html_kib(h, c->image_bytes / 1024);
	sbuf_adds(h, "</td><td>");
	if (c->have_usage) {
		html_kib(h, c->bytes_used / 1024);
		sbuf_adds(h, " of ");
		html_kib(h, c->bytes_total / 1024);
		sbuf_adds(h, "</td><td>");
		if (c->inodes_total > 0) {
			html_files(h, c->inodes_used);
			sbuf_adds(h, " / ");
			html_files(h, c->inodes_total);
		} else {
			sbuf_adds(h, "dynamic (no inode count)");
		}
	} else {
		sbuf_adds(h, "&ndash;</td><td>&ndash;");
	}
	sbuf_printf(h, "</td><td class=l>%s</td></tr>\n", c->complete ? "complete" : "incomplete");
}

/* A cycle's phases that ran, a row each: status, exit, time, memory, rate, and what went wrong. */
static void phase_rows(struct sbuf *h, const char *series, const struct lc_cycle *c)
{
	for (int k = 0; k < PH_N; k++) {
		const struct lc_phase *ph = &c->ph[k];
		if (ph->status == LC_NOT_RUN)
			continue;
		sbuf_printf(h, "<tr class=%s><td class=l>", lc_status_names[ph->status]);
		html_escape(h, series);
		sbuf_adds(h, "</td><td>");
		html_files(h, (double)c->files);
		sbuf_printf(h, "</td><td class=l>%s</td><td class=l>%s</td><td>", lc_phases[k].name,
			    lc_status_names[ph->status]);
		if (ph->exit_status >= 0)
			sbuf_printf(h, "%d", ph->exit_status);
		sbuf_adds(h, "</td><td>");
		fmt_num(h, ph->wall_s, "%.4f");
		sbuf_adds(h, "</td><td>");
		fmt_num(h, ph->peak_rss_kib, "%.0f");
		sbuf_adds(h, "</td><td>");
		if (isfinite(ph->rate))
			sbuf_printf(h, "%.0f %s", ph->rate, ph->rate_unit ? ph->rate_unit : "/s");
		sbuf_adds(h, "</td><td class=l>");
		if (isfinite(ph->min_mem_kib)) {
			sbuf_adds(h, "states it needs at least ");
			html_kib(h, ph->min_mem_kib);
			sbuf_adds(h, ". ");
		}
		html_escape(h, ph->error);
		if (ph->command) {
			sbuf_adds(h, " <code>");
			html_escape(h, ph->command);
			sbuf_adds(h, "</code>");
		}
		sbuf_adds(h, "</td></tr>\n");
	}
}

/* Every cycle, then every phase of every cycle. */
static void render_cycles(struct sbuf *h, struct lc_results *const *runs, const struct lc_series *ser, size_t nser)
{
	sbuf_adds(h, "<h2>Every cycle</h2>\n<table><tr><th class=l>filesystem</th><th>files</th>"
		      "<th class=l>mkfs options</th><th>lazy itable init</th><th>image</th><th>space used</th>"
		      "<th>inodes used / total</th><th class=l>cycle</th></tr>\n");
	each_cycle(h, runs, ser, nser, cycle_row);
	sbuf_adds(h, "</table>\n");
	sbuf_adds(h, "<table><tr><th class=l>filesystem</th><th>files</th><th class=l>phase</th>"
		      "<th class=l>status</th><th>exit</th><th>wall s</th><th>peak RSS KiB</th><th>rate</th>"
		      "<th class=l>notes</th></tr>\n");
	each_cycle(h, runs, ser, nser, phase_rows);
	sbuf_adds(h, "</table>\n");
}

/* How to get the page again, and the charts' laid-out sizes for a headless browser's check. */
static void render_foot(struct sbuf *h)
{
	sbuf_adds(h, "<p>Written by myriad " MYRIAD_VERSION ". Re-render or compare runs with "
		      "<code>myriad report RESULTS.json... -o report.html</code>.</p>\n");
	/* Record each chart's laid-out size on the element, so a headless browser's DOM dump shows the
	 * charts really rendered. No network, nothing else. */
	sbuf_adds(h, "<script>document.querySelectorAll('svg').forEach(function(s){var r=s.getBoundingClientRect();"
		      "s.setAttribute('data-rendered-width',Math.round(r.width));"
		      "s.setAttribute('data-rendered-height',Math.round(r.height));});</script>\n</body></html>\n");
}

bool lc_page_is_report(const char *path)
{
	char head[256];
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	struct stat st;
	ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, head, sizeof(head) - 1) : -1;
	close(fd);
	if (n < 0)
		return false;
	head[n] = 0;
	return strncmp(head, "<!DOCTYPE html>", 15) == 0 && strstr(head, PAGE_TITLE) != NULL;
}

int lc_render_html(struct lc_results *const *runs, size_t nruns, const char *path)
{
	struct sbuf h = {0};
	struct lc_series *ser;
	size_t nser = lc_series_collect(runs, nruns, &ser);
	double project = nruns ? runs[0]->project : 1e9;
	if (!(project > 0))
		project = 1e9;
	render_head(&h);
	render_verdict(&h, runs, ser, nser);
	for (size_t r = 0; r < nruns; r++)
		render_run(&h, runs[r], r);
	render_charts(&h, runs, nruns, ser, nser);
	page_rate_drops(&h, runs, ser, nser);
	page_myriad_memory(&h, runs, nruns);
	page_projections(&h, runs, nruns, project);
	render_cycles(&h, runs, ser, nser);
	render_foot(&h);
	lc_series_free(ser, nser);
	int rc = atomic_write_file(path, h.data, h.len);
	if (rc != 0)
		warnx_("%s: %s", path, strerror(errno));
	sbuf_free(&h);
	return rc;
}
