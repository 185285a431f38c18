/* copy: a file's data and extended attributes for myriad copy (see copy.h). */
#include "io/copy.h"

#include <dirent.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "io/dir.h"
#include "util/util.h"

/* The source device on which copy_file_range last failed with EXDEV, ENOSYS or EOPNOTSUPP (it
 * cannot, whatever the file): files from it go straight to read/write, one wasted call per run
 * instead of one per file. */
static _Atomic uint64_t no_cfr_dev = UINT64_MAX;

/* Copy [off, end) with copy_file_range, or with pread/pwrite where the kernel cannot. Returns the
 * offset reached (end, or less when the source ended early), or -1 with errno and *op. */
static off_t copy_range(int in, int out, uint64_t dev, off_t off, off_t end, struct throttle *bw, uint64_t *bytes,
			_Atomic uint64_t *live, const char **op)
{
	static __thread char *buf;
	bool use_cfr = no_cfr_dev != dev;
	while (off < end) {
		size_t n = end - off > COPY_CHUNK ? COPY_CHUNK : (size_t)(end - off);
		if (bw)
			throttle_take(bw, n);
		ssize_t r = -1;
		if (use_cfr) {
			loff_t a = off, b = off;
			r = copy_file_range(in, &a, out, &b, n, 0);
			if (r < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP ||
				      errno == EBADF)) {
				use_cfr = false;
				if (errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP)
					no_cfr_dev = dev; /* the device's answer, not this file's */
				r = -1;
			} else if (r < 0) {
				*op = "copy_file_range";
				return -1;
			}
		}
		if (!use_cfr) {
			if (!buf)
				buf = xmalloc(COPY_CHUNK);
			r = pread(in, buf, n, off);
			if (r < 0) {
				*op = "read";
				return -1;
			}
			if (pwrite_all(out, buf, r, off) != 0) {
				*op = "write";
				return -1;
			}
		}
		if (r == 0)
			break; /* the source shrank: the caller sees it in its before/after compare */
		off += r;
		*bytes += r;
		if (live)
			*live += r;
	}
	return off;
}

/* The next run of data in [off, end) of in: its start, its end in *hole; -1 when only a hole is
 * left. As many bytes allocated as the size (dense): no holes to find (what cp also assumes). */
static off_t copy_next_data(int in, bool dense, off_t off, off_t end, off_t *hole)
{
	off_t data = dense ? off : lseek(in, off, SEEK_DATA);
	if (data < 0 && errno == ENXIO)
		return -1; /* a hole up to the end */
	*hole = dense || data < 0 ? end : lseek(in, data, SEEK_HOLE);
	if (data < 0) /* no SEEK_DATA here: everything is data */
		data = off;
	if (*hole < 0 || *hole > end)
		*hole = end;
	return data;
}

uint64_t copy_data_bytes(int in, const struct copy_src *src)
{
	off_t off = 0, end = (off_t)src->size, data, hole;
	uint64_t n = 0;
	while (off < end && (data = copy_next_data(in, src->blocks * 512 >= src->size, off, end, &hole)) >= 0) {
		n += (uint64_t)(hole - data);
		off = hole;
	}
	return n;
}

int copy_data(int in, int out, const struct copy_src *src, struct throttle *bw, uint64_t *bytes,
	      _Atomic uint64_t *live, const char **op)
{
	off_t off = 0, end = (off_t)src->size, reached = 0;
	bool dense = src->blocks * 512 >= src->size;
	while (off < end) {
		off_t hole, data = copy_next_data(in, dense, off, end, &hole);
		if (data < 0)
			break;
		reached = copy_range(in, out, src->dev, data, hole, bw, bytes, live, op);
		if (reached < 0)
			return -1;
		if (reached < hole)
			break; /* the source shrank */
		off = hole;
	}
	/* A hole at the end (or a source that shrank) leaves out short: give it the size. */
	if (reached < end && ftruncate(out, end) != 0) {
		*op = "ftruncate";
		return -1;
	}
	return 0;
}

int copy_buffer(const void *data, size_t len, int out, uint64_t *bytes, _Atomic uint64_t *live, const char **op)
{
	if (pwrite_all(out, data, len, 0) != 0) {
		*op = "write";
		return -1;
	}
	*bytes += len;
	if (live)
		*live += len;
	return 0;
}

int copy_compare(int a, int b, uint64_t size, struct throttle *bw, uint64_t *bytes, _Atomic uint64_t *live,
		 uint64_t *at, int *which)
{
	static __thread char *ba, *bb;
	if (!ba) {
		ba = xmalloc(COPY_CHUNK);
		bb = xmalloc(COPY_CHUNK);
	}
	for (uint64_t off = 0; off < size;) {
		size_t n = size - off > COPY_CHUNK ? COPY_CHUNK : (size_t)(size - off);
		if (bw)
			throttle_take(bw, n);
		ssize_t ra = pread_all(a, ba, n, (off_t)off);
		if (ra < 0) {
			*which = 0;
			return -1;
		}
		ssize_t rb = pread_all(b, bb, n, (off_t)off);
		if (rb < 0) {
			*which = 1;
			return -1;
		}
		*bytes += ra;
		if (live)
			*live += ra;
		size_t same = 0, m = ra < rb ? ra : rb;
		if (memcmp(ba, bb, m) != 0)
			while (ba[same] == bb[same])
				same++;
		else
			same = m;
		if (same < (size_t)ra || same < (size_t)rb || (size_t)ra < n) {
			*at = off + same; /* a difference, or one of them ended early */
			return 1;
		}
		off += n;
	}
	return 0;
}

/* "/proc/self/fd/N/NAME": a short path to a name under any directory fd, for the l*xattr calls. */
static void xpath(char *buf, size_t len, const struct xref *x)
{
	snprintf(buf, len, "/proc/self/fd/%d/%s", x->dirfd, x->name);
}

static ssize_t x_list(const struct xref *x, char *list, size_t size)
{
	if (x->fd >= 0)
		return flistxattr(x->fd, list, size);
	char p[320];
	xpath(p, sizeof(p), x);
	return llistxattr(p, list, size);
}

static ssize_t x_get(const struct xref *x, const char *key, void *val, size_t size)
{
	if (x->fd >= 0)
		return fgetxattr(x->fd, key, val, size);
	char p[320];
	xpath(p, sizeof(p), x);
	return lgetxattr(p, key, val, size);
}

static int x_set(const struct xref *x, const char *key, const void *val, size_t size)
{
	if (x->fd >= 0)
		return fsetxattr(x->fd, key, val, size, 0);
	char p[320];
	xpath(p, sizeof(p), x);
	return lsetxattr(p, key, val, size, 0);
}

/* The xattr names of x into a malloc'd buffer (*len bytes; NULL when there are none). */
static char *x_names(const struct xref *x, ssize_t *len)
{
	for (;;) {
		ssize_t n = x_list(x, NULL, 0);
		if (n < 0 && (errno == ENOTSUP || errno == EOPNOTSUPP))
			n = 0;
		if (n <= 0) {
			*len = n;
			return NULL;
		}
		char *b = xmalloc(n);
		ssize_t m = x_list(x, b, n);
		if (m >= 0) {
			*len = m;
			return b;
		}
		free(b);
		if (errno != ERANGE) {
			*len = -1;
			return NULL;
		}
	}
}

/* The value of key on x into a malloc'd buffer (*len bytes), or NULL with errno. */
static char *x_value(const struct xref *x, const char *key, ssize_t *len)
{
	for (;;) {
		ssize_t n = x_get(x, key, NULL, 0);
		if (n < 0)
			return NULL;
		char *b = xmalloc(n + 1);
		ssize_t m = x_get(x, key, b, n);
		if (m >= 0) {
			*len = m;
			return b;
		}
		free(b);
		if (errno != ERANGE)
			return NULL;
	}
}

/* Does to hold key with exactly val? */
static bool x_same(const struct xref *to, const char *key, const char *val, ssize_t len)
{
	ssize_t l2;
	char *v2 = x_value(to, key, &l2);
	bool same = v2 && l2 == len && !memcmp(v2, val, len);
	free(v2);
	return same;
}

int copy_xattrs(const struct xref *from, const struct xref *to, bool *diff, const char **op)
{
	ssize_t len;
	char *names = x_names(from, &len);
	if (len < 0) {
		*op = "listxattr";
		return -1;
	}
	int rc = 0;
	size_t count = 0;
	for (ssize_t i = 0; i < len && rc == 0; i += strlen(names + i) + 1) {
		ssize_t vlen;
		char *val = x_value(from, names + i, &vlen);
		count++;
		if (!val) {
			if (errno == ENODATA)
				continue; /* removed meanwhile */
			*op = "getxattr";
			rc = -1;
		} else if (diff) {
			if (!x_same(to, names + i, val, vlen))
				*diff = true;
		} else if (x_set(to, names + i, val, vlen) != 0) {
			*op = "setxattr";
			rc = -1;
		}
		free(val);
	}
	free(names);
	if (rc == 0 && diff && !*diff) { /* same values for every source name: extra names on to? */
		ssize_t tlen;
		char *tn = x_names(to, &tlen);
		size_t tcount = 0;
		for (ssize_t i = 0; i < tlen; i += strlen(tn + i) + 1)
			tcount++;
		if (tcount != count)
			*diff = true;
		free(tn);
	}
	return rc;
}
