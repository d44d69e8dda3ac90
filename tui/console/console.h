/*
 * console.h: the curses console (SPEC 4, STYLE A, F). Its entry points,
 * the console (app.c) and the owner's terminal of `corral wrap` (wrap.c),
 * then its pure core: the key/prefix state machine (keys.c) and the
 * operator's keymap (keymap.c), geometry (layout.c), the redraw throttle
 * (redraw.c), themes and colour depth (theme.c), rendering onto an
 * abstract surface (draw.c, draw_view.c), the console's view of leases
 * and scrollback (view.c), the review model (review.c) and the timeline
 * (timeline.c). The pure core has no curses, no libuv and no I/O except
 * reading theme and keymap files. Private declarations: console_int.h.
 */
#ifndef CORRAL_TUI_CONSOLE_H
#define CORRAL_TUI_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pty/pty.h"
#include "tui/tui.h"

struct tui_theme;

/* ------------------------------------------------------------------ */
/* app.c: the console                                                 */

/* Console options from the command line (corral [--theme NAME]). */
struct tui_console_opts {
	const char *theme;	/* NULL: config, $CORRAL_THEME, default */
};

/* The console; focus_id may be NULL. Returns the exit code. */
int tui_app_run(struct tui_ctx *, const char *focus_id);
/* Run the console with options (`corral attach`). */
int tui_app_run_opts(struct tui_ctx *, const char *focus_id,
    const struct tui_console_opts *);
/* `corral [--theme NAME]`: parse the console's options, then run it. */
int tui_cmd_attach_console(struct tui_ctx *, int argc, char **argv);

/* ------------------------------------------------------------------ */
/* wrap.c: the owner's terminal of a trusted_local lease              */

/* This terminal as the owner's view of lease id (socket sockfd). */
int tui_wrap_attach(struct tui_ctx *, const char *id, int sockfd);

/* ------------------------------------------------------------------ */
/* keys.c: keys in, actions out                                       */

/* Console-only key codes, after enum pty_key's. */
enum tui_key_code {
	TUI_KEY_RESIZE = 0x100,	/* the outer terminal changed size */
	TUI_KEY_WHEEL_UP,
	TUI_KEY_WHEEL_DOWN,
	TUI_KEY_CLICK,		/* button 1 at (x, y) */
};

/*
 * One input event. code == PTY_KEY_NONE means a character cp; otherwise
 * code is an enum pty_key or enum tui_key_code value. Control characters
 * are a letter with PTY_MOD_CTRL (C-b is cp 'b', CTRL): build them with
 * tui_keys_from_char.
 */
struct tui_key {
	int code;
	uint32_t cp;
	unsigned mods;	/* PTY_MOD_* */
	int x, y;	/* surface position for TUI_KEY_CLICK and the wheel */
};

enum tui_mode {
	TUI_MODE_NORMAL,	/* the console has the keyboard */
	TUI_MODE_PREFIX,	/* after the prefix key: one console command */
	TUI_MODE_TYPING,	/* keys go to the focused agent */
	TUI_MODE_SCROLL,	/* browsing scrollback */
	TUI_MODE_CONFIRM,	/* waiting for y/n */
	TUI_MODE_REVIEW,	/* the review view of the focused lease */
	TUI_MODE_TIMELINE,	/* the timeline of every lease */
	TUI_MODE_COUNT
};

enum tui_action {
	TUI_ACT_NONE,		/* nothing to do */
	TUI_ACT_MODE,		/* only the mode changed (redraw the status) */
	TUI_ACT_QUIT,		/* leave the console; agents keep running */
	TUI_ACT_SELECT_NEXT,
	TUI_ACT_SELECT_PREV,
	TUI_ACT_SELECT_FIRST,
	TUI_ACT_SELECT_LAST,
	TUI_ACT_TYPE_START,	/* mode is now TYPING into the focused lease */
	TUI_ACT_SEND_KEY,	/* send act.key to the agent, act.arg times */
	TUI_ACT_HELP,		/* toggle the help overlay */
	TUI_ACT_DISMISS,	/* Esc: close help / a message */
	TUI_ACT_DETAIL_TOGGLE,
	TUI_ACT_ZOOM_TOGGLE,	/* the pane takes the whole body */
	TUI_ACT_SCROLL,		/* mode is SCROLL; move by act.arg act.unit */
	TUI_ACT_SCROLL_TOP,
	TUI_ACT_SCROLL_BOTTOM,
	TUI_ACT_SCROLL_EXIT,	/* back to the live screen */
	TUI_ACT_CONFIRM_ASK,	/* ask y/n for the action in act.arg */
	TUI_ACT_CONFIRM_NO,	/* the question was declined */
	TUI_ACT_CANCEL,		/* confirmed: cancel the selected lease */
	TUI_ACT_REJECT,		/* confirmed: reject its result */
	TUI_ACT_APPLY,		/* confirmed: apply its result */
	TUI_ACT_REVIEW,		/* open the review view */
	TUI_ACT_RESIZE,		/* re-lay everything, resize the focused pane */
	TUI_ACT_REDRAW,		/* C-l: full redraw */
	TUI_ACT_CLICK,		/* act.key.x/y: select what is there */
	TUI_ACT_TIMELINE,	/* open the timeline view */
	TUI_ACT_VIEW_CLOSE,	/* leave the review or timeline view */
	TUI_ACT_VIEW_MOVE,	/* move the view's cursor act.arg act.unit */
	TUI_ACT_VIEW_TOP,
	TUI_ACT_VIEW_BOTTOM,
	TUI_ACT_HUNK_NEXT,	/* act.arg 1 or -1 */
	TUI_ACT_FILE_NEXT,	/* act.arg 1 or -1 */
	TUI_ACT_HUNK_TOGGLE,	/* drop or keep the hunk under the cursor */
	TUI_ACT_VIEW_RELOAD,	/* load the view's data again */
	TUI_ACT_VIEW_SIDEWAYS,	/* act.arg steps right (< 0: left), 0: home */
	TUI_ACT_SELECT_ATTENTION,	/* the next lease that needs the operator */
	TUI_ACT_ANSWER_ASK,	/* ask y/n to answer option act.arg (1-9) */
	TUI_ACT_ANSWER,		/* confirmed: answer option act.arg */
	TUI_ACT_COUNT
};

enum tui_scroll_unit { TUI_SCROLL_LINE, TUI_SCROLL_HALF, TUI_SCROLL_PAGE };

/* What a key produced. */
struct tui_act {
	enum tui_action action;
	/*
	 * SCROLL: amount in unit, positive = back into history (0 = just
	 * entered). SEND_KEY: repeat count (>= 1). CONFIRM_ASK: the
	 * enum tui_action that 'y' will produce.
	 */
	int arg;
	enum tui_scroll_unit unit;
	struct tui_key key;	/* SEND_KEY, CLICK */
	bool mode_changed;
};

/* Binding tables (tmux's key tables): one per mode that reads keys. */
enum tui_table {
	TUI_TABLE_NORMAL,
	TUI_TABLE_PREFIX,
	TUI_TABLE_SCROLL,
	TUI_TABLE_REVIEW,
	TUI_TABLE_TIMELINE,
	TUI_TABLE_COUNT
};

/* An operator's binding from the keymap file (tui_keys_bind). */
struct tui_keys_user {
	enum tui_table table;
	int cmd;		/* index into the command table; -1: unbound */
	struct tui_key key;
};

#define TUI_KEYS_USER_MAX 128

/* The state machine. Fields may be read; change them through the API. */
struct tui_keys {
	enum tui_mode mode;
	enum tui_mode prefix_from;	/* mode the prefix was pressed in */
	enum tui_mode scroll_from;	/* mode SCROLL returns to */
	enum tui_mode confirm_from;	/* mode CONFIRM returns to */
	enum tui_action pending;	/* what CONFIRM will do on 'y' */
	int pending_arg;		/* and its act.arg */
	struct tui_key prefix;		/* default C-b */
	bool pane_altscreen;	/* focused agent on the alternate screen */
	struct tui_keys_user user[TUI_KEYS_USER_MAX];	/* win over defaults */
	size_t nuser;
};

/* One line of the help overlay. */
struct tui_help_line {
	bool prefixed;		/* shown after the prefix key's name */
	const char *keys;
	const char *what;
};

/* Start in NORMAL with the prefix C-b. */
void tui_keys_init(struct tui_keys *);
/*
 * Feed one key: fills *out (always) and returns out->action. Moving the
 * selection never produces TUI_ACT_SEND_KEY; only TYPING does (and the
 * prefix pressed twice while typing, which sends the prefix itself).
 */
enum tui_action tui_keys_feed(struct tui_keys *, const struct tui_key *,
    struct tui_act *out);
/* Force a mode (the focused lease went away, scrolled back to the end). */
void tui_keys_set_mode(struct tui_keys *, enum tui_mode);
/* Set the prefix key; -EINVAL for a key that cannot be one (NONE). */
int tui_keys_set_prefix(struct tui_keys *, const struct tui_key *);
/* The focused agent uses the alternate screen: the wheel sends arrows. */
void tui_keys_set_altscreen(struct tui_keys *, bool);
const char *tui_keys_mode_name(enum tui_mode);
const char *tui_keys_action_name(enum tui_action);
/* Key hints for the status bar in the current mode (names the prefix). */
size_t tui_keys_hints(const struct tui_keys *, char *buf, size_t bufsz);
/* The help overlay's lines. */
const struct tui_help_line *tui_keys_help(size_t *n);
/* "normal", "prefix", "scroll", "review", "timeline" <-> enum tui_table. */
const char *tui_keys_table_name(enum tui_table);
int tui_keys_table_from_name(const char *);	/* enum tui_table or -1 */
/* A bindable command's index by name ("apply", "hunk-next"...), or -1. */
int tui_keys_command_find(const char *name);
const char *tui_keys_command_name(int cmd);
size_t tui_keys_command_count(void);
/*
 * Bind key in table to command cmd (tui_keys_command_find; -1 unbinds
 * the key, a default included), replacing an earlier user binding of the
 * same key. 0, -EINVAL (a bad table or command, or the prefix key) or
 * -ENOSPC past TUI_KEYS_USER_MAX.
 */
int tui_keys_bind(struct tui_keys *, enum tui_table, const struct tui_key *,
    int cmd);
/* Drop every user binding (back to the defaults; the prefix stays). */
void tui_keys_unbind_all(struct tui_keys *);

/* ------------------------------------------------------------------ */
/* keymap.c: the operator's keymap file (issue 9)                     */

/*
 * Parse a keymap file's text: lines "bind [-T TABLE] KEY COMMAND",
 * "unbind [-T TABLE] KEY", "prefix KEY", '#' comments, blank lines.
 * On success the bindings are added to *k (over the defaults) and 0 is
 * returned; on the first malformed line nothing is changed, err holds
 * "FILE:LINE: what" and -EINVAL is returned (the defaults stay).
 */
int tui_keymap_parse(struct tui_keys *k, const char *file, const char *text,
    size_t len, char *err, size_t errsz);
/* The keymap file: tui_config_file("keys"). */
int tui_keymap_path(char *buf, size_t bufsz);
/*
 * Load and parse path (NULL: tui_keymap_path): 0 also when there is no
 * file; -errno or -EINVAL with "FILE:LINE: what" in err, the defaults
 * kept.
 */
int tui_keymap_load(struct tui_keys *k, const char *path, char *err,
    size_t errsz);

/* Key constructors and names. */
struct tui_key tui_keys_char(uint32_t cp, unsigned mods);
struct tui_key tui_keys_special(int code, unsigned mods);
/*
 * A character as a terminal sends it: CR/LF -> Enter, HT -> Tab, DEL/BS
 * -> Backspace, ESC -> Escape, other C0 -> letter + PTY_MOD_CTRL.
 */
struct tui_key tui_keys_from_char(uint32_t wc);
bool tui_keys_eq(const struct tui_key *, const struct tui_key *);
/*
 * Parse "C-b", "^b", "M-x", "Enter", "Esc", "Tab", "Space", "F1", "PgUp",
 * a single character...; 0 or -EINVAL.
 */
int tui_keys_parse(const char *s, struct tui_key *out);
/* Name a key the way tui_keys_parse reads it ("C-b"); returns the length. */
size_t tui_keys_name(const struct tui_key *, char *buf, size_t bufsz);

/* ------------------------------------------------------------------ */
/* layout.c: area -> rectangles                                       */

struct tui_rect {
	int x, y, w, h;	/* w == 0 or h == 0: absent */
};

struct tui_layout_in {
	int w, h;		/* the outer terminal */
	size_t nleases;
	bool detail;		/* detail panel shown */
	bool zoom;		/* focused pane takes the whole body */
	bool help;		/* help overlay shown */
};

/* Columns from which the list goes to the left of the pane. */
#define TUI_LAYOUT_WIDE 100
/* Below this, one column: the list, or the pane when zoomed (issue 21). */
#define TUI_LAYOUT_ONECOL 60
#define TUI_LAYOUT_LIST_MIN 30
#define TUI_LAYOUT_LIST_MAX 100
#define TUI_LAYOUT_DETAIL_ROWS 12

struct tui_layout {
	struct tui_rect list;	/* the lease list */
	struct tui_rect detail;	/* the detail panel (empty when hidden) */
	struct tui_rect pane;	/* the focused pane: the endpoint's size */
	struct tui_rect status;	/* bottom line */
	struct tui_rect sep_v;	/* vertical rule between list and pane */
	struct tui_rect sep_h;	/* horizontal rule above the pane */
	struct tui_rect help;	/* overlay drawn over the others */
	bool list_left;
	bool onecol;		/* the list alone; z shows the pane */
};

/*
 * Compute the scene. Every rect lies inside the area, none is negative,
 * and list, detail, pane, status and the rules never overlap (the help
 * overlay is drawn on top on purpose).
 */
void tui_layout_compute(const struct tui_layout_in *, struct tui_layout *out);
bool tui_layout_rect_empty(const struct tui_rect *);
bool tui_layout_rect_contains(const struct tui_rect *, int x, int y);
bool tui_layout_rect_overlap(const struct tui_rect *, const struct tui_rect *);

/*
 * The pane's size an agent is resized to must be one the pane keeps: each
 * resize makes the agent draw again (and rewraps its screen), so a size
 * the pane passes through (a window dragged, zoom toggled twice, a layout
 * redone) is never sent. tui_layout_settle says whether the pane has kept
 * its size for TUI_LAYOUT_SETTLE_MS by now; if not, *wait is how long it
 * must still last.
 */
#define TUI_LAYOUT_SETTLE_MS 120

struct tui_settle {
	int w, h;
	uint64_t since;
};

bool tui_layout_settle(struct tui_settle *, const struct tui_rect *pane,
    uint64_t now, uint64_t *wait);

/* ------------------------------------------------------------------ */
/* redraw.c: one throttled frame timer (STYLE E)                      */

#define TUI_REDRAW_INTERVAL_MS 16	/* at most ~60 frames a second */
#define TUI_REDRAW_ECHO_MS 100		/* output after a key is an echo */

#define TUI_DIRTY_LIST 0x01u
#define TUI_DIRTY_PANE 0x02u	/* rows pane_first..pane_last */
#define TUI_DIRTY_DETAIL 0x04u
#define TUI_DIRTY_STATUS 0x08u
#define TUI_DIRTY_ALL 0x10u	/* re-lay, clear and draw everything */

struct tui_redraw {
	unsigned interval_ms;
	uint64_t last_draw_ms;
	uint64_t echo_until_ms;	/* the next pane frame before this is urgent */
	unsigned what;		/* TUI_DIRTY_* */
	int pane_first, pane_last;
	bool urgent;
	bool pending;		/* the caller has a timer armed */
	bool drawn;		/* a frame was drawn already */
};

enum tui_redraw_verdict {
	TUI_REDRAW_IDLE,	/* nothing dirty */
	TUI_REDRAW_NOW,		/* draw now (tui_redraw_take) */
	TUI_REDRAW_ARM,		/* arm the timer for *wait_ms */
	TUI_REDRAW_PENDING,	/* the armed timer will do it */
};

/* What one frame has to draw. */
struct tui_redraw_set {
	unsigned what;
	int pane_first, pane_last;
};

/* interval_ms 0 means TUI_REDRAW_INTERVAL_MS. */
void tui_redraw_init(struct tui_redraw *, unsigned interval_ms);
/*
 * Mark parts dirty. urgent (a keystroke) makes the next frame immediate
 * and opens the echo window: the first pane frame within
 * TUI_REDRAW_ECHO_MS after it is drawn at once too.
 */
void tui_redraw_mark(struct tui_redraw *, uint64_t now_ms, unsigned what,
    bool urgent);
/* Mark pane rows first..last dirty (output-driven, not urgent). */
void tui_redraw_mark_rows(struct tui_redraw *, uint64_t now_ms, int first,
    int last);
/* Decide: draw now, arm the timer (sets pending), or wait. */
enum tui_redraw_verdict tui_redraw_due(struct tui_redraw *, uint64_t now_ms,
    unsigned *wait_ms);
/* The armed timer went off: call tui_redraw_due again. */
void tui_redraw_fired(struct tui_redraw *);
/*
 * A frame is drawn now: take the dirty set and clear it. An echo drawn
 * before the interval is up takes the pane's rows only; the rest stays
 * dirty for the throttled frame.
 */
void tui_redraw_take(struct tui_redraw *, uint64_t now_ms,
    struct tui_redraw_set *out);

/* ------------------------------------------------------------------ */
/* theme.c: themes (SPEC 4.6)                                         */

/* Colour depth of the outer terminal. */
enum tui_colors {
	TUI_COLORS_NONE,	/* NO_COLOR or a monochrome terminal */
	TUI_COLORS_8,
	TUI_COLORS_16,
	TUI_COLORS_256,
	TUI_COLORS_TRUE
};

struct tui_style {
	uint32_t fg, bg;	/* PTY_COLOR_* packing */
	uint16_t attrs;		/* PTY_ATTR_* */
};

/* Themed elements; theme files name them (see tui_theme_el_name). */
enum tui_el {
	TUI_EL_LIST,		/* list */
	TUI_EL_LIST_SELECTED,	/* list.selected */
	TUI_EL_LIST_DIM,	/* list.dim: secondary columns, empty list */
	TUI_EL_LIST_UNSEEN,	/* list.unseen: the unseen marker */
	TUI_EL_LIST_HOST,	/* list.host: the HOST tag (trusted_local) */
	TUI_EL_BADGE,		/* badge.unknown; + activity for the others */
	TUI_EL_BADGE_LAST = TUI_EL_BADGE + TUI_ACTIVITY_COUNT - 1,
	TUI_EL_PANE,		/* pane: the agent's default colours */
	TUI_EL_BORDER,		/* border */
	TUI_EL_BORDER_LABEL,	/* border.label */
	TUI_EL_STATUS,		/* status */
	TUI_EL_STATUS_MODE,	/* status.mode */
	TUI_EL_STATUS_TYPING,	/* status.typing: the mode tag while typing */
	TUI_EL_STATUS_MESSAGE,	/* status.message */
	TUI_EL_STATUS_ERROR,	/* status.error: errors and y/n questions */
	TUI_EL_DETAIL,		/* detail */
	TUI_EL_DETAIL_KEY,	/* detail.key */
	TUI_EL_DETAIL_TITLE,	/* detail.title */
	TUI_EL_HELP,		/* help */
	TUI_EL_SCROLL,		/* scroll: the scrollback position tag */
	TUI_EL_REVIEW_TITLE,	/* review.title: section titles */
	TUI_EL_REVIEW_WARN,	/* review.warn: flags, findings */
	TUI_EL_REVIEW_GOOD,	/* review.good: a passing check */
	TUI_EL_REVIEW_BAD,	/* review.bad: failing checks, stale */
	TUI_EL_DIFF_FILE,	/* diff.file: a file header */
	TUI_EL_DIFF_HUNK,	/* diff.hunk: a hunk header */
	TUI_EL_DIFF_ADD,	/* diff.add */
	TUI_EL_DIFF_DEL,	/* diff.del */
	TUI_EL_DIFF_DROPPED,	/* diff.dropped: a hunk the reviewer dropped */
	TUI_EL_COUNT
};

#define TUI_THEME_NAME_MAX 64

struct tui_theme {
	struct tui_style el[TUI_EL_COUNT];
	bool no_color;
	char name[TUI_THEME_NAME_MAX];
};

/* The built-in theme (the same as themes/default.theme). */
void tui_theme_default(struct tui_theme *);
/*
 * Load a theme file: `key = value` lines, '#' or ';' comments. A value is
 * "[FG] [on BG] [ATTR...]" with colours default, black..white,
 * bright-black..bright-white, colourN/colorN (0-255) or #rrggbb, and attrs
 * bold, underline, italic, blink, reverse, strike, none. Keys not in the
 * file keep their defaults. Returns 0; -errno if the file cannot be read;
 * -EINVAL if it is malformed, with "PATH:LINE: what" in err. *th is
 * always fully set (no_color off): on any error to the built-in defaults.
 * Apply NO_COLOR afterwards with tui_theme_set_no_color.
 */
int tui_theme_load(const char *path, struct tui_theme *th, char *err,
    size_t errsz);
int tui_theme_parse_style(const char *value, struct tui_style *out);
int tui_theme_parse_color(const char *word, uint32_t *out);
/* Element <-> theme file key. */
const char *tui_theme_el_name(enum tui_el);
int tui_theme_el_from_name(const char *);	/* enum tui_el or -1 */
/*
 * NO_COLOR: every colour reads as the default, attributes stay, and the
 * selection, badges and status bar gain bold/reverse if they had none.
 */
void tui_theme_set_no_color(struct tui_theme *, bool);
/* The effective style of an element (no_color applied). */
void tui_theme_style(const struct tui_theme *, enum tui_el,
    struct tui_style *out);
/* The nearest colour the terminal can show (RGB -> 256 -> 16 -> 8). */
uint32_t tui_theme_degrade(uint32_t color, enum tui_colors);
/*
 * Depth from curses' COLORS, $COLORTERM and $NO_COLOR (set and non-empty
 * disables colour). Either string may be NULL.
 */
enum tui_colors tui_theme_colors_detect(int ncolors, const char *colorterm,
    const char *no_color);
/* The RGB of an indexed colour (xterm's default palette). */
void tui_theme_index_rgb(unsigned idx, uint8_t rgb[3]);

/* ------------------------------------------------------------------ */
/* draw.c: the scene onto a surface (STYLE F)                         */

/*
 * A drawing target. put_cell writes one cell: utf8 is one character plus
 * its combining marks (never a control), width 1 or 2 (a wide character
 * covers x and x+1). The curses surface implements it; tests use a grid.
 */
struct tui_surface_ops {
	void (*put_cell)(void *ud, int x, int y, const char *utf8, int width,
	    const struct tui_style *);
	void (*clear)(void *ud);
	void (*set_cursor)(void *ud, int x, int y, bool visible);
	void (*size)(void *ud, int *w, int *h);
};

struct tui_surface {
	const struct tui_surface_ops *ops;
	void *ud;
};

/* A drawing context: where, with which theme, at which colour depth. */
struct tui_draw {
	const struct tui_surface *surface;
	const struct tui_theme *theme;
	enum tui_colors colors;
};

/*
 * One lease as the list shows it. Strings are borrowed for the call, may
 * be NULL, and are escaped before drawing (they come from sandboxes).
 */
struct tui_lease_row {
	const char *id;
	const char *name;	/* NULL: the id is shown */
	enum tui_activity activity;
	const char *lease_state;	/* SPEC 5.1 word */
	const char *mode;	/* isolation tag: "bwrap", "HOST", "cmd" */
	const char *mode_long;	/* "bwrap", "HOST trusted_local"... */
	bool host;		/* trusted_local: no sandbox, its own colour */
	const char *branch;
	int64_t age_s;		/* < 0: unknown */
	const char *last_output;	/* last non-blank screen line */
	const char *lost_reason;	/* shown when activity is LOST */
	const char *cost;	/* "$0.42" (tui_draw_cost); NULL: no request */
	bool unseen;
};

/* A key/value line of the detail panel (value untrusted). */
struct tui_kv {
	const char *key;
	const char *value;
};

/* What the status bar shows. */
struct tui_status {
	enum tui_mode mode;
	const char *focus;	/* name of the focused lease (untrusted) */
	const char *hints;	/* tui_keys_hints() */
	const char *message;	/* replaces the hints when set */
	bool error;		/* message is an error or a question */
	unsigned counts[TUI_ACTIVITY_COUNT];
	unsigned attention;	/* leases that need the operator (Tab) */
	/* what the listed leases' model requests cost together ("$1.20",
	   tui_draw_cost); NULL: none made one */
	const char *cost;
};

/* Text flags. */
#define TUI_TEXT_PAD 0x01u	/* fill the rest of the width with blanks */
#define TUI_TEXT_RIGHT 0x02u	/* right-align in the width (pads left) */

/*
 * Draw text at (x, y) within w columns: always escaped first (tui_escape),
 * clipped with an ellipsis when too wide. Returns the columns the text
 * itself took.
 */
int tui_draw_text(const struct tui_draw *, int x, int y, int w,
    const char *s, const struct tui_style *, unsigned flags);
/*
 * The same from column skip of the escaped text (the text is escaped
 * whole then, however long): an ellipsis in the first column says text
 * was left out to the left, as the last column's says to the right.
 */
int tui_draw_text_from(const struct tui_draw *, int x, int y, int w,
    const char *s, size_t skip, const struct tui_style *, unsigned flags);
void tui_draw_fill(const struct tui_draw *, const struct tui_rect *,
    const struct tui_style *);
/* "45s", "12m", "3h", "5d" into buf (>= 8 bytes); "-" when negative. */
void tui_draw_age(int64_t secs, char *buf, size_t bufsz);
/* The first row to show so that sel is visible in height rows. */
/*
 * What a lease's model requests cost, for its row: "$0.42", "$12.30",
 * "$1234", "+" after it when some requests' cost is unknown. Empty (and
 * false) when it made none.
 */
bool tui_draw_cost(int64_t requests, int64_t cost_nano, int64_t unknown,
    char *buf, size_t bufsz);
size_t tui_draw_list_top(size_t n, size_t sel, int height, size_t top);
/*
 * The lease list: rows[top..] into r, row sel highlighted (and marked
 * '>'). Columns adapt to the width.
 */
void tui_draw_list(const struct tui_draw *, const struct tui_rect *r,
    const struct tui_lease_row *rows, size_t n, size_t sel, size_t top);
/*
 * Pane rows first..last (inclusive, clipped) of a mirror into r; cells
 * outside the mirror are blank. Characters the escaper would escape show
 * as '?'.
 */
void tui_draw_pane(const struct tui_draw *, const struct tui_rect *r,
    const struct pty_mirror *m, int first, int last);
/*
 * One row of cells at (x, y) in w columns (scrollback lines); reverse
 * flips every cell (DECSCNM).
 */
void tui_draw_cells(const struct tui_draw *, int x, int y, int w,
    const struct pty_cell *cells, int n, bool reverse);
/* Place the cursor of m in r, visible only if show and the agent shows it. */
void tui_draw_cursor(const struct tui_draw *, const struct tui_rect *r,
    const struct pty_mirror *m, bool show);
/* "[offset/total]" at the top right of r while browsing scrollback. */
void tui_draw_scroll_tag(const struct tui_draw *, const struct tui_rect *r,
    size_t offset, size_t total);
/*
 * How the focused lease's agent ended, on the pane's last row at the
 * right (" exited 0 ", " failed: exit 1 "): a dead pane never passes for
 * a live one. bad: the error style.
 */
void tui_draw_pane_tag(const struct tui_draw *, const struct tui_rect *,
    const char *text, bool bad);
/* The detail panel: a title row then key: value lines. */
void tui_draw_detail(const struct tui_draw *, const struct tui_rect *r,
    const char *title, const struct tui_kv *kv, size_t n);
void tui_draw_status(const struct tui_draw *, const struct tui_rect *r,
    const struct tui_status *);
/* A rule (vertical or horizontal by shape) with an optional label. */
void tui_draw_rule(const struct tui_draw *, const struct tui_rect *r,
    const char *label);
/* The help overlay from the key tables. */
void tui_draw_help(const struct tui_draw *, const struct tui_rect *r,
    const struct tui_keys *);

/* ------------------------------------------------------------------ */
/* draw_view.c: the full-body views (review, timeline)                */

struct tui_review;
struct tui_timeline;

/*
 * The review view (SPEC 7.4) in r: a title row, the lines from rv->top
 * with the cursor line highlighted, dropped hunks marked "x" and dimmed;
 * every text escaped. rv NULL: the message alone (loading, an error).
 */
void tui_draw_view_review(const struct tui_draw *, const struct tui_rect *r,
    const struct tui_review *rv, const char *msg);

/* One row of the timeline view. */
struct tui_tl_row {
	const char *id;
	const char *name;	/* NULL: the id (untrusted) */
	const char *state;	/* lease state word, or a long step */
	bool selected;
};

/*
 * The timeline view in r: a header naming the window [from_ms, to_ms),
 * one row per lease with its name, a bar of activity letters coloured
 * like the badges, and the time it spent blocked; then a legend.
 */
void tui_draw_view_timeline(const struct tui_draw *, const struct tui_rect *r,
    const struct tui_timeline *tl, const struct tui_tl_row *rows,
    size_t n, int64_t from_ms, int64_t to_ms, const char *msg);
/* "1h02m", "3m05s", "12s", "0s" into buf (>= 16 bytes). */
void tui_draw_view_duration(int64_t ms, char *buf, size_t bufsz);

/* ------------------------------------------------------------------ */
/* view.c: the console's view of leases and scrollback (pure)         */

struct lease_record;

/* Browsing the focused pane's scrollback (SPEC 4.4). */
struct tui_scroll {
	size_t offset;	/* lines back from the live screen; 0: live */
	size_t total;	/* scrollback lines the endpoint holds */
};

/* Move by lines (positive: back into history), clamped to [0, total]. */
void tui_view_scroll_move(struct tui_scroll *, long lines);
/*
 * The endpoint now holds total scrollback lines. While browsing
 * (offset > 0) the view stays on the same text as lines are added.
 */
void tui_view_scroll_set_total(struct tui_scroll *, size_t total);
/*
 * What pane row y shows: true and *sb (a scrollback line, 0 = oldest),
 * or false and *row (a row of the live screen).
 */
bool tui_view_scroll_source(const struct tui_scroll *, int y, size_t *sb,
    int *row);
/* The scrollback lines [*from, *from + *n) that pane_h rows show. */
void tui_view_scroll_needed(const struct tui_scroll *, int pane_h, size_t *from,
    size_t *n);

/* Scrollback lines received from a holder (SB_LINES), kept packed. */
#define TUI_SBCACHE_MAX 20000	/* lines held at most */
struct tui_sbcache {
	size_t from, n;		/* lines [from, from + n) */
	size_t total;		/* lines the holder said it holds */
	uint8_t *buf;		/* packed lines back to back */
	size_t len, cap;
	size_t *off;		/* n + 1 offsets into buf */
	size_t offcap;
};
void tui_view_sbcache_init(struct tui_sbcache *);
void tui_view_sbcache_free(struct tui_sbcache *);
void tui_view_sbcache_reset(struct tui_sbcache *);
/*
 * Take an SB_LINES payload (untrusted: validated here). It extends the
 * cache when it starts where the cache ends, else replaces it. Returns
 * 0, PTY_EPROTO, -E2BIG (over TUI_SBCACHE_MAX lines) or -ENOMEM; the
 * cache is unchanged on error.
 */
int tui_view_sbcache_apply(struct tui_sbcache *, const uint8_t *p, size_t len);
/* All of lines [from, from + n) are held. */
bool tui_view_sbcache_has(const struct tui_sbcache *, size_t from, size_t n);
/* Unpack line idx into cells[maxcells]: its cell count, or -1 if absent. */
int tui_view_sbcache_line(const struct tui_sbcache *, size_t idx,
    struct pty_cell *cells, int maxcells);

/*
 * A sandboxed lease that failed while provisioning before anything was
 * created (a bad policy, not a repository, a preflight refusal): neither
 * the console nor `ls --all` lists it (`ls --all --failed` does).
 */
bool tui_view_stillborn(const struct lease_record *);
/*
 * Whether the console lists a journal lease: live (not final, or cleanup
 * pending or failed), a final one the operator has not seen, or one it
 * already shows (it never vanishes under the operator's eyes).
 */
bool tui_view_listed(const struct lease_record *, bool shown);
/* Whether the lease should have a holder to talk to. */
bool tui_view_needs_holder(const struct lease_record *);
/*
 * The activity a row shows: lost wins; then what the holder says (state
 * "exited" with its wait status and cancelled flag, or its own activity
 * word); else the journal's.
 */
enum tui_activity tui_view_activity(const struct lease_record *,
    bool lost, bool exited, int exit_status, bool cancelled,
    const char *holder_activity);
/*
 * The list's isolation tag: "HOST" for trusted_local (no sandbox), "cmd"
 * for the command adapter (operator-asserted), else the adapter ("bwrap").
 */
const char *tui_view_mode_label(const struct lease_record *);
/* In full: "HOST trusted_local", else the isolation class. */
const char *tui_view_mode_long(const struct lease_record *);
#define TUI_VIEW_DETAIL_MAX 24
/*
 * The detail panel's lines for a lease (SPEC 4.3), most telling first:
 * state and cleanup, why it is lost (when lost is not NULL), the agent's
 * title, base commit and ref, branch, review worktree, sandbox ID,
 * adapter and isolation, policy, limits, receipt length and head,
 * workspace, ID. Absent values are "-". Formatted values live in buf.
 * Returns the number of lines (<= max).
 */
size_t tui_view_detail(const struct lease_record *, const char *title,
    const char *lost, struct tui_kv *kv, size_t max, char *buf,
    size_t bufsz);
/*
 * A long step of the lease from the journal (issue 9: progress, not a
 * frozen row): "provisioning (seeding)... 12s" while provisioning,
 * "running checks... 40s" while a result commit's checks have not
 * reported; elapsed since the row's last change. False when none.
 */
bool tui_view_progress(const struct lease_record *, int64_t now_ms,
    char *buf, size_t bufsz);

/* ------------------------------------------------------------------ */
/* review.c: the review view's model (SPEC 7.4), pure                 */

/* What a line of the review view is, for its colour. */
enum tui_rv_kind {
	TUI_RV_TEXT,		/* plain */
	TUI_RV_TITLE,		/* a section title */
	TUI_RV_WARN,		/* flags, findings, stale */
	TUI_RV_GOOD,		/* a passing check */
	TUI_RV_BAD,		/* a failing check */
	TUI_RV_FILE,		/* a file header of the diff */
	TUI_RV_HUNK,		/* a hunk header */
	TUI_RV_ADD,		/* '+' line */
	TUI_RV_DEL,		/* '-' line */
	TUI_RV_CTX,		/* context line */
	TUI_RV_META,		/* "\ No newline", dim text */
	TUI_RV_COUNT
};

struct tui_rv_line {
	enum tui_rv_kind kind;
	int file;		/* index into files, -1: none */
	int hunk;		/* index into that file's hunks, -1: none */
	char *text;		/* untrusted, raw: drawing escapes it */
	size_t width;		/* columns of its escaped text */
};

struct tui_rv_file {
	char *id;		/* "DIGEST8:F" */
	char *path;		/* untrusted */
	bool whole;		/* added, deleted or binary: only whole */
	bool keep;		/* whole files and files without hunks */
	size_t line;		/* its header line */
	size_t nhunks;
	bool *hkeep;		/* per hunk */
	size_t *hline;		/* per hunk: its header line */
	char **hid;		/* per hunk: "DIGEST8:F:H" */
};

#define TUI_REVIEW_LINES_MAX 200000	/* lines held at most */
#define TUI_REVIEW_TEXT_MAX 1024	/* bytes of a line of our own */
#define TUI_REVIEW_HSTEP 40		/* columns a sideways step moves */

struct tui_review {
	char id[32];		/* the lease */
	char digest8[9];	/* first 8 hex digits of the patch digest */
	char state[32];		/* its lease state */
	bool ready;		/* result_ready, reviewed, not stale */
	bool truncated;		/* over TUI_REVIEW_LINES_MAX */
	struct tui_rv_line *lines;
	size_t n, cap;
	struct tui_rv_file *files;
	size_t nfiles;
	size_t cur, top;	/* cursor line, first line shown */
	/*
	 * Diff lines are kept whole however long (a payload past the pane's
	 * edge must be reachable before apply): the view scrolls sideways,
	 * hcol columns from the left, and marks text beyond either edge.
	 */
	size_t hcol;
	size_t maxw;		/* the widest line's columns */
};

void tui_review_init(struct tui_review *);
void tui_review_free(struct tui_review *);
/*
 * Build the view from `corral review --json`'s document (text, len).
 * Every hunk starts kept. Returns 0, -EINVAL (not a review document:
 * err says why) or -ENOMEM. *rv is reset first.
 */
int tui_review_parse(struct tui_review *rv, const char *text, size_t len,
    char *err, size_t errsz);
/* Move the cursor by delta lines, clamped. */
void tui_review_move(struct tui_review *, long delta);
/* Cursor to the next (dir 1) or previous (-1) hunk or file header. */
void tui_review_next_hunk(struct tui_review *, int dir);
void tui_review_next_file(struct tui_review *, int dir);
/*
 * Drop or keep what the cursor is on: the hunk (a line of it or its
 * header), or the whole file on its header or when it can only be taken
 * whole. Returns false when the cursor is on no hunk or file.
 */
bool tui_review_toggle(struct tui_review *);
/* Whether line i belongs to something dropped. */
bool tui_review_line_dropped(const struct tui_review *, size_t i);
/* Hunks (or whole files) kept and in total. */
void tui_review_counts(const struct tui_review *, size_t *kept,
    size_t *total);
/*
 * The --hunks LIST for `corral apply` (docs/results.md: "D:F" for a file
 * kept whole, "D:F:H" for kept hunks of a partly kept file) into buf:
 * 0 with buf "" when everything is kept (no --hunks needed), 1 with the
 * list, -ENOENT when nothing is kept, -ENOSPC when buf is too small.
 */
int tui_review_hunks(const struct tui_review *, char *buf, size_t bufsz);
/* Keep the cursor in view in height rows (sets top). */
void tui_review_scroll(struct tui_review *, int height);
/*
 * Scroll sideways by delta columns, clamped so that the widest line's
 * last column can be the first shown; to 0 with delta LONG_MIN.
 */
void tui_review_hscroll(struct tui_review *, long delta);

/* ------------------------------------------------------------------ */
/* timeline.c: the morning look (issue 9), pure                       */

#define TUI_TIMELINE_MAX_LEASES 256
#define TUI_TIMELINE_MAX_SPANS 4096	/* state changes kept per lease */

/* One lease's activity over time. */
struct tui_tl_lease {
	char id[32];
	char name[64];		/* set by the caller; "" when unknown */
	size_t n, cap;
	int64_t *at;		/* ms, ascending */
	uint8_t *state;		/* enum tui_activity from at[i] on */
	int64_t first_ms;	/* its first event */
	bool ended;		/* the lease reached a final state */
	int64_t end_ms;
};

struct tui_timeline {
	struct tui_tl_lease *l;
	size_t n, cap;
	int64_t oldest_ms;
};

void tui_timeline_init(struct tui_timeline *);
void tui_timeline_free(struct tui_timeline *);
/*
 * Add one line of `corral events --json` (an object with id, at, kind,
 * to): activity rows become state changes, a lease row into a final
 * state ends the lease's bar. Lines that are not such rows are ignored
 * (0); -ENOMEM; -E2BIG past the caps.
 */
int tui_timeline_add_json(struct tui_timeline *, const char *line,
    size_t len);
/* Add one state change (tests and the JSON reader). */
int tui_timeline_add(struct tui_timeline *, const char *id, int64_t at_ms,
    enum tui_activity);
void tui_timeline_end(struct tui_timeline *, const char *id, int64_t at_ms);
const struct tui_tl_lease *tui_timeline_find(const struct tui_timeline *,
    const char *id);
/*
 * The activity shown in each of ncols equal buckets of [from_ms, to_ms):
 * the state that held longest in the bucket, blocked and failed winning
 * ties and any blocked moment showing (it is what the operator must
 * see); TUI_ACTIVITY_UNKNOWN where the lease did not exist or had ended.
 */
void tui_timeline_bucket(const struct tui_tl_lease *, int64_t from_ms,
    int64_t to_ms, uint8_t *cols, int ncols);
/* Milliseconds spent blocked (waiting on the operator) up to now_ms. */
int64_t tui_timeline_blocked_ms(const struct tui_tl_lease *, int64_t now_ms);
/* Milliseconds in state a up to now_ms. */
int64_t tui_timeline_state_ms(const struct tui_tl_lease *,
    enum tui_activity, int64_t now_ms);

#endif /* CORRAL_TUI_CONSOLE_H */
