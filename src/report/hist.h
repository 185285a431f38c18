/*
 * hist: fixed-size latency histograms and a bounded rate timeline, shared by every command that
 * reports per-operation latencies (fill, rm, copy) or rates over time.
 *
 * A histogram has 16 log-linear sub-buckets per power of two from 1 ns to ~2^63 ns: relative
 * error under 6.25%, 8 KiB, merged by addition, so per-worker histograms fold into the totals at
 * each commit. Percentiles are read from the buckets, never averaged.
 */
#ifndef MYRIAD_HIST_H
#define MYRIAD_HIST_H

#include <stdint.h>

#include "report/json.h"
#include "state/ser.h"

#define HIST_SUB 16
#define HIST_BUCKETS (64 * HIST_SUB)

struct hist {
	uint64_t count;
	uint64_t max;
	uint64_t b[HIST_BUCKETS];
};

void hist_add(struct hist *h, uint64_t v);
void hist_merge(struct hist *into, const struct hist *h);
/* The value at quantile q (0..1): the upper bound of its bucket, at most max. */
uint64_t hist_quantile(const struct hist *h, double q);
/* {"count":..,"p50_us":..,"p90_us":..,"p99_us":..,"p999_us":..,"max_us":..} under key. */
void hist_json(struct json *j, const char *key, const struct hist *h);
void hist_save(struct sbuf *b, const struct hist *h);
bool hist_load(struct hist *h, struct deser *d);

/*
 * A timeline of (seconds since start, count so far): at most TIMELINE_MAX points; when full,
 * every other point is dropped and the interval doubles, so any run length fits.
 */
#define TIMELINE_MAX 512
struct timeline {
	uint32_t n;
	double interval;
	double next;
	double t[TIMELINE_MAX];
	uint64_t v[TIMELINE_MAX];
};

void timeline_init(struct timeline *tl, double interval_s);
/* Record value at time t (seconds) if a point is due. */
void timeline_add(struct timeline *tl, double t, uint64_t value);
/* Always record (the final point). */
void timeline_force(struct timeline *tl, double t, uint64_t value);
/* [[t, value, rate], ...] under key; rate is per second since the previous point. */
void timeline_json(struct json *j, const char *key, const struct timeline *tl);
void timeline_save(struct sbuf *b, const struct timeline *tl);
bool timeline_load(struct timeline *tl, struct deser *d);

#endif
