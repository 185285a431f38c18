/*
 * rmtree: removing a whole tree below a directory fd, for myriad copy --delete (what no longer
 * exists in the source). No recursion and no paths handed to the kernel whole: one directory fd
 * at a time, down by name and back up through "..", checked at each level, so a tree of any
 * depth or path length is removed in bounded memory, and a directory swapped for a link or a
 * mount made during the removal cannot lead it outside the tree. The working directory and the
 * directories above it, met inside the tree, are left alone as myriad rm leaves them (io/guard).
 */
#ifndef MYRIAD_RMTREE_H
#define MYRIAD_RMTREE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "io/guard.h"
#include "util/exclude.h"
#include "util/sbuf.h"

/* Take one deletion from budget (NULL: no limit): false when none is left. */
bool rm_budget_take(_Atomic uint64_t *budget);

/* What remove_tree is allowed, and what it did. */
struct rm_tree {
	/* Deletions still allowed, shared by every worker (NULL: no limit): each unlink or rmdir
	 * takes one first; none left, the removal stops with ECANCELED. */
	_Atomic uint64_t *budget;
	uint64_t mnt; /* the mount the tree lives on: a directory on any other is never entered */
	/* / and the working directory with those above it: never entered nor removed (NULL: no such
	 * check; only for trees that cannot hold them). */
	const struct guard *guard;
	/* Names that stay wherever they are met, with the directories above them (--exclude: what
	 * is excluded is never deleted, as with rsync's --delete); NULL or none: no such names. */
	const struct excludes *keep;
	/* Told of each directory left alone (its path relative to remove_tree's dirfd): a mount point
	 * (v GUARD_OK), or one the guard keeps (v says which rule). */
	void (*left_alone)(void *arg, const char *rel, size_t len, enum guard_verdict v);
	void *arg;
	bool count_only;  /* remove nothing: count what would go, the same way (copy --dry-run) */
	uint64_t removed; /* out: entries removed, also when it failed part way */
	bool kept;        /* out: a directory was left alone, or a name kept, so the entries above it stay */
	struct sbuf where; /* out on failure: the path (relative to dirfd) of the entry that failed */
	const char *op;    /* out on failure: the operation that failed */
};

/*
 * Remove name in dirfd and, if it is a directory, everything under it, without recursion: one
 * fd at a time, going back up through ".." checked against each level's (dev, ino); memory is one
 * small record and the name per level. Never follows a symlink, never enters another mount. 0, or
 * -1 with errno (ECANCELED: t->budget ran out; with t->kept: left because of a mount point).
 * With t->count_only the same walk removes nothing: t->removed (and the budget) count what would go.
 */
int remove_tree(int dirfd, const char *name, struct rm_tree *t);

#endif
