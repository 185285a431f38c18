/* Unit tests for throttle (util/throttle.h): the long-run rate holds within a
 * tolerance, for one caller and for several threads sharing it; at most a 0.1 s burst passes after
 * an idle spell; and an unlimited throttle never sleeps. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/throttle.h"
#include "util/util.h"

static double seconds_since(uint64_t t0) { return (double)(now_ns() - t0) / 1e9; }

/* 5000 units at 10000/s: 0.5 s, less the 0.1 s burst allowed at the start. */
static void one_caller_holds_the_rate(void **state)
{
	struct throttle t;
	throttle_init(&t, 10000);
	uint64_t t0 = now_ns();
	for (int i = 0; i < 5000; i++)
		throttle_take(&t, 1);
	double s = seconds_since(t0);
	assert_true(s >= 0.37);
	assert_true(s <= 0.9);
	assert_true(t.waited_ns > 0);
}

static void *taker(void *arg)
{
	for (int i = 0; i < 250; i++)
		throttle_take(arg, 5);
	return NULL;
}

/* Four threads, 1250 units each, share 10000/s: the same 0.5 s as one caller. */
static void threads_share_the_rate(void **state)
{
	struct throttle t;
	throttle_init(&t, 10000);
	pthread_t tid[4];
	uint64_t t0 = now_ns();
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&tid[i], NULL, taker, &t), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(tid[i], NULL);
	double s = seconds_since(t0);
	assert_true(s >= 0.37);
	assert_true(s <= 0.9);
}

/* After an idle second, no more than 0.1 s of credit is left, and a caller may run 0.1 s ahead:
 * 3000 units (0.3 s) then take 0.1 s, not nothing (which an unbounded credit would give). */
static void burst_after_idle_is_bounded(void **state)
{
	struct throttle t;
	throttle_init(&t, 10000);
	usleep(1000000);
	uint64_t t0 = now_ns();
	throttle_take(&t, 3000);
	double s = seconds_since(t0);
	assert_true(s >= 0.08);
	assert_true(s <= 0.5);
}

static void unlimited_never_sleeps(void **state)
{
	struct throttle t;
	throttle_init(&t, 0);
	uint64_t t0 = now_ns();
	for (int i = 0; i < 1000000; i++)
		throttle_take(&t, 1000);
	assert_true(seconds_since(t0) < 0.5);
	assert_int_equal(t.waited_ns, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(one_caller_holds_the_rate),
	    cmocka_unit_test(threads_share_the_rate),
	    cmocka_unit_test(burst_after_idle_is_bounded),
	    cmocka_unit_test(unlimited_never_sleeps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
