/* Unit tests for io/dir: entry identity (device, inode, mount). */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(identity_is_by_inode),
	    cmocka_unit_test(mounts_and_links_differ),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
