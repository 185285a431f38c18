/* Unit tests for io/guard: the operand checks of commands that remove. Nothing here removes
 * anything but its own temporary directory: / is only looked at. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "scratch.h"

#include "io/guard.h"

static char top[64];   /* a temporary directory of the test's own */
static char saved_cwd[4096];

static int setup(void **state)
{
	if (!scratch_dir(top, sizeof(top), "guard") || !getcwd(saved_cwd, sizeof(saved_cwd)))
		return -1;
	char p[256];
	static const char *const dirs[] = {"a", "a/b", "a/b/c", "a/b/c/d"}, *const files[] = {"file"};
	if (scratch_tree(top, dirs, 4, files, 1) != 0)
		return -1;
	snprintf(p, sizeof(p), "%s/to-root", top);
	return symlink("/", p);
}

static int teardown(void **state)
{
	if (chdir(saved_cwd) != 0)
		return -1;
	return scratch_remove(top);
}

static enum guard_verdict check(const struct guard *g, const char *fmt, ...)
{
	char p[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p, sizeof(p), fmt, ap);
	va_end(ap);
	struct guard_operand op;
	return guard_check(g, p, &op);
}

/* A last component '.' or '..' is refused in every spelling, before any lookup (also where the
 * path does not exist). */
static void dots_are_refused_in_any_spelling(void **state)
{
	struct guard g;
	assert_int_equal(guard_init(&g), 0);
	static const char *const dots[] = {".",      "./",     "./.",   ".//",  "d/.",   "d/./",   "..",
					   "../",    "..//",   "d/..",  "d/../", "/.",    "/..",    "/../",
					   "x/y/..", "nope/.", "a/./.", "../..", "//..", "/tmp/.."};
	for (size_t i = 0; i < sizeof(dots) / sizeof(dots[0]); i++) {
		struct guard_operand op;
		if (guard_check(&g, dots[i], &op) != GUARD_DOT)
			fail_msg("'%s' is not refused by the '.'/'..' rule", dots[i]);
	}
	/* Names that merely start with dots are names. */
	assert_int_equal(check(&g, "%s/.hidden-missing", top), GUARD_ERRNO);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(check(&g, "%s/...", top), GUARD_ERRNO);
	guard_free(&g);
	/* The name a message suggests for "link/". */
	assert_int_equal(guard_name_len("link//"), 4);
	assert_int_equal(guard_name_len("/"), 1);
	assert_int_equal(guard_name_len("//"), 1);
	assert_int_equal(guard_name_len("d/e"), 3);
}

/* / in its spellings; a symlink to / is a symlink (refused with a trailing '/'). */
static void root_and_links_to_it(void **state)
{
	struct guard g;
	struct guard_operand op;
	assert_int_equal(guard_init(&g), 0);
	assert_int_equal(guard_check(&g, "/", &op), GUARD_ROOT);
	assert_int_equal(guard_check(&g, "//", &op), GUARD_ROOT);
	assert_int_equal(guard_check(&g, "///", &op), GUARD_ROOT);
	assert_int_equal(check(&g, "%s/to-root", top), GUARD_OK); /* the link itself */
	assert_int_equal(guard_check(&g, "/proc/self/root", &op), GUARD_OK);
	assert_int_equal(op.type, S_IFLNK);
	assert_int_equal(check(&g, "%s/to-root/", top), GUARD_LINK_SLASH);
	assert_int_equal(check(&g, "%s/to-root//", top), GUARD_LINK_SLASH);
	assert_int_equal(guard_check(&g, "/proc/self/root/", &op), GUARD_LINK_SLASH);
	assert_int_equal(check(&g, "%s/to-root/.", top), GUARD_DOT);
	guard_free(&g);
}

/* / is recognized by device and inode, not by its spelling: with the guard's root set to another
 * directory (as a bind mount of / would look), that directory is refused under any path. */
static void root_is_by_identity(void **state)
{
	struct guard g;
	char p[256];
	assert_int_equal(guard_init(&g), 0);
	snprintf(p, sizeof(p), "%s/a/b", top);
	assert_int_equal(fs_identity(AT_FDCWD, p, &g.root), 0);
	assert_int_equal(guard_check(&g, p, &(struct guard_operand){0}), GUARD_ROOT);
	assert_int_equal(check(&g, "%s/a/b/", top), GUARD_ROOT);
	assert_int_equal(check(&g, "%s/to-root%s/a/b", top, top), GUARD_ROOT); /* through a symlink on the way */
	assert_int_equal(check(&g, "%s/a/b/c", top), GUARD_OK);
	guard_free(&g);
}

/* The working directory and each directory above it are refused, under any path; below it and
 * beside it is fine. */
static void working_directory_and_above(void **state)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/a/b/c", top);
	assert_int_equal(chdir(p), 0);
	snprintf(p, sizeof(p), "%s/a", top);
	assert_int_equal(symlink(p, "up"), 0);
	struct guard g;
	struct guard_operand op;
	assert_int_equal(guard_init(&g), 0);
	assert_int_equal(check(&g, "%s/a/b/c", top), GUARD_CWD);
	assert_int_equal(check(&g, "%s/a/b", top), GUARD_CWD);
	assert_int_equal(check(&g, "%s/a", top), GUARD_CWD);
	assert_int_equal(check(&g, "%s", top), GUARD_CWD);
	assert_int_equal(guard_check(&g, "/tmp", &op), GUARD_CWD);
	assert_int_equal(guard_check(&g, "up/b", &op), GUARD_CWD); /* through a symlink */
	assert_int_equal(guard_check(&g, "up/b/c/", &op), GUARD_CWD);
	assert_int_equal(guard_check(&g, "d", &op), GUARD_OK);
	assert_int_equal(op.type, S_IFDIR);
	assert_int_equal(guard_check(&g, "up", &op), GUARD_OK);
	assert_int_equal(op.type, S_IFLNK);
	assert_int_equal(check(&g, "%s/file", top), GUARD_OK);
	assert_int_equal(guard_check(&g, "missing", &op), GUARD_ERRNO);
	assert_int_equal(errno, ENOENT);
	snprintf(p, sizeof(p), "%s/file/x", top);
	assert_int_equal(guard_check(&g, p, &op), GUARD_ERRNO);
	assert_int_equal(errno, ENOTDIR);
	guard_free(&g);
	assert_int_equal(unlink("up"), 0);
	assert_int_equal(chdir(saved_cwd), 0);
}

/* What is opened later by the operand's path must be what was checked: a directory swapped for a
 * symlink to / (or for another directory) is told apart. */
static void same_detects_a_swap(void **state)
{
	struct guard g;
	struct guard_operand op;
	char p[256], q[256];
	assert_int_equal(guard_init(&g), 0);
	snprintf(p, sizeof(p), "%s/a/b/c/d", top);
	assert_int_equal(guard_check(&g, p, &op), GUARD_OK);
	int fd = open(p, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0 && guard_same(&op, fd));
	close(fd);
	snprintf(q, sizeof(q), "%s/a/b/c/d-moved", top);
	assert_int_equal(rename(p, q), 0);
	assert_int_equal(symlink("/", p), 0);
	fd = open(p, O_RDONLY | O_DIRECTORY); /* as the engine opens an operand: following it */
	assert_true(fd >= 0);
	assert_false(guard_same(&op, fd));
	close(fd);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(mkdir(p, 0755), 0);
	fd = open(p, O_RDONLY | O_DIRECTORY);
	assert_false(guard_same(&op, fd));
	close(fd);
	assert_int_equal(rmdir(p), 0);
	assert_int_equal(rename(q, p), 0);
	guard_free(&g);
}

/* Operands inside each other or the same are found, whichever comes first and however spelled;
 * siblings are not. */
static void overlap_by_identity(void **state)
{
	char a[256], b[256], c[256], bdot[256], d[256];
	snprintf(a, sizeof(a), "%s/a", top);
	snprintf(b, sizeof(b), "%s/a/b", top);
	snprintf(c, sizeof(c), "%s/a/b/c", top);
	snprintf(bdot, sizeof(bdot), "%s/a/b/c/../", top);
	snprintf(d, sizeof(d), "%s/a/b/c/d", top);
	size_t in = 9, out = 9;
	bool same = true;
	char *apart[] = {d, top};
	assert_int_equal(guard_overlap(apart, 1, &in, &out, &same), 0);
	char *nested[] = {d, a};
	assert_int_equal(guard_overlap(nested, 2, &in, &out, &same), 1);
	assert_true(in == 0 && out == 1 && !same);
	char *twice[] = {b, c, bdot};
	assert_int_equal(guard_overlap(twice, 3, &in, &out, &same), 1);
	assert_true(in == 1 && out == 0 && !same); /* c inside b, found first */
	char *twice2[] = {bdot, b};
	assert_int_equal(guard_overlap(twice2, 2, &in, &out, &same), 1);
	assert_true(in == 1 && out == 0 && same);
	char *missing[] = {a, "/nonexistent-myriad-guard"};
	assert_int_equal(guard_overlap(missing, 2, &in, &out, &same), -1);
}

/* A file, one still to be made (with its parents), a directory and symlinks (to a directory, to a
 * file, dangling): each is in the tree where it is written, through its links as writers go. */
static void path_in_tree_through_links(void **state)
{
	char a[256], p[300], link[256];
	snprintf(a, sizeof(a), "%s/a", top);
	snprintf(link, sizeof(link), "%s/link-to-a", top);
	assert_int_equal(symlink(a, link), 0);
	snprintf(p, sizeof(p), "%s/a/b/new/deeper/file", top);
	assert_int_equal(guard_path_in_tree(p, a), 1);
	snprintf(p, sizeof(p), "%s/link-to-a/b/x", top);
	assert_int_equal(guard_path_in_tree(p, a), 1);
	assert_int_equal(guard_path_in_tree(a, a), 1);
	assert_int_equal(guard_path_in_tree(link, a), 1); /* written through: into a */
	/* A link beside the tree to a file, or to a name still to be made, in it: written there. */
	char flink[256], dlink[256];
	snprintf(flink, sizeof(flink), "%s/flink", top);
	snprintf(dlink, sizeof(dlink), "%s/dlink", top);
	snprintf(p, sizeof(p), "%s/a/b/afile", top);
	close(open(p, O_CREAT | O_WRONLY, 0644));
	assert_int_equal(symlink(p, flink), 0);
	assert_int_equal(symlink("a/b/not-yet/x.json", dlink), 0);
	assert_int_equal(guard_path_in_tree(flink, a), 1);
	assert_int_equal(guard_path_in_tree(dlink, a), 1);
	snprintf(p, sizeof(p), "%s/a/b/c", top);
	assert_int_equal(guard_path_in_tree(flink, p), 0);
	assert_int_equal(unlink(flink), 0);
	assert_int_equal(unlink(dlink), 0);
	snprintf(p, sizeof(p), "%s/a/b/afile", top);
	assert_int_equal(unlink(p), 0);
	snprintf(p, sizeof(p), "%s/file", top);
	assert_int_equal(guard_path_in_tree(p, a), 0);
	assert_int_equal(guard_path_in_tree(p, top), 1);
	assert_int_equal(guard_path_in_tree("relative-new-file", "/nonexistent-myriad-guard"), 0);
	assert_int_equal(unlink(link), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(dots_are_refused_in_any_spelling),
	    cmocka_unit_test(root_and_links_to_it),
	    cmocka_unit_test(root_is_by_identity),
	    cmocka_unit_test(working_directory_and_above),
	    cmocka_unit_test(same_detects_a_swap),
	    cmocka_unit_test(overlap_by_identity),
	    cmocka_unit_test(path_in_tree_through_links),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
