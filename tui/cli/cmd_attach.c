/*
 * cmd_attach.c: `corral attach ID` (SPEC 11): open the console focused on
 * one lease, found by ID or unique name. `corral` with no arguments opens
 * the console on every live lease (tui_cmd_main calls tui_app_run).
 */
#include <stdio.h>
#include <string.h>

#include "lease/lease.h"
#include "tui/cli/cli.h"
#include "tui/console/console.h"

/*
 * The console's options from argv[1..]: --theme NAME (or --theme=NAME);
 * the first other word goes to *id. Returns 0 or a usage error.
 */
static int
console_opts(struct tui_ctx *c, int argc, char **argv,
    struct tui_console_opts *o, const char **id)
{
	memset(o, 0, sizeof *o);
	*id = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--theme") == 0 && i + 1 < argc)
			o->theme = argv[++i];
		else if (strncmp(argv[i], "--theme=", 8) == 0)
			o->theme = argv[i] + 8;
		else if (argv[i][0] == '-' || *id != NULL)
			return tui_ctx_usage(c, "unexpected '%.64s'", argv[i]);
		else
			*id = argv[i];
	}
	if (o->theme != NULL && o->theme[0] == '\0')
		return tui_ctx_usage(c, "--theme needs a name or a file");
	return 0;
}

int
tui_cmd_attach_console(struct tui_ctx *c, int argc, char **argv)
{
	struct tui_console_opts o;
	const char *id;
	int rc;

	if ((rc = console_opts(c, argc, argv, &o, &id)) != 0)
		return rc;
	if (id != NULL)
		return tui_ctx_usage(c, "unexpected '%.64s' (corral attach ID "
		    "focuses a lease)", id);
	return tui_app_run_opts(c, NULL, &o);
}

static int
attach_exec(struct tui_ctx *c, int argc, char **argv)
{
	struct tui_console_opts o;
	struct lease_record rec;
	const char *id;
	int rc;

	if ((rc = console_opts(c, argc, argv, &o, &id)) != 0)
		return rc;
	if (id == NULL)
		return tui_ctx_usage(c,
		    "expected: corral attach [--theme NAME] "
		    "ID");
	if ((rc = tui_ctx_find_lease(c, id, &rec)) != 0)
		return rc;
	rc = tui_app_run_opts(c, rec.id, &o);
	lease_record_clear(&rec);
	return rc;
}

const struct tui_cmd tui_cmd_attach = {
	.name = "attach",
	.usage = "[--theme NAME] ID",
	.help = "Open the console focused on the lease ID (or its unique "
		"name). Focus moves only\non your keys; Enter or i types into "
		"the focused agent and C-b Esc stops;\nq or C-b d quits and "
		"leaves every agent running. 'corral [--theme NAME]'\nalone "
		"opens the console on every live lease. --theme picks "
		"themes/NAME.theme\n(default, light, high-contrast, "
		"monochrome) or a theme file; NO_COLOR turns\ncolour off. "
		"R reviews the focused lease's result, t opens the timeline;\n"
		"keys can be rebound in $XDG_CONFIG_HOME/corral/keys "
		"(docs/user-guide.md).",
	.exec = attach_exec,
};
