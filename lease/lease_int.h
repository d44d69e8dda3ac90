/*
 * lease_int.h: declarations shared by the lease module's files and nobody
 * else (STYLE A): the store handle's layout, statement cache, transaction
 * and error helpers, the git handle's repository for lease/result/, and
 * the path helpers used by provision and recover.
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
	uint64_t busy_since;	/* the busy handler's wait, monotonic ms */
	unsigned busy_seed;
	int turn_fd;		/* <path>-turn, flock'd (store.c), or -1 */
	bool turn_held;		/* this handle waits: a shared lock on it */
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
/* Inside a transaction: 1 if the lease exists, 0 if not, or an error. */
int lease__store_exists(struct lease_store *, const char *id);
/* malloc'd copy of a text column, or NULL (sets *oom on allocation failure) */
char *lease__store_col_text(sqlite3_stmt *, int col, bool *oom);

/* record.c */
/* Inside a transaction: re-evaluate cleanup after a resource change. */
int lease__record_cleanup_eval(struct lease_store *, const char *id,
    int64_t at);
/* Inside a transaction: set one text column (no validation). */
int lease__record_set_text(struct lease_store *, const char *id,
    enum lease_field, const char *value, int64_t at);

/* Inside a transaction on id: lease_record_transition's work, at now. */
int lease__record_transition_tx(struct lease_store *, const char *id,
    enum lease_event, const char *reason, int64_t now,
    enum lease_state *next);

/* resource.c */
/* Inside a transaction on id: lease_resource_removed's work, at now. */
int lease__resource_removed_tx(struct lease_store *, const char *id,
    enum lease_resource, const char *identity, int64_t now);

/* release.c */
/*
 * Under the lease's lock (reconcile's): finish a release of r's workspace
 * whose intent is journaled (the result says "releasing") and note it in
 * rep; dry only notes it. 0 when there is none.
 */
int lease__release_resume(struct lease_store *, struct lease_report *,
    const char *state_dir, const struct lease_record *r, bool dry);

/* receipt.c */
/* Inside a transaction on id: lease_receipt_append's work (fields borrowed). */
int lease__receipt_append_tx(struct lease_store *, const char *id,
    const char *kind, struct json_t *fields, int64_t *seq_out);

/* recover.c */
/* Add a finding to rep (printf-style detail); NULL on -ENOMEM. */
struct lease_finding *lease__recover_note(struct lease_report *,
    enum lease_finding_kind, const char *id, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/*
 * The orphan inventory (SPEC 9.2): what a reconcile found that no lease
 * holds, with how many inventories saw it; gc (recover_gc.c) reads it.
 */
struct lease__orphan {
	enum lease_resource kind;
	char *identity;
	char *scope;		/* "" when none */
	char id[LEASE_RUN_ID_MAX + 1];	/* a lease's or a check run's */
	int seen;
	int64_t first;
};

struct lease__inventory {
	struct lease__orphan *v;
	size_t n, cap;
};
void lease__recover_inv_free(struct lease__inventory *);
/* Add one (copied); its id is name when that is a lease or run ID. */
int lease__recover_inv_add(struct lease__inventory *, enum lease_resource,
    const char *identity, const char *scope, const char *name);
/* 0, or LEASE_ESCHEMA with the message: the store has no inventory. */
int lease__recover_need_v2(struct lease_store *);

/* intent.c */
/* Inside a transaction: the lease's open intent (1), none (0), or error. */
int lease__intent_read_open(struct lease_store *, const char *id,
    struct lease_intent *out);
/* Is in a move of the lease's own branch (apply's rebase, --hunks)? */
bool lease__intent_is_branch(const struct lease_intent *in, const char *id);
/* "<common dir>/<name>.lock" of the repository (malloc'd). */
char *lease__intent_lock_path(struct lease_git *, const char *name);

/* intent_recover.c */
/* What a killed corral left of lease r in g's .git, removed (recover.c). */
int lease__intent_leftovers(struct lease_store *, struct lease_report *,
    struct lease_git *g, const char *state_dir,
    const struct lease_record *r, bool dry);

/* event.c */
/*
 * Inside a transaction: append a transitions row for id with the next seq.
 */
int lease__event_log(struct lease_store *, const char *id, int64_t at,
    const char *kind, const char *from, const char *to, const char *reason);

/*
 * intent.c: a move of the lease's own branch corral/<id> (apply's rebase
 * onto an advanced target, and --hunks), journaled like an apply's: the
 * intent (old; new once the commit exists) before the compare-and-swap,
 * then the result JSON and the close in one transaction. The caller holds
 * the lease's lock. branch_undo puts the branch (compare-and-swap from
 * new), the result's patch and manifest (archived under history/) and the
 * review worktree back at old and closes the intent undone; reconcile
 * does the same for one a killed apply left open.
 */
int lease__intent_branch_open(struct lease_store *, const char *id,
    const char *repo, const char *old_hex, const char *how, int64_t *seq);
int lease__intent_branch_new(struct lease_store *, const char *id,
    int64_t seq, const char *new_hex);
int lease__intent_branch_done(struct lease_store *, const char *id,
    int64_t seq, const char *result_text);
int lease__intent_branch_undo(struct lease_store *, const char *state_dir,
    const char *id, int64_t seq, const char *why);

/* git.c: what lease/result/ needs of the operator's repository */
struct git_repository;
struct git_repository *lease__git_repo(struct lease_git *);
/* Owner validation off around calls on the named repository (git.c). */
int lease__git_owner_off(const struct lease_git *);
void lease__git_owner_restore(const struct lease_git *, int prev);
/* Lease id's review worktree as a repository: 0, LEASE_ESTALE (gone). */
struct git_oid;
int lease__git_worktree_open(struct lease_git *, const char *id,
    struct git_repository **out);
/*
 * lease_git_workspace_seed into path, an empty directory that exists (a
 * mount point the caller made): -ENOSPC with the path named when space
 * ran out while it was written.
 */
int lease__git_workspace_fill(struct lease_git *, const char *oid_hex,
    const char *path, unsigned long long history);
/*
 * Check commit out in lease id's review worktree (forced, untracked files
 * removed): 0, LEASE_ESTALE (no worktree), LEASE_EGIT (message on g).
 */
int lease__git_worktree_checkout(struct lease_git *, const char *id,
    const struct git_oid *commit);

/*
 * seed.c: the base commit, its tree and `history` generations of its
 * ancestors from src into dst's object database as one pack without
 * deltas, and dst's .git/shallow naming the commits whose parents were
 * left out. 0, or an error with its message in errmsg.
 */
struct git_oid;
int lease__seed_objects(struct git_repository *src,
    const struct git_oid *base, unsigned long long history,
    struct git_repository *dst, char *errmsg, size_t errsz);
/*
 * The base's files against the workspace's limits before anything is
 * created: LEASE_ETOOLARGE (naming the file, or the total) when one file
 * is larger than max_file or all of them take more than max_tree (0: no
 * limit). Object headers only: no content is read.
 */
int lease__seed_fits(struct git_repository *src, const char *oid_hex,
    unsigned long long max_file, unsigned long long max_tree, char *errmsg,
    size_t errsz);

/* path.c */
/* "<state_dir><a><id><b>" (malloc'd); NULL for a bad ID or on -ENOMEM. */
char *lease__path(const char *state_dir, const char *a, const char *id,
    const char *b);

/* fs.c */
/* mkdir -p with mode for each created component. 0 or -errno. */
int lease__fs_mkdirs(const char *path, mode_t mode);
/*
 * Remove path recursively without following symlinks and without crossing
 * into another filesystem; directories are made u+rwx first. Absent: 0.
 */
int lease__fs_rmtree(const char *path);
/* 1 if path exists (lstat), 0 if not, -errno on other errors. */
int lease__fs_exists(const char *path);
/* Read a whole regular file of at most max bytes (malloc'd, NUL added). */
int lease__fs_read_capped(const char *path, uint64_t max, char **out,
    size_t *len);
/* Write a whole file (created or replaced, mode), fsync'd. 0 or -errno. */
int lease__fs_write_file(const char *path, const void *buf, size_t len,
    unsigned mode);

#endif
