/*
 * sbx_local.c: the trusted_local adapter (SPEC 3): the owner's own command,
 * on the host, in the owner's environment and directory. No isolation, and
 * labelled so everywhere.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"

static int
local_probe(char *why, size_t whysz)
{
	if (whysz > 0)
		why[0] = '\0';
	return 0;
}

static int
local_plan(const struct sbx_request *req, struct sbx_plan **out)
{
	struct sbx_plan *p;
	int rc = 0;

	if (req->cmd == NULL || req->cmd[0] == NULL)
		return -EINVAL;
	if ((p = sbx_plan_new()) == NULL)
		return -ENOMEM;
	for (size_t i = 0; req->cmd[i] != NULL && rc == 0; i++)
		rc = sbx_plan_arg(p, req->cmd[i]);
	if (rc == 0 && req->cwd != NULL)
		rc = sbx_plan_cwd(p, req->cwd);
	if (rc < 0) {
		sbx_plan_free(p);
		return rc;
	}
	p->inherit_env = true;
	strcpy(p->label, "trusted_local");
	*out = p;
	return 0;
}

/* The owner's own command makes nothing that needs removing. */
static int
local_provision(const struct sbx_request *req, const struct sbx_steps *s,
    struct sbx_provisioned *out, char *err, size_t errsz)
{
	(void)req;
	(void)s;
	if (errsz > 0)
		err[0] = '\0';
	if (out != NULL)
		memset(out, 0, sizeof *out);
	return 0;
}

static int
local_teardown(const struct sbx_request *req, const struct sbx_resource *res,
    size_t n, const struct sbx_steps *s, char *err, size_t errsz)
{
	(void)req;
	(void)res;
	(void)n;
	(void)s;
	if (errsz > 0)
		err[0] = '\0';
	return 0;
}

static int
local_list(const struct sbx_request *req, char ***ids, char *err,
    size_t errsz)
{
	(void)req;
	if (errsz > 0)
		err[0] = '\0';
	if (ids == NULL)
		return -EINVAL;
	*ids = calloc(1, sizeof **ids);
	return *ids != NULL ? 0 : -ENOMEM;
}

const struct sbx_adapter sbx_adapter_local = {
	.name = "trusted_local",
	.isolation = "trusted_local",
	.probe = local_probe,
	.plan = local_plan,
	.provision = local_provision,
	.teardown = local_teardown,
	.list = local_list,
};
