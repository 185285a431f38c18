/*
 * util: allocation, number parsing and formatting shared by every command (see util.h).
 */
#include "util/util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

const char *prog_name = "myriad";

static void out_of_memory(size_t n)
{
	fprintf(stderr, "%s: out of memory allocating %zu bytes\n", prog_name, n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		out_of_memory(n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		out_of_memory(n * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		out_of_memory(n);
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		out_of_memory(strlen(s));
	return p;
}

void warnx_(const char *fmt, ...)
{
	char buf[4096];
	int n = snprintf(buf, sizeof(buf), "%s: ", prog_name);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	va_end(ap);
	size_t len = strlen(buf);
	buf[len++] = '\n';
	/* One write, so lines from several threads do not interleave. */
	(void)write_all(2, buf, len);
}

/* A decimal number with an optional suffix of powers of base (k M G T P E) and, with allow_b, an
 * optional "i" and "B". A fraction needs a suffix and must come out whole: 3.3M and 1.5k are
 * counts, 1.5 and 1.2345k are not. */
static bool parse_suffixed(const char *s, uint64_t *out, uint64_t base, bool allow_b)
{
	if (!s || *s < '0' || *s > '9') /* strtoull would take a sign or leading spaces */
		return false;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return false;
	uint64_t frac = 0, scale = 1; /* the fraction's digits, and 10^their number */
	if (*end == '.') {
		const char *d = ++end;
		for (; *end >= '0' && *end <= '9'; end++) {
			if (scale > UINT64_MAX / 100)
				return false; /* more digits than any count needs */
			frac = frac * 10 + (uint64_t)(*end - '0');
			scale *= 10;
		}
		if (end == d)
			return false; /* "3." */
	}
	uint64_t mult = 1;
	const char *units = "kmgtpe";
	const char *u = *end ? strchr(units, *end | 0x20) : NULL;
	if (u) {
		for (const char *p = units; p <= u; p++)
			mult *= base;
		end++;
		if (allow_b && *end == 'i')
			end++;
	}
	if (allow_b && (*end == 'B' || *end == 'b'))
		end++;
	if (*end || (scale > 1 && !u))
		return false;
	if (v && mult > UINT64_MAX / v)
		return false;
	uint64_t whole = v * mult, part = 0;
	if (frac) {
		/* frac * mult / scale, whole: divide first where scale divides mult, else multiply. */
		uint64_t g = mult, r = scale;
		while (r) { /* gcd(mult, scale) */
			uint64_t t = g % r;
			g = r;
			r = t;
		}
		uint64_t m = mult / g, sc = scale / g;
		if (frac % sc || (m && frac / sc > UINT64_MAX / m))
			return false; /* not whole (1.2345k), or too large */
		part = frac / sc * m;
	}
	if (part > UINT64_MAX - whole)
		return false;
	*out = whole + part;
	return true;
}

bool parse_count(const char *s, uint64_t *out) { return parse_suffixed(s, out, 1000, false); }

bool parse_size(const char *s, uint64_t *out) { return parse_suffixed(s, out, 1024, true); }

bool parse_size_range(const char *s, uint64_t *lo, uint64_t *hi)
{
	const char *dash = strchr(s, '-');
	if (!dash)
		return parse_size(s, lo) && (*hi = *lo, true);
	char a[64];
	size_t n = dash - s;
	if (n == 0 || n >= sizeof(a))
		return false;
	memcpy(a, s, n);
	a[n] = 0;
	return parse_size(a, lo) && parse_size(dash + 1, hi) && *lo <= *hi;
}

uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

uint64_t coarse_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

const char *full_resource(int fd)
{
	struct statvfs sv;
	if (fstatvfs(fd, &sv) == 0 && sv.f_files > 0 && sv.f_favail == 0)
		return "inodes";
	return "space";
}

char *fmt_count(char *buf, uint64_t n)
{
	char tmp[32];
	int len = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)n);
	int o = 0;
	for (int i = 0; i < len; i++) {
		if (i && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = 0;
	return buf;
}

char *fmt_bytes(char *buf, uint64_t n)
{
	static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	double v = n;
	unsigned u = 0;
	while (v >= 1024 && u + 1 < ARRAY_LEN(units)) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, 32, "%llu B", (unsigned long long)n);
	else
		snprintf(buf, 32, "%.1f %s", v, units[u]);
	return buf;
}

int cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

double meminfo_kib(const char *key)
{
	double kib = NAN;
	char line[256];
	size_t kl = strlen(key);
	FILE *f = fopen("/proc/meminfo", "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':' && sscanf(line + kl + 1, "%lf", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

void threads_refused(int started, int wanted, int err)
{
	static _Atomic bool said;
	if (started == 0) {
		warnx_("cannot start a worker thread: %s: run again with a smaller -j/--threads", strerror(err));
		exit(3); /* EXIT_STOPPED: nothing was done since the state was last saved */
	}
	if (!said) {
		said = true;
		warnx_("started %d of %d worker threads (-j): %s: going on with %d", started, wanted, strerror(err),
		       started);
	}
}

void raise_nofile_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= n;
	}
	return 0;
}

ssize_t pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		done += n;
	}
	return (ssize_t)done;
}

int pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = pwrite(fd, (const char *)buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return -1;
		}
		done += n;
	}
	return 0;
}

size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len;
	unsigned min;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	unsigned cp = c & (0xff >> (len + 1));
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}
