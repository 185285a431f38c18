/*
 * cgroup: what io/cgroup_io (an I/O limit for this process) and io/cgroup_mem (a memory limit for
 * one child) share about the cgroup filesystem: its control files, written and read whole, and
 * the directory of this process's own cgroup in a hierarchy, found from /proc/self/cgroup and the
 * mount table (io/mounts).
 */
#ifndef MYRIAD_CGROUP_H
#define MYRIAD_CGROUP_H

#include <stdbool.h>
#include <stddef.h>

/* Write text to dir/file in one write (a control file takes a value whole or not at all). 0, or
 * -1 with errno. */
int cgroup_write(const char *dir, const char *file, const char *text);

/* The first line of dir/file, without its newline, into buf. 0, or -1 with errno. */
int cgroup_read_line(const char *dir, const char *file, char *buf, size_t len);

/* Is word one of the words of list, separated by any character of sep? */
bool cgroup_has_word(const char *list, const char *word, const char *sep);

/* Does the first line of dir/file (a list such as cgroup.controllers) hold word? */
bool cgroup_file_has_word(const char *dir, const char *file, const char *word);

/* The directory of this process's cgroup in the v2 hierarchy (ctl "") or in the v1 hierarchy of
 * controller ctl ("memory", "blkio"), into dir; *root says whether it is that hierarchy's root. */
bool cgroup_own_dir(const char *ctl, char *dir, size_t len, bool *root);

/* cgroup v2: this process's cgroup (home) and where a new cgroup with controllers goes (parent):
 * beside home, since a cgroup with processes may not have children with controllers, or below
 * the root when home is the root. */
bool cgroup_v2_parent(char *home, size_t hlen, char *parent, size_t plen);

#endif
