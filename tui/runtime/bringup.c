/*
 * bringup.c: `corral new` for a sandboxed (bwrap) lease, in order (SPEC 6),
 * each step journaled before it acts: the lease in provisioning, the
 * request and policy validated, the preflight (a refusal fails the lease
 * with its halt reason and exit class and creates nothing), the git
 * resources, the uid slot, the cgroups, the bounded workspace handed to
 * the lease uid, then the holder. Any failure after something was created
 * fails the lease and removes what it created (journaled).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "lease/lease.h"
#include "lease/result/result.h"
#include "sandbox-adapters/sbx.h"
#include "tui/runtime/runtime_int.h"

#define PROMPT_MAX (1u << 20)
/* A repository's policy, in the base commit's tree (SPEC 8.6). */
#define TUI_REPO_POLICY ".corral/policy.ini"
#define TUI_REPO_POLICY_MAX (1u << 20)
/* corral new holds the state lock until its holder is recorded: leases
 * started at once wait their turn (16 on a large repository take minutes
 * on a loaded machine). */
#define LOCK_MS 300000
#define NOBODY 65534u

struct prov {
	struct tui_ctx *c;
	struct lease_store *st;
	const struct tui_bringup *rq;
	char *id;
	struct sbx_policy *pol;
	struct tui_sandbox_policy_src src; /* the texts it was built from */
	char *policy_text;	/* tui_sandbox_policy_text: the journal's */
	char policy_sha[SBX_SHA256_HEX];
	char *prompt;
	size_t prompt_len;
	char *init;
	char policy_base[41];	/* the commit the repository policy is from */
	const struct sbx_adapter *ad;
	const struct sbx_command_config *cmdcfg; /* command: the hooks */
	bool git_done;		/* lease_provision_git ran (and succeeded) */
	struct tui_agent agent;	/* its agent profile's sandbox side */
};

/* The lease fails with reason (unless it already ended); journal errors
 * are the next reconcile's to correct. */
static void
fail_lease(struct prov *p, const char *reason)
{
	struct lease_record r;

	if (lease_record_get(p->st, p->id, &r) == 0) {
		if (!lease_fsm_state_final(r.state))
			TUI_BEST_EFFORT(lease_record_transition(p->st, p->id,
			    LEASE_EV_FAIL, reason, NULL));
		lease_record_clear(&r);
	}
	TUI_BEST_EFFORT(lease_record_set_activity(p->st, p->id,
	    LEASE_ACT_FAILED, reason));
}

/* Remove everything the lease created so far (SPEC 6: nothing is left). */
static void
undo(struct prov *p)
{
	char err[512], *sock = tui_ctx_holder_sock(p->c, p->id);

	/* A holder that never started leaves no socket (its directory goes
	 * with the lease directory below). */
	if (sock != NULL && access(sock, F_OK) != 0)
		TUI_BEST_EFFORT(lease_resource_removed(p->st, p->id,
		    LEASE_RES_SOCKET, sock));
	free(sock);
	if (tui_sandbox_teardown(p->c, p->st, p->id, err, sizeof err) < 0)
		fprintf(stderr, "corral new: teardown: %s\n", err);
	if (tui_sandbox_workspace_release(p->c, p->id, err, sizeof err) < 0)
		fprintf(stderr, "corral new: workspace: %s\n", err);
	if (p->git_done &&
	    lease_provision_teardown(p->st, p->c->state_dir, p->id,
	    LEASE_TEARDOWN_ALL) < 0)
		fprintf(stderr, "corral new: teardown: %s\n",
		    lease_store_errmsg(p->st));
}

/* Fail with a halt (SPEC 8.7): message, reason, exit class. */
static int
halt(struct prov *p, int cls, const char *detail)
{
	const char *name = sbx_halt_name(cls);

	if (name == NULL)
		name = "isolation_unsatisfiable";
	fail_lease(p, name);
	fprintf(stderr, "corral new: %s (%d): %s; nothing was started (no "
			"fallback to trusted_local)\n", name, cls, detail);
	return cls;
}

static int
read_prompt(struct prov *p, char *err, size_t errsz)
{
	size_t len = 0;
	int rc;

	if (p->rq->prompt_file == NULL)
		return 0;
	rc = tui_sandbox_read_file(p->rq->prompt_file, PROMPT_MAX, &p->prompt,
	    &len);
	if (rc < 0) {
		snprintf(err, errsz, "--prompt-file %s: %s",
		    p->rq->prompt_file, rc == -EFBIG ? "larger than 1 MiB" :
		    strerror(-rc));
		return rc;
	}
	p->prompt_len = len;
	return 0;
}

/*
 * The effective policy as the journal keeps it (loadable text), checked to
 * read back to the very policy that was validated (same canonical hash).
 */
static int
policy_text(struct prov *p, char *err, size_t errsz)
{
	struct sbx_policy_error perr;
	struct sbx_policy *back = NULL;
	char hex[SBX_SHA256_HEX];
	int rc;

	if ((p->policy_text = tui_sandbox_policy_text(p->pol)) == NULL ||
	    sbx_policy_hash(p->pol, p->policy_sha) < 0) {
		snprintf(err, errsz, "out of memory");
		return -ENOMEM;
	}
	rc = sbx_policy_load(p->policy_text, "effective policy", NULL, &back,
	    &perr);
	if (rc == 0 && (rc = sbx_policy_hash(back, hex)) == 0 &&
	    strcmp(hex, p->policy_sha) != 0)
		rc = -EPROTO;
	sbx_policy_free(back);
	if (rc < 0)
		snprintf(err, errsz, "the effective policy does not read back "
		    "(%s)", rc == -EPROTO ? "it differs" : perr.msg);
	return rc;
}

/* limits as the journal's JSON object (SPEC 11 `limits`). */
static char *
limits_json(const struct sbx_limits *l)
{
	json_t *j = json_pack("{s:I, s:I, s:f, s:I, s:I, s:I, s:I, s:I, s:I, "
	    "s:I, s:I, s:I, s:I}",
	    "wall_time_s", (json_int_t)l->wall_time,
	    "cpu_time_s", (json_int_t)l->cpu_time,
	    "cpu_cores", (double)l->cpu_milli / 1000.0,
	    "memory_bytes", (json_int_t)l->memory,
	    "swap_bytes", (json_int_t)l->swap,
	    "pids", (json_int_t)l->pids,
	    "disk_bytes", (json_int_t)l->disk,
	    "inodes", (json_int_t)l->inodes,
	    "output_bytes", (json_int_t)l->output,
	    "file_size_bytes", (json_int_t)l->file_size,
	    "nofile", (json_int_t)l->nofile,
	    "tmp_bytes", (json_int_t)l->tmp,
	    "home_bytes", (json_int_t)l->home);
	char *s = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

	json_decref(j);
	return s;
}

/* Step 1 after the insert: the preflight; 0 or the halt's exit class. */
static int
preflight(struct prov *p, bool *verified)
{
	struct sbx_doctor_opts o;
	struct tui_probe_journal pj;
	struct sbx_doctor_report *rep = calloc(1, sizeof *rep);
	char *probe = tui_sandbox_helper_path(p->c, "corral-sbx-probe",
	    "CORRAL_SBX_PROBE");
	json_t *f = NULL, *checks;
	char agent[64], **eps = NULL;
	int rc;

	if (rep == NULL) {
		free(probe);
		return halt(p, SBX_HALT_ISOLATION_UNSATISFIABLE,
		    "out of memory");
	}
	memset(&o, 0, sizeof o);
	o.policy = p->pol;
	o.state_dir = tui_ctx_scope(p->c);
	o.init_path = p->init;
	o.probe_path = probe;
	/* The probes run as nobody: the lease's own uid is not claimed
	 * before the preflight has passed (nothing is created before). */
	o.uid = NOBODY;
	o.gid = NOBODY;
	o.ssh_auth_sock = getenv("SSH_AUTH_SOCK");
	/* The agent's model endpoints, for the egress check (SPEC 8.7). */
	TUI_BEST_EFFORT(tui_egress_agent_endpoints(p->c, p->rq->agent,
	    p->rq->cmd, agent, sizeof agent, &eps));
	o.agent = agent[0] != '\0' ? agent : NULL;
	o.model_endpoints = (const char *const *)eps;
	if (tui_sandbox_probe_reclaim(p->c) >= 0)
		o.steps = tui_sandbox_probe_steps(p->c, &pj);
	rc = sbx_doctor_run(&o, rep);
	sbx_strv_free(eps);
	free(probe);
	/* The facts go into the receipt either way (SPEC 8.7). */
	f = tui_sandbox_facts_json(&rep->facts, p->init, p->rq->cmd[0]);
	if (f != NULL && (checks = json_array()) != NULL) {
		for (int i = 0; i < rep->nchecks; i++)
			json_array_append_new(checks, json_pack("{s:s, s:b, "
			    "s:s}", "name", rep->checks[i].name, "ok",
			    rep->checks[i].ok, "detail",
			    rep->checks[i].detail));
		json_object_set_new(f, "checks", checks);
	}
	if (f != NULL) {
		TUI_BEST_EFFORT(lease_receipt_append(p->st, p->id,
		    "preflight", f, NULL));
		json_decref(f);
	}
	*verified = rep->facts.verified;
	if (rc == 0 && rep->halt == 0) {
		free(rep);
		return 0;
	}
	if (rep->halt == 0)
		rep->halt = SBX_HALT_ISOLATION_UNSATISFIABLE;
	if (rep->detail[0] == '\0')
		snprintf(rep->detail, sizeof rep->detail, "preflight: %s",
		    sbx_strerror(rc));
	rc = halt(p, rep->halt, rep->detail);
	free(rep);
	return rc;
}

/*
 * The command adapter's step 1 (SPEC 8.1, 8.7): the operator's [command]
 * hooks (a malformed config or a missing hook is named with its file and
 * line), then its probe, the list hook: a failure halts as
 * isolation_unsatisfiable and nothing is created. 0 or an exit code.
 */
static int
command_preflight(struct prov *p, struct tui_config *cf,
    struct sbx_command_config *cc)
{
	char why[600];
	json_t *j;
	int rc;

	if ((rc = tui_sandbox_command_config(cf, cc, why, sizeof why)) < 0) {
		fail_lease(p, "adapter_config_invalid");
		return tui_ctx_err(p->c, "adapter_config_invalid: %s; nothing "
		    "was started (no fallback to another adapter)", why);
	}
	rc = sbx_command_probe(cc, why, sizeof why);
	j = json_pack("{s:s, s:s, s:b, s:s}", "adapter", "command",
	    "isolation", p->ad->isolation, "ok", rc == 0, "detail",
	    rc == 0 ? "list hook answered" : why);
	TUI_BEST_EFFORT(lease_receipt_append(p->st, p->id, "preflight", j,
	    NULL));
	json_decref(j);
	if (rc < 0)
		return halt(p, SBX_HALT_ISOLATION_UNSATISFIABLE, why);
	p->cmdcfg = cc;
	return 0;
}

/*
 * SPEC 8.6, in step 1: the repository's policy, TUI_REPO_POLICY in the
 * tree of the base commit (never the workspace or the operator's
 * checkout, so an uncommitted file is ignored), may only narrow the
 * effective policy, key by key, before the preflight and before anything
 * is created. The commit it was read at is kept in p->policy_base: the
 * git step must record that very commit (base_check). A repository or base
 * that does not open or resolve is left to the git step to name. 0 (none
 * there, or narrowed), SBX_EWIDER / SBX_EPOLICY with err (file:line), or
 * another negative code.
 */
static int
repo_policy(struct prov *p, char *err, size_t errsz)
{
	struct sbx_policy_error perr;
	struct sbx_policy *narrowed = NULL;
	struct lease_git *g = NULL;
	char name[4200], sha[SBX_SHA256_HEX], oid[41], *text = NULL;
	char *ref = NULL;
	const char *wd;
	size_t len = 0, wdlen;
	json_t *j;
	int rc;

	lease_git_init();
	if (lease_git_open(&g, p->rq->repo) < 0 ||
	    lease_git_resolve(g, p->rq->base, oid, &ref) < 0) {
		rc = 0;		/* named by the git step */
		goto out;
	}
	snprintf(p->policy_base, sizeof p->policy_base, "%s", oid);
	rc = lease_git_read_blob(g, oid, TUI_REPO_POLICY, TUI_REPO_POLICY_MAX,
	    &text, &len);
	wd = lease_git_workdir(g);
	wdlen = strlen(wd);
	while (wdlen > 1 && wd[wdlen - 1] == '/')
		wdlen--;
	snprintf(name, sizeof name, "%.*s@%.12s:%s", (int)wdlen, wd, oid,
	    TUI_REPO_POLICY);
	if (rc == LEASE_ENOTFOUND) {
		rc = 0;		/* the repository sets no policy */
		goto out;
	}
	if (rc < 0) {
		snprintf(err, errsz, "%.300s: %.250s", name,
		    lease_git_errmsg(g));
		goto out;
	}
	rc = sbx_policy_narrow(p->pol, text, name, &narrowed, &perr);
	if (rc < 0) {
		if (perr.line > 0)
			snprintf(err, errsz, "%s:%d: %s", perr.file,
			    perr.line, perr.msg);
		else
			snprintf(err, errsz, "%s: %s", perr.file, perr.msg);
		goto out;
	}
	sbx_policy_free(p->pol);
	p->pol = narrowed;
	free(p->policy_text);
	p->policy_text = NULL;
	if ((rc = policy_text(p, err, errsz)) < 0)
		goto out;
	if (sbx_sha256_hex(text, len, sha) < 0)
		sha[0] = '\0';
	j = json_pack("{s:s, s:s, s:s, s:s}", "path", TUI_REPO_POLICY,
	    "commit", oid, "sha256", sha, "effective_policy_sha256",
	    p->policy_sha);
	TUI_BEST_EFFORT(lease_receipt_append(p->st, p->id, "repo_policy", j,
	    NULL));
	json_decref(j);
out:
	free(text);
	free(ref);
	lease_git_free(g);
	lease_git_shutdown();
	return rc;
}

/*
 * After the git step: the base it recorded is the commit the repository's
 * policy was read at (a ref that moved in between fails the lease). 0, or
 * -ESTALE with err.
 */
static int
base_check(struct prov *p, char *err, size_t errsz)
{
	struct lease_record r;
	int rc = 0;

	if ((rc = lease_record_get(p->st, p->id, &r)) < 0) {
		snprintf(err, errsz, "%s", lease_store_errmsg(p->st));
		return rc;
	}
	if (r.base == NULL || strcmp(r.base, p->policy_base) != 0) {
		snprintf(err, errsz, "the base moved while the lease was "
		    "provisioned (policy read at %.12s, base recorded %.12s): "
		    "start it again", p->policy_base, r.base ? r.base : "?");
		rc = -ESTALE;
	}
	lease_record_clear(&r);
	return rc;
}

/* Files the holder reads from the lease directory (0600, root). */
static int
lease_file(struct prov *p, const char *name, const void *buf, size_t len,
    char *err, size_t errsz)
{
	char *dir = tui_ctx_lease_dir(p->c, p->id), *path = NULL;
	int rc;

	if (dir == NULL || asprintf(&path, "%s/%s", dir, name) < 0) {
		free(dir);
		snprintf(err, errsz, "out of memory");
		return -ENOMEM;
	}
	if ((rc = tui_sandbox_write_file(path, buf, len)) < 0)
		snprintf(err, errsz, "%s: %s", name, strerror(-rc));
	free(path);
	free(dir);
	return rc;
}

static int
lease_files(struct prov *p, char *err, size_t errsz)
{
	char *js;
	int rc = 0;

	/* The policy is in the journal; the prompt waits here. */
	if (p->prompt != NULL)
		rc = lease_file(p, "prompt", p->prompt, p->prompt_len, err,
		    errsz);
	/* What the holder adds for the agent profile (agent.c). */
	if (rc == 0 && p->agent.setup != NULL) {
		if ((js = json_dumps(p->agent.setup, JSON_COMPACT)) == NULL) {
			snprintf(err, errsz, "out of memory");
			return -ENOMEM;
		}
		rc = lease_file(p, TUI_AGENT_FILE, js, strlen(js), err, errsz);
		free(js);
	}
	return rc;
}

/* lease_seed.make: the adapter makes the workspace seeding fills. */
static int
make_workspace(void *ud, const char *path, char *err, size_t errsz)
{
	struct prov *p = ud;
	struct sbx_request req;

	memset(&req, 0, sizeof req);
	req.id = p->id;
	req.workspace = path;
	req.limits = &p->pol->limits;
	return p->ad->workspace(&req, err, errsz);
}

/* lease_seed.unmake: its filesystem unmounted, its image removed. */
static int
unmake_workspace(void *ud, const char *path, char *err, size_t errsz)
{
	int rc = sbx_workspace_release(path);

	(void)ud;
	if (rc < 0)
		snprintf(err, errsz, "%s: %s", path, strerror(-rc));
	return rc;
}

/* Steps 2-6 once the preflight passed; 0 or an exit code (lease failed). */
static int
provision(struct prov *p, struct lease_lock *lk)
{
	const struct tui_bringup *rq = p->rq;
	char err[600], *ws = NULL, *sock = NULL, *dir = NULL;
	struct sbx_provisioned made;
	struct lease_seed seed;
	struct sbx_request req;
	struct tui_spawn sp;
	pid_t child;
	int rc;

	/* Steps 2-4: base, branch, review worktree, workspace (lease/). */
	memset(&seed, 0, sizeof seed);
	seed.history = p->pol->git_history == SBX_HISTORY_ALL ?
	    LEASE_HISTORY_ALL : p->pol->git_history;
	seed.max_file = p->pol->limits.file_size;
	seed.max_tree = p->pol->limits.disk;
	if (p->ad->workspace != NULL) {
		/* the adapter's own filesystem, the base seeded into it */
		seed.make = make_workspace;
		seed.unmake = unmake_workspace;
		seed.ud = p;
	}
	rc = lease_provision_git(p->st, lk, p->c->state_dir, p->id, rq->repo,
	    rq->base, &seed);
	if (rc < 0) {
		struct lease_record r;
		char *msg = strdup(lease_store_errmsg(p->st));

		/* The named reason first (not_a_repository, unknown_base...). */
		if (lease_record_get(p->st, p->id, &r) == 0) {
			fprintf(stderr, "corral new: %s: %s\n",
			    r.failed_reason ? r.failed_reason : "provision_error",
			    msg ? msg : "");
			/* its activity too: failed, never "starting" */
			fail_lease(p, r.failed_reason ? r.failed_reason :
			    "provision_error");
			lease_record_clear(&r);
		}
		free(msg);
		return TUI_EXIT_FAIL;
	}
	p->git_done = true;
	/* The policy was checked against the very base just recorded. */
	if ((rc = base_check(p, err, sizeof err)) < 0) {
		fprintf(stderr, "corral new: base_moved: %s\n", err);
		fail_lease(p, "base_moved");
		undo(p);
		return TUI_EXIT_FAIL;
	}
	/* The adapter's resources, each journaled (SPEC 6, 9.2). */
	if ((ws = lease_path_workspace(p->c->state_dir, p->id)) == NULL ||
	    (dir = tui_ctx_lease_dir(p->c, p->id)) == NULL) {
		rc = -ENOMEM;
		snprintf(err, sizeof err, "out of memory");
		goto fail;
	}
	memset(&req, 0, sizeof req);
	req.id = p->id;
	req.workspace = ws;
	req.lease_dir = dir;
	req.limits = &p->pol->limits;
	req.command = p->cmdcfg;
	req.scope = tui_ctx_scope(p->c);
	if ((rc = tui_sandbox_provision(p->c, p->st, p->ad, &req, &made, err,
	    sizeof err)) < 0) {
		if (p->cmdcfg != NULL) {
			/* The hook's own failure is named (SPEC 8.7). */
			fprintf(stderr, "corral new: provision_hook_failed: "
			    "%s\n", err);
			fail_lease(p, "provision_hook_failed");
			undo(p);
			rc = TUI_EXIT_FAIL;
			goto out;
		}
		goto fail;
	}
	if (made.note[0] != '\0') {
		json_t *j = json_pack("{s:s, s:s}", "sandbox_id",
		    made.sandbox_id, "note", made.note);

		TUI_BEST_EFFORT(lease_receipt_append(p->st, p->id,
		    "provision", j, NULL));
		json_decref(j);
	}
	if (chmod(ws, 0700) < 0) {
		rc = -errno;
		snprintf(err, sizeof err, "%s: %s", ws, strerror(errno));
		goto fail;
	}
	if ((rc = lease_files(p, err, sizeof err)) < 0)
		goto fail;
	lease_fault_point("provision.bound.after");

	/* Step 6: the holder (its socket journaled first), then the agent. */
	if ((sock = tui_ctx_holder_sock(p->c, p->id)) == NULL ||
	    (rc = lease_resource_plan(p->st, p->id, LEASE_RES_SOCKET,
	    sock, NULL)) < 0) {
		rc = sock == NULL ? -ENOMEM : rc;
		snprintf(err, sizeof err, "%s", lease_store_errmsg(p->st));
		goto fail;
	}
	lease_fault_point("provision.holder.before");
	memset(&sp, 0, sizeof sp);
	sp.id = p->id;
	sp.sandbox = p->ad->name;
	sp.cmd = rq->cmd;
	sp.agent = rq->agent;
	sp.owner_fd = -1;
	sp.rows = rq->rows;
	sp.cols = rq->cols;
	if ((rc = tui_spawn_holder(p->c, &sp, &child, err, sizeof err)) < 0) {
		/* The holder journals what it knows; the rest is ours. */
		fprintf(stderr, "corral new: holder_start_failed: cannot start "
		    "'%s': %s\n", rq->cmd[0], err);
		fail_lease(p, "holder_start_failed");
		undo(p);
		rc = TUI_EXIT_FAIL;
		goto out;
	}
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "corral new: %s: %s\n", sbx_provision_reason(rc), err);
	fail_lease(p, sbx_provision_reason(rc));
	undo(p);
	rc = TUI_EXIT_FAIL;
out:
	free(sock);
	free(dir);
	free(ws);
	return rc;
}

int
tui_bringup_sandboxed(struct tui_ctx *c, const struct tui_bringup *rq,
    char id[LEASE_ID_LEN + 1])
{
	struct lease_spec spec;
	struct lease_lock *lk = NULL;
	struct sbx_policy_error perr;
	char err[600], *limits = NULL, got[TUI_NAME_MAX];
	struct lease_flag_rules rules;
	const char *reason;
	bool verified = false;
	struct sbx_command_config cc;
	struct tui_config cf;
	struct prov p;
	int rc;

	memset(&p, 0, sizeof p);
	p.c = c;
	p.rq = rq;
	p.id = id;
	p.ad = sbx_adapters_find(rq->sandbox != NULL ? rq->sandbox : "bwrap");
	if (p.ad == NULL || p.ad->provision == NULL ||
	    strcmp(p.ad->name, "trusted_local") == 0)
		return tui_ctx_err(c, "sandbox adapter '%s' cannot provision a "
		    "sandboxed lease", rq->sandbox);
	if ((p.st = tui_ctx_store(c)) == NULL)
		return TUI_EXIT_FAIL;
	p.init = tui_sandbox_helper_path(c,
	    "corral-sbx-init", "CORRAL_SBX_INIT");
	/*
	 * Hold the state lock from the insert until the holder has
	 * recorded itself (SPEC 9.2), as for trusted_local leases.
	 */
	if ((rc = lease_lock_acquire(c->state_dir, LOCK_MS, &lk)) < 0) {
		free(p.init);
		return tui_ctx_err(c, "state lock: %s", lease_strerror(rc));
	}
	/* Step 1: persist the lease in provisioning... */
	memset(&spec, 0, sizeof spec);
	spec.name = rq->name;
	spec.unique_name = true;
	spec.name_out = rq->name_out != NULL ? rq->name_out : got;
	spec.mode = LEASE_MODE_SANDBOXED;
	spec.adapter = p.ad->name;
	spec.isolation = p.ad->isolation;
	spec.cmd = rq->cmd;
	if ((rc = lease_record_insert(p.st, &spec, id)) < 0) {
		rc = tui_ctx_err(c, "%s", lease_store_errmsg(p.st));
		goto out;
	}
	if (rq->name_out == NULL)
		tui_ctx_name_notice(c, rq->name, got);
	/* ...validate the request and the policy... */
	if (read_prompt(&p, err, sizeof err) < 0) {
		fail_lease(&p, "request_invalid");
		rc = tui_ctx_err(c, "request_invalid: %s", err);
		goto out;
	}
	if ((rc = tui_sandbox_policy_read(rq->policy_file, &p.src, &perr)) == 0)
		rc = tui_sandbox_policy_build(&p.src, &p.pol, &perr);
	if (rc < 0) {
		reason = rc == SBX_EWIDER ? "policy_wider" : "policy_invalid";
		fail_lease(&p, reason);
		if (perr.line > 0)
			rc = tui_ctx_err(c, "%s: %s:%d: %s", reason, perr.file,
			    perr.line, perr.msg);
		else
			rc = tui_ctx_err(c, "%s: %s: %s", reason, perr.file,
			    perr.msg);
		goto out;
	}
	/* The agent profile: its install, its endpoint (the operator's
	 * configuration) and what they need of the policy. */
	if ((rc = tui_agent_setup(c, rq->agent, rq->cmd, &p.agent, err,
	    sizeof err)) == 0 && (rc = tui_agent_grant(&p.agent, p.pol, err,
	    sizeof err)) != 0)
		p.agent.status = TUI_AGENT_ENDPOINT_INVALID;
	if (rc != 0) {
		reason = rc == -ENOMEM ? "provision_error" :
		    tui_agent_status_name(p.agent.status);
		fail_lease(&p, reason);
		rc = tui_ctx_err(c, "%s: %s; nothing was started", reason,
		    rc == -ENOMEM ? "out of memory" : err);
		goto out;
	}
	/* The operator's review-flag patterns: a bad line stops the lease
	 * here rather than its result. */
	if ((rc = tui_checks_review_flags(&rules, err, sizeof err)) < 0) {
		fail_lease(&p, "policy_invalid");
		rc = tui_ctx_err(c, "policy_invalid: review flags: %s", err);
		goto out;
	}
	lease_gate_rules_free(&rules);
	if ((rc = policy_text(&p, err, sizeof err)) < 0) {
		fail_lease(&p, "provision_error");
		rc = tui_ctx_err(c, "%s", err);
		goto out;
	}
	/* The repository's own policy, from the base commit (SPEC 8.6). */
	if ((rc = repo_policy(&p, err, sizeof err)) < 0) {
		reason = rc == SBX_EWIDER ? "policy_wider" : rc == SBX_EPOLICY ?
		    "policy_invalid" : "provision_error";
		fail_lease(&p, reason);
		rc = tui_ctx_err(c, "%s: %s", reason, err);
		goto out;
	}
	if (strcmp(p.ad->name, "command") == 0) {
		rc = command_preflight(&p, &cf, &cc);
		if (rc != 0)
			goto out;
		goto provision;
	}
	if (geteuid() != 0) {
		rc = halt(&p, SBX_HALT_ISOLATION_UNSATISFIABLE, "each "
		    "sandboxed lease runs under a uid of its own: corral "
		    "must run as root to provision one");
		goto out;
	}
	if (p.init == NULL) {
		rc = halt(&p, SBX_HALT_ISOLATION_UNSATISFIABLE,
		    "corral-sbx-init not found next to corral (or "
		    "$CORRAL_SBX_INIT)");
		goto out;
	}
	/* ...and run the preflight: a refusal creates nothing. */
	if ((rc = preflight(&p, &verified)) != 0)
		goto out;
provision:
	/* What `show` and the console display (SPEC 8.7, 11). */
	limits = limits_json(&p.pol->limits);
	TUI_BEST_EFFORT(lease_record_set_text(p.st, id, LEASE_FIELD_POLICY,
	    p.policy_text));
	if (limits != NULL)
		TUI_BEST_EFFORT(lease_record_set_text(p.st, id,
		    LEASE_FIELD_LIMITS, limits));
	TUI_BEST_EFFORT(lease_record_set_text(p.st, id, LEASE_FIELD_ISOLATION,
	    p.cmdcfg != NULL ? p.ad->isolation : verified ? "bwrap" :
	    "bwrap unverified"));
	/* libgit2 for the git steps and for undoing them (lease.h). */
	lease_git_init();
	rc = provision(&p, lk);
	lease_git_shutdown();
out:
	lease_lock_release(lk);
	sbx_policy_free(p.pol);
	tui_sandbox_policy_src_clear(&p.src);
	free(p.policy_text);
	free(p.prompt);
	free(p.init);
	free(limits);
	tui_agent_clear(&p.agent);
	return rc;
}
