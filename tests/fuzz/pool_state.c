/*
 * Fuzz target "pool_state": a checkpoint of the numbered-units engine ("MYRPOOL1": counters,
 * --errors position, the command's own blob, the watermark and the window of finished units) as
 * a resumed fill or verify reads it, with each command's real decoder for its part
 * (src/job/cmdstate.h).
 *
 * Input: byte 0 picks the command (bit 0: fill, verify) and whether the checksum is made right
 * (bit 7 clear); bytes 1-2 the job's number of units (1 + a big-endian u16: the layout's
 * directories); the rest is the snapshot. A snapshot that loads must save again into one that
 * loads, with the same progress.
 */
#include <stddef.h>
#include <stdint.h>

#include "job/cmdstate.h"
#include "engine/pool.h"
#include "fuzz.h"
#include "util/util.h"

struct ctx {
	int verify;
	struct fill_state f;
	struct verify_state v;
};

static int on_run(void *ctx, void *local, uint64_t unit, struct errbatch *errs) { return 0; }

static void on_commit(void *ctx, void *local) {}

static void on_save(void *ctx, struct sbuf *b)
{
	struct ctx *c = ctx;
	if (c->verify)
		verify_state_save(b, &c->v);
	else
		fill_state_save(b, &c->f);
}

static bool on_load(void *ctx, struct deser *d)
{
	struct ctx *c = ctx;
	return c->verify ? verify_state_load(&c->v, d) : fill_state_load(&c->f, d);
}

static struct pool *load(struct ctx *c, uint64_t units, struct errlog *el, const struct sbuf *snap)
{
	struct pool_config cfg = {
	    .units = units,
	    .threads = 1,
	    .visitor = {.ctx = c, .local_size = 64, .run = on_run, .commit = on_commit, .save = on_save, .load = on_load},
	    .errlog = el,
	};
	memset(el, 0, sizeof(*el));
	el->file.fd = -1;
	return pool_new(&cfg, snap);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ctx c; /* 40 KiB of histograms and timeline */
	if (size < 3 || size > (1u << 20))
		return 0;
	memset(&c, 0, sizeof(c));
	c.verify = data[0] & 1;
	uint64_t units = 1 + ((uint64_t)data[1] << 8 | data[2]);
	struct sbuf snap = {0};
	fuzz_blob(&snap, data + 3, size - 3, data[0] & 0x80);
	struct errlog el;
	prog_name = "fuzz pool_state";
	struct pool *p = load(&c, units, &el, &snap);
	if (p) {
		uint64_t done = pool_units_done(p), next = pool_next_unit(p);
		fuzz_check(done <= units && next <= units);
		struct run_hooks h = pool_run_hooks(p, NULL, NULL);
		struct sbuf again = {0};
		h.snapshot(h.ctx, &again, false);
		pool_free(p);
		struct errlog el2;
		p = load(&c, units, &el2, &again);
		fuzz_check(p != NULL);
		fuzz_check(pool_units_done(p) == done && pool_next_unit(p) == next);
		pool_free(p);
		sbuf_free(&again);
	}
	sbuf_free(&snap);
	return 0;
}
