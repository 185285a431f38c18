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

/* What remove_tree is told to report to: the directory the removed tree is in, and whether it
 * reported anything (else only excluded names stayed). */
struct left_note {
	const struct copy_at *a;
	bool told;
};

static void mount_left_alone(const struct copy_at *a, const struct sbuf *path)
{
	copy_problem(a, path, "mount point left alone",
		"--delete never enters nor removes a mount in DST: unmount it to have it deleted");
}

/* A directory remove_tree left alone: a mount point, or one of the guard's (GUARD_CWD). arg: a
 * struct left_note. */
static void note_left_alone(void *arg, const char *rel, size_t len, enum guard_verdict v)
{
	struct left_note *note = arg;
	const struct copy_at *a = note->a;
	struct sbuf p = {0};
	note->told = true;
	copy_dst_path(&p, a->c, a->d, NULL);
	sbuf_addc(&p, '/');
	sbuf_add(&p, rel, len);
	if (v == GUARD_OK)
		mount_left_alone(a, &p);
	else
		copy_problem(a, &p, "not deleted", guard_rule(v));
	sbuf_free(&p);
}

/* Delete name in DST directory a->dfd and all under it, as --delete does: every entry counted
 * and taken from --max-delete, nothing under a mount point. With --dry-run the same walk deletes
 * nothing, so that its count is the real run's. 0, or -1 (reported). */
int copy_delete_tree(struct copy_at *a, const char *name)
{
	struct copy *c = a->c;
	struct left_note note = {a, false};
	struct rm_tree t = {.budget = c->max_delete_set ? &c->delete_budget : NULL,
			    .mnt = c->dst_mnt,
			    .guard = &c->guard,
			    .keep = &c->excl,
			    .left_alone = note_left_alone,
			    .arg = &note,
			    .count_only = c->dry_run};
	int rc = remove_tree(a->dfd, name, &t);
	int err = errno;
	a->l->deleted += t.removed;
	tally_add(copy_slot(c, a->l), T_DELETED, t.removed);
	if (rc != 0 && err == ECANCELED) {
		max_delete_reached(c);
	} else if (rc != 0 && !t.kept && err != ENOENT) { /* (a mount point kept it: said already) */
		struct sbuf p = {0};
		copy_dst_path(&p, c, a->d, t.where.data);
		copy_fail(a, &p, t.op, err);
		sbuf_free(&p);
	}
	sbuf_free(&t.where);
	/* Only excluded names stayed (with the directories above them): what --delete may do is done;
	 * a SRC entry that needed the place then fails to be made, and says so. */
	bool excluded_only = rc != 0 && t.kept && !note.told;
	return rc == 0 || err == ENOENT || excluded_only ? 0 : -1;
}

/* --delete / --check: entries of DST directory a->dfd that SRC directory sfd lacks. */
void copy_extras(struct copy_at *a, int sfd)
{
	struct copy *c = a->c;
	char buf[65536];
	struct sbuf p = {0};
	ssize_t n;
	struct stat st;
	while ((n = dir_read(a->dfd, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n;) {
			const struct linux_dirent64 *de = (const void *)(buf + off);
			off += de->d_reclen;
			if (dir_is_dot(de->d_name) || copy_excluded(c, a->dfd, de->d_name, de->d_type) ||
			    fstatat(sfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
				continue;
			copy_dst_path(&p, c, a->d, de->d_name);
			if (c->check)
				copy_problem(a, &p, "extra", "not in SRC");
			else
				copy_delete_tree(a, de->d_name);
		}
	}
	sbuf_free(&p);
}

/* Is DST directory a->dfd on another mount than DST, so --delete leaves it alone? Its root is
 * reported (what lies below it is not entered, nor reported again). */
bool copy_dst_mount(const struct copy_at *a)
{
	struct fs_id here, up;
	const struct walk_dir *d = a->d;
	if (d->pathlen == d->relstart || fs_identity(a->dfd, "", &here) != 0 || here.mnt == a->c->dst_mnt)
		return false;
	if (fs_identity(a->dfd, "..", &up) == 0 && up.mnt != here.mnt) {
		struct sbuf p = {0};
		copy_dst_path(&p, a->c, d, NULL);
		mount_left_alone(a, &p);
		sbuf_free(&p);
	}
	return true;
}
