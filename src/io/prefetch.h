/*
 * prefetch: read a batch of small files with one system call. The files of a directory, taken in
 * inode order, mostly lie side by side on disk. Read one by one, each costs a block request of its
 * own, and on a loop device or a virtual machine's disk the request (its queueing, the device
 * notification, the completion interrupt) costs more than reading 4 KiB. Queued on an io_uring
 * and submitted together, adjacent reads merge into a few large requests, and one thread keeps
 * them all in flight without blocking on each.
 *
 * A worker adds the files it is about to copy (opened here, read into its buffer), submits, and
 * then takes each one, in order, as it copies it: its open fd, and its data once the read is
 * complete. Nothing is ever retried here: an open or read that failed is handed over with its
 * errno, for the caller to report.
 */
#ifndef MYRIAD_IO_PREFETCH_H
#define MYRIAD_IO_PREFETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PREFETCH_FILES 64           /* files per batch */
#define PREFETCH_FILE_MAX (64u << 10) /* larger files are not prefetched */
#define PREFETCH_BYTES (1u << 20)   /* the buffer: data per batch */

/* Should files under path be read ahead? MYRIAD_PREFETCH=on or off says so; otherwise (auto) yes
 * when suits (the caller's own conditions) and path is on ext2/3/4, XFS or btrfs: disk
 * filesystems whose inode order follows where the data lies. Elsewhere (tmpfs, FUSE, NFS)
 * batching would only add waiting. */
bool prefetch_wanted(const char *path, bool suits);

struct prefetch;

/* A worker's prefetcher, or NULL when this kernel (or its sandbox) has no io_uring: then the
 * caller reads as before. */
struct prefetch *prefetch_new(void);
void prefetch_free(struct prefetch *p);

/* Wait for whatever is still in flight and close the fds nobody took: ready for a new batch. */
void prefetch_reset(struct prefetch *p);

/* Open name in dirfd (O_NOATIME where allowed, never following a symlink) and queue a read of its
 * first size bytes (0 < size <= PREFETCH_FILE_MAX + 1: the caller's choice). name must stay in
 * place until the batch is reset. false when the batch is full (nothing done). */
bool prefetch_add(struct prefetch *p, int dirfd, const char *name, size_t size);

/* Submit what was added. */
void prefetch_submit(struct prefetch *p);

/* What prefetch_take hands over. fd < 0: the open failed with errno err. Otherwise the fd is the
 * caller's (to close), and data holds the len bytes the read returned (fewer than asked at the
 * end of the file). data is NULL when there was no read: err is its errno, or 0 when it could not
 * be done here (read it from the fd as usual). */
struct prefetched {
	int fd;
	int err;
	const void *data;
	size_t len;
};

/* The file added as name (the same pointer as given to prefetch_add: names are matched by
 * address), waiting for its read; false when it was not added to this batch. */
bool prefetch_take(struct prefetch *p, const char *name, struct prefetched *out);

#endif
