/*
 * cmd_demo.c: `corral demo` (SPEC 11): start the scripted demo agents
 * (demo/agents/) as endpoints, then open the console on them. The agents
 * need no network and no API key.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lease/lease.h"
#include "tui/tui.h"

static const struct {
	const char *name;
	const char *script;
} demo_agents[] = {
	{ "demo-spinner", "spinner.sh" },
	{ "demo-question", "ask.sh" },
	{ "demo-finisher", "finish.sh" },
};

char *
tui_data_path(const struct tui_ctx *c, const char *rel)
{
	const char *env = getenv("CORRAL_DATA_DIR");
	char *cands[3] = { NULL, NULL, NULL }, *dir, *found = NULL;
	struct stat sb;

	/* $CORRAL_DATA_DIR, the install tree, then the source tree. */
	if (env != NULL && *env != '\0' &&
	    asprintf(&cands[0], "%s/%s", env, rel) < 0)
		cands[0] = NULL;
	if ((dir = strdup(c->self)) != NULL) {
		char *s = strrchr(dir, '/');
		if (s != NULL) {
			*s = '\0';
			if (asprintf(&cands[1], "%s/../share/corral/%s", dir,
			    rel) < 0)
				cands[1] = NULL;
		}
		free(dir);
	}
	if (asprintf(&cands[2], "%s/%s", CORRAL_SOURCE_DIR, rel) < 0)
		cands[2] = NULL;
	for (int i = 0; i < 3; i++) {
		if (found == NULL && cands[i] != NULL &&
		    stat(cands[i], &sb) == 0)
			found = cands[i];
		else
			free(cands[i]);
	}
	return found;
}

static int
demo_exec(struct tui_ctx *c, int argc, char **argv)
{
	char *agents, cmdpath[PATH_MAX], *focus = NULL;
	int rc;

	(void)argv;
	if (argc > 1)
		return tui_usage(c, "demo takes no arguments");
	if ((agents = tui_data_path(c, "demo/agents")) == NULL)
		return tui_err(c, "demo agents not found (set "
		    "CORRAL_DATA_DIR to the directory holding demo/)");
	for (size_t i = 0; i < sizeof demo_agents / sizeof demo_agents[0];
	    i++) {
		char id[LEASE_ID_LEN + 1];
		char *cmd[] = { "/bin/sh", cmdpath, NULL };
		struct tui_new nw = { 0 };

		snprintf(cmdpath, sizeof cmdpath, "%s/%s", agents,
		    demo_agents[i].script);
		nw.name = demo_agents[i].name;
		nw.sandbox = "trusted_local";
		nw.allow_control = true;
		nw.cmd = cmd;
		if ((rc = tui_new_lease(c, &nw, -1, id)) != 0) {
			free(agents);
			free(focus);
			return rc;
		}
		printf("started %s as %s\n", demo_agents[i].name, id);
		if (focus == NULL)
			focus = strdup(id);
	}
	free(agents);
	rc = tui_console_run(c, focus);
	free(focus);
	return rc;
}

const struct tui_cmd tui_cmd_demo = {
	.name = "demo",
	.usage = "",
	.help = "Start the scripted demo agents (one streams coloured output "
		"under a spinner,\none asks a y/n question and waits, one "
		"finishes), then open the console\non them. Quitting the "
		"console leaves them running; 'corral cancel ID' ends\none.",
	.exec = demo_exec,
};
