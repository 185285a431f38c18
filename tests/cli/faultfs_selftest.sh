#!/usr/bin/env bash
# Self-test of build/faultfs, the fault-injecting FUSE filesystem the other tests use:
# passthrough behaviour, each rule action and modifier, --dt-unknown, directory offsets
# (seek to a saved d_off and continue), --stats, ownership for unprivileged callers,
# long paths and command-line errors. Needs root and /dev/fuse; skips otherwise.
# Run: make build/faultfs && bash tests/cli/faultfs_selftest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

if ! is_root; then skip "needs root (faultfs mounts with allow_other)"; exit 0; fi
if [ ! -c /dev/fuse ]; then skip "no /dev/fuse"; exit 0; fi
if ! command -v fusermount3 >/dev/null; then skip "fusermount3 not installed"; exit 0; fi
if [ ! -x "$FAULTFS" ]; then fail "faultfs not built: $FAULTFS (run make build/faultfs)"; exit 1; fi

S=$(scratch)
# scratch's own on_exit ran in the $(...) subshell and is lost; register the removal here,
# before any mount, so that it runs after every unmount
on_exit "rm -rf '$S'"
chmod 755 "$S"   # the unprivileged case needs to reach mount points inside

# ---------------------------------------------------------------------------------------
# A small C helper for what the shell cannot do: raw getdents64 with d_off/d_type/d_ino,
# seeking a directory fd, xattrs, renameat2 flags.
PROBE=$S/probe
cat >"$S/probe.c" <<'EOF'
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

struct ent { char *name; int64_t off; unsigned type; uint64_t ino; };
struct d64 { uint64_t ino; int64_t off; unsigned short reclen; unsigned char type; char name[]; };

/* Append every entry getdents64 gives from the fd's position on; 0 or -errno. */
static int readall(int fd, size_t bufsz, struct ent **v, size_t *n)
{
	char *buf = malloc(bufsz);
	size_t cap = *n;
	for (;;) {
		long r = syscall(SYS_getdents64, fd, buf, bufsz);
		if (r < 0) { int e = errno; free(buf); return -e; }
		if (r == 0) break;
		for (long p = 0; p < r;) {
			struct d64 *d = (struct d64 *)(buf + p);
			if (*n == cap) { cap = cap ? 2 * cap : 64; *v = realloc(*v, cap * sizeof **v); }
			(*v)[*n].name = strdup(d->name);
			(*v)[*n].off = d->off;
			(*v)[*n].type = d->type;
			(*v)[*n].ino = d->ino;
			(*n)++;
			p += d->reclen;
		}
	}
	free(buf);
	return 0;
}

static int opendirfd(const char *p)
{
	int fd = open(p, O_RDONLY | O_DIRECTORY);
	if (fd < 0) { perror(p); exit(2); }
	return fd;
}

/* After seeking FD to all[k].off, the rest must be exactly all[k+1..]. */
static int check_rest(int fd, struct ent *all, size_t n, size_t k, const char *how)
{
	struct ent *v = NULL;
	size_t m = 0;
	int r;
	if (lseek(fd, all[k].off, SEEK_SET) != all[k].off) {
		printf("%s: lseek to d_off of entry %zu failed: %s\n", how, k, strerror(errno));
		return 1;
	}
	if ((r = readall(fd, 512, &v, &m)) < 0) {
		printf("%s: getdents64 after seek: %s\n", how, strerror(-r));
		return 1;
	}
	if (m != n - k - 1) {
		printf("%s: resuming after entry %zu of %zu gave %zu entries, want %zu\n", how, k, n, m, n - k - 1);
		return 1;
	}
	for (size_t i = 0; i < m; i++)
		if (strcmp(v[i].name, all[k + 1 + i].name) != 0) {
			printf("%s: resuming after entry %zu: got %s at %zu, want %s\n", how, k, v[i].name, i, all[k + 1 + i].name);
			return 1;
		}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "list") == 0) {
		struct ent *v = NULL;
		size_t n = 0;
		int fd = opendirfd(argv[2]), r = readall(fd, 4096, &v, &n);
		if (r < 0) { fprintf(stderr, "getdents64: %s\n", strerror(-r)); return 1; }
		for (size_t i = 0; i < n; i++)
			printf("%s %u %llu\n", v[i].name, v[i].type, (unsigned long long)v[i].ino);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "resume") == 0) {
		struct ent *all = NULL;
		size_t n = 0, ks[8];
		int fd = opendirfd(argv[2]), bad = 0, r = readall(fd, 512, &all, &n);
		if (r < 0) { printf("getdents64: %s\n", strerror(-r)); return 1; }
		if (n < 10) { printf("only %zu entries\n", n); return 1; }
		ks[0] = 0; ks[1] = 1; ks[2] = n / 3; ks[3] = n / 2; ks[4] = n - 2; ks[5] = n - 1;
		for (int i = 0; i < 6 && !bad; i++) {
			int fd2 = opendirfd(argv[2]);
			bad |= check_rest(fd2, all, n, ks[i], "new fd");
			close(fd2);
			bad |= check_rest(fd, all, n, ks[i], "same fd");
		}
		if (!bad) {   /* rewind gives everything again */
			struct ent *v = NULL;
			size_t m = 0;
			lseek(fd, 0, SEEK_SET);
			if (readall(fd, 32768, &v, &m) < 0 || m != n) {
				printf("rewind gave %zu entries, want %zu\n", m, n);
				bad = 1;
			}
		}
		if (!bad)
			printf("ok %zu\n", n);
		return bad;
	}
	if (argc == 5 && strcmp(argv[1], "setx") == 0)
		return lsetxattr(argv[2], argv[3], argv[4], strlen(argv[4]), 0) ? perror("setxattr"), 1 : 0;
	if (argc == 4 && strcmp(argv[1], "getx") == 0) {
		char buf[4096];
		ssize_t n = lgetxattr(argv[2], argv[3], buf, sizeof buf);
		if (n < 0) { perror("getxattr"); return 1; }
		printf("%.*s\n", (int)n, buf);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "listx") == 0) {
		char buf[4096];
		ssize_t n = llistxattr(argv[2], buf, sizeof buf);
		if (n < 0) { perror("listxattr"); return 1; }
		for (ssize_t p = 0; p < n; p += (ssize_t)strlen(buf + p) + 1)
			printf("%s\n", buf + p);
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "rmx") == 0)
		return lremovexattr(argv[2], argv[3]) ? perror("removexattr"), 1 : 0;
	if (argc == 5 && strcmp(argv[1], "rename2") == 0) {
		unsigned flags = strcmp(argv[2], "exchange") == 0 ? RENAME_EXCHANGE : RENAME_NOREPLACE;
		if (renameat2(AT_FDCWD, argv[3], AT_FDCWD, argv[4], flags) != 0) {
			printf("%s\n", strerror(errno));
			return 1;
		}
		printf("ok\n");
		return 0;
	}
	fprintf(stderr, "usage: probe list|resume DIR | setx P N V | getx P N | listx P | rmx P N | rename2 exchange|noreplace A B\n");
	return 2;
}
EOF
HAVE_PROBE=0
if command -v cc >/dev/null && cc -std=gnu11 -O1 -o "$PROBE" "$S/probe.c" 2>"$S/probe.err"; then
	HAVE_PROBE=1
fi

# ---------------------------------------------------------------------------------------
# Helpers. ff_mount NAME [faultfs options...] mounts $S/NAME.b on $S/NAME.m and sets
# B (backing), M (mount point), ST (stats file), PF (pid file) for that mount.
MOUNTS=()
ff_mount() {
	local name=$1; shift
	B=$S/$name.b M=$S/$name.m ST=$S/$name.stats PF=$S/$name.pid
	mkdir -p "$B"
	mount_faultfs "$B" "$M" --stats "$ST" --pidfile "$PF" "$@" 2>"$S/$name.mount.err" || return 1
	MOUNTS+=("$M")
	[ -s "$PF" ]
}
ff_pid() { cat "$PF"; }

# wait_gone FILE [TENTHS]: wait until FILE does not exist.
wait_gone() {
	local i
	for ((i = 0; i < ${2:-50}; i++)); do [ -e "$1" ] || return 0; sleep 0.1; done
	return 1
}
wait_exists() {
	local i
	for ((i = 0; i < ${2:-50}; i++)); do [ -e "$1" ] && return 0; sleep 0.1; done
	return 1
}
# wait_pid PID [TENTHS]: wait until process PID is gone.
wait_pid() {
	local i
	for ((i = 0; i < ${2:-50}; i++)); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
	return 1
}

# snapshot: have the current mount write its stats now.
snapshot() {
	rm -f "$ST"
	kill -USR1 "$(ff_pid)" && wait_exists "$ST"
}
# ff_umount: unmount the current mount and wait for faultfs to exit (stats final).
ff_umount() {
	fusermount3 -u "$M" 2>/dev/null || return 1
	wait_gone "$PF"
}
# wait_op OP: wait until the current mount has seen OP at least once.
wait_op() {
	local i
	for ((i = 0; i < 50; i++)); do
		snapshot && [ "$(count_of "$1")" -gt 0 ] && return 0
		sleep 0.1
	done
	return 1
}
count_of() { awk -v op="$1" 'NF == 2 && $1 == op { print $2; f = 1 } END { if (!f) print 0 }' "$ST"; }
fail_of() { awk -v op="$1" '$1 == "fail" && $2 == op { print $3; f = 1 } END { if (!f) print 0 }' "$ST"; }
now_ms() { date +%s%3N; }

# cat_pattern FILE...: one character per file, '.' when cat succeeds, 'X' when it fails.
cat_pattern() {
	local f p=
	for f; do if cat "$f" >/dev/null 2>&1; then p+=.; else p+=X; fi; done
	echo "$p"
}

# ---------------------------------------------------------------------------------------
case_file_io() {
	local n="passthrough: create, write, read, append, truncate, copy"
	ff_mount io || { fail "$n: mount failed: $(cat "$S/io.mount.err")"; return; }
	local why=
	printf 'hello\n' >"$M/a.txt" || why+=" create/write;"
	[ "$(cat "$M/a.txt")" = hello ] || why+=" read back;"
	[ "$(cat "$B/a.txt")" = hello ] || why+=" backing content;"
	printf 'more\n' >>"$M/a.txt" && [ "$(cat "$B/a.txt")" = $'hello\nmore' ] || why+=" append;"
	printf 'XY' | dd of="$M/a.txt" bs=1 seek=1 conv=notrunc status=none &&
		[ "$(head -c 5 "$B/a.txt")" = hXYlo ] || why+=" pwrite at offset;"
	truncate -s 3 "$M/a.txt" && [ "$(stat -c %s "$B/a.txt")" = 3 ] || why+=" truncate;"
	head -c 3000000 /dev/urandom >"$M/big" && cp "$M/big" "$M/big.copy" &&
		cmp -s "$B/big" "$B/big.copy" && cmp -s "$M/big" "$B/big" || why+=" big file/copy;"
	fallocate -l 1M "$M/falloc" && [ "$(stat -c %s "$B/falloc")" = 1048576 ] || why+=" fallocate;"
	: >"$M/empty" && [ -f "$B/empty" ] && [ ! -s "$B/empty" ] || why+=" empty file;"
	# an unlinked file stays usable through its open descriptor
	exec 7<>"$M/unl" && rm "$M/unl" && echo gone >&7 && [ ! -e "$B/unl" ] || why+=" unlink while open;"
	exec 7>&-
	if [ -z "$why" ]; then ok "$n"; else fail "$n:$why"; fi
}

case_namespace() {
	local n="passthrough: mkdir, symlink, rename, link, unlink, rmdir, mknod, odd names"
	ff_mount ns || { fail "$n: mount failed: $(cat "$S/ns.mount.err")"; return; }
	local why= long odd
	mkdir -p "$M/d1/d2" && [ -d "$B/d1/d2" ] || why+=" mkdir;"
	ln -s some/target "$M/sl" && [ "$(readlink "$M/sl")" = some/target ] &&
		[ "$(readlink "$B/sl")" = some/target ] || why+=" symlink/readlink;"
	echo x >"$M/f" && mv "$M/f" "$M/d1/g" && [ -f "$B/d1/g" ] && [ ! -e "$B/f" ] || why+=" rename;"
	ln "$M/d1/g" "$M/hard" && [ "$(stat -c %h "$B/d1/g")" = 2 ] &&
		[ "$(stat -c %i "$B/hard")" = "$(stat -c %i "$B/d1/g")" ] || why+=" link;"
	rm "$M/hard" && [ ! -e "$B/hard" ] || why+=" unlink;"
	rmdir "$M/d1/d2" && [ ! -e "$B/d1/d2" ] || why+=" rmdir;"
	rmdir "$M/d1" 2>/dev/null && why+=" rmdir of non-empty dir succeeded;"
	mkfifo "$M/fifo" && [ -p "$B/fifo" ] || why+=" mkfifo;"
	mknod "$M/null" c 1 3 && [ -c "$B/null" ] && [ "$(stat -c %t:%T "$B/null")" = 1:3 ] || why+=" mknod;"
	long=$(printf 'n%.0s' {1..255})
	echo 255 >"$M/$long" && [ "$(cat "$B/$long")" = 255 ] || why+=" 255-byte name;"
	odd=$'we\tird \001\n\xff name'
	echo odd >"$M/$odd" && [ "$(cat "$B/$odd")" = odd ] && ls -a "$M" | grep -q 'ird' || why+=" odd bytes in name;"
	if [ "$HAVE_PROBE" = 1 ]; then
		echo 1 >"$M/x1"; echo 2 >"$M/x2"
		[ "$("$PROBE" rename2 exchange "$M/x1" "$M/x2")" = ok ] && [ "$(cat "$B/x1")" = 2 ] || why+=" RENAME_EXCHANGE;"
		[ "$("$PROBE" rename2 noreplace "$M/x1" "$M/x2")" = "File exists" ] || why+=" RENAME_NOREPLACE;"
	fi
	if [ -z "$why" ]; then ok "$n"; else fail "$n:$why"; fi
}

case_metadata() {
	local n="passthrough: chmod, chown, utimens (ns), inode numbers, statfs"
	ff_mount meta || { fail "$n: mount failed: $(cat "$S/meta.mount.err")"; return; }
	local why=
	echo x >"$M/f"; mkdir "$M/d"; ln -s f "$M/l"
	chmod 640 "$M/f" && [ "$(stat -c %a "$B/f")" = 640 ] || why+=" chmod;"
	chown 123:456 "$M/f" && [ "$(stat -c %u:%g "$B/f")" = 123:456 ] || why+=" chown;"
	chown :789 "$M/f" && [ "$(stat -c %u:%g "$B/f")" = 123:789 ] || why+=" chown group only;"
	chown -h 321 "$M/l" && [ "$(stat -c %u "$B/l")" = 321 ] && [ "$(stat -c %u "$B/f")" = 123 ] || why+=" lchown;"
	touch -m -d '2001-02-03 04:05:06.123456789' "$M/f" &&
		[ "$(stat -c %y "$B/f")" = "$(stat -c %y "$M/f")" ] &&
		[[ $(stat -c %y "$B/f") == "2001-02-03 04:05:06.123456789"* ]] || why+=" utimens;"
	local f
	for f in f d l; do
		[ "$(stat -c %i "$M/$f")" = "$(stat -c %i "$B/$f")" ] || why+=" st_ino of $f;"
	done
	[ "$(stat -f -c %b:%S "$M")" = "$(stat -f -c %b:%S "$B")" ] || why+=" statfs;"
	if [ -z "$why" ]; then ok "$n"; else fail "$n:$why"; fi
}

case_xattr() {
	local n="passthrough: setxattr, getxattr, listxattr, removexattr"
	[ "$HAVE_PROBE" = 1 ] || { skip "$n: cannot compile the C helper"; return; }
	ff_mount xa || { fail "$n: mount failed: $(cat "$S/xa.mount.err")"; return; }
	local why=
	echo x >"$M/f"
	"$PROBE" setx "$M/f" user.faultfs hello || why+=" set;"
	[ "$("$PROBE" getx "$B/f" user.faultfs 2>&1)" = hello ] || why+=" value in backing;"
	[ "$("$PROBE" getx "$M/f" user.faultfs 2>&1)" = hello ] || why+=" get;"
	"$PROBE" listx "$M/f" | grep -qx user.faultfs || why+=" list;"
	"$PROBE" rmx "$M/f" user.faultfs && ! "$PROBE" getx "$B/f" user.faultfs >/dev/null 2>&1 || why+=" remove;"
	if [ -z "$why" ]; then ok "$n"; else fail "$n:$why"; fi
}

case_eio_open() {
	local n="EIO rule on open of a glob"
	mkdir -p "$S/eio.b/bad" "$S/eio.b/good"
	echo b >"$S/eio.b/bad/x"; echo g >"$S/eio.b/good/y"; echo c >"$S/eio.b/bad2"
	ff_mount eio --rule 'open:/bad/*:EIO' || { fail "$n: mount failed: $(cat "$S/eio.mount.err")"; return; }
	local why= err
	err=$(cat "$M/bad/x" 2>&1) && why+=" cat of /bad/x succeeded;"
	case $err in *"Input/output error"*) ;; *) why+=" error was [$err];" ;; esac
	[ "$(cat "$M/good/y" 2>&1)" = g ] || why+=" /good/y failed;"
	[ "$(cat "$M/bad2" 2>&1)" = c ] || why+=" /bad2 failed;"
	[ "$(ls "$M/bad" 2>&1)" = x ] || why+=" ls of /bad failed;"
	if [ -z "$why" ]; then ok "$n"; else fail "$n:$why"; fi
}

case_eacces_opendir() {
	local n="EACCES rule on opendir"
	mkdir -p "$S/acc.b/locked/sub" "$S/acc.b/open"
	touch "$S/acc.b/open/f" "$S/acc.b/locked/sub/s"
	ff_mount acc --rule 'opendir:/locked:EACCES' || { fail "$n: mount failed: $(cat "$S/acc.mount.err")"; return; }
	local why= err
	err=$(ls "$M/locked" 2>&1) && why+=" ls /locked succeeded;"
	case $err in *"Permission denied"*) ;; *) why+=" error was [$err];" ;; esac
	[ "$(ls "$M/open" 2>&1)" = f ] || why+=" ls /open failed;"
	[ "$(ls "$M/locked/sub" 2>&1)" = s ] || why+=" ls /locked/sub failed;"
	[ -e "$M/locked/sub/s" ] || why+=" lookup below /locked failed;"
	if [ -z "$why" ]; then ok "$n"; else fail "$n:$why"; fi
}

case_after_count() {
	local n="after= and count= modifiers"
	mkdir -p "$S/ac.b/ac"
	local i files=()
	for i in 1 2 3 4 5 6 7; do echo "$i" >"$S/ac.b/ac/f$i"; done
	ff_mount ac --rule 'open:/ac/*:EIO,after=2,count=3' || { fail "$n: mount failed: $(cat "$S/ac.mount.err")"; return; }
	for i in 1 2 3 4 5 6 7; do files+=("$M/ac/f$i"); done
	local got
	got=$(cat_pattern "${files[@]}")
	snapshot || { fail "$n: no stats after SIGUSR1"; return; }
	if [ "$got" = "..XXX.." ] && [ "$(fail_of open)" = 3 ]; then ok "$n"
	else fail "$n: pattern want [..XXX..] got [$got], fail open $(fail_of open)"; fi
}

case_prob() {
	local n="prob= is reproducible for a seed"
	mkdir -p "$S/prob.b/p"
	local i files=() p1 p2 p3 f1
	for i in $(seq -w 1 24); do echo "$i" >"$S/prob.b/p/f$i"; done
	run_prob() {  # run_prob SEED: set PAT to the pattern; the run's final stats are in $ST
		PAT=
		ff_mount prob --seed "$1" --rule 'open:/p/*:EIO,prob=0.5' || return 1
		local f files=()
		for f in "$M"/p/f*; do files+=("$f"); done
		PAT=$(cat_pattern "${files[@]}")
		ff_umount
	}
	run_prob 42 || { fail "$n: run 1 failed"; return; }
	p1=$PAT f1=$(fail_of open)
	run_prob 42 || { fail "$n: run 2 failed"; return; }
	p2=$PAT
	run_prob 43 || { fail "$n: run 3 failed"; return; }
	p3=$PAT
	local xs=${p1//[^X]/}
	if [ "$p1" = "$p2" ] && [ "$p1" != "$p3" ] && [ -n "$xs" ] && [[ $p1 == *.* ]] &&
		[ "$f1" = "${#xs}" ] && [ ${#p1} = 24 ]; then
		ok "$n"
	else
		fail "$n: seed 42 gave [$p1] then [$p2], seed 43 [$p3]; fail open $f1"
	fi
}

case_delay() {
	local n="delay= rule"
	mkdir -p "$S/delay.b"; echo s >"$S/delay.b/slow"; echo f >"$S/delay.b/fast"
	ff_mount delay --rule 'getattr:/slow:delay=400' || { fail "$n: mount failed: $(cat "$S/delay.mount.err")"; return; }
	local t0 t1 t2 slow fast
	t0=$(now_ms); stat "$M/fast" >/dev/null; t1=$(now_ms); stat "$M/slow" >/dev/null; t2=$(now_ms)
	fast=$((t1 - t0)) slow=$((t2 - t1))
	if [ "$slow" -ge 400 ] && [ "$fast" -lt "$slow" ] && [ "$(cat "$M/slow")" = s ]; then ok "$n (${slow}ms vs ${fast}ms)"
	else fail "$n: stat of /slow took ${slow}ms, /fast ${fast}ms"; fi
	# --stats says how many delayed ops slept at once: one stat at a time, then two together.
	n="--stats delayed_max: delayed ops at once"
	snapshot || { fail "$n: no stats after SIGUSR1"; return; }
	local one two
	one=$(awk '$1 == "delayed_max" { print $2 }' "$ST")
	stat "$M/slow" >/dev/null & stat "$M/slow" >/dev/null & wait
	snapshot || { fail "$n: no stats after SIGUSR1"; return; }
	two=$(awk '$1 == "delayed_max" { print $2 }' "$ST")
	if [ "$one" = 1 ] && [ "$two" = 2 ]; then ok "$n (1, then 2)"
	else fail "$n: after one stat '$one' (want 1), after two at once '$two' (want 2)"; fi
}

case_hold() {
	local n="hold rule released by SIGUSR2"
	mkdir -p "$S/hold.b"; echo held >"$S/hold.b/held"; echo other >"$S/hold.b/other"
	ff_mount hold --rule 'open:/held:hold' || { fail "$n: mount failed: $(cat "$S/hold.mount.err")"; return; }
	local why= cpid
	cat "$M/held" >"$S/hold.out" 2>&1 &
	cpid=$!
	wait_op open || why+=" open never arrived;"
	sleep 0.3
	kill -0 "$cpid" 2>/dev/null || why+=" cat was not held;"
	[ "$(timeout 5 cat "$M/other" 2>&1)" = other ] || why+=" other ops blocked while one is held;"
	[ "$(timeout 5 ls "$M" 2>&1 | wc -l)" = 2 ] || why+=" readdir blocked while one op is held;"
	kill -USR2 "$(ff_pid)"
	if wait_pid "$cpid"; then
		wait "$cpid" || why+=" cat failed after release;"
		[ "$(cat "$S/hold.out")" = held ] || why+=" wrong content [$(cat "$S/hold.out")];"
	else
		why+=" still held 5s after SIGUSR2;"
	fi
	# once released, the rule no longer blocks
	[ "$(timeout 5 cat "$M/held" 2>&1)" = held ] || why+=" held again after SIGUSR2;"
	if [ -z "$why" ]; then ok "$n"; else fail "$n:$why"; fi
}

case_hold_interrupt() {
	local n="hold rule: a killed caller is not stuck (EINTR)"
	mkdir -p "$S/hi.b"; echo s >"$S/hi.b/stuck"
	ff_mount hi --rule 'open:/stuck:hold' || { fail "$n: mount failed: $(cat "$S/hi.mount.err")"; return; }
	local why= cpid t0 ms
	cat "$M/stuck" >/dev/null 2>&1 &
	cpid=$!
	wait_op open || why+=" open never arrived;"
	sleep 0.2
	kill -0 "$cpid" 2>/dev/null || why+=" cat was not held;"
	t0=$(now_ms)
	kill -TERM "$cpid"
	wait_pid "$cpid" 30 || why+=" killed cat still there after 3s;"
	ms=$(($(now_ms) - t0))
	[ "$ms" -lt 1000 ] || why+=" killed cat took ${ms}ms to go;"
	# the rule is still armed: the next open holds too, until SIGUSR2
	cat "$M/stuck" >"$S/hi.out" 2>&1 &
	cpid=$!
	sleep 0.3
	kill -0 "$cpid" 2>/dev/null || why+=" second cat was not held;"
	kill -USR2 "$(ff_pid)"
	wait_pid "$cpid" && [ "$(cat "$S/hi.out")" = s ] || why+=" second cat [$(cat "$S/hi.out")];"
	if [ -z "$why" ]; then ok "$n (${ms}ms)"; else fail "$n:$why"; fi
}

case_hold_unmount() {
	local n="hold rule released by unmount"
	mkdir -p "$S/hu.b"; echo s >"$S/hu.b/stuck"
	ff_mount hu --rule 'getattr:/stuck:hold' || { fail "$n: mount failed: $(cat "$S/hu.mount.err")"; return; }
	local why= spid fpid
	fpid=$(ff_pid)
	stat "$M/stuck" >/dev/null 2>&1 &
	spid=$!
	wait_op getattr || why+=" getattr never arrived;"
	sleep 0.3
	kill -0 "$spid" 2>/dev/null || why+=" stat was not held;"
	# the held request keeps the mount busy; a lazy unmount detaches it
	fusermount3 -u "$M" 2>/dev/null || umount -l "$M" || why+=" could not unmount;"
	wait_pid "$spid" || why+=" stat still held 5s after unmount;"
	wait_pid "$fpid" || why+=" faultfs still running;"
	[ -e "$PF" ] && why+=" pid file left behind;"
	[ -s "$ST" ] || why+=" no stats written at exit;"
	if [ -z "$why" ]; then ok "$n"; else fail "$n:$why"; fi
}

case_dtypes() {
	local n="readdir d_type and d_ino"
	[ "$HAVE_PROBE" = 1 ] || { skip "$n: cannot compile the C helper"; return; }
	mkdir -p "$S/dt.b/d"; echo f >"$S/dt.b/f"; ln -s f "$S/dt.b/l"; mkfifo "$S/dt.b/p"
	ff_mount dt || { fail "$n: mount failed: $(cat "$S/dt.mount.err")"; return; }
	local got want= e
	got=$("$PROBE" list "$M" | grep -v '^\.' | sort)
	for e in d:4 f:8 l:10 p:1; do want+="${e%%:*} ${e#*:} $(stat -c %i "$B/${e%%:*}")"$'\n'; done
	want=${want%$'\n'}
	if [ "$got" = "$want" ]; then ok "$n"; else fail "$n: want [$want] got [$got]"; fi
}

case_dt_unknown() {
	local n="--dt-unknown reports DT_UNKNOWN"
	[ "$HAVE_PROBE" = 1 ] || { skip "$n: cannot compile the C helper"; return; }
	mkdir -p "$S/dtu.b/d"; echo f >"$S/dtu.b/f"; ln -s f "$S/dtu.b/l"
	ff_mount dtu --dt-unknown || { fail "$n: mount failed: $(cat "$S/dtu.mount.err")"; return; }
	local types inos
	types=$("$PROBE" list "$M" | awk '{ print $2 }' | sort -u | tr '\n' ' ')
	inos=$("$PROBE" list "$M" | awk '$1 == "f" { print $3 }')
	# find must fall back to stat to learn the types
	local ftypes
	ftypes=$(cd "$M" && find . -mindepth 1 -printf '%y' | fold -w1 | sort | tr -d '\n')
	if [ "$types" = "0 " ] && [ "$inos" = "$(stat -c %i "$B/f")" ] && [ "$ftypes" = dfl ]; then ok "$n"
	else fail "$n: d_types [$types], d_ino of f [$inos], find saw [$ftypes]"; fi
}

case_readdir_error() {
	local n="readdir rule makes getdents64 fail"
	mkdir -p "$S/rde.b/rd"; touch "$S/rde.b/rd/a"
	ff_mount rde --rule 'readdir:/rd:EIO,count=1' || { fail "$n: mount failed: $(cat "$S/rde.mount.err")"; return; }
	local why= err
	err=$(ls "$M/rd" 2>&1) && why+=" first ls succeeded;"
	case $err in *"Input/output error"*) ;; *) why+=" error was [$err];" ;; esac
	[ "$(ls "$M/rd" 2>&1)" = a ] || why+=" second ls failed;"
	if [ -z "$why" ]; then ok "$n"; else fail "$n:$why"; fi
}

case_resume() {
	local n="lseek to a saved d_off continues after that entry"
	[ "$HAVE_PROBE" = 1 ] || { skip "$n: cannot compile the C helper"; return; }
	mkdir -p "$S/rs.b/big"
	local i pad
	pad=$(printf 'x%.0s' {1..60})
	for i in $(seq 1 400); do : >"$S/rs.b/big/$pad.$i"; done
	mkdir "$S/rs.b/big/subdir"
	ff_mount rs || { fail "$n: mount failed: $(cat "$S/rs.mount.err")"; return; }
	local got
	got=$("$PROBE" resume "$M/big" 2>&1)
	if [ "$got" = "ok 403" ]; then ok "$n"; else fail "$n: $got"; fi
}

case_stats() {
	local n="--stats counts ops and injected failures"
	mkdir -p "$S/st.b/s"; echo 1 >"$S/st.b/s/bad1"; echo 2 >"$S/st.b/s/bad2"; echo 3 >"$S/st.b/s/good"
	ff_mount st --rule 'open:/s/bad*:EIO' || { fail "$n: mount failed: $(cat "$S/st.mount.err")"; return; }
	local why=
	stat "$M/s/good" >/dev/null
	ls "$M/s" >/dev/null
	cat "$M/s/bad1" "$M/s/bad2" 2>/dev/null
	cat "$M/s/good" >/dev/null
	snapshot || { fail "$n: no stats after SIGUSR1"; return; }
	[ "$(count_of getattr)" -gt 0 ] || why+=" getattr count 0;"
	[ "$(count_of readdir)" -gt 0 ] || why+=" readdir count 0;"
	[ "$(count_of opendir)" = 1 ] || why+=" opendir $(count_of opendir), want 1;"
	[ "$(count_of open)" = 3 ] || why+=" open $(count_of open), want 3;"
	[ "$(fail_of open)" = 2 ] || why+=" fail open $(fail_of open), want 2;"
	[ "$(grep -c '^fail ' "$ST")" = 1 ] || why+=" unexpected fail lines;"
	awk 'NF == 2 && $2 == 0 { exit 1 }' "$ST" || why+=" zero counts listed;"
	cat "$M/s/bad1" 2>/dev/null
	ff_umount || why+=" unmount/exit;"
	[ "$(fail_of open)" = 3 ] || why+=" final fail open $(fail_of open), want 3;"
	ls "$S"/st.stats.tmp.* >/dev/null 2>&1 && why+=" temp file left;"
	if [ -z "$why" ]; then ok "$n"; else fail "$n:$why"; fi
}

case_unprivileged() {
	local n="unprivileged caller: ownership and kernel permission checks"
	command -v setpriv >/dev/null || { skip "$n: setpriv not installed"; return; }
	mkdir -p "$S/up.b/pub" "$S/up.b/sg" "$S/up.b/rootonly"
	chmod 1777 "$S/up.b/pub"; chmod 755 "$S/up.b/rootonly"
	chgrp 4242 "$S/up.b/sg"; chmod 2777 "$S/up.b/sg"
	echo secret >"$S/up.b/secret"; chmod 600 "$S/up.b/secret"
	ff_mount up || { fail "$n: mount failed: $(cat "$S/up.mount.err")"; return; }
	chmod 755 "$M"
	local why= nob="setpriv --reuid=65534 --regid=65534 --clear-groups"
	$nob sh -c "echo hi >'$M/pub/file' && mkdir '$M/pub/dir' && ln -s x '$M/pub/link' && mkfifo '$M/pub/fifo'" ||
		why+=" creating as nobody failed;"
	local f
	for f in file dir link fifo; do
		[ "$(stat -c %u:%g "$B/pub/$f" 2>&1)" = 65534:65534 ] || why+=" owner of $f [$(stat -c %u:%g "$B/pub/$f" 2>&1)];"
	done
	$nob sh -c "echo hi >'$M/sg/file'" && [ "$(stat -c %u:%g "$B/sg/file")" = 65534:4242 ] ||
		why+=" set-group-ID dir [$(stat -c %u:%g "$B/sg/file" 2>&1)];"
	[ "$($nob cat "$M/pub/file" 2>&1)" = hi ] || why+=" nobody cannot read own file;"
	$nob cat "$M/secret" >/dev/null 2>"$S/up.err" && why+=" nobody read a 0600 root file;"
	grep -q "Permission denied" "$S/up.err" || why+=" [$(cat "$S/up.err")];"
	$nob sh -c "echo x >'$M/rootonly/x'" 2>/dev/null && why+=" nobody wrote into a 755 root dir;"
	echo r >"$M/pub/rootfile" && [ "$(stat -c %u:%g "$B/pub/rootfile")" = 0:0 ] || why+=" root's file not root's;"
	if [ -z "$why" ]; then ok "$n"; else fail "$n:$why"; fi
}

case_long_path() {
	local n="paths longer than PATH_MAX fail with ENAMETOOLONG"
	ff_mount lp || { fail "$n: mount failed: $(cat "$S/lp.mount.err")"; return; }
	local comp rc why=
	comp=$(printf 'd%.0s' {1..200})
	(cd "$M" && for i in $(seq 1 30); do mkdir "$comp" 2>"$S/lp.err" || exit 3; cd "$comp" || exit 4; done)
	rc=$?
	[ "$rc" = 3 ] || why+=" deep mkdir ended with $rc;"
	grep -q "File name too long" "$S/lp.err" || why+=" error was [$(cat "$S/lp.err")];"
	kill -0 "$(ff_pid)" 2>/dev/null || why+=" faultfs died;"
	[ "$(ls "$M")" = "$comp" ] || why+=" mount unusable afterwards;"
	if [ -z "$why" ]; then ok "$n"; else fail "$n:$why"; fi
}

case_bad_args() {
	local n="bad command lines exit 2 with a message"
	local why= b=$S/args.b m=$S/args.m
	mkdir -p "$b" "$m"
	try() {  # try DESCRIPTION ARGS...
		local d=$1 rc; shift
		"$FAULTFS" "$@" >/dev/null 2>"$S/args.err"; rc=$?
		[ "$rc" = 2 ] && [ -s "$S/args.err" ] || why+=" $d (rc $rc);"
	}
	try "unknown op" --rule 'frobnicate:*:EIO' "$b" "$m"
	try "bad errno" --rule 'open:*:ENOTANERRNO' "$b" "$m"
	try "bad rule syntax" --rule 'open:EIO' "$b" "$m"
	try "bad modifier" --rule 'open:*:EIO,sometimes=3' "$b" "$m"
	try "bad prob" --rule 'open:*:EIO,prob=1.5' "$b" "$m"
	try "bad delay" --rule 'open:*:delay=soon' "$b" "$m"
	try "bad seed" --seed x "$b" "$m"
	try "unknown option" --frobnicate "$b" "$m"
	try "missing backing dir" "$S/does-not-exist" "$m"
	try "missing mount point" "$b"
	try "no arguments"
	grep -q " $m " /proc/mounts && why+=" something got mounted;"
	"$FAULTFS" --help >/dev/null 2>&1 || why+=" --help failed;"
	if [ -z "$why" ]; then ok "$n"; else fail "$n:$why"; fi
}

case_no_leftovers() {
	local n="every mount is gone after unmounting"
	local m why=
	for m in "${MOUNTS[@]}"; do
		if grep -q " $m " /proc/mounts; then
			fusermount3 -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || why+=" cannot unmount $m;"
		fi
	done
	sleep 0.2
	grep -q " $S/" /proc/mounts && why+=" still mounted: $(grep " $S/" /proc/mounts | awk '{ print $2 }' | tr '\n' ' ')"
	if [ -z "$why" ]; then ok "$n"; else fail "$n:$why"; fi
}

case_file_io
case_namespace
case_metadata
case_xattr
case_eio_open
case_eacces_opendir
case_after_count
case_prob
case_delay
case_hold
case_hold_interrupt
case_hold_unmount
case_dtypes
case_dt_unknown
case_readdir_error
case_resume
case_stats
case_unprivileged
case_long_path
case_bad_args
case_no_leftovers
