/*
 * copy_visit: the walk's visitor for myriad copy (engine/walk.h). copy_entry sends each entry to
 * --check, a hard link, a directory made pre-order, or a plain copy; copy_prepare reads small files
 * ahead; copy_dir_done deletes extras and gives a directory its metadata post-order, once its
 * contents are in; copy_commit adds a worker's counts to the command's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cmd/copy/copy_int.h"
#include "io/dir.h"
#include "io/prefetch.h"
#include "io/copy.h"

/* --dry-run: the bytes the real run would copy of file e: its size, less the holes of a file with
 * fewer blocks than its size (opened only then); its size when it cannot be opened. */
static uint64_t copy_dry_bytes(const struct walk_dir *d, const struct walk_entry *e)
{
	const struct statx *s = e->stx;
	struct copy_src src = {s->stx_size, s->stx_blocks, makedev(s->stx_dev_major, s->stx_dev_minor)};
	if (s->stx_blocks * 512 >= s->stx_size)
		return s->stx_size;
	int fd = openat(d->fd, e->name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return s->stx_size;
	uint64_t n = copy_data_bytes(fd, &src);
	close(fd);
	return n;
}

/* --dry-run: a DST directory where SRC has a non-directory, as copy_clear_dst would remove it:
 * with --delete its tree counted as deleted, else only when empty (the real run's rmdir fails on
 * any other, and so is this reported). 0 when it would go; else reported. */
static int copy_dry_clear(struct copy_at *a)
{
	const char *name = a->e->name;
	if (a->c->del)
		return copy_delete_tree(a, name);
	int fd = openat(a->dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int empty = fd < 0 ? -1 : dir_is_empty(fd, NULL), err = empty == 0 ? ENOTEMPTY : errno;
	if (fd >= 0)
		close(fd);
	if (empty == 1 || (empty < 0 && err == ENOENT))
		return 0;
	copy_fail_op(a, name, "rmdir", err);
	return -1;
}

/* --dry-run: count the entry as the real run would count what it does with it: a DST tree in a
 * non-directory's way deleted (with --delete), a later name of a hard-linked file linked, a
 * symlink as a symlink. Nothing is written. */
static bool copy_dry_entry(struct copy_at *a)
{
	const struct walk_entry *e = a->e;
	struct local *l = a->l;
	if (e->type == DT_DIR)
		return false; /* counted in copy_dir_done */
	if (a->have && S_ISDIR(a->have->st_mode) && copy_dry_clear(a) != 0)
		return true; /* the real run cannot make the entry either */
	if (e->stx->stx_nlink > 1 && copy_dry_link(a))
		return false;
	if (a->done)
		l->skipped++;
	else if (e->type == DT_REG)
		l->files++, l->bytes += copy_dry_bytes(a->d, e);
	else if (e->type == DT_LNK)
		l->links++;
	else
		l->others++;
	return false;
}

/* DST's directory of the entry into a->dfd, and what DST has at its name into *st (a->have
 * pointing there, or NULL: nothing). false when the entry cannot be copied (reported). */
static bool find_have(struct copy_at *a, struct stat *st)
{
	struct copy *c = a->c;
	struct local *l = a->l;
	a->dfd = copy_dst_dir(c, l, a->d);
	/* Dry run: a DST directory missing, or a file or link in its place that the real run replaces
	 * by the directory: its entries are all to copy. */
	if (a->dfd < 0 && !(c->dry_run && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP))) {
		/* ENOENT: its parent could not be made (reported there) or, checking, is missing. */
		if (errno != ENOENT)
			copy_fail_op(a, NULL, "open", errno);
		return false;
	}
	if (a->dfd >= 0 && !l->cfresh) { /* (in a fresh directory it is not there yet: see struct local) */
		if (fstatat(a->dfd, a->e->name, st, AT_SYMLINK_NOFOLLOW) == 0) {
			a->have = st;
		} else if (errno != ENOENT) {
			copy_fail_op(a, a->e->name, "stat", errno);
			return false;
		}
	}
	return true;
}

/* A directory, made pre-order (its metadata waits for copy_dir_done): what is in its way goes,
 * and one already there is opened up for its contents. true when it failed (reported). */
static bool make_dir(struct copy_at *a)
{
	const struct stat *have = a->have;
	const char *name = a->e->name;
	if (have && !S_ISDIR(have->st_mode) && unlinkat(a->dfd, name, 0) != 0 && errno != ENOENT) {
		copy_fail_op(a, name, "unlink", errno);
		return true;
	}
	if ((!have || !S_ISDIR(have->st_mode)) && mkdirat(a->dfd, name, 0700) != 0 && errno != EEXIST) {
		copy_fail_op(a, name, "mkdir", errno);
		return true;
	}
	if (have && S_ISDIR(have->st_mode) && !a->c->root && (have->st_mode & 0700) != 0700)
		fchmodat(a->dfd, name, (have->st_mode & 07777) | 0700, AT_SYMLINK_NOFOLLOW); /* (contents go in) */
	return false;
}

bool copy_entry(void *ctx, void *lp, const struct walk_dir *d, const struct walk_entry *e, struct errbatch *errs)
{
	struct copy *c = ctx;
	struct local *l = lp;
	if (!d || !e->stx)
		return false; /* the operand: DST itself, made before the walk */
	if (c->files_pass && e->type != DT_DIR && e->stx->stx_nlink > 1)
		return false; /* its names may be on several ranks: rank 0's pass links them */
	l->seen_entries++;
	if (e->type != DT_REG)
		l->seen_bytes += e->stx->stx_blocks * 512; /* files: as their data moves, or when skipped */
	struct copy_at a = {.c = c, .l = l, .d = d, .e = e, .errs = errs, .dfd = -1, .in = -1, .out = -1};
	struct stat st;
	if (!find_have(&a, &st))
		return true;
	if (c->check)
		return copy_check_entry(&a);
	if (c->files_pass && a.have && S_ISDIR(a.have->st_mode) && e->type != DT_DIR)
		return true; /* a DST tree in its way: rank 0's pass deletes it, counted, within --max-delete */
	a.done = a.have && copy_up_to_date(e->stx, a.have);
	if (c->dry_run)
		return copy_dry_entry(&a);
	if (e->type == DT_DIR)
		return make_dir(&a);
	bool failed = false;
	if (e->stx->stx_nlink > 1 && copy_hard_link(&a, &failed) == 0)
		return failed;
	if (a.done) {
		copy_touch_up(&a);
		if (c->after_files_pass && e->stx->stx_nlink == 1)
			return false; /* the files pass counted it, copied or up to date */
		l->skipped++;
		l->seen_bytes += e->stx->stx_blocks * 512;
		return false;
	}
	return copy_make_entry(&a);
}

/* The next entries of a directory, before they are visited: when they go into a DST directory
 * this run made (nothing there to compare with), open the small files among them and read them
 * all with one submission (io/prefetch.h: adjacent files merge into few disk requests). Files
 * with other links wait for copy_hard_link, which may link them instead. */
void copy_prepare(void *ctx, void *lp, const struct walk_dir *d, const struct walk_entry *es, size_t n)
{
	struct copy *c = ctx;
	struct local *l = lp;
	/* First the last batch goes (its names pointed into a getdents buffer that may have been
	 * reused since: prefetch_take matches by address). */
	if (l->pf)
		prefetch_reset(l->pf);
	if (!c->prefetch || atomic_load(&c->stopping))
		return;
	if (!l->pf) {
		if (l->pf_tried)
			return;
		l->pf_tried = true;
		if (!(l->pf = prefetch_new()))
			return;
	}
	if (copy_dst_dir(c, l, d) < 0) {
		l->cuntold = true; /* the first entry reports why (a failure is never tried twice) */
		return;
	}
	if (!l->cfresh)
		return;
	/* Not files with holes (written whole from the buffer, they would lose them) */
	for (size_t i = 0; i < n; i++) {
		const struct statx *s = es[i].stx;
		if (es[i].type == DT_REG && s && s->stx_nlink == 1 && s->stx_size > 0 &&
		    s->stx_size <= PREFETCH_FILE_MAX && s->stx_blocks * 512 >= s->stx_size &&
		    !prefetch_add(l->pf, d->fd, es[i].name, s->stx_size))
			break;
	}
	prefetch_submit(l->pf);
}

void copy_local_free(void *ctx, void *lp)
{
	struct local *l = lp;
	prefetch_free(l->pf);
	if (l->cvalid && l->cfd >= 0)
		close(l->cfd);
	sbuf_free(&l->cpath);
}

/* Directory a->d's metadata, from sfd, on its DST twin a->dfd, once its contents are in. */
static void dir_meta(struct copy_at *a, int sfd)
{
	struct statx s;
	a->op = "statx";
	if (statx(sfd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &s) == 0) {
		struct xref sx = {sfd, -1, NULL};
		if (copy_set_meta(a, &s, &sx, true) == 0) {
			a->l->dirs++;
			return;
		}
	}
	copy_fail_op(a, NULL, a->op, errno);
}

/* SRC directory d and its DST twin opened again (d->fd may be gone): into *sfd and a->dfd. false
 * when there is nothing to finish (reported, or counted with --dry-run). */
static bool reopen_dirs(struct copy_at *a, int *sfd)
{
	struct copy *c = a->c;
	size_t rl;
	const char *rel = copy_rel_of(a->d, &rl);
	*sfd = dir_open_at(a->d->rootfd, rel, rl);
	if (*sfd < 0) {
		int err = errno;
		struct sbuf p = {0};
		copy_src_path(&p, a->d, NULL);
		if (err == ENOTDIR || err == ELOOP) /* replaced by a file or a symlink since it was read */
			copy_problem(a, &p, c->check ? "changed while compared" : "changed while copied",
				"no longer a directory: the next run copies what is there then");
		else if (err != ENOENT)
			copy_fail(a, &p, "open", err);
		sbuf_free(&p);
		return false;
	}
	if (c->dstfd >= 0)
		a->dfd = dir_open_at(c->dstfd, rel, rl);
	if (a->dfd < 0) {
		/* ENOENT: it could not be made (reported then), or, checking, it is missing (reported). */
		if (c->dstfd >= 0 && errno != ENOENT && !c->dry_run)
			copy_fail_op(a, NULL, "open", errno);
		if (c->dry_run)
			a->l->dirs++;
		return false;
	}
	return true;
}

bool copy_dir_done(void *ctx, void *lp, const struct walk_dir *d, bool keep, struct errbatch *errs)
{
	struct copy *c = ctx;
	struct local *l = lp;
	if (d->unread)
		return false; /* reported when it was read; its DST twin stays unfinished for the next run */
	struct copy_at a = {.c = c, .l = l, .d = d, .errs = errs, .dfd = -1, .in = -1, .out = -1};
	int sfd = -1;
	if (!reopen_dirs(&a, &sfd))
		goto out;
	/* With --xdev, a mount point under SRC is copied as cp -x and rsync -x do: an empty directory
	 * with the metadata of what is mounted there (all that SRC's path shows), its DST contents left
	 * alone by --delete and --check, since nothing under it is copied. */
	bool mount_point = c->xdev && d->mount; /* the engine's word: another filesystem or a bind mount */
	if (c->check) {
		if (!mount_point)
			copy_extras(&a, sfd);
		copy_check_dir(&a, sfd);
		l->dirs++;
		goto out;
	}
	if (c->del && !mount_point && !copy_dst_mount(&a))
		copy_extras(&a, sfd);
	if (c->dry_run)
		l->dirs++;
	else
		dir_meta(&a, sfd);
out:
	if (sfd >= 0)
		close(sfd);
	if (a.dfd >= 0)
		close(a.dfd);
	return false;
}

void copy_commit(void *ctx, void *lp)
{
	struct copy *c = ctx;
	struct local *l = lp;
	c->files += l->files;
	c->dirs += l->dirs;
	c->nlink_made += l->links;
	c->others += l->others;
	c->bytes += l->bytes;
	c->skipped += l->skipped;
	c->deleted += l->deleted;
	c->seen_entries += l->seen_entries;
	c->seen_bytes += l->seen_bytes;
	c->ahead += l->ahead;
	l->ahead = 0;
	l->files = l->dirs = l->links = l->others = l->bytes = l->skipped = l->deleted = 0;
	l->seen_entries = l->seen_bytes = 0;
}
