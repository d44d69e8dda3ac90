/*
 * sbx_policy_narrow.c: a repository's policy may only narrow the
 * operator's (SPEC 8.6): it is parsed over the operator's, then compared
 * key by key; the first key where it is wider is refused, with the file
 * and line that set it. Pure.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"

static int
key_index(const char *section, const char *name)
{
	size_t nkeys;
	const struct sbx__policy_key *keys = sbx__policy_keys(&nkeys);

	for (size_t i = 0; i < nkeys; i++) {
		if (strcmp(keys[i].section, section) == 0 &&
		    strcmp(keys[i].name, name) == 0)
			return (int)i;
	}
	assert(0);
	return 0;
}

/* Does op's allowlist cover host:port item (exactly or by "*")? */
static bool
net_covered(const struct sbx_policy *op, const char *item)
{
	const char *colon = strrchr(item, ':');
	char any[16];

	if (sbx__policy_vec_has(op->net_allow, op->nnet_allow, item) ||
	    sbx__policy_vec_has(op->net_allow, op->nnet_allow, "*:*"))
		return true;
	snprintf(any, sizeof any, "*%s", colon != NULL ? colon : "");
	return strlen(colon != NULL ? colon : "") < 8 &&
	    strcmp(item, "*:*") != 0 && sbx__policy_vec_has(op->net_allow,
	    op->nnet_allow, any);
}

/*
 * The first key where p is wider than op: its index (KEY_CHECKS for a
 * check, *check its name), with err->msg said; -1 when p is within op.
 */
static int
first_wider(const struct sbx_policy *op, const struct sbx_policy *p,
    struct sbx_policy_error *err, const char **check)
{
	const char *base_op = (const char *)op, *base_p = (const char *)p;
	size_t nkeys;
	const struct sbx__policy_key *keys = sbx__policy_keys(&nkeys);

	*check = NULL;
	for (size_t i = 0; i < p->nnet_allow; i++) {
		if (!net_covered(op, p->net_allow[i])) {
			sbx__policy_errf(err, NULL, 0, "[network] allow: '%s' is not "
			    "in the operator's allowlist", p->net_allow[i]);
			return key_index("network", "allow");
		}
	}
	if (p->on_egress == SBX_EGRESS_RECORD &&
	    op->on_egress == SBX_EGRESS_FAIL) {
		sbx__policy_errf(err, NULL, 0, "[network] on_egress_violation: record "
		    "is wider than the operator's fail");
		return key_index("network", "on_egress_violation");
	}
	if (p->loopback_port != 0 && p->loopback_port != op->loopback_port) {
		sbx__policy_errf(err, NULL, 0, "[network] loopback_port: %u is not the "
		    "operator's (%u)", p->loopback_port, op->loopback_port);
		return key_index("network", "loopback_port");
	}
	for (size_t i = 0; i < nkeys; i++) {
		const struct sbx__policy_key *k = &keys[i];
		unsigned long long a, b;
		bool x, y;

		if (k->off == 0)
			continue;
		if (k->type == SBX_PK_RELDIR) {
			const char *so = base_op + k->off;
			const char *sp = base_p + k->off;

			if (sp[0] != '\0' && strcmp(so, sp) != 0) {
				sbx__policy_errf(err, NULL, 0, "[%s] %s: '%s' is not "
				    "the operator's ('%s')", k->section,
				    k->name, sp, so);
				return (int)i;
			}
			continue;
		}
		if (k->type == SBX_PK_USD) {
			/* A cap only narrows: lower, never none (SPEC 8.5). */
			a = *(const unsigned long long *)(base_op + k->off);
			b = *(const unsigned long long *)(base_p + k->off);
			if (a != 0 && (b == 0 || b > a)) {
				char sa[32], sb[32];

				sbx_policy_usd(a, sa, sizeof sa);
				sbx_policy_usd(b, sb, sizeof sb);
				sbx__policy_errf(err, NULL, 0, "[%s] %s: %s is "
				    "wider than the operator's %s USD",
				    k->section, k->name, b == 0 ? "none" : sb,
				    sa);
				return (int)i;
			}
			continue;
		}
		if (k->type == SBX_PK_BOOL) {
			x = *(const bool *)(base_op + k->off);
			y = *(const bool *)(base_p + k->off);
			if (y && !x) {
				sbx__policy_errf(err, NULL, 0, "[%s] %s: true is wider "
				    "than the operator's false", k->section,
				    k->name);
				return (int)i;
			}
			continue;
		}
		a = *(const unsigned long long *)(base_op + k->off);
		b = *(const unsigned long long *)(base_p + k->off);
		if (b > a) {
			sbx__policy_errf(err, NULL, 0, "[%s] %s: %llu is above the "
			    "operator's %llu", k->section, k->name, b, a);
			return (int)i;
		}
	}
	for (size_t i = 0; i < p->nenv_allow; i++) {
		if (!sbx__policy_vec_has(op->env_allow, op->nenv_allow, p->env_allow[i])) {
			sbx__policy_errf(err, NULL, 0, "[env] allow: '%s' is not in "
			    "the operator's allowlist", p->env_allow[i]);
			return key_index("env", "allow");
		}
	}
	for (size_t i = 0; i < p->nmounts_ro; i++) {
		if (!sbx__policy_vec_has(op->mounts_ro, op->nmounts_ro, p->mounts_ro[i])) {
			sbx__policy_errf(err, NULL, 0, "[mounts] ro: '%s' is not one "
			    "of the operator's mounts", p->mounts_ro[i]);
			return key_index("mounts", "ro");
		}
	}
	/* Every check of the operator's stays, unchanged. */
	for (size_t i = 0; i < op->nchecks; i++) {
		bool same = false;

		for (size_t j = 0; j < p->nchecks; j++) {
			if (strcmp(op->checks[i].name, p->checks[j].name) == 0)
				same = strcmp(op->checks[i].cmd,
				    p->checks[j].cmd) == 0;
		}
		if (!same) {
			sbx__policy_errf(err, NULL, 0, "[checks] %s: the operator's "
			    "check may not be changed or removed",
			    op->checks[i].name);
			*check = op->checks[i].name;
			return (int)nkeys;
		}
	}
	return -1;
}

int
sbx_policy_within(const struct sbx_policy *op, const struct sbx_policy *p,
    struct sbx_policy_error *err)
{
	const char *check;

	if (op == NULL || p == NULL)
		return -EINVAL;
	if (err != NULL)
		memset(err, 0, sizeof *err);
	return first_wider(op, p, err, &check) < 0 ? 0 : SBX_EWIDER;
}

int
sbx_policy_narrow(const struct sbx_policy *op, const char *text,
    const char *name, struct sbx_policy **out, struct sbx_policy_error *err)
{
	struct sbx_policy_error tmp;
	struct sbx__policy_parse *c = NULL;
	struct sbx_policy *p;
	const char *check;
	int rc, k;

	if (out != NULL)
		*out = NULL;
	if (op == NULL || text == NULL || out == NULL)
		return -EINVAL;
	if (err == NULL)
		err = &tmp;
	memset(err, 0, sizeof *err);
	if ((p = sbx_policy_dup(op)) == NULL)
		return -ENOMEM;
	if ((rc = sbx__policy_parse(p, text, name, err, &c)) < 0)
		goto out;
	if ((k = first_wider(op, p, err, &check)) >= 0) {
		snprintf(err->file, sizeof err->file, "%s", name != NULL ?
		    name : "policy");
		err->line = sbx__policy_parse_line(c, (size_t)k, check);
		rc = SBX_EWIDER;
	}
out:
	sbx__policy_parse_free(c);
	if (rc < 0) {
		sbx_policy_free(p);
		return rc;
	}
	*out = p;
	return 0;
}
