/*
 * page_flat: the part of report.html under the charts that says whether what should stay flat
 * did (lifecycle/flat) — where a phase's rate dropped during a run and stayed down, one line per
 * cycle, and myriad's own peak memory from the smallest scale to the largest.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lifecycle/flat.h"
#include "lifecycle/html.h"
#include "lifecycle/page.h"
#include "util/sbuf.h"

/* v rounded to digits significant figures, with thousands separators: a rate read off a noisy
 * timeline is not known to the last file. */
static void html_sig(struct sbuf *h, double v, int digits)
{
	if (!isfinite(v) || v < 0) {
		sbuf_adds(h, "&ndash;");
		return;
	}
	if (v < 1) {
		sbuf_printf(h, "%.*g", digits, v);
		return;
	}
	double unit = pow(10, floor(log10(v)) - (digits - 1));
	html_files(h, unit >= 1 ? round(v / unit) * unit : round(v));
}

/* What the phase counts, from its rate unit: "files" of "files/s". */
static void count_noun(char *buf, size_t len, const char *unit)
{
	const char *slash = unit ? strstr(unit, "/s") : NULL;
	if (slash && slash > unit)
		snprintf(buf, len, "%.*s", (int)(slash - unit), unit);
	else
		snprintf(buf, len, "items");
}

/* One line for one phase of one cycle: its drop, or that there is none; and its first and last
 * tenth either way. */
static void drop_line(struct sbuf *h, const char *series, const struct lc_cycle *c, int k, double mem_kib)
{
	const struct lc_phase *p = &c->ph[k];
	struct lc_rate_shape s;
	if (p->status == LC_NOT_RUN || !lc_rate_shape(p->tl, p->ntl, &s))
		return;
	const char *unit = p->rate_unit ? p->rate_unit : "per s";
	char noun[32];
	count_noun(noun, sizeof(noun), p->rate_unit);
	sbuf_adds(h, "<li><b>");
	html_escape(h, series);
	sbuf_adds(h, ", ");
	html_files(h, (double)c->files);
	sbuf_printf(h, " files, %s</b>: ", lc_phases[k].name);
	if (s.drop) {
		html_sig(h, s.before, 2);
		sbuf_printf(h, " %s until about ", unit);
		html_sig(h, s.at_count, 2);
		/* rm counts what it removed, not what is left. */
		sbuf_printf(h, " %s%s (after ", noun, k == PH_RM ? " removed" : "");
		html_duration(h, s.at_s);
		sbuf_adds(h, "), then ");
		html_sig(h, s.after, 2);
		sbuf_printf(h, " %s for the rest (the rate fell by %.0f%%).", unit, s.fall * 100);
	} else {
		sbuf_adds(h, "no lasting drop.");
	}
	sbuf_adds(h, " First tenth of the time ");
	html_sig(h, s.first_tenth, 2);
	sbuf_adds(h, ", last tenth ");
	html_sig(h, s.last_tenth, 2);
	sbuf_printf(h, " %s.", unit);
	if (s.drop && k == PH_FILL && mem_kib > 0 && s.at_count >= 1) {
		sbuf_adds(h, " <i>Hint:</i> the machine's memory (");
		html_kib(h, mem_kib);
		sbuf_adds(h, ") comes to ");
		html_sig(h, mem_kib * 1024 / s.at_count, 2);
		sbuf_adds(h, " bytes per file present at the drop; if the drop is where the kernel's inode and "
			     "dentry caches stopped holding every file, they took at most about that much per file "
			     "(a bound, not a measurement).");
	}
	sbuf_adds(h, "</li>\n");
}

void page_rate_drops(struct sbuf *h, struct lc_results *const *runs, const struct lc_series *ser, size_t nser)
{
	struct sbuf lines = {0};
	for (size_t s = 0; s < nser; s++) {
		const struct lc_results *R = runs[ser[s].run];
		for (size_t i = 0; i < R->ncycles; i++) {
			if (strcmp(R->cycles[i].fs, ser[s].fs))
				continue;
			for (int k = 0; k < PH_N; k++)
				drop_line(&lines, ser[s].name, &R->cycles[i], k, R->mem_kib);
		}
	}
	sbuf_adds(h, "<h3>The rate during each run</h3>\n");
	sbuf_printf(h, "<p>Where a phase's rate dropped during a run and stayed down, rather than an average "
		       "that hides it. The rate is smoothed over windows of %.0f%% of the phase's time; a drop is "
		       "the first point after which every window runs below %.0f%% of the window before it, for "
		       "the rest of the run and at least %.0f%% of it; the last %.0f%% (workers finishing) is not "
		       "judged. One slow moment is no drop, and neither is a steady decline: compare the first "
		       "and last tenth. A timeline of fewer than %d points (about %d s) is too short to judge.</p>\n",
		    LC_DROP_WINDOW * 100, LC_DROP_FRACTION * 100, LC_DROP_LASTING * 100, LC_DROP_TAIL * 100,
		    LC_DROP_MIN_POINTS, LC_DROP_MIN_POINTS / 2);
	if (lines.len) {
		sbuf_adds(h, "<ul>\n");
		sbuf_add(h, lines.data, lines.len);
		sbuf_adds(h, "</ul>\n");
	} else {
		sbuf_adds(h, "<p>No phase has a timeline long enough to judge.</p>\n");
	}
	sbuf_free(&lines);
}

void page_myriad_memory(struct sbuf *h, struct lc_results *const *runs, size_t nruns)
{
	struct lc_rss_flat *f;
	size_t n = lc_rss_flatness(runs, nruns, &f);
	sbuf_adds(h, "<h3>Memory: myriad's own phases</h3>\n<p>Peak RSS of each myriad phase at the largest "
		     "scale over the same phase at the smallest: ");
	sbuf_printf(h, "<b>flat</b> within %.2f&times;, else <b>grows</b>.</p>\n", LC_RSS_FLAT_RATIO);
	if (!n) {
		sbuf_adds(h, "<p>Needs a phase measured at two or more scales.</p>\n");
		lc_rss_flat_free(f, n);
		return;
	}
	sbuf_adds(h, "<table><tr><th class=l>filesystem</th><th class=l>phase</th><th>smallest scale</th>"
		     "<th>peak RSS</th><th>largest scale</th><th>peak RSS</th><th>ratio</th><th class=l>verdict</th>"
		     "</tr>\n");
	for (size_t i = 0; i < n; i++) {
		sbuf_adds(h, "<tr><td class=l>");
		html_escape(h, f[i].series);
		sbuf_printf(h, "</td><td class=l>%s</td><td>", lc_phases[f[i].phase].name);
		html_files(h, f[i].small_n);
		sbuf_adds(h, "</td><td>");
		html_kib(h, f[i].small_kib);
		sbuf_adds(h, "</td><td>");
		html_files(h, f[i].large_n);
		sbuf_adds(h, "</td><td>");
		html_kib(h, f[i].large_kib);
		sbuf_printf(h, "</td><td>%.2f&times;</td><td class=l>%s</td></tr>\n", f[i].ratio,
			    f[i].flat ? "flat" : "<b>grows</b>");
	}
	sbuf_adds(h, "</table>\n");
	lc_rss_flat_free(f, n);
}
