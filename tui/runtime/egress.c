/*
 * egress.c: what the doctor needs to know about a lease's agent for the
 * egress checks of SPEC 8.7: the agent profile (a rules file in agents/,
 * by --agent NAME or identified from the command line) and the model
 * endpoints it declares, one of which the lease's allowlist must hold.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pty/pty.h"
#include "sandbox-adapters/sbx.h"
#include "tui/runtime/runtime_int.h"

int
tui_egress_agent_endpoints(struct tui_ctx *c, const char *agent,
    char *const *cmd, char *name, size_t namesz, char ***out)
{
	const struct pty_rules_agent *a = NULL;
	const char *const *eps;
	struct pty_rules *rules;
	size_t n = 0;
	int argc = 0;

	*out = NULL;
	if (namesz > 0)
		name[0] = '\0';
	if ((rules = tui_ctx_rules_load(c, NULL, NULL)) == NULL)
		return -ENOMEM;
	if (agent != NULL)
		a = pty_rules_find(rules, agent);
	else if (cmd != NULL) {
		while (cmd[argc] != NULL)
			argc++;
		a = pty_rules_identify(rules, (const char *const *)cmd, argc);
	}
	if (a != NULL) {
		struct tui_config cf;
		const char *ep;
		char entry[320];

		/* The endpoint the operator configured replaces the
		 * profile's vendor hosts (issue 18). */
		/* Through the lease's gateway it needs no destination. */
		if (tui_agent_uses_gateway(c, pty_rules_agent_name(a))) {
			snprintf(name, namesz, "%s", pty_rules_agent_name(a));
			pty_rules_free(rules);
			return 0;
		}
		tui_config_default(&cf);
		TUI_BEST_EFFORT(tui_config_load(&cf, NULL, NULL));
		ep = tui_config_agent_endpoint(&cf, pty_rules_agent_name(a));
		if (ep != NULL && tui_agent_endpoint_entry(ep, entry,
		    sizeof entry) == 0) {
			snprintf(name, namesz, "%s", pty_rules_agent_name(a));
			pty_rules_free(rules);
			if ((*out = calloc(2, sizeof **out)) == NULL ||
			    ((*out)[0] = strdup(entry)) == NULL) {
				free(*out);
				*out = NULL;
				return -ENOMEM;
			}
			return 0;
		}
	}
	if (a == NULL || (eps = pty_rules_agent_endpoints(a)) == NULL) {
		if (a != NULL)
			snprintf(name, namesz, "%s", pty_rules_agent_name(a));
		pty_rules_free(rules);
		return 0;
	}
	snprintf(name, namesz, "%s", pty_rules_agent_name(a));
	while (eps[n] != NULL)
		n++;
	if ((*out = calloc(n + 1, sizeof **out)) == NULL) {
		pty_rules_free(rules);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (((*out)[i] = strdup(eps[i])) == NULL) {
			sbx_strv_free(*out);
			*out = NULL;
			pty_rules_free(rules);
			return -ENOMEM;
		}
	}
	pty_rules_free(rules);
	return 0;
}
