/*
 * copy_msg: how myriad copy reports. A failed call (copy_fail) or a wrong entry (copy_problem) goes
 * to the error log with the path it concerns, on the side it concerns (SRC for reads, DST for the
 * rest); a full DST and --max-errors stop the copy here, with state saved, so that the next run
 * goes on from where it stopped.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

#include "cmd/copy/copy_int.h"
#include "util/util.h"

/* Stop the copy (once): say why, at length in message, in short in the final line. */
static void request_stop(struct copy *c, const char *message, const char *reason)
{
	if (atomic_exchange(&c->stopping, true))
		return;
	warnx_("%s", message);
	c->job.stop_reason = reason;
	raise(SIGTERM); /* the run loop takes the final snapshot and exits 3 */
}

static bool out_of_room(int e) { return e == ENOSPC || e == EDQUOT; }

/* Report a failed operation on path; stop on a full DST or at --max-errors. */
void copy_fail(const struct copy_at *a, const struct sbuf *path, const char *op, int err)
{
	struct copy *c = a->c;
	if (out_of_room(err) && !c->dry_run && !c->check) {
		/* Not a failed entry: the copy stops and the next run copies it. */
		static const char *const reasons[] = {"destination over quota", "destination out of inodes",
						      "destination out of space"};
		const char *reason = reasons[err == EDQUOT ? 0 : !strcmp(full_resource(c->dstfd), "inodes") ? 1 : 2];
		struct sbuf m = {0};
		escape_path(&m, path->data, path->len);
		sbuf_printf(&m, ": %s: %s: the destination is %s (%s, then run the same command again)", op,
			    strerror(err), reason + strlen("destination "), err == EDQUOT ? "raise it" : "free some");
		request_stop(c, m.data, reason);
		sbuf_free(&m);
		return;
	}
	errlog_report(a->errs, path->data, path->len, op, err);
	if (c->max_errors && atomic_fetch_add(&c->failed, 1) + 1 >= c->max_errors)
		request_stop(c, "--max-errors reached", "--max-errors reached");
}

void copy_problem(const struct copy_at *a, const struct sbuf *path, const char *what, const char *detail)
{
	struct copy *c = a->c;
	errlog_problem(a->errs, path->data, path->len, what, detail);
	if (c->max_errors && !c->check && atomic_fetch_add(&c->failed, 1) + 1 >= c->max_errors)
		request_stop(c, "--max-errors reached", "--max-errors reached");
}

/* The relative path of directory d under its operand ("" for the operand). */
const char *copy_rel_of(const struct walk_dir *d, size_t *len)
{
	*len = d->pathlen - d->relstart;
	return d->path + d->relstart;
}

/* DST's path of name in d (for messages), into b. */
void copy_dst_path(struct sbuf *b, const struct copy *c, const struct walk_dir *d, const char *name)
{
	size_t rl;
	const char *rel = copy_rel_of(d, &rl);
	sbuf_clear(b);
	sbuf_adds(b, c->dst);
	if (rl) {
		sbuf_addc(b, '/');
		sbuf_add(b, rel, rl);
	}
	if (name) {
		sbuf_addc(b, '/');
		sbuf_adds(b, name);
	}
}

/* SRC's path of name in d (NULL: d itself), into b. */
void copy_src_path(struct sbuf *b, const struct walk_dir *d, const char *name)
{
	sbuf_clear(b);
	if (!name) {
		sbuf_add(b, d->path, d->pathlen);
		return;
	}
	struct walk_entry e = {name, strlen(name), 0, 0, NULL};
	walk_path(b, d, &e);
}

/* The path of name in a->d (NULL: a->d itself) on the side that operation op works on: SRC for
 * the operations that read the source, DST for every other. */
void copy_op_path(struct sbuf *b, const struct copy_at *a, const char *name, const char *op)
{
	static const char *const src_ops[] = {"read", "readlink", "listxattr", "getxattr", "statx"};
	for (size_t i = 0; i < ARRAY_LEN(src_ops); i++)
		if (!strcmp(op, src_ops[i])) {
			copy_src_path(b, a->d, name);
			return;
		}
	copy_dst_path(b, a->c, a->d, name);
}

/* The path is made here, after err was taken: building it may change errno. */
void copy_fail_op(const struct copy_at *a, const char *name, const char *op, int err)
{
	struct sbuf p = {0};
	copy_op_path(&p, a, name, op);
	copy_fail(a, &p, op, err);
	sbuf_free(&p);
}
