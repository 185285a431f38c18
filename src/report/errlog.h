/*
 * errlog: how every command reports a failed entry. The failure is printed at once on stderr
 * ("myriad walk: PATH: OPERATION: reason", unprintable bytes escaped), and its JSON line
 * {"path":..., "op":..., "errno":..., "error":...} is kept in the worker's batch until the batch is
 * committed, so the --errors file and the error count stay consistent with the checkpoint.
 */
#ifndef MYRIAD_ERRLOG_H
#define MYRIAD_ERRLOG_H

#include <stdbool.h>
#include <stdint.h>

#include "report/outfile.h"
#include "util/sbuf.h"

/* A worker's uncommitted failures. */
struct errbatch {
	struct sbuf lines;
	uint64_t count;
};

struct errlog {
	const char *path; /* --errors FILE, or NULL */
	struct outfile file;
	bool have_file;
	uint64_t count; /* committed failures, across resumes */
};

/* Open the --errors file (path may be NULL: no file), fresh or, with resume, truncated back to
 * resume_len with resume_count failures already counted. Returns 0 or -1 (message printed). */
int errlog_open(struct errlog *l, const char *path, bool resume, uint64_t resume_len, uint64_t resume_count);
void errlog_close(struct errlog *l);

/* Record a failure of operation op on path (bytes) with errno err. Thread-safe, no lock needed. */
void errlog_report(struct errbatch *b, const char *path, size_t pathlen, const char *op, int err);

/*
 * Record a finding that is not a failed system call (verify: "missing", "wrong size", "corrupt",
 * "extra"): on stderr as "myriad verify: PROBLEM: PATH (detail)", as JSON
 * {"path":..., "problem":..., "detail":...}. Counted like failures.
 */
void errlog_problem(struct errbatch *b, const char *path, size_t pathlen, const char *problem, const char *detail);

/* Print at most n lines on stderr from now on (the --errors file still gets every one). */
void errlog_stderr_limit(uint64_t n);

/* Fold a batch into the log (caller holds the lock that orders commits). */
void errlog_commit(struct errlog *l, struct errbatch *b);

/* Append path to b for messages meant for people: control characters, backslashes and bytes that
 * are not part of valid UTF-8 escaped (\n, \t, \\, \xNN); valid UTF-8 as it is. */
void escape_path(struct sbuf *b, const char *path, size_t len);

#endif
