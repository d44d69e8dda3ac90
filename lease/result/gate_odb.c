/*
 * gate_odb.c: the import gate's libgit2 side (SPEC 7.2): the quarantine
 * object database of a lease (writes under the lease directory, reads the
 * operator's repository as an alternate, empty configuration), and
 * lease_gate_odb_verify, which parses a patch, checks every delta, applies
 * it in memory to the trusted base tree and compares the result with the
 * manifest path by path.
 *
 * Why a quarantine: an invalid result never writes a byte into the
 * operator's repository (git's receive-pack quarantines incoming objects
 * the same way until its checks pass), and a quarantined result keeps its
 * objects for inspection after its workspace is gone.
 */
#include <assert.h>
#include <errno.h>
#include <git2.h>
#include <git2/sys/repository.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "lease/result/result_int.h"

#define GATE_FULL_BYTES (1ull << 20)	/* less free than this: full */

/* Did libgit2's last failure come from the system (a write, memory)? */
static bool
write_failed(void)
{
	const git_error *e = git_error_last();

	return e != NULL && (e->klass == GIT_ERROR_OS ||
	    e->klass == GIT_ERROR_NOMEMORY || (e->message != NULL &&
	    strstr(e->message, "No space left") != NULL));
}

/*
 * Did the write that just failed meet a full disk? Asked at once, while
 * it still is (a disk that empties before the finish asks again made a
 * verdict of a failed write): errno, libgit2's words, or the quarantine's
 * file system with under 1 MiB or no inode left.
 */
static bool
disk_full_now(const struct lease_gate_odb *q)
{
	const git_error *e = git_error_last();
	struct statvfs v;

	if (errno == ENOSPC || errno == EDQUOT)
		return true;
	if (e != NULL && e->message != NULL &&
	    strstr(e->message, "No space left") != NULL)
		return true;
	return q->dir != NULL && statvfs(q->dir, &v) == 0 &&
	    ((unsigned long long)v.f_bavail * v.f_frsize < GATE_FULL_BYTES ||
	    (v.f_files > 0 && v.f_favail == 0));
}

int
lease__gate_odb_fail(struct lease_gate_odb *q, int code, const char *fmt, ...)
{
	const git_error *e = git_error_last();
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(q->errmsg, sizeof q->errmsg, fmt, ap);
	va_end(ap);
	n = strlen(q->errmsg);
	if (e != NULL && e->message != NULL && n < sizeof q->errmsg)
		snprintf(q->errmsg + n, sizeof q->errmsg - n, ": %s",
		    e->message);
	return code;
}

const char *
lease_gate_odb_errmsg(const struct lease_gate_odb *q)
{
	return q != NULL ? q->errmsg : "out of memory";
}

static int
mkdir_ok(const char *path)
{
	if (mkdir(path, 0700) == 0 || errno == EEXIST)
		return 0;
	return -errno;
}

int
lease_gate_odb_open(struct lease_git *g, const char *dir,
    struct lease_gate_odb **out)
{
	struct lease_gate_odb *q;
	git_repository *op;
	char *objs = NULL, *alt = NULL;
	size_t n;
	int rc;

	assert(g != NULL && dir != NULL && out != NULL);
	*out = NULL;
	if ((q = calloc(1, sizeof *q)) == NULL)
		return -ENOMEM;
	*out = q;
	q->g = g;
	op = lease__git_repo(g);
	n = strlen(dir) + 16;
	if ((q->dir = strdup(dir)) == NULL || (objs = malloc(n)) == NULL)
		return -ENOMEM;
	snprintf(objs, n, "%s/objects", dir);
	if ((rc = mkdir_ok(dir)) < 0 || (rc = mkdir_ok(objs)) < 0) {
		snprintf(q->errmsg, sizeof q->errmsg, "%s: %s", objs,
		    strerror(-rc));
		free(objs);
		return rc;
	}
	n = strlen(git_repository_commondir(op)) + 16;
	if ((alt = malloc(n)) == NULL) {
		free(objs);
		return -ENOMEM;
	}
	snprintf(alt, n, "%sobjects", git_repository_commondir(op));
	rc = 0;
	if (git_odb_open(&q->odb, objs) < 0 ||
	    git_odb_add_disk_alternate(q->odb, alt) < 0 ||
	    git_repository_wrap_odb(&q->repo, q->odb) < 0 ||
	    git_config_new(&q->cfg) < 0 ||
	    git_repository_set_config(q->repo, q->cfg) < 0)
		rc = lease__gate_odb_fail(q, LEASE_EGIT, "%s: cannot open the "
		    "quarantine object database", objs);
	free(alt);
	free(objs);
	return rc;
}

void
lease_gate_odb_free(struct lease_gate_odb *q)
{
	if (q == NULL)
		return;
	git_repository_free(q->repo);
	git_config_free(q->cfg);
	git_odb_free(q->odb);
	free(q->dir);
	free(q);
}

/* ---- verification -------------------------------------------------------- */

/* The tree of hex (a commit or a tree) in q. */
static int
tree_of(struct lease_gate_odb *q, const char *hex, git_tree **out)
{
	git_object *o = NULL;
	git_oid oid;
	int rc;

	if (hex == NULL || strlen(hex) != GIT_OID_HEXSZ ||
	    git_oid_fromstr(&oid, hex) < 0) {
		snprintf(q->errmsg, sizeof q->errmsg, "malformed object ID");
		return -EINVAL;
	}
	if (git_object_lookup(&o, q->repo, &oid, GIT_OBJECT_ANY) < 0)
		return lease__gate_odb_fail(q, LEASE_EBADBASE, "%s not found",
		    hex);
	rc = git_object_peel((git_object **)out, o, GIT_OBJECT_TREE);
	git_object_free(o);
	if (rc < 0)
		return lease__gate_odb_fail(q, LEASE_EBADBASE, "%s has no tree",
		    hex);
	return 0;
}

static int
add(struct lease_gate_report *rep, enum lease_gate_reason r, const char *path,
    const char *detail)
{
	return lease_gate_report_add(rep, r, path, detail);
}

/* The mode of path in tree, or 0. */
static unsigned
mode_in(git_tree *t, const char *path)
{
	git_tree_entry *e = NULL;
	unsigned m = 0;

	if (git_tree_entry_bypath(&e, t, path) == 0)
		m = (unsigned)git_tree_entry_filemode(e);
	git_tree_entry_free(e);
	return m;
}

struct sym {
	char **v;
	size_t n;
};

/* path lies under a symlink or gitlink of the base or one the patch adds */
static enum lease_gate_reason
under_link(git_tree *base, const struct sym *added, const char *path)
{
	char prefix[4097];
	const char *p = path, *slash;
	size_t n, i;
	unsigned m;

	while ((slash = strchr(p, '/')) != NULL) {
		n = (size_t)(slash - path);
		if (n >= sizeof prefix)
			return LEASE_GATE_NAME_TOO_LONG;
		memcpy(prefix, path, n);
		prefix[n] = '\0';
		m = mode_in(base, prefix);
		if (m == GIT_FILEMODE_LINK)
			return LEASE_GATE_BEYOND_SYMLINK;
		if (m == GIT_FILEMODE_COMMIT)
			return LEASE_GATE_GITLINK;
		for (i = 0; i < added->n; i++)
			if (strcmp(added->v[i], prefix) == 0)
				return LEASE_GATE_BEYOND_SYMLINK;
		p = slash + 1;
	}
	return LEASE_GATE_OK;
}

/* The rules for one parsed delta (both sides). */
static int
check_delta(const git_diff_delta *d, git_tree *base, const struct sym *syms,
    const struct lease_result_policy *pol, struct lease_gate_report *rep)
{
	const char *op = d->old_file.path, *np = d->new_file.path;
	const char *path = np != NULL ? np : op;
	enum lease_gate_reason r;
	int rc = 0;

	if (path == NULL)
		return add(rep, LEASE_GATE_PATCH_MALFORMED, NULL,
		    "a file without a name");
	switch (d->status) {
	case GIT_DELTA_ADDED:
	case GIT_DELTA_MODIFIED:
	case GIT_DELTA_DELETED:
	case GIT_DELTA_TYPECHANGE:
		break;
	default:
		return add(rep, LEASE_GATE_PATCH_MALFORMED, path,
		    "renames and copies are not accepted");
	}
	if (op != NULL && (r = lease_gate_path(op, strlen(op))) !=
	    LEASE_GATE_OK)
		return add(rep, r, op, "old path");
	if (np != NULL && (r = lease_gate_path(np, strlen(np))) !=
	    LEASE_GATE_OK)
		return add(rep, r, np, "new path");
	if (op != NULL && np != NULL && strcmp(op, np) != 0)
		return add(rep, LEASE_GATE_PATCH_MALFORMED, path,
		    "old and new paths differ");
	if (d->status != GIT_DELTA_DELETED && (r = lease_gate_mode(
	    d->new_file.mode, pol->allow_symlinks)) != LEASE_GATE_OK)
		rc = add(rep, r, path, "new mode");
	if (rc == 0 && d->status == GIT_DELTA_MODIFIED && (r =
	    lease_gate_mode(d->old_file.mode, pol->allow_symlinks)) !=
	    LEASE_GATE_OK)
		rc = add(rep, r, path, "old mode");
	if (rc == 0 && (d->flags & GIT_DIFF_FLAG_BINARY) && !pol->allow_binary)
		rc = add(rep, LEASE_GATE_BINARY, path, NULL);
	if (rc == 0 && (r = under_link(base, syms, path)) != LEASE_GATE_OK)
		rc = add(rep, r, path, "inside a link");
	return rc;
}

static const struct lease_manifest_file *
find_file(const struct lease_manifest *m, const char *path)
{
	size_t lo = 0, hi = m->nfiles, mid;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strcmp(path, m->files[mid].path);
		if (c == 0)
			return &m->files[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* Compare one delta of diff(base, result) with the manifest. */
static int
compare_delta(struct lease_gate_odb *q, const git_diff_delta *d,
    const struct lease_manifest *m, bool same_base,
    const struct lease_result_policy *pol, struct lease_gate_report *rep)
{
	const struct lease_manifest_file *f;
	const char *path = d->status == GIT_DELTA_DELETED ? d->old_file.path :
	    d->new_file.path;
	char hex[41], sha[65];
	enum lease_gate_reason r;
	git_blob *b = NULL;
	char want;
	int rc = 0;

	if ((r = lease_gate_path(path, strlen(path))) != LEASE_GATE_OK)
		return add(rep, r, path, "in the applied tree");
	if (d->status != GIT_DELTA_DELETED && (r = lease_gate_mode(
	    d->new_file.mode, pol->allow_symlinks)) != LEASE_GATE_OK)
		return add(rep, r, path, "in the applied tree");
	if (m == NULL)
		return 0;
	want = d->status == GIT_DELTA_ADDED ? 'A' : d->status ==
	    GIT_DELTA_DELETED ? 'D' : d->status == GIT_DELTA_MODIFIED ? 'M' :
	    '?';
	if ((f = find_file(m, path)) == NULL)
		return add(rep, LEASE_GATE_MANIFEST_MISMATCH, path,
		    "changed by the patch, absent from the manifest");
	if (f->status != want)
		return add(rep, LEASE_GATE_MANIFEST_MISMATCH, path, "status");
	if (want == 'D')
		return 0;
	if (f->new_mode != d->new_file.mode)
		return add(rep, LEASE_GATE_MANIFEST_MISMATCH, path, "mode");
	git_oid_tostr(hex, sizeof hex, &d->new_file.id);
	if (strcmp(hex, f->new_blob) != 0)
		return add(rep, LEASE_GATE_MANIFEST_MISMATCH, path,
		    "new contents");
	if (same_base && want == 'M') {
		git_oid_tostr(hex, sizeof hex, &d->old_file.id);
		if (strcmp(hex, f->old_blob) != 0)
			return add(rep, LEASE_GATE_MANIFEST_MISMATCH, path,
			    "old contents");
	}
	if (git_blob_lookup(&b, q->repo, &d->new_file.id) < 0)
		return lease__gate_odb_fail(q, LEASE_EGIT, "%s: blob", hex);
	if ((uint64_t)git_blob_rawsize(b) != f->new_size)
		rc = add(rep, LEASE_GATE_MANIFEST_MISMATCH, path, "size");
	else if ((uint64_t)git_blob_rawsize(b) > pol->max_file_bytes)
		rc = add(rep, LEASE_GATE_FILE_TOO_LARGE, path, NULL);
	else if ((rc = lease__gate_sha256_hex(git_blob_rawcontent(b),
	    (size_t)git_blob_rawsize(b), sha)) == 0 &&
	    strcmp(sha, f->sha256) != 0)
		rc = add(rep, LEASE_GATE_MANIFEST_MISMATCH, path, "sha256");
	git_blob_free(b);
	return rc;
}

static int
collect_symlinks(git_diff *diff, struct sym *s)
{
	const git_diff_delta *d;
	size_t i, n = git_diff_num_deltas(diff);

	if (n == 0)
		return 0;
	if ((s->v = calloc(n, sizeof *s->v)) == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		d = git_diff_get_delta(diff, i);
		if (d->status != GIT_DELTA_DELETED &&
		    d->new_file.path != NULL &&
		    d->new_file.mode == GIT_FILEMODE_LINK)
			s->v[s->n++] = (char *)d->new_file.path;
	}
	return 0;
}

int
lease_gate_odb_verify(struct lease_gate_odb *q, const char *base_hex,
    const char *patch, size_t len, const struct lease_manifest *m,
    const struct lease_result_policy *pol, struct lease_gate_report *rep)
{
	struct lease_result_policy def;
	struct lease_gate_scan sc;
	enum lease_gate_reason r;
	git_tree *base = NULL, *res = NULL;
	git_diff *diff = NULL, *chk = NULL;
	git_index *idx = NULL;
	struct sym syms = { NULL, 0 };
	char sha[65], hex[41], base_tree[41];
	git_oid toid;
	size_t i, n, changed = 0;
	bool same;
	int rc;

	assert(q != NULL && rep != NULL && (patch != NULL || len == 0));
	if (pol == NULL) {
		lease_result_policy_defaults(&def);
		pol = &def;
	}
	rep->tree[0] = '\0';
	if ((r = lease_gate_patch_scan(patch, len, pol, &sc)) !=
	    LEASE_GATE_OK)
		return add(rep, r, NULL, "patch scan");
	if ((rc = tree_of(q, base_hex, &base)) < 0)
		return rc;
	git_oid_tostr(base_tree, sizeof base_tree, git_tree_id(base));
	same = m != NULL && strcmp(base_tree, m->base_tree) == 0;
	if (m != NULL) {
		if ((rc = lease__gate_sha256_hex(patch, len, sha)) < 0)
			goto out;
		if (strcmp(sha, m->patch_sha256) != 0 || len != m->patch_bytes)
			if ((rc = add(rep, LEASE_GATE_MANIFEST_MISMATCH, NULL,
			    "patch digest")) < 0)
				goto out;
	}
	if (git_diff_from_buffer(&diff, len > 0 ? patch : "", len) < 0) {
		rc = add(rep, LEASE_GATE_PATCH_MALFORMED, NULL,
		    "libgit2 cannot parse the patch");
		goto out;
	}
	n = git_diff_num_deltas(diff);
	if (n > pol->max_files) {
		rc = add(rep, LEASE_GATE_TOO_MANY_FILES, NULL, "patch");
		goto out;
	}
	if ((rc = collect_symlinks(diff, &syms)) < 0)
		goto out;
	for (i = 0; i < n; i++)
		if ((rc = check_delta(git_diff_get_delta(diff, i), base, &syms,
		    pol, rep)) < 0)
			goto out;
	if (rep->n > 0)
		goto out;	/* never apply a patch the rules refuse */
	/*
	 * Applying writes the patched blobs and trees into the quarantine:
	 * a write that fails (a full disk) is an error to retry, not a
	 * verdict on the patch.
	 */
	errno = 0;
	if (git_apply_to_tree(&idx, q->repo, base, diff, NULL) < 0) {
		if (disk_full_now(q)) {
			rc = lease__gate_odb_fail(q, -ENOSPC, "apply the "
			    "patch: the disk is full");
			goto out;
		}
		if (write_failed()) {
			rc = lease__gate_odb_fail(q, LEASE_EGIT, "apply the "
			    "patch");
			goto out;
		}
		git_oid_tostr(hex, 9, git_tree_id(base));
		rc = add(rep, LEASE_GATE_PATCH_MISMATCH, NULL, "the patch does "
		    "not apply to the base");
		goto out;
	}
	errno = 0;
	if (git_index_write_tree_to(&toid, idx, q->repo) < 0 ||
	    git_tree_lookup(&res, q->repo, &toid) < 0) {
		if (disk_full_now(q)) {
			rc = lease__gate_odb_fail(q, -ENOSPC, "write the "
			    "applied tree: the disk is full");
			goto out;
		}
		if (write_failed()) {
			rc = lease__gate_odb_fail(q, LEASE_EGIT, "write the "
			    "applied tree");
			goto out;
		}
		rc = add(rep, LEASE_GATE_PATCH_MISMATCH, NULL, "the applied "
		    "index makes no tree");
		goto out;
	}
	git_oid_tostr(rep->tree, sizeof rep->tree, &toid);
	/* What the patch really did, path by path (libgit2 normalises). */
	if (git_diff_tree_to_tree(&chk, q->repo, base, res, NULL) < 0) {
		rc = lease__gate_odb_fail(q, LEASE_EGIT,
		    "cannot compare trees");
		goto out;
	}
	for (i = 0; i < git_diff_num_deltas(chk); i++) {
		changed++;
		if ((rc = compare_delta(q, git_diff_get_delta(chk, i), m, same,
		    pol, rep)) < 0)
			goto out;
	}
	if (m != NULL && changed != m->nfiles)
		if ((rc = add(rep, LEASE_GATE_MANIFEST_MISMATCH, NULL,
		    "the manifest lists paths the patch does not change")) < 0)
			goto out;
	if (same && strcmp(rep->tree, m->tree) != 0)
		if ((rc = add(rep, LEASE_GATE_PATCH_MISMATCH, NULL, "the "
		    "applied tree differs from the snapshot")) < 0)
			goto out;
	rc = 0;
out:
	free(syms.v);
	git_diff_free(chk);
	git_tree_free(res);
	git_index_free(idx);
	git_diff_free(diff);
	git_tree_free(base);
	return rc;
}
