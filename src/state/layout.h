/*
 * layout: the deterministic tree that fill creates and verify checks. File i's path, size and
 * contents are pure functions of (i, files, fanout, size spec, seed), so verify needs no list of
 * what should be there and works on any copy of the tree.
 *
 * Shape: L = ceil(N / F) leaf directories hold the files, F per leaf (the last may hold fewer);
 * D levels of directories above them, the fewest with F^D >= L (none when one leaf suffices: the
 * files then sit in DIR itself). Leaf l's path spells l in base F, one "dDIGIT" component per
 * level, most significant first; file i is "f<i>" in leaf i / F. For 1M files and F = 1000:
 * DIR/d0/f0 ... DIR/d999/f999999.
 */
#ifndef MYRIAD_LAYOUT_H
#define MYRIAD_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LAYOUT_VERSION 1
#define LAYOUT_NAME_MAX 64 /* longest path of a leaf directory plus a file name, per 20 levels */
#define LAYOUT_DEPTH_MAX 23 /* levels of directories above the files */

struct layout {
	uint64_t files;
	uint64_t fanout;
	uint64_t size_min, size_max; /* equal for a fixed size */
	uint64_t seed;
	uint64_t leaves;
	unsigned depth;
	uint64_t dirs_at[LAYOUT_DEPTH_MAX + 1]; /* directories at each level 1..depth (index 0: DIR = 1) */
};

/* Set up a layout. false when the parameters are out of range (fanout < 2, files > 10^15, a tree
 * deeper than LAYOUT_DEPTH_MAX levels: 2^24 files at fanout 2). */
bool layout_init(struct layout *l, uint64_t files, uint64_t fanout, uint64_t size_min, uint64_t size_max,
		 uint64_t seed);

/* Number of files in leaf `leaf`. */
uint64_t layout_leaf_files(const struct layout *l, uint64_t leaf);

/* Write the path of directory `index` at `level` (0 = DIR: ""; depth = leaves) relative to DIR
 * into buf (at least 24 * 24 bytes), without a trailing slash; returns its length. */
size_t layout_dir_path(const struct layout *l, unsigned level, uint64_t index, char *buf);

/* Write file i's name ("f<i>") into buf (at least 24 bytes); returns its length. */
size_t layout_file_name(uint64_t i, char *buf);

/* Parse a file name; true with *i set when name is "f<i>" in canonical form. */
bool layout_parse_file(const char *name, uint64_t *i);
/* Parse a directory name; true with *digit set when name is "d<digit>" in canonical form. */
bool layout_parse_dir(const char *name, uint64_t *digit);

/* File i's size. */
uint64_t layout_file_size(const struct layout *l, uint64_t i);

/* File i's contents from byte offset off, len bytes (off a multiple of 8). */
void layout_file_data(const struct layout *l, uint64_t i, uint64_t off, void *buf, size_t len);

#endif
