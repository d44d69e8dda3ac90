/*
 * screen.c: the pure terminal model of one endpoint (SPEC 4.1, 4.5; STYLE
 * A, F). libvterm's state layer parses the bytes and reports glyphs,
 * scrolls and erases; the cells live in our own grid of row pointers (a
 * full-width scroll rotates pointers, it never moves cells), and lines
 * scrolled off the primary screen go packed (line.c) into a capped ring.
 * This file is the libvterm side: the state callbacks, the filter's sink,
 * the life cycle and the keys; the grid, the scrollback ring, a resize and
 * the read side have files of their own (screen_int.h lists them). Only
 * they include <vterm.h>.
 *
 * The VT filter (vtfilter.c) sits in front of libvterm 0.1.4: that
 * version mishandles bytes split across writes, puts whole strings and text
 * runs into stack arrays and has a few memory-safety bugs that bytes from
 * a sandboxed agent must not reach. What the filter cannot do without the
 * model comes back here through its sink (filter_sink): REP, a cursor to
 * clamp, a mark to join, and long runs of plain ASCII that we write into
 * the grid ourselves (sink_ascii_run), libvterm's slowest path. Keys and
 * pastes are encoded by keys.c from the modes the filter tracked.
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pty/screen_int.h"

/* ------------------------------------------------------------------ */
/* libvterm state callbacks: each records state and marks rows dirty.  */

static void
dirty(struct pty_screen *s, int a, int b)
{
	if (a < s->dfirst)
		s->dfirst = a;
	if (b > s->dlast)
		s->dlast = b;
}

void
pty__screen_dirty_all(struct pty_screen *s)
{
	dirty(s, 0, s->rows - 1);
}

static void
emit(struct pty_screen *s, enum pty_screen_event_kind k, const char *text,
    size_t len)
{
	if (s->ev != NULL)
		s->ev(k, text, len, s->ev_ud);
}

static int
cb_putglyph(VTermGlyphInfo *info, VTermPos pos, void *ud)
{
	struct pty_screen *s = ud;
	struct grid *g = s->g;
	struct row *r;
	struct cell *c;
	uint32_t w, cp;
	int width = info->width, n;

	if (pos.row < 0 || pos.row >= g->rows || pos.col < 0 ||
	    pos.col >= g->cols)
		return 1;
	r = g->r[pos.row];
	c = &r->c[pos.col];
	cp = info->chars[0];
	if (cp > 0x10ffff)
		cp = 0xfffd;
	dirty(s, pos.row, pos.row);
	s->lg_row = pos.row;
	s->lg_col = pos.col;
	s->lg_valid = true;
	/* Did not fit after the last glyph: the row above wrapped into this. */
	if (pos.col == 0 && pos.row == s->pw_row + 1 &&
	    s->pw_end + (width > 1 ? 2 : 1) > g->cols)
		g->r[pos.row - 1]->wrapped = true;
	s->pw_row = pos.row;
	if (width == 1 && info->chars[1] == 0 && W_WIDTH(c->w) == 1) {
		/* The common case: nothing wide or combined around. */
		c->w = cp | W_BLANK | s->pen_attrs;
		c->fg = s->pen_fg;
		c->bg = s->pen_bg;
		s->rep_cp[0] = cp;
		s->rep_n = 1;
		s->pw_end = pos.col + 1;
		if (pos.col >= r->used)
			r->used = (uint16_t)(pos.col + 1);
		return 1;
	}
	if (width < 1)
		width = 1;
	else if (width > 2)
		width = 2;
	if (width == 2 && pos.col + 1 >= g->cols)
		width = 1;
	s->pw_end = pos.col + width;
	if (pos.col + width > r->used)
		r->used = (uint16_t)(pos.col + width);
	n = pty__grid_cell_fit(info->chars, 0);
	if (cp == 0)
		n = 0;
	memcpy(s->rep_cp, info->chars, sizeof s->rep_cp[0] * (size_t)n);
	s->rep_n = n;
	if (n > 1) {
		int idx;

		c->w = W_BLANK;
		idx = pty__grid_comb_add(r, g->cols, info->chars, n);
		w = idx < 0 ? cp : ((uint32_t)idx | W_COMB);
	} else {
		w = cp;
	}
	c->w = w | ((uint32_t)width << W_WSHIFT) | s->pen_attrs;
	c->fg = s->pen_fg;
	c->bg = s->pen_bg;
	if (width == 2) {
		c[1].w = s->pen_attrs;
		c[1].fg = s->pen_fg;
		c[1].bg = s->pen_bg;
	}
	pty__grid_fix_edges(r, g->cols, pos.col, pos.col + width);
	return 1;
}

static int
cb_movecursor(VTermPos pos, VTermPos oldpos, int visible, void *ud)
{
	struct pty_screen *s = ud;

	(void)oldpos;
	s->cur.row = pos.row;
	s->cur.col = pos.col;
	s->cur.visible = visible != 0;
	/*
	 * Moved away from the last glyph (after it, or on it while the wrap
	 * is pending: its first column, one or two before the end): no wrap
	 * follows it.
	 */
	if (pos.row != s->pw_row || (s->pw_end < s->g->cols ?
	    pos.col != s->pw_end : pos.col < s->pw_end - 2))
		s->pw_row = PW_NONE;
	return 1;
}

/* Clip a rect to the grid; false when nothing is left. */
static bool
clip(const struct grid *g, VTermRect *rc)
{
	if (rc->start_row < 0)
		rc->start_row = 0;
	if (rc->start_col < 0)
		rc->start_col = 0;
	if (rc->end_row > g->rows)
		rc->end_row = g->rows;
	if (rc->end_col > g->cols)
		rc->end_col = g->cols;
	return rc->start_row < rc->end_row && rc->start_col < rc->end_col;
}

static void
erase_rect(struct pty_screen *s, VTermRect rc)
{
	struct grid *g = s->g;
	struct cell v = { W_BLANK, PTY_COLOR_DEFAULT, s->pen_bg };
	int i;

	if (!clip(g, &rc))
		return;
	for (i = rc.start_row; i < rc.end_row; i++) {
		struct row *r = g->r[i];

		pty__grid_row_fill(r, rc.start_col, rc.end_col, v);
		if (rc.start_col == 0 && rc.end_col == g->cols) {
			r->ncomb = 0;
			r->used = 0;
			r->wrapped = false;
		} else {
			pty__grid_fix_edges(r, g->cols, rc.start_col, rc.end_col);
		}
	}
	/* A whole row cleared: the one before no longer wraps into it (tmux). */
	if (rc.start_col == 0 && rc.end_col == g->cols) {
		if (rc.start_row > 0)
			g->r[rc.start_row - 1]->wrapped = false;
		else if (g == &s->prim && s->sb_count > 0)
			s->sb_meta[pty__sb_slot(s, s->sb_count - 1) - s->sb] &=
			    (uint16_t)~SBM_WRAPPED;
	}
	dirty(s, rc.start_row, rc.end_row - 1);
}

/* Move the cells of src to dest (same size, both inside the grid). */
static void
move_rect(struct pty_screen *s, VTermRect dest, VTermRect src)
{
	struct grid *g = s->g;
	int h = dest.end_row - dest.start_row;
	int w = dest.end_col - dest.start_col;
	int i, step, first;

	if (h <= 0 || w <= 0)
		return;
	/* Rows in an order that never reads a row already overwritten. */
	if (dest.start_row <= src.start_row) {
		first = 0;
		step = 1;
	} else {
		first = h - 1;
		step = -1;
	}
	for (i = first; i >= 0 && i < h; i += step) {
		struct row *d = g->r[dest.start_row + i];
		struct row *sr = g->r[src.start_row + i];

		pty__grid_cells_copy(d, dest.start_col, sr, src.start_col, w, g->cols);
		pty__grid_fix_edges(d, g->cols, dest.start_col, dest.end_col);
		/* As tmux counts moved cells (insert and delete characters). */
		if (dest.end_col > d->used)
			d->used = (uint16_t)dest.end_col;
	}
	dirty(s, dest.start_row, dest.end_row - 1);
}

static int
cb_moverect(VTermRect dest, VTermRect src, void *ud)
{
	struct pty_screen *s = ud;
	VTermRect d = dest, sr = src;

	if (!clip(s->g, &d) || !clip(s->g, &sr))
		return 1;
	if (d.end_row - d.start_row != sr.end_row - sr.start_row ||
	    d.end_col - d.start_col != sr.end_col - sr.start_col)
		return 1;
	move_rect(s, d, sr);
	return 1;
}

static int
cb_scrollrect(VTermRect rc, int down, int right, void *ud)
{
	struct pty_screen *s = ud;
	struct grid *g = s->g;
	int h, w, n, i;

	if (!clip(g, &rc))
		return 1;
	h = rc.end_row - rc.start_row;
	w = rc.end_col - rc.start_col;
	if (right == 0 && rc.start_col == 0 && rc.end_col == g->cols) {
		/* Full-width vertical scroll: rotate row pointers. */
		struct cell v = { W_BLANK, PTY_COLOR_DEFAULT, s->pen_bg };
		struct row **rr = g->r + rc.start_row;

		n = down < 0 ? -down : down;
		if (n == 0)
			return 1;
		if (n > h)
			n = h;
		if (down > 0 && rc.start_row == 0 && g == &s->prim)
			for (i = 0; i < n; i++)
				pty__sb_push(s, rr[i], g->cols);
		if (down > 0) {
			memcpy(s->tmp, rr, sizeof *rr * (size_t)n);
			memmove(rr, rr + n, sizeof *rr * (size_t)(h - n));
			memcpy(rr + h - n, s->tmp, sizeof *rr * (size_t)n);
			for (i = h - n; i < h; i++) {
				pty__grid_row_fill(rr[i], 0, g->cols, v);
				rr[i]->ncomb = 0;
				rr[i]->used = 0;
				rr[i]->wrapped = false;
			}
		} else {
			memcpy(s->tmp, rr + h - n, sizeof *rr * (size_t)n);
			memmove(rr + n, rr, sizeof *rr * (size_t)(h - n));
			memcpy(rr, s->tmp, sizeof *rr * (size_t)n);
			for (i = 0; i < n; i++) {
				pty__grid_row_fill(rr[i], 0, g->cols, v);
				rr[i]->ncomb = 0;
				rr[i]->used = 0;
				rr[i]->wrapped = false;
			}
		}
		/* The last glyph's row moved with its row. */
		if (s->pw_row >= rc.start_row && s->pw_row < rc.end_row) {
			s->pw_row -= down;
			if (s->pw_row < rc.start_row || s->pw_row >= rc.end_row)
				s->pw_row = PW_NONE;
		}
		dirty(s, rc.start_row, rc.end_row - 1);
		return 1;
	}
	if (down >= h || -down >= h || right >= w || -right >= w) {
		erase_rect(s, rc);
		return 1;
	}
	{
		VTermRect src = rc, dest = rc, e;

		if (down > 0) {
			src.start_row += down;
			dest.end_row -= down;
		} else {
			src.end_row += down;
			dest.start_row -= down;
		}
		if (right > 0) {
			src.start_col += right;
			dest.end_col -= right;
		} else {
			src.end_col += right;
			dest.start_col -= right;
		}
		move_rect(s, dest, src);
		if (down != 0) {
			e = rc;
			if (down > 0)
				e.start_row = rc.end_row - down;
			else
				e.end_row = rc.start_row - down;
			erase_rect(s, e);
		}
		if (right != 0) {
			e = rc;
			if (right > 0)
				e.start_col = rc.end_col - right;
			else
				e.end_col = rc.start_col - right;
			erase_rect(s, e);
		}
	}
	dirty(s, rc.start_row, rc.end_row - 1);
	return 1;
}

static int
cb_erase(VTermRect rc, int selective, void *ud)
{
	/* DECSCA protection is not kept: a selective erase erases all. */
	(void)selective;
	erase_rect(ud, rc);
	return 1;
}

static int
cb_initpen(void *ud)
{
	struct pty_screen *s = ud;

	s->pen_fg = PTY_COLOR_DEFAULT;
	s->pen_bg = PTY_COLOR_DEFAULT;
	s->pen_attrs = 0;
	return 1;
}

static uint32_t
color_from(const VTermColor *c)
{
	if (c->type & VTERM_COLOR_DEFAULT_MASK)
		return PTY_COLOR_DEFAULT;
	if (VTERM_COLOR_IS_INDEXED(c))
		return PTY_COLOR_INDEXED(c->indexed.idx);
	return PTY_COLOR_RGB(c->rgb.red, c->rgb.green, c->rgb.blue);
}

static void
pen_flag(struct pty_screen *s, uint32_t attr, bool on)
{
	if (on)
		s->pen_attrs |= attr << W_ASHIFT;
	else
		s->pen_attrs &= ~(attr << W_ASHIFT);
}

static int
cb_setpenattr(VTermAttr attr, VTermValue *val, void *ud)
{
	struct pty_screen *s = ud;
	uint32_t u;

	switch (attr) {
	case VTERM_ATTR_BOLD:
		pen_flag(s, PTY_ATTR_BOLD, val->boolean);
		break;
	case VTERM_ATTR_UNDERLINE:
		u = (uint32_t)val->number & 3u;
		pen_flag(s, PTY_ATTR_UNDERLINE, false);
		s->pen_attrs |= (u << PTY_ATTR_UNDERLINE_SHIFT) << W_ASHIFT;
		break;
	case VTERM_ATTR_ITALIC:
		pen_flag(s, PTY_ATTR_ITALIC, val->boolean);
		break;
	case VTERM_ATTR_BLINK:
		pen_flag(s, PTY_ATTR_BLINK, val->boolean);
		break;
	case VTERM_ATTR_REVERSE:
		pen_flag(s, PTY_ATTR_REVERSE, val->boolean);
		break;
	case VTERM_ATTR_STRIKE:
		pen_flag(s, PTY_ATTR_STRIKE, val->boolean);
		break;
	case VTERM_ATTR_FOREGROUND:
		s->pen_fg = color_from(&val->color) | (s->pen_fg & FG_FAINT);
		break;
	case VTERM_ATTR_BACKGROUND:
		s->pen_bg = color_from(&val->color);
		break;
	default:
		/*
		 * Fonts (SGR 10-19) are not kept; faint and conceal, which
		 * 0.1.4 drops, come from the filter (sink_pen).
		 */
		break;
	}
	return 1;
}

static void
set_title(struct pty_screen *s, const char *t)
{
	size_t n = strlen(t);

	if (n > PTY_SCREEN_TITLE_MAX) {
		n = PTY_SCREEN_TITLE_MAX;
		while (n > 0 && ((unsigned char)t[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(s->title, t, n);
	s->title[n] = '\0';
	emit(s, PTY_SEV_TITLE, s->title, n);
}

static void
set_alt(struct pty_screen *s, bool on)
{
	if (on == s->modes.altscreen)
		return;
	s->modes.altscreen = on;
	s->pw_row = PW_NONE;
	if (on) {
		/* On allocation failure the primary grid stays in use. */
		if (pty__grid_new(&s->alt, s->rows, s->cols) == 0)
			s->g = &s->alt;
	} else {
		s->g = &s->prim;
		pty__grid_free(&s->alt);
	}
	pty__screen_dirty_all(s);
}

static int
cb_settermprop(VTermProp prop, VTermValue *val, void *ud)
{
	struct pty_screen *s = ud;

	switch (prop) {
	case VTERM_PROP_CURSORVISIBLE:
		s->cur.visible = val->boolean != 0;
		break;
	case VTERM_PROP_CURSORBLINK:
		s->cur.blink = val->boolean != 0;
		break;
	case VTERM_PROP_ALTSCREEN:
		set_alt(s, val->boolean != 0);
		break;
	case VTERM_PROP_TITLE:
		if (val->string != NULL)
			set_title(s, val->string);
		break;
	case VTERM_PROP_REVERSE:
		s->modes.reverse = val->boolean != 0;
		pty__screen_dirty_all(s);
		break;
	case VTERM_PROP_CURSORSHAPE:
		if (val->number >= PTY_CURSOR_BLOCK &&
		    val->number <= PTY_CURSOR_BAR)
			s->cur.shape = (uint8_t)val->number;
		break;
	case VTERM_PROP_MOUSE:
		if (val->number >= PTY_MOUSE_NONE &&
		    val->number <= PTY_MOUSE_MOVE)
			s->modes.mouse = (uint8_t)val->number;
		break;
	default:
		break;
	}
	return 1;
}

static int
cb_bell(void *ud)
{
	struct pty_screen *s = ud;

	s->bells++;
	emit(s, PTY_SEV_BELL, "", 0);
	return 1;
}

static int
cb_resize(int rows, int cols, VTermPos *delta, void *ud)
{
	struct pty_screen *s = ud;

	(void)rows;
	(void)cols;
	delta->row = s->resize_delta;
	return 1;
}

static int
cb_setlineinfo(int row, const VTermLineInfo *newinfo,
    const VTermLineInfo *oldinfo, void *ud)
{
	/* Double-width/height lines are not drawn doubled. */
	(void)row;
	(void)newinfo;
	(void)oldinfo;
	(void)ud;
	return 1;
}

static int
fb_osc(const char *cmd, size_t len, void *ud)
{
	emit(ud, PTY_SEV_OSC, cmd, len > PTY__OSC_MAX ? PTY__OSC_MAX : len);
	return 1;
}

static void
cb_output(const char *buf, size_t len, void *ud)
{
	struct pty_screen *s = ud;

	if (s->out != NULL && len > 0)
		s->out(buf, len, s->out_ud);
}

static const VTermStateCallbacks state_cbs = {
	.putglyph = cb_putglyph,
	.movecursor = cb_movecursor,
	.scrollrect = cb_scrollrect,
	.moverect = cb_moverect,
	.erase = cb_erase,
	.initpen = cb_initpen,
	.setpenattr = cb_setpenattr,
	.settermprop = cb_settermprop,
	.bell = cb_bell,
	.resize = cb_resize,
	.setlineinfo = cb_setlineinfo,
};

static const VTermParserCallbacks fallback_cbs = {
	.osc = fb_osc,
};

/* ------------------------------------------------------------------ */
/* The model's side of the input filter (vtfilter.c)                    */

void
pty__screen_vwrite(struct pty_screen *s, const void *p, size_t n)
{
	if (n > 0)
		vterm_input_write(s->vt, p, n);
}

/*
 * The ASCII fast path (the filter's ascii_run). libvterm spends most of its
 * time per glyph; for a run of printable ASCII the filter passes its first
 * byte on as usual (which wraps a pending autowrap and uses up a single
 * shift), then, when the rest but the last byte fits on the row without
 * reaching its end, we write those cells ourselves and move libvterm's
 * cursor over them with CUF; the filter passes the last byte on (so
 * combining marks and REP find it). The filter asks only while the G-set
 * in use maps ASCII to itself and insert and origin modes are off; here
 * the line must not be double width, and the cursor is checked after the
 * CUF.
 */
static enum pty__vtf_fast
sink_ascii_run(const uint8_t *p, size_t m, void *ud)
{
	struct pty_screen *s = ud;
	struct grid *g = s->g;
	const VTermLineInfo *li;
	struct row *r;
	struct cell *c;
	VTermPos pos, now;
	size_t k;
	uint32_t a;
	char seq[16];
	size_t n = sizeof seq, v;

	vterm_state_get_cursorpos(s->vts, &pos);
	if (pos.row < 0 || pos.row >= g->rows || pos.col < 0 ||
	    (size_t)pos.col + m >= (size_t)g->cols)
		return PTY__VTF_FAST_NO;
	li = vterm_state_get_lineinfo(s->vts, pos.row);
	if (li == NULL || li->doublewidth)
		return PTY__VTF_FAST_NO;
	a = W_BLANK | s->pen_attrs;
	r = g->r[pos.row];
	c = r->c + pos.col;
	for (k = 0; k < m; k++) {
		c[k].w = a | p[k];
		c[k].fg = s->pen_fg;
		c[k].bg = s->pen_bg;
	}
	pty__grid_fix_edges(r, g->cols, pos.col, pos.col + (int)m);
	if (pos.col + (int)m > r->used)
		r->used = (uint16_t)(pos.col + (int)m);
	dirty(s, pos.row, pos.row);
	/* CSI m C, formatted by hand: this runs once per line of text. */
	seq[--n] = 'C';
	for (v = m; v > 0 || n == sizeof seq - 1; v /= 10)
		seq[--n] = (char)('0' + v % 10);
	seq[--n] = '[';
	seq[--n] = '\033';
	pty__screen_vwrite(s, seq + n, sizeof seq - n);
	pos.col += (int)m;
	vterm_state_get_cursorpos(s->vts, &now);
	if (now.row != pos.row || now.col != pos.col)
		return PTY__VTF_FAST_STOP;
	return PTY__VTF_FAST_DONE;
}

/*
 * REP (CSI Pn b, the filter's rep): 0.1.4 loops forever when the last glyph had width 0 (or
 * none was printed), so we print the last glyph again ourselves, as xterm
 * does, at most a screenful of times.
 */
static void
sink_rep(uint32_t count, void *ud)
{
	struct pty_screen *s = ud;
	uint8_t buf[512];
	size_t n = 0, gl = 0;
	uint8_t g[PTY__CELL_TEXTMAX];
	uint32_t max = (uint32_t)s->rows * (uint32_t)s->cols;
	int k;

	if (s->rep_n == 0)
		return;
	for (k = 0; k < s->rep_n; k++)
		gl += (size_t)pty__cell_utf8_put(g + gl, s->rep_cp[k]);
	if (count == 0)
		count = 1;
	if (count > max)
		count = max;
	while (count-- > 0) {
		if (n + gl > sizeof buf) {
			pty__screen_vwrite(s, buf, n);
			n = 0;
		}
		memcpy(buf + n, g, gl);
		n += gl;
	}
	pty__screen_vwrite(s, buf, n);
}

/* Append SGR parameter text for colour c (fg: 38, bg: 48) at p. */
static int
sgr_color(char *p, size_t n, int base, uint32_t c)
{
	c = FG_COLOR(c);
	switch (PTY_COLOR_KIND(c)) {
	case PTY_COLOR_KIND_INDEXED:
		return snprintf(p, n, ";%d;5;%u", base, c & 0xffu);
	case PTY_COLOR_KIND_RGB:
		return snprintf(p, n, ";%d;2;%u;%u;%u", base, (c >> 16) & 0xffu,
		    (c >> 8) & 0xffu, c & 0xffu);
	default:
		return 0;
	}
}

/*
 * The cursor's save slot of the screen in use (the filter's cursor; SPEC
 * 4.1): one per screen, as xterm keeps, never 0.1.4's single one. A
 * restore puts libvterm's pen back with one SGR and its cursor with a CUP
 * (relative to the margins when the filter restored origin mode, which
 * homed the cursor), inside a screen that may have shrunk since.
 */
static void
sink_cursor(enum pty__vtf_cursor op, void *ud)
{
	struct pty_screen *s = ud;
	struct saved_cursor *sv = &s->saved[s->modes.altscreen];
	uint32_t a = s->pen_attrs >> W_ASHIFT;
	VTermPos home;
	char seq[128];
	int n = 0, row, col;

	if (op == PTY__VTF_CURSOR_FORGET) {
		memset(s->saved, 0, sizeof s->saved);
		s->pen_fg &= ~FG_FAINT;
		s->pen_attrs &= ~((uint32_t)PTY_ATTR_CONCEAL << W_ASHIFT);
		return;
	}
	if (op == PTY__VTF_CURSOR_SAVE) {
		vterm_state_get_cursorpos(s->vts, &sv->pos);
		sv->fg = s->pen_fg;
		sv->bg = s->pen_bg;
		sv->attrs = s->pen_attrs;
		return;
	}
	/*
	 * The pen in up to four SGRs, never one: with every attribute, an
	 * underline style and two 24-bit colours one would carry 17
	 * parameters, and 0.1.4 crashes on more than 16 (vterm_input_write;
	 * fuzz_screen, ESC [ ? 1049 h then l after such a pen).
	 */
	a = sv->attrs >> W_ASHIFT;
	n = snprintf(seq, sizeof seq, "\033[0%s%s%s%s%s",
	    a & PTY_ATTR_BOLD ? ";1" : "", a & PTY_ATTR_ITALIC ? ";3" : "",
	    a & PTY_ATTR_BLINK ? ";5" : "", a & PTY_ATTR_REVERSE ? ";7" : "",
	    a & PTY_ATTR_STRIKE ? ";9" : "");
	if (a & PTY_ATTR_UNDERLINE)
		n += snprintf(seq + n, sizeof seq - (size_t)n, "m\033[4:%u",
		    (a & PTY_ATTR_UNDERLINE) >> PTY_ATTR_UNDERLINE_SHIFT);
	for (int k = 0; k < 2; k++) {
		char c[40];

		if (sgr_color(c, sizeof c, k == 0 ? 38 : 48, k == 0 ? sv->fg :
		    sv->bg) > 0)
			n += snprintf(seq + n, sizeof seq - (size_t)n,
			    "m\033[%s", c + 1);
	}
	seq[n++] = 'm';
	pty__screen_vwrite(s, seq, (size_t)n);
	s->pen_fg = sv->fg;
	s->pen_bg = sv->bg;
	s->pen_attrs = sv->attrs;
	vterm_state_get_cursorpos(s->vts, &home);
	row = sv->pos.row >= s->rows ? s->rows - 1 : sv->pos.row;
	col = sv->pos.col >= s->cols ? s->cols - 1 : sv->pos.col;
	if (s->f.origin) {
		row -= home.row;
		col -= home.col;
	}
	n = snprintf(seq, sizeof seq, "\033[%d;%dH", row < 0 ? 1 : row + 1,
	    col < 0 ? 1 : col + 1);
	pty__screen_vwrite(s, seq, (size_t)n);
}

static int
orc_putglyph(VTermGlyphInfo *info, VTermPos pos, void *ud)
{
	struct pty_screen *s = ud;

	(void)pos;
	if (info->chars[0] == 'a' && info->chars[1] != 0)
		s->orc_merged = true;
	return 1;
}

static const VTermStateCallbacks orc_cbs = {
	.putglyph = orc_putglyph,
};

/*
 * Whether libvterm 0.1.4 treats cp as a combining mark (its table is not
 * exported): ask a 1x4 terminal of our own to print "a" and cp.
 */
static bool
orc_combining(struct pty_screen *s, uint32_t cp)
{
	uint8_t buf[8];
	int n;

	if (s->orc == NULL) {
		VTermState *st;

		s->orc = vterm_new(1, 4);
		if (s->orc == NULL)
			return false;
		vterm_set_utf8(s->orc, 1);
		st = vterm_obtain_state(s->orc);
		vterm_state_set_callbacks(st, &orc_cbs, s);
		vterm_state_reset(st, 1);
	}
	buf[0] = '\r';
	buf[1] = 'a';
	n = pty__cell_utf8_put(buf + 2, cp);
	s->orc_merged = false;
	vterm_input_write(s->orc, (const char *)buf, (size_t)n + 2);
	return s->orc_merged;
}


/*
 * Combining mark cp starts a libvterm write right after text (the filter's
 * join_mark, see vtfilter.c): join it to the last glyph if the cursor is
 * still on it and libvterm would combine it. Returns whether we did.
 */
static bool
sink_join_mark(uint32_t cp, void *ud)
{
	struct pty_screen *s = ud;
	struct grid *g = s->g;
	uint32_t cps[PTY_CELL_MAXCP];
	struct row *r;
	struct cell *c;
	VTermPos pos;
	int k, idx;

	if (!s->lg_valid)
		return false;
	vterm_state_get_cursorpos(s->vts, &pos);
	if (pos.row != s->lg_row || pos.col != s->lg_col ||
	    s->lg_row >= g->rows || s->lg_col >= g->cols)
		return false;
	if (!orc_combining(s, cp))
		return false;
	r = g->r[s->lg_row];
	c = &r->c[s->lg_col];
	memset(cps, 0, sizeof cps);
	k = pty__grid_cell_cps(r, c, cps);
	if (k > 0 && k < PTY_CELL_MAXCP)
		cps[k] = cp;
	if (k > 0 && k < PTY_CELL_MAXCP && pty__grid_cell_fit(cps, k) > k) {
		uint32_t keep = c->w & ~(W_CP | W_COMB);

		k++;
		c->w = W_BLANK;
		idx = pty__grid_comb_add(r, g->cols, cps, k);
		c->w = keep | (idx < 0 ? cps[0] : ((uint32_t)idx | W_COMB));
		if (s->rep_n > 0 && s->rep_n < PTY_CELL_MAXCP)
			s->rep_cp[s->rep_n++] = cp;
		dirty(s, s->lg_row, s->lg_row);
	}
	return true;
}

/* Faint and conceal (the filter's pen), which 0.1.4 drops. */
static void
sink_pen(uint16_t attrs, void *ud)
{
	struct pty_screen *s = ud;

	s->pen_fg = (s->pen_fg & ~FG_FAINT) |
	    (attrs & PTY_ATTR_FAINT ? FG_FAINT : 0);
	pen_flag(s, PTY_ATTR_CONCEAL, (attrs & PTY_ATTR_CONCEAL) != 0);
}

static void
sink_pass(const uint8_t *p, size_t n, void *ud)
{
	pty__screen_vwrite(ud, p, n);
}

static void
sink_reply(const char *p, size_t n, void *ud)
{
	cb_output(p, n, ud);
}

/* What the filter in front of libvterm hands on (pty_int.h). */
static const struct pty__vtfilter_sink filter_sink = {
	.pass = sink_pass,
	.reply = sink_reply,
	.rep = sink_rep,
	.cursor = sink_cursor,
	.pen = sink_pen,
	.join_mark = sink_join_mark,
	.ascii_run = sink_ascii_run,
};

/*
 * Every byte passes through the filter (vtfilter.c) before libvterm sees
 * it: 0.1.4 mishandles bytes split across writes, puts whole strings and
 * text runs into stack arrays and has a few memory-safety bugs that bytes
 * from a sandboxed agent must not reach.
 */
void
pty_screen_feed(struct pty_screen *s, const char *buf, size_t len)
{
	if (s == NULL || buf == NULL || len == 0)
		return;
	pty__vtfilter_feed(&s->f, (const uint8_t *)buf, len);
}

int
pty__screen_scratch_fit(struct pty_screen *s, int cols)
{
	size_t need = 2 + pty_line_packed_max(cols);

	if (s->packbufsz < need) {
		uint8_t *p = realloc(s->packbuf, need);

		if (p == NULL)
			return -ENOMEM;
		s->packbuf = p;
		s->packbufsz = need;
	}
	if (s->cellbufn < cols) {
		struct pty_cell *c = realloc(s->cellbuf, sizeof *c *
		    (size_t)cols);

		if (c == NULL)
			return -ENOMEM;
		s->cellbuf = c;
		s->cellbufn = cols;
	}
	return 0;
}

int
pty_screen_new(struct pty_screen **out, int rows, int cols, size_t sb_max)
{
	struct pty_screen *s;

	if (out == NULL)
		return -EINVAL;
	*out = NULL;
	if (rows < 1 || rows > 1000 || cols < 1 || cols > 1000)
		return -EINVAL;
	s = calloc(1, sizeof *s);
	if (s == NULL)
		return -ENOMEM;
	s->rows = rows;
	s->cols = cols;
	s->sb_max = sb_max > SB_LIMIT ? SB_LIMIT : sb_max;
	s->dfirst = INT_MAX;
	s->dlast = -1;
	s->cur.visible = true;
	s->cur.shape = PTY_CURSOR_BLOCK;
	s->pw_row = PW_NONE;
	s->g = &s->prim;
	pty__vtfilter_init(&s->f, &filter_sink, s);
	if (pty__grid_new(&s->prim, rows, cols) < 0 ||
	    pty__screen_scratch_fit(s, cols) < 0 ||
	    (s->tmp = malloc(sizeof *s->tmp * (size_t)rows)) == NULL)
		goto nomem;
	s->vt = vterm_new(rows, cols);
	if (s->vt == NULL)
		goto nomem;
	vterm_set_utf8(s->vt, 1);
	vterm_output_set_callback(s->vt, cb_output, s);
	s->vts = vterm_obtain_state(s->vt);
	if (s->vts == NULL)
		goto nomem;
	vterm_state_set_callbacks(s->vts, &state_cbs, s);
	vterm_state_set_unrecognised_fallbacks(s->vts, &fallback_cbs, s);
	vterm_state_reset(s->vts, 1);
	pty__screen_dirty_all(s);
	*out = s;
	return 0;
nomem:
	pty_screen_free(s);
	return -ENOMEM;
}

void
pty_screen_trim(struct pty_screen *s)
{
	if (s == NULL)
		return;
	free(s->packbuf);
	free(s->cellbuf);
	s->packbuf = NULL;
	s->cellbuf = NULL;
	s->packbufsz = 0;
	s->cellbufn = 0;
}

void
pty_screen_free(struct pty_screen *s)
{
	size_t i;

	if (s == NULL)
		return;
	if (s->vt != NULL)
		vterm_free(s->vt);
	if (s->orc != NULL)
		vterm_free(s->orc);
	for (i = 0; i < s->sb_count; i++)
		free(*pty__sb_slot(s, i));
	free(s->sb);
	free(s->sb_meta);
	pty__grid_free(&s->prim);
	pty__grid_free(&s->alt);
	free(s->tmp);
	free(s->packbuf);
	free(s->cellbuf);
	free(s);
}

void
pty_screen_set_output(struct pty_screen *s, pty_screen_output_cb cb,
    void *ud)
{
	assert(s != NULL);
	s->out = cb;
	s->out_ud = ud;
}

void
pty_screen_set_event(struct pty_screen *s, pty_screen_event_cb cb, void *ud)
{
	assert(s != NULL);
	s->ev = cb;
	s->ev_ud = ud;
}

/* Keys, characters and pastes: encoded by keys.c, sent to the program. */
void
pty_screen_key(struct pty_screen *s, enum pty_key key, unsigned mods)
{
	char buf[PTY__KEYS_MAX];

	assert(s != NULL);
	cb_output(buf, pty__keys_key(&s->f.keys, key, mods, buf), s);
}

void
pty_screen_unichar(struct pty_screen *s, uint32_t cp, unsigned mods)
{
	char buf[PTY__KEYS_MAX];

	assert(s != NULL);
	cb_output(buf, pty__keys_unichar(&s->f.keys, cp, mods, buf), s);
}

void
pty_screen_paste(struct pty_screen *s, const char *buf, size_t len)
{
	assert(s != NULL);
	if (s->out == NULL || buf == NULL)
		return;
	pty__keys_paste(&s->f.keys, s->f.bracketed_paste, buf, len, s->out,
	    s->out_ud);
}
