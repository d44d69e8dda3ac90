/*
 * vtfilter.c: the VT stream filter in front of libvterm 0.1.4 (SPEC 4.1;
 * STYLE A, F). Pure: program output in; bytes for libvterm and a few
 * events the model carries out (REP, a cursor to clamp, a mark to join,
 * an ASCII run to write as cells) out through struct pty__vtfilter_sink,
 * plus the input modes libvterm keeps no getter for. screen.c owns one.
 *
 * 0.1.4 mishandles bytes split across writes, puts whole strings and text
 * runs into stack arrays and has a few memory-safety bugs that bytes from
 * a sandboxed agent must not reach; this file is what stands between.
 * This file is the stream: its states, strings, text and the ASCII fast
 * path; the sequences it carries out itself (modes, cursor save slots,
 * G-sets, SGR rewrites) are in vtfilter_seq.c.
 */
#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pty/pty_int.h"

/* Filter states (see feed). */
enum { F_GROUND, F_ESC, F_ESC_INT, F_CSI, F_STR, F_STR_ESC };
enum { S_OSC, S_DCS, S_IGNORE };

/*
 * Every byte passes through a small escape-sequence tracker before
 * libvterm sees it. It
 *  - tracks the modes libvterm 0.1.4 has no getter for: DECSET 1 (app
 *    cursor), 1004 (focus), 1006 (SGR mouse), 2004 (bracketed paste), ESC =
 *    / ESC > (keypad), reset by RIS, whatever the chunking, and in step
 *    with libvterm (which encodes the keys from its own copy);
 *  - takes OSC and DCS strings out of the stream and hands each to
 *    libvterm whole, in one write, its payload cut to PTY__OSC_MAX bytes
 *    (0.1.4 loses strings split across writes, reads before the buffer on
 *    an ST split after its ESC, and copies a title to the stack);
 *    APC/PM/SOS strings are dropped, as xterm does, and DECRQSS requests
 *    0.1.4 would answer through a broken printf are answered here;
 *  - holds back a UTF-8 sequence cut at the end of a feed (0.1.4 turns it
 *    into U+FFFD), drops what its UTF-8 decoder mishandles and the few
 *    characters it gets wrong (text_check),
 *    reimplements REP (rep), bounds CSI parameters, and writes at most
 *    PTY__VTF_WRITE_MAX bytes at a time;
 *  - passes each parameter of a mode sequence (SM/RM, DECSET/DECRST) on
 *    alone (0.1.4 applies only the first), and keeps the cursor's save
 *    slots itself, one per screen (cursor_save: 0.1.4 has one, without
 *    the charsets or origin mode).
 * Plain text is found with memchr and passed on in place.
 */

void
pty__vtf_pass(struct pty__vtfilter *f, const void *p, size_t n)
{
	if (n > 0)
		f->sink->pass(p, n, f->ud);
}

static void
flush(struct pty__vtfilter *f, const uint8_t *b, size_t from, size_t to)
{
	/* Every flush starts at the span: no text of it is held any more. */
	if (from < to)
		f->text_held = false;
	while (from < to) {
		size_t n = to - from;

		if (n > PTY__VTF_WRITE_MAX) {
			int k = 0;

			/*
			 * Split before an ASCII byte if one is near: never
			 * inside a character, nor before a combining mark.
			 */
			for (n = PTY__VTF_WRITE_MAX;
			    n > PTY__VTF_WRITE_MAX - 256; n--)
				if (b[from + n] < 0x80)
					break;
			if (n == PTY__VTF_WRITE_MAX - 256) {
				n = PTY__VTF_WRITE_MAX;
				while (k < 3 && (b[from + n] & 0xc0) == 0x80) {
					n--;
					k++;
				}
			}
		}
		pty__vtf_pass(f, b + from, n);
		from += n;
	}
}

static int
utf8_need(uint8_t b)
{
	if (b >= 0xf0)
		return 4;
	if (b >= 0xe0)
		return 3;
	if (b >= 0xc0)
		return 2;
	return 1;
}

/* The codepoint of one complete UTF-8 sequence p[0..n); -1 if not one. */
static int
utf8_cell_cp(const uint8_t *p, int n, uint32_t *cp)
{
	uint32_t v;
	int k;

	if (n < 1 || n != utf8_need(p[0]) || p[0] >= 0xf8)
		return -1;
	v = n == 1 ? p[0] : p[0] & (0x7fu >> n);
	for (k = 1; k < n; k++) {
		if ((p[k] & 0xc0) != 0x80)
			return -1;
		v = (v << 6) | (p[k] & 0x3fu);
	}
	/* What 0.1.4's decoder turns into U+FFFD is not a mark either. */
	if ((n == 2 && v < 0x80) || (n == 3 && v < 0x800) ||
	    (n == 4 && v < 0x10000) || (v >= 0xd800 && v <= 0xdfff) ||
	    v == 0xfffe || v == 0xffff)
		return -1;
	*cp = v;
	return 0;
}

/* Bytes at the end of p[0..n) that start an unfinished UTF-8 sequence. */
static size_t
utf8_tail(const uint8_t *p, size_t n)
{
	size_t j = n, k = 0;

	while (j > 0 && k < 3 && (p[j - 1] & 0xc0) == 0x80) {
		j--;
		k++;
	}
	if (j == 0 || p[j - 1] < 0xc0 || p[j - 1] > 0xf7)
		return 0;
	j--;
	return (size_t)utf8_need(p[j]) > n - j ? n - j : 0;
}


static void
str_append(struct pty__vtfilter *f, const uint8_t *p, size_t n)
{
	size_t room = 2 + PTY__OSC_MAX - f->slen;

	if (f->skind == S_IGNORE)
		return;
	if (n > room) {
		n = room;
		f->struncated = true;
	}
	memcpy(f->sbuf + f->slen, p, n);
	f->slen += n;
}

/*
 * DECRQSS (DCS $ q ...) requests libvterm 0.1.4 answers itself; for any
 * other its reply goes through printf with a "%.s" that takes the length
 * as the string pointer (undefined behaviour, a crash under ASan), so we
 * answer those here. DCS strings that are not DECRQSS are harmless.
 */
static bool
decrqss_ok(const char *p, size_t n)
{
	if (n < 2 || p[0] != '$' || p[1] != 'q')
		return true;
	p += 2;
	n -= 2;
	if (n == 1)
		return p[0] == 'm' || p[0] == 'r' || p[0] == 's';
	if (n == 2)
		return (p[0] == ' ' || p[0] == '"') && p[1] == 'q';
	return false;
}

static void
str_done(struct pty__vtfilter *f)
{
	size_t n = f->slen;

	if (f->skind == S_IGNORE)
		return;
	if (f->struncated)
		n -= utf8_tail((const uint8_t *)f->sbuf + 2, n - 2);
	if (f->skind == S_DCS && !decrqss_ok(f->sbuf + 2, n - 2)) {
		/* What xterm (and libvterm) answer to an unknown request. */
		f->sink->reply("\033P0$r\033\\", 7, f->ud);
		return;
	}
	if (f->skind == S_OSC) {
		f->sbuf[n++] = '\a';
	} else {
		f->sbuf[n++] = '\033';
		f->sbuf[n++] = '\\';
	}
	pty__vtf_pass(f, f->sbuf, n);
}

static bool
is_str_intro(uint8_t c)
{
	return c == ']' || c == 'P' || c == '_' || c == '^' || c == 'X';
}

/* Bytes of U+0080..U+009F in UTF-8: 0.1.4 gives them width -1. */
static bool
is_c1(const uint8_t *p)
{
	return p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f;
}

/*
 * U+302A-302F and U+3099-309A (3 bytes of UTF-8): 0.1.4 has them both as
 * combining marks and as wide, and adds their width to the glyph they join
 * (a 3-column glyph) unless they arrive in a later write. Dropped.
 */
static bool
is_wide_mark(const uint8_t *p)
{
	return p[0] == 0xe3 && ((p[1] == 0x80 && p[2] >= 0xaa &&
	    p[2] <= 0xaf) || (p[1] == 0x82 && (p[2] == 0x99 ||
	    p[2] == 0x9a)));
}

static bool
all_ascii(const uint8_t *p, size_t n)
{
	uint64_t acc = 0, w;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		acc |= w;
	}
	for (; i < n; i++)
		acc |= p[i];
	return (acc & 0x8080808080808080ull) == 0;
}

static void
drop(struct pty__vtfilter *f, const uint8_t *b, size_t *span, size_t at,
    size_t n)
{
	flush(f, b, *span, at);
	*span = at + n;
}

/* What the last byte passed on in ground was (see mark). */
#define TB_NONE 0	/* not text: a control, an escape, nothing yet */
#define TB_ASCII 1	/* an ASCII glyph */
#define TB_UTF8 2	/* a glyph from a multibyte sequence, or U+FFFD */

/*
 * A combining mark (one UTF-8 sequence at p) that starts a libvterm write
 * right after text: a feed that starts with it, or one of our own splits.
 * Within one text run libvterm joins it to the glyph before; at the start
 * of a run it does so only if its cursor moved past that glyph, and at the
 * right edge (a pending wrap) it instead wraps and prints the mark alone.
 * So there the model joins it itself and libvterm never sees it (the
 * sink's join_mark). Returns whether it did. The rule a user sees: a mark
 * joins the glyph before it unless a control or an escape comes between,
 * however the bytes arrive.
 */
static bool
mark(struct pty__vtfilter *f, const uint8_t *p, int n)
{
	uint32_t cp;

	if (n < 2 || utf8_cell_cp(p, n, &cp) < 0)
		return false;
	return f->sink->join_mark(cp, f->ud);
}

/*
 * Drop b[k..k+n) (what is before goes to libvterm first). The drop splits
 * a text run across two writes: when text came before (tb), marks right
 * after it are merged as if unsplit (mark). Returns where to go on.
 */
static size_t
drop_at(struct pty__vtfilter *f, const uint8_t *b, size_t *span, size_t k,
    size_t n, size_t end, uint8_t tb)
{
	drop(f, b, span, k, n);
	k += n;
	while (tb != TB_NONE && k < end && b[k] >= 0xc0 && b[k] < 0xf8) {
		size_t q = (size_t)utf8_need(b[k]);

		if (q > end - k || !mark(f, b + k, (int)q))
			break;
		k += q;
		*span = k;
	}
	return k;
}

/*
 * Text b[i..end) is passed on later from *span; leave out what 0.1.4's
 * UTF-8 decoder mishandles. Its state outlives a text run, and a run that
 * starts while a sequence is unfinished writes one codepoint past its
 * stack array; so every unfinished sequence is dropped (one cut by the
 * end of this feed, when end == len, is left for the caller to hold), and
 * so are bytes 0xf8-0xff (5- and 6-byte forms), C1 codepoints and the
 * wide marks (is_wide_mark). *tb tells whether the last byte passed on
 * was text (so a mark would join the glyph before it). Returns whether
 * the text was all ASCII.
 */
static bool
text_check(struct pty__vtfilter *f, const uint8_t *b, size_t *span, size_t i,
    size_t end, size_t len, uint8_t *tb)
{
	size_t k;

	if (!f->ss && all_ascii(b + i, end - i)) {
		if (end > i)
			*tb = b[end - 1] >= 0x20 && b[end - 1] != 0x7f ?
			    TB_ASCII : TB_NONE;
		return true;
	}
	for (k = i; k < end; k++) {
		uint8_t c = b[k], kind;
		int need, m;

		if (c < 0x20 || c == 0x7f) {
			if (c < 0x20)
				pty__vtf_c0_track(f, c);
			*tb = TB_NONE;
			continue;
		}
		if (c < 0x80) {
			/*
			 * 0.1.4 decodes a run that started non-ASCII as UTF-8
			 * to its end, ignoring a G-set such as DEC graphics
			 * for the ASCII in it; a new write puts it back.
			 */
			if (*tb == TB_UTF8 && !f->g_plain[f->gl]) {
				flush(f, b, *span, k);
				*span = k;
			}
			kind = TB_ASCII;
		} else if (c < 0xc0) {
			kind = TB_UTF8;	/* a stray byte: shown as U+FFFD */
		} else if (c >= 0xf8) {
			k = drop_at(f, b, span, k, 1, end, *tb) - 1;
			continue;
		} else {
			need = utf8_need(c);
			for (m = 1; m < need && k + (size_t)m < end &&
			    (b[k + (size_t)m] & 0xc0) == 0x80; m++)
				;
			if (m != need) {
				if (k + (size_t)m == end && end == len)
					break;
				k = drop_at(f, b, span, k, (size_t)m, end,
				    *tb) - 1;
				continue;
			}
			if ((need == 2 && is_c1(b + k)) ||
			    (need == 3 && is_wide_mark(b + k))) {
				k = drop_at(f, b, span, k, (size_t)need, end,
				    *tb) - 1;
				continue;
			}
			if (*tb == TB_ASCII && !f->g_utf8[f->gl]) {
				/*
				 * Under a designated G-set libvterm ends the
				 * run here and a mark would not join the glyph
				 * before it at the right edge; a write of its
				 * own lets mark join it, as it does for
				 * a mark split off by a read.
				 */
				flush(f, b, *span, k);
				*span = k;
				if (mark(f, b + k, need)) {
					*span = k + (size_t)need;
					k += (size_t)need - 1;
					continue;
				}
			}
			k += (size_t)need - 1;
			kind = TB_UTF8;
		}
		if (f->ss) {
			/*
			 * This glyph uses up the single shift; libvterm
			 * prints it alone, so no mark of ours joins it.
			 */
			f->ss = false;
			*tb = TB_NONE;
		} else {
			*tb = kind;
		}
	}
	return false;
}

/*
 * The ASCII fast path. libvterm spends most of its time per glyph; for a
 * run of printable ASCII we pass its first byte on as usual (which wraps
 * a pending autowrap and uses up a single shift), then, when the rest but
 * the last byte fits on the row without reaching its end, write those
 * cells ourselves and move libvterm's cursor over them with CUF, and pass
 * the last byte on (so combining marks and REP find it). Only while the
 * G-set in use maps ASCII to itself, insert and origin modes are off and
 * the line is not double width; the cursor is checked after the CUF.
 */
#define FAST_MIN 16

static void
fast_run(struct pty__vtfilter *f, const uint8_t *b, size_t *span, size_t r0,
    size_t r1)
{
	enum pty__vtf_fast r;

	/* Only after the flush are the model's grid and pen current. */
	flush(f, b, *span, r0 + 1);
	*span = r0 + 1;
	r = f->sink->ascii_run(b + r0 + 1, r1 - r0 - 2, f->ud);
	if (r == PTY__VTF_FAST_NO)
		return;
	*span = r1 - 1;
	if (r == PTY__VTF_FAST_STOP)
		f->nofast = true;
}

/* Ground text b[i..end), all ASCII: find runs for fast_run, track SI/SO. */
static void
ground_ascii(struct pty__vtfilter *f, const uint8_t *b, size_t *span,
    size_t i, size_t end)
{
	size_t k = i, r0;

	while (k < end) {
		r0 = k;
		while (k < end && b[k] >= 0x20 && b[k] < 0x7f)
			k++;
		if (k - r0 >= FAST_MIN && !f->insert && !f->origin &&
		    f->g_plain[f->gl] && !f->nofast)
			fast_run(f, b, span, r0, k);
		while (k < end && (b[k] < 0x20 || b[k] == 0x7f))
			pty__vtf_c0_track(f, b[k++]);
	}
}

static void
csi_start(struct pty__vtfilter *f)
{
	f->st = F_CSI;
	f->csi_priv = f->csi_other = false;
	f->csi_started = false;
	f->csi_inter = 0;
	f->np = 0;
	f->param[0] = 0;
	f->colon = 0;
}

static void
str_start(struct pty__vtfilter *f, uint8_t c)
{
	f->st = F_STR;
	f->skind = c == ']' ? S_OSC : c == 'P' ? S_DCS : S_IGNORE;
	f->sbuf[0] = '\033';
	f->sbuf[1] = (char)c;
	f->slen = 2;
	f->struncated = false;
}

/*
 * The filter mirrors libvterm 0.1.4's parser (src/parser.c) state by
 * state, so that what it passes on, holds back or drops never leaves the
 * two disagreeing about where a sequence starts or ends.
 */
void
pty__vtfilter_feed(struct pty__vtfilter *f, const uint8_t *b, size_t len)
{
	size_t i = 0, span = 0;
	uint8_t tb;

	assert(f != NULL && f->sink != NULL);
	if (b == NULL || len == 0)
		return;
	tb = f->text_end;
	if (f->nu8 > 0) {
		int need = utf8_need(f->u8[0]);

		while (f->nu8 < need && i < len && (b[i] & 0xc0) == 0x80)
			f->u8[f->nu8++] = b[i++];
		if (f->nu8 < need && i == len)
			return;
		/* Unfinished, C1 or a wide mark: dropped, as in text_check. */
		if (f->nu8 == need && !(f->nu8 == 2 && is_c1(f->u8)) &&
		    !(f->nu8 == 3 && is_wide_mark(f->u8))) {
			if (!(tb != TB_NONE && mark(f, f->u8, f->nu8)))
				pty__vtf_pass(f, f->u8, f->nu8);
			tb = f->ss ? TB_NONE : TB_UTF8;
			f->ss = false;
		}
		f->nu8 = 0;
		span = i;
	}
	if (tb != TB_NONE && f->st == F_GROUND) {
		while (i < len && b[i] >= 0xc0 && b[i] < 0xf8) {
			size_t n = (size_t)utf8_need(b[i]);

			if (n > len - i || !mark(f, b + i, (int)n))
				break;
			i += n;
			span = i;
		}
	}
	f->text_end = TB_NONE;
	while (i < len) {
		uint8_t c = b[i];

		switch (f->st) {
		case F_GROUND: {
			const uint8_t *e = memchr(b + i, 0x1b, len - i);
			size_t end = e != NULL ? (size_t)(e - b) : len;

			if (text_check(f, b, &span, i, end, len, &tb))
				ground_ascii(f, b, &span, i, end);
			if (end > i)
				f->text_held = true;
			i = end;
			if (e == NULL)
				break;
			goto esc;
		}
		case F_ESC:
		case F_ESC_INT:
			if (c == 0x1b)
				goto esc;
			if (c == 0x18 || c == 0x1a) {
				/* Cancelled (in libvterm too, if passed). */
				f->st = F_GROUND;
				i++;
				break;
			}
			if (c < 0x20 || c == 0x7f) {
				/* C0 runs (DEL, NUL ignored); ESC waits. */
				pty__vtf_c0_track(f, c);
				i++;
				break;
			}
			if (c >= 0x80) {
				/* libvterm ignores it and stays in ESC. */
				if (f->esc_virtual) {
					flush(f, b, span, i);
					span = i + 1;
				}
				i++;
				break;
			}
			if (c == ']' || c == 'P' ||
			    (f->st == F_ESC && is_str_intro(c))) {
				/*
				 * CAN puts libvterm back to ground whatever it
				 * was in (a passed-on ESC, a CSI).
				 */
				flush(f, b, span, i);
				pty__vtf_pass(f, "\030", 1);
				str_start(f, c);
				i++;
				span = i;
				break;
			}
			if (f->st == F_ESC && (c == '7' || c == '8')) {
				/*
				 * DECSC, DECRC: ours (cursor_save), never
				 * 0.1.4's. The ESC is not passed on, so a
				 * sequence it cut is cancelled there (CAN):
				 * 0.1.4 would read what follows as more of it,
				 * and crashes on some (ESC [ ;;;;;;;;;;;; ESC 7
				 * then text).
				 */
				flush(f, b, span, f->esc_virtual ? i : i - 1);
				if (f->esc_cut)
					pty__vtf_pass(f, "\030", 1);
				f->esc_virtual = false;
				span = ++i;
				f->st = F_GROUND;
				if (c == '7')
					pty__vtf_cursor_save(f);
				else
					pty__vtf_cursor_restore(f);
				break;
			}
			if (f->esc_virtual) {
				flush(f, b, span, i);
				pty__vtf_pass(f, "\033", 1);
				span = i;
				f->esc_virtual = false;
			}
			i++;
			if (c == '[') {
				csi_start(f);
			} else if (c >= 0x20 && c <= 0x2f) {
				if (f->st == F_ESC) {
					f->esc_inter = c;
					f->esc_ninter = 0;
				}
				if (f->esc_ninter < 2)
					f->esc_ninter++;
				f->st = F_ESC_INT;
			} else if (f->st == F_ESC_INT && f->esc_inter == '#' &&
			    f->esc_ninter == 1 && (c == '3' || c == '4' ||
			    c == '6')) {
				/*
				 * Double-width/height lines: not drawn so, and
				 * on a 1-column screen 0.1.4 then puts its
				 * cursor at column -1. CAN drops the ESC #.
				 */
				flush(f, b, span, i - 1);
				pty__vtf_pass(f, "\030", 1);
				span = i;
				f->st = F_GROUND;
			} else {
				if (f->st == F_ESC_INT)
					pty__vtf_esc_final(f, c);
				else if (c == 'n')
					f->gl = 2;
				else if (c == 'o')
					f->gl = 3;
				else if (c == 'N' || c == 'O')
					f->ss = true;
				if (f->st == F_ESC && c == '=')
					f->app_keypad = true;
				else if (f->st == F_ESC && c == '>')
					f->app_keypad = false;
				else if (f->st == F_ESC && c == 'c') {
					flush(f, b, span, i);
					span = i;
					pty__vtf_modes_reset(f);
					f->sink->cursor(PTY__VTF_CURSOR_FORGET,
					    f->ud);
				}
				f->st = F_GROUND;
			}
			break;
		case F_CSI:
			if (c == 0x1b)
				goto esc;
			i++;
			if (c >= '0' && c <= '9') {
				f->csi_started = true;
				if (f->csi_inter != 0) {
					f->st = F_GROUND;
				} else if (f->param[f->np] < 10000) {
					f->param[f->np] =
					    f->param[f->np] * 10 + (c - '0');
				} else {
					/* 0.1.4 overflows a long: cut. */
					flush(f, b, span, i - 1);
					span = i;
				}
			} else if (c == ';' || c == ':') {
				f->csi_started = true;
				if (f->csi_inter != 0) {
					f->st = F_GROUND;
				} else if (f->np + 1 < PTY__VTF_NPARAM) {
					f->param[++f->np] = 0;
					if (c == ':')
						f->colon |= (uint16_t)(1u <<
						    f->np);
				} else {
					/* 0.1.4 writes past its 16 args. */
					flush(f, b, span, i - 1);
					span = i;
				}
			} else if (c >= 0x3c && c <= 0x3f) {
				if (f->csi_started)
					f->st = F_GROUND;
				else if (c == '?')
					f->csi_priv = true;
				else
					f->csi_other = true;
			} else if (c >= 0x20 && c <= 0x2f) {
				f->csi_started = true;
				f->csi_inter = c;
			} else if (c >= 0x40 && c <= 0x7e) {
				f->st = F_GROUND;
				if (c == 'b' && !f->csi_priv && !f->csi_other &&
				    f->csi_inter == 0) {
					flush(f, b, span, i - 1);
					pty__vtf_pass(f, "\030", 1);
					span = i;
					f->sink->rep(f->param[0], f->ud);
				} else if (c == 'm' && !f->csi_priv &&
				    !f->csi_other && f->csi_inter == 0) {
					uint16_t pen;

					if (pty__vtf_sgr_scan(f, &pen)) {
						char out[PTY__VTF_SGR_OUT_MAX];

						flush(f, b, span, i - 1);
						pty__vtf_pass(f, "\030", 1);
						pty__vtf_pass(f, out,
						    pty__vtf_sgr_build(f, out));
						span = i;
					} else if (pen != f->pen && f->text_held) {
						/* Text before it has the old pen. */
						flush(f, b, span, i);
						span = i;
					}
					if (pen != f->pen) {
						f->pen = pen;
						f->sink->pen(pen, f->ud);
					}
				} else if (pty__vtf_csi_final(f, c)) {
					flush(f, b, span, i - 1);
					pty__vtf_pass(f, "\030", 1);
					span = i;
					pty__vtf_csi_take(f, c);
				}
			} else if (c == 0x18 || c == 0x1a) {
				f->st = F_GROUND;
			} else if (c >= 0x80) {
				/*
				 * Ends the CSI, and libvterm drops it: pass it
				 * now, so it is never held as text.
				 */
				f->st = F_GROUND;
				flush(f, b, span, i);
				span = i;
			} else {
				pty__vtf_c0_track(f, c);
			}
			break;
		case F_STR: {
			size_t st = i;

			while (i < len && b[i] >= 0x20 && b[i] != 0x7f)
				i++;
			str_append(f, b + st, i - st);
			if (i == len)
				break;
			c = b[i++];
			if (c == 0x07) {
				str_done(f);
				f->st = F_GROUND;
			} else if (c == 0x1b) {
				f->st = F_STR_ESC;
			} else if (c == 0x18 || c == 0x1a) {
				f->st = F_GROUND;
			}
			/* Other C0, NUL and DEL inside a string are dropped. */
			span = i;
			break;
		}
		case F_STR_ESC:
			if (c == '\\') {
				str_done(f);
				f->st = F_GROUND;
				i++;
				span = i;
				break;
			}
			if (c < 0x20 || c == 0x7f) {
				/* As in libvterm: the ESC still waits. */
				if (c == 0x18 || c == 0x1a)
					f->st = F_GROUND;
				i++;
				span = i;
				break;
			}
			/* Any other byte aborts the string: a new escape. */
			f->st = F_ESC;
			f->esc_virtual = true;
			f->esc_cut = false;
			span = i;
			break;
		default:
			assert(!"bad filter state");
			f->st = F_GROUND;
			break;
		}
		continue;
esc:
		tb = TB_NONE;
		/* After an ESC not passed on, libvterm is where it was. */
		if (f->st != F_ESC || !f->esc_virtual)
			f->esc_cut = f->st == F_CSI || f->st == F_ESC_INT ||
			    f->st == F_ESC;
		/*
		 * An ESC at b[i]. When the next byte is here and cannot start
		 * a string, the ESC stays in the span; otherwise it waits.
		 */
		if (i + 1 < len && b[i + 1] >= 0x20 && b[i + 1] < 0x7f &&
		    !is_str_intro(b[i + 1])) {
			f->esc_virtual = false;
		} else {
			flush(f, b, span, i);
			span = i + 1;
			f->esc_virtual = true;
		}
		f->st = F_ESC;
		i++;
	}
	switch (f->st) {
	case F_STR:
	case F_STR_ESC:
		break;
	case F_GROUND: {
		size_t k = utf8_tail(b + span, len - span);

		flush(f, b, span, len - k);
		memcpy(f->u8, b + len - k, k);
		f->nu8 = (uint8_t)k;
		/* Ended in text (see mark)? */
		f->text_end = tb;
		break;
	}
	default:
		flush(f, b, span, len);
		break;
	}
}

/* ------------------------------------------------------------------ */
/* Public API                                                            */

void
pty__vtfilter_init(struct pty__vtfilter *f,
    const struct pty__vtfilter_sink *sink, void *ud)
{
	assert(f != NULL && sink != NULL);
	memset(f, 0, sizeof *f);
	f->sink = sink;
	f->ud = ud;
	f->st = F_GROUND;
	memset(f->g_plain, 1, sizeof f->g_plain);
	memset(f->g_utf8, 1, sizeof f->g_utf8);
}

void
pty__vtfilter_cut(struct pty__vtfilter *f)
{
	assert(f != NULL);
	f->st = F_GROUND;
	f->nu8 = 0;
	f->text_end = TB_NONE;
}
