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

/* Open the directory of c->link_path (a path relative to DST) and stat that path there: the
 * directory's fd with *tname its last component and *ts filled, or -1 with errno (fd closed). */
static int stat_in_dst(struct copy *c, const char **tname, struct stat *ts)
{
	const char *target = c->link_path.data;
	size_t tlen = c->link_path.len;
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

/* Make the entry's name in a->dfd a hard link to c->link_path, its inode's first DST name (unless
 * it already is one: *skipped). 0 or -1 with errno. */
static int link_to(const struct copy_at *a, bool *skipped)
{
	const struct stat *have = a->have;
	const char *tname;
	struct stat ts;
	int tfd = stat_in_dst(a->c, &tname, &ts);
	if (tfd < 0)
		return -1;
	int rc = 0;
	if (have && have->st_ino == ts.st_ino && have->st_dev == ts.st_dev)
		*skipped = true;
	else if (have && !S_ISDIR(have->st_mode) && unlinkat(a->dfd, a->e->name, 0) != 0 && errno != ENOENT)
		rc = -1;
	else
		rc = linkat(tfd, tname, a->dfd, a->e->name, 0);
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

/* The device of the entry's inode: with its inode number, its key in the link map. */
static uint64_t entry_dev(const struct copy_at *a)
{
	return makedev(a->e->stx->stx_dev_major, a->e->stx->stx_dev_minor);
}

/* Remember the entry's DST name as the first of its inode, with more links to come. false when it
 * cannot be. */
static bool link_add(const struct copy_at *a)
{
	struct copy *c = a->c;
	const struct statx *s = a->e->stx;
	size_t rl;
	const char *rel = copy_rel_of(a->d, &rl);
	struct sbuf *b = &c->link_path;
	sbuf_clear(b);
	sbuf_add(b, rel, rl);
	if (rl)
		sbuf_addc(b, '/');
	sbuf_adds(b, a->e->name);
	if (linkmap_add(c->links, entry_dev(a), s->stx_ino, s->stx_nlink - 1, b->data, b->len) == 0)
		return true;
	link_map_failed(c, errno);
	return false;
}

/* A later name of an inode whose first DST name is c->link_path: link it there. Called under
 * link_lock, which it releases (before reporting). true when it failed. */
static bool link_later(struct copy_at *a)
{
	bool skipped = false;
	struct tally_slot *slot = copy_announce(a, T_FILES);
	int rc = link_to(a, &skipped);
	int err = errno;
	tally_end(slot, T_FILES, rc == 0 && !skipped);
	pthread_mutex_unlock(&a->c->link_lock);
	if (rc != 0) {
		copy_fail_op(a, a->e->name, "link", err);
		return true;
	}
	if (skipped)
		a->l->skipped++;
	else
		a->l->files++;
	return false;
}

/* The first name of an inode with more links, a file to copy: create it under link_lock (so that
 * later links find it), which it releases, and fill it outside. true when it failed. */
static bool link_first_file(struct copy_at *a)
{
	a->op = "unlink";
	a->out = -1;
	if (copy_open_src(a) < 0) {
		pthread_mutex_unlock(&a->c->link_lock);
		return true;
	}
	a->has = copy_given_meta(a);
	int rc = copy_clear_dst(a);
	if (rc == 0 && copy_create_entry(a) != 0)
		rc = -1;
	int err = errno;
	pthread_mutex_unlock(&a->c->link_lock);
	if (rc != 0) {
		if (rc < 0) { /* (DST's path whatever the operation: all of them are on DST here) */
			struct sbuf b = {0};
			copy_dst_path(&b, a->c, a->d, a->e->name);
			copy_fail(a, &b, a->op, err);
			sbuf_free(&b);
		}
		close(a->in);
		return true;
	}
	return copy_fill_file(a);
}

/* An entry with more links: link it to its inode's first DST name, or be that first name.
 * Returns 0 when handled (*failed set), 1 when the caller copies it as a plain entry. */
int copy_hard_link(struct copy_at *a, bool *failed)
{
	struct copy *c = a->c;
	const struct statx *s = a->e->stx;
	*failed = false;
	pthread_mutex_lock(&c->link_lock);
	int found = linkmap_take(c->links, entry_dev(a), s->stx_ino, &c->link_path);
	if (found < 0)
		link_map_failed(c, errno);
	if (found > 0) {
		*failed = link_later(a);
		return 0;
	}
	bool added = link_add(a);
	if (!added || a->done || !S_ISREG(s->stx_mode)) {
		/* Not a file to fill: finishing it under the lock keeps later links from racing it. */
		if (a->done)
			a->l->skipped++;
		else if (added)
			*failed = copy_make_entry(a);
		pthread_mutex_unlock(&c->link_lock);
		return added ? 0 : 1;
	}
	*failed = link_first_file(a);
	return 0;
}

/* --dry-run's count of a name of an inode with more links, as copy_hard_link would count it: a
 * later name is linked (a file, no bytes), or up to date when DST's name (a->have) already is the
 * twin of the first name and that twin stays. The first name is remembered with its DST path when
 * it is up to date (a->done), else with an empty one: copied anew, it will have no other DST name
 * yet. true when counted here; false: count it as a plain entry. */
bool copy_dry_link(const struct copy_at *a)
{
	struct copy *c = a->c;
	const struct statx *s = a->e->stx;
	const struct stat *have = a->have;
	pthread_mutex_lock(&c->link_lock);
	int found = linkmap_take(c->links, entry_dev(a), s->stx_ino, &c->link_path);
	if (found < 0) {
		link_map_failed(c, errno);
	} else if (found > 0) {
		const char *tname;
		struct stat ts;
		int tfd = c->link_path.len ? stat_in_dst(c, &tname, &ts) : -1;
		if (tfd >= 0 && have && have->st_ino == ts.st_ino && have->st_dev == ts.st_dev)
			a->l->skipped++;
		else
			a->l->files++;
		if (tfd >= 0)
			close(tfd);
	} else if (a->done) {
		link_add(a);
	} else if (linkmap_add(c->links, entry_dev(a), s->stx_ino, s->stx_nlink - 1, "", 0) != 0) {
		link_map_failed(c, errno);
	}
	pthread_mutex_unlock(&c->link_lock);
	return found > 0;
}

/* A SRC inode with more names: is DST's name (a->have) the same inode as DST's twin of its first
 * SRC name? NULL when it is (or it is the first), else what differs. Under link_lock. */
const char *copy_check_links(const struct copy_at *a)
{
	struct copy *c = a->c;
	const struct statx *s = a->e->stx;
	const char *what = NULL;
	pthread_mutex_lock(&c->link_lock);
	int found = linkmap_take(c->links, entry_dev(a), s->stx_ino, &c->link_path);
	if (found < 0) {
		link_map_failed(c, errno);
	} else if (found == 0) {
		link_add(a);
	} else {
		const char *tname;
		struct stat ts;
		int tfd = stat_in_dst(c, &tname, &ts);
		if (tfd < 0 || ts.st_ino != a->have->st_ino || ts.st_dev != a->have->st_dev)
			what = "not hard-linked as in SRC";
		if (tfd >= 0)
			close(tfd);
	}
	pthread_mutex_unlock(&c->link_lock);
	return what;
}
