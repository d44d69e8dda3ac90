/*
 * sbx_local.c: the trusted_local adapter (SPEC 3): the owner's own command,
 * on the host, in the owner's environment and directory. No isolation, and
 * labelled so everywhere.
 */
#include <errno.h>
#include <string.h>

#include "sandbox-adapters/sbx.h"

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

const struct sbx_adapter sbx_adapter_local = {
	.name = "trusted_local",
	.isolation = "trusted_local",
	.probe = local_probe,
	.plan = local_plan,
};
