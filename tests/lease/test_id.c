/*
 * test_id.c: lease IDs (SPEC 2): format, time order, validation of every
 * malformed shape a caller could pass (paths, patterns, wrong case).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lease/lease.h"

START_TEST(test_id_format_known)
{
	char id[LEASE_ID_LEN + 1];

	/* 2026-11-29T08:45:12.123Z */
	ck_assert_int_eq(lease_id_format(id, 1795941912123LL, 0xa3f9), 0);
	ck_assert_str_eq(id, "20261129-084512-123-a3f9");
	ck_assert(lease_id_valid(id));
	ck_assert_int_eq(lease_id_format(id, 0, 0), 0);
	ck_assert_str_eq(id, "19700101-000000-000-0000");
	ck_assert_int_eq(lease_id_format(id, -1, 0), -EINVAL);
	ck_assert_int_eq(lease_id_format(id, 253402300800000LL, 0), -EINVAL);
}
END_TEST

START_TEST(test_id_new_valid_and_sorted)
{
	char a[LEASE_ID_LEN + 1], b[LEASE_ID_LEN + 1];
	int i, distinct = 0;

	ck_assert_int_eq(lease_id_new(a), 0);
	ck_assert_uint_eq(strlen(a), LEASE_ID_LEN);
	ck_assert(lease_id_valid(a));
	for (i = 0; i < 200; i++) {
		ck_assert_int_eq(lease_id_new(b), 0);
		ck_assert(lease_id_valid(b));
		/* time part never goes backwards */
		ck_assert_int_le(memcmp(a, b, 19), 0);
		if (strcmp(a, b) != 0)
			distinct++;
		memcpy(a, b, sizeof a);
	}
	ck_assert_int_gt(distinct, 150);
}
END_TEST

START_TEST(test_id_sorts_by_time)
{
	char a[LEASE_ID_LEN + 1], b[LEASE_ID_LEN + 1];

	ck_assert_int_eq(lease_id_format(a, 1795941912999LL, 0xffff), 0);
	ck_assert_int_eq(lease_id_format(b, 1795941913000LL, 0x0000), 0);
	ck_assert_int_lt(strcmp(a, b), 0);
	ck_assert_int_eq(lease_id_format(b, 1795941912999LL + 86400000LL, 0),
	    0);
	ck_assert_int_lt(strcmp(a, b), 0);
}
END_TEST

static const char *const bad_ids[] = {
	"",
	"20261129-084512-123-a3f",
	"20261129-084512-123-a3f99",
	"20261129-084512-123-A3F9",	/* upper case */
	"20261129-084512-123-a3g9",
	"20261129_084512-123-a3f9",
	"20261129-084512_123-a3f9",
	"20261129-084512-123_a3f9",
	"20261329-084512-123-a3f9",	/* month 13 */
	"20261100-084512-123-a3f9",	/* day 0 */
	"20260230-084512-123-a3f9",	/* Feb 30 */
	"20250229-084512-123-a3f9",	/* not a leap year */
	"20261129-244512-123-a3f9",	/* hour 24 */
	"20261129-086012-123-a3f9",	/* minute 60 */
	"20261129-084560-123-a3f9",	/* second 60 */
	"19691231-235959-999-ffff",	/* before the epoch */
	"2026112a-084512-123-a3f9",
	"../../../../etc/passwd-a3f9",
	"20261129-084512-123-*",
	"20261129-084512-12?-a3f9",
	"20261129/084512-123-a3f9",
	"20261129-084512-123-a3f9/",
	" 20261129-084512-123-a3f9",
	"20261129-084512-123-a3f9\n",
	"corral/20261129-084512-123-a3f9",
	"+2026112-084512-123-a3f9",
};

START_TEST(test_id_rejects_malformed)
{
	ck_assert_msg(!lease_id_valid(bad_ids[_i]), "accepted '%s'",
	    bad_ids[_i]);
}
END_TEST

START_TEST(test_id_valid_edges)
{
	char br[LEASE_BRANCH_LEN + 1];

	ck_assert(!lease_id_valid(NULL));
	ck_assert(lease_id_valid("20240229-235959-999-ffff"));
	ck_assert(lease_id_valid("99991231-235959-999-0000"));
	ck_assert_int_eq(lease_id_branch(br, "20240229-235959-999-ffff"), 0);
	ck_assert_str_eq(br, "corral/20240229-235959-999-ffff");
	ck_assert_int_eq(lease_id_branch(br, "../x"), LEASE_EBADID);
}
END_TEST

/* A check run's ID, "<lease ID>.<ms>.<n>", as tui_checks_run names it. */
static const char *const bad_runs[] = {
	"20261129-084512-123-a3f9",
	"20261129-084512-123-a3f9.",
	"20261129-084512-123-a3f9.1764633600000",
	"20261129-084512-123-a3f9.1764633600000.",
	"20261129-084512-123-a3f9..2",
	"20261129-084512-123-a3f9.1764633600000.2.3",
	"20261129-084512-123-a3f9.1764633600000.2/..",
	"20261129-084512-123-a3f9.17646336x0000.2",
	"20261129-084512-123-a3f9.1764633600000.*",
	"20261329-084512-123-a3f9.1764633600000.2",
	"20261129-084512-123-a3f9.12345678901234567890.2",
	"20261129-084512-123-a3f9.1.12345678901",
	"20261129-084512-123-a3f9-1764633600000.2",
};

START_TEST(test_id_run_rejects_malformed)
{
	char lease[LEASE_ID_LEN + 1] = "unchanged";

	ck_assert_msg(!lease_id_run_valid(bad_runs[_i], lease),
	    "accepted '%s'", bad_runs[_i]);
	ck_assert_str_eq(lease, "unchanged");
}
END_TEST

START_TEST(test_id_run_valid)
{
	char lease[LEASE_ID_LEN + 1];

	ck_assert(!lease_id_run_valid(NULL, NULL));
	ck_assert(lease_id_run_valid("20261129-084512-123-a3f9.1764633600000.2",
	    lease));
	ck_assert_str_eq(lease, "20261129-084512-123-a3f9");
	ck_assert(lease_id_run_valid("20261129-084512-123-a3f9.0.4294967295",
	    NULL));
	/* a run's ID is not a lease ID, and the reverse */
	ck_assert(!lease_id_valid("20261129-084512-123-a3f9.0.1"));
}
END_TEST

START_TEST(test_id_strerror_named)
{
	ck_assert_str_eq(lease_strerror(LEASE_EBADID), "malformed lease ID");
	ck_assert_str_eq(lease_strerror(LEASE_ENOTREMOVABLE),
	    "orphan not yet seen by two inventories");
	ck_assert_str_eq(lease_strerror(-ENOENT), strerror(ENOENT));
	ck_assert_str_eq(lease_strerror(LEASE_EBASE + 999),
	    "unknown lease error");
}
END_TEST

Suite *id_suite(void);

Suite *
id_suite(void)
{
	Suite *s = suite_create("id");
	TCase *tc = tcase_create("Core");

	tcase_add_test(tc, test_id_format_known);
	tcase_add_test(tc, test_id_new_valid_and_sorted);
	tcase_add_test(tc, test_id_sorts_by_time);
	tcase_add_loop_test(tc, test_id_rejects_malformed, 0,
	    (int)(sizeof bad_ids / sizeof bad_ids[0]));
	tcase_add_test(tc, test_id_valid_edges);
	tcase_add_loop_test(tc, test_id_run_rejects_malformed, 0,
	    (int)(sizeof bad_runs / sizeof bad_runs[0]));
	tcase_add_test(tc, test_id_run_valid);
	tcase_add_test(tc, test_id_strerror_named);
	suite_add_tcase(s, tc);
	return s;
}
