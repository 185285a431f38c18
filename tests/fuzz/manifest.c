/*
 * Fuzz target "manifest": the fill manifest (DIR/.myriad-fill) as fill and verify read it back.
 * The first byte chooses whether the checksum line is made right (so the lines behind it get
 * fuzzed) or the input taken as it is. A manifest that parses must make its layout, and the
 * counts verify derives from it must stay within it.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>

#include "state/layout.h"
#include "fuzz.h"
#include "state/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > (1u << 20))
		return 0;
	int raw = data[0] & 1;
	data++, size--;
	struct sbuf b = {0};
	sbuf_add(&b, data, size);
	if (!raw) {
		char line[64];
		int n = snprintf(line, sizeof(line), "checksum %016llx\n", (unsigned long long)XXH64(data, size, 0));
		sbuf_add(&b, line, n);
	}
	/* An exact-size copy, so that reading one byte past the end is caught. */
	char *text = malloc(b.len ? b.len : 1);
	if (b.len)
		memcpy(text, b.data, b.len);
	struct manifest m;
	const char *why = NULL;
	int r = manifest_parse(text, b.len, &m, &why);
	fuzz_check(r == 1 || (r == -1 && why && m.npartial == 0 && !m.partial));
	if (r == 1) {
		struct layout lay;
		fuzz_check(layout_init(&lay, m.files, m.fanout, m.size_min, m.size_max, m.seed));
		fuzz_check(m.claimed <= lay.leaves);
		uint64_t n = manifest_file_count(&m, &lay);
		fuzz_check(n <= m.files);
		uint64_t sum = 0;
		if (m.claimed <= 4096) /* verify's sum over the claimed leaves, where it is cheap */
			for (uint64_t l = 0; l < m.claimed; l++) {
				uint64_t full = layout_leaf_files(&lay, l), k = manifest_leaf_files(&m, l, full);
				fuzz_check(k <= full);
				sum += k;
			}
		fuzz_check(m.claimed > 4096 || sum == n);
		for (uint64_t i = 0; i < m.npartial; i++)
			fuzz_check(manifest_leaf_files(&m, m.partial[i].leaf, UINT64_MAX) == m.partial[i].count);
		manifest_free(&m);
	}
	free(text);
	sbuf_free(&b);
	return 0;
}
