/*
 * fsm.c: the pure lease state machine of SPEC 5.1 and the names of every
 * enumerated state the journal stores (lease state, event, activity of
 * SPEC 5.2, cleanup, mode). No I/O; returns codes only.
 */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "lease/lease.h"

#define NONE (-1)

/* next[state][event], NONE where SPEC 5.1 has no arrow. */
static const int fsm_table[LEASE_STATE_COUNT][LEASE_EV_COUNT] = {
	[LEASE_STATE_PROVISIONING] = {
		[LEASE_EV_START] = LEASE_STATE_RUNNING,
		[LEASE_EV_RESULT] = NONE,
		[LEASE_EV_APPLY] = NONE,
		[LEASE_EV_REJECT] = NONE,
		[LEASE_EV_FAIL] = LEASE_STATE_FAILED,
		[LEASE_EV_CANCEL] = LEASE_STATE_CANCELLED,
	},
	[LEASE_STATE_RUNNING] = {
		[LEASE_EV_START] = NONE,
		[LEASE_EV_RESULT] = LEASE_STATE_RESULT_READY,
		[LEASE_EV_APPLY] = NONE,
		[LEASE_EV_REJECT] = NONE,
		[LEASE_EV_FAIL] = LEASE_STATE_FAILED,
		[LEASE_EV_CANCEL] = LEASE_STATE_CANCELLED,
	},
	[LEASE_STATE_RESULT_READY] = {
		[LEASE_EV_START] = NONE,	/* never back to running */
		[LEASE_EV_RESULT] = NONE,
		[LEASE_EV_APPLY] = LEASE_STATE_APPLIED,
		[LEASE_EV_REJECT] = LEASE_STATE_REJECTED,
		[LEASE_EV_FAIL] = NONE,
		[LEASE_EV_CANCEL] = NONE,
	},
	[LEASE_STATE_APPLIED] = {
		NONE, NONE, NONE, NONE, NONE, NONE
	},
	[LEASE_STATE_REJECTED] = {
		NONE, NONE, NONE, NONE, NONE, NONE
	},
	[LEASE_STATE_FAILED] = {
		NONE, NONE, NONE, NONE, NONE, NONE
	},
	[LEASE_STATE_CANCELLED] = {
		NONE, NONE, NONE, NONE, NONE, NONE
	},
};

int
lease_fsm_next(enum lease_state cur, enum lease_event ev,
    enum lease_state *next)
{
	int n;

	assert(next != NULL);
	if ((unsigned)cur >= LEASE_STATE_COUNT ||
	    (unsigned)ev >= LEASE_EV_COUNT)
		return LEASE_EBADTRANSITION;
	n = fsm_table[cur][ev];
	if (n == NONE)
		return LEASE_EBADTRANSITION;
	*next = (enum lease_state)n;
	return 0;
}

bool
lease_fsm_state_final(enum lease_state s)
{
	return s == LEASE_STATE_APPLIED || s == LEASE_STATE_REJECTED ||
	    s == LEASE_STATE_FAILED || s == LEASE_STATE_CANCELLED;
}

static const char *const state_names[LEASE_STATE_COUNT] = {
	[LEASE_STATE_PROVISIONING] = "provisioning",
	[LEASE_STATE_RUNNING] = "running",
	[LEASE_STATE_RESULT_READY] = "result_ready",
	[LEASE_STATE_APPLIED] = "applied",
	[LEASE_STATE_REJECTED] = "rejected",
	[LEASE_STATE_FAILED] = "failed",
	[LEASE_STATE_CANCELLED] = "cancelled",
};

static const char *const event_names[LEASE_EV_COUNT] = {
	[LEASE_EV_START] = "start",
	[LEASE_EV_RESULT] = "result",
	[LEASE_EV_APPLY] = "apply",
	[LEASE_EV_REJECT] = "reject",
	[LEASE_EV_FAIL] = "fail",
	[LEASE_EV_CANCEL] = "cancel",
};

static const char *const activity_names[LEASE_ACT_COUNT] = {
	[LEASE_ACT_STARTING] = "starting",
	[LEASE_ACT_WORKING] = "working",
	[LEASE_ACT_PROMPT] = "prompt",
	[LEASE_ACT_BLOCKED] = "blocked",
	[LEASE_ACT_DONE] = "done",
	[LEASE_ACT_FAILED] = "failed",
	[LEASE_ACT_CANCELLED] = "cancelled",
};

static const char *const cleanup_names[LEASE_CLEANUP_COUNT] = {
	[LEASE_CLEANUP_NONE] = "none",
	[LEASE_CLEANUP_PENDING] = "pending",
	[LEASE_CLEANUP_CONFIRMED] = "confirmed",
	[LEASE_CLEANUP_FAILED] = "failed",
};

static const char *const mode_names[LEASE_MODE_COUNT] = {
	[LEASE_MODE_SANDBOXED] = "sandboxed",
	[LEASE_MODE_TRUSTED_LOCAL] = "trusted_local",
};

static const char *
name_of(const char *const *names, unsigned n, unsigned v)
{
	return v < n ? names[v] : "?";
}

static int
parse_of(const char *const *names, unsigned n, const char *s, int *out)
{
	unsigned i;

	if (s == NULL)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (strcmp(names[i], s) == 0) {
			*out = (int)i;
			return 0;
		}
	}
	return -EINVAL;
}

#define NAMES(pfx, type, table, count)					\
const char *								\
pfx##_name(enum type v)							\
{									\
	return name_of(table, count, (unsigned)v);			\
}									\
int									\
pfx##_parse(const char *s, enum type *out)				\
{									\
	int v, rc;							\
									\
	assert(out != NULL);						\
	if ((rc = parse_of(table, count, s, &v)) == 0)			\
		*out = (enum type)v;					\
	return rc;							\
}

NAMES(lease_fsm_state, lease_state, state_names, LEASE_STATE_COUNT)
NAMES(lease_fsm_event, lease_event, event_names, LEASE_EV_COUNT)
NAMES(lease_fsm_activity, lease_activity, activity_names, LEASE_ACT_COUNT)
NAMES(lease_fsm_cleanup, lease_cleanup, cleanup_names, LEASE_CLEANUP_COUNT)
NAMES(lease_fsm_mode, lease_mode, mode_names, LEASE_MODE_COUNT)
