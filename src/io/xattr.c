/* xattr: extended attributes and ACLs copied or compared, for myriad copy (see xattr.h). */
#include "io/xattr.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/xattr.h>

#include "util/util.h"

/* "/proc/self/fd/N/NAME": a short path to a name under any directory fd, for the l*xattr calls. */
static void xpath(char *buf, size_t len, const struct xref *x)
{
	snprintf(buf, len, "/proc/self/fd/%d/%s", x->dirfd, x->name);
}

static ssize_t x_list(const struct xref *x, char *list, size_t size)
{
	if (x->fd >= 0)
		return flistxattr(x->fd, list, size);
	char p[320];
	xpath(p, sizeof(p), x);
	return llistxattr(p, list, size);
}

static ssize_t x_get(const struct xref *x, const char *key, void *val, size_t size)
{
	if (x->fd >= 0)
		return fgetxattr(x->fd, key, val, size);
	char p[320];
	xpath(p, sizeof(p), x);
	return lgetxattr(p, key, val, size);
}

static int x_set(const struct xref *x, const char *key, const void *val, size_t size)
{
	if (x->fd >= 0)
		return fsetxattr(x->fd, key, val, size, 0);
	char p[320];
	xpath(p, sizeof(p), x);
	return lsetxattr(p, key, val, size, 0);
}

/* The xattr names of x into a malloc'd buffer (*len bytes; NULL when there are none). */
static char *x_names(const struct xref *x, ssize_t *len)
{
	for (;;) {
		ssize_t n = x_list(x, NULL, 0);
		if (n < 0 && (errno == ENOTSUP || errno == EOPNOTSUPP))
			n = 0;
		if (n <= 0) {
			*len = n;
			return NULL;
		}
		char *b = xmalloc(n);
		ssize_t m = x_list(x, b, n);
		if (m >= 0) {
			*len = m;
			return b;
		}
		free(b);
		if (errno != ERANGE) {
			*len = -1;
			return NULL;
		}
	}
}

/* The value of key on x into a malloc'd buffer (*len bytes), or NULL with errno. */
static char *x_value(const struct xref *x, const char *key, ssize_t *len)
{
	for (;;) {
		ssize_t n = x_get(x, key, NULL, 0);
		if (n < 0)
			return NULL;
		char *b = xmalloc(n + 1);
		ssize_t m = x_get(x, key, b, n);
		if (m >= 0) {
			*len = m;
			return b;
		}
		free(b);
		if (errno != ERANGE)
			return NULL;
	}
}

/* Does to hold key with exactly val? */
static bool x_same(const struct xref *to, const char *key, const char *val, ssize_t len)
{
	ssize_t l2;
	char *v2 = x_value(to, key, &l2);
	bool same = v2 && l2 == len && !memcmp(v2, val, len);
	free(v2);
	return same;
}

int copy_xattrs(const struct xref *from, const struct xref *to, bool *diff, const char **op)
{
	ssize_t len;
	char *names = x_names(from, &len);
	if (len < 0) {
		*op = "listxattr";
		return -1;
	}
	int rc = 0;
	size_t count = 0;
	for (ssize_t i = 0; i < len && rc == 0; i += strlen(names + i) + 1) {
		ssize_t vlen;
		char *val = x_value(from, names + i, &vlen);
		count++;
		if (!val) {
			if (errno == ENODATA)
				continue; /* removed meanwhile */
			*op = "getxattr";
			rc = -1;
		} else if (diff) {
			if (!x_same(to, names + i, val, vlen))
				*diff = true;
		} else if (x_set(to, names + i, val, vlen) != 0) {
			*op = "setxattr";
			rc = -1;
		}
		free(val);
	}
	free(names);
	if (rc == 0 && diff && !*diff) { /* same values for every source name: extra names on to? */
		ssize_t tlen;
		char *tn = x_names(to, &tlen);
		size_t tcount = 0;
		for (ssize_t i = 0; i < tlen; i += strlen(tn + i) + 1)
			tcount++;
		if (tcount != count)
			*diff = true;
		free(tn);
	}
	return rc;
}
