/* Unit tests for ser (checksummed blobs) and ckpt (state directories, locking, snapshots). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include "state/ckpt.h"
#include "state/manifest.h"
#include "state/ser.h"

static void blob(struct sbuf *b)
{
	ser_begin(b, "MYRTEST1");
	ser_u64(b, 42);
	ser_str(b, "hello");
	ser_u64(b, UINT64_MAX);
	ser_end(b);
}

static void blobs_roundtrip(void **state)
{
	struct sbuf b = {0};
	blob(&b);
	struct deser d;
	const char *why;
	assert_true(deser_begin(&d, b.data, b.len, "MYRTEST1", &why));
	assert_int_equal(deser_u64(&d), 42);
	size_t n;
	const char *s = deser_bytes(&d, &n);
	assert_int_equal(n, 5);
	assert_memory_equal(s, "hello", 5);
	assert_true(deser_u64(&d) == UINT64_MAX);
	assert_true(deser_done(&d));
	sbuf_free(&b);
}

static void corruption_and_truncation_are_detected(void **state)
{
	struct sbuf b = {0};
	blob(&b);
	struct deser d;
	const char *why;
	for (size_t cut = 0; cut < b.len; cut++)
		assert_false(deser_begin(&d, b.data, cut, "MYRTEST1", &why));
	for (size_t i = 0; i < b.len; i++) {
		b.data[i] ^= 0x40;
		assert_false(deser_begin(&d, b.data, b.len, "MYRTEST1", &why));
		b.data[i] ^= 0x40;
	}
	assert_false(deser_begin(&d, b.data, b.len, "MYRTEST2", &why));
	sbuf_free(&b);
}

static void reads_past_the_end_fail_safely(void **state)
{
	struct sbuf b = {0};
	ser_begin(&b, "MYRTEST1");
	ser_u64(&b, 1000); /* a length with no bytes behind it */
	ser_end(&b);
	struct deser d;
	const char *why;
	assert_true(deser_begin(&d, b.data, b.len, "MYRTEST1", &why));
	size_t n;
	assert_null(deser_bytes(&d, &n));
	assert_true(d.bad);
	assert_int_equal(deser_u64(&d), 0);
	assert_false(deser_done(&d));
	sbuf_free(&b);
}

static char tmpdir[64];

static int setup(void **state)
{
	strcpy(tmpdir, "/tmp/myriad-unit.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd);
}

static void snapshots_survive_and_finish_removes(void **state)
{
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/s1", tmpdir);
	struct sbuf id = {0}, snap = {0}, one = {0}, two = {0};
	sbuf_adds(&id, "job-a");
	blob(&one);
	ser_begin(&two, "MYRTEST1");
	ser_str(&two, "two!");
	ser_end(&two);
	struct ckpt *c = ckpt_open("test", dir, &id, "cmd\n");
	assert_non_null(c);
	assert_int_equal(ckpt_load(c, &snap), 0);
	assert_int_equal(ckpt_save(c, one.data, one.len), 0);
	assert_int_equal(ckpt_save(c, two.data, two.len), 0);
	ckpt_close(c);
	c = ckpt_open("test", dir, &id, NULL);
	assert_non_null(c);
	assert_int_equal(ckpt_load(c, &snap), 1);
	assert_int_equal(snap.len, two.len);
	assert_memory_equal(snap.data, two.data, two.len);
	ckpt_finish(c);
	struct stat st;
	assert_int_not_equal(stat(dir, &st), 0);
	sbuf_free(&id);
	sbuf_free(&snap);
	sbuf_free(&one);
	sbuf_free(&two);
}

/* A snapshot cut short or with a byte changed is refused when it is read, whatever kind it is. */
static void damaged_snapshots_are_refused(void **state)
{
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/s4", tmpdir);
	struct sbuf id = {0}, good = {0}, snap = {0};
	sbuf_adds(&id, "job-d");
	blob(&good);
	struct ckpt *c = ckpt_open("test", dir, &id, NULL);
	assert_non_null(c);
	assert_int_equal(ckpt_save(c, good.data, good.len - 1), 0);
	assert_int_equal(ckpt_load(c, &snap), -1);
	good.data[3] ^= 1;
	snap.len = 0;
	assert_int_equal(ckpt_save(c, good.data, good.len), 0);
	assert_int_equal(ckpt_load(c, &snap), -1);
	good.data[3] ^= 1;
	snap.len = 0;
	assert_int_equal(ckpt_save(c, good.data, good.len), 0);
	assert_int_equal(ckpt_load(c, &snap), 1);
	ckpt_finish(c);
	sbuf_free(&id);
	sbuf_free(&good);
	sbuf_free(&snap);
}

static void a_second_run_is_refused(void **state)
{
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/s2", tmpdir);
	struct sbuf id = {0};
	sbuf_adds(&id, "job");
	struct ckpt *c = ckpt_open("test", dir, &id, NULL);
	assert_non_null(c);
	pid_t pid = fork();
	if (pid == 0) /* flock is per open file: another process must be refused */
		_exit(ckpt_open("test", dir, &id, NULL) == NULL ? 0 : 1);
	int status;
	waitpid(pid, &status, 0);
	assert_int_equal(WEXITSTATUS(status), 0);
	ckpt_finish(c);
	sbuf_free(&id);
}

static void another_jobs_state_is_refused(void **state)
{
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/s3", tmpdir);
	struct sbuf a = {0}, b = {0}, snap = {0};
	sbuf_adds(&a, "job-a");
	sbuf_adds(&b, "job-b");
	struct sbuf x = {0};
	blob(&x);
	struct ckpt *c = ckpt_open("test", dir, &a, NULL);
	assert_int_equal(ckpt_save(c, x.data, x.len), 0);
	sbuf_free(&x);
	ckpt_close(c);
	c = ckpt_open("test", dir, &b, NULL);
	assert_non_null(c);
	assert_int_equal(ckpt_load(c, &snap), -1);
	ckpt_finish(c);
	sbuf_free(&a);
	sbuf_free(&b);
	sbuf_free(&snap);
}

/* A job killed while ckpt_finish removed its state (the snapshot already gone) is seen as started;
 * one whose state is gone, or that never saved a snapshot of its own, is not. */
static void a_job_killed_while_finishing_is_seen_as_started(void **state)
{
	char dir[128], path[160];
	snprintf(dir, sizeof(dir), "%s/s4", tmpdir);
	struct sbuf id = {0}, other = {0}, snap = {0};
	sbuf_adds(&id, "job");
	sbuf_adds(&other, "another job");
	struct ckpt *c = ckpt_open("test", dir, &id, NULL);
	assert_non_null(c);
	assert_int_equal(ckpt_load(c, &snap), 0);
	assert_false(ckpt_started(c));
	assert_int_equal(ckpt_save(c, "x", 1), 0);
	ckpt_close(c);
	snprintf(path, sizeof(path), "%s/snapshot", dir);
	assert_int_equal(unlink(path), 0); /* ckpt_finish's first step */
	c = ckpt_open("test", dir, &other, NULL);
	assert_int_equal(ckpt_load(c, &snap), 0);
	assert_false(ckpt_started(c));
	ckpt_close(c);
	c = ckpt_open("test", dir, &id, NULL);
	assert_int_equal(ckpt_load(c, &snap), 0);
	assert_true(ckpt_started(c));
	ckpt_finish(c);
	sbuf_free(&id);
	sbuf_free(&other);
	sbuf_free(&snap);
}

/* path_resolve: an existing path is resolved; a missing one is its resolved parent plus its name,
 * the same string the path gives once it exists. */
static void path_resolve_names_missing_paths(void **state)
{
	char dir[128], link[160], rel[200], out[4096], want[4096];
	snprintf(dir, sizeof(dir), "%s/r", tmpdir);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(link, sizeof(link), "%s/via-link", tmpdir);
	assert_int_equal(symlink("r", link), 0);
	snprintf(rel, sizeof(rel), "%s/via-link/new//", tmpdir);
	assert_true(path_resolve(rel, out));
	char real[4096];
	assert_non_null(realpath(tmpdir, real));
	assert_true(strlen(real) < 200);
	snprintf(want, sizeof(want), "%.200s/r/new", real);
	assert_string_equal(out, want);
	snprintf(rel, sizeof(rel), "%s/via-link/new", tmpdir);
	assert_int_equal(mkdir(rel, 0700), 0);
	assert_true(path_resolve(rel, out));
	assert_string_equal(out, want);
	snprintf(rel, sizeof(rel), "%s/missing/new", tmpdir);
	assert_false(path_resolve(rel, out));
}

static void path_inside_respects_components(void **state)
{
	assert_true(path_inside("/a/b", "/a"));
	assert_true(path_inside("/a", "/a"));
	assert_true(path_inside("/a/b", "/a/"));
	assert_false(path_inside("/ab", "/a"));
	assert_true(path_inside("/x", "/"));
}

/* text + its checksum line, parsed as a manifest: 1 or -1. */
static int parse_manifest(const char *text, struct manifest *m)
{
	char buf[4096];
	int n = snprintf(buf, sizeof(buf), "%schecksum %016llx\n", text, (unsigned long long)XXH64(text, strlen(text), 0));
	const char *why;
	return manifest_parse(buf, n, m, &why);
}

#define MANIFEST_HEAD "myriad-fill-manifest 1\nmyriad_version 0.1.0\nlayout 1\nfiles 100\nfanout 10\n"

static void manifests_are_read_strictly(void **state)
{
	struct manifest m;
	assert_int_equal(parse_manifest(MANIFEST_HEAD "size 0 4096\nseed 3\nstatus complete\nclaimed 8\npartial 2 4\n"
						      "partial 5 0\n",
					&m),
			 1);
	assert_int_equal(m.npartial, 2);
	assert_int_equal(manifest_leaf_files(&m, 2, 10), 4);
	assert_int_equal(manifest_leaf_files(&m, 3, 10), 10);
	assert_int_equal(manifest_leaf_files(&m, 9, 10), 0);
	manifest_free(&m);
	/* Found while fuzzing: sscanf took signs and spaces ("size -1 -1" made 2^64-1 byte files),
	 * and nothing tied claimed and partial leaves to the layout. */
	assert_int_equal(parse_manifest(MANIFEST_HEAD "size -1 -1\nseed 3\nstatus complete\nclaimed 10\n", &m), -1);
	assert_int_equal(parse_manifest(MANIFEST_HEAD "size 0  4\nseed 3\nstatus complete\nclaimed 10\n", &m), -1);
	assert_int_equal(parse_manifest(MANIFEST_HEAD "size 0 0\nseed +3\nstatus complete\nclaimed 10\n", &m), -1);
	assert_int_equal(parse_manifest(MANIFEST_HEAD "size 0 0\nseed 3\nstatus complete\nclaimed 11\n", &m), -1);
	assert_int_equal(parse_manifest(MANIFEST_HEAD "size 0 0\nseed 3\nstatus complete\nclaimed 4\npartial 4 1\n", &m),
			 -1);
	assert_int_equal(
	    parse_manifest(MANIFEST_HEAD "size 0 0\nseed 3\nstatus complete\nclaimed 9\npartial 5 1\npartial 2 1\n", &m),
	    -1);
	assert_int_equal(parse_manifest(MANIFEST_HEAD "size 0 0\nseed 3\nstatus complete\nclaimed 9\npartial 5 11\n", &m),
			 -1);
	assert_int_equal(parse_manifest(MANIFEST_HEAD "size 4 0\nseed 3\nstatus complete\nclaimed 9\n", &m), -1);
	assert_int_equal(parse_manifest(MANIFEST_HEAD "fanout 2\nsize 0 0\nseed 3\nstatus complete\nclaimed 9\n", &m), -1);
	assert_true(m.partial == NULL && m.npartial == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(blobs_roundtrip),
	    cmocka_unit_test(corruption_and_truncation_are_detected),
	    cmocka_unit_test(reads_past_the_end_fail_safely),
	    cmocka_unit_test(snapshots_survive_and_finish_removes),
	    cmocka_unit_test(damaged_snapshots_are_refused),
	    cmocka_unit_test(a_second_run_is_refused),
	    cmocka_unit_test(another_jobs_state_is_refused),
	    cmocka_unit_test(a_job_killed_while_finishing_is_seen_as_started),
	    cmocka_unit_test(path_resolve_names_missing_paths),
	    cmocka_unit_test(path_inside_respects_components),
	    cmocka_unit_test(manifests_are_read_strictly),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
