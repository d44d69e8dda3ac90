/*
 * screen.c: the pure terminal model of one endpoint (SPEC 4.1, 4.5; STYLE
 * A, F). libvterm's state layer parses the bytes and reports glyphs,
 * scrolls and erases; the cells live in our own grid of row pointers (a
 * full-width scroll rotates pointers, it never moves cells), and lines
 * scrolled off the primary screen go packed (line.c) into a capped ring.
 * The only file that includes <vterm.h>.
 *
 * A filter sits in front of libvterm 0.1.4 (see pty_screen_feed): that
 * version mishandles bytes split across writes, puts whole strings and text
 * runs into stack arrays and has a few memory-safety bugs that bytes from
 * a sandboxed agent must not reach. The filter also writes long runs of
 * plain ASCII into the grid itself (fast_run), libvterm's slowest path.
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vterm.h>

#include "pty/pty.h"
#include "pty/pty_int.h"

/* Bytes of an OSC/DCS payload passed on (and reported); the rest dropped. */
#define OSC_MAX 4096
/*
 * Bytes per vterm_input_write: 0.1.4 keeps a codepoint array of the write's
 * length on the stack (a 16 MB write overflows it).
 */
#define WRITE_MAX 8192
/* DECSET parameters the filter remembers per CSI (as libvterm's 16). */
#define NPARAM 16
/* Scrollback lines, whatever the caller asks. */
#define SB_LIMIT (1u << 22)

/*
 * Our cell, 12 bytes. w packs the character and its looks:
 *   bits 0-20  the codepoint, or an index into the row's combining store
 *   bits 21-22 width (1, 2 = left half of a wide char, 0 = right half)
 *   bit 23     the low bits are a combining-store index
 *   bits 24-31 PTY_ATTR_* bits
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

/* A base character with its combining marks. */
struct comb {
	uint32_t cp[PTY_CELL_MAXCP];
};

/*
 * One row. Cells whose w has W_COMB point into comb[]; entries nobody
 * points at any more are collected when the store fills (comb_gc).
 */
struct row {
	struct comb *comb;
	uint16_t ncomb, combcap;
	struct cell c[];
};

/* A screen's worth of rows, in one block; r[] is the visible order. */
struct grid {
	int rows, cols;
	size_t stride;
	char *block;
	struct row **r;
};

/* Filter states (see feed). */
enum { F_GROUND, F_ESC, F_ESC_INT, F_CSI, F_STR, F_STR_ESC };
enum { S_OSC, S_DCS, S_IGNORE };

struct filt {
	uint8_t st;
	uint8_t skind;
	bool esc_virtual;	/* the pending ESC was not passed on yet */
	bool csi_priv;		/* leader '?' */
	bool csi_other;		/* another leader, or junk */
	bool csi_started;	/* past the leader bytes */
	uint8_t csi_inter;	/* last intermediate byte, 0 if none */
	uint8_t np;
	uint32_t param[NPARAM];
	uint8_t u8[4];		/* held partial UTF-8 at the end of a feed */
	uint8_t nu8;
	bool struncated;
	uint8_t esc_inter;	/* first intermediate after ESC */
	uint8_t esc_ninter;
	/* What the ASCII fast path (fast_run) must know of libvterm. */
	bool insert;		/* IRM */
	bool origin;		/* DECOM */
	uint8_t gl;		/* G-set in GL: SI/SO/LS2/LS3 */
	bool g_plain[4];	/* G0..G3 map ASCII to itself */
	bool nofast;		/* a check failed: never again */
	uint8_t text_end;	/* the last feed ended inside text (TB_*) */
	bool g_utf8[4];		/* G0..G3 still decode UTF-8 (undesignated) */
	bool ss;		/* a single shift (ESC N, ESC O) is pending */
	size_t slen;		/* bytes in sbuf, introducer included */
	char sbuf[2 + OSC_MAX + 2];
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
	VTerm *orc;		/* a 1x4 libvterm asked what combines */
	bool orc_merged;

	/* Scrollback: each line is u16 length + packed bytes. */
	uint8_t **sb;
	size_t sb_max, sb_cap, sb_head, sb_count, sb_bytes;
	uint8_t *packbuf;
	size_t packbufsz;
	struct pty_cell *cellbuf;
	int cellbufn;

	pty_screen_output_cb out;
	void *out_ud;
	pty_screen_event_cb ev;
	void *ev_ud;

	struct filt f;
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

	pty__put16(buf, (uint16_t)n);
	for (i = 0; i < n; i++) {
		const struct cell *c = &r->c[i];
		uint32_t w = c->w, a = w >> W_ASHIFT, cp;

		if (run == NULL || c->fg != fg || c->bg != bg || a != attrs) {
			if (run != NULL)
				pty__put16(run, count);
			run = p;
			p = pty__line_run(p, c->fg, c->bg, (uint16_t)a);
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
		pty__put16(run, count);
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
	pty__put16(s->packbuf, (uint16_t)len);
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

		assert(s->sb_head == 0);
		if (cap > s->sb_max)
			cap = s->sb_max;
		n = realloc(s->sb, sizeof *n * cap);
		if (n == NULL)
			return;
		s->sb_bytes += sizeof *n * (cap - s->sb_cap);
		s->sb = n;
		s->sb_cap = cap;
	}
	slot = sb_slot(s, s->sb_count);
	e = realloc(old, len);
	if (e == NULL) {
		free(old);
		return;
	}
	memcpy(e, s->packbuf, len);
	*slot = e;
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
		w |= (uint32_t)(c->attrs & PTY__ATTR_ALL) << W_ASHIFT;
		r->c[i].w = w;
		r->c[i].fg = c->fg;
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
	if (width == 1 && info->chars[1] == 0 && W_WIDTH(c->w) == 1) {
		/* The common case: nothing wide or combined around. */
		c->w = cp | W_BLANK | s->pen_attrs;
		c->fg = s->pen_fg;
		c->bg = s->pen_bg;
		s->rep_cp[0] = cp;
		s->rep_n = 1;
		return 1;
	}
	if (width < 1)
		width = 1;
	else if (width > 2)
		width = 2;
	if (width == 2 && pos.col + 1 >= g->cols)
		width = 1;
	for (n = 1; n < PTY_CELL_MAXCP && n < VTERM_MAX_CHARS_PER_CELL &&
	    info->chars[n] != 0; n++)
		;
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
		if (rc.start_col == 0 && rc.end_col == g->cols)
			r->ncomb = 0;
		else
			fix_edges(r, g->cols, rc.start_col, rc.end_col);
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
			}
		} else {
			memcpy(s->tmp, rr + h - n, sizeof *rr * (size_t)n);
			memmove(rr + n, rr, sizeof *rr * (size_t)(h - n));
			memcpy(rr, s->tmp, sizeof *rr * (size_t)n);
			for (i = 0; i < n; i++) {
				row_fill(rr[i], 0, g->cols, v);
				rr[i]->ncomb = 0;
			}
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
		s->pen_fg = color_from(&val->color);
		break;
	case VTERM_ATTR_BACKGROUND:
		s->pen_bg = color_from(&val->color);
		break;
	default:
		/* Fonts (SGR 10-19) are not kept; 0.1.4 has no conceal. */
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
	emit(ud, PTY_SEV_OSC, cmd, len > OSC_MAX ? OSC_MAX : len);
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
/* The input filter                                                      */

/*
 * Every byte passes through a small escape-sequence tracker before
 * libvterm sees it. It
 *  - tracks the modes libvterm 0.1.4 has no getter for: DECSET 1 (app
 *    cursor), 1004 (focus), 1006 (SGR mouse), 2004 (bracketed paste), ESC =
 *    / ESC > (keypad), reset by RIS, whatever the chunking, and in step
 *    with libvterm (which encodes the keys from its own copy);
 *  - takes OSC and DCS strings out of the stream and hands each to
 *    libvterm whole, in one write, its payload cut to OSC_MAX bytes
 *    (0.1.4 loses strings split across writes, reads before the buffer on
 *    an ST split after its ESC, and copies a title to the stack);
 *    APC/PM/SOS strings are dropped, as xterm does, and DECRQSS requests
 *    0.1.4 would answer through a broken printf are answered here;
 *  - holds back a UTF-8 sequence cut at the end of a feed (0.1.4 turns it
 *    into U+FFFD), drops what its UTF-8 decoder mishandles and the few
 *    characters it gets wrong (text_check),
 *    reimplements REP (rep), bounds CSI parameters, and writes at most
 *    WRITE_MAX bytes at a time.
 * Plain text is found with memchr and passed on in place.
 */

static void
vwrite(struct pty_screen *s, const void *p, size_t n)
{
	if (n > 0)
		vterm_input_write(s->vt, p, n);
}

static void
flush(struct pty_screen *s, const uint8_t *b, size_t from, size_t to)
{
	while (from < to) {
		size_t n = to - from;

		if (n > WRITE_MAX) {
			int k = 0;

			/*
			 * Split before an ASCII byte if one is near: never
			 * inside a character, nor before a combining mark.
			 */
			for (n = WRITE_MAX; n > WRITE_MAX - 256; n--)
				if (b[from + n] < 0x80)
					break;
			if (n == WRITE_MAX - 256) {
				n = WRITE_MAX;
				while (k < 3 && (b[from + n] & 0xc0) == 0x80) {
					n--;
					k++;
				}
			}
		}
		vwrite(s, b + from, n);
		from += n;
	}
}

static int
utf8_need(uint8_t b)
{
	if (b >= 0xf0)
		return 4;
	if (b >= 0xe0)
		return 3;
	if (b >= 0xc0)
		return 2;
	return 1;
}

/* The codepoint of one complete UTF-8 sequence p[0..n); -1 if not one. */
static int
utf8_cell_cp(const uint8_t *p, int n, uint32_t *cp)
{
	uint32_t v;
	int k;

	if (n < 1 || n != utf8_need(p[0]) || p[0] >= 0xf8)
		return -1;
	v = n == 1 ? p[0] : p[0] & (0x7fu >> n);
	for (k = 1; k < n; k++) {
		if ((p[k] & 0xc0) != 0x80)
			return -1;
		v = (v << 6) | (p[k] & 0x3fu);
	}
	/* What 0.1.4's decoder turns into U+FFFD is not a mark either. */
	if ((n == 2 && v < 0x80) || (n == 3 && v < 0x800) ||
	    (n == 4 && v < 0x10000) || (v >= 0xd800 && v <= 0xdfff) ||
	    v == 0xfffe || v == 0xffff)
		return -1;
	*cp = v;
	return 0;
}

/* Bytes at the end of p[0..n) that start an unfinished UTF-8 sequence. */
static size_t
utf8_tail(const uint8_t *p, size_t n)
{
	size_t j = n, k = 0;

	while (j > 0 && k < 3 && (p[j - 1] & 0xc0) == 0x80) {
		j--;
		k++;
	}
	if (j == 0 || p[j - 1] < 0xc0 || p[j - 1] > 0xf7)
		return 0;
	j--;
	return (size_t)utf8_need(p[j]) > n - j ? n - j : 0;
}

static void
modes_reset(struct pty_screen *s)
{
	s->modes.app_cursor = false;
	s->modes.app_keypad = false;
	s->modes.bracketed_paste = false;
	s->modes.mouse_sgr = false;
	s->modes.focus_events = false;
	s->f.insert = false;
	s->f.origin = false;
	s->f.gl = 0;
	memset(s->f.g_plain, 1, sizeof s->f.g_plain);
	memset(s->f.g_utf8, 1, sizeof s->f.g_utf8);
	s->f.ss = false;
}

static void
dec_mode(struct pty_screen *s, uint32_t p, bool on)
{
	switch (p) {
	case 1:
		s->modes.app_cursor = on;
		break;
	case 6:
		s->f.origin = on;
		break;
	case 1004:
		s->modes.focus_events = on;
		break;
	case 1006:
		s->modes.mouse_sgr = on;
		break;
	case 2004:
		s->modes.bracketed_paste = on;
		break;
	default:
		break;
	}
}

static void
csi_final(struct pty_screen *s, uint8_t c)
{
	struct filt *f = &s->f;
	int i;

	if (f->csi_other)
		return;
	/* DECSTR (CSI ! p) is left alone: libvterm 0.1.4 ignores it too. */
	if (f->csi_inter != 0 || (c != 'h' && c != 'l'))
		return;
	for (i = 0; i <= f->np; i++) {
		if (f->csi_priv)
			dec_mode(s, f->param[i], c == 'h');
		else if (f->param[i] == 4)
			f->insert = c == 'h';
	}
}

/* C0 controls that switch the G-set in GL (executed in any state). */
static void
c0_track(struct filt *f, uint8_t c)
{
	if (c == 0x0e)
		f->gl = 1;
	else if (c == 0x0f)
		f->gl = 0;
}

/* ESC I F with one intermediate: G-set designations (SCS). */
static void
esc_final(struct filt *f, uint8_t c)
{
	int g = -1;

	if (f->esc_ninter != 1)
		return;
	switch (f->esc_inter) {
	case '(':
	case ')':
	case '*':
	case '+':
		g = f->esc_inter - '(';
		break;
	default:
		return;
	}
	/* 0.1.4 knows 'B' (ASCII), '0' (DEC graphics), 'A' (UK). */
	if (c == 'B')
		f->g_plain[g] = true;
	else if (c == '0' || c == 'A')
		f->g_plain[g] = false;
	if (c == 'B' || c == '0' || c == 'A')
		f->g_utf8[g] = false;
}

static void
str_append(struct filt *f, const uint8_t *p, size_t n)
{
	size_t room = 2 + OSC_MAX - f->slen;

	if (f->skind == S_IGNORE)
		return;
	if (n > room) {
		n = room;
		f->struncated = true;
	}
	memcpy(f->sbuf + f->slen, p, n);
	f->slen += n;
}

/*
 * DECRQSS (DCS $ q ...) requests libvterm 0.1.4 answers itself; for any
 * other its reply goes through printf with a "%.s" that takes the length
 * as the string pointer (undefined behaviour, a crash under ASan), so we
 * answer those here. DCS strings that are not DECRQSS are harmless.
 */
static bool
decrqss_ok(const char *p, size_t n)
{
	if (n < 2 || p[0] != '$' || p[1] != 'q')
		return true;
	p += 2;
	n -= 2;
	if (n == 1)
		return p[0] == 'm' || p[0] == 'r' || p[0] == 's';
	if (n == 2)
		return (p[0] == ' ' || p[0] == '"') && p[1] == 'q';
	return false;
}

static void
str_done(struct pty_screen *s)
{
	struct filt *f = &s->f;
	size_t n = f->slen;

	if (f->skind == S_IGNORE)
		return;
	if (f->struncated)
		n -= utf8_tail((const uint8_t *)f->sbuf + 2, n - 2);
	if (f->skind == S_DCS && !decrqss_ok(f->sbuf + 2, n - 2)) {
		/* What xterm (and libvterm) answer to an unknown request. */
		cb_output("\033P0$r\033\\", 7, s);
		return;
	}
	if (f->skind == S_OSC) {
		f->sbuf[n++] = '\a';
	} else {
		f->sbuf[n++] = '\033';
		f->sbuf[n++] = '\\';
	}
	vwrite(s, f->sbuf, n);
}

static bool
is_str_intro(uint8_t c)
{
	return c == ']' || c == 'P' || c == '_' || c == '^' || c == 'X';
}

/* Bytes of U+0080..U+009F in UTF-8: 0.1.4 gives them width -1. */
static bool
is_c1(const uint8_t *p)
{
	return p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f;
}

/*
 * U+302A-302F and U+3099-309A (3 bytes of UTF-8): 0.1.4 has them both as
 * combining marks and as wide, and adds their width to the glyph they join
 * (a 3-column glyph) unless they arrive in a later write. Dropped.
 */
static bool
is_wide_mark(const uint8_t *p)
{
	return p[0] == 0xe3 && ((p[1] == 0x80 && p[2] >= 0xaa &&
	    p[2] <= 0xaf) || (p[1] == 0x82 && (p[2] == 0x99 ||
	    p[2] == 0x9a)));
}

static bool
all_ascii(const uint8_t *p, size_t n)
{
	uint64_t acc = 0, w;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		acc |= w;
	}
	for (; i < n; i++)
		acc |= p[i];
	return (acc & 0x8080808080808080ull) == 0;
}

static void
drop(struct pty_screen *s, const uint8_t *b, size_t *span, size_t at,
    size_t n)
{
	flush(s, b, *span, at);
	*span = at + n;
}

/* What the last byte passed on in ground was (see split_mark). */
#define TB_NONE 0	/* not text: a control, an escape, nothing yet */
#define TB_ASCII 1	/* an ASCII glyph */
#define TB_UTF8 2	/* a glyph from a multibyte sequence, or U+FFFD */

static bool split_mark(struct pty_screen *, const uint8_t *, int);

/*
 * Drop b[k..k+n) (what is before goes to libvterm first). The drop splits
 * a text run across two writes: when text came before (tb), marks right
 * after it are merged as if unsplit (split_mark). Returns where to go on.
 */
static size_t
drop_at(struct pty_screen *s, const uint8_t *b, size_t *span, size_t k,
    size_t n, size_t end, uint8_t tb)
{
	drop(s, b, span, k, n);
	k += n;
	while (tb != TB_NONE && k < end && b[k] >= 0xc0 && b[k] < 0xf8) {
		size_t q = (size_t)utf8_need(b[k]);

		if (q > end - k || !split_mark(s, b + k, (int)q))
			break;
		k += q;
		*span = k;
	}
	return k;
}

/*
 * Text b[i..end) is passed on later from *span; leave out what 0.1.4's
 * UTF-8 decoder mishandles. Its state outlives a text run, and a run that
 * starts while a sequence is unfinished writes one codepoint past its
 * stack array; so every unfinished sequence is dropped (one cut by the
 * end of this feed, when end == len, is left for the caller to hold), and
 * so are bytes 0xf8-0xff (5- and 6-byte forms), C1 codepoints and the
 * wide marks (is_wide_mark). *tb tells whether the last byte passed on
 * was text (so a mark would join the glyph before it). Returns whether
 * the text was all ASCII.
 */
static bool
text_check(struct pty_screen *s, const uint8_t *b, size_t *span, size_t i,
    size_t end, size_t len, uint8_t *tb)
{
	size_t k;

	if (!s->f.ss && all_ascii(b + i, end - i)) {
		if (end > i)
			*tb = b[end - 1] >= 0x20 && b[end - 1] != 0x7f ?
			    TB_ASCII : TB_NONE;
		return true;
	}
	for (k = i; k < end; k++) {
		uint8_t c = b[k], kind;
		int need, m;

		if (c < 0x20 || c == 0x7f) {
			if (c < 0x20)
				c0_track(&s->f, c);
			*tb = TB_NONE;
			continue;
		}
		if (c < 0x80) {
			/*
			 * 0.1.4 decodes a run that started non-ASCII as UTF-8
			 * to its end, ignoring a G-set such as DEC graphics
			 * for the ASCII in it; a new write puts it back.
			 */
			if (*tb == TB_UTF8 && !s->f.g_plain[s->f.gl]) {
				flush(s, b, *span, k);
				*span = k;
			}
			kind = TB_ASCII;
		} else if (c < 0xc0) {
			kind = TB_UTF8;	/* a stray byte: shown as U+FFFD */
		} else if (c >= 0xf8) {
			k = drop_at(s, b, span, k, 1, end, *tb) - 1;
			continue;
		} else {
			need = utf8_need(c);
			for (m = 1; m < need && k + (size_t)m < end &&
			    (b[k + (size_t)m] & 0xc0) == 0x80; m++)
				;
			if (m != need) {
				if (k + (size_t)m == end && end == len)
					break;
				k = drop_at(s, b, span, k, (size_t)m, end,
				    *tb) - 1;
				continue;
			}
			if ((need == 2 && is_c1(b + k)) ||
			    (need == 3 && is_wide_mark(b + k))) {
				k = drop_at(s, b, span, k, (size_t)need, end,
				    *tb) - 1;
				continue;
			}
			if (*tb == TB_ASCII && !s->f.g_utf8[s->f.gl]) {
				/*
				 * Under a designated G-set libvterm ends the
				 * run here and a mark would not join the glyph
				 * before it at the right edge; a write of its
				 * own lets split_mark join it, as it does for
				 * a mark split off by a read.
				 */
				flush(s, b, *span, k);
				*span = k;
				if (split_mark(s, b + k, need)) {
					*span = k + (size_t)need;
					k += (size_t)need - 1;
					continue;
				}
			}
			k += (size_t)need - 1;
			kind = TB_UTF8;
		}
		if (s->f.ss) {
			/*
			 * This glyph uses up the single shift; libvterm
			 * prints it alone, so no mark of ours joins it.
			 */
			s->f.ss = false;
			*tb = TB_NONE;
		} else {
			*tb = kind;
		}
	}
	return false;
}

/*
 * The ASCII fast path. libvterm spends most of its time per glyph; for a
 * run of printable ASCII we pass its first byte on as usual (which wraps
 * a pending autowrap and uses up a single shift), then, when the rest but
 * the last byte fits on the row without reaching its end, write those
 * cells ourselves and move libvterm's cursor over them with CUF, and pass
 * the last byte on (so combining marks and REP find it). Only while the
 * G-set in use maps ASCII to itself, insert and origin modes are off and
 * the line is not double width; the cursor is checked after the CUF.
 */
#define FAST_MIN 16

static void
fast_run(struct pty_screen *s, const uint8_t *b, size_t *span, size_t r0,
    size_t r1)
{
	struct grid *g;
	const VTermLineInfo *li;
	struct row *r;
	struct cell *c;
	VTermPos pos;
	size_t m = r1 - r0 - 2, k;
	uint32_t a;
	char seq[16];
	size_t n = sizeof seq, v;

	/* Only after the flush are the grid and the pen current. */
	flush(s, b, *span, r0 + 1);
	*span = r0 + 1;
	g = s->g;
	vterm_state_get_cursorpos(s->vts, &pos);
	if (pos.row < 0 || pos.row >= g->rows || pos.col < 0 ||
	    (size_t)pos.col + m >= (size_t)g->cols)
		return;
	li = vterm_state_get_lineinfo(s->vts, pos.row);
	if (li == NULL || li->doublewidth)
		return;
	a = W_BLANK | s->pen_attrs;
	r = g->r[pos.row];
	c = r->c + pos.col;
	for (k = 0; k < m; k++) {
		c[k].w = a | b[r0 + 1 + k];
		c[k].fg = s->pen_fg;
		c[k].bg = s->pen_bg;
	}
	fix_edges(r, g->cols, pos.col, pos.col + (int)m);
	dirty(s, pos.row, pos.row);
	/* CSI m C, formatted by hand: this runs once per line of text. */
	seq[--n] = 'C';
	for (v = m; v > 0 || n == sizeof seq - 1; v /= 10)
		seq[--n] = (char)('0' + v % 10);
	seq[--n] = '[';
	seq[--n] = '\033';
	vwrite(s, seq + n, sizeof seq - n);
	*span = r1 - 1;
	pos.col += (int)m;
	{
		VTermPos now;

		vterm_state_get_cursorpos(s->vts, &now);
		if (now.row != pos.row || now.col != pos.col)
			s->f.nofast = true;
	}
}

/* Ground text b[i..end), all ASCII: find runs for fast_run, track SI/SO. */
static void
ground_ascii(struct pty_screen *s, const uint8_t *b, size_t *span, size_t i,
    size_t end)
{
	struct filt *f = &s->f;
	size_t k = i, r0;

	while (k < end) {
		r0 = k;
		while (k < end && b[k] >= 0x20 && b[k] < 0x7f)
			k++;
		if (k - r0 >= FAST_MIN && !f->insert && !f->origin &&
		    f->g_plain[f->gl] && !f->nofast)
			fast_run(s, b, span, r0, k);
		while (k < end && (b[k] < 0x20 || b[k] == 0x7f))
			c0_track(f, b[k++]);
	}
}

/*
 * REP (CSI Pn b): 0.1.4 loops forever when the last glyph had width 0 (or
 * none was printed), so we print the last glyph again ourselves, as xterm
 * does, at most a screenful of times.
 */
static void
rep(struct pty_screen *s, uint32_t count)
{
	uint8_t buf[512];
	size_t n = 0, gl = 0;
	uint8_t g[PTY__CELL_TEXTMAX];
	uint32_t max = (uint32_t)s->rows * (uint32_t)s->cols;
	int k;

	if (s->rep_n == 0)
		return;
	for (k = 0; k < s->rep_n; k++)
		gl += (size_t)pty__utf8_put(g + gl, s->rep_cp[k]);
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

/*
 * 0.1.4 restores a saved cursor (ESC 8, DECRST 1048/1049) without
 * clamping it to a screen that shrank since: put it back inside before any
 * text lands there.
 */
static void
cursor_clamp(struct pty_screen *s)
{
	VTermPos pos;
	char seq[32];
	int n;

	vterm_state_get_cursorpos(s->vts, &pos);
	if (pos.row >= 0 && pos.row < s->rows && pos.col >= 0 &&
	    pos.col < s->cols)
		return;
	n = snprintf(seq, sizeof seq, "\033[%d;%dH",
	    pos.row < 0 ? 1 : pos.row >= s->rows ? s->rows : pos.row + 1,
	    pos.col < 0 ? 1 : pos.col >= s->cols ? s->cols : pos.col + 1);
	vwrite(s, seq, (size_t)n);
}

static bool
csi_restores(const struct filt *f)
{
	int i;

	for (i = 0; i <= f->np; i++)
		if (f->param[i] == 1048 || f->param[i] == 1049)
			return true;
	return false;
}

static void
csi_start(struct filt *f)
{
	f->st = F_CSI;
	f->csi_priv = f->csi_other = false;
	f->csi_started = false;
	f->csi_inter = 0;
	f->np = 0;
	f->param[0] = 0;
}

static void
str_start(struct filt *f, uint8_t c)
{
	f->st = F_STR;
	f->skind = c == ']' ? S_OSC : c == 'P' ? S_DCS : S_IGNORE;
	f->sbuf[0] = '\033';
	f->sbuf[1] = (char)c;
	f->slen = 2;
	f->struncated = false;
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
	n = pty__utf8_put(buf + 2, cp);
	s->orc_merged = false;
	vterm_input_write(s->orc, (const char *)buf, (size_t)n + 2);
	return s->orc_merged;
}

/*
 * A combining mark (one UTF-8 sequence at p) that starts a libvterm write
 * right after text: a feed that starts with it, or one of our own splits.
 * Within one text run libvterm joins it to the glyph before; at the start
 * of a run it does so only if its cursor moved past that glyph, and at the
 * right edge (a pending wrap) it instead wraps and prints the mark alone.
 * So there we join it ourselves and libvterm never sees it. Returns
 * whether we did. The rule a user sees: a mark joins the glyph before it
 * unless a control or an escape comes between, however the bytes arrive.
 */
static bool
split_mark(struct pty_screen *s, const uint8_t *p, int n)
{
	struct grid *g = s->g;
	uint32_t cps[PTY_CELL_MAXCP], cp;
	struct row *r;
	struct cell *c;
	VTermPos pos;
	int k, idx;

	if (!s->lg_valid || n < 2 || utf8_cell_cp(p, n, &cp) < 0)
		return false;
	vterm_state_get_cursorpos(s->vts, &pos);
	if (pos.row != s->lg_row || pos.col != s->lg_col ||
	    s->lg_row >= g->rows || s->lg_col >= g->cols)
		return false;
	if (!orc_combining(s, cp))
		return false;
	r = g->r[s->lg_row];
	c = &r->c[s->lg_col];
	k = cell_cps(r, c, cps);
	if (k > 0 && k < PTY_CELL_MAXCP) {
		uint32_t keep = c->w & ~(W_CP | W_COMB);

		cps[k++] = cp;
		c->w = W_BLANK;
		idx = comb_add(r, g->cols, cps, k);
		c->w = keep | (idx < 0 ? cps[0] : ((uint32_t)idx | W_COMB));
		if (s->rep_n > 0 && s->rep_n < PTY_CELL_MAXCP)
			s->rep_cp[s->rep_n++] = cp;
		dirty(s, s->lg_row, s->lg_row);
	}
	return true;
}

/*
 * The filter mirrors libvterm 0.1.4's parser (src/parser.c) state by
 * state, so that what it passes on, holds back or drops never leaves the
 * two disagreeing about where a sequence starts or ends.
 */
void
pty_screen_feed(struct pty_screen *s, const char *buf, size_t len)
{
	const uint8_t *b = (const uint8_t *)buf;
	struct filt *f;
	size_t i = 0, span = 0;
	uint8_t tb;

	if (s == NULL || buf == NULL || len == 0)
		return;
	f = &s->f;
	tb = f->text_end;
	if (f->nu8 > 0) {
		int need = utf8_need(f->u8[0]);

		while (f->nu8 < need && i < len && (b[i] & 0xc0) == 0x80)
			f->u8[f->nu8++] = b[i++];
		if (f->nu8 < need && i == len)
			return;
		/* Unfinished, C1 or a wide mark: dropped, as in text_check. */
		if (f->nu8 == need && !(f->nu8 == 2 && is_c1(f->u8)) &&
		    !(f->nu8 == 3 && is_wide_mark(f->u8))) {
			if (!(tb != TB_NONE && split_mark(s, f->u8, f->nu8)))
				vwrite(s, f->u8, f->nu8);
			tb = f->ss ? TB_NONE : TB_UTF8;
			f->ss = false;
		}
		f->nu8 = 0;
		span = i;
	}
	if (tb != TB_NONE && f->st == F_GROUND) {
		while (i < len && b[i] >= 0xc0 && b[i] < 0xf8) {
			size_t n = (size_t)utf8_need(b[i]);

			if (n > len - i || !split_mark(s, b + i, (int)n))
				break;
			i += n;
			span = i;
		}
	}
	f->text_end = TB_NONE;
	while (i < len) {
		uint8_t c = b[i];

		switch (f->st) {
		case F_GROUND: {
			const uint8_t *e = memchr(b + i, 0x1b, len - i);
			size_t end = e != NULL ? (size_t)(e - b) : len;

			if (text_check(s, b, &span, i, end, len, &tb))
				ground_ascii(s, b, &span, i, end);
			i = end;
			if (e == NULL)
				break;
			goto esc;
		}
		case F_ESC:
		case F_ESC_INT:
			if (c == 0x1b)
				goto esc;
			if (c == 0x18 || c == 0x1a) {
				/* Cancelled (in libvterm too, if passed). */
				f->st = F_GROUND;
				i++;
				break;
			}
			if (c < 0x20 || c == 0x7f) {
				/* C0 runs (DEL, NUL ignored); ESC waits. */
				c0_track(f, c);
				i++;
				break;
			}
			if (c >= 0x80) {
				/* libvterm ignores it and stays in ESC. */
				if (f->esc_virtual) {
					flush(s, b, span, i);
					span = i + 1;
				}
				i++;
				break;
			}
			if (c == ']' || c == 'P' ||
			    (f->st == F_ESC && is_str_intro(c))) {
				/*
				 * CAN puts libvterm back to ground whatever it
				 * was in (a passed-on ESC, a CSI).
				 */
				flush(s, b, span, i);
				vwrite(s, "\030", 1);
				str_start(f, c);
				i++;
				span = i;
				break;
			}
			if (f->esc_virtual) {
				flush(s, b, span, i);
				vwrite(s, "\033", 1);
				span = i;
				f->esc_virtual = false;
			}
			i++;
			if (c == '[') {
				csi_start(f);
			} else if (c >= 0x20 && c <= 0x2f) {
				if (f->st == F_ESC) {
					f->esc_inter = c;
					f->esc_ninter = 0;
				}
				if (f->esc_ninter < 2)
					f->esc_ninter++;
				f->st = F_ESC_INT;
			} else if (f->st == F_ESC_INT && f->esc_inter == '#' &&
			    f->esc_ninter == 1 && (c == '3' || c == '4' ||
			    c == '6')) {
				/*
				 * Double-width/height lines: not drawn so, and
				 * on a 1-column screen 0.1.4 then puts its
				 * cursor at column -1. CAN drops the ESC #.
				 */
				flush(s, b, span, i - 1);
				vwrite(s, "\030", 1);
				span = i;
				f->st = F_GROUND;
			} else {
				if (f->st == F_ESC_INT)
					esc_final(f, c);
				else if (c == 'n')
					f->gl = 2;
				else if (c == 'o')
					f->gl = 3;
				else if (c == 'N' || c == 'O')
					f->ss = true;
				if (f->st == F_ESC && c == '=')
					s->modes.app_keypad = true;
				else if (f->st == F_ESC && c == '>')
					s->modes.app_keypad = false;
				else if (f->st == F_ESC && c == 'c')
					modes_reset(s);
				if (f->st == F_ESC && c == '8') {
					flush(s, b, span, i);
					span = i;
					cursor_clamp(s);
				}
				f->st = F_GROUND;
			}
			break;
		case F_CSI:
			if (c == 0x1b)
				goto esc;
			i++;
			if (c >= '0' && c <= '9') {
				f->csi_started = true;
				if (f->csi_inter != 0) {
					f->st = F_GROUND;
				} else if (f->param[f->np] < 10000) {
					f->param[f->np] =
					    f->param[f->np] * 10 + (c - '0');
				} else {
					/* 0.1.4 overflows a long: cut. */
					flush(s, b, span, i - 1);
					span = i;
				}
			} else if (c == ';' || c == ':') {
				f->csi_started = true;
				if (f->csi_inter != 0) {
					f->st = F_GROUND;
				} else if (f->np + 1 < NPARAM) {
					f->param[++f->np] = 0;
				} else {
					/* 0.1.4 writes past its 16 args. */
					flush(s, b, span, i - 1);
					span = i;
				}
			} else if (c >= 0x3c && c <= 0x3f) {
				if (f->csi_started)
					f->st = F_GROUND;
				else if (c == '?')
					f->csi_priv = true;
				else
					f->csi_other = true;
			} else if (c >= 0x20 && c <= 0x2f) {
				f->csi_started = true;
				f->csi_inter = c;
			} else if (c >= 0x40 && c <= 0x7e) {
				f->st = F_GROUND;
				if (c == 'b' && !f->csi_priv && !f->csi_other &&
				    f->csi_inter == 0) {
					flush(s, b, span, i - 1);
					vwrite(s, "\030", 1);
					span = i;
					rep(s, f->param[0]);
				} else {
					csi_final(s, c);
					if (c == 'l' && f->csi_priv &&
					    !f->csi_other && csi_restores(f)) {
						flush(s, b, span, i);
						span = i;
						cursor_clamp(s);
					}
				}
			} else if (c == 0x18 || c == 0x1a) {
				f->st = F_GROUND;
			} else if (c >= 0x80) {
				/*
				 * Ends the CSI, and libvterm drops it: pass it
				 * now, so it is never held as text.
				 */
				f->st = F_GROUND;
				flush(s, b, span, i);
				span = i;
			} else {
				c0_track(f, c);
			}
			break;
		case F_STR: {
			size_t st = i;

			while (i < len && b[i] >= 0x20 && b[i] != 0x7f)
				i++;
			str_append(f, b + st, i - st);
			if (i == len)
				break;
			c = b[i++];
			if (c == 0x07) {
				str_done(s);
				f->st = F_GROUND;
			} else if (c == 0x1b) {
				f->st = F_STR_ESC;
			} else if (c == 0x18 || c == 0x1a) {
				f->st = F_GROUND;
			}
			/* Other C0, NUL and DEL inside a string are dropped. */
			span = i;
			break;
		}
		case F_STR_ESC:
			if (c == '\\') {
				str_done(s);
				f->st = F_GROUND;
				i++;
				span = i;
				break;
			}
			if (c < 0x20 || c == 0x7f) {
				/* As in libvterm: the ESC still waits. */
				if (c == 0x18 || c == 0x1a)
					f->st = F_GROUND;
				i++;
				span = i;
				break;
			}
			/* Any other byte aborts the string: a new escape. */
			f->st = F_ESC;
			f->esc_virtual = true;
			span = i;
			break;
		default:
			assert(!"bad filter state");
			f->st = F_GROUND;
			break;
		}
		continue;
esc:
		tb = TB_NONE;
		/*
		 * An ESC at b[i]. When the next byte is here and cannot start
		 * a string, the ESC stays in the span; otherwise it waits.
		 */
		if (i + 1 < len && b[i + 1] >= 0x20 && b[i + 1] < 0x7f &&
		    !is_str_intro(b[i + 1])) {
			f->esc_virtual = false;
		} else {
			flush(s, b, span, i);
			span = i + 1;
			f->esc_virtual = true;
		}
		f->st = F_ESC;
		i++;
	}
	switch (f->st) {
	case F_STR:
	case F_STR_ESC:
		break;
	case F_GROUND: {
		size_t k = utf8_tail(b + span, len - span);

		flush(s, b, span, len - k);
		memcpy(f->u8, b + len - k, k);
		f->nu8 = (uint8_t)k;
		/* Ended in text (see split_mark)? */
		f->text_end = tb;
		break;
	}
	default:
		flush(s, b, span, len);
		break;
	}
}

/* ------------------------------------------------------------------ */
/* Public API                                                            */

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
	s->g = &s->prim;
	memset(s->f.g_plain, 1, sizeof s->f.g_plain);
	memset(s->f.g_utf8, 1, sizeof s->f.g_utf8);
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

/* Last row of g holding anything but default blanks, or -1. */
static int
last_used_row(const struct grid *g)
{
	int i, j;

	for (i = g->rows - 1; i >= 0; i--)
		for (j = 0; j < g->cols; j++)
			if (g->r[i]->c[j].w != W_BLANK ||
			    g->r[i]->c[j].fg != PTY_COLOR_DEFAULT ||
			    g->r[i]->c[j].bg != PTY_COLOR_DEFAULT)
				return i;
	return -1;
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
	o->comb = NULL;
	o->ncomb = o->combcap = 0;
	if (w > 0)
		fix_edges(n, ncols, w - 1, w);
}

int
pty_screen_resize(struct pty_screen *s, int rows, int cols)
{
	struct grid np, na;
	struct row **tmp;
	bool on_alt;
	int push = 0, pull = 0, i, orows, ocols, n;
	char seq[48];
	VTermPos pos;

	if (s == NULL || rows < 1 || rows > 1000 || cols < 1 || cols > 1000)
		return -EINVAL;
	if (rows == s->rows && cols == s->cols)
		return 0;
	on_alt = s->g == &s->alt;
	orows = s->rows;
	ocols = s->cols;
	if (grid_new(&np, rows, cols) < 0)
		return -ENOMEM;
	memset(&na, 0, sizeof na);
	if (on_alt && grid_new(&na, rows, cols) < 0)
		goto nomem;
	if (scratch_fit(s, cols) < 0)
		goto nomem;
	tmp = realloc(s->tmp, sizeof *tmp * (size_t)rows);
	if (tmp == NULL)
		goto nomem;
	s->tmp = tmp;

	/* Primary: keep the cursor line on screen, like xterm and tmux. */
	if (rows < orows) {
		int keep = on_alt ? last_used_row(&s->prim) : s->cur.row;

		push = keep + 1 - rows;
		if (push < 0)
			push = 0;
		for (i = 0; i < push; i++)
			sb_push(s, s->prim.r[i], ocols);
	} else if (rows > orows && !on_alt) {
		size_t avail = s->sb_count;

		pull = rows - orows;
		if ((size_t)pull > avail)
			pull = (int)avail;
	}
	for (i = 0; i < pull; i++) {
		size_t idx = s->sb_count - (size_t)pull + (size_t)i;

		if (sb_unpack(s, idx, s->cellbuf, cols) < 0)
			pty_cell_blank(s->cellbuf, cols);
		row_from_cells(np.r[i], cols, s->cellbuf);
	}
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
		row_move(np.r[i], cols, s->prim.r[o], ocols);
	}
	grid_free(&s->prim);
	s->prim = np;
	if (on_alt) {
		for (i = 0; i < rows && i < orows; i++)
			row_move(na.r[i], cols, s->alt.r[i], ocols);
		grid_free(&s->alt);
		s->alt = na;
		s->g = &s->alt;
	} else {
		s->g = &s->prim;
	}
	s->rows = rows;
	s->cols = cols;
	s->resize_delta = on_alt ? 0 : pull - push;
	vterm_set_size(s->vt, rows, cols);
	s->resize_delta = 0;
	/*
	 * Like xterm and tmux, a resize resets the margins: 0.1.4 keeps a top
	 * margin that may now lie below the screen and then scrolls a
	 * negative height. The cursor stays put. A sequence cut by the
	 * resize is dropped, so the filter and libvterm stay in step.
	 */
	vterm_state_get_cursorpos(s->vts, &pos);
	n = snprintf(seq, sizeof seq, "\030\033[r\033[s\033[%d;%dH",
	    pos.row + 1, pos.col + 1);
	vwrite(s, seq, (size_t)n);
	s->f.st = F_GROUND;
	s->f.nu8 = 0;
	s->f.text_end = TB_NONE;
	vterm_state_get_cursorpos(s->vts, &pos);
	s->cur.row = pos.row < rows ? pos.row : rows - 1;
	s->cur.col = pos.col < cols ? pos.col : cols - 1;
	if (s->dlast >= rows)
		s->dlast = rows - 1;
	dirty_all(s);
	return 0;
nomem:
	grid_free(&np);
	grid_free(&na);
	return -ENOMEM;
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
	o->fg = c->fg;
	o->bg = c->bg;
	o->attrs = (uint16_t)(c->w >> W_ASHIFT);
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

static int
key_map(enum pty_key k, VTermKey *out)
{
	static const VTermKey map[] = {
		[PTY_KEY_ENTER] = VTERM_KEY_ENTER,
		[PTY_KEY_TAB] = VTERM_KEY_TAB,
		[PTY_KEY_BACKSPACE] = VTERM_KEY_BACKSPACE,
		[PTY_KEY_ESCAPE] = VTERM_KEY_ESCAPE,
		[PTY_KEY_UP] = VTERM_KEY_UP,
		[PTY_KEY_DOWN] = VTERM_KEY_DOWN,
		[PTY_KEY_LEFT] = VTERM_KEY_LEFT,
		[PTY_KEY_RIGHT] = VTERM_KEY_RIGHT,
		[PTY_KEY_INS] = VTERM_KEY_INS,
		[PTY_KEY_DEL] = VTERM_KEY_DEL,
		[PTY_KEY_HOME] = VTERM_KEY_HOME,
		[PTY_KEY_END] = VTERM_KEY_END,
		[PTY_KEY_PAGEUP] = VTERM_KEY_PAGEUP,
		[PTY_KEY_PAGEDOWN] = VTERM_KEY_PAGEDOWN,
	};

	if ((int)k >= PTY_KEY_F1 && (int)k <= PTY_KEY_F12) {
		*out = VTERM_KEY_FUNCTION(1 + (int)k - PTY_KEY_F1);
		return 0;
	}
	if ((int)k <= PTY_KEY_NONE || (size_t)k >= sizeof map / sizeof map[0])
		return -EINVAL;
	*out = map[k];
	return 0;
}

static VTermModifier
mod_map(unsigned mods)
{
	unsigned m = 0;

	if (mods & PTY_MOD_SHIFT)
		m |= VTERM_MOD_SHIFT;
	if (mods & PTY_MOD_ALT)
		m |= VTERM_MOD_ALT;
	if (mods & PTY_MOD_CTRL)
		m |= VTERM_MOD_CTRL;
	return (VTermModifier)m;
}

void
pty_screen_key(struct pty_screen *s, enum pty_key key, unsigned mods)
{
	VTermKey vk;

	assert(s != NULL);
	if (key_map(key, &vk) < 0)
		return;
	vterm_keyboard_key(s->vt, vk, mod_map(mods));
}

void
pty_screen_unichar(struct pty_screen *s, uint32_t cp, unsigned mods)
{
	assert(s != NULL);
	if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return;
	vterm_keyboard_unichar(s->vt, cp, mod_map(mods));
}

void
pty_screen_paste(struct pty_screen *s, const char *buf, size_t len)
{
	static const char end[] = "\033[201~";
	const size_t endlen = sizeof end - 1;
	size_t i = 0, from = 0;

	assert(s != NULL);
	if (s->out == NULL || buf == NULL)
		return;
	if (!s->modes.bracketed_paste) {
		if (len > 0)
			s->out(buf, len, s->out_ud);
		return;
	}
	vterm_keyboard_start_paste(s->vt);
	/* The text cannot end the bracket early: drop embedded end marks. */
	while (i + endlen <= len) {
		if (buf[i] == '\033' && memcmp(buf + i, end, endlen) == 0) {
			if (i > from)
				s->out(buf + from, i - from, s->out_ud);
			i += endlen;
			from = i;
		} else {
			i++;
		}
	}
	if (len > from)
		s->out(buf + from, len - from, s->out_ud);
	vterm_keyboard_end_paste(s->vt);
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
			tl += (size_t)pty__utf8_put(tmp + tl, cps[k]);
		if (len + tl + 1 > bufsz)
			break;
		memcpy(buf + len, tmp, tl);
		len += tl;
	}
	buf[len] = '\0';
	return len;
}
