/* jsonread: recursive-descent JSON reader into a tree (see jsonread.h). */
#include "lifecycle/jsonread.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/json.h"
#include "util/sbuf.h"
#include "util/util.h"

struct rd {
	const char *s, *end;
	const char *err;
	int depth;
};

static void skip_ws(struct rd *r)
{
	while (r->s < r->end && (*r->s == ' ' || *r->s == '\t' || *r->s == '\n' || *r->s == '\r'))
		r->s++;
}

static bool parse_value(struct rd *r, struct jv *v);
static void jv_clear(struct jv *v);

/* Does the input continue with the word w? */
static bool next_is(const struct rd *r, const char *w, size_t n)
{
	return (size_t)(r->end - r->s) >= n && !memcmp(r->s, w, n);
}

static bool parse_string(struct rd *r, char **out, size_t *len)
{
	/* at the opening quote */
	r->s++;
	struct sbuf b = {0};
	size_t used = json_unstring(r->s, r->end - r->s, &b);
	if (!used) {
		sbuf_free(&b);
		r->err = "malformed string";
		return false;
	}
	r->s += used;
	sbuf_addc(&b, '\0');
	*len = b.len - 1;
	*out = b.data;
	return true;
}

static bool parse_items(struct rd *r, struct jv *v, bool obj)
{
	char close = obj ? '}' : ']';
	size_t cap = 0;
	r->s++;
	skip_ws(r);
	if (r->s < r->end && *r->s == close) {
		r->s++;
		return true;
	}
	for (;;) {
		if (v->n == cap) {
			cap = cap ? cap * 2 : 4;
			v->items = xrealloc(v->items, cap * sizeof(*v->items));
			if (obj)
				v->keys = xrealloc(v->keys, cap * sizeof(*v->keys));
		}
		skip_ws(r);
		if (obj) {
			size_t kl;
			if (r->s >= r->end || *r->s != '"') {
				r->err = "expected a key";
				return false;
			}
			if (!parse_string(r, &v->keys[v->n], &kl))
				return false;
			skip_ws(r);
			if (r->s >= r->end || *r->s != ':') {
				free(v->keys[v->n]);
				r->err = "expected ':'";
				return false;
			}
			r->s++;
		}
		memset(&v->items[v->n], 0, sizeof(struct jv));
		if (!parse_value(r, &v->items[v->n])) {
			jv_clear(&v->items[v->n]); /* what it held before the error */
			if (obj)
				free(v->keys[v->n]);
			return false;
		}
		v->n++;
		skip_ws(r);
		if (r->s < r->end && *r->s == ',') {
			r->s++;
			continue;
		}
		if (r->s < r->end && *r->s == close) {
			r->s++;
			return true;
		}
		r->err = obj ? "expected ',' or '}'" : "expected ',' or ']'";
		return false;
	}
}

static bool parse_value(struct rd *r, struct jv *v)
{
	skip_ws(r);
	if (r->s >= r->end) {
		r->err = "unexpected end";
		return false;
	}
	if (++r->depth > 200) {
		r->err = "nested too deeply";
		return false;
	}
	bool ok = true;
	char c = *r->s;
	if (c == '{' || c == '[') {
		v->type = c == '{' ? JV_OBJ : JV_ARR;
		ok = parse_items(r, v, c == '{');
	} else if (c == '"') {
		v->type = JV_STR;
		ok = parse_string(r, &v->str, &v->len);
	} else if (next_is(r, "true", 4)) {
		v->type = JV_BOOL, v->b = true, r->s += 4;
	} else if (next_is(r, "false", 5)) {
		v->type = JV_BOOL, v->b = false, r->s += 5;
	} else if (next_is(r, "null", 4)) {
		v->type = JV_NULL, r->s += 4;
	} else {
		char buf[64];
		size_t k = 0;
		while (r->s + k < r->end && k < sizeof(buf) - 1 && r->s[k] && strchr("+-0123456789.eE", r->s[k]))
			k++;
		memcpy(buf, r->s, k);
		buf[k] = 0;
		char *e;
		v->type = JV_NUM;
		v->num = strtod(buf, &e);
		if (k == 0 || *e || !isfinite(v->num)) {
			r->err = "bad value";
			ok = false;
		}
		r->s += k;
	}
	r->depth--;
	return ok;
}

struct jv *jv_parse(const char *s, size_t len, char *err, size_t errlen)
{
	struct rd r = {.s = s, .end = s + len};
	struct jv *v = xcalloc(1, sizeof(*v));
	if (parse_value(&r, v)) {
		skip_ws(&r);
		if (r.s == r.end)
			return v;
		r.err = "trailing characters";
	}
	snprintf(err, errlen, "%s at byte %zu", r.err, (size_t)(r.s - s));
	jv_free(v);
	return NULL;
}

struct jv *jv_parse_file(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s", strerror(errno));
		return NULL;
	}
	struct sbuf b = {0};
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sbuf_add(&b, buf, n);
	int e = ferror(f) ? errno : 0;
	fclose(f);
	if (e) {
		snprintf(err, errlen, "read: %s", strerror(e));
		sbuf_free(&b);
		return NULL;
	}
	struct jv *v = jv_parse(b.data ? b.data : "", b.len, err, errlen);
	sbuf_free(&b);
	return v;
}

static void jv_clear(struct jv *v)
{
	free(v->str);
	for (size_t i = 0; i < v->n; i++) {
		jv_clear(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
}

void jv_free(struct jv *v)
{
	if (!v)
		return;
	jv_clear(v);
	free(v);
}

const struct jv *jv_get(const struct jv *v, const char *key)
{
	if (!v || v->type != JV_OBJ)
		return NULL;
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->keys[i], key))
			return &v->items[i];
	return NULL;
}

double jv_num(const struct jv *v, const char *key, double def)
{
	const struct jv *m = key ? jv_get(v, key) : v;
	return m && m->type == JV_NUM ? m->num : def;
}

const char *jv_str(const struct jv *v, const char *key, const char *def)
{
	const struct jv *m = key ? jv_get(v, key) : v;
	return m && m->type == JV_STR ? m->str : def;
}

bool jv_bool(const struct jv *v, const char *key, bool def)
{
	const struct jv *m = key ? jv_get(v, key) : v;
	return m && m->type == JV_BOOL ? m->b : def;
}
