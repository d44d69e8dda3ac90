/*
 * cmd_demo.c: `corral demo` (SPEC 11, issue 9): a throwaway repository
 * under the state directory, scripted agents on real bwrap leases of it
 * and one trusted_local agent (demo/), then the console on them. The
 * agents need no network and no API key.
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "lease/lease.h"
#include "tui/cli/cli.h"
#include "tui/console/console.h"
#include "tui/runtime/runtime.h"

/*
 * What each agent shows (SPEC 5.2): working under a spinner (on the host,
 * trusted_local), blocked on a y/n question, done with a patch, failed
 * (exit 1), and an egress attempt the lease's proxy denies (receipt).
 * The sandboxed scripts travel in the repository's base commit (.demo/),
 * since a sandbox sees only /usr and its own copy of the repository. The
 * sandboxed ones start first (a host that cannot run them stops the demo
 * before anything runs on the host), and the console opens on the first,
 * the question waiting for the operator.
 */
static const struct demo_agent {
	const char *name;
	const char *script;
	bool sandboxed;
} demo_agents[] = {
	{ "demo-question", "ask.sh", true },
	{ "demo-finisher", "finish.sh", true },
	{ "demo-failing", "fail.sh", true },
	{ "demo-egress", "egress.sh", true },
	{ "demo-spinner", "spinner.sh", false },
};
#define DEMO_NAGENTS (sizeof demo_agents / sizeof demo_agents[0])

/* The demo's data: demo/agents, demo/repo.sh, demo/config. */
struct demo {
	char *agents, *repo_sh, *config;
	char repo[PATH_MAX];
	char ids[DEMO_NAGENTS][LEASE_ID_LEN + 1];
	/* a second demo's names: demo-finisher-2... (unique among live) */
	char names[DEMO_NAGENTS][TUI_NAME_MAX];
	size_t started;
};

static void
demo_clear(struct demo *d)
{
	free(d->agents);
	free(d->repo_sh);
	free(d->config);
}

/*
 * Make the throwaway repository: $STATE/demo/repo-XXXXXX (0700), filled
 * and committed by demo/repo.sh (git, one commit on main, HEAD detached
 * so that `corral apply` may fast-forward main: SPEC 7.6).
 */
static int
demo_repo(struct tui_ctx *c, struct demo *d)
{
	char parent[PATH_MAX];
	int n, st;
	pid_t pid;

	if (tui_ctx_store(c) == NULL)	/* creates the state directory */
		return TUI_EXIT_FAIL;
	n = snprintf(d->repo, sizeof d->repo, "%s/demo/repo-XXXXXX",
	    c->state_dir);
	if (n < 0 || (size_t)n >= sizeof d->repo)
		return tui_ctx_err(c, "state directory path too long");
	memcpy(parent, d->repo, (size_t)n + 1);
	*strrchr(parent, '/') = '\0';
	if (mkdir(parent, 0700) < 0 && errno != EEXIST)
		return tui_ctx_err(c, "%s: %s", parent, strerror(errno));
	if (mkdtemp(d->repo) == NULL)
		return tui_ctx_err(c, "%s: %s", d->repo, strerror(errno));
	fflush(NULL);
	if ((pid = fork()) < 0)
		return tui_ctx_err(c, "fork: %s", strerror(errno));
	if (pid == 0) {
		execl("/bin/sh", "sh", d->repo_sh, d->repo, d->agents,
		    (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return tui_ctx_err(c, "waitpid: %s", strerror(errno));
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return tui_ctx_err(c, "%s failed (is git installed?); the "
		    "repository was left in %s", d->repo_sh, d->repo);
	return TUI_EXIT_OK;
}

static void
demo_term_size(int *rows, int *cols)
{
	struct winsize ws;

	*rows = 24;
	*cols = 80;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 &&
	    ws.ws_col > 0) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
	}
}

/*
 * A sandboxed agent: a bwrap lease of the demo repository on main. The
 * demo's own operator policy (demo/config/corral/policy.ini: an
 * allowlist, so each lease has its auditing proxy, and egress violations
 * recorded) is read in place of the operator's for these leases only:
 * XDG_CONFIG_HOME points at demo/config while they are provisioned and is
 * restored before anything else runs.
 */
static int
demo_sandboxed(struct tui_ctx *c, struct demo *d, const struct demo_agent *a,
    char id[LEASE_ID_LEN + 1])
{
	char script[64], *old = NULL, *cmd[] = { "/bin/sh", script, NULL };
	const char *env = getenv("XDG_CONFIG_HOME");
	struct tui_bringup rq;
	int rc;

	snprintf(script, sizeof script, "/work/.demo/%s", a->script);
	memset(&rq, 0, sizeof rq);
	rq.name = a->name;
	rq.name_out = d->names[a - demo_agents];
	rq.repo = d->repo;
	rq.base = "main";
	rq.cmd = cmd;
	demo_term_size(&rq.rows, &rq.cols);
	if (env != NULL && (old = strdup(env)) == NULL)
		return tui_ctx_err(c, "out of memory");
	if (setenv("XDG_CONFIG_HOME", d->config, 1) < 0) {
		free(old);
		return tui_ctx_err(c, "setenv: %s", strerror(errno));
	}
	rc = tui_bringup_sandboxed(c, &rq, id);
	if (old != NULL)
		setenv("XDG_CONFIG_HOME", old, 1);
	else
		unsetenv("XDG_CONFIG_HOME");
	free(old);
	return rc;
}

/* The trusted_local agent: on the host, controllable from the console. */
static int
demo_local(struct tui_ctx *c, struct demo *d, const struct demo_agent *a,
    char id[LEASE_ID_LEN + 1])
{
	char path[PATH_MAX], *cmd[] = { "/bin/sh", path, NULL };
	struct tui_new nw;
	int n;

	n = snprintf(path, sizeof path, "%s/%s", d->agents, a->script);
	if (n < 0 || (size_t)n >= sizeof path)
		return tui_ctx_err(c, "demo agent path too long");
	memset(&nw, 0, sizeof nw);
	nw.name = a->name;
	nw.name_out = d->names[a - demo_agents];
	nw.sandbox = "trusted_local";
	nw.allow_control = true;
	nw.cmd = cmd;
	return tui_cmd_new_lease(c, &nw, -1, id);
}

static void
demo_print(struct tui_ctx *c, const struct demo *d)
{
	json_t *arr;

	if (!c->json) {
		printf("repository %s\n", d->repo);
		for (size_t i = 0; i < d->started; i++)
			printf("%s %s %s\n", d->ids[i], d->names[i],
			    demo_agents[i].sandboxed ? "bwrap" :
			    "trusted_local");
		return;
	}
	arr = json_array();
	for (size_t i = 0; arr != NULL && i < d->started; i++)
		json_array_append_new(arr, json_pack("{s:s, s:s, s:s}", "id",
		    d->ids[i], "name", d->names[i], "mode",
		    demo_agents[i].sandboxed ? "sandboxed" : "trusted_local"));
	tui_ctx_print_json(json_pack("{s:s, s:o*}", "repository", d->repo,
	    "leases", arr));
}

/* ---- cleaning up: demo --clean, gc --older-than (issue 21) ------------ */

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)f;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 &&
	    errno != ENOENT ? -1 : 0;
}

/* The lease's repository is the demo repository dir. */
static bool
uses(const struct lease_record *r, const char *dir)
{
	return r->repo != NULL && strcmp(r->repo, dir) == 0;
}

/*
 * Remove $STATE/demo/repo-* that no lease row uses (with live_only, that
 * no live lease uses) and that has not changed for min_age_ms; each one
 * removed is printed. Returns how many, or -1 (the error printed).
 */
static long
demo_prune(struct tui_ctx *c, int64_t min_age_ms, bool live_only)
{
	struct lease_record *v = NULL;
	char top[PATH_MAX], dir[PATH_MAX];
	struct dirent *e;
	struct stat st;
	long removed = 0;
	size_t n = 0;
	DIR *d;

	if (tui_ctx_store(c) == NULL)
		return -1;
	snprintf(top, sizeof top, "%s/demo", c->state_dir);
	if ((d = opendir(top)) == NULL)
		return errno == ENOENT ? 0 : -1;
	if (lease_record_list(c->store, LEASE_LIST_ALL, &v, &n) < 0) {
		closedir(d);
		tui_ctx_err(c, "%s", lease_store_errmsg(c->store));
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		bool used = false;

		if (strncmp(e->d_name, "repo-", 5) != 0 ||
		    (size_t)snprintf(dir, sizeof dir, "%s/%s", top,
		    e->d_name) >= sizeof dir ||
		    lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		for (size_t i = 0; i < n && !used; i++)
			used = uses(&v[i], dir) && (!live_only ||
			    !lease_fsm_state_final(v[i].state));
		if (used || lease_id_now_ms() - (int64_t)st.st_mtime * 1000 <
		    min_age_ms)
			continue;
		if (nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) < 0) {
			fprintf(stderr, "corral %s: %s: %s\n", c->cmd, dir,
			    strerror(errno));
			continue;
		}
		printf("removed demo repository %s\n", dir);
		removed++;
	}
	closedir(d);
	lease_record_list_free(v, n);
	return removed;
}

long
tui_cmd_demo_prune(struct tui_ctx *c, int64_t min_age_ms)
{
	return demo_prune(c, min_age_ms, false);
}

/*
 * demo --clean: every finished lease on a demo repository is removed as
 * `corral gc ID` removes it, then every demo repository no live lease
 * uses; a live one is named, to cancel first.
 */
static int
demo_clean(struct tui_ctx *c)
{
	struct lease_record *v = NULL;
	char top[PATH_MAX];
	size_t n = 0, live = 0, tl = strlen(c->state_dir) + 11;
	int rc = TUI_EXIT_OK;

	if (tui_ctx_store(c) == NULL)
		return TUI_EXIT_FAIL;
	snprintf(top, sizeof top, "%s/demo/repo-", c->state_dir);
	if (lease_record_list(c->store, LEASE_LIST_ALL, &v, &n) < 0)
		return tui_ctx_err(c, "%s", lease_store_errmsg(c->store));
	for (size_t i = 0; i < n; i++) {
		char *argv[] = { (char *)"gc", v[i].id, NULL };

		/* on a demo repository, or the demo's agent on the host */
		if ((v[i].repo == NULL || strncmp(v[i].repo, top, tl) != 0) &&
		    (v[i].mode != LEASE_MODE_TRUSTED_LOCAL || v[i].name ==
		    NULL || strncmp(v[i].name, "demo-spinner", 12) != 0))
			continue;
		if (!lease_fsm_state_final(v[i].state)) {
			fprintf(stderr, "corral demo: %s (%s) is %s: %s it "
			    "first ('corral %s %s'); its repository is kept\n",
			    v[i].id, v[i].name ? v[i].name : "-",
			    lease_fsm_state_name(v[i].state),
			    v[i].state == LEASE_STATE_RESULT_READY ?
			    "apply or reject" : "cancel", v[i].state ==
			    LEASE_STATE_RESULT_READY ? "reject" : "cancel",
			    v[i].id);
			live++;
			continue;
		}
		if (tui_cmd_gc.exec(c, 2, argv) != TUI_EXIT_OK)
			rc = TUI_EXIT_FAIL;
	}
	lease_record_list_free(v, n);
	if (demo_prune(c, 0, true) < 0)
		rc = TUI_EXIT_FAIL;
	return live > 0 ? TUI_EXIT_FAIL : rc;
}

static int
demo_parse(struct tui_ctx *c, int argc, char **argv, bool *console,
    bool *clean)
{
	static const struct option opts[] = {
		{ "no-console", no_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "clean", no_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	*console = true;
	*clean = false;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (ch) {
		case 'n': *console = false; break;
		case 'j': c->json = true; break;
		case 'c': *clean = true; break;
		default:
			return tui_ctx_usage(c, "unknown option '%.64s'",
			    argv[optind - 1]);
		}
	}
	if (optind < argc)
		return tui_ctx_usage(c, "demo takes no arguments");
	if (*clean && (!*console || c->json))
		return tui_ctx_usage(c, "--clean goes alone");
	if (c->json && *console)
		return tui_ctx_usage(c, "--json goes with --no-console");
	return 0;
}

static int
demo_exec(struct tui_ctx *c, int argc, char **argv)
{
	struct demo d;
	bool console, clean;
	int rc;

	if ((rc = demo_parse(c, argc, argv, &console, &clean)) != 0)
		return rc;
	if (clean)
		return demo_clean(c);
	/* Nothing is started for a console that could not open. */
	if (console && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)))
		return tui_ctx_err(c,
		    "the console needs a terminal; nothing was "
		    "started ('corral demo --no-console' starts the agents "
		    "without it)");
	memset(&d, 0, sizeof d);
	d.agents = tui_ctx_data_path(c, "demo/agents");
	d.repo_sh = tui_ctx_data_path(c, "demo/repo.sh");
	d.config = tui_ctx_data_path(c, "demo/config");
	if (d.agents == NULL || d.repo_sh == NULL || d.config == NULL) {
		demo_clear(&d);
		return tui_ctx_err(c,
		    "demo files not found (set CORRAL_DATA_DIR "
		    "to the directory holding demo/)");
	}
	if ((rc = demo_repo(c, &d)) != 0)
		goto out;
	for (size_t i = 0; i < DEMO_NAGENTS; i++) {
		const struct demo_agent *a = &demo_agents[i];

		/* the name the journal gave it: demo-finisher-2... */
		snprintf(d.names[i], sizeof d.names[i], "%s", a->name);
		rc = a->sandboxed ? demo_sandboxed(c, &d, a, d.ids[i]) :
		    demo_local(c, &d, a, d.ids[i]);
		if (rc != 0) {
			fprintf(stderr, "corral demo: %s did not start; the "
			    "%zu started before it keep running ('corral "
			    "ls')\n", d.names[i], d.started);
			goto out;
		}
		d.started++;
		if (console)
			printf("started %s as %s (%s)\n", d.names[i], d.ids[i],
			    a->sandboxed ? "bwrap" : "trusted_local");
	}
	if (!console) {
		demo_print(c, &d);
		rc = TUI_EXIT_OK;
		goto out;
	}
	rc = tui_app_run(c, d.ids[0]);
out:
	demo_clear(&d);
	return rc;
}

const struct tui_cmd tui_cmd_demo = {
	.name = "demo",
	.usage = "[--no-console [--json] | --clean]",
	.help = "Make a throwaway git repository under the state directory "
		"and start scripted\nagents on it: four in bwrap sandboxes "
		"(one asks a y/n question and waits,\none finishes with a "
		"patch to review, one fails, one tries the network and\nis "
		"denied) and one trusted_local on the host (works under a "
		"spinner), then\nopen the console on them. No network and no "
		"API key are needed. The sandboxed\nleases use the demo's "
		"own policy (demo/config/corral/policy.ini).\n--no-console "
		"prints the repository and the lease IDs instead (ID NAME "
		"MODE).\nQuitting the console leaves the agents running: "
		"'corral review ID', then\n'corral apply ID' or 'corral "
		"reject ID'; 'corral cancel ID' ends the spinner.\n--clean "
		"removes what demos left: their finished leases (as 'corral "
		"gc ID')\nand their repositories (a live lease is named, to "
		"cancel first);\n'corral gc --older-than' removes the demo "
		"repositories no lease uses.",
	.exec = demo_exec,
};
