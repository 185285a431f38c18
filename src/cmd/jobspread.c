/* jobspread: a command's run across the ranks of an MPI job (see jobspread.h). */
#include "cmd/jobspread.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	return spread_all(ok);
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
