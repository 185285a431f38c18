/* Unit tests for the projection's stated error: the hindcast (fit up to N/10, predict N, compare
 * with what N measured), its place in results.json and on the page, and the 2010 figures beside
 * the projections. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lifecycle/fit.h"
#include "lifecycle/jsonread.h"
#include "lifecycle/page.h"
#include "lifecycle/results.h"
#include "util/sbuf.h"

/* A linear series t = 2 + 0.001*N at 1k..10k; the largest scale, 100k, is ten times the fourth. */
static const double X5[] = {1e3, 2e3, 5e3, 1e4, 1e5};
#define LIN(n) (2 + 0.001 * (n))

/* The fit uses the four scales at or below N/10 only: it predicts exactly what the line gives at
 * 100k (102 s), not a fit bent by the 204 s measured there. */
static void hindcast_fits_only_up_to_a_tenth(void **state)
{
	double y[] = {LIN(1e3), LIN(2e3), LIN(5e3), LIN(1e4), 204};
	struct lc_hindcast h;
	assert_true(lc_hindcast_of(X5, y, 5, &h));
	assert_null(h.why);
	assert_int_equal(h.points, 4);
	assert_true(h.fitted_up_to == 1e4);
	assert_true(h.at == 1e5);
	assert_true(h.factor == 10);
	assert_string_equal(h.fit.model, "linear");
	assert_true(fabs(h.predicted - 102) < 1e-9);
	assert_true(h.measured == 204);
	assert_true(fabs(h.ratio - 0.5) < 1e-12);
	assert_true(fabs(h.percent + 50) < 1e-9);
	/* A scale between N/10 and N is not fitted either: 50k, far off the line, changes nothing. */
	double x6[] = {1e3, 2e3, 5e3, 1e4, 5e4, 1e5}, y6[] = {LIN(1e3), LIN(2e3), LIN(5e3), LIN(1e4), 999, 204};
	assert_true(lc_hindcast_of(x6, y6, 6, &h));
	assert_int_equal(h.points, 4);
	assert_true(fabs(h.predicted - 102) < 1e-9);
	/* Measured lower than predicted: a positive error. */
	y[4] = 51;
	assert_true(lc_hindcast_of(X5, y, 5, &h));
	assert_true(fabs(h.ratio - 2) < 1e-12);
	assert_true(fabs(h.percent - 100) < 1e-9);
}

/* Two scales at or below N/10 fit any model exactly: no hindcast, and the reason the page gives. */
static void no_hindcast_from_two_small_scales(void **state)
{
	double x[] = {3e4, 1e5, 3e5, 6e5, 1e6}, y[] = {3, 10, 30, 60, 100}; /* 30k and 100k <= 100k */
	struct lc_hindcast h;
	assert_false(lc_hindcast_of(x, y, 5, &h));
	assert_string_equal(h.why, "needs 3 scales at or below N/10");
	assert_true(isnan(h.predicted));
	assert_true(h.measured == 100);
	/* The default scales N/10, N/3, N: one. */
	assert_false(lc_hindcast_of(x + 2, y + 2, 3, &h));
	assert_string_equal(h.why, "needs 3 scales at or below N/10");
}

/* The phase failed at N: nothing to compare with, so no hindcast (not one at a smaller N). */
static void no_hindcast_when_N_failed(void **state)
{
	double y[] = {LIN(1e3), LIN(2e3), LIN(5e3), LIN(1e4), NAN};
	struct lc_hindcast h;
	assert_false(lc_hindcast_of(X5, y, 5, &h));
	assert_true(h.at == 1e5);
	assert_non_null(strstr(h.why, "nothing measured at N"));
}

/* ext4 (and xfs, 2.5x slower) at the five scales of X5, every phase ok with time LIN(N)*slow,
 * except the fill at 100k, which took 204 s (twice the line) on ext4. */
static struct lc_cycle cyc[10];
static uint64_t scales[] = {1000, 2000, 5000, 10000, 100000};
static struct lc_results *results(int nscales)
{
	static struct lc_results r;
	memset(cyc, 0, sizeof(cyc));
	int n = 0;
	for (int f = 0; f < 2; f++)
		for (int i = 5 - nscales; i < 5; i++, n++) {
			double slow = f ? 2.5 : 1;
			cyc[n].fs = f ? "xfs" : "ext4";
			cyc[n].files = scales[i];
			cyc[n].complete = true;
			cyc[n].lazy_itable_init = -1;
			for (int k = 0; k < PH_N; k++)
				cyc[n].ph[k] = (struct lc_phase){.status = LC_OK, .exit_status = 0, .wall_s = LIN(X5[i]) * slow,
								 .peak_rss_kib = 4096 + X5[i] * slow, .rate = NAN,
								 .min_mem_kib = NAN};
			if (!f && i == 4)
				cyc[n].ph[PH_FILL].wall_s = 204;
		}
	r = (struct lc_results){.kernel = "k", .cpu_model = "c", .cpus = 2, .mem_kib = 1024, .files = 100000,
				.project = 1e9, .complete = true, .scales = scales + 5 - nscales, .nscales = nscales,
				.cycles = cyc, .ncycles = n, .image_dir = "/var/tmp", .started = "s", .updated = "u"};
	return &r;
}

/* The hindcast of metric (by its title) of fs in a results.json document, or NULL. */
static const struct jv *hindcast_in(const struct jv *d, const char *fs, const char *metric)
{
	const struct jv *a = jv_get(d, "hindcasts");
	for (size_t i = 0; a && a->type == JV_ARR && i < a->n; i++)
		if (!strcmp(jv_str(&a->items[i], "fs", ""), fs) && !strcmp(jv_str(&a->items[i], "metric", ""), metric))
			return &a->items[i];
	return NULL;
}

/* results.json carries the hindcasts (and the 2010 figures); it reads back, and written again it
 * says the same; a file of an older version, without them, still reads. */
static void results_json_carries_hindcasts(void **state)
{
	struct lc_results *r = results(5);
	struct sbuf b = {0}, again = {0};
	lc_results_json(r, &b);
	char err[128];
	struct jv *d = jv_parse(b.data, b.len, err, sizeof(err));
	assert_non_null(d);
	const struct jv *fill = hindcast_in(d, "ext4", lc_phases[PH_FILL].title);
	assert_non_null(fill);
	assert_true(jv_num(fill, "at", 0) == 1e5);
	assert_true(jv_num(fill, "fitted_up_to", 0) == 1e4);
	assert_true(jv_num(fill, "points", 0) == 4);
	assert_string_equal(jv_str(fill, "model", ""), "linear");
	assert_true(fabs(jv_num(fill, "predicted", 0) - 102) < 1e-6);
	assert_true(jv_num(fill, "measured", 0) == 204);
	assert_true(fabs(jv_num(fill, "ratio", 0) - 0.5) < 1e-9);
	assert_true(fabs(jv_num(fill, "percent", 0) + 50) < 1e-6);
	assert_true(jv_num(fill, "extrapolation", 0) == 10);
	const struct jv *ref = jv_get(jv_get(d, "reference_2010"), "figures");
	assert_non_null(ref);
	assert_int_equal(ref->n, 5);
	assert_string_equal(jv_str(&ref->items[1], "stated", ""), "about 4 days");
	assert_true(jv_num(&ref->items[1], "value", 0) == 4 * 86400);
	assert_true(jv_num(jv_get(d, "reference_2010"), "files", 0) == 1e9);
	jv_free(d);
	struct lc_results *back = lc_parse(b.data, b.len, "t.json", err, sizeof(err));
	assert_non_null(back);
	lc_results_json(back, &again);
	d = jv_parse(again.data, again.len, err, sizeof(err));
	fill = hindcast_in(d, "ext4", lc_phases[PH_FILL].title);
	assert_non_null(fill);
	assert_true(fabs(jv_num(fill, "ratio", 0) - 0.5) < 1e-9);
	jv_free(d);
	lc_free(back);
	const char old[] = "{\"command\":\"lifecycle\",\"config\":{\"scales\":[1000]},\"projection\":{\"fits\":[]},"
			   "\"cycles\":[{\"fs\":\"ext4\",\"files\":1000,\"phases\":[{\"name\":\"fill\",\"status\":\"ok\","
			   "\"wall_s\":1}]}]}";
	back = lc_parse(old, strlen(old), "old.json", err, sizeof(err));
	assert_non_null(back);
	assert_int_equal(back->ncycles, 1);
	lc_free(back);
	sbuf_free(&b);
	sbuf_free(&again);
}

/* A failed fill at N is a hindcast with its reason in results.json, not a guess from below. */
static void failed_at_N_has_a_reason(void **state)
{
	struct lc_results *r = results(5);
	cyc[4].ph[PH_FILL].status = LC_FAILED;
	cyc[4].ph[PH_FILL].wall_s = NAN;
	struct lc_hindcast *h;
	size_t n = lc_hindcasts(&r, 1, &h), seen = 0;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(h[i].series, "ext4") && h[i].metric == PH_FILL) {
			seen++;
			assert_true(h[i].at == 1e5);
			assert_non_null(strstr(h[i].why, "nothing measured at N"));
		} else if (h[i].metric >= 0) {
			assert_null(h[i].why);
		}
	assert_int_equal(seen, 1);
	lc_hindcast_free(h, n);
}

/* A checker run under a limit of its own (xfs_repair -m at the largest scale) measured that limit,
 * not its need: neither the projection nor the hindcast of the checker's memory uses the point,
 * while the other series keeps its own. */
static void self_limited_checker_is_not_a_point(void **state)
{
	struct lc_results *r = results(5);
	struct lc_phase *chk = &cyc[9].ph[PH_CHECK]; /* xfs at 100k */
	assert_string_equal(cyc[9].fs, "xfs");
	chk->peak_rss_kib = 1; /* far below the line: any fit using it would bend */
	chk->mem = (struct lc_memplan){.set = true, .how = "-m", .limit_kib = 1, .predicted_kib = NAN};
	struct lc_proj *p;
	size_t np = lc_projections(&r, 1, 1e9, &p), seen = 0;
	for (size_t i = 0; i < np; i++)
		if (p[i].metric == -1) {
			seen++;
			bool xfs = !strcmp(p[i].series, "xfs");
			assert_int_equal(p[i].fit.n, xfs ? 4 : 5);
			assert_true(p[i].largest_n == (xfs ? 1e4 : 1e5));
			assert_string_equal(p[i].fit.model, "linear");
		}
	assert_int_equal(seen, 2);
	lc_proj_free(p, np);
	struct lc_hindcast *h;
	size_t nh = lc_hindcasts(&r, 1, &h);
	seen = 0;
	for (size_t i = 0; i < nh; i++)
		if (h[i].metric == -1) {
			seen++;
			if (!strcmp(h[i].series, "xfs"))
				assert_true(h[i].at == 1e4); /* its largest real point; too few below it */
			else
				assert_true(h[i].at == 1e5 && !h[i].why);
		}
	assert_int_equal(seen, 2);
	lc_hindcast_free(h, nh);
	/* The same limit named "none" is no limit: the point counts again. */
	chk->mem.how = "none";
	np = lc_projections(&r, 1, 1e9, &p);
	for (size_t i = 0; i < np; i++)
		if (p[i].metric == -1 && !strcmp(p[i].series, "xfs"))
			assert_int_equal(p[i].fit.n, 5);
	lc_proj_free(p, np);
}

static char *render(struct lc_results *r)
{
	char path[] = "/tmp/myriad-test-fit.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(lc_render_html(&r, 1, path), 0);
	FILE *f = fopen(path, "r");
	static char page[1 << 20];
	size_t n = fread(page, 1, sizeof(page) - 1, f);
	page[n] = 0;
	fclose(f);
	unlink(path);
	return page;
}

/* Whether s is in the table row that starts at row. */
static bool in_row(const char *row, const char *s)
{
	const char *at = row ? strstr(row, s) : NULL, *end = row ? strstr(row, "</tr>") : NULL;
	return at && end && at + strlen(s) <= end + strlen("</tr>");
}

/* The page: the trust table beside the projections, and the 2010 figures labelled as theirs. */
static void page_states_the_error_and_the_2010_figures(void **state)
{
	const char *page = render(results(5));
	const char *proj = strstr(page, "<h2>Projection to 1,000,000,000 files</h2>");
	const char *trust = strstr(page, "<h3>How far to trust the projection</h3>");
	assert_non_null(proj);
	assert_non_null(trust);
	assert_true(proj < trust && trust < strstr(page, "<h2>Every cycle</h2>"));
	assert_non_null(strstr(proj, "<th class=l>2010 (theirs, 1,000,000,000 files)</th>"));
	assert_non_null(strstr(proj, "theirs, on 2010 hardware, not measured here"));
	assert_non_null(strstr(proj, "LinuxCon 2010"));
	/* ext4's fill row has its 2010 figure; xfs's checker memory row too. */
	const char *fill = strstr(proj, "<td class=l>ext4</td><td class=l>create files (myriad fill)</td>");
	assert_non_null(fill);
	assert_true(in_row(fill, "<td class=l>about 4 days</td></tr>"));
	const char *xmem = strstr(proj, "<td class=l>xfs</td><td class=l>checker peak RSS</td>");
	assert_non_null(xmem);
	assert_true(in_row(xmem, "<td class=l>about 30 GB</td></tr>"));
	assert_true(in_row(strstr(proj, "<td class=l>ext4</td><td class=l>mount (empty)</td>"), "<td class=l>&ndash;</td></tr>"));
	assert_non_null(strstr(proj, "ext4: mkfs about 4 hours, creating the files about 4 days, fsck about "
				     "2.5 hours, fsck's memory about 10 GB; xfs: xfs_repair's memory about 30 GB."));
	/* ext4's fill: predicted 102 s at 100k, measured 204 s: 0.50x, -50%; the projection goes
	 * 10,000 times further. */
	assert_non_null(strstr(trust, "<td class=l>ext4</td><td class=l>create files (myriad fill)</td><td>4 up to "
				      "10,000</td><td class=l>linear</td><td>100,000 (&times;10)</td><td>102 s</td>"
				      "<td>3.4 min</td><td><b>0.50&times;</b></td><td><b>-50%</b></td><td>&times;10,000</td>"));
	assert_non_null(strstr(trust, "expect errors of the size shown, or larger"));
	assert_null(strstr(trust, "No hindcast"));
}

/* With the default scales (N/10, N/3, N) no hindcast is possible: one line says why, no table. */
static void page_says_why_there_is_no_hindcast(void **state)
{
	const char *page = render(results(3));
	const char *trust = strstr(page, "<h3>How far to trust the projection</h3>");
	assert_non_null(trust);
	const char *end = strstr(trust, "<h2>");
	assert_true(strstr(trust, "<table>") > end);
	const char *line = strstr(trust, "<p>No hindcast is possible for ext4 (N = 100,000); xfs (N = 100,000): "
					 "needs 3 scales at or below N/10");
	assert_non_null(line);
	assert_true(line < end);
	const char *more = strstr(line + strlen("<p>No hindcast"), "No hindcast");
	assert_true(!more || more > end);
	/* The 2010 figures stay on the page. */
	assert_non_null(strstr(page, "about 2.5 hours"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(hindcast_fits_only_up_to_a_tenth),
	    cmocka_unit_test(no_hindcast_from_two_small_scales),
	    cmocka_unit_test(no_hindcast_when_N_failed),
	    cmocka_unit_test(results_json_carries_hindcasts),
	    cmocka_unit_test(failed_at_N_has_a_reason),
	    cmocka_unit_test(page_states_the_error_and_the_2010_figures),
	    cmocka_unit_test(page_says_why_there_is_no_hindcast),
	    cmocka_unit_test(self_limited_checker_is_not_a_point),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
