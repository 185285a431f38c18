/* throttle: a shared-schedule rate limiter (see throttle.h). */
#include "util/throttle.h"

#include <time.h>

#include "util/util.h"

#define BURST_NS 100000000ull

void throttle_init(struct throttle *t, double rate)
{
	t->rate = rate;
	pthread_mutex_init(&t->lock, NULL);
	t->next_ns = now_ns();
	t->waited_ns = 0;
}

void throttle_take(struct throttle *t, uint64_t n)
{
	if (t->rate <= 0 || n == 0)
		return;
	uint64_t now = now_ns();
	pthread_mutex_lock(&t->lock);
	if (t->next_ns + BURST_NS < now)
		t->next_ns = now - BURST_NS;
	t->next_ns += (uint64_t)(n * 1e9 / t->rate);
	uint64_t wait = t->next_ns > now + BURST_NS ? t->next_ns - now - BURST_NS : 0;
	t->waited_ns += wait;
	pthread_mutex_unlock(&t->lock);
	if (wait) {
		struct timespec ts = {(time_t)(wait / 1000000000u), (long)(wait % 1000000000u)};
		while (nanosleep(&ts, &ts) != 0) {
		}
	}
}
