/*
 * job: what every long command shares around its engine — the common options (--json, --errors,
 * --state, --no-state, --fresh, --progress, --checkpoint-interval, -j, and --exclude, --rate and
 * --ionice for the commands that take them) and the option loop around them, opening the checkpoint
 * (saying on stderr what an earlier run left and that it is resumed or discarded) and the error
 * log, and turning the outcome into the exit codes of docs/design.md. A command is its options, a
 * plan and an action; everything here is written once.
 */
#ifndef MYRIAD_JOB_H
#define MYRIAD_JOB_H

#include <getopt.h>
#include <stdbool.h>

#include "engine/run.h"
#include "report/errlog.h"
#include "state/ckpt.h"
#include "util/sbuf.h"

enum exit_code { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_STOPPED = 3 };

/* What a command's option parser returns when the command is to run (any other value is the exit
 * code to end with). */
#define OPTS_RUN (-1)

struct job_opts {
	int argc; /* the command's arguments (argv[0] its name), for its state's command line */
	char **argv;
	const char *json;
	const char *errors;
	const char *state;
	bool no_state;
	bool fresh;          /* --fresh: discard an earlier run's state and start over */
	/* Why this run's output cannot be resumed exactly (set by the command's parser), or NULL. Such
	 * a run keeps no state and discards an earlier run's, saying so. */
	const char *unresumable;
	double progress_s;   /* -1: default */
	double checkpoint_s; /* default 5 */
	int threads;         /* 0: the command's default */
	char **excludes;     /* --exclude GLOB, in order (job_opts_free frees the array) */
	size_t nexcludes;
	uint64_t rate;         /* --rate N (0: none) */
	const char *rate_unit; /* what --rate counts, for its message: "entries" (default) or "files" */
	int ioprio;            /* --ionice, as parse_ionice gives it; -1: none */
};

enum {
	OPT_JSON = 1000,
	OPT_ERRORS,
	OPT_STATE,
	OPT_NO_STATE,
	OPT_FRESH,
	OPT_PROGRESS,
	OPT_CHECKPOINT,
	OPT_HELP,
	OPT_EXCLUDE,
	OPT_RATE,
	OPT_IONICE,
	OPT_CMD_BASE /* each command's enum of its own long-only options starts here */
};

#define JOB_LONG_OPTIONS                                                                            \
	{"json", required_argument, 0, OPT_JSON}, {"errors", required_argument, 0, OPT_ERRORS},    \
	    {"state", required_argument, 0, OPT_STATE}, {"no-state", no_argument, 0, OPT_NO_STATE}, \
	    {"fresh", no_argument, 0, OPT_FRESH},                                                   \
	    {"progress", required_argument, 0, OPT_PROGRESS},                                       \
	    {"checkpoint-interval", required_argument, 0, OPT_CHECKPOINT},                          \
	    {"threads", required_argument, 0, 'j'}, {"help", no_argument, 0, OPT_HELP}

/* The shared options a command lists in its long options where it takes them; job_opt handles them,
 * with the same messages whichever command it is. */
#define JOB_EXCLUDE_OPTION {"exclude", required_argument, 0, OPT_EXCLUDE}
#define JOB_RATE_OPTION {"rate", required_argument, 0, OPT_RATE}
#define JOB_IONICE_OPTION {"ionice", required_argument, 0, OPT_IONICE}

/* The help text of the common options, for a command's --help. */
extern const char job_options_help[];

void job_opts_init(struct job_opts *o);
/* Free what parsing the common options allocated (the --exclude list). */
void job_opts_free(struct job_opts *o);
/* Handle a common option: 1 handled, 0 not a common option, -1 bad value (message printed). */
int job_opt(struct job_opts *o, int c, const char *arg);

/*
 * The option loop every command runs: getopt_long over argv, the common options and --help (help
 * printed with job_options_help for its %s) handled here. Returns the next option only the command
 * knows, or 0 when parsing stops: *rc is then OPTS_RUN at the end of the options (optind: the first
 * operand), EXIT_OK after --help, EXIT_USAGE after a message (a bad value, or getopt's own).
 */
int job_getopt(struct job_opts *o, int argc, char **argv, const char *shortopts, const struct option *longopts,
	       const char *help, int *rc);

/* The worker threads: -j, else per_cpu per CPU, at least min, at most cap (0: no cap). The default
 * is each command's: how many of its operations may usefully wait on the disk at once. */
int job_threads(const struct job_opts *o, int per_cpu, int min, int cap);

/* Is the --json summary going to standard output (so the text summary goes to stderr)? */
bool job_json_stdout(const struct job_opts *o);

/* Print "myriad CMD: message" and the hint to --help; returns EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* After getopt has printed what is wrong with an option: the hint to --help; returns EXIT_USAGE. */
int usage_hint(void);

/* Can an output FILE named by option opt be written ("-", a writable file, or a new name in a
 * writable directory; not "")? false after a usage error naming it. */
bool job_output_ok(const char *opt, const char *path);

/* Is a name given to option opt (a file or directory: not "")? false after a usage error naming
 * the option. */
bool job_name_given(const char *opt, const char *name);

/* An output file a command writes besides --json and --errors: the option that names it, the
 * name (NULL: not given). */
struct job_output {
	const char *opt;
	const char *path;
};
/* Do --json, --errors and the n outputs name distinct files, none inside (or being) the --state
 * directory? Names are compared resolved, existing files also by device and inode (a hard link, a
 * symlink); "-" and what is not a regular file (/dev/null) may be shared. 0, or EXIT_USAGE after a
 * usage error naming both options. job_getopt checks --json and --errors; a command with outputs
 * of its own calls this with them once it has parsed them. */
int job_check_outputs(const struct job_opts *o, const struct job_output *outs, size_t n);

struct job {
	const struct job_opts *opts;
	struct ckpt *ckpt;
	struct sbuf snapshot; /* the snapshot to resume from (empty: fresh start) */
	bool resumed;
	struct errlog errlog;
	/* Why a stopped run stopped, when not by a signal ("out of space", "--max-errors reached"):
	 * set before the run loop returns RUN_STOPPED, or before raising SIGTERM to stop it. */
	const char *_Atomic stop_reason;
	/* Another process speaks for this one (an MPI rank but 0): job_end says nothing of a stop. */
	bool quiet;
};

/*
 * Open the state (unless --no-state), refuse a state directory inside any of trees, load the last
 * snapshot — saying on stderr which earlier run is resumed, or discarded (--fresh, or a run whose
 * output is unresumable) — open the --errors file. identity describes the job (name, absolute operands, options
 * that change its result); the state records the command line (o->argc, o->argv) beside it.
 * Returns 0, or an exit code (EXIT_USAGE) after printing why.
 */
int job_begin(struct job *j, const struct job_opts *o, const char *cmd, const struct sbuf *identity,
	      char *const *trees, size_t ntrees);

/* The job is refused after job_begin (on the operands it then checked): its state stays as it was,
 * or goes when nothing was saved. */
void job_refused(struct job *j);

/* The snapshot to resume from, or NULL; the name of its file (for messages), or NULL. */
const struct sbuf *job_snapshot(const struct job *j);
const char *job_snapshot_name(const struct job *j);

/*
 * Run the engine behind h: save a first snapshot (so a fresh run is resumable from its first
 * second, and a resumed session is counted even if it dies before its first interval), start the
 * workers, run the main loop with the job's options, and wait for the workers when the work is
 * done (a stopped run leaves them frozen: the process exits).
 */
enum run_result job_execute(struct job *j, const struct run_hooks *h);

struct walk;
/* The progress line of a command over the walk engine: "CMD: " the entries, rate and errors, then
 * " (N directories" after ")" and the workers stuck in the kernel, if any. */
void job_walk_progress(struct sbuf *line, struct walk *w, const char *cmd, uint64_t entries, uint64_t dirs,
		       const char *after);
/* The same with a count of errors other than the walk's own (a job of MPI ranks: the job's). */
void job_walk_progress_errors(struct sbuf *line, struct walk *w, const char *cmd, uint64_t entries, uint64_t dirs,
			      uint64_t errors, const char *after);

/* Is every operand a name (not "")? 0, or EXIT_USAGE after a usage error saying which is empty. */
int job_check_named(char *const *ops, size_t n);

/* Are the operands existing directories (a symlink to one is)? 0, or EXIT_USAGE after a usage
 * error naming the first that is not. */
int job_check_dirs(char *const *dirs, size_t n);

/* Start a job's identity blob with the command's name (then add operands and options). */
void job_identity(struct sbuf *id, const char *cmd);

/*
 * Finish: on RUN_DONE remove the state; on RUN_STOPPED keep it and say why the run stopped and how
 * to resume (a run whose output's reader has gone ends quietly, its state removed). Returns the
 * exit code: 3 stopped, 1 when errors > 0 or an output could not be written, else 0.
 */
int job_end(struct job *j, enum run_result r, uint64_t errors);

/* "'COMMAND', started T; last snapshot T (SIZE): PROGRESS": what an earlier run left, one line. */
void job_describe(struct sbuf *b, const struct ckpt_info *in);
/* Append s with control characters (a newline in a path) shown as '?', for one-line messages. */
void job_add_printable(struct sbuf *b, const char *s);
/* Local time as "YYYY-MM-DD HH:MM:SS" into buf (at least 32 bytes), "?" for 0; returns buf. */
char *fmt_time(char *buf, time_t t);

/* Parse --ionice idle | be:0..7 into an ioprio value; -1 when it is neither. */
int parse_ionice(const char *spec);
/* Run at that I/O priority (-1: as it is); call before the workers start (threads inherit it). 0,
 * or -1 with a message. */
int apply_ionice(int ioprio);

/* Write a JSON document to path ("-": stdout). Returns 0 or -1 (recorded: see output_failed). */
int write_json_file(const char *path, const struct sbuf *doc);

/* Append identity fields (ser format) describing the absolute path of operand p, which may not
 * exist yet or any more (see path_resolve). 0, or -1 when even its parent cannot be resolved. */
int identity_add_path(struct sbuf *id, const char *p);
/* Append each operand as its absolute path and as given (a relative operand run from elsewhere is
 * another job). */
void identity_add_operands(struct sbuf *id, char *const *ops, size_t n);
/* Append the --exclude patterns, in order: they change what the job does. */
void identity_add_excludes(struct sbuf *id, const struct job_opts *o);

#endif
