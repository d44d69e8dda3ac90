/*
 * screen.c: the pure terminal model of one endpoint (SPEC 4.1, 4.5; STYLE
 * A, F). libvterm's state layer parses the bytes and reports glyphs,
 * scrolls and erases; the cells live in our own grid of row pointers (a
 * full-width scroll rotates pointers, it never moves cells), and lines
 * scrolled off the primary screen go packed (line.c) into a capped ring.
 * The only file that includes <vterm.h>.
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
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vterm.h>

#include "pty/pty.h"
#include "pty/pty_int.h"

/* Scrollback lines, whatever the caller asks. */
#define SB_LIMIT (1u << 22)
/* No last glyph to wrap after (below any row minus one). */
#define PW_NONE (-2)
/* A scrollback line's meta: its used length, and whether it wrapped. */
#define SBM_USED 0x7fffu
#define SBM_WRAPPED 0x8000u

/*
 * Our cell, 12 bytes. w packs the character and its looks:
 *   bits 0-20  the codepoint, or an index into the row's combining store
 *   bits 21-22 width (1, 2 = left half of a wide char, 0 = right half)
 *   bit 23     the low bits are a combining-store index
 *   bits 24-31 PTY_ATTR_* bits 0-7
 * and fg's bit 26 (above the colour, PTY_COLOR_*) is PTY_ATTR_FAINT, for
 * which w has no bit left: a pen's fg carries it into every cell.
 */
struct cell {
	uint32_t w;
	uint32_t fg;
	uint32_t bg;
};

#define W_CP 0x1fffffu
#define W_WSHIFT 21
#define W_COMB (1u << 23)
#define W_ASHIFT 24
#define W_WIDTH(w) (((w) >> W_WSHIFT) & 3u)
#define W_BLANK (1u << W_WSHIFT)
#define FG_FAINT (1u << 26)
#define FG_COLOR(fg) ((fg) & ~FG_FAINT)

/* A cell's PTY_ATTR_* bits. */
static uint16_t
cell_attrs(const struct cell *c)
{
	return (uint16_t)((c->w >> W_ASHIFT) |
	    (c->fg & FG_FAINT ? PTY_ATTR_FAINT : 0));
}

/* A base character with its combining marks. */
struct comb {
	uint32_t cp[PTY_CELL_MAXCP];
};

/*
 * One row. Cells whose w has W_COMB point into comb[]; entries nobody
 * points at any more are collected when the store fills (comb_gc). used
 * and wrapped are what a resize rewraps by (reflow.c): used counts the
 * cells up to the last one written (as tmux does: an erase does not
 * shorten it, clearing the whole row empties it), wrapped says the text
 * went on on the next row when this one filled.
 */
struct row {
	struct comb *comb;
	uint16_t ncomb, combcap;
	uint16_t used;
	bool wrapped;
	struct cell c[];
};

/* A DECSC slot's model half: position and pen (the filter keeps the rest). */
struct saved_cursor {
	VTermPos pos;
	uint32_t fg, bg, attrs;
};

/* A screen's worth of rows, in one block; r[] is the visible order. */
struct grid {
	int rows, cols;
	size_t stride;
	char *block;
	struct row **r;
};

struct pty_screen {
	VTerm *vt;
	VTermState *vts;
	int rows, cols;
	struct grid prim, alt;
	struct grid *g;		/* the active grid */
	struct row **tmp;	/* rotation scratch, rows entries */

	uint32_t pen_fg, pen_bg;
	uint32_t pen_attrs;	/* already shifted to W_ASHIFT */
	struct saved_cursor saved[2];	/* DECSC: main, alternate screen */

	struct pty_cursor cur;
	struct pty_modes modes;
	char title[PTY_SCREEN_TITLE_MAX + 1];
	uint64_t bells;
	int dfirst, dlast;	/* dirty rows; clean when dlast < 0 */
	int resize_delta;
	uint32_t rep_cp[PTY_CELL_MAXCP]; /* the last glyph, for REP */
	int rep_n;
	int lg_row, lg_col;	/* where the last glyph went */
	bool lg_valid;
	/*
	 * Where the last glyph went (its row, the column after it; PW_NONE
	 * once the cursor has moved since): a glyph that then lands at the
	 * start of the next row because it did not fit wrapped there
	 * (libvterm 0.1.4 does not say so itself).
	 */
	int pw_row, pw_end;
	VTerm *orc;		/* a 1x4 libvterm asked what combines */
	bool orc_merged;

	/* Scrollback: each line is u16 length + packed bytes. */
	uint8_t **sb;
	uint16_t *sb_meta;	/* per slot: used length, SBM_WRAPPED */
	size_t sb_max, sb_cap, sb_head, sb_count, sb_bytes;
	uint8_t *packbuf;
	size_t packbufsz;
	struct pty_cell *cellbuf;
	int cellbufn;

	pty_screen_output_cb out;
	void *out_ud;
	pty_screen_event_cb ev;
	void *ev_ud;

	struct pty__vtfilter f;	/* in front of vt */
};

/* ------------------------------------------------------------------ */
/* Grid and rows                                                        */

static void
dirty(struct pty_screen *s, int a, int b)
{
	if (a < s->dfirst)
		s->dfirst = a;
	if (b > s->dlast)
		s->dlast = b;
}

static void
dirty_all(struct pty_screen *s)
{
	dirty(s, 0, s->rows - 1);
}

static void
row_fill(struct row *r, int from, int to, struct cell v)
{
	int i;

	for (i = from; i < to; i++)
		r->c[i] = v;
}

static void
row_blank(struct row *r, int cols, uint32_t bg)
{
	struct cell v = { W_BLANK, PTY_COLOR_DEFAULT, bg };

	row_fill(r, 0, cols, v);
	r->ncomb = 0;
	r->used = 0;
	r->wrapped = false;
}

static void
grid_free(struct grid *g)
{
	int i;

	if (g->r != NULL)
		for (i = 0; i < g->rows; i++)
			free(g->r[i]->comb);
	free(g->r);
	free(g->block);
	memset(g, 0, sizeof *g);
}

static int
grid_new(struct grid *g, int rows, int cols)
{
	size_t stride, align = _Alignof(struct row);
	int i;

	memset(g, 0, sizeof *g);
	stride = sizeof(struct row) + (size_t)cols * sizeof(struct cell);
	stride = (stride + align - 1) / align * align;
	g->block = malloc(stride * (size_t)rows);
	g->r = malloc(sizeof *g->r * (size_t)rows);
	if (g->block == NULL || g->r == NULL) {
		free(g->block);
		free(g->r);
		g->block = NULL;
		g->r = NULL;
		return -ENOMEM;
	}
	g->rows = rows;
	g->cols = cols;
	g->stride = stride;
	for (i = 0; i < rows; i++) {
		struct row *r = (struct row *)(void *)(g->block +
		    stride * (size_t)i);

		r->comb = NULL;
		r->ncomb = r->combcap = 0;
		row_blank(r, cols, PTY_COLOR_DEFAULT);
		g->r[i] = r;
	}
	return 0;
}

/* Drop combining entries no cell points at, renumbering the rest. */
static void
comb_gc(struct row *r, int cols)
{
	struct comb *n;
	uint16_t k = 0;
	int i;

	n = malloc(sizeof *n * r->combcap);
	for (i = 0; i < cols; i++) {
		struct cell *c = &r->c[i];

		if (!(c->w & W_COMB))
			continue;
		if (n == NULL || (c->w & W_CP) >= r->ncomb || k >= r->combcap) {
			/* Out of memory (or damaged): keep the base only. */
			uint32_t base = (c->w & W_CP) < r->ncomb ?
			    r->comb[c->w & W_CP].cp[0] : 0xfffd;

			c->w = (c->w & ~(W_CP | W_COMB)) | base;
			continue;
		}
		n[k] = r->comb[c->w & W_CP];
		c->w = (c->w & ~W_CP) | k;
		k++;
	}
	if (n != NULL) {
		free(r->comb);
		r->comb = n;
	}
	r->ncomb = k;
}

/* Store a character with marks in r; returns its index or -1. */
static int
comb_add(struct row *r, int cols, const uint32_t *cps, int n)
{
	struct comb *e;
	int i;

	if (r->ncomb >= r->combcap) {
		if (r->combcap < cols) {
			int cap = r->combcap ? r->combcap * 2 : 4;

			if (cap > cols)
				cap = cols;
			e = realloc(r->comb, sizeof *e * (size_t)cap);
			if (e == NULL)
				return -1;
			r->comb = e;
			r->combcap = (uint16_t)cap;
		} else {
			comb_gc(r, cols);
			if (r->ncomb >= r->combcap)
				return -1;
		}
	}
	e = &r->comb[r->ncomb];
	memset(e, 0, sizeof *e);
	for (i = 0; i < n && i < PTY_CELL_MAXCP; i++)
		e->cp[i] = cps[i] > 0x10ffff ? 0xfffd : cps[i];
	return r->ncomb++;
}

static int
utf8_len(uint32_t cp)
{
	return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/*
 * How many of cps[] (0-terminated, a base and its marks) one cell keeps
 * (PTY_CELL_MAXBYTES of UTF-8, as tmux), from k already kept.
 */
static int
cell_fit(const uint32_t *cps, int k)
{
	int bytes = 0, i;

	for (i = 0; i < k; i++)
		bytes += utf8_len(cps[i]);
	for (; k < PTY_CELL_MAXCP && cps[k] != 0; k++) {
		bytes += utf8_len(cps[k]);
		if (k > 0 && bytes > PTY_CELL_MAXBYTES)
			break;
	}
	return k;
}

/* The codepoints of a cell; returns how many (0 for an empty cell). */
static int
cell_cps(const struct row *r, const struct cell *c, uint32_t *cps)
{
	int n;

	if (c->w & W_COMB) {
		const struct comb *e = &r->comb[c->w & W_CP];

		for (n = 0; n < PTY_CELL_MAXCP && e->cp[n] != 0; n++)
			cps[n] = e->cp[n];
		return n;
	}
	cps[0] = c->w & W_CP;
	return cps[0] != 0;
}

/*
 * Keep wide characters whole around a change to [lo, hi) of a row: an
 * orphaned half on either side becomes a blank.
 */
static void
fix_edges(struct row *r, int cols, int lo, int hi)
{
	struct cell *c = r->c;

	if (lo < cols) {
		if (lo > 0 && W_WIDTH(c[lo - 1].w) == 2 &&
		    W_WIDTH(c[lo].w) != 0)
			c[lo - 1].w = W_BLANK;
		if (W_WIDTH(c[lo].w) == 0 &&
		    (lo == 0 || W_WIDTH(c[lo - 1].w) != 2))
			c[lo].w = W_BLANK;
	}
	if (hi > 0 && hi <= cols) {
		if (hi < cols && W_WIDTH(c[hi].w) == 0 &&
		    W_WIDTH(c[hi - 1].w) != 2)
			c[hi].w = W_BLANK;
		if (W_WIDTH(c[hi - 1].w) == 2 &&
		    (hi == cols || W_WIDTH(c[hi].w) != 0))
			c[hi - 1].w = W_BLANK;
	}
}

/* Copy n cells of row src (from scol) to row dst (at dcol). */
static void
cells_copy(struct row *dst, int dcol, struct row *src, int scol, int n,
    int cols)
{
	int i;

	if (dst == src || src->ncomb == 0) {
		memmove(&dst->c[dcol], &src->c[scol], sizeof(struct cell) *
		    (size_t)n);
		return;
	}
	for (i = 0; i < n; i++) {
		struct cell c = src->c[scol + i];

		if (c.w & W_COMB) {
			uint32_t cps[PTY_CELL_MAXCP];
			int k = cell_cps(src, &c, cps), idx;

			dst->c[dcol + i].w = W_BLANK;
			idx = comb_add(dst, cols, cps, k);
			c.w &= ~(W_CP | W_COMB);
			c.w |= idx < 0 ? cps[0] : ((uint32_t)idx | W_COMB);
		}
		dst->c[dcol + i] = c;
	}
}

/* ------------------------------------------------------------------ */
/* Scrollback                                                           */

static bool
cell_trimmable(const struct cell *c)
{
	return (c->w == W_BLANK || c->w == (W_BLANK | ' ')) &&
	    c->fg == PTY_COLOR_DEFAULT && c->bg == PTY_COLOR_DEFAULT;
}

static int
row_trimmed(const struct row *r, int cols)
{
	int n = cols;

	while (n > 0 && cell_trimmable(&r->c[n - 1]))
		n--;
	return n;
}

/*
 * Pack n cells of a row in line.c's format into buf (which holds
 * pty_line_packed_max(n) bytes); returns the length.
 */
static size_t
row_pack(const struct row *r, int n, uint8_t *buf)
{
	uint8_t *p = buf + 2, *run = NULL;
	uint32_t fg = 0, bg = 0, attrs = 0;
	uint16_t count = 0;
	bool prev_wide = false;
	int i;

	pty__line_put16(buf, (uint16_t)n);
	for (i = 0; i < n; i++) {
		const struct cell *c = &r->c[i];
		uint32_t w = c->w, a = w >> W_ASHIFT, cp;

		if (run == NULL || c->fg != fg || c->bg != bg || a != attrs) {
			if (run != NULL)
				pty__line_put16(run, count);
			run = p;
			p = pty__line_run(p, FG_COLOR(c->fg), c->bg,
			    cell_attrs(c));
			fg = c->fg;
			bg = c->bg;
			attrs = a;
			count = 0;
		}
		count++;
		if ((w & (W_CP | W_COMB | (3u << W_WSHIFT))) - W_BLANK - 1 <
		    0x7e) {
			/* Plain ASCII in width 1: take the run at once. */
			*p++ = (uint8_t)(w & W_CP);
			prev_wide = false;
			while (i + 1 < n) {
				const struct cell *d = c + 1;
				uint32_t x = d->w;

				if (d->fg != fg || d->bg != bg ||
				    x >> W_ASHIFT != attrs ||
				    (x & (W_CP | W_COMB | (3u << W_WSHIFT))) -
				    W_BLANK - 1 >= 0x7e)
					break;
				*p++ = (uint8_t)(x & W_CP);
				count++;
				c = d;
				i++;
			}
			continue;
		}
		if (w & W_COMB) {
			uint32_t cps[PTY_CELL_MAXCP];

			p = pty__line_text(p, cps, cell_cps(r, c, cps));
			prev_wide = W_WIDTH(w) == 2;
			continue;
		}
		cp = w & W_CP;
		if (W_WIDTH(w) == 0) {
			*p++ = prev_wide ? PTY__LC_WIDE2 : PTY__LC_BLANK;
			prev_wide = false;
		} else if (cp == 0) {
			*p++ = PTY__LC_BLANK;
			prev_wide = false;
		} else {
			if (cp < 0x80)
				*p++ = (uint8_t)cp;
			else
				p = pty__line_text(p, &cp, 1);
			prev_wide = W_WIDTH(w) == 2;
		}
	}
	if (run != NULL)
		pty__line_put16(run, count);
	return (size_t)(p - buf);
}

static uint8_t **
sb_slot(struct pty_screen *s, size_t idx)
{
	return &s->sb[(s->sb_head + idx) % s->sb_cap];
}

static size_t
sb_len(const uint8_t *e)
{
	return (size_t)e[0] | ((size_t)e[1] << 8);
}

/* Push a row (cols wide) as the newest scrollback line; best effort. */
static void
sb_push(struct pty_screen *s, const struct row *r, int cols)
{
	uint8_t *e, **slot, *old = NULL;
	size_t len;

	if (s->sb_max == 0)
		return;
	assert(s->packbufsz >= 2 + pty_line_packed_max(cols));
	len = row_pack(r, row_trimmed(r, cols), s->packbuf + 2);
	pty__line_put16(s->packbuf, (uint16_t)len);
	len += 2;
	if (s->sb_count == s->sb_max) {
		/* Full: the oldest line's buffer becomes the newest. */
		slot = sb_slot(s, 0);
		old = *slot;
		s->sb_bytes -= sb_len(old) + 2;
		s->sb_head = (s->sb_head + 1) % s->sb_cap;
		s->sb_count--;
	} else if (s->sb_count == s->sb_cap) {
		size_t cap = s->sb_cap ? s->sb_cap * 2 : 64;
		uint8_t **n;
		uint16_t *m;

		assert(s->sb_head == 0);
		if (cap > s->sb_max)
			cap = s->sb_max;
		m = realloc(s->sb_meta, sizeof *m * cap);
		if (m == NULL)
			return;
		s->sb_meta = m;
		n = realloc(s->sb, sizeof *n * cap);
		if (n == NULL)
			return;
		s->sb_bytes += (sizeof *n + sizeof *m) * (cap - s->sb_cap);
		s->sb = n;
		s->sb_cap = cap;
	}
	slot = sb_slot(s, s->sb_count);
	/*
	 * The oldest line's buffer is kept as it is when the new line fits
	 * without leaving half of it unused: text that scrolls through a
	 * full scrollback allocates nothing per line (issue 17, ingest).
	 */
	if (old != NULL && len <= malloc_usable_size(old) &&
	    malloc_usable_size(old) <= 2 * len + 32)
		e = old;
	else if ((e = realloc(old, len)) == NULL) {
		free(old);
		return;
	}
	memcpy(e, s->packbuf, len);
	*slot = e;
	s->sb_meta[slot - s->sb] = (uint16_t)((r->used < cols ? r->used :
	    cols) | (r->wrapped ? SBM_WRAPPED : 0));
	s->sb_count++;
	s->sb_bytes += len;
}

/* Unpack scrollback line idx into s->cellbuf (cols cells). */
static int
sb_unpack(const struct pty_screen *s, size_t idx, struct pty_cell *cells,
    int maxcells)
{
	const uint8_t *e = s->sb[(s->sb_head + idx) % s->sb_cap];

	return pty_line_unpack(e + 2, sb_len(e), cells, maxcells, NULL);
}

/* Fill row r (cols wide) from public cells. */
static void
row_from_cells(struct row *r, int cols, const struct pty_cell *cells)
{
	int i, k;

	row_blank(r, cols, PTY_COLOR_DEFAULT);
	for (i = 0; i < cols; i++) {
		const struct pty_cell *c = &cells[i];
		uint32_t w;

		for (k = 0; k < PTY_CELL_MAXCP && c->cp[k] != 0; k++)
			;
		if (k > 1) {
			int idx = comb_add(r, cols, c->cp, k);

			w = idx < 0 ? c->cp[0] : ((uint32_t)idx | W_COMB);
		} else {
			w = c->cp[0] > 0x10ffff ? 0xfffd : c->cp[0];
		}
		w |= (uint32_t)(c->width > 2 ? 1 : c->width) << W_WSHIFT;
		w |= (uint32_t)(c->attrs & 0xffu) << W_ASHIFT;
		r->c[i].w = w;
		r->c[i].fg = c->fg | (c->attrs & PTY_ATTR_FAINT ? FG_FAINT : 0);
		r->c[i].bg = c->bg;
	}
	fix_edges(r, cols, 0, cols);
}

/* ------------------------------------------------------------------ */
/* libvterm state callbacks: each records state and marks rows dirty.  */

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
	n = cell_fit(info->chars, 0);
	if (cp == 0)
		n = 0;
	memcpy(s->rep_cp, info->chars, sizeof s->rep_cp[0] * (size_t)n);
	s->rep_n = n;
	if (n > 1) {
		int idx;

		c->w = W_BLANK;
		idx = comb_add(r, g->cols, info->chars, n);
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
	fix_edges(r, g->cols, pos.col, pos.col + width);
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

		row_fill(r, rc.start_col, rc.end_col, v);
		if (rc.start_col == 0 && rc.end_col == g->cols) {
			r->ncomb = 0;
			r->used = 0;
			r->wrapped = false;
		} else {
			fix_edges(r, g->cols, rc.start_col, rc.end_col);
		}
	}
	/* A whole row cleared: the one before no longer wraps into it (tmux). */
	if (rc.start_col == 0 && rc.end_col == g->cols) {
		if (rc.start_row > 0)
			g->r[rc.start_row - 1]->wrapped = false;
		else if (g == &s->prim && s->sb_count > 0)
			s->sb_meta[sb_slot(s, s->sb_count - 1) - s->sb] &=
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

		cells_copy(d, dest.start_col, sr, src.start_col, w, g->cols);
		fix_edges(d, g->cols, dest.start_col, dest.end_col);
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
				sb_push(s, rr[i], g->cols);
		if (down > 0) {
			memcpy(s->tmp, rr, sizeof *rr * (size_t)n);
			memmove(rr, rr + n, sizeof *rr * (size_t)(h - n));
			memcpy(rr + h - n, s->tmp, sizeof *rr * (size_t)n);
			for (i = h - n; i < h; i++) {
				row_fill(rr[i], 0, g->cols, v);
				rr[i]->ncomb = 0;
				rr[i]->used = 0;
				rr[i]->wrapped = false;
			}
		} else {
			memcpy(s->tmp, rr + h - n, sizeof *rr * (size_t)n);
			memmove(rr + n, rr, sizeof *rr * (size_t)(h - n));
			memcpy(rr, s->tmp, sizeof *rr * (size_t)n);
			for (i = 0; i < n; i++) {
				row_fill(rr[i], 0, g->cols, v);
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
		if (grid_new(&s->alt, s->rows, s->cols) == 0)
			s->g = &s->alt;
	} else {
		s->g = &s->prim;
		grid_free(&s->alt);
	}
	dirty_all(s);
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
		dirty_all(s);
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

static void
vwrite(struct pty_screen *s, const void *p, size_t n)
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
	fix_edges(r, g->cols, pos.col, pos.col + (int)m);
	if (pos.col + (int)m > r->used)
		r->used = (uint16_t)(pos.col + (int)m);
	dirty(s, pos.row, pos.row);
	/* CSI m C, formatted by hand: this runs once per line of text. */
	seq[--n] = 'C';
	for (v = m; v > 0 || n == sizeof seq - 1; v /= 10)
		seq[--n] = (char)('0' + v % 10);
	seq[--n] = '[';
	seq[--n] = '\033';
	vwrite(s, seq + n, sizeof seq - n);
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
			vwrite(s, buf, n);
			n = 0;
		}
		memcpy(buf + n, g, gl);
		n += gl;
	}
	vwrite(s, buf, n);
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
	vwrite(s, seq, (size_t)n);
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
	vwrite(s, seq, (size_t)n);
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
	k = cell_cps(r, c, cps);
	if (k > 0 && k < PTY_CELL_MAXCP)
		cps[k] = cp;
	if (k > 0 && k < PTY_CELL_MAXCP && cell_fit(cps, k) > k) {
		uint32_t keep = c->w & ~(W_CP | W_COMB);

		k++;
		c->w = W_BLANK;
		idx = comb_add(r, g->cols, cps, k);
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
	vwrite(ud, p, n);
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

static int
scratch_fit(struct pty_screen *s, int cols)
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
	if (grid_new(&s->prim, rows, cols) < 0 ||
	    scratch_fit(s, cols) < 0 ||
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
	dirty_all(s);
	*out = s;
	return 0;
nomem:
	pty_screen_free(s);
	return -ENOMEM;
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
		free(*sb_slot(s, i));
	free(s->sb);
	free(s->sb_meta);
	grid_free(&s->prim);
	grid_free(&s->alt);
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

/*
 * Copy old row o into new row n, keeping its combining store and cutting
 * or padding it to n's width.
 */
static void
row_move(struct row *n, int ncols, struct row *o, int ocols)
{
	int w = ncols < ocols ? ncols : ocols;

	memcpy(n->c, o->c, sizeof(struct cell) * (size_t)w);
	if (ncols > w) {
		struct cell v = { W_BLANK, PTY_COLOR_DEFAULT,
			PTY_COLOR_DEFAULT };

		row_fill(n, w, ncols, v);
	}
	n->comb = o->comb;
	n->ncomb = o->ncomb;
	n->combcap = o->combcap;
	n->used = (uint16_t)(o->used < w ? o->used : w);
	n->wrapped = o->wrapped;
	o->comb = NULL;
	o->ncomb = o->combcap = 0;
	if (w > 0)
		fix_edges(n, ncols, w - 1, w);
}

static void cell_export(const struct row *, const struct cell *,
    struct pty_cell *);

/* Packed line e (a scrollback entry) with meta m into row r. */
static void
row_from_packed(struct pty_screen *s, const uint8_t *e, uint16_t m,
    struct row *r, int cols)
{
	int used = m & SBM_USED;

	if (pty_line_unpack(e + 2, sb_len(e), s->cellbuf, cols, NULL) < 0)
		pty_cell_blank(s->cellbuf, cols);
	row_from_cells(r, cols, s->cellbuf);
	r->used = (uint16_t)(used < cols ? used : cols);
	r->wrapped = (m & SBM_WRAPPED) != 0;
}

/* Scrollback line idx into row r (cols wide), with its used and wrap. */
static void
row_from_sb(struct pty_screen *s, size_t idx, struct row *r, int cols)
{
	uint8_t **slot = sb_slot(s, idx);

	row_from_packed(s, *slot, s->sb_meta[slot - s->sb], r, cols);
}

/*
 * The height changes, the width stays (SPEC 4.5), as tmux: shrinking, the
 * rows below the cursor go first, then rows from the top (into the
 * scrollback for the primary screen); growing, the primary takes lines
 * back from the scrollback. *pos is the cursor of the screen in use; on
 * the alternate screen the primary's is the slot 1049 saved.
 */
static int
resize_rows(struct pty_screen *s, int rows, VTermPos *pos)
{
	struct grid np, na;
	bool on_alt = s->g == &s->alt;
	VTermPos *pc = on_alt ? &s->saved[0].pos : pos;
	int orows = s->rows, cols = s->cols, push = 0, pull = 0, drop = 0, i;

	if (grid_new(&np, rows, cols) < 0)
		return -ENOMEM;
	memset(&na, 0, sizeof na);
	if (on_alt && grid_new(&na, rows, cols) < 0) {
		grid_free(&np);
		return -ENOMEM;
	}
	if (rows < orows) {
		push = pc->row + 1 - rows;
		if (push < 0)
			push = 0;
		for (i = 0; i < push; i++)
			sb_push(s, s->prim.r[i], cols);
	} else if ((size_t)(rows - orows) > s->sb_count) {
		pull = (int)s->sb_count;
	} else {
		pull = rows - orows;
	}
	for (i = 0; i < pull; i++)
		row_from_sb(s, s->sb_count - (size_t)pull + (size_t)i,
		    np.r[i], cols);
	for (i = 0; i < pull; i++) {
		uint8_t **slot = sb_slot(s, s->sb_count - 1);

		s->sb_bytes -= sb_len(*slot) + 2;
		free(*slot);
		*slot = NULL;
		s->sb_count--;
	}
	for (i = pull; i < rows; i++) {
		int o = i - pull + push;

		if (o >= orows)
			break;
		row_move(np.r[i], cols, s->prim.r[o], cols);
	}
	pc->row += pull - push;
	if (pc->row < 0)
		pc->row = 0;
	grid_free(&s->prim);
	s->prim = np;
	s->g = &s->prim;
	if (on_alt) {
		/* No scrollback here: the rows above go for good. */
		if (rows < orows) {
			drop = pos->row + 1 - rows;
			if (drop < 0)
				drop = 0;
		}
		for (i = 0; i < rows && i + drop < orows; i++)
			row_move(na.r[i], cols, s->alt.r[i + drop], cols);
		pos->row -= drop;
		grid_free(&s->alt);
		s->alt = na;
		s->g = &s->alt;
	}
	s->rows = rows;
	return 0;
}

/*
 * The new lines of a reflow (reflow.c), oldest first, packed as the
 * scrollback keeps them; borrowed[i] says v[i] is still the old ring's.
 */
struct rflines {
	uint8_t **v;
	uint16_t *meta;
	bool *borrowed;
	size_t n, cap;
};

struct rfctx {
	struct pty_screen *s;
	int ocols;
	struct rflines out;
	bool *kept;		/* old scrollback lines handed on as they are */
};

static int
rf_add(struct rfctx *c, uint8_t *e, uint16_t meta, bool borrowed)
{
	struct rflines *o = &c->out;

	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 64;
		uint8_t **v = realloc(o->v, sizeof *v * cap);
		uint16_t *m;
		bool *b;

		if (v == NULL)
			return -ENOMEM;
		o->v = v;
		m = realloc(o->meta, sizeof *m * cap);
		if (m == NULL)
			return -ENOMEM;
		o->meta = m;
		b = realloc(o->borrowed, sizeof *b * cap);
		if (b == NULL)
			return -ENOMEM;
		o->borrowed = b;
		o->cap = cap;
	}
	o->v[o->n] = e;
	o->meta[o->n] = meta;
	o->borrowed[o->n] = borrowed;
	o->n++;
	return 0;
}

/* A copy of the packed line in s->packbuf (len bytes after the header). */
static uint8_t *
rf_entry(struct pty_screen *s, size_t len)
{
	uint8_t *e = malloc(len + 2);

	if (e == NULL)
		return NULL;
	pty__line_put16(s->packbuf, (uint16_t)len);
	memcpy(e, s->packbuf, len + 2);
	return e;
}

static void
rf_peek(void *ud, size_t i, int *used, bool *wrapped)
{
	struct rfctx *c = ud;
	struct pty_screen *s = c->s;

	if (i < s->sb_count) {
		uint16_t m = s->sb_meta[sb_slot(s, i) - s->sb];

		*used = m & SBM_USED;
		*wrapped = (m & SBM_WRAPPED) != 0;
	} else {
		const struct row *r = s->prim.r[i - s->sb_count];

		*used = r->used;
		*wrapped = r->wrapped;
	}
}

static int
rf_get(void *ud, size_t i, struct pty_cell *cells, bool *wrapped)
{
	struct rfctx *c = ud;
	struct pty_screen *s = c->s;
	int used, k;

	rf_peek(ud, i, &used, wrapped);
	if (i < s->sb_count) {
		if (sb_unpack(s, i, cells, c->ocols) < 0)
			pty_cell_blank(cells, c->ocols);
	} else {
		const struct row *r = s->prim.r[i - s->sb_count];

		for (k = 0; k < c->ocols; k++)
			cell_export(r, &r->c[k], &cells[k]);
	}
	return used;
}

static int
rf_keep(void *ud, size_t i)
{
	struct rfctx *c = ud;
	struct pty_screen *s = c->s;
	uint8_t *e;
	int used;
	bool w;

	rf_peek(ud, i, &used, &w);
	if (i < s->sb_count) {
		if (rf_add(c, *sb_slot(s, i), (uint16_t)used, true) < 0)
			return -ENOMEM;
		c->kept[i] = true;
		return 0;
	}
	{
		const struct row *r = s->prim.r[i - s->sb_count];
		size_t len = row_pack(r, row_trimmed(r, c->ocols),
		    s->packbuf + 2);

		e = rf_entry(s, len);
	}
	if (e == NULL || rf_add(c, e, (uint16_t)used, false) < 0) {
		free(e);
		return -ENOMEM;
	}
	return 0;
}

static int
rf_put(void *ud, const struct pty_cell *cells, int n, bool wrapped)
{
	struct rfctx *c = ud;
	struct pty_screen *s = c->s;
	size_t len;
	uint8_t *e;

	/* Packed as the scrollback keeps it (trailing blanks trimmed). */
	len = pty_line_pack(cells, n, s->packbuf + 2, s->packbufsz - 2);
	e = len == 0 ? NULL : rf_entry(s, len);
	if (e == NULL || rf_add(c, e, (uint16_t)(n | (wrapped ? SBM_WRAPPED :
	    0)), false) < 0) {
		free(e);
		return -ENOMEM;
	}
	return 0;
}

static void
rf_free(struct rfctx *c)
{
	size_t i;

	for (i = 0; i < c->out.n; i++)
		if (!c->out.borrowed[i])
			free(c->out.v[i]);
	free(c->out.v);
	free(c->out.meta);
	free(c->out.borrowed);
	free(c->kept);
}

/*
 * The width changes (SPEC 4.5): the primary screen and its scrollback are
 * rewrapped (reflow.c), as tmux does, and *pc, its cursor, goes to the
 * same character (at_end: past the end of its line's text). The new
 * screen is the last rows lines; a cursor left above it goes home.
 */
static int
reflow_primary(struct pty_screen *s, int cols, VTermPos *pc, bool at_end)
{
	static const struct pty__reflow_io io_cbs = {
		.peek = rf_peek, .get = rf_get, .keep = rf_keep, .put = rf_put,
	};
	struct pty__reflow_io io = io_cbs;
	struct rfctx c = { .s = s, .ocols = s->cols };
	struct pty__reflow_cursor cur;
	struct grid np;
	uint8_t **ring = NULL;
	uint16_t *meta = NULL;
	size_t first, nsb, cap, i, bytes = 0;
	int rows = s->rows, k;

	io.nlines = s->sb_count + (size_t)rows;
	cur.line = s->sb_count + (size_t)(pc->row < rows ? pc->row : rows - 1);
	cur.col = pc->col;
	cur.at_end = at_end;
	if (grid_new(&np, rows, cols) < 0)
		return -ENOMEM;
	c.kept = calloc(s->sb_count + 1, sizeof *c.kept);
	if (c.kept == NULL || pty__reflow(&io, &c, s->cols, cols, &cur) < 0)
		goto nomem;
	first = c.out.n > (size_t)rows ? c.out.n - (size_t)rows : 0;
	nsb = first;
	if (nsb > s->sb_max)
		nsb = s->sb_max;
	cap = nsb < 64 ? 64 : nsb;
	if (cap > s->sb_max)
		cap = s->sb_max;
	if (cap > 0) {
		ring = malloc(sizeof *ring * cap);
		meta = malloc(sizeof *meta * cap);
		if (ring == NULL || meta == NULL)
			goto nomem;
	}
	/* Committed from here: nothing below fails. */
	for (k = 0; k < rows && first + (size_t)k < c.out.n; k++)
		row_from_packed(s, c.out.v[first + (size_t)k],
		    c.out.meta[first + (size_t)k], np.r[k], cols);
	for (i = 0; i < s->sb_count; i++)
		if (!c.kept[i])
			free(*sb_slot(s, i));
	for (i = 0; i < c.out.n; i++) {
		if (i >= first - nsb && i < first) {
			ring[i - (first - nsb)] = c.out.v[i];
			meta[i - (first - nsb)] = c.out.meta[i];
			bytes += sb_len(c.out.v[i]) + 2;
		} else {
			free(c.out.v[i]);
		}
	}
	free(s->sb);
	free(s->sb_meta);
	s->sb = ring;
	s->sb_meta = meta;
	s->sb_cap = cap;
	s->sb_head = 0;
	s->sb_count = nsb;
	s->sb_bytes = bytes + (sizeof *ring + sizeof *meta) * cap;
	free(c.out.v);
	free(c.out.meta);
	free(c.out.borrowed);
	free(c.kept);
	grid_free(&s->prim);
	s->prim = np;
	if (cur.line < first) {
		pc->row = 0;
		pc->col = 0;
	} else {
		pc->row = (int)(cur.line - first);
		pc->col = cur.col;
	}
	return 0;
nomem:
	free(ring);
	free(meta);
	rf_free(&c);
	grid_free(&np);
	return -ENOMEM;
}

/*
 * The width changes, the height stays: the primary screen is rewrapped
 * (or, out of memory, cut), the alternate screen cut or padded, as tmux
 * (a program on it draws it again at its new size).
 */
static int
resize_cols(struct pty_screen *s, int cols, VTermPos *pos, bool at_end)
{
	struct grid np, na;
	bool on_alt = s->g == &s->alt;
	VTermPos *pc = on_alt ? &s->saved[0].pos : pos;
	int i;

	if (grid_new(&np, s->rows, cols) < 0)
		return -ENOMEM;
	memset(&na, 0, sizeof na);
	if (on_alt && grid_new(&na, s->rows, cols) < 0) {
		grid_free(&np);
		return -ENOMEM;
	}
	if (reflow_primary(s, cols, pc, at_end) < 0) {
		for (i = 0; i < s->rows; i++)
			row_move(np.r[i], cols, s->prim.r[i], s->cols);
		grid_free(&s->prim);
		s->prim = np;
		if (pc->col >= cols)
			pc->col = cols - 1;
	} else {
		grid_free(&np);
	}
	if (on_alt) {
		for (i = 0; i < s->rows; i++)
			row_move(na.r[i], cols, s->alt.r[i], s->cols);
		grid_free(&s->alt);
		s->alt = na;
	}
	s->g = on_alt ? &s->alt : &s->prim;
	s->cols = cols;
	return 0;
}

int
pty_screen_resize(struct pty_screen *s, int rows, int cols)
{
	struct row **tmp;
	const struct row *cr;
	bool at_end;
	int n, rc = 0;
	char seq[48];
	VTermPos pos;

	if (s == NULL || rows < 1 || rows > 1000 || cols < 1 || cols > 1000)
		return -EINVAL;
	if (rows == s->rows && cols == s->cols)
		return 0;
	if (scratch_fit(s, cols > s->cols ? cols : s->cols) < 0)
		return -ENOMEM;
	tmp = realloc(s->tmp, sizeof *tmp * (size_t)(rows > s->rows ? rows :
	    s->rows));
	if (tmp == NULL)
		return -ENOMEM;
	s->tmp = tmp;
	vterm_state_get_cursorpos(s->vts, &pos);
	if (pos.row < 0 || pos.row >= s->rows)
		pos.row = pos.row < 0 ? 0 : s->rows - 1;
	if (pos.col < 0 || pos.col >= s->cols)
		pos.col = pos.col < 0 ? 0 : s->cols - 1;
	/*
	 * Past the end of the cursor row's text, or waiting to wrap after the
	 * last column: the cursor stays at the end of the rewrapped text.
	 */
	if (s->g == &s->alt) {
		VTermPos *sp = &s->saved[0].pos;

		cr = sp->row < s->rows ? s->prim.r[sp->row] : NULL;
		at_end = cr == NULL || sp->col >= cr->used;
	} else {
		cr = s->prim.r[pos.row];
		at_end = pos.col >= cr->used || (s->pw_row == pos.row &&
		    s->pw_end >= s->cols);
	}
	s->pw_row = PW_NONE;
	/* Out of memory, either half may not happen: the model stays whole. */
	if (rows != s->rows && resize_rows(s, rows, &pos) < 0)
		rc = -ENOMEM;
	if (cols != s->cols && resize_cols(s, cols, &pos, at_end) < 0)
		rc = -ENOMEM;
	rows = s->rows;
	cols = s->cols;
	s->resize_delta = 0;
	vterm_set_size(s->vt, rows, cols);
	/*
	 * Like xterm and tmux, a resize resets the margins: 0.1.4 keeps a top
	 * margin that may now lie below the screen and then scrolls a
	 * negative height. The cursor goes where the rewrap put it. A
	 * sequence cut by the resize is dropped, so the filter and libvterm
	 * stay in step.
	 */
	if (pos.row >= rows)
		pos.row = rows - 1;
	if (pos.col >= cols)
		pos.col = cols - 1;
	n = snprintf(seq, sizeof seq, "\030\033[r\033[s\033[%d;%dH",
	    pos.row + 1, pos.col + 1);
	vwrite(s, seq, (size_t)n);
	pty__vtfilter_cut(&s->f);
	vterm_state_get_cursorpos(s->vts, &pos);
	s->cur.row = pos.row < rows ? pos.row : rows - 1;
	s->cur.col = pos.col < cols ? pos.col : cols - 1;
	s->pw_row = PW_NONE;
	if (s->dlast >= rows)
		s->dlast = rows - 1;
	dirty_all(s);
	return rc;
}

void
pty_screen_size(const struct pty_screen *s, int *rows, int *cols)
{
	assert(s != NULL);
	if (rows != NULL)
		*rows = s->rows;
	if (cols != NULL)
		*cols = s->cols;
}

static void
cell_export(const struct row *r, const struct cell *c, struct pty_cell *o)
{
	uint32_t cps[PTY_CELL_MAXCP];
	int n = cell_cps(r, c, cps);

	memset(o, 0, sizeof *o);
	memcpy(o->cp, cps, sizeof cps[0] * (size_t)n);
	o->fg = FG_COLOR(c->fg);
	o->bg = c->bg;
	o->attrs = cell_attrs(c);
	o->width = (uint8_t)W_WIDTH(c->w);
}

void
pty_screen_cell(const struct pty_screen *s, int row, int col,
    struct pty_cell *out)
{
	const struct row *r;

	assert(s != NULL && out != NULL);
	if (row < 0 || row >= s->rows || col < 0 || col >= s->cols) {
		pty_cell_blank(out, 1);
		return;
	}
	r = s->g->r[row];
	cell_export(r, &r->c[col], out);
}

size_t
pty_screen_row_pack(const struct pty_screen *s, int row, uint8_t *buf,
    size_t bufsz)
{
	const struct row *r;
	int n;

	assert(s != NULL);
	if (row < 0 || row >= s->rows || buf == NULL)
		return 0;
	r = s->g->r[row];
	n = row_trimmed(r, s->cols);
	if (bufsz < pty_line_packed_max(n))
		return 0;
	return row_pack(r, n, buf);
}

bool
pty_screen_dirty(const struct pty_screen *s, int *first, int *last)
{
	int a, b;

	assert(s != NULL);
	a = s->dfirst < 0 ? 0 : s->dfirst;
	b = s->dlast >= s->rows ? s->rows - 1 : s->dlast;
	if (b < 0 || a > b)
		return false;
	if (first != NULL)
		*first = a;
	if (last != NULL)
		*last = b;
	return true;
}

void
pty_screen_dirty_clear(struct pty_screen *s)
{
	assert(s != NULL);
	s->dfirst = INT_MAX;
	s->dlast = -1;
}

void
pty_screen_cursor(const struct pty_screen *s, struct pty_cursor *out)
{
	assert(s != NULL && out != NULL);
	*out = s->cur;
	/* libvterm may report a position from before a resize: clamp. */
	if (out->row >= s->rows)
		out->row = s->rows - 1;
	if (out->col >= s->cols)
		out->col = s->cols - 1;
	if (out->row < 0)
		out->row = 0;
	if (out->col < 0)
		out->col = 0;
}

void
pty_screen_modes(const struct pty_screen *s, struct pty_modes *out)
{
	assert(s != NULL && out != NULL);
	*out = s->modes;
	out->app_cursor = s->f.app_cursor;
	out->app_keypad = s->f.app_keypad;
	out->bracketed_paste = s->f.bracketed_paste;
	out->mouse_sgr = s->f.mouse_sgr;
	out->focus_events = s->f.focus_events;
}

const char *
pty_screen_title(const struct pty_screen *s)
{
	assert(s != NULL);
	return s->title;
}

uint64_t
pty_screen_bells(const struct pty_screen *s)
{
	assert(s != NULL);
	return s->bells;
}

size_t
pty_screen_sb_count(const struct pty_screen *s)
{
	assert(s != NULL);
	return s->sb_count;
}

int
pty_screen_sb_line(const struct pty_screen *s, size_t idx,
    struct pty_cell *cells, int maxcols)
{
	assert(s != NULL);
	if (idx >= s->sb_count || maxcols < 0 || (cells == NULL && maxcols))
		return -EINVAL;
	return sb_unpack(s, idx, cells, maxcols);
}

size_t
pty_screen_sb_bytes(const struct pty_screen *s)
{
	assert(s != NULL);
	return s->sb_bytes;
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

size_t
pty_screen_row_text(const struct pty_screen *s, int row, char *buf,
    size_t bufsz)
{
	const struct row *r;
	size_t len = 0;
	int n, i, k;

	assert(s != NULL);
	if (buf == NULL || bufsz == 0)
		return 0;
	buf[0] = '\0';
	if (row < 0 || row >= s->rows)
		return 0;
	r = s->g->r[row];
	for (n = s->cols; n > 0; n--) {
		uint32_t w = r->c[n - 1].w;

		if ((w & W_COMB) || ((w & W_CP) != 0 && (w & W_CP) != ' '))
			break;
	}
	for (i = 0; i < n; i++) {
		const struct cell *c = &r->c[i];
		uint32_t cps[PTY_CELL_MAXCP];
		uint8_t tmp[PTY__CELL_TEXTMAX];
		size_t tl = 0;
		int m;

		if (W_WIDTH(c->w) == 0)
			continue;
		m = cell_cps(r, c, cps);
		if (m == 0)
			tmp[tl++] = ' ';
		for (k = 0; k < m; k++)
			tl += (size_t)pty__cell_utf8_put(tmp + tl, cps[k]);
		if (len + tl + 1 > bufsz)
			break;
		memcpy(buf + len, tmp, tl);
		len += tl;
	}
	buf[len] = '\0';
	return len;
}
