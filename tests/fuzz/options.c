/*
 * Fuzz target "options": the option parsing of every subcommand. The first byte picks the command,
 * the rest is split into arguments at NUL bytes. A parser must answer OPTS_RUN, EXIT_OK (--help)
 * or EXIT_USAGE, never crash, exit or leak, and must leave getopt ready for the next parse.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmds.h"
#include "job/job.h"
#include "fuzz.h"
#include "util/util.h"

#define MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 4096)
		return 0;
	const struct command *c = commands[data[0] % ncommands];
	/* The arguments, each in its own allocation so that reading past one is caught. */
	char *argv[MAX_ARGS + 2];
	int argc = 0;
	argv[argc++] = strdup(c->name);
	for (size_t i = 1; i < size && argc <= MAX_ARGS;) {
		const uint8_t *nul = memchr(data + i, 0, size - i);
		size_t n = nul ? (size_t)(nul - data) - i : size - i;
		char *a = malloc(n + 1);
		memcpy(a, data + i, n);
		a[n] = 0;
		argv[argc++] = a;
		i += n + 1;
	}
	argv[argc] = NULL;
	char *own[MAX_ARGS + 2];
	memcpy(own, argv, sizeof(own)); /* getopt permutes argv */
	void *opts = calloc(1, c->opts_size);
	prog_name = c->name;
	int rc = command_parse(c, argc, argv, opts);
	fuzz_check(rc == OPTS_RUN || rc == EXIT_OK || rc == EXIT_USAGE);
	c->free(opts);
	free(opts);
	for (int i = 0; i < argc; i++)
		free(own[i]);
	return 0;
}
