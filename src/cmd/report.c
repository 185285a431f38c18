/*
 * myriad report: render the HTML report of myriad lifecycle again from its results.json, or put
 * several runs side by side. The command's options only: reading results and drawing the page are
 * lifecycle/page.h's, the same code lifecycle ends each run with.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "cmd/cmds.h"
#include "job/job.h"
#include "lifecycle/page.h"
#include "lifecycle/results.h"
#include "util/util.h"

static const char report_help[] =
    "Usage: myriad report RESULTS.json... -o report.html\n"
    "Render the report of myriad lifecycle again from its results.json, or put several runs side by\n"
    "side (each filesystem of each run is one series).\n"
    "\n"
    "  -o, --output FILE        the HTML page to write (default report.html); an existing FILE is\n"
    "                           written over only when it is a report of myriad's (else exit 2)\n"
    "      --project N          project to N files (default: the first run's --project)\n"
    "      --help               this text\n";

enum { O_PROJECT = OPT_CMD_BASE };

struct report_opts {
	const char *out;
	uint64_t project;
	char **files;
	size_t nfiles;
};

static int report_parse(int argc, char **argv, void *opts)
{
	static const struct option longopts[] = {
	    {"output", required_argument, 0, 'o'},
	    {"project", required_argument, 0, O_PROJECT},
	    {"help", no_argument, 0, OPT_HELP},
	    {0, 0, 0, 0},
	};
	struct report_opts *o = opts;
	o->out = "report.html";
	int opt;
	while ((opt = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_HELP: fputs(report_help, stdout); return EXIT_OK;
		case 'o':
			if (!job_name_given("--output", optarg))
				return EXIT_USAGE;
			o->out = optarg;
			break;
		case O_PROJECT:
			if (!parse_count(optarg, &o->project) || o->project == 0)
				return usage_error("--project: '%s' is not a count from 1 to 2^64-1", optarg);
			break;
		default: return usage_hint(); /* getopt said what is wrong */
		}
	}
	if (optind >= argc)
		return usage_error("missing operand: the results.json files of myriad lifecycle");
	o->files = argv + optind;
	o->nfiles = argc - optind;
	return OPTS_RUN;
}

static void report_opts_free(void *opts) { (void)opts; }

static int report_run(void *opts)
{
	struct report_opts *o = opts;
	const char *out = o->out;
	uint64_t project = o->project;
	size_t n = o->nfiles;
	/* Only a page of its own is written over: -o naming a results.json, or any other file, is a slip. */
	struct stat st;
	if (lstat(out, &st) == 0 && !lc_page_is_report(out))
		return usage_error("-o %s: the file exists and is not a report of myriad's, which is all myriad report "
				   "writes over: choose another -o, or remove %s",
				   out, out);
	struct lc_results **runs = xcalloc(n, sizeof(*runs));
	for (size_t i = 0; i < n; i++) {
		char err[256];
		runs[i] = lc_load(o->files[i], err, sizeof(err));
		if (!runs[i]) {
			for (size_t k = 0; k < i; k++)
				lc_free(runs[k]);
			free(runs);
			return usage_error("%s: %s", o->files[i], err);
		}
		if (project)
			runs[i]->project = (double)project;
	}
	int rc = lc_render_html(runs, n, out) == 0 ? EXIT_OK : EXIT_FAILED;
	if (rc == EXIT_OK)
		printf("report: %s\n", out);
	for (size_t i = 0; i < n; i++)
		lc_free(runs[i]);
	free(runs);
	return rc;
}

const struct command cmd_report = {"report", "re-render lifecycle results as HTML, or compare several runs",
				   sizeof(struct report_opts), report_parse, report_run, report_opts_free};
