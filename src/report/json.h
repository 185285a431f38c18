/*
 * json: writes JSON into an sbuf. Used for every machine-readable output (summaries, error logs,
 * lifecycle results).
 *
 * Paths are bytes, not text. A JSON string holds them reversibly: valid UTF-8 is written as is
 * (with the escapes JSON requires), and each byte that is not part of valid UTF-8 is written as
 * the lone surrogate escape \udcXX, where XX is the byte — Python's "surrogateescape" convention,
 * so json.loads(s).encode("utf-8", "surrogateescape") gives the original bytes back.
 */
#ifndef MYRIAD_JSON_H
#define MYRIAD_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/sbuf.h"

/* Append bytes as a quoted JSON string, encoded as described above. */
void json_string(struct sbuf *b, const char *s, size_t len);

/*
 * A tiny streaming writer: json_open/json_close emit '{' '}' or '[' ']', json_key writes a key and
 * the separators are managed for you.
 */
struct json {
	struct sbuf *b;
	int depth;
	bool need_comma[32];
};

void json_init(struct json *j, struct sbuf *b);
void json_open(struct json *j, const char *key, char bracket);  /* key NULL inside arrays */
void json_close(struct json *j, char bracket);
void json_u64(struct json *j, const char *key, uint64_t v);
void json_i64(struct json *j, const char *key, int64_t v);
/* A number: an integral value (below 2^53) exactly, as digits; others to 15 significant digits;
 * NaN and infinities as null. */
void json_double(struct json *j, const char *key, double v);
void json_bool(struct json *j, const char *key, bool v);
void json_str(struct json *j, const char *key, const char *s);
void json_bytes(struct json *j, const char *key, const char *s, size_t len);
void json_null(struct json *j, const char *key);
/* The first fields of every document myriad writes: myriad_version, then command (none when NULL),
 * so that a reader knows what wrote it before it reads further. */
void json_header(struct json *j, const char *command);
/* Start a document of myriad's in b: json_init, the opening '{' and json_header's fields. The
 * caller closes it with json_close(j, '}'). */
void json_document(struct json *j, struct sbuf *b, const char *command);

/* Decode a JSON string body written by json_string back to bytes (for tests and readers).
 * in points after the opening quote; returns the number of input bytes consumed up to and
 * including the closing quote, or 0 on malformed input. */
size_t json_unstring(const char *in, size_t inlen, struct sbuf *out);

#endif
