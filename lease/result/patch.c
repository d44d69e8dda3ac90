/*
 * patch.c: the patch printer of a result (SPEC 7.1): diff(base, snapshot)
 * in the quarantine printed as a git patch, streamed to its file under the
 * policy's cap with its SHA-256, files with a NUL past git's binary sniff
 * printed as binary, and the manifest describing the change
 * (docs/results.md).
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lease/result/result_int.h"

struct printer {
	FILE *f;
	EVP_MD_CTX *sha;
	uint64_t bytes, max;
	bool over;
};

static int
put(struct printer *p, const void *b, size_t n)
{
	if (p->bytes + n > p->max) {
		p->over = true;
		return -1;
	}
	p->bytes += n;
	if (fwrite(b, 1, n, p->f) != n ||
	    EVP_DigestUpdate(p->sha, b, n) != 1)
		return -1;
	return 0;
}

static int
print_cb(const git_diff_delta *d, const git_diff_hunk *h,
    const git_diff_line *l, void *ud)
{
	struct printer *p = ud;
	char origin = l->origin;

	(void)d;
	(void)h;
	if ((origin == GIT_DIFF_LINE_CONTEXT ||
	    origin == GIT_DIFF_LINE_ADDITION ||
	    origin == GIT_DIFF_LINE_DELETION) && put(p, &origin, 1) < 0)
		return -1;
	return put(p, l->content, l->content_len);
}

static int
blob_facts(struct lease_gate_odb *q, const git_oid *id, uint64_t *size,
    char sha[65])
{
	git_blob *b = NULL;
	int rc;

	if (git_blob_lookup(&b, q->repo, id) < 0)
		return lease__gate_odb_fail(q, LEASE_EGIT, "blob");
	*size = (uint64_t)git_blob_rawsize(b);
	rc = sha == NULL ? 0 : lease__gate_sha256_hex(git_blob_rawcontent(b),
	    (size_t)git_blob_rawsize(b), sha);
	git_blob_free(b);
	return rc;
}

static int
file_cmp(const void *a, const void *b)
{
	return strcmp(((const struct lease_manifest_file *)a)->path,
	    ((const struct lease_manifest_file *)b)->path);
}

/*
 * Does one side hold a NUL past git's 8000-byte sniff (libgit2 calls such
 * a file text, and its text patch would carry the NUL)?
 */
static bool
late_nul(struct lease_gate_odb *q, const git_diff_file *f)
{
	git_blob *b = NULL;
	bool r;

	if (git_oid_is_zero(&f->id) || git_blob_lookup(&b, q->repo,
	    &f->id) < 0)
		return false;
	r = memchr(git_blob_rawcontent(b), '\0',
	    (size_t)git_blob_rawsize(b)) != NULL;
	git_blob_free(b);
	return r;
}

/*
 * The patch, delta by delta: a file with a late NUL is printed as binary
 * (a GIT binary patch when the policy allows binary, else "Binary files
 * differ"), the rest as git_diff_print would. forced[i] says which.
 */
static int
print_patch(struct lease_gate_odb *q, git_diff *diff, git_tree *from,
    git_tree *to, const git_diff_options *o, struct printer *pr,
    bool *forced)
{
	const git_diff_delta *d;
	git_diff_options fo;
	git_diff *one = NULL;
	git_patch *p = NULL;
	char *path;
	size_t i, n = git_diff_num_deltas(diff);
	int rc = 0;

	for (i = 0; rc >= 0 && i < n; i++) {
		if ((rc = git_patch_from_diff(&p, diff, i)) < 0 || p == NULL)
			break;
		d = git_patch_get_delta(p);
		if (!(d->flags & GIT_DIFF_FLAG_BINARY) &&
		    (late_nul(q, &d->old_file) || late_nul(q, &d->new_file))) {
			forced[i] = true;
			fo = *o;
			path = (char *)(d->new_file.path != NULL ?
			    d->new_file.path : d->old_file.path);
			fo.pathspec.strings = &path;
			fo.pathspec.count = 1;
			fo.flags |= GIT_DIFF_FORCE_BINARY |
			    GIT_DIFF_DISABLE_PATHSPEC_MATCH;
			if ((rc = git_diff_tree_to_tree(&one, q->repo, from, to,
			    &fo)) == 0)
				rc = git_diff_num_deltas(one) == 1 ?
				    git_diff_print(one, GIT_DIFF_FORMAT_PATCH,
				    print_cb, pr) : -1;
			git_diff_free(one);
			one = NULL;
		} else {
			rc = git_patch_print(p, print_cb, pr);
		}
		git_patch_free(p);
		p = NULL;
	}
	git_patch_free(p);
	return rc;
}

/* The manifest entry of delta i (forced: printed as binary). */
static int
manifest_file(struct lease_gate_odb *q, git_diff *diff, size_t i,
    const struct lease_result_policy *pol, bool forced,
    struct lease_manifest_file *f)
{
	const git_diff_delta *d = git_diff_get_delta(diff, i);
	git_patch *p = NULL;
	size_t adds = 0, dels = 0;
	int rc;

	switch (d->status) {
	case GIT_DELTA_ADDED:
		f->status = 'A';
		break;
	case GIT_DELTA_DELETED:
		f->status = 'D';
		break;
	default:
		f->status = 'M';
	}
	if ((f->path = strdup(f->status == 'D' ? d->old_file.path :
	    d->new_file.path)) == NULL)
		return -ENOMEM;
	if (f->status != 'A') {
		f->old_mode = d->old_file.mode;
		git_oid_tostr(f->old_blob, sizeof f->old_blob, &d->old_file.id);
		if ((rc = blob_facts(q, &d->old_file.id, &f->old_size,
		    NULL)) < 0)
			return rc;
	}
	if (f->status != 'D') {
		f->new_mode = d->new_file.mode;
		git_oid_tostr(f->new_blob, sizeof f->new_blob, &d->new_file.id);
		if ((rc = blob_facts(q, &d->new_file.id, &f->new_size,
		    f->sha256)) < 0)
			return rc;
	}
	if (git_patch_from_diff(&p, diff, i) < 0)
		return lease__gate_odb_fail(q, LEASE_EGIT, "patch of %s",
		    f->path);
	if (p != NULL && !forced)
		git_patch_line_stats(NULL, &adds, &dels, p);
	f->binary = forced || (git_diff_get_delta(diff, i)->flags &
	    GIT_DIFF_FLAG_BINARY) != 0;
	git_patch_free(p);
	f->insertions = adds;
	f->deletions = dels;
	f->flags = lease_gate_flags(f->path, pol->flag_rules, pol->checks,
	    pol->nchecks);
	return 0;
}

/* Every file of a tree, its path from the root (a git_tree_walk). */
struct tree_paths {
	char **v;
	size_t n, cap;
	bool oom;
};

static int
tree_path_cb(const char *root, const git_tree_entry *e, void *arg)
{
	struct tree_paths *t = arg;
	const char *name = git_tree_entry_name(e);
	size_t rn = strlen(root), nn = strlen(name);
	char **nv, *p;

	if (git_tree_entry_type(e) == GIT_OBJECT_TREE)
		return 0;
	if (t->n == t->cap) {
		if ((nv = realloc(t->v, (t->cap ? t->cap * 2 : 256) *
		    sizeof *nv)) == NULL)
			goto oom;
		t->v = nv;
		t->cap = t->cap ? t->cap * 2 : 256;
	}
	if ((p = malloc(rn + nn + 1)) == NULL)
		goto oom;
	memcpy(p, root, rn);
	memcpy(p + rn, name, nn + 1);
	t->v[t->n++] = p;
	return 0;
oom:
	t->oom = true;
	return -1;
}

static int
str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The name_twin flag: a changed path the result tree holds that names the
 * same file as another path of it on macOS or Windows.
 */
static int
flag_twins(struct lease_gate_odb *q, git_tree *to, struct lease_manifest *m)
{
	struct tree_paths t = { NULL, 0, 0, false };
	bool *twin = NULL;
	size_t i, w = 0;
	char *key;
	int rc;

	if (git_tree_walk(to, GIT_TREEWALK_PRE, tree_path_cb, &t) != 0) {
		rc = t.oom ? -ENOMEM : lease__gate_odb_fail(q, LEASE_EGIT,
		    "walk of the result tree");
		goto out;
	}
	if ((twin = calloc(t.n > 0 ? t.n : 1, sizeof *twin)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = lease_gate_twins((const char *const *)t.v, t.n, twin)) < 0)
		goto out;
	for (i = 0; i < t.n; i++) {
		if (twin[i])
			t.v[w++] = t.v[i];
		else
			free(t.v[i]);
	}
	t.n = w;
	qsort(t.v, t.n, sizeof *t.v, str_cmp);
	for (i = 0; t.n > 0 && i < m->nfiles; i++) {
		key = m->files[i].path;
		if (m->files[i].status != 'D' && bsearch(&key, t.v, t.n,
		    sizeof *t.v, str_cmp) != NULL)
			m->files[i].flags |= LEASE_FLAG_TWIN;
	}
	rc = 0;
out:
	for (i = 0; i < t.n; i++)
		free(t.v[i]);
	free(t.v);
	free(twin);
	return rc;
}

int
lease_patch_write(struct lease_gate_odb *q, const char *from_hex,
    const char *to_tree, const struct lease_result_policy *pol,
    const char *patch_path, struct lease_gate_report *rep,
    struct lease_manifest **out)
{
	git_diff_options o;
	git_object *fo = NULL;
	git_tree *from = NULL, *to = NULL;
	git_diff *diff = NULL;
	struct lease_manifest *m = NULL;
	struct printer pr;
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, k;
	char *tmp = NULL;
	git_oid oid;
	bool *forced = NULL;
	size_t i, n;
	int rc, pfd;

	assert(q != NULL && pol != NULL && patch_path != NULL && out != NULL);
	*out = NULL;
	memset(&pr, 0, sizeof pr);
	if (from_hex == NULL || git_oid_fromstr(&oid, from_hex) < 0 ||
	    git_object_lookup(&fo, q->repo, &oid, GIT_OBJECT_ANY) < 0 ||
	    git_object_peel((git_object **)&from, fo, GIT_OBJECT_TREE) < 0 ||
	    to_tree == NULL || git_oid_fromstr(&oid, to_tree) < 0 ||
	    git_tree_lookup(&to, q->repo, &oid) < 0) {
		rc = lease__gate_odb_fail(q, LEASE_EGIT, "trees to diff");
		goto out;
	}
	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	o.flags = GIT_DIFF_INCLUDE_TYPECHANGE;
	if (pol->allow_binary)
		o.flags |= GIT_DIFF_SHOW_BINARY;
	if (git_diff_tree_to_tree(&diff, q->repo, from, to, &o) < 0) {
		rc = lease__gate_odb_fail(q, LEASE_EGIT, "diff");
		goto out;
	}
	n = strlen(patch_path) + 8;
	if ((tmp = malloc(n)) == NULL || (pr.sha = EVP_MD_CTX_new()) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	snprintf(tmp, n, "%s.tmp", patch_path);
	unlink(tmp);
	pfd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (pfd < 0 || (pr.f = fdopen(pfd, "w")) == NULL) {
		rc = -errno;
		if (pfd >= 0)
			close(pfd);
		snprintf(q->errmsg, sizeof q->errmsg, "%s: %s", tmp,
		    strerror(errno));
		goto out;
	}
	pr.max = pol->max_patch_bytes;
	EVP_DigestInit_ex(pr.sha, EVP_sha256(), NULL);
	n = git_diff_num_deltas(diff);
	if ((forced = calloc(n > 0 ? n : 1, sizeof *forced)) == NULL) {
		rc = -ENOMEM;
		fclose(pr.f);
		pr.f = NULL;
		unlink(tmp);
		goto out;
	}
	rc = print_patch(q, diff, from, to, &o, &pr, forced);
	if (fflush(pr.f) != 0 || fsync(fileno(pr.f)) != 0)
		rc = rc < 0 ? rc : -1;
	fclose(pr.f);
	pr.f = NULL;
	if (pr.over) {
		unlink(tmp);
		rc = lease_gate_report_add(rep, LEASE_GATE_PATCH_TOO_LARGE,
		    NULL, NULL);
		goto out;
	}
	if (rc < 0 || rename(tmp, patch_path) < 0) {
		unlink(tmp);
		rc = lease__gate_odb_fail(q, LEASE_EGIT, "%s: cannot write the "
		    "patch", patch_path);
		goto out;
	}
	if ((m = calloc(1, sizeof *m)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	m->version = 1;
	EVP_DigestFinal_ex(pr.sha, md, &mdlen);
	for (k = 0; k < mdlen && k < 32; k++)
		snprintf(m->patch_sha256 + 2 * k, 3, "%02x", md[k]);
	m->patch_bytes = pr.bytes;
	snprintf(m->base, sizeof m->base, "%s", from_hex);
	git_oid_tostr(m->base_tree, sizeof m->base_tree, git_tree_id(from));
	git_oid_tostr(m->tree, sizeof m->tree, git_tree_id(to));
	n = git_diff_num_deltas(diff);
	if (n > 0 && (m->files = calloc(n, sizeof *m->files)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		m->nfiles = i + 1;
		if ((rc = manifest_file(q, diff, i, pol, forced[i],
		    &m->files[i])) < 0)
			goto out;
		m->added += m->files[i].status == 'A';
		m->modified += m->files[i].status == 'M';
		m->deleted += m->files[i].status == 'D';
		m->insertions += m->files[i].insertions;
		m->deletions += m->files[i].deletions;
		if (m->files[i].status != 'D')
			m->new_bytes += m->files[i].new_size;
	}
	if (n > 1)
		qsort(m->files, n, sizeof *m->files, file_cmp);
	if ((rc = flag_twins(q, to, m)) < 0)
		goto out;
	*out = m;
	m = NULL;
	rc = 0;
out:
	if (pr.f != NULL)
		fclose(pr.f);
	EVP_MD_CTX_free(pr.sha);
	free(forced);
	free(tmp);
	lease_manifest_free(m);
	git_diff_free(diff);
	git_tree_free(to);
	git_tree_free(from);
	git_object_free(fo);
	return rc;
}
