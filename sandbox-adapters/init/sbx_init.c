/*
 * sbx_init.c: corral-sbx-init, the small helper that runs first inside a
 * sandbox (SPEC 8.3). bwrap starts it in a new session without a
 * controlling terminal; it makes the lease PTY on fd 0 its controlling
 * terminal, starts the agent as the foreground process group (so resize
 * reaches it as SIGWINCH and TIOCSTI can reach only its own input), then
 * waits and exits with the agent's status.
 *
 *	corral-sbx-init -- CMD [ARG...]
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

int main(int, char **);

static void
die(const char *what)
{
	fprintf(stderr, "corral-sbx-init: %s: %s\r\n", what, strerror(errno));
	_exit(127);
}

int
main(int argc, char **argv)
{
	int i = 1, status;
	pid_t child, w;

	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	if (i >= argc) {
		fprintf(stderr, "usage: corral-sbx-init -- CMD [ARG...]\n");
		return 2;
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
		execvp(argv[i], argv + i);
		fprintf(stderr, "corral-sbx-init: %s: %s\r\n", argv[i],
		    strerror(errno));
		_exit(127);
	}
	setpgid(child, child);
	for (;;) {
		w = waitpid(-1, &status, 0);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return 127;
		if (w == child)
			break;
	}
	if (WIFSIGNALED(status)) {
		signal(WTERMSIG(status), SIG_DFL);
		raise(WTERMSIG(status));
		return 128 + WTERMSIG(status);
	}
	return WEXITSTATUS(status);
}
