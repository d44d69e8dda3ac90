/*
 * vtfilter_seq.c: the sequences the VT filter (vtfilter.c) carries out
 * itself in front of libvterm 0.1.4 (SPEC 4.1; STYLE A, F). Pure: the
 * input modes libvterm keeps no getter for, each parameter of a mode
 * sequence passed on alone (0.1.4 applies only the first), the alternate
 * screen, the cursor's save slots, one per screen (0.1.4 has one, without
 * the charsets or origin mode), G-set designations and shifts, DECCOLM,
 * and SGRs rewritten into the forms 0.1.4 reads (colon colours, faint
 * and conceal, which it drops).
 */
#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pty/pty_int.h"

/* The input modes and G-sets as after RIS. */
void
pty__vtf_modes_reset(struct pty__vtfilter *f)
{
	memset(&f->keys, 0, sizeof f->keys);
	f->app_cursor = false;
	f->app_keypad = false;
	f->bracketed_paste = false;
	f->mouse_sgr = false;
	f->focus_events = false;
	f->insert = false;
	f->origin = false;
	f->gl = 0;
	memset(f->g_plain, 1, sizeof f->g_plain);
	memset(f->g_utf8, 1, sizeof f->g_utf8);
	memset(f->g_des, 0, sizeof f->g_des);
	f->ss = false;
	f->alt = false;
	f->lrmm = false;
	f->pen = 0;
	memset(f->saved, 0, sizeof f->saved);
}

static void
dec_mode(struct pty__vtfilter *f, uint32_t p, bool on)
{
	switch (p) {
	case 1:
		f->app_cursor = on;
		break;
	case 6:
		f->origin = on;
		break;
	case 1004:
		f->focus_events = on;
		break;
	case 69:
		f->lrmm = on;
		break;
	case 1006:
		f->mouse_sgr = on;
		break;
	case 2004:
		f->bracketed_paste = on;
		break;
	default:
		break;
	}
}

/* Pass "CSI [?] p h|l" on (one mode: 0.1.4 applies only the first). */
static void
pass_mode(struct pty__vtfilter *f, bool priv, uint32_t p, bool on)
{
	char seq[16];
	size_t n = sizeof seq;

	seq[--n] = on ? 'h' : 'l';
	do
		seq[--n] = (char)('0' + p % 10);
	while ((p /= 10) > 0);
	if (priv)
		seq[--n] = '?';
	seq[--n] = '[';
	seq[--n] = '\033';
	pty__vtf_pass(f, seq + n, sizeof seq - n);
}

/*
 * DECSC and its kin (SPEC 4.1): one slot per screen, as xterm keeps. The
 * filter saves and restores what it tracks itself (charsets, origin
 * mode), passing on what puts libvterm's copy back; the model (the sink's
 * cursor) the position and the pen.
 */
void
pty__vtf_cursor_save(struct pty__vtfilter *f)
{
	struct pty__vtf_saved *sv = &f->saved[f->alt];

	sv->origin = f->origin;
	sv->gl = f->gl;
	memcpy(sv->g_des, f->g_des, sizeof sv->g_des);
	sv->pen = f->pen;
	f->sink->cursor(PTY__VTF_CURSOR_SAVE, f->ud);
}

static void designate(struct pty__vtfilter *, int g, uint8_t c);

void
pty__vtf_cursor_restore(struct pty__vtfilter *f)
{
	static const char *const ls[] = { "\017", "\016", "\033n", "\033o" };
	const struct pty__vtf_saved *sv = &f->saved[f->alt];
	char seq[3];
	int g;

	/*
	 * Origin first: setting it homes the cursor, so the model finds the
	 * margins it then moves the cursor within.
	 */
	if (sv->origin || f->origin)
		pty__vtf_pass(f, sv->origin ? "\033[?6h" : "\033[?6l", 5);
	f->origin = sv->origin;
	for (g = 0; g < 4; g++) {
		uint8_t d = sv->g_des[g] != 0 ? sv->g_des[g] : 'B';

		if (sv->g_des[g] == f->g_des[g] || d == f->g_des[g])
			continue;
		/* An undesignated set comes back as ASCII: the same glyphs. */
		seq[0] = '\033';
		seq[1] = (char)('(' + g);
		seq[2] = (char)d;
		pty__vtf_pass(f, seq, 3);
		designate(f, g, d);
	}
	if (sv->gl != f->gl) {
		pty__vtf_pass(f, ls[sv->gl & 3], strlen(ls[sv->gl & 3]));
		f->gl = sv->gl & 3;
	}
	f->ss = false;
	f->pen = sv->pen;
	f->sink->cursor(PTY__VTF_CURSOR_RESTORE, f->ud);
}

/* The alternate screen (47, 1047, 1049) on or off, libvterm told so. */
static void
alt_screen(struct pty__vtfilter *f, uint32_t p, bool on)
{
	if (p == 1049 && on && !f->alt)
		pty__vtf_cursor_save(f);
	pass_mode(f, true, 1047, on);
	f->alt = on;
	if (p == 1049 && !on)
		pty__vtf_cursor_restore(f);
}

/*
 * Whether the filter carries DEC private mode p out itself. DECCOLM (3)
 * does not change the width (the pane's is the terminal's), but set or
 * reset it homes the cursor and clears the screen, as xterm and tmux do
 * (vttest's next screen is drawn on a cleared one); 0.1.4 ignores it.
 */
static bool
mode_ours(uint32_t p)
{
	return p == 3 || p == 47 || p == 1047 || p == 1048 || p == 1049;
}

/*
 * A complete SM/RM or DECSET/DECRST, every parameter applied in order.
 * When take, the sequence was cancelled in libvterm and each mode is
 * passed on alone (the cursor's save and the alternate screen done
 * here); else it went on whole and has one mode libvterm applies itself.
 */
static void
csi_modes(struct pty__vtfilter *f, bool on, bool take)
{
	int i;

	for (i = 0; i <= f->np; i++) {
		uint32_t p = f->param[i];

		if (p == 0)
			continue;	/* missing: 0.1.4 ignores it too */
		if (!f->csi_priv) {
			if (p == 20)
				f->keys.newline = on;
			else if (p == 4)
				f->insert = on;
			if (take)
				pass_mode(f, false, p, on);
			continue;
		}
		if (p == 1)
			f->keys.app_cursor = on;
		else if (p == 2004)
			f->keys.paste_marks = on;
		dec_mode(f, p, on);
		if (!take)
			continue;
		if (p == 1048) {
			if (on)
				pty__vtf_cursor_save(f);
			else
				pty__vtf_cursor_restore(f);
		} else if (p == 47 || p == 1047 || p == 1049) {
			alt_screen(f, p, on);
		} else if (p == 3) {
			pty__vtf_pass(f, "\033[H\033[2J", 7);
		} else {
			pass_mode(f, true, p, on);
		}
	}
}

/*
 * A CSI's final byte c is next for libvterm's parser, which holds the
 * rest: whether the filter takes the sequence over (then it is cancelled
 * there), a mode sequence with several parameters (0.1.4 applies only the
 * first) or one the filter carries out, or SCOSC/SCORC (the slot DECSC
 * uses, as xterm and tmux).
 */
bool
pty__vtf_csi_final(struct pty__vtfilter *f, uint8_t c)
{
	if (f->csi_other || f->csi_inter != 0)
		return false;
	/* DECSTR (CSI ! p) is left alone: libvterm 0.1.4 ignores it too. */
	if (c == 'h' || c == 'l') {
		bool take = f->np > 0 ||
		    (f->csi_priv && mode_ours(f->param[0]));

		if (!take)
			csi_modes(f, c == 'h', false);
		return take;
	}
	return !f->csi_priv && f->np == 0 && f->param[0] == 0 &&
	    ((c == 's' && !f->lrmm) || c == 'u');
}

/*
 * SGR: the attributes 0.1.4 drops (faint, conceal) go to the sink's pen;
 * the colon forms of 38/48/58 (ITU T.416: 38:2:CS:R:G:B with the colour
 * space field often empty, 38:2:R:G:B, 38:5:N), which 0.1.4 misreads,
 * are rewritten into the semicolon forms it knows, and SGR 58 (an
 * underline colour, not kept) is left out. A colour's group never counts
 * as attributes (the 2 in 38;2;... is not faint).
 */

/* Parameters in the group at param[i] after its first (see sgr_scan). */
static int
sgr_group(const struct pty__vtfilter *f, int i)
{
	uint32_t p = f->param[i];
	int j, ne;

	for (j = i + 1; j <= f->np && (f->colon & (1u << j)); j++)
		;
	ne = j - i - 1;
	if (ne == 0 && (p == 38 || p == 48 || p == 58) && i < f->np) {
		/* The semicolon forms run on without ':'. */
		ne = f->param[i + 1] == 5 ? 2 : f->param[i + 1] == 2 ? 4 : 0;
		if (i + ne > f->np)
			ne = f->np - i;
	}
	return ne;
}

/* Index of a colour's R in its group at param[i], or 0 if malformed. */
static int
sgr_rgb(const struct pty__vtfilter *f, int i, int ne)
{
	if (ne < 4 || f->param[i + 1] != 2)
		return 0;
	/* 38:2:CS:R:G:B has the colour space; 38:2:R:G:B and 38;2;R;G;B not. */
	return ne >= 5 && (f->colon & (1u << (i + 1))) ? i + 3 : i + 2;
}

/* Whether the SGR must be rewritten; *pen gets the new faint/conceal. */
bool
pty__vtf_sgr_scan(const struct pty__vtfilter *f, uint16_t *pen)
{
	bool rewrite = false;
	int i, ne;

	*pen = f->pen;
	for (i = 0; i <= f->np; i += 1 + ne) {
		uint32_t p = f->param[i];

		ne = sgr_group(f, i);
		if (p == 58 || ((p == 38 || p == 48) && (ne == 0 ||
		    (f->colon & (1u << (i + 1))) != 0)))
			rewrite = true;
		if (ne > 0 || p == 38 || p == 48 || p == 58)
			continue;
		if (p == 0)
			*pen = 0;
		else if (p == 2)
			*pen |= PTY_ATTR_FAINT;
		else if (p == 22)
			*pen &= (uint16_t)~PTY_ATTR_FAINT;
		else if (p == 8)
			*pen |= PTY_ATTR_CONCEAL;
		else if (p == 28)
			*pen &= (uint16_t)~PTY_ATTR_CONCEAL;
	}
	return rewrite;
}


/* Decimal v (at most 9999) and a separator before it at out + n. */
static size_t
put_num(char *out, size_t n, char sep, uint32_t v)
{
	char d[4];
	int k = 0;

	if (sep != 0)
		out[n++] = sep;
	if (v > 9999)
		v = 9999;
	do
		d[k++] = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	while (k > 0)
		out[n++] = d[--k];
	return n;
}

/* The SGR in the forms 0.1.4 reads into out; returns its length (0: none). */
size_t
pty__vtf_sgr_build(const struct pty__vtfilter *f, char *out)
{
	size_t n = 2;
	int i, k, ne;

	out[0] = '\033';
	out[1] = '[';
	for (i = 0; i <= f->np; i += 1 + ne) {
		uint32_t p = f->param[i];
		char sep = n > 2 ? ';' : 0;

		ne = sgr_group(f, i);
		if (p == 58)
			continue;
		if (p == 38 || p == 48) {
			k = sgr_rgb(f, i, ne);
			if (ne >= 2 && f->param[i + 1] == 5) {
				n = put_num(out, n, sep, p);
				n = put_num(out, n, ';', 5);
				n = put_num(out, n, ';', f->param[i + 2] & 0xffu);
			} else if (k > 0) {
				n = put_num(out, n, sep, p);
				n = put_num(out, n, ';', 2);
				n = put_num(out, n, ';', f->param[k] & 0xffu);
				n = put_num(out, n, ';', f->param[k + 1] & 0xffu);
				n = put_num(out, n, ';', f->param[k + 2] & 0xffu);
			}
			continue;	/* else malformed: left out */
		}
		n = put_num(out, n, sep, p);
		for (k = 1; k <= ne; k++)
			n = put_num(out, n, ':', f->param[i + k]);
	}
	if (n == 2)
		return 0;	/* all left out (an empty SGR would reset) */
	out[n++] = 'm';
	assert(n <= PTY__VTF_SGR_OUT_MAX);
	return n;
}

/* Carry out a sequence csi_final took over. */
void
pty__vtf_csi_take(struct pty__vtfilter *f, uint8_t c)
{
	if (c == 'h' || c == 'l')
		csi_modes(f, c == 'h', true);
	else if (c == 's')
		pty__vtf_cursor_save(f);
	else
		pty__vtf_cursor_restore(f);
}

/* C0 controls that switch the G-set in GL (executed in any state). */
void
pty__vtf_c0_track(struct pty__vtfilter *f, uint8_t c)
{
	if (c == 0x0e)
		f->gl = 1;
	else if (c == 0x0f)
		f->gl = 0;
}

/* ESC I F with one intermediate: G-set designations (SCS). */
void
pty__vtf_esc_final(struct pty__vtfilter *f, uint8_t c)
{
	int g = -1;

	if (f->esc_ninter != 1)
		return;
	if (f->esc_inter == ' ') {
		/* S7C1T, S8C1T: how keys send CSI and SS3. */
		if (c == 'F' || c == 'G')
			f->keys.c1_8bit = c == 'G';
		return;
	}
	switch (f->esc_inter) {
	case '(':
	case ')':
	case '*':
	case '+':
		g = f->esc_inter - '(';
		break;
	default:
		return;
	}
	designate(f, g, c);
}

/* G-set g designated by final byte c, as libvterm reads it. */
static void
designate(struct pty__vtfilter *f, int g, uint8_t c)
{
	/* 0.1.4 knows 'B' (ASCII), '0' (DEC graphics), 'A' (UK). */
	if (c != 'B' && c != '0' && c != 'A')
		return;
	f->g_plain[g] = c == 'B';
	f->g_utf8[g] = false;
	f->g_des[g] = c;
}
