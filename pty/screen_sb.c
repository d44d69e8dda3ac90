/*
 * screen_sb.c: the screen model's scrollback (SPEC 4.1; STYLE A): lines
 * scrolled off the primary screen, packed in line.c's format, in a ring
 * capped in lines, with each line's used length and whether it wrapped
 * (what a resize rewraps by); a full ring reuses its oldest line's buffer.
 */
#include <assert.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "pty/screen_int.h"

/* ------------------------------------------------------------------ */
/* Scrollback                                                           */

static bool
cell_trimmable(const struct cell *c)
{
	return (c->w == W_BLANK || c->w == (W_BLANK | ' ')) &&
	    c->fg == PTY_COLOR_DEFAULT && c->bg == PTY_COLOR_DEFAULT;
}

int
pty__sb_row_trimmed(const struct row *r, int cols)
{
	int n = cols;

	while (n > 0 && cell_trimmable(&r->c[n - 1]))
		n--;
	return n;
}

/*
 * Pack n cells of a row in line.c's format into buf (which holds
 * pty_line_packed_max(n) bytes); returns the length.
 */
size_t
pty__sb_row_pack(const struct row *r, int n, uint8_t *buf)
{
	uint8_t *p = buf + 2, *run = NULL;
	uint32_t fg = 0, bg = 0, attrs = 0;
	uint16_t count = 0;
	bool prev_wide = false;
	int i;

	pty__line_put16(buf, (uint16_t)n);
	for (i = 0; i < n; i++) {
		const struct cell *c = &r->c[i];
		uint32_t w = c->w, a = w >> W_ASHIFT, cp;

		if (run == NULL || c->fg != fg || c->bg != bg || a != attrs) {
			if (run != NULL)
				pty__line_put16(run, count);
			run = p;
			p = pty__line_run(p, FG_COLOR(c->fg), c->bg,
			    pty__grid_cell_attrs(c));
			fg = c->fg;
			bg = c->bg;
			attrs = a;
			count = 0;
		}
		count++;
		if ((w & (W_CP | W_COMB | (3u << W_WSHIFT))) - W_BLANK - 1 <
		    0x7e) {
			/* Plain ASCII in width 1: take the run at once. */
			*p++ = (uint8_t)(w & W_CP);
			prev_wide = false;
			while (i + 1 < n) {
				const struct cell *d = c + 1;
				uint32_t x = d->w;

				if (d->fg != fg || d->bg != bg ||
				    x >> W_ASHIFT != attrs ||
				    (x & (W_CP | W_COMB | (3u << W_WSHIFT))) -
				    W_BLANK - 1 >= 0x7e)
					break;
				*p++ = (uint8_t)(x & W_CP);
				count++;
				c = d;
				i++;
			}
			continue;
		}
		if (w & W_COMB) {
			uint32_t cps[PTY_CELL_MAXCP];

			p = pty__line_text(p, cps, pty__grid_cell_cps(r, c, cps));
			prev_wide = W_WIDTH(w) == 2;
			continue;
		}
		cp = w & W_CP;
		if (W_WIDTH(w) == 0) {
			*p++ = prev_wide ? PTY__LC_WIDE2 : PTY__LC_BLANK;
			prev_wide = false;
		} else if (cp == 0) {
			*p++ = PTY__LC_BLANK;
			prev_wide = false;
		} else {
			if (cp < 0x80)
				*p++ = (uint8_t)cp;
			else
				p = pty__line_text(p, &cp, 1);
			prev_wide = W_WIDTH(w) == 2;
		}
	}
	if (run != NULL)
		pty__line_put16(run, count);
	return (size_t)(p - buf);
}

uint8_t **
pty__sb_slot(struct pty_screen *s, size_t idx)
{
	return &s->sb[(s->sb_head + idx) % s->sb_cap];
}

size_t
pty__sb_len(const uint8_t *e)
{
	return (size_t)e[0] | ((size_t)e[1] << 8);
}

/* Push a row (cols wide) as the newest scrollback line; best effort. */
void
pty__sb_push(struct pty_screen *s, const struct row *r, int cols)
{
	uint8_t *e, **slot, *old = NULL;
	size_t len;

	/* The pack buffer comes back after pty_screen_trim gave it away. */
	if (s->sb_max == 0 || pty__screen_scratch_fit(s, cols) < 0)
		return;
	len = pty__sb_row_pack(r, pty__sb_row_trimmed(r, cols), s->packbuf + 2);
	pty__line_put16(s->packbuf, (uint16_t)len);
	len += 2;
	if (s->sb_count == s->sb_max) {
		/* Full: the oldest line's buffer becomes the newest. */
		slot = pty__sb_slot(s, 0);
		old = *slot;
		s->sb_bytes -= pty__sb_len(old) + 2;
		s->sb_head = (s->sb_head + 1) % s->sb_cap;
		s->sb_count--;
	} else if (s->sb_count == s->sb_cap) {
		size_t cap = s->sb_cap ? s->sb_cap * 2 : 64;
		uint8_t **n;
		uint16_t *m;

		assert(s->sb_head == 0);
		if (cap > s->sb_max)
			cap = s->sb_max;
		m = realloc(s->sb_meta, sizeof *m * cap);
		if (m == NULL)
			return;
		s->sb_meta = m;
		n = realloc(s->sb, sizeof *n * cap);
		if (n == NULL)
			return;
		s->sb_bytes += (sizeof *n + sizeof *m) * (cap - s->sb_cap);
		s->sb = n;
		s->sb_cap = cap;
	}
	slot = pty__sb_slot(s, s->sb_count);
	/*
	 * The oldest line's buffer is kept as it is when the new line fits
	 * without leaving half of it unused: text that scrolls through a
	 * full scrollback allocates nothing per line (issue 17, ingest).
	 */
	if (old != NULL && len <= malloc_usable_size(old) &&
	    malloc_usable_size(old) <= 2 * len + 32)
		e = old;
	else if ((e = realloc(old, len)) == NULL) {
		free(old);
		return;
	}
	memcpy(e, s->packbuf, len);
	*slot = e;
	s->sb_meta[slot - s->sb] = (uint16_t)((r->used < cols ? r->used :
	    cols) | (r->wrapped ? SBM_WRAPPED : 0));
	s->sb_count++;
	s->sb_bytes += len;
}

/* Unpack scrollback line idx into s->cellbuf (cols cells). */
int
pty__sb_unpack(const struct pty_screen *s, size_t idx, struct pty_cell *cells,
    int maxcells)
{
	const uint8_t *e = s->sb[(s->sb_head + idx) % s->sb_cap];

	return pty_line_unpack(e + 2, pty__sb_len(e), cells, maxcells, NULL);
}
