/*
 * myriad: one binary, one subcommand per job in a filesystem's life. main only dispatches; each
 * subcommand lives in src/cmd/ and is built from the shared engine (src/engine), reporting
 * (src/report) and checkpoint (src/state) modules.
 */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmds.h"
#include "job/job.h"
#include "report/outfile.h"
#include "util/util.h"
#ifdef MYRIAD_MPI
#include "engine/spread.h"
#endif

static void usage(FILE *f)
{
	fprintf(f, "Usage: myriad COMMAND [OPTIONS] ...\n"
		   "A toolkit for filesystems with hundreds of millions to billions of files.\n\nCommands:\n");
	for (size_t i = 0; i < ncommands; i++)
		fprintf(f, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
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
		const struct command *c = argc > 2 && !strcmp(name, "help") ? command_find(argv[2]) : NULL;
		if (c) {
			char *av[] = {argv[2], "--help", NULL};
			return output_finish(command_main(c, 2, av));
		}
		usage(stdout);
		return output_finish(EXIT_OK);
	}
	if (!strcmp(name, "--version") || !strcmp(name, "-V")) {
		printf("myriad %s\n", MYRIAD_VERSION);
		return output_finish(EXIT_OK);
	}
	const struct command *c = command_find(name);
	if (c) {
		static char prog[64];
		snprintf(prog, sizeof(prog), "myriad %s", name);
		prog_name = prog;
		argv[1] = prog; /* getopt names the command in its messages */
		raise_nofile_limit();
		/* Workers allocate little (frontier records, batch buffers): one arena keeps peak RSS
		 * small and steady instead of one growing heap per thread. */
		mallopt(M_ARENA_MAX, 1);
#ifdef MYRIAD_MPI
		/* myriad-mpi: walk, fill, verify, rm and copy spread over the ranks; every other command runs in one process. */
		if (spread_init(&argc, &argv) != 0)
			return EXIT_USAGE;
		int rc;
		if (spread_size() > 1 && strcmp(c->name, "walk") != 0 && strcmp(c->name, "verify") != 0 &&
		    strcmp(c->name, "fill") != 0 && strcmp(c->name, "rm") != 0 && strcmp(c->name, "copy") != 0) {
			warnx_("runs in one process only (under mpirun: -np 1); across ranks, only walk, fill, verify, rm and copy "
			       "so far (see docs/mpi.md)");
			rc = EXIT_USAGE;
		} else {
			rc = command_main(c, argc - 1, argv + 1);
		}
		spread_finalize();
		return output_finish(rc);
#else
		return output_finish(command_main(c, argc - 1, argv + 1));
#endif
	}
	fprintf(stderr, "myriad: unknown command '%s'\n", name);
	usage(stderr);
	return EXIT_USAGE;
}
