/* Unit tests for report/progress: the text every command's status line shares (counts with
 * thousands separators, the share done, the rate, the ETA, "1 error" / "N errors", durations in
 * s, m, h and d) and when a line is due (never with an interval of 0). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "report/progress.h"
#include "util/util.h"

static void expect_format(const char *want, const char *unit, uint64_t done, uint64_t total, double elapsed,
			  double rate, uint64_t errors)
{
	struct sbuf b = {0};
	progress_format(&b, unit, done, total, elapsed, rate, errors);
	sbuf_addc(&b, 0);
	assert_string_equal(b.data, want);
	sbuf_free(&b);
}

static void format(void **state)
{
	/* No total: no share, no ETA. */
	expect_format("1,234,567 entries, 12,345/s, 0 errors, 59s", "entries", 1234567, 0, 59.4, 12345.6, 0);
	/* A total: the share and an ETA ((400 - 100) / 10 s = 30 s). */
	expect_format("100 files of 400 (25.0%), 10/s, ETA 30s, 1 error, 10s", "files", 100, 400, 10, 10, 1);
	/* Done: no ETA; durations in minutes, hours, days. */
	expect_format("400 files of 400 (100.0%), 10/s, 2 errors, 1m01s", "files", 400, 400, 61, 10, 2);
	expect_format("5 files of 10 (50.0%), 0/s, 0 errors, 1h01m", "files", 5, 10, 3661, 0, 0);
	expect_format("2 entries of 4 (50.0%), 1/s, ETA 2s, 1,000 errors, 1d01h", "entries", 2, 4, 90000, 1, 1000);
}

static void eta(void **state)
{
	struct sbuf b = {0};
	progress_eta(&b, 0.25, 10);
	progress_eta(&b, 0, 10);  /* nothing known yet */
	progress_eta(&b, 1, 10);  /* done */
	progress_eta(&b, 0.5, 0); /* no time yet */
	progress_eta(&b, 0.5, 7200);
	sbuf_addc(&b, 0);
	assert_string_equal(b.data, ", ETA 30s, ETA 2h00m");
	sbuf_free(&b);
}

static void when_due(void **state)
{
	struct progress p;
	progress_init(&p, 0); /* never */
	uint64_t now = now_ns();
	assert_false(progress_due(&p, now + 1000000000000ull));
	assert_true(progress_wait_ms(&p, now) >= 1000000);
	progress_init(&p, 2);
	now = now_ns();
	assert_false(progress_due(&p, now));
	int ms = progress_wait_ms(&p, now);
	assert_true(ms > 1900 && ms <= 2001);
	assert_true(progress_due(&p, now + 2100000000ull));
	assert_false(progress_due(&p, now + 2200000000ull)); /* the next is 2 s after that one */
	assert_true(progress_due(&p, now + 4200000000ull));
	assert_int_equal(progress_wait_ms(&p, now + 7000000000ull), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(format),
	    cmocka_unit_test(eta),
	    cmocka_unit_test(when_due),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
