/*
 * cell.c: small helpers over struct pty_cell shared by the screen, the
 * packed line codec, the keys and the clients: a blank cell, a cell's text
 * as UTF-8, and the UTF-8 of one codepoint.
 */
#include <stdint.h>
#include <string.h>

#include "pty/pty.h"
#include "pty/pty_int.h"

void
pty_cell_blank(struct pty_cell *cells, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		memset(&cells[i], 0, sizeof cells[i]);
		cells[i].width = 1;
	}
}

int
pty__cell_utf8_put(uint8_t *p, uint32_t cp)
{
	if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		cp = 0xfffd;
	if (cp < 0x80) {
		p[0] = (uint8_t)cp;
		return 1;
	}
	if (cp < 0x800) {
		p[0] = (uint8_t)(0xc0 | (cp >> 6));
		p[1] = (uint8_t)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		p[0] = (uint8_t)(0xe0 | (cp >> 12));
		p[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
		p[2] = (uint8_t)(0x80 | (cp & 0x3f));
		return 3;
	}
	p[0] = (uint8_t)(0xf0 | (cp >> 18));
	p[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
	p[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
	p[3] = (uint8_t)(0x80 | (cp & 0x3f));
	return 4;
}

size_t
pty_cell_utf8(const struct pty_cell *c, char *buf, size_t bufsz)
{
	uint8_t tmp[4];
	size_t len = 0;
	int i, n;

	if (bufsz == 0)
		return 0;
	for (i = 0; i < PTY_CELL_MAXCP && c->cp[i] != 0; i++) {
		n = pty__cell_utf8_put(tmp, c->cp[i]);
		if (len + (size_t)n + 1 > bufsz)
			break;
		memcpy(buf + len, tmp, (size_t)n);
		len += (size_t)n;
	}
	buf[len] = '\0';
	return len;
}
