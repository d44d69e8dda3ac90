/*
 * extract.c: the result of a lease computed on the trusted side (SPEC 7.1).
 * The workspace is read as data: every entry is lstat'ed and opened
 * beneath its parent without following anything (openat2 RESOLVE_BENEATH
 * | NO_SYMLINKS | NO_MAGICLINKS | NO_XDEV, else O_NOFOLLOW), its identity
 * checked between lstat and fstat and again after reading; the sandbox's
 * .git is never opened; ignore rules come from the base tree's .gitignore
 * blobs and the policy (matched by ignore.c). Blobs and trees go to the
 * lease's quarantine object database; patch.c prints the patch and its
 * manifest (docs/results.md).
 */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <linux/openat2.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lease/result/result_int.h"

#define REL_MAX 4096
#define DEPTH_MAX 128
#define IGNORE_BLOB_MAX (1u << 20)
#define BINARY_SNIFF 8000	/* bytes git looks at for a NUL */
#define HASH_CHUNK 65536

struct walk {
	struct lease_gate_odb *q;
	const struct lease_result_policy *pol;
	struct lease_gate_report *rep;
	git_index *idx;			/* the snapshot; NULL for artifacts */
	struct lease__ignore ign;	/* from the base tree, stacked */
	struct lease__ignore pign;	/* the policy's */
	lease_extract_race_cb race;
	void *race_ud;
	const char *skip;		/* the output dir (snapshot walk) */
	bool no_openat2;
	uint64_t new_entries, max_new;
	uint64_t changed, bytes;	/* changed files and their bytes */
	size_t files_seen;
	size_t excluded;		/* names the policy's patterns drop */
	bool aborted;
	int err;			/* a hard error: stop */
	char rel[REL_MAX + 1];
};

/* ---- helpers ------------------------------------------------------------- */

/* Does buf hold the lease's minted credential (SPEC 8.5)? */
static bool
holds_secret(const struct walk *w, const void *buf, size_t n)
{
	const char *s = w->pol->secret;
	size_t len = s != NULL ? strlen(s) : 0;

	return len > 0 && n >= len && memmem(buf, n, s, len) != NULL;
}

static void
finding(struct walk *w, enum lease_gate_reason r, const char *path,
    const char *detail)
{
	if (w->err == 0 && lease_gate_report_add(w->rep, r, path, detail) < 0)
		w->err = -ENOMEM;
}

/* A cap: the finding, then stop walking (memory stays bounded). */
static void
cap_hit(struct walk *w, enum lease_gate_reason r, const char *path,
    const char *detail)
{
	finding(w, r, path, detail);
	w->aborted = true;
}

/* Open name beneath dirfd without following anything. */
static int
open_beneath(struct walk *w, int dirfd, const char *name, int flags)
{
	struct open_how how;
	long fd;

	flags |= O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;
	if (!w->no_openat2) {
		memset(&how, 0, sizeof how);
		how.flags = (uint64_t)flags;
		how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
		    RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
		fd = syscall(SYS_openat2, dirfd, name, &how, sizeof how);
		if (fd >= 0 || errno != ENOSYS)
			return (int)fd;
		w->no_openat2 = true;
	}
	return openat(dirfd, name, flags);
}

/* Why an open of an entry just lstat'ed failed. */
static enum lease_gate_reason
open_reason(int e)
{
	switch (e) {
	case ELOOP:
	case ENOENT:
	case ENOTDIR:
	case EXDEV:
	case EAGAIN:
		return LEASE_GATE_CHANGED;	/* it is not what lstat saw */
	default:
		return LEASE_GATE_UNREADABLE;
	}
}


/* The operator's policy decides first, then the base tree's files. */
static bool
ignored(struct walk *w, const char *rel, bool isdir)
{
	int v = lease__ignore_match(&w->pign, rel, isdir);

	if (v >= 0) {
		w->excluded += v == 1;
		return v == 1;
	}
	return lease__ignore_match(&w->ign, rel, isdir) == 1;
}

/* Push the rules of base_sub's .gitignore (read from trusted objects). */
static int
push_gitignore(struct walk *w, git_tree *base_sub, size_t rel_len)
{
	const git_tree_entry *e;
	git_blob *b = NULL;
	int rc;

	if (base_sub == NULL ||
	    (e = git_tree_entry_byname(base_sub, ".gitignore")) == NULL ||
	    git_tree_entry_filemode(e) != GIT_FILEMODE_BLOB)
		return 0;
	if (git_blob_lookup(&b, w->q->repo, git_tree_entry_id(e)) < 0)
		return lease__gate_odb_fail(w->q, LEASE_EGIT,
		    "base .gitignore");
	rc = 0;
	if (git_blob_rawsize(b) <= IGNORE_BLOB_MAX)
		rc = lease__ignore_parse(&w->ign, git_blob_rawcontent(b),
		    (size_t)git_blob_rawsize(b), rel_len ? rel_len + 1 : 0);
	git_blob_free(b);
	return rc;
}

static int
index_add(struct walk *w, const char *rel, unsigned mode, const git_oid *id,
    uint64_t size)
{
	git_index_entry e;

	memset(&e, 0, sizeof e);
	e.mode = mode;
	e.path = rel;
	e.file_size = (uint32_t)size;
	git_oid_cpy(&e.id, id);
	if (git_index_add(w->idx, &e) < 0) {
		finding(w, LEASE_GATE_UNREADABLE, rel, "libgit2 refuses the "
		    "path");
		return 0;
	}
	return 0;
}

/* ---- reading a file as data ---------------------------------------------- */

/*
 * Read the regular file name (lstat'ed as *lst) into a malloc'd buffer,
 * checking that what is open is what lstat saw and that nothing changed
 * while it was read. 0, or a finding (returns 1) or an error.
 */
static int
read_file(struct walk *w, int dirfd, const char *name, const struct stat *lst,
    char **out, size_t *len)
{
	struct stat a, b;
	size_t got = 0, want;
	char *buf, extra;
	ssize_t k;
	int fd, e;

	*out = NULL;
	*len = 0;
	if (w->race != NULL)
		w->race(w->rel, w->race_ud);
	if ((fd = open_beneath(w, dirfd, name, O_RDONLY | O_NONBLOCK)) < 0) {
		e = errno;
		finding(w, open_reason(e), w->rel, strerror(e));
		return 1;
	}
	if (fstat(fd, &a) < 0 || !S_ISREG(a.st_mode) ||
	    a.st_dev != lst->st_dev || a.st_ino != lst->st_ino ||
	    a.st_size != lst->st_size) {
		close(fd);
		finding(w, LEASE_GATE_CHANGED, w->rel, "replaced after lstat");
		return 1;
	}
	want = (size_t)a.st_size;
	if ((buf = malloc(want + 1)) == NULL) {
		close(fd);
		return -ENOMEM;
	}
	while (got < want) {
		k = read(fd, buf + got, want - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	/* nothing past the size lstat saw, and the same file afterwards */
	k = got == want ? read(fd, &extra, 1) : 0;
	if (got != want || k != 0 || fstat(fd, &b) < 0 ||
	    b.st_size != a.st_size || b.st_mtim.tv_sec != a.st_mtim.tv_sec ||
	    b.st_mtim.tv_nsec != a.st_mtim.tv_nsec ||
	    b.st_ctim.tv_sec != a.st_ctim.tv_sec ||
	    b.st_ctim.tv_nsec != a.st_ctim.tv_nsec) {
		close(fd);
		free(buf);
		finding(w, LEASE_GATE_CHANGED, w->rel, "changed while read");
		return 1;
	}
	close(fd);
	buf[got] = '\0';
	*out = buf;
	*len = got;
	return 0;
}

/*
 * Whether the file (larger than the per-file cap) still has blob ID id,
 * hashed in chunks so memory stays bounded. 1 yes, 0 no or a finding.
 */
static int
same_large(struct walk *w, int dirfd, const char *name,
    const struct stat *lst, const git_oid *id)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	char hdr[64], *buf;
	unsigned int mdlen = 0;
	struct stat a;
	EVP_MD_CTX *ctx;
	uint64_t left;
	ssize_t k;
	int fd, n, same = 0;

	if (w->race != NULL)
		w->race(w->rel, w->race_ud);
	if ((fd = open_beneath(w, dirfd, name, O_RDONLY | O_NONBLOCK)) < 0) {
		finding(w, open_reason(errno), w->rel, strerror(errno));
		return 0;
	}
	if (fstat(fd, &a) < 0 || !S_ISREG(a.st_mode) ||
	    a.st_dev != lst->st_dev || a.st_ino != lst->st_ino) {
		close(fd);
		finding(w, LEASE_GATE_CHANGED, w->rel, "replaced after lstat");
		return 0;
	}
	if ((buf = malloc(HASH_CHUNK)) == NULL ||
	    (ctx = EVP_MD_CTX_new()) == NULL) {
		free(buf);
		close(fd);
		w->err = -ENOMEM;
		return 0;
	}
	n = snprintf(hdr, sizeof hdr, "blob %llu", (unsigned long long)
	    a.st_size);
	EVP_DigestInit_ex(ctx, EVP_sha1(), NULL);
	EVP_DigestUpdate(ctx, hdr, (size_t)n + 1);
	for (left = (uint64_t)a.st_size; left > 0; left -= (uint64_t)k) {
		k = read(fd, buf, left < HASH_CHUNK ? (size_t)left :
		    HASH_CHUNK);
		if (k < 0 && errno == EINTR) {
			k = 0;
			continue;
		}
		if (k <= 0)
			break;
		EVP_DigestUpdate(ctx, buf, (size_t)k);
	}
	if (left == 0 && EVP_DigestFinal_ex(ctx, md, &mdlen) == 1 &&
	    mdlen == GIT_OID_RAWSZ)
		same = memcmp(md, id->id, GIT_OID_RAWSZ) == 0;
	EVP_MD_CTX_free(ctx);
	free(buf);
	close(fd);
	return same;
}

/* ---- entries ------------------------------------------------------------- */

/* HEAD with objects, refs or commondir: in the directory fd, or in tree. */
static bool
bare_shape(int fd, const git_tree *tree)
{
	static const char *const names[] = { "HEAD", "commondir", "objects",
		"refs" };
	bool has[4];
	struct stat st;
	size_t i;

	for (i = 0; i < 4; i++)
		has[i] = tree != NULL ?
		    git_tree_entry_byname(tree, names[i]) != NULL :
		    fd >= 0 && fstatat(fd, names[i], &st,
		    AT_SYMLINK_NOFOLLOW) == 0;
	return has[0] && (has[1] || has[2] || has[3]);
}

static void
on_file(struct walk *w, int dirfd, const char *name, const struct stat *lst,
    const git_tree_entry *be, int dst)
{
	enum lease_gate_reason r;
	unsigned gmode;
	size_t n = 0, hdr;
	git_object_t type;
	git_oid oid;
	char *buf = NULL;
	int rc;

	if ((r = lease_gate_file_mode(lst->st_mode, &gmode)) !=
	    LEASE_GATE_OK) {
		finding(w, r, w->rel, "permissions");
		return;
	}
	w->files_seen++;
	/* An unchanged tracked file: recognised by its blob ID. */
	if (be != NULL && dst < 0 &&
	    (unsigned)git_tree_entry_filemode(be) == gmode &&
	    git_odb_read_header(&hdr, &type, w->q->odb,
	    git_tree_entry_id(be)) == 0 && hdr == (size_t)lst->st_size) {
		if ((uint64_t)lst->st_size > w->pol->max_file_bytes) {
			if (same_large(w, dirfd, name, lst,
			    git_tree_entry_id(be)))
				index_add(w, w->rel, gmode,
				    git_tree_entry_id(be), hdr);
			else if (!w->aborted && w->err == 0 &&
			    !lease_gate_report_has(w->rep, LEASE_GATE_CHANGED))
				finding(w, LEASE_GATE_FILE_TOO_LARGE, w->rel,
				    NULL);
			return;
		}
		if ((rc = read_file(w, dirfd, name, lst, &buf, &n)) != 0) {
			if (rc < 0)
				w->err = rc;
			return;
		}
		if (git_odb_hash(&oid, buf, n, GIT_OBJECT_BLOB) == 0 &&
		    git_oid_equal(&oid, git_tree_entry_id(be))) {
			index_add(w, w->rel, gmode, &oid, n);
			free(buf);
			return;
		}
	}
	/* Added or modified. */
	if (holds_secret(w, w->rel, strlen(w->rel))) {
		free(buf);
		finding(w, LEASE_GATE_CREDENTIAL, NULL,
		    "a path holds the lease's minted credential");
		return;
	}
	if (dst < 0 && (r = lease_gate_path(w->rel, strlen(w->rel))) !=
	    LEASE_GATE_OK) {
		free(buf);
		finding(w, r, w->rel, NULL);
		return;
	}
	/* the config of a bare repository the base already has (on_dir) */
	if (dst < 0 && (strcmp(name, "config") == 0 ||
	    strcmp(name, "commondir") == 0) && bare_shape(dirfd, NULL)) {
		free(buf);
		finding(w, LEASE_GATE_GITLINK, w->rel,
		    "a nested bare repository's config");
		return;
	}
	if (++w->changed > w->pol->max_files) {
		free(buf);
		cap_hit(w, LEASE_GATE_TOO_MANY_FILES, w->rel, NULL);
		return;
	}
	if ((uint64_t)lst->st_size > w->pol->max_file_bytes) {
		free(buf);
		finding(w, LEASE_GATE_FILE_TOO_LARGE, w->rel, NULL);
		return;
	}
	if (w->bytes + (uint64_t)lst->st_size > w->pol->max_total_bytes) {
		free(buf);
		cap_hit(w, LEASE_GATE_TOTAL_TOO_LARGE, w->rel, NULL);
		return;
	}
	if (buf == NULL && (rc = read_file(w, dirfd, name, lst, &buf, &n)) !=
	    0) {
		if (rc < 0)
			w->err = rc;
		return;
	}
	w->bytes += n;
	/*
	 * git and libgit2 sniff only the first BINARY_SNIFF bytes: a later
	 * NUL would make a text patch the gate refuses as malformed. Name
	 * the file instead.
	 */
	if (!w->pol->allow_binary && memchr(buf, '\0', n) != NULL)
		finding(w, LEASE_GATE_BINARY, w->rel, NULL);
	/* SPEC 8.5: the minted value never leaves in a result. */
	if (holds_secret(w, buf, n))
		finding(w, LEASE_GATE_CREDENTIAL,
		    holds_secret(w, w->rel, strlen(w->rel)) ? NULL : w->rel,
		    "the file holds the lease's minted credential");
	if (dst >= 0) {
		/* an artifact: a plain copy */
		int fd = openat(dst, name, O_WRONLY | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, 0644);
		size_t off = 0;
		ssize_t k;

		if (fd < 0) {
			w->err = -errno;
		} else {
			while (off < n && (k = write(fd, buf + off, n - off))
			    > 0)
				off += (size_t)k;
			if (off != n)
				w->err = -EIO;
			close(fd);
		}
	} else if (git_odb_write(&oid, w->q->odb, buf, n, GIT_OBJECT_BLOB) <
	    0) {
		w->err = lease__gate_odb_fail(w->q, LEASE_EGIT, "write blob");
	} else {
		index_add(w, w->rel, gmode, &oid, n);
	}
	free(buf);
}

/* A symlink is data: its target, never followed. */
static void
on_symlink(struct walk *w, int dirfd, const char *name,
    const git_tree_entry *be, int dst)
{
	char target[REL_MAX + 1];
	git_blob *b = NULL;
	const char *p;
	size_t depth = 0, n, k;
	ssize_t len;
	git_oid oid;

	len = readlinkat(dirfd, name, target, sizeof target - 1);
	if (len < 0) {
		finding(w, open_reason(errno), w->rel, "readlink");
		return;
	}
	target[len] = '\0';
	if (be != NULL && dst < 0 &&
	    git_tree_entry_filemode(be) == GIT_FILEMODE_LINK &&
	    git_blob_lookup(&b, w->q->repo, git_tree_entry_id(be)) == 0) {
		bool same = (size_t)git_blob_rawsize(b) == (size_t)len &&
		    memcmp(git_blob_rawcontent(b), target, (size_t)len) == 0;

		git_blob_free(b);
		if (same) {	/* the base's own link, unchanged */
			index_add(w, w->rel, GIT_FILEMODE_LINK,
			    git_tree_entry_id(be), (uint64_t)len);
			return;
		}
	}
	if (!w->pol->allow_symlinks || dst >= 0) {
		finding(w, LEASE_GATE_SYMLINK, w->rel, NULL);
		return;
	}
	/* Allowed only to a relative target inside the tree. */
	if (len == 0 || target[0] == '/') {
		finding(w, LEASE_GATE_SYMLINK, w->rel, "target outside the "
		    "tree");
		return;
	}
	/* the link's own directory depth, then walk the target lexically */
	for (p = w->rel; (p = strchr(p, '/')) != NULL; p++)
		depth++;
	for (p = target; *p != '\0'; p += k + (p[k] == '/')) {
		k = strcspn(p, "/");
		if (k == 2 && p[0] == '.' && p[1] == '.') {
			if (depth == 0) {
				finding(w, LEASE_GATE_SYMLINK, w->rel,
				    "target outside the tree");
				return;
			}
			depth--;
		} else if (k > 0 && !(k == 1 && p[0] == '.')) {
			if (lease_gate_name_dotgit(p, k)) {
				finding(w, LEASE_GATE_GIT_PATH, w->rel,
				    "symlink target");
				return;
			}
			depth++;
		}
	}
	if (++w->changed > w->pol->max_files) {
		cap_hit(w, LEASE_GATE_TOO_MANY_FILES, w->rel, NULL);
		return;
	}
	n = (size_t)len;
	if (git_odb_write(&oid, w->q->odb, target, n, GIT_OBJECT_BLOB) < 0) {
		w->err = lease__gate_odb_fail(w->q, LEASE_EGIT, "write link");
		return;
	}
	index_add(w, w->rel, GIT_FILEMODE_LINK, &oid, n);
}

static int walk_dir(struct walk *, int fd, size_t rel_len, git_tree *base_sub,
    bool tracked_only, int depth, int dst);

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Whether a name not in the base is left out at once: the sandbox's .git
 * (at the top), the output directory, or what the ignore rules drop. Such
 * names are never stored, so a directory full of ignored files costs
 * nothing.
 */
static bool
skipped(struct walk *w, size_t rel_len, const char *name, bool isdir,
    bool tracked_only)
{
	size_t k = strlen(name);

	if (w->idx == NULL)
		return false;	/* artifacts: everything counts */
	if (rel_len == 0 && strcmp(name, ".git") == 0)
		return true;
	if (tracked_only)
		return true;
	if (rel_len + 1 + k > REL_MAX)
		return false;	/* reported by the caller */
	if (rel_len > 0)
		w->rel[rel_len] = '/';
	memcpy(w->rel + rel_len + (rel_len > 0), name, k + 1);
	if (w->skip != NULL && strcmp(w->rel, w->skip) == 0)
		return true;
	return ignored(w, w->rel, isdir);
}

/* The names in a directory worth a look, sorted; capped. */
static int
list_dir(struct walk *w, int fd, size_t rel_len, git_tree *base_sub,
    bool tracked_only, char ***out, size_t *nout)
{
	size_t known = base_sub ? git_tree_entrycount(base_sub) : 0;
	struct dirent *e;
	struct stat st;
	char **v = NULL, **nv;
	size_t n = 0, cap = 0;
	bool isdir;
	DIR *d;
	int dfd;

	*out = NULL;
	*nout = 0;
	if ((dfd = dup(fd)) < 0)
		return -errno;
	if ((d = fdopendir(dfd)) == NULL) {
		close(dfd);
		return -errno;
	}
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (base_sub == NULL ||
		    git_tree_entry_byname(base_sub, e->d_name) == NULL) {
			isdir = e->d_type == DT_DIR;
			if (e->d_type == DT_UNKNOWN)
				isdir = fstatat(fd, e->d_name, &st,
				    AT_SYMLINK_NOFOLLOW) == 0 &&
				    S_ISDIR(st.st_mode);
			if (skipped(w, rel_len, e->d_name, isdir,
			    tracked_only))
				continue;
		}
		if (n >= known + w->max_new) {
			cap_hit(w, LEASE_GATE_TOO_MANY_FILES, w->rel,
			    "directory entries");
			break;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			if ((nv = realloc(v, cap * sizeof *v)) == NULL)
				goto oom;
			v = nv;
		}
		if ((v[n] = strdup(e->d_name)) == NULL)
			goto oom;
		n++;
	}
	closedir(d);
	w->rel[rel_len] = '\0';
	if (n > 0)
		qsort(v, n, sizeof *v, name_cmp);
	*out = v;
	*nout = n;
	return 0;
oom:
	closedir(d);
	w->rel[rel_len] = '\0';
	while (n > 0)
		free(v[--n]);
	free(v);
	return -ENOMEM;
}

static void
on_dir(struct walk *w, int dirfd, const char *name, const struct stat *lst,
    const git_tree_entry *be, bool tracked_only, int depth, int dst)
{
	git_tree *sub = NULL;
	struct stat a, g;
	int fd, cdst = -1, rc;

	if (be != NULL && git_tree_entry_filemode(be) == GIT_FILEMODE_COMMIT) {
		/* the base's submodule stays as it is (never read) */
		if (dst < 0)
			index_add(w, w->rel, GIT_FILEMODE_COMMIT,
			    git_tree_entry_id(be), 0);
		return;
	}
	if (depth >= DEPTH_MAX) {
		finding(w, LEASE_GATE_NAME_TOO_LONG, w->rel, "too deep");
		return;
	}
	if (w->race != NULL)
		w->race(w->rel, w->race_ud);
	fd = open_beneath(w, dirfd, name, O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		finding(w, open_reason(errno), w->rel, strerror(errno));
		return;
	}
	if (fstat(fd, &a) < 0 || !S_ISDIR(a.st_mode) ||
	    a.st_dev != lst->st_dev || a.st_ino != lst->st_ino) {
		close(fd);
		finding(w, LEASE_GATE_CHANGED, w->rel, "replaced after lstat");
		return;
	}
	/* a repository inside the workspace: a gitlink in the making */
	if (fstatat(fd, ".git", &g, AT_SYMLINK_NOFOLLOW) == 0) {
		close(fd);
		finding(w, LEASE_GATE_GITLINK, w->rel, "a nested repository");
		return;
	}
	if (be != NULL && git_tree_entry_filemode(be) == GIT_FILEMODE_TREE &&
	    git_tree_lookup(&sub, w->q->repo, git_tree_entry_id(be)) < 0) {
		close(fd);
		w->err = lease__gate_odb_fail(w->q, LEASE_EGIT, "base tree");
		return;
	}
	/*
	 * A bare repository spelled without .git: git finds it from any
	 * directory beneath and runs its config (core.pager, fsmonitor) on
	 * the reviewer's side (SPEC 7.2; tests/adversarial import_bare_repo).
	 * One the base already has (a test fixture) is the operator's own.
	 */
	if (bare_shape(fd, NULL) && !bare_shape(-1, sub)) {
		git_tree_free(sub);
		close(fd);
		finding(w, LEASE_GATE_GITLINK, w->rel,
		    "a nested bare repository");
		return;
	}
	if (dst >= 0) {
		if (mkdirat(dst, name, 0755) < 0 ||
		    (cdst = openat(dst, name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC)) < 0) {
			w->err = -errno;
			close(fd);
			return;
		}
	}
	/* a tracked directory the rules ignore: only tracked files count */
	if (sub != NULL && !tracked_only && ignored(w, w->rel, true))
		tracked_only = true;
	rc = walk_dir(w, fd, strlen(w->rel), sub, tracked_only, depth + 1,
	    cdst);
	if (rc < 0 && w->err == 0)
		w->err = rc;
	if (cdst >= 0)
		close(cdst);
	git_tree_free(sub);
	close(fd);
}

static int
walk_dir(struct walk *w, int fd, size_t rel_len, git_tree *base_sub,
    bool tracked_only, int depth, int dst)
{
	const git_tree_entry *be;
	enum lease_gate_reason r;
	size_t nign = w->ign.n, n = 0, i, k;
	char **names = NULL;
	struct stat st;
	int rc;

	if (dst < 0 && (rc = push_gitignore(w, base_sub, rel_len)) < 0)
		return rc;
	rc = list_dir(w, fd, rel_len, base_sub, tracked_only, &names, &n);
	if (rc < 0) {
		finding(w, LEASE_GATE_UNREADABLE, rel_len ? w->rel : ".",
		    strerror(-rc));
		rc = rc == -ENOMEM ? rc : 0;
		goto out;
	}
	for (i = 0; i < n && !w->aborted && w->err == 0; i++) {
		const char *name = names[i];

		k = strlen(name);
		if (rel_len + 1 + k > REL_MAX) {
			finding(w, LEASE_GATE_NAME_TOO_LONG, NULL, "path over "
			    "4096 bytes");
			continue;
		}
		if (rel_len > 0)
			w->rel[rel_len] = '/';
		memcpy(w->rel + rel_len + (rel_len > 0), name, k + 1);
		if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			finding(w, errno == ENOENT ? LEASE_GATE_CHANGED :
			    LEASE_GATE_UNREADABLE, w->rel, "lstat");
			continue;
		}
		be = base_sub != NULL && dst < 0 ?
		    git_tree_entry_byname(base_sub, name) : NULL;
		if (be == NULL) {
			/* list_dir judged by d_type: judge again by lstat */
			if (skipped(w, rel_len, name, S_ISDIR(st.st_mode),
			    tracked_only))
				continue;
			if (++w->new_entries > w->max_new) {
				cap_hit(w, LEASE_GATE_TOO_MANY_FILES, w->rel,
				    "new entries");
				break;
			}
			if ((r = lease_gate_path(name, k)) != LEASE_GATE_OK) {
				finding(w, r, w->rel, NULL);
				continue;
			}
		}
		switch (st.st_mode & S_IFMT) {
		case S_IFREG:
			on_file(w, fd, name, &st, be, dst);
			break;
		case S_IFDIR:
			on_dir(w, fd, name, &st, be, tracked_only, depth, dst);
			break;
		case S_IFLNK:
			on_symlink(w, fd, name, be, dst);
			break;
		default:
			finding(w, lease_gate_file_mode(st.st_mode, NULL),
			    w->rel, NULL);
		}
	}
	rc = 0;
out:
	w->rel[rel_len] = '\0';
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	lease__ignore_pop(&w->ign, nign);
	return rc;
}

/* Open the output directory beneath the workspace, one component at a time. */
static int
open_output(struct walk *w, int root, const char *rel)
{
	char part[256];
	const char *p = rel;
	size_t k;
	int fd = dup(root), next;

	while (fd >= 0 && *p != '\0') {
		k = strcspn(p, "/");
		if (k == 0 || k >= sizeof part) {
			p += k + (p[k] == '/');
			continue;
		}
		memcpy(part, p, k);
		part[k] = '\0';
		next = open_beneath(w, fd, part, O_RDONLY | O_DIRECTORY);
		close(fd);
		fd = next;
		p += k + (p[k] == '/');
	}
	return fd;
}

static int
copy_artifacts(struct walk *w, int root, const char *out_dir,
    struct lease_extract *out)
{
	char rel[REL_MAX + 1];
	int src, dst, rc;
	size_t n;

	snprintf(rel, sizeof rel, "%s", w->pol->output_dir);
	n = strlen(rel);
	while (n > 0 && rel[n - 1] == '/')
		rel[--n] = '\0';
	if (n == 0 || lease_gate_path(rel, n) != LEASE_GATE_OK)
		return 0;	/* the policy's own value: checked there too */
	if ((src = open_output(w, root, rel)) < 0)
		return 0;	/* no output: no artifacts */
	if (mkdir(out_dir, 0700) < 0 && errno != EEXIST) {
		rc = -errno;
		close(src);
		return rc;
	}
	if ((dst = open(out_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) < 0) {
		rc = -errno;
		close(src);
		return rc;
	}
	/* artifacts count against their own copy of the caps */
	w->changed = 0;
	w->bytes = 0;
	w->new_entries = 0;
	memcpy(w->rel, rel, n + 1);
	rc = walk_dir(w, src, n, NULL, false, 1, dst);
	out->artifacts = (size_t)w->changed;
	out->artifact_bytes = w->bytes;
	close(dst);
	close(src);
	return rc;
}

int
lease_extract_snapshot(struct lease_gate_odb *q, const char *dir,
    const char *base_hex, const struct lease_result_policy *pol,
    const char *artifacts_dir, lease_extract_race_cb race, void *race_ud,
    struct lease_gate_report *rep, struct lease_extract *out)
{
	struct walk w;
	git_tree *base = NULL;
	git_commit *c = NULL;
	git_oid oid, toid;
	const char *const *pat;
	char skip[REL_MAX + 1];
	size_t n;
	int root = -1, rc;

	assert(q != NULL && dir != NULL && pol != NULL && rep != NULL &&
	    out != NULL);
	memset(out, 0, sizeof *out);
	memset(&w, 0, sizeof w);
	w.q = q;
	w.pol = pol;
	w.rep = rep;
	w.race = race;
	w.race_ud = race_ud;
	/* new entries of any kind: enough for max_files files in dirs */
	w.max_new = pol->max_files * 4 + 64;
	if (base_hex == NULL || git_oid_fromstr(&oid, base_hex) < 0 ||
	    git_commit_lookup(&c, q->repo, &oid) < 0 ||
	    git_commit_tree(&base, c) < 0) {
		rc = lease__gate_odb_fail(q, LEASE_EBADBASE, "base %s",
		    base_hex ? base_hex : "(none)");
		goto out;
	}
	for (pat = pol->ignore; pat != NULL && *pat != NULL; pat++)
		if ((rc = lease__ignore_parse(&w.pign, *pat, strlen(*pat),
		    0)) < 0)
			goto out;
	if (pol->output_dir != NULL) {
		snprintf(skip, sizeof skip, "%s", pol->output_dir);
		for (n = strlen(skip); n > 0 && skip[n - 1] == '/'; n--)
			skip[n - 1] = '\0';
		w.skip = skip;
	}
	if (git_index_new(&w.idx) < 0) {
		rc = lease__gate_odb_fail(q, LEASE_EGIT, "index");
		goto out;
	}
	root = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (root < 0) {
		rc = lease_gate_report_add(rep, LEASE_GATE_UNREADABLE, NULL,
		    "the workspace cannot be opened");
		goto out;
	}
	rc = walk_dir(&w, root, 0, base, false, 0, -1);
	if (rc == 0)
		rc = w.err;
	if (rc < 0)
		goto out;
	out->files_seen = w.files_seen;
	out->excluded = w.excluded;
	out->changed = (size_t)w.changed;
	out->changed_bytes = w.bytes;
	out->aborted = w.aborted;
	if (!w.aborted) {
		if (git_index_write_tree_to(&toid, w.idx, q->repo) < 0) {
			rc = lease__gate_odb_fail(q, LEASE_EGIT,
			    "snapshot tree");
			goto out;
		}
		git_oid_tostr(out->tree, sizeof out->tree, &toid);
	}
	if (!w.aborted && artifacts_dir != NULL && pol->output_dir != NULL) {
		rc = copy_artifacts(&w, root, artifacts_dir, out);
		if (rc == 0)
			rc = w.err;
		if (w.aborted)
			out->aborted = true;
	}
out:
	if (root >= 0)
		close(root);
	git_index_free(w.idx);
	lease__ignore_free(&w.ign);
	lease__ignore_free(&w.pign);
	git_tree_free(base);
	git_commit_free(c);
	return rc;
}
