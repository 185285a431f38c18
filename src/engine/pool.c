/*
 * pool: workers over numbered units with an exact, bounded checkpoint (see pool.h).
 *
 * Snapshot ("MYRPOOL1"): elapsed ns, sessions, error count and --errors length, the visitor's
 * blob, the watermark, and the bitmap of finished units in [watermark, watermark + WINDOW).
 */
#include "engine/pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "util/signals.h"
#include "util/util.h"

#define WINDOW 4096

struct pworker {
	struct pool *p;
	pthread_t tid;
	void *local;
	struct errbatch errs;
	uint64_t unit;  /* the unit in progress */
	bool busy;
	_Atomic uint64_t since; /* when it last made progress (the stuck report) */
};

static __thread struct pworker *self; /* the calling worker, for pool_progressed */

struct pool {
	struct pool_config cfg;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t low;   /* every unit below is finished */
	uint64_t next;  /* next unit to claim */
	uint8_t done[WINDOW / 8]; /* finished units in [low, low + WINDOW), bit (u - low) % WINDOW */
	uint64_t finished;
	int halted;
	bool stopping;
	atomic_bool over;
	struct pworker *workers;
	int nstarted;
	bool joined;
	uint64_t start_ns, end_ns, prev_ns, sessions;
};

static bool bit_get(const struct pool *p, uint64_t u) { return p->done[(u % WINDOW) / 8] & (1u << (u % 8)); }
static void bit_set(struct pool *p, uint64_t u) { p->done[(u % WINDOW) / 8] |= (uint8_t)(1u << (u % 8)); }
static void bit_clear(struct pool *p, uint64_t u) { p->done[(u % WINDOW) / 8] &= (uint8_t)~(1u << (u % 8)); }

static void check_over(struct pool *p)
{
	bool busy = false;
	for (int i = 0; i < p->nstarted; i++)
		busy |= p->workers[i].busy;
	if (!busy && (p->halted || p->low >= p->cfg.units)) {
		atomic_store(&p->over, true);
		pthread_cond_broadcast(&p->cond);
		sig_wake();
	}
}

/* Claim the next unit not already finished; false when there is none or the run is halting. */
static bool claim(struct pworker *w)
{
	struct pool *p = w->p;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		/* Finishing the oldest unit moves the watermark past the units finished before a resume,
		 * and their bits are cleared as it goes: never claim below it. */
		if (p->next < p->low)
			p->next = p->low;
		while (p->next < p->cfg.units && bit_get(p, p->next) && p->next < p->low + WINDOW)
			p->next++; /* finished before a resume */
		if (p->stopping || p->halted || p->next >= p->cfg.units) {
			pthread_mutex_unlock(&p->lock);
			return false;
		}
		if (p->next < p->low + WINDOW)
			break;
		pthread_cond_wait(&p->cond, &p->lock); /* too far ahead of the oldest unfinished unit */
	}
	w->unit = p->next++;
	w->busy = true;
	atomic_store_explicit(&w->since, coarse_ns(), memory_order_relaxed);
	pthread_mutex_unlock(&p->lock);
	return true;
}

static void finish(struct pworker *w, int halt)
{
	struct pool *p = w->p;
	pthread_mutex_lock(&p->lock);
	while (p->stopping)
		pthread_cond_wait(&p->cond, &p->lock);
	p->cfg.visitor.commit(p->cfg.visitor.ctx, w->local);
	errlog_commit(p->cfg.errlog, &w->errs);
	w->busy = false;
	if (halt) {
		/* The unit stays unfinished (pool_unfinished reports it); no new unit starts. */
		if (!p->halted)
			p->halted = halt;
	} else {
		bit_set(p, w->unit);
		p->finished++;
		while (p->low < p->cfg.units && bit_get(p, p->low)) {
			bit_clear(p, p->low);
			p->low++;
		}
		pthread_cond_broadcast(&p->cond);
	}
	check_over(p);
	pthread_mutex_unlock(&p->lock);
}

static void *worker_main(void *arg)
{
	struct pworker *w = arg;
	self = w;
	while (claim(w)) {
		int halt = w->p->cfg.visitor.run(w->p->cfg.visitor.ctx, w->local, w->unit, &w->errs);
		finish(w, halt);
	}
	pthread_mutex_lock(&w->p->lock);
	check_over(w->p);
	pthread_mutex_unlock(&w->p->lock);
	return NULL;
}

/* The snapshot, with first(arg) called before it under the same hold of the lock. */
static void snapshot_then(struct pool *p, struct sbuf *b, bool stop, void (*first)(void *arg), void *arg)
{
	pthread_mutex_lock(&p->lock);
	if (stop)
		p->stopping = true;
	if (first)
		first(arg);
	ser_begin(b, "MYRPOOL1");
	ser_u64(b, p->prev_ns + ((p->end_ns ? p->end_ns : now_ns()) - p->start_ns));
	ser_u64(b, p->sessions);
	ser_u64(b, p->cfg.errlog->count);
	ser_u64(b, p->cfg.errlog->have_file ? p->cfg.errlog->file.len : 0);
	struct sbuf v = {0};
	p->cfg.visitor.save(p->cfg.visitor.ctx, &v);
	ser_bytes(b, v.data, v.len);
	sbuf_free(&v);
	ser_u64(b, p->cfg.units);
	ser_u64(b, p->low);
	ser_u64(b, p->finished);
	uint8_t bits[WINDOW / 8] = {0};
	for (uint64_t u = p->low; u < p->low + WINDOW && u < p->cfg.units; u++)
		if (bit_get(p, u))
			bits[(u - p->low) / 8] |= (uint8_t)(1u << ((u - p->low) % 8));
	ser_bytes(b, bits, sizeof(bits));
	ser_end(b);
	pthread_mutex_unlock(&p->lock);
}

static void pool_snapshot(void *ctx, struct sbuf *b, bool stop) { snapshot_then(ctx, b, stop, NULL, NULL); }

void pool_snapshot_then(struct pool *p, struct sbuf *b, void (*first)(void *arg), void *arg)
{
	snapshot_then(p, b, false, first, arg);
}

bool pool_idle(struct pool *p) { return atomic_load(&p->over); }

/*
 * Restore the pool from a snapshot. Everything is decoded and checked before anything changes
 * outside memory (the --errors file is truncated back only then). The progress must be one the
 * pool could have saved: units below the watermark and those marked in the window above it are
 * exactly the finished ones, the unit at the watermark is not finished, no unit past the end is.
 */
static bool load_snapshot(struct pool *p, const struct sbuf *snap)
{
	struct deser d;
	const char *why = "malformed";
	if (!deser_begin(&d, snap->data, snap->len, "MYRPOOL1", &why))
		goto bad;
	p->prev_ns = deser_u64(&d);
	p->sessions = deser_u64(&d) + 1;
	uint64_t errs = deser_u64(&d), errlen = deser_u64(&d);
	size_t vlen;
	const void *vp = deser_bytes(&d, &vlen);
	if (d.bad)
		goto bad;
	struct deser vd = {.p = vp, .len = vlen};
	if (!p->cfg.visitor.load(p->cfg.visitor.ctx, &vd) || !deser_done(&vd)) {
		why = "the command's counters are malformed";
		goto bad;
	}
	uint64_t units = deser_u64(&d);
	p->low = deser_u64(&d);
	p->finished = deser_u64(&d);
	size_t blen;
	const uint8_t *bits = deser_bytes(&d, &blen);
	why = "its progress does not fit this job";
	if (!deser_done(&d) || units != p->cfg.units || p->low > units || blen != WINDOW / 8)
		goto bad;
	uint64_t marked = 0;
	for (uint64_t k = 0; k < WINDOW; k++) {
		if (!(bits[k / 8] & (1u << (k % 8))))
			continue;
		if (k == 0 || k >= units - p->low)
			goto bad;
		bit_set(p, p->low + k);
		marked++;
	}
	if (p->finished != p->low + marked)
		goto bad;
	p->next = p->low;
	if (errlog_open(p->cfg.errlog, p->cfg.errlog->path, true, errlen, errs) != 0)
		return false;
	return true;
bad:
	warnx_("%s: cannot be used: %s; remove the state directory or use --no-state",
	       p->cfg.snapshot_name ? p->cfg.snapshot_name : "checkpoint snapshot", why);
	return false;
}

bool pool_snapshot_units(const struct sbuf *snap, uint64_t *units)
{
	struct deser d;
	const char *why;
	if (!deser_begin(&d, snap->data, snap->len, "MYRPOOL1", &why))
		return false;
	for (int i = 0; i < 4; i++) /* elapsed, sessions, errors, the --errors file's length */
		deser_u64(&d);
	size_t vlen;
	deser_bytes(&d, &vlen);
	*units = deser_u64(&d);
	return !d.bad;
}

struct pool *pool_new(const struct pool_config *cfg, const struct sbuf *snapshot)
{
	struct pool *p = xcalloc(1, sizeof(*p));
	p->cfg = *cfg;
	if (p->cfg.threads < 1)
		p->cfg.threads = 1;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->workers = xcalloc(p->cfg.threads, sizeof(*p->workers));
	for (int i = 0; i < p->cfg.threads; i++) {
		p->workers[i].p = p;
		p->workers[i].local = xcalloc(1, cfg->visitor.local_size);
	}
	p->sessions = 1;
	p->start_ns = now_ns();
	if (snapshot && !load_snapshot(p, snapshot)) {
		pool_free(p);
		return NULL;
	}
	if (p->low >= p->cfg.units)
		atomic_store(&p->over, true);
	return p;
}

void pool_start(struct pool *p)
{
	for (; p->nstarted < p->cfg.threads; p->nstarted++) {
		int e = pthread_create(&p->workers[p->nstarted].tid, NULL, worker_main, &p->workers[p->nstarted]);
		if (e != 0) {
			/* A large -j beyond what the system grants: go on with those started (the
			 * workers never started hold no unit), or stop with the state saved. */
			threads_refused(p->nstarted, p->cfg.threads, e);
			break;
		}
	}
}

static bool pool_done(void *ctx) { return atomic_load(&((struct pool *)ctx)->over); }

static void pool_start_hook(void *ctx) { pool_start(ctx); }
static void pool_join_hook(void *ctx) { pool_join(ctx); }

struct run_hooks pool_run_hooks(struct pool *p, void (*progress)(void *ctx, struct sbuf *line),
				void (*sync)(void *ctx))
{
	struct run_hooks h = {.ctx = p,
			      .user = p->cfg.visitor.ctx,
			      .done = pool_done,
			      .snapshot = pool_snapshot,
			      .sync = sync,
			      .progress = progress,
			      .start = pool_start_hook,
			      .join = pool_join_hook};
	return h;
}

void pool_join(struct pool *p)
{
	if (!p->joined)
		for (int i = 0; i < p->nstarted; i++)
			pthread_join(p->workers[i].tid, NULL);
	p->joined = true;
	if (!p->end_ns)
		p->end_ns = now_ns();
}

void pool_free(struct pool *p)
{
	if (!p)
		return;
	pool_join(p);
	for (int i = 0; i < p->cfg.threads; i++) {
		if (p->cfg.visitor.local_free && p->workers[i].local)
			p->cfg.visitor.local_free(p->cfg.visitor.ctx, p->workers[i].local);
		free(p->workers[i].local);
		sbuf_free(&p->workers[i].errs.lines);
	}
	free(p->workers);
	free(p);
}

int pool_halted(struct pool *p) { return p->halted; }
uint64_t pool_units_done(struct pool *p) { return p->finished; }
double pool_elapsed(struct pool *p) { return (p->prev_ns + ((p->end_ns ? p->end_ns : now_ns()) - p->start_ns)) / 1e9; }
uint64_t pool_sessions(struct pool *p) { return p->sessions; }
uint64_t pool_errors(struct pool *p) { return p->cfg.errlog->count; }
uint64_t pool_next_unit(struct pool *p)
{
	/* Past the last claimed unit and past every unit a resumed run found finished. */
	uint64_t n = p->next > p->low ? p->next : p->low;
	for (uint64_t u = n; u < p->low + WINDOW && u < p->cfg.units; u++)
		if (bit_get(p, u))
			n = u + 1;
	return n;
}
void pool_lock(struct pool *p) { pthread_mutex_lock(&p->lock); }
void pool_unlock(struct pool *p) { pthread_mutex_unlock(&p->lock); }

void pool_unfinished(struct pool *p, void (*fn)(void *ctx, uint64_t unit), void *ctx)
{
	uint64_t end = pool_next_unit(p);
	for (uint64_t u = p->low; u < end; u++)
		if (!bit_get(p, u))
			fn(ctx, u);
}

void pool_progressed(void)
{
	if (self)
		atomic_store_explicit(&self->since, coarse_ns(), memory_order_relaxed);
}

void pool_stuck(struct pool *p, struct sbuf *line, double min_s,
		void (*name)(void *ctx, uint64_t unit, struct sbuf *out))
{
	uint64_t now = coarse_ns(), worst = 0, worst_unit = 0;
	int n = 0;
	pthread_mutex_lock(&p->lock);
	for (int i = 0; i < p->nstarted; i++) {
		struct pworker *w = &p->workers[i];
		uint64_t since = atomic_load_explicit(&w->since, memory_order_relaxed);
		if (!w->busy || now < since || (now - since) / 1e9 < min_s)
			continue;
		n++;
		if (now - since > worst) {
			worst = now - since;
			worst_unit = w->unit;
		}
	}
	pthread_mutex_unlock(&p->lock);
	if (n) {
		sbuf_printf(line, "; %d worker%s without progress, longest %.0f s in ", n, n > 1 ? "s" : "", worst / 1e9);
		name(p->cfg.visitor.ctx, worst_unit, line);
	}
}
