/*
 * xattr: copying and comparing every extended attribute of a file, directory or symlink, POSIX
 * ACLs (system.posix_acl_*) included, for myriad copy. A name in a directory is reached through
 * /proc/self/fd, so paths longer than PATH_MAX never reach the kernel whole.
 */
#ifndef MYRIAD_IO_XATTR_H
#define MYRIAD_IO_XATTR_H

#include <stdbool.h>

/*
 * An object whose extended attributes are read or written: an open fd (fd >= 0, path NULL), or
 * a name in a directory (dirfd, name) reached without following a final symlink.
 */
struct xref {
	int fd;
	int dirfd;
	const char *name;
};

/*
 * Copy every extended attribute of from to to (system.posix_acl_* included). With diff non-NULL
 * nothing is written: *diff is set when the two sets differ. Returns 0, or -1 with errno and
 * *op ("listxattr", "getxattr", "setxattr"). A filesystem without xattrs on the source counts as
 * an empty set.
 */
int copy_xattrs(const struct xref *from, const struct xref *to, bool *diff, const char **op);

#endif
