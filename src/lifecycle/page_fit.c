/*
 * page_fit: the projection section of report.html — the projections to --project files with the
 * original experiment's 2010 figures beside them, then how far to trust them: the hindcast of
 * each series and metric (lifecycle/fit), or why there is none.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lifecycle/fit.h"
#include "lifecycle/html.h"
#include "lifecycle/page.h"
#include "util/sbuf.h"

/* The 2010 figures under the projection table: whose they are, and every one of them, so they
 * show even where no series matches. */
static void render_reference(struct sbuf *h)
{
	sbuf_adds(h, "<p>Column <b>2010</b>: the figures of the original experiment for ");
	html_files(h, LC_REFERENCE_FILES);
	sbuf_adds(h, " files (Ric Wheeler, &ldquo;One billion files&rdquo;, LinuxCon 2010) &mdash; "
		     "<b>theirs, on 2010 hardware, not measured here</b>:");
	const char *fs = "";
	for (size_t i = 0; i < lc_nreference_2010; i++) {
		const struct lc_reference *r = &lc_reference_2010[i];
		sbuf_adds(h, strcmp(fs, r->fs) ? (i ? "; " : " ") : ", ");
		if (strcmp(fs, r->fs))
			sbuf_printf(h, "%s: ", r->fs);
		fs = r->fs;
		html_escape(h, r->what);
		sbuf_adds(h, " ");
		html_escape(h, r->stated);
	}
	sbuf_adds(h, ".</p>\n");
}

/* One row of the projection table, with the 2010 figure for its filesystem and metric. */
static void projection_row(struct sbuf *h, const struct lc_proj *p)
{
	sbuf_adds(h, "<tr><td class=l>");
	html_escape(h, p->series);
	sbuf_adds(h, "</td><td class=l>");
	html_escape(h, p->what);
	sbuf_printf(h, "</td><td>%d</td><td>", p->fit.n);
	html_value(h, p->unit, p->largest_v);
	sbuf_adds(h, " at ");
	html_files(h, p->largest_n);
	sbuf_printf(h, "</td><td>%.4g + %.4g&middot;N</td><td>%.4f</td><td>", p->fit.a, p->fit.b, p->fit.r2_lin);
	if (p->fit.have_pow)
		sbuf_printf(h, "%.4g&middot;N<sup>%.3f</sup></td><td>%.4f", p->fit.c, p->fit.k, p->fit.r2_pow);
	else
		sbuf_adds(h, "&ndash;</td><td>&ndash;");
	sbuf_printf(h, "</td><td class=l>%s</td><td><b>", p->fit.model);
	html_value(h, p->unit, p->fit.projected);
	sbuf_adds(h, "</b></td><td class=l>");
	const struct lc_reference *ref = lc_reference_for(p->fs, p->metric);
	if (ref)
		html_escape(h, ref->stated);
	else
		sbuf_adds(h, "&ndash;");
	sbuf_adds(h, "</td></tr>\n");
}

/* The projections to project files, with what they are worth said first. */
static void render_projections(struct sbuf *h, struct lc_results *const *runs, size_t nruns, double project)
{
	struct lc_proj *p;
	size_t np = lc_projections(runs, nruns, project, &p);
	sbuf_adds(h, "<h2>Projection to ");
	html_files(h, project);
	sbuf_adds(h, " files</h2>\n<p class=warn><b>These are extrapolations, not measurements.</b> Each "
		      "phase's time (and the checker's memory) is fitted against the file count over the measured "
		      "scales, by least squares on a linear model t = a + b&middot;N and on a power law t = "
		      "c&middot;N<sup>k</sup> (log-log); the model with the better R&sup2; (computed on the "
		      "original values) projects; when neither reaches R&sup2; 0.5 there is no trend and the "
		      "mean of the measurements stands (model &ldquo;constant&rdquo;); a fit that would make a time "
		      "or a memory shrink as files grow projects nothing (&ldquo;no trend&rdquo;). A fit needs "
		      "three or more scales (two points fit any model exactly). Caches, journals, allocation "
		      "groups and memory behave differently far beyond the measured range: treat the numbers as "
		      "an order of magnitude, and see below how far the same method missed at the largest "
		      "scale measured.</p>\n");
	if (!np)
		sbuf_adds(h, "<p>No projection: each filesystem needs results at three or more scales.</p>\n");
	else {
		sbuf_adds(h, "<table><tr><th class=l>filesystem</th><th class=l>metric</th><th>points</th>"
			      "<th>largest measured</th><th>linear a + b&middot;N</th><th>R&sup2;</th>"
			      "<th>power c&middot;N<sup>k</sup></th><th>R&sup2;</th><th class=l>model</th>"
			      "<th>projected</th><th class=l>2010 (theirs, ");
		html_files(h, LC_REFERENCE_FILES);
		sbuf_adds(h, " files)</th></tr>\n");
		for (size_t i = 0; i < np; i++)
			projection_row(h, &p[i]);
		sbuf_adds(h, "</table>\n");
	}
	render_reference(h);
	lc_proj_free(p, np);
}

/* One row of the trust table: what the fit up to N/10 predicted at N, what N measured, the error,
 * and how much further the projection goes. */
static void hindcast_row(struct sbuf *h, const struct lc_hindcast *c, double project)
{
	sbuf_adds(h, "<tr><td class=l>");
	html_escape(h, c->series);
	sbuf_adds(h, "</td><td class=l>");
	html_escape(h, c->what);
	sbuf_printf(h, "</td><td>%d up to ", c->points);
	html_files(h, c->fitted_up_to);
	sbuf_printf(h, "</td><td class=l>%s</td><td>", c->fit.model);
	html_files(h, c->at);
	sbuf_adds(h, " (&times;");
	html_factor(h, c->factor);
	sbuf_adds(h, ")</td><td>");
	html_value(h, c->unit, c->predicted);
	sbuf_adds(h, "</td><td>");
	html_value(h, c->unit, c->measured);
	/* %+.0f would print "-0%" for -0.3%. */
	sbuf_printf(h, "</td><td><b>%.2f&times;</b></td><td><b>", c->ratio);
	if (fabs(c->percent) < 0.5)
		sbuf_adds(h, "0%");
	else
		sbuf_printf(h, "%+.0f%%", c->percent);
	sbuf_adds(h, "</b></td><td>&times;");
	html_factor(h, project / c->at);
	sbuf_adds(h, "</td></tr>\n");
}

/* Whether c[i] is the first of c with its reason. */
static bool why_first(const struct lc_hindcast *c, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (c[k].why == c[i].why)
			return false;
	return true;
}

/* One line for the hindcasts missing for reason why: each series once, with its N, and the metrics
 * when only some of its own lack one for that reason. */
static void render_no_hindcast(struct sbuf *h, const struct lc_hindcast *c, size_t nc, const char *why, bool some)
{
	sbuf_adds(h, some ? "<p>No hindcast for " : "<p>No hindcast is possible for ");
	size_t nth = 0;
	for (size_t i = 0; i < nc; i++) {
		bool first = c[i].why == why;
		for (size_t k = 0; k < i && first; k++)
			first = c[k].why != why || strcmp(c[k].series, c[i].series);
		if (!first)
			continue;
		size_t all = 0, these = 0;
		for (size_t k = 0; k < nc; k++)
			if (!strcmp(c[k].series, c[i].series))
				all++, these += c[k].why == why;
		sbuf_adds(h, nth++ ? "; " : "");
		html_escape(h, c[i].series);
		sbuf_adds(h, " (N = ");
		html_files(h, c[i].at);
		sbuf_adds(h, ")");
		for (size_t k = i, m = 0; these < all && k < nc; k++)
			if (c[k].why == why && !strcmp(c[k].series, c[i].series)) {
				sbuf_adds(h, m++ ? ", " : ": ");
				html_escape(h, c[k].what);
			}
	}
	sbuf_adds(h, ": ");
	html_escape(h, why);
	sbuf_adds(h, ", N being the largest scale measured (the default scales N/10, N/3, N have one; "
		     "<code>--scales 10k,30k,100k,1M</code> gives three).</p>\n");
}

/* "How far to trust the projection": per series and metric, the hindcast at its largest scale,
 * or (when none was possible anywhere) one line saying why. */
static void render_trust(struct sbuf *h, struct lc_results *const *runs, size_t nruns, double project)
{
	struct lc_hindcast *c;
	size_t nc = lc_hindcasts(runs, nruns, &c), made = 0;
	for (size_t i = 0; i < nc; i++)
		made += !c[i].why;
	sbuf_adds(h, "<h3>How far to trust the projection</h3>\n");
	if (made) {
		sbuf_adds(h, "<p>A hindcast: the same fit made only from the scales at or below N/10, where N is "
			     "the largest scale measured, predicts N; set beside what N measured, its error is what "
			     "this method gets wrong over a known extrapolation (its factor in brackets); a negative error "
			     "means the fit predicted less than was measured (too optimistic). The "
			     "projection to ");
		html_files(h, project);
		sbuf_adds(h, " files is a further extrapolation, by the factor in the last column: expect errors "
			     "of the size shown, or larger.</p>\n<table><tr><th class=l>filesystem</th>"
			     "<th class=l>metric</th><th>fitted</th><th class=l>model</th><th>N (extrapolated)</th>"
			     "<th>predicted at N</th><th>measured at N</th><th>predicted / measured</th><th>error</th>"
			     "<th>projection goes further by</th></tr>\n");
		for (size_t i = 0; i < nc; i++)
			if (!c[i].why)
				hindcast_row(h, &c[i], project);
		sbuf_adds(h, "</table>\n");
	}
	if (!nc)
		sbuf_adds(h, "<p>No hindcast: nothing measured yet.</p>\n");
	for (size_t i = 0; i < nc; i++)
		if (c[i].why && why_first(c, i))
			render_no_hindcast(h, c, nc, c[i].why, made > 0);
	lc_hindcast_free(c, nc);
}

void page_projections(struct sbuf *h, struct lc_results *const *runs, size_t nruns, double project)
{
	render_projections(h, runs, nruns, project);
	render_trust(h, runs, nruns, project);
}
