/* jobspread: a command's run across the ranks of an MPI job (see jobspread.h). */
#include "job/jobspread.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "state/ckpt.h"
#include "state/ser.h"
#include "util/signals.h"
#include "util/util.h"

int job_spread_begin(struct job_spread *js, struct job_opts *o, const char **outs, const bool *want, int nouts)
{
	memset(js, 0, sizeof(*js));
	for (int k = 0; k <= JOB_SPREAD_OUTS; k++)
		js->fd[k][0] = js->fd[k][1] = -1;
	js->rank = spread_rank();
	js->ranks = spread_size();
	js->nouts = nouts;
	for (int k = 0; k < nouts; k++)
		js->want[k] = want[k];
	js->want[nouts] = o->errors != NULL;
	if (o->rate) {
		o->rate /= (uint64_t)js->ranks;
		if (!o->rate)
			o->rate = 1;
	}
	if (js->rank == 0)
		return 0;
	o->no_state = true;
	o->state = NULL;
	o->fresh = false;
	o->progress_s = 0;
	for (int k = 0; k <= nouts; k++) {
		if (!js->want[k])
			continue;
		const char *final = k < nouts ? outs[k] : o->errors;
		char spare[PATH_MAX];
		if ((js->fd[k][0] = spread_part_create(final, js->path[k], PATH_MAX)) < 0 ||
		    (js->fd[k][1] = spread_part_create(final, spare, sizeof(spare))) < 0)
			return EXIT_USAGE;
		unlink(spare);
		if (k < nouts)
			outs[k] = js->path[k];
		else
			o->errors = js->path[k];
	}
	return 0;
}

int job_spread_snapshot(struct job_spread *js, struct job *j, int rc, const struct sbuf **snap)
{
	int shared = spread_share_snapshot(rc == 0, rc ? NULL : job_snapshot(j), rc ? NULL : job_snapshot_name(j),
					   &js->rank_snap);
	*snap = shared > 0 ? &js->rank_snap : NULL;
	if (shared < 0)
		return rc ? rc : EXIT_USAGE;
	return rc;
}

bool job_spread_ready(struct job_spread *js, bool ok)
{
	for (int k = 0; k <= js->nouts; k++)
		if (*js->path[k])
			unlink(js->path[k]);
	if (spread_all(ok))
		return true;
	sbuf_free(&js->rank_snap); /* a job that does not start needs no part of a snapshot */
	return false;
}

void job_spread_outputs(struct job_spread *js, struct job *j, struct outfile **outs)
{
	for (int k = 0; k <= js->nouts; k++)
		if (js->want[k])
			spread_add_output(js->sp, k < js->nouts ? outs[k] : &j->errlog.file, js->fd[k][0], js->fd[k][1]);
}

enum run_result job_spread_execute(struct job_spread *js, struct job *j, const struct run_hooks *inner)
{
	struct run_hooks hooks = spread_hooks(js->sp, inner);
	enum run_result res = spread_finish(js->sp, job_execute(j, &hooks));
	bool peer = spread_peer_stopped(js->sp);
	if (peer)
		j->stop_reason = "another rank stopped (its message says why)";
	/* Rank 0 speaks for the job; a rank stopped by a signal of its own says so (rank 0 says the
	 * job stopped because another rank did). */
	j->quiet = js->rank > 0;
	if (js->rank > 0 && res == RUN_STOPPED && !peer && sig_stop_signal())
		warnx_("rank %d: stopped by signal %d", js->rank, sig_stop_signal());
	return res;
}

void job_spread_end(struct job_spread *js)
{
	spread_gather_outputs(js->sp);
	spread_free(js->sp);
	js->sp = NULL;
	sbuf_free(&js->rank_snap);
}

void job_spread_hists(struct hist *h, int n)
{
	enum { H = HIST_BUCKETS + 1 };
	uint64_t *v = xmalloc(sizeof(uint64_t) * (size_t)n * H), *mx = xmalloc(sizeof(uint64_t) * (size_t)n);
	for (int i = 0; i < n; i++) {
		v[i * H] = h[i].count;
		memcpy(v + i * H + 1, h[i].b, sizeof(h[i].b));
		mx[i] = h[i].max;
	}
	spread_sum(v, (size_t)n * H);
	spread_max_u64(mx, (size_t)n);
	if (spread_rank() == 0)
		for (int i = 0; i < n; i++) {
			h[i].count = v[i * H];
			memcpy(h[i].b, v + i * H + 1, sizeof(h[i].b));
			h[i].max = mx[i];
		}
	free(v);
	free(mx);
}

void job_spread_timeline(struct timeline *tl, uint64_t total)
{
	uint32_t n = tl->n;
	spread_bcast(&n, sizeof(n));
	double *t = xcalloc(n + 1, sizeof(*t));
	if (spread_rank() == 0)
		memcpy(t, tl->t, n * sizeof(*t));
	spread_bcast(t, n * sizeof(*t));
	uint64_t *v = xcalloc(n + 1, sizeof(*v));
	for (uint32_t i = 0, k = 0; i < n; i++) {
		while (k < tl->n && tl->t[k] <= t[i])
			k++;
		v[i] = k ? tl->v[k - 1] : 0;
	}
	spread_sum(v, n);
	if (spread_rank() == 0) {
		memcpy(tl->v, v, n * sizeof(*v));
		if (n)
			tl->v[n - 1] = total;
	}
	free(t);
	free(v);
}

void job_spread_state_dir(const struct job *j, char *dir)
{
	*dir = 0;
	if (j->ckpt)
		snprintf(dir, PATH_MAX, "%s", ckpt_dir(j->ckpt));
	spread_bcast(dir, PATH_MAX);
}

bool job_spread_same_dirs(char *const *paths, const uint64_t *inos, size_t n, const char *refusing)
{
	int rank = spread_rank();
	uint64_t count = n;
	spread_bcast(&count, sizeof(count)); /* rank 0's */
	uint64_t *zero = xcalloc(count + 1, sizeof(*zero));
	if (rank == 0)
		memcpy(zero, inos, n * sizeof(*inos));
	spread_bcast(zero, count * sizeof(*zero));
	bool same = true;
	const char *hint = "every rank must see the same tree at the same path (and start in the same working directory, "
			   "for relative paths)";
	if (count != n) {
		warnx_("rank %d: %zu of the operands are there, where rank 0 sees %llu: %s", rank, n,
		       (unsigned long long)count, hint);
		same = false;
	}
	for (size_t i = 0; same && i < n; i++)
		if (zero[i] != inos[i]) {
			warnx_("rank %d: %s '%s': it is not the directory rank 0 sees by that name (inode %llu, rank 0's "
			       "%llu): %s",
			       rank, refusing, paths[i], (unsigned long long)inos[i], (unsigned long long)zero[i], hint);
			same = false;
		}
	free(zero);
	return same;
}

static bool p2_done(void *ctx) { return ((struct job_pass2 *)ctx)->inner.done(((struct job_pass2 *)ctx)->inner.ctx); }
static int p2_tick(void *ctx)
{
	struct job_pass2 *p = ctx;
	return p->inner.tick ? p->inner.tick(p->inner.ctx) : -1;
}
static void p2_start(void *ctx) { ((struct job_pass2 *)ctx)->inner.start(((struct job_pass2 *)ctx)->inner.ctx); }
static void p2_join(void *ctx) { ((struct job_pass2 *)ctx)->inner.join(((struct job_pass2 *)ctx)->inner.ctx); }

static void p2_snapshot(void *ctx, struct sbuf *out, bool stop)
{
	struct job_pass2 *p = ctx;
	struct sbuf walk = {0};
	p->inner.snapshot(p->inner.ctx, &walk, stop);
	ser_begin(out, p->magic);
	ser_u64(out, (uint64_t)p->ranks);
	ser_u64(out, (uint64_t)(*p->base_s * 1e9));
	ser_u64(out, *p->base_sessions);
	for (size_t i = 0; i < p->nv; i++)
		ser_u64(out, *p->v[i]);
	ser_bytes(out, walk.data, walk.len);
	ser_end(out);
	sbuf_free(&walk);
}

struct run_hooks job_pass2_hooks(struct job_pass2 *p, const struct run_hooks *walk_hooks)
{
	p->inner = *walk_hooks;
	struct run_hooks h = *walk_hooks;
	h.ctx = p;
	h.done = p2_done;
	h.tick = walk_hooks->tick ? p2_tick : NULL;
	h.snapshot = p2_snapshot;
	h.start = p2_start;
	h.join = p2_join;
	return h;
}

bool job_pass2_unwrap(struct job_pass2 *p, const struct sbuf *snap, const char *name, const char *cmd,
		      struct sbuf *walk)
{
	const char *why = "malformed";
	struct deser d;
	if (!deser_begin(&d, snap->data, snap->len, p->magic, &why)) {
		warnx_("%s: cannot be used: %s (not a snapshot of myriad-mpi %s); remove the state directory or use "
		       "--fresh", name, why, cmd);
		return false;
	}
	uint64_t ranks = deser_u64(&d), ns = deser_u64(&d), sessions = deser_u64(&d), v[JOB_PASS2_VALUES];
	for (size_t i = 0; i < p->nv; i++)
		v[i] = deser_u64(&d);
	size_t len;
	const void *data = deser_bytes(&d, &len);
	if (!deser_done(&d)) {
		warnx_("%s: cannot be used: malformed; remove the state directory or use --fresh", name);
		return false;
	}
	if (ranks != (uint64_t)p->ranks) {
		warnx_("%s: saved by a job of %llu ranks, this one has %d: run it again with mpirun -np %llu to resume, "
		       "or with --fresh to start over", name, (unsigned long long)ranks, p->ranks, (unsigned long long)ranks);
		return false;
	}
	*p->base_s = ns / 1e9;
	*p->base_sessions = sessions;
	for (size_t i = 0; i < p->nv; i++)
		*p->v[i] = v[i];
	sbuf_add(walk, data, len);
	return true;
}
