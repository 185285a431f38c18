/*
 * glob: fnmatch for the patterns of literal bytes and stars, without fnmatch. See glob.h.
 */
#include "util/glob.h"

#include <fnmatch.h>
#include <langinfo.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "util/util.h"

static inline unsigned char lower(unsigned char c) { return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c; }

/* Has s[0..n) a byte past ASCII? Eight at a time: it runs on every name a casefold match missed. */
static bool glob_has_high(const char *s, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		if (w & 0x8080808080808080ULL)
			return true;
	}
	for (; i < n; i++)
		if ((unsigned char)s[i] >= 0x80)
			return true;
	return false;
}

/* Are a pattern's bytes its characters as far as '*' and the literals go: a single-byte locale,
 * or UTF-8 (where no byte of a multibyte character is ASCII; in Shift JIS one can be '\\')? */
static bool glob_bytes_ok(void)
{
	return MB_CUR_MAX == 1 || !strcmp(nl_langinfo(CODESET), "UTF-8");
}

/* Does the locale fold the ASCII letters as ASCII (not tr_TR's I to dotless i)? */
static bool glob_ascii_folds(void)
{
	for (wint_t c = 'A'; c <= 'Z'; c++)
		if (towlower(c) != c + ('a' - 'A') || towlower(c + ('a' - 'A')) != c + ('a' - 'A'))
			return false;
	return true;
}

void glob_init(struct glob *g, const char *pat, bool casefold)
{
	memset(g, 0, sizeof(*g));
	g->pat = pat;
	g->casefold = casefold;
	g->fold_more = casefold && MB_CUR_MAX > 1;
	if (strpbrk(pat, "?[\\") || !glob_bytes_ok() ||
	    (casefold && (glob_has_high(pat, strlen(pat)) || !glob_ascii_folds())))
		return; /* fnmatch's: letters fold as the locale says */
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

static bool glob_fnmatch(const struct glob *g, const char *name)
{
	return fnmatch(g->pat, name, g->casefold ? FNM_CASEFOLD : 0) == 0;
}

/* The literal and star patterns, bytewise (ASCII letters folded with casefold). */
static bool glob_simple(const struct glob *g, const char *name, size_t len)
{
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

/* casefold in a multibyte locale: fnmatch matches by characters and, where that fails, by bytes
 * (glibc), so for literals and stars its answer is the bytewise one, or else a character past ASCII
 * folded to an ASCII letter (the Kelvin sign to k): a name with such bytes that the bytes do not
 * match goes to fnmatch. Out of line, so that the plain path keeps its registers. */
static __attribute__((noinline)) bool glob_match_fold(const struct glob *g, const char *name, size_t len)
{
	return glob_simple(g, name, len) || (glob_has_high(name, len) && glob_fnmatch(g, name));
}

bool glob_match(const struct glob *g, const char *name, size_t len)
{
	if (!g->simple)
		return glob_fnmatch(g, name);
	if (g->fold_more)
		return glob_match_fold(g, name, len);
	return glob_simple(g, name, len);
}

void glob_free(struct glob *g)
{
	free(g->seg);
	free(g->fold);
	g->seg = NULL;
	g->fold = NULL;
}
