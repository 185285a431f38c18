/*
 * noopenat2: run a command as on a kernel without openat2 (before 5.6), or under a seccomp
 * profile that refuses it: the tests use it to drive myriad's fallback path.
 *
 *   noopenat2 [--errno N] COMMAND [ARG...]
 *
 * Installs a seccomp filter (raw BPF, no libseccomp) that makes openat2 fail with ENOSYS (or
 * errno N, e.g. 1 for EPERM) and allows every other syscall, then execs COMMAND. The filter is
 * inherited by every thread and child of COMMAND. Needs no privilege (PR_SET_NO_NEW_PRIVS).
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#else
#error "noopenat2: add this architecture's AUDIT_ARCH_ value"
#endif

int main(int argc, char **argv)
{
	int err = ENOSYS, first = 1;
	if (argc > 2 && !strcmp(argv[1], "--errno")) {
		err = atoi(argv[2]);
		first = 3;
	}
	if (first >= argc || err <= 0 || err > 4095) {
		fprintf(stderr, "Usage: noopenat2 [--errno N] COMMAND [ARG...]\n");
		return 2;
	}
	struct sock_filter filter[] = {
		/* Another architecture's syscall numbers (x32, i386 on x86_64): kill rather than guess. */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(filter) / sizeof(filter[0]), .filter = filter};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		perror("noopenat2: prctl(PR_SET_NO_NEW_PRIVS)");
		return 126;
	}
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
		perror("noopenat2: seccomp");
		return 126;
	}
	execvp(argv[first], argv + first);
	fprintf(stderr, "noopenat2: %s: %s\n", argv[first], strerror(errno));
	return 127;
}
