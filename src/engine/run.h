/*
 * run: the main thread's loop, shared by every command. While workers do the work, the main
 * thread sleeps until a tick, a signal or the end; it draws the progress line, takes a snapshot
 * every few seconds (consistent, via the command's hook, then saved atomically by ckpt), and on
 * SIGINT/SIGTERM takes a final snapshot that also freezes the workers, so the run can stop at
 * once — even with a worker stuck in the kernel. A failed output stops the run the same way (even
 * one that failed as the work ended), and no snapshot taken after it is saved (report/outfile.h).
 */
#ifndef MYRIAD_RUN_H
#define MYRIAD_RUN_H

#include <stdbool.h>

#include "state/ckpt.h"
#include "util/sbuf.h"

struct run_hooks {
	void *ctx;
	/* Has all the work finished? */
	bool (*done)(void *ctx);
	/* Serialize a consistent snapshot into out. With stop, workers must commit nothing after it. */
	void (*snapshot)(void *ctx, struct sbuf *out, bool stop);
	/* The command's own part, called with user (the engine's visitor context): make committed
	 * output durable before a snapshot that counts it is saved (may be NULL), and format the
	 * progress text (no newline). */
	void *user;
	void (*sync)(void *user);
	void (*progress)(void *user, struct sbuf *line);
	/* Called every few ms while it asks to be: returns ms until the next call, or -1 for no more
	 * (may be NULL). The engine adjusts itself here, e.g. its number of workers. */
	int (*tick)(void *ctx);
	/* Start the workers / wait for them once the work is done (the engine's). */
	void (*start)(void *ctx);
	void (*join)(void *ctx);
};

struct run_opts {
	struct ckpt *ckpt;       /* NULL with --no-state */
	double progress_s;       /* <0 default, 0 never */
	double checkpoint_s;     /* seconds between snapshots */
};

enum run_result { RUN_DONE, RUN_STOPPED };

enum run_result run_loop(const struct run_hooks *h, const struct run_opts *o);

/* Take and save one snapshot now (used at the start of a run). 0 or -1. */
int run_checkpoint(const struct run_hooks *h, struct ckpt *ckpt, bool stop);

#endif
