/* outfile: checkpointed append-only output, and the record of the first output that failed (see
 * outfile.h). */
#include "report/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/signals.h"
#include "util/util.h"

static const char stdout_name[] = "standard output";

/* The first failure: written once under the lock, read after `failed` is seen set. */
static pthread_mutex_t failure_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool failed, stdout_broken;
static bool reader_gone;
static char failure_text[512];

void output_failed(const char *name, const char *op, int err)
{
	if (!strcmp(name, stdout_name))
		atomic_store(&stdout_broken, true);
	pthread_mutex_lock(&failure_lock);
	bool first = !atomic_load(&failed);
	if (first) {
		reader_gone = err == EPIPE;
		snprintf(failure_text, sizeof(failure_text), "%s could not be written (%s)", name, strerror(err));
		atomic_store(&failed, true);
	}
	pthread_mutex_unlock(&failure_lock);
	if (!first)
		return;
	if (err != EPIPE) /* a reader that has gone is no error of ours: find and fd are quiet too */
		warnx_("%s: %s: %s", name, op, strerror(err));
	sig_request_stop();
}

bool output_has_failed(void) { return atomic_load(&failed); }

bool output_reader_gone(void) { return atomic_load(&failed) && reader_gone; }

const char *output_failure(void) { return atomic_load(&failed) ? failure_text : NULL; }

int outfile_open(struct outfile *o, const char *path, int fallback_fd, bool resume, uint64_t resume_len)
{
	memset(o, 0, sizeof(*o));
	bool std = !path || !strcmp(path, "-");
	o->name = !std ? path : fallback_fd == 2 ? "standard error" : stdout_name;
	if (std) {
		o->fd = fallback_fd;
		if (o->fd == 1)
			fflush(stdout); /* what stdio holds comes first */
	} else {
		o->fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (resume ? 0 : O_TRUNC), 0644);
		if (o->fd < 0) {
			output_failed(path, "open", errno);
			return -1;
		}
		o->owned = true;
	}
	struct stat st;
	o->regular = fstat(o->fd, &st) == 0 && S_ISREG(st.st_mode);
	if (resume && o->regular) {
		if ((uint64_t)st.st_size < resume_len) {
			warnx_("%s: shorter (%lld bytes) than the checkpoint recorded (%llu): it was changed since; "
			       "remove the state to start afresh",
			       o->name, (long long)st.st_size, (unsigned long long)resume_len);
			return -1;
		}
		if (ftruncate(o->fd, resume_len) != 0 || lseek(o->fd, resume_len, SEEK_SET) < 0) {
			warnx_("%s: truncate: %s", o->name, strerror(errno));
			return -1;
		}
	}
	o->len = resume ? resume_len : 0;
	return 0;
}

/* Record a failed operation on o; errno is kept for the caller. */
static int fail(struct outfile *o, const char *op)
{
	int e = errno;
	o->failed = true;
	output_failed(o->name, op, e);
	errno = e;
	return -1;
}

int outfile_write(struct outfile *o, const void *p, size_t n)
{
	if (o->failed) {
		errno = EIO;
		return -1;
	}
	if (!n)
		return 0;
	if (write_all(o->fd, p, n) != 0)
		return fail(o, "write");
	o->len += n;
	return 0;
}

int outfile_sync(struct outfile *o)
{
	if (!o->regular || o->failed)
		return o->failed ? -1 : 0;
	return fdatasync(o->fd) == 0 ? 0 : fail(o, "fdatasync");
}

int outfile_close(struct outfile *o)
{
	int r = 0;
	if (o->owned && o->fd >= 0 && close(o->fd) != 0 && !o->failed) /* NFS reports late */
		r = fail(o, "close");
	o->fd = -1;
	return r;
}

int outfile_write_file(const char *path, const void *data, size_t len)
{
	struct outfile o;
	if (outfile_open(&o, path, 1, false, 0) != 0)
		return -1;
	int r = outfile_write(&o, data, len) == 0 && outfile_write(&o, "\n", 1) == 0 ? 0 : -1;
	return outfile_close(&o) == 0 ? r : -1;
}

FILE *summary_open(struct summary *s)
{
	memset(s, 0, sizeof(*s));
	s->f = open_memstream(&s->text, &s->len);
	if (!s->f) {
		warnx_("out of memory");
		abort();
	}
	return s->f;
}

void summary_show(struct summary *s, bool on_stdout)
{
	fclose(s->f);
	if (output_reader_gone())
		goto out;
	if (on_stdout && !atomic_load(&stdout_broken)) {
		fflush(stdout);
		if (write_all(1, s->text, s->len) == 0)
			goto out;
		output_failed(stdout_name, "write", errno);
		if (output_reader_gone())
			goto out;
	}
	(void)write_all(2, s->text, s->len);
out:
	free(s->text);
}

int output_finish(int rc)
{
	int e = fflush(stdout) != 0 ? errno : 0;
	if (e || ferror(stdout))
		output_failed(stdout_name, "write", e ? e : EIO);
	if (output_reader_gone()) {
		/* End as find does when its reader has gone: by SIGPIPE (status 141 in a shell). */
		signal(SIGPIPE, SIG_DFL);
		raise(SIGPIPE);
	}
	return rc == 0 && output_has_failed() ? 1 : rc;
}
