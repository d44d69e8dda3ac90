/*
 * gate_flags.c: the review flags of a changed path (SPEC 7.2): the flag
 * names, the review-flags rule parser ("FLAG PATTERN" a line, each
 * pattern a case-insensitive glob of the whole path), the shipped rules
 * (policies/review-flags, compiled in) with the operator's file on top
 * ($XDG_CONFIG_HOME/corral/review-flags, read by the runtime), and the
 * match. Pure: the operator's file arrives as text.
 */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease/result/result_int.h"
#include "lease_review_flags.h"

static const char *const flag_names[LEASE_FLAG_COUNT] = {
	"ci", "git_config", "editor", "agent", "shell", "hooks", "build",
	"test", "script", "policy", "check_input", "name_twin",
};

const char *
lease_gate_flag_name(unsigned bit)
{
	unsigned i;

	for (i = 0; i < LEASE_FLAG_COUNT; i++)
		if (bit == 1u << i)
			return flag_names[i];
	return "?";
}

/*
 * The flags a pattern may set: the computed ones (check_input, name_twin)
 * are not patterns.
 */
static unsigned
rule_flag(const char *w, size_t n)
{
	for (unsigned i = 0; i < LEASE_FLAG_COUNT; i++) {
		unsigned bit = 1u << i;

		if (bit == LEASE_FLAG_CHECK || bit == LEASE_FLAG_TWIN)
			continue;
		if (strlen(flag_names[i]) == n && memcmp(flag_names[i], w, n) ==
		    0)
			return bit;
	}
	return 0;
}

/*
 * PATTERN as a glob of the whole folded path: NAME (no '/') is
 * "**" "/NAME"; a trailing '/' adds "**" (below it); a leading '/', or a
 * '/' inside, anchors it at the root. NULL and *why for a bad one.
 */
static char *
rule_glob(const char *w, size_t n, const char **why)
{
	bool dir = w[n - 1] == '/', anchored = w[0] == '/';
	size_t i, k = 0, body;
	const char *b = w + anchored;
	char *g;

	*why = "bad pattern";
	if (n <= (size_t)anchored + (size_t)dir || n > LEASE__GATE_NAME_MAX)
		return NULL;
	body = n - (size_t)anchored - (size_t)dir;
	for (i = 0; i < body; i++) {
		unsigned char c = (unsigned char)b[i];

		if (c < 0x21 || c == 0x7f)
			return NULL;
		if (c == '/') {
			anchored = true;
			if (i + 1 < body && b[i + 1] == '/') {
				*why = "empty component in the pattern";
				return NULL;
			}
		}
	}
	for (i = 0; i <= body; i++) {
		size_t e = i;

		while (e < body && b[e] != '/')
			e++;
		if ((e - i == 1 && b[i] == '.') || (e - i == 2 && b[i] == '.' &&
		    b[i + 1] == '.')) {
			*why = ". or .. in the pattern";
			return NULL;
		}
		i = e;
	}
	if ((g = malloc(body + 8)) == NULL) {
		*why = NULL;
		return NULL;
	}
	if (!anchored) {
		memcpy(g, "**/", 3);
		k = 3;
	}
	for (i = 0; i < body; i++)
		g[k++] = (char)lease__gate_lower((unsigned char)b[i]);
	if (dir) {
		memcpy(g + k, "/**", 3);
		k += 3;
	}
	g[k] = '\0';
	return g;
}

void
lease_gate_rules_free(struct lease_flag_rules *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].glob);
	free(r->v);
	memset(r, 0, sizeof *r);
}

static int
rules_err(struct lease_flag_rules *r, size_t keep, char *err, size_t errsz,
    const char *name, unsigned line, const char *what, const char *w,
    size_t n)
{
	while (r->n > keep)
		free(r->v[--r->n].glob);
	snprintf(err, errsz, "%s:%u: %s%s%.*s%s", name, line, what,
	    n > 0 ? " '" : "", (int)(n > 64 ? 64 : n), w, n > 0 ? "'" : "");
	return -EINVAL;
}

int
lease_gate_rules_parse(struct lease_flag_rules *r, const char *text,
    const char *name, char *err, size_t errsz)
{
	const char *l = text, *why;
	size_t keep = r->n;
	unsigned line = 0;

	assert(r != NULL && text != NULL && name != NULL);
	while (*l != '\0') {
		const char *end = strchr(l, '\n'), *w, *p;
		size_t wn, pn;
		struct lease_flag_rule *nv;
		unsigned flag;
		char *g;

		if (end == NULL)
			end = l + strlen(l);
		line++;
		while (l < end && (*l == ' ' || *l == '\t'))
			l++;
		if (l == end || *l == '#')
			goto next;
		w = l;
		while (l < end && *l != ' ' && *l != '\t')
			l++;
		wn = (size_t)(l - w);
		while (l < end && (*l == ' ' || *l == '\t' || *l == '\r'))
			l++;
		p = l;
		while (l < end && *l != ' ' && *l != '\t' && *l != '\r')
			l++;
		pn = (size_t)(l - p);
		while (l < end && (*l == ' ' || *l == '\t' || *l == '\r'))
			l++;
		if ((flag = rule_flag(w, wn)) == 0)
			return rules_err(r, keep, err, errsz, name, line,
			    "unknown flag (ci, git_config, editor, agent, shell, "
			    "hooks, build, test, script, policy):", w, wn);
		if (pn == 0 || l != end)
			return rules_err(r, keep, err, errsz, name, line,
			    "one pattern a line: FLAG PATTERN", "", 0);
		if (r->n >= LEASE_FLAG_RULES_MAX)
			return rules_err(r, keep, err, errsz, name, line,
			    "more than 10000 patterns", "", 0);
		if ((g = rule_glob(p, pn, &why)) == NULL) {
			if (why == NULL) {
				rules_err(r, keep, err, errsz, name, line,
				    "out of memory", "", 0);
				return -ENOMEM;
			}
			return rules_err(r, keep, err, errsz, name, line, why, p,
			    pn);
		}
		if (r->n == r->cap) {
			size_t ncap = r->cap ? r->cap * 2 : 256;

			if ((nv = realloc(r->v, ncap * sizeof *nv)) == NULL) {
				free(g);
				rules_err(r, keep, err, errsz, name, line,
				    "out of memory", "", 0);
				return -ENOMEM;
			}
			r->v = nv;
			r->cap = ncap;
		}
		r->v[r->n].flag = flag;
		r->v[r->n++].glob = g;
next:
		l = *end == '\n' ? end + 1 : end;
	}
	return 0;
}

unsigned
lease_gate_flags(const char *path, const struct lease_flag_rules *rules,
    const struct lease_check *checks, size_t nchecks)
{
	char f[LEASE__GATE_PATH_MAX + 1];
	unsigned fl = 0;
	size_t i;

	assert(path != NULL);
	for (i = 0; i < nchecks; i++)
		if (lease_gate_check_input(&checks[i], path))
			fl |= LEASE_FLAG_CHECK;
	if (rules == NULL || !lease__gate_fold_path(path, f, sizeof f))
		return fl;
	for (i = 0; i < rules->n; i++)
		if ((fl & rules->v[i].flag) == 0 &&
		    lease_gate_glob(rules->v[i].glob, f))
			fl |= rules->v[i].flag;
	return fl;
}

int
lease_result_flag_rules_load(struct lease_flag_rules *out, const char *text,
    const char *name, char *err, size_t errsz)
{
	int rc;

	memset(out, 0, sizeof *out);
	if ((rc = lease_gate_rules_parse(out, lease_review_flags,
	    "policies/review-flags", err, errsz)) == 0 && text != NULL)
		rc = lease_gate_rules_parse(out, text, name, err, errsz);
	if (rc < 0)
		lease_gate_rules_free(out);
	return rc;
}

const struct lease_flag_rules *
lease_result_flag_rules_shipped(void)
{
	static struct lease_flag_rules shipped;
	static bool done;
	char err[256];
	int rc;

	if (done)
		return &shipped;
	rc = lease_gate_rules_parse(&shipped, lease_review_flags,
	    "policies/review-flags", err, sizeof err);
	/* The shipped file is tested: only memory can fail it. */
	assert(rc == 0 || rc == -ENOMEM);
	if (rc < 0)
		return NULL;
	done = true;
	return &shipped;
}
