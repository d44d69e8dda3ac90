/*
 * screen_read.c: the screen model read (SPEC 4.1; STYLE A): cells, packed
 * rows and row text, the dirty rows, cursor, modes, title, bells and the
 * scrollback's lines, as the holder and the tests take them.
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "pty/screen_int.h"

void
pty_screen_size(const struct pty_screen *s, int *rows, int *cols)
{
	assert(s != NULL);
	if (rows != NULL)
		*rows = s->rows;
	if (cols != NULL)
		*cols = s->cols;
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
	pty__grid_cell_export(r, &r->c[col], out);
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
	n = pty__sb_row_trimmed(r, s->cols);
	if (bufsz < pty_line_packed_max(n))
		return 0;
	return pty__sb_row_pack(r, n, buf);
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
	return pty__sb_unpack(s, idx, cells, maxcols);
}

size_t
pty_screen_sb_bytes(const struct pty_screen *s)
{
	assert(s != NULL);
	return s->sb_bytes;
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
		m = pty__grid_cell_cps(r, c, cps);
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
