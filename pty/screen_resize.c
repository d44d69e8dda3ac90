/*
 * screen_resize.c: the screen model resized (SPEC 4.5; STYLE A), as tmux
 * 3.3a: the height changes first (rows go into the scrollback or come
 * back from it), then the width: the primary screen and its scrollback
 * are rewrapped (reflow.c; the newest RF_SB_NEWEST scrollback lines)
 * with the cursor on the same character, the alternate screen cut or
 * padded; libvterm is told last.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pty/screen_int.h"

/* ------------------------------------------------------------------ */
/* Resize                                                               */

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

		pty__grid_row_fill(n, w, ncols, v);
	}
	n->comb = o->comb;
	n->ncomb = o->ncomb;
	n->combcap = o->combcap;
	n->used = (uint16_t)(o->used < w ? o->used : w);
	n->wrapped = o->wrapped;
	o->comb = NULL;
	o->ncomb = o->combcap = 0;
	if (w > 0)
		pty__grid_fix_edges(n, ncols, w - 1, w);
}

/* Packed line e (a scrollback entry) with meta m into row r. */
static void
row_from_packed(struct pty_screen *s, const uint8_t *e, uint16_t m,
    struct row *r, int cols)
{
	int used = m & SBM_USED;

	if (pty_line_unpack(e + 2, pty__sb_len(e), s->cellbuf, cols, NULL) < 0)
		pty_cell_blank(s->cellbuf, cols);
	pty__grid_row_from_cells(r, cols, s->cellbuf);
	r->used = (uint16_t)(used < cols ? used : cols);
	r->wrapped = (m & SBM_WRAPPED) != 0;
}

/* Scrollback line idx into row r (cols wide), with its used and wrap. */
static void
row_from_sb(struct pty_screen *s, size_t idx, struct row *r, int cols)
{
	uint8_t **slot = pty__sb_slot(s, idx);

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

	if (pty__grid_new(&np, rows, cols) < 0)
		return -ENOMEM;
	memset(&na, 0, sizeof na);
	if (on_alt && pty__grid_new(&na, rows, cols) < 0) {
		pty__grid_free(&np);
		return -ENOMEM;
	}
	if (rows < orows) {
		push = pc->row + 1 - rows;
		if (push < 0)
			push = 0;
		for (i = 0; i < push; i++)
			pty__sb_push(s, s->prim.r[i], cols);
	} else if ((size_t)(rows - orows) > s->sb_count) {
		pull = (int)s->sb_count;
	} else {
		pull = rows - orows;
	}
	for (i = 0; i < pull; i++)
		row_from_sb(s, s->sb_count - (size_t)pull + (size_t)i,
		    np.r[i], cols);
	for (i = 0; i < pull; i++) {
		uint8_t **slot = pty__sb_slot(s, s->sb_count - 1);

		s->sb_bytes -= pty__sb_len(*slot) + 2;
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
	pty__grid_free(&s->prim);
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
		pty__grid_free(&s->alt);
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
	int ocols;		/* the screen's width before */
	int wmax;		/* the widest line of the reflow's, >= ocols */
	size_t base;		/* the reflow's line 0 is scrollback line base */
	struct rflines out;
	bool *kept;		/* old scrollback lines handed on as they are */
};

/*
 * The newest scrollback lines a resize rewraps, with the screen; older
 * ones keep their line breaks (whole: one wider than the screen shows
 * cut until the screen is wide again), so that a resize of a full
 * scrollback holds the holder's loop a few milliseconds, not 25-80
 * (issue 22; docs/architecture.md has the figures).
 */
#define RF_SB_NEWEST 2000

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

/* Line i of scrollback then screen (not the reflow's own numbering). */
static void
rf_line(const struct rfctx *c, size_t i, int *used, bool *wrapped)
{
	struct pty_screen *s = c->s;

	if (i < s->sb_count) {
		uint16_t m = s->sb_meta[pty__sb_slot(s, i) - s->sb];

		*used = m & SBM_USED;
		*wrapped = (m & SBM_WRAPPED) != 0;
	} else {
		const struct row *r = s->prim.r[i - s->sb_count];

		*used = r->used;
		*wrapped = r->wrapped;
	}
}

static void
rf_peek(void *ud, size_t i, int *used, bool *wrapped)
{
	struct rfctx *c = ud;

	rf_line(c, i + c->base, used, wrapped);
}

static int
rf_get(void *ud, size_t i, struct pty_cell *cells, bool *wrapped)
{
	struct rfctx *c = ud;
	struct pty_screen *s = c->s;
	int used, k, n;

	i += c->base;
	rf_line(c, i, &used, wrapped);
	if (i < s->sb_count) {
		/* A line kept whole by an earlier reflow may be the wider. */
		n = used > c->ocols ? used : c->ocols;
		if (n > c->wmax)
			n = c->wmax;
		if (pty__sb_unpack(s, i, cells, n) < 0)
			pty_cell_blank(cells, n);
	} else {
		const struct row *r = s->prim.r[i - s->sb_count];

		for (k = 0; k < c->ocols; k++)
			pty__grid_cell_export(r, &r->c[k], &cells[k]);
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

	i += c->base;
	rf_line(c, i, &used, &w);
	if (i < s->sb_count) {
		if (rf_add(c, *pty__sb_slot(s, i), (uint16_t)used, true) < 0)
			return -ENOMEM;
		c->kept[i] = true;
		return 0;
	}
	{
		const struct row *r = s->prim.r[i - s->sb_count];
		size_t len = pty__sb_row_pack(r, pty__sb_row_trimmed(r, c->ocols),
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
	struct rfctx c = { .s = s, .ocols = s->cols, .wmax = s->cols };
	struct pty__reflow_cursor cur;
	struct grid np;
	uint8_t **ring = NULL;
	uint16_t *meta = NULL;
	size_t first, nsb, cap, i, bytes = 0;
	int rows = s->rows, k;

	if (pty__grid_new(&np, rows, cols) < 0)
		return -ENOMEM;
	c.kept = calloc(s->sb_count + 1, sizeof *c.kept);
	if (c.kept == NULL)
		goto nomem;
	/*
	 * The older lines go on as they are (RF_SB_NEWEST), from the start
	 * of a line of text: a run of wrapped lines is rewrapped whole.
	 */
	if (s->sb_count > RF_SB_NEWEST) {
		c.base = s->sb_count - RF_SB_NEWEST;
		for (;;) {
			int used;
			bool w;

			rf_line(&c, c.base - 1, &used, &w);
			if (!w || --c.base == 0)
				break;
		}
	}
	for (i = 0; i < c.base; i++) {
		uint8_t **slot = pty__sb_slot(s, i);

		if (rf_add(&c, *slot, s->sb_meta[slot - s->sb], true) < 0)
			goto nomem;
		c.kept[i] = true;
	}
	for (i = c.base; i < s->sb_count; i++) {
		int used;
		bool w;

		rf_line(&c, i, &used, &w);
		if (used > c.wmax)
			c.wmax = used;
	}
	io.nlines = s->sb_count - c.base + (size_t)rows;
	cur.line = s->sb_count - c.base + (size_t)(pc->row < rows ? pc->row :
	    rows - 1);
	cur.col = pc->col;
	cur.at_end = at_end;
	if (pty__reflow(&io, &c, c.wmax, cols, &cur) < 0)
		goto nomem;
	cur.line += c.base;
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
			free(*pty__sb_slot(s, i));
	for (i = 0; i < c.out.n; i++) {
		if (i >= first - nsb && i < first) {
			ring[i - (first - nsb)] = c.out.v[i];
			meta[i - (first - nsb)] = c.out.meta[i];
			bytes += pty__sb_len(c.out.v[i]) + 2;
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
	pty__grid_free(&s->prim);
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
	pty__grid_free(&np);
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

	if (pty__grid_new(&np, s->rows, cols) < 0)
		return -ENOMEM;
	memset(&na, 0, sizeof na);
	if (on_alt && pty__grid_new(&na, s->rows, cols) < 0) {
		pty__grid_free(&np);
		return -ENOMEM;
	}
	if (reflow_primary(s, cols, pc, at_end) < 0) {
		for (i = 0; i < s->rows; i++)
			row_move(np.r[i], cols, s->prim.r[i], s->cols);
		pty__grid_free(&s->prim);
		s->prim = np;
		if (pc->col >= cols)
			pc->col = cols - 1;
	} else {
		pty__grid_free(&np);
	}
	if (on_alt) {
		for (i = 0; i < s->rows; i++)
			row_move(na.r[i], cols, s->alt.r[i], s->cols);
		pty__grid_free(&s->alt);
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
	if (pty__screen_scratch_fit(s, cols > s->cols ? cols : s->cols) < 0)
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
	pty__screen_vwrite(s, seq, (size_t)n);
	pty__vtfilter_cut(&s->f);
	vterm_state_get_cursorpos(s->vts, &pos);
	s->cur.row = pos.row < rows ? pos.row : rows - 1;
	s->cur.col = pos.col < cols ? pos.col : cols - 1;
	s->pw_row = PW_NONE;
	if (s->dlast >= rows)
		s->dlast = rows - 1;
	pty__screen_dirty_all(s);
	return rc;
}
