/*
 * guard: operand checks for commands that remove (see guard.h). The '.'/'..' rule is lexical, so
 * it holds before any lookup; the others compare what one O_PATH|O_NOFOLLOW open of the operand
 * finds, so its type and identity come from the same entry.
 */
#include "io/guard.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"

#define GUARD_MAX_DEPTH 65536 /* directories above the working directory: beyond this, a loop */

/* The same entry through the same mount (a directory bind-mounted onto its own child is not its
 * parent). */
static bool same_mount_entry(const struct fs_id *a, const struct fs_id *b) { return fs_id_same(a, b) && a->mnt == b->mnt; }

static void above_push(struct guard *g, size_t *cap, const struct fs_id *id)
{
	if (g->nabove == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		g->above = xrealloc(g->above, *cap * sizeof(*g->above));
	}
	g->above[g->nabove++] = *id;
}

/*
 * '..' could not be taken from g->above's last entry (EACCES: a directory above the working
 * directory that this user cannot search, such as a 0700 home). Complete the chain from the other
 * end: the working directory's path as the kernel knows it, each prefix looked up from /, down to
 * the first that cannot be. The two halves must meet at the entry where '..' failed; otherwise the
 * chain has a gap and nothing can be checked. 0, or -1 with errno.
 */
static int complete_from_top(struct guard *g, size_t *cap)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/cwd", path, sizeof(path) - 1);
	if (n <= 0 || path[0] != '/')
		return -1;
	path[n] = 0;
	struct fs_id *top = xmalloc(16 * sizeof(*top));
	size_t ntop = 0, tcap = 16;
	if (fs_identity(AT_FDCWD, "/", &top[ntop]) == 0)
		ntop++;
	for (size_t i = 2; ntop > 0 && i <= (size_t)n; i++) { /* each prefix "/a", "/a/b", ... */
		if (i < (size_t)n && path[i] != '/')
			continue;
		char c = path[i];
		path[i] = 0;
		struct fs_id id;
		int r = fs_identity(AT_FDCWD, path, &id);
		path[i] = c;
		if (r != 0)
			break;
		if (ntop == tcap) {
			tcap *= 2;
			top = xrealloc(top, tcap * sizeof(*top));
		}
		top[ntop++] = id;
	}
	const struct fs_id *meet = &g->above[g->nabove - 1];
	for (size_t k = ntop; k-- > 0;)
		if (same_mount_entry(&top[k], meet)) {
			while (k-- > 0)
				above_push(g, cap, &top[k]);
			free(top);
			return 0;
		}
	free(top);
	errno = EACCES;
	return -1;
}

int guard_init(struct guard *g)
{
	memset(g, 0, sizeof(*g));
	if (fs_identity(AT_FDCWD, "/", &g->root) != 0)
		return -1;
	int fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	size_t cap = 0;
	while (fd >= 0) {
		struct fs_id id;
		if (fs_identity(fd, "", &id) != 0)
			break;
		if (g->nabove && same_mount_entry(&id, &g->above[g->nabove - 1])) {
			close(fd); /* '..' of the top is the top itself */
			return 0;
		}
		if (g->nabove == GUARD_MAX_DEPTH) {
			errno = ELOOP;
			break;
		}
		above_push(g, &cap, &id);
		int up = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		fd = up;
		if (fd < 0 && errno == EACCES && complete_from_top(g, &cap) == 0)
			return 0;
	}
	int e = errno;
	if (fd >= 0)
		close(fd);
	guard_free(g);
	errno = e;
	return -1;
}

void guard_free(struct guard *g)
{
	free(g->above);
	g->above = NULL;
	g->nabove = 0;
}

size_t guard_name_len(const char *path)
{
	size_t end = strlen(path);
	while (end > 1 && path[end - 1] == '/')
		end--;
	return end;
}

enum guard_verdict guard_check(const struct guard *g, const char *path, struct guard_operand *op)
{
	/* The last component, trailing slashes aside ("d/./" ends in "."; "//" is "/"). */
	size_t len = strlen(path), end = guard_name_len(path);
	size_t start = end;
	while (start > 0 && path[start - 1] != '/')
		start--;
	const char *last = path + start;
	size_t n = end - start;
	if ((n == 1 && last[0] == '.') || (n == 2 && last[0] == '.' && last[1] == '.'))
		return GUARD_DOT;

	/* Opened without its trailing slashes, which would make the kernel follow a final symlink. */
	char *name = xmalloc(end + 1);
	memcpy(name, path, end);
	name[end] = 0;
	int fd = open(name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	free(name);
	struct stat st;
	if (fd < 0)
		return GUARD_ERRNO;
	if (fstat(fd, &st) != 0 || fs_identity(fd, "", &op->id) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return GUARD_ERRNO;
	}
	close(fd);
	op->type = st.st_mode & S_IFMT;
	if (S_ISLNK(st.st_mode) && end < len)
		return GUARD_LINK_SLASH;
	return guard_id(g, &op->id);
}

enum guard_verdict guard_id(const struct guard *g, const struct fs_id *id)
{
	if (fs_id_same(id, &g->root))
		return GUARD_ROOT;
	for (size_t i = 0; i < g->nabove; i++)
		if (fs_id_same(id, &g->above[i]))
			return GUARD_CWD;
	return GUARD_OK;
}

const char *guard_rule(enum guard_verdict v)
{
	switch (v) {
	case GUARD_DOT: return "a last component '.' or '..' is never removed";
	case GUARD_LINK_SLASH: return "with a trailing '/' it names a symlink's target, and symlinks are never followed";
	case GUARD_ROOT: return "it is / (the same directory, by device and inode)";
	case GUARD_CWD: return "the working directory and the directories above it are never removed";
	case GUARD_OK:
	case GUARD_ERRNO: break;
	}
	return "";
}

bool guard_same(const struct guard_operand *op, int fd)
{
	struct fs_id now;
	return fs_identity(fd, "", &now) == 0 && same_mount_entry(&now, &op->id);
}

/* path with its last component taken off ("." for a bare name; "/" stays "/"), malloc'd. */
static char *parent_of(const char *path)
{
	char *dir = xstrdup(path);
	size_t end = guard_name_len(dir);
	while (end > 0 && dir[end - 1] != '/')
		end--;
	while (end > 1 && dir[end - 1] == '/')
		end--;
	if (end == 0)
		strcpy(dir, ".");
	else
		dir[end] = 0;
	return dir;
}

/* The place a file named path is written in, as the writers open it (following symlinks, a final
 * one too, and making missing directories): the directory path names, or the directory holding
 * what it names (a dangling symlink: what it points to), or when that does not exist yet, the
 * nearest directory above it that does. fd (O_PATH), or -1 with errno. */
static int open_place(const char *path)
{
	char *p = xstrdup(path);
	int fd = -1;
	for (int hops = 0; hops < 40; hops++) {
		if ((fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC)) >= 0 ||
		    (errno != ENOENT && errno != ENOTDIR && errno != ELOOP))
			break;
		/* A symlink (dangling, or to a non-directory): go on from what it points to. */
		char target[PATH_MAX];
		size_t end = guard_name_len(p);
		char save = p[end];
		p[end] = 0;
		ssize_t n = readlink(p, target, sizeof(target) - 1);
		p[end] = save;
		if (n <= 0) { /* not a link: its parent, or the nearest one above that exists */
			char *up = parent_of(p);
			bool top = !strcmp(up, p) || !strcmp(up, ".") || !strcmp(up, "/");
			free(p);
			p = up;
			if (top) {
				fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
				break;
			}
			continue;
		}
		target[n] = 0;
		char *next;
		if (target[0] == '/') {
			next = xstrdup(target);
		} else {
			char *dir = parent_of(p);
			next = xmalloc(strlen(dir) + n + 2);
			sprintf(next, "%s/%s", dir, target);
			free(dir);
		}
		free(p);
		p = next;
	}
	int e = errno;
	free(p);
	errno = e;
	return fd;
}

int guard_path_in_tree(const char *path, const char *tree)
{
	int pfd = open_place(path);
	if (pfd < 0)
		return -1;
	int tfd = open(tree, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (tfd < 0) {
		int e = errno;
		close(pfd);
		errno = e;
		return e == ENOENT ? 0 : -1; /* no tree: nothing of it to remove */
	}
	int r = dir_within(pfd, tfd);
	int e = errno;
	close(pfd);
	close(tfd);
	errno = e;
	return r;
}

/* Each operand's place in its filesystem (dir_fs_path), told once: n operands cost n opens, and
 * pairs compare as strings. (dir_within for each pair read the mount table each time: 1,100
 * operands took minutes.) path NULL where it cannot be told: such a pair goes to dir_within. */
struct place {
	char dev[32];
	char *path;
};

/* Is operand j within operand i? 1, 0, or -1 with errno. */
static int place_within(const struct place *pl, char *const *paths, size_t j, size_t i)
{
	if (pl[i].path && pl[j].path)
		return !strcmp(pl[i].dev, pl[j].dev) && dir_path_under(pl[j].path, pl[i].path);
	int a = open(paths[j], O_PATH | O_DIRECTORY | O_CLOEXEC), b = open(paths[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
	int r = a < 0 || b < 0 ? -1 : dir_within(a, b);
	int e = errno;
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
	errno = e;
	return r;
}

int guard_overlap(char *const *paths, size_t n, size_t *inner, size_t *outer, bool *same)
{
	struct place *pl = xcalloc(n ? n : 1, sizeof(*pl));
	struct fs_id *id = xcalloc(n ? n : 1, sizeof(*id));
	char fspath[PATH_MAX];
	int r = 0;
	for (size_t i = 0; i < n && r == 0; i++) {
		int fd = open(paths[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 || fs_identity(fd, "", &id[i]) != 0)
			r = -1;
		else if (dir_fs_path(fd, pl[i].dev, fspath) == 0)
			pl[i].path = xstrdup(fspath);
		int e = errno;
		if (fd >= 0)
			close(fd);
		errno = e;
	}
	/* The later of two is the inner one where they are the same directory. */
	for (size_t i = 0; r == 0 && i < n; i++)
		for (size_t j = 0; r == 0 && j < n; j++) {
			if (i == j)
				continue;
			int w = place_within(pl, paths, j, i);
			bool one = fs_id_same(&id[i], &id[j]);
			if (w < 0) {
				r = -1;
			} else if (w && (j > i || !one)) {
				*inner = j;
				*outer = i;
				*same = one;
				r = 1;
			}
		}
	int e = errno;
	for (size_t i = 0; i < n; i++)
		free(pl[i].path);
	free(pl);
	free(id);
	errno = e;
	return r;
}
