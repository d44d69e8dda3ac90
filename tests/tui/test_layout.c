/*
 * test_layout.c: the console's geometry (issue 3): list on top for small
 * terminals, on the left for wide ones; every cell owned by exactly one
 * part, nothing negative, nothing outside, down to tiny sizes.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tui/console/console.h"

Suite *layout_suite(void);

#define ck_assert_rect(r, X, Y, W, H)                                    \
	do {                                                              \
		ck_assert_int_eq((r).x, (X));                             \
		ck_assert_int_eq((r).y, (Y));                             \
		ck_assert_int_eq((r).w, (W));                             \
		ck_assert_int_eq((r).h, (H));                             \
	} while (0)

static struct tui_layout
lay(int w, int h, size_t n, bool detail, bool zoom, bool help)
{
	struct tui_layout_in in = { .w = w, .h = h, .nleases = n,
		.detail = detail, .zoom = zoom, .help = help };
	struct tui_layout out;

	tui_layout_compute(&in, &out);
	return out;
}

START_TEST(test_layout_80x24_list_on_top)
{
	struct tui_layout l = lay(80, 24, 3, false, false, false);

	ck_assert(!l.list_left);
	ck_assert_rect(l.list, 0, 0, 80, 3);
	ck_assert_rect(l.sep_h, 0, 3, 80, 1);
	ck_assert_rect(l.pane, 0, 4, 80, 19);
	ck_assert_rect(l.status, 0, 23, 80, 1);
	ck_assert(tui_layout_rect_empty(&l.detail));
	ck_assert(tui_layout_rect_empty(&l.sep_v));
	/* many leases: the list is capped and scrolls */
	l = lay(80, 24, 40, false, false, false);
	ck_assert_rect(l.list, 0, 0, 80, 5);
	ck_assert_rect(l.pane, 0, 6, 80, 17);
	/* no lease still gets a row for the "no leases" line */
	l = lay(80, 24, 0, false, false, false);
	ck_assert_rect(l.list, 0, 0, 80, 1);
	/* the detail panel sits between list and pane */
	l = lay(80, 24, 3, true, false, false);
	ck_assert_rect(l.detail, 0, 3, 80, 9);
	ck_assert_rect(l.sep_h, 0, 12, 80, 1);
	ck_assert_rect(l.pane, 0, 13, 80, 10);
}
END_TEST

START_TEST(test_layout_wide_list_left)
{
	struct tui_layout l = lay(120, 40, 3, false, false, false), d;

	ck_assert(l.list_left);
	ck_assert_rect(l.list, 0, 0, 36, 39);
	ck_assert_rect(l.sep_v, 36, 0, 1, 39);
	ck_assert_rect(l.pane, 37, 0, 83, 39);
	ck_assert_rect(l.status, 0, 39, 120, 1);
	/* toggling the detail panel never resizes the agent */
	d = lay(120, 40, 3, true, false, false);
	ck_assert_rect(d.pane, 37, 0, 83, 39);
	ck_assert_rect(d.list, 0, 0, 36, 27);
	ck_assert_rect(d.detail, 0, 27, 36, 12);
	/* the list width is 3/10, clamped to 30..100 columns (issue 21) */
	l = lay(100, 30, 3, false, false, false);
	ck_assert_int_eq(l.list.w, 30);
	l = lay(250, 60, 3, false, false, false);
	ck_assert_int_eq(l.list.w, 75);
	ck_assert_int_eq(l.pane.w, 174);
	l = lay(400, 60, 3, false, false, false);
	ck_assert_int_eq(l.list.w, 100);
	ck_assert_int_eq(l.pane.w, 299);
	/* just under the threshold the list is on top */
	l = lay(99, 30, 3, false, false, false);
	ck_assert(!l.list_left);
}
END_TEST

START_TEST(test_layout_zoom)
{
	struct tui_layout l = lay(120, 40, 3, true, true, false);

	ck_assert_rect(l.pane, 0, 0, 120, 39);
	ck_assert(tui_layout_rect_empty(&l.list));
	ck_assert(tui_layout_rect_empty(&l.detail));
	ck_assert(tui_layout_rect_empty(&l.sep_v));
	ck_assert_rect(l.status, 0, 39, 120, 1);
}
END_TEST

START_TEST(test_layout_one_column)
{
	/* below 60 columns: the list alone, the pane full width zoomed */
	struct tui_layout l = lay(59, 30, 3, false, false, false);

	ck_assert(l.onecol);
	ck_assert_rect(l.list, 0, 0, 59, 29);
	ck_assert(tui_layout_rect_empty(&l.pane));
	ck_assert(tui_layout_rect_empty(&l.sep_h));
	l = lay(59, 30, 3, true, false, false);
	ck_assert_rect(l.list, 0, 0, 59, 17);
	ck_assert_rect(l.detail, 0, 17, 59, 12);
	l = lay(59, 30, 3, false, true, false);
	ck_assert(!l.onecol);
	ck_assert_rect(l.pane, 0, 0, 59, 29);
	ck_assert(tui_layout_rect_empty(&l.list));
	l = lay(60, 30, 3, false, false, false);
	ck_assert(!l.onecol);
	ck_assert_rect(l.pane, 0, 4, 60, 25);
}
END_TEST

START_TEST(test_layout_tiny)
{
	struct tui_layout l = lay(10, 5, 3, false, false, false);

	ck_assert_rect(l.list, 0, 0, 10, 4);
	ck_assert(tui_layout_rect_empty(&l.pane));
	ck_assert_rect(l.status, 0, 4, 10, 1);
	l = lay(10, 3, 3, true, false, true);
	ck_assert_rect(l.list, 0, 0, 10, 1);
	ck_assert_rect(l.pane, 0, 1, 10, 1);
	ck_assert(tui_layout_rect_empty(&l.help));
	l = lay(10, 2, 3, false, false, false);
	ck_assert_rect(l.pane, 0, 0, 10, 1);
	ck_assert(tui_layout_rect_empty(&l.list));
	l = lay(10, 1, 3, false, false, false);
	ck_assert(tui_layout_rect_empty(&l.pane));
	ck_assert_rect(l.status, 0, 0, 10, 1);
	l = lay(0, 0, 3, true, true, true);
	ck_assert(tui_layout_rect_empty(&l.status));
	ck_assert(tui_layout_rect_empty(&l.pane));
	l = lay(-5, 10, 3, false, false, false);
	ck_assert(tui_layout_rect_empty(&l.status));
}
END_TEST

START_TEST(test_layout_help_centered)
{
	struct tui_layout l = lay(80, 24, 3, false, false, true);

	ck_assert_rect(l.help, 8, 1, 64, 21);
	l = lay(200, 60, 3, false, false, true);
	ck_assert_rect(l.help, 68, 15, 64, 28);
}
END_TEST

/*
 * Every cell of the area belongs to exactly one part; nothing outside.
 * Checked in plain C with one assert at the end: a Check assert per cell
 * costs a pipe write.
 */
static void
check_partition(int w, int h, size_t n, bool detail, bool zoom)
{
	struct tui_layout l = lay(w, h, n, detail, zoom, true);
	const struct tui_rect *parts[] = { &l.list, &l.detail, &l.pane,
		&l.status, &l.sep_v, &l.sep_h };
	const size_t np = sizeof parts / sizeof parts[0];
	unsigned char *owner;
	const char *bad = NULL;
	size_t i, j;
	int x, y;

	owner = calloc((size_t)(w > 0 ? w : 1) * (size_t)(h > 0 ? h : 1), 1);
	ck_assert_ptr_nonnull(owner);
	for (i = 0; i < np && bad == NULL; i++) {
		const struct tui_rect *r = parts[i];

		if (r->w < 0 || r->h < 0)
			bad = "negative size";
		else if (tui_layout_rect_empty(r) && r->w * r->h != 0)
			bad = "half-empty rect";
		else if (tui_layout_rect_empty(r))
			continue;
		else if (r->x < 0 || r->y < 0 || r->x + r->w > w ||
		    r->y + r->h > h)
			bad = "rect outside the area";
		else
			for (y = r->y; y < r->y + r->h; y++)
				for (x = r->x; x < r->x + r->w; x++)
					owner[(size_t)y * (size_t)w +
					    (size_t)x]++;
	}
	for (y = 0; y < h && bad == NULL; y++)
		for (x = 0; x < w && bad == NULL; x++)
			if (owner[(size_t)y * (size_t)w + (size_t)x] != 1)
				bad = "a cell owned by none or by two parts";
	for (i = 0; i < np && bad == NULL; i++)
		for (j = i + 1; j < np; j++)
			if (tui_layout_rect_overlap(parts[i], parts[j]))
				bad = "overlapping parts";
	/* the pane exists whenever there is a body, but in one column */
	if (bad == NULL && w > 0 && h > 1 && tui_layout_rect_empty(&l.pane) &&
	    !l.onecol)
		bad = "no pane";
	/* ... where the list does, unzoomed, below 60 columns only */
	if (bad == NULL && l.onecol && (w >= TUI_LAYOUT_ONECOL || zoom ||
	    tui_layout_rect_empty(&l.list)))
		bad = "one column where it should not be";
	/* the help overlay, when there, is inside the body */
	if (bad == NULL && !tui_layout_rect_empty(&l.help) && (l.help.x < 0 ||
	    l.help.y < 0 || l.help.x + l.help.w > w ||
	    l.help.y + l.help.h > h - 1))
		bad = "help outside the body";
	free(owner);
	if (bad != NULL)
		ck_abort_msg("%dx%d n=%zu detail=%d zoom=%d: %s", w, h, n,
		    detail, zoom, bad);
}

START_TEST(test_layout_partition_many_sizes)
{
	static const int sizes[][2] = { { 80, 24 }, { 120, 40 }, { 100, 30 },
		{ 99, 30 }, { 250, 70 }, { 10, 5 }, { 1, 1 }, { 1, 2 },
		{ 2, 3 }, { 3, 3 }, { 40, 4 }, { 300, 2 }, { 100, 2 },
		{ 100, 3 }, { 132, 43 }, { 20, 100 } };
	static const size_t counts[] = { 0, 1, 3, 7, 500 };
	size_t s, c;
	int f;

	for (s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
		for (c = 0; c < sizeof counts / sizeof counts[0]; c++)
			for (f = 0; f < 4; f++)
				check_partition(sizes[s][0], sizes[s][1],
				    counts[c], f & 1, f & 2);
}
END_TEST

START_TEST(test_layout_partition_sweep)
{
	int w, h;

	for (w = 1; w <= 130; w += 3)
		for (h = 1; h <= 50; h++)
			check_partition(w, h, (size_t)(w + h) % 9,
			    (w + h) % 2, false);
}
END_TEST

START_TEST(test_layout_rect_helpers)
{
	struct tui_rect a = { 0, 0, 4, 4 }, b = { 3, 3, 2, 2 },
			c = { 4, 0, 2, 2 }, e = { 1, 1, 0, 5 };

	ck_assert(tui_layout_rect_overlap(&a, &b));
	ck_assert(!tui_layout_rect_overlap(&a, &c));
	ck_assert(!tui_layout_rect_overlap(&a, &e));
	ck_assert(tui_layout_rect_contains(&a, 3, 3));
	ck_assert(!tui_layout_rect_contains(&a, 4, 0));
	ck_assert(!tui_layout_rect_contains(&e, 1, 1));
}
END_TEST

/*
 * The agent gets only a size the pane keeps (issue 22): while a window is
 * dragged or zoom toggled back and forth, no size is settled until one
 * has lasted TUI_LAYOUT_SETTLE_MS; then it is, at once.
 */
START_TEST(test_layout_settle)
{
	struct tui_settle st = { 0 };
	struct tui_rect a = { 40, 0, 69, 29 }, b = { 0, 0, 100, 29 },
			c = { 0, 0, 90, 25 };
	uint64_t wait = 99;

	ck_assert(!tui_layout_settle(&st, &a, 1000, &wait));
	ck_assert_uint_eq(wait, TUI_LAYOUT_SETTLE_MS);
	ck_assert(!tui_layout_settle(&st, &b, 1050, &wait));	/* zoomed */
	ck_assert(!tui_layout_settle(&st, &a, 1100, &wait));	/* back */
	ck_assert(!tui_layout_settle(&st, &c, 1150, &wait));	/* dragged */
	ck_assert_uint_eq(wait, TUI_LAYOUT_SETTLE_MS);
	ck_assert(!tui_layout_settle(&st, &c, 1150 + TUI_LAYOUT_SETTLE_MS - 1,
	    &wait));
	ck_assert_uint_eq(wait, 1);
	ck_assert(tui_layout_settle(&st, &c, 1150 + TUI_LAYOUT_SETTLE_MS,
	    &wait));
	ck_assert_uint_eq(wait, 0);
	/* The position alone moving (the list's width) is the same size. */
	c.x = 5;
	ck_assert(tui_layout_settle(&st, &c, 1150 + TUI_LAYOUT_SETTLE_MS + 1,
	    &wait));
}
END_TEST

Suite *
layout_suite(void)
{
	Suite *s = suite_create("layout");
	TCase *tc = tcase_create("Core");

	tcase_add_test(tc, test_layout_80x24_list_on_top);
	tcase_add_test(tc, test_layout_wide_list_left);
	tcase_add_test(tc, test_layout_zoom);
	tcase_add_test(tc, test_layout_help_centered);
	tcase_add_test(tc, test_layout_rect_helpers);
	tcase_add_test(tc, test_layout_settle);
	suite_add_tcase(s, tc);
	tc = tcase_create("Limits");
	tcase_add_test(tc, test_layout_one_column);
	tcase_add_test(tc, test_layout_tiny);
	tcase_add_test(tc, test_layout_partition_many_sizes);
	tcase_add_test(tc, test_layout_partition_sweep);
	suite_add_tcase(s, tc);
	return s;
}
