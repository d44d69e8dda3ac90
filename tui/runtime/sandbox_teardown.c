/*
 * sandbox_teardown.c: the exact-ID teardown of what a sandboxed lease
 * holds on the host (SPEC 6, 9.2), for the composition root: a lease's
 * resources and its check runs' through their adapters, journaled as they
 * go (sandbox.c's steps), the orphans reconcile lists and gc removes, and
 * the preflight's own probe resources journaled and reclaimed.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lease/lease.h"
#include "sandbox-adapters/sbx.h"
#include "tui/runtime/runtime_int.h"

/* ---- teardown by exact ID ------------------------------------------------ */

/* The adapter of a lease's journal row (bwrap for rows without one). */
static const struct sbx_adapter *
lease_adapter(const struct lease_record *r)
{
	const struct sbx_adapter *ad = NULL;

	if (r->adapter != NULL)
		ad = sbx_adapters_find(r->adapter);
	return ad != NULL ? ad : sbx_adapters_find("bwrap");
}

int
tui_sandbox_adapter_teardown(struct tui_ctx *c, struct lease_store *st,
    const char *adapter, const char *id, const struct sbx_resource *res,
    size_t n, char *err, size_t errsz)
{
	const struct sbx_adapter *ad = sbx_adapters_find(adapter);
	struct sbx_command_config cc;
	struct tui_config cf;
	struct sbx_request req;
	struct sbx_steps s;
	struct tui_sandbox_jsteps j;
	int rc;

	if (ad == NULL || ad->teardown == NULL) {
		snprintf(err, errsz, "lease %s: unknown adapter '%.32s'", id,
		    adapter);
		return SBX_EUNAVAIL;
	}
	memset(&req, 0, sizeof req);
	req.id = id;
	req.scope = tui_ctx_scope(c);
	/* a check run's copy is its lease's row, not at a workspace path */
	if (!lease_id_run_valid(id, NULL) && (req.workspace =
	    lease_path_workspace(c->state_dir, id)) == NULL) {
		snprintf(err, errsz, "lease %s: out of memory", id);
		return -ENOMEM;
	}
	if (strcmp(ad->name, "command") == 0) {
		if ((rc = tui_sandbox_command_config(&cf, &cc, err,
		    errsz)) < 0) {
			free((char *)req.workspace);
			return rc;
		}
		req.command = &cc;
	}
	/* An orphan has no journal rows to mark. */
	tui_sandbox_jsteps_init(&s, &j, st, id, false);
	rc = ad->teardown(&req, res, n, st != NULL ? &s : NULL, err, errsz);
	free((char *)req.workspace);
	return rc;
}

/* ---- a check run's exec zone (SPEC 7.3, 8.2, 8.4) ----------------------- */

#define CHECK_TAG "check:"

int
tui_sandbox_check_provision(struct tui_ctx *c, struct lease_store *st,
    const char *lease_id, const struct sbx_adapter *ad,
    const struct sbx_request *req, struct sbx_running **out, char *err,
    size_t errsz)
{
	struct sbx_steps s;
	struct tui_sandbox_jsteps j;
	char tag[4096 + 256];
	const char *copy;
	int rc;

	(void)c;
	*out = NULL;
	if (ad == NULL || ad->exec == NULL) {
		snprintf(err, errsz, "no sandbox adapter with an exec zone");
		return -ENOTSUP;
	}
	if (req->id == NULL || req->workspace == NULL ||
	    strchr(req->id, ':') != NULL || strchr(req->id, '\n') != NULL ||
	    strchr(req->workspace, '\n') != NULL ||
	    (size_t)snprintf(tag, sizeof tag, CHECK_TAG "%s:%s\n", req->id,
	    req->workspace) >= sizeof tag) {
		snprintf(err, errsz, "bad check run ID or copy path");
		return -EINVAL;
	}
	tui_sandbox_jsteps_init(&s, &j, st, lease_id, false);
	j.tag = tag;
	/* Its bounded copy first: every teardown of the lease unmounts it. */
	if ((copy = tui_sandbox_jsteps_ident(&j, req->workspace)) == NULL ||
	    (rc = lease_resource_plan(st, lease_id, LEASE_RES_WORKSPACE, copy,
	    NULL)) < 0) {
		snprintf(err, errsz, "journal: %s", copy == NULL ?
		    "identity too long" : lease_store_errmsg(st));
		return copy == NULL ? -ENAMETOOLONG : rc;
	}
	rc = ad->exec(req, &s, out, err, errsz);
	/* made, or perhaps half made: teardown's to release either way */
	if ((copy = tui_sandbox_jsteps_ident(&j, req->workspace)) != NULL &&
	    lease_resource_created(st, lease_id, LEASE_RES_WORKSPACE,
	    copy) < 0 && rc == 0) {
		snprintf(err, errsz, "journal: %s", lease_store_errmsg(st));
		rc = -EIO;
	}
	return rc;
}

/* The length of ident's check tag ("check:ID:COPY\n"), or 0: none. */
static size_t
check_tag_len(const char *ident)
{
	const char *nl;

	if (strncmp(ident, CHECK_TAG, strlen(CHECK_TAG)) != 0 ||
	    (nl = strchr(ident, '\n')) == NULL ||
	    strchr(ident + strlen(CHECK_TAG), ':') == NULL ||
	    strchr(ident + strlen(CHECK_TAG), ':') > nl)
		return 0;
	return (size_t)(nl - ident) + 1;
}

/*
 * The check runs' resources among v[0..n) (not removed), one run at a
 * time, each by its own exact ID with its copy's path, through xa, the
 * adapter whose exec zone ran them. 0 or the first error.
 */
static int
checks_teardown(struct tui_ctx *c, const struct sbx_adapter *xa,
    struct lease_store *st, const char *id, struct lease_resource_row *v,
    size_t n, char *err, size_t errsz)
{
	struct sbx_resource *res;
	struct sbx_request req;
	struct sbx_steps s;
	struct tui_sandbox_jsteps j;
	bool *done;
	int rc, first = 0;

	if ((res = calloc(n + 1, sizeof *res)) == NULL ||
	    (done = calloc(n + 1, sizeof *done)) == NULL) {
		free(res);
		snprintf(err, errsz, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		char tag[4096 + 256], *cid, *copy;
		size_t tl = check_tag_len(v[i].identity), k = 0;
		const char *copyrow = NULL;

		if (done[i] || tl == 0 || v[i].state == LEASE_RS_REMOVED ||
		    tl >= sizeof tag)
			continue;
		memcpy(tag, v[i].identity, tl);
		tag[tl] = '\0';
		for (size_t m = i; m < n; m++) {
			if (done[m] || v[m].state == LEASE_RS_REMOVED ||
			    strncmp(v[m].identity, tag, tl) != 0)
				continue;
			if (v[m].kind == LEASE_RES_WORKSPACE) {
				done[m] = true;
				copyrow = v[m].identity;
				continue;
			}
			if (v[m].kind != LEASE_RES_CGROUP &&
			    v[m].kind != LEASE_RES_SANDBOX)
				continue;
			done[m] = true;
			res[k].kind = v[m].kind == LEASE_RES_CGROUP ?
			    SBX_RES_CGROUP : SBX_RES_SANDBOX;
			res[k++].identity = v[m].identity + tl;
		}
		/* tag is "check:ID:COPY\n": ID and COPY apart, in place */
		tag[tl - 1] = '\0';
		cid = tag + strlen(CHECK_TAG);
		copy = strchr(cid, ':');
		*copy++ = '\0';
		memset(&req, 0, sizeof req);
		req.id = cid;
		req.workspace = copy;
		req.scope = tui_ctx_scope(c);
		tui_sandbox_jsteps_init(&s, &j, st, id, false);
		j.tag = v[i].identity;
		j.taglen = tl;
		rc = k == 0 ? 0 : xa == NULL ? -ENOSYS :
		    xa->teardown(&req, res, k, &s, err, errsz);
		/* Nothing of the run runs now: its copy's image goes. */
		if (rc == 0 && copyrow != NULL &&
		    (rc = sbx_workspace_release(copy)) < 0)
			snprintf(err, errsz, "check copy %s: %s", copy,
			    strerror(-rc));
		if (rc == 0 && copyrow != NULL &&
		    (rc = lease_resource_removed(st, id, LEASE_RES_WORKSPACE,
		    copyrow)) < 0)
			snprintf(err, errsz, "%s", lease_store_errmsg(st));
		if (rc < 0 && first == 0)
			first = rc;
	}
	free(done);
	free(res);
	return first;
}

size_t
tui_sandbox_checks_left(struct lease_store *st, const char *id)
{
	struct lease_resource_row *v = NULL;
	size_t n = 0, left = 0;

	if (lease_resource_list(st, id, &v, &n) < 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		left += check_tag_len(v[i].identity) > 0 &&
		    v[i].state != LEASE_RS_REMOVED;
	lease_resource_list_free(v, n);
	return left;
}

size_t
tui_sandbox_resources(const struct lease_resource_row *v, size_t n, bool made,
    struct sbx_resource *res)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (made ? v[i].state != LEASE_RS_CREATED :
		    v[i].state == LEASE_RS_REMOVED)
			continue;
		/* a check run's are torn down by its own ID (checks_teardown) */
		if (check_tag_len(v[i].identity) > 0)
			continue;
		if (v[i].kind == LEASE_RES_CGROUP)
			res[k].kind = SBX_RES_CGROUP;
		else if (v[i].kind == LEASE_RES_SANDBOX)
			res[k].kind = SBX_RES_SANDBOX;
		else
			continue;
		res[k++].identity = v[i].identity;
	}
	return k;
}

int
tui_sandbox_teardown(struct tui_ctx *c, struct lease_store *st, const char *id,
    char *err, size_t errsz)
{
	struct lease_resource_row *v = NULL;
	struct sbx_resource *res = NULL;
	struct lease_record r;
	const char *adapter;
	size_t n = 0, k = 0;
	int rc;

	if (err != NULL && errsz > 0)
		err[0] = '\0';
	if (!lease_id_valid(id))
		return LEASE_EBADID;
	if ((rc = lease_record_get(st, id, &r)) < 0) {
		snprintf(err, errsz, "%s", lease_store_errmsg(st));
		return rc;
	}
	adapter = lease_adapter(&r)->name;
	if ((rc = lease_resource_list(st, id, &v, &n)) < 0) {
		snprintf(err, errsz, "%s", lease_store_errmsg(st));
		lease_record_clear(&r);
		return rc;
	}
	/* What the journal holds of the adapter's and has not removed. */
	if ((res = calloc(n + 1, sizeof *res)) == NULL) {
		rc = -ENOMEM;
		snprintf(err, errsz, "out of memory");
		goto out;
	}
	/* A check run's first: it is what may still be running. */
	if ((rc = checks_teardown(c, sbx_adapters_exec(adapter), st, id, v, n,
	    err, errsz)) < 0) {
		TUI_BEST_EFFORT(lease_record_set_cleanup(st, id,
		    LEASE_CLEANUP_FAILED, err));
		goto out;
	}
	k = tui_sandbox_resources(v, n, false, res);
	rc = k == 0 ? 0 : tui_sandbox_adapter_teardown(c, st, adapter, id, res,
	    k,
	    err, errsz);
	if (rc < 0)
		TUI_BEST_EFFORT(lease_record_set_cleanup(st, id,
		    LEASE_CLEANUP_FAILED, err));
out:
	free(res);
	lease_resource_list_free(v, n);
	lease_record_clear(&r);
	return rc;
}

/* ---- orphan sandboxes (SPEC 9.2) ---------------------------------------- */

/* A check run of a lease this state directory's journal holds? */
static bool
check_run_of(struct tui_ctx *c, const char *id)
{
	char lease[LEASE_ID_LEN + 1];
	struct lease_record r;

	if (!lease_id_run_valid(id, lease) || tui_ctx_store(c) == NULL ||
	    lease_record_get(c->store, lease, &r) < 0)
		return false;
	lease_record_clear(&r);
	return true;
}

int
tui_sandbox_orphans_list(struct tui_ctx *c, lease_orphan_add_fn add, void *actx)
{
	struct sbx_command_config cc;
	struct tui_config cf;
	struct sbx_request req;
	char err[600], ident[256], **ids;
	int rc;

	for (size_t a = 0; sbx_adapters[a] != NULL; a++) {
		const struct sbx_adapter *ad = sbx_adapters[a];

		if (ad->list == NULL)
			continue;
		memset(&req, 0, sizeof req);
		req.scope = tui_ctx_scope(c);
		if (strcmp(ad->name, "command") == 0) {
			/* No [command] hooks configured: nothing of it. */
			if (tui_sandbox_command_config(&cf, &cc, err,
			    sizeof err) < 0) {
				if (cf.cmd_provision[0] != '\0' ||
				    cf.cmd_list[0] != '\0')
					fprintf(stderr, "corral reconcile: "
					    "command adapter: %s\n", err);
				continue;
			}
			req.command = &cc;
		}
		ids = NULL;
		if ((rc = ad->list(&req, &ids, err, sizeof err)) < 0) {
			/* Nothing it cannot name exactly is acted on. */
			fprintf(stderr, "corral reconcile: %s adapter: list: "
			    "%s\n", ad->name, err);
			continue;
		}
		for (size_t i = 0; ids[i] != NULL; i++) {
			/* a check run of a lease this journal holds is its */
			if (check_run_of(c, ids[i]))
				continue;
			snprintf(ident, sizeof ident, "%s:%.128s",
			    ad->name, ids[i]);
			if ((rc = add(actx, ident, ad->name, ids[i])) < 0)
				break;
		}
		sbx_strv_free(ids);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int
tui_sandbox_orphan_remove(struct tui_ctx *c, const char *identity,
    const char *adapter, const char *id)
{
	char err[600];
	int rc;

	(void)identity;
	if (!lease_id_valid(id) && !lease_id_run_valid(id, NULL))
		return LEASE_EBADID;
	/* No journal: the adapter finds what it holds of id itself. */
	rc = tui_sandbox_adapter_teardown(c, NULL, adapter, id, NULL, 0, err,
	    sizeof err);
	if (rc < 0)
		fprintf(stderr, "corral gc: %s\n", err);
	return rc;
}

/* ---- the preflight's own resources ------------------------------------ */

static int
probe_plan(void *ud, const char *kind, const char *identity)
{
	struct tui_probe_journal *j = ud;

	return lease_probe_plan(j->st, j->run, kind, identity);
}

static int
probe_created(void *ud, const char *kind, const char *identity)
{
	struct tui_probe_journal *j = ud;

	return lease_probe_created(j->st, j->run, kind, identity);
}

static int
probe_removed(void *ud, const char *kind, const char *identity)
{
	struct tui_probe_journal *j = ud;

	return lease_probe_removed(j->st, j->run, kind, identity);
}

const struct sbx_steps *
tui_sandbox_probe_steps(struct tui_ctx *c, struct tui_probe_journal *j)
{
	int64_t start = 0;

	memset(j, 0, sizeof *j);
	if ((j->st = tui_ctx_store(c)) == NULL ||
	    lease_proc_start(getpid(), &start) < 0)
		return NULL;
	snprintf(j->run, sizeof j->run, "%ld:%lld", (long)getpid(),
	    (long long)start);
	j->steps.plan = probe_plan;
	j->steps.created = probe_created;
	j->steps.removed = probe_removed;
	j->steps.ud = j;
	return &j->steps;
}

/* Is the preflight run "pid:start" still running? */
static bool
run_alive(const char *run)
{
	long long start;
	long pid;

	if (sscanf(run, "%ld:%lld", &pid, &start) != 2 || pid <= 0)
		return false;
	return lease_proc_alive((pid_t)pid, (int64_t)start);
}

int
tui_sandbox_probe_reclaim(struct tui_ctx *c)
{
	struct lease_probe_row *v = NULL;
	size_t n = 0;
	int done = 0, rc;

	if (tui_ctx_store(c) == NULL ||
	    lease_probe_list(c->store, &v, &n) < 0)
		return -EIO;
	for (size_t i = 0; i < n; i++) {
		if (run_alive(v[i].run))
			continue;
		rc = sbx_doctor_remove(tui_ctx_scope(c), v[i].kind,
		    v[i].identity);
		/* -EINVAL: no such thing of ours (a row nothing can act on) */
		if (rc < 0 && rc != -EINVAL)
			continue;
		if (lease_probe_removed(c->store, v[i].run, v[i].kind,
		    v[i].identity) == 0)
			done++;
	}
	lease_probe_list_free(v, n);
	/* What runs before the journal held them left, found by name. */
	if (sbx_doctor_reclaim(tui_ctx_scope(c)) > 0)
		done++;
	return done;
}
