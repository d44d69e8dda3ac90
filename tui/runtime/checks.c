/*
 * checks.c: the results layer (lease/, SPEC 7) wired to the sandbox
 * module: the lease's policy turned into result caps and checks, the
 * check runner (each check a sandbox of its own under the lease, made
 * through the lease's adapter's exec zone, .exec (bwrap: a uid slot,
 * cgroups with the lease's limits, its copy of the result tree in a
 * bounded image); run with sbx_exec_run for at most [checks] timeout; its
 * log scrubbed; torn down by exact ID), a way to stop them from another
 * thread, and tui_checks_finish, the one call the holder makes when its
 * agent has ended (and reconciliation makes for a lost holder).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "lease/lease.h"
#include "lease/result/result.h"
#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"
#include "tui/runtime/runtime_int.h"

extern char **environ;

/* A check's limits where the lease's policy sets none (SPEC 8.4). */
#define TUI_CHECK_TIMEOUT_S (15ull * 60)
#define TUI_CHECK_DISK (1ull << 30)
#define TUI_CHECK_INODES 262144ull
/* Less than this left of the bounded copy: the run ran into its limit. */
#define TUI_CHECK_FULL_BYTES (1ull << 20)
#define TUI_CHECK_FULL_INODES 16


struct tui_checks_env {
	struct tui_ctx *ctx;	/* its journal: each run's resources */
	const struct sbx_adapter *ad;	/* whose exec zone runs the checks */
	char *secret;		/* the minted credential, scrubbed from logs */
	unsigned runs;
	struct tui_checks_stop *stop;	/* or NULL */
	struct sbx_policy *sbx;
	struct lease_result_policy pol;
	struct lease_check *checks;
	char **argvs;		/* 3 per check: /bin/sh -c CMD */
	char *policy_err;
	struct lease_flag_rules rules;	/* shipped and the operator's */
	char **ignore;		/* the agent profile's exclude patterns */
};

void
tui_checks_env_free(struct tui_checks_env *e)
{
	if (e == NULL)
		return;
	if (e->secret != NULL) {
		explicit_bzero(e->secret, strlen(e->secret));
		free(e->secret);
	}
	sbx_policy_free(e->sbx);
	free(e->checks);
	free(e->argvs);
	free(e->policy_err);
	lease_gate_rules_free(&e->rules);
	for (size_t i = 0; e->ignore != NULL && e->ignore[i] != NULL; i++)
		free(e->ignore[i]);
	free(e->ignore);
	free(e);
}

const struct lease_result_policy *
tui_checks_env_policy(const struct tui_checks_env *e)
{
	return &e->pol;
}

#define REVIEW_FLAGS_MAX (1u << 20)

int
tui_checks_review_flags(struct lease_flag_rules *out, char *err, size_t errsz)
{
	char path[4096], *text = NULL;
	size_t len = 0;
	int rc;

	memset(out, 0, sizeof *out);
	rc = tui_config_file("review-flags", path, sizeof path);
	if (rc == 0 && (rc = tui_sandbox_read_file(path, REVIEW_FLAGS_MAX,
	    &text, &len)) < 0 && rc != -ENOENT) {
		snprintf(err, errsz, "%s: %s", path, rc == -EFBIG ?
		    "larger than 1 MiB" : strerror(-rc));
		return rc;
	}
	if (text != NULL && strlen(text) != len) {
		snprintf(err, errsz, "%s: a NUL byte in the file", path);
		free(text);
		return -EINVAL;
	}
	rc = lease_result_flag_rules_load(out, text, path, err, errsz);
	free(text);
	return rc;
}

#define AGENT_FILE_MAX (256u * 1024u)

/*
 * The agent profile's workspace rules, from the agent.json `corral new`
 * left in the lease directory: its exclude patterns become the result's
 * ignore patterns, its review patterns "agent" review flags. None: 0.
 */
static int
agent_rules(struct tui_ctx *c, const char *id, struct tui_checks_env *e,
    char *err, size_t errsz)
{
	char *dir = tui_ctx_lease_dir(c, id), path[4096], *text = NULL, *flags;
	json_t *a, *ex, *rv, *v;
	size_t len = 0, i, n = 0, fl = 1;
	int rc;

	if (dir == NULL)
		return -ENOMEM;
	snprintf(path, sizeof path, "%s/%s", dir, TUI_AGENT_FILE);
	free(dir);
	if ((rc = tui_sandbox_read_file(path, AGENT_FILE_MAX, &text,
	    &len)) == -ENOENT)
		return 0;
	if (rc < 0) {
		snprintf(err, errsz, "%s: %s", path, strerror(-rc));
		return rc;
	}
	a = json_loadb(text, len, 0, NULL);
	free(text);
	if (a == NULL) {
		snprintf(err, errsz, "%s: not JSON", path);
		return -EINVAL;
	}
	ex = json_object_get(a, "exclude");
	rv = json_object_get(a, "review");
	if (json_array_size(ex) > 0 && (e->ignore = calloc(json_array_size(ex)
	    + 1, sizeof *e->ignore)) == NULL) {
		json_decref(a);
		return -ENOMEM;
	}
	json_array_foreach(ex, i, v) {
		if (json_is_string(v) && (e->ignore[n] =
		    strdup(json_string_value(v))) != NULL)
			n++;
	}
	e->pol.ignore = (const char *const *)e->ignore;
	json_array_foreach(rv, i, v)
		fl += json_string_length(v) + 8;
	rc = 0;
	if (json_array_size(rv) > 0) {
		if ((flags = calloc(1, fl)) == NULL) {
			json_decref(a);
			return -ENOMEM;
		}
		json_array_foreach(rv, i, v) {
			if (json_is_string(v)) {
				strcat(flags, "agent ");
				strcat(flags, json_string_value(v));
				strcat(flags, "\n");
			}
		}
		rc = lease_gate_rules_parse(&e->rules, flags, path, err,
		    errsz);
		free(flags);
	}
	json_decref(a);
	return rc;
}

int
tui_checks_env_new(struct tui_ctx *c, const struct lease_record *r,
    const char *secret, struct tui_checks_env **out, char *err, size_t errsz)
{
	struct sbx_policy_error perr;
	struct tui_checks_env *e;
	char *dir;
	size_t i;
	int rc = 0;

	*out = NULL;
	if ((e = calloc(1, sizeof *e)) == NULL)
		return -ENOMEM;
	e->ctx = c;
	e->ad = sbx_adapters_exec(r->adapter);
	/* The holder's, or one still stored (not yet revoked). */
	if (secret != NULL) {
		if ((e->secret = strdup(secret)) == NULL) {
			tui_checks_env_free(e);
			return -ENOMEM;
		}
	} else if ((dir = tui_ctx_lease_dir(c, r->id)) != NULL) {
		if (sbx_cred_read(dir, &e->secret) < 0)
			e->secret = NULL;
		free(dir);
	}
	lease_result_policy_defaults(&e->pol);
	if ((rc = tui_checks_review_flags(&e->rules, err, errsz)) < 0) {
		tui_checks_env_free(e);
		return rc;
	}
	if ((rc = agent_rules(c, r->id, e, err, errsz)) < 0) {
		tui_checks_env_free(e);
		return rc;
	}
	e->pol.flag_rules = &e->rules;
	memset(&perr, 0, sizeof perr);
	if (r->policy != NULL && *r->policy != '\0')
		rc = sbx_policy_load(r->policy, "lease policy", NULL, &e->sbx,
		    &perr);
	else if ((e->sbx = sbx_policy_new_default()) == NULL)
		rc = -ENOMEM;
	if (rc < 0) {
		snprintf(err, errsz, "policy: %s:%d: %s", perr.file, perr.line,
		    perr.msg);
		tui_checks_env_free(e);
		return rc;
	}
	if (e->sbx->max_files > 0)
		e->pol.max_files = e->sbx->max_files;
	if (e->sbx->max_file_bytes > 0)
		e->pol.max_file_bytes = e->sbx->max_file_bytes;
	if (e->sbx->max_total_bytes > 0)
		e->pol.max_total_bytes = e->sbx->max_total_bytes;
	if (e->sbx->output_dir[0] != '\0')
		e->pol.output_dir = e->sbx->output_dir;
	/* a patch of the total plus its framing */
	if (e->pol.max_total_bytes * 2 > e->pol.max_patch_bytes)
		e->pol.max_patch_bytes = e->pol.max_total_bytes * 2;
	e->pol.allow_binary = e->sbx->allow_binary;
	e->pol.allow_symlinks = e->sbx->allow_symlinks;
	if (e->sbx->nchecks > 0) {
		e->checks = calloc(e->sbx->nchecks, sizeof *e->checks);
		e->argvs = calloc(e->sbx->nchecks * 4, sizeof *e->argvs);
		if (e->checks == NULL || e->argvs == NULL) {
			tui_checks_env_free(e);
			return -ENOMEM;
		}
		for (i = 0; i < e->sbx->nchecks; i++) {
			e->argvs[4 * i] = "/bin/sh";
			e->argvs[4 * i + 1] = "-c";
			e->argvs[4 * i + 2] = e->sbx->checks[i].cmd;
			e->argvs[4 * i + 3] = NULL;
			e->checks[i].name = e->sbx->checks[i].name;
			e->checks[i].argv = &e->argvs[4 * i];
		}
		e->pol.checks = e->checks;
		e->pol.nchecks = e->sbx->nchecks;
	}
	*out = e;
	return 0;
}

/* The exec zone's tools, as one short line for the receipt. */
static void
tool_versions(char *out, size_t sz)
{
	char *text = NULL, *p;

	out[0] = '\0';
	if (sbx_exec_tool_versions(&text) < 0 || text == NULL)
		return;
	for (p = text; *p != '\0'; p++)
		if (*p == '\n')
			*p = ';';
	snprintf(out, sz, "tools: %s", text);
	free(text);
}

struct logbuf {
	char *p;
	size_t len, max;
};

static void
log_put(const char *buf, size_t len, void *ud)
{
	struct logbuf *l = ud;
	size_t take = l->max - l->len < len ? l->max - l->len : len;

	memcpy(l->p + l->len, buf, take);
	l->len += take;
}

/*
 * The log: stdout then stderr, each through the scrubber when the lease
 * has a minted credential (SPEC 8.5: the same one as the transcript's),
 * capped at run->log_max. True when something was cut.
 */
static bool
put_log(const struct tui_checks_env *e, const struct lease_check_run *run,
    const struct sbx_exec_result *res, size_t *len)
{
	struct logbuf l = { run->log, 0, run->log_max };
	const char *part[2] = { res->out, res->err };
	size_t plen[2] = { res->out_len, res->err_len };
	struct sbx_scrub *sc;

	for (int i = 0; i < 2; i++) {
		if (e->secret == NULL) {
			log_put(part[i], plen[i], &l);
			continue;
		}
		/* NULL on ENOMEM: then nothing of it, never the raw bytes */
		if ((sc = sbx_scrub_new(e->secret)) == NULL)
			continue;
		sbx_scrub_feed(sc, part[i], plen[i], log_put, &l);
		sbx_scrub_flush(sc, log_put, &l);
		sbx_scrub_free(sc);
	}
	*len = l.len;
	return l.len == l.max;
}

/*
 * The limit a run hit, by name (SPEC 8.4), or NULL. A bound the run ran
 * into (time, output, memory, pids, the copy's disk or inodes) fails it
 * whatever it exits with; a signal's rlimit names why it failed.
 */
static const char *
limit_hit(const struct sbx_adapter *ad, const struct sbx_exec_result *res,
    const struct sbx_running *zone, const char *copy, bool failed)
{
	struct sbx_usage u;
	struct statvfs vs;

	/*
	 * What it ran into first, then time: a fork bomb or a full disk that
	 * then waits forever also runs out of time.
	 */
	if (ad->usage(zone, &u) == 0 && u.limit != NULL)
		return u.limit;
	/* the bounded copy is full, but for ext4's rounding */
	if (statvfs(copy, &vs) == 0 && vs.f_blocks > 0) {
		if ((unsigned long long)vs.f_bavail * vs.f_frsize <
		    TUI_CHECK_FULL_BYTES)
			return "disk";
		if (vs.f_files > 0 && vs.f_favail < TUI_CHECK_FULL_INODES)
			return "inodes";
	}
	if (res->timed_out)
		return "timeout";
	if (res->output_killed)
		return "output";
	if (failed && WIFSIGNALED(res->wstatus) &&
	    WTERMSIG(res->wstatus) == SIGXFSZ)
		return "file_size";
	if (failed && WIFSIGNALED(res->wstatus) &&
	    WTERMSIG(res->wstatus) == SIGXCPU)
		return "cpu_time";
	return NULL;
}

static long long
wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The zone's command line and mounts, for a run as uid/gid. */
static int
exec_plan(const struct tui_checks_env *e, const struct lease_check_run *run,
    const char *cid, const struct sbx_limits *lim, const struct sbx_running *zone,
    char **env, const char **faketime, struct sbx_plan **plan)
{
	struct sbx_mount mnt[64];
	struct sbx_request req;
	size_t i, n;

	memset(&req, 0, sizeof req);
	req.id = cid;
	req.workspace = run->dir;
	req.cmd = run->check->argv;
	req.limits = lim;
	req.env = env;
	req.source_date_epoch = run->source_date_epoch;
	req.faketime = *faketime = e->ad->faketime != NULL ?
	    e->ad->faketime() : NULL;
	for (i = 0, n = 0; i < e->sbx->nmounts_ro && n < 64; i++, n++) {
		mnt[n].src = e->sbx->mounts_ro[i];
		mnt[n].dst = e->sbx->mounts_ro[i];
	}
	req.ro_binds = mnt;
	req.nro_binds = (int)n;
	return e->ad->exec_plan(zone, &req, plan);
}

/* ---- stopping them -------------------------------------------------------- */

void
tui_checks_stop_init(struct tui_checks_stop *s)
{
	memset(s, 0, sizeof *s);
	pthread_mutex_init(&s->mu, NULL);
}

void
tui_checks_stop_request(struct tui_checks_stop *s)
{
	pthread_mutex_lock(&s->mu);
	s->requested = true;
	/* never blocks: the run's own thread waits for it and tears down */
	if (s->zone != NULL && s->ad->signal(s->zone, SIGKILL) < 0) {
		/* its timeout still ends it */
	}
	pthread_mutex_unlock(&s->mu);
}

void
tui_checks_stop_destroy(struct tui_checks_stop *s)
{
	pthread_mutex_destroy(&s->mu);
}

void
tui_checks_env_stop(struct tui_checks_env *e, struct tui_checks_stop *s)
{
	e->stop = s;
}

/* Publish the run's zone for a stop request, unless one came: false. */
static bool
stop_track(struct tui_checks_env *e, struct sbx_running *zone)
{
	bool go = true;

	if (e->stop == NULL)
		return true;
	pthread_mutex_lock(&e->stop->mu);
	if (zone != NULL && e->stop->requested)
		go = false;
	else {
		e->stop->zone = zone;
		e->stop->ad = e->ad;
	}
	pthread_mutex_unlock(&e->stop->mu);
	return go;
}

static bool
stopped(const struct tui_checks_env *e)
{
	bool r = false;

	if (e->stop != NULL) {
		pthread_mutex_lock(&e->stop->mu);
		r = e->stop->requested;
		pthread_mutex_unlock(&e->stop->mu);
	}
	return r;
}

int
tui_checks_run(const struct lease_check_run *run,
    struct lease_check_outcome *oc, void *ud)
{
	struct tui_checks_env *e = ud;
	struct sbx_limits lim = e->sbx->limits, plim;
	struct sbx_exec_opts eo;
	struct sbx_exec_result res;
	struct sbx_request req;
	struct sbx_plan *plan = NULL;
	struct sbx_running *zone = NULL;
	const char *why, *faketime = NULL;
	char **env = NULL, cid[128], err[512];
	unsigned long long limit_s;
	int rc;

	memset(&res, 0, sizeof res);
	oc->status = LEASE_CHECK_ERROR;
	if (e->ctx == NULL || tui_ctx_store(e->ctx) == NULL) {
		snprintf(oc->detail, sizeof oc->detail, "no journal");
		return 0;
	}
	/*
	 * Its own exact ID, uid, cgroups (the lease's limits) and bounded
	 * copy, each journaled under the lease before it exists (SPEC 8.4,
	 * 9.2): every teardown of the lease finds and stops it.
	 */
	snprintf(cid, sizeof cid, "%s.%lld.%u", run->id, wall_ms(), ++e->runs);
	if (lim.disk == 0)
		lim.disk = TUI_CHECK_DISK;
	if (lim.inodes == 0)
		lim.inodes = TUI_CHECK_INODES;
	memset(&req, 0, sizeof req);
	req.id = cid;
	req.workspace = run->dir;
	req.limits = &lim;
	req.scope = tui_ctx_scope(e->ctx);
	rc = tui_sandbox_check_provision(e->ctx, e->ctx->store, run->id, e->ad,
	    &req, &zone, err, sizeof err);
	if (rc < 0) {
		snprintf(oc->detail, sizeof oc->detail, "exec zone: %.200s", err);
		goto out;
	}
	/*
	 * The cgroup's pids.max bounds the run and counts what it refused
	 * (the limit's name); RLIMIT_NPROC, which the kernel counts per uid
	 * across user namespaces and which bwrap's own processes use up
	 * first, stays a backstop above it.
	 */
	plim = lim;
	if (plim.pids > 0)
		plim.pids = plim.pids * 2 + 16;
	if ((rc = sbx_policy_env(e->sbx, environ, &env)) == 0 &&
	    (rc = exec_plan(e, run, cid, &plim, zone, env, &faketime,
	    &plan)) == 0)
		rc = 0;
	if (rc < 0) {
		snprintf(oc->detail, sizeof oc->detail, "exec zone: %s",
		    sbx_strerror(rc));
		goto out;
	}
	memset(&eo, 0, sizeof eo);
	eo.cap = run->log_max;
	/* [checks] timeout, never past the lease's wall time */
	limit_s = e->sbx->check_timeout > 0 ? e->sbx->check_timeout :
	    TUI_CHECK_TIMEOUT_S;
	if (lim.wall_time > 0 && lim.wall_time < limit_s)
		limit_s = lim.wall_time;
	eo.timeout_ms = limit_s * 1000;
	eo.stdin_fd = -1;
	if (!stop_track(e, zone)) {
		snprintf(oc->detail, sizeof oc->detail, "cancelled");
		goto out;
	}
	rc = sbx_exec_run(plan, &eo, &res);
	(void)stop_track(e, NULL);
	if (rc < 0) {
		snprintf(oc->detail, sizeof oc->detail, "cannot start: %s",
		    sbx_strerror(rc));
		goto out;
	}
	oc->faketime = faketime != NULL;
	oc->duration_ms = (int64_t)res.wall_ms;
	oc->log_truncated = put_log(e, run, &res, &oc->log_len) ||
	    res.truncated;
	if (WIFEXITED(res.wstatus)) {
		oc->exit_code = WEXITSTATUS(res.wstatus);
		oc->status = oc->exit_code == 0 && !res.timed_out ?
		    LEASE_CHECK_PASS : LEASE_CHECK_FAIL;
	} else {
		oc->signal = WIFSIGNALED(res.wstatus) ? WTERMSIG(res.wstatus) :
		    0;
		oc->status = LEASE_CHECK_FAIL;
	}
	if ((why = limit_hit(e->ad, &res, zone, run->dir, oc->status !=
	    LEASE_CHECK_PASS)) != NULL) {
		oc->status = LEASE_CHECK_FAIL;
		snprintf(oc->detail, sizeof oc->detail, "limit: %s%s", why,
		    stopped(e) ? " (cancelled)" : "");
	} else if (stopped(e)) {
		oc->status = LEASE_CHECK_ERROR;
		snprintf(oc->detail, sizeof oc->detail, "cancelled");
	} else
		tool_versions(oc->detail, sizeof oc->detail);
out:
	sbx_exec_result_clear(&res);
	sbx_plan_free(plan);
	sbx_strv_free(env);
	if (zone != NULL)
		e->ad->detach(zone);
	/* Nothing of the run outlives it: stopped, by exact ID, journaled. */
	if ((rc = tui_sandbox_teardown(e->ctx, e->ctx->store, run->id, err,
	    sizeof err)) < 0) {
		oc->status = LEASE_CHECK_ERROR;
		snprintf(oc->detail, sizeof oc->detail, "teardown: %.200s", err);
	} else if ((rc = sbx_workspace_release(run->dir)) < 0) {
		oc->status = LEASE_CHECK_ERROR;
		snprintf(oc->detail, sizeof oc->detail, "%s: %s", run->dir,
		    strerror(-rc));
	}
	return 0;
}

int
tui_checks_finish(struct tui_ctx *c, const char *id, const char *fail_reason,
    const char *secret, struct tui_checks_stop *stop)
{
	struct lease_result_policy pol;
	struct lease_result_opts o;
	struct tui_checks_env *e = NULL;
	struct lease_record r;
	char err[512];
	int rc;

	if (tui_ctx_store(c) == NULL)
		return -EIO;
	if ((rc = lease_record_get(c->store, id, &r)) < 0)
		return rc;
	rc = tui_checks_env_new(c, &r, secret, &e, err, sizeof err);
	lease_record_clear(&r);
	if (rc < 0) {
		fprintf(stderr, "corral: lease %s: %s\n", id, err);
		return rc;
	}
	e->stop = stop;
	memset(&o, 0, sizeof o);
	pol = *tui_checks_env_policy(e);
	pol.secret = secret;	/* SPEC 8.5: refused in any result */
	o.policy = &pol;
	o.run_check = tui_checks_run;
	o.ud = e;
	o.fail_reason = fail_reason;
	lease_git_init();
	rc = lease_result_finish(c->store, c->state_dir, id, &o);
	lease_git_shutdown();
	/*
	 * A result that is a commit needs its workspace no more: released
	 * (issue 17), unless the policy keeps it. A failed release leaves
	 * the lease result_ready with its workspace; reconcile goes on.
	 */
	if (rc == 0 && !e->sbx->keep_workspace &&
	    lease_release_workspace(c->store, c->state_dir, id, "holder") < 0)
		fprintf(stderr, "corral: lease %s: workspace kept: %s\n", id,
		    lease_store_errmsg(c->store));
	tui_checks_env_free(e);
	return rc;
}

int
tui_checks_before_teardown(const char *id, void *ud)
{
	struct tui_ctx *c = ud;
	char *ws = lease_path_workspace(c->state_dir, id);
	int rc = 0;

	if (ws == NULL)
		return -ENOMEM;
	/* a bwrap lease's workspace is an ext4 image mounted there */
	if ((rc = sbx_workspace_release(ws)) < 0)
		fprintf(stderr, "corral: %s: cannot unmount the workspace: "
		    "%s\n", ws, strerror(-rc));
	free(ws);
	return rc;
}
