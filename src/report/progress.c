/* progress: the live status line (see progress.h). */
#include "report/progress.h"

#include <stdio.h>
#include <unistd.h>

#include "util/util.h"

void progress_init(struct progress *p, double interval_s)
{
	p->tty = isatty(2);
	p->shown = false;
	if (interval_s < 0)
		interval_s = p->tty ? 1 : 60;
	p->interval_ns = (uint64_t)(interval_s * 1e9);
	p->next_ns = now_ns() + p->interval_ns;
}

bool progress_due(struct progress *p, uint64_t now)
{
	if (!p->interval_ns || now < p->next_ns)
		return false;
	p->next_ns = now + p->interval_ns;
	return true;
}

int progress_wait_ms(const struct progress *p, uint64_t now)
{
	if (!p->interval_ns)
		return 1 << 30;
	return p->next_ns > now ? (int)((p->next_ns - now) / 1000000) + 1 : 0;
}

void progress_show(struct progress *p, const char *text, size_t len)
{
	struct sbuf b = {0};
	if (p->tty)
		sbuf_adds(&b, "\r\033[K");
	sbuf_add(&b, text, len);
	if (!p->tty)
		sbuf_addc(&b, '\n');
	(void)write_all(2, b.data, b.len);
	sbuf_free(&b);
	p->shown = p->tty;
}

void progress_clear(struct progress *p)
{
	if (p->shown)
		(void)write_all(2, "\r\033[K", 4);
	p->shown = false;
}

static void fmt_duration(struct sbuf *b, double s)
{
	unsigned long t = (unsigned long)(s + 0.5);
	if (t >= 86400)
		sbuf_printf(b, "%lud%02luh", t / 86400, t % 86400 / 3600);
	else if (t >= 3600)
		sbuf_printf(b, "%luh%02lum", t / 3600, t % 3600 / 60);
	else if (t >= 60)
		sbuf_printf(b, "%lum%02lus", t / 60, t % 60);
	else
		sbuf_printf(b, "%lus", t);
}

void progress_format(struct sbuf *b, const char *unit, uint64_t done, uint64_t total, double elapsed_s,
		     double rate, uint64_t errors)
{
	char n1[32], n2[32];
	sbuf_printf(b, "%s %s", fmt_count(n1, done), unit);
	if (total)
		sbuf_printf(b, " of %s (%.1f%%)", fmt_count(n2, total), 100.0 * done / total);
	sbuf_printf(b, ", %s/s", fmt_count(n1, (uint64_t)rate));
	if (total && rate > 0 && done < total) {
		sbuf_adds(b, ", ETA ");
		fmt_duration(b, (total - done) / rate);
	}
	sbuf_printf(b, ", %s %s, ", fmt_count(n1, errors), plural(errors, "error", "errors"));
	fmt_duration(b, elapsed_s);
}

void progress_eta(struct sbuf *b, double fraction, double elapsed_s)
{
	if (fraction <= 0 || fraction >= 1 || elapsed_s <= 0)
		return;
	sbuf_adds(b, ", ETA ");
	fmt_duration(b, elapsed_s * (1 - fraction) / fraction);
}
