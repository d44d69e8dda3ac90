/*
 * screen_grid.c: the screen model's grid (SPEC 4.1; STYLE A): a screen's
 * rows in one block with a pointer per row, so that a scroll rotates
 * pointers; each row's cells, 12 bytes each, and its store of characters
 * with combining marks; a wide character kept whole across every change.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pty/screen_int.h"

/* ------------------------------------------------------------------ */
/* Grid and rows                                                        */

uint16_t
pty__grid_cell_attrs(const struct cell *c)
{
	return (uint16_t)((c->w >> W_ASHIFT) |
	    (c->fg & FG_FAINT ? PTY_ATTR_FAINT : 0));
}

void
pty__grid_row_fill(struct row *r, int from, int to, struct cell v)
{
	int i;

	for (i = from; i < to; i++)
		r->c[i] = v;
}

void
pty__grid_row_blank(struct row *r, int cols, uint32_t bg)
{
	struct cell v = { W_BLANK, PTY_COLOR_DEFAULT, bg };

	pty__grid_row_fill(r, 0, cols, v);
	r->ncomb = 0;
	r->used = 0;
	r->wrapped = false;
}

void
pty__grid_free(struct grid *g)
{
	int i;

	if (g->r != NULL)
		for (i = 0; i < g->rows; i++)
			free(g->r[i]->comb);
	free(g->r);
	free(g->block);
	memset(g, 0, sizeof *g);
}

int
pty__grid_new(struct grid *g, int rows, int cols)
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
		pty__grid_row_blank(r, cols, PTY_COLOR_DEFAULT);
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
int
pty__grid_comb_add(struct row *r, int cols, const uint32_t *cps, int n)
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
int
pty__grid_cell_fit(const uint32_t *cps, int k)
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
int
pty__grid_cell_cps(const struct row *r, const struct cell *c, uint32_t *cps)
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
void
pty__grid_fix_edges(struct row *r, int cols, int lo, int hi)
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
void
pty__grid_cells_copy(struct row *dst, int dcol, struct row *src, int scol, int n,
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
			int k = pty__grid_cell_cps(src, &c, cps), idx;

			dst->c[dcol + i].w = W_BLANK;
			idx = pty__grid_comb_add(dst, cols, cps, k);
			c.w &= ~(W_CP | W_COMB);
			c.w |= idx < 0 ? cps[0] : ((uint32_t)idx | W_COMB);
		}
		dst->c[dcol + i] = c;
	}
}


/* Fill row r (cols wide) from public cells. */
void
pty__grid_row_from_cells(struct row *r, int cols, const struct pty_cell *cells)
{
	int i, k;

	pty__grid_row_blank(r, cols, PTY_COLOR_DEFAULT);
	for (i = 0; i < cols; i++) {
		const struct pty_cell *c = &cells[i];
		uint32_t w;

		for (k = 0; k < PTY_CELL_MAXCP && c->cp[k] != 0; k++)
			;
		if (k > 1) {
			int idx = pty__grid_comb_add(r, cols, c->cp, k);

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
	pty__grid_fix_edges(r, cols, 0, cols);
}


void
pty__grid_cell_export(const struct row *r, const struct cell *c, struct pty_cell *o)
{
	uint32_t cps[PTY_CELL_MAXCP];
	int n = pty__grid_cell_cps(r, c, cps);

	memset(o, 0, sizeof *o);
	memcpy(o->cp, cps, sizeof cps[0] * (size_t)n);
	o->fg = FG_COLOR(c->fg);
	o->bg = c->bg;
	o->attrs = pty__grid_cell_attrs(c);
	o->width = (uint8_t)W_WIDTH(c->w);
}
