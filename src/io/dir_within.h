/*
 * dir_within: whether one directory lies inside another, however each is reached (symlinks, bind
 * mounts), so that myriad copy can refuse to copy a tree into itself.
 */
#ifndef MYRIAD_IO_DIR_WITHIN_H
#define MYRIAD_IO_DIR_WITHIN_H

/*
 * Is directory a the directory b or inside it, however each is reached? Compared by (dev, ino) up
 * a's ".." chain to the root, and where that chain crosses the root of a mount that shows only
 * part of a filesystem (a bind mount), by that root's path in b's filesystem. 1 yes, 0 no, -1 errno.
 */
int dir_within(int a, int b);

#endif
