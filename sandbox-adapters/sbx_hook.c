/*
 * sbx_hook.c: running an operator hook command (credentials, the command
 * adapter): `/bin/sh -c 'CMD "$@"' NAME ARGS...` with corral's environment
 * plus a few CORRAL_* variables, optional bytes on stdin, stdout and stderr
 * captured with caps, the whole process group killed at the timeout.
 * Blocking; never on an event loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"

extern char **environ;

/* Does entry ("NAME=...") set a name that one of extra sets too? */
static bool
overridden(const char *entry, const char *const *extra)
{
	size_t n = strcspn(entry, "=");

	for (size_t i = 0; extra[i] != NULL; i++) {
		if (strncmp(entry, extra[i], n) == 0 && extra[i][n] == '=')
			return true;
	}
	return false;
}

static int
env_build(char ***out, const char *const *extra)
{
	size_t n = 0, k = 0, ne = 0;
	char **v;

	while (environ != NULL && environ[n] != NULL)
		n++;
	while (extra[ne] != NULL)
		ne++;
	if ((v = calloc(n + ne + 1, sizeof *v)) == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!overridden(environ[i], extra))
			v[k++] = environ[i];
	}
	for (size_t i = 0; i < ne; i++)
		v[k++] = (char *)extra[i];
	v[k] = NULL;
	*out = v;
	return 0;
}

/* Read what is there into buf (up to cap, NUL-terminated), drop beyond. */
static void
capture(int fd, char *buf, size_t *len, size_t cap, bool *over, bool *eof)
{
	char sink[512];
	ssize_t n;

	if (*len < cap)
		n = read(fd, buf + *len, cap - *len);
	else
		n = read(fd, sink, sizeof sink);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		*eof = true;
		return;
	}
	if (*len < cap)
		*len += (size_t)n;
	else
		*over = true;
	buf[*len] = '\0';
}

void
sbx__hook_clear(struct sbx__hook *r)
{
	if (r == NULL)
		return;
	if (r->out != NULL) {
		explicit_bzero(r->out, r->outcap + 1);
		free(r->out);
	}
	explicit_bzero(r, sizeof *r);
}

int
sbx__hook_run(const char *cmd, const char *const *args,
    const char *const *extra_env, const char *in, size_t inlen,
    unsigned long long timeout_ms, size_t outcap, struct sbx__hook *r)
{
	static const char *const none[] = { NULL };
	int ip[2] = { -1, -1 }, op[2] = { -1, -1 }, ep[2] = { -1, -1 };
	const char *argv[16];
	char *line = NULL, **envp = NULL;
	bool oeof = false, eeof = false, eover = false;
	size_t na = 0, inoff = 0;
	uint64_t deadline;
	pid_t pid, w;
	int rc = 0;

	memset(r, 0, sizeof *r);
	if (cmd == NULL || *cmd == '\0')
		return -EINVAL;
	r->outcap = outcap;
	if ((r->out = calloc(1, outcap + 1)) == NULL ||
	    asprintf(&line, "%s \"$@\"", cmd) < 0 ||
	    env_build(&envp, extra_env ? extra_env : none) < 0) {
		line = NULL;
		rc = -ENOMEM;
		goto out;
	}
	argv[na++] = "/bin/sh";
	argv[na++] = "-c";
	argv[na++] = line;
	for (size_t i = 0; args != NULL && args[i] != NULL && na < 15; i++)
		argv[na++] = args[i];
	argv[na] = NULL;
	/* stdin is a socket: a hook that exits unread cannot SIGPIPE us. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ip) < 0 ||
	    pipe2(op, O_CLOEXEC) < 0 || pipe2(ep, O_CLOEXEC) < 0) {
		rc = -errno;
		goto out;
	}
	if ((pid = fork()) < 0) {
		rc = -errno;
		goto out;
	}
	if (pid == 0) {
		/* Only async-signal-safe calls from here to exec. */
		setpgid(0, 0);
		if (dup2(ip[0], 0) < 0 || dup2(op[1], 1) < 0 ||
		    dup2(ep[1], 2) < 0)
			_exit(127);
		closefrom(3);
		signal(SIGPIPE, SIG_DFL);
		execve("/bin/sh", (char *const *)argv, envp);
		_exit(127);
	}
	setpgid(pid, pid);
	close(ip[0]);
	close(op[1]);
	close(ep[1]);
	ip[0] = op[1] = ep[1] = -1;
	if (in == NULL || inlen == 0) {
		close(ip[1]);
		ip[1] = -1;
	}
	deadline = sbx__now_ms() +
	    (timeout_ms ? timeout_ms : SBX_HOOK_TIMEOUT_MS);
	while (!oeof || !eeof) {
		struct pollfd pf[3] = {
			{ .fd = oeof ? -1 : op[0], .events = POLLIN },
			{ .fd = eeof ? -1 : ep[0], .events = POLLIN },
			{ .fd = ip[1], .events = POLLOUT },
		};
		uint64_t now = sbx__now_ms();

		if (now >= deadline) {
			kill(-pid, SIGKILL);
			r->timed_out = true;
			break;
		}
		if (poll(pf, 3, (int)(deadline - now)) < 0 && errno != EINTR)
			break;
		if (pf[0].revents)
			capture(op[0], r->out, &r->outlen, outcap,
			    &r->out_over, &oeof);
		if (pf[1].revents)
			capture(ep[0], r->err, &r->errlen, sizeof r->err - 1,
			    &eover, &eeof);
		if (ip[1] >= 0 && pf[2].revents) {
			ssize_t n = send(ip[1], in + inoff, inlen - inoff,
			    MSG_NOSIGNAL | MSG_DONTWAIT);

			if (n > 0)
				inoff += (size_t)n;
			if ((n < 0 && errno != EAGAIN && errno != EINTR) ||
			    inoff == inlen) {
				close(ip[1]);
				ip[1] = -1;
			}
		}
	}
	/* What the hook left behind in its group goes with it. */
	kill(-pid, SIGKILL);
	while ((w = waitpid(pid, &r->status, 0)) < 0 && errno == EINTR)
		;
	if (w < 0)
		rc = -errno;
out:
	free(line);
	free(envp);
	for (int i = 0; i < 2; i++) {
		if (ip[i] >= 0)
			close(ip[i]);
		if (op[i] >= 0)
			close(op[i]);
		if (ep[i] >= 0)
			close(ep[i]);
	}
	if (rc < 0)
		sbx__hook_clear(r);
	return rc;
}

void
sbx__hook_why(char *why, size_t whysz, const char *hook,
    const struct sbx__hook *r, const char *secret)
{
	char *err = sbx_scrub_copy(r->err, r->errlen, secret, NULL);
	size_t n;

	if (err != NULL) {
		n = strlen(err);
		while (n > 0 && (err[n - 1] == '\n' || err[n - 1] == '\r'))
			err[--n] = '\0';
		/* One line of it, made printable. */
		for (size_t i = 0; i < n; i++) {
			if ((unsigned char)err[i] < 0x20)
				err[i] = ' ';
		}
	}
	if (r->timed_out)
		snprintf(why, whysz, "%s hook timed out", hook);
	else if (WIFEXITED(r->status))
		snprintf(why, whysz, "%s hook exited %d%s%.200s", hook,
		    WEXITSTATUS(r->status), err && *err ? ": " : "",
		    err ? err : "");
	else
		snprintf(why, whysz, "%s hook killed by signal %d", hook,
		    WTERMSIG(r->status));
	free(err);
}
