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
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/signals.h"
#include "util/util.h"

enum { TAG_REQ = 1, TAG_WORK, TAG_NONE, TAG_TOKEN, TAG_END, TAG_STOP, TAG_PART };

#define GIVE_MAX 512          /* directories per WORK message */
#define PART_CHUNK (1u << 20) /* bytes per PART message */
#define BACKOFF_MAX_MS 16     /* longest pause between requests after every rank said none */

struct sending {
	MPI_Request req;
	struct sbuf buf;
};

struct spread {
	struct walk *w;
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
};

static int my_rank, my_size = 1;

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

static void handle(struct spread *s, int from, int tag)
{
	switch (tag) {
	case TAG_REQ: {
		struct sbuf b = {0};
		size_t n = s->ended ? 0 : walk_give(s->w, &b, GIVE_MAX);
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
		if (!walk_add(s->w, s->in.data, s->in.len)) {
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
	if (s->ended || !walk_idle(s->w))
		return;
	if (s->size == 1) {
		end_walk(s);
		return;
	}
	if (!s->asking && now_ns() >= s->next_ask) {
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

struct spread *spread_new(struct walk *w)
{
	struct spread *s = xcalloc(1, sizeof(*s));
	s->w = w;
	s->rank = my_rank;
	s->size = my_size;
	s->seed = (unsigned)now_ns() ^ (unsigned)my_rank * 2654435761u;
	return s;
}

void spread_free(struct spread *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nsends; i++)
		sbuf_free(&s->sends[i].buf);
	free(s->sends);
	sbuf_free(&s->in);
	free(s);
}

static bool sp_done(void *ctx)
{
	struct spread *s = ctx;
	progress(s);
	return s->inner.done(s->inner.ctx);
}

static int sp_tick(void *ctx)
{
	struct spread *s = ctx;
	progress(s);
	uint64_t now = now_ns();
	if (s->inner.tick && now >= s->next_inner_tick) {
		int ms = s->inner.tick(s->inner.ctx);
		s->next_inner_tick = ms < 0 ? UINT64_MAX : now + (uint64_t)ms * 1000000;
		if (ms < 0)
			s->inner.tick = NULL;
	}
	return 1;
}

static void sp_snapshot(void *ctx, struct sbuf *out, bool stop)
{
	struct spread *s = ctx;
	s->inner.snapshot(s->inner.ctx, out, stop);
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

int spread_gather_part(int part_fd, struct outfile *out)
{
	char *buf = xmalloc(PART_CHUNK);
	int rc = 0;
	if (my_rank == 0) {
		for (int r = 1; r < my_size; r++)
			for (;;) {
				MPI_Status st;
				int n = 0;
				MPI_Recv(buf, PART_CHUNK, MPI_BYTE, r, TAG_PART, MPI_COMM_WORLD, &st);
				MPI_Get_count(&st, MPI_BYTE, &n);
				if (n == 0)
					break;
				if (outfile_write(out, buf, (size_t)n) != 0)
					rc = -1;
			}
	} else {
		/* An unreadable part ends early: its loss is an output failure, said on this rank. */
		ssize_t n = lseek(part_fd, 0, SEEK_SET) == 0 ? 0 : -1;
		if (n < 0)
			output_failed(out->name, "seek", errno);
		while (n == 0 && (n = read(part_fd, buf, PART_CHUNK)) > 0) {
			MPI_Send(buf, (int)n, MPI_BYTE, 0, TAG_PART, MPI_COMM_WORLD);
			n = 0;
		}
		if (n < 0) {
			output_failed(out->name, "read", errno);
			rc = -1;
		}
		MPI_Send(buf, 0, MPI_BYTE, 0, TAG_PART, MPI_COMM_WORLD);
	}
	free(buf);
	return rc;
}
