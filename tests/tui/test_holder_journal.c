/*
 * test_holder_journal.c: the holder's journal queue (tui/runtime/
 * holder_journal.c, issue 16 items 9 and 10) on a real SQLite journal in a
 * temp directory: queuing never waits while another connection holds the
 * write lock for seconds, the status says "waiting" then "ok", and every
 * entry is written afterwards in its order with the receipt chain intact;
 * on a full file system (a private tmpfs) the status says "unwritable"
 * and the entries are written once space returns; activity rows that are
 * only the current value coalesce; a refused write (a transition the
 * state machine forbids) is not retried and holds nothing up; an idle
 * queue lets its handle go (issue 17) and opens it again for the next
 * write.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "support/check_util.h"
#include "lease/lease.h"
#include "tui/runtime/runtime_int.h"

Suite *holder_journal_suite(void);

static char *tmp;
static char db[4096];

static void
setup(void)
{
	tmp = cu_tmpdir("hjournal");
	snprintf(db, sizeof db, "%s/corral.db", tmp);
}

static void
teardown(void)
{
	umount2(tmp, MNT_DETACH);
	cu_rmrf(tmp);
	free(tmp);
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A journal with one lease in provisioning; its ID in id. */
static void
make_lease(char id[LEASE_ID_LEN + 1])
{
	struct lease_store *s;
	struct lease_spec sp = { .name = "q", .mode = LEASE_MODE_SANDBOXED,
		.adapter = "bwrap", .isolation = "bwrap" };

	ck_assert_int_eq(lease_store_open(&s, db), 0);
	ck_assert_msg(lease_record_insert(s, &sp, id) == 0, "%s",
	    lease_store_errmsg(s));
	lease_store_close(s);
}

/* Poll the status until want, at most ms. */
static bool
status_becomes(struct tui_holder_journal *q,
    enum tui_holder_journal_state want, unsigned ms)
{
	uint64_t until = now_ms() + ms;

	while (now_ms() < until) {
		if (tui_holder_journal_status(q, NULL, NULL, 0) == want)
			return true;
		usleep(20000);
	}
	return false;
}

/* The lease's receipts: each entry's fields.n, in chain order, in out. */
static size_t
receipt_ns(const char *id, int *out, size_t max)
{
	struct lease_store *s;
	json_t *a, *e;
	size_t i, n = 0;

	ck_assert_int_eq(lease_store_open(&s, db), 0);
	ck_assert_int_eq(lease_receipt_verify(s, id, NULL, NULL), 0);
	ck_assert_int_eq(lease_receipt_entries(s, id, &a), 0);
	json_array_foreach(a, i, e) {
		json_t *v = json_object_get(json_object_get(e, "fields"), "n");

		if (v != NULL && n < max)
			out[n++] = (int)json_integer_value(v);
	}
	json_decref(a);
	lease_store_close(s);
	return n;
}

START_TEST(test_hjournal_lock_held)
{
	char id[LEASE_ID_LEN + 1], err[256];
	struct tui_holder_journal *q;
	sqlite3 *other;
	uint64_t t0, took;
	int ns[64];
	size_t n, queued;
	int i;

	make_lease(id);
	/* another process's long write transaction */
	ck_assert_int_eq(sqlite3_open(db, &other), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(other, "BEGIN IMMEDIATE; UPDATE ids "
	    "SET at = at WHERE 0", NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(tui_holder_journal_new(&q, tmp, id, NULL), 0);
	t0 = now_ms();
	for (i = 0; i < 40; i++)
		ck_assert_int_eq(tui_holder_journal_receipt(q, "tick",
		    json_pack("{s:i}", "n", i)), 0);
	ck_assert_int_eq(tui_holder_journal_transition(q, LEASE_EV_START,
	    "up"), 0);
	took = now_ms() - t0;
	/* the loop's side never waits on SQLite */
	ck_assert_msg(took < 200, "queuing took %llu ms",
	    (unsigned long long)took);
	ck_assert(status_becomes(q, TUI_HOLDER_JOURNAL_WAITING, 5000));
	ck_assert_int_eq(tui_holder_journal_status(q, &queued, err,
	    sizeof err), TUI_HOLDER_JOURNAL_WAITING);
	ck_assert_uint_eq(queued, 41);
	ck_assert_ptr_nonnull(strstr(err, "lock"));
	/* held past every busy timeout: still kept */
	usleep(6500 * 1000);
	ck_assert_int_eq(tui_holder_journal_status(q, &queued, NULL, 0),
	    TUI_HOLDER_JOURNAL_WAITING);
	ck_assert_uint_eq(queued, 41);
	ck_assert_int_eq(sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL),
	    SQLITE_OK);
	sqlite3_close(other);
	tui_holder_journal_wait(q, tui_holder_journal_mark(q));
	ck_assert_int_eq(tui_holder_journal_status(q, &queued, NULL, 0),
	    TUI_HOLDER_JOURNAL_OK);
	ck_assert_uint_eq(queued, 0);
	tui_holder_journal_free(q);
	/* every one, in order, the chain intact */
	n = receipt_ns(id, ns, 64);
	ck_assert_uint_eq(n, 40);
	for (i = 0; i < 40; i++)
		ck_assert_int_eq(ns[i], i);
	{
		struct lease_store *s;
		struct lease_record r;

		ck_assert_int_eq(lease_store_open(&s, db), 0);
		ck_assert_int_eq(lease_record_get(s, id, &r), 0);
		ck_assert_int_eq(r.state, LEASE_STATE_RUNNING);
		lease_record_clear(&r);
		lease_store_close(s);
	}
}
END_TEST

START_TEST(test_hjournal_disk_full)
{
	char id[LEASE_ID_LEN + 1], fill[4200], err[256];
	struct tui_holder_journal *q;
	char *big;
	FILE *f;
	int ns[8], i;

	ck_assert_int_eq(unshare(CLONE_NEWNS), 0);
	ck_assert_int_eq(mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL),
	    0);
	ck_assert_int_eq(mount("tmpfs", tmp, "tmpfs", 0, "size=1m"), 0);
	make_lease(id);
	ck_assert_int_eq(tui_holder_journal_new(&q, tmp, id, NULL), 0);
	/* the worker's handle is open, its log empty; then nothing left */
	ck_assert_int_eq(tui_holder_journal_receipt(q, "first",
	    json_pack("{s:i}", "n", 0)), 0);
	tui_holder_journal_wait(q, tui_holder_journal_mark(q));
	{
		sqlite3 *c;

		ck_assert_int_eq(sqlite3_open(db, &c), SQLITE_OK);
		ck_assert_int_eq(sqlite3_exec(c, "PRAGMA wal_checkpoint("
		    "TRUNCATE)", NULL, NULL, NULL), SQLITE_OK);
		sqlite3_close(c);
	}
	snprintf(fill, sizeof fill, "%s/fill", tmp);
	big = calloc(1, 4096);
	ck_assert_ptr_nonnull(f = fopen(fill, "w"));
	while (fwrite(big, 1, 4096, f) == 4096 && fflush(f) == 0)
		;
	fclose(f);
	free(big);
	for (i = 1; i < 4; i++)
		ck_assert_int_eq(tui_holder_journal_receipt(q, "tick",
		    json_pack("{s:i}", "n", i)), 0);
	ck_assert(status_becomes(q, TUI_HOLDER_JOURNAL_UNWRITABLE, 5000));
	ck_assert_int_eq(tui_holder_journal_status(q, NULL, err, sizeof err),
	    TUI_HOLDER_JOURNAL_UNWRITABLE);
	ck_assert_ptr_nonnull(strstr(err, "disk full"));
	ck_assert_int_eq(unlink(fill), 0);
	tui_holder_journal_wait(q, tui_holder_journal_mark(q));
	ck_assert_int_eq(tui_holder_journal_status(q, NULL, NULL, 0),
	    TUI_HOLDER_JOURNAL_OK);
	tui_holder_journal_free(q);
	ck_assert_uint_eq(receipt_ns(id, ns, 8), 4);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(ns[i], i);
}
END_TEST

START_TEST(test_hjournal_coalesce_and_refusal)
{
	char id[LEASE_ID_LEN + 1];
	struct tui_holder_journal *q;
	struct lease_store *s;
	struct lease_record r;
	sqlite3 *other;
	size_t queued;
	int ns[4], i;

	make_lease(id);
	ck_assert_int_eq(sqlite3_open(db, &other), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(other, "BEGIN IMMEDIATE; UPDATE ids "
	    "SET at = at WHERE 0", NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(tui_holder_journal_new(&q, tmp, id, NULL), 0);
	/* refused by the state machine: provisioning -> result_ready */
	ck_assert_int_eq(tui_holder_journal_transition(q, LEASE_EV_RESULT,
	    "no"), 0);
	for (i = 0; i < 1000; i++)
		ck_assert_int_eq(tui_holder_journal_activity(q, i % 2 ?
		    LEASE_ACT_WORKING : LEASE_ACT_PROMPT, NULL, false), 0);
	ck_assert_int_eq(tui_holder_journal_receipt(q, "after",
	    json_pack("{s:i}", "n", 7)), 0);
	tui_holder_journal_status(q, &queued, NULL, 0);
	/* the refused one, one current activity, the receipt */
	ck_assert_uint_le(queued, 4);
	ck_assert_int_eq(sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL),
	    SQLITE_OK);
	sqlite3_close(other);
	tui_holder_journal_free(q);	/* drains first */
	ck_assert_uint_eq(receipt_ns(id, ns, 4), 1);
	ck_assert_int_eq(ns[0], 7);
	ck_assert_int_eq(lease_store_open(&s, db), 0);
	ck_assert_int_eq(lease_record_get(s, id, &r), 0);
	ck_assert_int_eq(r.state, LEASE_STATE_PROVISIONING);
	/* the last one queued stands */
	ck_assert_int_eq(r.activity, LEASE_ACT_WORKING);
	lease_record_clear(&r);
	lease_store_close(s);
}
END_TEST

/* Descriptors of this process open on the journal file itself. */
static int
db_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[64], to[4096];
	int n = 0;
	ssize_t k;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL) {
		snprintf(path, sizeof path, "/proc/self/fd/%.16s", e->d_name);
		if ((k = readlink(path, to, sizeof to - 1)) <= 0)
			continue;
		to[k] = '\0';
		n += strcmp(to, db) == 0;
	}
	closedir(d);
	return n;
}

/* Poll until the journal file is open n times here, at most ms. */
static bool
db_fds_become(int n, unsigned ms)
{
	uint64_t until = now_ms() + ms;

	while (now_ms() < until) {
		if (db_fds() == n)
			return true;
		usleep(50000);
	}
	return false;
}

START_TEST(test_hjournal_idle_lets_go)
{
	char id[LEASE_ID_LEN + 1], real[4096];
	struct tui_holder_journal *q;
	int ns[4];

	make_lease(id);
	/* readlink gives the resolved path */
	ck_assert_ptr_nonnull(realpath(db, real));
	snprintf(db, sizeof db, "%s", real);
	ck_assert_int_eq(tui_holder_journal_new(&q, tmp, id, NULL), 0);
	ck_assert_int_eq(tui_holder_journal_receipt(q, "first",
	    json_pack("{s:i}", "n", 1)), 0);
	tui_holder_journal_wait(q, tui_holder_journal_mark(q));
	ck_assert_int_eq(db_fds(), 1);
	/* idle: the worker closes it (within seconds, never at once) */
	ck_assert_msg(db_fds_become(0, 30000), "the idle queue kept its "
	    "journal handle open");
	ck_assert_int_eq(tui_holder_journal_receipt(q, "second",
	    json_pack("{s:i}", "n", 2)), 0);
	tui_holder_journal_wait(q, tui_holder_journal_mark(q));
	ck_assert_int_eq(tui_holder_journal_status(q, NULL, NULL, 0),
	    TUI_HOLDER_JOURNAL_OK);
	tui_holder_journal_free(q);
	ck_assert_uint_eq(receipt_ns(id, ns, 4), 2);
	ck_assert_int_eq(ns[0], 1);
	ck_assert_int_eq(ns[1], 2);
}
END_TEST

Suite *
holder_journal_suite(void)
{
	Suite *s = suite_create("holder_journal");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_hjournal_lock_held);
	tcase_add_test(tc, test_hjournal_disk_full);
	tcase_add_test(tc, test_hjournal_coalesce_and_refusal);
	tcase_add_test(tc, test_hjournal_idle_lets_go);
	suite_add_tcase(s, tc);
	return s;
}
