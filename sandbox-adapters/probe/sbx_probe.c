/*
 * sbx_probe.c: corral-sbx-probe, run by the preflight (SPEC 8.7;
 * SANDBOX.md 5.c) inside a real sandbox, under the real seccomp filter.
 * It tries what the zone must refuse and prints one line per attempt,
 * "NAME RESULT" (RESULT: EPERM, ENOSYS, ok, or an errno name/number). The
 * doctor never takes these lines on trust where the host can see for
 * itself: with --pause it writes PROBE-READY to its terminal and waits for
 * a line, so the host can read its /proc entry first.
 *
 *	corral-sbx-probe [--inject MARK] [--tcp PORT] [--pause]
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

int main(int, char **);

static void
report(const char *name, long r, int err)
{
	if (r >= 0) {
		printf("%s ok\n", name);
		return;
	}
	switch (err) {
	case EPERM:
		printf("%s EPERM\n", name);
		break;
	case ENOSYS:
		printf("%s ENOSYS\n", name);
		break;
	case EACCES:
		printf("%s EACCES\n", name);
		break;
	case ECONNREFUSED:
		printf("%s ECONNREFUSED\n", name);
		break;
	case ENETUNREACH:
		printf("%s ENETUNREACH\n", name);
		break;
	default:
		printf("%s errno %d\n", name, err);
	}
}

#define TRY(name, expr) do {						\
	long r_ = (long)(expr);						\
	report((name), r_, r_ < 0 ? errno : 0);				\
} while (0)

/* A socket call whose fd, if any, is closed again. */
static long
sock(int family, int type)
{
	int fd = socket(family, type, 0);

	if (fd >= 0)
		close(fd);
	return fd;
}

static long
clone_newuser(void)
{
	long r = syscall(SYS_clone, (long)(CLONE_NEWUSER | SIGCHLD), 0L, 0L,
	    0L, 0L);

	if (r == 0)
		_exit(0);
	if (r > 0)
		waitpid((pid_t)r, NULL, 0);
	return r;
}

static long
tcp_connect(int port)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), r, e;

	if (fd < 0)
		return -1;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = htons((unsigned short)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	r = connect(fd, (struct sockaddr *)&a, sizeof a);
	e = errno;
	close(fd);
	errno = e;
	return r;
}

static void
fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int self = d != NULL ? dirfd(d) : -1;

	printf("fds");
	while (d != NULL && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' || atoi(e->d_name) == self)
			continue;
		printf(" %s", e->d_name);
	}
	printf("\n");
	if (d != NULL)
		closedir(d);
}

static void
ifaces(void)
{
	struct if_nameindex *ifs = if_nameindex(), *i;

	printf("ifaces");
	for (i = ifs; i != NULL && i->if_index != 0; i++)
		printf(" %s", i->if_name);
	printf("\n");
	if (ifs != NULL)
		if_freenameindex(ifs);
}

int
main(int argc, char **argv)
{
	const char *mark = NULL;
	int port = 0, pause_ = 0;
	char c = 'x', line[64];

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--inject") == 0 && i + 1 < argc)
			mark = argv[++i];
		else if (strcmp(argv[i], "--tcp") == 0 && i + 1 < argc)
			port = atoi(argv[++i]);
		else if (strcmp(argv[i], "--pause") == 0)
			pause_ = 1;
		else {
			fprintf(stderr, "usage: corral-sbx-probe "
			    "[--inject MARK] [--tcp PORT] [--pause]\n");
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("uid %d\n", (int)getuid());
	/* Terminal injection: each byte of the mark, then the high bits. */
	if (mark != NULL && *mark != '\0') {
		long r = 0;
		int err = 0;

		for (const char *m = mark; *m != '\0' && r >= 0; m++) {
			r = ioctl(0, TIOCSTI, m);
			err = errno;
		}
		report("tiocsti", r, err);
		r = syscall(SYS_ioctl, 0L, (long)(TIOCSTI | (1ul << 32)),
		    (long)mark);
		report("tiocsti_hi", r, r < 0 ? errno : 0);
	} else {
		TRY("tiocsti", ioctl(0, TIOCSTI, &c));
		TRY("tiocsti_hi", syscall(SYS_ioctl, 0L,
		    (long)(TIOCSTI | (1ul << 32)), (long)&c));
	}
	c = 2;	/* TIOCL_GETSHIFTSTATE-style subcode: harmless */
	TRY("tioclinux", ioctl(0, TIOCLINUX, &c));
	TRY("unshare_user", unshare(CLONE_NEWUSER));
	TRY("clone_newuser", clone_newuser());
	TRY("vsock", sock(AF_VSOCK, SOCK_STREAM));
	TRY("packet", sock(AF_PACKET, SOCK_RAW));
	TRY("io_uring_setup", syscall(SYS_io_uring_setup, 1L, 0L));
	TRY("mount", mount("none", "/tmp", "tmpfs", 0, NULL));
	TRY("ptrace", syscall(SYS_ptrace, 0x4206L, 1L, 0L, 0L));
	TRY("keyctl", syscall(SYS_keyctl, 0L, -3L, 0L));
	TRY("bpf", syscall(SYS_bpf, 0L, 0L, 0L));
	TRY("setns", syscall(SYS_setns, 0L, 0L));
	if (port > 0)
		TRY("tcp_host", tcp_connect(port));
	ifaces();
	fds();
	if (pause_) {
		/* Let the host read /proc/<us> before we go. */
		if (write(0, "PROBE-READY\r\n", 13) < 0)
			return 3;
		if (read(0, line, sizeof line) < 0)
			return 3;
	}
	printf("end\n");
	return 0;
}
