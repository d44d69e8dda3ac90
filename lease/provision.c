/*
 * provision.c: steps 2-4 of provisioning (SPEC 6) as journaled building
 * blocks for the composition root, and their teardown. Every resource's
 * identity is recorded (planned) before it is created and marked created
 * after; every removal is done and then journaled, so a crash at any point
 * leaves the journal naming everything that may exist (SPEC 9.2). Paths
 * come from path.c.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lease/lease_int.h"

static const char *
reason_of(int rc)
{
	switch (rc) {
	case LEASE_ENOTREPO:
		return "not_a_repository";
	case LEASE_EBARE:
		return "bare_repository";
	case LEASE_EOWNER:
		return "repository_owner";
	case LEASE_EBADBASE:
		return "unknown_base";
	case LEASE_EBRANCHEXISTS:
		return "branch_exists";
	case LEASE_ETOOLARGE:
		return "base_too_large";
	case -ENOSPC:
		return "disk_full";
	default:
		return "provision_error";
	}
}

static void
fault(const char *step, const char *when)
{
	char point[160];

	snprintf(point, sizeof point, "%.80s.%.40s", step, when);
	lease_fault_point(point);
}

/* The directory path without its trailing slash (malloc'd). */
static char *
chop(const char *dir)
{
	char *d = strdup(dir);
	size_t n;

	if (d != NULL)
		for (n = strlen(d); n > 1 && d[n - 1] == '/'; n--)
			d[n - 1] = '\0';
	return d;
}

/* Record repo, base and base_ref in one transaction. */
static int
record_base(struct lease_store *s, const char *id, const char *repo,
    const char *base, const char *base_ref)
{
	int64_t now = lease_id_now_ms();
	int rc;

	if ((rc = lease__store_begin_lease(s, id)) < 0)
		return rc;
	if ((rc = lease__record_set_text(s, id, LEASE_FIELD_REPO, repo,
	    now)) < 0 ||
	    (rc = lease__record_set_text(s, id, LEASE_FIELD_BASE, base,
	    now)) < 0 ||
	    (rc = lease__record_set_text(s, id, LEASE_FIELD_BASE_REF, base_ref,
	    now)) < 0) {
		lease__store_rollback(s);
		return rc;
	}
	return lease__store_commit(s);
}

/* What the step creating a resource does, given its identity. */
struct step {
	const char *name;		/* fault point prefix */
	enum lease_resource kind;
	const char *identity;
	const char *scope;
};

/* mkdir -p the parent under the state directory (0700). */
static int
make_parent(struct lease_store *s, const char *state_dir, const char *sub)
{
	char *parent = lease__path(state_dir, sub, NULL, "");
	int rc;

	if (parent == NULL)
		return -ENOMEM;
	if ((rc = lease__fs_mkdirs(parent, 0700)) < 0)
		lease__store_msg(s, "%s: %s", parent, strerror(-rc));
	free(parent);
	return rc;
}

/* Create one resource; on failure the message is on the store. */
static int
create(struct lease_store *s, struct lease_git *g, const char *state_dir,
    const char *id, const char *oid, const struct step *st,
    const struct lease_seed *seed)
{
	int rc;

	switch (st->kind) {
	case LEASE_RES_BRANCH:
		rc = lease_git_branch_create(g, id, oid);
		break;
	case LEASE_RES_WORKTREE:
		if ((rc = make_parent(s, state_dir, "/worktrees")) < 0)
			return rc;
		rc = lease_git_worktree_add(g, id, st->identity);
		break;
	case LEASE_RES_LEASE_DIR:
		if ((rc = make_parent(s, state_dir, "/leases")) < 0)
			return rc;
		if (mkdir(st->identity, 0700) == 0)
			return 0;
		rc = errno == EEXIST ? LEASE_EEXIST : -errno;
		lease__store_msg(s, "%s: %s", st->identity, strerror(errno));
		return rc;
	case LEASE_RES_WORKSPACE:
		if (seed == NULL || seed->make == NULL) {
			rc = lease_git_workspace_seed(g, oid, st->identity,
			    seed != NULL ? seed->history : 0);
			break;
		}
		/* its own filesystem first, the base checked out into it */
		if ((rc = seed->make(seed->ud, st->identity, s->errmsg,
		    sizeof s->errmsg)) < 0)
			return rc == -EEXIST ? LEASE_EEXIST : rc;
		rc = lease__git_workspace_fill(g, oid, st->identity,
		    seed->history);
		break;
	default:
		return -EINVAL;
	}
	if (rc < 0)
		lease__store_msg(s, "%s", lease_git_errmsg(g));
	return rc;
}

/* The planned resource was never ours: journal it as removed untouched. */
static void
forget(struct lease_store *s, const char *id, const struct step *st)
{
	char *msg = strdup(s->errmsg);
	int rc = lease_resource_removed(s, id, st->kind, st->identity);

	(void)rc;
	if (msg != NULL)
		lease__store_msg(s, "%s", msg);
	free(msg);
}

int
lease_provision_git(struct lease_store *s, struct lease_lock *held,
    const char *state_dir, const char *id, const char *repo_dir,
    const char *base, const struct lease_seed *seed)
{
	char oid[41], branch[LEASE_BRANCH_LEN + 1];
	char *msg = NULL, *ref = NULL, *top = NULL, *wt = NULL, *ldir = NULL;
	char *ws = NULL;
	struct lease_record r;
	struct lease_git *g = NULL;
	struct step st[4];
	int rc, i = 0;

	assert(s != NULL && s->db != NULL);
	assert(held != NULL);	/* `corral new` holds the state lock */
	if (state_dir == NULL)
		return -EINVAL;
	if ((rc = lease_id_branch(branch, id)) < 0)
		return rc;
	if ((rc = lease_record_get(s, id, &r)) < 0)
		return rc;
	if (r.state != LEASE_STATE_PROVISIONING ||
	    r.mode != LEASE_MODE_SANDBOXED) {
		lease__store_msg(s, "lease %s is %s %s: nothing to provision",
		    id, lease_fsm_mode_name(r.mode),
		        lease_fsm_state_name(r.state));
		lease_record_clear(&r);
		return LEASE_EBADTRANSITION;
	}
	lease_record_clear(&r);

	/* Step 2: validate the repository, resolve and record the base. */
	fault("provision.base", "before");
	if ((rc = lease_git_open(&g, repo_dir)) == 0)
		lease_git_set_owner(g, state_dir);
	if (rc < 0 || (rc = lease_git_resolve(g, base, oid, &ref)) < 0) {
		lease__store_msg(s, "%s", lease_git_errmsg(g));
		goto refuse;
	}
	if (seed != NULL && (rc = lease__seed_fits(lease__git_repo(g), oid,
	    seed->max_file, seed->max_tree, s->errmsg,
	    sizeof s->errmsg)) < 0)
		goto refuse;
	if ((top = chop(lease_git_workdir(g))) == NULL) {
		rc = -ENOMEM;
		goto refuse;
	}
	if ((rc = record_base(s, id, top, oid, ref)) < 0)
		goto refuse;
	fault("provision.base", "after");

	wt = lease_path_worktree(state_dir, id);
	ldir = lease_path_lease_dir(state_dir, id);
	ws = lease_path_workspace(state_dir, id);
	if (wt == NULL || ldir == NULL || ws == NULL) {
		rc = -ENOMEM;
		goto undo;
	}
	st[0] = (struct step){ "provision.branch", LEASE_RES_BRANCH, branch,
	    top };
	st[1] = (struct step){ "provision.worktree", LEASE_RES_WORKTREE, wt,
	    top };
	st[2] = (struct step){ "provision.lease_dir", LEASE_RES_LEASE_DIR,
	    ldir, NULL };
	st[3] = (struct step){ "provision.workspace", LEASE_RES_WORKSPACE, ws,
	    NULL };

	/* Steps 3-4, each: record, create, mark created. */
	for (i = 0; i < 4; i++) {
		if ((rc = lease_resource_plan(s, id, st[i].kind,
		    st[i].identity, st[i].scope)) < 0)
			goto undo;
		fault(st[i].name, "before");
		if ((rc = create(s, g, state_dir, id, oid, &st[i], seed)) < 0) {
			/* Not ours (it was there before): never remove it. */
			if (rc == LEASE_EBRANCHEXISTS || rc == LEASE_EEXIST)
				forget(s, id, &st[i]);
			goto undo;
		}
		fault(st[i].name, "created");
		if ((rc = lease_resource_created(s, id, st[i].kind,
		    st[i].identity)) < 0)
			goto undo;
		fault(st[i].name, "after");
	}
	rc = 0;
	goto out;

undo:
	/* Fail the lease, then remove what it created (journaled). */
	if ((msg = strdup(s->errmsg)) == NULL)
		goto out;
	if (i >= 3 && seed != NULL && seed->unmake != NULL) {
		/*
		 * the workspace's own filesystem goes before its directory;
		 * if it cannot, the teardown below fails on the mount and
		 * says so (cleanup failed)
		 */
		char err[256];
		int urc = seed->unmake(seed->ud, ws, err, sizeof err);

		(void)urc;
	}
	if (lease_record_transition(s, id, LEASE_EV_FAIL, reason_of(rc),
	    NULL) == 0) {
		/* a teardown failure leaves cleanup failed, visible */
		int trc = lease_provision_teardown(s, state_dir, id,
		    LEASE_TEARDOWN_ALL);

		(void)trc;
	}
	lease__store_msg(s, "%s", msg);
	goto out;
refuse:
	/* Nothing was created: just fail the lease with a named reason. */
	if ((msg = strdup(s->errmsg)) != NULL) {
		int trc = lease_record_transition(s, id, LEASE_EV_FAIL,
		    reason_of(rc), NULL);

		(void)trc;
		lease__store_msg(s, "%s", msg);
	}
out:
	free(msg);
	free(ws);
	free(ldir);
	free(wt);
	free(top);
	free(ref);
	lease_git_free(g);
	return rc;
}

/* The path a directory resource must have (malloc'd), or NULL. */
static char *
expected_path(const char *state_dir, const char *id, enum lease_resource k)
{
	switch (k) {
	case LEASE_RES_WORKTREE:
		return lease_path_worktree(state_dir, id);
	case LEASE_RES_LEASE_DIR:
		return lease_path_lease_dir(state_dir, id);
	case LEASE_RES_WORKSPACE:
		return lease_path_workspace(state_dir, id);
	default:
		return NULL;
	}
}

/* Open the repository a branch or worktree lives in; 1 if it is gone. */
static int
open_scope(struct lease_store *s, const char *scope, struct lease_git **g)
{
	int rc;

	if (*g != NULL)
		return 0;
	if (scope == NULL)
		return 1;
	rc = lease_git_open(g, scope);
	if (rc == LEASE_ENOTREPO) {
		/* the repository was removed: nothing of ours is left in it */
		lease_git_free(*g);
		*g = NULL;
		return 1;
	}
	if (rc < 0) {
		lease__store_msg(s, "%s", lease_git_errmsg(*g));
		lease_git_free(*g);
		*g = NULL;
	}
	return rc;
}

/* Remove one resource; 0 once it is gone (also when it never existed). */
static int
remove_one(struct lease_store *s, const char *state_dir, const char *id,
    const struct lease_resource_row *row, struct lease_git **g)
{
	char branch[LEASE_BRANCH_LEN + 1];
	char *path = NULL;
	int rc;

	switch (row->kind) {
	case LEASE_RES_BRANCH:
		if ((rc = lease_id_branch(branch, id)) < 0)
			return rc;
		if (strcmp(row->identity, branch) != 0)
			goto mismatch;
		if ((rc = open_scope(s, row->scope, g)) != 0)
			return rc > 0 ? 0 : rc;
		if ((rc = lease_git_branch_delete(*g, id)) < 0)
			lease__store_msg(s, "%s", lease_git_errmsg(*g));
		return rc;
	case LEASE_RES_WORKTREE:
	case LEASE_RES_LEASE_DIR:
	case LEASE_RES_WORKSPACE:
		if ((path = expected_path(state_dir, id, row->kind)) == NULL)
			return -ENOMEM;
		if (strcmp(path, row->identity) != 0) {
			free(path);
			goto mismatch;
		}
		rc = lease__fs_rmtree(path);
		if (rc < 0)
			lease__store_msg(s, "%s: cannot remove: %s", path,
			    strerror(-rc));
		if (rc < 0 || row->kind != LEASE_RES_WORKTREE) {
			free(path);
			return rc;
		}
		/*
		 * then git's admin entry for the worktree: the row stays
		 * created until both are gone (reconcile's present())
		 */
		lease_fault_point("teardown.worktree.dir_removed");
		if ((rc = open_scope(s, row->scope, g)) != 0) {
			free(path);
			return rc > 0 ? 0 : rc;
		}
		if ((rc = lease_git_worktree_remove(*g, id, path)) < 0)
			lease__store_msg(s, "%s", lease_git_errmsg(*g));
		free(path);
		return rc;
	default:
		return 0;	/* the caller's kinds */
	}
mismatch:
	lease__store_msg(s, "lease %s: %s %s is not where this state "
	    "directory (%s) puts it; not removed", id,
	    lease_resource_name(row->kind), row->identity, state_dir);
	return -EINVAL;
}

int
lease_provision_teardown(struct lease_store *s, const char *state_dir,
    const char *id,
    unsigned what)
{
	static const enum lease_resource order[] = {
		LEASE_RES_WORKSPACE, LEASE_RES_LEASE_DIR, LEASE_RES_WORKTREE,
		LEASE_RES_BRANCH,
	};
	struct lease_resource_row *v = NULL;
	struct lease_git *g = NULL;
	struct lease_record r;
	char point[64];
	size_t n = 0, i, k;
	int rc, first = 0;

	assert(s != NULL && s->db != NULL);
	if (state_dir == NULL || (what & ~(unsigned)LEASE_TEARDOWN_ALL) != 0)
		return -EINVAL;
	if ((rc = lease_record_get(s, id, &r)) < 0)
		return rc;
	if (!lease_fsm_state_final(r.state)) {
		lease__store_msg(s, "lease %s is %s: finish or cancel it "
		    "before removing its resources", id,
		    lease_fsm_state_name(r.state));
		lease_record_clear(&r);
		return LEASE_EBUSY;
	}
	lease_record_clear(&r);
	if ((rc = lease_resource_list(s, id, &v, &n)) < 0)
		return rc;
	for (k = 0; k < sizeof order / sizeof order[0]; k++) {
		if (!(what & (lease_resource_runtime(order[k]) ?
		    LEASE_TEARDOWN_RUNTIME : LEASE_TEARDOWN_HISTORY)))
			continue;
		for (i = 0; i < n; i++) {
			if (v[i].kind != order[k] ||
			    v[i].state == LEASE_RS_REMOVED)
				continue;
			snprintf(point, sizeof point, "teardown.%s",
			    lease_resource_name(v[i].kind));
			fault(point, "before");
			if (v[i].kind == LEASE_RES_BRANCH ||
			    v[i].kind == LEASE_RES_WORKTREE) {
				/* one repository handle per scope */
				lease_git_free(g);
				g = NULL;
			}
			rc = remove_one(s, state_dir, id, &v[i], &g);
			if (rc == 0) {
				fault(point, "removed");
				rc = lease_resource_removed(s, id,
				    v[i].kind, v[i].identity);
			}
			if (rc < 0) {
				if (first == 0)
					first = rc;
				continue;
			}
			fault(point, "after");
		}
	}
	lease_git_free(g);
	lease_resource_list_free(v, n);
	if (first < 0) {
		char *msg = strdup(s->errmsg);
		int crc = lease_record_set_cleanup(s, id, LEASE_CLEANUP_FAILED,
		    msg != NULL ? msg : "teardown failed");

		(void)crc;
		if (msg != NULL)
			lease__store_msg(s, "%s", msg);
		free(msg);
	}
	return first;
}
