/*
 * line.c: the packed line codec shared by the scrollback ring (screen.c)
 * and the holder->client wire protocol (ROWS / SB_LINES frames).
 * pty_line_unpack reads untrusted
 * bytes: every read is bounds-checked and anything malformed is refused.
 *
 * A packed line (all integers little-endian):
 *
 *   u16 ncells                  cells in the line, 0..PTY__LINE_MAXCELLS,
 *                               trailing blanks already trimmed
 *   then runs until ncells cells are covered, each:
 *     u16 count (>= 1)  u32 fg  u32 bg  u16 attrs
 *                               the pen of the next count cells (colours as
 *                               PTY_COLOR_*, attrs within PTY_ATTR_*)
 *     count cells, each one of:
 *       0x00        an empty cell (cp[0] == 0)
 *       0x01..0x7f  a cell holding that one ASCII character
 *       0x80        the right half of the wide character just before it
 *       0x80 + n    n = 1..PTY__CELL_TEXTMAX: n bytes of UTF-8 follow, the base character
 *                   and its combining marks (1..PTY_CELL_MAXCP codepoints)
 *
 * Widths are implied: a character cell followed by a right half is width
 * 2, other cells are width 1, right halves width 0. A plain 80-column line
 * of ASCII text takes 2 + 12 + 80 bytes.
 */
#include <errno.h>
#include <string.h>

#include "pty/pty.h"
#include "pty/pty_int.h"

void
pty__line_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

void
pty__line_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	    ((uint32_t)p[3] << 24);
}

uint8_t *
pty__line_run(uint8_t *p, uint32_t fg, uint32_t bg, uint16_t attrs)
{
	pty__line_put16(p, 0);
	pty__line_put32(p + 2, fg);
	pty__line_put32(p + 6, bg);
	pty__line_put16(p + 10, attrs);
	return p + PTY__LINE_RUNHDR;
}

uint8_t *
pty__line_text(uint8_t *p, const uint32_t *cps, int n)
{
	uint8_t *q;
	int i;

	if (n == 1 && cps[0] < 0x80) {
		*p = (uint8_t)cps[0];
		return p + 1;
	}
	q = p + 1;
	for (i = 0; i < n && i < PTY_CELL_MAXCP; i++)
		q += pty__cell_utf8_put(q, cps[i]);
	*p = (uint8_t)(PTY__LC_TEXT + (q - p - 1));
	return q;
}

static bool
color_ok(uint32_t c)
{
	switch (PTY_COLOR_KIND(c)) {
	case PTY_COLOR_KIND_DEFAULT:
		return c == PTY_COLOR_DEFAULT;
	case PTY_COLOR_KIND_INDEXED:
		return (c & 0x00ffff00u) == 0;
	case PTY_COLOR_KIND_RGB:
		return true;
	default:
		return false;
	}
}

/* Trailing-trimmable: empty or a space, default pen, not a right half. */
static bool
cell_trimmable(const struct pty_cell *c)
{
	return (c->cp[0] == 0 || (c->cp[0] == ' ' && c->cp[1] == 0)) &&
	    c->width != 0 && c->fg == PTY_COLOR_DEFAULT &&
	    c->bg == PTY_COLOR_DEFAULT && (c->attrs & PTY__ATTR_ALL) == 0;
}

size_t
pty_line_packed_max(int ncells)
{
	if (ncells < 0)
		ncells = 0;
	if (ncells > PTY__LINE_MAXCELLS)
		ncells = PTY__LINE_MAXCELLS;
	return 2 + (size_t)ncells * (PTY__LINE_RUNHDR + 1 + PTY__CELL_TEXTMAX);
}

size_t
pty_line_pack(const struct pty_cell *cells, int ncells, uint8_t *buf,
    size_t bufsz)
{
	uint8_t *p, *end, *run = NULL;
	uint32_t fg = 0, bg = 0;
	uint16_t attrs = 0, count = 0;
	bool prev_wide = false;
	int i, n, k;

	if (ncells < 0)
		ncells = 0;
	n = ncells > PTY__LINE_MAXCELLS ? PTY__LINE_MAXCELLS : ncells;
	while (n > 0 && cell_trimmable(&cells[n - 1]))
		n--;
	if (bufsz < 2)
		return 0;
	pty__line_put16(buf, (uint16_t)n);
	p = buf + 2;
	end = buf + bufsz;
	for (i = 0; i < n; i++) {
		const struct pty_cell *c = &cells[i];
		uint32_t cfg = color_ok(c->fg) ? c->fg : PTY_COLOR_DEFAULT;
		uint32_t cbg = color_ok(c->bg) ? c->bg : PTY_COLOR_DEFAULT;
		uint16_t ca = c->attrs & PTY__ATTR_ALL;

		if (run == NULL || cfg != fg || cbg != bg || ca != attrs) {
			if (run != NULL)
				pty__line_put16(run, count);
			if (end - p < PTY__LINE_RUNHDR)
				return 0;
			run = p;
			p = pty__line_run(p, cfg, cbg, ca);
			fg = cfg;
			bg = cbg;
			attrs = ca;
			count = 0;
		}
		count++;
		if (end - p < 1 + PTY__CELL_TEXTMAX) {
			/* Exact check only when close to the end. */
			uint8_t tmp[1 + PTY__CELL_TEXTMAX];
			size_t len = 1;

			if (c->width != 0 && c->cp[0] != 0) {
				for (k = 0; k < PTY_CELL_MAXCP && c->cp[k]; k++)
					;
				len = (size_t)(pty__line_text(tmp, c->cp, k) -
				    tmp);
			}
			if ((size_t)(end - p) < len)
				return 0;
		}
		if (c->width == 0) {
			*p++ = prev_wide ? PTY__LC_WIDE2 : PTY__LC_BLANK;
			prev_wide = false;
		} else if (c->cp[0] == 0) {
			*p++ = PTY__LC_BLANK;
			prev_wide = false;
		} else {
			for (k = 0; k < PTY_CELL_MAXCP && c->cp[k]; k++)
				;
			p = pty__line_text(p, c->cp, k);
			prev_wide = c->width == 2;
		}
	}
	if (run != NULL)
		pty__line_put16(run, count);
	return (size_t)(p - buf);
}

/* Strict UTF-8 decode of n bytes into at most max codepoints. */
static int
utf8_cell(const uint8_t *s, size_t n, uint32_t *cps, int max)
{
	size_t i = 0;
	int k = 0;

	while (i < n) {
		uint32_t cp, min;
		int more;
		uint8_t b = s[i++];

		if (b < 0x80) {
			cp = b;
			more = 0;
			min = 0;
		} else if (b >= 0xc2 && b <= 0xdf) {
			cp = b & 0x1f;
			more = 1;
			min = 0x80;
		} else if (b >= 0xe0 && b <= 0xef) {
			cp = b & 0x0f;
			more = 2;
			min = 0x800;
		} else if (b >= 0xf0 && b <= 0xf4) {
			cp = b & 0x07;
			more = 3;
			min = 0x10000;
		} else {
			return -1;
		}
		if ((size_t)more > n - i)
			return -1;
		while (more-- > 0) {
			b = s[i++];
			if ((b & 0xc0) != 0x80)
				return -1;
			cp = (cp << 6) | (b & 0x3f);
		}
		if (cp < min || cp == 0 || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff) || k >= max)
			return -1;
		cps[k++] = cp;
	}
	return k;
}

int
pty_line_unpack(const uint8_t *buf, size_t len, struct pty_cell *cells,
    int maxcells, size_t *used)
{
	size_t off = 0;
	int ncells, idx = 0;
	bool prev_text = false;

	if (maxcells < 0)
		maxcells = 0;
	if (used != NULL)
		*used = 0;
	if (len < 2)
		goto bad;
	ncells = get16(buf);
	off = 2;
	if (ncells > PTY__LINE_MAXCELLS)
		goto bad;
	while (idx < ncells) {
		uint32_t fg, bg;
		uint16_t attrs;
		int count, j;

		if (len - off < PTY__LINE_RUNHDR)
			goto bad;
		count = get16(buf + off);
		fg = get32(buf + off + 2);
		bg = get32(buf + off + 6);
		attrs = get16(buf + off + 10);
		off += PTY__LINE_RUNHDR;
		if (count == 0 || count > ncells - idx || !color_ok(fg) ||
		    !color_ok(bg) || (attrs & ~PTY__ATTR_ALL) != 0)
			goto bad;
		for (j = 0; j < count; j++, idx++) {
			struct pty_cell c;
			uint8_t b;

			if (off >= len)
				goto bad;
			b = buf[off++];
			memset(&c, 0, sizeof c);
			c.fg = fg;
			c.bg = bg;
			c.attrs = attrs;
			c.width = 1;
			if (b == PTY__LC_BLANK) {
				prev_text = false;
			} else if (b < 0x80) {
				c.cp[0] = b;
				prev_text = true;
			} else if (b == PTY__LC_WIDE2) {
				if (!prev_text)
					goto bad;
				c.width = 0;
				if (idx - 1 < maxcells)
					cells[idx - 1].width = 2;
				prev_text = false;
			} else if (b <= PTY__LC_TEXT + PTY__CELL_TEXTMAX) {
				size_t n = b - PTY__LC_TEXT;

				if (n > len - off ||
				    utf8_cell(buf + off, n, c.cp,
					PTY_CELL_MAXCP) < 1)
					goto bad;
				off += n;
				prev_text = true;
			} else {
				goto bad;
			}
			if (idx < maxcells)
				cells[idx] = c;
		}
	}
	if (ncells < maxcells)
		pty_cell_blank(cells + ncells, maxcells - ncells);
	if (used != NULL)
		*used = off;
	return ncells;
bad:
	pty_cell_blank(cells, maxcells);
	return PTY_EPROTO;
}
