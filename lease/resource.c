/*
 * resource.c: the resources of a lease in the journal (SPEC 9.2): each
 * one's identity recorded as planned before it exists, then created and
 * removed, with the lease's cleanup state re-evaluated as they change.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lease/lease_int.h"

static const char *const resource_names[LEASE_RES_COUNT] = {
	[LEASE_RES_BRANCH] = "branch",
	[LEASE_RES_WORKTREE] = "worktree",
	[LEASE_RES_LEASE_DIR] = "lease_dir",
	[LEASE_RES_WORKSPACE] = "workspace",
	[LEASE_RES_HOLDER] = "holder",
	[LEASE_RES_SOCKET] = "socket",
	[LEASE_RES_CGROUP] = "cgroup",
	[LEASE_RES_CREDENTIAL] = "credential",
	[LEASE_RES_SANDBOX] = "sandbox",
};

static const char *const res_state_names[LEASE_RS_COUNT] = {
	[LEASE_RS_PLANNED] = "planned",
	[LEASE_RS_CREATED] = "created",
	[LEASE_RS_REMOVED] = "removed",
};

const char *
lease_resource_name(enum lease_resource k)
{
	return (unsigned)k < LEASE_RES_COUNT ? resource_names[k] : "?";
}

int
lease_resource_parse(const char *name, enum lease_resource *out)
{
	int i;

	assert(out != NULL);
	for (i = 0; name != NULL && i < LEASE_RES_COUNT; i++) {
		if (strcmp(resource_names[i], name) == 0) {
			*out = (enum lease_resource)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *
lease_resource_state_name(enum lease_res_state st)
{
	return (unsigned)st < LEASE_RS_COUNT ? res_state_names[st] : "?";
}

bool
lease_resource_runtime(enum lease_resource k)
{
	return k != LEASE_RES_BRANCH && k != LEASE_RES_LEASE_DIR;
}

static const char sql_res_state[] =
    "SELECT state FROM resources WHERE lease_id = ?1 AND kind = ?2 AND"
    " identity = ?3";
static const char sql_res_insert[] =
    "INSERT INTO resources (lease_id, kind, identity, scope, state, at)"
    " VALUES (?1, ?2, ?3, ?4, 'planned', ?5)";
static const char sql_res_update[] =
    "UPDATE resources SET state = ?4, at = ?5 WHERE lease_id = ?1 AND"
    " kind = ?2 AND identity = ?3";

/* Inside a transaction: current state, or -1 when there is no row. */
static int
res_state(struct lease_store *s, const char *id, enum lease_resource k,
    const char *identity, int *state)
{
	sqlite3_stmt *st;
	const char *t;
	int rc, i;

	if ((rc = lease__store_stmt(s, sql_res_state, &st)) < 0)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, resource_names[k], -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, identity, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	*state = -1;
	if (rc == SQLITE_ROW) {
		t = (const char *)sqlite3_column_text(st, 0);
		for (i = 0; t != NULL && i < LEASE_RS_COUNT; i++)
			if (strcmp(t, res_state_names[i]) == 0)
				*state = i;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return lease__store_fail(s, rc, "read resource");
	return 0;
}

static int
res_update(struct lease_store *s, const char *id, enum lease_resource k,
    const char *identity, enum lease_res_state to, int64_t at)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = lease__store_stmt(s, sql_res_update, &st)) < 0)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, resource_names[k], -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, identity, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, res_state_names[to], -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, at);
	return lease__store_step_done(s, st, "update resource");
}

/* The lease column mirroring a resource's identity, or -1. */
static int
res_field(enum lease_resource k)
{
	switch (k) {
	case LEASE_RES_BRANCH:
		return LEASE_FIELD_BRANCH;
	case LEASE_RES_WORKTREE:
		return LEASE_FIELD_WORKTREE;
	case LEASE_RES_WORKSPACE:
		return LEASE_FIELD_WORKSPACE;
	case LEASE_RES_SANDBOX:
		return LEASE_FIELD_SANDBOX_ID;
	default:
		return -1;
	}
}

int
lease_resource_plan(struct lease_store *s, const char *id,
    enum lease_resource k, const char *identity, const char *scope)
{
	sqlite3_stmt *st;
	int64_t now = lease_id_now_ms();
	int rc, cur, f;

	assert(s != NULL && s->db != NULL);
	if ((unsigned)k >= LEASE_RES_COUNT || identity == NULL ||
	    *identity == '\0')
		return -EINVAL;
	if ((rc = lease__store_begin_lease(s, id)) < 0)
		return rc;
	if ((rc = res_state(s, id, k, identity, &cur)) < 0)
		goto fail;
	if (cur == LEASE_RS_REMOVED) {
		lease__store_msg(s, "lease %s: %s %s was already removed", id,
		    resource_names[k], identity);
		rc = LEASE_EEXIST;
		goto fail;
	}
	if (cur >= 0) {
		lease__store_rollback(s);
		return 0;
	}
	if ((rc = lease__store_stmt(s, sql_res_insert, &st)) < 0)
		goto fail;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, resource_names[k], -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, identity, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, scope, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 5, now);
	if ((rc = lease__store_step_done(s, st, "record resource")) < 0)
		goto fail;
	/* a tagged identity ("TAG\nIDENTITY": a check run's) mirrors none */
	if (strchr(identity, '\n') == NULL && (f = res_field(k)) >= 0 &&
	    (rc = lease__record_set_text(s, id, (enum lease_field)f,
	    identity, now)) < 0)
		goto fail;
	return lease__store_commit(s);
fail:
	lease__store_rollback(s);
	return rc;
}

/* Inside a transaction on id: the move; 1 when it was there already. */
static int
res_move_tx(struct lease_store *s, const char *id, enum lease_resource k,
    const char *identity, enum lease_res_state to, int64_t now)
{
	int rc, cur;

	if ((unsigned)k >= LEASE_RES_COUNT || identity == NULL)
		return -EINVAL;
	if ((rc = res_state(s, id, k, identity, &cur)) < 0)
		return rc;
	if (cur < 0) {
		lease__store_msg(s, "lease %s: %s %s was never recorded", id,
		    resource_names[k], identity);
		return LEASE_ENOTFOUND;
	}
	if (cur == (int)to)
		return 1;
	if (cur == LEASE_RS_REMOVED) {
		lease__store_msg(s, "lease %s: %s %s was already removed", id,
		    resource_names[k], identity);
		return LEASE_EEXIST;
	}
	if ((rc = res_update(s, id, k, identity, to, now)) < 0)
		return rc;
	if (to == LEASE_RS_REMOVED &&
	    (rc = lease__record_cleanup_eval(s, id, now)) < 0)
		return rc;
	return 0;
}

int
lease__resource_removed_tx(struct lease_store *s, const char *id,
    enum lease_resource k, const char *identity, int64_t now)
{
	int rc = res_move_tx(s, id, k, identity, LEASE_RS_REMOVED, now);

	return rc > 0 ? 0 : rc;
}

static int
res_move(struct lease_store *s, const char *id, enum lease_resource k,
    const char *identity, enum lease_res_state to)
{
	int rc;

	assert(s != NULL && s->db != NULL);
	if ((unsigned)k >= LEASE_RES_COUNT || identity == NULL)
		return -EINVAL;
	if ((rc = lease__store_begin_lease(s, id)) < 0)
		return rc;
	if ((rc = res_move_tx(s, id, k, identity, to,
	    lease_id_now_ms())) != 0) {
		lease__store_rollback(s);
		return rc > 0 ? 0 : rc;
	}
	return lease__store_commit(s);
}

int
lease_resource_created(struct lease_store *s, const char *id,
    enum lease_resource k, const char *identity)
{
	return res_move(s, id, k, identity, LEASE_RS_CREATED);
}

int
lease_resource_removed(struct lease_store *s, const char *id,
    enum lease_resource k, const char *identity)
{
	return res_move(s, id, k, identity, LEASE_RS_REMOVED);
}

static const char sql_resources[] =
    "SELECT kind, state, identity, scope, at FROM resources WHERE"
    " lease_id = ?1 ORDER BY rowid";

void
lease_resource_list_free(struct lease_resource_row *v, size_t n)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; i < n; i++) {
		free(v[i].identity);
		free(v[i].scope);
	}
	free(v);
}

int
lease_resource_list(struct lease_store *s, const char *id,
    struct lease_resource_row **out, size_t *n)
{
	struct lease_resource_row *v = NULL, *nv, *r;
	size_t len = 0, cap = 0;
	sqlite3_stmt *st;
	bool oom = false;
	const char *t;
	int rc, i;

	assert(s != NULL && s->db != NULL && out != NULL && n != NULL);
	*out = NULL;
	*n = 0;
	if (!lease_id_valid(id))
		return LEASE_EBADID;
	if ((rc = lease__store_stmt(s, sql_resources, &st)) < 0)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == cap) {
			cap = cap ? cap * 2 : 8;
			if ((nv = realloc(v, cap * sizeof *v)) == NULL) {
				rc = -ENOMEM;
				goto fail;
			}
			v = nv;
		}
		r = &v[len++];
		memset(r, 0, sizeof *r);
		if (lease_resource_parse((const char *)sqlite3_column_text(st,
		    0), &r->kind) < 0)
			r->kind = LEASE_RES_COUNT;
		t = (const char *)sqlite3_column_text(st, 1);
		r->state = LEASE_RS_COUNT;
		for (i = 0; t != NULL && i < LEASE_RS_COUNT; i++)
			if (strcmp(t, res_state_names[i]) == 0)
				r->state = (enum lease_res_state)i;
		r->identity = lease__store_col_text(st, 2, &oom);
		r->scope = lease__store_col_text(st, 3, &oom);
		r->at = sqlite3_column_int64(st, 4);
		if (oom) {
			rc = -ENOMEM;
			goto fail;
		}
		if (r->kind == LEASE_RES_COUNT || r->state == LEASE_RS_COUNT) {
			lease__store_msg(s, "%s: lease %s has an unknown "
			    "resource row", s->path, id);
			rc = LEASE_ECORRUPT;
			goto fail;
		}
	}
	if (rc != SQLITE_DONE) {
		rc = lease__store_fail(s, rc, "list resources");
		goto fail;
	}
	sqlite3_reset(st);
	*out = v;
	*n = len;
	return 0;
fail:
	sqlite3_reset(st);
	lease_resource_list_free(v, len);
	return rc;
}
