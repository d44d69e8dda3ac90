/*
 * test_redraw.c: the redraw throttle with synthetic time (STYLE E,
 * issue 3): at most ~60 output frames a second, keystroke frames and
 * their echo at once, dirty rows merged.
 */
#include <check.h>

#include "tui/console/console.h"

Suite *redraw_suite(void);

/* A frame marked and drawn at now: what changed, and whether a key did. */
static void
frame(struct tui_redraw *r, uint64_t now, unsigned what, bool key)
{
	struct tui_redraw_set set;

	tui_redraw_mark(r, now, what, key);
	tui_redraw_take(r, now, &set);
}

START_TEST(test_redraw_idle_and_first)
{
	struct tui_redraw r;
	struct tui_redraw_set set;
	unsigned wait = 99;

	tui_redraw_init(&r, 0);
	ck_assert_uint_eq(r.interval_ms, TUI_REDRAW_INTERVAL_MS);
	ck_assert_int_eq(tui_redraw_due(&r, 1000, &wait), TUI_REDRAW_IDLE);
	ck_assert_uint_eq(wait, 0);
	/* the very first frame is not delayed */
	tui_redraw_mark(&r, 1000, TUI_DIRTY_ALL, false);
	ck_assert_int_eq(tui_redraw_due(&r, 1000, &wait), TUI_REDRAW_NOW);
	tui_redraw_take(&r, 1000, &set);
	ck_assert_uint_eq(set.what, TUI_DIRTY_ALL);
	ck_assert_int_eq(tui_redraw_due(&r, 1001, &wait), TUI_REDRAW_IDLE);
}
END_TEST

START_TEST(test_redraw_output_is_throttled)
{
	struct tui_redraw r;
	struct tui_redraw_set set;
	unsigned wait = 0;

	tui_redraw_init(&r, 16);
	frame(&r, 100, TUI_DIRTY_LIST, false);
	tui_redraw_mark_rows(&r, 104, 2, 2);
	ck_assert_int_eq(tui_redraw_due(&r, 104, &wait), TUI_REDRAW_ARM);
	ck_assert_uint_eq(wait, 12);
	ck_assert(r.pending);
	/* more output while the timer is armed: nothing new to arm */
	tui_redraw_mark_rows(&r, 109, 7, 9);
	ck_assert_int_eq(tui_redraw_due(&r, 109, &wait), TUI_REDRAW_PENDING);
	/* the timer fires at 116 */
	tui_redraw_fired(&r);
	ck_assert(!r.pending);
	ck_assert_int_eq(tui_redraw_due(&r, 116, &wait), TUI_REDRAW_NOW);
	tui_redraw_take(&r, 116, &set);
	ck_assert_uint_eq(set.what, TUI_DIRTY_PANE);
	ck_assert_int_eq(set.pane_first, 2);
	ck_assert_int_eq(set.pane_last, 9);
	ck_assert_int_eq(tui_redraw_due(&r, 117, &wait), TUI_REDRAW_IDLE);
}
END_TEST

START_TEST(test_redraw_key_is_immediate)
{
	struct tui_redraw r;
	struct tui_redraw_set set;
	unsigned wait;

	tui_redraw_init(&r, 16);
	frame(&r, 0, TUI_DIRTY_ALL, false);
	/* 1 ms after a frame, a keystroke frame is still drawn now */
	tui_redraw_mark(&r, 1, TUI_DIRTY_LIST | TUI_DIRTY_STATUS, true);
	ck_assert_int_eq(tui_redraw_due(&r, 1, &wait), TUI_REDRAW_NOW);
	tui_redraw_take(&r, 1, &set);
	ck_assert_uint_eq(set.what, TUI_DIRTY_LIST | TUI_DIRTY_STATUS);
	/* its echo, 3 ms later, too */
	tui_redraw_mark_rows(&r, 4, 5, 5);
	ck_assert_int_eq(tui_redraw_due(&r, 4, &wait), TUI_REDRAW_NOW);
	tui_redraw_take(&r, 4, &set);
	ck_assert_int_eq(set.pane_first, 5);
	/* but the output after the echo is throttled again */
	tui_redraw_mark_rows(&r, 6, 6, 6);
	ck_assert_int_eq(tui_redraw_due(&r, 6, &wait), TUI_REDRAW_ARM);
	ck_assert_uint_eq(wait, 14);
}
END_TEST

START_TEST(test_redraw_echo_alone)
{
	struct tui_redraw r;
	struct tui_redraw_set set;
	unsigned wait;

	tui_redraw_init(&r, 16);
	frame(&r, 0, TUI_DIRTY_ALL, false);
	frame(&r, 1, 0, true);	/* a key typed into the agent */
	/* a busy list changed, then the echo came: the echo alone, now */
	tui_redraw_mark(&r, 2, TUI_DIRTY_LIST, false);
	tui_redraw_mark_rows(&r, 3, 7, 7);
	ck_assert_int_eq(tui_redraw_due(&r, 3, &wait), TUI_REDRAW_NOW);
	tui_redraw_take(&r, 3, &set);
	ck_assert_uint_eq(set.what, TUI_DIRTY_PANE);
	ck_assert_int_eq(set.pane_first, 7);
	ck_assert_int_eq(set.pane_last, 7);
	/* the list waits for the interval after the key's frame (at 1) */
	ck_assert_int_eq(tui_redraw_due(&r, 3, &wait), TUI_REDRAW_ARM);
	ck_assert_uint_eq(wait, 14);
	tui_redraw_fired(&r);
	ck_assert_int_eq(tui_redraw_due(&r, 17, &wait), TUI_REDRAW_NOW);
	tui_redraw_take(&r, 17, &set);
	ck_assert_uint_eq(set.what, TUI_DIRTY_LIST);
}
END_TEST

START_TEST(test_redraw_echo_window_expires)
{
	struct tui_redraw r;
	struct tui_redraw_set set;
	unsigned wait;

	tui_redraw_init(&r, 16);
	frame(&r, 0, TUI_DIRTY_STATUS, true);
	/* status-only frames do not consume the echo window */
	frame(&r, 50, TUI_DIRTY_STATUS, false);
	tui_redraw_mark_rows(&r, 55, 0, 0);
	ck_assert_int_eq(tui_redraw_due(&r, 55, &wait), TUI_REDRAW_NOW);
	tui_redraw_take(&r, 55, &set);
	/* long after a key, output waits for the interval */
	frame(&r, 500, TUI_DIRTY_STATUS, true);
	frame(&r, 700, TUI_DIRTY_STATUS, false);
	tui_redraw_mark_rows(&r, 500 + TUI_REDRAW_ECHO_MS + 110, 1, 1);
	ck_assert_int_eq(tui_redraw_due(&r, 710, &wait), TUI_REDRAW_ARM);
	ck_assert_uint_eq(wait, 6);
}
END_TEST

START_TEST(test_redraw_at_most_60fps)
{
	/* output every millisecond for a second: frames >= 16 ms apart */
	struct tui_redraw r;
	struct tui_redraw_set set;
	uint64_t now, timer_at = 0, last = 0;
	unsigned frames = 0, wait, gaps_bad = 0;
	bool armed = false, first = true;

	tui_redraw_init(&r, 16);
	for (now = 1; now <= 1000; now++) {
		if (armed && now >= timer_at) {
			armed = false;
			tui_redraw_fired(&r);
		}
		tui_redraw_mark_rows(&r, now, (int)(now % 24), (int)(now % 24));
		switch (tui_redraw_due(&r, now, &wait)) {
		case TUI_REDRAW_NOW:
			if (!first && now - last < 16)
				gaps_bad++;
			first = false;
			last = now;
			tui_redraw_take(&r, now, &set);
			frames++;
			break;
		case TUI_REDRAW_ARM:
			ck_assert(!armed);
			ck_assert_uint_gt(wait, 0);
			armed = true;
			timer_at = now + wait;
			break;
		case TUI_REDRAW_PENDING:
			ck_assert(armed);
			break;
		case TUI_REDRAW_IDLE:
			ck_abort_msg("dirty but idle at %lu",
			    (unsigned long)now);
			break;
		}
	}
	ck_assert_uint_eq(gaps_bad, 0);
	ck_assert_uint_le(frames, 1000 / 16 + 1);
	/* and it keeps drawing: no starvation */
	ck_assert_uint_ge(frames, 55);
}
END_TEST

START_TEST(test_redraw_rows_merge_and_clock)
{
	struct tui_redraw r;
	struct tui_redraw_set set;
	unsigned wait;

	tui_redraw_init(&r, 16);
	tui_redraw_mark_rows(&r, 0, 10, 12);
	tui_redraw_mark_rows(&r, 0, 3, 5);
	tui_redraw_mark_rows(&r, 0, -4, 1);
	tui_redraw_mark_rows(&r, 0, 9, 2);	/* empty: ignored */
	tui_redraw_take(&r, 1000, &set);
	ck_assert_uint_eq(set.what, TUI_DIRTY_PANE);
	ck_assert_int_eq(set.pane_first, 0);
	ck_assert_int_eq(set.pane_last, 12);
	/* no pane rows: the range reads as none */
	tui_redraw_mark(&r, 1000, TUI_DIRTY_LIST, false);
	tui_redraw_take(&r, 1100, &set);
	ck_assert_int_eq(set.pane_first, -1);
	/* a clock that went backwards does not stall drawing */
	tui_redraw_mark_rows(&r, 50, 1, 1);
	ck_assert_int_eq(tui_redraw_due(&r, 50, &wait), TUI_REDRAW_NOW);
}
END_TEST

Suite *
redraw_suite(void)
{
	Suite *s = suite_create("redraw");
	TCase *tc = tcase_create("Core");

	tcase_add_test(tc, test_redraw_idle_and_first);
	tcase_add_test(tc, test_redraw_output_is_throttled);
	tcase_add_test(tc, test_redraw_key_is_immediate);
	tcase_add_test(tc, test_redraw_echo_window_expires);
	tcase_add_test(tc, test_redraw_echo_alone);
	tcase_add_test(tc, test_redraw_at_most_60fps);
	tcase_add_test(tc, test_redraw_rows_merge_and_clock);
	suite_add_tcase(s, tc);
	return s;
}
