/*
 * holder.c: the per-lease holder process (SPEC 2). It owns the PTY master
 * and the agent child, keeps the screen model and a bounded transcript, and
 * serves a unix socket (0600 in the 0700 lease directory, peer credentials
 * checked, SPEC 9.5): attach (the screen then live updates), input, resize,
 * signal, cancel (SPEC 5.5) and status. It runs to the agent's end whether
 * or not a console is open, then leaves the final screen on disk.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "pty/pty.h"
#include "pty/pty_holder_int.h"

uint64_t
pty__holder_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}


void
pty__holder_event(struct holder *h, const char *kind, const char *fmt, ...)
{
	char detail[512];
	va_list ap;

	if (h->o->hooks.event == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof detail, fmt, ap);
	va_end(ap);
	h->o->hooks.event(kind, detail, h->o->hooks.ud);
}

/* ---- the agent --------------------------------------------------------------- */

/* Write len bytes to the transcript; false (truncated, said) on an error. */
static bool
transcript_put(struct holder *h, const char *buf, size_t len)
{
	ssize_t w;

	while (len > 0) {
		w = write(h->transcript_fd, buf, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			/* Full disk or I/O error: the agent keeps running. */
			h->transcript_truncated = true;
			pty__holder_event(h, "transcript", "transcript truncated: %s",
			    strerror(errno));
			return false;
		}
		h->transcript_bytes += (uint64_t)w;
		buf += w;
		len -= (size_t)w;
	}
	return true;
}

/*
 * What the transcript's buffer holds, written out; let_go frees the buffer
 * too (the timer's flush: an idle holder keeps none).
 */
static void
transcript_flush(struct holder *h, bool let_go)
{
	size_t len = h->tlen;

	h->tlen = 0;
	if (len > 0 && !h->transcript_truncated)
		(void)transcript_put(h, h->tbuf, len);
	if (let_go) {
		free(h->tbuf);
		h->tbuf = NULL;
	}
}

static void
transcript_timer_cb(uv_timer_t *t)
{
	transcript_flush(t->data, true);
}

/*
 * The transcript takes output in batches (issue 17): a PTY read is a few
 * kB, so each went to its own write; now they gather in a buffer written
 * when full, HOLDER_TRANSCRIPT_MS after the first byte, at the agent's end
 * and before the holder exits.
 */
static void
transcript_write(struct holder *h, const char *buf, size_t len)
{
	const struct pty_holder_opts *o = h->o;
	bool cap = false;

	if (h->transcript_fd < 0 || h->transcript_truncated)
		return;
	if (h->transcript_bytes + h->tlen + len > o->transcript_max) {
		len = (size_t)(o->transcript_max - h->transcript_bytes -
		    h->tlen);
		cap = true;
	}
	if (h->tbuf == NULL && len < HOLDER_TRANSCRIPT_BUF)
		h->tbuf = malloc(HOLDER_TRANSCRIPT_BUF);
	if (h->tbuf != NULL && h->tlen + len > HOLDER_TRANSCRIPT_BUF)
		transcript_flush(h, false);
	if (h->tbuf != NULL && len <= HOLDER_TRANSCRIPT_BUF - h->tlen) {
		memcpy(h->tbuf + h->tlen, buf, len);
		h->tlen += len;
		if (!uv_is_active((uv_handle_t *)&h->transcript_timer))
			uv_timer_start(&h->transcript_timer,
			    transcript_timer_cb, HOLDER_TRANSCRIPT_MS, 0);
	} else if (!transcript_put(h, buf, len)) {
		return;		/* no buffer (no memory), or a large write */
	}
	if (cap) {
		transcript_flush(h, true);
		if (h->transcript_truncated)
			return;		/* the error said so */
		h->transcript_truncated = true;
		pty__holder_event(h, "transcript", "transcript truncated at %llu bytes",
		    (unsigned long long)h->transcript_bytes);
	}
}

static void
coalesce_timer_cb(uv_timer_t *t)
{
	struct holder *h = t->data;

	if (h->proc != NULL)
		pty_proc_read_pause(h->proc, false);
}

/*
 * After the reads of one loop pass: an agent trickling small writes (a
 * line a millisecond) would wake this process for every one. With nobody
 * watching live, rest reading for a few ms so they coalesce; a live client
 * (a console, whose echo must be immediate) turns this off.
 */
static void
coalesce_check_cb(uv_check_t *ck)
{
	struct holder *h = ck->data;
	bool live = false;

	uv_check_stop(ck);
	for (struct hclient *c = h->clients; c != NULL; c = c->next)
		live |= c->live;
	if (!live && h->wake_bytes > 0 && h->wake_bytes < HOLDER_TRICKLE &&
	    h->proc != NULL && h->state == PTY_RUN_RUNNING) {
		pty_proc_read_pause(h->proc, true);
		uv_timer_start(&h->coalesce_timer, coalesce_timer_cb,
		    HOLDER_TRICKLE_MS, 0);
	}
	h->wake_bytes = 0;
}

/*
 * The output has rested HOLDER_IDLE_MS (or the agent just started): what
 * only working needs goes back to the system (issue 17), so an idle holder
 * costs its screen and little more: the PTY read buffer, the screen's
 * scratch, the detector's row text, the frame buffer (each
 * taken again when next needed), then every free page of the heap.
 */
static void
idle_timer_cb(uv_timer_t *t)
{
	struct holder *h = t->data;
	uint64_t quiet = uv_now(h->loop) - h->out_ms;

	if (quiet < HOLDER_IDLE_MS) {
		uv_timer_start(t, idle_timer_cb, HOLDER_IDLE_MS - quiet, 0);
		return;
	}
	if (h->proc != NULL)
		pty_proc_trim(h->proc);
	pty_screen_trim(h->screen);
	pty__holder_detect_trim(h);
	pty_wbuf_free(&h->wb);
	malloc_trim(0);
}

/* Output past the filter (or all of it): the screen and transcript. */
static void
output_clean(const char *buf, size_t len, void *ud)
{
	struct holder *h = ud;

	pty_screen_feed(h->screen, buf, len);
	transcript_write(h, buf, len);
}

/*
 * Bytes the filter held back (they may begin a secret) and no more output
 * came: a prompt ending in the secret's first letters must show.
 */
static void
filter_timer_cb(uv_timer_t *t)
{
	struct holder *h = t->data;
	const struct pty_holder_filter *f = h->filter;

	if (f == NULL || f->held(f->ud) == 0)
		return;
	f->flush(output_clean, h, f->ud);
	if (h->clients != NULL)
		pty__holder_server_schedule_flush(h, false);
	else
		pty_screen_dirty_clear(h->screen);
}

static void
on_pty_read(struct pty_proc *p, const char *buf, size_t len, void *ud)
{
	struct holder *h = ud;

	(void)p;
	pty__holder_detect_output(h, len);
	h->out_ms = uv_now(h->loop);
	if (!uv_is_active((uv_handle_t *)&h->idle_timer))
		uv_timer_start(&h->idle_timer, idle_timer_cb, HOLDER_IDLE_MS,
		    0);
	if (h->clients != NULL)
		pty__holder_server_summary_changed(h);
	/* A minted credential never reaches the screen or transcript. */
	if (h->filter != NULL) {
		h->filter->feed(buf, len, output_clean, h, h->filter->ud);
		if (h->filter->held(h->filter->ud) > 0)
			uv_timer_start(&h->filter_timer, filter_timer_cb,
			    HOLDER_FILTER_MS, 0);
	} else {
		output_clean(buf, len, h);
	}
	if (h->clients != NULL)
		pty__holder_server_schedule_flush(h, false);
	else
		pty_screen_dirty_clear(h->screen);
	h->wake_bytes += len;
	uv_check_start(&h->coalesce_check, coalesce_check_cb);
}

/* Bells, titles and OSC signals from the screen feed the detector. */
static void
on_screen_event(enum pty_screen_event_kind kind, const char *text,
    size_t len, void *ud)
{
	pty__holder_detect_screen_event(ud, kind, text, len);
}

/* Query replies and encoded keys go back to the agent. */
static void
on_screen_output(const char *buf, size_t len, void *ud)
{
	struct holder *h = ud;

	if (h->proc != NULL && h->state != PTY_RUN_EXITED)
		if (pty_proc_write(h->proc, buf, len) < 0)
			pty__holder_event(h, "input", "reply to the agent dropped: queue "
			    "full");
}

static void
agent_exit(struct pty_proc *p, int64_t wstatus, void *ud)
{
	struct holder *h = ud;
	size_t st;

	(void)p;
	h->state = PTY_RUN_EXITED;
	h->wstatus = wstatus;
	if (h->filter != NULL)
		h->filter->flush(output_clean, h, h->filter->ud);
	if (WIFEXITED(wstatus))
		h->exit_code = WEXITSTATUS(wstatus);
	else
		h->exit_code = 128 + WTERMSIG(wstatus);
	uv_timer_stop(&h->cancel_timer);
	/* The whole transcript is on disk once the agent has ended. */
	uv_timer_stop(&h->transcript_timer);
	transcript_flush(h, true);
	/* Leftover processes of the session go with the agent. */
	if (h->cancelled)
		pty_proc_signal(h->proc, SIGKILL);
	pty__holder_frames_write_final(h);
	pty__holder_detect_exit(h, wstatus);
	if (h->o->hooks.exited != NULL)
		h->o->hooks.exited(wstatus, h->cancelled, h->o->hooks.ud);
	pty__holder_server_collect_dirty(h);
	pty__holder_server_summary_cb(&h->summary_timer);
	for (struct hclient *c = h->clients; c != NULL; c = c->next) {
		if (!c->live)
			continue;
		c->full = true;
		pty__holder_server_conn_flush(h, c);
		pty_wbuf_reset(&h->wb);
		st = pty_wire_begin(&h->wb, PTY_W_EXIT);
		pty_wbuf_u32(&h->wb, (uint32_t)wstatus);
		pty_wire_end(&h->wb, st);
		pty__holder_server_conn_send(c, &h->wb);
	}
	if (h->held)
		return;		/* pty_holder_finished stops it */
	h->stopping = true;
	pty__holder_maybe_stop(h);
}

void
pty_holder_egress(struct pty_holder *ph, unsigned inflight)
{
	struct pty_detect_event ev = { .kind = PTY_DETECT_EV_EGRESS };

	if (ph == NULL || ph->h == NULL || ph->h->det == NULL)
		return;
	ev.inflight = inflight;
	pty__holder_detect_event(ph->h, &ev);
}

void
pty_holder_gateway_held(struct pty_holder *ph, const char *reason)
{
	struct pty_detect_event ev = { .kind = PTY_DETECT_EV_HELD };

	if (ph == NULL || ph->h == NULL || ph->h->det == NULL)
		return;
	ev.text = reason;
	pty__holder_detect_event(ph->h, &ev);
}

void
pty_holder_gateway_stop(struct pty_holder *ph, const char *stop)
{
	struct pty_detect_event ev = { .kind = PTY_DETECT_EV_STOP };

	if (ph == NULL || ph->h == NULL || ph->h->det == NULL || stop == NULL)
		return;
	ev.text = stop;
	pty__holder_detect_event(ph->h, &ev);
}

void
pty_holder_hold(struct pty_holder *ph, const char *phase)
{
	if (ph == NULL || ph->h == NULL)
		return;
	ph->h->held = true;
	snprintf(ph->h->phase, sizeof ph->h->phase, "%s", phase ? phase :
	    "finishing");
}

void
pty_holder_finished(struct pty_holder *ph)
{
	struct holder *h;

	if (ph == NULL || (h = ph->h) == NULL || !h->held)
		return;
	h->held = false;
	h->phase[0] = '\0';
	if (h->state == PTY_RUN_EXITED) {
		h->stopping = true;
		pty__holder_maybe_stop(h);
	}
}

/* SPEC 5.5: SIGINT, then SIGTERM, then SIGKILL, with bounded waits. */
static void
cancel_timer_cb(uv_timer_t *t)
{
	pty__holder_cancel_step(t->data);
}

void
pty__holder_cancel_step(struct holder *h)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGKILL };
	static const char *const names[] = { "SIGINT", "SIGTERM", "SIGKILL" };
	const struct pty_holder_hooks *k = &h->o->hooks;
	const char *via = "";
	int n = -1;

	if (h->state == PTY_RUN_EXITED || h->cancel_step >= 3)
		return;
	/* A sandbox's agent first, sparing its supervisor (SPEC 5.5). */
	if (sigs[h->cancel_step] != SIGKILL && k->signal_agent != NULL &&
	    (n = k->signal_agent(sigs[h->cancel_step], k->ud)) >= 0)
		via = " of the sandbox";
	if (n < 0)
		n = pty_proc_signal(h->proc, sigs[h->cancel_step]);
	pty__holder_event(h, "cancel", "sent %s to %d target(s)%s at %llu",
	    names[h->cancel_step], n, via,
	    (unsigned long long)pty__holder_now_ms());
	h->cancel_step++;
	if (h->cancel_step < 3)
		uv_timer_start(&h->cancel_timer, cancel_timer_cb,
		    h->o->cancel_wait_ms ? h->o->cancel_wait_ms : 2000, 0);
}

/* ---- shutdown ------------------------------------------------------------ */

static void
close_all_cb(uv_handle_t *hd, void *arg)
{
	(void)arg;
	if (!uv_is_closing(hd))
		uv_close(hd, NULL);
}

/* The caller's handles go first (hooks.closing), once. */
static void
closing_hook(struct holder *h)
{
	if (h->closed_hook)
		return;
	h->closed_hook = true;
	h->self.h = NULL;
	if (h->o->hooks.closing != NULL)
		h->o->hooks.closing(h->o->hooks.ud);
}

static void
stop_now(struct holder *h)
{
	struct hclient *c, *next;

	closing_hook(h);

	for (c = h->clients; c != NULL; c = next) {
		next = c->next;
		pty__holder_server_conn_close(c);
	}
	if (!uv_is_closing((uv_handle_t *)&h->server))
		uv_close((uv_handle_t *)&h->server, NULL);
	unlink("holder.sock");
	pty_proc_close(h->proc, NULL, NULL);
	h->proc = NULL;
	uv_walk(h->loop, close_all_cb, NULL);
}

static void
linger_cb(uv_timer_t *t)
{
	stop_now(t->data);
}

void
pty__holder_maybe_stop(struct holder *h)
{
	bool busy = false;

	if (!h->stopping || h->proc == NULL)
		return;
	for (struct hclient *c = h->clients; c != NULL; c = c->next)
		busy |= c->queued > 0;
	if (!busy)
		stop_now(h);
	else if (!uv_is_active((uv_handle_t *)&h->linger_timer))
		uv_timer_start(&h->linger_timer, linger_cb, HOLDER_LINGER_MS,
		    0);
}

static void
on_sigterm(uv_signal_t *s, int signum)
{
	struct holder *h = s->data;

	(void)signum;
	/* Asked to go: cancel the lease the same bounded way. */
	if (!h->cancelled && h->state != PTY_RUN_EXITED) {
		h->cancelled = true;
		h->cancel_step = 0;
		pty__holder_event(h, "cancel", "holder received SIGTERM");
		pty__holder_cancel_step(h);
	}
}

static void
ready(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
ready(int fd, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	if (fd < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > 0 && write(fd, buf, (size_t)n < sizeof buf ? (size_t)n :
	    sizeof buf - 1) < 0) {
		/* the starter went away: nothing to tell */
	}
	close(fd);
}

int
pty_holder_run(uv_loop_t *loop, const struct pty_holder_opts *o)
{
	struct holder h;
	struct pty_proc_opts po;
	char err[512];
	int rc;

	if (loop == NULL || o == NULL || o->id == NULL || o->dir == NULL ||
	    o->plan == NULL || (o->filter.feed != NULL &&
	    (o->filter.flush == NULL || o->filter.held == NULL)))
		return -EINVAL;
	memset(&h, 0, sizeof h);
	h.self.h = &h;
	h.loop = loop;
	h.o = o;
	h.transcript_fd = -1;
	h.started_ms = pty__holder_now_ms();
	pty_wbuf_init(&h.wb);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	umask(077);
	if (chdir(o->dir) < 0) {
		rc = -errno;
		ready(o->ready_fd, "err lease directory %s: %s\n", o->dir,
		    strerror(errno));
		return rc;
	}
	if ((rc = pty_screen_new(&h.screen, o->rows, o->cols,
		 o->sb_lines)) < 0) {
		ready(o->ready_fd, "err screen: %s\n", pty_strerror(rc));
		return rc;
	}
	if (o->filter.feed != NULL)
		h.filter = &o->filter;
	pty_screen_set_output(h.screen, on_screen_output, &h);
	pty_screen_set_event(h.screen, on_screen_event, &h);
	if (o->transcript_max > 0) {
		h.transcript_fd = open("transcript",
		    O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (h.transcript_fd < 0)
			h.transcript_truncated = true;
	}

	uv_pipe_init(loop, &h.server, 0);
	h.server.data = &h;
	unlink("holder.sock");
	if ((rc = uv_pipe_bind(&h.server, "holder.sock")) < 0 ||
	    (rc = chmod("holder.sock", 0600) < 0 ? -errno : 0) < 0 ||
	    (rc = uv_listen((uv_stream_t *)&h.server, 16,
	    pty__holder_server_on_connect)) < 0) {
		ready(o->ready_fd, "err holder socket: %s\n", uv_strerror(rc));
		goto early;
	}
	uv_check_init(loop, &h.flush_check);
	uv_check_init(loop, &h.coalesce_check);
	uv_timer_init(loop, &h.coalesce_timer);
	h.coalesce_check.data = h.coalesce_timer.data = &h;
	uv_timer_init(loop, &h.flush_timer);
	uv_timer_init(loop, &h.cancel_timer);
	uv_timer_init(loop, &h.linger_timer);
	uv_timer_init(loop, &h.summary_timer);
	uv_timer_init(loop, &h.filter_timer);
	uv_timer_init(loop, &h.transcript_timer);
	uv_timer_init(loop, &h.idle_timer);
	h.filter_timer.data = h.transcript_timer.data = h.idle_timer.data =
	    &h;
	uv_signal_init(loop, &h.sigterm);
	h.flush_check.data = h.flush_timer.data = h.cancel_timer.data =
	    h.linger_timer.data = h.summary_timer.data = h.sigterm.data = &h;
	uv_signal_start(&h.sigterm, on_sigterm, SIGTERM);
	if ((rc = pty__holder_detect_init(&h)) < 0) {
		ready(o->ready_fd, "err detector: %s\n", pty_strerror(rc));
		goto early;
	}

	if (o->hooks.claim != NULL &&
	    (rc = o->hooks.claim(err, sizeof err, o->hooks.ud)) != 0) {
		ready(o->ready_fd, "err %s\n", err);
		rc = rc < 0 ? rc : -EBUSY;
		goto early;
	}
	memset(&po, 0, sizeof po);
	po.plan = o->plan;
	po.rows = o->rows;
	po.cols = o->cols;
	po.ctty = o->ctty;
	po.read_budget = HOLDER_READ_BUDGET;
	po.on_read = on_pty_read;
	po.on_exit = agent_exit;
	po.ud = &h;
	if ((rc = pty_proc_spawn(&h.proc, loop, &po, err, sizeof err)) < 0) {
		ready(o->ready_fd, "err %s\n",
		    rc == PTY_EEXEC ? err : pty_strerror(rc));
		goto early;
	}
	h.child = pty_proc_pid(h.proc);
	h.state = PTY_RUN_RUNNING;
	if (o->hooks.running != NULL)
		o->hooks.running(&h.self, o->hooks.ud);
	if (o->hooks.started != NULL)
		o->hooks.started(h.child, o->hooks.ud);
	ready(o->ready_fd, "ok %d\n", (int)h.child);
	/* What the start freed goes back once the agent's first output rests. */
	h.out_ms = uv_now(loop);
	uv_timer_start(&h.idle_timer, idle_timer_cb, HOLDER_IDLE_MS, 0);
	if (o->owner_fd >= 0) {
		/* `corral wrap`: the owner's own connection, with control. */
		struct hclient *c = pty__holder_server_conn_new(&h);

		if (c != NULL && uv_pipe_open(&c->pipe, o->owner_fd) == 0) {
			c->owner = true;
			pty__holder_server_conn_attach(&h, c);
		} else if (c != NULL) {
			c->closing = true;
			uv_close((uv_handle_t *)&c->pipe,
			    pty__holder_server_conn_closed);
		}
	}

	uv_run(loop, UV_RUN_DEFAULT);
	/* Everything is closed; run once more to finish close callbacks. */
	uv_run(loop, UV_RUN_NOWAIT);
	transcript_flush(&h, true);
	if (h.transcript_fd >= 0)
		close(h.transcript_fd);
	pty__holder_detect_free(&h);
	pty_screen_free(h.screen);
	pty_wbuf_free(&h.wb);
	return h.exit_code;
early:
	unlink("holder.sock");
	closing_hook(&h);
	uv_walk(loop, close_all_cb, NULL);
	uv_run(loop, UV_RUN_DEFAULT);
	transcript_flush(&h, true);
	if (h.transcript_fd >= 0)
		close(h.transcript_fd);
	pty__holder_detect_free(&h);
	pty_screen_free(h.screen);
	pty_wbuf_free(&h.wb);
	return rc < 0 ? rc : -EIO;
}
