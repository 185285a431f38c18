/*
 * proc: the external programs myriad runs (lifecycle's mkfs, mount, fsck and its phases; the
 * report's gnuplot). Finding a tool and running it as a child that never outlives us and that
 * a stop request ends, so every caller gets the same answers to "is it installed?" and "what
 * happened to it?".
 */
#ifndef MYRIAD_PROC_H
#define MYRIAD_PROC_H

/*
 * The executable name in $PATH, then in the usual system directories (/usr/sbin, /sbin,
 * /usr/bin, /bin, /usr/local/sbin, /usr/local/bin: a user's PATH often lacks the sbin ones,
 * where mkfs and losetup live). A malloc'd path, or NULL when there is none.
 */
char *proc_find_tool(const char *name);

/*
 * Run argv (argv[0] a path: see proc_find_tool) or, when argv is NULL, fn in a child process
 * of its own process group, stdin from /dev/null, stdout and stderr appended to log (NULL:
 * discarded). The child dies with us, even by kill -9; on a stop request (signals.h) its group
 * gets SIGTERM, then SIGKILL 5 s later. Returns the wait status (-1 with errno: could not
 * start); wall time and peak RSS through the pointers when not NULL.
 */
int proc_run(char *const argv[], int (*fn)(void), const char *log, double *wall_s, double *rss_kib);

#endif
