/* Unit tests for io/dir: entry identity (device, inode, mount); dir_open_at refusing symlinks in
 * every component; dir_read giving every entry of a large directory once through a small buffer;
 * dir_is_empty with and without names to ignore. tests/cli/nofollow_fallback.sh runs them again without openat2. */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "scratch.h"

#include "io/dir.h"

/* The same directory reached by two paths has one identity; "" names the fd itself. */
static void identity_is_by_inode(void **state)
{
	struct fs_id a, b, c;
	int fd = open("/", O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	assert_int_equal(fs_identity(fd, "", &a), 0);
	assert_int_equal(fs_identity(AT_FDCWD, "/", &b), 0);
	assert_int_equal(fs_identity(AT_FDCWD, "/.", &c), 0);
	assert_true(fs_id_same(&a, &b) && a.mnt == b.mnt);
	assert_true(fs_id_same(&a, &c));
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(a.dev == st.st_dev && a.ino == st.st_ino);
	close(fd);
}

/* /proc is another mount than /; a final symlink is not followed. */
static void mounts_and_links_differ(void **state)
{
	struct fs_id root, proc, self;
	assert_int_equal(fs_identity(AT_FDCWD, "/", &root), 0);
	assert_int_equal(fs_identity(AT_FDCWD, "/proc", &proc), 0);
	assert_true(root.mnt != proc.mnt);
	assert_int_equal(fs_identity(AT_FDCWD, "/proc/self", &self), 0); /* a symlink, itself */
	assert_int_equal(self.mnt, proc.mnt);
	assert_int_equal(fs_identity(AT_FDCWD, "/nonexistent-myriad", &self), -1);
}

/* fd and path name the same inode? */
static bool same_dir(int fd, const char *path)
{
	struct stat a, b;
	return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* A symlink anywhere on the way (first, middle or last component) is refused; empty components
 * are skipped; "" is the directory itself; a path longer than PATH_MAX is opened. */
static void open_refuses_symlinks(void **state)
{
	char top[64];
	assert_non_null(scratch_dir(top, sizeof(top), "dir"));
	char p[PATH_MAX + 64];
	static const char *const dirs[] = {"a", "a/b", "a/b/c", "out", "out/b", "out/b/c"}, *const files[] = {"a/f"};
	assert_int_equal(scratch_tree(top, dirs, 6, files, 1), 0);
	snprintf(p, sizeof(p), "%s/a/up", top);
	assert_int_equal(symlink("../out", p), 0);
	snprintf(p, sizeof(p), "%s/a/lb", top);
	assert_int_equal(symlink("b", p), 0);
	int dfd = open(top, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	const char *refused[] = {"a/up/b", "a/up/b/c", "a/lb", "a/lb/c", "a/up", "a/f", "a/f/x", "a/none/c"};
	for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++) {
		errno = 0;
		assert_int_equal(dir_open_at(dfd, refused[i], strlen(refused[i])), -1);
		assert_true(errno == ELOOP || errno == ENOTDIR || errno == ENOENT);
	}
	struct {
		const char *rel, *want;
	} opened[] = {{"", ""}, {"a", "/a"}, {"a/b/c", "/a/b/c"}, {"a//b/", "/a/b"}, {"a/b/c/..", "/a/b"}};
	for (size_t i = 0; i < sizeof(opened) / sizeof(*opened); i++) {
		int fd = dir_open_at(dfd, opened[i].rel, strlen(opened[i].rel));
		snprintf(p, sizeof(p), "%s%s", top, opened[i].want);
		assert_true(fd >= 0 && same_dir(fd, p));
		close(fd);
	}
	/* rel need not end at rel_len: "a/b/c" taken as "a/b". */
	int fd = dir_open_at(dfd, "a/b/c", 3);
	snprintf(p, sizeof(p), "%s/a/b", top);
	assert_true(fd >= 0 && same_dir(fd, p));
	close(fd);
	/* Longer than PATH_MAX: 20 levels of 250-byte names. */
	char name[251], *rel = calloc(1, 20 * 251);
	memset(name, 'n', 250);
	name[250] = 0;
	int cur = dup(dfd);
	for (int i = 0; i < 20; i++) {
		assert_int_equal(mkdirat(cur, name, 0755), 0);
		int next = openat(cur, name, O_RDONLY | O_DIRECTORY);
		close(cur);
		cur = next;
		strcat(strcat(rel, i ? "/" : ""), name);
	}
	fd = dir_open_at(dfd, rel, strlen(rel));
	struct stat a, b;
	assert_true(fd >= 0 && fstat(fd, &a) == 0 && fstat(cur, &b) == 0 && a.st_ino == b.st_ino);
	close(fd);
	close(cur);
	free(rel);
	close(dfd);
	assert_int_equal(scratch_remove(top), 0);
}

/* 3000 entries with long names, read through a 4 KiB buffer (many calls): each name once, the
 * dots, nothing else; 0 at the end, and -1 with errno on what is not a directory. */
static void read_many_entries(void **state)
{
	char dir[64];
	assert_non_null(scratch_dir(dir, sizeof(dir), "dir"));
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	enum { N = 3000 };
	char name[128];
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "entry-with-a-rather-long-name-%060d", i);
		int fd = openat(dfd, name, O_CREAT | O_WRONLY | O_EXCL, 0644);
		assert_true(fd >= 0);
		close(fd);
	}
	unsigned char *seen = calloc(N, 1);
	int dots = 0, calls = 0, other = 0;
	char buf[4096] __attribute__((aligned(8)));
	ssize_t n;
	while ((n = dir_read(dfd, buf, sizeof(buf))) > 0) {
		calls++;
		for (ssize_t off = 0; off < n;) {
			const struct linux_dirent64 *de = (const void *)(buf + off);
			off += de->d_reclen;
			int i;
			if (dir_is_dot(de->d_name))
				dots++;
			else if (sscanf(de->d_name, "entry-with-a-rather-long-name-%d", &i) == 1 && i >= 0 && i < N &&
				 de->d_type == DT_REG)
				seen[i]++;
			else
				other++;
		}
	}
	assert_int_equal(n, 0);
	assert_true(calls > 10);
	assert_int_equal(dots, 2);
	assert_int_equal(other, 0);
	for (int i = 0; i < N; i++)
		assert_int_equal(seen[i], 1);
	free(seen);
	/* Not a directory: -1 with errno. */
	snprintf(name, sizeof(name), "entry-with-a-rather-long-name-%060d", 0);
	int ffd = openat(dfd, name, O_RDONLY);
	assert_true(ffd >= 0);
	errno = 0;
	assert_int_equal(dir_read(ffd, buf, sizeof(buf)), -1);
	assert_int_equal(errno, ENOTDIR);
	close(ffd);
	close(dfd);
	assert_int_equal(scratch_remove(dir), 0);
}

static int is_empty(const char *dir, const char *const *ignore)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	int r = dir_is_empty(fd, ignore);
	close(fd);
	return r;
}

static void empty_directories(void **state)
{
	char dir[64];
	assert_non_null(scratch_dir(dir, sizeof(dir), "dir"));
	char p[128];
	assert_int_equal(is_empty(dir, NULL), 1);
	snprintf(p, sizeof(p), "%s/marker", dir);
	int fd = open(p, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(is_empty(dir, NULL), 0);
	const char *const ignore[] = {"marker", NULL};
	assert_int_equal(is_empty(dir, ignore), 1);
	const char *const other[] = {"marke", "markers", NULL};
	assert_int_equal(is_empty(dir, other), 0);
	snprintf(p, sizeof(p), "%s/.hidden", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(is_empty(dir, ignore), 0);
	/* Not a directory: -1. */
	snprintf(p, sizeof(p), "%s/marker", dir);
	fd = open(p, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(dir_is_empty(fd, NULL), -1);
	close(fd);
	assert_int_equal(scratch_remove(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(identity_is_by_inode),
	    cmocka_unit_test(mounts_and_links_differ),
	    cmocka_unit_test(open_refuses_symlinks),
	    cmocka_unit_test(read_many_entries),
	    cmocka_unit_test(empty_directories),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
