/*
 * flat: whether what should stay flat as the file count grows does. Two readings of lifecycle's
 * results: where a phase's rate drops during one run and stays down (the fill slowing when the
 * inodes no longer fit in the page cache, say), rather than hiding it in the phase's average; and
 * whether myriad's own peak memory stays flat from the smallest scale to the largest. Both go
 * into results.json (lifecycle/results) and the page (page_flat.c); nothing here draws.
 */
#ifndef MYRIAD_FLAT_H
#define MYRIAD_FLAT_H

#include <stdbool.h>
#include <stddef.h>

#include "report/json.h"
#include "lifecycle/results.h"

/*
 * The rule for a drop, in fractions of the phase's duration D (first to last timeline point):
 * the rate is smoothed over windows of LC_DROP_WINDOW·D; a drop is the first time t where every
 * window after t, up to the tail, runs below LC_DROP_FRACTION of the window just before t, and
 * that stretch lasts at least LC_DROP_LASTING·D. The last LC_DROP_TAIL·D is not judged (workers
 * finishing their last directories). A timeline of fewer than LC_DROP_MIN_POINTS points says
 * nothing. So one slow sample is no drop (one window at most), and neither is a steady decline
 * (no single window falls 30% below the one before): that shows in the first and last tenth.
 */
#define LC_DROP_WINDOW 0.05
#define LC_DROP_FRACTION 0.7
#define LC_DROP_LASTING 0.10
#define LC_DROP_TAIL 0.05
#define LC_DROP_MIN_POINTS 40

struct lc_rate_shape {
	bool judged;       /* false: too few points (or no progress) to say anything */
	double first_tenth, last_tenth; /* the rate over the first and last tenth of the time */
	bool drop;         /* a lasting drop was found: the fields below are set */
	double at_s, at_count; /* where the step is: the timeline's clock (s since the phase began), count so far */
	double before, after;  /* the rate from the first point to the step, and from it to the end */
	double fall;           /* 1 - after/before */
};
/* The shape of one phase's rate from its timeline (points in time order; a point that goes back
 * in time or count is skipped). False, with judged false, when it is too short to tell. */
bool lc_rate_shape(const struct lc_point *tl, size_t n, struct lc_rate_shape *out);

/* The phases myriad itself runs, whose memory should not grow with the file count. */
extern const int lc_myriad_phases[];
extern const size_t lc_nmyriad_phases;
/* The bar of issue 15: a phase's peak RSS at the largest scale within 1.25× of the smallest. */
#define LC_RSS_FLAT_RATIO 1.25

/* One series and myriad phase: its peak RSS at the smallest and at the largest scale it ran at. */
struct lc_rss_flat {
	char *series;
	const char *fs;
	int phase;
	double small_n, small_kib, large_n, large_kib;
	double ratio;      /* large_kib / small_kib */
	bool flat;         /* ratio <= LC_RSS_FLAT_RATIO */
};
/* Every series and myriad phase measured (ok, with a peak RSS) at two or more scales, in series
 * then phase order; a scale run twice counts its last cycle. Returns the count; *out to free with
 * lc_rss_flat_free. */
size_t lc_rss_flatness(struct lc_results *const *runs, size_t nruns, struct lc_rss_flat **out);
void lc_rss_flat_free(struct lc_rss_flat *f, size_t n);
/* The rows as a JSON object under key: the bar, and one entry per row. */
void lc_rss_flat_json(struct json *j, const char *key, const struct lc_rss_flat *f, size_t n);

/* Into the phase object being written: rate_tenths and rate_drop (null: judged, none found),
 * nothing when the timeline is too short. host_mem_kib (NAN: leave out) puts the machine's
 * memory per counted item at the drop beside it: a hint for fill, whose count is files present. */
void lc_rate_shape_json(struct json *j, const struct lc_point *tl, size_t n, double host_mem_kib);

#endif
