/*
 * ignore.c: the gitignore engine of extraction (SPEC 7.1): patterns parsed
 * into a stack of rules, each bound to the directory whose .gitignore (or
 * the policy) gave it, matched last rule first with lease_gate_glob. Pure:
 * the walk in extract.c reads the .gitignore blobs and pushes and pops.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lease/result/result_int.h"

#define IGNORE_RULES_MAX 10000

static int
rules_push(struct lease__ignore *rs, const char *pat, size_t n, size_t base)
{
	struct lease__ignore_rule r, *nv;

	memset(&r, 0, sizeof r);
	r.base = base;
	if (n > 0 && pat[0] == '!') {
		r.neg = true;
		pat++;
		n--;
	} else if (n > 1 && pat[0] == '\\' && (pat[1] == '!' ||
	    pat[1] == '#')) {
		pat++;
		n--;
	}
	if (n > 0 && pat[n - 1] == '/') {
		r.dir_only = true;
		n--;
	}
	if (n == 0)
		return 0;
	r.anchored = memchr(pat, '/', n) != NULL;
	if (pat[0] == '/') {
		pat++;
		n--;
	}
	if (n == 0 || rs->n >= IGNORE_RULES_MAX)
		return 0;
	if (rs->n == rs->cap) {
		size_t ncap = rs->cap ? rs->cap * 2 : 16;

		if ((nv = realloc(rs->v, ncap * sizeof *nv)) == NULL)
			return -ENOMEM;
		rs->v = nv;
		rs->cap = ncap;
	}
	if ((r.pat = strndup(pat, n)) == NULL)
		return -ENOMEM;
	rs->v[rs->n++] = r;
	return 0;
}

int
lease__ignore_parse(struct lease__ignore *rs, const char *text, size_t len,
    size_t base)
{
	const char *line = text, *end = text + len, *nl;
	size_t n;
	int rc;

	while (line < end) {
		nl = memchr(line, '\n', (size_t)(end - line));
		n = nl != NULL ? (size_t)(nl - line) : (size_t)(end - line);
		if (n > 0 && line[n - 1] == '\r')
			n--;
		/* trailing blanks go unless escaped */
		while (n > 0 && line[n - 1] == ' ' &&
		    !(n > 1 && line[n - 2] == '\\'))
			n--;
		if (n > 0 && line[0] != '#' && memchr(line, '\0', n) == NULL &&
		    (rc = rules_push(rs, line, n, base)) < 0)
			return rc;
		line = nl != NULL ? nl + 1 : end;
	}
	return 0;
}

void
lease__ignore_pop(struct lease__ignore *rs, size_t to)
{
	while (rs->n > to)
		free(rs->v[--rs->n].pat);
}

void
lease__ignore_free(struct lease__ignore *rs)
{
	lease__ignore_pop(rs, 0);
	free(rs->v);
}

int
lease__ignore_match(const struct lease__ignore *rs, const char *rel,
    bool isdir)
{
	const struct lease__ignore_rule *r;
	const char *sub, *base;
	size_t i;

	for (i = rs->n; i-- > 0;) {
		r = &rs->v[i];
		if (r->dir_only && !isdir)
			continue;
		sub = rel + r->base;
		if (r->anchored) {
			if (!lease_gate_glob(r->pat, sub))
				continue;
		} else {
			base = strrchr(sub, '/');
			if (!lease_gate_glob(r->pat, base ? base + 1 : sub))
				continue;
		}
		return r->neg ? 0 : 1;
	}
	return -1;
}
