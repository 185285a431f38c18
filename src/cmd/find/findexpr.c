/*
 * findexpr: parse and evaluate find expressions (see findexpr.h).
 *
 * Grammar, lowest precedence first (GNU find's):
 *   list := or { ',' or }
 *   or   := and { (-o | -or) and }
 *   and  := not { [-a | -and] not }      -a is implied between two expressions
 *   not  := (! | -not) not | '(' list ')' | primary
 */
#include "cmd/find/findexpr.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "state/ser.h"
#include "util/util.h"

enum fx_kind {
	K_AND, K_OR, K_NOT, K_COMMA, K_TRUE, K_FALSE,
	K_NAME, K_INAME, K_PATH, K_IPATH, K_REGEX, K_IREGEX, K_TYPE, K_XTYPE, K_SIZE, K_EMPTY,
	K_NEWER, K_TIME, K_USER, K_UID, K_GROUP, K_GID, K_NOUSER, K_NOGROUP, K_PERM, K_LINKS, K_INUM,
	K_SAMEFILE,
	K_PRINT, K_PRINTF, K_QUIT, K_PRUNE, K_DELETE,
	/* global options: true where they stand */
	K_MAXDEPTH, K_MINDEPTH, K_XDEV, K_DEPTH, K_NOOP, K_REGEXTYPE,
};

/* Arguments: none, one string, a +/-N number, a file then a format (-fprintf). */
enum { A_NONE, A_STR, A_NUM, A_TWO };

/* Cost classes, cheapest first: the dirent, the path, statx, reading a directory or the user
 * database. */
enum { C_NAME, C_PATH, C_STAT, C_SLOW };

struct pred {
	const char *name;
	int kind;
	int arg;
	int cost;
	unsigned mask; /* statx fields */
	int which;     /* times: a c m; print: the terminator, | 0x100 for a file output */
};

static const struct pred preds[] = {
    {"-name", K_NAME, A_STR, C_NAME, 0, 0},
    {"-iname", K_INAME, A_STR, C_NAME, 0, 0},
    {"-path", K_PATH, A_STR, C_PATH, 0, 0},
    {"-wholename", K_PATH, A_STR, C_PATH, 0, 0},
    {"-ipath", K_IPATH, A_STR, C_PATH, 0, 0},
    {"-iwholename", K_IPATH, A_STR, C_PATH, 0, 0},
    {"-regex", K_REGEX, A_STR, C_PATH, 0, 0},
    {"-iregex", K_IREGEX, A_STR, C_PATH, 0, 0},
    {"-type", K_TYPE, A_STR, C_NAME, 0, 0},
    {"-xtype", K_XTYPE, A_STR, C_STAT, 0, 0},
    {"-size", K_SIZE, A_STR, C_STAT, STATX_SIZE, 0},
    {"-empty", K_EMPTY, A_NONE, C_SLOW, STATX_SIZE, 0},
    {"-newer", K_NEWER, A_STR, C_STAT, STATX_MTIME, 'm'},
    {"-anewer", K_NEWER, A_STR, C_STAT, STATX_ATIME, 'a'},
    {"-cnewer", K_NEWER, A_STR, C_STAT, STATX_CTIME, 'c'},
    {"-mtime", K_TIME, A_NUM, C_STAT, STATX_MTIME, 'm'},
    {"-atime", K_TIME, A_NUM, C_STAT, STATX_ATIME, 'a'},
    {"-ctime", K_TIME, A_NUM, C_STAT, STATX_CTIME, 'c'},
    {"-mmin", K_TIME, A_NUM, C_STAT, STATX_MTIME, 'm'},
    {"-amin", K_TIME, A_NUM, C_STAT, STATX_ATIME, 'a'},
    {"-cmin", K_TIME, A_NUM, C_STAT, STATX_CTIME, 'c'},
    {"-user", K_USER, A_STR, C_STAT, STATX_UID, 0},
    {"-uid", K_UID, A_NUM, C_STAT, STATX_UID, 0},
    {"-group", K_GROUP, A_STR, C_STAT, STATX_GID, 0},
    {"-gid", K_GID, A_NUM, C_STAT, STATX_GID, 0},
    {"-nouser", K_NOUSER, A_NONE, C_SLOW, STATX_UID, 0},
    {"-nogroup", K_NOGROUP, A_NONE, C_SLOW, STATX_GID, 0},
    {"-perm", K_PERM, A_STR, C_STAT, STATX_MODE, 0},
    {"-links", K_LINKS, A_NUM, C_STAT, STATX_NLINK, 0},
    {"-inum", K_INUM, A_NUM, C_NAME, 0, 0},
    {"-samefile", K_SAMEFILE, A_STR, C_STAT, STATX_INO, 0},
    {"-true", K_TRUE, A_NONE, C_NAME, 0, 0},
    {"-false", K_FALSE, A_NONE, C_NAME, 0, 0},
    {"-print", K_PRINT, A_NONE, C_NAME, 0, '\n'},
    {"-print0", K_PRINT, A_NONE, C_NAME, 0, 0},
    {"-fprint", K_PRINT, A_STR, C_NAME, 0, '\n' | 0x100},
    {"-fprint0", K_PRINT, A_STR, C_NAME, 0, 0x100},
    {"-printf", K_PRINTF, A_STR, C_NAME, 0, 0},
    {"-fprintf", K_PRINTF, A_TWO, C_NAME, 0, 0},
    {"-quit", K_QUIT, A_NONE, C_NAME, 0, 0},
    {"-prune", K_PRUNE, A_NONE, C_NAME, 0, 0},
    {"-delete", K_DELETE, A_NONE, C_NAME, 0, 0},
    {"-maxdepth", K_MAXDEPTH, A_STR, C_NAME, 0, 0},
    {"-mindepth", K_MINDEPTH, A_STR, C_NAME, 0, 0},
    {"-xdev", K_XDEV, A_NONE, C_NAME, 0, 0},
    {"-mount", K_XDEV, A_NONE, C_NAME, 0, 0},
    {"-depth", K_DEPTH, A_NONE, C_NAME, 0, 0},
    {"-d", K_DEPTH, A_NONE, C_NAME, 0, 0},
    {"-regextype", K_REGEXTYPE, A_STR, C_NAME, 0, 0},
    {"-noleaf", K_NOOP, A_NONE, C_NAME, 0, 0},
    {"-nowarn", K_NOOP, A_NONE, C_NAME, 0, 0},
    {"-warn", K_NOOP, A_NONE, C_NAME, 0, 0},
    {"-ignore_readdir_race", K_NOOP, A_NONE, C_NAME, 0, 0},
    {"-noignore_readdir_race", K_NOOP, A_NONE, C_NAME, 0, 0},
};

static const struct pred *pred_find(const char *s)
{
	for (size_t i = 0; i < ARRAY_LEN(preds); i++)
		if (!strcmp(preds[i].name, s))
			return &preds[i];
	return NULL;
}

bool fx_starts_expr(const char *s)
{
	return !strcmp(s, "(") || !strcmp(s, "!") || !strcmp(s, "-not") || pred_find(s) != NULL;
}

struct parser {
	struct fx_expr *x;
	char **argv;
	int argc, i;
	int regextype; /* REG_EXTENDED or 0 (emacs and basic are translated) */
	bool emacs;
	bool dot_newline; /* emacs: '.' matches a newline (findutils-default) */
	int64_t re_budget_ms; /* what is left of the time the trial compiles may take together */
	bool depth_given;     /* -depth was written (not only implied by -delete) */
};

static int perr(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int perr(struct parser *p, const char *fmt, ...)
{
	if (!p->x->err[0]) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(p->x->err, sizeof(p->x->err), fmt, ap);
		va_end(ap);
	}
	return -1;
}

static struct fx_node *node_new(struct parser *p, int kind, const char *name)
{
	struct fx_expr *x = p->x;
	struct fx_node *n = xcalloc(1, sizeof(*n));
	n->kind = kind;
	n->name = name;
	if (x->nall == x->capall) {
		x->capall = x->capall ? 2 * x->capall : 32;
		x->all = xrealloc(x->all, x->capall * sizeof(*x->all));
	}
	x->all[x->nall++] = n;
	return n;
}

static struct fx_node *binary(struct parser *p, int kind, struct fx_node *l, struct fx_node *r)
{
	struct fx_node *n = node_new(p, kind, NULL);
	n->l = l;
	n->r = r;
	return n;
}

/* A decimal number of at most 2^63 - 1, nothing else. */
static bool parse_u64(const char *s, uint64_t *out)
{
	if (!isdigit((unsigned char)*s))
		return false;
	uint64_t v = 0;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s) || v > (UINT64_MAX / 2 - 9) / 10)
			return false;
		v = v * 10 + (*s - '0');
	}
	*out = v;
	return true;
}

/* The age of -mtime and friends: [+-]N with an optional fraction (1.5, .5, 2.), in units of unit
 * seconds, kept exactly to the nanosecond (truncated, as GNU find's). */
static bool parse_age(const char *s, struct fx_node *n)
{
	n->num.cmp = *s == '+' ? '>' : *s == '-' ? '<' : '=';
	s += n->num.cmp != '=';
	uint64_t whole = 0, frac = 0, scale = 1;
	const char *dot = strchr(s, '.');
	char buf[32];
	size_t wl = dot ? (size_t)(dot - s) : strlen(s);
	if (wl >= sizeof(buf) || (wl == 0 && (!dot || !dot[1])))
		return false;
	memcpy(buf, s, wl);
	buf[wl] = 0;
	if (wl && !parse_u64(buf, &whole))
		return false;
	for (const char *f = dot ? dot + 1 : ""; *f; f++) {
		if (!isdigit((unsigned char)*f))
			return false;
		if (scale < 1000000000000000000ULL) /* digits past 10^-18 of a unit change nothing */
			frac = frac * 10 + (uint64_t)(*f - '0'), scale *= 10;
	}
	__int128 ns = (__int128)whole * n->unit * 1000000000 + (__int128)frac * n->unit * 1000000000 / scale;
	n->age_ns = ns > ((__int128)1 << 100) ? ((__int128)1 << 100) : ns;
	return true;
}

static bool parse_num(const char *s, struct fx_num *n)
{
	n->cmp = *s == '+' ? '>' : *s == '-' ? '<' : '=';
	if (n->cmp != '=')
		s++;
	return parse_u64(s, &n->n);
}

/* -size N[cwbkMG]: units of 512 bytes by default. */
static bool parse_size_arg(const char *s, struct fx_node *n)
{
	char buf[64];
	size_t len = strlen(s);
	if (len == 0 || len >= sizeof(buf))
		return false;
	memcpy(buf, s, len + 1);
	n->unit = 512;
	const char *units = "cwbkMG";
	const uint64_t mult[] = {1, 2, 512, 1024, 1024 * 1024, 1024 * 1024 * 1024};
	const char *u = strchr(units, buf[len - 1]);
	if (u && buf[len - 1]) {
		n->unit = mult[u - units];
		buf[len - 1] = 0;
	}
	return parse_num(buf, &n->num);
}

/* Symbolic mode as chmod's, applied to 0: [ugoa]*[+=][rwxst]*, comma separated. */
static bool parse_symbolic(const char *s, uint64_t *mode)
{
	mode_t m = 0;
	while (*s) {
		mode_t who = 0;
		for (; strchr("ugoa", *s) && *s; s++)
			who |= *s == 'u' ? 04700 : *s == 'g' ? 02070 : *s == 'o' ? 01007 : 07777;
		if (!who)
			who = 07777;
		if (*s != '+' && *s != '=' && *s != '-')
			return false;
		char op = *s++;
		mode_t bits = 0;
		for (; *s && *s != ','; s++) {
			switch (*s) {
			case 'r': bits |= 0444; break;
			case 'w': bits |= 0222; break;
			case 'x': bits |= 0111; break;
			case 's': bits |= 06000; break;
			case 't': bits |= 01000; break;
			default: return false;
			}
		}
		bits &= who;
		if (op == '+')
			m |= bits;
		else if (op == '-')
			m &= ~bits;
		else
			m = (m & ~who) | bits;
		if (*s == ',')
			s++;
	}
	*mode = m;
	return true;
}

/* -perm MODE, -MODE (all these bits), /MODE (any of them); MODE octal or symbolic. */
static bool parse_perm(const char *s, struct fx_node *n)
{
	n->num.cmp = *s == '-' ? '<' : *s == '/' ? '>' : '=';
	if (n->num.cmp != '=')
		s++;
	if (!*s)
		return false;
	if (*s >= '0' && *s <= '7') {
		char *end;
		unsigned long v = strtoul(s, &end, 8);
		if (*end || v > 07777)
			return false;
		n->val = v;
		return true;
	}
	return parse_symbolic(s, &n->val);
}

static const struct {
	char c;
	unsigned char dt;
} type_map[] = {{'f', DT_REG}, {'d', DT_DIR}, {'l', DT_LNK}, {'p', DT_FIFO},
		{'s', DT_SOCK}, {'b', DT_BLK}, {'c', DT_CHR}};

static bool parse_type(const char *s, uint64_t *mask)
{
	*mask = 0;
	for (;;) {
		size_t i = 0;
		while (i < ARRAY_LEN(type_map) && type_map[i].c != *s)
			i++;
		if (!*s || i == ARRAY_LEN(type_map))
			return false;
		*mask |= 1u << type_map[i].dt;
		s++;
		if (!*s)
			return true;
		if (*s++ != ',')
			return false;
	}
}

/* Translate an emacs regular expression (find's default) into a POSIX extended one: \( \) \|
 * group and alternate in emacs, ( ) | are literal; so are { } and \{ \} (GNU's emacs syntax has no
 * intervals) and '[' in a bracket (nor classes: [[:alpha:]] is "[[:alph]" then "]"). With
 * dot_newline false, '.' matches any character but a newline, as in GNU find's emacs syntax (not
 * in its findutils-default). */
static void emacs_to_ere(const char *s, bool dot_newline, struct sbuf *b)
{
	bool bracket = false;
	for (; *s; s++) {
		if (bracket) {
			sbuf_adds(b, *s == '[' ? "[.[.]" : (char[]){*s, 0});
			if (*s == ']')
				bracket = false;
			continue;
		}
		if (*s == '[') {
			bracket = true;
			sbuf_addc(b, *s);
			if (s[1] == '^')
				sbuf_addc(b, *++s);
			if (s[1] == ']')
				sbuf_addc(b, *++s);
			continue;
		}
		if (*s == '\\' && s[1]) {
			s++;
			if (strchr("()|", *s))
				sbuf_addc(b, *s);
			else {
				sbuf_addc(b, '\\');
				sbuf_addc(b, *s);
			}
			continue;
		}
		if (*s == '.' && !dot_newline) {
			sbuf_adds(b, "[^\n]");
			continue;
		}
		if (strchr("()|{}", *s))
			sbuf_addc(b, '\\');
		sbuf_addc(b, *s);
	}
}

/* The most a regular expression's {m,n} repetitions may add to it, in elements. glibc's regcomp
 * copies a repeated element once per repetition and then needs memory and time that grow about
 * with the square of the copies: ((a|b)?){4096} takes 2.9 GiB and 19 s to compile, a{1,4096}
 * 130 MiB. Past this bound the expression is refused before regcomp sees it. */
#define RE_GROWTH_MAX 4096

/* The most repetition operators one element may carry in a row: a+? and a** mean something, a+?+?
 * nothing more, and glibc's time grows about tenfold with each ?+ pair (a?+?+?+?+?+?+?+?+: 2.7 s). */
#define RE_STACKED_MAX 3

/* Read a repetition bound "{m}", "{m,}", "{m,n}" or "{,n}" (the text after the opening brace) and
 * return the number of copies it makes, or 0 if the text is not a bound. *end is set past the
 * closing brace ("}" in extended syntax, "\}" in basic). */
static uint64_t re_bound(const char *s, bool ere, const char **end)
{
	uint64_t m = 0, n = 0;
	bool has_m = false, comma = false, has_n = false;
	for (; isdigit((unsigned char)*s); s++, has_m = true)
		m = m < 1000000 ? m * 10 + (uint64_t)(*s - '0') : m;
	if (*s == ',') {
		comma = true;
		for (s++; isdigit((unsigned char)*s); s++, has_n = true)
			n = n < 1000000 ? n * 10 + (uint64_t)(*s - '0') : n;
	}
	if (ere ? *s != '}' : (s[0] != '\\' || s[1] != '}'))
		return 0;
	if (!has_m && !has_n)
		return 0;
	*end = s + (ere ? 1 : 2);
	uint64_t k = has_n ? n : comma ? m + 1 : m; /* "{m,}" is m copies and a star */
	return k ? k : 1;
}

/* What a regular expression's shape says about its cost to compile. */
struct re_shape {
	uint64_t growth; /* elements its repetitions add once expanded (saturating) */
	int stacked;     /* the most repetition operators on one element in a row */
	bool nested;     /* a repetition applies to something that holds one */
};

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a || a + b > UINT64_MAX / 4 ? UINT64_MAX / 4 : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t k)
{
	return a != 0 && (a * k / a != k || a * k > UINT64_MAX / 4) ? UINT64_MAX / 4 : a * k;
}

/* Read the shape of a regular expression, ERE (ere) or BRE with GNU's \| \+ \? and \{ \}: each
 * group, bracket expression, escape or character is an element; a bound {k} makes k copies of the
 * element before it, a+ one copy (aa*), a* and a? none. */
static struct re_shape re_shape(const char *s, bool ere)
{
	struct frame {
		uint64_t size, last; /* elements so far; in the last element */
		bool last_rep, any_rep; /* the last element holds a repetition; any does */
	} *stack = xmalloc((strlen(s) + 1) * sizeof(*stack)), cur = {0};
	size_t depth = 0;
	uint64_t plain = 0; /* elements as written */
	struct re_shape r = {0};
	int run = 0;
	while (*s) {
		bool esc = s[0] == '\\' && s[1];
		char c = esc ? s[1] : s[0];
		bool special = esc == !ere; /* ( ) | { + ? are operators in this syntax */
		const char *next = s + (esc ? 2 : 1);
		uint64_t k = 0;
		plain++;
		if ((c == '*' && !esc) || ((c == '+' || c == '?') && special) ||
		    (c == '{' && special && (k = re_bound(next, ere, &next)) != 0)) {
			r.stacked = ++run > r.stacked ? run : r.stacked;
			r.nested |= cur.last_rep;
			cur.last_rep = cur.any_rep = true;
			uint64_t add = c == '{' ? sat_mul(cur.last, k - 1) : c == '+' ? cur.last + 1 : 1;
			cur.size = sat_add(cur.size, add);
			cur.last = c == '{' ? sat_mul(cur.last, k) : sat_add(cur.last, add);
			s = next;
			continue;
		}
		run = 0;
		if (c == '(' && special) {
			stack[depth++] = cur;
			cur = (struct frame){0};
			s = next;
			continue;
		}
		uint64_t atom = 1;
		bool rep = false;
		if (c == ')' && special && depth > 0) {
			atom = sat_add(cur.size, 1);
			rep = cur.any_rep;
			cur = stack[--depth];
		} else if (c == '|' && special) {
			cur.size = sat_add(cur.size, 1);
			cur.last = 0, cur.last_rep = false;
			s = next;
			continue;
		} else if (c == '[' && !esc) { /* to the closing ], past [:class:] [.x.] [=x=] */
			const char *t = s + 1;
			t += *t == '^';
			t += *t == ']';
			while (*t && *t != ']') {
				if (*t == '[' && (t[1] == ':' || t[1] == '.' || t[1] == '=')) {
					const char *q = strchr(t + 2, t[1]);
					while (q && q[1] != ']')
						q = strchr(q + 1, t[1]);
					t = q ? q + 2 : t + 1;
				} else
					t++;
			}
			next = *t ? t + 1 : t;
		}
		cur.size = sat_add(cur.size, atom);
		cur.last = atom;
		cur.last_rep = rep;
		cur.any_rep |= rep;
		s = next;
	}
	while (depth > 0) { /* unbalanced: regcomp will refuse it */
		struct frame inner = cur;
		cur = stack[--depth];
		cur.size = sat_add(cur.size, inner.size);
	}
	free(stack);
	r.growth = cur.size > plain ? cur.size - plain : 0;
	return r;
}

/* The time all of one expression's regular expressions may take to compile, and the memory one
 * may take. */
#define RE_TRIAL_MS 1000
#define RE_TRIAL_MEM ((rlim_t)1 << 30)

enum re_trial { RE_FINE, RE_SLOW, RE_BIG };

/* Sanitizers reserve terabytes of address space: no RLIMIT_AS under them. */
#if defined(__SANITIZE_ADDRESS__)
#define RE_NO_RLIMIT
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || __has_feature(thread_sanitizer)
#define RE_NO_RLIMIT
#endif
#endif

/* Compile a regular expression once in a child process held to *budget_ms of wall time (less
 * what it took is left in *budget_ms) and, outside sanitizer builds, RE_TRIAL_MEM of address
 * space. Some short expressions make glibc's regcomp run for minutes ((a?+?+){50}) and no static
 * rule foresees them all; the child is killed instead of the command hanging. When the trial
 * cannot be made (no fork), the expression is taken as fine. */
static enum re_trial re_trial(const char *re, int flags, int64_t *budget_ms)
{
	int64_t start = (int64_t)now_ns();
	pid_t pid = fork();
	if (pid < 0)
		return RE_FINE;
	if (pid == 0) {
#ifndef RE_NO_RLIMIT
		struct rlimit lim = {RE_TRIAL_MEM, RE_TRIAL_MEM};
		setrlimit(RLIMIT_AS, &lim);
#endif
		regex_t r;
		int rc = regcomp(&r, re, flags);
		_exit(rc == REG_ESPACE ? 2 : 0);
	}
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	int status = 0;
	pid_t got = 0;
	for (;;) {
		got = waitpid(pid, &status, WNOHANG);
		int64_t left = *budget_ms - ((int64_t)now_ns() - start) / 1000000;
		if (got != 0 || left <= 0)
			break;
		if (pidfd >= 0) {
			struct pollfd pfd = {.fd = pidfd, .events = POLLIN};
			poll(&pfd, 1, (int)(left < 1000 ? left : 1000));
		} else
			poll(NULL, 0, 1);
	}
	if (pidfd >= 0)
		close(pidfd);
	*budget_ms -= ((int64_t)now_ns() - start) / 1000000;
	if (got == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return RE_SLOW;
	}
	if (got > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 2)
		return RE_BIG;
	return RE_FINE;
}

static int compile_regex(struct parser *p, struct fx_node *n, bool icase)
{
	struct sbuf b = {0};
	int flags = icase ? REG_ICASE : 0;
	if (p->emacs) {
		emacs_to_ere(n->arg, p->dot_newline, &b);
		flags |= REG_EXTENDED;
	} else {
		sbuf_adds(&b, n->arg);
		flags |= p->regextype;
	}
	sbuf_addc(&b, 0);
	struct re_shape shape = re_shape(b.data, flags & REG_EXTENDED);
	if (shape.growth > RE_GROWTH_MAX) {
		sbuf_free(&b);
		return perr(p, "%s: regular expression '%s' is too large: its repetitions expand it by more "
			    "than %d elements", n->name, n->arg, RE_GROWTH_MAX);
	}
	if (shape.stacked > RE_STACKED_MAX) {
		sbuf_free(&b);
		return perr(p, "%s: regular expression '%s' has more than %d repetition operators in a row "
			    "(glibc takes minutes over some)", n->name, n->arg, RE_STACKED_MAX);
	}
	/* Without a repetition inside a repetition, what the shape allows compiles in well under a
	 * second; with one, the time cannot be told from the shape: try it. */
	enum re_trial t = shape.nested ? re_trial(b.data, flags, &p->re_budget_ms) : RE_FINE;
	if (t != RE_FINE) {
		sbuf_free(&b);
		if (t == RE_SLOW)
			return perr(p, "%s: regular expression '%s' takes too long to compile (over %d ms for "
				    "the expression's regular expressions together)", n->name, n->arg, RE_TRIAL_MS);
		return perr(p, "%s: regular expression '%s' needs more than %d MiB to compile", n->name,
			    n->arg, (int)(RE_TRIAL_MEM >> 20));
	}
	int rc = regcomp(&n->re, b.data, flags);
	sbuf_free(&b);
	if (rc != 0) {
		char msg[128];
		regerror(rc, &n->re, msg, sizeof(msg));
		return perr(p, "%s: invalid regular expression '%s': %s", n->name, n->arg, msg);
	}
	n->re_ok = true;
	return 0;
}

/* The output of a file action: one per distinct file name. */
static int file_dest(struct fx_expr *x, const char *file)
{
	for (size_t i = 0; i < x->nfiles; i++)
		if (!strcmp(x->files[i], file))
			return (int)i + 1;
	x->files = xrealloc(x->files, (x->nfiles + 1) * sizeof(*x->files));
	x->files[x->nfiles++] = (char *)file;
	return (int)x->nfiles;
}

static bool printf_ok(struct parser *p, struct fx_node *n);

static int depth_arg(struct parser *p, const char *name, const char *s, int *out)
{
	uint64_t v;
	if (!parse_u64(s, &v) || v > 1000000)
		return perr(p, "%s: '%s' is not a depth (a non-negative integer)", name, s);
	*out = (int)v;
	return 0;
}

static struct fx_node *parse_list(struct parser *p);

static const char *peek(struct parser *p) { return p->i < p->argc ? p->argv[p->i] : NULL; }

static struct fx_node *parse_primary(struct parser *p)
{
	const char *t = peek(p);
	if (!t) {
		perr(p, "expected an expression at the end");
		return NULL;
	}
	if (!strcmp(t, "(")) {
		p->i++;
		if (peek(p) && !strcmp(peek(p), ")")) {
			perr(p, "empty parentheses: '( )' holds no expression");
			return NULL;
		}
		struct fx_node *n = parse_list(p);
		if (!n)
			return NULL;
		if (!peek(p) || strcmp(peek(p), ")")) {
			perr(p, "'(' without ')'");
			return NULL;
		}
		p->i++;
		return n;
	}
	if (!strcmp(t, "!") || !strcmp(t, "-not")) {
		p->i++;
		if (!peek(p)) {
			perr(p, "%s: expected an expression after it", t);
			return NULL;
		}
		struct fx_node *c = parse_primary(p);
		if (!c)
			return NULL;
		struct fx_node *n = node_new(p, K_NOT, t);
		n->l = c;
		return n;
	}
	if (!strcmp(t, ")")) {
		perr(p, "')' without '('");
		return NULL;
	}
	if (!strcmp(t, "-o") || !strcmp(t, "-or") || !strcmp(t, "-a") || !strcmp(t, "-and") || !strcmp(t, ",")) {
		perr(p, "%s: expected an expression before it", t);
		return NULL;
	}
	const struct pred *pd = pred_find(t);
	if (!pd) {
		if (t[0] == '-')
			perr(p, "%s: unknown predicate", t);
		else
			perr(p, "'%s': paths must precede the expression", t);
		return NULL;
	}
	p->i++;
	struct fx_node *n = node_new(p, pd->kind, pd->name);
	if (pd->arg != A_NONE) {
		int need = pd->arg == A_TWO ? 2 : 1;
		if (p->i + need > p->argc) {
			perr(p, "%s: missing argument", t);
			return NULL;
		}
		n->arg = p->argv[p->i++];
		if (pd->arg == A_TWO) {
			n->dest = file_dest(p->x, n->arg);
			n->arg = p->argv[p->i++];
		}
	}
	struct fx_expr *x = p->x;
	x->stat_mask |= pd->mask;
	n->mask = pd->mask;
	switch (pd->kind) {
	case K_NAME:
	case K_INAME: /* a pattern with a '/' matches no name but "/" (as find's, which warns) */
	case K_PATH:
	case K_IPATH:
		glob_init(&n->glob, n->arg, pd->kind == K_INAME || pd->kind == K_IPATH);
		break;
	case K_REGEX:
	case K_IREGEX:
		if (compile_regex(p, n, pd->kind == K_IREGEX) != 0)
			return NULL;
		break;
	case K_TYPE:
	case K_XTYPE:
		if (!parse_type(n->arg, &n->val))
			perr(p, "%s: '%s' is not a type (f d l p s b c, or a comma list of them)", t, n->arg);
		break;
	case K_SIZE:
		if (!parse_size_arg(n->arg, n))
			perr(p, "%s: '%s' is not a size ([+-]N with an optional unit c w b k M G)", t, n->arg);
		break;
	case K_TIME:
		n->val = pd->which;
		n->unit = strstr(t, "min") ? 60 : 86400;
		if (!parse_age(n->arg, n))
			perr(p, "%s: '%s' is not a number ([+-]N, maybe with a fraction: 1.5)", t, n->arg);
		break;
	case K_UID:
	case K_GID:
	case K_LINKS:
	case K_INUM:
		if (!parse_num(n->arg, &n->num))
			perr(p, "%s: '%s' is not a number ([+-]N)", t, n->arg);
		break;
	case K_NEWER:
		n->val = pd->which;
		break;
	case K_PERM:
		if (!parse_perm(n->arg, n))
			perr(p, "%s: '%s' is not a mode (octal, or symbolic as chmod's; -MODE: all of these bits, "
				"/MODE: any of them)", t, n->arg);
		break;
	case K_PRINT:
		x->has_action = true;
		n->val = pd->which & 0xff;
		if (pd->which & 0x100)
			n->dest = file_dest(x, n->arg);
		else
			x->uses_stdout = true;
		break;
	case K_PRINTF:
		x->has_action = true;
		if (pd->arg != A_TWO)
			x->uses_stdout = true;
		if (!printf_ok(p, n))
			return NULL;
		break;
	case K_QUIT:
		x->has_action = true; /* as GNU find: -quit alone prints nothing */
		x->has_quit = true;
		break;
	case K_PRUNE: x->has_prune = true; break;
	case K_DELETE:
		x->has_action = true; /* as GNU find: -delete alone prints nothing */
		x->has_delete = true;
		break;
	case K_MAXDEPTH:
		if (depth_arg(p, t, n->arg, &x->maxdepth) != 0)
			return NULL;
		n->kind = K_TRUE;
		break;
	case K_MINDEPTH:
		if (depth_arg(p, t, n->arg, &x->mindepth) != 0)
			return NULL;
		n->kind = K_TRUE;
		break;
	case K_XDEV: x->xdev = true; n->kind = K_TRUE; break;
	case K_DEPTH: x->depth_first = p->depth_given = true; n->kind = K_TRUE; break;
	case K_NOOP: n->kind = K_TRUE; break;
	case K_REGEXTYPE:
		if (!strcmp(n->arg, "emacs") || !strcmp(n->arg, "findutils-default"))
			p->emacs = true, p->dot_newline = n->arg[0] == 'f';
		else if (!strcmp(n->arg, "posix-extended") || !strcmp(n->arg, "egrep"))
			p->emacs = false, p->regextype = REG_EXTENDED;
		else if (!strcmp(n->arg, "posix-basic") || !strcmp(n->arg, "grep") || !strcmp(n->arg, "sed") ||
			 !strcmp(n->arg, "ed"))
			p->emacs = false, p->regextype = 0;
		else
			perr(p, "%s: '%s' is not a regular expression type (emacs, posix-basic, posix-extended)", t,
			     n->arg);
		n->kind = K_TRUE;
		break;
	}
	return x->err[0] ? NULL : n;
}

/* Can the next token start another operand of an implied -a? */
static bool starts_operand(const char *t)
{
	return t && strcmp(t, ")") && strcmp(t, "-o") && strcmp(t, "-or") && strcmp(t, ",");
}

static struct fx_node *parse_and(struct parser *p)
{
	struct fx_node *l = parse_primary(p);
	while (l) {
		const char *t = peek(p);
		if (t && (!strcmp(t, "-a") || !strcmp(t, "-and"))) {
			p->i++;
			if (!starts_operand(peek(p)) || !strcmp(peek(p), "-a") || !strcmp(peek(p), "-and")) {
				perr(p, "%s: expected an expression after it", t);
				return NULL;
			}
		} else if (!starts_operand(t))
			break;
		struct fx_node *r = parse_primary(p);
		if (!r)
			return NULL;
		l = binary(p, K_AND, l, r);
	}
	return l;
}

static struct fx_node *parse_or(struct parser *p)
{
	struct fx_node *l = parse_and(p);
	while (l && peek(p) && (!strcmp(peek(p), "-o") || !strcmp(peek(p), "-or"))) {
		const char *t = p->argv[p->i++];
		if (!peek(p) || !starts_operand(peek(p))) {
			perr(p, "%s: expected an expression after it", t);
			return NULL;
		}
		struct fx_node *r = parse_and(p);
		if (!r)
			return NULL;
		l = binary(p, K_OR, l, r);
	}
	return l;
}

static struct fx_node *parse_list(struct parser *p)
{
	struct fx_node *l = parse_or(p);
	while (l && peek(p) && !strcmp(peek(p), ",")) {
		p->i++;
		if (!peek(p) || !starts_operand(peek(p))) {
			perr(p, ",: expected an expression after it");
			return NULL;
		}
		struct fx_node *r = parse_or(p);
		if (!r)
			return NULL;
		l = binary(p, K_COMMA, l, r);
	}
	return l;
}

static bool pure(const struct fx_node *n)
{
	switch (n->kind) {
	case K_AND:
	case K_OR:
	case K_COMMA: return pure(n->l) && pure(n->r);
	case K_NOT: return pure(n->l);
	case K_PRINT:
	case K_PRINTF:
	case K_QUIT:
	case K_DELETE:
	case K_PRUNE: return false;
	}
	return true;
}

static int cost(const struct fx_node *n)
{
	switch (n->kind) {
	case K_AND:
	case K_OR:
	case K_COMMA: {
		int a = cost(n->l), b = cost(n->r);
		return a > b ? a : b;
	}
	case K_NOT: return cost(n->l);
	}
	const struct pred *pd = pred_find(n->name);
	return pd ? pd->cost : C_NAME;
}

/* Cheap tests first where the order cannot change the result. */
static void reorder(struct fx_node *n)
{
	if (!n)
		return;
	reorder(n->l);
	reorder(n->r);
	if ((n->kind == K_AND || n->kind == K_OR) && pure(n->l) && pure(n->r) && cost(n->r) < cost(n->l)) {
		struct fx_node *t = n->l;
		n->l = n->r;
		n->r = t;
	}
}

int fx_parse(struct fx_expr *x, int argc, char **argv)
{
	struct parser p = {.x = x, .argv = argv, .argc = argc, .emacs = true, .re_budget_ms = RE_TRIAL_MS};
	x->maxdepth = -1;
	if (argc == 0)
		return 0;
	struct fx_node *n = parse_list(&p);
	if (!n)
		return -1;
	if (p.i < argc) {
		const char *t = argv[p.i];
		return perr(&p, !strcmp(t, ")") ? "')' without '('" : "'%s': unexpected here", t);
	}
	if (x->has_delete) {
		/* As GNU find: -delete works bottom-up, where -prune cannot keep anything out. */
		if (x->has_prune && !p.depth_given)
			return perr(&p, "-delete turns on -depth, and -prune does nothing under -depth; to carry "
					"on anyway, give -depth explicitly");
		x->depth_first = true;
	}
	reorder(n);
	x->root = n;
	return 0;
}

/* How -printf takes what follows a '%'. */
enum { PD_OK, PD_UNSUPPORTED, PD_RESERVED, PD_UNKNOWN };

static int printf_directive(const char *s)
{
	if (*s && strchr("TAC", *s))
		return s[1] == '@' ? PD_OK : PD_UNSUPPORTED;
	if (*s && strchr("%pPfhdsmMuUgGinylkb", *s))
		return PD_OK;
	/* GNU find's other directives, and its flags and widths (%-10p) */
	if (*s && strchr("aBcDFHStYZ-+ #0123456789.", *s))
		return PD_UNSUPPORTED;
	return *s && strchr("{[(", *s) ? PD_RESERVED : PD_UNKNOWN;
}

/* -printf's escapes: \a \b \f \n \r \t \v \\, \c and octal \NNN. */
static bool printf_escape_known(char c)
{
	return c && (strchr("abfnrtv\\c", c) || (c >= '0' && c <= '7'));
}

/* Check -printf's format: what myriad does not support is refused; an unknown escape or directive
 * is printed as written, with a warning (as GNU find does). */
static bool printf_ok(struct parser *p, struct fx_node *n)
{
	for (const char *s = n->arg; *s; s++) {
		if (*s == '\\') {
			if (!s[1]) {
				warnx_("warning: %s: escape '\\' followed by nothing at all", n->name);
				break;
			}
			s++;
			if (!printf_escape_known(*s))
				warnx_("warning: %s: unrecognized escape '\\%c'", n->name, *s);
			continue;
		}
		if (*s != '%')
			continue;
		s++;
		if (!*s)
			return perr(p, "%s: '%s' ends with a lone '%%'", n->name, n->arg), false;
		switch (printf_directive(s)) {
		case PD_UNKNOWN:
			warnx_("warning: %s: unrecognized format directive '%%%c'", n->name, *s);
			continue;
		case PD_RESERVED:
			return perr(p, "%s: the directive '%%%c' in '%s' is reserved for future use (as in GNU find)",
				    n->name, *s, n->arg), false;
		case PD_UNSUPPORTED:
			if (strchr("TAC", *s))
				return perr(p, "%s: only %%%c@ of the %%%c directives is supported, in '%s'", n->name, *s,
					    *s, n->arg), false;
			return perr(p, "%s: unsupported directive '%%%c' in '%s' (supported: %%p %%P %%f %%h %%d "
				       "%%s %%m %%M %%u %%U %%g %%G %%i %%n %%y %%l %%k %%b %%T@ %%A@ %%C@ %%%%; no "
				       "field widths or flags)", n->name, *s, n->arg), false;
		}
		if (strchr("TAC", *s))
			s++;
		unsigned m = 0;
		switch (*s) {
		case 'd': p->x->uses_depth = true; break;
		case 's': m = STATX_SIZE; break;
		case 'm': case 'M': m = STATX_MODE | STATX_TYPE; break;
		case 'u': case 'U': m = STATX_UID; break;
		case 'g': case 'G': m = STATX_GID; break;
		case 'n': m = STATX_NLINK; break;
		case 'k': case 'b': m = STATX_BLOCKS; break;
		case '@': m = s[-1] == 'T' ? STATX_MTIME : s[-1] == 'A' ? STATX_ATIME : STATX_CTIME; break;
		}
		p->x->stat_mask |= m;
		n->mask |= m;
	}
	return true;
}

static int resolve_node(struct fx_expr *x, struct fx_node *n)
{
	struct statx st;
	switch (n->kind) {
	case K_NEWER:
	case K_SAMEFILE:
		if (statx(AT_FDCWD, n->arg, AT_SYMLINK_NOFOLLOW, STATX_MTIME | STATX_INO, &st) != 0) {
			snprintf(x->err, sizeof(x->err), "%s: %s: %s", n->name, n->arg, strerror(errno));
			return -1;
		}
		n->ts.tv_sec = st.stx_mtime.tv_sec;
		n->ts.tv_nsec = st.stx_mtime.tv_nsec;
		if (n->kind == K_SAMEFILE) { /* -newer's val says which time */
			n->val = st.stx_ino;
			n->val2 = makedev(st.stx_dev_major, st.stx_dev_minor);
		}
		break;
	case K_USER: {
		struct passwd *pw = getpwnam(n->arg);
		uint64_t v;
		if (pw)
			n->val = pw->pw_uid;
		else if (parse_u64(n->arg, &v) && v <= UINT32_MAX)
			n->val = v;
		else {
			snprintf(x->err, sizeof(x->err), "%s: '%s' is not the name of a known user", n->name, n->arg);
			return -1;
		}
		break;
	}
	case K_GROUP: {
		struct group *gr = getgrnam(n->arg);
		uint64_t v;
		if (gr)
			n->val = gr->gr_gid;
		else if (parse_u64(n->arg, &v) && v <= UINT32_MAX)
			n->val = v;
		else {
			snprintf(x->err, sizeof(x->err), "%s: '%s' is not the name of a known group", n->name, n->arg);
			return -1;
		}
		break;
	}
	}
	return 0;
}

int fx_resolve(struct fx_expr *x, struct timespec now)
{
	x->now = now;
	for (size_t i = 0; i < x->nall; i++)
		if (resolve_node(x, x->all[i]) != 0)
			return -1;
	return 0;
}

/* What fx_resolve found, in node order: the origin, then each node's values. */
void fx_save(const struct fx_expr *x, struct sbuf *b)
{
	ser_u64(b, (uint64_t)x->now.tv_sec);
	ser_u64(b, (uint64_t)x->now.tv_nsec);
	ser_u64(b, x->nall);
	for (size_t i = 0; i < x->nall; i++) {
		const struct fx_node *n = x->all[i];
		ser_u64(b, n->val);
		ser_u64(b, n->val2);
		ser_u64(b, (uint64_t)n->ts.tv_sec);
		ser_u64(b, (uint64_t)n->ts.tv_nsec);
	}
}

bool fx_load(struct fx_expr *x, struct deser *d)
{
	x->now.tv_sec = (time_t)deser_u64(d);
	x->now.tv_nsec = (long)deser_u64(d);
	if (deser_u64(d) != x->nall)
		return false;
	for (size_t i = 0; i < x->nall && !d->bad; i++) {
		struct fx_node *n = x->all[i];
		n->val = deser_u64(d);
		n->val2 = deser_u64(d);
		n->ts.tv_sec = (time_t)deser_u64(d);
		n->ts.tv_nsec = (long)deser_u64(d);
	}
	return !d->bad && x->now.tv_nsec < 1000000000;
}

static bool cmp_num(const struct fx_num *n, uint64_t v)
{
	return n->cmp == '>' ? v > n->n : n->cmp == '<' ? v < n->n : v == n->n;
}

static const struct statx *need_stat(struct fx_ctx *c)
{
	const struct statx *st = c->stat(c);
	if (!st)
		c->failed = true;
	return st;
}

static struct statx_timestamp stx_time(const struct statx *st, int which)
{
	return which == 'a' ? st->stx_atime : which == 'c' ? st->stx_ctime : st->stx_mtime;
}

/* find's time tests, as GNU find's: -mtime N (days) means an age in [N, N+1) days, +N at least
 * N+1 days, -N less than N days; -mmin N (minutes) means an age in (N-1, N] minutes, +N more
 * than N minutes, -N less than N minutes; N may have a fraction. A time in the future has a
 * negative age. */
static bool time_test(const struct fx_expr *x, const struct fx_node *n, const struct statx *st)
{
	struct statx_timestamp t = stx_time(st, (int)n->val);
	__int128 age = ((__int128)x->now.tv_sec - t.tv_sec) * 1000000000 + (x->now.tv_nsec - (long)t.tv_nsec);
	__int128 k = n->age_ns, u = (__int128)n->unit * 1000000000;
	if (n->num.cmp == '<')
		return age < k;
	if (n->unit == 86400)
		return n->num.cmp == '>' ? age >= k + u : age >= k && age < k + u;
	return n->num.cmp == '>' ? age > k : age > k - u && age <= k;
}

static bool ts_after(struct statx_timestamp t, struct timespec ref)
{
	return t.tv_sec > ref.tv_sec || (t.tv_sec == ref.tv_sec && (long)t.tv_nsec > ref.tv_nsec);
}

/* A few recent answers of the user and group databases, per thread. */
#define ID_CACHE 8
struct id_cache {
	uint32_t id[ID_CACHE];
	bool known[ID_CACHE];
	char name[ID_CACHE][64];
	unsigned n, next;
};
static __thread struct id_cache users, groups;

/* The name of uid (user) or gid, or NULL when there is none. */
static const char *id_name(bool user, uint32_t id)
{
	struct id_cache *c = user ? &users : &groups;
	for (unsigned i = 0; i < c->n; i++)
		if (c->id[i] == id)
			return c->known[i] ? c->name[i] : NULL;
	unsigned slot = c->next++ % ID_CACHE;
	if (c->n < ID_CACHE)
		c->n++;
	char buf[4096];
	c->id[slot] = id;
	c->known[slot] = false;
	if (user) {
		struct passwd pw, *r = NULL;
		if (getpwuid_r(id, &pw, buf, sizeof(buf), &r) == 0 && r) {
			snprintf(c->name[slot], sizeof(c->name[slot]), "%s", r->pw_name);
			c->known[slot] = true;
		}
	} else {
		struct group gr, *r = NULL;
		if (getgrgid_r(id, &gr, buf, sizeof(buf), &r) == 0 && r) {
			snprintf(c->name[slot], sizeof(c->name[slot]), "%s", r->gr_name);
			c->known[slot] = true;
		}
	}
	return c->known[slot] ? c->name[slot] : NULL;
}

/* The name -name matches: an operand's last component (trailing slashes dropped; "/" stays). */
static const char *base_name(const struct fx_ctx *c, size_t *len, char *tmp, size_t tmpsize)
{
	if (!c->operand) {
		*len = c->namelen;
		return c->name;
	}
	size_t n = c->namelen;
	while (n > 1 && c->name[n - 1] == '/')
		n--;
	const char *s = c->name, *slash = memrchr(s, '/', n);
	if (slash && n > 1) {
		s = slash + 1;
		n -= s - c->name;
	}
	if (n >= tmpsize)
		n = tmpsize - 1;
	memcpy(tmp, s, n);
	tmp[n] = 0;
	*len = n;
	return tmp;
}

static bool match_name(const struct fx_ctx *c, const struct glob *g)
{
	char tmp[4096];
	size_t len;
	const char *name = base_name(c, &len, tmp, sizeof(tmp));
	if (name[len]) { /* not terminated: copy */
		if (len >= sizeof(tmp))
			len = sizeof(tmp) - 1;
		memcpy(tmp, name, len);
		tmp[len] = 0;
		name = tmp;
	}
	return glob_match(g, name, len);
}

static char type_letter(unsigned char dt)
{
	for (size_t i = 0; i < ARRAY_LEN(type_map); i++)
		if (type_map[i].dt == dt)
			return type_map[i].c;
	return 'U';
}

static void add_mode_string(struct sbuf *b, unsigned char dt, unsigned mode)
{
	char s[11];
	char t = type_letter(dt);
	s[0] = t == 'f' ? '-' : t == 'U' ? '?' : t;
	const char *rwx = "rwxrwxrwx";
	for (int i = 0; i < 9; i++)
		s[1 + i] = mode & (0400 >> i) ? rwx[i] : '-';
	if (mode & S_ISUID)
		s[3] = mode & 0100 ? 's' : 'S';
	if (mode & S_ISGID)
		s[6] = mode & 0010 ? 's' : 'S';
	if (mode & S_ISVTX)
		s[9] = mode & 0001 ? 't' : 'T';
	s[10] = 0;
	sbuf_add(b, s, 10);
}

static void add_time(struct sbuf *b, struct statx_timestamp t)
{
	sbuf_printf(b, "%lld.%09u0", (long long)t.tv_sec, t.tv_nsec);
}

/* %f, as GNU find's (gnulib's base_name): the last component and one slash if any follow it ("d//":
 * "d/"); "/" when there are only slashes. */
static void add_base(struct sbuf *b, const char *p, size_t n)
{
	size_t i = 0, base;
	while (i < n && p[i] == '/')
		i++;
	if (i == n) {
		sbuf_add(b, p, n ? 1 : 0);
		return;
	}
	base = i;
	for (; i < n; i++)
		if (p[i] != '/' && p[i - 1] == '/')
			base = i;
	const char *slash = memchr(p + base, '/', n - base);
	size_t end = slash ? (size_t)(slash - p) + 1 : n;
	sbuf_add(b, p + base, end - base);
}

/* %h, as GNU find's: what precedes the last slash before the trailing ones ("d/sub/": "d"), or
 * when there is none, the last slash ("d//": "d/", "/": ""); "." without a slash. */
static void add_dir(struct sbuf *b, const char *p, size_t n)
{
	size_t m = n;
	while (m > 0 && p[m - 1] == '/')
		m--;
	const char *slash = memrchr(p, '/', m);
	if (!slash)
		slash = memrchr(p, '/', n);
	if (slash)
		sbuf_add(b, p, (size_t)(slash - p));
	else
		sbuf_addc(b, '.');
}

/* -printf: returns false when the entry could not be looked at (the output is then dropped). */
static bool do_printf(const struct fx_node *n, struct fx_ctx *c)
{
	struct sbuf *b = &c->out[n->dest];
	size_t start = b->len;
	const struct statx *st;
	for (const char *s = n->arg; *s; s++) {
		if (*s == '\\') {
			s++;
			const char *esc = "abfnrtv\\", *val = "\a\b\f\n\r\t\v\\";
			const char *e = *s ? strchr(esc, *s) : NULL;
			if (!printf_escape_known(*s)) { /* as written (warned when parsed) */
				sbuf_addc(b, '\\');
				if (!*s)
					break;
				sbuf_addc(b, *s);
			} else if (e) {
				sbuf_addc(b, val[e - esc]);
			} else if (*s == 'c') {
				return true; /* \c: stop, and flush */
			} else if (*s >= '0' && *s <= '7') {
				unsigned v = 0;
				for (int k = 0; k < 3 && *s >= '0' && *s <= '7'; k++, s++)
					v = v * 8 + (*s - '0');
				s--;
				sbuf_addc(b, (char)v);
			}
			continue;
		}
		if (*s != '%') {
			sbuf_addc(b, *s);
			continue;
		}
		s++;
		if (printf_directive(s) != PD_OK) { /* unknown: as written (warned when parsed) */
			sbuf_addc(b, '%');
			sbuf_addc(b, *s);
			continue;
		}
		size_t len, rel;
		const char *path;
		switch (*s) {
		case '%': sbuf_addc(b, '%'); break;
		case 'p':
			path = c->path(c, &len, &rel);
			sbuf_add(b, path, len);
			break;
		case 'P':
			path = c->path(c, &len, &rel);
			sbuf_add(b, path + rel, len - rel);
			break;
		case 'f':
			if (c->operand) {
				path = c->path(c, &len, &rel);
				add_base(b, path, len);
			} else
				sbuf_add(b, c->name, c->namelen);
			break;
		case 'h':
			path = c->path(c, &len, &rel);
			add_dir(b, path, len);
			break;
		case 'd': sbuf_printf(b, "%d", c->depth); break;
		case 'i': sbuf_printf(b, "%llu", (unsigned long long)c->ino); break;
		case 'y': sbuf_addc(b, type_letter(c->type)); break;
		case 'l':
			if (c->type == DT_LNK && c->readlink(c, b) != 0)
				goto fail;
			break;
		default:
			if (!(st = need_stat(c)))
				goto fail;
			switch (*s) {
			case 's': sbuf_printf(b, "%llu", (unsigned long long)st->stx_size); break;
			case 'm': sbuf_printf(b, "%o", st->stx_mode & 07777); break;
			case 'M': add_mode_string(b, c->type, st->stx_mode & 07777); break;
			case 'U': sbuf_printf(b, "%u", st->stx_uid); break;
			case 'G': sbuf_printf(b, "%u", st->stx_gid); break;
			case 'u':
			case 'g': {
				bool u = *s == 'u';
				const char *nm = id_name(u, u ? st->stx_uid : st->stx_gid);
				if (nm)
					sbuf_adds(b, nm);
				else
					sbuf_printf(b, "%u", u ? st->stx_uid : st->stx_gid);
				break;
			}
			case 'n': sbuf_printf(b, "%u", st->stx_nlink); break;
			case 'k': sbuf_printf(b, "%llu", (unsigned long long)(st->stx_blocks + 1) / 2); break;
			case 'b': sbuf_printf(b, "%llu", (unsigned long long)st->stx_blocks); break;
			case 'T': add_time(b, st->stx_mtime); s++; break;
			case 'A': add_time(b, st->stx_atime); s++; break;
			case 'C': add_time(b, st->stx_ctime); s++; break;
			}
		}
	}
	return true;
fail:
	b->len = start;
	return false;
}

static bool eval(const struct fx_expr *x, const struct fx_node *n, struct fx_ctx *c)
{
	const struct statx *st;
	size_t len, rel;
	const char *path;
	switch (n->kind) {
	case K_AND: return eval(x, n->l, c) && !c->failed && eval(x, n->r, c);
	case K_OR: return (eval(x, n->l, c) || (!c->failed && eval(x, n->r, c))) && !c->failed;
	case K_COMMA: eval(x, n->l, c); return !c->failed && eval(x, n->r, c);
	case K_NOT: return !eval(x, n->l, c) && !c->failed;
	case K_TRUE: return true;
	case K_FALSE: return false;
	case K_NAME:
	case K_INAME: return match_name(c, &n->glob);
	case K_PATH:
	case K_IPATH:
		path = c->path(c, &len, &rel);
		return glob_match(&n->glob, path, len);
	case K_REGEX:
	case K_IREGEX: {
		/* The whole path must match (find anchors -regex at both ends). */
		path = c->path(c, &len, &rel);
		regmatch_t m;
		return regexec(&n->re, path, 1, &m, 0) == 0 && m.rm_so == 0 && (size_t)m.rm_eo == len;
	}
	case K_TYPE: return c->type < 64 && (n->val >> c->type & 1);
	case K_XTYPE: {
		unsigned char t = c->type == DT_LNK && c->target_type ? c->target_type(c) : c->type;
		return !c->failed && t < 64 && (n->val >> t & 1);
	}
	case K_INUM: return cmp_num(&n->num, c->ino);
	case K_PRUNE:
		if (!x->depth_first)
			c->prune = true;
		return true;
	case K_QUIT:
		c->quit = true;
		return true;
	case K_DELETE: return c->remove && c->remove(c);
	case K_PRINT:
		path = c->path(c, &len, &rel);
		sbuf_add(&c->out[n->dest], path, len);
		sbuf_addc(&c->out[n->dest], (char)n->val);
		return true;
	case K_PRINTF: return do_printf(n, c);
	case K_EMPTY:
		if (c->type == DT_DIR) {
			int e = c->dir_empty(c);
			if (e < 0)
				c->failed = true;
			return e == 1;
		}
		if (c->type != DT_REG)
			return false;
		if (!(st = need_stat(c)))
			return false;
		return st->stx_size == 0;
	}
	if (!(st = need_stat(c)))
		return false;
	switch (n->kind) {
	case K_SIZE: {
		uint64_t units = st->stx_size / n->unit + (st->stx_size % n->unit != 0);
		return cmp_num(&n->num, units);
	}
	case K_TIME: return time_test(x, n, st);
	case K_NEWER: return ts_after(stx_time(st, (int)n->val), n->ts);
	case K_USER: return st->stx_uid == n->val;
	case K_GROUP: return st->stx_gid == n->val;
	case K_UID: return cmp_num(&n->num, st->stx_uid);
	case K_GID: return cmp_num(&n->num, st->stx_gid);
	case K_NOUSER: return id_name(true, st->stx_uid) == NULL;
	case K_NOGROUP: return id_name(false, st->stx_gid) == NULL;
	case K_LINKS: return cmp_num(&n->num, st->stx_nlink);
	case K_SAMEFILE:
		return st->stx_ino == n->val && makedev(st->stx_dev_major, st->stx_dev_minor) == n->val2;
	case K_PERM: {
		uint64_t m = st->stx_mode & 07777;
		if (n->num.cmp == '<')
			return (m & n->val) == n->val;
		if (n->num.cmp == '>')
			return n->val == 0 || (m & n->val) != 0;
		return m == n->val;
	}
	}
	return false;
}

bool fx_stats_every_entry(const struct fx_expr *x)
{
	const struct fx_node *n = x->root;
	while (n && (n->kind == K_AND || n->kind == K_OR || n->kind == K_COMMA || n->kind == K_NOT))
		n = n->l;
	/* -empty stats files only; with no expression nothing is statted */
	return n && n->mask && n->kind != K_EMPTY;
}

bool fx_eval(const struct fx_expr *x, struct fx_ctx *c)
{
	if (!x->root) {
		size_t len, rel;
		const char *path = c->path(c, &len, &rel);
		sbuf_add(&c->out[0], path, len);
		sbuf_addc(&c->out[0], '\n');
		return true;
	}
	bool r = eval(x, x->root, c);
	if (!x->has_action && r && !c->failed) {
		size_t len, rel;
		const char *path = c->path(c, &len, &rel);
		sbuf_add(&c->out[0], path, len);
		sbuf_addc(&c->out[0], '\n');
	}
	return r && !c->failed;
}

void fx_free(struct fx_expr *x)
{
	for (size_t i = 0; i < x->nall; i++) {
		if (x->all[i]->re_ok)
			regfree(&x->all[i]->re);
		glob_free(&x->all[i]->glob);
		free(x->all[i]);
	}
	free(x->all);
	free(x->files);
	x->all = NULL;
	x->files = NULL;
	x->nall = x->nfiles = 0;
	x->root = NULL;
}
