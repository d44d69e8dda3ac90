/*
 * screen_int.h: what the screen model's files share (STYLE A): our cell,
 * row and grid, the screen itself, and the functions each file hands the
 * others. The model is four files: screen.c (libvterm's state layer, the
 * input filter's sink, the life cycle), screen_grid.c (rows and their
 * combining store), screen_sb.c (the packed scrollback ring) and
 * screen_resize.c (a resize, rows and rewrap), with the read side in
 * screen_read.c. Only they include this header, and with it <vterm.h>.
 */
#ifndef CORRAL_PTY_SCREEN_INT_H
#define CORRAL_PTY_SCREEN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
/* screen.c: the libvterm side                                          */

/* Bytes straight to libvterm (after the filter, or our own sequences). */
void pty__screen_vwrite(struct pty_screen *, const void *p, size_t n);
/* Every row dirty. */
void pty__screen_dirty_all(struct pty_screen *);
/* The pack and cell scratch buffers hold a row of cols; -ENOMEM. */
int pty__screen_scratch_fit(struct pty_screen *, int cols);

/* ------------------------------------------------------------------ */
/* screen_grid.c: grids, rows, cells and the combining store            */

/* A cell's PTY_ATTR_* bits. */
uint16_t pty__grid_cell_attrs(const struct cell *);
/* A grid of rows x cols blank rows; 0 or -ENOMEM (g left empty). */
int pty__grid_new(struct grid *g, int rows, int cols);
void pty__grid_free(struct grid *g);
/* Cells [from, to) of r set to v. */
void pty__grid_row_fill(struct row *r, int from, int to, struct cell v);
/* Row r (cols wide) blank in background bg, its store and length empty. */
void pty__grid_row_blank(struct row *r, int cols, uint32_t bg);
/* Store a character with marks in r; returns its index or -1. */
int pty__grid_comb_add(struct row *r, int cols, const uint32_t *cps, int n);
/*
 * How many of cps[] (0-terminated, a base and its marks) one cell keeps
 * (PTY_CELL_MAXBYTES of UTF-8, as tmux), from k already kept.
 */
int pty__grid_cell_fit(const uint32_t *cps, int k);
/* The codepoints of a cell; returns how many (0 for an empty cell). */
int pty__grid_cell_cps(const struct row *r, const struct cell *c,
    uint32_t *cps);
/* Wide characters kept whole around a change to [lo, hi) of a row. */
void pty__grid_fix_edges(struct row *r, int cols, int lo, int hi);
/* Copy n cells of row src (from scol) to row dst (at dcol). */
void pty__grid_cells_copy(struct row *dst, int dcol, struct row *src,
    int scol, int n, int cols);
/* Fill row r (cols wide) from public cells. */
void pty__grid_row_from_cells(struct row *r, int cols,
    const struct pty_cell *cells);
/* Cell c of row r as the model exposes it. */
void pty__grid_cell_export(const struct row *r, const struct cell *c,
    struct pty_cell *o);

/* ------------------------------------------------------------------ */
/* screen_sb.c: the scrollback ring, rows packed as line.c reads them   */

/* How many cells of r (cols wide) are left once trailing blanks go. */
int pty__sb_row_trimmed(const struct row *r, int cols);
/*
 * Pack n cells of a row in line.c's format into buf (which holds
 * pty_line_packed_max(n) bytes); returns the length.
 */
size_t pty__sb_row_pack(const struct row *r, int n, uint8_t *buf);
/* The ring slot of scrollback line idx (0 the oldest). */
uint8_t **pty__sb_slot(struct pty_screen *s, size_t idx);
/* A ring entry's packed length (after its 2-byte header). */
size_t pty__sb_len(const uint8_t *e);
/* Push a row (cols wide) as the newest scrollback line; best effort. */
void pty__sb_push(struct pty_screen *s, const struct row *r, int cols);
/* Scrollback line idx unpacked into cells; pty_line_unpack's result. */
int pty__sb_unpack(const struct pty_screen *s, size_t idx,
    struct pty_cell *cells, int maxcells);

#endif /* CORRAL_PTY_SCREEN_INT_H */
