/*
 * console_int.h: private declarations shared by the console's files
 * (STYLE A): the curses surface (surface_curses.c), the asynchronous
 * holder connection (conn.c) and the console itself (app.c, app_draw.c,
 * app_act.c, app_view.c). Nothing outside tui/console/ includes it.
 */
#ifndef CORRAL_TUI_CONSOLE_INT_H
#define CORRAL_TUI_CONSOLE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "lease/lease.h"
#include "tui/console/console.h"

/* ------------------------------------------------------------------ */
/* surface_curses.c: the only includer of <curses.h>                   */

struct tui_curses;

/*
 * Take over the terminal (stdin/stdout must be a terminal): raw keys,
 * no echo, keypad and mouse wheel, colours as the terminal allows.
 * Call setlocale(LC_ALL, "") first. Returns 0, or -ENOTTY / -EIO with
 * the reason in err; on error the terminal is left as it was.
 */
int tui_surface_curses_open(struct tui_curses **out, char *err, size_t errsz);
/* Give the terminal back (endwin) and free; NULL is a no-op. */
void tui_surface_curses_close(struct tui_curses *);
/* Restore the terminal without freeing (fatal paths); idempotent. */
void tui_surface_curses_restore(struct tui_curses *);
/* The drawing target (valid until close). */
const struct tui_surface *tui_surface_curses_surface(struct tui_curses *);
/* Colour depth actually usable: what the terminal and NO_COLOR allow. */
enum tui_colors tui_surface_curses_colors(const struct tui_curses *);
/* The file descriptor keys arrive on (poll it for readability). */
int tui_surface_curses_input_fd(const struct tui_curses *);
/*
 * Next key without waiting: 1 and *out, 0 when none is pending. ESC
 * followed at once by a key reads as that key with Alt; the mouse wheel
 * and button 1 give TUI_KEY_WHEEL_UP/DOWN and TUI_KEY_CLICK with x/y.
 */
int tui_surface_curses_read_key(struct tui_curses *, struct tui_key *out);
/* The outer terminal changed size: learn the new size (SIGWINCH). */
void tui_surface_curses_resize(struct tui_curses *);
/* The terminal has a size curses was not told yet (a SIGWINCH to come). */
bool tui_surface_curses_stale(const struct tui_curses *);
/* Force a full repaint at the next flush (C-l). */
void tui_surface_curses_invalidate(struct tui_curses *);
/* Put what was drawn on the terminal (one doupdate). */
void tui_surface_curses_flush(struct tui_curses *);
/*
 * SPEC 5.6: notify the operator's terminal without taking focus: a bell,
 * and/or an OSC 9 notification with text (control characters dropped,
 * bounded). Written between frames; never moves the cursor.
 */
void tui_surface_curses_notify(struct tui_curses *, bool bell,
    const char *osc9);

/* ------------------------------------------------------------------ */
/* conn.c: one asynchronous connection to a holder socket              */

struct tui_conn;

enum tui_conn_event {
	TUI_CONN_UP,	/* connected, HELLO sent */
	TUI_CONN_FRAME,	/* a validated holder->client frame */
	TUI_CONN_DOWN,	/* gone: err says why; the conn frees itself after */
};

/*
 * Events of a connection. The conn pointer is only an identity for the
 * call: after TUI_CONN_DOWN it is closed and freed, so forget it there.
 */
typedef void (*tui_conn_cb)(struct tui_conn *, enum tui_conn_event,
    uint8_t type, const uint8_t *p, size_t len, int err, void *ud);

#define TUI_CONN_QUEUE_MAX (1u << 20)	/* bytes queued to one holder */

/*
 * Connect to the holder socket at path on loop and say HELLO with flags.
 * deadline_ms bounds the connect plus the holder's first frame: past it
 * the connection goes DOWN with PTY_ETIMEDOUT (a wedged holder never
 * hangs the console). id is the lease ID (copied) for the caller's
 * lookups. Returns 0, or -ENOMEM / -ENAMETOOLONG (no callback then).
 */
int tui_conn_open(struct tui_conn **out, uv_loop_t *loop,
    const char *path, const char *id, unsigned flags, unsigned deadline_ms,
    tui_conn_cb cb, void *ud);
/* The lease ID given to open. */
const char *tui_conn_id(const struct tui_conn *);
bool tui_conn_is_up(const struct tui_conn *);
/*
 * Queue one frame; 0, -ENOTCONN before UP, -ENOBUFS past
 * TUI_CONN_QUEUE_MAX (the holder is not reading), -ENOMEM.
 */
int tui_conn_send(struct tui_conn *, uint8_t type, const void *p,
    size_t len);
/* Close without a DOWN event; freed once libuv has closed the handles. */
void tui_conn_close(struct tui_conn *);
/* A short human reason for a DOWN error ("holder did not answer..."). */
void tui_conn_reason(int err, unsigned deadline_ms, char *buf,
    size_t bufsz);

/* ------------------------------------------------------------------ */
/* app.c, app_draw.c, app_act.c: the console                           */

/* One lease the console shows, keyed by its ID (STYLE D.4). */
struct tui_session {
	char id[LEASE_ID_LEN + 1];
	struct lease_record rec;	/* the journal's row, re-read */
	bool marked;			/* seen by the current journal read */
	struct tui_conn *sum;		/* SUMMARY: the list row */
	struct tui_conn *live;		/* LIVE: only while focused */
	uint64_t retry_ms;		/* next connect attempt */
	/* from the holder's status (STATUS_REPLY) */
	bool have_status;
	char *title, *last_line, *activity;
	/* blocked on a choice: "? QUESTION" for the row, its options */
	char *question, *options;
	char qdigest[17];		/* the question's digest (hex) */
	char *opt[9];			/* "KEY label" of options 1-9 */
	unsigned nopts;
	bool exited, cancelled, control;
	int exit_status;
	uint64_t bells;
	uint64_t status_ms;		/* last status received */
	uint32_t ping_seq;
	uint64_t ping_ms;		/* 0: no ping outstanding */
	bool lost;
	char lost_reason[160];
	bool bell_badge;		/* a bell while in the background */
	/* the focused lease's screen */
	struct pty_mirror m;
	bool have_screen;		/* live or final screen in m */
	bool final_tried;
	int sent_rows, sent_cols;	/* last RESIZE asked for */
};

/* A view that takes the body of the screen (SPEC 4.3, issue 9). */
enum tui_view {
	TUI_VIEW_NONE,
	TUI_VIEW_REVIEW,	/* the focused lease's result (SPEC 7.4) */
	TUI_VIEW_TIMELINE,	/* every lease's activity over time */
};

struct tui_job;

struct tui_app {
	struct tui_ctx *ctx;
	const struct tui_console_opts *opts;
	uv_loop_t loop;
	struct tui_curses *cur;
	struct tui_theme theme;
	struct tui_config cfg;		/* [notify] bell / osc9 (SPEC 5.6) */
	struct tui_draw draw;
	struct tui_keys keys;
	struct tui_redraw rd;
	struct tui_layout lay;
	bool relayout;
	uv_prepare_t tick;
	uv_timer_t redraw_timer, clock;
	uv_timer_t settle;		/* wakes the loop once the pane settled */
	struct tui_settle pane_settle;	/* the pane's size, since when */
	uv_poll_t input;
	uv_signal_t sig_winch, sig_term, sig_hup, sig_int;
	uv_fs_event_t watch;
	int handles;			/* open handles, for the shutdown */
	bool watching;
	char *leases_dir;
	FILE *log;
	/* the session table, in ID (creation) order */
	struct tui_session **s;
	size_t n, cap;
	char sel[LEASE_ID_LEN + 1];	/* focused lease; "" for none */
	size_t list_top;
	bool detail, zoom, help;
	/* the focused pane's scrollback */
	struct tui_scroll scroll;
	struct tui_sbcache sb;
	size_t sb_req_from, sb_req_n;	/* outstanding SCROLLBACK request */
	bool sb_pending;
	/* the status line's message (a toast or a question) */
	char msg[256];
	bool msg_err;
	uint64_t msg_until;		/* 0: until replaced */
	unsigned clock_ticks;
	unsigned journal_burst;		/* fast re-reads after an fs event */
	bool want_journal, want_resize, started, quit;
	unsigned empty_reads;		/* readable but no key: hung up? */
	/* the review and timeline views (app_view.c) */
	enum tui_view view;
	struct tui_review rv;
	char rv_id[LEASE_ID_LEN + 1];	/* lease the review is of */
	bool rv_have, rv_loading;
	char rv_err[256];
	struct tui_timeline tl;
	bool tl_have, tl_loading;
	char tl_err[256];
	int64_t tl_now;			/* when it was loaded (ms) */
	struct tui_job *jobs;		/* commands the console runs */
	char theme_path[512];		/* the theme file in use, "" built-in */
};

/* app.c */
uint64_t tui_app_now(struct tui_app *);
struct tui_session *tui_app_find(struct tui_app *, const char *id);
struct tui_session *tui_app_focused(struct tui_app *);
/* Index of the focused session, or -1. */
long tui_app_focus_index(struct tui_app *);
void tui_app_mark(struct tui_app *, unsigned what, bool urgent);
/* Every row of the pane is dirty. */
void tui_app_mark_pane(struct tui_app *);
/* Leave the console; the agents keep running. */
void tui_app_quit(struct tui_app *);
void tui_app_message(struct tui_app *, bool error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void tui_app_log(struct tui_app *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Focus the session at index i (-1: none); never called by itself. */
void tui_app_focus(struct tui_app *, long i);
/*
 * The lease needs the operator (issue 21): it is blocked (a question on
 * its screen) or has a result or ending not seen yet. Tab goes to the
 * next one; the status bar counts them.
 */
bool tui_app_needs_operator(const struct tui_session *);
/* The name a lease shows (its name, else its ID). */
const char *tui_app_name(const struct tui_session *);
/* Restore the terminal, print the message and exit (STYLE C.5). */
void tui_fatal(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

/* app_link.c: the links to the holders */
/* Open what each lease needs: a summary link, the focused one's screen. */
void tui_app_link_tend(struct tui_app *);
/* Close a lease's links (no DOWN events follow). */
void tui_app_link_close(struct tui_app *, struct tui_session *);
/* The lease's holder is lost (why: for its row). */
void tui_app_link_lost(struct tui_app *, struct tui_session *,
    const char *why);
/* Ask the focused holder for the scrollback the pane needs. */
void tui_app_link_want_scrollback(struct tui_app *);

/* app_draw.c: one frame of the scene */
void tui_app_draw_relayout(struct tui_app *);
void tui_app_draw_frame(struct tui_app *, const struct tui_redraw_set *);

/* app_act.c: what keys do */
void tui_app_act_key(struct tui_app *, const struct tui_key *);

/* app_view.c: the review and timeline views, and the commands they run */
/* Open the review of the focused lease (spawns `corral review --json`). */
void tui_app_view_review_open(struct tui_app *);
/* Open the timeline (spawns `corral events --since 12h --json`). */
void tui_app_view_timeline_open(struct tui_app *);
void tui_app_view_close(struct tui_app *);
void tui_app_view_reload(struct tui_app *);
/* A view key: move, hunk/file, toggle. */
void tui_app_view_key(struct tui_app *, const struct tui_act *);
/* The confirmation question for apply/reject; false if refused. */
bool tui_app_view_result_ask(struct tui_app *, enum tui_action);
/*
 * Confirmed: `corral answer ID N --digest HEX` (the command's own path:
 * its digest check and receipt).
 */
void tui_app_view_answer_run(struct tui_app *, const struct tui_session *,
    unsigned n);
/* Confirmed: run `corral apply ID [--hunks LIST]` or `corral reject ID`. */
void tui_app_view_result_run(struct tui_app *, enum tui_action);
/*
 * A lease's long step for its list row ("applying... 12s",
 * "provisioning... 3s", "running checks... 40s"); false when none.
 */
bool tui_app_view_progress(struct tui_app *, const struct tui_session *,
    char *buf, size_t bufsz);
/* Draw the open view into r. */
void tui_app_view_draw(struct tui_app *, const struct tui_rect *r);
/*
 * `corral reconcile` as a job, at the console's start (SPEC 9.2): a lease
 * whose holder was lost is failed in the journal, then read again.
 */
void tui_app_view_reconcile(struct tui_app *);
/* Stop reading from running commands (they run on); free the views. */
void tui_app_view_stop(struct tui_app *);

#endif /* CORRAL_TUI_CONSOLE_INT_H */
