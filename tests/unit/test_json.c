/* Unit tests for json: escaping, and the reversible encoding of arbitrary path bytes; and the
 * escaping of paths in messages for people (errlog's escape_path). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "report/errlog.h"
#include "report/json.h"

static void roundtrip(const char *s, size_t len)
{
	struct sbuf enc = {0}, dec = {0};
	json_string(&enc, s, len);
	/* The encoding is plain ASCII-safe JSON: no raw control bytes. */
	for (size_t i = 0; i < enc.len; i++)
		assert_true((unsigned char)enc.data[i] >= 0x20);
	assert_int_equal(enc.data[0], '"');
	size_t used = json_unstring(enc.data + 1, enc.len - 1, &dec);
	assert_int_equal(used, enc.len - 1);
	assert_int_equal(dec.len, len);
	assert_memory_equal(dec.data ? dec.data : "", s, len);
	sbuf_free(&enc);
	sbuf_free(&dec);
}

static void escapes_what_json_requires(void **state)
{
	struct sbuf b = {0};
	json_string(&b, "a\"b\\c\nd\x01", 8);
	assert_int_equal(b.len, strlen("\"a\\\"b\\\\c\\nd\\u0001\""));
	assert_memory_equal(b.data, "\"a\\\"b\\\\c\\nd\\u0001\"", b.len);
	sbuf_free(&b);
}

static void invalid_utf8_becomes_surrogate_escapes(void **state)
{
	struct sbuf b = {0};
	json_string(&b, "x\xff\xc3", 3);
	assert_int_equal(b.len, strlen("\"x\\udcff\\udcc3\""));
	assert_memory_equal(b.data, "\"x\\udcff\\udcc3\"", b.len);
	sbuf_free(&b);
}

static void valid_utf8_is_kept(void **state)
{
	struct sbuf b = {0};
	json_string(&b, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9);
	assert_int_equal(b.len, 11);
	sbuf_free(&b);
}

static void every_byte_string_roundtrips(void **state)
{
	roundtrip("", 0);
	roundtrip("plain/path", 10);
	roundtrip("new\nline", 8);
	roundtrip("\xed\xa0\x80", 3); /* an encoded surrogate is not valid UTF-8 */
	roundtrip("\xc0\xaf", 2);     /* overlong */
	roundtrip("\xf4\x90\x80\x80", 4);
	char all[256];
	for (int i = 0; i < 256; i++)
		all[i] = (char)i;
	roundtrip(all, 256);
	srand(7);
	for (int n = 0; n < 2000; n++) {
		char s[40];
		size_t len = rand() % sizeof(s);
		for (size_t i = 0; i < len; i++)
			s[i] = (char)(rand() % 256);
		roundtrip(s, len);
	}
}

static void writer_manages_separators(void **state)
{
	struct sbuf b = {0};
	struct json j;
	json_init(&j, &b);
	json_open(&j, NULL, '{');
	json_u64(&j, "a", 1);
	json_open(&j, "b", '[');
	json_u64(&j, NULL, 2);
	json_str(&j, NULL, "x");
	json_close(&j, ']');
	json_bool(&j, "c", true);
	json_close(&j, '}');
	sbuf_addc(&b, 0);
	assert_string_equal(b.data, "{\"a\":1,\"b\":[2,\"x\"],\"c\":true}");
	sbuf_free(&b);
}

/* Messages for people (stderr, the progress line): valid UTF-8 kept, every other byte that a
 * terminal would garble or hide escaped. */
static void messages_escape_what_is_not_text(void **state)
{
	(void)state;
	static const char in[] = "a\xc3\xa9\xff\xfe\n\t\\\x01\xe2\x82\xac\xe2\x82\xed\xa0\x80\xc0\xaf\xf0\x9f\x98\x80z\xe2\xc2\x9b\xc2\xa0";
	struct sbuf b = {0};
	escape_path(&b, in, sizeof(in) - 1);
	sbuf_addc(&b, 0);
	/* é, € and the emoji as they are; \xed\xa0\x80 is a surrogate, \xc0\xaf an overlong '/', and
	 * \xe2\x82 (before the surrogate) and \xe2 cut sequences, and U+009B (a C1 control, which
	 * some terminals obey as CSI): escaped byte by byte. U+00A0 is printable: kept. */
	assert_string_equal(b.data, "a\xc3\xa9\\xff\\xfe\\n\\t\\\\\\x01\xe2\x82\xac\\xe2\\x82\\xed\\xa0\\x80\\xc0\\xaf"
				    "\xf0\x9f\x98\x80z\\xe2\\xc2\\x9b\xc2\xa0");
	sbuf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(escapes_what_json_requires),
	    cmocka_unit_test(invalid_utf8_becomes_surrogate_escapes),
	    cmocka_unit_test(valid_utf8_is_kept),
	    cmocka_unit_test(every_byte_string_roundtrips),
	    cmocka_unit_test(writer_manages_separators),
	    cmocka_unit_test(messages_escape_what_is_not_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
