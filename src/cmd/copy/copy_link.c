/*
 * copy_link: hard links. The first name of an inode with more links is remembered (state/linkmap,
 * which spills to a file past --link-memory); each later name is linked to its DST twin, or with
 * --check compared with it. All under link_lock, so that a later name never finds a half-made first.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cmd/copy/copy_int.h"
#include "io/dir.h"
#include "util/util.h"

/* Open the directory of target (a path relative to DST) and stat target there: the directory's
 * fd with *tname its last component and *ts filled, or -1 with errno (fd closed). */
static int stat_in_dst(struct copy *c, const char *target, size_t tlen, const char **tname, struct stat *ts)
{
	const char *slash = memrchr(target, '/', tlen);
	*tname = slash ? slash + 1 : target;
	int tfd = dir_open_at(c->dstfd, target, slash ? (size_t)(slash - target) : 0);
	if (tfd >= 0 && fstatat(tfd, *tname, ts, AT_SYMLINK_NOFOLLOW) != 0) {
		int e = errno;
		close(tfd);
		errno = e;
		return -1;
	}
	return tfd;
}

/* Make name in dfd a hard link to target, a path relative to DST (unless it already is one). 0 or -1
 * with errno. */
static int link_to(struct copy *c, const char *target, size_t tlen, int dfd, const char *name, const struct stat *have,
		   bool *skipped)
{
	const char *tname;
	struct stat ts;
	int tfd = stat_in_dst(c, target, tlen, &tname, &ts);
	if (tfd < 0)
		return -1;
	int rc = 0;
	if (have && have->st_ino == ts.st_ino && have->st_dev == ts.st_dev)
		*skipped = true;
	else if (have && !S_ISDIR(have->st_mode) && unlinkat(dfd, name, 0) != 0 && errno != ENOENT)
		rc = -1;
	else
		rc = linkat(tfd, tname, dfd, name, 0);
	int e = errno;
	close(tfd);
	errno = e;
	return rc;
}

/* The hard-link map failed (its spill file): say so once; the links concerned become copies. */
static void link_map_failed(struct copy *c, int err)
{
	if (!atomic_exchange(&c->link_failed_said, true))
		warnx_("hard-link map: spill file in %s: %s: hard links not yet seen are copied as separate files",
		       c->link_dir ? c->link_dir : "$TMPDIR", strerror(err));
}

/* Remember the first DST name of an inode with more links to come. false when it cannot be. */
static bool link_add(struct copy *c, uint64_t dev, uint64_t ino, uint32_t left, const struct walk_dir *d,
		     const char *name)
{
	size_t rl;
	const char *rel = copy_rel_of(d, &rl);
	struct sbuf *b = &c->link_path;
	sbuf_clear(b);
	sbuf_add(b, rel, rl);
	if (rl)
		sbuf_addc(b, '/');
	sbuf_adds(b, name);
	if (linkmap_add(c->links, dev, ino, left, b->data, b->len) == 0)
		return true;
	link_map_failed(c, errno);
	return false;
}

/* An entry with more links: link it to its inode's first DST name, or be that first name.
 * Returns 0 when handled (*failed set), 1 when the caller copies it as a plain entry. */
int copy_hard_link(struct copy *c, struct local *l, const struct walk_dir *d, const struct walk_entry *e, int dfd,
		   const struct stat *have, bool done, struct errbatch *errs, bool *failed)
{
	const struct statx *s = e->stx;
	uint64_t dev = makedev(s->stx_dev_major, s->stx_dev_minor);
	*failed = false;
	pthread_mutex_lock(&c->link_lock);
	int found = linkmap_take(c->links, dev, s->stx_ino, &c->link_path);
	if (found < 0)
		link_map_failed(c, errno);
	if (found > 0) {
		bool skipped = false;
		struct tally_slot *slot = copy_announce(c, l, T_FILES, d, e->name);
		int rc = link_to(c, c->link_path.data, c->link_path.len, dfd, e->name, have, &skipped);
		int err = errno;
		tally_end(slot, T_FILES, rc == 0 && !skipped);
		pthread_mutex_unlock(&c->link_lock);
		if (rc != 0) {
			struct sbuf b = {0};
			copy_dst_path(&b, c, d, e->name);
			copy_fail(c, errs, &b, "link", err);
			sbuf_free(&b);
			*failed = true;
		} else if (skipped) {
			l->skipped++;
		} else {
			l->files++;
		}
		return 0;
	}
	bool added = link_add(c, dev, s->stx_ino, s->stx_nlink - 1, d, e->name);
	if (!added || done || !S_ISREG(s->stx_mode)) {
		/* Not a file to fill: finishing it under the lock keeps later links from racing it. */
		if (done)
			l->skipped++;
		else if (added)
			*failed = copy_make_entry(c, l, d, e, dfd, have, errs);
		pthread_mutex_unlock(&c->link_lock);
		return added ? 0 : 1;
	}
	/* A file: create it under the lock (so later links find it), fill it outside. */
	const char *op = "unlink";
	int out = -1;
	int in = copy_open_src(c, l, d, e, errs);
	if (in < 0) {
		pthread_mutex_unlock(&c->link_lock);
		*failed = true;
		return 0;
	}
	unsigned has = copy_given_meta(c, l, e->stx);
	int rc = copy_clear_dst(c, l, d, dfd, e->name, have, errs, &op);
	if (rc == 0 && copy_create_entry(d, e, dfd, has, &out, &op) != 0)
		rc = -1;
	int err = errno;
	pthread_mutex_unlock(&c->link_lock);
	if (rc != 0) {
		struct sbuf b = {0};
		copy_dst_path(&b, c, d, e->name);
		if (rc < 0)
			copy_fail(c, errs, &b, op, err);
		sbuf_free(&b);
		close(in);
		*failed = true;
		return 0;
	}
	*failed = copy_fill_file(c, l, d, e, dfd, in, out, has, errs);
	return 0;
}

/* --dry-run's count of a name of an inode with more links, as copy_hard_link would count it: a
 * later name is linked (a file, no bytes), or up to date when DST's name (have) already is the
 * twin of the first name and that twin stays. The first name is remembered with its DST path when
 * it is up to date (done), else with an empty one: copied anew, it will have no other DST name
 * yet. true when counted here; false: count it as a plain entry. */
bool copy_dry_link(struct copy *c, struct local *l, const struct walk_dir *d, const struct walk_entry *e,
		   const struct stat *have, bool done)
{
	const struct statx *s = e->stx;
	uint64_t dev = makedev(s->stx_dev_major, s->stx_dev_minor);
	pthread_mutex_lock(&c->link_lock);
	int found = linkmap_take(c->links, dev, s->stx_ino, &c->link_path);
	if (found < 0) {
		link_map_failed(c, errno);
	} else if (found > 0) {
		const char *tname;
		struct stat ts;
		int tfd = c->link_path.len ? stat_in_dst(c, c->link_path.data, c->link_path.len, &tname, &ts) : -1;
		if (tfd >= 0 && have && have->st_ino == ts.st_ino && have->st_dev == ts.st_dev)
			l->skipped++;
		else
			l->files++;
		if (tfd >= 0)
			close(tfd);
	} else if (done) {
		link_add(c, dev, s->stx_ino, s->stx_nlink - 1, d, e->name);
	} else if (linkmap_add(c->links, dev, s->stx_ino, s->stx_nlink - 1, "", 0) != 0) {
		link_map_failed(c, errno);
	}
	pthread_mutex_unlock(&c->link_lock);
	return found > 0;
}

/* A SRC inode with more names: is DST's name (have) the same inode as DST's twin of its first
 * SRC name? NULL when it is (or it is the first), else what differs. Under link_lock. */
const char *copy_check_links(struct copy *c, const struct walk_dir *d, const struct walk_entry *e,
			     const struct stat *have)
{
	const struct statx *s = e->stx;
	uint64_t dev = makedev(s->stx_dev_major, s->stx_dev_minor);
	const char *what = NULL;
	pthread_mutex_lock(&c->link_lock);
	int found = linkmap_take(c->links, dev, s->stx_ino, &c->link_path);
	if (found < 0) {
		link_map_failed(c, errno);
	} else if (found == 0) {
		link_add(c, dev, s->stx_ino, s->stx_nlink - 1, d, e->name);
	} else {
		const char *tname;
		struct stat ts;
		int tfd = stat_in_dst(c, c->link_path.data, c->link_path.len, &tname, &ts);
		if (tfd < 0 || ts.st_ino != have->st_ino || ts.st_dev != have->st_dev)
			what = "not hard-linked as in SRC";
		if (tfd >= 0)
			close(tfd);
	}
	pthread_mutex_unlock(&c->link_lock);
	return what;
}
