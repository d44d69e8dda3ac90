/*
 * proc.c: one child process on a fresh PTY, driven by a libuv loop: openpty
 * and fork, the pre-exec recipe of an sbx_plan applied in the child (cgroup
 * join, session, fd map, close the rest, rlimits, uid drop, no_new_privs),
 * a non-blocking master read with a per-tick budget (backpressure), a
 * bounded write queue, TIOCSWINSZ resize, and reaping through a uv_signal_t
 * SIGCHLD handler with waitpid(WNOHANG).
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>
#include <uv.h>

#include "pty/pty.h"
#include "sandbox-adapters/sbx.h"

#define PROC_READ_BUF 65536
#define PROC_WRITE_CAP (1u << 20)
#define PROC_DRAIN_MS 150

struct pty_proc {
	uv_loop_t *loop;
	uv_pipe_t pipe;
	uv_signal_t sigchld;
	uv_idle_t resume;
	uv_timer_t drain;
	int nhandles;	/* open handles, for close */
	int master;
	pid_t pid;
	bool reading, paused, eof, reaped, done, closing;
	int64_t wstatus;
	size_t budget, tick_bytes, queued;
	pty_proc_read_cb on_read;
	pty_proc_exit_cb on_exit;
	void *ud;
	void (*close_cb)(void *);
	void *close_ud;
	char rbuf[PROC_READ_BUF];
};

struct proc_write {
	uv_write_t req;
	struct pty_proc *p;
	size_t len;
	char data[];
};

static void proc_read_start(struct pty_proc *);

/* ---- child side: everything between fork and exec -------------------- */

static void
child_fail(int errfd, const char *what, int err)
{
	char msg[256];
	int n = snprintf(msg, sizeof msg, "%s: %s", what, strerror(err));

	if (n > 0 && write(errfd, msg, (size_t)n) < 0) {
		/* nothing more we can do */
	}
	_exit(127);
}

static void
write_self_to(const char *path, int errfd)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		child_fail(errfd, path, errno);
	if (write(fd, "0", 1) != 1)
		child_fail(errfd, path, errno);
	close(fd);
}

static void
child_exec(const struct pty_proc_opts *o, int slave, int errfd)
{
	const struct sbx_plan *pl = o->plan;
	int hi[SBX_PLAN_MAX_FDS], maxfd = 2;
	sigset_t none;

	/* Default signal dispositions and mask for the new program. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int s = 1; s < NSIG; s++)
		signal(s, SIG_DFL);

	for (int i = 0; i < pl->ncgroups; i++)
		write_self_to(pl->cgroup_procs[i], errfd);
	if (setsid() < 0)
		child_fail(errfd, "setsid", errno);
	if (o->ctty == PTY_CTTY_TAKE && ioctl(slave, TIOCSCTTY, 0) < 0)
		child_fail(errfd, "TIOCSCTTY", errno);
	/* Move the plan's fds and the error pipe out of the way first. */
	for (int i = 0; i < pl->nfds; i++) {
		hi[i] = fcntl(pl->fds[i].from, F_DUPFD_CLOEXEC, 100);
		if (hi[i] < 0)
			child_fail(errfd, "dup fd", errno);
	}
	errfd = fcntl(errfd, F_DUPFD_CLOEXEC, 200);
	if (errfd < 0)
		_exit(127);
	for (int fd = 0; fd < 3; fd++) {
		if (dup2(slave, fd) < 0)
			child_fail(errfd, "dup2", errno);
	}
	for (int i = 0; i < pl->nfds; i++) {
		if (dup2(hi[i], pl->fds[i].to) < 0)
			child_fail(errfd, "dup2", errno);
		if (pl->fds[i].to > maxfd)
			maxfd = pl->fds[i].to;
	}
	/*
	 * Close every other inherited fd but the error pipe (which is
	 * CLOEXEC): bwrap would pass them all on (SANDBOX.md 0.7).
	 */
	if (errfd > maxfd + 1 && close_range((unsigned)maxfd + 1,
	    (unsigned)errfd - 1, 0) < 0)
		child_fail(errfd, "close_range", errno);
	if (close_range((unsigned)errfd + 1, ~0U, 0) < 0)
		child_fail(errfd, "close_range", errno);
	for (int i = 0; i < pl->nrlimits; i++) {
		struct rlimit rl = { pl->rlimits[i].cur, pl->rlimits[i].max };
		if (setrlimit(pl->rlimits[i].resource, &rl) < 0)
			child_fail(errfd, "setrlimit", errno);
	}
	if (pl->drop_uid) {
		/*
		 * An empty capability bounding set first (it needs
		 * CAP_SETPCAP, gone with the uid): the outer bwrap keeps no
		 * capability it could ever regain (SPEC 8.3; issue 6d).
		 */
		for (int cap = 0; cap <= 63; cap++) {
			if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 &&
			    errno != EINVAL)
				child_fail(errfd, "capability bounding set",
				    errno);
		}
		if (setgroups(0, NULL) < 0)
			child_fail(errfd, "setgroups", errno);
		if (setresgid(pl->gid, pl->gid, pl->gid) < 0)
			child_fail(errfd, "setresgid", errno);
		if (setresuid(pl->uid, pl->uid, pl->uid) < 0)
			child_fail(errfd, "setresuid", errno);
		if (getuid() != pl->uid || geteuid() != pl->uid ||
		    getgid() != pl->gid)
			child_fail(errfd, "uid drop", EPERM);
	}
	if (pl->no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(errfd, "no_new_privs", errno);
	if (pl->cwd != NULL && chdir(pl->cwd) < 0)
		child_fail(errfd, pl->cwd, errno);
	if (pl->inherit_env) {
		setenv("TERM", "xterm-256color", 1);
		execvp(pl->argv[0], pl->argv);
	} else {
		static char *const empty[] = { NULL };
		execve(pl->argv[0], pl->argv, pl->envp ? pl->envp : empty);
	}
	child_fail(errfd, pl->argv[0], errno);
}

/* ---- parent side --------------------------------------------------------- */

static void
handle_closed(uv_handle_t *h)
{
	struct pty_proc *p = h->data;

	if (--p->nhandles > 0)
		return;
	if (p->master >= 0) {
		/* uv_pipe_t owned the fd and closed it. */
		p->master = -1;
	}
	if (p->close_cb != NULL)
		p->close_cb(p->close_ud);
	free(p);
}

static void
maybe_done(struct pty_proc *p)
{
	if (p->done || !p->reaped || (!p->eof && uv_is_active(
	    (uv_handle_t *)&p->drain)))
		return;
	p->done = true;
	uv_timer_stop(&p->drain);
	if (p->on_exit != NULL)
		p->on_exit(p, p->wstatus, p->ud);
}

static void
drain_timeout(uv_timer_t *t)
{
	struct pty_proc *p = t->data;

	uv_timer_stop(t);
	maybe_done(p);
}

static void
on_sigchld(uv_signal_t *s, int signum)
{
	struct pty_proc *p = s->data;
	int st;
	pid_t w;

	(void)signum;
	if (p->reaped)
		return;
	do
		w = waitpid(p->pid, &st, WNOHANG);
	while (w < 0 && errno == EINTR);
	if (w != p->pid)
		return;
	p->reaped = true;
	p->wstatus = st;
	uv_signal_stop(&p->sigchld);
	/*
	 * The last output may still be on its way through the line
	 * discipline: wait for EOF on the master, or a short grace period if
	 * a leftover process keeps the slave open.
	 */
	if (p->eof)
		maybe_done(p);
	else
		uv_timer_start(&p->drain, drain_timeout, PROC_DRAIN_MS, 0);
}

static void
alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
	struct pty_proc *p = h->data;

	(void)hint;
	buf->base = p->rbuf;
	buf->len = sizeof p->rbuf;
}

static void
resume_cb(uv_idle_t *i)
{
	struct pty_proc *p = i->data;

	uv_idle_stop(i);
	p->tick_bytes = 0;
	if (!p->paused && !p->eof)
		proc_read_start(p);
}

static void
read_cb(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	struct pty_proc *p = s->data;

	if (n > 0) {
		if (p->on_read != NULL)
			p->on_read(p, buf->base, (size_t)n, p->ud);
		p->tick_bytes += (size_t)n;
		if (p->budget > 0 && p->tick_bytes >= p->budget &&
		    p->reading) {
			/* Backpressure: yield the loop, resume next tick. */
			uv_read_stop(s);
			p->reading = false;
			uv_idle_start(&p->resume, resume_cb);
		}
		return;
	}
	if (n == 0 || n == UV_EAGAIN)
		return;
	/* UV_EOF, or EIO once every slave fd is closed. */
	uv_read_stop(s);
	p->reading = false;
	p->eof = true;
	maybe_done(p);
}

static void
proc_read_start(struct pty_proc *p)
{
	if (p->reading || p->eof || p->closing)
		return;
	if (uv_read_start((uv_stream_t *)&p->pipe, alloc_cb, read_cb) == 0)
		p->reading = true;
}

int
pty_proc_spawn(struct pty_proc **out, uv_loop_t *loop,
    const struct pty_proc_opts *o, char *errbuf, size_t errsz)
{
	struct pty_proc *p;
	struct winsize ws = { .ws_row = (unsigned short)o->rows,
		.ws_col = (unsigned short)o->cols };
	int master = -1, slave = -1, ep[2] = { -1, -1 }, rc;
	char msg[256];
	ssize_t n;
	pid_t pid;

	if (out == NULL || loop == NULL || o == NULL || o->plan == NULL ||
	    o->plan->argv == NULL || o->plan->argv[0] == NULL ||
	    o->rows <= 0 || o->cols <= 0)
		return -EINVAL;
	if (errsz > 0)
		errbuf[0] = '\0';
	if ((p = calloc(1, sizeof *p)) == NULL)
		return -ENOMEM;
	p->master = -1;
	if (openpty(&master, &slave, NULL, NULL, &ws) < 0) {
		rc = -errno;
		goto fail;
	}
	if (fcntl(master, F_SETFD, FD_CLOEXEC) < 0 ||
	    fcntl(slave, F_SETFD, FD_CLOEXEC) < 0 ||
	    pipe2(ep, O_CLOEXEC) < 0) {
		rc = -errno;
		goto fail;
	}
	/* A sandbox uid must be able to open its own terminal (SPEC 8.3). */
	if (o->plan->drop_uid && fchown(slave, o->plan->uid, -1) < 0) {
		rc = -errno;
		goto fail;
	}
	if ((pid = fork()) < 0) {
		rc = -errno;
		goto fail;
	}
	if (pid == 0) {
		close(ep[0]);
		close(master);
		child_exec(o, slave, ep[1]);
	}
	close(ep[1]);
	ep[1] = -1;
	close(slave);
	slave = -1;
	/* EOF on the error pipe means exec succeeded. */
	do
		n = read(ep[0], msg, sizeof msg - 1);
	while (n < 0 && errno == EINTR);
	close(ep[0]);
	ep[0] = -1;
	if (n > 0) {
		int st;

		msg[n] = '\0';
		snprintf(errbuf, errsz, "%s", msg);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		rc = PTY_EEXEC;
		goto fail;
	}

	p->loop = loop;
	p->master = master;
	p->pid = pid;
	p->budget = o->read_budget;
	p->on_read = o->on_read;
	p->on_exit = o->on_exit;
	p->ud = o->ud;
	uv_pipe_init(loop, &p->pipe, 0);
	uv_signal_init(loop, &p->sigchld);
	uv_idle_init(loop, &p->resume);
	uv_timer_init(loop, &p->drain);
	p->pipe.data = p->sigchld.data = p->resume.data = p->drain.data = p;
	p->nhandles = 4;
	if ((rc = uv_pipe_open(&p->pipe, master)) < 0) {
		/* Handles are initialised: close through the normal path. */
		kill(pid, SIGKILL);
		p->reaped = p->done = true;
		pty_proc_close(p, NULL, NULL);
		return rc;
	}
	uv_signal_start(&p->sigchld, on_sigchld, SIGCHLD);
	/* The child may have exited before the handler existed. */
	on_sigchld(&p->sigchld, SIGCHLD);
	proc_read_start(p);
	*out = p;
	return 0;
fail:
	if (master >= 0)
		close(master);
	if (slave >= 0)
		close(slave);
	if (ep[0] >= 0)
		close(ep[0]);
	if (ep[1] >= 0)
		close(ep[1]);
	free(p);
	return rc;
}

static void
write_done(uv_write_t *req, int status)
{
	struct proc_write *w = (struct proc_write *)req;

	(void)status;
	w->p->queued -= w->len;
	free(w);
}

int
pty_proc_write(struct pty_proc *p, const void *buf, size_t len)
{
	struct proc_write *w;
	uv_buf_t b;
	int rc;

	if (p == NULL || (buf == NULL && len > 0))
		return -EINVAL;
	if (len == 0)
		return 0;
	if (p->eof || p->closing)
		return -EPIPE;
	if (p->queued + len > PROC_WRITE_CAP)
		return -ENOBUFS;
	if ((w = malloc(sizeof *w + len)) == NULL)
		return -ENOMEM;
	w->p = p;
	w->len = len;
	memcpy(w->data, buf, len);
	b = uv_buf_init(w->data, (unsigned int)len);
	if ((rc = uv_write(&w->req, (uv_stream_t *)&p->pipe, &b, 1,
		 write_done)) < 0) {
		free(w);
		return rc;
	}
	p->queued += len;
	return 0;
}

int
pty_proc_resize(struct pty_proc *p, int rows, int cols)
{
	struct winsize ws = { .ws_row = (unsigned short)rows,
		.ws_col = (unsigned short)cols };

	if (p == NULL || rows <= 0 || cols <= 0 || rows > 1000 || cols > 1000)
		return -EINVAL;
	if (p->master < 0)
		return -EBADF;
	return ioctl(p->master, TIOCSWINSZ, &ws) < 0 ? -errno : 0;
}

pid_t
pty_proc_pid(const struct pty_proc *p)
{
	return p->pid;
}

int
pty_proc_master_fd(const struct pty_proc *p)
{
	return p->master;
}

bool
pty_proc_exited(const struct pty_proc *p)
{
	return p->reaped;
}

int
pty_proc_signal(struct pty_proc *p, int sig)
{
	pid_t pids[4096];
	pid_t fg;
	int n, sent = 0;

	if (p == NULL || p->pid <= 0)
		return -EINVAL;
	/* The foreground process group first, as a terminal would. */
	if (p->master >= 0 && (fg = tcgetpgrp(p->master)) > 0 &&
	    kill(-fg, sig) == 0)
		sent++;
	if (!p->reaped && kill(-p->pid, sig) == 0)
		sent++;
	if (!p->reaped && kill(p->pid, sig) == 0)
		sent++;
	/* Then every process of the session, whatever its group. */
	n = pty_facts_session_pids(p->pid, pids, 4096);
	for (int i = 0; i < n; i++) {
		if (kill(pids[i], sig) == 0)
			sent++;
	}
	return sent;
}

void
pty_proc_read_pause(struct pty_proc *p, bool paused)
{
	p->paused = paused;
	if (paused && p->reading) {
		uv_read_stop((uv_stream_t *)&p->pipe);
		p->reading = false;
	} else if (!paused) {
		proc_read_start(p);
	}
}

void
pty_proc_close(struct pty_proc *p, void (*cb)(void *), void *ud)
{
	if (p == NULL || p->closing)
		return;
	p->closing = true;
	p->close_cb = cb;
	p->close_ud = ud;
	uv_close((uv_handle_t *)&p->pipe, handle_closed);
	uv_close((uv_handle_t *)&p->sigchld, handle_closed);
	uv_close((uv_handle_t *)&p->resume, handle_closed);
	uv_close((uv_handle_t *)&p->drain, handle_closed);
}
