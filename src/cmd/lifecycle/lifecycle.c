/*
 * myriad lifecycle: re-run the billion-file experiment (mkfs, fill, walk, fsck, remove) on loop
 * images at several scales, one child process per phase (wall time and peak RSS from wait4), and
 * write results.json after every phase and report.html at the end. This file is the command: its
 * options, the checks before anything is made, and the runs over filesystems and scales; one
 * cycle is lifecycle_cycle.c, one phase lifecycle_phase.c (see lifecycle.h). myriad report
 * (report.c) re-renders one or more results files.
 *
 * Safety: every image, mount point, loop device and mount the run makes is written to the record
 * OUT/made.list before it is made (lifecycle_record), and torn down from that record after each
 * cycle, when a phase fails and on SIGINT/SIGTERM; a run first tears down what the record of a
 * killed run with the same --out lists, each only while it is still what was recorded, and
 * nothing else. A real block device is touched only with --device and --yes, and never while it
 * (or a partition, holder or loop device over it) is mounted, swap or otherwise in use
 * (io/devbusy).
 */
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmds.h"
#include "job/job.h"
#include "cmd/lifecycle/lifecycle.h"
#include "cmd/lifecycle/lifecycle_record.h"
#include "io/devbusy.h"
#include "lifecycle/jsonread.h"
#include "lifecycle/page.h"
#include "lifecycle/results.h"
#include "util/atomic.h"
#include "util/proc.h"
#include "util/sbuf.h"
#include "util/signals.h"
#include "util/util.h"

#define DEFAULT_FILES 1000000
#define LC_FILES_MAX 1000000000000000ull /* fill's limit (layout.h) */

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
    "      --checker-mem SIZE   the memory a checker may use (at least 1M; default: MemAvailable\n"
    "                           when it starts); the checker runs in a cgroup limited to it, and\n"
    "                           when its peak, predicted from the smaller scales, exceeds it:\n"
    "                           xfs_repair -m, e2fsck scratch files on disk, or not run\n"
    "      --out DIR            results.json, report.html and per-phase logs go there\n"
    "                           (default ./lifecycle-out); cycles already complete in\n"
    "                           DIR/results.json are not run again. DIR must be new, empty or\n"
    "                           lifecycle's own (its mark DIR/.myriad-lifecycle, or a results.json\n"
    "                           of lifecycle's), with no file of another kind where lifecycle\n"
    "                           writes: else refused (exit 2), also with --dry-run\n"
    "      --help               this text\n"
    "\n"
    "Before anything is made, the disk each cycle's image will take is estimated from the mkfs\n"
    "parameters and the smaller cycles already in DIR/results.json, plus 15% and 256 MiB; a run\n"
    "whose largest cycle does not fit in --image-dir's free space is refused (exit 2), and each\n"
    "cycle is checked again before it starts. --dry-run prints the estimates.\n"
    "\n"
    "results.json is rewritten after every phase. A failed phase is recorded with its error and the\n"
    "cycle goes on where it can. Nothing is left behind: not loop devices, mounts nor images, also\n"
    "after SIGINT or SIGTERM. Each is written to DIR/made.list before it is made; after a kill -9\n"
    "the next run with the same --out removes what that list names, each only if it is still what\n"
    "was made, and nothing else.\n"
    "Exit status: 0 every phase succeeded; 1 some phase failed (see results.json); 2 usage error or\n"
    "cannot run (not root, no filesystem tools, an --out not lifecycle's); 3 stopped by a signal\n"
    "(results so far are saved).\n";

const struct fs_kind lc_fs_kinds[LC_NFS] = {
    {"ext4", "mkfs.ext4", "e2fsck", "e2fsprogs"},
    {"xfs", "mkfs.xfs", "xfs_repair", "xfsprogs"},
    {"btrfs", "mkfs.btrfs", "btrfs", "btrfs-progs"},
    {"ext3", "mkfs.ext3", "e2fsck", "e2fsprogs"},
};

/* ---- small helpers ---- */

static char *now_iso(void)
{
	char b[64];
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(b, sizeof(b), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return xstrdup(b);
}

/* The first line of a command's output (for versions), or NULL. */
static char *first_line(char *const argv[])
{
	char tmp[] = "/tmp/myriad-lifecycle-ver.XXXXXX";
	int fd = mkstemp(tmp);
	if (fd < 0)
		return NULL;
	close(fd);
	proc_run(argv, NULL, tmp, NULL, NULL);
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

/* ---- results ---- */

void lc_save(struct lc *x)
{
	free(x->res->updated);
	x->res->updated = now_iso();
	struct sbuf b = {0};
	lc_results_json(x->res, &b);
	if (atomic_write_file(x->results_path, b.data, b.len) != 0)
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
	double total = meminfo_kib("MemTotal");
	if (isfinite(total))
		r->mem_kib = total;
	for (size_t i = 0; i < x->nfs; i++) {
		const struct fs_kind *k = x->fs[i];
		char *m = proc_find_tool(k->mkfs), *c = proc_find_tool(k->checker);
		char *a1[] = {m, "-V", NULL};
		add_tool(r, k->mkfs, a1);
		char *a2[] = {c, strcmp(k->checker, "btrfs") ? "-V" : "--version", NULL};
		add_tool(r, k->checker, a2);
		free(m);
		free(c);
	}
	const char *others[] = {"losetup", "mount", "gnuplot"};
	for (size_t i = 0; i < ARRAY_LEN(others); i++) {
		char *t = proc_find_tool(others[i]);
		char *a[] = {t, "--version", NULL};
		add_tool(r, others[i], a);
		free(t);
	}
}

/* ---- options ---- */

static const struct fs_kind *fs_by_name(const char *name)
{
	for (size_t i = 0; i < LC_NFS; i++)
		if (!strcmp(lc_fs_kinds[i].name, name))
			return &lc_fs_kinds[i];
	return NULL;
}

static bool fs_installed(const struct fs_kind *k)
{
	char *m = proc_find_tool(k->mkfs), *c = proc_find_tool(k->checker);
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

enum {
	O_FS = OPT_CMD_BASE,
	O_SCALES,
	O_PROJECT,
	O_IMAGE_DIR,
	O_DEVICE,
	O_YES,
	O_DRY_RUN,
	O_MKFS_OPTS,
	O_OUT,
	O_CHECKER_MEM
};

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
	    {"checker-mem", required_argument, 0, O_CHECKER_MEM},
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
		case O_OUT: xp->out = optarg; break;
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
			xp->mkfs_opts[k - lc_fs_kinds] = (char *)eq + 1;
			break;
		}
		case O_CHECKER_MEM:
			if (!parse_size(optarg, &xp->checker_mem) || xp->checker_mem < (1u << 20))
				return usage_error("--checker-mem: '%s' is not a size of at least 1M (e.g. 8G)", optarg);
			break;
		default: return usage_hint(); /* getopt said what is wrong */
		}
	}
	if (optind < argc)
		return usage_error("unexpected operand '%s'", argv[optind]);
	if (!job_name_given("--image-dir", xp->image_dir) || !job_name_given("--out", xp->out) ||
	    (xp->device && !job_name_given("--device", xp->device)))
		return EXIT_USAGE;
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

/* ---- the run ---- */

/* Refuse what cannot run: a --device that is no block device or is in use, not root, no
 * filesystem with its tools installed (of --fs, or of all), no losetup, no --image-dir. -1 when
 * it can run (x->fs then holds the installed filesystems), else the exit code. */
static int lc_check_can_run(struct lc *x, const char *fs_list, int argc)
{
	if (x->device) {
		struct stat st;
		if (stat(x->device, &st) != 0)
			return usage_error("--device %s: %s", x->device, strerror(errno));
		if (!S_ISBLK(st.st_mode))
			return usage_error("--device %s: not a block device", x->device);
		/* Before anything else, and before every mkfs again. */
		char why[1024];
		if (devbusy_refusal(x->device, why, sizeof(why)))
			return usage_error("refusing --device %s: %s", x->device, why);
	}
	if (geteuid() != 0) {
		warnx_("needs root: it makes filesystems on loop devices, mounts them and drops the page cache. "
		       "Run it as root, e.g.: sudo myriad lifecycle%s",
		       argc > 1 ? " [same options]" : "");
		return EXIT_USAGE;
	}
	if (!fs_list)
		for (size_t i = 0; i < LC_NFS; i++)
			x->fs[x->nfs++] = &lc_fs_kinds[i];
	size_t keep = 0;
	for (size_t i = 0; i < x->nfs; i++) {
		if (fs_installed(x->fs[i])) {
			x->fs[keep++] = x->fs[i];
			continue;
		}
		warnx_("skipping %s: %s or %s is not installed (Debian package %s: apt-get install %s)",
		       x->fs[i]->name, x->fs[i]->mkfs, x->fs[i]->checker, x->fs[i]->package, x->fs[i]->package);
	}
	x->nfs = keep;
	if (!x->nfs) {
		warnx_("no filesystem to run: install e2fsprogs, xfsprogs or btrfs-progs");
		return EXIT_USAGE;
	}
	if (!proc_find_tool("losetup") && !x->device) {
		warnx_("losetup is not installed (Debian package util-linux)");
		return EXIT_USAGE;
	}
	struct stat st;
	if (stat(x->image_dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return usage_error("--image-dir %s: not a directory", x->image_dir);
	return -1;
}

/* Is the cycle of fs at files complete in r (NULL: no results)? Those are not run again. */
static bool have_cycle(const struct lc_results *r, const char *fs, uint64_t files)
{
	for (size_t i = 0; r && i < r->ncycles; i++)
		if (r->cycles[i].complete && !strcmp(r->cycles[i].fs, fs) && r->cycles[i].files == files)
			return true;
	return false;
}

/* The disk the cycles still to run need, before anything is made: each estimated (printed with
 * --dry-run) from the complete cycles of --out's results.json; as images are removed after each
 * cycle, the largest must fit in --image-dir's free space. -1 when it does, else EXIT_USAGE. */
static int lc_fit_disk(const struct lc *x)
{
	if (x->device)
		return -1;
	char path[4200], err[256], a[32], b[32];
	snprintf(path, sizeof(path), "%s/results.json", x->out);
	struct lc_results *r = access(path, F_OK) == 0 ? lc_load(path, err, sizeof(err)) : NULL;
	struct lc_disk_est e, top = {.bytes = -1};
	const char *top_fs = NULL;
	uint64_t top_n = 0;
	for (size_t f = 0; f < x->nfs; f++)
		for (size_t s = 0; s < x->nscales; s++) {
			if (have_cycle(r, x->fs[f]->name, x->scales[s]))
				continue;
			lc_disk_estimate(r, x->fs[f]->name, x->scales[s], x->size_max, &e);
			if (x->dry_run)
				printf("disk: %-5s at %s files: about %s (from %s)\n", x->fs[f]->name, fmt_count(a, x->scales[s]),
				       fmt_bytes(b, (uint64_t)e.bytes), e.from);
			if (e.bytes > top.bytes)
				top = e, top_fs = x->fs[f]->name, top_n = x->scales[s];
		}
	lc_free(r);
	struct statvfs sv;
	if (!top_fs || statvfs(x->image_dir, &sv) != 0)
		return -1;
	double avail = (double)sv.f_bavail * sv.f_frsize;
	if (x->dry_run)
		printf("disk: estimates include a %.0f%% + %s margin; %s has %s free; the largest cycle must fit\n",
		       LC_DISK_MARGIN * 100, fmt_bytes(a, (uint64_t)LC_DISK_MARGIN_BYTES), x->image_dir,
		       fmt_bytes(b, (uint64_t)avail));
	if (top.bytes <= avail)
		return -1;
	char c[32];
	warnx_("needs about %s for %s at %s files (estimate from %s, with a %.0f%% + 256 MiB margin), %s has %s "
	       "free: free some space, choose another --image-dir, or run fewer files",
	       fmt_bytes(a, (uint64_t)top.bytes), top_fs, fmt_count(c, top_n), top.from, LC_DISK_MARGIN * 100,
	       x->image_dir, fmt_bytes(b, (uint64_t)avail));
	return EXIT_USAGE;
}

static int lc_dry_run(const struct lc *x)
{
	printf("myriad lifecycle --dry-run: every check passed; would run %zu filesystem(s) x %zu scale(s) ", x->nfs,
	       x->nscales);
	if (x->device)
		printf("on %s (destroying its contents)", x->device);
	else
		printf("on sparse images %s/" PREFIX "FS-N-%d.img", x->image_dir, (int)getpid());
	printf("; results in %s\n", x->out);
	return EXIT_OK;
}

/* Make --out and its logs, lock it (one lifecycle per --out: its start-up clean-up must not take
 * a running run's devices), open the record and tear down what a killed run left in it, and catch
 * the stop signals. The lock's fd in *lock; -1 when it can go on, else the exit code. */
static int lc_open_out(struct lc *x, int *lock, char *record_path, size_t n)
{
	if (mkdir_p(x->out) != 0)
		return usage_error("--out %s: %s", x->out, strerror(errno));
	snprintf(x->results_path, sizeof(x->results_path), "%s/results.json", x->out);
	snprintf(x->report_path, sizeof(x->report_path), "%s/report.html", x->out);
	snprintf(x->logdir, sizeof(x->logdir), "%s/logs", x->out);
	mkdir(x->logdir, 0755);

	*lock = open(x->out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*lock < 0 || flock(*lock, LOCK_EX | LOCK_NB) != 0) {
		warnx_("another myriad lifecycle is running with --out %s (it is locked)", x->out);
		if (*lock >= 0)
			close(*lock);
		return EXIT_USAGE;
	}
	if (lc_out_mark(x->out) != 0) {
		close(*lock);
		return usage_error("--out %s: cannot write its mark %s: %s", x->out, LC_MARK_NAME, strerror(errno));
	}
	snprintf(record_path, n, "%s/" LC_RECORD_NAME, x->out);
	x->record = lc_record_open(x->out);
	if (x->record < 0) {
		close(*lock);
		return usage_error("%s: %s", record_path, strerror(errno));
	}
	sig_install();
	if (!lc_record_clean(x->record, true))
		warnx_("some of what an earlier run made is still there: it stays in %s for the next run", record_path);
	return -1;
}

/* The results to add to: the complete cycles of an earlier results.json in --out (a damaged one
 * is kept as results.json.bad, or .bad.N: never over another file), or new ones; this run's
 * settings, the host and the tools' versions in them; saved. false when a damaged one cannot be
 * kept (said): nothing is written over it. */
static bool lc_results_start(struct lc *x)
{
	if (access(x->results_path, F_OK) == 0) {
		char err[256];
		struct lc_results *old = lc_load(x->results_path, err, sizeof(err));
		char bad[4200];
		if (!old && lc_out_keep_bad(x->results_path, bad, sizeof(bad)) != 0) {
			warnx_("%s: %s; cannot keep it aside as %s.bad*: %s: move it away and run again",
			       x->results_path, err, x->results_path, strerror(errno));
			return false;
		}
		if (!old) {
			warnx_("%s: %s: starting afresh (the old file is kept as %s)", x->results_path, err, bad);
		} else {
			size_t k = 0;
			for (size_t i = 0; i < old->ncycles; i++) {
				if (old->cycles[i].complete)
					old->cycles[k++] = old->cycles[i];
				else
					lc_cycle_clear(&old->cycles[i]);
			}
			old->ncycles = k;
			x->res = old;
		}
	}
	if (!x->res) {
		x->res = xcalloc(1, sizeof(*x->res));
		x->res->started = now_iso();
	}
	struct lc_results *r = x->res;
	r->complete = false;
	r->files = (double)x->files;
	r->project = (double)x->project;
	r->size = (double)x->size_max;
	free(r->image_dir);
	r->image_dir = x->device ? NULL : xstrdup(x->image_dir);
	free(r->device);
	r->device = x->device ? xstrdup(x->device) : NULL;
	free(r->scales);
	r->scales = xcalloc(x->nscales, sizeof(uint64_t));
	memcpy(r->scales, x->scales, x->nscales * sizeof(uint64_t));
	r->nscales = x->nscales;
	char *gp = proc_find_tool("gnuplot");
	r->gnuplot = gp != NULL;
	free(gp);
	host_info(x);
	lc_save(x);
	return true;
}

/* Every (filesystem, scale) cycle not already complete in the results, until a stop request. */
static void lc_run_cycles(struct lc *x)
{
	struct lc_results *r = x->res;
	for (size_t f = 0; f < x->nfs && !done(); f++)
		for (size_t s = 0; s < x->nscales && !done(); s++) {
			if (have_cycle(r, x->fs[f]->name, x->scales[s])) {
				char b[32];
				printf("== %s, %s files: already complete in %s\n", x->fs[f]->name,
				       fmt_count(b, x->scales[s]), x->results_path);
				continue;
			}
			lc_run_cycle(x, x->fs[f], x->scales[s]);
		}
}

/* The end of the run: the record emptied (or kept for the next run), results.json complete and
 * report.html written, what happened said. The exit code. */
static int lc_finish(struct lc *x, const char *record_path)
{
	struct lc_results *r = x->res;
	if (lc_record_clean(x->record, false))
		unlink(record_path);
	else
		warnx_("could not remove everything this run made: it is listed in %s, for the next run", record_path);
	close(x->record);
	r->complete = !done();
	lc_save(x);
	lc_render_html(&r, 1, x->report_path);
	int rc = EXIT_OK;
	if (done()) {
		warnx_("stopped by signal %d: every loop device, mount and image is removed; results so far are in %s "
		       "(run the same command to run the remaining cycles)",
		       sig_stop_signal(), x->results_path);
		rc = EXIT_STOPPED;
	} else {
		for (size_t i = 0; i < r->ncycles; i++)
			for (int k = 0; k < PH_N; k++)
				if (r->cycles[i].ph[k].status == LC_FAILED)
					x->failed = true;
		printf("results: %s\nreport:  %s\n", x->results_path, x->report_path);
		if (x->failed) {
			warnx_("some phases failed: see the errors in %s and the logs in %s", x->results_path,
			       x->logdir);
			rc = EXIT_FAILED;
		}
	}
	lc_free(r);
	return rc;
}

static int lifecycle_run(void *opts)
{
	struct lc_opts *o = opts;
	struct lc x = o->x;
	int rc = lc_check_can_run(&x, o->fs_list, o->argc);
	if (rc >= 0)
		return rc;
	rc = lc_out_check(&x);
	if (rc >= 0)
		return rc;
	rc = lc_fit_disk(&x);
	if (rc >= 0)
		return rc;
	if (x.dry_run)
		return lc_dry_run(&x);
	if (x.device && !x.yes) /* never reached (the parser asks for it): a second lock on the device */
		return usage_error("--device %s destroys everything on it: add --yes to confirm", x.device);
	int lock = -1;
	char record_path[4200];
	rc = lc_open_out(&x, &lock, record_path, sizeof(record_path));
	if (rc >= 0)
		return rc;
	if (!lc_results_start(&x)) {
		close(x.record);
		close(lock);
		return EXIT_USAGE;
	}
	printf("myriad lifecycle: %zu filesystem(s) x %zu scale(s); results in %s\n", x.nfs, x.nscales, x.out);
	fflush(stdout);
	lc_run_cycles(&x);
	rc = lc_finish(&x, record_path);
	flock(lock, LOCK_UN);
	close(lock);
	return rc;
}

const struct command cmd_lifecycle = {"lifecycle",
				      "re-run the billion-file experiment: mkfs, fill, walk, fsck, rm; report",
				      sizeof(struct lc_opts), lifecycle_parse, lifecycle_run, lifecycle_opts_free};
