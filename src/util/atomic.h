/*
 * atomic: write a file whole or not at all. The data goes to a temporary name in the same
 * directory, is fsynced, renamed over the real name, and the directory is fsynced, so a reader
 * (or a resume after kill -9 or a crash) finds the old contents or the new, never a torn mix.
 * Every file myriad replaces in place goes through here: checkpoint snapshots and markers,
 * fill's manifest, lifecycle's results and report.
 *
 * The temporary file is always made afresh (O_EXCL, O_NOFOLLOW): whatever stands at its name is
 * never written through, so a planted link cannot redirect the write outside the directory.
 */
#ifndef MYRIAD_ATOMIC_H
#define MYRIAD_ATOMIC_H

#include <stddef.h>
#include <sys/types.h>

/* Flags of atomic_write_at. */
enum {
	/* No fsync of the file nor of the directory: for files whose loss at a crash costs
	 * nothing (a progress line), where an fsync every few seconds would cost the disk. */
	ATOMIC_NOSYNC = 1,
	/* The directory is myriad's own (a state directory): remove whatever stands at the
	 * temporary name, link or not. Without it, only a regular file left there is removed;
	 * anything else is refused with EEXIST (it may be the user's), and the caller says so. */
	ATOMIC_REPLACE_TMP = 2,
};

/* atomic_write_at's answer when the data could not be made durable or renamed into place
 * (-1 means the temporary file could not be made or written): callers name the step. */
#define ATOMIC_RENAME_FAILED (-2)

/*
 * Write data as dirfd/name through dirfd/tmp (mode before umask; flags above). reserve > 0
 * allocates that much room beyond the data (KEEP_SIZE, best effort) before the fsync, for a
 * later in-place rewrite on a full filesystem. 0; or -1 / ATOMIC_RENAME_FAILED with errno, the
 * temporary file removed if this call made it.
 */
int atomic_write_at(int dirfd, const char *name, const char *tmp, const void *data, size_t len, mode_t mode,
		    unsigned flags, off_t reserve);

/*
 * Write data as path (mode 0644 before umask), through "path.tmp.PID" beside it, with both
 * fsyncs. 0, or -1 with errno (path unchanged; no temporary file left).
 */
int atomic_write_file(const char *path, const void *data, size_t len);

#endif
