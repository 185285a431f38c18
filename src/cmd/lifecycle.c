/*
 * myriad lifecycle: re-run the billion-file experiment (mkfs, fill, walk, fsck, remove) on loop
 * images at several scales, one child process per phase (wall time and peak RSS from wait4), and
 * write results.json after every phase and report.html at the end. myriad report re-renders one or
 * more results files.
 *
 * Safety: every image, mount point, loop device and mount the run makes is written to the record
 * OUT/made.list before it is made (lifecycle_guard), and torn down from that record after each
 * cycle, when a phase fails and on SIGINT/SIGTERM; a run first tears down what the record of a
 * killed run with the same --out lists, each only while it is still what was recorded, and
 * nothing else. A real block device is touched only with --device and --yes, and never while it
 * (or a partition, holder or loop device over it) is mounted, swap or otherwise in use.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/loop.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmds.h"
#include "cmd/job.h"
#include "cmd/lifecycle_guard.h"
#include "report/jsonread.h"
#include "report/page.h"
#include "report/results.h"
#include "util/sbuf.h"
#include "util/signals.h"
#include "util/util.h"

#define DEFAULT_FILES 1000000
#define LC_FILES_MAX 1000000000000000ull /* fill's limit (layout.h) */
#define PREFIX "myriad-lifecycle-"

static const char lifecycle_help[] =
    "Usage: myriad lifecycle [OPTIONS]\n"
    "Re-run the billion-file experiment at several scales: for each filesystem and file count,\n"
    "make a sparse image on a loop device, then time each phase in its own process (wall time,\n"
    "peak RSS): mkfs, mount, fill, walk with a cold cache (plain and --stat), umount, the read-only\n"
    "checker (e2fsck -fn, xfs_repair -n, btrfs check --readonly), mount, verify --quick, rm, umount.\n"
    "Fits every phase's time and the checker's memory against the file count and projects them.\n"
    "Needs root.\n"
    "\n"
    "      --fs LIST            filesystems to compare: ext4, xfs, btrfs, ext3 (default: those whose\n"
    "                           mkfs and checker are installed)\n"
    "  -n, --files N            files at the largest scale (default 1M)\n"
    "      --scales LIST        file counts to run, e.g. 100k,300k,1M (default: N/10, N/3 and N)\n"
    "      --project N          project each phase's time and the checker's memory to N files\n"
    "                           (default 1G); the report says it is an extrapolation\n"
    "  -s, --size SIZE          file size, as for fill: 0 (default), 4k, or a range 1k-64k\n"
    "      --image-dir DIR      where the sparse images go (default /var/tmp)\n"
    "      --device DEV         use this block device instead of images: DESTROYS ITS CONTENTS;\n"
    "                           refused while it or a partition of it is mounted, swap, held by\n"
    "                           another device, backs a loop device, or its image is in use\n"
    "      --yes                confirm --device\n"
    "      --dry-run            check the options, the tools and --device, say what would be\n"
    "                           made, and stop: nothing is touched (--device needs no --yes)\n"
    "      --mkfs-opts FS=OPTS  extra mkfs options for one filesystem, split at spaces (repeatable),\n"
    "                           e.g. --mkfs-opts ext4='-E lazy_itable_init=0'\n"
    "      --out DIR            results.json, report.html and per-phase logs go there\n"
    "                           (default ./lifecycle-out); cycles already complete in\n"
    "                           DIR/results.json are not run again\n"
    "      --help               this text\n"
    "\n"
    "results.json is rewritten after every phase. A failed phase is recorded with its error and the\n"
    "cycle goes on where it can. Nothing is left behind: not loop devices, mounts nor images, also\n"
    "after SIGINT or SIGTERM. Each is written to DIR/made.list before it is made; after a kill -9\n"
    "the next run with the same --out removes what that list names, each only if it is still what\n"
    "was made, and nothing else.\n"
    "Exit status: 0 every phase succeeded; 1 some phase failed (see results.json); 2 usage error or\n"
    "cannot run (not root, no filesystem tools); 3 stopped by a signal (results so far are saved).\n";

static const char report_help[] =
    "Usage: myriad report RESULTS.json... -o report.html\n"
    "Render the report of myriad lifecycle again from its results.json, or put several runs side by\n"
    "side (each filesystem of each run is one series).\n"
    "\n"
    "  -o, --output FILE        the HTML page to write (default report.html)\n"
    "      --project N          project to N files (default: the first run's --project)\n"
    "      --help               this text\n";

struct fs_kind {
	const char *name, *mkfs, *checker, *package;
};

static const struct fs_kind fs_kinds[] = {
    {"ext4", "mkfs.ext4", "e2fsck", "e2fsprogs"},
    {"xfs", "mkfs.xfs", "xfs_repair", "xfsprogs"},
    {"btrfs", "mkfs.btrfs", "btrfs", "btrfs-progs"},
    {"ext3", "mkfs.ext3", "e2fsck", "e2fsprogs"},
};

struct lc {
	/* options */
	uint64_t files, project, size_max;
	const char *size, *image_dir, *device, *out;
	bool dry_run, yes;
	uint64_t *scales;
	size_t nscales;
	const struct fs_kind *fs[ARRAY_LEN(fs_kinds)];
	size_t nfs;
	char *mkfs_opts[ARRAY_LEN(fs_kinds)];
	/* state */
	struct lc_results *res;
	char results_path[4096], report_path[4096], logdir[4096];
	bool failed;
	int record; /* OUT/made.list: what the run made and has not yet removed */
	/* the cycle being run */
	char img[4096], mnt[4096], dev[256];
	bool have_loop;
};

/* ---- small helpers ---- */

static char *find_tool(const char *name)
{
	const char *path = getenv("PATH");
	struct sbuf p = {0};
	sbuf_printf(&p, "%s:/usr/sbin:/sbin:/usr/bin:/bin:/usr/local/sbin:/usr/local/bin", path ? path : "");
	sbuf_addc(&p, 0);
	char *found = NULL;
	for (char *save, *d = strtok_r(p.data, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		char f[4096];
		snprintf(f, sizeof(f), "%s/%s", d, name);
		if (access(f, X_OK) == 0)
			found = xstrdup(f);
	}
	sbuf_free(&p);
	return found;
}

static char *now_iso(void)
{
	char b[64];
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(b, sizeof(b), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return xstrdup(b);
}

static void on_child(int sig)
{
	(void)sig;
	sig_wake();
}

/* Run argv (or fn, when argv is NULL) in a child process in its own process group, its output
 * appended to log (NULL: discarded). Returns the wait status (-1: could not start); wall time and
 * peak RSS through the pointers. On a stop request the child's group gets SIGTERM, then SIGKILL. */
static int run_child(char *const argv[], int (*fn)(void), const char *log, double *wall_s, double *rss_kib)
{
	uint64_t t0 = now_ns();
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		setpgid(0, 0);
		/* Killed with us, even by kill -9: no phase outlives the run that times it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		int in = open("/dev/null", O_RDONLY);
		int out = log ? open(log, O_WRONLY | O_CREAT | O_APPEND, 0644) : open("/dev/null", O_WRONLY);
		if (in >= 0)
			dup2(in, 0);
		if (out >= 0) {
			dup2(out, 1);
			dup2(out, 2);
		}
		if (!argv)
			_exit(fn());
		execv(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	int st = 0;
	struct rusage ru;
	memset(&ru, 0, sizeof(ru));
	bool termed = false, killed = false;
	uint64_t term_at = 0;
	for (;;) {
		pid_t w = wait4(pid, &st, WNOHANG, &ru);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			break;
		if (sig_stop_requested()) {
			if (!termed) {
				kill(-pid, SIGTERM);
				termed = true;
				term_at = now_ns();
			} else if (!killed && now_ns() - term_at > 5000000000ull) {
				kill(-pid, SIGKILL);
				killed = true;
			}
			usleep(5000);
		} else {
			sig_wait(500);
		}
	}
	if (wall_s)
		*wall_s = (now_ns() - t0) / 1e9;
	if (rss_kib)
		*rss_kib = (double)ru.ru_maxrss;
	return st;
}

/* The first line of a command's output (for versions), or NULL. */
static char *first_line(char *const argv[])
{
	char tmp[] = "/tmp/myriad-lifecycle-ver.XXXXXX";
	int fd = mkstemp(tmp);
	if (fd < 0)
		return NULL;
	close(fd);
	run_child(argv, NULL, tmp, NULL, NULL);
	FILE *f = fopen(tmp, "r");
	char line[512] = "";
	char *r = NULL;
	if (f) {
		if (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = 0;
			r = xstrdup(line);
		}
		fclose(f);
	}
	unlink(tmp);
	return r;
}

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

/* Tear down what the current cycle made, from the record. Safe to call at any point, more than once. */
static void cycle_cleanup(struct lc *x)
{
	lc_record_clean(x->record, false);
	x->have_loop = false;
}

/* ---- results ---- */

static void save(struct lc *x)
{
	free(x->res->updated);
	x->res->updated = now_iso();
	struct sbuf b = {0};
	lc_results_json(x->res, &b);
	if (write_file_atomic(x->results_path, b.data, b.len) != 0)
		warnx_("%s: %s", x->results_path, strerror(errno));
	sbuf_free(&b);
}

static void add_tool(struct lc_results *r, const char *key, char *const argv[])
{
	for (size_t i = 0; i < r->ntools; i++)
		if (!strcmp(r->tools[i].k, key))
			return;
	char *v = argv[0] ? first_line(argv) : NULL;
	r->tools = xrealloc(r->tools, (r->ntools + 1) * sizeof(*r->tools));
	r->tools[r->ntools++] = (struct lc_kv){xstrdup(key), v ? v : xstrdup("(not installed)")};
}

static void host_info(struct lc *x)
{
	struct lc_results *r = x->res;
	struct utsname u;
	if (uname(&u) == 0) {
		struct sbuf b = {0};
		sbuf_printf(&b, "%s %s %s %s", u.sysname, u.release, u.version, u.machine);
		sbuf_addc(&b, 0);
		free(r->kernel);
		r->kernel = b.data;
	}
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[1024];
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			char *v = strchr(line, ':') + 1;
			while (*v == ' ')
				v++;
			v[strcspn(v, "\n")] = 0;
			free(r->cpu_model);
			r->cpu_model = xstrdup(v);
			break;
		}
	if (f)
		fclose(f);
	r->cpus = cpu_count();
	f = fopen("/proc/meminfo", "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %lf", &r->mem_kib) == 1)
			break;
	if (f)
		fclose(f);
	for (size_t i = 0; i < x->nfs; i++) {
		const struct fs_kind *k = x->fs[i];
		char *m = find_tool(k->mkfs), *c = find_tool(k->checker);
		char *a1[] = {m, "-V", NULL};
		add_tool(r, k->mkfs, a1);
		char *a2[] = {c, strcmp(k->checker, "btrfs") ? "-V" : "--version", NULL};
		add_tool(r, k->checker, a2);
		free(m);
		free(c);
	}
	const char *others[] = {"losetup", "mount", "gnuplot"};
	for (size_t i = 0; i < ARRAY_LEN(others); i++) {
		char *t = find_tool(others[i]);
		char *a[] = {t, "--version", NULL};
		add_tool(r, others[i], a);
		free(t);
	}
}

/* ---- phases ---- */

static void print_phase(const struct lc_cycle *c, int id)
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
	fflush(stdout);
}

static void skip_phase(struct lc *x, struct lc_cycle *c, int id, const char *why)
{
	struct lc_phase *p = &c->ph[id];
	p->status = LC_SKIPPED;
	free(p->error);
	p->error = xstrdup(why);
	print_phase(c, id);
	save(x);
}

static void log_path(struct lc *x, const struct lc_cycle *c, int id, char *buf, size_t n, const char *ext)
{
	snprintf(buf, n, "%s/%s-%llu-%s.%s", x->logdir, c->fs, (unsigned long long)c->files, lc_phases[id].name, ext);
}

/* Run one phase: argv (or fn) in a child; record wall time, peak RSS, status. true when it
 * succeeded (exit 0, or ok_exit when that is >= 0). */
static bool phase(struct lc *x, struct lc_cycle *c, int id, char *const argv[], int (*fn)(void), int ok_exit)
{
	struct lc_phase *p = &c->ph[id];
	char log[4400];
	log_path(x, c, id, log, sizeof(log), "log");
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
	int st = run_child(argv, fn, log, &p->wall_s, &p->peak_rss_kib);
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

static bool myriad_phase(struct lc *x, struct lc_cycle *c, int id, const char *sub, const char *const *extra,
			 const char *rate_key, const char *unit)
{
	char json[4400], tree[4200];
	log_path(x, c, id, json, sizeof(json), "json");
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
	bool ok = phase(x, c, id, argv, NULL, -1);
	read_myriad_json(&c->ph[id], json, rate_key, unit);
	return ok;
}

static int drop_caches(void)
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

/* Split s at spaces into argv (appended at *n). */
static void split_opts(char *s, char **argv, int *n, int max)
{
	for (char *save, *t = strtok_r(s, " \t", &save); t && *n < max; t = strtok_r(NULL, " \t", &save))
		argv[(*n)++] = t;
}

static bool done(void) { return sig_stop_requested(); }

/* Make IMAGE_DIR/myriad-lifecycle-FS-N-PID[-K].img (a file: its fd) or .mnt (a directory: 0)
 * under a name nobody uses, written to the record before it is made and with its identity after.
 * -1 with errno when it cannot be made or recorded. */
static int make_recorded(struct lc *x, bool dir, const char *fs, uint64_t files, char *path, size_t n)
{
	static const struct stat nothing; /* identity 0:0, which no file has: "not ours after all" */
	const char *kind = dir ? "dir" : "image";
	for (int k = 0; k < 100; k++) {
		char sfx[16] = "";
		struct stat st;
		if (k)
			snprintf(sfx, sizeof(sfx), "-%d", k);
		snprintf(path, n, "%s/" PREFIX "%s-%llu-%d%s.%s", x->image_dir, fs, (unsigned long long)files,
			 (int)getpid(), sfx, dir ? "mnt" : "img");
		if (lstat(path, &st) == 0)
			continue;
		if (lc_record_add(x->record, kind, path, NULL, NULL) != 0)
			return -1;
		int fd = dir ? mkdir(path, 0755) : open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0) {
			int e = errno;
			lc_record_add(x->record, kind, path, NULL, &nothing);
			if (e == EEXIST)
				continue;
			errno = e;
			return -1;
		}
		if ((dir ? lstat(path, &st) : fstat(fd, &st)) != 0 || lc_record_add(x->record, kind, path, NULL, &st) != 0) {
			int e = errno;
			if (!dir)
				close(fd);
			dir ? rmdir(path) : unlink(path);
			errno = e;
			return -1;
		}
		return dir ? 0 : fd;
	}
	errno = EEXIST;
	return -1;
}

/* Attach x->img (identity img) to a free loop device with losetup, the device written to the record
 * first. Another process may take the same free device first: then another one is tried. */
static bool attach_recorded(struct lc *x, struct lc_cycle *c, const struct stat *img)
{
	char *losetup = find_tool("losetup");
	bool ok = false, failed_before = x->failed;
	/* A retry that works leaves no failure behind. */
	for (int tries = 0; tries < 4 && !ok && !done(); tries++) {
		int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
		int nr = ctl >= 0 ? ioctl(ctl, LOOP_CTL_GET_FREE) : -1;
		int e = errno;
		if (ctl >= 0)
			close(ctl);
		snprintf(x->dev, sizeof(x->dev), "/dev/loop%d", nr);
		if (nr < 0 || lc_record_add(x->record, "loop", x->dev, x->img, img) != 0) {
			if (nr >= 0)
				e = errno;
			struct lc_phase *p = &c->ph[PH_ATTACH];
			p->status = LC_FAILED;
			free(p->error);
			p->error = xstrdup(nr < 0 ? "no free loop device (/dev/loop-control)" : "cannot write the record");
			warnx_("%s: %s", p->error, strerror(e));
			x->failed = true;
			break;
		}
		char *av[] = {losetup ? losetup : "/sbin/losetup", x->dev, x->img, NULL};
		x->failed = failed_before;
		ok = phase(x, c, PH_ATTACH, av, NULL, -1);
	}
	free(losetup);
	return ok;
}

/* One (filesystem, scale) cycle. */
static void run_cycle(struct lc *x, const struct fs_kind *k, uint64_t files)
{
	struct lc_results *r = x->res;
	r->cycles = xrealloc(r->cycles, (r->ncycles + 1) * sizeof(*r->cycles));
	struct lc_cycle *c = &r->cycles[r->ncycles++];
	memset(c, 0, sizeof(*c));
	c->fs = xstrdup(k->name);
	c->files = files;
	c->lazy_itable_init = -1;
	for (int i = 0; i < PH_N; i++) {
		c->ph[i].exit_status = -1;
		c->ph[i].wall_s = c->ph[i].peak_rss_kib = c->ph[i].rate = c->ph[i].min_mem_kib = NAN;
	}
	char b[32];
	printf("== %s, %s %s\n", k->name, fmt_count(b, files), plural(files, "file", "files"));
	fflush(stdout);

	if (make_recorded(x, true, k->name, files, x->mnt, sizeof(x->mnt)) != 0) {
		warnx_("%s: %s", x->mnt, strerror(errno));
		skip_phase(x, c, PH_ATTACH, "could not make the mount point");
		x->failed = true;
		goto out;
	}
	uint64_t inodes = files + files / 10 + 16384;
	if (x->device) {
		snprintf(x->dev, sizeof(x->dev), "%s", x->device);
		c->device = xstrdup(x->device);
	} else {
		/* Room for every file's blocks, inodes and directories, twice over, at least 2 GiB: the
		 * image is sparse, so only what the filesystem writes takes space. */
		uint64_t per = (x->size_max + 4095) / 4096 * 4096 + 2048;
		uint64_t bytes = files * per * 2 + (1ull << 30);
		if (bytes < (2ull << 30))
			bytes = 2ull << 30;
		bytes = (bytes + (1 << 20) - 1) & ~((uint64_t)(1 << 20) - 1);
		c->image_bytes = (double)bytes;
		struct stat id;
		int fd = make_recorded(x, false, k->name, files, x->img, sizeof(x->img));
		if (fd < 0 || fstat(fd, &id) != 0 || ftruncate(fd, (off_t)bytes) != 0) {
			warnx_("%s: %s", x->img, strerror(errno));
			if (fd >= 0)
				close(fd);
			skip_phase(x, c, PH_ATTACH, "could not create the image");
			x->failed = true;
			goto out;
		}
		close(fd);
		c->image = xstrdup(x->img);
		if (attach_recorded(x, c, &id)) {
			x->have_loop = true;
			c->device = xstrdup(x->dev);
		}
		print_phase(c, PH_ATTACH);
		save(x);
		if (!x->have_loop || done())
			goto out;
	}

	/* mkfs; a --device is checked again before each (a cycle's own mount of it must be gone too). */
	char why[1024];
	if (x->device && lc_device_refusal(x->device, why, sizeof(why))) {
		struct lc_phase *p = &c->ph[PH_MKFS];
		p->status = LC_FAILED;
		p->error = xstrdup(why);
		x->failed = true;
		print_phase(c, PH_MKFS);
		save(x);
		goto out;
	}
	char *mkfs = find_tool(k->mkfs), *checker = find_tool(k->checker);
	char *mav[64], inodes_s[32], *extra = x->mkfs_opts[k - fs_kinds] ? xstrdup(x->mkfs_opts[k - fs_kinds]) : NULL;
	int n = 0;
	mav[n++] = mkfs;
	bool ext = !strncmp(k->name, "ext", 3);
	mav[n++] = ext ? "-F" : "-f";
	mav[n++] = "-q";
	if (ext) {
		snprintf(inodes_s, sizeof(inodes_s), "%llu", (unsigned long long)inodes);
		mav[n++] = "-N";
		mav[n++] = inodes_s;
	}
	if (extra)
		split_opts(extra, mav, &n, 60);
	mav[n++] = x->dev;
	mav[n] = NULL;
	struct sbuf o = {0};
	for (int i = 1; i < n - 1; i++)
		sbuf_printf(&o, "%s%s", i > 1 ? " " : "", mav[i]);
	sbuf_addc(&o, 0);
	c->mkfs_options = o.data;
	if (!strcmp(k->name, "ext4"))
		c->lazy_itable_init = strstr(c->mkfs_options, "lazy_itable_init=0")
					  ? 0
					  : access("/sys/fs/ext4/features/lazy_itable_init", F_OK) == 0;
	bool ok = phase(x, c, PH_MKFS, mav, NULL, -1);
	print_phase(c, PH_MKFS);
	save(x);
	free(extra);
	if (!ok || done())
		goto out_tools;

	char *mount = find_tool("mount"), *umount = find_tool("umount");
	char *mountav[] = {mount, "-t", (char *)k->name, x->dev, x->mnt, NULL};
	char *umountav[] = {umount, x->mnt, NULL};
	ok = lc_record_add(x->record, "mount", x->dev, x->mnt, NULL) == 0 && phase(x, c, PH_MOUNT, mountav, NULL, -1);
	print_phase(c, PH_MOUNT);
	save(x);
	if (!ok || done())
		goto out_mount;

	char nbuf[32];
	snprintf(nbuf, sizeof(nbuf), "%llu", (unsigned long long)files);
	const char *fill_extra[] = {"-n", nbuf, "-s", x->size, NULL};
	myriad_phase(x, c, PH_FILL, "fill", fill_extra, "files_per_s", "files/s");
	print_phase(c, PH_FILL);
	struct statvfs sv;
	if (statvfs(x->mnt, &sv) == 0) {
		c->have_usage = true;
		c->bytes_total = (double)sv.f_blocks * sv.f_frsize;
		c->bytes_used = (double)(sv.f_blocks - sv.f_bfree) * sv.f_frsize;
		c->inodes_total = (double)sv.f_files;
		c->inodes_used = (double)(sv.f_files - sv.f_ffree);
	}
	save(x);
	if (done())
		goto out_mount;

	phase(x, c, PH_DROP1, NULL, drop_caches, -1);
	print_phase(c, PH_DROP1);
	save(x);
	if (done())
		goto out_mount;
	myriad_phase(x, c, PH_WALK, "walk", NULL, "entries_per_s", "entries/s");
	print_phase(c, PH_WALK);
	save(x);
	if (done())
		goto out_mount;
	phase(x, c, PH_DROP2, NULL, drop_caches, -1);
	print_phase(c, PH_DROP2);
	save(x);
	if (done())
		goto out_mount;
	const char *stat_extra[] = {"--stat", NULL};
	myriad_phase(x, c, PH_WALK_STAT, "walk", stat_extra, "entries_per_s", "entries/s");
	print_phase(c, PH_WALK_STAT);
	save(x);
	if (done())
		goto out_mount;

	ok = phase(x, c, PH_UMOUNT, umountav, NULL, -1);
	print_phase(c, PH_UMOUNT);
	save(x);
	if (done())
		goto out_mount;
	if (!ok) {
		skip_phase(x, c, PH_CHECK, "the filesystem could not be unmounted");
		lc_unmount(x->mnt, x->dev);
	} else {
		char *cav[8];
		int cn = 0;
		cav[cn++] = checker;
		if (!strcmp(k->checker, "e2fsck")) {
			cav[cn++] = "-fn";
		} else if (!strcmp(k->checker, "xfs_repair")) {
			cav[cn++] = "-n";
		} else {
			cav[cn++] = "check";
			cav[cn++] = "--readonly";
		}
		cav[cn++] = x->dev;
		cav[cn] = NULL;
		phase(x, c, PH_CHECK, cav, NULL, -1);
		print_phase(c, PH_CHECK);
		save(x);
		if (done())
			goto out_mount;
		if (!strcmp(k->checker, "xfs_repair")) {
			/* With a 1 MB cap xfs_repair refuses and states the memory it needs. */
			char *mav2[] = {checker, "-n", "-m", "1", x->dev, NULL};
			phase(x, c, PH_CHECK_MINMEM, mav2, NULL, 1);
			struct lc_phase *p = &c->ph[PH_CHECK_MINMEM];
			char log[4400], line[1024];
			log_path(x, c, PH_CHECK_MINMEM, log, sizeof(log), "log");
			FILE *f = fopen(log, "r");
			double mb = NAN;
			while (f && fgets(line, sizeof(line), f)) {
				char *a = strstr(line, "at least ");
				if (a && isdigit((unsigned char)a[9]))
					mb = atof(a + 9);
			}
			if (f)
				fclose(f);
			if (isfinite(mb)) {
				p->min_mem_kib = mb * 1024;
				p->status = LC_OK;
				free(p->error);
				p->error = NULL;
			} else if (p->status == LC_OK) {
				p->status = LC_FAILED;
				p->error = xstrdup("xfs_repair did not state a minimum");
				x->failed = true;
			}
			print_phase(c, PH_CHECK_MINMEM);
			save(x);
			if (done())
				goto out_mount;
		}
	}

	ok = lc_record_add(x->record, "mount", x->dev, x->mnt, NULL) == 0 && phase(x, c, PH_REMOUNT, mountav, NULL, -1);
	print_phase(c, PH_REMOUNT);
	save(x);
	if (done())
		goto out_mount;
	if (!ok) {
		skip_phase(x, c, PH_VERIFY, "the filesystem could not be mounted again");
		skip_phase(x, c, PH_RM, "the filesystem could not be mounted again");
		skip_phase(x, c, PH_UMOUNT2, "not mounted");
	} else {
		const char *v_extra[] = {"--quick", NULL};
		myriad_phase(x, c, PH_VERIFY, "verify", v_extra, "files_per_s", "files/s");
		print_phase(c, PH_VERIFY);
		save(x);
		if (done())
			goto out_mount;
		myriad_phase(x, c, PH_RM, "rm", NULL, "entries_per_s", "entries/s");
		print_phase(c, PH_RM);
		save(x);
		if (done())
			goto out_mount;
		phase(x, c, PH_UMOUNT2, umountav, NULL, -1);
		print_phase(c, PH_UMOUNT2);
		save(x);
		if (done())
			goto out_mount;
	}
	lc_unmount(x->mnt, x->dev);
	if (x->have_loop) {
		char *losetup = find_tool("losetup");
		char *dav[] = {losetup ? losetup : "/sbin/losetup", "-d", x->dev, NULL};
		if (phase(x, c, PH_DETACH, dav, NULL, -1))
			x->have_loop = false;
		free(losetup);
		print_phase(c, PH_DETACH);
	}
	c->complete = !done();
	save(x);
out_mount:
	free(mount);
	free(umount);
out_tools:
	free(mkfs);
	free(checker);
out:
	cycle_cleanup(x);
	x->mnt[0] = 0;
	if (c->complete)
		save(x);
}

/* ---- options ---- */

static const struct fs_kind *fs_by_name(const char *name)
{
	for (size_t i = 0; i < ARRAY_LEN(fs_kinds); i++)
		if (!strcmp(fs_kinds[i].name, name))
			return &fs_kinds[i];
	return NULL;
}

static bool fs_installed(const struct fs_kind *k)
{
	char *m = find_tool(k->mkfs), *c = find_tool(k->checker);
	bool ok = m && c;
	free(m);
	free(c);
	return ok;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int mkdir_p(const char *path)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			if (mkdir(p, 0755) != 0 && errno != EEXIST)
				return -1;
			*s = '/';
		}
	return mkdir(p, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

enum { O_FS = OPT_CMD_BASE, O_SCALES, O_PROJECT, O_IMAGE_DIR, O_DEVICE, O_YES, O_DRY_RUN, O_MKFS_OPTS, O_OUT };

struct lc_opts {
	struct lc x;
	const char *fs_list;
	int argc;
};

static int lc_parse_lists(struct lc_opts *o, const char *scales);

static int lifecycle_parse(int argc, char **argv, void *opts)
{
	static const struct option longopts[] = {
	    {"fs", required_argument, 0, O_FS},
	    {"files", required_argument, 0, 'n'},
	    {"scales", required_argument, 0, O_SCALES},
	    {"project", required_argument, 0, O_PROJECT},
	    {"size", required_argument, 0, 's'},
	    {"image-dir", required_argument, 0, O_IMAGE_DIR},
	    {"device", required_argument, 0, O_DEVICE},
	    {"yes", no_argument, 0, O_YES},
	    {"dry-run", no_argument, 0, O_DRY_RUN},
	    {"mkfs-opts", required_argument, 0, O_MKFS_OPTS},
	    {"out", required_argument, 0, O_OUT},
	    {"help", no_argument, 0, OPT_HELP},
	    {0, 0, 0, 0},
	};
	struct lc_opts *o = opts;
	struct lc *xp = &o->x;
	*xp = (struct lc){.files = DEFAULT_FILES, .project = 1000000000, .size = "0", .image_dir = "/var/tmp",
			  .out = "lifecycle-out"};
	o->argc = argc;
	const char *scales = NULL;
	int opt;
	while ((opt = getopt_long(argc, argv, "n:s:", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_HELP: fputs(lifecycle_help, stdout); return EXIT_OK;
		case O_FS: o->fs_list = optarg; break;
		case 'n':
			if (!parse_count(optarg, &xp->files) || xp->files == 0 || xp->files > LC_FILES_MAX)
				return usage_error("--files: '%s' is not a count from 1 to 10^15 (fill's limit)", optarg);
			break;
		case O_SCALES: scales = optarg; break;
		case O_PROJECT:
			if (!parse_count(optarg, &xp->project) || xp->project == 0)
				return usage_error("--project: '%s' is not a count from 1 to 2^64-1", optarg);
			break;
		case 's': {
			uint64_t lo;
			xp->size = optarg;
			if (!parse_size_range(optarg, &lo, &xp->size_max))
				return usage_error("--size: '%s' is not a size from 0 to 16E-1 or a range LO-HI with LO <= HI "
						   "(e.g. 1k-64k)",
						   optarg);
			break;
		}
		case O_IMAGE_DIR: xp->image_dir = optarg; break;
		case O_DEVICE: xp->device = optarg; break;
		case O_YES: xp->yes = true; break;
		case O_DRY_RUN: xp->dry_run = true; break;
		case O_MKFS_OPTS: {
			const char *eq = strchr(optarg, '=');
			char name[32];
			if (!eq || (size_t)(eq - optarg) >= sizeof(name))
				return usage_error("--mkfs-opts: '%s' is not FS=OPTIONS", optarg);
			snprintf(name, sizeof(name), "%.*s", (int)(eq - optarg), optarg);
			const struct fs_kind *k = fs_by_name(name);
			if (!k)
				return usage_error("--mkfs-opts: unknown filesystem '%s' (ext4, xfs, btrfs, ext3)", name);
			xp->mkfs_opts[k - fs_kinds] = (char *)eq + 1;
			break;
		}
		case O_OUT: xp->out = optarg; break;
		default: return usage_hint(); /* getopt said what is wrong */
		}
	}
	if (optind < argc)
		return usage_error("unexpected operand '%s'", argv[optind]);
	if (xp->device && !xp->yes && !xp->dry_run)
		return usage_error("--device %s destroys everything on it: add --yes to confirm", xp->device);
	return lc_parse_lists(o, scales);
}

static void lifecycle_opts_free(void *opts)
{
	struct lc_opts *o = opts;
	free(o->x.scales);
}

/* --scales and --fs, checked and without duplicates. OPTS_RUN or EXIT_USAGE. */
static int lc_parse_lists(struct lc_opts *o, const char *scales)
{
	struct lc *xp = &o->x;
	const char *fs_list = o->fs_list;
	/* Scales. */
	if (scales) {
		char *s = xstrdup(scales);
		for (char *save, *t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			uint64_t v;
			if (!parse_count(t, &v) || v == 0 || v > LC_FILES_MAX) {
				usage_error("--scales: '%s' is not a count from 1 to 10^15 (fill's limit)", t);
				free(s);
				return EXIT_USAGE;
			}
			xp->scales = xrealloc(xp->scales, (xp->nscales + 1) * sizeof(uint64_t));
			xp->scales[xp->nscales++] = v;
		}
		free(s);
		if (!xp->nscales)
			return usage_error("--scales: no file counts given");
	} else {
		uint64_t d[3] = {xp->files / 10, xp->files / 3, xp->files};
		xp->scales = xcalloc(3, sizeof(uint64_t));
		for (int i = 0; i < 3; i++)
			if (d[i] > 0)
				xp->scales[xp->nscales++] = d[i];
	}
	qsort(xp->scales, xp->nscales, sizeof(uint64_t), cmp_u64);
	size_t u = 0;
	for (size_t i = 0; i < xp->nscales; i++)
		if (!u || xp->scales[u - 1] != xp->scales[i])
			xp->scales[u++] = xp->scales[i];
	xp->nscales = u;
	/* The image of the largest scale (room for every file twice, as lifecycle_cycle makes it) must
	 * be a size a file can have. */
	uint64_t per = xp->size_max / 4096 * 4096 + 4096 + 2048, top = xp->scales[xp->nscales - 1];
	if (!xp->device && (xp->size_max > INT64_MAX / 2 || top > (INT64_MAX - (1ull << 31)) / 2 / per))
		return usage_error("--files/--scales %llu with --size %s: the image would be larger than a file can be "
				   "(8 EiB): use fewer files or smaller ones",
				   (unsigned long long)top, xp->size);
	/* Filesystems. */
	if (fs_list) {
		char *s = xstrdup(fs_list);
		for (char *save, *t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			const struct fs_kind *k = fs_by_name(t);
			if (!k) {
				usage_error("--fs: unknown filesystem '%s' (ext4, xfs, btrfs, ext3)", t);
				free(s);
				return EXIT_USAGE;
			}
			bool dup = false;
			for (size_t i = 0; i < xp->nfs; i++)
				dup |= xp->fs[i] == k;
			if (!dup)
				xp->fs[xp->nfs++] = k;
		}
		free(s);
	}
	return OPTS_RUN;
}

static int lifecycle_run(void *opts)
{
	struct lc_opts *o = opts;
	struct lc x = o->x;
	const char *fs_list = o->fs_list;
	int argc = o->argc;
	if (x.device) {
		struct stat st;
		if (stat(x.device, &st) != 0)
			return usage_error("--device %s: %s", x.device, strerror(errno));
		if (!S_ISBLK(st.st_mode))
			return usage_error("--device %s: not a block device", x.device);
		/* Before anything else, and before every mkfs again. */
		char why[1024];
		if (lc_device_refusal(x.device, why, sizeof(why)))
			return usage_error("refusing --device %s: %s", x.device, why);
	}
	if (geteuid() != 0) {
		warnx_("needs root: it makes filesystems on loop devices, mounts them and drops the page cache. "
		       "Run it as root, e.g.: sudo myriad lifecycle%s",
		       argc > 1 ? " [same options]" : "");
		return EXIT_USAGE;
	}
	if (!fs_list)
		for (size_t i = 0; i < ARRAY_LEN(fs_kinds); i++)
			x.fs[x.nfs++] = &fs_kinds[i];
	size_t keep = 0;
	for (size_t i = 0; i < x.nfs; i++) {
		if (fs_installed(x.fs[i])) {
			x.fs[keep++] = x.fs[i];
			continue;
		}
		warnx_("skipping %s: %s or %s is not installed (Debian package %s: apt-get install %s)",
		       x.fs[i]->name, x.fs[i]->mkfs, x.fs[i]->checker, x.fs[i]->package, x.fs[i]->package);
	}
	x.nfs = keep;
	if (!x.nfs) {
		warnx_("no filesystem to run: install e2fsprogs, xfsprogs or btrfs-progs");
		return EXIT_USAGE;
	}
	if (!find_tool("losetup") && !x.device) {
		warnx_("losetup is not installed (Debian package util-linux)");
		return EXIT_USAGE;
	}
	struct stat st;
	if (stat(x.image_dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return usage_error("--image-dir %s: not a directory", x.image_dir);
	if (x.dry_run) {
		printf("myriad lifecycle --dry-run: every check passed; would run %zu filesystem(s) x %zu scale(s) ",
		       x.nfs, x.nscales);
		if (x.device)
			printf("on %s (destroying its contents)", x.device);
		else
			printf("on sparse images %s/" PREFIX "FS-N-%d.img", x.image_dir, (int)getpid());
		printf("; results in %s\n", x.out);
		return EXIT_OK;
	}
	if (x.device && !x.yes) /* never reached (the parser asks for it): a second lock on the device */
		return usage_error("--device %s destroys everything on it: add --yes to confirm", x.device);
	if (mkdir_p(x.out) != 0)
		return usage_error("--out %s: %s", x.out, strerror(errno));
	snprintf(x.results_path, sizeof(x.results_path), "%s/results.json", x.out);
	snprintf(x.report_path, sizeof(x.report_path), "%s/report.html", x.out);
	snprintf(x.logdir, sizeof(x.logdir), "%s/logs", x.out);
	mkdir(x.logdir, 0755);

	/* One lifecycle per --out: its start-up clean-up must not take a running run's devices. */
	int lock = open(x.out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) != 0) {
		warnx_("another myriad lifecycle is running with --out %s (it is locked)", x.out);
		if (lock >= 0)
			close(lock);
		return EXIT_USAGE;
	}
	char record_path[4200];
	snprintf(record_path, sizeof(record_path), "%s/" LC_RECORD_NAME, x.out);
	x.record = lc_record_open(x.out);
	if (x.record < 0) {
		close(lock);
		return usage_error("%s: %s", record_path, strerror(errno));
	}
	sig_install();
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_child;
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	if (!lc_record_clean(x.record, true))
		warnx_("some of what an earlier run made is still there: it stays in %s for the next run", record_path);

	/* Earlier results in --out: keep the complete cycles, run the rest. */
	if (access(x.results_path, F_OK) == 0) {
		char err[256];
		struct lc_results *old = lc_load(x.results_path, err, sizeof(err));
		if (!old) {
			warnx_("%s: %s: starting afresh (the old file is kept as results.json.bad)", x.results_path, err);
			char bad[4200];
			snprintf(bad, sizeof(bad), "%s.bad", x.results_path);
			rename(x.results_path, bad);
		} else {
			size_t k = 0;
			for (size_t i = 0; i < old->ncycles; i++) {
				if (old->cycles[i].complete)
					old->cycles[k++] = old->cycles[i];
				else
					lc_cycle_clear(&old->cycles[i]);
			}
			old->ncycles = k;
			x.res = old;
		}
	}
	if (!x.res) {
		x.res = xcalloc(1, sizeof(*x.res));
		x.res->started = now_iso();
	}
	struct lc_results *r = x.res;
	r->complete = false;
	r->files = (double)x.files;
	r->project = (double)x.project;
	r->size = (double)x.size_max;
	free(r->image_dir);
	r->image_dir = x.device ? NULL : xstrdup(x.image_dir);
	free(r->device);
	r->device = x.device ? xstrdup(x.device) : NULL;
	free(r->scales);
	r->scales = xcalloc(x.nscales, sizeof(uint64_t));
	memcpy(r->scales, x.scales, x.nscales * sizeof(uint64_t));
	r->nscales = x.nscales;
	char *gp = find_tool("gnuplot");
	r->gnuplot = gp != NULL;
	free(gp);
	host_info(&x);
	save(&x);
	printf("myriad lifecycle: %zu filesystem(s) x %zu scale(s); results in %s\n", x.nfs, x.nscales, x.out);
	fflush(stdout);

	for (size_t f = 0; f < x.nfs && !done(); f++)
		for (size_t s = 0; s < x.nscales && !done(); s++) {
			bool have = false;
			for (size_t i = 0; i < r->ncycles; i++)
				have |= r->cycles[i].complete && !strcmp(r->cycles[i].fs, x.fs[f]->name) &&
					r->cycles[i].files == x.scales[s];
			if (have) {
				char b[32];
				printf("== %s, %s files: already complete in %s\n", x.fs[f]->name, fmt_count(b, x.scales[s]),
				       x.results_path);
				continue;
			}
			run_cycle(&x, x.fs[f], x.scales[s]);
		}
	if (lc_record_clean(x.record, false))
		unlink(record_path);
	else
		warnx_("could not remove everything this run made: it is listed in %s, for the next run", record_path);
	close(x.record);
	r->complete = !done();
	save(&x);
	lc_render_html(&r, 1, x.report_path);
	int rc = EXIT_OK;
	if (done()) {
		warnx_("stopped by signal %d: every loop device, mount and image is removed; results so far are in %s "
		       "(run the same command to run the remaining cycles)",
		       sig_stop_signal(), x.results_path);
		rc = EXIT_STOPPED;
	} else {
		for (size_t i = 0; i < r->ncycles; i++)
			for (int k = 0; k < PH_N; k++)
				if (r->cycles[i].ph[k].status == LC_FAILED)
					x.failed = true;
		printf("results: %s\nreport:  %s\n", x.results_path, x.report_path);
		if (x.failed) {
			warnx_("some phases failed: see the errors in %s and the logs in %s", x.results_path, x.logdir);
			rc = EXIT_FAILED;
		}
	}
	lc_free(r);
	flock(lock, LOCK_UN);
	close(lock);
	return rc;
}

struct report_opts {
	const char *out;
	uint64_t project;
	char **files;
	size_t nfiles;
};

static int report_parse(int argc, char **argv, void *opts)
{
	static const struct option longopts[] = {
	    {"output", required_argument, 0, 'o'},
	    {"project", required_argument, 0, O_PROJECT},
	    {"help", no_argument, 0, OPT_HELP},
	    {0, 0, 0, 0},
	};
	struct report_opts *o = opts;
	o->out = "report.html";
	int opt;
	while ((opt = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_HELP: fputs(report_help, stdout); return EXIT_OK;
		case 'o': o->out = optarg; break;
		case O_PROJECT:
			if (!parse_count(optarg, &o->project) || o->project == 0)
				return usage_error("--project: '%s' is not a count from 1 to 2^64-1", optarg);
			break;
		default: return usage_hint(); /* getopt said what is wrong */
		}
	}
	if (optind >= argc)
		return usage_error("missing operand: the results.json files of myriad lifecycle");
	o->files = argv + optind;
	o->nfiles = argc - optind;
	return OPTS_RUN;
}

static void report_opts_free(void *opts) { (void)opts; }

static int report_run(void *opts)
{
	struct report_opts *o = opts;
	const char *out = o->out;
	uint64_t project = o->project;
	size_t n = o->nfiles;
	struct lc_results **runs = xcalloc(n, sizeof(*runs));
	for (size_t i = 0; i < n; i++) {
		char err[256];
		runs[i] = lc_load(o->files[i], err, sizeof(err));
		if (!runs[i]) {
			for (size_t k = 0; k < i; k++)
				lc_free(runs[k]);
			free(runs);
			return usage_error("%s: %s", o->files[i], err);
		}
		if (project)
			runs[i]->project = (double)project;
	}
	int rc = lc_render_html(runs, n, out) == 0 ? EXIT_OK : EXIT_FAILED;
	if (rc == EXIT_OK)
		printf("report: %s\n", out);
	for (size_t i = 0; i < n; i++)
		lc_free(runs[i]);
	free(runs);
	return rc;
}

const struct command cmd_lifecycle = {"lifecycle",
				      "re-run the billion-file experiment: mkfs, fill, walk, fsck, rm; report",
				      sizeof(struct lc_opts), lifecycle_parse, lifecycle_run, lifecycle_opts_free};
const struct command cmd_report = {"report", "re-render lifecycle results as HTML, or compare several runs",
				   sizeof(struct report_opts), report_parse, report_run, report_opts_free};
