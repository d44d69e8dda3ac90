/*
 * test_fsm.c: the lease state machine, exhaustively (SPEC 5.1): every
 * (state, event) pair against an independent list of the legal arrows,
 * and the names of every enumerated state.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "lease/lease.h"

/* The arrows of SPEC 5.1, written out independently of fsm.c's table. */
static const struct {
	enum lease_state from;
	enum lease_event ev;
	enum lease_state to;
} legal[] = {
	{ LEASE_STATE_PROVISIONING, LEASE_EV_START, LEASE_STATE_RUNNING },
	{ LEASE_STATE_RUNNING, LEASE_EV_RESULT, LEASE_STATE_RESULT_READY },
	{ LEASE_STATE_RESULT_READY, LEASE_EV_APPLY, LEASE_STATE_APPLIED },
	{ LEASE_STATE_RESULT_READY, LEASE_EV_REJECT, LEASE_STATE_REJECTED },
	{ LEASE_STATE_PROVISIONING, LEASE_EV_FAIL, LEASE_STATE_FAILED },
	{ LEASE_STATE_RUNNING, LEASE_EV_FAIL, LEASE_STATE_FAILED },
	{ LEASE_STATE_PROVISIONING, LEASE_EV_CANCEL, LEASE_STATE_CANCELLED },
	{ LEASE_STATE_RUNNING, LEASE_EV_CANCEL, LEASE_STATE_CANCELLED },
};

/* _i enumerates every (state, event) pair. */
START_TEST(test_fsm_every_pair)
{
	enum lease_state cur = (enum lease_state)(_i / LEASE_EV_COUNT);
	enum lease_event ev = (enum lease_event)(_i % LEASE_EV_COUNT);
	enum lease_state next = (enum lease_state)99;
	int rc, want = -1;
	size_t k;

	for (k = 0; k < sizeof legal / sizeof legal[0]; k++)
		if (legal[k].from == cur && legal[k].ev == ev)
			want = (int)legal[k].to;
	rc = lease_fsm_next(cur, ev, &next);
	if (want < 0) {
		ck_assert_msg(rc == LEASE_EBADTRANSITION, "%s + %s allowed",
		    lease_fsm_state_name(cur), lease_fsm_event_name(ev));
		ck_assert_int_eq(next, 99);	/* untouched */
	} else {
		ck_assert_int_eq(rc, 0);
		ck_assert_str_eq(lease_fsm_state_name(next),
		    lease_fsm_state_name((enum lease_state)want));
	}
}
END_TEST

START_TEST(test_fsm_result_ready_never_runs_again)
{
	enum lease_state next;
	int ev;

	for (ev = 0; ev < LEASE_EV_COUNT; ev++) {
		if (lease_fsm_next(LEASE_STATE_RESULT_READY,
		    (enum lease_event)ev, &next) == 0)
			ck_assert_int_ne(next, LEASE_STATE_RUNNING);
	}
	ck_assert_int_eq(lease_fsm_next(LEASE_STATE_RESULT_READY,
	    LEASE_EV_START, &next), LEASE_EBADTRANSITION);
}
END_TEST

START_TEST(test_fsm_final_states)
{
	int s, ev, legal_out;
	enum lease_state next;

	for (s = 0; s < LEASE_STATE_COUNT; s++) {
		legal_out = 0;
		for (ev = 0; ev < LEASE_EV_COUNT; ev++)
			if (lease_fsm_next((enum lease_state)s,
			    (enum lease_event)ev, &next) == 0)
				legal_out++;
		ck_assert_int_eq(lease_fsm_state_final((enum lease_state)s),
		    legal_out == 0);
	}
}
END_TEST

START_TEST(test_fsm_out_of_range)
{
	enum lease_state next;

	ck_assert_int_eq(lease_fsm_next(LEASE_STATE_COUNT, LEASE_EV_START,
	    &next), LEASE_EBADTRANSITION);
	ck_assert_int_eq(lease_fsm_next(LEASE_STATE_RUNNING, LEASE_EV_COUNT,
	    &next), LEASE_EBADTRANSITION);
}
END_TEST

START_TEST(test_fsm_names_round_trip)
{
	static const char *const states[] = { "provisioning", "running",
		"result_ready", "applied", "rejected", "failed", "cancelled" };
	static const char *const acts[] = { "starting", "working", "prompt",
		"blocked", "done", "failed", "cancelled" };
	static const char *const cleanups[] = { "none", "pending",
		"confirmed", "failed" };
	enum lease_state st;
	enum lease_activity ac;
	enum lease_cleanup cl;
	enum lease_mode mo;
	enum lease_event ev;
	int i;

	for (i = 0; i < LEASE_STATE_COUNT; i++) {
		ck_assert_str_eq(lease_fsm_state_name((enum lease_state)i),
		    states[i]);
		ck_assert_int_eq(lease_fsm_state_parse(states[i], &st), 0);
		ck_assert_int_eq(st, i);
	}
	for (i = 0; i < LEASE_ACT_COUNT; i++) {
		ck_assert_str_eq(lease_fsm_activity_name(
		    (enum lease_activity)i), acts[i]);
		ck_assert_int_eq(lease_fsm_activity_parse(acts[i], &ac), 0);
		ck_assert_int_eq(ac, i);
	}
	for (i = 0; i < LEASE_CLEANUP_COUNT; i++) {
		ck_assert_str_eq(lease_fsm_cleanup_name((enum lease_cleanup)i),
		    cleanups[i]);
		ck_assert_int_eq(lease_fsm_cleanup_parse(cleanups[i], &cl), 0);
		ck_assert_int_eq(cl, i);
	}
	for (i = 0; i < LEASE_EV_COUNT; i++) {
		ck_assert_int_eq(lease_fsm_event_parse(
		    lease_fsm_event_name((enum lease_event)i), &ev), 0);
		ck_assert_int_eq(ev, i);
	}
	ck_assert_str_eq(lease_fsm_mode_name(LEASE_MODE_SANDBOXED),
	    "sandboxed");
	ck_assert_str_eq(lease_fsm_mode_name(LEASE_MODE_TRUSTED_LOCAL),
	    "trusted_local");
	ck_assert_int_eq(lease_fsm_mode_parse("trusted_local", &mo), 0);
	ck_assert_int_eq(mo, LEASE_MODE_TRUSTED_LOCAL);
	ck_assert_int_eq(lease_fsm_state_parse("Running", &st), -EINVAL);
	ck_assert_int_eq(lease_fsm_state_parse("", &st), -EINVAL);
	ck_assert_int_eq(lease_fsm_state_parse(NULL, &st), -EINVAL);
	ck_assert_int_eq(lease_fsm_activity_parse("idle", &ac), -EINVAL);
	ck_assert_str_eq(lease_fsm_state_name(LEASE_STATE_COUNT), "?");
}
END_TEST

Suite *fsm_suite(void);

Suite *
fsm_suite(void)
{
	Suite *s = suite_create("fsm");
	TCase *tc = tcase_create("Core");

	tcase_add_loop_test(tc, test_fsm_every_pair, 0,
	    LEASE_STATE_COUNT * LEASE_EV_COUNT);
	tcase_add_test(tc, test_fsm_result_ready_never_runs_again);
	tcase_add_test(tc, test_fsm_final_states);
	tcase_add_test(tc, test_fsm_out_of_range);
	tcase_add_test(tc, test_fsm_names_round_trip);
	suite_add_tcase(s, tc);
	return s;
}
