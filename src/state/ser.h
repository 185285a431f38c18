/*
 * ser: the binary format of every file myriad writes to read back later (checkpoint snapshots,
 * manifests). A blob is a magic word, a sequence of little-endian u64s and length-prefixed byte
 * strings, and a trailing xxh64 checksum of everything before it. The reader checks the magic and the
 * checksum up front and every length as it goes, so a truncated or corrupt file is reported,
 * never half-read.
 */
#ifndef MYRIAD_SER_H
#define MYRIAD_SER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/sbuf.h"

/* Start a blob with an 8-byte magic (e.g. "MYRWALK1"). */
void ser_begin(struct sbuf *b, const char magic[8]);
void ser_u64(struct sbuf *b, uint64_t v);
void ser_bytes(struct sbuf *b, const void *p, size_t len);
static inline void ser_str(struct sbuf *b, const char *s);
/* Append the checksum; the blob is then complete. */
void ser_end(struct sbuf *b);

struct deser {
	const unsigned char *p;
	size_t len;
	size_t pos;
	bool bad; /* set by any read past the end or bad length; reads then return zeros */
};

/* Is this a whole blob (of any kind): long enough, its checksum right? false with a reason in *why. */
bool ser_check(const void *data, size_t len, const char **why);
/* Check magic and checksum. false (with a reason in *why) if the blob is not intact. */
bool deser_begin(struct deser *d, const void *data, size_t len, const char magic[8], const char **why);
uint64_t deser_u64(struct deser *d);
/* Returns a pointer into the blob and its length; NULL (and d->bad) on error. */
const void *deser_bytes(struct deser *d, size_t *len);
/* True when every byte before the checksum was consumed and nothing went wrong. */
bool deser_done(struct deser *d);

#include <string.h>
static inline void ser_str(struct sbuf *b, const char *s) { ser_bytes(b, s, strlen(s)); }

#endif
