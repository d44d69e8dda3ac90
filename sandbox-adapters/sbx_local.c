/*
 * sbx_local.c: the trusted_local adapter (SPEC 3): the owner's own command,
 * on the host, in the owner's environment and directory. No isolation, and
 * labelled so everywhere. Its one resource tracks, never limits: a cgroup
 * (v1 pids and freezer) the agent joins before exec, so every process it
 * starts is the lease's, including one that leaves its session (setsid,
 * a double fork, reparented to init); the holder lists and ends them
 * through .procs and .signal, and every teardown kills what is left.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"

static int
local_probe(char *why, size_t whysz)
{
	if (whysz > 0)
		why[0] = '\0';
	return 0;
}

static int
local_plan(const struct sbx_request *req, struct sbx_plan **out)
{
	struct sbx_plan *p;
	int rc = 0;

	if (req->cmd == NULL || req->cmd[0] == NULL)
		return -EINVAL;
	if ((p = sbx_plan_new()) == NULL)
		return -ENOMEM;
	for (size_t i = 0; req->cmd[i] != NULL && rc == 0; i++)
		rc = sbx_plan_arg(p, req->cmd[i]);
	if (rc == 0 && req->cwd != NULL)
		rc = sbx_plan_cwd(p, req->cwd);
	if (rc < 0) {
		sbx_plan_free(p);
		return rc;
	}
	p->inherit_env = true;
	strcpy(p->label, "trusted_local");
	*out = p;
	return 0;
}

#define LOCAL_KILL_MS 5000	/* teardown: the wait for the last exit */

static int
step(int (*fn)(void *, const char *, const char *), void *ud,
    const char *kind, const char *identity)
{
	return fn != NULL ? fn(ud, kind, identity) : 0;
}

/*
 * The tracking cgroup: identity planned, made with no limit, created.
 * Where none can be made (no cgroup hierarchy, not root) the planned
 * identity is removed again and the caller runs the lease untracked,
 * saying so.
 */
static int
local_provision(const struct sbx_request *req, const struct sbx_steps *s,
    struct sbx_provisioned *out, char *err, size_t errsz)
{
	static const struct sbx_steps none;
	struct sbx_cgroup *cg = NULL;
	char *text = NULL;
	int rc;

	if (errsz > 0)
		err[0] = '\0';
	if (out != NULL)
		memset(out, 0, sizeof *out);
	if (req == NULL || req->id == NULL || req->scope == NULL)
		return -EINVAL;
	if (s == NULL)
		s = &none;
	if ((rc = sbx_cgroup_locate_track(req->scope, req->id, &cg)) < 0) {
		snprintf(err, errsz, "tracking cgroup: %s", sbx_strerror(rc));
		return rc;
	}
	if ((text = sbx_cgroup_describe(cg)) == NULL) {
		sbx_cgroup_free(cg);
		snprintf(err, errsz, "out of memory");
		return -ENOMEM;
	}
	if ((rc = step(s->plan, s->ud, SBX_RES_CGROUP, text)) < 0) {
		snprintf(err, errsz, "journal: %s", strerror(-rc));
	} else if ((rc = sbx_cgroup_create(cg, NULL)) < 0) {
		snprintf(err, errsz, "tracking cgroup: %s", sbx_strerror(rc));
		(void)step(s->removed, s->ud, SBX_RES_CGROUP, text);
	} else if ((rc = step(s->created, s->ud, SBX_RES_CGROUP, text)) < 0) {
		snprintf(err, errsz, "journal: %s", strerror(-rc));
	}
	free(text);
	sbx_cgroup_free(cg);
	return rc;
}

/* The cgroup of the lease's own id among res[0..n) (parsed: validated). */
static int
tracked(const char *id, const struct sbx_resource *res, size_t n,
    struct sbx_cgroup **cg)
{
	*cg = NULL;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(res[i].kind, SBX_RES_CGROUP) == 0)
			return sbx_cgroup_parse(id, res[i].identity, cg);
	}
	return -ENOENT;
}

/*
 * Every process left in the cgroup is killed (frozen first), then the
 * cgroup removed. res NULL: an orphan, found by exact ID.
 */
static int
local_teardown(const struct sbx_request *req, const struct sbx_resource *res,
    size_t n, const struct sbx_steps *s, char *err, size_t errsz)
{
	static const struct sbx_steps none;
	struct sbx_cgroup *cg = NULL;
	int rc, first = 0;

	if (errsz > 0)
		err[0] = '\0';
	if (req == NULL || req->id == NULL)
		return -EINVAL;
	if (s == NULL)
		s = &none;
	if (res == NULL) {
		if (req->scope == NULL ||
		    sbx_cgroup_locate_track(req->scope, req->id, &cg) < 0)
			return 0;
		rc = sbx_cgroup_teardown(cg, LOCAL_KILL_MS);
		if (rc < 0)
			snprintf(err, errsz, "lease %s tracking cgroup: %s",
			    req->id, strerror(-rc));
		sbx_cgroup_free(cg);
		return rc;
	}
	for (size_t i = 0; i < n; i++) {
		if (strcmp(res[i].kind, SBX_RES_CGROUP) != 0)
			continue;
		/* Parsing validates: only this lease's own directories. */
		if ((rc = sbx_cgroup_parse(req->id, res[i].identity,
		    &cg)) < 0)
			snprintf(err, errsz, "lease %s: cgroup record is not "
			    "one of its own; not touched", req->id);
		else if ((rc = sbx_cgroup_teardown(cg, LOCAL_KILL_MS)) < 0)
			snprintf(err, errsz, "lease %s tracking cgroup: %s",
			    req->id, strerror(-rc));
		else if ((rc = step(s->removed, s->ud, SBX_RES_CGROUP,
		    res[i].identity)) < 0)
			snprintf(err, errsz, "journal: %s", strerror(-rc));
		sbx_cgroup_free(cg);
		cg = NULL;
		if (rc < 0 && first == 0)
			first = rc;
	}
	return first;
}

/* The holder's side: the tracking cgroup the journal records as made. */
static int
local_attach(const struct sbx_request *req, const struct sbx_resource *res,
    size_t n, struct sbx_attached *info, struct sbx_running **out,
    char *err, size_t errsz)
{
	struct sbx_running *r;
	struct sbx_cgroup *cg;
	int rc;

	if (errsz > 0)
		err[0] = '\0';
	*out = NULL;
	if (info != NULL)
		memset(info, 0, sizeof *info);
	if (req == NULL || req->id == NULL)
		return -EINVAL;
	if ((rc = tracked(req->id, res, n, &cg)) < 0) {
		snprintf(err, errsz, "lease %s: %s", req->id, rc == -ENOENT ?
		    "no tracking cgroup" : "tracking cgroup record is not its "
		    "own");
		return rc;
	}
	if ((r = calloc(1, sizeof *r)) == NULL) {
		sbx_cgroup_free(cg);
		return -ENOMEM;
	}
	r->cg = cg;
	r->uid = (uid_t)-1;
	r->gid = (gid_t)-1;
	*out = r;
	return 0;
}

/* The owner's command, joined to the tracking cgroup before exec. */
static int
local_enter(const struct sbx_running *r, const struct sbx_request *req,
    struct sbx_plan **out)
{
	int rc;

	if (r == NULL)
		return -EINVAL;
	if ((rc = local_plan(req, out)) < 0)
		return rc;
	if ((rc = sbx_cgroup_plan(r->cg, *out)) < 0) {
		sbx_plan_free(*out);
		*out = NULL;
	}
	return rc;
}

/* Every process of the lease: none is the sandbox's own. */
static int
local_signal(const struct sbx_running *r, int sig)
{
	return r != NULL ? sbx_cgroup_kill(r->cg, sig) : -EINVAL;
}

static int
local_signal_unless(const struct sbx_running *r, int sig,
    bool (*keep)(pid_t, void *), void *ud)
{
	return r != NULL ? sbx_cgroup_kill_unless(r->cg, sig, keep, ud) :
	    -EINVAL;
}

static int
local_stop(const struct sbx_running *r, unsigned timeout_ms)
{
	return r != NULL ? sbx_cgroup_teardown(r->cg, timeout_ms) : -EINVAL;
}

static int
local_procs(const struct sbx_running *r, pid_t **pids, size_t *n)
{
	return r != NULL ? sbx_cgroup_pids(r->cg, pids, n) : -EINVAL;
}

static void
local_detach(struct sbx_running *r)
{
	if (r == NULL)
		return;
	sbx_cgroup_free(r->cg);
	free(r);
}

/*
 * Nothing of its own to list: bwrap's .list names every lease cgroup of
 * the state directory, a trusted_local lease's among them.
 */
static int
local_list(const struct sbx_request *req, char ***ids, char *err,
    size_t errsz)
{
	(void)req;
	if (errsz > 0)
		err[0] = '\0';
	if (ids == NULL)
		return -EINVAL;
	*ids = calloc(1, sizeof **ids);
	return *ids != NULL ? 0 : -ENOMEM;
}

const struct sbx_adapter sbx_adapter_local = {
	.name = "trusted_local",
	.isolation = "trusted_local",
	.probe = local_probe,
	.plan = local_plan,
	.provision = local_provision,
	.teardown = local_teardown,
	.list = local_list,
	.attach = local_attach,
	.enter = local_enter,
	.signal = local_signal,
	.signal_unless = local_signal_unless,
	.stop = local_stop,
	.detach = local_detach,
	.procs = local_procs,
};
