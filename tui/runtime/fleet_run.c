/*
 * fleet_run.c: run one program of the fleet's (ssh, git) with its stdout
 * bounded, the start of its stderr kept for the reason shown, and a
 * deadline at which its whole process group is killed (issue 23). The
 * remote side's shell gets every argument quoted (tui_fleet_shquote).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tui/runtime/fleet.h"
#include "tui/tui.h"

extern char **environ;

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
child(char *const argv[], char *const env[], int in_fd, int out_fd,
    int err_fd)
{
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);

	setpgid(0, 0);
	if (devnull < 0 || dup2(in_fd >= 0 ? in_fd : devnull, 0) < 0 ||
	    dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
		_exit(127);
	close_range(3, ~0U, 0);
	signal(SIGPIPE, SIG_DFL);
	execve(argv[0], argv, env != NULL ? env : environ);
	_exit(127);
}

/* Read what fd has; false at EOF or error. */
static bool
drain(int fd, char **buf, size_t *len, size_t cap, bool *over)
{
	char tmp[16384];
	ssize_t n = read(fd, tmp, sizeof tmp);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0)
		return false;
	if (*len + (size_t)n > cap) {
		*over = true;
		n = (ssize_t)(cap - *len);
	}
	if (n > 0) {
		memcpy(*buf + *len, tmp, (size_t)n);
		*len += (size_t)n;
	}
	return true;
}

int
tui_fleet_run(char *const argv[], char *const env[], int in_fd, int out_fd,
    size_t outcap, unsigned timeout_ms, struct tui_fleet_out *o)
{
	int op[2] = { -1, -1 }, ep[2] = { -1, -1 }, st = 0, rc = 0;
	char *errbuf = NULL;
	size_t errlen = 0;
	bool oo = false, eo = false, odone, edone = false;
	int64_t deadline = mono_ms() + timeout_ms;
	pid_t pid;

	memset(o, 0, sizeof *o);
	if ((o->out = malloc(outcap + 1)) == NULL ||
	    (errbuf = malloc(sizeof o->err)) == NULL) {
		free(o->out);
		o->out = NULL;
		return -ENOMEM;
	}
	if ((out_fd < 0 && pipe2(op, O_CLOEXEC) < 0) ||
	    pipe2(ep, O_CLOEXEC) < 0) {
		rc = -errno;
		goto fail;
	}
	fflush(NULL);
	if ((pid = fork()) < 0) {
		rc = -errno;
		goto fail;
	}
	if (pid == 0)
		child(argv, env, in_fd, out_fd >= 0 ? out_fd : op[1], ep[1]);
	setpgid(pid, pid);
	if (op[1] >= 0)
		close(op[1]);
	close(ep[1]);
	op[1] = ep[1] = -1;
	odone = op[0] < 0;
	while (!odone || !edone) {
		struct pollfd p[2] = { { odone ? -1 : op[0], POLLIN, 0 },
			{ edone ? -1 : ep[0], POLLIN, 0 } };
		int64_t left = deadline - mono_ms();

		if (left <= 0) {
			o->timed_out = true;
			break;
		}
		if (poll(p, 2, (int)(left > 1000 ? 1000 : left)) < 0 &&
		    errno != EINTR)
			break;
		if (!odone && (p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			odone = !drain(op[0], &o->out, &o->outlen, outcap, &oo);
		if (!edone && (p[1].revents & (POLLIN | POLLHUP | POLLERR)))
			edone = !drain(ep[0], &errbuf, &errlen,
			    sizeof o->err - 1, &eo);
	}
	if (o->timed_out)
		kill(-pid, SIGKILL);
	/* The group may outlive the leader's pipes: wait with the deadline. */
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid || (w < 0 && errno != EINTR))
			break;
		if (mono_ms() >= deadline && !o->timed_out) {
			o->timed_out = true;
			kill(-pid, SIGKILL);
		}
		if (w == 0)
			usleep(10000);
	}
	kill(-pid, SIGKILL);	/* nothing of its group stays behind */
	o->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	o->out_over = oo;
	o->out[o->outlen] = '\0';
	memcpy(o->err, errbuf, errlen);
	o->err[errlen] = '\0';
	rc = 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (op[i] >= 0)
			close(op[i]);
		if (ep[i] >= 0)
			close(ep[i]);
	}
	free(errbuf);
	if (rc < 0) {
		free(o->out);
		o->out = NULL;
	}
	return rc;
}

void
tui_fleet_out_clear(struct tui_fleet_out *o)
{
	free(o->out);
	memset(o, 0, sizeof *o);
}

void
tui_fleet_out_why(const struct tui_fleet_out *o, char *buf, size_t sz)
{
	char safe[600];
	size_t n = strlen(o->err);

	while (n > 0 && (o->err[n - 1] == '\n' || o->err[n - 1] == '\r'))
		n--;
	tui_escape(o->err, n, safe, sizeof safe);
	if (o->timed_out)
		snprintf(buf, sz, "timed out%s%s", safe[0] ? ": " : "", safe);
	else
		snprintf(buf, sz, "exited %d%s%s", o->status, safe[0] ? ": " :
		    "", safe);
}

char *
tui_fleet_shquote(const char *s)
{
	size_t n = 2;
	char *q, *p;

	for (const char *c = s; *c != '\0'; c++)
		n += *c == '\'' ? 4 : 1;
	if ((q = p = malloc(n + 1)) == NULL)
		return NULL;
	*p++ = '\'';
	for (const char *c = s; *c != '\0'; c++) {
		if (*c == '\'') {
			memcpy(p, "'\\''", 4);
			p += 4;
		} else {
			*p++ = *c;
		}
	}
	*p++ = '\'';
	*p = '\0';
	return q;
}
