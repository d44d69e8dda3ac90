/*
 * cmd_attach.c: `corral attach ID` (SPEC 11): open the console focused on
 * one lease, found by ID or unique name. `corral` with no arguments opens
 * the console on every live lease (tui_cmd_main calls tui_console_run).
 */
#include <stdio.h>

#include "lease/lease.h"
#include "tui/tui_int.h"

static int
attach_exec(struct tui_ctx *c, int argc, char **argv)
{
	struct lease_record rec;
	int rc;

	if (argc != 2 || argv[1][0] == '-')
		return tui_usage(c, "expected: corral attach ID");
	if ((rc = tui_find_lease(c, argv[1], &rec)) != 0)
		return rc;
	rc = tui_console_run(c, rec.id);
	lease_record_clear(&rec);
	return rc;
}

const struct tui_cmd tui_cmd_attach = {
	.name = "attach",
	.usage = "ID",
	.help = "Open the console focused on the lease ID (or its unique "
		"name). Focus moves only\non your keys; Enter or i types into "
		"the focused agent and C-b Esc stops;\nq or C-b d quits and "
		"leaves every agent running. 'corral' alone opens the\n"
		"console on every live lease.",
	.exec = attach_exec,
};
