/* outfile: checkpointed append-only output (see outfile.h). */
#include "report/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"

int outfile_open(struct outfile *o, const char *path, int fallback_fd, bool resume, uint64_t resume_len)
{
	memset(o, 0, sizeof(*o));
	o->name = path && strcmp(path, "-") ? path : "standard output";
	if (!path || !strcmp(path, "-")) {
		o->fd = fallback_fd;
	} else {
		o->fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (resume ? 0 : O_TRUNC), 0644);
		if (o->fd < 0) {
			warnx_("%s: open: %s", path, strerror(errno));
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

int outfile_write(struct outfile *o, const void *p, size_t n)
{
	if (!n)
		return 0;
	if (write_all(o->fd, p, n) != 0)
		return -1;
	o->len += n;
	return 0;
}

int outfile_sync(struct outfile *o)
{
	if (!o->regular)
		return 0;
	return fdatasync(o->fd);
}

void outfile_close(struct outfile *o)
{
	if (o->owned && o->fd >= 0)
		close(o->fd);
	o->fd = -1;
}
