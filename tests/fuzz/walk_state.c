/*
 * Fuzz target "walk_state": a checkpoint of the traversal engine ("MYRWALK1": counters, --errors
 * position, the command's own blob, the frontier of directories) as a resumed walk, rm or copy
 * reads it, with each command's real decoder for its part (src/job/cmdstate.h).
 *
 * Input: byte 0 picks the command (bits 0-1: walk, rm, copy) and whether the checksum is made
 * right (bit 7 clear) or the input taken as it is; the rest is the snapshot. The walk's operands
 * are "." and "..", so a record must name a directory below one of them. A snapshot that loads
 * must save again into one that loads (what a resumed run writes, a later resume must read).
 */
#include <stddef.h>
#include <stdint.h>

#include "job/cmdstate.h"
#include "engine/walk.h"
#include "fuzz.h"
#include "util/util.h"

enum { CMD_WALK, CMD_RM, CMD_COPY, CMD_N };

struct ctx {
	int cmd;
	struct walk_state w;
	struct rm_state rm;
	struct copy_state cp;
};

static bool on_entry(void *ctx, void *local, const struct walk_dir *d, const struct walk_entry *e,
		     struct errbatch *errs)
{
	return false; /* nothing is visited: the walk never starts */
}

static void on_commit(void *ctx, void *local) {}

static void on_save(void *ctx, struct sbuf *b)
{
	struct ctx *c = ctx;
	switch (c->cmd) {
	case CMD_WALK: walk_state_save(b, &c->w); break;
	case CMD_RM: rm_state_save(b, &c->rm); break;
	default: copy_state_save(b, &c->cp); break;
	}
}

static bool on_load(void *ctx, struct deser *d)
{
	struct ctx *c = ctx;
	switch (c->cmd) {
	case CMD_WALK: return walk_state_load(&c->w, d);
	case CMD_RM: return rm_state_load(&c->rm, d);
	default: return copy_state_load(&c->cp, d);
	}
}

static struct walk *load(struct ctx *c, struct errlog *el, const struct sbuf *snap)
{
	static char *roots[] = {".", ".."};
	struct walk_config cfg = {
	    .roots = roots,
	    .nroots = 2,
	    .threads = 1,
	    .restart_on_resume = c->cmd != CMD_WALK,
	    .visitor = {.ctx = c, .local_size = 64, .entry = on_entry, .commit = on_commit, .save = on_save,
			.load = on_load},
	    .errlog = el,
	};
	memset(el, 0, sizeof(*el));
	el->file.fd = -1;
	return walk_new(&cfg, snap);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ctx c; /* 16 KiB of histogram and timeline */
	if (size < 1 || size > (1u << 20))
		return 0;
	memset(&c, 0, sizeof(c));
	c.cmd = (data[0] & 3) % CMD_N;
	struct sbuf snap = {0};
	fuzz_blob(&snap, data + 1, size - 1, data[0] & 0x80);
	struct errlog el;
	prog_name = "fuzz walk_state";
	struct walk *w = load(&c, &el, &snap);
	if (w) {
		struct run_hooks h = walk_run_hooks(w, NULL, NULL);
		struct sbuf again = {0};
		h.snapshot(h.ctx, &again, false);
		walk_free(w);
		struct errlog el2;
		w = load(&c, &el2, &again);
		fuzz_check(w != NULL);
		walk_free(w);
		sbuf_free(&again);
	}
	sbuf_free(&snap);
	return 0;
}
