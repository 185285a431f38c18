/*
 * html: what every part of report.html needs to put text in a page safely. Filesystem names,
 * commands and error messages come from the machine and the user, not from us.
 */
#ifndef MYRIAD_HTML_H
#define MYRIAD_HTML_H

struct sbuf;

/* Append s HTML-escaped (< > & "); NULL appends nothing, as a missing field shows empty. */
void html_escape(struct sbuf *b, const char *s);

/* Cells of numbers, read by people: a missing number (NAN) shows as a dash rather than "nan" or 0. */
/* A file count with thousands separators: 1,000,000. */
void html_files(struct sbuf *b, double n);
/* A time in the unit that reads best: s, min, h, days. */
void html_duration(struct sbuf *b, double s);
/* A memory in KiB, MiB or GiB. */
void html_kib(struct sbuf *b, double k);
/* A ratio of scales: "10", "3.33", "10,000". */
void html_factor(struct sbuf *b, double f);
/* A value of a fit or a reference: a time (unit "s") or a memory ("KiB"). */
void html_value(struct sbuf *b, const char *unit, double v);

#endif
