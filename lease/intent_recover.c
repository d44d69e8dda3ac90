/*
 * intent_recover.c: reconciliation of the intents (SPEC 9.2, 7.6), for
 * lease_recover_reconcile*: an intent a killed apply left open is
 * finished when the target holds the new commit and closed as undone when
 * it does not, its ref lock removed once it is known to be ours; and what
 * a killed corral left of a lease in the operator's .git (the lock of
 * corral/<id>, the admin entry of a removed review worktree) is removed.
 * Nothing else of the operator's repository is touched. Recording and
 * closing the intents is intent.c.
 */
#include <assert.h>
#include <errno.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lease/lease_int.h"

/* An empty ref lock this much younger than now may still be written. */
#define LOCK_SETTLE_MS 2000

static const char sql_open_ids[] =
    "SELECT DISTINCT lease_id FROM intents WHERE state = 'open'"
    " ORDER BY lease_id";

/*
 * Is the target's lock file at path the one a killed apply of in left?
 * libgit2 writes the new commit's ID into it before renaming it over the
 * ref: that content is ours. An empty one (killed between creating and
 * writing it) made after the intent is ours once it has stayed empty and
 * unchanged for LOCK_SETTLE_MS (a git of the operator's fills its own at
 * once): we wait for that. 1 ours, 0 absent, -EBUSY someone else's.
 */
static int
target_lock_ours(const char *path, const struct lease_intent *in)
{
	struct stat sb, again;
	struct timespec ts;
	char *text = NULL;
	size_t len = 0;
	int64_t mtime, age;
	int rc;

	if (lstat(path, &sb) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISREG(sb.st_mode))
		return -EBUSY;
	mtime = (int64_t)sb.st_mtim.tv_sec * 1000 + sb.st_mtim.tv_nsec /
	    1000000;
	if (sb.st_size == 0) {
		if (mtime + 1000 < in->at)
			return -EBUSY;	/* older than the intent */
		if ((age = lease_id_now_ms() - mtime) < LOCK_SETTLE_MS) {
			age = age < 0 ? 0 : age;
			ts.tv_sec = (LOCK_SETTLE_MS - age) / 1000;
			ts.tv_nsec = (long)((LOCK_SETTLE_MS - age) % 1000) *
			    1000000L;
			while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
				;
		}
		if (lstat(path, &again) < 0)
			return errno == ENOENT ? 0 : -errno;
		return again.st_ino == sb.st_ino && again.st_size == 0 &&
		    again.st_mtim.tv_sec == sb.st_mtim.tv_sec &&
		    again.st_mtim.tv_nsec == sb.st_mtim.tv_nsec ? 1 : -EBUSY;
	}
	if ((rc = lease__fs_read_capped(path, 128, &text, &len)) < 0)
		return -EBUSY;
	rc = len == 41 && strncmp(text, in->new_, 40) == 0 &&
	    text[40] == '\n' ? 1 : -EBUSY;
	free(text);
	return rc;
}

/*
 * A move of the lease's own branch a killed apply left open (its result
 * JSON, written with the close, still names the old commit): put the
 * branch, the result files and the review worktree back.
 */
static int
settle_branch(struct lease_store *s, struct lease_report *rep,
    const char *state_dir, const struct lease_intent *in, const char *id,
    bool dry)
{
	int rc;

	if (dry)
		return lease__recover_note(rep, LEASE_FIND_INTENT, id, "result "
		    "move of %s (%s) would be undone: back to %.12s", in->ref,
		    in->how, in->old) ? 0 : -ENOMEM;
	if ((rc = lease__intent_branch_undo(s, state_dir, id, in->seq,
	    "reconcile")) < 0)
		return lease__recover_note(rep, LEASE_FIND_INTENT, id, "result "
		    "move of %s (%s) left open: %s", in->ref, in->how,
		    lease_store_errmsg(s)) ? 0 : -ENOMEM;
	return lease__recover_note(rep, LEASE_FIND_INTENT, id, "result move "
	    "of %s (%s) undone: back to %.12s", in->ref, in->how, in->old) ?
	    0 : -ENOMEM;
}

/* Settle one lease's open intent; its lease lock is held. */
static int
settle(struct lease_store *s, struct lease_report *rep, const char *state_dir,
    const char *id, bool dry)
{
	struct lease_intent in;
	struct lease_git *g = NULL;
	git_oid oid;
	char holds[41] = "", *lk = NULL;
	int rc, ours;

	if ((rc = lease__intent_read_open(s, id, &in)) <= 0)
		return rc;
	if (lease__intent_is_branch(&in, id)) {
		rc = settle_branch(s, rep, state_dir, &in, id, dry);
		lease_intent_clear(&in);
		return rc;
	}
	rc = lease_git_open(&g, in.repo);
	if (rc == LEASE_ENOTREPO) {
		snprintf(holds, sizeof holds, "%s", "-");
		goto undo;
	}
	if (rc < 0) {
		rc = lease__recover_note(rep, LEASE_FIND_INTENT, id, "apply "
		    "into %s left open: %s", in.ref, lease_git_errmsg(g)) ?
		    0 : -ENOMEM;
		goto out;
	}
	if ((lk = lease__intent_lock_path(g, in.ref)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	if ((ours = target_lock_ours(lk, &in)) < 0) {
		/* the operator's git may be moving the branch right now */
		rc = lease__recover_note(rep, LEASE_FIND_INTENT, id, "apply "
		    "into %s left open: %s exists and is not corral's", in.ref,
		    lk) ? 0 : -ENOMEM;
		goto out;
	}
	if (ours == 1) {
		if (!dry && unlink(lk) < 0 && errno != ENOENT) {
			rc = -errno;
			lease__store_msg(s, "%s: %s", lk, strerror(errno));
			goto out;
		}
		if (lease__recover_note(rep, LEASE_FIND_REPAIRED, id, "%s: "
		    "the lock a killed apply left on %s %s", lk, in.ref, dry ?
		    "would be removed" : "removed") == NULL) {
			rc = -ENOMEM;
			goto out;
		}
	}
	if (git_reference_name_to_id(&oid, lease__git_repo(g), in.ref) == 0)
		git_oid_tostr(holds, sizeof holds, &oid);
	else
		snprintf(holds, sizeof holds, "%s", "-");
	if (strcmp(holds, in.new_) == 0) {
		if (lease__recover_note(rep, LEASE_FIND_INTENT, id, "apply "
		    "into %s %s: the branch holds %.12s", in.ref, dry ?
		    "would be finished" : "finished", in.new_) == NULL) {
			rc = -ENOMEM;
			goto out;
		}
		rc = dry ? 0 : lease_intent_done(s, id, in.seq, "reconcile");
		goto out;
	}
undo:
	if (lease__recover_note(rep, LEASE_FIND_INTENT, id, "apply into %s "
	    "%s: the branch holds %.12s, not %.12s (it never moved, or it "
	    "was moved back)", in.ref, dry ? "would be undone" : "undone",
	    holds, in.new_) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	rc = dry ? 0 : lease_intent_undo(s, id, in.seq, "reconcile", holds);
out:
	free(lk);
	lease_git_free(g);
	lease_intent_clear(&in);
	return rc;
}

int
lease_recover_intents(struct lease_store *s, struct lease_lock *held,
    const char *state_dir, unsigned flags, struct lease_report *rep)
{
	struct lease_lock *lk;
	sqlite3_stmt *st;
	char (*ids)[LEASE_ID_LEN + 1] = NULL, (*nv)[LEASE_ID_LEN + 1];
	const unsigned char *t;
	size_t n = 0, cap = 0, i;
	bool dry = (flags & LEASE_RECONCILE_DRY_RUN) != 0;
	int rc = 0, step;

	assert(s != NULL && s->db != NULL && rep != NULL);
	assert(held != NULL);
	if (state_dir == NULL)
		return -EINVAL;
	if (s->version < 3)
		return 0;
	if ((rc = lease__store_stmt(s, sql_open_ids, &st)) < 0)
		return rc;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		t = sqlite3_column_text(st, 0);
		if (t == NULL || !lease_id_valid((const char *)t))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			if ((nv = realloc(ids, cap * sizeof *ids)) == NULL) {
				rc = -ENOMEM;
				break;
			}
			ids = nv;
		}
		memcpy(ids[n++], t, LEASE_ID_LEN + 1);
	}
	sqlite3_reset(st);
	if (rc == 0 && step != SQLITE_DONE)
		rc = lease__store_fail(s, step, "list intents");
	for (i = 0; rc == 0 && i < n; i++) {
		rc = lease_lock_lease(state_dir, ids[i], 0, &lk);
		if (rc == LEASE_ELOCKED) {
			/* an apply of it is at work: its intent is its own */
			rc = lease__recover_note(rep, LEASE_FIND_LIVE, ids[i],
			    "an apply is at work: its intent is left to it") ?
			    0 : -ENOMEM;
			continue;
		}
		if (rc < 0)
			break;
		rc = settle(s, rep, state_dir, ids[i], dry);
		lease_lock_release(lk);
	}
	free(ids);
	return rc;
}

/*
 * What a killed corral left in the operator's .git for lease r (whose
 * lock is held, and which nothing else writes now): the lock file of its
 * branch corral/<id>, and the admin entry of a review worktree the
 * journal says is removed.
 */
int
lease__intent_leftovers(struct lease_store *s, struct lease_report *rep,
    struct lease_git *g, const char *state_dir,
    const struct lease_record *r, bool dry)
{
	struct lease_resource_row *v = NULL;
	char name[LEASE_BRANCH_LEN + 16], *lk, *wt;
	size_t n = 0, i;
	int rc, ex;

	if (g == NULL)
		return 0;
	snprintf(name, sizeof name, "refs/heads/" LEASE_BRANCH_PREFIX "%s",
	    r->id);
	if ((lk = lease__intent_lock_path(g, name)) == NULL)
		return -ENOMEM;
	rc = lease__fs_exists(lk);
	if (rc == 1 && !dry && unlink(lk) < 0 && errno != ENOENT)
		rc = -errno;
	if (rc == 1 && lease__recover_note(rep, LEASE_FIND_REPAIRED, r->id,
	    "%s: a stale lock of corral/%s %s", lk, r->id, dry ?
	    "would be removed" : "removed") == NULL)
		rc = -ENOMEM;
	if (rc < 0)
		lease__store_msg(s, "%s: %s", lk, strerror(-rc));
	free(lk);
	if (rc < 0)
		return rc;
	if ((rc = lease_resource_list(s, r->id, &v, &n)) < 0)
		return rc;
	for (i = 0; i < n && rc == 0; i++) {
		if (v[i].kind != LEASE_RES_WORKTREE ||
		    v[i].state != LEASE_RS_REMOVED)
			continue;
		if ((ex = lease_git_worktree_exists(g, r->id)) <= 0)
			continue;
		if ((wt = lease_path_worktree(state_dir, r->id)) == NULL) {
			rc = -ENOMEM;
			break;
		}
		ex = dry ? 0 : lease_git_worktree_remove(g, r->id, wt);
		free(wt);
		if (lease__recover_note(rep, ex == 0 ? LEASE_FIND_REPAIRED :
		    LEASE_FIND_CLEANUP_PENDING, r->id, "worktree %s of %s: "
		    "%s", r->id, lease_git_workdir(g), ex == 0 ? (dry ?
		    "its admin entry would be removed" : "its admin entry "
		    "was left behind: removed") : lease_git_errmsg(g)) ==
		    NULL)
			rc = -ENOMEM;
	}
	lease_resource_list_free(v, n);
	return rc;
}
