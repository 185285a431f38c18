/*
 * fill's work unit: the files of one unit (a leaf directory, or part of one) made in order, each
 * created O_EXCL without following links, counted, and timed; what stands in their way is
 * reported and left alone. See fill_int.h.
 */
#include "cmd/fill/fill_int.h"

uint64_t fill_split(const struct layout *lay)
{
	if (lay->leaves >= FILL_MIN_UNITS || lay->leaves == 0) /* 0: an empty fill (-n 0) */
		return 1;
	uint64_t want = (FILL_MIN_UNITS + lay->leaves - 1) / lay->leaves;
	uint64_t most = (lay->fanout + FILL_MIN_PART - 1) / FILL_MIN_PART;
	return want < most ? want : most;
}

uint64_t fill_parts(const struct layout *lay, enum sync_mode sync, int threads)
{
	/* Creates in one directory serialize on its lock: two workers there make no more files than
	 * one, and spin for it. What they do outside the lock runs in parallel: an fsync, or data. */
	if (sync == SYNC_FILE)
		return fill_split(lay);
	if (lay->size_max > 0 && lay->leaves < (uint64_t)threads)
		return fill_split(lay);
	return 1;
}

uint64_t fill_resumed_parts(const struct layout *lay, uint64_t units, int rank, int ranks)
{
	if (units == pool_rank_units(lay->leaves, rank, ranks))
		return 1;
	uint64_t split = fill_split(lay);
	return units == pool_rank_units(lay->leaves * split, rank, ranks) ? split : 0;
}

#define DATA_BUF (1u << 20)

static inline uint64_t timed_since(uint64_t t0, struct hist *h)
{
	uint64_t t1 = now_ns();
	hist_add(h, t1 - t0);
	return t1;
}

/* Make the leaf's directory (and its parents), return an fd for it. Each level is made and opened
 * relative to the one above, never through a symlink: a symlink planted in the tree is not followed
 * out of it. On failure, -1 with errno, *op, and path cut to the directory that failed. */
static int open_leaf(struct fill *f, uint64_t leaf, char *path, const char **op)
{
	size_t len = layout_dir_path(&f->lay, f->lay.depth, leaf, path);
	int fd = dup(f->dirfd);
	for (size_t start = 0, i = 0; fd >= 0 && len && i <= len; i++) {
		if (path[i] != '/' && path[i] != 0)
			continue;
		char c = path[i];
		path[i] = 0;
		int next = -1;
		*op = "mkdir";
		if (mkdirat(fd, path + start, 0755) == 0 || errno == EEXIST) {
			*op = "open";
			next = dir_open_at(fd, path + start, i - start);
		}
		int e = errno;
		close(fd);
		fd = next;
		errno = e;
		if (fd >= 0)
			path[i] = c;
		start = i + 1;
	}
	return fd;
}

/*
 * File i exists already (a resume). *complete when it is a regular file of its size (data is
 * written in order): nothing to do. Else an fd to write it afresh through — only when it is a
 * regular file of one link, the very inode looked at — or -1 with errno: EEXIST when an entry
 * fill did not make is in the way (a symlink, a directory, a hard-linked file...), which is left
 * as it is, so that nothing outside the tree is ever written.
 */
static int reopen_existing(int dfd, const char *name, uint64_t size, bool *complete)
{
	struct stat st, now;
	*complete = false;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return -1;
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size == size) {
		*complete = true;
		return -1;
	}
	int fd = -1;
	if (S_ISREG(st.st_mode) && st.st_nlink == 1) {
		fd = openat(dfd, name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0 && errno != ELOOP)
			return -1;
	}
	if (fd >= 0 && fstat(fd, &now) == 0 && now.st_dev == st.st_dev && now.st_ino == st.st_ino &&
	    now.st_nlink == 1) {
		if (ftruncate(fd, 0) == 0)
			return fd;
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	if (fd >= 0)
		close(fd);
	errno = EEXIST;
	return -1;
}

/* After a failed write, remove the file at name so that a half-written file is never taken for
 * complete — only while name still holds the file written (made: its identity, when known), a
 * regular file of one link: never an entry put there by someone else. */
void fill_remove_made(int dfd, const char *name, const struct stat *made)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
	    (!made || (st.st_dev == made->st_dev && st.st_ino == made->st_ino)))
		unlinkat(dfd, name, 0);
}


static struct tally_slot *fill_slot(struct fill *f, struct local *l)
{
	if (!l->claimed && f->tally)
		l->slot = tally_claim(f->tally);
	l->claimed = true;
	return l->slot;
}

/* Did the run that started at since make file i, which it was making when it was killed: is the
 * file there as fill makes it (a regular file of its size; a half-written one is made again, and
 * counted then), and changed since (not a file there before it)? rec: the index. */
void fill_settle(void *ctx, unsigned counter, const char *rec, size_t len, uint64_t since, uint64_t *totals)
{
	struct fill *f = ctx;
	uint64_t i;
	if (len != sizeof(i))
		return;
	memcpy(&i, rec, sizeof(i));
	char path[1024], name[32];
	size_t plen = layout_dir_path(&f->lay, f->lay.depth, i / f->lay.fanout, path);
	int dfd = dir_open_at(f->dirfd, path, plen);
	if (dfd < 0)
		return;
	layout_file_name(i, name);
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
	    (uint64_t)st.st_size == layout_file_size(&f->lay, i) &&
	    (uint64_t)st.st_ctim.tv_sec * 1000000000u + st.st_ctim.tv_nsec >= since)
		totals[counter]++;
	close(dfd);
}

static int make_file_counted(struct fill *f, struct local *l, int dfd, uint64_t i);

/* Create file i in leaf dir fd, counted in the job's tally once made. 0, or an errno (the file is
 * then absent); EEXIST: an entry fill did not make is in the way, left as it is (reopen_existing). */
static int make_file(struct fill *f, struct local *l, int dfd, uint64_t i)
{
	struct tally_slot *s = fill_slot(f, l);
	uint64_t made = l->created;
	tally_begin(s, T_CREATED, (const char *)&i, sizeof(i), NULL, 0);
	int r = make_file_counted(f, l, dfd, i);
	tally_end(s, T_CREATED, l->created != made);
	return r;
}

static int make_file_counted(struct fill *f, struct local *l, int dfd, uint64_t i)
{
	char name[32];
	layout_file_name(i, name);
	uint64_t size = layout_file_size(&f->lay, i);
	uint64_t t = now_ns();
	int fd = -1;
	if (size == 0 && f->sync != SYNC_FILE) {
		/* One system call per empty file (mknod makes a new entry or fails: it follows no link). */
		if (mknodat(dfd, name, S_IFREG | 0644, 0) == 0) {
			timed_since(t, &l->h[OP_CREATE]);
			l->created++;
			return 0;
		}
	} else {
		fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	}
	if (fd < 0 && errno == EEXIST) {
		bool complete;
		fd = reopen_existing(dfd, name, size, &complete);
		if (complete) {
			l->existing++;
			return 0;
		}
	}
	if (fd < 0)
		return errno;
	t = timed_since(t, &l->h[OP_CREATE]);
	int err = 0;
	for (uint64_t off = 0; off < size && !err;) {
		size_t n = size - off < DATA_BUF ? size - off : DATA_BUF;
		layout_file_data(&f->lay, i, off, l->buf, n);
		ssize_t w = pwrite(fd, l->buf, n, off);
		if (w < 0) {
			err = errno;
			break;
		}
		off += w;
		l->bytes += w;
		t = timed_since(t, &l->h[OP_WRITE]);
	}
	if (!err && f->sync == SYNC_FILE) {
		if (fsync(fd) != 0)
			err = errno;
		t = timed_since(t, &l->h[OP_FSYNC]);
	}
	struct stat made;
	bool known = err && fstat(fd, &made) == 0;
	if (close(fd) != 0 && !err)
		err = errno;
	timed_since(t, &l->h[OP_CLOSE]);
	if (err) {
		fill_remove_made(dfd, name, known ? &made : NULL);
		return err;
	}
	l->created++;
	return 0;
}

/* Report a failure on DIR/dir[/name]. */
static void report(const struct fill *f, struct errbatch *errs, const char *dir, const char *name, const char *op,
		   int err)
{
	struct sbuf p = {0};
	sbuf_printf(&p, "%s%s%s%s%s", f->dir, *dir ? "/" : "", dir, name ? "/" : "", name ? name : "");
	errlog_report(errs, p.data, p.len, op, err);
	sbuf_free(&p);
}

/* This rank's unit u's leaf, and its files [*s0, *s1) counted from the leaf's first. With f->claims (a complete
 * manifest being re-checked) only the files that manifest says exist. */
uint64_t unit_files(const struct fill *f, uint64_t unit, uint64_t *s0, uint64_t *s1)
{
	unit = fill_unit_of(f, unit);
	uint64_t leaf = unit / f->parts, part = unit % f->parts;
	uint64_t n = layout_leaf_files(&f->lay, leaf);
	if (f->claims)
		n = manifest_leaf_files(f->claims, leaf, n);
	uint64_t per = (f->lay.fanout + f->parts - 1) / f->parts;
	*s0 = part * per < n ? part * per : n;
	*s1 = *s0 + per < n ? *s0 + per : n;
	return leaf;
}

/* Is unit the first of those below directory dir (where open_leaf stopped)? A directory in the way
 * is reported once, by that unit, though every unit below it is left out. */
static bool first_below(const struct fill *f, uint64_t unit, const char *dir)
{
	unsigned level = 1;
	for (const char *c = dir; *c; c++)
		level += *c == '/';
	uint64_t span = f->parts;
	for (unsigned k = level; k < f->lay.depth; k++)
		span *= f->lay.fanout;
	return unit % span == 0;
}

int fill_unit(void *ctx, void *lp, uint64_t unit, struct errbatch *errs)
{
	struct fill *f = ctx;
	struct local *l = lp;
	uint64_t s0, s1, leaf = unit_files(f, unit, &s0, &s1);
	if (!l->buf)
		l->buf = xmalloc(DATA_BUF);
	char path[1024];
	const char *op = "open";
	int dfd = open_leaf(f, leaf, path, &op);
	if (dfd < 0) {
		int e = errno;
		if (out_of_room(e))
			return e;
		/* A symlink or a file where a directory of the tree should be: never followed. */
		bool in_way = !strcmp(op, "open") && (e == ENOTDIR || e == ELOOP);
		if (!in_way || first_below(f, fill_unit_of(f, unit), path))
			report(f, errs, path, NULL, op, e);
		if (!in_way)
			return e; /* a fill cannot go on without its directories */
		l->skipped += s1 - s0;
		return 0;
	}
	uint64_t first = leaf * f->lay.fanout;
	uint64_t created0 = l->created, existing0 = l->existing, bytes0 = l->bytes, skipped0 = l->skipped;
	int err = 0;
	for (uint64_t s = s0; s < s1 && !err; s++) {
		if (f->throttled)
			throttle_take(&f->throttle, 1);
		pool_progressed();
		err = make_file(f, l, dfd, first + s);
		if (err && !out_of_room(err)) {
			char name[32];
			layout_file_name(first + s, name);
			report(f, errs, path, name, "create", err);
		}
		if (err == EEXIST) { /* left as it is: the fill goes on, and will not say it is complete */
			l->skipped++;
			err = 0;
		}
	}
	close(dfd);
	if (err) {
		/* The unit stays unfinished and is redone on resume: count none of it now. */
		l->created = created0;
		l->existing = existing0;
		l->bytes = bytes0;
		l->skipped = skipped0;
	}
	return err;
}

void fill_local_free(void *ctx, void *lp)
{
	(void)ctx;
	free(((struct local *)lp)->buf);
}

void fill_commit(void *ctx, void *lp)
{
	struct fill *f = ctx;
	struct local *l = lp;
	f->created += l->created;
	f->existing += l->existing;
	f->bytes += l->bytes;
	f->skipped += l->skipped;
	for (int i = 0; i < OP_N; i++) {
		hist_merge(&f->h[i], &l->h[i]);
		memset(&l->h[i], 0, sizeof(l->h[i]));
	}
	l->created = l->existing = l->bytes = l->skipped = 0;
	if (f->pool)
		timeline_add(&f->tl, pool_elapsed(f->pool), f->created + f->existing);
}

