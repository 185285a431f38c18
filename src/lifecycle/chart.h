/*
 * chart: report.html's charts, drawn by gnuplot as SVG and inlined in the page as <figure>s, and
 * the axis ticks they use. gnuplot runs as a child process on a script and data files in a scratch
 * directory; a chart it fails to draw becomes a warning in its place, never a failed report.
 */
#ifndef MYRIAD_CHART_H
#define MYRIAD_CHART_H

#include <stdbool.h>
#include <stddef.h>

#include "util/sbuf.h"

/* gnuplot commands that set axis ('x' or 'y') to span [lo, hi] with readable, distinct tick labels:
 * on a log axis at 1, 2, 5 per decade (only powers of ten past three decades), on a linear one every
 * 1, 2 or 5 x 10^k (4 to 7 ticks); si labels count with k, M, G (250k, 1.5M), otherwise plain
 * numbers. Nothing for an empty range. */
void lc_axis_tics(struct sbuf *out, char axis, double lo, double hi, bool logscale, bool si);

/* The charts of one page. Callers read only rendered; the rest belongs to chart.c. */
struct chart {
	char dir[32]; /* the scratch directory */
	bool open;    /* dir exists (gnuplot found) */
	int seq;
	struct sbuf script; /* terminal, titles, axes */
	struct sbuf plots;  /* the plot command's series */
	int nplots;
	struct sbuf *html;
	int rendered;                    /* charts gnuplot drew */
	bool logx, logy, six, siy;       /* log axes; counts labelled with k/M/G */
	double xlo, xhi, ylo, yhi;       /* the data's range */
};

/* Get ready to draw charts into html: false when gnuplot is not on PATH (or the scratch directory
 * cannot be made), and the page goes without charts. chart_close in either case. */
bool chart_open(struct chart *c, struct sbuf *html);
/* Start a chart: terminal, title, axes (log or linear; si: the axis counts things, labelled 10k,
 * 1.5M; otherwise plain numbers). */
void chart_begin(struct chart *c, const char *title, const char *xlabel, const char *ylabel, bool logx, bool logy,
		 bool six, bool siy);
/* Add a series: points (x, y); style "linespoints" or "lines". Nothing for no points. */
void chart_series(struct chart *c, const char *name, const double *x, const double *y, size_t n, const char *style);
/* Render the chart and inline its SVG, with a caption. Nothing when no series had points: an
 * empty frame says less than no chart. */
void chart_end(struct chart *c, const char *caption);
/* Free the buffers and remove the scratch files and directory. */
void chart_close(struct chart *c);

#endif
