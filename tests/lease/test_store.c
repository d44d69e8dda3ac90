/*
 * test_store.c: the journal on real SQLite files in temp directories
 * (SPEC 9): rows, transitions, resources and events; corrupt, truncated,
 * foreign, newer, locked and read-only files and a full disk give named
 * errors with the file untouched; a committed transition survives SIGKILL;
 * concurrent writers from several processes.
 */
#include <jansson.h>
#include <sqlite3.h>

#include "lease_test.h"

static char *tmp;
static char *db;

static void
setup(void)
{
	tmp = cu_tmpdir("store");
	db = lt_fmt("%s/%s", tmp, "corral.db");
}

static void
teardown(void)
{
	umount2(tmp, MNT_DETACH);	/* the mount tests' private tmpfs */
	cu_rmrf(tmp);
	free(tmp);
	free(db);
}

static struct lease_store *
open_ok(void)
{
	return lt_store_open(db);
}

static void
insert_ok(struct lease_store *s, const char *name, char id[LEASE_ID_LEN + 1])
{
	char *const cmd[] = { "claude", "--print", NULL };
	struct lease_spec sp = {
		.name = name,
		.mode = LEASE_MODE_SANDBOXED,
		.adapter = "bwrap",
		.isolation = "bwrap",
		.repo = "/src/repo",
		.limits = "{\"wall_s\":3600}",
		.cmd = cmd,
	};
	int rc = lease_record_insert(s, &sp, id);

	ck_assert_msg(rc == 0, "insert: %s", lease_store_errmsg(s));
	ck_assert(lease_id_valid(id));
}

/* Raw access for inspection and tampering. */
static int64_t
raw_int(const char *sql)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	int64_t v = -1;

	ck_assert_int_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READWRITE, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL),
	    SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	return v;
}

START_TEST(test_store_open_creates_v2_wal)
{
	struct lease_store *s = open_ok();

	ck_assert_int_eq(lease_store_version(s), LEASE_SCHEMA_VERSION);
	ck_assert_str_eq(lease_store_path(s), db);
	lease_store_close(s);
	ck_assert_int_eq(raw_int("PRAGMA user_version"), 5);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM sqlite_master WHERE "
	    "name IN ('leases','transitions','resources','receipts','ids',"
	    "'inventory','intents')"), 7);
	/* WAL is persistent in the file header: byte 18 == 2 */
	{
		size_t len;
		char *b = lt_slurp(db, &len);

		ck_assert_uint_ge(len, 100);
		ck_assert_int_eq(b[18], 2);
		free(b);
	}
	/* reopening is a no-op migration */
	s = open_ok();
	ck_assert_int_eq(lease_store_version(s), 5);
	lease_store_close(s);
	lease_store_close(NULL);
}
END_TEST

START_TEST(test_store_insert_get_list)
{
	struct lease_store *s = open_ok();
	char a[LEASE_ID_LEN + 1], b[LEASE_ID_LEN + 1];
	struct lease_record r;
	struct lease_record *v;
	size_t n;

	insert_ok(s, "first", a);
	insert_ok(s, NULL, b);
	ck_assert_str_ne(a, b);
	ck_assert_int_eq(lease_record_get(s, a, &r), 0);
	ck_assert_str_eq(r.id, a);
	ck_assert_str_eq(r.name, "first");
	ck_assert_int_eq(r.state, LEASE_STATE_PROVISIONING);
	ck_assert_int_eq(r.activity, LEASE_ACT_STARTING);
	ck_assert_int_eq(r.cleanup, LEASE_CLEANUP_NONE);
	ck_assert_int_eq(r.mode, LEASE_MODE_SANDBOXED);
	ck_assert_str_eq(r.adapter, "bwrap");
	ck_assert_str_eq(r.repo, "/src/repo");
	ck_assert_str_eq(r.limits, "{\"wall_s\":3600}");
	ck_assert_str_eq(r.cmd, "[\"claude\",\"--print\"]");
	ck_assert_ptr_null(r.base);
	ck_assert_ptr_null(r.result);
	ck_assert_int_eq(r.receipt_len, 0);
	ck_assert_str_eq(r.receipt_head, "");
	ck_assert_int_gt(r.created_at, 1600000000000LL);
	lease_record_clear(&r);
	ck_assert_int_eq(lease_record_get(s, b, &r), 0);
	ck_assert_str_eq(r.name, b);	/* defaults to the ID */
	lease_record_clear(&r);
	lease_record_clear(&r);		/* idempotent */

	ck_assert_int_eq(lease_record_transition(s, b, LEASE_EV_FAIL, "x",
	    NULL), 0);
	ck_assert_int_eq(lease_record_list(s, 0, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(v[0].id, a);
	lease_record_list_free(v, n);
	ck_assert_int_eq(lease_record_list(s, LEASE_LIST_ALL, &v, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_lt(strcmp(v[0].id, v[1].id), 0);
	lease_record_list_free(v, n);

	ck_assert_int_eq(lease_record_get(s, "20260101-000000-000-0000", &r),
	    LEASE_ENOTFOUND);
	ck_assert_int_eq(lease_record_get(s, "../etc", &r), LEASE_EBADID);
	ck_assert_int_eq(lease_record_get(s, "%", &r), LEASE_EBADID);
	lease_store_close(s);
}
END_TEST

START_TEST(test_store_insert_rejects_bad_spec)
{
	struct lease_store *s = open_ok();
	char id[LEASE_ID_LEN + 1], big[200];
	struct lease_spec sp = { .mode = LEASE_MODE_SANDBOXED,
		.limits = "{not json" };

	ck_assert_int_eq(lease_record_insert(s, &sp, id), -EINVAL);
	sp.limits = NULL;
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	sp.name = big;
	ck_assert_int_eq(lease_record_insert(s, &sp, id), -EINVAL);
	sp.name = NULL;
	sp.mode = LEASE_MODE_COUNT;
	ck_assert_int_eq(lease_record_insert(s, &sp, id), -EINVAL);
	lease_store_close(s);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM leases"), 0);
}
END_TEST

START_TEST(test_store_ids_unique_and_kept)
{
	struct lease_store *s = open_ok();
	char id[LEASE_ID_LEN + 1];
	int i;

	for (i = 0; i < 300; i++)
		insert_ok(s, NULL, id);
	ck_assert_int_eq(lease_record_transition(s, id, LEASE_EV_CANCEL, NULL,
	    NULL), 0);
	ck_assert_int_eq(lease_record_delete(s, id), 0);
	lease_store_close(s);
	ck_assert_int_eq(raw_int("SELECT count(DISTINCT id) FROM leases"),
	    299);
	/* the deleted lease's ID stays claimed forever */
	ck_assert_int_eq(raw_int("SELECT count(*) FROM ids"), 300);
}
END_TEST

START_TEST(test_store_transitions)
{
	struct lease_store *s = open_ok();
	char id[LEASE_ID_LEN + 1];
	struct lease_record r;
	enum lease_state next;

	insert_ok(s, NULL, id);
	ck_assert_int_eq(lease_record_transition(s, id, LEASE_EV_RESULT, NULL,
	    NULL), LEASE_EBADTRANSITION);
	ck_assert_ptr_nonnull(strstr(lease_store_errmsg(s), "not allowed"));
	ck_assert_int_eq(lease_record_transition(s, id, LEASE_EV_START,
	    "holder up", &next), 0);
	ck_assert_int_eq(next, LEASE_STATE_RUNNING);
	ck_assert_int_eq(lease_record_transition(s, id, LEASE_EV_RESULT, NULL,
	    &next), 0);
	ck_assert_int_eq(next, LEASE_STATE_RESULT_READY);
	/* SPEC 5.1: result_ready -> running is not allowed */
	ck_assert_int_eq(lease_record_transition(s, id, LEASE_EV_START, NULL,
	    NULL), LEASE_EBADTRANSITION);
	ck_assert_int_eq(lease_record_transition(s, id, LEASE_EV_FAIL, NULL,
	    NULL), LEASE_EBADTRANSITION);
	ck_assert_int_eq(lease_record_transition(s, id, LEASE_EV_REJECT,
	    "operator", NULL), 0);
	ck_assert_int_eq(lease_record_get(s, id, &r), 0);
	ck_assert_int_eq(r.state, LEASE_STATE_REJECTED);
	/* no resources: nothing to clean */
	ck_assert_int_eq(r.cleanup, LEASE_CLEANUP_NONE);
	lease_record_clear(&r);
	lease_store_close(s);
	/* one row per legal transition, none for the refused ones */
	ck_assert_int_eq(raw_int("SELECT count(*) FROM transitions WHERE "
	    "kind = 'lease'"), 4);
	ck_assert_int_eq(raw_int("SELECT max(seq) FROM transitions"), 4);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM transitions WHERE "
	    "from_state IS NULL AND to_state = 'provisioning'"), 1);
}
END_TEST

/*
 * A starting holder's claim and reconcile's verdict on a provisioning
 * lease are each a compare-and-swap (issue 16 item 7): whichever commits
 * first wins and the other is refused with the journal untouched.
 */
START_TEST(test_store_claim_against_reconcile)
{
	struct lease_store *s = open_ok();
	char a[LEASE_ID_LEN + 1], b[LEASE_ID_LEN + 1];
	struct lease_record r;

	insert_ok(s, "a", a);
	insert_ok(s, "b", b);
	/* a: the holder first; reconcile's "interrupted" then refused */
	ck_assert_int_eq(lease_record_claim(s, a, 4242, 77, "endpoint "
	    "running"), 0);
	ck_assert_int_eq(lease_record_transition_from(s, a,
	    LEASE_STATE_PROVISIONING, LEASE_EV_FAIL,
	    "provisioning_interrupted", NULL), LEASE_EBUSY);
	ck_assert_ptr_nonnull(strstr(lease_store_errmsg(s), "no longer"));
	ck_assert_int_eq(lease_record_get(s, a, &r), 0);
	ck_assert_int_eq(r.state, LEASE_STATE_RUNNING);
	ck_assert_int_eq(r.holder_pid, 4242);
	ck_assert_int_eq(r.holder_start, 77);
	lease_record_clear(&r);
	/* b: reconcile first; the holder's claim then refused, no PID set */
	ck_assert_int_eq(lease_record_transition_from(s, b,
	    LEASE_STATE_PROVISIONING, LEASE_EV_FAIL,
	    "provisioning_interrupted", NULL), 0);
	ck_assert_int_eq(lease_record_claim(s, b, 4243, 78, "endpoint "
	    "running"), LEASE_EBUSY);
	ck_assert_int_eq(lease_record_get(s, b, &r), 0);
	ck_assert_int_eq(r.state, LEASE_STATE_FAILED);
	ck_assert_int_eq(r.holder_pid, 0);
	lease_record_clear(&r);
	ck_assert_int_eq(lease_record_claim(s, b, 0, 0, NULL), -EINVAL);
	lease_store_close(s);
	/* the refused ones wrote no transition row */
	ck_assert_int_eq(raw_int("SELECT count(*) FROM transitions WHERE "
	    "kind = 'lease'"), 4);
}
END_TEST

START_TEST(test_store_failed_reason_and_cleanup_pending)
{
	struct lease_store *s = open_ok();
	char id[LEASE_ID_LEN + 1];
	struct lease_record r;

	insert_ok(s, NULL, id);
	ck_assert_int_eq(lease_resource_plan(s, id, LEASE_RES_BRANCH,
	    "corral/x", "/src/repo"), 0);
	ck_assert_int_eq(lease_resource_plan(s, id, LEASE_RES_WORKSPACE,
	    "/state/leases/x/work", NULL), 0);
	ck_assert_int_eq(lease_resource_created(s, id,
	    LEASE_RES_WORKSPACE, "/state/leases/x/work"), 0);
	ck_assert_int_eq(lease_record_transition(s, id, LEASE_EV_START, NULL,
	    NULL), 0);
	ck_assert_int_eq(lease_record_transition(s, id, LEASE_EV_FAIL,
	    "holder_lost", NULL), 0);
	ck_assert_int_eq(lease_record_get(s, id, &r), 0);
	ck_assert_int_eq(r.state, LEASE_STATE_FAILED);
	ck_assert_str_eq(r.failed_reason, "holder_lost");
	ck_assert_int_eq(r.cleanup, LEASE_CLEANUP_PENDING);
	ck_assert_str_eq(r.branch, "corral/x");	/* mirrored on plan */
	ck_assert_str_eq(r.workspace, "/state/leases/x/work");
	lease_record_clear(&r);
	/* a failed lease with pending cleanup stays listed (SPEC 9.3) */
	{
		struct lease_record *v;
		size_t n;

		ck_assert_int_eq(lease_record_list(s, 0, &v, &n), 0);
		ck_assert_uint_eq(n, 1);
		lease_record_list_free(v, n);
	}
	/* removing the runtime resource confirms cleanup; branch is kept */
	ck_assert_int_eq(lease_resource_removed(s, id,
	    LEASE_RES_WORKSPACE, "/state/leases/x/work"), 0);
	ck_assert_int_eq(lease_record_get(s, id, &r), 0);
	ck_assert_int_eq(r.cleanup, LEASE_CLEANUP_CONFIRMED);
	lease_record_clear(&r);
	lease_store_close(s);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM transitions WHERE "
	    "kind = 'cleanup'"), 2);
}
END_TEST

START_TEST(test_store_activity_unseen)
{
	struct lease_store *s = open_ok();
	char id[LEASE_ID_LEN + 1];
	struct lease_record r;

	insert_ok(s, NULL, id);
	ck_assert_int_eq(lease_record_set_activity(s, id, LEASE_ACT_WORKING,
	    "egress"), 0);
	ck_assert_int_eq(lease_record_set_activity(s, id, LEASE_ACT_WORKING,
	    "egress"), 0);
	ck_assert_int_eq(lease_record_set_activity(s, id, LEASE_ACT_BLOCKED,
	    "rule:claude"), 0);
	ck_assert_int_eq(lease_record_get(s, id, &r), 0);
	ck_assert_int_eq(r.activity, LEASE_ACT_BLOCKED);
	ck_assert(!r.unseen);
	lease_record_clear(&r);
	ck_assert_int_eq(lease_record_set_activity(s, id, LEASE_ACT_DONE,
	    "exit 0"), 0);
	ck_assert_int_eq(lease_record_get(s, id, &r), 0);
	ck_assert(r.unseen);
	lease_record_clear(&r);
	ck_assert_int_eq(lease_record_mark_seen(s, id), 0);
	ck_assert_int_eq(lease_record_get(s, id, &r), 0);
	ck_assert(!r.unseen);
	lease_record_clear(&r);
	ck_assert_int_eq(lease_record_set_activity(s, id, LEASE_ACT_COUNT,
	    NULL), -EINVAL);
	lease_store_close(s);
	/* the repeated activity wrote no row */
	ck_assert_int_eq(raw_int("SELECT count(*) FROM transitions WHERE "
	    "kind = 'activity'"), 3);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM transitions WHERE "
	    "kind = 'activity' AND reason = 'rule:claude' AND "
	    "from_state = 'working'"), 1);
}
END_TEST

START_TEST(test_store_fields_holder)
{
	struct lease_store *s = open_ok();
	char id[LEASE_ID_LEN + 1];
	struct lease_record r;

	insert_ok(s, NULL, id);
	ck_assert_int_eq(lease_record_set_text(s, id, LEASE_FIELD_SANDBOX_ID,
	    "sbx-1"), 0);
	ck_assert_int_eq(lease_record_set_text(s, id, LEASE_FIELD_RESULT,
	    "{\"status\":\"ok\"}"), 0);
	ck_assert_int_eq(lease_record_set_text(s, id, LEASE_FIELD_RESULT,
	    "{oops"), -EINVAL);
	ck_assert_int_eq(lease_record_set_text(s, id, LEASE_FIELD_NAME, NULL),
	    -EINVAL);
	ck_assert_int_eq(lease_record_set_text(s, id, LEASE_FIELD_COUNT, "x"),
	    -EINVAL);
	ck_assert_int_eq(lease_record_set_holder(s, id, 4242, 987654), 0);
	ck_assert_int_eq(lease_record_get(s, id, &r), 0);
	ck_assert_str_eq(r.sandbox_id, "sbx-1");
	ck_assert_str_eq(r.result, "{\"status\":\"ok\"}");
	ck_assert_int_eq(r.holder_pid, 4242);
	ck_assert_int_eq(r.holder_start, 987654);
	lease_record_clear(&r);
	ck_assert_int_eq(lease_record_set_holder(s, id, 0, 0), 0);
	ck_assert_int_eq(lease_record_get(s, id, &r), 0);
	ck_assert_int_eq(r.holder_pid, 0);
	lease_record_clear(&r);
	ck_assert_int_eq(lease_record_set_holder(s, "nope", 1, 1),
	    LEASE_EBADID);
	ck_assert_int_eq(lease_record_set_holder(s,
	    "20200101-000000-000-0000", 1, 1), LEASE_ENOTFOUND);
	lease_store_close(s);
}
END_TEST

START_TEST(test_store_resources)
{
	struct lease_store *s = open_ok();
	char id[LEASE_ID_LEN + 1];
	struct lease_resource_row *v;
	size_t n;

	insert_ok(s, NULL, id);
	ck_assert_int_eq(lease_resource_created(s, id, LEASE_RES_BRANCH,
	    "corral/x"), LEASE_ENOTFOUND);	/* never planned */
	ck_assert_int_eq(lease_resource_plan(s, id, LEASE_RES_BRANCH,
	    "corral/x", "/r"), 0);
	ck_assert_int_eq(lease_resource_plan(s, id, LEASE_RES_BRANCH,
	    "corral/x", "/r"), 0);		/* idempotent */
	ck_assert_int_eq(lease_resource_created(s, id, LEASE_RES_BRANCH,
	    "corral/x"), 0);
	ck_assert_int_eq(lease_resource_plan(s, id, LEASE_RES_HOLDER,
	    "123:456", NULL), 0);
	ck_assert_int_eq(lease_resource_list(s, id, &v, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(v[0].kind, LEASE_RES_BRANCH);
	ck_assert_int_eq(v[0].state, LEASE_RS_CREATED);
	ck_assert_str_eq(v[0].identity, "corral/x");
	ck_assert_str_eq(v[0].scope, "/r");
	ck_assert_int_eq(v[1].kind, LEASE_RES_HOLDER);
	ck_assert_int_eq(v[1].state, LEASE_RS_PLANNED);
	ck_assert_ptr_null(v[1].scope);
	lease_resource_list_free(v, n);
	ck_assert_int_eq(lease_resource_removed(s, id, LEASE_RES_BRANCH,
	    "corral/x"), 0);
	ck_assert_int_eq(lease_resource_removed(s, id, LEASE_RES_BRANCH,
	    "corral/x"), 0);
	/* a removed identity is never planned again */
	ck_assert_int_eq(lease_resource_plan(s, id, LEASE_RES_BRANCH,
	    "corral/x", "/r"), LEASE_EEXIST);
	ck_assert_int_eq(lease_resource_created(s, id, LEASE_RES_BRANCH,
	    "corral/x"), LEASE_EEXIST);
	ck_assert_int_eq(lease_resource_plan(s, id, LEASE_RES_BRANCH,
	    "", NULL), -EINVAL);
	ck_assert_str_eq(lease_resource_name(LEASE_RES_LEASE_DIR),
	    "lease_dir");
	ck_assert(!lease_resource_runtime(LEASE_RES_BRANCH));
	ck_assert(lease_resource_runtime(LEASE_RES_WORKTREE));
	lease_store_close(s);
}
END_TEST

struct ev_acc {
	int n;
	char last_to[32];
	int64_t first_cursor;
};

static int
on_event(const struct lease_event_row *ev, void *ud)
{
	struct ev_acc *a = ud;

	if (a->n++ == 0)
		a->first_cursor = ev->cursor;
	ck_assert(lease_id_valid(ev->id));
	snprintf(a->last_to, sizeof a->last_to, "%s", ev->to);
	return 0;
}

static int
stop_at_two(const struct lease_event_row *ev, void *ud)
{
	int *n = ud;

	(void)ev;
	return ++*n == 2 ? 7 : 0;
}

START_TEST(test_store_events)
{
	struct lease_store *s = open_ok();
	char a[LEASE_ID_LEN + 1], b[LEASE_ID_LEN + 1];
	struct ev_acc acc = { 0 };
	int64_t last, t0;
	int n = 0;

	insert_ok(s, NULL, a);
	insert_ok(s, NULL, b);
	ck_assert_int_eq(lease_record_transition(s, a, LEASE_EV_START, NULL,
	    NULL), 0);
	ck_assert_int_eq(lease_event_list(s, NULL, 0, 0, on_event, &acc,
	    &last), 0);
	ck_assert_int_eq(acc.n, 3);
	ck_assert_str_eq(acc.last_to, "running");
	/* --follow: nothing new after the last cursor... */
	memset(&acc, 0, sizeof acc);
	ck_assert_int_eq(lease_event_list(s, NULL, 0, last, on_event, &acc,
	    &last), 0);
	ck_assert_int_eq(acc.n, 0);
	/* ...until something happens */
	ck_assert_int_eq(lease_record_set_activity(s, b, LEASE_ACT_PROMPT,
	    "osc133"), 0);
	ck_assert_int_eq(lease_event_list(s, NULL, 0, last, on_event, &acc,
	    &last), 0);
	ck_assert_int_eq(acc.n, 1);
	ck_assert_str_eq(acc.last_to, "prompt");
	/* per lease, and --since in the future */
	memset(&acc, 0, sizeof acc);
	ck_assert_int_eq(lease_event_list(s, a, 0, 0, on_event, &acc,
	    NULL), 0);
	ck_assert_int_eq(acc.n, 2);
	t0 = lease_id_now_ms() + 60000;
	memset(&acc, 0, sizeof acc);
	ck_assert_int_eq(lease_event_list(s, NULL, t0, 0, on_event, &acc,
	    NULL), 0);
	ck_assert_int_eq(acc.n, 0);
	ck_assert_int_eq(lease_event_list(s, NULL, 0, 0, stop_at_two, &n,
	    NULL), 7);
	ck_assert_int_eq(lease_event_list(s, "x", 0, 0, on_event, &acc,
	    NULL), LEASE_EBADID);
	lease_store_close(s);
}
END_TEST

START_TEST(test_store_delete_refuses_live)
{
	struct lease_store *s = open_ok();
	char id[LEASE_ID_LEN + 1];

	insert_ok(s, NULL, id);
	ck_assert_int_eq(lease_record_delete(s, id), LEASE_EBUSY);
	ck_assert_int_eq(lease_record_transition(s, id, LEASE_EV_CANCEL,
	    "operator", NULL), 0);
	ck_assert_int_eq(lease_record_delete(s, id), 0);
	ck_assert_int_eq(lease_record_delete(s, id), LEASE_ENOTFOUND);
	lease_store_close(s);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM transitions"), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Bad files: named errors, nothing overwritten                        */

static void
expect_open_fails(int want, const char *needle)
{
	struct lease_store *s;
	size_t l0, l1;
	char *before = lt_slurp(db, &l0), *after;
	int rc = lease_store_open(&s, db);

	ck_assert_msg(rc == want, "open gave %d (%s), want %d", rc,
	    lease_store_errmsg(s), want);
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(strstr(lease_store_errmsg(s), db));
	ck_assert_msg(strstr(lease_store_errmsg(s), needle) != NULL,
	    "message: %s", lease_store_errmsg(s));
	lease_store_close(s);
	after = lt_slurp(db, &l1);
	ck_assert_uint_eq(l0, l1);
	ck_assert_mem_eq(before, after, l0);
	free(before);
	free(after);
}

START_TEST(test_store_garbage_file)
{
	char junk[8192];
	size_t i;

	for (i = 0; i < sizeof junk; i++)
		junk[i] = (char)(i * 131 + 7);
	ck_assert_int_eq(cu_write_file(db, junk, sizeof junk), 0);
	expect_open_fails(LEASE_ECORRUPT, "not a database");
}
END_TEST

/* A populated database, checkpointed so everything is in the main file. */
static void
make_populated(void)
{
	struct lease_store *s = open_ok();
	char id[LEASE_ID_LEN + 1];
	int i;

	for (i = 0; i < 40; i++) {
		insert_ok(s, "some fairly long name to fill pages quickly", id);
		ck_assert_int_eq(lease_record_set_text(s, id,
		    LEASE_FIELD_POLICY, "[net]\nallow = example.com\n"
		    "[limits]\nwall = 3600\nmemory = 4G\n"), 0);
	}
	lease_store_close(s);	/* the last close checkpoints the WAL */
	{
		char *wal = lt_fmt("%s%s", db, "-wal");

		ck_assert_int_eq(access(wal, F_OK), -1);
		free(wal);
	}
}

START_TEST(test_store_truncated_file)
{
	struct stat sb;

	make_populated();
	ck_assert_int_eq(stat(db, &sb), 0);
	ck_assert_int_gt(sb.st_size, 4 * 4096);
	ck_assert_int_eq(truncate(db, sb.st_size / 2), 0);
	expect_open_fails(LEASE_ECORRUPT, "corrupt");
}
END_TEST

START_TEST(test_store_smashed_page)
{
	struct stat sb;
	size_t len;
	char *b;

	make_populated();
	ck_assert_int_eq(stat(db, &sb), 0);
	b = lt_slurp(db, &len);
	/* overwrite the b-tree page headers of pages 2..3 */
	memset(b + 4096, 0xee, 2 * 4096);
	ck_assert_int_eq(cu_write_file(db, b, len), 0);
	free(b);
	expect_open_fails(LEASE_ECORRUPT, "corrupt");
}
END_TEST

START_TEST(test_store_foreign_sqlite)
{
	sqlite3 *h;

	ck_assert_int_eq(sqlite3_open(db, &h), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(h, "CREATE TABLE photos (x); "
	    "INSERT INTO photos VALUES (1)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	expect_open_fails(LEASE_ECORRUPT, "not a corral database");
}
END_TEST

START_TEST(test_store_newer_schema)
{
	sqlite3 *h;

	make_populated();
	ck_assert_int_eq(sqlite3_open(db, &h), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(h, "PRAGMA user_version = 99", NULL,
	    NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	expect_open_fails(LEASE_ESCHEMA, "newer");
}
END_TEST

START_TEST(test_store_not_a_file)
{
	struct lease_store *s;

	ck_assert_int_eq(mkdir(db, 0700), 0);
	ck_assert_int_eq(lease_store_open(&s, db), LEASE_ECORRUPT);
	ck_assert_ptr_nonnull(strstr(lease_store_errmsg(s), "regular file"));
	lease_store_close(s);
}
END_TEST

START_TEST(test_store_locked_write_times_out)
{
	struct lease_store *s = open_ok();
	char id[LEASE_ID_LEN + 1];
	sqlite3 *h;
	uint64_t t0, dt;

	insert_ok(s, NULL, id);
	ck_assert_int_eq(lease_store_set_busy_timeout(s, 300), 0);
	ck_assert_int_eq(sqlite3_open(db, &h), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(h, "BEGIN EXCLUSIVE; "
	    "UPDATE leases SET name = 'held'", NULL, NULL, NULL), SQLITE_OK);
	t0 = cu_now_ms();
	ck_assert_int_eq(lease_record_transition(s, id, LEASE_EV_START, NULL,
	    NULL), LEASE_ELOCKED);
	dt = cu_now_ms() - t0;
	ck_assert_ptr_nonnull(strstr(lease_store_errmsg(s), "locked"));
	ck_assert_ptr_nonnull(strstr(lease_store_errmsg(s), db));
	/* it waited for the timeout, and did not hang */
	ck_assert_uint_ge(dt, 250);
	ck_assert_uint_lt(dt, 5000);
	sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(h);
	/* and the journal is intact: the transition can happen now */
	ck_assert_int_eq(lease_record_transition(s, id, LEASE_EV_START, NULL,
	    NULL), 0);
	lease_store_close(s);
}
END_TEST

START_TEST(test_store_locked_open_times_out)
{
	struct lease_store_opts o = { .busy_ms = 300 };
	struct lease_store *s;
	sqlite3 *h;
	uint64_t t0;

	make_populated();
	ck_assert_int_eq(sqlite3_open(db, &h), SQLITE_OK);
	/* exclusive locking mode keeps even readers out, WAL or not */
	ck_assert_int_eq(sqlite3_exec(h, "PRAGMA locking_mode = EXCLUSIVE; "
	    "BEGIN EXCLUSIVE; UPDATE leases SET name = 'held'", NULL, NULL,
	    NULL), SQLITE_OK);
	t0 = cu_now_ms();
	ck_assert_int_eq(lease_store_open_ex(&s, db, &o), LEASE_ELOCKED);
	ck_assert_uint_lt(cu_now_ms() - t0, 5000);
	ck_assert_ptr_nonnull(strstr(lease_store_errmsg(s), "locked"));
	lease_store_close(s);
	sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(h);
}
END_TEST

START_TEST(test_store_readonly_dir_new_db)
{
	struct lease_store *s;

	lt_private_tmpfs(tmp, "size=1m");
	lt_remount_ro(tmp);
	ck_assert_int_eq(lease_store_open(&s, db), LEASE_EREADONLY);
	ck_assert_ptr_nonnull(strstr(lease_store_errmsg(s), "read-only"));
	ck_assert_ptr_nonnull(strstr(lease_store_errmsg(s), db));
	lease_store_close(s);
	ck_assert_int_eq(access(db, F_OK), -1);
}
END_TEST

START_TEST(test_store_readonly_dir_existing_db)
{
	struct lease_store *s;
	size_t l0, l1;
	char *b0, *b1;

	lt_private_tmpfs(tmp, "size=4m");
	make_populated();
	b0 = lt_slurp(db, &l0);
	lt_remount_ro(tmp);
	ck_assert_int_eq(lease_store_open(&s, db), LEASE_EREADONLY);
	ck_assert_ptr_nonnull(strstr(lease_store_errmsg(s), db));
	lease_store_close(s);
	b1 = lt_slurp(db, &l1);
	ck_assert_uint_eq(l0, l1);
	ck_assert_mem_eq(b0, b1, l0);
	free(b0);
	free(b1);
}
END_TEST

START_TEST(test_store_unwritable_dir_as_user)
{
	struct lease_store *s;

	pid_t pid;

	/* a state directory the (unprivileged) user may not write */
	ck_assert_int_eq(chmod(tmp, 0755), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(1);
		if (lease_store_open(&s, db) != LEASE_EREADONLY)
			_exit(2);
		if (strstr(lease_store_errmsg(s), "read-only") == NULL)
			_exit(3);
		lease_store_close(s);
		_exit(0);
	}
	ck_assert_int_eq(lt_wait(pid), 0);
	ck_assert_int_eq(access(db, F_OK), -1);
}
END_TEST

START_TEST(test_store_disk_full)
{
	struct lease_store *s;
	struct lease_record r;
	char id[LEASE_ID_LEN + 1], first[LEASE_ID_LEN + 1];
	char *fill, *big;
	int rc = 0, i;

	lt_private_tmpfs(tmp, "size=512k");
	s = open_ok();
	insert_ok(s, "survivor", first);
	/* eat the rest of the filesystem */
	fill = lt_fmt("%s/%s", tmp, "fill");
	big = calloc(1, 4096);
	{
		FILE *f = fopen(fill, "w");

		ck_assert_ptr_nonnull(f);
		while (fwrite(big, 1, 4096, f) == 4096)
			;
		fclose(f);
	}
	memset(big, 'p', 4095);
	for (i = 0; i < 200 && rc == 0; i++) {
		rc = lease_record_insert(s, &(struct lease_spec){
		    .mode = LEASE_MODE_SANDBOXED, .policy = big }, id);
	}
	ck_assert_msg(rc == -ENOSPC, "rc %d: %s", rc, lease_store_errmsg(s));
	ck_assert_ptr_nonnull(strstr(lease_store_errmsg(s), "disk full"));
	lease_store_close(s);
	/* free the space: the journal is intact and usable */
	ck_assert_int_eq(unlink(fill), 0);
	s = open_ok();
	ck_assert_int_eq(lease_record_get(s, first, &r), 0);
	ck_assert_str_eq(r.name, "survivor");
	lease_record_clear(&r);
	ck_assert_int_eq(lease_record_transition(s, first, LEASE_EV_START, NULL,
	    NULL), 0);
	lease_store_close(s);
	free(fill);
	free(big);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Durability and concurrency                                          */

START_TEST(test_store_commit_survives_sigkill)
{
	struct lease_store *s = open_ok();
	char id[LEASE_ID_LEN + 1];
	struct lease_record r;
	int p[2], n;
	char c;
	pid_t pid;

	insert_ok(s, NULL, id);
	lease_store_close(s);
	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct lease_store *cs;

		close(p[0]);
		if (lease_store_open(&cs, db) != 0 ||
		    lease_record_transition(cs, id, LEASE_EV_START, "up",
		    NULL) != 0)
			_exit(1);
		/* committed: tell the parent, then keep writing activity */
		if (write(p[1], "k", 1) != 1)
			_exit(2);
		for (n = 0;; n++) {
			int rc = lease_record_set_activity(cs, id, n % 2 ?
			    LEASE_ACT_WORKING : LEASE_ACT_PROMPT, "loop");

			(void)rc;
		}
	}
	close(p[1]);
	ck_assert_int_eq(read(p[0], &c, 1), 1);
	kill(pid, SIGKILL);
	ck_assert_int_eq(lt_wait(pid), 128 + SIGKILL);
	close(p[0]);
	s = open_ok();
	ck_assert_int_eq(lease_record_get(s, id, &r), 0);
	ck_assert_int_eq(r.state, LEASE_STATE_RUNNING);
	lease_record_clear(&r);
	lease_store_close(s);
	/* transition rows are contiguous whatever the kill interrupted */
	ck_assert_int_eq(raw_int("SELECT max(seq) - count(*) FROM transitions"),
	    0);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM pragma_integrity_check "
	    "WHERE integrity_check = 'ok'"), 1);
}
END_TEST

START_TEST(test_store_concurrent_writers)
{
	struct lease_store *s = open_ok();
	char id[LEASE_ID_LEN + 1];
	pid_t pids[3];
	int i, j;

	insert_ok(s, NULL, id);
	lease_store_close(s);
	for (i = 0; i < 3; i++) {
		pids[i] = fork();
		ck_assert_int_ge(pids[i], 0);
		if (pids[i] == 0) {
			struct lease_store *cs;
			char mine[LEASE_ID_LEN + 1];

			if (lease_store_open(&cs, db) != 0)
				_exit(1);
			for (j = 0; j < 60; j++) {
				if (lease_record_set_activity(cs, id, (j + i) %
				    2 ? LEASE_ACT_WORKING : LEASE_ACT_PROMPT,
				    "w") != 0)
					_exit(2);
				if (lease_record_insert(cs,
				    &(struct lease_spec){
				    .mode = LEASE_MODE_TRUSTED_LOCAL }, mine)
				    != 0)
					_exit(3);
			}
			lease_store_close(cs);
			_exit(0);
		}
	}
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(lt_wait(pids[i]), 0);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM leases"), 181);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM (SELECT lease_id FROM "
	    "transitions GROUP BY lease_id HAVING max(seq) != count(*))"), 0);
}
END_TEST

/*
 * A writer that commits short transactions back to back (a holder writing
 * a flood of receipts) must not keep another writer out past its busy
 * timeout: SQLite's own timeout sleeps up to 100 ms a try and, seen under
 * load, lost every try for 5 s (`corral new` failed "database is
 * locked"): a writer descheduled while it holds the lock, on a loaded
 * machine. Here spinners load every CPU, the flood lasts 10 s and the
 * waiter has the busy timeout a command has (LEASE_BUSY_MS) for each of
 * twenty inserts. The longest insert is printed.
 */
START_TEST(test_store_waiter_not_starved)
{
	struct lease_store *s = open_ok();
	char id[LEASE_ID_LEN + 1], mine[LEASE_ID_LEN + 1];
	int go[2], i, rc;
	pid_t pid, spin[8];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t t0, longest = 0;
	char c;

	insert_ok(s, NULL, id);
	ncpu = ncpu < 1 ? 2 : ncpu > 4 ? 8 : 2 * ncpu;
	for (i = 0; i < ncpu; i++) {
		spin[i] = fork();
		ck_assert_int_ge(spin[i], 0);
		if (spin[i] == 0) {
			uint64_t end = cu_now_ms() + 12000;

			while (cu_now_ms() < end)
				;
			_exit(0);
		}
	}
	ck_assert_int_eq(pipe(go), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct lease_store *cs;
		uint64_t end;

		close(go[0]);
		if (lease_store_open(&cs, db) != 0)
			_exit(1);
		end = cu_now_ms() + 10000;
		for (i = 0; cu_now_ms() < end; i++) {
			if (lease_receipt_append(cs, id, "egress",
			    json_pack("{s:i}", "n", i), NULL) != 0)
				_exit(2);
			if (i == 20 && write(go[1], "g", 1) != 1)
				_exit(3);
		}
		lease_store_close(cs);
		_exit(0);
	}
	close(go[1]);
	ck_assert_int_eq(read(go[0], &c, 1), 1);
	close(go[0]);
	ck_assert_int_eq(lease_store_set_busy_timeout(s, LEASE_BUSY_MS), 0);
	t0 = cu_now_ms();
	for (i = 0; i < 20; i++) {
		uint64_t t1 = cu_now_ms();

		rc = lease_record_insert(s, &(struct lease_spec){
		    .mode = LEASE_MODE_TRUSTED_LOCAL }, mine);
		ck_assert_msg(rc == 0, "insert %d during the flood (%llu ms "
		    "in): %s", i, (unsigned long long)(cu_now_ms() - t0),
		    lease_store_errmsg(s));
		if (cu_now_ms() - t1 > longest)
			longest = cu_now_ms() - t1;
	}
	fprintf(stderr, "# waiter: 20 inserts in %llu ms during the flood, "
	    "the longest %llu ms\n", (unsigned long long)(cu_now_ms() - t0),
	    (unsigned long long)longest);
	/* all twenty went in while the flood still ran */
	ck_assert_uint_lt(cu_now_ms() - t0, 10000);
	ck_assert_int_eq(lt_wait(pid), 0);
	for (i = 0; i < ncpu; i++) {
		kill(spin[i], SIGKILL);
		lt_wait(spin[i]);
	}
	lease_store_close(s);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Migrations: a version-1 file (committed under tests/fixtures) to 2  */

/* Fill a store with what the v1 fixture holds. */
static void
fill_fixture(struct lease_store *s)
{
	char a[LEASE_ID_LEN + 1], b[LEASE_ID_LEN + 1];
	json_t *f;

	insert_ok(s, "fixture-one", a);
	ck_assert_int_eq(lease_resource_plan(s, a, LEASE_RES_BRANCH,
	    "corral/fixture", "/src/repo"), 0);
	ck_assert_int_eq(lease_resource_created(s, a, LEASE_RES_BRANCH,
	    "corral/fixture"), 0);
	ck_assert_int_eq(lease_record_transition(s, a, LEASE_EV_START, "up",
	    NULL), 0);
	f = json_pack("{s:s}", "kernel", "6.1.0");
	ck_assert_int_eq(lease_receipt_append(s, a, "preflight", f, NULL), 0);
	ck_assert_int_eq(lease_receipt_append(s, a, "start", NULL, NULL), 0);
	json_decref(f);
	insert_ok(s, "fixture-two", b);
	ck_assert_int_eq(lease_resource_plan(s, b, LEASE_RES_WORKSPACE,
	    "/state/leases/b/work", NULL), 0);
	ck_assert_int_eq(lease_record_transition(s, b, LEASE_EV_FAIL,
	    "holder_lost", NULL), 0);
}

/* Check what fill_fixture wrote, after migration to version 2. */
static void
check_fixture(struct lease_store *s)
{
	struct lease_record *v;
	int64_t len;
	size_t n;

	ck_assert_int_eq(lease_record_list(s, LEASE_LIST_ALL, &v, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(v[0].name, "fixture-one");
	ck_assert_int_eq(v[0].state, LEASE_STATE_RUNNING);
	ck_assert_str_eq(v[0].branch, "corral/fixture");
	ck_assert_int_eq(lease_receipt_verify(s, v[0].id, &len, NULL), 0);
	ck_assert_int_eq(len, 2);
	ck_assert_str_eq(v[1].name, "fixture-two");
	ck_assert_int_eq(v[1].state, LEASE_STATE_FAILED);
	ck_assert_str_eq(v[1].failed_reason, "holder_lost");
	ck_assert_int_eq(v[1].cleanup, LEASE_CLEANUP_PENDING);
	/* the journal keeps working after the migration */
	ck_assert_int_eq(lease_record_set_activity(s, v[0].id,
	    LEASE_ACT_PROMPT, "after migration"), 0);
	ck_assert_int_eq(lease_receipt_append(s, v[0].id, "after", NULL,
	    NULL), 0);
	ck_assert_int_eq(lease_receipt_verify(s, v[0].id, &len, NULL), 0);
	ck_assert_int_eq(len, 3);
	/* the usage columns came with version 5: zeros, then they move */
	ck_assert_int_eq(v[0].usage.requests, 0);
	ck_assert_int_eq(lease_receipt_append_usage(s, v[0].id,
	    "model_request", NULL, &(struct lease_usage){ .requests = 1,
	    .input = 10 }, NULL), 0);
	lease_record_list_free(v, n);
	ck_assert_int_eq(lease_record_list(s, LEASE_LIST_ALL, &v, &n), 0);
	ck_assert_int_eq(v[0].usage.requests, 1);
	ck_assert_int_eq(v[0].usage.input, 10);
	lease_record_list_free(v, n);
}

START_TEST(test_store_v1_then_v2)
{
	struct lease_store_opts o = { .max_version = 1 };
	struct lease_store *s;
	const char *out = getenv("CORRAL_WRITE_V1_FIXTURE");

	ck_assert_int_eq(lease_store_open_ex(&s, db, &o), 0);
	ck_assert_int_eq(lease_store_version(s), 1);
	fill_fixture(s);
	lease_store_close(s);
	ck_assert_int_eq(raw_int("PRAGMA user_version"), 1);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM sqlite_master WHERE "
	    "name = 'inventory'"), 0);
	if (out != NULL && *out != '\0') {
		size_t len;
		char *b = lt_slurp(db, &len);

		/* how tests/fixtures/lease-v1.db was made */
		ck_assert_int_eq(cu_write_file(out, b, len), 0);
		free(b);
	}
	s = open_ok();
	ck_assert_int_eq(lease_store_version(s), 5);
	check_fixture(s);
	lease_store_close(s);
	ck_assert_int_eq(raw_int("PRAGMA user_version"), 5);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM sqlite_master WHERE "
	    "name IN ('inventory', 'transitions_at', 'intents', 'probes')"), 4);
}
END_TEST

START_TEST(test_store_committed_v1_fixture)
{
	char *src = cu_src_path("tests/fixtures/lease-v1.db");
	struct lease_store *s;
	size_t len;
	char *b = lt_slurp(src, &len);

	ck_assert_int_eq(cu_write_file(db, b, len), 0);
	free(b);
	free(src);
	ck_assert_int_eq(raw_int("PRAGMA user_version"), 1);
	s = open_ok();
	ck_assert_int_eq(lease_store_version(s), 5);
	check_fixture(s);
	lease_store_close(s);
	ck_assert_int_eq(raw_int("PRAGMA user_version"), 5);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM inventory"), 0);
	ck_assert_int_eq(raw_int("SELECT count(*) FROM intents"), 0);
}
END_TEST

START_TEST(test_store_v1_opened_by_v1_stays_v1)
{
	struct lease_store_opts o = { .max_version = 1 };
	struct lease_store *s;

	ck_assert_int_eq(lease_store_open_ex(&s, db, &o), 0);
	lease_store_close(s);
	ck_assert_int_eq(lease_store_open_ex(&s, db, &o), 0);
	ck_assert_int_eq(lease_store_version(s), 1);
	lease_store_close(s);
	o.max_version = LEASE_SCHEMA_VERSION + 1;
	ck_assert_int_eq(lease_store_open_ex(&s, db, &o), -EINVAL);
	lease_store_close(s);
}
END_TEST

Suite *store_suite(void);

Suite *
store_suite(void)
{
	Suite *s = suite_create("store");
	TCase *tc = tcase_create("Core");
	TCase *bad = tcase_create("Errors");
	TCase *dur = tcase_create("Durability");
	TCase *mig = tcase_create("Migration");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_store_open_creates_v2_wal);
	tcase_add_test(tc, test_store_insert_get_list);
	tcase_add_test(tc, test_store_insert_rejects_bad_spec);
	tcase_add_test(tc, test_store_ids_unique_and_kept);
	tcase_add_test(tc, test_store_transitions);
	tcase_add_test(tc, test_store_claim_against_reconcile);
	tcase_add_test(tc, test_store_failed_reason_and_cleanup_pending);
	tcase_add_test(tc, test_store_activity_unseen);
	tcase_add_test(tc, test_store_fields_holder);
	tcase_add_test(tc, test_store_resources);
	tcase_add_test(tc, test_store_events);
	tcase_add_test(tc, test_store_delete_refuses_live);
	suite_add_tcase(s, tc);

	tcase_add_checked_fixture(bad, setup, teardown);
	tcase_set_timeout(bad, 30);
	tcase_add_test(bad, test_store_garbage_file);
	tcase_add_test(bad, test_store_truncated_file);
	tcase_add_test(bad, test_store_smashed_page);
	tcase_add_test(bad, test_store_foreign_sqlite);
	tcase_add_test(bad, test_store_newer_schema);
	tcase_add_test(bad, test_store_not_a_file);
	tcase_add_test(bad, test_store_locked_write_times_out);
	tcase_add_test(bad, test_store_locked_open_times_out);
	tcase_add_test(bad, test_store_readonly_dir_new_db);
	tcase_add_test(bad, test_store_readonly_dir_existing_db);
	tcase_add_test(bad, test_store_unwritable_dir_as_user);
	tcase_add_test(bad, test_store_disk_full);
	suite_add_tcase(s, bad);

	tcase_add_checked_fixture(dur, setup, teardown);
	tcase_set_timeout(dur, 60);
	tcase_add_test(dur, test_store_commit_survives_sigkill);
	tcase_add_test(dur, test_store_concurrent_writers);
	tcase_add_test(dur, test_store_waiter_not_starved);
	suite_add_tcase(s, dur);

	tcase_add_checked_fixture(mig, setup, teardown);
	tcase_add_test(mig, test_store_v1_then_v2);
	tcase_add_test(mig, test_store_committed_v1_fixture);
	tcase_add_test(mig, test_store_v1_opened_by_v1_stays_v1);
	suite_add_tcase(s, mig);
	return s;
}
