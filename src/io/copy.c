/* copy: one file's data moved or compared, for myriad copy (see copy.h). */
#include "io/copy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"

/* The source device on which copy_file_range last failed with EXDEV, ENOSYS or EOPNOTSUPP (it
 * cannot, whatever the file): files from it go straight to read/write, one wasted call per run
 * instead of one per file. */
static _Atomic uint64_t no_cfr_dev = UINT64_MAX;

/* Write n bytes at off: 0, or -1 with errno and *op. A short write is retried: the next one says why. */
static int write_at(int out, const char *buf, size_t n, off_t off, const char **op)
{
	for (size_t w = 0; w < n;) {
		ssize_t k = pwrite(out, buf + w, n - w, off + w);
		if (k <= 0) {
			if (k == 0)
				errno = EIO;
			*op = "write";
			return -1;
		}
		w += k;
	}
	return 0;
}

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
			if (write_at(out, buf, r, off, op) != 0)
				return -1;
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

int copy_data(int in, int out, const struct copy_src *src, struct throttle *bw, uint64_t *bytes,
	      _Atomic uint64_t *live, const char **op)
{
	off_t off = 0, end = (off_t)src->size, reached = 0;
	/* As many bytes allocated as the size: no holes to find (what cp also assumes). */
	bool dense = src->blocks * 512 >= src->size;
	while (off < end) {
		off_t data = dense ? off : lseek(in, off, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			break; /* a hole up to the end */
		off_t hole = dense || data < 0 ? end : lseek(in, data, SEEK_HOLE);
		if (data < 0) /* no SEEK_DATA here: everything is data */
			data = off;
		if (hole < 0 || hole > end)
			hole = end;
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
	if (write_at(out, data, len, 0, op) != 0)
		return -1;
	*bytes += len;
	if (live)
		*live += len;
	return 0;
}

/* Read up to n bytes at off (short only at end of file). */
static ssize_t read_at(int fd, char *buf, size_t n, off_t off)
{
	size_t done = 0;
	while (done < n) {
		ssize_t r = pread(fd, buf + done, n - done, off + (off_t)done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		done += r;
	}
	return (ssize_t)done;
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
		ssize_t ra = read_at(a, ba, n, (off_t)off);
		if (ra < 0) {
			*which = 0;
			return -1;
		}
		ssize_t rb = read_at(b, bb, n, (off_t)off);
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
