/*
 * surface_curses.c: the console's terminal, the only file that includes
 * <curses.h> (STYLE A): a struct tui_surface over ncursesw (colour pairs
 * allocated on demand for 8/16/256 colours, direct RGB on direct-colour
 * terminals), keys read without waiting and turned into struct tui_key
 * (Alt as an ESC prefix, the mouse wheel, resize), and the set-up and
 * restore of the terminal. It never emits a title, a bell or a clipboard
 * sequence (SPEC 4.7): only what curses draws.
 */
#include <errno.h>
#include <langinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <wchar.h>

#ifndef __STDC_ISO_10646__
#error "wchar_t must hold Unicode code points"
#endif

#include <curses.h>

#include "tui/console/console_int.h"

#define CURSES_ESCDELAY_MS 25	/* a lone ESC waits this long for more */
#define CURSES_WHOLE_MAX 256	/* cells written again whole, at most */

/*
 * A cell with more combining marks than a cchar_t holds (CCHARW_MAX wide
 * characters: the base and four marks; the model keeps up to ten, as
 * tmux). curses draws it cut; after each update it is written again whole
 * (put_whole), as curses would have drawn it: colour numbers as curses
 * has them (-1 the default), curses attributes.
 */
struct whole_cell {
	int x, y, width;
	int fg, bg;
	attr_t a;
	char text[4 * PTY_CELL_MAXCP + 1];
};

struct tui_curses {
	SCREEN *scr;
	struct tui_surface surf;
	enum tui_colors colors;
	bool direct;		/* colour numbers are 0xRRGGBB */
	bool utf8;		/* the locale can show any character */
	bool active;		/* curses owns the terminal */
	int cur_x, cur_y;
	bool cur_visible, cur_shown;
	struct whole_cell whole[CURSES_WHOLE_MAX];
	int nwhole;
};

/* ---- colours and attributes --------------------------------------------- */

/* A curses colour number for a packed PTY colour (-1: the default). */
static int
curses_color(const struct tui_curses *t, uint32_t c)
{
	uint8_t rgb[3];
	int v;

	switch (PTY_COLOR_KIND(c)) {
	case PTY_COLOR_KIND_INDEXED:
		v = (int)(c & 0xffu);
		if (t->direct && v >= 8) {
			tui_theme_index_rgb((unsigned)v, rgb);
			v = rgb[0] << 16 | rgb[1] << 8 | rgb[2];
			return v < 8 ? 8 : v;	/* 0..7 mean the ANSI colours */
		}
		return v < COLORS ? v : -1;
	case PTY_COLOR_KIND_RGB:
		if (t->direct) {
			v = (int)(c & 0xffffffu);
			return v < 8 ? 8 : v;
		}
		/* draw.c degrades already; this only guards a stray RGB */
		c = tui_theme_degrade(c, COLORS >= 256 ? TUI_COLORS_256 :
		    COLORS >= 16 ? TUI_COLORS_16 : TUI_COLORS_8);
		v = (int)(c & 0xffu);
		return PTY_COLOR_KIND(c) == PTY_COLOR_KIND_INDEXED &&
		    v < COLORS ? v : -1;
	default:
		return -1;
	}
}

static int
curses_pair(const struct tui_curses *t, const struct tui_style *st)
{
	int fg, bg, pair;

	if (t->colors == TUI_COLORS_NONE)
		return 0;
	fg = curses_color(t, st->fg);
	bg = curses_color(t, st->bg);
	if (fg == -1 && bg == -1)
		return 0;
	/* ncurses keeps the pairs and recycles the oldest when full. */
	pair = alloc_pair(fg, bg);
	return pair < 0 ? 0 : pair;
}

static attr_t
curses_attrs(const struct tui_style *st)
{
	attr_t a = A_NORMAL;

	if (st->attrs & PTY_ATTR_BOLD)
		a |= A_BOLD;
	if (st->attrs & PTY_ATTR_FAINT)
		a |= A_DIM;
	if (st->attrs & PTY_ATTR_UNDERLINE)
		a |= A_UNDERLINE;
	if (st->attrs & PTY_ATTR_ITALIC)
		a |= A_ITALIC;
	if (st->attrs & PTY_ATTR_BLINK)
		a |= A_BLINK;
	if (st->attrs & PTY_ATTR_REVERSE)
		a |= A_REVERSE;
	return a;
}

/* ---- the surface -------------------------------------------------------- */

/* Box drawing and the ellipsis when the locale cannot show them. */
static bool
put_fallback(struct tui_curses *t, int x, int y, wchar_t wc, int width,
    attr_t a, int pair)
{
	chtype ch;

	(void)t;
	switch (wc) {
	case 0x2502:
		ch = ACS_VLINE;
		break;
	case 0x2500:
		ch = ACS_HLINE;
		break;
	case 0x2026:
		ch = '~';
		break;
	default:
		ch = wc >= 0x20 && wc < 0x7f ? (chtype)wc : '?';
		break;
	}
	wattr_set(stdscr, a, 0, &pair);
	mvwaddch(stdscr, y, x, ch);
	if (width == 2)
		waddch(stdscr, '?');
	wattr_set(stdscr, A_NORMAL, 0, NULL);
	return true;
}

/* Forget the cells written again whole that [x, x + width) of row y covers. */
static void
whole_forget(struct tui_curses *t, int x, int y, int width)
{
	int i, k = 0;

	for (i = 0; i < t->nwhole; i++) {
		const struct whole_cell *e = &t->whole[i];

		if (e->y == y && e->x < x + width && x < e->x + e->width)
			continue;
		t->whole[k++] = *e;
	}
	t->nwhole = k;
}

/* Remember a cell curses cuts (n > CCHARW_MAX), to write it again whole. */
static void
whole_keep(struct tui_curses *t, int x, int y, int width, const char *utf8,
    size_t len, const struct tui_style *st)
{
	struct whole_cell *e;

	if (t->nwhole == CURSES_WHOLE_MAX || len >= sizeof e->text)
		return;		/* past the cap: this cell stays cut */
	e = &t->whole[t->nwhole++];
	e->x = x;
	e->y = y;
	e->width = width;
	e->a = curses_attrs(st);
	e->fg = t->colors == TUI_COLORS_NONE ? -1 : curses_color(t, st->fg);
	e->bg = t->colors == TUI_COLORS_NONE ? -1 : curses_color(t, st->bg);
	memcpy(e->text, utf8, len);
	e->text[len] = '\0';
}

static void
surf_put_cell(void *ud, int x, int y, const char *utf8, int width,
    const struct tui_style *st)
{
	struct tui_curses *t = ud;
	wchar_t wch[PTY_CELL_MAXCP + 1];
	size_t len = strlen(utf8), off = 0, n = 0;
	attr_t a = curses_attrs(st);
	int pair = curses_pair(t, st), k;
	uint32_t cp;
	cchar_t cc;

	if (x < 0 || y < 0 || y >= LINES || x + width > COLS || len == 0)
		return;
	/*
	 * draw.c always hands over UTF-8, whatever the locale; glibc's
	 * wchar_t is a code point (__STDC_ISO_10646__), so decode it here
	 * rather than through the locale.
	 */
	while (off < len && n < PTY_CELL_MAXCP &&
	    (k = tui_escape_utf8_decode(utf8 + off, len - off, &cp)) > 0) {
		wch[n++] = (wchar_t)cp;
		off += (size_t)k;
	}
	if (n == 0)
		wch[n++] = L'?';
	if (st->attrs & PTY_ATTR_CONCEAL) {
		/* Drawn as blanks: the text never reaches the terminal. */
		wch[0] = L' ';
		n = 1;
		if (width == 2 && x + 1 < COLS)
			surf_put_cell(ud, x + 1, y, " ", 1, st);
	}
	whole_forget(t, x, y, width);
	if (n > CCHARW_MAX) {
		/* ncurses' limit: the whole cell is written after the update. */
		if (t->utf8)
			whole_keep(t, x, y, width, utf8, off, st);
		n = CCHARW_MAX;
	}
	wch[n] = L'\0';
	if (!t->utf8 && (wch[0] >= 0x7f || n > 1)) {
		put_fallback(t, x, y, wch[0], width, a, pair);
		return;
	}
	if (setcchar(&cc, wch, a, 0, &pair) == ERR) {
		wch[0] = L'?';
		wch[1] = L'\0';
		if (setcchar(&cc, wch, a, 0, &pair) == ERR)
			return;
	}
	mvwadd_wch(stdscr, y, x, &cc);
}

static void
surf_clear(void *ud)
{
	struct tui_curses *t = ud;

	t->nwhole = 0;
	werase(stdscr);
}

static void
surf_set_cursor(void *ud, int x, int y, bool visible)
{
	struct tui_curses *t = ud;

	t->cur_x = x;
	t->cur_y = y;
	t->cur_visible = visible;
}

static void
surf_size(void *ud, int *w, int *h)
{
	(void)ud;
	getmaxyx(stdscr, *h, *w);
}

static const struct tui_surface_ops curses_ops = {
	.put_cell = surf_put_cell,
	.clear = surf_clear,
	.set_cursor = surf_set_cursor,
	.size = surf_size,
};

/* ---- set-up and restore ------------------------------------------------- */

static void
setup_colors(struct tui_curses *t)
{
	t->colors = TUI_COLORS_NONE;
	if (!has_colors() || start_color() == ERR)
		return;
	use_default_colors();
	t->colors = tui_theme_colors_detect(COLORS, getenv("COLORTERM"),
	    getenv("NO_COLOR"));
	/*
	 * Curses sends 24-bit colour only through a direct-colour terminfo
	 * entry (TERM=xterm-direct...); elsewhere RGB is degraded to the
	 * nearest of the palette, which never redefines the operator's
	 * palette entries.
	 */
	t->direct = COLORS >= 0x1000000;
	if (t->colors == TUI_COLORS_TRUE && !t->direct)
		t->colors = COLORS >= 256 ? TUI_COLORS_256 : COLORS >= 16 ?
		    TUI_COLORS_16 : TUI_COLORS_8;
}

int
tui_surface_curses_open(struct tui_curses **out, char *err, size_t errsz)
{
	struct tui_curses *t;
	const char *cs;

	*out = NULL;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		snprintf(err, errsz, "the console needs a terminal");
		return -ENOTTY;
	}
	if ((t = calloc(1, sizeof *t)) == NULL) {
		snprintf(err, errsz, "out of memory");
		return -ENOMEM;
	}
	cs = nl_langinfo(CODESET);
	t->utf8 = cs != NULL && (strcmp(cs, "UTF-8") == 0 ||
	    strcmp(cs, "utf8") == 0);
	if ((t->scr = newterm(NULL, stdout, stdin)) == NULL) {
		snprintf(err, errsz, "cannot use terminal type '%.64s'",
		    getenv("TERM") ? getenv("TERM") : "(unset)");
		free(t);
		return -EIO;
	}
	set_term(t->scr);
	t->active = true;
	raw();
	noecho();
	nonl();
	intrflush(stdscr, FALSE);
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	/*
	 * No look for typed keys in the middle of each update (two polls of
	 * the terminal per frame): the loop reads every key as it comes.
	 */
	typeahead(-1);
	meta(stdscr, TRUE);
	leaveok(stdscr, FALSE);
	scrollok(stdscr, FALSE);
	set_escdelay(CURSES_ESCDELAY_MS);
	curs_set(0);
	setup_colors(t);
	mouseinterval(0);
	mousemask(BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
	t->surf.ops = &curses_ops;
	t->surf.ud = t;
	*out = t;
	return 0;
}

void
tui_surface_curses_restore(struct tui_curses *t)
{
	if (t == NULL || !t->active)
		return;
	t->active = false;
	mousemask(0, NULL);
	curs_set(1);
	endwin();
}

void
tui_surface_curses_close(struct tui_curses *t)
{
	if (t == NULL)
		return;
	tui_surface_curses_restore(t);
	delscreen(t->scr);
	free(t);
}

const struct tui_surface *
tui_surface_curses_surface(struct tui_curses *t)
{
	return &t->surf;
}

enum tui_colors
tui_surface_curses_colors(const struct tui_curses *t)
{
	return t->colors;
}

int
tui_surface_curses_input_fd(const struct tui_curses *t)
{
	(void)t;
	return STDIN_FILENO;
}

void
tui_surface_curses_resize(struct tui_curses *t)
{
	struct winsize ws;

	if (!t->active)
		return;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 &&
	    ws.ws_col > 0)
		resizeterm(ws.ws_row, ws.ws_col);
	t->nwhole = 0;
}

bool
tui_surface_curses_stale(const struct tui_curses *t)
{
	struct winsize ws;

	return t != NULL && t->active &&
	    ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 &&
	    ws.ws_col > 0 && (ws.ws_row != LINES || ws.ws_col != COLS);
}

void
tui_surface_curses_invalidate(struct tui_curses *t)
{
	(void)t;
	clearok(curscr, TRUE);
}

/* Append terminfo string s (absent or cancelled: nothing) to b. */
static void
cap_put(char *b, size_t bsz, size_t *n, const char *s)
{
	size_t len;

	if (s == NULL || s == (const char *)-1)
		return;
	len = strlen(s);
	if (*n + len <= bsz) {
		memcpy(b + *n, s, len);
		*n += len;
	}
}

static void
out_all(const char *b, size_t n)
{
	ssize_t w;

	while (n > 0) {
		w = write(STDOUT_FILENO, b, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		b += w;
		n -= (size_t)w;
	}
}

/*
 * The cells curses cut (whole_keep) written again whole, once its update
 * is out: straight to the terminal, each at its place with its looks,
 * between a cursor save and restore (terminfo sc and rc: the position,
 * pen and character set come back as curses left them, so curses' idea
 * of the terminal stays true). Again after every update, since curses
 * may reprint an unchanged cell to save a cursor move. A terminal
 * without sc, rc or cup keeps the cut cells: its marks past the fourth
 * are not shown.
 */
static void
put_whole(struct tui_curses *t)
{
	static const struct {
		attr_t a;
		const char *cap;
	} looks[] = {
		{ A_BOLD, "bold" }, { A_DIM, "dim" }, { A_ITALIC, "sitm" },
		{ A_UNDERLINE, "smul" }, { A_BLINK, "blink" },
		{ A_REVERSE, "rev" },
	};
	const char *sc = tigetstr("sc"), *rc = tigetstr("rc");
	const char *cup = tigetstr("cup"), *sgr0 = tigetstr("sgr0");
	const char *setaf = tigetstr("setaf"), *setab = tigetstr("setab");
	char b[4096];
	size_t n = 0, k;
	int i;

	if (sc == NULL || sc == (char *)-1 || rc == NULL || rc == (char *)-1 ||
	    cup == NULL || cup == (char *)-1)
		return;
	cap_put(b, sizeof b, &n, sc);
	for (i = 0; i < t->nwhole; i++) {
		const struct whole_cell *e = &t->whole[i];

		if (n > sizeof b - 512) {
			out_all(b, n);
			n = 0;
		}
		cap_put(b, sizeof b, &n, tiparm(cup, e->y, e->x));
		cap_put(b, sizeof b, &n, sgr0);
		for (k = 0; k < sizeof looks / sizeof looks[0]; k++)
			if (e->a & looks[k].a)
				cap_put(b, sizeof b, &n, tigetstr(looks[k].cap));
		if (e->fg >= 0 && setaf != NULL && setaf != (char *)-1)
			cap_put(b, sizeof b, &n, tiparm(setaf, e->fg));
		if (e->bg >= 0 && setab != NULL && setab != (char *)-1)
			cap_put(b, sizeof b, &n, tiparm(setab, e->bg));
		cap_put(b, sizeof b, &n, e->text);
	}
	cap_put(b, sizeof b, &n, rc);
	out_all(b, n);
}

void
tui_surface_curses_flush(struct tui_curses *t)
{
	if (!t->active)
		return;
	/*
	 * The cursor always ends where the pane put it (or the pane's corner
	 * when hidden), so a list or status update elsewhere never moves the
	 * operator's cursor (SPEC 4.2).
	 */
	if (t->cur_y >= 0 && t->cur_y < LINES && t->cur_x >= 0 &&
	    t->cur_x < COLS)
		wmove(stdscr, t->cur_y, t->cur_x);
	if (t->cur_visible != t->cur_shown) {
		curs_set(t->cur_visible ? 1 : 0);
		t->cur_shown = t->cur_visible;
	}
	wnoutrefresh(stdscr);
	doupdate();
	if (t->nwhole > 0)
		put_whole(t);
}

/* ---- keys --------------------------------------------------------------- */

/* Modifiers of xterm's extended key names ("kUP5"): 1 + bits. */
static unsigned
xterm_mods(int n)
{
	unsigned m = 0;

	n -= 1;
	if (n & 1)
		m |= PTY_MOD_SHIFT;
	if (n & 2)
		m |= PTY_MOD_ALT;
	if (n & 4)
		m |= PTY_MOD_CTRL;
	return m;
}

/* Keys ncurses only knows by their terminfo name (modified arrows). */
static bool
key_by_name(int code, struct tui_key *out)
{
	static const struct {
		const char *name;
		int key;
	} names[] = {
		{ "kUP", PTY_KEY_UP }, { "kDN", PTY_KEY_DOWN },
		{ "kLFT", PTY_KEY_LEFT }, { "kRIT", PTY_KEY_RIGHT },
		{ "kHOM", PTY_KEY_HOME }, { "kEND", PTY_KEY_END },
		{ "kDC", PTY_KEY_DEL }, { "kIC", PTY_KEY_INS },
		{ "kPRV", PTY_KEY_PAGEUP }, { "kNXT", PTY_KEY_PAGEDOWN },
	};
	const char *kn = keyname(code);
	size_t i, l;

	if (kn == NULL)
		return false;
	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		l = strlen(names[i].name);
		if (strncmp(kn, names[i].name, l) == 0 && kn[l] >= '2' &&
		    kn[l] <= '8' && kn[l + 1] == '\0') {
			*out = tui_keys_special(names[i].key,
			    xterm_mods(kn[l] - '0'));
			return true;
		}
	}
	return false;
}

static bool
key_special(int code, struct tui_key *out)
{
	static const struct {
		int curses;
		int key;
		unsigned mods;
	} map[] = {
		{ KEY_UP, PTY_KEY_UP, 0 },
		{ KEY_DOWN, PTY_KEY_DOWN, 0 },
		{ KEY_LEFT, PTY_KEY_LEFT, 0 },
		{ KEY_RIGHT, PTY_KEY_RIGHT, 0 },
		{ KEY_HOME, PTY_KEY_HOME, 0 },
		{ KEY_END, PTY_KEY_END, 0 },
		{ KEY_PPAGE, PTY_KEY_PAGEUP, 0 },
		{ KEY_NPAGE, PTY_KEY_PAGEDOWN, 0 },
		{ KEY_IC, PTY_KEY_INS, 0 },
		{ KEY_DC, PTY_KEY_DEL, 0 },
		{ KEY_BACKSPACE, PTY_KEY_BACKSPACE, 0 },
		{ KEY_ENTER, PTY_KEY_ENTER, 0 },
		{ KEY_BTAB, PTY_KEY_TAB, PTY_MOD_SHIFT },
		{ KEY_SR, PTY_KEY_UP, PTY_MOD_SHIFT },
		{ KEY_SF, PTY_KEY_DOWN, PTY_MOD_SHIFT },
		{ KEY_SLEFT, PTY_KEY_LEFT, PTY_MOD_SHIFT },
		{ KEY_SRIGHT, PTY_KEY_RIGHT, PTY_MOD_SHIFT },
		{ KEY_SHOME, PTY_KEY_HOME, PTY_MOD_SHIFT },
		{ KEY_SEND, PTY_KEY_END, PTY_MOD_SHIFT },
		{ KEY_SDC, PTY_KEY_DEL, PTY_MOD_SHIFT },
		{ KEY_SIC, PTY_KEY_INS, PTY_MOD_SHIFT },
		{ KEY_RESIZE, TUI_KEY_RESIZE, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof map / sizeof map[0]; i++) {
		if (map[i].curses == code) {
			*out = tui_keys_special(map[i].key, map[i].mods);
			return true;
		}
	}
	if (code >= KEY_F(1) && code <= KEY_F(12)) {
		*out = tui_keys_special(PTY_KEY_F1 + (code - KEY_F(1)), 0);
		return true;
	}
	if (code >= KEY_F(13) && code <= KEY_F(24)) {	/* xterm: S-F1.. */
		*out = tui_keys_special(PTY_KEY_F1 + (code - KEY_F(13)),
		    PTY_MOD_SHIFT);
		return true;
	}
	return key_by_name(code, out);
}

static bool
key_mouse(struct tui_key *out)
{
	MEVENT ev;

	if (getmouse(&ev) != OK)
		return false;
	if (ev.bstate & BUTTON4_PRESSED)
		*out = tui_keys_special(TUI_KEY_WHEEL_UP, 0);
	else if (ev.bstate & BUTTON5_PRESSED)
		*out = tui_keys_special(TUI_KEY_WHEEL_DOWN, 0);
	else if (ev.bstate & BUTTON1_PRESSED)
		*out = tui_keys_special(TUI_KEY_CLICK, 0);
	else
		return false;
	out->x = ev.x;
	out->y = ev.y;
	return true;
}

/* One raw event: 1 and a key, 0 when nothing is pending, -1 to skip. */
static int
read_one(struct tui_key *out)
{
	wint_t wc;
	int r = wget_wch(stdscr, &wc);

	if (r == ERR)
		return 0;
	if (r == KEY_CODE_YES) {
		if (wc == KEY_MOUSE)
			return key_mouse(out) ? 1 : -1;
		return key_special((int)wc, out) ? 1 : -1;
	}
	*out = tui_keys_from_char((uint32_t)wc);
	return 1;
}

int
tui_surface_curses_read_key(struct tui_curses *t, struct tui_key *out)
{
	struct tui_key next;
	int r;

	if (!t->active)
		return 0;
	while ((r = read_one(out)) < 0)
		;
	if (r == 0)
		return 0;
	if (out->code != PTY_KEY_ESCAPE || out->mods != 0)
		return 1;
	/* ESC and a key already waiting behind it: that key with Alt. */
	while ((r = read_one(&next)) < 0)
		;
	if (r == 0)
		return 1;
	if (next.code == TUI_KEY_RESIZE || next.code == TUI_KEY_CLICK ||
	    next.code == TUI_KEY_WHEEL_UP || next.code == TUI_KEY_WHEEL_DOWN) {
		/* not a chord: keep the Escape, lose nothing important */
		*out = next;
		return 1;
	}
	next.mods |= PTY_MOD_ALT;
	*out = next;
	return 1;
}

void
tui_surface_curses_notify(struct tui_curses *t, bool bell, const char *osc9)
{
	char buf[300];
	size_t n = 0;

	if (t == NULL || !t->active)
		return;
	if (bell)
		beep();
	if (osc9 == NULL || *osc9 == '\0')
		return;
	/* Printable ASCII only: the text ends up in the outer terminal. */
	n = (size_t)snprintf(buf, sizeof buf, "\033]9;");
	for (const char *p = osc9; *p != '\0' && n < sizeof buf - 2; p++) {
		if ((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f)
			buf[n++] = *p;
	}
	buf[n++] = '\a';
	fflush(stdout);
	if (write(STDOUT_FILENO, buf, n) < 0) {
		/* the terminal went away; the next frame will notice */
	}
}
