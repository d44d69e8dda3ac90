/*
 * test_timeline.c: the morning look (issue 9, tui/console/timeline.c): journal
 * events become per-lease state changes, bucketed into a bar (the longest
 * state wins, a blocked moment always shows, nothing before the first
 * event or after the end), and the time spent blocked. Its drawing is
 * tested in test_draw.c.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/console/console.h"

Suite *timeline_suite(void);

#define MIN (60 * 1000LL)

static int
add(struct tui_timeline *tl, const char *json)
{
	return tui_timeline_add_json(tl, json, strlen(json));
}

START_TEST(test_timeline_bucketing)
{
	struct tui_timeline tl;
	const struct tui_tl_lease *l;
	uint8_t c[10];

	tui_timeline_init(&tl);
	/* working 0..30 min, blocked 30..40, working 40..60, done at 60 */
	ck_assert_int_eq(tui_timeline_add(&tl, "A", 0 * MIN,
	    TUI_ACTIVITY_WORKING), 0);
	ck_assert_int_eq(tui_timeline_add(&tl, "A", 40 * MIN,
	    TUI_ACTIVITY_WORKING), 0);
	ck_assert_int_eq(tui_timeline_add(&tl, "A", 30 * MIN,
	    TUI_ACTIVITY_BLOCKED), 0);	/* out of order: sorted in */
	ck_assert_int_eq(tui_timeline_add(&tl, "A", 60 * MIN,
	    TUI_ACTIVITY_DONE), 0);
	tui_timeline_end(&tl, "A", 80 * MIN);
	l = tui_timeline_find(&tl, "A");
	ck_assert_ptr_nonnull(l);
	ck_assert_uint_eq(l->n, 4);
	/* 10 columns of 10 minutes over [-20, 80) min */
	tui_timeline_bucket(l, -20 * MIN, 80 * MIN, c, 10);
	ck_assert_int_eq(c[0], TUI_ACTIVITY_UNKNOWN);	/* before it */
	ck_assert_int_eq(c[1], TUI_ACTIVITY_UNKNOWN);
	ck_assert_int_eq(c[2], TUI_ACTIVITY_WORKING);
	ck_assert_int_eq(c[4], TUI_ACTIVITY_WORKING);
	ck_assert_int_eq(c[5], TUI_ACTIVITY_BLOCKED);
	ck_assert_int_eq(c[6], TUI_ACTIVITY_WORKING);
	ck_assert_int_eq(c[8], TUI_ACTIVITY_DONE);
	ck_assert_int_eq(c[9], TUI_ACTIVITY_DONE);
	ck_assert_int_eq(tui_timeline_blocked_ms(l, 200 * MIN), 10 * MIN);
	ck_assert_int_eq(tui_timeline_state_ms(l, TUI_ACTIVITY_WORKING,
	    200 * MIN), 50 * MIN);
	/* done until the end (80), not until now */
	ck_assert_int_eq(tui_timeline_state_ms(l, TUI_ACTIVITY_DONE,
	    200 * MIN), 20 * MIN);
	/* after the end: nothing */
	tui_timeline_bucket(l, 0, 100 * MIN, c, 10);
	ck_assert_int_eq(c[9], TUI_ACTIVITY_UNKNOWN);
	tui_timeline_free(&tl);
}
END_TEST

START_TEST(test_timeline_failure_after_end_shows)
{
	struct tui_timeline tl;
	const struct tui_tl_lease *l;
	uint8_t c[4];

	tui_timeline_init(&tl);
	/* the lease fails at 30 min, its activity "failed" a moment later */
	tui_timeline_add(&tl, "F", 0, TUI_ACTIVITY_WORKING);
	tui_timeline_add(&tl, "F", 30 * MIN + 20, TUI_ACTIVITY_FAILED);
	tui_timeline_end(&tl, "F", 30 * MIN);
	l = tui_timeline_find(&tl, "F");
	tui_timeline_bucket(l, 0, 40 * MIN, c, 4);
	ck_assert_int_eq(c[0], TUI_ACTIVITY_WORKING);
	ck_assert_int_eq(c[2], TUI_ACTIVITY_WORKING);
	ck_assert_int_eq(c[3], TUI_ACTIVITY_FAILED);	/* F, not "." */
	tui_timeline_free(&tl);
}
END_TEST

START_TEST(test_timeline_short_blocked_shows)
{
	struct tui_timeline tl;
	const struct tui_tl_lease *l;
	uint8_t c[4];

	tui_timeline_init(&tl);
	/* one second blocked in an hour of work: still visible */
	tui_timeline_add(&tl, "B", 0, TUI_ACTIVITY_WORKING);
	tui_timeline_add(&tl, "B", 20 * MIN, TUI_ACTIVITY_BLOCKED);
	tui_timeline_add(&tl, "B", 20 * MIN + 1000, TUI_ACTIVITY_WORKING);
	l = tui_timeline_find(&tl, "B");
	tui_timeline_bucket(l, 0, 60 * MIN, c, 4);
	ck_assert_int_eq(c[0], TUI_ACTIVITY_WORKING);
	ck_assert_int_eq(c[1], TUI_ACTIVITY_BLOCKED);
	ck_assert_int_eq(c[2], TUI_ACTIVITY_WORKING);
	/* a live lease's last state runs to now */
	ck_assert_int_eq(c[3], TUI_ACTIVITY_WORKING);
	ck_assert_int_eq(tui_timeline_blocked_ms(l, 60 * MIN), 1000);
	tui_timeline_free(&tl);
}
END_TEST

START_TEST(test_timeline_json)
{
	struct tui_timeline tl;
	const struct tui_tl_lease *l;

	tui_timeline_init(&tl);
	ck_assert_int_eq(add(&tl, "{\"cursor\":1,\"id\":\"L\",\"seq\":1,"
	    "\"at\":1000,\"kind\":\"activity\",\"from\":null,\"to\":"
	    "\"starting\"}"), 0);
	ck_assert_int_eq(add(&tl, "{\"id\":\"L\",\"at\":2000,\"kind\":"
	    "\"activity\",\"to\":\"blocked\"}"), 0);
	ck_assert_int_eq(add(&tl, "{\"id\":\"L\",\"at\":5000,\"kind\":"
	    "\"activity\",\"to\":\"done\"}"), 0);
	ck_assert_int_eq(add(&tl, "{\"id\":\"L\",\"at\":6000,\"kind\":"
	    "\"lease\",\"to\":\"result_ready\"}"), 0);
	ck_assert_int_eq(add(&tl, "{\"id\":\"L\",\"at\":9000,\"kind\":"
	    "\"lease\",\"to\":\"applied\"}"), 0);
	/* not rows: ignored */
	ck_assert_int_eq(add(&tl, "garbage"), 0);
	ck_assert_int_eq(add(&tl, "{\"id\":\"L\",\"kind\":\"activity\"}"), 0);
	ck_assert_int_eq(add(&tl, "{\"id\":\"M\",\"at\":1,\"kind\":"
	    "\"activity\",\"to\":\"sleepy\"}"), 0);
	ck_assert_int_eq(add(&tl, "{\"id\":\"L\",\"at\":7000,\"kind\":"
	    "\"cleanup\",\"to\":\"confirmed\"}"), 0);
	ck_assert_uint_eq(tl.n, 1);
	l = tui_timeline_find(&tl, "L");
	ck_assert_uint_eq(l->n, 3);
	ck_assert(l->ended);
	ck_assert_int_eq(l->end_ms, 9000);
	ck_assert_int_eq(tl.oldest_ms, 1000);
	ck_assert_int_eq(tui_timeline_blocked_ms(l, 100000), 3000);
	tui_timeline_free(&tl);
}
END_TEST

START_TEST(test_timeline_caps)
{
	struct tui_timeline tl;
	char id[16];
	int rc = 0;

	tui_timeline_init(&tl);
	for (int i = 0; i <= TUI_TIMELINE_MAX_LEASES && rc == 0; i++) {
		snprintf(id, sizeof id, "L%d", i);
		rc = tui_timeline_add(&tl, id, 1, TUI_ACTIVITY_WORKING);
	}
	ck_assert_int_eq(rc, -E2BIG);
	ck_assert_uint_eq(tl.n, TUI_TIMELINE_MAX_LEASES);
	rc = 0;
	for (int i = 0; i <= TUI_TIMELINE_MAX_SPANS && rc == 0; i++)
		rc = tui_timeline_add(&tl, "L0", 2 + i, TUI_ACTIVITY_PROMPT);
	ck_assert_int_eq(rc, -E2BIG);
	ck_assert_uint_eq(tui_timeline_find(&tl, "L0")->n,
	    TUI_TIMELINE_MAX_SPANS);
	tui_timeline_free(&tl);
}
END_TEST

START_TEST(test_timeline_duration)
{
	char b[16];

	tui_draw_view_duration(0, b, sizeof b);
	ck_assert_str_eq(b, "0s");
	tui_draw_view_duration(61000, b, sizeof b);
	ck_assert_str_eq(b, "1m01s");
	tui_draw_view_duration(3 * 3600000LL + 120000, b, sizeof b);
	ck_assert_str_eq(b, "3h02m");
	tui_draw_view_duration(-5, b, sizeof b);
	ck_assert_str_eq(b, "0s");
}
END_TEST

Suite *
timeline_suite(void)
{
	Suite *s = suite_create("timeline");
	TCase *tc = tcase_create("Core");

	tcase_add_test(tc, test_timeline_bucketing);
	tcase_add_test(tc, test_timeline_short_blocked_shows);
	tcase_add_test(tc, test_timeline_failure_after_end_shows);
	tcase_add_test(tc, test_timeline_json);
	tcase_add_test(tc, test_timeline_caps);
	tcase_add_test(tc, test_timeline_duration);
	suite_add_tcase(s, tc);
	return s;
}
