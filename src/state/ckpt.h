/*
 * ckpt: the one checkpoint mechanism every long command uses. It owns the state directory
 * (--state DIR, or by default $XDG_STATE_HOME/myriad/CMD-HASH, /var/lib/myriad/CMD-HASH for root,
 * keyed by the command's identity: its name, absolute operands and result-affecting options), the
 * lock that refuses a second run on the same state, and atomic snapshots (temporary file, fsync,
 * rename, fsync of the directory). What goes into a snapshot is the command's business: ckpt
 * stores opaque blobs (see ser.h for their format).
 */
#ifndef MYRIAD_CKPT_H
#define MYRIAD_CKPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "util/sbuf.h"

struct ckpt;

/*
 * Open and lock the state directory for a job. identity is the job's canonical description
 * (it is hashed for the default directory name and compared on resume); summary is a readable
 * one-line command kept beside the state for humans, written (with the pid in the lock) along with
 * the first snapshot, so that a run refused before it changes nothing of an earlier run's state. A directory is used only when it is new,
 * empty, marked as myriad's (its myriad-state file), or an older myriad's state (only myriad's
 * files, a real job's identity and snapshot); an empty or old one gets the marker. Returns NULL
 * with a message on stderr, having created, changed and removed nothing in a directory that is
 * none of these, or when the directory cannot be made or another run holds the lock.
 */
struct ckpt *ckpt_open(const char *cmd, const char *state_dir, const struct sbuf *identity,
		       const char *summary);

/* What a state directory tells of its job, for the resume notice and `myriad jobs`. */
struct ckpt_info {
	char *command;        /* the last run's command line (its bytes, no newline), or NULL */
	char *progress;       /* the progress line at the last snapshot, or NULL (an older myriad's) */
	time_t started;       /* when the job was first started (its marker was written); 0: unknown */
	time_t snapshot_time; /* of the last snapshot; 0: none */
	uint64_t snapshot_bytes;
	time_t last_written;  /* the newest of its files: a job's age is counted from here */
	uint64_t disk_bytes;  /* allocated by its files */
	bool has_identity;    /* a run saved its identity: it got as far as its first snapshot */
	bool running;         /* a live run holds its lock */
	long pid;             /* the pid written in the lock (0: none) */
};

void ckpt_info_free(struct ckpt_info *in);

/*
 * Describe the state directory dir without changing it: 1 with *in filled, 0 when dir is not a
 * directory carrying myriad's marker (why says what it is), -1 with errno when it cannot be read.
 */
int ckpt_inspect(const char *dir, struct ckpt_info *in, char *why, size_t whylen);

enum ckpt_remove_result { CKPT_REMOVED, CKPT_BUSY, CKPT_NOT_OURS, CKPT_ERROR };

/*
 * Remove the state directory dir as a finished job would (only myriad's names; the directory itself
 * when myriad made it), holding its lock meanwhile. Refused (CKPT_BUSY, *pid set) while a live run
 * holds the lock, and (CKPT_NOT_OURS, why set) for a directory without myriad's marker; CKPT_ERROR
 * with errno. *in, when not NULL, is what it held.
 */
enum ckpt_remove_result ckpt_remove(const char *dir, struct ckpt_info *in, char *why, size_t whylen);

/* Where state directories go by default: $XDG_STATE_HOME/myriad (~/.local/state/myriad), or
 * /var/lib/myriad for root without XDG_STATE_HOME (malloc'd). */
char *ckpt_default_base(void);

/* The directory ckpt_open would use: state_dir, or the default one for cmd and identity (malloc'd). */
char *ckpt_dir_for(const char *cmd, const char *state_dir, const struct sbuf *identity);

/* The directory in use, and the path of its snapshot (for messages). */
const char *ckpt_dir(const struct ckpt *c);
const char *ckpt_snapshot_path(const struct ckpt *c);

/*
 * Read the last snapshot into buf. Returns 1 when there is one, 0 when there is none (a fresh
 * start), -1 when it cannot be read, is not a whole blob (truncated, corrupt: see ser_check) or
 * belongs to another job (message on stderr naming the file and what is wrong).
 */
int ckpt_load(struct ckpt *c, struct sbuf *buf);

/*
 * After ckpt_load found no snapshot: had an earlier run of this job started (its identity is
 * there)? Then it was killed before its first snapshot, or while ckpt_finish removed the state of
 * a finished job: the job's work may be done although nothing says so.
 */
bool ckpt_started(const struct ckpt *c);

/* Open (creating it) a file of the job's own beside the snapshot, for reading and writing: one of
 * the names ckpt.c lists (removed with the state), never through a link. fd, or -1 with errno. */
int ckpt_open_file(const struct ckpt *c, const char *name);

/* Replace the snapshot atomically and durably. 0, or -1 with a message on stderr. */
int ckpt_save(struct ckpt *c, const void *data, size_t len);

/* Keep the progress line of the snapshot just saved beside it, for humans (not durably: it only
 * informs). */
void ckpt_save_progress(struct ckpt *c, const char *line, size_t len);

/* What the directory held of an earlier run when ckpt_open took it (NULL: nothing, it was new or
 * empty). */
const struct ckpt_info *ckpt_previous(const struct ckpt *c);

/* Start the job over (--fresh): discard the earlier run's snapshot and identity, and date the job's
 * start from now. 0, or -1 with a message on stderr. */
int ckpt_discard(struct ckpt *c);

/* The job finished: remove myriad's files (nothing else), and the directory when myriad made it and
 * it is then empty; release the lock, free. The identity goes last but for the lock and the marker:
 * until it is gone, a run killed in here is seen as started. */
void ckpt_finish(struct ckpt *c);

/* The job stopped early: keep the snapshot, release the lock, free. */
void ckpt_close(struct ckpt *c);

/*
 * The absolute, resolved form of p into out (PATH_MAX bytes). p may not exist (yet, or any more):
 * then its parent is resolved and its last component appended, so a job names the same path before
 * it creates an operand and after it removed one. false with errno when even the parent fails.
 */
bool path_resolve(const char *p, char *out);

/* Is path (absolute, resolved) inside dir (absolute, resolved) or equal to it? */
bool path_inside(const char *path, const char *dir);

#endif
