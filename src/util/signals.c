/* signals: stop requests and wake-ups for the main loop (see signals.h). */
#include "util/signals.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

static int wake_pipe[2] = {-1, -1};
static volatile sig_atomic_t stop_signal;
static atomic_bool stop_request; /* a stop asked for without a signal (an output failed) */

static void on_stop(int sig)
{
	stop_signal = sig;
	sig_wake();
}

static void make_wake_pipe(void)
{
	if (wake_pipe[0] < 0 && pipe2(wake_pipe, O_NONBLOCK | O_CLOEXEC) != 0)
		wake_pipe[0] = wake_pipe[1] = -1;
}

static void on_child(int sig)
{
	(void)sig;
	sig_wake();
}

void sig_install(void)
{
	make_wake_pipe();
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

void sig_wake_on_child(void)
{
	make_wake_pipe();
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_child;
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
}

void sig_wake(void)
{
	int e = errno;
	if (wake_pipe[1] >= 0) {
		char c = 1;
		ssize_t r = write(wake_pipe[1], &c, 1);
		(void)r;
	}
	errno = e;
}

void sig_request_stop(void)
{
	atomic_store(&stop_request, true);
	sig_wake();
}

bool sig_wait(int timeout_ms)
{
	if (sig_stop_requested())
		return true;
	struct pollfd p = {.fd = wake_pipe[0], .events = POLLIN};
	if (poll(&p, 1, timeout_ms) > 0) {
		char buf[64];
		while (read(wake_pipe[0], buf, sizeof(buf)) > 0) {
		}
	}
	return sig_stop_requested();
}

bool sig_stop_requested(void) { return stop_signal != 0 || atomic_load(&stop_request); }

int sig_stop_signal(void) { return stop_signal; }
