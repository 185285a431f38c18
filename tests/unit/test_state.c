/* Unit tests for ser (checksummed blobs) and ckpt (state directories, locking, snapshots). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "scratch.h"
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
	return scratch_dir(tmpdir, sizeof(tmpdir), "state") ? 0 : -1;
}

static int teardown(void **state)
{
	return scratch_remove(tmpdir);
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

/* path of name in tmpdir/sub (or tmpdir/sub itself when name is NULL), in a static buffer. */
static const char *at(const char *sub, const char *name)
{
	static char buf[4][256];
	static int i;
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s%s%s", tmpdir, sub, name ? "/" : "", name ? name : "");
	return buf[i];
}

static void put(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* The file's content as a string ("" when missing), in a static buffer. */
static const char *get(const char *path)
{
	static char buf[4096];
	buf[0] = 0;
	FILE *f = fopen(path, "r");
	if (f) {
		buf[fread(buf, 1, sizeof(buf) - 1, f)] = 0;
		fclose(f);
	}
	return buf;
}

/* Entries in a directory (-1 when it is not there). */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* A directory the user filled with files named like myriad's, or with a marker that is not one:
 * refused, and not one byte in it changed, not one file added or removed. */
static void a_users_directory_is_refused_untouched(void **state)
{
	struct sbuf id = {0};
	sbuf_adds(&id, "job");
	assert_int_equal(mkdir(at("u1", NULL), 0700), 0);
	const char *names[] = {"lock", "command", "identity", "snapshot.tmp", "snapshot", "notes"};
	for (size_t i = 0; i < 6; i++)
		put(at("u1", names[i]), "user's\n", 7);
	assert_null(ckpt_open("test", at("u1", NULL), &id, "cmd\n"));
	for (size_t i = 0; i < 6; i++)
		assert_string_equal(get(at("u1", names[i])), "user's\n");
	assert_int_equal(entries(at("u1", NULL)), 6);
	/* myriad's names only, but not a job's */
	assert_int_equal(unlink(at("u1", "notes")), 0);
	assert_null(ckpt_open("test", at("u1", NULL), &id, "cmd\n"));
	assert_int_equal(entries(at("u1", NULL)), 5);
	assert_string_equal(get(at("u1", "lock")), "user's\n");
	/* a marker that is not myriad's, and one that is a link to myriad's */
	put(at("u1", "myriad-state"), "myriad state directory 1\nmade-by: me\n", 37);
	assert_null(ckpt_open("test", at("u1", NULL), &id, "cmd\n"));
	assert_int_equal(mkdir(at("u2", NULL), 0700), 0);
	put(at("u1", "myriad-state"), "myriad state directory 1\nmade-by: user\n", 39);
	assert_int_equal(symlink("../u1/myriad-state", at("u2", "myriad-state")), 0);
	assert_null(ckpt_open("test", at("u2", NULL), &id, "cmd\n"));
	assert_int_equal(entries(at("u2", NULL)), 1);
	assert_string_equal(get(at("u1", "lock")), "user's\n");
	sbuf_free(&id);
}

/* An empty directory of the user's is marked and used; when the job is done its files go, the
 * directory stays. One myriad makes is marked as its own and removed with them. */
static void empty_directories_are_marked_and_only_myriads_own_removed(void **state)
{
	struct sbuf id = {0};
	sbuf_adds(&id, "job");
	assert_int_equal(mkdir(at("e1", NULL), 0700), 0);
	struct ckpt *c = ckpt_open("test", at("e1", NULL), &id, "cmd\n");
	assert_non_null(c);
	assert_string_equal(get(at("e1", "myriad-state")), "myriad state directory 1\nmade-by: user\n");
	assert_int_equal(ckpt_save(c, "x", 1), 0);
	ckpt_close(c);
	c = ckpt_open("test", at("e1", NULL), &id, "cmd\n"); /* marked: taken again */
	assert_non_null(c);
	put(at("e1", "added-later"), "", 0);
	ckpt_finish(c);
	assert_int_equal(entries(at("e1", NULL)), 1);
	assert_string_equal(get(at("e1", "added-later")), "");

	c = ckpt_open("test", at("e2", NULL), &id, "cmd\n");
	assert_non_null(c);
	assert_string_equal(get(at("e2", "myriad-state")), "myriad state directory 1\nmade-by: myriad\n");
	ckpt_close(c);
	c = ckpt_open("test", at("e2", NULL), &id, "cmd\n");
	assert_non_null(c);
	ckpt_finish(c);
	assert_int_equal(entries(at("e2", NULL)), -1);

	/* A marker.tmp alone (a run killed while marking): the user's to look at under --state; under
	 * the default location, where all is myriad's, the directory is taken as empty. */
	assert_int_equal(mkdir(at("e3", NULL), 0700), 0);
	put(at("e3", "myriad-state.tmp"), "myriad state", 12);
	assert_null(ckpt_open("test", at("e3", NULL), &id, "cmd\n"));
	assert_string_equal(get(at("e3", "myriad-state.tmp")), "myriad state");
	setenv("XDG_STATE_HOME", at("xdg", NULL), 1);
	char *dir = ckpt_dir_for("test", NULL, &id);
	assert_int_equal(mkdir(at("xdg", NULL), 0700), 0);
	assert_int_equal(mkdir(at("xdg", "myriad"), 0700), 0);
	assert_int_equal(mkdir(dir, 0700), 0);
	char tmp[512];
	snprintf(tmp, sizeof(tmp), "%s/myriad-state.tmp", dir);
	put(tmp, "myriad state", 12);
	c = ckpt_open("test", NULL, &id, "cmd\n");
	assert_non_null(c);
	assert_string_equal(ckpt_dir(c), dir);
	ckpt_finish(c);
	assert_int_equal(entries(dir), -1); /* made by myriad: removed */
	free(dir);
	unsetenv("XDG_STATE_HOME");
	sbuf_free(&id);
}

/* A state directory of a myriad before the marker (only its files, a job's identity, a whole
 * snapshot) is taken over and resumed; one with a damaged snapshot is refused untouched. */
static void an_older_myriads_state_is_taken_over(void **state)
{
	struct sbuf id = {0}, snap = {0}, got = {0};
	ser_begin(&id, "MYRID001");
	ser_str(&id, "test");
	blob(&snap);
	for (int damaged = 0; damaged < 2; damaged++) {
		const char *d = damaged ? "o2" : "o1";
		assert_int_equal(mkdir(at(d, NULL), 0700), 0);
		put(at(d, "lock"), "123\n", 4);
		put(at(d, "command"), "myriad test\n", 12);
		put(at(d, "identity"), id.data, id.len);
		put(at(d, "snapshot"), snap.data, snap.len - damaged);
		struct ckpt *c = ckpt_open("test", at(d, NULL), &id, "cmd\n");
		if (damaged) {
			assert_null(c);
			assert_int_equal(entries(at(d, NULL)), 4);
			assert_string_equal(get(at(d, "lock")), "123\n");
			continue;
		}
		assert_non_null(c);
		assert_string_equal(get(at(d, "myriad-state")), "myriad state directory 1\nmade-by: user\n");
		assert_int_equal(ckpt_load(c, &got), 1);
		assert_int_equal(got.len, snap.len);
		ckpt_finish(c);
		assert_int_equal(entries(at(d, NULL)), 0);
	}
	sbuf_free(&id);
	sbuf_free(&snap);
	sbuf_free(&got);
}

/* Links planted in a state directory are never written through: a lock that is a symbolic or a
 * hard link is refused; a .tmp one is replaced by a file of myriad's own. */
static void planted_links_are_not_followed(void **state)
{
	struct sbuf id = {0};
	sbuf_adds(&id, "job");
	put(at("victim", NULL), "victim\n", 7);
	struct ckpt *c = ckpt_open("test", at("l1", NULL), &id, "cmd\n");
	assert_non_null(c);
	ckpt_close(c);
	assert_int_equal(unlink(at("l1", "lock")), 0);
	assert_int_equal(symlink("../victim", at("l1", "lock")), 0);
	assert_null(ckpt_open("test", at("l1", NULL), &id, "cmd\n"));
	assert_int_equal(unlink(at("l1", "lock")), 0);
	assert_int_equal(link(at("victim", NULL), at("l1", "lock")), 0);
	assert_null(ckpt_open("test", at("l1", NULL), &id, "cmd\n"));
	assert_string_equal(get(at("victim", NULL)), "victim\n");
	assert_int_equal(unlink(at("l1", "lock")), 0);
	assert_int_equal(symlink("../victim", at("l1", "snapshot.tmp")), 0);
	assert_int_equal(link(at("victim", NULL), at("l1", "identity.tmp")), 0);
	assert_int_equal(symlink("../victim", at("l1", "command.tmp")), 0);
	c = ckpt_open("test", at("l1", NULL), &id, "cmd\n");
	assert_non_null(c);
	assert_int_equal(ckpt_save(c, "x", 1), 0);
	assert_string_equal(get(at("victim", NULL)), "victim\n");
	assert_string_equal(get(at("l1", "snapshot")), "x");
	ckpt_finish(c);
	assert_int_equal(entries(at("l1", NULL)), -1);
	sbuf_free(&id);
}

/* What an earlier run left is described without a change (command line, start, snapshot,
 * progress, lock), also to the run that takes the state over; --fresh's discard leaves nothing to
 * resume. */
static void earlier_runs_are_described_and_discarded(void **state)
{
	struct sbuf id = {0}, snap = {0};
	sbuf_adds(&id, "job");
	struct ckpt *c = ckpt_open("test", at("i1", NULL), &id, "myriad walk x\n");
	assert_non_null(c);
	assert_null(ckpt_previous(c));
	assert_int_equal(ckpt_save(c, "xy", 2), 0);
	ckpt_save_progress(c, "walk: 5 entries", 15);
	struct ckpt_info in;
	char why[300];
	assert_int_equal(ckpt_inspect(at("i1", NULL), &in, why, sizeof(why)), 1);
	assert_true(in.running); /* the lock is held, here by c */
	assert_int_equal(in.pid, getpid());
	ckpt_info_free(&in);
	ckpt_close(c);
	assert_int_equal(ckpt_inspect(at("i1", NULL), &in, why, sizeof(why)), 1);
	assert_string_equal(in.command, "myriad walk x");
	assert_string_equal(in.progress, "walk: 5 entries");
	assert_int_equal(in.snapshot_bytes, 2);
	assert_true(in.started > 0 && in.snapshot_time >= in.started && in.last_written >= in.snapshot_time);
	assert_true(in.has_identity && !in.running && in.disk_bytes > 0);
	ckpt_info_free(&in);
	c = ckpt_open("test", at("i1", NULL), &id, "myriad walk --fresh x\n");
	assert_non_null(c);
	const struct ckpt_info *prev = ckpt_previous(c);
	assert_non_null(prev);
	assert_string_equal(prev->command, "myriad walk x"); /* read before this run wrote its own */
	assert_false(prev->running);
	assert_int_equal(ckpt_discard(c), 0);
	assert_int_equal(ckpt_load(c, &snap), 0);
	assert_false(ckpt_started(c));
	assert_string_equal(get(at("i1", "snapshot")), "");
	assert_string_equal(get(at("i1", "progress")), "");
	assert_string_equal(get(at("i1", "myriad-state")), "myriad state directory 1\nmade-by: myriad\n");
	ckpt_finish(c);
	assert_int_equal(entries(at("i1", NULL)), -1);
	sbuf_free(&id);
	sbuf_free(&snap);
}

/* ckpt_remove: never while a run holds the lock, never without the marker; only myriad's files,
 * and the directory only when myriad made it. */
static void remove_takes_only_unlocked_marked_states(void **state)
{
	struct sbuf id = {0};
	sbuf_adds(&id, "job");
	char why[300];
	struct ckpt_info in;
	struct ckpt *c = ckpt_open("test", at("x1", NULL), &id, "cmd\n");
	assert_non_null(c);
	assert_int_equal(ckpt_save(c, "x", 1), 0);
	assert_int_equal(ckpt_remove(at("x1", NULL), &in, why, sizeof(why)), CKPT_BUSY);
	assert_true(in.running);
	ckpt_info_free(&in);
	assert_string_equal(get(at("x1", "snapshot")), "x");
	ckpt_close(c);
	put(at("x1", "notes"), "mine\n", 5);
	why[0] = 0;
	assert_int_equal(ckpt_remove(at("x1", NULL), NULL, why, sizeof(why)), CKPT_REMOVED);
	assert_string_equal(get(at("x1", "notes")), "mine\n"); /* not myriad's: kept, and the directory */
	assert_true(strstr(why, "not myriad's") != NULL);
	assert_int_equal(entries(at("x1", NULL)), 1);
	/* Now without the marker: never removed. */
	assert_int_equal(ckpt_remove(at("x1", NULL), NULL, why, sizeof(why)), CKPT_NOT_OURS);
	assert_int_equal(ckpt_inspect(at("x1", NULL), &in, why, sizeof(why)), 0);
	assert_string_equal(get(at("x1", "notes")), "mine\n");
	/* The user's empty directory given to --state: emptied, kept. */
	assert_int_equal(mkdir(at("x2", NULL), 0700), 0);
	c = ckpt_open("test", at("x2", NULL), &id, "cmd\n");
	assert_non_null(c);
	assert_int_equal(ckpt_save(c, "x", 1), 0);
	ckpt_close(c);
	assert_int_equal(ckpt_remove(at("x2", NULL), NULL, why, sizeof(why)), CKPT_REMOVED);
	assert_int_equal(entries(at("x2", NULL)), 0);
	/* One myriad made: gone. */
	c = ckpt_open("test", at("x3", NULL), &id, "cmd\n");
	assert_non_null(c);
	ckpt_close(c);
	assert_int_equal(ckpt_remove(at("x3", NULL), NULL, why, sizeof(why)), CKPT_REMOVED);
	assert_int_equal(entries(at("x3", NULL)), -1);
	sbuf_free(&id);
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
	    cmocka_unit_test(a_users_directory_is_refused_untouched),
	    cmocka_unit_test(empty_directories_are_marked_and_only_myriads_own_removed),
	    cmocka_unit_test(an_older_myriads_state_is_taken_over),
	    cmocka_unit_test(planted_links_are_not_followed),
	    cmocka_unit_test(earlier_runs_are_described_and_discarded),
	    cmocka_unit_test(remove_takes_only_unlocked_marked_states),
	    cmocka_unit_test(path_resolve_names_missing_paths),
	    cmocka_unit_test(path_inside_respects_components),
	    cmocka_unit_test(manifests_are_read_strictly),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
