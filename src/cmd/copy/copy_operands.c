/*
 * copy_operands: SRC and DST checked before the walk. They are compared by identity (device and
 * inode, mount roots for bind mounts), so that neither a symlink nor a bind mount lets a copy into
 * itself, or a --delete of its own source, through.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmds.h"
#include "cmd/copy/copy_int.h"
#include "io/dir.h"
#include "io/guard.h"
#include "util/util.h"

/* Open directory p (O_PATH, following symlinks as the path does), or when it does not exist yet,
 * its parent, where it is to be made (copy makes DST, not its parents). fd, or -1 with errno. */
static int open_dst_place(const char *p)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", p) >= (int)sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = open(buf, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 || errno != ENOENT)
		return fd;
	size_t n = strlen(buf);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = 0;
	char *slash = strrchr(buf, '/');
	if (!slash)
		strcpy(buf, ".");
	else
		slash[slash == buf] = 0;
	return open(buf, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* Does directory path hold an entry that --exclude does not name? 1 yes, 0 no, -1 with errno. */
static int has_entries(const struct copy *c, const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	_Alignas(8) char buf[4096];
	ssize_t n;
	int found = 0;
	while (!found && (n = dir_read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t off = 0; off < n && !found;) {
			const struct linux_dirent64 *de = (const void *)(buf + off);
			off += de->d_reclen;
			found = !dir_is_dot(de->d_name) && !copy_excluded(c, fd, de->d_name, de->d_type);
		}
	int e = errno;
	close(fd);
	errno = e;
	return n < 0 ? -1 : found;
}

/* Where SRC and DST lie, by identity (device and inode, so that a bind mount or a symlink is no way
 * round): SRC equal to DST, DST inside SRC (DST to be made: its parent), and
 * with --delete SRC inside DST. 0 or EXIT_USAGE. */
static int check_overlap(struct copy *c, bool dst_exists)
{
	int sfd = open(c->src, O_PATH | O_DIRECTORY | O_CLOEXEC), dfd = open_dst_place(c->dst), rc = 0;
	const char *bad = sfd < 0 ? c->src : dfd < 0 ? c->dst : NULL;
	struct fs_id si, di;
	if (bad) {
		rc = usage_error("%s: %s", bad, strerror(errno));
	} else if (fs_identity(sfd, "", &si) != 0 || fs_identity(dfd, "", &di) != 0) {
		rc = usage_error("%s: statx: %s", c->dst, strerror(errno));
	} else if (dst_exists && fs_id_same(&si, &di)) {
		rc = usage_error("refusing to copy '%s' onto itself: '%s' is the same directory (same device and inode)",
				 c->src, c->dst);
	} else {
		int in = dir_within(dfd, sfd);
		int out = in == 0 && c->del && dst_exists ? dir_within(sfd, dfd) : 0;
		if (in < 0 || out < 0)
			rc = usage_error("%s: cannot tell where it lies: %s", c->dst, strerror(errno));
		else if (in)
			rc = usage_error("refusing to copy '%s' into '%s', which is inside it (also through a bind "
					 "mount or a symlink): the copy would copy itself",
					 c->src, c->dst);
		else if (out)
			rc = usage_error("refusing --delete: SRC '%s' is inside DST '%s' (also through a bind mount or a "
					 "symlink): it would be deleted as it is copied",
					 c->src, c->dst);
	}
	if (sfd >= 0)
		close(sfd);
	if (dfd >= 0)
		close(dfd);
	return rc;
}

/* --delete removes inside DST: DST passes the guards of every removal (cmd/removal.h). "link/" names
 * a symlink's target, and / would be emptied. The working directory and the directories above it may
 * lie in DST: its removals leave them alone (io/rmtree). 0 or EXIT_USAGE. */
static int check_delete_dst(struct copy *c)
{
	struct guard_operand op;
	enum guard_verdict v = guard_check(&c->guard, c->dst, &op);
	if (v == GUARD_LINK_SLASH)
		return usage_error("refusing --delete in '%s': %s (to delete in the directory it points to, name that "
				   "directory)",
				   c->dst, guard_rule(v));
	if (v == GUARD_ROOT)
		return usage_error("refusing --delete in '%s': %s, and --delete would empty it of all SRC lacks", c->dst,
				   guard_rule(v));
	return 0;
}

/* Check SRC and DST; make DST unless nothing may be written. 0 or an exit code. */
int check_operands(struct copy *c)
{
	if (guard_init(&c->guard) != 0 && c->del)
		return usage_error("--delete: cannot identify the working directory and every directory above it, "
				   "which are never deleted: %s (run it from a directory whose parents this user can "
				   "search)",
				   strerror(errno));
	if (c->del && !c->check) {
		int rc = check_delete_dst(c);
		if (rc)
			return rc;
	}
	struct stat st;
	if (lstat(c->src, &st) != 0)
		return usage_error("%s: %s", c->src, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return usage_error("%s: not a directory", c->src);
	c->src_dev = st.st_dev;
	bool dst_exists = lstat(c->dst, &st) == 0;
	if (dst_exists && !S_ISDIR(st.st_mode))
		return usage_error("%s: not a directory", c->dst);
	int rc = check_overlap(c, dst_exists);
	if (rc || !c->del || c->check || !dst_exists)
		return rc;
	/* --delete with nothing in SRC empties DST: only when the user said how much may go. */
	int src_has = has_entries(c, c->src), dst_has = has_entries(c, c->dst);
	if (src_has < 0 || dst_has < 0)
		return usage_error("%s: %s", src_has < 0 ? c->src : c->dst, strerror(errno));
	if (src_has || !dst_has)
		return 0;
	if (!c->max_delete_set)
		return usage_error("refusing --delete: SRC '%s' is empty and DST '%s' is not: everything in it would be "
				   "deleted (to go ahead, give --max-delete N, the most entries it may delete)",
				   c->src, c->dst);
	if (c->rank == 0) /* (across ranks, said once) */
		warnx_("warning: SRC '%s' is empty: --delete deletes everything in DST '%s', up to %llu entries "
		       "(--max-delete)",
		       c->src, c->dst, (unsigned long long)c->max_delete);
	return 0;
}
