/*
 * myriad: one binary, one subcommand per job in a filesystem's life. main only dispatches; each
 * subcommand lives in src/cmd/ and is built from the shared engine (src/engine), reporting
 * (src/report) and checkpoint (src/state) modules.
 */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmds.h"
#include "cmd/job.h"
#include "util/util.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
    {"copy", cmd_copy, "copy a tree like cp -a: sparse, hard links, xattrs; resumable, throttled"},
    {"fill", cmd_fill, "create N files in a deterministic tree, fast and resumably"},
    {"lifecycle", cmd_lifecycle, "re-run the billion-file experiment: mkfs, fill, walk, fsck, rm; report"},
    {"report", cmd_report, "re-render lifecycle results as HTML, or compare several runs"},
    {"rm", cmd_rm, "remove trees in parallel, bottom-up, gently if asked; resumable"},
    {"verify", cmd_verify, "check a filled tree against its manifest: missing, changed, extra"},
    {"walk", cmd_walk, "enumerate trees in parallel: counts, sizes, paths; resumable"},
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: myriad COMMAND [OPTIONS] ...\n"
		   "A toolkit for filesystems with hundreds of millions to billions of files.\n\nCommands:\n");
	for (size_t i = 0; i < ARRAY_LEN(commands); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'myriad COMMAND --help' describes a command. 'myriad --version' prints the version.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
		if (argc > 2 && strcmp(name, "help") == 0) {
			for (size_t i = 0; i < ARRAY_LEN(commands); i++)
				if (!strcmp(commands[i].name, argv[2])) {
					char *av[] = {argv[2], "--help", NULL};
					return commands[i].run(2, av);
				}
		}
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(name, "--version") || !strcmp(name, "-V")) {
		printf("myriad %s\n", MYRIAD_VERSION);
		return EXIT_OK;
	}
	for (size_t i = 0; i < ARRAY_LEN(commands); i++) {
		if (strcmp(commands[i].name, name) != 0)
			continue;
		static char prog[64];
		snprintf(prog, sizeof(prog), "myriad %s", name);
		prog_name = prog;
		argv[1] = prog; /* getopt names the command in its messages */
		raise_nofile_limit();
		/* Workers allocate little (frontier records, batch buffers): one arena keeps peak RSS
		 * small and steady instead of one growing heap per thread. */
		mallopt(M_ARENA_MAX, 1);
		return commands[i].run(argc - 1, argv + 1);
	}
	fprintf(stderr, "myriad: unknown command '%s'\n", name);
	usage(stderr);
	return EXIT_USAGE;
}
