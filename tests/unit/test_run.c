/* Unit tests for engine/run: run_loop with fake hooks. It returns RUN_DONE once done() says so,
 * taking no snapshot without state; with state it snapshots every checkpoint interval (sync before
 * each save, the last one on disk); it calls tick as often as tick asks, and no more after -1; a
 * stop request ends it with RUN_STOPPED after one final snapshot taken with stop set, also when
 * asked for as the work ended. (Stop requests cannot be withdrawn: those tests come last.) */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "scratch.h"

#include "engine/run.h"
#include "state/ser.h"
#include "util/signals.h"
#include "util/util.h"

struct fake {
	int done_calls, done_after; /* done() true from call done_after on (0: never by count) */
	uint64_t done_at_ns;        /* or once this time has come (0: never by time) */
	int snapshots, stop_snapshots, syncs, syncs_before_save, progress_calls, ticks;
	int tick_ms;                /* what tick returns */
	char last[32];              /* the last snapshot's payload */
};

static bool f_done(void *ctx)
{
	struct fake *f = ctx;
	f->done_calls++;
	return (f->done_after && f->done_calls >= f->done_after) || (f->done_at_ns && now_ns() >= f->done_at_ns);
}

static void f_snapshot(void *ctx, struct sbuf *out, bool stop)
{
	struct fake *f = ctx;
	f->snapshots++;
	f->stop_snapshots += stop;
	snprintf(f->last, sizeof(f->last), "snapshot %d", f->snapshots);
	ser_begin(out, "MYRTEST1");
	ser_str(out, f->last);
	ser_end(out);
}

static void f_sync(void *ctx)
{
	struct fake *f = ctx;
	f->syncs++;
	f->syncs_before_save += f->syncs == f->snapshots; /* called after this snapshot was taken */
}

static void f_progress(void *ctx, struct sbuf *line)
{
	struct fake *f = ctx;
	f->progress_calls++;
	sbuf_adds(line, "progress");
}

static int f_tick(void *ctx)
{
	struct fake *f = ctx;
	f->ticks++;
	return f->tick_ms;
}

static struct run_hooks hooks(struct fake *f)
{
	struct run_hooks h = {.ctx = f, .user = f, .done = f_done, .snapshot = f_snapshot, .sync = f_sync, .progress = f_progress};
	return h;
}

static void done_ends_the_loop(void **state)
{
	struct fake f = {.done_after = 3};
	struct run_hooks h = hooks(&f);
	struct run_opts o = {.ckpt = NULL, .progress_s = 0, .checkpoint_s = 0.01};
	assert_int_equal(run_loop(&h, &o), RUN_DONE);
	assert_int_equal(f.done_calls, 3); /* asked before and after each wait, not after done */
	assert_int_equal(f.snapshots, 0);  /* no state: nothing to snapshot */
	assert_int_equal(f.progress_calls, 0);
}

static char statedir[96];

static struct ckpt *open_state(void)
{
	char base[64];
	assert_non_null(scratch_dir(base, sizeof(base), "run"));
	snprintf(statedir, sizeof(statedir), "%s/state", base);
	struct sbuf id = {0};
	sbuf_adds(&id, "unit test of run_loop");
	struct ckpt *c = ckpt_open("test", statedir, &id, "test_run");
	sbuf_free(&id);
	assert_non_null(c);
	return c;
}

static void remove_state(struct ckpt *c)
{
	ckpt_close(c);
	*strrchr(statedir, '/') = 0; /* the scratch directory above it */
	assert_int_equal(scratch_remove(statedir), 0);
}

/* The snapshot file holds the payload of the last snapshot. */
static void expect_saved(struct ckpt *c, const char *want)
{
	struct sbuf b = {0};
	assert_int_equal(ckpt_load(c, &b), 1);
	struct deser d;
	const char *why;
	assert_true(deser_begin(&d, b.data, b.len, "MYRTEST1", &why));
	size_t n;
	const char *p = deser_bytes(&d, &n);
	assert_false(d.bad);
	assert_int_equal(n, strlen(want));
	assert_memory_equal(p, want, n);
	sbuf_free(&b);
}

/* A 0.5 s run with a snapshot every 0.1 s: about 5 of them, none with stop. */
static void checkpoint_interval(void **state)
{
	struct ckpt *c = open_state();
	struct fake f = {.done_at_ns = now_ns() + 500000000ull};
	struct run_hooks h = hooks(&f);
	struct run_opts o = {.ckpt = c, .progress_s = 0, .checkpoint_s = 0.1};
	assert_int_equal(run_loop(&h, &o), RUN_DONE);
	assert_true(f.snapshots >= 2 && f.snapshots <= 6);
	assert_int_equal(f.stop_snapshots, 0);
	assert_int_equal(f.syncs, f.snapshots);
	assert_int_equal(f.syncs_before_save, f.snapshots);
	assert_int_equal(f.progress_calls, f.snapshots); /* the line kept beside each snapshot */
	expect_saved(c, f.last);
	remove_state(c);
}

static void tick_as_asked(void **state)
{
	struct fake f = {.done_at_ns = now_ns() + 300000000ull, .tick_ms = 20};
	struct run_hooks h = hooks(&f);
	h.tick = f_tick;
	struct run_opts o = {.ckpt = NULL, .progress_s = 0, .checkpoint_s = 10};
	assert_int_equal(run_loop(&h, &o), RUN_DONE);
	assert_true(f.ticks >= 5 && f.ticks <= 16); /* every 20 ms for 0.3 s */
	struct fake g = {.done_at_ns = now_ns() + 200000000ull, .tick_ms = -1};
	h = hooks(&g);
	h.tick = f_tick;
	assert_int_equal(run_loop(&h, &o), RUN_DONE);
	assert_int_equal(g.ticks, 1);
}

static void stop_takes_a_final_snapshot(void **state)
{
	struct ckpt *c = open_state();
	struct fake f = {0}; /* never done */
	struct run_hooks h = hooks(&f);
	struct run_opts o = {.ckpt = c, .progress_s = 0, .checkpoint_s = 100};
	sig_request_stop();
	uint64_t t0 = now_ns();
	assert_int_equal(run_loop(&h, &o), RUN_STOPPED);
	assert_true(now_ns() - t0 < 500000000ull); /* at once, not at the next checkpoint */
	assert_int_equal(f.snapshots, 1);
	assert_int_equal(f.stop_snapshots, 1);
	expect_saved(c, f.last);
	remove_state(c);
}

static void stop_as_the_work_ends_still_stops(void **state)
{
	struct fake f = {.done_after = 1};
	struct run_hooks h = hooks(&f);
	struct run_opts o = {.ckpt = NULL, .progress_s = 0, .checkpoint_s = 100};
	assert_true(sig_stop_requested()); /* from the test before */
	assert_int_equal(run_loop(&h, &o), RUN_STOPPED);
	assert_int_equal(f.stop_snapshots, 1);
}

int main(void)
{
	sig_install();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(done_ends_the_loop),
	    cmocka_unit_test(checkpoint_interval),
	    cmocka_unit_test(tick_as_asked),
	    cmocka_unit_test(stop_takes_a_final_snapshot),
	    cmocka_unit_test(stop_as_the_work_ends_still_stops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
