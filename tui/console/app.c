/*
 * app.c: the console (SPEC 4): one libuv loop, a session table keyed by
 * lease ID fed by the journal and by each holder's SUMMARY connection,
 * one LIVE connection for the focused lease (both in app_link.c), and a
 * tick (uv_prepare) that does the work the callbacks asked for: journal
 * re-reads, connections, and the throttled redraw. Focus moves only on an operator key (SPEC
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

#define APP_PING_MS 2000	/* status ping on a quiet summary link */
#define APP_PING_LATE_MS 3000	/* unanswered this long: lost */
#define APP_CLOCK_MS 500	/* the housekeeping timer */
#define APP_JOURNAL_TICKS 4	/* re-read the journal every 4 clock ticks */
#define APP_TOAST_MS 4000
#define APP_LOG_MAX (1u << 20)

/* The console running in this process, for tui_fatal (STYLE I.2). */
static struct tui_app *app_running;

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
	free(s->question);
	free(s->options);
	for (unsigned i = 0; i < s->nopts; i++)
		free(s->opt[i]);
	free(s);
}

static void
session_remove(struct tui_app *a, size_t i)
{
	struct tui_session *s = a->s[i];
	bool focused = strcmp(s->id, a->sel) == 0;

	tui_app_link_close(a, s);
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

bool
tui_app_needs_operator(const struct tui_session *s)
{
	return s->question != NULL || s->rec.unseen ||
	    tui_view_activity(&s->rec, s->lost, s->exited, s->exit_status,
	    s->cancelled, s->activity) == TUI_ACTIVITY_BLOCKED;
}

static void
mark_seen(struct tui_app *a, struct tui_session *s)
{
	s->bell_badge = false;
	if (!s->rec.unseen)
		return;
	if (lease_record_mark_seen(a->ctx->store, s->id) < 0)
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
		/* a message is about the lease it came with (issue 21) */
		if (a->keys.mode != TUI_MODE_CONFIRM) {
			a->msg[0] = '\0';
			a->msg_until = 0;
		}
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

/* ---- the journal -------------------------------------------------------- */

static void
update_record(struct tui_app *a, struct tui_session *s,
    struct lease_record *rec)
{
	bool focused = strcmp(s->id, a->sel) == 0;

	/* SPEC 5.6: bell / OSC 9 on blocked, done, failed, if configured. */
	if (s->rec.id[0] != '\0' && rec->activity != s->rec.activity &&
	    (a->cfg.bell || a->cfg.osc9) &&
	    tui_config_notifies(&a->cfg,
	        lease_fsm_activity_name(rec->activity))) {
		char text[200];

		snprintf(text, sizeof text, "corral: %.100s %s",
		    tui_app_name(s), lease_fsm_activity_name(rec->activity));
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
	if (lease_record_list(st, a->started ? 0 : LEASE_LIST_ALL, &v, &n) <
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
	lease_record_list_free(v, n);
	for (i = a->n; i-- > 0;) {
		struct tui_session *s = a->s[i];

		if (s->marked)
			continue;
		memset(&rec, 0, sizeof rec);
		rc = lease_record_get(st, s->id, &rec);
		if (rc == 0)
			update_record(a, s, &rec);
		lease_record_clear(&rec);
		/*
		 * Gone, or a `corral new` seen while it provisioned that failed
		 * before creating anything (issue 21): its row goes, unless
		 * the operator is looking at it.
		 */
		if (rc == LEASE_ENOTFOUND || (rc == 0 &&
		    tui_view_stillborn(&s->rec) && strcmp(s->id, a->sel) != 0))
			session_remove(a, i);
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
	tui_app_link_tend(a);
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
		/*
		 * A keystroke typed into the agent changes nothing here until
		 * its echo comes (drawn at once): no empty frame before it.
		 */
		if (set.what != 0)
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
			tui_app_link_lost(a, s, "holder did not answer a status "
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
	uv_timer_init(&a->loop, &a->settle);
	uv_signal_init(&a->loop, &a->sig_winch);
	uv_signal_init(&a->loop, &a->sig_term);
	uv_signal_init(&a->loop, &a->sig_hup);
	uv_signal_init(&a->loop, &a->sig_int);
	a->tick.data = a->redraw_timer.data = a->clock.data = a->settle.data =
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
		tui_app_link_close(a, a->s[i]);
	if (a->cur != NULL) {
		uv_poll_stop(&a->input);
		close_handle(a, (uv_handle_t *)&a->input);
		close_handle(a, (uv_handle_t *)&a->tick);
		close_handle(a, (uv_handle_t *)&a->redraw_timer);
		close_handle(a, (uv_handle_t *)&a->clock);
		close_handle(a, (uv_handle_t *)&a->settle);
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
	/*
	 * SPEC 9.2: the start reconciles, as `corral reconcile` in a
	 * process of its own (it pings holders under the state lock: never
	 * on the loop).
	 */
	tui_app_view_reconcile(a);
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
		tui_app_link_close(a, a->s[i]);
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
