/*
 * proc.c: one child process on a fresh PTY, driven by a libuv loop: openpty
 * and fork, the plan's pre-exec recipe in the child (sbx_recipe.c: the
 * sandbox module owns everything between fork and exec), a non-blocking
 * master read with a per-tick budget (backpressure), a bounded write queue,
 * TIOCSWINSZ resize, and reaping through a uv_signal_t SIGCHLD handler with
 * waitpid(WNOHANG).
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>
#include <uv.h>

#include "pty/pty.h"
#include "pty/pty_int.h"
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
	/*
	 * Taken at the first read after none (alloc_cb) and freed when the
	 * output rests (pty_proc_trim, the holder's idle timer): a burst
	 * that filled it leaves an idle endpoint nothing to pay (issue 17).
	 */
	char *rbuf;
};

struct proc_write {
	uv_write_t req;
	struct pty_proc *p;
	size_t len;
	char data[];
};

static void proc_read_start(struct pty_proc *);

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
	free(p->rbuf);
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
	if (p->rbuf == NULL)
		p->rbuf = malloc(PROC_READ_BUF);
	buf->base = p->rbuf;
	buf->len = p->rbuf != NULL ? PROC_READ_BUF : 0;
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
		size_t len = (size_t)n;
		ssize_t m;

		/*
		 * libuv stops at the first short read, and a PTY read gives
		 * one line discipline buffer (4 KiB): read on to EAGAIN into
		 * the rest of the buffer, so one wakeup is one delivery
		 * (one screen feed, one transcript write; issue 17). EOF and
		 * EIO stop it here; libuv reads them on its next wakeup.
		 */
		assert(buf->base == p->rbuf);
		while (len < PROC_READ_BUF) {
			m = read(p->master, p->rbuf + len, PROC_READ_BUF - len);
			if (m > 0)
				len += (size_t)m;
			else if (m < 0 && errno == EINTR)
				continue;
			else
				break;
		}
		n = (ssize_t)len;
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
	/* UV_ENOBUFS: no memory for the buffer; libuv tries again. */
	if (n == 0 || n == UV_EAGAIN || n == UV_ENOBUFS)
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
	struct sbx_recipe rcp;
	char msg[256];
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
	/* Everything between fork and exec is the recipe (sbx_recipe.c). */
	rcp = (struct sbx_recipe){ .plan = o->plan,
		.stdio = { slave, slave, slave },
		.take_ctty = o->ctty == PTY_CTTY_TAKE, .errfd = ep[1] };
	if ((rc = sbx_recipe_prepare(&rcp, "TERM=xterm-256color")) < 0)
		goto fail;
	if ((pid = fork()) < 0) {
		rc = -errno;
		sbx_recipe_clear(&rcp);
		goto fail;
	}
	if (pid == 0)
		sbx_recipe_exec(&rcp);
	sbx_recipe_clear(&rcp);
	close(ep[1]);
	ep[1] = -1;
	close(slave);
	slave = -1;
	/* EOF on the error pipe means exec succeeded. */
	rc = sbx_recipe_wait(ep[0], msg, sizeof msg);
	close(ep[0]);
	ep[0] = -1;
	if (rc < 0) {
		int st;

		snprintf(errbuf, errsz, "%s: %s", msg, strerror(-rc));
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
	free(p->rbuf);
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
	/* Nothing queued: to the terminal at once, no request (issue 17). */
	b = uv_buf_init((char *)buf, (unsigned int)len);
	if (p->queued == 0 && (rc = uv_try_write((uv_stream_t *)&p->pipe,
	    &b, 1)) != UV_EAGAIN) {
		if (rc < 0)
			return rc;
		if ((size_t)rc == len)
			return 0;
		buf = (const char *)buf + rc;
		len -= (size_t)rc;
	}
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
	n = pty__facts_session_pids(p->pid, pids, 4096);
	for (int i = 0; i < n; i++) {
		if (kill(pids[i], sig) == 0)
			sent++;
	}
	return sent;
}

void
pty_proc_trim(struct pty_proc *p)
{
	/* Never inside read_cb: the loop calls this from a timer. */
	free(p->rbuf);
	p->rbuf = NULL;
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
