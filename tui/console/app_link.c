/*
 * app_link.c: the console's links to the holders (SPEC 4, 9.5): a SUMMARY
 * connection per lease for its list row (status, bells, a lost holder),
 * the LIVE connection of the focused lease for its screen and
 * scrollback, the final screen a holder left on disk once its lease
 * ended, and tui_app_link_tend, which the tick calls to open what each
 * lease needs. Every link is a conn.c connection on the console's loop.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "tui/console/console_int.h"

#define APP_CONNECT_MS 2000	/* connect plus the holder's first frame */
#define APP_RETRY_MS 2000	/* reconnect to a holder after a failure */
#define APP_FINAL_MAX (16u << 20)	/* bytes of final.screen read */

/* ---- holder status (the list row) --------------------------------------- */

static void
set_str(char **dst, const char *src, size_t cap)
{
	free(*dst);
	*dst = src != NULL ? strndup(src, cap) : NULL;
}

/*
 * The question a blocked lease asks (SPEC 5.4): its first line for the
 * list row, "KEY label" of each option for the detail panel. Escaped
 * where drawn, like the rest of the status.
 */
static void
apply_question(struct tui_session *s, json_t *q)
{
	const char *t = json_string_value(json_object_get(q, "text"));
	char buf[1024];
	size_t o = 0, i;
	json_t *op;

	free(s->question);
	free(s->options);
	s->question = s->options = NULL;
	for (i = 0; i < s->nopts; i++) {
		free(s->opt[i]);
		s->opt[i] = NULL;
	}
	s->nopts = 0;
	s->qdigest[0] = '\0';
	if (!json_is_object(q) || t == NULL)
		return;
	snprintf(s->qdigest, sizeof s->qdigest, "%s",
	    json_string_value(json_object_get(q, "digest")) != NULL ?
	    json_string_value(json_object_get(q, "digest")) : "");
	/* one "?" in front, whether or not the agent wrote its own */
	snprintf(buf, sizeof buf, "%s%.*s", t[0] == '?' ? "" : "? ",
	    (int)strcspn(t, "\n"), t);
	s->question = strdup(buf);
	buf[0] = '\0';
	json_array_foreach(json_object_get(q, "options"), i, op) {
		int n = snprintf(buf + o, sizeof buf - o, "%s%s %s", i > 0 ?
		    " | " : "", json_string_value(json_object_get(op, "key")) ?
		    json_string_value(json_object_get(op, "key")) : "?",
		    json_string_value(json_object_get(op, "label")) ?
		    json_string_value(json_object_get(op, "label")) : "");

		if (n < 0 || (size_t)n >= sizeof buf - o)
			break;
		/* options 1-9 can be answered with a key (app_act.c) */
		if (s->nopts < sizeof s->opt / sizeof s->opt[0])
			s->opt[s->nopts++] = strdup(buf + o + (i > 0 ? 3 : 0));
		o += (size_t)n;
	}
	s->options = strdup(buf);
}

static void
apply_status(struct tui_app *a, struct tui_session *s, const uint8_t *p,
    size_t len)
{
	json_t *j, *v;
	bool focused = strcmp(s->id, a->sel) == 0, was_exited = s->exited;
	uint64_t bells;

	if (len < 4 || (j = json_loadb((const char *)p + 4, len - 4, 0,
	    NULL)) == NULL)
		return;
	set_str(&s->title, json_string_value(json_object_get(j, "title")),
	    PTY_SCREEN_TITLE_MAX);
	set_str(&s->last_line, json_string_value(json_object_get(j,
	    "last_line")), 512);
	set_str(&s->activity, json_string_value(json_object_get(j,
	    "activity")), 32);
	apply_question(s, json_object_get(j, "question"));
	v = json_object_get(j, "state");
	s->exited = json_is_string(v) &&
	    strcmp(json_string_value(v), "exited") == 0;
	s->exit_status = (int)json_integer_value(json_object_get(j,
	    "exit_status"));
	s->cancelled = json_is_true(json_object_get(j, "cancelled"));
	s->control = !json_is_true(json_object_get(j, "trusted_local")) ||
	    json_is_true(json_object_get(j, "allow_control"));
	bells = (uint64_t)json_integer_value(json_object_get(j, "bells"));
	if (s->have_status && bells > s->bells) {
		/* SPEC 4.2/4.7: a badge and a toast, never a beep. */
		if (!focused)
			s->bell_badge = true;
		tui_app_message(a, false, "bell from %s", tui_app_name(s));
	}
	s->bells = bells;
	s->have_status = true;
	s->status_ms = tui_app_now(a);
	if (s->lost) {
		s->lost = false;
		tui_app_log(a, "%s answers again", s->id);
	}
	if (s->exited && !was_exited) {
		a->want_journal = true;
		if (!focused)
			tui_app_message(a, false, "%s ended", tui_app_name(s));
	}
	json_decref(j);
	tui_app_mark(a, TUI_DIRTY_LIST | TUI_DIRTY_STATUS |
	    (focused ? TUI_DIRTY_DETAIL : 0), false);
}

void
tui_app_link_lost(struct tui_app *a, struct tui_session *s, const char *why)
{
	if (!s->lost || strcmp(s->lost_reason, why) != 0) {
		tui_app_log(a, "%s lost: %s", s->id, why);
		tui_app_message(a, true, "%s lost: %s", tui_app_name(s), why);
	}
	s->lost = true;
	snprintf(s->lost_reason, sizeof s->lost_reason, "%s", why);
	tui_app_mark(a, TUI_DIRTY_LIST | TUI_DIRTY_STATUS |
	    (strcmp(s->id, a->sel) == 0 ? TUI_DIRTY_DETAIL : 0), false);
	if (strcmp(s->id, a->sel) == 0)
		tui_app_mark_pane(a);
}

/* Why a connection to a holder failed, the most telling reason first. */
static void
lost_reason(struct tui_session *s, int err, char *buf, size_t bufsz)
{
	if (s->rec.holder_pid > 0 && !lease_proc_alive(
	    (pid_t)s->rec.holder_pid, s->rec.holder_start))
		snprintf(buf, bufsz, "holder process %lld is gone",
		    (long long)s->rec.holder_pid);
	else
		tui_conn_reason(err, APP_CONNECT_MS, buf, bufsz);
}

/* ---- connections -------------------------------------------------------- */

static void
holder_error(struct tui_app *a, struct tui_session *s, const uint8_t *p,
    size_t len)
{
	struct pty_rd r;
	int32_t code;
	char text[160];
	size_t n;

	pty_rd_init(&r, p, len);
	code = (int32_t)pty_rd_u32(&r);
	n = len - r.off < sizeof text - 1 ? len - r.off : sizeof text - 1;
	memcpy(text, p + r.off, n);
	text[n] = '\0';
	tui_app_log(a, "%s: holder error %d: %s", s->id, (int)code, text);
	if (code == PTY_EDENIED) {
		s->control = false;
		/* A refused RESIZE is expected; refused typing is not. */
		if (a->keys.mode == TUI_MODE_TYPING &&
		    strcmp(s->id, a->sel) == 0) {
			tui_keys_set_mode(&a->keys, TUI_MODE_NORMAL);
			tui_app_message(a, true, "%s: the owner did not allow "
			    "control (no --allow-control)", tui_app_name(s));
		}
		return;
	}
	tui_app_message(a, true, "%s: holder refused: %s", tui_app_name(s),
	    text);
}

static void
sum_event(struct tui_app *a, struct tui_session *s, enum tui_conn_event ev,
    uint8_t type, const uint8_t *p, size_t len, int err)
{
	char why[160];
	struct pty_rd r;

	switch (ev) {
	case TUI_CONN_UP:
		return;
	case TUI_CONN_DOWN:
		s->sum = NULL;
		s->ping_ms = 0;
		s->retry_ms = tui_app_now(a) + APP_RETRY_MS;
		a->want_journal = true;
		if (!s->exited) {
			lost_reason(s, err, why, sizeof why);
			tui_app_link_lost(a, s, why);
		}
		return;
	case TUI_CONN_FRAME:
		break;
	}
	switch (type) {
	case PTY_W_STATUS_REPLY:
		pty_rd_init(&r, p, len);
		if (pty_rd_u32(&r) == s->ping_seq && s->ping_seq != 0)
			s->ping_ms = 0;
		apply_status(a, s, p, len);
		return;
	case PTY_W_ERROR:
		holder_error(a, s, p, len);
		return;
	case PTY_W_OK:
		pty_rd_init(&r, p, len);
		if (pty_rd_u32(&r) == PTY_W_CANCEL)
			tui_app_message(a, false, "cancelling %s",
			    tui_app_name(s));
		return;
	default:
		return;
	}
}

/* The pane has settled: the loop's next tick sends its size. */
static void
settle_cb(uv_timer_t *t)
{
	(void)t;
}

/*
 * Send RESIZE when the focused endpoint is not the pane's size, once the
 * pane has kept that size a moment and the terminal has no newer one to
 * report (tui_layout_settle): the agent is resized once, to the size it
 * is shown at.
 */
static void
resize_focused(struct tui_app *a, struct tui_session *s)
{
	const struct tui_rect *r = &a->lay.pane;
	uint64_t wait;
	uint8_t p[4];
	bool settled = tui_layout_settle(&a->pane_settle, r, tui_app_now(a),
	    &wait);

	if (!tui_conn_is_up(s->live) || !s->have_screen || !s->control ||
	    s->exited || tui_layout_rect_empty(r))
		return;
	if (s->m.rows == r->h && s->m.cols == r->w)
		return;
	if (s->sent_rows == r->h && s->sent_cols == r->w)
		return;
	if (!settled) {
		uv_timer_start(&a->settle, settle_cb, wait, 0);
		return;
	}
	if (tui_surface_curses_stale(a->cur)) {
		/* Lay out at the terminal's new size first. */
		a->want_resize = true;
		uv_timer_start(&a->settle, settle_cb, TUI_LAYOUT_SETTLE_MS, 0);
		return;
	}
	p[0] = (uint8_t)r->h;
	p[1] = (uint8_t)(r->h >> 8);
	p[2] = (uint8_t)r->w;
	p[3] = (uint8_t)(r->w >> 8);
	if (tui_conn_send(s->live, PTY_W_RESIZE, p, sizeof p) == 0) {
		s->sent_rows = r->h;
		s->sent_cols = r->w;
	}
}

static void
live_frame(struct tui_app *a, struct tui_session *s, uint8_t type,
    const uint8_t *p, size_t len)
{
	int rc, ocols = s->m.cols;

	switch (type) {
	case PTY_W_META:
	case PTY_W_ROWS:
	case PTY_W_EXIT:
		if ((rc = pty_mirror_apply(&s->m, type, p, len)) < 0) {
			tui_app_log(a, "%s: bad screen frame: %s", s->id,
			    pty_strerror(rc));
			tui_conn_close(s->live);
			s->live = NULL;
			s->retry_ms = tui_app_now(a) + APP_RETRY_MS;
			return;
		}
		if (type == PTY_W_META) {
			bool first = !s->have_screen;

			s->have_screen = s->m.cells != NULL;
			tui_keys_set_altscreen(&a->keys,
			    (s->m.meta.modes & PTY_WMODE_ALT) != 0);
			tui_view_scroll_set_total(&a->scroll,
			    (size_t)s->m.meta.sb_count);
			/*
			 * A new width rewrapped the scrollback in the holder:
			 * the lines kept from before are not its lines now.
			 */
			if (!first && s->m.cols != ocols) {
				tui_view_sbcache_reset(&a->sb);
				tui_app_mark_pane(a);
				tui_app_link_want_scrollback(a);
			}
			/*
			 * Only the first: the detail and its rule show the
			 * lease and its status, not the screen's META, which
			 * comes with every frame (each echo redrew them).
			 */
			if (first)
				tui_app_mark(a, TUI_DIRTY_ALL, false);
		}
		if (type == PTY_W_EXIT)
			a->want_journal = true;
		if (s->m.dirty) {
			if (a->scroll.offset > 0)
				tui_app_mark_pane(a);
			else
				tui_redraw_mark_rows(&a->rd, tui_app_now(a),
				    (int)s->m.dirty_first,
				    (int)s->m.dirty_last);
			s->m.dirty = false;
		}
		return;
	case PTY_W_SB_LINES:
		a->sb_pending = false;
		if ((rc = tui_view_sbcache_apply(&a->sb, p, len)) < 0)
			tui_app_log(a, "%s: scrollback frame: %d", s->id, rc);
		tui_app_mark_pane(a);
		tui_app_link_want_scrollback(a);
		return;
	case PTY_W_ERROR:
		holder_error(a, s, p, len);
		return;
	default:
		return;
	}
}

static void
live_event(struct tui_app *a, struct tui_session *s, enum tui_conn_event ev,
    uint8_t type, const uint8_t *p, size_t len, int err)
{
	char why[160];

	switch (ev) {
	case TUI_CONN_UP:
		s->sent_rows = s->sent_cols = 0;
		return;
	case TUI_CONN_FRAME:
		live_frame(a, s, type, p, len);
		return;
	case TUI_CONN_DOWN:
		s->live = NULL;
		a->sb_pending = false;
		s->retry_ms = tui_app_now(a) + APP_RETRY_MS;
		if (s->exited || s->m.exited)
			snprintf(why, sizeof why, "the agent has ended");
		else
			lost_reason(s, err, why, sizeof why);
		tui_app_log(a, "%s live link down: %s", s->id, why);
		if (a->keys.mode == TUI_MODE_TYPING &&
		    strcmp(s->id, a->sel) == 0) {
			/* Nobody to type to: the keyboard is the console's. */
			tui_keys_set_mode(&a->keys, TUI_MODE_NORMAL);
			tui_app_message(a, !s->m.exited, "%s: %s; typing "
			    "stopped", tui_app_name(s), why);
		}
		a->want_journal = true;
		tui_app_mark(a, TUI_DIRTY_STATUS, false);
		tui_app_mark_pane(a);
		return;
	}
}

static void
on_conn(struct tui_conn *c, enum tui_conn_event ev, uint8_t type,
    const uint8_t *p, size_t len, int err, void *ud)
{
	struct tui_app *a = ud;
	struct tui_session *s = tui_app_find(a, tui_conn_id(c));

	/* Looked up by ID: the session may have gone in the meantime. */
	if (s != NULL && c == s->sum)
		sum_event(a, s, ev, type, p, len, err);
	else if (s != NULL && c == s->live)
		live_event(a, s, ev, type, p, len, err);
	else if (ev != TUI_CONN_DOWN)
		tui_conn_close(c);
}

static struct tui_conn *
app_connect(struct tui_app *a, struct tui_session *s, unsigned flags)
{
	struct tui_conn *c = NULL;
	char *path = tui_ctx_holder_sock(a->ctx, s->id), why[160];
	int rc;

	if (path == NULL)
		tui_fatal("out of memory");
	rc = tui_conn_open(&c, &a->loop, path, s->id, flags, APP_CONNECT_MS,
	    on_conn, a);
	free(path);
	if (rc < 0) {
		tui_conn_reason(rc, APP_CONNECT_MS, why, sizeof why);
		tui_app_link_lost(a, s, why);
		s->retry_ms = tui_app_now(a) + APP_RETRY_MS;
		return NULL;
	}
	return c;
}

void
tui_app_link_close(struct tui_app *a, struct tui_session *s)
{
	(void)a;
	tui_conn_close(s->sum);
	tui_conn_close(s->live);
	s->sum = s->live = NULL;
}

/*
 * The final screen a holder left (META, ROWS, then SB_LINES frames) for a
 * focused lease whose agent has ended.
 */
static void
load_final(struct tui_app *a, struct tui_session *s)
{
	char *dir = tui_ctx_lease_dir(a->ctx, s->id), *path = NULL, buf[65536];
	struct pty_wire_dec dec;
	const uint8_t *p;
	size_t plen, total = 0, n;
	uint8_t type;
	FILE *f;
	int rc = 0;

	s->final_tried = true;
	if (dir == NULL || asprintf(&path, "%s/final.screen", dir) < 0)
		path = NULL;
	free(dir);
	if (path == NULL || (f = fopen(path, "rb")) == NULL) {
		free(path);
		return;
	}
	free(path);
	pty_wire_dec_init(&dec, PTY_WIRE_MAX);
	tui_view_sbcache_reset(&a->sb);
	while (rc >= 0 && total < APP_FINAL_MAX &&
	    (n = fread(buf, 1, sizeof buf, f)) > 0) {
		total += n;
		if ((rc = pty_wire_dec_push(&dec, buf, n)) < 0)
			break;
		while ((rc = pty_wire_dec_next(&dec, &type, &p, &plen)) == 1) {
			if (type == PTY_W_SB_LINES)
				rc = tui_view_sbcache_apply(&a->sb, p, plen);
			else
				rc = pty_mirror_apply(&s->m, type, p, plen);
			if (rc < 0)
				break;
		}
	}
	fclose(f);
	pty_wire_dec_free(&dec);
	if (rc < 0)
		tui_app_log(a, "%s: final screen: error %d", s->id, rc);
	s->have_screen = s->m.cells != NULL;
	s->m.dirty = false;
	tui_view_scroll_set_total(&a->scroll,
	    a->sb.n > 0 ? a->sb.from + a->sb.n :
	    0);
	tui_app_mark(a, TUI_DIRTY_ALL, false);
}

void
tui_app_link_want_scrollback(struct tui_app *a)
{
	struct tui_session *s = tui_app_focused(a);
	size_t from, n, rfrom, rn, h = (size_t)a->lay.pane.h;
	uint8_t p[8];

	if (s == NULL || a->scroll.offset == 0 || a->sb_pending ||
	    !tui_conn_is_up(s->live))
		return;
	tui_view_scroll_needed(&a->scroll, a->lay.pane.h, &from, &n);
	if (tui_view_sbcache_has(&a->sb, from, n))
		return;
	/* A window around what is shown, so small moves need no request. */
	rfrom = from > h ? from - h : 0;
	rn = n + 2 * h + (from - rfrom);
	if (rn > 2000)
		rn = 2000;
	p[0] = (uint8_t)rfrom;
	p[1] = (uint8_t)(rfrom >> 8);
	p[2] = (uint8_t)(rfrom >> 16);
	p[3] = (uint8_t)(rfrom >> 24);
	p[4] = (uint8_t)rn;
	p[5] = (uint8_t)(rn >> 8);
	p[6] = (uint8_t)(rn >> 16);
	p[7] = (uint8_t)(rn >> 24);
	if (tui_conn_send(s->live, PTY_W_SCROLLBACK, p, sizeof p) == 0) {
		a->sb_pending = true;
		a->sb_req_from = rfrom;
		a->sb_req_n = rn;
	}
}

/* Open what each lease needs: a summary link, the focused one's screen. */
void
tui_app_link_tend(struct tui_app *a)
{
	struct tui_session *f = tui_app_focused(a);
	uint64_t now = tui_app_now(a);

	for (size_t i = 0; i < a->n; i++) {
		struct tui_session *s = a->s[i];
		bool want = tui_view_needs_holder(&s->rec) && !s->exited;

		if (!want || now < s->retry_ms)
			continue;
		if (s->sum == NULL)
			s->sum = app_connect(a, s, PTY_HELLO_SUMMARY);
		if (s == f && s->live == NULL && !s->m.exited)
			s->live = app_connect(a, s, PTY_HELLO_LIVE |
			    PTY_HELLO_CONTROL);
	}
	if (f == NULL)
		return;
	/* Ended: the holder's final screen, with all of its scrollback. */
	if (!f->final_tried && f->live == NULL && (f->exited ||
	    f->m.exited || !tui_view_needs_holder(&f->rec)))
		load_final(a, f);
	resize_focused(a, f);
}
