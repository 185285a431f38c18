/*
 * Fuzz target "results": results.json of myriad lifecycle as `myriad report` and a resumed
 * lifecycle read it back (the JSON reader, then the results model), and the results written
 * again with their projections. What was read and written again must read back.
 */
#include <stddef.h>
#include <stdint.h>

#include "fuzz.h"
#include "lifecycle/jsonread.h"
#include "lifecycle/results.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > (1u << 20))
		return 0;
	char *text = malloc(size ? size : 1); /* exact size: a read past the end is caught */
	memcpy(text, data, size);
	char err[256];
	struct lc_results *r = lc_parse(text, size, "fuzz.json", err, sizeof(err));
	if (r) {
		struct sbuf out = {0};
		lc_results_json(r, &out);
		struct lc_results *back = lc_parse(out.data, out.len, "again.json", err, sizeof(err));
		if (!back)
			fprintf(stderr, "written again, not read back: %s\n", err);
		fuzz_check(back != NULL);
		fuzz_check(back->ncycles == r->ncycles);
		lc_free(back);
		sbuf_free(&out);
		lc_free(r);
	} else {
		fuzz_check(err[0] != 0);
		/* The JSON reader alone, as lifecycle reads its subcommands' --json summaries. */
		struct jv *v = jv_parse(text, size, err, sizeof(err));
		jv_free(v);
	}
	free(text);
	return 0;
}
