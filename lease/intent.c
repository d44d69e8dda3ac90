/*
 * intent.c: changes to the operator's repository, journaled first (SPEC
 * 9.2, 7.6). An apply records its intent {target, old, new} (and the
 * receipt "applying") before the target branch moves by compare-and-swap;
 * after the move one transaction closes the intent and writes what the
 * move means: the result's "applied" record, the receipt "applied" and the
 * transition to applied. The same for a move of the lease's own branch
 * (apply's rebase, --hunks). What reconciliation does with an intent a
 * killed apply left open is intent_recover.c.
 */
#include <assert.h>
#include <errno.h>
#include <git2.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lease/lease_int.h"

static const char sql_open_of[] =
    "SELECT seq, repo, ref, old, new, how, at FROM intents"
    " WHERE lease_id = ?1 AND state = 'open' ORDER BY seq LIMIT 1";
static const char sql_next_seq[] =
    "SELECT COALESCE(MAX(seq), 0) + 1 FROM intents WHERE lease_id = ?1";
static const char sql_insert[] =
    "INSERT INTO intents (lease_id, seq, op, repo, ref, old, new, how,"
    " state, at) VALUES (?1, ?2, 'apply', ?3, ?4, ?5, ?6, ?7, 'open', ?8)";
static const char sql_close[] =
    "UPDATE intents SET state = ?3, closed_at = ?4"
    " WHERE lease_id = ?1 AND seq = ?2 AND state = 'open'";
static const char sql_result_of[] = "SELECT result FROM leases WHERE id = ?1";

/* Inside a transaction: a receipt whose fields we own (NULL: -ENOMEM). */
static int
receipt(struct lease_store *s, const char *id, const char *kind,
    json_t *fields)
{
	int rc;

	if (fields == NULL)
		return -ENOMEM;
	rc = lease__receipt_append_tx(s, id, kind, fields, NULL);
	json_decref(fields);
	return rc;
}

void
lease_intent_clear(struct lease_intent *in)
{
	if (in == NULL)
		return;
	free(in->repo);
	memset(in, 0, sizeof *in);
}

static int
need_v3(struct lease_store *s)
{
	if (s->version >= 3)
		return 0;
	lease__store_msg(s, "%s: schema version %d has no intents; open it "
	    "with the current schema", s->path, s->version);
	return LEASE_ESCHEMA;
}

/* Inside a transaction: the lease's open intent (1), none (0), or error. */
int
lease__intent_read_open(struct lease_store *s, const char *id,
    struct lease_intent *out)
{
	sqlite3_stmt *st;
	bool oom = false;
	int rc;

	memset(out, 0, sizeof *out);
	if ((rc = lease__store_stmt(s, sql_open_of, &st)) < 0)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		out->seq = sqlite3_column_int64(st, 0);
		out->repo = lease__store_col_text(st, 1, &oom);
		snprintf(out->ref, sizeof out->ref, "%s",
		    (const char *)sqlite3_column_text(st, 2));
		snprintf(out->old, sizeof out->old, "%s",
		    (const char *)sqlite3_column_text(st, 3));
		snprintf(out->new_, sizeof out->new_, "%s",
		    (const char *)sqlite3_column_text(st, 4));
		snprintf(out->how, sizeof out->how, "%s",
		    (const char *)sqlite3_column_text(st, 5));
		out->at = sqlite3_column_int64(st, 6);
	}
	sqlite3_reset(st);
	if (rc == SQLITE_ROW && (oom || out->repo == NULL)) {
		lease_intent_clear(out);
		return -ENOMEM;
	}
	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	return lease__store_fail(s, rc, "read intent");
}

/* The full name of lease id's own branch, refs/heads/corral/<id>. */
static void
own_ref(const char *id, char *out, size_t sz)
{
	snprintf(out, sz, "refs/heads/" LEASE_BRANCH_PREFIX "%s", id);
}

/* Is in a move of the lease's own branch (apply's rebase, --hunks)? */
bool
lease__intent_is_branch(const struct lease_intent *in, const char *id)
{
	char ref[LEASE_BRANCH_LEN + 16];

	own_ref(id, ref, sizeof ref);
	return strcmp(in->ref, ref) == 0;
}

/*
 * The lease's open intent, which must be seq (and, with branch, a move of
 * its own branch): 0 and *in (clear it), or LEASE_EBADTRANSITION with the
 * message, or an error (*in cleared).
 */
static int
open_seq(struct lease_store *s, const char *id, int64_t seq, bool branch,
    struct lease_intent *in)
{
	int rc;

	if ((rc = lease__intent_read_open(s, id, in)) == 1 && in->seq == seq &&
	    (!branch || lease__intent_is_branch(in, id)))
		return 0;
	lease_intent_clear(in);
	if (rc < 0)
		return rc;
	lease__store_msg(s, "lease %s: intent %lld is not open", id,
	    (long long)seq);
	return LEASE_EBADTRANSITION;
}

int
lease_intent_get_open(struct lease_store *s, const char *id,
    struct lease_intent *out)
{
	assert(s != NULL && s->db != NULL && out != NULL);
	memset(out, 0, sizeof *out);
	if (s->version < 3)
		return 0;
	if (!lease_id_valid(id))
		return LEASE_EBADID;
	return lease__intent_read_open(s, id, out);
}

static int open_intent(struct lease_store *, const char *id,
    const char *repo, const char *ref, const char *old_hex,
    const char *new_hex, const char *how, int64_t *seq_out);

int
lease_intent_open(struct lease_store *s, const char *id, const char *repo,
    const char *ref, const char *old_hex, const char *new_hex,
    const char *how, int64_t *seq_out)
{
	assert(s != NULL && s->db != NULL);
	if (repo == NULL || ref == NULL || old_hex == NULL ||
	    new_hex == NULL || how == NULL)
		return -EINVAL;
	return open_intent(s, id, repo, ref, old_hex, new_hex, how, seq_out);
}

int
lease__intent_branch_open(struct lease_store *s, const char *id,
    const char *repo, const char *old_hex, const char *how, int64_t *seq)
{
	char ref[LEASE_BRANCH_LEN + 16];

	assert(s != NULL && s->db != NULL);
	if (repo == NULL || old_hex == NULL || how == NULL ||
	    !lease_id_valid(id))
		return -EINVAL;
	own_ref(id, ref, sizeof ref);
	/* new is known once the commit exists (lease__intent_branch_new) */
	return open_intent(s, id, repo, ref, old_hex, "", how, seq);
}

static int
open_intent(struct lease_store *s, const char *id, const char *repo,
    const char *ref, const char *old_hex, const char *new_hex,
    const char *how, int64_t *seq_out)
{
	struct lease_intent cur;
	sqlite3_stmt *st;
	int64_t seq, now = lease_id_now_ms();
	bool branch;
	int rc;

	if ((rc = need_v3(s)) < 0 ||
	    (rc = lease__store_begin_lease(s, id)) < 0)
		return rc;
	if ((rc = lease__intent_read_open(s, id, &cur)) != 0) {
		if (rc == 1) {
			lease__store_msg(s, "lease %s: an earlier apply into "
			    "%s was interrupted; run corral reconcile first",
			    id, cur.ref);
			lease_intent_clear(&cur);
			rc = LEASE_EBUSY;
		}
		goto fail;
	}
	if ((rc = lease__store_stmt(s, sql_next_seq, &st)) < 0)
		goto fail;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	if ((rc = sqlite3_step(st)) != SQLITE_ROW) {
		sqlite3_reset(st);
		rc = lease__store_fail(s, rc, "number intent");
		goto fail;
	}
	seq = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	if ((rc = lease__store_stmt(s, sql_insert, &st)) < 0)
		goto fail;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, seq);
	sqlite3_bind_text(st, 3, repo, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, ref, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, old_hex, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, new_hex, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, how, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 8, now);
	if ((rc = lease__store_step_done(s, st, "record intent")) < 0)
		goto fail;
	memset(&cur, 0, sizeof cur);
	snprintf(cur.ref, sizeof cur.ref, "%s", ref);
	branch = lease__intent_is_branch(&cur, id);
	if ((rc = branch ? receipt(s, id, "result_moving", json_pack("{s:s, "
	    "s:s, s:s}", "branch", ref, "old", old_hex, "via", how)) :
	    receipt(s, id, "applying", json_pack("{s:s, s:s, s:s, s:s}",
	    "target", ref, "old", old_hex, "new", new_hex, "how", how))) < 0)
		goto fail;
	if ((rc = lease__store_commit(s)) < 0)
		return rc;
	if (seq_out != NULL)
		*seq_out = seq;
	return 0;
fail:
	lease__store_rollback(s);
	return rc;
}

/* Inside a transaction: close the open intent seq as state. */
static int
close_intent(struct lease_store *s, const char *id, int64_t seq,
    const char *state, int64_t now)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = lease__store_stmt(s, sql_close, &st)) < 0)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, seq);
	sqlite3_bind_text(st, 3, state, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, now);
	if ((rc = lease__store_step_done(s, st, "close intent")) < 0)
		return rc;
	if (sqlite3_changes(s->db) != 1) {
		lease__store_msg(s, "lease %s: intent %lld is not open", id,
		    (long long)seq);
		return LEASE_EBADTRANSITION;
	}
	return 0;
}

/* Inside a transaction: result["applied"] = what the intent did. */
static int
record_applied(struct lease_store *s, const char *id,
    const struct lease_intent *in, int64_t now)
{
	sqlite3_stmt *st;
	json_t *res = NULL;
	const unsigned char *t;
	char *text;
	int rc;

	if ((rc = lease__store_stmt(s, sql_result_of, &st)) < 0)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW &&
	    (t = sqlite3_column_text(st, 0)) != NULL)
		res = json_loads((const char *)t, 0, NULL);
	sqlite3_reset(st);
	if (rc != SQLITE_ROW)
		return lease__store_fail(s, rc, "read result");
	if ((res == NULL || !json_is_object(res)) && (json_decref(res),
	    res = json_object()) == NULL)
		return -ENOMEM;
	json_object_set_new(res, "applied", json_pack("{s:s, s:s, s:s, s:s, "
	    "s:I}", "target", in->ref, "from", in->old, "to", in->new_,
	    "how", in->how, "at", (json_int_t)now));
	text = json_dumps(res, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(res);
	if (text == NULL)
		return -ENOMEM;
	rc = lease__record_set_text(s, id, LEASE_FIELD_RESULT, text, now);
	free(text);
	return rc;
}

/*
 * Begin the lease's transaction and read its open intent, which must be
 * seq (and, with branch, a move of its own branch): 0 with the
 * transaction open, else an error with it rolled back.
 */
static int
open_for_close(struct lease_store *s, const char *id, int64_t seq,
    bool branch, struct lease_intent *in)
{
	int rc;

	if ((rc = need_v3(s)) < 0 ||
	    (rc = lease__store_begin_lease(s, id)) < 0)
		return rc;
	if ((rc = open_seq(s, id, seq, branch, in)) < 0)
		lease__store_rollback(s);
	return rc;
}

/*
 * End what open_for_close began: commit when every step went (rc 0),
 * else roll back and return rc. The intent read is freed either way.
 */
static int
end_close(struct lease_store *s, struct lease_intent *in, int rc)
{
	lease_intent_clear(in);
	if (rc < 0) {
		lease__store_rollback(s);
		return rc;
	}
	return lease__store_commit(s);
}

/*
 * Inside a transaction: close intent seq as undone, with a receipt of
 * kind naming what it moved (under key: "target" or "branch"), the
 * value the ref holds now and why.
 */
static int
close_undone(struct lease_store *s, const char *id, int64_t seq,
    const struct lease_intent *in, const char *kind, const char *key,
    const char *holds, const char *why)
{
	int rc;

	if ((rc = close_intent(s, id, seq, "undone", lease_id_now_ms())) < 0)
		return rc;
	return receipt(s, id, kind, json_pack("{s:s, s:s, s:s, s:s, s:s}",
	    key, in->ref, "old", in->old, "new", in->new_, "holds",
	    holds != NULL ? holds : "", "why", why != NULL ? why : ""));
}

int
lease_intent_done(struct lease_store *s, const char *id, int64_t seq,
    const char *via)
{
	struct lease_intent in;
	int64_t now = lease_id_now_ms();
	json_t *f;
	int rc;

	assert(s != NULL && s->db != NULL);
	if ((rc = open_for_close(s, id, seq, false, &in)) < 0)
		return rc;
	if ((rc = close_intent(s, id, seq, "done", now)) == 0 &&
	    (rc = record_applied(s, id, &in, now)) == 0) {
		f = json_pack("{s:s, s:s, s:s, s:s}", "target", in.ref, "from",
		    in.old, "to", in.new_, "how", in.how);
		if (f != NULL && via != NULL)
			json_object_set_new(f, "via", json_string(via));
		if ((rc = receipt(s, id, "applied", f)) == 0)
			rc = lease__record_transition_tx(s, id, LEASE_EV_APPLY,
			    in.how, now, NULL);
	}
	return end_close(s, &in, rc);
}

int
lease_intent_undo(struct lease_store *s, const char *id, int64_t seq,
    const char *why, const char *holds)
{
	struct lease_intent in;
	int rc;

	assert(s != NULL && s->db != NULL);
	if ((rc = open_for_close(s, id, seq, false, &in)) < 0)
		return rc;
	rc = close_undone(s, id, seq, &in, "apply_undone", "target", holds,
	    why);
	return end_close(s, &in, rc);
}

/* ------------------------------------------------------------------ */
/* The lease's own branch: apply's rebase and --hunks                    */

static const char sql_set_new[] =
    "UPDATE intents SET new = ?3 WHERE lease_id = ?1 AND seq = ?2"
    " AND state = 'open'";

int
lease__intent_branch_new(struct lease_store *s, const char *id, int64_t seq,
    const char *new_hex)
{
	sqlite3_stmt *st;
	int rc;

	assert(s != NULL && s->db != NULL);
	if ((rc = lease__store_begin_lease(s, id)) < 0)
		return rc;
	if ((rc = lease__store_stmt(s, sql_set_new, &st)) < 0)
		goto fail;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, seq);
	sqlite3_bind_text(st, 3, new_hex, -1, SQLITE_STATIC);
	if ((rc = lease__store_step_done(s, st, "record intent")) < 0)
		goto fail;
	if (sqlite3_changes(s->db) != 1) {
		lease__store_msg(s, "lease %s: intent %lld is not open", id,
		    (long long)seq);
		rc = LEASE_EBADTRANSITION;
		goto fail;
	}
	return lease__store_commit(s);
fail:
	lease__store_rollback(s);
	return rc;
}

int
lease__intent_branch_done(struct lease_store *s, const char *id, int64_t seq,
    const char *result_text)
{
	struct lease_intent in;
	int64_t now = lease_id_now_ms();
	int rc;

	assert(s != NULL && s->db != NULL && result_text != NULL);
	if ((rc = open_for_close(s, id, seq, true, &in)) < 0)
		return rc;
	if ((rc = close_intent(s, id, seq, "done", now)) == 0 &&
	    (rc = lease__record_set_text(s, id, LEASE_FIELD_RESULT,
	    result_text, now)) == 0)
		rc = receipt(s, id, "result_moved", json_pack("{s:s, s:s, s:s, "
		    "s:s}", "branch", in.ref, "from", in.old, "to", in.new_,
		    "via", in.how));
	return end_close(s, &in, rc);
}


/* history/<old>.<name> back to <name> in the result directory. */
static int
restore_file(const char *rdir, const char *old, const char *name)
{
	char from[4096], to[4096];

	if ((size_t)snprintf(from, sizeof from, "%s/history/%s.%s", rdir, old,
	    name) >= sizeof from || (size_t)snprintf(to, sizeof to, "%s/%s",
	    rdir, name) >= sizeof to)
		return -ENAMETOOLONG;
	if (rename(from, to) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

/*
 * Put the lease's own branch, result files and review worktree back where
 * in.old left them: corral/<id> from new back to old (compare-and-swap;
 * its lock file, corral's own, removed first), the patch and manifest the
 * move archived restored, old checked out in the review worktree (the
 * index lock a kill inside a checkout left removed first). The
 * result JSON was never written (it is, with the close, one transaction).
 * *holds: what the branch held. 0, LEASE_ESTALE (it holds neither: not
 * touched), or an error.
 */
static int
branch_back(struct lease_store *s, const char *state_dir, const char *id,
    const struct lease_intent *in, char holds[41])
{
	struct lease_git *g = NULL;
	git_reference *r = NULL;
	git_oid oid, old, new_;
	char *lk = NULL, *rdir = NULL, *wt_lk = NULL;
	char wt_index[LEASE_ID_LEN + 32];
	int rc;

	snprintf(holds, 41, "%s", "-");
	if (git_oid_fromstr(&old, in->old) < 0)
		return -EINVAL;
	rc = lease_git_open(&g, in->repo);
	if (rc == LEASE_ENOTREPO) {
		rc = 0;		/* the repository is gone: nothing to put back */
		goto out;
	}
	if (rc < 0) {
		lease__store_msg(s, "%s", lease_git_errmsg(g));
		goto out;
	}
	if ((lk = lease__intent_lock_path(g, in->ref)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	if (unlink(lk) < 0 && errno != ENOENT) {
		rc = -errno;
		lease__store_msg(s, "%s: %s", lk, strerror(errno));
		goto out;
	}
	if (git_reference_name_to_id(&oid, lease__git_repo(g), in->ref) == 0)
		git_oid_tostr(holds, 41, &oid);
	if (strcmp(holds, in->old) != 0) {
		if (in->new_[0] == '\0' || strcmp(holds, in->new_) != 0) {
			lease__store_msg(s, "lease %s: %s holds %.12s, neither "
			    "%.12s nor the commit corral was making", id,
			    in->ref, holds, in->old);
			rc = LEASE_ESTALE;
			goto out;
		}
		git_oid_fromstr(&new_, in->new_);
		if (git_reference_create_matching(&r, lease__git_repo(g),
		    in->ref, &old, 1, &new_, "corral: result move undone") <
		    0) {
			lease__store_msg(s, "%s: %s", in->ref,
			    git_error_last() != NULL ? git_error_last()->message :
			    "cannot update");
			rc = LEASE_EGIT;
			goto out;
		}
		git_reference_free(r);
	}
	if ((rdir = lease_path_result(state_dir, id)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = restore_file(rdir, in->old, "patch")) < 0 ||
	    (rc = restore_file(rdir, in->old, "manifest.json")) < 0) {
		lease__store_msg(s, "%s: %s", rdir, strerror(-rc));
		goto out;
	}
	/*
	 * A kill inside the checkout leaves the review worktree's index
	 * lock: the worktree is corral's, and nothing of it writes there now.
	 */
	snprintf(wt_index, sizeof wt_index, "worktrees/%s/index", id);
	if ((wt_lk = lease__intent_lock_path(g, wt_index)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	if (unlink(wt_lk) < 0 && errno != ENOENT) {
		rc = -errno;
		lease__store_msg(s, "%s: %s", wt_lk, strerror(errno));
		goto out;
	}
	rc = lease__git_worktree_checkout(g, id, &old);
	if (rc == LEASE_ESTALE)
		rc = 0;		/* no review worktree to put back */
	else if (rc < 0)
		lease__store_msg(s, "%s", lease_git_errmsg(g));
out:
	free(wt_lk);
	free(rdir);
	free(lk);
	lease_git_free(g);
	return rc;
}

int
lease__intent_branch_undo(struct lease_store *s, const char *state_dir,
    const char *id, int64_t seq, const char *why)
{
	struct lease_intent in;
	char holds[41];
	int rc;

	assert(s != NULL && s->db != NULL);
	if ((rc = open_seq(s, id, seq, true, &in)) < 0)
		return rc;
	if ((rc = branch_back(s, state_dir, id, &in, holds)) < 0 ||
	    (rc = lease__store_begin_lease(s, id)) < 0) {
		lease_intent_clear(&in);
		return rc;
	}
	rc = close_undone(s, id, seq, &in, "result_move_undone", "branch",
	    holds, why);
	return end_close(s, &in, rc);
}


/* "<common dir>/<name>.lock" of the repository (malloc'd). */
char *
lease__intent_lock_path(struct lease_git *g, const char *name)
{
	const char *common = git_repository_commondir(lease__git_repo(g));
	size_t n;
	char *p;

	if (common == NULL)
		return NULL;
	n = strlen(common) + strlen(name) + sizeof "/.lock";
	if ((p = malloc(n)) != NULL)
		snprintf(p, n, "%s%s%s.lock", common, common[0] != '\0' &&
		    common[strlen(common) - 1] == '/' ? "" : "/", name);
	return p;
}
