/*
 * result.h: the public interface of lease/result/ (STYLE A), the result
 * pipeline of SPEC 7, in blocks per .c file: the pure import-gate rules
 * (gate.c), the manifest (manifest.c), the quarantine object database and
 * the gate's libgit2 side (gate_odb.c), extraction of a workspace as data
 * (extract.c, with the gitignore engine ignore.c inside), the patch printer
 * (patch.c), what happens to a lease's result on the trusted side
 * (result.c) and apply (apply.c). It depends on lease/ only; its error
 * codes (LEASE_EINVALID...) are declared in lease/lease.h with the
 * module's others.
 */
#ifndef CORRAL_LEASE_RESULT_H
#define CORRAL_LEASE_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lease/lease.h"

/* ------------------------------------------------------------------ */
/* Types the blocks share: reasons, flags, caps, checks, the policy    */

/*
 * Why a result (or one of its paths) is refused (SPEC 7.2). Names
 * (lease_gate_reason_name) are stable: they appear in receipts, in
 * `corral review --json` and in docs/results.md.
 */
enum lease_gate_reason {
	LEASE_GATE_OK,
	LEASE_GATE_EMPTY_PATH,		/* "empty_path" */
	LEASE_GATE_ABSOLUTE,		/* "absolute_path" */
	LEASE_GATE_ESCAPE,		/* "path_escape": . .. or empty part */
	LEASE_GATE_GIT_PATH,		/* "git_path": .git in any spelling */
	LEASE_GATE_LEADING_DASH,	/* "leading_dash" */
	LEASE_GATE_INVALID_UTF8,	/* "invalid_utf8" */
	LEASE_GATE_NEWLINE,		/* "newline" */
	LEASE_GATE_CONTROL_CHAR,	/* "control_char" (C0, DEL, C1) */
	LEASE_GATE_NAME_TOO_LONG,	/* "name_too_long" (255, 4096, depth) */
	LEASE_GATE_SYMLINK,		/* "symlink" */
	LEASE_GATE_BEYOND_SYMLINK,	/* "beyond_symlink" */
	LEASE_GATE_DEVICE,		/* "device" */
	LEASE_GATE_FIFO,		/* "fifo" */
	LEASE_GATE_SOCKET,		/* "socket" */
	LEASE_GATE_GITLINK,		/* "gitlink" (or a nested repository) */
	LEASE_GATE_BAD_MODE,		/* "bad_mode" */
	LEASE_GATE_BINARY,		/* "binary" */
	LEASE_GATE_TOO_MANY_FILES,	/* "too_many_files" */
	LEASE_GATE_FILE_TOO_LARGE,	/* "file_too_large" */
	LEASE_GATE_TOTAL_TOO_LARGE,	/* "total_too_large" */
	LEASE_GATE_PATCH_TOO_LARGE,	/* "patch_too_large" */
	LEASE_GATE_CHANGED,		/* "changed_during_extraction" */
	LEASE_GATE_UNREADABLE,		/* "unreadable" */
	LEASE_GATE_PATCH_MALFORMED,	/* "patch_malformed" */
	LEASE_GATE_PATCH_MISMATCH,	/* "patch_mismatch": not the snapshot */
	LEASE_GATE_MANIFEST_MISMATCH,	/* "manifest_mismatch" */
	LEASE_GATE_LEASE_FAILED,	/* "lease_failed": quarantined because
					   the lease failed (holder_lost...) */
	LEASE_GATE_CREDENTIAL,		/* "credential": the minted value */
	LEASE_GATE_INVISIBLE,		/* "invisible_char": bidi controls,
					   zero-width and other default
					   ignorable code points */
	LEASE_GATE_REASON_COUNT
};

/* Review flags of a changed path (SPEC 7.2), a bit set. */
#define LEASE_FLAG_CI		0x001u	/* CI workflows and pipelines */
#define LEASE_FLAG_GIT_CONFIG	0x002u	/* .gitattributes .gitmodules ... */
#define LEASE_FLAG_EDITOR	0x004u	/* .vscode .idea .devcontainer ... */
#define LEASE_FLAG_AGENT	0x008u	/* .claude .cursor AGENTS.md ... */
#define LEASE_FLAG_SHELL	0x010u	/* shell rc files, .envrc */
#define LEASE_FLAG_HOOKS	0x020u	/* .husky .githooks pre-commit */
#define LEASE_FLAG_BUILD	0x040u	/* build files (Makefile ...) */
#define LEASE_FLAG_TEST		0x080u	/* test files */
#define LEASE_FLAG_SCRIPT	0x100u	/* scripts */
#define LEASE_FLAG_POLICY	0x200u	/* a repository policy (.corral/) */
#define LEASE_FLAG_CHECK	0x400u	/* an input of a declared check */
#define LEASE_FLAG_TWIN		0x800u	/* one file on macOS and Windows
					   with another of the tree */
#define LEASE_FLAG_COUNT	12
#define LEASE_FLAGS_SENSITIVE	0x83fu
#define LEASE_FLAGS_EXECUTED	0x7c0u

/* Caps and rules for results; lease_result_policy_defaults fills them. */
#define LEASE_RESULT_MAX_FILES 1000
#define LEASE_RESULT_MAX_FILE_BYTES (4ull << 20)
#define LEASE_RESULT_MAX_TOTAL_BYTES (32ull << 20)
#define LEASE_RESULT_MAX_PATCH_BYTES (48ull << 20)
#define LEASE_RESULT_LOG_MAX 8192	/* bytes of a check's log kept */

/* A declared check (SPEC 7.3): from the operator's or the base's policy. */
struct lease_check {
	const char *name;
	char *const *argv;		/* NULL-terminated */
	const char *const *inputs;	/* extra input patterns, or NULL */
};

/*
 * Review-flag patterns (policies/review-flags, and the operator's file):
 * each a LEASE_FLAG_* bit and the gitignore-style glob it was turned into
 * (lower case; matched against the ASCII-folded path).
 */
struct lease_flag_rule {
	unsigned flag;
	char *glob;
};

struct lease_flag_rules {
	struct lease_flag_rule *v;
	size_t n, cap;
};

#define LEASE_FLAG_RULES_MAX 10000

struct lease_result_policy {
	uint64_t max_files;		/* changed paths (and artifacts) */
	uint64_t max_file_bytes;	/* one file's new contents */
	uint64_t max_total_bytes;	/* all new contents (and artifacts) */
	uint64_t max_patch_bytes;
	bool allow_binary;
	bool allow_symlinks;		/* in-tree relative targets only */
	const char *const *ignore;	/* gitignore patterns, NULL-ended */
	const char *output_dir;		/* artifacts, relative; NULL: none */
	const struct lease_check *checks;
	size_t nchecks;
	const struct lease_flag_rules *flag_rules;	/* NULL: none */
	/*
	 * The lease's minted credential (SPEC 8.5), or NULL: a changed file
	 * or a path holding it is refused (LEASE_GATE_CREDENTIAL), so the
	 * value never reaches a patch, a review or a branch.
	 */
	const char *secret;
};

/* ------------------------------------------------------------------ */
/* gate.c: the pure rules of the import gate (SPEC 7.2)               */

/* One refusal: a reason, the path it concerns (raw bytes, may be NULL). */
struct lease_gate_finding {
	enum lease_gate_reason reason;
	char *path;
	char *detail;		/* NULL or a short trusted text */
};

#define LEASE_GATE_MAX_FINDINGS 256	/* kept; more are only counted */

struct lease_gate_report {
	struct lease_gate_finding *v;
	size_t n, cap;
	size_t dropped;		/* findings past LEASE_GATE_MAX_FINDINGS */
	char tree[41];		/* the tree the patch produced, or "" */
};

void lease_gate_report_free(struct lease_gate_report *);
/* Append a finding (path may be NULL; copied). 0 or -ENOMEM. */
LEASE_NODISCARD int lease_gate_report_add(struct lease_gate_report *,
    enum lease_gate_reason, const char *path, const char *detail);
/* True when the report holds a finding with this reason. */
bool lease_gate_report_has(const struct lease_gate_report *,
    enum lease_gate_reason);

const char *lease_gate_reason_name(enum lease_gate_reason);

/*
 * lease_gate_path: the SPEC 7.2 path rules for a path relative to the
 * tree root (len bytes, need not be NUL-terminated): LEASE_GATE_OK or the
 * first reason: empty, absolute, "." / ".." / empty components, a .git
 * component in any case or HFS/NTFS spelling, a component starting with
 * '-', invalid UTF-8, a newline, other control characters (C0, DEL, C1),
 * a component over 255 bytes or a path over 4096. Pure.
 */
enum lease_gate_reason lease_gate_path(const char *path, size_t len);

/*
 * lease_gate_name_dotgit: whether one path component names git's
 * directory on some filesystem: ".git" in any case, with HFS+ ignorable
 * code points inside, or NTFS's trailing dots/spaces, ":stream" or the
 * 8.3 short name "git~1". Backslash counts as a separator. Pure.
 */
bool lease_gate_name_dotgit(const char *name, size_t len);

/*
 * lease_gate_mode: a git file mode in a patch or tree: 0100644 and
 * 0100755 pass; 0120000 is LEASE_GATE_SYMLINK unless allow_symlinks,
 * 0160000 LEASE_GATE_GITLINK, anything else LEASE_GATE_BAD_MODE. Pure.
 */
enum lease_gate_reason lease_gate_mode(unsigned mode, bool allow_symlinks);

/*
 * lease_gate_file_mode: an lstat mode from the workspace. A regular file
 * maps to 0100755 when its owner may execute it, else 0100644, in
 * *git_mode; refused: set-id/sticky bits, group or world writable (777,
 * 666...), unreadable by its owner (000) -> LEASE_GATE_BAD_MODE; symlinks,
 * devices, FIFOs and sockets get their own reasons; a directory is
 * LEASE_GATE_BAD_MODE (callers handle directories before). Pure.
 */
enum lease_gate_reason lease_gate_file_mode(unsigned st_mode,
    unsigned *git_mode);

/*
 * lease_gate_twins: which of the n paths (a whole tree's, UTF-8) name the
 * same file as another on a case-insensitive, normalising filesystem
 * (macOS, Windows): equal after Unicode case folding and NFC, or below
 * directories that are. twin[i] set for each; 0 or -ENOMEM. Pure.
 */
LEASE_NODISCARD int lease_gate_twins(const char *const *paths, size_t n,
    bool *twin);
/*
 * lease_gate_check_input: whether path is an input the check executes:
 * named by one of its argv words (or a word of an `sh -c` string), under
 * a directory so named, a build file of its tool (make: Makefile, *.mk;
 * cmake; npm/node: package.json; python/pytest: setup.py, pyproject.toml,
 * conftest.py...; cargo; go), or matched by its inputs patterns. A check
 * one of whose inputs the agent changed is not independent. Pure.
 */
bool lease_gate_check_input(const struct lease_check *, const char *path);

/*
 * lease_gate_glob: gitignore-style match of a whole path: '*' and '?'
 * never match '/', "[...]" classes ('!' or '^' negates), '\' escapes,
 * "**" as a whole component matches any number of directories. Pure.
 */
bool lease_gate_glob(const char *pattern, const char *path);

/* gate_scan.c: the pre-parse scan of a patch */
/* Pre-parse figures of a patch (lease_gate_patch_scan). */
struct lease_gate_scan {
	size_t files, hunks, binary_files;
	uint64_t added_bytes;	/* all '+' lines */
	uint64_t max_file_added;
};

/*
 * lease_gate_patch_scan: before libgit2 parses anything, check a patch's
 * bytes against the caps: size (patch_too_large), "diff --git" headers
 * (too_many_files), bytes added per file (file_too_large) and in all
 * (total_too_large), hunks, NUL bytes outside a binary patch
 * (patch_malformed), GIT binary patches (binary unless allowed; their
 * literal sizes against the per-file cap). Returns LEASE_GATE_OK or the
 * first reason; *out gets the figures so far. Pure; fuzzed.
 */
enum lease_gate_reason lease_gate_patch_scan(const char *buf, size_t len,
    const struct lease_result_policy *, struct lease_gate_scan *out);

/* ------------------------------------------------------------------ */
/* gate_flags.c: the review flags of a changed path (SPEC 7.2)        */

/* The name of one flag bit ("ci", "build"...), "?" otherwise. */
const char *lease_gate_flag_name(unsigned bit);

/*
 * lease_gate_rules_parse: add the patterns of text (the review-flags
 * form: "FLAG PATTERN" a line, '#' comments) to r. 0; -EINVAL with err
 * "NAME:LINE: what" (an unknown flag, a missing or extra word, a bad
 * pattern, too many); -ENOMEM. On an error r keeps what it had.
 */
LEASE_NODISCARD int lease_gate_rules_parse(struct lease_flag_rules *r,
    const char *text, const char *name, char *err, size_t errsz);
void lease_gate_rules_free(struct lease_flag_rules *);

/*
 * lease_gate_flags: the review flags of a changed path (LEASE_FLAG_*),
 * case-insensitively: every pattern of rules (NULL: none) it matches, and
 * the inputs of the declared checks (lease_gate_check_input). Pure.
 */
unsigned lease_gate_flags(const char *path, const struct lease_flag_rules *,
    const struct lease_check *checks, size_t nchecks);

/*
 * The shipped review-flag patterns (policies/review-flags, compiled in),
 * parsed once; NULL when out of memory.
 */
const struct lease_flag_rules *lease_result_flag_rules_shipped(void);
/*
 * The shipped patterns and then text's (the operator's file, named name in
 * errors; NULL: none) in *out (lease_gate_rules_free). 0, or as
 * lease_gate_rules_parse with *out empty.
 */
LEASE_NODISCARD int lease_result_flag_rules_load(struct lease_flag_rules *out,
    const char *text, const char *name, char *err, size_t errsz);

/* ------------------------------------------------------------------ */
/* manifest.c: the result manifest as JSON (SPEC 7.1)                 */

/* One changed path of a manifest (docs/results.md). */
struct lease_manifest_file {
	char *path;
	char status;		/* 'A' added, 'M' modified, 'D' deleted */
	unsigned old_mode, new_mode;	/* 0 when absent */
	uint64_t old_size, new_size;
	char old_blob[41], new_blob[41];	/* "" when absent */
	char sha256[65];	/* of the new contents, "" when deleted */
	bool binary;
	unsigned flags;		/* LEASE_FLAG_* */
	size_t insertions, deletions;
};

struct lease_manifest {
	int version;		/* 1 */
	char base[41];		/* the commit the patch applies to */
	char base_tree[41];
	char tree[41];		/* the snapshot tree */
	char patch_sha256[65];
	uint64_t patch_bytes;
	size_t added, modified, deleted, insertions, deletions;
	uint64_t new_bytes;	/* sum of new sizes */
	struct lease_manifest_file *files;	/* sorted by path */
	size_t nfiles;
};

void lease_manifest_free(struct lease_manifest *);
/*
 * lease_manifest_parse: the manifest JSON (as written by extraction) into
 * *out, strictly: version 1, hex IDs of the right length, modes and
 * statuses consistent, paths passing lease_gate_path, sorted and unique,
 * counts matching the file list. -EINVAL (with nothing allocated) for
 * anything else, -ENOMEM. Pure; fuzzed.
 */
LEASE_NODISCARD int lease_manifest_parse(const char *text, size_t len,
    struct lease_manifest **out);
/* The manifest as JSON text (malloc'd), or NULL on -ENOMEM. */
char *lease_manifest_dump(const struct lease_manifest *);

/* ------------------------------------------------------------------ */
/* gate_odb.c: the quarantine and the gate's libgit2 side (SPEC 7.2)  */

/*
 * The quarantine object database of a lease (gate_odb.c): a loose object
 * store under dir ($STATE/leases/<id>/result/objects) that reads the
 * operator's repository as an alternate and never writes to it, with an
 * empty configuration (no filters, drivers or attributes from anywhere).
 * Extraction, verification and hunk selection write only here; a valid
 * result's objects are copied into the operator's repository when it is
 * materialised. g is borrowed and must outlive the handle.
 */
struct lease_gate_odb;
LEASE_NODISCARD int lease_gate_odb_open(struct lease_git *g,
    const char *dir, struct lease_gate_odb **out);
void lease_gate_odb_free(struct lease_gate_odb *);
const char *lease_gate_odb_errmsg(const struct lease_gate_odb *);

/*
 * lease_gate_odb_verify: the import gate (SPEC 7.2) on a patch: scan the
 * bytes, parse them with libgit2, check every delta's paths (old and
 * new), modes, binary flag and symlink/gitlink prefixes in the base, apply
 * the patch in memory to base_hex's tree (git_apply_to_tree), then check
 * the resulting tree's changes path by path against the manifest (status,
 * modes, blob IDs, SHA-256 and sizes) and, when base_hex is the manifest's
 * base, require the tree to equal the manifest's snapshot tree. m may be
 * NULL (rules and apply only). Findings go to rep (rep->tree gets the
 * resulting tree). Returns 0 when the gate ran (rep->n == 0: it passed),
 * or a negative error (the message on q).
 */
LEASE_NODISCARD int lease_gate_odb_verify(struct lease_gate_odb *q,
    const char *base_hex, const char *patch, size_t len,
    const struct lease_manifest *m, const struct lease_result_policy *,
    struct lease_gate_report *rep);

/* ------------------------------------------------------------------ */
/* extract.c: the workspace read as data (SPEC 7.1)                   */

/* What extraction produced (extract.c). */
struct lease_extract {
	char tree[41];		/* snapshot tree in the quarantine, or "" */
	size_t files_seen;	/* regular files walked */
	size_t excluded;	/* new names the policy's ignore patterns left
				   out (a directory counts once) */
	size_t changed;		/* added or modified files */
	uint64_t changed_bytes;
	size_t artifacts;
	uint64_t artifact_bytes;
	bool aborted;		/* a cap stopped the walk */
};

/* Called after each lstat, before the open (tests: TOCTOU races). */
typedef void (*lease_extract_race_cb)(const char *rel, void *ud);

/*
 * lease_extract_snapshot: walk the workspace at dir as data and build the
 * snapshot tree in q against base_hex (SPEC 7.1): openat2 with
 * RESOLVE_BENEATH|NO_SYMLINKS|NO_MAGICLINKS|NO_XDEV (O_NOFOLLOW where
 * openat2 is missing), lstat every entry, (st_dev, st_ino) compared
 * between lstat and fstat and size/mtime after reading, nothing ever
 * followed; the sandbox's .git is skipped unopened; ignore rules come
 * from the base tree's .gitignore blobs and the policy; unchanged
 * tracked files are recognised by their blob ID and never rewritten.
 * Symlinks, devices, FIFOs, sockets, nested repositories, bad names and
 * modes, binary files and caps become findings in rep (caps stop the walk
 * at once: memory stays bounded by the per-file cap). Artifacts from
 * policy->output_dir are copied (same rules and caps) to artifacts_dir
 * when both are set. race (optional) is for tests. Returns 0 (findings or
 * not) or a negative error (message on q).
 */
LEASE_NODISCARD int lease_extract_snapshot(struct lease_gate_odb *q,
    const char *dir, const char *base_hex,
    const struct lease_result_policy *, const char *artifacts_dir,
    lease_extract_race_cb race, void *race_ud, struct lease_gate_report *rep,
    struct lease_extract *out);

/* ------------------------------------------------------------------ */
/* patch.c: the patch printer and its manifest (SPEC 7.1)             */

/*
 * lease_patch_write: diff(from_hex's tree or a tree ID, to_tree) in q as
 * a git patch written to patch_path (created 0600, replaced), streamed
 * under policy->max_patch_bytes (LEASE_GATE_PATCH_TOO_LARGE in rep when
 * over: the file is removed), and the manifest of the change into *out
 * (base = from_hex when it names a commit). Binary contents are written
 * as git binary patches only when the policy allows them. Returns 0 or a
 * negative error (message on q).
 */
LEASE_NODISCARD int lease_patch_write(struct lease_gate_odb *q,
    const char *from_hex, const char *to_tree,
    const struct lease_result_policy *, const char *patch_path,
    struct lease_gate_report *rep, struct lease_manifest **out);

/* ------------------------------------------------------------------ */
/* result_check.c: the declared checks on a result (SPEC 7.3)         */

/* What a check runner gets (SPEC 7.3, 8.2). */
struct lease_check_run {
	const char *id;			/* lease ID */
	const struct lease_check *check;
	/*
	 * A fresh copy of the result tree in the lease's directory (root's,
	 * 0755), removed after the run: the runner may move it into a
	 * bounded image mounted there, unmounted again before it returns.
	 */
	const char *dir;
	int64_t source_date_epoch;	/* the base commit's time */
	char *log;			/* buffer for the log (lease-owned) */
	size_t log_max;			/* its size */
};

enum lease_check_status {
	LEASE_CHECK_PASS,
	LEASE_CHECK_FAIL,		/* ran, non-zero exit or signal */
	LEASE_CHECK_ERROR,		/* could not run */
	LEASE_CHECK_UNAVAILABLE,	/* no exec zone in this build/host */
	LEASE_CHECK_STATUS_COUNT
};
const char *lease_result_check_status_name(enum lease_check_status);

struct lease_check_outcome {
	enum lease_check_status status;
	int exit_code;			/* or -1 */
	int signal;			/* or 0 */
	int64_t duration_ms;
	size_t log_len;			/* bytes written to run->log */
	bool log_truncated;
	bool faketime;			/* the clock was frozen */
	char detail[256];		/* trusted text: why, tool versions */
};

/*
 * Runs one check in the exec zone (the composition root wires
 * sbx_exec_run here: lease/ never includes the sandbox module). Returns
 * 0 with *out filled, or a negative error (recorded as status error).
 */
typedef int (*lease_check_run_cb)(const struct lease_check_run *,
    struct lease_check_outcome *out, void *ud);

/* ------------------------------------------------------------------ */
/* result.c, result_reject.c: materialise, quarantine, reject (7.1-7.5) */

/*
 * The defaults above and the shipped review-flag patterns; no ignore
 * patterns, no output dir, no checks.
 */
void lease_result_policy_defaults(struct lease_result_policy *);
struct lease_result_opts {
	const struct lease_result_policy *policy;	/* NULL: defaults */
	lease_check_run_cb run_check;	/* NULL: checks recorded unavailable */
	void *ud;
	/*
	 * Non-NULL: the lease failed (holder_lost, an exit status, a limit):
	 * the result is extracted into quarantine for inspection only and a
	 * running lease fails with this reason.
	 */
	const char *fail_reason;
	lease_extract_race_cb race;	/* tests only */
	void *race_ud;
};

/*
 * lease_result_finish: the one entry point for the end of a sandboxed
 * lease, called by its holder once the agent has ended and every process
 * of the lease has stopped (and by reconciliation, with fail_reason
 * "holder_lost"). Extracts the workspace ($STATE/leases/<id>/work) into
 * $STATE/leases/<id>/result/ (patch, manifest.json, artifacts/, objects/),
 * runs the gate, then either quarantines (result JSON status
 * "quarantined" with the reasons, receipt result_quarantined; a running
 * lease fails with result_invalid; returns LEASE_EINVALID) or
 * materialises: the snapshot's objects are copied into the operator's
 * repository, a commit (parent = base, author and committer "corral
 * <corral@localhost>", the lease ID in the message) moves corral/<id>
 * from the base (compare-and-swap) and is checked out in the review
 * worktree; its commit and tree IDs go into the result JSON and a
 * receipt; then the declared checks run, each on a fresh copy of the
 * result tree, with outcome, independence and a bounded log in a receipt
 * and the result JSON, while the lease is still running (busy for reject
 * and gc; a cancel meanwhile ends it cancelled, and it stays so: 0); then
 * running -> result_ready. Idempotent: a result_ready
 * lease returns 0 at once. Errors fail a running lease with result_error
 * (the workspace is kept). Needs lease_git_init.
 */
LEASE_NODISCARD int lease_result_finish(struct lease_store *,
    const char *state_dir, const char *id, const struct lease_result_opts *);

/* result_reject.c */
/*
 * lease_result_reject: SPEC 7.5. A result_ready lease becomes rejected
 * (receipt "rejected"); a failed or cancelled one (holder_lost,
 * result_invalid...) keeps its state. Either way the runtime resources go
 * (lease_provision_teardown LEASE_TEARDOWN_RUNTIME: workspace, review
 * worktree); the branch, lease directory (patch, manifest, quarantine) receipts
 * and history stay. A live lease is LEASE_EBUSY, an applied one
 * LEASE_EBADTRANSITION. Needs lease_git_init.
 */
LEASE_NODISCARD int lease_result_reject(struct lease_store *,
    const char *state_dir, const char *id);

/*
 * Called by reject and apply after the journal records the decision and
 * before lease_provision_teardown: the composition root removes what lease/
 * cannot (a loop-mounted workspace). A negative return stops the teardown,
 * which a later reject, reconcile or gc finishes.
 */
typedef int (*lease_teardown_cb)(const char *id, void *ud);
/* lease_result_reject with such a callback (NULL: none). */
LEASE_NODISCARD int lease_result_reject_ex(struct lease_store *,
    const char *state_dir, const char *id, lease_teardown_cb, void *ud);

/* ------------------------------------------------------------------ */
/* result_review.c: the review document (SPEC 7.4)                    */

#define LEASE_REVIEW_MARK 0x1	/* record the commit as reviewed */

/*
 * lease_result_review: the review document (corral review --json): the
 * lease, its result JSON, the manifest, findings, flags, the diff per file
 * and per hunk with hunk IDs "<digest8>:<file>:<hunk>" bound to the patch
 * digest (lines as [origin, text]), checks, the receipt chain (verified)
 * and "stale": null, or why corral/<id> or the review worktree no longer
 * match the recorded commit (then LEASE_REVIEW_MARK records nothing and
 * LEASE_ESTALE is returned with *out set). With LEASE_REVIEW_MARK a
 * result_ready lease's commit is recorded as reviewed (receipt
 * "reviewed"). Text from the sandbox is left raw: printers escape it.
 */
LEASE_NODISCARD int lease_result_review(struct lease_store *,
    const char *state_dir, const char *id, unsigned flags,
    struct json_t **out);

/* ------------------------------------------------------------------ */
/* apply.c: a reviewed result onto its target branch (SPEC 7.6)       */

struct lease_apply_opts {
	const char *into;		/* branch name or refs/heads/...; NULL:
					   the base ref */
	const char *hunks;		/* "D:F:H,D:F,..." or NULL */
	const struct lease_result_policy *policy;	/* NULL: defaults */
	lease_check_run_cb run_check;
	void *ud;
	lease_teardown_cb before_teardown;	/* optional */
	void *teardown_ud;
};

struct lease_apply_outcome {
	char target[256];	/* full ref name */
	char from[41], to[41];	/* target before / after */
	char commit[41];	/* the commit applied or sent to review */
	char checked_out[4096];	/* LEASE_ECHECKEDOUT: where */
};

/*
 * lease_apply: SPEC 7.6 for a result_ready lease. Only the recorded,
 * reviewed commit (LEASE_EUNREVIEWED otherwise) and only while corral/<id>
 * and the review worktree (HEAD, index and working files) still match it
 * (LEASE_ESTALE). hunks first builds a commit with only those hunks
 * (IDs bound to the reviewed patch digest; LEASE_EHUNKS), verifies it
 * through the gate and runs the checks again. The target (into, else the
 * base ref; LEASE_ETARGET) is moved by fast-forward only, with a
 * compare-and-swap, never forced, never pushed. A target checked out in
 * any worktree of the repository, the main one included, is refused
 * (LEASE_ECHECKEDOUT, out->checked_out) so the owner can run `git merge
 * --ff-only corral/<id>` there. A target that advanced past the commit's
 * parent gets the patch re-verified against it: a new result commit on
 * top of it goes back to review (LEASE_EADVANCED), or LEASE_ENOAPPLY when
 * it no longer applies. Every outcome is a receipt; on success the lease
 * is applied and its runtime resources are torn down (cleanup confirmed).
 */
LEASE_NODISCARD int lease_apply(struct lease_store *, const char *state_dir,
    const char *id, const struct lease_apply_opts *,
    struct lease_apply_outcome *out);

#endif
