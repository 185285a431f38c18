/* proc: finding and running external programs (see proc.h). */
#include "util/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/sbuf.h"
#include "util/signals.h"
#include "util/util.h"

char *proc_find_tool(const char *name)
{
	const char *path = getenv("PATH");
	struct sbuf p = {0};
	sbuf_printf(&p, "%s:/usr/sbin:/sbin:/usr/bin:/bin:/usr/local/sbin:/usr/local/bin", path ? path : "");
	sbuf_addc(&p, 0);
	char *found = NULL;
	for (char *save, *d = strtok_r(p.data, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		char f[4096];
		snprintf(f, sizeof(f), "%s/%s", d, name);
		if (access(f, X_OK) == 0)
			found = xstrdup(f);
	}
	sbuf_free(&p);
	return found;
}

/* In the child: its own group, dying with the parent, default signals, the standard files set. */
static void child_setup(pid_t parent, const char *log)
{
	setpgid(0, 0);
	/* Killed with us, even by kill -9: no phase outlives the run that times it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	int in = open("/dev/null", O_RDONLY);
	int out = log ? open(log, O_WRONLY | O_CREAT | O_APPEND, 0644) : open("/dev/null", O_WRONLY);
	if (in >= 0)
		dup2(in, 0);
	if (out >= 0) {
		dup2(out, 1);
		dup2(out, 2);
	}
}

int proc_run(char *const argv[], int (*fn)(void), const char *log, double *wall_s, double *rss_kib)
{
	sig_wake_on_child();
	uint64_t t0 = now_ns();
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		child_setup(parent, log);
		if (!argv)
			_exit(fn());
		execv(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	int st = 0;
	struct rusage ru;
	memset(&ru, 0, sizeof(ru));
	bool termed = false, killed = false;
	uint64_t term_at = 0;
	for (;;) {
		pid_t w = wait4(pid, &st, WNOHANG, &ru);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			break;
		if (sig_stop_requested()) {
			if (!termed) {
				kill(-pid, SIGTERM);
				termed = true;
				term_at = now_ns();
			} else if (!killed && now_ns() - term_at > 5000000000ull) {
				kill(-pid, SIGKILL);
				killed = true;
			}
			usleep(5000);
		} else {
			sig_wait(500);
		}
	}
	if (wall_s)
		*wall_s = (now_ns() - t0) / 1e9;
	if (rss_kib)
		*rss_kib = (double)ru.ru_maxrss;
	return st;
}
