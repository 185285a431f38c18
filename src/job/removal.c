/* removal: the checks shared by every removing command, before any work (see removal.h). */
#include "job/removal.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "io/guard.h"
#include "state/ckpt.h"

int removal_check_overlap(char *const *trees, size_t ntrees, const char *how)
{
	size_t inner, outer;
	bool same;
	int r = guard_overlap(trees, ntrees, &inner, &outer, &same);
	if (r < 0)
		return usage_error("cannot tell whether the operands lie inside each other: %s", strerror(errno));
	if (r == 0)
		return 0;
	if (same)
		return usage_error("refusing %s '%s' and '%s': they are the same directory (name each tree once)", how,
				   trees[outer], trees[inner]);
	return usage_error("refusing %s '%s': it is inside '%s', another operand (name each tree once: the outer "
			   "one holds it)",
			   how, trees[inner], trees[outer]);
}

/* Is own file path inside one of trees? The tree's index, -1 none; -2 after a message (it cannot be
 * told). */
static long own_in_trees(const char *opt, const char *path, char *const *trees, size_t ntrees)
{
	for (size_t i = 0; i < ntrees; i++) {
		int r = guard_path_in_tree(path, trees[i]);
		if (r < 0) {
			usage_error("%s %s: cannot tell whether it lies inside '%s': %s", opt, path, trees[i],
				    strerror(errno));
			return -2;
		}
		if (r)
			return (long)i;
	}
	return -1;
}

int removal_check_own(const struct job_opts *o, const char *cmd, const struct sbuf *identity, char *const *trees,
		      size_t ntrees, const struct removal_own *own, size_t nown, const char *how)
{
	struct removal_own std[2] = {{"--json", o->json}, {"--errors", o->errors}};
	for (size_t k = 0; k < 2 + nown; k++) {
		const struct removal_own *f = k < 2 ? &std[k] : &own[k - 2];
		if (!f->path || !*f->path || !strcmp(f->path, "-"))
			continue;
		long t = own_in_trees(f->opt, f->path, trees, ntrees);
		if (t == -2)
			return EXIT_USAGE;
		if (t >= 0)
			return usage_error("refusing %s '%s': the %s file '%s' is inside it and would be removed as it "
					   "is written (write it elsewhere)",
					   how, trees[t], f->opt, f->path);
	}
	if (o->no_state || o->unresumable)
		return 0;
	char *sdir = ckpt_dir_for(cmd, o->state, identity);
	long t = own_in_trees("--state", sdir, trees, ntrees);
	int rc = 0;
	if (t >= 0)
		rc = usage_error("refusing %s '%s': the state directory %s is inside it and would be removed as the "
				 "run saves it (choose another with --state DIR)",
				 how, trees[t], sdir);
	free(sdir);
	return t == -2 ? EXIT_USAGE : rc;
}
