/* Unit tests for pool (numbered units, exact checkpoints): a resumed pool runs every unfinished
 * unit exactly once and never one its snapshot records as finished. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <string.h>

#include "engine/pool.h"
#include "state/ser.h"

#define UNITS 40

static pthread_mutex_t runs_lock = PTHREAD_MUTEX_INITIALIZER;
static int runs[UNITS];

static int count_run(void *ctx, void *local, uint64_t unit, struct errbatch *errs)
{
	pthread_mutex_lock(&runs_lock);
	runs[unit]++;
	pthread_mutex_unlock(&runs_lock);
	return 0;
}
static void no_commit(void *ctx, void *local) {}
static void no_save(void *ctx, struct sbuf *b) {}
static bool no_load(void *ctx, struct deser *d) { return true; }

/* A snapshot of a pool whose units below low and those in done[] are finished. */
static void snapshot(struct sbuf *b, uint64_t low, const uint64_t *done, size_t ndone)
{
	uint8_t bits[4096 / 8] = {0};
	for (size_t i = 0; i < ndone; i++)
		bits[(done[i] - low) / 8] |= (uint8_t)(1u << ((done[i] - low) % 8));
	ser_begin(b, "MYRPOOL1");
	ser_u64(b, 0);        /* elapsed ns */
	ser_u64(b, 1);        /* sessions */
	ser_u64(b, 0);        /* errors */
	ser_u64(b, 0);        /* --errors length */
	ser_bytes(b, "", 0);  /* the visitor's blob */
	ser_u64(b, UNITS);
	ser_u64(b, low);
	ser_u64(b, low + ndone);
	ser_bytes(b, bits, sizeof(bits));
	ser_end(b);
}

static void resume_runs(int threads, uint64_t low, const uint64_t *done, size_t ndone)
{
	memset(runs, 0, sizeof(runs));
	struct errlog log;
	memset(&log, 0, sizeof(log));
	log.file.fd = -1;
	struct pool_config cfg = {
	    .units = UNITS,
	    .threads = threads,
	    .visitor = {.run = count_run, .commit = no_commit, .save = no_save, .load = no_load},
	    .errlog = &log,
	};
	struct sbuf snap = {0};
	snapshot(&snap, low, done, ndone);
	struct pool *p = pool_new(&cfg, &snap);
	assert_non_null(p);
	pool_start(p);
	pool_join(p);
	for (uint64_t u = 0; u < UNITS; u++) {
		bool finished = u < low;
		for (size_t i = 0; i < ndone; i++)
			finished |= done[i] == u;
		if (runs[u] != !finished)
			fail_msg("unit %llu ran %d times (finished before the resume: %s)", (unsigned long long)u,
				 runs[u], finished ? "yes" : "no");
	}
	pool_free(p);
	sbuf_free(&snap);
}

/* The watermark jumps over units finished before the resume: the next unit to claim must not
 * fall behind it (that ran unit 2 twice, and verify counted its files twice). */
static void a_resume_skips_finished_units(void **state)
{
	const uint64_t done[] = {2, 5, 6, 9, 30};
	resume_runs(1, 0, done, 5);
	resume_runs(4, 0, done, 5);
	const uint64_t later[] = {11, 12, 13, 39};
	resume_runs(1, 10, later, 4);
	resume_runs(3, 10, later, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_resume_skips_finished_units),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
