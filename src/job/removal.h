/*
 * removal: the rules every command that removes shares — myriad rm, find -delete and copy
 * --delete (lifecycle removes only what it recorded making) — checked together before anything is
 * touched, so that a rule added here is had by all of them:
 *  - each operand through guard_check (io/guard.h): '.' and '..', a symlink written "link/", /,
 *    the working directory and every directory above it, compared by device and inode;
 *  - no operand inside another, nor one named twice: both would be removed at once, racing;
 *  - none of the run's own files (its state directory, --json, --errors, --output and the like)
 *    inside what is removed: the run would remove them as it writes them.
 * What each command does while removing (never a mount point, never through a symlink, never the
 * working directory's chain met inside a tree) lives with the engine and io/rmtree; this module is
 * the part that can be said before the work starts.
 */
#ifndef MYRIAD_REMOVAL_H
#define MYRIAD_REMOVAL_H

#include <stddef.h>

#include "job/job.h"
#include "util/sbuf.h"

/* A file the run writes, named by option opt ("--json"), at path; NULL path: not given. */
struct removal_own {
	const char *opt;
	const char *path;
};

/*
 * Refuse a removal whose trees overlap (one inside another, or the same named twice). how says
 * what is done to them, for the message ("to remove", "-delete under"). 0, or EXIT_USAGE after a
 * message naming both.
 */
int removal_check_overlap(char *const *trees, size_t ntrees, const char *how);

/*
 * Refuse a removal of trees that would take the run's own files with it: the state directory that
 * job_begin would use (unless --no-state; cmd and identity as job_begin's), --json and --errors
 * from o, and the command's own outputs own[0..nown). 0, or EXIT_USAGE after a message naming the
 * option, the file and the tree.
 */
int removal_check_own(const struct job_opts *o, const char *cmd, const struct sbuf *identity, char *const *trees,
		      size_t ntrees, const struct removal_own *own, size_t nown, const char *how);

#endif
