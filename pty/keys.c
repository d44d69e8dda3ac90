/*
 * keys.c: what the operator types, encoded the way the program asked
 * (SPEC 4.5; STYLE A, F). Pure: a key, a character or a paste and the
 * modes the VT filter tracked (vtfilter.c: DECCKM, LNM, S8C1T, bracketed
 * paste, as libvterm applies them) in; the bytes for the program out. The encoding is the one
 * libvterm 0.1.4 sends (xterm's, with CSI u for what it cannot say), so
 * that keys read the same whichever side encodes them.
 */
#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pty/pty.h"
#include "pty/pty_int.h"

/* How a key is sent. */
enum kind {
	K_NONE,
	K_ENTER,	/* CR, or CR LF in newline mode (LNM) */
	K_TAB,		/* HT; shifted: CSI Z */
	K_LITERAL,	/* the byte; with Shift or Ctrl: CSI byte ; mods u */
	K_CURSOR,	/* CSI final, or SS3 final in application mode */
	K_SS3,		/* SS3 final (F1-F4) */
	K_NUM,		/* CSI num ~ (with mods: CSI num ; mods ~) */
};

struct code {
	uint8_t kind;
	uint8_t ch;	/* the byte, or the final (not K_NUM) */
	uint8_t num;	/* K_NUM */
};

static const struct code codes[PTY_KEY_MAX] = {
	[PTY_KEY_ENTER] = { K_ENTER, '\r', 0 },
	[PTY_KEY_TAB] = { K_TAB, '\t', 0 },
	[PTY_KEY_BACKSPACE] = { K_LITERAL, 0x7f, 0 },
	[PTY_KEY_ESCAPE] = { K_LITERAL, 0x1b, 0 },
	[PTY_KEY_UP] = { K_CURSOR, 'A', 0 },
	[PTY_KEY_DOWN] = { K_CURSOR, 'B', 0 },
	[PTY_KEY_LEFT] = { K_CURSOR, 'D', 0 },
	[PTY_KEY_RIGHT] = { K_CURSOR, 'C', 0 },
	[PTY_KEY_INS] = { K_NUM, 0, 2 },
	[PTY_KEY_DEL] = { K_NUM, 0, 3 },
	[PTY_KEY_HOME] = { K_CURSOR, 'H', 0 },
	[PTY_KEY_END] = { K_CURSOR, 'F', 0 },
	[PTY_KEY_PAGEUP] = { K_NUM, 0, 5 },
	[PTY_KEY_PAGEDOWN] = { K_NUM, 0, 6 },
	[PTY_KEY_F1] = { K_SS3, 'P', 0 },
	[PTY_KEY_F1 + 1] = { K_SS3, 'Q', 0 },
	[PTY_KEY_F1 + 2] = { K_SS3, 'R', 0 },
	[PTY_KEY_F1 + 3] = { K_SS3, 'S', 0 },
	[PTY_KEY_F1 + 4] = { K_NUM, 0, 15 },
	[PTY_KEY_F1 + 5] = { K_NUM, 0, 17 },
	[PTY_KEY_F1 + 6] = { K_NUM, 0, 18 },
	[PTY_KEY_F1 + 7] = { K_NUM, 0, 19 },
	[PTY_KEY_F1 + 8] = { K_NUM, 0, 20 },
	[PTY_KEY_F1 + 9] = { K_NUM, 0, 21 },
	[PTY_KEY_F1 + 10] = { K_NUM, 0, 23 },
	[PTY_KEY_F1 + 11] = { K_NUM, 0, 24 },
};

/* The modifier bits (PTY_MOD_*); CSI parameters carry them plus one. */
#define MODS (PTY_MOD_SHIFT | PTY_MOD_ALT | PTY_MOD_CTRL)

/* A control introducer (CSI or SS3): 7-bit ESC form unless S8C1T. */
static size_t
intro(const struct pty__keys_modes *m, char *buf, char c1, char final7)
{
	if (m->c1_8bit) {
		buf[0] = c1;
		return 1;
	}
	buf[0] = '\033';
	buf[1] = final7;
	return 2;
}

static size_t
csi(const struct pty__keys_modes *m, char *buf, const char *fmt, int a,
    int b)
{
	size_t n = intro(m, buf, (char)0x9b, '[');
	int k = snprintf(buf + n, PTY__KEYS_MAX - n, fmt, a, b);

	assert(k > 0 && (size_t)k < PTY__KEYS_MAX - n);
	return n + (size_t)k;
}

size_t
pty__keys_key(const struct pty__keys_modes *m, enum pty_key key,
    unsigned mods, char *buf)
{
	struct code c;
	size_t n;

	assert(m != NULL && buf != NULL);
	if ((int)key <= PTY_KEY_NONE || (int)key >= PTY_KEY_MAX)
		return 0;
	c = codes[key];
	mods &= MODS;
	switch (c.kind) {
	case K_ENTER:
		if (m->newline) {
			memcpy(buf, "\r\n", 2);
			return 2;
		}
		break;
	case K_TAB:
		if (mods == PTY_MOD_SHIFT)
			return csi(m, buf, "Z", 0, 0);
		if (mods & PTY_MOD_SHIFT)
			return csi(m, buf, "1;%dZ", (int)mods + 1, 0);
		break;
	case K_CURSOR:
	case K_SS3:
		if (mods == 0 && (c.kind == K_SS3 || m->app_cursor)) {
			n = intro(m, buf, (char)0x8f, 'O');
			buf[n] = (char)c.ch;
			return n + 1;
		}
		if (mods == 0) {
			n = intro(m, buf, (char)0x9b, '[');
			buf[n] = (char)c.ch;
			return n + 1;
		}
		return csi(m, buf, "1;%d%c", (int)mods + 1, c.ch);
	case K_NUM:
		if (mods == 0)
			return csi(m, buf, "%d~", c.num, 0);
		return csi(m, buf, "%d;%d~", c.num, (int)mods + 1);
	case K_LITERAL:
		break;
	default:
		return 0;
	}
	/* The literal byte: Enter, Tab, Backspace, Escape. */
	if (mods & (PTY_MOD_SHIFT | PTY_MOD_CTRL))
		return csi(m, buf, "%d;%du", c.ch, (int)mods + 1);
	n = 0;
	if (mods & PTY_MOD_ALT)
		buf[n++] = '\033';
	buf[n++] = (char)c.ch;
	return n;
}

size_t
pty__keys_unichar(const struct pty__keys_modes *m, uint32_t cp,
    unsigned mods, char *buf)
{
	bool csiu;
	size_t n = 0;

	assert(m != NULL && buf != NULL);
	if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	mods &= MODS;
	/* Shift says nothing about a character, but Space. */
	if (cp != ' ')
		mods &= ~PTY_MOD_SHIFT;
	if (mods == 0)
		return (size_t)pty__cell_utf8_put((uint8_t *)buf, cp);
	switch (cp) {
	case 'i':
	case 'j':
	case 'm':
	case '[':
		csiu = true;	/* Ctrl- of these are Tab, LF, CR, Escape */
		break;
	case '\\':
	case ']':
	case '^':
	case '_':
		csiu = false;
		break;
	case ' ':
		csiu = (mods & PTY_MOD_SHIFT) != 0;
		break;
	default:
		csiu = cp < 'a' || cp > 'z';
		break;
	}
	/* Alt alone is an ESC prefix; anything else needs CSI u. */
	if (csiu && (mods & ~PTY_MOD_ALT))
		return csi(m, buf, "%d;%du", (int)cp, (int)mods + 1);
	if (mods & PTY_MOD_CTRL)
		cp &= 0x1f;
	if (mods & PTY_MOD_ALT)
		buf[n++] = '\033';
	/* One byte, as libvterm's "%c" sends it, whatever the character. */
	buf[n++] = (char)(uint8_t)cp;
	return n;
}

void
pty__keys_paste(const struct pty__keys_modes *m, bool bracketed,
    const char *buf, size_t len, pty_screen_output_cb out, void *ud)
{
	static const char end[] = "\033[201~";
	const size_t endlen = sizeof end - 1;
	char mark[PTY__KEYS_MAX];
	size_t i = 0, from = 0;

	assert(m != NULL && out != NULL);
	if (buf == NULL)
		return;
	if (!bracketed) {
		if (len > 0)
			out(buf, len, ud);
		return;
	}
	if (m->paste_marks)
		out(mark, csi(m, mark, "%d~", 200, 0), ud);
	/* The text cannot end the bracket early: drop embedded end marks. */
	while (i + endlen <= len) {
		if (buf[i] == '\033' && memcmp(buf + i, end, endlen) == 0) {
			if (i > from)
				out(buf + from, i - from, ud);
			i += endlen;
			from = i;
		} else {
			i++;
		}
	}
	if (len > from)
		out(buf + from, len - from, ud);
	if (m->paste_marks)
		out(mark, csi(m, mark, "%d~", 201, 0), ud);
}
