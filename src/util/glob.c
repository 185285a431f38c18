/*
 * glob: fnmatch for the patterns of literal bytes and stars, without fnmatch. See glob.h.
 */
#include "util/glob.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

static inline unsigned char lower(unsigned char c) { return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c; }

void glob_init(struct glob *g, const char *pat, bool casefold)
{
	memset(g, 0, sizeof(*g));
	g->pat = pat;
	g->casefold = casefold;
	if (strpbrk(pat, "?[\\"))
		return; /* fnmatch's */
	g->simple = true;
	size_t len = strlen(pat);
	const char *base = pat;
	if (casefold) {
		g->fold = xmalloc(len + 1);
		for (size_t i = 0; i <= len; i++)
			g->fold[i] = (char)lower((unsigned char)pat[i]);
		base = g->fold;
	}
	g->star = memchr(pat, '*', len) != NULL;
	g->lead = len > 0 && pat[0] == '*';
	g->trail = len > 0 && pat[len - 1] == '*';
	g->seg = xcalloc(len / 2 + 1, sizeof(*g->seg)); /* runs are separated by at least one star */
	for (size_t i = 0; i < len;) {
		if (pat[i] == '*') {
			i++;
			continue;
		}
		size_t j = i;
		while (j < len && pat[j] != '*')
			j++;
		g->seg[g->nseg++] = (struct glob_seg){base + i, j - i};
		i = j;
	}
}

/* Is the run s at p (p has at least s->n bytes)? */
static bool run_at(const struct glob *g, const char *p, const struct glob_seg *s)
{
	if (!g->casefold)
		return memcmp(p, s->s, s->n) == 0;
	for (size_t k = 0; k < s->n; k++)
		if (lower((unsigned char)p[k]) != (unsigned char)s->s[k])
			return false;
	return true;
}

/* The first place in h[0..hn) where the run s is, or NULL. */
static const char *run_find(const struct glob *g, const char *h, size_t hn, const struct glob_seg *s)
{
	if (!g->casefold)
		return memmem(h, hn, s->s, s->n);
	for (size_t i = 0; i + s->n <= hn; i++)
		if (run_at(g, h + i, s))
			return h + i;
	return NULL;
}

bool glob_match(const struct glob *g, const char *name, size_t len)
{
	if (!g->simple)
		return fnmatch(g->pat, name, g->casefold ? FNM_CASEFOLD : 0) == 0;
	if (!g->star) { /* one literal, or the empty pattern */
		size_t n = g->nseg ? g->seg[0].n : 0;
		if (len != n)
			return false;
		return !n || run_at(g, name, &g->seg[0]);
	}
	size_t i = 0, last = g->nseg, pos = 0, end = len;
	if (!g->lead) { /* the first run is a prefix */
		const struct glob_seg *s = &g->seg[0];
		if (len < s->n || !run_at(g, name, s))
			return false;
		pos = s->n;
		i = 1;
	}
	if (!g->trail && last > i) { /* the last run is a suffix, after the prefix */
		const struct glob_seg *s = &g->seg[last - 1];
		if (end - pos < s->n || !run_at(g, name + end - s->n, s))
			return false;
		end -= s->n;
		last--;
	}
	/* The runs between: each at its leftmost place after the one before (leftmost leaves the
	 * most room for the rest, so this finds a match whenever there is one). */
	for (; i < last; i++) {
		const struct glob_seg *s = &g->seg[i];
		const char *p = run_find(g, name + pos, end - pos, s);
		if (!p)
			return false;
		pos = (size_t)(p - name) + s->n;
	}
	return true;
}

void glob_free(struct glob *g)
{
	free(g->seg);
	free(g->fold);
	g->seg = NULL;
	g->fold = NULL;
}
