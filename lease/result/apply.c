/*
 * apply.c: `corral apply` (SPEC 7.6): only the recorded, reviewed commit,
 * only while corral/<id> and the review worktree still match it; a hunk
 * selection first becomes its own verified and checked commit; the
 * target moves by fast-forward only (compare-and-swap, never forced,
 * never pushed), never while it is checked out in any worktree; a target
 * that advanced sends the lease back to review with the patch re-verified
 * on top of it, or is refused when the patch no longer applies.
 */
#include <assert.h>
#include <errno.h>
#include <git2.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease/result/result_int.h"

#define HUNKS_MAX 4096

struct pick {
	size_t file;		/* 1-based */
	size_t hunk;		/* 1-based, 0: the whole file */
};

struct buf {
	char *p;
	size_t n, cap;
	bool oom;
};

static void
put(struct buf *b, const char *s, size_t n)
{
	char *np;
	size_t cap;

	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		cap = b->cap ? b->cap : 4096;
		while (b->n + n + 1 > cap)
			cap *= 2;
		if ((np = realloc(b->p, cap)) == NULL) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static void
puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

static int
refuse(struct lease__rctx *c, int code, const char *reason, json_t *extra)
{
	json_t *f = extra != NULL ? extra : json_object();
	char *msg = strdup(lease_store_errmsg(c->s));
	int rc;

	json_object_set_new(f, "reason", json_string(reason));
	json_object_set_new(f, "message", lease__gate_json_bytes(msg ? msg : "",
	    msg ? strlen(msg) : 0));
	rc = lease__rctx_receipt(c, "apply_refused", f);
	if (msg != NULL) {
		lease__store_msg(c->s, "%s", msg);
		free(msg);
	}
	return rc < 0 ? rc : code;
}

/* ---- --hunks ------------------------------------------------------------- */

static size_t
number(const char *s, size_t n, bool *ok)
{
	size_t v = 0, i;

	if (n == 0 || n > 9)
		*ok = false;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			*ok = false;
		else
			v = v * 10 + (size_t)(s[i] - '0');
	}
	if (v == 0)
		*ok = false;
	return v;
}

/* "D:F:H" or "D:F" items separated by commas or blanks. */
static int
parse_hunks(struct lease__rctx *c, const char *list, const char *digest,
    struct pick **out, size_t *nout)
{
	struct pick *v = NULL;
	const char *p = list, *a, *b;
	size_t n = 0, k;
	bool ok;

	*out = NULL;
	*nout = 0;
	if ((v = calloc(HUNKS_MAX, sizeof *v)) == NULL)
		return -ENOMEM;
	while (*p != '\0') {
		while (*p == ',' || *p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (*p == '\0')
			break;
		k = strcspn(p, ", \t\n");
		ok = n < HUNKS_MAX;
		a = memchr(p, ':', k);
		b = a != NULL ? memchr(a + 1, ':', k - (size_t)(a + 1 - p)) :
		    NULL;
		if (a == NULL || a - p != 8) {
			ok = false;
		} else if (strncmp(p, digest, 8) != 0) {
			lease__store_msg(c->s, "hunk '%.*s' belongs to another "
			    "patch (this patch's hunk IDs start with %.8s): "
			    "review again", (int)(k > 64 ? 64 : k), p, digest);
			free(v);
			return LEASE_EHUNKS;
		} else if (ok) {
			v[n].file = number(a + 1, b != NULL ? (size_t)(b - a -
			    1) : k - 9, &ok);
			v[n].hunk = b != NULL ? number(b + 1, k - (size_t)(b +
			    1 - p), &ok) : 0;
		}
		if (!ok) {
			lease__store_msg(c->s, "bad hunk ID '%.*s' (expected "
			    "DIGEST:FILE:HUNK or DIGEST:FILE)", (int)(k > 64 ?
			    64 : k), p);
			free(v);
			return LEASE_EHUNKS;
		}
		n++;
		p += k;
	}
	if (n == 0) {
		lease__store_msg(c->s, "--hunks names no hunk");
		free(v);
		return LEASE_EHUNKS;
	}
	*out = v;
	*nout = n;
	return 0;
}

/* Whether the picks take hunk h (0: asks whether any) of file f. */
static bool
picked(const struct pick *v, size_t n, size_t f, size_t h, bool *whole)
{
	size_t i;
	bool any = false;

	*whole = false;
	for (i = 0; i < n; i++) {
		if (v[i].file != f)
			continue;
		if (v[i].hunk == 0)
			*whole = true;
		if (v[i].hunk == 0 || h == 0 || v[i].hunk == h)
			any = true;
	}
	return any;
}

/* The @@ line of a hunk renumbered for the hunks kept before it. */
static void
hunk_header(struct buf *b, const git_diff_hunk *h, long offset)
{
	char line[96];
	const char *tail;
	long before, nstart;
	size_t n;

	before = h->old_lines > 0 ? h->old_start - 1 : h->old_start;
	nstart = before + offset + (h->new_lines > 0 ? 1 : 0);
	snprintf(line, sizeof line, "@@ -%d,%d +%ld,%d @@", h->old_start,
	    h->old_lines, nstart, h->new_lines);
	puts_(b, line);
	/* the function context after the second "@@" */
	n = h->header_len;
	tail = n > 2 ? memchr(h->header + 2, '@', n - 2) : NULL;
	if (tail != NULL && tail + 1 < h->header + n && tail[1] == '@')
		put(b, tail + 2, (size_t)(h->header + n - tail - 2));
	else
		puts_(b, "\n");
	if (b->n > 0 && b->p[b->n - 1] != '\n')
		puts_(b, "\n");
}

static int
select_file(struct lease__rctx *c, git_patch *p, const git_diff_delta *d,
    size_t f, const struct pick *v, size_t n, struct buf *out)
{
	git_buf whole = { NULL, 0, 0 };
	const git_diff_hunk *h;
	const git_diff_line *l;
	const char *at;
	size_t nh = git_patch_num_hunks(p), j, k, nl, i;
	bool all = true, w;
	long offset = 0;
	int rc;

	for (i = 0; i < n; i++)
		if (v[i].file == f && v[i].hunk > nh) {
			lease__store_msg(c->s, "file %zu has %zu hunk%s: no "
			    "hunk %zu", f, nh, nh == 1 ? "" : "s", v[i].hunk);
			return LEASE_EHUNKS;
		}
	picked(v, n, f, 0, &w);
	for (j = 0; !w && j < nh; j++)
		if (!picked(v, n, f, j + 1, &w))
			all = false;
	if ((rc = git_patch_to_buf(&whole, p)) < 0) {
		lease__store_msg(c->s, "cannot print file %zu", f);
		return LEASE_EGIT;
	}
	if (w || all) {
		put(out, whole.ptr, whole.size);
		git_buf_dispose(&whole);
		return 0;
	}
	if (d->status != GIT_DELTA_MODIFIED || (d->flags &
	    GIT_DIFF_FLAG_BINARY)) {
		git_buf_dispose(&whole);
		lease__store_msg(c->s, "file %zu is added, deleted or binary: "
		    "select it whole (DIGEST:%zu)", f, f);
		return LEASE_EHUNKS;
	}
	/* the file's header lines, then only the chosen hunks */
	at = strstr(whole.ptr, "\n@@ ");
	put(out, whole.ptr, at != NULL ? (size_t)(at + 1 - whole.ptr) :
	    whole.size);
	git_buf_dispose(&whole);
	for (j = 0; j < nh; j++) {
		if (git_patch_get_hunk(&h, &nl, p, j) < 0)
			return LEASE_EGIT;
		if (!picked(v, n, f, j + 1, &w))
			continue;
		hunk_header(out, h, offset);
		for (k = 0; k < nl; k++) {
			if (git_patch_get_line_in_hunk(&l, p, j, k) < 0)
				return LEASE_EGIT;
			if (l->origin == GIT_DIFF_LINE_CONTEXT_EOFNL ||
			    l->origin == GIT_DIFF_LINE_ADD_EOFNL ||
			    l->origin == GIT_DIFF_LINE_DEL_EOFNL) {
				puts_(out, "\\ No newline at end of file\n");
				continue;
			}
			put(out, &l->origin, 1);
			put(out, l->content, l->content_len);
			if (l->content_len == 0 ||
			    l->content[l->content_len - 1] != '\n')
				puts_(out, "\n");
		}
		offset += (long)h->new_lines - (long)h->old_lines;
	}
	return 0;
}

/* The recorded patch cut down to the picked hunks. */
static int
select_patch(struct lease__rctx *c, const char *patch, size_t len,
    const struct pick *v, size_t n, struct buf *out)
{
	git_diff *diff = NULL;
	git_patch *p = NULL;
	size_t i, nd;
	bool w;
	int rc = 0;

	/* a NUL: see diff_json in result.c */
	if (memchr(patch, '\0', len) != NULL ||
	    git_diff_from_buffer(&diff, len ? patch : "", len) < 0) {
		lease__store_msg(c->s, "the recorded patch does not parse");
		return LEASE_EGIT;
	}
	nd = git_diff_num_deltas(diff);
	for (i = 0; i < n; i++)
		if (v[i].file > nd) {
			lease__store_msg(c->s, "the patch has %zu file%s: no "
			    "file %zu", nd, nd == 1 ? "" : "s", v[i].file);
			rc = LEASE_EHUNKS;
			goto out;
		}
	for (i = 0; i < nd && rc == 0; i++) {
		if (!picked(v, n, i + 1, 0, &w))
			continue;
		if (git_patch_from_diff(&p, diff, i) < 0 || p == NULL) {
			rc = LEASE_EGIT;
			break;
		}
		rc = select_file(c, p, git_diff_get_delta(diff, i), i + 1, v,
		    n, out);
		git_patch_free(p);
		p = NULL;
	}
	if (rc == 0 && out->oom)
		rc = -ENOMEM;
out:
	git_diff_free(diff);
	return rc;
}

/* Run the checks again and record whether they let the commit through. */
static bool
checks_failed(struct lease__rctx *c)
{
	json_t *a = json_object_get(c->result, "checks"), *e;
	size_t i;

	json_array_foreach(a, i, e)
		if (strcmp(json_string_value(json_object_get(e, "status")) ?
		    json_string_value(json_object_get(e, "status")) : "",
		    "fail") == 0)
			return true;
	return false;
}

/* --hunks: a new result commit with the picked hunks, verified, checked. */
static int
apply_hunks(struct lease__rctx *c, const char *list, const char *commit,
    const char *parent)
{
	struct lease_gate_report rep;
	struct pick *v = NULL;
	struct buf sel = { NULL, 0, 0, false };
	char *patch = NULL, sha[65], tree[41], from[41];
	size_t len = 0, n = 0;
	int rc;

	memset(&rep, 0, sizeof rep);
	snprintf(from, sizeof from, "%s", commit);
	if ((rc = lease__result_load_patch(c, &patch, &len, sha)) < 0)
		goto out;
	if ((rc = parse_hunks(c, list, sha, &v, &n)) < 0 ||
	    (rc = select_patch(c, patch, len, v, n, &sel)) < 0)
		goto out;
	/* the selection must apply to the parent on its own */
	if ((rc = lease_gate_odb_verify(c->q, parent, sel.p ? sel.p : "", sel.n,
	    NULL, &c->pol, &rep)) < 0) {
		lease__store_msg(c->s, "%s", lease_gate_odb_errmsg(c->q));
		goto out;
	}
	if (rep.n > 0) {
		lease__store_msg(c->s, "the selected hunks fail the gate: "
		    "%s%s%s",
		    lease_gate_reason_name(rep.v[0].reason), rep.v[0].detail ?
		    ": " : "", rep.v[0].detail ? rep.v[0].detail : "");
		rc = LEASE_EHUNKS;
		goto out;
	}
	snprintf(tree, sizeof tree, "%s", rep.tree);
	lease_gate_report_free(&rep);
	rc = lease__result_build(c, parent, commit, tree, "hunks", &rep);
	if (rc == LEASE_EINVALID) {
		lease__store_msg(c->s, "the commit of the selected hunks fails "
		    "the gate: %s", rep.n ? lease_gate_reason_name(
		    rep.v[0].reason) : "?");
		rc = LEASE_EHUNKS;
	}
	if (rc < 0)
		goto out;
	/* the checks of the new commit, inside its move (SPEC 9.2) */
	if ((rc = lease__result_checks(c)) < 0 ||
	    (rc = lease__result_move_done(c)) < 0)
		goto out;
	if (checks_failed(c)) {
		lease__store_msg(c->s, "a check failed on the selected hunks "
		    "(commit %.12s): review it", lease__rctx_str(c, "commit"));
		rc = refuse(c, LEASE_EUNREVIEWED, "checks_failed", json_pack(
		    "{s:s}", "commit", lease__rctx_str(c, "commit")));
		goto out;
	}
	/* hunks the reviewer chose from a reviewed patch: reviewed */
	json_object_set_new(c->result, "reviewed", json_string(
	    lease__rctx_str(c, "commit")));
	if ((rc = lease__rctx_save(c)) == 0)
		rc = lease__rctx_receipt(c, "reviewed", json_pack("{s:s, s:s, "
		    "s:s, s:s}", "commit", lease__rctx_str(c, "commit"), "via",
		    "hunks", "from", from, "hunks", list));
out:
	lease_gate_report_free(&rep);
	free(sel.p);
	free(v);
	free(patch);
	return rc;
}

/* ---- the target ---------------------------------------------------------- */

static int
target_ref(struct lease__rctx *c, const char *into, char *out, size_t sz)
{
	int valid = 0;

	if (into == NULL) {
		if (c->rec.base_ref == NULL ||
		    strncmp(c->rec.base_ref, "refs/heads/", 11) != 0) {
			lease__store_msg(c->s, "lease %s started from %s, not "
			    "a branch: name one with --into BRANCH", c->id,
			    c->rec.base_ref ? c->rec.base_ref : "a commit");
			return LEASE_ETARGET;
		}
		snprintf(out, sz, "%s", c->rec.base_ref);
	} else if (strncmp(into, "refs/", 5) == 0) {
		snprintf(out, sz, "%s", into);
	} else {
		snprintf(out, sz, "refs/heads/%s", into);
	}
	if (strncmp(out, "refs/heads/", 11) != 0 ||
	    git_reference_name_is_valid(&valid, out) < 0 || !valid ||
	    strncmp(out, "refs/heads/" LEASE_BRANCH_PREFIX,
	    11 + strlen(LEASE_BRANCH_PREFIX)) == 0 || out[11] == '-') {
		lease__store_msg(c->s, "'%.200s' is not a branch corral can "
		    "apply into", into ? into : out);
		return LEASE_ETARGET;
	}
	return 0;
}

/* Where (a worktree path) the branch ref is checked out, if anywhere. */
static bool
checked_out(struct lease__rctx *c, const char *ref, char *where, size_t sz)
{
	git_repository *repo = lease__git_repo(c->g);
	git_reference *r = NULL, *h = NULL;
	git_strarray names = { NULL, 0 };
	git_worktree *wt = NULL;
	bool found = false;
	size_t i;
	int prev, rc;

	snprintf(where, sz, "a worktree of %s", c->rec.repo);
	if (git_reference_lookup(&r, repo, ref) < 0)
		return false;
	prev = lease__git_owner_off(c->g);
	rc = git_branch_is_checked_out(r);
	if (rc == 1) {
		found = true;
		/* the main worktree, then the linked ones, for the hint */
		if (!git_repository_is_worktree(repo) &&
		    git_reference_lookup(&h, repo, "HEAD") == 0 &&
		    git_reference_type(h) == GIT_REFERENCE_SYMBOLIC &&
		    strcmp(git_reference_symbolic_target(h), ref) == 0)
			snprintf(where, sz, "%s", lease_git_workdir(c->g));
		git_reference_free(h);
		h = NULL;
		if (git_worktree_list(&names, repo) == 0)
			for (i = 0; i < names.count; i++) {
				if (git_repository_head_for_worktree(&h, repo,
				    names.strings[i]) == 0 &&
				    strcmp(git_reference_name(h), ref) == 0 &&
				    git_worktree_lookup(&wt, repo,
				    names.strings[i]) == 0)
					snprintf(where, sz, "%s",
					    git_worktree_path(wt));
				git_worktree_free(wt);
				wt = NULL;
				git_reference_free(h);
				h = NULL;
			}
		git_strarray_dispose(&names);
	}
	/* "cd DIR" alike for every worktree: no trailing slash */
	i = strlen(where);
	while (i > 1 && where[i - 1] == '/')
		where[--i] = '\0';
	lease__git_owner_restore(c->g, prev);
	git_reference_free(r);
	return found || rc < 0;
}

/* The target moved past the parent: re-verify, new commit, back to review */
static int
rebase(struct lease__rctx *c, const char *onto, const char *commit,
    struct lease_apply_outcome *out)
{
	struct lease_gate_report rep;
	char *patch = NULL, sha[65], tree[41];
	size_t len = 0;
	int rc;

	memset(&rep, 0, sizeof rep);
	if ((rc = lease__result_load_manifest(c)) < 0 ||
	    (rc = lease__result_load_patch(c, &patch, &len, sha)) < 0)
		goto out;
	if ((rc = lease_gate_odb_verify(c->q, onto, patch, len, c->m, &c->pol,
	    &rep)) < 0) {
		lease__store_msg(c->s, "%s", lease_gate_odb_errmsg(c->q));
		goto out;
	}
	if (rep.n > 0) {
		lease__store_msg(c->s, "the target advanced to %.12s and the "
		    "patch no longer applies (%s%s%s): nothing applied", onto,
		    lease_gate_reason_name(rep.v[0].reason), rep.v[0].path ?
		    " " : "", rep.v[0].path ? rep.v[0].path : "");
		rc = refuse(c, LEASE_ENOAPPLY, "no_longer_applies", json_pack(
		    "{s:s, s:s}", "target", out->target, "onto", onto));
		goto out;
	}
	snprintf(tree, sizeof tree, "%s", rep.tree);
	lease_gate_report_free(&rep);
	rc = lease__result_build(c, onto, commit, tree, "rebased", &rep);
	if (rc == LEASE_EINVALID) {
		lease__store_msg(c->s, "the patch on top of %.12s fails the "
		    "gate", onto);
		rc = refuse(c, LEASE_ENOAPPLY, "no_longer_applies", NULL);
	}
	if (rc < 0)
		goto out;
	snprintf(out->commit, sizeof out->commit, "%s",
	    lease__rctx_str(c, "commit"));
	/* the checks of the new commit, inside its move (SPEC 9.2) */
	if ((rc = lease__result_checks(c)) < 0 ||
	    (rc = lease__result_move_done(c)) < 0 ||
	    (rc = lease__rctx_receipt(c, "result_rebased", json_pack("{s:s, "
	    "s:s, s:s, s:s}", "target", out->target, "onto", onto, "from",
	    commit, "commit", out->commit))) < 0)
		goto out;
	lease__store_msg(c->s, "%s advanced to %.12s: the patch was "
	    "re-verified on top of it as commit %.12s on corral/%s; review "
	    "it again, then apply", out->target, onto, out->commit, c->id);
	rc = LEASE_EADVANCED;
out:
	lease_gate_report_free(&rep);
	free(patch);
	return rc;
}

/* After the apply: the review worktree and workspace go. */
static int
teardown(struct lease__rctx *c, const struct lease_apply_outcome *out,
    const struct lease_apply_opts *opts)
{
	char *msg;
	int rc = 0;

	if (opts->before_teardown != NULL)
		rc = opts->before_teardown(c->id, opts->teardown_ud);
	if (rc == 0 && (rc = lease_provision_teardown(c->s, c->state_dir,
	    c->id, LEASE_TEARDOWN_RUNTIME)) == 0)
		return 0;
	/* the apply stands: say so, and what is left */
	msg = strdup(lease_store_errmsg(c->s));
	lease__store_msg(c->s, "applied %s %.12s..%.12s, but the review "
	    "worktree and workspace could not all be removed (%s); corral "
	    "reconcile or gc tries again", out->target, out->from, out->to,
	    msg != NULL && *msg != '\0' ? msg : lease_strerror(rc));
	free(msg);
	return rc;
}

/*
 * The journal could not record a made move: move the target back (by
 * compare-and-swap) and close the intent if we can; either way the open
 * intent in the journal says where the target is, and reconcile settles
 * it from what the target holds.
 */
static int
journal_lost(struct lease__rctx *c, const struct lease_apply_outcome *out,
    const git_oid *tip, const git_oid *cm, int64_t seq, bool moved, int rc)
{
	git_reference *r = NULL;
	char *why = strdup(lease_store_errmsg(c->s));
	const char *w = why != NULL ? why : lease_strerror(rc);
	int back = 0, undo;

	if (moved) {
		back = git_reference_create_matching(&r, lease__git_repo(c->g),
		    out->target, tip, 1, cm, "corral: apply undone (the "
		    "journal could not record it)");
		git_reference_free(r);
	}
	if (back < 0) {
		lease__store_msg(c->s, "the journal could not record the apply "
		    "(%s) and %s could not be moved back: it holds %.12s; the "
		    "journal holds the intent: run corral reconcile, which "
		    "finishes the apply", w, out->target, out->to);
		free(why);
		return rc;
	}
	undo = lease_intent_undo(c->s, c->id, seq, "journal_unwritable",
	    out->from);
	lease__store_msg(c->s, "the journal could not record the apply (%s): "
	    "%s %s %.12s, nothing is applied%s", w, out->target, moved ?
	    "was moved back to" : "still holds", out->from, undo < 0 ?
	    "; run corral reconcile once the journal is writable (it closes "
	    "the recorded intent)" : "");
	free(why);
	return rc;
}

/*
 * Move the target from tip to cm (tip == cm: it holds the commit
 * already) as SPEC 9.2 says: the intent journaled first, then the
 * compare-and-swap, then the outcome in one transaction.
 */
static int
move(struct lease__rctx *c, struct lease_apply_outcome *out,
    const git_oid *tip, const git_oid *cm, const char *how,
    const struct lease_apply_opts *opts)
{
	const git_error *e;
	git_reference *r = NULL;
	bool moves = !git_oid_equal(tip, cm);
	int64_t seq = 0;
	char *msg;
	int rc, grc;

	git_oid_tostr(out->to, sizeof out->to, cm);
	if ((rc = lease_intent_open(c->s, c->id, c->rec.repo, out->target,
	    out->from, out->to, how, &seq)) < 0)
		return rc;	/* nothing moved */
	lease_fault_point("apply.intent.after");
	if (moves) {
		/* fast-forward, compare-and-swap: never force */
		grc = git_reference_create_matching(&r, lease__git_repo(c->g),
		    out->target, cm, 1, tip, "corral: apply (fast-forward)");
		git_reference_free(r);
		if (grc < 0) {
			e = git_error_last();
			if (grc == GIT_EMODIFIED)
				lease__store_msg(c->s, "%s moved while "
				    "applying: run apply again", out->target);
			else
				lease__store_msg(c->s, "%s: %s", out->target,
				    e != NULL && e->message != NULL ?
				    e->message : "cannot update");
			msg = strdup(lease_store_errmsg(c->s));
			rc = lease_intent_undo(c->s, c->id, seq, grc ==
			    GIT_EMODIFIED ? "target_moved" : "git_error",
			    out->from);
			if (msg != NULL)
				lease__store_msg(c->s, "%s%s", msg, rc < 0 ?
				    " (the journal keeps the intent: corral "
				    "reconcile closes it)" : "");
			free(msg);
			if (grc == GIT_EMODIFIED)
				return refuse(c, LEASE_ESTALE, "target_moved",
				    NULL);
			return LEASE_EGIT;
		}
		lease_fault_point("apply.ref.after");
	}
	if ((rc = lease_intent_done(c->s, c->id, seq, NULL)) < 0)
		return journal_lost(c, out, tip, cm, seq, moves, rc);
	lease_fault_point("apply.journal.after");
	return teardown(c, out, opts);
}

int
lease_apply(struct lease_store *s, const char *state_dir, const char *id,
    const struct lease_apply_opts *opts, struct lease_apply_outcome *out)
{
	struct lease_apply_opts none;
	struct lease__rctx c;
	struct lease_lock *lk = NULL, *rk = NULL;
	git_reference *r = NULL;
	git_repository *repo;
	git_oid tip, cm;
	char commit[41], parent[41], why[512], sha[65], *patch = NULL;
	const char *reviewed;
	size_t plen = 0;
	int rc;

	assert(s != NULL && out != NULL);
	memset(out, 0, sizeof *out);
	if (opts == NULL) {
		memset(&none, 0, sizeof none);
		opts = &none;
	}
	memset(&c, 0, sizeof c);
	/* one apply, reject or gc of the lease at a time; then read it */
	if ((rc = lease__result_lock(s, state_dir, id, &lk)) < 0 ||
	    (rc = lease__rctx_open(&c, s, state_dir, id, opts->policy,
	    opts->run_check, opts->ud, false)) < 0)
		goto out;
	if (c.rec.state != LEASE_STATE_RESULT_READY) {
		/* "lease X failed (exit 1): ...", never "is failed exit 1" */
		lease__store_msg(s, "lease %s %s%s%s%s%s: %s", id,
		    c.rec.state == LEASE_STATE_FAILED ? "" : "is ",
		    lease_fsm_state_name(c.rec.state),
		    c.rec.failed_reason ? " (" : "", c.rec.failed_reason ?
		    c.rec.failed_reason : "", c.rec.failed_reason ? ")" : "",
		    c.rec.state == LEASE_STATE_APPLIED ? "applied already" :
		    "there is no reviewed result to apply");
		rc = c.rec.state == LEASE_STATE_APPLIED ?
		    LEASE_EBADTRANSITION : LEASE_ENORESULT;
		goto out;
	}
	lease__rctx_close(&c);
	if ((rc = lease__rctx_open(&c, s, state_dir, id, opts->policy,
	    opts->run_check, opts->ud, true)) < 0)
		goto out;
	/* a rebase or --hunks moves corral/<id>: under an intent (SPEC 9.2) */
	c.move_intent = true;
	repo = lease__git_repo(c.g);
	if (lease__rctx_str(&c, "commit") == NULL ||
	    lease__rctx_str(&c, "parent") == NULL) {
		lease__store_msg(s, "lease %s has no result commit", id);
		rc = LEASE_ENORESULT;
		goto out;
	}
	snprintf(commit, sizeof commit, "%s", lease__rctx_str(&c, "commit"));
	snprintf(parent, sizeof parent, "%s", lease__rctx_str(&c, "parent"));
	snprintf(out->commit, sizeof out->commit, "%s", commit);
	if ((rc = target_ref(&c, opts->into, out->target,
	    sizeof out->target)) < 0) {
		rc = refuse(&c, rc, "bad_target", NULL);
		goto out;
	}
	reviewed = lease__rctx_str(&c, "reviewed");
	if (reviewed == NULL || strcmp(reviewed, commit) != 0) {
		lease__store_msg(s, "commit %.12s of lease %s has not been "
		    "reviewed: run 'corral review %s' first (apply integrates "
		    "only the reviewed commit)", commit, id, id);
		rc = refuse(&c, LEASE_EUNREVIEWED, "not_reviewed", NULL);
		goto out;
	}
	/* The stored patch and manifest are what the reviewer read. */
	if ((rc = lease__result_load_manifest(&c)) < 0 ||
	    (rc = lease__result_load_patch(&c, &patch, &plen, sha)) < 0) {
		if (rc == LEASE_ETAMPERED || rc == -EINVAL)
			rc = refuse(&c, rc, "tampered", NULL);
		goto out;
	}
	free(patch);
	patch = NULL;
	if ((rc = lease__result_stale(&c, commit, why, sizeof why)) < 0) {
		if (rc == LEASE_ESTALE) {
			lease__store_msg(s, "lease %s: %s; apply integrates "
			    "only the reviewed commit %.12s", id, why, commit);
			rc = refuse(&c, rc, "stale", json_pack("{s:s}", "why",
			    why));
		}
		goto out;
	}
	if (opts->hunks != NULL) {
		if ((rc = apply_hunks(&c, opts->hunks, commit, parent)) < 0)
			goto out;
		snprintf(commit, sizeof commit, "%s",
		    lease__rctx_str(&c, "commit"));
		snprintf(out->commit, sizeof out->commit, "%s", commit);
	}
	/* one apply into the target at a time; its tip read under the lock */
	if ((rc = lease_lock_ref(state_dir, c.rec.repo, out->target,
	    LEASE_LOCK_WAIT_MS, &rk)) < 0) {
		lease__store_msg(s, "%s: %s", out->target, rc ==
		    LEASE_ELOCKED ? "another apply into it is still at work: "
		    "try again" : lease_strerror(rc));
		goto out;
	}
	if (git_reference_lookup(&r, repo, out->target) < 0 ||
	    git_reference_type(r) != GIT_REFERENCE_DIRECT) {
		lease__store_msg(s, "no branch %s in %s", out->target,
		    c.rec.repo);
		rc = refuse(&c, LEASE_ETARGET, "no_target", NULL);
		goto out;
	}
	git_oid_cpy(&tip, git_reference_target(r));
	git_reference_free(r);
	r = NULL;
	git_oid_tostr(out->from, sizeof out->from, &tip);
	git_oid_fromstr(&cm, commit);
	if (git_oid_equal(&tip, &cm)) {
		/* the owner ran the merge: it is in */
		rc = move(&c, out, &tip, &cm, "already in the target", opts);
		goto out;
	}
	if (strcmp(out->from, parent) != 0 &&
	    git_graph_descendant_of(repo, &cm, &tip) != 1) {
		rc = rebase(&c, out->from, commit, out);
		goto out;
	}
	if (checked_out(&c, out->target, out->checked_out,
	    sizeof out->checked_out)) {
		lease__store_msg(s, "%s is checked out in %s: corral never "
		    "touches a checked-out working tree (git merge --ff-only "
		    "corral/%s there does it)", out->target, out->checked_out,
		    id);
		rc = refuse(&c, LEASE_ECHECKEDOUT, "checked_out", json_pack(
		    "{s:s, s:o, s:s}", "target", out->target, "where",
		    lease__gate_json_bytes(out->checked_out, strlen(
		    out->checked_out)), "hint", "git merge --ff-only"));
		goto out;
	}
	rc = move(&c, out, &tip, &cm, "fast-forward", opts);
out:
	/* a move of corral/<id> that did not finish is put back */
	rc = lease__result_move_undo(&c, rc);
	free(patch);
	git_reference_free(r);
	lease__rctx_close(&c);
	lease_lock_release(rk);
	lease_lock_release(lk);
	return rc;
}
