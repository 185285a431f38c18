/* prefetch: a batch of small files read through one io_uring submission (see prefetch.h). */
#include "io/prefetch.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "io/dir.h"
#include "util/util.h"

bool prefetch_wanted(const char *path, bool suits)
{
	const char *pf = getenv("MYRIAD_PREFETCH");
	if (pf && !strcmp(pf, "on"))
		return true;
	if (pf && !strcmp(pf, "off"))
		return false;
	return suits && fs_inode_ordered(fs_type(path));
}

struct slot {
	const char *name;
	int fd, err;
	size_t off, size;
	ssize_t res; /* bytes read, or -1 (no read) */
	bool queued, done, taken;
};

struct prefetch {
	struct io_uring ring;
	char *buf;
	struct slot slot[PREFETCH_FILES];
	size_t n, used, queued, submitted, inflight;
	bool broken; /* the ring failed: requests may still write into buf, so neither is reused */
};

static atomic_bool unavailable;

/* Fds the read-ahead may hold at once over all workers (a quarter of the open-file limit, taken
 * at the first prefetch_new), so that many workers' batches cannot starve the copy of fds. */
static atomic_long fd_room;
static pthread_once_t fd_room_once = PTHREAD_ONCE_INIT;
static void fd_room_init(void)
{
	struct rlimit rl;
	long room = 64;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		room = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur / 4 > (1 << 20) ? 1 << 20 : (long)(rl.rlim_cur / 4);
	atomic_store(&fd_room, room);
}

struct prefetch *prefetch_new(void)
{
	if (atomic_load(&unavailable))
		return NULL;
	pthread_once(&fd_room_once, fd_room_init);
	struct prefetch *p = xcalloc(1, sizeof(*p));
	if (io_uring_queue_init(PREFETCH_FILES, &p->ring, 0) != 0) {
		atomic_store(&unavailable, true); /* ENOSYS, EPERM (io_uring_disabled, seccomp), ENOMEM */
		free(p);
		return NULL;
	}
	p->buf = xmalloc(PREFETCH_BYTES);
	return p;
}

void prefetch_free(struct prefetch *p)
{
	if (!p)
		return;
	prefetch_reset(p);
	if (p->broken)
		return; /* left alone on purpose: see struct prefetch */
	io_uring_queue_exit(&p->ring);
	free(p->buf);
	free(p);
}

/* Waiting on the ring failed (not the files' answer): what is in flight is read as usual. */
static void give_up(struct prefetch *p)
{
	p->broken = true;
	for (size_t i = 0; i < p->n; i++)
		p->slot[i].done = true;
	p->inflight = 0;
}

/* Wait for one completion and record it. */
static void reap_one(struct prefetch *p)
{
	struct io_uring_cqe *cqe;
	int rc;
	int tries = 0;
	do
		rc = io_uring_wait_cqe(&p->ring, &cqe);
	while (rc == -EINTR || ((rc == -EAGAIN || rc == -ETIME) && ++tries < 1000));
	if (rc < 0) {
		give_up(p);
		return;
	}
	struct slot *s = &p->slot[cqe->user_data];
	int res = cqe->res;
	io_uring_cqe_seen(&p->ring, cqe);
	s->done = true;
	p->inflight--;
	if (res >= 0)
		s->res = res;
	else if (res != -EAGAIN && res != -EINTR && res != -ECANCELED)
		s->err = -res; /* (those three: not the file's answer; it is read as usual) */
}

void prefetch_reset(struct prefetch *p)
{
	while (p->inflight && !p->broken)
		reap_one(p);
	for (size_t i = 0; i < p->n; i++)
		if (!p->slot[i].taken && p->slot[i].fd >= 0) {
			close(p->slot[i].fd);
			atomic_fetch_add(&fd_room, 1);
		}
	p->n = p->used = p->queued = p->submitted = 0;
}

bool prefetch_add(struct prefetch *p, int dirfd, const char *name, size_t size)
{
	if (p->broken || p->n == PREFETCH_FILES || p->used + size > PREFETCH_BYTES)
		return false;
	if (atomic_fetch_sub(&fd_room, 1) <= 0) {
		atomic_fetch_add(&fd_room, 1);
		return false; /* the other workers hold enough */
	}
	struct slot *s = &p->slot[p->n];
	*s = (struct slot){.name = name, .fd = -1, .off = p->used, .size = size, .res = -1};
	s->fd = dir_open_file(dirfd, name);
	if (s->fd < 0) {
		atomic_fetch_add(&fd_room, 1);
		if (errno == EMFILE || errno == ENFILE)
			return false; /* not the file's answer: it is opened when its turn comes */
		s->err = errno;
		s->done = true;
	} else {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&p->ring);
		if (sqe) {
			io_uring_prep_read(sqe, s->fd, p->buf + s->off, size, 0);
			sqe->user_data = p->n;
			s->queued = true;
			p->queued++;
			p->used += (size + 63) & ~(size_t)63;
		} else {
			s->done = true; /* (cannot happen: the ring has a slot per file) read as usual */
		}
	}
	p->n++;
	return true;
}

void prefetch_submit(struct prefetch *p)
{
	int tries = 0;
	while (p->submitted < p->queued && !p->broken) {
		int rc = io_uring_submit(&p->ring);
		if (rc == -EINTR || (rc == -EAGAIN && ++tries < 1000))
			continue;
		if (rc <= 0) {
			/* The rest were never submitted: they are read as usual. The ring keeps them
			 * queued, so it is not used again. */
			for (size_t i = 0, k = 0; i < p->n; i++)
				if (p->slot[i].queued && k++ >= p->submitted)
					p->slot[i].done = true;
			p->broken = true;
			break;
		}
		p->submitted += rc;
		p->inflight += rc;
	}
}

bool prefetch_take(struct prefetch *p, const char *name, struct prefetched *out)
{
	for (size_t i = 0; i < p->n; i++) {
		struct slot *s = &p->slot[i];
		if (s->name != name || s->taken)
			continue;
		while (!s->done)
			reap_one(p);
		s->taken = true;
		if (s->fd >= 0)
			atomic_fetch_add(&fd_room, 1); /* the caller's now, closed as soon as it is copied */
		*out = (struct prefetched){s->fd, s->err, NULL, 0};
		if (s->fd >= 0 && s->res >= 0 && !s->err) {
			out->data = p->buf + s->off;
			out->len = (size_t)s->res;
		}
		return true;
	}
	return false;
}
