/*
 * glob: shell patterns as fnmatch(3) matches them with no flags (or FNM_CASEFOLD) in the locale
 * (LC_CTYPE) of glob_init, compiled once for the patterns people write most: literal bytes and '*'
 * ("*.tmp", "core.*", "*01*", "a*b*c"), matched with memcmp and memmem, several times faster than
 * fnmatch on short names. Any other pattern ('?', '[', '\\', or with FNM_CASEFOLD a byte past
 * ASCII), any pattern in a locale whose ASCII letters fold otherwise (tr_TR) or whose multibyte
 * characters are not UTF-8, is left to fnmatch, and so is a name with bytes past ASCII that an
 * ASCII-only folding did not match in a multibyte locale: the answer is always fnmatch's.
 * '*' matches '/' too, as fnmatch without FNM_PATHNAME does (find's -path).
 */
#ifndef MYRIAD_GLOB_H
#define MYRIAD_GLOB_H

#include <stdbool.h>
#include <stddef.h>

struct glob_seg {
	const char *s; /* into glob.fold (casefold) or glob.pat */
	size_t n;
};

struct glob {
	const char *pat;       /* as given (not copied: must outlive the glob) */
	bool casefold;         /* FNM_CASEFOLD: letters match either case */
	bool fold_more;        /* casefold in a multibyte locale: a character past ASCII may fold to
				* an ASCII letter (the Kelvin sign to k) */
	bool simple;           /* only literal bytes and '*': matched here */
	bool star;             /* simple and has a '*' (else the pattern is one literal) */
	bool lead, trail;      /* simple: begins with '*', ends with '*' */
	size_t nseg;           /* simple: the literal runs between the stars, in order */
	struct glob_seg *seg;
	char *fold;            /* casefold and simple: the pattern in lower case */
};

/* Compile pat (which must stay valid while g is used); casefold as FNM_CASEFOLD. */
void glob_init(struct glob *g, const char *pat, bool casefold);

/* Does name (len bytes, NUL-terminated at name[len]) match? Equal to
 * fnmatch(pat, name, casefold ? FNM_CASEFOLD : 0) == 0 in the locale of glob_init. */
bool glob_match(const struct glob *g, const char *name, size_t len);

/* Free what glob_init allocated. */
void glob_free(struct glob *g);

#endif
