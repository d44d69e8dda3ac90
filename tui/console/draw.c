/*
 * draw.c: renders the console's scene (lease list, focused pane, detail
 * panel, status bar, rules, help) onto a struct tui_surface (STYLE F). It
 * reads only plain structs and the screen mirror, escapes every text that
 * came from a sandbox (SPEC 4.7), and never writes outside its rect.
 */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/console/console.h"

#define TEXT_MAX 4096		/* escaped bytes considered per text */
#define GLYPH_MAX 32		/* one cell: a character and its marks */
#define ELLIPSIS "\xe2\x80\xa6"	/* U+2026 */
#define RULE_V "\xe2\x94\x82"	/* U+2502 box drawings light vertical */
#define RULE_H "\xe2\x94\x80"	/* U+2500 box drawings light horizontal */

/*
 * Column budget of the lease list. Every row always shows its badge, its
 * activity word, its isolation tag and its age, then as much of its name
 * as fits (issue 21): they say what an agent is doing and whether it runs
 * on the host. Wider lists add, by priority, the last output line (the
 * question of a blocked lease), what the lease's model requests cost
 * (when any lease made one), the branch, the lease state and the full
 * isolation label.
 */
#define COL_NAME_MIN 6
#define COL_NAME 16
#define COL_ACT 9		/* "cancelled", the longest activity word */
#define COL_ACT_MIN 7		/* "blocked", "working": never cut */
#define COL_ISO 5		/* "bwrap", "HOST", "cmd" */
#define COL_ISO_LONG 18		/* "HOST trusted_local" */
#define COL_STATE 12		/* "result_ready" */
#define COL_BRANCH 20
#define COL_AGE 4
#define COL_LAST_MIN 12
#define COL_COST 7		/* "$123.45", "$0.42+" */

/* Columns the status bar keeps for the mode tag and message. */
#define STATUS_LEFT_MIN 30

static void
finish(const struct tui_draw *d, struct tui_style *st)
{
	enum tui_colors depth = d->theme->no_color ? TUI_COLORS_NONE :
	    d->colors;

	st->fg = tui_theme_degrade(st->fg, depth);
	st->bg = tui_theme_degrade(st->bg, depth);
}

static struct tui_style
el_style(const struct tui_draw *d, enum tui_el el)
{
	struct tui_style st;

	tui_theme_style(d->theme, el, &st);
	finish(d, &st);
	return st;
}

static void
put(const struct tui_draw *d, int x, int y, const char *s, int width,
    const struct tui_style *st)
{
	d->surface->ops->put_cell(d->surface->ud, x, y, s, width, st);
}

static void
blanks(const struct tui_draw *d, int x, int y, int n,
    const struct tui_style *st)
{
	int i;

	for (i = 0; i < n; i++)
		put(d, x + i, y, " ", 1, st);
}

static void
check_draw(const struct tui_draw *d)
{
	assert(d != NULL && d->surface != NULL && d->surface->ops != NULL &&
	    d->theme != NULL);
	(void)d;
}

/*
 * Take the next glyph of escaped text s[*off..len): a character of width
 * 1 or 2 plus the zero-width marks after it, into g (NUL-terminated).
 * Returns its width, or 0 at the end.
 */
static int
next_glyph(const char *s, size_t len, size_t *off, char *g)
{
	size_t gl = 0;
	uint32_t cp;
	int n, w = 0, cw;

	while (*off < len) {
		n = tui_escape_utf8_decode(s + *off, len - *off, &cp);
		if (n < 0) {		/* cannot happen after escaping */
			(*off)++;
			continue;
		}
		cw = tui_escape_cp_width(cp);
		if (w == 0 && cw == 0) {	/* a mark with no base */
			*off += (size_t)n;
			continue;
		}
		if (w != 0 && cw != 0)
			break;
		if (gl + (size_t)n < GLYPH_MAX) {
			memcpy(g + gl, s + *off, (size_t)n);
			gl += (size_t)n;
		}
		if (w == 0)
			w = cw;
		*off += (size_t)n;
	}
	g[gl] = '\0';
	return w;
}

int
tui_draw_text(const struct tui_draw *d, int x, int y, int w, const char *s,
    const struct tui_style *st, unsigned flags)
{
	return tui_draw_text_from(d, x, y, w, s, 0, st, flags);
}

int
tui_draw_text_from(const struct tui_draw *d, int x, int y, int w,
    const char *s, size_t skip, const struct tui_style *st, unsigned flags)
{
	char sbuf[TEXT_MAX], g[GLYPH_MAX], *buf = sbuf, *big = NULL;
	size_t len, off = 0, total, slen, cut = 0;
	int col = 0, gw, room, lead = 0;

	check_draw(d);
	assert(st != NULL);
	if (w <= 0)
		return 0;
	if (s == NULL)
		s = "";
	slen = strlen(s);
	/* A long text is escaped whole: its tail can be scrolled to. */
	if (skip > 0 && 4 * slen + 1 > sizeof sbuf &&
	    (big = malloc(4 * slen + 1)) != NULL)
		buf = big;
	len = tui_escape(s, slen, buf, buf == big ? 4 * slen + 1 :
	    sizeof sbuf);
	total = tui_escape_width(buf, len);
	/* The columns left of the view: skipped, marked at the left edge. */
	while (cut < skip && cut < total) {
		if ((gw = next_glyph(buf, len, &off, g)) <= 0)
			break;
		cut += (size_t)gw;
	}
	if (cut > 0) {
		put(d, x, y, ELLIPSIS, 1, st);
		lead = 1;
		x++;
		w--;
		total -= cut;
	}
	if (w <= 0) {
		free(big);
		return lead;
	}
	if (total <= (size_t)w) {
		if (flags & TUI_TEXT_RIGHT) {
			blanks(d, x, y, w - (int)total, st);
			x += w - (int)total;
			w = (int)total;
		}
		room = w;
	} else
		room = w - 1;		/* keep the last column for "..." */
	while ((gw = next_glyph(buf, len, &off, g)) > 0) {
		if (col + gw > room)
			break;
		put(d, x + col, y, g, gw, st);
		col += gw;
	}
	free(big);
	if (total > (size_t)w) {
		blanks(d, x + col, y, w - 1 - col, st);
		put(d, x + w - 1, y, ELLIPSIS, 1, st);
		return lead + w;
	}
	if (flags & (TUI_TEXT_PAD | TUI_TEXT_RIGHT))
		blanks(d, x + col, y, w - col, st);
	return lead + col;
}

void
tui_draw_fill(const struct tui_draw *d, const struct tui_rect *r,
    const struct tui_style *st)
{
	int y;

	check_draw(d);
	assert(r != NULL && st != NULL);
	if (tui_layout_rect_empty(r))
		return;
	for (y = r->y; y < r->y + r->h; y++)
		blanks(d, r->x, y, r->w, st);
}

void
tui_draw_age(int64_t secs, char *buf, size_t bufsz)
{
	assert(buf != NULL && bufsz > 0);
	if (secs < 0)
		snprintf(buf, bufsz, "-");
	else if (secs < 60)
		snprintf(buf, bufsz, "%" PRId64 "s", secs);
	else if (secs < 3600)
		snprintf(buf, bufsz, "%" PRId64 "m", secs / 60);
	else if (secs < 86400)
		snprintf(buf, bufsz, "%" PRId64 "h", secs / 3600);
	else
		snprintf(buf, bufsz, "%" PRId64 "d", secs / 86400);
}

bool
tui_draw_cost(int64_t requests, int64_t cost_nano, int64_t unknown,
    char *buf, size_t bufsz)
{
	int64_t cents = cost_nano > 0 ? (cost_nano + 5000000) / 10000000 : 0;
	const char *more = unknown > 0 ? "+" : "";

	assert(buf != NULL && bufsz > 0);
	buf[0] = '\0';
	if (requests <= 0 && unknown <= 0)
		return false;
	if (cents == 0 && cost_nano > 0)
		snprintf(buf, bufsz, "<$0.01%s", more);
	else if (cents < 100000)
		snprintf(buf, bufsz, "$%" PRId64 ".%02" PRId64 "%s", cents / 100,
		    cents % 100, more);
	else
		snprintf(buf, bufsz, "$%" PRId64 "%s", cents / 100, more);
	return true;
}

size_t
tui_draw_list_top(size_t n, size_t sel, int height, size_t top)
{
	size_t h, max;

	if (height <= 0 || n == 0)
		return 0;
	h = (size_t)height;
	if (sel >= n)
		sel = n - 1;
	if (sel < top)
		top = sel;
	if (sel >= top + h)
		top = sel - h + 1;
	max = n > h ? n - h : 0;
	return top > max ? max : top;
}

/* A left-to-right writer along one row, bounded by end. */
struct pen {
	const struct tui_draw *d;
	int x, y, end;
};

static void
pen_text(struct pen *p, int w, const char *s, const struct tui_style *st,
    unsigned flags)
{
	if (w > p->end - p->x)
		w = p->end - p->x;
	if (w <= 0)
		return;
	tui_draw_text(p->d, p->x, p->y, w, s, st, flags | TUI_TEXT_PAD);
	p->x += w;
}

static void
pen_glyph(struct pen *p, const char *g, const struct tui_style *st)
{
	if (p->x >= p->end)
		return;
	put(p->d, p->x, p->y, g, 1, st);
	p->x++;
}

static void
pen_rest(struct pen *p, const struct tui_style *st)
{
	blanks(p->d, p->x, p->y, p->end - p->x, st);
	p->x = p->end;
}

/* Which list columns fit in w, and how wide (0 = not shown). */
struct list_cols {
	int name, act, iso, age, last, cost, branch, state;
};

static void
list_columns(int w, bool costs, struct list_cols *c)
{
	int avail = w - 4;		/* mark, badge, unseen, blank */
	int need = 1 + COL_ACT_MIN + 1 + COL_ISO + 1 + COL_AGE;

	memset(c, 0, sizeof *c);
	if (avail <= 0)
		return;
	c->act = COL_ACT_MIN;
	c->iso = COL_ISO;
	c->age = COL_AGE;
	/* Too narrow for them all: the age goes, never activity or host. */
	if (avail < COL_NAME_MIN + need) {
		c->age = 0;
		need -= 1 + COL_AGE;
	}
	if (avail < 1 + need) {		/* a sliver: isolation, name */
		c->act = 0;
		if (avail < COL_ISO + 2)
			c->iso = 0;
		c->name = c->iso ? avail - COL_ISO - 1 : avail;
		return;
	}
	avail -= need;
	c->name = avail < COL_NAME ? avail : COL_NAME;
	avail -= c->name;
	/* the optional columns, each only with the last line's minimum left */
	if (avail < COL_LAST_MIN + 1) {
		if (avail >= COL_ACT - COL_ACT_MIN) {
			c->act = COL_ACT;
			avail -= COL_ACT - COL_ACT_MIN;
		}
		c->name += avail;
		return;
	}
	avail -= COL_LAST_MIN + 1;
	if (costs && avail >= COL_COST + 1) {
		c->cost = COL_COST;
		avail -= COL_COST + 1;
	}
	if (avail >= COL_ACT - COL_ACT_MIN) {
		c->act = COL_ACT;
		avail -= COL_ACT - COL_ACT_MIN;
	}
	if (avail >= COL_BRANCH + 1) {
		c->branch = COL_BRANCH;
		avail -= COL_BRANCH + 1;
	}
	if (avail >= COL_STATE + 1) {
		c->state = COL_STATE;
		avail -= COL_STATE + 1;
	}
	if (avail >= COL_ISO_LONG - COL_ISO) {
		c->iso = COL_ISO_LONG;
		avail -= COL_ISO_LONG - COL_ISO;
	}
	c->last = COL_LAST_MIN + avail;
}

static void
list_row(const struct tui_draw *d, const struct tui_rect *r, int y,
    const struct tui_lease_row *row, bool selected,
    const struct list_cols *c)
{
	struct pen p = { d, r->x, y, r->x + r->w };
	struct tui_style base, dim, badge, unseen, iso;
	char letter[2] = { 0 }, age[16], last[256];
	const char *name;
	unsigned a = (unsigned)row->activity;

	if (a >= TUI_ACTIVITY_COUNT)
		a = TUI_ACTIVITY_UNKNOWN;
	base = el_style(d, selected ? TUI_EL_LIST_SELECTED : TUI_EL_LIST);
	dim = selected ? base : el_style(d, TUI_EL_LIST_DIM);
	badge = el_style(d, (enum tui_el)(TUI_EL_BADGE + a));
	unseen = el_style(d, TUI_EL_LIST_UNSEEN);
	/* An agent on the host has its own colour, selected or not. */
	iso = row->host ? el_style(d, TUI_EL_LIST_HOST) : dim;
	if (selected)
		unseen.bg = base.bg;
	letter[0] = tui_activity_letter((enum tui_activity)a);
	pen_glyph(&p, selected ? ">" : " ", &base);
	pen_glyph(&p, letter, &badge);
	pen_glyph(&p, row->unseen ? "*" : " ", row->unseen ? &unseen : &base);
	pen_glyph(&p, " ", &base);
	name = row->name != NULL && row->name[0] != '\0' ? row->name :
	    row->id != NULL ? row->id : "-";
	pen_text(&p, c->name, name, &base, 0);
	if (c->act) {
		pen_glyph(&p, " ", &base);
		pen_text(&p, c->act, tui_activity_name((enum tui_activity)a),
		    &base, 0);
	}
	if (c->iso) {
		pen_glyph(&p, " ", &base);
		pen_text(&p, c->iso, c->iso >= COL_ISO_LONG &&
		    row->mode_long != NULL ? row->mode_long : row->mode != NULL ?
		    row->mode : "-", &iso, 0);
	}
	if (c->age) {
		pen_glyph(&p, " ", &base);
		tui_draw_age(row->age_s, age, sizeof age);
		pen_text(&p, c->age, age, &base, TUI_TEXT_RIGHT);
	}
	if (c->cost) {
		pen_glyph(&p, " ", &base);
		pen_text(&p, c->cost, row->cost != NULL ? row->cost : "-",
		    &base, TUI_TEXT_RIGHT);
	}
	if (c->state) {
		pen_glyph(&p, " ", &base);
		pen_text(&p, c->state, row->lease_state != NULL ?
		    row->lease_state : "-", &dim, 0);
	}
	if (c->branch) {
		pen_glyph(&p, " ", &base);
		pen_text(&p, c->branch, row->branch != NULL ? row->branch :
		    "-", &dim, 0);
	}
	if (c->last) {
		pen_glyph(&p, " ", &base);
		if (a == TUI_ACTIVITY_LOST)
			snprintf(last, sizeof last, "lost: %s",
			    row->lost_reason != NULL ? row->lost_reason :
			    "no answer");
		else
			snprintf(last, sizeof last, "%s",
			    row->last_output != NULL ? row->last_output : "");
		pen_text(&p, c->last, last, &dim, 0);
	}
	pen_rest(&p, &base);
}

void
tui_draw_list(const struct tui_draw *d, const struct tui_rect *r,
    const struct tui_lease_row *rows, size_t n, size_t sel, size_t top)
{
	struct tui_style base, dim;
	struct list_cols c;
	bool costs = false;
	size_t idx;
	int i;

	check_draw(d);
	assert(r != NULL && (rows != NULL || n == 0));
	if (tui_layout_rect_empty(r))
		return;
	base = el_style(d, TUI_EL_LIST);
	if (n == 0) {
		dim = el_style(d, TUI_EL_LIST_DIM);
		tui_draw_text(d, r->x, r->y, r->w,
		    " no leases (corral new -- CMD)", &dim, TUI_TEXT_PAD);
		for (i = 1; i < r->h; i++)
			blanks(d, r->x, r->y + i, r->w, &base);
		return;
	}
	for (i = 0; (size_t)i < n && !costs; i++)
		costs = rows[i].cost != NULL;
	list_columns(r->w, costs, &c);
	for (i = 0; i < r->h; i++) {
		idx = top + (size_t)i;
		if (idx >= n) {
			blanks(d, r->x, r->y + i, r->w, &base);
			continue;
		}
		list_row(d, r, r->y + i, &rows[idx], idx == sel, &c);
	}
}

/* One cell's characters, made safe: unsafe bases show as '?'. */
static size_t
cell_text(const struct pty_cell *c, char *buf)
{
	size_t n = 0;
	int i;

	if (c->cp[0] == 0) {
		buf[0] = ' ';
		buf[1] = '\0';
		return 1;
	}
	for (i = 0; i < PTY_CELL_MAXCP && c->cp[i] != 0; i++) {
		if (c->cp[i] > 0x10ffff || tui_escape_cp_unsafe(c->cp[i])) {
			if (i == 0)
				buf[n++] = '?';
			continue;	/* an unsafe mark is dropped */
		}
		n += tui_escape_utf8_encode(c->cp[i], buf + n);
	}
	buf[n] = '\0';
	return n;
}

void
tui_draw_cells(const struct tui_draw *d, int x, int y, int w,
    const struct pty_cell *cells, int n, bool reverse)
{
	struct tui_style pane, blank, st;
	char g[4 * PTY_CELL_MAXCP + 1];
	const struct pty_cell *c;
	int col = 0, cw;

	check_draw(d);
	assert(cells != NULL || n == 0);
	tui_theme_style(d->theme, TUI_EL_PANE, &pane);
	blank = pane;
	if (reverse)
		blank.attrs ^= PTY_ATTR_REVERSE;
	finish(d, &blank);
	while (col < w) {
		if (cells == NULL || col >= n || cells[col].width == 0) {
			/* past the line, or an orphan right half */
			put(d, x + col, y, " ", 1, &blank);
			col++;
			continue;
		}
		c = &cells[col];
		cw = c->width == 2 ? 2 : 1;
		st.fg = c->fg != PTY_COLOR_DEFAULT ? c->fg : pane.fg;
		st.bg = c->bg != PTY_COLOR_DEFAULT ? c->bg : pane.bg;
		st.attrs = c->attrs | pane.attrs;
		if (reverse)
			st.attrs ^= PTY_ATTR_REVERSE;
		finish(d, &st);
		if (cw == 2 && col + 1 >= w) {
			put(d, x + col, y, " ", 1, &st);  /* half a wide char */
			col++;
			continue;
		}
		cell_text(c, g);
		put(d, x + col, y, g, cw, &st);
		col += cw;
	}
}

void
tui_draw_pane(const struct tui_draw *d, const struct tui_rect *r,
    const struct pty_mirror *m, int first, int last)
{
	bool reverse;
	int row;

	check_draw(d);
	assert(r != NULL && m != NULL);
	if (tui_layout_rect_empty(r))
		return;
	if (first < 0)
		first = 0;
	if (last > r->h - 1)
		last = r->h - 1;
	reverse = (m->meta.modes & PTY_WMODE_REVERSE) != 0;
	for (row = first; row <= last; row++) {
		if (m->cells != NULL && row < m->rows)
			tui_draw_cells(d, r->x, r->y + row, r->w,
			    m->cells + (size_t)row * (size_t)m->cols, m->cols,
			    reverse);
		else
			tui_draw_cells(d, r->x, r->y + row, r->w, NULL, 0,
			    reverse);
	}
}

void
tui_draw_cursor(const struct tui_draw *d, const struct tui_rect *r,
    const struct pty_mirror *m, bool show)
{
	int row, col;

	check_draw(d);
	assert(r != NULL && m != NULL);
	row = m->meta.cur_row;
	col = m->meta.cur_col;
	if (show && m->meta.cur_visible && m->cells != NULL &&
	    row < m->rows && col < m->cols && row < r->h && col < r->w)
		d->surface->ops->set_cursor(d->surface->ud, r->x + col,
		    r->y + row, true);
	else
		d->surface->ops->set_cursor(d->surface->ud, r->x, r->y, false);
}

void
tui_draw_scroll_tag(const struct tui_draw *d, const struct tui_rect *r,
    size_t offset, size_t total)
{
	struct tui_style st;
	char tag[64];
	int n;

	check_draw(d);
	assert(r != NULL);
	if (tui_layout_rect_empty(r))
		return;
	st = el_style(d, TUI_EL_SCROLL);
	n = snprintf(tag, sizeof tag, "[%zu/%zu]", offset, total);
	if (n > r->w)
		n = r->w;
	tui_draw_text(d, r->x + r->w - n, r->y, n, tag, &st, 0);
}

void
tui_draw_pane_tag(const struct tui_draw *d, const struct tui_rect *r,
    const char *text, bool bad)
{
	struct tui_style st;
	int n;

	check_draw(d);
	assert(r != NULL && text != NULL);
	if (tui_layout_rect_empty(r))
		return;
	st = el_style(d, bad ? TUI_EL_STATUS_ERROR : TUI_EL_STATUS_MODE);
	n = (int)tui_escape_width(text, strlen(text));
	if (n > r->w)
		n = r->w;
	tui_draw_text(d, r->x + r->w - n, r->y + r->h - 1, n, text, &st, 0);
}

void
tui_draw_detail(const struct tui_draw *d, const struct tui_rect *r,
    const char *title, const struct tui_kv *kv, size_t n)
{
	struct tui_style base, key, head;
	struct pen p;
	size_t i, kl;
	int kw = 0, row;

	check_draw(d);
	assert(r != NULL && (kv != NULL || n == 0));
	if (tui_layout_rect_empty(r))
		return;
	base = el_style(d, TUI_EL_DETAIL);
	key = el_style(d, TUI_EL_DETAIL_KEY);
	head = el_style(d, TUI_EL_DETAIL_TITLE);
	for (i = 0; i < n; i++) {
		kl = kv[i].key != NULL ? strlen(kv[i].key) : 0;
		if ((int)kl > kw)
			kw = (int)kl;
	}
	if (kw > 14)
		kw = 14;
	if (kw > r->w / 2)
		kw = r->w / 2;
	p = (struct pen){ d, r->x, r->y, r->x + r->w };
	p.x += tui_draw_text(d, r->x, r->y, r->w, title != NULL ? title :
	    "", &head, 0);
	pen_rest(&p, &base);
	for (row = 1; row < r->h; row++) {
		p = (struct pen){ d, r->x, r->y + row, r->x + r->w };
		i = (size_t)row - 1;
		if (i < n) {
			pen_text(&p, kw, kv[i].key, &key, 0);
			pen_glyph(&p, " ", &base);
			pen_text(&p, p.end - p.x, kv[i].value != NULL ?
			    kv[i].value : "-", &base, 0);
		}
		pen_rest(&p, &base);
	}
}

/* "2 need you (Tab) ": the leases the operator should look at. */
static int
attention_text(const struct tui_status *st, char *buf, size_t bufsz)
{
	int n;

	buf[0] = '\0';
	if (st->attention == 0)
		return 0;
	n = snprintf(buf, bufsz, "%u need%s you (Tab) ", st->attention,
	    st->attention == 1 ? "s" : "");
	return n > 0 && (size_t)n < bufsz ? n : 0;
}

/* "$1.20 spent ": what the listed leases cost together (SPEC 8.5). */
static int
total_text(const struct tui_status *st, char *buf, size_t bufsz)
{
	int n;

	buf[0] = '\0';
	if (st->cost == NULL || st->cost[0] == '\0')
		return 0;
	n = snprintf(buf, bufsz, "%.24s spent ", st->cost);
	return n > 0 && (size_t)n < bufsz ? n : 0;
}

/*
 * Columns the counts take ("$1.20 spent 2 need you (Tab) B1 W2 D1 "):
 * narrower, without the total, then what needs you alone.
 */
static int
counts_width(const struct tui_status *st, bool letters, bool total)
{
	char num[48];
	int a, w = attention_text(st, num, sizeof num);

	if (total)
		w += total_text(st, num, sizeof num);
	if (!letters)
		return w;
	for (a = 0; a < TUI_ACTIVITY_COUNT; a++)
		if (st->counts[a] > 0)
			w += 2 + snprintf(num, sizeof num, "%u",
			    st->counts[a]);
	return w;
}

void
tui_draw_status(const struct tui_draw *d, const struct tui_rect *r,
    const struct tui_status *st)
{
	/* badge order: what needs the operator first */
	static const enum tui_activity order[] = { TUI_ACTIVITY_BLOCKED,
		TUI_ACTIVITY_PROMPT, TUI_ACTIVITY_FAILED, TUI_ACTIVITY_LOST,
		TUI_ACTIVITY_WORKING, TUI_ACTIVITY_STARTING, TUI_ACTIVITY_DONE,
		TUI_ACTIVITY_CANCELLED, TUI_ACTIVITY_UNKNOWN };
	struct tui_style base, tag, msg, badge;
	char buf[64], letter[2] = { 0 };
	struct pen p;
	size_t i;
	int cw, n, left;
	bool letters = true, focus = true;
	/* a message (an outcome, a question) has the room before the total */
	bool total = st->message == NULL || st->message[0] == '\0';

	check_draw(d);
	assert(r != NULL && st != NULL);
	if (tui_layout_rect_empty(r))
		return;
	base = el_style(d, TUI_EL_STATUS);
	tag = el_style(d, st->mode == TUI_MODE_TYPING ? TUI_EL_STATUS_TYPING :
	    TUI_EL_STATUS_MODE);
	msg = el_style(d, st->error ? TUI_EL_STATUS_ERROR :
	    TUI_EL_STATUS_MESSAGE);
	/* what the left side would take: the mode, the focus, the message */
	left = (int)strlen(tui_keys_mode_name(st->mode)) + 3 +
	    (st->focus != NULL && st->focus[0] != '\0' ? (int)strnlen(
	    st->focus, 24) + 1 : 0) + (st->message != NULL ?
	    (int)strnlen(st->message, 4096) : 0);
	cw = counts_width(st, true, total);
	if (total && cw > r->w - STATUS_LEFT_MIN) {
		total = false;		/* the counts before the total */
		cw = counts_width(st, true, false);
	}
	/*
	 * Narrow, or a message that needs the room (a refusal naming the
	 * command to run): what needs you, not the rest.
	 */
	if (cw > r->w - STATUS_LEFT_MIN || (st->message != NULL &&
	    st->message[0] != '\0' && left + cw > r->w)) {
		letters = false;
		cw = counts_width(st, false, false);
	}
	/* ... then the focus's name, then the count */
	if (st->message != NULL && st->message[0] != '\0' && left + cw > r->w &&
	    st->focus != NULL && st->focus[0] != '\0') {
		focus = false;
		left -= (int)strnlen(st->focus, 24) + 1;
	}
	if (cw > r->w - STATUS_LEFT_MIN || (st->message != NULL &&
	    st->message[0] != '\0' && left + cw > r->w))
		cw = 0;			/* too narrow: the mode matters more */
	p = (struct pen){ d, r->x, r->y, r->x + r->w - cw };
	snprintf(buf, sizeof buf, " %s ", tui_keys_mode_name(st->mode));
	pen_text(&p, (int)strlen(buf), buf, &tag, 0);
	if (focus && st->focus != NULL && st->focus[0] != '\0') {
		pen_glyph(&p, " ", &base);
		p.x += tui_draw_text(d, p.x, p.y, p.end - p.x > 24 ? 24 :
		    p.end - p.x, st->focus, &base, 0);
	}
	pen_glyph(&p, " ", &base);
	if (st->message != NULL && st->message[0] != '\0')
		p.x += tui_draw_text(d, p.x, p.y, p.end - p.x, st->message,
		    &msg, 0);
	else if (st->hints != NULL)
		p.x += tui_draw_text(d, p.x, p.y, p.end - p.x, st->hints,
		    &base, 0);
	pen_rest(&p, &base);
	if (cw == 0)
		return;
	p = (struct pen){ d, r->x + r->w - cw, r->y, r->x + r->w };
	if (total && (n = total_text(st, buf, sizeof buf)) > 0)
		pen_text(&p, n, buf, &base, 0);
	if ((n = attention_text(st, buf, sizeof buf)) > 0) {
		badge = el_style(d, (enum tui_el)(TUI_EL_BADGE +
		    TUI_ACTIVITY_BLOCKED));
		buf[n - 1] = '\0';	/* the blank after it is the bar's */
		pen_text(&p, n - 1, buf, &badge, 0);
		pen_glyph(&p, " ", &base);
	}
	for (i = 0; letters && i < sizeof order / sizeof order[0]; i++) {
		if (st->counts[order[i]] == 0)
			continue;
		letter[0] = tui_activity_letter(order[i]);
		badge = el_style(d, (enum tui_el)(TUI_EL_BADGE + order[i]));
		pen_glyph(&p, letter, &badge);
		snprintf(buf, sizeof buf, "%u", st->counts[order[i]]);
		pen_text(&p, (int)strlen(buf) + 1, buf, &base, 0);
	}
	pen_rest(&p, &base);
}

void
tui_draw_rule(const struct tui_draw *d, const struct tui_rect *r,
    const char *label)
{
	struct tui_style line, lab;
	struct pen p;
	int y, x;

	check_draw(d);
	assert(r != NULL);
	if (tui_layout_rect_empty(r))
		return;
	line = el_style(d, TUI_EL_BORDER);
	if (r->w == 1 && r->h > 1) {
		for (y = r->y; y < r->y + r->h; y++)
			put(d, r->x, y, RULE_V, 1, &line);
		return;
	}
	lab = el_style(d, TUI_EL_BORDER_LABEL);
	for (y = r->y; y < r->y + r->h; y++) {
		p = (struct pen){ d, r->x, y, r->x + r->w };
		if (y == r->y && label != NULL && label[0] != '\0' &&
		    r->w > 4) {
			pen_glyph(&p, RULE_H, &line);
			pen_glyph(&p, " ", &lab);
			p.x += tui_draw_text(d, p.x, y, r->w - 4, label, &lab,
			    0);
			pen_glyph(&p, " ", &lab);
		}
		for (x = p.x; x < p.end; x++)
			put(d, x, y, RULE_H, 1, &line);
	}
}

void
tui_draw_help(const struct tui_draw *d, const struct tui_rect *r,
    const struct tui_keys *k)
{
	const struct tui_help_line *lines;
	struct tui_style st;
	char pfx[32], keys[96];
	size_t n, i;
	struct pen p;
	int row = 0, kw = 20;

	check_draw(d);
	assert(r != NULL && k != NULL);
	if (tui_layout_rect_empty(r))
		return;
	st = el_style(d, TUI_EL_HELP);
	tui_keys_name(&k->prefix, pfx, sizeof pfx);
	lines = tui_keys_help(&n);
	if (kw > r->w / 2)
		kw = r->w / 2;
	snprintf(keys, sizeof keys, " corral keys (prefix %s)", pfx);
	tui_draw_text(d, r->x, r->y + row++, r->w, keys, &st, TUI_TEXT_PAD);
	for (i = 0; i < n && row < r->h - 1; i++, row++) {
		p = (struct pen){ d, r->x, r->y + row, r->x + r->w };
		if (!lines[i].prefixed)
			snprintf(keys, sizeof keys, "  %s", lines[i].keys);
		else if (lines[i].keys != NULL)
			snprintf(keys, sizeof keys, "  %s %s", pfx,
			    lines[i].keys);
		else
			snprintf(keys, sizeof keys, "  %s %s", pfx, pfx);
		pen_text(&p, kw, keys, &st, 0);
		pen_text(&p, p.end - p.x, lines[i].what, &st, 0);
	}
	/* the operator's own bindings (the keymap file) win: show them */
	for (i = 0; i < k->nuser && row < r->h - 1; i++, row++) {
		char name[32], what[96];

		p = (struct pen){ d, r->x, r->y + row, r->x + r->w };
		tui_keys_name(&k->user[i].key, name, sizeof name);
		if (k->user[i].table == TUI_TABLE_PREFIX)
			snprintf(keys, sizeof keys, "  %s %s", pfx, name);
		else
			snprintf(keys, sizeof keys, "  %s", name);
		snprintf(what, sizeof what, "%s (your keymap%s%s)",
		    k->user[i].cmd < 0 ? "unbound" :
		    tui_keys_command_name(k->user[i].cmd),
		    k->user[i].table == TUI_TABLE_NORMAL ? "" : ", ",
		    k->user[i].table == TUI_TABLE_NORMAL ? "" :
		    tui_keys_table_name(k->user[i].table));
		pen_text(&p, kw, keys, &st, 0);
		pen_text(&p, p.end - p.x, what, &st, 0);
	}
	for (; row < r->h - 1; row++)
		blanks(d, r->x, r->y + row, r->w, &st);
	if (row < r->h)
		tui_draw_text(d, r->x, r->y + row, r->w, "  ? or Esc: close",
		    &st, TUI_TEXT_PAD);
}
