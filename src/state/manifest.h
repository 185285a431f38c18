/*
 * manifest: the small text file (DIR/.myriad-fill) with which fill describes the tree it makes:
 * the layout's parameters, the versions, and once the fill ends exactly which files exist, so
 * verify needs no options and works on a copy of the tree. It ends with an xxh64 checksum line;
 * a manifest that does not parse or check is reported, never half-trusted.
 *
 * Which files exist: every leaf below `claimed` holds all its files, except the leaves listed as
 * partial, which hold only their first COUNT files; leaves from `claimed` on hold none. A fill
 * that ran to the end has claimed = all leaves and no partial leaves; --until-full may stop short.
 */
#ifndef MYRIAD_MANIFEST_H
#define MYRIAD_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MANIFEST_NAME ".myriad-fill"
#define MANIFEST_MAX_PARTIAL 65536
#define MANIFEST_MAX_BYTES (16u << 20) /* far more than MANIFEST_MAX_PARTIAL lines take */

struct partial_leaf {
	uint64_t leaf;
	uint64_t count;
};

struct manifest {
	uint64_t files, fanout, size_min, size_max, seed;
	unsigned layout_version;
	char myriad_version[32];
	bool complete;
	uint64_t claimed;
	uint64_t npartial;
	struct partial_leaf *partial;
};

struct layout;

/* Read DIR's manifest (dirfd) with manifest_parse. 1 read, 0 none, -1 unusable (message names the
 * file and why; a symlink or anything but a regular file there is unusable, never read through). */
int manifest_read(int dirfd, const char *dirname, struct manifest *m);
/*
 * Parse a manifest's bytes: every line as the writer makes it, the checksum line last, every
 * required field present, and a manifest that fits the layout its parameters make (claimed leaves
 * exist; partial leaves are claimed ones, in increasing order, not fuller than the layout's).
 * 1, or -1 with *why saying what is wrong (m is then empty).
 */
int manifest_parse(const char *data, size_t len, struct manifest *m, const char **why);
/* Write it atomically and durably, through a temporary file made with O_EXCL | O_NOFOLLOW (an
 * entry there that is not a regular file is refused, never written through). 0 or -1 with a message. */
int manifest_write(int dirfd, const char *dirname, const struct manifest *m);
void manifest_free(struct manifest *m);
/* Expected number of files in leaf (given the layout's full count for it). */
uint64_t manifest_leaf_files(const struct manifest *m, uint64_t leaf, uint64_t full_count);
/* Number of files the manifest says exist, in layout lay (made from its parameters). */
uint64_t manifest_file_count(const struct manifest *m, const struct layout *lay);

#endif
