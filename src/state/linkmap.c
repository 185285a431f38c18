/*
 * linkmap: pending hard links in bounded memory, spilling to disk (see linkmap.h).
 *
 * Two tiers; an entry lives in exactly one. Memory: a chained hash table whose buckets and entries
 * are charged to the budget; the table starts small and doubles as entries come (up to about an
 * eighth of the budget), so a map that holds few entries costs little memory, also to free.
 * Disk, used once memory is full: an open-addressing hash table of fixed 32-byte records (linear
 * probing, read a 4 KiB block at a time) in one unlinked file, the paths appended to another. A
 * record whose links are all seen becomes a tombstone; when live records and tombstones fill 70%
 * of the slots, both files are rewritten (live entries only, twice the slots when they are many),
 * so the disk use follows the entries pending, not the entries ever seen.
 */
#include "state/linkmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"

struct mlink {
	struct mlink *next;
	uint64_t dev, ino;
	uint32_t left, len;
	char path[];
};

/* A disk slot. off is 1 + the path's offset in the paths file; 0 marks an empty slot, left == 0
 * with off != 0 a tombstone. */
struct drec {
	uint64_t dev, ino, off;
	uint32_t left, len;
};

#define BLOCK_RECS (4096 / sizeof(struct drec))
#define FIRST_SLOTS 4096u
#define MALLOC_OVERHEAD 16 /* what an allocation costs beyond its size, roughly */
#define FIRST_BUCKETS 64u  /* the memory table's first size; it doubles when entries outnumber it */

struct disk {
	int tab, paths;
	uint64_t nslots, used, live, paths_len;
};

struct linkmap {
	uint64_t budget, mem;
	struct mlink **buckets;
	size_t nbuckets, maxbuckets;
	uint64_t count, spilled;   /* count: entries in memory and live on disk (d.live) */
	char *dir;
	struct disk d; /* tab < 0: no spill yet */
	struct drec block[BLOCK_RECS];
};

static uint64_t hash(uint64_t dev, uint64_t ino)
{
	uint64_t h = (ino ^ (dev << 32 | dev >> 32)) * 0x9E3779B97F4A7C15ull;
	return h ^ h >> 29;
}

struct linkmap *linkmap_new(uint64_t budget, const char *spill_dir)
{
	struct linkmap *m = xcalloc(1, sizeof(*m));
	m->budget = budget;
	/* At most about an eighth of the budget for buckets, which are charged to it. */
	size_t nb = 16;
	while (nb < (1u << 20) && nb * 2 * sizeof(*m->buckets) * 8 <= budget)
		nb *= 2;
	m->maxbuckets = nb;
	m->nbuckets = nb < FIRST_BUCKETS ? nb : FIRST_BUCKETS;
	m->buckets = xcalloc(m->nbuckets, sizeof(*m->buckets));
	m->mem = m->nbuckets * sizeof(*m->buckets);
	const char *tmp = getenv("TMPDIR");
	m->dir = xstrdup(spill_dir ? spill_dir : tmp && *tmp ? tmp : "/tmp");
	m->d.tab = m->d.paths = -1;
	return m;
}

static void disk_close(struct disk *d)
{
	if (d->tab >= 0)
		close(d->tab);
	if (d->paths >= 0)
		close(d->paths);
	d->tab = d->paths = -1;
}

void linkmap_free(struct linkmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nbuckets; i++)
		for (struct mlink *k = m->buckets[i], *next; k; k = next) {
			next = k->next;
			free(k);
		}
	free(m->buckets);
	disk_close(&m->d);
	free(m->dir);
	free(m);
}

uint64_t linkmap_count(const struct linkmap *m) { return m->count; }
uint64_t linkmap_spilled(const struct linkmap *m) { return m->spilled; }
uint64_t linkmap_memory(const struct linkmap *m) { return m->mem; }

static uint64_t mem_cost(size_t len) { return sizeof(struct mlink) + len + 1 + MALLOC_OVERHEAD; }

/* ---- the disk tier ---- */

/* An unlinked temporary file in dir: fd, or -1 with errno. */
static int temp_file(const char *dir)
{
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd;
	char p[4096];
	snprintf(p, sizeof(p), "%s/myriad-links.XXXXXX", dir);
	fd = mkostemp(p, O_CLOEXEC);
	if (fd >= 0)
		unlink(p);
	return fd;
}

static int disk_open(struct disk *d, const char *dir, uint64_t nslots)
{
	memset(d, 0, sizeof(*d));
	d->tab = temp_file(dir);
	d->paths = d->tab < 0 ? -1 : temp_file(dir);
	if (d->paths < 0 || ftruncate(d->tab, (off_t)(nslots * sizeof(struct drec))) != 0) {
		int e = errno;
		disk_close(d);
		errno = e;
		return -1;
	}
	d->nslots = nslots;
	return 0;
}

static int read_full(int fd, void *buf, size_t n, uint64_t off)
{
	ssize_t r = pread_all(fd, buf, n, off);
	if (r >= 0 && (size_t)r < n)
		errno = EIO; /* the file is never shorter than what was written */
	return r >= 0 && (size_t)r == n ? 0 : -1;
}

/*
 * Probe d for (dev, ino), reading blocks into buf. With insert, stop at the first free slot (empty
 * or tombstone); otherwise at the live record that matches, or an empty slot (not found). The slot
 * is in *slot and its record in *rec. Returns 1 found / free slot, 0 not found, -1 with errno.
 */
static int disk_probe(struct disk *d, struct drec *buf, uint64_t dev, uint64_t ino, bool insert, uint64_t *slot,
		      struct drec *rec)
{
	uint64_t mask = d->nslots - 1, i = hash(dev, ino) & mask, loaded = UINT64_MAX;
	for (uint64_t n = 0; n < d->nslots; n++, i = (i + 1) & mask) {
		uint64_t blk = i / BLOCK_RECS;
		if (blk != loaded) {
			uint64_t first = blk * BLOCK_RECS;
			size_t recs = d->nslots - first < BLOCK_RECS ? d->nslots - first : BLOCK_RECS;
			if (read_full(d->tab, buf, recs * sizeof(*buf), first * sizeof(*buf)) != 0)
				return -1;
			loaded = blk;
		}
		const struct drec *r = &buf[i % BLOCK_RECS];
		bool empty = r->off == 0, live = !empty && r->left > 0;
		if (insert ? !live : empty || (live && r->dev == dev && r->ino == ino)) {
			*slot = i;
			*rec = *r;
			return insert || !empty;
		}
	}
	return 0; /* a full table: never, the load stays under 70% */
}

/* Put a record whose path is already in d's paths file into a free slot. */
static int disk_place(struct disk *d, struct drec *buf, const struct drec *rec)
{
	uint64_t slot;
	struct drec old;
	if (disk_probe(d, buf, rec->dev, rec->ino, true, &slot, &old) != 1)
		return -1;
	if (pwrite_all(d->tab, rec, sizeof(*rec), slot * sizeof(*rec)) != 0)
		return -1;
	if (old.off == 0)
		d->used++;
	d->live++;
	return 0;
}

/* Rewrite the table with its live records only, into nslots slots. */
static int disk_rebuild(struct linkmap *m, uint64_t nslots)
{
	struct disk *old = &m->d, new;
	if (disk_open(&new, m->dir, nslots) != 0)
		return -1;
	struct drec *scan = xmalloc(BLOCK_RECS * sizeof(*scan));
	struct sbuf path = {0};
	int rc = 0;
	for (uint64_t first = 0; first < old->nslots && rc == 0; first += BLOCK_RECS) {
		size_t recs = old->nslots - first < BLOCK_RECS ? old->nslots - first : BLOCK_RECS;
		rc = read_full(old->tab, scan, recs * sizeof(*scan), first * sizeof(*scan));
		for (size_t i = 0; i < recs && rc == 0; i++) {
			struct drec r = scan[i];
			if (r.off == 0 || r.left == 0)
				continue;
			sbuf_clear(&path);
			sbuf_reserve(&path, r.len);
			rc = read_full(old->paths, path.data, r.len, r.off - 1);
			if (rc == 0)
				rc = pwrite_all(new.paths, path.data, r.len, new.paths_len);
			r.off = new.paths_len + 1;
			new.paths_len += r.len;
			if (rc == 0)
				rc = disk_place(&new, m->block, &r);
		}
	}
	int e = errno;
	free(scan);
	sbuf_free(&path);
	if (rc != 0) {
		disk_close(&new);
		errno = e;
		return -1;
	}
	disk_close(old);
	*old = new;
	return 0;
}

static int disk_add(struct linkmap *m, uint64_t dev, uint64_t ino, uint32_t left, const char *path, size_t len)
{
	struct disk *d = &m->d;
	if (d->tab < 0 && disk_open(d, m->dir, FIRST_SLOTS) != 0)
		return -1;
	if ((d->used + 1) * 10 > d->nslots * 7) {
		uint64_t n = d->nslots;
		while ((d->live + 1) * 20 > n * 7) /* at most 35% full after the rebuild */
			n *= 2;
		if (disk_rebuild(m, n) != 0)
			return -1;
	}
	struct drec r = {dev, ino, d->paths_len + 1, left, (uint32_t)len};
	if (pwrite_all(d->paths, path, len, d->paths_len) != 0)
		return -1;
	d->paths_len += len;
	return disk_place(d, m->block, &r);
}

static int disk_take(struct linkmap *m, uint64_t dev, uint64_t ino, struct sbuf *path)
{
	struct disk *d = &m->d;
	uint64_t slot;
	struct drec r;
	int found = disk_probe(d, m->block, dev, ino, false, &slot, &r);
	if (found <= 0)
		return found;
	sbuf_clear(path);
	sbuf_reserve(path, r.len + 1);
	if (read_full(d->paths, path->data, r.len, r.off - 1) != 0)
		return -1;
	path->len = r.len;
	path->data[r.len] = 0;
	r.left--; /* at zero: a tombstone */
	if (pwrite_all(d->tab, &r, sizeof(r), slot * sizeof(r)) != 0)
		return -1;
	if (r.left == 0)
		d->live--;
	return 1;
}

/* ---- the map ---- */

int linkmap_take(struct linkmap *m, uint64_t dev, uint64_t ino, struct sbuf *path)
{
	struct mlink **p = &m->buckets[hash(dev, ino) & (m->nbuckets - 1)];
	while (*p && ((*p)->dev != dev || (*p)->ino != ino))
		p = &(*p)->next;
	struct mlink *k = *p;
	if (k) {
		sbuf_clear(path);
		sbuf_add(path, k->path, k->len);
		sbuf_addc(path, 0);
		path->len--;
		if (--k->left == 0) {
			*p = k->next;
			m->mem -= mem_cost(k->len);
			free(k);
			m->count--;
		}
		return 1;
	}
	if (m->d.tab < 0 || m->d.live == 0)
		return 0;
	uint64_t live = m->d.live;
	int r = disk_take(m, dev, ino, path);
	m->count -= live - m->d.live;
	return r;
}

/* Double the memory table when its entries outnumber its buckets, while the budget allows. */
static void grow(struct linkmap *m)
{
	size_t nb = m->nbuckets * 2;
	uint64_t more = (nb - m->nbuckets) * sizeof(*m->buckets);
	uint64_t in_memory = m->count - m->d.live;
	if (in_memory < m->nbuckets || nb > m->maxbuckets || m->mem + more > m->budget)
		return;
	struct mlink **b = xcalloc(nb, sizeof(*b));
	for (size_t i = 0; i < m->nbuckets; i++)
		for (struct mlink *k = m->buckets[i], *next; k; k = next) {
			next = k->next;
			struct mlink **to = &b[hash(k->dev, k->ino) & (nb - 1)];
			k->next = *to;
			*to = k;
		}
	free(m->buckets);
	m->buckets = b;
	m->nbuckets = nb;
	m->mem += more;
}

int linkmap_add(struct linkmap *m, uint64_t dev, uint64_t ino, uint32_t left, const char *path, size_t len)
{
	grow(m);
	if (m->mem + mem_cost(len) > m->budget || len > UINT32_MAX) {
		if (disk_add(m, dev, ino, left, path, len) != 0)
			return -1;
		m->spilled++;
		m->count++;
		return 0;
	}
	struct mlink *k = xmalloc(sizeof(*k) + len + 1);
	k->dev = dev;
	k->ino = ino;
	k->left = left;
	k->len = (uint32_t)len;
	memcpy(k->path, path, len);
	k->path[len] = 0;
	struct mlink **b = &m->buckets[hash(dev, ino) & (m->nbuckets - 1)];
	k->next = *b;
	*b = k;
	m->mem += mem_cost(len);
	m->count++;
	return 0;
}
