/*
 * progress: the live status line. On a terminal it is redrawn in place on stderr every second;
 * otherwise (nohup, CI, a log file) one line is printed every --progress SECONDS (default 60),
 * because multi-day runs live under nohup. 0 turns it off. Commands format the text; this module
 * decides when and how it appears, and formats the parts every command shares.
 */
#ifndef MYRIAD_PROGRESS_H
#define MYRIAD_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "util/sbuf.h"

struct progress {
	bool tty;
	bool shown;          /* a live line is on screen and must be cleared */
	uint64_t interval_ns; /* 0: never */
	uint64_t next_ns;
};

/* interval_s < 0 means the default (1 s on a terminal, 60 s otherwise). */
void progress_init(struct progress *p, double interval_s);
/* Is a line due now? */
bool progress_due(struct progress *p, uint64_t now);
/* Show a line (text without newline). */
void progress_show(struct progress *p, const char *text, size_t len);
/* Remove a live line before other output. */
void progress_clear(struct progress *p);
/* Milliseconds until the next line is due (a large number if never). */
int progress_wait_ms(const struct progress *p, uint64_t now);

/*
 * Append the common part: "N done [of TOTAL (P%)], R/s[, ETA], E errors, elapsed" where unit
 * names what is counted ("entries", "files").
 */
void progress_format(struct sbuf *b, const char *unit, uint64_t done, uint64_t total, double elapsed_s,
		     double rate, uint64_t errors);

/* Append ", ETA D" for work a fraction (0..1) done in elapsed_s seconds, when 0 < fraction < 1. For
 * commands whose total is an estimate in other units than what they count. */
void progress_eta(struct sbuf *b, double fraction, double elapsed_s);

#endif
