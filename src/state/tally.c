/*
 * tally: per-worker counters in a file of the state directory, mapped shared, so that a job's
 * totals survive SIGINT and kill -9 exactly (see tally.h). The file: a header, then one page per
 * slot; a resume folds the old file's slots into slot 0 of a new file, which replaces the old one
 * by rename before any work is done, so a run killed while it opens the tally changes nothing.
 */
#include "state/tally.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

#define TALLY_MAGIC "MYRTALY1"
#define SLOT_SIZE 4096
#define NSLOTS_MAX 65536

struct tally_slot {
	uint64_t c[TALLY_COUNTERS];
	uint64_t pending;  /* counter + 1 of the action announced, or 0 */
	uint64_t base;     /* that counter's value when it was announced */
	uint64_t rec_len;  /* > TALLY_REC_MAX: the record was too long to keep */
	char rec[TALLY_REC_MAX];
};
_Static_assert(sizeof(struct tally_slot) <= SLOT_SIZE, "a slot fits its page");

struct tally_header {
	char magic[8];
	uint64_t nslots;
	uint64_t since; /* when the run that wrote the file started (CLOCK_REALTIME_COARSE, ns) */
};

struct tally {
	void *map;
	size_t len;
	bool mapped;
	unsigned nslots;
	unsigned _Atomic next;
};

static struct tally_slot *slot_at(void *map, unsigned i) { return (void *)((char *)map + SLOT_SIZE * (i + 1)); }

static uint64_t load(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static void store(uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

/* Fold the slots of the file named name in dirfd into base[]: false when there is none or it is
 * not a tally. */
static bool fold_old(int dirfd, const char *name, uint64_t *base, tally_settle_fn *settle, void *ctx)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return false;
	bool ok = false;
	struct tally_header h;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && pread(fd, &h, sizeof(h), 0) == sizeof(h) &&
	    !memcmp(h.magic, TALLY_MAGIC, 8) && h.nslots > 0 && h.nslots <= NSLOTS_MAX &&
	    (uint64_t)st.st_size == SLOT_SIZE * (h.nslots + 1)) {
		void *map = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		if (map != MAP_FAILED) {
			ok = true;
			for (unsigned i = 0; i < h.nslots; i++) {
				const struct tally_slot *s = slot_at(map, i);
				for (unsigned k = 0; k < TALLY_COUNTERS; k++)
					base[k] += s->c[k];
				uint64_t k = s->pending - 1;
				if (s->pending && k < TALLY_COUNTERS && s->c[k] == s->base && s->rec_len <= TALLY_REC_MAX &&
				    settle)
					settle(ctx, k, s->rec, s->rec_len, h.since, base);
			}
			munmap(map, st.st_size);
		}
	}
	close(fd);
	return ok;
}

/* Write the header, and the earlier runs' totals in slot 0. */
static void lay_out(struct tally *t, const uint64_t *base)
{
	struct tally_header *h = t->map;
	memcpy(h->magic, TALLY_MAGIC, 8);
	h->nslots = t->nslots;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	h->since = (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
	memcpy(slot_at(t->map, 0)->c, base, sizeof(uint64_t) * TALLY_COUNTERS);
	t->next = 1; /* slot 0 is the earlier runs' */
}

struct tally *tally_open(const char *dir, unsigned part, unsigned nslots, bool resume, tally_settle_fn *settle,
			 void *ctx, bool *exact)
{
	char name[32], tmp[40];
	if (part)
		snprintf(name, sizeof(name), "tally-%u", part);
	else
		snprintf(name, sizeof(name), "tally");
	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	struct tally *t = xcalloc(1, sizeof(*t));
	t->nslots = (nslots > NSLOTS_MAX - 1 ? NSLOTS_MAX - 1 : nslots) + 1; /* and slot 0, the earlier runs' */
	t->len = (size_t)SLOT_SIZE * (t->nslots + 1);
	uint64_t base[TALLY_COUNTERS] = {0};
	*exact = true;
	int dirfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (resume)
		*exact = dirfd >= 0 && fold_old(dirfd, name, base, settle, ctx);
	int fd = -1;
	if (dirfd >= 0) {
		unlinkat(dirfd, tmp, 0);
		fd = openat(dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 && ftruncate(fd, t->len) != 0) {
			close(fd);
			fd = -1;
		}
	}
	if (fd >= 0) {
		t->map = mmap(NULL, t->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		t->mapped = t->map != MAP_FAILED;
		close(fd);
	}
	if (!t->mapped) {
		if (dirfd >= 0)
			warnx_("state %s: the tally of work done cannot be kept: counts after an interruption will be "
			       "those of the last snapshot",
			       dir);
		t->map = xcalloc(1, t->len);
	}
	lay_out(t, base);
	if (t->mapped && renameat(dirfd, tmp, dirfd, name) != 0) {
		munmap(t->map, t->len);
		t->mapped = false;
		t->map = xcalloc(1, t->len);
		lay_out(t, base);
	}
	if (dirfd >= 0)
		close(dirfd);
	return t;
}

struct tally_slot *tally_claim(struct tally *t)
{
	unsigned i = atomic_fetch_add(&t->next, 1);
	return i < t->nslots ? slot_at(t->map, i) : NULL;
}

void tally_add(struct tally_slot *s, unsigned k, uint64_t n)
{
	if (s && n)
		store(&s->c[k], s->c[k] + n);
}

void tally_begin(struct tally_slot *s, unsigned k, const char *a, size_t alen, const char *b, size_t blen)
{
	if (!s)
		return;
	size_t len = alen + (b ? 1 + blen : 0);
	if (len <= TALLY_REC_MAX) {
		memcpy(s->rec, a, alen);
		if (b) {
			s->rec[alen] = '/';
			memcpy(s->rec + alen + 1, b, blen);
		}
	}
	s->rec_len = len;
	s->base = s->c[k];
	store(&s->pending, k + 1); /* last: a record is whole once it is announced */
}

void tally_end(struct tally_slot *s, unsigned k, bool done)
{
	if (!s)
		return;
	if (done)
		store(&s->c[k], s->c[k] + 1);
	store(&s->pending, 0);
}

uint64_t tally_total(const struct tally *t, unsigned k)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < t->nslots; i++)
		n += load(&slot_at(t->map, i)->c[k]);
	return n;
}

void tally_close(struct tally *t)
{
	if (!t)
		return;
	if (t->mapped)
		munmap(t->map, t->len);
	else
		free(t->map);
	free(t);
}
