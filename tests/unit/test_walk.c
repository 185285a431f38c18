/* Unit tests for engine/walk, on small trees made in a temporary directory: the visitor sees every
 * entry exactly once (one worker and several); post-order dir_done comes for every directory,
 * deepest first, with keep set above what an exclude kept; excluded names are never visited; with
 * inode_order a directory's entries come in inode order; a subtree moved out of the tree mid-walk
 * is left alone with open_by_path and read on without; a walk stopped by a snapshot and
 * resumed from it with walk_new(snapshot) ends with the totals of an uninterrupted walk; a directory
 * enter refuses is visited but not read; walk_cancel ends a walk after the buffer being visited;
 * per-directory state (dir_state) rolls up into parents, and a stopped walk resumed gives every
 * directory once with the total of an uninterrupted one; shared walks (walk_give / walk_add, as MPI
 * ranks use them) hand directories over, stay up when dry until walk_end, and refuse a record that
 * is not under an operand. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "scratch.h"

#include "engine/walk.h"
#include "util/signals.h"

/* ---- a tree in a temporary directory ---- */

static char top[64];

static void mk(const char *rel, bool dir) { assert_int_equal(scratch_mk(top, rel, dir), 0); }

static void rm_tree(const char *p) { assert_int_equal(scratch_remove(p), 0); }

/* ---- a visitor that records what it is shown ---- */

struct seen {
	/* Committed (engine lock held): every entry's path and inode, and every dir_done's path,
	 * order number and keep, each record NUL-terminated. */
	struct sbuf paths;
	struct sbuf inos; /* uint64_t per entry, in commit order */
	struct sbuf done; /* "SEQ KEEP PATH\0" */
	uint64_t count, hash;
	unsigned long seq; /* dir_done order, taken atomically */
	const char *stop_in; /* entry: once a path containing this is seen, wait for the test */
	const char *move_at;  /* entry: when a path ends with this, rename move_from to move_to */
	const char *move_from, *move_to;
};

struct local {
	struct sbuf paths, inos, done;
	uint64_t count, hash;
};

static uint64_t path_hash(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
	return h;
}

static bool v_entry(void *ctx, void *local, const struct walk_dir *d, const struct walk_entry *e,
		    struct errbatch *errs)
{
	struct local *l = local;
	size_t at = l->paths.len;
	walk_path(&l->paths, d, e);
	l->hash += path_hash(l->paths.data + at, l->paths.len - at);
	sbuf_addc(&l->paths, 0);
	sbuf_add(&l->inos, &e->ino, sizeof(e->ino));
	l->count++;
	struct seen *s = ctx;
	size_t n = l->paths.len - 1 - at, m = s->move_at ? strlen(s->move_at) : 0;
	if (m && n >= m && !memcmp(l->paths.data + at + n - m, s->move_at, m))
		assert_int_equal(rename(s->move_from, s->move_to), 0);
	return false;
}

static bool v_dir_done(void *ctx, void *local, const struct walk_dir *d, bool keep, struct errbatch *errs)
{
	struct seen *s = ctx;
	struct local *l = local;
	unsigned long seq = __atomic_fetch_add(&s->seq, 1, __ATOMIC_SEQ_CST);
	sbuf_printf(&l->done, "%lu %d %.*s", seq, keep, (int)d->pathlen, d->path);
	sbuf_addc(&l->done, 0);
	return false;
}

static void v_commit(void *ctx, void *local)
{
	struct seen *s = ctx;
	struct local *l = local;
	sbuf_add(&s->paths, l->paths.data, l->paths.len);
	sbuf_add(&s->inos, l->inos.data, l->inos.len);
	sbuf_add(&s->done, l->done.data, l->done.len);
	s->count += l->count;
	s->hash += l->hash;
	sbuf_clear(&l->paths);
	sbuf_clear(&l->inos);
	sbuf_clear(&l->done);
	l->count = l->hash = 0;
}

static void v_local_free(void *ctx, void *local)
{
	struct local *l = local;
	sbuf_free(&l->paths);
	sbuf_free(&l->inos);
	sbuf_free(&l->done);
}

static void v_save(void *ctx, struct sbuf *b)
{
	struct seen *s = ctx;
	ser_u64(b, s->count);
	ser_u64(b, s->hash);
}

static bool v_load(void *ctx, struct deser *d)
{
	struct seen *s = ctx;
	s->count = deser_u64(d);
	s->hash = deser_u64(d);
	return !d->bad;
}

static void seen_free(struct seen *s)
{
	sbuf_free(&s->paths);
	sbuf_free(&s->inos);
	sbuf_free(&s->done);
}

static struct walk_config config(struct seen *s, char **roots, int threads, struct errlog *el)
{
	struct walk_config cfg = {
	    .roots = roots,
	    .nroots = 1,
	    .threads = threads,
	    .visitor = {.ctx = s, .local_size = sizeof(struct local), .entry = v_entry, .dir_done = v_dir_done,
			.commit = v_commit, .local_free = v_local_free, .save = v_save, .load = v_load},
	    .errlog = el,
	};
	return cfg;
}

/* Run a walk to its end. */
static void run_walk(const struct walk_config *cfg, const struct sbuf *snap)
{
	struct walk *w = walk_new(cfg, snap);
	assert_non_null(w);
	struct run_hooks h = walk_run_hooks(w, NULL, NULL);
	walk_start(w);
	while (!h.done(h.ctx))
		usleep(1000);
	walk_join(w);
	assert_int_equal(walk_errors(w), 0);
	walk_free(w);
}

/* Count the NUL-terminated records of b equal to p. */
static int occurrences(const struct sbuf *b, const char *p)
{
	int n = 0;
	for (size_t i = 0; i < b->len; i += strlen(b->data + i) + 1)
		n += !strcmp(b->data + i, p);
	return n;
}

/* The small tree: top/{a/{b/{c/{f3}, f2}, f1}, e/, x.skip, s.skip/{hidden}, g}. */
static const char *const small_dirs[] = {"a", "a/b", "a/b/c", "e", "s.skip"};
static const char *const small_files[] = {"a/b/c/f3", "a/b/f2", "a/f1", "x.skip", "s.skip/hidden", "g"};

static int small_tree(void **state)
{
	strcpy(top, "/tmp/myriad-unit-walk.XXXXXX");
	assert_non_null(mkdtemp(top));
	for (size_t i = 0; i < sizeof(small_dirs) / sizeof(*small_dirs); i++)
		mk(small_dirs[i], true);
	for (size_t i = 0; i < sizeof(small_files) / sizeof(*small_files); i++)
		mk(small_files[i], false);
	return 0;
}

static int remove_tree(void **state)
{
	rm_tree(top);
	return 0;
}

static void every_entry_once(void **state)
{
	for (int threads = 1; threads <= 4; threads += 3) {
		struct seen s = {0};
		struct errlog el = {0};
		char *roots[] = {top};
		struct walk_config cfg = config(&s, roots, threads, &el);
		run_walk(&cfg, NULL);
		/* The operand, 5 directories and 6 files. */
		assert_int_equal(s.count, 12);
		assert_int_equal(occurrences(&s.paths, top), 1);
		char p[512];
		for (size_t i = 0; i < sizeof(small_dirs) / sizeof(*small_dirs); i++) {
			snprintf(p, sizeof(p), "%s/%s", top, small_dirs[i]);
			assert_int_equal(occurrences(&s.paths, p), 1);
		}
		for (size_t i = 0; i < sizeof(small_files) / sizeof(*small_files); i++) {
			snprintf(p, sizeof(p), "%s/%s", top, small_files[i]);
			assert_int_equal(occurrences(&s.paths, p), 1);
		}
		seen_free(&s);
		errlog_close(&el);
	}
}

/* dir_done records: path -> (seq, keep). */
static bool find_done(const struct sbuf *b, const char *path, unsigned long *seq, int *keep)
{
	for (size_t i = 0; i < b->len; i += strlen(b->data + i) + 1) {
		unsigned long q;
		int k, off;
		if (sscanf(b->data + i, "%lu %d %n", &q, &k, &off) == 2 && !strcmp(b->data + i + off, path)) {
			*seq = q;
			*keep = k;
			return true;
		}
	}
	return false;
}

static void post_order_deepest_first_and_excludes(void **state)
{
	for (int threads = 1; threads <= 4; threads += 3) {
		struct seen s = {0};
		struct errlog el = {0};
		char *roots[] = {top};
		char *excludes[] = {"*.skip"};
		struct walk_config cfg = config(&s, roots, threads, &el);
		cfg.excludes = excludes;
		cfg.nexcludes = 1;
		run_walk(&cfg, NULL);
		/* Excluded: x.skip and s.skip, nor anything under s.skip. */
		assert_int_equal(s.count, 9);
		char p[512];
		snprintf(p, sizeof(p), "%s/x.skip", top);
		assert_int_equal(occurrences(&s.paths, p), 0);
		snprintf(p, sizeof(p), "%s/s.skip/hidden", top);
		assert_int_equal(occurrences(&s.paths, p), 0);
		/* Once per directory walked: the operand, a, a/b, a/b/c, e. */
		int n = 0;
		for (size_t i = 0; i < s.done.len; i += strlen(s.done.data + i) + 1)
			n++;
		assert_int_equal(n, 5);
		unsigned long q_top, q_a, q_b, q_c, q_e;
		int k_top, k_a, k_b, k_c, k_e;
		snprintf(p, sizeof(p), "%s", top);
		assert_true(find_done(&s.done, p, &q_top, &k_top));
		snprintf(p, sizeof(p), "%s/a", top);
		assert_true(find_done(&s.done, p, &q_a, &k_a));
		snprintf(p, sizeof(p), "%s/a/b", top);
		assert_true(find_done(&s.done, p, &q_b, &k_b));
		snprintf(p, sizeof(p), "%s/a/b/c", top);
		assert_true(find_done(&s.done, p, &q_c, &k_c));
		snprintf(p, sizeof(p), "%s/e", top);
		assert_true(find_done(&s.done, p, &q_e, &k_e));
		assert_true(q_c < q_b && q_b < q_a && q_a < q_top && q_e < q_top);
		/* keep: only the operand holds what an exclude kept. */
		assert_int_equal(k_top, 1);
		assert_int_equal(k_a + k_b + k_c + k_e, 0);
		seen_free(&s);
		errlog_close(&el);
	}
}

/* Are the n inodes of the directory's entries, in the order getdents gives them, sorted? */
static bool getdents_sorted(const char *dir)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	uint64_t prev = 0;
	bool sorted = true;
	struct dirent *de;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			sorted &= de->d_ino >= prev;
			prev = de->d_ino;
		}
	closedir(d);
	return sorted;
}

static void inode_order(void **state)
{
	char dir[64];
	strcpy(dir, "/tmp/myriad-unit-walk.XXXXXX");
	assert_non_null(mkdtemp(dir));
	strcpy(top, dir);
	/* Names made in an order unrelated to their inode numbers' order in the directory. */
	char name[32];
	for (int i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "n%d", (i * 37) % 200);
		mk(name, false);
	}
	/* Remove and remake some, so that inode numbers are reused out of order where they are. */
	for (int i = 0; i < 200; i += 3) {
		char p[128];
		snprintf(p, sizeof(p), "%s/n%d", dir, i);
		assert_int_equal(unlink(p), 0);
	}
	for (int i = 0; i < 200; i += 3) {
		snprintf(name, sizeof(name), "n%d", i);
		mk(name, false);
	}
	for (int ordered = 0; ordered <= 1; ordered++) {
		struct seen s = {0};
		struct errlog el = {0};
		char *roots[] = {dir};
		struct walk_config cfg = config(&s, roots, 1, &el);
		cfg.inode_order = ordered;
		run_walk(&cfg, NULL);
		assert_int_equal(s.count, 201);
		const uint64_t *ino = (const uint64_t *)s.inos.data;
		bool sorted = true;
		for (size_t i = 2; i < s.count; i++) /* [0] is the operand */
			sorted &= ino[i] >= ino[i - 1];
		if (ordered)
			assert_true(sorted);
		else if (getdents_sorted(dir))
			; /* this filesystem gives inode order itself: nothing told apart */
		else
			assert_false(sorted); /* the check above can tell */
		seen_free(&s);
		errlog_close(&el);
	}
	rm_tree(dir);
}

/* 40 directories of 50 files: a walk throttled to 4000 entries/s takes half a second. */
static void resume_from_snapshot_gives_the_same_totals(void **state)
{
	char dir[64];
	strcpy(dir, "/tmp/myriad-unit-walk.XXXXXX");
	assert_non_null(mkdtemp(dir));
	strcpy(top, dir);
	char name[64];
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "d%d", i);
		mk(name, true);
		for (int j = 0; j < 50; j++) {
			snprintf(name, sizeof(name), "d%d/f%d", i, j);
			mk(name, false);
		}
	}
	char *roots[] = {dir};

	struct seen whole = {0};
	struct errlog el0 = {0};
	struct walk_config cfg0 = config(&whole, roots, 2, &el0);
	run_walk(&cfg0, NULL);
	assert_int_equal(whole.count, 1 + 40 + 2000);

	/* Stopped part-way by a final snapshot (the workers freeze: that walk is never freed). */
	struct seen first = {0};
	struct errlog el1 = {0};
	struct throttle th;
	throttle_init(&th, 4000);
	struct walk_config cfg1 = config(&first, roots, 2, &el1);
	cfg1.throttle = &th;
	struct walk *w1 = walk_new(&cfg1, NULL);
	assert_non_null(w1);
	struct run_hooks h1 = walk_run_hooks(w1, NULL, NULL);
	walk_start(w1);
	uint64_t at = 0;
	while (!h1.done(h1.ctx)) {
		walk_lock(w1);
		at = first.count;
		walk_unlock(w1);
		if (at >= 300)
			break;
		usleep(1000);
	}
	struct sbuf snap = {0};
	h1.snapshot(h1.ctx, &snap, true);
	walk_lock(w1);
	at = first.count;
	walk_unlock(w1);
	assert_true(at >= 300 && at < whole.count); /* really part-way */

	struct seen rest = {0};
	struct errlog el2 = {0};
	struct walk_config cfg2 = config(&rest, roots, 2, &el2);
	struct walk *w2 = walk_new(&cfg2, &snap);
	assert_non_null(w2);
	assert_int_equal(rest.count, at); /* the visitor's state came back */
	assert_int_equal(walk_sessions(w2), 2);
	struct run_hooks h2 = walk_run_hooks(w2, NULL, NULL);
	walk_start(w2);
	while (!h2.done(h2.ctx))
		usleep(1000);
	walk_join(w2);
	assert_int_equal(rest.count, whole.count);
	assert_true(rest.hash == whole.hash); /* the same set of paths */
	walk_free(w2);

	sbuf_free(&snap);
	seen_free(&whole);
	seen_free(&rest);
	errlog_close(&el0);
	errlog_close(&el2);
	rm_tree(dir);
}

/* A subtree moved out of the tree while a worker is inside it: with open_by_path (destructive
 * work) nothing below the moved directory is opened after the move; otherwise its children open
 * in the parent the worker holds and are read on, as find does. Either way once, no error. */
static void moved_out_mid_walk(void **state)
{
	char away[600], from[600], f3[600];
	snprintf(away, sizeof(away), "%s.away", top);
	snprintf(from, sizeof(from), "%s/a", top);
	snprintf(f3, sizeof(f3), "%s/a/b/c/f3", top);
	for (int by_path = 0; by_path <= 1; by_path++) {
		struct seen s = {.move_at = "/a/b/f2", .move_from = from, .move_to = away};
		struct errlog el = {0};
		char *roots[] = {top};
		struct walk_config cfg = config(&s, roots, 1, &el);
		cfg.open_by_path = by_path;
		run_walk(&cfg, NULL);
		assert_int_equal(occurrences(&s.paths, f3), !by_path);
		assert_int_equal(rename(away, from), 0);
		seen_free(&s);
		errlog_close(&el);
	}
}

/* ---- walk_rmdir when a file has taken the directory's place ---- */

static bool rmdir_any_type; /* what r_done passes walk_rmdir */
static int rmdir_result, rmdir_errno;

/* dir_done of a/b/c: empty it, put a file in its place, then remove "the directory". */
static bool r_done(void *ctx, void *local, const struct walk_dir *d, bool keep, struct errbatch *errs)
{
	const char *tail = "/a/b/c";
	size_t n = strlen(tail);
	if (d->pathlen < n || memcmp(d->path + d->pathlen - n, tail, n))
		return false;
	char p[600];
	snprintf(p, sizeof(p), "%s/a/b/c/f3", top);
	unlink(p);
	snprintf(p, sizeof(p), "%s/a/b/c", top);
	assert_int_equal(rmdir(p), 0);
	mk("a/b/c", false);
	rmdir_result = walk_rmdir(d, rmdir_any_type);
	rmdir_errno = errno;
	return false;
}

/* rm removes whatever is in the place of a directory it emptied; find -delete (any_type false)
 * only a directory: a file there was never tested by its expression. */
static void rmdir_takes_a_file_only_when_asked(void **state)
{
	for (int any = 0; any <= 1; any++) {
		struct seen s = {0};
		struct errlog el = {0};
		char *roots[] = {top};
		struct walk_config cfg = config(&s, roots, 1, &el);
		cfg.visitor.dir_done = r_done;
		rmdir_any_type = any;
		rmdir_result = 1;
		run_walk(&cfg, NULL);
		char p[600];
		struct stat st;
		snprintf(p, sizeof(p), "%s/a/b/c", top);
		if (any) {
			assert_int_equal(rmdir_result, 0);
			assert_int_equal(lstat(p, &st), -1);
			mk("a/b/c", true);
			mk("a/b/c/f3", false);
		} else {
			assert_int_equal(rmdir_result, -1);
			assert_int_equal(rmdir_errno, ENOTDIR);
			assert_int_equal(lstat(p, &st), 0);
			assert_true(S_ISREG(st.st_mode));
			assert_int_equal(unlink(p), 0);
			mk("a/b/c", true);
			mk("a/b/c/f3", false);
		}
		seen_free(&s);
		errlog_close(&el);
	}
}

/* ---- enter (prune) and walk_cancel ---- */

static const char *refuse_suffix; /* enter: refuse directories whose path ends so ("" refuses all) */

static bool v_enter(void *ctx, void *local, const struct walk_dir *d, const struct walk_entry *e)
{
	struct sbuf p = {0};
	walk_path(&p, d, e);
	size_t n = strlen(refuse_suffix);
	bool refuse = p.len >= n && !memcmp(p.data + p.len - n, refuse_suffix, n);
	sbuf_free(&p);
	return !refuse;
}

/* A directory refused by enter is visited, never read: nothing under it is. */
static void enter_false_prunes(void **state)
{
	for (int threads = 1; threads <= 4; threads += 3) {
		struct seen s = {0};
		struct errlog el = {0};
		char *roots[] = {top};
		struct walk_config cfg = config(&s, roots, threads, &el);
		cfg.visitor.enter = v_enter;
		cfg.visitor.dir_done = NULL;
		refuse_suffix = "/a/b";
		run_walk(&cfg, NULL);
		assert_int_equal(s.count, 9); /* all but a/b/c, a/b/c/f3, a/b/f2 */
		char p[512];
		snprintf(p, sizeof(p), "%s/a/b", top);
		assert_int_equal(occurrences(&s.paths, p), 1);
		snprintf(p, sizeof(p), "%s/a/b/f2", top);
		assert_int_equal(occurrences(&s.paths, p), 0);
		seen_free(&s);
		/* The operand refused: it alone is visited. */
		struct seen s2 = {0};
		cfg = config(&s2, roots, threads, &el);
		cfg.visitor.enter = v_enter;
		cfg.visitor.dir_done = NULL;
		refuse_suffix = "";
		run_walk(&cfg, NULL);
		assert_int_equal(s2.count, 1);
		seen_free(&s2);
		errlog_close(&el);
	}
}

/* Directories under top open in this process now. */
static int open_dirs_under_top(void)
{
	DIR *fds = opendir("/proc/self/fd");
	assert_non_null(fds);
	int n = 0;
	struct dirent *de;
	while ((de = readdir(fds))) {
		char link[600], target[600];
		snprintf(link, sizeof(link), "/proc/self/fd/%s", de->d_name);
		ssize_t len = readlink(link, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = 0;
		struct stat st;
		n += !strncmp(target, top, strlen(top)) && stat(target, &st) == 0 && S_ISDIR(st.st_mode);
	}
	closedir(fds);
	return n;
}

static int most_open_dirs;
static pthread_t leaf_readers[2]; /* the threads seen visiting entries below the operand */
static int nleaf_readers;
static pthread_mutex_t leaf_lock = PTHREAD_MUTEX_INITIALIZER;

static bool v_entry_count_fds(void *ctx, void *local, const struct walk_dir *d, const struct walk_entry *e,
			      struct errbatch *errs)
{
	int n = open_dirs_under_top();
	if (n > __atomic_load_n(&most_open_dirs, __ATOMIC_RELAXED))
		__atomic_store_n(&most_open_dirs, n, __ATOMIC_RELAXED); /* a race loses only a maximum */
	if (d) {
		pthread_mutex_lock(&leaf_lock);
		pthread_t me = pthread_self();
		bool known = false;
		for (int i = 0; i < nleaf_readers; i++)
			known |= pthread_equal(leaf_readers[i], me);
		if (!known && nleaf_readers < 2)
			leaf_readers[nleaf_readers++] = me;
		pthread_mutex_unlock(&leaf_lock);
		usleep(1000);
	}
	return v_entry(ctx, local, d, e, errs);
}

/* A worker keeps the directories it read open to open their subdirectories by name; a directory
 * without any is closed as soon as it is read. A worker that did not read the parent (here the
 * second one: the first read the operand) opens each leaf by path, and held every one it read
 * until 8 later ones pushed it out (closing it late cost ext4 the freeing of its readdir tree
 * from a cold cache). Each entry takes 1 ms, so that both workers read leaves. */
static void leaves_are_closed_once_read(void **state)
{
	strcpy(top, "/tmp/myriad-unit-walk.XXXXXX");
	assert_non_null(mkdtemp(top));
	for (int i = 0; i < 40; i++) {
		char rel[32];
		snprintf(rel, sizeof(rel), "l%02d", i);
		mk(rel, true);
		snprintf(rel, sizeof(rel), "l%02d/f", i);
		mk(rel, false);
	}
	struct seen s = {0};
	struct errlog el = {0};
	char *roots[] = {top};
	struct walk_config cfg = config(&s, roots, 2, &el);
	cfg.visitor.entry = v_entry_count_fds;
	cfg.visitor.dir_done = NULL;
	most_open_dirs = 0;
	nleaf_readers = 0;
	run_walk(&cfg, NULL);
	assert_int_equal(s.count, 81);
	assert_int_equal(open_dirs_under_top(), 0); /* nothing left open */
	/* Both workers read leaves (else the second one's held directories were never tried). */
	assert_int_equal(nleaf_readers, 2);
	/* The operand (held open by the walk, and by the worker that read it for its children) and
	 * the leaf each worker reads. */
	assert_true(most_open_dirs >= 2);
	if (most_open_dirs > 4)
		fail_msg("%d directories open at once; want at most 4", most_open_dirs);
	seen_free(&s);
	errlog_close(&el);
	rm_tree(top);
}

static struct walk *cancel_walk;

static bool v_entry_cancel(void *ctx, void *local, const struct walk_dir *d, const struct walk_entry *e,
			   struct errbatch *errs)
{
	v_entry(ctx, local, d, e, errs);
	if (d && !strcmp(e->name, "a"))
		walk_cancel(cancel_walk);
	return false;
}

/* walk_cancel from a visitor: the buffer being visited is finished, no directory is read after it,
 * and the walk ends as done. */
static void cancel_ends_the_walk(void **state)
{
	struct seen s = {0};
	struct errlog el = {0};
	char *roots[] = {top};
	struct walk_config cfg = config(&s, roots, 1, &el);
	cfg.visitor.entry = v_entry_cancel;
	cfg.visitor.dir_done = NULL;
	cancel_walk = walk_new(&cfg, NULL);
	assert_non_null(cancel_walk);
	struct run_hooks h = walk_run_hooks(cancel_walk, NULL, NULL);
	walk_start(cancel_walk);
	for (int i = 0; i < 5000 && !h.done(h.ctx); i++)
		usleep(1000);
	assert_true(h.done(h.ctx));
	walk_join(cancel_walk);
	walk_free(cancel_walk);
	/* The operand and its 5 entries (one buffer), nothing below. */
	assert_int_equal(s.count, 6);
	char p[512];
	snprintf(p, sizeof(p), "%s/a/f1", top);
	assert_int_equal(occurrences(&s.paths, p), 0);
	seen_free(&s);
	errlog_close(&el);
}

/* ---- per-directory state (dir_state): du's roll-up ---- */

struct dlocal {
	uint64_t n;   /* non-directories of dir in this batch */
	uint64_t *dir;
	struct sbuf done; /* "COUNT PATH\0" per finished directory */
};

static bool d_entry(void *ctx, void *local, const struct walk_dir *d, const struct walk_entry *e,
		    struct errbatch *errs)
{
	struct dlocal *l = local;
	if (d && e->type != DT_DIR) {
		l->dir = d->state;
		l->n++;
	}
	return false;
}

static void d_init(void *ctx, void *state, const struct walk_entry *e) { *(uint64_t *)state = 1; }

static void d_fold(void *ctx, void *parent, const struct walk_dir *d)
{
	*(uint64_t *)parent += *(const uint64_t *)d->state;
}

static bool d_done(void *ctx, void *local, const struct walk_dir *d, bool keep, struct errbatch *errs)
{
	struct dlocal *l = local;
	sbuf_printf(&l->done, "%llu %.*s", (unsigned long long)*(uint64_t *)d->state, (int)d->pathlen, d->path);
	sbuf_addc(&l->done, 0);
	return false;
}

static void d_commit(void *ctx, void *local)
{
	struct seen *s = ctx;
	struct dlocal *l = local;
	if (l->dir)
		*l->dir += l->n;
	sbuf_add(&s->done, l->done.data, l->done.len);
	sbuf_clear(&l->done);
	l->n = 0;
	l->dir = NULL;
}

static void d_local_free(void *ctx, void *local) { sbuf_free(&((struct dlocal *)local)->done); }

static struct walk_config dconfig(struct seen *s, char **roots, struct errlog *el)
{
	struct walk_config cfg = {
	    .roots = roots,
	    .nroots = 1,
	    .threads = 3,
	    .visitor = {.ctx = s, .local_size = sizeof(struct dlocal), .entry = d_entry, .dir_done = d_done,
			.commit = d_commit, .local_free = d_local_free, .save = v_save, .load = v_load,
			.dir_state = sizeof(uint64_t), .dir_init = d_init, .dir_fold = d_fold},
	    .errlog = el,
	};
	return cfg;
}

static int strcmp_ptr(const char *const *a, const char *const *b) { return strcmp(*a, *b); }

/* The "COUNT PATH" records of b, sorted, one per line. */
static char *sorted_records(const struct sbuf *b)
{
	size_t n = 0;
	for (size_t i = 0; i < b->len; i += strlen(b->data + i) + 1)
		n++;
	const char **r = calloc(n + 1, sizeof(*r));
	n = 0;
	for (size_t i = 0; i < b->len; i += strlen(b->data + i) + 1)
		r[n++] = b->data + i;
	qsort(r, n, sizeof(*r), (int (*)(const void *, const void *))strcmp_ptr);
	struct sbuf out = {0};
	for (size_t i = 0; i < n; i++)
		sbuf_printf(&out, "%s\n", r[i]);
	free(r);
	sbuf_addc(&out, 0);
	return out.data;
}

/* 6 x 6 directories of 30 files: every directory's total (itself, its files, what is under it)
 * comes once, and a walk stopped part-way and resumed from its snapshot (its open directories and
 * their totals in it) gives each directory once, with the total of an uninterrupted walk. */
static void dir_state_rolls_up_and_resumes_exactly(void **state)
{
	char dir[64];
	strcpy(dir, "/tmp/myriad-unit-walk.XXXXXX");
	assert_non_null(mkdtemp(dir));
	strcpy(top, dir);
	char name[64];
	for (int i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "d%d", i);
		mk(name, true);
		for (int j = 0; j < 6; j++) {
			snprintf(name, sizeof(name), "d%d/e%d", i, j);
			mk(name, true);
			for (int k = 0; k < 30; k++) {
				snprintf(name, sizeof(name), "d%d/e%d/f%d", i, j, k);
				mk(name, false);
			}
		}
	}
	char *roots[] = {dir};
	struct seen whole = {0};
	struct errlog el0 = {0};
	struct walk_config cfg0 = dconfig(&whole, roots, &el0);
	run_walk(&cfg0, NULL);
	char *want = sorted_records(&whole.done);
	char line[128];
	snprintf(line, sizeof(line), "%d %s\n", 1 + 6 + 36 + 36 * 30, dir);
	assert_non_null(strstr(want, line));
	snprintf(line, sizeof(line), "%d %s/d3\n", 1 + 6 + 6 * 30, dir);
	assert_non_null(strstr(want, line));

	struct seen first = {0};
	struct errlog el1 = {0};
	struct throttle th;
	throttle_init(&th, 2000);
	struct walk_config cfg1 = dconfig(&first, roots, &el1);
	cfg1.throttle = &th;
	struct walk *w1 = walk_new(&cfg1, NULL);
	assert_non_null(w1);
	struct run_hooks h1 = walk_run_hooks(w1, NULL, NULL);
	walk_start(w1);
	/* Until something is committed (a fixed sleep was not always enough on a loaded machine, and
	 * an assertion failing here left w1's workers running into the next test): the throttle keeps
	 * the walk from ending for a second after that. */
	size_t at = 0;
	for (int i = 0; i < 20000 && !at; i++) {
		usleep(1000);
		walk_lock(w1);
		at = first.done.len;
		walk_unlock(w1);
	}
	struct sbuf snap = {0};
	h1.snapshot(h1.ctx, &snap, true);
	walk_lock(w1);
	at = first.done.len;
	walk_unlock(w1);
	assert_true(at > 0 && !h1.done(h1.ctx)); /* really part-way */

	struct seen rest = {0};
	struct errlog el2 = {0};
	struct walk_config cfg2 = dconfig(&rest, roots, &el2);
	sbuf_add(&rest.done, first.done.data, at); /* what the stopped walk had committed */
	run_walk(&cfg2, &snap);
	char *got = sorted_records(&rest.done);
	assert_string_equal(got, want);
	free(want);
	free(got);
	sbuf_free(&snap);
	seen_free(&whole);
	seen_free(&rest);
	errlog_close(&el0);
	errlog_close(&el2);
	rm_tree(dir);
}

/* Wait until a shared walk is idle (it never finishes by itself). */
static void wait_idle(struct walk *w)
{
	for (int i = 0; i < 10000 && !walk_idle(w); i++)
		usleep(1000);
	assert_true(walk_idle(w));
}

static void shared_walks_hand_work_over(void **state)
{
	char a[512], ab[512];
	snprintf(a, sizeof(a), "%s/a", top);
	snprintf(ab, sizeof(ab), "%s/a/b", top);
	char *roots[] = {a, ab};
	struct seen s0 = {0}, s1 = {0};
	struct errlog el0 = {0}, el1 = {0};
	struct walk_config c0 = config(&s0, roots, 2, &el0), c1 = config(&s1, roots, 2, &el1);
	c0.nroots = c1.nroots = 2;
	c0.visitor.dir_done = c1.visitor.dir_done = NULL;
	c0.shared = c1.shared = c1.shared_empty = true;
	struct walk *w0 = walk_new(&c0, NULL), *w1 = walk_new(&c1, NULL);
	assert_non_null(w0);
	assert_non_null(w1);
	/* w0 visited both operands and holds them; the bottom one (a/b) goes to w1. */
	struct sbuf b = {0};
	assert_int_equal(walk_give(w0, &b, 512), 1);
	assert_true(walk_add(w1, b.data, b.len));
	/* A record outside the operands is refused whole. */
	struct sbuf bad = {0};
	ser_u64(&bad, 0);
	ser_u64(&bad, 0);
	ser_u64(&bad, 5);
	ser_bytes(&bad, "/etc/x", 6);
	assert_false(walk_add(w1, bad.data, bad.len));
	assert_false(walk_add(w1, b.data, b.len - 1));
	struct run_hooks h0 = walk_run_hooks(w0, NULL, NULL), h1 = walk_run_hooks(w1, NULL, NULL);
	walk_start(w0);
	walk_start(w1);
	wait_idle(w0);
	wait_idle(w1);
	usleep(20000);
	assert_false(h0.done(h0.ctx)); /* dry, but up until told */
	assert_int_equal(walk_give(w0, &bad, 512), 0);
	walk_end(w0);
	walk_end(w1);
	assert_true(h0.done(h0.ctx) && h1.done(h1.ctx));
	walk_join(w0);
	walk_join(w1);
	/* w0: the two operands and a's 5 entries; w1: a/b's 3 (c, f2, c/f3). Each entry once. */
	assert_int_equal(s0.count, 7);
	assert_int_equal(s1.count, 3);
	char p[512];
	snprintf(p, sizeof(p), "%s/a/b/c/f3", top);
	assert_int_equal(occurrences(&s1.paths, p), 1);
	assert_int_equal(occurrences(&s0.paths, p), 1); /* under operand a, walked by w0 */
	walk_free(w0);
	walk_free(w1);
	sbuf_free(&b);
	sbuf_free(&bad);
	seen_free(&s0);
	seen_free(&s1);
	errlog_close(&el0);
	errlog_close(&el1);
}

int main(void)
{
	sig_install();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(every_entry_once, small_tree, remove_tree),
	    cmocka_unit_test_setup_teardown(post_order_deepest_first_and_excludes, small_tree, remove_tree),
	    cmocka_unit_test_setup_teardown(enter_false_prunes, small_tree, remove_tree),
	    cmocka_unit_test_setup_teardown(cancel_ends_the_walk, small_tree, remove_tree),
	    cmocka_unit_test(inode_order),
	    cmocka_unit_test(leaves_are_closed_once_read),
	    cmocka_unit_test_setup_teardown(moved_out_mid_walk, small_tree, remove_tree),
	    cmocka_unit_test_setup_teardown(rmdir_takes_a_file_only_when_asked, small_tree, remove_tree),
	    cmocka_unit_test(resume_from_snapshot_gives_the_same_totals),
	    cmocka_unit_test(dir_state_rolls_up_and_resumes_exactly),
	    cmocka_unit_test_setup_teardown(shared_walks_hand_work_over, small_tree, remove_tree),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
