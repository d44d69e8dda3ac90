/*
 * app.c: the console (SPEC 4): one libuv loop, a session table keyed by
 * lease ID fed by the journal and by each holder's SUMMARY connection,
 * one LIVE connection for the focused lease, and a tick (uv_prepare) that
 * does the work the callbacks asked for: journal re-reads, connections,
 * and the throttled redraw. Focus moves only on an operator key (SPEC
 * 4.2); quitting leaves every agent running (SPEC 4.5).
 */
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "tui/console/console_int.h"

#define APP_CONNECT_MS 2000	/* connect plus the holder's first frame */
#define APP_PING_MS 2000	/* status ping on a quiet summary link */
#define APP_PING_LATE_MS 3000	/* unanswered this long: lost */
#define APP_RETRY_MS 2000	/* reconnect to a holder after a failure */
#define APP_CLOCK_MS 500	/* the housekeeping timer */
#define APP_JOURNAL_TICKS 4	/* re-read the journal every 4 clock ticks */
#define APP_TOAST_MS 4000
#define APP_FINAL_MAX (16u << 20)	/* bytes of final.screen read */
#define APP_LOG_MAX (1u << 20)

/* The console running in this process, for tui_fatal (STYLE I.2). */
static struct tui_app *app_running;

static void app_close_conns(struct tui_app *, struct tui_session *);

/* ---- small helpers ------------------------------------------------------ */

uint64_t
tui_app_now(struct tui_app *a)
{
	return uv_now(&a->loop);
}

void
tui_app_mark(struct tui_app *a, unsigned what, bool urgent)
{
	tui_redraw_mark(&a->rd, tui_app_now(a), what, urgent);
}

void
tui_app_mark_pane(struct tui_app *a)
{
	tui_redraw_mark_rows(&a->rd, tui_app_now(a), 0,
	    a->lay.pane.h > 0 ? a->lay.pane.h - 1 : 0);
}

void
tui_app_quit(struct tui_app *a)
{
	a->quit = true;
	uv_stop(&a->loop);
}

void
tui_app_log(struct tui_app *a, const char *fmt, ...)
{
	char when[32];
	struct tm tm;
	time_t t;
	va_list ap;

	if (a->log == NULL)
		return;
	t = time(NULL);
	localtime_r(&t, &tm);
	strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
	fprintf(a->log, "%s [%d] ", when, (int)getpid());
	va_start(ap, fmt);
	vfprintf(a->log, fmt, ap);
	va_end(ap);
	fputc('\n', a->log);
	fflush(a->log);
}

void
tui_app_message(struct tui_app *a, bool error, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->msg, sizeof a->msg, fmt, ap);
	va_end(ap);
	a->msg_err = error;
	a->msg_until = tui_app_now(a) + APP_TOAST_MS;
	tui_app_mark(a, TUI_DIRTY_STATUS, false);
}

const char *
tui_app_name(const struct tui_session *s)
{
	return s->rec.name != NULL && s->rec.name[0] != '\0' ? s->rec.name :
	    s->id;
}

void
tui_fatal(const char *fmt, ...)
{
	va_list ap;

	if (app_running != NULL)
		tui_surface_curses_restore(app_running->cur);
	fprintf(stderr, "corral: fatal: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(TUI_EXIT_FAIL);
}

/* ---- the session table -------------------------------------------------- */

struct tui_session *
tui_app_find(struct tui_app *a, const char *id)
{
	size_t lo = 0, hi = a->n;

	/* IDs sort by time and the table is kept in ID order. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(a->s[mid]->id, id);

		if (c == 0)
			return a->s[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

long
tui_app_focus_index(struct tui_app *a)
{
	if (a->sel[0] == '\0')
		return -1;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->s[i]->id, a->sel) == 0)
			return (long)i;
	return -1;
}

struct tui_session *
tui_app_focused(struct tui_app *a)
{
	return a->sel[0] != '\0' ? tui_app_find(a, a->sel) : NULL;
}

static struct tui_session *
session_add(struct tui_app *a, struct lease_record *rec)
{
	struct tui_session *s;
	size_t at;

	if (a->n == a->cap) {
		size_t ncap = a->cap ? a->cap * 2 : 16;
		struct tui_session **ns = realloc(a->s, ncap * sizeof *ns);

		if (ns == NULL)
			tui_fatal("out of memory");
		a->s = ns;
		a->cap = ncap;
	}
	if ((s = calloc(1, sizeof *s)) == NULL)
		tui_fatal("out of memory");
	memcpy(s->id, rec->id, sizeof s->id);
	s->rec = *rec;
	memset(rec, 0, sizeof *rec);
	pty_mirror_init(&s->m);
	for (at = a->n; at > 0 && strcmp(a->s[at - 1]->id, s->id) > 0; at--)
		;
	memmove(a->s + at + 1, a->s + at, (a->n - at) * sizeof *a->s);
	a->s[at] = s;
	a->n++;
	a->relayout = true;
	return s;
}

static void
session_free(struct tui_session *s)
{
	lease_record_clear(&s->rec);
	pty_mirror_free(&s->m);
	free(s->title);
	free(s->last_line);
	free(s->activity);
	free(s);
}

static void
session_remove(struct tui_app *a, size_t i)
{
	struct tui_session *s = a->s[i];
	bool focused = strcmp(s->id, a->sel) == 0;

	app_close_conns(a, s);
	session_free(s);
	memmove(a->s + i, a->s + i + 1, (a->n - i - 1) * sizeof *a->s);
	a->n--;
	a->relayout = true;
	if (focused) {
		/* The focused lease is gone (gc): the nearest, typing off. */
		a->sel[0] = '\0';
		tui_app_focus(a, a->n == 0 ? -1 : i < a->n ? (long)i :
		    (long)a->n - 1);
	}
}

/* ---- focus -------------------------------------------------------------- */

static void
mark_seen(struct tui_app *a, struct tui_session *s)
{
	s->bell_badge = false;
	if (!s->rec.unseen)
		return;
	if (lease_store_mark_seen(a->ctx->store, s->id) < 0)
		tui_app_log(a, "mark seen %s: %s", s->id,
		    lease_store_errmsg(a->ctx->store));
	else
		s->rec.unseen = false;
}

void
tui_app_focus(struct tui_app *a, long i)
{
	struct tui_session *old = tui_app_focused(a), *s;

	if (i >= (long)a->n)
		i = (long)a->n - 1;
	s = i >= 0 ? a->s[i] : NULL;
	if (old != NULL && old != s) {
		tui_conn_close(old->live);
		old->live = NULL;
		pty_mirror_free(&old->m);
		pty_mirror_init(&old->m);
		old->have_screen = old->final_tried = false;
		old->sent_rows = old->sent_cols = 0;
	}
	if (old != s) {
		tui_view_sbcache_reset(&a->sb);
		memset(&a->scroll, 0, sizeof a->scroll);
		a->sb_pending = false;
		if (a->keys.mode != TUI_MODE_NORMAL &&
		    a->keys.mode != TUI_MODE_PREFIX &&
		    a->keys.mode != TUI_MODE_TIMELINE)
			tui_keys_set_mode(&a->keys, TUI_MODE_NORMAL);
		tui_keys_set_altscreen(&a->keys, false);
	}
	if (s == NULL) {
		a->sel[0] = '\0';
	} else {
		memcpy(a->sel, s->id, sizeof a->sel);
		mark_seen(a, s);
	}
	tui_app_mark(a, TUI_DIRTY_ALL, true);
}

/* ---- holder status (the list row) --------------------------------------- */

static void
set_str(char **dst, const char *src, size_t cap)
{
	free(*dst);
	*dst = src != NULL ? strndup(src, cap) : NULL;
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

static void
set_lost(struct tui_app *a, struct tui_session *s, const char *why)
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
			set_lost(a, s, why);
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

/* Send RESIZE when the focused endpoint is not the pane's size. */
static void
resize_focused(struct tui_app *a, struct tui_session *s)
{
	const struct tui_rect *r = &a->lay.pane;
	uint8_t p[4];

	if (!tui_conn_is_up(s->live) || !s->have_screen || !s->control ||
	    s->exited || tui_layout_rect_empty(r))
		return;
	if (s->m.rows == r->h && s->m.cols == r->w)
		return;
	if (s->sent_rows == r->h && s->sent_cols == r->w)
		return;
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
	int rc;

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
			if (first)
				tui_app_mark(a, TUI_DIRTY_ALL, false);
			tui_app_mark(a, TUI_DIRTY_DETAIL, false);
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
		tui_app_want_scrollback(a);
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
		set_lost(a, s, why);
		s->retry_ms = tui_app_now(a) + APP_RETRY_MS;
		return NULL;
	}
	return c;
}

static void
app_close_conns(struct tui_app *a, struct tui_session *s)
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
tui_app_want_scrollback(struct tui_app *a)
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
static void
tend_sessions(struct tui_app *a)
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

/* ---- the journal -------------------------------------------------------- */

static void
update_record(struct tui_app *a, struct tui_session *s,
    struct lease_record *rec)
{
	bool focused = strcmp(s->id, a->sel) == 0;

	/* SPEC 5.6: bell / OSC 9 on blocked, done, failed, if configured. */
	if (s->rec.id[0] != '\0' && rec->activity != s->rec.activity &&
	    (a->cfg.bell || a->cfg.osc9) &&
	    tui_config_notifies(&a->cfg, lease_activity_name(rec->activity))) {
		char text[200];

		snprintf(text, sizeof text, "corral: %.100s %s",
		    tui_app_name(s), lease_activity_name(rec->activity));
		tui_surface_curses_notify(a->cur, a->cfg.bell,
		    a->cfg.osc9 ? text :
		    NULL);
	}
	if (rec->state != s->rec.state || rec->activity != s->rec.activity ||
	    rec->unseen != s->rec.unseen || rec->cleanup != s->rec.cleanup)
		tui_app_mark(a, TUI_DIRTY_LIST | TUI_DIRTY_STATUS |
		    (focused ? TUI_DIRTY_DETAIL : 0), false);
	if (focused && rec->state != s->rec.state)
		tui_app_mark(a, TUI_DIRTY_DETAIL, false);
	lease_record_clear(&s->rec);
	s->rec = *rec;
	memset(rec, 0, sizeof *rec);
	if (!tui_view_needs_holder(&s->rec) && s->lost) {
		s->lost = false;	/* no holder is expected any more */
		tui_app_mark(a, TUI_DIRTY_LIST, false);
	}
	if (focused && s->rec.unseen)
		mark_seen(a, s);
}

/*
 * Re-read the journal: new leases join the list (a row and a toast, never
 * the focus: SPEC 4.2), known ones get their new state. The first read
 * lists every lease so unseen results show; later reads list the live
 * ones and look up the rest by ID.
 */
static void
journal_reload(struct tui_app *a, const char *must)
{
	struct lease_store *st = a->ctx->store;
	struct lease_record *v = NULL, rec;
	size_t n = 0, i;
	int rc;

	a->want_journal = false;
	if (lease_store_list(st, a->started ? 0 : LEASE_LIST_ALL, &v, &n) <
	    0) {
		tui_app_log(a, "journal: %s", lease_store_errmsg(st));
		return;
	}
	for (i = 0; i < a->n; i++)
		a->s[i]->marked = false;
	for (i = 0; i < n; i++) {
		struct tui_session *s = tui_app_find(a, v[i].id);

		if (s != NULL) {
			update_record(a, s, &v[i]);
			s->marked = true;
			continue;
		}
		if (!tui_view_listed(&v[i], must != NULL &&
		    strcmp(must, v[i].id) == 0))
			continue;
		s = session_add(a, &v[i]);
		s->marked = true;
		tui_app_mark(a, TUI_DIRTY_ALL, false);
		if (a->started)
			tui_app_message(a, false, "new lease %s",
			    tui_app_name(s));
	}
	lease_records_free(v, n);
	for (i = a->n; i-- > 0;) {
		struct tui_session *s = a->s[i];

		if (s->marked)
			continue;
		memset(&rec, 0, sizeof rec);
		rc = lease_store_get(st, s->id, &rec);
		if (rc == 0)
			update_record(a, s, &rec);
		else if (rc == LEASE_ENOTFOUND)
			session_remove(a, i);
		lease_record_clear(&rec);
	}
}

/* ---- the tick, timers, signals, input ----------------------------------- */

static void
redraw_timer_cb(uv_timer_t *t)
{
	struct tui_app *a = t->data;

	tui_redraw_fired(&a->rd);
}

/* Callbacks only set state; this runs before the loop sleeps. */
static void
tick_cb(uv_prepare_t *p)
{
	struct tui_app *a = p->data;
	struct tui_redraw_set set;
	unsigned wait;
	uint64_t now;

	if (a->quit)
		return;
	uv_update_time(&a->loop);
	now = tui_app_now(a);
	if (a->want_resize) {
		a->want_resize = false;
		tui_surface_curses_resize(a->cur);
		a->relayout = true;
		tui_app_mark(a, TUI_DIRTY_ALL, true);
	}
	if (a->want_journal)
		journal_reload(a, NULL);
	if (a->relayout) {
		tui_app_draw_relayout(a);
		tui_app_mark(a, TUI_DIRTY_ALL, false);
	}
	tend_sessions(a);
	if (a->msg_until != 0 && now >= a->msg_until &&
	    a->keys.mode != TUI_MODE_CONFIRM) {
		a->msg[0] = '\0';
		a->msg_until = 0;
		tui_app_mark(a, TUI_DIRTY_STATUS, false);
	}
	switch (tui_redraw_due(&a->rd, now, &wait)) {
	case TUI_REDRAW_NOW:
		uv_timer_stop(&a->redraw_timer);
		tui_redraw_fired(&a->rd);
		tui_redraw_take(&a->rd, now, &set);
		tui_app_draw_frame(a, &set);
		break;
	case TUI_REDRAW_ARM:
		uv_timer_start(&a->redraw_timer, redraw_timer_cb, wait, 0);
		break;
	case TUI_REDRAW_PENDING:
	case TUI_REDRAW_IDLE:
		break;
	}
}

static void
ping(struct tui_app *a, struct tui_session *s, uint64_t now)
{
	uint8_t p[4];

	if (!tui_conn_is_up(s->sum) || !s->have_status)
		return;
	if (s->ping_ms != 0) {
		if (now - s->ping_ms >= APP_PING_LATE_MS && !s->lost)
			set_lost(a, s, "holder did not answer a status "
			    "request within 3 s");
		return;
	}
	if (now - s->status_ms < APP_PING_MS)
		return;
	if (++s->ping_seq == 0)
		s->ping_seq = 1;
	p[0] = (uint8_t)s->ping_seq;
	p[1] = (uint8_t)(s->ping_seq >> 8);
	p[2] = (uint8_t)(s->ping_seq >> 16);
	p[3] = (uint8_t)(s->ping_seq >> 24);
	if (tui_conn_send(s->sum, PTY_W_STATUS, p, sizeof p) == 0)
		s->ping_ms = now;
}

static void
clock_cb(uv_timer_t *t)
{
	struct tui_app *a = t->data;
	uint64_t now = tui_app_now(a);

	a->clock_ticks++;
	if (a->journal_burst > 0) {
		a->journal_burst--;
		a->want_journal = true;
	} else if (a->clock_ticks % APP_JOURNAL_TICKS == 0) {
		a->want_journal = true;
	}
	if (a->clock_ticks % 2 == 0)
		tui_app_mark(a, TUI_DIRTY_LIST, false);	/* the age column */
	for (size_t i = 0; i < a->n; i++)
		ping(a, a->s[i], now);
}

static void
watch_cb(uv_fs_event_t *h, const char *name, int events, int status)
{
	struct tui_app *a = h->data;

	(void)name;
	(void)events;
	(void)status;
	/* A lease directory came or went: look a few times in a row. */
	a->journal_burst = 4;
	a->want_journal = true;
}

static void
signal_cb(uv_signal_t *h, int signum)
{
	struct tui_app *a = h->data;

	if (signum == SIGWINCH)
		a->want_resize = true;
	else
		tui_app_quit(a);
}

static void
input_cb(uv_poll_t *h, int status, int events)
{
	struct tui_app *a = h->data;
	struct tui_key k;
	int got = 0;

	if (status < 0 || (events & UV_DISCONNECT)) {
		tui_app_quit(a);
		return;
	}
	while (!a->quit && tui_surface_curses_read_key(a->cur, &k) == 1) {
		got++;
		tui_app_act_key(a, &k);
	}
	/* A terminal that hung up stays readable and gives nothing. */
	a->empty_reads = got > 0 ? 0 : a->empty_reads + 1;
	if (a->empty_reads > 200)
		tui_app_quit(a);
}

/* ---- start and stop ----------------------------------------------------- */

static void
open_log(struct tui_app *a)
{
	char *path = NULL;
	struct stat sb;
	int fd;

	if (asprintf(&path, "%s/console.log", a->ctx->state_dir) < 0)
		return;
	if (stat(path, &sb) == 0 && sb.st_size > (off_t)APP_LOG_MAX)
		unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	free(path);
	if (fd >= 0 && (a->log = fdopen(fd, "a")) == NULL)
		close(fd);
}

/*
 * The theme (SPEC 4.6): --theme NAME, else $CORRAL_THEME, else the
 * config's [console] theme, else the built-in default; a NAME is
 * themes/NAME.theme, a path is a file. A malformed file is named
 * (file:line) and the default is used.
 */
static int
load_theme(struct tui_app *a, char *err, size_t errsz)
{
	const char *name = getenv("CORRAL_THEME"), *nc = getenv("NO_COLOR");
	char rel[128], *path;
	int rc = 0;

	if (a->opts != NULL && a->opts->theme != NULL)
		name = a->opts->theme;
	else if ((name == NULL || name[0] == '\0') && a->cfg.theme[0] != '\0')
		name = a->cfg.theme;
	tui_theme_default(&a->theme);
	if (name != NULL && name[0] != '\0') {
		if (strchr(name, '/') != NULL) {
			path = strdup(name);
		} else {
			snprintf(rel, sizeof rel, "themes/%.64s.theme", name);
			path = tui_ctx_data_path(a->ctx, rel);
		}
		if (path == NULL) {
			snprintf(err, errsz, "theme '%.64s' not found", name);
			return -ENOENT;
		}
		rc = tui_theme_load(path, &a->theme, err, errsz);
		if (rc == 0)
			snprintf(a->theme_path, sizeof a->theme_path, "%s",
			    path);
		free(path);
	}
	tui_theme_set_no_color(&a->theme, nc != NULL && nc[0] != '\0');
	return rc;
}

static void
handle_closed(uv_handle_t *h)
{
	struct tui_app *a = h->data;

	a->handles--;
}

static void
close_handle(struct tui_app *a, uv_handle_t *h)
{
	if (!uv_is_closing(h)) {
		a->handles++;
		uv_close(h, handle_closed);
	}
}

static void
config_error(const char *file, int line, const char *msg, void *ud)
{
	tui_app_log(ud, "%s:%d: %s", file, line, msg);
}

static int
app_start(struct tui_app *a, char *err, size_t errsz)
{
	int rc, fd, fl;

	if ((rc = tui_surface_curses_open(&a->cur, err, errsz)) < 0)
		return rc;
	app_running = a;
	a->draw.surface = tui_surface_curses_surface(a->cur);
	a->draw.theme = &a->theme;
	a->draw.colors = tui_surface_curses_colors(a->cur);
	uv_prepare_init(&a->loop, &a->tick);
	uv_timer_init(&a->loop, &a->redraw_timer);
	uv_timer_init(&a->loop, &a->clock);
	uv_signal_init(&a->loop, &a->sig_winch);
	uv_signal_init(&a->loop, &a->sig_term);
	uv_signal_init(&a->loop, &a->sig_hup);
	uv_signal_init(&a->loop, &a->sig_int);
	a->tick.data = a->redraw_timer.data = a->clock.data =
	    a->sig_winch.data = a->sig_term.data = a->sig_hup.data =
	    a->sig_int.data = a->input.data = a->watch.data = a;
	fd = tui_surface_curses_input_fd(a->cur);
	if ((rc = uv_poll_init(&a->loop, &a->input, fd)) < 0)
		tui_fatal("cannot watch the terminal: %s", uv_strerror(rc));
	/*
	 * libuv made the terminal non-blocking; curses shares that open file
	 * for its output, so put it back (the poll is level-triggered).
	 */
	if ((fl = fcntl(fd, F_GETFL)) >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	uv_poll_start(&a->input, UV_READABLE | UV_DISCONNECT, input_cb);
	uv_signal_start(&a->sig_winch, signal_cb, SIGWINCH);
	uv_signal_start(&a->sig_term, signal_cb, SIGTERM);
	uv_signal_start(&a->sig_hup, signal_cb, SIGHUP);
	uv_signal_start(&a->sig_int, signal_cb, SIGINT);
	uv_prepare_start(&a->tick, tick_cb);
	uv_timer_start(&a->clock, clock_cb, APP_CLOCK_MS, APP_CLOCK_MS);
	uv_fs_event_init(&a->loop, &a->watch);
	a->watching = true;
	if (a->leases_dir != NULL && uv_fs_event_start(&a->watch, watch_cb,
	    a->leases_dir, 0) < 0)
		tui_app_log(a, "cannot watch %s: the journal is re-read every "
		    "2 s", a->leases_dir);
	return 0;
}

static void
app_stop(struct tui_app *a)
{
	/* Quitting leaves every agent running: only our links close. */
	for (size_t i = 0; i < a->n; i++)
		app_close_conns(a, a->s[i]);
	if (a->cur != NULL) {
		uv_poll_stop(&a->input);
		close_handle(a, (uv_handle_t *)&a->input);
		close_handle(a, (uv_handle_t *)&a->tick);
		close_handle(a, (uv_handle_t *)&a->redraw_timer);
		close_handle(a, (uv_handle_t *)&a->clock);
		close_handle(a, (uv_handle_t *)&a->sig_winch);
		close_handle(a, (uv_handle_t *)&a->sig_term);
		close_handle(a, (uv_handle_t *)&a->sig_hup);
		close_handle(a, (uv_handle_t *)&a->sig_int);
		if (a->watching)
			close_handle(a, (uv_handle_t *)&a->watch);
	}
	/* Let every close callback run (the conns free themselves there). */
	uv_run(&a->loop, UV_RUN_DEFAULT);
	tui_surface_curses_close(a->cur);
	a->cur = NULL;
	app_running = NULL;
}

int
tui_app_run(struct tui_ctx *c, const char *focus_id)
{
	return tui_app_run_opts(c, focus_id, NULL);
}

int
tui_app_run_opts(struct tui_ctx *c, const char *focus_id,
    const struct tui_console_opts *opts)
{
	struct tui_app *a;
	char err[512] = "", theme_err[512] = "", keys_err[512] = "";
	long at = -1;
	int rc;

	setlocale(LC_ALL, "");
	if (tui_ctx_store(c) == NULL)
		return TUI_EXIT_FAIL;
	if (focus_id != NULL && !lease_id_valid(focus_id))
		return tui_ctx_err(c, "not a lease ID: %.64s", focus_id);
	if ((a = calloc(1, sizeof *a)) == NULL)
		return tui_ctx_err(c, "out of memory");
	a->ctx = c;
	a->opts = opts;
	open_log(a);
	/* A malformed config is logged (file and line); defaults are kept. */
	tui_config_load(&a->cfg, config_error, a);
	if (load_theme(a, theme_err, sizeof theme_err) < 0) {
		/* named on stderr and the status line; the default is used */
		tui_theme_default(&a->theme);
		tui_theme_set_no_color(&a->theme, getenv("NO_COLOR") != NULL &&
		    getenv("NO_COLOR")[0] != '\0');
		fprintf(stderr, "corral: theme: %s (using the default)\n",
		    theme_err);
	}
	signal(SIGPIPE, SIG_IGN);
	uv_loop_init(&a->loop);
	a->leases_dir = NULL;
	if (asprintf(&a->leases_dir, "%s/leases", c->state_dir) < 0)
		a->leases_dir = NULL;
	else
		mkdir(a->leases_dir, 0700);
	tui_keys_init(&a->keys);
	/* the operator's keymap; a malformed one is named, defaults kept */
	if (tui_keymap_load(&a->keys, NULL, keys_err, sizeof keys_err) < 0)
		fprintf(stderr, "corral: keys: %s (using the default keys)\n",
		    keys_err);
	tui_review_init(&a->rv);
	tui_timeline_init(&a->tl);
	tui_redraw_init(&a->rd, 0);
	tui_view_sbcache_init(&a->sb);
	a->detail = true;
	journal_reload(a, focus_id);
	a->started = true;
	/* The initial focus: the lease asked for, else the first one. */
	if (focus_id != NULL) {
		for (size_t i = 0; i < a->n; i++)
			if (strcmp(a->s[i]->id, focus_id) == 0)
				at = (long)i;
		if (at < 0) {
			rc = tui_ctx_err(c, "no lease %s", focus_id);
			goto out;
		}
	} else if (a->n > 0) {
		at = 0;
	}
	if ((rc = app_start(a, err, sizeof err)) < 0) {
		app_stop(a);
		rc = tui_ctx_err(c, "%s", err);
		goto out;
	}
	tui_app_log(a, "console started with %zu lease(s)", a->n);
	a->relayout = true;
	tui_app_focus(a, at);
	if (theme_err[0] != '\0' || keys_err[0] != '\0') {
		tui_app_log(a, "%s%s%s", theme_err, theme_err[0] &&
		    keys_err[0] ? "; " : "", keys_err);
		tui_app_message(a, true, "%s%s%s%s", theme_err[0] ? "theme: " :
		    "", theme_err, theme_err[0] && keys_err[0] ? "; keys: " :
		    keys_err[0] ? "keys: " : "", keys_err);
		a->msg_until = tui_app_now(a) + 15000;
	}
	uv_run(&a->loop, UV_RUN_DEFAULT);
	tui_app_view_stop(a);
	app_stop(a);
	tui_app_log(a, "console quit; agents keep running");
	rc = TUI_EXIT_OK;
out:
	for (size_t i = 0; i < a->n; i++) {
		app_close_conns(a, a->s[i]);
		session_free(a->s[i]);
	}
	uv_run(&a->loop, UV_RUN_DEFAULT);
	if (uv_loop_close(&a->loop) != 0)
		tui_app_log(a, "loop still had handles at exit");
	free(a->s);
	tui_app_view_stop(a);
	tui_view_sbcache_free(&a->sb);
	free(a->leases_dir);
	if (a->log != NULL)
		fclose(a->log);
	free(a);
	return rc;
}
