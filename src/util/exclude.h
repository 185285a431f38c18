/*
 * exclude: the --exclude patterns of every command that walks. A pattern matches one name (an
 * entry's, at any depth) as fnmatch(3) with no flags; one ending in '/' matches only directories
 * (rsync's and .gitignore's habit: "keep/" keeps directory keep, not a file named keep). A '/'
 * anywhere else would make a path of it, which no name matches: such patterns, and the empty one,
 * are refused when parsed rather than silently excluding nothing.
 */
#ifndef MYRIAD_EXCLUDE_H
#define MYRIAD_EXCLUDE_H

#include <stdbool.h>
#include <stddef.h>

struct excludes {
	char **pats;    /* without their trailing '/' (malloc'd) */
	bool *dir_only; /* the pattern ended in '/' */
	size_t n;
};

/* Why --exclude pat cannot be used, for a message ("" after the pattern), or NULL when it can. */
const char *exclude_refusal(const char *pat);
/* Compile the n patterns (each one exclude_refusal accepts). */
void excludes_init(struct excludes *x, char *const *pats, size_t n);
void excludes_free(struct excludes *x);
/* Does a pattern match entry name of directory dirfd, whose type is dtype (a DT_ value)? Where
 * only a directory's pattern matches and the type is unknown (DT_UNKNOWN), the entry is lstat'ed. */
bool excludes_match(const struct excludes *x, int dirfd, const char *name, unsigned char dtype);

#endif
