/*
 * result_review.c: the review document of a lease's result (SPEC 7.4):
 * the recorded result, its manifest, the diff per file and hunk with hunk
 * IDs bound to the patch digest, whether the review worktree still holds
 * what was recorded, and the receipts; with LEASE_REVIEW_MARK it records
 * that the operator reviewed this commit.
 */
#include <assert.h>
#include <errno.h>
#include <git2.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease/result/result_int.h"

static json_t *
line_json(const git_diff_line *l)
{
	char o[2] = { l->origin, '\0' };
	size_t n = l->content_len;

	switch (l->origin) {
	case GIT_DIFF_LINE_CONTEXT_EOFNL:
	case GIT_DIFF_LINE_ADD_EOFNL:
	case GIT_DIFF_LINE_DEL_EOFNL:
		return json_pack("[s, s]", "\\", "No newline at end of file");
	default:
		break;
	}
	if (n > 0 && l->content[n - 1] == '\n')
		n--;
	return json_pack("[s, o]", o, lease__gate_json_bytes(l->content, n));
}

/* The diff of the patch text, per file and per hunk, with hunk IDs. */
static json_t *
diff_json(const char *patch, size_t len, const char *digest,
    const struct lease_manifest *m)
{
	const git_diff_delta *d;
	const git_diff_hunk *h;
	const git_diff_line *l;
	git_diff *diff = NULL;
	git_patch *p = NULL;
	json_t *files, *hunks, *lines, *f;
	size_t i, j, k, nl;
	char id[64];
	const char *path;

	if ((files = json_array()) == NULL)
		return NULL;
	/*
	 * A quarantined result's patch may hold NUL bytes (a text file with
	 * a NUL past git's binary sniff); libgit2 1.5.1 reads past its copy
	 * of such a buffer. Not shown: the reasons say why.
	 */
	if (memchr(patch, '\0', len) != NULL ||
	    git_diff_from_buffer(&diff, len > 0 ? patch : "", len) < 0)
		return files;
	for (i = 0; i < git_diff_num_deltas(diff); i++) {
		d = git_diff_get_delta(diff, i);
		path = d->new_file.path != NULL ? d->new_file.path :
		    d->old_file.path;
		if (git_patch_from_diff(&p, diff, i) < 0 || p == NULL)
			continue;
		hunks = json_array();
		for (j = 0; hunks != NULL && j < git_patch_num_hunks(p); j++) {
			if (git_patch_get_hunk(&h, &nl, p, j) < 0)
				break;
			lines = json_array();
			for (k = 0; lines != NULL && k < nl; k++)
				if (git_patch_get_line_in_hunk(&l, p, j, k) ==
				    0)
					json_array_append_new(lines,
					    line_json(l));
			snprintf(id, sizeof id, "%.8s:%zu:%zu", digest, i + 1,
			    j + 1);
			json_array_append_new(hunks, json_pack("{s:s, s:o, "
			    "s:i, s:i, s:i, s:i, s:o}", "id", id, "header",
			    lease__gate_json_bytes(h->header, h->header_len > 0
			        &&
			    h->header[h->header_len - 1] == '\n' ?
			    h->header_len - 1 : h->header_len), "old_start",
			    h->old_start, "old_lines", h->old_lines,
			    "new_start", h->new_start, "new_lines",
			    h->new_lines, "lines", lines));
		}
		snprintf(id, sizeof id, "%.8s:%zu", digest, i + 1);
		f = json_pack("{s:s, s:i, s:o, s:s, s:o, s:o, s:b, s:o}", "id",
		    id, "file", (int)(i + 1), "path",
		        lease__gate_json_bytes(path,
		    strlen(path)), "status", d->status == GIT_DELTA_ADDED ?
		    "added" : d->status == GIT_DELTA_DELETED ? "deleted" :
		    "modified", "old_mode", d->old_file.mode ? json_sprintf(
		    "%06o", d->old_file.mode) : json_null(), "new_mode",
		    d->new_file.mode ? json_sprintf("%06o", d->new_file.mode) :
		    json_null(), "binary", (d->flags & GIT_DIFF_FLAG_BINARY) !=
		    0, "hunks", hunks);
		if (f != NULL && m != NULL) {
			size_t a;

			for (a = 0; a < m->nfiles; a++)
				if (strcmp(m->files[a].path, path) == 0)
					json_object_set_new(f, "flags",
					    lease__result_flags_json(
					    m->files[a].flags));
		}
		if (f != NULL)
			json_array_append_new(files, f);
		git_patch_free(p);
		p = NULL;
	}
	git_diff_free(diff);
	return files;
}

int
lease_result_review(struct lease_store *s, const char *state_dir,
    const char *id, unsigned flags, json_t **out)
{
	struct lease__rctx c;
	json_t *doc = NULL, *entries = NULL, *rcpt;
	const char *status, *commit;
	char *patch = NULL, sha[65] = "", why[512] = "", head[65] = "";
	size_t plen = 0;
	int64_t len = 0, omitted = 0;
	bool ready, stale = false;
	int rc, vrc;

	assert(s != NULL && out != NULL);
	*out = NULL;
	if ((rc = lease__rctx_open(&c, s, state_dir, id, NULL, NULL, NULL,
	    false)) < 0)
		goto out;
	status = lease__rctx_str(&c, "status");
	if (status == NULL) {
		lease__store_msg(s, "lease %s has no result yet (it is %s)",
		    id, lease_fsm_state_name(c.rec.state));
		rc = LEASE_ENORESULT;
		goto out;
	}
	ready = strcmp(status, "ready") == 0;
	commit = lease__rctx_str(&c, "commit");
	if ((rc = lease__result_load_manifest(&c)) < 0)
		goto out;
	rc = lease__result_load_patch(&c, &patch, &plen, sha);
	if (rc < 0 && rc != -ENOENT)
		goto out;
	if ((doc = json_object()) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	lease__result_set(doc, "id", json_string(id));
	lease__result_set(doc, "name", lease__result_str(c.rec.name));
	lease__result_set(doc, "lease_state",
	    json_string(lease_fsm_state_name(c.rec.state)));
	lease__result_set(doc, "failed_reason",
	    lease__result_str(c.rec.failed_reason));
	lease__result_set(doc, "repo", lease__result_str(c.rec.repo));
	lease__result_set(doc, "worktree", lease__result_str(c.rec.worktree));
	lease__result_set(doc, "result", json_incref(c.result));
	lease__result_set(doc, "manifest", NULL);
	if (c.m != NULL) {
		char *text = lease_manifest_dump(c.m);

		lease__result_set(doc, "manifest", text ? json_loads(text, 0,
		    NULL) : NULL);
		free(text);
	}
	lease__result_set(doc, "hunk_digest", sha[0] ? json_sprintf("%.8s",
	    sha) : NULL);
	lease__result_set(doc, "diff", patch != NULL ? diff_json(patch, plen,
	    sha, c.m) : json_array());
	/* still what was recorded? */
	if (ready && c.rec.state == LEASE_STATE_RESULT_READY) {
		if ((rc = lease_git_open(&c.g, c.rec.repo)) < 0) {
			snprintf(why, sizeof why, "%s", lease_git_errmsg(c.g));
			stale = true;
		} else if ((rc = lease__result_stale(&c, commit, why,
		    sizeof why)) == LEASE_ESTALE) {
			stale = true;
		} else if (rc < 0) {
			goto out;
		}
	}
	lease__result_set(doc, "stale", stale ? json_string(why) : NULL);
	if ((flags & LEASE_REVIEW_MARK) && ready && !stale &&
	    c.rec.state == LEASE_STATE_RESULT_READY &&
	    (json_string_value(json_object_get(c.result, "reviewed")) == NULL ||
	    strcmp(json_string_value(json_object_get(c.result, "reviewed")),
	    commit) != 0)) {
		lease__result_set(c.result, "reviewed", json_string(commit));
		if ((rc = lease__rctx_save(&c)) < 0 ||
		    (rc = lease__rctx_receipt(&c, "reviewed", json_pack("{s:s, "
		    "s:s}", "commit", commit, "patch_sha256", sha))) < 0)
			goto out;
		lease__result_set(doc, "result", json_incref(c.result));
	}
	vrc = lease_receipt_verify(s, id, &len, head);
	rcpt = json_pack("{s:I, s:s, s:b}", "length", (json_int_t)len, "head",
	    head, "verified", vrc == 0);
	lease__result_set(doc, "receipt", rcpt);
	/* Bounded however long the lease's journal (issue 15). */
	vrc = lease_receipt_entries_window(s, id, LEASE_SHOW_FIRST,
	    LEASE_SHOW_LAST, &entries, &omitted);
	lease__result_set(doc, "receipts", entries);
	lease__result_set(doc, "receipts_omitted",
	    json_integer((json_int_t)omitted));
	entries = NULL;
	lease__result_set(doc, "reviewed", json_boolean(ready &&
	    commit != NULL &&
	    json_string_value(json_object_get(c.result, "reviewed")) != NULL &&
	    strcmp(json_string_value(json_object_get(c.result, "reviewed")),
	    commit) == 0));
	*out = doc;
	doc = NULL;
	rc = stale ? LEASE_ESTALE : 0;
	if (stale)
		lease__store_msg(s, "lease %s: %s", id, why);
out:
	json_decref(doc);
	free(patch);
	lease__rctx_close(&c);
	return rc;
}
