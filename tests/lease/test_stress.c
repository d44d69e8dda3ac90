/*
 * test_stress.c: random SIGKILLs of a "holder" (provisions a lease, records
 * itself, runs, writes activity and receipts, rejects and tears down) and
 * of a "console" (reconciles in a loop) at random moments, then one
 * reconciliation and the crash invariants of SPEC 9.2. A few iterations
 * run in `make test`; CORRAL_STRESS=N runs N (the stress target uses 60)
 * and the figures go to stderr.
 */
#include <sys/random.h>
#include <time.h>

#include "lease_recover_util.h"

static struct rt t;

static void
setup(void)
{
	rt_setup(&t, "stress");
}

static void
teardown(void)
{
	rt_teardown(&t);
}

static unsigned
rnd(unsigned n)
{
	unsigned v = 0;

	ck_assert_int_eq(getrandom(&v, sizeof v, 0), (ssize_t)sizeof v);
	return n ? v % n : v;
}

static void
holder_main(void)
{
	struct lease_store *s;
	struct lease_lock *lk;
	char id[LEASE_ID_LEN + 1];
	struct lease_spec sp = { .mode = LEASE_MODE_SANDBOXED,
		.repo = t.repo };
	int64_t start;
	json_t *f;
	int i, rc;

	if (lease_store_open(&s, t.db) != 0 ||
	    lease_lock_acquire(t.state, 10000, &lk) != 0 ||
	    lease_record_insert(s, &sp, id) != 0 ||
	    lease_provision_git(s, lk, t.state, id, t.repo, NULL, NULL) != 0 ||
	    lease_proc_start(getpid(), &start) != 0 ||
	    lease_record_set_holder(s, id, getpid(), start) != 0)
		_exit(2);
	/* the holder is recorded before the lock goes (see lease.h) */
	lease_lock_release(lk);
	if (lease_record_transition(s, id, LEASE_EV_START, NULL, NULL) != 0)
		_exit(3);
	for (i = 0; i < 20; i++) {
		rc = lease_record_set_activity(s, id,
		    i % 2 ? LEASE_ACT_WORKING :
		    LEASE_ACT_PROMPT, "stress");
		f = json_pack("{s:i}", "i", i);
		if (rc != 0 || lease_receipt_append(s, id, "tick", f, NULL) !=
		    0)
			_exit(4);
		json_decref(f);
	}
	if (lease_record_transition(s, id, LEASE_EV_RESULT, NULL, NULL) != 0 ||
	    lease_record_transition(s, id, LEASE_EV_REJECT, "stress",
	    NULL) != 0 ||
	    lease_provision_teardown(s, t.state, id,
	        LEASE_TEARDOWN_RUNTIME) != 0)
		_exit(5);
	lease_store_close(s);
	_exit(0);
}

static void
console_main(void)
{
	struct lease_store *s;
	struct lease_lock *lk;
	struct lease_report *rep;

	if (lease_store_open(&s, t.db) != 0)
		_exit(2);
	for (;;) {
		if (lease_lock_acquire(t.state, 10000, &lk) != 0)
			_exit(3);
		if (lease_recover_reconcile(s, lk, t.state, NULL, NULL, 0,
		    &rep) != 0)
			_exit(4);
		lease_recover_report_free(rep);
		lease_lock_release(lk);
	}
}

struct figures {
	int iterations, holder_kills, console_kills, holder_done;
	int interrupted, holder_lost, rejected;
};

START_TEST(test_stress_random_sigkills)
{
	const char *env = getenv("CORRAL_STRESS");
	int iterations = env != NULL ? atoi(env) : 4;
	struct figures fig = { 0 };
	struct lease_report *rep;
	struct lease_record *v;
	size_t n, k, nleases, before = 0;
	unsigned span_ms = 50;
	pid_t holder, console;
	int i, st;

	ck_assert_int_gt(iterations, 0);
	for (i = 0; i < iterations; i++) {
		/* kill anywhere in a holder's life, as long as it takes here */
		unsigned ms = rnd(span_ms + span_ms / 4 + 1);
		struct timespec d = { ms / 1000, (long)(ms % 1000) * 1000000L };
		/* whom to kill: 0 holder, 1 console, 2 both */
		unsigned who = i == 0 ? 1 : rnd(3);
		uint64_t t0 = cu_now_ms();

		holder = fork();
		ck_assert_int_ge(holder, 0);
		if (holder == 0)
			holder_main();
		console = fork();
		ck_assert_int_ge(console, 0);
		if (console == 0)
			console_main();
		nanosleep(&d, NULL);
		if (who != 1)
			ck_assert_int_eq(kill(holder, SIGKILL), 0);
		if (who != 0)
			ck_assert_int_eq(kill(console, SIGKILL), 0);
		st = lt_wait(holder);
		if (st == 128 + SIGKILL) {
			fig.holder_kills++;
		} else {
			ck_assert_int_eq(st, 0);	/* it finished first */
			fig.holder_done++;
			if (cu_now_ms() - t0 > span_ms)
				span_ms = (unsigned)(cu_now_ms() - t0);
		}
		if (who == 0)
			kill(console, SIGKILL);	/* it loops forever */
		ck_assert_int_eq(lt_wait(console), 128 + SIGKILL);
		fig.console_kills++;
		/* the next console start: one reconciliation */
		rep = rt_reconcile(&t, NULL, 0);
		ck_assert_uint_eq(rt_count(rep, LEASE_FIND_ORPHAN), 0);
		ck_assert_uint_eq(rt_count(rep, LEASE_FIND_LIVE), 0);
		lease_recover_report_free(rep);
		/* at most one new lease (none if killed before insert) */
		nleases = rt_invariants(&t);
		ck_assert_uint_ge(nleases, before);
		ck_assert_uint_le(nleases, before + 1);
		before = nleases;
	}
	ck_assert_int_eq(lease_record_list(t.s, LEASE_LIST_ALL, &v, &n), 0);
	for (k = 0; k < n; k++) {
		/*
		 * Final, or a result waiting for the operator: a holder
		 * killed between its result and its reject leaves a
		 * result_ready lease, which reconcile rightly keeps (seen
		 * under load, where that window is wider).
		 */
		ck_assert_msg(lease_fsm_state_final(v[k].state) ||
		    v[k].state == LEASE_STATE_RESULT_READY, "lease %s left %s",
		    v[k].id, lease_fsm_state_name(v[k].state));
		if (v[k].state == LEASE_STATE_REJECTED)
			fig.rejected++;
		else if (v[k].failed_reason != NULL &&
		    strcmp(v[k].failed_reason, "holder_lost") == 0)
			fig.holder_lost++;
		else
			fig.interrupted++;
		/* nothing runtime left behind except kept workspaces */
		if (v[k].state != LEASE_STATE_FAILED ||
		    strcmp(v[k].failed_reason, "holder_lost") != 0)
			ck_assert(v[k].cleanup == LEASE_CLEANUP_CONFIRMED ||
			    v[k].cleanup == LEASE_CLEANUP_NONE);
	}
	lease_record_list_free(v, n);
	fig.iterations = iterations;
	fprintf(stderr, "stress: %d iterations, %d SIGKILLs (holder %d, "
	    "console %d), holders finished %d; leases: %d rejected, %d "
	    "holder_lost, %d provisioning_interrupted; invariants held\n",
	    fig.iterations, fig.holder_kills + fig.console_kills,
	    fig.holder_kills, fig.console_kills, fig.holder_done,
	    fig.rejected, fig.holder_lost, fig.interrupted);
}
END_TEST

Suite *stress_suite(void);

Suite *
stress_suite(void)
{
	Suite *s = suite_create("stress");
	TCase *tc = tcase_create("Kill");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 900);
	tcase_add_test(tc, test_stress_random_sigkills);
	suite_add_tcase(s, tc);
	return s;
}
