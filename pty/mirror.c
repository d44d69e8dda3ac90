/*
 * mirror.c: the client-side copy of a holder's screen, rebuilt from META and
 * ROWS frames. The console draws from it (SPEC 4.7: it never sees an agent
 * byte), and `corral screen` prints it. Frames are untrusted: every size and
 * row index is checked before it touches the grid.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pty/pty.h"

void
pty_mirror_init(struct pty_mirror *m)
{
	memset(m, 0, sizeof *m);
}

void
pty_mirror_free(struct pty_mirror *m)
{
	free(m->cells);
	memset(m, 0, sizeof *m);
}

static void
mark(struct pty_mirror *m, uint32_t first, uint32_t last)
{
	if (!m->dirty) {
		m->dirty_first = first;
		m->dirty_last = last;
		m->dirty = true;
		return;
	}
	if (first < m->dirty_first)
		m->dirty_first = first;
	if (last > m->dirty_last)
		m->dirty_last = last;
}

static int
mirror_resize(struct pty_mirror *m, int rows, int cols)
{
	struct pty_cell *nc;

	if (rows == m->rows && cols == m->cols && m->cells != NULL)
		return 0;
	nc = malloc(sizeof *nc * (size_t)rows * (size_t)cols);
	if (nc == NULL)
		return -ENOMEM;
	pty_cell_blank(nc, rows * cols);
	for (int r = 0; r < rows && r < m->rows; r++) {
		int n = cols < m->cols ? cols : m->cols;
		memcpy(nc + (size_t)r * cols, m->cells + (size_t)r * m->cols,
		    sizeof *nc * (size_t)n);
	}
	free(m->cells);
	m->cells = nc;
	m->rows = rows;
	m->cols = cols;
	mark(m, 0, (uint32_t)rows - 1);
	return 0;
}

static int
apply_rows(struct pty_mirror *m, const uint8_t *p, size_t len)
{
	struct pty_rd r;
	uint16_t first, n;

	pty_rd_init(&r, p, len);
	first = pty_rd_u16(&r);
	n = pty_rd_u16(&r);
	if (r.bad || m->cells == NULL || (int)first + n > m->rows)
		return PTY_EPROTO;
	for (uint16_t i = 0; i < n; i++) {
		size_t used = 0;
		struct pty_cell *row = m->cells + (size_t)(first + i) * m->cols;

		if (pty_line_unpack(r.p + r.off, r.len - r.off, row, m->cols,
			&used) < 0)
			return PTY_EPROTO;
		r.off += used;
	}
	if (r.off != len)
		return PTY_EPROTO;
	if (n > 0)
		mark(m, first, (uint32_t)first + n - 1u);
	return 0;
}

int
pty_mirror_apply(struct pty_mirror *m, uint8_t type, const uint8_t *p,
    size_t len)
{
	struct pty_wire_meta meta;
	struct pty_rd r;
	char title[sizeof m->title];
	int rc;

	switch (type) {
	case PTY_W_META:
		if ((rc = pty_wire_meta_get(p, len, &meta, title,
			 sizeof title)) < 0)
			return rc;
		if ((rc = mirror_resize(m, meta.rows, meta.cols)) < 0)
			return rc;
		if (meta.cur_row != m->meta.cur_row ||
		    meta.cur_col != m->meta.cur_col)
			mark(m, meta.cur_row < m->rows ? meta.cur_row : 0,
			    meta.cur_row < m->rows ? meta.cur_row : 0);
		m->meta = meta;
		memcpy(m->title, title, sizeof m->title);
		if (meta.state == PTY_RUN_EXITED) {
			m->exited = true;
			m->exit_status = meta.exit_status;
		}
		return 0;
	case PTY_W_ROWS:
		return apply_rows(m, p, len);
	case PTY_W_EXIT:
		pty_rd_init(&r, p, len);
		m->exit_status = (int32_t)pty_rd_u32(&r);
		if (r.bad || r.off != len)
			return PTY_EPROTO;
		m->exited = true;
		return 0;
	default:
		return 0;
	}
}

const struct pty_cell *
pty_mirror_cell(const struct pty_mirror *m, int row, int col)
{
	if (m->cells == NULL || row < 0 || col < 0 || row >= m->rows ||
	    col >= m->cols)
		return NULL;
	return m->cells + (size_t)row * m->cols + col;
}
