/*
 * sbx_seccomp.c: the seccomp filter of both bwrap zones (SPEC 8.3;
 * SANDBOX.md 0.3, 0.6): a flatpak-style denylist over a default allow,
 * built with libseccomp and exported as cBPF for `bwrap --seccomp FD`.
 * Every comparison on a 32-bit argument is masked to 32 bits, so high bits
 * cannot slip a denied value past it (CVE-2019-10063).
 */
#include <errno.h>
#include <linux/filter.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/seccomp.h>
#include <seccomp.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"

#define M32 0xffffffffull

/* Denied outright, with EPERM (ENOSYS for clone3: libc falls back). */
static const struct {
	const char *name;
	int err;
} deny_all[] = {
	/* io_uring creates sockets and opens files without the syscalls. */
	{ "io_uring_setup", EPERM },
	{ "io_uring_enter", EPERM },
	{ "io_uring_register", EPERM },
	/* Namespaces: joining one; clone3's flags live in memory. */
	{ "setns", EPERM },
	{ "clone3", ENOSYS },
	/* The mount API, old and new. */
	{ "mount", EPERM },
	{ "umount2", EPERM },
	{ "pivot_root", EPERM },
	{ "move_mount", EPERM },
	{ "open_tree", EPERM },
	{ "fsopen", EPERM },
	{ "fsconfig", EPERM },
	{ "fsmount", EPERM },
	{ "fspick", EPERM },
	{ "mount_setattr", EPERM },
	{ "chroot", EPERM },
	/* Other processes' memory and fds. */
	{ "ptrace", EPERM },
	{ "process_vm_readv", EPERM },
	{ "process_vm_writev", EPERM },
	{ "process_madvise", EPERM },
	{ "pidfd_getfd", EPERM },
	{ "kcmp", EPERM },
	/* Kernel keyrings are not namespaced. */
	{ "add_key", EPERM },
	{ "request_key", EPERM },
	{ "keyctl", EPERM },
	/* Kernel attack surface an agent never needs. */
	{ "bpf", EPERM },
	{ "perf_event_open", EPERM },
	{ "userfaultfd", EPERM },
	{ "kexec_load", EPERM },
	{ "kexec_file_load", EPERM },
	{ "init_module", EPERM },
	{ "finit_module", EPERM },
	{ "delete_module", EPERM },
	{ "swapon", EPERM },
	{ "swapoff", EPERM },
	{ "reboot", EPERM },
	{ "acct", EPERM },
	{ "quotactl", EPERM },
	{ "quotactl_fd", EPERM },
	{ "name_to_handle_at", EPERM },
	{ "open_by_handle_at", EPERM },
	{ "syslog", EPERM },
	{ "uselib", EPERM },
	{ "lookup_dcookie", EPERM },
	{ "iopl", EPERM },
	{ "ioperm", EPERM },
};

/* The only socket families a zone may create (SANDBOX.md 0.6). */
static const int families_allowed[] = { AF_UNIX, AF_INET, AF_INET6,
	AF_NETLINK };

/* Personality flags that weaken the address space (flatpak's list). */
static const unsigned long personality_unsafe[] = { ADDR_NO_RANDOMIZE,
	MMAP_PAGE_ZERO, ADDR_COMPAT_LAYOUT, READ_IMPLIES_EXEC, ADDR_LIMIT_32BIT,
	ADDR_LIMIT_3GB, SHORT_INODE, WHOLE_SECONDS, STICKY_TIMEOUTS };

static int
rule(scmp_filter_ctx ctx, int err, const char *name, unsigned n,
    const struct scmp_arg_cmp *cmp)
{
	int nr = seccomp_syscall_resolve_name(name);

	/* Fail closed: a syscall libseccomp does not know is an error. */
	if (nr == __NR_SCMP_ERROR || nr < 0)
		return -ENOSYS;
	return seccomp_rule_add_exact_array(ctx, SCMP_ACT_ERRNO(err), nr, n,
	    cmp);
}

static int
rule1(scmp_filter_ctx ctx, const char *name, struct scmp_arg_cmp c)
{
	return rule(ctx, EPERM, name, 1, &c);
}

/* socket()/socketpair(): deny each family outside the allowlist. */
static int
families(scmp_filter_ctx ctx, const char *name)
{
	int last = -1, rc;
	size_t n = sizeof families_allowed / sizeof families_allowed[0];

	for (size_t i = 0; i < n; i++) {
		for (int f = last + 1; f < families_allowed[i]; f++) {
			rc = rule1(ctx, name, SCMP_A0(SCMP_CMP_EQ,
			    (scmp_datum_t)f));
			if (rc < 0)
				return rc;
		}
		last = families_allowed[i];
	}
	/* Every larger value, including any with high bits set. */
	return rule1(ctx, name, SCMP_A0(SCMP_CMP_GE,
	    (scmp_datum_t)(last + 1)));
}

/*
 * personality(): the query (0xffffffff) and safe personas pass; an unsafe
 * flag is denied when bit 31 is clear, and with bit 31 set anything but
 * the all-ones query is denied (one rule per clear bit).
 */
static int
personality_rules(scmp_filter_ctx ctx)
{
	size_t n = sizeof personality_unsafe / sizeof personality_unsafe[0];
	int rc;

	for (size_t i = 0; i < n; i++) {
		scmp_datum_t b = personality_unsafe[i];

		rc = rule1(ctx, "personality", SCMP_A0(SCMP_CMP_MASKED_EQ,
		    b | 0x80000000ull, b));
		if (rc < 0)
			return rc;
	}
	for (int bit = 0; bit < 31; bit++) {
		rc = rule1(ctx, "personality", SCMP_A0(SCMP_CMP_MASKED_EQ,
		    0x80000000ull | (1ull << bit), 0x80000000ull));
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int
add_rules(scmp_filter_ctx ctx)
{
	int rc;

	/* Terminal injection: the request is 32 bits in the kernel. */
	if ((rc = rule1(ctx, "ioctl", SCMP_A1(SCMP_CMP_MASKED_EQ, M32,
	    TIOCSTI))) < 0 || (rc = rule1(ctx, "ioctl",
	    SCMP_A1(SCMP_CMP_MASKED_EQ, M32, TIOCLINUX))) < 0)
		return rc;
	/* New user namespaces (bwrap --disable-userns is the other lock). */
	if ((rc = rule1(ctx, "unshare", SCMP_A0(SCMP_CMP_MASKED_EQ,
	    CLONE_NEWUSER, CLONE_NEWUSER))) < 0 || (rc = rule1(ctx, "clone",
	    SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER))) < 0)
		return rc;
	if ((rc = families(ctx, "socket")) < 0 ||
	    (rc = families(ctx, "socketpair")) < 0)
		return rc;
	if ((rc = personality_rules(ctx)) < 0)
		return rc;
	for (size_t i = 0; i < sizeof deny_all / sizeof deny_all[0]; i++) {
		if ((rc = rule(ctx, deny_all[i].err, deny_all[i].name, 0,
		    NULL)) < 0)
			return rc;
	}
	return 0;
}

int
sbx_seccomp_build(unsigned char **bpf, size_t *len)
{
	scmp_filter_ctx ctx;
	unsigned char *buf = NULL;
	struct stat sb;
	size_t off = 0;
	ssize_t n;
	int fd = -1, rc;

	if (bpf == NULL || len == NULL)
		return -EINVAL;
	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL)
		return -ENOMEM;
	/*
	 * x86_64 only: a syscall through any other ABI (i386 int 0x80, x32)
	 * is refused whole rather than filtered rule by rule.
	 */
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
	    SCMP_ACT_ERRNO(EPERM))) < 0)
		goto out;
	if ((rc = add_rules(ctx)) < 0)
		goto out;
	if ((fd = memfd_create("corral-seccomp", MFD_CLOEXEC)) < 0) {
		rc = -errno;
		goto out;
	}
	if ((rc = seccomp_export_bpf(ctx, fd)) < 0)
		goto out;
	if (fstat(fd, &sb) < 0 || sb.st_size <= 0 ||
	    sb.st_size % (off_t)sizeof(struct sock_filter) != 0) {
		rc = -EIO;
		goto out;
	}
	if ((buf = malloc((size_t)sb.st_size)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	while (off < (size_t)sb.st_size) {
		n = pread(fd, buf + off, (size_t)sb.st_size - off, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : -EIO;
			goto out;
		}
		off += (size_t)n;
	}
	*bpf = buf;
	*len = off;
	buf = NULL;
	rc = 0;
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	seccomp_release(ctx);
	return rc;
}

int
sbx_seccomp_hash(char hex[SBX_SHA256_HEX])
{
	unsigned char *bpf = NULL;
	size_t len = 0;
	int rc;

	if ((rc = sbx_seccomp_build(&bpf, &len)) < 0)
		return rc;
	rc = sbx_sha256_hex(bpf, len, hex);
	free(bpf);
	return rc;
}

int
sbx_seccomp_load(const unsigned char *bpf, size_t len)
{
	struct sock_fprog prog;

	if (bpf == NULL || len == 0 || len % sizeof(struct sock_filter) != 0 ||
	    len / sizeof(struct sock_filter) > BPF_MAXINSNS)
		return -EINVAL;
	prog.len = (unsigned short)(len / sizeof(struct sock_filter));
	prog.filter = (struct sock_filter *)(uintptr_t)bpf;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
		return -errno;
	return 0;
}
