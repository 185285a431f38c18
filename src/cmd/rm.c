/*
 * myriad rm: remove trees. The plan is the traversal engine in post-order over the operands; the
 * action unlinks each buffer's non-directories (in inode order on filesystems where that saves
 * seeks) and removes each directory once everything under it is gone. An interrupted rm resumes by
 * walking what is left.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cmd/cmds.h"
#include "job/cmdstate.h"
#include "job/removal.h"
#include "job/job.h"
#include "engine/walk.h"
#include "io/dir.h"
#include "io/guard.h"
#include "report/hist.h"
#include "report/json.h"
#include "report/outfile.h"
#include "report/progress.h"
#include "state/tally.h"
#include "util/util.h"
#include "cmd/rm_int.h"

static const char rm_help[] =
    "Usage: myriad rm [OPTIONS] DIR...\n"
    "Remove each DIR and everything under it, in parallel, bottom-up; resumable.\n"
    "\n"
    "  -j, --threads N          workers, 1 to 4096 (default: one per CPU, growing to 8 per CPU, at\n"
    "                           least 16, while they wait for the disk; one on XFS and btrfs, where parallel\n"
    "                           unlinks contend inside the filesystem)\n"
    "      --dry-run            count what would be removed, remove nothing\n"
    "      --exclude GLOB       keep entries whose name matches (and the directories above them;\n"
    "                           GLOB/: only directories; a name, not a path); repeatable\n"
    "      --rate N             remove at most N entries per second\n"
    "      --ionice CLASS       idle, or be:0..7 (best effort, 0 highest): the I/O priority to run at\n"
    "%s"
    "\n"
    "Symlinks are never followed: a DIR that is a symlink, or is given as 'link/', is refused. rm never\n"
    "enters a mount point (another filesystem, or a bind mount of the same one): it is reported and\n"
    "left alone, with the directories above it. Refused before anything is removed (exit 2): a DIR whose last component is\n"
    "'.' or '..', /, and the working directory and the directories above it (by device and inode,\n"
    "whatever the spelling); a DIR inside another or named twice; a DIR holding the run's own\n"
    "--state, --json or --errors file. On ext2/3/4, XFS and btrfs each directory's entries are unlinked in inode\n"
    "order, in bounded chunks; elsewhere in readdir order. An entry that cannot be removed is reported\n"
    "and everything else is removed (exit 1). Interrupted (exit 3, or kill -9), the same command\n"
    "carries on, and its counts are the whole job's: every entry removed by any of its runs, once.\n";

struct local {
	uint64_t files, dirs;
	struct hist unlink_lat;
	struct tally_slot *slot; /* this worker's counts of the whole job (claimed at its first entry) */
	bool claimed;
};

static struct tally_slot *rm_slot(struct rm *c, struct local *l)
{
	if (!l->claimed) {
		l->slot = tally_claim(c->tally);
		l->claimed = true;
	}
	return l->slot;
}

static bool rm_entry(void *ctx, void *lp, const struct walk_dir *d, const struct walk_entry *e, struct errbatch *errs)
{
	struct rm *c = ctx;
	struct local *l = lp;
	if (!d || e->type == DT_DIR)
		return false; /* directories go in dir_done, once empty */
	if (e->type == DT_UNKNOWN)
		return true; /* its stat failed (reported): what it is is unknown, so it stays */
	if (c->dry_run) {
		l->files++;
		return false;
	}
	uint64_t t = now_ns();
	struct tally_slot *s = rm_slot(c, l);
	tally_begin(s, T_FILES, d->path, d->pathlen, e->name, e->namelen);
	bool gone = unlinkat(d->fd, e->name, 0) == 0 || errno == ENOENT;
	int err = errno;
	tally_end(s, T_FILES, gone);
	if (!gone) {
		errno = err;
		struct sbuf p = {0};
		walk_path(&p, d, e);
		errlog_report(errs, p.data, p.len, "unlink", errno);
		sbuf_free(&p);
		return true;
	}
	hist_add(&l->unlink_lat, now_ns() - t);
	l->files++;
	return false;
}

static bool rm_dir_done(void *ctx, void *lp, const struct walk_dir *d, bool keep, struct errbatch *errs)
{
	struct rm *c = ctx;
	struct local *l = lp;
	if (keep)
		return false; /* something under it stays, so it stays: already reported */
	if (c->dry_run) {
		l->dirs++;
		return false;
	}
	uint64_t t = now_ns();
	/* A directory below that is gone was removed by someone else, which is its purpose; an operand
	 * that is gone was not removed by this job (it was there when this run started), and the path
	 * may have named another directory than the one emptied. */
	struct tally_slot *s = rm_slot(c, l);
	tally_begin(s, T_DIRS, d->path, d->pathlen, NULL, 0);
	bool gone = walk_rmdir(d, true) == 0 || (errno == ENOENT && d->relstart != d->pathlen);
	int err = errno;
	tally_end(s, T_DIRS, gone);
	if (!gone) {
		errlog_report(errs, d->path, d->pathlen, "rmdir", err);
		return true; /* and so do its parents, without a second report each */
	}
	hist_add(&l->unlink_lat, now_ns() - t);
	l->dirs++;
	return false;
}

static void rm_commit(void *ctx, void *lp)
{
	struct rm *c = ctx;
	struct local *l = lp;
	c->files += l->files;
	c->dirs += l->dirs;
	hist_merge(&c->unlink_lat, &l->unlink_lat);
	l->files = l->dirs = 0;
	memset(&l->unlink_lat, 0, sizeof(l->unlink_lat)); /* the slot stays the worker's */
	if (c->walk)
		timeline_add(&c->tl, c->base_s + walk_elapsed(c->walk), c->files + c->dirs);
}

void rm_state_save(struct sbuf *b, const struct rm_state *s)
{
	ser_u64(b, s->files);
	ser_u64(b, s->dirs);
	hist_save(b, &s->unlink_lat);
	timeline_save(b, &s->tl);
}

bool rm_state_load(struct rm_state *s, struct deser *d)
{
	s->files = deser_u64(d);
	s->dirs = deser_u64(d);
	return hist_load(&s->unlink_lat, d) && timeline_load(&s->tl, d) && !d->bad;
}

static void rm_save(void *ctx, struct sbuf *b)
{
	struct rm *c = ctx;
	static struct rm_state s; /* 16 KiB: static, as the engine lock serializes snapshots */
	s.files = c->files;
	s.dirs = c->dirs;
	s.unlink_lat = c->unlink_lat;
	s.tl = c->tl;
	rm_state_save(b, &s);
}

static bool rm_load(void *ctx, struct deser *d)
{
	struct rm *c = ctx;
	static struct rm_state s;
	if (!rm_state_load(&s, d))
		return false;
	/* A resume walks again from the operands: a dry run counts everything again. */
	c->files = c->dry_run ? 0 : s.files;
	c->dirs = c->dry_run ? 0 : s.dirs;
	c->unlink_lat = s.unlink_lat;
	c->tl = s.tl;
	return true;
}

/* Was the entry that rec names removed (an action a kill cut from its count)? */
void rm_settle(void *ctx, unsigned counter, const char *rec, size_t len, uint64_t since, uint64_t *totals)
{
	(void)ctx;
	(void)since;
	char *p = strndup(rec, len);
	struct stat st;
	if (p && fstatat(AT_FDCWD, p, &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT)
		totals[counter]++;
	free(p);
}

/* Were the job's counts kept exactly (every rank's tally whole)? */
static bool rm_exact(const struct rm *c) { return c->tally && c->tally_exact && c->base_exact; }

/* Files and directories removed by the whole job so far (across ranks, this rank's and, on rank 0
 * once the unlink pass is over, the others'). */
void rm_counts(struct rm *c, uint64_t *files, uint64_t *dirs)
{
	if (rm_exact(c)) {
		*files = tally_total(c->tally, T_FILES) + c->base_files;
		*dirs = tally_total(c->tally, T_DIRS) + c->base_dirs;
		return;
	}
	walk_lock(c->walk);
	*files = c->files;
	*dirs = c->dirs;
	walk_unlock(c->walk);
}

void rm_progress(void *ctx, struct sbuf *line)
{
	struct rm *c = ctx;
	uint64_t files, dirs;
	rm_counts(c, &files, &dirs);
	uint64_t v[3] = {files + dirs, dirs, walk_errors(c->walk)};
	struct sbuf stuck = {0};
	walk_stuck(c->walk, &stuck, 5);
	rm_ranks_progress(c, v, &stuck);
	double el = c->base_s + walk_elapsed(c->walk);
	sbuf_adds(line, c->dry_run ? "rm (dry run): " : "rm: ");
	progress_format(line, "entries removed", v[0], 0, el, el > 0 ? v[0] / el : 0, v[2]);
	sbuf_add(line, stuck.data, stuck.len);
	sbuf_free(&stuck);
}

/* The job's sessions: the unlink pass's, then the directories pass's (the run that went from one
 * to the other counted once). */
static uint64_t rm_sessions(struct rm *c) { return c->base_sessions + walk_sessions(c->walk); }

/* Filesystems where parallel unlinks serialize inside the filesystem (XFS on its allocation
 * group and log locks, btrfs on its b-tree locks): there more workers only add contention. On a
 * loop-mounted image with 2 CPUs, 300k files, cold: XFS 6.6 s with one worker, 7.7 s with two,
 * 10.5 s growing to 16 (rm -rf: 7.2 s); btrfs 5.4 s, 7.9 s, 6.6 s (rm -rf: 5.7 s). */
static bool unlinks_serialize(unsigned long type) { return type == FS_XFS || type == FS_BTRFS; }

/* Do the operands' filesystems all serialize unlinks? */
static bool serial_unlinks(char **roots, size_t nroots)
{
	bool serial = nroots && unlinks_serialize(fs_type(roots[0]));
	for (size_t i = 1; i < nroots && serial; i++)
		serial = unlinks_serialize(fs_type(roots[i]));
	return serial;
}

/* Up to 8 per CPU (at least 16) while unlinks wait on the disk; one where they serialize. */
static int threads_for(const struct job_opts *jo, char **roots, size_t nroots)
{
	return jo->threads || !serial_unlinks(roots, nroots) ? job_threads(jo, 8, 16, 0) : 1;
}

struct rm_opts {
	struct job_opts jo; /* with --exclude, --rate and --ionice */
	bool dry_run;
	char **roots; /* the operands */
	size_t nroots;
};

enum { OPT_DRY_RUN = OPT_CMD_BASE };

static int rm_parse(int argc, char **argv, void *opts)
{
	static const struct option longopts[] = {
	    JOB_LONG_OPTIONS,
	    {"dry-run", no_argument, 0, OPT_DRY_RUN},
	    JOB_EXCLUDE_OPTION,
	    JOB_RATE_OPTION,
	    JOB_IONICE_OPTION,
	    {0, 0, 0, 0},
	};
	struct rm_opts *o = opts;
	job_opts_init(&o->jo);
	int opt, rc;
	while ((opt = job_getopt(&o->jo, argc, argv, "j:", longopts, rm_help, &rc))) {
		switch (opt) {
		case OPT_DRY_RUN: o->dry_run = true; break;
		default: return usage_hint();
		}
	}
	if (rc != OPTS_RUN)
		return rc;
	if (optind == argc)
		return usage_error("missing operand: the directories to remove");
	o->roots = argv + optind;
	o->nroots = argc - optind;
	return job_check_named(o->roots, o->nroots) ? EXIT_USAGE : OPTS_RUN;
}

static void rm_opts_free(void *opts)
{
	struct rm_opts *o = opts;
	job_opts_free(&o->jo);
}

/* The operands that are there (present[], *npresent; checked[]: what each was when checked) after
 * each passed the guard: directories (not symlinks to them), all checked before any work starts.
 * *missing: the first operand that is gone (removed by an interrupted run while this job's state
 * exists). EXIT_OK, or EXIT_USAGE after saying why. */
int rm_check_operands(const struct rm_opts *o, char **present, struct guard_operand *checked, size_t *npresent,
		      const char **missing)
{
	struct guard guard;
	if (guard_init(&guard) != 0)
		return usage_error("cannot identify the working directory and every directory above it, which are "
				   "never removed: %s (run it from a directory whose parents this user can search)",
				   strerror(errno));
	int rc = EXIT_OK;
	*npresent = 0;
	*missing = NULL;
	for (size_t i = 0; i < o->nroots && rc == EXIT_OK; i++) {
		char *root = o->roots[i];
		enum guard_verdict v = guard_check(&guard, root, &checked[*npresent]);
		if (v == GUARD_ERRNO && errno == ENOENT)
			*missing = *missing ? *missing : root;
		else if (v == GUARD_ERRNO)
			rc = usage_error("%s: %s", root, strerror(errno));
		else if (v == GUARD_LINK_SLASH)
			rc = usage_error("refusing to remove '%s': %s (to remove the link itself: rm '%.*s'; to remove the "
					 "directory it points to, name that directory)",
					 root, guard_rule(v), (int)guard_name_len(root), root);
		else if (v != GUARD_OK)
			rc = usage_error("refusing to remove '%s': %s", root, guard_rule(v));
		else if (S_ISLNK(checked[*npresent].type))
			rc = usage_error("refusing to remove '%s': it is a symlink, and symlinks are never followed "
					 "(myriad rm removes directories; to remove the link itself: rm '%s')",
					 root, root);
		else if (!S_ISDIR(checked[*npresent].type))
			rc = usage_error("%s: not a directory", root);
		else
			present[(*npresent)++] = root;
	}
	guard_free(&guard);
	return rc;
}

static void rm_identity(struct sbuf *id, const struct rm_opts *o)
{
	job_identity(id, "rm");
	identity_add_operands(id, o->roots, o->nroots);
	ser_u64(id, o->dry_run);
	identity_add_excludes(id, &o->jo);
}

static void summary_text(struct rm *c, enum run_result res, double el, uint64_t files, uint64_t dirs, uint64_t errors,
			 FILE *out)
{
	char a[32], b[32], e[32], r[32];
	unsigned runs = (unsigned)rm_sessions(c);
	char whole[96] = "";
	if (!c->dry_run && c->tally && !rm_exact(c))
		snprintf(whole, sizeof(whole), " (at least: an earlier run's count of what it removed was lost)");
	else if (!c->dry_run && runs > 1)
		snprintf(whole, sizeof(whole), " (whole job, %u runs)", runs);
	fprintf(out, "rm%s%s: %s %s and %s %s %s%s; %s %s; %.2f s, %s entries/s\n",
		c->dry_run ? " (dry run)" : "", res == RUN_DONE ? "" : " stopped", fmt_count(a, files),
		plural(files, "file", "files"), fmt_count(b, dirs), plural(dirs, "directory", "directories"),
		c->dry_run ? "would be removed" : "removed", whole, fmt_count(e, errors), plural(errors, "error", "errors"), el,
		fmt_count(r, el > 0 ? (uint64_t)((files + dirs) / el) : 0));
}

static void summary_json(struct rm *c, struct sbuf *doc, const struct rm_opts *o, enum run_result res, double el,
			 uint64_t files, uint64_t dirs, uint64_t errors, bool inode_order)
{
	struct json j;
	json_document(&j, doc, "rm");
	json_open(&j, "roots", '[');
	for (size_t i = 0; i < o->nroots; i++)
		json_bytes(&j, NULL, o->roots[i], strlen(o->roots[i]));
	json_close(&j, ']');
	json_bool(&j, "dry_run", c->dry_run);
	json_bool(&j, "complete", res == RUN_DONE);
	json_u64(&j, "files", files);
	json_u64(&j, "directories", dirs);
	json_bool(&j, "counts_exact", c->dry_run || !c->tally || rm_exact(c));
	json_u64(&j, "errors", errors);
	json_u64(&j, "sessions", rm_sessions(c));
	json_bool(&j, "inode_order", inode_order);
	json_u64(&j, "threads", walk_threads(c->walk));
	if (c->ranks > 1)
		json_u64(&j, "ranks", (uint64_t)c->ranks);
	json_double(&j, "elapsed_s", el);
	json_double(&j, "entries_per_s", el > 0 ? (files + dirs) / el : 0);
	hist_json(&j, "unlink_latency", &c->unlink_lat);
	timeline_json(&j, "timeline", &c->tl);
	json_close(&j, '}');
}

/* The summary on stdout (stderr with --json -) and with --json. */
void rm_report(struct rm *c, const struct rm_opts *o, enum run_result res)
{
	bool inode_order = c->inode_order;
	double el = c->base_s + walk_elapsed(c->walk);
	uint64_t files, dirs;
	rm_counts(c, &files, &dirs);
	timeline_force(&c->tl, el, files + dirs);
	uint64_t errors = c->quiet_errors ? 0 : walk_errors(c->walk);
	struct summary sm;
	summary_text(c, res, el, files, dirs, errors, summary_open(&sm));
	summary_show(&sm, !job_json_stdout(&o->jo));
	if (o->jo.json) {
		struct sbuf doc = {0};
		summary_json(c, &doc, o, res, el, files, dirs, errors, inode_order);
		write_json_file(o->jo.json, &doc);
		sbuf_free(&doc);
	}
}

/* The walk of rm over roots: post-order, every directory removed once empty; at most rate entries
 * per second (0: no limit), with throttle. */
void rm_config(struct rm *c, const struct rm_opts *o, char **roots, size_t nroots, uint64_t rate,
	       struct throttle *throttle, struct walk_config *cfg)
{
	throttle_init(throttle, rate);
	unsigned long type = nroots ? fs_type(roots[0]) : 0;
	*cfg = (struct walk_config){
	    .roots = roots,
	    .nroots = nroots,
	    .threads = c->threads,
	    .min_threads = o->jo.threads || serial_unlinks(roots, nroots) ? 0 : cpu_count(),
	    .xdev = true,
	    .report_mounts = true,
	    .open_by_path = true, /* never into a subtree moved out of the tree, even mid-directory */
	    .restart_on_resume = true,
	    .inode_order = (c->inode_order = nroots && fs_inode_ordered(type)),
	    .excludes = o->jo.excludes,
	    .nexcludes = o->jo.nexcludes,
	    .visitor = {.ctx = c, .local_size = sizeof(struct local), .entry = rm_entry, .dir_done = rm_dir_done,
			.commit = rm_commit, .save = rm_save, .load = rm_load},
	    .errlog = &c->job.errlog,
	    .snapshot_name = job_snapshot_name(&c->job),
	    .throttle = rate ? throttle : NULL,
	};
}

/* The walk opened each operand again, by its path: it must be what was checked (not, say, a
 * symlink to / put in its place since). Nothing has been removed yet. NULL, or the one that was
 * replaced. */
const char *rm_replaced_operand(struct walk *w, char **roots, size_t nroots, const struct guard_operand *checked)
{
	for (size_t i = 0; i < nroots; i++)
		if (!guard_same(&checked[i], walk_root_fd(w, i)))
			return roots[i];
	return NULL;
}

/* Remove the operands roots (checked[i]: what each was when checked) with the job's walk, from its
 * snapshot snap (NULL: afresh), at rate entries per second. The exit code. */
int rm_walk(struct rm *c, const struct rm_opts *o, char **roots, size_t nroots, const struct guard_operand *checked,
	    const struct sbuf *snap, uint64_t rate)
{
	if (!c->dry_run && !c->tally) /* before anything is removed: it settles what the earlier runs did */
		c->tally = tally_open(c->job.ckpt ? ckpt_dir(c->job.ckpt) : NULL, 0, c->threads, snap != NULL, rm_settle,
				      NULL, &c->tally_exact);
	struct throttle throttle;
	struct walk_config cfg;
	rm_config(c, o, roots, nroots, rate, &throttle, &cfg);
	c->walk = walk_new(&cfg, snap);
	if (!c->walk)
		return EXIT_USAGE;
	const char *changed = rm_replaced_operand(c->walk, roots, nroots, checked);
	if (changed) {
		walk_free(c->walk);
		job_refused(&c->job);
		return usage_error("refusing to remove '%s': it was replaced while it was checked", changed);
	}
	struct run_hooks hooks = walk_run_hooks(c->walk, rm_progress, NULL);
	rm_ranks_pass2(c, &hooks); /* across ranks, the directories pass's snapshots */
	enum run_result res = job_execute(&c->job, &hooks);
	rm_report(c, o, res);
	int rc = job_end(&c->job, res, walk_errors(c->walk));
	if (res == RUN_DONE) {
		walk_free(c->walk);
		tally_close(c->tally);
	}
	return rc;
}

static int rm_run(void *opts)
{
	struct rm_opts *o = opts;
	struct rm c;
	memset(&c, 0, sizeof(c));
	c.dry_run = o->dry_run;
	c.rank = 0;
	c.ranks = 1;
	c.base_exact = true;
	uint64_t rate = o->jo.rate; /* the job's: across ranks, each rank's share is taken below */
	char **roots = xcalloc(o->nroots, sizeof(char *));
	struct guard_operand *checked = xcalloc(o->nroots, sizeof(*checked));
	size_t nroots = 0;
	const char *missing = NULL;
	int rc = 0;
	c.jo = &o->jo;
	if (!rm_ranks_check(&c, o, roots, checked, &nroots, &missing, &rc)) {
		free(roots);
		free(checked);
		return rc;
	}
	struct sbuf id = {0};
	rm_identity(&id, o);
	rm_ranks_identity(&id);
	/* Checked before the state is opened: a refused run writes nothing. (Across ranks, rank 0 says
	 * it; the others learn it in rm_ranks_run.) */
	if (c.rank == 0 && !rc)
		rc = removal_check_overlap(roots, nroots, "to remove");
	if (c.rank == 0 && !rc)
		rc = removal_check_own(&o->jo, "rm", &id, roots, nroots, NULL, 0, "to remove");
	if (!rc && apply_ionice(o->jo.ioprio) != 0)
		rc = EXIT_USAGE;
	if (!rc)
		rc = job_begin(&c.job, &o->jo, "rm", &id, NULL, 0);
	sbuf_free(&id);
	const struct sbuf *snap = rc ? NULL : job_snapshot(&c.job);
	if (!rc && c.rank == 0 && missing && !snap && !ckpt_started(c.job.ckpt)) {
		/* A missing operand without a job that started is an error, like rm -r's. (A job killed
		 * while it removed its finished state has a missing operand and no snapshot.) */
		ckpt_finish(c.job.ckpt); /* nothing was saved: leave no state behind */
		rc = usage_error("%s: %s", missing, strerror(ENOENT));
	}
	c.threads = threads_for(&o->jo, roots, nroots);
	rc = rm_ranks_run(&c, o, roots, nroots, checked, snap, rc, rate);
	free(checked);
	free(roots);
	return rc;
}

const struct command cmd_rm = {"rm", "remove trees in parallel, bottom-up, gently if asked; resumable",
			       sizeof(struct rm_opts), rm_parse, rm_run, rm_opts_free};
