/*
 * draw_view.c: the console's full-body views onto a surface (STYLE F):
 * the review view (SPEC 7.4: manifest, flags, checks, receipt, the diff
 * coloured per file and per hunk, dropped hunks marked) and the timeline
 * (issue 9: a bar of activity states per lease, time spent blocked).
 * Every text goes through tui_draw_text, which escapes it (SPEC 4.7).
 */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tui/console/console.h"

#define TL_NAME_W 20
#define TL_BLOCKED_W 30

static struct tui_style
style(const struct tui_draw *d, enum tui_el el)
{
	struct tui_style st;
	enum tui_colors depth = d->theme->no_color ? TUI_COLORS_NONE :
	    d->colors;

	tui_theme_style(d->theme, el, &st);
	st.fg = tui_theme_degrade(st.fg, depth);
	st.bg = tui_theme_degrade(st.bg, depth);
	return st;
}

static enum tui_el
kind_el(enum tui_rv_kind k)
{
	switch (k) {
	case TUI_RV_TITLE:
		return TUI_EL_REVIEW_TITLE;
	case TUI_RV_WARN:
		return TUI_EL_REVIEW_WARN;
	case TUI_RV_GOOD:
		return TUI_EL_REVIEW_GOOD;
	case TUI_RV_BAD:
		return TUI_EL_REVIEW_BAD;
	case TUI_RV_FILE:
		return TUI_EL_DIFF_FILE;
	case TUI_RV_HUNK:
		return TUI_EL_DIFF_HUNK;
	case TUI_RV_ADD:
		return TUI_EL_DIFF_ADD;
	case TUI_RV_DEL:
		return TUI_EL_DIFF_DEL;
	case TUI_RV_META:
		return TUI_EL_LIST_DIM;
	default:
		return TUI_EL_LIST;
	}
}

void
tui_draw_view_review(const struct tui_draw *d, const struct tui_rect *r,
    const struct tui_review *rv, const char *msg)
{
	struct tui_style st, base = style(d, TUI_EL_LIST);
	char title[256];
	size_t kept, total, i;
	int y, gut = 2;

	assert(d != NULL && r != NULL);
	if (tui_layout_rect_empty(r))
		return;
	tui_draw_fill(d, r, &base);
	st = style(d, TUI_EL_BORDER_LABEL);
	if (rv == NULL) {
		tui_draw_text(d, r->x, r->y, r->w, " review", &st,
		    TUI_TEXT_PAD);
		if (r->h > 2)
			tui_draw_text(d, r->x, r->y + 2, r->w, msg ? msg : "",
			    &base, TUI_TEXT_PAD);
		return;
	}
	tui_review_counts(rv, &kept, &total);
	snprintf(title, sizeof title, " review %s: %zu of %zu hunk(s) kept%s"
	    "%s%s", rv->id, kept, total, rv->ready ? "" : "  (not "
	    "applicable: ", rv->ready ? "" : rv->state, rv->ready ? "" : ")");
	/* Sideways: where the view is, and that left/right move it. */
	if (rv->hcol > 0 || rv->maxw > (size_t)(r->w > gut ? r->w - gut : 0))
		snprintf(title + strlen(title), sizeof title - strlen(title),
		    "  [col %zu of %zu, left/right]", rv->hcol + 1, rv->maxw);
	tui_draw_text(d, r->x, r->y, r->w, title, &st, TUI_TEXT_PAD);
	if (msg != NULL && msg[0] != '\0' && r->h > 1) {
		tui_draw_text(d, r->x, r->y + 1, r->w, msg, &base,
		    TUI_TEXT_PAD);
	}
	y = r->y + 1 + (msg != NULL && msg[0] != '\0');
	for (i = rv->top; i < rv->n && y < r->y + r->h; i++, y++) {
		const struct tui_rv_line *l = &rv->lines[i];
		bool drop = tui_review_line_dropped(rv, i);
		const char *mark = "  ";

		st = style(d, drop ? TUI_EL_DIFF_DROPPED : kind_el(l->kind));
		if (i == rv->cur)
			st = style(d, TUI_EL_LIST_SELECTED);
		/* kept: a check mark, never the '+' of an added line */
		if (l->kind == TUI_RV_FILE || l->kind == TUI_RV_HUNK)
			mark = drop ? "x " : "\xe2\x9c\x93 ";	/* U+2713 */
		else if (drop)
			mark = "x ";
		tui_draw_text(d, r->x, y, gut, mark, &st, TUI_TEXT_PAD);
		tui_draw_text_from(d, r->x + gut, y, r->w - gut, l->text,
		    rv->hcol, &st, TUI_TEXT_PAD);
	}
}

void
tui_draw_view_duration(int64_t ms, char *buf, size_t bufsz)
{
	int64_t s = ms / 1000;

	assert(buf != NULL && bufsz > 0);
	if (s < 0)
		s = 0;
	if (s >= 3600)
		snprintf(buf, bufsz, "%" PRId64 "h%02" PRId64 "m", s / 3600,
		    s / 60 % 60);
	else if (s >= 60)
		snprintf(buf, bufsz, "%" PRId64 "m%02" PRId64 "s", s / 60,
		    s % 60);
	else
		snprintf(buf, bufsz, "%" PRId64 "s", s);
}

static void
clock_text(int64_t ms, char *buf, size_t bufsz)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, bufsz, "%H:%M", &tm);
}

void
tui_draw_view_timeline(const struct tui_draw *d, const struct tui_rect *r,
    const struct tui_timeline *tl, const struct tui_tl_row *rows,
    size_t n, int64_t from_ms, int64_t to_ms, const char *msg)
{
	struct tui_style base = style(d, TUI_EL_LIST), dim, st, sel;
	const struct tui_tl_lease *l;
	char text[256], a[16], b[16], span[16];
	uint8_t *cols;
	int y = r->y, barw, x;
	size_t i;

	assert(d != NULL && r != NULL && tl != NULL);
	if (tui_layout_rect_empty(r))
		return;
	tui_draw_fill(d, r, &base);
	dim = style(d, TUI_EL_LIST_DIM);
	sel = style(d, TUI_EL_LIST_SELECTED);
	clock_text(from_ms, a, sizeof a);
	clock_text(to_ms, b, sizeof b);
	tui_draw_view_duration(to_ms - from_ms, span, sizeof span);
	snprintf(text, sizeof text, " timeline %s .. %s (%s): each lease's "
	    "activity; blocked = waiting on you", a, b, span);
	st = style(d, TUI_EL_BORDER_LABEL);
	tui_draw_text(d, r->x, y++, r->w, text, &st, TUI_TEXT_PAD);
	if (msg != NULL && msg[0] != '\0' && y < r->y + r->h)
		tui_draw_text(d, r->x, y++, r->w, msg, &base, TUI_TEXT_PAD);
	barw = r->w - 2 - TL_NAME_W - 1 - TL_BLOCKED_W - 1;
	if (barw < 4)
		barw = 4;
	if ((cols = calloc((size_t)barw, 1)) == NULL)
		return;
	for (i = 0; i < n && y < r->y + r->h - 1; i++, y++) {
		const struct tui_tl_row *row = &rows[i];
		const char *name = row->name != NULL && row->name[0] != '\0' ?
		    row->name : row->id;

		x = r->x;
		tui_draw_text(d, x, y, 2, row->selected ? "> " : "  ",
		    row->selected ? &sel : &base, TUI_TEXT_PAD);
		x += 2;
		tui_draw_text(d, x, y, TL_NAME_W, name, row->selected ? &sel :
		    &base, TUI_TEXT_PAD);
		x += TL_NAME_W + 1;
		l = tui_timeline_find(tl, row->id);
		memset(cols, TUI_ACTIVITY_UNKNOWN, (size_t)barw);
		if (l != NULL)
			tui_timeline_bucket(l, from_ms, to_ms, cols, barw);
		for (int c = 0; c < barw && x + c < r->x + r->w; c++) {
			char ch[2] = { '.', '\0' };

			if (cols[c] == TUI_ACTIVITY_UNKNOWN) {
				tui_draw_text(d, x + c, y, 1, ch, &dim, 0);
				continue;
			}
			ch[0] = tui_activity_letter((enum tui_activity)cols[c]);
			st = style(d, (enum tui_el)(TUI_EL_BADGE + cols[c]));
			tui_draw_text(d, x + c, y, 1, ch, &st, 0);
		}
		x += barw + 1;
		if (l != NULL)
			tui_draw_view_duration(tui_timeline_blocked_ms(l,
			    to_ms), a,
			    sizeof a);
		else
			snprintf(a, sizeof a, "-");
		snprintf(text, sizeof text, "blocked %-7s %s", a,
		    row->state != NULL ? row->state : "");
		st = style(d, (enum tui_el)(TUI_EL_BADGE +
		    TUI_ACTIVITY_BLOCKED));
		if (x < r->x + r->w)
			tui_draw_text(d, x, y, r->x + r->w - x, text,
			    l != NULL && tui_timeline_blocked_ms(l, to_ms) > 0 ?
			    &st : &base, TUI_TEXT_PAD);
	}
	free(cols);
	if (n == 0 && y < r->y + r->h - 1)
		tui_draw_text(d, r->x, y, r->w, "  no leases", &dim,
		    TUI_TEXT_PAD);
	tui_draw_text(d, r->x, r->y + r->h - 1, r->w, " S starting  W working"
	    "  P prompt  B blocked  D done  F failed  C cancelled  . none",
	    &dim, TUI_TEXT_PAD);
}
