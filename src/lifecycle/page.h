/*
 * page: report.html, the lifecycle report — a verdict, the charts, the projections and every
 * number measured — for one run or several compared. Shared by `myriad lifecycle` (after each
 * cycle) and `myriad report` (from results.json files).
 */
#ifndef MYRIAD_PAGE_H
#define MYRIAD_PAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "lifecycle/results.h"

/* Write report.html for one or more runs (atomically). Charts need gnuplot; without it the page
 * says so and still has every table. Returns 0, or -1 with a message printed. */
int lc_render_html(struct lc_results *const *runs, size_t nruns, const char *path);

/* Is path a page lc_render_html wrote (any version: its head has the title it always had)? Those
 * are the only files lifecycle and myriad report write over. false when it cannot be read. */
bool lc_page_is_report(const char *path);

/* The projection section of the page (page_fit.c): the projections to project files beside the
 * 2010 figures, and how far the same fits missed at the largest scale measured. */
struct sbuf;
void page_projections(struct sbuf *h, struct lc_results *const *runs, size_t nruns, double project);

/* Under the charts (page_flat.c): where each phase's rate dropped during a run and stayed down,
 * one line per cycle that has a timeline long enough to judge (lifecycle/flat). */
void page_rate_drops(struct sbuf *h, struct lc_results *const *runs, const struct lc_series *ser, size_t nser);
/* The table "Memory: myriad's own phases": each phase's peak RSS at the largest scale over the
 * smallest, against the bar of issue 15 (lifecycle/flat). */
void page_myriad_memory(struct sbuf *h, struct lc_results *const *runs, size_t nruns);

#endif
