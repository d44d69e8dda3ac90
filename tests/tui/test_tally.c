/*
 * test_tally.c: a lease's budget of journal lines its agent can cause
 * (tui/runtime/tally.c, issue 15): the first lines of each kind pass, the
 * rest are counted, kinds past the table count as "other", the summary
 * names only kinds with lines left out; a rated tally lets a burst
 * through, then so many a second, whatever the kind.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "tui/runtime/runtime.h"

Suite *tally_suite(void);

START_TEST(test_tally_caps_each_kind)
{
	struct tui_tally t;
	json_t *o = json_object();
	int passed = 0, i;

	tui_tally_init(&t, 64);
	for (i = 0; i < 100000; i++)
		passed += tui_tally_admit(&t, "input");
	ck_assert_int_eq(passed, 64);
	/* Another kind has its own budget. */
	ck_assert(tui_tally_admit(&t, "transcript"));
	ck_assert_uint_eq(tui_tally_total_unrecorded(&t), 100000 - 64);
	ck_assert_int_eq(tui_tally_add_json(&t, o), 0);
	ck_assert_uint_eq(json_object_size(o), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "input")),
	    100000 - 64);
	json_decref(o);
}
END_TEST

START_TEST(test_tally_kinds_past_the_table)
{
	struct tui_tally t;
	char kind[40];
	json_t *o = json_object();
	int i;

	tui_tally_init(&t, 1);
	for (i = 0; i < TUI_TALLY_KINDS; i++) {
		snprintf(kind, sizeof kind, "k%d", i);
		ck_assert(tui_tally_admit(&t, kind));
	}
	/* A new kind past the table, or too long a name: never written. */
	ck_assert(!tui_tally_admit(&t, "one-too-many"));
	memset(kind, 'x', sizeof kind - 1);
	kind[sizeof kind - 1] = '\0';
	ck_assert(!tui_tally_admit(&t, kind));
	ck_assert(!tui_tally_admit(&t, "k0"));
	ck_assert_uint_eq(tui_tally_total_unrecorded(&t), 3);
	ck_assert_int_eq(tui_tally_add_json(&t, o), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "other")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "k0")), 1);
	ck_assert_uint_eq(json_object_size(o), 2);
	json_decref(o);
}
END_TEST

START_TEST(test_tally_rate)
{
	struct tui_tally t;
	unsigned long long now = 1000000;
	int passed = 0, i;

	tui_tally_init(&t, 4096);
	tui_tally_set_rate(&t, 100, 10);
	/* A flood within one millisecond: the burst only. */
	for (i = 0; i < 5000; i++)
		passed += tui_tally_admit_at(&t, i % 2 ? "a" : "b", now);
	ck_assert_int_eq(passed, 100);
	/* Ten seconds of a flood at one line a millisecond: ~10 a second. */
	passed = 0;
	for (i = 0; i < 10000; i++)
		passed += tui_tally_admit_at(&t, "a", ++now);
	ck_assert_int_ge(passed, 99);
	ck_assert_int_le(passed, 101);
	ck_assert_uint_eq(tui_tally_total_unrecorded(&t),
	    15000 - 100 - (unsigned)passed);
	/* A quiet minute refills the burst, never more. */
	now += 60000;
	passed = 0;
	for (i = 0; i < 500; i++)
		passed += tui_tally_admit_at(&t, "c", now);
	ck_assert_int_eq(passed, 100);
	/* A clock that steps back takes nothing and grants nothing. */
	ck_assert(!tui_tally_admit_at(&t, "c", now - 5000));
}
END_TEST

Suite *
tally_suite(void)
{
	Suite *s = suite_create("tally");
	TCase *tc = tcase_create("Core");

	tcase_add_test(tc, test_tally_caps_each_kind);
	tcase_add_test(tc, test_tally_kinds_past_the_table);
	tcase_add_test(tc, test_tally_rate);
	suite_add_tcase(s, tc);
	return s;
}
