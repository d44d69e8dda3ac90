/*
 * record.c: the lease rows of the journal (SPEC 9.1): get and list, insert,
 * and one short IMMEDIATE transaction per state change, writing the new
 * state and its transition row together so a committed transition
 * survives a SIGKILL at any point; delete for gc.
 */
#include <assert.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease/lease_int.h"

#define NAME_MAX_BYTES LEASE_NAME_MAX
#define NAME_TRIES 999
#define ID_RETRIES 32

/* ------------------------------------------------------------------ */
/* Rows                                                                 */

#define LEASE_COLUMNS \
	"id, name, mode, adapter, isolation, lease_state, activity, unseen," \
	" failed_reason, cleanup, repo, base, base_ref, branch, worktree," \
	" workspace, sandbox_id, policy, limits, holder_pid, holder_start," \
	" created_at, updated_at, receipt_head, receipt_len, result, cmd"
/* The model usage (schema 5; zeros from an older one). */
#define LEASE_USAGE \
	", usage_requests, usage_input, usage_output, usage_cache_write," \
	" usage_cache_read, usage_cost_nano, usage_cost_unknown"
#define LEASE_USAGE_V4 ", 0, 0, 0, 0, 0, 0, 0"
#define LEASE_USAGE_COL 27

/* The final lease states, as lease_fsm_state_final says (SPEC 5). */
#define SQL_FINAL_STATES "('applied','rejected','failed','cancelled')"

#define SQL_GET(u) "SELECT " LEASE_COLUMNS u " FROM leases WHERE id = ?1"
#define SQL_LIST_ALL(u) "SELECT " LEASE_COLUMNS u " FROM leases ORDER BY id"
#define SQL_LIST_LIVE(u) \
    "SELECT " LEASE_COLUMNS u " FROM leases WHERE lease_state NOT IN " \
    SQL_FINAL_STATES \
    " OR cleanup IN ('pending','failed') ORDER BY id"

static const char *const sql_get[2] = {
	SQL_GET(LEASE_USAGE_V4), SQL_GET(LEASE_USAGE) };
static const char *const sql_list_all[2] = {
	SQL_LIST_ALL(LEASE_USAGE_V4), SQL_LIST_ALL(LEASE_USAGE) };
static const char *const sql_list_live[2] = {
	SQL_LIST_LIVE(LEASE_USAGE_V4), SQL_LIST_LIVE(LEASE_USAGE) };

/* Which of the two: a store opened at an older schema has no usage. */
static int
with_usage(const struct lease_store *s)
{
	return s->version >= 5;
}

void
lease_record_clear(struct lease_record *r)
{
	if (r == NULL)
		return;
	free(r->name);
	free(r->adapter);
	free(r->isolation);
	free(r->failed_reason);
	free(r->repo);
	free(r->base);
	free(r->base_ref);
	free(r->branch);
	free(r->worktree);
	free(r->workspace);
	free(r->sandbox_id);
	free(r->policy);
	free(r->limits);
	free(r->result);
	free(r->cmd);
	memset(r, 0, sizeof *r);
}

void
lease_record_list_free(struct lease_record *v, size_t n)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; i < n; i++)
		lease_record_clear(&v[i]);
	free(v);
}

static int
row_to_record(struct lease_store *s, sqlite3_stmt *st, struct lease_record *r)
{
	const char *t;
	bool oom = false;

	memset(r, 0, sizeof *r);
	t = (const char *)sqlite3_column_text(st, 0);
	snprintf(r->id, sizeof r->id, "%s", t != NULL ? t : "");
	r->name = lease__store_col_text(st, 1, &oom);
	if (lease_fsm_mode_parse((const char *)sqlite3_column_text(st, 2),
	    &r->mode) < 0 ||
	    lease_fsm_state_parse((const char *)sqlite3_column_text(st, 5),
	    &r->state) < 0 ||
	    lease_fsm_activity_parse((const char *)sqlite3_column_text(st, 6),
	    &r->activity) < 0 ||
	    lease_fsm_cleanup_parse((const char *)sqlite3_column_text(st, 9),
	    &r->cleanup) < 0) {
		lease_record_clear(r);
		lease__store_msg(s, "%s: lease row with an unknown state",
		    s->path);
		return LEASE_ECORRUPT;
	}
	r->adapter = lease__store_col_text(st, 3, &oom);
	r->isolation = lease__store_col_text(st, 4, &oom);
	r->unseen = sqlite3_column_int(st, 7) != 0;
	r->failed_reason = lease__store_col_text(st, 8, &oom);
	r->repo = lease__store_col_text(st, 10, &oom);
	r->base = lease__store_col_text(st, 11, &oom);
	r->base_ref = lease__store_col_text(st, 12, &oom);
	r->branch = lease__store_col_text(st, 13, &oom);
	r->worktree = lease__store_col_text(st, 14, &oom);
	r->workspace = lease__store_col_text(st, 15, &oom);
	r->sandbox_id = lease__store_col_text(st, 16, &oom);
	r->policy = lease__store_col_text(st, 17, &oom);
	r->limits = lease__store_col_text(st, 18, &oom);
	r->holder_pid = sqlite3_column_int64(st, 19);
	r->holder_start = sqlite3_column_int64(st, 20);
	r->created_at = sqlite3_column_int64(st, 21);
	r->updated_at = sqlite3_column_int64(st, 22);
	t = (const char *)sqlite3_column_text(st, 23);
	snprintf(r->receipt_head, sizeof r->receipt_head, "%s",
	    t != NULL ? t : "");
	r->receipt_len = sqlite3_column_int64(st, 24);
	r->result = lease__store_col_text(st, 25, &oom);
	r->cmd = lease__store_col_text(st, 26, &oom);
	r->usage.requests = sqlite3_column_int64(st, LEASE_USAGE_COL);
	r->usage.input = sqlite3_column_int64(st, LEASE_USAGE_COL + 1);
	r->usage.output = sqlite3_column_int64(st, LEASE_USAGE_COL + 2);
	r->usage.cache_write = sqlite3_column_int64(st, LEASE_USAGE_COL + 3);
	r->usage.cache_read = sqlite3_column_int64(st, LEASE_USAGE_COL + 4);
	r->usage.cost_nano = sqlite3_column_int64(st, LEASE_USAGE_COL + 5);
	r->usage.cost_unknown = sqlite3_column_int64(st, LEASE_USAGE_COL + 6);
	if (oom) {
		lease_record_clear(r);
		return -ENOMEM;
	}
	return 0;
}

int
lease_record_get(struct lease_store *s, const char *id,
    struct lease_record *out)
{
	sqlite3_stmt *st;
	int rc;

	assert(s != NULL && s->db != NULL && out != NULL);
	memset(out, 0, sizeof *out);
	if (!lease_id_valid(id))
		return LEASE_EBADID;
	if ((rc = lease__store_stmt(s, sql_get[with_usage(s)], &st)) < 0)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		rc = row_to_record(s, st, out);
		sqlite3_reset(st);
		return rc;
	}
	sqlite3_reset(st);
	if (rc == SQLITE_DONE) {
		lease__store_msg(s, "no lease %s", id);
		return LEASE_ENOTFOUND;
	}
	return lease__store_fail(s, rc, "read lease");
}

int
lease_record_list(struct lease_store *s, unsigned flags,
    struct lease_record **out, size_t *n)
{
	struct lease_record *v = NULL, *nv;
	size_t len = 0, cap = 0;
	sqlite3_stmt *st;
	int rc;

	assert(s != NULL && s->db != NULL && out != NULL && n != NULL);
	*out = NULL;
	*n = 0;
	rc = lease__store_stmt(s, (flags & LEASE_LIST_ALL) ?
	    sql_list_all[with_usage(s)] : sql_list_live[with_usage(s)], &st);
	if (rc < 0)
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == cap) {
			cap = cap ? cap * 2 : 16;
			if ((nv = realloc(v, cap * sizeof *v)) == NULL) {
				rc = -ENOMEM;
				goto fail;
			}
			v = nv;
		}
		if ((rc = row_to_record(s, st, &v[len])) < 0)
			goto fail;
		len++;
	}
	if (rc != SQLITE_DONE) {
		rc = lease__store_fail(s, rc, "list leases");
		goto fail;
	}
	sqlite3_reset(st);
	*out = v;
	*n = len;
	return 0;
fail:
	sqlite3_reset(st);
	lease_record_list_free(v, len);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Writes                                                               */

static int
cmd_json(char *const *cmd, char **out)
{
	json_t *a;
	size_t i;

	*out = NULL;
	if (cmd == NULL)
		return 0;
	if ((a = json_array()) == NULL)
		return -ENOMEM;
	for (i = 0; cmd[i] != NULL; i++) {
		if (json_array_append_new(a, json_string(cmd[i])) < 0) {
			json_decref(a);
			return -EINVAL;	/* not UTF-8 */
		}
	}
	*out = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	return *out != NULL ? 0 : -ENOMEM;
}

static bool
is_json(const char *text)
{
	json_t *j;

	if (text == NULL)
		return true;
	j = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL);
	json_decref(j);
	return j != NULL;
}

static const char sql_id_claim[] =
    "INSERT OR IGNORE INTO ids (id, at) VALUES (?1, ?2)";
static const char sql_insert[] =
    "INSERT INTO leases (id, name, mode, adapter, isolation, lease_state,"
    " activity, unseen, cleanup, repo, policy, limits, cmd, created_at,"
    " updated_at) VALUES (?1, ?2, ?3, ?4, ?5, 'provisioning', 'starting',"
    " 0, 'none', ?6, ?7, ?8, ?9, ?10, ?10)";

static const char sql_name_live[] =
    "SELECT 1 FROM leases WHERE name = ?1 AND lease_state NOT IN "
    SQL_FINAL_STATES " LIMIT 1";

/*
 * Inside the insert's transaction: the first of NAME, NAME-2... NAME-999
 * that no live lease has, into out (a long NAME cut, at a character, to
 * leave room for the suffix). -EEXIST when all are taken.
 */
static int
name_pick(struct lease_store *s, const char *name,
    char out[NAME_MAX_BYTES + 1])
{
	sqlite3_stmt *st;
	char suffix[8];
	size_t keep;
	int rc;

	for (unsigned k = 1; k <= NAME_TRIES; k++) {
		suffix[0] = '\0';
		if (k > 1)
			snprintf(suffix, sizeof suffix, "-%u", k);
		keep = strlen(name);
		if (keep > NAME_MAX_BYTES - strlen(suffix)) {
			keep = NAME_MAX_BYTES - strlen(suffix);
			while (keep > 0 && (name[keep] & 0xc0) == 0x80)
				keep--;		/* not inside a character */
		}
		snprintf(out, NAME_MAX_BYTES + 1, "%.*s%s", (int)keep, name,
		    suffix);
		if ((rc = lease__store_stmt(s, sql_name_live, &st)) < 0)
			return rc;
		sqlite3_bind_text(st, 1, out, -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
		sqlite3_reset(st);
		if (rc == SQLITE_DONE)
			return 0;
		if (rc != SQLITE_ROW)
			return lease__store_fail(s, rc, "read live names");
	}
	lease__store_msg(s, "%d live leases are named '%.64s'", NAME_TRIES,
	    name);
	return -EEXIST;
}

int
lease_record_insert(struct lease_store *s, const struct lease_spec *spec,
    char id_out[LEASE_ID_LEN + 1])
{
	char picked[NAME_MAX_BYTES + 1];
	const char *name;
	char id[LEASE_ID_LEN + 1];
	sqlite3_stmt *st;
	char *cmd = NULL;
	int64_t now;
	int rc, tries;

	assert(s != NULL && s->db != NULL && spec != NULL && id_out != NULL);
	if ((unsigned)spec->mode >= LEASE_MODE_COUNT ||
	    (spec->name != NULL && strlen(spec->name) > NAME_MAX_BYTES) ||
	    !is_json(spec->limits)) {
		lease__store_msg(s, "invalid lease request (mode, name over "
		    "%d bytes, or limits not JSON)", NAME_MAX_BYTES);
		return -EINVAL;
	}
	if ((rc = cmd_json(spec->cmd, &cmd)) < 0) {
		lease__store_msg(s, "invalid lease command");
		return rc;
	}
	if ((rc = lease__store_begin(s)) < 0)
		goto out;
	for (tries = 0;; tries++) {
		if (tries == ID_RETRIES) {
			lease__store_msg(s, "no free lease ID after %d tries",
			    tries);
			rc = LEASE_EDB;
			goto fail;
		}
		if ((rc = lease_id_new(id)) < 0) {
			lease__store_msg(s, "getrandom: %s", strerror(-rc));
			goto fail;
		}
		now = lease_id_now_ms();
		if ((rc = lease__store_stmt(s, sql_id_claim, &st)) < 0)
			goto fail;
		sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, now);
		if ((rc = lease__store_step_done(s, st, "claim lease ID")) < 0)
			goto fail;
		if (sqlite3_changes(s->db) == 1)
			break;
	}
	name = spec->name != NULL && *spec->name != '\0' ? spec->name : id;
	/* the check and the insert under one write lock (issue 21) */
	if (spec->unique_name && name != id) {
		if ((rc = name_pick(s, name, picked)) < 0)
			goto fail;
		name = picked;
	}
	if ((rc = lease__store_stmt(s, sql_insert, &st)) < 0)
		goto fail;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, lease_fsm_mode_name(spec->mode), -1,
	    SQLITE_STATIC);
	sqlite3_bind_text(st, 4, spec->adapter != NULL ? spec->adapter :
	    (spec->mode == LEASE_MODE_TRUSTED_LOCAL ? "trusted_local" :
	    "bwrap"), -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 5, spec->isolation != NULL ? spec->isolation :
	    (spec->mode == LEASE_MODE_TRUSTED_LOCAL ? "trusted_local" :
	    "unknown"), -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 6, spec->repo, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 7, spec->policy, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 8, spec->limits, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 9, cmd, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 10, now);
	if ((rc = lease__store_step_done(s, st, "insert lease")) < 0)
		goto fail;
	if ((rc = lease__event_log(s, id, now, "lease", NULL, "provisioning",
	    "created")) < 0)
		goto fail;
	if ((rc = lease__store_commit(s)) < 0)
		goto out;
	memcpy(id_out, id, sizeof id);
	if (spec->name_out != NULL)
		snprintf(spec->name_out, NAME_MAX_BYTES + 1, "%s", name);
	rc = 0;
	goto out;
fail:
	lease__store_rollback(s);
out:
	free(cmd);
	return rc;
}

static const char sql_state_of[] =
    "SELECT lease_state, cleanup FROM leases WHERE id = ?1";
static const char sql_set_state[] =
    "UPDATE leases SET lease_state = ?2, failed_reason = CASE WHEN ?3"
    " THEN ?4 ELSE failed_reason END, updated_at = ?5 WHERE id = ?1";
static const char sql_runtime_left[] =
    "SELECT count(*) FROM resources WHERE lease_id = ?1 AND state !="
    " 'removed' AND kind NOT IN ('branch','lease_dir')";
static const char sql_set_cleanup[] =
    "UPDATE leases SET cleanup = ?2, updated_at = ?3 WHERE id = ?1";

/* Inside a transaction: the lease's state and cleanup. */
static int
read_state(struct lease_store *s, const char *id, enum lease_state *state,
    enum lease_cleanup *cleanup)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = lease__store_stmt(s, sql_state_of, &st)) < 0)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		sqlite3_reset(st);
		return rc == SQLITE_DONE ? LEASE_ENOTFOUND :
		    lease__store_fail(s, rc, "read lease state");
	}
	rc = 0;
	if (lease_fsm_state_parse((const char *)sqlite3_column_text(st, 0),
	    state) < 0 ||
	    lease_fsm_cleanup_parse((const char *)sqlite3_column_text(st, 1),
	    cleanup) < 0) {
		lease__store_msg(s, "%s: lease %s has an unknown state",
		    s->path, id);
		rc = LEASE_ECORRUPT;
	}
	sqlite3_reset(st);
	return rc;
}

static int
runtime_left(struct lease_store *s, const char *id, int64_t *n)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = lease__store_stmt(s, sql_runtime_left, &st)) < 0)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*n = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return rc == SQLITE_ROW ? 0 : lease__store_fail(s, rc,
	    "count resources");
}

static int
write_cleanup(struct lease_store *s, const char *id, enum lease_cleanup from,
    enum lease_cleanup to, const char *reason, int64_t at)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = lease__store_stmt(s, sql_set_cleanup, &st)) < 0)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, lease_fsm_cleanup_name(to), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, at);
	if ((rc = lease__store_step_done(s, st, "set cleanup")) < 0)
		return rc;
	return lease__event_log(s, id, at, "cleanup",
	    lease_fsm_cleanup_name(from), lease_fsm_cleanup_name(to), reason);
}

int
lease__record_cleanup_eval(struct lease_store *s, const char *id, int64_t at)
{
	enum lease_state state;
	enum lease_cleanup cleanup;
	int64_t left = 0;
	int rc;

	if ((rc = read_state(s, id, &state, &cleanup)) < 0)
		return rc;
	if (!lease_fsm_state_final(state))
		return 0;
	if ((rc = runtime_left(s, id, &left)) < 0)
		return rc;
	if (left == 0 && (cleanup == LEASE_CLEANUP_PENDING ||
	    cleanup == LEASE_CLEANUP_FAILED))
		return write_cleanup(s, id, cleanup, LEASE_CLEANUP_CONFIRMED,
		    "runtime resources removed", at);
	if (left > 0 && cleanup != LEASE_CLEANUP_PENDING &&
	    cleanup != LEASE_CLEANUP_FAILED)
		return write_cleanup(s, id, cleanup, LEASE_CLEANUP_PENDING,
		    "runtime resources left", at);
	return 0;
}

/* Inside a transaction on id: the transition (lease_int.h). */
int
lease__record_transition_tx(struct lease_store *s, const char *id,
    enum lease_event ev, const char *reason, int64_t now,
    enum lease_state *next)
{
	enum lease_state cur, to;
	enum lease_cleanup cleanup;
	sqlite3_stmt *st;
	int rc;

	if ((rc = read_state(s, id, &cur, &cleanup)) < 0)
		return rc;
	if ((rc = lease_fsm_next(cur, ev, &to)) < 0) {
		lease__store_msg(s, "lease %s: %s is not allowed from %s", id,
		    lease_fsm_event_name(ev), lease_fsm_state_name(cur));
		return rc;
	}
	if ((rc = lease__store_stmt(s, sql_set_state, &st)) < 0)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, lease_fsm_state_name(to), -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 3, ev == LEASE_EV_FAIL);
	sqlite3_bind_text(st, 4, reason, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 5, now);
	if ((rc = lease__store_step_done(s, st, "set lease state")) < 0)
		return rc;
	if ((rc = lease__event_log(s, id, now, "lease",
	    lease_fsm_state_name(cur),
	    lease_fsm_state_name(to), reason)) < 0)
		return rc;
	if (lease_fsm_state_final(to) &&
	    (rc = lease__record_cleanup_eval(s, id, now)) < 0)
		return rc;
	if (next != NULL)
		*next = to;
	return 0;
}

int
lease_record_transition(struct lease_store *s, const char *id,
    enum lease_event ev, const char *reason, enum lease_state *next)
{
	enum lease_state to;
	int rc;

	assert(s != NULL && s->db != NULL);
	if ((rc = lease__store_begin_lease(s, id)) < 0)
		return rc;
	if ((rc = lease__record_transition_tx(s, id, ev, reason,
	    lease_id_now_ms(), &to)) < 0) {
		lease__store_rollback(s);
		return rc;
	}
	if ((rc = lease__store_commit(s)) < 0)
		return rc;
	if (next != NULL)
		*next = to;
	return 0;
}

int
lease_record_transition_from(struct lease_store *s, const char *id,
    enum lease_state from, enum lease_event ev, const char *reason,
    enum lease_state *next)
{
	enum lease_state cur, to;
	enum lease_cleanup cleanup;
	int rc;

	assert(s != NULL && s->db != NULL);
	if ((rc = lease__store_begin_lease(s, id)) < 0)
		return rc;
	/* Compare, then swap, in one transaction. */
	if ((rc = read_state(s, id, &cur, &cleanup)) < 0)
		goto fail;
	if (cur != from) {
		lease__store_msg(s, "lease %s is %s, no longer %s", id,
		    lease_fsm_state_name(cur), lease_fsm_state_name(from));
		rc = LEASE_EBUSY;
		goto fail;
	}
	if ((rc = lease__record_transition_tx(s, id, ev, reason,
	    lease_id_now_ms(), &to)) < 0)
		goto fail;
	if ((rc = lease__store_commit(s)) < 0)
		return rc;
	if (next != NULL)
		*next = to;
	return 0;
fail:
	lease__store_rollback(s);
	return rc;
}

static const char sql_activity_of[] =
    "SELECT activity FROM leases WHERE id = ?1";
static const char sql_set_activity[] =
    "UPDATE leases SET activity = ?2, unseen = CASE WHEN ?3 THEN 1 ELSE"
    " unseen END, updated_at = ?4 WHERE id = ?1";

static int
set_activity(struct lease_store *s, const char *id, enum lease_activity act,
    const char *signal, bool log)
{
	sqlite3_stmt *st;
	char cur[32] = "";
	int64_t now = lease_id_now_ms();
	const unsigned char *t;
	int rc;

	assert(s != NULL && s->db != NULL);
	if ((unsigned)act >= LEASE_ACT_COUNT)
		return -EINVAL;
	if ((rc = lease__store_begin_lease(s, id)) < 0)
		return rc;
	if ((rc = lease__store_stmt(s, sql_activity_of, &st)) < 0)
		goto fail;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		t = sqlite3_column_text(st, 0);
		snprintf(cur, sizeof cur, "%s", t != NULL ? (const char *)t :
		    "");
	}
	sqlite3_reset(st);
	if (rc != SQLITE_ROW) {
		rc = lease__store_fail(s, rc, "read activity");
		goto fail;
	}
	if (strcmp(cur, lease_fsm_activity_name(act)) == 0) {
		lease__store_rollback(s);
		return 0;
	}
	if ((rc = lease__store_stmt(s, sql_set_activity, &st)) < 0)
		goto fail;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, lease_fsm_activity_name(act), -1,
	    SQLITE_STATIC);
	sqlite3_bind_int(st, 3, act == LEASE_ACT_DONE ||
	    act == LEASE_ACT_FAILED);
	sqlite3_bind_int64(st, 4, now);
	if ((rc = lease__store_step_done(s, st, "set activity")) < 0)
		goto fail;
	if (log && (rc = lease__event_log(s, id, now, "activity", cur,
	    lease_fsm_activity_name(act), signal)) < 0)
		goto fail;
	return lease__store_commit(s);
fail:
	lease__store_rollback(s);
	return rc;
}

int
lease_record_set_activity(struct lease_store *s, const char *id,
    enum lease_activity act, const char *signal)
{
	return set_activity(s, id, act, signal, true);
}

int
lease_record_set_activity_unlogged(struct lease_store *s, const char *id,
    enum lease_activity act)
{
	return set_activity(s, id, act, NULL, false);
}

static const char sql_seen[] =
    "UPDATE leases SET unseen = 0 WHERE id = ?1";

int
lease_record_mark_seen(struct lease_store *s, const char *id)
{
	sqlite3_stmt *st;
	int rc;

	assert(s != NULL && s->db != NULL);
	if ((rc = lease__store_begin_lease(s, id)) < 0)
		return rc;
	if ((rc = lease__store_stmt(s, sql_seen, &st)) < 0) {
		lease__store_rollback(s);
		return rc;
	}
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	if ((rc = lease__store_step_done(s, st, "mark seen")) < 0) {
		lease__store_rollback(s);
		return rc;
	}
	return lease__store_commit(s);
}

int
lease_record_set_cleanup(struct lease_store *s, const char *id,
    enum lease_cleanup to, const char *reason)
{
	enum lease_state state;
	enum lease_cleanup cur;
	int rc;

	assert(s != NULL && s->db != NULL);
	if ((unsigned)to >= LEASE_CLEANUP_COUNT)
		return -EINVAL;
	if ((rc = lease__store_begin_lease(s, id)) < 0)
		return rc;
	if ((rc = read_state(s, id, &state, &cur)) < 0)
		goto fail;
	if (cur == to) {
		lease__store_rollback(s);
		return 0;
	}
	if ((rc = write_cleanup(s, id, cur, to, reason, lease_id_now_ms())) < 0)
		goto fail;
	return lease__store_commit(s);
fail:
	lease__store_rollback(s);
	return rc;
}

#define SET_TEXT(col) \
	"UPDATE leases SET " col " = ?2, updated_at = ?3 WHERE id = ?1"

static const char *const sql_set_text[LEASE_FIELD_COUNT] = {
	[LEASE_FIELD_NAME] = SET_TEXT("name"),
	[LEASE_FIELD_ADAPTER] = SET_TEXT("adapter"),
	[LEASE_FIELD_ISOLATION] = SET_TEXT("isolation"),
	[LEASE_FIELD_REPO] = SET_TEXT("repo"),
	[LEASE_FIELD_BASE] = SET_TEXT("base"),
	[LEASE_FIELD_BASE_REF] = SET_TEXT("base_ref"),
	[LEASE_FIELD_BRANCH] = SET_TEXT("branch"),
	[LEASE_FIELD_WORKTREE] = SET_TEXT("worktree"),
	[LEASE_FIELD_WORKSPACE] = SET_TEXT("workspace"),
	[LEASE_FIELD_SANDBOX_ID] = SET_TEXT("sandbox_id"),
	[LEASE_FIELD_POLICY] = SET_TEXT("policy"),
	[LEASE_FIELD_LIMITS] = SET_TEXT("limits"),
	[LEASE_FIELD_RESULT] = SET_TEXT("result"),
};

int
lease__record_set_text(struct lease_store *s, const char *id,
    enum lease_field f, const char *value, int64_t at)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = lease__store_stmt(s, sql_set_text[f], &st)) < 0)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, value, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, at);
	return lease__store_step_done(s, st, "set lease field");
}

int
lease_record_set_text(struct lease_store *s, const char *id,
    enum lease_field f, const char *value)
{
	int rc;

	assert(s != NULL && s->db != NULL);
	if ((unsigned)f >= LEASE_FIELD_COUNT)
		return -EINVAL;
	if ((f == LEASE_FIELD_NAME && (value == NULL ||
	    strlen(value) > NAME_MAX_BYTES)) ||
	    ((f == LEASE_FIELD_LIMITS || f == LEASE_FIELD_RESULT) &&
	    !is_json(value)) ||
	    ((f == LEASE_FIELD_ADAPTER || f == LEASE_FIELD_ISOLATION) &&
	    value == NULL)) {
		lease__store_msg(s, "invalid value for lease field %d", f);
		return -EINVAL;
	}
	if ((rc = lease__store_begin_lease(s, id)) < 0)
		return rc;
	if ((rc = lease__record_set_text(s, id, f, value,
	    lease_id_now_ms())) < 0) {
		lease__store_rollback(s);
		return rc;
	}
	return lease__store_commit(s);
}

static const char sql_set_holder[] =
    "UPDATE leases SET holder_pid = ?2, holder_start = ?3, updated_at = ?4"
    " WHERE id = ?1";

int
lease_record_set_holder(struct lease_store *s, const char *id, pid_t pid,
    int64_t start)
{
	sqlite3_stmt *st;
	int rc;

	assert(s != NULL && s->db != NULL);
	if (pid < 0)
		return -EINVAL;
	if ((rc = lease__store_begin_lease(s, id)) < 0)
		return rc;
	if ((rc = lease__store_stmt(s, sql_set_holder, &st)) < 0)
		goto fail;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	if (pid > 0) {
		sqlite3_bind_int64(st, 2, pid);
		sqlite3_bind_int64(st, 3, start);
	}
	sqlite3_bind_int64(st, 4, lease_id_now_ms());
	if ((rc = lease__store_step_done(s, st, "set holder")) < 0)
		goto fail;
	return lease__store_commit(s);
fail:
	lease__store_rollback(s);
	return rc;
}

int
lease_record_claim(struct lease_store *s, const char *id, pid_t pid,
    int64_t start, const char *reason)
{
	enum lease_state cur;
	enum lease_cleanup cleanup;
	sqlite3_stmt *st;
	int rc;

	assert(s != NULL && s->db != NULL);
	if (pid <= 0)
		return -EINVAL;
	if ((rc = lease__store_begin_lease(s, id)) < 0)
		return rc;
	if ((rc = read_state(s, id, &cur, &cleanup)) < 0)
		goto fail;
	if (cur != LEASE_STATE_PROVISIONING) {
		lease__store_msg(s, "lease %s is %s: its holder may not start",
		    id, lease_fsm_state_name(cur));
		rc = LEASE_EBUSY;
		goto fail;
	}
	if ((rc = lease__store_stmt(s, sql_set_holder, &st)) < 0)
		goto fail;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, pid);
	sqlite3_bind_int64(st, 3, start);
	sqlite3_bind_int64(st, 4, lease_id_now_ms());
	if ((rc = lease__store_step_done(s, st, "set holder")) < 0)
		goto fail;
	if ((rc = lease__record_transition_tx(s, id, LEASE_EV_START, reason,
	    lease_id_now_ms(), NULL)) < 0)
		goto fail;
	return lease__store_commit(s);
fail:
	lease__store_rollback(s);
	return rc;
}

static const char sql_delete[] = "DELETE FROM leases WHERE id = ?1";

int
lease_record_delete(struct lease_store *s, const char *id)
{
	enum lease_state state;
	enum lease_cleanup cleanup;
	sqlite3_stmt *st;
	int rc;

	assert(s != NULL && s->db != NULL);
	if ((rc = lease__store_begin_lease(s, id)) < 0)
		return rc;
	if ((rc = read_state(s, id, &state, &cleanup)) < 0)
		goto fail;
	if (!lease_fsm_state_final(state)) {
		lease__store_msg(s, "lease %s is %s: cancel or finish it first",
		    id, lease_fsm_state_name(state));
		rc = LEASE_EBUSY;
		goto fail;
	}
	if ((rc = lease__store_stmt(s, sql_delete, &st)) < 0)
		goto fail;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	if ((rc = lease__store_step_done(s, st, "delete lease")) < 0)
		goto fail;
	return lease__store_commit(s);
fail:
	lease__store_rollback(s);
	return rc;
}
