/*
 * lease_int.h: declarations shared by the lease module's files and nobody
 * else (STYLE A): the store handle's layout, statement cache, transaction
 * and error helpers, and the path helpers used by provision and recover.
 */
#ifndef CORRAL_LEASE_INT_H
#define CORRAL_LEASE_INT_H

#include <sqlite3.h>
#include <stdarg.h>

#include "lease/lease.h"

#define LEASE__STMT_CACHE 96
#define LEASE__ERRMSG 8192
#define LEASE__APPLICATION_ID 0x636f726c	/* "corl" */

struct lease__stmt {
	const char *sql;	/* a static string: the cache key */
	sqlite3_stmt *st;
};

struct lease_store {
	sqlite3 *db;
	char *path;
	int busy_ms;
	int version;
	struct lease__stmt stmts[LEASE__STMT_CACHE];
	char errmsg[LEASE__ERRMSG];
};

/* store.c */
/* Set the handle's message (printf-style). */
void lease__store_msg(struct lease_store *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/*
 * Map a SQLite result code to a module code and set the message
 * "<path>: <what>: <sqlite message>". Returns the code (negative).
 */
int lease__store_fail(struct lease_store *, int src, const char *what);
/* The cached statement for a static sql string, reset, bindings cleared. */
int lease__store_stmt(struct lease_store *, const char *sql,
    sqlite3_stmt **out);
/* sqlite3_exec with the error mapped. */
int lease__store_exec(struct lease_store *, const char *sql,
    const char *what);
/* Step a statement that returns no rows, then reset it. */
int lease__store_step_done(struct lease_store *, sqlite3_stmt *,
    const char *what);
/* BEGIN IMMEDIATE, then LEASE_EBADID / LEASE_ENOTFOUND checks on id. */
int lease__store_begin_lease(struct lease_store *, const char *id);
/* BEGIN IMMEDIATE / COMMIT / ROLLBACK (rollback ignores errors). */
int lease__store_begin(struct lease_store *);
int lease__store_commit(struct lease_store *);
void lease__store_rollback(struct lease_store *);
/*
 * Inside a transaction: append a transitions row for id with the next seq.
 */
int lease__store_log(struct lease_store *, const char *id, int64_t at,
    const char *kind, const char *from, const char *to, const char *reason);
/* Inside a transaction: 1 if the lease exists, 0 if not, or an error. */
int lease__store_exists(struct lease_store *, const char *id);
/* Inside a transaction: re-evaluate cleanup after a resource change. */
int lease__store_cleanup_eval(struct lease_store *, const char *id,
    int64_t at);
/* Inside a transaction: set one text column (no validation). */
int lease__store_set_text(struct lease_store *, const char *id,
    enum lease_field, const char *value, int64_t at);
/* malloc'd copy of a text column, or NULL (sets *oom on allocation failure) */
char *lease__col_text(sqlite3_stmt *, int col, bool *oom);

/* fs.c */
/* mkdir -p with mode for each created component. 0 or -errno. */
int lease__mkdirs(const char *path, mode_t mode);
/*
 * Remove path recursively without following symlinks and without crossing
 * into another filesystem; directories are made u+rwx first. Absent: 0.
 */
int lease__rmtree(const char *path);
/* 1 if path exists (lstat), 0 if not, -errno on other errors. */
int lease__exists(const char *path);

/* ------------------------------------------------------------------ */
/* results: gate.c, extract.c, result.c, apply.c (SPEC 7)               */

struct git_repository;
struct git_odb;
struct git_config;

/* The quarantine object database (lease_gate_odb_open). */
struct lease_gate_odb {
	struct lease_git *g;		/* the operator's repo (borrowed) */
	struct git_repository *repo;	/* wraps odb; empty configuration */
	struct git_odb *odb;		/* dir/ (writes) + the operator's
					   objects (alternate, read-only) */
	struct git_config *cfg;
	char *dir;
	char errmsg[LEASE__ERRMSG];
};

/* git.c: what the result files need of the operator's repository */
struct git_repository *lease__git_repo(struct lease_git *);
/* Owner validation off around calls on the named repository (git.c). */
int lease__git_owner_off(const struct lease_git *);
void lease__git_owner_restore(const struct lease_git *, int prev);

/* gate.c (pure helpers) */
/* hex SHA-256 of len bytes into out (65 bytes). 0 or -ENOMEM. */
int lease__sha256_hex(const void *buf, size_t len, char out[65]);
/* A JSON string of raw bytes; invalid UTF-8 bytes become "\\xNN" text. */
struct json_t *lease__json_bytes(const char *s, size_t len);

/* gate_odb.c */
/* Set q's message "<text>: <libgit2 message>"; returns code. */
int lease__gate_fail(struct lease_gate_odb *, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Read a whole regular file of at most max bytes (malloc'd, NUL added). */
int lease__read_capped(const char *path, uint64_t max, char **out,
    size_t *len);
/* Write a whole file (created or replaced, mode), fsync'd. 0 or -errno. */
int lease__write_file(const char *path, const void *buf, size_t len,
    unsigned mode);

/* result.c: one lease's result work, shared with apply.c */
struct lease__rctx {
	struct lease_store *s;
	const char *state_dir;
	const char *id;
	struct lease_record rec;
	struct lease_git *g;		/* the operator's repository */
	struct lease_gate_odb *q;	/* the lease's quarantine */
	char *rdir;			/* $STATE/leases/<id>/result */
	struct lease_result_policy pol;
	lease_check_run_cb run;
	void *ud;
	const char *checks_dir;		/* NULL: <rdir>/checks */
	struct json_t *result;		/* the result JSON (owned) */
	struct lease_manifest *m;	/* the current result's manifest */
};

/*
 * Load the lease, its result JSON and (with repo) the repository and the
 * quarantine. Messages go to the store. Close with lease__rctx_close.
 */
int lease__rctx_open(struct lease__rctx *, struct lease_store *,
    const char *state_dir, const char *id,
    const struct lease_result_policy *, lease_check_run_cb, void *ud,
    bool repo);
void lease__rctx_close(struct lease__rctx *);
/* Write ctx->result to the lease row. */
int lease__rctx_save(struct lease__rctx *);
/* Append a receipt entry (fields stolen; may be NULL). */
int lease__rctx_receipt(struct lease__rctx *, const char *kind,
    struct json_t *fields);
/*
 * Make tree (in the quarantine) the lease's result on top of parent: the
 * patch and manifest (the old ones go to history/), the gate, the objects
 * copied into the operator's repository, a corral commit, corral/<id>
 * moved from expect_tip by compare-and-swap (LEASE_ESTALE if it moved),
 * the review worktree checked out, the result JSON (status "ready",
 * reviewed null, checks pending) and a receipt result_materialised. A
 * result the gate refuses is LEASE_EINVALID with the findings in rep.
 */
int lease__result_build(struct lease__rctx *, const char *parent_hex,
    const char *expect_tip, const char *tree_hex, const char *via,
    struct lease_gate_report *rep);
/* Run the declared checks on copies of the result tree (SPEC 7.3). */
int lease__result_checks(struct lease__rctx *);
/*
 * 0 when corral/<id> and the review worktree (HEAD, index, working files)
 * match commit; LEASE_ESTALE with why; or an error.
 */
int lease__result_stale(struct lease__rctx *, const char *commit, char *why,
    size_t whysz);
/*
 * The result's patch file (malloc'd) and its SHA-256, checked against the
 * digest the result JSON recorded (LEASE_ETAMPERED when it differs).
 */
int lease__result_load_patch(struct lease__rctx *, char **buf, size_t *len,
    char sha[65]);
/* The result's manifest.json into ctx->m (left NULL when there is none). */
int lease__result_load_manifest(struct lease__rctx *);
/* A string member of the result JSON, or NULL. */
const char *lease__rctx_str(const struct lease__rctx *, const char *key);

#endif
