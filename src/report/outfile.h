/*
 * outfile: an append-only output stream whose length is part of a checkpoint (--output paths,
 * --errors JSON lines). A resumed run truncates the file back to the length the snapshot recorded,
 * so every line appears exactly once. Streams that cannot be truncated (a pipe, a terminal) just
 * append: after a resume they may repeat what came after the last snapshot.
 */
#ifndef MYRIAD_OUTFILE_H
#define MYRIAD_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct outfile {
	int fd;
	bool regular;   /* a regular file: truncatable, syncable */
	bool owned;     /* we opened it (close on outfile_close) */
	uint64_t len;   /* bytes written so far, across resumes */
	const char *name;
};

/*
 * Open path for writing ("-" or NULL: the given fallback fd, e.g. stdout). With resume, keep the
 * first resume_len bytes and append after them; otherwise start empty. Returns 0, or -1 with a
 * message naming the path on stderr.
 */
int outfile_open(struct outfile *o, const char *path, int fallback_fd, bool resume, uint64_t resume_len);
/* Append bytes. Returns 0, or -1 with errno. */
int outfile_write(struct outfile *o, const void *p, size_t n);
/* Make what was written durable (regular files only). */
int outfile_sync(struct outfile *o);
void outfile_close(struct outfile *o);

#endif
