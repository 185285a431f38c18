/* manifest: fill's description of its tree (see manifest.h). */
#include "state/manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#define MANIFEST_RESERVE (64 * 1024)

#include "state/layout.h"
#include "util/atomic.h"
#include "util/sbuf.h"
#include "util/util.h"

#define MANIFEST_TMP MANIFEST_NAME ".tmp"

/* What kind of entry mode is, for messages. */
static const char *entry_kind(mode_t mode)
{
	return S_ISLNK(mode) ? "a symbolic link" : S_ISDIR(mode) ? "a directory" : "not a regular file";
}

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
	/* .myriad-fill.tmp is made afresh, never through a link; one left by a crash (a regular file)
	 * is removed first; anything else under that name was not made by fill and is left as it is.
	 * Room is reserved for in-place rewrites on a full filesystem (it moves with the rename). */
	int r = atomic_write_at(dirfd, MANIFEST_NAME, MANIFEST_TMP, b.data, b.len, 0644, 0, MANIFEST_RESERVE);
	int e = errno;
	const char *op = r == ATOMIC_RENAME_FAILED ? "rename" : "write";
	struct stat st;
	if (r == -1 && e == EEXIST && fstatat(dirfd, MANIFEST_TMP, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    !S_ISREG(st.st_mode)) {
		warnx_("%s/%s: %s, not a file fill left: refusing to write the manifest through it; remove it", dirname,
		       MANIFEST_TMP, entry_kind(st.st_mode));
		sbuf_free(&b);
		errno = EEXIST;
		return -1;
	}
	if (r && (e == ENOSPC || e == EDQUOT)) {
		/* A full filesystem has no inode or block for a new file: rewrite the manifest in place,
		 * in the room reserved when it was first written — only a regular file of one link, so
		 * that nothing outside the tree is written. A torn rewrite fails its checksum. */
		int fd = openat(dirfd, MANIFEST_NAME, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
		    pwrite_all(fd, b.data, b.len, 0) == 0 && ftruncate(fd, b.len) == 0 && fsync(fd) == 0)
			r = 0;
		if (fd >= 0)
			close(fd);
	}
	if (r)
		warnx_("%s/%s: %s: %s", dirname, MANIFEST_NAME, op, strerror(e));
	sbuf_free(&b);
	return r ? -1 : 0;
}

void manifest_free(struct manifest *m)
{
	free(m->partial);
	m->partial = NULL;
	m->npartial = 0;
}

/* A decimal number as the writer prints it: digits only, no sign, no space, no overflow. */
static bool parse_u64(const char *s, uint64_t *v)
{
	uint64_t x = 0;
	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || x > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return false;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = x;
	return true;
}

/* "A B": two numbers separated by one space. */
static bool parse_u64_pair(char *s, uint64_t *a, uint64_t *b)
{
	char *sp = strchr(s, ' ');
	if (!sp)
		return false;
	*sp = 0;
	bool ok = parse_u64(s, a) && parse_u64(sp + 1, b);
	*sp = ' ';
	return ok;
}

static bool is_hex16(const char *s)
{
	for (int i = 0; i < 16; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* Does the manifest fit the layout its parameters make? (See manifest.h.) */
static const char *check_layout(const struct manifest *m)
{
	struct layout lay;
	if (!layout_init(&lay, m->files, m->fanout, m->size_min, m->size_max, m->seed))
		return "its parameters do not make a layout";
	if (m->claimed > lay.leaves)
		return "it claims more directories than its layout has";
	for (uint64_t i = 0; i < m->npartial; i++) {
		const struct partial_leaf *p = &m->partial[i];
		if (p->leaf >= m->claimed || (i && p->leaf <= m->partial[i - 1].leaf))
			return "its partly filled directories are not claimed ones in increasing order";
		if (p->count > layout_leaf_files(&lay, p->leaf))
			return "a partly filled directory holds more files than its layout has";
	}
	return NULL;
}

int manifest_parse(const char *data, size_t len, struct manifest *m, const char **why)
{
	memset(m, 0, sizeof(*m));
	*why = NULL;
	if (memchr(data, 0, len)) {
		*why = "it holds a NUL byte";
		return -1;
	}
	/* The last line is "checksum HEX16" and covers every byte before it. */
	static const char ck_word[] = "checksum ";
	size_t ck_len = sizeof(ck_word) - 1 + 16 + 1, body = len - ck_len;
	if (len < ck_len || memcmp(data + body, ck_word, sizeof(ck_word) - 1) != 0 || data[len - 1] != '\n' ||
	    (body && data[body - 1] != '\n') || !is_hex16(data + body + sizeof(ck_word) - 1) ||
	    strtoull(data + body + sizeof(ck_word) - 1, NULL, 16) != XXH64(data, body, 0)) {
		*why = "checksum missing or wrong (the file is corrupt or truncated)";
		return -1;
	}
	char *text = xmalloc(body + 1);
	memcpy(text, data, body);
	text[body] = 0;
	bool seen_magic = false, seen[8] = {0};
	uint64_t cap = 0;
	for (char *save, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *val = strchr(line, ' ');
		if (!val) {
			*why = "a line without a value";
			goto bad;
		}
		*val++ = 0;
		static const char *const once[] = {"layout", "files", "fanout", "size", "seed", "status", "claimed"};
		for (int k = 0; k < 7; k++)
			if (seen[k] && !strcmp(line, once[k])) {
				*why = "a field appears twice";
				goto bad;
			}
		uint64_t v, v2;
		if (!strcmp(line, "myriad-fill-manifest")) {
			if (strcmp(val, "1")) {
				*why = "unknown manifest version";
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
		} else if (!strcmp(line, "size") && parse_u64_pair(val, &m->size_min, &m->size_max)) {
			seen[3] = true;
		} else if (!strcmp(line, "seed") && parse_u64(val, &m->seed)) {
			seen[4] = true;
		} else if (!strcmp(line, "status") && (!strcmp(val, "complete") || !strcmp(val, "incomplete"))) {
			m->complete = !strcmp(val, "complete");
			seen[5] = true;
		} else if (!strcmp(line, "claimed") && parse_u64(val, &m->claimed)) {
			seen[6] = true;
		} else if (!strcmp(line, "partial") && parse_u64_pair(val, &v, &v2) && m->npartial < MANIFEST_MAX_PARTIAL) {
			if (m->npartial == cap) {
				cap = cap ? 2 * cap : 16;
				m->partial = xrealloc(m->partial, cap * sizeof(*m->partial));
			}
			m->partial[m->npartial++] = (struct partial_leaf){v, v2};
		} else {
			*why = "an unknown or malformed line";
			goto bad;
		}
	}
	if (!seen_magic || !seen[0] || !seen[1] || !seen[2] || !seen[3] || !seen[4] || !seen[5] || !seen[6]) {
		*why = "a required field is missing";
		goto bad;
	}
	if ((*why = check_layout(m)))
		goto bad;
	free(text);
	return 1;
bad:
	free(text);
	manifest_free(m);
	return -1;
}

int manifest_read(int dirfd, const char *dirname, struct manifest *m)
{
	memset(m, 0, sizeof(*m));
	/* The manifest is a file of the tree itself: never one reached through a link. O_NONBLOCK: a
	 * FIFO planted there must not hang the open. */
	int fd = openat(dirfd, MANIFEST_NAME, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 && errno == ENOENT)
		return 0;
	if ((fd < 0 && errno == ELOOP) || (fd >= 0 && fstat(fd, &st) == 0 && !S_ISREG(st.st_mode))) {
		warnx_("%s/%s: not a usable fill manifest: %s", dirname, MANIFEST_NAME,
		       fd < 0 ? "a symbolic link" : entry_kind(st.st_mode));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (fd < 0) {
		warnx_("%s/%s: open: %s", dirname, MANIFEST_NAME, strerror(errno));
		return -1;
	}
	struct sbuf b = {0};
	char tmp[8192];
	ssize_t n;
	while ((n = read(fd, tmp, sizeof(tmp))) > 0 && b.len <= MANIFEST_MAX_BYTES)
		sbuf_add(&b, tmp, n);
	int e = errno;
	close(fd);
	const char *why;
	int r = -1;
	if (n < 0)
		warnx_("%s/%s: read: %s", dirname, MANIFEST_NAME, strerror(e));
	else if (b.len > MANIFEST_MAX_BYTES)
		warnx_("%s/%s: not a usable fill manifest: larger than any fill writes", dirname, MANIFEST_NAME);
	else if ((r = manifest_parse(b.data ? b.data : "", b.len, m, &why)) < 0)
		warnx_("%s/%s: not a usable fill manifest: %s", dirname, MANIFEST_NAME, why);
	sbuf_free(&b);
	return r;
}

/* The partial leaves are in increasing order (manifest_parse checks it): a binary search. */
uint64_t manifest_leaf_files(const struct manifest *m, uint64_t leaf, uint64_t full_count)
{
	if (leaf >= m->claimed)
		return 0;
	uint64_t lo = 0, hi = m->npartial;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (m->partial[mid].leaf < leaf)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < m->npartial && m->partial[lo].leaf == leaf)
		return m->partial[lo].count < full_count ? m->partial[lo].count : full_count;
	return full_count;
}

uint64_t manifest_file_count(const struct manifest *m, const struct layout *lay)
{
	uint64_t n = m->claimed * lay->fanout < lay->files ? m->claimed * lay->fanout : lay->files;
	for (uint64_t i = 0; i < m->npartial; i++) {
		uint64_t full = layout_leaf_files(lay, m->partial[i].leaf);
		n -= full - manifest_leaf_files(m, m->partial[i].leaf, full);
	}
	return n;
}
