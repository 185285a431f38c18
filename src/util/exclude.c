/* exclude: --exclude patterns, by name, directories only with a trailing '/' (see exclude.h). */
#include "util/exclude.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/util.h"

const char *exclude_refusal(const char *pat)
{
	size_t len = strlen(pat);
	while (len && pat[len - 1] == '/')
		len--;
	if (!len)
		return *pat ? "a pattern needs a name before its '/'" : "an empty pattern matches no name";
	if (memchr(pat, '/', len))
		return "patterns match one name, not a path ('/' may only end a pattern, for directories)";
	return NULL;
}

void excludes_init(struct excludes *x, char *const *pats, size_t n)
{
	x->n = n;
	x->pats = xcalloc(n ? n : 1, sizeof(*x->pats));
	x->dir_only = xcalloc(n ? n : 1, sizeof(*x->dir_only));
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(pats[i]);
		x->dir_only[i] = len && pats[i][len - 1] == '/';
		while (len && pats[i][len - 1] == '/')
			len--;
		x->pats[i] = xmalloc(len + 1);
		memcpy(x->pats[i], pats[i], len);
		x->pats[i][len] = 0;
	}
}

void excludes_free(struct excludes *x)
{
	for (size_t i = 0; i < x->n; i++)
		free(x->pats[i]);
	free(x->pats);
	free(x->dir_only);
	memset(x, 0, sizeof(*x));
}

/* Is entry name at dirfd a directory (not following a symlink, as the walk does not)? */
static bool exclude_is_dir(int dirfd, const char *name)
{
	struct stat st;
	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

bool excludes_match(const struct excludes *x, int dirfd, const char *name, unsigned char dtype)
{
	bool if_dir = false;
	for (size_t i = 0; i < x->n; i++) {
		if (fnmatch(x->pats[i], name, 0) != 0)
			continue;
		if (!x->dir_only[i] || dtype == DT_DIR)
			return true;
		if_dir = if_dir || dtype == DT_UNKNOWN;
	}
	return if_dir && exclude_is_dir(dirfd, name);
}
