/*
 * release.c: the workspace of a lease whose result is materialised, given
 * back before reject (issue 17: a lease with its result took the tree
 * twice, the workspace image beside the review worktree). Once the result
 * is a commit on corral/<id> (SPEC 7.3), nothing reads the workspace
 * again: review, dropping hunks, the checks (on a copy of the commit's
 * tree) and apply work from the commit, the stored patch and the review
 * worktree; the artifacts were copied into the result directory. So the
 * holder releases it once the lease is result_ready, unless the policy
 * says [result] keep_workspace.
 *
 * The journal leads, as teardown's does (SPEC 9.2): the intent (the
 * result's "workspace" set to "releasing" with the receipt
 * workspace_release), then the bounded image unmounted and removed and
 * the directory removed, then the outcome in one transaction (the
 * workspace row removed, "workspace": "released", the receipt
 * workspace_released). A crash before the intent leaves the workspace
 * kept, as it was; after it, reconcile finishes the release
 * (lease__release_resume, under the lease's lock). Fault points
 * release.workspace.{before,unmounted,removed,after}.
 */
#include <assert.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lease/lease_int.h"
#include "sandbox-adapters/sbx.h"

#define RELEASING "releasing"
#define RELEASED "released"

/* What lease r's result says: its commit and its workspace's state. */
struct due {
	json_t *result;		/* the result object (owned), or NULL */
	const char *commit;	/* in result */
	const char *ws;		/* "releasing", "released" or NULL */
};

static void
due_clear(struct due *d)
{
	json_decref(d->result);
	memset(d, 0, sizeof *d);
}

/* 1: r has a materialised result; 0: not (nothing to release). */
static int
due_of(const struct lease_record *r, struct due *d)
{
	json_t *v;

	memset(d, 0, sizeof *d);
	if (r->mode != LEASE_MODE_SANDBOXED ||
	    r->state != LEASE_STATE_RESULT_READY || r->result == NULL)
		return 0;
	if ((d->result = json_loads(r->result, 0, NULL)) == NULL ||
	    !json_is_object(d->result))
		return 0;
	v = json_object_get(d->result, "commit");
	if ((d->commit = json_string_value(v)) == NULL) {
		due_clear(d);
		return 0;
	}
	d->ws = json_string_value(json_object_get(d->result, "workspace"));
	return 1;
}

/*
 * One transaction: the result's "workspace" set to what, the receipt
 * kind with fields (stolen), and for the outcome the workspace row removed.
 */
static int
journal(struct lease_store *s, const char *id, struct due *d,
    const char *what, const char *kind, json_t *fields, const char *row)
{
	int64_t now = lease_id_now_ms();
	char *text = NULL;
	int rc;

	if (fields == NULL ||
	    json_object_set_new(d->result, "workspace", json_string(what)) < 0 ||
	    (text = json_dumps(d->result, JSON_COMPACT)) == NULL) {
		json_decref(fields);
		return -ENOMEM;
	}
	if ((rc = lease__store_begin_lease(s, id)) < 0)
		goto out;
	if ((row == NULL || (rc = lease__resource_removed_tx(s, id,
	    LEASE_RES_WORKSPACE, row, now)) == 0 ||
	    rc == LEASE_ENOTFOUND) &&
	    (rc = lease__record_set_text(s, id, LEASE_FIELD_RESULT, text,
	    now)) == 0 &&
	    (rc = lease__receipt_append_tx(s, id, kind, fields, NULL)) == 0)
		rc = lease__store_commit(s);
	else
		lease__store_rollback(s);
out:
	free(text);
	json_decref(fields);
	return rc;
}

/* Is the workspace's row (its identity the path) left unremoved? */
static bool
row_left(struct lease_store *s, const char *id, const char *path, int *rc)
{
	struct lease_resource_row *v = NULL;
	size_t n = 0;
	bool left = false;

	if ((*rc = lease_resource_list(s, id, &v, &n)) < 0)
		return false;
	for (size_t i = 0; i < n; i++)
		left |= v[i].kind == LEASE_RES_WORKSPACE &&
		    v[i].state != LEASE_RS_REMOVED &&
		    strcmp(v[i].identity, path) == 0;
	lease_resource_list_free(v, n);
	return left;
}

/* The image, its mount and the directory gone; 0 or a negative code. */
static int
remove_workspace(struct lease_store *s, const char *path)
{
	char *img = NULL;
	int rc;

	lease_fault_point("release.workspace.before");
	if ((rc = sbx_workspace_release(path)) < 0) {
		lease__store_msg(s, "%s: cannot unmount the workspace: %s",
		    path, strerror(-rc));
		return rc;
	}
	lease_fault_point("release.workspace.unmounted");
	/* an image not mounted (after a reboot) goes too */
	if ((img = malloc(strlen(path) + 5)) == NULL)
		return -ENOMEM;
	snprintf(img, strlen(path) + 5, "%s.img", path);
	if (unlink(img) < 0 && errno != ENOENT)
		rc = -errno;
	free(img);
	if (rc == 0)
		rc = lease__fs_rmtree(path);
	if (rc < 0)
		lease__store_msg(s, "%s: cannot remove: %s", path,
		    strerror(-rc));
	else
		lease_fault_point("release.workspace.removed");
	return rc;
}

/*
 * The release of r (its lease's lock held): resume only finishes one
 * whose intent is journaled. *did: whether anything was released.
 */
static int
release(struct lease_store *s, const char *state_dir,
    const struct lease_record *r, const char *by, bool resume, bool *did)
{
	struct due d;
	char *path = NULL;
	bool left;
	int rc;

	*did = false;
	if (due_of(r, &d) == 0)
		return 0;
	if ((d.ws != NULL && strcmp(d.ws, RELEASED) == 0) ||
	    (resume && (d.ws == NULL || strcmp(d.ws, RELEASING) != 0))) {
		due_clear(&d);
		return 0;
	}
	if ((path = lease_path_workspace(state_dir, r->id)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	left = row_left(s, r->id, path, &rc);
	if (rc < 0)
		goto out;
	if (d.ws == NULL && (rc = journal(s, r->id, &d, RELEASING,
	    "workspace_release", json_pack("{s:s, s:s, s:s, s:s}", "path",
	    path, "commit", d.commit, "why", "the result is materialised",
	    "by", by), NULL)) < 0)
		goto out;
	if ((rc = remove_workspace(s, path)) < 0)
		goto out;
	rc = journal(s, r->id, &d, RELEASED, "workspace_released",
	    json_pack("{s:s, s:s, s:b}", "path", path, "by", by, "resumed",
	    resume), left ? path : NULL);
	if (rc == 0) {
		*did = true;
		lease_fault_point("release.workspace.after");
	}
out:
	free(path);
	due_clear(&d);
	return rc;
}

int
lease_release_workspace(struct lease_store *s, const char *state_dir,
    const char *id, const char *by)
{
	struct lease_lock *lk = NULL;
	struct lease_record r;
	bool did;
	int rc;

	assert(s != NULL && s->db != NULL);
	if (state_dir == NULL || by == NULL)
		return -EINVAL;
	if ((rc = lease_lock_lease(state_dir, id, LEASE_LOCK_WAIT_MS,
	    &lk)) < 0) {
		lease__store_msg(s, "lease %s: cannot take its lock to release "
		    "its workspace: %s", id, lease_strerror(rc));
		return rc;
	}
	/* read once the lock is held: a reject or apply may have run */
	if ((rc = lease_record_get(s, id, &r)) == 0) {
		rc = release(s, state_dir, &r, by, false, &did);
		lease_record_clear(&r);
	}
	lease_lock_release(lk);
	return rc;
}

int
lease__release_resume(struct lease_store *s, struct lease_report *rep,
    const char *state_dir, const struct lease_record *r, bool dry)
{
	struct due d;
	bool pending, did;
	int rc;

	if (due_of(r, &d) == 0)
		return 0;
	pending = d.ws != NULL && strcmp(d.ws, RELEASING) == 0;
	due_clear(&d);
	if (!pending)
		return 0;
	if (dry)
		return lease__recover_note(rep, LEASE_FIND_CLEANED, r->id,
		    "result_ready: its workspace's interrupted release would "
		    "be finished") != NULL ? 0 : -ENOMEM;
	if ((rc = release(s, state_dir, r, "reconcile", true, &did)) < 0)
		return lease__recover_note(rep, LEASE_FIND_CLEANUP_PENDING,
		    r->id, "result_ready: its workspace's release failed: %s",
		    lease_store_errmsg(s)) != NULL ? 0 : -ENOMEM;
	return lease__recover_note(rep, LEASE_FIND_CLEANED, r->id,
	    "result_ready: its workspace's interrupted release finished") !=
	    NULL ? 0 : -ENOMEM;
}
