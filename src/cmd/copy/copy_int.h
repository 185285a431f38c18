/*
 * copy_int: what the files of myriad copy share, and nothing outside them includes. The command
 * (copy.c: options, run, progress, summary) fills one struct copy; the walk's visitor (copy_visit.c)
 * hands each worker a struct local and, for each entry, gathers what describes it in a struct
 * copy_at, which it hands to the parts named below: DST directories (copy_dst.c), making entries
 * (copy_make.c) with their metadata (copy_meta.c), hard links (copy_link.c), --check
 * (copy_check.c), --delete (copy_delete.c), the operands checked before the walk
 * (copy_operands.c), and the messages and paths every part reports with (copy_msg.c).
 */
#ifndef MYRIAD_CMD_COPY_INT_H
#define MYRIAD_CMD_COPY_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "job/job.h"
#include "util/throttle.h"
#include "engine/walk.h"
#include "io/prefetch.h"
#include "io/copy.h"
#include "io/guard.h"
#include "report/errlog.h"
#include "state/linkmap.h"
#include "state/tally.h"
#include "util/exclude.h"
#include "util/sbuf.h"
#ifdef MYRIAD_MPI
#include "job/jobspread.h"
#endif

struct local {
	uint64_t files, dirs, links, others, bytes, skipped, deleted, seen_entries, seen_bytes, ahead;
	struct tally_slot *slot; /* this worker's counts of the whole job (claimed at its first entry) */
	bool claimed;
	/* The DST directory of the last SRC directory visited (kept across commits). */
	struct sbuf cpath;
	int cfd;
	bool cvalid;
	/* That DST directory was empty when this worker opened it (copying, not checking): every name
	 * in it was made by this run, which makes each name once, when it visits it, so a name about
	 * to be visited is not there yet and needs no stat. */
	bool cfresh;
	/* And it is neither setgid nor has a default ACL: what is created in it gets exactly the mode
	 * asked for (less the umask) and this process's owner and group. */
	bool cplain;
	/* Why it could not be opened, and whether no caller has reported that yet. */
	int cerr;
	bool cuntold;
	/* Small files of the next entries, read together (copy_prepare; NULL: not here, or no
	 * io_uring), and what copy_open_src took of it for the entry being copied (pre.data NULL: read
	 * it from the fd). */
	struct prefetch *pf;
	bool pf_tried;
	struct prefetched pre;
};

struct copy {
	bool dry_run, check, del, root, xdev;
	dev_t src_dev;
	uint64_t dst_mnt; /* DST's mount: --delete never enters nor removes a directory on another */
	struct guard guard; /* / and the working directory's chain: never removed from DST */
	bool max_delete_set;
	uint64_t max_delete;
	_Atomic uint64_t delete_budget; /* deletions --max-delete still allows */
	atomic_bool max_delete_hit;
	struct tally *tally; /* what every run of the job copied and deleted (NULL: --check, --dry-run) */
	bool tally_exact;    /* false: an earlier run's tally was lost; counts are the snapshot's */
	mode_t umask;
	uid_t uid;
	gid_t gid;
	uint64_t max_errors;
	char *src, *dst;
	char *roots[1]; /* the walk's: SRC */
	int dstfd;
	char *const *excludes;
	size_t nexcludes;
	struct excludes excl; /* the same, compiled, for DST's entries */
	struct throttle bw;
	pthread_mutex_t link_lock;
	struct linkmap *links;
	const char *link_dir; /* where it spills (NULL: $TMPDIR) */
	struct sbuf link_path; /* the first name of a linked inode (link_lock) */
	atomic_bool link_failed_said, stopping;
	atomic_uint_fast64_t failed;
	uint64_t files, dirs, nlink_made, others, bytes, skipped, deleted;
	uint64_t ahead; /* files of this run whose data came from copy_prepare's read-ahead */
	/* For the progress line, this run's (a resume walks again): data bytes moved so far (counted as
	 * they move), entries visited and allocated bytes of those not copied (both as batches commit),
	 * when it began; what SRC's filesystem holds when SRC is one (0: unknown). */
	_Atomic uint64_t live_bytes;
	uint64_t seen_entries, seen_bytes, run_start_ns, fs_entries, fs_bytes;
	struct walk *walk;
	struct job job;
	bool prefetch; /* copy_prepare reads small files ahead (see there) */
	int threads;   /* the walk's workers (at most) */
	/* Across the ranks of an MPI job (copy.c, copy_spread): this rank and their number (0 of 1 in
	 * one process); spread: the copy runs in two passes, the files pass on every rank, then rank
	 * 0's pass over the whole tree (see there). */
	int rank, ranks;
	bool spread, files_pass, after_files_pass;
	bool made_dst; /* rank 0: this run made DST (a refused job removes it) */
	/* On rank 0 once the files pass is over: what it did on the other ranks (their tallies) and on
	 * all (entries found up to date, files read ahead), its time and sessions. */
	uint64_t base_files, base_links, base_others, base_bytes, base_skipped, base_ahead, base_sessions;
	bool base_exact;
	double base_s;
	uint64_t *rank_entries; /* on rank 0: the entries each rank visited in this run's files pass */
#ifdef MYRIAD_MPI
	struct job_spread js;
	struct errlog quiet;    /* the files pass's failures: counted apart, never shown */
	struct job_pass2 pass2; /* rank 0's pass: its snapshots */
#endif
};

enum { T_FILES, T_LINKS, T_OTHERS, T_BYTES, T_DELETED }; /* the tally's counters */

/* What a new entry already has when it is made in DST directory l->cfd (see copy_create_entry). */
enum { HAS_OWNER = 1, HAS_MODE = 2 };

/* The entry being copied now, as bfs's bftw_state is the file being visited: what every part needs
 * to act on it and to report about it, built once per entry by the visitor (copy_entry), or once
 * per directory with e NULL once its contents are done (copy_dir_done). The helpers below take it
 * and at most a few other arguments; those that learn something for the next (the DST entry made,
 * the operation that failed) leave it here. */
struct copy_at {
	struct copy *c;
	struct local *l;            /* the worker's */
	const struct walk_dir *d;   /* SRC's directory */
	const struct walk_entry *e; /* the entry in d (NULL: d itself) */
	struct errbatch *errs;      /* where failures and problems go */
	int dfd;                    /* DST's twin of d (-1: none, which only --dry-run goes on without) */
	const struct stat *have;    /* what DST has at e's name (NULL: nothing) */
	bool done;                  /* that is e, up to date (copy_up_to_date) */
	unsigned has;               /* what a new entry gets without asking (HAS_*: copy_given_meta) */
	int in, out;                /* the SRC file open for reading, the DST entry made (-1: none) */
	const char *op;             /* the operation under way: the one a failure names */
};

/* ---- messages and paths (copy_msg.c) ---- */

/* Report a failed operation on path; stop on a full DST (state saved, exit 3) or at --max-errors. */
void copy_fail(const struct copy_at *a, const struct sbuf *path, const char *op, int err);
/* Report an entry that is wrong though no call failed (a difference, a change while copied); it
 * counts toward --max-errors except with --check. */
void copy_problem(const struct copy_at *a, const struct sbuf *path, const char *what, const char *detail);
/* copy_fail with the path of name in a->d (NULL: a->d itself) on the side op works on (copy_op_path). */
void copy_fail_op(const struct copy_at *a, const char *name, const char *op, int err);
/* The relative path of directory d under its operand ("" for the operand). */
const char *copy_rel_of(const struct walk_dir *d, size_t *len);
/* DST's path of name in d (NULL: d itself), into b: for messages. */
void copy_dst_path(struct sbuf *b, const struct copy *c, const struct walk_dir *d, const char *name);
/* SRC's path of name in d (NULL: d itself), into b. */
void copy_src_path(struct sbuf *b, const struct walk_dir *d, const char *name);
/* The path of name in a->d (NULL: a->d itself) on the side operation op works on: SRC for reads,
 * DST for the rest. */
void copy_op_path(struct sbuf *b, const struct copy_at *a, const char *name, const char *op);

/* Does an --exclude pattern match entry name of dirfd, of type dtype (copy.c)? Extras and the
 * empty-SRC check leave such alone. */
bool copy_excluded(const struct copy *c, int dirfd, const char *name, unsigned char dtype);

/* ---- DST directories (copy_dst.c) ---- */

/* DST's directory for SRC directory d, cached per worker (l->cfd, with l->cfresh and l->cplain
 * said once on opening): an fd, or -1 with errno, told to one caller only (see copy_prepare). */
int copy_dst_dir(struct copy *c, struct local *l, const struct walk_dir *d);

/* ---- metadata (copy_meta.c) ---- */

/* Do a statx time and a stat time agree to the nanosecond? */
bool copy_same_time(const struct statx_timestamp *a, const struct timespec *b);
/* Are the SRC entry and its DST twin of the same type? */
bool copy_same_type(const struct statx *s, const struct stat *d);
/* Is the DST entry finished: same type, and for a non-directory same size and mtime? A file gets
 * its mtime last, so this is what lets a resumed run skip it. */
bool copy_up_to_date(const struct statx *s, const struct stat *d);
/* What the entry, made in DST directory l->cfd, gets without asking (HAS_*), so set_meta can skip
 * a chown or a chmod for it. */
unsigned copy_given_meta(const struct copy_at *a);
/* Owner, xattrs and ACLs, mode, then (times) times, after s, on the DST entry (a->out, or e's name
 * in a->dfd; with e NULL, the directory a->dfd), skipping what a->has says it has. sx: the
 * source's xattrs. 0, or -1 with errno and a->op. */
int copy_set_meta(struct copy_at *a, const struct statx *s, const struct xref *sx, bool times);
/* A finished entry (a->have): fix a mode or owner that changed since (cheap, both are known). */
void copy_touch_up(const struct copy_at *a);

/* ---- making entries (copy_make.c) ---- */

/* This worker's slot in the job's tally (NULL without one), claimed at its first use. */
struct tally_slot *copy_slot(struct copy *c, struct local *l);
/* Announce the entry to the tally (counter k) before it is finished, so that a kill between the
 * two is settled by copy_settle on the next run. */
struct tally_slot *copy_announce(const struct copy_at *a, unsigned k);
/* The tally's settle callback: counts the entry a killed run was finishing when DST has it done. */
void copy_settle(void *ctx, unsigned counter, const char *rec, size_t len, uint64_t since, uint64_t *totals);
/* Open the source file for reading (or take it from the read-ahead) into a->in: that fd, INT_MAX
 * for a non-file, or -1 reported. */
int copy_open_src(struct copy_at *a);
/* Create the DST entry with no metadata yet but a->has (a file: opened into a->out). 0 or -1,
 * a->op set. */
int copy_create_entry(struct copy_at *a);
/* Fill a created file (a->out) from a->in, finish it and close both. true when it failed
 * (reported). */
bool copy_fill_file(struct copy_at *a);
/* Make way for the new entry where DST has a->have. 0; -1 with errno and a->op; 1 failed, reported. */
int copy_clear_dst(struct copy_at *a);
/* Copy a non-directory into a->dfd, replacing a->have. true when it failed (reported). */
bool copy_make_entry(struct copy_at *a);

/* ---- hard links (copy_link.c) ---- */

/* An entry with more links: link it to its inode's first DST name, or be that first name. 0 when
 * handled (*failed set), 1 when the caller copies it as a plain entry. */
int copy_hard_link(struct copy_at *a, bool *failed);
/* --dry-run: count a name of an inode with more links as copy_hard_link would (a->have: DST's
 * name; a->done: up to date). true when counted; false: the caller counts it as a plain entry. */
bool copy_dry_link(const struct copy_at *a);
/* --check: NULL when DST links the name (a->have) as SRC does, else what differs. */
const char *copy_check_links(const struct copy_at *a);

/* ---- --check (copy_check.c) ---- */

/* Compare an entry with its DST twin (a->have, NULL: missing); report a difference. true when it
 * differs or failed. A directory's own metadata waits for copy_check_dir. */
bool copy_check_entry(struct copy_at *a);
/* Compare directory a->d's metadata (sfd) with its DST twin's (a->dfd), once its contents are done. */
void copy_check_dir(const struct copy_at *a, int sfd);

/* ---- --delete (copy_delete.c) ---- */

/* Delete name in DST directory a->dfd and all under it: counted, taken from --max-delete, never
 * below a mount point. 0, or -1 (reported). */
int copy_delete_tree(struct copy_at *a, const char *name);
/* Entries of DST directory a->dfd that SRC directory sfd lacks: deleted (--delete), counted (with
 * --dry-run) or reported (--check). */
void copy_extras(struct copy_at *a, int sfd);
/* Is DST directory a->dfd on another mount than DST? Then --delete leaves it alone (its root is
 * reported). */
bool copy_dst_mount(const struct copy_at *a);

/* ---- operands (copy_operands.c) ---- */

/* Check SRC and DST before anything is written: both directories, neither inside the other (by
 * identity); with --delete, DST through removal's guards (not "link/", not /) and an empty SRC only
 * with --max-delete. Sets c->guard (guard_free it). 0 or an exit code. */
int check_operands(struct copy *c);

/* ---- the walk's visitor (copy_visit.c) ---- */

/* The callbacks of struct walk_visitor (engine/walk.h), with struct copy as ctx and struct local
 * as each worker's local. */
bool copy_entry(void *ctx, void *lp, const struct walk_dir *d, const struct walk_entry *e, struct errbatch *errs);
void copy_prepare(void *ctx, void *lp, const struct walk_dir *d, const struct walk_entry *es, size_t n);
void copy_local_free(void *ctx, void *lp);
bool copy_dir_done(void *ctx, void *lp, const struct walk_dir *d, bool keep, struct errbatch *errs);
void copy_commit(void *ctx, void *lp);

#endif
