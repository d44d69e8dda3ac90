/*
 * holder_sbx.c: the holder's side of a bwrap lease (SPEC 6.6, 6.7, 8.3,
 * 8.4): the exec plan built from the journal and the lease's policy inside
 * the holder's private runtime mounts, the limits watched on the holder's
 * loop (wall time, memory, pids, disk, output, CPU time: hitting one ends
 * the lease with a named reason), the initial prompt sent once the agent
 * first waits at its prompt, and the teardown by exact ID when the agent
 * has ended. holder_main.c calls these from its hooks.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include <jansson.h>

#include "lease/lease.h"
#include "pty/pty.h"
#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"
#include "tui/runtime/runtime_int.h"

#define MONITOR_MS 200
/*
 * The initial prompt's Enter goes this long after its paste: an agent
 * that reads a paste in one go (Claude Code) takes an Enter in the same
 * burst as part of the text, and the prompt would sit unsent.
 */
#define PROMPT_ENTER_MS 500
#define LIMIT_KILL_MS 3000
/* The proxy socket, in the holder's private runtime tmpfs. */
#define EGRESS_DIR SBX_BWRAP_RT_DIR "/egress"
#define EGRESS_SOCK EGRESS_DIR "/proxy.sock"
#define EGRESS_RECEIPTS_MAX 4096	/* per-decision lines in the journal */
#define EGRESS_RECEIPTS_BURST 256	/* ... of which at once */
#define EGRESS_RECEIPTS_PER_SEC 16	/* ... then so many a second */

extern char **environ;

static void pipe_closed(uv_handle_t *);

struct tui_holder_sbx {
	struct tui_ctx *ctx;
	char id[LEASE_ID_LEN + 1];
	uv_loop_t *loop;
	struct sbx_policy *pol;
	const struct sbx_adapter *ad;	/* bwrap */
	struct sbx_running *run;	/* the lease's sandbox (.attach) */
	struct sbx_attached info;	/* its ID, uid, init's hash */
	char *ws;		/* host path of the workspace */
	struct sbx_mount *mnt;	/* the policy's read-only mounts */
	char **env;
	/* limits */
	uv_timer_t wall, monitor, enter;
	bool timers;
	const char *limit;	/* the first limit hit, or NULL */
	/* the initial prompt (SPEC 6.7) */
	char *prompt;
	size_t prompt_len;
	bool prompt_sent;
	uv_pipe_t pipe;
	uv_connect_t conn;
	uv_write_t wr;
	struct pty_wbuf wb;
	bool pipe_open;
	/* egress (SPEC 8.2): the lease's auditing proxy on the holder loop */
	bool egress;
	const char **allow;	/* NULL-terminated view of pol->net_allow */
	const char *test_hosts;	/* sbx_proxy_test_env(): never a policy */
	struct sbx_proxy *px;
	bool px_closing, px_closed;
	struct pty_holder *ph;	/* for the detector's EGRESS signal */
	unsigned long long egress_denied;
	struct tui_tally egress_lines;
	unsigned long long egress_unrecorded;
	/* the minted credential (SPEC 8.5) */
	struct tui_holder_cred_cfg ccfg;
	struct sbx_cred *cred;
	char *dir;		/* the lease directory */
	bool revoked;
	/* the model gateway (SPEC 8.5), or NULL; its in-flight count and
	 * the proxy's, summed for the detector */
	struct tui_holder_gw *gw;
	unsigned px_inflight, gw_inflight;
	/* the agent profile's part (agent.c's agent.json), or NULL */
	json_t *agent;
	char **cmd;		/* the command, argv[0] its installation */
	/* the loop's receipts, written off it (holder_journal.c) */
	struct tui_holder_journal *jq;
	bool summarised;
};

/* A receipt line through st (the finishing phase has its own handle). */
static void
receipt_to(struct tui_holder_sbx *h, struct lease_store *st,
    const char *kind, json_t *fields)
{
	if (fields != NULL && st != NULL &&
	    lease_receipt_append(st, h->id, kind, fields, NULL) < 0)
		fprintf(stderr, "corral holder %s: receipt: %s\n", h->id,
		    lease_store_errmsg(st));
	json_decref(fields);
}

/* A receipt line of the holder: queued once the loop runs. */
static void
receipt(struct tui_holder_sbx *h, const char *kind, json_t *fields)
{
	if (h->jq != NULL && fields != NULL)
		TUI_BEST_EFFORT(tui_holder_journal_receipt(h->jq, kind,
		    fields));
	else
		receipt_to(h, h->ctx->store, kind, fields);
}

void
tui_holder_sbx_set_journal(struct tui_holder_sbx *h,
    struct tui_holder_journal *q)
{
	if (h != NULL)
		h->jq = q;
}

static char *
lease_file(struct tui_holder_sbx *h, const char *name)
{
	char *dir = tui_ctx_lease_dir(h->ctx, h->id), *p = NULL;

	if (dir != NULL && asprintf(&p, "%s/%s", dir, name) < 0)
		p = NULL;
	free(dir);
	return p;
}

/*
 * The lease's sandbox back from what the journal records as made (its uid
 * slot and cgroups), and the holder's private view of req's paths.
 */
static int
attach(struct tui_holder_sbx *h, const struct sbx_request *req, char *err,
    size_t errsz)
{
	struct lease_resource_row *v = NULL;
	struct sbx_resource *res;
	size_t n = 0, k;
	int rc;

	if ((rc = lease_resource_list(h->ctx->store, h->id, &v, &n)) < 0) {
		snprintf(err, errsz, "journal: %s",
		    lease_store_errmsg(h->ctx->store));
		return rc;
	}
	if ((res = calloc(n + 1, sizeof *res)) == NULL) {
		lease_resource_list_free(v, n);
		snprintf(err, errsz, "out of memory");
		return -ENOMEM;
	}
	k = tui_sandbox_resources(v, n, true, res);
	rc = h->ad->attach(req, res, k, &h->info, &h->run, err, errsz);
	free(res);
	lease_resource_list_free(v, n);
	return rc;
}

/* A lease file into *text (NULL when absent). */
static int
read_lease_file(struct tui_holder_sbx *h, const char *name, char *path_out,
    size_t pathsz, char **text, size_t *len)
{
	char *path = lease_file(h, name);
	int rc = 0;

	*text = NULL;
	if (path == NULL)
		return -ENOMEM;
	snprintf(path_out, pathsz, "%s", path);
	if (access(path, F_OK) == 0)
		rc = tui_sandbox_read_file(path, 1u << 20, text, len);
	free(path);
	return rc;
}

/* The policy `corral new` validated, as the journal keeps it. */
static int
load_policy(struct tui_holder_sbx *h, char *err, size_t errsz)
{
	struct sbx_policy_error perr;
	struct lease_record r;
	char path[4096];
	int rc;

	if ((rc = lease_record_get(h->ctx->store, h->id, &r)) < 0) {
		snprintf(err, errsz, "journal: %s",
		    lease_store_errmsg(h->ctx->store));
		return rc;
	}
	if (r.policy == NULL)
		rc = -EINVAL;
	else if ((rc = sbx_policy_load(r.policy, "lease policy", NULL,
	    &h->pol, &perr)) < 0)
		snprintf(err, errsz, "policy: line %d: %s", perr.line,
		    perr.msg);
	lease_record_clear(&r);
	if (rc == -EINVAL)
		snprintf(err, errsz, "the journal has no policy for the lease");
	if (rc < 0)
		return rc;
	/* The prompt, if the lease has one. */
	if ((rc = read_lease_file(h, "prompt", path, sizeof path, &h->prompt,
	    &h->prompt_len)) < 0)
		snprintf(err, errsz, "%s: %s", path, strerror(-rc));
	return rc;
}

/* ---- the agent profile (agent.c, issue 18) --------------------------------- */

/* A string member of a JSON array or object, "" when absent. */
static const char *
jstr(json_t *v)
{
	const char *s = json_string_value(v);

	return s != NULL ? s : "";
}

/* LEASE_DIR/agent.json, if `corral new` left one. */
static int
agent_load(struct tui_holder_sbx *h, char *err, size_t errsz)
{
	char path[4096], *text = NULL;
	json_error_t je;
	size_t len = 0;
	int rc;

	if ((rc = read_lease_file(h, TUI_AGENT_FILE, path, sizeof path, &text,
	    &len)) < 0) {
		snprintf(err, errsz, "%s: %s", path, strerror(-rc));
		return rc;
	}
	if (text == NULL)
		return 0;
	h->agent = json_loadb(text, len, 0, &je);
	free(text);
	if (h->agent == NULL || !json_is_object(h->agent)) {
		snprintf(err, errsz, "%s: %s", path, je.text);
		return -EINVAL;
	}
	return 0;
}

/* The command with argv[0] the profile's installation, its args next. */
static int
agent_cmd(struct tui_holder_sbx *h, char *const *cmd)
{
	const char *exe = json_string_value(json_object_get(h->agent, "exe"));
	json_t *av = json_object_get(h->agent, "args");
	size_t n = 0, na = json_array_size(av), k = 0;

	while (cmd[n] != NULL)
		n++;
	if ((h->cmd = calloc(n + na + 1, sizeof *h->cmd)) == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if ((h->cmd[k++] = strdup(i == 0 && exe != NULL ? exe :
		    cmd[i])) == NULL)
			return -ENOMEM;
		for (size_t j = 0; i == 0 && j < na; j++)
			if ((h->cmd[k++] = strdup(jstr(json_array_get(av,
			    j)))) == NULL)
				return -ENOMEM;
	}
	return 0;
}

/* "{{key_tail}}" in t: the last 20 bytes of the key the agent holds. */
static char *
key_tail(const char *t, const char *key)
{
	static const char mark[] = "{{key_tail}}";
	size_t kl = key != NULL ? strlen(key) : 0, ml = sizeof mark - 1;
	const char *tail = key != NULL ? key + (kl > 20 ? kl - 20 : 0) : "";
	size_t tl = strlen(tail), cap = strlen(t) + 1, len = 0;
	char *out, *nb;

	if ((out = malloc(cap)) == NULL)
		return NULL;
	while (*t != '\0') {
		if (strncmp(t, mark, ml) == 0) {
			if (len + tl + strlen(t) + 1 > cap) {
				cap = len + tl + strlen(t) + 1;
				if ((nb = realloc(out, cap)) == NULL) {
					free(out);
					return NULL;
				}
				out = nb;
			}
			memcpy(out + len, tail, tl);
			len += tl;
			t += ml;
			continue;
		}
		out[len++] = *t++;
	}
	out[len] = '\0';
	return out;
}

/* Its knobs, key, PATH and HOME files into the plan. */
static int
agent_plan(struct tui_holder_sbx *h, struct sbx_plan *plan, char *err,
    size_t errsz)
{
	json_t *env = json_object_get(h->agent, "env"), *home =
	    json_object_get(h->agent, "home"), *pv = json_object_get(h->agent,
	    "path"), *v;
	const char *key_env = json_string_value(json_object_get(h->agent,
	    "key_env")), *ph = json_string_value(json_object_get(h->agent,
	    "placeholder")), *key;
	struct sbx_agent_file files[SBX_AGENT_FILES_MAX];
	char *texts[SBX_AGENT_FILES_MAX] = { NULL }, **envv = NULL;
	char path[2048] = "";
	struct sbx_agent_plan ap;
	size_t i, ne = json_array_size(env), nf = 0;
	int rc = -ENOMEM;

	memset(&ap, 0, sizeof ap);
	/* The minted credential is the key when it has the key's name. */
	bool minted = h->cred != NULL && h->gw == NULL && key_env != NULL &&
	    strcmp(h->cred->variable, key_env) == 0;
	key = minted ? h->cred->value : ph;
	if ((envv = calloc(ne + 1, sizeof *envv)) == NULL)
		goto out;
	json_array_foreach(env, i, v) {
		if (asprintf(&envv[i], "%s=%s", jstr(json_array_get(v, 0)),
		    jstr(json_array_get(v, 1))) < 0) {
			envv[i] = NULL;
			goto out;
		}
	}
	json_array_foreach(pv, i, v) {
		size_t l = strlen(path);

		snprintf(path + l, sizeof path - l, "%s%s", l ? ":" : "",
		    jstr(v));
	}
	json_array_foreach(home, i, v) {
		if (nf == SBX_AGENT_FILES_MAX) {
			rc = -ENOSPC;
			goto out;
		}
		if ((texts[nf] = key_tail(jstr(json_array_get(v, 1)), key)) ==
		    NULL)
			goto out;
		files[nf].path = json_string_value(json_array_get(v, 0));
		files[nf].text = texts[nf];
		files[nf].len = strlen(texts[nf]);
		nf++;
	}
	ap.env = envv;
	if (key_env != NULL && !minted && ph != NULL && ph[0] != '\0') {
		ap.key_env = key_env;
		ap.key_value = ph;
	}
	ap.path_prefix = path[0] != '\0' ? path : NULL;
	ap.files = files;
	ap.nfiles = (int)nf;
	rc = sbx_agent_plan_add(plan, &ap);
out:
	if (rc < 0)
		snprintf(err, errsz, "agent profile %s: %s",
		    jstr(json_object_get(h->agent, "profile")),
		    sbx_strerror(rc));
	for (i = 0; i < nf; i++)
		free(texts[i]);
	sbx_strv_free(envv);
	return rc;
}

/*
 * Is the CONNECT target (as sent: refused before any parse, so the
 * proxy's host is empty) one the agent is known to try in the
 * background? Exactly an entry, case aside.
 */
static bool
agent_background(const struct tui_holder_sbx *h, const char *target)
{
	json_t *bg = json_object_get(h->agent, "background"), *v;
	size_t i;

	if (bg == NULL || target == NULL || target[0] == '\0')
		return false;
	json_array_foreach(bg, i, v) {
		if (json_is_string(v) && strcasecmp(json_string_value(v),
		    target) == 0)
			return true;
	}
	return false;
}

/* ---- the credential (SPEC 8.5) --------------------------------------------- */

/*
 * The operator's mint hook, if configured: one credential for this lease,
 * in the 0600 file of the lease directory; the receipt gets only its
 * fingerprint, scope, lifetime, expiry and cap.
 */
static int
mint(struct tui_holder_sbx *h, char *err, size_t errsz)
{
	char why[512];
	int rc;

	if ((rc = tui_holder_cred_load(&h->ccfg, why, sizeof why)) < 0) {
		snprintf(err, errsz, "credentials: %s", why);
		return rc;
	}
	if (h->ccfg.cfg.mint == NULL)
		return 0;
	/* A credential left by an earlier holder of this lease goes first. */
	if (sbx_cred_present(h->dir) && (rc = sbx_cred_revoke(&h->ccfg.cfg,
	    h->id, h->dir, why, sizeof why)) < 0) {
		snprintf(err, errsz, "credential revoke: %s", why);
		return rc;
	}
	if ((rc = sbx_cred_mint(&h->ccfg.cfg, h->id, h->dir,
	    h->pol->limits.wall_time, &h->cred, why, sizeof why)) < 0) {
		snprintf(err, errsz, "credential mint: %s", why);
		receipt(h, "credential_minted", json_pack("{s:b, s:s}", "ok",
		    0, "error", why));
		return rc;
	}
	receipt(h, "credential_minted", json_pack("{s:b, s:s, s:s, s:s, "
	    "s:s, s:I, s:I}", "ok", 1, "fingerprint", h->cred->fingerprint,
	    "variable", h->cred->variable, "scope", h->cred->scope,
	    "spend_cap", h->cred->spend_cap, "lifetime_s",
	    (json_int_t)h->cred->lifetime_s, "expires",
	    (json_int_t)h->cred->expires));
	return 0;
}

/* Every exit path (SPEC 8.5): the revoke hook, once, with a receipt. */
static void
cred_revoke(struct tui_holder_sbx *h, struct lease_store *st)
{
	char why[512] = "";
	int rc;

	if (h->revoked || h->dir == NULL || h->ccfg.cfg.mint == NULL)
		return;
	h->revoked = true;
	if (!sbx_cred_present(h->dir))
		return;
	rc = sbx_cred_revoke(&h->ccfg.cfg, h->id, h->dir, why, sizeof why);
	receipt_to(h, st, "credential_revoked", json_pack("{s:b, s:s, s:s?, "
	    "s:s?}", "ok", rc == 0, "by", "holder", "fingerprint",
	    h->cred != NULL ? h->cred->fingerprint : NULL, "error", rc == 0 ?
	    NULL : why));
	if (rc < 0)
		fprintf(stderr, "corral holder %s: credential revoke: %s "
		    "(reconcile retries)\n", h->id, why);
}

const char *
tui_holder_sbx_secret(const struct tui_holder_sbx *h)
{
	if (h != NULL && h->gw != NULL)
		return tui_holder_gw_key(h->gw);
	return h != NULL && h->cred != NULL ? h->cred->value : NULL;
}

int
tui_holder_sbx_prepare(struct tui_ctx *c, const struct sbx_adapter *ad,
    const char *id, char *const *cmd, struct tui_holder_sbx **out,
    struct sbx_plan **plan, char *err, size_t errsz)
{
	struct tui_holder_sbx *h;
	struct sbx_request req;
	char *init = NULL;
	int rc;

	*out = NULL;
	*plan = NULL;
	if ((h = calloc(1, sizeof *h)) == NULL)
		return -ENOMEM;
	h->ctx = c;
	snprintf(h->id, sizeof h->id, "%s", id);
	pty_wbuf_init(&h->wb);
	tui_tally_init(&h->egress_lines, EGRESS_RECEIPTS_MAX);
	tui_tally_set_rate(&h->egress_lines, EGRESS_RECEIPTS_BURST,
	    EGRESS_RECEIPTS_PER_SEC);
	h->ad = ad;
	*out = h;
	if ((rc = load_policy(h, err, errsz)) < 0)
		return rc;
	if ((h->dir = tui_ctx_lease_dir(c, id)) == NULL)
		return -ENOMEM;
	h->egress = h->pol->nnet_allow > 0 || h->pol->loopback_port != 0;
	if ((rc = mint(h, err, errsz)) < 0)
		return rc;
	if ((rc = agent_load(h, err, errsz)) < 0)
		return rc;
	/* Through the gateway the key, minted or the operator's, stays on
	 * this side. */
	if (json_object_get(h->agent, "gateway") != NULL && (rc =
	    tui_holder_gw_prepare(c, json_object_get(h->agent, "gateway"),
	    h->cred != NULL ? h->cred->value : NULL, h->pol->spend_cap,
	    h->dir, EGRESS_DIR, &h->gw, err, errsz)) < 0)
		return rc;
	if (h->agent != NULL) {
		if ((rc = agent_cmd(h, cmd)) < 0)
			return rc;
		cmd = h->cmd;
	}
	if ((h->ws = lease_path_workspace(c->state_dir, id)) == NULL)
		return -ENOMEM;
	init = tui_sandbox_helper_path(c, "corral-sbx-init", "CORRAL_SBX_INIT");
	if (init == NULL) {
		snprintf(err, errsz, "corral-sbx-init not found");
		return -ENOENT;
	}
	/* Bound at the same path inside as on the host. */
	if ((h->mnt = calloc(h->pol->nmounts_ro + 1, sizeof *h->mnt)) ==
	    NULL) {
		free(init);
		return -ENOMEM;
	}
	for (size_t i = 0; i < h->pol->nmounts_ro; i++)
		h->mnt[i].src = h->mnt[i].dst = h->pol->mounts_ro[i];

	memset(&req, 0, sizeof req);
	req.id = id;
	req.workspace = h->ws;
	req.init_path = init;
	req.cmd = cmd;
	req.ro_binds = h->pol->nmounts_ro > 0 ? h->mnt : NULL;
	req.nro_binds = (int)h->pol->nmounts_ro;
	req.limits = &h->pol->limits;
	rc = attach(h, &req, err, errsz);
	free(init);
	req.init_path = NULL;
	if (rc < 0)
		return rc;
	if ((rc = sbx_policy_env(h->pol, environ, &h->env)) < 0) {
		snprintf(err, errsz, "environment: %s", sbx_strerror(rc));
		return rc;
	}
	req.env = h->env;
	if ((rc = h->ad->enter(h->run, &req, plan)) < 0) {
		snprintf(err, errsz, "sandbox plan: %s", sbx_strerror(rc));
		return rc;
	}
	/*
	 * The proxy's socket lives in the holder's private runtime tmpfs,
	 * so no other lease (each has its own) can even see it.
	 */
	if (h->egress && ((mkdir(EGRESS_DIR, 0755) < 0 && errno != EEXIST) ||
	    (rc = sbx_egress_plan_add(*plan, EGRESS_SOCK,
	    h->pol->loopback_port)) < 0)) {
		if (rc == 0)
			rc = -errno;
		snprintf(err, errsz, "egress plan: %s", sbx_strerror(rc));
		return rc;
	}
	if (h->gw != NULL && ((mkdir(EGRESS_DIR, 0755) < 0 &&
	    errno != EEXIST) || (rc = tui_holder_gw_plan(h->gw, *plan)) < 0)) {
		if (rc == 0)
			rc = -errno;
		snprintf(err, errsz, "model gateway plan: %s",
		    sbx_strerror(rc));
		return rc;
	}
	if (h->cred != NULL && h->gw == NULL &&
	    (rc = sbx_cred_plan_add(*plan, h->cred)) < 0) {
		snprintf(err, errsz, "credential plan: %s", sbx_strerror(rc));
		return rc;
	}
	if (h->agent != NULL && (rc = agent_plan(h, *plan, err, errsz)) < 0)
		return rc;
	if ((rc = sbx_plan_open_data(*plan)) < 0) {
		snprintf(err, errsz, "sandbox plan: %s", sbx_strerror(rc));
		return rc;
	}
	receipt(h, "sandbox", json_pack("{s:s, s:s, s:i, s:s, s:s}",
	    "adapter", "bwrap", "sandbox_id", h->info.sandbox_id, "uid",
	    (int)h->info.uid, "workspace", h->ws, "init_sha256",
	    h->info.init_sha256));
	return 0;
}

size_t
tui_holder_sbx_output_cap(const struct tui_holder_sbx *h)
{
	return h->pol->limits.output > 0 ? (size_t)h->pol->limits.output : 0;
}

/* ---- limits ---------------------------------------------------------------- */

/* The sandbox's usage figures into the receipt fields j. */
static void
add_usage(struct tui_holder_sbx *h, json_t *j)
{
	struct sbx_usage f;

	if (j == NULL || h->ad->usage(h->run, &f) < 0)
		return;
	json_object_set_new(j, "mem_max_usage",
	    json_integer((json_int_t)f.mem_max_usage));
	json_object_set_new(j, "oom_kills",
	    json_integer((json_int_t)f.oom_kills));
	json_object_set_new(j, "pids_max_hits",
	    json_integer((json_int_t)f.pids_max));
	json_object_set_new(j, "cpu_usage_ns",
	    json_integer((json_int_t)f.cpu_usage_ns));
	json_object_set_new(j, "cpu_throttled",
	    json_integer((json_int_t)f.cpu_throttled));
}

/* End the lease for a limit: record it, then kill everything it runs. */
static void
hit(struct tui_holder_sbx *h, const char *limit, const char *detail)
{
	json_t *j;
	int rc;

	if (h->limit != NULL)
		return;
	h->limit = limit;
	j = json_pack("{s:s, s:s}", "limit", limit, "detail", detail);
	add_usage(h, j);
	receipt(h, strcmp(limit, "hermeticity_violation") == 0 ?
	    "hermeticity_violation" : "limit_hit", j);
	/* At once, the agent included: it exits. */
	if ((rc = h->ad->stop(h->run, LIMIT_KILL_MS)) < 0)
		fprintf(stderr, "corral holder %s: limit kill: %s\n", h->id,
		    strerror(-rc));
}

static void
wall_cb(uv_timer_t *t)
{
	struct tui_holder_sbx *h = t->data;
	char d[64];

	snprintf(d, sizeof d, "wall time %llu s",
	    h->pol->limits.wall_time);
	hit(h, "wall_time", d);
}

static void
monitor_cb(uv_timer_t *t)
{
	struct tui_holder_sbx *h = t->data;
	const struct sbx_limits *l = &h->pol->limits;
	struct sbx_usage f;
	struct statvfs vfs;
	const char *why;
	char d[128];

	if (h->limit != NULL)
		return;
	if (h->ad->usage(h->run, &f) == 0) {
		/*
		 * A count at pids.max is the limit too; RLIMIT_NPROC is a
		 * backstop above it (sbx_bwrap.c).
		 */
		why = f.limit;
		if (why == NULL && l->pids > 0 && f.pids_current >= l->pids)
			why = "pids";
		if (why != NULL) {
			snprintf(d, sizeof d, "%s limit reached (oom kills "
			    "%llu, forks refused %llu)", why, f.oom_kills,
			    f.pids_max);
			hit(h, why, d);
			return;
		}
		if (l->cpu_time > 0 && f.cpu_usage_ns / 1000000000ull >=
		    l->cpu_time) {
			snprintf(d, sizeof d, "CPU time %llu s",
			    l->cpu_time);
			hit(h, "cpu_time", d);
			return;
		}
	}
	/*
	 * The bounded workspace is full: bytes or inodes (SPEC 8.4). ext4
	 * keeps a few blocks for itself that writes never get, so "full" is
	 * less than 1/256 of it (at least 256 KiB) or 8 inodes left.
	 */
	if (l->disk > 0 && statvfs(h->ws, &vfs) == 0) {
		unsigned long long bsz = vfs.f_frsize ? vfs.f_frsize :
		    vfs.f_bsize;
		unsigned long long left = (unsigned long long)vfs.f_bavail *
		    bsz, total = (unsigned long long)vfs.f_blocks * bsz;
		unsigned long long floor = total / 256 > (256u << 10) ?
		    total / 256 : (256u << 10);
		bool bytes = left < floor, inodes = vfs.f_favail < 8;

		if (bytes || inodes) {
			snprintf(d, sizeof d, "workspace full (%s)", bytes ?
			    "bytes" : "inodes");
			hit(h, "disk", d);
		}
	}
}

/* ---- egress (SPEC 8.2, 8.7) ------------------------------------------------- */

/* Every decision of the proxy: one receipt line; a denial ends the lease. */
static void
egress_event(const struct sbx_proxy_event *e, void *ud)
{
	struct tui_holder_sbx *h = ud;
	bool denied = e->verdict == SBX_PROXY_DENY &&
	    sbx_egress_reason_denies(e->reason);
	/* A destination the profile says it tries on its own: refused
	 * and recorded, never a violation (issue 18). */
	bool background = denied && e->reason == SBX_EGRESS_NOT_ALLOWED &&
	    strcmp(e->method, "CONNECT") == 0 &&
	    agent_background(h, e->target);
	bool record = h->pol->on_egress == SBX_EGRESS_RECORD || background;
	char d[512];
	json_t *j;

	/*
	 * One line per decision up to a cap and at a rate, so a flood of
	 * attempts can neither grow the journal without bound nor keep
	 * every other writer of it waiting (tests/adversarial egress_flood);
	 * egress_summary counts them all. A denial that ends the lease is
	 * always written.
	 */
	if ((!denied || record) && !tui_tally_admit(&h->egress_lines,
	    "egress")) {
		h->egress_unrecorded++;
		h->egress_denied += denied;
		return;
	}
	j = json_pack("{s:s, s:s, s:I, s:s, s:s, s:s, s:i, s:s, s:b}",
	    "verdict", sbx_proxy_verdict_name(e->verdict), "reason",
	    sbx_egress_reason_name(e->reason), "conn", (json_int_t)e->conn,
	    "method", e->method, "target", e->target, "host", e->host,
	    "port", (int)e->port, "address", e->address, "test_override",
	    e->test_override);
	if (j != NULL && e->verdict == SBX_PROXY_CLOSE) {
		json_object_set_new(j, "bytes_up",
		    json_integer((json_int_t)e->bytes_up));
		json_object_set_new(j, "bytes_down",
		    json_integer((json_int_t)e->bytes_down));
		json_object_set_new(j, "ms", json_integer((json_int_t)e->ms));
	}
	if (j != NULL && denied)
		json_object_set_new(j, "action", json_string(background ?
		    "refused (background)" : record ? "recorded" :
		    "lease ended"));
	receipt(h, "egress", j);
	if (!denied)
		return;
	h->egress_denied++;
	if (record)
		return;
	snprintf(d, sizeof d, "egress outside the allowlist: %s %s (%s)",
	    e->method, e->target, sbx_egress_reason_name(e->reason));
	hit(h, "hermeticity_violation", d);
}

static void
egress_inflight(unsigned n, void *ud)
{
	struct tui_holder_sbx *h = ud;

	h->px_inflight = n;
	if (h->ph != NULL)
		pty_holder_egress(h->ph, h->px_inflight + h->gw_inflight);
}

/* ---- the model gateway (SPEC 8.5) ------------------------------------------- */

/* A model_request's receipt moves the lease row's usage with it. */
static void
gw_receipt(void *ud, const char *kind, json_t *fields,
    const struct lease_usage *add)
{
	struct tui_holder_sbx *h = ud;

	if (add == NULL || fields == NULL) {
		receipt(h, kind, fields);
	} else if (h->jq != NULL) {
		TUI_BEST_EFFORT(tui_holder_journal_receipt_usage(h->jq, kind,
		    fields, add));
	} else {
		if (h->ctx->store != NULL && lease_receipt_append_usage(
		    h->ctx->store, h->id, kind, fields, add, NULL) < 0)
			fprintf(stderr, "corral holder %s: receipt: %s\n", h->id,
			    lease_store_errmsg(h->ctx->store));
		json_decref(fields);
	}
}

/* A model request in flight is the detector's EGRESS signal, exactly. */
static void
gw_inflight(unsigned n, const char *stop, void *ud)
{
	struct tui_holder_sbx *h = ud;

	h->gw_inflight = n;
	if (h->ph != NULL)
		pty_holder_egress(h->ph, h->px_inflight + h->gw_inflight);
	/* ... and how the model's turn ended, once none is in flight. */
	if (h->ph != NULL && n == 0 && stop != NULL)
		pty_holder_gateway_stop(h->ph, stop);
}

/* The gateway holds the lease's model requests: the operator decides. */
static void
gw_hold(const char *reason, void *ud)
{
	struct tui_holder_sbx *h = ud;

	if (h->ph != NULL)
		pty_holder_gateway_held(h->ph, reason);
}

static int
egress_start(struct tui_holder_sbx *h, char *err, size_t errsz)
{
	struct sbx_proxy_opts o;
	json_t *allow;
	int rc;

	if ((h->allow = calloc(h->pol->nnet_allow + 1, sizeof *h->allow)) ==
	    NULL)
		return -ENOMEM;
	for (size_t i = 0; i < h->pol->nnet_allow; i++)
		h->allow[i] = h->pol->net_allow[i];
	/* The test override comes from the environment only, never a
	 * policy, and shows in the receipt (and in `corral doctor`). */
	h->test_hosts = sbx_proxy_test_env();
	memset(&o, 0, sizeof o);
	o.sock_path = EGRESS_SOCK;
	o.uid = h->info.uid;
	o.gid = h->info.gid;
	o.allow = h->allow;
	o.loopback_port = h->pol->loopback_port;
	o.loopback_name = o.loopback_port != 0 ? "localhost" : NULL;
	o.test_hosts = h->test_hosts;
	o.event = egress_event;
	o.inflight = egress_inflight;
	o.ud = h;
	o.redact = tui_holder_sbx_secret(h);
	allow = json_array();
	for (size_t i = 0; allow != NULL && i < h->pol->nnet_allow; i++)
		json_array_append_new(allow, json_string(h->allow[i]));
	if ((rc = sbx_proxy_start(h->loop, &o, &h->px)) < 0) {
		snprintf(err, errsz, "egress proxy: %s", sbx_strerror(rc));
		json_decref(allow);
		h->px = NULL;
		return rc;
	}
	receipt(h, "egress_proxy", json_pack("{s:s, s:o?, s:i, s:s, s:s?}",
	    "socket", SBX_EGRESS_SOCK, "allow", allow, "loopback_port",
	    (int)h->pol->loopback_port, "on_egress_violation",
	    h->pol->on_egress == SBX_EGRESS_RECORD ? "record" : "fail",
	    "test_override", h->test_hosts));
	return 0;
}

static void
egress_closed(void *ud)
{
	struct tui_holder_sbx *h = ud;

	h->px = NULL;
	h->px_closed = true;
}

void
tui_holder_sbx_running(struct tui_holder_sbx *h, struct pty_holder *ph)
{
	if (h != NULL)
		h->ph = ph;
}

void
tui_holder_sbx_summary(struct tui_holder_sbx *h)
{
	struct sbx_proxy_stats st;

	if (h == NULL || h->px == NULL || h->px_closing || h->summarised)
		return;
	h->summarised = true;
	sbx_proxy_stats(h->px, &st);
	receipt(h, "egress_summary", json_pack("{s:I, s:I, s:I, s:I, s:I}",
	    "connections", (json_int_t)st.total, "allowed",
	    (json_int_t)st.allowed, "denied", (json_int_t)st.denied, "bytes",
	    (json_int_t)st.bytes, "unrecorded",
	    (json_int_t)h->egress_unrecorded));
}

void
tui_holder_sbx_closing(struct tui_holder_sbx *h)
{
	if (h == NULL)
		return;
	h->ph = NULL;
	tui_holder_gw_close(h->gw);
	if (h->px != NULL && !h->px_closing) {
		tui_holder_sbx_summary(h);
		h->px_closing = true;
		sbx_proxy_close(h->px, egress_closed, h);
	}
	if (h->timers && !uv_is_closing((uv_handle_t *)&h->wall)) {
		uv_close((uv_handle_t *)&h->wall, NULL);
		uv_close((uv_handle_t *)&h->monitor, NULL);
		uv_close((uv_handle_t *)&h->enter, NULL);
	}
	/* An initial prompt whose Enter was still to come. */
	if (h->prompt_sent && !uv_is_closing((uv_handle_t *)&h->pipe))
		uv_close((uv_handle_t *)&h->pipe, pipe_closed);
}

void
tui_holder_sbx_drain(struct tui_holder_sbx *h, uv_loop_t *loop)
{
	if (h == NULL)
		return;
	tui_holder_sbx_closing(h);
	while (((h->px_closing && !h->px_closed) ||
	    !tui_holder_gw_closed(h->gw)) && uv_run(loop, UV_RUN_ONCE) != 0)
		;
	uv_run(loop, UV_RUN_NOWAIT);
}

int
tui_holder_sbx_signal(struct tui_holder_sbx *h, int sig)
{
	/* Spares the sandbox's own processes: the agent exits on its own. */
	return h->ad->signal(h->run, sig);
}

int
tui_holder_sbx_start(struct tui_holder_sbx *h, uv_loop_t *loop, char *err,
    size_t errsz)
{
	int rc;

	h->loop = loop;
	uv_timer_init(loop, &h->wall);
	uv_timer_init(loop, &h->monitor);
	uv_timer_init(loop, &h->enter);
	h->wall.data = h->monitor.data = h->enter.data = h;
	h->timers = true;
	if (h->pol->limits.wall_time > 0)
		uv_timer_start(&h->wall, wall_cb,
		    h->pol->limits.wall_time * 1000ull, 0);
	uv_timer_start(&h->monitor, monitor_cb, MONITOR_MS, MONITOR_MS);
	if (h->gw != NULL && (rc = tui_holder_gw_start(h->gw, loop,
	    h->info.uid, h->info.gid, gw_receipt, gw_inflight, gw_hold, h,
	    err, errsz)) < 0)
		return rc;
	return h->egress ? egress_start(h, err, errsz) : 0;
}

void
tui_holder_sbx_event(struct tui_holder_sbx *h, const char *kind,
    const char *detail)
{
	/* The holder stops keeping output past the cap: end the lease. */
	if (strcmp(kind, "transcript") == 0 &&
	    strstr(detail, "truncated at") != NULL)
		hit(h, "output", detail);
}

const char *
tui_holder_sbx_exit_reason(struct tui_holder_sbx *h, int wstatus)
{
	static const char *const names[] = { "wall_time", "memory", "pids",
		"disk", "output", "cpu_time", "file_size",
		"hermeticity_violation" };
	static const char *const reasons[] = { "limit_wall_time",
		"limit_memory", "limit_pids", "limit_disk", "limit_output",
		"limit_cpu_time", "limit_file_size",
		"hermeticity_violation" };

	int sig = 0;

	/*
	 * An rlimit's signal (RLIMIT_CPU, RLIMIT_FSIZE) that killed the
	 * agent, directly or as bwrap reports it (128 + the signal).
	 */
	if (WIFSIGNALED(wstatus))
		sig = WTERMSIG(wstatus);
	else if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) > 128)
		sig = WEXITSTATUS(wstatus) - 128;
	if (h->limit == NULL && sig == SIGXCPU && h->pol->limits.cpu_time > 0)
		h->limit = "cpu_time";
	if (h->limit == NULL && sig == SIGXFSZ &&
	    h->pol->limits.file_size > 0)
		h->limit = "file_size";
	/* The OOM killer may end the agent before the monitor looks. */
	if (h->limit == NULL && h->timers)
		monitor_cb(&h->monitor);
	if (h->limit == NULL)
		return NULL;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (strcmp(h->limit, names[i]) == 0)
			return reasons[i];
	}
	return "limit";
}

/* ---- the initial prompt ----------------------------------------------------- */

static void
pipe_closed(uv_handle_t *hd)
{
	(void)hd;
}

/* The prompt's connection closes: after its Enter, or on an error. */
static void
prompt_end(struct tui_holder_sbx *h, int status)
{
	if (status < 0)
		fprintf(stderr, "corral holder %s: prompt: %s\n", h->id,
		    uv_strerror(status));
	if (!uv_is_closing((uv_handle_t *)&h->pipe))
		uv_close((uv_handle_t *)&h->pipe, pipe_closed);
}

static void
enter_written(uv_write_t *w, int status)
{
	prompt_end(w->data, status);
}

/* The Enter, PROMPT_ENTER_MS after the paste was written. */
static void
enter_cb(uv_timer_t *t)
{
	struct tui_holder_sbx *h = t->data;
	size_t st;
	uv_buf_t b;

	if (uv_is_closing((uv_handle_t *)&h->pipe))
		return;
	pty_wbuf_reset(&h->wb);
	st = pty_wire_begin(&h->wb, PTY_W_INPUT);
	pty_wbuf_put(&h->wb, "\r", 1);
	pty_wire_end(&h->wb, st);
	b = uv_buf_init((char *)h->wb.buf, (unsigned)h->wb.len);
	h->wr.data = h;
	if (h->wb.oom || uv_write(&h->wr, (uv_stream_t *)&h->pipe, &b, 1,
	    enter_written) < 0)
		uv_close((uv_handle_t *)&h->pipe, pipe_closed);
}

static void
prompt_written(uv_write_t *w, int status)
{
	struct tui_holder_sbx *h = w->data;

	if (status < 0) {
		prompt_end(h, status);
		return;
	}
	if (h->timers && !uv_is_closing((uv_handle_t *)&h->enter))
		uv_timer_start(&h->enter, enter_cb, PROMPT_ENTER_MS, 0);
	else
		enter_cb(&h->enter);
}

static void
prompt_connected(uv_connect_t *cr, int status)
{
	struct tui_holder_sbx *h = cr->data;
	uint8_t hello[5] = { PTY_WIRE_VERSION, 0, 0, 0, PTY_HELLO_CONTROL };
	char hex[SBX_SHA256_HEX];
	size_t st, len = h->prompt_len;
	uv_buf_t b;

	if (status < 0) {
		prompt_end(h, status);
		return;
	}
	/* The text as a paste (bracketed if the agent asked), then
	 * Enter on its own (enter_cb). */
	while (len > 0 && (h->prompt[len - 1] == '\n' ||
	    h->prompt[len - 1] == '\r'))
		len--;
	pty_wbuf_reset(&h->wb);
	st = pty_wire_begin(&h->wb, PTY_W_HELLO);
	pty_wbuf_put(&h->wb, hello, sizeof hello);
	pty_wire_end(&h->wb, st);
	st = pty_wire_begin(&h->wb, PTY_W_PASTE);
	pty_wbuf_put(&h->wb, h->prompt, len);
	pty_wire_end(&h->wb, st);
	if (h->wb.oom) {
		uv_close((uv_handle_t *)&h->pipe, pipe_closed);
		return;
	}
	b = uv_buf_init((char *)h->wb.buf, (unsigned)h->wb.len);
	h->wr.data = h;
	if (uv_write(&h->wr, (uv_stream_t *)&h->pipe, &b, 1,
	    prompt_written) < 0) {
		uv_close((uv_handle_t *)&h->pipe, pipe_closed);
		return;
	}
	TUI_BEST_EFFORT(sbx_sha256_hex(h->prompt, h->prompt_len, hex));
	receipt(h, "prompt_sent", json_pack("{s:s, s:I}", "sha256", hex,
	    "bytes", (json_int_t)h->prompt_len));
}

void
tui_holder_sbx_activity(struct tui_holder_sbx *h, const char *state,
    bool bound)
{
	/*
	 * SPEC 6.7: only once every identity is bound (the holder has
	 * recorded itself) and the agent first waits at its prompt. The
	 * prompt goes in like any client's input: through the socket.
	 */
	if (h->prompt == NULL || h->prompt_sent || !bound || h->loop == NULL ||
	    strcmp(state, "prompt") != 0)
		return;
	h->prompt_sent = true;
	uv_pipe_init(h->loop, &h->pipe, 0);
	h->pipe.data = h;
	h->conn.data = h;
	uv_pipe_connect(&h->conn, &h->pipe, "holder.sock", prompt_connected);
}

/* ---- the end ------------------------------------------------------------------ */

int
tui_holder_sbx_finish(struct tui_holder_sbx *h, struct tui_ctx *c)
{
	char err[512];
	json_t *j;
	int rc;

	if (h == NULL || h->run == NULL)
		return 0;
	j = json_object();
	add_usage(h, j);
	/* Exact ID: the lease's cgroups and uid slot (SPEC 9.2). */
	rc = tui_sandbox_teardown(c, c->store, h->id, err, sizeof err);
	if (j != NULL) {
		json_object_set_new(j, "ok", json_boolean(rc == 0));
		json_object_set_new(j, "error", rc == 0 ? json_null() :
							  json_string(err));
		json_object_set_new(j, "sandbox_id",
		    json_string(h->info.sandbox_id));
	}
	receipt_to(h, c->store, "teardown", j);
	if (rc < 0)
		fprintf(stderr, "corral holder %s: teardown: %s\n", h->id,
		    err);
	/* Nothing of the lease runs any more: the credential goes. */
	cred_revoke(h, c->store);
	return rc;
}

void
tui_holder_sbx_free(struct tui_holder_sbx *h)
{
	if (h == NULL)
		return;
	cred_revoke(h, h->ctx->store);
	tui_holder_gw_free(h->gw);
	sbx_cred_free(h->cred);
	tui_holder_cred_clear(&h->ccfg);
	free(h->allow);
	free(h->dir);
	sbx_policy_free(h->pol);
	if (h->ad != NULL)
		h->ad->detach(h->run);
	free(h->mnt);
	sbx_strv_free(h->env);
	free(h->ws);
	free(h->prompt);
	json_decref(h->agent);
	sbx_strv_free(h->cmd);
	pty_wbuf_free(&h->wb);
	free(h);
}
