/*
 * test_receipt.c: hash-chained receipts (SPEC 2, 9.1): append and verify,
 * then every kind of tampering done straight in the database (an edited
 * entry or hash, a removed entry, a truncated tail, an added entry, a
 * rewritten chain) fails verification; concurrent writers from several
 * processes never fork the chain.
 */
#include <jansson.h>
#include <sqlite3.h>

#include "lease_test.h"

static char *tmp;
static char *db;
static struct lease_store *s;
static char id[LEASE_ID_LEN + 1];

static void
new_lease(char out[LEASE_ID_LEN + 1])
{
	struct lease_spec sp = { .mode = LEASE_MODE_SANDBOXED };

	ck_assert_int_eq(lease_record_insert(s, &sp, out), 0);
}

static void
append(const char *lease, const char *kind, const char *k, const char *v)
{
	json_t *f = json_pack("{s:s}", k, v);
	int64_t seq = 0;

	ck_assert_int_eq(lease_receipt_append(s, lease, kind, f, &seq), 0);
	ck_assert_int_gt(seq, 0);
	json_decref(f);
}

static void
setup(void)
{
	tmp = cu_tmpdir("receipt");
	db = lt_fmt("%s/%s", tmp, "corral.db");
	ck_assert_int_eq(lease_store_open(&s, db), 0);
	new_lease(id);
	append(id, "preflight", "kernel", "6.1.0");
	append(id, "provision", "branch", "corral/x");
	append(id, "egress", "host", "api.example.com:443");
}

static void
teardown(void)
{
	lease_store_close(s);
	cu_rmrf(tmp);
	free(tmp);
	free(db);
}

static void
raw(const char *sql)
{
	sqlite3 *h;
	char *err = NULL;

	ck_assert_int_eq(sqlite3_open(db, &h), SQLITE_OK);
	ck_assert_msg(sqlite3_exec(h, sql, NULL, NULL, &err) == SQLITE_OK,
	    "%s: %s", sql, err);
	ck_assert_int_eq(sqlite3_changes(h) > 0 ||
	    strncmp(sql, "INSERT", 6) == 0, 1);
	sqlite3_close(h);
}

static void
expect_tampered(const char *needle)
{
	int rc = lease_receipt_verify(s, id, NULL, NULL);

	ck_assert_msg(rc == LEASE_ETAMPERED, "verify gave %d", rc);
	ck_assert_msg(strstr(lease_store_errmsg(s), needle) != NULL,
	    "message: %s", lease_store_errmsg(s));
}

START_TEST(test_receipt_chain_verifies)
{
	struct lease_record r;
	char head[65];
	int64_t len = 0;
	json_t *a, *e;

	ck_assert_int_eq(lease_receipt_verify(s, id, &len, head), 0);
	ck_assert_int_eq(len, 3);
	ck_assert_uint_eq(strlen(head), 64);
	ck_assert_int_eq(lease_record_get(s, id, &r), 0);
	ck_assert_int_eq(r.receipt_len, 3);
	ck_assert_str_eq(r.receipt_head, head);
	lease_record_clear(&r);

	ck_assert_int_eq(lease_receipt_entries(s, id, &a), 0);
	ck_assert_uint_eq(json_array_size(a), 3);
	e = json_array_get(a, 1);
	ck_assert_int_eq(json_integer_value(json_object_get(e, "seq")), 2);
	ck_assert_str_eq(json_string_value(json_object_get(e, "kind")),
	    "provision");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(e,
	    "fields"), "branch")), "corral/x");
	ck_assert_int_gt(json_integer_value(json_object_get(e, "at")), 0);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(a,
	    2), "hash")), head);
	json_decref(a);
}
END_TEST

START_TEST(test_receipt_empty_chain_and_null_fields)
{
	char other[LEASE_ID_LEN + 1], head[65];
	int64_t len = 9;

	new_lease(other);
	ck_assert_int_eq(lease_receipt_verify(s, other, &len, head), 0);
	ck_assert_int_eq(len, 0);
	ck_assert_str_eq(head, "");
	ck_assert_int_eq(lease_receipt_append(s, other, "start", NULL, NULL),
	    0);
	ck_assert_int_eq(lease_receipt_verify(s, other, &len, NULL), 0);
	ck_assert_int_eq(len, 1);
}
END_TEST

/* SPEC 8.5: a model_request receipt moves the row's usage totals with it. */
START_TEST(test_receipt_usage_totals)
{
	struct lease_usage a = { .requests = 1, .input = 10, .output = 5,
		.cache_write = 3, .cache_read = 7, .cost_nano = 20000 };
	struct lease_usage b = { .requests = 1, .input = 4, .output = 2,
		.cost_unknown = 1 };
	struct lease_record r, *v = NULL;
	json_t *f = json_object(), *o, *u;
	size_t n = 0;
	int64_t len = 0;

	ck_assert_int_eq(lease_record_get(s, id, &r), 0);
	ck_assert_int_eq(r.usage.requests, 0);
	ck_assert_int_eq(r.usage.cost_nano, 0);
	lease_record_clear(&r);
	ck_assert_int_eq(lease_receipt_append_usage(s, id, "model_request", f,
	    &a, NULL), 0);
	ck_assert_int_eq(lease_receipt_append_usage(s, id, "model_request", f,
	    &b, NULL), 0);
	/* a plain receipt leaves them; a refused one moves nothing */
	ck_assert_int_eq(lease_receipt_append(s, id, "model_gateway", f, NULL),
	    0);
	ck_assert_int_eq(lease_receipt_append_usage(s, id, "Bad Kind", f, &a,
	    NULL), -EINVAL);
	json_decref(f);
	ck_assert_int_eq(lease_receipt_verify(s, id, &len, NULL), 0);
	ck_assert_int_eq(len, 6);
	ck_assert_int_eq(lease_record_list(s, LEASE_LIST_ALL, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(v[0].usage.requests, 2);
	ck_assert_int_eq(v[0].usage.input, 14);
	ck_assert_int_eq(v[0].usage.output, 7);
	ck_assert_int_eq(v[0].usage.cache_write, 3);
	ck_assert_int_eq(v[0].usage.cache_read, 7);
	ck_assert_int_eq(v[0].usage.cost_nano, 20000);
	ck_assert_int_eq(v[0].usage.cost_unknown, 1);
	/* what ls --json prints */
	o = lease_json_record(&v[0], 0);
	u = json_object_get(o, "usage");
	ck_assert_int_eq(json_integer_value(json_object_get(u, "requests")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(u, "input")), 14);
	ck_assert_int_eq(json_integer_value(json_object_get(u, "output")), 7);
	ck_assert_str_eq(json_string_value(json_object_get(u, "cost_usd")),
	    "0.000020");
	ck_assert_int_eq(json_integer_value(json_object_get(u,
	    "unknown_cost")), 1);
	json_decref(o);
	lease_record_list_free(v, n);
}
END_TEST

START_TEST(test_receipt_usd)
{
	char buf[32];

	lease_usd(0, buf, sizeof buf);
	ck_assert_str_eq(buf, "0.000000");
	lease_usd(1234567890123LL, buf, sizeof buf);
	ck_assert_str_eq(buf, "1234.567890");
	lease_usd(999, buf, sizeof buf);	/* rounded down to micro-USD */
	ck_assert_str_eq(buf, "0.000000");
	lease_usd(-5, buf, sizeof buf);
	ck_assert_str_eq(buf, "0.000000");
}
END_TEST

START_TEST(test_receipt_canonical_text)
{
	json_t *f = json_pack("{s:i, s:s}", "zeta", 1, "alpha", "\xc3\xa9");
	char other[LEASE_ID_LEN + 1];
	sqlite3 *h;
	sqlite3_stmt *st;
	const char *text;

	new_lease(other);
	ck_assert_int_eq(lease_receipt_append(s, other, "k", f, NULL), 0);
	json_decref(f);
	ck_assert_int_eq(sqlite3_open(db, &h), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(h, "SELECT entry FROM receipts "
	    "WHERE lease_id = ?1", -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_text(st, 1, other, -1, SQLITE_STATIC);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	text = (const char *)sqlite3_column_text(st, 0);
	/* sorted keys, compact, ASCII only */
	ck_assert_ptr_nonnull(strstr(text, "{\"at\":"));
	ck_assert_ptr_nonnull(strstr(text,
	    "\"fields\":{\"alpha\":\"\\u00E9\",\"zeta\":1},\"kind\":\"k\","
	    "\"seq\":1}"));
	sqlite3_finalize(st);
	sqlite3_close(h);
}
END_TEST

START_TEST(test_receipt_rejects_bad_input)
{
	json_t *arr = json_array();

	ck_assert_int_eq(lease_receipt_append(s, id, "", NULL, NULL),
	    -EINVAL);
	ck_assert_int_eq(lease_receipt_append(s, id, "Bad Kind", NULL, NULL),
	    -EINVAL);
	ck_assert_int_eq(lease_receipt_append(s, id, "k", arr, NULL),
	    -EINVAL);
	ck_assert_int_eq(lease_receipt_append(s, "nope", "k", NULL, NULL),
	    LEASE_EBADID);
	ck_assert_int_eq(lease_receipt_append(s, "20200101-000000-000-0000",
	    "k", NULL, NULL), LEASE_ENOTFOUND);
	ck_assert_int_eq(lease_receipt_verify(s, "../x", NULL, NULL),
	    LEASE_EBADID);
	json_decref(arr);
	/* nothing was appended by the refused calls */
	ck_assert_int_eq(lease_receipt_verify(s, id, NULL, NULL), 0);
}
END_TEST

START_TEST(test_receipt_edited_entry)
{
	raw("UPDATE receipts SET entry = replace(entry, 'api.example.com', "
	    "'evil.example.com') WHERE seq = 3");
	expect_tampered("receipt 3 was edited");
}
END_TEST

START_TEST(test_receipt_edited_middle_entry)
{
	raw("UPDATE receipts SET entry = replace(entry, 'corral/x', "
	    "'corral/y') WHERE seq = 2");
	expect_tampered("receipt 2 was edited");
}
END_TEST

START_TEST(test_receipt_edited_hash)
{
	raw("UPDATE receipts SET hash = replace(hash, substr(hash, 1, 1), "
	    "CASE substr(hash, 1, 1) WHEN 'a' THEN 'b' ELSE 'a' END) "
	    "WHERE seq = 1");
	expect_tampered("receipt 1");
}
END_TEST

START_TEST(test_receipt_removed_entry)
{
	raw("DELETE FROM receipts WHERE seq = 2");
	expect_tampered("receipt 2 is missing");
}
END_TEST

START_TEST(test_receipt_truncated_tail)
{
	raw("DELETE FROM receipts WHERE seq = 3");
	expect_tampered("truncated");
}
END_TEST

START_TEST(test_receipt_truncated_and_head_moved_back)
{
	/* drop the tail and make the row agree on the length only */
	raw("DELETE FROM receipts WHERE seq = 3");
	raw("UPDATE leases SET receipt_len = 2");
	expect_tampered("rewritten");
}
END_TEST

START_TEST(test_receipt_rewritten_chain)
{
	char other[LEASE_ID_LEN + 1];
	char *sql;

	/* a valid chain of the same length, but not this lease's */
	new_lease(other);
	append(other, "preflight", "kernel", "6.1.0");
	append(other, "provision", "branch", "corral/elsewhere");
	append(other, "egress", "host", "api.example.com:443");
	sql = lt_fmt("DELETE FROM receipts WHERE lease_id = '%s'; "
	    "UPDATE receipts SET lease_id = '%s' WHERE lease_id = ", id, id);
	{
		char *full = lt_fmt("%s'%s'", sql, other);

		raw(full);
		free(full);
	}
	free(sql);
	expect_tampered("rewritten");
}
END_TEST

START_TEST(test_receipt_added_entry)
{
	raw("INSERT INTO receipts (lease_id, seq, at, entry, prev, hash) "
	    "SELECT lease_id, 4, at, entry, hash, hash FROM receipts "
	    "WHERE seq = 3");
	expect_tampered("receipt 4");
}
END_TEST

START_TEST(test_receipt_entries_stop_at_break)
{
	json_t *a = NULL;

	raw("UPDATE receipts SET entry = replace(entry, 'corral/x', "
	    "'corral/z') WHERE seq = 2");
	ck_assert_int_eq(lease_receipt_entries(s, id, &a), LEASE_ETAMPERED);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(json_array_size(a), 1);
	json_decref(a);
}
END_TEST

/*
 * A journal an agent inflated (issue 15): show lists the first and the
 * last LEASE_SHOW_FIRST/LAST receipts and transitions and says how many
 * more there are; every entry is still verified; the unlogged activity
 * changes the row and writes no transition.
 */
START_TEST(test_receipt_show_window)
{
	json_t *a, *j, *tr;
	int64_t omitted = -1, total = 2503, t;
	struct lease_record r;
	int i;

	for (i = 0; i < 2500; i++)
		append(id, "input", "detail", "reply to the agent dropped");
	ck_assert_int_eq(lease_receipt_entries_window(s, id, 5, 5, &a,
	    &omitted), 0);
	ck_assert_uint_eq(json_array_size(a), 10);
	ck_assert_int_eq(omitted, total - 10);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(a,
	    4), "seq")), 5);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(a,
	    5), "seq")), total - 4);
	json_decref(a);
	for (i = 0; i < 2200; i++)
		ck_assert_int_eq(lease_record_set_activity(s, id, i % 2 ?
		    LEASE_ACT_WORKING : LEASE_ACT_BLOCKED, "report"), 0);
	ck_assert_int_eq(lease_json_show(s, id, &j), 0);
	a = json_object_get(j, "receipts");
	ck_assert_uint_eq(json_array_size(a), LEASE_SHOW_FIRST +
	    LEASE_SHOW_LAST);
	ck_assert_int_eq(json_integer_value(json_object_get(j,
	    "receipts_omitted")), total - LEASE_SHOW_FIRST - LEASE_SHOW_LAST);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(a,
	    LEASE_SHOW_FIRST), "seq")), total - LEASE_SHOW_LAST + 1);
	ck_assert(json_is_true(json_object_get(json_object_get(j, "receipt"),
	    "verified")));
	tr = json_object_get(j, "transitions");
	t = json_integer_value(json_object_get(j, "transitions_omitted"));
	ck_assert_uint_eq(json_array_size(tr), LEASE_SHOW_FIRST +
	    LEASE_SHOW_LAST);
	ck_assert_int_gt(t, 0);
	/* The last listed is the newest, the one before it its predecessor. */
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(tr,
	    json_array_size(tr) - 1), "to")), "working");
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(tr,
	    json_array_size(tr) - 1), "seq")) - json_integer_value(
	    json_object_get(json_array_get(tr, json_array_size(tr) - 2),
	    "seq")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(tr,
	    LEASE_SHOW_FIRST), "seq")) - json_integer_value(json_object_get(
	    json_array_get(tr, LEASE_SHOW_FIRST - 1), "seq")), t + 1);
	json_decref(j);
	/* Unlogged: the row changes, the log does not. */
	ck_assert_int_eq(lease_record_set_activity_unlogged(s, id,
	    LEASE_ACT_BLOCKED), 0);
	ck_assert_int_eq(lease_record_get(s, id, &r), 0);
	ck_assert_int_eq(r.activity, LEASE_ACT_BLOCKED);
	lease_record_clear(&r);
	ck_assert_int_eq(lease_json_show(s, id, &j), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(j,
	    "transitions_omitted")), t);
	json_decref(j);
}
END_TEST

START_TEST(test_receipt_concurrent_writers)
{
	pid_t pids[3];
	int64_t len;
	int i, j;

	for (i = 0; i < 3; i++) {
		pids[i] = fork();
		ck_assert_int_ge(pids[i], 0);
		if (pids[i] == 0) {
			struct lease_store *cs;
			json_t *f;

			if (lease_store_open(&cs, db) != 0)
				_exit(1);
			for (j = 0; j < 50; j++) {
				f = json_pack("{s:i, s:i}", "writer", i,
				    "n", j);
				if (lease_receipt_append(cs, id, "tick", f,
				    NULL) != 0)
					_exit(2);
				json_decref(f);
			}
			lease_store_close(cs);
			_exit(0);
		}
	}
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(lt_wait(pids[i]), 0);
	ck_assert_int_eq(lease_receipt_verify(s, id, &len, NULL), 0);
	ck_assert_int_eq(len, 153);
}
END_TEST

Suite *receipt_suite(void);

Suite *
receipt_suite(void)
{
	Suite *su = suite_create("receipt");
	TCase *tc = tcase_create("Core");
	TCase *tamper = tcase_create("Tamper");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_receipt_chain_verifies);
	tcase_add_test(tc, test_receipt_empty_chain_and_null_fields);
	tcase_add_test(tc, test_receipt_canonical_text);
	tcase_add_test(tc, test_receipt_usage_totals);
	tcase_add_test(tc, test_receipt_usd);
	tcase_add_test(tc, test_receipt_rejects_bad_input);
	tcase_add_test(tc, test_receipt_concurrent_writers);
	tcase_add_test(tc, test_receipt_show_window);
	suite_add_tcase(su, tc);

	tcase_add_checked_fixture(tamper, setup, teardown);
	tcase_add_test(tamper, test_receipt_edited_entry);
	tcase_add_test(tamper, test_receipt_edited_middle_entry);
	tcase_add_test(tamper, test_receipt_edited_hash);
	tcase_add_test(tamper, test_receipt_removed_entry);
	tcase_add_test(tamper, test_receipt_truncated_tail);
	tcase_add_test(tamper, test_receipt_truncated_and_head_moved_back);
	tcase_add_test(tamper, test_receipt_rewritten_chain);
	tcase_add_test(tamper, test_receipt_added_entry);
	tcase_add_test(tamper, test_receipt_entries_stop_at_break);
	suite_add_tcase(su, tamper);
	return su;
}
