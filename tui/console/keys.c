/*
 * keys.c: the console's key state machine (STYLE F): key events in,
 * actions out, with a tmux-style prefix (SPEC 4.3). Pure: no terminal, no
 * agent. Moving the selection never sends a key to an agent; only TYPING
 * does, after an explicit key started it, and the prefix stops it.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "tui/console/console.h"

/* One row of the binding tables. */
struct binding {
	struct tui_key key;
	enum tui_action action;
	int arg;
	enum tui_scroll_unit unit;
	enum tui_mode next;	/* mode after the action */
};

#define CH(c) { .code = PTY_KEY_NONE, .cp = (c) }
#define CTRL(c) { .code = PTY_KEY_NONE, .cp = (c), .mods = PTY_MOD_CTRL }
#define SP(k) { .code = (k) }

#define N TUI_MODE_NORMAL
#define S TUI_MODE_SCROLL
#define RV TUI_MODE_REVIEW
#define TL TUI_MODE_TIMELINE

/* The console has the keyboard. Also reached through the prefix. */
static const struct binding normal_table[] = {
	{ .key = CH('j'), .action = TUI_ACT_SELECT_NEXT, .next = N },
	{ .key = SP(PTY_KEY_DOWN), .action = TUI_ACT_SELECT_NEXT, .next = N },
	{ .key = CH('n'), .action = TUI_ACT_SELECT_NEXT, .next = N },
	{ .key = CH('k'), .action = TUI_ACT_SELECT_PREV, .next = N },
	{ .key = SP(PTY_KEY_UP), .action = TUI_ACT_SELECT_PREV, .next = N },
	{ .key = CH('p'), .action = TUI_ACT_SELECT_PREV, .next = N },
	{ .key = CH('g'), .action = TUI_ACT_SELECT_FIRST, .next = N },
	{ .key = SP(PTY_KEY_HOME), .action = TUI_ACT_SELECT_FIRST, .next = N },
	{ .key = CH('G'), .action = TUI_ACT_SELECT_LAST, .next = N },
	{ .key = SP(PTY_KEY_END), .action = TUI_ACT_SELECT_LAST, .next = N },
	{ .key = SP(PTY_KEY_ENTER), .action = TUI_ACT_TYPE_START,
	  .next = TUI_MODE_TYPING },
	{ .key = CH('i'), .action = TUI_ACT_TYPE_START,
	  .next = TUI_MODE_TYPING },
	{ .key = CH('q'), .action = TUI_ACT_QUIT, .next = N },
	{ .key = CH('?'), .action = TUI_ACT_HELP, .next = N },
	{ .key = SP(PTY_KEY_ESCAPE), .action = TUI_ACT_DISMISS, .next = N },
	{ .key = CH('['), .action = TUI_ACT_SCROLL, .arg = 0, .next = S },
	{ .key = SP(PTY_KEY_PAGEUP), .action = TUI_ACT_SCROLL, .arg = 1,
	  .unit = TUI_SCROLL_PAGE, .next = S },
	{ .key = SP(PTY_KEY_PAGEDOWN), .action = TUI_ACT_SCROLL, .arg = -1,
	  .unit = TUI_SCROLL_PAGE, .next = S },
	{ .key = SP(TUI_KEY_WHEEL_UP), .action = TUI_ACT_SCROLL, .arg = 3,
	  .next = S },
	{ .key = CH('d'), .action = TUI_ACT_DETAIL_TOGGLE, .next = N },
	{ .key = CH('z'), .action = TUI_ACT_ZOOM_TOGGLE, .next = N },
	{ .key = CH('x'), .action = TUI_ACT_CONFIRM_ASK,
	  .arg = TUI_ACT_CANCEL, .next = TUI_MODE_CONFIRM },
	{ .key = CH('r'), .action = TUI_ACT_CONFIRM_ASK,
	  .arg = TUI_ACT_REJECT, .next = TUI_MODE_CONFIRM },
	{ .key = CH('a'), .action = TUI_ACT_CONFIRM_ASK,
	  .arg = TUI_ACT_APPLY, .next = TUI_MODE_CONFIRM },
	{ .key = CH('R'), .action = TUI_ACT_REVIEW, .next = RV },
	{ .key = CH('t'), .action = TUI_ACT_TIMELINE, .next = TL },
	{ .key = CTRL('l'), .action = TUI_ACT_REDRAW, .next = N },
	{ .key = SP(PTY_KEY_TAB), .action = TUI_ACT_SELECT_ATTENTION,
	  .next = N },
#define ANSWER(c) { .key = CH(c), .action = TUI_ACT_ANSWER_ASK, \
	  .arg = (c) - '0', .next = TUI_MODE_CONFIRM }
	ANSWER('1'), ANSWER('2'), ANSWER('3'), ANSWER('4'), ANSWER('5'),
	ANSWER('6'), ANSWER('7'), ANSWER('8'), ANSWER('9'),
#undef ANSWER
};

/* After the prefix; looked up before normal_table. */
static const struct binding prefix_table[] = {
	{ .key = CH('d'), .action = TUI_ACT_QUIT, .next = N },
	{ .key = SP(PTY_KEY_ESCAPE), .action = TUI_ACT_MODE, .next = N },
};

/* Browsing scrollback. */
static const struct binding scroll_table[] = {
	{ .key = CH('k'), .action = TUI_ACT_SCROLL, .arg = 1, .next = S },
	{ .key = SP(PTY_KEY_UP), .action = TUI_ACT_SCROLL, .arg = 1,
	  .next = S },
	{ .key = CH('j'), .action = TUI_ACT_SCROLL, .arg = -1, .next = S },
	{ .key = SP(PTY_KEY_DOWN), .action = TUI_ACT_SCROLL, .arg = -1,
	  .next = S },
	{ .key = SP(TUI_KEY_WHEEL_UP), .action = TUI_ACT_SCROLL, .arg = 3,
	  .next = S },
	{ .key = SP(TUI_KEY_WHEEL_DOWN), .action = TUI_ACT_SCROLL, .arg = -3,
	  .next = S },
	{ .key = SP(PTY_KEY_PAGEUP), .action = TUI_ACT_SCROLL, .arg = 1,
	  .unit = TUI_SCROLL_PAGE, .next = S },
	{ .key = SP(PTY_KEY_PAGEDOWN), .action = TUI_ACT_SCROLL, .arg = -1,
	  .unit = TUI_SCROLL_PAGE, .next = S },
	{ .key = CH(' '), .action = TUI_ACT_SCROLL, .arg = -1,
	  .unit = TUI_SCROLL_PAGE, .next = S },
	{ .key = CTRL('u'), .action = TUI_ACT_SCROLL, .arg = 1,
	  .unit = TUI_SCROLL_HALF, .next = S },
	{ .key = CTRL('d'), .action = TUI_ACT_SCROLL, .arg = -1,
	  .unit = TUI_SCROLL_HALF, .next = S },
	{ .key = CH('g'), .action = TUI_ACT_SCROLL_TOP, .next = S },
	{ .key = SP(PTY_KEY_HOME), .action = TUI_ACT_SCROLL_TOP, .next = S },
	{ .key = CH('G'), .action = TUI_ACT_SCROLL_BOTTOM, .next = S },
	{ .key = SP(PTY_KEY_END), .action = TUI_ACT_SCROLL_BOTTOM, .next = S },
	{ .key = CH('q'), .action = TUI_ACT_SCROLL_EXIT, .next = N },
	{ .key = SP(PTY_KEY_ESCAPE), .action = TUI_ACT_SCROLL_EXIT, .next = N },
	{ .key = CH('?'), .action = TUI_ACT_HELP, .next = S },
	{ .key = CTRL('l'), .action = TUI_ACT_REDRAW, .next = S },
};

/* The review view (SPEC 7.4): the focused lease's result. */
static const struct binding review_table[] = {
	{ .key = CH('j'), .action = TUI_ACT_VIEW_MOVE, .arg = 1, .next = RV },
	{ .key = SP(PTY_KEY_DOWN), .action = TUI_ACT_VIEW_MOVE, .arg = 1,
	  .next = RV },
	{ .key = CH('k'), .action = TUI_ACT_VIEW_MOVE, .arg = -1, .next = RV },
	{ .key = SP(PTY_KEY_UP), .action = TUI_ACT_VIEW_MOVE, .arg = -1,
	  .next = RV },
	{ .key = SP(TUI_KEY_WHEEL_DOWN), .action = TUI_ACT_VIEW_MOVE,
	  .arg = 3, .next = RV },
	{ .key = SP(TUI_KEY_WHEEL_UP), .action = TUI_ACT_VIEW_MOVE,
	  .arg = -3, .next = RV },
	{ .key = SP(PTY_KEY_PAGEDOWN), .action = TUI_ACT_VIEW_MOVE, .arg = 1,
	  .unit = TUI_SCROLL_PAGE, .next = RV },
	{ .key = SP(PTY_KEY_PAGEUP), .action = TUI_ACT_VIEW_MOVE, .arg = -1,
	  .unit = TUI_SCROLL_PAGE, .next = RV },
	{ .key = CTRL('d'), .action = TUI_ACT_VIEW_MOVE, .arg = 1,
	  .unit = TUI_SCROLL_HALF, .next = RV },
	{ .key = CTRL('u'), .action = TUI_ACT_VIEW_MOVE, .arg = -1,
	  .unit = TUI_SCROLL_HALF, .next = RV },
	{ .key = CH('g'), .action = TUI_ACT_VIEW_TOP, .next = RV },
	{ .key = SP(PTY_KEY_HOME), .action = TUI_ACT_VIEW_TOP, .next = RV },
	{ .key = CH('G'), .action = TUI_ACT_VIEW_BOTTOM, .next = RV },
	{ .key = SP(PTY_KEY_END), .action = TUI_ACT_VIEW_BOTTOM, .next = RV },
	{ .key = CH('n'), .action = TUI_ACT_HUNK_NEXT, .arg = 1, .next = RV },
	{ .key = CH('p'), .action = TUI_ACT_HUNK_NEXT, .arg = -1, .next = RV },
	{ .key = CH(']'), .action = TUI_ACT_FILE_NEXT, .arg = 1, .next = RV },
	{ .key = SP(PTY_KEY_TAB), .action = TUI_ACT_FILE_NEXT, .arg = 1,
	  .next = RV },
	{ .key = CH('['), .action = TUI_ACT_FILE_NEXT, .arg = -1, .next = RV },
	{ .key = CH(' '), .action = TUI_ACT_HUNK_TOGGLE, .next = RV },
	{ .key = CH('a'), .action = TUI_ACT_CONFIRM_ASK,
	  .arg = TUI_ACT_APPLY, .next = TUI_MODE_CONFIRM },
	{ .key = CH('r'), .action = TUI_ACT_CONFIRM_ASK,
	  .arg = TUI_ACT_REJECT, .next = TUI_MODE_CONFIRM },
	{ .key = CH('R'), .action = TUI_ACT_VIEW_RELOAD, .next = RV },
	{ .key = SP(PTY_KEY_RIGHT), .action = TUI_ACT_VIEW_SIDEWAYS, .arg = 1,
	  .next = RV },
	{ .key = SP(PTY_KEY_LEFT), .action = TUI_ACT_VIEW_SIDEWAYS, .arg = -1,
	  .next = RV },
	{ .key = CH('l'), .action = TUI_ACT_VIEW_SIDEWAYS, .arg = 1,
	  .next = RV },
	{ .key = CH('h'), .action = TUI_ACT_VIEW_SIDEWAYS, .arg = -1,
	  .next = RV },
	{ .key = CH('0'), .action = TUI_ACT_VIEW_SIDEWAYS, .arg = 0,
	  .next = RV },
	{ .key = CH('q'), .action = TUI_ACT_VIEW_CLOSE, .next = N },
	{ .key = SP(PTY_KEY_ESCAPE), .action = TUI_ACT_VIEW_CLOSE, .next = N },
	{ .key = CH('?'), .action = TUI_ACT_HELP, .next = RV },
	{ .key = CTRL('l'), .action = TUI_ACT_REDRAW, .next = RV },
};

/* The timeline view: one row per lease (issue 9, the morning look). */
static const struct binding timeline_table[] = {
	{ .key = CH('j'), .action = TUI_ACT_SELECT_NEXT, .next = TL },
	{ .key = SP(PTY_KEY_DOWN), .action = TUI_ACT_SELECT_NEXT, .next = TL },
	{ .key = CH('k'), .action = TUI_ACT_SELECT_PREV, .next = TL },
	{ .key = SP(PTY_KEY_UP), .action = TUI_ACT_SELECT_PREV, .next = TL },
	{ .key = CH('g'), .action = TUI_ACT_SELECT_FIRST, .next = TL },
	{ .key = CH('G'), .action = TUI_ACT_SELECT_LAST, .next = TL },
	{ .key = CH('R'), .action = TUI_ACT_VIEW_RELOAD, .next = TL },
	{ .key = CH('t'), .action = TUI_ACT_VIEW_CLOSE, .next = N },
	{ .key = CH('q'), .action = TUI_ACT_VIEW_CLOSE, .next = N },
	{ .key = SP(PTY_KEY_ESCAPE), .action = TUI_ACT_VIEW_CLOSE, .next = N },
	{ .key = SP(PTY_KEY_ENTER), .action = TUI_ACT_VIEW_CLOSE, .next = N },
	{ .key = CH('?'), .action = TUI_ACT_HELP, .next = TL },
	{ .key = CTRL('l'), .action = TUI_ACT_REDRAW, .next = TL },
};

/* The mode a command leaves unchanged (resolved when it is bound). */
#define STAY TUI_MODE_COUNT

/*
 * What the keymap file can bind (tmux's command names): each is one
 * binding without its key. STAY keeps the mode the key was pressed in.
 */
static const struct {
	const char *name;
	struct binding b;
} commands[] = {
	{ "none", { .action = TUI_ACT_NONE, .next = STAY } },
	{ "select-next", { .action = TUI_ACT_SELECT_NEXT, .next = STAY } },
	{ "select-prev", { .action = TUI_ACT_SELECT_PREV, .next = STAY } },
	{ "select-first", { .action = TUI_ACT_SELECT_FIRST, .next = STAY } },
	{ "select-last", { .action = TUI_ACT_SELECT_LAST, .next = STAY } },
	{ "select-attention", { .action = TUI_ACT_SELECT_ATTENTION,
	  .next = STAY } },
	{ "type", { .action = TUI_ACT_TYPE_START, .next = TUI_MODE_TYPING } },
	{ "quit", { .action = TUI_ACT_QUIT, .next = N } },
	{ "detach", { .action = TUI_ACT_QUIT, .next = N } },
	{ "help", { .action = TUI_ACT_HELP, .next = STAY } },
	{ "dismiss", { .action = TUI_ACT_DISMISS, .next = STAY } },
	{ "detail", { .action = TUI_ACT_DETAIL_TOGGLE, .next = STAY } },
	{ "zoom", { .action = TUI_ACT_ZOOM_TOGGLE, .next = STAY } },
	{ "scrollback", { .action = TUI_ACT_SCROLL, .arg = 0, .next = S } },
	{ "scroll-up", { .action = TUI_ACT_SCROLL, .arg = 1, .next = S } },
	{ "scroll-down", { .action = TUI_ACT_SCROLL, .arg = -1, .next = S } },
	{ "scroll-page-up", { .action = TUI_ACT_SCROLL, .arg = 1,
	  .unit = TUI_SCROLL_PAGE, .next = S } },
	{ "scroll-page-down", { .action = TUI_ACT_SCROLL, .arg = -1,
	  .unit = TUI_SCROLL_PAGE, .next = S } },
	{ "scroll-top", { .action = TUI_ACT_SCROLL_TOP, .next = S } },
	{ "scroll-bottom", { .action = TUI_ACT_SCROLL_BOTTOM, .next = S } },
	{ "scroll-exit", { .action = TUI_ACT_SCROLL_EXIT, .next = N } },
	{ "cancel", { .action = TUI_ACT_CONFIRM_ASK, .arg = TUI_ACT_CANCEL,
	  .next = TUI_MODE_CONFIRM } },
	{ "reject", { .action = TUI_ACT_CONFIRM_ASK, .arg = TUI_ACT_REJECT,
	  .next = TUI_MODE_CONFIRM } },
	{ "apply", { .action = TUI_ACT_CONFIRM_ASK, .arg = TUI_ACT_APPLY,
	  .next = TUI_MODE_CONFIRM } },
	{ "review", { .action = TUI_ACT_REVIEW, .next = RV } },
	{ "timeline", { .action = TUI_ACT_TIMELINE, .next = TL } },
	{ "redraw", { .action = TUI_ACT_REDRAW, .next = STAY } },
	{ "close", { .action = TUI_ACT_VIEW_CLOSE, .next = N } },
	{ "down", { .action = TUI_ACT_VIEW_MOVE, .arg = 1, .next = STAY } },
	{ "up", { .action = TUI_ACT_VIEW_MOVE, .arg = -1, .next = STAY } },
	{ "page-down", { .action = TUI_ACT_VIEW_MOVE, .arg = 1,
	  .unit = TUI_SCROLL_PAGE, .next = STAY } },
	{ "page-up", { .action = TUI_ACT_VIEW_MOVE, .arg = -1,
	  .unit = TUI_SCROLL_PAGE, .next = STAY } },
	{ "top", { .action = TUI_ACT_VIEW_TOP, .next = STAY } },
	{ "bottom", { .action = TUI_ACT_VIEW_BOTTOM, .next = STAY } },
	{ "hunk-next", { .action = TUI_ACT_HUNK_NEXT, .arg = 1,
	  .next = STAY } },
	{ "hunk-prev", { .action = TUI_ACT_HUNK_NEXT, .arg = -1,
	  .next = STAY } },
	{ "file-next", { .action = TUI_ACT_FILE_NEXT, .arg = 1,
	  .next = STAY } },
	{ "file-prev", { .action = TUI_ACT_FILE_NEXT, .arg = -1,
	  .next = STAY } },
	{ "toggle-hunk", { .action = TUI_ACT_HUNK_TOGGLE, .next = STAY } },
	{ "reload", { .action = TUI_ACT_VIEW_RELOAD, .next = STAY } },
	{ "right", { .action = TUI_ACT_VIEW_SIDEWAYS, .arg = 1,
	  .next = STAY } },
	{ "left", { .action = TUI_ACT_VIEW_SIDEWAYS, .arg = -1,
	  .next = STAY } },
	{ "line-start", { .action = TUI_ACT_VIEW_SIDEWAYS, .arg = 0,
	  .next = STAY } },
};

static const char *const table_names[TUI_TABLE_COUNT] = {
	[TUI_TABLE_NORMAL] = "normal",
	[TUI_TABLE_PREFIX] = "prefix",
	[TUI_TABLE_SCROLL] = "scroll",
	[TUI_TABLE_REVIEW] = "review",
	[TUI_TABLE_TIMELINE] = "timeline",
};

#undef N
#undef S
#undef RV
#undef TL

static const struct tui_help_line help_lines[] = {
	{ .keys = "j k Up Down", .what = "move the selection (never types)" },
	{ .keys = "g G Home End", .what = "first / last lease" },
	{ .keys = "Tab", .what = "next lease that needs you (blocked, new "
	  "result)" },
	{ .keys = "1-9", .what = "answer a blocked lease's question (y/n)" },
	{ .keys = "Enter i", .what = "type into the focused agent" },
	{ .prefixed = true, .keys = "Esc", .what = "stop typing" },
	{ .prefixed = true, .keys = NULL,
	  .what = "send the prefix key itself" },
	{ .keys = "[ PgUp PgDn", .what = "browse scrollback (or the wheel)" },
	{ .keys = "g G q", .what = "in scrollback: top, bottom, leave" },
	{ .keys = "d", .what = "detail panel" },
	{ .keys = "z", .what = "zoom the pane" },
	{ .keys = "x", .what = "cancel the selected lease (y/n)" },
	{ .keys = "R", .what = "review its result (diff, checks, receipt)" },
	{ .keys = "a r", .what = "apply / reject its result (y/n)" },

	{ .keys = "C-l", .what = "redraw" },
	{ .keys = "?", .what = "this help" },
	{ .keys = "q", .what = "quit (agents keep running)" },
	{ .prefixed = true, .keys = "d",
	  .what = "detach (agents keep running)" },
	{ .prefixed = true, .keys = "n p", .what = "next / previous lease" },
	{ .prefixed = true, .keys = "[", .what = "browse scrollback" },
	{ .keys = "t", .what = "timeline of every lease (blocked time)" },
	{ .keys = "n p ] [", .what = "in review: next/prev hunk, file" },
	{ .keys = "Space", .what = "in review: drop / keep the hunk" },
	{ .keys = "q Esc", .what = "in review or timeline: close" },
};

static const char *const mode_names[TUI_MODE_COUNT] = {
	[TUI_MODE_NORMAL] = "NORMAL",
	[TUI_MODE_PREFIX] = "PREFIX",
	[TUI_MODE_TYPING] = "TYPING",
	[TUI_MODE_SCROLL] = "SCROLL",
	[TUI_MODE_CONFIRM] = "CONFIRM",
	[TUI_MODE_REVIEW] = "REVIEW",
	[TUI_MODE_TIMELINE] = "TIMELINE",
};

static const char *const action_names[TUI_ACT_COUNT] = {
	[TUI_ACT_NONE] = "none",
	[TUI_ACT_MODE] = "mode",
	[TUI_ACT_QUIT] = "quit",
	[TUI_ACT_SELECT_NEXT] = "select-next",
	[TUI_ACT_SELECT_PREV] = "select-prev",
	[TUI_ACT_SELECT_FIRST] = "select-first",
	[TUI_ACT_SELECT_LAST] = "select-last",
	[TUI_ACT_TYPE_START] = "type-start",
	[TUI_ACT_SEND_KEY] = "send-key",
	[TUI_ACT_HELP] = "help",
	[TUI_ACT_DISMISS] = "dismiss",
	[TUI_ACT_DETAIL_TOGGLE] = "detail-toggle",
	[TUI_ACT_ZOOM_TOGGLE] = "zoom-toggle",
	[TUI_ACT_SCROLL] = "scroll",
	[TUI_ACT_SCROLL_TOP] = "scroll-top",
	[TUI_ACT_SCROLL_BOTTOM] = "scroll-bottom",
	[TUI_ACT_SCROLL_EXIT] = "scroll-exit",
	[TUI_ACT_CONFIRM_ASK] = "confirm-ask",
	[TUI_ACT_CONFIRM_NO] = "confirm-no",
	[TUI_ACT_CANCEL] = "cancel",
	[TUI_ACT_REJECT] = "reject",
	[TUI_ACT_APPLY] = "apply",
	[TUI_ACT_REVIEW] = "review",
	[TUI_ACT_RESIZE] = "resize",
	[TUI_ACT_REDRAW] = "redraw",
	[TUI_ACT_CLICK] = "click",
	[TUI_ACT_TIMELINE] = "timeline",
	[TUI_ACT_VIEW_CLOSE] = "view-close",
	[TUI_ACT_VIEW_MOVE] = "view-move",
	[TUI_ACT_VIEW_TOP] = "view-top",
	[TUI_ACT_VIEW_BOTTOM] = "view-bottom",
	[TUI_ACT_HUNK_NEXT] = "hunk-next",
	[TUI_ACT_FILE_NEXT] = "file-next",
	[TUI_ACT_HUNK_TOGGLE] = "hunk-toggle",
	[TUI_ACT_VIEW_RELOAD] = "view-reload",
	[TUI_ACT_VIEW_SIDEWAYS] = "view-sideways",
	[TUI_ACT_SELECT_ATTENTION] = "select-attention",
	[TUI_ACT_ANSWER_ASK] = "answer-ask",
	[TUI_ACT_ANSWER] = "answer",
};

/* Special key names, as tui_keys_parse reads and tui_keys_name writes. */
static const struct {
	const char *name;
	int code;
} key_names[] = {
	{ "Enter", PTY_KEY_ENTER },
	{ "Tab", PTY_KEY_TAB },
	{ "BSpace", PTY_KEY_BACKSPACE },
	{ "Backspace", PTY_KEY_BACKSPACE },
	{ "Esc", PTY_KEY_ESCAPE },
	{ "Escape", PTY_KEY_ESCAPE },
	{ "Up", PTY_KEY_UP },
	{ "Down", PTY_KEY_DOWN },
	{ "Left", PTY_KEY_LEFT },
	{ "Right", PTY_KEY_RIGHT },
	{ "IC", PTY_KEY_INS },
	{ "Insert", PTY_KEY_INS },
	{ "DC", PTY_KEY_DEL },
	{ "Delete", PTY_KEY_DEL },
	{ "Home", PTY_KEY_HOME },
	{ "End", PTY_KEY_END },
	{ "PgUp", PTY_KEY_PAGEUP },
	{ "PPage", PTY_KEY_PAGEUP },
	{ "PageUp", PTY_KEY_PAGEUP },
	{ "PgDn", PTY_KEY_PAGEDOWN },
	{ "NPage", PTY_KEY_PAGEDOWN },
	{ "PageDown", PTY_KEY_PAGEDOWN },
	{ "WheelUp", TUI_KEY_WHEEL_UP },
	{ "WheelDown", TUI_KEY_WHEEL_DOWN },
	{ "Click", TUI_KEY_CLICK },
	{ "Resize", TUI_KEY_RESIZE },
};

struct tui_key
tui_keys_char(uint32_t cp, unsigned mods)
{
	struct tui_key k = { .code = PTY_KEY_NONE, .cp = cp, .mods = mods };

	/* C-B and C-b are the same key */
	if ((mods & PTY_MOD_CTRL) && cp >= 'A' && cp <= 'Z')
		k.cp = cp - 'A' + 'a';
	return k;
}

struct tui_key
tui_keys_special(int code, unsigned mods)
{
	struct tui_key k = { .code = code, .mods = mods };

	return k;
}

struct tui_key
tui_keys_from_char(uint32_t wc)
{
	static const char c0_tail[] = "\\]^_";	/* 0x1c..0x1f */

	switch (wc) {
	case '\r':
	case '\n':
		return tui_keys_special(PTY_KEY_ENTER, 0);
	case '\t':
		return tui_keys_special(PTY_KEY_TAB, 0);
	case 0x7f:
	case 0x08:
		return tui_keys_special(PTY_KEY_BACKSPACE, 0);
	case 0x1b:
		return tui_keys_special(PTY_KEY_ESCAPE, 0);
	case 0x00:
		return tui_keys_char(' ', PTY_MOD_CTRL);
	default:
		break;
	}
	if (wc >= 0x01 && wc <= 0x1a)
		return tui_keys_char('a' + wc - 1, PTY_MOD_CTRL);
	if (wc >= 0x1c && wc <= 0x1f)
		return tui_keys_char((uint32_t)c0_tail[wc - 0x1c],
		    PTY_MOD_CTRL);
	return tui_keys_char(wc, 0);
}

bool
tui_keys_eq(const struct tui_key *a, const struct tui_key *b)
{
	assert(a != NULL && b != NULL);
	if (a->code != b->code || a->mods != b->mods)
		return false;
	return a->code != PTY_KEY_NONE || a->cp == b->cp;
}

/* Table match: Shift is part of the character ('G'), so ignore it. */
static bool
key_match(const struct tui_key *want, const struct tui_key *got)
{
	unsigned mask = ~(unsigned)PTY_MOD_SHIFT;

	if (want->code != got->code ||
	    (want->mods & mask) != (got->mods & mask))
		return false;
	return want->code != PTY_KEY_NONE || want->cp == got->cp;
}

static const struct binding *
lookup(const struct binding *table, size_t n, const struct tui_key *key)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (key_match(&table[i].key, key))
			return &table[i];
	return NULL;
}

#define LOOKUP(t, k) lookup((t), sizeof(t) / sizeof((t)[0]), (k))

/*
 * A user binding of key in table: true and *out (action NONE for an
 * unbound key) or false when the user did not bind it.
 */
static bool
lookup_user(const struct tui_keys *k, enum tui_table t,
    const struct tui_key *key, enum tui_mode stay, struct binding *out)
{
	size_t i;

	for (i = 0; i < k->nuser; i++) {
		const struct tui_keys_user *u = &k->user[i];

		if (u->table != t || !key_match(&u->key, key))
			continue;
		if (u->cmd < 0) {
			memset(out, 0, sizeof *out);
			out->action = TUI_ACT_NONE;
			out->next = stay;
		} else {
			*out = commands[u->cmd].b;
			if (out->next == STAY)
				out->next = stay;
		}
		out->key = *key;
		return true;
	}
	return false;
}

/* The binding of key in table, user bindings first; NULL for none. */
static const struct binding *
find(const struct tui_keys *k, enum tui_table t, const struct tui_key *key,
    enum tui_mode stay, struct binding *tmp)
{
	if (lookup_user(k, t, key, stay, tmp))
		return tmp->action == TUI_ACT_NONE ? NULL : tmp;
	switch (t) {
	case TUI_TABLE_NORMAL:
		return LOOKUP(normal_table, key);
	case TUI_TABLE_PREFIX:
		return LOOKUP(prefix_table, key);
	case TUI_TABLE_SCROLL:
		return LOOKUP(scroll_table, key);
	case TUI_TABLE_REVIEW:
		return LOOKUP(review_table, key);
	case TUI_TABLE_TIMELINE:
		return LOOKUP(timeline_table, key);
	case TUI_TABLE_COUNT:
		break;
	}
	return NULL;
}

void
tui_keys_init(struct tui_keys *k)
{
	assert(k != NULL);
	memset(k, 0, sizeof *k);
	k->mode = TUI_MODE_NORMAL;
	k->prefix_from = TUI_MODE_NORMAL;
	k->scroll_from = TUI_MODE_NORMAL;
	k->confirm_from = TUI_MODE_NORMAL;
	k->pending = TUI_ACT_NONE;
	k->prefix = tui_keys_char('b', PTY_MOD_CTRL);
}

void
tui_keys_set_mode(struct tui_keys *k, enum tui_mode mode)
{
	assert(k != NULL && mode < TUI_MODE_COUNT);
	k->mode = mode;
	if (mode == TUI_MODE_SCROLL)
		k->scroll_from = TUI_MODE_NORMAL;
	if (mode != TUI_MODE_CONFIRM)
		k->pending = TUI_ACT_NONE;
}

int
tui_keys_set_prefix(struct tui_keys *k, const struct tui_key *key)
{
	assert(k != NULL);
	if (key == NULL)
		return -EINVAL;
	if (key->code == PTY_KEY_NONE ? key->cp == 0 || key->cp > 0x10ffff ||
	    tui_escape_cp_unsafe(key->cp) :
	    key->code <= PTY_KEY_NONE || key->code >= PTY_KEY_MAX)
		return -EINVAL;
	k->prefix = *key;
	return 0;
}

void
tui_keys_set_altscreen(struct tui_keys *k, bool on)
{
	assert(k != NULL);
	k->pane_altscreen = on;
}

/* Carry out a table binding from the current mode. */
static void
apply(struct tui_keys *k, const struct binding *b, struct tui_act *out)
{
	out->action = b->action;
	out->arg = b->arg;
	out->unit = b->unit;
	switch (b->action) {
	case TUI_ACT_ANSWER_ASK:
	case TUI_ACT_CONFIRM_ASK:
		k->pending = b->action == TUI_ACT_ANSWER_ASK ? TUI_ACT_ANSWER :
		    (enum tui_action)b->arg;
		k->pending_arg = b->action == TUI_ACT_ANSWER_ASK ? b->arg : 0;
		k->confirm_from = k->mode == TUI_MODE_REVIEW ||
		    k->mode == TUI_MODE_TIMELINE ? k->mode : TUI_MODE_NORMAL;
		k->mode = TUI_MODE_CONFIRM;
		return;
	case TUI_ACT_SCROLL:
	case TUI_ACT_SCROLL_TOP:
	case TUI_ACT_SCROLL_BOTTOM:
		if (k->mode != TUI_MODE_SCROLL)
			k->scroll_from = TUI_MODE_NORMAL;
		k->mode = TUI_MODE_SCROLL;
		return;
	case TUI_ACT_SCROLL_EXIT:
		k->mode = k->scroll_from;
		k->scroll_from = TUI_MODE_NORMAL;
		return;
	default:
		k->mode = b->next;
		return;
	}
}

static void
feed_typing(struct tui_keys *k, const struct tui_key *key,
    struct tui_act *out)
{
	int dir;

	if (key->code == TUI_KEY_WHEEL_UP || key->code == TUI_KEY_WHEEL_DOWN) {
		dir = key->code == TUI_KEY_WHEEL_UP ? 1 : -1;
		if (k->pane_altscreen) {
			/* full-screen programs scroll themselves */
			out->action = TUI_ACT_SEND_KEY;
			out->key = tui_keys_special(dir > 0 ? PTY_KEY_UP :
			    PTY_KEY_DOWN, 0);
			out->arg = 3;
		} else if (dir > 0) {
			out->action = TUI_ACT_SCROLL;
			out->arg = 3;
			k->mode = TUI_MODE_SCROLL;
			k->scroll_from = TUI_MODE_TYPING;
		}
		return;
	}
	if (key->code == TUI_KEY_CLICK) {
		out->action = TUI_ACT_CLICK;
		out->key = *key;
		return;
	}
	out->action = TUI_ACT_SEND_KEY;
	out->key = *key;
	out->arg = 1;
}

static void
feed_prefix(struct tui_keys *k, const struct tui_key *key,
    struct tui_act *out)
{
	const struct binding *b;
	struct binding tmp;

	if (tui_keys_eq(key, &k->prefix)) {
		if (k->prefix_from == TUI_MODE_TYPING) {
			/* C-b C-b: the agent gets a C-b, typing goes on */
			out->action = TUI_ACT_SEND_KEY;
			out->key = k->prefix;
			out->arg = 1;
			k->mode = TUI_MODE_TYPING;
		} else {
			out->action = TUI_ACT_MODE;
			k->mode = TUI_MODE_NORMAL;
		}
		return;
	}
	/* from PREFIX every command, known or not, lands in NORMAL */
	k->mode = TUI_MODE_NORMAL;
	if ((b = find(k, TUI_TABLE_PREFIX, key, TUI_MODE_NORMAL, &tmp)) ==
	    NULL && !lookup_user(k, TUI_TABLE_PREFIX, key, TUI_MODE_NORMAL,
	    &tmp))
		b = find(k, TUI_TABLE_NORMAL, key, TUI_MODE_NORMAL, &tmp);
	if (b != NULL) {
		apply(k, b, out);
		return;
	}
	out->action = TUI_ACT_MODE;
}

static void
feed_confirm(struct tui_keys *k, const struct tui_key *key,
    struct tui_act *out)
{
	if (key->code == PTY_KEY_NONE && (key->mods & ~PTY_MOD_SHIFT) == 0 &&
	    (key->cp == 'y' || key->cp == 'Y')) {
		out->action = k->pending;
		out->arg = k->pending_arg;
	} else
		out->action = TUI_ACT_CONFIRM_NO;	/* anything else: no */
	k->pending = TUI_ACT_NONE;
	k->pending_arg = 0;
	k->mode = k->confirm_from;
	k->confirm_from = TUI_MODE_NORMAL;
}

enum tui_action
tui_keys_feed(struct tui_keys *k, const struct tui_key *key,
    struct tui_act *out)
{
	const struct binding *b;
	struct binding tmp;
	enum tui_mode before;
	enum tui_table t;

	assert(k != NULL && key != NULL && out != NULL);
	memset(out, 0, sizeof *out);
	out->action = TUI_ACT_NONE;
	before = k->mode;
	if (key->code == TUI_KEY_RESIZE) {
		out->action = TUI_ACT_RESIZE;	/* in every mode, no change */
		return out->action;
	}
	switch (k->mode) {
	case TUI_MODE_CONFIRM:
		feed_confirm(k, key, out);
		break;
	case TUI_MODE_PREFIX:
		feed_prefix(k, key, out);
		break;
	case TUI_MODE_TYPING:
	case TUI_MODE_NORMAL:
	case TUI_MODE_SCROLL:
	case TUI_MODE_REVIEW:
	case TUI_MODE_TIMELINE:
		if (tui_keys_eq(key, &k->prefix)) {
			k->prefix_from = k->mode;
			k->mode = TUI_MODE_PREFIX;
			out->action = TUI_ACT_MODE;
			break;
		}
		if (k->mode == TUI_MODE_TYPING) {
			feed_typing(k, key, out);
			break;
		}
		if (key->code == TUI_KEY_CLICK) {
			out->action = TUI_ACT_CLICK;
			out->key = *key;
			break;
		}
		t = k->mode == TUI_MODE_NORMAL ? TUI_TABLE_NORMAL :
		    k->mode == TUI_MODE_SCROLL ? TUI_TABLE_SCROLL :
		    k->mode == TUI_MODE_REVIEW ? TUI_TABLE_REVIEW :
		    TUI_TABLE_TIMELINE;
		b = find(k, t, key, k->mode, &tmp);
		if (b != NULL)
			apply(k, b, out);
		break;
	case TUI_MODE_COUNT:
		assert(!"bad mode");
		break;
	}
	out->mode_changed = k->mode != before;
	return out->action;
}

const char *
tui_keys_mode_name(enum tui_mode mode)
{
	if ((unsigned)mode >= TUI_MODE_COUNT)
		return "?";
	return mode_names[mode];
}

const char *
tui_keys_action_name(enum tui_action a)
{
	if ((unsigned)a >= TUI_ACT_COUNT || action_names[a] == NULL)
		return "?";
	return action_names[a];
}

size_t
tui_keys_hints(const struct tui_keys *k, char *buf, size_t bufsz)
{
	char p[32];
	int n = 0;

	assert(k != NULL && buf != NULL && bufsz > 0);
	tui_keys_name(&k->prefix, p, sizeof p);
	switch (k->mode) {
	case TUI_MODE_NORMAL:
		n = snprintf(buf, bufsz, "j/k move  Tab needs you  Enter type  "
		    "[ scroll  d detail  x cancel  R review  ? help  q quit");
		break;
	case TUI_MODE_PREFIX:
		n = snprintf(buf, bufsz, "%s: d detach  [ scroll  n/p next/prev"
		    "  ? help  Esc back", p);
		break;
	case TUI_MODE_TYPING:
		n = snprintf(buf, bufsz, "keys go to the agent  %s Esc stop  "
		    "%s [ scroll  %s d detach", p, p, p);
		break;
	case TUI_MODE_SCROLL:
		n = snprintf(buf, bufsz, "k/j line  PgUp/PgDn page  g/G "
		    "top/bottom  q back");
		break;
	case TUI_MODE_CONFIRM:
		n = snprintf(buf, bufsz, "y yes  any other key no");
		break;
	case TUI_MODE_REVIEW:
		n = snprintf(buf, bufsz, "j/k move  h/l side  n/p hunk  ]/[ "
		    "file  Space drop/keep  a apply  r reject  q close");
		break;
	case TUI_MODE_TIMELINE:
		n = snprintf(buf, bufsz, "j/k move  R reload  t/q close  ? "
		    "help");
		break;
	case TUI_MODE_COUNT:
		buf[0] = '\0';
		break;
	}
	if (n < 0)
		n = 0;
	return (size_t)n < bufsz ? (size_t)n : bufsz - 1;
}

const char *
tui_keys_table_name(enum tui_table t)
{
	if ((unsigned)t >= TUI_TABLE_COUNT)
		return "?";
	return table_names[t];
}

int
tui_keys_table_from_name(const char *name)
{
	for (int i = 0; name != NULL && i < TUI_TABLE_COUNT; i++)
		if (strcmp(name, table_names[i]) == 0)
			return i;
	return -1;
}

int
tui_keys_command_find(const char *name)
{
	for (size_t i = 0; name != NULL && i < sizeof commands /
	    sizeof commands[0]; i++)
		if (strcmp(name, commands[i].name) == 0)
			return (int)i;
	return -1;
}

const char *
tui_keys_command_name(int cmd)
{
	if (cmd < 0 || (size_t)cmd >= sizeof commands / sizeof commands[0])
		return "none";
	return commands[cmd].name;
}

size_t
tui_keys_command_count(void)
{
	return sizeof commands / sizeof commands[0];
}

int
tui_keys_bind(struct tui_keys *k, enum tui_table t, const struct tui_key *key,
    int cmd)
{
	struct tui_key probe;
	size_t i;

	assert(k != NULL);
	if (key == NULL || (unsigned)t >= TUI_TABLE_COUNT || cmd < -1 ||
	    cmd >= (int)tui_keys_command_count())
		return -EINVAL;
	/* the prefix always means the prefix (it is how typing stops) */
	if (tui_keys_eq(key, &k->prefix) || key->code == TUI_KEY_RESIZE)
		return -EINVAL;
	probe = *key;
	for (i = 0; i < k->nuser; i++) {
		if (k->user[i].table == t && key_match(&k->user[i].key,
		    &probe)) {
			k->user[i].cmd = cmd;
			return 0;
		}
	}
	if (k->nuser >= TUI_KEYS_USER_MAX)
		return -ENOSPC;
	k->user[k->nuser].table = t;
	k->user[k->nuser].cmd = cmd;
	k->user[k->nuser].key = probe;
	k->nuser++;
	return 0;
}

void
tui_keys_unbind_all(struct tui_keys *k)
{
	assert(k != NULL);
	k->nuser = 0;
}

const struct tui_help_line *
tui_keys_help(size_t *n)
{
	assert(n != NULL);
	*n = sizeof help_lines / sizeof help_lines[0];
	return help_lines;
}

int
tui_keys_parse(const char *s, struct tui_key *out)
{
	unsigned mods = 0;
	uint32_t cp;
	size_t i;
	int n;

	assert(out != NULL);
	if (s == NULL || *s == '\0')
		return -EINVAL;
	for (;;) {
		if (s[0] == '^' && s[1] != '\0') {
			mods |= PTY_MOD_CTRL;
			s++;
		} else if (s[0] != '\0' && s[1] == '-' && s[2] != '\0' &&
		    strchr("CcMmSs", s[0]) != NULL) {
			mods |= s[0] == 'C' || s[0] == 'c' ? PTY_MOD_CTRL :
			    s[0] == 'M' || s[0] == 'm' ? PTY_MOD_ALT :
			    PTY_MOD_SHIFT;
			s += 2;
		} else
			break;
	}
	for (i = 0; i < sizeof key_names / sizeof key_names[0]; i++) {
		if (strcasecmp(s, key_names[i].name) == 0) {
			*out = tui_keys_special(key_names[i].code, mods);
			return 0;
		}
	}
	if (strcasecmp(s, "Space") == 0) {
		*out = tui_keys_char(' ', mods);
		return 0;
	}
	if ((s[0] == 'F' || s[0] == 'f') && s[1] >= '1' && s[1] <= '9') {
		n = s[1] - '0';
		if (s[2] >= '0' && s[2] <= '9' && s[3] == '\0')
			n = n * 10 + (s[2] - '0');
		else if (s[2] != '\0')
			return -EINVAL;
		if (n < 1 || n > 12)
			return -EINVAL;
		*out = tui_keys_special(PTY_KEY_F1 + n - 1, mods);
		return 0;
	}
	n = tui_escape_utf8_decode(s, strlen(s), &cp);
	if (n < 0 || s[n] != '\0' || tui_escape_cp_unsafe(cp))
		return -EINVAL;
	if ((mods & PTY_MOD_CTRL) && (cp < 0x20 || cp > 0x7e))
		return -EINVAL;
	*out = tui_keys_char(cp, mods);
	return 0;
}

size_t
tui_keys_name(const struct tui_key *key, char *buf, size_t bufsz)
{
	char ch[8];
	const char *name = NULL;
	size_t i, len;
	int n;

	assert(key != NULL && buf != NULL && bufsz > 0);
	if (key->code == PTY_KEY_NONE) {
		if (key->cp == ' ')
			name = "Space";
		else if (key->cp <= 0x10ffff &&
		    !tui_escape_cp_unsafe(key->cp)) {
			len = tui_escape_utf8_encode(key->cp, ch);
			ch[len] = '\0';
			name = ch;
		} else
			name = "?";
	} else if (key->code >= PTY_KEY_F1 && key->code <= PTY_KEY_F12) {
		snprintf(ch, sizeof ch, "F%u",
		    (unsigned)(key->code - PTY_KEY_F1 + 1) % 100u);
		name = ch;
	} else {
		for (i = 0; i < sizeof key_names / sizeof key_names[0]; i++) {
			if (key_names[i].code == key->code) {
				name = key_names[i].name;
				break;
			}
		}
		if (name == NULL)
			name = "?";
	}
	n = snprintf(buf, bufsz, "%s%s%s%s",
	    key->mods & PTY_MOD_CTRL ? "C-" : "",
	    key->mods & PTY_MOD_ALT ? "M-" : "",
	    key->mods & PTY_MOD_SHIFT ? "S-" : "", name);
	if (n < 0)
		return 0;
	return (size_t)n < bufsz ? (size_t)n : bufsz - 1;
}
