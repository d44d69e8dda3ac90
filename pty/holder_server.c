/*
 * holder_server.c: a holder's socket server (SPEC 9.5): accepting clients
 * (peer credentials checked), decoding and validating their frames, the
 * owner's control rule for trusted_local leases (SPEC 3), live screen
 * updates coalesced per client with a queue cap, status replies and the
 * summary pushes the console's lease list lives on.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pty/pty.h"
#include "pty/pty_holder_int.h"
#include "pty/pty_int.h"

static uint64_t
mono_ms(uv_loop_t *loop)
{
	return uv_now(loop);
}

struct hwrite {
	uv_write_t req;
	struct hclient *c;
	size_t len;
	uint8_t data[];
};


static void
write_done(uv_write_t *req, int status)
{
	struct hwrite *w = (struct hwrite *)req;
	struct hclient *c = w->c;

	c->queued -= w->len;
	free(w);
	if (status < 0)
		pty__holder_server_conn_close(c);
	else if (c->dfirst >= 0 && c->h != NULL)
		pty__holder_server_schedule_flush(c->h, false);
	if (c->h != NULL)
		pty__holder_maybe_stop(c->h);
}

int
pty__holder_server_conn_send(struct hclient *c, const struct pty_wbuf *wb)
{
	struct hwrite *w;
	uv_buf_t b;
	size_t off = 0;
	int n;

	if (c->closing || wb->len == 0)
		return 0;
	if (wb->oom)
		return -ENOMEM;
	/*
	 * Nothing queued: written at once, with no request for the loop to
	 * finish (a keystroke's echo waits on no extra turn; issue 17).
	 */
	b = uv_buf_init((char *)wb->buf, (unsigned int)wb->len);
	if (c->queued == 0 && (n = uv_try_write((uv_stream_t *)&c->pipe,
	    &b, 1)) != UV_EAGAIN) {
		if (n < 0) {
			pty__holder_server_conn_close(c);
			return -EPIPE;
		}
		if ((size_t)n == wb->len)
			return 0;
		off = (size_t)n;
	}
	if ((w = malloc(sizeof *w + wb->len - off)) == NULL) {
		/* Part of a frame is out: the stream is no longer whole. */
		if (off > 0)
			pty__holder_server_conn_close(c);
		return -ENOMEM;
	}
	w->c = c;
	w->len = wb->len - off;
	memcpy(w->data, wb->buf + off, w->len);
	b = uv_buf_init((char *)w->data, (unsigned int)w->len);
	if (uv_write(&w->req, (uv_stream_t *)&c->pipe, &b, 1, write_done) <
	    0) {
		free(w);
		pty__holder_server_conn_close(c);
		return -EPIPE;
	}
	c->queued += w->len;
	return 0;
}

void
pty__holder_server_conn_closed(uv_handle_t *hd)
{
	struct hclient *c = hd->data;
	struct holder *h = c->h;

	pty_wire_dec_free(&c->dec);
	free(c);
	if (h != NULL)
		pty__holder_maybe_stop(h);
}

void
pty__holder_server_conn_close(struct hclient *c)
{
	struct holder *h = c->h;
	struct hclient **pp;

	if (c->closing)
		return;
	c->closing = true;
	if (h != NULL) {
		for (pp = &h->clients; *pp != NULL; pp = &(*pp)->next) {
			if (*pp == c) {
				*pp = c->next;
				break;
			}
		}
		h->nclients--;
	}
	uv_close((uv_handle_t *)&c->pipe, pty__holder_server_conn_closed);
}

static void
send_error(struct hclient *c, int code, const char *msg)
{
	struct holder *h = c->h;
	size_t st;

	pty_wbuf_reset(&h->wb);
	st = pty_wire_begin(&h->wb, PTY_W_ERROR);
	pty_wbuf_u32(&h->wb, (uint32_t)code);
	pty_wbuf_put(&h->wb, msg, strlen(msg));
	pty_wire_end(&h->wb, st);
	pty__holder_server_conn_send(c, &h->wb);
}

static void
send_ok(struct hclient *c, uint8_t what)
{
	struct holder *h = c->h;
	size_t st;

	pty_wbuf_reset(&h->wb);
	st = pty_wire_begin(&h->wb, PTY_W_OK);
	pty_wbuf_u32(&h->wb, what);
	pty_wire_end(&h->wb, st);
	pty__holder_server_conn_send(c, &h->wb);
}

/*
 * Process facts of the agent (SPEC 5.3), sampled from /proc on the PTY
 * master: the foreground group (the agent's host pid, also under a pid
 * namespace), whether it waits in a terminal read, its comm, and the
 * processes of the child's session plus that group.
 */
static void
status_facts(struct holder *h, json_t *j)
{
	struct pty_facts f;

	if (h->proc == NULL || h->state != PTY_RUN_RUNNING ||
	    pty__holder_facts(h, &f) < 0)
		return;
	json_object_set_new(j, "fg_pgrp", json_integer(f.fg_pgrp));
	json_object_set_new(j, "fg_tty_read", json_boolean(f.fg_tty_read));
	json_object_set_new(j, "fg_comm",
	    json_stringn_nocheck(f.fg_comm, strlen(f.fg_comm)));
	json_object_set_new(j, "nprocs", json_integer(f.nprocs));
}

/* facts: sample /proc (explicit requests only, not summary pushes). */
static char *
status_json(struct holder *h, bool facts)
{
	const struct pty_holder_opts *o = h->o;
	json_t *j = json_object(), *extra = NULL;
	char *s, line[512] = "", *x;
	int rows, cols;

	pty_screen_size(h->screen, &rows, &cols);
	/* The last non-empty row: the "last output" column of the list. */
	for (int r = rows - 1; r >= 0; r--) {
		if (pty_screen_row_text(h->screen, r, line, sizeof line) > 0)
			break;
	}
	json_object_set_new(j, "id", json_string(o->id));
	json_object_set_new(j, "holder_pid", json_integer(getpid()));
	json_object_set_new(j, "child_pid", json_integer(h->child));
	json_object_set_new(j, "state", json_string(
	    h->state == PTY_RUN_EXITED ? "exited" :
	    h->state == PTY_RUN_RUNNING ? "running" : "starting"));
	json_object_set_new(j, "exit_status",
	    h->state == PTY_RUN_EXITED ? json_integer(h->wstatus) :
					 json_null());
	json_object_set_new(j, "cancelled", json_boolean(h->cancelled));
	/* After the exit, while the result and teardown run (SPEC 7). */
	json_object_set_new(j, "phase", h->held ? json_string(h->phase) :
						  json_null());
	json_object_set_new(j, "rows", json_integer(rows));
	json_object_set_new(j, "cols", json_integer(cols));
	json_object_set_new(j, "title",
	    json_stringn_nocheck(pty_screen_title(h->screen),
		strlen(pty_screen_title(h->screen))));
	json_object_set_new(j, "last_line",
	    json_stringn_nocheck(line, strlen(line)));
	json_object_set_new(j, "bells",
	    json_integer((json_int_t)pty_screen_bells(h->screen)));
	json_object_set_new(j, "transcript_bytes",
	    json_integer((json_int_t)h->transcript_bytes));
	json_object_set_new(j, "transcript_truncated",
	    json_boolean(h->transcript_truncated));
	json_object_set_new(j, "clients", json_integer(h->nclients));
	json_object_set_new(j, "started_ms",
	    json_integer((json_int_t)h->started_ms));
	json_object_set_new(j, "trusted_local", json_boolean(o->trusted_local));
	json_object_set_new(j, "allow_control", json_boolean(o->allow_control));
	if (facts)
		status_facts(h, j);
	pty__holder_detect_status(h, j);
	if (o->hooks.status_json != NULL &&
	    (x = o->hooks.status_json(o->hooks.ud)) != NULL) {
		extra = json_loads(x, 0, NULL);
		free(x);
		if (json_is_object(extra))
			json_object_update(j, extra);
		json_decref(extra);
	}
	s = json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(j);
	return s;
}

void
pty__holder_server_status(struct hclient *c, uint32_t seq, bool facts)
{
	struct holder *h = c->h;
	char *js = status_json(h, facts);
	size_t st;

	pty_wbuf_reset(&h->wb);
	st = pty_wire_begin(&h->wb, PTY_W_STATUS_REPLY);
	pty_wbuf_u32(&h->wb, seq);
	if (js != NULL)
		pty_wbuf_put(&h->wb, js, strlen(js));
	pty_wire_end(&h->wb, st);
	free(js);
	pty__holder_server_conn_send(c, &h->wb);
}

static void flush_check_cb(uv_check_t *);

void
pty__holder_server_schedule_flush(struct holder *h, bool urgent)
{
	if (urgent)
		h->frame_urgent = true;
	uv_check_start(&h->flush_check, flush_check_cb);
}

/* Fold the screen's dirty range into every live client's pending range. */
void
pty__holder_server_collect_dirty(struct holder *h)
{
	int first, last;

	if (!pty_screen_dirty(h->screen, &first, &last))
		return;
	for (struct hclient *c = h->clients; c != NULL; c = c->next) {
		if (!c->live)
			continue;
		if (c->dfirst < 0 || first < c->dfirst)
			c->dfirst = first;
		if (last > c->dlast)
			c->dlast = last;
	}
	pty_screen_dirty_clear(h->screen);
}

void
pty__holder_server_conn_flush(struct holder *h, struct hclient *c)
{
	int rows, cols;

	if (!c->live || c->closing || c->queued > HOLDER_CLIENT_QUEUE)
		return;
	pty_screen_size(h->screen, &rows, &cols);
	if (c->full) {
		c->dfirst = 0;
		c->dlast = rows - 1;
		c->full = false;
	}
	pty_wbuf_reset(&h->wb);
	/* META always goes out (cursor, modes, title may have changed). */
	pty__holder_frames_screen(&h->wb, h->screen, h->state,
	    (int32_t)h->wstatus, c->dfirst, c->dlast);
	c->dfirst = c->dlast = -1;
	pty__holder_server_conn_send(c, &h->wb);
}

static void flush_timer_cb(uv_timer_t *);

/* The tick: runs after I/O, so all reads of this iteration coalesce. */
static void
flush_check_cb(uv_check_t *ck)
{
	struct holder *h = ck->data;
	uint64_t now = mono_ms(h->loop);

	uv_check_stop(ck);
	if (!h->frame_urgent && now - h->last_frame_ms < HOLDER_FRAME_MIN_MS) {
		if (!uv_is_active((uv_handle_t *)&h->flush_timer))
			uv_timer_start(&h->flush_timer, flush_timer_cb,
			    HOLDER_FRAME_MIN_MS - (now - h->last_frame_ms), 0);
		return;
	}
	h->frame_urgent = false;
	h->last_frame_ms = now;
	pty__holder_server_collect_dirty(h);
	for (struct hclient *c = h->clients; c != NULL; c = c->next) {
		if (c->live && (c->dfirst >= 0 || c->full))
			pty__holder_server_conn_flush(h, c);
	}
}

static void
flush_timer_cb(uv_timer_t *t)
{
	struct holder *h = t->data;

	h->frame_urgent = true;
	flush_check_cb(&h->flush_check);
}

static bool
may_control(struct hclient *c)
{
	const struct pty_holder_opts *o = c->h->o;

	/* SPEC 3: the holder itself enforces the owner's opt-in. */
	return c->owner || !o->trusted_local || o->allow_control;
}


static void
handle_frame(struct hclient *c, uint8_t type, const uint8_t *p, size_t len)
{
	struct holder *h = c->h;
	struct pty_rd r;
	uint32_t a, b;

	if (pty_wire_check(type, p, len) < 0) {
		send_error(c, PTY_EPROTO, "malformed frame");
		pty__holder_server_conn_close(c);
		return;
	}
	pty_rd_init(&r, p, len);
	switch (type) {
	case PTY_W_HELLO:
		a = pty_rd_u32(&r);
		b = pty_rd_u8(&r);
		if (a != PTY_WIRE_VERSION) {
			send_error(c, PTY_EPROTO, "protocol version mismatch");
			pty__holder_server_conn_close(c);
			return;
		}
		if (b & PTY_HELLO_SUMMARY) {
			c->summary = true;
			pty__holder_server_status(c, 0, false);
		}
		if (b & PTY_HELLO_LIVE) {
			c->live = true;
			c->full = true;
			pty__holder_server_schedule_flush(h, true);
		}
		return;
	case PTY_W_STATUS:
		pty__holder_server_status(c, pty_rd_u32(&r), true);
		return;
	case PTY_W_SCROLLBACK: {
		size_t total = pty_screen_sb_count(h->screen);
		int rows;

		a = pty_rd_u32(&r);
		b = pty_rd_u32(&r);
		pty_wbuf_reset(&h->wb);
		pty__holder_frames_sb(&h->wb, h->screen, a, b);
		/*
		 * The answer that reaches the newest line is followed by the
		 * whole screen as it is now, in the same write: a live reader
		 * gets scrollback and screen from one moment, with no line in
		 * both or in neither (SPEC 4.5).
		 */
		if (c->live && (uint64_t)a + (b < PTY_SB_CHUNK ? b :
		    PTY_SB_CHUNK) >= total) {
			pty_screen_size(h->screen, &rows, NULL);
			pty__holder_frames_screen(&h->wb, h->screen, h->state,
			    (int32_t)h->wstatus, 0, rows - 1);
		}
		pty__holder_server_conn_send(c, &h->wb);
		return;
	}
	default:
		break;
	}
	if (!may_control(c)) {
		send_error(c, PTY_EDENIED,
		    "trusted_local lease without --allow-control: "
		    "the owner did not allow control");
		return;
	}
	if (h->state == PTY_RUN_EXITED && type == PTY_W_CANCEL && h->held &&
	    h->o->hooks.cancel_held != NULL &&
	    h->o->hooks.cancel_held(h->o->hooks.ud) == 0) {
		pty__holder_event(h, "cancel", "operator cancel requested "
		    "while %s", h->phase);
		send_ok(c, type);
		return;
	}
	if (h->state == PTY_RUN_EXITED && type != PTY_W_RESIZE) {
		send_error(c, PTY_ECLOSED, "the agent has exited");
		return;
	}
	{
		struct pty_detect_event ev = { .kind = PTY_DETECT_EV_INPUT,
			.bytes = len ? len : 1 };

		if (type == PTY_W_RESIZE)
			ev.kind = PTY_DETECT_EV_RESIZE;
		if (type == PTY_W_INPUT || type == PTY_W_PASTE ||
		    type == PTY_W_KEY || type == PTY_W_UNICHAR ||
		    type == PTY_W_RESIZE)
			pty__holder_detect_event(h, &ev);
	}
	switch (type) {
	case PTY_W_INPUT:
		if (pty_proc_write(h->proc, p, len) < 0)
			send_error(c, -ENOBUFS, "input queue full");
		/*
		 * The keystroke changes nothing on screen: its echo does.
		 * Mark the next frame urgent so the echo is sent at once.
		 */
		h->frame_urgent = true;
		break;
	case PTY_W_PASTE:
		pty_screen_paste(h->screen, (const char *)p, len);
		/*
		 * The keystroke changes nothing on screen: its echo does.
		 * Mark the next frame urgent so the echo is sent at once.
		 */
		h->frame_urgent = true;
		break;
	case PTY_W_KEY:
		a = pty_rd_u32(&r);
		b = pty_rd_u32(&r);
		pty_screen_key(h->screen, (enum pty_key)a, b);
		/*
		 * The keystroke changes nothing on screen: its echo does.
		 * Mark the next frame urgent so the echo is sent at once.
		 */
		h->frame_urgent = true;
		break;
	case PTY_W_UNICHAR:
		a = pty_rd_u32(&r);
		b = pty_rd_u32(&r);
		pty_screen_unichar(h->screen, a, b);
		/*
		 * The keystroke changes nothing on screen: its echo does.
		 * Mark the next frame urgent so the echo is sent at once.
		 */
		h->frame_urgent = true;
		break;
	case PTY_W_RESIZE:
		a = pty_rd_u16(&r);
		b = pty_rd_u16(&r);
		if (pty_screen_resize(h->screen, (int)a, (int)b) == 0 &&
		    h->state != PTY_RUN_EXITED)
			if (pty_proc_resize(h->proc, (int)a, (int)b) < 0)
				send_error(c, -EINVAL, "resize failed");
		for (struct hclient *x = h->clients; x != NULL; x = x->next)
			x->full = x->live;
		pty__holder_server_schedule_flush(h, true);
		break;
	case PTY_W_SIGNAL:
		a = pty_rd_u8(&r);
		if (a != SIGINT && a != SIGTERM && a != SIGKILL &&
		    a != SIGHUP && a != SIGQUIT && a != SIGTSTP &&
		    a != SIGCONT) {
			send_error(c, -EINVAL, "signal not allowed");
			return;
		}
		pty_proc_signal(h->proc, (int)a);
		pty__holder_event(h, "signal", "sent signal %u", a);
		send_ok(c, type);
		break;
	case PTY_W_ANSWER: {
		/* SPEC 5.4: the holder checks the digest on its own screen */
		uint64_t dg = pty_rd_u64(&r);
		char why[256];
		int rc;

		rc = pty__holder_detect_answer(h, c, dg, (const char *)p + 8,
		    len - 8, why, sizeof why);
		if (rc < 0)
			send_error(c, rc, why);
		else
			send_ok(c, type);
		h->frame_urgent = true;
		break;
	}
	case PTY_W_CANCEL:
		if (!h->cancelled) {
			struct pty_detect_event ev = {
				.kind = PTY_DETECT_EV_CANCEL };

			pty__holder_detect_event(h, &ev);
			h->cancelled = true;
			h->cancel_step = 0;
			pty__holder_event(h, "cancel", "operator cancel requested");
			pty__holder_cancel_step(h);
		}
		send_ok(c, type);
		break;
	default:
		send_error(c, PTY_EPROTO, "unexpected frame type");
		break;
	}
}

static void
client_alloc(uv_handle_t *hd, size_t hint, uv_buf_t *buf)
{
	static char rbuf[65536]; /* one loop, one read at a time */

	(void)hd;
	(void)hint;
	buf->base = rbuf;
	buf->len = sizeof rbuf;
}

static void
client_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	struct hclient *c = s->data;
	const uint8_t *p;
	size_t plen;
	uint8_t type;
	int rc;

	if (n < 0) {
		pty__holder_server_conn_close(c);
		return;
	}
	if (n == 0)
		return;
	if (pty_wire_dec_push(&c->dec, buf->base, (size_t)n) < 0) {
		pty__holder_server_conn_close(c);
		return;
	}
	while (!c->closing &&
	    (rc = pty_wire_dec_next(&c->dec, &type, &p, &plen)) != 0) {
		if (rc < 0) {
			send_error(c, rc, "malformed frame");
			pty__holder_server_conn_close(c);
			return;
		}
		handle_frame(c, type, p, plen);
	}
}

struct hclient *
pty__holder_server_conn_new(struct holder *h)
{
	struct hclient *c = calloc(1, sizeof *c);

	if (c == NULL)
		return NULL;
	c->h = h;
	c->dfirst = c->dlast = -1;
	pty_wire_dec_init(&c->dec, PTY_WIRE_MAX);
	uv_pipe_init(h->loop, &c->pipe, 0);
	c->pipe.data = c;
	return c;
}

void
pty__holder_server_conn_attach(struct holder *h, struct hclient *c)
{
	c->next = h->clients;
	h->clients = c;
	h->nclients++;
	uv_read_start((uv_stream_t *)&c->pipe, client_alloc, client_read);
}

static bool
peer_allowed(struct hclient *c)
{
	struct ucred cr;
	socklen_t len = sizeof cr;
	uv_os_fd_t fd;

	if (uv_fileno((uv_handle_t *)&c->pipe, &fd) < 0)
		return false;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
		return false;
	c->uid = cr.uid;
	c->pid = cr.pid;
	/* SPEC 9.5: only the holder's own user (or root). */
	return cr.uid == geteuid() || cr.uid == 0;
}

void
pty__holder_server_on_connect(uv_stream_t *server, int status)
{
	struct holder *h = server->data;
	struct hclient *c;

	if (status < 0)
		return;
	if ((c = pty__holder_server_conn_new(h)) == NULL)
		return;
	if (uv_accept(server, (uv_stream_t *)&c->pipe) < 0 ||
	    !peer_allowed(c) || h->nclients >= HOLDER_MAX_CLIENTS ||
	    h->stopping) {
		c->closing = true;
		uv_close((uv_handle_t *)&c->pipe,
		    pty__holder_server_conn_closed);
		return;
	}
	pty__holder_server_conn_attach(h, c);
}

/* Push a status to summary clients (the console's lease list). */
void
pty__holder_server_summary_cb(uv_timer_t *t)
{
	struct holder *h = t->data;

	for (struct hclient *c = h->clients; c != NULL; c = c->next) {
		if (c->summary && !c->closing &&
		    c->queued < HOLDER_CLIENT_QUEUE)
			pty__holder_server_status(c, 0, false);
	}
}

void
pty__holder_server_summary_changed(struct holder *h)
{
	if (!uv_is_active((uv_handle_t *)&h->summary_timer))
		uv_timer_start(&h->summary_timer,
		    pty__holder_server_summary_cb, PTY_SUMMARY_MS, 0);
}

