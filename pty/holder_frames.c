/*
 * holder_frames.c: the frames a holder sends (META, ROWS, SB_LINES) built
 * from its screen model, and the final screen it leaves on disk when the
 * agent ends (the same frames, so `corral screen` reads it like a socket).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pty/pty.h"
#include "pty/pty_holder_int.h"

void
pty__holder_frames_meta(struct pty_screen *s, enum pty_run_state state,
    int32_t exit_status, struct pty_wire_meta *m)
{
	struct pty_cursor c;
	struct pty_modes md;
	int rows, cols;

	memset(m, 0, sizeof *m);
	pty_screen_size(s, &rows, &cols);
	pty_screen_cursor(s, &c);
	pty_screen_modes(s, &md);
	m->rows = (uint16_t)rows;
	m->cols = (uint16_t)cols;
	m->cur_row = (uint16_t)(c.row < 0 ? 0 : c.row);
	m->cur_col = (uint16_t)(c.col < 0 ? 0 : c.col);
	m->cur_visible = c.visible;
	m->cur_blink = c.blink;
	m->cur_shape = c.shape;
	m->modes = (uint8_t)((md.altscreen ? PTY_WMODE_ALT : 0) |
	    (md.app_cursor ? PTY_WMODE_APPCURSOR : 0) |
	    (md.app_keypad ? PTY_WMODE_APPKEYPAD : 0) |
	    (md.bracketed_paste ? PTY_WMODE_PASTE : 0) |
	    (md.mouse_sgr ? PTY_WMODE_MOUSESGR : 0) |
	    (md.reverse ? PTY_WMODE_REVERSE : 0) |
	    (md.focus_events ? PTY_WMODE_FOCUS : 0));
	m->mouse = md.mouse;
	m->state = (uint8_t)state;
	m->exit_status = exit_status;
	m->bells = pty_screen_bells(s);
	m->sb_count = pty_screen_sb_count(s);
}

/* Append META then ROWS [first, last] of the screen to wb. */
void
pty__holder_frames_screen(struct pty_wbuf *wb, struct pty_screen *s,
    enum pty_run_state state, int32_t exit_status, int first, int last)
{
	struct pty_wire_meta m;
	struct pty_cell *cells;
	uint8_t *line;
	size_t start, lmax;
	int rows, cols;

	pty__holder_frames_meta(s, state, exit_status, &m);
	start = pty_wire_begin(wb, PTY_W_META);
	pty_wire_meta_put(wb, &m, pty_screen_title(s));
	pty_wire_end(wb, start);
	pty_screen_size(s, &rows, &cols);
	if (first < 0)
		return;
	if (last >= rows)
		last = rows - 1;
	if (first > last)
		return;
	lmax = pty_line_packed_max(cols);
	cells = malloc(sizeof *cells * (size_t)cols);
	line = malloc(lmax);
	if (cells == NULL || line == NULL) {
		wb->oom = true;
		goto out;
	}
	start = pty_wire_begin(wb, PTY_W_ROWS);
	pty_wbuf_u16(wb, (uint16_t)first);
	pty_wbuf_u16(wb, (uint16_t)(last - first + 1));
	for (int r = first; r <= last; r++) {
		size_t n;

		for (int c = 0; c < cols; c++)
			pty_screen_cell(s, r, c, &cells[c]);
		n = pty_line_pack(cells, cols, line, lmax);
		pty_wbuf_put(wb, line, n);
	}
	pty_wire_end(wb, start);
out:
	free(cells);
	free(line);
}

/* Append an SB_LINES frame for scrollback lines [from, from+count). */
void
pty__holder_frames_sb(struct pty_wbuf *wb, struct pty_screen *s, uint32_t from,
    uint32_t count)
{
	size_t total = pty_screen_sb_count(s), start, lmax;
	struct pty_cell *cells;
	uint8_t *line;
	int rows, cols;

	pty_screen_size(s, &rows, &cols);
	(void)rows;
	if (from > total)
		from = (uint32_t)total;
	if (count > total - from)
		count = (uint32_t)(total - from);
	/* Keep the frame under the cap. */
	if (count > PTY_SB_CHUNK)
		count = PTY_SB_CHUNK;
	lmax = pty_line_packed_max(1000);
	cells = malloc(sizeof *cells * 1000);
	line = malloc(lmax);
	start = pty_wire_begin(wb, PTY_W_SB_LINES);
	pty_wbuf_u32(wb, from);
	pty_wbuf_u32(wb, (uint32_t)total);
	if (cells == NULL || line == NULL) {
		pty_wbuf_u32(wb, 0);
		wb->oom = true;
	} else {
		pty_wbuf_u32(wb, count);
		for (uint32_t i = 0; i < count; i++) {
			int n = pty_screen_sb_line(s, from + i, cells, 1000);

			if (n < 0)
				n = 0;
			pty_wbuf_put(wb, line,
			    pty_line_pack(cells, n, line, lmax));
		}
	}
	pty_wire_end(wb, start);
	free(cells);
	free(line);
}

void
pty__holder_frames_write_final(struct holder *h)
{
	struct pty_wbuf wb;
	int rows, cols, fd;
	size_t total, off = 0;

	pty_screen_size(h->screen, &rows, &cols);
	pty_wbuf_init(&wb);
	pty__holder_frames_screen(&wb, h->screen, PTY_RUN_EXITED,
	    (int32_t)h->wstatus, 0, rows - 1);
	total = pty_screen_sb_count(h->screen);
	do {
		pty__holder_frames_sb(&wb, h->screen, (uint32_t)off, 2000);
		off += 2000;
	} while (off < total);
	if (!wb.oom && (fd = open("final.screen.tmp",
	    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) >= 0) {
		bool ok = write(fd, wb.buf, wb.len) == (ssize_t)wb.len;

		ok = fsync(fd) == 0 && ok;
		close(fd);
		if (!ok || rename("final.screen.tmp", "final.screen") < 0)
			unlink("final.screen.tmp");
	}
	pty_wbuf_free(&wb);
}

