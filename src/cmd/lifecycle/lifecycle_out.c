/*
 * lifecycle_out: whose directory --out is. lifecycle writes there (results.json, report.html,
 * logs/, made.list, e2fsck-scratch.conf) and its start-up clean-up acts on what made.list lists,
 * so it takes only a directory that is new, empty, or its own: one holding its mark
 * (.myriad-lifecycle, written when it takes a directory) or, made before the mark existed, a
 * results.json that loads as lifecycle's. In its own, each file it writes over must still be its
 * own kind (a report of myriad's, its record, its config). Anything else is refused before
 * anything is made, naming the entry that is not lifecycle's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmds.h"
#include "job/job.h"
#include "cmd/lifecycle/lifecycle.h"
#include "cmd/lifecycle/lifecycle_record.h"
#include "lifecycle/page.h"
#include "lifecycle/results.h"
#include "util/util.h"

#define MARK_TEXT "myriad lifecycle's --out directory: results.json, report.html, logs/ and made.list here are its own\n"
#define SCRATCH_CONF_HEAD "# written by myriad lifecycle"

/* Does the file name in dir begin with head? (Not following a symlink: a link is not ours.) */
static bool out_file_starts(const char *dir, const char *name, const char *head)
{
	char p[4200], buf[256];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	int fd = open(p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	size_t len = strlen(head);
	ssize_t n = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, buf, len) : -1;
	if (fd >= 0)
		close(fd);
	return n == (ssize_t)len && !memcmp(buf, head, len);
}

/* Why entry name of lifecycle's own dir (marked or not) is not lifecycle's, or NULL when it is (or
 * is not one lifecycle writes: left alone). A results.json that does not load is lifecycle's only
 * in a marked directory: one its crash damaged, kept aside as results.json.bad*. */
static const char *out_entry_refusal(const char *dir, const char *name, bool marked, char *why, size_t n)
{
	char p[4200];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if (lstat(p, &st) != 0)
		return NULL;
	if (!strcmp(name, "results.json")) {
		char err[200];
		struct lc_results *r = S_ISREG(st.st_mode) ? lc_load(p, err, sizeof(err)) : NULL;
		if (!S_ISREG(st.st_mode))
			snprintf(err, sizeof(err), "not a regular file");
		lc_free(r);
		if (r || (marked && S_ISREG(st.st_mode)))
			return NULL;
		snprintf(why, n, "does not load as lifecycle's results (%s)", err);
		return why;
	}
	if (!strcmp(name, "report.html"))
		return lc_page_is_report(p) ? NULL : "is not a report of myriad's";
	if (!strcmp(name, "logs"))
		return S_ISDIR(st.st_mode) ? NULL : "is not a directory";
	if (!strcmp(name, LC_RECORD_NAME))
		return lc_record_is_ours(p) ? NULL : "is not lifecycle's record of what it made";
	if (!strcmp(name, "e2fsck-scratch.conf"))
		return out_file_starts(dir, name, SCRATCH_CONF_HEAD) ? NULL : "is not the e2fsck config lifecycle writes";
	if (!strcmp(name, LC_MARK_NAME))
		return out_file_starts(dir, name, MARK_TEXT) ? NULL : "is not lifecycle's mark";
	return NULL;
}

/* Refuse --out for the entry name and why. EXIT_USAGE. */
static int out_refuse(const struct lc *x, const char *name, const char *why)
{
	warnx_("refusing --out %s: %s/%s %s: choose another --out (new or empty), or remove %s/%s", x->out, x->out,
	       name, why ? why : "is not lifecycle's", x->out, name);
	return EXIT_USAGE;
}

/* An entry of dir other than . and .., or NULL when it is empty; sets *marked and *loads (a
 * results.json that loads as lifecycle's). -1 in *err when it cannot be read. */
static char *out_scan(const char *dir, bool *marked, bool *loads, int *err)
{
	DIR *d = opendir(dir);
	char *first = NULL, p[4200], e[64];
	struct dirent *de;
	*err = d ? 0 : errno;
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!first || !strcmp(de->d_name, "results.json")) {
			free(first);
			first = xstrdup(de->d_name);
		}
	}
	if (d)
		closedir(d);
	*marked = out_file_starts(dir, LC_MARK_NAME, MARK_TEXT);
	snprintf(p, sizeof(p), "%s/results.json", dir);
	struct lc_results *r = first ? lc_load(p, e, sizeof(e)) : NULL;
	*loads = r != NULL;
	lc_free(r);
	return first;
}

/* Say (--dry-run) what lifecycle would do with its own --out. */
static void out_say_own(const struct lc *x, bool marked, bool loads)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/results.json", x->out);
	if (!loads && access(p, F_OK) == 0)
		printf("out: %s is lifecycle's (%s); its results.json does not load: it would be kept as "
		       "results.json.bad (or .bad.N, a name not taken) and the run would start afresh\n",
		       x->out, LC_MARK_NAME);
	else
		printf("out: %s is lifecycle's (%s): its complete cycles are not run again\n", x->out,
		       marked ? LC_MARK_NAME : "its results.json");
}

/* lifecycle's own --out (marked or not): is each file it writes over still of its kind? -1 when
 * it is, else EXIT_USAGE (said). */
static int out_check_own(const struct lc *x, bool marked)
{
	static const char *const written[] = {"results.json", "report.html", "logs", LC_RECORD_NAME,
					      "e2fsck-scratch.conf", LC_MARK_NAME};
	char why[300];
	for (size_t i = 0; i < sizeof(written) / sizeof(*written); i++) {
		const char *no = out_entry_refusal(x->out, written[i], marked, why, sizeof(why));
		if (no)
			return out_refuse(x, written[i], no);
	}
	return -1;
}

int lc_out_check(const struct lc *x)
{
	struct stat st;
	if (stat(x->out, &st) != 0) {
		if (errno != ENOENT)
			return usage_error("--out %s: %s", x->out, strerror(errno));
		if (x->dry_run)
			printf("out: %s is new: it would be made\n", x->out);
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return usage_error("--out %s: not a directory", x->out);
	bool marked, loads;
	int err;
	char *first = out_scan(x->out, &marked, &loads, &err), why[300];
	int rc = -1;
	if (err)
		rc = usage_error("--out %s: %s", x->out, strerror(err));
	else if (first && !marked && !loads && strcmp(first, "results.json") != 0)
		rc = out_refuse(x, first, "is not lifecycle's (the directory has no " LC_MARK_NAME
					  " nor a results.json of lifecycle's)");
	else if (first && !marked && !loads)
		rc = out_refuse(x, first, out_entry_refusal(x->out, first, false, why, sizeof(why)));
	else if (first)
		rc = out_check_own(x, marked);
	if (rc < 0 && x->dry_run && !first)
		printf("out: %s is empty\n", x->out);
	else if (rc < 0 && x->dry_run)
		out_say_own(x, marked, loads);
	free(first);
	return rc;
}

int lc_out_mark(const char *out)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/" LC_MARK_NAME, out);
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno == EEXIST && out_file_starts(out, LC_MARK_NAME, MARK_TEXT) ? 0 : -1;
	int rc = write_all(fd, MARK_TEXT, strlen(MARK_TEXT)) == 0 && fsync(fd) == 0 ? 0 : -1;
	int e = errno;
	close(fd);
	errno = e;
	return rc;
}

int lc_out_keep_bad(const char *path, char *kept, size_t n)
{
	for (int k = 0; k < 1000; k++) {
		if (k)
			snprintf(kept, n, "%s.bad.%d", path, k);
		else
			snprintf(kept, n, "%s.bad", path);
		if (renameat2(AT_FDCWD, path, AT_FDCWD, kept, RENAME_NOREPLACE) == 0)
			return 0;
		if (errno == EEXIST)
			continue;
		if (errno != EINVAL && errno != ENOSYS)
			return -1;
		/* A filesystem without RENAME_NOREPLACE: link (which never replaces), then unlink. */
		if (link(path, kept) == 0)
			return unlink(path);
		if (errno != EEXIST)
			return -1;
	}
	errno = EEXIST;
	return -1;
}
