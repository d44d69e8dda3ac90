/*
 * cmd_new.c: `corral new` (create a lease and start its holder; print the
 * ID once the endpoint runs) and `corral wrap` (run a command in this
 * terminal as a trusted_local lease). SPEC 3, 6, 11.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <jansson.h>

#include "lease/lease.h"
#include "pty/pty.h"
#include "sandbox-adapters/sbx.h"
#include "tui/cli/cli.h"
#include "tui/console/console.h"
#include "tui/runtime/runtime.h"

struct new_args {
	const char *repo, *base, *sandbox, *policy, *agent, *name, *prompt;
	const char *host, *label;	/* the SSH fleet (cmd_fleet.c) */
	bool allow_control;
	char **cmd;
	char *name_out;		/* NULL, or TUI_NAME_MAX bytes (tui_new) */
};

static int create_lease(struct tui_ctx *, const struct new_args *, int,
    char id[LEASE_ID_LEN + 1]);

int
tui_cmd_new_lease(struct tui_ctx *c, const struct tui_new *nw, int owner_fd,
    char id[LEASE_ID_LEN + 1])
{
	struct new_args a;

	memset(&a, 0, sizeof a);
	a.name = nw->name;
	a.sandbox = nw->sandbox;
	a.allow_control = nw->allow_control;
	a.cmd = nw->cmd;
	a.repo = nw->repo;
	a.base = nw->base;
	a.agent = nw->agent;
	a.name_out = nw->name_out;
	return create_lease(c, &a, owner_fd, id);
}

static void
term_size(int *rows, int *cols)
{
	struct winsize ws;

	*rows = 24;
	*cols = 80;
	if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 &&
	    ws.ws_col > 0) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
	}
}

/*
 * SPEC 6 for a lease: a bwrap or command lease goes through
 * tui_bringup_sandboxed (provision.c); a trusted_local one has only
 * steps 1 and 6 (SPEC 3).
 * Returns the exit code.
 */
static int
create_lease(struct tui_ctx *c, const struct new_args *a, int owner_fd,
    char id[LEASE_ID_LEN + 1])
{
	struct lease_spec spec;
	struct lease_store *st;
	struct tui_spawn sp;
	char err[600], cwd[PATH_MAX], *dir = NULL, *sock = NULL;
	char got[TUI_NAME_MAX];
	const struct sbx_adapter *ad;
	struct lease_lock *lk = NULL;
	pid_t child = 0;
	int rc;

	ad = sbx_adapters_find(a->sandbox);
	if (ad == NULL)
		return tui_ctx_usage(c, "unknown sandbox '%.64s' (bwrap, "
		    "trusted_local, command)", a->sandbox);
	if (a->name != NULL && (strlen(a->name) > 128 || *a->name == '\0'))
		return tui_ctx_usage(c, "--name must be 1 to 128 bytes");
	if (a->agent != NULL) {
		struct pty_rules *r = tui_ctx_rules_load(c, NULL, NULL);
		bool known = r != NULL && pty_rules_find(r, a->agent) != NULL;

		pty_rules_free(r);
		if (!known)
			return tui_ctx_usage(c,
			    "unknown agent profile '%.64s' (see the rule "
			    "files in agents/ and "
			    "$XDG_CONFIG_HOME/corral/agents)", a->agent);
	}
	if (strcmp(ad->name, "trusted_local") != 0) {
		struct tui_bringup rq;

		memset(&rq, 0, sizeof rq);
		rq.sandbox = ad->name;
		rq.name = a->name;
		rq.name_out = a->name_out;
		rq.repo = a->repo;
		rq.base = a->base;
		rq.policy_file = a->policy;
		rq.agent = a->agent;
		rq.prompt_file = a->prompt;
		rq.cmd = a->cmd;
		term_size(&rq.rows, &rq.cols);
		return tui_bringup_sandboxed(c, &rq, id);
	}
	if (a->policy != NULL || a->prompt != NULL)
		return tui_ctx_usage(c, "--policy and --prompt-file apply to "
		    "sandboxed leases only");
	if (getcwd(cwd, sizeof cwd) == NULL)
		return tui_ctx_err(c, "getcwd: %s", strerror(errno));
	if ((st = tui_ctx_store(c)) == NULL)
		return TUI_EXIT_FAIL;
	/*
	 * Hold the state lock from the insert until the holder has recorded
	 * itself, so a reconcile never sees this lease half-made (SPEC 9.2).
	 * The lock fd is close-on-exec: the holder does not inherit it.
	 */
	if ((rc = lease_lock_acquire(c->state_dir, 10000, &lk)) < 0)
		return tui_ctx_err(c, "state lock: %s", lease_strerror(rc));

	memset(&spec, 0, sizeof spec);
	/* names are unique among live leases: a taken one gets "-2"... */
	spec.name = a->name;
	spec.unique_name = true;
	spec.name_out = a->name_out != NULL ? a->name_out : got;
	spec.mode = LEASE_MODE_TRUSTED_LOCAL;
	spec.adapter = ad->name;
	spec.isolation = ad->isolation;
	spec.cmd = a->cmd;
	if ((rc = lease_record_insert(st, &spec, id)) < 0) {
		lease_lock_release(lk);
		return tui_ctx_err(c, "%s", lease_store_errmsg(st));
	}
	if (a->name_out == NULL)
		tui_ctx_name_notice(c, a->name, got);

	/* The lease directory: identity journaled before it exists. */
	dir = tui_ctx_lease_dir(c, id);
	sock = tui_ctx_holder_sock(c, id);
	if (dir == NULL || sock == NULL) {
		rc = tui_ctx_err(c, "out of memory");
		goto out;
	}
	if ((rc = lease_resource_plan(st, id, LEASE_RES_LEASE_DIR, dir,
		 NULL)) < 0 ||
	    (rc = lease_resource_plan(st, id, LEASE_RES_SOCKET, sock,
		 NULL)) < 0) {
		rc = tui_ctx_err(c, "%s", lease_store_errmsg(st));
		goto out;
	}
	{
		char *parent = strdup(dir);
		*strrchr(parent, '/') = '\0';
		mkdir(parent, 0700);
		free(parent);
	}
	if (mkdir(dir, 0700) < 0) {
		rc = tui_ctx_err(c, "%s: %s", dir, strerror(errno));
		TUI_BEST_EFFORT(lease_record_transition(st, id, LEASE_EV_FAIL,
		    "provision_error", NULL));
		goto out;
	}
	TUI_BEST_EFFORT(lease_resource_created(st, id, LEASE_RES_LEASE_DIR,
	    dir));
	/* Its tracking cgroup, which every process the agent starts joins. */
	tui_track_provision(c, st, ad, id);

	memset(&sp, 0, sizeof sp);
	sp.id = id;
	sp.sandbox = ad->name;
	sp.cmd = a->cmd;
	sp.cwd = cwd;
	sp.allow_control = a->allow_control;
	sp.agent = a->agent;
	sp.owner_fd = owner_fd;
	term_size(&sp.rows, &sp.cols);
	if ((rc = tui_spawn_holder(c, &sp, &child, err, sizeof err)) < 0) {
		struct lease_record rec;

		/* The holder journals exec failures itself; make sure. */
		if (lease_record_get(st, id, &rec) == 0) {
			if (!lease_fsm_state_final(rec.state))
				TUI_BEST_EFFORT(lease_record_transition(st, id,
				    LEASE_EV_FAIL, "holder_start_failed", NULL));
			lease_record_clear(&rec);
		}
		rc = tui_ctx_err(c, "cannot start '%s': %s", a->cmd[0], err);
		goto out;
	}
	rc = TUI_EXIT_OK;
out:
	lease_lock_release(lk);
	free(dir);
	free(sock);
	return rc;
}

static int
parse_new(struct tui_ctx *c, int argc, char **argv, struct new_args *a,
    bool wrap)
{
	static const struct option opts[] = {
		{ "repo", required_argument, NULL, 'R' },
		{ "base", required_argument, NULL, 'b' },
		{ "sandbox", required_argument, NULL, 's' },
		{ "policy", required_argument, NULL, 'p' },
		{ "agent", required_argument, NULL, 'a' },
		{ "name", required_argument, NULL, 'n' },
		{ "prompt-file", required_argument, NULL, 'f' },
		{ "allow-control", no_argument, NULL, 'C' },
		{ "host", required_argument, NULL, 'H' },
		{ "label", required_argument, NULL, 'L' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	memset(a, 0, sizeof *a);
	a->sandbox = wrap ? "trusted_local" : "bwrap";
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (ch) {
		case 'R': a->repo = optarg; break;
		case 'b': a->base = optarg; break;
		case 's': a->sandbox = optarg; break;
		case 'p': a->policy = optarg; break;
		case 'a': a->agent = optarg; break;
		case 'n': a->name = optarg; break;
		case 'f': a->prompt = optarg; break;
		case 'C': a->allow_control = true; break;
		case 'H': a->host = optarg; break;
		case 'L': a->label = optarg; break;
		default:
			return tui_ctx_usage(c, "unknown or incomplete option "
			    "'%.64s'", argv[optind - 1]);
		}
		if (wrap && (ch == 'R' || ch == 'b' || ch == 's' ||
		    ch == 'p' || ch == 'f' || ch == 'H' || ch == 'L'))
			return tui_ctx_usage(c,
			    "wrap takes only --name, --agent "
			    "and --allow-control");
	}
	if (optind >= argc)
		return tui_ctx_usage(c,
		    "missing the command: corral %s [OPTIONS] "
		    "-- CMD [ARG...]", wrap ? "wrap" : "new");
	a->cmd = argv + optind;
	if (strcmp(a->sandbox, "trusted_local") == 0 &&
	    (a->repo != NULL || a->base != NULL))
		return tui_ctx_usage(c, "a trusted_local lease has no clone: "
		    "--repo and --base do not apply");
	return 0;
}

static int
new_exec(struct tui_ctx *c, int argc, char **argv)
{
	char id[LEASE_ID_LEN + 1];
	struct new_args a;
	int rc;

	if ((rc = parse_new(c, argc, argv, &a, false)) != 0)
		return rc;
	if (a.host != NULL || a.label != NULL) {
		struct tui_fleet_new fn = { a.host, a.label, a.repo, a.base,
			a.policy, a.name, a.agent, a.allow_control, a.cmd };

		if (a.host != NULL && a.label != NULL)
			return tui_ctx_usage(c, "--host and --label: one or "
			    "the other");
		if (strcmp(a.sandbox, "bwrap") != 0 || a.prompt != NULL)
			return tui_ctx_usage(c, "a lease on a fleet host runs "
			    "under bwrap there, without --prompt-file (not "
			    "yet)");
		return tui_cmd_fleet_new(c, &fn);
	}
	if ((rc = create_lease(c, &a, -1, id)) != 0)
		return rc;
	if (c->json) {
		tui_ctx_print_json(json_pack("{s:s}", "id", id));
	} else {
		printf("%s\n", id);
	}
	return TUI_EXIT_OK;
}

const struct tui_cmd tui_cmd_new = {
	.name = "new",
	.usage = "[--repo DIR] [--base REF] [--sandbox bwrap|trusted_local|"
		 "command] [--policy FILE] [--agent PROFILE] [--name NAME] "
		 "[--prompt-file FILE] [--allow-control] [--host NAME | "
		 "--label LABEL] -- CMD [ARG...]",
	.help = "Create a lease for CMD and start its holder; print the lease "
		"ID once the\nendpoint runs. The default sandbox is bwrap; "
		"a sandbox that cannot be\nprovisioned fails the lease with a "
		"named reason and never falls back.\n--sandbox trusted_local "
		"runs CMD on the host, in this directory and\nenvironment, "
		"labelled trusted_local everywhere; without\n"
		"--allow-control the holder refuses input, signals and cancel "
		"from anyone.\n--host NAME or --label LABEL runs it on a host "
		"of the fleet (corral fleet ls):\nthe least loaded one that "
		"can take it, or none, with the reason.",
	.exec = new_exec,
};

/* ---- wrap ------------------------------------------------------------------ */

static int
wrap_exec(struct tui_ctx *c, int argc, char **argv)
{
	char id[LEASE_ID_LEN + 1];
	struct new_args a;
	int sv[2], rc;

	if ((rc = parse_new(c, argc, argv, &a, true)) != 0)
		return rc;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return tui_ctx_err(c,
		    "wrap needs a terminal on stdin and stdout");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return tui_ctx_err(c, "socketpair: %s", strerror(errno));
	rc = create_lease(c, &a, sv[1], id);
	close(sv[1]);
	if (rc != 0) {
		close(sv[0]);
		return rc;
	}
	return tui_wrap_attach(c, id, sv[0]);
}

const struct tui_cmd tui_cmd_wrap = {
	.name = "wrap",
	.usage = "[--name NAME] [--agent PROFILE] [--allow-control] -- CMD "
		 "[ARG...]",
	.help = "Run CMD in this terminal as a trusted_local lease: "
		"it shows in the\nconsole next to the sandboxed ones. This "
		"terminal is the owner's and always\ncontrols it; others may "
		"type into it or cancel it only with --allow-control.\nThe "
		"screen is drawn from corral's screen model, never as raw "
		"agent bytes.\nPress C-b d to detach (the command keeps "
		"running; 'corral attach ID').",
	.exec = wrap_exec,
};
