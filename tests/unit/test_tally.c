/* Unit tests for tally: per-worker counts kept in the state directory across runs, an announced
 * action settled on resume, a lost or damaged file said so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "scratch.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "state/tally.h"

static char dir[] = "/tmp/myriad-tally-XXXXXX";
static int settled; /* how many announced actions the last resume asked about */

/* Settle: the record "done..." was done, anything else was not. */
static void settle(void *ctx, unsigned counter, const char *rec, size_t len, uint64_t since, uint64_t *totals)
{
	settled++;
	assert_true(since > 0);
	if (len >= 4 && !memcmp(rec, "done", 4))
		totals[counter]++;
}

static void counts_survive_a_run_and_fold_on_resume(void **state)
{
	bool exact;
	struct tally *t = tally_open(dir, 0, 3, false, settle, NULL, &exact);
	assert_true(exact);
	struct tally_slot *a = tally_claim(t), *b = tally_claim(t), *c = tally_claim(t);
	assert_non_null(a);
	assert_non_null(c);
	assert_null(tally_claim(t)); /* three workers, three slots */
	tally_add(a, 0, 5);
	tally_add(b, 0, 7);
	tally_add(b, 3, 100);
	tally_begin(a, 0, "x", 1, NULL, 0);
	tally_end(a, 0, true); /* counted: 6 in a */
	tally_begin(b, 1, "done", 4, "f1", 2); /* a kill here: the action was done, not counted */
	tally_begin(c, 1, "gone", 4, NULL, 0); /* ... and one that was not done */
	assert_int_equal(tally_total(t, 0), 13);
	tally_close(t); /* as a killed process leaves it */

	settled = 0;
	t = tally_open(dir, 0, 1, true, settle, NULL, &exact);
	assert_true(exact);
	assert_int_equal(settled, 2);
	assert_int_equal(tally_total(t, 0), 13);
	assert_int_equal(tally_total(t, 1), 1);
	assert_int_equal(tally_total(t, 3), 100);
	struct tally_slot *d = tally_claim(t);
	tally_add(d, 0, 1);
	assert_int_equal(tally_total(t, 0), 14);
	/* Killed after the count, before the announcement was closed: not counted twice. */
	tally_begin(d, 2, "done", 4, NULL, 0);
	tally_add(d, 2, 1);
	tally_close(t);
	settled = 0;
	t = tally_open(dir, 0, 2, true, settle, NULL, &exact);
	assert_int_equal(tally_total(t, 2), 1);
	assert_int_equal(tally_total(t, 0), 14);
	tally_close(t);
}

static void a_lost_or_damaged_file_is_not_exact(void **state)
{
	bool exact;
	char path[64];
	snprintf(path, sizeof(path), "%s/tally", dir);
	FILE *f = fopen(path, "w");
	fputs("not a tally", f);
	fclose(f);
	struct tally *t = tally_open(dir, 0, 2, true, settle, NULL, &exact);
	assert_false(exact);
	assert_int_equal(tally_total(t, 0), 0);
	tally_close(t);
	unlink(path);
	t = tally_open(dir, 0, 2, true, settle, NULL, &exact);
	assert_false(exact);
	tally_close(t);
	/* In memory only (--no-state): counts, nothing to resume. */
	t = tally_open(NULL, 0, 2, false, NULL, NULL, &exact);
	assert_true(exact);
	tally_add(tally_claim(t), 4, 9);
	assert_int_equal(tally_total(t, 4), 9);
	tally_close(t);
}

/* A rank's tally (part > 0) is a file of its own: parts neither share nor fold each other's counts. */
static void parts_count_apart(void **state)
{
	bool exact;
	struct tally *a = tally_open(dir, 0, 1, false, settle, NULL, &exact);
	struct tally *b = tally_open(dir, 3, 1, false, settle, NULL, &exact);
	tally_add(tally_claim(a), 0, 5);
	tally_add(tally_claim(b), 0, 7);
	tally_close(a);
	tally_close(b);
	char path[64];
	snprintf(path, sizeof(path), "%s/tally-3", dir);
	assert_int_equal(access(path, F_OK), 0);
	b = tally_open(dir, 3, 1, true, settle, NULL, &exact);
	assert_true(exact);
	assert_int_equal(tally_total(b, 0), 7);
	tally_close(b);
	a = tally_open(dir, 0, 1, true, settle, NULL, &exact);
	assert_true(exact);
	assert_int_equal(tally_total(a, 0), 5);
	tally_close(a);
	unlink(path);
	snprintf(path, sizeof(path), "%s/tally", dir);
	unlink(path);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(counts_survive_a_run_and_fold_on_resume),
	    cmocka_unit_test(a_lost_or_damaged_file_is_not_exact),
	    cmocka_unit_test(parts_count_apart),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	if (scratch_remove(dir) != 0)
		r = 1;
	return r;
}
