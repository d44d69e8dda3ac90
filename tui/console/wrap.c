/*
 * wrap.c: the terminal side of `corral wrap` (SPEC 3): this terminal shows
 * the trusted_local lease's screen, drawn from the holder's screen model
 * (never the agent's raw bytes, SPEC 4.7), and types into it as the owner.
 * The outer terminal's input modes follow the agent's (cursor keys, keypad,
 * bracketed paste), as tmux does. C-b d detaches; the agent keeps running.
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
#include <uv.h>

#include "pty/pty.h"
#include "tui/console/console.h"

#define WRAP_PREFIX 0x02 /* C-b */

struct wrap {
	uv_loop_t loop;
	uv_pipe_t sock;
	uv_tty_t in, out;
	uv_signal_t winch;
	uv_check_t render;
	struct pty_wire_dec dec;
	struct pty_wbuf wb, screen;
	struct pty_mirror m;
	struct termios saved;
	uint8_t modes;
	bool prefix, detached, exited;
	int exit_code;
	const char *id;
};

static void
out_write_done(uv_write_t *req, int status)
{
	(void)status;
	free(req);
}

static void
out_flush(struct wrap *w)
{
	uv_write_t *req;
	uv_buf_t b;
	char *copy;

	if (w->screen.len == 0)
		return;
	req = malloc(sizeof *req + w->screen.len);
	if (req == NULL)
		return;
	copy = (char *)(req + 1);
	memcpy(copy, w->screen.buf, w->screen.len);
	b = uv_buf_init(copy, (unsigned)w->screen.len);
	if (uv_write(req, (uv_stream_t *)&w->out, &b, 1, out_write_done) < 0)
		free(req);
	pty_wbuf_reset(&w->screen);
}

static void
puts_screen(struct wrap *w, const char *s)
{
	pty_wbuf_put(&w->screen, s, strlen(s));
}

static void
sgr(struct pty_wbuf *b, const struct pty_cell *c)
{
	char buf[96];
	int n = snprintf(buf, sizeof buf, "\033[0");
	uint32_t cols[2] = { c->fg, c->bg };

	if (c->attrs & PTY_ATTR_BOLD)
		n += snprintf(buf + n, sizeof buf - (size_t)n, ";1");
	if (c->attrs & PTY_ATTR_FAINT)
		n += snprintf(buf + n, sizeof buf - (size_t)n, ";2");
	if (c->attrs & PTY_ATTR_ITALIC)
		n += snprintf(buf + n, sizeof buf - (size_t)n, ";3");
	if (c->attrs & PTY_ATTR_UNDERLINE)
		n += snprintf(buf + n, sizeof buf - (size_t)n, ";4");
	if (c->attrs & PTY_ATTR_BLINK)
		n += snprintf(buf + n, sizeof buf - (size_t)n, ";5");
	if (c->attrs & PTY_ATTR_REVERSE)
		n += snprintf(buf + n, sizeof buf - (size_t)n, ";7");
	if (c->attrs & PTY_ATTR_STRIKE)
		n += snprintf(buf + n, sizeof buf - (size_t)n, ";9");
	for (int i = 0; i < 2; i++) {
		uint32_t v = cols[i];
		int base = i == 0 ? 38 : 48;

		if (PTY_COLOR_KIND(v) == PTY_COLOR_KIND_INDEXED)
			n += snprintf(buf + n, sizeof buf - (size_t)n,
			    ";%d;5;%u", base, v & 0xffu);
		else if (PTY_COLOR_KIND(v) == PTY_COLOR_KIND_RGB)
			n += snprintf(buf + n, sizeof buf - (size_t)n,
			    ";%d;2;%u;%u;%u", base, (v >> 16) & 0xffu,
			    (v >> 8) & 0xffu, v & 0xffu);
	}
	n += snprintf(buf + n, sizeof buf - (size_t)n, "m");
	pty_wbuf_put(b, buf, (size_t)n);
}

static void
mode(struct wrap *w, uint8_t bit, const char *on, const char *off)
{
	if ((w->m.meta.modes & bit) == (w->modes & bit))
		return;
	puts_screen(w, (w->m.meta.modes & bit) ? on : off);
}

static void
render_cb(uv_check_t *ck)
{
	struct wrap *w = ck->data;
	const struct pty_cell *prev = NULL;
	char buf[64];

	uv_check_stop(ck);
	if (!w->m.dirty || w->m.cells == NULL)
		return;
	puts_screen(w, "\033[?25l");
	for (uint32_t r = w->m.dirty_first; r <= w->m.dirty_last &&
	    (int)r < w->m.rows; r++) {
		snprintf(buf, sizeof buf, "\033[%u;1H", r + 1);
		puts_screen(w, buf);
		prev = NULL;
		for (int col = 0; col < w->m.cols; col++) {
			const struct pty_cell *c = pty_mirror_cell(&w->m,
			    (int)r, col);
			char u[4 * PTY_CELL_MAXCP + 1];
			size_t n;

			if (c->width == 0)
				continue;
			if (prev == NULL || prev->fg != c->fg ||
			    prev->bg != c->bg || prev->attrs != c->attrs)
				sgr(&w->screen, c);
			prev = c;
			/* Concealed text is drawn as blanks, never sent. */
			if (c->cp[0] == 0 || tui_escape_cp_unsafe(c->cp[0]) ||
			    (c->attrs & PTY_ATTR_CONCEAL)) {
				pty_wbuf_put(&w->screen, "  ",
				    c->width == 2 ? 2 : 1);
				continue;
			}
			n = pty_cell_utf8(c, u, sizeof u);
			pty_wbuf_put(&w->screen, u, n);
		}
		puts_screen(w, "\033[0m\033[K");
	}
	w->m.dirty = false;
	mode(w, PTY_WMODE_APPCURSOR, "\033[?1h", "\033[?1l");
	mode(w, PTY_WMODE_APPKEYPAD, "\033=", "\033>");
	mode(w, PTY_WMODE_PASTE, "\033[?2004h", "\033[?2004l");
	w->modes = w->m.meta.modes;
	snprintf(buf, sizeof buf, "\033[%u;%uH", w->m.meta.cur_row + 1u,
	    w->m.meta.cur_col + 1u);
	puts_screen(w, buf);
	if (w->m.meta.cur_visible)
		puts_screen(w, "\033[?25h");
	out_flush(w);
}

static void
send_frame(struct wrap *w, uint8_t type, const void *p, size_t len)
{
	uv_write_t *req;
	uv_buf_t b;
	size_t st;
	char *copy;

	pty_wbuf_reset(&w->wb);
	st = pty_wire_begin(&w->wb, type);
	pty_wbuf_put(&w->wb, p, len);
	pty_wire_end(&w->wb, st);
	if (w->wb.oom || (req = malloc(sizeof *req + w->wb.len)) == NULL)
		return;
	copy = (char *)(req + 1);
	memcpy(copy, w->wb.buf, w->wb.len);
	b = uv_buf_init(copy, (unsigned)w->wb.len);
	if (uv_write(req, (uv_stream_t *)&w->sock, &b, 1, out_write_done) < 0)
		free(req);
}

static void
send_size(struct wrap *w)
{
	struct winsize ws;
	uint8_t p[4];

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0 || ws.ws_row == 0)
		return;
	p[0] = (uint8_t)ws.ws_row;
	p[1] = (uint8_t)(ws.ws_row >> 8);
	p[2] = (uint8_t)ws.ws_col;
	p[3] = (uint8_t)(ws.ws_col >> 8);
	send_frame(w, PTY_W_RESIZE, p, sizeof p);
}

static void
stop(struct wrap *w)
{
	uv_read_stop((uv_stream_t *)&w->in);
	uv_read_stop((uv_stream_t *)&w->sock);
	uv_signal_stop(&w->winch);
	uv_check_stop(&w->render);
	uv_stop(&w->loop);
}

static void
alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
	(void)h;
	b->base = malloc(hint);
	b->len = b->base ? hint : 0;
}

static void
sock_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct wrap *w = s->data;
	const uint8_t *p;
	size_t plen;
	uint8_t type;
	int rc;

	if (n < 0) {
		stop(w);
	} else if (n > 0 && pty_wire_dec_push(&w->dec, b->base,
	    (size_t)n) == 0) {
		while ((rc = pty_wire_dec_next(&w->dec, &type, &p, &plen)) ==
		    1) {
			if (pty_mirror_apply(&w->m, type, p, plen) < 0) {
				stop(w);
				break;
			}
			if (type == PTY_W_EXIT) {
				int st = w->m.exit_status;

				w->exited = true;
				w->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) :
							       128 + WTERMSIG(st);
			}
		}
		if (rc < 0)
			stop(w);
		uv_check_start(&w->render, render_cb);
		if (w->exited) {
			render_cb(&w->render);
			stop(w);
		}
	}
	free(b->base);
}

static void
in_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct wrap *w = s->data;
	size_t start = 0;

	if (n < 0) {
		stop(w);
		free(b->base);
		return;
	}
	for (ssize_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)b->base[i];

		if (w->prefix) {
			w->prefix = false;
			start = (size_t)i + 1;
			if (ch == 'd') {
				w->detached = true;
				stop(w);
				break;
			}
			/* C-b C-b sends one C-b; anything else is dropped. */
			if (ch == WRAP_PREFIX)
				send_frame(w, PTY_W_INPUT, &ch, 1);
			continue;
		}
		if (ch == WRAP_PREFIX) {
			if ((size_t)i > start)
				send_frame(w, PTY_W_INPUT, b->base + start,
				    (size_t)i - start);
			w->prefix = true;
			start = (size_t)i + 1;
		}
	}
	if (!w->detached && !w->prefix && (size_t)n > start)
		send_frame(w, PTY_W_INPUT, b->base + start, (size_t)n - start);
	free(b->base);
}

static void
on_winch(uv_signal_t *s, int sig)
{
	(void)sig;
	send_size(s->data);
}

int
tui_wrap_attach(struct tui_ctx *c, const char *id, int sockfd)
{
	struct wrap *w = calloc(1, sizeof *w);
	struct termios raw;
	uint8_t hello[5] = { PTY_WIRE_VERSION, 0, 0, 0, PTY_HELLO_LIVE |
		PTY_HELLO_CONTROL };
	int rc;

	if (w == NULL) {
		close(sockfd);
		return tui_ctx_err(c, "out of memory");
	}
	w->id = id;
	pty_wire_dec_init(&w->dec, PTY_WIRE_MAX);
	pty_wbuf_init(&w->wb);
	pty_wbuf_init(&w->screen);
	pty_mirror_init(&w->m);
	uv_loop_init(&w->loop);
	uv_pipe_init(&w->loop, &w->sock, 0);
	uv_tty_init(&w->loop, &w->in, STDIN_FILENO, 1);
	uv_tty_init(&w->loop, &w->out, STDOUT_FILENO, 0);
	uv_signal_init(&w->loop, &w->winch);
	uv_check_init(&w->loop, &w->render);
	w->sock.data = w->in.data = w->out.data = w->winch.data =
	    w->render.data = w;
	uv_pipe_open(&w->sock, sockfd);
	tcgetattr(STDIN_FILENO, &w->saved);
	raw = w->saved;
	cfmakeraw(&raw);
	tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	puts_screen(w, "\033[?1049h\033[H\033[2J");
	out_flush(w);
	send_frame(w, PTY_W_HELLO, hello, sizeof hello);
	send_size(w);
	uv_read_start((uv_stream_t *)&w->sock, alloc_cb, sock_read);
	uv_read_start((uv_stream_t *)&w->in, alloc_cb, in_read);
	uv_signal_start(&w->winch, on_winch, SIGWINCH);
	uv_run(&w->loop, UV_RUN_DEFAULT);

	puts_screen(w, "\033[0m\033[?1l\033>\033[?2004l\033[?25h\033[?1049l");
	out_flush(w);
	uv_walk(&w->loop, (uv_walk_cb)uv_close, NULL);
	uv_run(&w->loop, UV_RUN_DEFAULT);
	tcsetattr(STDIN_FILENO, TCSANOW, &w->saved);
	uv_loop_close(&w->loop);
	if (w->detached)
		printf("[detached from %s; 'corral attach %s' to return]\n",
		    id, id);
	rc = w->exited ? w->exit_code : TUI_EXIT_OK;
	pty_mirror_free(&w->m);
	pty_wire_dec_free(&w->dec);
	pty_wbuf_free(&w->wb);
	pty_wbuf_free(&w->screen);
	free(w);
	return rc;
}
