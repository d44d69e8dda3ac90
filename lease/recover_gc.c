/*
 * recover_gc.c: gc (SPEC 9.3), run under the state lock (lock.c): what
 * reconciliation (recover.c) inventoried as orphans, removed by exact ID
 * only once two consistent inventories saw it, at the place corral would
 * have put it; and final leases older than a given age removed with
 * everything they still hold.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease/lease_int.h"

static const char sql_inv_of[] =
    "SELECT kind, identity, scope, seen FROM inventory WHERE lease_id = ?1";
static const char sql_inv_drop[] =
    "DELETE FROM inventory WHERE lease_id = ?1";

static int
inventory_drop(struct lease_store *s, const char *id)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = lease__store_stmt(s, sql_inv_drop, &st)) < 0)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	return lease__store_step_done(s, st, "drop inventory rows");
}

/* Remove one inventoried orphan at the place corral would have put it. */
static int
remove_orphan(struct lease_store *s, const char *state_dir, const char *id,
    const struct lease__orphan *o, const struct lease_orphan_src *src)
{
	struct lease_git *g = NULL;
	char *path = NULL;
	int rc;

	if (o->kind == LEASE_RES_SANDBOX) {
		if (src == NULL || src->remove == NULL) {
			lease__store_msg(s, "%s: no adapter to remove it with",
			    o->identity);
			return -ENOTSUP;
		}
		if ((rc = src->remove(src->ud, o->identity, o->scope, id)) < 0)
			lease__store_msg(s, "%s: cannot remove it (%s)",
			    o->identity, strerror(-rc));
		return rc;
	}

	if (o->kind == LEASE_RES_BRANCH ||
	    (o->kind == LEASE_RES_WORKTREE && o->scope[0] != '\0')) {
		rc = lease_git_open(&g, o->scope);
		if (rc == LEASE_ENOTREPO) {
			lease_git_free(g);
			return 0;
		}
		if (rc == 0 && o->kind == LEASE_RES_BRANCH)
			rc = lease_git_branch_delete(g, id);
		else if (rc == 0 && (path = lease_path_worktree(state_dir,
		    id)) == NULL)
			rc = -ENOMEM;
		else if (rc == 0)
			rc = lease_git_worktree_remove(g, id, path);
		free(path);
		if (rc < 0)
			lease__store_msg(s, "%s", lease_git_errmsg(g));
		lease_git_free(g);
		return rc;
	}
	path = o->kind == LEASE_RES_WORKTREE ?
	    lease_path_worktree(state_dir, id) :
	    lease_path_lease_dir(state_dir, id);
	if (path == NULL)
		return -ENOMEM;
	if (strcmp(path, o->identity) != 0) {
		lease__store_msg(s, "orphan %s is not where this state "
		    "directory puts it; not removed", o->identity);
		rc = -EINVAL;
	} else if ((rc = lease__fs_rmtree(path)) < 0) {
		lease__store_msg(s, "%s: cannot remove: %s", path,
		    strerror(-rc));
	}
	free(path);
	return rc;
}

/*
 * Remove id's inventoried orphans. Without a lease (sandbox_only false):
 * all of them, each seen by two inventories, or nothing. With a final
 * lease being removed (sandbox_only): its adapters' sandboxes that two
 * inventories saw (the lease's own removal takes the rest).
 */
static int
gc_orphans(struct lease_store *s, const char *state_dir, const char *id,
    const struct lease_orphan_src *src, bool sandbox_only)
{
	struct lease__inventory inv = { 0 };
	sqlite3_stmt *st;
	enum lease_resource k;
	size_t i;
	int rc = 0, step;

	if ((rc = lease__store_stmt(s, sql_inv_of, &st)) < 0)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		if (lease_resource_parse((const char *)sqlite3_column_text(st,
		    0), &k) < 0)
			continue;
		if (sandbox_only && (k != LEASE_RES_SANDBOX ||
		    sqlite3_column_int(st, 3) < 2))
			continue;
		if ((rc = lease__recover_inv_add(&inv, k, (const char *)
		    sqlite3_column_text(st, 1), (const char *)
		    sqlite3_column_text(st, 2), id)) < 0)
			break;
		inv.v[inv.n - 1].seen = sqlite3_column_int(st, 3);
	}
	sqlite3_reset(st);
	if (rc == 0 && step != SQLITE_DONE)
		rc = lease__store_fail(s, step, "read inventory");
	if (rc < 0)
		goto out;
	if (inv.n == 0 && !sandbox_only) {
		lease__store_msg(s, "nothing is known by ID %s (no lease, no "
		    "inventoried orphan: run corral reconcile)", id);
		rc = LEASE_ENOTFOUND;
		goto out;
	}
	for (i = 0; i < inv.n; i++) {
		if (inv.v[i].seen < 2) {
			lease__store_msg(s, "%s %s was seen by one inventory "
			    "only: run corral reconcile again first",
			    lease_resource_name(inv.v[i].kind),
			    inv.v[i].identity);
			rc = LEASE_ENOTREMOVABLE;
			goto out;
		}
	}
	for (i = 0; i < inv.n; i++)
		if ((rc = remove_orphan(s, state_dir, id, &inv.v[i],
		    src)) < 0)
			goto out;
	if (!sandbox_only)
		rc = inventory_drop(s, id);
out:
	lease__recover_inv_free(&inv);
	return rc;
}

int
lease_recover_gc_id(struct lease_store *s, struct lease_lock *held,
    const char *state_dir, const char *id)
{
	return lease_recover_gc_id_with(s, held, state_dir, id, NULL);
}

int
lease_recover_gc_id_with(struct lease_store *s, struct lease_lock *held,
    const char *state_dir, const char *id, const struct lease_orphan_src *src)
{
	struct lease_record r;
	struct lease_lock *lk = NULL;
	int rc;

	assert(s != NULL && s->db != NULL);
	assert(held != NULL);
	if (state_dir == NULL)
		return -EINVAL;
	if (!lease_id_valid(id) && !lease_id_run_valid(id, NULL)) {
		lease__store_msg(s, "'%.64s' is not a lease or check run ID "
		    "(gc takes one exact ID, never a pattern)",
		    id != NULL ? id : "");
		return LEASE_EBADID;
	}
	if ((rc = lease__recover_need_v2(s)) < 0)
		return rc;
	/* A check run has no lease row: only its inventoried orphans. */
	if (!lease_id_valid(id))
		return gc_orphans(s, state_dir, id, src, false);
	rc = lease_record_get(s, id, &r);
	if (rc == LEASE_ENOTFOUND)
		return gc_orphans(s, state_dir, id, src, false);
	if (rc < 0)
		return rc;
	lease_record_clear(&r);
	/* one apply, reject or gc of a lease at a time; then re-read */
	if ((rc = lease_lock_lease(state_dir, id, LEASE_LOCK_WAIT_MS,
	    &lk)) < 0) {
		lease__store_msg(s, "lease %s: %s", id, rc == LEASE_ELOCKED ?
		    "an apply or reject of it is at work: try again" :
		    lease_strerror(rc));
		return rc == LEASE_ELOCKED ? LEASE_EBUSY : rc;
	}
	if ((rc = lease_record_get(s, id, &r)) < 0)
		goto out;
	if (!lease_fsm_state_final(r.state)) {
		lease__store_msg(s, "lease %s is %s: cancel or finish it "
		    "before gc", id, lease_fsm_state_name(r.state));
		lease_record_clear(&r);
		rc = LEASE_EBUSY;
		goto out;
	}
	lease_record_clear(&r);
	if ((rc = lease_provision_teardown(s, state_dir, id,
	    LEASE_TEARDOWN_ALL)) < 0)
		goto out;
	if (src != NULL && (rc = gc_orphans(s, state_dir, id, src, true)) < 0)
		goto out;
	lease_fault_point("gc.delete.before");
	if ((rc = lease_record_delete(s, id)) < 0 ||
	    (rc = inventory_drop(s, id)) < 0)
		goto out;
	/* the lease is gone: so is its lock file */
	lease_lock_forget(lk);
	return 0;
out:
	lease_lock_release(lk);
	return rc;
}

int
lease_recover_gc_older_than(struct lease_store *s, struct lease_lock *held,
    const char *state_dir, int64_t age_ms, size_t *removed)
{
	struct lease_record *v = NULL;
	int64_t cutoff = lease_id_now_ms() - age_ms;
	size_t n = 0, i, done = 0;
	int rc, first = 0;

	assert(s != NULL && s->db != NULL);
	assert(held != NULL);
	if (age_ms < 0 || state_dir == NULL)
		return -EINVAL;
	if ((rc = lease_record_list(s, LEASE_LIST_ALL, &v, &n)) < 0)
		return rc;
	for (i = 0; i < n; i++) {
		/* updated at the cutoff's millisecond: old enough (age 0) */
		if (!lease_fsm_state_final(v[i].state) ||
		    v[i].updated_at > cutoff ||
		    (v[i].cleanup != LEASE_CLEANUP_CONFIRMED &&
		    v[i].cleanup != LEASE_CLEANUP_NONE))
			continue;
		if ((rc = lease_recover_gc_id(s, held, state_dir,
		    v[i].id)) < 0) {
			if (first == 0)
				first = rc;
			continue;
		}
		done++;
	}
	lease_record_list_free(v, n);
	if (removed != NULL)
		*removed = done;
	return first;
}
