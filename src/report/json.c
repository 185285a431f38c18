/* json: JSON writer with a reversible encoding for arbitrary path bytes (see json.h). */
#include "report/json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/util.h"

void json_string(struct sbuf *b, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	sbuf_reserve(b, len + 2);
	sbuf_addc(b, '"');
	size_t i = 0;
	while (i < len) {
		unsigned c = p[i];
		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			sbuf_addc(b, c);
			i++;
			continue;
		}
		if (c == '"' || c == '\\') {
			sbuf_addc(b, '\\');
			sbuf_addc(b, c);
			i++;
			continue;
		}
		if (c < 0x20) {
			switch (c) {
			case '\n': sbuf_add(b, "\\n", 2); break;
			case '\t': sbuf_add(b, "\\t", 2); break;
			case '\r': sbuf_add(b, "\\r", 2); break;
			default: sbuf_printf(b, "\\u%04x", c);
			}
			i++;
			continue;
		}
		size_t n = utf8_len(p + i, len - i);
		if (n) {
			sbuf_add(b, p + i, n);
			i += n;
		} else {
			sbuf_printf(b, "\\udc%02x", c);
			i++;
		}
	}
	sbuf_addc(b, '"');
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static long read_u4(const char *in, size_t left)
{
	if (left < 4)
		return -1;
	long v = 0;
	for (int k = 0; k < 4; k++) {
		int h = hexval(in[k]);
		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

static void put_utf8(struct sbuf *out, unsigned long cp)
{
	if (cp < 0x80) {
		sbuf_addc(out, cp);
	} else if (cp < 0x800) {
		sbuf_addc(out, 0xc0 | (cp >> 6));
		sbuf_addc(out, 0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		sbuf_addc(out, 0xe0 | (cp >> 12));
		sbuf_addc(out, 0x80 | ((cp >> 6) & 0x3f));
		sbuf_addc(out, 0x80 | (cp & 0x3f));
	} else {
		sbuf_addc(out, 0xf0 | (cp >> 18));
		sbuf_addc(out, 0x80 | ((cp >> 12) & 0x3f));
		sbuf_addc(out, 0x80 | ((cp >> 6) & 0x3f));
		sbuf_addc(out, 0x80 | (cp & 0x3f));
	}
}

size_t json_unstring(const char *in, size_t inlen, struct sbuf *out)
{
	size_t i = 0;
	while (i < inlen) {
		char c = in[i++];
		if (c == '"')
			return i;
		if (c != '\\') {
			sbuf_addc(out, c);
			continue;
		}
		if (i >= inlen)
			return 0;
		c = in[i++];
		switch (c) {
		case 'n': sbuf_addc(out, '\n'); break;
		case 't': sbuf_addc(out, '\t'); break;
		case 'r': sbuf_addc(out, '\r'); break;
		case 'b': sbuf_addc(out, '\b'); break;
		case 'f': sbuf_addc(out, '\f'); break;
		case '"': case '\\': case '/': sbuf_addc(out, c); break;
		case 'u': {
			long cp = read_u4(in + i, inlen - i);
			if (cp < 0)
				return 0;
			i += 4;
			if (cp >= 0xdc80 && cp <= 0xdcff) {
				sbuf_addc(out, (char)(cp & 0xff)); /* an escaped raw byte */
			} else if (cp >= 0xd800 && cp <= 0xdbff) {
				if (i + 6 > inlen || in[i] != '\\' || in[i + 1] != 'u')
					return 0;
				long lo = read_u4(in + i + 2, inlen - i - 2);
				if (lo < 0xdc00 || lo > 0xdfff)
					return 0;
				i += 6;
				put_utf8(out, 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00));
			} else {
				put_utf8(out, cp);
			}
			break;
		}
		default:
			return 0;
		}
	}
	return 0;
}

void json_init(struct json *j, struct sbuf *b)
{
	memset(j, 0, sizeof(*j));
	j->b = b;
}

static void json_key(struct json *j, const char *key)
{
	if (j->need_comma[j->depth])
		sbuf_addc(j->b, ',');
	j->need_comma[j->depth] = true;
	if (key) {
		json_string(j->b, key, strlen(key));
		sbuf_addc(j->b, ':');
	}
}

void json_open(struct json *j, const char *key, char bracket)
{
	if (j->depth > 0 || j->need_comma[0])
		json_key(j, key);
	sbuf_addc(j->b, bracket);
	j->depth++;
	j->need_comma[j->depth] = false;
}

void json_close(struct json *j, char bracket)
{
	j->depth--;
	sbuf_addc(j->b, bracket);
	if (j->depth == 0)
		j->need_comma[0] = false;
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	sbuf_printf(j->b, "%llu", (unsigned long long)v);
}

void json_i64(struct json *j, const char *key, int64_t v)
{
	json_key(j, key);
	sbuf_printf(j->b, "%lld", (long long)v);
}

void json_double(struct json *j, const char *key, double v)
{
	json_key(j, key);
	if (!isfinite(v))
		sbuf_adds(j->b, "null");
	else if (v == trunc(v) && fabs(v) < 9007199254740992.0) /* 2^53: every integer exact */
		sbuf_printf(j->b, "%.0f", v);
	else
		sbuf_printf(j->b, "%.15g", v);
}

void json_bool(struct json *j, const char *key, bool v)
{
	json_key(j, key);
	sbuf_adds(j->b, v ? "true" : "false");
}

void json_str(struct json *j, const char *key, const char *s)
{
	json_key(j, key);
	json_string(j->b, s, strlen(s));
}

void json_bytes(struct json *j, const char *key, const char *s, size_t len)
{
	json_key(j, key);
	json_string(j->b, s, len);
}

void json_null(struct json *j, const char *key)
{
	json_key(j, key);
	sbuf_adds(j->b, "null");
}

void json_header(struct json *j, const char *command)
{
	json_str(j, "myriad_version", MYRIAD_VERSION);
	if (command)
		json_str(j, "command", command);
}

void json_document(struct json *j, struct sbuf *b, const char *command)
{
	json_init(j, b);
	json_open(j, NULL, '{');
	json_header(j, command);
}
