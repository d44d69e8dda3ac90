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

#include <jansson.h>

#include "pty/pty.h"
#include "pty/pty_holder_int.h"

#define HOLDER_READ_BUDGET (256u * 1024u)
#define HOLDER_CLIENT_QUEUE (512u * 1024u)
#define HOLDER_FRAME_MIN_MS 8
#define HOLDER_LINGER_MS 1000
#define HOLDER_MAX_CLIENTS 64

struct holder;

struct hclient {
	uv_pipe_t pipe;
	struct holder *h;
	struct pty_wire_dec dec;
	struct hclient *next;
	bool live, owner, closing, full, summary;
	int dfirst, dlast; /* pending dirty rows; dfirst < 0: none */
	size_t queued;
};

struct holder {
	uv_loop_t *loop;
	const struct pty_holder_opts *o;
	struct pty_screen *screen;
	struct pty_proc *proc;
	uv_pipe_t server;
	uv_check_t flush_check;
	uv_timer_t flush_timer;
	uv_timer_t cancel_timer;
	uv_timer_t linger_timer;
	uv_timer_t summary_timer;
	uv_signal_t sigterm;
	struct hclient *clients;
	int nclients;
	int transcript_fd;
	uint64_t transcript_bytes;
	bool transcript_truncated;
	enum pty_run_state state;
	int64_t wstatus;
	bool cancelled;
	int cancel_step;
	bool frame_urgent;
	uint64_t last_frame_ms;
	uint64_t started_ms;
	pid_t child;
	int exit_code;
	bool stopping;
	struct pty_wbuf wb;
};

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint64_t
mono_ms(uv_loop_t *loop)
{
	return uv_now(loop);
}

static void
hevent(struct holder *h, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
hevent(struct holder *h, const char *kind, const char *fmt, ...)
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

/* ---- frames -------------------------------------------------------------- */

void
pty__holder_meta(struct pty_screen *s, enum pty_run_state state,
    int32_t exit_status, struct pty_wire_meta *m)
{
	struct pty_cursor c;
	struct pty_modes md;
	int rows, cols;

	memset(m, 0, sizeof *m);
	pty_screen_size(s, &rows, &cols);
	pty_screen_cursor(s, &c);
	pty_screen_modes(s, &md);
	m->rows = (uint16_t)rows;
	m->cols = (uint16_t)cols;
	m->cur_row = (uint16_t)(c.row < 0 ? 0 : c.row);
	m->cur_col = (uint16_t)(c.col < 0 ? 0 : c.col);
	m->cur_visible = c.visible;
	m->cur_blink = c.blink;
	m->cur_shape = c.shape;
	m->modes = (uint8_t)((md.altscreen ? PTY_WMODE_ALT : 0) |
	    (md.app_cursor ? PTY_WMODE_APPCURSOR : 0) |
	    (md.app_keypad ? PTY_WMODE_APPKEYPAD : 0) |
	    (md.bracketed_paste ? PTY_WMODE_PASTE : 0) |
	    (md.mouse_sgr ? PTY_WMODE_MOUSESGR : 0) |
	    (md.reverse ? PTY_WMODE_REVERSE : 0) |
	    (md.focus_events ? PTY_WMODE_FOCUS : 0));
	m->mouse = md.mouse;
	m->state = (uint8_t)state;
	m->exit_status = exit_status;
	m->bells = pty_screen_bells(s);
	m->sb_count = pty_screen_sb_count(s);
}

/* Append META then ROWS [first, last] of the screen to wb. */
void
pty__holder_frame(struct pty_wbuf *wb, struct pty_screen *s,
    enum pty_run_state state, int32_t exit_status, int first, int last)
{
	struct pty_wire_meta m;
	struct pty_cell *cells;
	uint8_t *line;
	size_t start, lmax;
	int rows, cols;

	pty__holder_meta(s, state, exit_status, &m);
	start = pty_wire_begin(wb, PTY_W_META);
	pty_wire_meta_put(wb, &m, pty_screen_title(s));
	pty_wire_end(wb, start);
	pty_screen_size(s, &rows, &cols);
	if (first < 0)
		return;
	if (last >= rows)
		last = rows - 1;
	if (first > last)
		return;
	lmax = pty_line_packed_max(cols);
	cells = malloc(sizeof *cells * (size_t)cols);
	line = malloc(lmax);
	if (cells == NULL || line == NULL) {
		wb->oom = true;
		goto out;
	}
	start = pty_wire_begin(wb, PTY_W_ROWS);
	pty_wbuf_u16(wb, (uint16_t)first);
	pty_wbuf_u16(wb, (uint16_t)(last - first + 1));
	for (int r = first; r <= last; r++) {
		size_t n;

		for (int c = 0; c < cols; c++)
			pty_screen_cell(s, r, c, &cells[c]);
		n = pty_line_pack(cells, cols, line, lmax);
		pty_wbuf_put(wb, line, n);
	}
	pty_wire_end(wb, start);
out:
	free(cells);
	free(line);
}

/* Append an SB_LINES frame for scrollback lines [from, from+count). */
void
pty__holder_sb(struct pty_wbuf *wb, struct pty_screen *s, uint32_t from,
    uint32_t count)
{
	size_t total = pty_screen_sb_count(s), start, lmax;
	struct pty_cell *cells;
	uint8_t *line;
	int rows, cols;

	pty_screen_size(s, &rows, &cols);
	(void)rows;
	if (from > total)
		from = (uint32_t)total;
	if (count > total - from)
		count = (uint32_t)(total - from);
	/* Keep the frame under the cap: at most ~2000 lines a frame. */
	if (count > 2000)
		count = 2000;
	lmax = pty_line_packed_max(1000);
	cells = malloc(sizeof *cells * 1000);
	line = malloc(lmax);
	start = pty_wire_begin(wb, PTY_W_SB_LINES);
	pty_wbuf_u32(wb, from);
	pty_wbuf_u32(wb, (uint32_t)total);
	if (cells == NULL || line == NULL) {
		pty_wbuf_u32(wb, 0);
		wb->oom = true;
	} else {
		pty_wbuf_u32(wb, count);
		for (uint32_t i = 0; i < count; i++) {
			int n = pty_screen_sb_line(s, from + i, cells, 1000);

			if (n < 0)
				n = 0;
			pty_wbuf_put(wb, line,
			    pty_line_pack(cells, n, line, lmax));
		}
	}
	pty_wire_end(wb, start);
	free(cells);
	free(line);
}

/* ---- clients --------------------------------------------------------------- */

struct hwrite {
	uv_write_t req;
	struct hclient *c;
	size_t len;
	uint8_t data[];
};

static void client_close(struct hclient *);
static void holder_maybe_stop(struct holder *);
static void schedule_flush(struct holder *, bool);

static void
write_done(uv_write_t *req, int status)
{
	struct hwrite *w = (struct hwrite *)req;
	struct hclient *c = w->c;

	c->queued -= w->len;
	free(w);
	if (status < 0)
		client_close(c);
	else if (c->dfirst >= 0 && c->h != NULL)
		schedule_flush(c->h, false);
	if (c->h != NULL)
		holder_maybe_stop(c->h);
}

static int
client_send(struct hclient *c, const struct pty_wbuf *wb)
{
	struct hwrite *w;
	uv_buf_t b;

	if (c->closing || wb->len == 0)
		return 0;
	if (wb->oom)
		return -ENOMEM;
	if ((w = malloc(sizeof *w + wb->len)) == NULL)
		return -ENOMEM;
	w->c = c;
	w->len = wb->len;
	memcpy(w->data, wb->buf, wb->len);
	b = uv_buf_init((char *)w->data, (unsigned int)wb->len);
	if (uv_write(&w->req, (uv_stream_t *)&c->pipe, &b, 1, write_done) <
	    0) {
		free(w);
		client_close(c);
		return -EPIPE;
	}
	c->queued += wb->len;
	return 0;
}

static void
client_closed(uv_handle_t *hd)
{
	struct hclient *c = hd->data;
	struct holder *h = c->h;

	pty_wire_dec_free(&c->dec);
	free(c);
	if (h != NULL)
		holder_maybe_stop(h);
}

static void
client_close(struct hclient *c)
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
	uv_close((uv_handle_t *)&c->pipe, client_closed);
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
	client_send(c, &h->wb);
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
	client_send(c, &h->wb);
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
	    pty_facts_sample(pty_proc_master_fd(h->proc), h->child, &f) < 0)
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

static void
send_status(struct hclient *c, uint32_t seq, bool facts)
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
	client_send(c, &h->wb);
}

static void flush_check_cb(uv_check_t *);

static void
schedule_flush(struct holder *h, bool urgent)
{
	if (urgent)
		h->frame_urgent = true;
	uv_check_start(&h->flush_check, flush_check_cb);
}

/* Fold the screen's dirty range into every live client's pending range. */
static void
collect_dirty(struct holder *h)
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

static void
flush_client(struct holder *h, struct hclient *c)
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
	pty__holder_frame(&h->wb, h->screen, h->state, (int32_t)h->wstatus,
	    c->dfirst, c->dlast);
	c->dfirst = c->dlast = -1;
	client_send(c, &h->wb);
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
	collect_dirty(h);
	for (struct hclient *c = h->clients; c != NULL; c = c->next) {
		if (c->live && (c->dfirst >= 0 || c->full))
			flush_client(h, c);
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

static void cancel_step(struct holder *h);

static void
handle_frame(struct hclient *c, uint8_t type, const uint8_t *p, size_t len)
{
	struct holder *h = c->h;
	struct pty_rd r;
	uint32_t a, b;

	if (pty_wire_check(type, p, len) < 0) {
		send_error(c, PTY_EPROTO, "malformed frame");
		client_close(c);
		return;
	}
	pty_rd_init(&r, p, len);
	switch (type) {
	case PTY_W_HELLO:
		a = pty_rd_u32(&r);
		b = pty_rd_u8(&r);
		if (a != PTY_WIRE_VERSION) {
			send_error(c, PTY_EPROTO, "protocol version mismatch");
			client_close(c);
			return;
		}
		if (b & PTY_HELLO_SUMMARY) {
			c->summary = true;
			send_status(c, 0, false);
		}
		if (b & PTY_HELLO_LIVE) {
			c->live = true;
			c->full = true;
			schedule_flush(h, true);
		}
		return;
	case PTY_W_STATUS:
		send_status(c, pty_rd_u32(&r), true);
		return;
	case PTY_W_SCROLLBACK:
		a = pty_rd_u32(&r);
		b = pty_rd_u32(&r);
		pty_wbuf_reset(&h->wb);
		pty__holder_sb(&h->wb, h->screen, a, b);
		client_send(c, &h->wb);
		return;
	default:
		break;
	}
	if (!may_control(c)) {
		send_error(c, PTY_EDENIED,
		    "trusted_local lease without --allow-control: "
		    "the owner did not allow control");
		return;
	}
	if (h->state == PTY_RUN_EXITED && type != PTY_W_RESIZE) {
		send_error(c, PTY_ECLOSED, "the agent has exited");
		return;
	}
	switch (type) {
	case PTY_W_INPUT:
		if (pty_proc_write(h->proc, p, len) < 0)
			send_error(c, -ENOBUFS, "input queue full");
		schedule_flush(h, true);
		break;
	case PTY_W_PASTE:
		pty_screen_paste(h->screen, (const char *)p, len);
		schedule_flush(h, true);
		break;
	case PTY_W_KEY:
		a = pty_rd_u32(&r);
		b = pty_rd_u32(&r);
		pty_screen_key(h->screen, (enum pty_key)a, b);
		schedule_flush(h, true);
		break;
	case PTY_W_UNICHAR:
		a = pty_rd_u32(&r);
		b = pty_rd_u32(&r);
		pty_screen_unichar(h->screen, a, b);
		schedule_flush(h, true);
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
		schedule_flush(h, true);
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
		hevent(h, "signal", "sent signal %u", a);
		send_ok(c, type);
		break;
	case PTY_W_CANCEL:
		if (!h->cancelled) {
			h->cancelled = true;
			h->cancel_step = 0;
			hevent(h, "cancel", "operator cancel requested");
			cancel_step(h);
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
		client_close(c);
		return;
	}
	if (n == 0)
		return;
	if (pty_wire_dec_push(&c->dec, buf->base, (size_t)n) < 0) {
		client_close(c);
		return;
	}
	while (!c->closing &&
	    (rc = pty_wire_dec_next(&c->dec, &type, &p, &plen)) != 0) {
		if (rc < 0) {
			send_error(c, rc, "malformed frame");
			client_close(c);
			return;
		}
		handle_frame(c, type, p, plen);
	}
}

static struct hclient *
client_new(struct holder *h)
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

static void
client_attach(struct holder *h, struct hclient *c)
{
	c->next = h->clients;
	h->clients = c;
	h->nclients++;
	uv_read_start((uv_stream_t *)&c->pipe, client_alloc, client_read);
}

static bool
peer_allowed(uv_pipe_t *p)
{
	struct ucred cr;
	socklen_t len = sizeof cr;
	uv_os_fd_t fd;

	if (uv_fileno((uv_handle_t *)p, &fd) < 0)
		return false;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
		return false;
	/* SPEC 9.5: only the holder's own user (or root). */
	return cr.uid == geteuid() || cr.uid == 0;
}

static void
on_connect(uv_stream_t *server, int status)
{
	struct holder *h = server->data;
	struct hclient *c;

	if (status < 0)
		return;
	if ((c = client_new(h)) == NULL)
		return;
	if (uv_accept(server, (uv_stream_t *)&c->pipe) < 0 ||
	    !peer_allowed(&c->pipe) || h->nclients >= HOLDER_MAX_CLIENTS ||
	    h->stopping) {
		c->closing = true;
		uv_close((uv_handle_t *)&c->pipe, client_closed);
		return;
	}
	client_attach(h, c);
}

/* ---- the agent --------------------------------------------------------------- */

static void
transcript_write(struct holder *h, const char *buf, size_t len)
{
	const struct pty_holder_opts *o = h->o;
	ssize_t w;

	if (h->transcript_fd < 0 || h->transcript_truncated)
		return;
	if (h->transcript_bytes + len > o->transcript_max) {
		len = (size_t)(o->transcript_max - h->transcript_bytes);
		h->transcript_truncated = true;
	}
	while (len > 0) {
		w = write(h->transcript_fd, buf, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			/* Full disk or I/O error: the agent keeps running. */
			h->transcript_truncated = true;
			hevent(h, "transcript", "transcript truncated: %s",
			    strerror(errno));
			return;
		}
		h->transcript_bytes += (uint64_t)w;
		buf += w;
		len -= (size_t)w;
	}
	if (h->transcript_truncated)
		hevent(h, "transcript", "transcript truncated at %llu bytes",
		    (unsigned long long)h->transcript_bytes);
}

/* Push a status to summary clients (the console's lease list). */
static void
summary_cb(uv_timer_t *t)
{
	struct holder *h = t->data;

	for (struct hclient *c = h->clients; c != NULL; c = c->next) {
		if (c->summary && !c->closing &&
		    c->queued < HOLDER_CLIENT_QUEUE)
			send_status(c, 0, false);
	}
}

static void
summary_changed(struct holder *h)
{
	if (!uv_is_active((uv_handle_t *)&h->summary_timer))
		uv_timer_start(&h->summary_timer, summary_cb, PTY_SUMMARY_MS,
		    0);
}

static void
on_pty_read(struct pty_proc *p, const char *buf, size_t len, void *ud)
{
	struct holder *h = ud;

	(void)p;
	if (h->clients != NULL)
		summary_changed(h);
	pty_screen_feed(h->screen, buf, len);
	transcript_write(h, buf, len);
	if (h->clients != NULL)
		schedule_flush(h, false);
	else
		pty_screen_dirty_clear(h->screen);
}

/* Query replies and encoded keys go back to the agent. */
static void
on_screen_output(const char *buf, size_t len, void *ud)
{
	struct holder *h = ud;

	if (h->proc != NULL && h->state != PTY_RUN_EXITED)
		if (pty_proc_write(h->proc, buf, len) < 0)
			hevent(h, "input", "reply to the agent dropped: queue "
			    "full");
}

static void
write_final(struct holder *h)
{
	struct pty_wbuf wb;
	int rows, cols, fd;
	size_t total, off = 0;

	pty_screen_size(h->screen, &rows, &cols);
	pty_wbuf_init(&wb);
	pty__holder_frame(&wb, h->screen, PTY_RUN_EXITED, (int32_t)h->wstatus,
	    0, rows - 1);
	total = pty_screen_sb_count(h->screen);
	do {
		pty__holder_sb(&wb, h->screen, (uint32_t)off, 2000);
		off += 2000;
	} while (off < total);
	if (!wb.oom && (fd = open("final.screen.tmp",
	    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) >= 0) {
		bool ok = write(fd, wb.buf, wb.len) == (ssize_t)wb.len;

		ok = fsync(fd) == 0 && ok;
		close(fd);
		if (!ok || rename("final.screen.tmp", "final.screen") < 0)
			unlink("final.screen.tmp");
	}
	pty_wbuf_free(&wb);
}

static void
agent_exit(struct pty_proc *p, int64_t wstatus, void *ud)
{
	struct holder *h = ud;
	size_t st;

	(void)p;
	h->state = PTY_RUN_EXITED;
	h->wstatus = wstatus;
	if (WIFEXITED(wstatus))
		h->exit_code = WEXITSTATUS(wstatus);
	else
		h->exit_code = 128 + WTERMSIG(wstatus);
	uv_timer_stop(&h->cancel_timer);
	/* Leftover processes of the session go with the agent. */
	if (h->cancelled)
		pty_proc_signal(h->proc, SIGKILL);
	write_final(h);
	if (h->o->hooks.exited != NULL)
		h->o->hooks.exited(wstatus, h->cancelled, h->o->hooks.ud);
	collect_dirty(h);
	summary_cb(&h->summary_timer);
	for (struct hclient *c = h->clients; c != NULL; c = c->next) {
		if (!c->live)
			continue;
		c->full = true;
		flush_client(h, c);
		pty_wbuf_reset(&h->wb);
		st = pty_wire_begin(&h->wb, PTY_W_EXIT);
		pty_wbuf_u32(&h->wb, (uint32_t)wstatus);
		pty_wire_end(&h->wb, st);
		client_send(c, &h->wb);
	}
	h->stopping = true;
	holder_maybe_stop(h);
}

/* SPEC 5.5: SIGINT, then SIGTERM, then SIGKILL, with bounded waits. */
static void
cancel_timer_cb(uv_timer_t *t)
{
	cancel_step(t->data);
}

static void
cancel_step(struct holder *h)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGKILL };
	static const char *const names[] = { "SIGINT", "SIGTERM", "SIGKILL" };
	int n;

	if (h->state == PTY_RUN_EXITED || h->cancel_step >= 3)
		return;
	n = pty_proc_signal(h->proc, sigs[h->cancel_step]);
	hevent(h, "cancel", "sent %s to %d target(s) at %llu",
	    names[h->cancel_step], n, (unsigned long long)now_ms());
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

static void
stop_now(struct holder *h)
{
	struct hclient *c, *next;

	for (c = h->clients; c != NULL; c = next) {
		next = c->next;
		client_close(c);
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

static void
holder_maybe_stop(struct holder *h)
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
		hevent(h, "cancel", "holder received SIGTERM");
		cancel_step(h);
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
	    o->plan == NULL)
		return -EINVAL;
	memset(&h, 0, sizeof h);
	h.loop = loop;
	h.o = o;
	h.transcript_fd = -1;
	h.started_ms = now_ms();
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
	pty_screen_set_output(h.screen, on_screen_output, &h);
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
	    (rc = uv_listen((uv_stream_t *)&h.server, 16, on_connect)) < 0) {
		ready(o->ready_fd, "err holder socket: %s\n", uv_strerror(rc));
		goto early;
	}
	uv_check_init(loop, &h.flush_check);
	uv_timer_init(loop, &h.flush_timer);
	uv_timer_init(loop, &h.cancel_timer);
	uv_timer_init(loop, &h.linger_timer);
	uv_timer_init(loop, &h.summary_timer);
	uv_signal_init(loop, &h.sigterm);
	h.flush_check.data = h.flush_timer.data = h.cancel_timer.data =
	    h.linger_timer.data = h.summary_timer.data = h.sigterm.data = &h;
	uv_signal_start(&h.sigterm, on_sigterm, SIGTERM);

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
	if (o->hooks.started != NULL)
		o->hooks.started(h.child, o->hooks.ud);
	ready(o->ready_fd, "ok %d\n", (int)h.child);
	if (o->owner_fd >= 0) {
		/* `corral wrap`: the owner's own connection, with control. */
		struct hclient *c = client_new(&h);

		if (c != NULL && uv_pipe_open(&c->pipe, o->owner_fd) == 0) {
			c->owner = true;
			client_attach(&h, c);
		} else if (c != NULL) {
			c->closing = true;
			uv_close((uv_handle_t *)&c->pipe, client_closed);
		}
	}

	uv_run(loop, UV_RUN_DEFAULT);
	/* Everything is closed; run once more to finish close callbacks. */
	uv_run(loop, UV_RUN_NOWAIT);
	if (h.transcript_fd >= 0)
		close(h.transcript_fd);
	pty_screen_free(h.screen);
	pty_wbuf_free(&h.wb);
	return h.exit_code;
early:
	unlink("holder.sock");
	uv_walk(loop, close_all_cb, NULL);
	uv_run(loop, UV_RUN_DEFAULT);
	if (h.transcript_fd >= 0)
		close(h.transcript_fd);
	pty_screen_free(h.screen);
	pty_wbuf_free(&h.wb);
	return rc < 0 ? rc : -EIO;
}
