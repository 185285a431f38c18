/* Unit tests for linkmap: pending hard links in bounded memory, spilling to disk. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state/linkmap.h"

static void path_of(char *b, size_t n, uint64_t i)
{
	snprintf(b, n, "dir%llu/name-%llu", (unsigned long long)(i % 97), (unsigned long long)i);
}

/* Add n inodes with links links each, then see every other link of each in a scrambled order,
 * interleaved with the adds; check every path and that the map ends empty. */
static void run(uint64_t budget, uint64_t n, uint32_t links, uint64_t *spilled)
{
	struct linkmap *m = linkmap_new(budget, NULL);
	struct sbuf got = {0};
	char want[64];
	uint64_t taken = 0, total = n * (links - 1);
	for (uint64_t i = 0; i < n; i++) {
		path_of(want, sizeof(want), i);
		assert_int_equal(linkmap_take(m, 7, 1000 + i, &got), 0);
		assert_int_equal(linkmap_add(m, 7, 1000 + i, links - 1, want, strlen(want)), 0);
		assert_true(linkmap_memory(m) <= budget || budget < 4096);
		/* Every third step, see one link of an earlier inode (leaves tombstones behind). */
		if (i % 3 == 2 && taken < total) {
			uint64_t j = (taken * 7919) % (i + 1);
			int r = linkmap_take(m, 7, 1000 + j, &got);
			if (r == 1) {
				path_of(want, sizeof(want), j);
				assert_string_equal(got.data, want);
				taken++;
			}
		}
	}
	for (uint64_t i = 0; i < n; i++) {
		path_of(want, sizeof(want), i);
		int r;
		while ((r = linkmap_take(m, 7, 1000 + i, &got)) == 1) {
			assert_string_equal(got.data, want);
			taken++;
		}
		assert_int_equal(r, 0);
		assert_int_equal(linkmap_take(m, 8, 1000 + i, &got), 0); /* same inode, other device */
	}
	assert_int_equal(taken, total);
	assert_int_equal(linkmap_count(m), 0);
	*spilled = linkmap_spilled(m);
	sbuf_free(&got);
	linkmap_free(m);
}

static void memory_only_when_it_fits(void **state)
{
	uint64_t spilled;
	run(64 << 20, 5000, 3, &spilled);
	assert_int_equal(spilled, 0);
}

static void everything_on_disk_with_no_budget(void **state)
{
	uint64_t spilled;
	run(0, 30000, 3, &spilled); /* several rebuilds of the disk table */
	assert_int_equal(spilled, 30000);
}

static void spills_beyond_a_small_budget(void **state)
{
	uint64_t spilled;
	run(16 << 10, 20000, 2, &spilled);
	assert_true(spilled > 0 && spilled < 20000);
}

/* The memory a map holds follows its entries: a new map with a large budget holds a small table
 * (it held a table of an eighth of the budget, 8 MiB for du's and copy's default 64 MiB, whose
 * pages linkmap_free then read one by one), which grows as entries come and keeps finding them. */
static void memory_follows_the_entries(void **state)
{
	struct linkmap *m = linkmap_new(64 << 20, NULL);
	assert_true(linkmap_memory(m) <= 4096);
	struct sbuf got = {0};
	char want[64];
	for (uint64_t i = 0; i < 100000; i++) {
		path_of(want, sizeof(want), i);
		assert_int_equal(linkmap_add(m, 7, i, 1, want, strlen(want)), 0);
	}
	uint64_t full = linkmap_memory(m);
	assert_true(full > 100000 * 32 && full <= 64 << 20);
	assert_int_equal(linkmap_spilled(m), 0);
	for (uint64_t i = 0; i < 100000; i++) {
		path_of(want, sizeof(want), i);
		assert_int_equal(linkmap_take(m, 7, i, &got), 1);
		assert_string_equal(got.data, want);
	}
	assert_int_equal(linkmap_count(m), 0);
	/* The entries are gone; the table they grew stays: 2^17 buckets for 10^5 entries (a table
	 * that never grew would pass every lookup above through long chains). */
	assert_true(linkmap_memory(m) < full / 4);
	assert_true(linkmap_memory(m) >= 131072 * sizeof(void *));
	sbuf_free(&got);
	linkmap_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(memory_only_when_it_fits),
	    cmocka_unit_test(everything_on_disk_with_no_budget),
	    cmocka_unit_test(spills_beyond_a_small_budget),
	    cmocka_unit_test(memory_follows_the_entries),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
