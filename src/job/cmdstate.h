/*
 * cmdstate: each long command's own part of a checkpoint — its counters, latency histograms and
 * rate timeline — and how it is written into a snapshot and read back on resume. The engines
 * (walk, pool) carry it as one blob inside their own snapshot. A reader checks every field it
 * reads and has no effect beyond filling its struct: it returns false for a blob that is not
 * exactly what the writer makes, and the resume is refused.
 */
#ifndef MYRIAD_CMDSTATE_H
#define MYRIAD_CMDSTATE_H

#include <stdbool.h>
#include <stdint.h>

#include "report/hist.h"
#include "state/ser.h"

enum { WALK_TYPES = 8 }; /* f d l p s b c, and unknown (its stat failed) */

struct walk_state {
	uint64_t by_type[WALK_TYPES];
	uint64_t apparent, allocated;
	uint64_t output_len; /* bytes of --output written */
};
void walk_state_save(struct sbuf *b, const struct walk_state *s);
bool walk_state_load(struct walk_state *s, struct deser *d);

struct rm_state {
	uint64_t files, dirs;
	struct hist unlink_lat;
	struct timeline tl;
};
void rm_state_save(struct sbuf *b, const struct rm_state *s);
bool rm_state_load(struct rm_state *s, struct deser *d);

enum { COPY_COUNTERS = 7 }; /* files, dirs, symlinks, others, bytes, skipped, deleted */
struct copy_state {
	uint64_t v[COPY_COUNTERS];
};
void copy_state_save(struct sbuf *b, const struct copy_state *s);
bool copy_state_load(struct copy_state *s, struct deser *d);

enum { FILL_OPS = 4 }; /* create, write, fsync, close */
struct fill_state {
	uint64_t created, existing, bytes;
	uint64_t skipped; /* files left out: entries fill did not make in their way */
	struct hist h[FILL_OPS];
	struct timeline tl;
};
void fill_state_save(struct sbuf *b, const struct fill_state *s);
bool fill_state_load(struct fill_state *s, struct deser *d);

enum { VERIFY_PROBLEMS = 5 }; /* missing, wrong type, wrong size, corrupt, extra */
struct verify_state {
	uint64_t checked, bytes;
	uint64_t problems[VERIFY_PROBLEMS];
};
void verify_state_save(struct sbuf *b, const struct verify_state *s);
bool verify_state_load(struct verify_state *s, struct deser *d);

#endif
