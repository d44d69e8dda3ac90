/*
 * lease.h: the public interface of the lease module (STYLE A), in blocks
 * per .c file: error codes (error.c), lease IDs (id.c), the pure lease
 * state machine and state names (fsm.c), the SQLite journal: its handle
 * (store.c), the lease rows (record.c), resources (resource.c) and the
 * transitions log (event.c); hash-chained receipts (receipt.c), git
 * through libgit2 (git.c), paths under the state directory (path.c),
 * provisioning and teardown building blocks (provision.c), the crash-test
 * hook (fault.c), the state-directory lock (lock.c), reconciliation and gc
 * (recover.c), process facts (proc.c) and JSON views for the command line
 * (json.c). The result pipeline (SPEC 7) is lease/result/, declared in
 * lease/result/result.h.
 *
 * Nothing here exposes a libgit2 or SQLite type (STYLE I.6). The core API
 * is synchronous and handle-based; errors are negative ints: -errno or the
 * LEASE_E* codes below, with the message on the handle (lease_store_errmsg,
 * lease_git_errmsg). docs/schema.md describes the database, the lease
 * states and recovery.
 */
#ifndef CORRAL_LEASE_H
#define CORRAL_LEASE_H

#include <stdbool.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LEASE_NODISCARD __attribute__((warn_unused_result))

struct json_t;		/* jansson's json_t */
struct lease_store;
struct lease_git;
struct lease_lock;

/* ------------------------------------------------------------------ */
/* error.c: error codes and their names (STYLE C.1)                   */

/* Errors: negative errno for OS failures, these below for our own. */
enum {
	LEASE_EBASE = -21000,
	LEASE_EBADTRANSITION,	/* illegal lease state transition (SPEC 5.1) */
	LEASE_ENOTFOUND,	/* no such lease (or object) */
	LEASE_EBADID,		/* malformed lease ID */
	LEASE_ECORRUPT,		/* database corrupt, truncated or foreign */
	LEASE_ESCHEMA,		/* database written by a newer corral */
	LEASE_ELOCKED,		/* database or state lock busy past timeout */
	LEASE_EREADONLY,	/* state directory or database is read-only */
	LEASE_EDB,		/* any other SQLite failure */
	LEASE_ENOTREPO,		/* not a git repository */
	LEASE_EBARE,		/* a bare repository (no checkout to lease) */
	LEASE_EOWNER,		/* repo owned by another user, not named */
	LEASE_EBADBASE,		/* base does not resolve to a commit */
	LEASE_EBRANCHEXISTS,	/* branch corral/<id> already exists */
	LEASE_EEXIST,		/* a path that must be new already exists */
	LEASE_EGIT,		/* any other libgit2 failure */
	LEASE_ETAMPERED,	/* receipt chain fails verification */
	LEASE_EBUSY,		/* the lease is live: refused */
	LEASE_ENOTREMOVABLE,	/* orphan not yet seen by two inventories */
	LEASE_ETOOLARGE,	/* the base does not fit the workspace */
};

/* Codes lease/result/ returns (lease_strerror names them too). */
enum {
	LEASE_ERESULT_BASE = LEASE_EBASE + 100,
	LEASE_EINVALID,		/* the result failed the gate: quarantined */
	LEASE_ENORESULT,	/* the lease has no materialised result */
	LEASE_ESTALE,		/* corral/<id> or the review worktree no
				   longer match the recorded commit */
	LEASE_EUNREVIEWED,	/* the recorded commit was not reviewed */
	LEASE_ECHECKEDOUT,	/* the target branch is checked out */
	LEASE_EADVANCED,	/* the target moved: back to review */
	LEASE_ENOAPPLY,		/* the patch no longer applies */
	LEASE_EHUNKS,		/* bad --hunks list */
	LEASE_ETARGET,		/* no usable target branch */
};

/*
 * lease_strerror: a short static description of any code this module
 * returns (LEASE_E* or -errno). Never NULL.
 */
const char *lease_strerror(int);

/* ------------------------------------------------------------------ */
/* id.c: lease IDs (SPEC 2)                                           */

/* "YYYYMMDD-HHMMSS-mmm-xxxx", UTC, 4 lowercase hex random characters. */
#define LEASE_ID_LEN 24
/* A check run's ID at most: "<lease ID>.<ms>.<n>" (lease_id_run_valid). */
#define LEASE_RUN_ID_MAX (LEASE_ID_LEN + 1 + 19 + 1 + 10)
/* "corral/" + ID */
#define LEASE_BRANCH_PREFIX "corral/"
#define LEASE_BRANCH_LEN (7 + LEASE_ID_LEN)

/*
 * lease_id_new: write a fresh ID for the current UTC time with 16 bits from
 * getrandom(2) into out (NUL-terminated). IDs sort by time as strings.
 * Uniqueness across the journal is enforced by lease_record_insert, which
 * also guarantees an ID is never reused. Returns 0 or -errno.
 */
LEASE_NODISCARD int lease_id_new(char out[LEASE_ID_LEN + 1]);

/*
 * lease_id_format: the ID for ms (milliseconds since the epoch, UTC) and
 * the random part rnd. Deterministic; for tests and lease_id_new. Returns
 * 0, or -EINVAL for a time outside years 1970..9999.
 */
LEASE_NODISCARD int lease_id_format(char out[LEASE_ID_LEN + 1], int64_t ms,
    uint16_t rnd);

/*
 * lease_id_valid: true only for a string of exactly the ID format (digits
 * in range, '-' separators, lowercase hex). It therefore never contains a
 * path separator, a dot or a glob character; every function below that
 * accepts an ID checks it and returns LEASE_EBADID when this is false.
 */
bool lease_id_valid(const char *);

/*
 * lease_id_run_valid: true only for a check run's ID, "<lease ID>.<ms>.<n>"
 * (both parts decimal digits, at most 19 and 10 of them: what the check
 * runner names a run's sandbox). lease (optional) gets the lease's ID.
 * Like a lease ID it never holds a path separator or a glob character.
 */
bool lease_id_run_valid(const char *, char lease[LEASE_ID_LEN + 1]);

/*
 * lease_id_branch: "corral/<id>" into out. Returns 0 or LEASE_EBADID.
 */
LEASE_NODISCARD int lease_id_branch(char out[LEASE_BRANCH_LEN + 1],
    const char *id);

/* Milliseconds since the epoch (CLOCK_REALTIME). */
int64_t lease_id_now_ms(void);
/* Milliseconds on CLOCK_MONOTONIC: for timeouts and rates. */
uint64_t lease_mono_ms(void);

/* ------------------------------------------------------------------ */
/* fsm.c: lease states, events, activity, cleanup (SPEC 5.1, 5.2)     */

enum lease_state {
	LEASE_STATE_PROVISIONING,
	LEASE_STATE_RUNNING,
	LEASE_STATE_RESULT_READY,
	LEASE_STATE_APPLIED,
	LEASE_STATE_REJECTED,
	LEASE_STATE_FAILED,
	LEASE_STATE_CANCELLED,
	LEASE_STATE_COUNT
};

enum lease_event {
	LEASE_EV_START,		/* provisioning -> running */
	LEASE_EV_RESULT,	/* running -> result_ready */
	LEASE_EV_APPLY,		/* result_ready -> applied */
	LEASE_EV_REJECT,	/* result_ready -> rejected */
	LEASE_EV_FAIL,		/* provisioning | running -> failed */
	LEASE_EV_CANCEL,	/* provisioning | running -> cancelled */
	LEASE_EV_COUNT
};

enum lease_activity {
	LEASE_ACT_STARTING,
	LEASE_ACT_WORKING,
	LEASE_ACT_PROMPT,
	LEASE_ACT_BLOCKED,
	LEASE_ACT_DONE,
	LEASE_ACT_FAILED,
	LEASE_ACT_CANCELLED,
	LEASE_ACT_COUNT
};

enum lease_cleanup {
	LEASE_CLEANUP_NONE,
	LEASE_CLEANUP_PENDING,
	LEASE_CLEANUP_CONFIRMED,
	LEASE_CLEANUP_FAILED,
	LEASE_CLEANUP_COUNT
};

enum lease_mode {
	LEASE_MODE_SANDBOXED,
	LEASE_MODE_TRUSTED_LOCAL,
	LEASE_MODE_COUNT
};

/*
 * lease_fsm_next: the SPEC 5.1 transition function, pure. On success
 * stores the next state in *next and returns 0; an illegal pair returns
 * LEASE_EBADTRANSITION and leaves *next untouched. result_ready never goes
 * back to running; applied, rejected, failed and cancelled are final.
 */
LEASE_NODISCARD int lease_fsm_next(enum lease_state cur, enum lease_event ev,
    enum lease_state *next);

/* lease_fsm_state_final: applied, rejected, failed or cancelled. */
bool lease_fsm_state_final(enum lease_state);

/*
 * Names are the lower-case words of SPEC 5.1/5.2 and 11 ("result_ready",
 * "trusted_local"). *_name returns a static string ("?" if out of range);
 * *_parse returns 0 and sets *out, or -EINVAL for an unknown word.
 */
const char *lease_fsm_state_name(enum lease_state);
int lease_fsm_state_parse(const char *, enum lease_state *out);
const char *lease_fsm_event_name(enum lease_event);
int lease_fsm_event_parse(const char *, enum lease_event *out);
const char *lease_fsm_activity_name(enum lease_activity);
int lease_fsm_activity_parse(const char *, enum lease_activity *out);
const char *lease_fsm_cleanup_name(enum lease_cleanup);
int lease_fsm_cleanup_parse(const char *, enum lease_cleanup *out);
const char *lease_fsm_mode_name(enum lease_mode);
int lease_fsm_mode_parse(const char *, enum lease_mode *out);

/* ------------------------------------------------------------------ */
/* store.c: the journal's handle (SPEC 9.1)                           */

/* Schema version this build writes (PRAGMA user_version). */
#define LEASE_SCHEMA_VERSION 5
/* Default busy timeout: holders and commands write from many processes. */
#define LEASE_BUSY_MS 5000

struct lease_store_opts {
	int busy_ms;		/* 0: LEASE_BUSY_MS */
	int max_version;	/* 0: LEASE_SCHEMA_VERSION; tests: 1 */
	/*
	 * > 0: the handle's page cache holds at most so many KiB (from
	 * before the file check on), for a long-lived process that keeps a
	 * handle open and writes little (a lease's holder); 0: SQLite's.
	 */
	int cache_kib;
};

/*
 * lease_store_open: open (creating if absent) the journal at path, set WAL,
 * synchronous=FULL, foreign keys and the busy timeout, check the file
 * (quick_check) and migrate the schema to LEASE_SCHEMA_VERSION. An
 * existing file is never recreated or overwritten: a corrupt, truncated or
 * foreign file gives LEASE_ECORRUPT, a newer schema LEASE_ESCHEMA, a lock
 * held past the timeout LEASE_ELOCKED, a read-only directory or file
 * LEASE_EREADONLY, a full disk -ENOSPC; each message names the file. On
 * any return *out is set to a handle (NULL only on -ENOMEM, or -EINVAL
 * for an empty path) that carries the message and must be closed with
 * lease_store_close; after a failure only errmsg and close may be used.
 */
LEASE_NODISCARD int lease_store_open(struct lease_store **out,
    const char *path);
LEASE_NODISCARD int lease_store_open_ex(struct lease_store **out,
    const char *path, const struct lease_store_opts *);

/*
 * For a process that keeps handles open and writes little (a lease's
 * holder): no handle allocates its page cache ahead in bulk, every cache
 * grows page by page (the file check's scratch tables too). Called before
 * the first open; 0 or LEASE_EDB.
 */
LEASE_NODISCARD int lease_store_config_lean(void);

/* lease_store_close: finalize statements and close; NULL is a no-op. */
void lease_store_close(struct lease_store *);

/* The last error message (never NULL; "" when none), owned by s. */
const char *lease_store_errmsg(const struct lease_store *);
/* The database path given to open. */
const char *lease_store_path(const struct lease_store *);
/* PRAGMA user_version of the open file. */
int lease_store_version(struct lease_store *);
/* Change the busy timeout (ms > 0). Returns 0 or LEASE_EDB. */
int lease_store_set_busy_timeout(struct lease_store *, int ms);

/* ------------------------------------------------------------------ */
/* record.c: the lease rows (SPEC 9.1)                                */

/* What a new lease asks for (lease_record_insert). Strings are copied. */
struct lease_spec {
	const char *name;	/* NULL or "": the ID; at most 128 bytes */
	enum lease_mode mode;
	const char *adapter;	/* "bwrap", "trusted_local", "command" */
	const char *isolation;	/* label shown to the operator */
	const char *repo;	/* repository directory or NULL */
	const char *policy;	/* policy text or NULL */
	const char *limits;	/* JSON object text or NULL */
	char *const *cmd;	/* NULL-terminated argv or NULL */
	/*
	 * Names are unique among live leases: with unique_name, a name a
	 * live lease has becomes NAME-2, NAME-3... (the first free one),
	 * chosen in the insert's own transaction, so two racing inserts
	 * never get the same one. The name given goes to name_out (NULL or
	 * LEASE_NAME_MAX + 1 bytes).
	 */
	bool unique_name;
	char *name_out;
};
#define LEASE_NAME_MAX 128	/* bytes of a lease's name */

/* One lease row. Strings are owned by the record (NULL when absent). */
/*
 * A lease's model usage (SPEC 8.5): the model gateway's totals, kept on
 * the lease row and moved with each model_request receipt in the same
 * transaction (lease_receipt_append_usage). What `corral ls --json` and
 * `show --json` print as "usage" and the console's cost column reads.
 */
struct lease_usage {
	int64_t requests;	/* model requests answered */
	int64_t input, output, cache_write, cache_read;	/* tokens */
	int64_t cost_nano;	/* USD x 1e9, of the requests of known cost */
	int64_t cost_unknown;	/* requests whose cost is unknown */
};

struct lease_record {
	char id[LEASE_ID_LEN + 1];
	char *name;
	enum lease_mode mode;
	char *adapter;
	char *isolation;
	enum lease_state state;
	enum lease_activity activity;
	bool unseen;
	char *failed_reason;
	enum lease_cleanup cleanup;
	char *repo;
	char *base;		/* commit OID, hex */
	char *base_ref;		/* full ref name, NULL for a bare commit */
	char *branch;
	char *worktree;
	char *workspace;
	char *sandbox_id;
	char *policy;
	char *limits;		/* JSON text */
	int64_t holder_pid;	/* 0: none */
	int64_t holder_start;	/* /proc start time (clock ticks), 0: none */
	int64_t created_at;	/* ms since the epoch */
	int64_t updated_at;
	char receipt_head[65];	/* hex SHA-256, "" when the chain is empty */
	int64_t receipt_len;
	char *result;		/* JSON text or NULL */
	char *cmd;		/* JSON array text or NULL */
	struct lease_usage usage;	/* zeros: no model request yet */
};

/* Text fields settable with lease_record_set_text. */
enum lease_field {
	LEASE_FIELD_NAME,
	LEASE_FIELD_ADAPTER,
	LEASE_FIELD_ISOLATION,
	LEASE_FIELD_REPO,
	LEASE_FIELD_BASE,
	LEASE_FIELD_BASE_REF,
	LEASE_FIELD_BRANCH,
	LEASE_FIELD_WORKTREE,
	LEASE_FIELD_WORKSPACE,
	LEASE_FIELD_SANDBOX_ID,
	LEASE_FIELD_POLICY,
	LEASE_FIELD_LIMITS,	/* must be JSON */
	LEASE_FIELD_RESULT,	/* must be JSON */
	LEASE_FIELD_COUNT
};

/*
 * lease_record_insert: persist a new lease in provisioning (SPEC 6.1) with a
 * fresh ID (retried on collision; IDs are kept in an ids table forever, so
 * one is never reused even after gc) and its first transition row, in one
 * transaction. The ID goes to id_out. -EINVAL for a bad spec (limits not
 * JSON, name too long, unknown mode); -EEXIST when unique_name finds 999
 * live leases with the name; store errors as for open.
 */
LEASE_NODISCARD int lease_record_insert(struct lease_store *,
    const struct lease_spec *, char id_out[LEASE_ID_LEN + 1]);

/*
 * lease_record_get: fill *out (which the caller clears with
 * lease_record_clear) with the lease's row. LEASE_EBADID, LEASE_ENOTFOUND.
 */
LEASE_NODISCARD int lease_record_get(struct lease_store *, const char *id,
    struct lease_record *out);

/* Free the record's strings and zero it; safe on a zeroed record. */
void lease_record_clear(struct lease_record *);

#define LEASE_LIST_ALL 0x1	/* include finished leases (corral ls --all) */

/*
 * lease_record_list: every lease in ID (= creation) order into a malloc'd
 * array (*out, *n; free with lease_record_list_free). Without LEASE_LIST_ALL,
 * only live leases: not final, or cleanup pending/failed (SPEC 9.3 keeps
 * those visible).
 */
LEASE_NODISCARD int lease_record_list(struct lease_store *, unsigned flags,
    struct lease_record **out, size_t *n);
void lease_record_list_free(struct lease_record *, size_t n);

/*
 * lease_record_transition: apply ev through lease_fsm_next and write the
 * new state plus its transition row (reason, e.g. a halt reason or
 * "holder_lost") in one IMMEDIATE transaction. A fail event stores reason
 * as failed_reason. Entering a final state sets cleanup to pending when
 * any resource of the lease is not yet removed (and records that too).
 * LEASE_EBADTRANSITION leaves the journal untouched. *next optional.
 */
LEASE_NODISCARD int lease_record_transition(struct lease_store *,
    const char *id, enum lease_event ev, const char *reason,
    enum lease_state *next);

/*
 * lease_record_set_activity: record a new activity and the deciding signal
 * (a transition row of kind "activity"); done/failed set unseen. Setting
 * the current activity again writes nothing and returns 0.
 */
LEASE_NODISCARD int lease_record_set_activity(struct lease_store *,
    const char *id, enum lease_activity, const char *signal);
/*
 * lease_record_set_activity_unlogged: the same without the transition
 * row, for a writer past its per-lease budget of rows (the holder counts
 * those instead, tui/runtime/tally.c).
 */
LEASE_NODISCARD int lease_record_set_activity_unlogged(struct lease_store *,
    const char *id, enum lease_activity);

/* lease_record_mark_seen: clear unseen. */
LEASE_NODISCARD int lease_record_mark_seen(struct lease_store *,
    const char *id);

/*
 * lease_record_set_cleanup: record a cleanup change with a reason (a
 * transition row of kind "cleanup"). Same value: no row, returns 0.
 */
LEASE_NODISCARD int lease_record_set_cleanup(struct lease_store *,
    const char *id, enum lease_cleanup, const char *reason);

/*
 * lease_record_transition_from: the same, only while the lease is still
 * in state from (compare and swap, one transaction): LEASE_EBUSY, the
 * journal untouched, when it has moved on since the caller read it.
 */
LEASE_NODISCARD int lease_record_transition_from(struct lease_store *,
    const char *id, enum lease_state from, enum lease_event,
    const char *reason, enum lease_state *next);

/*
 * lease_record_claim: a starting holder takes its lease: its PID and
 * start time and the start transition (provisioning -> running) in one
 * transaction, only while the lease is provisioning (LEASE_EBUSY
 * otherwise: reconciliation failed it first, and the agent must not
 * run). Ordered against reconcile's check by the journal's write lock.
 */
LEASE_NODISCARD int lease_record_claim(struct lease_store *, const char *id,
    pid_t pid, int64_t start, const char *reason);

/*
 * lease_record_set_text: set one text column (NULL clears it). LIMITS and
 * RESULT must be valid JSON (-EINVAL otherwise).
 */
LEASE_NODISCARD int lease_record_set_text(struct lease_store *,
    const char *id, enum lease_field, const char *value);

/*
 * lease_record_set_holder: record the holder's PID and /proc start time
 * (lease_proc_start) so a reused PID is never mistaken for it; pid 0
 * clears both.
 */
LEASE_NODISCARD int lease_record_set_holder(struct lease_store *,
    const char *id, pid_t pid, int64_t start);

/*
 * lease_record_delete: remove a lease row with its transitions, resources
 * and receipts (gc). Its ID stays in the ids table. Used by lease_gc_*;
 * refuses a live lease with LEASE_EBUSY.
 */
LEASE_NODISCARD int lease_record_delete(struct lease_store *, const char *id);

/* ------------------------------------------------------------------ */
/* resource.c: journaled resources (SPEC 9.2)                         */

/* Resources whose identity is journaled before they exist (SPEC 9.2). */
enum lease_resource {
	LEASE_RES_BRANCH,	/* identity "corral/<id>", scope the repo */
	LEASE_RES_WORKTREE,	/* review worktree path, scope the repo */
	LEASE_RES_LEASE_DIR,	/* $STATE/leases/<id> (0700) */
	LEASE_RES_WORKSPACE,	/* $STATE/leases/<id>/work (detached clone) */
	LEASE_RES_HOLDER,	/* "pid:start" */
	LEASE_RES_SOCKET,	/* socket path */
	LEASE_RES_CGROUP,	/* cgroup path */
	LEASE_RES_CREDENTIAL,	/* credential file or fingerprint */
	LEASE_RES_SANDBOX,	/* adapter sandbox ID */
	LEASE_RES_COUNT
};

enum lease_res_state {
	LEASE_RS_PLANNED,
	LEASE_RS_CREATED,
	LEASE_RS_REMOVED,
	LEASE_RS_COUNT
};

struct lease_resource_row {
	enum lease_resource kind;
	enum lease_res_state state;
	char *identity;
	char *scope;		/* NULL when none */
	int64_t at;
};

/*
 * Resources (SPEC 9.2): _plan records the identity (state planned) BEFORE
 * the caller creates the thing; _created and _removed move it on. Plan is
 * idempotent for the same (kind, identity) and refuses a removed one
 * (LEASE_EEXIST). _removed re-evaluates cleanup: a final lease whose
 * runtime resources (all kinds but branch and lease_dir) are all removed
 * gets cleanup confirmed in the same transaction. scope may be NULL.
 * Planning a branch, worktree, workspace or sandbox also sets the lease's
 * branch, worktree, workspace or sandbox_id column to the identity, unless
 * it is tagged ("TAG\nIDENTITY", a check run's resource).
 */
LEASE_NODISCARD int lease_resource_plan(struct lease_store *,
    const char *id, enum lease_resource, const char *identity,
    const char *scope);
LEASE_NODISCARD int lease_resource_created(struct lease_store *,
    const char *id, enum lease_resource, const char *identity);
LEASE_NODISCARD int lease_resource_removed(struct lease_store *,
    const char *id, enum lease_resource, const char *identity);

/* All resource rows of a lease (free with lease_resource_list_free). */
LEASE_NODISCARD int lease_resource_list(struct lease_store *,
    const char *id, struct lease_resource_row **out, size_t *n);
void lease_resource_list_free(struct lease_resource_row *, size_t n);

const char *lease_resource_name(enum lease_resource);
int lease_resource_parse(const char *, enum lease_resource *out);
const char *lease_resource_state_name(enum lease_res_state);
/* True for kinds that cleanup must remove (not branch, not lease_dir). */
bool lease_resource_runtime(enum lease_resource);

/* ------------------------------------------------------------------ */
/* probe.c: the preflight's own host resources (SPEC 9.2)             */

/* One probe resource the journal says may still be on the host. */
struct lease_probe_row {
	char *run;		/* the preflight's process, "pid:start" */
	char *kind;		/* the adapter's kind, e.g. "probe_cgroup" */
	char *identity;
	bool created;		/* false: planned, perhaps never made */
};

/*
 * _plan records (run, kind, identity) BEFORE the caller makes it (again:
 * no change), _created after, _removed deletes the row once it is gone.
 * 0, -EINVAL or a store error.
 */
LEASE_NODISCARD int lease_probe_plan(struct lease_store *, const char *run,
    const char *kind, const char *identity);
LEASE_NODISCARD int lease_probe_created(struct lease_store *,
    const char *run, const char *kind, const char *identity);
LEASE_NODISCARD int lease_probe_removed(struct lease_store *,
    const char *run, const char *kind, const char *identity);
/* Every row, oldest first (free with lease_probe_list_free). */
LEASE_NODISCARD int lease_probe_list(struct lease_store *,
    struct lease_probe_row **out, size_t *n);
void lease_probe_list_free(struct lease_probe_row *, size_t n);

/* ------------------------------------------------------------------ */
/* event.c: the transitions log (SPEC 9.1)                            */

/* One row of the transitions table (lease_event_list). */
struct lease_event_row {
	int64_t cursor;		/* global, increasing, never reused */
	const char *id;
	int64_t seq;		/* per lease, from 1 */
	int64_t at;		/* ms since the epoch */
	const char *kind;	/* "lease", "activity" or "cleanup" */
	const char *from;	/* NULL for the first row of a lease */
	const char *to;
	const char *reason;	/* NULL when none */
};

/* Called once per row; return non-zero to stop (that value is returned). */
typedef int (*lease_event_cb)(const struct lease_event_row *, void *ud);

/*
 * lease_event_list: transition rows with at >= since_ms and cursor >
 * after, oldest first, to cb (corral events; for --follow call again with
 * the last cursor seen, which *last receives, optional). id NULL: every
 * lease.
 */
LEASE_NODISCARD int lease_event_list(struct lease_store *, const char *id,
    int64_t since_ms, int64_t after, lease_event_cb cb, void *ud,
    int64_t *last);

/* ------------------------------------------------------------------ */
/* receipt.c: hash-chained receipts (SPEC 2, 9.1)                     */

/*
 * lease_receipt_append: append one entry {"seq","at","kind","fields"} to
 * the lease's chain. The stored text is canonical JSON (sorted keys,
 * compact, ASCII); hash = SHA-256(previous hash bytes, or 32 zero bytes,
 * || text). The row, and the lease's receipt_head/receipt_len, are
 * written in one IMMEDIATE transaction, so concurrent writers (several
 * processes) serialize and cannot fork the chain. fields is borrowed and
 * may be NULL (an empty object). Trusted code only. seq_out optional.
 */
LEASE_NODISCARD int lease_receipt_append(struct lease_store *,
    const char *id, const char *kind, struct json_t *fields,
    int64_t *seq_out);

/*
 * lease_receipt_append_usage: the same, and add *add to the lease row's
 * usage totals (struct lease_usage) in the same transaction: the model
 * gateway's model_request receipts (SPEC 8.5), so the row's totals are
 * always the sum of the receipts that moved them.
 */
LEASE_NODISCARD int lease_receipt_append_usage(struct lease_store *,
    const char *id, const char *kind, struct json_t *fields,
    const struct lease_usage *add, int64_t *seq_out);

/*
 * lease_receipt_verify: walk the chain from seq 1 and check every link,
 * every entry's embedded seq, and the end against the lease row's head and
 * length. Returns 0 when intact, LEASE_ETAMPERED (message says which entry
 * and why) for an edited entry, a removed or added entry, a truncated tail
 * or a rewritten chain. len and head_hex (65 bytes) are optional and get
 * what the walk computed.
 */
LEASE_NODISCARD int lease_receipt_verify(struct lease_store *,
    const char *id, int64_t *len, char *head_hex);

/*
 * lease_receipt_entries: the entries as a new JSON array (each entry
 * object plus "hash"); the caller owns *out (json_decref). When the chain
 * fails verification, returns LEASE_ETAMPERED with *out holding the
 * entries verified before the break.
 */
LEASE_NODISCARD int lease_receipt_entries(struct lease_store *,
    const char *id, struct json_t **out);
/*
 * lease_receipt_entries_window: the same, but only the first `first` and
 * the last `last` entries (every entry is still verified), so a long
 * chain costs a bounded amount of memory; *omitted (optional) gets how
 * many were left out between them.
 */
LEASE_NODISCARD int lease_receipt_entries_window(struct lease_store *,
    const char *id, int64_t first, int64_t last, struct json_t **out,
    int64_t *omitted);
/* What show and review list of a lease's receipts and transitions. */
#define LEASE_SHOW_FIRST 1000
#define LEASE_SHOW_LAST 1000

/* ------------------------------------------------------------------ */
/* git.c: libgit2 only, trusted side (SPEC 6.2-6.4)                   */

/*
 * lease_git_init / lease_git_shutdown: git_libgit2_init/shutdown (init
 * also keeps pack windows small: see git.c). The
 * composition root calls them once per process (counted by libgit2).
 */
int lease_git_init(void);
void lease_git_shutdown(void);

/*
 * lease_git_open: open the operator's repository at dir (NULL: ".";
 * found by searching upward from dir, as git does). *out is always set
 * (NULL only on -ENOMEM) and carries the message; free it with
 * lease_git_free. Errors: LEASE_ENOTREPO, LEASE_EBARE, LEASE_EOWNER,
 * LEASE_EGIT.
 *
 * Ownership: libgit2 1.5.1 run as root refuses a repository owned by
 * another user (as git's safe.directory does) and reports it as "not
 * found". The repository is first opened with the owner check on; if
 * that fails and the repository is owned by someone else, it is opened
 * with owner validation disabled only when dir is that repository's top
 * (or .git) directory, i.e. the operator named it. The option is
 * process-wide: it is switched off just around that open (and around the
 * worktree operations on that repository) and restored at once, so no
 * other thread of the process may open an untrusted repository meanwhile.
 * A foreign repository found above dir is refused (LEASE_EOWNER: name its
 * top directory). Never use this for repositories inside workspaces or
 * sandboxes.
 */
LEASE_NODISCARD int lease_git_open(struct lease_git **out, const char *dir);
void lease_git_free(struct lease_git *);
const char *lease_git_errmsg(const struct lease_git *);
/* The repository's working directory (absolute, with a trailing '/'). */
const char *lease_git_workdir(const struct lease_git *);

/*
 * lease_git_resolve: resolve base (a ref name or any commit-ish; NULL
 * means "HEAD") to a commit. oid_hex (41 bytes) gets the commit ID;
 * *ref_out gets a malloc'd full ref name (HEAD resolves to its branch,
 * e.g. "refs/heads/main") or NULL for a detached HEAD or a bare commit ID.
 * LEASE_EBADBASE when it names nothing or no commit.
 */
LEASE_NODISCARD int lease_git_resolve(struct lease_git *, const char *base,
    char oid_hex[41], char **ref_out);

/*
 * lease_git_set_owner: the state directory this handle works for (SPEC
 * 9.2; NULL: none, as opened). lease_git_branch_create then marks each
 * branch with it (the first message of the branch's reflog), and
 * lease_git_branches and lease_git_worktrees skip what is marked as
 * another's: a branch whose mark names another state directory, a
 * worktree registered outside state_dir/worktrees/. An unmarked branch
 * (an older corral's, or a repository without reflogs) is listed.
 */
void lease_git_set_owner(struct lease_git *, const char *state_dir);
/*
 * lease_git_branch_create: create corral/<id> at the commit oid_hex. An
 * existing branch is never moved: LEASE_EBRANCHEXISTS.
 */
LEASE_NODISCARD int lease_git_branch_create(struct lease_git *,
    const char *id, const char *oid_hex);
/*
 * lease_git_branch_delete: delete corral/<id> and its reflog; absent is 0
 * (idempotent); LEASE_EBUSY while a worktree has it checked out.
 */
LEASE_NODISCARD int lease_git_branch_delete(struct lease_git *,
    const char *id);
/* lease_git_branch_exists: 1, 0, or a negative error. */
int lease_git_branch_exists(struct lease_git *, const char *id);

/*
 * lease_git_worktree_add: add the review worktree named <id> at path (which
 * must not exist; its parent must) on corral/<id>, with nothing checked
 * out yet: the result is checked out there when it is made (SPEC 7.3), so
 * a running lease takes no second copy of the tree. LEASE_EEXIST when
 * path exists, LEASE_ENOTFOUND without the branch.
 */
LEASE_NODISCARD int lease_git_worktree_add(struct lease_git *,
    const char *id, const char *path);
/*
 * lease_git_worktree_remove: remove git's admin entry for the worktree
 * named <id> (.git/worktrees/<id>, even if its directory still exists or
 * is gone, and also one git itself cannot read), but only when it belongs
 * to the working tree at path: an entry of that name pointing anywhere
 * else is the operator's and is refused (LEASE_EBUSY). Absent is 0. It
 * never deletes a working tree: the caller removes the directory it
 * created (lease_provision_teardown does, at the path computed from the
 * ID).
 */
LEASE_NODISCARD int lease_git_worktree_remove(struct lease_git *,
    const char *id, const char *path);
/* 1 if git has an admin entry for the worktree <id>, 0 if not, or an error. */
int lease_git_worktree_exists(struct lease_git *, const char *id);

/* [git] history = all: every ancestor of the base. */
#define LEASE_HISTORY_ALL ULLONG_MAX

/*
 * lease_git_workspace_seed: create the sandbox workspace at path (which
 * must not exist; created 0700) as a detached clone of oid_hex: a new
 * repository whose own object database gets one pack, written by the
 * packbuilder, of the commit, its tree and `history` generations of its
 * ancestors (0: the commit alone; LEASE_HISTORY_ALL: all of them), with
 * .git/shallow naming the commits whose parents were left out, so the
 * commit keeps its ID and git log shows what is there. No hardlinks, no
 * alternates, no remote at all, nothing of the operator's index or
 * working tree; HEAD detached at the commit and checked out,
 * core.hooksPath=/dev/null and credential.helper="". LEASE_EEXIST when
 * path exists.
 */
LEASE_NODISCARD int lease_git_workspace_seed(struct lease_git *,
    const char *oid_hex, const char *path, unsigned long long history);

/* Called per branch corral/<x>: name is x (may be an invalid ID). */
typedef int (*lease_git_name_cb)(const char *name, void *ud);
/*
 * Every branch corral/<x> (x without '/') of the repository, but one the
 * handle's owner marks as another state directory's.
 */
LEASE_NODISCARD int lease_git_branches(struct lease_git *, lease_git_name_cb,
    void *ud);
/*
 * Every worktree name registered in the repository, but one registered
 * outside the handle's owner's worktrees/ directory.
 */
LEASE_NODISCARD int lease_git_worktrees(struct lease_git *,
    lease_git_name_cb, void *ud);

struct lease_diffstat {
	size_t files;
	size_t insertions;
	size_t deletions;
};
/* lease_git_diffstat: tree-to-tree stats between two commits (hex). */
LEASE_NODISCARD int lease_git_diffstat(struct lease_git *,
    const char *from_hex, const char *to_hex, struct lease_diffstat *out);

/*
 * lease_git_read_blob: the bytes of the regular file at path in the tree
 * of commit commit_hex -- never the worktree or the index (SPEC 8.6: a
 * repository's policy comes from the base commit) -- at most max bytes,
 * NUL-terminated in *buf (malloc'd), its length in *len (optional).
 * LEASE_ENOTFOUND (no such path), -EINVAL (a symlink, tree or gitlink),
 * -EFBIG (over max), LEASE_EBADBASE, LEASE_EGIT; the message on g.
 */
LEASE_NODISCARD int lease_git_read_blob(struct lease_git *,
    const char *commit_hex, const char *path, size_t max, char **buf,
    size_t *len);

/* ------------------------------------------------------------------ */
/* path.c: paths under the state directory (SPEC 9)                   */

/* Paths under the state directory (malloc'd, NULL on -ENOMEM). */
char *lease_path_db(const char *state_dir);		/* corral.db */
char *lease_path_worktree(const char *state_dir, const char *id);
char *lease_path_lease_dir(const char *state_dir, const char *id);
char *lease_path_workspace(const char *state_dir, const char *id);
/* $STATE/leases/<id>/result (malloc'd; NULL on a bad ID or -ENOMEM). */
char *lease_path_result(const char *state_dir, const char *id);

/* ------------------------------------------------------------------ */
/* provision.c: SPEC 6 steps 2-4 with journaling, and teardown        */

/*
 * lease_provision_git: for a lease in provisioning (inserted by the
 * caller, who holds the state lock), do SPEC 6 steps 2-4, each journaled
 * before it acts: resolve and record the base commit and ref (and the
 * repository's top directory), then for the branch, the review worktree
 * ($STATE/worktrees/<id>), the lease directory ($STATE/leases/<id>, 0700)
 * and the workspace ($STATE/leases/<id>/work): record the identity
 * (planned), create it, mark it created. On failure, what was created is
 * torn down again (journaled), the lease goes to failed with a named
 * reason ("not_a_repository", "bare_repository", "repository_owner",
 * "unknown_base", "base_too_large", "branch_exists", "disk_full": space
 * ran out while the workspace was seeded, "provision_error") and the
 * error is
 * returned with its message on the store handle. A refused request
 * (repository, base) creates nothing. seed says how much history the
 * workspace gets (NULL: the base commit alone). trusted_local leases do
 * not call this (SPEC 3). Needs lease_git_init.
 */
struct lease_seed {
	/* generations of the base's ancestors (lease_git_workspace_seed) */
	unsigned long long history;
	/* a base with a larger file, or whose files take more, is refused
	 * (LEASE_ETOOLARGE, "base_too_large") before anything is created;
	 * 0: no limit */
	unsigned long long max_file, max_tree;
	/*
	 * make: create the workspace directory at path, empty, on a
	 * filesystem of its own (a sandbox's bounded workspace), so the base
	 * is checked out straight into it; unmake: undo that before the
	 * directory is removed (idempotent). 0 or a negative code with a
	 * message in err. NULL: a plain directory.
	 */
	int (*make)(void *ud, const char *path, char *err, size_t errsz);
	int (*unmake)(void *ud, const char *path, char *err, size_t errsz);
	void *ud;
};
LEASE_NODISCARD int lease_provision_git(struct lease_store *,
    struct lease_lock *held, const char *state_dir, const char *id,
    const char *repo_dir, const char *base, const struct lease_seed *seed);

#define LEASE_TEARDOWN_RUNTIME 0x1	/* review worktree and workspace */
#define LEASE_TEARDOWN_HISTORY 0x2	/* branch and the lease directory */
#define LEASE_TEARDOWN_ALL 0x3		/* both */

/*
 * lease_provision_teardown: remove the lease's git and directory resources
 * named by what, idempotently: each removal is done, then journaled as removed
 * (re-running after a crash finds it gone and just journals it). Paths
 * are recomputed from state_dir and the ID, never taken from the row, and
 * directories are removed without following symlinks or crossing mounts.
 * Afterwards cleanup is confirmed when every runtime resource of a final
 * lease is removed (holder, socket, cgroup... are the caller's: it stops
 * them and calls lease_resource_removed first); a failed removal
 * sets cleanup failed and returns the error. SPEC 7.5 reject uses
 * LEASE_TEARDOWN_RUNTIME; gc uses LEASE_TEARDOWN_ALL.
 */
LEASE_NODISCARD int lease_provision_teardown(struct lease_store *,
    const char *state_dir, const char *id, unsigned what);

/* ------------------------------------------------------------------ */
/* release.c: a materialised result's workspace given back (issue 17)  */

/*
 * lease_release_workspace: under the lease's lock (waiting as apply does),
 * release the workspace of a sandboxed lease whose result is a commit
 * (result_ready, the result's commit recorded, SPEC 7.3): nothing reads it
 * again (review, hunks, checks and apply work from the commit, the patch
 * and the review worktree). The journal leads: the intent (the result's
 * "workspace" becomes "releasing", receipt workspace_release), then its
 * bounded image unmounted and removed and its directory removed, then
 * the outcome in one transaction (the workspace row removed, "workspace"
 * "released", receipt workspace_released). Reconcile finishes a release
 * whose intent is journaled. by names the caller in the receipts. 0 also
 * when there is nothing to release (another state, no commit, released).
 */
LEASE_NODISCARD int lease_release_workspace(struct lease_store *,
    const char *state_dir, const char *id, const char *by);

/* ------------------------------------------------------------------ */
/* fault.c: the crash-test hook                                       */

/*
 * Fault hook for crash tests: when built with CORRAL_TESTING (the CMake
 * option of the same name, on with CORRAL_TESTS), the environment
 * variable CORRAL_FAULT=<point> makes the process _exit(137) at that
 * point, e.g. "provision.branch.before", "provision.branch.created" (the
 * resource exists, the journal does not say so yet),
 * "provision.branch.after", "teardown.workspace.removed". Points are
 * listed in docs/schema.md. lease_fault_enabled says whether the hook is
 * compiled in; lease_fault_point is what the steps call.
 */
bool lease_fault_enabled(void);
void lease_fault_point(const char *point);
/*
 * ... and CORRAL_FAULT_WAIT=<point>, CORRAL_FAULT_DIR=<dir>: stop at the
 * point until the test lets go (<dir>/<point>.reached, then .go).
 */
void lease_fault_wait(const char *point);

/* ------------------------------------------------------------------ */
/* lock.c: the state-directory lock (SPEC 9.2)                        */

/*
 * lease_lock_acquire: take the exclusive lock $STATE/corral.lock (flock,
 * O_CLOEXEC) so reconciliation, gc and `corral new`'s provisioning run
 * one at a time. Waits up to timeout_ms (0: try once), then LEASE_ELOCKED.
 * flock locks belong to the open file: release before fork()ing anything
 * that does not exec at once. _release(NULL) is a no-op.
 */
LEASE_NODISCARD int lease_lock_acquire(const char *state_dir, int timeout_ms,
    struct lease_lock **out);
void lease_lock_release(struct lease_lock *);

/* How long apply, reject and gc wait for a lease's lock. */
#define LEASE_LOCK_WAIT_MS 30000

/*
 * lease_lock_lease: the lease's own lock, $STATE/locks/<id>.lock (made
 * 0700/0600 as needed), so apply, reject, gc and reconciliation of one
 * lease run one at a time; each re-reads the lease once it holds it.
 * lease_lock_ref: the lock of one target branch (ref, a full name) of the
 * repository repo, so one apply at a time moves it. Both wait up to
 * timeout_ms (0: try once), then LEASE_ELOCKED. Never take the state lock
 * while holding either (gc and reconciliation take them in the other
 * order). lease_lock_forget: remove the lock's file, then release it (gc
 * of the lease); a waiter that got the removed file opens it again.
 */
LEASE_NODISCARD int lease_lock_lease(const char *state_dir, const char *id,
    int timeout_ms, struct lease_lock **out);
LEASE_NODISCARD int lease_lock_ref(const char *state_dir, const char *repo,
    const char *ref, int timeout_ms, struct lease_lock **out);
void lease_lock_forget(struct lease_lock *);

/* ------------------------------------------------------------------ */
/* recover.c, recover_gc.c: reconciliation and gc (SPEC 9.2, 9.3)     */

enum lease_holder_status {
	LEASE_HOLDER_ALIVE,
	LEASE_HOLDER_DEAD,
	LEASE_HOLDER_WEDGED,	/* alive but missed the status ping deadline */
};

/*
 * Probe a lease's holder (PID + start time + a status ping with a
 * deadline: the caller's, see lease_proc_alive). Called for running
 * leases and for provisioning leases that have a holder recorded.
 */
typedef enum lease_holder_status (*lease_holder_probe_cb)(
    const struct lease_record *, void *ud);

enum lease_finding_kind {
	LEASE_FIND_LIVE,		/* holder alive: lease stays, once */
	LEASE_FIND_HOLDER_LOST,		/* now failed (holder_lost): the
					   caller stops its processes */
	LEASE_FIND_INTERRUPTED,		/* provisioning died: failed and torn
					   down */
	LEASE_FIND_CLEANED,		/* pending teardown finished */
	LEASE_FIND_CLEANUP_PENDING,	/* resources kept or teardown failed */
	LEASE_FIND_RESOURCE,		/* journal corrected from disk */
	LEASE_FIND_ORPHAN,		/* on disk without a lease */
	LEASE_FIND_INTENT,		/* an interrupted apply finished or
					   undone (intent.c) */
	LEASE_FIND_REPAIRED,		/* corral's own leftover removed from
					   the operator's .git */
	LEASE_FIND_COUNT
};

struct lease_finding {
	enum lease_finding_kind kind;
	char id[LEASE_RUN_ID_MAX + 1];	/* a lease's or a check run's ID, or
					   "" when the name is no valid ID */
	enum lease_resource resource;	/* RESOURCE and ORPHAN only */
	char *identity;			/* path or branch name, or NULL */
	char *scope;			/* repository, or NULL */
	int seen;			/* ORPHAN: consistent inventories */
	bool removable;			/* ORPHAN: `corral gc ID` may remove */
	char *detail;			/* one line for humans */
};

struct lease_report {
	struct lease_finding *v;
	size_t n;
	size_t cap;
	bool dry_run;
};

void lease_recover_report_free(struct lease_report *);
const char *lease_recover_finding_name(enum lease_finding_kind);

#define LEASE_RECONCILE_DRY_RUN 0x1

/*
 * lease_recover_reconcile: SPEC 9.2, under the caller's held lock. For each
 * running lease (and provisioning lease with a holder) call probe (NULL: PID
 * and start time only, lease_proc_alive): alive leaves it running (reported
 * once); dead or wedged fails it with holder_lost and cleanup pending (the
 * caller stops its processes; the workspace is kept for quarantine until
 * reject or gc). A provisioning lease without a holder was interrupted
 * (its creator held the lock and is gone): it fails with
 * provisioning_interrupted and is torn down; so `corral new` must record
 * the holder (lease_record_set_holder) before it releases the lock. Final
 * leases with cleanup pending are torn down again (rejected, applied,
 * cancelled) unless their holder is alive (it is still doing it). The
 * journal's planned/created resources are corrected from disk. Then the
 * state directory's worktrees/ and leases/ and the corral/<x> branches of
 * every repository in the journal are inventoried against the journal: a
 * resource without a lease is an orphan; the inventory is kept in the
 * database, and an orphan seen by two consecutive inventories is
 * removable, by lease_recover_gc_id only. With LEASE_RECONCILE_DRY_RUN nothing
 * is written or removed: the report says what would happen. *out (free with
 * lease_recover_report_free) gets the findings. Needs lease_git_init.
 */
LEASE_NODISCARD int lease_recover_reconcile(struct lease_store *,
    struct lease_lock *held, const char *state_dir,
    lease_holder_probe_cb probe, void *ud, unsigned flags,
    struct lease_report **out);

/*
 * Sandboxes outside lease/'s reach (SPEC 9.2): the composition root asks
 * each sandbox adapter what it holds. list() calls add(actx, identity,
 * scope, id) for each lease ID an adapter holds resources for (identity:
 * one line naming it, scope: the adapter); reconciliation inventories
 * each whose lease is absent, or final with no unremoved cgroup or
 * sandbox left in the journal (those are teardown's), as an orphan of
 * kind LEASE_RES_SANDBOX. gc calls remove() for each such orphan of the
 * exact ID once two consecutive inventories saw it.
 */
typedef int (*lease_orphan_add_fn)(void *actx, const char *identity,
    const char *scope, const char *id);
struct lease_orphan_src {
	int (*list)(void *ud, lease_orphan_add_fn add, void *actx);
	int (*remove)(void *ud, const char *identity, const char *scope,
	    const char *id);
	void *ud;
};
/* lease_recover_reconcile, with the sandboxes of src in the inventory. */
LEASE_NODISCARD int lease_recover_reconcile_with(struct lease_store *,
    struct lease_lock *held, const char *state_dir,
    lease_holder_probe_cb probe, void *ud, unsigned flags,
    const struct lease_orphan_src *src, struct lease_report **out);

/* An empty report (dry_run as given) for the *_into functions; NULL: ENOMEM. */
struct lease_report *lease_recover_report_new(bool dry_run);
/*
 * lease_recover_reconcile_into: lease_recover_reconcile_with, adding its
 * findings to rep (which the caller made with lease_recover_report_new and
 * frees). lease_recover_reconcile* first settle interrupted applies
 * (lease_recover_intents) and, for each lease whose lock they can take
 * (a lease whose apply, reject or gc is at work is left alone and
 * reported live), remove what a killed corral left of it in the
 * operator's .git: the lock file of corral/<id> and the admin entry of a
 * removed review worktree (never anything else: not another lock, not a
 * worktree that is not the lease's). A review worktree counts as present
 * while either its directory or its admin entry exists.
 */
LEASE_NODISCARD int lease_recover_reconcile_into(struct lease_store *,
    struct lease_lock *held, const char *state_dir,
    lease_holder_probe_cb probe, void *ud, unsigned flags,
    const struct lease_orphan_src *src, struct lease_report *rep);

/* recover_gc.c: gc (SPEC 9.3) */
/*
 * lease_recover_gc_id: `corral gc ID`, exact and validated (LEASE_EBADID, never
 * a pattern). A lease that is live (provisioning, running, result_ready) is
 * refused with LEASE_EBUSY; a finished one is torn down completely
 * (LEASE_TEARDOWN_ALL) and its row deleted. An ID without a lease removes
 * that ID's orphans when the last two inventories saw them
 * (LEASE_ENOTREMOVABLE otherwise; LEASE_ENOTFOUND when nothing has that
 * ID).
 */
LEASE_NODISCARD int lease_recover_gc_id(struct lease_store *,
    struct lease_lock *held, const char *state_dir, const char *id);
/* lease_recover_gc_id, removing the inventoried sandboxes of id through src. */
LEASE_NODISCARD int lease_recover_gc_id_with(struct lease_store *,
    struct lease_lock *held, const char *state_dir, const char *id,
    const struct lease_orphan_src *src);

/*
 * lease_recover_gc_older_than: gc every finished lease (applied, rejected,
 * failed, cancelled) with cleanup confirmed or none whose last update is older
 * than age_ms. *removed (optional) gets the count.
 */
LEASE_NODISCARD int lease_recover_gc_older_than(struct lease_store *,
    struct lease_lock *held, const char *state_dir, int64_t age_ms,
    size_t *removed);

/* ------------------------------------------------------------------ */
/* intent.c: changes to the operator's repository, journaled first    */

/* An apply's intent (SPEC 9.2): move ref of repo from old to new. */
struct lease_intent {
	int64_t seq;		/* per lease, from 1 */
	char *repo;		/* the repository's top directory */
	char ref[256];		/* full ref name of the target branch */
	char old[41], new_[41];	/* the target before and after, hex */
	char how[64];		/* "fast-forward", "already in the target" */
	int64_t at;		/* ms since the epoch */
};
void lease_intent_clear(struct lease_intent *);

/*
 * lease_intent_open: before the target moves, record the intent and the
 * receipt "applying" {target, old, new, how} in one transaction; *seq
 * gets its number. A lease has at most one open intent: another one
 * gives LEASE_EBUSY (reconcile settles it). The caller holds the lease's
 * lock (lease_lock_lease) from before open until after done or undo.
 * LEASE_ESCHEMA for a journal without intents (schema version < 3).
 */
LEASE_NODISCARD int lease_intent_open(struct lease_store *, const char *id,
    const char *repo, const char *ref, const char *old_hex,
    const char *new_hex, const char *how, int64_t *seq);
/*
 * lease_intent_done: after the move, in one transaction: the intent
 * closed, the result's "applied" {target, from, to, how, at}, the receipt
 * "applied" {target, from, to, how[, via]} and the transition to applied
 * (LEASE_EBADTRANSITION, and nothing written, unless result_ready).
 */
LEASE_NODISCARD int lease_intent_done(struct lease_store *, const char *id,
    int64_t seq, const char *via);
/*
 * lease_intent_undo: the target did not move (or was moved back): close
 * the intent with the receipt "apply_undone" {target, old, new, holds, why};
 * the lease keeps its state.
 */
LEASE_NODISCARD int lease_intent_undo(struct lease_store *, const char *id,
    int64_t seq, const char *why, const char *holds);
/* The lease's open intent: 1 (*out filled; clear it), 0 none, or error. */
LEASE_NODISCARD int lease_intent_get_open(struct lease_store *,
    const char *id, struct lease_intent *out);

/* intent_recover.c: the intents a reconcile settles */
/*
 * lease_recover_intents: under the state lock, settle every open intent
 * whose lease lock can be taken (an apply at work keeps its own; reported
 * live): a target holding the new commit finishes it (lease_intent_done,
 * via "reconcile"); any other value undoes it. A lock file on the target
 * that the killed apply left (libgit2's, holding the new commit's ID, or
 * empty and made after the intent) is removed first; any other one is the
 * operator's and leaves the intent open. Findings go to rep. With
 * LEASE_RECONCILE_DRY_RUN nothing is written or removed.
 */
LEASE_NODISCARD int lease_recover_intents(struct lease_store *,
    struct lease_lock *held, const char *state_dir, unsigned flags,
    struct lease_report *rep);

/* ------------------------------------------------------------------ */
/* proc.c: process facts for holder probes                            */

/*
 * lease_proc_start: the start time of pid (field 22 of /proc/<pid>/stat,
 * clock ticks since boot). -ESRCH when there is no such process.
 */
LEASE_NODISCARD int lease_proc_start(pid_t pid, int64_t *start);
/* lease_proc_alive: pid exists, is not a zombie, and started at start. */
bool lease_proc_alive(pid_t pid, int64_t start);

/* ------------------------------------------------------------------ */
/* json.c: JSON views (SPEC 11)                                       */

#define LEASE_JSON_FULL 0x1	/* corral show: add base, policy, result... */

/*
 * lease_json_record: the corral ls --json object (id, name, lease_state,
 * activity, unseen, mode, adapter, branch, worktree, workspace,
 * sandbox_id, holder_pid, cleanup, ...; absent values null). With
 * LEASE_JSON_FULL also base, base_ref, policy, limits, result (parsed),
 * failed_reason, cmd and receipt {length, head, verified: null}. Always
 * "usage": lease_json_usage of the row's totals. New reference; NULL on
 * -ENOMEM.
 */
struct json_t *lease_json_record(const struct lease_record *,
    unsigned flags);

/*
 * lease_json_usage: a lease's model usage as {"requests", "input",
 * "output", "cache_write", "cache_read" (tokens), "cost_usd" (a string,
 * lease_usd), "unknown_cost" (requests whose cost is unknown: never
 * counted as free)}. New reference; NULL on -ENOMEM.
 */
struct json_t *lease_json_usage(const struct lease_usage *);

/*
 * lease_usd: nano-USD as "D.DDDDDD" (micro-USD, rounded down), the form
 * of every cost corral prints.
 */
void lease_usd(int64_t nano, char *buf, size_t bufsz);

/*
 * lease_json_show: corral show --json: the full object with the chain
 * verified ("receipt": {"length","head","verified"}), plus "receipts"
 * (entries), "transitions" and "resources". *out is a new reference.
 */
LEASE_NODISCARD int lease_json_show(struct lease_store *, const char *id,
    struct json_t **out);

/* lease_json_report: a reconcile report as {"dry_run", "findings": [...]} */
struct json_t *lease_json_report(const struct lease_report *);

#endif
