/*
 * escape.c: untrusted text (names, titles, branches, paths, output lines)
 * made safe to print: controls, bidi overrides and invalid UTF-8 become
 * visible escapes (SPEC 4.7). Shared by the console and the command line.
 */
#include <assert.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#include "tui/tui.h"

int
tui_escape_utf8_decode(const char *s, size_t len, uint32_t *cp)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t c, min;
	size_t n, i;

	assert(cp != NULL);
	if (len == 0)
		return -1;
	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		n = 2;
		c = p[0] & 0x1f;
		min = 0x80;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		c = p[0] & 0x0f;
		min = 0x800;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		c = p[0] & 0x07;
		min = 0x10000;
	} else
		return -1;
	if (len < n)
		return -1;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return -1;
		c = (c << 6) | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return -1;
	*cp = c;
	return (int)n;
}

size_t
tui_escape_utf8_encode(uint32_t cp, char *out)
{
	unsigned char *o = (unsigned char *)out;

	assert(cp <= 0x10ffff);
	if (cp < 0x80) {
		o[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (unsigned char)(0xc0 | (cp >> 6));
		o[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (unsigned char)(0xe0 | (cp >> 12));
		o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (unsigned char)(0xf0 | (cp >> 18));
	o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

bool
tui_escape_cp_unsafe(uint32_t cp)
{
	if (cp < 0x20 || cp == 0x7f)
		return true;			/* C0, DEL */
	if (cp >= 0x80 && cp <= 0x9f)
		return true;			/* C1 */
	if (cp >= 0x202a && cp <= 0x202e)
		return true;			/* LRE RLE PDF LRO RLO */
	if (cp >= 0x2066 && cp <= 0x2069)
		return true;			/* LRI RLI FSI PDI */
	if (cp == 0x200e || cp == 0x200f || cp == 0x061c)
		return true;			/* LRM RLM ALM */
	if (cp == 0x2028 || cp == 0x2029)
		return true;			/* line/paragraph separators */
	return false;
}

int
tui_escape_cp_width(uint32_t cp)
{
	int w;

	if (cp < 0x80)
		return cp >= 0x20 && cp != 0x7f ? 1 : 0;
	w = wcwidth((wchar_t)cp);
	if (w < 0)
		return 1;
	return w > 2 ? 2 : w;
}

size_t
tui_escape_width(const char *s, size_t len)
{
	size_t off = 0, cols = 0;
	uint32_t cp;
	int n;

	while (off < len) {
		n = tui_escape_utf8_decode(s + off, len - off, &cp);
		if (n < 0) {
			cols++;	/* not escaped text: count the byte */
			off++;
			continue;
		}
		cols += (size_t)tui_escape_cp_width(cp);
		off += (size_t)n;
	}
	return cols;
}

/*
 * The representation of the next unit of in (one byte or one character):
 * written into unit (>= 16 bytes), its length returned, *used set to the
 * input bytes it stands for.
 */
static size_t
next_unit(const char *in, size_t len, unsigned flags, char *unit,
    size_t *used)
{
	uint32_t cp;
	int n;

	n = tui_escape_utf8_decode(in, len, &cp);
	if (n < 0) {
		*used = 1;
		return (size_t)snprintf(unit, 16, "\\x%02x",
		    (unsigned)(unsigned char)in[0]);
	}
	*used = (size_t)n;
	if (cp == '\\' && (flags & TUI_ESC_BACKSLASH)) {
		memcpy(unit, "\\\\", 2);
		return 2;
	}
	if (!tui_escape_cp_unsafe(cp)) {
		memcpy(unit, in, (size_t)n);
		return (size_t)n;
	}
	switch (cp) {
	case '\n':
		if (flags & TUI_ESC_KEEP_NL) {
			unit[0] = '\n';
			return 1;
		}
		memcpy(unit, "\\n", 2);
		return 2;
	case '\t':
		if (flags & TUI_ESC_KEEP_TAB) {
			unit[0] = '\t';
			return 1;
		}
		memcpy(unit, "\\t", 2);
		return 2;
	case '\r':
		memcpy(unit, "\\r", 2);
		return 2;
	default:
		break;
	}
	if (cp < 0x80)
		return (size_t)snprintf(unit, 16, "\\x%02x", (unsigned)cp);
	return (size_t)snprintf(unit, 16, "\\u%04x", (unsigned)cp);
}

size_t
tui_escape_ex(const char *in, size_t len, char *out, size_t outsz,
    unsigned flags)
{
	char unit[16];
	size_t off = 0, w = 0, used, n;

	assert(in != NULL || len == 0);
	assert(out != NULL || outsz == 0);
	if (outsz == 0)
		return 0;
	while (off < len) {
		n = next_unit(in + off, len - off, flags, unit, &used);
		if (n > outsz - 1 - w)
			break;
		memcpy(out + w, unit, n);
		w += n;
		off += used;
	}
	out[w] = '\0';
	return w;
}

size_t
tui_escape(const char *in, size_t len, char *out, size_t outsz)
{
	return tui_escape_ex(in, len, out, outsz, 0);
}

size_t
tui_escape_size(const char *in, size_t len, unsigned flags)
{
	char unit[16];
	size_t off = 0, total = 0, used;

	assert(in != NULL || len == 0);
	while (off < len) {
		total += next_unit(in + off, len - off, flags, unit, &used);
		off += used;
	}
	return total;
}
