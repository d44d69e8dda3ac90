/*
 * test_seed.c: the workspace's history (SPEC 6.4): [git] history = 0 gives
 * the base commit alone with its ID (git log, status and commit work in
 * it, .git/shallow names it), N the base and N generations, all every
 * ancestor; and the smoke check that seeding stays tree-sized on a
 * generated repository with deep history (bench/bench_repo.c, 2,000
 * commits): the workspace holds exactly the base commit and its tree's
 * objects. Bad input, each with its outcome: a 2 GB file and a tree over
 * the disk limit are refused by name before anything is created; a
 * submodule, LFS pointers, an operator's sparse checkout and a base on no
 * branch are seeded.
 */
#include <git2.h>

#include "lease_recover_util.h"

static char *tmp;

static void
setup(void)
{
	ck_assert_int_ge(lease_git_init(), 0);
	tmp = cu_tmpdir("seed");
}

static void
teardown(void)
{
	cu_rmrf(tmp);
	free(tmp);
	lease_git_shutdown();
}

static int
count_cb(const git_oid *id, void *ud)
{
	(void)id;
	++*(size_t *)ud;
	return 0;
}

/* Objects in the repository at path's own object database. */
static size_t
odb_count(const char *path)
{
	git_repository *r;
	git_odb *odb;
	size_t n = 0;

	ck_assert_int_eq(git_repository_open(&r, path), 0);
	ck_assert_int_eq(git_repository_odb(&odb, r), 0);
	ck_assert_int_eq(git_odb_foreach(odb, count_cb, &n), 0);
	git_odb_free(odb);
	git_repository_free(r);
	return n;
}

static int
has_object(const char *path, const char *hex)
{
	git_repository *r;
	git_odb *odb;
	git_oid id;
	int rc;

	ck_assert_int_eq(git_oid_fromstr(&id, hex), 0);
	ck_assert_int_eq(git_repository_open(&r, path), 0);
	ck_assert_int_eq(git_repository_odb(&odb, r), 0);
	rc = git_odb_exists(odb, &id);
	git_odb_free(odb);
	git_repository_free(r);
	return rc;
}

/* The output of a shell command run in dir; it must exit 0. */
static char *
in_dir(const char *dir, const char *cmd)
{
	char *line = lt_fmt("cd '%s' && %s 2>&1", dir, cmd);
	int st = -1;
	char *out = cu_run(line, &st);

	ck_assert_msg(st == 0, "%s: exit %d: %s", cmd, st, out);
	free(line);
	return out;
}

/* cmd in dir prints exactly want. */
static void
expect_out(const char *dir, const char *cmd, const char *want)
{
	char *out = in_dir(dir, cmd);

	ck_assert_str_eq(out, want);
	free(out);
}

/* dir/.git/shallow names exactly the commit hex. */
static void
expect_shallow(const char *dir, const char *hex)
{
	char *p = lt_fmt("%s/%s", dir, ".git/shallow");
	char *body = lt_slurp(p, NULL), *want = lt_fmt("%s%s", hex, "\n");

	ck_assert_str_eq(body, want);
	free(want);
	free(body);
	free(p);
}

START_TEST(test_seed_history)
{
	char c[3][41], *repo = lt_make_repo(tmp, c), *out, *p, *want;
	char *w0 = lt_fmt("%s/%s", tmp, "w0"), *w1 = lt_fmt("%s/%s", tmp,
	    "w1"), *wa = lt_fmt("%s/%s", tmp, "wall");
	struct lease_git *g = lt_git_open(repo);

	ck_assert_int_eq(lease_git_workspace_seed(g, c[2], w0, 0), 0);
	ck_assert_int_eq(lease_git_workspace_seed(g, c[2], w1, 1), 0);
	ck_assert_int_eq(lease_git_workspace_seed(g, c[2], wa,
	    LEASE_HISTORY_ALL), 0);
	lease_git_free(g);

	/* 0: the base alone, with its own ID; git sees the graft */
	ck_assert_int_eq(has_object(w0, c[2]), 1);
	ck_assert_int_eq(has_object(w0, c[1]), 0);
	/* commit, root tree, src/, README, a.c, b.c */
	ck_assert_int_eq(odb_count(w0), 6);
	expect_shallow(w0, c[2]);
	want = lt_fmt("%s%s", c[2], "\n");
	expect_out(w0, "git log --format=%H", want);
	expect_out(w0, "git status --porcelain", "");
	/* the agent can commit; its commit's parent is the operator's base */
	lt_write(w0, "src/c.c", "int c;\n");
	free(in_dir(w0, "git add -A && git -c user.name=a -c "
	    "user.email=a@example.invalid commit -q -m agent"));
	expect_out(w0, "git log --format=%P -1", want);
	free(want);
	out = in_dir(w0, "git diff --stat HEAD~1 HEAD");
	ck_assert_ptr_nonnull(strstr(out, "src/c.c"));
	free(out);

	/* 1: the base and its parent; the parent is the boundary */
	ck_assert_int_eq(has_object(w1, c[1]), 1);
	ck_assert_int_eq(has_object(w1, c[0]), 0);
	expect_shallow(w1, c[1]);
	expect_out(w1, "git log --format=%s", "third\nsecond\n");

	/* all: every ancestor, nothing grafted */
	ck_assert_int_eq(has_object(wa, c[0]), 1);
	p = lt_fmt("%s/%s", wa, ".git/shallow");
	ck_assert_int_eq(access(p, F_OK), -1);
	free(p);
	expect_out(wa, "git log --format=%s", "third\nsecond\nfirst\n");
	free(in_dir(wa, "git fsck --no-progress"));
	free(in_dir(w0, "git fsck --no-progress"));
	free(w0);
	free(w1);
	free(wa);
	free(repo);
}
END_TEST

/*
 * The make test smoke check of issue 17: a repository of 2,000 commits
 * (bench_repo), seeded with history = 0, gives a workspace whose object
 * database holds exactly the base commit, its tree and the tree's
 * objects, and whose pack is no larger than the checked-out files.
 */
START_TEST(test_seed_tree_sized)
{
	const char *gen = getenv("CORRAL_BENCH_REPO");
	const char *cache = getenv("CORRAL_BENCH_CACHE");
	char *repo, *cmd, *out, *ws = lt_fmt("%s/%s", tmp, "ws");
	unsigned long commits = 0, files = 0;
	unsigned long long tree_bytes = 0, pack_bytes = 0, ws_pack = 0;
	char head[64] = "";
	struct lease_git *g;
	size_t want, got;
	int st = -1;

	ck_assert_msg(gen != NULL && cache != NULL, "CORRAL_BENCH_REPO and "
	    "CORRAL_BENCH_CACHE must name the generator and its cache");
	repo = lt_fmt("%s/%s", cache, "smoke-2000");
	cmd = lt_fmt("'%s' '%s' 2000 300 17", gen, repo);
	out = cu_run(cmd, &st);
	ck_assert_msg(st == 0, "%s: %s", cmd, out);
	ck_assert_int_eq(sscanf(out, "%lu %lu %llu %llu %63s", &commits,
	    &files, &tree_bytes, &pack_bytes, head), 5);
	ck_assert_uint_eq(commits, 2000);
	/* the history is far larger than the tree */
	ck_assert_uint_gt(pack_bytes, 4 * tree_bytes);
	free(out);
	free(cmd);

	g = lt_git_open(repo);
	ck_assert_int_eq(lease_git_workspace_seed(g, head, ws, 0), 0);
	lease_git_free(g);

	/* the base commit, its root tree and every distinct tree and blob
	 * under it, as git counts them in the operator's repository */
	cmd = lt_fmt("git -C '%s' ls-tree -r -t HEAD | awk '{print $3}' | "
	    "sort -u | wc -l%s", repo, "");
	out = cu_run(cmd, &st);
	ck_assert_int_eq(st, 0);
	want = 2 + strtoul(out, NULL, 10);
	free(out);
	free(cmd);
	got = odb_count(ws);
	ck_assert_msg(got == want, "the workspace holds %zu objects, the base "
	    "commit and its tree %zu", got, want);
	ck_assert_int_eq(has_object(ws, head), 1);
	cmd = lt_fmt("du -sb '%s/%s' | cut -f1", ws, ".git/objects/pack");
	out = cu_run(cmd, &st);
	ws_pack = strtoull(out, NULL, 10);
	free(out);
	free(cmd);
	ck_assert_msg(ws_pack > 0 && ws_pack <= tree_bytes, "workspace pack "
	    "%llu bytes, tree %llu", ws_pack, tree_bytes);
	expect_out(ws, "git log --oneline | wc -l", "1\n");
	/* the pack and its index are git's own format */
	free(in_dir(ws, "git fsck --no-progress --strict"));
	expect_out(ws, "git status --porcelain", "");
	free(ws);
	free(repo);
}
END_TEST

/*
 * A packed repository: objects stored whole are copied as they are
 * compressed, a base whose blob is a delta is resolved; either way the
 * workspace's pack and index pass git fsck and hold the base's files.
 */
START_TEST(test_seed_packed)
{
	char c[3][41], *repo = lt_make_repo(tmp, c), *out, *p;
	char *ws1 = lt_fmt("%s/%s", tmp, "ws1"), *ws2 = lt_fmt("%s/%s", tmp,
	    "ws2"), *cmd, big[8192], *body, *head;
	struct lease_git *g;
	int st = -1;

	/* a file of its own, then one line of it changed: after a repack
	 * the newer blob is whole and the older one a delta against it */
	for (size_t i = 0; i < sizeof big - 1; i++)
		big[i] = (char)('a' + (i * 7 + i / 61) % 26);
	for (size_t i = 63; i < sizeof big - 1; i += 64)
		big[i] = '\n';
	big[sizeof big - 1] = '\0';
	lt_write(repo, "big.txt", big);
	free(in_dir(repo, "git add -A && git -c user.name=t -c "
	    "user.email=t@example.invalid commit -q -m big && "
	    "git rev-parse HEAD >../old"));
	big[0] = 'Z';
	lt_write(repo, "big.txt", big);
	free(in_dir(repo, "git add -A && git -c user.name=t -c "
	    "user.email=t@example.invalid commit -q -m bigger && "
	    "git repack -q -a -d -f --window=10 --depth=10 && "
	    "git prune-packed"));
	p = lt_fmt("%s/%s", tmp, "old");
	body = lt_slurp(p, NULL);
	body[40] = '\0';
	free(p);
	/* the older big.txt is a delta in the pack: the case is real */
	cmd = lt_fmt("cd '%s' && git verify-pack -v .git/objects/pack/*.idx "
	    "| grep \"^$(git rev-parse %s:big.txt) blob\" | wc -w", repo, body);
	out = cu_run(cmd, &st);
	ck_assert_int_eq(st, 0);
	ck_assert_msg(atoi(out) == 7, "not a delta: %s", out);	/* depth, base */
	free(out);
	free(cmd);
	head = in_dir(repo, "git rev-parse HEAD");
	head[40] = '\0';
	g = lt_git_open(repo);
	ck_assert_int_eq(lease_git_workspace_seed(g, head, ws2, 0), 0);
	ck_assert_int_eq(lease_git_workspace_seed(g, body, ws1, 0), 0);
	lease_git_free(g);
	for (int k = 0; k < 2; k++) {
		const char *ws = k == 0 ? ws2 : ws1;

		free(in_dir(ws, "git fsck --no-progress --strict"));
		expect_out(ws, "git status --porcelain", "");
		big[0] = k == 0 ? 'Z' : 'a';
		p = lt_fmt("%s/%s", ws, "big.txt");
		out = lt_slurp(p, NULL);
		ck_assert_str_eq(out, big);
		free(out);
		free(p);
	}
	free(head);
	free(body);
	free(ws1);
	free(ws2);
	free(repo);
}
END_TEST


/* ---- bad input ----------------------------------------------------------- */

static struct rt rt;

static void
rt_up(void)
{
	rt_setup(&rt, "seedin");
}

static void
rt_down(void)
{
	rt_teardown(&rt);
}

/* A shell command in the repository, which must succeed. */
static void
in_repo(const char *cmd)
{
	free(in_dir(rt.repo, cmd));
}

#define COMMIT "git -c user.name=t -c user.email=t@example.invalid " \
	"commit -q"

/* Insert and provision a lease on base with seed; provision's code. */
static int
provision(const char *base, const struct lease_seed *seed,
    char id[LEASE_ID_LEN + 1])
{
	struct lease_lock *lk;
	int rc;

	ck_assert_int_eq(lease_lock_acquire(rt.state, 5000, &lk), 0);
	rt_insert(&rt, id);
	rc = lease_provision_git(rt.s, lk, rt.state, id, rt.repo, base, seed);
	lease_lock_release(lk);
	return rc;
}

/* The lease failed with reason, and nothing of it was ever created. */
static void
expect_refused(const char *id, const char *reason)
{
	struct lease_resource_row *v = NULL;
	struct lease_record r;
	struct lease_git *g = lt_git_open(rt.repo);
	char *p;
	size_t n = 9;

	ck_assert_int_eq(lease_record_get(rt.s, id, &r), 0);
	ck_assert_int_eq(r.state, LEASE_STATE_FAILED);
	ck_assert_str_eq(r.failed_reason, reason);
	lease_record_clear(&r);
	ck_assert_int_eq(lease_resource_list(rt.s, id, &v, &n), 0);
	ck_assert_uint_eq(n, 0);
	lease_resource_list_free(v, n);
	ck_assert_int_eq(lease_git_branch_exists(g, id), 0);
	lease_git_free(g);
	p = lt_fmt("%s/%s", rt.state, "worktrees");
	ck_assert_int_eq(access(p, F_OK), -1);
	free(p);
	p = lt_fmt("%s/%s", rt.state, "leases");
	ck_assert_int_eq(access(p, F_OK), -1);
	free(p);
}

/* The workspace of lease id (malloc'd path), which must exist. */
static char *
workspace(const char *id)
{
	char *ws = lease_path_workspace(rt.state, id);

	ck_assert_ptr_nonnull(ws);
	ck_assert_int_eq(access(ws, F_OK), 0);
	return ws;
}

START_TEST(test_seed_input_big_file)
{
	struct lease_seed seed = { .history = 0, .max_file = 1ull << 30,
		.max_tree = 4ull << 30 };
	char id[LEASE_ID_LEN + 1], id2[LEASE_ID_LEN + 1];

	/* 2 GB of a sparse file: git stores it deflated to a few MB (at
	 * the fastest level: deflating 2 GB took git minutes on a loaded
	 * machine) */
	in_repo("truncate -s 2G big.bin && git -c core.compression=1 "
	    "-c core.loosecompression=1 add big.bin && " COMMIT
	    " -m big");
	ck_assert_int_eq(provision("main", &seed, id), LEASE_ETOOLARGE);
	ck_assert_ptr_nonnull(strstr(lease_store_errmsg(rt.s),
	    "big.bin is 2.0 GiB"));
	ck_assert_ptr_nonnull(strstr(lease_store_errmsg(rt.s),
	    "[limits] file_size"));
	expect_refused(id, "base_too_large");
	/* the files together over the disk limit: refused too */
	seed.max_file = 0;
	seed.max_tree = 1ull << 30;
	ck_assert_int_eq(provision("main", &seed, id2), LEASE_ETOOLARGE);
	ck_assert_ptr_nonnull(strstr(lease_store_errmsg(rt.s),
	    "[limits] disk"));
	expect_refused(id2, "base_too_large");
}
END_TEST

START_TEST(test_seed_input_submodule)
{
	char id[LEASE_ID_LEN + 1], *ws, *p;
	struct stat sb;

	/* a gitlink to a commit this repository does not have */
	in_repo("printf '[submodule \"lib\"]\\n\\tpath = lib\\n\\turl = "
	    "https://example.invalid/lib.git\\n' >.gitmodules && "
	    "git add .gitmodules && git update-index --add --cacheinfo "
	    "160000,1111111111111111111111111111111111111111,lib && "
	    COMMIT " -m sub");
	ck_assert_msg(provision("main", NULL, id) == 0, "%s",
	    lease_store_errmsg(rt.s));
	ws = workspace(id);
	/* seeded: the submodule's directory is there, empty */
	p = lt_fmt("%s/%s", ws, "lib");
	ck_assert_int_eq(lstat(p, &sb), 0);
	ck_assert(S_ISDIR(sb.st_mode));
	ck_assert_int_eq(rmdir(p), 0);	/* empty */
	free(p);
	ck_assert_int_eq(has_object(ws, "1111111111111111111111111111111111111111"),
	    0);
	expect_out(ws, "git ls-files -s lib | cut -c1-6", "160000\n");
	free(ws);
}
END_TEST

START_TEST(test_seed_input_lfs)
{
	static const char ptr[] = "version https://git-lfs.github.com/spec/v1\n"
	    "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2"
	    "ca24d17e2393\nsize 12345\n";
	char id[LEASE_ID_LEN + 1], *ws, *p, *body;

	lt_write(rt.repo, ".gitattributes",
	    "*.bin filter=lfs diff=lfs merge=lfs -text\n");
	lt_write(rt.repo, "model.bin", ptr);
	in_repo("git add -A && " COMMIT " -m lfs");
	ck_assert_msg(provision("main", NULL, id) == 0, "%s",
	    lease_store_errmsg(rt.s));
	ws = workspace(id);
	/* seeded as the pointers: no filter runs, nothing is fetched */
	p = lt_fmt("%s/%s", ws, "model.bin");
	body = lt_slurp(p, NULL);
	ck_assert_str_eq(body, ptr);
	free(body);
	free(p);
	expect_out(ws, "git status --porcelain", "");
	free(ws);
}
END_TEST

START_TEST(test_seed_input_sparse_checkout)
{
	char id[LEASE_ID_LEN + 1], *ws, *p, *body;

	/* the operator's checkout holds src/ only */
	in_repo("git sparse-checkout set --no-cone '/src/'");
	p = lt_fmt("%s/%s", rt.repo, "README");
	ck_assert_int_eq(access(p, F_OK), -1);
	free(p);
	ck_assert_msg(provision("main", NULL, id) == 0, "%s",
	    lease_store_errmsg(rt.s));
	ws = workspace(id);
	/* seeded with the whole base tree, from the objects */
	p = lt_fmt("%s/%s", ws, "README");
	body = lt_slurp(p, NULL);
	ck_assert_str_eq(body, "hello again\n");
	free(body);
	free(p);
	p = lt_fmt("%s/%s", ws, ".git/info/sparse-checkout");
	ck_assert_int_eq(access(p, F_OK), -1);
	free(p);
	expect_out(ws, "git status --porcelain", "");
	free(ws);
}
END_TEST

START_TEST(test_seed_input_no_branch)
{
	char id[LEASE_ID_LEN + 1], hex[64] = "", *ws, *out, *want;
	struct lease_record r;

	/* a commit on no branch (only the reflog knows it) */
	in_repo("git checkout -q --detach && echo x >x.txt && git add x.txt && "
	    COMMIT " -m detached");
	out = in_dir(rt.repo, "git rev-parse HEAD && git checkout -q main");
	ck_assert_int_eq(sscanf(out, "%63s", hex), 1);
	free(out);
	ck_assert_msg(provision(hex, NULL, id) == 0, "%s",
	    lease_store_errmsg(rt.s));
	ck_assert_int_eq(lease_record_get(rt.s, id, &r), 0);
	ck_assert_str_eq(r.base, hex);
	ck_assert_ptr_null(r.base_ref);	/* apply asks for --into BRANCH */
	lease_record_clear(&r);
	ws = workspace(id);
	want = lt_fmt("%s%s", hex, "\n");
	expect_out(ws, "git rev-parse HEAD", want);
	free(want);
	expect_out(ws, "cat x.txt", "x\n");
	free(ws);
}
END_TEST

Suite *seed_suite(void);

Suite *
seed_suite(void)
{
	Suite *s = suite_create("seed");
	TCase *tc = tcase_create("Core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_seed_history);
	tcase_add_test(tc, test_seed_tree_sized);
	tcase_add_test(tc, test_seed_packed);
	suite_add_tcase(s, tc);
	tc = tcase_create("Input");
	tcase_add_checked_fixture(tc, rt_up, rt_down);
	/* a deadline, not a measure: the 2 GB file is real work, and a
	 * loaded 2-core machine does it several times slower */
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_seed_input_big_file);
	tcase_add_test(tc, test_seed_input_submodule);
	tcase_add_test(tc, test_seed_input_lfs);
	tcase_add_test(tc, test_seed_input_sparse_checkout);
	tcase_add_test(tc, test_seed_input_no_branch);
	suite_add_tcase(s, tc);
	return s;
}
