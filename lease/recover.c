/*
 * recover.c: reconciliation (SPEC 9.2), run under the state lock
 * (lock.c). Reconciliation compares the journal with the holders
 * (through the caller's probe), with the disk, and with the corral/
 * branches of every repository the journal knows; it corrects the journal,
 * fails leases whose holder is gone, resumes unfinished teardown, and
 * inventories orphans, which become removable (by exact ID only) after two
 * consistent inventories kept in the database. gc is recover_gc.c.
 */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lease/lease_int.h"

#define MAX_REPOS 64

/* ------------------------------------------------------------------ */
/* Reports                                                              */

static const char *const finding_names[LEASE_FIND_COUNT] = {
	[LEASE_FIND_LIVE] = "live",
	[LEASE_FIND_HOLDER_LOST] = "holder_lost",
	[LEASE_FIND_INTERRUPTED] = "provisioning_interrupted",
	[LEASE_FIND_CLEANED] = "cleaned",
	[LEASE_FIND_CLEANUP_PENDING] = "cleanup_pending",
	[LEASE_FIND_RESOURCE] = "resource",
	[LEASE_FIND_ORPHAN] = "orphan",
	[LEASE_FIND_INTENT] = "intent",
	[LEASE_FIND_REPAIRED] = "repaired",
};

const char *
lease_recover_finding_name(enum lease_finding_kind k)
{
	return (unsigned)k < LEASE_FIND_COUNT ? finding_names[k] : "?";
}

void
lease_recover_report_free(struct lease_report *rep)
{
	size_t i;

	if (rep == NULL)
		return;
	for (i = 0; i < rep->n; i++) {
		free(rep->v[i].identity);
		free(rep->v[i].scope);
		free(rep->v[i].detail);
	}
	free(rep->v);
	free(rep);
}

static struct lease_finding *
add(struct lease_report *rep, enum lease_finding_kind kind, const char *id,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static struct lease_finding *
add(struct lease_report *rep, enum lease_finding_kind kind, const char *id,
    const char *fmt, ...)
{
	struct lease_finding *f, *nv;
	char buf[512];
	va_list ap;

	if (rep->n == rep->cap) {
		size_t cap = rep->cap ? rep->cap * 2 : 16;

		if ((nv = realloc(rep->v, cap * sizeof *nv)) == NULL)
			return NULL;
		rep->v = nv;
		rep->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	f = &rep->v[rep->n];
	memset(f, 0, sizeof *f);
	f->kind = kind;
	f->resource = LEASE_RES_COUNT;
	if (id != NULL && (lease_id_valid(id) || lease_id_run_valid(id, NULL)))
		snprintf(f->id, sizeof f->id, "%s", id);
	if ((f->detail = strdup(buf)) == NULL)
		return NULL;
	rep->n++;
	return f;
}

struct lease_finding *
lease__recover_note(struct lease_report *rep, enum lease_finding_kind kind,
    const char *id, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return add(rep, kind, id, "%s", buf);
}

struct lease_report *
lease_recover_report_new(bool dry_run)
{
	struct lease_report *rep = calloc(1, sizeof *rep);

	if (rep != NULL)
		rep->dry_run = dry_run;
	return rep;
}

static int
set_res(struct lease_finding *f, enum lease_resource k, const char *identity,
    const char *scope)
{
	if (f == NULL)
		return -ENOMEM;
	f->resource = k;
	if (identity != NULL && (f->identity = strdup(identity)) == NULL)
		return -ENOMEM;
	if (scope != NULL && *scope != '\0' &&
	    (f->scope = strdup(scope)) == NULL)
		return -ENOMEM;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Repositories the journal knows, opened once each                    */

struct repos {
	const char *state_dir;	/* whose branches and worktrees to list */
	char *path[MAX_REPOS];
	struct lease_git *g[MAX_REPOS];
	int state[MAX_REPOS];	/* 0 unopened, 1 open, 2 gone, <0 error */
	size_t n;
};

static void
repos_add(struct repos *rs, const char *path)
{
	size_t i;

	if (path == NULL || *path == '\0')
		return;
	for (i = 0; i < rs->n; i++)
		if (strcmp(rs->path[i], path) == 0)
			return;
	if (rs->n < MAX_REPOS && (rs->path[rs->n] = strdup(path)) != NULL)
		rs->n++;
}

/* The open repository at path, or NULL when it is gone or unusable. */
static struct lease_git *
repos_get(struct repos *rs, const char *path)
{
	size_t i;
	int rc;

	repos_add(rs, path);
	for (i = 0; i < rs->n; i++) {
		if (strcmp(rs->path[i], path) != 0)
			continue;
		if (rs->state[i] == 0) {
			rc = lease_git_open(&rs->g[i], path);
			if (rc < 0) {
				lease_git_free(rs->g[i]);
				rs->g[i] = NULL;
			} else {
				lease_git_set_owner(rs->g[i], rs->state_dir);
			}
			rs->state[i] = rc == 0 ? 1 : rc == LEASE_ENOTREPO ? 2 :
			    rc;
		}
		return rs->g[i];
	}
	return NULL;
}

static void
repos_free(struct repos *rs)
{
	size_t i;

	for (i = 0; i < rs->n; i++) {
		lease_git_free(rs->g[i]);
		free(rs->path[i]);
	}
}

/* ------------------------------------------------------------------ */
/* Reconciliation                                                       */

/* Whether a recorded resource exists now: 1, 0, or a negative error. */
static int
present(struct repos *rs, const char *id, const struct lease_resource_row *r)
{
	struct lease_git *g;

	int p;

	switch (r->kind) {
	case LEASE_RES_WORKTREE:
		/* gone only when its directory and git's admin entry are */
		if ((p = lease__fs_exists(r->identity)) != 0)
			return p;
		if (r->scope == NULL || (g = repos_get(rs, r->scope)) == NULL)
			return 0;
		return lease_git_worktree_exists(g, id);
	case LEASE_RES_LEASE_DIR:
	case LEASE_RES_WORKSPACE:
		return lease__fs_exists(r->identity);
	case LEASE_RES_BRANCH:
		if (r->scope == NULL || (g = repos_get(rs, r->scope)) == NULL)
			return 0;
		return lease_git_branch_exists(g, id);
	default:
		return -ENOTSUP;	/* holder, socket...: the caller's */
	}
}

/* Correct planned/created rows from what is on disk. */
static int
fix_resources(struct lease_store *s, struct lease_report *rep,
    struct repos *rs, const char *id, bool dry)
{
	struct lease_resource_row *v;
	enum lease_res_state to;
	size_t n, i;
	int rc, p;
	const char *why;

	if ((rc = lease_resource_list(s, id, &v, &n)) < 0)
		return rc;
	for (i = 0; i < n && rc == 0; i++) {
		if (v[i].state == LEASE_RS_REMOVED)
			continue;
		if ((p = present(rs, id, &v[i])) == -ENOTSUP)
			continue;
		if (p < 0) {
			rc = p;
			break;
		}
		if (p == 1 && v[i].state == LEASE_RS_PLANNED) {
			to = LEASE_RS_CREATED;
			why = "created before a crash: journal corrected";
		} else if (p == 0 && v[i].state == LEASE_RS_PLANNED) {
			to = LEASE_RS_REMOVED;
			why = "planned but never created";
		} else if (p == 0) {
			to = LEASE_RS_REMOVED;
			why = "gone from disk";
		} else {
			continue;
		}
		rc = set_res(add(rep, LEASE_FIND_RESOURCE, id, "%s %s: %s",
		    lease_resource_name(v[i].kind), v[i].identity, why),
		    v[i].kind, v[i].identity, v[i].scope);
		if (rc == 0 && !dry)
			rc = to == LEASE_RS_CREATED ?
			    lease_resource_created(s, id, v[i].kind,
			    v[i].identity) :
			    lease_resource_removed(s, id, v[i].kind,
			    v[i].identity);
	}
	lease_resource_list_free(v, n);
	return rc;
}

/* Failed reasons given while provisioning: nothing of value to keep. */
static bool
provisioning_reason(const char *r)
{
	static const char *const reasons[] = {
		"provisioning_interrupted", "not_a_repository",
		"bare_repository", "repository_owner", "unknown_base",
		"branch_exists", "disk_full", "uid_pool_exhausted",
		"provision_error",
	};
	size_t i;

	for (i = 0; r != NULL && i < sizeof reasons / sizeof reasons[0]; i++)
		if (strcmp(r, reasons[i]) == 0)
			return true;
	return false;
}

static enum lease_holder_status
holder_status(const struct lease_record *r, lease_holder_probe_cb probe,
    void *ud)
{
	if (probe != NULL)
		return probe(r, ud);
	return lease_proc_alive((pid_t)r->holder_pid, r->holder_start) ?
	    LEASE_HOLDER_ALIVE : LEASE_HOLDER_DEAD;
}

static int
reconcile_lease(struct lease_store *s, struct lease_report *rep,
    const char *state_dir, const struct lease_record *r,
    lease_holder_probe_cb probe, void *ud, bool dry)
{
	enum lease_holder_status hs;
	unsigned what;
	int rc;

	if (r->state == LEASE_STATE_RUNNING ||
	    (r->state == LEASE_STATE_PROVISIONING && r->holder_pid > 0)) {
		hs = holder_status(r, probe, ud);
		if (hs == LEASE_HOLDER_ALIVE)
			return add(rep, LEASE_FIND_LIVE, r->id, "holder %lld "
			    "alive", (long long)r->holder_pid) ? 0 : -ENOMEM;
		if (add(rep, LEASE_FIND_HOLDER_LOST, r->id, "holder %lld %s: "
		    "lease fails (holder_lost); workspace kept",
		    (long long)r->holder_pid, hs == LEASE_HOLDER_WEDGED ?
		    "wedged" : "dead") == NULL)
			return -ENOMEM;
		if (dry)
			return 0;
		/* Only from what was judged (the holder may have moved it). */
		return lease_record_transition_from(s, r->id, r->state,
		    LEASE_EV_FAIL, "holder_lost", NULL);
	}
	if (r->state == LEASE_STATE_PROVISIONING) {
		/*
		 * Its creator held the lock we hold now: it is gone. Its
		 * holder may still be starting, and claims the lease in one
		 * transaction (lease_record_claim): fail it only while it is
		 * still provisioning, so either the claim or this wins.
		 */
		if (dry)
			return add(rep, LEASE_FIND_INTERRUPTED, r->id,
			    "provisioning was interrupted: lease fails and is "
			    "torn down") ? 0 : -ENOMEM;
		lease_fault_wait("reconcile.interrupted.judged");
		if ((rc = lease_record_transition_from(s, r->id,
		    LEASE_STATE_PROVISIONING, LEASE_EV_FAIL,
		    "provisioning_interrupted", NULL)) < 0)
			return rc;
		if (add(rep, LEASE_FIND_INTERRUPTED, r->id, "provisioning "
		    "was interrupted: lease fails and is torn down") == NULL)
			return -ENOMEM;
		return lease_provision_teardown(s, state_dir, r->id,
		    LEASE_TEARDOWN_ALL);
	}
	/*
	 * A materialised result's workspace whose release was interrupted
	 * (release.c), unless its holder, alive, is at it.
	 */
	if (r->state == LEASE_STATE_RESULT_READY)
		return r->holder_pid > 0 && lease_proc_alive((pid_t)
		    r->holder_pid, r->holder_start) ? 0 :
		    lease__release_resume(s, rep, state_dir, r, dry);
	if (!lease_fsm_state_final(r->state) ||
	    (r->cleanup != LEASE_CLEANUP_PENDING &&
	    r->cleanup != LEASE_CLEANUP_FAILED))
		return 0;
	/* A live holder is still doing its own teardown: not ours to race. */
	if (r->holder_pid > 0 &&
	    holder_status(r, probe, ud) == LEASE_HOLDER_ALIVE)
		return add(rep, LEASE_FIND_LIVE, r->id, "%s, holder %lld "
		    "alive: cleanup is its own", lease_fsm_state_name(r->state),
		    (long long)r->holder_pid) ? 0 : -ENOMEM;
	if (r->state == LEASE_STATE_FAILED &&
	    !provisioning_reason(r->failed_reason))
		return add(rep, LEASE_FIND_CLEANUP_PENDING, r->id, "failed "
		    "(%s): resources kept until reject or gc",
		    r->failed_reason != NULL ? r->failed_reason : "?") ? 0 :
		    -ENOMEM;
	what = r->state == LEASE_STATE_FAILED ? LEASE_TEARDOWN_ALL :
	    LEASE_TEARDOWN_RUNTIME;
	if (dry)
		return add(rep, LEASE_FIND_CLEANED, r->id, "%s: unfinished "
		    "teardown would be resumed",
		        lease_fsm_state_name(r->state)) ?
		    0 : -ENOMEM;
	if ((rc = lease_provision_teardown(s, state_dir, r->id, what)) < 0)
		return add(rep, LEASE_FIND_CLEANUP_PENDING, r->id, "teardown "
		    "failed: %s", lease_store_errmsg(s)) ? 0 : -ENOMEM;
	/* failed just now by the caller's first pass (cmd_recover.c) */
	if (r->failed_reason != NULL &&
	    strcmp(r->failed_reason, "provisioning_interrupted") == 0)
		return add(rep, LEASE_FIND_INTERRUPTED, r->id, "provisioning "
		    "was interrupted: lease fails and is torn down") ? 0 :
		    -ENOMEM;
	return add(rep, LEASE_FIND_CLEANED, r->id, "%s: unfinished teardown "
	    "finished", lease_fsm_state_name(r->state)) ? 0 : -ENOMEM;
}

/* ------------------------------------------------------------------ */
/* Orphan inventory                                                     */

void
lease__recover_inv_free(struct lease__inventory *inv)
{
	size_t i;

	for (i = 0; i < inv->n; i++) {
		free(inv->v[i].identity);
		free(inv->v[i].scope);
	}
	free(inv->v);
	memset(inv, 0, sizeof *inv);
}

int
lease__recover_inv_add(struct lease__inventory *inv, enum lease_resource kind,
    const char *identity, const char *scope, const char *name)
{
	struct lease__orphan *o, *nv;

	if (inv->n == inv->cap) {
		size_t cap = inv->cap ? inv->cap * 2 : 16;

		if ((nv = realloc(inv->v, cap * sizeof *nv)) == NULL)
			return -ENOMEM;
		inv->v = nv;
		inv->cap = cap;
	}
	o = &inv->v[inv->n];
	memset(o, 0, sizeof *o);
	o->kind = kind;
	o->identity = strdup(identity);
	o->scope = strdup(scope != NULL ? scope : "");
	if (o->identity == NULL || o->scope == NULL) {
		free(o->identity);
		free(o->scope);
		return -ENOMEM;
	}
	/* a check run has only a sandbox: no branch, worktree or dir */
	if (lease_id_valid(name) || (kind == LEASE_RES_SANDBOX &&
	    lease_id_run_valid(name, NULL)))
		snprintf(o->id, sizeof o->id, "%s", name);
	inv->n++;
	return 0;
}

/* The lease row named id, or NULL (records sorted by ID). */
static const struct lease_record *
find_lease(const struct lease_record *v, size_t n, const char *id)
{
	size_t lo = 0, hi = n, mid;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strcmp(v[mid].id, id);
		if (c == 0)
			return &v[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Is there a lease row with this name? */
static bool
has_lease(const struct lease_record *v, size_t n, const char *name)
{
	return find_lease(v, n, name) != NULL;
}

/* Entries of state_dir/sub without a lease. */
static int
scan_dir(struct lease__inventory *inv, const char *state_dir, const char *sub,
    enum lease_resource kind, const struct lease_record *v, size_t n)
{
	struct dirent *e;
	char *dir, *path;
	size_t len;
	DIR *d;
	int rc = 0;

	len = strlen(state_dir) + strlen(sub) + 2;
	if ((dir = malloc(len)) == NULL)
		return -ENOMEM;
	snprintf(dir, len, "%s/%s", state_dir, sub);
	if ((d = opendir(dir)) == NULL) {
		rc = errno == ENOENT ? 0 : -errno;
		free(dir);
		return rc;
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 ||
		    strcmp(e->d_name, "..") == 0 || has_lease(v, n, e->d_name))
			continue;
		len = strlen(dir) + strlen(e->d_name) + 2;
		if ((path = malloc(len)) == NULL) {
			rc = -ENOMEM;
			break;
		}
		snprintf(path, len, "%s/%s", dir, e->d_name);
		rc = lease__recover_inv_add(inv, kind, path, NULL, e->d_name);
		free(path);
	}
	closedir(d);
	free(dir);
	return rc;
}

struct scan_ctx {
	struct lease__inventory *inv;
	const struct lease_record *v;
	size_t n;
	const char *repo;
	enum lease_resource kind;
};

static int
scan_name(const char *name, void *ud)
{
	struct scan_ctx *c = ud;
	char ident[LEASE_BRANCH_LEN + 64];

	if (has_lease(c->v, c->n, name))
		return 0;
	/* worktrees: only ours (named by an ID), never the operator's */
	if (c->kind == LEASE_RES_WORKTREE && !lease_id_valid(name))
		return 0;
	snprintf(ident, sizeof ident, "%s%.60s", c->kind == LEASE_RES_BRANCH ?
	    LEASE_BRANCH_PREFIX : "worktree ", name);
	return lease__recover_inv_add(c->inv, c->kind, ident, c->repo, name);
}

struct sbx_scan {
	struct lease_store *s;
	struct lease__inventory *inv;
	const struct lease_record *v;
	size_t n;
};

/* Does the journal still hold an unremoved cgroup or sandbox of id? */
static bool
journal_holds_sandbox(struct lease_store *s, const char *id)
{
	struct lease_resource_row *r = NULL;
	size_t n = 0;
	bool held = false;

	if (lease_resource_list(s, id, &r, &n) < 0)
		return true;	/* unknown: not an orphan */
	for (size_t i = 0; i < n; i++)
		held |= (r[i].kind == LEASE_RES_CGROUP ||
		    r[i].kind == LEASE_RES_SANDBOX) &&
		    r[i].state != LEASE_RS_REMOVED;
	lease_resource_list_free(r, n);
	return held;
}

/* An adapter's sandbox of lease id: an orphan if nothing owns it. */
static int
scan_sandbox(void *actx, const char *identity, const char *scope,
    const char *id)
{
	struct sbx_scan *c = actx;
	const struct lease_record *r;

	if (identity == NULL || scope == NULL || id == NULL)
		return -EINVAL;
	if ((r = find_lease(c->v, c->n, id)) != NULL &&
	    (!lease_fsm_state_final(r->state) || journal_holds_sandbox(c->s,
	        id)))
		return 0;
	return lease__recover_inv_add(c->inv, LEASE_RES_SANDBOX, identity,
	    scope, id);
}

static const char sql_inv_all[] =
    "SELECT kind, identity, scope, seen, first_seen FROM inventory";
static const char sql_inv_clear[] = "DELETE FROM inventory";
static const char sql_inv_add[] =
    "INSERT INTO inventory (kind, identity, scope, lease_id, first_seen,"
    " last_seen, seen) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";

int
lease__recover_need_v2(struct lease_store *s)
{
	if (s->version >= 2)
		return 0;
	lease__store_msg(s, "%s: schema version %d has no inventory; open it "
	    "with the current schema", s->path, s->version);
	return LEASE_ESCHEMA;
}

/* Carry seen counts over from the stored inventory. */
static int
inventory_merge(struct lease_store *s, struct lease__inventory *inv)
{
	sqlite3_stmt *st;
	const char *k, *ident, *scope;
	size_t i;
	int rc;

	if ((rc = lease__store_stmt(s, sql_inv_all, &st)) < 0)
		return rc;
	for (i = 0; i < inv->n; i++)
		inv->v[i].seen = 1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		k = (const char *)sqlite3_column_text(st, 0);
		ident = (const char *)sqlite3_column_text(st, 1);
		scope = (const char *)sqlite3_column_text(st, 2);
		for (i = 0; k != NULL && ident != NULL && scope != NULL &&
		    i < inv->n; i++) {
			if (strcmp(k, lease_resource_name(inv->v[i].kind)) ==
			    0 && strcmp(ident, inv->v[i].identity) == 0 &&
			    strcmp(scope, inv->v[i].scope) == 0) {
				inv->v[i].seen = sqlite3_column_int(st, 3) + 1;
				inv->v[i].first = sqlite3_column_int64(st, 4);
			}
		}
	}
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : lease__store_fail(s, rc,
	    "read inventory");
}

/* Replace the stored inventory with this one (one transaction). */
static int
inventory_store(struct lease_store *s, const struct lease__inventory *inv)
{
	sqlite3_stmt *st;
	int64_t now = lease_id_now_ms();
	size_t i;
	int rc;

	if ((rc = lease__store_begin(s)) < 0)
		return rc;
	if ((rc = lease__store_exec(s, sql_inv_clear, "clear inventory")) < 0)
		goto fail;
	for (i = 0; i < inv->n; i++) {
		if ((rc = lease__store_stmt(s, sql_inv_add, &st)) < 0)
			goto fail;
		sqlite3_bind_text(st, 1, lease_resource_name(inv->v[i].kind),
		    -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, inv->v[i].identity, -1,
		    SQLITE_STATIC);
		sqlite3_bind_text(st, 3, inv->v[i].scope, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, inv->v[i].id, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 5, inv->v[i].first ? inv->v[i].first :
		    now);
		sqlite3_bind_int64(st, 6, now);
		sqlite3_bind_int(st, 7, inv->v[i].seen);
		if ((rc = lease__store_step_done(s, st, "write inventory")) < 0)
			goto fail;
	}
	return lease__store_commit(s);
fail:
	lease__store_rollback(s);
	return rc;
}

static int
inventory_run(struct lease_store *s, struct lease_report *rep,
    struct repos *rs, const char *state_dir, bool dry,
    const struct lease_orphan_src *src)
{
	struct lease__inventory inv = { 0 };
	struct lease_record *v = NULL;
	struct scan_ctx c;
	struct lease_git *g;
	size_t n = 0, i, nrepos;
	int rc;

	if ((rc = lease_record_list(s, LEASE_LIST_ALL, &v, &n)) < 0)
		return rc;
	for (i = 0; i < n; i++)
		repos_add(rs, v[i].repo);
	if ((rc = scan_dir(&inv, state_dir, "worktrees", LEASE_RES_WORKTREE,
	    v, n)) < 0 ||
	    (rc = scan_dir(&inv, state_dir, "leases", LEASE_RES_LEASE_DIR, v,
	    n)) < 0)
		goto out;
	nrepos = rs->n;
	for (i = 0; i < nrepos; i++) {
		if ((g = repos_get(rs, rs->path[i])) == NULL)
			continue;
		c = (struct scan_ctx){ &inv, v, n, rs->path[i],
		    LEASE_RES_BRANCH };
		if ((rc = lease_git_branches(g, scan_name, &c)) < 0)
			goto out;
		c.kind = LEASE_RES_WORKTREE;
		if ((rc = lease_git_worktrees(g, scan_name, &c)) < 0)
			goto out;
	}
	if (src != NULL && src->list != NULL) {
		struct sbx_scan sc = { s, &inv, v, n };

		if ((rc = src->list(src->ud, scan_sandbox, &sc)) < 0)
			goto out;
	}
	if ((rc = inventory_merge(s, &inv)) < 0)
		goto out;
	for (i = 0; i < inv.n; i++) {
		struct lease__orphan *o = &inv.v[i];
		struct lease_finding *f = add(rep, LEASE_FIND_ORPHAN, o->id,
		    "%s %s has no lease (seen by %d inventor%s)%s",
		    lease_resource_name(o->kind), o->identity, o->seen,
		    o->seen == 1 ? "y" : "ies", o->id[0] == '\0' ?
		    ": not an ID, never removed by corral" : "");

		if ((rc = set_res(f, o->kind, o->identity, o->scope)) < 0)
			goto out;
		f->seen = o->seen;
		f->removable = o->seen >= 2 && o->id[0] != '\0';
	}
	if (!dry)
		rc = inventory_store(s, &inv);
out:
	lease__recover_inv_free(&inv);
	lease_record_list_free(v, n);
	return rc;
}

int
lease_recover_reconcile(struct lease_store *s, struct lease_lock *held,
    const char *state_dir, lease_holder_probe_cb probe, void *ud,
    unsigned flags, struct lease_report **out)
{
	return lease_recover_reconcile_with(s, held, state_dir, probe, ud,
	    flags, NULL,
	    out);
}

int
lease_recover_reconcile_with(struct lease_store *s, struct lease_lock *held,
    const char *state_dir, lease_holder_probe_cb probe, void *ud,
    unsigned flags, const struct lease_orphan_src *src,
    struct lease_report **out)
{
	struct lease_report *rep;
	int rc;

	assert(s != NULL && s->db != NULL && out != NULL);
	*out = NULL;
	if ((rep = lease_recover_report_new((flags &
	    LEASE_RECONCILE_DRY_RUN) != 0)) == NULL)
		return -ENOMEM;
	if ((rc = lease_recover_reconcile_into(s, held, state_dir, probe, ud,
	    flags, src, rep)) < 0) {
		lease_recover_report_free(rep);
		return rc;
	}
	*out = rep;
	return 0;
}

/* Nothing writes corral/<id> of r now: no creator, no live holder. */
static bool
git_quiet(const struct lease_record *r)
{
	return r->state != LEASE_STATE_RUNNING &&
	    (r->state != LEASE_STATE_PROVISIONING || r->holder_pid <= 0);
}

/* One lease, its lock held: the journal, its holder, its teardown. */
static int
reconcile_one(struct lease_store *s, struct lease_report *rep,
    struct repos *rs, const char *state_dir, const char *id,
    lease_holder_probe_cb probe, void *ud, bool dry)
{
	struct lease_record r;
	struct lease_git *g;
	bool quiet;
	int rc;

	if ((rc = fix_resources(s, rep, rs, id, dry)) < 0)
		return rc;
	/* re-read: fix_resources may have changed cleanup */
	if ((rc = lease_record_get(s, id, &r)) < 0)
		return rc;
	g = r.repo != NULL ? repos_get(rs, r.repo) : NULL;
	/* a stale lock on corral/<id> first: teardown may delete it */
	if ((quiet = git_quiet(&r)) &&
	    (rc = lease__intent_leftovers(s, rep, g, state_dir, &r, dry)) < 0)
		goto out;
	rc = reconcile_lease(s, rep, state_dir, &r, probe, ud, dry);
	if (rc == LEASE_EBUSY) {
		/* It moved on since it was read (a holder claimed it): again. */
		lease_record_clear(&r);
		if ((rc = lease_record_get(s, id, &r)) < 0)
			return rc;
		quiet = git_quiet(&r);
		rc = reconcile_lease(s, rep, state_dir, &r, probe, ud, dry);
		if (rc == LEASE_EBUSY)
			rc = 0;		/* still moving: the next run's */
	}
	if (rc == 0 && !quiet && !dry) {
		lease_record_clear(&r);
		if ((rc = lease_record_get(s, id, &r)) == 0 && git_quiet(&r))
			rc = lease__intent_leftovers(s, rep, g, state_dir, &r,
			    false);
	}
out:
	lease_record_clear(&r);
	return rc;
}

int
lease_recover_reconcile_into(struct lease_store *s, struct lease_lock *held,
    const char *state_dir, lease_holder_probe_cb probe, void *ud,
    unsigned flags, const struct lease_orphan_src *src,
    struct lease_report *rep)
{
	struct lease_record *v = NULL;
	struct lease_lock *lk;
	struct repos rs;
	bool dry = (flags & LEASE_RECONCILE_DRY_RUN) != 0;
	size_t n = 0, i;
	int rc;

	assert(s != NULL && s->db != NULL && rep != NULL);
	assert(held != NULL);	/* one at a time, never racing provisioning */
	if (state_dir == NULL)
		return -EINVAL;
	if ((rc = lease__recover_need_v2(s)) < 0)
		return rc;
	memset(&rs, 0, sizeof rs);
	rs.state_dir = state_dir;
	if ((rc = lease_recover_intents(s, held, state_dir, flags, rep)) < 0)
		goto out;
	if ((rc = lease_record_list(s, LEASE_LIST_ALL, &v, &n)) < 0)
		goto out;
	for (i = 0; i < n && rc == 0; i++) {
		/* an apply, reject or gc of it at work: not ours to race */
		rc = lease_lock_lease(state_dir, v[i].id, 0, &lk);
		if (rc == LEASE_ELOCKED) {
			rc = add(rep, LEASE_FIND_LIVE, v[i].id, "%s: an apply, "
			    "reject or gc of it is at work",
			    lease_fsm_state_name(v[i].state)) ? 0 : -ENOMEM;
			continue;
		}
		if (rc == LEASE_EREADONLY && dry)
			rc = 0;	/* a read-only state directory: look only */
		if (rc < 0)
			break;
		rc = reconcile_one(s, rep, &rs, state_dir, v[i].id, probe, ud,
		    dry);
		lease_lock_release(lk);
	}
	if (rc == 0)
		rc = inventory_run(s, rep, &rs, state_dir, dry, src);
out:
	repos_free(&rs);
	lease_record_list_free(v, n);
	return rc;
}
