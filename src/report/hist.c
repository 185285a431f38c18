/* hist: log-linear latency histograms and bounded timelines (see hist.h). */
#include "report/hist.h"

#include <string.h>

static unsigned bucket_of(uint64_t v)
{
	if (v < HIST_SUB)
		return (unsigned)v;
	unsigned e = 63 - __builtin_clzll(v); /* v in [2^e, 2^(e+1)) , e >= 4 */
	unsigned sub = (unsigned)(v >> (e - 4)) & (HIST_SUB - 1);
	return (e - 3) * HIST_SUB + sub;
}

static uint64_t bucket_top(unsigned b)
{
	if (b < HIST_SUB)
		return b;
	unsigned e = b / HIST_SUB + 3, sub = b % HIST_SUB;
	return ((uint64_t)(HIST_SUB + sub + 1) << (e - 4)) - 1;
}

void hist_add(struct hist *h, uint64_t v)
{
	h->b[bucket_of(v)]++;
	h->count++;
	if (v > h->max)
		h->max = v;
}

void hist_merge(struct hist *into, const struct hist *h)
{
	if (!h->count)
		return;
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		into->b[i] += h->b[i];
	into->count += h->count;
	if (h->max > into->max)
		into->max = h->max;
}

uint64_t hist_quantile(const struct hist *h, double q)
{
	if (!h->count)
		return 0;
	uint64_t rank = (uint64_t)(q * (double)h->count);
	if (rank >= h->count)
		rank = h->count - 1;
	uint64_t seen = 0;
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen > rank) {
			uint64_t top = bucket_top(i);
			return top < h->max ? top : h->max;
		}
	}
	return h->max;
}

void hist_json(struct json *j, const char *key, const struct hist *h)
{
	json_open(j, key, '{');
	json_u64(j, "count", h->count);
	json_double(j, "p50_us", hist_quantile(h, 0.5) / 1e3);
	json_double(j, "p90_us", hist_quantile(h, 0.9) / 1e3);
	json_double(j, "p99_us", hist_quantile(h, 0.99) / 1e3);
	json_double(j, "p999_us", hist_quantile(h, 0.999) / 1e3);
	json_double(j, "max_us", h->max / 1e3);
	json_close(j, '}');
}

void hist_save(struct sbuf *b, const struct hist *h)
{
	ser_u64(b, h->count);
	ser_u64(b, h->max);
	/* Sparse: (index, count) pairs of the non-empty buckets. */
	uint64_t n = 0;
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		n += h->b[i] != 0;
	ser_u64(b, n);
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		if (h->b[i]) {
			ser_u64(b, i);
			ser_u64(b, h->b[i]);
		}
}

/* What hist_save writes: non-empty buckets in increasing order that add up to the count. */
bool hist_load(struct hist *h, struct deser *d)
{
	memset(h, 0, sizeof(*h));
	h->count = deser_u64(d);
	h->max = deser_u64(d);
	uint64_t n = deser_u64(d), sum = 0;
	if (n > HIST_BUCKETS || (h->count == 0 && h->max != 0))
		return false;
	for (uint64_t k = 0, prev = 0; k < n && !d->bad; k++) {
		uint64_t i = deser_u64(d), c = deser_u64(d);
		if (i >= HIST_BUCKETS || (k && i <= prev) || c == 0 || c > UINT64_MAX - sum)
			return false;
		h->b[i] = c;
		sum += c;
		prev = i;
	}
	return !d->bad && sum == h->count;
}

void timeline_init(struct timeline *tl, double interval_s)
{
	memset(tl, 0, sizeof(*tl));
	tl->interval = interval_s;
}

void timeline_force(struct timeline *tl, double t, uint64_t value)
{
	if (tl->n == TIMELINE_MAX) {
		for (uint32_t i = 0; i < TIMELINE_MAX / 2; i++) {
			tl->t[i] = tl->t[2 * i + 1];
			tl->v[i] = tl->v[2 * i + 1];
		}
		tl->n = TIMELINE_MAX / 2;
		tl->interval *= 2;
	}
	tl->t[tl->n] = t;
	tl->v[tl->n] = value;
	tl->n++;
	tl->next = t + tl->interval;
}

void timeline_add(struct timeline *tl, double t, uint64_t value)
{
	if (t >= tl->next)
		timeline_force(tl, t, value);
}

void timeline_json(struct json *j, const char *key, const struct timeline *tl)
{
	json_open(j, key, '[');
	for (uint32_t i = 0; i < tl->n; i++) {
		json_open(j, NULL, '[');
		json_double(j, NULL, tl->t[i]);
		json_u64(j, NULL, tl->v[i]);
		double dt = i ? tl->t[i] - tl->t[i - 1] : tl->t[i];
		double dv = (double)(i ? tl->v[i] - tl->v[i - 1] : tl->v[i]);
		json_double(j, NULL, dt > 0 ? dv / dt : 0);
		json_close(j, ']');
	}
	json_close(j, ']');
}

void timeline_save(struct sbuf *b, const struct timeline *tl)
{
	ser_u64(b, tl->n);
	ser_u64(b, (uint64_t)(tl->interval * 1e9));
	for (uint32_t i = 0; i < tl->n; i++) {
		ser_u64(b, (uint64_t)(tl->t[i] * 1e9));
		ser_u64(b, tl->v[i]);
	}
}

/* Times are saved in ns; beyond 2^62 ns (146 years) they would not come back the same. */
#define TIMELINE_NS_MAX (1ull << 62)

/* What timeline_save writes: times and values that never go back. */
bool timeline_load(struct timeline *tl, struct deser *d)
{
	memset(tl, 0, sizeof(*tl));
	uint64_t n = deser_u64(d);
	if (n > TIMELINE_MAX)
		return false;
	uint64_t interval = deser_u64(d);
	if (interval > TIMELINE_NS_MAX)
		return false;
	tl->interval = interval / 1e9;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t t = deser_u64(d), v = deser_u64(d);
		if (t > TIMELINE_NS_MAX || (i && (t / 1e9 < tl->t[i - 1] || v < tl->v[i - 1])))
			return false;
		tl->t[i] = t / 1e9;
		tl->v[i] = v;
	}
	tl->n = (uint32_t)n;
	tl->next = n ? tl->t[n - 1] + tl->interval : 0;
	return !d->bad;
}
