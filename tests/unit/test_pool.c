/* Unit tests for the pool engine: a resumed pool runs every unfinished unit exactly once and never
 * a unit its snapshot says is finished; after a halt it reports exactly which units may hold work. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

#include "engine/pool.h"

#define UNITS 64

struct visits {
	unsigned runs[UNITS];
	uint64_t halt_unit; /* UNITS: none */
	unsigned unfinished[UNITS];
};

static int v_run(void *ctx, void *local, uint64_t unit, struct errbatch *errs)
{
	struct visits *v = ctx;
	__atomic_add_fetch(&v->runs[unit], 1, __ATOMIC_SEQ_CST);
	return unit == v->halt_unit ? ENOSPC : 0;
}
static void v_commit(void *ctx, void *local) {}
static void v_save(void *ctx, struct sbuf *b) {}
static bool v_load(void *ctx, struct deser *d) { return true; }

/* A snapshot of a pool over UNITS units: every unit below low finished, and those in `done`. */
static void snapshot(struct sbuf *b, uint64_t low, const uint64_t *done, size_t ndone)
{
	uint8_t bits[4096 / 8] = {0};
	for (size_t i = 0; i < ndone; i++)
		bits[(done[i] - low) / 8] |= (uint8_t)(1u << ((done[i] - low) % 8));
	ser_begin(b, "MYRPOOL1");
	ser_u64(b, 1000); /* elapsed ns */
	ser_u64(b, 1);	  /* sessions */
	ser_u64(b, 0);	  /* errors */
	ser_u64(b, 0);	  /* --errors length */
	ser_bytes(b, "", 0);
	ser_u64(b, UNITS);
	ser_u64(b, low);
	ser_u64(b, low + ndone);
	ser_bytes(b, bits, sizeof(bits));
	ser_end(b);
}

static struct pool *resumed(struct visits *v, struct errlog *el, int threads, uint64_t low, const uint64_t *done,
			    size_t ndone)
{
	struct sbuf snap = {0};
	snapshot(&snap, low, done, ndone);
	struct pool_config cfg = {
	    .units = UNITS,
	    .threads = threads,
	    .visitor = {.ctx = v, .local_size = 8, .run = v_run, .commit = v_commit, .save = v_save, .load = v_load},
	    .errlog = el,
	};
	struct pool *p = pool_new(&cfg, &snap);
	sbuf_free(&snap);
	assert_non_null(p);
	return p;
}

/* Unit 0 unfinished, units 1 and 2 finished before the resume: finishing unit 0 moves the
 * watermark past them, and they must not be claimed again. */
static void resumed_units_run_once(void **state)
{
	for (int threads = 1; threads <= 4; threads *= 2) {
		struct visits v = {.halt_unit = UNITS};
		struct errlog el = {0};
		const uint64_t done[] = {1, 2, 5, 9, 10, 11, 40};
		struct pool *p = resumed(&v, &el, threads, 0, done, sizeof(done) / sizeof(*done));
		pool_start(p);
		pool_join(p);
		for (uint64_t u = 0; u < UNITS; u++) {
			bool was_done = false;
			for (size_t i = 0; i < sizeof(done) / sizeof(*done); i++)
				was_done |= done[i] == u;
			assert_int_equal(v.runs[u], was_done ? 0 : 1);
		}
		assert_int_equal(pool_units_done(p), UNITS);
		pool_free(p);
		errlog_close(&el);
	}
}

static void note_unfinished(void *ctx, uint64_t unit) { ((struct visits *)ctx)->unfinished[unit]++; }

/* A halt in unit 0 of a resumed pool whose unit 3 was finished before: units 0..2 may hold partial
 * work or none, unit 3 is complete, and nothing from 4 on was started. */
static void halt_reports_every_unit_that_may_hold_work(void **state)
{
	struct visits v = {.halt_unit = 0};
	struct errlog el = {0};
	const uint64_t done[] = {3};
	struct pool *p = resumed(&v, &el, 1, 0, done, 1);
	pool_start(p);
	pool_join(p);
	assert_int_equal(pool_halted(p), ENOSPC);
	assert_true(pool_next_unit(p) >= 4);
	pool_unfinished(p, note_unfinished, &v);
	for (uint64_t u = 0; u < UNITS; u++)
		assert_int_equal(v.unfinished[u], u < 3 ? 1 : 0);
	pool_free(p);
	errlog_close(&el);
}

/* The units of the pool that saved a snapshot, read without restoring it: from a pool's own
 * snapshot (a visitor blob before them), as pool_new would find them; a cut one is refused. */
static void snapshot_units_are_read_back(void **state)
{
	struct visits v = {.halt_unit = UNITS};
	struct errlog el = {0};
	struct pool *p = resumed(&v, &el, 1, 3, NULL, 0);
	struct run_hooks h = pool_run_hooks(p, NULL, NULL);
	struct sbuf snap = {0};
	h.snapshot(h.ctx, &snap, false);
	uint64_t units = 0;
	assert_true(pool_snapshot_units(&snap, &units));
	assert_int_equal(units, UNITS);
	snap.len -= 1; /* cut: its checksum no longer matches */
	assert_false(pool_snapshot_units(&snap, &units));
	sbuf_free(&snap);
	pool_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(resumed_units_run_once),
	    cmocka_unit_test(halt_reports_every_unit_that_may_hold_work),
	    cmocka_unit_test(snapshot_units_are_read_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
