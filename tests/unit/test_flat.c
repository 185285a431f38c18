/* Unit tests for "flat where it should be": where a phase's rate drops during a run and stays
 * down (synthetic timelines: a step, noise, one slow sample, a steady decline, too few points, a
 * drop in the tail), myriad's own peak memory from the smallest scale to the largest, and both in
 * results.json and on the page. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lifecycle/flat.h"
#include "lifecycle/jsonread.h"
#include "lifecycle/page.h"
#include "lifecycle/results.h"
#include "util/sbuf.h"

/* ---- synthetic timelines: a sample every DT seconds, as fill's timeline takes them ---- */

#define DT 0.5
#define NPTS 400 /* 200 s */

typedef double (*rate_fn)(double t);

/* A deterministic noise factor in [1 - amp, 1 + amp]. */
static double noise(unsigned *seed, double amp)
{
	*seed = *seed * 1103515245u + 12345u;
	return 1 + amp * (2.0 * ((*seed >> 8) & 0xffff) / 65535.0 - 1);
}

/* n points of a timeline whose rate over each sample is f(t) times noise of amplitude amp. */
static struct lc_point *timeline(rate_fn f, size_t n, double amp)
{
	static struct lc_point tl[2000];
	unsigned seed = 42;
	double v = 0;
	for (size_t i = 0; i < n; i++) {
		double t = (i + 1) * DT, r = f(t - DT / 2) * noise(&seed, amp);
		v += r * DT;
		tl[i] = (struct lc_point){t, round(v), r};
	}
	return tl;
}

/* 86k files/s for 80 s, then 34k files/s: the drop is at 6.88 M files. */
static double step(double t) { return t < 80 ? 86000 : 34000; }
static double level(double t) { return 86000; }

static void assert_near(double got, double want, double rel)
{
	if (!(fabs(got - want) <= rel * fabs(want)))
		fail_msg("%g is not within %g%% of %g", got, rel * 100, want);
}

/* A clear step is found where it is (count within 5%, time within 5%), with the rates on each side,
 * clean and with noise of ±20% per sample. */
static void step_drop_is_found(void **state)
{
	for (int noisy = 0; noisy < 2; noisy++) {
		struct lc_rate_shape s;
		assert_true(lc_rate_shape(timeline(step, NPTS, noisy ? 0.2 : 0), NPTS, &s));
		assert_true(s.judged);
		assert_true(s.drop);
		assert_near(s.at_count, 80 * 86000, 0.05);
		assert_near(s.at_s, 80, 0.05);
		assert_near(s.before, 86000, 0.05);
		assert_near(s.after, 34000, 0.05);
		assert_near(s.fall, 1 - 34000.0 / 86000, 0.08);
		assert_near(s.first_tenth, 86000, 0.05);
		assert_near(s.last_tenth, 34000, 0.05);
	}
	/* Clean, the step is found to within a sample. */
	struct lc_rate_shape s;
	lc_rate_shape(timeline(step, NPTS, 0), NPTS, &s);
	assert_near(s.at_count, 80 * 86000, 0.01);
}

/* Noise alone (±30% per sample, and 2,000 points) is no drop. */
static void noise_is_no_drop(void **state)
{
	struct lc_rate_shape s;
	assert_true(lc_rate_shape(timeline(level, NPTS, 0.3), NPTS, &s));
	assert_false(s.drop);
	assert_near(s.first_tenth, 86000, 0.05);
	assert_near(s.last_tenth, 86000, 0.05);
	assert_true(lc_rate_shape(timeline(level, 2000, 0.3), 2000, &s));
	assert_false(s.drop);
}

/* One sample at a tenth of the rate (a stall of the disk), anywhere before the tail, is no drop;
 * nor are five or twelve in a row (6 s, more than half a window, 3% of the run). */
static void one_slow_sample_is_no_drop(void **state)
{
	double at[] = {20, 100, 150, 160, 175, 185};
	for (size_t a = 0; a < sizeof(at) / sizeof(at[0]); a++)
		for (int width = 1; width <= 12; width = width == 1 ? 5 : width + 7) {
			struct lc_point *tl = timeline(level, NPTS, 0.05);
			size_t i0 = (size_t)(at[a] / DT);
			double lost = 0;
			for (size_t i = i0; i < i0 + width; i++)
				lost += tl[i].rate * 0.9 * DT, tl[i].rate *= 0.1;
			for (size_t i = i0; i < NPTS; i++)
				tl[i].v -= i < i0 + width ? lost * (i - i0 + 1) / width : lost;
			struct lc_rate_shape s;
			assert_true(lc_rate_shape(tl, NPTS, &s));
			if (s.drop)
				fail_msg("slow samples at %g s (%d) taken for a drop at %g s", at[a], width, s.at_s);
		}
}

/* A steady decline from 100k to 30k files/s over the whole run is no drop by the rule (no window
 * falls 30% below the one before it): it shows in the first and last tenth instead. A steep one,
 * the same fall within a tenth of the run, is a drop. */
static double decline(double t) { return 100000 - 70000 * t / 200; }
static double steep(double t) { return t < 90 ? 100000 : t < 110 ? 100000 - 70000 * (t - 90) / 20 : 30000; }
static void gradual_decline_is_no_drop(void **state)
{
	struct lc_rate_shape s;
	assert_true(lc_rate_shape(timeline(decline, NPTS, 0.05), NPTS, &s));
	assert_false(s.drop);
	assert_near(s.first_tenth, 96500, 0.03);
	assert_near(s.last_tenth, 33500, 0.03);
	assert_true(lc_rate_shape(timeline(steep, NPTS, 0.05), NPTS, &s));
	assert_true(s.drop);
	assert_near(s.at_s, 100, 0.1);
}

/* The bar is a fall of 30%: a lasting step to 80% of the rate is not named, one to 65% is. */
static double to80(double t) { return t < 80 ? 86000 : 0.8 * 86000; }
static double to65(double t) { return t < 80 ? 86000 : 0.65 * 86000; }
static void small_step_is_below_the_bar(void **state)
{
	struct lc_rate_shape s;
	assert_true(lc_rate_shape(timeline(to80, NPTS, 0.05), NPTS, &s));
	assert_false(s.drop);
	assert_true(lc_rate_shape(timeline(to65, NPTS, 0.05), NPTS, &s));
	assert_true(s.drop);
	assert_near(s.at_count, 80 * 86000, 0.05);
	assert_near(s.fall, 0.35, 0.1);
}

/* Fewer than LC_DROP_MIN_POINTS points say nothing, even with a clear step; that many say. A
 * timeline without progress, or empty, says nothing either. */
static double early_step(double t) { return t < 8 ? 86000 : 34000; }
static void too_few_points_say_nothing(void **state)
{
	struct lc_rate_shape s;
	assert_false(lc_rate_shape(timeline(early_step, LC_DROP_MIN_POINTS - 1, 0), LC_DROP_MIN_POINTS - 1, &s));
	assert_false(s.judged);
	assert_false(s.drop);
	assert_true(lc_rate_shape(timeline(early_step, LC_DROP_MIN_POINTS, 0), LC_DROP_MIN_POINTS, &s));
	assert_true(s.drop);
	assert_false(lc_rate_shape(NULL, 0, &s));
	struct lc_point flat[50];
	for (int i = 0; i < 50; i++)
		flat[i] = (struct lc_point){i + 1, 1000, 0};
	assert_false(lc_rate_shape(flat, 50, &s));
	/* Points that go back in time or count are left out, not read as a drop or a leap. */
	struct lc_point *tl = timeline(level, NPTS, 0);
	tl[100].t = 3;
	tl[200].v = 0;
	assert_true(lc_rate_shape(tl, NPTS, &s));
	assert_false(s.drop);
}

/* The rate falling only in the last 8% or 3% of the run (workers finishing their last
 * directories, or a drop too late to tell from that) is no drop; the same fall at 70% is one. */
static double tail92(double t) { return t < 184 ? 86000 : 20000; }
static double tail97(double t) { return t < 194 ? 86000 : 5000; }
static double at70(double t) { return t < 140 ? 86000 : 20000; }
static void drop_at_the_tail_is_no_drop(void **state)
{
	struct lc_rate_shape s;
	assert_true(lc_rate_shape(timeline(tail97, NPTS, 0.05), NPTS, &s));
	assert_false(s.drop);
	assert_true(lc_rate_shape(timeline(tail92, NPTS, 0.05), NPTS, &s));
	assert_false(s.drop);
	assert_near(s.last_tenth, (2 * 86000 + 8 * 20000) / 10.0, 0.05);
	assert_true(lc_rate_shape(timeline(at70, NPTS, 0.05), NPTS, &s));
	assert_true(s.drop);
	assert_near(s.at_count, 140 * 86000, 0.05);
}

/* ---- results: ext4 at 1M, 10M, 100M (1M and 100M twice: the last counts), xfs at one scale ---- */

static struct lc_cycle cyc[8];
static uint64_t scales[] = {1000000, 10000000, 100000000};
static struct lc_results *results(void)
{
	static struct lc_results r;
	memset(cyc, 0, sizeof(cyc));
	static const struct {
		const char *fs;
		double n, fill, walk, walk_stat, verify, rm;
	} rows[] = {
	    {"ext4", 1e6, 99999, 9999, 9999, 9999, 99999}, /* run again below */
	    {"ext4", 1e6, 10000, 8000, 8000, 9000, 20000},
	    {"ext4", 1e7, 11000, 9000, 8200, 9500, 21000},
	    {"ext4", 1e8, 99999, 9999, 9999, 9999, 99999}, /* run again below */
	    {"ext4", 1e8, 12500, 20000, 8000, 9000, 30000},
	    {"xfs", 1e6, 10000, 8000, 8000, 9000, 20000},
	};
	size_t n = sizeof(rows) / sizeof(rows[0]);
	for (size_t i = 0; i < n; i++) {
		cyc[i].fs = (char *)rows[i].fs;
		cyc[i].files = (uint64_t)rows[i].n;
		cyc[i].complete = true;
		cyc[i].lazy_itable_init = -1;
		for (int k = 0; k < PH_N; k++)
			cyc[i].ph[k] = (struct lc_phase){.status = LC_OK, .exit_status = 0, .wall_s = 1, .peak_rss_kib = 1000,
							 .rate = NAN, .min_mem_kib = NAN};
		cyc[i].ph[PH_FILL].peak_rss_kib = rows[i].fill;
		cyc[i].ph[PH_WALK].peak_rss_kib = rows[i].walk;
		cyc[i].ph[PH_WALK_STAT].peak_rss_kib = rows[i].walk_stat;
		cyc[i].ph[PH_VERIFY].peak_rss_kib = rows[i].verify;
		cyc[i].ph[PH_RM].peak_rss_kib = rows[i].rm;
	}
	/* verify failed at 100M, both times: its largest measured scale is 10M. */
	cyc[3].ph[PH_VERIFY].status = cyc[4].ph[PH_VERIFY].status = LC_FAILED;
	/* ext4's fill and rm at 100M have the step; xfs's fill has a timeline without a drop, and ext4's
	 * fill at 10M one too short. */
	static struct lc_point fill_tl[NPTS], rm_tl[NPTS], level_tl[NPTS], short_tl[10];
	memcpy(fill_tl, timeline(step, NPTS, 0.1), sizeof(fill_tl));
	memcpy(rm_tl, timeline(step, NPTS, 0.1), sizeof(rm_tl));
	memcpy(level_tl, timeline(level, NPTS, 0.1), sizeof(level_tl));
	memcpy(short_tl, timeline(step, 10, 0), sizeof(short_tl));
	cyc[4].ph[PH_FILL].tl = fill_tl, cyc[4].ph[PH_FILL].ntl = NPTS, cyc[4].ph[PH_FILL].rate_unit = "files/s";
	cyc[4].ph[PH_RM].tl = rm_tl, cyc[4].ph[PH_RM].ntl = NPTS, cyc[4].ph[PH_RM].rate_unit = "entries/s";
	cyc[5].ph[PH_FILL].tl = level_tl, cyc[5].ph[PH_FILL].ntl = NPTS, cyc[5].ph[PH_FILL].rate_unit = "files/s";
	cyc[2].ph[PH_FILL].tl = short_tl, cyc[2].ph[PH_FILL].ntl = 10, cyc[2].ph[PH_FILL].rate_unit = "files/s";
	r = (struct lc_results){.kernel = "k", .cpu_model = "c", .cpus = 2, .mem_kib = 24 * 1024 * 1024,
				.files = 1e8, .project = 1e9, .complete = true, .scales = scales, .nscales = 3,
				.cycles = cyc, .ncycles = n, .image_dir = "/var/tmp", .started = "s", .updated = "u"};
	return &r;
}

static const struct lc_rss_flat *row_of(const struct lc_rss_flat *f, size_t n, const char *fs, int phase)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(f[i].series, fs) && f[i].phase == phase)
			return &f[i];
	return NULL;
}

/* Per filesystem and myriad phase: the largest scale over the smallest, flat up to 1.25× (the bar
 * itself included); a scale run twice counts its last cycle; a failed phase's scale is left out; a
 * filesystem at one scale has no rows; the checker and mkfs are not myriad's. */
static void rss_table(void **state)
{
	struct lc_results *r = results();
	struct lc_rss_flat *f;
	size_t n = lc_rss_flatness(&r, 1, &f);
	assert_int_equal(n, 5);
	const struct lc_rss_flat *fill = row_of(f, n, "ext4", PH_FILL);
	assert_non_null(fill);
	assert_true(fill->small_n == 1e6 && fill->large_n == 1e8);
	assert_true(fill->small_kib == 10000 && fill->large_kib == 12500);
	assert_true(fill->ratio == 1.25);
	assert_true(fill->flat);
	const struct lc_rss_flat *walk = row_of(f, n, "ext4", PH_WALK);
	assert_true(walk->ratio == 2.5);
	assert_false(walk->flat);
	assert_true(row_of(f, n, "ext4", PH_WALK_STAT)->flat);
	const struct lc_rss_flat *verify = row_of(f, n, "ext4", PH_VERIFY);
	assert_true(verify->large_n == 1e7 && verify->large_kib == 9500);
	assert_false(row_of(f, n, "ext4", PH_RM)->flat);
	assert_null(row_of(f, n, "xfs", PH_FILL));
	assert_null(row_of(f, n, "ext4", PH_CHECK));
	lc_rss_flat_free(f, n);
}

/* The phase of fs at files in a results.json document, or NULL. */
static const struct jv *phase_in(const struct jv *d, const char *fs, double files, const char *name)
{
	const struct jv *cy = jv_get(d, "cycles");
	const struct jv *found = NULL;
	for (size_t i = 0; cy && i < cy->n; i++) {
		const struct jv *c = &cy->items[i];
		if (strcmp(jv_str(c, "fs", ""), fs) || jv_num(c, "files", 0) != files)
			continue;
		const struct jv *ps = jv_get(c, "phases");
		for (size_t k = 0; ps && k < ps->n; k++)
			if (!strcmp(jv_str(&ps->items[k], "name", ""), name))
				found = &ps->items[k];
	}
	return found;
}

/* results.json: the drop under the fill's phase (with the memory hint), null under a phase judged
 * without one, nothing under a timeline too short; and the memory table. */
static void results_json_carries_both(void **state)
{
	struct sbuf b = {0};
	lc_results_json(results(), &b);
	char err[128];
	struct jv *d = jv_parse(b.data, b.len, err, sizeof(err));
	assert_non_null(d);
	const struct jv *drop = jv_get(phase_in(d, "ext4", 1e8, "fill"), "rate_drop");
	assert_non_null(drop);
	assert_true(drop->type == JV_OBJ);
	assert_near(jv_num(drop, "at_count", 0), 80 * 86000, 0.05);
	assert_near(jv_num(drop, "at_s", 0), 80, 0.05);
	assert_near(jv_num(drop, "before", 0), 86000, 0.05);
	assert_near(jv_num(drop, "after", 0), 34000, 0.05);
	assert_near(jv_num(drop, "fall_percent", 0), 60, 0.1);
	assert_near(jv_num(drop, "host_mem_bytes_per_file", 0), 24.0 * 1024 * 1024 * 1024 / (80 * 86000), 0.05);
	assert_near(jv_num(jv_get(phase_in(d, "ext4", 1e8, "fill"), "rate_tenths"), "last", 0), 34000, 0.05);
	const struct jv *level = phase_in(d, "xfs", 1e6, "fill");
	assert_non_null(jv_get(level, "rate_drop"));
	assert_true(jv_get(level, "rate_drop")->type == JV_NULL);
	/* rm's drop is there too, without the hint: its count is not files present. */
	const struct jv *rm = jv_get(phase_in(d, "ext4", 1e8, "rm"), "rate_drop");
	assert_near(jv_num(rm, "at_count", 0), 80 * 86000, 0.05);
	assert_null(jv_get(rm, "host_mem_bytes_per_file"));
	assert_null(jv_get(phase_in(d, "ext4", 1e7, "fill"), "rate_drop"));
	assert_null(jv_get(phase_in(d, "ext4", 1e7, "fill"), "rate_tenths"));
	const struct jv *mem = jv_get(d, "myriad_memory");
	assert_non_null(mem);
	assert_true(jv_num(mem, "flat_within", 0) == 1.25);
	const struct jv *rows = jv_get(mem, "phases");
	assert_int_equal(rows->n, 5);
	assert_string_equal(jv_str(&rows->items[1], "phase", ""), "walk");
	assert_true(jv_num(&rows->items[1], "smallest_files", 0) == 1e6);
	assert_true(jv_num(&rows->items[1], "largest_peak_rss_kib", 0) == 20000);
	assert_true(jv_num(&rows->items[1], "ratio", 0) == 2.5);
	assert_string_equal(jv_str(&rows->items[1], "verdict", ""), "grows");
	assert_string_equal(jv_str(&rows->items[0], "verdict", ""), "flat");
	jv_free(d);
	/* Read back and written again, it says the same. */
	struct lc_results *back = lc_parse(b.data, b.len, "t.json", err, sizeof(err));
	assert_non_null(back);
	struct sbuf again = {0};
	lc_results_json(back, &again);
	d = jv_parse(again.data, again.len, err, sizeof(err));
	assert_near(jv_num(jv_get(phase_in(d, "ext4", 1e8, "fill"), "rate_drop"), "at_count", 0), 80 * 86000, 0.05);
	jv_free(d);
	lc_free(back);
	sbuf_free(&again);
	sbuf_free(&b);
}

static char *render(struct lc_results *r)
{
	char path[] = "/tmp/myriad-test-flat.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(lc_render_html(&r, 1, path), 0);
	FILE *f = fopen(path, "r");
	static char page[1 << 21];
	size_t n = fread(page, 1, sizeof(page) - 1, f);
	page[n] = 0;
	fclose(f);
	unlink(path);
	return page;
}

/* The page: under the charts, the drops of ext4's fill (with the memory hint) and rm in words, and
 * xfs's fill without one, before the projections; then the memory table. */
static void page_shows_both(void **state)
{
	const char *page = render(results());
	const char *rates = strstr(page, "<h3>The rate during each run</h3>");
	const char *mem = strstr(page, "<h3>Memory: myriad's own phases</h3>");
	assert_non_null(rates);
	assert_non_null(mem);
	assert_true(strstr(page, "<h2>Charts</h2>") < rates && rates < mem);
	assert_true(mem < strstr(page, "<h2>Projection to"));
	const char *fill = strstr(rates, "<li><b>ext4, 100,000,000 files, fill</b>: 86,000 files/s until about 6,900,000 "
					 "files (after ");
	assert_non_null(fill);
	assert_non_null(strstr(fill, "), then 34,000 files/s for the rest (the rate fell by 6"));
	assert_non_null(strstr(fill, "bytes per file present at the drop"));
	const char *rm = strstr(rates, "<li><b>ext4, 100,000,000 files, rm</b>: 86,000 entries/s until about 6,900,000 "
				       "entries removed (after ");
	assert_non_null(rm);
	assert_null(strstr(rm, "bytes per file present"));
	const char *level = strstr(rates, "<li><b>xfs, 1,000,000 files, fill</b>: no lasting drop. First tenth of the "
					  "time 86,000, last tenth 86,000 files/s.</li>");
	assert_non_null(level);
	assert_true(level < mem);
	assert_null(strstr(rates, "10,000,000 files, fill"));
	assert_non_null(strstr(mem, "<tr><td class=l>ext4</td><td class=l>fill</td><td>1,000,000</td><td>9.77 MiB</td>"
				    "<td>100,000,000</td><td>12.2 MiB</td><td>1.25&times;</td><td class=l>flat</td></tr>"));
	assert_non_null(strstr(mem, "<td class=l>walk</td><td>1,000,000</td><td>7.81 MiB</td><td>100,000,000</td>"
				    "<td>19.5 MiB</td><td>2.50&times;</td><td class=l><b>grows</b></td></tr>"));
}

/* With nothing long enough or measured twice, the page says so rather than showing empty tables. */
static void page_says_when_there_is_nothing(void **state)
{
	struct lc_results *r = results();
	r->ncycles = 1;
	const char *page = render(r);
	assert_non_null(strstr(page, "No phase has a timeline long enough to judge."));
	assert_non_null(strstr(page, "Needs a phase measured at two or more scales."));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(step_drop_is_found),
	    cmocka_unit_test(noise_is_no_drop),
	    cmocka_unit_test(one_slow_sample_is_no_drop),
	    cmocka_unit_test(gradual_decline_is_no_drop),
	    cmocka_unit_test(small_step_is_below_the_bar),
	    cmocka_unit_test(too_few_points_say_nothing),
	    cmocka_unit_test(drop_at_the_tail_is_no_drop),
	    cmocka_unit_test(rss_table),
	    cmocka_unit_test(results_json_carries_both),
	    cmocka_unit_test(page_shows_both),
	    cmocka_unit_test(page_says_when_there_is_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
