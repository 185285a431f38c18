/* layout: the deterministic tree of fill and verify (see layout.h). */
#include "state/layout.h"

#include <stdio.h>
#include <string.h>

static uint64_t mix64(uint64_t x)
{
	/* splitmix64's finalizer: a fast bijective mix, plenty for test data. */
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

bool layout_init(struct layout *l, uint64_t files, uint64_t fanout, uint64_t size_min, uint64_t size_max,
		 uint64_t seed)
{
	memset(l, 0, sizeof(*l));
	if (fanout < 2 || fanout > 10000000 || files > 1000000000000000ull || size_min > size_max)
		return false;
	l->files = files;
	l->fanout = fanout;
	l->size_min = size_min;
	l->size_max = size_max;
	l->seed = seed;
	l->leaves = (files + fanout - 1) / fanout;
	/* Directories per level, from the leaves up, until one directory (DIR) holds them all. */
	uint64_t n = l->leaves;
	uint64_t counts[LAYOUT_DEPTH_MAX];
	unsigned levels = 0;
	while (n > 1) {
		if (levels == LAYOUT_DEPTH_MAX)
			return false; /* deeper than dirs_at holds: found by tests/fuzz (manifest) */
		counts[levels++] = n;
		n = (n + fanout - 1) / fanout;
	}
	l->depth = levels;
	l->dirs_at[0] = 1;
	for (unsigned k = 1; k <= levels; k++)
		l->dirs_at[k] = counts[levels - k];
	return true;
}

uint64_t layout_leaf_files(const struct layout *l, uint64_t leaf)
{
	if (leaf >= l->leaves)
		return 0;
	uint64_t first = leaf * l->fanout;
	return l->files - first < l->fanout ? l->files - first : l->fanout;
}

size_t layout_dir_path(const struct layout *l, unsigned level, uint64_t index, char *buf)
{
	uint64_t digits[24];
	for (unsigned k = level; k > 0; k--) {
		digits[k - 1] = index % l->fanout;
		index /= l->fanout;
	}
	size_t n = 0;
	for (unsigned k = 0; k < level; k++)
		n += sprintf(buf + n, "%sd%llu", k ? "/" : "", (unsigned long long)digits[k]);
	buf[n] = 0;
	return n;
}

size_t layout_file_name(uint64_t i, char *buf) { return sprintf(buf, "f%llu", (unsigned long long)i); }

static bool parse_number(const char *s, uint64_t *v)
{
	if (!*s || (s[0] == '0' && s[1]))
		return false;
	uint64_t n = 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || n > (UINT64_MAX - 9) / 10)
			return false;
		n = n * 10 + (*s - '0');
	}
	*v = n;
	return true;
}

bool layout_parse_file(const char *name, uint64_t *i) { return name[0] == 'f' && parse_number(name + 1, i); }

bool layout_parse_dir(const char *name, uint64_t *digit) { return name[0] == 'd' && parse_number(name + 1, digit); }

uint64_t layout_file_size(const struct layout *l, uint64_t i)
{
	if (l->size_min == l->size_max)
		return l->size_min;
	return l->size_min + mix64(l->seed * 0x2545f4914f6cdd1dull ^ i) % (l->size_max - l->size_min + 1);
}

void layout_file_data(const struct layout *l, uint64_t i, uint64_t off, void *buf, size_t len)
{
	uint64_t base = mix64(l->seed ^ mix64(i));
	unsigned char *p = buf;
	uint64_t word = off / 8;
	while (len >= 8) {
		uint64_t v = mix64(base + word++);
		memcpy(p, &v, 8);
		p += 8;
		len -= 8;
	}
	if (len) {
		uint64_t v = mix64(base + word);
		memcpy(p, &v, len);
	}
}
