/*
 * html: what every part of report.html needs to put text in a page safely. Filesystem names,
 * commands and error messages come from the machine and the user, not from us.
 */
#ifndef MYRIAD_HTML_H
#define MYRIAD_HTML_H

struct sbuf;

/* Append s HTML-escaped (< > & "); NULL appends nothing, as a missing field shows empty. */
void html_escape(struct sbuf *b, const char *s);

#endif
