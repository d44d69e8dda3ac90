/*
 * sbx_policy_canon.c: the canonical text of a policy (sorted, normalised,
 * every key spelled out) and its SHA-256, which receipts record (SPEC 8.6,
 * 8.7). Pure.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"

struct sbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void
sb_add(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p != NULL ? b->p + b->len : NULL,
		    b->p != NULL ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if (b->p != NULL && b->len + (size_t)n < b->cap) {
			b->len += (size_t)n;
			return;
		}
		{
			size_t cap = (b->cap + (size_t)n + 1) * 2;
			char *np = realloc(b->p, cap);

			if (np == NULL) {
				b->oom = true;
				return;
			}
			b->p = np;
			b->cap = cap;
		}
	}
}

static void
sb_list(struct sbuf *b, const char *key, char *const *v, size_t n)
{
	sb_add(b, "%s =", key);
	for (size_t i = 0; i < n; i++)
		sb_add(b, "%s%s", i == 0 ? " " : ",", v[i]);
	sb_add(b, "\n");
}

char *
sbx_policy_canonical(const struct sbx_policy *p)
{
	struct sbuf b = { 0 };
	const char *section = "";
	size_t nkeys;
	const struct sbx__policy_key *keys = sbx__policy_keys(&nkeys);

	if (p == NULL)
		return NULL;
	sb_add(&b, "# corral policy, canonical form 1\n[network]\n");
	sb_list(&b, "allow", p->net_allow, p->nnet_allow);
	sb_add(&b, "on_egress_violation = %s\nloopback_port = %u\n",
	    p->on_egress == SBX_EGRESS_RECORD ? "record" : "fail",
	    p->loopback_port);
	for (size_t i = 0; i < nkeys; i++) {
		const struct sbx__policy_key *k = &keys[i];

		if (k->off == 0 || strcmp(k->section, "limits") != 0)
			continue;
		if (strcmp(section, k->section) != 0)
			sb_add(&b, "[%s]\n", section = k->section);
		sb_add(&b, "%s = %llu\n", k->name,
		    *(const unsigned long long *)((const char *)p + k->off));
	}
	sb_add(&b, "[env]\n");
	sb_list(&b, "allow", p->env_allow, p->nenv_allow);
	sb_add(&b, "[mounts]\n");
	sb_list(&b, "ro", p->mounts_ro, p->nmounts_ro);
	sb_add(&b, "[checks]\ntimeout = %llu\n", p->check_timeout);
	for (size_t i = 0; i < p->nchecks; i++)
		sb_add(&b, "%s = %s\n", p->checks[i].name, p->checks[i].cmd);
	sb_add(&b, "[result]\nmax_files = %llu\nmax_file_bytes = %llu\n"
	    "max_total_bytes = %llu\nallow_binary = %s\nallow_symlinks = %s\n",
	    p->max_files, p->max_file_bytes, p->max_total_bytes,
	    p->allow_binary ? "true" : "false",
	    p->allow_symlinks ? "true" : "false");
	if (p->output_dir[0] != '\0')
		sb_add(&b, "output_dir = %s\n", p->output_dir);
	/* only when set: the canonical form of every other policy stays */
	if (p->keep_workspace)
		sb_add(&b, "keep_workspace = true\n");
	if (p->git_history == SBX_HISTORY_ALL)
		sb_add(&b, "[git]\nhistory = all\n");
	else
		sb_add(&b, "[git]\nhistory = %llu\n", p->git_history);
	if (p->spend_cap != 0) {
		char usd[32];

		sbx_policy_usd(p->spend_cap, usd, sizeof usd);
		sb_add(&b, "[model]\nspend_cap = %s\n", usd);
	}
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

void
sbx_policy_usd(unsigned long long nano, char *buf, size_t bufsz)
{
	char frac[16];
	size_t n;

	/* Exact: every decimal the parse kept, none more. */
	n = (size_t)snprintf(frac, sizeof frac, "%09llu", nano % 1000000000ull);
	while (n > 2 && frac[n - 1] == '0')
		frac[--n] = '\0';
	snprintf(buf, bufsz, "%llu.%s", nano / 1000000000ull, frac);
}

int
sbx_policy_hash(const struct sbx_policy *p, char hex[SBX_SHA256_HEX])
{
	char *text;
	int rc;

	if (p == NULL || hex == NULL)
		return -EINVAL;
	if ((text = sbx_policy_canonical(p)) == NULL)
		return -ENOMEM;
	rc = sbx_sha256_hex(text, strlen(text), hex);
	free(text);
	return rc;
}
