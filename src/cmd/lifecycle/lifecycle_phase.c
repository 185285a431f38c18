/*
 * lifecycle_phase: how myriad lifecycle runs and records one phase. Each phase is a child process
 * in its own process group (so a stop request reaches everything it started), timed from fork to
 * wait4, with its peak RSS from wait4's rusage: the child's own, not the run's. Its output goes to
 * LOGDIR/FS-N-PHASE.log; a failure is recorded with the last line it printed.
 * The fork/exec/wait4 part is util/proc.c's proc_run.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/lifecycle/lifecycle.h"
#include "cmd/lifecycle/lifecycle_record.h"
#include "io/cgroup_mem.h"
#include "lifecycle/jsonread.h"
#include "util/proc.h"
#include "util/sbuf.h"
#include "util/signals.h"
#include "util/util.h"


/* The last non-empty line of a file (for error messages). */
static char *last_line(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char line[1024], last[1024] = "";
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (line[0])
			snprintf(last, sizeof(last), "%s", line);
	}
	fclose(f);
	return last[0] ? xstrdup(last) : NULL;
}

/* ---- phases ---- */

/* A checker's memory plan, on a line of its own under the phase's. */
static void print_memplan(const struct lc_memplan *m)
{
	if (!m->set || (m->how && !strcmp(m->how, "skipped")))
		return; /* a skip says why on the phase's line */
	char a[32], b[32];
	printf("  %-16s predicted peak %s, limit %s (%s), contained: %s%s\n", "",
	       isfinite(m->predicted_kib) ? fmt_bytes(a, (uint64_t)(m->predicted_kib * 1024)) : "none (fewer than 2 smaller scales)",
	       isfinite(m->limit_kib) ? fmt_bytes(b, (uint64_t)(m->limit_kib * 1024)) : "unknown",
	       m->limit_from ? m->limit_from : "?", m->contained ? m->contained : "none",
	       m->how && !strcmp(m->how, "-m") ? "; xfs_repair -m the limit"
	       : m->how && !strcmp(m->how, "scratch_files") ? "; e2fsck scratch files on disk" : "");
}

void lc_print_phase(const struct lc_cycle *c, int id)
{
	const struct lc_phase *p = &c->ph[id];
	char b[32];
	printf("  %-16s ", lc_phases[id].name);
	if (p->status == LC_SKIPPED) {
		printf("skipped: %s\n", p->error ? p->error : "");
	} else {
		printf("%9.3f s  peak RSS %7.1f MiB", p->wall_s, p->peak_rss_kib / 1024);
		if (isfinite(p->rate))
			printf("  %s %s", fmt_count(b, (uint64_t)p->rate), p->rate_unit);
		if (isfinite(p->min_mem_kib))
			printf("  states it needs at least %.0f MiB", p->min_mem_kib / 1024);
		if (p->status == LC_FAILED)
			printf("  FAILED: %s", p->error ? p->error : "");
		printf("\n");
	}
	print_memplan(&p->mem);
	fflush(stdout);
}

void lc_skip_phase(struct lc *x, struct lc_cycle *c, int id, const char *why)
{
	struct lc_phase *p = &c->ph[id];
	p->status = LC_SKIPPED;
	free(p->error);
	p->error = xstrdup(why);
	lc_print_phase(c, id);
	lc_save(x);
}

void lc_log_path(struct lc *x, const struct lc_cycle *c, int id, char *buf, size_t n, const char *ext)
{
	snprintf(buf, n, "%s/%s-%llu-%s.%s", x->logdir, c->fs, (unsigned long long)c->files, lc_phases[id].name, ext);
}

/* lc_run_phase, with the child's wait status in *status; child, when not NULL, runs in the
 * child instead of argv (which still names the command). */
static bool run_phase(struct lc *x, struct lc_cycle *c, int id, char *const argv[], int (*fn)(void), int ok_exit,
		      int (*child)(void), int *status)
{
	struct lc_phase *p = &c->ph[id];
	char log[4400];
	lc_log_path(x, c, id, log, sizeof(log), "log");
	unlink(log);
	struct sbuf cmd = {0};
	if (argv)
		for (int i = 0; argv[i]; i++)
			sbuf_printf(&cmd, "%s%s", i ? " " : "", i == 0 && strstr(argv[0], "/proc/self/exe") ? "myriad" : argv[i]);
	else
		sbuf_adds(&cmd, id == PH_DROP1 ? "sync; echo 3 > /proc/sys/vm/drop_caches" : "echo 3 > /proc/sys/vm/drop_caches");
	sbuf_addc(&cmd, 0);
	free(p->command);
	p->command = cmd.data;
	int st = child ? proc_run(NULL, child, log, &p->wall_s, &p->peak_rss_kib)
		       : proc_run(argv, fn, log, &p->wall_s, &p->peak_rss_kib);
	*status = st;
	free(p->error);
	p->error = NULL;
	p->exit_status = -1;
	if (st == -1) {
		p->status = LC_FAILED;
		p->error = xstrdup(strerror(errno));
	} else if (WIFSIGNALED(st)) {
		struct sbuf e = {0};
		sbuf_printf(&e, "killed by signal %d%s", WTERMSIG(st), sig_stop_requested() ? " (run interrupted)" : "");
		sbuf_addc(&e, 0);
		p->status = LC_FAILED;
		p->error = e.data;
	} else {
		p->exit_status = WEXITSTATUS(st);
		bool ok = p->exit_status == 0 || (ok_exit >= 0 && p->exit_status == ok_exit);
		p->status = ok ? LC_OK : LC_FAILED;
		if (!ok) {
			char *l = last_line(log);
			struct sbuf e = {0};
			sbuf_printf(&e, "exit status %d%s%s%s", p->exit_status, l ? ": " : "", l ? l : "",
				    sig_stop_requested() ? " (run interrupted)" : "");
			sbuf_addc(&e, 0);
			p->error = e.data;
			free(l);
		}
	}
	if (p->status == LC_FAILED && !sig_stop_requested())
		x->failed = true;
	return p->status == LC_OK;
}

bool lc_run_phase(struct lc *x, struct lc_cycle *c, int id, char *const argv[], int (*fn)(void), int ok_exit)
{
	int st;
	return run_phase(x, c, id, argv, fn, ok_exit, NULL, &st);
}

/* ---- a phase contained in a memory-limited cgroup ---- */

/* What the contained child runs: set just before the fork (lifecycle runs one phase at a time). */
static const struct cgroup_mem *child_cg;
static char *const *child_argv;

/* In the child: into the group, then the checker. Refuse to run outside it: the limit is the
 * only thing keeping the OOM killer off the rest of the machine. */
static int exec_contained(void)
{
	if (cgroup_mem_enter(child_cg) != 0) {
		fprintf(stderr, "cannot enter %s: %s\n", child_cg->dir, strerror(errno));
		return 126;
	}
	execv(child_argv[0], child_argv);
	fprintf(stderr, "exec %s: %s\n", child_argv[0], strerror(errno));
	return 127;
}

/* Record a cgroup in made.list before it is made: a kill -9 of lifecycle leaves it for the next
 * run's clean-up (rmdir, which removes an empty cgroup). */
static int record_cgroup(const char *path, void *arg)
{
	struct lc *x = arg;
	return lc_record_add(x->record, "dir", path, NULL, NULL);
}

bool lc_oom_killed(int st, long long oom_kills, int limit_reached, bool stop)
{
	if (oom_kills >= 0)
		return oom_kills > 0; /* the kernel counts: a SIGKILL it did not count came from elsewhere */
	/* No count (a v1 kernel before 4.13 has no oom_kill in memory.oom_control; -1 also when the
	 * group could not be read): the OOM killer's SIGKILL after the limit was reached. */
	return st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL && limit_reached > 0 && !stop;
}

bool lc_run_contained(struct lc *x, struct lc_cycle *c, int id, char *const argv[], int ok_exit, double limit_kib)
{
	static bool said;
	struct lc_phase *p = &c->ph[id];
	struct cgroup_mem cg = {0};
	char name[64], why[512] = "";
	snprintf(name, sizeof(name), PREFIX "%s.%d", lc_phases[id].name, (int)getpid());
	bool in = limit_kib >= 1 && limit_kib < 1.8e16 &&
		  cgroup_mem_make(&cg, name, (uint64_t)(limit_kib * 1024), record_cgroup, x, why, sizeof(why)) == 0;
	if (!in && why[0] && !said) {
		warnx_("the checker runs without a memory cgroup (%s): the OOM killer may pick another process", why);
		said = true;
	}
	p->mem.contained = !in ? "none" : cg.version == 2 ? "cgroup v2" : "cgroup v1";
	child_cg = &cg;
	child_argv = argv;
	int st = 0;
	bool ok = run_phase(x, c, id, argv, NULL, ok_exit, in ? exec_contained : NULL, &st);
	bool oom = !ok && in && lc_oom_killed(st, cgroup_mem_oom_kills(&cg), cgroup_mem_limit_reached(&cg), sig_stop_requested());
	if (in && cgroup_mem_remove(&cg) != 0)
		warnx_("rmdir %s: %s (it stays in %s)", cg.dir, strerror(errno), LC_RECORD_NAME);
	if (oom) {
		char b[32];
		struct sbuf e = {0};
		sbuf_printf(&e, "killed: out of memory at limit %s", fmt_bytes(b, (uint64_t)(limit_kib * 1024)));
		sbuf_addc(&e, 0);
		free(p->error);
		p->error = e.data;
		free(p->mem.outcome);
		p->mem.outcome = xstrdup(e.data);
	}
	return ok;
}

/* Read rate (and the timeline) from a myriad subcommand's --json. */
static void read_myriad_json(struct lc_phase *p, const char *path, const char *rate_key, const char *unit)
{
	char err[256];
	struct jv *d = jv_parse_file(path, err, sizeof(err));
	if (!d)
		return;
	p->rate = jv_num(d, rate_key, NAN);
	p->rate_unit = unit;
	const struct jv *tl = jv_get(d, "timeline");
	if (tl && tl->type == JV_ARR && tl->n) {
		free(p->tl);
		p->tl = xcalloc(tl->n, sizeof(*p->tl));
		p->ntl = 0;
		for (size_t i = 0; i < tl->n; i++) {
			const struct jv *pt = &tl->items[i];
			if (pt->type == JV_ARR && pt->n >= 3)
				p->tl[p->ntl++] = (struct lc_point){jv_num(&pt->items[0], NULL, 0),
								    jv_num(&pt->items[1], NULL, 0),
								    jv_num(&pt->items[2], NULL, 0)};
		}
	}
	jv_free(d);
}

bool lc_run_myriad(struct lc *x, struct lc_cycle *c, int id, const char *sub, const char *const *extra,
		   const char *rate_key, const char *unit)
{
	char json[4400], tree[4200];
	lc_log_path(x, c, id, json, sizeof(json), "json");
	unlink(json);
	snprintf(tree, sizeof(tree), "%s/tree", x->mnt);
	char *argv[32];
	int n = 0;
	argv[n++] = "/proc/self/exe";
	argv[n++] = (char *)sub;
	argv[n++] = "--no-state";
	argv[n++] = "--progress";
	argv[n++] = "0";
	argv[n++] = "--json";
	argv[n++] = json;
	for (; extra && *extra; extra++)
		argv[n++] = (char *)*extra;
	argv[n++] = tree;
	argv[n] = NULL;
	bool ok = lc_run_phase(x, c, id, argv, NULL, -1);
	read_myriad_json(&c->ph[id], json, rate_key, unit);
	return ok;
}

int lc_drop_caches(void)
{
	sync();
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd < 0 || write(fd, "3\n", 2) != 2) {
		fprintf(stderr, "drop_caches: %s\n", strerror(errno));
		return 1;
	}
	close(fd);
	return 0;
}
