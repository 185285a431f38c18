/*
 * create_loop: the bare create loop that bench/fill.sh holds `myriad fill` against. It is the floor
 * of what any file creator can do: no checkpoint, no manifest, no latency timing, no error report.
 *
 *   create_loop DIR FILES THREADS
 *
 * Makes DIR (or uses it, empty, if it exists) and FILES empty files in leaf directories DIR/d<k> of 1000
 * entries, named f<i> like myriad's layout. THREADS workers claim whole leaves from a shared
 * counter, so every thread creates only in directories of its own; each file is one mknodat(2)
 * (S_IFREG, mode 0644): one system call per file, the cheapest way to make an empty file.
 * Exit 0 when every file was made, 1 on the first error (reported), 2 on bad usage.
 *
 * Built by bench/fill.sh with `gcc -O2 -pthread`; not part of `make`.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FANOUT 1000

static int top;                 /* fd of DIR */
static unsigned long long files, leaves;
static atomic_ullong next_leaf;
static atomic_int failed;

static void *worker(void *arg)
{
	(void)arg;
	char name[32];
	for (;;) {
		unsigned long long leaf = atomic_fetch_add(&next_leaf, 1);
		if (leaf >= leaves || atomic_load(&failed))
			return NULL;
		snprintf(name, sizeof(name), "d%llu", leaf);
		if (mkdirat(top, name, 0755) != 0) {
			fprintf(stderr, "create_loop: mkdir d%llu: %s\n", leaf, strerror(errno));
			atomic_store(&failed, 1);
			return NULL;
		}
		int dfd = openat(top, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0) {
			fprintf(stderr, "create_loop: open d%llu: %s\n", leaf, strerror(errno));
			atomic_store(&failed, 1);
			return NULL;
		}
		unsigned long long first = leaf * FANOUT, end = first + FANOUT < files ? first + FANOUT : files;
		for (unsigned long long i = first; i < end; i++) {
			snprintf(name, sizeof(name), "f%llu", i);
			if (mknodat(dfd, name, S_IFREG | 0644, 0) != 0) {
				fprintf(stderr, "create_loop: d%llu/%s: %s\n", leaf, name, strerror(errno));
				atomic_store(&failed, 1);
				break;
			}
		}
		close(dfd);
	}
}

int main(int argc, char **argv)
{
	char *end;
	if (argc != 4) {
		fprintf(stderr, "usage: create_loop DIR FILES THREADS\n");
		return 2;
	}
	files = strtoull(argv[2], &end, 10);
	int bad = !*argv[2] || *end;
	long threads = strtol(argv[3], &end, 10);
	if (bad || !*argv[3] || *end || threads < 1 || threads > 4096) {
		fprintf(stderr, "create_loop: bad FILES or THREADS\n");
		return 2;
	}
	leaves = (files + FANOUT - 1) / FANOUT;
	if ((mkdir(argv[1], 0755) != 0 && errno != EEXIST) || (top = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "create_loop: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	pthread_t *tid = calloc(threads, sizeof(*tid));
	if (!tid)
		return 1;
	for (long t = 0; t < threads; t++)
		if (pthread_create(&tid[t], NULL, worker, NULL) != 0) {
			fprintf(stderr, "create_loop: pthread_create failed\n");
			return 1;
		}
	for (long t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	return atomic_load(&failed) ? 1 : 0;
}
