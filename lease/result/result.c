/*
 * result.c: what happens to a lease's result on the trusted side (SPEC
 * 7.1-7.5): lease_result_finish (extract, gate, then quarantine or
 * materialise as a commit on corral/<id> checked out in the review
 * worktree, then the declared checks of result_check.c while the lease
 * is still running, then running -> result_ready) and the result
 * context the other result files share. Reject is result_reject.c, the
 * review document result_review.c. The result JSON on the
 * lease row and the receipts record every step; docs/results.md
 * describes both.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "lease/result/result_int.h"

#define SIG_NAME "corral"
#define SIG_EMAIL "corral@localhost"
#define RECEIPT_REASONS 32	/* findings copied into a receipt */

void
lease_result_policy_defaults(struct lease_result_policy *p)
{
	assert(p != NULL);
	memset(p, 0, sizeof *p);
	p->max_files = LEASE_RESULT_MAX_FILES;
	p->max_file_bytes = LEASE_RESULT_MAX_FILE_BYTES;
	p->max_total_bytes = LEASE_RESULT_MAX_TOTAL_BYTES;
	p->max_patch_bytes = LEASE_RESULT_MAX_PATCH_BYTES;
	p->flag_rules = lease_result_flag_rules_shipped();
}

/* "<rdir>/<name>" (malloc'd). */
char *
lease__rctx_path(const struct lease__rctx *c, const char *name)
{
	size_t n = strlen(c->rdir) + strlen(name) + 2;
	char *p = malloc(n);

	if (p != NULL)
		snprintf(p, n, "%s/%s", c->rdir, name);
	return p;
}

/* ---- the context --------------------------------------------------------- */

int
lease__rctx_open(struct lease__rctx *c, struct lease_store *s,
    const char *state_dir, const char *id,
    const struct lease_result_policy *pol, lease_check_run_cb run, void *ud,
    bool repo)
{
	int rc;

	memset(c, 0, sizeof *c);
	c->s = s;
	c->state_dir = state_dir;
	c->id = id;
	c->run = run;
	c->ud = ud;
	if (pol != NULL)
		c->pol = *pol;
	else
		lease_result_policy_defaults(&c->pol);
	if (state_dir == NULL)
		return -EINVAL;
	if ((rc = lease_record_get(s, id, &c->rec)) < 0)
		return rc;
	if ((c->rdir = lease_path_result(state_dir, id)) == NULL)
		return -ENOMEM;
	if (c->rec.result != NULL)
		c->result = json_loads(c->rec.result, 0, NULL);
	if (c->result == NULL && (c->result = json_object()) == NULL)
		return -ENOMEM;
	if (!repo)
		return 0;
	if (c->rec.repo == NULL) {
		lease__store_msg(s, "lease %s has no repository", id);
		return LEASE_ENORESULT;
	}
	if ((rc = lease_git_open(&c->g, c->rec.repo)) < 0) {
		lease__store_msg(s, "%s", lease_git_errmsg(c->g));
		return rc;
	}
	if ((rc = lease_gate_odb_open(c->g, c->rdir, &c->q)) < 0)
		lease__store_msg(s, "%s", lease_gate_odb_errmsg(c->q));
	return rc;
}

void
lease__rctx_close(struct lease__rctx *c)
{
	lease_manifest_free(c->m);
	json_decref(c->result);
	lease_gate_odb_free(c->q);
	lease_git_free(c->g);
	free(c->rdir);
	lease_record_clear(&c->rec);
	memset(c, 0, sizeof *c);
}

const char *
lease__rctx_str(const struct lease__rctx *c, const char *key)
{
	return json_string_value(json_object_get(c->result, key));
}

int
lease__rctx_save(struct lease__rctx *c)
{
	char *text = json_dumps(c->result, JSON_COMPACT | JSON_ENSURE_ASCII);
	int rc;

	if (text == NULL)
		return -ENOMEM;
	rc = lease_record_set_text(c->s, c->id, LEASE_FIELD_RESULT, text);
	free(text);
	return rc;
}

int
lease__rctx_receipt(struct lease__rctx *c, const char *kind, json_t *fields)
{
	int rc = lease_receipt_append(c->s, c->id, kind, fields, NULL);

	json_decref(fields);
	return rc;
}

/* Carry the quarantine's message to the store; returns rc. */
static int
qfail(struct lease__rctx *c, int rc)
{
	if (rc < 0 && c->q != NULL && c->q->errmsg[0] != '\0')
		lease__store_msg(c->s, "%s", c->q->errmsg);
	return rc;
}

int
lease__rctx_gitfail(struct lease__rctx *c, int code, const char *what)
{
	const git_error *e = git_error_last();

	lease__store_msg(c->s, "%s: %s", what, e != NULL && e->message != NULL ?
	    e->message : "libgit2 error");
	return code;
}

/* ---- JSON pieces --------------------------------------------------------- */

static json_t *
reasons_json(const struct lease_gate_report *rep, size_t max)
{
	json_t *a = json_array(), *o;
	size_t i;

	for (i = 0; a != NULL && i < rep->n && i < max; i++) {
		const struct lease_gate_finding *f = &rep->v[i];

		o = json_pack("{s:s, s:o, s:o}", "reason",
		    lease_gate_reason_name(f->reason), "path",
		    f->path ? lease__gate_json_bytes(f->path, strlen(f->path)) :
		    json_null(), "detail", f->detail ? json_string(f->detail) :
		    json_null());
		if (o == NULL || json_array_append_new(a, o) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

json_t *
lease__result_flags_json(unsigned fl)
{
	json_t *names = json_array();
	unsigned b;

	for (b = 1; names != NULL && b < 1u << LEASE_FLAG_COUNT; b <<= 1)
		if (fl & b)
			json_array_append_new(names,
			    json_string(lease_gate_flag_name(b)));
	return names;
}

static json_t *
flags_of(const struct lease_manifest *m)
{
	json_t *a = json_array(), *names, *o;
	size_t i;

	for (i = 0; a != NULL && m != NULL && i < m->nfiles; i++) {
		if (m->files[i].flags == 0)
			continue;
		names = lease__result_flags_json(m->files[i].flags);
		if (names == NULL)
			break;
		o = json_pack("{s:s, s:o}", "path", m->files[i].path, "flags",
		    names);
		if (o != NULL)
			json_array_append_new(a, o);
	}
	return a;
}

static json_t *
counts_of(const struct lease_manifest *m)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "files",
	    (json_int_t)m->nfiles, "added", (json_int_t)m->added, "modified",
	    (json_int_t)m->modified, "deleted", (json_int_t)m->deleted,
	    "insertions", (json_int_t)m->insertions, "deletions",
	    (json_int_t)m->deletions, "new_bytes", (json_int_t)m->new_bytes);
}

static json_t *
summary_of(const struct lease_manifest *m)
{
	char buf[128];

	snprintf(buf, sizeof buf, "%zu file%s changed, %zu insertion%s(+), "
	    "%zu deletion%s(-)", m->nfiles, m->nfiles == 1 ? "" : "s",
	    m->insertions, m->insertions == 1 ? "" : "s", m->deletions,
	    m->deletions == 1 ? "" : "s");
	return json_string(buf);
}

void
lease__result_set(json_t *o, const char *k, json_t *v)
{
	json_object_set_new(o, k, v != NULL ? v : json_null());
}

json_t *
lease__result_str(const char *s)
{
	return s != NULL ? json_string(s) : json_null();
}

/* ---- objects into the operator's repository ------------------------------ */

/* Copy one object from the quarantine unless the repository has it. */
static int
copy_object(struct lease__rctx *c, git_odb *dst, const git_oid *id)
{
	git_odb_object *o = NULL;
	git_oid got;
	int rc;

	if (git_odb_exists(dst, id))
		return 0;
	if (git_odb_read(&o, c->q->odb, id) < 0)
		return lease__rctx_gitfail(c, LEASE_EGIT, "quarantine object");
	rc = git_odb_write(&got, dst, git_odb_object_data(o),
	    git_odb_object_size(o), git_odb_object_type(o));
	git_odb_object_free(o);
	if (rc < 0 || !git_oid_equal(&got, id))
		return lease__rctx_gitfail(c, LEASE_EGIT, "copy object");
	return 0;
}

/* The tree's objects missing from dst, children before parents. */
static int
migrate(struct lease__rctx *c, git_odb *dst, const git_oid *tree)
{
	const git_tree_entry *e;
	git_tree *t = NULL;
	size_t i;
	int rc = 0;

	if (git_odb_exists(dst, tree))
		return 0;	/* unchanged subtree: all there */
	if (git_tree_lookup(&t, c->q->repo, tree) < 0)
		return lease__rctx_gitfail(c, LEASE_EGIT, "quarantine tree");
	for (i = 0; rc == 0 && i < git_tree_entrycount(t); i++) {
		e = git_tree_entry_byindex(t, i);
		switch (git_tree_entry_type(e)) {
		case GIT_OBJECT_TREE:
			rc = migrate(c, dst, git_tree_entry_id(e));
			break;
		case GIT_OBJECT_BLOB:
			rc = copy_object(c, dst, git_tree_entry_id(e));
			break;
		default:
			break;	/* a gitlink names no object of ours */
		}
	}
	git_tree_free(t);
	return rc == 0 ? copy_object(c, dst, tree) : rc;
}

/* ---- the review worktree ------------------------------------------------- */

static int
open_worktree(struct lease__rctx *c, git_repository **out)
{
	return lease__git_worktree_open(c->g, c->id, out);
}

static int
checkout(struct lease__rctx *c, const git_oid *commit)
{
	int rc = lease__git_worktree_checkout(c->g, c->id, commit);

	if (rc == LEASE_ESTALE)
		lease__store_msg(c->s, "lease %s: the review worktree is "
		    "missing", c->id);
	else if (rc < 0)
		lease__store_msg(c->s, "%s", lease_git_errmsg(c->g));
	return rc;
}

int
lease__result_stale(struct lease__rctx *c, const char *commit, char *why,
    size_t whysz)
{
	char branch[LEASE_BRANCH_LEN + 1], ref[LEASE_BRANCH_LEN + 16];
	git_repository *repo = lease__git_repo(c->g), *wr = NULL;
	git_reference *head = NULL;
	git_commit *cm = NULL;
	git_tree *tree = NULL;
	git_index *idx = NULL;
	git_diff *d = NULL;
	git_diff_options o;
	git_oid want, got;
	int rc, prev;

	if (commit == NULL || git_oid_fromstr(&want, commit) < 0) {
		snprintf(why, whysz, "no recorded commit");
		return LEASE_ESTALE;
	}
	if ((rc = lease_id_branch(branch, c->id)) < 0)
		return rc;
	snprintf(ref, sizeof ref, "refs/heads/%s", branch);
	if (git_reference_name_to_id(&got, repo, ref) < 0) {
		snprintf(why, whysz, "branch %s is gone", branch);
		return LEASE_ESTALE;
	}
	if (!git_oid_equal(&got, &want)) {
		snprintf(why, whysz, "branch %s moved to %.12s", branch,
		    git_oid_tostr_s(&got));
		return LEASE_ESTALE;
	}
	if (open_worktree(c, &wr) < 0) {
		snprintf(why, whysz, "the review worktree is gone");
		return LEASE_ESTALE;
	}
	prev = lease__git_owner_off(c->g);
	rc = LEASE_ESTALE;
	if (git_reference_lookup(&head, wr, "HEAD") < 0 ||
	    git_reference_type(head) != GIT_REFERENCE_SYMBOLIC ||
	    strcmp(git_reference_symbolic_target(head), ref) != 0) {
		snprintf(why, whysz, "the review worktree is not on %s",
		    branch);
		goto out;
	}
	if (git_commit_lookup(&cm, wr, &want) < 0 ||
	    git_commit_tree(&tree, cm) < 0 ||
	    git_repository_index(&idx, wr) < 0 ||
	    git_index_read(idx, 1) < 0) {
		rc = lease__rctx_gitfail(c, LEASE_EGIT, "review worktree");
		goto out;
	}
	if (git_diff_tree_to_index(&d, wr, tree, idx, NULL) < 0) {
		rc = lease__rctx_gitfail(c, LEASE_EGIT,
		    "review worktree index");
		goto out;
	}
	if (git_diff_num_deltas(d) > 0) {
		snprintf(why, whysz, "the review worktree's index differs "
		    "from the commit (%s)", git_diff_get_delta(d, 0)->new_file
		    .path);
		goto out;
	}
	git_diff_free(d);
	d = NULL;
	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	o.flags = GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS |
	    GIT_DIFF_INCLUDE_TYPECHANGE;
	if (git_diff_index_to_workdir(&d, wr, idx, &o) < 0) {
		rc = lease__rctx_gitfail(c, LEASE_EGIT,
		    "review worktree files");
		goto out;
	}
	if (git_diff_num_deltas(d) > 0) {
		snprintf(why, whysz, "files in the review worktree were "
		    "changed after review (%s)",
		    git_diff_get_delta(d, 0)->new_file.path);
		goto out;
	}
	rc = 0;
out:
	lease__git_owner_restore(c->g, prev);
	git_diff_free(d);
	git_index_free(idx);
	git_tree_free(tree);
	git_commit_free(cm);
	git_reference_free(head);
	git_repository_free(wr);
	return rc;
}

/* ---- building a result --------------------------------------------------- */

/* Keep the previous patch and manifest under history/<commit>.* */
static void
archive(struct lease__rctx *c)
{
	const char *old = lease__rctx_str(c, "commit");
	char *hist, *from, *to, name[64];
	json_t *h;

	if (old == NULL || strlen(old) != 40 ||
	    (hist = lease__rctx_path(c, "history")) == NULL)
		return;
	if (mkdir(hist, 0700) < 0 && errno != EEXIST) {
		free(hist);
		return;
	}
	free(hist);
	snprintf(name, sizeof name, "history/%s.patch", old);
	from = lease__rctx_path(c, "patch");
	to = lease__rctx_path(c, name);
	if (from != NULL && to != NULL && rename(from, to) < 0) {
		/* nothing to keep */
	}
	free(from);
	free(to);
	snprintf(name, sizeof name, "history/%s.manifest.json", old);
	from = lease__rctx_path(c, "manifest.json");
	to = lease__rctx_path(c, name);
	if (from != NULL && to != NULL && rename(from, to) < 0) {
		/* nothing to keep */
	}
	free(from);
	free(to);
	if ((h = json_object_get(c->result, "history")) == NULL ||
	    !json_is_array(h)) {
		h = json_array();
		json_object_set_new(c->result, "history", h);
	}
	json_array_append_new(h, json_pack("{s:s, s:o, s:o, s:I}", "commit",
	    old, "via", lease__result_str(lease__rctx_str(c, "via")),
	    "patch_sha256",
	    lease__result_str(json_string_value(json_object_get(json_object_get(
	    c->result, "patch"), "sha256"))), "replaced_at",
	    (json_int_t)lease_id_now_ms()));
}

/* Read the patch file back and run the gate on it with the manifest. */
static int
gate_patch(struct lease__rctx *c, const char *parent,
    struct lease_gate_report *rep)
{
	char *path = lease__rctx_path(c, "patch"), *buf = NULL;
	size_t len = 0;
	int rc;

	if (path == NULL)
		return -ENOMEM;
	rc = lease__fs_read_capped(path, c->pol.max_patch_bytes, &buf, &len);
	free(path);
	if (rc == -EFBIG)
		return lease_gate_report_add(rep, LEASE_GATE_PATCH_TOO_LARGE,
		    NULL, NULL);
	if (rc < 0) {
		lease__store_msg(c->s, "%s/patch: %s", c->rdir, strerror(-rc));
		return rc;
	}
	rc = qfail(c, lease_gate_odb_verify(c->q, parent, buf, len, c->m,
	    &c->pol,
	    rep));
	free(buf);
	return rc;
}

/* Patch and manifest for parent..tree into the result directory. */
static int
make_patch(struct lease__rctx *c, const char *parent, const char *tree,
    struct lease_gate_report *rep)
{
	char *patch = lease__rctx_path(c, "patch");
	char *mpath = lease__rctx_path(c, "manifest.json");
	char *text = NULL;
	int rc;

	lease_manifest_free(c->m);
	c->m = NULL;
	if (patch == NULL || mpath == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	rc = qfail(c, lease_patch_write(c->q, parent, tree, &c->pol, patch,
	    rep, &c->m));
	if (rc < 0 || c->m == NULL)
		goto out;
	if ((text = lease_manifest_dump(c->m)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = lease__fs_write_file(mpath, text, strlen(text), 0600)) < 0)
		lease__store_msg(c->s, "%s: %s", mpath, strerror(-rc));
out:
	free(text);
	free(mpath);
	free(patch);
	return rc;
}

static int
make_commit(struct lease__rctx *c, const git_oid *parent_id,
    const git_oid *tree_id, const char *via, git_oid *out)
{
	git_repository *repo = lease__git_repo(c->g);
	git_signature *sig = NULL;
	git_commit *parent = NULL;
	git_tree *tree = NULL;
	const git_commit *parents[1];
	char msg[512];
	int rc = 0;

	snprintf(msg, sizeof msg, "corral: result of lease %s\n\n"
	    "Lease: %s\nVia: %s\nPatch-SHA256: %s\n", c->id, c->id, via,
	    c->m->patch_sha256);
	if (git_signature_new(&sig, SIG_NAME, SIG_EMAIL, (git_time_t)time(NULL),
	    0) < 0 || git_commit_lookup(&parent, repo, parent_id) < 0 ||
	    git_tree_lookup(&tree, repo, tree_id) < 0) {
		rc = lease__rctx_gitfail(c, LEASE_EGIT, "result commit");
		goto out;
	}
	parents[0] = parent;
	if (git_commit_create(out, repo, NULL, sig, sig, NULL, msg, tree, 1,
	    parents) < 0)
		rc = lease__rctx_gitfail(c, LEASE_EGIT, "result commit");
out:
	git_tree_free(tree);
	git_commit_free(parent);
	git_signature_free(sig);
	return rc;
}

/* Move corral/<id> from expect to to, or LEASE_ESTALE. */
static int
move_branch(struct lease__rctx *c, const git_oid *expect, const git_oid *to,
    const char *why)
{
	char branch[LEASE_BRANCH_LEN + 1], ref[LEASE_BRANCH_LEN + 16];
	git_reference *r = NULL;
	int rc;

	if ((rc = lease_id_branch(branch, c->id)) < 0)
		return rc;
	snprintf(ref, sizeof ref, "refs/heads/%s", branch);
	rc = git_reference_create_matching(&r, lease__git_repo(c->g), ref, to,
	    1, expect, why);
	git_reference_free(r);
	if (rc == GIT_EMODIFIED || rc == GIT_ENOTFOUND) {
		lease__store_msg(c->s, "branch %s is not where corral left it",
		    branch);
		return LEASE_ESTALE;
	}
	return rc < 0 ? lease__rctx_gitfail(c, LEASE_EGIT, ref) : 0;
}

int
lease__result_move_undo(struct lease__rctx *c, int rc)
{
	char *msg;

	if (c->move_seq == 0)
		return rc;
	msg = strdup(lease_store_errmsg(c->s));
	if (lease__intent_branch_undo(c->s, c->state_dir, c->id, c->move_seq,
	    lease_strerror(rc)) < 0) {
		/* the intent stays open: reconcile puts it back */
	}
	c->move_seq = 0;
	if (msg != NULL)
		lease__store_msg(c->s, "%s", msg);
	free(msg);
	return rc;
}

/* result_materialised for the result JSON's commit. */
static int
materialised(struct lease__rctx *c)
{
	return lease__rctx_receipt(c, "result_materialised", json_pack("{s:s, "
	    "s:s, s:s, s:s, s:s, s:I}", "via", lease__rctx_str(c, "via"),
	    "commit", lease__rctx_str(c, "commit"), "tree",
	    lease__rctx_str(c, "tree"), "parent", lease__rctx_str(c, "parent"),
	    "patch_sha256", c->m->patch_sha256, "files",
	    (json_int_t)c->m->nfiles));
}

int
lease__result_move_done(struct lease__rctx *c)
{
	char *text;
	int rc;

	if (c->move_seq == 0)
		return 0;
	/* the result and the intent's close: one transaction */
	if ((text = json_dumps(c->result, JSON_COMPACT |
	    JSON_ENSURE_ASCII)) == NULL)
		return lease__result_move_undo(c, -ENOMEM);
	rc = lease__intent_branch_done(c->s, c->id, c->move_seq, text);
	free(text);
	if (rc < 0)
		return lease__result_move_undo(c, rc);
	c->move_seq = 0;
	return materialised(c);
}

int
lease__result_build(struct lease__rctx *c, const char *parent_hex,
    const char *expect_tip, const char *tree_hex, const char *via,
    struct lease_gate_report *rep)
{
	git_oid parent, expect, tree, commit;
	git_odb *dst = NULL;
	char hex[41];
	json_t *patch;
	bool guard = c->move_intent;
	int rc;

	if (git_oid_fromstr(&parent, parent_hex) < 0 ||
	    git_oid_fromstr(&expect, expect_tip) < 0 ||
	    git_oid_fromstr(&tree, tree_hex) < 0)
		return -EINVAL;
	/* apply's moves of corral/<id>: the intent first (SPEC 9.2) */
	if (guard && (rc = lease__intent_branch_open(c->s, c->id,
	    c->rec.repo, expect_tip, via, &c->move_seq)) < 0)
		return rc;
	lease_fault_point("result.intent.after");
	archive(c);
	if ((rc = make_patch(c, parent_hex, tree_hex, rep)) < 0)
		goto fail;
	if (rep->n == 0 && (rc = gate_patch(c, parent_hex, rep)) < 0)
		goto fail;
	if (rep->n > 0 || c->m == NULL) {
		rc = LEASE_EINVALID;
		goto fail;
	}
	/* Valid: the objects go to the operator's repository. */
	if (git_repository_odb(&dst, lease__git_repo(c->g)) < 0) {
		rc = lease__rctx_gitfail(c, LEASE_EGIT, "object database");
		goto fail;
	}
	rc = migrate(c, dst, &tree);
	git_odb_free(dst);
	if (rc < 0 || (rc = make_commit(c, &parent, &tree, via, &commit)) < 0)
		goto fail;
	git_oid_tostr(hex, sizeof hex, &commit);
	if (guard && (rc = lease__intent_branch_new(c->s, c->id, c->move_seq,
	    hex)) < 0)
		goto fail;
	if ((rc = move_branch(c, &expect, &commit, "corral: result")) < 0)
		goto fail;
	lease_fault_point("result.branch.after");
	/* under an intent the worktree follows before the one write */
	if (guard && (rc = checkout(c, &commit)) < 0)
		goto fail;
	patch = json_pack("{s:s, s:I}", "sha256", c->m->patch_sha256, "bytes",
	    (json_int_t)c->m->patch_bytes);
	lease__result_set(c->result, "status", json_string("ready"));
	lease__result_set(c->result, "via", json_string(via));
	lease__result_set(c->result, "summary", summary_of(c->m));
	lease__result_set(c->result, "base", lease__result_str(c->rec.base));
	lease__result_set(c->result, "base_ref",
	    lease__result_str(c->rec.base_ref));
	lease__result_set(c->result, "parent", json_string(parent_hex));
	lease__result_set(c->result, "commit", json_string(hex));
	lease__result_set(c->result, "tree", json_string(tree_hex));
	lease__result_set(c->result, "branch",
	    lease__result_str(c->rec.branch));
	lease__result_set(c->result, "patch", patch);
	lease__result_set(c->result, "counts", counts_of(c->m));
	lease__result_set(c->result, "flags", flags_of(c->m));
	lease__result_set(c->result, "reasons", json_array());
	lease__result_set(c->result, "checks", json_null());
	lease__result_set(c->result, "reviewed", json_null());
	/* under an intent: written with its close (lease__result_move_done) */
	if (guard)
		return 0;
	if ((rc = lease__rctx_save(c)) < 0 || (rc = materialised(c)) < 0)
		return rc;
	return checkout(c, &commit);
fail:
	return guard ? lease__result_move_undo(c, rc) : rc;
}

/* ---- finish -------------------------------------------------------------- */

static int
quarantine(struct lease__rctx *c, const struct lease_gate_report *rep,
    const struct lease_extract *ex)
{
	json_t *reasons = reasons_json(rep, LEASE_GATE_MAX_FINDINGS);
	char *path, *text;
	int rc;

	lease__result_set(c->result, "status", json_string("quarantined"));
	lease__result_set(c->result, "via", json_string("extracted"));
	lease__result_set(c->result, "base", lease__result_str(c->rec.base));
	lease__result_set(c->result, "base_ref",
	    lease__result_str(c->rec.base_ref));
	lease__result_set(c->result, "parent", lease__result_str(c->rec.base));
	lease__result_set(c->result, "commit", json_null());
	lease__result_set(c->result, "snapshot_tree", ex->tree[0] ?
	    json_string(ex->tree) : json_null());
	lease__result_set(c->result, "reasons", reasons != NULL ?
	    json_incref(reasons) : NULL);
	lease__result_set(c->result, "findings_dropped",
	    json_integer((json_int_t)rep->dropped));
	if (c->m != NULL) {
		lease__result_set(c->result, "summary", summary_of(c->m));
		lease__result_set(c->result, "patch", json_pack("{s:s, s:I}",
		    "sha256", c->m->patch_sha256, "bytes",
		    (json_int_t)c->m->patch_bytes));
		lease__result_set(c->result, "counts", counts_of(c->m));
		lease__result_set(c->result, "flags", flags_of(c->m));
	}
	/* the reasons also sit next to the quarantined files */
	if ((path = lease__rctx_path(c, "reasons.json")) != NULL &&
	    (text = json_dumps(reasons, JSON_INDENT(1) | JSON_ENSURE_ASCII))
	    != NULL) {
		rc = lease__fs_write_file(path, text, strlen(text), 0600);
		(void)rc;
		free(text);
	}
	free(path);
	rc = lease__rctx_save(c);
	if (rc == 0)
		rc = lease__rctx_receipt(c, "result_quarantined", json_pack(
		    "{s:I, s:o, s:o}", "findings", (json_int_t)(rep->n +
		    rep->dropped), "reasons", reasons_json(rep,
		    RECEIPT_REASONS), "snapshot_tree", ex->tree[0] ?
		    json_string(ex->tree) : json_null()));
	json_decref(reasons);
	return rc;
}

static void
fail_lease(struct lease__rctx *c, const char *reason)
{
	struct lease_record r;
	char *msg = strdup(lease_store_errmsg(c->s));

	if (lease_record_get(c->s, c->id, &r) == 0) {
		if (r.state == LEASE_STATE_RUNNING) {
			int trc = lease_record_transition(c->s, c->id,
			    LEASE_EV_FAIL, reason, NULL);

			(void)trc;
		}
		lease_record_clear(&r);
	}
	if (msg != NULL)
		lease__store_msg(c->s, "%s", msg);
	free(msg);
}

/* The branch's tip (hex) into tip. */
static int
branch_tip(struct lease__rctx *c, char tip[41])
{
	char branch[LEASE_BRANCH_LEN + 1], ref[LEASE_BRANCH_LEN + 16];
	git_oid oid;
	int rc;

	if ((rc = lease_id_branch(branch, c->id)) < 0)
		return rc;
	snprintf(ref, sizeof ref, "refs/heads/%s", branch);
	if (git_reference_name_to_id(&oid, lease__git_repo(c->g), ref) < 0)
		return lease__rctx_gitfail(c, LEASE_ESTALE, ref);
	git_oid_tostr(tip, 41, &oid);
	return 0;
}

/* Less than this left (or no inode) on a file system: it is full. */
#define FULL_BYTES (1ull << 20)

static bool
fs_full(const char *path)
{
	struct statvfs v;

	if (path == NULL || statvfs(path, &v) < 0)
		return false;
	return (unsigned long long)v.f_bavail * v.f_frsize < FULL_BYTES ||
	    (v.f_files > 0 && v.f_favail == 0);
}

bool
lease__result_disk_full(const struct lease__rctx *c, int rc)
{
	char *lease_dir, *slash;
	bool full;

	if (rc >= 0)
		return false;
	if (rc == -ENOSPC || rc == -EDQUOT)
		return true;
	/*
	 * libgit2 and the journal name a full disk in words or as an
	 * I/O error: the file systems written to say whether it is one.
	 */
	if (c->g != NULL && fs_full(git_repository_path(lease__git_repo(c->g))))
		return true;
	if (c->rdir == NULL || (lease_dir = strdup(c->rdir)) == NULL)
		return false;
	if ((slash = strrchr(lease_dir, '/')) != NULL)
		*slash = '\0';
	full = fs_full(lease_dir);
	free(lease_dir);
	return full;
}

/*
 * The result's "excluded" (how many new names the policy's ignore
 * patterns left out of the workspace's snapshot, and the patterns: an
 * agent profile's workspace rules), and its receipt.
 */
static int
excluded(struct lease__rctx *c, size_t n)
{
	json_t *pats = json_array();

	for (const char *const *p = c->pol.ignore; pats != NULL && p != NULL &&
	    *p != NULL; p++)
		json_array_append_new(pats, json_string(*p));
	if (pats == NULL)
		return -ENOMEM;
	lease__result_set(c->result, "excluded", json_pack("{s:I, s:O}",
	    "entries", (json_int_t)n, "patterns", pats));
	return lease__rctx_receipt(c, "result_excluded", json_pack("{s:I, s:o}",
	    "entries", (json_int_t)n, "patterns", pats));
}

/* The finish stopped on a full disk: -ENOSPC, the lease left running. */
static int
full(struct lease__rctx *c)
{
	char *msg = strdup(lease_store_errmsg(c->s));

	lease__store_msg(c->s, "disk full: the result of lease %s waits on "
	    "its workspace (%s)", c->id, msg != NULL && msg[0] != '\0' ? msg :
	    strerror(ENOSPC));
	free(msg);
	return -ENOSPC;
}

/*
 * A finish that a full disk stopped after corral/<id> moved: the branch
 * holds corral's own commit of exactly this extraction (one parent, the
 * base; the same tree), which the retry replaces.
 */
static bool
own_earlier_commit(struct lease__rctx *c, const char *tip, const char *tree)
{
	git_commit *k = NULL;
	git_oid oid;
	char hex[41];
	bool own = false;

	if (git_oid_fromstr(&oid, tip) < 0 || git_commit_lookup(&k,
	    lease__git_repo(c->g), &oid) < 0)
		return false;
	if (git_commit_parentcount(k) == 1) {
		git_oid_tostr(hex, sizeof hex, git_commit_parent_id(k, 0));
		own = strcmp(hex, c->rec.base) == 0;
		git_oid_tostr(hex, sizeof hex, git_commit_tree_id(k));
		own = own && strcmp(hex, tree) == 0;
	}
	git_commit_free(k);
	return own;
}

int
lease_result_finish(struct lease_store *s, const char *state_dir,
    const char *id, const struct lease_result_opts *opts)
{
	struct lease_result_opts none;
	struct lease_gate_report rep;
	struct lease_extract ex;
	struct lease__rctx c;
	struct lease_record now;
	char *ws = NULL, *arts = NULL, tip[41];
	int rc;

	assert(s != NULL);
	if (opts == NULL) {
		memset(&none, 0, sizeof none);
		opts = &none;
	}
	memset(&rep, 0, sizeof rep);
	memset(&ex, 0, sizeof ex);
	if ((rc = lease__rctx_open(&c, s, state_dir, id, opts->policy,
	    opts->run_check, opts->ud, false)) < 0)
		goto out;
	if (c.rec.mode != LEASE_MODE_SANDBOXED) {
		lease__store_msg(s, "lease %s is trusted_local: it has no "
		    "result", id);
		rc = -EINVAL;
		goto out;
	}
	if (c.rec.state == LEASE_STATE_RESULT_READY &&
	    lease__rctx_str(&c, "status") != NULL) {
		rc = 0;		/* done before */
		goto out;
	}
	/*
	 * result_ready without a result: a holder that made the transition
	 * itself. Extract anyway; there is no transition left to make.
	 */
	if (c.rec.state != LEASE_STATE_RUNNING &&
	    c.rec.state != LEASE_STATE_RESULT_READY &&
	    !(opts->fail_reason != NULL && (c.rec.state ==
	    LEASE_STATE_FAILED || c.rec.state == LEASE_STATE_CANCELLED))) {
		lease__store_msg(s, "lease %s is %s: no result to extract", id,
		    lease_fsm_state_name(c.rec.state));
		rc = LEASE_EBADTRANSITION;
		goto out;
	}
	if (opts->fail_reason != NULL && c.rec.state == LEASE_STATE_RUNNING &&
	    (rc = lease_record_transition(s, id, LEASE_EV_FAIL,
	    opts->fail_reason, NULL)) < 0)
		goto out;
	lease_fault_wait("result.extract.before");
	/*
	 * A fresh result: what an attempt a full disk stopped recorded (a
	 * commit, checks) is made again, not kept as history.
	 */
	if (c.rec.state != LEASE_STATE_RESULT_READY &&
	    json_object_size(c.result) > 0) {
		json_decref(c.result);
		if ((c.result = json_object()) == NULL) {
			rc = -ENOMEM;
			goto out;
		}
	}
	/* A fresh result directory (a crashed attempt left half of one). */
	if ((rc = lease__fs_rmtree(c.rdir)) < 0 || (rc = mkdir(c.rdir,
	    0700) < 0 ?
	    -errno : 0) < 0) {
		lease__store_msg(s, "%s: %s", c.rdir, strerror(-rc));
		goto fail;
	}
	if (c.rec.repo == NULL || c.rec.base == NULL) {
		lease__store_msg(s, "lease %s has no repository or base", id);
		rc = LEASE_ENORESULT;
		goto fail;
	}
	if ((rc = lease_git_open(&c.g, c.rec.repo)) < 0) {
		lease__store_msg(s, "%s", lease_git_errmsg(c.g));
		goto fail;
	}
	if ((rc = lease_gate_odb_open(c.g, c.rdir, &c.q)) < 0) {
		lease__store_msg(s, "%s", lease_gate_odb_errmsg(c.q));
		goto fail;
	}
	ws = lease_path_workspace(state_dir, id);
	arts = lease__rctx_path(&c, "artifacts");
	if (ws == NULL || arts == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	rc = lease_extract_snapshot(c.q, ws, c.rec.base, &c.pol, arts,
	    opts->race, opts->race_ud, &rep, &ex);
	if ((rc = qfail(&c, rc)) < 0)
		goto fail;
	lease__result_set(c.result, "artifacts", json_pack("{s:s, s:I, s:I}",
	    "dir", arts, "files", (json_int_t)ex.artifacts, "bytes",
	    (json_int_t)ex.artifact_bytes));
	/* what the patterns left out is said, never silently dropped */
	if (ex.excluded > 0 && (rc = excluded(&c, ex.excluded)) < 0)
		goto fail;
	if (opts->fail_reason != NULL &&
	    (rc = lease_gate_report_add(&rep, LEASE_GATE_LEASE_FAILED, NULL,
	    opts->fail_reason)) < 0)
		goto fail;
	if (rep.n > 0 || ex.tree[0] == '\0') {
		/*
		 * For inspection: the patch of what could be read -- unless
		 * it would hold the minted credential (SPEC 8.5: never in a
		 * stored or printed stream).
		 */
		if (ex.tree[0] != '\0' &&
		    !lease_gate_report_has(&rep, LEASE_GATE_CREDENTIAL) &&
		    (rc = make_patch(&c, c.rec.base, ex.tree, &rep)) < 0)
			goto fail;
		goto quarantined;
	}
	if ((rc = branch_tip(&c, tip)) < 0)
		goto fail;
	if (strcmp(tip, c.rec.base) != 0 && !own_earlier_commit(&c, tip,
	    ex.tree)) {
		lease__store_msg(s, "branch corral/%s moved away from the base "
		    "before the result was recorded", id);
		rc = LEASE_ESTALE;
		goto fail;
	}
	lease_fault_wait("result.build.before");
	rc = lease__result_build(&c, c.rec.base, tip, ex.tree, "extracted",
	    &rep);
	if (rc == LEASE_EINVALID)
		goto quarantined;
	if (rc < 0)
		goto fail;
	/*
	 * The checks run while the lease is still running: until they end
	 * it is busy (reject and gc refuse it), and a cancel stops them and
	 * ends it cancelled (SPEC 5.1, 7.3); only then is the result ready.
	 */
	lease_fault_wait("result.checks.before");
	if ((rc = lease__result_checks(&c)) < 0 ||
	    c.rec.state != LEASE_STATE_RUNNING) {
		if (lease__result_disk_full(&c, rc))
			rc = full(&c);
		goto out;
	}
	rc = lease_record_transition(s, id, LEASE_EV_RESULT,
	    "result materialised", NULL);
	if (lease__result_disk_full(&c, rc))
		rc = full(&c);
	if (rc == LEASE_EBADTRANSITION &&
	    lease_record_get(s, id, &now) == 0) {
		/* cancelled while its checks ran: it stays cancelled */
		if (now.state == LEASE_STATE_CANCELLED)
			rc = 0;
		lease_record_clear(&now);
	}
	goto out;
quarantined:
	/*
	 * A verdict reached while the disk is full (a write that came out
	 * short) is not trusted: the finish waits for space and runs again.
	 */
	if (lease__result_disk_full(&c, -EIO)) {
		rc = full(&c);
		goto out;
	}
	if ((rc = quarantine(&c, &rep, &ex)) < 0)
		goto fail;
	fail_lease(&c, "result_invalid");
	lease__store_msg(s, "lease %s: the result failed the import gate "
	    "(%zu finding%s, first: %s) and is quarantined in %s", id,
	    rep.n + rep.dropped, rep.n + rep.dropped == 1 ? "" : "s",
	    lease_gate_reason_name(rep.v[0].reason), c.rdir);
	rc = LEASE_EINVALID;
	goto out;
fail:
	/* a full disk stops the finish, it does not end the lease */
	if (lease__result_disk_full(&c, rc)) {
		rc = full(&c);
		goto out;
	}
	fail_lease(&c, "result_error");
out:
	free(arts);
	free(ws);
	lease_gate_report_free(&rep);
	lease__rctx_close(&c);
	return rc;
}

/* ---- the recorded patch and manifest -------------------------------- */

int
lease__result_load_patch(struct lease__rctx *c, char **buf, size_t *len,
    char sha[65])
{
	json_t *p = json_object_get(c->result, "patch");
	const char *want = json_string_value(json_object_get(p, "sha256"));
	char *path = lease__rctx_path(c, "patch");
	int rc;

	*buf = NULL;
	*len = 0;
	if (path == NULL)
		return -ENOMEM;
	rc = lease__fs_read_capped(path, LEASE_RESULT_MAX_PATCH_BYTES > c->pol
	    .max_patch_bytes ? LEASE_RESULT_MAX_PATCH_BYTES :
	    c->pol.max_patch_bytes, buf, len);
	free(path);
	if (rc < 0)
		return rc;
	if ((rc = lease__gate_sha256_hex(*buf, *len, sha)) < 0)
		return rc;
	if (want != NULL && strcmp(want, sha) != 0) {
		lease__store_msg(c->s, "%s/patch does not match the digest the "
		    "result recorded", c->rdir);
		return LEASE_ETAMPERED;
	}
	return 0;
}

int
lease__result_load_manifest(struct lease__rctx *c)
{
	char *path = lease__rctx_path(c, "manifest.json"), *text = NULL;
	const char *want;
	size_t len = 0;
	int rc;

	if (path == NULL)
		return -ENOMEM;
	rc = lease__fs_read_capped(path, 64u << 20, &text, &len);
	free(path);
	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	lease_manifest_free(c->m);
	c->m = NULL;
	rc = lease_manifest_parse(text, len, &c->m);
	free(text);
	if (rc < 0) {
		lease__store_msg(c->s, "%s/manifest.json is malformed",
		    c->rdir);
		return rc;
	}
	/* it must describe the patch the result recorded */
	want = json_string_value(json_object_get(json_object_get(c->result,
	    "patch"), "sha256"));
	if (want != NULL && strcmp(want, c->m->patch_sha256) != 0) {
		lease__store_msg(c->s, "%s/manifest.json does not match the "
		    "digest the result recorded", c->rdir);
		return LEASE_ETAMPERED;
	}
	return 0;
}
