/*
 * holder_cmd.c: the holder's side of a command-adapter lease (SPEC 8.1;
 * docs/command-adapter.md): the plan is the operator's exec hook on the
 * lease PTY, with the [command] hooks read from the operator's config;
 * when the agent has ended, the teardown hook runs by exact ID (journaled,
 * with a receipt line) and the result is extracted from the workspace the
 * exec hook put back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lease/lease.h"
#include "sandbox-adapters/sbx.h"
#include "tui/runtime/runtime_int.h"

struct tui_holder_cmd {
	struct tui_config cf;
	struct sbx_command_config cc;
	char *ws;
};

int
tui_holder_cmd_plan(struct tui_ctx *c, const struct sbx_adapter *ad,
    struct sbx_request *req, struct tui_holder_cmd **out,
    struct sbx_plan **plan)
{
	struct tui_holder_cmd *h;
	char err[512];
	int rc;

	*out = NULL;
	if (strcmp(ad->name, "command") != 0)
		return ad->plan(req, plan);
	if ((h = calloc(1, sizeof *h)) == NULL)
		return -ENOMEM;
	if ((rc = tui_sandbox_command_config(&h->cf, &h->cc, err,
	    sizeof err)) < 0) {
		fprintf(stderr, "corral holder %s: %s\n", req->id, err);
		free(h);
		return rc;
	}
	if ((h->ws = lease_path_workspace(c->state_dir, req->id)) == NULL) {
		free(h);
		return -ENOMEM;
	}
	req->command = &h->cc;
	req->workspace = h->ws;
	if ((rc = ad->plan(req, plan)) < 0) {
		tui_holder_cmd_free(h);
		return rc;
	}
	*out = h;
	return 0;
}

void
tui_holder_cmd_finish(struct tui_ctx *c, const char *id, bool ran,
    const char *fail_reason)
{
	char err[600];
	json_t *j;
	int rc;

	if (tui_ctx_store(c) == NULL)
		return;
	rc = tui_sandbox_teardown(c, c->store, id, err, sizeof err);
	j = json_pack("{s:s, s:b, s:o}", "adapter", "command", "ok", rc == 0,
	    "error", rc == 0 ? json_null() : json_string(err));
	if (j != NULL && lease_receipt_append(c->store, id, "teardown", j,
	    NULL) < 0)
		fprintf(stderr, "corral holder %s: receipt: %s\n", id,
		    lease_store_errmsg(c->store));
	json_decref(j);
	if (rc < 0) {
		fprintf(stderr, "corral holder %s: teardown: %s\n", id, err);
		return;
	}
	if (!ran)
		return;
	rc = tui_checks_finish(c, id, fail_reason, NULL, NULL);
	/* Quarantined (LEASE_EINVALID) is an outcome, not an error. */
	if (rc < 0 && rc != LEASE_EINVALID)
		fprintf(stderr, "corral holder %s: result: %s\n", id,
		    lease_store_errmsg(c->store));
}

void
tui_holder_cmd_free(struct tui_holder_cmd *h)
{
	if (h == NULL)
		return;
	free(h->ws);
	free(h);
}
