/*
 * fuzz_screen.c: libFuzzer target over the screen model (STYLE G, the tmux
 * input-fuzzer pattern): bytes from a sandboxed agent must never crash it
 * or break its invariants. The first bytes pick the size, scrollback and
 * chunking; resizes, keys and pastes are mixed in; then every cell, row,
 * packed row and scrollback line is read back and checked. A second screen
 * gets the same bytes one at a time and must end up identical (chunking
 * must not matter; it also checks the ASCII fast path against libvterm).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pty/pty.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                          \
	do {                                                              \
		if (!(x))                                                 \
			__builtin_trap();                                 \
	} while (0)

static void
sink(const char *buf, size_t len, void *ud)
{
	size_t *n = ud;

	CHECK(buf != NULL && len > 0);
	*n += len;
}

static void
event(enum pty_screen_event_kind k, const char *text, size_t len, void *ud)
{
	size_t *n = ud;

	CHECK(text != NULL);
	CHECK(len <= 4096);
	CHECK(k != PTY_SEV_TITLE || len <= PTY_SCREEN_TITLE_MAX);
	*n += len;
}

static void
check_line(const struct pty_cell *c, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		CHECK(c[i].width <= 2);
		if (c[i].width == 0)
			CHECK(i > 0 && c[i - 1].width == 2 && c[i].cp[0] == 0);
		if (c[i].width == 2)
			CHECK(i + 1 < n && c[i + 1].width == 0);
		CHECK(c[i].cp[0] <= 0x10ffff);
	}
}

static void
check_screen(struct pty_screen *s)
{
	static uint8_t a[2 + 1000 * 37], b[2 + 1000 * 37];
	struct pty_cell *cells;
	struct pty_cursor cur;
	char text[8192];
	int rows, cols, i, j, f, l;
	size_t k, la, lb;

	pty_screen_size(s, &rows, &cols);
	pty_screen_cursor(s, &cur);
	CHECK(cur.row >= 0 && cur.row < rows && cur.col >= 0 &&
	    cur.col < cols);
	if (pty_screen_dirty(s, &f, &l))
		CHECK(f >= 0 && f <= l && l < rows);
	CHECK(strlen(pty_screen_title(s)) <= PTY_SCREEN_TITLE_MAX);
	cells = calloc((size_t)cols, sizeof *cells);
	CHECK(cells != NULL);
	for (i = 0; i < rows; i++) {
		for (j = 0; j < cols; j++)
			pty_screen_cell(s, i, j, &cells[j]);
		check_line(cells, cols);
		la = pty_screen_row_pack(s, i, a, sizeof a);
		lb = pty_line_pack(cells, cols, b, sizeof b);
		CHECK(la > 0 && la == lb && memcmp(a, b, la) == 0);
		CHECK(pty_line_unpack(a, la, cells, cols, NULL) >= 0);
		CHECK(pty_screen_row_text(s, i, text, sizeof text) <
		    sizeof text);
	}
	free(cells);
	/* Scrollback lines may be wider than the screen now. */
	cells = calloc(1000, sizeof *cells);
	CHECK(cells != NULL);
	for (k = 0; k < pty_screen_sb_count(s); k++) {
		int n = pty_screen_sb_line(s, k, cells, 1000);

		CHECK(n >= 0 && n <= 1000);
		check_line(cells, n);
	}
	free(cells);
}

/*
 * Combining marks are not compared: libvterm 0.1.4 drops a mark that
 * arrives in a later write than its base when the base sits in the last
 * column (its cursor has not moved past it), so there chunking matters.
 */
static bool
cell_eq(const struct pty_cell *a, const struct pty_cell *b)
{
	return a->cp[0] == b->cp[0] && a->fg == b->fg && a->bg == b->bg &&
	    a->attrs == b->attrs && a->width == b->width;
}

/* The two screens hold the same state. */
static void
compare(struct pty_screen *a, struct pty_screen *b)
{
	static struct pty_cell la[1000], lb[1000];
	struct pty_cursor ca, cb;
	struct pty_modes ma, mb;
	struct pty_cell x, y;
	int rows, cols, r2, c2, i, j;
	size_t k;

	pty_screen_size(a, &rows, &cols);
	pty_screen_size(b, &r2, &c2);
	CHECK(rows == r2 && cols == c2);
	pty_screen_cursor(a, &ca);
	pty_screen_cursor(b, &cb);
	CHECK(ca.row == cb.row && ca.col == cb.col &&
	    ca.visible == cb.visible && ca.shape == cb.shape);
	pty_screen_modes(a, &ma);
	pty_screen_modes(b, &mb);
	CHECK(memcmp(&ma, &mb, sizeof ma) == 0);
	CHECK(strcmp(pty_screen_title(a), pty_screen_title(b)) == 0);
	CHECK(pty_screen_bells(a) == pty_screen_bells(b));
	for (i = 0; i < rows; i++)
		for (j = 0; j < cols; j++) {
			pty_screen_cell(a, i, j, &x);
			pty_screen_cell(b, i, j, &y);
			CHECK(cell_eq(&x, &y));
		}
	CHECK(pty_screen_sb_count(a) == pty_screen_sb_count(b));
	for (k = 0; k < pty_screen_sb_count(a); k++) {
		int na = pty_screen_sb_line(a, k, la, 1000);
		int nb = pty_screen_sb_line(b, k, lb, 1000);

		CHECK(na == nb);
		for (i = 0; i < na; i++)
			CHECK(cell_eq(&la[i], &lb[i]));
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pty_screen *s = NULL, *s2 = NULL;
	size_t out2 = 0, ev2 = 0, j;
	size_t out = 0, ev = 0, off = 4, step = 0;
	uint8_t split;

	if (size < 4)
		return 0;
	if (pty_screen_new(&s, 1 + data[0] % 40, 1 + data[1] % 120,
	    data[2] % 64) != 0)
		return 0;
	pty_screen_set_output(s, sink, &out);
	pty_screen_set_event(s, event, &ev);
	CHECK(pty_screen_new(&s2, 1 + data[0] % 40, 1 + data[1] % 120,
	    data[2] % 64) == 0);
	pty_screen_set_output(s2, sink, &out2);
	pty_screen_set_event(s2, event, &ev2);
	split = data[3];
	while (off < size) {
		size_t n = 1 + (size_t)((split + step * 7) % 97);

		if (n > size - off)
			n = size - off;
		pty_screen_feed(s, (const char *)data + off, n);
		for (j = 0; j < n; j++)
			pty_screen_feed(s2, (const char *)data + off + j, 1);
		off += n;
		step++;
		if (step % 13 == 0 && off + 2 <= size) {
			int r = 1 + data[off] % 50, c = 1 + data[off + 1] % 150;

			CHECK(pty_screen_resize(s, r, c) == 0);
			CHECK(pty_screen_resize(s2, r, c) == 0);
		}
		if (step % 11 == 0 && off < size) {
			enum pty_key key = (enum pty_key)(data[off] %
			    PTY_KEY_MAX);

			pty_screen_key(s, key, data[off] >> 5);
			pty_screen_key(s2, key, data[off] >> 5);
			pty_screen_unichar(s, data[off], 0);
			pty_screen_unichar(s2, data[off], 0);
			pty_screen_paste(s, (const char *)data + off,
			    size - off < 8 ? size - off : 8);
			pty_screen_paste(s2, (const char *)data + off,
			    size - off < 8 ? size - off : 8);
		}
		if (step % 17 == 0)
			pty_screen_dirty_clear(s);
	}
	check_screen(s);
	compare(s, s2);
	CHECK(out == out2 && ev == ev2);
	pty_screen_free(s);
	pty_screen_free(s2);
	return 0;
}
