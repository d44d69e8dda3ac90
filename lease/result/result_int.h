/*
 * result_int.h: declarations shared by lease/result/'s files and nobody
 * else (STYLE A): the quarantine handle's layout, the gate's hashing and
 * file helpers, and one lease's result context shared by result.c and
 * apply.c. The lease module's own internals come from lease/lease_int.h.
 */
#ifndef CORRAL_LEASE_RESULT_INT_H
#define CORRAL_LEASE_RESULT_INT_H

#include "lease/lease_int.h"
#include "lease/result/result.h"

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

/* gate.c (pure helpers) */
#define LEASE__GATE_PATH_MAX 4096	/* bytes in a changed path */
#define LEASE__GATE_NAME_MAX 255	/* bytes in one component */
/* ASCII lower case; every other byte as it is. */
int lease__gate_lower(int c);
/* Lower-cased (ASCII) copy of path in buf; false if it does not fit. */
bool lease__gate_fold_path(const char *path, char *buf, size_t sz);
/* hex SHA-256 of len bytes into out (65 bytes). 0 or -ENOMEM. */
int lease__gate_sha256_hex(const void *buf, size_t len, char out[65]);
/* A JSON string of raw bytes; invalid UTF-8 bytes become "\\xNN" text. */
struct json_t *lease__gate_json_bytes(const char *s, size_t len);

/* ignore.c: gitignore rules, stacked per directory */
struct lease__ignore_rule {
	char *pat;		/* without '!', leading and trailing '/' */
	size_t base;		/* the rule's directory: rel[0..base) */
	bool neg, dir_only, anchored;
};

struct lease__ignore {
	struct lease__ignore_rule *v;
	size_t n, cap;
};

/* Parse gitignore text into rules for the directory rel[0..base). */
int lease__ignore_parse(struct lease__ignore *, const char *text, size_t len,
    size_t base);
/* Drop the rules pushed after the first to (a directory left). */
void lease__ignore_pop(struct lease__ignore *, size_t to);
void lease__ignore_free(struct lease__ignore *);
/* 1 ignored, 0 re-included, -1 no rule matched (last matching rule wins). */
int lease__ignore_match(const struct lease__ignore *, const char *rel,
    bool isdir);

/* gate_odb.c */
/* Set q's message "<text>: <libgit2 message>"; returns code. */
int lease__gate_odb_fail(struct lease_gate_odb *, int code, const char *fmt,
    ...)
    __attribute__((format(printf, 3, 4)));

/* result.c: one lease's result work, shared with result_check.c,
   result_review.c and apply.c */
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
	struct json_t *result;		/* the result JSON (owned) */
	struct lease_manifest *m;	/* the current result's manifest */
	bool move_intent;		/* corral/<id> moves under an intent */
	int64_t move_seq;		/* that intent, open (0: none) */
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
/*
 * The lease's lock (lease_lock_lease, LEASE_LOCK_WAIT_MS) for apply and
 * reject, with the message on the store when it cannot be had.
 */
int lease__result_lock(struct lease_store *, const char *state_dir,
    const char *id, struct lease_lock **out);
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
/*
 * With ctx->move_intent (apply's rebase and --hunks) the build is one
 * intent on corral/<id> (intent.c) and leaves it open (ctx->move_seq)
 * with the result JSON unwritten, so the declared checks of the new commit
 * run inside it: lease__result_move_done then writes the JSON and closes
 * it in one transaction (and the receipt result_materialised);
 * lease__result_move_undo puts branch, files and worktree back (rc kept,
 * with its message). Both are no-ops without an open move.
 */
int lease__result_move_done(struct lease__rctx *);
int lease__result_move_undo(struct lease__rctx *, int rc);
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
/* "<rdir>/<name>" (malloc'd), or NULL. */
char *lease__rctx_path(const struct lease__rctx *, const char *name);
/* "<what>: <libgit2's last message>" to the store; returns code. */
int lease__rctx_gitfail(struct lease__rctx *, int code, const char *what);
/* o[k] = v (stolen); JSON null when v is NULL. */
void lease__result_set(struct json_t *o, const char *k, struct json_t *v);
/* s as a JSON string, or JSON null. */
struct json_t *lease__result_str(const char *s);
/* The names of the LEASE_FLAG_* bits in flags, as a JSON array. */
struct json_t *lease__result_flags_json(unsigned flags);
/*
 * Did rc (a failure) meet a full disk: ENOSPC or EDQUOT, or any failure
 * while the repository's or the lease directory's file system is full?
 */
bool lease__result_disk_full(const struct lease__rctx *, int rc);

/* result_check.c */
/*
 * Run the declared checks on copies of the result tree (SPEC 7.3). A check
 * whose copy or run meets a full disk stops them with -ENOSPC (nothing
 * recorded of it: the finish is retried), not an outcome "error".
 */
int lease__result_checks(struct lease__rctx *);

#endif
