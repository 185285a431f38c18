/* manifest: fill's description of its tree (see manifest.h). */
#include "state/manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#define MANIFEST_RESERVE (64 * 1024)

#include "util/sbuf.h"
#include "util/util.h"

int manifest_write(int dirfd, const char *dirname, const struct manifest *m)
{
	struct sbuf b = {0};
	sbuf_printf(&b, "myriad-fill-manifest 1\nmyriad_version %s\nlayout %u\n", MYRIAD_VERSION, m->layout_version);
	sbuf_printf(&b, "files %" PRIu64 "\nfanout %" PRIu64 "\nsize %" PRIu64 " %" PRIu64 "\nseed %" PRIu64 "\n", m->files,
		    m->fanout, m->size_min, m->size_max, m->seed);
	sbuf_printf(&b, "status %s\nclaimed %" PRIu64 "\n", m->complete ? "complete" : "incomplete", m->claimed);
	for (uint64_t i = 0; i < m->npartial; i++)
		sbuf_printf(&b, "partial %" PRIu64 " %" PRIu64 "\n", m->partial[i].leaf, m->partial[i].count);
	sbuf_printf(&b, "checksum %016llx\n", (unsigned long long)XXH64(b.data, b.len, 0));
	int r = -1;
	int fd = openat(dirfd, MANIFEST_NAME ".tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0 && write_all(fd, b.data, b.len) == 0 && fsync(fd) == 0 && close(fd) == 0) {
		fd = -1;
		if (renameat(dirfd, MANIFEST_NAME ".tmp", dirfd, MANIFEST_NAME) == 0 && fsync(dirfd) == 0)
			r = 0;
	}
	if (r && (errno == ENOSPC || errno == EDQUOT)) {
		/* A full filesystem has no inode or block for a new file: rewrite the manifest in place,
		 * in the room reserved when it was first written. A torn rewrite fails its checksum. */
		if (fd >= 0)
			close(fd);
		unlinkat(dirfd, MANIFEST_NAME ".tmp", 0);
		fd = openat(dirfd, MANIFEST_NAME, O_WRONLY | O_CLOEXEC);
		if (fd >= 0 && pwrite(fd, b.data, b.len, 0) == (ssize_t)b.len && ftruncate(fd, b.len) == 0 && fsync(fd) == 0)
			r = 0;
	} else if (r == 0) {
		/* Reserve room for in-place rewrites on a full filesystem. */
		fd = openat(dirfd, MANIFEST_NAME, O_WRONLY | O_CLOEXEC);
		if (fd >= 0)
			(void)fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, MANIFEST_RESERVE);
	}
	if (fd >= 0)
		close(fd);
	sbuf_free(&b);
	return r;
}

void manifest_free(struct manifest *m)
{
	free(m->partial);
	m->partial = NULL;
	m->npartial = 0;
}

static bool parse_u64(const char *s, uint64_t *v)
{
	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || *end)
		return false;
	*v = x;
	return true;
}

int manifest_read(int dirfd, const char *dirname, struct manifest *m)
{
	memset(m, 0, sizeof(*m));
	int fd = openat(dirfd, MANIFEST_NAME, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		warnx_("%s/%s: open: %s", dirname, MANIFEST_NAME, strerror(errno));
		return -1;
	}
	struct sbuf b = {0};
	char tmp[8192];
	ssize_t n;
	while ((n = read(fd, tmp, sizeof(tmp))) > 0 && b.len < (16u << 20))
		sbuf_add(&b, tmp, n);
	close(fd);
	const char *why = NULL;
	sbuf_addc(&b, 0);
	b.len--;
	if (memchr(b.data, 0, b.len)) {
		why = "it holds a NUL byte";
		goto bad;
	}
	/* The checksum line covers every byte before it. */
	char *ck = b.len ? strstr(b.data, "checksum ") : NULL;
	while (ck && ck != b.data && ck[-1] != '\n')
		ck = strstr(ck + 1, "checksum ");
	unsigned long long want;
	char extra;
	if (!ck || sscanf(ck, "checksum %16llx\n%c", &want, &extra) != 1 || strlen(ck) != 26 ||
	    XXH64(b.data, ck - b.data, 0) != want) {
		why = "checksum missing or wrong (the file is corrupt or truncated)";
		goto bad;
	}
	*ck = 0;
	bool seen_magic = false, seen[8] = {0};
	uint64_t cap = 0;
	for (char *line = strtok(b.data, "\n"); line; line = strtok(NULL, "\n")) {
		char *val = strchr(line, ' ');
		if (!val) {
			why = "a line without a value";
			goto bad;
		}
		*val++ = 0;
		uint64_t v, v2;
		if (!strcmp(line, "myriad-fill-manifest")) {
			if (strcmp(val, "1")) {
				why = "unknown manifest version";
				goto bad;
			}
			seen_magic = true;
		} else if (!strcmp(line, "myriad_version")) {
			snprintf(m->myriad_version, sizeof(m->myriad_version), "%s", val);
		} else if (!strcmp(line, "layout") && parse_u64(val, &v) && v == 1) {
			m->layout_version = 1;
			seen[0] = true;
		} else if (!strcmp(line, "files") && parse_u64(val, &m->files)) {
			seen[1] = true;
		} else if (!strcmp(line, "fanout") && parse_u64(val, &m->fanout)) {
			seen[2] = true;
		} else if (!strcmp(line, "size") && sscanf(val, "%" SCNu64 " %" SCNu64 "%c", &v, &v2, &extra) == 2) {
			m->size_min = v;
			m->size_max = v2;
			seen[3] = true;
		} else if (!strcmp(line, "seed") && parse_u64(val, &m->seed)) {
			seen[4] = true;
		} else if (!strcmp(line, "status") && (!strcmp(val, "complete") || !strcmp(val, "incomplete"))) {
			m->complete = !strcmp(val, "complete");
			seen[5] = true;
		} else if (!strcmp(line, "claimed") && parse_u64(val, &m->claimed)) {
			seen[6] = true;
		} else if (!strcmp(line, "partial") && sscanf(val, "%" SCNu64 " %" SCNu64 "%c", &v, &v2, &extra) == 2 &&
			   m->npartial < MANIFEST_MAX_PARTIAL) {
			if (m->npartial == cap) {
				cap = cap ? 2 * cap : 16;
				m->partial = xrealloc(m->partial, cap * sizeof(*m->partial));
			}
			m->partial[m->npartial++] = (struct partial_leaf){v, v2};
		} else {
			why = "an unknown or malformed line";
			goto bad;
		}
	}
	if (!seen_magic || !seen[0] || !seen[1] || !seen[2] || !seen[3] || !seen[4] || !seen[5] || !seen[6]) {
		why = "a required field is missing";
		goto bad;
	}
	sbuf_free(&b);
	return 1;
bad:
	warnx_("%s/%s: not a usable fill manifest: %s", dirname, MANIFEST_NAME, why);
	sbuf_free(&b);
	manifest_free(m);
	return -1;
}

uint64_t manifest_leaf_files(const struct manifest *m, uint64_t leaf, uint64_t full_count)
{
	if (leaf >= m->claimed)
		return 0;
	for (uint64_t i = 0; i < m->npartial; i++)
		if (m->partial[i].leaf == leaf)
			return m->partial[i].count < full_count ? m->partial[i].count : full_count;
	return full_count;
}
