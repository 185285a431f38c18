/*
 * spread: a walk over the ranks of an MPI job (see spread.h and docs/mpi.md).
 *
 * Messages (all point to point, MPI_COMM_WORLD):
 *   REQ   an idle rank asks a random other rank for work (empty);
 *   WORK  the answer: frontier records (walk_give's format); counted for termination;
 *   NONE  the answer when there is nothing to spare (empty);
 *   TOKEN Safra's token: the sum of (work sent - work received) so far and its colour;
 *   END   from rank 0: the walk is over; STOP: a rank stopped, stop too; PART: output parts.
 * Every send is non-blocking (MPI_Isend, kept until complete), so no two ranks can wait on each
 * other; the main thread receives whatever has arrived at each tick.
 */
#include "engine/spread.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "state/ser.h"
#include "util/signals.h"
#include "util/util.h"

enum {
	TAG_REQ = 1,
	TAG_WORK,
	TAG_NONE,
	TAG_TOKEN,
	TAG_END,
	TAG_STOP,
	TAG_PART,
	TAG_ASK,    /* checkpoint round, from rank 0: freeze, and say your count (u64 round number) */
	TAG_COUNT,  /* the answer: round number, work sent minus received (two u64) */
	TAG_GO,     /* from rank 0: take your snapshot, send it and your outputs' new bytes */
	TAG_SNAP,   /* a rank's snapshot (then its parts' bytes as PART messages, each part ended by an
		     * empty one) */
	TAG_RESUME, /* from rank 0: the round is over, share work again */
	TAG_FIRST_SNAP, /* at start, from rank 0: this rank's snapshot to resume from */
	TAG_PROGRESS    /* to rank 0, every PROGRESS_MS: entries, directories, errors (three u64), then
			 * the rank's workers stuck in the kernel, as walk_stuck says it (text) */
};

#define GIVE_MAX 512          /* directories per WORK message */
#define PART_CHUNK (1u << 20) /* bytes per PART message */
#define BACKOFF_MAX_MS 16     /* longest pause between requests after every rank said none */
#define MAX_PARTS 4           /* outputs a command registers */
#define PROGRESS_MS 500       /* how often a rank tells rank 0 how far it got */

/* Rank 0: what another rank said of its share last. */
struct peer {
	uint64_t v[3]; /* entries, directories, errors */
	struct sbuf stuck;
};

/* An output of the job (spread_add_output). On rank 0, out is the output itself; on the others,
 * out writes into one of two temporary files (fd) that take turns: at a checkpoint the one in use
 * is swapped out, in the same step as the snapshot, and its bytes are shipped to rank 0. */
struct part {
	struct outfile *out;
	int fd[2];
	int cur;           /* fd[cur] is behind out->fd */
	uint64_t ship_len; /* bytes of the file swapped out, to ship */
};

struct sending {
	MPI_Request req;
	struct sbuf buf;
};

struct spread {
	/* The engine this rank runs: a shared walk (w), or a pool of this rank's units (p, named for
	 * the progress line by unit_name with the visitor's ctx). */
	struct walk *w;
	struct pool *p;
	void (*unit_name)(void *ctx, uint64_t unit, struct sbuf *out);
	struct run_hooks inner;
	uint64_t next_inner_tick;
	int rank, size;
	unsigned seed;
	/* Safra: work messages sent minus received; black once work was received since the token
	 * last left this rank. */
	int64_t count;
	bool black;
	bool have_token, token_black, token_out;
	int64_t token_q;
	bool asking;          /* a REQ is unanswered */
	unsigned nones;       /* NONE answers in a row */
	uint64_t next_ask;    /* no request before then (ns) */
	bool ended, peer_stopped;
	struct sending *sends;
	size_t nsends, capsends;
	struct sbuf in;
	uint64_t received, given, requests;
	/* Checkpoints across ranks: no work moves between ranks while frozen (a round is on); seq
	 * numbers rank 0's requests for counts; last is the job's last snapshot (rank 0). */
	bool frozen;
	uint64_t seq;
	struct sbuf last;
	struct part parts[MAX_PARTS];
	int nparts;
	/* The job-wide progress line: the command's counts (every rank), and on rank 0 the others'. */
	void (*progress_count)(void *ctx, uint64_t v[3]);
	void *count_ctx;
	uint64_t next_progress;
	struct peer *peers;
};

static int my_rank, my_size = 1;

/* ---- The engine, a walk's or a pool's ---------------------------------------------------------- */

static bool e_idle(struct spread *s) { return s->w ? walk_idle(s->w) : pool_idle(s->p); }

static void e_lock(struct spread *s)
{
	if (s->w)
		walk_lock(s->w);
	else
		pool_lock(s->p);
}

static void e_unlock(struct spread *s)
{
	if (s->w)
		walk_unlock(s->w);
	else
		pool_unlock(s->p);
}

static void e_snapshot_then(struct spread *s, struct sbuf *b, void (*first)(void *arg), void *arg)
{
	if (s->w)
		walk_snapshot_then(s->w, b, first, arg);
	else
		pool_snapshot_then(s->p, b, first, arg);
}

static void e_stuck(struct spread *s, struct sbuf *line)
{
	if (s->w)
		walk_stuck(s->w, line, 5);
	else
		pool_stuck(s->p, line, 5, s->unit_name);
}

int spread_init(int *argc, char ***argv)
{
	int provided;
	if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
		warnx_("MPI_Init_thread failed");
		return -1;
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &my_size);
	return 0;
}

void spread_finalize(void) { MPI_Finalize(); }
int spread_rank(void) { return my_rank; }
int spread_size(void) { return my_size; }

/* Send b (moved into the pending list, emptied) or nothing (b NULL) to rank to. */
static void send_msg(struct spread *s, int to, int tag, struct sbuf *b)
{
	if (s->nsends == s->capsends) {
		s->capsends = s->capsends ? 2 * s->capsends : 16;
		s->sends = xrealloc(s->sends, s->capsends * sizeof(*s->sends));
	}
	struct sending *m = &s->sends[s->nsends++];
	m->buf = b ? *b : (struct sbuf){0};
	if (b)
		*b = (struct sbuf){0};
	MPI_Isend(m->buf.data, (int)m->buf.len, MPI_BYTE, to, tag, MPI_COMM_WORLD, &m->req);
}

/* Free the sends that have completed. */
static void test_sends(struct spread *s)
{
	for (size_t i = 0; i < s->nsends;) {
		int done = 0;
		MPI_Test(&s->sends[i].req, &done, MPI_STATUS_IGNORE);
		if (!done) {
			i++;
			continue;
		}
		sbuf_free(&s->sends[i].buf);
		s->sends[i] = s->sends[--s->nsends];
	}
}

static void send_token(struct spread *s, int to, int64_t q, bool black)
{
	struct sbuf b = {0};
	int64_t t[2] = {q, black};
	sbuf_add(&b, t, sizeof(t));
	send_msg(s, to, TAG_TOKEN, &b);
}

static void end_walk(struct spread *s)
{
	s->ended = true;
	if (s->w)
		walk_end(s->w);
}

/* Receive one message that MPI_Iprobe found into s->in; its tag and sender. */
static void recv_msg(struct spread *s, MPI_Status *st)
{
	int n = 0;
	MPI_Get_count(st, MPI_BYTE, &n);
	sbuf_clear(&s->in);
	sbuf_reserve(&s->in, (size_t)n + 1);
	MPI_Recv(s->in.data, n, MPI_BYTE, st->MPI_SOURCE, st->MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	s->in.len = (size_t)n;
}

static void round_rank(struct spread *s);

static void handle(struct spread *s, int from, int tag)
{
	switch (tag) {
	case TAG_REQ: {
		struct sbuf b = {0};
		size_t n = s->ended || s->frozen || !s->w ? 0 : walk_give(s->w, &b, GIVE_MAX);
		if (n) {
			s->given += n;
			s->count++;
			send_msg(s, from, TAG_WORK, &b);
		} else {
			send_msg(s, from, TAG_NONE, NULL);
		}
		sbuf_free(&b);
		break;
	}
	case TAG_WORK:
		s->count--;
		s->black = true;
		s->asking = false;
		s->nones = 0;
		if (!s->w || !walk_add(s->w, s->in.data, s->in.len)) {
			warnx_("rank %d: a work message from rank %d is malformed", s->rank, from);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
		s->received++;
		break;
	case TAG_NONE: {
		s->asking = false;
		s->nones++;
		/* Once every other rank said none, ask less often: nothing is left to share for now. */
		unsigned k = s->nones >= (unsigned)s->size ? s->nones - (unsigned)s->size : 0;
		unsigned ms = k ? 1u << (k < 5 ? k - 1 : 4) : 0;
		s->next_ask = now_ns() + (uint64_t)(ms > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : ms) * 1000000;
		break;
	}
	case TAG_TOKEN: {
		int64_t t[2] = {0, 0};
		if (s->in.len == sizeof(t))
			memcpy(t, s->in.data, sizeof(t));
		s->have_token = true;
		s->token_q = t[0];
		s->token_black = t[1] != 0;
		break;
	}
	case TAG_END: end_walk(s); break;
	case TAG_STOP:
		s->peer_stopped = true;
		sig_request_stop();
		break;
	case TAG_ASK: round_rank(s); break;
	case TAG_PROGRESS:
		if (s->peers && s->in.len >= 3 * sizeof(uint64_t)) {
			struct peer *p = &s->peers[from];
			memcpy(p->v, s->in.data, sizeof(p->v));
			sbuf_clear(&p->stuck);
			sbuf_add(&p->stuck, s->in.data + sizeof(p->v), s->in.len - sizeof(p->v));
		}
		break;
	}
}

/* Receive what has arrived; then, idle, ask for work and pass the token on. */
static void progress(struct spread *s)
{
	for (;;) {
		int flag = 0;
		MPI_Status st;
		MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
		if (!flag || st.MPI_TAG == TAG_PART)
			break;
		recv_msg(s, &st);
		handle(s, st.MPI_SOURCE, st.MPI_TAG);
	}
	test_sends(s);
	if (s->ended || !e_idle(s))
		return;
	if (s->size == 1) {
		end_walk(s);
		return;
	}
	/* A pool's units are split between the ranks in advance: none to ask for. */
	if (s->w && !s->asking && !s->frozen && now_ns() >= s->next_ask) {
		int victim = (s->rank + 1 + rand_r(&s->seed) % (s->size - 1)) % s->size;
		send_msg(s, victim, TAG_REQ, NULL);
		s->asking = true;
		s->requests++;
	}
	if (s->rank != 0) {
		if (s->have_token) {
			send_token(s, (s->rank + 1) % s->size, s->token_q + s->count, s->token_black || s->black);
			s->black = false;
			s->have_token = false;
		}
		return;
	}
	/* Rank 0: a round that came back white, with every work message received, ends the walk. */
	if (s->have_token) {
		s->have_token = s->token_out = false;
		if (!s->token_black && !s->black && s->token_q + s->count == 0) {
			for (int r = 1; r < s->size; r++)
				send_msg(s, r, TAG_END, NULL);
			end_walk(s);
			return;
		}
	}
	if (!s->token_out) {
		s->black = false;
		s->token_out = true;
		send_token(s, 1, 0, false);
	}
}

/* ---- Checkpoints across ranks ----------------------------------------------------------------
 *
 * A round, started by rank 0 where the run loop would take a snapshot:
 *  1. rank 0 freezes (answers requests for work with none, asks for none) and sends ASK to every
 *     rank; each freezes too and answers COUNT (its work messages sent minus received). Frozen,
 *     no rank sends work, so once the counts, each taken after its rank froze, sum to zero, no
 *     work message is in flight: every directory is in exactly one rank's walk. Otherwise rank 0
 *     asks again (the work in flight is being received meanwhile).
 *  2. One rank after another (GO), each takes its snapshot, swapping its output parts out in the
 *     same step, and sends it (SNAP) and the parts' bytes (PART) to rank 0, which appends them to
 *     the outputs. Rank 0 then takes its own snapshot: its outputs' lengths count every rank's.
 *  3. The job's snapshot is every rank's ("MYRSPRD1": ranks, then each rank's in rank order);
 *     RESUME unfreezes the ranks.
 * A rank that stops (a signal; STOP from another rank) abandons the round: the job then keeps its
 * last snapshot, and a resume truncates the outputs back to the lengths it recorded.
 */

static void send_u64s(struct spread *s, int to, int tag, const uint64_t *v, size_t n)
{
	struct sbuf b = {0};
	sbuf_add(&b, v, n * sizeof(*v));
	send_msg(s, to, tag, &b);
}

static void nap(void)
{
	struct timespec ts = {0, 100000};
	nanosleep(&ts, NULL);
}

/*
 * In a round: receive one message, handling the work-sharing ones (requests are answered with
 * none: frozen). Returns the tag of another message (in s->in; its sender in *from), 0 when there
 * was none or it was handled, -1 when the round must be abandoned (a stop).
 */
static int round_poll(struct spread *s, int *from)
{
	if (sig_stop_requested())
		return -1;
	int flag = 0;
	MPI_Status st;
	MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
	test_sends(s);
	if (!flag || st.MPI_TAG == TAG_PART)
		return 0;
	recv_msg(s, &st);
	*from = st.MPI_SOURCE;
	switch (st.MPI_TAG) {
	case TAG_REQ:
	case TAG_WORK:
	case TAG_NONE:
	case TAG_TOKEN:
	case TAG_PROGRESS: handle(s, st.MPI_SOURCE, st.MPI_TAG); return 0;
	case TAG_STOP: handle(s, st.MPI_SOURCE, st.MPI_TAG); return -1;
	}
	return st.MPI_TAG;
}

/* Swap every part out (engine lock held, before the snapshot): what was written goes to rank 0;
 * what comes next goes to the other file, from its start. */
static void swap_parts(void *arg)
{
	struct spread *s = arg;
	for (int i = 0; i < s->nparts; i++) {
		struct part *p = &s->parts[i];
		int next = 1 - p->cur;
		p->ship_len = p->out->len;
		if (dup2(p->fd[next], p->out->fd) < 0) {
			warnx_("rank %d: %s: swapping this rank's part: %s", s->rank, p->out->name, strerror(errno));
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
		p->out->len = 0;
		p->cur = next;
	}
}

/* Send n bytes of fd from its start to rank 0 as PART messages, then an empty one. */
static void ship(const struct part *p, int fd, uint64_t n, char *buf)
{
	for (uint64_t off = 0; off < n;) {
		size_t want = n - off < PART_CHUNK ? (size_t)(n - off) : PART_CHUNK;
		ssize_t got = pread(fd, buf, want, (off_t)off);
		if (got <= 0) {
			/* Its loss is an output failure (said here); the job then stops. */
			output_failed(p->out->name, "read", got < 0 ? errno : EIO);
			break;
		}
		MPI_Send(buf, (int)got, MPI_BYTE, 0, TAG_PART, MPI_COMM_WORLD);
		off += (uint64_t)got;
	}
	MPI_Send(buf, 0, MPI_BYTE, 0, TAG_PART, MPI_COMM_WORLD);
}

/* Rank 0: append rank from's PART messages, up to the empty one, to out (under the engine lock
 * when the workers run). -1 when a write failed (recorded; the rest is still received). */
static int receive_part(struct spread *s, int from, struct outfile *out, char *buf, bool lock)
{
	int rc = 0;
	for (;;) {
		MPI_Status st;
		int n = 0;
		MPI_Recv(buf, PART_CHUNK, MPI_BYTE, from, TAG_PART, MPI_COMM_WORLD, &st);
		MPI_Get_count(&st, MPI_BYTE, &n);
		if (n == 0)
			return rc;
		if (lock)
			e_lock(s);
		if (outfile_write(out, buf, (size_t)n) != 0)
			rc = -1;
		if (lock)
			e_unlock(s);
	}
}

/* Rank > 0, on ASK: freeze, answer counts until GO, send the snapshot and parts, wait for RESUME. */
static void round_rank(struct spread *s)
{
	s->frozen = true;
	for (int tag = TAG_ASK, from = 0;; tag = round_poll(s, &from)) {
		if (tag < 0)
			break;
		if (tag == TAG_ASK && s->in.len == sizeof(uint64_t)) {
			uint64_t v[2];
			memcpy(&v[0], s->in.data, sizeof(v[0]));
			v[1] = (uint64_t)s->count;
			send_u64s(s, 0, TAG_COUNT, v, 2);
		} else if (tag == TAG_GO) {
			struct sbuf snap = {0};
			e_snapshot_then(s, &snap, swap_parts, s);
			MPI_Send(snap.data, (int)snap.len, MPI_BYTE, 0, TAG_SNAP, MPI_COMM_WORLD);
			sbuf_free(&snap);
			char *buf = xmalloc(PART_CHUNK);
			for (int i = 0; i < s->nparts; i++) {
				struct part *p = &s->parts[i];
				int old = p->fd[1 - p->cur];
				ship(p, old, p->ship_len, buf);
				if (ftruncate(old, 0) != 0 || lseek(old, 0, SEEK_SET) != 0)
					output_failed(p->out->name, "truncate", errno);
			}
			free(buf);
		} else if (tag == TAG_RESUME) {
			break;
		} else if (tag == 0) {
			nap();
		}
	}
	s->frozen = false;
}

/* Rank 0: a round; true with the job's snapshot in out. */
static bool round_zero(struct spread *s, struct sbuf *out)
{
	bool ok = false;
	int from = 0;
	struct sbuf rest = {0}, snap = {0};
	char *buf = xmalloc(PART_CHUNK);
	s->frozen = true;
	/* 1. Quiesce. */
	for (;;) {
		uint64_t seq = ++s->seq;
		for (int r = 1; r < s->size; r++)
			send_u64s(s, r, TAG_ASK, &seq, 1);
		int64_t sum = 0;
		int got = 0;
		while (got < s->size - 1) {
			int tag = round_poll(s, &from);
			if (tag < 0)
				goto out;
			if (tag == TAG_COUNT && s->in.len == 2 * sizeof(uint64_t)) {
				uint64_t v[2];
				memcpy(v, s->in.data, sizeof(v));
				if (v[0] == seq) {
					sum += (int64_t)v[1];
					got++;
				}
			} else if (tag == 0) {
				nap();
			}
		}
		if (sum + s->count == 0)
			break;
	}
	/* 2. Each rank's snapshot and new output, one rank after another. */
	for (int r = 1; r < s->size; r++) {
		send_msg(s, r, TAG_GO, NULL);
		int tag;
		while ((tag = round_poll(s, &from)) != TAG_SNAP || from != r) {
			if (tag < 0)
				goto out;
			if (tag == 0)
				nap();
		}
		ser_bytes(&rest, s->in.data, s->in.len);
		for (int i = 0; i < s->nparts; i++)
			receive_part(s, r, s->parts[i].out, buf, true);
	}
	/* 3. Rank 0's own, last: its outputs' lengths include what the others sent. */
	e_snapshot_then(s, &snap, NULL, NULL);
	ser_begin(out, "MYRSPRD1");
	ser_u64(out, (uint64_t)s->size);
	ser_bytes(out, snap.data, snap.len);
	sbuf_add(out, rest.data, rest.len);
	ser_end(out);
	ok = true;
out:
	for (int r = 1; r < s->size; r++)
		send_msg(s, r, TAG_RESUME, NULL);
	s->frozen = false;
	sbuf_free(&rest);
	sbuf_free(&snap);
	free(buf);
	return ok;
}

/* The job's snapshot when no round has completed: resuming it starts over. */
static void empty_snapshot(struct sbuf *out)
{
	ser_begin(out, "MYRSPRD1");
	ser_u64(out, 0);
	ser_end(out);
}

static struct spread *spread_new(struct walk *w, struct pool *p, const struct sbuf *resumed)
{
	struct spread *s = xcalloc(1, sizeof(*s));
	s->w = w;
	s->p = p;
	s->rank = my_rank;
	s->size = my_size;
	s->seed = (unsigned)now_ns() ^ (unsigned)my_rank * 2654435761u;
	if (resumed && my_rank == 0)
		sbuf_add(&s->last, resumed->data, resumed->len);
	return s;
}

struct spread *spread_new_walk(struct walk *w, const struct sbuf *resumed) { return spread_new(w, NULL, resumed); }

struct spread *spread_new_pool(struct pool *p, void (*unit_name)(void *ctx, uint64_t unit, struct sbuf *out),
			       const struct sbuf *resumed)
{
	struct spread *s = spread_new(NULL, p, resumed);
	s->unit_name = unit_name;
	return s;
}

void spread_progress_source(struct spread *s, void (*count)(void *ctx, uint64_t v[3]), void *ctx)
{
	s->progress_count = count;
	s->count_ctx = ctx;
	if (s->rank == 0 && !s->peers)
		s->peers = xcalloc((size_t)s->size, sizeof(*s->peers));
}

void spread_progress_add(struct spread *s, uint64_t v[3], struct sbuf *stuck)
{
	for (int r = 1; s->peers && r < s->size; r++) {
		struct peer *p = &s->peers[r];
		for (int i = 0; i < 3; i++)
			v[i] += p->v[i];
		if (p->stuck.len) {
			sbuf_printf(stuck, "; rank %d:", r);
			/* walk_stuck's text starts with "; ": keep what follows it. */
			size_t skip = p->stuck.len > 1 && p->stuck.data[0] == ';' ? 1 : 0;
			sbuf_add(stuck, p->stuck.data + skip, p->stuck.len - skip);
		}
	}
}

void spread_add_output(struct spread *s, struct outfile *out, int part_fd, int spare_fd)
{
	if (s->nparts == MAX_PARTS) {
		warnx_("spread: more than %d outputs", MAX_PARTS);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	struct part *p = &s->parts[s->nparts++];
	*p = (struct part){.out = out, .fd = {part_fd, spare_fd}};
	if (s->rank != 0 && dup2(part_fd, out->fd) < 0) {
		warnx_("rank %d: %s: this rank's part: %s", s->rank, out->name, strerror(errno));
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
}

void spread_free(struct spread *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nsends; i++)
		sbuf_free(&s->sends[i].buf);
	free(s->sends);
	sbuf_free(&s->in);
	sbuf_free(&s->last);
	for (int r = 0; s->peers && r < s->size; r++)
		sbuf_free(&s->peers[r].stuck);
	free(s->peers);
	for (int i = 0; i < s->nparts; i++)
		for (int k = 0; k < 2; k++)
			if (s->parts[i].fd[k] >= 0) /* rank 0 has none */
				close(s->parts[i].fd[k]);
	free(s);
}

static bool sp_done(void *ctx)
{
	struct spread *s = ctx;
	progress(s);
	/* A pool is done with its units before the job is over: it waits for the end like a walk. */
	return s->ended && s->inner.done(s->inner.ctx);
}

/* A rank but 0: tell rank 0 how far this rank got, for the job's progress line. */
static void send_progress(struct spread *s, uint64_t now)
{
	if (s->rank == 0 || !s->progress_count || s->ended || now < s->next_progress)
		return;
	s->next_progress = now + (uint64_t)PROGRESS_MS * 1000000;
	uint64_t v[3];
	s->progress_count(s->count_ctx, v);
	struct sbuf b = {0};
	sbuf_add(&b, v, sizeof(v));
	e_stuck(s, &b);
	send_msg(s, 0, TAG_PROGRESS, &b);
}

static int sp_tick(void *ctx)
{
	struct spread *s = ctx;
	progress(s);
	uint64_t now = now_ns();
	send_progress(s, now);
	if (s->inner.tick && now >= s->next_inner_tick) {
		int ms = s->inner.tick(s->inner.ctx);
		s->next_inner_tick = ms < 0 ? UINT64_MAX : now + (uint64_t)ms * 1000000;
		if (ms < 0)
			s->inner.tick = NULL;
	}
	return 1;
}

/*
 * Rank 0's run loop saves what this gives (it is called on the other ranks only to stop their
 * workers). A periodic snapshot is a round over every rank; the stop snapshot freezes this rank's
 * workers and gives the last round's (a round now could not count on the others).
 */
static void sp_snapshot(void *ctx, struct sbuf *out, bool stop)
{
	struct spread *s = ctx;
	if (s->rank != 0 || stop) {
		struct sbuf mine = {0};
		s->inner.snapshot(s->inner.ctx, &mine, stop);
		sbuf_free(&mine);
	} else if (!s->ended && round_zero(s, out)) {
		sbuf_clear(&s->last);
		sbuf_add(&s->last, out->data, out->len);
		return;
	}
	sbuf_clear(out);
	if (s->last.len)
		sbuf_add(out, s->last.data, s->last.len);
	else
		empty_snapshot(out);
}

static void sp_start(void *ctx)
{
	struct spread *s = ctx;
	s->inner.start(s->inner.ctx);
}

static void sp_join(void *ctx)
{
	struct spread *s = ctx;
	s->inner.join(s->inner.ctx);
}

struct run_hooks spread_hooks(struct spread *s, const struct run_hooks *walk_hooks)
{
	s->inner = *walk_hooks;
	struct run_hooks h = *walk_hooks;
	h.ctx = s;
	h.done = sp_done;
	h.tick = sp_tick;
	h.snapshot = sp_snapshot;
	h.start = sp_start;
	h.join = sp_join;
	return h;
}

enum run_result spread_finish(struct spread *s, enum run_result r)
{
	if (r == RUN_STOPPED && !s->peer_stopped)
		for (int i = 0; i < s->size; i++)
			if (i != s->rank)
				send_msg(s, i, TAG_STOP, NULL);
	/* Drop what is still in flight (requests, answers, a token) until every rank is here and
	 * every send of ours has completed: then no message is left half-sent. */
	MPI_Request bar = MPI_REQUEST_NULL;
	for (;;) {
		int flag = 0;
		MPI_Status st;
		MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
		if (flag && st.MPI_TAG != TAG_PART) {
			recv_msg(s, &st);
			if (st.MPI_TAG == TAG_STOP)
				s->peer_stopped = true;
			continue;
		}
		test_sends(s);
		if (bar == MPI_REQUEST_NULL && s->nsends == 0)
			MPI_Ibarrier(MPI_COMM_WORLD, &bar);
		if (bar != MPI_REQUEST_NULL) {
			int done = 0;
			MPI_Test(&bar, &done, MPI_STATUS_IGNORE);
			if (done)
				break;
		}
		struct timespec ts = {0, 200000};
		nanosleep(&ts, NULL);
	}
	int stopped = r == RUN_STOPPED || s->peer_stopped;
	MPI_Allreduce(MPI_IN_PLACE, &stopped, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (stopped && r != RUN_STOPPED)
		s->peer_stopped = true;
	return stopped ? RUN_STOPPED : RUN_DONE;
}

bool spread_peer_stopped(const struct spread *s) { return s->peer_stopped; }

void spread_stats(const struct spread *s, uint64_t *received, uint64_t *given, uint64_t *requests)
{
	*received = s->received;
	*given = s->given;
	*requests = s->requests;
}

bool spread_all(bool ok)
{
	int v = ok;
	MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	return v != 0;
}

void spread_sum(uint64_t *v, size_t n)
{
	if (my_rank == 0)
		MPI_Reduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	else
		MPI_Reduce(v, NULL, (int)n, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
}

void spread_gather(uint64_t v, uint64_t *all)
{
	MPI_Gather(&v, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
}

int spread_max(int v)
{
	MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	return v;
}

void spread_max_u64(uint64_t *v, size_t n)
{
	if (my_rank == 0)
		MPI_Reduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
	else
		MPI_Reduce(v, NULL, (int)n, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
}

void spread_bcast(void *buf, size_t n) { MPI_Bcast(buf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD); }

void spread_barrier(void)
{
	MPI_Request bar;
	MPI_Ibarrier(MPI_COMM_WORLD, &bar);
	for (int done = 0;;) {
		MPI_Test(&bar, &done, MPI_STATUS_IGNORE);
		if (done)
			return;
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
}

int spread_part_create(const char *final, char *path, size_t size)
{
	const char *dir = getenv("TMPDIR");
	size_t dirlen;
	if (final && strcmp(final, "-")) {
		const char *slash = strrchr(final, '/');
		dir = slash ? final : ".";
		dirlen = slash ? (size_t)(slash - final) + (slash == final) : 1;
	} else {
		if (!dir || !*dir)
			dir = "/tmp";
		dirlen = strlen(dir);
	}
	int n = snprintf(path, size, "%.*s/.myriad-part.%d.XXXXXX", (int)dirlen, dir, my_rank);
	if (n < 0 || (size_t)n >= size) {
		warnx_("%.*s: the directory's name is too long for an output part", (int)dirlen, dir);
		return -1;
	}
	int fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		warnx_("%s: create (this rank's part of the output): %s", path, strerror(errno));
	return fd;
}

int spread_gather_outputs(struct spread *s)
{
	char *buf = xmalloc(PART_CHUNK);
	int rc = 0;
	for (int i = 0; i < s->nparts; i++) {
		struct part *p = &s->parts[i];
		if (s->rank == 0) {
			for (int r = 1; r < s->size; r++)
				if (receive_part(s, r, p->out, buf, false) != 0)
					rc = -1;
		} else {
			ship(p, p->fd[p->cur], p->out->len, buf);
		}
	}
	free(buf);
	return rc;
}

int spread_share_snapshot(bool ok, const struct sbuf *job_snap, const char *name, struct sbuf *mine)
{
	if (!spread_all(ok))
		return -1;
	int verdict = 0;
	uint64_t ranks = 0;
	struct deser d = {0};
	if (my_rank == 0 && job_snap) {
		const char *why = "malformed";
		if (!deser_begin(&d, job_snap->data, job_snap->len, "MYRSPRD1", &why)) {
			warnx_("%s: cannot be used: %s (not a snapshot of myriad-mpi); remove the state directory or "
			       "use --fresh", name, why);
			verdict = -1;
		} else if ((ranks = deser_u64(&d)) != 0 && ranks != (uint64_t)my_size) {
			warnx_("%s: saved by a job of %" PRIu64 " ranks, this one has %d: run it again with "
			       "mpirun -np %" PRIu64 " to resume, or with --fresh to start over", name, ranks, my_size, ranks);
			verdict = -1;
		} else {
			verdict = ranks != 0;
		}
	}
	MPI_Bcast(&verdict, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (verdict <= 0)
		return verdict;
	if (my_rank == 0) {
		/* Checked whole before anything is sent: every rank gets its part, or none. */
		const void **part = xcalloc((size_t)my_size, sizeof(*part));
		size_t *len = xcalloc((size_t)my_size, sizeof(*len));
		for (int r = 0; r < my_size; r++)
			part[r] = deser_bytes(&d, &len[r]);
		verdict = deser_done(&d) ? 1 : -1;
		if (verdict < 0)
			warnx_("%s: cannot be used: a rank's part is malformed; remove the state directory or use "
			       "--fresh", name);
		MPI_Bcast(&verdict, 1, MPI_INT, 0, MPI_COMM_WORLD);
		if (verdict > 0) {
			sbuf_add(mine, part[0], len[0]);
			for (int r = 1; r < my_size; r++)
				MPI_Send(part[r], (int)len[r], MPI_BYTE, r, TAG_FIRST_SNAP, MPI_COMM_WORLD);
		}
		free(part);
		free(len);
		return verdict;
	}
	MPI_Bcast(&verdict, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (verdict < 0)
		return -1;
	MPI_Status st;
	int n = 0;
	MPI_Probe(0, TAG_FIRST_SNAP, MPI_COMM_WORLD, &st);
	MPI_Get_count(&st, MPI_BYTE, &n);
	sbuf_reserve(mine, (size_t)n + 1);
	MPI_Recv(mine->data, n, MPI_BYTE, 0, TAG_FIRST_SNAP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	mine->len = (size_t)n;
	return 1;
}
