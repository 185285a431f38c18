/* errlog: failed entries on stderr and as JSON lines (see errlog.h). */
#include "report/errlog.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "report/json.h"
#include "util/util.h"

int errlog_open(struct errlog *l, const char *path, bool resume, uint64_t resume_len, uint64_t resume_count)
{
	memset(l, 0, sizeof(*l));
	l->path = path;
	l->file.fd = -1;
	l->count = resume ? resume_count : 0;
	if (!path)
		return 0;
	l->have_file = true;
	return outfile_open(&l->file, path, 2, resume, resume_len);
}

void errlog_close(struct errlog *l)
{
	if (l->have_file)
		outfile_close(&l->file);
}

void escape_path(struct sbuf *b, const char *path, size_t len)
{
	for (size_t i = 0, n; i < len; i++) {
		unsigned char c = path[i];
		if (c == '\n')
			sbuf_add(b, "\\n", 2);
		else if (c == '\t')
			sbuf_add(b, "\\t", 2);
		else if (c == '\\')
			sbuf_add(b, "\\\\", 2);
		else if (c < 0x20 || c == 0x7f)
			sbuf_printf(b, "\\x%02x", c);
		else if (c < 0x80)
			sbuf_addc(b, c);
		else if ((n = utf8_len((const unsigned char *)path + i, len - i)) != 0 &&
			 !(c == 0xc2 && (unsigned char)path[i + 1] < 0xa0))
			sbuf_add(b, path + i, n), i += n - 1; /* a whole character */
		else /* not UTF-8, or a C1 control (U+0080..U+009F): a terminal would garble or obey it */
			sbuf_printf(b, "\\x%02x", c);
	}
}

static _Atomic uint64_t stderr_left = UINT64_MAX;

void errlog_stderr_limit(uint64_t n) { stderr_left = n; }

/* May one more line go to stderr? The line after the last says that the rest are elided. */
static bool stderr_take(void)
{
	uint64_t left = stderr_left;
	while (left != UINT64_MAX && left > 0 && !atomic_compare_exchange_weak(&stderr_left, &left, left - 1)) {
	}
	if (left == 1) {
		warnx_("(further findings are not shown here; --errors FILE records them all)");
		return false;
	}
	return left > 0;
}

/* Say msg on stderr as one write (lines from several threads do not interleave), then free it. */
static void say(struct sbuf *msg)
{
	(void)write_all(2, msg->data, msg->len);
	sbuf_free(msg);
}

/* Begin b's JSON line for path; line_end closes it and counts it. */
static void line_begin(struct errbatch *b, struct json *j, const char *path, size_t pathlen)
{
	json_init(j, &b->lines);
	json_open(j, NULL, '{');
	json_bytes(j, "path", path, pathlen);
}

static void line_end(struct errbatch *b, struct json *j)
{
	json_close(j, '}');
	sbuf_addc(&b->lines, '\n');
	b->count++;
}

void errlog_report(struct errbatch *b, const char *path, size_t pathlen, const char *op, int err)
{
	if (stderr_take()) {
		struct sbuf msg = {0};
		sbuf_printf(&msg, "%s: ", prog_name);
		escape_path(&msg, path, pathlen);
		sbuf_printf(&msg, ": %s: %s\n", op, strerror(err));
		say(&msg);
	}
	struct json j;
	line_begin(b, &j, path, pathlen);
	json_str(&j, "op", op);
	json_i64(&j, "errno", err);
	json_str(&j, "error", strerror(err));
	line_end(b, &j);
}

void errlog_problem(struct errbatch *b, const char *path, size_t pathlen, const char *problem, const char *detail)
{
	if (stderr_take()) {
		struct sbuf msg = {0};
		sbuf_printf(&msg, "%s: %s: ", prog_name, problem);
		escape_path(&msg, path, pathlen);
		if (detail && *detail)
			sbuf_printf(&msg, " (%s)", detail);
		sbuf_addc(&msg, '\n');
		say(&msg);
	}
	struct json j;
	line_begin(b, &j, path, pathlen);
	json_str(&j, "problem", problem);
	json_str(&j, "detail", detail ? detail : "");
	line_end(b, &j);
}

void errlog_commit(struct errlog *l, struct errbatch *b)
{
	if (l->have_file && b->lines.len)
		(void)outfile_write(&l->file, b->lines.data, b->lines.len); /* a failure stops the run */
	l->count += b->count;
	sbuf_clear(&b->lines);
	b->count = 0;
}
