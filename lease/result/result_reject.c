/*
 * result_reject.c: reject (SPEC 7.5): under the lease's lock, a
 * result_ready lease becomes rejected (a failed or cancelled one keeps its
 * state), the journal records it, the composition root's callback removes
 * what lease/ cannot, and the runtime resources go; the branch, the lease
 * directory, the receipts and the history stay.
 */
#include <assert.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease/result/result_int.h"

int
lease_result_reject(struct lease_store *s, const char *state_dir,
    const char *id)
{
	return lease_result_reject_ex(s, state_dir, id, NULL, NULL);
}

int
lease_result_reject_ex(struct lease_store *s, const char *state_dir,
    const char *id, lease_teardown_cb cb, void *ud)
{
	struct lease__rctx c;
	struct lease_lock *lk = NULL;
	int rc;

	assert(s != NULL);
	memset(&c, 0, sizeof c);
	/* one apply, reject or gc of the lease at a time; then read it */
	if ((rc = lease__result_lock(s, state_dir, id, &lk)) < 0 ||
	    (rc = lease__rctx_open(&c, s, state_dir, id, NULL, NULL, NULL,
	    false)) < 0)
		goto out;
	switch (c.rec.state) {
	case LEASE_STATE_PROVISIONING:
	case LEASE_STATE_RUNNING:
		lease__store_msg(s, "lease %s is %s: cancel it first", id,
		    lease_fsm_state_name(c.rec.state));
		rc = LEASE_EBUSY;
		goto out;
	case LEASE_STATE_APPLIED:
		lease__store_msg(s, "lease %s was applied: nothing to reject",
		    id);
		rc = LEASE_EBADTRANSITION;
		goto out;
	case LEASE_STATE_RESULT_READY:
		if ((rc = lease_record_transition(s, id, LEASE_EV_REJECT,
		    "rejected by the operator", NULL)) < 0)
			goto out;
		/* FALLTHROUGH */
	default:
		break;
	}
	if (c.rec.state != LEASE_STATE_REJECTED &&
	    (rc = lease__rctx_receipt(&c, "rejected", json_pack("{s:s, s:o, "
	    "s:o}", "state", lease_fsm_state_name(c.rec.state), "commit",
	    lease__result_str(lease__rctx_str(&c, "commit")), "status",
	    lease__result_str(lease__rctx_str(&c, "status"))))) < 0)
		goto out;
	if ((cb == NULL || (rc = cb(id, ud)) == 0) &&
	    (rc = lease_provision_teardown(s, state_dir, id,
	    LEASE_TEARDOWN_RUNTIME)) == 0)
		goto out;
	/* the lease is rejected: say so, and what is left */
	{
		char *msg = strdup(lease_store_errmsg(s));

		lease__store_msg(s, "lease %s is rejected, but its review "
		    "worktree and workspace could not all be removed (%s); "
		    "corral reconcile or gc tries again", id, msg != NULL &&
		    *msg != '\0' ? msg : lease_strerror(rc));
		free(msg);
	}
out:
	lease__rctx_close(&c);
	lease_lock_release(lk);
	return rc;
}

int
lease__result_lock(struct lease_store *s, const char *state_dir,
    const char *id, struct lease_lock **out)
{
	int rc;

	if (state_dir == NULL)
		return -EINVAL;
	rc = lease_lock_lease(state_dir, id, LEASE_LOCK_WAIT_MS, out);
	if (rc == LEASE_ELOCKED)
		lease__store_msg(s, "lease %s: another apply, reject or gc of "
		    "it is still at work after %d s: try again", id,
		    LEASE_LOCK_WAIT_MS / 1000);
	else if (rc < 0)
		lease__store_msg(s, "lease %s: cannot take its lock: %s", id,
		    lease_strerror(rc));
	return rc;
}
