/* ser: checksummed binary blobs for state files (see ser.h). */
#include "state/ser.h"

#include <string.h>
#include <xxhash.h>

static void put_le64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

void ser_begin(struct sbuf *b, const char magic[8]) { sbuf_add(b, magic, 8); }

void ser_u64(struct sbuf *b, uint64_t v)
{
	unsigned char tmp[8];
	put_le64(tmp, v);
	sbuf_add(b, tmp, 8);
}

void ser_bytes(struct sbuf *b, const void *p, size_t len)
{
	ser_u64(b, len);
	sbuf_add(b, p, len);
}

void ser_end(struct sbuf *b) { ser_u64(b, XXH64(b->data, b->len, 0)); }

bool ser_check(const void *data, size_t len, const char **why)
{
	if (len < 16) {
		*why = "file is truncated";
		return false;
	}
	if (XXH64(data, len - 8, 0) != get_le64((const unsigned char *)data + len - 8)) {
		*why = "checksum mismatch (file is corrupt or truncated)";
		return false;
	}
	return true;
}

bool deser_begin(struct deser *d, const void *data, size_t len, const char magic[8], const char **why)
{
	memset(d, 0, sizeof(*d));
	d->p = data;
	if (len < 16) {
		*why = "file is truncated";
		d->bad = true;
		return false;
	}
	if (memcmp(data, magic, 8) != 0) {
		*why = "not a file of this kind (wrong magic)";
		d->bad = true;
		return false;
	}
	if (!ser_check(data, len, why)) {
		d->bad = true;
		return false;
	}
	d->len = len - 8;
	d->pos = 8;
	return true;
}

uint64_t deser_u64(struct deser *d)
{
	if (d->bad || d->len - d->pos < 8) {
		d->bad = true;
		return 0;
	}
	uint64_t v = get_le64(d->p + d->pos);
	d->pos += 8;
	return v;
}

const void *deser_bytes(struct deser *d, size_t *len)
{
	uint64_t n = deser_u64(d);
	if (d->bad || n > d->len - d->pos) {
		d->bad = true;
		*len = 0;
		return NULL;
	}
	const void *p = d->p + d->pos;
	d->pos += n;
	*len = n;
	return p;
}

bool deser_done(struct deser *d) { return !d->bad && d->pos == d->len; }
