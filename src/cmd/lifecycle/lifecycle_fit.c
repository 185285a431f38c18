/*
 * lifecycle_fit: what a cycle will need, known before it runs (see lifecycle.h): the disk its
 * sparse image will really take, and the checker's peak memory, from the mkfs parameters
 * lifecycle uses and from the smaller cycles already measured. Pure functions of the results:
 * no file, no device, no clock.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cmd/lifecycle/lifecycle.h"
#include "util/util.h"

#define KIB 1024.0
#define MIB (1024.0 * 1024)
#define GIB (1024.0 * MIB)

uint64_t lc_image_bytes(uint64_t files, uint64_t size_max)
{
	/* Room for every file's blocks, inodes and directories, twice over, at least 2 GiB: the
	 * image is sparse, so only what the filesystem writes takes space. */
	uint64_t per = (size_max + 4095) / 4096 * 4096 + 2048;
	uint64_t bytes = files * per * 2 + (1ull << 30);
	if (bytes < (2ull << 30))
		bytes = 2ull << 30;
	return (bytes + (1 << 20) - 1) & ~((uint64_t)(1 << 20) - 1);
}

/* mke2fs's default journal for a filesystem of this many 4 KiB blocks (ext2fs_default_journal_size). */
static double ext_journal(double blocks)
{
	static const struct {
		double below, journal;
	} t[] = {{32768, 1024}, {256 * 1024, 4096}, {512 * 1024, 8192}, {4096 * 1024, 16384},
		 {8192 * 1024, 32768}, {16384 * 1024, 65536}, {32768 * 1024, 131072}};
	for (size_t i = 0; i < ARRAY_LEN(t); i++)
		if (blocks < t[i].below)
			return t[i].journal * 4096;
	return 262144.0 * 4096;
}

double lc_disk_fixed(const char *fs, double image_bytes)
{
	if (!strncmp(fs, "ext", 3)) /* the journal, and per 128 MiB group its bitmaps and backups */
		return ext_journal(image_bytes / 4096) + image_bytes / (128 * MIB) * 8 * KIB + 4 * MIB;
	if (!strcmp(fs, "xfs")) { /* the log (mkfs.xfs writes it whole): 1/2048 of the fs, 64 MiB to 2 GiB */
		double log = fmin(fmax(image_bytes / 2048, 64 * MIB), 2 * GIB);
		return log + 16 * MIB;
	}
	return 64 * MIB; /* btrfs: its trees' first chunks and what copy-on-write leaves behind */
}

/* Bytes per file the filesystem writes besides its data: the inode (ext: 256 bytes in the inode
 * table; XFS: 512, in chunks) and its share of directory blocks; btrfs: the inode, its
 * reference and two directory items in b-tree leaves, kept twice (DUP metadata). */
static double per_file(const char *fs)
{
	return !strncmp(fs, "ext", 3) ? 296 : !strcmp(fs, "xfs") ? 576 : 1024;
}

double lc_disk_formula(const char *fs, uint64_t files, uint64_t size_max)
{
	double data = (double)((size_max + 4095) / 4096 * 4096);
	return lc_disk_fixed(fs, (double)lc_image_bytes(files, size_max)) + (double)files * (per_file(fs) + data);
}

/* Least squares y = a + b*x over n points of at least 2 distinct x. false when there are not. */
static bool line_fit(const double *x, const double *y, int n, double *a, double *b)
{
	double sx = 0, sy = 0, sxx = 0, sxy = 0;
	for (int i = 0; i < n; i++)
		sx += x[i], sy += y[i], sxx += x[i] * x[i], sxy += x[i] * y[i];
	double d = n * sxx - sx * sx;
	if (n < 2 || !(fabs(d) > 1e-9 * (sxx > 1 ? sxx : 1)))
		return false;
	*b = (n * sxy - sx * sy) / d;
	*a = (sy - *b * sx) / n;
	return true;
}

/* The complete cycles of fs in r below files with a measured value (metric of lc_point_of), as
 * points (at most max); the largest measured value in *top. */
static int points_of(const struct lc_results *r, const char *fs, uint64_t files, int metric, double *x, double *y,
		     int max, double *top)
{
	int n = 0;
	*top = 0;
	for (size_t i = 0; r && i < r->ncycles && n < max; i++) {
		const struct lc_cycle *c = &r->cycles[i];
		if (!c->complete || strcmp(c->fs, fs) || c->files >= files)
			continue;
		double v;
		if (metric == 0) { /* the image's allocation, less the fixed part of that image */
			if (!(c->image_alloc_bytes > 0))
				continue;
			v = c->image_alloc_bytes - lc_disk_fixed(fs, c->image_bytes > 0 ? c->image_bytes : (double)lc_image_bytes(c->files, 0));
		} else { /* the checker's peak RSS when it ran without a limit of its own */
			const struct lc_phase *p = &c->ph[PH_CHECK];
			if (p->status != LC_OK || !(p->peak_rss_kib > 0) || lc_check_self_limited(p))
				continue;
			v = p->peak_rss_kib;
		}
		x[n] = (double)c->files;
		y[n++] = v;
		*top = fmax(*top, v);
	}
	return n;
}

#define MAXPTS 256

void lc_disk_estimate(const struct lc_results *r, const char *fs, uint64_t files, uint64_t size_max,
		      struct lc_disk_est *e)
{
	double x[MAXPTS], y[MAXPTS], top, a, b;
	int n = points_of(r, fs, files, 0, x, y, MAXPTS, &top);
	double fixed = lc_disk_fixed(fs, (double)lc_image_bytes(files, size_max));
	e->points = n;
	if (line_fit(x, y, n, &a, &b) && b > 0) {
		e->raw = fixed + fmax(a + b * (double)files, top);
		snprintf(e->from, sizeof(e->from), "a linear fit over %d measured %s cycles", n, fs);
	} else {
		e->raw = lc_disk_formula(fs, files, size_max);
		snprintf(e->from, sizeof(e->from), "%s's mkfs parameters%s", fs,
			 n ? " (one measured cycle is too few to fit)" : "");
	}
	e->bytes = e->raw * (1 + LC_DISK_MARGIN) + LC_DISK_MARGIN_BYTES;
}

bool lc_mem_predict(const struct lc_results *r, const char *fs, uint64_t files, double *kib)
{
	double x[MAXPTS], y[MAXPTS], top, a, b;
	int n = points_of(r, fs, files, 1, x, y, MAXPTS, &top);
	if (!line_fit(x, y, n, &a, &b))
		return false;
	/* A memory that shrinks with more files is noise: never below what was already needed. */
	*kib = fmax(a + b * (double)files, top);
	return true;
}

const char *lc_mem_plan(const char *checker, double predicted_kib, double stated_min_kib, double limit_kib)
{
	if (!strcmp(checker, "xfs_repair") && stated_min_kib > limit_kib)
		return "skipped";
	if (!(predicted_kib > limit_kib))
		return "none";
	if (!strcmp(checker, "xfs_repair"))
		return "-m";
	if (!strcmp(checker, "e2fsck"))
		return "scratch_files";
	return "skipped"; /* btrfs check has no way to use less */
}
