/*
 * copy_delete: --delete, what DST has that SRC lacks (copy_extras, also --check's "extra" and the
 * count of --dry-run, which walks each tree as its removal would), removed whole (io's
 * remove_tree) within --max-delete, and never across a mount point in DST nor through the working
 * directory or one above it (rm's guard), which are reported and left alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>

#include "cmd/copy/copy_int.h"
#include "io/dir.h"
#include "io/rmtree.h"
#include "util/util.h"

/* --max-delete ran out: say so once; the copy goes on, deleting nothing more, and ends with exit 1. */
static void max_delete_reached(struct copy *c)
{
	if (!atomic_exchange(&c->max_delete_hit, true))
		warnx_("--max-delete %llu reached: nothing more is deleted (the copy goes on; exit 1)",
		       (unsigned long long)c->max_delete);
}

/* Where remove_tree reports a directory it leaves alone. */
struct mount_note {
	struct copy *c;
	const struct walk_dir *d;
	struct errbatch *errs;
	bool told; /* a directory was left alone and reported (else only excluded names stayed) */
};

static void mount_left_alone(struct copy *c, struct errbatch *errs, const struct sbuf *path)
{
	copy_problem(c, errs, path, "mount point left alone",
		"--delete never enters nor removes a mount in DST: unmount it to have it deleted");
}

/* A directory remove_tree left alone: a mount point, or one of the guard's (GUARD_CWD). */
static void note_left_alone(void *arg, const char *rel, size_t len, enum guard_verdict v)
{
	struct mount_note *m = arg;
	struct sbuf p = {0};
	m->told = true;
	copy_dst_path(&p, m->c, m->d, NULL);
	sbuf_addc(&p, '/');
	sbuf_add(&p, rel, len);
	if (v == GUARD_OK)
		mount_left_alone(m->c, m->errs, &p);
	else
		copy_problem(m->c, m->errs, &p, "not deleted", guard_rule(v));
	sbuf_free(&p);
}

/* Delete name in DST directory dfd (of d) and all under it, as --delete does: every entry counted
 * and taken from --max-delete, nothing under a mount point. With --dry-run the same walk deletes
 * nothing, so that its count is the real run's. 0, or -1 (reported). */
int copy_delete_tree(struct copy *c, struct local *l, const struct walk_dir *d, int dfd, const char *name,
		     struct errbatch *errs)
{
	struct mount_note note = {c, d, errs, false};
	struct rm_tree t = {.budget = c->max_delete_set ? &c->delete_budget : NULL,
			    .mnt = c->dst_mnt,
			    .guard = &c->guard,
			    .keep = &c->excl,
			    .left_alone = note_left_alone,
			    .arg = &note,
			    .count_only = c->dry_run};
	int rc = remove_tree(dfd, name, &t);
	int err = errno;
	l->deleted += t.removed;
	tally_add(copy_slot(c, l), T_DELETED, t.removed);
	if (rc != 0 && err == ECANCELED) {
		max_delete_reached(c);
	} else if (rc != 0 && !t.kept && err != ENOENT) { /* (a mount point kept it: said already) */
		struct sbuf p = {0};
		copy_dst_path(&p, c, d, t.where.data);
		copy_fail(c, errs, &p, t.op, err);
		sbuf_free(&p);
	}
	sbuf_free(&t.where);
	/* Only excluded names stayed (with the directories above them): what --delete may do is done;
	 * a SRC entry that needed the place then fails to be made, and says so. */
	bool excluded_only = rc != 0 && t.kept && !note.told;
	return rc == 0 || err == ENOENT || excluded_only ? 0 : -1;
}

/* --delete / --check: entries of DST directory dfd that SRC directory sfd lacks. */
void copy_extras(struct copy *c, struct local *l, const struct walk_dir *d, int sfd, int dfd, struct errbatch *errs)
{
	char buf[65536];
	struct sbuf p = {0};
	ssize_t n;
	struct stat st;
	while ((n = dir_read(dfd, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n;) {
			const struct linux_dirent64 *de = (const void *)(buf + off);
			off += de->d_reclen;
			if (dir_is_dot(de->d_name) || copy_excluded(c, dfd, de->d_name, de->d_type) ||
			    fstatat(sfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
				continue;
			copy_dst_path(&p, c, d, de->d_name);
			if (c->check)
				copy_problem(c, errs, &p, "extra", "not in SRC");
			else
				copy_delete_tree(c, l, d, dfd, de->d_name, errs);
		}
	}
	sbuf_free(&p);
}

/* Is DST directory dfd (of d) on another mount than DST, so --delete leaves it alone? Its root is
 * reported (what lies below it is not entered, nor reported again). */
bool copy_dst_mount(struct copy *c, const struct walk_dir *d, int dfd, struct errbatch *errs)
{
	struct fs_id here, up;
	if (d->pathlen == d->relstart || fs_identity(dfd, "", &here) != 0 || here.mnt == c->dst_mnt)
		return false;
	if (fs_identity(dfd, "..", &up) == 0 && up.mnt != here.mnt) {
		struct sbuf p = {0};
		copy_dst_path(&p, c, d, NULL);
		mount_left_alone(c, errs, &p);
		sbuf_free(&p);
	}
	return true;
}
