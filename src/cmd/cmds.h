/*
 * cmds: the subcommands, one per file in src/cmd/. Each runs in two steps: parse its options into
 * its own options struct — touching no file, never exiting: the answer is OPTS_RUN or the exit
 * code to end with — then run. main dispatches through this table; tests/fuzz feeds the parsers
 * hostile argument vectors through it.
 */
#ifndef MYRIAD_CMDS_H
#define MYRIAD_CMDS_H

#include <stddef.h>

#include "job/job.h" /* OPTS_RUN and the exit codes */


struct command {
	const char *name;
	const char *summary;
	size_t opts_size; /* bytes of the command's options struct */
	/* Parse argv (argv[0] is the command's name) into opts (opts_size zeroed bytes). Returns
	 * OPTS_RUN, EXIT_OK after --help, or EXIT_USAGE after a message naming the bad option. */
	int (*parse)(int argc, char **argv, void *opts);
	/* Run with parsed options; returns the exit code. */
	int (*run)(void *opts);
	/* Free what parse allocated (called once after parse, whatever it returned). */
	void (*free)(void *opts);
};

extern const struct command cmd_copy, cmd_du, cmd_fill, cmd_find, cmd_jobs, cmd_lifecycle, cmd_report, cmd_rm,
    cmd_verify,
    cmd_walk;

/* Every command, in the order `myriad --help` lists them, and their number. */
extern const struct command *const commands[];
extern const size_t ncommands;

/* The command called name, or NULL. */
const struct command *command_find(const char *name);

/* Parse argv into opts (resetting getopt first, so it may be called again and again). */
int command_parse(const struct command *c, int argc, char **argv, void *opts);

/* Parse, run, free: the exit code. */
int command_main(const struct command *c, int argc, char **argv);

#endif
