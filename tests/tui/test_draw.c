/*
 * test_draw.c: rendering onto an in-memory surface (STYLE F), compared to
 * golden text: the lease list, the pane from a mirror (colours, wide
 * characters, dirty rows, cursor), detail, status, rules and help; and
 * no agent-supplied text ever reaches the surface unescaped (SPEC 4.7).
 */
#include <check.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/console/console.h"

Suite *draw_suite(void);

/* ------------------------------------------------------------------ */
/* An in-memory surface: a grid of cells plus counters                 */

struct mcell {
	char text[40];
	int width;		/* 0: right half of a wide glyph */
	struct tui_style st;
	int puts;
};

struct msurf {
	int w, h;
	struct mcell *cells;
	int outside;		/* writes outside the surface */
	int unsafe;		/* texts with controls/bidi/bad UTF-8 */
	int cur_x, cur_y;
	bool cur_visible;
	int clears;
};

static struct mcell *
at(struct msurf *m, int x, int y)
{
	return &m->cells[y * m->w + x];
}

static void
m_put(void *ud, int x, int y, const char *s, int width,
    const struct tui_style *st)
{
	struct msurf *m = ud;
	struct mcell *c;
	size_t len = strlen(s);

	if (x < 0 || y < 0 || y >= m->h || x + width > m->w ||
	    (width != 1 && width != 2)) {
		m->outside++;
		return;
	}
	if (len == 0 || len >= sizeof c->text ||
	    tui_escape_size(s, len, 0) != len)
		m->unsafe++;
	c = at(m, x, y);
	snprintf(c->text, sizeof c->text, "%s", s);
	c->width = width;
	c->st = *st;
	c->puts++;
	if (width == 2) {
		c = at(m, x + 1, y);
		c->text[0] = '\0';
		c->width = 0;
		c->st = *st;
	}
}

static void
m_clear(void *ud)
{
	struct msurf *m = ud;

	m->clears++;
}

static void
m_cursor(void *ud, int x, int y, bool visible)
{
	struct msurf *m = ud;

	m->cur_x = x;
	m->cur_y = y;
	m->cur_visible = visible;
}

static void
m_size(void *ud, int *w, int *h)
{
	struct msurf *m = ud;

	*w = m->w;
	*h = m->h;
}

static const struct tui_surface_ops mem_ops = {
	.put_cell = m_put,
	.clear = m_clear,
	.set_cursor = m_cursor,
	.size = m_size,
};

static struct msurf ms;
static struct tui_surface surf;
static struct tui_theme theme;
static struct tui_draw dr;

/* A fresh w x h surface filled with '~' (never drawn). */
static void
surface(int w, int h)
{
	int i;

	free(ms.cells);
	memset(&ms, 0, sizeof ms);
	ms.w = w;
	ms.h = h;
	ms.cells = calloc((size_t)w * (size_t)h, sizeof *ms.cells);
	ck_assert_ptr_nonnull(ms.cells);
	for (i = 0; i < w * h; i++) {
		strcpy(ms.cells[i].text, "~");
		ms.cells[i].width = 1;
	}
	surf.ops = &mem_ops;
	surf.ud = &ms;
}

/* Row y as text (wide glyphs once). */
static const char *
row_text(int y)
{
	static char buf[4096];
	size_t n = 0, l;
	int x;

	for (x = 0; x < ms.w; x++) {
		if (at(&ms, x, y)->width == 0)
			continue;
		l = strlen(at(&ms, x, y)->text);
		memcpy(buf + n, at(&ms, x, y)->text, l);
		n += l;
	}
	buf[n] = '\0';
	return buf;
}

/* Count '~' cells inside and outside r. */
static void
untouched(const struct tui_rect *r, int *inside, int *outside)
{
	int x, y;

	*inside = *outside = 0;
	for (y = 0; y < ms.h; y++)
		for (x = 0; x < ms.w; x++)
			if (strcmp(at(&ms, x, y)->text, "~") == 0) {
				if (tui_layout_rect_contains(r, x, y))
					(*inside)++;
				else
					(*outside)++;
			}
}

static void
assert_clean(void)
{
	ck_assert_int_eq(ms.outside, 0);
	ck_assert_int_eq(ms.unsafe, 0);
}

static void
setup(void)
{
	ck_assert_ptr_nonnull(setlocale(LC_CTYPE, "C.UTF-8"));
	tui_theme_default(&theme);
	dr.surface = &surf;
	dr.theme = &theme;
	dr.colors = TUI_COLORS_256;
	surface(80, 24);
}

static void
teardown(void)
{
	free(ms.cells);
	ms.cells = NULL;
}

#define IDX PTY_COLOR_INDEXED

/* ------------------------------------------------------------------ */
/* Text                                                                */

START_TEST(test_draw_text_clip_and_escape)
{
	struct tui_style st = { IDX(1), IDX(2), PTY_ATTR_BOLD };
	int n;

	surface(12, 6);
	n = tui_draw_text(&dr, 0, 0, 12, "hello", &st, 0);
	ck_assert_int_eq(n, 5);
	ck_assert_str_eq(row_text(0), "hello~~~~~~~");
	n = tui_draw_text(&dr, 0, 1, 12, "hello", &st, TUI_TEXT_PAD);
	ck_assert_str_eq(row_text(1), "hello       ");
	n = tui_draw_text(&dr, 0, 2, 8, "a long name here", &st, 0);
	ck_assert_int_eq(n, 8);
	ck_assert_str_eq(row_text(2), "a long \xe2\x80\xa6~~~~");
	/* an escape sequence is shown, not sent */
	n = tui_draw_text(&dr, 0, 3, 12, "a\x1b[2Jb", &st, 0);
	ck_assert_str_eq(row_text(3), "a\\x1b[2Jb~~~");
	ck_assert_int_eq(n, 9);
	/* wide characters that do not fit are not split */
	n = tui_draw_text(&dr, 0, 4, 4, "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
	    &st, 0);
	ck_assert_int_eq(n, 4);
	ck_assert_str_eq(row_text(4), "\xe6\x97\xa5 \xe2\x80\xa6~~~~~~~~");
	/* right-aligned, combining mark kept with its base */
	n = tui_draw_text(&dr, 0, 5, 6, "e\xcc\x81t", &st, TUI_TEXT_RIGHT);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(row_text(5), "    e\xcc\x81t~~~~~~");
	ck_assert_uint_eq(at(&ms, 4, 5)->st.fg, IDX(1));
	ck_assert_uint_eq(at(&ms, 4, 5)->st.attrs, PTY_ATTR_BOLD);
	ck_assert_int_eq(tui_draw_text(&dr, 0, 0, 0, "x", &st, 0), 0);
	assert_clean();
}
END_TEST

START_TEST(test_draw_age)
{
	char b[16];

	tui_draw_age(-1, b, sizeof b);
	ck_assert_str_eq(b, "-");
	tui_draw_age(59, b, sizeof b);
	ck_assert_str_eq(b, "59s");
	tui_draw_age(125, b, sizeof b);
	ck_assert_str_eq(b, "2m");
	tui_draw_age(3700, b, sizeof b);
	ck_assert_str_eq(b, "1h");
	tui_draw_age(90000, b, sizeof b);
	ck_assert_str_eq(b, "1d");
}
END_TEST

/* ------------------------------------------------------------------ */
/* The lease list                                                      */

static const struct tui_lease_row demo_rows[] = {
	{ .id = "01J9A", .name = "build-fix",
	  .activity = TUI_ACTIVITY_WORKING, .lease_state = "running",
	  .mode = "bwrap", .branch = "corral/01J9A", .age_s = 125,
	  .last_output = "compiling foo.c" },
	{ .id = "01J9B", .name = "asks-question",
	  .activity = TUI_ACTIVITY_PROMPT, .lease_state = "running",
	  .mode = "bwrap", .branch = "corral/01J9B", .age_s = 3700,
	  .last_output = "Proceed? [y/n]", .unseen = true },
	{ .id = "01J9C", .name = "evil\x1b]0;pwn\x07",
	  .activity = TUI_ACTIVITY_DONE, .lease_state = "result_ready",
	  .mode = "HOST", .mode_long = "HOST trusted_local", .host = true,
	  .branch = "corral/01J9C", .age_s = 90000,
	  .last_output = "\xe2\x80\xae" "evil", .unseen = true },
	{ .id = "01J9D", .activity = TUI_ACTIVITY_LOST,
	  .lease_state = "running", .mode = "bwrap", .age_s = 10,
	  .lost_reason = "holder socket refused" },
};

START_TEST(test_draw_list_golden_80)
{
	struct tui_rect r = { 0, 0, 80, 4 };
	int in, out;

	tui_draw_list(&dr, &r, demo_rows, 4, 1, 0);
	/* activity word, isolation tag, age, then branch and last line */
	ck_assert_str_eq(row_text(0), " W  build-fix        working   "
	    "bwrap   2m corral/01J9A         compiling foo.c  ");
	ck_assert_str_eq(row_text(1), ">P* asks-question    prompt    "
	    "bwrap   1h corral/01J9B         Proceed? [y/n]   ");
	ck_assert_str_eq(row_text(2), " D* evil\\x1b]0;pwn\\\xe2\x80\xa6 done      "
	    "HOST    1d corral/01J9C         \\u202eevil       ");
	ck_assert_str_eq(row_text(3), " L  01J9D            lost      "
	    "bwrap  10s -                    lost: holder soc\xe2\x80\xa6");
	/* the trusted_local tag has its own colour (issue 21) */
	ck_assert_uint_eq(at(&ms, 31, 2)->st.bg, IDX(1));
	ck_assert_uint_ne(at(&ms, 31, 2)->st.attrs & PTY_ATTR_BOLD, 0);
	ck_assert_uint_eq(at(&ms, 31, 0)->st.bg, PTY_COLOR_DEFAULT);
	/* styles: selection, badges in colour and letter, unseen marker */
	ck_assert_uint_eq(at(&ms, 10, 1)->st.bg, IDX(6));
	ck_assert_uint_eq(at(&ms, 10, 0)->st.bg, PTY_COLOR_DEFAULT);
	ck_assert_uint_eq(at(&ms, 1, 0)->st.bg, IDX(2));
	ck_assert_uint_eq(at(&ms, 1, 1)->st.bg, IDX(12));
	ck_assert_uint_eq(at(&ms, 2, 2)->st.fg, IDX(11));
	/* the dim columns of other rows */
	ck_assert_uint_eq(at(&ms, 45, 0)->st.fg, IDX(8));
	untouched(&r, &in, &out);
	ck_assert_int_eq(in, 0);
	ck_assert_int_eq(out, 80 * 20);
	assert_clean();
}
END_TEST

START_TEST(test_draw_list_narrow_columns)
{
	struct tui_rect r = { 2, 1, 40, 2 };

	tui_draw_list(&dr, &r, demo_rows, 4, 0, 2);
	/* 40 columns: name, activity, isolation and age only */
	ck_assert_str_eq(row_text(1), "~~ D* evil\\x1b]0;pwn\\x\xe2\x80\xa6 done"
	    "    HOST    1d~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~");
	ck_assert_str_eq(row_text(2), "~~ L  01J9D             lost    "
	    "bwrap  10s~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~");
	assert_clean();
}
END_TEST

START_TEST(test_draw_list_every_width)
{
	/* no width writes outside its rect or leaves a cell undrawn */
	struct tui_rect r;
	int w, in, out;

	for (w = 1; w <= 130; w++) {
		surface(140, 8);
		r = (struct tui_rect){ 3, 2, w, 5 };
		tui_draw_list(&dr, &r, demo_rows, 4, 3, 0);
		untouched(&r, &in, &out);
		ck_assert_msg(in == 0, "width %d left %d cells", w, in);
		ck_assert_int_eq(out, 140 * 8 - w * 5);
		assert_clean();
	}
}
END_TEST

START_TEST(test_draw_list_safety_columns_every_width)
{
	/*
	 * Issue 21: from 19 columns up every row keeps its activity word and
	 * its isolation tag (HOST for the trusted_local one); from 30 its age.
	 */
	static const char *const words[] = { "working", "prompt", "done",
		"lost" };
	struct tui_rect r;
	int w, y;

	for (w = 19; w <= 300; w++) {
		surface(310, 5);
		r = (struct tui_rect){ 0, 0, w, 4 };
		tui_draw_list(&dr, &r, demo_rows, 4, 0, 0);
		for (y = 0; y < 4; y++) {
			const char *t = row_text(y);

			ck_assert_msg(strstr(t, words[y]) != NULL,
			    "width %d row %d: no '%s' in '%s'", w, y, words[y],
			    t);
			ck_assert_msg(strstr(t, y == 2 ? "HOST" : "bwrap") !=
			    NULL, "width %d row %d: no isolation in '%s'", w,
			    y, t);
			ck_assert_msg(w < 30 || strstr(t, y == 2 ? " 1d" :
			    y == 3 ? "10s" : y == 1 ? " 1h" : " 2m") != NULL,
			    "width %d row %d: no age in '%s'", w, y, t);
		}
		/* the last line (a blocked lease's question) from 60 up */
		ck_assert(w < 60 || strstr(row_text(1), "Proceed?") != NULL);
		assert_clean();
	}
}
END_TEST

START_TEST(test_draw_list_cost)
{
	struct tui_lease_row rows[2];
	struct tui_rect r = { 0, 0, 80, 2 };
	char b[24];

	/* what a lease's model requests cost */
	ck_assert(!tui_draw_cost(0, 0, 0, b, sizeof b));
	ck_assert_str_eq(b, "");
	ck_assert(tui_draw_cost(3, 420000000, 0, b, sizeof b));
	ck_assert_str_eq(b, "$0.42");
	ck_assert(tui_draw_cost(1, 4000000, 0, b, sizeof b));
	ck_assert_str_eq(b, "<$0.01");
	ck_assert(tui_draw_cost(9, 12305000000, 2, b, sizeof b));
	ck_assert_str_eq(b, "$12.31+");
	ck_assert(tui_draw_cost(9, 123456000000000, 0, b, sizeof b));
	ck_assert_str_eq(b, "$123456");
	ck_assert(tui_draw_cost(0, 0, 1, b, sizeof b));
	ck_assert_str_eq(b, "$0.00+");
	/* a cost column once any lease has one, right-aligned, before the
	 * branch */
	memcpy(rows, demo_rows, sizeof rows);
	rows[0].cost = "$0.42";
	tui_draw_list(&dr, &r, rows, 2, 1, 0);
	ck_assert_str_eq(row_text(0), " W  build-fix        working   "
	    "bwrap   2m   $0.42 running      compiling foo.c  ");
	ck_assert_str_eq(row_text(1), ">P* asks-question    prompt    "
	    "bwrap   1h       - running      Proceed? [y/n]   ");
	assert_clean();
}
END_TEST

START_TEST(test_draw_list_empty_and_top)
{
	struct tui_rect r = { 0, 0, 40, 3 };

	tui_draw_list(&dr, &r, NULL, 0, 0, 0);
	ck_assert_str_eq(row_text(0), " no leases (corral new -- CMD)          "
	    "~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~");
	ck_assert_str_eq(row_text(2), "                                        "
	    "~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~");
	ck_assert_uint_eq(tui_draw_list_top(10, 0, 3, 0), 0);
	ck_assert_uint_eq(tui_draw_list_top(10, 5, 3, 0), 3);
	ck_assert_uint_eq(tui_draw_list_top(10, 4, 3, 3), 3);
	ck_assert_uint_eq(tui_draw_list_top(10, 2, 3, 3), 2);
	ck_assert_uint_eq(tui_draw_list_top(10, 99, 3, 0), 7);
	ck_assert_uint_eq(tui_draw_list_top(2, 1, 5, 4), 0);
	ck_assert_uint_eq(tui_draw_list_top(0, 0, 5, 4), 0);
	ck_assert_uint_eq(tui_draw_list_top(5, 1, 0, 4), 0);
	assert_clean();
}
END_TEST

START_TEST(test_draw_list_no_color)
{
	struct tui_rect r = { 0, 0, 80, 4 };
	int x, y;

	tui_theme_set_no_color(&theme, true);
	tui_draw_list(&dr, &r, demo_rows, 4, 1, 0);
	for (y = 0; y < 4; y++)
		for (x = 0; x < 80; x++) {
			ck_assert_uint_eq(at(&ms, x, y)->st.fg,
			    PTY_COLOR_DEFAULT);
			ck_assert_uint_eq(at(&ms, x, y)->st.bg,
			    PTY_COLOR_DEFAULT);
		}
	/* the selection still shows, and so does the marker */
	ck_assert_uint_ne(at(&ms, 10, 1)->st.attrs & PTY_ATTR_REVERSE, 0);
	ck_assert_uint_eq(at(&ms, 10, 0)->st.attrs & PTY_ATTR_REVERSE, 0);
	ck_assert_str_eq(at(&ms, 0, 1)->text, ">");
	ck_assert_str_eq(at(&ms, 1, 1)->text, "P");
}
END_TEST

/* ------------------------------------------------------------------ */
/* The pane                                                            */

static struct pty_cell mcells[3 * 6];

/* A 3x6 mirror: "hi日!", escapes and marks, then a blank row. */
static void
mirror(struct pty_mirror *m)
{
	int i;

	memset(m, 0, sizeof *m);
	memset(mcells, 0, sizeof mcells);
	for (i = 0; i < 18; i++)
		mcells[i].width = 1;
	m->rows = 3;
	m->cols = 6;
	m->cells = mcells;
	mcells[0].cp[0] = 'h';
	mcells[0].fg = IDX(1);
	mcells[1].cp[0] = 'i';
	mcells[1].attrs = PTY_ATTR_BOLD;
	mcells[2].cp[0] = 0x65e5;
	mcells[2].width = 2;
	mcells[3].width = 0;
	mcells[4].cp[0] = '!';
	mcells[4].bg = PTY_COLOR_RGB(255, 0, 0);
	mcells[6].cp[0] = 0x1b;			/* never in a cell, but */
	mcells[7].cp[0] = 0x202e;		/* RLO */
	mcells[8].cp[0] = 'e';
	mcells[8].cp[1] = 0x301;
	mcells[9].cp[0] = 'x';
	mcells[9].cp[1] = 0x202e;		/* an unsafe mark: dropped */
	mcells[10].cp[0] = 0x9b;		/* C1 CSI */
	m->meta.cur_row = 1;
	m->meta.cur_col = 2;
	m->meta.cur_visible = 1;
}

START_TEST(test_draw_pane_golden)
{
	struct pty_mirror m;
	struct tui_rect r = { 2, 1, 10, 4 };
	int in, out;

	surface(14, 6);
	mirror(&m);
	tui_draw_pane(&dr, &r, &m, 0, 3);
	ck_assert_str_eq(row_text(0), "~~~~~~~~~~~~~~");
	ck_assert_str_eq(row_text(1), "~~hi\xe6\x97\xa5!     ~~");
	ck_assert_str_eq(row_text(2), "~~??e\xcc\x81x?     ~~");
	ck_assert_str_eq(row_text(3), "~~          ~~");
	ck_assert_str_eq(row_text(4), "~~          ~~");
	ck_assert_uint_eq(at(&ms, 2, 1)->st.fg, IDX(1));
	ck_assert_uint_eq(at(&ms, 3, 1)->st.attrs, PTY_ATTR_BOLD);
	ck_assert_int_eq(at(&ms, 4, 1)->width, 2);
	/* RGB degraded to 256 colours */
	ck_assert_uint_eq(at(&ms, 6, 1)->st.bg, IDX(196));
	/* blanks after the line use the pane's own colours */
	ck_assert_uint_eq(at(&ms, 8, 1)->st.bg, PTY_COLOR_DEFAULT);
	untouched(&r, &in, &out);
	ck_assert_int_eq(in, 0);
	assert_clean();
}
END_TEST

START_TEST(test_draw_pane_dirty_rows_only)
{
	struct pty_mirror m;
	struct tui_rect r = { 0, 0, 8, 3 };
	int x;

	surface(8, 3);
	mirror(&m);
	tui_draw_pane(&dr, &r, &m, 1, 1);
	ck_assert_str_eq(row_text(0), "~~~~~~~~");
	ck_assert_str_eq(row_text(1), "??e\xcc\x81x?   ");
	ck_assert_str_eq(row_text(2), "~~~~~~~~");
	for (x = 0; x < 8; x++)
		ck_assert_int_eq(at(&ms, x, 1)->puts, 1);
	/* a range past the rect is clipped */
	tui_draw_pane(&dr, &r, &m, 2, 50);
	ck_assert_str_eq(row_text(2), "        ");
	tui_draw_pane(&dr, &r, &m, -3, -1);
	ck_assert_str_eq(row_text(0), "~~~~~~~~");
	assert_clean();
}
END_TEST

START_TEST(test_draw_pane_clips_wide_and_narrow_rect)
{
	struct pty_mirror m;
	struct tui_rect r = { 0, 0, 3, 2 };

	surface(5, 2);
	mirror(&m);
	tui_draw_pane(&dr, &r, &m, 0, 1);
	/* the wide character at columns 2-3 does not fit in 3 */
	ck_assert_str_eq(row_text(0), "hi ~~");
	ck_assert_str_eq(row_text(1), "??e\xcc\x81~~");
	assert_clean();
}
END_TEST

START_TEST(test_draw_pane_reverse_and_depth)
{
	struct pty_mirror m;
	struct tui_rect r = { 0, 0, 6, 1 };

	surface(6, 1);
	mirror(&m);
	m.meta.modes = PTY_WMODE_REVERSE;
	dr.colors = TUI_COLORS_16;
	tui_draw_pane(&dr, &r, &m, 0, 0);
	ck_assert_uint_ne(at(&ms, 0, 0)->st.attrs & PTY_ATTR_REVERSE, 0);
	ck_assert_uint_ne(at(&ms, 5, 0)->st.attrs & PTY_ATTR_REVERSE, 0);
	ck_assert_uint_eq(at(&ms, 4, 0)->st.bg, IDX(9));
	/* NO_COLOR: the agent's colours go too, attributes stay */
	tui_theme_set_no_color(&theme, true);
	tui_draw_pane(&dr, &r, &m, 0, 0);
	ck_assert_uint_eq(at(&ms, 0, 0)->st.fg, PTY_COLOR_DEFAULT);
	ck_assert_uint_eq(at(&ms, 4, 0)->st.bg, PTY_COLOR_DEFAULT);
	ck_assert_uint_ne(at(&ms, 1, 0)->st.attrs & PTY_ATTR_BOLD, 0);
	assert_clean();
}
END_TEST

START_TEST(test_draw_pane_empty_mirror)
{
	struct pty_mirror m;
	struct tui_rect r = { 1, 0, 4, 2 };

	surface(6, 2);
	memset(&m, 0, sizeof m);
	tui_draw_pane(&dr, &r, &m, 0, 1);
	ck_assert_str_eq(row_text(0), "~    ~");
	ck_assert_str_eq(row_text(1), "~    ~");
	tui_draw_cursor(&dr, &r, &m, true);
	ck_assert(!ms.cur_visible);
	assert_clean();
}
END_TEST

START_TEST(test_draw_cursor)
{
	struct pty_mirror m;
	struct tui_rect r = { 2, 1, 10, 4 };

	mirror(&m);
	tui_draw_cursor(&dr, &r, &m, true);
	ck_assert(ms.cur_visible);
	ck_assert_int_eq(ms.cur_x, 4);
	ck_assert_int_eq(ms.cur_y, 2);
	/* not typing: hidden */
	tui_draw_cursor(&dr, &r, &m, false);
	ck_assert(!ms.cur_visible);
	/* the agent hid it */
	m.meta.cur_visible = 0;
	tui_draw_cursor(&dr, &r, &m, true);
	ck_assert(!ms.cur_visible);
	/* outside the rect (pane smaller than the screen) */
	m.meta.cur_visible = 1;
	r.w = 2;
	tui_draw_cursor(&dr, &r, &m, true);
	ck_assert(!ms.cur_visible);
}
END_TEST

START_TEST(test_draw_cells_scrollback_line)
{
	struct pty_cell line[3];

	surface(6, 1);
	memset(line, 0, sizeof line);
	line[0].cp[0] = 'o';
	line[0].width = 1;
	line[1].cp[0] = 'k';
	line[1].width = 1;
	line[2].width = 0;		/* orphan right half */
	tui_draw_cells(&dr, 1, 0, 4, line, 3, false);
	ck_assert_str_eq(row_text(0), "~ok  ~");
	assert_clean();
}
END_TEST

/* ------------------------------------------------------------------ */
/* Detail, status, rules, help                                          */

START_TEST(test_draw_detail_golden)
{
	static const struct tui_kv kv[] = {
		{ "branch", "corral/01J9A" },
		{ "worktree", "/st/wt/01J9A\x1b[2J" },
		{ "sandbox", NULL },
	};
	struct tui_rect r = { 0, 0, 36, 5 };
	int in, out;

	surface(36, 6);
	tui_draw_detail(&dr, &r, "lease build-fix", kv, 3);
	ck_assert_str_eq(row_text(0), "lease build-fix                     ");
	ck_assert_str_eq(row_text(1), "branch   corral/01J9A               ");
	ck_assert_str_eq(row_text(2), "worktree /st/wt/01J9A\\x1b[2J        ");
	ck_assert_str_eq(row_text(3), "sandbox  -                          ");
	ck_assert_str_eq(row_text(4), "                                    ");
	ck_assert_uint_eq(at(&ms, 0, 1)->st.fg, IDX(6));
	ck_assert_uint_ne(at(&ms, 0, 0)->st.attrs & PTY_ATTR_BOLD, 0);
	untouched(&r, &in, &out);
	ck_assert_int_eq(in, 0);
	ck_assert_int_eq(out, 36);
	assert_clean();
}
END_TEST

START_TEST(test_draw_status_golden)
{
	struct tui_status st = { .mode = TUI_MODE_TYPING,
		.focus = "build-fix", .hints = "C-b Esc stop" };
	struct tui_rect r = { 0, 0, 60, 1 };

	surface(60, 2);
	st.counts[TUI_ACTIVITY_WORKING] = 2;
	st.counts[TUI_ACTIVITY_PROMPT] = 1;
	st.counts[TUI_ACTIVITY_DONE] = 12;
	tui_draw_status(&dr, &r, &st);
	ck_assert_str_eq(row_text(0), " TYPING  build-fix C-b Esc stop        "
	    "           P1 W2 D12 ");
	/* the typing tag stands out; the badges have colour and letter */
	ck_assert_uint_eq(at(&ms, 1, 0)->st.bg, IDX(3));
	ck_assert_str_eq(at(&ms, 50, 0)->text, "P");
	ck_assert_uint_eq(at(&ms, 50, 0)->st.bg, IDX(12));
	ck_assert_str_eq(at(&ms, 53, 0)->text, "W");
	ck_assert_uint_eq(at(&ms, 53, 0)->st.bg, IDX(2));
	ck_assert_uint_eq(at(&ms, 51, 0)->st.bg, IDX(7));
	ck_assert_uint_eq(at(&ms, 20, 0)->st.bg, IDX(7));

	/* a question replaces the hints, in the error style */
	st.mode = TUI_MODE_CONFIRM;
	st.message = "cancel build-fix? y/n";
	st.error = true;
	tui_draw_status(&dr, &r, &st);
	ck_assert_str_eq(row_text(0), " CONFIRM  build-fix cancel build-fix? "
	    "y/n         P1 W2 D12 ");
	ck_assert_uint_eq(at(&ms, 20, 0)->st.bg, IDX(1));

	/* too narrow for the counts: the mode and message win */
	r.w = 20;
	surface(20, 1);
	st.focus = NULL;
	tui_draw_status(&dr, &r, &st);
	ck_assert_str_eq(row_text(0), " CONFIRM  cancel bu\xe2\x80\xa6");

	/* leases that need you: counted first, kept when the letters go */
	st.mode = TUI_MODE_NORMAL;
	st.message = NULL;
	st.error = false;
	st.hints = "j/k move";
	st.attention = 2;
	r.w = 60;
	surface(60, 1);
	tui_draw_status(&dr, &r, &st);
	ck_assert_str_eq(row_text(0), " NORMAL  j/k move                "
	    "2 need you (Tab) P1 W2 D12 ");
	ck_assert_uint_eq(at(&ms, 33, 0)->st.bg, IDX(3));
	r.w = 50;
	surface(50, 1);
	st.attention = 1;
	tui_draw_status(&dr, &r, &st);
	ck_assert_str_eq(row_text(0), " NORMAL  j/k move               "
	    "1 needs you (Tab) ");
	/* what the leases cost together, first; dropped first when narrow */
	st.cost = "$1.20+";
	r.w = 80;
	surface(80, 1);
	tui_draw_status(&dr, &r, &st);
	ck_assert_str_eq(row_text(0), " NORMAL  j/k move                      "
	    "$1.20+ spent 1 needs you (Tab) P1 W2 D12 ");
	r.w = 60;
	surface(60, 1);
	tui_draw_status(&dr, &r, &st);
	ck_assert_str_eq(row_text(0), " NORMAL  j/k move               "
	    "1 needs you (Tab) P1 W2 D12 ");
	r.w = 50;
	surface(50, 1);
	tui_draw_status(&dr, &r, &st);
	ck_assert_str_eq(row_text(0), " NORMAL  j/k move               "
	    "1 needs you (Tab) ");
	/* a message that needs the room has it before the letters */
	st.message = "apply refused: main is checked out; run there: cd "
	    "/src/app && git merge";
	r.w = 100;
	surface(100, 1);
	tui_draw_status(&dr, &r, &st);
	ck_assert_str_eq(row_text(0), " NORMAL  apply refused: main is checked "
	    "out; run there: cd /src/app && git merge  1 needs you (Tab) ");
	/* a longer one: then the focus's name goes, then the count */
	st.focus = "build-fix";
	st.message = "checked out; run there: cd /var/tmp/corral-run.abcdef/"
	    "corral-e2e.abcdef/repo && git merge --ff-only corral/x";
	tui_draw_status(&dr, &r, &st);
	ck_assert_ptr_nonnull(strstr(row_text(0), " NORMAL  checked out; run "
	    "there: cd /var/tmp/corral-run.abcdef/corral-e2e.abcdef/repo && "));
	ck_assert_ptr_null(strstr(row_text(0), "needs you"));
	r.w = 140;
	surface(140, 1);
	tui_draw_status(&dr, &r, &st);
	ck_assert_ptr_nonnull(strstr(row_text(0), "--ff-only corral/x"));
	ck_assert_ptr_null(strstr(row_text(0), "build-fix"));
	st.focus = NULL;
	r.w = 100;
	surface(100, 1);
	/* and a message has the room before the total */
	st.message = "applied";
	r.w = 80;
	surface(80, 1);
	tui_draw_status(&dr, &r, &st);
	ck_assert_str_eq(row_text(0), " NORMAL  applied                                    "
	    "1 needs you (Tab) P1 W2 D12 ");
	assert_clean();
}
END_TEST

START_TEST(test_draw_rules)
{
	struct tui_rect v = { 0, 0, 1, 3 }, h = { 1, 0, 12, 1 };

	surface(13, 3);
	tui_draw_rule(&dr, &v, NULL);
	tui_draw_rule(&dr, &h, "t\x07itle");
	ck_assert_str_eq(row_text(0), "\xe2\x94\x82\xe2\x94\x80 t\\x07it"
	    "\xe2\x80\xa6 \xe2\x94\x80");
	ck_assert_str_eq(row_text(1), "\xe2\x94\x82~~~~~~~~~~~~");
	ck_assert_uint_eq(at(&ms, 0, 0)->st.fg, IDX(8));
	assert_clean();
}
END_TEST

START_TEST(test_draw_help)
{
	struct tui_keys k;
	struct tui_rect r = { 2, 1, 60, 20 };
	char all[8192] = "";
	int y, in, out;

	surface(64, 22);
	tui_keys_init(&k);
	tui_draw_help(&dr, &r, &k);
	for (y = 1; y < 21; y++) {
		strcat(all, row_text(y));
		strcat(all, "\n");
	}
	ck_assert_ptr_nonnull(strstr(all, "corral keys (prefix C-b)"));
	ck_assert_ptr_nonnull(strstr(all, "C-b d"));
	ck_assert_ptr_nonnull(strstr(all, "detach"));
	ck_assert_ptr_nonnull(strstr(all, "C-b C-b"));
	ck_assert_ptr_nonnull(strstr(all, "never types"));
	ck_assert_ptr_nonnull(strstr(all, "Esc: close"));
	untouched(&r, &in, &out);
	ck_assert_int_eq(in, 0);
	ck_assert_int_eq(out, 64 * 22 - 60 * 20);
	/* a tiny overlay still stays inside */
	surface(10, 3);
	r = (struct tui_rect){ 1, 1, 5, 2 };
	tui_draw_help(&dr, &r, &k);
	untouched(&r, &in, &out);
	ck_assert_int_eq(in, 0);
	ck_assert_int_eq(out, 30 - 10);
	assert_clean();
}
END_TEST

/* ------------------------------------------------------------------ */
/* The review view and the timeline                                    */

/* All rows of the surface, one per line. */
static void
all_rows(char *all, size_t sz)
{
	all[0] = '\0';
	for (int y = 0; y < ms.h; y++) {
		strncat(all, row_text(y), sz - strlen(all) - 2);
		strcat(all, "\n");
	}
}

/* SPEC 7.4, 4.7: hunks marked, diff coloured, sandbox text escaped. */
START_TEST(test_draw_review)
{
	static const char doc[] = "{\"id\": \"L1\", \"name\": "
	    "\"n\\u001b]52;c;x\\u0007\", \"lease_state\": \"result_ready\", "
	    "\"reviewed\": true, \"result\": {\"status\": \"ready\", "
	    "\"patch\": {\"sha256\": \"115e3d6a99\"}}, \"diff\": [{\"id\": "
	    "\"115e3d6a:1\", \"path\": \"a\\u202etxt\", \"status\": "
	    "\"modified\", \"hunks\": [{\"id\": \"115e3d6a:1:1\", "
	    "\"header\": \"@@ -1,3 +1,3 @@\", \"lines\": [[\"-\", \"old\"], "
	    "[\"+\", \"n\\u001b[31m\"]]}, {\"id\": \"115e3d6a:1:2\", "
	    "\"header\": \"@@ -20,3 +20,3 @@\", \"lines\": [[\"+\", "
	    "\"c\"]]}]}]}";
	struct tui_rect r = { 0, 0, 80, 24 };
	struct tui_review rv;
	struct tui_style add;
	char all[8192], err[128];
	int y;

	tui_review_init(&rv);
	ck_assert_int_eq(tui_review_parse(&rv, doc, strlen(doc), err,
	    sizeof err), 0);
	rv.cur = rv.files[0].hline[0];
	ck_assert(tui_review_toggle(&rv));
	rv.cur = 0;
	tui_draw_view_review(&dr, &r, &rv, NULL);
	all_rows(all, sizeof all);
	ck_assert_ptr_nonnull(strstr(all, "review L1: 1 of 2 hunk(s) kept"));
	ck_assert_ptr_nonnull(strstr(all, "\\x1b]52;c;x\\x07"));
	ck_assert_ptr_nonnull(strstr(all, "a\\u202etxt"));
	ck_assert_ptr_nonnull(strstr(all, "+n\\x1b[31m"));
	ck_assert_ptr_nonnull(strstr(all, "x @@ -1,3 +1,3 @@"));
	/* a kept header: a check mark, not the '+' of added lines */
	ck_assert_ptr_nonnull(strstr(all, "\xe2\x9c\x93 @@ -20,3 +20,3 @@"));
	ck_assert_ptr_null(strstr(all, "+ @@"));
	/* a kept '+' line takes diff.add, a dropped one diff.dropped */
	tui_theme_style(&theme, TUI_EL_DIFF_ADD, &add);
	for (y = 0; y < ms.h; y++)
		if (strncmp(row_text(y), "  +c", 4) == 0)
			break;
	ck_assert_int_lt(y, ms.h);
	ck_assert_uint_eq(at(&ms, 3, y)->st.fg, tui_theme_degrade(add.fg,
	    TUI_COLORS_256));
	for (y = 0; y < ms.h; y++)
		if (strncmp(row_text(y), "x +n", 4) == 0)
			break;
	ck_assert_int_lt(y, ms.h);
	ck_assert(at(&ms, 3, y)->st.attrs & PTY_ATTR_STRIKE);
	/* loading: the message alone */
	surface(80, 24);
	tui_draw_view_review(&dr, &r, NULL, " loading...");
	all_rows(all, sizeof all);
	ck_assert_ptr_nonnull(strstr(all, "loading..."));
	assert_clean();
	tui_review_free(&rv);
}
END_TEST

/*
 * issue 15: a diff line's tail past the pane (a payload at column 5,000,
 * past byte 1,024) is kept whole and reachable sideways, with an
 * ellipsis at each edge beyond which text was left out; every column of
 * the line shows at some step.
 */
START_TEST(test_draw_review_long_line)
{
	static const char head[] = "{\"id\": \"L1\", \"lease_state\": "
	    "\"result_ready\", \"reviewed\": true, \"result\": {\"status\": "
	    "\"ready\", \"patch\": {\"sha256\": \"115e3d6a99\"}}, \"diff\": "
	    "[{\"id\": \"115e3d6a:1\", \"path\": \"a\", \"status\": "
	    "\"modified\", \"hunks\": [{\"id\": \"115e3d6a:1:1\", "
	    "\"header\": \"@@ -1 +1 @@\", \"lines\": [[\"+\", \"";
	static const char tail[] = "\"]]}]}]}";
	struct tui_rect r = { 0, 0, 80, 10 };
	struct tui_review rv;
	char *doc, *line, all[8192], err[128], *seen;
	size_t i, len, w, pos = 4999, col;
	int steps = 0;
	bool found = false;

	/* "+" then 4,999 dots, the payload, 100 more dots: column 5,000. */
	len = 4999 + 7 + 100;
	ck_assert_ptr_nonnull(line = malloc(len + 1));
	memset(line, '.', len);
	memcpy(line + pos - 1, "PAYLOAD", 7);
	line[len] = '\0';
	ck_assert_int_gt(asprintf(&doc, "%s%s%s", head, line, tail), 0);
	tui_review_init(&rv);
	ck_assert_int_eq(tui_review_parse(&rv, doc, strlen(doc), err,
	    sizeof err), 0);
	for (i = 0; i < rv.n; i++)
		if (rv.lines[i].kind == TUI_RV_ADD)
			break;
	ck_assert_uint_lt(i, rv.n);
	/* The model keeps every byte. */
	ck_assert_uint_eq(strlen(rv.lines[i].text), len + 1);
	ck_assert_ptr_nonnull(strstr(rv.lines[i].text, "PAYLOAD"));
	ck_assert_uint_eq(rv.maxw, len + 1);
	rv.cur = i;
	/* Not scrolled: the right edge says there is more. */
	surface(80, 10);
	tui_draw_view_review(&dr, &r, &rv, NULL);
	all_rows(all, sizeof all);
	ck_assert_ptr_null(strstr(all, "PAYLOAD"));
	ck_assert_ptr_nonnull(strstr(all, "...\xe2\x80\xa6\n"));
	ck_assert_ptr_nonnull(strstr(all, "[col 1 of 5107, left/right]"));
	/* Every column shows at some step; the payload is reached. */
	w = 80 - 2 - 1;		/* gutter, the left marker */
	ck_assert_ptr_nonnull(seen = calloc(len + 2, 1));
	for (;;) {
		surface(80, 10);
		tui_draw_view_review(&dr, &r, &rv, NULL);
		all_rows(all, sizeof all);
		if (strstr(all, "PAYLOAD") != NULL) {
			found = true;
			/* text left out to the left: the first column says so */
			ck_assert_ptr_nonnull(strstr(all, "  \xe2\x80\xa6...."));
		}
		for (col = rv.hcol; col < rv.hcol + w - 1 && col < len + 1;
		    col++)
			seen[col] = 1;
		if (rv.hcol + TUI_REVIEW_HSTEP > rv.maxw - 1)
			break;
		tui_review_hscroll(&rv, TUI_REVIEW_HSTEP);
		steps++;
	}
	ck_assert(found);
	ck_assert_int_gt(steps, 100);
	for (col = 0; col < len + 1; col++)
		ck_assert_msg(seen[col], "column %zu never shown", col);
	/* Clamped at the widest line's last column; 0 goes home. */
	tui_review_hscroll(&rv, 1000000);
	ck_assert_uint_eq(rv.hcol, rv.maxw - 1);
	tui_review_hscroll(&rv, -1000000);
	ck_assert_uint_eq(rv.hcol, 0);
	tui_review_hscroll(&rv, 80);
	tui_review_hscroll(&rv, LONG_MIN);
	ck_assert_uint_eq(rv.hcol, 0);
	assert_clean();
	free(seen);
	tui_review_free(&rv);
	free(doc);
	free(line);
}
END_TEST

/* issue 9: a row per lease, its bar, its blocked time. */
START_TEST(test_draw_timeline)
{
	struct tui_rect r = { 0, 0, 100, 8 };
	struct tui_timeline tl;
	struct tui_tl_row rows[] = {
		{ .id = "A", .name = "alpha\x1b]2;t\x07", .state = "running",
		  .selected = true },
		{ .id = "B", .name = NULL, .state = "result_ready" },
	};
	char all[8192];
	int64_t min = 60000;

	surface(100, 8);
	tui_timeline_init(&tl);
	tui_timeline_add(&tl, "A", 0, TUI_ACTIVITY_WORKING);
	tui_timeline_add(&tl, "A", 30 * min, TUI_ACTIVITY_BLOCKED);
	tui_timeline_add(&tl, "A", 45 * min, TUI_ACTIVITY_WORKING);
	tui_timeline_add(&tl, "B", 50 * min, TUI_ACTIVITY_DONE);
	tui_draw_view_timeline(&dr, &r, &tl, rows, 2, 0, 60 * min, NULL);
	ck_assert_ptr_nonnull(strstr(row_text(0), "timeline"));
	ck_assert_ptr_nonnull(strstr(row_text(0), "(1h00m)"));
	ck_assert_ptr_nonnull(strstr(row_text(1), "> alpha\\x1b]2;t\\x07"));
	ck_assert_ptr_nonnull(strstr(row_text(1), "WWWW"));
	ck_assert_ptr_nonnull(strstr(row_text(1), "BB"));
	ck_assert_ptr_nonnull(strstr(row_text(1), "blocked 15m00s"));
	ck_assert_ptr_nonnull(strstr(row_text(1), "running"));
	ck_assert_ptr_nonnull(strstr(row_text(2), "  B "));
	ck_assert_ptr_nonnull(strstr(row_text(2), "...D"));
	ck_assert_ptr_nonnull(strstr(row_text(2), "blocked 0s"));
	ck_assert_ptr_nonnull(strstr(row_text(7), "B blocked"));
	all_rows(all, sizeof all);
	assert_clean();
	tui_timeline_free(&tl);
}
END_TEST

/* The keymap file's bindings are listed in the help (issue 9). */
START_TEST(test_draw_help_user_bindings)
{
	struct tui_keys k;
	struct tui_rect r = { 0, 0, 70, 40 };
	char all[16384] = "", err[128];
	int y;

	surface(70, 40);
	tui_keys_init(&k);
	ck_assert_int_eq(tui_keymap_parse(&k, "keys", "bind T timeline\n"
	    "unbind t\nbind -T prefix y zoom\n", 47, err, sizeof err), 0);
	tui_draw_help(&dr, &r, &k);
	for (y = 0; y < 40; y++) {
		strcat(all, row_text(y));
		strcat(all, "\n");
	}
	ck_assert_ptr_nonnull(strstr(all, "timeline (your keymap)"));
	ck_assert_ptr_nonnull(strstr(all, "unbound (your keymap)"));
	ck_assert_ptr_nonnull(strstr(all, "C-b y"));
	ck_assert_ptr_nonnull(strstr(all, "zoom (your keymap, prefix)"));
	assert_clean();
}
END_TEST

START_TEST(test_draw_scroll_tag)
{
	struct tui_rect r = { 0, 0, 20, 3 };

	surface(20, 3);
	tui_draw_scroll_tag(&dr, &r, 42, 1000);
	ck_assert_str_eq(row_text(0), "~~~~~~~~~~~[42/1000]");
	ck_assert_uint_eq(at(&ms, 19, 0)->st.bg, IDX(3));
	r.w = 4;
	surface(20, 3);
	tui_draw_scroll_tag(&dr, &r, 42, 1000);
	ck_assert_str_eq(row_text(0), "[42\xe2\x80\xa6~~~~~~~~~~~~~~~~");
	assert_clean();
}
END_TEST

START_TEST(test_draw_every_size_stays_inside)
{
	/* each panel fills exactly its rect, at every size */
	static const struct tui_kv kv[] = { { "base", "abc123 (main)" },
		{ "a-very-long-key-name", "\xe6\x97\xa5\xe6\x9c\xac\x1b" } };
	struct tui_status st = { .mode = TUI_MODE_NORMAL, .focus = "f\x1bo",
		.hints = "j/k move  Enter type" };
	struct pty_mirror m;
	struct tui_keys k;
	struct tui_rect r;
	int w, h, p, in, out;

	tui_keys_init(&k);
	mirror(&m);
	st.counts[TUI_ACTIVITY_BLOCKED] = 3;
	for (p = 0; p < 5; p++) {
		for (w = 1; w <= 70; w++) {
			for (h = 1; h <= 4; h++) {
				surface(74, 6);
				r = (struct tui_rect){ 2, 1, w, h };
				switch (p) {
				case 0:
					tui_draw_detail(&dr, &r, "t", kv, 2);
					break;
				case 1:
					r.h = 1;
					tui_draw_status(&dr, &r, &st);
					break;
				case 2:
					tui_draw_rule(&dr, &r, "label");
					break;
				case 3:
					tui_draw_help(&dr, &r, &k);
					break;
				case 4:
					tui_draw_pane(&dr, &r, &m, 0, h - 1);
					break;
				}
				untouched(&r, &in, &out);
				ck_assert_msg(in == 0, "panel %d %dx%d: %d "
				    "cells undrawn", p, w, h, in);
				ck_assert_int_eq(out, 74 * 6 - r.w * r.h);
				assert_clean();
			}
		}
	}
}
END_TEST

Suite *
draw_suite(void)
{
	Suite *s = suite_create("draw");
	TCase *tc = tcase_create("Text");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_draw_text_clip_and_escape);
	tcase_add_test(tc, test_draw_age);
	suite_add_tcase(s, tc);
	tc = tcase_create("List");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_draw_list_golden_80);
	tcase_add_test(tc, test_draw_list_narrow_columns);
	tcase_add_test(tc, test_draw_list_every_width);
	tcase_add_test(tc, test_draw_list_safety_columns_every_width);
	tcase_add_test(tc, test_draw_list_cost);
	tcase_add_test(tc, test_draw_list_empty_and_top);
	tcase_add_test(tc, test_draw_list_no_color);
	suite_add_tcase(s, tc);
	tc = tcase_create("Pane");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_draw_pane_golden);
	tcase_add_test(tc, test_draw_pane_dirty_rows_only);
	tcase_add_test(tc, test_draw_pane_clips_wide_and_narrow_rect);
	tcase_add_test(tc, test_draw_pane_reverse_and_depth);
	tcase_add_test(tc, test_draw_pane_empty_mirror);
	tcase_add_test(tc, test_draw_cursor);
	tcase_add_test(tc, test_draw_cells_scrollback_line);
	suite_add_tcase(s, tc);
	tc = tcase_create("Panels");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_draw_detail_golden);
	tcase_add_test(tc, test_draw_status_golden);
	tcase_add_test(tc, test_draw_rules);
	tcase_add_test(tc, test_draw_help);
	tcase_add_test(tc, test_draw_help_user_bindings);
	tcase_add_test(tc, test_draw_review);
	tcase_add_test(tc, test_draw_timeline);
	tcase_add_test(tc, test_draw_review_long_line);
	tcase_add_test(tc, test_draw_scroll_tag);
	suite_add_tcase(s, tc);
	tc = tcase_create("Limits");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_draw_every_size_stays_inside);
	suite_add_tcase(s, tc);
	return s;
}
