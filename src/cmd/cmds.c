/* cmds: the table of subcommands and the parse-then-run sequence every one of them follows. */
#include "cmd/cmds.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

const struct command *const commands[] = {&cmd_copy, &cmd_du, &cmd_fill, &cmd_find, &cmd_jobs, &cmd_lifecycle,
					   &cmd_report, &cmd_rm, &cmd_verify, &cmd_walk};
const size_t ncommands = ARRAY_LEN(commands);

const struct command *command_find(const char *name)
{
	for (size_t i = 0; i < ncommands; i++)
		if (!strcmp(commands[i]->name, name))
			return commands[i];
	return NULL;
}

int command_parse(const struct command *c, int argc, char **argv, void *opts)
{
	optind = 0; /* glibc: start afresh, also after an earlier parse stopped half-way */
	return c->parse(argc, argv, opts);
}

int command_main(const struct command *c, int argc, char **argv)
{
	void *opts = xcalloc(1, c->opts_size);
	int rc = command_parse(c, argc, argv, opts);
	if (rc == OPTS_RUN)
		rc = c->run(opts);
	c->free(opts);
	free(opts);
	return rc;
}
