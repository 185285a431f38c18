/* Unit tests for util (number parsing and formatting) and sbuf. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "util/sbuf.h"
#include "util/util.h"

static void counts_take_decimal_suffixes(void **state)
{
	uint64_t v;
	assert_true(parse_count("0", &v));
	assert_int_equal(v, 0);
	assert_true(parse_count("1M", &v));
	assert_int_equal(v, 1000000);
	assert_true(parse_count("100k", &v));
	assert_int_equal(v, 100000);
	assert_true(parse_count("1G", &v));
	assert_int_equal(v, 1000000000);
	assert_true(parse_count("1T", &v));
	assert_int_equal(v, 1000000000000ULL);
	assert_false(parse_count("", &v));
	assert_false(parse_count("-1", &v));
	assert_false(parse_count("1x", &v));
	assert_false(parse_count("1MB", &v));
	assert_false(parse_count("99999999999999999999", &v));
	assert_false(parse_count("20000000E", &v)); /* overflows */
	/* The edges every numeric option is tried at (tests/cli/edges.sh): 2^64-1 is the largest. */
	assert_true(parse_count("18446744073709551615", &v));
	assert_true(v == UINT64_MAX);
	assert_false(parse_count("18446744073709551616", &v));
	assert_true(parse_count("18E", &v));
	assert_false(parse_count("19E", &v));
	assert_false(parse_count("1e999", &v));
	assert_false(parse_count("1.5", &v));
	/* A fraction with a suffix, when it comes out whole (lifecycle --scales 3.3M was refused). */
	assert_true(parse_count("3.3M", &v));
	assert_int_equal(v, 3300000);
	assert_true(parse_count("1.5k", &v));
	assert_int_equal(v, 1500);
	assert_true(parse_count("0.25M", &v));
	assert_int_equal(v, 250000);
	assert_true(parse_count("1.000001M", &v));
	assert_int_equal(v, 1000001);
	assert_true(parse_count("18.4E", &v));
	assert_true(v == 18400000000000000000ull);
	assert_false(parse_count("18.5E", &v)); /* past 2^64 - 1 */
	assert_false(parse_count("1.2345k", &v)); /* 1234.5: not whole */
	assert_false(parse_count("3.M", &v));
	assert_false(parse_count(".5M", &v));
	assert_false(parse_count("1.5.5M", &v));
	assert_false(parse_count("1.00000000000000000001M", &v)); /* more digits than any count has */
	assert_true(parse_size("1.5k", &v));
	assert_int_equal(v, 1536);
	assert_true(parse_size("0.5GiB", &v));
	assert_int_equal(v, 512u << 20);
	assert_false(parse_size("1.1k", &v)); /* 1126.4 */
	assert_false(parse_size("2.5", &v));
	assert_false(parse_count(NULL, &v));
	uint64_t lo, hi;
	assert_true(parse_size("15E", &v));
	assert_true(v == 15ull << 60);
	assert_true(parse_size_range("0-0", &lo, &hi) && lo == 0 && hi == 0);
	assert_true(parse_size_range("0-15E", &lo, &hi) && hi == 15ull << 60);
	assert_false(parse_size_range("0-16E", &lo, &hi));
}

static void sizes_take_binary_suffixes(void **state)
{
	uint64_t v;
	assert_true(parse_size("4k", &v));
	assert_int_equal(v, 4096);
	assert_true(parse_size("20M", &v));
	assert_int_equal(v, 20 << 20);
	assert_true(parse_size("1GiB", &v));
	assert_int_equal(v, 1 << 30);
	assert_true(parse_size("512", &v));
	assert_int_equal(v, 512);
	assert_false(parse_size("4q", &v));
	assert_false(parse_size("k", &v));
	/* Found by tests/fuzz numbers: a bare byte unit was refused, spaces and signs taken. */
	assert_true(parse_size("512B", &v));
	assert_int_equal(v, 512);
	assert_true(parse_size("4kB", &v));
	assert_int_equal(v, 4096);
	assert_false(parse_size(" 4k", &v));
	assert_false(parse_count("\t5", &v));
	assert_false(parse_count("+5", &v));
	assert_false(parse_size("16E", &v)); /* 2^64: overflows */
}

static void size_ranges(void **state)
{
	uint64_t lo, hi;
	assert_true(parse_size_range("1k-64k", &lo, &hi));
	assert_true(lo == 1024 && hi == 65536);
	assert_true(parse_size_range("4k", &lo, &hi));
	assert_true(lo == 4096 && hi == 4096);
	assert_false(parse_size_range("64k-1k", &lo, &hi));
	assert_false(parse_size_range("-1k", &lo, &hi));
	assert_false(parse_size_range("1k-", &lo, &hi));
	assert_false(parse_size_range("1k-2k-3k", &lo, &hi));
	/* Lifecycle cut the low end at 63 bytes and parsed what was left. */
	assert_false(parse_size_range("0000000000000000000000000000000000000000000000000000000000000000001-2", &lo, &hi));
}

static void counts_format_with_separators(void **state)
{
	char b[32];
	assert_string_equal(fmt_count(b, 0), "0");
	assert_string_equal(fmt_count(b, 999), "999");
	assert_string_equal(fmt_count(b, 1000), "1,000");
	assert_string_equal(fmt_count(b, 1234567), "1,234,567");
	assert_string_equal(fmt_bytes(b, 1536), "1.5 KiB");
}

static void sbuf_grows(void **state)
{
	struct sbuf b = {0};
	for (int i = 0; i < 10000; i++)
		sbuf_addc(&b, 'a' + i % 26);
	sbuf_printf(&b, "%d", 42);
	assert_int_equal(b.len, 10002);
	assert_memory_equal(b.data + 10000, "42", 2);
	sbuf_free(&b);
}

/* A field by its exact name: "Mem" is no field, though MemTotal starts with it. */
static void meminfo_fields(void **state)
{
	double total = meminfo_kib("MemTotal"), avail = meminfo_kib("MemAvailable");
	assert_true(isfinite(total) && total > 0);
	assert_true(isfinite(avail) && avail > 0 && avail <= total);
	assert_true(isnan(meminfo_kib("Mem")));
	assert_true(isnan(meminfo_kib("NoSuchField")));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(counts_take_decimal_suffixes),
	    cmocka_unit_test(sizes_take_binary_suffixes),
	    cmocka_unit_test(size_ranges),
	    cmocka_unit_test(counts_format_with_separators),
	    cmocka_unit_test(sbuf_grows),
	    cmocka_unit_test(meminfo_fields),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
