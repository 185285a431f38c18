/* Unit tests for fill's split of small leaves among workers (fill_make.c): only where it helps —
 * never for empty files without --sync file, where two workers in one directory serialize on its
 * lock — and a resumed fill finds the split its snapshot's units were made with. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cmd/fill/fill_int.h"

static struct layout lay_of(uint64_t files, uint64_t fanout, uint64_t size)
{
	struct layout lay;
	assert_true(layout_init(&lay, files, fanout, size, size, 0));
	return lay;
}

static void empty_files_are_never_split_without_sync_file(void **state)
{
	/* 200 leaves (the 2x10^5 bench), a single leaf, and one leaf per worker of a large -j. */
	struct layout l200 = lay_of(200000, 1000, 0), l1 = lay_of(1000, 1000, 0), l10 = lay_of(10000, 1000, 0);
	assert_int_equal(fill_parts(&l200, SYNC_NONE, 2), 1);
	assert_int_equal(fill_parts(&l200, SYNC_END, 2), 1);
	assert_int_equal(fill_parts(&l1, SYNC_NONE, 2), 1);
	assert_int_equal(fill_parts(&l10, SYNC_NONE, 64), 1);
}

static void sync_file_splits_small_fills(void **state)
{
	struct layout l200 = lay_of(200000, 1000, 0), l1000 = lay_of(1000000, 1000, 0);
	assert_int_equal(fill_split(&l200), 3); /* 600 units: at least FILL_MIN_UNITS */
	assert_int_equal(fill_parts(&l200, SYNC_FILE, 64), 3);
	assert_int_equal(fill_parts(&l200, SYNC_FILE, 1), 3); /* a function of the layout, not of -j */
	assert_int_equal(fill_parts(&l1000, SYNC_FILE, 64), 1); /* enough leaves */
	struct layout l1 = lay_of(1000, 1000, 0);
	assert_int_equal(fill_parts(&l1, SYNC_FILE, 64), 32); /* parts of at least FILL_MIN_PART files */
}

static void files_with_data_split_only_for_idle_workers(void **state)
{
	struct layout l1 = lay_of(1000, 1000, 1 << 20), l50 = lay_of(50000, 1000, 4096);
	assert_int_equal(fill_parts(&l1, SYNC_NONE, 2), 32); /* one leaf, two workers */
	assert_int_equal(fill_parts(&l50, SYNC_NONE, 2), 1); /* 25 leaves a worker */
	assert_int_equal(fill_parts(&l50, SYNC_NONE, 64), fill_split(&l50));
}

static void a_resume_keeps_the_split_of_its_snapshot(void **state)
{
	struct layout l200 = lay_of(200000, 1000, 0), l1000 = lay_of(1000000, 1000, 0);
	assert_int_equal(fill_resumed_parts(&l200, 200, 0, 1), 1);
	assert_int_equal(fill_resumed_parts(&l200, 600, 0, 1), 3);
	assert_int_equal(fill_resumed_parts(&l200, 400, 0, 1), 0); /* neither: the pool refuses it */
	assert_int_equal(fill_resumed_parts(&l1000, 1000, 0, 1), 1);
	/* A rank's share (units r, r + ranks, ...): 200 leaves over 3 ranks give rank 2 66 of them. */
	assert_int_equal(fill_resumed_parts(&l200, 66, 2, 3), 1);
	assert_int_equal(fill_resumed_parts(&l200, 200, 2, 3), 3);
	assert_int_equal(fill_resumed_parts(&l200, 67, 0, 3), 1);  /* rank 0 of 3: 67 leaves, or 200 parts */
	assert_int_equal(fill_resumed_parts(&l200, 100, 0, 3), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(empty_files_are_never_split_without_sync_file),
	    cmocka_unit_test(sync_file_splits_small_fills),
	    cmocka_unit_test(files_with_data_split_only_for_idle_workers),
	    cmocka_unit_test(a_resume_keeps_the_split_of_its_snapshot),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
