/* run: progress, periodic checkpoints and stop handling for every command (see run.h). */
#include "engine/run.h"

#include <stdint.h>

#include "report/outfile.h"
#include "report/progress.h"
#include "util/signals.h"
#include "util/util.h"

int run_checkpoint(const struct run_hooks *h, struct ckpt *ckpt, bool stop)
{
	struct sbuf snap = {0}, line = {0};
	/* Taken just before the snapshot (the workers still run): how far the job got, for whoever
	 * finds the state later. */
	if (ckpt)
		h->progress(h->user, &line);
	h->snapshot(h->ctx, &snap, stop);
	int r = 0;
	if (ckpt) {
		if (h->sync)
			h->sync(h->user);
		/* After an output failed, a snapshot would count output that was lost: keep the last one. */
		r = output_has_failed() ? -1 : ckpt_save(ckpt, snap.data, snap.len);
		if (r == 0)
			ckpt_save_progress(ckpt, line.data, line.len);
	}
	sbuf_free(&snap);
	sbuf_free(&line);
	return r;
}

enum run_result run_loop(const struct run_hooks *h, const struct run_opts *o)
{
	struct progress p;
	progress_init(&p, o->progress_s);
	uint64_t interval = (uint64_t)(o->checkpoint_s * 1e9);
	uint64_t next_ckpt = now_ns() + interval;
	struct sbuf line = {0};
	enum run_result result = RUN_DONE;
	uint64_t next_tick = h->tick ? now_ns() + 10000000 : UINT64_MAX;
	for (;;) {
		/* A stop asked for as the work ended still stops the run: a command that raised SIGTERM
		 * (out of space) or an output that failed would otherwise exit as if all went well. */
		if (h->done(h->ctx) && !sig_stop_requested())
			break;
		uint64_t now = now_ns();
		int wait = progress_wait_ms(&p, now);
		if (o->ckpt) {
			int w = next_ckpt > now ? (int)((next_ckpt - now) / 1000000) + 1 : 0;
			if (w < wait)
				wait = w;
		}
		if (next_tick != UINT64_MAX) {
			/* Rounded up: rounded down, the last part of a millisecond would be spun through. */
			int w = next_tick > now ? (int)((next_tick - now + 999999) / 1000000) : 0;
			if (w < wait)
				wait = w;
		}
		if (wait > 1000)
			wait = 1000;
		if (sig_wait(wait)) {
			run_checkpoint(h, o->ckpt, true);
			result = RUN_STOPPED;
			break;
		}
		if (h->done(h->ctx) && !sig_stop_requested())
			break;
		now = now_ns();
		if (now >= next_tick) {
			int ms = h->tick(h->ctx);
			next_tick = ms < 0 ? UINT64_MAX : now + (uint64_t)ms * 1000000;
		}
		if (progress_due(&p, now)) {
			sbuf_clear(&line);
			h->progress(h->user, &line);
			progress_show(&p, line.data, line.len);
		}
		if (o->ckpt && now >= next_ckpt) {
			run_checkpoint(h, o->ckpt, false);
			next_ckpt = now_ns() + interval;
		}
	}
	progress_clear(&p);
	sbuf_free(&line);
	return result;
}
