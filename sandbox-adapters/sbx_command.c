/*
 * sbx_command.c: the command adapter (SPEC 8.1, 3): the operator's hook
 * commands provision, exec, teardown and list drive whatever runs the
 * agent -- a remote VM, SSH hosts, an existing cluster engine -- so corral
 * grows past one machine. corral cannot see inside, so its label says
 * `operator-asserted`. The contract is docs/command-adapter.md. .plan is
 * pure (the exec hook on the lease PTY); the other hooks block and run off
 * the loop.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"

#define PROVISION_MS (5ull * 60 * 1000)
#define TEARDOWN_MS (2ull * 60 * 1000)
#define LIST_MS (30ull * 1000)
#define LIST_OUT_MAX (1u << 20)

static bool
set(const char *s)
{
	return s != NULL && *s != '\0';
}

int
sbx_command_check(const struct sbx_command_config *c, char *why,
    size_t whysz)
{
	const char *missing = NULL;

	if (whysz > 0)
		why[0] = '\0';
	if (c == NULL)
		missing = "provision";
	else if (!set(c->provision))
		missing = "provision";
	else if (!set(c->exec))
		missing = "exec";
	else if (!set(c->teardown))
		missing = "teardown";
	else if (!set(c->list))
		missing = "list";
	if (missing != NULL) {
		snprintf(why, whysz, "the command adapter needs [command] %s",
		    missing);
		return SBX_EPOLICY;
	}
	return 0;
}

/* A lease ID a hook may be given or may name: printable, no '/'. */
bool
sbx_command_id_ok(const char *id, size_t n)
{
	if (n == 0 || n > 128 || (n <= 2 && id[0] == '.'))
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)id[i];

		if (c <= 0x20 || c >= 0x7f || c == '/')
			return false;
	}
	return true;
}

static unsigned long long
timeout(const struct sbx_command_config *c, unsigned long long dflt)
{
	return c->timeout_ms ? c->timeout_ms : dflt;
}

static bool
hook_ok(const struct sbx__hook *r)
{
	return !r->timed_out && WIFEXITED(r->status) &&
	    WEXITSTATUS(r->status) == 0;
}

static int
command_plan(const struct sbx_request *req, struct sbx_plan **out)
{
	const struct sbx_command_config *c;
	struct sbx_plan *p;
	char *line = NULL;
	int rc = 0;

	if (req == NULL || out == NULL)
		return -EINVAL;
	c = req->command;
	if (sbx_command_check(c, NULL, 0) < 0)
		return SBX_EPOLICY;
	if (req->id == NULL || !sbx_command_id_ok(req->id, strlen(req->id)) ||
	    req->workspace == NULL || req->workspace[0] != '/' ||
	    req->cmd == NULL || req->cmd[0] == NULL)
		return -EINVAL;
	if ((p = sbx_plan_new()) == NULL ||
	    asprintf(&line, "%s \"$@\"", c->exec) < 0) {
		sbx_plan_free(p);
		return -ENOMEM;
	}
	/* /bin/sh -c 'EXEC "$@"' corral-exec ID WORKSPACE -- CMD... */
	rc = sbx_plan_arg(p, "/bin/sh");
	if (rc == 0)
		rc = sbx_plan_arg(p, "-c");
	if (rc == 0)
		rc = sbx_plan_arg(p, line);
	if (rc == 0)
		rc = sbx_plan_arg(p, "corral-exec");
	if (rc == 0)
		rc = sbx_plan_arg(p, req->id);
	if (rc == 0)
		rc = sbx_plan_arg(p, req->workspace);
	if (rc == 0)
		rc = sbx_plan_arg(p, "--");
	for (size_t i = 0; rc == 0 && req->cmd[i] != NULL; i++)
		rc = sbx_plan_arg(p, req->cmd[i]);
	if (rc == 0)
		rc = sbx_plan_cwd(p, "/");
	free(line);
	if (rc < 0) {
		sbx_plan_free(p);
		return rc;
	}
	/*
	 * The hook is the operator's own program on the host: it runs with
	 * corral's environment (it may need the operator's SSH agent or cloud
	 * login) and decides what the remote side gets.
	 */
	p->inherit_env = true;
	snprintf(p->label, sizeof p->label, "%s", SBX_COMMAND_LABEL);
	*out = p;
	return 0;
}

/* Without the operator's hooks there is nothing to probe. */
static int
command_probe(char *why, size_t whysz)
{
	snprintf(why, whysz, "the command adapter needs the operator's "
	    "[command] hooks (sbx_command_probe)");
	return SBX_EUNAVAIL;
}

static int
step(int (*fn)(void *, const char *, const char *), void *ud,
    const char *kind, const char *identity)
{
	return fn != NULL ? fn(ud, kind, identity) : 0;
}

/*
 * The one resource: "command:ID", planned before the provision hook runs
 * and left planned when it fails (the hook may have made part of it:
 * .teardown runs the teardown hook for it all the same).
 */
/*
 * req's hooks, working for req's state directory (cc->scope = req->scope,
 * SPEC 9.2), in *cc; NULL without hooks.
 */
static const struct sbx_command_config *
scoped(const struct sbx_request *req, struct sbx_command_config *cc)
{
	if (req->command == NULL)
		return NULL;
	*cc = *req->command;
	if (req->scope != NULL)
		cc->scope = req->scope;
	return cc;
}

/* "CORRAL_SCOPE=..." for the hooks' environment, or NULL (no scope). */
static const char *
scope_env(const struct sbx_command_config *c, char *buf, size_t sz)
{
	if (c->scope == NULL || strchr(c->scope, '\n') != NULL)
		return NULL;
	snprintf(buf, sz, "CORRAL_SCOPE=%s", c->scope);
	return buf;
}

static int
command_provision(const struct sbx_request *req, const struct sbx_steps *s,
    struct sbx_provisioned *out, char *err, size_t errsz)
{
	static const struct sbx_steps none;
	struct sbx_command_config cc;
	char sid[160];
	int rc;

	if (req == NULL || out == NULL || req->id == NULL)
		return -EINVAL;
	if (s == NULL)
		s = &none;
	memset(out, 0, sizeof *out);
	if ((rc = sbx_command_check(req->command, err, errsz)) < 0)
		return rc;
	snprintf(sid, sizeof sid, SBX_COMMAND_ID_PREFIX "%s", req->id);
	if ((rc = step(s->plan, s->ud, SBX_RES_SANDBOX, sid)) < 0) {
		snprintf(err, errsz, "journal: %s", strerror(-rc));
		return rc;
	}
	scoped(req, &cc);
	if ((rc = sbx_command_provision(&cc, req, out->note,
	    sizeof out->note, err, errsz)) < 0)
		return rc;
	if ((rc = step(s->created, s->ud, SBX_RES_SANDBOX, sid)) < 0) {
		snprintf(err, errsz, "journal: %s", strerror(-rc));
		return rc;
	}
	snprintf(out->sandbox_id, sizeof out->sandbox_id, "%s", sid);
	return 0;
}

static int
command_teardown(const struct sbx_request *req, const struct sbx_resource *res,
    size_t n, const struct sbx_steps *s, char *err, size_t errsz)
{
	static const struct sbx_steps none;
	struct sbx_command_config cc;
	char sid[160];
	int rc, first = 0;

	if (errsz > 0)
		err[0] = '\0';
	if (req == NULL || req->id == NULL)
		return -EINVAL;
	if (s == NULL)
		s = &none;
	snprintf(sid, sizeof sid, SBX_COMMAND_ID_PREFIX "%s", req->id);
	if (res == NULL) {
		/* An orphan: its one sandbox is named by its ID. */
		const struct sbx_resource own = { SBX_RES_SANDBOX, sid };

		return command_teardown(req, &own, 1, s, err, errsz);
	}
	for (size_t i = 0; i < n; i++) {
		if (strcmp(res[i].kind, SBX_RES_SANDBOX) != 0)
			continue;
		/* Exact ID: only the lease's own record is acted on. */
		if (strcmp(res[i].identity, sid) != 0) {
			snprintf(err, errsz, "lease %s: sandbox record '%.64s' "
			    "is not its own; not touched", req->id,
			    res[i].identity);
			rc = -EINVAL;
		} else if ((rc = sbx_command_teardown(scoped(req, &cc),
		    req->id, err, errsz)) == 0 &&
		    (rc = step(s->removed, s->ud, SBX_RES_SANDBOX, sid)) < 0) {
			snprintf(err, errsz, "journal: %s", strerror(-rc));
		}
		if (rc < 0 && first == 0)
			first = rc;
	}
	return first;
}

static int
command_list(const struct sbx_request *req, char ***ids, char *err,
    size_t errsz)
{
	struct sbx_command_config cc;

	if (ids == NULL)
		return -EINVAL;
	*ids = NULL;
	if (req == NULL)
		return -EINVAL;
	return sbx_command_list(scoped(req, &cc), ids, err, errsz);
}

const struct sbx_adapter sbx_adapter_command = {
	.name = "command",
	.isolation = "operator-asserted",
	.probe = command_probe,
	.plan = command_plan,
	.provision = command_provision,
	.teardown = command_teardown,
	.list = command_list,
};

int
sbx_command_provision(const struct sbx_command_config *c,
    const struct sbx_request *req, char *note, size_t notesz, char *why,
    size_t whysz)
{
	char eid[192], ews[4200], edir[4200], esc[4200];
	const char *extra[5], *args[4];
	struct sbx__hook r;
	size_t n;
	int rc;

	if (notesz > 0)
		note[0] = '\0';
	if ((rc = sbx_command_check(c, why, whysz)) < 0)
		return rc;
	if (req == NULL || req->id == NULL ||
	    !sbx_command_id_ok(req->id, strlen(req->id)) ||
	    req->workspace == NULL || req->workspace[0] != '/')
		return -EINVAL;
	snprintf(eid, sizeof eid, "CORRAL_LEASE_ID=%s", req->id);
	snprintf(ews, sizeof ews, "CORRAL_WORKSPACE=%s", req->workspace);
	snprintf(edir, sizeof edir, "CORRAL_LEASE_DIR=%s",
	    req->lease_dir ? req->lease_dir : "");
	extra[0] = eid;
	extra[1] = ews;
	extra[2] = edir;
	extra[3] = scope_env(c, esc, sizeof esc);
	extra[4] = NULL;
	args[0] = "corral-provision";
	args[1] = req->id;
	args[2] = req->workspace;
	args[3] = NULL;
	if ((rc = sbx__hook_run(c->provision, args, extra, NULL, 0,
	    timeout(c, PROVISION_MS), 4096, &r)) < 0) {
		snprintf(why, whysz, "provision hook: %s", strerror(-rc));
		return rc;
	}
	if (!hook_ok(&r)) {
		sbx__hook_why(why, whysz, "provision", &r, NULL);
		sbx__hook_clear(&r);
		return SBX_EPROBE;
	}
	/* Its first line, printable, is the note for the receipt. */
	n = strcspn(r.out, "\n");
	for (size_t i = 0; i < n && i + 1 < notesz; i++) {
		unsigned char ch = (unsigned char)r.out[i];

		note[i] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
		note[i + 1] = '\0';
	}
	sbx__hook_clear(&r);
	return 0;
}

int
sbx_command_teardown(const struct sbx_command_config *c, const char *id,
    char *why, size_t whysz)
{
	const char *extra[3], *args[3];
	struct sbx__hook r;
	char eid[192], esc[4200];
	int rc;

	if ((rc = sbx_command_check(c, why, whysz)) < 0)
		return rc;
	if (id == NULL || !sbx_command_id_ok(id, strlen(id)))
		return -EINVAL;
	snprintf(eid, sizeof eid, "CORRAL_LEASE_ID=%s", id);
	extra[0] = eid;
	extra[1] = scope_env(c, esc, sizeof esc);
	extra[2] = NULL;
	args[0] = "corral-teardown";
	args[1] = id;
	args[2] = NULL;
	if ((rc = sbx__hook_run(c->teardown, args, extra, NULL, 0,
	    timeout(c, TEARDOWN_MS), 4096, &r)) < 0) {
		snprintf(why, whysz, "teardown hook: %s", strerror(-rc));
		return rc;
	}
	rc = 0;
	if (!hook_ok(&r)) {
		sbx__hook_why(why, whysz, "teardown", &r, NULL);
		rc = SBX_EPROBE;
	}
	sbx__hook_clear(&r);
	return rc;
}

int
sbx_command_list(const struct sbx_command_config *c, char ***ids, char *why,
    size_t whysz)
{
	const char *args[] = { "corral-list", NULL }, *extra[2];
	struct sbx__hook r;
	size_t n = 0, k = 0;
	char **v = NULL, *s, *e, esc[4200];
	int rc;

	if (ids == NULL)
		return -EINVAL;
	*ids = NULL;
	if ((rc = sbx_command_check(c, why, whysz)) < 0)
		return rc;
	extra[0] = scope_env(c, esc, sizeof esc);
	extra[1] = NULL;
	if ((rc = sbx__hook_run(c->list, args, extra, NULL, 0,
	    timeout(c, LIST_MS), LIST_OUT_MAX, &r)) < 0) {
		snprintf(why, whysz, "list hook: %s", strerror(-rc));
		return rc;
	}
	if (!hook_ok(&r) || r.out_over) {
		if (r.out_over)
			snprintf(why, whysz, "list hook printed more than %u "
			    "bytes", LIST_OUT_MAX);
		else
			sbx__hook_why(why, whysz, "list", &r, NULL);
		sbx__hook_clear(&r);
		return SBX_EPROBE;
	}
	for (s = r.out; *s != '\0'; s++)
		n += *s == '\n';
	if ((v = calloc(n + 2, sizeof *v)) == NULL) {
		sbx__hook_clear(&r);
		return -ENOMEM;
	}
	/* One ID a line; anything else and nothing is trusted. */
	for (s = r.out; *s != '\0'; s = *e ? e + 1 : e) {
		size_t len;

		e = s + strcspn(s, "\n");
		len = (size_t)(e - s);
		if (len > 0 && s[len - 1] == '\r')
			len--;
		if (len == 0)
			continue;
		if (!sbx_command_id_ok(s, len)) {
			snprintf(why, whysz, "list hook printed a line that is "
			    "not a lease ID");
			rc = SBX_EPROBE;
			break;
		}
		if ((v[k] = strndup(s, len)) == NULL) {
			rc = -ENOMEM;
			break;
		}
		k++;
	}
	sbx__hook_clear(&r);
	if (rc < 0) {
		sbx_strv_free(v);
		return rc;
	}
	*ids = v;
	return 0;
}

int
sbx_command_probe(const struct sbx_command_config *c, char *why,
    size_t whysz)
{
	char **ids = NULL;
	int rc;

	if ((rc = sbx_command_list(c, &ids, why, whysz)) < 0)
		return rc == SBX_EPOLICY ? rc : SBX_EPROBE;
	sbx_strv_free(ids);
	return 0;
}
