/*
 * myriad copy: copy the contents of SRC into DST, as cp -a / rsync -aHAX would (data with holes,
 * directories, symlinks, hard links, special files, mode, owner, nanosecond times, xattrs and
 * ACLs). The plan is the traversal engine over SRC; the visitor creates each entry in DST
 * (directories pre-order) and gives each directory its mode, owner and times post-order, once
 * its contents are in. An entry whose DST twin has the same type, size and mtime is skipped: a
 * file's mtime is set only once its data is complete, so a resume simply walks SRC again.
 *
 * This file is the command: its options, its run, its progress line and summary. The visitor and
 * the parts it calls are the other copy_*.c files (copy_int.h says which does what).
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "cmd/cmds.h"
#include "cmd/cmdstate.h"
#include "cmd/copy_int.h"
#include "cmd/job.h"
#include "io/cgroup_io.h"
#include "engine/walk.h"
#include "io/dir.h"
#include "io/prefetch.h"
#include "report/json.h"
#include "report/progress.h"
#include "state/linkmap.h"
#include "state/tally.h"
#include "util/util.h"

static const char copy_help[] =
    "Usage: myriad copy [OPTIONS] SRC DST\n"
    "Copy the contents of directory SRC into DST (created if missing): files (sparse), directories,\n"
    "symlinks, hard links, fifos, sockets, devices, mode, owner, nanosecond times, xattrs, ACLs.\n"
    "Resumable: an entry already in DST with the same type, size and mtime is skipped.\n"
    "\n"
    "  -j, --threads N          workers (default: one per CPU, growing to 8 per CPU, at least 16,\n"
    "                           while they wait for the disk)\n"
    "      --delete             remove entries of DST that are not in SRC (excluded names stay);\n"
    "                           never enters nor removes a mount point in DST (reported, exit 1)\n"
    "      --max-delete N       delete at most N entries (each file and directory counts); when\n"
    "                           reached, say so, delete nothing more, copy on, exit 1\n"
    "      --check              compare only: write nothing, report every difference (exit 0 when\n"
    "                           DST equals SRC, else 1)\n"
    "      --dry-run            count what would be copied, write nothing\n"
    "      --xdev               do not descend into other filesystems under SRC (a mount point\n"
    "                           becomes an empty directory, as with cp -ax and rsync -ax)\n"
    "      --exclude GLOB       skip entries whose name matches; repeatable\n"
    "      --rate N             visit at most N entries per second\n"
    "      --bwlimit BYTES      copy at most BYTES of data per second (e.g. 50M)\n"
    "      --ionice CLASS       idle, or be:0..7 (best effort, 0 highest): the I/O priority to run at\n"
    "      --cgroup-io SPEC     run in a cgroup with a kernel I/O limit on DST's block device:\n"
    "                           rbps=BYTES, wbps=BYTES, riops=N, wiops=N (e.g. wbps=50M); cgroup v1\n"
    "                           limits reads and direct I/O, not buffered writes (use --bwlimit)\n"
    "      --max-errors N       stop (state saved, exit 3) after N failed entries\n"
    "      --link-memory SIZE   memory for hard links whose other names are still to come (default\n"
    "                           64M); beyond it they spill to a file in the state directory\n"
    "%s"
    "\n"
    "Symlinks are never followed. A failed entry is reported (path, operation, reason) and the copy\n"
    "goes on (exit 1). Out of space or quota on DST: the copy stops with state saved (exit 3); free\n"
    "space and run the same command again. A source file that changes while it is copied is\n"
    "reported and copied again by the next run. Small files on ext4, XFS and btrfs copied to\n"
    "another filesystem are read ahead a directory's next 64 at a time with one io_uring\n"
    "submission (MYRIAD_PREFETCH=off: one by one). --check compares type, size, mtime, mode, owner,\n"
    "symlink targets, xattrs, hard links and file contents. A resumed run walks SRC again: its\n"
    "summary counts what every run copied, and what it found up to date and the failures of its\n"
    "own pass, where each entry that still fails appears once (the --errors file starts afresh).\n"
    "Refused (exit 2): SRC missing or not a directory, SRC equal to DST, DST inside SRC, SRC\n"
    "inside DST with --delete (compared by device and inode, so a bind mount or a symlink is no way\n"
    "round), and --delete from an empty SRC into a non-empty DST unless --max-delete is given.\n";

#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT 0x00002000
#endif

/* Memory for hard-linked inodes whose other links are still to come, before they spill to disk. */
#define LINK_MEMORY_DEFAULT (64u << 20)

/* An --exclude pattern matches name. */
bool copy_excluded(const struct copy *c, const char *name)
{
	for (size_t i = 0; i < c->nexcludes; i++)
		if (fnmatch(c->excludes[i], name, 0) == 0)
			return true;
	return false;
}

void copy_state_save(struct sbuf *b, const struct copy_state *s)
{
	for (size_t i = 0; i < COPY_COUNTERS; i++)
		ser_u64(b, s->v[i]);
}

bool copy_state_load(struct copy_state *s, struct deser *d)
{
	for (size_t i = 0; i < COPY_COUNTERS; i++)
		s->v[i] = deser_u64(d);
	return !d->bad;
}

static void copy_save(void *ctx, struct sbuf *b)
{
	struct copy *c = ctx;
	struct copy_state s = {{c->files, c->dirs, c->nlink_made, c->others, c->bytes, c->skipped, c->deleted}};
	copy_state_save(b, &s);
}

static bool copy_load(void *ctx, struct deser *d)
{
	struct copy *c = ctx;
	uint64_t *v[COPY_COUNTERS] = {&c->files, &c->dirs,    &c->nlink_made, &c->others,
				      &c->bytes, &c->skipped, &c->deleted};
	struct copy_state s;
	if (!copy_state_load(&s, d))
		return false;
	for (size_t i = 0; i < COPY_COUNTERS; i++)
		*v[i] = s.v[i];
	/* A resume walks SRC again: what was copied or deleted stays counted, but every directory and
	 * every finished entry is met (and counted) again, as is every failure (the engine's part). */
	c->dirs = c->skipped = 0;
	return true;
}

/* "copy: 1.2 GiB copied, 45.0 MiB/s[, ~35% of SRC, ETA 2m10s]; 12,345 entries, 2,000/s, 0 errors, 1m02s".
 * The share done is known when SRC is a whole filesystem: what this run has seen (entries, allocated
 * bytes) against what the filesystem holds; the ETA is this run's, since a resume walks again. */
static void copy_progress(void *ctx, struct sbuf *line)
{
	struct copy *c = ctx;
	walk_lock(c->walk);
	uint64_t n = c->files + c->dirs + c->nlink_made + c->others + c->skipped, bytes = c->bytes;
	uint64_t seen_n = c->seen_entries, seen_b = c->seen_bytes;
	walk_unlock(c->walk);
	uint64_t moved = c->live_bytes;
	double el = walk_elapsed(c->walk), run_el = (now_ns() - c->run_start_ns) / 1e9;
	char b[32], r[32];
	if (c->dry_run) /* nothing moves: what was counted */
		moved = bytes;
	sbuf_printf(line, "copy%s: %s %s, %s/s", c->check ? " (check)" : c->dry_run ? " (dry run)" : "",
		    fmt_bytes(b, moved), c->check ? "compared" : c->dry_run ? "to copy" : "copied",
		    fmt_bytes(r, run_el > 0 ? (uint64_t)(moved / run_el) : 0));
	seen_b += moved;
	double f = 0;
	if (c->fs_entries)
		f = (double)seen_n / c->fs_entries;
	if (c->fs_bytes && (double)seen_b / c->fs_bytes > f)
		f = (double)seen_b / c->fs_bytes;
	if (f > 0 && f < 1) {
		sbuf_printf(line, ", ~%.0f%% of SRC", 100 * f);
		progress_eta(line, f, run_el);
	}
	sbuf_adds(line, "; ");
	progress_format(line, "entries", n, 0, el, el > 0 ? n / el : 0, walk_errors(c->walk));
	walk_stuck(c->walk, line, 5);
}

/* When SRC is the root of a filesystem, what it holds (for the progress line's share and ETA). */
static void estimate_total(struct copy *c)
{
	struct statx sx;
	struct statfs sf;
	if (statx(AT_FDCWD, c->src, 0, STATX_BASIC_STATS, &sx) != 0 ||
	    !(sx.stx_attributes_mask & sx.stx_attributes & STATX_ATTR_MOUNT_ROOT) || statfs(c->src, &sf) != 0)
		return;
	c->fs_bytes = (uint64_t)(sf.f_blocks - sf.f_bfree) * sf.f_frsize;
	c->fs_entries = sf.f_files > sf.f_ffree ? sf.f_files - sf.f_ffree : 0;
}

/* What the whole job copied and deleted, over all its runs, in place of the counts of the last
 * snapshot (which miss what a run did after it): the tally's, when it was kept. */
static void whole_job_counts(struct copy *c)
{
	if (!c->tally || !c->tally_exact)
		return;
	c->files = tally_total(c->tally, T_FILES);
	c->nlink_made = tally_total(c->tally, T_LINKS);
	c->others = tally_total(c->tally, T_OTHERS);
	c->bytes = tally_total(c->tally, T_BYTES);
	c->deleted = tally_total(c->tally, T_DELETED);
}

static void print_summary(struct copy *c, enum run_result res, double el, uint64_t errors, FILE *out)
{
	char a[32], b[32], s[32], e[32], by[32], u[32], x[32], y[32];
	unsigned runs = walk_sessions(c->walk);
	uint64_t n = c->files + c->dirs + c->nlink_made + c->others;
	if (c->check) {
		fprintf(out, "copy --check%s: %s %s equal; %s %s; %.2f s\n", res == RUN_DONE ? "" : " stopped",
			fmt_count(a, n), plural(n, "entry", "entries"), fmt_count(e, errors),
			plural(errors, "difference", "differences"), el);
		return;
	}
	fprintf(out, "copy%s%s: %s %s (%s), %s %s, %s other %s %s%s; %s up to date; %s deleted; "
		     "%s %s%s; %.2f s\n",
		c->dry_run ? " (dry run)" : "", res == RUN_DONE ? "" : " stopped", fmt_count(a, c->files),
		plural(c->files, "file", "files"), fmt_bytes(by, c->bytes), fmt_count(b, c->dirs),
		plural(c->dirs, "directory", "directories"), fmt_count(s, c->nlink_made + c->others),
		plural(c->nlink_made + c->others, "entry", "entries"),
		c->dry_run ? "would be copied" : "copied",
		c->tally && !c->tally_exact ? " (at least: an earlier run's count was lost)"
		: runs > 1 && !c->dry_run   ? " (files, other entries, deleted: whole job; directories, up to date, errors: this run's pass)"
					    : "",
		fmt_count(u, c->skipped), fmt_count(x, c->deleted), fmt_count(y, errors), plural(errors, "error", "errors"),
		c->max_delete_hit ? " (--max-delete reached)" : "", el);
}

static void write_summary(struct copy *c, const char *path, enum run_result res, double el, uint64_t errors,
			  const struct throttle *rate)
{
	struct sbuf doc = {0};
	struct json j;
	json_init(&j, &doc);
	json_open(&j, NULL, '{');
	json_header(&j, "copy");
	json_bytes(&j, "src", c->src, strlen(c->src));
	json_bytes(&j, "dst", c->dst, strlen(c->dst));
	json_bool(&j, "dry_run", c->dry_run);
	json_bool(&j, "check", c->check);
	json_bool(&j, "complete", res == RUN_DONE);
	json_u64(&j, "files", c->files);
	json_u64(&j, "dirs", c->dirs);
	json_u64(&j, "symlinks", c->nlink_made);
	json_u64(&j, "others", c->others);
	json_u64(&j, "bytes", c->bytes);
	json_u64(&j, "skipped", c->skipped);
	json_u64(&j, "deleted", c->deleted);
	json_bool(&j, "counts_exact", !c->tally || c->tally_exact);
	json_bool(&j, "max_delete_reached", c->max_delete_hit);
	json_u64(&j, "hardlinks_spilled", linkmap_spilled(c->links));
	json_u64(&j, "files_read_ahead", c->ahead);
	json_u64(&j, "errors", errors);
	json_u64(&j, "sessions", walk_sessions(c->walk));
	json_u64(&j, "threads", walk_threads(c->walk));
	json_double(&j, "elapsed_s", el);
	uint64_t n = c->files + c->dirs + c->nlink_made + c->others + c->skipped;
	json_double(&j, "entries_per_s", el > 0 ? n / el : 0);
	json_double(&j, "bytes_per_s", el > 0 ? c->bytes / el : 0);
	json_double(&j, "rate_throttle_wait_s", rate ? rate->waited_ns / 1e9 : 0);
	json_double(&j, "bwlimit_throttle_wait_s", c->bw.waited_ns / 1e9);
	struct sbuf cg = {0};
	cgroup_io_describe(&cg);
	if (cg.len)
		json_bytes(&j, "cgroup_io", cg.data, cg.len);
	sbuf_free(&cg);
	json_close(&j, '}');
	write_json_file(path, &doc);
	sbuf_free(&doc);
}

struct copy_opts {
	struct job_opts jo; /* with --exclude, --rate and --ionice */
	bool dry_run, check, del, xdev;
	uint64_t bwlimit, max_errors, link_memory, max_delete;
	bool max_delete_set;
	struct cgroup_io_spec cgio;
	bool use_cgio;
	char *src, *dst;
};

enum {
	OPT_DRY_RUN = OPT_CMD_BASE,
	OPT_DELETE,
	OPT_CHECK,
	OPT_XDEV,
	OPT_BWLIMIT,
	OPT_MAX_ERRORS,
	OPT_LINK_MEMORY,
	OPT_CGROUP_IO,
	OPT_MAX_DELETE
};

static int copy_parse(int argc, char **argv, void *opts)
{
	static const struct option longopts[] = {
	    JOB_LONG_OPTIONS,
	    {"dry-run", no_argument, 0, OPT_DRY_RUN},
	    JOB_EXCLUDE_OPTION,
	    JOB_RATE_OPTION,
	    JOB_IONICE_OPTION,
	    {"delete", no_argument, 0, OPT_DELETE},
	    {"check", no_argument, 0, OPT_CHECK},
	    {"xdev", no_argument, 0, OPT_XDEV},
	    {"bwlimit", required_argument, 0, OPT_BWLIMIT},
	    {"max-errors", required_argument, 0, OPT_MAX_ERRORS},
	    {"link-memory", required_argument, 0, OPT_LINK_MEMORY},
	    {"cgroup-io", required_argument, 0, OPT_CGROUP_IO},
	    {"max-delete", required_argument, 0, OPT_MAX_DELETE},
	    {0, 0, 0, 0},
	};
	struct copy_opts *o = opts;
	job_opts_init(&o->jo);
	o->link_memory = LINK_MEMORY_DEFAULT;
	int opt, rc;
	while ((opt = job_getopt(&o->jo, argc, argv, "j:", longopts, copy_help, &rc))) {
		switch (opt) {
		case OPT_DRY_RUN: o->dry_run = true; break;
		case OPT_DELETE: o->del = true; break;
		case OPT_CHECK: o->check = true; break;
		case OPT_XDEV: o->xdev = true; break;
		case OPT_BWLIMIT:
			if (!parse_size(optarg, &o->bwlimit) || !o->bwlimit)
				return usage_error("--bwlimit: '%s' is not a number of bytes per second from 1 to 16E-1 (e.g. 50M)",
						   optarg);
			break;
		case OPT_MAX_ERRORS:
			if (!parse_count(optarg, &o->max_errors) || !o->max_errors)
				return usage_error("--max-errors: '%s' is not a number from 1 to 2^64-1", optarg);
			break;
		case OPT_CGROUP_IO:
			if (!cgroup_io_parse(optarg, &o->cgio))
				return usage_error("--cgroup-io: '%s' is not a list of rbps=BYTES, wbps=BYTES, riops=N, "
						   "wiops=N (e.g. wbps=50M)",
						   optarg);
			o->use_cgio = true;
			break;
		case OPT_LINK_MEMORY:
			if (!parse_size(optarg, &o->link_memory))
				return usage_error("--link-memory: '%s' is not a size from 0 to 16E-1 (e.g. 64M)", optarg);
			break;
		case OPT_MAX_DELETE:
			if (!parse_count(optarg, &o->max_delete))
				return usage_error("--max-delete: '%s' is not a number of entries from 0 to 2^64-1", optarg);
			o->max_delete_set = true;
			break;
		default: return usage_hint();
		}
	}
	if (rc != OPTS_RUN)
		return rc;
	if (argc - optind != 2)
		return usage_error("need two operands: SRC DST");
	if (o->check && o->dry_run)
		return usage_error("--check and --dry-run do not go together");
	if (o->max_delete_set && !o->del)
		return usage_error("--max-delete limits --delete, which is not given");
	o->src = argv[optind];
	o->dst = argv[optind + 1];
	return OPTS_RUN;
}

static void copy_opts_free(void *opts)
{
	struct copy_opts *o = opts;
	job_opts_free(&o->jo);
}

/* The copy itself, once DST is there and open: the walk over SRC with copy's visitor (copy_visit.c),
 * then the summary. c is copy_run's, filled but for what is set here. An exit code. */
static int copy_walk(struct copy *c, struct copy_opts *o)
{
	uint64_t rate = o->jo.rate, bwlimit = o->bwlimit;
	int rc;
	pthread_mutex_init(&c->link_lock, NULL);
	c->link_dir = c->job.ckpt ? ckpt_dir(c->job.ckpt) : NULL;
	c->links = linkmap_new(o->link_memory, c->link_dir);
	throttle_init(&c->bw, (double)bwlimit);
	/* Read small files ahead: not when --bwlimit paces every chunk, nor within one filesystem,
	 * where copy_file_range may share their blocks (a reflink) instead of copying them. */
	struct stat dst_st;
	c->prefetch = !c->check && !c->dry_run && bwlimit == 0 &&
		     prefetch_wanted(c->src, fstat(c->dstfd, &dst_st) == 0 && dst_st.st_dev != c->src_dev);
	struct throttle throttle;
	throttle_init(&throttle, rate);
	char *roots[1] = {c->src};
	struct walk_config cfg = {
	    .roots = roots,
	    .nroots = 1,
	    .threads = job_threads(&o->jo, 8, 16, 0),
	    .min_threads = o->jo.threads ? 0 : cpu_count(),
	    .xdev = c->xdev,
	    .restart_on_resume = true,
	    .excludes = c->excludes,
	    .nexcludes = c->nexcludes,
	    .stat_mask = STATX_TYPE | STATX_MODE | STATX_NLINK | STATX_UID | STATX_GID | STATX_ATIME | STATX_MTIME |
			 STATX_INO | STATX_SIZE | STATX_BLOCKS,
	    .visitor = {.ctx = c, .local_size = sizeof(struct local), .entry = copy_entry, .prepare = copy_prepare,
			.dir_done = copy_dir_done, .commit = copy_commit, .save = copy_save, .load = copy_load,
			.local_free = copy_local_free},
	    .errlog = &c->job.errlog,
	    .snapshot_name = job_snapshot_name(&c->job),
	    .throttle = rate ? &throttle : NULL,
	};
	c->walk = walk_new(&cfg, job_snapshot(&c->job));
	if (!c->walk)
		return EXIT_USAGE;
	if (!c->check && !c->dry_run) { /* before anything is copied: it settles what the earlier runs did */
		c->tally = tally_open(c->job.ckpt ? ckpt_dir(c->job.ckpt) : NULL, 0, cfg.threads, job_snapshot(&c->job) != NULL,
				     copy_settle, c, &c->tally_exact);
		if (c->tally_exact)
			c->deleted = tally_total(c->tally, T_DELETED);
	}
	/* A resumed run has deleted some already (copy_load): the limit is the command's, not each run's. */
	c->delete_budget = c->max_delete > c->deleted ? c->max_delete - c->deleted : 0;
	estimate_total(c);
	c->run_start_ns = now_ns();
	struct run_hooks hooks = walk_run_hooks(c->walk, copy_progress, NULL);
	enum run_result res = job_execute(&c->job, &hooks);
	double el = walk_elapsed(c->walk);
	uint64_t errors = walk_errors(c->walk);
	whole_job_counts(c);
	print_summary(c, res, el, errors, job_json_stdout(&o->jo) ? stderr : stdout);
	if (o->jo.json)
		write_summary(c, o->jo.json, res, el, errors, rate ? &throttle : NULL);
	rc = job_end(&c->job, res, errors);
	if (rc == EXIT_OK && c->max_delete_hit)
		rc = EXIT_FAILED; /* what --delete should have deleted is not all gone */
	if (res == RUN_DONE) {
		walk_free(c->walk);
		linkmap_free(c->links);
		tally_close(c->tally);
	}
	return rc;
}

static int copy_run(void *opts)
{
	struct copy_opts *o = opts;
	static struct copy c; /* large and shared by the workers */
	memset(&c, 0, sizeof(c));
	c.dry_run = o->dry_run;
	c.check = o->check;
	c.del = o->del;
	c.max_errors = o->max_errors;
	c.max_delete = o->max_delete;
	c.max_delete_set = o->max_delete_set;
	c.src = o->src;
	c.dst = o->dst;
	c.excludes = o->jo.excludes;
	c.nexcludes = o->jo.nexcludes;
	c.uid = geteuid();
	c.gid = getegid();
	c.root = c.uid == 0;
	c.umask = umask(077);
	umask(c.umask);
	c.xdev = o->xdev;
	int rc = check_operands(&c);
	if (rc)
		return rc;
	struct stat st;
	bool dst_exists = lstat(c.dst, &st) == 0;
	if (c.check && !dst_exists) {
		warnx_("%s: missing", c.dst);
		return EXIT_FAILED;
	}
	if (apply_ionice(o->jo.ioprio) != 0)
		return EXIT_USAGE;
	if (o->use_cgio) {
		char where[PATH_MAX];
		if (!path_resolve(c.dst, where))
			return usage_error("%s: %s", c.dst, strerror(errno));
		if (!dst_exists) /* it will be made in its parent */
			*(strrchr(where, '/') == where ? where + 1 : strrchr(where, '/')) = 0;
		if (cgroup_io_apply(&o->cgio, where, "copy") != 0)
			return EXIT_USAGE;
	}
	struct sbuf id = {0};
	job_identity(&id, "copy");
	identity_add_path(&id, c.src);
	identity_add_path(&id, c.dst); /* a relative DST is another job in another directory */
	ser_str(&id, c.src);
	ser_str(&id, c.dst);
	ser_u64(&id, c.dry_run | c.check << 1 | c.del << 2 | c.xdev << 3);
	identity_add_excludes(&id, &o->jo);
	char *trees[2] = {c.src, c.dst};
	rc = job_begin(&c.job, &o->jo, "copy", &id, trees, dst_exists ? 2 : 1);
	sbuf_free(&id);
	if (rc)
		return rc;
	if (!dst_exists && !c.dry_run && mkdir(c.dst, 0700) != 0) {
		warnx_("%s: mkdir: %s", c.dst, strerror(errno));
		ckpt_finish(c.job.ckpt);
		return EXIT_FAILED;
	}
	c.dstfd = open(c.dst, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c.dstfd < 0 && !(c.dry_run && errno == ENOENT)) {
		warnx_("%s: open: %s", c.dst, strerror(errno));
		ckpt_finish(c.job.ckpt);
		return EXIT_FAILED;
	}
	struct fs_id dst_id;
	if (c.dstfd >= 0 && fs_identity(c.dstfd, "", &dst_id) != 0) {
		warnx_("%s: statx: %s", c.dst, strerror(errno));
		ckpt_finish(c.job.ckpt);
		return EXIT_FAILED;
	}
	c.dst_mnt = c.dstfd >= 0 ? dst_id.mnt : 0;
	return copy_walk(&c, o);
}

const struct command cmd_copy = {"copy", "copy a tree like cp -a: sparse, hard links, xattrs; resumable, throttled",
				 sizeof(struct copy_opts), copy_parse, copy_run, copy_opts_free};
