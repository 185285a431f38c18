/* Unit tests for the lifecycle report's numbers: axis ticks, exact JSON integers, fits that
 * refuse to project from too little or against the grain. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lifecycle/chart.h"
#include "lifecycle/fit.h"
#include "report/json.h"
#include "lifecycle/page.h"
#include "lifecycle/results.h"
#include "util/sbuf.h"

static char *tics(double lo, double hi, bool logscale, bool si)
{
	static struct sbuf b;
	sbuf_clear(&b);
	lc_axis_tics(&b, 'x', lo, hi, logscale, si);
	sbuf_addc(&b, 0);
	return b.data;
}

/* The labels of a "set xtics (...)" line, space separated. */
static char *labels(const char *t)
{
	static char out[1024];
	out[0] = 0;
	const char *p = strstr(t, "set xtics (");
	for (p = p ? strchr(p, '"') : NULL; p;) {
		const char *e = strchr(p + 1, '"');
		if (out[0])
			strcat(out, " ");
		strncat(out, p + 1, e - p - 1);
		p = strchr(e, ',');
		p = p ? strchr(p, '"') : NULL;
	}
	return out;
}

/* Found in a report: a linear axis from 1,000 to 2,000 files read "1k 1k 1k 2k". */
static void linear_ticks_are_distinct(void **state)
{
	assert_string_equal(labels(tics(1000, 2000, false, true)), "1k 1.2k 1.4k 1.6k 1.8k 2k");
	assert_string_equal(labels(tics(0, 1e6, false, true)), "0 200k 400k 600k 800k 1M");
	assert_string_equal(labels(tics(0, 3.2e6, false, true)), "0 1M 2M 3M 4M");
	assert_string_equal(labels(tics(0.5, 2.5, false, false)), "0.5 1 1.5 2 2.5");
}

/* Found in a report: rates of 3,000,000 read "3e+06". */
static void log_ticks_read_as_counts(void **state)
{
	assert_string_equal(labels(tics(1e5, 1e6, true, true)), "100k 200k 500k 1M");
	assert_string_equal(labels(tics(1e5, 1e8, true, true)), "100k 200k 500k 1M 2M 5M 10M 20M 50M 100M");
	assert_string_equal(labels(tics(1e4, 1e9, true, true)), "10k 100k 1M 10M 100M 1G");
	assert_string_equal(labels(tics(0.012, 3.5, true, false)), "0.01 0.02 0.05 0.1 0.2 0.5 1 2 5");
	assert_true(strstr(tics(1e5, 1e6, true, true), "set xrange [99999.9:1000001]") != NULL);
	assert_string_equal(tics(NAN, NAN, true, true), "");
	assert_string_equal(tics(0, 10, true, true), ""); /* log of 0: left to gnuplot */
}

/* results.json wrote "image_bytes":2.14748e+09. */
static void json_integers_are_exact(void **state)
{
	struct sbuf b = {0};
	struct json j;
	json_init(&j, &b);
	json_open(&j, NULL, '[');
	json_double(&j, NULL, 2147483648.0);
	json_double(&j, NULL, 1e15);
	json_double(&j, NULL, 0.25);
	json_double(&j, NULL, -3);
	json_double(&j, NULL, NAN);
	json_close(&j, ']');
	sbuf_addc(&b, 0);
	assert_string_equal(b.data, "[2147483648,1000000000000000,0.25,-3,null]");
	sbuf_free(&b);
}

/* A cold walk was projected to 0.000126 s at 10^9 files from two scales. */
static void no_projection_from_two_scales_or_a_shrinking_fit(void **state)
{
	struct lc_fit f;
	double x2[] = {1e5, 1e6}, y2[] = {0.5, 0.05};
	assert_false(lc_fit(x2, y2, 2, 1e9, &f));
	double x[] = {1e5, 3.33e5, 1e6}, y[] = {0.5, 0.2, 0.05};
	assert_true(lc_fit(x, y, 3, 1e9, &f));
	assert_string_equal(f.model, "no trend");
	assert_true(isnan(f.projected));
	double up[] = {0.05, 0.2, 0.5};
	assert_true(lc_fit(x, up, 3, 1e9, &f));
	assert_true(f.projected > 0.5);
}

/* The page opens with a verdict: per phase the fastest filesystem at the largest shared scale, by
 * how much, and each checker's memory. */
static void report_opens_with_a_verdict(void **state)
{
	uint64_t scales[] = {1000, 3000, 10000};
	struct lc_cycle cyc[6];
	memset(cyc, 0, sizeof(cyc));
	for (int i = 0; i < 6; i++) {
		double slow = i < 3 ? 1 : 2.5; /* xfs 2.5x slower than ext4 */
		cyc[i].fs = i < 3 ? "ext4" : "xfs";
		cyc[i].files = scales[i % 3];
		cyc[i].complete = true;
		cyc[i].lazy_itable_init = -1;
		for (int k = 0; k < PH_N; k++)
			cyc[i].ph[k] = (struct lc_phase){.status = LC_OK, .wall_s = 1e-3 * slow * scales[i % 3],
							 .peak_rss_kib = 4096 * slow, .rate = NAN, .min_mem_kib = NAN};
	}
	struct lc_results r = {.kernel = "k", .cpu_model = "c", .cpus = 2, .mem_kib = 1024, .files = 10000,
			       .project = 1e9, .complete = true, .scales = scales, .nscales = 3, .cycles = cyc,
			       .ncycles = 6, .image_dir = "/var/tmp", .started = "s", .updated = "u"};
	struct lc_results *runs[] = {&r};
	char path[] = "/tmp/myriad-test-report.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(lc_render_html(runs, 1, path), 0);
	FILE *f = fopen(path, "r");
	static char page[1 << 20];
	size_t n = fread(page, 1, sizeof(page) - 1, f);
	page[n] = 0;
	fclose(f);
	unlink(path);
	const char *v = strstr(page, "<h2>Verdict</h2>");
	assert_non_null(v);
	assert_true(v < strstr(page, "<h2>Run 1"));
	assert_non_null(strstr(v, "<td>10,000 files</td><td class=l><b>ext4</b></td><td>10 s</td><td class=l>xfs</td>"
				  "<td>25 s</td><td>2.50&times;</td>"));
	assert_non_null(strstr(v, "at 10,000 files: ext4 4 MiB; xfs 10 MiB."));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(linear_ticks_are_distinct),
	    cmocka_unit_test(log_ticks_read_as_counts),
	    cmocka_unit_test(json_integers_are_exact),
	    cmocka_unit_test(no_projection_from_two_scales_or_a_shrinking_fit),
	    cmocka_unit_test(report_opens_with_a_verdict),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
