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
#include "job/cmdstate.h"
#include "cmd/copy/copy_int.h"
#include "job/job.h"
#include "job/removal.h"
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
    "      --dry-run            count what would be copied and deleted (the counts the real run\n"
    "                           then reports), write nothing\n"
    "      --xdev               do not descend into other filesystems under SRC (a mount point\n"
    "                           becomes an empty directory, as with cp -ax and rsync -ax)\n"
    "      --exclude GLOB       skip entries whose name matches (GLOB/: only directories; a name, not\n"
    "                           a path); repeatable\n"
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
    "round), and --delete from an empty SRC into a non-empty DST unless --max-delete is given.\n"
    "--delete keeps rm's guards: DST written 'link/' or /, and the run's own --json, --errors or\n"
    "state inside DST, are refused; the working directory and those above it are never removed.\n";

#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT 0x00002000
#endif

/* Memory for hard-linked inodes whose other links are still to come, before they spill to disk. */
#define LINK_MEMORY_DEFAULT (64u << 20)

bool copy_excluded(const struct copy *c, int dirfd, const char *name, unsigned char dtype)
{
	return c->nexcludes && excludes_match(&c->excl, dirfd, name, dtype);
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
	/* (Rank 0's pass after the files pass: what the other ranks did in it.) */
	n += c->base_files + c->base_links + c->base_others + c->base_skipped;
	moved += c->base_bytes;
	uint64_t errors = walk_errors(c->walk);
	struct sbuf stuck = {0};
	walk_stuck(c->walk, &stuck, 5);
#ifdef MYRIAD_MPI
	if (c->js.sp) { /* the files pass: the job's counts (bytes in the second), other ranks stuck */
		uint64_t v[3] = {n, moved, 0}; /* its failures are rank 0's pass's to report */
		spread_progress_add(c->js.sp, v, &stuck);
		n = v[0];
		moved = v[1];
		errors = 0;
	}
#endif
	double el = c->base_s + walk_elapsed(c->walk), run_el = (now_ns() - c->run_start_ns) / 1e9;
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
	if (f > 0 && f < 1 && !c->spread) { /* (across ranks, this rank's share is not the job's) */
		sbuf_printf(line, ", ~%.0f%% of SRC", 100 * f);
		progress_eta(line, f, run_el);
	}
	sbuf_adds(line, "; ");
	progress_format(line, "entries", n, 0, el, el > 0 ? n / el : 0, errors);
	sbuf_add(line, stuck.data, stuck.len);
	sbuf_free(&stuck);
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
 * snapshot (which miss what a run did after it): the tally's, when it was kept; across ranks, with
 * what the files pass did on the other ranks (base_*). */
static void whole_job_counts(struct copy *c)
{
	if (c->tally && c->tally_exact) {
		c->files = tally_total(c->tally, T_FILES);
		c->nlink_made = tally_total(c->tally, T_LINKS);
		c->others = tally_total(c->tally, T_OTHERS);
		c->bytes = tally_total(c->tally, T_BYTES);
		c->deleted = tally_total(c->tally, T_DELETED);
	}
	c->files += c->base_files;
	c->nlink_made += c->base_links;
	c->others += c->base_others;
	c->bytes += c->base_bytes;
	c->skipped += c->base_skipped;
	c->ahead += c->base_ahead;
	c->tally_exact = c->tally_exact && c->base_exact;
}

/* The job's sessions: across ranks, the files pass's, then rank 0's pass (the run that went from
 * one to the other counted once). */
static unsigned copy_sessions(const struct copy *c) { return (unsigned)(c->base_sessions + walk_sessions(c->walk)); }

/* How a run ended, as its summary and its JSON tell: its outcome, its failures, the --rate
 * throttle it ran under (NULL: none) and the job's time so far. */
struct copy_end {
	enum run_result res;
	uint64_t errors;
	const struct throttle *rate;
	double el;
};

static void print_summary(struct copy *c, const struct copy_end *end, FILE *out)
{
	enum run_result res = end->res;
	double el = end->el;
	uint64_t errors = end->errors;
	char a[32], b[32], s[32], e[32], by[32], u[32], x[32], y[32];
	unsigned runs = copy_sessions(c);
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

static void write_summary(struct copy *c, const char *path, const struct copy_end *end)
{
	double el = end->el;
	struct sbuf doc = {0};
	struct json j;
	json_document(&j, &doc, "copy");
	json_bytes(&j, "src", c->src, strlen(c->src));
	json_bytes(&j, "dst", c->dst, strlen(c->dst));
	json_bool(&j, "dry_run", c->dry_run);
	json_bool(&j, "check", c->check);
	json_bool(&j, "complete", end->res == RUN_DONE);
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
	json_u64(&j, "errors", end->errors);
	json_u64(&j, "sessions", copy_sessions(c));
	if (c->ranks > 1)
		json_u64(&j, "ranks", (uint64_t)c->ranks);
	if (c->rank_entries) {
		json_open(&j, "rank_entries", '[');
		for (int r = 0; r < c->ranks; r++)
			json_u64(&j, NULL, c->rank_entries[r]);
		json_close(&j, ']');
	}
	json_u64(&j, "threads", walk_threads(c->walk));
	json_double(&j, "elapsed_s", el);
	uint64_t n = c->files + c->dirs + c->nlink_made + c->others + c->skipped;
	json_double(&j, "entries_per_s", el > 0 ? n / el : 0);
	json_double(&j, "bytes_per_s", el > 0 ? c->bytes / el : 0);
	json_double(&j, "rate_throttle_wait_s", end->rate ? end->rate->waited_ns / 1e9 : 0);
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
	return job_check_named(argv + optind, 2) ? EXIT_USAGE : OPTS_RUN;
}

static void copy_opts_free(void *opts)
{
	struct copy_opts *o = opts;
	job_opts_free(&o->jo);
}

/* What every pass needs before its walk: the hard-link map (spilling into the state directory),
 * its lock, and whether small files are read ahead (not when --bwlimit paces every chunk, nor
 * within one filesystem, where copy_file_range may share their blocks, a reflink, instead of
 * copying them). */
static void copy_setup(struct copy *c, const struct copy_opts *o)
{
	pthread_mutex_init(&c->link_lock, NULL);
	c->link_dir = c->job.ckpt ? ckpt_dir(c->job.ckpt) : NULL;
	c->links = linkmap_new(o->link_memory, c->link_dir);
	struct stat dst_st;
	c->prefetch = !c->check && !c->dry_run && o->bwlimit == 0 &&
		     prefetch_wanted(c->src, fstat(c->dstfd, &dst_st) == 0 && dst_st.st_dev != c->src_dev);
}

/* The walk of copy over SRC, at most rate entries per second (0: no limit) with throttle. */
static struct walk_config copy_config(struct copy *c, const struct copy_opts *o, uint64_t rate,
				      struct throttle *throttle)
{
	throttle_init(throttle, rate);
	return (struct walk_config){
	    .roots = c->roots,
	    .nroots = 1,
	    .threads = c->threads,
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
	    .throttle = rate ? throttle : NULL,
	};
}

/* A run that ended as end says (but for its time, taken here): the summary, the JSON, the exit
 * code. */
static int copy_finish(struct copy *c, const struct copy_opts *o, struct copy_end *end)
{
	enum run_result res = end->res;
	end->el = c->base_s + walk_elapsed(c->walk);
	whole_job_counts(c);
	print_summary(c, end, job_json_stdout(&o->jo) ? stderr : stdout);
	if (o->jo.json)
		write_summary(c, o->jo.json, end);
	int rc = job_end(&c->job, res, end->errors);
	if (rc == EXIT_OK && c->max_delete_hit)
		rc = EXIT_FAILED; /* what --delete should have deleted is not all gone */
	if (res == RUN_DONE) {
		walk_free(c->walk);
		linkmap_free(c->links);
		tally_close(c->tally);
	}
	return rc;
}

#ifdef MYRIAD_MPI
static void copy_pass2_init(struct copy *c);
#endif

/* The copy itself, once DST is there and open: the walk over SRC (from snap, NULL: afresh) with
 * copy's visitor (copy_visit.c) at rate entries and --bwlimit bytes per second (0: no limit),
 * then the summary. An exit code. */
static int copy_walk(struct copy *c, const struct copy_opts *o, const struct sbuf *snap, uint64_t rate)
{
	throttle_init(&c->bw, (double)o->bwlimit);
	struct throttle throttle;
	struct walk_config cfg = copy_config(c, o, rate, &throttle);
	c->walk = walk_new(&cfg, snap);
	if (!c->walk)
		return EXIT_USAGE;
	if (!c->check && !c->dry_run && !c->tally) /* before anything is copied: it settles what the earlier runs did */
		c->tally = tally_open(c->job.ckpt ? ckpt_dir(c->job.ckpt) : NULL, 0, cfg.threads, snap != NULL, copy_settle,
				      c, &c->tally_exact);
	if (c->tally && c->tally_exact)
		c->deleted = tally_total(c->tally, T_DELETED);
	/* A resumed run has deleted some already (copy_load): the limit is the command's, not each run's. */
	c->delete_budget = c->max_delete > c->deleted ? c->max_delete - c->deleted : 0;
	estimate_total(c);
	c->run_start_ns = now_ns();
	struct run_hooks hooks = walk_run_hooks(c->walk, copy_progress, NULL);
#ifdef MYRIAD_MPI
	if (c->spread) { /* rank 0's pass: its snapshots say so */
		copy_pass2_init(c);
		hooks = job_pass2_hooks(&c->pass2, &hooks);
	}
#endif
	struct copy_end end = {.res = job_execute(&c->job, &hooks)};
	end.errors = walk_errors(c->walk);
	end.rate = rate ? &throttle : NULL;
	return copy_finish(c, o, &end);
}

/* Before the job: DST there (a --check needs it), I/O priority and cgroup, the job's identity
 * and state. *dst_exists says whether DST was there. An exit code. */
static int copy_begin(struct copy *c, struct copy_opts *o, bool *dst_exists)
{
	struct stat st;
	*dst_exists = lstat(c->dst, &st) == 0;
	if (c->check && !*dst_exists) {
		warnx_("%s: missing", c->dst);
		return EXIT_FAILED;
	}
	if (apply_ionice(o->jo.ioprio) != 0)
		return EXIT_USAGE;
	if (o->use_cgio) {
		char where[PATH_MAX];
		if (!path_resolve(c->dst, where))
			return usage_error("%s: %s", c->dst, strerror(errno));
		if (!*dst_exists) /* it will be made in its parent */
			*(strrchr(where, '/') == where ? where + 1 : strrchr(where, '/')) = 0;
		if (cgroup_io_apply(&o->cgio, where, "copy") != 0)
			return EXIT_USAGE;
	}
	struct sbuf id = {0};
	job_identity(&id, "copy");
	identity_add_path(&id, c->src);
	identity_add_path(&id, c->dst); /* a relative DST is another job in another directory */
	ser_str(&id, c->src);
	ser_str(&id, c->dst);
	ser_u64(&id, c->dry_run | c->check << 1 | c->del << 2 | c->xdev << 3);
	identity_add_excludes(&id, &o->jo);
#ifdef MYRIAD_MPI
	ser_str(&id, "mpi"); /* a job of ranks is another job than one process's */
#endif
	char *trees[2] = {c->src, c->dst};
	/* --delete would remove the run's own files in DST as it writes them (rm's rule). */
	int rc = c->del && !c->check && *dst_exists
		     ? removal_check_own(&o->jo, "copy", &id, &c->dst, 1, NULL, 0, "--delete in")
		     : 0;
	if (!rc)
		rc = job_begin(&c->job, &o->jo, "copy", &id, trees, *dst_exists ? 2 : 1);
	sbuf_free(&id);
	return rc;
}

/* DST made (unless it was there or nothing is written) and opened. An exit code (the job's state
 * finished on a failure). */
static int copy_open_dst(struct copy *c, bool dst_exists)
{
	if (!dst_exists && !c->dry_run && mkdir(c->dst, 0700) != 0) {
		warnx_("%s: mkdir: %s", c->dst, strerror(errno));
		ckpt_finish(c->job.ckpt);
		return EXIT_FAILED;
	}
	c->dstfd = open(c->dst, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c->dstfd < 0 && !(c->dry_run && errno == ENOENT)) {
		warnx_("%s: open: %s", c->dst, strerror(errno));
		ckpt_finish(c->job.ckpt);
		return EXIT_FAILED;
	}
	struct fs_id dst_id;
	if (c->dstfd >= 0 && fs_identity(c->dstfd, "", &dst_id) != 0) {
		warnx_("%s: statx: %s", c->dst, strerror(errno));
		ckpt_finish(c->job.ckpt);
		return EXIT_FAILED;
	}
	c->dst_mnt = c->dstfd >= 0 ? dst_id.mnt : 0;
	return 0;
}

/* The whole copy in one process. An exit code. */
static int copy_one(struct copy *c, struct copy_opts *o)
{
	int rc = check_operands(c);
	bool dst_exists;
	if (!rc)
		rc = copy_begin(c, o, &dst_exists);
	if (!rc)
		rc = copy_open_dst(c, dst_exists);
	if (rc)
		return rc;
	copy_setup(c, o);
	return copy_walk(c, o, job_snapshot(&c->job), o->jo.rate);
}

#ifdef MYRIAD_MPI
/*
 * copy across the ranks of an MPI job (myriad-mpi) runs in two passes, as rm does. The files
 * pass: every rank walks its share of SRC (engine/spread, the walk shared as walk's is), makes
 * the directories it meets and copies the files, symlinks and special files of one link, sets
 * no directory's metadata (a directory's entries may be copied by other ranks) and leaves files
 * with more links alone (their names may be walked by different ranks); its failures are counted
 * apart and never shown. Rank 0's pass: rank 0 alone copies SRC into DST as one process's copy
 * does, resuming it: what the files pass finished is up to date (not counted again), so what it
 * does is hard links (one linkmap sees every name), --delete, each directory's metadata post-order
 * and whatever failed, reporting each failure once. Each rank counts what it copied in a tally of
 * its own in the job's state directory, so the counts stay exact after kill -9 of any rank. The
 * job's snapshot is the spread's (MYRSPRD1) in the files pass and rank 0's walk wrapped (MYRCPPH2,
 * with the ranks, the files pass's time and sessions, entries it found up to date and files it
 * read ahead) in rank 0's pass: a resume knows which pass it is in. --check and --dry-run write
 * nothing, so rank 0 runs them alone.
 */
#define COPY_PASS2_MAGIC "MYRCPPH2"

static void copy_pass2_init(struct copy *c)
{
	c->pass2 = (struct job_pass2){.magic = COPY_PASS2_MAGIC,
				      .ranks = c->ranks,
				      .base_s = &c->base_s,
				      .base_sessions = &c->base_sessions,
				      .v = {&c->base_skipped, &c->base_ahead},
				      .nv = 2};
}

/* This rank's counts for the job's progress line: entries, bytes moved (in the directories' place),
 * errors (none: the files pass's are rank 0's pass's to report). */
static void copy_count(void *ctx, uint64_t v[3])
{
	struct copy *c = ctx;
	walk_lock(c->walk);
	v[0] = c->files + c->dirs + c->nlink_made + c->others + c->skipped;
	walk_unlock(c->walk);
	v[1] = c->live_bytes;
	v[2] = 0;
}

/* The files pass, on every rank, from this rank's part of the job's snapshot (part, or NULL; snap:
 * the job's, on rank 0), this rank's share of the job's --bwlimit. The run's outcome (an enum
 * run_result), or -1 when the job cannot start. */
static int copy_files_pass(struct copy *c, const struct copy_opts *o, const struct sbuf *part, const struct sbuf *snap)
{
	uint64_t bwlimit = o->bwlimit, share = bwlimit / (uint64_t)c->ranks;
	throttle_init(&c->bw, bwlimit && !share ? 1.0 : (double)share);
	struct throttle throttle;
	struct walk_config cfg = copy_config(c, o, o->jo.rate, &throttle); /* this rank's share of --rate */
	cfg.visitor.dir_done = NULL; /* directories get their metadata in rank 0's pass */
	cfg.shared = true;
	cfg.shared_empty = c->rank > 0;
	cfg.errlog = &c->quiet;
	c->files_pass = true;
	uint64_t max_errors = c->max_errors;
	c->max_errors = 0; /* its failures are met again, and counted, in rank 0's pass */
	errlog_stderr_limit(0);
	c->walk = walk_new(&cfg, part);
	bool ok = job_spread_ready(&c->js, c->walk != NULL);
	enum run_result res = RUN_DONE;
	if (ok) {
		c->js.sp = spread_new_walk(c->walk, c->rank == 0 ? snap : NULL);
		spread_progress_source(c->js.sp, copy_count, c);
		job_spread_outputs(&c->js, &c->job, NULL);
		estimate_total(c);
		c->run_start_ns = now_ns();
		struct run_hooks hooks = walk_run_hooks(c->walk, copy_progress, NULL);
		res = job_spread_execute(&c->js, &c->job, &hooks);
		job_spread_end(&c->js);
	}
	errlog_stderr_limit(UINT64_MAX);
	c->files_pass = false;
	c->max_errors = max_errors;
	return ok ? (int)res : -1;
}

/* Rank 0, a job refused after it began: its state stays as it was (or goes when nothing was saved),
 * and a DST made by this run goes (it is empty). */
static void copy_refused(struct copy *c)
{
	job_refused(&c->job);
	if (c->made_dst)
		rmdir(c->dst);
}

/* Collective: does every rank see rank 0's SRC (dst: DST, open) as the same directory, by inode
 * number? */
static bool same_dirs(const struct copy *c, bool dst)
{
	char *path = dst ? c->dst : c->src;
	uint64_t ino = 0;
	struct stat st;
	if (dst ? fstat(c->dstfd, &st) == 0 : stat(c->src, &st) == 0)
		ino = st.st_ino;
	return job_spread_same_dirs(&path, &ino, 1, "refusing to copy");
}

/* Collective, after the files pass (files_pass: this run had one) or none: on rank 0, what the
 * other ranks copied (their tallies hold every run's), and what every rank found up to date and
 * read ahead in this run's files pass. */
static void copy_base_counts(struct copy *c, bool files_pass)
{
	uint64_t t[7] = {0};
	if (c->rank > 0) {
		t[0] = tally_total(c->tally, T_FILES);
		t[1] = tally_total(c->tally, T_LINKS);
		t[2] = tally_total(c->tally, T_OTHERS);
		t[3] = tally_total(c->tally, T_BYTES);
		t[4] = !c->tally_exact;
		tally_close(c->tally);
		c->tally = NULL;
	}
	if (files_pass) {
		t[5] = c->skipped;
		t[6] = c->ahead;
	}
	spread_sum(t, 7);
	if (files_pass) {
		c->rank_entries = xcalloc((size_t)c->ranks, sizeof(*c->rank_entries));
		spread_gather(c->seen_entries, c->rank_entries);
	}
	if (c->rank == 0) {
		c->base_files = t[0];
		c->base_links = t[1];
		c->base_others = t[2];
		c->base_bytes = t[3];
		c->base_exact = t[4] == 0;
		if (files_pass) {
			c->base_skipped = t[5];
			c->base_ahead = t[6];
			c->skipped = c->ahead = 0;
		}
	}
}

/* Rank 0, from the files pass on to its own pass, in a walk of its own. 0 or an exit code. */
static int copy_leave_files_pass(struct copy *c, const struct copy_opts *o)
{
	c->base_s = walk_elapsed(c->walk);
	c->base_sessions = walk_sessions(c->walk) - 1;
	walk_free(c->walk);
	c->walk = NULL;
	/* A resumed job's --errors file is opened by its walk from the snapshot: the files pass's walk
	 * had the quiet log, and this walk starts afresh, as do its failures (this pass meets every
	 * one). */
	if (c->job.resumed && errlog_open(&c->job.errlog, o->jo.errors, false, 0, 0) != 0)
		return EXIT_USAGE;
	return 0;
}

/* The two passes (see above), every rank, once DST is open on each: rate the job's (--bwlimit
 * too). The exit code, the same on every rank. */
static int copy_spread(struct copy *c, const struct copy_opts *o, uint64_t rate)
{
	enum { FILES = 1, RANK0 = 2 };
	const struct sbuf *snap = c->rank == 0 ? job_snapshot(&c->job) : NULL;
	struct sbuf walk_snap = {0};
	int pass = 0;
	if (c->rank == 0) { /* which pass the job is in */
		copy_pass2_init(c);
		if (!snap || (snap->len >= 8 && !memcmp(snap->data, "MYRSPRD1", 8)))
			pass = FILES;
		else if (job_pass2_unwrap(&c->pass2, snap, job_snapshot_name(&c->job), "copy", &walk_snap))
			pass = RANK0;
	}
	int shared = -1;
	if (spread_all(c->rank > 0 || pass)) {
		pass = spread_max(pass);
		/* In the files pass, each rank's part of the job's snapshot (its number of ranks checked). */
		shared = pass == FILES ? spread_share_snapshot(true, snap, job_snapshot_name(&c->job), &c->js.rank_snap) : 0;
	}
	if (shared < 0) {
		job_spread_ready(&c->js, false);
		if (c->rank == 0)
			copy_refused(c);
		sbuf_free(&walk_snap);
		return spread_max(EXIT_USAGE);
	}
	int resumed = spread_max(snap != NULL);
	/* Before anything is copied: each rank's tally settles what its earlier runs did. Slots for
	 * the workers of both passes (on rank 0, each pass's claim their own). */
	char tdir[PATH_MAX];
	job_spread_state_dir(&c->job, tdir);
	c->tally = tally_open(*tdir ? tdir : NULL, (unsigned)c->rank, 2 * (unsigned)c->threads, resumed, copy_settle, c,
			      &c->tally_exact);
	copy_setup(c, o);
	int res = pass == FILES ? copy_files_pass(c, o, shared > 0 ? &c->js.rank_snap : NULL, snap) : RUN_DONE;
	if (res < 0) {
		if (c->rank == 0)
			copy_refused(c);
		return spread_max(EXIT_USAGE);
	}
	if (pass == RANK0)
		job_spread_ready(&c->js, true); /* the parts' names go: only rank 0 works from here */
	copy_base_counts(c, pass == FILES);
	c->job.quiet = c->rank > 0;
	int rc = 0;
	if (pass == FILES && res == RUN_STOPPED) {
		rc = c->rank == 0 ? copy_finish(c, o, &(struct copy_end){.res = RUN_STOPPED}) : job_end(&c->job, RUN_STOPPED, 0);
	} else if (c->rank == 0) {
		if (pass == FILES) /* on to rank 0's pass, in a walk of its own */
			rc = copy_leave_files_pass(c, o);
		c->after_files_pass = true;
		if (!rc)
			rc = copy_walk(c, o, walk_snap.len ? &walk_snap : NULL, rate);
	} else {
		rc = job_end(&c->job, RUN_DONE, 0);
		if (c->walk)
			walk_free(c->walk);
	}
	sbuf_free(&walk_snap);
	free(c->rank_entries);
	c->rank_entries = NULL;
	spread_barrier(); /* asleep while rank 0 finishes */
	return spread_max(rc);
}

/* copy under myriad-mpi, every rank. The exit code, the same on every rank. */
static int copy_ranks(struct copy *c, struct copy_opts *o)
{
	uint64_t rate = o->jo.rate; /* the job's: each rank's share is taken in the files pass */
	int rc = job_spread_begin(&c->js, &o->jo, NULL, NULL, 0);
	c->rank = c->js.rank;
	c->ranks = c->js.ranks;
	/* (One rank too, so that a job's snapshots are of one kind whatever -np: a resume with another
	 * is refused saying which.) */
	c->spread = !c->check && !c->dry_run;
	if (!c->spread) { /* nothing written: rank 0 alone, as one process */
		bool ok = job_spread_ready(&c->js, !rc);
		if (ok && c->rank == 0) {
			o->jo.rate = rate;
			rc = copy_one(c, o);
		}
		spread_barrier();
		return spread_max(ok ? rc : rc ? rc : EXIT_USAGE);
	}
	/* Rank 0 checks the operands (alone saying why it refuses them) and makes DST; then every other
	 * rank checks them, once DST is there (none looks it up before: a network filesystem's client
	 * may remember that it was not), and must see rank 0's SRC and DST. */
	bool dst_exists = false, begun = false;
	if (!rc && c->rank == 0) {
		rc = check_operands(c);
		if (!rc)
			begun = (rc = copy_begin(c, o, &dst_exists)) == 0;
		if (!rc) {
			begun = (rc = copy_open_dst(c, dst_exists)) == 0; /* (a failure finished the state) */
			c->made_dst = begun && !dst_exists;
		}
	}
	if (spread_all(!rc) && c->rank > 0)
		rc = check_operands(c);
	if (spread_all(!rc) && !same_dirs(c, false))
		rc = EXIT_USAGE;
	if (spread_all(!rc) && c->rank > 0) {
		rc = copy_begin(c, o, &dst_exists);
		if (!rc && copy_open_dst(c, true) != 0) {
			warnx_("rank %d: does not see DST '%s', which rank 0 has: every rank must see the same tree at the "
			       "same path (and start in the same working directory, for relative paths)",
			       c->rank, c->dst);
			rc = EXIT_USAGE;
		}
	}
	if (spread_all(!rc) && !same_dirs(c, true))
		rc = EXIT_USAGE;
	if (!spread_all(!rc)) {
		job_spread_ready(&c->js, false);
		if (c->rank == 0 && begun)
			copy_refused(c);
		return spread_max(rc ? rc : EXIT_USAGE);
	}
	return copy_spread(c, o, rate);
}
#endif

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
	c.roots[0] = c.src;
	c.excludes = o->jo.excludes;
	c.nexcludes = o->jo.nexcludes;
	excludes_init(&c.excl, c.excludes, c.nexcludes);
	c.uid = geteuid();
	c.gid = getegid();
	c.root = c.uid == 0;
	c.umask = umask(077);
	umask(c.umask);
	c.xdev = o->xdev;
	c.rank = 0;
	c.ranks = 1;
	c.base_exact = true;
	c.threads = job_threads(&o->jo, 8, 16, 0);
#ifdef MYRIAD_MPI
	int rc = copy_ranks(&c, o);
#else
	int rc = copy_one(&c, o);
#endif
	guard_free(&c.guard);
	return rc;
}

const struct command cmd_copy = {"copy", "copy a tree like cp -a: sparse, hard links, xattrs; resumable, throttled",
				 sizeof(struct copy_opts), copy_parse, copy_run, copy_opts_free};
