/*
 * adv_nouserns.c: run a command as if this host had user namespaces turned
 * off (user.max_user_namespaces = 0), for the bad-input tests of the
 * sandbox (issue 6): a seccomp filter on this process tree only makes
 * unshare() and clone() with CLONE_NEWUSER fail with ENOSPC, as the kernel
 * does at that limit, and clone3() (whose flags a filter cannot read) with
 * ENOSYS so libc falls back to clone(). The host's sysctl is never touched
 * (it is not writable on every host, and other tests run meanwhile).
 *
 *	adv_nouserns CMD [ARG...]
 */
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int, char **);

int
main(int argc, char **argv)
{
	scmp_filter_ctx f;
	int rc;

	if (argc < 2) {
		fprintf(stderr, "usage: adv_nouserns CMD [ARG...]\n");
		return 2;
	}
	if ((f = seccomp_init(SCMP_ACT_ALLOW)) == NULL)
		return 1;
	/* Root already may: keep no_new_privs off, as on a real host. */
	rc = seccomp_attr_set(f, SCMP_FLTATR_CTL_NNP, 0);
	if (rc == 0)
		rc = seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOSPC),
		    SCMP_SYS(unshare), 1, SCMP_A0(SCMP_CMP_MASKED_EQ,
		    CLONE_NEWUSER, CLONE_NEWUSER));
	if (rc == 0)
		rc = seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOSPC),
		    SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ,
		    CLONE_NEWUSER, CLONE_NEWUSER));
	if (rc == 0)
		rc = seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOSYS),
		    SCMP_SYS(clone3), 0);
	if (rc == 0)
		rc = seccomp_load(f);
	seccomp_release(f);
	if (rc < 0) {
		fprintf(stderr, "adv_nouserns: seccomp: %s\n", strerror(-rc));
		return 1;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "adv_nouserns: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
