/*
 * sbuf: a growable byte buffer. Workers build output, error lines and snapshots in one, then
 * hand the bytes over in a single write.
 */
#ifndef MYRIAD_SBUF_H
#define MYRIAD_SBUF_H

#include <stddef.h>
#include <stdint.h>

struct sbuf {
	char *data;
	size_t len;
	size_t cap;
};

/* Make room for n more bytes. */
void sbuf_reserve(struct sbuf *b, size_t n);
/* Append n bytes. */
void sbuf_add(struct sbuf *b, const void *p, size_t n);
/* Append one byte. */
static inline void sbuf_addc(struct sbuf *b, char c)
{
	if (b->len == b->cap)
		sbuf_reserve(b, 1);
	b->data[b->len++] = c;
}
/* Append a NUL-terminated string (without the NUL). */
void sbuf_adds(struct sbuf *b, const char *s);
/* Append printf-formatted text. */
void sbuf_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Forget the contents, keep the memory. */
static inline void sbuf_clear(struct sbuf *b) { b->len = 0; }
/* Free the memory. */
void sbuf_free(struct sbuf *b);

#endif
