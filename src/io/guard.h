/*
 * guard: the checks every operand of a command that removes (myriad rm's DIRs, later find's
 * -delete starting points) passes before anything is touched. They refuse what no removal may
 * reach, whatever the tree holds:
 *  - a path whose last component is '.' or '..', in any spelling ("./", "d/..", "$PWD/.."): it
 *    names a directory by its relation to another ("d/.." is d's parent, removed after d);
 *  - a symlink written with a trailing '/' ("link/"): that names the link's target, and symlinks
 *    are never followed;
 *  - '/' and the working directory with every directory above it, compared by device and inode, so
 *    that no other spelling of them (a bind mount, a symlink on the way) gets past.
 * The verdict also gives the operand's identity and type, so a command can check that what it then
 * opens is what was checked (guard_same), and refuse types it does not remove.
 */
#ifndef MYRIAD_GUARD_H
#define MYRIAD_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "io/dir.h"

/* What is never removed: / and the working directory with the directories above it. */
struct guard {
	struct fs_id root;
	struct fs_id *above; /* the working directory, its parent, ..., up to the top ('..' of itself) */
	size_t nabove;
};

/* Record / and the working directory's ancestors (taken by "..", as the kernel resolves it). 0, or
 * -1 with errno when they cannot be read: then nothing can be checked. */
int guard_init(struct guard *g);
void guard_free(struct guard *g);

enum guard_verdict {
	GUARD_OK,
	GUARD_ERRNO,      /* it could not be looked at: errno says why (ENOENT: it does not exist) */
	GUARD_DOT,        /* its last component is '.' or '..' */
	GUARD_LINK_SLASH, /* a symlink with a trailing '/' */
	GUARD_ROOT,       /* it is / */
	GUARD_CWD,        /* it is the working directory or a directory above it */
};

/* The operand as it was checked: the entry itself, never a final symlink's target. */
struct guard_operand {
	struct fs_id id;
	mode_t type; /* S_IFDIR, S_IFLNK, ... */
};

/* Check operand path against every rule above (the '.' and '..' rule before any lookup). On
 * GUARD_OK op describes the operand; a command refuses the types it does not remove itself. */
enum guard_verdict guard_check(const struct guard *g, const char *path, struct guard_operand *op);

/* Is the directory with identity id / (GUARD_ROOT), the working directory or one above it
 * (GUARD_CWD), or neither (GUARD_OK)? For entries met inside a tree, whose paths guard_check's
 * '.' and link rules do not apply to. */
enum guard_verdict guard_id(const struct guard *g, const struct fs_id *id);
/* The length of path without its trailing slashes ("/" keeps its one): the name a message can
 * suggest instead of "link/". */
size_t guard_name_len(const char *path);

/* The rule behind a refusal, for the message ("a last component '.' or '..' is never removed"). */
const char *guard_rule(enum guard_verdict v);

/* Is open file fd the entry guard_check saw (device, inode and mount)? For the last check of what a
 * command actually opened by the operand's path: it may have been replaced since. */
bool guard_same(const struct guard_operand *op, int fd);

/*
 * Does removing the directory tree take the entry at path with it: is that entry (a directory
 * tree itself included) or, when path does not exist yet, the directory it would be made in, inside
 * tree, however each is reached (a symlink on the way, a bind mount: compared by identity, as
 * dir_within does)? For the files a removing run writes itself (its state, --json, --errors,
 * --output). 1 yes, 0 no, -1 with errno (path's directory cannot be looked at).
 */
int guard_path_in_tree(const char *path, const char *tree);

/*
 * Is one operand of a removal another's tree or inside it (the same directory named twice, or "D"
 * and "D/sub")? Both would be walked and removed at once, racing each other. Operands are the
 * directories paths[0..n) (each already through guard_check). 1 with *inner inside *outer
 * (indices; *same when they are one directory, the later one then inner), 0 none, -1 with errno.
 */
int guard_overlap(char *const *paths, size_t n, size_t *inner, size_t *outer, bool *same);

#endif
