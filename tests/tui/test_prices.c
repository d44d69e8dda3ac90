/*
 * test_prices.c: the model gateway's price table (SPEC 8.5; issue 19):
 * the shipped models/prices parses and is dated, the longest prefix of a
 * model's name prices it, costs are exact in nano-USD, an unknown model
 * has no cost, and amounts read and print as USD.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"
#include "support/check_util.h"
#include "tui/runtime/runtime.h"
#include "tui/runtime/runtime_int.h"

Suite *prices_suite(void);

static struct tui_prices p;

START_TEST(test_prices_shipped)
{
	char path[4096], why[512], *text = NULL;
	size_t len = 0;

	snprintf(path, sizeof path, "%s/models/prices", getenv("CORRAL_SRC"));
	ck_assert_int_eq(tui_sandbox_read_file(path, 1 << 20, &text, &len), 0);
	ck_assert_int_eq(tui_prices_parse(text, len, &p, why, sizeof why), 0);
	free(text);
	ck_assert_uint_ge(p.n, 10);
	ck_assert_str_eq(p.date, "2025-10-01");
}
END_TEST

START_TEST(test_prices_cost)
{
	static const char table[] = "# comment\ndate = 2026-01-01\n"
	    "claude-      1.00  2.00  0     0\n"
	    "claude-sonnet-4-5  3.00  15.00  3.75  0.30\n";
	struct sbx_gateway_usage u = { .input = 10, .output = 5,
		.cache_write = 100, .cache_read = 1000 };
	char why[256], usd[32];
	uint64_t nano;

	ck_assert_int_eq(tui_prices_parse(table, strlen(table), &p, why,
	    sizeof why), 0);
	ck_assert_uint_eq(p.n, 2);
	/* the longest prefix: 10*3 + 5*15 + 100*3.75 + 1000*0.30 micro-USD */
	ck_assert_int_eq(tui_prices_cost(&p, "claude-sonnet-4-5-20250929", &u,
	    &nano), 0);
	ck_assert_uint_eq(nano, 30000 + 75000 + 375000 + 300000);
	tui_prices_usd(nano, usd, sizeof usd);
	ck_assert_str_eq(usd, "0.000780");
	ck_assert_int_eq(tui_prices_cost(&p, "claude-test", &u, &nano), 0);
	ck_assert_uint_eq(nano, 10000 + 10000);
	ck_assert_int_eq(tui_prices_cost(&p, "gpt-5", &u, &nano), -ENOENT);
	ck_assert_int_eq(tui_prices_cost(&p, NULL, &u, &nano), -ENOENT);
}
END_TEST

START_TEST(test_prices_bad)
{
	static const char *const bad[] = { "m 1 2 3\n", "m 1 2 3 x\n",
		"m 1.0001 2 3 4\n", "m -1 2 3 4\n", "m 1 2 3 4 5\n", NULL };
	char why[256];

	for (int i = 0; bad[i] != NULL; i++) {
		ck_assert_int_eq(tui_prices_parse(bad[i], strlen(bad[i]), &p,
		    why, sizeof why), -EINVAL);
		ck_assert_msg(strstr(why, "line 1") != NULL, "%s", why);
	}
}
END_TEST

START_TEST(test_prices_usd)
{
	uint64_t n;
	char buf[32];

	ck_assert_int_eq(tui_prices_usd_parse("5.00", &n), 0);
	ck_assert_uint_eq(n, 5000000000ull);
	ck_assert_int_eq(tui_prices_usd_parse("0.000030", &n), 0);
	ck_assert_uint_eq(n, 30000);
	ck_assert_int_eq(tui_prices_usd_parse("7", &n), 0);
	tui_prices_usd(n, buf, sizeof buf);
	ck_assert_str_eq(buf, "7.000000");
	ck_assert_int_eq(tui_prices_usd_parse("5 USD", &n), -EINVAL);
	ck_assert_int_eq(tui_prices_usd_parse("-1", &n), -EINVAL);
	ck_assert_int_eq(tui_prices_usd_parse(".5", &n), -EINVAL);
	ck_assert_int_eq(tui_prices_usd_parse("0.0000000001", &n), -EINVAL);
	ck_assert_int_eq(tui_prices_usd_parse(NULL, &n), -EINVAL);
}
END_TEST


/*
 * A policy's [model] spend_cap (and its [git] history) survive the text
 * the journal keeps: corral new reads it back and compares the hashes.
 */
START_TEST(test_prices_policy_cap_reads_back)
{
	struct sbx_policy_error err;
	struct sbx_policy *p1 = NULL, *p2 = NULL;
	char h1[SBX_SHA256_HEX], h2[SBX_SHA256_HEX], *text;

	ck_assert_int_eq(sbx_policy_load("[model]\nspend_cap = 0.000125\n"
	    "[git]\nhistory = 3\n", "op", NULL, &p1, &err), 0);
	ck_assert_ptr_nonnull(text = tui_sandbox_policy_text(p1));
	ck_assert_ptr_nonnull(strstr(text, "[model]\nspend_cap = 0.000125\n"));
	ck_assert_int_eq(sbx_policy_load(text, "effective", NULL, &p2, &err),
	    0);
	ck_assert_uint_eq(p2->spend_cap, 125000);
	ck_assert_uint_eq(p2->git_history, 3);
	ck_assert_int_eq(sbx_policy_hash(p1, h1), 0);
	ck_assert_int_eq(sbx_policy_hash(p2, h2), 0);
	ck_assert_str_eq(h1, h2);
	free(text);
	sbx_policy_free(p1);
	sbx_policy_free(p2);
}
END_TEST
Suite *
prices_suite(void)
{
	Suite *s = suite_create("prices");
	TCase *tc = tcase_create("pure");

	tcase_add_test(tc, test_prices_shipped);
	tcase_add_test(tc, test_prices_cost);
	tcase_add_test(tc, test_prices_bad);
	tcase_add_test(tc, test_prices_usd);
	tcase_add_test(tc, test_prices_policy_cap_reads_back);
	suite_add_tcase(s, tc);
	return s;
}
