/*
 * jsonread: a small JSON reader for documents myriad wrote itself (lifecycle results read back to
 * resume a run or to re-render a report). Strings are decoded with json_unstring, so paths written
 * as bytes come back as the same bytes. Not a streaming parser: the whole document is a tree.
 */
#ifndef MYRIAD_JSONREAD_H
#define MYRIAD_JSONREAD_H

#include <stdbool.h>
#include <stddef.h>

enum jv_type { JV_NULL, JV_BOOL, JV_NUM, JV_STR, JV_ARR, JV_OBJ };

struct jv {
	enum jv_type type;
	bool b;
	double num;
	char *str; /* JV_STR: NUL-terminated (may hold NULs; len is exact) */
	size_t len;
	size_t n;         /* JV_ARR / JV_OBJ: number of items */
	struct jv *items; /* the values */
	char **keys;      /* JV_OBJ: the keys */
};

/* Parse len bytes. NULL on malformed input, with a message in err. */
struct jv *jv_parse(const char *s, size_t len, char *err, size_t errlen);
/* Read and parse a file. NULL with a message in err. */
struct jv *jv_parse_file(const char *path, char *err, size_t errlen);
void jv_free(struct jv *v);

/* The member key of an object (NULL when v is not an object or has no such key). */
const struct jv *jv_get(const struct jv *v, const char *key);
/* Typed accessors with defaults for absent or mistyped values. */
double jv_num(const struct jv *v, const char *key, double def);
const char *jv_str(const struct jv *v, const char *key, const char *def);
bool jv_bool(const struct jv *v, const char *key, bool def);

#endif
