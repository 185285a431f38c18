/* Unit tests for exclude: which --exclude patterns are refused, and that "NAME/" matches only
 * directories, asking the filesystem (lstat, not following a symlink) when the type is unknown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/exclude.h"

static void paths_and_empty_patterns_are_refused(void **state)
{
	(void)state;
	const char *bad[] = {"", "/", "//", "t/keep", "*/c", "/abs", "a/b/", "a//b"};
	const char *good[] = {"keep", "keep/", "keep//", "*.tmp", "[ab]*", "*"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		if (!exclude_refusal(bad[i]))
			fail_msg("'%s' accepted", bad[i]);
	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++)
		if (exclude_refusal(good[i]))
			fail_msg("'%s' refused: %s", good[i], exclude_refusal(good[i]));
}

static void a_trailing_slash_matches_directories_only(void **state)
{
	(void)state;
	char *pats[] = {"keep/", "*.tmp"};
	struct excludes x;
	excludes_init(&x, pats, 2);
	assert_true(excludes_match(&x, -1, "keep", DT_DIR));
	assert_false(excludes_match(&x, -1, "keep", DT_REG));
	assert_false(excludes_match(&x, -1, "keep", DT_LNK));
	assert_false(excludes_match(&x, -1, "keeper", DT_DIR));
	assert_true(excludes_match(&x, -1, "a.tmp", DT_REG));
	assert_true(excludes_match(&x, -1, "a.tmp", DT_DIR));
	assert_false(excludes_match(&x, -1, "b", DT_UNKNOWN));
	excludes_free(&x);
}

static void an_unknown_type_is_looked_up(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_exclude.XXXXXX";
	assert_non_null(mkdtemp(dir));
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	assert_int_equal(mkdirat(fd, "d", 0700), 0);
	int f = openat(fd, "f", O_CREAT | O_WRONLY, 0600);
	assert_true(f >= 0);
	close(f);
	assert_int_equal(symlinkat("d", fd, "l"), 0);
	char *pats[] = {"d/", "f/", "l//"};
	struct excludes x;
	excludes_init(&x, pats, 3);
	assert_true(excludes_match(&x, fd, "d", DT_UNKNOWN));
	assert_false(excludes_match(&x, fd, "f", DT_UNKNOWN));
	assert_false(excludes_match(&x, fd, "l", DT_UNKNOWN)); /* a symlink to a directory is not one */
	assert_false(excludes_match(&x, fd, "gone", DT_UNKNOWN));
	excludes_free(&x);
	unlinkat(fd, "l", 0);
	unlinkat(fd, "f", 0);
	unlinkat(fd, "d", AT_REMOVEDIR);
	close(fd);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(paths_and_empty_patterns_are_refused),
	    cmocka_unit_test(a_trailing_slash_matches_directories_only),
	    cmocka_unit_test(an_unknown_type_is_looked_up),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
