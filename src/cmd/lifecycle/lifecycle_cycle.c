/*
 * lifecycle_cycle: one (filesystem, scale) cycle of myriad lifecycle. Its setup makes the mount
 * point and the sparse image and attaches a loop device (or takes --device), each written to the
 * record before it is made; then the phases run in the order of the table `steps`, each printed
 * and saved to results.json as it ends; last the filesystem is unmounted and the loop device
 * detached. Whatever happens (a failure, a stop request), what the record lists of this cycle is
 * torn down before the next.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cmd/lifecycle/lifecycle.h"
#include "cmd/lifecycle/lifecycle_record.h"
#include "io/devbusy.h"
#include "io/loopdev.h"
#include "io/mounts.h"
#include "util/sbuf.h"
#include "util/proc.h"
#include "util/util.h"

/* Split s at spaces into argv (appended at *n). */
static void split_opts(char *s, char **argv, int *n, int max)
{
	for (char *save, *t = strtok_r(s, " \t", &save); t && *n < max; t = strtok_r(NULL, " \t", &save))
		argv[(*n)++] = t;
}

/* Tear down what the current cycle made, from the record. Safe to call at any point, more than once. */
static void cycle_cleanup(struct lc *x)
{
	lc_record_clean(x->record, false);
	x->have_loop = false;
}

/* Under a name nobody uses, with its identity recorded after it is made. */
int lc_make_recorded(struct lc *x, const char *kind, const char *ext, const char *fs, uint64_t files, char *path, size_t n)
{
	static const struct stat nothing; /* identity 0:0, which no file has: "not ours after all" */
	bool dir = strcmp(kind, "image") != 0;
	for (int k = 0; k < 100; k++) {
		char sfx[16] = "";
		struct stat st;
		if (k)
			snprintf(sfx, sizeof(sfx), "-%d", k);
		snprintf(path, n, "%s/" PREFIX "%s-%llu-%d%s.%s", x->image_dir, fs, (unsigned long long)files,
			 (int)getpid(), sfx, ext);
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
	char *losetup = proc_find_tool("losetup");
	bool ok = false, failed_before = x->failed;
	/* A retry that works leaves no failure behind. */
	for (int tries = 0; tries < 4 && !ok && !done(); tries++) {
		int nr = loopdev_get_free();
		int e = errno;
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
		ok = lc_run_phase(x, c, PH_ATTACH, av, NULL, -1);
	}
	free(losetup);
	return ok;
}

/* Unmount what is mounted on the cycle's mount point while it is still the cycle's device. */
static void unmount_cycle(struct lc *x)
{
	if (mounts_unmount_source(x->mnt, x->dev) != 0)
		warnx_("cannot unmount %s: %s", x->mnt, strerror(errno));
}

/* ---- one cycle ---- */

/* What the steps of one cycle share. */
struct cyc {
	struct lc *x;
	const struct fs_kind *k;
	struct lc_cycle *c;
	uint64_t files;
	char *mkfs, *checker, *mount, *umount; /* the tools' paths (NULL: not found) */
};

/* A new cycle in the results, every phase not run yet; its heading printed. */
static struct lc_cycle *cycle_new(struct lc *x, const struct fs_kind *k, uint64_t files)
{
	struct lc_results *r = x->res;
	r->cycles = xrealloc(r->cycles, (r->ncycles + 1) * sizeof(*r->cycles));
	struct lc_cycle *c = &r->cycles[r->ncycles++];
	memset(c, 0, sizeof(*c));
	c->fs = xstrdup(k->name);
	c->files = files;
	c->lazy_itable_init = -1;
	c->image_alloc_bytes = c->disk_estimate_bytes = NAN;
	for (int i = 0; i < PH_N; i++) {
		c->ph[i].exit_status = -1;
		c->ph[i].wall_s = c->ph[i].peak_rss_kib = c->ph[i].rate = c->ph[i].min_mem_kib = NAN;
	}
	char b[32];
	printf("== %s, %s %s\n", k->name, fmt_count(b, files), plural(files, "file", "files"));
	fflush(stdout);
	return c;
}

/* The mount point, and the device: --device, or a sparse image on a loop device (the attach
 * phase). false when the cycle cannot go on. */
static bool cycle_setup(struct cyc *cy)
{
	struct lc *x = cy->x;
	struct lc_cycle *c = cy->c;
	if (lc_make_recorded(x, "dir", "mnt", cy->k->name, cy->files, x->mnt, sizeof(x->mnt)) != 0) {
		warnx_("%s: %s", x->mnt, strerror(errno));
		lc_skip_phase(x, c, PH_ATTACH, "could not make the mount point");
		x->failed = true;
		return false;
	}
	if (x->device) {
		snprintf(x->dev, sizeof(x->dev), "%s", x->device);
		c->device = xstrdup(x->device);
		return true;
	}
	uint64_t bytes = lc_image_bytes(cy->files, x->size_max);
	c->image_bytes = (double)bytes;
	struct stat id;
	int fd = lc_make_recorded(x, "image", "img", cy->k->name, cy->files, x->img, sizeof(x->img));
	if (fd < 0 || fstat(fd, &id) != 0 || ftruncate(fd, (off_t)bytes) != 0) {
		warnx_("%s: %s", x->img, strerror(errno));
		if (fd >= 0)
			close(fd);
		lc_skip_phase(x, c, PH_ATTACH, "could not create the image");
		x->failed = true;
		return false;
	}
	close(fd);
	c->image = xstrdup(x->img);
	if (attach_recorded(x, c, &id)) {
		x->have_loop = true;
		c->device = xstrdup(x->dev);
	}
	lc_print_phase(c, PH_ATTACH);
	lc_save(x);
	return x->have_loop && !done();
}

/* ---- the phases after the setup: the table `steps` and what each runs ---- */

struct step {
	int id;
	bool (*run)(struct cyc *cy, const struct step *s); /* true when the phase succeeded */
	bool stop;					   /* a failure ends the cycle */
	/* The phase that must have succeeded for this one to run (0: none), and else why this one
	 * is recorded as skipped (NULL: it is left out silently). */
	int needs;
	const char *skip_why;
	const char *checker; /* run only with this checker (NULL: with every filesystem) */
	/* myriad's own phases: the subcommand, one extra option, the rate in its --json */
	const char *sub, *opt, *rate_key, *unit;
};

/* mkfs; a --device is checked again before each (a cycle's own mount of it must be gone too). */
static bool step_mkfs(struct cyc *cy, const struct step *s)
{
	struct lc *x = cy->x;
	struct lc_cycle *c = cy->c;
	const struct fs_kind *k = cy->k;
	char why[1024];
	if (x->device && devbusy_refusal(x->device, why, sizeof(why))) {
		struct lc_phase *p = &c->ph[PH_MKFS];
		p->status = LC_FAILED;
		p->error = xstrdup(why);
		x->failed = true;
		return false;
	}
	uint64_t inodes = cy->files + cy->files / 10 + 16384;
	char *mav[64], inodes_s[32], *extra = x->mkfs_opts[k - lc_fs_kinds] ? xstrdup(x->mkfs_opts[k - lc_fs_kinds]) : NULL;
	int n = 0;
	mav[n++] = cy->mkfs;
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
	bool ok = lc_run_phase(x, c, PH_MKFS, mav, NULL, -1);
	free(extra);
	return ok;
}

/* mount, and mount again after the checker (the filesystem is unmounted first, lazily if need
 * be, when the umount phase could not). */
static bool step_mount(struct cyc *cy, const struct step *s)
{
	struct lc *x = cy->x;
	if (s->id == PH_REMOUNT && cy->c->ph[PH_UMOUNT].status != LC_OK)
		unmount_cycle(x);
	char *mountav[] = {cy->mount, "-t", (char *)cy->k->name, x->dev, x->mnt, NULL};
	return lc_record_add(x->record, "mount", x->dev, x->mnt, NULL) == 0 &&
	       lc_run_phase(x, cy->c, s->id, mountav, NULL, -1);
}

static bool step_umount(struct cyc *cy, const struct step *s)
{
	char *umountav[] = {cy->umount, cy->x->mnt, NULL};
	return lc_run_phase(cy->x, cy->c, s->id, umountav, NULL, -1);
}

/* fill, and how full it left the filesystem. */
static bool step_fill(struct cyc *cy, const struct step *s)
{
	struct lc *x = cy->x;
	struct lc_cycle *c = cy->c;
	char nbuf[32];
	snprintf(nbuf, sizeof(nbuf), "%llu", (unsigned long long)cy->files);
	const char *fill_extra[] = {"-n", nbuf, "-s", x->size, NULL};
	bool ok = lc_run_myriad(x, c, s->id, "fill", fill_extra, "files_per_s", "files/s");
	struct statvfs sv;
	if (statvfs(x->mnt, &sv) == 0) {
		c->have_usage = true;
		c->bytes_total = (double)sv.f_blocks * sv.f_frsize;
		c->bytes_used = (double)(sv.f_blocks - sv.f_bfree) * sv.f_frsize;
		c->inodes_total = (double)sv.f_files;
		c->inodes_used = (double)(sv.f_files - sv.f_ffree);
	}
	return ok;
}

static bool step_myriad(struct cyc *cy, const struct step *s)
{
	const char *extra[] = {s->opt, NULL};
	return lc_run_myriad(cy->x, cy->c, s->id, s->sub, s->opt ? extra : NULL, s->rate_key, s->unit);
}

static bool step_drop(struct cyc *cy, const struct step *s)
{
	return lc_run_phase(cy->x, cy->c, s->id, NULL, lc_drop_caches, -1);
}

/* The read-only checker, its memory planned first (lifecycle_check). */
static bool step_check(struct cyc *cy, const struct step *s) { return lc_check(cy->x, cy->c, cy->k, cy->checker); }

static bool step_check_minmem(struct cyc *cy, const struct step *s)
{
	return lc_check_minmem(cy->x, cy->c, cy->checker);
}

#define NOT_MOUNTED_AGAIN "the filesystem could not be mounted again"

static const struct step steps[] = {
    {.id = PH_MKFS, .run = step_mkfs, .stop = true},
    {.id = PH_MOUNT, .run = step_mount, .stop = true},
    {.id = PH_FILL, .run = step_fill},
    {.id = PH_DROP1, .run = step_drop},
    {.id = PH_WALK, .run = step_myriad, .sub = "walk", .rate_key = "entries_per_s", .unit = "entries/s"},
    {.id = PH_DROP2, .run = step_drop},
    {.id = PH_WALK_STAT, .run = step_myriad, .sub = "walk", .opt = "--stat", .rate_key = "entries_per_s",
     .unit = "entries/s"},
    {.id = PH_UMOUNT, .run = step_umount},
    /* xfs_repair's stated minimum first: it caps the check's -m. */
    {.id = PH_CHECK_MINMEM, .run = step_check_minmem, .needs = PH_UMOUNT, .checker = "xfs_repair"},
    {.id = PH_CHECK, .run = step_check, .needs = PH_UMOUNT, .skip_why = "the filesystem could not be unmounted"},
    {.id = PH_REMOUNT, .run = step_mount},
    {.id = PH_VERIFY, .run = step_myriad, .needs = PH_REMOUNT, .skip_why = NOT_MOUNTED_AGAIN, .sub = "verify",
     .opt = "--quick", .rate_key = "files_per_s", .unit = "files/s"},
    {.id = PH_RM, .run = step_myriad, .needs = PH_REMOUNT, .skip_why = NOT_MOUNTED_AGAIN, .sub = "rm",
     .rate_key = "entries_per_s", .unit = "entries/s"},
    {.id = PH_UMOUNT2, .run = step_umount, .needs = PH_REMOUNT, .skip_why = "not mounted"},
};

/* What the image file really takes now (the largest seen): the allocation the next runs' disk
 * estimates scale from. Not for --device, whose blocks are all there. */
static void note_alloc(struct cyc *cy)
{
	struct stat st;
	if (cy->x->device || !cy->x->img[0] || stat(cy->x->img, &st) != 0)
		return;
	double b = (double)st.st_blocks * 512;
	if (!(cy->c->image_alloc_bytes >= b))
		cy->c->image_alloc_bytes = b;
}

/* Run the steps in order, each printed and saved as it ends. false when the cycle ended early (a
 * stop request, or a failure that leaves nothing to do). */
static bool run_steps(struct cyc *cy)
{
	for (size_t i = 0; i < ARRAY_LEN(steps); i++) {
		const struct step *s = &steps[i];
		if (s->checker && strcmp(cy->k->checker, s->checker) != 0)
			continue;
		if (s->needs && cy->c->ph[s->needs].status != LC_OK) {
			if (s->skip_why)
				lc_skip_phase(cy->x, cy->c, s->id, s->skip_why);
			continue;
		}
		bool ok = s->run(cy, s);
		if (s->id == PH_DROP1 || s->id == PH_UMOUNT) /* after fill's sync, and all written back */
			note_alloc(cy);
		lc_print_phase(cy->c, s->id);
		lc_save(cy->x);
		if (done() || (!ok && s->stop))
			return false;
	}
	return true;
}

/* The end of a cycle that ran through: unmounted (whatever the phases left), the loop device
 * detached (a phase of its own), complete unless a stop was asked for. */
static void cycle_finish(struct cyc *cy)
{
	struct lc *x = cy->x;
	unmount_cycle(x);
	note_alloc(cy);
	if (x->have_loop) {
		char *losetup = proc_find_tool("losetup");
		char *dav[] = {losetup ? losetup : "/sbin/losetup", "-d", x->dev, NULL};
		if (lc_run_phase(x, cy->c, PH_DETACH, dav, NULL, -1))
			x->have_loop = false;
		free(losetup);
		lc_print_phase(cy->c, PH_DETACH);
	}
	cy->c->complete = !done();
	lc_save(x);
}

/* Before the image is made: will it fit in --image-dir's free space now (others may have taken
 * some since the run started)? The estimate goes into the cycle; false, the attach phase
 * recorded as skipped with the numbers, when it does not fit. */
static bool cycle_fits(struct cyc *cy)
{
	struct lc *x = cy->x;
	struct lc_disk_est e;
	struct statvfs sv;
	if (x->device || statvfs(x->image_dir, &sv) != 0)
		return true;
	lc_disk_estimate(x->res, cy->k->name, cy->files, x->size_max, &e);
	cy->c->disk_estimate_bytes = e.bytes;
	cy->c->disk_estimate_from = xstrdup(e.from);
	double avail = (double)sv.f_bavail * sv.f_frsize;
	if (e.bytes <= avail)
		return true;
	char a[32], b[32];
	struct sbuf w = {0};
	sbuf_printf(&w, "does not fit: needs about %s (estimate from %s), %s has %s free", fmt_bytes(a, (uint64_t)e.bytes),
		    e.from, x->image_dir, fmt_bytes(b, (uint64_t)avail));
	sbuf_addc(&w, 0);
	lc_skip_phase(x, cy->c, PH_ATTACH, w.data);
	sbuf_free(&w);
	x->failed = true;
	return false;
}

void lc_run_cycle(struct lc *x, const struct fs_kind *k, uint64_t files)
{
	struct cyc cy = {.x = x, .k = k, .c = cycle_new(x, k, files), .files = files};
	x->img[0] = 0;
	if (cycle_fits(&cy) && cycle_setup(&cy)) {
		cy.mkfs = proc_find_tool(k->mkfs);
		cy.checker = proc_find_tool(k->checker);
		cy.mount = proc_find_tool("mount");
		cy.umount = proc_find_tool("umount");
		if (run_steps(&cy))
			cycle_finish(&cy);
		free(cy.mkfs);
		free(cy.checker);
		free(cy.mount);
		free(cy.umount);
	}
	cycle_cleanup(x);
	x->mnt[0] = 0;
	if (cy.c->complete)
		lc_save(x);
}
