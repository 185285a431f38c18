/*
 * myriad jobs: see and clean up the state that stopped runs left behind. Lists the state
 * directories under the default location (or --state DIR) with what ckpt tells of each — command
 * line, start, last snapshot and its progress, size, whether a run holds it now — and removes them
 * by id or by age through ckpt's own removal: only directories carrying myriad's marker, only
 * myriad's names in them, never one whose lock a live run holds.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cmd/cmds.h"
#include "job/job.h"
#include "report/json.h"
#include "state/ckpt.h"
#include "util/util.h"

static const char jobs_help[] =
    "Usage: myriad jobs [--state DIR] [--json FILE]\n"
    "       myriad jobs [--state DIR] rm ID...\n"
    "       myriad jobs [--state DIR] rm --older-than AGE\n"
    "List the state that stopped runs of walk, fill, verify, rm and copy left to resume from, and\n"
    "remove it.\n"
    "\n"
    "      --state DIR          look in DIR instead of the default location ($XDG_STATE_HOME/myriad\n"
    "                           when it is set, else /var/lib/myriad for root, else\n"
    "                           ~/.local/state/myriad): a directory of states, or one\n"
    "                           state directory given to a command's --state\n"
    "      --json FILE          write the listing as JSON to FILE (- for standard output)\n"
    "      --older-than AGE     (rm) remove every state last written AGE ago or longer; AGE is a\n"
    "                           whole number with a unit: s, m, h, d or w (90m, 36h, 7d, 2w;\n"
    "                           0s: every stopped job's state)\n"
    "      --help               show this help\n"
    "\n"
    "The listing shows each state's ID (its directory's name), whether a run holds it now, when the\n"
    "job started, its last snapshot and how far the job had got then, its size on disk and its\n"
    "command line. 'rm' removes only directories carrying myriad's myriad-state marker, and in them\n"
    "only myriad's own files; it never removes a state a running job holds. Every ID is checked\n"
    "before anything is removed.\n"
    "Exit status: 0 done; 1 a state could not be removed (in use, or an error); 2 usage error or\n"
    "refused before anything was removed.\n";

struct jobs_opts {
	const char *state, *json;
	bool rm;
	uint64_t older_than_s;
	bool older_set; /* --older-than given (0s: every stopped job) */
	char **ids;
	size_t nids;
};

struct job_entry {
	char *id, *dir;
	struct ckpt_info info;
};

struct job_list {
	struct job_entry *v;
	size_t n;
	char *base;
};

/* "7d" into seconds: a whole number and one of s m h d w; "0s" is every stopped job. */
static bool parse_age(const char *s, uint64_t *out)
{
	static const char units[] = "smhdw";
	static const uint64_t secs[] = {1, 60, 3600, 86400, 604800};
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	const char *u = *end ? strchr(units, *end) : NULL;
	if (errno || *s < '0' || *s > '9' || !u || end[1] || v > UINT64_MAX / secs[u - units])
		return false;
	*out = v * secs[u - units];
	return true;
}

static int jobs_parse(int argc, char **argv, void *opts)
{
	enum { O_STATE = 1000, O_JSON, O_OLDER, O_HELP };
	static const struct option longopts[] = {
	    {"state", required_argument, 0, O_STATE},
	    {"json", required_argument, 0, O_JSON},
	    {"older-than", required_argument, 0, O_OLDER},
	    {"help", no_argument, 0, O_HELP},
	    {0, 0, 0, 0},
	};
	struct jobs_opts *o = opts;
	int opt;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case O_STATE:
			if (!job_name_given("--state", optarg))
				return EXIT_USAGE;
			o->state = optarg;
			break;
		case O_JSON:
			if (!job_output_ok("--json", optarg))
				return EXIT_USAGE;
			o->json = optarg;
			break;
		case O_OLDER:
			o->older_set = true;
			if (!parse_age(optarg, &o->older_than_s))
				return usage_error("--older-than: '%s' is not an age: a whole number from 0 and a unit, s m "
						   "h d or w (e.g. 7d; 0s: every stopped job)",
						   optarg);
			break;
		case O_HELP: fputs(jobs_help, stdout); return EXIT_OK;
		default: return usage_hint();
		}
	}
	char **ops = argv + optind;
	size_t nops = argc - optind;
	if (nops && !strcmp(ops[0], "list")) {
		ops++, nops--;
	} else if (nops && !strcmp(ops[0], "rm")) {
		o->rm = true;
		ops++, nops--;
	} else if (nops) {
		return usage_error("'%s': not an action: 'rm ID...' or 'rm --older-than AGE' removes, none lists",
				   ops[0]);
	}
	if (!o->rm && nops)
		return usage_error("'%s': the listing takes no operands (to remove: myriad jobs rm ID...)", ops[0]);
	if (!o->rm && o->older_set)
		return usage_error("--older-than goes with rm: myriad jobs rm --older-than AGE");
	if (o->rm && o->json)
		return usage_error("--json is for the listing, not for rm");
	if (o->rm && !nops && !o->older_set)
		return usage_error("rm: give the IDs of the states to remove, or --older-than AGE");
	if (o->rm && nops && o->older_set)
		return usage_error("rm: give IDs or --older-than AGE, not both");
	o->ids = ops;
	o->nids = nops;
	return job_check_named(ops, nops) ? EXIT_USAGE : OPTS_RUN;
}

static void jobs_opts_free(void *opts) { (void)opts; }

static int by_id(const void *a, const void *b)
{
	return strcmp(((const struct job_entry *)a)->id, ((const struct job_entry *)b)->id);
}

static void add_entry(struct job_list *l, const char *id, const char *dir, const struct ckpt_info *in)
{
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = (struct job_entry){.id = xstrdup(id), .dir = xstrdup(dir), .info = *in};
}

/*
 * Every state in base: base itself when it is one (a command's --state DIR), else its
 * subdirectories that are. Directories without myriad's marker are named on stderr and left out.
 * 0, or -1 when base cannot be read (message printed).
 */
static int collect(struct job_list *l, const char *base)
{
	char why[NAME_MAX + 64] = "";
	struct ckpt_info in;
	l->base = xstrdup(base);
	int r = ckpt_inspect(base, &in, why, sizeof(why));
	if (r > 0) {
		const char *slash = strrchr(base, '/');
		add_entry(l, slash && slash[1] ? slash + 1 : base, base, &in);
		return 0;
	}
	DIR *d = opendir(base);
	if (!d) {
		if (errno == ENOENT)
			return 0; /* nothing was ever saved there */
		warnx_("%s: %s", base, strerror(errno));
		return -1;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char path[PATH_MAX];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s", base, e->d_name);
		if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode))
			continue;
		r = ckpt_inspect(path, &in, why, sizeof(why));
		if (r > 0)
			add_entry(l, e->d_name, path, &in);
		else if (r == 0)
			warnx_("%s: not listed: not myriad's state (%s)", path, why);
		else
			warnx_("%s: %s", path, strerror(errno));
	}
	closedir(d);
	qsort(l->v, l->n, sizeof(*l->v), by_id);
	return 0;
}

static void list_free(struct job_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].id);
		free(l->v[i].dir);
		ckpt_info_free(&l->v[i].info);
	}
	free(l->v);
	free(l->base);
}

static void json_time(struct json *j, const char *key, time_t t)
{
	if (t)
		json_i64(j, key, t);
	else
		json_null(j, key);
}

/* A string of bytes read from the state (a command line, a progress line), or null. */
static void json_text(struct json *j, const char *key, const char *s)
{
	if (s)
		json_bytes(j, key, s, strlen(s));
	else
		json_null(j, key);
}

static void list_json(const struct job_list *l, struct sbuf *b)
{
	struct json j;
	json_document(&j, b, NULL);
	json_text(&j, "state", l->base);
	json_open(&j, "jobs", '[');
	for (size_t i = 0; i < l->n; i++) {
		const struct ckpt_info *in = &l->v[i].info;
		json_open(&j, NULL, '{');
		json_text(&j, "id", l->v[i].id);
		json_text(&j, "dir", l->v[i].dir);
		json_text(&j, "command", in->command);
		json_time(&j, "started", in->started);
		json_time(&j, "last_snapshot", in->snapshot_time);
		json_u64(&j, "snapshot_bytes", in->snapshot_bytes);
		json_text(&j, "progress", in->progress);
		json_time(&j, "last_written", in->last_written);
		json_u64(&j, "disk_bytes", in->disk_bytes);
		json_bool(&j, "running", in->running);
		if (in->running)
			json_i64(&j, "pid", in->pid);
		else
			json_null(&j, "pid");
		json_close(&j, '}');
	}
	json_close(&j, ']');
	json_close(&j, '}');
}

static void list_text(const struct job_list *l)
{
	if (!l->n) {
		printf("no saved state in %s\n", l->base);
		return;
	}
	size_t w = 2;
	for (size_t i = 0; i < l->n; i++)
		if (strlen(l->v[i].id) > w)
			w = strlen(l->v[i].id);
	printf("saved state in %s:\n", l->base);
	printf("%-*s  %-11s  %-19s  %-19s  %10s  %s\n", (int)w, "ID", "RUNNING", "STARTED", "LAST SNAPSHOT", "SIZE",
	       "COMMAND");
	for (size_t i = 0; i < l->n; i++) {
		const struct ckpt_info *in = &l->v[i].info;
		char run[32] = "no", t1[32], t2[32], sz[32];
		struct sbuf cmd = {0};
		if (in->running)
			snprintf(run, sizeof(run), "pid %ld", in->pid);
		job_add_printable(&cmd, in->command ? in->command : "?");
		sbuf_addc(&cmd, 0);
		printf("%-*s  %-11s  %-19s  %-19s  %10s  %s\n", (int)w, l->v[i].id, run, fmt_time(t1, in->started),
		       in->snapshot_time ? fmt_time(t2, in->snapshot_time) : "none", fmt_bytes(sz, in->disk_bytes), cmd.data);
		if (in->progress) {
			cmd.len = 0;
			job_add_printable(&cmd, in->progress);
			sbuf_addc(&cmd, 0);
			printf("%-*s  at the last snapshot: %s\n", (int)w, "", cmd.data);
		}
		sbuf_free(&cmd);
	}
}

/* Remove one state through ckpt; false (said why) when it was not. */
static bool remove_one(const struct job_entry *e)
{
	char why[NAME_MAX + 128] = "";
	struct ckpt_info in;
	struct sbuf cmd = {0};
	enum ckpt_remove_result r = ckpt_remove(e->dir, &in, why, sizeof(why));
	int err = errno;
	job_add_printable(&cmd, in.command ? in.command : "?");
	sbuf_addc(&cmd, 0);
	switch (r) {
	case CKPT_REMOVED:
		printf("removed %s (%s)%s%s\n", e->id, cmd.data, *why ? ": " : "", why);
		break;
	case CKPT_BUSY:
		warnx_("%s: not removed: a running job holds it (pid %ld): stop that run first", e->id, in.pid);
		break;
	case CKPT_NOT_OURS: warnx_("%s: not removed: %s is not myriad's state (%s)", e->id, e->dir, why); break;
	case CKPT_ERROR: warnx_("%s: not removed: %s: %s", e->id, e->dir, strerror(err)); break;
	}
	ckpt_info_free(&in);
	sbuf_free(&cmd);
	return r == CKPT_REMOVED;
}

static const struct job_entry *find_id(const struct job_list *l, const char *id)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].id, id))
			return &l->v[i];
	return NULL;
}

/* jobs rm ID...: every ID is a listed state no run holds, or nothing is removed. */
static int remove_ids(const struct job_list *l, char **ids, size_t nids)
{
	for (size_t i = 0; i < nids; i++) {
		const struct job_entry *e = find_id(l, ids[i]);
		char dir[PATH_MAX], why[NAME_MAX + 64] = "";
		struct ckpt_info in;
		snprintf(dir, sizeof(dir), "%s/%s", l->base, ids[i]);
		if (!e && !strchr(ids[i], '/') && strcmp(ids[i], ".") && strcmp(ids[i], "..") &&
		    ckpt_inspect(dir, &in, why, sizeof(why)) == 0)
			return usage_error("refusing to remove %s: %s is not myriad's state (%s); nothing was removed",
					   ids[i], dir, why);
		if (!e)
			return usage_error("%s: no saved state by that ID in %s (see 'myriad jobs'); nothing was removed",
					   ids[i], l->base);
		if (e->info.running)
			return usage_error("refusing to remove %s: a running job holds it (pid %ld): stop that run "
					   "first; nothing was removed",
					   ids[i], e->info.pid);
	}
	int rc = EXIT_OK;
	for (size_t i = 0; i < nids; i++)
		if (!remove_one(find_id(l, ids[i])))
			rc = EXIT_FAILED;
	return rc;
}

/* jobs rm --older-than AGE: every state not written for AGE; one a run holds is kept. */
static int remove_old(const struct job_list *l, uint64_t age_s)
{
	time_t now = time(NULL);
	int rc = EXIT_OK;
	size_t removed = 0;
	for (size_t i = 0; i < l->n; i++) {
		const struct job_entry *e = &l->v[i];
		if (now - e->info.last_written < (time_t)age_s)
			continue;
		if (e->info.running) {
			warnx_("%s: not removed: a running job holds it (pid %ld)", e->id, e->info.pid);
			rc = EXIT_FAILED;
		} else if (remove_one(e)) {
			removed++;
		} else {
			rc = EXIT_FAILED;
		}
	}
	if (!removed && rc == EXIT_OK)
		printf("no saved state in %s is that old\n", l->base);
	return rc;
}

static int jobs_run(void *opts)
{
	struct jobs_opts *o = opts;
	struct job_list l = {0};
	char *base = o->state ? xstrdup(o->state) : ckpt_default_base();
	int rc = collect(&l, base) == 0 ? EXIT_OK : EXIT_USAGE;
	free(base);
	if (rc == EXIT_OK) {
		if (o->rm && o->nids)
			rc = remove_ids(&l, o->ids, o->nids);
		else if (o->rm)
			rc = remove_old(&l, o->older_than_s);
		else if (o->json) {
			struct sbuf doc = {0};
			list_json(&l, &doc);
			rc = write_json_file(o->json, &doc) == 0 ? EXIT_OK : EXIT_FAILED;
			sbuf_free(&doc);
		} else
			list_text(&l);
	}
	list_free(&l);
	return rc;
}

const struct command cmd_jobs = {"jobs", "list and remove the saved state of stopped runs", sizeof(struct jobs_opts),
				 jobs_parse, jobs_run, jobs_opts_free};
