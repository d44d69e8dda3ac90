/*
 * test_extract.c: extraction on the trusted side (SPEC 7.1) and the gate's
 * libgit2 half (SPEC 7.2) on real repositories in temp directories:
 * hostile workspaces, one per rejection reason (symlinks, a path under a
 * just-made symlink, FIFOs, sockets, devices, chmod 000, mode 777, .git
 * spellings, nested repositories, binary files, 100,000 files, a sparse
 * 2 GB file, names with ESC, newline, invalid UTF-8 or a leading '-'),
 * TOCTOU swaps (deterministic and with a background swapper), ignore rules
 * from the base tree and the policy, artifacts, and crafted patches with
 * libgit2 1.5.1's quirks (b//etc/evil, a symlink then link/pwned, gitlinks)
 * against the manifest.
 */
#include <fcntl.h>
#include <git2.h>
#include <openssl/evp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/un.h>

#include "lease/result/result.h"
#include "lease_test.h"

static char *tmp, *repo, *ws, *qdir;
static char c[3][41];
static struct lease_git *g;
static struct lease_gate_odb *q;
static struct lease_result_policy pol;
static struct lease_gate_report rep;
static struct lease_extract ex;

static void
setup(void)
{
	ck_assert_int_ge(lease_git_init(), 0);
	tmp = cu_tmpdir("extract");
	repo = lt_make_repo(tmp, c);
	ws = lt_fmt("%s/%s", tmp, "work");
	qdir = lt_fmt("%s/%s", tmp, "result");
	ck_assert_int_eq(lease_git_open(&g, repo), 0);
	ck_assert_int_eq(lease_git_workspace_seed(g, c[2], ws, 0), 0);
	ck_assert_int_eq(lease_gate_odb_open(g, qdir, &q), 0);
	lease_result_policy_defaults(&pol);
	memset(&rep, 0, sizeof rep);
	memset(&ex, 0, sizeof ex);
}

static void
teardown(void)
{
	lease_gate_report_free(&rep);
	lease_gate_odb_free(q);
	lease_git_free(g);
	cu_rmrf(tmp);
	free(tmp);
	free(repo);
	free(ws);
	free(qdir);
	lease_git_shutdown();
}

static char *
wpath(const char *rel)
{
	return lt_fmt("%s/%s", ws, rel);
}

static void
wwrite(const char *rel, const char *text)
{
	lt_write(ws, rel, text);
}

static int
extract(void)
{
	return lease_extract_snapshot(q, ws, c[2], &pol, NULL, NULL, NULL,
	    &rep, &ex);
}

/* The report holds reason for path (NULL: any path). */
static bool
has(enum lease_gate_reason r, const char *path)
{
	size_t i;

	for (i = 0; i < rep.n; i++)
		if (rep.v[i].reason == r && (path == NULL ||
		    (rep.v[i].path != NULL && strcmp(rep.v[i].path, path) ==
		    0)))
			return true;
	return false;
}

static void
dump(void)
{
	size_t i;

	for (i = 0; i < rep.n; i++)
		fprintf(stderr, "finding %s %s %s\n",
		    lease_gate_reason_name(rep.v[i].reason),
		    rep.v[i].path ? rep.v[i].path : "-",
		    rep.v[i].detail ? rep.v[i].detail : "");
}

static void
expect(enum lease_gate_reason r, const char *path)
{
	ck_assert_int_eq(extract(), 0);
	if (!has(r, path))
		dump();
	ck_assert_msg(has(r, path), "no %s finding for %s",
	    lease_gate_reason_name(r), path ? path : "(any)");
}

/* The manifest of base..snapshot, with the patch in the result dir. */
static struct lease_manifest *
manifest(void)
{
	struct lease_manifest *m = NULL;
	char *patch = lt_fmt("%s/%s", qdir, "patch");

	ck_assert_str_ne(ex.tree, "");
	ck_assert_int_eq(lease_patch_write(q, c[2], ex.tree, &pol, patch,
	    &rep, &m), 0);
	ck_assert_ptr_nonnull(m);
	free(patch);
	return m;
}

static const struct lease_manifest_file *
mfile(const struct lease_manifest *m, const char *path)
{
	size_t i;

	for (i = 0; i < m->nfiles; i++)
		if (strcmp(m->files[i].path, path) == 0)
			return &m->files[i];
	return NULL;
}

/* The base commit's tree, hex. */
static void
base_tree(char out[41])
{
	git_repository *r;
	git_commit *cm;
	git_oid oid;

	ck_assert_int_eq(git_repository_open(&r, repo), 0);
	git_oid_fromstr(&oid, c[2]);
	ck_assert_int_eq(git_commit_lookup(&cm, r, &oid), 0);
	git_oid_tostr(out, 41, git_commit_tree_id(cm));
	git_commit_free(cm);
	git_repository_free(r);
}

/* ---- clean and ordinary changes ------------------------------------------ */

START_TEST(test_extract_clean)
{
	struct lease_manifest *m;
	char bt[41];

	ck_assert_int_eq(extract(), 0);
	ck_assert_uint_eq(rep.n, 0);
	base_tree(bt);
	ck_assert_str_eq(ex.tree, bt);
	ck_assert_uint_eq(ex.changed, 0);
	ck_assert_uint_eq(ex.files_seen, 3);
	m = manifest();
	ck_assert_uint_eq(m->nfiles, 0);
	ck_assert_uint_eq(m->patch_bytes, 0);
	lease_manifest_free(m);
}
END_TEST

static void
sha256_of(const char *s, char out[65])
{
	unsigned char md[32];
	unsigned int n = 0, i;

	EVP_Digest(s, strlen(s), md, &n, EVP_sha256(), NULL);
	for (i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

START_TEST(test_extract_changes)
{
	struct lease_manifest *m;
	const struct lease_manifest_file *f;
	char *p, *patch, want[65];
	size_t len;

	wwrite("README", "hello again\nand more\n");
	wwrite("docs/new.md", "# new\n");
	wwrite("run.sh", "#!/bin/sh\necho hi\n");
	p = wpath("run.sh");
	ck_assert_int_eq(chmod(p, 0755), 0);
	free(p);
	p = wpath("src/b.c");
	ck_assert_int_eq(unlink(p), 0);
	free(p);
	/* the sandbox's own .git is never read: make it a trap */
	p = wpath(".git/config");
	ck_assert_int_eq(unlink(p), 0);
	ck_assert_int_eq(mkfifo(p, 0644), 0);
	free(p);
	wwrite(".git/hooks/post-checkout", "#!/bin/sh\ntouch /tmp/pwned\n");

	ck_assert_int_eq(extract(), 0);
	if (rep.n)
		dump();
	ck_assert_uint_eq(rep.n, 0);
	ck_assert_uint_eq(ex.changed, 3);
	m = manifest();
	ck_assert_uint_eq(m->nfiles, 4);
	ck_assert_uint_eq(m->added, 2);
	ck_assert_uint_eq(m->modified, 1);
	ck_assert_uint_eq(m->deleted, 1);
	f = mfile(m, "README");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->status, 'M');
	ck_assert_uint_eq(f->old_size, 12);
	ck_assert_uint_eq(f->new_size, 21);
	sha256_of("hello again\nand more\n", want);
	ck_assert_str_eq(f->sha256, want);
	f = mfile(m, "run.sh");
	ck_assert_uint_eq(f->new_mode, 0100755);
	ck_assert_uint_ne(f->flags & LEASE_FLAG_SCRIPT, 0);
	f = mfile(m, "src/b.c");
	ck_assert_int_eq(f->status, 'D');
	ck_assert_str_eq(f->sha256, "");
	ck_assert_ptr_null(mfile(m, ".git/config"));
	/* the gate passes its own patch and lands on the snapshot */
	p = lt_fmt("%s/%s", qdir, "patch");
	patch = lt_slurp(p, &len);
	free(p);
	ck_assert_int_eq(lease_gate_odb_verify(q, c[2], patch, len, m, &pol,
	    &rep), 0);
	if (rep.n)
		dump();
	ck_assert_uint_eq(rep.n, 0);
	ck_assert_str_eq(rep.tree, ex.tree);
	free(patch);
	lease_manifest_free(m);
}
END_TEST

/*
 * The gate's apply writes the patched blobs into the quarantine: when that
 * disk is full the verify fails -ENOSPC (a finish retries it), never a
 * patch_mismatch verdict on a good patch; with space back it passes.
 */
START_TEST(test_extract_verify_disk_full)
{
	struct lease_gate_odb *fq = NULL;
	struct lease_manifest *m;
	char *p, *patch, *fdir, *fill, *text, buf[4096], line[80];
	size_t len;
	int fd;

	text = calloc(2000, sizeof line);	/* ~140 kB, no blob of the base */
	ck_assert_ptr_nonnull(text);
	for (int i = 0; i < 2000; i++) {
		snprintf(line, sizeof line, "line %d of a file the agent wrote, "
		    "long enough to need a blob of its own\n", i);
		strcat(text, line);
	}
	wwrite("big.txt", text);
	free(text);
	ck_assert_int_eq(extract(), 0);
	ck_assert_uint_eq(rep.n, 0);
	m = manifest();
	p = lt_fmt("%s/%s", qdir, "patch");
	patch = lt_slurp(p, &len);
	free(p);
	/* a fresh quarantine on a small file system, filled up */
	fdir = lt_fmt("%s/%s", tmp, "full");
	ck_assert_int_eq(mkdir(fdir, 0700), 0);
	lt_private_tmpfs(fdir, "size=1m");
	ck_assert_int_eq(lease_gate_odb_open(g, fdir, &fq), 0);
	fill = lt_fmt("%s/%s", fdir, "ballast");
	ck_assert_int_ge(fd = open(fill, O_WRONLY | O_CREAT, 0600), 0);
	memset(buf, 'x', sizeof buf);
	while (write(fd, buf, sizeof buf) > 0)
		;
	while (write(fd, buf, 1) > 0)
		;
	close(fd);
	lease_gate_report_free(&rep);
	memset(&rep, 0, sizeof rep);
	ck_assert_int_eq(lease_gate_odb_verify(fq, c[2], patch, len, m, &pol,
	    &rep), -ENOSPC);
	ck_assert_msg(rep.n == 0, "a verdict on a full disk: %s",
	    rep.n > 0 ? lease_gate_reason_name(rep.v[0].reason) : "");
	ck_assert_ptr_nonnull(strstr(lease_gate_odb_errmsg(fq), "disk"));
	/* space again: the same patch passes */
	ck_assert_int_eq(unlink(fill), 0);
	ck_assert_int_eq(lease_gate_odb_verify(fq, c[2], patch, len, m, &pol,
	    &rep), 0);
	ck_assert_uint_eq(rep.n, 0);
	ck_assert_str_eq(rep.tree, ex.tree);
	lease_gate_odb_free(fq);
	free(fill);
	free(fdir);
	free(patch);
	lease_manifest_free(m);
}
END_TEST

/* ---- one hostile workspace per rejection reason -------------------------- */

START_TEST(test_extract_symlink)
{
	char *p = wpath("link");

	ck_assert_int_eq(symlink("/etc/passwd", p), 0);
	free(p);
	expect(LEASE_GATE_SYMLINK, "link");
}
END_TEST

START_TEST(test_extract_under_symlink)
{
	char *out = lt_fmt("%s/%s", tmp, "outside"), *p = wpath("sub");

	/* the agent points sub at a directory outside, then writes through */
	ck_assert_int_eq(mkdir(out, 0755), 0);
	ck_assert_int_eq(symlink(out, p), 0);
	lt_write(out, "evil", "pwned\n");
	expect(LEASE_GATE_SYMLINK, "sub");
	ck_assert(!has(LEASE_GATE_OK, "sub/evil"));
	for (size_t i = 0; i < rep.n; i++)
		ck_assert(rep.v[i].path == NULL ||
		    strcmp(rep.v[i].path, "sub/evil") != 0);
	free(out);
	free(p);
}
END_TEST

START_TEST(test_extract_fifo)
{
	char *p = wpath("pipe");

	ck_assert_int_eq(mkfifo(p, 0644), 0);
	free(p);
	expect(LEASE_GATE_FIFO, "pipe");
}
END_TEST

START_TEST(test_extract_socket)
{
	struct sockaddr_un sa;
	char *p = wpath("sock");
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	ck_assert_uint_lt(strlen(p), sizeof sa.sun_path);
	strcpy(sa.sun_path, p);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	close(fd);
	free(p);
	expect(LEASE_GATE_SOCKET, "sock");
}
END_TEST

START_TEST(test_extract_device)
{
	char *p = wpath("null");

	ck_assert_int_eq(mknod(p, S_IFCHR | 0666, makedev(1, 3)), 0);
	free(p);
	expect(LEASE_GATE_DEVICE, "null");
}
END_TEST

START_TEST(test_extract_chmod000)
{
	char *p = wpath("README");

	ck_assert_int_eq(chmod(p, 0), 0);
	free(p);
	expect(LEASE_GATE_BAD_MODE, "README");
}
END_TEST

START_TEST(test_extract_mode777)
{
	char *p;

	wwrite("open.sh", "echo\n");
	p = wpath("open.sh");
	ck_assert_int_eq(chmod(p, 0777), 0);
	free(p);
	expect(LEASE_GATE_BAD_MODE, "open.sh");
}
END_TEST

/* What the agent writes, and the entry the finding names. */
static const char *const spellings[][2] = {
	{ ".GIT/config", ".GIT" },
	{ ".Git/hooks/pre-commit", ".Git" },
	{ "sub/.git./config", "sub/.git." },
	{ ".git ", ".git " },
	{ "git~1/config", "git~1" },
	{ "GIT~1", "GIT~1" },
	{ "a/.g\xe2\x80\x8cit/config", "a/.g\xe2\x80\x8cit" },
	{ ".git\xef\xbb\xbf/x", ".git\xef\xbb\xbf" },
};

START_TEST(test_extract_git_spellings)
{
	wwrite(spellings[_i][0], "x\n");
	expect(LEASE_GATE_GIT_PATH, spellings[_i][1]);
}
END_TEST

START_TEST(test_extract_gitlink)
{
	/* a nested repository: a gitlink in the making */
	wwrite("vendor/lib/.git/HEAD", "ref: refs/heads/main\n");
	wwrite("vendor/lib/x.c", "int x;\n");
	/* or just a .git file in a directory */
	wwrite("x/.git", "gitdir: /elsewhere\n");
	expect(LEASE_GATE_GITLINK, "vendor/lib");
	ck_assert(has(LEASE_GATE_GITLINK, "x"));
}
END_TEST

START_TEST(test_extract_bare_repository)
{
	/*
	 * A bare repository spelled without .git (HEAD + objects/refs, or
	 * a commondir): git would find it from any directory beneath in the
	 * review worktree and run its config on the reviewer's side.
	 */
	wwrite("evil/HEAD", "ref: refs/heads/keep\n");
	wwrite("evil/config", "[core]\n\tpager = touch /tmp/pwned; cat\n");
	wwrite("evil/objects/keep", "");
	wwrite("evil/refs/heads/keep", "0\n");
	wwrite("cd/HEAD", "ref: refs/heads/main\n");
	wwrite("cd/commondir", "../elsewhere\n");
	/* a HEAD file alone is just a file */
	wwrite("notes/HEAD", "not a repository\n");
	expect(LEASE_GATE_GITLINK, "evil");
	ck_assert(has(LEASE_GATE_GITLINK, "cd"));
	ck_assert(!has(LEASE_GATE_GITLINK, "notes"));
}
END_TEST

START_TEST(test_extract_credential)
{
	bool nameless;

	/* SPEC 8.5: the lease's minted value never leaves in a result */
	pol.secret = "sk-canary-0123456789";
	wwrite("notes.txt", "key: sk-canary-0123456789\n");
	wwrite("f-sk-canary-0123456789", "x\n");
	wwrite("clean.txt", "sk-canary-012345678 is a near miss\n");
	expect(LEASE_GATE_CREDENTIAL, "notes.txt");
	/* a path holding it is refused without naming the path */
	nameless = false;
	for (size_t i = 0; i < rep.n; i++)
		if (rep.v[i].reason == LEASE_GATE_CREDENTIAL &&
		    rep.v[i].path == NULL)
			nameless = true;
	ck_assert(nameless);
	ck_assert(!has(LEASE_GATE_CREDENTIAL, "clean.txt"));
	ck_assert(!has(LEASE_GATE_CREDENTIAL, "f-sk-canary-0123456789"));
	pol.secret = NULL;
}
END_TEST

START_TEST(test_extract_binary)
{
	char *p = wpath("blob.bin"), late[9000], *patch;
	struct lease_manifest *m;
	size_t len;

	ck_assert_int_eq(cu_write_file(p, "ab\0cd", 5), 0);
	/* a NUL past the first 8000 bytes git looks at: named too */
	memset(late, 'a', sizeof late);
	late[sizeof late - 1] = '\0';
	free(p);
	p = wpath("late.txt");
	ck_assert_int_eq(cu_write_file(p, late, sizeof late), 0);
	expect(LEASE_GATE_BINARY, "blob.bin");
	ck_assert(has(LEASE_GATE_BINARY, "late.txt"));
	/* allowed by policy: no finding */
	lease_gate_report_free(&rep);
	pol.allow_binary = true;
	ck_assert_int_eq(extract(), 0);
	ck_assert_uint_eq(rep.n, 0);
	free(p);
	/*
	 * The late NUL is printed as a binary patch (libgit2 would print
	 * it as text, NUL and all); the gate passes it to the snapshot.
	 */
	m = manifest();
	ck_assert(mfile(m, "late.txt")->binary);
	ck_assert_uint_eq(mfile(m, "late.txt")->insertions, 0);
	p = lt_fmt("%s/%s", qdir, "patch");
	patch = lt_slurp(p, &len);
	free(p);
	ck_assert_ptr_null(memchr(patch, '\0', len));
	ck_assert_ptr_nonnull(strstr(patch, "diff --git a/late.txt b/late.txt\n"
	    "new file mode 100644\nindex 0000000000000000000000000000000000000"
	    "000.."));
	ck_assert_int_eq(lease_gate_odb_verify(q, c[2], patch, len, m, &pol,
	    &rep), 0);
	if (rep.n)
		dump();
	ck_assert_uint_eq(rep.n, 0);
	ck_assert_str_eq(rep.tree, ex.tree);
	free(patch);
	lease_manifest_free(m);
}
END_TEST

START_TEST(test_extract_names)
{
	static const char *const names[] = {
		"title\x1b]0;pwned\x07", "nl\nname", "-rf", "bad\xff",
		"c1\xc2\x9b" "31m",
	};
	static const enum lease_gate_reason want[] = {
		LEASE_GATE_CONTROL_CHAR, LEASE_GATE_NEWLINE,
		LEASE_GATE_LEADING_DASH, LEASE_GATE_INVALID_UTF8,
		LEASE_GATE_CONTROL_CHAR,
	};

	wwrite(names[_i], "x\n");
	expect(want[_i], names[_i]);
	/* the name is a finding, never a file of the snapshot */
	ck_assert_uint_eq(ex.changed, 0);
}
END_TEST

START_TEST(test_extract_100k_files)
{
	char *dir = wpath("many"), name[64];
	struct rusage ru0, ru1;
	int dfd, fd, i;

	ck_assert_int_eq(mkdir(dir, 0755), 0);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	for (i = 0; i < 100000; i++) {
		snprintf(name, sizeof name, "f%06d", i);
		fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL, 0644);
		ck_assert_int_ge(fd, 0);
		close(fd);
	}
	close(dfd);
	getrusage(RUSAGE_SELF, &ru0);
	expect(LEASE_GATE_TOO_MANY_FILES, NULL);
	getrusage(RUSAGE_SELF, &ru1);
	ck_assert(ex.aborted);
	ck_assert_str_eq(ex.tree, "");
	/* stopped at the cap: bounded listing and memory */
	ck_assert_uint_le(ex.changed, pol.max_files + 1);
	ck_assert_int_lt(ru1.ru_maxrss - ru0.ru_maxrss, 64 * 1024);
	free(dir);
}
END_TEST

START_TEST(test_extract_sparse_2g)
{
	char *p = wpath("huge.img");
	struct rusage ru0, ru1;
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 2LL << 30), 0);
	close(fd);
	getrusage(RUSAGE_SELF, &ru0);
	expect(LEASE_GATE_FILE_TOO_LARGE, "huge.img");
	getrusage(RUSAGE_SELF, &ru1);
	/* never read: memory grew by far less than the file */
	ck_assert_int_lt(ru1.ru_maxrss - ru0.ru_maxrss, 64 * 1024);
	free(p);
}
END_TEST

START_TEST(test_extract_caps)
{
	int i;
	char name[32];

	pol.max_file_bytes = 8;
	wwrite("big.txt", "0123456789\n");
	expect(LEASE_GATE_FILE_TOO_LARGE, "big.txt");
	lease_gate_report_free(&rep);
	pol.max_file_bytes = 1 << 20;
	pol.max_total_bytes = 20;
	wwrite("x1", "0123456789\n");
	wwrite("x2", "0123456789\n");
	expect(LEASE_GATE_TOTAL_TOO_LARGE, NULL);
	ck_assert(ex.aborted);
	lease_gate_report_free(&rep);
	lease_result_policy_defaults(&pol);
	pol.max_files = 5;
	for (i = 0; i < 10; i++) {
		snprintf(name, sizeof name, "n%d", i);
		wwrite(name, "x\n");
	}
	expect(LEASE_GATE_TOO_MANY_FILES, NULL);
}
END_TEST

/* ---- TOCTOU -------------------------------------------------------------- */

struct swap {
	const char *target;	/* rel path to replace */
	const char *with;	/* "symlink" or "fifo" */
	int done;
};

static void
swapper(const char *rel, void *ud)
{
	struct swap *s = ud;
	char *p;

	if (s->done || strcmp(rel, s->target) != 0)
		return;
	p = wpath(rel);
	ck_assert_int_eq(unlink(p), 0);
	if (strcmp(s->with, "symlink") == 0)
		ck_assert_int_eq(symlink("/etc/shadow", p), 0);
	else
		ck_assert_int_eq(mkfifo(p, 0644), 0);
	free(p);
	s->done = 1;
}

START_TEST(test_extract_toctou)
{
	struct swap s = { "README", _i == 0 ? "symlink" : "fifo", 0 };

	wwrite("README", "changed\n");
	ck_assert_int_eq(lease_extract_snapshot(q, ws, c[2], &pol, NULL,
	    swapper, &s, &rep, &ex), 0);
	ck_assert_int_eq(s.done, 1);
	if (!has(LEASE_GATE_CHANGED, "README"))
		dump();
	ck_assert(has(LEASE_GATE_CHANGED, "README"));
}
END_TEST

/*
 * A real background process swaps a file for a symlink to a secret outside
 * the workspace while extraction runs again and again: every run either
 * finds it (symlink or changed) or reads a legitimate regular version, and
 * the secret never enters a snapshot.
 */
START_TEST(test_extract_background_swapper)
{
	char *secret = lt_fmt("%s/%s", tmp, "secret");
	char *f = wpath("f"), *a = wpath(".a"), *l = wpath(".l");
	char want_sec[65], want_a[65];
	struct lease_manifest *m;
	const struct lease_manifest_file *mf;
	int run, detected = 0, clean = 0;
	pid_t pid;

	ck_assert_int_eq(cu_write_file(secret, "TOP SECRET\n", 11), 0);
	sha256_of("TOP SECRET\n", want_sec);
	sha256_of("regular\n", want_a);
	pol.ignore = (const char *const[]){ ".a", ".l", NULL };
	ck_assert_int_eq(cu_write_file(f, "regular\n", 8), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		for (;;) {
			if (cu_write_file(a, "regular\n", 8) == 0)
				rename(a, f);
			unlink(l);
			if (symlink(secret, l) == 0)
				rename(l, f);
		}
	}
	for (run = 0; run < 40; run++) {
		lease_gate_report_free(&rep);
		ck_assert_int_eq(extract(), 0);
		/*
		 * Any finding rejects the result (the swap can also surface
		 * as the file vanishing between the walk and the open):
		 * the property is that no clean snapshot holds the secret.
		 */
		if (has(LEASE_GATE_SYMLINK, "f") ||
		    has(LEASE_GATE_CHANGED, "f") || rep.n > 0) {
			detected++;
			continue;
		}
		m = manifest();
		mf = mfile(m, "f");
		ck_assert_ptr_nonnull(mf);
		ck_assert_str_ne(mf->sha256, want_sec);
		ck_assert_str_eq(mf->sha256, want_a);
		clean++;
		lease_manifest_free(m);
	}
	kill(pid, SIGKILL);
	lt_wait(pid);
	ck_assert_int_eq(detected + clean, 40);
	fprintf(stderr, "background swapper: %d detected, %d clean reads\n",
	    detected, clean);
	free(secret);
	free(f);
	free(a);
	free(l);
}
END_TEST

/* ---- ignore rules -------------------------------------------------------- */

/* A new base commit with .gitignore rules and a force-added file. */
static void
ignore_base(void)
{
	git_repository *r;
	git_index *idx;
	char *p;

	lt_write(repo, ".gitignore", "*.o\nbuild/\n!keep.o\n# comment\n");
	lt_write(repo, "sub/.gitignore", "local.txt\n");
	lt_write(repo, "tracked.o", "force added\n");
	ck_assert_int_eq(git_repository_open(&r, repo), 0);
	ck_assert_int_eq(git_repository_index(&idx, r), 0);
	ck_assert_int_eq(git_index_add_bypath(idx, "tracked.o"), 0);
	ck_assert_int_eq(git_index_write(idx), 0);
	git_index_free(idx);
	lt_commit_all(r, "ignores", c[2]);
	git_repository_free(r);
	/* a fresh workspace at the new base */
	cu_rmrf(ws);
	ck_assert_int_eq(lease_git_workspace_seed(g, c[2], ws, 0), 0);
	p = wpath("tracked.o");
	ck_assert_int_eq(access(p, F_OK), 0);
	free(p);
}

START_TEST(test_extract_ignore_rules)
{
	struct lease_manifest *m;
	char *dir, name[32];
	int i;

	ignore_base();
	wwrite("a.o", "obj\n");
	wwrite("keep.o", "kept\n");
	wwrite("build/out/x", "built\n");
	wwrite("sub/local.txt", "local\n");
	wwrite("local.txt", "top level: not ignored\n");
	wwrite("tracked.o", "force added, changed\n");
	/* the agent's own ignore rules are data, never rules */
	wwrite(".gitignore", "*.o\nbuild/\n!keep.o\n# comment\nsecret\n");
	wwrite("secret", "included\n");
	/* the policy's rules win */
	pol.ignore = (const char *const[]){ "*.log", "keep.o", NULL };
	wwrite("x.log", "log\n");
	/* 100,000 files under an ignored directory cost nothing */
	dir = wpath("build/many");
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	for (i = 0; i < 100000; i++) {
		snprintf(name, sizeof name, "build/many/%d", i);
		char *p = wpath(name);
		int fd = open(p, O_WRONLY | O_CREAT, 0644);

		ck_assert_int_ge(fd, 0);
		close(fd);
		free(p);
	}
	free(dir);
	ck_assert_int_eq(extract(), 0);
	if (rep.n)
		dump();
	ck_assert_uint_eq(rep.n, 0);
	m = manifest();
	ck_assert_ptr_null(mfile(m, "a.o"));
	ck_assert_ptr_null(mfile(m, "keep.o"));	/* policy */
	ck_assert_ptr_null(mfile(m, "build/out/x"));
	ck_assert_ptr_null(mfile(m, "sub/local.txt"));
	ck_assert_ptr_null(mfile(m, "x.log"));
	ck_assert_ptr_nonnull(mfile(m, "local.txt"));
	ck_assert_ptr_nonnull(mfile(m, "tracked.o"));
	ck_assert_ptr_nonnull(mfile(m, "secret"));
	ck_assert_ptr_nonnull(mfile(m, ".gitignore"));
	ck_assert_uint_ne(mfile(m, ".gitignore")->flags &
	    LEASE_FLAG_GIT_CONFIG, 0);
	ck_assert_uint_eq(m->nfiles, 4);
	lease_manifest_free(m);
}
END_TEST

/* ---- symlinks: the base's own, and policy-allowed in-tree ones ----------- */

START_TEST(test_extract_symlinks_policy)
{
	git_repository *r;
	struct lease_manifest *m;
	char *p;

	/* the base has a link: unchanged, it is no finding */
	p = lt_fmt("%s/%s", repo, "docs-link");
	ck_assert_int_eq(symlink("README", p), 0);
	free(p);
	ck_assert_int_eq(git_repository_open(&r, repo), 0);
	lt_commit_all(r, "link", c[2]);
	git_repository_free(r);
	cu_rmrf(ws);
	ck_assert_int_eq(lease_git_workspace_seed(g, c[2], ws, 0), 0);
	ck_assert_int_eq(extract(), 0);
	ck_assert_uint_eq(rep.n, 0);
	ck_assert_uint_eq(ex.changed, 0);

	/* allowed: relative and inside only */
	pol.allow_symlinks = true;
	p = wpath("src/up");
	ck_assert_int_eq(symlink("../README", p), 0);
	free(p);
	ck_assert_int_eq(extract(), 0);
	ck_assert_uint_eq(rep.n, 0);
	m = manifest();
	ck_assert_uint_eq(mfile(m, "src/up")->new_mode, 0120000);
	lease_manifest_free(m);
	p = wpath("src/out");
	ck_assert_int_eq(symlink("../../etc/passwd", p), 0);
	free(p);
	p = wpath("abs");
	ck_assert_int_eq(symlink("/etc/passwd", p), 0);
	free(p);
	p = wpath("gitcfg");
	ck_assert_int_eq(symlink(".git/config", p), 0);
	free(p);
	expect(LEASE_GATE_SYMLINK, "src/out");
	ck_assert(has(LEASE_GATE_SYMLINK, "abs"));
	ck_assert(has(LEASE_GATE_GIT_PATH, "gitcfg"));
}
END_TEST

/* ---- artifacts ----------------------------------------------------------- */

START_TEST(test_extract_artifacts)
{
	struct lease_manifest *m;
	char *arts = lt_fmt("%s/%s", tmp, "artifacts"), *p, *text;

	pol.output_dir = "out/";
	wwrite("out/report.txt", "report\n");
	wwrite("out/sub/data.csv", "a,b\n");
	wwrite("src/a.c", "int a = 1;\n");
	ck_assert_int_eq(lease_extract_snapshot(q, ws, c[2], &pol, arts, NULL,
	    NULL, &rep, &ex), 0);
	ck_assert_uint_eq(rep.n, 0);
	ck_assert_uint_eq(ex.artifacts, 2);
	ck_assert_uint_eq(ex.artifact_bytes, 11);
	p = lt_fmt("%s/%s", arts, "sub/data.csv");
	text = lt_slurp(p, NULL);
	ck_assert_str_eq(text, "a,b\n");
	free(text);
	free(p);
	m = manifest();
	ck_assert_uint_eq(m->nfiles, 1);	/* artifacts are no patch */
	lease_manifest_free(m);
	/* the same rules hold inside the output directory */
	cu_rmrf(arts);
	p = wpath("out/link");
	ck_assert_int_eq(symlink("/etc/passwd", p), 0);
	free(p);
	lease_gate_report_free(&rep);
	ck_assert_int_eq(lease_extract_snapshot(q, ws, c[2], &pol, arts, NULL,
	    NULL, &rep, &ex), 0);
	ck_assert(has(LEASE_GATE_SYMLINK, "out/link"));
	free(arts);
}
END_TEST

/* ---- crafted patches through the gate ------------------------------------ */

static void
verify(const char *patch, const struct lease_manifest *m)
{
	lease_gate_report_free(&rep);
	ck_assert_int_eq(lease_gate_odb_verify(q, c[2], patch, strlen(patch), m,
	    &pol, &rep), 0);
}

START_TEST(test_extract_gate_quirks)
{
	static const char slashes[] =
	    "diff --git a/etc/evil b//etc/evil\nnew file mode 100644\n"
	    "--- /dev/null\n+++ b//etc/evil\n@@ -0,0 +1 @@\n+evil\n";
	static const char escape[] =
	    "diff --git a/../escape.txt b/../escape.txt\nnew file mode 100644\n"
	    "--- /dev/null\n+++ b/../escape.txt\n@@ -0,0 +1 @@\n+x\n";
	static const char hook[] =
	    "diff --git a/.git/hooks/pre-commit b/.git/hooks/pre-commit\n"
	    "new file mode 100755\n--- /dev/null\n"
	    "+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+x\n";
	static const char upper[] =
	    "diff --git a/sub/.GIT/config b/sub/.GIT/config\n"
	    "new file mode 100644\n--- /dev/null\n+++ b/sub/.GIT/config\n"
	    "@@ -0,0 +1 @@\n+x\n";
	static const char link_then[] =
	    "diff --git a/link b/link\nnew file mode 120000\n--- /dev/null\n"
	    "+++ b/link\n@@ -0,0 +1 @@\n+/etc\n\\ No newline at end of file\n"
	    "diff --git a/link/pwned b/link/pwned\nnew file mode 100644\n"
	    "--- /dev/null\n+++ b/link/pwned\n@@ -0,0 +1 @@\n+x\n";
	static const char gitlink[] =
	    "diff --git a/sub b/sub\nnew file mode 160000\n--- /dev/null\n"
	    "+++ b/sub\n@@ -0,0 +1 @@\n"
	    "+Subproject commit 1111111111111111111111111111111111111111\n";
	static const char chmod777[] =
	    "diff --git a/README b/README\nold mode 100644\nnew mode 100777\n";

	verify(slashes, NULL);
	ck_assert(has(LEASE_GATE_ABSOLUTE, NULL));
	verify(escape, NULL);
	ck_assert(has(LEASE_GATE_ESCAPE, NULL) ||
	    has(LEASE_GATE_PATCH_MALFORMED, NULL));
	verify(hook, NULL);
	ck_assert(has(LEASE_GATE_GIT_PATH, NULL) ||
	    has(LEASE_GATE_PATCH_MALFORMED, NULL));
	verify(upper, NULL);
	ck_assert(has(LEASE_GATE_GIT_PATH, NULL) ||
	    has(LEASE_GATE_PATCH_MALFORMED, NULL));
	verify(link_then, NULL);
	ck_assert(has(LEASE_GATE_SYMLINK, NULL));
	pol.allow_symlinks = true;
	verify(link_then, NULL);
	ck_assert(has(LEASE_GATE_BEYOND_SYMLINK, "link/pwned"));
	pol.allow_symlinks = false;
	verify(gitlink, NULL);
	ck_assert(has(LEASE_GATE_GITLINK, NULL));
	verify(chmod777, NULL);
	ck_assert_uint_gt(rep.n, 0);
	ck_assert_str_eq(rep.tree, "");
}
END_TEST

START_TEST(test_extract_gate_manifest)
{
	struct lease_manifest *m;
	char *patch, *bad, *p;
	size_t len;

	wwrite("README", "hello again\nplus\n");
	ck_assert_int_eq(extract(), 0);
	m = manifest();
	p = lt_fmt("%s/%s", qdir, "patch");
	patch = lt_slurp(p, &len);
	free(p);
	verify(patch, m);
	ck_assert_uint_eq(rep.n, 0);
	/* a changed digest */
	{
		char save = m->patch_sha256[0];

		m->patch_sha256[0] = save == 'a' ? 'b' : 'a';
		verify(patch, m);
		ck_assert(has(LEASE_GATE_MANIFEST_MISMATCH, NULL));
		m->patch_sha256[0] = save;
		/* a changed content hash */
		save = m->files[0].sha256[0];
		m->files[0].sha256[0] = save == 'a' ? 'b' : 'a';
		verify(patch, m);
		if (!has(LEASE_GATE_MANIFEST_MISMATCH, "README"))
			dump();
		ck_assert(has(LEASE_GATE_MANIFEST_MISMATCH, "README"));
		m->files[0].sha256[0] = save;
		verify(patch, m);
		ck_assert_uint_eq(rep.n, 0);
	}
	/* a truncated patch: never the snapshot */
	bad = strndup(patch, len - 6);
	lease_gate_report_free(&rep);
	ck_assert_int_eq(lease_gate_odb_verify(q, c[2], bad, strlen(bad), m,
	    &pol,
	    &rep), 0);
	ck_assert_uint_gt(rep.n, 0);
	free(bad);
	/* a corrupted one */
	bad = strdup(patch);
	bad[len / 2] = '\0';
	bad[len / 2 + 1] = 'X';
	lease_gate_report_free(&rep);
	ck_assert_int_eq(lease_gate_odb_verify(q, c[2], bad, len, m, &pol,
	    &rep),
	    0);
	ck_assert_uint_gt(rep.n, 0);
	free(bad);
	/* against another base it applies, or it is refused; never silent */
	lease_gate_report_free(&rep);
	ck_assert_int_eq(lease_gate_odb_verify(q, c[0], patch, len, m, &pol,
	    &rep),
	    0);
	ck_assert_uint_gt(rep.n, 0);
	free(patch);
	lease_manifest_free(m);
}
END_TEST

Suite *extract_suite(void);

Suite *
extract_suite(void)
{
	Suite *s = suite_create("extract");
	TCase *tc = tcase_create("Core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_extract_clean);
	tcase_add_test(tc, test_extract_changes);
	tcase_add_test(tc, test_extract_verify_disk_full);
	tcase_add_test(tc, test_extract_ignore_rules);
	tcase_add_test(tc, test_extract_symlinks_policy);
	tcase_add_test(tc, test_extract_artifacts);
	suite_add_tcase(s, tc);

	tc = tcase_create("Hostile");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_extract_symlink);
	tcase_add_test(tc, test_extract_under_symlink);
	tcase_add_test(tc, test_extract_fifo);
	tcase_add_test(tc, test_extract_socket);
	tcase_add_test(tc, test_extract_device);
	tcase_add_test(tc, test_extract_chmod000);
	tcase_add_test(tc, test_extract_mode777);
	tcase_add_loop_test(tc, test_extract_git_spellings, 0,
	    sizeof spellings / sizeof spellings[0]);
	tcase_add_test(tc, test_extract_gitlink);
	tcase_add_test(tc, test_extract_bare_repository);
	tcase_add_test(tc, test_extract_credential);
	tcase_add_test(tc, test_extract_binary);
	tcase_add_loop_test(tc, test_extract_names, 0, 5);
	tcase_add_test(tc, test_extract_100k_files);
	tcase_add_test(tc, test_extract_sparse_2g);
	tcase_add_test(tc, test_extract_caps);
	tcase_add_loop_test(tc, test_extract_toctou, 0, 2);
	tcase_add_test(tc, test_extract_background_swapper);
	suite_add_tcase(s, tc);

	tc = tcase_create("Gate");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_extract_gate_quirks);
	tcase_add_test(tc, test_extract_gate_manifest);
	suite_add_tcase(s, tc);
	return s;
}
