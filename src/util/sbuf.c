/* sbuf: growable byte buffer (see sbuf.h). */
#include "util/sbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

void sbuf_reserve(struct sbuf *b, size_t n)
{
	if (b->len + n <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + n)
		cap *= 2;
	b->data = xrealloc(b->data, cap);
	b->cap = cap;
}

void sbuf_add(struct sbuf *b, const void *p, size_t n)
{
	if (!n)
		return; /* data may still be NULL: no pointer arithmetic on it (UB) */
	sbuf_reserve(b, n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void sbuf_adds(struct sbuf *b, const char *s) { sbuf_add(b, s, strlen(s)); }

void sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	sbuf_reserve(b, n + 1);
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, n + 1, fmt, ap);
	va_end(ap);
	b->len += n;
}

void sbuf_free(struct sbuf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}
