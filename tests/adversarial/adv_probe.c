/*
 * adv_probe.c: the adversarial suite's misbehaving agent (SPEC 8, SANDBOX.md
 * probes). One binary, many verbs; it runs inside a real lease (committed
 * into the test repository, so it is /work/bin/adv_probe there) and tries
 * what a hostile agent would. It never decides whether it succeeded: every
 * verdict is taken on the host side by tests/adversarial/run.sh, from
 * canaries, listeners and /proc. What it prints is only for the transcript.
 *
 *	adv_probe VERB [ARG...]
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/vm_sockets.h>

int main(int, char **);

static void
say(const char *verb, const char *what, int rc)
{
	printf("%s: %s: %s\n", verb, what, rc < 0 ? strerror(errno) : "ok");
	fflush(stdout);
}

/* Push each byte of s into the terminal's input (TIOCSTI). */
static int
tiocsti(const char *s, int high)
{
	unsigned long req = TIOCSTI;
	int rc = 0;

	if (high)
		req |= 1ul << 32;	/* the CVE-2019-10063 shape */
	for (; *s != '\0'; s++) {
		char ch = *s;

		rc = (int)syscall(SYS_ioctl, 0, req, &ch);
		if (rc < 0)
			break;
	}
	return rc;
}

static int
connect_in(int family, const char *addr, int port, int type)
{
	struct sockaddr_in6 s6;
	struct sockaddr_in s4;
	int fd = socket(family, type | SOCK_CLOEXEC, 0), rc;
	const char msg[] = "adv-probe-was-here\n";

	if (fd < 0)
		return -1;
	if (family == AF_INET) {
		memset(&s4, 0, sizeof s4);
		s4.sin_family = AF_INET;
		s4.sin_port = htons((uint16_t)port);
		inet_pton(AF_INET, addr, &s4.sin_addr);
		rc = connect(fd, (struct sockaddr *)&s4, sizeof s4);
	} else {
		memset(&s6, 0, sizeof s6);
		s6.sin6_family = AF_INET6;
		s6.sin6_port = htons((uint16_t)port);
		inet_pton(AF_INET6, addr, &s6.sin6_addr);
		rc = connect(fd, (struct sockaddr *)&s6, sizeof s6);
	}
	if (rc == 0)
		rc = (int)send(fd, msg, sizeof msg - 1, MSG_NOSIGNAL);
	close(fd);
	return rc < 0 ? -1 : 0;
}

static int
connect_unix(const char *path, int abstract)
{
	struct sockaddr_un sa;
	socklen_t len;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	if (fd < 0)
		return -1;
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	if (abstract) {
		strncpy(sa.sun_path + 1, path, sizeof sa.sun_path - 2);
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
		    strlen(path));
	} else {
		strncpy(sa.sun_path, path, sizeof sa.sun_path - 1);
		len = sizeof sa;
	}
	rc = connect(fd, (struct sockaddr *)&sa, len);
	if (rc == 0)
		rc = (int)send(fd, "adv\n", 4, MSG_NOSIGNAL);
	close(fd);
	return rc < 0 ? -1 : 0;
}

/* Wait for the host to look, then a line on the terminal ends it. */
static void
hold(void)
{
	char buf[64];

	printf("holding\n");
	fflush(stdout);
	if (read(0, buf, sizeof buf) < 0) {
		/* the host ends us either way */
	}
}

static int
daemonize(const char *pidfile)
{
	pid_t p = fork();

	if (p < 0)
		return -1;
	if (p > 0) {
		waitpid(p, NULL, 0);
		return 0;
	}
	setsid();
	if (fork() != 0)
		_exit(0);
	{
		FILE *f = fopen(pidfile, "w");

		if (f != NULL) {
			fprintf(f, "%d\n", (int)getpid());
			fclose(f);
		}
	}
	close(0);
	close(1);
	close(2);
	for (;;)
		pause();
}

static void
fill(const char *dir, int files) __attribute__((noreturn));

static void
fill(const char *dir, int files)
{
	char path[4096], buf[65536];
	long n = 0;

	memset(buf, 'x', sizeof buf);
	for (;; n++) {
		int fd;

		snprintf(path, sizeof path, "%s/f%ld", dir, n);
		if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0)
			break;
		if (!files) {
			while (write(fd, buf, sizeof buf) > 0)
				;
			close(fd);
			break;
		}
		close(fd);
	}
	printf("fill: stopped after %ld: %s\n", n, strerror(errno));
	/* Stay: the host, not our exit, ends the lease at the limit. */
	for (;;)
		pause();
}

int
main(int argc, char **argv)
{
	const char *v = argc > 1 ? argv[1] : "";
	const char *a = argc > 2 ? argv[2] : "";
	const char *b = argc > 3 ? argv[3] : "";
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (strcmp(v, "tiocsti") == 0) {
		int high = strcmp(b, "high") == 0;

		say(v, high ? "high bits" : "plain", tiocsti(a, high));
	} else if (strcmp(v, "tioclinux") == 0) {
		char sub[2] = { 6, 0 };	/* TIOCL_GETSEL-ish: any subcode */

		say(v, "ioctl", ioctl(0, TIOCLINUX, sub));
		say(v, "ioctl high bits", (int)syscall(SYS_ioctl, 0,
		    (unsigned long)TIOCLINUX | (1ul << 32), sub));
	} else if (strcmp(v, "tcp4") == 0) {
		say(v, a, connect_in(AF_INET, a, atoi(b), SOCK_STREAM));
	} else if (strcmp(v, "tcp6") == 0) {
		say(v, a, connect_in(AF_INET6, a, atoi(b), SOCK_STREAM));
	} else if (strcmp(v, "udp4") == 0) {
		say(v, a, connect_in(AF_INET, a, atoi(b), SOCK_DGRAM));
	} else if (strcmp(v, "abstract") == 0) {
		say(v, a, connect_unix(a, 1));
	} else if (strcmp(v, "unix") == 0) {
		say(v, a, connect_unix(a, 0));
	} else if (strcmp(v, "vsock") == 0) {
		int fd = socket(AF_VSOCK, SOCK_STREAM, 0);

		say(v, "socket", fd);
		if (fd >= 0) {
			struct sockaddr_vm vm = { .svm_family = AF_VSOCK,
				.svm_cid = VMADDR_CID_LOCAL,
				.svm_port = (unsigned)atoi(a) };

			say(v, "connect", connect(fd, (struct sockaddr *)&vm,
			    sizeof vm));
		}
		hold();	/* the host looks for our vsock socket */
	} else if (strcmp(v, "uring") == 0) {
		unsigned char params[120];

		memset(params, 0, sizeof params);
		rc = (int)syscall(425 /* io_uring_setup */, 4, params);
		say(v, "io_uring_setup", rc);
		hold();	/* the host looks for an io_uring fd */
	} else if (strcmp(v, "userns") == 0) {
		say(v, "unshare(CLONE_NEWUSER)", unshare(CLONE_NEWUSER));
		say(v, "unshare(CLONE_NEWNS)", unshare(CLONE_NEWNS));
		mkdir("/tmp/m", 0700);
		say(v, "mount tmpfs", mount("none", "/tmp/m", "tmpfs", 0,
		    NULL));
		say(v, "mount bind /", mount("/", "/tmp/m", NULL, MS_BIND,
		    NULL));
		say(v, "fsopen", (int)syscall(430, "tmpfs", 0));
		say(v, "open_tree", (int)syscall(428, AT_FDCWD, "/", 0));
		say(v, "pivot_root", (int)syscall(SYS_pivot_root, "/tmp",
		    "/tmp/m"));
		say(v, "chroot", chroot("/tmp"));
		say(v, "setuid(0)", setuid(0));
		hold();	/* the host reads our credentials */
	} else if (strcmp(v, "ptrace") == 0) {
		say(v, "attach parent", (int)ptrace(PTRACE_ATTACH, getppid(),
		    NULL, NULL));
		say(v, "attach pid 1", (int)ptrace(PTRACE_ATTACH, 1, NULL,
		    NULL));
		say(v, "process_vm_readv", (int)syscall(SYS_process_vm_readv,
		    1, NULL, 0, NULL, 0, 0));
	} else if (strcmp(v, "keyring") == 0) {
		say(v, "add_key", (int)syscall(SYS_add_key, "user",
		    "adv-probe", "x", 1, -3 /* @u */));
		say(v, "keyctl read @u", (int)syscall(SYS_keyctl, 11, -3, NULL,
		    0));
		say(v, "bpf", (int)syscall(SYS_bpf, 0, NULL, 0));
		say(v, "perf_event_open", (int)syscall(SYS_perf_event_open,
		    NULL, 0, -1, -1, 0));
		hold();
	} else if (strcmp(v, "fds") == 0) {
		hold();	/* the host lists our fds */
	} else if (strcmp(v, "hold") == 0) {
		hold();
	} else if (strcmp(v, "killall") == 0) {
		say(v, "kill -1", kill(-1, SIGKILL));
		for (int p = 2; p < 65536; p++)
			kill(p, SIGKILL);
		say(v, "kill every pid", 0);
	} else if (strcmp(v, "forkbomb") == 0) {
		for (int i = 0; i < 1000000; i++)
			if (fork() == 0)
				for (;;)
					if (fork() < 0)
						pause();
		for (;;)
			pause();
	} else if (strcmp(v, "memhog") == 0) {
		for (size_t mb = 0;; mb++) {
			char *p = malloc(1 << 20);

			if (p == NULL) {
				printf("memhog: malloc failed at %zu MiB\n",
				    mb);
				for (;;)
					pause();
			}
			memset(p, (int)mb, 1 << 20);
		}
	} else if (strcmp(v, "spin") == 0) {
		volatile unsigned long x = 0;

		for (;;)
			x++;
	} else if (strcmp(v, "flood") == 0) {
		static char buf[65536];

		memset(buf, 'y', sizeof buf);
		for (;;)
			if (write(1, buf, sizeof buf) < 0 && errno != EINTR &&
			    errno != EAGAIN)
				break;
	} else if (strcmp(v, "diskfill") == 0) {
		mkdir(a, 0755);
		fill(a, 0);
	} else if (strcmp(v, "inodes") == 0) {
		mkdir(a, 0755);
		fill(a, 1);
	} else if (strcmp(v, "daemon") == 0) {
		say(v, "double fork", daemonize(a));
	} else {
		fprintf(stderr, "adv_probe: unknown verb '%s'\n", v);
		return 2;
	}
	return 0;
}
