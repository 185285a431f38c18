/*
 * mktree: a fast tree generator for myriad's tests and benchmarks.
 *
 *   mktree DIR --files N [--fanout F] [--size BYTES] [--dirs-only] [--flat] [-j THREADS]
 *   mktree DIR --chain D
 *
 * Creates DIR (mkdir -p; it may already exist, and should then be empty) and N entries below it
 * in a balanced tree where no directory holds more than F entries (default 1000):
 *
 *   - the N entries are spread evenly over L = ceil(N / F) leaf directories;
 *   - when L == 1 the entries sit directly in DIR; otherwise the leaves hang below the fewest
 *     levels of intermediate directories that keep every directory at <= F entries, each level
 *     split as evenly as possible. N = 1,000,000 with F = 1000 gives DIR/d0 .. DIR/d999, each
 *     holding f0 .. f999; N = 2,000,000 gives DIR/d0/d0 .. DIR/d1/d999.
 *   - --flat puts all N entries directly in DIR (a one-huge-directory test).
 *
 * Directories are named "d<k>", files "f<k>", k counting from 0 within their parent.
 * Files are empty (one openat(O_CREAT|O_EXCL|O_WRONLY) + close each) unless --size BYTES gives
 * each one BYTES bytes of non-zero data. --dirs-only makes the N entries empty directories.
 *
 * --chain D makes a deep tree instead: D nested directories DIR/d/d/.../d, each holding one empty
 * file f (paths far longer than PATH_MAX for large D; made with openat relative to the last one).
 *
 * Work is split between THREADS threads (default 2) that each take whole leaf directories
 * (with --flat or a single leaf: chunks of consecutive names in DIR). Prints nothing on success;
 * on an error prints "mktree: PATH: reason" and exits 1. Usage errors exit 2.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define MAX_DEPTH 64
#define FLAT_CHUNK 4096 /* names per work unit when everything goes into one directory */
#define WRITE_BUF (1u << 20)

static const char *root_path;
static int root_fd = -1;
static uint64_t n_entries, fanout = 1000, file_size;
static bool dirs_only, flat;
static unsigned n_threads = 2;

/* Layout: n_leaves leaf directories at depth `depth` below DIR (depth 0: DIR is the only leaf). */
static uint64_t n_leaves;
static unsigned depth;
static uint64_t cap[MAX_DEPTH + 1]; /* cap[r] = fanout^r (saturated): leaves a subtree of height r can hold */

static atomic_uint_fast64_t next_unit;
static uint64_t n_units;
static atomic_bool failed;

static void die_usage(const char *msg)
{
	if (msg)
		fprintf(stderr, "mktree: %s\n", msg);
	fprintf(stderr,
		"usage: mktree DIR --files N [--fanout F] [--size BYTES] [--dirs-only] [--flat] [-j THREADS]\n");
	exit(2);
}

static uint64_t parse_u64(const char *opt, const char *s)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+')
		goto bad;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		goto bad;
	return v;
bad:
	fprintf(stderr, "mktree: %s: not a number: '%s'\n", opt, s ? s : "");
	die_usage(NULL);
	return 0;
}

/* Report an error about dir-relative path REL (NAME appended when non-NULL); stops all threads. */
static void report(int err, const char *rel, const char *name)
{
	char path[PATH_MAX + 64];
	size_t len = strlen(root_path);

	/* Avoid "DIR//x" when DIR ends with a slash. */
	while (len > 1 && root_path[len - 1] == '/')
		len--;
	snprintf(path, sizeof(path), "%.*s%s%s%s%s", (int)len, root_path, *rel ? "/" : "", rel,
		 name ? "/" : "", name ? name : "");
	if (!atomic_exchange(&failed, true))
		fprintf(stderr, "mktree: %s: %s\n", path, strerror(err));
}

/* Write "<c><k>" into buf (at least 24 bytes); return its length. */
static size_t entry_name(char *buf, char c, uint64_t k)
{
	char tmp[21];
	size_t n = 0, len = 0;

	do {
		tmp[n++] = (char)('0' + k % 10);
		k /= 10;
	} while (k);
	buf[len++] = c;
	while (n)
		buf[len++] = tmp[--n];
	buf[len] = '\0';
	return len;
}

/* Split `total` items as evenly as possible into `parts`; return the size of part j and its first item. */
static uint64_t split(uint64_t total, uint64_t parts, uint64_t j, uint64_t *first)
{
	uint64_t base = total / parts, extra = total % parts;

	*first = j * base + (j < extra ? j : extra);
	return base + (j < extra);
}

/*
 * Compute the path (relative to DIR) of leaf `leaf`: fills digits[0..depth-1] with the child
 * index taken at each level, top first.
 */
static void leaf_digits(uint64_t leaf, unsigned *digits)
{
	uint64_t count = n_leaves; /* leaves below the current node */

	for (unsigned lvl = 0; lvl < depth; lvl++) {
		unsigned below = depth - lvl - 1; /* height of each child subtree */
		uint64_t children = (count + cap[below] - 1) / cap[below];
		uint64_t base = count / children, extra = count % children, big = extra * (base + 1), j, first;

		if (leaf < big)
			j = leaf / (base + 1);
		else
			j = extra + (leaf - big) / base;
		count = split(count, children, j, &first);
		leaf -= first;
		digits[lvl] = (unsigned)j;
	}
}

static int mkdir_ok(int dirfd, const char *name)
{
	if (mkdirat(dirfd, name, 0755) == 0 || errno == EEXIST)
		return 0;
	return -1;
}

/* Create entries [first, first+count) named by prefix 'f'/'d' in directory fd. */
static int fill(int fd, const char *rel, uint64_t first, uint64_t count, char *buf)
{
	char name[24];

	for (uint64_t k = first; k < first + count; k++) {
		if (atomic_load_explicit(&failed, memory_order_relaxed))
			return -1;
		if (dirs_only) {
			entry_name(name, 'd', k);
			if (mkdirat(fd, name, 0755) < 0) {
				report(errno, rel, name);
				return -1;
			}
			continue;
		}
		entry_name(name, 'f', k);
		int f = openat(fd, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
		if (f < 0) {
			report(errno, rel, name);
			return -1;
		}
		for (uint64_t left = file_size; left;) {
			size_t want = left < WRITE_BUF ? (size_t)left : WRITE_BUF;
			ssize_t w = write(f, buf, want);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				report(w < 0 ? errno : EIO, rel, name);
				close(f);
				return -1;
			}
			left -= (uint64_t)w;
		}
		if (close(f) < 0) {
			report(errno, rel, name);
			return -1;
		}
	}
	return 0;
}

/* Create leaf `leaf` (and any missing parents) and fill it. */
static int do_leaf(uint64_t leaf, char *buf)
{
	unsigned digits[MAX_DEPTH];
	char rel[MAX_DEPTH * 22 + 1];
	size_t len = 0;
	uint64_t first, count = split(n_entries, n_leaves, leaf, &first);
	int fd, rc;

	(void)first; /* names restart at 0 in every leaf */
	leaf_digits(leaf, digits);
	rel[0] = '\0';
	for (unsigned lvl = 0; lvl < depth; lvl++) {
		if (lvl)
			rel[len++] = '/';
		len += entry_name(rel + len, 'd', digits[lvl]);
		if (mkdir_ok(root_fd, rel) < 0) {
			report(errno, rel, NULL);
			return -1;
		}
	}
	if (depth == 0)
		return fill(root_fd, "", 0, count, buf);
	fd = openat(root_fd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		report(errno, rel, NULL);
		return -1;
	}
	rc = fill(fd, rel, 0, count, buf);
	close(fd);
	return rc;
}

static void *worker(void *arg)
{
	char *buf = NULL;

	(void)arg;
	if (file_size && !dirs_only) {
		size_t n = file_size < WRITE_BUF ? (size_t)file_size : WRITE_BUF;
		buf = malloc(n);
		if (!buf) {
			report(ENOMEM, "", NULL);
			return NULL;
		}
		for (size_t i = 0; i < n; i++)
			buf[i] = (char)('a' + i % 26);
	}
	for (;;) {
		uint64_t u = atomic_fetch_add(&next_unit, 1);
		if (u >= n_units || atomic_load(&failed))
			break;
		if (n_leaves == 1 && depth == 0) {
			/* Single directory: chunk u holds names [u*FLAT_CHUNK, ...). */
			uint64_t first = u * FLAT_CHUNK;
			uint64_t count = n_entries - first < FLAT_CHUNK ? n_entries - first : FLAT_CHUNK;
			if (fill(root_fd, "", first, count, buf) < 0)
				break;
		} else if (do_leaf(u, buf) < 0) {
			break;
		}
	}
	free(buf);
	return NULL;
}

/* mkdir -p PATH; returns 0 or -1 with errno set (and the failing prefix left in *bad). */
static int mkdir_p(const char *path, char *bad, size_t badlen)
{
	char tmp[PATH_MAX];
	size_t len = strlen(path);

	if (len == 0 || len >= sizeof(tmp)) {
		errno = len ? ENAMETOOLONG : ENOENT;
		snprintf(bad, badlen, "%s", path);
		return -1;
	}
	memcpy(tmp, path, len + 1);
	for (char *p = tmp + 1;; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;
			*p = '\0';
			if (mkdir(tmp, 0755) < 0) {
				struct stat st;
				int e = errno;
				if (e != EEXIST || stat(tmp, &st) < 0 || !S_ISDIR(st.st_mode)) {
					errno = e == EEXIST ? ENOTDIR : e;
					snprintf(bad, badlen, "%s", tmp);
					return -1;
				}
			}
			*p = c;
			if (!c)
				break;
		}
	}
	return 0;
}

/* --chain D: DIR/d/.../d (D deep), an empty f in each, each made relative to the one above. */
static int make_chain(const char *dir, uint64_t d)
{
	char bad[PATH_MAX];
	if (mkdir_p(dir, bad, sizeof(bad)) < 0) {
		fprintf(stderr, "mktree: %s: %s\n", bad, strerror(errno));
		return 1;
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (uint64_t i = 0; fd >= 0 && i < d; i++) {
		int f = openat(fd, "f", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
		if (f < 0 || close(f) != 0 || mkdirat(fd, "d", 0755) != 0)
			break;
		int next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		fd = next;
		if (i + 1 == d && fd >= 0) {
			close(fd);
			return 0;
		}
	}
	fprintf(stderr, "mktree: %s: making a chain of directories: %s\n", dir, strerror(errno));
	if (fd >= 0)
		close(fd);
	return 1;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"files", required_argument, NULL, 'n'}, {"fanout", required_argument, NULL, 'F'},
		{"size", required_argument, NULL, 's'},  {"dirs-only", no_argument, NULL, 'D'},
		{"flat", no_argument, NULL, 'L'},        {"jobs", required_argument, NULL, 'j'},
		{"chain", required_argument, NULL, 'C'},
		{"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0},
	};
	uint64_t chain = 0;
	bool have_files = false;
	char bad[PATH_MAX];
	int opt;

	while ((opt = getopt_long(argc, argv, "j:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'n': n_entries = parse_u64("--files", optarg); have_files = true; break;
		case 'F': fanout = parse_u64("--fanout", optarg); break;
		case 's': file_size = parse_u64("--size", optarg); break;
		case 'D': dirs_only = true; break;
		case 'L': flat = true; break;
		case 'C': chain = parse_u64("--chain", optarg); break;
		case 'j': {
			uint64_t j = parse_u64("-j", optarg);
			if (j < 1 || j > 1024)
				die_usage("-j: must be 1..1024");
			n_threads = (unsigned)j;
			break;
		}
		case 'h':
			fprintf(stdout, "usage: mktree DIR --files N [--fanout F] [--size BYTES] [--dirs-only] [--flat] [-j THREADS]\n"
					"       mktree DIR --chain D\n");
			return 0;
		default: die_usage(NULL);
		}
	}
	if (optind != argc - 1)
		die_usage(optind >= argc ? "missing DIR" : "exactly one DIR");
	if (chain)
		return make_chain(argv[optind], chain);
	if (!have_files)
		die_usage("--files N is required");
	if (dirs_only && file_size)
		die_usage("--size and --dirs-only exclude each other");
	if (!flat && fanout < 2 && n_entries > 1)
		die_usage("--fanout must be at least 2");
	if (fanout == 0)
		die_usage("--fanout must be at least 1");
	root_path = argv[optind];

	/* Layout. */
	if (flat || n_entries <= fanout) {
		n_leaves = 1;
		depth = 0;
	} else {
		n_leaves = (n_entries + fanout - 1) / fanout;
		cap[0] = 1;
		for (unsigned r = 1; r <= MAX_DEPTH; r++)
			cap[r] = cap[r - 1] > UINT64_MAX / fanout ? UINT64_MAX : cap[r - 1] * fanout;
		while (cap[depth] < n_leaves)
			depth++; /* fanout >= 2, so this ends well before MAX_DEPTH */
	}
	n_units = depth == 0 ? (n_entries + FLAT_CHUNK - 1) / FLAT_CHUNK : n_leaves;

	if (mkdir_p(root_path, bad, sizeof(bad)) < 0) {
		fprintf(stderr, "mktree: %s: %s\n", bad, strerror(errno));
		return 1;
	}
	root_fd = open(root_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0) {
		fprintf(stderr, "mktree: %s: %s\n", root_path, strerror(errno));
		return 1;
	}

	if ((uint64_t)n_threads > n_units)
		n_threads = n_units ? (unsigned)n_units : 1;
	pthread_t *tids = calloc(n_threads, sizeof(*tids));
	if (!tids) {
		perror("mktree");
		return 1;
	}
	unsigned started = 0;
	for (unsigned i = 1; i < n_threads; i++) {
		int e = pthread_create(&tids[i], NULL, worker, NULL);
		if (e) {
			fprintf(stderr, "mktree: pthread_create: %s\n", strerror(e));
			break; /* carry on with fewer threads */
		}
		started = i;
	}
	worker(NULL);
	for (unsigned i = 1; i <= started; i++)
		pthread_join(tids[i], NULL);
	free(tids);
	close(root_fd);
	return atomic_load(&failed) ? 1 : 0;
}
