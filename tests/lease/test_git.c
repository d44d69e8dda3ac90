/*
 * test_git.c: git through libgit2 on real repositories in temp directories
 * (SPEC 6.2-6.4): opening (not a repo, bare, subdirectory, owned by
 * another user), resolving bases, branch collision, review worktrees, and
 * an inspection of the seeded workspace clone (no remotes, hooksPath,
 * empty credential helper, no alternates, no hardlinks, detached at the
 * base, no uncommitted changes of the operator).
 */
#include <ftw.h>
#include <git2.h>

#include "lease_test.h"
#include "lease/lease_int.h"

#define ID_A "20261129-084512-123-a3f9"
#define ID_B "20261129-084512-124-0001"

static char *tmp;
static char *repo;
static char c[3][41];

static void
setup(void)
{
	ck_assert_int_ge(lease_git_init(), 0);
	tmp = cu_tmpdir("git");
	repo = lt_make_repo(tmp, c);
}

static void
teardown(void)
{
	cu_rmrf(tmp);
	free(tmp);
	free(repo);
	lease_git_shutdown();
}

static void
expect_open(const char *dir, int want, const char *needle)
{
	struct lease_git *g;
	int rc = lease_git_open(&g, dir);

	ck_assert_msg(rc == want, "open %s gave %d (%s)", dir, rc,
	    lease_git_errmsg(g));
	ck_assert_msg(strstr(lease_git_errmsg(g), needle) != NULL,
	    "message: %s", lease_git_errmsg(g));
	lease_git_free(g);
}

START_TEST(test_git_open_errors)
{
	char *plain = lt_fmt("%s/%s", tmp, "plain");
	char *bare = lt_fmt("%s/%s", tmp, "bare.git");
	char *sub = lt_fmt("%s/%s", repo, "src");
	git_repository *r;
	struct lease_git *g;

	ck_assert_int_eq(mkdir(plain, 0755), 0);
	expect_open(plain, LEASE_ENOTREPO, "not a git repository");
	expect_open("/nonexistent/dir", LEASE_ENOTREPO, "/nonexistent/dir");
	ck_assert_int_eq(git_repository_init(&r, bare, 1), 0);
	git_repository_free(r);
	expect_open(bare, LEASE_EBARE, "bare repository");
	/* a subdirectory finds its repository, as git does */
	g = lt_git_open(sub);
	{
		char *want = lt_fmt("%s%s", repo, "/");

		ck_assert_str_eq(lease_git_workdir(g), want);
		free(want);
	}
	lease_git_free(g);
	lease_git_free(NULL);
	free(plain);
	free(bare);
	free(sub);
}
END_TEST

START_TEST(test_git_resolve)
{
	struct lease_git *g = lt_git_open(repo);
	char oid[41];
	char *ref;
	git_repository *r;
	git_object *obj;
	git_oid tag;
	git_signature *sig;

	ck_assert_int_eq(lease_git_resolve(g, NULL, oid, &ref), 0);
	ck_assert_str_eq(oid, c[2]);
	ck_assert_str_eq(ref, "refs/heads/main");
	free(ref);
	ck_assert_int_eq(lease_git_resolve(g, "main", oid, &ref), 0);
	ck_assert_str_eq(oid, c[2]);
	ck_assert_str_eq(ref, "refs/heads/main");
	free(ref);
	ck_assert_int_eq(lease_git_resolve(g, "HEAD~1", oid, &ref), 0);
	ck_assert_str_eq(oid, c[1]);
	ck_assert_ptr_null(ref);
	ck_assert_int_eq(lease_git_resolve(g, c[0], oid, &ref), 0);
	ck_assert_str_eq(oid, c[0]);
	ck_assert_ptr_null(ref);

	/* an annotated tag peels to its commit and keeps its ref name */
	ck_assert_int_eq(git_repository_open(&r, repo), 0);
	ck_assert_int_eq(git_revparse_single(&obj, r, c[1]), 0);
	ck_assert_int_eq(git_signature_new(&sig, "T", "t@example.com",
	    1700000000, 0), 0);
	ck_assert_int_eq(git_tag_create(&tag, r, "v1", obj, sig, "v1", 0), 0);
	ck_assert_int_eq(git_repository_set_head_detached(r,
	    git_object_id(obj)), 0);
	git_signature_free(sig);
	git_object_free(obj);
	git_repository_free(r);
	ck_assert_int_eq(lease_git_resolve(g, "v1", oid, &ref), 0);
	ck_assert_str_eq(oid, c[1]);
	ck_assert_str_eq(ref, "refs/tags/v1");
	free(ref);
	/* a detached HEAD has no ref */
	ck_assert_int_eq(lease_git_resolve(g, "HEAD", oid, &ref), 0);
	ck_assert_str_eq(oid, c[1]);
	ck_assert_ptr_null(ref);

	ck_assert_int_eq(lease_git_resolve(g, "no-such-branch", oid, &ref),
	    LEASE_EBADBASE);
	ck_assert_ptr_nonnull(strstr(lease_git_errmsg(g), "no-such-branch"));
	ck_assert_int_eq(lease_git_resolve(g, "HEAD^{tree}", oid, &ref),
	    LEASE_EBADBASE);
	ck_assert_int_eq(lease_git_resolve(g, "--upload-pack=x", oid, &ref),
	    LEASE_EBADBASE);
	ck_assert_int_eq(lease_git_resolve(g,
	    "0123456789012345678901234567890123456789", oid, &ref),
	    LEASE_EBADBASE);
	lease_git_free(g);
}
END_TEST

START_TEST(test_git_branch_collision)
{
	struct lease_git *g = lt_git_open(repo);

	ck_assert_int_eq(lease_git_branch_exists(g, ID_A), 0);
	ck_assert_int_eq(lease_git_branch_create(g, ID_A, c[1]), 0);
	ck_assert_int_eq(lease_git_branch_exists(g, ID_A), 1);
	ck_assert_int_eq(lease_git_branch_create(g, ID_A, c[2]),
	    LEASE_EBRANCHEXISTS);
	ck_assert_ptr_nonnull(strstr(lease_git_errmsg(g),
	    "corral/" ID_A " already exists"));
	ck_assert_int_eq(lease_git_branch_create(g, "bad/id", c[2]),
	    LEASE_EBADID);
	ck_assert_int_eq(lease_git_branch_create(g, ID_B, "zz"), -EINVAL);
	ck_assert_int_eq(lease_git_branch_delete(g, ID_A), 0);
	ck_assert_int_eq(lease_git_branch_delete(g, ID_A), 0);
	ck_assert_int_eq(lease_git_branch_exists(g, ID_A), 0);
	lease_git_free(g);
}
END_TEST

static int
count_name(const char *name, void *ud)
{
	int *n = ud;

	(void)name;
	(*n)++;
	return 0;
}

START_TEST(test_git_worktree)
{
	struct lease_git *g = lt_git_open(repo);
	char *wt = lt_fmt("%s/%s", tmp, "worktrees/" ID_A);
	char *file, *head, *body;
	git_oid id;
	int n = 0;

	ck_assert_int_eq(lease_git_worktree_add(g, ID_A, wt),
	    LEASE_ENOTFOUND);	/* no branch yet */
	ck_assert_int_eq(lease_git_branch_create(g, ID_A, c[1]), 0);
	{
		char *parent = lt_fmt("%s/%s", tmp, "worktrees");

		ck_assert_int_eq(mkdir(parent, 0700), 0);
		free(parent);
	}
	ck_assert_int_eq(lease_git_worktree_add(g, ID_A, wt), 0);
	ck_assert_int_eq(lease_git_worktree_exists(g, ID_A), 1);
	/* registered, nothing written until a result is checked out */
	file = lt_fmt("%s/%s", wt, "README");
	ck_assert_int_eq(access(file, F_OK), -1);
	ck_assert_int_eq(git_oid_fromstr(&id, c[1]), 0);
	ck_assert_int_eq(lease__git_worktree_checkout(g, ID_A, &id), 0);
	/* then it holds the commit (c[1]: README "hello", src/a.c) */
	body = lt_slurp(file, NULL);
	ck_assert_str_eq(body, "hello\n");
	free(body);
	free(file);
	file = lt_fmt("%s/%s", wt, "src/a.c");
	ck_assert_int_eq(access(file, F_OK), 0);
	free(file);
	file = lt_fmt("%s/%s", wt, "src/b.c");
	ck_assert_int_eq(access(file, F_OK), -1);
	free(file);
	head = lt_fmt("%s/%s", repo, ".git/worktrees/" ID_A "/HEAD");
	body = lt_slurp(head, NULL);
	ck_assert_str_eq(body, "ref: refs/heads/corral/" ID_A "\n");
	free(body);
	free(head);
	ck_assert_int_eq(lease_git_worktree_add(g, ID_A, wt), LEASE_EEXIST);
	ck_assert_int_eq(lease_git_worktrees(g, count_name, &n), 0);
	ck_assert_int_eq(n, 1);
	/* while checked out there, the branch cannot be deleted */
	ck_assert_int_eq(lease_git_branch_delete(g, ID_A), LEASE_EBUSY);
	/* prune removes git's entry only; the directory is the caller's */
	ck_assert_int_eq(lease_git_worktree_remove(g, ID_A, wt), 0);
	ck_assert_int_eq(lease_git_worktree_exists(g, ID_A), 0);
	ck_assert_int_eq(access(wt, F_OK), 0);
	ck_assert_int_eq(lease_git_worktree_remove(g, ID_A, wt), 0);
	ck_assert_int_eq(lease_git_branch_delete(g, ID_A), 0);
	lease_git_free(g);
	free(wt);
}
END_TEST

/* Appends each name to the comma list ud (a 256-byte buffer). */
static int
list_name(const char *name, void *ud)
{
	char *buf = ud;
	size_t n = strlen(buf);

	snprintf(buf + n, 256 - n, "%s,", name);
	return 0;
}

/*
 * Two state directories on one repository (SPEC 9.2): a branch and a
 * worktree of state one are never listed by state two, as its orphans
 * would be; an unmarked branch (an older corral's) is listed by both.
 */
START_TEST(test_git_two_states)
{
	struct lease_git *one = lt_git_open(repo), *two = lt_git_open(repo);
	struct lease_git *old = lt_git_open(repo);
	char *s1 = lt_fmt("%s/%s", tmp, "state-one");
	char *s2 = lt_fmt("%s/%s", tmp, "state-two");
	char *wts = lt_fmt("%s/%s", s1, "worktrees");
	char *wt = lt_fmt("%s/%s", wts, ID_A);
	char seen[256];

	ck_assert_int_eq(mkdir(s1, 0700), 0);
	ck_assert_int_eq(mkdir(s2, 0700), 0);
	ck_assert_int_eq(mkdir(wts, 0700), 0);
	lease_git_set_owner(one, s1);
	lease_git_set_owner(two, s2);
	ck_assert_int_eq(lease_git_branch_create(one, ID_A, c[1]), 0);
	ck_assert_int_eq(lease_git_worktree_add(one, ID_A, wt), 0);
	ck_assert_int_eq(lease_git_branch_create(old, ID_B, c[1]), 0);
	seen[0] = '\0';
	ck_assert_int_eq(lease_git_branches(one, list_name, seen), 0);
	ck_assert_str_eq(seen, ID_A "," ID_B ",");
	seen[0] = '\0';
	ck_assert_int_eq(lease_git_branches(two, list_name, seen), 0);
	ck_assert_str_eq(seen, ID_B ",");
	seen[0] = '\0';
	ck_assert_int_eq(lease_git_worktrees(one, list_name, seen), 0);
	ck_assert_str_eq(seen, ID_A ",");
	seen[0] = '\0';
	ck_assert_int_eq(lease_git_worktrees(two, list_name, seen), 0);
	ck_assert_str_eq(seen, "");
	ck_assert_int_eq(lease_git_worktree_remove(one, ID_A, wt), 0);
	ck_assert_int_eq(lease_git_branch_delete(one, ID_A), 0);
	ck_assert_int_eq(lease_git_branch_delete(old, ID_B), 0);
	lease_git_free(one);
	lease_git_free(two);
	lease_git_free(old);
	free(wt);
	free(wts);
	free(s1);
	free(s2);
}
END_TEST

static int nlink_bad;
static int nfiles;

static int
check_nlink(const char *path, const struct stat *sb, int flag,
    struct FTW *f)
{
	(void)f;
	if (flag == FTW_F) {
		nfiles++;
		if (sb->st_nlink != 1) {
			fprintf(stderr, "hardlinked: %s\n", path);
			nlink_bad++;
		}
	}
	return 0;
}

START_TEST(test_git_workspace_inspection)
{
	struct lease_git *g = lt_git_open(repo);
	char *ws = lt_fmt("%s/%s", tmp, "ws");
	char *p, *body;
	git_repository *r;
	git_config *cfg, *snap;
	git_buf buf = { 0 };
	git_reference *head;
	git_oid oid;
	git_odb *odb;
	const char *hooks;

	/* the operator's uncommitted changes: must never reach the clone */
	lt_write(repo, "README", "DIRTY uncommitted edit\n");
	lt_write(repo, "untracked.txt", "not committed\n");
	ck_assert_int_eq(lease_git_workspace_seed(g, c[1], ws, 0), 0);
	ck_assert_int_eq(lease_git_workspace_seed(g, c[1], ws, 0),
	    LEASE_EEXIST);

	ck_assert_int_eq(git_repository_open(&r, ws), 0);
	/* config */
	ck_assert_int_eq(git_repository_config(&cfg, r), 0);
	/*
	 * No remotes at all: no remote.* key in the repository's config
	 * (walked by hand: git_remote_list leaks in libgit2 1.5.1's pcre2
	 * path under LeakSanitizer).
	 */
	{
		git_config *lc;
		git_config_iterator *it;
		git_config_entry *e;

		ck_assert_int_eq(git_config_open_level(&lc, cfg,
		    GIT_CONFIG_LEVEL_LOCAL), 0);
		ck_assert_int_eq(git_config_iterator_new(&it, lc), 0);
		while (git_config_next(&e, it) == 0)
			ck_assert_msg(strncmp(e->name, "remote.", 7) != 0,
			    "clone has %s", e->name);
		git_config_iterator_free(it);
		git_config_free(lc);
	}
	ck_assert_int_eq(git_config_snapshot(&snap, cfg), 0);
	ck_assert_int_eq(git_config_get_string(&hooks, snap,
	    "core.hooksPath"), 0);
	ck_assert_str_eq(hooks, "/dev/null");
	ck_assert_int_eq(git_config_get_string_buf(&buf, cfg,
	    "credential.helper"), 0);
	ck_assert_str_eq(buf.ptr, "");
	git_buf_dispose(&buf);
	git_config_free(snap);
	git_config_free(cfg);
	/* HEAD detached at the base */
	ck_assert_int_eq(git_repository_head_detached(r), 1);
	ck_assert_int_eq(git_repository_head(&head, r), 0);
	git_oid_fromstr(&oid, c[1]);
	ck_assert(git_oid_equal(git_reference_target(head), &oid));
	git_reference_free(head);
	/* history = 0: the base alone, not c[0] (its parent) nor c[2] */
	ck_assert_int_eq(git_repository_odb(&odb, r), 0);
	git_oid_fromstr(&oid, c[0]);
	ck_assert_int_eq(git_odb_exists(odb, &oid), 0);
	git_oid_fromstr(&oid, c[2]);
	ck_assert_int_eq(git_odb_exists(odb, &oid), 0);
	git_odb_free(odb);
	/* no local branches or tags copied from the operator */
	{
		git_reference_iterator *it;
		git_reference *ref;
		int nrefs = 0;

		ck_assert_int_eq(git_reference_iterator_new(&it, r), 0);
		while (git_reference_next(&ref, it) == 0) {
			nrefs++;
			git_reference_free(ref);
		}
		git_reference_iterator_free(it);
		ck_assert_int_eq(nrefs, 0);
	}
	git_repository_free(r);

	/* working tree: committed content at the base, nothing dirty */
	p = lt_fmt("%s/%s", ws, "README");
	body = lt_slurp(p, NULL);
	ck_assert_str_eq(body, "hello\n");
	free(body);
	free(p);
	p = lt_fmt("%s/%s", ws, "src/a.c");
	ck_assert_int_eq(access(p, F_OK), 0);
	free(p);
	p = lt_fmt("%s/%s", ws, "untracked.txt");
	ck_assert_int_eq(access(p, F_OK), -1);
	free(p);
	/* own object database: no alternates, no hardlinks */
	p = lt_fmt("%s/%s", ws, ".git/objects/info/alternates");
	ck_assert_int_eq(access(p, F_OK), -1);
	free(p);
	p = lt_fmt("%s/%s", ws, ".git/objects");
	nlink_bad = nfiles = 0;
	ck_assert_int_eq(nftw(p, check_nlink, 16, FTW_PHYS), 0);
	ck_assert_int_gt(nfiles, 1);
	ck_assert_int_eq(nlink_bad, 0);
	free(p);
	/* the workspace itself is private */
	{
		struct stat sb;

		ck_assert_int_eq(stat(ws, &sb), 0);
		ck_assert_int_eq(sb.st_mode & 0777, 0700);
	}
	lease_git_free(g);
	free(ws);
}
END_TEST

START_TEST(test_git_two_leases_one_base)
{
	struct lease_git *g = lt_git_open(repo);
	char *wa = lt_fmt("%s/%s", tmp, "wt-a"), *wb = lt_fmt("%s/%s", tmp,
	    "wt-b");
	char *sa = lt_fmt("%s/%s", tmp, "ws-a"), *sb = lt_fmt("%s/%s", tmp,
	    "ws-b");
	char *f;
	int n = 0;

	ck_assert_int_eq(lease_git_branch_create(g, ID_A, c[2]), 0);
	ck_assert_int_eq(lease_git_branch_create(g, ID_B, c[2]), 0);
	ck_assert_int_eq(lease_git_worktree_add(g, ID_A, wa), 0);
	ck_assert_int_eq(lease_git_worktree_add(g, ID_B, wb), 0);
	ck_assert_int_eq(lease_git_workspace_seed(g, c[2], sa, 0), 0);
	ck_assert_int_eq(lease_git_workspace_seed(g, c[2], sb, 0), 0);
	ck_assert_int_eq(lease_git_branches(g, count_name, &n), 0);
	ck_assert_int_eq(n, 2);
	/* a write in one workspace is not visible in the other */
	lt_write(sa, "src/a.c", "int a = 1;\n");
	f = lt_fmt("%s/%s", sb, "src/a.c");
	{
		char *body = lt_slurp(f, NULL);

		ck_assert_str_eq(body, "int a;\n");
		free(body);
	}
	free(f);
	lease_git_free(g);
	free(wa);
	free(wb);
	free(sa);
	free(sb);
}
END_TEST

START_TEST(test_git_diffstat)
{
	struct lease_git *g = lt_git_open(repo);
	struct lease_diffstat st;

	ck_assert_int_eq(lease_git_diffstat(g, c[0], c[2], &st), 0);
	ck_assert_uint_eq(st.files, 3);
	ck_assert_uint_eq(st.insertions, 3);
	ck_assert_uint_eq(st.deletions, 1);
	lease_git_free(g);
}
END_TEST

/*
 * SPEC 8.6: a file is read from a commit's tree, never the worktree: the
 * version of each commit, a file that exists only uncommitted is absent,
 * and a symlink, a directory, a file over the cap and a bad commit are
 * refused with their own codes.
 */
START_TEST(test_git_read_blob)
{
	struct lease_git *g = lt_git_open(repo);
	char *buf = NULL, *cmd;
	size_t len = 0;
	int st;

	ck_assert_int_eq(lease_git_read_blob(g, c[0], "README", 1024, &buf,
	    &len), 0);
	ck_assert_str_eq(buf, "hello\n");
	ck_assert_uint_eq(len, 6);
	free(buf);
	ck_assert_int_eq(lease_git_read_blob(g, c[2], "README", 1024, &buf,
	    NULL), 0);
	ck_assert_str_eq(buf, "hello again\n");
	free(buf);
	/* In the worktree only: not in any commit. */
	lt_write(repo, "uncommitted.ini", "[limits]\n");
	lt_write(repo, "README", "changed in the worktree\n");
	ck_assert_int_eq(lease_git_read_blob(g, c[2], "uncommitted.ini",
	    1024, &buf, NULL), LEASE_ENOTFOUND);
	ck_assert_ptr_null(buf);
	ck_assert_int_eq(lease_git_read_blob(g, c[2], "README", 1024, &buf,
	    NULL), 0);
	ck_assert_str_eq(buf, "hello again\n");
	free(buf);
	ck_assert_int_eq(lease_git_read_blob(g, c[0], "src/a.c", 1024, &buf,
	    NULL), LEASE_ENOTFOUND);
	ck_assert_int_eq(lease_git_read_blob(g, c[2], "src", 1024, &buf,
	    NULL), -EINVAL);
	ck_assert_int_eq(lease_git_read_blob(g, c[2], "README", 4, &buf,
	    NULL), -EFBIG);
	ck_assert_ptr_null(buf);
	ck_assert_int_eq(lease_git_read_blob(g, "nothex", "README", 1024,
	    &buf, NULL), -EINVAL);
	/* A committed symlink is not a policy file. */
	cmd = lt_fmt("cd '%s' && ln -s README link && git add link && "
	    "git -c user.name=t -c user.email=t@x.invalid commit -qm link%s",
	    repo, "");
	free(cu_run(cmd, &st));
	free(cmd);
	ck_assert_int_eq(st, 0);
	cmd = lt_fmt("git -C '%s' rev-parse HEAD%s", repo, "");
	{
		char *head = cu_run(cmd, &st);

		ck_assert_int_eq(st, 0);
		head[strcspn(head, "\n")] = '\0';
		ck_assert_int_eq(lease_git_read_blob(g, head, "link", 1024,
		    &buf, NULL), -EINVAL);
		free(head);
	}
	free(cmd);
	lease_git_free(g);
}
END_TEST

/*
 * libgit2 1.5.1 as root refuses a repository owned by someone else: the
 * repository named exactly is opened (owner check off around that open
 * only), one found by searching upward is refused, and the process-wide
 * option is back on afterwards.
 */
START_TEST(test_git_foreign_owner)
{
	char *cmd = lt_fmt("chown -R 65534:65534 '%s'%s", repo, "");
	char *sub = lt_fmt("%s/%s", repo, "src");
	char *wt = lt_fmt("%s/%s", tmp, "wt");
	char *ws = lt_fmt("%s/%s", tmp, "ws");
	struct lease_git *g;
	git_repository *r = NULL;
	char oid[41];
	char *ref;
	int on = -1;

	ck_assert_int_eq(getuid(), 0);	/* the case only exists for root */
	ck_assert_int_eq(system(cmd), 0);
	/* libgit2 itself refuses it (1.5.1 says "not found") */
	ck_assert_int_lt(git_repository_open(&r, repo), 0);
	expect_open(sub, LEASE_EOWNER, "owned by another user");
	git_libgit2_opts(GIT_OPT_GET_OWNER_VALIDATION, &on);
	ck_assert_int_eq(on, 1);

	g = lt_git_open(repo);
	git_libgit2_opts(GIT_OPT_GET_OWNER_VALIDATION, &on);
	ck_assert_int_eq(on, 1);
	ck_assert_int_eq(lease_git_resolve(g, NULL, oid, &ref), 0);
	ck_assert_str_eq(ref, "refs/heads/main");
	free(ref);
	ck_assert_int_eq(lease_git_branch_create(g, ID_A, oid), 0);
	ck_assert_int_eq(lease_git_worktree_add(g, ID_A, wt), 0);
	ck_assert_int_eq(lease_git_workspace_seed(g, oid, ws, 0), 0);
	ck_assert_int_eq(lease_git_worktree_remove(g, ID_A, wt), 0);
	ck_assert_int_eq(lease_git_branch_delete(g, ID_A), 0);
	git_libgit2_opts(GIT_OPT_GET_OWNER_VALIDATION, &on);
	ck_assert_int_eq(on, 1);
	/* and still nothing else is trusted */
	ck_assert_int_lt(git_repository_open(&r, repo), 0);
	lease_git_free(g);
	free(cmd);
	free(sub);
	free(wt);
	free(ws);
}
END_TEST

Suite *git_suite(void);

Suite *
git_suite(void)
{
	Suite *s = suite_create("git");
	TCase *tc = tcase_create("Core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_git_open_errors);
	tcase_add_test(tc, test_git_resolve);
	tcase_add_test(tc, test_git_branch_collision);
	tcase_add_test(tc, test_git_worktree);
	tcase_add_test(tc, test_git_two_states);
	tcase_add_test(tc, test_git_workspace_inspection);
	tcase_add_test(tc, test_git_two_leases_one_base);
	tcase_add_test(tc, test_git_diffstat);
	tcase_add_test(tc, test_git_read_blob);
	tcase_add_test(tc, test_git_foreign_owner);
	suite_add_tcase(s, tc);
	return s;
}
