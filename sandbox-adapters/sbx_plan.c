/*
 * sbx_plan.c: exec plans as data (SPEC 8.1). A plan is built by an
 * adapter's pure .plan function and executed by pty/proc.c in the child.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox-adapters/sbx.h"

const char *
sbx_strerror(int code)
{
	switch (code) {
	case SBX_EUNAVAIL:
		return "sandbox adapter not available";
	case SBX_EPOLICY:
		return "refused by policy";
	case SBX_EPROBE:
		return "preflight probe failed";
	default:
		return code < 0 && code > -4096 ? strerror(-code) : "unknown error";
	}
}

struct sbx_plan *
sbx_plan_new(void)
{
	struct sbx_plan *p = calloc(1, sizeof *p);

	if (p == NULL)
		return NULL;
	p->argv = calloc(1, sizeof *p->argv);
	p->envp = calloc(1, sizeof *p->envp);
	if (p->argv == NULL || p->envp == NULL) {
		sbx_plan_free(p);
		return NULL;
	}
	return p;
}

static void
strv_free(char **v)
{
	if (v == NULL)
		return;
	for (char **s = v; *s != NULL; s++)
		free(*s);
	free(v);
}

void
sbx_plan_free(struct sbx_plan *p)
{
	if (p == NULL)
		return;
	strv_free(p->argv);
	strv_free(p->envp);
	free(p->cwd);
	for (int i = 0; i < p->ncgroups; i++)
		free(p->cgroup_procs[i]);
	free(p);
}

static size_t
strv_len(char *const *v)
{
	size_t n = 0;

	while (v != NULL && v[n] != NULL)
		n++;
	return n;
}

static int
strv_push(char ***vp, char *s)
{
	size_t n = strv_len(*vp);
	char **nv;

	if (s == NULL)
		return -ENOMEM;
	nv = realloc(*vp, (n + 2) * sizeof *nv);
	if (nv == NULL) {
		free(s);
		return -ENOMEM;
	}
	nv[n] = s;
	nv[n + 1] = NULL;
	*vp = nv;
	return 0;
}

int
sbx_plan_arg(struct sbx_plan *p, const char *a)
{
	assert(p != NULL && a != NULL);
	return strv_push(&p->argv, strdup(a));
}

int
sbx_plan_env(struct sbx_plan *p, const char *name, const char *value)
{
	char *s;

	assert(p != NULL && name != NULL && value != NULL);
	if (strchr(name, '=') != NULL || *name == '\0')
		return -EINVAL;
	s = malloc(strlen(name) + strlen(value) + 2);
	if (s == NULL)
		return -ENOMEM;
	sprintf(s, "%s=%s", name, value);
	return strv_push(&p->envp, s);
}

int
sbx_plan_cwd(struct sbx_plan *p, const char *cwd)
{
	char *c = strdup(cwd);

	if (c == NULL)
		return -ENOMEM;
	free(p->cwd);
	p->cwd = c;
	return 0;
}

size_t
sbx_plan_argc(const struct sbx_plan *p)
{
	return strv_len(p->argv);
}
