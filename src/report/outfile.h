/*
 * outfile: an append-only output stream whose length is part of a checkpoint (--output paths,
 * --errors JSON lines). A resumed run truncates the file back to the length the snapshot recorded,
 * so every line appears exactly once. Streams that cannot be truncated (a pipe, a terminal) just
 * append: after a resume they may repeat what came after the last snapshot.
 *
 * Output errors are errors: the first output that fails (paths, --errors, --json, a summary on
 * standard output) is recorded here, said once on stderr, and stops the run (sig_request_stop).
 * A snapshot taken after it is never saved (it would count output that was lost), so the state
 * left is the last one before the failure and a resume writes the lost part again. A closed pipe
 * (EPIPE: the reader has gone, as with `| head`) is not an error to report: the run ends quietly,
 * its state is removed, and the process ends by SIGPIPE as find does (output_finish).
 */
#ifndef MYRIAD_OUTFILE_H
#define MYRIAD_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct outfile {
	int fd;
	bool regular;   /* a regular file: truncatable, syncable */
	bool owned;     /* we opened it (close on outfile_close) */
	bool failed;    /* a write failed: nothing more is written */
	uint64_t len;   /* bytes written so far, across resumes */
	const char *name;
};

/*
 * Open path for writing ("-" or NULL: the given fallback fd, 1 or 2). With resume, keep the first
 * resume_len bytes and append after them; otherwise start empty. Returns 0, or -1 with a message
 * naming the path on stderr.
 */
int outfile_open(struct outfile *o, const char *path, int fallback_fd, bool resume, uint64_t resume_len);
/* Append bytes. Returns 0, or -1 with errno after the failure was recorded (output_failed); once
 * failed, writes nothing more. */
int outfile_write(struct outfile *o, const void *p, size_t n);
/* Make what was written durable (regular files only). 0, or -1 with the failure recorded. */
int outfile_sync(struct outfile *o);
/* Close (if we opened it). 0, or -1 with the failure recorded (a deferred write error). */
int outfile_close(struct outfile *o);

/* Write data and a newline as the whole new content of path ("-": standard output), e.g. a JSON
 * summary. 0, or -1 with the failure recorded. */
int outfile_write_file(const char *path, const void *data, size_t len);

/* Record that operation op (write, fdatasync, close) on output name failed with err: the first
 * failure is said on stderr ("myriad walk: NAME: OP: reason"; not for EPIPE) and stops the run;
 * later ones are dropped. Thread-safe. */
void output_failed(const char *name, const char *op, int err);
/* Has an output failed? Was the first failure a closed pipe? */
bool output_has_failed(void);
bool output_reader_gone(void);
/* "NAME could not be written (reason)" for the first failure, or NULL. */
const char *output_failure(void);

/* A command's closing summary: printed into the stream summary_open gives, then shown by
 * summary_show on standard output, or on stderr when standard output carries paths or JSON. When
 * standard output fails, the failure is recorded and the summary goes to stderr. Nothing is shown
 * when the reader of an output has gone. */
struct summary {
	FILE *f;
	char *text;
	size_t len;
};
FILE *summary_open(struct summary *s);
void summary_show(struct summary *s, bool on_stdout);

/* At exit: flush standard output (recording a failure), then end by SIGPIPE when a reader has
 * gone. Returns the exit code: rc, or 1 instead of 0 when an output failed. */
int output_finish(int rc);

#endif
