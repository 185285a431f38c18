/*
 * chart: gnuplot's charts inlined in report.html, and their axis ticks (see chart.h). Ticks are
 * ours, not gnuplot's: its defaults read 1k 1k 1k 2k on a short linear axis and 3e+06 on a log one.
 */
#include "lifecycle/chart.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lifecycle/html.h"
#include "util/proc.h"

/* ---- axis ticks ---- */

/* Format v with at most decimals digits after the point, trailing zeros dropped; si: with a
 * k/M/G suffix chosen by unit (1, 1e3, 1e6, 1e9). */
static void tick_label(struct sbuf *b, double v, int decimals, double unit, bool si)
{
	static const char *const suffix[] = {"", "k", "M", "G", "T"};
	char buf[64];
	snprintf(buf, sizeof(buf), "%.*f", decimals, si ? v / unit : v);
	if (strchr(buf, '.')) {
		char *e = buf + strlen(buf) - 1;
		while (*e == '0')
			*e-- = 0;
		if (*e == '.')
			*e = 0;
	}
	if (!strcmp(buf, "-0"))
		strcpy(buf, "0");
	sbuf_adds(b, buf);
	if (si && v != 0)
		sbuf_adds(b, suffix[(int)lround(log10(unit) / 3)]);
}

/* The SI unit (1, 1e3, 1e6 ...) for labelling values up to m. */
static double si_unit(double m)
{
	double u = 1;
	while (m >= 1000 * u && u < 1e12)
		u *= 1000;
	return u;
}

/* Digits after the point needed to tell ticks step apart, in the given unit. */
static int decimals_for(double step, double unit)
{
	int d = (int)ceil(-log10(step / unit) - 1e-9);
	return d < 0 ? 0 : d > 6 ? 6 : d;
}

void lc_axis_tics(struct sbuf *out, char axis, double lo, double hi, bool logscale, bool si)
{
	if (!(lo <= hi) || !isfinite(lo) || !isfinite(hi) || (logscale && lo <= 0))
		return; /* no data: gnuplot's own */
	double ticks[64];
	int n = 0;
	if (logscale) {
		double decades = log10(hi / lo);
		static const double all[] = {1, 2, 5}, ones[] = {1};
		const double *m = decades <= 3 ? all : ones;
		int nm = decades <= 3 ? 3 : 1;
		double p = pow(10, floor(log10(lo) + 1e-9));
		/* Start at the last tick at or below lo, end at the first at or above hi. */
		int start = 0;
		for (int i = nm - 1; i >= 0; i--)
			if (m[i] * p <= lo * (1 + 1e-9)) {
				start = i;
				break;
			}
		for (int i = start; n < 64; i = (i + 1) % nm) {
			double t = m[i] * p;
			ticks[n++] = t;
			if (t >= hi * (1 - 1e-9))
				break;
			if (i == nm - 1)
				p *= 10;
		}
	} else {
		if (hi == lo)
			hi = lo + (lo ? fabs(lo) : 1);
		double raw = (hi - lo) / 6, p = pow(10, floor(log10(raw))), step = p;
		for (double f = 1; f <= 10; f = f == 1 ? 2 : f == 2 ? 5 : 10)
			if ((step = f * p) >= raw)
				break;
		double first = floor(lo / step + 1e-9) * step, last = ceil(hi / step - 1e-9) * step;
		for (double t = first; t <= last + step / 2 && n < 64; t += step)
			ticks[n++] = fabs(t) < step / 1e6 ? 0 : t;
	}
	if (n < 1)
		return;
	double step = n > 1 ? ticks[1] - ticks[0] : 1;
	/* The range a hair wider than the end ticks, so rounding cannot drop their labels. */
	double lo_r = logscale ? ticks[0] * (1 - 1e-6) : ticks[0] - step * 1e-6;
	double hi_r = logscale ? ticks[n - 1] * (1 + 1e-6) : ticks[n - 1] + step * 1e-6;
	sbuf_printf(out, "set %crange [%.12g:%.12g]\nset %ctics (", axis, lo_r, hi_r, axis);
	for (int i = 0; i < n; i++) {
		/* Each tick in its own unit (200k, 1.2M); log ticks need only their own digits, linear
		 * ones the step's. */
		double u = si ? si_unit(fabs(ticks[i])) : 1;
		int d = decimals_for(logscale ? ticks[i] : step, u);
		sbuf_adds(out, i ? ", \"" : "\"");
		tick_label(out, ticks[i], d, u, si);
		sbuf_printf(out, "\" %.9g", ticks[i]);
	}
	sbuf_adds(out, ")\n");
}

/* ---- gnuplot ---- */

/* Is there a gnuplot (on PATH, or in the usual bin directories)? */
static bool have_gnuplot(void)
{
	char *g = proc_find_tool("gnuplot");
	free(g);
	return g != NULL;
}

void chart_begin(struct chart *c, const char *title, const char *xlabel, const char *ylabel, bool logx, bool logy,
		 bool six, bool siy)
{
	c->seq++;
	c->nplots = 0;
	c->logx = logx, c->logy = logy, c->six = six, c->siy = siy;
	c->xlo = c->ylo = INFINITY;
	c->xhi = c->yhi = -INFINITY;
	sbuf_clear(&c->script);
	sbuf_clear(&c->plots);
	sbuf_printf(&c->script,
		    "set terminal svg size 520,340 font 'sans,11' background rgb 'white'\n"
		    "set output '%s/c%d.svg'\n"
		    "set title \"%s\"\nset xlabel \"%s\"\nset ylabel \"%s\"\n"
		    "set termoption noenhanced\nset grid\nset key top left box opaque\n%s%s",
		    c->dir, c->seq, title, xlabel, ylabel, logx ? "set logscale x\n" : "", logy ? "set logscale y\n" : "");
}

void chart_series(struct chart *c, const char *name, const double *x, const double *y, size_t n, const char *style)
{
	if (!n)
		return;
	char f[4096];
	snprintf(f, sizeof(f), "%s/c%d-%d.dat", c->dir, c->seq, c->nplots);
	FILE *fp = fopen(f, "w");
	if (!fp)
		return;
	for (size_t i = 0; i < n; i++) {
		fprintf(fp, "%.9g %.9g\n", x[i], y[i]);
		c->xlo = fmin(c->xlo, x[i]), c->xhi = fmax(c->xhi, x[i]);
		c->ylo = fmin(c->ylo, y[i]), c->yhi = fmax(c->yhi, y[i]);
	}
	fclose(fp);
	sbuf_printf(&c->plots, "%s'%s' using 1:2 with %s lw 2 title \"", c->nplots ? ", \\\n  " : "plot ", f, style);
	for (const char *s = name; *s; s++)
		if (*s != '"' && *s != '\\' && *s != '\'')
			sbuf_addc(&c->plots, *s);
	sbuf_adds(&c->plots, "\"");
	c->nplots++;
}

static int run_gnuplot(const char *script_path)
{
	char *g = proc_find_tool("gnuplot");
	if (!g)
		return -1;
	char *argv[] = {g, (char *)script_path, NULL};
	int st = proc_run(argv, NULL, NULL, NULL, NULL);
	free(g);
	return st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

void chart_end(struct chart *c, const char *caption)
{
	if (!c->nplots)
		return;
	lc_axis_tics(&c->script, 'x', c->xlo, c->xhi, c->logx, c->six);
	lc_axis_tics(&c->script, 'y', c->ylo, c->yhi, c->logy, c->siy);
	sbuf_add(&c->script, c->plots.data, c->plots.len);
	sbuf_addc(&c->script, '\n');
	char sp[4096], svg[4096];
	snprintf(sp, sizeof(sp), "%s/c%d.gp", c->dir, c->seq);
	snprintf(svg, sizeof(svg), "%s/c%d.svg", c->dir, c->seq);
	FILE *fp = fopen(sp, "w");
	if (!fp)
		return;
	fwrite(c->script.data, 1, c->script.len, fp);
	fclose(fp);
	sbuf_adds(c->html, "<figure>");
	struct sbuf s = {0};
	fp = run_gnuplot(sp) == 0 ? fopen(svg, "r") : NULL;
	if (fp) {
		char buf[65536];
		size_t n;
		while ((n = fread(buf, 1, sizeof(buf), fp)) > 0)
			sbuf_add(&s, buf, n);
		fclose(fp);
	}
	sbuf_addc(&s, 0);
	const char *start = s.data ? strstr(s.data, "<svg") : NULL;
	if (start) {
		sbuf_adds(c->html, start);
		c->rendered++;
	} else {
		sbuf_adds(c->html, "<p class=warn>gnuplot failed to draw this chart.</p>");
	}
	sbuf_free(&s);
	sbuf_adds(c->html, "<figcaption>");
	html_escape(c->html, caption);
	sbuf_adds(c->html, "</figcaption></figure>\n");
}

bool chart_open(struct chart *c, struct sbuf *html)
{
	*c = (struct chart){.html = html};
	strcpy(c->dir, "/tmp/myriad-plot.XXXXXX");
	c->open = have_gnuplot() && mkdtemp(c->dir);
	return c->open;
}

void chart_close(struct chart *c)
{
	sbuf_free(&c->script);
	sbuf_free(&c->plots);
	if (!c->open)
		return;
	/* Remove the scratch files. */
	for (int i = 1; i <= c->seq; i++)
		for (int k = -2; k < 64; k++) {
			char f[4200];
			if (k == -2)
				snprintf(f, sizeof(f), "%s/c%d.gp", c->dir, i);
			else if (k == -1)
				snprintf(f, sizeof(f), "%s/c%d.svg", c->dir, i);
			else
				snprintf(f, sizeof(f), "%s/c%d-%d.dat", c->dir, i, k);
			unlink(f);
		}
	rmdir(c->dir);
	c->open = false;
}
