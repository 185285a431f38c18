/* Unit tests for layout (the deterministic tree of fill/verify) and hist (latency histograms). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "state/layout.h"
#include "report/hist.h"

static void shapes_are_balanced(void **state)
{
	struct layout l;
	assert_true(layout_init(&l, 1000000, 1000, 0, 0, 0));
	assert_int_equal(l.leaves, 1000);
	assert_int_equal(l.depth, 1);
	assert_true(layout_init(&l, 1000, 1000, 0, 0, 0));
	assert_int_equal(l.leaves, 1);
	assert_int_equal(l.depth, 0); /* the files sit in DIR itself */
	assert_true(layout_init(&l, 10000001, 1000, 0, 0, 0));
	assert_int_equal(l.leaves, 10001);
	assert_int_equal(l.depth, 2);
	assert_int_equal(l.dirs_at[1], 11);
	assert_int_equal(l.dirs_at[2], 10001);
	assert_int_equal(layout_leaf_files(&l, 10000), 1);
	assert_int_equal(layout_leaf_files(&l, 9999), 1000);
	assert_false(layout_init(&l, 10, 1, 0, 0, 0));
	assert_false(layout_init(&l, 10, 10, 5, 4, 0));
}

/* Found by tests/fuzz (manifest): fanout 2 and 10^15 files made 49 levels and overran the
 * 24-entry level table (also `myriad fill -n 1P --fanout 2`: a segfault). */
static void too_deep_layouts_are_refused(void **state)
{
	struct layout l;
	assert_true(layout_init(&l, 1ull << 24, 2, 0, 0, 0));
	assert_int_equal(l.depth, LAYOUT_DEPTH_MAX);
	assert_false(layout_init(&l, (1ull << 24) + 1, 2, 0, 0, 0));
	assert_false(layout_init(&l, 1000000000000000ull, 2, 0, 0, 0));
	assert_true(layout_init(&l, 1000000000000000ull, 5, 0, 0, 0));
}

static void paths_spell_the_leaf_in_base_fanout(void **state)
{
	struct layout l;
	char buf[600];
	assert_true(layout_init(&l, 10000001, 1000, 0, 0, 0));
	layout_dir_path(&l, 2, 1234, buf);
	assert_string_equal(buf, "d1/d234");
	layout_dir_path(&l, 1, 7, buf);
	assert_string_equal(buf, "d7");
	assert_int_equal(layout_dir_path(&l, 0, 0, buf), 0);
	layout_file_name(1234567, buf);
	assert_string_equal(buf, "f1234567");
}

static void names_parse_only_in_canonical_form(void **state)
{
	uint64_t v;
	assert_true(layout_parse_file("f0", &v));
	assert_int_equal(v, 0);
	assert_true(layout_parse_file("f123", &v));
	assert_int_equal(v, 123);
	assert_false(layout_parse_file("f0123", &v));
	assert_false(layout_parse_file("f", &v));
	assert_false(layout_parse_file("f12a", &v));
	assert_false(layout_parse_file("d12", &v));
	assert_false(layout_parse_file("f99999999999999999999999", &v));
	assert_true(layout_parse_dir("d5", &v));
	assert_false(layout_parse_dir("d-5", &v));
}

static void sizes_and_contents_are_functions_of_the_parameters(void **state)
{
	struct layout a, b;
	assert_true(layout_init(&a, 100, 10, 1000, 5000, 7));
	assert_true(layout_init(&b, 100, 10, 1000, 5000, 8));
	int differ = 0;
	for (uint64_t i = 0; i < 100; i++) {
		uint64_t s = layout_file_size(&a, i);
		assert_true(s >= 1000 && s <= 5000);
		assert_int_equal(s, layout_file_size(&a, i));
		differ += s != layout_file_size(&b, i);
	}
	assert_true(differ > 50);
	unsigned char x[64], y[64], z[64];
	layout_file_data(&a, 3, 0, x, 64);
	layout_file_data(&a, 3, 0, y, 64);
	assert_memory_equal(x, y, 64);
	layout_file_data(&a, 3, 16, z, 48); /* any 8-aligned offset gives the same bytes */
	assert_memory_equal(x + 16, z, 48);
	layout_file_data(&a, 4, 0, y, 64);
	assert_memory_not_equal(x, y, 64);
}

static void histogram_percentiles_are_close(void **state)
{
	static struct hist h;
	memset(&h, 0, sizeof(h));
	for (uint64_t v = 1; v <= 100000; v++)
		hist_add(&h, v * 1000);
	uint64_t p50 = hist_quantile(&h, 0.5), p99 = hist_quantile(&h, 0.99);
	assert_true(p50 >= 50000000 * 0.93 && p50 <= 50000000 * 1.07);
	assert_true(p99 >= 99000000 * 0.93 && p99 <= 99000000 * 1.07);
	assert_int_equal(hist_quantile(&h, 1.0), 100000000);
	static struct hist g;
	memset(&g, 0, sizeof(g));
	hist_add(&g, 5);
	hist_merge(&g, &h);
	assert_int_equal(g.count, 100001);
	struct sbuf b = {0};
	ser_begin(&b, "MYRTEST1");
	hist_save(&b, &g);
	ser_end(&b);
	struct deser d;
	const char *why;
	static struct hist r;
	assert_true(deser_begin(&d, b.data, b.len, "MYRTEST1", &why));
	assert_true(hist_load(&r, &d));
	assert_memory_equal(&r, &g, sizeof(r));
	sbuf_free(&b);
}

/* A blob of n u64s, read back with deser. */
static void blob_of(struct sbuf *b, struct deser *d, const uint64_t *v, size_t n)
{
	b->len = 0;
	for (size_t i = 0; i < n; i++)
		ser_u64(b, v[i]);
	*d = (struct deser){.p = (const unsigned char *)b->data, .len = b->len};
}

/* Found by tests/fuzz (walk_state, pool_state): a bucket listed twice loaded, and then saved into
 * a snapshot that no longer loaded; times past 2^64 ns overflowed when saved again. */
static void saved_histograms_and_timelines_are_checked(void **state)
{
	struct sbuf b = {0};
	struct deser d;
	static struct hist h;
	static struct timeline tl;
	uint64_t good[] = {3, 9, 2, 4, 1, 7, 2};
	blob_of(&b, &d, good, 7);
	assert_true(hist_load(&h, &d));
	uint64_t twice[] = {3, 9, 2, 4, 1, 4, 2};
	blob_of(&b, &d, twice, 7);
	assert_false(hist_load(&h, &d));
	uint64_t zero[] = {3, 9, 2, 4, 3, 7, 0};
	blob_of(&b, &d, zero, 7);
	assert_false(hist_load(&h, &d));
	uint64_t wraps[] = {1, 9, 2, 4, UINT64_MAX, 7, 2};
	blob_of(&b, &d, wraps, 7);
	assert_false(hist_load(&h, &d));
	uint64_t tgood[] = {2, 500000000, 1000000000, 10, 2000000000, 10};
	blob_of(&b, &d, tgood, 6);
	assert_true(timeline_load(&tl, &d));
	uint64_t back[] = {2, 500000000, 2000000000, 10, 1000000000, 20};
	blob_of(&b, &d, back, 6);
	assert_false(timeline_load(&tl, &d));
	uint64_t fewer[] = {2, 500000000, 1000000000, 20, 2000000000, 10};
	blob_of(&b, &d, fewer, 6);
	assert_false(timeline_load(&tl, &d));
	uint64_t huge[] = {1, 500000000, UINT64_MAX, 10};
	blob_of(&b, &d, huge, 4);
	assert_false(timeline_load(&tl, &d));
	sbuf_free(&b);
}

static void timelines_stay_bounded(void **state)
{
	static struct timeline tl;
	timeline_init(&tl, 0.5);
	for (int i = 0; i < 100000; i++)
		timeline_add(&tl, i * 0.1, (uint64_t)i * 10);
	assert_true(tl.n <= TIMELINE_MAX);
	assert_true(tl.n >= TIMELINE_MAX / 2);
	for (uint32_t i = 1; i < tl.n; i++)
		assert_true(tl.t[i] > tl.t[i - 1] && tl.v[i] > tl.v[i - 1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(shapes_are_balanced),
	    cmocka_unit_test(too_deep_layouts_are_refused),
	    cmocka_unit_test(paths_spell_the_leaf_in_base_fanout),
	    cmocka_unit_test(names_parse_only_in_canonical_form),
	    cmocka_unit_test(sizes_and_contents_are_functions_of_the_parameters),
	    cmocka_unit_test(histogram_percentiles_are_close),
	    cmocka_unit_test(timelines_stay_bounded),
	    cmocka_unit_test(saved_histograms_and_timelines_are_checked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
