/*
 * runtime.h: the runtime of a lease (STYLE A), as the command line uses
 * it: provisioning in SPEC 6 order (bringup.c), starting a detached
 * holder (spawn.c) and the holder process itself (holder_main.c), the
 * holder's liveness (probe.c), the notification hook it runs (notify.c),
 * the check runner and a lease's end (checks.c), and the host side of a
 * sandboxed lease that the doctor, reconcile and gc need (sandbox.c,
 * holder_cred.c). Private declarations: runtime_int.h.
 */
#ifndef CORRAL_TUI_RUNTIME_H
#define CORRAL_TUI_RUNTIME_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lease/lease.h"
#include "sandbox-adapters/sbx.h"
#include "tui/tui.h"

struct json_t;
struct lease_record;
struct lease_store;

/* ------------------------------------------------------------------ */
/* bringup.c: a sandboxed lease, SPEC 6 in order                      */

/* A sandboxed lease request (`corral new`). */
struct tui_bringup {
	const char *sandbox;	/* adapter: NULL or "bwrap", "command" */
	const char *name, *repo, *base, *policy_file, *agent, *prompt_file;
	char **cmd;
	int rows, cols;
	/* NULL: a renamed lease is said on stderr; else the name it got
	 * (TUI_NAME_MAX bytes: names are unique among live leases) */
	char *name_out;
};
/*
 * SPEC 6 for a bwrap or command lease; id gets the ID once inserted.
 * Returns the exit code: 0, 1, or a halt's exit class (SPEC 8.7).
 */
int tui_bringup_sandboxed(struct tui_ctx *, const struct tui_bringup *,
    char id[25]);

/* ------------------------------------------------------------------ */
/* agent.c: how a known agent runs sandboxed (agents/NAME.sandbox)    */

enum tui_agent_status {
	TUI_AGENT_OK = 0,
	TUI_AGENT_NOT_INSTALLED,	/* its command is not in PATH */
	TUI_AGENT_RUNTIME_NOT_FOUND,	/* its runtime (node...) is not */
	TUI_AGENT_ENDPOINT_INVALID,	/* the configured endpoint */
	TUI_AGENT_PROFILE_INVALID,	/* NAME.sandbox or a template */
};

struct tui_agent {
	char name[64];		/* the profile; "" when none applies */
	bool sandboxed;		/* it has a NAME.sandbox file */
	enum tui_agent_status status;
	char profile_file[4096];
	char command[256];	/* the profile's command */
	char hint[256];		/* how to install it; "" none */
	char exe[4096];		/* argv[0] the zone runs (host path) */
	char real[4096];	/* its installation, symlinks resolved */
	char install[4096];	/* mounted read-only; "" under /usr */
	char runtime[4096];	/* the runtime found; "" none */
	char runtime_dir[4096];	/* its bin directory outside /usr; "" */
	char endpoint[512];	/* as configured; "" none */
	char base_url[600];	/* the endpoint as the zone reaches it */
	char allow[300];	/* host:port the endpoint needs; "" */
	unsigned loopback_port;	/* the loopback port it needs; 0 */
	char api[16];		/* the model API it speaks; "" unknown */
	bool gateway;		/* reaches it through the lease's gateway */
	struct json_t *setup;	/* for the holder (LEASE_DIR/agent.json) */
};

/*
 * The agent profile of a lease (--agent NAME, or identified from cmd) and
 * what running it sandboxed means here. 0 (a->name "" when no profile
 * applies; a->sandboxed false when it has a rules file alone), -EINVAL
 * with a->status and why, -ENOMEM.
 */
int tui_agent_setup(struct tui_ctx *, const char *agent, char *const *cmd,
    struct tui_agent *a, char *why, size_t whysz);
/* Widen pol by a's install mounts and endpoint grant (sbx_policy_grant). */
struct sbx_policy;
int tui_agent_grant(const struct tui_agent *a, struct sbx_policy *pol,
    char *why, size_t whysz);
const char *tui_agent_status_name(enum tui_agent_status);
/*
 * egress.c: the agent profile of a lease (agent: --agent NAME, else
 * identified from cmd) into name ("" when none), and the model endpoints
 * it needs into *out (NULL-terminated, sbx_strv_free; NULL when it names
 * none): the one configured for it, else its rules' endpoints; for the
 * doctor's egress check (SPEC 8.7). 0 or -ENOMEM.
 */
int tui_egress_agent_endpoints(struct tui_ctx *, const char *agent,
    char *const *cmd, char *name, size_t namesz, char ***out);
/* The lease file that carries a->setup to the holder. */
#define TUI_AGENT_FILE "agent.json"
void tui_agent_clear(struct tui_agent *);

/* ------------------------------------------------------------------ */
/* spawn.c: starting a detached holder                                */

struct tui_spawn {
	const char *id;
	const char *sandbox;	/* adapter name */
	char *const *cmd;
	const char *cwd;
	const char *agent;	/* --agent PROFILE, or NULL */
	bool allow_control;
	int rows, cols;
	int owner_fd;		/* -1, or a socket to hand to the holder */
};

/*
 * Start the lease's holder (the corral-holder program), detached (its own session, reparented
 * away from the caller), and wait for its readiness line: 0 and *child_pid
 * when the agent runs, else a negative code with the reason in err.
 */
int tui_spawn_holder(struct tui_ctx *, const struct tui_spawn *,
    pid_t *child_pid, char *err, size_t errsz);
/*
 * The holder's malloc keeps no per-thread cache of freed chunks (issue 17:
 * ~90 kB an idle holder kept for good, which malloc_trim cannot give
 * back): glibc reads this only at exec, so spawn.c puts it in the
 * holder's environment, with TUI_HOLDER_TUNED_ENV saying it did, unless
 * the operator set GLIBC_TUNABLES; corral_holder.c takes both out again
 * before it starts anything.
 */
#define TUI_HOLDER_TUNABLES "glibc.malloc.tcache_count=0"
#define TUI_HOLDER_TUNED_ENV "CORRAL_HOLDER_TUNED"

/* ------------------------------------------------------------------ */
/* holder_main.c: the holder process (SPEC 2)                         */

/*
 * holder_main.c: `corral-holder ...` (main/corral_holder.c), the holder
 * process: argv as its main() got it.
 */
int tui_holder_main_run(int argc, char **argv);

/* ------------------------------------------------------------------ */
/* probe.c: liveness of holders (SPEC 9.2)                            */

enum tui_holder_state { TUI_HOLDER_ALIVE, TUI_HOLDER_DEAD, TUI_HOLDER_WEDGED };

/*
 * Probe the holder of rec: PID and start time, then a status ping with a
 * deadline. On ALIVE, *status_json (optional) gets the malloc'd status.
 * why (optional) gets a reason for DEAD/WEDGED.
 */
enum tui_holder_state tui_probe_holder(const struct tui_ctx *,
    const struct lease_record *, int timeout_ms, char **status_json,
    char *why, size_t whysz);

/* ------------------------------------------------------------------ */
/* notify.c: the notification hook, run by the holder (SPEC 5.6)      */

struct tui_notify;
struct uv_loop_s;

/*
 * Hooks of one holder on loop; their stdout and stderr go to log_fd
 * (the lease's holder.log; borrowed). Returns 0 or -ENOMEM.
 */
int tui_notify_new(struct tui_notify **, struct uv_loop_s *loop,
    const struct tui_config *, int log_fd);
/*
 * Run the hook for a lease entering state, if the config says so:
 * detached (its own session), argv sh -c 'HOOK "$@"' with ID STATE NAME,
 * env CORRAL_LEASE_ID, CORRAL_LEASE_NAME, CORRAL_STATE, and the deciding
 * signal and its evidence escaped (SPEC 4.7) in CORRAL_SIGNAL and
 * CORRAL_DETAIL; agent text is never part of the command line. Killed
 * (its process group) after the timeout. Returns 1 when started, 0 when
 * not configured for state, negative on failure (also logged).
 */
int tui_notify_fire(struct tui_notify *, const char *id, const char *name,
    const char *state, const char *signal, const char *detail);
/*
 * The question (JSON text, copied; NULL: none) the next tui_notify_fire
 * carries to its hook as CORRAL_QUESTION.
 */
void tui_notify_question(struct tui_notify *, const char *json);
/*
 * When the loop is done with (the holder's has ended): close the hooks'
 * handles and run the loop once for their close callbacks, wait for hooks
 * still running, each up to its deadline, kill what is left, free all.
 */
void tui_notify_free(struct tui_notify *);

/* ------------------------------------------------------------------ */
/* checks.c: the check runner and a lease's end (SPEC 7)              */

struct lease_check_run;
struct lease_check_outcome;
struct lease_result_policy;


/*
 * tui_checks_finish: the end of a sandboxed lease, the one call the
 * holder makes once its agent has ended and every process of the lease
 * has stopped, before the workspace is unmounted or removed (and the call
 * reconciliation makes for a lost holder, with fail_reason "holder_lost":
 * the result then goes to quarantine). The lease's policy gives the caps
 * and checks; checks run in the exec zone (tui_checks_run). Returns
 * lease_result_finish's code: 0 result_ready, LEASE_EINVALID quarantined,
 * another negative code on error (message on c->store). secret: the
 * lease's minted credential while the holder still has it, or NULL; a
 * result holding it is refused (LEASE_GATE_CREDENTIAL, SPEC 8.5).
 */
struct tui_checks_stop;
int tui_checks_finish(struct tui_ctx *, const char *id,
    const char *fail_reason, const char *secret, struct tui_checks_stop *);

/*
 * Stopping a lease's checks from another thread (the holder's loop while
 * tui_checks_finish runs on a worker, SPEC 5.5): once requested no check
 * starts, and the one running gets SIGKILL through its cgroups. Pass it to
 * tui_checks_finish (NULL: none).
 */
struct tui_checks_stop {
	pthread_mutex_t mu;
	bool requested;
	struct sbx_running *zone;	/* the run in progress, or NULL */
	const struct sbx_adapter *ad;	/* zone's */
};
void tui_checks_stop_init(struct tui_checks_stop *);
void tui_checks_stop_request(struct tui_checks_stop *);
void tui_checks_stop_destroy(struct tui_checks_stop *);

/*
 * The review-flag patterns: the shipped ones and the operator's
 * $XDG_CONFIG_HOME/corral/review-flags (it only adds), in *out
 * (lease_gate_rules_free). 0, or an error with err "FILE:LINE: what".
 */
struct lease_flag_rules;
int tui_checks_review_flags(struct lease_flag_rules *out, char *err,
    size_t errsz);

/*
 * The lease's policy as result caps and checks (sandbox-adapters' INI),
 * with c's journal for each run's resources and the secret its logs are
 * scrubbed of: the given one, else a credential still stored in the lease
 * directory (SPEC 8.5).
 */
struct tui_checks_env;
int tui_checks_env_new(struct tui_ctx *c, const struct lease_record *,
    const char *secret, struct tui_checks_env **out, char *err,
    size_t errsz);
/* Where tui_checks_run looks for a stop request (NULL: none). */
void tui_checks_env_stop(struct tui_checks_env *, struct tui_checks_stop *);
void tui_checks_env_free(struct tui_checks_env *);
const struct lease_result_policy *tui_checks_env_policy(
    const struct tui_checks_env *);
/*
 * A lease_check_run_cb (ud: the tui_checks_env): one check in the exec
 * zone (SPEC 7.3, 8.2, 8.4). The run gets an ID of its own under the
 * lease and, through its adapter's exec zone (.exec), each journaled
 * under the lease: a uid slot, cgroups with the lease's limits (memory
 * and swap, pids, cpu, freezer) and the copy lease/ made in the lease
 * directory moved into a bounded image (the lease's disk and inodes
 * limits). It runs there (.exec_plan, the copy bound privately,
 * sbx_exec_run) for at most [checks] timeout (never past wall_time); a
 * limit hit fails it with detail "limit: NAME" (timeout, memory, pids,
 * disk, inodes, file_size, cpu_time, output). The log is stdout then
 * stderr, scrubbed of the credential, capped. Then everything of the run
 * is torn down by exact ID; a teardown failure is the check's error and
 * leaves the lease's cleanup failed (retried by reject, gc, reconcile).
 */
int tui_checks_run(const struct lease_check_run *,
    struct lease_check_outcome *, void *ud);
/*
 * A lease_teardown_cb (ud: the tui_ctx) for reject and apply: unmounts a
 * bwrap lease's workspace image (sbx_workspace_release) so
 * lease_provision_teardown can journal it removed.
 */
int tui_checks_before_teardown(const char *id, void *ud);

/* ------------------------------------------------------------------ */
/* sandbox.c: the host side of a sandboxed lease                      */

/*
 * A helper binary on the host (corral-sbx-init, corral-sbx-probe,
 * corral-holder): the
 * environment variable env if set (tests), else next to the corral
 * binary, else ../libexec/corral/ from it, else ../sandbox-adapters/ (the
 * build tree). malloc'd absolute path of an executable regular file, or
 * NULL.
 */
char *tui_sandbox_helper_path(const struct tui_ctx *, const char *name,
    const char *env);

/* SHA-256 of a file's bytes as 64 hex digits. 0 or -errno. */
int tui_sandbox_sha256_file(const char *path, char hex[65]);

struct sbx_facts;
/*
 * Everything about the host a receipt records before a lease runs (SPEC
 * 8.7): the doctor's facts (kernel, bwrap path, version and hash, filter,
 * policy, cgroup mode, verified) plus the corral-sbx-init hash and the
 * agent binary's as resolved inside the zone (tui_sandbox_zone_program). A new
 * JSON object; NULL on -ENOMEM.
 */
/*
 * `corral doctor --agent`: whether the model gateway of an agent's
 * provider would start (agent.json's "gateway" object): {"provider",
 * "upstream", "key_source" (key_file or minted), "key_file", "ca_file",
 * "spend_cap_usd", "ok", "problem"}: the key file read as the holder
 * reads it (then wiped), or the mint hook configured, and the CA loaded.
 * New reference; NULL on -ENOMEM.
 */
struct json_t *tui_holder_gw_doctor(struct json_t *cfg);
struct json_t *tui_sandbox_facts_json(const struct sbx_facts *,
    const char *init,
    const char *cmd0);

struct sbx_policy;
struct sbx_policy_error;
/*
 * The effective policy of a lease (SPEC 8.6): the operator's
 * ($XDG_CONFIG_HOME/corral/policy.ini, else the shipped defaults), then
 * file (--policy, or NULL) which may only narrow it. 0 and *out, or
 * SBX_EPOLICY / SBX_EWIDER / -errno with err filled (file, line, message).
 */
int tui_sandbox_policy(const char *file, struct sbx_policy **out,
    struct sbx_policy_error *err);

/*
 * Before the workspace is removed (reject, gc, a failed provisioning):
 * unmount its bounded filesystem and remove the image. Absent or not
 * mounted: 0. The directory itself is left to lease_provision_teardown.
 */
int tui_sandbox_workspace_release(struct tui_ctx *, const char *id, char *err,
    size_t errsz);

/*
 * Runtime teardown of a sandboxed lease by exact ID (SPEC 9.2, 9.3,
 * SANDBOX.md 5.d) through its adapter's .teardown: every cgroup and
 * sandbox the journal names for id and that is not yet removed (bwrap:
 * kill what is left in the lease's cgroups, remove them, hand the
 * workspace back to root -- it is kept for extraction -- release the uid
 * slot; command: the teardown hook), each removal journaled after it is
 * done. Idempotent. 0, or the first error (message in err) with the
 * unremoved resources left as they are in the journal.
 */
int tui_sandbox_teardown(struct tui_ctx *, struct lease_store *, const char *id,
    char *err, size_t errsz);
/*
 * How many resources of lease id's check runs (journaled tagged check:)
 * are not removed: a check run its runner (a holder, an apply) did not
 * finish. 0 when none, or when the journal cannot say.
 */
size_t tui_sandbox_checks_left(struct lease_store *, const char *id);

/*
 * track.c: a trusted_local lease's processes, from the tracking cgroup
 * its journal records as made (SPEC 3). tui_track_count: how many now in
 * *n, -1 for a lease without one (another adapter, none could be made,
 * already removed); 0 or -errno. tui_track_list: them as [{pid, comm}]
 * (at most 32), or NULL.
 */
int tui_track_count(struct tui_ctx *, const struct lease_record *, long *n);
/*
 * At `corral new`: lease id's tracking cgroup through ad's .provision
 * (no limit; journaled before it exists) and a "tracking" receipt. Where
 * none can be made (no cgroup hierarchy, not root) the lease runs
 * untracked: the receipt and a line on stderr say why.
 */
struct sbx_adapter;
void tui_track_provision(struct tui_ctx *, struct lease_store *,
    const struct sbx_adapter *, const char *id);
struct json_t *tui_track_list(struct tui_ctx *, const struct lease_record *);

/*
 * The orphan inventory's sandbox source (lease_orphan_src, SPEC 9.2):
 * every adapter's .list (bwrap: this state directory's slots and unclaimed
 * lease cgroups; command: its list hook when configured), each ID added
 * with identity "<adapter>:<ID>" and scope the adapter. A list
 * that fails is reported and skipped (nothing unnamed is acted on).
 */
int tui_sandbox_orphans_list(struct tui_ctx *, lease_orphan_add_fn add,
    void *actx);
/*
 * The preflight's own host resources in the journal (SPEC 9.2): steps for
 * sbx_doctor_opts.steps writing rows of this process's run ("pid:start")
 * into c's journal, or NULL when it cannot be opened. j holds them: it
 * must outlive the run.
 */
struct tui_probe_journal {
	struct lease_store *st;
	char run[48];
	struct sbx_steps steps;
};
const struct sbx_steps *tui_sandbox_probe_steps(struct tui_ctx *,
    struct tui_probe_journal *j);
/*
 * Remove what preflights no longer running left on the host, by the
 * identity of each row (then the row), and what older ones left unjournaled
 * (by name). Run before every preflight and by reconcile. How many went,
 * or -EIO when the journal cannot be read.
 */
int tui_sandbox_probe_reclaim(struct tui_ctx *);
/* gc of one such orphan by exact ID: the adapter's .teardown of what it
 * holds (bwrap: the lease cgroups, the slot holding id). */
int tui_sandbox_orphan_remove(struct tui_ctx *, const char *identity,
    const char *adapter, const char *id);

/* ------------------------------------------------------------------ */
/* holder_cred.c: the operator's credential hooks (SPEC 8.5)          */

/*
 * Revoke lease id's stored credential if its directory still holds one
 * (a crashed holder), with a receipt line. 0 (none, or revoked) or the
 * hook's failure (the file stays for the next try).
 */
int tui_holder_cred_revoke(struct tui_ctx *, const char *id, char *err,
    size_t errsz);
/* ------------------------------------------------------------------ */
/* tally.c: the journal lines an agent can cause, capped per lease    */

#define TUI_TALLY_KINDS 16	/* kinds counted apart; the rest: "other" */

struct tui_tally_kind {
	char kind[32];
	unsigned long long recorded, unrecorded;
};

struct tui_tally {
	unsigned per_kind;	/* lines written per kind, the rest counted */
	/* a rate over every kind (0: none): a token bucket, in 1/1000s */
	unsigned burst, per_sec;
	unsigned long long tokens, last_ms;
	struct tui_tally_kind v[TUI_TALLY_KINDS];
	size_t n;
	unsigned long long other;	/* kinds past the table: never written */
};

void tui_tally_init(struct tui_tally *, unsigned per_kind);
/*
 * Past the cap, a rate: at most burst lines at once, then per_sec a
 * second, whatever the kind; the rest counted like lines past the cap.
 */
void tui_tally_set_rate(struct tui_tally *, unsigned burst, unsigned per_sec);
/* One more line of kind: true when it is to be written, else counted. */
bool tui_tally_admit(struct tui_tally *, const char *kind);
/* The same at a given time on a monotonic clock, in ms (tests). */
bool tui_tally_admit_at(struct tui_tally *, const char *kind,
    unsigned long long now_ms);
/* The lines counted and not written, every kind. */
unsigned long long tui_tally_total_unrecorded(const struct tui_tally *);
/* o["KIND"] = lines not written, for each kind with any; 0 or -1. */
int tui_tally_add_json(const struct tui_tally *, struct json_t *o);

/* For `corral reconcile`: tui_holder_cred_revoke for every sandboxed lease
 * whose holder is not alive. */
void tui_holder_cred_reconcile(struct tui_ctx *);

/* ---- prices.c: amounts of the model gateway's metering (SPEC 8.5) --- */

/* nano-USD as "1.234567" (micro-USD shown); "5.00" as nano-USD (0 or
 * -EINVAL: digits, at most nine decimals). */
void tui_prices_usd(uint64_t nano, char *buf, size_t bufsz);
int tui_prices_usd_parse(const char *s, uint64_t *nano);
/* LEASE_DIR/budget: the spend cap `corral budget` sets, in USD; the
 * holder reads it while the lease's model requests are held. */
#define TUI_GATEWAY_BUDGET_FILE "budget"

#endif /* CORRAL_TUI_RUNTIME_H */
