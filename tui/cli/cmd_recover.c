/*
 * cmd_recover.c: `corral reconcile` and `corral gc` (SPEC 9.2, 9.3): one at
 * a time under the state lock; holders are probed by PID, start time and a
 * status ping with a deadline; a dead or wedged holder's lease fails with
 * holder_lost and its processes are stopped (its workspace is kept);
 * removal only by exact ID.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "lease/lease.h"
#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"
#include "tui/cli/cli.h"
#include "tui/runtime/runtime.h"

#define RECOVER_PING_MS 1500
#define RECOVER_LOCK_MS 10000

static enum lease_holder_status
probe(const struct lease_record *r, void *ud)
{
	struct tui_ctx *c = ud;
	char why[256];

	switch (tui_probe_holder(c, r, RECOVER_PING_MS, NULL, why,
	    sizeof why)) {
	case TUI_HOLDER_ALIVE:
		return LEASE_HOLDER_ALIVE;
	case TUI_HOLDER_WEDGED:
		return LEASE_HOLDER_WEDGED;
	default:
		return LEASE_HOLDER_DEAD;
	}
}

/*
 * What a dead holder never got to journal (its exit path does it): the
 * holder and its socket removed, no holder on the row, the activity
 * failed -- so cleanup can be confirmed by reject or gc, and `wait` ends.
 */
static void
forget_holder(struct tui_ctx *c, const struct lease_record *r)
{
	char ident[64], *sock;
	int i;

	for (i = 0; i < 200 && r->holder_pid > 0 &&
	    lease_proc_alive((pid_t)r->holder_pid, r->holder_start); i++)
		usleep(10000);		/* SIGKILL is not instant */
	if (r->holder_pid > 0 &&
	    lease_proc_alive((pid_t)r->holder_pid, r->holder_start))
		return;
	if (r->holder_pid > 0) {
		snprintf(ident, sizeof ident, "%d:%lld", (int)r->holder_pid,
		    (long long)r->holder_start);
		TUI_BEST_EFFORT(lease_resource_removed(c->store, r->id,
		    LEASE_RES_HOLDER, ident));
		TUI_BEST_EFFORT(lease_record_set_holder(c->store, r->id, 0, 0));
	}
	if ((sock = tui_ctx_holder_sock(c, r->id)) != NULL &&
	    (unlink(sock) == 0 || errno == ENOENT))
		TUI_BEST_EFFORT(lease_resource_removed(c->store, r->id,
		    LEASE_RES_SOCKET, sock));
	free(sock);
	TUI_BEST_EFFORT(lease_record_set_activity(c->store, r->id,
	    LEASE_ACT_FAILED, "holder_lost"));
}

/*
 * A trusted_local lease's processes that outlived its holder (an agent
 * that ignores SIGHUP, a daemon it started): every one in its tracking
 * cgroup killed and the cgroup removed (the adapter's .teardown), in a
 * receipt naming them (an expected daemon's too, by reject or gc).
 * Idempotent: nothing tracked, nothing done.
 */
void
tui_cmd_end_tracked(struct tui_ctx *c, const struct lease_record *r,
    const char *by)
{
	json_t *procs = tui_track_list(c, r), *j;
	char err[512];
	long left = 0;
	int rc;

	if (procs == NULL)
		return;
	if ((rc = tui_sandbox_teardown(c, c->store, r->id, err,
	    sizeof err)) < 0)
		fprintf(stderr, "corral %s: %s: %s\n", by, r->id, err);
	if (tui_track_count(c, r, &left) < 0 || left < 0)
		left = 0;
	j = json_pack("{s:s, s:I, s:o, s:I, s:s}", "by", by, "found",
	    (json_int_t)json_array_size(procs), "processes", procs, "left",
	    (json_int_t)left, "signals", "SIGKILL");
	if (j != NULL && lease_receipt_append(c->store, r->id,
	    "processes_ended", j, NULL) < 0)
		fprintf(stderr, "corral %s: %s: receipt: %s\n", by, r->id,
		    lease_store_errmsg(c->store));
	json_decref(j);
}

/*
 * A lost holder's processes: kill the holder (its agent dies with it), then
 * a sandboxed lease's cgroups and uid by exact ID (SPEC 9.2): whatever of
 * the sandbox is left is stopped; the workspace is kept for extraction.
 */
static void
stop_lost(struct tui_ctx *c, const char *id)
{
	struct lease_record r;
	char err[512];
	int rc;

	if (lease_record_get(c->store, id, &r) < 0)
		return;
	if (r.holder_pid > 0 &&
	    lease_proc_alive((pid_t)r.holder_pid, r.holder_start))
		kill((pid_t)r.holder_pid, SIGKILL);
	forget_holder(c, &r);
	if (r.mode == LEASE_MODE_TRUSTED_LOCAL)
		tui_cmd_end_tracked(c, &r, "reconcile");
	if (r.mode == LEASE_MODE_SANDBOXED) {
		/*
		 * What the holder would have done: stop, then extract, with
		 * the stored credential (revoked after this) for the gate.
		 */
		char *dir = tui_ctx_lease_dir(c, id), *secret = NULL;

		if (dir == NULL || sbx_cred_read(dir, &secret) < 0)
			secret = NULL;
		free(dir);
		if (tui_sandbox_teardown(c, c->store, id, err, sizeof err) < 0)
			fprintf(stderr, "corral reconcile: %s: %s\n", id, err);
		else if ((rc = tui_checks_finish(c, id, "holder_lost",
		    secret, NULL)) < 0 && rc != LEASE_EINVALID) /* quarantined: ok */
			fprintf(stderr, "corral reconcile: %s: result: %s\n",
			    id, lease_store_errmsg(c->store));
		if (secret != NULL) {
			explicit_bzero(secret, strlen(secret));
			free(secret);
		}
	}
	lease_record_clear(&r);
}

/* Did the lease's holder ever record itself (did the agent ever run)? */
static bool
ever_ran(struct tui_ctx *c, const char *id)
{
	struct lease_resource_row *v = NULL;
	bool ran = false;
	size_t n = 0;

	if (lease_resource_list(c->store, id, &v, &n) < 0)
		return true;	/* unknown: keep what it has */
	for (size_t i = 0; i < n; i++)
		ran |= v[i].kind == LEASE_RES_HOLDER;
	lease_resource_list_free(v, n);
	return ran;
}

/* A holder socket journaled but never made (no holder ever ran). */
static void
forget_socket(struct tui_ctx *c, const char *id)
{
	char *sock = tui_ctx_holder_sock(c, id);

	if (sock != NULL && access(sock, F_OK) != 0)
		TUI_BEST_EFFORT(lease_resource_removed(c->store, id,
		    LEASE_RES_SOCKET, sock));
	free(sock);
}

/*
 * Before lease_recover_reconcile: a sandboxed lease it will tear down -- one
 * left in provisioning by a `corral new` that died (no holder recorded), or a
 * finished one with cleanup pending or failed that was rejected, applied,
 * cancelled or never ran -- first loses its cgroups and uid slot (exact
 * ID) and its bounded workspace's mount, which lease_provision_teardown, never
 * crossing a mount, could not remove. Leases that ran and failed
 * (holder_lost, a limit) keep their workspace for extraction.
 */
static void
sandbox_prepass(struct tui_ctx *c)
{
	struct lease_record *v = NULL;
	char err[512];
	size_t n = 0;

	if (lease_record_list(c->store, LEASE_LIST_ALL, &v, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct lease_record *r = &v[i];
		bool gone;

		if (r->holder_pid > 0 &&
		    lease_proc_alive((pid_t)r->holder_pid, r->holder_start))
			continue;
		/*
		 * Provisioning with no holder recorded: its `corral new` is
		 * gone, but its holder may be starting. The lease fails
		 * first, only while still provisioning (the holder's claim
		 * is the other compare-and-swap, SPEC 9.2): once it has,
		 * the holder can no longer take it and its resources go;
		 * if the holder took it first, it is left to the probe.
		 */
		if (r->state == LEASE_STATE_PROVISIONING &&
		    r->holder_pid <= 0) {
			lease_fault_wait("reconcile.interrupted.judged");
			if (lease_record_transition_from(c->store, r->id,
			    LEASE_STATE_PROVISIONING, LEASE_EV_FAIL,
			    "provisioning_interrupted", NULL) < 0)
				continue;
		}
		/* trusted_local: its tracking cgroup, left by a lost holder */
		if (r->mode == LEASE_MODE_TRUSTED_LOCAL) {
			if ((r->state == LEASE_STATE_PROVISIONING &&
			    r->holder_pid <= 0) ||
			    (lease_fsm_state_final(r->state) &&
			    (r->cleanup == LEASE_CLEANUP_PENDING ||
			    r->cleanup == LEASE_CLEANUP_FAILED)))
				tui_cmd_end_tracked(c, r, "reconcile");
			continue;
		}
		if (r->mode != LEASE_MODE_SANDBOXED)
			continue;
		if (r->state == LEASE_STATE_PROVISIONING)
			gone = r->holder_pid <= 0;
		else
			gone = lease_fsm_state_final(r->state) &&
			    (r->cleanup == LEASE_CLEANUP_PENDING ||
			    r->cleanup == LEASE_CLEANUP_FAILED) &&
			    (r->state != LEASE_STATE_FAILED ||
			    !ever_ran(c, r->id));
		if (!gone)
			continue;
		if (tui_sandbox_teardown(c, c->store, r->id, err,
		    sizeof err) < 0 ||
		    tui_sandbox_workspace_release(c, r->id, err,
		    sizeof err) < 0)
			fprintf(stderr, "corral reconcile: %s: %s\n", r->id,
			    err);
		forget_socket(c, r->id);
	}
	lease_record_list_free(v, n);
}

/*
 * A lease past running whose check runs were left by a runner that is
 * gone (an apply or review killed while the checks of a new commit ran;
 * the holder's are stop_lost's): each stopped and its uid slot, cgroups
 * and copy released by the run's own journaled rows, under the lease's
 * lock (an apply at work keeps its own), said in a receipt.
 */
static void
checks_prepass(struct tui_ctx *c)
{
	struct lease_record *v = NULL;
	struct lease_lock *lk;
	char err[512];
	size_t n = 0, left;
	json_t *j;

	if (lease_record_list(c->store, LEASE_LIST_ALL, &v, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct lease_record *r = &v[i];

		if (r->state == LEASE_STATE_RUNNING ||
		    r->state == LEASE_STATE_PROVISIONING ||
		    (r->holder_pid > 0 && lease_proc_alive(
		    (pid_t)r->holder_pid, r->holder_start)) ||
		    (left = tui_sandbox_checks_left(c->store, r->id)) == 0)
			continue;
		if (lease_lock_lease(c->state_dir, r->id, 0, &lk) < 0)
			continue;
		if (tui_sandbox_teardown(c, c->store, r->id, err,
		    sizeof err) < 0)
			fprintf(stderr, "corral reconcile: %s: %s\n", r->id,
			    err);
		j = json_pack("{s:I, s:I, s:s}", "resources", (json_int_t)left,
		    "left", (json_int_t)tui_sandbox_checks_left(c->store,
		    r->id), "why", "their runner was lost");
		if (j != NULL && lease_receipt_append(c->store, r->id,
		    "checks_interrupted", j, NULL) < 0)
			fprintf(stderr, "corral reconcile: %s: receipt: %s\n",
			    r->id, lease_store_errmsg(c->store));
		json_decref(j);
		lease_lock_release(lk);
	}
	lease_record_list_free(v, n);
}

/* The sandboxes of every adapter in the orphan inventory (SPEC 9.2). */
static int
src_list(void *ud, lease_orphan_add_fn add, void *actx)
{
	return tui_sandbox_orphans_list(ud, add, actx);
}

static int
src_remove(void *ud, const char *identity, const char *scope, const char *id)
{
	return tui_sandbox_orphan_remove(ud, identity, scope, id);
}

static int
reconcile_exec(struct tui_ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct lease_report *rep = NULL;
	struct lease_lock *lk = NULL;
	struct lease_orphan_src src = { src_list, src_remove, c };
	bool dry = false;
	int ch, rc;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "nj", opts, NULL)) != -1) {
		if (ch == 'n')
			dry = true;
		else if (ch == 'j')
			c->json = true;
		else
			return tui_ctx_usage(c, "unknown option '%.64s'",
			    argv[optind - 1]);
	}
	if (optind != argc)
		return tui_ctx_usage(c, "unexpected argument '%.64s'",
		    argv[optind]);
	if (tui_ctx_store(c) == NULL)
		return TUI_EXIT_FAIL;
	if ((rc = lease_lock_acquire(c->state_dir, RECOVER_LOCK_MS, &lk)) < 0)
		return tui_ctx_err(c, "state lock: %s", lease_strerror(rc));
	lease_git_init();
	if ((rep = lease_recover_report_new(dry)) == NULL) {
		rc = tui_ctx_err(c, "out of memory");
		goto out;
	}
	/*
	 * Interrupted applies first: one that finishes leaves its lease
	 * applied with teardown pending, which the prepass then unmounts.
	 */
	rc = dry ? 0 : lease_recover_intents(c->store, lk, c->state_dir, 0,
	    rep);
	if (rc == 0 && !dry) {
		sandbox_prepass(c);
		checks_prepass(c);
		/* What killed preflights left (their journal rows). */
		TUI_BEST_EFFORT(tui_sandbox_probe_reclaim(c));
	}
	if (rc == 0)
		rc = lease_recover_reconcile_into(c->store, lk, c->state_dir,
		    probe, c, dry ? LEASE_RECONCILE_DRY_RUN : 0, &src, rep);
	if (rc < 0) {
		rc = tui_ctx_err(c, "%s", lease_store_errmsg(c->store));
		goto out;
	}
	for (size_t i = 0; !dry && i < rep->n; i++) {
		if (rep->v[i].kind == LEASE_FIND_HOLDER_LOST)
			stop_lost(c, rep->v[i].id);
	}
	/* A dead holder's minted credential: revoked now (SPEC 8.5). */
	if (!dry)
		tui_holder_cred_reconcile(c);
	if (c->json) {
		tui_ctx_print_json(lease_json_report(rep));
	} else {
		for (size_t i = 0; i < rep->n; i++) {
			const struct lease_finding *f = &rep->v[i];

			printf("%-16s %-24s ",
			    lease_recover_finding_name(f->kind),
			    f->id[0] ? f->id : "-");
			if (f->detail != NULL)
				tui_ctx_put_escaped(stdout, f->detail,
				    strlen(f->detail));
			printf("\n");
		}
		if (rep->n == 0)
			printf("nothing to reconcile\n");
	}
	rc = TUI_EXIT_OK;
out:
	lease_recover_report_free(rep);
	lease_git_shutdown();
	lease_lock_release(lk);
	return rc;
}

const struct tui_cmd tui_cmd_reconcile = {
	.name = "reconcile",
	.usage = "[--dry-run] [--json]",
	.help = "Reconcile the journal with what exists, under the "
		"state lock:\nholders (PID, start time and a status ping with "
		"a deadline), workspaces,\nreview worktrees and branches. A "
		"lease whose holder is dead or wedged fails\nwith holder_lost "
		"and its processes are stopped; its workspace is kept. A\n"
		"resource without a lease is reported as an orphan; after two "
		"consistent\ninventories 'corral gc ID' may remove it. An "
		"apply that was interrupted is\nfinished when its branch holds "
		"the new commit, else undone; lock files and\nworktree entries "
		"a killed corral left in the repository are removed (never\n"
		"the operator's own). --dry-run changes nothing.",
	.exec = reconcile_exec,
};

static int
gc_exec(struct tui_ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "older-than", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	struct lease_lock *lk = NULL;
	struct lease_orphan_src src = { src_list, src_remove, c };
	const char *older = NULL;
	int64_t age = 0;
	size_t removed = 0;
	int ch, rc;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		if (ch == 'o')
			older = optarg;
		else
			return tui_ctx_usage(c, "unknown or incomplete option "
			    "'%.64s'", argv[optind - 1]);
	}
	if ((older == NULL) == (optind == argc) ||
	    (older == NULL && optind != argc - 1))
		return tui_ctx_usage(c, "expected exactly one of: ID, "
		    "--older-than DURATION");
	if (older != NULL && tui_duration_parse(older, &age) < 0)
		return tui_ctx_usage(c,
		    "bad duration '%.64s' (e.g. 90s, 10m, 2h, "
		    "7d)", older);
	/* a check run's ID too: reconcile lists a lost run's sandbox */
	if (older == NULL && !lease_id_valid(argv[optind]) &&
	    !lease_id_run_valid(argv[optind], NULL)) {
		fprintf(stderr, "corral gc: '");
		tui_ctx_put_escaped(stderr, argv[optind], strlen(argv[optind]));
		fprintf(stderr, "' is not a lease or check run ID (gc takes "
				"an exact ID, never a name or pattern)\n");
		return TUI_EXIT_USAGE;
	}
	if (tui_ctx_store(c) == NULL)
		return TUI_EXIT_FAIL;
	if ((rc = lease_lock_acquire(c->state_dir, RECOVER_LOCK_MS, &lk)) < 0)
		return tui_ctx_err(c, "state lock: %s", lease_strerror(rc));
	lease_git_init();
	if (older != NULL) {
		/* Stored credentials of dead holders: revoked first. */
		tui_holder_cred_reconcile(c);
		rc = lease_recover_gc_older_than(c->store, lk, c->state_dir,
		    age,
		    &removed);
	} else {
		struct lease_record r;
		char err[512];

		/* A sandbox's runtime and bounded workspace go first. */
		rc = 0;
		if (lease_record_get(c->store, argv[optind], &r) == 0) {
			/* A stored credential is revoked, or gc refuses. */
			if (r.mode == LEASE_MODE_SANDBOXED &&
			    lease_fsm_state_final(r.state) &&
			    ((rc = tui_holder_cred_revoke(c, r.id, err,
			    sizeof err)) < 0 ||
			    (rc = tui_sandbox_teardown(c, c->store, r.id, err,
			    sizeof err)) < 0 ||
			    (rc = tui_sandbox_workspace_release(c, r.id, err,
			    sizeof err)) < 0))
				fprintf(stderr, "corral gc: %s\n", err);
			/* trusted_local: what is left of its processes */
			if (r.mode == LEASE_MODE_TRUSTED_LOCAL &&
			    lease_fsm_state_final(r.state))
				tui_cmd_end_tracked(c, &r, "gc");
			lease_record_clear(&r);
		}
		if (rc == 0)
			rc = lease_recover_gc_id_with(c->store, lk,
			    c->state_dir,
			    argv[optind], &src);
	}
	lease_git_shutdown();
	lease_lock_release(lk);
	/* tui_ctx_err gives the exit code: a refusal fails */
	if (rc < 0)
		return tui_ctx_err(c, "%s", lease_store_errmsg(c->store)[0] ?
		    lease_store_errmsg(c->store) : lease_strerror(rc));
	if (older != NULL) {
		printf("removed %zu lease(s)\n", removed);
		/* and the throwaway repositories demos left (issue 21) */
		if (tui_cmd_demo_prune(c, age) < 0)
			return TUI_EXIT_FAIL;
	} else
		printf("removed %s\n", argv[optind]);
	return TUI_EXIT_OK;
}

const struct tui_cmd tui_cmd_gc = {
	.name = "gc",
	.usage = "ID | --older-than DURATION",
	.help = "Remove a finished lease completely (branch, worktree, "
		"workspace, lease\ndirectory and journal rows; its ID is never "
		"reused), or the orphans of an\nID seen by two consecutive "
		"inventories: a lease's, or a check run's\n(LEASE.MS.N, as "
		"reconcile lists it). An exact, validated ID only — never\na "
		"pattern. --older-than removes every finished lease whose "
		"cleanup is\nconfirmed and that has not changed for DURATION "
		"(90s, 10m, 2h, 7d), then the\ndemo repositories no lease "
		"uses any more that are as old.",
	.exec = gc_exec,
};
