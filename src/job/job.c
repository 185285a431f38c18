/* job: common options, state and exit codes for every long command (see job.h). */
#include "job/job.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine/walk.h"
#include "report/progress.h"
#include "report/outfile.h"
#include "state/ser.h"
#include "util/exclude.h"
#include "util/signals.h"
#include "util/util.h"

const char job_options_help[] =
    "      --json FILE          write a JSON summary to FILE (- for standard output)\n"
    "      --errors FILE        write one JSON line per failed entry to FILE (- for standard error)\n"
    "      --state DIR          keep the checkpoint in DIR (default: under $XDG_STATE_HOME/myriad when\n"
    "                           it is set, else /var/lib/myriad for root, else\n"
    "                           ~/.local/state/myriad, keyed by command and operands); DIR\n"
    "                           must be new, empty or myriad's own (a non-empty one without a\n"
    "                           myriad-state file is refused)\n"
    "      --no-state           keep no checkpoint (the run cannot be resumed)\n"
    "      --fresh              start over: discard the state an earlier run of this command left\n"
    "                           (a run that resumes one says so on stderr before it starts)\n"
    "      --checkpoint-interval SECONDS  seconds between snapshots (default 5)\n"
    "      --progress SECONDS   status line interval on stderr, 0.1 to 1e9 (default: 1 on a\n"
    "                           terminal, else 60; 0: none)\n"
    "      --help               show this help\n";

void job_opts_init(struct job_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->progress_s = -1;
	o->checkpoint_s = 5;
	o->rate_unit = "entries";
	o->ioprio = -1;
}

void job_opts_free(struct job_opts *o)
{
	free(o->excludes);
	o->excludes = NULL;
	o->nexcludes = 0;
}

int usage_error(const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\nTry '%s --help' for more information.\n", prog_name, buf, prog_name);
	return EXIT_USAGE;
}

int usage_hint(void)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", prog_name);
	return EXIT_USAGE;
}

/* Seconds, decimal (1, 0.5, 2e3): strtod would also take spaces, a sign, hex, inf and nan. */
static bool parse_seconds(const char *s, double *out)
{
	char *end;
	if (!((*s >= '0' && *s <= '9') || *s == '.') || s[strspn(s, "0123456789.eE+-")])
		return false;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0 && v <= 1e9)) /* NaN fails both */
		return false;
	*out = v;
	return true;
}

bool job_name_given(const char *opt, const char *name)
{
	if (!*name)
		return usage_error("%s '': an empty name names no file or directory", opt), false;
	return true;
}

bool job_output_ok(const char *opt, const char *path)
{
	struct stat st;
	if (!job_name_given(opt, path))
		return false;
	if (!strcmp(path, "-"))
		return true;
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return usage_error("%s %s: is a directory", opt, path), false;
		if (access(path, W_OK) != 0)
			return usage_error("%s %s: %s", opt, path, strerror(errno)), false;
		return true;
	}
	if (errno != ENOENT)
		return usage_error("%s %s: %s", opt, path, strerror(errno)), false;
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = 0;
	else if (slash)
		*slash = 0;
	bool ok = access(slash ? dir : ".", W_OK | X_OK) == 0;
	if (!ok)
		usage_error("%s %s: %s", opt, path, strerror(errno));
	free(dir);
	return ok;
}

/* Can --exclude pat be used? false after a usage error saying why, and for a path what to exclude
 * instead: its last name, which matches at every depth. */
static bool job_exclude_ok(const char *pat)
{
	const char *why = exclude_refusal(pat);
	if (!why)
		return true;
	size_t len = strlen(pat);
	while (len && pat[len - 1] == '/')
		len--;
	const char *last = pat + len;
	while (last > pat && last[-1] != '/')
		last--;
	if (last == pat + len) /* no name: nothing to suggest */
		return usage_error("--exclude '%s': %s", pat, why), false;
	return usage_error("--exclude '%s': %s; to leave out %.*s, exclude '%s' (it matches that name at every depth) "
			   "or name the other entries as operands",
			   pat, why, (int)len, pat, last),
	       false;
}

/* Where output x goes: stat of its file ("-": of standard error for --errors, else of standard
 * output). false when it does not exist yet. */
static bool job_output_stat(const struct job_output *x, struct stat *st)
{
	if (strcmp(x->path, "-"))
		return stat(x->path, st) == 0;
	return fstat(strcmp(x->opt, "--errors") ? 1 : 2, st) == 0;
}

/* Do outputs a and b go to the same file (see job_check_outputs)? A file, a pipe or a socket
 * shared would mix or overwrite them; a device (/dev/null, a terminal) is left to the user. */
static bool job_same_output(const struct job_output *a, const struct job_output *b)
{
	struct stat sa, sb;
	char ra[PATH_MAX], rb[PATH_MAX];
	bool da = !strcmp(a->path, "-"), db = !strcmp(b->path, "-");
	/* Both standard streams: the command's own checks (--json - beside paths on standard output);
	 * find's -fprint /dev/stdout beside -o - is one output on purpose. */
	if ((da && db) || ((da || db) && strcmp(a->opt, "--json") && strcmp(b->opt, "--json")))
		return false;
	bool ea = job_output_stat(a, &sa), eb = job_output_stat(b, &sb);
	if (ea && eb)
		return (S_ISREG(sa.st_mode) || S_ISFIFO(sa.st_mode) || S_ISSOCK(sa.st_mode)) && sa.st_dev == sb.st_dev &&
		       sa.st_ino == sb.st_ino;
	return !ea && !eb && path_resolve(a->path, ra) && path_resolve(b->path, rb) && !strcmp(ra, rb);
}

/* Is output path inside the state directory state, or that directory itself? */
static bool job_output_in_state(const char *path, const char *state)
{
	char rp[PATH_MAX], rs[PATH_MAX];
	return path_resolve(path, rp) && path_resolve(state, rs) && path_inside(rp, rs);
}

int job_check_outputs(const struct job_opts *o, const struct job_output *outs, size_t n)
{
	struct job_output all[n + 2];
	size_t m = 0;
	all[m++] = (struct job_output){"--json", o->json};
	all[m++] = (struct job_output){"--errors", o->errors};
	for (size_t i = 0; i < n; i++)
		all[m++] = outs[i];
	for (size_t i = 0; i < m; i++) {
		if (!all[i].path)
			continue;
		if (o->state && strcmp(all[i].path, "-") && job_output_in_state(all[i].path, o->state))
			return usage_error("%s %s and --state %s: the output would be in the state directory, which is "
					   "myriad's own: write it elsewhere",
					   all[i].opt, all[i].path, o->state);
		for (size_t k = i + 1; k < m; k++)
			if (all[k].path && job_same_output(&all[i], &all[k]))
				return usage_error("%s %s and %s %s name the same file: one would overwrite the other; "
						   "give each its own file",
						   all[i].opt, all[i].path, all[k].opt, all[k].path);
	}
	return 0;
}

int job_opt(struct job_opts *o, int c, const char *arg)
{
	uint64_t v;
	switch (c) {
	case OPT_JSON:
		if (!job_output_ok("--json", arg))
			return -1;
		o->json = arg;
		return 1;
	case OPT_ERRORS:
		if (!job_output_ok("--errors", arg))
			return -1;
		o->errors = arg;
		return 1;
	case OPT_STATE:
	case OPT_NO_STATE:
	case OPT_FRESH:
		if ((c == OPT_STATE && o->no_state) || (c == OPT_NO_STATE && o->state))
			return usage_error("--state and --no-state contradict each other"), -1;
		if ((c == OPT_FRESH && o->no_state) || (c == OPT_NO_STATE && o->fresh))
			return usage_error("--fresh and --no-state contradict each other: --fresh discards the saved "
					   "state and keeps a new one, --no-state leaves it alone and keeps none"),
			       -1;
		if (c == OPT_STATE && !job_name_given("--state", arg))
			return -1;
		if (c == OPT_STATE)
			o->state = arg;
		else if (c == OPT_NO_STATE)
			o->no_state = true;
		else
			o->fresh = true;
		return 1;
	case OPT_PROGRESS:
		/* Below 0.1 s a status line is unreadable, and written thousands of times a second. */
		if (!parse_seconds(arg, &o->progress_s) || (o->progress_s > 0 && o->progress_s < 0.1))
			return usage_error("--progress: '%s' is not 0 (none) or a number of seconds from 0.1 to 1e9", arg),
			       -1;
		return 1;
	case OPT_CHECKPOINT:
		if (!parse_seconds(arg, &o->checkpoint_s) || o->checkpoint_s < 0.01)
			return usage_error("--checkpoint-interval: '%s' is not a number of seconds from 0.01 to 1e9", arg),
			       -1;
		return 1;
	case 'j':
		if (!parse_count(arg, &v) || v < 1 || v > 4096)
			return usage_error("--threads: '%s' is not a number from 1 to 4096", arg), -1;
		o->threads = (int)v;
		return 1;
	case OPT_EXCLUDE:
		if (!job_exclude_ok(arg))
			return -1;
		o->excludes = xrealloc(o->excludes, (o->nexcludes + 1) * sizeof(*o->excludes));
		o->excludes[o->nexcludes++] = (char *)arg;
		return 1;
	case OPT_RATE:
		if (!parse_count(arg, &o->rate) || !o->rate)
			return usage_error("--rate: '%s' is not a number of %s per second from 1 to 2^64-1", arg, o->rate_unit),
			       -1;
		return 1;
	case OPT_IONICE:
		if ((o->ioprio = parse_ionice(arg)) < 0)
			return usage_error("--ionice: '%s' is not idle or be:0..7", arg), -1;
		return 1;
	}
	return 0;
}

int job_getopt(struct job_opts *o, int argc, char **argv, const char *shortopts, const struct option *longopts,
	       const char *help, int *rc)
{
	o->argc = argc;
	o->argv = argv;
	int opt;
	while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		int r = job_opt(o, opt, optarg);
		if (r < 0)
			return *rc = EXIT_USAGE, 0;
		if (r > 0)
			continue;
		if (opt == OPT_HELP) {
			printf(help, job_options_help);
			return *rc = EXIT_OK, 0;
		}
		if (opt == '?')
			return *rc = usage_hint(), 0; /* getopt said what is wrong */
		return opt;
	}
	return *rc = job_check_outputs(o, NULL, 0) ? EXIT_USAGE : OPTS_RUN, 0;
}

int job_threads(const struct job_opts *o, int per_cpu, int min, int cap)
{
	if (o->threads)
		return o->threads;
	int n = per_cpu * cpu_count();
	return n < min ? min : cap && n > cap ? cap : n;
}

bool job_json_stdout(const struct job_opts *o) { return o->json && !strcmp(o->json, "-"); }

int identity_add_path(struct sbuf *id, const char *p)
{
	char abs[PATH_MAX];
	if (!path_resolve(p, abs))
		return -1;
	ser_str(id, abs);
	return 0;
}

void identity_add_operands(struct sbuf *id, char *const *ops, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		identity_add_path(id, ops[i]);
		ser_str(id, ops[i]);
	}
}

void identity_add_excludes(struct sbuf *id, const struct job_opts *o)
{
	for (size_t i = 0; i < o->nexcludes; i++)
		ser_str(id, o->excludes[i]);
}

/* Is the state directory sdir (absolute, resolved) inside one of trees? Then say so. */
static bool state_in_trees(const char *sdir, char *const *trees, size_t ntrees)
{
	char tdir[PATH_MAX];
	for (size_t i = 0; i < ntrees; i++)
		if (realpath(trees[i], tdir) && path_inside(sdir, tdir)) {
			warnx_("the state directory %s is inside %s: choose another with --state DIR", sdir, trees[i]);
			return true;
		}
	return false;
}

void job_add_printable(struct sbuf *b, const char *s)
{
	for (; *s; s++)
		sbuf_addc(b, (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s);
}

char *fmt_time(char *buf, time_t t)
{
	struct tm tm;
	if (!t || !localtime_r(&t, &tm) || !strftime(buf, 32, "%Y-%m-%d %H:%M:%S", &tm))
		strcpy(buf, "?");
	return buf;
}

void job_describe(struct sbuf *b, const struct ckpt_info *in)
{
	char t[32], n[32];
	if (in->command) {
		sbuf_addc(b, '\'');
		job_add_printable(b, in->command);
		sbuf_addc(b, '\'');
	} else {
		sbuf_adds(b, "a command not recorded");
	}
	if (in->started)
		sbuf_printf(b, ", started %s", fmt_time(t, in->started));
	if (!in->snapshot_time) {
		sbuf_adds(b, in->has_identity ? ", with no snapshot left" : ", no snapshot");
		return;
	}
	sbuf_printf(b, "; last snapshot %s (%s)", fmt_time(t, in->snapshot_time), fmt_bytes(n, in->snapshot_bytes));
	if (in->progress) {
		sbuf_adds(b, ": ");
		job_add_printable(b, in->progress);
	}
}

/* Did an earlier run leave anything to resume or discard (a snapshot, or its identity)? */
static bool left_work(const struct ckpt_info *in) { return in && (in->snapshot_time || in->has_identity); }

/* Say on stderr what of an earlier run this one found, and what becomes of it. */
static void notice(const char *what, const struct ckpt_info *in, const char *after)
{
	struct sbuf b = {0};
	if (in)
		job_describe(&b, in);
	sbuf_addc(&b, 0);
	warnx_("%s: %s%s", what, b.data, after);
	sbuf_free(&b);
}

/* The command line as one readable line ("myriad walk ..."), for the state directory. */
static void job_cmdline(struct sbuf *b, int argc, char **argv)
{
	sbuf_adds(b, prog_name); /* argv[0] is that too */
	for (int i = 1; i < argc; i++)
		sbuf_printf(b, " %s", argv[i]);
	sbuf_addc(b, '\n');
}

/* A run whose output cannot be resumed exactly keeps no state; an earlier run's state of the same
 * job (an older myriad kept one) is discarded, saying so, rather than resumed into short output. */
static int discard_unresumable(const struct job_opts *o, const char *cmd, const struct sbuf *identity,
			       const char *summary)
{
	struct stat st;
	char *dir = ckpt_dir_for(cmd, o->state, identity);
	bool there = lstat(dir, &st) == 0;
	free(dir);
	if (!there)
		return 0;
	struct ckpt *c = ckpt_open(cmd, o->state, identity, summary);
	if (!c)
		return EXIT_USAGE;
	if (left_work(ckpt_previous(c))) {
		warnx_("%s, so this run keeps no state and starts over", o->unresumable);
		notice("discarded the earlier run's state", ckpt_previous(c), "");
	}
	ckpt_finish(c);
	return 0;
}

/* job_begin, with the command line (summary) the state records. */
static int begin(struct job *j, const struct job_opts *o, const char *cmd, const struct sbuf *identity,
		 const char *summary, char *const *trees, size_t ntrees)
{
	memset(j, 0, sizeof(*j));
	j->opts = o;
	if (o->unresumable && !o->no_state) {
		int r = discard_unresumable(o, cmd, identity, summary);
		if (r)
			return r;
	} else if (!o->no_state) {
		/* Checked before the directory is made when its parent exists, so that a refusal leaves
		 * the tree as it was; after, for a directory made with its parents. */
		char sdir[PATH_MAX];
		char *dir = ckpt_dir_for(cmd, o->state, identity);
		bool resolved = path_resolve(dir, sdir);
		free(dir);
		if (resolved && state_in_trees(sdir, trees, ntrees))
			return EXIT_USAGE;
		j->ckpt = ckpt_open(cmd, o->state, identity, summary);
		if (!j->ckpt)
			return EXIT_USAGE;
		if (!resolved && realpath(ckpt_dir(j->ckpt), sdir) && state_in_trees(sdir, trees, ntrees)) {
			ckpt_close(j->ckpt);
			return EXIT_USAGE;
		}
		const struct ckpt_info *prev = ckpt_previous(j->ckpt);
		if (o->fresh && left_work(prev)) {
			notice("--fresh: discarding the earlier run's state", prev, "; starting over");
			if (ckpt_discard(j->ckpt) != 0) {
				ckpt_close(j->ckpt);
				return EXIT_USAGE;
			}
		}
		int r = ckpt_load(j->ckpt, &j->snapshot);
		if (r < 0) {
			ckpt_close(j->ckpt);
			return EXIT_USAGE;
		}
		j->resumed = r > 0;
		if (j->resumed) {
			notice("resuming the earlier run of this job", prev, "");
			warnx_("its state is in %s; to start over instead, stop this run and run the command again with "
			       "--fresh",
			       ckpt_dir(j->ckpt));
		} else if (ckpt_started(j->ckpt))
			notice("found an earlier run of this job with nothing to resume: this one starts from the beginning",
			       prev, "");
	}
	/* A resumed run reopens the --errors file when its engine reads the length from the snapshot. */
	j->errlog.path = o->errors;
	j->errlog.file.fd = -1;
	if (!j->resumed && errlog_open(&j->errlog, o->errors, false, 0, 0) != 0) {
		ckpt_close(j->ckpt);
		return EXIT_USAGE;
	}
	sig_install();
	return 0;
}

int job_begin(struct job *j, const struct job_opts *o, const char *cmd, const struct sbuf *identity,
	      char *const *trees, size_t ntrees)
{
	struct sbuf cmdline = {0};
	job_cmdline(&cmdline, o->argc, o->argv);
	int rc = begin(j, o, cmd, identity, cmdline.data, trees, ntrees);
	sbuf_free(&cmdline);
	return rc;
}

void job_refused(struct job *j)
{
	if (j->resumed || ckpt_started(j->ckpt))
		ckpt_close(j->ckpt); /* the job stays as it was */
	else
		ckpt_finish(j->ckpt); /* nothing was saved: leave no state behind */
}

const struct sbuf *job_snapshot(const struct job *j) { return j->resumed ? &j->snapshot : NULL; }

const char *job_snapshot_name(const struct job *j) { return j->ckpt ? ckpt_snapshot_path(j->ckpt) : NULL; }

enum run_result job_execute(struct job *j, const struct run_hooks *h)
{
	/* Also on a resume: the new session counts even when it is killed before its first interval. */
	if (j->ckpt)
		run_checkpoint(h, j->ckpt, false);
	h->start(h->ctx);
	struct run_opts ro = {.ckpt = j->ckpt, .progress_s = j->opts->progress_s, .checkpoint_s = j->opts->checkpoint_s};
	enum run_result r = run_loop(h, &ro);
	if (r == RUN_DONE)
		h->join(h->ctx);
	return r;
}

void job_identity(struct sbuf *id, const char *cmd)
{
	ser_begin(id, "MYRID001");
	ser_str(id, cmd);
}

int job_end(struct job *j, enum run_result r, uint64_t errors)
{
	errlog_close(&j->errlog);
	sbuf_free(&j->snapshot);
	if (r == RUN_STOPPED) {
		char why[640];
		const char *reason = j->stop_reason ? j->stop_reason : output_failure();
		if (output_reader_gone()) { /* `| head`: a listing cut short on purpose is not resumed */
			ckpt_finish(j->ckpt);
			return EXIT_STOPPED;
		}
		if (j->quiet) {
			ckpt_close(j->ckpt);
			return EXIT_STOPPED;
		}
		if (reason)
			snprintf(why, sizeof(why), "stopped: %s", reason);
		else
			snprintf(why, sizeof(why), "stopped by signal %d", sig_stop_signal());
		if (j->ckpt) {
			warnx_("%s; state saved in %s: run the same command again to resume", why, ckpt_dir(j->ckpt));
			ckpt_close(j->ckpt);
		} else if (j->opts->unresumable && !j->opts->no_state) {
			warnx_("%s; no state was kept: %s: run the command again to start over", why, j->opts->unresumable);
		} else {
			warnx_("%s; no state was kept (--no-state)", why);
		}
		return EXIT_STOPPED;
	}
	ckpt_finish(j->ckpt);
	return errors || output_has_failed() ? EXIT_FAILED : EXIT_OK;
}

int parse_ionice(const char *spec)
{
	if (!strcmp(spec, "idle"))
		return 3 << 13; /* IOPRIO_CLASS_IDLE */
	if (!strncmp(spec, "be:", 3) && spec[3] >= '0' && spec[3] <= '7' && !spec[4])
		return (2 << 13) | (spec[3] - '0'); /* IOPRIO_CLASS_BE, level */
	return -1;
}

int apply_ionice(int ioprio)
{
	if (ioprio < 0)
		return 0;
	if (syscall(SYS_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, 0, ioprio) == 0)
		return 0;
	warnx_("--ionice: ioprio_set: %s", strerror(errno));
	return -1;
}

int write_json_file(const char *path, const struct sbuf *doc)
{
	return outfile_write_file(path, doc->data, doc->len);
}

int job_check_named(char *const *ops, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!*ops[i])
			return usage_error("'': an empty operand names no file or directory (operand %zu)", i + 1);
	return 0;
}

int job_check_dirs(char *const *dirs, size_t n)
{
	if (job_check_named(dirs, n))
		return EXIT_USAGE;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (stat(dirs[i], &st) != 0)
			return usage_error("%s: %s", dirs[i], strerror(errno));
		if (!S_ISDIR(st.st_mode))
			return usage_error("%s: not a directory", dirs[i]);
	}
	return 0;
}

void job_walk_progress(struct sbuf *line, struct walk *w, const char *cmd, uint64_t entries, uint64_t dirs,
		       const char *after)
{
	job_walk_progress_errors(line, w, cmd, entries, dirs, walk_errors(w), after);
}

void job_walk_progress_errors(struct sbuf *line, struct walk *w, const char *cmd, uint64_t entries, uint64_t dirs,
			      uint64_t errors, const char *after)
{
	double el = walk_elapsed(w);
	char b[32];
	sbuf_printf(line, "%s: ", cmd);
	progress_format(line, "entries", entries, 0, el, el > 0 ? entries / el : 0, errors);
	sbuf_printf(line, " (%s %s%s)", fmt_count(b, dirs), plural(dirs, "directory", "directories"), after);
	walk_stuck(w, line, 5);
}
