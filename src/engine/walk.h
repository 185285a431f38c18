/*
 * walk: the one traversal engine. N worker threads read directories with getdents64 into large
 * buffers and hand every entry to a visitor (count, print, check, unlink, copy: the command's
 * action). No per-entry state is kept: the only memory that grows is the frontier of directories
 * not yet read, and that is bounded, because a worker that finds the frontier over its high-water
 * mark parks the directory it is reading (its path and the getdents cookie where it stopped) and
 * goes deeper first.
 *
 * Work is committed in batches (a getdents buffer or several) under one engine lock: the
 * visitor's counters and output, the failures, the children found and the reading position of the
 * directory advance together. A snapshot taken under that lock is therefore exact, and a resumed
 * walk — directories re-opened by path and seeked to their cookie — ends with exactly the result
 * of an uninterrupted one.
 */
#ifndef MYRIAD_WALK_H
#define MYRIAD_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "engine/run.h"
#include "util/throttle.h"
#include "report/errlog.h"
#include "state/ser.h"

/* The directory whose entries are being visited. */
struct walk_dir {
	const char *path; /* as printed: the operand, then "/name" per level */
	size_t pathlen;
	int fd;           /* open for reading (-1 in dir_done) */
	unsigned root;    /* which operand it is under */
	int rootfd;       /* the operand, open */
	size_t relstart;  /* path + relstart is the path relative to rootfd ("" for the operand) */
	bool unread;      /* in dir_done: it could not be opened or read to the end (reported) */
	bool mount;       /* in dir_done, with xdev: a mount point (another filesystem or a bind
			   * mount), not walked into */
	void *state;      /* with visitor.dir_state: this directory's state. In entry, only to be
			   * remembered (the visitor writes it in commit, under the engine lock, so that
			   * a snapshot is exact); complete, read-only, in dir_done */
};

/* One entry. stx is set when the walk stats entries (walk_config.stat_mask). An entry whose stat
 * failed (already reported; its directory is kept) is still visited, with stx NULL and its type
 * from the directory, which is DT_UNKNOWN where the filesystem gave none; it is never entered. */
struct walk_entry {
	const char *name;
	size_t namelen;
	unsigned char type; /* DT_*; DT_UNKNOWN only when its stat failed */
	uint64_t ino;
	const struct statx *stx;
};

/* Entries are statted and visited a chunk of at most this many at a time (in inode order where
 * the walk sorts them), so a visitor's prepare sees the next entries before visiting them. */
#define WALK_CHUNK 64

struct walk_visitor {
	void *ctx;
	size_t local_size; /* bytes of per-worker batch state, zeroed at start */
	/* Visit one entry (in a worker, no lock held). d is NULL for an operand itself, whose path is
	 * then the entry's name. errs collects failures of the visit. Returns true when the entry
	 * stays in place although the visitor wanted it gone (post-order walks keep its parents). */
	bool (*entry)(void *ctx, void *local, const struct walk_dir *d, const struct walk_entry *e,
		      struct errbatch *errs);
	/* Optional: called right after entry for a directory the walk would go into (same worker, no
	 * lock held); false: it is not entered (find's -prune and -maxdepth). */
	bool (*enter)(void *ctx, void *local, const struct walk_dir *d, const struct walk_entry *e);
	/* Optional: called (no lock held) with the next n entries of directory d, each statted as
	 * entry will see it, before they are visited one by one in that order (with these very
	 * walk_entry objects): a chance to start their I/O together. */
	void (*prepare)(void *ctx, void *local, const struct walk_dir *d, const struct walk_entry *es, size_t n);
	/* Post-order (NULL for none): called once a directory and everything under it has been
	 * visited, deepest first, with keep set when something under it stays (an entry kept, an
	 * excluded one, a failure, a mount point). Returns true when the directory itself stays
	 * although keep was false (its removal failed): its parents then stay too. */
	bool (*dir_done)(void *ctx, void *local, const struct walk_dir *d, bool keep, struct errbatch *errs);
	/* Fold the batch into the totals and emit its output (engine lock held); reset local. */
	void (*commit)(void *ctx, void *local);
	/* Optional: release what a worker's local holds (walk_free, after the workers have ended). */
	void (*local_free)(void *ctx, void *local);
	/* Append the command's part of a snapshot / read it back (engine lock held). */
	void (*save)(void *ctx, struct sbuf *b);
	bool (*load)(void *ctx, struct deser *d);
	/*
	 * Optional, post-order only: dir_state bytes of state kept with every directory from when it
	 * is found until its dir_done has run (roll-ups such as du's totals: memory follows the open
	 * directories, not the entries). dir_init fills it (zeroed) from the directory's own entry,
	 * as its parent's entry saw it (an operand: as visited), before it is read; dir_fold adds a
	 * finished directory's state (d->state) into its parent's (engine lock held), in the same step
	 * as the commit that follows its dir_done (every dir_done is followed by a commit of its own). With dir_state and without restart_on_resume, a snapshot
	 * holds every open directory with its state, and a resume continues them exactly.
	 */
	size_t dir_state;
	void (*dir_init)(void *ctx, void *state, const struct walk_entry *e);
	void (*dir_fold)(void *ctx, void *parent, const struct walk_dir *d); /* d->state: the child's */
};

struct walk_config {
	char *const *roots;
	size_t nroots;
	int threads;           /* at most this many workers */
	int min_threads;       /* start with this many (0: threads); more join while they wait on I/O */
	bool xdev;             /* do not walk into a mount point under an operand: another filesystem,
				* or a bind mount (another mount of the same one) */
	bool xdev_by_dev;      /* with xdev: only into another filesystem (st_dev, as GNU find -xdev);
				* a bind mount of the operand's own is walked into */
	char *const *excludes; /* --exclude patterns on names (util/exclude.h: "NAME/" for directories) */
	size_t nexcludes;
	unsigned stat_mask;    /* statx every entry for these fields (0: only where d_type is unknown) */
	bool inode_order;      /* visit each buffer of entries in inode order (stat_mask implies it) */
	bool open_by_path;     /* open every directory by its path from the operand (destructive work): a
	                        * directory moved out of the tree mid-run is never followed, even by a
	                        * worker inside it. Otherwise a child is opened by name in the parent the
	                        * worker still holds (a tree of depth D costs D lookups, not D^2/2), and
	                        * a subtree moved out while a worker is inside it is read on, as find
	                        * does; one moved out before the walk reaches it is not followed. */
	bool report_mounts;    /* with xdev: report a mount point as a finding and keep it */
	bool restart_on_resume; /* a resume walks again from the operands (work that consumes the tree or
				 * skips what is done); its failures then start afresh (the --errors
				 * file too), since the new pass meets every failed entry again */
	/* One rank's share of a walk spread over processes (engine/spread): the walk does not end when
	 * it runs dry (walk_idle says so; walk_end ends it), and walk_give / walk_add move directories
	 * of its frontier to and from other ranks. Not with a post-order visitor (dir_done). With
	 * shared_empty, the operands are not visited: all its work comes from other ranks. */
	bool shared;
	bool shared_empty;
	struct walk_visitor visitor;
	struct errlog *errlog;
	struct throttle *throttle; /* entries per second, or NULL */
	const char *snapshot_name; /* the snapshot's file, for messages (NULL: "checkpoint snapshot") */
};

struct walk;

/*
 * Prepare a walk: open the operands (already checked by the command). With a snapshot (from
 * ckpt_load), restore the frontier and the visitor's state from it; otherwise visit the operands
 * themselves. Returns NULL with a message on failure (a corrupt snapshot, an operand gone).
 */
struct walk *walk_new(const struct walk_config *cfg, const struct sbuf *snapshot);

/* Operand i as walk_new opened it (by its path, following a final symlink): for a command's last
 * check, before the workers start, that it is what the command checked. */
int walk_root_fd(const struct walk *w, size_t i);

/* Start the workers (min_threads of them; the run loop's tick adds more while I/O-bound). */
void walk_start(struct walk *w);

/* Hooks for run_loop. progress and sync are the command's, called with the visitor's ctx. */
struct run_hooks walk_run_hooks(struct walk *w, void (*progress)(void *ctx, struct sbuf *line),
				void (*sync)(void *ctx));

/* After run_loop returned RUN_DONE: wait for the workers to exit. */
void walk_join(struct walk *w);

/* Free a joined (or never started) walk. */
void walk_free(struct walk *w);

/* End the walk early (find's -quit; from a visitor, no lock held): the directories not yet read
 * are dropped, the workers finish the buffer they are on and stop, and the run ends as done.
 * Post-order walks do not get dir_done for directories left unfinished. */
void walk_cancel(struct walk *w);

/* Remove directory d (after dir_done), and with any_type the non-directory that has taken its place
 * since it was read (rm removes whatever is under its operand; find -delete only what its
 * expression was true of, so a file in the directory's place stays: ENOTDIR). 0, or -1 with errno
 * (ENOENT also when a directory above it has been replaced). */
int walk_rmdir(const struct walk_dir *d, bool any_type);

/* Append the full path of entry e in directory d (d NULL: an operand) to b. */
void walk_path(struct sbuf *b, const struct walk_dir *d, const struct walk_entry *e);

/* Errors and time so far. */
uint64_t walk_errors(struct walk *w);
double walk_elapsed(struct walk *w);
/* Run sessions so far (1 + number of resumes). */
uint64_t walk_sessions(struct walk *w);
/* Append "; N workers without progress, longest S s in PATH" for workers that have spent min_s seconds
 * or more on one entry (an operation held in the kernel), or nothing. PATH is the directory the
 * entry is in (or the directory being finished, for dir_done). */
void walk_stuck(struct walk *w, struct sbuf *line, double min_s);

/* Shared walks (walk_config.shared). Is this walk idle: its frontier empty and every worker
 * waiting? It then stays so until walk_add or walk_end. */
bool walk_idle(struct walk *w);
/* Move up to max directories from the bottom of the frontier (the shallowest: the biggest
 * subtrees) into b, for another rank: half the frontier, or all of it but what an idle worker is
 * about to take. Returns how many (0: nothing to spare). A parked directory goes with its cookie.
 * With nothing to spare while workers read directories (one huge directory), it asks them to cut
 * slices off what they read for the next requests: a slice is a record of its own (a few hundred
 * entries, between two cookies), taken and checkpointed like a directory. Not for post-order
 * walks, nor for directories whose cookies do not ascend. */
size_t walk_give(struct walk *w, struct sbuf *b, size_t max);
/* Push the directories walk_give wrote (from another rank) onto the frontier; false when the
 * records are malformed (nothing pushed). */
bool walk_add(struct walk *w, const void *p, size_t len);
/* No more work will come: let the workers exit; the walk is done. */
void walk_end(struct walk *w);

/* Take a snapshot as the run loop does (without stopping the workers), calling first(arg) before
 * it under the same hold of the engine lock: what first changes (spread: it swaps a rank's output
 * parts) happens in the same step as the snapshot, between two commits. */
void walk_snapshot_then(struct walk *w, struct sbuf *b, void (*first)(void *arg), void *arg);

/* Workers started so far. */
int walk_threads(struct walk *w);

/* Take the engine lock (to read a visitor's totals consistently). */
void walk_lock(struct walk *w);
void walk_unlock(struct walk *w);

#endif
