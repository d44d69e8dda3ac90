/*
 * sbx_init.c: corral-sbx-init, the small helper that runs first inside a
 * sandbox (SPEC 8.3). bwrap starts it in a new session without a
 * controlling terminal; it makes the lease PTY on fd 0 its controlling
 * terminal, starts the agent as the foreground process group (so resize
 * reaches it as SIGWINCH and TIOCSTI can reach only its own input), then
 * waits and exits with the agent's status.
 *
 *	corral-sbx-init [--egress SOCK [--loopback PORT]] [--gateway SOCK]
 *	    [--cred-env NAME] -- CMD [ARG...]
 *
 * --egress: also be the zone's egress forwarder (sbx_forward.c) on
 * 127.0.0.1:3128, piping to the proxy socket SOCK, until the agent exits.
 * --gateway: also pipe 127.0.0.1:3129 to the model gateway's socket SOCK.
 * --cred-env: give the agent (only) NAME set to the minted credential read
 * from SBX_CRED_IN, so the value is never on an argv (SPEC 8.5).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "sbx_forward.h"

#define SBX_CRED_IN "/run/corral/credential"	/* sbx_cred_plan_add */
#define SBX_CRED_MAX 4096

int main(int, char **);

static void
die(const char *what)
{
	fprintf(stderr, "corral-sbx-init: %s: %s\r\n", what, strerror(errno));
	_exit(127);
}

/* NAME=the credential file's one line, in this process's environment. */
static void
cred_env(const char *name)
{
	char buf[SBX_CRED_MAX + 1];
	size_t len = 0;
	ssize_t n;
	int fd;

	if ((fd = open(SBX_CRED_IN, O_RDONLY | O_CLOEXEC)) < 0)
		die(SBX_CRED_IN);
	while (len < SBX_CRED_MAX &&
	    (n = read(fd, buf + len, SBX_CRED_MAX - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die(SBX_CRED_IN);
		len += (size_t)n;
	}
	close(fd);
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		len--;
	buf[len] = '\0';
	if (len == 0 || strlen(buf) != len || setenv(name, buf, 1) < 0) {
		errno = EINVAL;
		die(SBX_CRED_IN);
	}
	explicit_bzero(buf, sizeof buf);
}

int
main(int argc, char **argv)
{
	struct sbx_forward_opts fw = { .egress_fd = -1, .loopback_fd = -1,
		.gateway_fd = -1 };
	const char *cred = NULL;
	int i = 1, status;
	pid_t child, w;

	for (; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--egress") == 0)
			fw.sock = argv[i + 1];
		else if (strcmp(argv[i], "--loopback") == 0)
			fw.loopback_port = (unsigned)atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--gateway") == 0)
			fw.gateway_sock = argv[i + 1];
		else if (strcmp(argv[i], "--cred-env") == 0)
			cred = argv[i + 1];
		else
			break;
	}
	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	if (i >= argc) {
		fprintf(stderr, "usage: corral-sbx-init [--egress SOCK "
		    "[--loopback PORT]] [--gateway SOCK] [--cred-env NAME] -- "
		    "CMD [ARG...]\n");
		return 2;
	}
	/* Listen before the agent starts, so its first request finds us. */
	if (fw.sock != NULL) {
		if ((fw.egress_fd = sbx_forward_listen(3128)) < 0) {
			errno = -fw.egress_fd;
			die("listen 127.0.0.1:3128");
		}
		if (fw.loopback_port != 0 && (fw.loopback_fd =
		    sbx_forward_listen(fw.loopback_port)) < 0) {
			errno = -fw.loopback_fd;
			die("listen on the loopback grant's port");
		}
	}
	if (fw.gateway_sock != NULL && (fw.gateway_fd =
	    sbx_forward_listen(3129)) < 0) {
		errno = -fw.gateway_fd;
		die("listen 127.0.0.1:3129");
	}
	/* bwrap --new-session already made us a session leader. */
	if (setsid() < 0 && errno != EPERM)
		die("setsid");
	if (isatty(0) && ioctl(0, TIOCSCTTY, 0) < 0)
		die("TIOCSCTTY");

	signal(SIGTTOU, SIG_IGN);
	if ((child = fork()) < 0)
		die("fork");
	if (child == 0) {
		setpgid(0, 0);
		if (isatty(0))
			tcsetpgrp(0, getpid());
		signal(SIGTTOU, SIG_DFL);
		if (cred != NULL)
			cred_env(cred);
		execvp(argv[i], argv + i);
		fprintf(stderr, "corral-sbx-init: %s: %s\r\n", argv[i],
		    strerror(errno));
		_exit(127);
	}
	setpgid(child, child);
	if (fw.sock != NULL || fw.gateway_sock != NULL) {
		if (sbx_forward_run(&fw, child, &status) < 0)
			die("egress forwarder");
		goto done;
	}
	for (;;) {
		w = waitpid(-1, &status, 0);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return 127;
		if (w == child)
			break;
	}
done:
	if (WIFSIGNALED(status)) {
		signal(WTERMSIG(status), SIG_DFL);
		raise(WTERMSIG(status));
		return 128 + WTERMSIG(status);
	}
	return WEXITSTATUS(status);
}
