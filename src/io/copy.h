/*
 * copy: the syscall layer of myriad copy — moving one file's data (copy_file_range, falling back
 * to read/write, holes kept sparse with SEEK_DATA/SEEK_HOLE, bandwidth taken per chunk), its
 * extended attributes (POSIX ACLs included) and comparing two files' data (--check). Every
 * function works on fds plus names, so paths longer than PATH_MAX never reach the kernel whole.
 * Removing a tree (--delete) is io/rmtree.h.
 */
#ifndef MYRIAD_IO_COPY_H
#define MYRIAD_IO_COPY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/throttle.h"
#include "util/sbuf.h"

/* The largest piece of data moved at once (and taken from a --bwlimit throttle at once). */
#define COPY_CHUNK (1u << 20)

/* What copy_data needs to know of the source file (from its statx). */
struct copy_src {
	uint64_t size;
	uint64_t blocks; /* 512-byte blocks allocated: as many as the size means no holes to look for */
	uint64_t dev;    /* its filesystem: where copy_file_range failed once, it is not tried again */
};

/*
 * Copy src->size bytes of data from in to out (both at offset 0, out empty), skipping holes, and
 * leave out exactly that size. bw (may be NULL) is taken per chunk; *bytes grows by what was
 * written, and so does *live (may be NULL: a counter shared with a progress line) chunk by chunk.
 * Returns 0, or -1 with errno; *op names the failed operation ("read", "write"...).
 */
int copy_data(int in, int out, const struct copy_src *src, struct throttle *bw, uint64_t *bytes,
	      _Atomic uint64_t *live, const char **op);

/* The same for a file whose data is already in memory (prefetched): write data[0, len) to out. */
int copy_buffer(const void *data, size_t len, int out, uint64_t *bytes, _Atomic uint64_t *live, const char **op);

/* The bytes copy_data would copy from in: its size less its holes (copy --dry-run's count). */
uint64_t copy_data_bytes(int in, const struct copy_src *src);

/*
 * Compare the first size bytes of a and b (bw, may be NULL, taken per chunk read from a; *bytes
 * and *live, as for copy_data, grow by the bytes read from a). Returns 0 when equal; 1 when they differ or one ends early,
 * with *at the offset of the first difference; -1 with errno when a read fails, *which saying on
 * which (0: a, 1: b).
 */
int copy_compare(int a, int b, uint64_t size, struct throttle *bw, uint64_t *bytes, _Atomic uint64_t *live,
		 uint64_t *at, int *which);

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
