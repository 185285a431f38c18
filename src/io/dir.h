/*
 * dir: the thin syscall layer for reading directories. getdents64 into a caller's large buffer
 * (no per-entry syscalls, d_type straight from the kernel), and opening a directory by a path
 * relative to a parent fd without following symlinks anywhere on the way, also when the path is
 * longer than PATH_MAX; opening a file of a directory for reading; and whether one directory
 * lies inside another however each is reached (copy refuses a DST inside its SRC).
 */
#ifndef MYRIAD_DIR_H
#define MYRIAD_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* Read entries into buf. Returns bytes read, 0 at the end, -1 with errno. */
ssize_t dir_read(int fd, void *buf, size_t size);

/*
 * Open the directory at rel[0..rel_len) (relative to dirfd; "" means dirfd itself, as a new open file) for
 * reading, refusing symlinks in every component. Long paths are opened in pieces. Returns the fd
 * or -1 with errno (ELOOP when a component is a symlink, ENOTDIR when one is not a directory).
 */
int dir_open_at(int dirfd, const char *rel, size_t rel_len);

/* Open name in dirfd for reading, never following a final symlink, without updating its atime
 * where this process may ask that (O_NOATIME: EPERM on a file that is not its own, which is then
 * opened without). The fd, or -1 with errno. */
int dir_open_file(int dirfd, const char *name);

/* Does directory fd hold nothing but "." and ".." (and the names in the NULL-terminated list
 * ignore, which may be NULL)? 1 yes, 0 no, -1 with errno. Moves fd's reading position (meant for
 * an fd used only as a base for *at calls, or opened for this). */
int dir_is_empty(int fd, const char *const *ignore);

/*
 * Where an entry lives: the filesystem's device, its inode, and the mount it is reached through.
 * Two directories with the same dev and ino are the same directory, whatever paths reach them (a
 * bind mount is an alias); a directory whose mnt differs from its parent's is a mount point, also
 * a bind mount of the same filesystem, where st_dev alone cannot tell.
 */
struct fs_id {
	uint64_t dev, ino, mnt;
};

/* The identity of name in dirfd ("" for dirfd itself), never following a final symlink. The mount
 * comes from statx's mount id (Linux 5.8+), else from /proc/self/fdinfo. 0, or -1 with errno. */
int fs_identity(int dirfd, const char *name, struct fs_id *id);

/* Are a and b the same inode (any mount)? */
static inline int fs_id_same(const struct fs_id *a, const struct fs_id *b) { return a->dev == b->dev && a->ino == b->ino; }

/* Filesystem types (statfs f_type) whose behaviour commands choose by. */
#define FS_EXT 0xEF53UL       /* ext2/3/4 */
#define FS_XFS 0x58465342UL   /* XFS */
#define FS_BTRFS 0x9123683EUL /* btrfs */

/* The filesystem type of path (statfs's f_type), or 0. */
unsigned long fs_type(const char *path);

/* Filesystems on block devices whose directories are hash-ordered while inode numbers follow
 * where the data was laid down: taking a directory's entries in inode order saves seeks there. */
static inline int fs_inode_ordered(unsigned long type) { return type == FS_EXT || type == FS_XFS || type == FS_BTRFS; }

/* Is this entry "." or ".."? */
static inline int dir_is_dot(const char *n) { return n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2])); }

/*
 * Is directory a the directory b or inside it, however each is reached? Compared by (dev, ino) up
 * a's ".." chain to the root, and where that chain crosses the root of a mount that shows only
 * part of a filesystem (a bind mount), by that root's path in b's filesystem. 1 yes, 0 no, -1 errno.
 */
int dir_within(int a, int b);

/*
 * Where directory fd lies in its filesystem, however it is reached: that filesystem
 * ("major:minor", 32 bytes) into dev and the directory's path inside it (its mount's root joined
 * with its path under the mount point: a bind mount gives the path of what it shows) into fspath
 * (PATH_MAX bytes). One directory is within another exactly when dev is the same and its fspath
 * is the other's or under it (dir_path_under). 0, or -1 when it cannot be told (a path longer than
 * PATH_MAX, a directory removed).
 */
int dir_fs_path(int fd, char dev[32], char *fspath);

/* Is absolute path a equal to b or under it ("/x/y" under "/x", not "/xy")? */
bool dir_path_under(const char *a, const char *b);

#endif
