/*
 * Fuzz target "numbers": the parsers of counts (1M = 10^6), byte sizes (4k = 4096, 20MiB), size
 * ranges (1k-64k), seconds and --ionice classes that every subcommand's options use. Each value
 * accepted is checked against an independent computation in 128-bit arithmetic of what
 * docs/design.md's conventions say it means; whatever overflows 64 bits must be refused.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>

#include "job/job.h"
#include "fuzz.h"
#include "util/util.h"

/* The reference: DIGITS [. DIGITS] [SUFFIX] where SUFFIX is one of kmgtpe (any case), for sizes
 * optionally followed by "i" and then by "B"/"b", or a bare "B"/"b". A fraction (at most 18
 * digits) needs a suffix and must come out whole: 3.3M, 1.5k. -1 when s is not of that form, the
 * value is not whole, or it does not fit in 64 bits. */
static int reference(const char *s, unsigned base, int sizes, uint64_t *out)
{
	unsigned __int128 v = 0, lim = UINT64_MAX, frac = 0, scale = 1, mult = 1;
	const char *p = s;
	if (!isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		v = v * 10 + (unsigned)(*p - '0');
		if (v > lim)
			return -1;
	}
	if (*p == '.') {
		const char *d = ++p;
		for (; isdigit((unsigned char)*p); p++) {
			if (p - d == 18)
				return -1;
			frac = frac * 10 + (unsigned)(*p - '0');
			scale *= 10;
		}
		if (p == d)
			return -1;
	}
	const char *u = NULL;
	if (*p) {
		const char *units = "kmgtpe";
		u = strchr(units, tolower((unsigned char)*p));
		if (u) {
			for (const char *q = units; q <= u; q++)
				mult *= base;
			p++;
			if (sizes && *p == 'i')
				p++;
		}
		if (sizes && (*p == 'B' || *p == 'b'))
			p++;
		if (*p || (!u && !sizes))
			return -1;
	}
	if (scale > 1 && !u)
		return -1;
	/* frac < 10^18 < 2^60 and mult <= 1024^6 = 2^60: the product fits in 128 bits. */
	if (frac * mult % scale)
		return -1;
	v = v * mult; /* v <= 2^64 and mult <= 2^60 */
	v += frac * mult / scale;
	if (v > lim)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 256)
		return 0;
	char *s = malloc(size + 1);
	memcpy(s, data, size);
	s[size] = 0;
	uint64_t v, want, lo, hi;
	bool ok = parse_count(s, &v);
	int ref = reference(s, 1000, 0, &want);
	fuzz_check(ok == (ref == 0) && (!ok || v == want));
	ok = parse_size(s, &v);
	ref = reference(s, 1024, 1, &want);
	fuzz_check(ok == (ref == 0) && (!ok || v == want));
	if (parse_size_range(s, &lo, &hi)) {
		fuzz_check(lo <= hi);
		const char *dash = strchr(s, '-');
		fuzz_check(dash ? reference(dash + 1, 1024, 1, &want) == 0 && want == hi
				: reference(s, 1024, 1, &want) == 0 && want == lo && lo == hi);
	}
	int io = parse_ionice(s);
	fuzz_check(io == -1 || io == 3 << 13 || (io >= 2 << 13 && io <= (2 << 13 | 7)));
	struct job_opts o;
	job_opts_init(&o);
	prog_name = "fuzz numbers";
	if (job_opt(&o, OPT_PROGRESS, s) == 1)
		fuzz_check(o.progress_s == 0 || (o.progress_s >= 0.1 && o.progress_s <= 1e9));
	if (job_opt(&o, OPT_CHECKPOINT, s) == 1)
		fuzz_check(o.checkpoint_s >= 0.01 && o.checkpoint_s <= 1e9);
	if (job_opt(&o, 'j', s) == 1)
		fuzz_check(o.threads >= 1 && o.threads <= 4096);
	free(s);
	return 0;
}
