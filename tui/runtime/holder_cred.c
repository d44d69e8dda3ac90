/*
 * holder_cred.c: the operator's credential hooks (SPEC 8.5) for sandboxed
 * leases: the [credentials] section of $XDG_CONFIG_HOME/corral/
 * credentials.ini (operator-only: never from a repository or a policy), and
 * the revoke that reconciliation runs for every lease whose holder is gone
 * and whose directory still holds a minted credential.
 */
#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lease/lease.h"
#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"
#include "tui/runtime/runtime_int.h"

struct cparse {
	struct tui_holder_cred_cfg *c;
	char *err;
	size_t errsz;
	bool bad;
};

static int
set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = strdup(v);
	return *dst != NULL ? 0 : -ENOMEM;
}

static int
parse_secs(const char *v, unsigned long long *out)
{
	char *e;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &e, 10);
	if (errno != 0 || e == v || v[0] == '-' || (*e != '\0' &&
	    strcmp(e, "s") != 0))
		return -EINVAL;
	*out = n;
	return 0;
}

static int
handler(void *user, const char *section, const char *name, const char *value)
{
	struct cparse *ps = user;
	struct tui_holder_cred_cfg *c = ps->c;
	int rc = 0;

	if (ps->bad)
		return 1;
	if (strcmp(section, "credentials") != 0) {
		snprintf(ps->err, ps->errsz, "unknown section [%.64s] (want "
		    "[credentials])", section);
		ps->bad = true;
		return 1;
	}
	if (strcmp(name, "mint") == 0)
		rc = set_str(&c->mint, value);
	else if (strcmp(name, "revoke") == 0)
		rc = set_str(&c->revoke, value);
	else if (strcmp(name, "variable") == 0)
		rc = set_str(&c->variable, value);
	else if (strcmp(name, "scope") == 0)
		rc = set_str(&c->scope, value);
	else if (strcmp(name, "spend_cap") == 0)
		rc = set_str(&c->spend_cap, value);
	else if (strcmp(name, "lifetime") == 0)
		rc = parse_secs(value, &c->cfg.lifetime_s);
	else if (strcmp(name, "timeout") == 0 &&
	    (rc = parse_secs(value, &c->cfg.timeout_ms)) == 0)
		c->cfg.timeout_ms *= 1000ull;
	else if (strcmp(name, "timeout") != 0)
		rc = -ENOENT;
	if (rc < 0) {
		snprintf(ps->err, ps->errsz, rc == -ENOENT ? "unknown key "
		    "'%.64s' (want mint, revoke, variable, scope, spend_cap, "
		    "lifetime or timeout)" : "bad value for '%.64s'", name);
		ps->bad = true;
	}
	return 1;
}

int
tui_holder_cred_path(char *buf, size_t bufsz)
{
	return tui_config_file(TUI_HOLDER_CRED_CONF, buf, bufsz);
}

int
tui_holder_cred_load(struct tui_holder_cred_cfg *c, char *err, size_t errsz)
{
	struct cparse ps = { .c = c, .err = err, .errsz = errsz };
	char path[4096];
	FILE *f;
	int line, rc;

	memset(c, 0, sizeof *c);
	if (tui_holder_cred_path(path, sizeof path) < 0)
		return 0;
	if ((f = fopen(path, "re")) == NULL)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	line = ini_parse_file(f, handler, &ps);
	fclose(f);
	if (line != 0 || ps.bad) {
		if (!ps.bad)
			snprintf(err, errsz, "%s:%d: malformed line", path,
			    line);
		else {
			char m[256];

			snprintf(m, sizeof m, "%s", err);
			snprintf(err, errsz, "%s: %s", path, m);
		}
		tui_holder_cred_clear(c);
		return SBX_EPOLICY;
	}
	c->cfg.mint = c->mint;
	c->cfg.revoke = c->revoke;
	c->cfg.variable = c->variable;
	c->cfg.scope = c->scope;
	c->cfg.spend_cap = c->spend_cap;
	if ((rc = sbx_cred_config_check(&c->cfg, err, errsz)) < 0) {
		tui_holder_cred_clear(c);
		return rc;
	}
	return 0;
}

void
tui_holder_cred_clear(struct tui_holder_cred_cfg *c)
{
	if (c == NULL)
		return;
	free(c->mint);
	free(c->revoke);
	free(c->variable);
	free(c->scope);
	free(c->spend_cap);
	memset(c, 0, sizeof *c);
}

int
tui_holder_cred_revoke(struct tui_ctx *ctx, const char *id, char *err,
    size_t errsz)
{
	struct tui_holder_cred_cfg c;
	char *dir = tui_ctx_lease_dir(ctx, id);
	json_t *j;
	int rc;

	if (dir == NULL)
		return -ENOMEM;
	if (!sbx_cred_present(dir)) {
		free(dir);
		return 0;
	}
	if ((rc = tui_holder_cred_load(&c, err, errsz)) == 0) {
		rc = sbx_cred_revoke(&c.cfg, id, dir, err, errsz);
		tui_holder_cred_clear(&c);
	}
	j = json_pack("{s:b, s:s, s:s?}", "ok", rc == 0, "by", "reconcile",
	    "error", rc == 0 ? NULL : err);
	if (ctx->store != NULL && j != NULL)
		TUI_BEST_EFFORT(lease_receipt_append(ctx->store, id,
		    "credential_revoked", j, NULL));
	json_decref(j);
	free(dir);
	return rc;
}

void
tui_holder_cred_reconcile(struct tui_ctx *ctx)
{
	struct lease_record *v = NULL;
	char err[512];
	size_t n = 0;

	if (ctx->store == NULL ||
	    lease_record_list(ctx->store, LEASE_LIST_ALL, &v, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct lease_record *r = &v[i];

		/* A live holder revokes its own at its end. */
		if (r->mode != LEASE_MODE_SANDBOXED || (r->holder_pid > 0 &&
		    lease_proc_alive((pid_t)r->holder_pid, r->holder_start)))
			continue;
		if (tui_holder_cred_revoke(ctx, r->id, err, sizeof err) < 0)
			fprintf(stderr, "corral reconcile: %s: credential "
			    "revoke: %s\n", r->id, err);
	}
	lease_record_list_free(v, n);
}
