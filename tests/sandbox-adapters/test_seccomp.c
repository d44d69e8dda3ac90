/*
 * test_seccomp.c: the zones' seccomp filter (SPEC 8.3; SANDBOX.md 0.3,
 * 0.6): built deterministically, hashed, and loaded for real in a forked
 * child, where each denied call must fail with EPERM (high bits set
 * included) while the same call without the filter fails otherwise or
 * succeeds, and ordinary calls (threads, fork, AF_UNIX/INET sockets,
 * ioctls) keep working.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/filter.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"
#include "support/check_util.h"

Suite *seccomp_suite(void);

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

/* A raw syscall's result as -errno or the value. */
static long
sc(long nr, long a, long b, long c)
{
	long r = syscall(nr, a, b, c, 0L, 0L, 0L);

	return r < 0 ? -errno : r;
}

/* i386's getpid through int 0x80 (nr 20): another audit arch. */
static long
int80_getpid(void)
{
	long r;

	__asm__ volatile("int $0x80" : "=a"(r) : "a"(20L) : "memory");
	return r;
}

static void *
thread_fn(void *arg)
{
	return arg;
}

/*
 * What each call returns, in the order of the table below. Run once in a
 * child without the filter and once with it, and compare.
 */
enum {
	C_TIOCSTI, C_TIOCSTI_HI, C_TIOCLINUX, C_TIOCLINUX_HI, C_IOCTL_OK,
	C_VSOCK, C_VSOCK_HI, C_PACKET, C_FAMILY_HI, C_INET_HI, C_PAIR_VSOCK,
	C_UNIX, C_INET, C_INET6, C_NETLINK, C_PAIR_UNIX,
	C_UNSHARE_USER, C_UNSHARE_USER_NS, C_CLONE_USER, C_CLONE3, C_SETNS,
	C_IO_URING, C_MOUNT, C_UMOUNT, C_PIVOT, C_OPEN_TREE, C_FSOPEN,
	C_PTRACE, C_VM_READV, C_KEYCTL, C_ADD_KEY, C_BPF, C_PERF, C_UFFD,
	C_KEXEC, C_INIT_MODULE, C_SWAPON, C_REBOOT, C_ACCT, C_HANDLE,
	C_PERS_QUERY, C_PERS_LINUX, C_PERS_NORAND, C_PERS_HI, C_PERS_EXEC,
	C_INT80, C_X32, C_FORK, C_THREAD,
	C_N
};

static void
run_calls(long *r)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	char ch = 'x';
	int sv[2] = { -1, -1 };
	long fd;
	pid_t pid;
	pthread_t th;
	void *ret = NULL;
	struct { uint64_t flags, pidfd, child_tid, parent_tid, exit_signal,
		stack, stack_size, tls; } ca;

	/* /dev/null is no tty: ENOTTY without the filter, EPERM with it. */
	r[C_TIOCSTI] = sc(SYS_ioctl, null, TIOCSTI, (long)&ch);
	r[C_TIOCSTI_HI] = sc(SYS_ioctl, null, (long)(TIOCSTI | (1ul << 32)),
	    (long)&ch);
	r[C_TIOCLINUX] = sc(SYS_ioctl, null, TIOCLINUX, (long)&ch);
	r[C_TIOCLINUX_HI] = sc(SYS_ioctl, null, (long)(TIOCLINUX |
	    (0xdeadul << 32)), (long)&ch);
	r[C_IOCTL_OK] = sc(SYS_ioctl, null, TIOCGWINSZ, (long)&ca);
#define SOCK(idx, fam, type) do {					\
	fd = sc(SYS_socket, (long)(fam), (type), 0);			\
	r[idx] = fd >= 0 ? 0 : fd;					\
	if (fd >= 0)							\
		close((int)fd);						\
} while (0)
	SOCK(C_VSOCK, AF_VSOCK, SOCK_STREAM);
	SOCK(C_VSOCK_HI, AF_VSOCK | (1ul << 32), SOCK_STREAM);
	SOCK(C_PACKET, AF_PACKET, SOCK_RAW);
	SOCK(C_FAMILY_HI, 200, SOCK_STREAM);
	SOCK(C_INET_HI, AF_INET | (1ul << 40), SOCK_STREAM);
	SOCK(C_UNIX, AF_UNIX, SOCK_STREAM);
	SOCK(C_INET, AF_INET, SOCK_DGRAM);
	SOCK(C_INET6, AF_INET6, SOCK_DGRAM);
	SOCK(C_NETLINK, AF_NETLINK, SOCK_RAW);
#undef SOCK
	r[C_PAIR_VSOCK] = sc(SYS_socketpair, AF_VSOCK, SOCK_STREAM, 0);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0) {
		r[C_PAIR_UNIX] = 0;
		close(sv[0]);
		close(sv[1]);
	} else {
		r[C_PAIR_UNIX] = -errno;
	}
	/*
	 * Namespaces. Without the filter these succeed as root: run them
	 * last-but-harmless (a new user namespace changes nothing here).
	 */
	r[C_SETNS] = sc(SYS_setns, -1, 0, 0);
	r[C_IO_URING] = sc(SYS_io_uring_setup, 1, 0, 0);
	r[C_MOUNT] = sc(SYS_mount, (long)"none", (long)"/nonexistent/x",
	    (long)"tmpfs");
	r[C_UMOUNT] = sc(SYS_umount2, (long)"/nonexistent/x", 0, 0);
	r[C_PIVOT] = sc(SYS_pivot_root, (long)"/nonexistent/a",
	    (long)"/nonexistent/b", 0);
	r[C_OPEN_TREE] = sc(SYS_open_tree, -1, (long)"", 0);
	r[C_FSOPEN] = sc(SYS_fsopen, (long)"nonexistent-fs", 0, 0);
	/* pid 0: no such tracee, so nothing is attached without it. */
	r[C_PTRACE] = sc(SYS_ptrace, 0x4206 /* SEIZE */, 0, 0);
	r[C_VM_READV] = sc(SYS_process_vm_readv, 0, 0, 0);
	r[C_KEYCTL] = sc(SYS_keyctl, -1000, 0, 0);
	r[C_ADD_KEY] = sc(SYS_add_key, 0, 0, 0);
	r[C_BPF] = sc(SYS_bpf, -1, 0, 0);
	r[C_PERF] = sc(SYS_perf_event_open, 0, 0, -1);
	r[C_UFFD] = sc(SYS_userfaultfd, -1, 0, 0);
	/* 1000 segments: EINVAL, never an unload of a loaded kernel. */
	r[C_KEXEC] = sc(SYS_kexec_load, 0, 1000, 0);
	r[C_INIT_MODULE] = sc(SYS_init_module, 0, 0, 0);
	r[C_SWAPON] = sc(SYS_swapon, (long)"/nonexistent", 0, 0);
	r[C_REBOOT] = sc(SYS_reboot, 0, 0, 0);
	r[C_ACCT] = sc(SYS_acct, (long)"/nonexistent/acct", 0, 0);
	r[C_HANDLE] = sc(SYS_open_by_handle_at, -1, 0, 0);
	r[C_PERS_QUERY] = sc(SYS_personality, 0xffffffffl, 0, 0);
	r[C_PERS_LINUX] = sc(SYS_personality, PER_LINUX, 0, 0);
	r[C_PERS_NORAND] = sc(SYS_personality, ADDR_NO_RANDOMIZE, 0, 0);
	r[C_PERS_HI] = sc(SYS_personality, 0x80000000l | ADDR_NO_RANDOMIZE,
	    0, 0);
	r[C_PERS_EXEC] = sc(SYS_personality, READ_IMPLIES_EXEC |
	    (1l << 33), 0, 0);
	/* Put the persona back if the kernel took one. */
	personality(PER_LINUX);
	r[C_INT80] = int80_getpid();
	r[C_X32] = sc(0x40000000l | SYS_getpid, 0, 0, 0);
	/* Ordinary process and thread creation goes on working. */
	pid = fork();
	if (pid == 0)
		_exit(7);
	if (pid < 0) {
		r[C_FORK] = -errno;
	} else {
		int st = 0;

		waitpid(pid, &st, 0);
		r[C_FORK] = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	}
	r[C_THREAD] = pthread_create(&th, NULL, thread_fn, (void *)5) == 0 &&
	    pthread_join(th, &ret) == 0 ? (long)(intptr_t)ret : -1;
	/* Last: user namespaces (a forked child, so nothing here changes). */
	pid = fork();
	if (pid == 0) {
		long v[4];

		memset(&ca, 0, sizeof ca);
		ca.flags = CLONE_NEWUSER;
		ca.exit_signal = SIGCHLD;
		v[2] = sc(SYS_clone3, (long)&ca, sizeof ca, 0);
		if (v[2] == 0)
			_exit(0);
		v[3] = sc(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0);
		if (v[3] == 0)
			_exit(0);
		/* Last: once in a new namespace, no nested one is allowed. */
		v[1] = sc(SYS_unshare, CLONE_NEWUSER | CLONE_NEWNS |
		    (1l << 40), 0, 0);
		v[0] = sc(SYS_unshare, CLONE_NEWUSER, 0, 0);
		if (write(3, v, sizeof v) != (ssize_t)sizeof v)
			_exit(1);
		_exit(0);
	}
	(void)pid;
	close(null);
}

/* Run run_calls in a child, with or without the filter; results in r. */
static void
calls_in_child(bool filtered, long *r)
{
	unsigned char *bpf = NULL;
	size_t len = 0;
	int pp[2], up[2], st;
	pid_t pid;
	long v[4] = { 0, 0, 0, 0 };

	ck_assert_int_eq(sbx_seccomp_build(&bpf, &len), 0);
	ck_assert_int_eq(pipe(pp), 0);
	ck_assert_int_eq(pipe(up), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		long res[C_N];

		close(pp[0]);
		close(up[0]);
		if (dup2(up[1], 3) < 0)
			_exit(2);
		if (filtered && sbx_seccomp_load(bpf, len) != 0)
			_exit(3);
		memset(res, 0, sizeof res);
		run_calls(res);
		/* Wait for the namespace child's report. */
		while (wait(NULL) > 0)
			;
		if (write(pp[1], res, sizeof res) != (ssize_t)sizeof res)
			_exit(4);
		_exit(0);
	}
	close(pp[1]);
	close(up[1]);
	ck_assert_int_eq((int)read(pp[0], r, C_N * sizeof *r),
	    (int)(C_N * sizeof *r));
	ck_assert_int_eq((int)read(up[0], v, sizeof v), (int)sizeof v);
	close(pp[0]);
	close(up[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	r[C_UNSHARE_USER] = v[0];
	r[C_UNSHARE_USER_NS] = v[1];
	r[C_CLONE3] = v[2];
	r[C_CLONE_USER] = v[3];
	free(bpf);
}

START_TEST(test_seccomp_build_deterministic)
{
	unsigned char *a = NULL, *b = NULL;
	size_t alen = 0, blen = 0;
	char h1[SBX_SHA256_HEX], h2[SBX_SHA256_HEX];

	ck_assert_int_eq(sbx_seccomp_build(&a, &alen), 0);
	ck_assert_int_eq(sbx_seccomp_build(&b, &blen), 0);
	ck_assert_uint_gt(alen, 10 * sizeof(struct sock_filter));
	ck_assert_uint_eq(alen % sizeof(struct sock_filter), 0);
	ck_assert_uint_le(alen / sizeof(struct sock_filter), BPF_MAXINSNS);
	ck_assert_uint_eq(alen, blen);
	ck_assert_mem_eq(a, b, alen);
	/* The receipt hash is the hash of exactly these bytes. */
	ck_assert_int_eq(sbx_seccomp_hash(h1), 0);
	ck_assert_int_eq(sbx_sha256_hex(a, alen, h2), 0);
	ck_assert_str_eq(h1, h2);
	ck_assert_uint_eq(strlen(h1), 64);
	ck_assert_int_eq(sbx_seccomp_load(NULL, 0), -EINVAL);
	ck_assert_int_eq(sbx_seccomp_load(a, 7), -EINVAL);
	free(a);
	free(b);
}
END_TEST

START_TEST(test_seccomp_sha256)
{
	char hex[SBX_SHA256_HEX];

	/* FIPS 180-2 test vectors. */
	ck_assert_int_eq(sbx_sha256_hex("abc", 3, hex), 0);
	ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223"
	    "b00361a396177a9cb410ff61f20015ad");
	ck_assert_int_eq(sbx_sha256_hex(NULL, 0, hex), 0);
	ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb924"
	    "27ae41e4649b934ca495991b7852b855");
	ck_assert_int_eq(sbx_sha256_file("/nonexistent/x", hex), -ENOENT);
}
END_TEST

/* Each denied call: EPERM under the filter, something else without. */
START_TEST(test_seccomp_denies)
{
	static const struct {
		int idx;
		const char *what;
		long want;
	} denied[] = {
		{ C_TIOCSTI, "ioctl TIOCSTI", -EPERM },
		{ C_TIOCSTI_HI, "ioctl TIOCSTI | 1<<32", -EPERM },
		{ C_TIOCLINUX, "ioctl TIOCLINUX", -EPERM },
		{ C_TIOCLINUX_HI, "ioctl TIOCLINUX | high bits", -EPERM },
		{ C_VSOCK, "socket AF_VSOCK", -EPERM },
		{ C_VSOCK_HI, "socket AF_VSOCK | 1<<32", -EPERM },
		{ C_PACKET, "socket AF_PACKET", -EPERM },
		{ C_FAMILY_HI, "socket family 200", -EPERM },
		{ C_INET_HI, "socket AF_INET | 1<<40", -EPERM },
		{ C_PAIR_VSOCK, "socketpair AF_VSOCK", -EPERM },
		{ C_UNSHARE_USER, "unshare CLONE_NEWUSER", -EPERM },
		{ C_UNSHARE_USER_NS, "unshare NEWUSER|NEWNS|hi", -EPERM },
		{ C_CLONE_USER, "clone CLONE_NEWUSER", -EPERM },
		{ C_CLONE3, "clone3", -ENOSYS },
		{ C_SETNS, "setns", -EPERM },
		{ C_IO_URING, "io_uring_setup", -EPERM },
		{ C_MOUNT, "mount", -EPERM },
		{ C_UMOUNT, "umount2", -EPERM },
		{ C_PIVOT, "pivot_root", -EPERM },
		{ C_OPEN_TREE, "open_tree", -EPERM },
		{ C_FSOPEN, "fsopen", -EPERM },
		{ C_PTRACE, "ptrace", -EPERM },
		{ C_VM_READV, "process_vm_readv", -EPERM },
		{ C_KEYCTL, "keyctl", -EPERM },
		{ C_ADD_KEY, "add_key", -EPERM },
		{ C_BPF, "bpf", -EPERM },
		{ C_PERF, "perf_event_open", -EPERM },
		{ C_UFFD, "userfaultfd", -EPERM },
		{ C_KEXEC, "kexec_load", -EPERM },
		{ C_INIT_MODULE, "init_module", -EPERM },
		{ C_SWAPON, "swapon", -EPERM },
		{ C_REBOOT, "reboot", -EPERM },
		{ C_ACCT, "acct", -EPERM },
		{ C_HANDLE, "open_by_handle_at", -EPERM },
		{ C_PERS_NORAND, "personality ADDR_NO_RANDOMIZE", -EPERM },
		{ C_PERS_HI, "personality bit 31 + NO_RANDOMIZE", -EPERM },
		{ C_PERS_EXEC, "personality READ_IMPLIES_EXEC|1<<33", -EPERM },
		{ C_INT80, "i386 int 0x80 getpid", -EPERM },
		{ C_X32, "x32 getpid", -EPERM },
	};
	long off[C_N], on[C_N];

	calls_in_child(false, off);
	calls_in_child(true, on);
	for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++) {
		int k = denied[i].idx;

		ck_assert_msg(on[k] == denied[i].want, "%s: %ld under the "
		    "filter, want %ld", denied[i].what, on[k],
		    denied[i].want);
		/* Proof that the filter, not the kernel, refused it. */
		ck_assert_msg(off[k] != denied[i].want, "%s: %ld without the "
		    "filter too", denied[i].what, off[k]);
	}
}
END_TEST

/* What the zones need keeps working under the filter. */
START_TEST(test_seccomp_allows)
{
	static const int same[] = { C_IOCTL_OK, C_UNIX, C_INET, C_INET6,
		C_NETLINK, C_PAIR_UNIX, C_PERS_QUERY, C_PERS_LINUX, C_FORK,
		C_THREAD };
	long off[C_N], on[C_N];

	calls_in_child(false, off);
	calls_in_child(true, on);
	for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
		int k = same[i];

		ck_assert_msg(on[k] == off[k], "call %d: %ld under the filter, "
		    "%ld without", k, on[k], off[k]);
		ck_assert_msg(on[k] != -EPERM, "call %d refused", k);
	}
	ck_assert_int_eq(on[C_UNIX], 0);
	ck_assert_int_eq(on[C_INET], 0);
	ck_assert_int_eq(on[C_INET6], 0);
	ck_assert_int_eq(on[C_NETLINK], 0);
	ck_assert_int_eq(on[C_PAIR_UNIX], 0);
	ck_assert_int_eq(on[C_FORK], 7);
	ck_assert_int_eq(on[C_THREAD], 5);
	ck_assert_int_eq(on[C_IOCTL_OK], -ENOTTY);
}
END_TEST

Suite *
seccomp_suite(void)
{
	Suite *s = suite_create("seccomp");
	TCase *tc = tcase_create("Core");

	tcase_add_test(tc, test_seccomp_build_deterministic);
	tcase_add_test(tc, test_seccomp_sha256);
	tcase_add_test(tc, test_seccomp_denies);
	tcase_add_test(tc, test_seccomp_allows);
	suite_add_tcase(s, tc);
	return s;
}
