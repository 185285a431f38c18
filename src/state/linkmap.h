/*
 * linkmap: the map of hard-linked inodes whose other links are still to come, for myriad copy:
 * (device, inode) -> (the DST path of its first link, links not yet seen). Memory is bounded by a
 * budget: once the entries in memory fill it, further ones go to an on-disk hash table in unlinked
 * temporary files of a given directory (the state directory), so any number of hard-link groups
 * is copied with flat memory. An entry is dropped when its last link has been seen, wherever it
 * lives. Not thread-safe: the caller holds one lock around every call.
 */
#ifndef MYRIAD_LINKMAP_H
#define MYRIAD_LINKMAP_H

#include <stddef.h>
#include <stdint.h>

#include "util/sbuf.h"

struct linkmap;

/* A map that keeps at most budget bytes in memory and spills to files made in spill_dir (NULL:
 * $TMPDIR or /tmp) when it needs to. The files are created on the first spill, already unlinked. */
struct linkmap *linkmap_new(uint64_t budget, const char *spill_dir);
void linkmap_free(struct linkmap *m);

/*
 * Find (dev, ino). 1: found, its path (NUL-terminated) in *path and one of its links counted off
 * (the entry goes when none are left); 0: not in the map; -1: the spill file failed (errno set).
 */
int linkmap_take(struct linkmap *m, uint64_t dev, uint64_t ino, struct sbuf *path);

/* Remember (dev, ino), which must not be in the map, with left (> 0) links to come and the path of
 * its first one. 0, or -1 with errno when it had to spill and the spill file failed. */
int linkmap_add(struct linkmap *m, uint64_t dev, uint64_t ino, uint32_t left, const char *path, size_t len);

/* Entries now in the map, and how many were ever placed on disk. */
uint64_t linkmap_count(const struct linkmap *m);
uint64_t linkmap_spilled(const struct linkmap *m);
/* Bytes of entries held in memory now (at most the budget). */
uint64_t linkmap_memory(const struct linkmap *m);

#endif
