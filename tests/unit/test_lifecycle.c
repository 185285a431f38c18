/* Unit tests for lifecycle's pieces: the least-squares fits and projections, the JSON reader,
 * results.json written and read back unchanged, the --device guard (the device holding / is
 * refused: tested here, never by running lifecycle on it) and the record's teardown of only what
 * it lists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fcntl.h>
#include <sys/stat.h>

#include "cmd/lifecycle/lifecycle.h"
#include "cmd/lifecycle/lifecycle_record.h"
#include "io/devbusy.h"
#include "lifecycle/jsonread.h"
#include "lifecycle/fit.h"
#include "lifecycle/results.h"
#include "util/sbuf.h"
#include "util/util.h"

static void linear_data_fits_linear(void **state)
{
	double x[] = {1e4, 3e4, 1e5, 3e5}, y[4];
	for (int i = 0; i < 4; i++)
		y[i] = 2 + 1e-5 * x[i];
	struct lc_fit f;
	assert_true(lc_fit(x, y, 4, 1e9, &f));
	assert_true(fabs(f.a - 2) < 1e-6 && fabs(f.b - 1e-5) < 1e-12);
	assert_true(f.r2_lin > 0.999999);
	assert_string_equal(f.model, "linear");
	assert_true(fabs(f.projected - (2 + 1e4)) < 1e-3);
}

static void power_data_fits_power(void **state)
{
	double x[] = {1e4, 3e4, 1e5, 3e5}, y[4];
	for (int i = 0; i < 4; i++)
		y[i] = 3e-6 * pow(x[i], 1.3);
	struct lc_fit f;
	assert_true(lc_fit(x, y, 4, 1e9, &f));
	assert_true(f.have_pow && fabs(f.k - 1.3) < 1e-9);
	assert_true(f.r2_pow > 0.999999 && f.r2_pow > f.r2_lin);
	assert_string_equal(f.model, "power");
	assert_true(fabs(f.projected / (3e-6 * pow(1e9, 1.3)) - 1) < 1e-6);
}

static void no_trend_is_constant_and_one_scale_no_fit(void **state)
{
	double x[] = {1e4, 3e4, 1e5, 3e5}, y[] = {0.010, 0.012, 0.009, 0.011};
	struct lc_fit f;
	assert_true(lc_fit(x, y, 4, 1e9, &f));
	assert_string_equal(f.model, "constant");
	assert_true(fabs(f.projected - 0.0105) < 1e-9);
	double x1[] = {5, 5}, y1[] = {1, 2};
	assert_false(lc_fit(x1, y1, 2, 1e9, &f));
}

static void reader_parses_what_the_writer_writes(void **state)
{
	char err[128];
	const char doc[] = "{\"a\": [1, -2.5e3, true, null, \"x\\n\\udcff\"], \"b\": {\"c\": \"d\"}, \"e\": []}";
	struct jv *v = jv_parse(doc, strlen(doc), err, sizeof(err));
	assert_non_null(v);
	const struct jv *a = jv_get(v, "a");
	assert_int_equal(a->n, 5);
	assert_true(a->items[1].num == -2500);
	assert_true(a->items[2].type == JV_BOOL && a->items[2].b);
	assert_int_equal(a->items[3].type, JV_NULL);
	assert_int_equal(a->items[4].len, 3);
	assert_memory_equal(a->items[4].str, "x\n\xff", 3);
	assert_string_equal(jv_str(jv_get(v, "b"), "c", ""), "d");
	assert_int_equal(jv_get(v, "e")->n, 0);
	jv_free(v);
	const char *bad[] = {"{", "[1,]", "{\"a\" 1}", "tru", "[1] x", "\"abc", "1e999", "[[1,[2,\"x"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_null(jv_parse(bad[i], strlen(bad[i]), err, sizeof(err)));
	/* Found while fuzzing: a NUL byte was taken as part of a number. */
	assert_null(jv_parse("[1\0]", 4, err, sizeof(err)));
	/* "tru" at the very end: the reader compared past the end of its input (caught by ASan in
	 * the results fuzz target; here the byte after the input differs, so it must not matter). */
	char tru[] = {'t', 'r', 'u', 'e'};
	assert_null(jv_parse(tru, 3, err, sizeof(err)));
}

/* Found while fuzzing: what the results model accepted without complaint. */
static void malformed_results_are_refused(void **state)
{
	char err[128];
	const char *bad[] = {
	    "{\"command\":\"lifecycle\"}",
	    "{\"command\":\"lifecycle\",\"cycles\":{}}",
	    "{\"command\":\"lifecycle\",\"cycles\":[{\"files\":10}]}",
	    "{\"command\":\"lifecycle\",\"cycles\":[{\"fs\":\"ext4\",\"files\":-1}]}",
	    "{\"command\":\"lifecycle\",\"cycles\":[{\"fs\":\"ext4\",\"files\":1e30}]}",
	    "{\"command\":\"lifecycle\",\"cycles\":[{\"fs\":\"ext4\",\"files\":10,\"phases\":"
	    "[{\"name\":\"fill\",\"error\":\"a\"},{\"name\":\"fill\",\"error\":\"b\"}]}]}",
	    "{\"command\":\"walk\",\"cycles\":[]}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		assert_null(lc_parse(bad[i], strlen(bad[i]), "t.json", err, sizeof(err)));
		assert_true(err[0] != 0);
	}
	const char ok[] = "{\"command\":\"lifecycle\",\"config\":{\"scales\":[1000,-5,1.5,2000]},\"cycles\":"
			  "[{\"fs\":\"ext4\",\"files\":1000,\"phases\":[{\"name\":\"fill\",\"exit_status\":1e12}]}]}";
	struct lc_results *r = lc_parse(ok, strlen(ok), "t.json", err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(r->nscales, 2); /* -5 and 1.5 are not counts */
	assert_int_equal(r->cycles[0].ph[PH_FILL].exit_status, -1);
	lc_free(r);
}

static void results_roundtrip(void **state)
{
	struct lc_results r = {.kernel = "Linux test", .cpu_model = "cpu", .cpus = 2, .mem_kib = 1024,
			       .files = 1000, .project = 1e9, .complete = true};
	uint64_t scales[] = {100, 300, 1000}; /* a fit needs three */
	r.scales = scales;
	r.nscales = 3;
	struct lc_cycle cyc[3];
	memset(cyc, 0, sizeof(cyc));
	struct lc_point tl[] = {{0.5, 50, 100}, {1, 100, 100}};
	for (int i = 0; i < 3; i++) {
		cyc[i].fs = "ext4";
		cyc[i].files = scales[i];
		cyc[i].complete = true;
		cyc[i].lazy_itable_init = 1;
		cyc[i].mkfs_options = "-F -q";
		for (int k = 0; k < PH_N; k++) {
			cyc[i].ph[k] = (struct lc_phase){.status = LC_OK, .exit_status = 0, .wall_s = 0.01 * scales[i] * (k + 1),
							 .peak_rss_kib = 1000 + scales[i], .rate = NAN, .min_mem_kib = NAN};
		}
		cyc[i].ph[PH_FILL].rate = 1234;
		cyc[i].ph[PH_FILL].rate_unit = "files/s";
		cyc[i].ph[PH_FILL].tl = tl;
		cyc[i].ph[PH_FILL].ntl = 2;
		cyc[i].ph[PH_RM].status = LC_FAILED;
		cyc[i].ph[PH_RM].exit_status = 1;
		cyc[i].ph[PH_RM].error = "exit status 1: boom";
	}
	r.cycles = cyc;
	r.ncycles = 3;
	struct sbuf b = {0};
	lc_results_json(&r, &b);
	char path[] = "/tmp/myriad-test-results.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write_all(fd, b.data, b.len), 0);
	close(fd);
	char err[128];
	struct lc_results *back = lc_load(path, err, sizeof(err));
	unlink(path);
	assert_non_null(back);
	assert_int_equal(back->ncycles, 3);
	assert_int_equal(back->nscales, 3);
	assert_string_equal(back->kernel, "Linux test");
	const struct lc_cycle *c = &back->cycles[1]; /* the 300 */
	assert_int_equal(c->files, 300);
	assert_true(c->complete);
	assert_int_equal(c->lazy_itable_init, 1);
	assert_true(fabs(c->ph[PH_CHECK].wall_s - 0.01 * 300 * (PH_CHECK + 1)) < 1e-9);
	assert_int_equal(c->ph[PH_FILL].ntl, 2);
	assert_true(c->ph[PH_FILL].rate == 1234);
	assert_int_equal(c->ph[PH_RM].status, LC_FAILED);
	assert_string_equal(c->ph[PH_RM].error, "exit status 1: boom");
	/* Projections are in the document: time is linear in N here, so the projection is exact. */
	struct jv *d = jv_parse(b.data, b.len, err, sizeof(err));
	assert_non_null(d);
	const struct jv *fits = jv_get(jv_get(d, "projection"), "fits");
	assert_true(fits && fits->n > 0);
	assert_true(fabs(jv_num(&fits->items[0], "projected", 0) / (0.01 * 1e9 * (PH_MKFS + 1)) - 1) < 1e-4);
	jv_free(d);
	sbuf_free(&b);
	lc_free(back);
}

/* The block device mounted on / (or on any mount, when / is not on one), or NULL. */
static char *mounted_block_device(char *mnt, size_t n)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[8192], point[4096], src[4096], *found = NULL;
	while (f && fgets(line, sizeof(line), f)) {
		char *dash = strstr(line, " - ");
		struct stat st;
		if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1 || sscanf(dash + 3, "%*s %4095s", src) != 1 ||
		    stat(src, &st) != 0 || !S_ISBLK(st.st_mode))
			continue;
		if (!found || !strcmp(point, "/")) {
			free(found);
			found = xstrdup(src);
			snprintf(mnt, n, "%s", point);
		}
	}
	if (f)
		fclose(f);
	return found;
}

static void device_guard_refuses_mounted_and_non_devices(void **state)
{
	char why[1024], mnt[4096];
	char *dev = mounted_block_device(mnt, sizeof(mnt));
	if (dev) {
		/* Only the guard runs: nothing here can write to the device. */
		assert_true(devbusy_refusal(dev, why, sizeof(why)));
		char want[4200];
		snprintf(want, sizeof(want), "mounted on %s", mnt);
		assert_non_null(strstr(why, want));
		if (!strcmp(mnt, "/"))
			assert_non_null(strstr(why, "it holds the running system"));
		free(dev);
	}
	assert_true(devbusy_refusal("/dev/null", why, sizeof(why)));
	assert_non_null(strstr(why, "not a block device"));
	assert_true(devbusy_refusal("/nonexistent/dev", why, sizeof(why)));
	assert_non_null(strstr(why, "No such file"));
}

/* The record names an image made (with its identity), a path recorded before a kill (no
 * identity) that now holds someone else's file, and a recorded image replaced by another file:
 * only the first is removed, and the record is emptied. */
static void record_cleans_only_what_it_made(void **state)
{
	char dir[] = "/tmp/myriad-test-record.XXXXXX", ours[4200], foreign[4200], replaced[4200], rec[4200];
	assert_non_null(mkdtemp(dir));
	snprintf(ours, sizeof(ours), "%s/myriad-lifecycle-ext4-10-1.img", dir);
	snprintf(foreign, sizeof(foreign), "%s/myriad-lifecycle-ext4-10-2.img", dir);
	snprintf(replaced, sizeof(replaced), "%s/myriad-lifecycle-ext4-10-3 with\ttab\nnewline.img", dir);
	int fd = lc_record_open(dir);
	assert_true(fd >= 0);
	struct stat st;
	assert_int_equal(lc_record_add(fd, "image", ours, NULL, NULL), 0);
	int f = open(ours, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(f >= 0 && fstat(f, &st) == 0 && write(f, "x", 1) == 1);
	close(f);
	assert_int_equal(lc_record_add(fd, "image", ours, NULL, &st), 0);
	assert_int_equal(lc_record_add(fd, "image", foreign, NULL, NULL), 0);
	f = open(foreign, O_WRONLY | O_CREAT, 0600);
	assert_true(f >= 0 && write(f, "foreign", 7) == 7);
	close(f);
	int old = open(replaced, O_WRONLY | O_CREAT, 0600);
	assert_true(old >= 0 && fstat(old, &st) == 0);
	assert_int_equal(lc_record_add(fd, "image", replaced, NULL, &st), 0);
	assert_int_equal(unlink(replaced), 0);
	f = open(replaced, O_WRONLY | O_CREAT, 0600); /* another inode: the old one is still open */
	close(f);
	/* A loop device and a mount that are not there. */
	assert_int_equal(lc_record_add(fd, "loop", "/dev/loop-nonexistent", ours, &st), 0);
	assert_int_equal(lc_record_add(fd, "mount", "/dev/loop-nonexistent", dir, NULL), 0);
	assert_true(lc_record_clean(fd, false));
	close(old);
	assert_int_equal(access(ours, F_OK), -1);
	assert_int_equal(access(foreign, F_OK), 0);
	assert_int_equal(access(replaced, F_OK), 0);
	assert_true(fstat(fd, &st) == 0 && st.st_size == 0);
	close(fd);
	snprintf(rec, sizeof(rec), "%s/" LC_RECORD_NAME, dir);
	unlink(rec);
	unlink(foreign);
	unlink(replaced);
	assert_int_equal(rmdir(dir), 0);
}

/* Make path a directory recorded in fd as kind (before and after, as lifecycle does) holding the
 * files named in the NULL-terminated list. */
static void recorded_dir(int fd, const char *kind, const char *path, const char *const *files)
{
	struct stat st;
	char p[4400];
	assert_int_equal(lc_record_add(fd, kind, path, NULL, NULL), 0);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_int_equal(lc_record_add(fd, kind, path, NULL, &st), 0);
	for (; files && *files; files++) {
		snprintf(p, sizeof(p), "%s/%s", path, *files);
		int f = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
		assert_true(f >= 0 && write(f, "x", 1) == 1);
		close(f);
	}
}

/* After a kill -9 during e2fsck: its scratch directory is removed with the files in it; a link
 * in it goes, what it points to stays; a directory put where it was, a subdirectory in it (not
 * descended into) and a plain "dir" (a mount point may still hold a mount) are left. */
static void record_empties_its_scratch_dirs(void **state)
{
	char dir[] = "/tmp/myriad-test-scratch.XXXXXX", ours[4200], replaced[4200], deep[4200], mnt[4200], p[4400];
	assert_non_null(mkdtemp(dir));
	snprintf(ours, sizeof(ours), "%s/myriad-lifecycle-ext4-10-1.scratch", dir);
	snprintf(replaced, sizeof(replaced), "%s/myriad-lifecycle-ext4-10-2.scratch", dir);
	snprintf(deep, sizeof(deep), "%s/myriad-lifecycle-ext4-10-3.scratch", dir);
	snprintf(mnt, sizeof(mnt), "%s/myriad-lifecycle-ext4-10-1.mnt", dir);
	int fd = lc_record_open(dir);
	assert_true(fd >= 0);
	const char *const files[] = {"dirinfo-1", "icount-2", NULL}, *const keep[] = {"keep", NULL};
	recorded_dir(fd, "scratch", ours, files);
	snprintf(p, sizeof(p), "%s/outside", dir);
	int f = open(p, O_WRONLY | O_CREAT, 0600);
	assert_true(f >= 0 && write(f, "outside", 7) == 7);
	close(f);
	snprintf(p, sizeof(p), "%s/link", ours);
	assert_int_equal(symlink("../outside", p), 0);
	recorded_dir(fd, "scratch", replaced, NULL);
	int old = open(replaced, O_RDONLY | O_DIRECTORY); /* open: the new directory cannot reuse its inode */
	assert_true(old >= 0);
	assert_int_equal(rmdir(replaced), 0);
	assert_int_equal(mkdir(replaced, 0755), 0);
	snprintf(p, sizeof(p), "%s/keep", replaced);
	assert_true((f = open(p, O_WRONLY | O_CREAT, 0600)) >= 0);
	close(f);
	recorded_dir(fd, "scratch", deep, files);
	snprintf(p, sizeof(p), "%s/sub", deep);
	assert_int_equal(mkdir(p, 0755), 0);
	recorded_dir(fd, "dir", mnt, keep);
	/* The subdirectory keeps its scratch directory, and so the record, for the next try. */
	assert_false(lc_record_clean(fd, false));
	close(old);
	assert_int_equal(access(ours, F_OK), -1);
	snprintf(p, sizeof(p), "%s/outside", dir);
	assert_int_equal(access(p, F_OK), 0);
	snprintf(p, sizeof(p), "%s/keep", replaced);
	assert_int_equal(access(p, F_OK), 0);
	snprintf(p, sizeof(p), "%s/icount-2", deep);
	assert_int_equal(access(p, F_OK), -1);
	snprintf(p, sizeof(p), "%s/sub", deep);
	assert_int_equal(access(p, F_OK), 0);
	snprintf(p, sizeof(p), "%s/keep", mnt);
	assert_int_equal(access(p, F_OK), 0);
	/* Without the subdirectory the next clean-up finishes. */
	snprintf(p, sizeof(p), "%s/sub", deep);
	assert_int_equal(rmdir(p), 0);
	assert_true(lc_record_clean(fd, false));
	assert_int_equal(access(deep, F_OK), -1);
	struct stat st;
	assert_true(fstat(fd, &st) == 0 && st.st_size == 0);
	close(fd);
	const char *const left[] = {"outside", "myriad-lifecycle-ext4-10-2.scratch/keep", "myriad-lifecycle-ext4-10-2.scratch",
				    "myriad-lifecycle-ext4-10-1.mnt/keep", "myriad-lifecycle-ext4-10-1.mnt", LC_RECORD_NAME};
	for (size_t i = 0; i < sizeof(left) / sizeof(*left); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, left[i]);
		assert_int_equal(remove(p), 0);
	}
	assert_int_equal(rmdir(dir), 0);
}

/* Results holding complete cycles of fs at the scales n, with image allocations alloc and checker
 * peaks rss (0: none); check_how is the memory plan their checkers ran with (NULL: none recorded). */
static struct lc_results *cycles_of(const char *fs, const uint64_t *n, const double *alloc, const double *rss, int k,
				    const char *check_how)
{
	struct lc_results *r = calloc(1, sizeof(*r));
	r->cycles = calloc(k, sizeof(*r->cycles));
	for (int i = 0; i < k; i++) {
		struct lc_cycle *c = &r->cycles[r->ncycles++];
		c->fs = strdup(fs);
		c->files = n[i];
		c->complete = true;
		c->image_bytes = (double)lc_image_bytes(n[i], 0);
		c->image_alloc_bytes = alloc[i];
		c->ph[PH_CHECK].status = rss[i] > 0 ? LC_OK : LC_FAILED;
		c->ph[PH_CHECK].peak_rss_kib = rss[i];
		c->ph[PH_CHECK].mem.set = check_how != NULL;
		c->ph[PH_CHECK].mem.how = check_how;
	}
	return r;
}

static void disk_estimate_from_formula_then_fit(void **state)
{
	struct lc_disk_est e;
	/* No measured cycle: the formula, with the margin. At 10^8 empty files on ext4: the 256-byte
	 * inodes and directory entries (~30 GB, as issue 15 measured) and a 1 GiB journal. */
	lc_disk_estimate(NULL, "ext4", 100000000, 0, &e);
	assert_int_equal(e.points, 0);
	assert_true(strstr(e.from, "mkfs parameters") != NULL);
	assert_true(e.raw > 29e9 && e.raw < 32e9);
	assert_true(fabs(e.bytes - (e.raw * (1 + LC_DISK_MARGIN) + LC_DISK_MARGIN_BYTES)) < 1);
	/* The fixed part follows the image: mke2fs's journal is 64 MiB at 2 GiB, 1 GiB from 128 GiB. */
	assert_true(fabs(lc_disk_fixed("ext4", 2147483648.0) - (64 << 20) - 16 * 8192 - (4 << 20)) < 1);
	assert_true(lc_disk_fixed("ext4", 400e9) > 1024.0 * 1024 * 1024);
	assert_true(lc_disk_fixed("xfs", 400e9) > lc_disk_fixed("xfs", 2e9));
	/* Data blocks count: 4k files take 4 KiB more each. */
	assert_true(fabs(lc_disk_formula("xfs", 1000, 4096) - lc_disk_formula("xfs", 1000, 0) - 1000 * 4096.0) < 1);
	/* Two measured cycles: a line through what they took, less their fixed part, plus this one's. */
	double fixed = lc_disk_fixed("ext4", (double)lc_image_bytes(1000, 0));
	uint64_t n[] = {1000, 2000, 4000};
	double alloc[] = {fixed + 1e6 + 300.0 * 1000, fixed + 1e6 + 300.0 * 2000, 0}, rss[] = {1, 1, 1};
	struct lc_results *r = cycles_of("ext4", n, alloc, rss, 2, NULL);
	lc_disk_estimate(r, "ext4", 1000000, 0, &e);
	assert_int_equal(e.points, 2);
	assert_string_equal(e.from, "a linear fit over 2 measured ext4 cycles");
	double want = lc_disk_fixed("ext4", (double)lc_image_bytes(1000000, 0)) + 1e6 + 300.0 * 1e6;
	assert_true(fabs(e.raw - want) < 1);
	/* Only smaller cycles of the same filesystem count; one is too few. */
	lc_disk_estimate(r, "ext4", 2000, 0, &e);
	assert_int_equal(e.points, 1);
	assert_true(strstr(e.from, "one measured cycle is too few") != NULL);
	lc_disk_estimate(r, "xfs", 1000000, 0, &e);
	assert_int_equal(e.points, 0);
	lc_free(r);
}

static void checker_memory_prediction_and_plan(void **state)
{
	uint64_t n[] = {1000, 2000, 4000};
	double alloc[] = {0, 0, 0}, rss[] = {2000, 3000, 5000}, kib;
	struct lc_results *r = cycles_of("xfs", n, alloc, rss, 3, NULL);
	assert_true(lc_mem_predict(r, "xfs", 1000000, &kib));
	assert_true(fabs(kib - (1000 + 1.0 * 1e6)) < 1e-6); /* rss = 1000 + N */
	assert_false(lc_mem_predict(r, "xfs", 2000, &kib)); /* one smaller scale: no prediction */
	assert_false(lc_mem_predict(r, "ext4", 1000000, &kib));
	lc_free(r);
	/* Never below what a smaller scale already took; checkers run with a limit of their own
	 * (-m, scratch files) do not count. */
	double down[] = {5000, 4000, 3000};
	r = cycles_of("ext4", n, alloc, down, 3, NULL);
	assert_true(lc_mem_predict(r, "ext4", 8000, &kib) && kib == 5000);
	lc_free(r);
	r = cycles_of("ext4", n, alloc, rss, 3, "scratch_files");
	assert_false(lc_mem_predict(r, "ext4", 8000, &kib));
	lc_free(r);
	/* The plan. */
	assert_string_equal(lc_mem_plan("e2fsck", NAN, NAN, 1024), "none");
	assert_string_equal(lc_mem_plan("e2fsck", 1000, NAN, 1024), "none");
	assert_string_equal(lc_mem_plan("e2fsck", 2000, NAN, 1024), "scratch_files");
	assert_string_equal(lc_mem_plan("xfs_repair", 2000, 500, 1024), "-m");
	assert_string_equal(lc_mem_plan("xfs_repair", NAN, 2000, 1024), "skipped");
	assert_string_equal(lc_mem_plan("xfs_repair", 500, 2000, 1024), "skipped");
	assert_string_equal(lc_mem_plan("btrfs", 2000, NAN, 1024), "skipped");
	assert_string_equal(lc_mem_plan("btrfs", NAN, NAN, 1024), "none");
}

static void memory_plan_and_allocation_round_trip(void **state)
{
	uint64_t n[] = {1000};
	double alloc[] = {12345678}, rss[] = {2000};
	struct lc_results *r = cycles_of("ext4", n, alloc, rss, 1, "scratch_files");
	struct lc_memplan *m = &r->cycles[0].ph[PH_CHECK].mem;
	m->predicted_kib = NAN;
	m->limit_kib = 1024;
	m->limit_from = "--checker-mem";
	m->contained = "cgroup v2";
	m->outcome = strdup("killed: out of memory at limit 1.0 MiB");
	r->cycles[0].disk_estimate_bytes = 5e8;
	r->cycles[0].disk_estimate_from = strdup("ext4's mkfs parameters");
	struct sbuf b = {0};
	lc_results_json(r, &b);
	char err[256];
	struct lc_results *back = lc_parse(b.data, b.len, "x", err, sizeof(err));
	assert_non_null(back);
	const struct lc_cycle *c = &back->cycles[0];
	assert_true(c->image_alloc_bytes == 12345678 && c->disk_estimate_bytes == 5e8);
	assert_string_equal(c->disk_estimate_from, "ext4's mkfs parameters");
	const struct lc_memplan *q = &c->ph[PH_CHECK].mem;
	assert_true(q->set && isnan(q->predicted_kib) && q->limit_kib == 1024);
	assert_string_equal(q->limit_from, "--checker-mem");
	assert_string_equal(q->contained, "cgroup v2");
	assert_string_equal(q->how, "scratch_files");
	assert_string_equal(q->outcome, "killed: out of memory at limit 1.0 MiB");
	assert_true(strstr(b.data, "\"predicted_kib\":null") != NULL);
	sbuf_free(&b);
	lc_free(back);
	lc_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(linear_data_fits_linear),
	    cmocka_unit_test(power_data_fits_power),
	    cmocka_unit_test(no_trend_is_constant_and_one_scale_no_fit),
	    cmocka_unit_test(reader_parses_what_the_writer_writes),
	    cmocka_unit_test(results_roundtrip),
	    cmocka_unit_test(malformed_results_are_refused),
	    cmocka_unit_test(device_guard_refuses_mounted_and_non_devices),
	    cmocka_unit_test(record_cleans_only_what_it_made),
	    cmocka_unit_test(record_empties_its_scratch_dirs),
	    cmocka_unit_test(disk_estimate_from_formula_then_fit),
	    cmocka_unit_test(checker_memory_prediction_and_plan),
	    cmocka_unit_test(memory_plan_and_allocation_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
