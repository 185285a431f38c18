/*
 * html: escaping text for report.html (see html.h).
 */
#include "report/html.h"

#include "util/sbuf.h"

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
