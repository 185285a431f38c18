/*
 * signals: SIGINT and SIGTERM ask a run to stop; the main thread sleeps in sig_wait and is woken
 * by a signal or by sig_wake (workers call it when the work is done). A self-pipe makes both
 * wake-ups immediate, so a stop is handled within milliseconds, never at the next tick.
 * SIGPIPE is ignored: a write to a closed pipe fails with EPIPE, and the failure is handled like
 * any other failed output (report/outfile.h), never by dying half-way through a snapshot.
 */
#ifndef MYRIAD_SIGNALS_H
#define MYRIAD_SIGNALS_H

#include <stdbool.h>

/* Install the handlers (once, before starting workers). SIGPIPE is ignored. */
void sig_install(void);
/* Sleep up to timeout_ms or until woken. Returns true once a stop signal or request has arrived. */
bool sig_wait(int timeout_ms);
/* Ask the run to stop as SIGTERM would, without a signal (thread-safe; e.g. an output failed). */
void sig_request_stop(void);
/* Has a stop signal or request arrived? */
bool sig_stop_requested(void);
/* The signal that stopped us (0 if none, or a request). */
int sig_stop_signal(void);
/* Wake sig_wait when a child process ends (SIGCHLD), so a parent waiting for one (proc_run)
 * reaps it at once instead of at its next tick. Stop signals are left as they are. */
void sig_wake_on_child(void);
/* Wake the thread in sig_wait (async-signal-safe). */
void sig_wake(void);

#endif
