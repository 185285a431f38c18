/*
 * fuzz: what the libFuzzer harnesses in tests/fuzz share. Each harness is one target
 * (build/fuzz/NAME, built by `make fuzz`) that feeds one reader of the product hostile bytes; a
 * crash, a sanitizer report, a leak or a broken invariant (fuzz_check) is a bug in the product.
 */
#ifndef MYRIAD_FUZZ_H
#define MYRIAD_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "util/sbuf.h"

/* An invariant of the product that must hold whatever the input: abort (a crash libFuzzer saves). */
#define fuzz_check(cond)                                                                            \
	do {                                                                                        \
		if (!(cond)) {                                                                      \
			fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                                    \
		}                                                                                   \
	} while (0)

/*
 * A checkpoint blob from fuzz input. Blobs end with an xxh64 of everything before them, which
 * random mutations would almost never get right, so by default the harness appends the right one
 * and the decoder behind the checksum gets fuzzed; with raw, the input is taken as it is (the
 * checksum check itself gets fuzzed).
 */
static inline void fuzz_blob(struct sbuf *b, const uint8_t *data, size_t size, int raw)
{
	sbuf_add(b, data, size);
	if (!raw) {
		uint64_t h = XXH64(data, size, 0);
		for (int i = 0; i < 8; i++)
			sbuf_addc(b, (char)(h >> (8 * i)));
	}
}

#endif
