/*
 * seed.c: the objects of a workspace with a limited history (SPEC 6.4):
 * the base commit, its tree and `history` generations of its ancestors,
 * written as one pack without deltas (so its cost follows the base tree:
 * no delta search over the whole history), streamed through the indexer
 * of the workspace's own object database; and .git/shallow naming the
 * commits whose parents were left out, so every commit keeps its ID and
 * git log shows what is there. git.c calls it from
 * lease_git_workspace_seed.
 */
#include <assert.h>
#include <errno.h>
#include <git2.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "lease/lease_int.h"

#define OUT_CHUNK (1u << 20)

/* ---- a set of object IDs, each with a value (open addressing) ---------- */

struct oidset {
	git_oid *v;
	unsigned long long *val;
	size_t n, cap;
	size_t *slot;		/* index + 1 into v; 0: free */
	size_t nslot;		/* a power of two, 4 * cap */
};

static size_t
oidset_hash(const git_oid *id, size_t nslot)
{
	uint64_t h;

	memcpy(&h, id->id, sizeof h);
	return (size_t)h & (nslot - 1);
}

static int
oidset_grow(struct oidset *s)
{
	size_t cap = s->cap ? s->cap * 2 : 256, ns = cap * 4, i;
	git_oid *v = realloc(s->v, cap * sizeof *v);
	unsigned long long *val;
	size_t *slot;

	if (v == NULL)
		return -ENOMEM;
	s->v = v;
	if ((val = realloc(s->val, cap * sizeof *val)) == NULL)
		return -ENOMEM;
	s->val = val;
	if ((slot = calloc(ns, sizeof *slot)) == NULL)
		return -ENOMEM;
	free(s->slot);
	s->slot = slot;
	s->nslot = ns;
	s->cap = cap;
	for (size_t k = 0; k < s->n; k++) {
		for (i = oidset_hash(&s->v[k], ns); slot[i] != 0;
		    i = (i + 1) & (ns - 1))
			;
		slot[i] = k + 1;
	}
	return 0;
}

/* Add id with val unless it is there: 1 added, 0 present, -ENOMEM. */
static int
oidset_add(struct oidset *s, const git_oid *id, unsigned long long val)
{
	size_t i;
	int rc;

	if (s->n == s->cap && (rc = oidset_grow(s)) < 0)
		return rc;
	for (i = oidset_hash(id, s->nslot); s->slot[i] != 0;
	    i = (i + 1) & (s->nslot - 1))
		if (git_oid_equal(&s->v[s->slot[i] - 1], id))
			return 0;
	s->v[s->n] = *id;
	s->val[s->n] = val;
	s->slot[i] = ++s->n;
	return 1;
}

static void
oidset_free(struct oidset *s)
{
	free(s->v);
	free(s->val);
	free(s->slot);
}

/* ---- what goes in ------------------------------------------------------ */

struct seed {
	git_repository *src;
	struct oidset commits;	/* val: generations from the base */
	struct oidset objs;	/* val: git_object_t */
	int err;
	char *errmsg;
	size_t errsz;
};

static int
seed_fail(struct seed *sd, int code, const char *what)
{
	const git_error *e = git_error_last();

	snprintf(sd->errmsg, sd->errsz, "%s%s%s", what, e != NULL &&
	    e->message != NULL ? ": " : "", e != NULL && e->message != NULL ?
	    e->message : "");
	return code;
}

/* Trees and blobs (never a gitlink's commit); a tree seen before is
 * skipped whole, so each further commit costs only what it changed. */
static int
tree_cb(const char *root, const git_tree_entry *e, void *ud)
{
	struct seed *sd = ud;
	git_object_t t = git_tree_entry_type(e);
	int rc;

	(void)root;
	if (t != GIT_OBJECT_TREE && t != GIT_OBJECT_BLOB)
		return 0;
	if ((rc = oidset_add(&sd->objs, git_tree_entry_id(e),
	    (unsigned long long)t)) < 0) {
		sd->err = rc;
		return -1;
	}
	return rc == 0 && t == GIT_OBJECT_TREE ? 1 : 0;
}

/*
 * Breadth first from the base: each commit within `history` generations,
 * with its tree. The commits at the limit that have parents are the
 * shallow boundary, returned sorted in *shallow (malloc'd).
 */
static int
collect(struct seed *sd, const git_oid *base, unsigned long long history,
    git_oid **shallow, size_t *nshallow)
{
	git_commit *c = NULL;
	git_tree *t = NULL;
	size_t cap = 0;
	int rc = 0;

	*shallow = NULL;
	*nshallow = 0;
	if ((rc = oidset_add(&sd->commits, base, 0)) < 0)
		return rc;
	for (size_t i = 0; i < sd->commits.n; i++) {
		const git_oid *id = &sd->commits.v[i];
		unsigned long long depth = sd->commits.val[i];
		unsigned int np;

		if (git_commit_lookup(&c, sd->src, id) < 0 ||
		    git_commit_tree(&t, c) < 0) {
			rc = seed_fail(sd, LEASE_EGIT, "cannot read a commit "
			    "of the base's history");
			goto out;
		}
		if ((rc = oidset_add(&sd->objs, id, GIT_OBJECT_COMMIT)) < 0)
			goto out;
		if ((rc = oidset_add(&sd->objs, git_tree_id(t),
		    GIT_OBJECT_TREE)) < 0)
			goto out;
		if (rc == 1 && git_tree_walk(t, GIT_TREEWALK_PRE, tree_cb,
		    sd) < 0) {
			rc = sd->err < 0 ? sd->err : seed_fail(sd, LEASE_EGIT,
			    "cannot read the base tree");
			goto out;
		}
		np = git_commit_parentcount(c);
		if (np > 0 && depth == history) {
			if (*nshallow == cap) {
				git_oid *nv;

				cap = cap ? cap * 2 : 16;
				if ((nv = realloc(*shallow, cap *
				    sizeof *nv)) == NULL) {
					rc = -ENOMEM;
					goto out;
				}
				*shallow = nv;
			}
			(*shallow)[(*nshallow)++] = *id;
		}
		for (unsigned int p = 0; p < np && depth < history; p++)
			if ((rc = oidset_add(&sd->commits,
			    git_commit_parent_id(c, p), depth + 1)) < 0)
				goto out;
		git_tree_free(t);
		git_commit_free(c);
		t = NULL;
		c = NULL;
	}
	rc = 0;
out:
	git_tree_free(t);
	git_commit_free(c);
	return rc;
}

/* ---- the pack (git's pack format, version 2, no deltas) ---------------- */

struct out {
	git_odb_writepack *wp;
	git_indexer_progress stats;
	EVP_MD_CTX *sha1;
	unsigned char *buf;
	size_t len;
};

static int
out_flush(struct out *o)
{
	int rc;

	if (o->len == 0)
		return 0;
	if (EVP_DigestUpdate(o->sha1, o->buf, o->len) != 1)
		return -EIO;
	rc = o->wp->append(o->wp, o->buf, o->len, &o->stats);
	o->len = 0;
	return rc < 0 ? LEASE_EGIT : 0;
}

static int
out_put(struct out *o, const void *p, size_t n)
{
	int rc;

	if (o->len + n > OUT_CHUNK && (rc = out_flush(o)) < 0)
		return rc;
	memcpy(o->buf + o->len, p, n);
	o->len += n;
	return 0;
}

/* One object: the type-and-size header, then its bytes deflated. */
static int
out_object(struct out *o, z_stream *z, git_object_t type, const void *data,
    size_t size)
{
	unsigned char hdr[16];
	size_t n = 0, s = size;
	int rc, zrc;

	hdr[n] = (unsigned char)(((unsigned)type << 4) | (s & 0x0f));
	for (s >>= 4; s != 0; s >>= 7) {
		hdr[n++] |= 0x80;
		hdr[n] = (unsigned char)(s & 0x7f);
	}
	if ((rc = out_put(o, hdr, n + 1)) < 0)
		return rc;
	if (deflateReset(z) != Z_OK)
		return -EIO;
	z->next_in = (unsigned char *)(uintptr_t)data;
	z->avail_in = 0;
	do {
		/* zlib takes at most 4 GiB of input in one go */
		if (z->avail_in == 0 && size > 0) {
			z->avail_in = size > 0x40000000u ? 0x40000000u :
			    (unsigned)size;
			size -= z->avail_in;
		}
		if (o->len == OUT_CHUNK && (rc = out_flush(o)) < 0)
			return rc;
		z->next_out = o->buf + o->len;
		z->avail_out = (unsigned)(OUT_CHUNK - o->len);
		zrc = deflate(z, size > 0 ? Z_NO_FLUSH : Z_FINISH);
		o->len = OUT_CHUNK - z->avail_out;
		if (zrc == Z_STREAM_ERROR)
			return -EIO;
	} while (zrc != Z_STREAM_END);
	return 0;
}

static int
write_pack(struct seed *sd, git_odb *dst_odb)
{
	git_odb *src_odb = NULL;
	git_odb_object *obj = NULL;
	struct out o;
	z_stream z;
	unsigned char hdr[12], sum[EVP_MAX_MD_SIZE];
	unsigned int sumlen = 0;
	uint32_t cnt = (uint32_t)sd->objs.n;
	bool zok = false;
	int rc;

	memset(&o, 0, sizeof o);
	memset(&z, 0, sizeof z);
	if ((o.buf = malloc(OUT_CHUNK)) == NULL ||
	    (o.sha1 = EVP_MD_CTX_new()) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	if (EVP_DigestInit_ex(o.sha1, EVP_sha1(), NULL) != 1 ||
	    deflateInit(&z, Z_BEST_SPEED) != Z_OK) {
		rc = -EIO;
		snprintf(sd->errmsg, sd->errsz, "cannot start the pack");
		goto out;
	}
	zok = true;
	if (git_repository_odb(&src_odb, sd->src) < 0 ||
	    git_odb_write_pack(&o.wp, dst_odb, NULL, NULL) < 0) {
		rc = seed_fail(sd, LEASE_EGIT, "cannot copy objects");
		goto out;
	}
	memcpy(hdr, "PACK\0\0\0\2", 8);
	hdr[8] = (unsigned char)(cnt >> 24);
	hdr[9] = (unsigned char)(cnt >> 16);
	hdr[10] = (unsigned char)(cnt >> 8);
	hdr[11] = (unsigned char)cnt;
	if ((rc = out_put(&o, hdr, sizeof hdr)) < 0)
		goto fail;
	for (size_t i = 0; i < sd->objs.n; i++) {
		if (git_odb_read(&obj, src_odb, &sd->objs.v[i]) < 0) {
			rc = seed_fail(sd, LEASE_EGIT, "cannot read an object "
			    "of the base");
			goto out;
		}
		rc = out_object(&o, &z, git_odb_object_type(obj),
		    git_odb_object_data(obj), git_odb_object_size(obj));
		git_odb_object_free(obj);
		if (rc < 0)
			goto fail;
	}
	if ((rc = out_flush(&o)) < 0)
		goto fail;
	if (EVP_DigestFinal_ex(o.sha1, sum, &sumlen) != 1) {
		rc = -EIO;
		goto fail;
	}
	if (o.wp->append(o.wp, sum, sumlen, &o.stats) < 0 ||
	    o.wp->commit(o.wp, &o.stats) < 0 || git_odb_refresh(dst_odb) < 0)
		rc = LEASE_EGIT;
fail:
	if (rc < 0 && sd->errmsg[0] == '\0')
		seed_fail(sd, rc, "cannot write the workspace's pack");
out:
	if (o.wp != NULL)
		o.wp->free(o.wp);
	git_odb_free(src_odb);
	if (zok)
		deflateEnd(&z);
	EVP_MD_CTX_free(o.sha1);
	free(o.buf);
	return rc;
}

/* .git/shallow: the boundary commits, one per line (git's own format). */
static int
write_shallow(struct seed *sd, git_repository *dst, const git_oid *v,
    size_t n)
{
	const char *gd = git_repository_path(dst);
	size_t len = n * (GIT_OID_HEXSZ + 1), plen = strlen(gd) + 8;
	char *text, *path;
	int rc;

	if (n == 0)
		return 0;
	text = malloc(len + 1);
	path = malloc(plen);
	if (text == NULL || path == NULL) {
		free(text);
		free(path);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		git_oid_tostr(text + i * (GIT_OID_HEXSZ + 1), GIT_OID_HEXSZ + 1,
		    &v[i]);
		text[i * (GIT_OID_HEXSZ + 1) + GIT_OID_HEXSZ] = '\n';
	}
	snprintf(path, plen, "%sshallow", gd);
	if ((rc = lease__fs_write_file(path, text, len, 0644)) < 0)
		snprintf(sd->errmsg, sd->errsz, "%s: %s", path, strerror(-rc));
	free(path);
	free(text);
	return rc;
}

static int
oid_cmp(const void *a, const void *b)
{
	return git_oid_cmp(a, b);
}

int
lease__seed_objects(git_repository *src, const git_oid *base,
    unsigned long long history, git_repository *dst, char *errmsg,
    size_t errsz)
{
	struct seed sd;
	git_odb *odb = NULL;
	git_oid *shallow = NULL;
	size_t nshallow = 0;
	int rc;

	assert(src != NULL && base != NULL && dst != NULL && errmsg != NULL);
	memset(&sd, 0, sizeof sd);
	sd.src = src;
	sd.errmsg = errmsg;
	sd.errsz = errsz;
	errmsg[0] = '\0';
	if ((rc = collect(&sd, base, history, &shallow, &nshallow)) < 0)
		goto out;
	if (sd.objs.n > UINT32_MAX) {
		rc = -EFBIG;
		snprintf(errmsg, errsz, "the base has more objects than a "
		    "pack holds");
		goto out;
	}
	if (git_repository_odb(&odb, dst) < 0) {
		rc = seed_fail(&sd, LEASE_EGIT, "cannot open the workspace's "
		    "objects");
		goto out;
	}
	if ((rc = write_pack(&sd, odb)) < 0)
		goto out;
	if (nshallow > 1)	/* qsort(NULL, 0, ...) is undefined */
		qsort(shallow, nshallow, sizeof *shallow, oid_cmp);
	rc = write_shallow(&sd, dst, shallow, nshallow);
out:
	if (rc == -ENOMEM)
		snprintf(errmsg, errsz, "out of memory");
	git_odb_free(odb);
	free(shallow);
	oidset_free(&sd.commits);
	oidset_free(&sd.objs);
	return rc;
}

/* ---- what the workspace must hold -------------------------------------- */

struct fits {
	git_odb *odb;
	unsigned long long max_file, max_tree, total;
	char path[512];		/* the file over max_file */
	unsigned long long size;
	int err;
};

static int
fits_cb(const char *root, const git_tree_entry *e, void *ud)
{
	struct fits *f = ud;
	size_t size;
	git_object_t type;

	if (git_tree_entry_type(e) != GIT_OBJECT_BLOB)
		return 0;
	if (git_odb_read_header(&size, &type, f->odb,
	    git_tree_entry_id(e)) < 0) {
		f->err = LEASE_EGIT;
		return -1;
	}
	f->total += size;
	if (f->max_file > 0 && size > f->max_file) {
		snprintf(f->path, sizeof f->path, "%s%s", root,
		    git_tree_entry_name(e));
		f->size = size;
		return -1;
	}
	return f->max_tree > 0 && f->total > f->max_tree ? -1 : 0;
}

/* bytes as "2.0 GiB", "512 MiB", "800 bytes" */
static void
human(char *buf, size_t sz, unsigned long long n)
{
	if (n >= 1ull << 30)
		snprintf(buf, sz, "%.1f GiB", (double)n / (1ull << 30));
	else if (n >= 1ull << 20)
		snprintf(buf, sz, "%.1f MiB", (double)n / (1ull << 20));
	else
		snprintf(buf, sz, "%llu bytes", n);
}

int
lease__seed_fits(git_repository *src, const char *oid_hex,
    unsigned long long max_file, unsigned long long max_tree, char *errmsg,
    size_t errsz)
{
	git_commit *c = NULL;
	git_tree *t = NULL;
	git_oid id;
	struct fits f;
	char a[32], b[32];
	int rc = 0;

	assert(src != NULL && oid_hex != NULL && errmsg != NULL);
	memset(&f, 0, sizeof f);
	f.max_file = max_file;
	f.max_tree = max_tree;
	if (max_file == 0 && max_tree == 0)
		return 0;
	if (git_oid_fromstr(&id, oid_hex) < 0 ||
	    git_commit_lookup(&c, src, &id) < 0 || git_commit_tree(&t, c) < 0 ||
	    git_repository_odb(&f.odb, src) < 0) {
		snprintf(errmsg, errsz, "base %.12s: cannot read its tree",
		    oid_hex);
		rc = LEASE_EGIT;
		goto out;
	}
	if (git_tree_walk(t, GIT_TREEWALK_PRE, fits_cb, &f) < 0 &&
	    f.err == 0 && f.path[0] == '\0' && (max_tree == 0 ||
	    f.total <= max_tree))
		f.err = LEASE_EGIT;	/* stopped, but not by a limit */
	if (f.err < 0) {
		snprintf(errmsg, errsz, "base %.12s: cannot read its tree",
		    oid_hex);
		rc = f.err;
	} else if (f.path[0] != '\0') {
		human(a, sizeof a, f.size);
		human(b, sizeof b, max_file);
		snprintf(errmsg, errsz, "base %.12s: %s is %s, over the %s a "
		    "file may have in the workspace ([limits] file_size)",
		    oid_hex, f.path, a, b);
		rc = LEASE_ETOOLARGE;
	} else if (max_tree > 0 && f.total > max_tree) {
		human(b, sizeof b, max_tree);
		snprintf(errmsg, errsz, "base %.12s: its files take more than "
		    "the workspace's %s ([limits] disk)", oid_hex, b);
		rc = LEASE_ETOOLARGE;
	}
out:
	git_odb_free(f.odb);
	git_tree_free(t);
	git_commit_free(c);
	return rc;
}
