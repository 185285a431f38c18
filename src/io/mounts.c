/*
 * mounts: mountinfo and verified unmounting (see mounts.h).
 */
#include "io/mounts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "io/blkdev.h"
#include "util/sbuf.h"
#include "util/util.h"

void mounts_escape(struct sbuf *b, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p <= ' ' || *p == '\\' || *p == 0x7f)
			sbuf_printf(b, "\\%03o", *p);
		else
			sbuf_addc(b, (char)*p);
}

void mounts_unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' &&
		    r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = 0;
}

struct mount_entry *mounts_read(size_t *n)
{
	*n = 0;
	FILE *f = fopen("/proc/self/mountinfo", "r");
	if (!f)
		return NULL;
	struct mount_entry *m = NULL;
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		unsigned ma, mi;
		char root[4096], point[4096], fstype[256], src[4096], opts[4096];
		char *dash = strstr(line, " - ");
		if (!dash || sscanf(line, "%*s %*s %u:%u %4095s %4095s", &ma, &mi, root, point) != 4 ||
		    sscanf(dash + 3, "%255s %4095s %4095s", fstype, src, opts) != 3)
			continue;
		mounts_unescape(root);
		mounts_unescape(point);
		mounts_unescape(src);
		m = xrealloc(m, (*n + 1) * sizeof(*m));
		m[(*n)++] = (struct mount_entry){makedev(ma, mi), xstrdup(point), xstrdup(src), xstrdup(root),
						 xstrdup(fstype), xstrdup(opts)};
	}
	free(line);
	fclose(f);
	return m;
}

void mounts_free(struct mount_entry *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(m[i].point);
		free(m[i].src);
		free(m[i].root);
		free(m[i].fstype);
		free(m[i].opts);
	}
	free(m);
}

const char *mounts_on_dev(const struct mount_entry *m, size_t n, dev_t rdev)
{
	const char *found = NULL;
	for (size_t i = 0; i < n; i++) {
		dev_t s;
		if (m[i].dev == rdev || (blkdev_rdev(m[i].src, &s) && s == rdev))
			if (!found || !strcmp(m[i].point, "/"))
				found = m[i].point;
	}
	return found;
}

char *mounts_top_source(const char *point)
{
	size_t n;
	struct mount_entry *m = mounts_read(&n);
	char *src = NULL;
	for (size_t i = n; i-- > 0 && !src;)
		if (!strcmp(m[i].point, point))
			src = xstrdup(m[i].src);
	mounts_free(m, n);
	return src;
}

bool mounts_same_source(const char *mounted, const char *recorded)
{
	dev_t a, b;
	return !strcmp(mounted, recorded) || (blkdev_rdev(mounted, &a) && blkdev_rdev(recorded, &b) && a == b);
}

int mounts_unmount_while(const char *point, bool (*ours)(const void *arg), const void *arg)
{
	for (int i = 0; i < 20 && ours(arg); i++)
		if (umount2(point, 0) != 0)
			usleep(100000);
	if (ours(arg) && umount2(point, MNT_DETACH) != 0)
		return -1;
	return 0;
}

struct point_src {
	const char *point, *src;
};

static bool top_is_src(const void *arg)
{
	const struct point_src *ps = arg;
	char *src = mounts_top_source(ps->point);
	bool ours = src && mounts_same_source(src, ps->src);
	free(src);
	return ours;
}

int mounts_unmount_source(const char *point, const char *src)
{
	struct point_src ps = {point, src};
	return mounts_unmount_while(point, top_is_src, &ps);
}
