/*
 * cmd_doctor.c: `corral doctor [--policy FILE] [--agent NAME] [--adversarial]`
 * (SPEC 8.7): the preflight every sandboxed lease runs first, printed: the
 * facts its receipts record and each check with its halt reason and exit
 * class. With --agent, for that agent profile too (issue 18): whether it
 * is installed, its runtime, its installation's mounts and its model
 * endpoint, and the egress check against the endpoint configured.
 * --adversarial then runs the adversarial probe suite (tests/adversarial)
 * against this host through real leases; when it passes, this
 * configuration (kernel, bwrap, filter, corral) is no longer `unverified`.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "pty/pty.h"
#include "sandbox-adapters/sbx.h"
#include "tui/cli/cli.h"
#include "tui/runtime/runtime.h"

#define NOBODY 65534u

extern char **environ;

static json_t *
report_json(const struct sbx_doctor_report *r, const char *init)
{
	json_t *j = json_object(), *checks = json_array();

	if (j == NULL || checks == NULL) {
		json_decref(j);
		json_decref(checks);
		return NULL;
	}
	json_object_set_new(j, "facts", tui_sandbox_facts_json(&r->facts, init,
	    NULL));
	for (int i = 0; i < r->nchecks; i++) {
		const struct sbx_doctor_check *k = &r->checks[i];

		json_array_append_new(checks, json_pack("{s:s, s:b, s:o, s:o, "
		    "s:s}", "name", k->name, "ok", k->ok, "halt", k->ok ?
		    json_null() : json_string(sbx_halt_name(k->halt)),
		    "exit_class", k->ok ? json_null() : json_integer(k->halt),
		    "detail", k->detail));
	}
	json_object_set_new(j, "checks", checks);
	json_object_set_new(j, "halt", r->halt ?
	    json_string(sbx_halt_name(r->halt)) : json_null());
	json_object_set_new(j, "exit_class", json_integer(r->halt));
	return j;
}

static void
report_text(const struct sbx_doctor_report *r, const char *init)
{
	const struct sbx_facts *f = &r->facts;
	char hex[SBX_SHA256_HEX];

	printf("kernel           %s\n", f->kernel);
	printf("bwrap            %s %s sha256:%s\n", f->bwrap_path,
	    f->bwrap_version, f->bwrap_sha256);
	printf("seccomp filter   sha256:%s\n", f->filter_sha256);
	printf("policy           sha256:%s\n", f->policy_sha256);
	printf("cgroups          %s\n", f->cgroup_mode);
	printf("landlock abi     %d (report only)\n", f->landlock_abi);
	printf("legacy_tiocsti   %d\n", f->legacy_tiocsti);
	if (init != NULL && tui_sandbox_sha256_file(init, hex) == 0)
		printf("corral-sbx-init  %s sha256:%s\n", init, hex);
	printf("configuration    %s\n", f->verified ? "verified (the "
	    "adversarial suite passed here)" : "unverified (run 'corral "
	    "doctor --adversarial')");
	for (int i = 0; i < r->nchecks; i++) {
		const struct sbx_doctor_check *k = &r->checks[i];

		if (k->ok)
			printf("ok    %-12s ", k->name);
		else
			printf("FAIL  %-12s %s (%d): ", k->name,
			    sbx_halt_name(k->halt), k->halt);
		tui_ctx_put_escaped(stdout, k->detail, strlen(k->detail));
		printf("\n");
	}
	if (r->halt != 0)
		printf("preflight: %s (exit class %d): %s\n",
		    sbx_halt_name(r->halt), r->halt, r->detail);
	else
		printf("preflight: passed\n");
}

/* Run the suite with the same binaries; its exit status. */
static int
adversarial(struct tui_ctx *c)
{
	char *suite = tui_ctx_data_path(c, "tests/adversarial/run.sh");
	char *argv[] = { "/bin/bash", suite, NULL };
	pid_t pid;
	int st, rc;

	if (suite == NULL) {
		fprintf(stderr, "corral doctor: the adversarial suite "
				"(tests/adversarial/run.sh) was not found; set "
				"CORRAL_DATA_DIR to a corral source tree\n");
		return -ENOENT;
	}
	if (setenv("CORRAL_BIN", c->self, 1) < 0) {
		free(suite);
		return -errno;
	}
	fflush(NULL);
	rc = posix_spawn(&pid, "/bin/bash", NULL, NULL, argv, environ);
	free(suite);
	if (rc != 0)
		return -rc;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* --agent NAME: what running it sandboxed means here. */
static json_t *
agent_json(const struct tui_agent *a, const char *why, json_t *gw)
{
	return json_pack("{s:s, s:b, s:s, s:s?, s:s?, s:s?, s:s?, s:s?, "
	    "s:s?, s:O?}", "profile", a->name, "sandboxed", a->sandboxed,
	    "status",
	    tui_agent_status_name(a->status), "detail", why[0] ? why : NULL,
	    "exe", a->exe[0] ? a->exe : NULL, "install", a->install[0] ?
	    a->install : NULL, "runtime", a->runtime[0] ? a->runtime : NULL,
	    "endpoint", a->endpoint[0] ? a->endpoint : NULL, "base_url",
	    a->base_url[0] ? a->base_url : NULL, "gateway", gw);
}

/* The model gateway of its provider: upstream, key, CA, cap. */
static void
gateway_text(json_t *gw)
{
	const char *kf = json_string_value(json_object_get(gw, "key_file"));
	const char *ca = json_string_value(json_object_get(gw, "ca_file"));
	const char *cap = json_string_value(json_object_get(gw,
	    "spend_cap_usd"));

	printf("  %-15s [provider %s] to %s (the key stays outside the "
	    "sandbox)\n", "gateway", json_string_value(json_object_get(gw,
	    "provider")), json_string_value(json_object_get(gw, "upstream")));
	if (kf != NULL)
		printf("  %-15s key_file %s (readable, corral's user only)\n",
		    "key", kf);
	else
		printf("  %-15s minted for each lease ([credentials] mint)\n",
		    "key");
	printf("  %-15s %s\n", "CA", ca != NULL ? ca : "the system's store");
	printf("  %-15s %s%s\n", "spend cap", cap != NULL ? cap : "none",
	    cap != NULL ? " USD a lease" : "");
}

static void
agent_text(const struct tui_agent *a, const char *why, json_t *gw)
{
	printf("agent            %s", a->name);
	if (!a->sandboxed) {
		printf(" (detection rules only: it runs as any command)\n");
		return;
	}
	printf("\n");
	if (a->status != TUI_AGENT_OK) {
		printf("  %-15s %s: %s\n", "FAIL", tui_agent_status_name(
		    a->status), why);
		return;
	}
	printf("  %-15s %s\n", "command", a->exe);
	printf("  %-15s %s\n", "installation", a->real);
	printf("  %-15s %s\n", "mounted", a->install[0] ? a->install :
	    "(under /usr: nothing to mount)");
	if (a->runtime[0] != '\0')
		printf("  %-15s %s\n", "runtime", a->runtime);
	if (gw != NULL)
		gateway_text(gw);
	else if (a->endpoint[0] != '\0')
		printf("  %-15s %s\n", "endpoint", a->endpoint);
	else
		printf("  %-15s not configured ([agent %s] endpoint = URL in "
		    "corral's config)\n", "endpoint", a->name);
}

static int
doctor_exec(struct tui_ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "adversarial", no_argument, NULL, 'a' },
		{ "agent", required_argument, NULL, 'g' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct sbx_doctor_report *rep = NULL;
	struct sbx_policy_error perr;
	struct sbx_policy *pol = NULL;
	struct sbx_doctor_opts o;
	struct tui_probe_journal pj;
	const char *file = NULL, *agent = NULL;
	char *init = NULL, *probe = NULL, why[600] = "", name[64] = "";
	char **eps = NULL;
	struct tui_agent ag;
	json_t *gw = NULL;	/* its provider's gateway, checked */
	bool adv = false;
	int ch, rc;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (ch) {
		case 'p': file = optarg; break;
		case 'a': adv = true; break;
		case 'g': agent = optarg; break;
		case 'j': c->json = true; break;
		default:
			return tui_ctx_usage(c, "unknown or incomplete option "
			    "'%.64s'", argv[optind - 1]);
		}
	}
	if (optind != argc)
		return tui_ctx_usage(c, "unexpected argument '%.64s'",
		    argv[optind]);
	if ((rc = tui_sandbox_policy(file, &pol, &perr)) < 0) {
		const char *reason = rc == SBX_EWIDER ? "policy_wider" :
		    "policy_invalid";

		if (perr.line > 0)
			return tui_ctx_err(c,
			    "%s: %s:%d: %s", reason, perr.file,
			    perr.line, perr.msg);
		return tui_ctx_err(c,
		    "%s: %s: %s", reason, perr.file, perr.msg);
	}
	memset(&ag, 0, sizeof ag);
	if (agent != NULL) {
		struct pty_rules *r = tui_ctx_rules_load(c, NULL, NULL);
		bool known = r != NULL && pty_rules_find(r, agent) != NULL;

		pty_rules_free(r);
		if (!known) {
			sbx_policy_free(pol);
			return tui_ctx_usage(c, "unknown agent profile '%.64s'",
			    agent);
		}
		/* As `corral new` would: its install and endpoint widen the
		 * policy the preflight then checks. */
		rc = tui_agent_setup(c, agent, NULL, &ag, why, sizeof why);
		if (rc == 0 && (rc = tui_agent_grant(&ag, pol, why,
		    sizeof why)) != 0)
			ag.status = TUI_AGENT_ENDPOINT_INVALID;
		if (rc == -ENOMEM) {
			sbx_policy_free(pol);
			return tui_ctx_err(c, "out of memory");
		}
		/* Its provider's gateway would start: key, upstream, CA. */
		if (ag.status == TUI_AGENT_OK && ag.gateway &&
		    (gw = tui_holder_gw_doctor(json_object_get(ag.setup,
		    "gateway"))) != NULL && !json_is_true(json_object_get(gw,
		    "ok"))) {
			ag.status = TUI_AGENT_ENDPOINT_INVALID;
			snprintf(why, sizeof why, "model gateway: %s",
			    json_string_value(json_object_get(gw, "problem")));
		}
		if (ag.status != TUI_AGENT_OK) {
			if (c->json)
				tui_ctx_print_json(json_pack("{s:o}", "agent",
				    agent_json(&ag, why, gw)));
			else
				agent_text(&ag, why, gw);
			json_decref(gw);
			sbx_policy_free(pol);
			tui_agent_clear(&ag);
			return TUI_EXIT_FAIL;
		}
		TUI_BEST_EFFORT(tui_egress_agent_endpoints(c, agent, NULL,
		    name, sizeof name, &eps));
	}
	if ((rep = calloc(1, sizeof *rep)) == NULL) {
		json_decref(gw);
		sbx_policy_free(pol);
		tui_agent_clear(&ag);
		sbx_strv_free(eps);
		return tui_ctx_err(c, "out of memory");
	}
	init = tui_sandbox_helper_path(c, "corral-sbx-init", "CORRAL_SBX_INIT");
	probe = tui_sandbox_helper_path(c,
	    "corral-sbx-probe", "CORRAL_SBX_PROBE");
	memset(&o, 0, sizeof o);
	o.policy = pol;
	o.state_dir = tui_ctx_scope(c);
	o.init_path = init;
	o.probe_path = probe;
	o.uid = NOBODY;
	o.gid = NOBODY;
	o.ssh_auth_sock = getenv("SSH_AUTH_SOCK");
	if (tui_sandbox_probe_reclaim(c) >= 0)
		o.steps = tui_sandbox_probe_steps(c, &pj);
	o.agent = name[0] != '\0' ? name : NULL;
	o.model_endpoints = (const char *const *)eps;
	rc = sbx_doctor_run(&o, rep);
	if (rc < 0 && rc != SBX_EPROBE) {
		rc = tui_ctx_err(c, "preflight: %s", sbx_strerror(rc));
		goto out;
	}
	if (geteuid() != 0 && rep->halt == 0) {
		rep->halt = SBX_HALT_ISOLATION_UNSATISFIABLE;
		snprintf(rep->detail, sizeof rep->detail, "corral must run as "
		    "root to give each sandboxed lease a uid of its own");
	}
	if (c->json) {
		json_t *j = report_json(rep, init);

		if (j != NULL && agent != NULL)
			json_object_set_new(j, "agent", agent_json(&ag, why,
			    gw));
		tui_ctx_print_json(j);
	} else {
		if (agent != NULL)
			agent_text(&ag, why, gw);
		report_text(rep, init);
	}
	rc = rep->halt;
	if (rc != 0 || !adv)
		goto out;
	/* The probes, through real leases (tests/adversarial). */
	rc = adversarial(c);
	if (rc == 0 && getenv("ADV_ONLY") != NULL && *getenv("ADV_ONLY")) {
		/* A subset proves nothing about the configuration. */
		printf("adversarial subset passed (ADV_ONLY): not recorded\n");
	} else if (rc == 0) {
		if ((rc = sbx_doctor_mark_verified(c->state_dir,
		    &rep->facts)) < 0)
			rc = tui_ctx_err(c,
			    "cannot record the verification: %s",
			    sbx_strerror(rc));
		else
			printf("adversarial suite passed: this configuration "
			       "is verified\n");
	} else {
		rc = tui_ctx_err(c, "adversarial suite failed (%d): this "
		    "configuration stays unverified", rc);
	}
out:
	free(init);
	free(probe);
	free(rep);
	json_decref(gw);
	sbx_policy_free(pol);
	sbx_strv_free(eps);
	tui_agent_clear(&ag);
	return rc;
}

const struct tui_cmd tui_cmd_doctor = {
	.name = "doctor",
	.usage = "[--policy FILE] [--agent NAME] [--adversarial] [--json]",
	.help = "Run the sandbox preflight that every sandboxed "
		"lease runs first:\nbwrap (absolute path, not setuid, >= 0.8, "
		"its hash), user namespaces, the\nseccomp filter inside a real "
		"sandbox, no network in the exec zone, cgroups,\nthe policy. "
		"Prints the facts receipts record and each check; exits with "
		"the\nfirst halt's class: isolation_unsatisfiable 30, "
		"credential_scope_invalid 13,\nhermeticity_violation 14. "
		"--agent NAME also says whether that agent can run\nsandboxed "
		"here: installed, its runtime, its mounts, its model endpoint "
		"(exit 1\nwhen it is not installed or its runtime is not "
		"found). "
		"--adversarial then runs the adversarial probe suite\nthrough "
		"real leases on this host; when it passes, this configuration "
		"is no\nlonger labelled unverified.",
	.exec = doctor_exec,
};
