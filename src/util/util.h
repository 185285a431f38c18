/*
 * util: small helpers every module uses — allocation that cannot fail silently, number parsing with
 * the suffix conventions of docs/design.md (counts take decimal suffixes, byte sizes binary ones), time.
 */
#ifndef MYRIAD_UTIL_H
#define MYRIAD_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* The program name used in messages ("myriad walk"). Set once by main. */
extern const char *prog_name;

/* malloc/realloc/strdup that abort with a message when memory runs out. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

/* Print "myriad CMD: message" to stderr. */
void warnx_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Length of the valid UTF-8 sequence at s (1..4, of the n bytes there), or 0 if those bytes are not
 * valid UTF-8 (overlong forms, surrogates and code points past U+10FFFF are not). */
size_t utf8_len(const unsigned char *s, size_t n);

/* Parse a count with optional decimal suffix k/K, M, G, T, P (1M = 1,000,000); with a suffix, a
 * fraction that comes out whole (3.3M = 3,300,000). false on bad input. */
bool parse_count(const char *s, uint64_t *out);

/* Parse a byte size with optional binary suffix k, M, G, T (4k = 4096), optional trailing B/iB;
 * with a suffix, a fraction that comes out whole (1.5k = 1536). */
bool parse_size(const char *s, uint64_t *out);

/* Parse a size or a range of sizes "LO-HI" (1k-64k), LO <= HI; a single size gives LO = HI. */
bool parse_size_range(const char *s, uint64_t *lo, uint64_t *hi);

/* Monotonic time in nanoseconds. */
uint64_t now_ns(void);
/* The same clock, cheaper and only as fine as the kernel's tick (a few ms): for marking progress
 * per entry. */
uint64_t coarse_ns(void);

/* Format n with thousands separators into buf (at least 32 bytes); returns buf. */
char *fmt_count(char *buf, uint64_t n);

/* The word to follow a count of n: one for 1, many otherwise ("1 error", "0 errors"). */
static inline const char *plural(uint64_t n, const char *one, const char *many) { return n == 1 ? one : many; }

/* Format a byte count as "1.5 GiB" into buf (at least 32 bytes); returns buf. */
char *fmt_bytes(char *buf, uint64_t n);

/* After ENOSPC on the filesystem of fd: "inodes" when it has no free inode left, else "space". */
const char *full_resource(int fd);

/* Number of online CPUs (at least 1). */
int cpu_count(void);

/* A field of /proc/meminfo ("MemTotal", "MemAvailable") in KiB, or NAN when it does not say. */
double meminfo_kib(const char *key);

/* The system refused worker thread number started+1 of wanted (pthread_create's error err): say so
 * once and go on with those started, or, when none is, exit 3 (the run's state is kept as saved
 * before the workers start). */
void threads_refused(int started, int wanted, int err);

/* Raise the soft open-file limit to the hard limit. */
void raise_nofile_limit(void);

/* Write all of buf to fd, retrying on EINTR and short writes. -1 with errno on failure. */
int write_all(int fd, const void *buf, size_t len);
/* Read up to len bytes at offset off, retrying on EINTR and short reads: fewer only at the end of
 * the file. The count read, or -1 with errno. */
ssize_t pread_all(int fd, void *buf, size_t len, uint64_t off);
/* Write all of buf at offset off (the file offset is left alone, so threads may share fd),
 * retrying on EINTR and short writes; a write of nothing fails as EIO rather than looping.
 * -1 with errno on failure. */
int pwrite_all(int fd, const void *buf, size_t len, uint64_t off);

#endif
