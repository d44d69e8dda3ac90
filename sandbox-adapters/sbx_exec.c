/*
 * sbx_exec.c: running a plan without a PTY (SPEC 8.2): the exec zone's
 * checks and the doctor's probes. The child runs the plan's pre-exec
 * recipe (sbx_recipe.c, as pty/proc.c does on the PTY); the parent reads
 * stdout and stderr with a byte cap and a wall-time limit. Blocking by design:
 * callers on an event loop run it through uv_queue_work.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"

/* Past the cap, output is dropped; this much more and the run is killed. */
#define OVERFLOW_FACTOR 4
/* After the child is reaped, how long leftover writers may keep a pipe. */
#define DRAIN_MS 500

unsigned long long
sbx__now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000 +
	    (unsigned long long)ts.tv_nsec / 1000000;
}

/* ---- the parent ----------------------------------------------------- */

struct sink {
	int fd;
	char *buf;
	size_t len;
};

/* Read what is there; keep it while the shared budget lasts. */
static void
drain(struct sink *s, size_t cap, size_t *kept, unsigned long long *dropped)
{
	char tmp[16384];
	ssize_t n;

	for (;;) {
		n = read(s->fd, tmp, sizeof tmp);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			close(s->fd);
			s->fd = -1;
			return;
		}
		size_t take = cap - *kept < (size_t)n ? cap - *kept :
		    (size_t)n;

		memcpy(s->buf + s->len, tmp, take);
		s->len += take;
		*kept += take;
		*dropped += (size_t)n - take;
	}
}

void
sbx_exec_result_clear(struct sbx_exec_result *r)
{
	if (r == NULL)
		return;
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof *r);
}

int
sbx_exec_run(struct sbx_plan *pl, const struct sbx_exec_opts *o,
    struct sbx_exec_result *res)
{
	int op[2] = { -1, -1 }, ep[2] = { -1, -1 }, xp[2] = { -1, -1 };
	int in = -1, rc, st = 0;
	struct sink s[2];
	unsigned long long start = sbx__now_ms(), deadline, reaped_at = 0;
	unsigned long long dropped = 0;
	size_t cap, kept = 0;
	struct sbx_recipe rcp;
	char msg[256];
	pid_t pid, w;
	bool reaped = false;

	if (pl == NULL || o == NULL || res == NULL || pl->argv == NULL ||
	    pl->argv[0] == NULL)
		return -EINVAL;
	memset(res, 0, sizeof *res);
	cap = o->cap;
	if ((rc = sbx_plan_open_data(pl)) < 0)
		return rc;
	if ((res->out = malloc(cap + 1)) == NULL ||
	    (res->err = malloc(cap + 1)) == NULL) {
		sbx_exec_result_clear(res);
		return -ENOMEM;
	}
	if (pipe2(op, O_CLOEXEC) < 0 || pipe2(ep, O_CLOEXEC) < 0 ||
	    pipe2(xp, O_CLOEXEC) < 0) {
		rc = -errno;
		goto fail;
	}
	in = o->stdin_fd >= 0 ? o->stdin_fd : open("/dev/null",
	    O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		rc = -errno;
		goto fail;
	}
	rcp = (struct sbx_recipe){ .plan = pl, .stdio = { in, op[1], ep[1] },
		.errfd = xp[1] };
	if ((rc = sbx_recipe_prepare(&rcp, NULL)) < 0)
		goto fail;
	if ((pid = fork()) < 0) {
		rc = -errno;
		sbx_recipe_clear(&rcp);
		goto fail;
	}
	/* The child runs the recipe only (xp[0] is close-on-exec). */
	if (pid == 0)
		sbx_recipe_exec(&rcp);
	sbx_recipe_clear(&rcp);
	close(op[1]);
	close(ep[1]);
	close(xp[1]);
	op[1] = ep[1] = xp[1] = -1;
	if (o->stdin_fd < 0)
		close(in);
	in = -1;
	/* EOF on the error pipe: exec happened. */
	rc = sbx_recipe_wait(xp[0], msg, sizeof msg);
	close(xp[0]);
	xp[0] = -1;
	if (rc < 0) {
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		goto fail;
	}
	res->pid = pid;
	s[0] = (struct sink){ op[0], res->out, 0 };
	s[1] = (struct sink){ ep[0], res->err, 0 };
	op[0] = ep[0] = -1;
	fcntl(s[0].fd, F_SETFL, O_NONBLOCK);
	fcntl(s[1].fd, F_SETFL, O_NONBLOCK);
	deadline = o->timeout_ms ? start + o->timeout_ms : 0;
	while (!reaped || s[0].fd >= 0 || s[1].fd >= 0) {
		struct pollfd pf[2];
		int np = 0, wait_ms = 50;
		unsigned long long now = sbx__now_ms();

		if (!reaped) {
			w = waitpid(pid, &st, WNOHANG);
			if (w == pid) {
				reaped = true;
				reaped_at = now;
			}
		}
		if (reaped && now >= reaped_at + DRAIN_MS)
			break;
		if (!reaped && deadline != 0 && now >= deadline &&
		    !res->timed_out) {
			res->timed_out = true;
			kill(pid, SIGKILL);
		}
		if (!reaped && dropped > (unsigned long long)cap *
		    OVERFLOW_FACTOR && !res->output_killed) {
			res->output_killed = true;
			kill(pid, SIGKILL);
		}
		for (int i = 0; i < 2; i++) {
			if (s[i].fd >= 0)
				pf[np++] = (struct pollfd){ s[i].fd, POLLIN,
					0 };
		}
		if (np > 0 && poll(pf, (nfds_t)np, wait_ms) < 0 &&
		    errno != EINTR)
			break;
		if (np == 0 && !reaped) {
			struct timespec ts = { 0, 10 * 1000 * 1000 };

			nanosleep(&ts, NULL);
		}
		for (int i = 0; i < 2; i++) {
			if (s[i].fd >= 0)
				drain(&s[i], cap, &kept, &dropped);
		}
	}
	for (int i = 0; i < 2; i++) {
		if (s[i].fd >= 0)
			close(s[i].fd);
	}
	if (!reaped) {
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	res->out[s[0].len] = '\0';
	res->err[s[1].len] = '\0';
	res->out_len = s[0].len;
	res->err_len = s[1].len;
	res->truncated = dropped > 0;
	res->wstatus = st;
	res->wall_ms = sbx__now_ms() - start;
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (op[i] >= 0)
			close(op[i]);
		if (ep[i] >= 0)
			close(ep[i]);
		if (xp[i] >= 0)
			close(xp[i]);
	}
	if (in >= 0 && o->stdin_fd < 0)
		close(in);
	sbx_exec_result_clear(res);
	return rc;
}

/* ---- tool versions -------------------------------------------------- */

/* The first line of a command's stdout (empty environment but LC_ALL). */
static int
first_line(char *const argv[], char *buf, size_t sz)
{
	char *const envp[] = { (char *)"LC_ALL=C", (char *)"PATH=/usr/bin:/bin",
		NULL };
	posix_spawn_file_actions_t fa;
	size_t off = 0;
	int pp[2], st, rc;
	ssize_t n;
	pid_t pid;

	buf[0] = '\0';
	if (pipe2(pp, O_CLOEXEC) < 0)
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pp[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pp[1], 2);
	rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(pp[1]);
	if (rc != 0) {
		close(pp[0]);
		return -rc;
	}
	while (off + 1 < sz) {
		n = read(pp[0], buf + off, sz - 1 - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	buf[off] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	close(pp[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return 0;
}

int
sbx_exec_tool_versions(char **text)
{
	static const struct {
		const char *name, *path, *arg;
	} tools[] = {
		{ "cc", "/usr/bin/cc", "--version" },
		{ "python3", "/usr/bin/python3", "--version" },
		{ "make", "/usr/bin/make", "--version" },
		{ "git", "/usr/bin/git", "--version" },
	};
	char line[256], real[4096], out[2048], pkgver[128];
	size_t len = 0;

	if (text == NULL)
		return -EINVAL;
	*text = NULL;
	/* sh has no --version: its real path and the package's version. */
	if (realpath("/bin/sh", real) != NULL) {
		const char *base = strrchr(real, '/');
		char *qargv[] = { (char *)"/usr/bin/dpkg-query", (char *)"-W",
			(char *)"-f=${Version}", (char *)(base ? base + 1 :
			real), NULL };

		pkgver[0] = '\0';
		if (access(qargv[0], X_OK) == 0)
			(void)first_line(qargv, pkgver, sizeof pkgver);
		len += (size_t)snprintf(out + len, sizeof out - len,
		    "sh: %s%s%s\n", real, pkgver[0] ? " " : "", pkgver);
	}
	for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
		char *argv[] = { (char *)tools[i].path, (char *)tools[i].arg,
			NULL };

		if (access(tools[i].path, X_OK) != 0)
			continue;
		if (first_line(argv, line, sizeof line) < 0 ||
		    line[0] == '\0')
			snprintf(line, sizeof line, "unknown");
		if (len < sizeof out)
			len += (size_t)snprintf(out + len, sizeof out - len,
			    "%s: %s\n", tools[i].name, line);
	}
	if (len >= sizeof out)
		len = sizeof out - 1;
	if ((*text = strndup(out, len)) == NULL)
		return -ENOMEM;
	return 0;
}
