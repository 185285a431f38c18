/*
 * mounts: the mount table of our mount namespace (/proc/self/mountinfo), and unmounting only
 * while what is mounted is still what the caller means. Names alone decide nothing: a source is
 * compared by device number when it is a block device, and a mount point is unmounted only while
 * its topmost mount passes the caller's check, so that a mount someone else made on the same
 * directory meanwhile is left alone.
 */
#ifndef MYRIAD_MOUNTS_H
#define MYRIAD_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct sbuf;

/* One line of mountinfo. */
struct mount_entry {
	dev_t dev;	 /* st_dev of the filesystem (anonymous for btrfs) */
	char *point, *src; /* unescaped */
	char *root;	 /* the directory of the filesystem mounted there (unescaped) */
	char *fstype, *opts; /* the filesystem type and its superblock options ("rw,memory") */
};

/* Append s with the octal \ooo escapes of mountinfo and /proc/swaps (for space, tab, newline,
 * backslash, control characters), so that it stays one tab-free field of a line. */
void mounts_escape(struct sbuf *b, const char *s);

/* Undo those escapes (the kernel's or mounts_escape's) in place. */
void mounts_unescape(char *s);

/* Every mount, in mountinfo order (later ones lie on top); *n of them. NULL when mountinfo
 * cannot be read (or holds nothing). Free with mounts_free. */
struct mount_entry *mounts_read(size_t *n);
void mounts_free(struct mount_entry *m, size_t n);

/* The mount point of a mount of the block device rdev (by its device number or its source), or
 * NULL. Prefers "/" so that a refusal can say it holds the running system. */
const char *mounts_on_dev(const struct mount_entry *m, size_t n, dev_t rdev);

/* The source of the topmost mount on point (a copy to free), or NULL when nothing is mounted
 * there. */
char *mounts_top_source(const char *point);

/* Do a mounted and a recorded source name the same thing (the same string, or block devices with
 * the same device number)? */
bool mounts_same_source(const char *mounted, const char *recorded);

/* Unmount point while ours(arg) says its topmost mount is still the caller's: retried for about
 * 2 s while busy (a process just killed may still hold it), then detached lazily (MNT_DETACH).
 * 0, or -1 with errno when even that fails. */
int mounts_unmount_while(const char *point, bool (*ours)(const void *arg), const void *arg);

/* mounts_unmount_while for "the topmost mount on point has the source src". */
int mounts_unmount_source(const char *point, const char *src);

#endif
