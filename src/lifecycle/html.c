/*
 * html: escaping text for report.html, and its cells of numbers (see html.h).
 */
#include "lifecycle/html.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "util/sbuf.h"
#include "util/util.h"

void html_escape(struct sbuf *b, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': sbuf_adds(b, "&lt;"); break;
		case '>': sbuf_adds(b, "&gt;"); break;
		case '&': sbuf_adds(b, "&amp;"); break;
		case '"': sbuf_adds(b, "&quot;"); break;
		default: sbuf_addc(b, *s);
		}
	}
}

void html_files(struct sbuf *b, double n)
{
	char buf[32];
	sbuf_adds(b, fmt_count(buf, (uint64_t)n));
}

void html_duration(struct sbuf *b, double s)
{
	if (!isfinite(s))
		sbuf_adds(b, "&ndash;");
	else if (s < 120)
		sbuf_printf(b, "%.3g s", s);
	else if (s < 7200)
		sbuf_printf(b, "%.3g min", s / 60);
	else if (s < 172800)
		sbuf_printf(b, "%.3g h", s / 3600);
	else
		sbuf_printf(b, "%.3g days", s / 86400);
}

void html_kib(struct sbuf *b, double k)
{
	if (!isfinite(k))
		sbuf_adds(b, "&ndash;");
	else if (k < 1024)
		sbuf_printf(b, "%.0f KiB", k);
	else if (k < 1024 * 1024)
		sbuf_printf(b, "%.3g MiB", k / 1024);
	else
		sbuf_printf(b, "%.3g GiB", k / 1024 / 1024);
}

/* A ratio of scales: "10", "3.33", "10,000". */
void html_factor(struct sbuf *b, double f)
{
	if (f >= 1000)
		html_files(b, round(f));
	else
		sbuf_printf(b, "%.3g", f);
}

/* A value of a fit: a time ("s") or a memory ("KiB"). */
void html_value(struct sbuf *b, const char *unit, double v)
{
	if (!strcmp(unit, "s"))
		html_duration(b, v);
	else
		html_kib(b, v);
}
