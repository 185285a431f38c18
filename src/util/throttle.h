/*
 * throttle: the one rate limiter every command uses (--rate entries/s, --bwlimit bytes/s). A
 * shared schedule: each take of n units moves the next free moment by n/rate and sleeps until the
 * caller's share begins, so the long-run rate holds across any number of threads, and at most a
 * short burst (0.1 s worth) is allowed after an idle spell.
 */
#ifndef MYRIAD_THROTTLE_H
#define MYRIAD_THROTTLE_H

#include <pthread.h>
#include <stdint.h>

struct throttle {
	double rate; /* units per second; 0: unlimited */
	pthread_mutex_t lock;
	uint64_t next_ns;
	uint64_t waited_ns; /* total time callers slept (reported in summaries) */
};

void throttle_init(struct throttle *t, double rate);
/* Account for n units, sleeping as long as the rate requires. */
void throttle_take(struct throttle *t, uint64_t n);

#endif
