/*
 * layout.c: the console's geometry (STYLE F): terminal size, lease count
 * and panel switches in, rectangles out. Wide terminals get the lease list
 * on the left, narrow ones on top; the status bar is the bottom line. The
 * pane rectangle is the size the focused endpoint is resized to, once
 * it has kept it a moment (tui_layout_settle).
 */
#include <assert.h>
#include <string.h>

#include "tui/console/console.h"

static int
clamp(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static struct tui_rect
rect(int x, int y, int w, int h)
{
	struct tui_rect r = { x, y, w, h };

	if (w <= 0 || h <= 0)
		r.w = r.h = 0;
	return r;
}

bool
tui_layout_rect_empty(const struct tui_rect *r)
{
	assert(r != NULL);
	return r->w <= 0 || r->h <= 0;
}

bool
tui_layout_rect_contains(const struct tui_rect *r, int x, int y)
{
	assert(r != NULL);
	return !tui_layout_rect_empty(r) && x >= r->x && x < r->x + r->w &&
	    y >= r->y && y < r->y + r->h;
}

bool
tui_layout_rect_overlap(const struct tui_rect *a, const struct tui_rect *b)
{
	assert(a != NULL && b != NULL);
	if (tui_layout_rect_empty(a) || tui_layout_rect_empty(b))
		return false;
	return a->x < b->x + b->w && b->x < a->x + a->w &&
	    a->y < b->y + b->h && b->y < a->y + a->h;
}

/* List on the left: the pane keeps its size when the detail toggles. */
static void
layout_wide(const struct tui_layout_in *in, int w, int body,
    struct tui_layout *out)
{
	int lw, dh;

	lw = clamp(w * 3 / 10, TUI_LAYOUT_LIST_MIN, TUI_LAYOUT_LIST_MAX);
	dh = in->detail ? clamp(body / 2, 0, TUI_LAYOUT_DETAIL_ROWS) : 0;
	out->list_left = true;
	out->list = rect(0, 0, lw, body - dh);
	out->detail = rect(0, body - dh, lw, dh);
	out->sep_v = rect(lw, 0, 1, body);
	out->pane = rect(lw + 1, 0, w - lw - 1, body);
}

/* List on top, a few rows; the detail panel between it and the pane. */
static void
layout_narrow(const struct tui_layout_in *in, int w, int body,
    struct tui_layout *out)
{
	int rows, lh, avail, dh = 0;

	if (body == 1) {
		out->pane = rect(0, 0, w, 1);
		return;
	}
	if (body == 2) {
		out->list = rect(0, 0, w, 1);
		out->pane = rect(0, 1, w, 1);
		return;
	}
	rows = in->nleases > (size_t)body ? body : (int)in->nleases;
	lh = clamp(rows, 1, body / 4 > 1 ? body / 4 : 1);
	avail = body - lh - 1;		/* detail + pane, >= 1 */
	if (in->detail) {
		dh = clamp(avail / 2, 0, TUI_LAYOUT_DETAIL_ROWS);
		if (dh < 2)
			dh = 0;
	}
	out->list = rect(0, 0, w, lh);
	out->detail = rect(0, lh, w, dh);
	out->sep_h = rect(0, lh + dh, w, 1);
	out->pane = rect(0, lh + dh + 1, w, avail - dh);
}

/* One column: the list over the whole body (and the detail panel). */
static void
layout_onecol(const struct tui_layout_in *in, int w, int body,
    struct tui_layout *out)
{
	int dh = in->detail ? clamp(body / 2, 0, TUI_LAYOUT_DETAIL_ROWS) : 0;

	if (dh < 2)
		dh = 0;
	out->onecol = true;
	out->list = rect(0, 0, w, body - dh);
	out->detail = rect(0, body - dh, w, dh);
}

void
tui_layout_compute(const struct tui_layout_in *in, struct tui_layout *out)
{
	int w, h, body, hw, hh;

	assert(in != NULL && out != NULL);
	memset(out, 0, sizeof *out);
	w = in->w > 0 ? in->w : 0;
	h = in->h > 0 ? in->h : 0;
	if (w == 0 || h == 0)
		return;
	out->status = rect(0, h - 1, w, 1);
	body = h - 1;
	if (body == 0)
		return;
	if (in->zoom)
		out->pane = rect(0, 0, w, body);
	else if (w >= TUI_LAYOUT_WIDE)
		layout_wide(in, w, body, out);
	else if (w >= TUI_LAYOUT_ONECOL || body <= 2)
		layout_narrow(in, w, body, out);
	else
		layout_onecol(in, w, body, out);
	if (in->help && w >= 3 && body >= 3) {
		hw = w - 2 < 64 ? w - 2 : 64;
		hh = body - 2 < 28 ? body - 2 : 28;
		out->help = rect((w - hw) / 2, (body - hh) / 2, hw, hh);
	}
}

bool
tui_layout_settle(struct tui_settle *st, const struct tui_rect *pane,
    uint64_t now, uint64_t *wait)
{
	assert(st != NULL && pane != NULL && wait != NULL);
	if (pane->w != st->w || pane->h != st->h) {
		st->w = pane->w;
		st->h = pane->h;
		st->since = now;
	}
	if (now - st->since >= TUI_LAYOUT_SETTLE_MS) {
		*wait = 0;
		return true;
	}
	*wait = TUI_LAYOUT_SETTLE_MS - (now - st->since);
	return false;
}
