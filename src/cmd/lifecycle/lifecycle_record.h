/*
 * lifecycle_record: what keeps myriad lifecycle to its own things. The record (OUT/made.list)
 * lists each image, mount point, loop device and mount a run makes, written durably before it is
 * made, so that the run itself and, after a kill -9, the next run with the same --out tear down
 * exactly those, each only while it still is what was recorded. (The guard on a block device
 * given with --device is io/devbusy.h.)
 */
#ifndef MYRIAD_LIFECYCLE_RECORD_H
#define MYRIAD_LIFECYCLE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#define LC_RECORD_NAME "made.list"

/* Open (creating) the record DIR/made.list for appending; -1 with errno on failure. */
int lc_record_open(const char *dir);

/* Is the file at path a record of lifecycle's: a regular file whose every complete line is an
 * item of a kind lc_record_add writes? (Its start-up clean-up acts on what it lists.) */
bool lc_record_is_ours(const char *path);

/* Append one item durably (fdatasync) before it is made: kind is "image", "dir" (a path, with
 * its identity once it exists), "scratch" (a directory like "dir" whose files may be removed with
 * it: e2fsck's scratch files, which a kill -9 leaves), "loop" (device, image path, image identity)
 * or "mount" (source, mount point). id is NULL when the thing does not exist yet. 0, or -1 with
 * errno. */
int lc_record_add(int fd, const char *kind, const char *a, const char *b, const struct stat *id);

/* Tear down what the record lists, each only while it is still what was recorded: a mount only
 * when its mount point and source match (and its loop device still backs the recorded image), a
 * loop device only when it is backed by the recorded image, an image only when it is the recorded
 * file, a scratch directory only when it is the recorded directory (lc_scratch_remove). Mounts
 * first, then loop devices, images, directories (an empty "dir" only: a mount point may still hold
 * a mount). With announce, says what it does and what it leaves alone. Empties the record when
 * nothing of it is left; true then. */
bool lc_record_clean(int fd, bool announce);

/* Remove the scratch directory path if it is still the directory (dev, ino): the regular files
 * and symlinks directly in it (a link itself, never what it points to; nothing below a
 * subdirectory), through a descriptor checked to be that directory, then the directory. The
 * number of files removed in *files. 0, or -1 with errno (ESTALE: another directory is there now,
 * left alone; ENOTEMPTY: it holds more than files). */
int lc_scratch_remove(const char *path, dev_t dev, ino_t ino, int *files);

#endif
