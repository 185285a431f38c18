/*
 * myriad du: entries and bytes per directory, like du --inodes, du -B1 and du -b. The plan is the
 * traversal engine over the operands, statting every entry, post-order; the action adds each
 * entry to its directory's totals, which the engine keeps with every open directory (dir_state)
 * and folds into the parent's when the directory is finished (dir_fold), so memory follows the
 * open directories, never the entries, and a snapshot holds them exactly.
 *
 * Hard links: an entry with more links is counted at its first name only. Which names were met
 * is decided at commit (engine lock held), through copy's bounded map of hard-link groups
 * (state/linkmap: an inode is dropped once all its names are met, and the map spills to the
 * state directory past --link-memory); with state, every decision is journaled in the state's
 * `links` file, whose length is in the snapshot, so a resume replays it to the same map.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cmd/cmds.h"
#include "job/job.h"
#include "engine/walk.h"
#include "report/json.h"
#include "report/outfile.h"
#include "state/linkmap.h"
#include "util/util.h"

static const char du_help[] =
    "Usage: myriad du [OPTIONS] DIR...\n"
    "Entries and bytes under every directory of each DIR (DIR included), in parallel, with memory\n"
    "that follows the directories open at once, not the entries; resumable after any\n"
    "interruption. One line per directory, \"VALUE<TAB>PATH\", each after everything under it.\n"
    "\n"
    "  -j, --threads N          worker threads (default: one per CPU, growing to 8 per CPU, at\n"
    "                           least 16, while they wait for the disk)\n"
    "  -B1, --bytes             allocated bytes, as du -B1 (the default)\n"
    "  -b, --apparent-size      apparent bytes (sizes), as du -b\n"
    "      --inodes             entries, as du --inodes\n"
    "  -h, --human-readable     values as 1.5K, 23M, 4.0G (powers of 1024, rounded up), as du -h\n"
    "  -d, --max-depth N        lines only for directories at most N levels below an operand\n"
    "                           (0: the operands only)\n"
    "  -s, --summarize          one line per operand: --max-depth 0\n"
    "      --top N              instead of every line, the N largest directories (by the unit\n"
    "                           chosen), largest first\n"
    "  -c, --total              a last line with the sum of the operands: \"VALUE<TAB>total\"\n"
    "  -0, --null               end each line with a NUL byte, not a newline (paths may hold\n"
    "                           newlines)\n"
    "  -l, --count-links        count every name of a hard-linked file (by default once)\n"
    "      --link-memory SIZE   memory for hard-linked inodes whose other names are still to come;\n"
    "                           past it they spill to a file in the state directory (default 64M)\n"
    "  -o, --output FILE        write the lines to FILE instead of standard output; each line\n"
    "                           appears exactly once, also across a resume. Lines streamed to\n"
    "                           standard output cannot be resumed exactly: such a run keeps no\n"
    "                           state (with --top or --summarize nothing is streamed: they resume)\n"
    "  -x, --xdev               do not descend into mount points, nor count them\n"
    "      --exclude GLOB       skip entries whose name matches GLOB (GLOB/: only directories; a\n"
    "                           name, not a path); repeatable\n"
    "      --rate N             read at most N entries per second\n"
    "%s"
    "\n"
    "Lines come as directories finish: each after everything under it, siblings in no set order\n"
    "(GNU du's readdir order differs too). A hard-linked file counts in the directory where it is\n"
    "met first, as in GNU du. Operands that are symlinks to directories are followed; nothing under\n"
    "them is. As in GNU du, a directory is counted once: an operand repeating an earlier one, or\n"
    "inside one, is skipped, and an earlier operand met under a later one is not counted again.\n"
    "Exit status: 0 all read; 1 some entries failed (reported; what was read is counted); 2 usage\n"
    "error; 3 stopped by a signal or a failed output with state saved: run the same command to\n"
    "resume.\n";

enum unit { U_ALLOCATED, U_APPARENT, U_INODES };
static const char *const unit_names[] = {"allocated_bytes", "apparent_bytes", "entries"};

/* A directory's totals (the engine's per-directory state). */
struct tot {
	uint64_t entries, apparent, allocated;
};

static void tot_add(struct tot *a, const struct tot *b)
{
	a->entries += b->entries;
	a->apparent += b->apparent;
	a->allocated += b->allocated;
}

/* A directory's identity, and the operand (walk root) it is. */
struct du_id {
	uint64_t ino, dev;
	size_t root;
};

/* An entry with more links, decided at commit. */
struct plink {
	uint64_t dev, ino, nlink;
	struct tot t;
};

struct top_item {
	uint64_t v;
	char *path;
};

struct local {
	struct tot t;       /* entries of dir in this batch */
	struct tot *dir;    /* the directory they are in */
	struct plink *links;
	size_t nlinks, caplinks;
	uint64_t seen;      /* entries visited */
	uint64_t dirs;      /* directories finished */
	struct sbuf out;    /* lines */
	bool top;           /* a --top candidate: top_v, top_path */
	uint64_t top_v;
	struct sbuf top_path;
	size_t root;        /* 1 + the operand finished, or 0 */
	struct tot root_t;
};

struct du_cmd {
	enum unit unit;
	bool human, count_links, stream;
	char eol; /* '\n', or '\0' with --null */
	long max_depth; /* -1: no limit */
	size_t top;     /* 0: none */
	struct outfile out;
	uint64_t resume_out_len, resume_log_len;
	struct linkmap *links;
	struct outfile log; /* the links journal (fd -1: no state) */
	struct sbuf scratch;
	bool link_failed;
	uint64_t seen, dirs;
	size_t nroots;
	char **roots;       /* the operands counted: each once, none inside an earlier one */
	struct du_id *fence; /* their directories, by inode: not counted again under a later operand */
	struct tot *root_t;
	bool *root_done;
	struct top_item *heap; /* a min-heap of the top candidates */
	size_t nheap;
	struct walk *walk;
	struct job job;
};

static uint64_t value_of(const struct du_cmd *c, const struct tot *t)
{
	return c->unit == U_INODES ? t->entries : c->unit == U_APPARENT ? t->apparent : t->allocated;
}

/* "VALUE" as du -h prints it: powers of 1024, rounded up, one decimal below 10. */
static void add_value(const struct du_cmd *c, struct sbuf *b, uint64_t v)
{
	static const char units[] = "KMGTPE";
	if (!c->human || v < 1024) {
		sbuf_printf(b, "%llu", (unsigned long long)v);
		return;
	}
	double x = (double)v;
	int u = -1;
	do {
		x /= 1024;
		u++;
	} while (x >= 1024 && u < 5);
	if (x < 10) {
		double r = (double)(uint64_t)(x * 10);
		if (r < x * 10)
			r++;
		if (r >= 100) /* 9.96 rounds up to 10 */
			sbuf_printf(b, "10%c", units[u]);
		else
			sbuf_printf(b, "%.1f%c", r / 10, units[u]);
		return;
	}
	uint64_t r = (uint64_t)x;
	if ((double)r < x)
		r++;
	if (r >= 1024 && u < 5)
		sbuf_printf(b, "1.0%c", units[u + 1]);
	else
		sbuf_printf(b, "%llu%c", (unsigned long long)r, units[u]);
}

static void add_line(const struct du_cmd *c, struct sbuf *b, uint64_t v, const char *path, size_t len)
{
	add_value(c, b, v);
	sbuf_addc(b, '\t');
	sbuf_add(b, path, len);
	sbuf_addc(b, c->eol);
}

static void stat_tot(struct tot *t, const struct statx *s)
{
	t->entries = 1;
	t->apparent = s->stx_size;
	t->allocated = s->stx_blocks * 512;
}

static bool on_entry(void *ctx, void *lp, const struct walk_dir *d, const struct walk_entry *e,
		     struct errbatch *errs)
{
	struct du_cmd *c = ctx;
	struct local *l = lp;
	l->seen++;
	/* Operands and directories count in their own state (dir_init); an entry whose stat
	 * failed (reported) counts nowhere, as in du. */
	if (!d || e->type == DT_DIR || !e->stx)
		return false;
	l->dir = d->state;
	struct tot t;
	stat_tot(&t, e->stx);
	if (e->stx->stx_nlink > 1 && !c->count_links) {
		if (l->nlinks == l->caplinks) {
			l->caplinks = l->caplinks ? 2 * l->caplinks : 64;
			l->links = xrealloc(l->links, l->caplinks * sizeof(*l->links));
		}
		l->links[l->nlinks++] = (struct plink){makedev(e->stx->stx_dev_major, e->stx->stx_dev_minor),
						       e->stx->stx_ino, e->stx->stx_nlink, t};
		return false;
	}
	tot_add(&l->t, &t);
	return false;
}

static void on_dir_init(void *ctx, void *state, const struct walk_entry *e)
{
	if (e->stx)
		stat_tot(state, e->stx);
}

static void on_dir_fold(void *ctx, void *parent, const struct walk_dir *d)
{
	if (!d->mount) /* du -x neither descends into a mount point nor counts it */
		tot_add(parent, d->state);
}

/* Levels below its operand: 0 for the operand. */
static long depth_of(const struct walk_dir *d)
{
	if (d->relstart >= d->pathlen)
		return 0;
	long n = 1;
	for (size_t i = d->relstart; i < d->pathlen; i++)
		n += d->path[i] == '/';
	return n;
}

static bool on_dir_done(void *ctx, void *lp, const struct walk_dir *d, bool keep, struct errbatch *errs)
{
	struct du_cmd *c = ctx;
	struct local *l = lp;
	const struct tot *t = d->state;
	l->dirs++;
	if (d->mount)
		return false;
	long depth = depth_of(d);
	if (depth == 0) {
		l->root = d->root + 1;
		l->root_t = *t;
	}
	if (c->max_depth >= 0 && depth > c->max_depth)
		return false;
	uint64_t v = value_of(c, t);
	if (c->stream)
		add_line(c, &l->out, v, d->path, d->pathlen);
	if (c->top) {
		l->top = true;
		l->top_v = v;
		sbuf_clear(&l->top_path);
		sbuf_add(&l->top_path, d->path, d->pathlen);
	}
	return false;
}

/* A directory that is an earlier operand, met under a later one, was counted there: not again
 * (GNU du's one count per directory). */
static bool on_enter(void *ctx, void *lp, const struct walk_dir *d, const struct walk_entry *e)
{
	struct du_cmd *c = ctx;
	if (!d || !e->stx || c->nroots < 2)
		return true;
	size_t lo = 0, hi = c->nroots;
	while (lo < hi) { /* the first with this inode */
		size_t mid = (lo + hi) / 2;
		if (c->fence[mid].ino < e->ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint64_t dev = makedev(e->stx->stx_dev_major, e->stx->stx_dev_minor);
	for (; lo < c->nroots && c->fence[lo].ino == e->ino; lo++)
		if (c->fence[lo].dev == dev && c->fence[lo].root < d->root)
			return false;
	return true;
}

/* ---- operands ---- */

static int du_id_of(int fd, struct du_id *id)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return -1;
	id->ino = st.st_ino;
	id->dev = st.st_dev;
	return 0;
}

static int du_id_cmp(const void *a, const void *b)
{
	const struct du_id *x = a, *y = b;
	return x->ino != y->ino ? (x->ino < y->ino ? -1 : 1) : (x->root > y->root) - (x->root < y->root);
}

/* Is the directory path, or one above it (by ".."), one of ids[0..n)? */
static bool du_counted(const char *path, const struct du_id *ids, size_t n)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct du_id id, up;
	bool found = false;
	while (fd >= 0 && !found && du_id_of(fd, &id) == 0) {
		for (size_t i = 0; i < n && !found; i++)
			found = ids[i].ino == id.ino && ids[i].dev == id.dev;
		int parent = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		fd = parent;
		if (fd >= 0 && (du_id_of(fd, &up) != 0 || (up.ino == id.ino && up.dev == id.dev)))
			break; /* the top */
	}
	if (fd >= 0)
		close(fd);
	return found;
}

/* The operands to count, as GNU du: one that is an operand before it, or inside one, is skipped
 * (counted there already). c->fence gets their identities, sorted by inode. */
static void du_pick_roots(struct du_cmd *c, char **roots, size_t n)
{
	c->roots = xcalloc(n, sizeof(*c->roots));
	c->fence = xcalloc(n, sizeof(*c->fence));
	c->nroots = 0;
	for (size_t i = 0; i < n; i++) {
		if (du_counted(roots[i], c->fence, c->nroots))
			continue;
		int fd = open(roots[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		struct du_id id = {0};
		if (fd >= 0) {
			du_id_of(fd, &id);
			close(fd);
		}
		id.root = c->nroots;
		c->fence[c->nroots] = id;
		c->roots[c->nroots++] = roots[i];
	}
	qsort(c->fence, c->nroots, sizeof(*c->fence), du_id_cmp);
}

/* ---- hard links ---- */

static void link_map_failed(struct du_cmd *c, int err)
{
	if (!c->link_failed)
		warnx_("hard-link map: spill file: %s: hard links met from now on may be counted more than once",
		       strerror(err));
	c->link_failed = true;
}

/* Is this the first name met of inode (dev, ino)? Remembers it until its other names are met. */
static bool link_first(struct du_cmd *c, uint64_t dev, uint64_t ino, uint64_t nlink)
{
	int found = linkmap_take(c->links, dev, ino, &c->scratch);
	if (found < 0)
		link_map_failed(c, errno);
	if (found != 0)
		return found < 0;
	uint32_t left = nlink - 1 > UINT32_MAX ? UINT32_MAX : (uint32_t)(nlink - 1);
	if (linkmap_add(c->links, dev, ino, left, "", 0) != 0)
		link_map_failed(c, errno);
	return true;
}

/* The journal's records: dev, ino, nlink. */
static void log_link(struct du_cmd *c, const struct plink *p)
{
	if (c->log.fd < 0)
		return;
	uint64_t rec[3] = {p->dev, p->ino, p->nlink};
	(void)outfile_write(&c->log, rec, sizeof(rec)); /* a failure stops the run */
}

/* Resume: the journal up to the snapshot's length makes the map again. */
static int log_replay(struct du_cmd *c, uint64_t len)
{
	uint64_t buf[3 * 1024];
	for (uint64_t off = 0; off < len;) {
		size_t n = len - off < sizeof(buf) ? len - off : sizeof(buf);
		ssize_t r = pread_all(c->log.fd, buf, n, off);
		if (r < 0 || (size_t)r != n || n % 24) {
			warnx_("state %s/links: read: %s", ckpt_dir(c->job.ckpt),
			       r < 0 ? strerror(errno) : "shorter than its snapshot says");
			return -1;
		}
		for (size_t i = 0; i < n / 8; i += 3)
			(void)link_first(c, buf[i], buf[i + 1], buf[i + 2]);
		off += n;
	}
	return 0;
}

static int log_open(struct du_cmd *c, bool resume)
{
	c->log = (struct outfile){.fd = -1, .name = "the state's links journal"};
	if (!c->job.ckpt || c->count_links)
		return 0;
	int fd = ckpt_open_file(c->job.ckpt, "links");
	if (fd < 0) {
		warnx_("state %s/links: open: %s", ckpt_dir(c->job.ckpt), strerror(errno));
		return -1;
	}
	c->log.fd = fd;
	c->log.regular = c->log.owned = true;
	uint64_t len = resume ? c->resume_log_len : 0;
	if (resume && log_replay(c, len) != 0)
		return -1;
	if (ftruncate(fd, (off_t)len) != 0 || lseek(fd, (off_t)len, SEEK_SET) < 0) {
		warnx_("state %s/links: truncate: %s", ckpt_dir(c->job.ckpt), strerror(errno));
		return -1;
	}
	c->log.len = len;
	return 0;
}

/* ---- --top: a min-heap of N, ordered by value, then by path (the smaller path ranks higher),
 * so that ties end the same whatever the order directories finished in ---- */

static bool ranks_below(const struct top_item *a, uint64_t v, const char *path)
{
	return a->v != v ? a->v < v : strcmp(a->path, path) > 0;
}

static void heap_down(struct du_cmd *c, size_t i)
{
	for (;;) {
		size_t m = i, l = 2 * i + 1, r = l + 1;
		if (l < c->nheap && ranks_below(&c->heap[l], c->heap[m].v, c->heap[m].path))
			m = l;
		if (r < c->nheap && ranks_below(&c->heap[r], c->heap[m].v, c->heap[m].path))
			m = r;
		if (m == i)
			return;
		struct top_item t = c->heap[i];
		c->heap[i] = c->heap[m];
		c->heap[m] = t;
		i = m;
	}
}

static void top_offer(struct du_cmd *c, uint64_t v, const char *path)
{
	if (c->nheap < c->top) {
		size_t i = c->nheap++;
		c->heap[i] = (struct top_item){v, xstrdup(path)};
		while (i > 0 && ranks_below(&c->heap[i], c->heap[(i - 1) / 2].v, c->heap[(i - 1) / 2].path)) {
			struct top_item t = c->heap[i];
			c->heap[i] = c->heap[(i - 1) / 2];
			c->heap[(i - 1) / 2] = t;
			i = (i - 1) / 2;
		}
	} else if (ranks_below(&c->heap[0], v, path)) {
		free(c->heap[0].path);
		c->heap[0] = (struct top_item){v, xstrdup(path)};
		heap_down(c, 0);
	}
}

static int cmp_top_desc(const void *a, const void *b)
{
	const struct top_item *x = a, *y = b;
	return ranks_below(x, y->v, y->path) ? 1 : ranks_below(y, x->v, x->path) ? -1 : 0;
}

/* ---- commit, snapshot ---- */

static void on_commit(void *ctx, void *lp)
{
	struct du_cmd *c = ctx;
	struct local *l = lp;
	if (l->dir) {
		tot_add(l->dir, &l->t);
		for (size_t i = 0; i < l->nlinks; i++) {
			log_link(c, &l->links[i]);
			if (link_first(c, l->links[i].dev, l->links[i].ino, l->links[i].nlink))
				tot_add(l->dir, &l->links[i].t);
		}
	}
	c->seen += l->seen;
	c->dirs += l->dirs;
	if (l->root) {
		c->root_t[l->root - 1] = l->root_t;
		c->root_done[l->root - 1] = true;
	}
	if (l->top) {
		sbuf_addc(&l->top_path, 0);
		top_offer(c, l->top_v, l->top_path.data);
	}
	if (l->out.len)
		(void)outfile_write(&c->out, l->out.data, l->out.len); /* a failure stops the run */
	sbuf_clear(&l->out);
	l->t = (struct tot){0};
	l->dir = NULL;
	l->nlinks = 0;
	l->seen = l->dirs = 0;
	l->root = 0;
	l->top = false;
}

static void on_local_free(void *ctx, void *lp)
{
	struct local *l = lp;
	free(l->links);
	sbuf_free(&l->out);
	sbuf_free(&l->top_path);
}

static void on_save(void *ctx, struct sbuf *b)
{
	struct du_cmd *c = ctx;
	ser_u64(b, c->seen);
	ser_u64(b, c->dirs);
	ser_u64(b, c->out.len);
	ser_u64(b, c->log.len);
	for (size_t i = 0; i < c->nroots; i++) {
		ser_u64(b, c->root_done[i]);
		ser_u64(b, c->root_t[i].entries);
		ser_u64(b, c->root_t[i].apparent);
		ser_u64(b, c->root_t[i].allocated);
	}
	ser_u64(b, c->nheap);
	for (size_t i = 0; i < c->nheap; i++) {
		ser_u64(b, c->heap[i].v);
		ser_str(b, c->heap[i].path);
	}
}

/* Only decodes: the output and the journal are reopened at their lengths once the whole snapshot
 * checked out. */
static bool on_load(void *ctx, struct deser *d)
{
	struct du_cmd *c = ctx;
	c->seen = deser_u64(d);
	c->dirs = deser_u64(d);
	c->resume_out_len = deser_u64(d);
	c->resume_log_len = deser_u64(d);
	for (size_t i = 0; i < c->nroots; i++) {
		c->root_done[i] = deser_u64(d);
		c->root_t[i].entries = deser_u64(d);
		c->root_t[i].apparent = deser_u64(d);
		c->root_t[i].allocated = deser_u64(d);
	}
	uint64_t n = deser_u64(d);
	if (d->bad || n > c->top || c->resume_log_len % 24)
		return false;
	for (uint64_t i = 0; i < n && !d->bad; i++) {
		uint64_t v = deser_u64(d);
		size_t len;
		const char *p = deser_bytes(d, &len);
		if (d->bad || memchr(p, 0, len))
			return false;
		char *s = xmalloc(len + 1);
		memcpy(s, p, len);
		s[len] = 0;
		top_offer(c, v, s);
		free(s);
	}
	return !d->bad;
}

static void on_progress(void *ctx, struct sbuf *line)
{
	struct du_cmd *c = ctx;
	walk_lock(c->walk);
	uint64_t n = c->seen, dirs = c->dirs;
	walk_unlock(c->walk);
	job_walk_progress(line, c->walk, "du", n, dirs, " done");
}

static void on_sync(void *ctx)
{
	struct du_cmd *c = ctx;
	outfile_sync(&c->out);
	if (c->log.fd >= 0)
		outfile_sync(&c->log);
	if (c->job.errlog.have_file)
		outfile_sync(&c->job.errlog.file);
}

/* ---- options ---- */

struct du_opts {
	struct job_opts jo;
	enum unit unit;
	bool unit_set, human, total, count_links, xdev, null;
	long max_depth;
	uint64_t top, link_memory;
	const char *output;
	char **roots;
	size_t nroots;
};

enum { OPT_INODES = OPT_CMD_BASE, OPT_TOP, OPT_LINK_MEMORY, OPT_BYTES };

#define LINK_MEMORY_DEFAULT (64u << 20)

static int set_unit(struct du_opts *o, enum unit u)
{
	if (o->unit_set && o->unit != u)
		return usage_error("--inodes, --apparent-size and --bytes (-B1) contradict each other: choose one");
	o->unit = u;
	o->unit_set = true;
	return 0;
}

static int du_parse(int argc, char **argv, void *opts)
{
	static const struct option longopts[] = {
	    JOB_LONG_OPTIONS,
	    {"bytes", no_argument, 0, OPT_BYTES},
	    {"apparent-size", no_argument, 0, 'b'},
	    {"inodes", no_argument, 0, OPT_INODES},
	    {"human-readable", no_argument, 0, 'h'},
	    {"max-depth", required_argument, 0, 'd'},
	    {"summarize", no_argument, 0, 's'},
	    {"top", required_argument, 0, OPT_TOP},
	    {"total", no_argument, 0, 'c'},
	    {"null", no_argument, 0, '0'},
	    {"count-links", no_argument, 0, 'l'},
	    {"link-memory", required_argument, 0, OPT_LINK_MEMORY},
	    {"output", required_argument, 0, 'o'},
	    {"xdev", no_argument, 0, 'x'},
	    JOB_EXCLUDE_OPTION,
	    JOB_RATE_OPTION,
	    {0, 0, 0, 0},
	};
	struct du_opts *o = opts;
	o->max_depth = -1;
	o->link_memory = LINK_MEMORY_DEFAULT;
	job_opts_init(&o->jo);
	bool depth_set = false, summarize = false;
	int opt, rc;
	uint64_t n;
	while ((opt = job_getopt(&o->jo, argc, argv, "j:o:B:bhd:scl0x", longopts, du_help, &rc))) {
		switch (opt) {
		case 'B':
			if (strcmp(optarg, "1") != 0)
				return usage_error("-B: only -B1 (bytes) is supported, not '%s'", optarg);
			/* fall through */
		case OPT_BYTES:
			if (set_unit(o, U_ALLOCATED))
				return EXIT_USAGE;
			break;
		case 'b':
			if (set_unit(o, U_APPARENT))
				return EXIT_USAGE;
			break;
		case OPT_INODES:
			if (set_unit(o, U_INODES))
				return EXIT_USAGE;
			break;
		case 'h': o->human = true; break;
		case 'd':
			if (!parse_count(optarg, &n) || n > 1000000)
				return usage_error("--max-depth: '%s' is not a number of levels from 0 to 1M", optarg);
			o->max_depth = (long)n;
			depth_set = true;
			break;
		case 's': summarize = true; break;
		case OPT_TOP:
			if (!parse_count(optarg, &o->top) || o->top == 0 || o->top > 1000000)
				return usage_error("--top: '%s' is not a number of directories from 1 to 1M", optarg);
			break;
		case 'c': o->total = true; break;
		case '0': o->null = true; break;
		case 'l': o->count_links = true; break;
		case OPT_LINK_MEMORY:
			if (!parse_size(optarg, &o->link_memory))
				return usage_error("--link-memory: '%s' is not a size from 0 to 16E-1 (e.g. 64M)", optarg);
			break;
		case 'o':
			if (!job_output_ok("--output", optarg))
				return EXIT_USAGE;
			o->output = optarg;
			break;
		case 'x': o->xdev = true; break;
		default: return usage_hint();
		}
	}
	if (rc != OPTS_RUN)
		return rc;
	if (job_check_outputs(&o->jo, &(struct job_output){"--output", o->output}, 1))
		return EXIT_USAGE;
	if (summarize) {
		if (depth_set && o->max_depth != 0)
			return usage_error("--summarize with --max-depth %ld: --summarize is --max-depth 0", o->max_depth);
		o->max_depth = 0;
	}
	o->roots = argv + optind;
	o->nroots = argc - optind;
	if (o->nroots == 0)
		return usage_error("missing operand: the directories to measure");
	bool stream = !o->top && o->max_depth != 0;
	bool on_stdout = !o->output || !strcmp(o->output, "-");
	if (on_stdout && job_json_stdout(&o->jo))
		return usage_error("--json -: the summary would mix with the lines on standard output: give --json "
				   "FILE, or the lines -o FILE");
	if (stream && on_stdout) {
		if (o->jo.state)
			return usage_error("--state: lines streamed to standard output cannot be resumed exactly, so "
					   "such a run keeps no state: write them with -o FILE, or drop --state");
		o->jo.unresumable = "lines streamed to standard output cannot be resumed exactly (with -o FILE, "
				    "--top or --summarize they can)";
	}
	return OPTS_RUN;
}

static void du_opts_free(void *opts) { job_opts_free(&((struct du_opts *)opts)->jo); }

/* The job's identity: what changes its result, not how fast it runs. */
static void du_identity(struct sbuf *id, const struct du_opts *o)
{
	job_identity(id, "du");
	identity_add_operands(id, o->roots, o->nroots);
	ser_u64(id, o->unit);
	ser_u64(id, o->human);
	ser_u64(id, o->total);
	ser_u64(id, o->null);
	ser_u64(id, o->count_links);
	ser_u64(id, o->xdev);
	ser_u64(id, (uint64_t)(o->max_depth + 1));
	ser_u64(id, o->top);
	identity_add_excludes(id, &o->jo);
	if (o->output && (!strcmp(o->output, "-") || identity_add_path(id, o->output) != 0))
		ser_str(id, o->output);
}

/* ---- the end ---- */

/* What is printed only at the end: the operands (--summarize), the top list, the total. */
static void final_lines(struct du_cmd *c, const struct du_opts *o)
{
	struct sbuf b = {0};
	if (c->top) {
		qsort(c->heap, c->nheap, sizeof(*c->heap), cmp_top_desc);
		for (size_t i = 0; i < c->nheap; i++)
			add_line(c, &b, c->heap[i].v, c->heap[i].path, strlen(c->heap[i].path));
	} else if (o->max_depth == 0) {
		for (size_t i = 0; i < c->nroots; i++)
			add_line(c, &b, value_of(c, &c->root_t[i]), c->roots[i], strlen(c->roots[i]));
	}
	if (o->total) {
		struct tot all = {0};
		for (size_t i = 0; i < c->nroots; i++)
			tot_add(&all, &c->root_t[i]);
		add_line(c, &b, value_of(c, &all), "total", 5);
	}
	if (b.len)
		(void)outfile_write(&c->out, b.data, b.len);
	sbuf_free(&b);
}

static void summary_json(struct du_cmd *c, const struct du_opts *o, bool complete)
{
	struct sbuf doc = {0};
	struct json j;
	json_document(&j, &doc, "du");
	json_bool(&j, "complete", complete);
	json_u64(&j, "sessions", walk_sessions(c->walk));
	json_str(&j, "unit", unit_names[c->unit]);
	json_open(&j, "roots", '[');
	struct tot all = {0};
	for (size_t i = 0; i < c->nroots; i++) {
		json_open(&j, NULL, '{');
		json_bytes(&j, "path", c->roots[i], strlen(c->roots[i]));
		json_u64(&j, "entries", c->root_t[i].entries);
		json_u64(&j, "apparent_bytes", c->root_t[i].apparent);
		json_u64(&j, "allocated_bytes", c->root_t[i].allocated);
		json_close(&j, '}');
		tot_add(&all, &c->root_t[i]);
	}
	json_close(&j, ']');
	json_u64(&j, "entries", all.entries);
	json_u64(&j, "apparent_bytes", all.apparent);
	json_u64(&j, "allocated_bytes", all.allocated);
	json_u64(&j, "directories", c->dirs);
	if (c->top) {
		json_open(&j, "top", '[');
		for (size_t i = 0; i < c->nheap; i++) {
			json_open(&j, NULL, '{');
			json_bytes(&j, "path", c->heap[i].path, strlen(c->heap[i].path));
			json_u64(&j, unit_names[c->unit], c->heap[i].v);
			json_close(&j, '}');
		}
		json_close(&j, ']');
	}
	if (c->links) {
		json_u64(&j, "hardlinks_pending", linkmap_count(c->links));
		json_u64(&j, "hardlinks_spilled", linkmap_spilled(c->links));
	}
	double el = walk_elapsed(c->walk);
	json_u64(&j, "errors", walk_errors(c->walk));
	json_double(&j, "elapsed_s", el);
	json_double(&j, "entries_per_s", el > 0 ? c->seen / el : 0);
	json_u64(&j, "threads", walk_threads(c->walk));
	json_close(&j, '}');
	write_json_file(o->jo.json, &doc);
	sbuf_free(&doc);
}

static int du_run(void *opts)
{
	struct du_opts *o = opts;
	struct du_cmd c = {.unit = o->unit,
			   .human = o->human,
			   .eol = o->null ? '\0' : '\n',
			   .count_links = o->count_links,
			   .stream = !o->top && o->max_depth != 0,
			   .max_depth = o->max_depth,
			   .top = o->top};
	c.out.fd = c.log.fd = -1;
	if (job_check_dirs(o->roots, o->nroots) != 0)
		return EXIT_USAGE;
	du_pick_roots(&c, o->roots, o->nroots);
	int threads = job_threads(&o->jo, 8, 16, 128);
	struct sbuf id = {0};
	du_identity(&id, o);
	int rc = job_begin(&c.job, &o->jo, "du", &id, o->roots, o->nroots);
	sbuf_free(&id);
	if (rc)
		return rc;
	const struct sbuf *snap = job_snapshot(&c.job);
	c.root_t = xcalloc(c.nroots, sizeof(*c.root_t));
	c.root_done = xcalloc(c.nroots, sizeof(*c.root_done));
	c.heap = xcalloc(o->top ? o->top : 1, sizeof(*c.heap));
	if (!c.count_links)
		c.links = linkmap_new(o->link_memory, c.job.ckpt ? ckpt_dir(c.job.ckpt) : NULL);
	if (!snap && (outfile_open(&c.out, o->output, 1, false, 0) != 0 || log_open(&c, false) != 0))
		return EXIT_USAGE;

	struct throttle throttle;
	throttle_init(&throttle, o->jo.rate);
	struct walk_config cfg = {
	    .roots = c.roots,
	    .nroots = c.nroots,
	    .threads = threads,
	    .min_threads = o->jo.threads ? 0 : cpu_count(),
	    .xdev = o->xdev,
	    .excludes = o->jo.excludes,
	    .nexcludes = o->jo.nexcludes,
	    .stat_mask = STATX_SIZE | STATX_BLOCKS | STATX_NLINK | STATX_INO,
	    .visitor = {.ctx = &c,
			.local_size = sizeof(struct local),
			.entry = on_entry,
			.enter = on_enter,
			.dir_done = on_dir_done,
			.commit = on_commit,
			.local_free = on_local_free,
			.save = on_save,
			.load = on_load,
			.dir_state = sizeof(struct tot),
			.dir_init = on_dir_init,
			.dir_fold = on_dir_fold},
	    .errlog = &c.job.errlog,
	    .snapshot_name = job_snapshot_name(&c.job),
	    .throttle = o->jo.rate ? &throttle : NULL,
	};
	c.walk = walk_new(&cfg, snap);
	if (!c.walk)
		return EXIT_USAGE;
	if (snap && (outfile_open(&c.out, o->output, 1, true, c.resume_out_len) != 0 || log_open(&c, true) != 0))
		return EXIT_USAGE;
	struct run_hooks hooks = walk_run_hooks(c.walk, on_progress, on_sync);
	enum run_result res = job_execute(&c.job, &hooks);
	if (res == RUN_DONE)
		final_lines(&c, o);
	if (o->jo.json)
		summary_json(&c, o, res == RUN_DONE);
	outfile_close(&c.out);
	if (c.log.fd >= 0)
		close(c.log.fd);
	rc = job_end(&c.job, res, walk_errors(c.walk));
	if (res == RUN_DONE) {
		walk_free(c.walk);
		for (size_t i = 0; i < c.nheap; i++)
			free(c.heap[i].path);
		free(c.heap);
		free(c.root_t);
		free(c.root_done);
		free(c.roots);
		free(c.fence);
		linkmap_free(c.links);
		sbuf_free(&c.scratch);
	}
	return rc;
}

const struct command cmd_du = {"du", "entries and bytes per directory, like du; hard links once; resumable",
			       sizeof(struct du_opts), du_parse, du_run, du_opts_free};
