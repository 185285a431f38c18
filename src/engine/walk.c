/*
 * walk: the parallel traversal engine (see walk.h for the design).
 *
 * Frontier: a LIFO stack of directory records (display path, where the path relative to its
 * operand starts, the getdents cookie to continue from). LIFO keeps the walk depth-first, which
 * keeps the frontier small; a worker that commits while the stack is over HIGH_WATER pushes its
 * own directory back underneath the children it just found, so even a directory with millions of
 * subdirectories costs bounded memory. A worker commits at most KIDS_MAX new subdirectories at a
 * time (it stops mid-buffer and seeks back to the cookie), so the mark holds even while every
 * worker reads a wide directory at once: the frontier stays under HIGH_WATER + threads x KIDS_MAX.
 *
 * Shared walks (across MPI ranks) also have slices: a record for a run of a directory's entries
 * (from its cookie up to the cookie of its last entry; cookies ascend), cut off a directory being read
 * when other ranks ask for work and the frontier has none (split_off), so that one huge directory
 * on a slow filesystem is read by every rank. A shared walk reads small buffers while they are slow
 * to visit, so that a slice can be cut every few hundred entries.
 *
 * Snapshot ("MYRWALK1", see ser.h): elapsed ns, sessions, error count and --errors length, the
 * visitor's blob, then every record of the stack and every worker's current directory with the
 * cookie of its last committed batch (a slice with its end cookie). A post-order walk that resumes exactly (no
 * restart_on_resume) saves every open directory instead, parents before children: the frontier's
 * records and the directories that wait for them, each with its parent's number, its flags and
 * the visitor's per-directory state; a resume rebuilds that tree, so every directory still gets
 * its one dir_done, with its whole state.
 */
#include "engine/walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "io/dir.h"
#include "util/exclude.h"
#include "util/signals.h"
#include "util/util.h"

#define HIGH_WATER 1024          /* frontier records before workers go deeper first */
#define BUF_MAX (64 * 1024)      /* getdents buffer */
#define BUF_MIN 2048             /* fits the largest dirent */
#define BATCH_BYTES (1u << 20)   /* rough bound on a batch's uncommitted memory */
#define TICK_MS 10               /* how often the pool size is reconsidered */
#define KIDS_MAX 128             /* subdirectories a worker finds before it commits them */
#define HELD_MAX 8               /* directories a worker keeps open to open their children by name */
#define SHARE_NS 200000          /* a chunk's stats this slow (ns so far): idle workers are asked to help */
#define SLICE_BYTES 4096         /* the getdents buffer a slice of a directory is cut from (~120 short names) */
#define SLICE_SLOW_NS 5000000    /* a buffer visited faster than this: the directory is not sliced */
#define SLICE_ASKS_MAX 16        /* slices cut at once */

struct rec {
	uint64_t cookie;
	uint64_t serial;    /* this record's number in the walk (never 0) */
	uint64_t pserial;   /* its parent's, when found by this walk (0: opened by its path) */
	struct rec *parent; /* post-order walks: the directory to finish after this one */
	uint32_t pending;   /* post-order: this directory's reading plus its unfinished subdirectories */
	bool keep;          /* post-order: something under it stays */
	bool unread;        /* it could not be opened or read to the end */
	bool mount;         /* with xdev: a mount point, left alone */
	bool slice;         /* a slice of a directory (split_off): its entries from cookie up to end */
	bool nosplit;       /* its cookies are not in order: not sliced (this run) */
	uint64_t end;       /* slice: the cookie of its last entry, where the rest of the directory starts */
	uint64_t snap;      /* tree snapshots: the last one that saved it, its number there, and the */
	uint64_t front;     /* last one that found it on the frontier (to be read on) */
	uint32_t idx;
	uint32_t root;
	uint32_t relstart;
	uint32_t pathlen;
	char path[];
};

/*
 * One chunk's stats, shared out (one directory's entries are not one worker's job alone): on a
 * filesystem where a stat waits for a server or a disk, a worker that finds its chunk slow posts
 * it, and idle workers claim entries by an atomic index and stat them beside it. Only the stats
 * are shared: the owner still visits and commits every entry, in order, so output, checkpoints
 * and failures are as if it had done all of it. The share lives on the owner's stack; helpers
 * join and leave under the engine lock, and the owner takes it down and waits for them to leave.
 */
struct share {
	int fd;
	const struct walk_entry *ents;
	const bool *need;
	struct statx *stx;
	int *err;
	unsigned mask;
	size_t n;
	_Atomic size_t next; /* the next entry to claim */
	int users;           /* helpers inside (engine lock) */
	bool owner_waits;    /* the owner waits for them to leave (engine lock) */
	const struct rec *dir;
};

/* A directory a worker has read and still holds open, so that a child it takes next opens by
 * its name there (one lookup) rather than by its path from the operand (one per component). */
struct held {
	uint64_t serial;
	int fd;
};

struct worker {
	struct walk *w;
	pthread_t tid;
	struct held held[HELD_MAX]; /* oldest first */
	int nheld;
	struct rec *cur;
	struct rec *finishing; /* post-order: the directory its dir_done is on */
	const struct rec *helping; /* the directory whose stats it helps with (engine lock) */
	_Atomic uint64_t since; /* when it started its current entry or directory (the stuck report) */
	void *local;
	struct errbatch errs;
	struct rec **kids;
	size_t nkids, capkids;
	uint64_t pending_cookie;
	bool slice_done;       /* a slice's reading reached its end cookie */
	bool kid_dirs;         /* the directory being visited has had subdirectories to enter */
	size_t batch_bytes;
	char *buf;
	const struct linux_dirent64 **order;
	struct statx stx[WALK_CHUNK];
	struct walk_entry ents[WALK_CHUNK];
	bool need[WALK_CHUNK];
	int err[WALK_CHUNK];
	struct sbuf scratch;
};

struct walk {
	struct walk_config cfg;
	struct excludes excl; /* cfg's, compiled */
	/* With a throttle, the entries visited (and committed: output, progress) at a time: 0.1 s
	 * worth, so that output flows at the rate and a closed pipe is noticed, rather than a whole
	 * buffer's worth charged and printed at once (minutes at --rate 10). 0: no bound. */
	size_t rate_chunk;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct rec **stack;
	size_t nstack, capstack;
	int busy;
	int waiting;
	struct share *share; /* a chunk's stats open to idle workers (at most one at a time) */
	atomic_uint split_asks; /* shared: requests of other ranks the frontier had nothing for */
	bool stopping;
	atomic_bool cancelled; /* walk_cancel: no more directories are read */
	bool ended;            /* shared walks: walk_end was called */
	atomic_bool finished;
	int *rootfd;
	uint64_t *rootmnt; /* the mount each operand is on (its own, when it is a mount point); with
			    * xdev_by_dev, its device */
	struct worker *workers;
	int nstarted;          /* workers started (grows from min_threads to threads) */
	bool grow_refused;     /* the system refused a thread: go on with nstarted */
	bool joined;
	uint64_t tick_wall, tick_cpu;
	uint64_t start_ns;
	uint64_t end_ns; /* when the workers finished (0: still running) */
	uint64_t prev_ns;
	uint64_t sessions;
	_Atomic uint64_t serials; /* the last record number given */
	bool tree_snap;        /* post-order, resumed exactly: snapshots save the open directories */
	uint64_t snap_epoch;
	struct rec **ready;    /* resumed directories with nothing left under them: finished at start */
	size_t nready;
	struct sbuf snap_recs; /* scratch of walk_snapshot */
	struct rec **chain;    /* scratch of walk_snapshot: a record's unsaved ancestors */
	size_t capchain;
};

/* The visitor's per-directory state sits after the path, aligned. */
static size_t state_off(size_t pathlen) { return (sizeof(struct rec) + pathlen + 1 + 15) & ~(size_t)15; }
static void *rec_state(const struct walk *w, struct rec *r)
{
	return w->cfg.visitor.dir_state ? (char *)r + state_off(r->pathlen) : NULL;
}

static struct rec *rec_new(struct walk *w, uint32_t root, const char *path, size_t pathlen, size_t relstart,
			   uint64_t cookie)
{
	size_t ss = w->cfg.visitor.dir_state;
	struct rec *r = xmalloc(ss ? state_off(pathlen) + ss : sizeof(*r) + pathlen + 1);
	if (ss)
		memset((char *)r + state_off(pathlen), 0, ss);
	r->cookie = cookie;
	r->serial = atomic_fetch_add_explicit(&w->serials, 1, memory_order_relaxed) + 1;
	r->pserial = 0;
	r->snap = r->front = 0;
	r->parent = NULL;
	r->pending = 1;
	r->keep = false;
	r->unread = false;
	r->mount = false;
	r->slice = r->nosplit = false;
	r->end = 0;
	r->root = root;
	r->relstart = relstart;
	r->pathlen = pathlen;
	memcpy(r->path, path, pathlen);
	r->path[pathlen] = 0;
	return r;
}

static void stack_push(struct walk *w, struct rec *r)
{
	if (w->nstack == w->capstack) {
		w->capstack = w->capstack ? 2 * w->capstack : 1024;
		w->stack = xrealloc(w->stack, w->capstack * sizeof(*w->stack));
	}
	w->stack[w->nstack++] = r;
}

/* A missing entry or one replaced by a non-directory or a symlink vanished: not an error. */
static bool vanished(int err) { return err == ENOENT || err == ENOTDIR || err == ELOOP; }

static unsigned char mode_to_dtype(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG: return DT_REG;
	case S_IFDIR: return DT_DIR;
	case S_IFLNK: return DT_LNK;
	case S_IFIFO: return DT_FIFO;
	case S_IFSOCK: return DT_SOCK;
	case S_IFBLK: return DT_BLK;
	case S_IFCHR: return DT_CHR;
	}
	return DT_UNKNOWN;
}

void walk_path(struct sbuf *b, const struct walk_dir *d, const struct walk_entry *e)
{
	if (d) {
		sbuf_reserve(b, d->pathlen + e->namelen + 2);
		memcpy(b->data + b->len, d->path, d->pathlen);
		b->len += d->pathlen;
		if (d->pathlen && d->path[d->pathlen - 1] != '/')
			b->data[b->len++] = '/';
	}
	sbuf_add(b, e->name, e->namelen);
}

/* The buffer size for a directory: smaller for long paths, so a batch's memory stays bounded. */
static size_t buf_size_for(size_t pathlen)
{
	size_t n = (size_t)BATCH_BYTES * 24 / (pathlen + 256);
	if (n > BUF_MAX)
		n = BUF_MAX;
	if (n < BUF_MIN)
		n = BUF_MIN;
	return n;
}

/* A record for the frontier, committed with the worker's next batch. */
static void push_kid(struct worker *wk, struct rec *r)
{
	if (wk->nkids == wk->capkids) {
		wk->capkids = wk->capkids ? 2 * wk->capkids : 64;
		wk->kids = xrealloc(wk->kids, wk->capkids * sizeof(*wk->kids));
	}
	wk->kids[wk->nkids++] = r;
}

static void add_kid(struct worker *wk, const struct rec *parent, const struct walk_entry *e)
{
	struct sbuf *p = &wk->scratch;
	sbuf_clear(p);
	struct walk_dir d = {.path = parent->path, .pathlen = parent->pathlen, .fd = -1, .root = parent->root};
	walk_path(p, &d, e);
	size_t relstart = parent->relstart;
	if (parent->relstart == parent->pathlen) /* parent is an operand */
		relstart = p->len - e->namelen;
	struct rec *kid = rec_new(wk->w, parent->root, p->data, p->len, relstart, 0);
	kid->pserial = parent->serial;
	wk->kid_dirs = true;
	if (wk->w->cfg.visitor.dir_init)
		wk->w->cfg.visitor.dir_init(wk->w->cfg.visitor.ctx, rec_state(wk->w, kid), e);
	push_kid(wk, kid);
}

/* Post-order: finish r (wk->finishing already) and every ancestor it was the last to wait for,
 * deepest first. A directory whose removal failed (dir_done returns true) keeps its parents, as a
 * failure under it would. What its dir_done did is committed, its state folded into its parent's
 * and the directory released in one step under the lock: a snapshot has it wholly before or after. */
static void finish_chain(struct worker *wk, struct rec *r)
{
	struct walk *w = wk->w;
	while (r) {
		struct walk_dir d = {r->path,	    r->pathlen, -1,	  r->root,	    w->rootfd[r->root],
				     r->relstart, r->unread,  r->mount, rec_state(w, r)};
		atomic_store_explicit(&wk->since, coarse_ns(), memory_order_relaxed);
		bool stays = w->cfg.visitor.dir_done(w->cfg.visitor.ctx, wk->local, &d, r->keep, &wk->errs);
		pthread_mutex_lock(&w->lock);
		while (w->stopping) /* the final snapshot has this directory: change nothing */
			pthread_cond_wait(&w->cond, &w->lock);
		struct rec *p = r->parent, *next = NULL;
		if (p && w->cfg.visitor.dir_fold)
			w->cfg.visitor.dir_fold(w->cfg.visitor.ctx, rec_state(w, p), &d);
		w->cfg.visitor.commit(w->cfg.visitor.ctx, wk->local);
		errlog_commit(w->cfg.errlog, &wk->errs);
		if (p) {
			p->keep |= r->keep || stays;
			if (--p->pending == 0)
				next = p;
		}
		wk->finishing = next;
		pthread_mutex_unlock(&w->lock);
		free(r);
		r = next;
	}
}

/* The frontier is empty and no worker is busy (lock held): the walk is finished, or, shared, idle
 * until other ranks send work or the job ends (the main thread is woken to ask for some). */
static void ran_dry(struct walk *w)
{
	if (!w->cfg.shared) {
		atomic_store(&w->finished, true);
		pthread_cond_broadcast(&w->cond);
	}
	sig_wake();
}

/*
 * Fold the worker's batch into the totals. With done, the directory is finished; otherwise its
 * cookie advances, and when the frontier is over the high-water mark the worker parks it
 * (returns true: the caller closes it and takes other work).
 */
static bool commit(struct worker *wk, struct rec *r, bool done)
{
	struct walk *w = wk->w;
	bool post = w->cfg.visitor.dir_done != NULL;
	struct rec *finished = NULL;
	pthread_mutex_lock(&w->lock);
	while (w->stopping) /* the final snapshot is taken: change nothing, wait for exit */
		pthread_cond_wait(&w->cond, &w->lock);
	w->cfg.visitor.commit(w->cfg.visitor.ctx, wk->local);
	errlog_commit(w->cfg.errlog, &wk->errs);
	atomic_store_explicit(&wk->since, coarse_ns(), memory_order_relaxed);
	bool park = false;
	if (!done) {
		r->cookie = wk->pending_cookie;
		park = w->nstack + wk->nkids > HIGH_WATER;
	}
	if (atomic_load_explicit(&w->cancelled, memory_order_relaxed)) {
		for (size_t i = 0; i < wk->nkids; i++)
			free(wk->kids[i]);
		wk->nkids = 0;
		park = false;
	}
	if (park)
		stack_push(w, r); /* under its children: they are taken first */
	for (size_t i = wk->nkids; i-- > 0;) {
		if (post) {
			wk->kids[i]->parent = r;
			r->pending++;
		}
		stack_push(w, wk->kids[i]);
	}
	if (done || park) {
		wk->cur = NULL;
		if (post && done && --r->pending == 0)
			wk->finishing = finished = r; /* the worker stays busy until its chain is finished */
		else
			w->busy--;
	}
	bool more = wk->nkids || park;
	wk->nkids = 0;
	wk->batch_bytes = 0;
	if (w->busy == 0 && w->nstack == 0) {
		ran_dry(w);
	} else if (more && w->waiting) {
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	if (finished) {
		finish_chain(wk, finished);
		pthread_mutex_lock(&w->lock);
		w->busy--;
		if (w->busy == 0 && w->nstack == 0)
			ran_dry(w);
		pthread_mutex_unlock(&w->lock);
	} else if (done && !post) {
		free(r);
	}
	return park;
}

/* Stat entry i of share s for worker wk (owner or helper): its statx and errno (0: none). */
static void share_stat(struct worker *wk, struct share *s, size_t i)
{
	atomic_store_explicit(&wk->since, coarse_ns(), memory_order_relaxed);
	s->err[i] = statx(s->fd, s->ents[i].name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, s->mask, &s->stx[i]) ? errno : 0;
}

/* Stat what is left to claim of share s (no lock held). */
static void share_work(struct worker *wk, struct share *s)
{
	size_t i;
	while ((i = atomic_fetch_add_explicit(&s->next, 1, memory_order_relaxed)) < s->n)
		if (s->need[i])
			share_stat(wk, s, i);
}

/* Is there a posted share with entries left to claim (lock held)? */
static bool share_open(const struct walk *w)
{
	return w->share && atomic_load_explicit(&w->share->next, memory_order_relaxed) < w->share->n;
}

/* An idle worker helps with the posted share (lock held; released while it works). */
static void share_help(struct worker *wk)
{
	struct walk *w = wk->w;
	struct share *s = w->share;
	s->users++;
	wk->helping = s->dir;
	atomic_store_explicit(&wk->since, coarse_ns(), memory_order_relaxed); /* not the wait before */
	pthread_mutex_unlock(&w->lock);
	share_work(wk, s);
	pthread_mutex_lock(&w->lock);
	wk->helping = NULL;
	if (--s->users == 0 && s->owner_waits)
		pthread_cond_broadcast(&w->cond);
}

/*
 * Stat the entries of the chunk marked in need, into stx and err (0 or the errno). The owner
 * works alone until the chunk proves slow (SHARE_NS, looked at after 1, 2, 4 ... stats) while
 * workers idle; it then posts the chunk for them and, once nothing is left to claim, waits until
 * every helper has left. On a warm cache a chunk takes a few microseconds and is never shared.
 */
static void stat_chunk(struct worker *wk, const struct walk_dir *d, const struct rec *r, size_t n, unsigned mask)
{
	struct walk *w = wk->w;
	struct share s = {.fd = d->fd, .ents = wk->ents, .need = wk->need, .stx = wk->stx, .err = wk->err,
			  .mask = mask, .n = n, .dir = r};
	atomic_init(&s.next, 0);
	bool posted = false, slow = false;
	uint64_t t0 = 0;
	size_t i, k = 0;
	while ((i = atomic_fetch_add_explicit(&s.next, 1, memory_order_relaxed)) < n) {
		if (!wk->need[i])
			continue;
		if (!k)
			t0 = now_ns();
		share_stat(wk, &s, i);
		k++;
		if (!slow && !(k & (k - 1)))
			slow = now_ns() - t0 > SHARE_NS;
		/* Once slow, every stat may post: another owner's share may have gone since. */
		if (slow && !posted && atomic_load_explicit(&s.next, memory_order_relaxed) < n &&
		    __atomic_load_n(&w->waiting, __ATOMIC_RELAXED) > 0) {
			pthread_mutex_lock(&w->lock);
			if (!w->share && !w->stopping) {
				w->share = &s;
				posted = true;
				pthread_cond_broadcast(&w->cond);
			}
			pthread_mutex_unlock(&w->lock);
		}
	}
	if (!posted)
		return;
	pthread_mutex_lock(&w->lock);
	w->share = NULL;
	s.owner_waits = true;
	atomic_store_explicit(&wk->since, coarse_ns(), memory_order_relaxed); /* its helpers' stats are the ones held */
	while (s.users)
		pthread_cond_wait(&w->cond, &w->lock);
	pthread_mutex_unlock(&w->lock);
}

static struct rec *take(struct worker *wk)
{
	struct walk *w = wk->w;
	pthread_mutex_lock(&w->lock);
	while (!w->stopping && w->nstack == 0 && (w->busy > 0 || (w->cfg.shared && !w->ended))) {
		if (share_open(w)) {
			share_help(wk);
			continue;
		}
		__atomic_fetch_add(&w->waiting, 1, __ATOMIC_RELAXED); /* read unlocked by stat_chunk */
		pthread_cond_wait(&w->cond, &w->lock);
		__atomic_fetch_sub(&w->waiting, 1, __ATOMIC_RELAXED);
	}
	struct rec *r = NULL;
	if (!w->stopping && w->nstack && !atomic_load(&w->cancelled)) {
		r = w->stack[--w->nstack];
		wk->cur = r;
		atomic_store_explicit(&wk->since, coarse_ns(), memory_order_relaxed);
		w->busy++;
	}
	pthread_mutex_unlock(&w->lock);
	return r;
}

static int cmp_ino(const void *a, const void *b)
{
	uint64_t x = (*(const struct linux_dirent64 *const *)a)->d_ino;
	uint64_t y = (*(const struct linux_dirent64 *const *)b)->d_ino;
	return x < y ? -1 : x > y;
}

/*
 * Visit one getdents buffer. Entries are statted in inode order when every entry needs it. Returns
 * false when it stopped early, after the entry that made KIDS_MAX possible subdirectories: the
 * caller commits them and reads on from the cookie. Without that bound, workers that each read a
 * directory of thousands of subdirectories at once (cold, a tree of 10^8 files) held thousands of
 * records each before the frontier's high-water mark could park anyone.
 */
static bool visit_buffer(struct worker *wk, struct rec *r, const struct walk_dir *d, ssize_t n)
{
	struct walk *w = wk->w;
	size_t count = 0, dirs = 0;
	bool whole = true;
	for (ssize_t off = 0; off < n;) {
		if (wk->slice_done)
			break; /* the rest is another's */
		const struct linux_dirent64 *de = (const void *)(wk->buf + off);
		off += de->d_reclen;
		wk->pending_cookie = de->d_off;
		/* By position, not by count: entries created or removed in the slice's range meanwhile
		 * move no other entry into or out of it (split_off checked its cookies ascend). */
		if (r->slice && (uint64_t)de->d_off >= r->end)
			wk->slice_done = true;
		if (dir_is_dot(de->d_name))
			continue;
		if (w->cfg.nexcludes && excludes_match(&w->excl, d->fd, de->d_name, de->d_type)) {
			r->keep = true;
			continue;
		}
		wk->order[count++] = de;
		if ((de->d_type == DT_DIR || de->d_type == DT_UNKNOWN) && ++dirs == KIDS_MAX && off < n) {
			whole = false;
			break;
		}
		if (count == w->rate_chunk && off < n) { /* 0 without --rate: never */
			whole = false;
			break;
		}
	}
	if (w->cfg.throttle)
		throttle_take(w->cfg.throttle, count);
	if ((w->cfg.stat_mask || w->cfg.inode_order) && count > 1)
		qsort(wk->order, count, sizeof(*wk->order), cmp_ino);
	/* A chunk at a time: its entries statted (shared out when slow), shown to the visitor's
	 * prepare, then visited. */
	unsigned mask = w->cfg.stat_mask | STATX_TYPE;
	for (size_t base = 0; base < count; base += WALK_CHUNK) {
		size_t end = count - base > WALK_CHUNK ? base + WALK_CHUNK : count, m = 0, nstat = 0;
		bool unstatted[WALK_CHUNK];
		for (size_t i = base; i < end; i++) {
			const struct linux_dirent64 *de = wk->order[i];
			struct walk_entry *e = &wk->ents[i - base];
			*e = (struct walk_entry){de->d_name, strlen(de->d_name), de->d_type, de->d_ino, NULL};
			wk->need[i - base] = w->cfg.stat_mask || e->type == DT_UNKNOWN;
			nstat += wk->need[i - base];
		}
		if (nstat)
			stat_chunk(wk, d, r, end - base, mask);
		for (size_t i = 0; i < end - base; i++) {
			struct walk_entry *e = &wk->ents[m];
			if (m != i)
				*e = wk->ents[i];
			unstatted[m] = false;
			if (wk->need[i]) {
				int err = wk->err[i];
				if (err) {
					if (vanished(err))
						continue; /* gone since it was read */
					/* Its name was read, only its metadata failed: reported, and still
					 * visited (listed, counted), without stx, never entered. */
					sbuf_clear(&wk->scratch);
					walk_path(&wk->scratch, d, e);
					errlog_report(&wk->errs, wk->scratch.data, wk->scratch.len, "stat", err);
					r->keep = true;
					unstatted[m++] = true;
					continue;
				}
				e->type = mode_to_dtype(wk->stx[i].stx_mode);
				e->stx = &wk->stx[i];
			}
			m++;
		}
		if (w->cfg.visitor.prepare && m)
			w->cfg.visitor.prepare(w->cfg.visitor.ctx, wk->local, d, wk->ents, m);
		for (size_t i = 0; i < m; i++) {
			const struct walk_entry *e = &wk->ents[i];
			atomic_store_explicit(&wk->since, coarse_ns(), memory_order_relaxed);
			if (w->cfg.visitor.entry(w->cfg.visitor.ctx, wk->local, d, e, &wk->errs))
				r->keep = true;
			else if (e->type == DT_DIR && !unstatted[i] &&
				 (!w->cfg.visitor.enter || w->cfg.visitor.enter(w->cfg.visitor.ctx, wk->local, d, e)))
				add_kid(wk, r, e);
		}
	}
	wk->batch_bytes += count * (d->pathlen + 256);
	return whole;
}

/* Close the held directories from index i on. */
static void held_drop(struct worker *wk, int i)
{
	while (wk->nheld > i)
		close(wk->held[--wk->nheld].fd);
}

/* Keep fd, the directory of record serial, open (the oldest held one makes room). */
static void held_push(struct worker *wk, uint64_t serial, int fd)
{
	if (wk->nheld == HELD_MAX) {
		close(wk->held[0].fd);
		memmove(wk->held, wk->held + 1, (HELD_MAX - 1) * sizeof(*wk->held));
		wk->nheld--;
	}
	wk->held[wk->nheld++] = (struct held){serial, fd};
}

/*
 * Open r's directory: by its name in its parent when this worker still holds the parent (the
 * directories it held deeper than that parent are done with: closed), else by its path below the
 * operand. Either way no symlink is followed. A depth-first walk of a tree of depth D costs D
 * lookups this way rather than D^2/2.
 */
static int open_rec(struct worker *wk, const struct rec *r)
{
	const char *rel = r->path + r->relstart;
	size_t len = r->pathlen - r->relstart;
	for (int i = wk->nheld; r->pserial && i-- > 0;) {
		if (wk->held[i].serial != r->pserial)
			continue;
		held_drop(wk, i + 1);
		const char *name = memrchr(rel, '/', len);
		name = name ? name + 1 : rel;
		return dir_open_at(wk->held[i].fd, name, (size_t)(rel + len - name));
	}
	return dir_open_at(wk->w->rootfd[r->root], rel, len);
}

/* Done reading fd, r's directory: held for r's children, or closed (open_by_path). */
static void release_dir(struct worker *wk, uint64_t serial, int fd)
{
	if (wk->w->cfg.open_by_path)
		close(fd);
	else
		held_push(wk, serial, fd);
}

/*
 * Other ranks asked for work and this rank had none to give but the directories its workers are
 * reading (walk_give counted the asks): up to k next getdents buffers of r, small ones, become
 * slices, records of their own (r's path, the cookie a slice starts at and its last entry's) that
 * any rank can take; r reads on after them. A slice is its directory's entries between two
 * positions, so its cookies must ascend (they do on ext4, XFS, btrfs, tmpfs, FUSE over those):
 * where they do not, r is read on whole and not sliced again. The slices go onto the frontier in
 * the same commit that moves r's cookie past them, so a snapshot has each entry in exactly one
 * record. One huge directory is then not one rank's job. Returns 1 when slices were made, 0 when
 * none were (r at its end, its read failed for the caller's read to meet, or r not sliceable),
 * -1 when the commit parked r, -2 when the seek back to where the slices end failed (errno).
 */
static int split_off(struct worker *wk, struct rec *r, int fd, unsigned k)
{
	struct walk *w = wk->w;
	unsigned made = 0;
	while (made < k) {
		ssize_t n = dir_read(fd, wk->buf, SLICE_BYTES);
		if (n <= 0)
			break;
		uint64_t end = wk->pending_cookie;
		for (ssize_t off = 0; off < n;) {
			const struct linux_dirent64 *de = (const void *)(wk->buf + off);
			off += de->d_reclen;
			if ((uint64_t)de->d_off <= end) {
				r->nosplit = true;
				break;
			}
			end = de->d_off;
		}
		if (r->nosplit) {
			if (lseek(fd, (off_t)wk->pending_cookie, SEEK_SET) < 0)
				return -2;
			break;
		}
		struct rec *s = rec_new(w, r->root, r->path, r->pathlen, r->relstart, wk->pending_cookie);
		s->slice = true;
		s->end = end;
		push_kid(wk, s);
		wk->pending_cookie = end;
		made++;
	}
	if (made < k) /* the asks not met go to another directory */
		atomic_fetch_add_explicit(&w->split_asks, k - made, memory_order_relaxed);
	if (!made)
		return 0;
	return commit(wk, r, false) ? -1 : 1;
}

/* What xdev compares with the operand's: the mount, or the device (xdev_by_dev). */
static uint64_t mount_key(const struct walk *w, const struct fs_id *id)
{
	return w->cfg.xdev_by_dev ? id->dev : id->mnt;
}

static void visit_dir(struct worker *wk, struct rec *r)
{
	struct walk *w = wk->w;
	int fd = open_rec(wk, r);
	const char *op = "open";
	if (fd < 0)
		goto fail;
	/* The mount, not st_dev (unless xdev_by_dev): a bind mount of a directory of the same
	 * filesystem is a mount point too, and what is under it is not the operand's to walk into (nor
	 * to remove). The one statx
	 * on the open directory (fdinfo before Linux 5.8). Not known: not walked into, reported. */
	struct fs_id id;
	if (w->cfg.xdev && r->relstart != r->pathlen) {
		op = "stat";
		if (fs_identity(fd, "", &id) != 0)
			goto fail;
		if (mount_key(w, &id) != w->rootmnt[r->root]) {
			r->mount = true;
			if (w->cfg.report_mounts) {
				errlog_problem(&wk->errs, r->path, r->pathlen, "mount point",
					       "another filesystem or a bind mount: left alone");
				r->keep = true;
			}
			close(fd);
			commit(wk, r, true);
			return;
		}
	}
	op = "seek";
	if (r->cookie && lseek(fd, (off_t)r->cookie, SEEK_SET) < 0)
		goto fail;
	wk->pending_cookie = r->cookie;
	wk->slice_done = false;
	wk->kid_dirs = false;
	struct walk_dir d = {r->path, r->pathlen, fd, r->root, w->rootfd[r->root], r->relstart, false, false,
			     rec_state(w, r)};
	/* A shared walk reads small buffers while they are slow to visit, so that a huge directory on a
	 * slow filesystem can be sliced for other ranks every few hundred entries (split_off). */
	size_t full = buf_size_for(r->pathlen), size = w->cfg.shared && SLICE_BYTES < full ? SLICE_BYTES : full;
	for (;;) {
		unsigned asks = 0;
		if (w->cfg.shared && !r->slice && !r->nosplit &&
		    atomic_load_explicit(&w->split_asks, memory_order_relaxed))
			asks = atomic_exchange_explicit(&w->split_asks, 0, memory_order_relaxed);
		if (asks) {
			uint64_t serial = r->serial; /* r is the frontier's again once parked */
			int s = split_off(wk, r, fd, asks);
			if (s == -2) {
				op = "seek";
				goto fail;
			}
			if (s < 0) {
				release_dir(wk, serial, fd);
				return; /* parked */
			}
			if (s > 0)
				continue;
		}
		uint64_t t0 = size < full && !r->slice ? now_ns() : 0;
		ssize_t n = dir_read(fd, wk->buf, size);
		if (n <= 0) {
			if (n < 0 && !vanished(errno)) {
				errlog_report(&wk->errs, r->path, r->pathlen, "readdir", errno);
				r->keep = r->unread = true;
			}
			break;
		}
		bool whole = visit_buffer(wk, r, &d, n);
		if (t0 && now_ns() - t0 < SLICE_SLOW_NS)
			size = full; /* fast: no slicing will be needed */
		if (atomic_load_explicit(&w->cancelled, memory_order_relaxed))
			break;
		if (wk->slice_done)
			break;
		uint64_t serial = r->serial; /* r is the frontier's again once parked */
		if ((!whole || wk->batch_bytes >= BATCH_BYTES) && commit(wk, r, false)) {
			release_dir(wk, serial, fd);
			return;
		}
		op = "seek";
		if (!whole && lseek(fd, (off_t)r->cookie, SEEK_SET) < 0)
			goto fail;
	}
	/* Read to its end: held only if children will be opened from it. A leaf is closed now, on
	 * this CPU, while what the filesystem keeps for an open directory (ext4's hash-order tree of
	 * its last entries) is still in cache, rather than when a later directory pushes it out. */
	if (wk->kid_dirs)
		release_dir(wk, r->serial, fd);
	else
		close(fd);
	commit(wk, r, true);
	return;
fail:
	if (!vanished(errno)) {
		errlog_report(&wk->errs, r->path, r->pathlen, op, errno);
		r->keep = r->unread = true;
	}
	if (fd >= 0)
		close(fd);
	commit(wk, r, true);
}

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	struct rec *r;
	while ((r = take(wk)))
		visit_dir(wk, r);
	held_drop(wk, 0);
	return NULL;
}

/* Visit the operands themselves (a fresh start). */
static void visit_roots(struct walk *w)
{
	struct worker *wk = &w->workers[0];
	bool *enter = xcalloc(w->cfg.nroots, sizeof(*enter));
	struct rec **recs = xcalloc(w->cfg.nroots, sizeof(*recs));
	for (size_t i = 0; i < w->cfg.nroots; i++) {
		const char *p = w->cfg.roots[i];
		size_t len = strlen(p);
		struct walk_entry e = {p, len, DT_DIR, 0, NULL};
		if (statx(w->rootfd[i], "", AT_EMPTY_PATH, w->cfg.stat_mask | STATX_TYPE | STATX_INO, &wk->stx[0]) == 0) {
			e.ino = wk->stx[0].stx_ino;
			e.stx = w->cfg.stat_mask ? &wk->stx[0] : NULL;
		} else if (w->cfg.stat_mask) {
			errlog_report(&wk->errs, p, e.namelen, "stat", errno);
			e.stx = NULL;
		}
		w->cfg.visitor.entry(w->cfg.visitor.ctx, wk->local, NULL, &e, &wk->errs);
		enter[i] = !w->cfg.visitor.enter || w->cfg.visitor.enter(w->cfg.visitor.ctx, wk->local, NULL, &e);
		recs[i] = rec_new(w, i, p, len, len, 0);
		if (w->cfg.visitor.dir_init)
			w->cfg.visitor.dir_init(w->cfg.visitor.ctx, rec_state(w, recs[i]), &e);
	}
	w->cfg.visitor.commit(w->cfg.visitor.ctx, wk->local);
	errlog_commit(w->cfg.errlog, &wk->errs);
	for (size_t i = w->cfg.nroots; i-- > 0;) {
		if (enter[i] && !atomic_load(&w->cancelled))
			stack_push(w, recs[i]);
		else
			free(recs[i]);
	}
	free(recs);
	free(enter);
}

static bool rec_valid(const struct walk *w, uint64_t root, const char *p, size_t len, uint64_t relstart);

/* A frontier record: its operand's number, cookie, relstart and path; a slice's number carries
 * REC_SLICE and its end cookie follows (records without it read as before). */
#define REC_SLICE (1ull << 63)
static void save_rec(struct sbuf *b, const struct rec *r)
{
	ser_u64(b, r->root | (r->slice ? REC_SLICE : 0));
	ser_u64(b, r->cookie);
	ser_u64(b, r->relstart);
	ser_bytes(b, r->path, r->pathlen);
	if (r->slice)
		ser_u64(b, r->end);
}

/* Read a frontier record save_rec wrote into r (path pointing into d): false when malformed. */
struct rec_in {
	uint64_t root, cookie, relstart, end;
	bool slice;
	const char *path;
	size_t len;
};
static bool read_rec(const struct walk *w, struct deser *d, struct rec_in *r)
{
	r->root = deser_u64(d);
	r->cookie = deser_u64(d);
	r->relstart = deser_u64(d);
	r->path = deser_bytes(d, &r->len);
	r->slice = r->root & REC_SLICE;
	r->root &= ~REC_SLICE;
	r->end = r->slice ? deser_u64(d) : 0;
	/* a slice ends after its start, and a post-order walk has none (see walk_give) */
	return !d->bad && rec_valid(w, r->root, r->path, r->len, r->relstart) &&
	       (!r->slice || (r->end > r->cookie && !w->cfg.visitor.dir_done));
}

/* A new record from what read_rec read. */
static struct rec *rec_from(struct walk *w, const struct rec_in *in)
{
	struct rec *r = rec_new(w, (uint32_t)in->root, in->path, in->len, in->relstart, in->cookie);
	r->slice = in->slice;
	r->end = in->end;
	return r;
}

enum { REC_FRONTIER = 1, REC_KEEP = 2, REC_UNREAD = 4, REC_MOUNT = 8 };

/* Tree snapshots: save r after those of its ancestors not saved yet, each with its parent's number
 * (0: an operand), flags (the frontier's: still to be read from its cookie) and state. */
static void save_open(struct walk *w, struct rec *r, size_t *n)
{
	size_t len = 0;
	for (struct rec *a = r; a && a->snap != w->snap_epoch; a = a->parent) {
		if (len == w->capchain) {
			w->capchain = w->capchain ? 2 * w->capchain : 64;
			w->chain = xrealloc(w->chain, w->capchain * sizeof(*w->chain));
		}
		w->chain[len++] = a;
	}
	while (len-- > 0) {
		struct rec *a = w->chain[len];
		struct sbuf *b = &w->snap_recs;
		a->snap = w->snap_epoch;
		a->idx = (uint32_t)(*n)++;
		ser_u64(b, a->parent ? a->parent->idx + 1 : 0);
		ser_u64(b, (a->front == w->snap_epoch ? REC_FRONTIER : 0) | (a->keep ? REC_KEEP : 0) |
			       (a->unread ? REC_UNREAD : 0) | (a->mount ? REC_MOUNT : 0));
		save_rec(b, a);
		ser_bytes(b, rec_state(w, a), w->cfg.visitor.dir_state);
	}
}

static void save_tree(struct walk *w, struct sbuf *b)
{
	size_t n = 0;
	w->snap_epoch++;
	sbuf_clear(&w->snap_recs);
	/* A parked directory can be above some of its descendants on the stack: mark first. */
	for (size_t i = 0; i < w->nstack; i++)
		w->stack[i]->front = w->snap_epoch;
	for (int i = 0; i < w->cfg.threads; i++)
		if (w->workers[i].cur)
			w->workers[i].cur->front = w->snap_epoch;
	for (size_t i = 0; i < w->nready; i++)
		save_open(w, w->ready[i], &n);
	for (size_t i = 0; i < w->nstack; i++)
		save_open(w, w->stack[i], &n);
	for (int i = 0; i < w->cfg.threads; i++) {
		if (w->workers[i].cur)
			save_open(w, w->workers[i].cur, &n);
		if (w->workers[i].finishing)
			save_open(w, w->workers[i].finishing, &n);
	}
	ser_u64(b, n);
	sbuf_add(b, w->snap_recs.data, w->snap_recs.len);
}

static void snapshot_locked(struct walk *w, struct sbuf *b);

static void walk_snapshot(void *ctx, struct sbuf *b, bool stop)
{
	struct walk *w = ctx;
	pthread_mutex_lock(&w->lock);
	if (stop)
		w->stopping = true;
	snapshot_locked(w, b);
	pthread_mutex_unlock(&w->lock);
}

void walk_snapshot_then(struct walk *w, struct sbuf *b, void (*first)(void *arg), void *arg)
{
	pthread_mutex_lock(&w->lock);
	if (first)
		first(arg);
	snapshot_locked(w, b);
	pthread_mutex_unlock(&w->lock);
}

/* The snapshot (engine lock held). */
static void snapshot_locked(struct walk *w, struct sbuf *b)
{
	ser_begin(b, "MYRWALK1");
	ser_u64(b, w->prev_ns + (now_ns() - w->start_ns));
	ser_u64(b, w->sessions);
	ser_u64(b, w->cfg.errlog->count);
	ser_u64(b, w->cfg.errlog->have_file ? w->cfg.errlog->file.len : 0);
	struct sbuf v = {0};
	w->cfg.visitor.save(w->cfg.visitor.ctx, &v);
	ser_bytes(b, v.data, v.len);
	sbuf_free(&v);
	if (w->tree_snap) {
		save_tree(w, b);
		ser_end(b);
		return;
	}
	size_t n = w->nstack;
	for (int i = 0; i < w->cfg.threads; i++)
		n += w->workers[i].cur != NULL;
	ser_u64(b, n);
	/* Bottom of the stack first, current directories last: a resume continues them first. */
	for (size_t i = 0; i < w->nstack; i++)
		save_rec(b, w->stack[i]);
	for (int i = 0; i < w->cfg.threads; i++)
		if (w->workers[i].cur)
			save_rec(b, w->workers[i].cur);
	ser_end(b);
}

/*
 * Is this a frontier record the walk could have saved? Its path is the operand's, then (below the
 * operand) a separator and a relative path of real names, which is opened below the operand's fd:
 * an empty, "." or ".." component would make a resume read another directory than the one saved.
 */
static bool rec_valid(const struct walk *w, uint64_t root, const char *p, size_t len, uint64_t relstart)
{
	if (root >= w->cfg.nroots || len > UINT32_MAX || memchr(p, 0, len))
		return false;
	const char *op = w->cfg.roots[root];
	size_t oplen = strlen(op);
	if (len < oplen || memcmp(p, op, oplen) != 0)
		return false;
	if (len == oplen)
		return relstart == len; /* the operand itself */
	size_t sep = oplen && op[oplen - 1] == '/' ? 0 : 1;
	if (relstart != oplen + sep || (sep && p[oplen] != '/') || relstart >= len)
		return false;
	for (size_t i = relstart; i < len;) {
		const char *slash = memchr(p + i, '/', len - i);
		size_t n = (slash ? (size_t)(slash - p) : len) - i;
		if (n == 0 || (n == 1 && p[i] == '.') || (n == 2 && p[i] == '.' && p[i + 1] == '.'))
			return false;
		i += n + 1;
		if (slash && i == len)
			return false; /* a trailing '/' */
	}
	return true;
}

/* Tree snapshots: rebuild the open directories. The frontier's go on the stack; one with nothing
 * left under it (its dir_done was under way) waits in ready for walk_start. */
static bool load_tree(struct walk *w, struct deser *d)
{
	uint64_t n = deser_u64(d);
	struct rec **all = NULL;
	bool *front = NULL, ok = true;
	size_t nall = 0, cap = 0;
	for (uint64_t i = 0; i < n && !d->bad; i++) {
		uint64_t pidx = deser_u64(d), flags = deser_u64(d);
		uint64_t root = deser_u64(d), cookie = deser_u64(d), relstart = deser_u64(d);
		size_t len, slen;
		const char *p = deser_bytes(d, &len);
		const void *st = deser_bytes(d, &slen);
		struct rec *parent = !d->bad && pidx && pidx <= nall ? all[pidx - 1] : NULL;
		ok = !d->bad && pidx <= nall && flags <= 15 && slen == w->cfg.visitor.dir_state &&
		     rec_valid(w, root, p, len, relstart);
		/* An operand, or a directory below its parent's path. */
		if (ok && !parent)
			ok = relstart == len;
		else if (ok)
			ok = parent->root == root && len > parent->pathlen + 1 &&
			     !memcmp(p, parent->path, parent->pathlen);
		if (!ok)
			break;
		struct rec *r = rec_new(w, root, p, len, relstart, cookie);
		if (slen)
			memcpy(rec_state(w, r), st, slen);
		r->pending = flags & REC_FRONTIER ? 1 : 0;
		r->keep = flags & REC_KEEP;
		r->unread = flags & REC_UNREAD;
		r->mount = flags & REC_MOUNT;
		r->parent = parent;
		if (parent)
			parent->pending++;
		if (nall == cap) {
			cap = cap ? 2 * cap : 64;
			all = xrealloc(all, cap * sizeof(*all));
			front = xrealloc(front, cap * sizeof(*front));
		}
		front[nall] = flags & REC_FRONTIER;
		all[nall++] = r;
	}
	for (size_t i = 0; i < nall; i++) {
		if (!ok || d->bad)
			free(all[i]);
		else if (front[i])
			stack_push(w, all[i]);
		else if (all[i]->pending == 0) {
			w->ready = xrealloc(w->ready, (w->nready + 1) * sizeof(*w->ready));
			w->ready[w->nready++] = all[i];
		}
	}
	free(all);
	free(front);
	return ok && !d->bad;
}

/*
 * Restore the walk from a snapshot. Everything is decoded and checked before anything changes
 * outside memory (the --errors file is truncated back only then), so an unusable snapshot leaves
 * every file as it was.
 */
static bool load_snapshot(struct walk *w, const struct sbuf *snap)
{
	struct deser d;
	const char *why = "malformed";
	if (!deser_begin(&d, snap->data, snap->len, "MYRWALK1", &why))
		goto bad;
	w->prev_ns = deser_u64(&d);
	w->sessions = deser_u64(&d) + 1;
	uint64_t errs = deser_u64(&d);
	uint64_t errlen = deser_u64(&d);
	size_t vlen;
	const void *vp = deser_bytes(&d, &vlen);
	struct deser vd = {.p = vp, .len = vlen, .pos = 0, .bad = d.bad};
	if (d.bad || !w->cfg.visitor.load(w->cfg.visitor.ctx, &vd) || !deser_done(&vd)) {
		why = "the command's counters are malformed";
		goto bad;
	}
	if (w->tree_snap && !load_tree(w, &d)) {
		why = "an open directory's record is malformed";
		goto bad;
	}
	uint64_t n = w->tree_snap ? 0 : deser_u64(&d);
	for (uint64_t i = 0; i < n && !d.bad; i++) {
		struct rec_in in;
		bool valid = read_rec(w, &d, &in);
		/* Work that consumed the tree finds what is left by walking again (its operands may be
		 * gone by now): its records are skipped. */
		if (w->cfg.restart_on_resume && !d.bad)
			continue;
		if (!valid) {
			why = "a frontier record is malformed";
			goto bad;
		}
		stack_push(w, rec_from(w, &in));
	}
	if (!deser_done(&d))
		goto bad;
	/* Reopen the --errors file at the recorded length. A walk that starts over meets every entry
	 * that failed before again and reports it again if it still fails: its failures start afresh,
	 * so each is counted and logged once. */
	bool again = w->cfg.restart_on_resume;
	if (errlog_open(w->cfg.errlog, w->cfg.errlog->path, !again, again ? 0 : errlen, again ? 0 : errs) != 0)
		return false;
	if (w->cfg.restart_on_resume && !w->cfg.shared_empty) /* a rank but 0 gets its work from the others */
		visit_roots(w);
	return true;
bad:
	warnx_("%s: cannot be used: %s; remove the state directory or use --no-state",
	       w->cfg.snapshot_name ? w->cfg.snapshot_name : "checkpoint snapshot", why);
	return false;
}

struct walk *walk_new(const struct walk_config *cfg, const struct sbuf *snapshot)
{
	struct walk *w = xcalloc(1, sizeof(*w));
	w->cfg = *cfg;
	excludes_init(&w->excl, cfg->excludes, cfg->nexcludes);
	if (cfg->throttle && cfg->throttle->rate > 0)
		w->rate_chunk = cfg->throttle->rate < 10 ? 1 : (size_t)fmin(cfg->throttle->rate / 10, 1e7);
	if (w->cfg.threads < 1)
		w->cfg.threads = 1;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->rootfd = xcalloc(cfg->nroots, sizeof(*w->rootfd));
	w->rootmnt = xcalloc(cfg->nroots, sizeof(*w->rootmnt));
	w->workers = xcalloc(w->cfg.threads, sizeof(*w->workers));
	for (size_t i = 0; i < cfg->nroots; i++)
		w->rootfd[i] = -1;
	for (size_t i = 0; i < cfg->nroots; i++) {
		w->rootfd[i] = open(cfg->roots[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		struct fs_id id;
		if (w->rootfd[i] < 0 || (cfg->xdev && fs_identity(w->rootfd[i], "", &id) != 0)) {
			warnx_("%s: open: %s", cfg->roots[i], strerror(errno));
			walk_free(w);
			return NULL;
		}
		w->rootmnt[i] = cfg->xdev ? mount_key(w, &id) : 0;
	}
	for (int i = 0; i < w->cfg.threads; i++) {
		struct worker *wk = &w->workers[i];
		wk->w = w;
		wk->local = xcalloc(1, cfg->visitor.local_size);
		wk->buf = xmalloc(BUF_MAX);
		wk->order = xmalloc(BUF_MAX / 24 * sizeof(*wk->order));
	}
	w->sessions = 1;
	w->start_ns = now_ns();
	w->tree_snap = cfg->visitor.dir_done && !cfg->restart_on_resume;
	if (snapshot) {
		if (!load_snapshot(w, snapshot)) {
			walk_free(w);
			return NULL;
		}
	} else if (!cfg->shared_empty) {
		visit_roots(w);
	}
	if (w->nstack == 0 && w->nready == 0 && !cfg->shared)
		atomic_store(&w->finished, true);
	return w;
}

int walk_root_fd(const struct walk *w, size_t i) { return w->rootfd[i]; }

static void start_workers(struct walk *w, int n)
{
	for (; w->nstarted < n; w->nstarted++) {
		int e = pthread_create(&w->workers[w->nstarted].tid, NULL, worker_main, &w->workers[w->nstarted]);
		if (e != 0) {
			threads_refused(w->nstarted, n, e); /* exits when none started */
			w->grow_refused = true;
			break;
		}
	}
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

void walk_start(struct walk *w)
{
	int n = w->cfg.min_threads > 0 && w->cfg.min_threads < w->cfg.threads ? w->cfg.min_threads : w->cfg.threads;
	w->tick_wall = now_ns();
	w->tick_cpu = cpu_ns();
	/* Resumed directories whose dir_done was under way: finished first, on this thread. */
	if (w->nready) {
		struct worker *wk = &w->workers[0];
		for (size_t i = 0; i < w->nready; i++) {
			wk->finishing = w->ready[i];
			finish_chain(wk, w->ready[i]);
		}
		w->nready = 0;
		if (w->nstack == 0) {
			atomic_store(&w->finished, true);
			sig_wake();
		}
	}
	start_workers(w, n);
}

/*
 * Grow the worker pool while the workers wait for I/O rather than use the CPUs: a warm walk is
 * CPU-bound and runs best with a worker per CPU, a cold one wants many reads in flight.
 */
static int walk_tick(void *ctx)
{
	struct walk *w = ctx;
	if (w->nstarted >= w->cfg.threads || w->grow_refused)
		return -1;
	uint64_t wall = now_ns(), cpu = cpu_ns();
	double used = (double)(cpu - w->tick_cpu) / (double)(wall - w->tick_wall + 1);
	int busy_cap = w->nstarted < cpu_count() ? w->nstarted : cpu_count();
	w->tick_wall = wall;
	w->tick_cpu = cpu;
	pthread_mutex_lock(&w->lock);
	/* Work waiting while the CPUs idle: the workers wait on I/O, or are blocked in the kernel (a
	 * held operation, or a directory lock behind it): more workers keep the rest going. */
	bool queued = w->nstack > 0 || share_open(w);
	pthread_mutex_unlock(&w->lock);
	if (queued && used < 0.5 * busy_cap) {
		int n = 2 * w->nstarted;
		start_workers(w, n < w->cfg.threads ? n : w->cfg.threads);
	}
	return TICK_MS;
}

static bool walk_done(void *ctx) { return atomic_load(&((struct walk *)ctx)->finished); }

static void walk_start_hook(void *ctx) { walk_start(ctx); }
static void walk_join_hook(void *ctx) { walk_join(ctx); }

struct run_hooks walk_run_hooks(struct walk *w, void (*progress)(void *ctx, struct sbuf *line),
				void (*sync)(void *ctx))
{
	struct run_hooks h = {.ctx = w,
			      .user = w->cfg.visitor.ctx,
			      .done = walk_done,
			      .snapshot = walk_snapshot,
			      .sync = sync,
			      .progress = progress,
			      .tick = walk_tick,
			      .start = walk_start_hook,
			      .join = walk_join_hook};
	return h;
}

void walk_join(struct walk *w)
{
	if (!w->joined)
		for (int i = 0; i < w->nstarted; i++)
			pthread_join(w->workers[i].tid, NULL);
	w->joined = true;
	w->end_ns = now_ns();
}

void walk_free(struct walk *w)
{
	if (!w)
		return;
	walk_join(w);
	for (int i = 0; i < w->cfg.threads; i++) {
		struct worker *wk = &w->workers[i];
		if (w->cfg.visitor.local_free && wk->local)
			w->cfg.visitor.local_free(w->cfg.visitor.ctx, wk->local);
		free(wk->local);
		free(wk->buf);
		free(wk->order);
		free(wk->kids);
		sbuf_free(&wk->errs.lines);
		sbuf_free(&wk->scratch);
	}
	for (size_t i = 0; i < w->nstack; i++)
		free(w->stack[i]);
	for (size_t i = 0; i < w->nready; i++)
		free(w->ready[i]);
	free(w->ready);
	free(w->chain);
	excludes_free(&w->excl);
	sbuf_free(&w->snap_recs);
	for (size_t i = 0; i < w->cfg.nroots; i++)
		if (w->rootfd[i] >= 0)
			close(w->rootfd[i]);
	free(w->stack);
	free(w->rootfd);
	free(w->rootmnt);
	free(w->workers);
	free(w);
}

uint64_t walk_errors(struct walk *w) { return w->cfg.errlog->count; }

double walk_elapsed(struct walk *w)
{
	return (w->prev_ns + ((w->end_ns ? w->end_ns : now_ns()) - w->start_ns)) / 1e9;
}

uint64_t walk_sessions(struct walk *w) { return w->sessions; }

int walk_threads(struct walk *w) { return w->nstarted; }

void walk_stuck(struct walk *w, struct sbuf *line, double min_s)
{
	uint64_t now = coarse_ns(), worst = 0;
	int n = 0;
	const struct rec *worst_rec = NULL;
	pthread_mutex_lock(&w->lock);
	for (int i = 0; i < w->nstarted; i++) {
		struct worker *wk = &w->workers[i];
		uint64_t since = wk->since;
		const struct rec *r = wk->cur ? wk->cur : wk->finishing ? wk->finishing : wk->helping;
		if (!r || now < since || (now - since) / 1e9 < min_s)
			continue;
		n++;
		if (now - since > worst) {
			worst = now - since;
			worst_rec = r;
		}
	}
	if (n) {
		sbuf_printf(line, "; %d worker%s without progress, longest %.0f s in ", n, n > 1 ? "s" : "", worst / 1e9);
		escape_path(line, worst_rec->path, worst_rec->pathlen);
	}
	pthread_mutex_unlock(&w->lock);
}

int walk_rmdir(const struct walk_dir *d, bool any_type)
{
	const char *rel = d->path + d->relstart;
	size_t len = d->pathlen - d->relstart;
	if (len == 0)
		return rmdir(d->path); /* an operand (rmdir never removes anything else) */
	const char *slash = memrchr(rel, '/', len);
	int pfd = slash ? dir_open_at(d->rootfd, rel, slash - rel) : d->rootfd;
	const char *name = slash ? slash + 1 : rel;
	if (pfd < 0) {
		/* A directory above was replaced by a symlink or a file since it was read: d is no
		 * longer under the operand (what took its place goes with that parent). */
		if (errno == ELOOP || errno == ENOTDIR)
			errno = ENOENT;
		return -1;
	}
	int r = unlinkat(pfd, name, AT_REMOVEDIR);
	/* A file or symlink took the directory's place since it was read: it is under the operand,
	 * so it goes too (as an entry: a symlink is never followed). */
	if (r != 0 && errno == ENOTDIR && any_type)
		r = unlinkat(pfd, name, 0);
	int e = errno;
	if (pfd != d->rootfd)
		close(pfd);
	errno = e;
	return r;
}

void walk_cancel(struct walk *w)
{
	pthread_mutex_lock(&w->lock);
	atomic_store(&w->cancelled, true);
	for (size_t i = 0; i < w->nstack; i++)
		free(w->stack[i]);
	w->nstack = 0;
	if (w->busy == 0) {
		atomic_store(&w->finished, true);
		sig_wake();
	}
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

bool walk_idle(struct walk *w)
{
	pthread_mutex_lock(&w->lock);
	bool idle = w->nstack == 0 && w->busy == 0;
	pthread_mutex_unlock(&w->lock);
	return idle;
}

size_t walk_give(struct walk *w, struct sbuf *b, size_t max)
{
	pthread_mutex_lock(&w->lock);
	/* Half, rounded up while workers are busy (they find more); an idle worker gets the rest. */
	size_t n = w->busy ? (w->nstack + 1) / 2 : w->nstack / 2;
	if (n > max)
		n = max;
	if (w->stopping)
		n = 0;
	/* Nothing to spare but directories being read (one huge directory): a worker cuts a slice off
	 * its directory for the next request (split_off). Not post-order (its dir_done would have to
	 * wait for every slice). */
	if (!n && !w->stopping && w->busy && w->cfg.shared && !w->cfg.visitor.dir_done &&
	    atomic_load(&w->split_asks) < SLICE_ASKS_MAX)
		atomic_fetch_add(&w->split_asks, 1);
	else if (n && w->cfg.shared && atomic_load(&w->split_asks))
		atomic_store(&w->split_asks, 0); /* the frontier has work again: stale asks */
	for (size_t i = 0; i < n; i++) {
		save_rec(b, w->stack[i]);
		free(w->stack[i]);
	}
	memmove(w->stack, w->stack + n, (w->nstack - n) * sizeof(*w->stack));
	w->nstack -= n;
	pthread_mutex_unlock(&w->lock);
	return n;
}

bool walk_add(struct walk *w, const void *p, size_t len)
{
	/* Checked whole first: nothing is pushed from a malformed message. */
	for (int pass = 0; pass < 2; pass++) {
		struct deser d = {.p = p, .len = len};
		if (pass)
			pthread_mutex_lock(&w->lock);
		while (d.pos < d.len && !d.bad) {
			struct rec_in in;
			if (!read_rec(w, &d, &in))
				return false; /* first pass only: the second reads what the first checked */
			if (pass)
				stack_push(w, rec_from(w, &in));
		}
		if (!pass && !deser_done(&d))
			return false;
	}
	if (w->waiting)
		pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return true;
}

void walk_end(struct walk *w)
{
	pthread_mutex_lock(&w->lock);
	w->ended = true;
	atomic_store(&w->finished, true);
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

void walk_lock(struct walk *w) { pthread_mutex_lock(&w->lock); }

void walk_unlock(struct walk *w) { pthread_mutex_unlock(&w->lock); }
