/*
 * seed.c: the objects of a workspace with a limited history (SPEC 6.4):
 * the base commit, its tree and `history` generations of its ancestors,
 * written as one pack without deltas (so its cost follows the base tree:
 * no delta search over the whole history) with its index, straight into
 * the workspace's objects/pack/: an object the operator's packs hold
 * whole is copied as its compressed bytes (checked against the CRC-32 of
 * their index), anything else read through libgit2 and deflated; no
 * indexer inflates it all again, the IDs being known; and .git/shallow
 * naming the commits whose parents were left out, so every commit keeps
 * its ID and git log shows what is there. git.c calls it from
 * lease_git_workspace_seed.
 */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <limits.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
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

/* ---- the operator's packs, read as they are ---------------------------- */

/*
 * An object stored whole in one of the operator's packs is copied as its
 * compressed bytes (git's own reuse): no inflating, no deflating again.
 * The entry's length is up to the next entry in offset order; its bytes
 * must match the CRC-32 the pack's index records. Anything else (a delta,
 * a loose object, an alternate's) is read through libgit2 and deflated.
 */
struct srcpack {
	int fd;
	unsigned char *idx;	/* the .idx, mmap'd */
	size_t idxlen;
	uint32_t n;
	uint64_t size;		/* of the .pack */
	uint64_t *ends;		/* every entry's offset, sorted, then size-20 */
};

struct srcpacks {
	struct srcpack *v;
	size_t n;
};

static uint32_t
be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

static int
u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Offset of entry i of p (git's index version 2), or UINT64_MAX. */
static uint64_t
srcpack_off(const struct srcpack *p, uint32_t i)
{
	const unsigned char *off = p->idx + 8 + 256 * 4 + (size_t)p->n * 24;
	uint32_t o = be32(off + (size_t)i * 4), k;
	const unsigned char *big = off + (size_t)p->n * 4;

	if (!(o & 0x80000000u))
		return o;
	k = o & 0x7fffffffu;
	if ((size_t)(big - p->idx) + ((size_t)k + 1) * 8 + 40 > p->idxlen)
		return UINT64_MAX;
	return (uint64_t)be32(big + (size_t)k * 8) << 32 |
	    be32(big + (size_t)k * 8 + 4);
}

static void
srcpack_close(struct srcpack *p)
{
	if (p->idx != NULL)
		munmap(p->idx, p->idxlen);
	if (p->fd >= 0)
		close(p->fd);
	free(p->ends);
}

/* Open dir/name (an .idx) and its .pack; 0, or <0 to skip it. */
static int
srcpack_open(struct srcpack *p, int dfd, const char *name)
{
	char pack[NAME_MAX + 1];
	struct stat sb;
	size_t len = strlen(name);
	int ifd;

	memset(p, 0, sizeof *p);
	p->fd = -1;
	if (len < 5 || len >= sizeof pack)
		return -EINVAL;
	memcpy(pack, name, len - 4);
	memcpy(pack + len - 4, ".pack", 6);
	if ((ifd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return -errno;
	if (fstat(ifd, &sb) < 0 || sb.st_size < 8 + 256 * 4 + 40) {
		close(ifd);
		return -EINVAL;
	}
	p->idxlen = (size_t)sb.st_size;
	p->idx = mmap(NULL, p->idxlen, PROT_READ, MAP_PRIVATE, ifd, 0);
	close(ifd);
	if (p->idx == MAP_FAILED) {
		p->idx = NULL;
		return -errno;
	}
	if (memcmp(p->idx, "\377tOc\0\0\0\2", 8) != 0)
		goto bad;
	p->n = be32(p->idx + 8 + 255 * 4);
	if (8 + 256 * 4 + (size_t)p->n * 28 + 40 > p->idxlen)
		goto bad;
	if ((p->fd = openat(dfd, pack, O_RDONLY | O_CLOEXEC |
	    O_NOFOLLOW)) < 0 || fstat(p->fd, &sb) < 0 || sb.st_size < 32)
		goto bad;
	p->size = (uint64_t)sb.st_size;
	if ((p->ends = malloc(((size_t)p->n + 1) * sizeof *p->ends)) == NULL)
		goto bad;
	for (uint32_t i = 0; i < p->n; i++)
		if ((p->ends[i] = srcpack_off(p, i)) >= p->size - 20)
			goto bad;
	p->ends[p->n] = p->size - 20;
	qsort(p->ends, p->n, sizeof *p->ends, u64_cmp);
	return 0;
bad:
	srcpack_close(p);
	memset(p, 0, sizeof *p);
	p->fd = -1;
	return -EINVAL;
}

/* The operator's packs (objects/pack/ of its common directory). */
static void
srcpacks_open(struct srcpacks *sp, git_repository *src)
{
	char dir[PATH_MAX];
	struct dirent *e;
	DIR *d;

	memset(sp, 0, sizeof *sp);
	if (snprintf(dir, sizeof dir, "%sobjects/pack",
	    git_repository_commondir(src)) >= (int)sizeof dir ||
	    (d = opendir(dir)) == NULL)
		return;	/* no reuse: everything through libgit2 */
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		struct srcpack *v;

		if (len < 5 || strcmp(e->d_name + len - 4, ".idx") != 0)
			continue;
		if ((v = realloc(sp->v, (sp->n + 1) * sizeof *v)) == NULL)
			break;
		sp->v = v;
		if (srcpack_open(&sp->v[sp->n], dirfd(d), e->d_name) == 0)
			sp->n++;
	}
	closedir(d);
}

static void
srcpacks_close(struct srcpacks *sp)
{
	for (size_t i = 0; i < sp->n; i++)
		srcpack_close(&sp->v[i]);
	free(sp->v);
}

/*
 * The raw entry of id if a pack holds it whole: its type, size, and the
 * compressed bytes (malloc'd in *raw, *rawlen). 1 found, 0 not (read it
 * through libgit2), -ENOMEM.
 */
static int
srcpacks_find(const struct srcpacks *sp, const git_oid *id, git_object_t *type,
    size_t *size, unsigned char **raw, size_t *rawlen)
{
	for (size_t k = 0; k < sp->n; k++) {
		const struct srcpack *p = &sp->v[k];
		const unsigned char *fan = p->idx + 8, *oids = fan + 256 * 4;
		uint32_t lo = id->id[0] ? be32(fan + (id->id[0] - 1) * 4) : 0;
		uint32_t hi = be32(fan + id->id[0] * 4), i;
		uint64_t off, end;
		size_t a, b, len, n, shift;
		unsigned char *buf;
		uint32_t crc;
		int c = 1;

		if (hi > p->n || lo > hi)
			continue;
		while (lo < hi) {
			i = lo + (hi - lo) / 2;
			c = memcmp(oids + (size_t)i * 20, id->id, 20);
			if (c == 0)
				break;
			if (c < 0)
				lo = i + 1;
			else
				hi = i;
		}
		if (c != 0 || (off = srcpack_off(p, i)) == UINT64_MAX)
			continue;
		/* the next entry in offset order ends this one */
		for (a = 0, b = p->n; a < b;) {
			size_t m = a + (b - a) / 2;

			if (p->ends[m] <= off)
				a = m + 1;
			else
				b = m;
		}
		end = p->ends[a];
		if (end <= off || end - off > SIZE_MAX)
			continue;
		len = (size_t)(end - off);
		if ((buf = malloc(len)) == NULL)
			return -ENOMEM;
		if (pread(p->fd, buf, len, (off_t)off) != (ssize_t)len) {
			free(buf);
			continue;
		}
		crc = (uint32_t)crc32(0, buf, (uInt)0);
		for (size_t done = 0; done < len; done += n) {
			n = len - done > 0x40000000u ? 0x40000000u : len - done;
			crc = (uint32_t)crc32(crc, buf + done, (uInt)n);
		}
		if (crc != be32(oids + (size_t)p->n * 20 + (size_t)i * 4)) {
			free(buf);
			continue;	/* damaged: let libgit2 say so */
		}
		*type = (git_object_t)((buf[0] >> 4) & 7);
		*size = buf[0] & 0x0f;
		for (n = 1, shift = 4; buf[n - 1] & 0x80; n++, shift += 7) {
			if (n >= len || shift > 60) {
				free(buf);
				return 0;
			}
			*size |= (size_t)(buf[n] & 0x7f) << shift;
		}
		if (*type < GIT_OBJECT_COMMIT || *type > GIT_OBJECT_TAG) {
			free(buf);
			return 0;	/* a delta: resolved by libgit2 */
		}
		memmove(buf, buf + n, len - n);
		*raw = buf;
		*rawlen = len - n;
		return 1;
	}
	return 0;
}

/* ---- the pack (git's pack format, version 2, no deltas) ---------------- */

struct out {
	int fd;
	EVP_MD_CTX *sha1;
	unsigned char *buf;
	size_t len;
	uint64_t off;		/* bytes written before buf */
	uint32_t crc;		/* of the object being written */
	const char *path;	/* for messages */
};

static int
out_flush(struct out *o)
{
	size_t done = 0;
	ssize_t w;

	if (o->len == 0)
		return 0;
	if (EVP_DigestUpdate(o->sha1, o->buf, o->len) != 1)
		return -EIO;
	while (done < o->len) {
		if ((w = write(o->fd, o->buf + done, o->len - done)) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		done += (size_t)w;
	}
	o->off += o->len;
	o->len = 0;
	return 0;
}

static int
out_put(struct out *o, const void *p, size_t n)
{
	int rc;

	while (n > 0) {
		size_t k;

		if (o->len == OUT_CHUNK && (rc = out_flush(o)) < 0)
			return rc;
		k = OUT_CHUNK - o->len < n ? OUT_CHUNK - o->len : n;
		memcpy(o->buf + o->len, p, k);
		o->crc = (uint32_t)crc32(o->crc, o->buf + o->len, (uInt)k);
		o->len += k;
		p = (const unsigned char *)p + k;
		n -= k;
	}
	return 0;
}

/* The type-and-size header of an object. */
static int
out_header(struct out *o, git_object_t type, size_t size)
{
	unsigned char hdr[16];
	size_t n = 0, s = size;

	hdr[n] = (unsigned char)(((unsigned)type << 4) | (s & 0x0f));
	for (s >>= 4; s != 0; s >>= 7) {
		hdr[n++] |= 0x80;
		hdr[n] = (unsigned char)(s & 0x7f);
	}
	return out_put(o, hdr, n + 1);
}

/* One object: its header, then its bytes deflated. */
static int
out_object(struct out *o, z_stream *z, git_object_t type, const void *data,
    size_t size)
{
	int rc, zrc;

	if ((rc = out_header(o, type, size)) < 0)
		return rc;
	if (deflateReset(z) != Z_OK)
		return -EIO;
	z->next_in = (unsigned char *)(uintptr_t)data;
	z->avail_in = 0;
	do {
		size_t before;

		/* zlib takes at most 4 GiB of input in one go */
		if (z->avail_in == 0 && size > 0) {
			z->avail_in = size > 0x40000000u ? 0x40000000u :
			    (unsigned)size;
			size -= z->avail_in;
		}
		if (o->len == OUT_CHUNK && (rc = out_flush(o)) < 0)
			return rc;
		before = o->len;
		z->next_out = o->buf + o->len;
		z->avail_out = (unsigned)(OUT_CHUNK - o->len);
		zrc = deflate(z, size > 0 ? Z_NO_FLUSH : Z_FINISH);
		o->len = OUT_CHUNK - z->avail_out;
		o->crc = (uint32_t)crc32(o->crc, o->buf + before,
		    (uInt)(o->len - before));
		if (zrc == Z_STREAM_ERROR)
			return -EIO;
	} while (zrc != Z_STREAM_END);
	return 0;
}

static void
put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

struct ent {
	git_oid id;
	uint64_t off;
	uint32_t crc;
};

static int
ent_cmp(const void *a, const void *b)
{
	return git_oid_cmp(&((const struct ent *)a)->id,
	    &((const struct ent *)b)->id);
}

/*
 * The pack's index (git's version 2): fanout, names, CRC-32s, offsets
 * (those past 2 GiB in a table of their own), the pack's checksum and
 * its own. e is sorted here.
 */
static int
write_idx(struct seed *sd, const char *path, struct ent *e, size_t n,
    const unsigned char *packsum)
{
	size_t nbig = 0, len, at;
	unsigned char *b, sum[EVP_MAX_MD_SIZE];
	unsigned int sumlen = 0;
	uint32_t fan[256] = { 0 };
	int rc;

	if (n > 1)
		qsort(e, n, sizeof *e, ent_cmp);
	for (size_t i = 0; i < n; i++) {
		fan[e[i].id.id[0]]++;
		if (e[i].off >= 0x80000000u)
			nbig++;
	}
	len = 8 + 256 * 4 + n * 28 + nbig * 8 + 40;
	if ((b = malloc(len)) == NULL)
		return -ENOMEM;
	memcpy(b, "\377tOc\0\0\0\2", 8);
	for (uint32_t k = 0, c = 0; k < 256; k++) {
		c += fan[k];
		put32(b + 8 + k * 4, c);
	}
	at = 8 + 256 * 4;
	for (size_t i = 0; i < n; i++)
		memcpy(b + at + i * 20, e[i].id.id, 20);
	at += n * 20;
	for (size_t i = 0; i < n; i++)
		put32(b + at + i * 4, e[i].crc);
	at += n * 4;
	for (size_t i = 0, k = 0; i < n; i++) {
		unsigned char *big = b + at + n * 4 + k * 8;

		if (e[i].off < 0x80000000u) {
			put32(b + at + i * 4, (uint32_t)e[i].off);
			continue;
		}
		put32(b + at + i * 4, 0x80000000u | (uint32_t)k++);
		put32(big, (uint32_t)(e[i].off >> 32));
		put32(big + 4, (uint32_t)e[i].off);
	}
	at += n * 4 + nbig * 8;
	memcpy(b + at, packsum, 20);
	at += 20;
	if (EVP_Digest(b, at, sum, &sumlen, EVP_sha1(), NULL) != 1 ||
	    sumlen != 20) {
		free(b);
		return -EIO;
	}
	memcpy(b + at, sum, 20);
	if ((rc = lease__fs_write_file(path, b, len, 0444)) < 0)
		snprintf(sd->errmsg, sd->errsz, "%s: %s", path, strerror(-rc));
	free(b);
	return rc;
}

/*
 * The pack and its index, written into dst's objects/pack/ under git's
 * names (pack-<checksum>): no indexer inflates the objects again, the
 * IDs and offsets are known as they are written.
 */
static int
write_pack(struct seed *sd, git_repository *dst)
{
	git_odb *src_odb = NULL;
	git_odb_object *obj = NULL;
	struct srcpacks sp;
	struct ent *ents = NULL;
	struct out o;
	z_stream z;
	char dir[PATH_MAX - 64], tmp[PATH_MAX], name[PATH_MAX];
	char hex[GIT_OID_HEXSZ + 1];
	unsigned char hdr[12], sum[EVP_MAX_MD_SIZE];
	unsigned int sumlen = 0;
	uint32_t cnt = (uint32_t)sd->objs.n;
	bool zok = false;
	int rc;

	memset(&o, 0, sizeof o);
	memset(&z, 0, sizeof z);
	o.fd = -1;
	tmp[0] = '\0';
	srcpacks_open(&sp, sd->src);
	if (snprintf(dir, sizeof dir, "%sobjects/pack",
	    git_repository_path(dst)) >= (int)sizeof dir) {
		rc = -ENAMETOOLONG;
		goto out;
	}
	o.path = dir;
	if ((o.buf = malloc(OUT_CHUNK)) == NULL ||
	    (o.sha1 = EVP_MD_CTX_new()) == NULL ||
	    (ents = calloc(sd->objs.n ? sd->objs.n : 1, sizeof *ents)) ==
	    NULL) {
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
	if (git_repository_odb(&src_odb, sd->src) < 0) {
		rc = seed_fail(sd, LEASE_EGIT, "cannot copy objects");
		goto out;
	}
	snprintf(tmp, sizeof tmp, "%s/tmp_pack_XXXXXX", dir);
	if ((o.fd = mkstemp(tmp)) < 0)
		tmp[0] = '\0';
	if (o.fd < 0 || fcntl(o.fd, F_SETFD, FD_CLOEXEC) < 0) {
		rc = -errno;
		snprintf(sd->errmsg, sd->errsz, "%s: %s", dir, strerror(errno));
		goto out;
	}
	memcpy(hdr, "PACK\0\0\0\2", 8);
	put32(hdr + 8, cnt);
	if ((rc = out_put(&o, hdr, sizeof hdr)) < 0)
		goto fail;
	for (size_t i = 0; i < sd->objs.n; i++) {
		unsigned char *raw = NULL;
		size_t rawlen = 0, size = 0;
		git_object_t type = GIT_OBJECT_INVALID;

		ents[i].id = sd->objs.v[i];
		ents[i].off = o.off + o.len;
		o.crc = (uint32_t)crc32(0, NULL, 0);
		if ((rc = srcpacks_find(&sp, &sd->objs.v[i], &type, &size,
		    &raw, &rawlen)) < 0)
			goto out;
		if (rc == 1) {
			if ((rc = out_header(&o, type, size)) == 0)
				rc = out_put(&o, raw, rawlen);
			free(raw);
		} else if (git_odb_read(&obj, src_odb, &sd->objs.v[i]) < 0) {
			rc = seed_fail(sd, LEASE_EGIT, "cannot read an object "
			    "of the base");
			goto out;
		} else {
			rc = out_object(&o, &z, git_odb_object_type(obj),
			    git_odb_object_data(obj),
			    git_odb_object_size(obj));
			git_odb_object_free(obj);
		}
		if (rc < 0)
			goto fail;
		ents[i].crc = o.crc;
	}
	if ((rc = out_flush(&o)) < 0)
		goto fail;
	if (EVP_DigestFinal_ex(o.sha1, sum, &sumlen) != 1 || sumlen != 20) {
		rc = -EIO;
		goto fail;
	}
	for (ssize_t w; (w = write(o.fd, sum, 20)) != 20;)
		if (w >= 0 || errno != EINTR) {
			rc = w < 0 ? -errno : -EIO;
			goto fail;
		}
	if (close(o.fd) < 0) {
		o.fd = -1;
		rc = -errno;
		goto fail;
	}
	o.fd = -1;
	for (int k = 0; k < 20; k++)
		snprintf(hex + 2 * k, 3, "%02x", sum[k]);
	snprintf(name, sizeof name, "%s/pack-%s.idx", dir, hex);
	if ((rc = write_idx(sd, name, ents, sd->objs.n, sum)) < 0)
		goto out;
	snprintf(name, sizeof name, "%s/pack-%s.pack", dir, hex);
	if (chmod(tmp, 0444) < 0 || rename(tmp, name) < 0) {
		rc = -errno;
		goto fail;
	}
	tmp[0] = '\0';
	rc = 0;
fail:
	if (rc < 0 && sd->errmsg[0] == '\0')
		snprintf(sd->errmsg, sd->errsz, "cannot write the workspace's "
		    "pack in %s: %s", dir, strerror(-rc));
out:
	if (o.fd >= 0)
		close(o.fd);
	if (tmp[0] != '\0')
		unlink(tmp);
	git_odb_free(src_odb);
	if (zok)
		deflateEnd(&z);
	EVP_MD_CTX_free(o.sha1);
	free(o.buf);
	free(ents);
	srcpacks_close(&sp);
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
	if ((rc = write_pack(&sd, dst)) < 0)
		goto out;
	if (git_repository_odb(&odb, dst) < 0 || git_odb_refresh(odb) < 0) {
		rc = seed_fail(&sd, LEASE_EGIT, "cannot open the workspace's "
		    "objects");
		goto out;
	}
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
