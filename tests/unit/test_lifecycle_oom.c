/* Unit tests for lifecycle's contained checker meeting the OOM killer (issue 15): a child that
 * really needs 200 MB (this binary run again as "--hog": anonymous memory, which cgroup v1 counts
 * like v2, unlike page cache) under an 8 MiB limit, through cgroup_mem alone and through
 * lc_run_contained, the path lifecycle's check takes. Those need root and a writable memory
 * controller and are skipped with the reason otherwise; the verdict for kernels without an
 * oom_kill count runs everywhere. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/lifecycle/lifecycle.h"
#include "cmd/lifecycle/lifecycle_record.h"
#include "io/cgroup_mem.h"

#define HOG_BYTES (200u << 20)
#define LIMIT (8u << 20)

/* The child: 200 MB of anonymous memory, every page written. Exit 0 only if it got them all. */
static int hog(void)
{
	char *m = mmap(NULL, HOG_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 3;
	for (size_t i = 0; i < HOG_BYTES; i += 4096)
		m[i] = 1;
	printf("touched %u bytes\n", HOG_BYTES);
	return 0;
}

/* Can this process make a memory cgroup? When not, the test is skipped with why. */
static bool can_contain(struct cgroup_mem *cg, const char *name)
{
	char why[512] = "";
	if (geteuid() != 0) {
		print_message("skipped: a memory cgroup needs root\n");
		return false;
	}
	if (cgroup_mem_make(cg, name, LIMIT, NULL, NULL, why, sizeof(why)) != 0) {
		print_message("skipped: %s\n", why);
		return false;
	}
	return true;
}

/* Entries named prefix* in the directory holding path's last component (the cgroup's parent). */
static int siblings_named(const char *path, const char *prefix)
{
	char parent[4200];
	snprintf(parent, sizeof(parent), "%s", path);
	*strrchr(parent, '/') = 0;
	DIR *d = opendir(parent);
	struct dirent *de;
	int n = 0;
	while (d && (de = readdir(d)))
		n += !strncmp(de->d_name, prefix, strlen(prefix));
	if (d)
		closedir(d);
	return n;
}

/* Is this process in a cgroup named name (any hierarchy)? */
static bool self_in(const char *name)
{
	char line[4200];
	bool in = false;
	FILE *f = fopen("/proc/self/cgroup", "re");
	while (f && fgets(line, sizeof(line), f))
		in |= strstr(line, name) != NULL;
	if (f)
		fclose(f);
	return in;
}

/* The group of cgroup_counts_the_oom_kill: removed by the teardown also when an assertion fails. */
static struct cgroup_mem cg;

static int remove_group(void **state) { return cgroup_mem_remove(&cg); }

static void cgroup_counts_the_oom_kill(void **state)
{
	char name[64];
	snprintf(name, sizeof(name), "myriad-test-oom.%d", (int)getpid());
	if (!can_contain(&cg, name))
		skip();
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (cgroup_mem_enter(&cg) != 0)
			_exit(126);
		execl("/proc/self/exe", "test_lifecycle_oom", "--hog", (char *)NULL);
		_exit(127);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	long long kills = cgroup_mem_oom_kills(&cg);
	int reached = cgroup_mem_limit_reached(&cg);
	print_message("cgroup v%d: oom_kill %lld, limit reached %d\n", cg.version, kills, reached);
	assert_true(kills > 0);
	assert_int_equal(reached, 1);
	assert_true(lc_oom_killed(st, kills, reached, false));
	assert_true(lc_oom_killed(st, -1, reached, false)); /* as a kernel without the count would say */
	assert_false(self_in(name));
	char dir[sizeof(cg.dir)];
	snprintf(dir, sizeof(dir), "%s", cg.dir);
	assert_int_equal(cgroup_mem_remove(&cg), 0);
	assert_int_equal(siblings_named(dir, "myriad-test-oom."), 0);
}

/* The path in the record's line "dir\tPATH" whose last component starts with PREFIX "check.". */
static bool recorded_cgroup(const char *rec, char *path, size_t n)
{
	char line[4400];
	bool got = false;
	FILE *f = fopen(rec, "re");
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		char *s = strrchr(line, '/');
		if (!strncmp(line, "dir\t", 4) && s && !strncmp(s + 1, PREFIX "check.", strlen(PREFIX "check."))) {
			snprintf(path, n, "%s", line + 4);
			got = true;
		}
	}
	if (f)
		fclose(f);
	return got;
}

static void lifecycle_records_the_oom_kill(void **state)
{
	struct cgroup_mem probe = {0};
	char name[64];
	snprintf(name, sizeof(name), "myriad-test-oom.%d", (int)getpid());
	if (!can_contain(&probe, name))
		skip();
	assert_int_equal(cgroup_mem_remove(&probe), 0);
	char tmp[] = "/tmp/myriad-test-oom.XXXXXX", rec[4200], log[4400], cgdir[4400];
	assert_non_null(mkdtemp(tmp));
	struct lc x = {0};
	snprintf(x.logdir, sizeof(x.logdir), "%s", tmp);
	x.record = lc_record_open(tmp);
	assert_true(x.record >= 0);
	struct lc_cycle c = {.fs = "ext4", .files = 10};
	char *argv[] = {"/proc/self/exe", "--hog", NULL};
	assert_false(lc_run_contained(&x, &c, PH_CHECK, argv, -1, LIMIT / 1024.0));
	const struct lc_phase *p = &c.ph[PH_CHECK];
	print_message("contained: %s; error: %s\n", p->mem.contained, p->error ? p->error : "(none)");
	assert_int_equal(p->status, LC_FAILED);
	assert_string_equal(p->error, "killed: out of memory at limit 8.0 MiB");
	assert_string_equal(p->mem.outcome, p->error);
	assert_true(!strcmp(p->mem.contained, "cgroup v1") || !strcmp(p->mem.contained, "cgroup v2"));
	assert_int_equal(p->exit_status, -1);
	assert_true(x.failed);
	/* Lifecycle (this process) was never in the group, and the group is gone, though recorded. */
	assert_false(self_in(PREFIX "check."));
	snprintf(rec, sizeof(rec), "%s/" LC_RECORD_NAME, tmp);
	assert_true(recorded_cgroup(rec, cgdir, sizeof(cgdir)));
	assert_int_equal(access(cgdir, F_OK), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(siblings_named(cgdir, PREFIX), 0);
	close(x.record);
	unlink(rec);
	lc_log_path(&x, &c, PH_CHECK, log, sizeof(log), "log");
	unlink(log);
	free(c.ph[PH_CHECK].error);
	free(c.ph[PH_CHECK].command);
	free(c.ph[PH_CHECK].mem.outcome);
	assert_int_equal(rmdir(tmp), 0);
}

/* The verdict, for every kind of kernel: with an oom_kill count it alone decides; without one
 * (v1 before Linux 4.13), a SIGKILL after the limit was hit, not during a stop. */
static void oom_verdict_with_and_without_the_count(void **state)
{
	int killed = SIGKILL, termed = SIGTERM, exit1 = 1 << 8;
	assert_true(WIFSIGNALED(killed) && WTERMSIG(killed) == SIGKILL && WIFEXITED(exit1));
	assert_true(lc_oom_killed(killed, 1, 1, false));
	assert_true(lc_oom_killed(exit1, 1, 1, false));     /* a process of the checker's was taken */
	assert_false(lc_oom_killed(killed, 0, 1, false));   /* counted none: a kill -9 from elsewhere */
	assert_true(lc_oom_killed(killed, -1, 1, false));   /* no count: SIGKILL at the limit */
	assert_false(lc_oom_killed(killed, -1, 0, false));  /* never reached the limit */
	assert_false(lc_oom_killed(killed, -1, -1, false)); /* nothing known (no cgroup) */
	assert_false(lc_oom_killed(killed, -1, 1, true));   /* the run's stop: SIGKILL 5 s after SIGTERM */
	assert_false(lc_oom_killed(termed, -1, 1, false));
	assert_false(lc_oom_killed(exit1, -1, 1, false));
	assert_false(lc_oom_killed(-1, -1, 1, false));
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--hog"))
		return hog();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(oom_verdict_with_and_without_the_count),
	    cmocka_unit_test_teardown(cgroup_counts_the_oom_kill, remove_group),
	    cmocka_unit_test(lifecycle_records_the_oom_kill),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
