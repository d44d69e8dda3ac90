/*
 * runtime_int.h: private declarations shared by the runtime's files
 * (STYLE A): the host side of a sandboxed lease that is neither pure
 * planning (sandbox-adapters/) nor journal (lease/): the per-lease uid
 * slot and the cgroups as journaled resources, the workspace handed to
 * the lease uid and back, the holder's private runtime mounts
 * (sandbox.c), the holder's side of a bwrap lease (holder_sbx.c) and of
 * a command lease (holder_cmd.c), the agent's endpoints (egress.c) and
 * the operator's credential hooks (holder_cred.c). Nothing outside
 * tui/runtime/ includes it.
 */
#ifndef CORRAL_TUI_RUNTIME_INT_H
#define CORRAL_TUI_RUNTIME_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"
#include "lease/lease.h"
#include "tui/runtime/runtime.h"
#include "tui/tui.h"

struct lease_store;
struct json_t;

/* ---- sandbox.c ------------------------------------------------------ */

/* Read a whole regular file of at most max bytes (NUL-terminated, malloc'd
 * in *out). 0, -EFBIG, -errno. */
int tui_sandbox_read_file(const char *path, size_t max, char **out,
    size_t *len);
/* Create path (0600, O_EXCL|O_NOFOLLOW) holding len bytes. 0 or -errno. */
int tui_sandbox_write_file(const char *path, const void *buf, size_t len);


struct sbx_adapter;
struct sbx_request;
struct sbx_resource;
struct sbx_provisioned;
struct sbx_command_config;
/*
 * An adapter's .provision for req->id, each resource journaled (SPEC 6,
 * 9.2: planned before it is made, created after, the crash points
 * provision.<kind>.before/created/after in between). 0 and *out, or a
 * negative code with the reason in err.
 */
int tui_sandbox_provision(struct tui_ctx *, struct lease_store *,
    const struct sbx_adapter *, const struct sbx_request *,
    struct sbx_provisioned *out, char *err, size_t errsz);
/*
 * A check run's exec zone (SPEC 7.3, 8.4): ad's .exec (bwrap: its
 * .provision) for req->id (the run's own ID, "<lease>.<n>"), req->workspace (its
 * copy, seeded into a bounded image of req->limits->disk), each resource
 * journaled under lease_id tagged with the run's ID and copy, so every
 * teardown of the lease (tui_sandbox_teardown: cancel, reject, gc,
 * reconcile) stops and removes it by that exact ID. 0 and *out (ad's
 * .detach), or a negative code with the
 * reason in err (what was made is journaled for the teardown).
 */
struct sbx_running;
int tui_sandbox_check_provision(struct tui_ctx *, struct lease_store *,
    const char *lease_id, const struct sbx_adapter *ad,
    const struct sbx_request *,
    struct sbx_running **out, char *err, size_t errsz);
/*
 * The command adapter's hooks from the operator's config into *cc
 * (pointing into *cf): 0, -EINVAL for a malformed config (err: FILE:LINE:
 * message), SBX_EPOLICY when a hook is missing (err names it), -errno.
 */
int tui_sandbox_command_config(struct tui_config *cf,
    struct sbx_command_config *cc, char *err, size_t errsz);
/*
 * adapter's .teardown of lease id's resources res[0..n), each removal
 * journaled (the workspace path and, for `command`, the hooks filled in).
 */
int tui_sandbox_adapter_teardown(struct tui_ctx *, struct lease_store *,
    const char *adapter, const char *id, const struct sbx_resource *res,
    size_t n, char *err, size_t errsz);

struct lease_resource_row;
struct sbx_resource;
/*
 * The adapter's resources among the journal's rows v[0..n) into res (n
 * entries at most; identities borrowed from v): with made those recorded
 * as made, else every one not yet removed. How many.
 */
size_t tui_sandbox_resources(const struct lease_resource_row *v, size_t n,
    bool made, struct sbx_resource *res);

struct sbx_policy;
struct sbx_policy_error;
struct sbx_limits;
/*
 * The same in two halves, so a holder rebuilds exactly the policy `corral
 * new` validated from the texts kept in the lease directory (the canonical
 * form is for hashing, not for reading back).
 */
struct tui_sandbox_policy_src {
	char *op_text;		/* NULL: the shipped defaults */
	char op_name[4096];
	char *file_text;	/* NULL: no --policy */
	char file_name[4096];
};
/*
 * The effective policy as INI text that sbx_policy_load reads back to the
 * same policy (the journal's `policy` column: the holder and the results
 * layer load it from there). malloc'd; NULL on -ENOMEM.
 */
char *tui_sandbox_policy_text(const struct sbx_policy *);
int tui_sandbox_policy_read(const char *file, struct tui_sandbox_policy_src *,
    struct sbx_policy_error *err);
int tui_sandbox_policy_build(const struct tui_sandbox_policy_src *,
    struct sbx_policy **out, struct sbx_policy_error *err);
void tui_sandbox_policy_src_clear(struct tui_sandbox_policy_src *);

/*
 * Host path of the program cmd0 names inside a bwrap zone: absolute paths
 * under /usr (or /bin, /sbin, /lib* through the merged-usr links), or a
 * bare name searched along the zone's PATH. malloc'd, or NULL when the
 * zone would not find it.
 */
char *tui_sandbox_zone_program(const char *cmd0);

/*
 * The adapter's steps journaled on lease id's resource rows (and, with
 * faults, the crash points of each step); sandbox_teardown.c's too.
 */
struct tui_sandbox_jsteps {
	struct lease_store *st;
	const char *id;
	bool faults;	/* provisioning: the crash points of each step */
	/* a check run's: its tag line before each identity (_ident) */
	const char *tag;
	size_t taglen;		/* of tag; 0: all of it */
	char buf[8192];
};

void tui_sandbox_jsteps_init(struct sbx_steps *, struct tui_sandbox_jsteps *,
    struct lease_store *, const char *id, bool faults);
/*
 * The journal identity of a check run's resource: its tag line, then the
 * adapter's identity (NULL when too long); the identity without a tag.
 */
const char *tui_sandbox_jsteps_ident(struct tui_sandbox_jsteps *,
    const char *ident);

/* ---- holder_journal.c: the holder's writes, off its loop ------------ */

/*
 * The holder's journal writes (SPEC 9.1): queued on its loop, written in
 * that order by one worker thread with its own handle, each kept and
 * retried until it is written (a busy journal, a full disk), so the loop
 * never waits on SQLite. Nothing here blocks but _wait and _free.
 */
struct tui_holder_journal;
/*
 * The page cache of each journal handle a holder keeps open (one per live
 * lease, for as long as it runs): SQLite's default would fill with the
 * whole file at the open's check (issue 17: ~1 MB a holder).
 */
#define TUI_HOLDER_STORE_CACHE_KIB 16
enum tui_holder_journal_state {
	TUI_HOLDER_JOURNAL_OK,
	TUI_HOLDER_JOURNAL_WAITING,	/* the write lock is busy */
	TUI_HOLDER_JOURNAL_UNWRITABLE,	/* disk full, I/O error, read-only */
};
enum tui_holder_journal_res {
	TUI_HOLDER_JOURNAL_PLAN,
	TUI_HOLDER_JOURNAL_CREATED,
	TUI_HOLDER_JOURNAL_REMOVED,
};
/* Run on the worker with its handle; a transient failure is retried. */
typedef int (*tui_holder_journal_fn)(struct lease_store *, void *ud);
typedef void (*tui_holder_journal_drained_cb)(void *ud);
struct uv_loop_s;
/* loop: where _when_drained calls back (NULL: never). 0 or -errno. */
int tui_holder_journal_new(struct tui_holder_journal **, const char *state_dir,
    const char *id, struct uv_loop_s *loop);
/* Each queues one write for the lease; fields is taken (NULL: {}). */
int tui_holder_journal_receipt(struct tui_holder_journal *, const char *kind,
    struct json_t *fields);
/* The same, and add (copied) to the lease row's model usage with it. */
int tui_holder_journal_receipt_usage(struct tui_holder_journal *,
    const char *kind, struct json_t *fields, const struct lease_usage *add);
/* logged false: the row only, no transition row (coalesced). */
int tui_holder_journal_activity(struct tui_holder_journal *,
    enum lease_activity, const char *why, bool logged);
int tui_holder_journal_transition(struct tui_holder_journal *,
    enum lease_event, const char *why);
int tui_holder_journal_holder(struct tui_holder_journal *, pid_t pid,
    int64_t start);
int tui_holder_journal_resource(struct tui_holder_journal *,
    enum tui_holder_journal_res, enum lease_resource, const char *identity);
int tui_holder_journal_call(struct tui_holder_journal *,
    tui_holder_journal_fn, void *ud);
/* The last write queued so far; _wait blocks until it is written. */
uint64_t tui_holder_journal_mark(struct tui_holder_journal *);
void tui_holder_journal_wait(struct tui_holder_journal *, uint64_t mark);
/*
 * cb on the loop once everything queued now is written. True when it
 * already is (cb is then not called).
 */
bool tui_holder_journal_when_drained(struct tui_holder_journal *,
    tui_holder_journal_drained_cb cb, void *ud);
/* Close the loop's handle (hooks.closing: before the loop's walk). */
void tui_holder_journal_detach(struct tui_holder_journal *);
/* What the status says; *queued entries waiting, err the last failure. */
enum tui_holder_journal_state tui_holder_journal_status(
    struct tui_holder_journal *, size_t *queued, char *err, size_t errsz);
const char *tui_holder_journal_state_name(enum tui_holder_journal_state);
/*
 * The finishing thread's writes (the result, its checks) wait for a full
 * disk: the status says unwritable with err until it is called with NULL.
 */
void tui_holder_journal_finish_blocked(struct tui_holder_journal *,
    const char *err);
/* Waits until everything queued is written, then stops the worker. */
void tui_holder_journal_free(struct tui_holder_journal *);

/* ---- holder_sbx.c: the holder's side ------------------------------------ */

struct tui_holder_sbx;
struct sbx_plan;
struct uv_loop_s;
/*
 * In `corral __holder` for a bwrap lease, through its adapter: read the
 * lease's uid slot and cgroups from the journal and its policy (and
 * prompt) from the lease directory, set up the private runtime mounts,
 * and build the plan (the adapter's, joined to the lease cgroups, data
 * fds opened). *out is set even on failure (free it with
 * tui_holder_sbx_free). 0 or a negative code with err filled.
 */
int tui_holder_sbx_prepare(struct tui_ctx *, const struct sbx_adapter *,
    const char *id, char *const *cmd, struct tui_holder_sbx **out,
    struct sbx_plan **plan, char *err, size_t errsz);
/* The output cap (bytes; 0: none) for the transcript. */
size_t tui_holder_sbx_output_cap(const struct tui_holder_sbx *);
/*
 * Start the limit timers and, when the policy allows any egress, the
 * lease's auditing proxy on the holder's loop (before pty_holder_run).
 * 0 or a negative code with err filled (the lease must not start).
 */
int tui_holder_sbx_start(struct tui_holder_sbx *, struct uv_loop_s *,
    char *err, size_t errsz);
/* The minted credential to scrub from the agent's output, or NULL. */
const char *tui_holder_sbx_secret(const struct tui_holder_sbx *);
struct pty_holder;
/* hooks.running / hooks.closing / hooks.signal_agent of the holder. */
void tui_holder_sbx_running(struct tui_holder_sbx *, struct pty_holder *);
void tui_holder_sbx_closing(struct tui_holder_sbx *);
int tui_holder_sbx_signal(struct tui_holder_sbx *, int sig);
/* After pty_holder_run: run the loop until the proxy has closed. */
void tui_holder_sbx_drain(struct tui_holder_sbx *, struct uv_loop_s *);
/* Holder events (hooks.event): a truncated transcript is the output cap. */
void tui_holder_sbx_event(struct tui_holder_sbx *, const char *kind,
    const char *detail);
/* Activity changes: the initial prompt once bound and at `prompt`. */
void tui_holder_sbx_activity(struct tui_holder_sbx *, const char *state,
    bool bound);
/* "limit_<name>" if a limit ended the agent (wait status given), or NULL. */
const char *tui_holder_sbx_exit_reason(struct tui_holder_sbx *, int wstatus);
/*
 * After the agent ended: teardown by exact ID with a receipt line, then
 * the credential's revoke (every exit path: tui_holder_sbx_free revokes
 * too when finish never ran). c: the context (and journal handle) to use,
 * the holder's or the finishing thread's own.
 */
int tui_holder_sbx_finish(struct tui_holder_sbx *, struct tui_ctx *c);
void tui_holder_sbx_free(struct tui_holder_sbx *);
/* The receipts written on the holder's loop go through q from now on. */
void tui_holder_sbx_set_journal(struct tui_holder_sbx *,
    struct tui_holder_journal *q);
/* The egress_summary receipt, once (before the holder lets go). */
void tui_holder_sbx_summary(struct tui_holder_sbx *);

/* ---- prices.c: the model gateway's price table (SPEC 8.5) -------------- */

#define TUI_PRICES_MAX 256
struct tui_price {
	char model[64];		/* a name or a prefix */
	uint64_t nano[4];	/* nano-USD a token: input, output,
				 * cache write, cache read */
};
struct tui_prices {
	char date[16];
	struct tui_price m[TUI_PRICES_MAX];
	size_t n;
};
struct sbx_gateway_usage;
int tui_prices_parse(const char *text, size_t len, struct tui_prices *,
    char *why, size_t whysz);
/* The operator's prices file, else models/prices; path gets which. */
int tui_prices_load(struct tui_ctx *, struct tui_prices *, char *path,
    size_t pathsz, char *why, size_t whysz);
/* The cost of u by the longest prefix of model: 0, -ENOENT (unknown). */
int tui_prices_cost(const struct tui_prices *, const char *model,
    const struct sbx_gateway_usage *u, uint64_t *nano);

/* ---- holder_gateway.c: the lease's model gateway (SPEC 8.5) ------------ */

struct tui_holder_gw;
/* add: what the receipt adds to the lease row's usage, or NULL. */
typedef void (*tui_holder_gw_receipt_fn)(void *ud, const char *kind,
    struct json_t *fields, const struct lease_usage *add);
typedef void (*tui_holder_gw_inflight_fn)(unsigned n, const char *stop,
    void *ud);
/* Model requests are held now for reason (spend_cap, usage_unparseable,
 * cost_unknown), or no longer (NULL: the operator raised the budget). */
typedef void (*tui_holder_gw_hold_fn)(const char *reason, void *ud);
/*
 * From agent.json's "gateway" (api, upstream, key_file, ca_file,
 * spend_cap): read the key (the key file, else minted: the minted
 * credential's value) and the price table; the socket goes in dir.
 * policy_cap: the lease policy's [model] spend_cap (nano-USD, 0: none);
 * the lower of it and the provider's holds. *out is set even on failure
 * (free it).
 */
int tui_holder_gw_prepare(struct tui_ctx *, struct json_t *cfg,
    const char *minted, uint64_t policy_cap, const char *lease_dir,
    const char *dir, struct tui_holder_gw **out, char *err, size_t errsz);
/* The real key (to scrub from every stream as a second line). */
const char *tui_holder_gw_key(const struct tui_holder_gw *);
/* Bind its socket into the zone and start the in-zone forwarder. */
int tui_holder_gw_plan(struct tui_holder_gw *, struct sbx_plan *);
/* Listen on the loop; receipts and the in-flight count through ud. */
int tui_holder_gw_start(struct tui_holder_gw *, struct uv_loop_s *,
    uid_t uid, gid_t gid, tui_holder_gw_receipt_fn,
    tui_holder_gw_inflight_fn, tui_holder_gw_hold_fn, void *ud, char *err,
    size_t errsz);
/* Its summary receipt, then stop; closed once every handle is. */
void tui_holder_gw_close(struct tui_holder_gw *);
bool tui_holder_gw_closed(const struct tui_holder_gw *);
void tui_holder_gw_free(struct tui_holder_gw *);

/* ---- holder_cred.c: the operator's credential hooks (SPEC 8.5) -------- */

#define TUI_HOLDER_CRED_CONF "credentials.ini"
/* sbx_cred_config with its own strings. */
struct tui_holder_cred_cfg {
	struct sbx_cred_config cfg;	/* .mint NULL: no credentials */
	char *mint, *revoke, *variable, *scope, *spend_cap;
};
/* $XDG_CONFIG_HOME/corral/credentials.ini (else ~/.config/...). */
int tui_holder_cred_path(char *buf, size_t bufsz);
/*
 * The [credentials] section (mint, revoke, variable, scope, spend_cap,
 * lifetime, timeout; seconds) of the operator's file: never from a
 * repository or a policy. No file: 0 with no mint. SBX_EPOLICY with err
 * naming the file for a malformed one or a bad combination.
 */
int tui_holder_cred_load(struct tui_holder_cred_cfg *, char *err, size_t errsz);
void tui_holder_cred_clear(struct tui_holder_cred_cfg *);
/* ---- holder_cmd.c: the holder's side of a command lease ------------- */

struct tui_holder_cmd;
/*
 * The plan of a lease of adapter ad: for `command`, the [command] hooks
 * from the operator's config and the lease's workspace go into req
 * (owned by *out, tui_holder_cmd_free) before ad->plan; for any other
 * adapter *out is NULL and this is ad->plan. 0 or a negative code.
 */
int tui_holder_cmd_plan(struct tui_ctx *, const struct sbx_adapter *ad,
    struct sbx_request *req, struct tui_holder_cmd **out,
    struct sbx_plan **plan);
/* After the agent ended: the teardown hook (journaled, a receipt line),
 * then, if the agent ran, the result (SPEC 7.1). */
void tui_holder_cmd_finish(struct tui_ctx *, const char *id, bool ran,
    const char *fail_reason);
void tui_holder_cmd_free(struct tui_holder_cmd *);

/* ---- track.c: the holder's side of a trusted_local lease's processes - */

/* An expected daemon's comm (agent.c, track.c): at most this many. */
#define TUI_DAEMON_MAX 8
#define TUI_COMM_MAX 16		/* a comm's 15 bytes and its NUL */
struct tui_track;
typedef void (*tui_track_done_cb)(void *ud);
/*
 * The plan of lease id for adapter ad: where its journal records a
 * tracking cgroup as made, the agent joins it before exec (ad's .attach
 * and .enter; *out owns it, tui_track_free); otherwise *out is NULL and
 * this is ad->plan (an untracked lease: its receipt said why). 0 or a
 * negative code.
 */
int tui_track_plan(struct tui_ctx *, const struct sbx_adapter *ad,
    const char *id, const struct sbx_request *req, struct tui_track **out,
    struct sbx_plan **plan);
/*
 * After the agent's exit or cancel, on the loop: every process left in
 * the cgroup gets SIGTERM, then SIGKILL 2 s later; done(ud) once none is
 * left or 5 s after the SIGKILL (then tui_track_receipt says how many
 * are left). done may run before this returns (none was left).
 */
void tui_track_end(struct tui_track *, struct uv_loop_s *,
    tui_track_done_cb done, void *ud);
/*
 * The comms of the daemons the agent's profile expects (n of them): those
 * processes are neither signalled nor waited for; they stay in the cgroup,
 * listed in the receipt, for reject or gc to end (SPEC 3).
 */
void tui_track_expect(struct tui_track *, const char (*comm)[TUI_COMM_MAX],
    int n);
/* Processes left that the profile expects (the cgroup must stay). */
size_t tui_track_expected_left(const struct tui_track *);
/*
 * {found, processes: [{pid, comm}], left, signals, expected: [{pid,
 * comm}]} of tui_track_end.
 */
struct json_t *tui_track_receipt(const struct tui_track *);
/*
 * Every process in its tracking cgroup, those that left the agent's
 * session too (*pids malloc'd): the holder's activity counts their CPU.
 */
int tui_track_procs(const struct tui_track *, pid_t **pids, size_t *n);
void tui_track_free(struct tui_track *);	/* NULL is a no-op */

/*
 * agent.c: the allowlist entry a configured endpoint URL stands for
 * ("host:port", or "localhost:PORT" for the loopback grant). 0, -EINVAL.
 */
int tui_agent_endpoint_entry(const char *url, char *entry, size_t entrysz);
/*
 * Does agent profile name reach its model through the lease's gateway (a
 * [provider API] section in the config for the API it speaks)?
 */
bool tui_agent_uses_gateway(struct tui_ctx *, const char *name);
/*
 * The daemons agent profile name expects to outlive its lease ([processes]
 * expected_daemon, by comm) into out[TUI_DAEMON_MAX]: how many (0 without
 * a profile or when it does not parse, which stderr says).
 */
int tui_agent_expected_daemons(struct tui_ctx *, const char *name,
    char (*out)[TUI_COMM_MAX]);

#endif /* CORRAL_TUI_RUNTIME_INT_H */
