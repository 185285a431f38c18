/*
 * lifecycle_check: the checker phases of a cycle, with the checker's memory known before it runs
 * (issue 15: e2fsck needed 10 GB and xfs_repair 30 GB at 10^9 files). The peak is predicted from
 * the smaller cycles (lifecycle_fit), the limit is --checker-mem or MemAvailable at that moment,
 * and when the prediction exceeds it the checker runs with the limit it offers (xfs_repair -m,
 * e2fsck's scratch files on disk) or not at all ("does not fit"); it always runs contained in a
 * memory-limited cgroup (lc_run_contained) so the OOM killer can only take the checker.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/lifecycle/lifecycle.h"
#include "cmd/lifecycle/lifecycle_record.h"
#include "util/atomic.h"
#include "util/sbuf.h"
#include "util/util.h"

/* The limit now (KiB): --checker-mem, else MemAvailable (NAN when /proc/meminfo does not say). */
static double limit_now(const struct lc *x, const char **from)
{
	if (x->checker_mem) {
		*from = "--checker-mem";
		return (double)x->checker_mem / 1024;
	}
	*from = "MemAvailable";
	return meminfo_kib("MemAvailable");
}

bool lc_check_minmem(struct lc *x, struct lc_cycle *c, char *checker)
{
	/* With a 1 MB cap xfs_repair refuses and states the memory it needs: it stays small, so it
	 * runs as it is. */
	char *mav2[] = {checker, "-n", "-m", "1", x->dev, NULL};
	lc_run_phase(x, c, PH_CHECK_MINMEM, mav2, NULL, 1);
	struct lc_phase *p = &c->ph[PH_CHECK_MINMEM];
	char log[4400], line[1024];
	lc_log_path(x, c, PH_CHECK_MINMEM, log, sizeof(log), "log");
	FILE *f = fopen(log, "r");
	double mb = NAN;
	while (f && fgets(line, sizeof(line), f)) {
		char *a = strstr(line, "at least ");
		if (a && isdigit((unsigned char)a[9]))
			mb = atof(a + 9);
	}
	if (f)
		fclose(f);
	if (isfinite(mb)) {
		p->min_mem_kib = mb * 1024;
		p->status = LC_OK;
		free(p->error);
		p->error = NULL;
	} else if (p->status == LC_OK) {
		p->status = LC_FAILED;
		p->error = xstrdup("xfs_repair did not state a minimum");
		x->failed = true;
	}
	return p->status == LC_OK;
}

/* "1.5 GiB" of a KiB count. */
static char *kib_str(char *b, double kib) { return fmt_bytes(b, (uint64_t)(kib * 1024)); }

/* e2fsck's scratch files: a directory under --image-dir (recorded as "scratch", so that after a
 * kill -9 the next run removes it with the files e2fsck left) and the config that names it in
 * --out, E2FSCK_CONFIG set for the child. Its identity in *id. false when it cannot be had. */
static bool scratch_start(struct lc *x, struct lc_cycle *c, char *dir, size_t n, char *conf, size_t cn,
			  struct stat *id)
{
	if (lc_make_recorded(x, "scratch", "scratch", c->fs, c->files, dir, n) != 0 || lstat(dir, id) != 0) {
		warnx_("%s: %s", dir, strerror(errno));
		return false;
	}
	snprintf(conf, cn, "%s/e2fsck-scratch.conf", x->out);
	struct sbuf b = {0};
	sbuf_printf(&b, "# written by myriad lifecycle for one e2fsck run: its tables go to files on disk\n"
			"[scratch_files]\n\tdirectory = %s\n",
		    dir);
	bool ok = atomic_write_file(conf, b.data, b.len) == 0;
	sbuf_free(&b);
	if (!ok) {
		warnx_("%s: %s", conf, strerror(errno));
		rmdir(dir);
		return false;
	}
	setenv("E2FSCK_CONFIG", conf, 1);
	return true;
}

/* The scratch files e2fsck left (killed, it leaves them), the directory and the config. */
static void scratch_end(const char *dir, const struct stat *id, const char *conf)
{
	int files;
	unsetenv("E2FSCK_CONFIG");
	if (lc_scratch_remove(dir, id->st_dev, id->st_ino, &files) != 0)
		warnx_("cannot remove %s: %s", dir, strerror(errno));
	unlink(conf);
}

/* The plan: prediction, limit, how. A skip is recorded (not printed: the caller prints). */
static const char *plan(struct lc *x, struct lc_cycle *c, const struct fs_kind *k)
{
	struct lc_phase *p = &c->ph[PH_CHECK];
	struct lc_memplan *m = &p->mem;
	free(m->outcome);
	*m = (struct lc_memplan){.set = true, .contained = "none"};
	m->limit_kib = limit_now(x, &m->limit_from);
	if (!lc_mem_predict(x->res, k->name, c->files, &m->predicted_kib))
		m->predicted_kib = NAN;
	double stated = !strcmp(k->checker, "xfs_repair") ? c->ph[PH_CHECK_MINMEM].min_mem_kib : NAN;
	m->how = lc_mem_plan(k->checker, m->predicted_kib, stated, m->limit_kib);
	if (!strcmp(m->how, "skipped")) {
		char a[32], b[32];
		double need = stated > m->limit_kib ? stated : m->predicted_kib;
		struct sbuf e = {0};
		sbuf_printf(&e, "does not fit: needs about %s, machine has %s (%s)", kib_str(a, need),
			    kib_str(b, m->limit_kib), m->limit_from);
		sbuf_addc(&e, 0);
		m->outcome = xstrdup(e.data);
		p->status = LC_SKIPPED;
		free(p->error);
		p->error = e.data;
	}
	return m->how;
}

bool lc_check(struct lc *x, struct lc_cycle *c, const struct fs_kind *k, char *checker)
{
	const char *how = plan(x, c, k);
	struct lc_memplan *m = &c->ph[PH_CHECK].mem;
	if (!strcmp(how, "skipped")) {
		lc_save(x);
		return false;
	}
	char *cav[8], mib[32], dir[4200], conf[4400];
	int cn = 0;
	cav[cn++] = checker;
	if (!strcmp(k->checker, "e2fsck")) {
		cav[cn++] = "-fn";
	} else if (!strcmp(k->checker, "xfs_repair")) {
		cav[cn++] = "-n";
		if (!strcmp(how, "-m")) {
			snprintf(mib, sizeof(mib), "%.0f", floor(m->limit_kib / 1024) > 1 ? floor(m->limit_kib / 1024) : 1);
			cav[cn++] = "-m";
			cav[cn++] = mib;
		}
	} else {
		cav[cn++] = "check";
		cav[cn++] = "--readonly";
	}
	cav[cn++] = x->dev;
	cav[cn] = NULL;
	struct stat id;
	bool scratch = !strcmp(how, "scratch_files") && scratch_start(x, c, dir, sizeof(dir), conf, sizeof(conf), &id);
	if (!strcmp(how, "scratch_files") && !scratch)
		m->how = "none";
	bool ok = lc_run_contained(x, c, PH_CHECK, cav, -1, m->limit_kib);
	if (scratch)
		scratch_end(dir, &id, conf);
	if (!m->outcome)
		m->outcome = xstrdup(ok ? "ok" : "failed");
	return ok;
}
