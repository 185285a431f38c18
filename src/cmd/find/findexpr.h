/*
 * findexpr: GNU find's expression language, parsed into a tree and evaluated one entry at a time
 * (myriad find's action). Precedence as find's: `!`/-not over -a/-and (also implied between two
 * expressions) over -o/-or over `,`; parentheses group. The parser touches no file: what needs the
 * filesystem or the user database (-newer's reference file, -user's name) is looked up by
 * fx_resolve when the command runs. Evaluation is pure but for its callbacks (the entry's stat, its
 * path, whether a directory is empty, a symlink's target), which the walk answers lazily: an
 * expression that never reaches a test needing metadata never stats.
 *
 * Where both sides of an -a are tests without side effects, the cheaper one is evaluated first
 * (names before metadata before reading a directory), as GNU find's -O1 does: the result is the same.
 */
#ifndef MYRIAD_FINDEXPR_H
#define MYRIAD_FINDEXPR_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "util/glob.h"
#include "util/sbuf.h"

/* A numeric argument: +N (more than), -N (less than) or N (exactly). */
struct fx_num {
	char cmp; /* '>', '<', '=' */
	uint64_t n;
};

struct fx_node {
	int kind; /* enum fx_kind (findexpr.c) */
	struct fx_node *l, *r;
	const char *arg;  /* the predicate's argument as given (a pattern, a file, a format) */
	const char *name; /* the predicate as written, for messages */
	struct fx_num num;
	uint64_t unit;     /* -size: bytes per unit; times: seconds per unit */
	uint64_t val;      /* -perm's mode, -user's uid, -samefile's inode... (resolved) */
	uint64_t val2;     /* -samefile's device */
	struct timespec ts; /* -newer and friends: the reference time (resolved) */
	unsigned mask;     /* statx fields this node itself needs */
	int dest;          /* actions: the output (0: standard output or -o FILE; i: files[i - 1]) */
	regex_t re;        /* -regex */
	bool re_ok;
	struct glob glob;  /* -name -iname -path -ipath: arg compiled */
	__int128 age_ns;   /* -mtime and friends: N units, in nanoseconds */
};

struct fx_expr {
	struct fx_node *root;  /* NULL: true */
	struct fx_node **all;  /* every node, for fx_free */
	size_t nall, capall;
	unsigned stat_mask;    /* statx fields any test or directive needs (0: names and types only) */
	int maxdepth;          /* -1: none */
	int mindepth;
	bool xdev, depth_first;
	bool has_action;       /* an action was given (else -print is implied) */
	bool uses_stdout;      /* an action writes to output 0 */
	bool has_quit, has_prune, has_delete;
	bool uses_depth;       /* -printf has %d */
	struct timespec now;   /* the origin of -mtime and friends (fx_resolve) */
	char **files;          /* -fprint and -fprintf targets, in order (output i + 1 is files[i]) */
	size_t nfiles;
	char err[512];         /* why parsing or resolving failed */
};

/* The entry being evaluated and the callbacks that tell more about it (each answered at most once
 * per entry by the caller's own caching). */
struct fx_ctx {
	const char *name; /* the name in its directory; an operand's as given */
	size_t namelen;
	bool operand;     /* name is an operand (a path): -name matches its last component */
	unsigned char type; /* DT_* */
	uint64_t ino;
	int depth;        /* 0 for an operand */
	/* The entry's metadata (the expression's stat_mask), or NULL after a failure (reported). */
	const struct statx *(*stat)(struct fx_ctx *c);
	/* The full path, and where the part below the operand starts (for %P). */
	const char *(*path)(struct fx_ctx *c, size_t *len, size_t *relstart);
	/* A symlink's target's type (DT_*), DT_LNK when it dangles; DT_UNKNOWN when it could not be
	 * looked up (reported, failed set). NULL: the link's own type. */
	unsigned char (*target_type)(struct fx_ctx *c);
	/* Is this directory empty? -1 when it could not be read (reported). */
	int (*dir_empty)(struct fx_ctx *c);
	/* Append the symlink's target to b; -1 when it could not be read (reported). */
	int (*readlink)(struct fx_ctx *c, struct sbuf *b);
	/* Remove the entry (-delete): true on success (a failure is reported). */
	bool (*remove)(struct fx_ctx *c);
	void *user;
	struct sbuf *out;  /* the outputs, indexed by fx_node.dest */
	bool prune;        /* set by -prune (and by -maxdepth at the caller) */
	bool quit;         /* set by -quit */
	bool failed;       /* a callback failed: the entry is not acted upon further */
};

/* Parse argv[0..argc) (the expression, after the operands). Returns 0, or -1 with x->err set
 * (naming the predicate). x is zeroed by the caller; fx_free releases it either way. */
int fx_parse(struct fx_expr *x, int argc, char **argv);

/* Does argument s start an expression (a known predicate, `(`, `!`, -not)? For the command line:
 * what precedes it are options and operands. */
bool fx_starts_expr(const char *s);

/* Look up what the expression refers to outside itself: reference files (-newer, -samefile),
 * user and group names; now is the origin of -mtime and friends. Returns 0, or -1 with x->err. */
int fx_resolve(struct fx_expr *x, struct timespec now);
/* The resolved values, for a checkpoint (a resume keeps the first session's). */
void fx_save(const struct fx_expr *x, struct sbuf *b);
struct deser;
bool fx_load(struct fx_expr *x, struct deser *d);

/* Does the evaluation stat every entry (its first test needs metadata), so that visiting entries
 * in inode order pays? false when a cheaper test decides first (-name X -size N stats only X). */
bool fx_stats_every_entry(const struct fx_expr *x);

/* Evaluate the expression on the entry in c; its actions write to c->out. Returns its value. */
bool fx_eval(const struct fx_expr *x, struct fx_ctx *c);

void fx_free(struct fx_expr *x);

#endif
