/*
 * test_result.c: results end to end on real repositories in temp
 * directories (SPEC 7, 10.4-10.6): sandboxed leases provisioned by
 * lease_provision_git, an "agent" editing each workspace, lease_result_finish
 * materialising or quarantining, and the real corral binary for review,
 * reject and apply. Two results from one base land only in their own review
 * worktrees; one is rejected, the other applied; the operator's checkout and
 * index are byte-identical before and after; a checked-out target is refused
 * with the merge hint; an advanced target sends the lease back to review (or
 * refuses when the patch no longer applies); an edited review worktree makes
 * apply refuse; hunk selection; quarantine; escapes; checks.
 */
#include <fcntl.h>
#include <git2.h>
#include <jansson.h>
#include <stdarg.h>

#include "lease/result/result.h"
#include "lease_test.h"

static char *tmp, *repo, *state;
static char c[3][41];
static struct lease_store *st;
static struct lease_result_policy pol;
static int checks_run;

static void
setup(void)
{
	char *db;

	ck_assert_int_ge(lease_git_init(), 0);
	tmp = cu_tmpdir("result");
	repo = lt_make_repo(tmp, c);
	state = lt_fmt("%s/%s", tmp, "state");
	ck_assert_int_eq(mkdir(state, 0700), 0);
	db = lt_fmt("%s/%s", state, "corral.db");
	ck_assert_int_eq(lease_store_open(&st, db), 0);
	free(db);
	ck_assert_int_eq(setenv("CORRAL_STATE_DIR", state, 1), 0);
	unsetenv("NO_COLOR");
	lease_result_policy_defaults(&pol);
	checks_run = 0;
}

static void
teardown(void)
{
	lease_store_close(st);
	cu_rmrf(tmp);
	free(tmp);
	free(repo);
	free(state);
	lease_git_shutdown();
}

/* A provisioned, running sandboxed lease from main. */
static void
new_lease(char id[LEASE_ID_LEN + 1], const char *name)
{
	struct lease_spec spec;
	struct lease_lock *lk;

	memset(&spec, 0, sizeof spec);
	spec.name = name;
	spec.mode = LEASE_MODE_SANDBOXED;
	spec.adapter = "bwrap";
	spec.isolation = "bwrap";
	ck_assert_int_eq(lease_record_insert(st, &spec, id), 0);
	ck_assert_int_eq(lease_lock_acquire(state, 5000, &lk), 0);
	ck_assert_msg(lease_provision_git(st, lk, state, id, repo, "main",
	    NULL) == 0, "provision: %s", lease_store_errmsg(st));
	lease_lock_release(lk);
	ck_assert_int_eq(lease_record_transition(st, id, LEASE_EV_START,
	    "test", NULL), 0);
}

static char *
ws_path(const char *id, const char *rel)
{
	char *ws = lease_path_workspace(state, id), *p;

	p = rel != NULL ? lt_fmt("%s/%s", ws, rel) : strdup(ws);
	free(ws);
	return p;
}

static void
agent_write(const char *id, const char *rel, const char *text)
{
	char *ws = ws_path(id, NULL);

	lt_write(ws, rel, text);
	free(ws);
}

/* A check runner standing in for the exec zone: reads the copy. */
static int
fake_check(const struct lease_check_run *run, struct lease_check_outcome *oc,
    void *ud)
{
	char *p = lt_fmt("%s/%s", run->dir, "README"), *text;
	size_t len = 0;

	(void)ud;
	checks_run++;
	text = cu_read_file(p, &len);
	free(p);
	ck_assert_ptr_nonnull(text);
	free(text);
	oc->log_len = (size_t)snprintf(run->log, run->log_max,
	    "ran %s: README %zu bytes, epoch %lld\n", run->check->name, len,
	    (long long)run->source_date_epoch);
	oc->status = strcmp(run->check->name, "failing") == 0 ?
	    LEASE_CHECK_FAIL : LEASE_CHECK_PASS;
	oc->exit_code = oc->status == LEASE_CHECK_PASS ? 0 : 2;
	oc->duration_ms = 5;
	return 0;
}

static int
finish(const char *id, const char *fail)
{
	struct lease_result_opts o;

	memset(&o, 0, sizeof o);
	o.policy = &pol;
	o.run_check = fake_check;
	o.fail_reason = fail;
	return lease_result_finish(st, state, id, &o);
}

static void
finish_ok(const char *id)
{
	int rc = finish(id, NULL);

	ck_assert_msg(rc == 0, "finish %s: %d %s", id, rc,
	    lease_store_errmsg(st));
}

/* Run the real corral with printf-style arguments; stdout+stderr. */
static char *
corral(int *status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static char *
corral(int *status, const char *fmt, ...)
{
	char args[2048], cmd[4096];
	char *bin = cu_corral_bin();
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof args, fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", bin, args);
	free(bin);
	return cu_run(cmd, status);
}

static void
corral_ok(const char *fmt, const char *id)
{
	int status;
	char *out = corral(&status, fmt, id);

	ck_assert_msg(status == 0, "corral %s: exit %d:\n%s", id, status, out);
	free(out);
}

static struct lease_record
record(const char *id)
{
	struct lease_record r;

	ck_assert_int_eq(lease_record_get(st, id, &r), 0);
	return r;
}

static json_t *
result_of(const char *id)
{
	struct lease_record r = record(id);
	json_t *j = json_loads(r.result, 0, NULL);

	ck_assert_ptr_nonnull(j);
	lease_record_clear(&r);
	return j;
}

static const char *
jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* The operator's checkout, index and HEAD, hashed. */
static char *
checkout_hash(void)
{
	char cmd[2048];

	snprintf(cmd, sizeof cmd, "cd '%s' && { find . -path ./.git -prune "
	    "-o -print0 | sort -z | xargs -0 stat -c '%%n %%a %%s' ; find . "
	    "-path ./.git -prune -o -type f -print0 | sort -z | xargs -0 "
	    "sha256sum; sha256sum .git/index .git/HEAD .git/refs/heads/main; "
	    "}", repo);
	return cu_run(cmd, NULL);
}

static bool
exists(const char *path)
{
	struct stat sb;

	return lstat(path, &sb) == 0;
}

static char *
wt_file(const char *id, const char *rel)
{
	char *wt = lease_path_worktree(state, id), *p = lt_fmt("%s/%s", wt,
	    rel);

	free(wt);
	return p;
}

/* A branch at commit at that nobody has checked out. */
static void
make_branch_at(const char *name, const char *at)
{
	git_repository *r;
	git_reference *ref;
	git_commit *cm;
	git_oid oid;

	ck_assert_int_eq(git_repository_open(&r, repo), 0);
	git_oid_fromstr(&oid, at);
	ck_assert_int_eq(git_commit_lookup(&cm, r, &oid), 0);
	ck_assert_int_eq(git_branch_create(&ref, r, name, cm, 0), 0);
	git_reference_free(ref);
	git_commit_free(cm);
	git_repository_free(r);
}

static void
make_branch(const char *name)
{
	make_branch_at(name, c[2]);
}

/* The contents of path at the tip of branch (malloc'd). */
static char *
file_at(const char *branch, const char *path)
{
	git_repository *r;
	git_object *o;
	char spec[512], *text;

	snprintf(spec, sizeof spec, "refs/heads/%s:%s", branch, path);
	ck_assert_int_eq(git_repository_open(&r, repo), 0);
	ck_assert_int_eq(git_revparse_single(&o, r, spec), 0);
	text = strndup(git_blob_rawcontent((git_blob *)o),
	    (size_t)git_blob_rawsize((git_blob *)o));
	git_object_free(o);
	git_repository_free(r);
	return text;
}

/* A commit on branch (not checked out) changing path; out gets its ID. */
static void
commit_on(const char *branch, const char *path, const char *text,
    char out[41])
{
	git_repository *r;
	git_commit *parent;
	git_tree *tree, *nt;
	git_index *idx;
	git_index_entry e;
	git_signature *sig;
	git_oid tip, blob, tid, cid;
	char ref[256];

	snprintf(ref, sizeof ref, "refs/heads/%s", branch);
	ck_assert_int_eq(git_repository_open(&r, repo), 0);
	ck_assert_int_eq(git_reference_name_to_id(&tip, r, ref), 0);
	ck_assert_int_eq(git_commit_lookup(&parent, r, &tip), 0);
	ck_assert_int_eq(git_commit_tree(&tree, parent), 0);
	ck_assert_int_eq(git_index_new(&idx), 0);
	ck_assert_int_eq(git_index_read_tree(idx, tree), 0);
	ck_assert_int_eq(git_blob_create_from_buffer(&blob, r, text,
	    strlen(text)), 0);
	memset(&e, 0, sizeof e);
	e.mode = 0100644;
	e.path = path;
	e.id = blob;
	ck_assert_int_eq(git_index_add(idx, &e), 0);
	ck_assert_int_eq(git_index_write_tree_to(&tid, idx, r), 0);
	ck_assert_int_eq(git_tree_lookup(&nt, r, &tid), 0);
	ck_assert_int_eq(git_signature_new(&sig, "Op", "op@example.com",
	    1700000100, 0), 0);
	ck_assert_int_eq(git_commit_create_v(&cid, r, ref, sig, sig, NULL,
	    "advance", nt, 1, parent), 0);
	git_oid_tostr(out, 41, &cid);
	git_signature_free(sig);
	git_tree_free(nt);
	git_index_free(idx);
	git_tree_free(tree);
	git_commit_free(parent);
	git_repository_free(r);
}

static void
branch_tip(const char *branch, char out[41])
{
	git_repository *r;
	git_oid oid;
	char ref[256];

	snprintf(ref, sizeof ref, "refs/heads/%s", branch);
	ck_assert_int_eq(git_repository_open(&r, repo), 0);
	ck_assert_int_eq(git_reference_name_to_id(&oid, r, ref), 0);
	git_oid_tostr(out, 41, &oid);
	git_repository_free(r);
}

static void
parent_of(const char *commit, char out[41])
{
	git_repository *r;
	git_commit *cm;
	git_oid oid;

	ck_assert_int_eq(git_repository_open(&r, repo), 0);
	git_oid_fromstr(&oid, commit);
	ck_assert_int_eq(git_commit_lookup(&cm, r, &oid), 0);
	git_oid_tostr(out, 41, git_commit_parent_id(cm, 0));
	git_commit_free(cm);
	git_repository_free(r);
}

/* ---- the SPEC 10 flow ---------------------------------------------------- */

START_TEST(test_result_two_leases)
{
	char a[LEASE_ID_LEN + 1], b[LEASE_ID_LEN + 1], tip[41], par[41];
	char *before, *after, *out, *p, *text;
	struct lease_record r;
	json_t *ra, *rb;
	int status;

	before = checkout_hash();
	new_lease(a, "alpha");
	new_lease(b, "beta");
	agent_write(a, "README", "hello from alpha\n");
	agent_write(b, "src/new.c", "int beta;\n");
	finish_ok(a);
	finish_ok(b);

	/* each result only in its own review worktree */
	p = wt_file(a, "README");
	text = lt_slurp(p, NULL);
	ck_assert_str_eq(text, "hello from alpha\n");
	free(text);
	free(p);
	p = wt_file(a, "src/new.c");
	ck_assert(!exists(p));
	free(p);
	p = wt_file(b, "src/new.c");
	text = lt_slurp(p, NULL);
	ck_assert_str_eq(text, "int beta;\n");
	free(text);
	free(p);
	p = wt_file(b, "README");
	text = lt_slurp(p, NULL);
	ck_assert_str_eq(text, "hello again\n");
	free(text);
	free(p);
	ra = result_of(a);
	rb = result_of(b);
	ck_assert_str_eq(jstr(ra, "status"), "ready");
	ck_assert_str_eq(jstr(ra, "parent"), c[2]);
	ck_assert_str_ne(jstr(ra, "commit"), jstr(rb, "commit"));
	parent_of(jstr(ra, "commit"), par);
	ck_assert_str_eq(par, c[2]);
	r = record(a);
	ck_assert_int_eq(r.state, LEASE_STATE_RESULT_READY);
	lease_record_clear(&r);

	/* the commit is the corral's, with the lease ID in its message */
	out = corral(&status, "review %s", a);
	ck_assert_msg(status == 0, "review: %s", out);
	ck_assert_ptr_nonnull(strstr(out, "README"));
	ck_assert_ptr_nonnull(strstr(out, "+hello from alpha"));
	ck_assert_ptr_nonnull(strstr(out, ":1:1]"));
	free(out);
	corral_ok("review %s", b);

	/* reject alpha: runtime gone, result and history kept */
	corral_ok("reject %s", a);
	r = record(a);
	ck_assert_int_eq(r.state, LEASE_STATE_REJECTED);
	ck_assert_int_eq(r.cleanup, LEASE_CLEANUP_CONFIRMED);
	ck_assert(!exists(r.worktree));
	ck_assert(!exists(r.workspace));
	lease_record_clear(&r);
	p = lease_path_result(state, a);
	text = lt_fmt("%s/%s", p, "patch");
	ck_assert(exists(text));
	free(text);
	text = lt_fmt("%s/%s", p, "manifest.json");
	ck_assert(exists(text));
	free(text);
	free(p);
	ck_assert_int_eq(lease_receipt_verify(st, a, NULL, NULL), 0);

	/* main is checked out in the operator's checkout: refused, hint */
	out = corral(&status, "apply %s", b);
	ck_assert_int_eq(status, 1);
	ck_assert_ptr_nonnull(strstr(out, "checked out"));
	p = lt_fmt("git merge --ff-only corral/%s%s", b, "");
	ck_assert_ptr_nonnull(strstr(out, p));
	free(p);
	/* "cd DIR && ...", without a trailing slash */
	p = lt_fmt("cd %s%s && git merge", repo, "");
	ck_assert_msg(strstr(out, p) != NULL, "%s", out);
	free(p);
	free(out);
	r = record(b);
	ck_assert_int_eq(r.state, LEASE_STATE_RESULT_READY);
	lease_record_clear(&r);

	/* into a branch nobody has checked out: fast-forward */
	make_branch("side");
	corral_ok("apply %s --into side", b);
	branch_tip("side", tip);
	ck_assert_str_eq(tip, jstr(rb, "commit"));
	r = record(b);
	ck_assert_int_eq(r.state, LEASE_STATE_APPLIED);
	ck_assert_int_eq(r.cleanup, LEASE_CLEANUP_CONFIRMED);
	ck_assert(!exists(r.worktree));
	ck_assert(!exists(r.workspace));
	lease_record_clear(&r);
	ck_assert_int_eq(lease_receipt_verify(st, b, NULL, NULL), 0);

	/* the operator's checkout and index never changed */
	after = checkout_hash();
	ck_assert_str_eq(before, after);
	branch_tip("main", tip);
	ck_assert_str_eq(tip, c[2]);
	free(before);
	free(after);
	json_decref(ra);
	json_decref(rb);
}
END_TEST

START_TEST(test_result_unreviewed_and_stale)
{
	char id[LEASE_ID_LEN + 1];
	char *out, *p;
	int status;

	make_branch("side");
	new_lease(id, NULL);
	agent_write(id, "README", "changed\n");
	finish_ok(id);
	out = corral(&status, "apply %s --into side", id);
	ck_assert_int_eq(status, 1);
	ck_assert_ptr_nonnull(strstr(out, "not been reviewed"));
	free(out);
	corral_ok("review %s", id);
	/* the reviewer edits the review worktree afterwards */
	p = wt_file(id, "src/a.c");
	ck_assert_int_eq(cu_write_file(p, "int a = 2;\n", 11), 0);
	free(p);
	out = corral(&status, "apply %s --into side", id);
	ck_assert_int_eq(status, 1);
	ck_assert_ptr_nonnull(strstr(out, "changed after review"));
	free(out);
	out = corral(&status, "review %s", id);
	ck_assert_int_eq(status, 1);
	ck_assert_ptr_nonnull(strstr(out, "not recorded as reviewed"));
	free(out);
	/* restored: apply goes through */
	p = wt_file(id, "src/a.c");
	ck_assert_int_eq(cu_write_file(p, "int a;\n", 7), 0);
	free(p);
	corral_ok("apply %s --into side", id);
}
END_TEST

START_TEST(test_result_untracked_in_worktree)
{
	char id[LEASE_ID_LEN + 1];
	char *out, *p;
	int status;

	make_branch("side");
	new_lease(id, NULL);
	agent_write(id, "README", "changed\n");
	finish_ok(id);
	corral_ok("review %s", id);
	p = wt_file(id, "extra.txt");
	ck_assert_int_eq(cu_write_file(p, "x\n", 2), 0);
	free(p);
	out = corral(&status, "apply %s --into side", id);
	ck_assert_int_eq(status, 1);
	ck_assert_ptr_nonnull(strstr(out, "extra.txt"));
	free(out);
}
END_TEST

START_TEST(test_result_advanced_target)
{
	char id[LEASE_ID_LEN + 1], adv[41], tip[41], par[41];
	json_t *r0, *r1;
	char *out;
	int status;

	make_branch("side");
	new_lease(id, NULL);
	agent_write(id, "README", "hello again\nfrom the agent\n");
	finish_ok(id);
	corral_ok("review %s", id);
	r0 = result_of(id);
	/* the target moves on, elsewhere in the tree */
	commit_on("side", "src/b.c", "int b = 42;\n", adv);
	out = corral(&status, "apply %s --into side", id);
	ck_assert_int_eq(status, 1);
	ck_assert_ptr_nonnull(strstr(out, "review it again"));
	free(out);
	branch_tip("side", tip);
	ck_assert_str_eq(tip, adv);	/* untouched */
	r1 = result_of(id);
	ck_assert_str_eq(jstr(r1, "parent"), adv);
	ck_assert_str_ne(jstr(r1, "commit"), jstr(r0, "commit"));
	ck_assert_str_eq(jstr(r1, "via"), "rebased");
	ck_assert(json_is_null(json_object_get(r1, "reviewed")));
	parent_of(jstr(r1, "commit"), par);
	ck_assert_str_eq(par, adv);
	/* unreviewed again */
	out = corral(&status, "apply %s --into side", id);
	ck_assert_int_eq(status, 1);
	ck_assert_ptr_nonnull(strstr(out, "not been reviewed"));
	free(out);
	corral_ok("review %s", id);
	corral_ok("apply %s --into side", id);
	branch_tip("side", tip);
	ck_assert_str_eq(tip, jstr(r1, "commit"));
	json_decref(r0);
	json_decref(r1);
}
END_TEST

START_TEST(test_result_no_longer_applies)
{
	char id[LEASE_ID_LEN + 1], adv[41], tip[41];
	struct lease_record r;
	json_t *r0, *r1;
	char *out;
	int status;

	make_branch("side");
	new_lease(id, NULL);
	agent_write(id, "README", "agent's line\n");
	finish_ok(id);
	corral_ok("review %s", id);
	r0 = result_of(id);
	commit_on("side", "README", "operator's line\n", adv);
	out = corral(&status, "apply %s --into side", id);
	ck_assert_int_eq(status, 1);
	ck_assert_ptr_nonnull(strstr(out, "no longer applies"));
	free(out);
	branch_tip("side", tip);
	ck_assert_str_eq(tip, adv);
	r1 = result_of(id);
	ck_assert_str_eq(jstr(r1, "commit"), jstr(r0, "commit"));
	r = record(id);
	ck_assert_int_eq(r.state, LEASE_STATE_RESULT_READY);
	lease_record_clear(&r);
	json_decref(r0);
	json_decref(r1);
}
END_TEST

START_TEST(test_result_checked_out_in_worktree)
{
	char id[LEASE_ID_LEN + 1];
	char *wt = lt_fmt("%s/%s", tmp, "side-wt"), *out;
	git_repository *r;
	git_worktree *w;
	git_reference *ref;
	git_worktree_add_options o;
	int status;

	make_branch("side");
	ck_assert_int_eq(git_repository_open(&r, repo), 0);
	ck_assert_int_eq(git_branch_lookup(&ref, r, "side", GIT_BRANCH_LOCAL),
	    0);
	git_worktree_add_options_init(&o, GIT_WORKTREE_ADD_OPTIONS_VERSION);
	o.ref = ref;
	ck_assert_int_eq(git_worktree_add(&w, r, "side-wt", wt, &o), 0);
	git_worktree_free(w);
	git_reference_free(ref);
	git_repository_free(r);
	new_lease(id, NULL);
	agent_write(id, "README", "x\n");
	finish_ok(id);
	corral_ok("review %s", id);
	out = corral(&status, "apply %s --into side", id);
	ck_assert_int_eq(status, 1);
	ck_assert_ptr_nonnull(strstr(out, wt));
	ck_assert_ptr_nonnull(strstr(out, "git merge --ff-only corral/"));
	free(out);
	free(wt);
}
END_TEST

/* ---- hunks --------------------------------------------------------------- */

START_TEST(test_result_hunks)
{
	char id[LEASE_ID_LEN + 1], base[41], tip[41];
	git_repository *r;
	char lines[2048], *out, *text, *p, hid[64];
	json_t *doc, *diff, *h;
	int i, status;
	size_t n = 0;

	/* a long file in a new base, so two far edits are two hunks */
	for (i = 1; i <= 30; i++)
		n += (size_t)snprintf(lines + n, sizeof lines - n, "line %d\n",
		    i);
	lt_write(repo, "long.txt", lines);
	ck_assert_int_eq(git_repository_open(&r, repo), 0);
	lt_commit_all(r, "long", base);
	git_repository_free(r);
	make_branch_at("side", base);
	new_lease(id, NULL);
	text = strdup(lines);
	p = strstr(text, "line 2\n");
	memcpy(p, "LINE 2\n", 7);
	p = strstr(text, "line 28\n");
	memcpy(p, "LINE 28\n", 8);
	agent_write(id, "long.txt", text);
	free(text);
	finish_ok(id);
	out = corral(&status, "review %s --json", id);
	ck_assert_int_eq(status, 0);
	doc = json_loads(out, 0, NULL);
	ck_assert_ptr_nonnull(doc);
	free(out);
	diff = json_object_get(doc, "diff");
	ck_assert_int_eq(json_array_size(diff), 1);
	ck_assert_int_eq(json_array_size(json_object_get(json_array_get(diff,
	    0), "hunks")), 2);
	h = json_array_get(json_object_get(json_array_get(diff, 0), "hunks"),
	    1);
	snprintf(hid, sizeof hid, "%s", jstr(h, "id"));
	json_decref(doc);
	/* a wrong digest or a hunk that does not exist is refused */
	out = corral(&status, "apply %s --into side --hunks 00000000:1:1", id);
	ck_assert_int_eq(status, 1);
	ck_assert_ptr_nonnull(strstr(out, "another patch"));
	free(out);
	out = corral(&status, "apply %s --into side --hunks %.8s:1:9", id,
	    hid);
	ck_assert_int_eq(status, 1);
	ck_assert_ptr_nonnull(strstr(out, "no hunk 9"));
	free(out);
	/* only the second hunk: a new commit, verified, then applied */
	out = corral(&status, "apply %s --into side --hunks %s", id, hid);
	ck_assert_msg(status == 0, "apply --hunks: %s", out);
	free(out);
	doc = result_of(id);
	ck_assert_str_eq(jstr(doc, "via"), "hunks");
	ck_assert_str_eq(jstr(doc, "reviewed"), jstr(doc, "commit"));
	branch_tip("side", tip);
	ck_assert_str_eq(tip, jstr(doc, "commit"));
	text = file_at("side", "long.txt");
	ck_assert_ptr_nonnull(strstr(text, "line 2\n"));
	ck_assert_ptr_nonnull(strstr(text, "LINE 28\n"));
	ck_assert_ptr_null(strstr(text, "LINE 2\n"));
	free(text);
	ck_assert_int_eq(json_array_size(json_object_get(doc, "history")), 1);
	json_decref(doc);
}
END_TEST

/* ---- quarantine, escapes, holder_lost ------------------------------------ */

static bool
has_esc(const char *s)
{
	return strchr(s, '\x1b') != NULL || strchr(s, '\x07') != NULL;
}

START_TEST(test_result_quarantine)
{
	char id[LEASE_ID_LEN + 1], tip[41];
	struct lease_record r;
	char *p, *out, *evil;
	json_t *res;
	int rc, status;

	new_lease(id, "q");
	p = ws_path(id, "link");
	ck_assert_int_eq(symlink("/etc/passwd", p), 0);
	free(p);
	evil = "osc\x1b]52;c;aGk=\x07title\x1b]0;pwned\x07";
	agent_write(id, evil, "x\n");
	agent_write(id, "README", "fine change\n");
	rc = finish(id, NULL);
	ck_assert_int_eq(rc, LEASE_EINVALID);
	r = record(id);
	ck_assert_int_eq(r.state, LEASE_STATE_FAILED);
	ck_assert_str_eq(r.failed_reason, "result_invalid");
	lease_record_clear(&r);
	res = result_of(id);
	ck_assert_str_eq(jstr(res, "status"), "quarantined");
	ck_assert(json_is_null(json_object_get(res, "commit")));
	json_decref(res);
	/* nothing materialised: corral/<id> is still at the base */
	p = lt_fmt("corral/%s%s", id, "");
	branch_tip(p, tip);
	free(p);
	ck_assert_str_eq(tip, c[2]);
	p = lease_path_result(state, id);
	out = lt_fmt("%s/%s", p, "reasons.json");
	ck_assert(exists(out));
	free(out);
	free(p);

	out = corral(&status, "review %s", id);
	ck_assert_ptr_nonnull(strstr(out, "symlink"));
	ck_assert_ptr_nonnull(strstr(out, "control_char"));
	ck_assert_ptr_nonnull(strstr(out, "\\x1b]52;c;"));
	ck_assert_msg(!has_esc(out), "raw escapes in review:\n%s", out);
	free(out);
	out = corral(&status, "review %s --json", id);
	ck_assert(!has_esc(out));
	free(out);
	out = corral(&status, "show %s", id);
	ck_assert_int_eq(status, 0);
	ck_assert_msg(!has_esc(out), "raw escapes in show:\n%s", out);
	free(out);
	out = corral(&status, "apply %s", id);
	ck_assert_int_eq(status, 1);
	free(out);
	corral_ok("reject %s", id);
	r = record(id);
	ck_assert_int_eq(r.state, LEASE_STATE_FAILED);
	ck_assert_int_eq(r.cleanup, LEASE_CLEANUP_CONFIRMED);
	ck_assert(!exists(r.workspace));
	lease_record_clear(&r);
	p = lease_path_result(state, id);
	ck_assert(exists(p));	/* the quarantine is kept */
	free(p);
}
END_TEST

START_TEST(test_result_escaped_content)
{
	char id[LEASE_ID_LEN + 1];
	char *out;
	int status;

	new_lease(id, NULL);
	agent_write(id, "notes.txt", "clip \x1b]52;c;aGVsbG8=\x07 title "
	    "\x1b]0;pwned\x07 bidi \xe2\x80\xae end\n");
	finish_ok(id);
	out = corral(&status, "review %s", id);
	ck_assert_int_eq(status, 0);
	ck_assert_msg(!has_esc(out), "raw escapes:\n%s", out);
	ck_assert_ptr_nonnull(strstr(out, "\\x1b]52;c;aGVsbG8="));
	ck_assert_ptr_nonnull(strstr(out, "\\x1b]0;pwned"));
	ck_assert_ptr_null(strstr(out, "\xe2\x80\xae"));
	free(out);
	out = corral(&status, "review %s --json", id);
	ck_assert_int_eq(status, 0);
	ck_assert(!has_esc(out));
	ck_assert_msg(strstr(out, "\\u001B]52") != NULL, "%s", out);
	free(out);
	out = corral(&status, "show %s", id);
	ck_assert(!has_esc(out));
	free(out);
}
END_TEST

START_TEST(test_result_holder_lost)
{
	char id[LEASE_ID_LEN + 1];
	struct lease_record r;
	json_t *res, *reasons;
	int rc;

	new_lease(id, NULL);
	agent_write(id, "README", "half done\n");
	rc = finish(id, "holder_lost");
	ck_assert_int_eq(rc, LEASE_EINVALID);
	r = record(id);
	ck_assert_int_eq(r.state, LEASE_STATE_FAILED);
	ck_assert_str_eq(r.failed_reason, "holder_lost");
	ck_assert(exists(r.workspace));	/* kept until reject or gc */
	lease_record_clear(&r);
	res = result_of(id);
	ck_assert_str_eq(jstr(res, "status"), "quarantined");
	reasons = json_object_get(res, "reasons");
	ck_assert_str_eq(jstr(json_array_get(reasons, 0), "reason"),
	    "lease_failed");
	ck_assert_str_eq(jstr(json_array_get(reasons, 0), "detail"),
	    "holder_lost");
	/* what the agent had done is there to inspect */
	ck_assert_str_eq(jstr(res, "summary"),
	    "1 file changed, 1 insertion(+), 1 deletion(-)");
	json_decref(res);
	/* reconciliation may call it again: still quarantined */
	ck_assert_int_eq(finish(id, "holder_lost"), LEASE_EINVALID);
}
END_TEST

/* ---- checks, states ------------------------------------------------------ */

START_TEST(test_result_checks)
{
	char *make[] = { "make", "test", NULL };
	char *lint[] = { "./scripts/lint.sh", NULL };
	char *bad[] = { "false", NULL };
	struct lease_check checks[] = {
		{ "make", make, NULL }, { "lint", lint, NULL },
		{ "failing", bad, NULL },
	};
	char id[LEASE_ID_LEN + 1];
	json_t *res, *a, *entries, *e;
	size_t i, nchk = 0;

	pol.checks = checks;
	pol.nchecks = 3;
	new_lease(id, NULL);
	agent_write(id, "Makefile", "test:\n\ttrue\n");
	agent_write(id, "README", "x\n");
	finish_ok(id);
	ck_assert_int_eq(checks_run, 3);
	res = result_of(id);
	a = json_object_get(res, "checks");
	ck_assert_int_eq(json_array_size(a), 3);
	ck_assert_str_eq(jstr(json_array_get(a, 0), "name"), "make");
	ck_assert_str_eq(jstr(json_array_get(a, 0), "status"), "pass");
	ck_assert(json_is_false(json_object_get(json_array_get(a, 0),
	    "independent")));
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(
	    json_array_get(a, 0), "changed_inputs"), 0)), "Makefile");
	ck_assert(json_is_true(json_object_get(json_array_get(a, 1),
	    "independent")));
	ck_assert_str_eq(jstr(json_array_get(a, 2), "status"), "fail");
	/* flags: the Makefile is a build file and a check input */
	ck_assert_int_ge(json_array_size(json_object_get(res, "flags")), 1);
	json_decref(res);
	ck_assert_int_eq(lease_receipt_entries(st, id, &entries), 0);
	json_array_foreach(entries, i, e) {
		if (strcmp(jstr(e, "kind"), "check") != 0)
			continue;
		nchk++;
		ck_assert_ptr_nonnull(strstr(jstr(json_object_get(e, "fields"),
		    "log"), "README 2 bytes"));
	}
	ck_assert_uint_eq(nchk, 3);
	json_decref(entries);
}
END_TEST

START_TEST(test_result_states)
{
	char id[LEASE_ID_LEN + 1], t[LEASE_ID_LEN + 1];
	struct lease_spec spec;
	struct lease_apply_outcome out;
	json_t *doc = NULL;

	new_lease(id, NULL);
	/* live: no reject, no review yet */
	ck_assert_int_eq(lease_result_reject(st, state, id), LEASE_EBUSY);
	ck_assert_int_eq(lease_result_review(st, state, id, 0, &doc),
	    LEASE_ENORESULT);
	ck_assert_ptr_null(doc);
	finish_ok(id);
	/* idempotent */
	ck_assert_int_eq(finish(id, NULL), 0);
	ck_assert_int_eq(checks_run, 0);
	ck_assert_int_eq(lease_result_reject(st, state, id), 0);
	ck_assert_int_eq(lease_result_reject(st, state, id), 0);
	ck_assert_int_eq(lease_apply(st, state, id, NULL, &out),
	    LEASE_ENORESULT);
	/* trusted_local has no result (SPEC 3) */
	memset(&spec, 0, sizeof spec);
	spec.mode = LEASE_MODE_TRUSTED_LOCAL;
	spec.adapter = "trusted_local";
	ck_assert_int_eq(lease_record_insert(st, &spec, t), 0);
	ck_assert_int_eq(lease_record_transition(st, t, LEASE_EV_START, "x",
	    NULL), 0);
	ck_assert_int_eq(finish(t, NULL), -EINVAL);
	ck_assert_int_eq(lease_result_finish(st, state, "nope", NULL),
	    LEASE_EBADID);
}
END_TEST

static int teardown_calls;

/* The callback runs after the journal says rejected, before teardown. */
static int
before_teardown(const char *id, void *ud)
{
	struct lease_record r = record(id);
	char *ws = ws_path(id, NULL);

	(void)ud;
	ck_assert_int_eq(r.state, LEASE_STATE_REJECTED);
	ck_assert(exists(ws));
	lease_record_clear(&r);
	free(ws);
	teardown_calls++;
	return 0;
}

START_TEST(test_result_reject_callback)
{
	char id[LEASE_ID_LEN + 1];
	struct lease_record r;

	new_lease(id, NULL);
	finish_ok(id);
	teardown_calls = 0;
	ck_assert_int_eq(lease_result_reject_ex(st, state, id,
	    before_teardown, NULL), 0);
	ck_assert_int_eq(teardown_calls, 1);
	r = record(id);
	ck_assert_int_eq(r.cleanup, LEASE_CLEANUP_CONFIRMED);
	lease_record_clear(&r);
}
END_TEST

/* A holder that moved to result_ready itself still gets its result. */
/* A tampered patch or manifest: a named refusal, nothing applied (SPEC 9.4). */
START_TEST(test_result_tampered)
{
	char id[LEASE_ID_LEN + 1], tip0[41], tip[41];
	char *rdir, *patch, *man, *out, *text, *hex;
	struct lease_record r;
	size_t len;
	int status;

	make_branch("side");
	branch_tip("side", tip0);
	new_lease(id, NULL);
	agent_write(id, "README", "tampered later\n");
	finish_ok(id);
	corral_ok("review %s", id);
	rdir = lease_path_result(state, id);
	patch = lt_fmt("%s/%s", rdir, "patch");
	man = lt_fmt("%s/%s", rdir, "manifest.json");
	text = cu_read_file(patch, &len);
	ck_assert_ptr_nonnull(text);
	/* truncated */
	ck_assert_int_eq(truncate(patch, (off_t)len - 3), 0);
	out = corral(&status, "apply %s --into side", id);
	ck_assert_int_eq(status, 1);
	ck_assert_ptr_nonnull(strstr(out, "patch does not match the digest"));
	free(out);
	out = corral(&status, "review %s", id);
	ck_assert_int_ne(status, 0);
	ck_assert_ptr_nonnull(strstr(out, "patch does not match the digest"));
	free(out);
	branch_tip("side", tip);
	ck_assert_str_eq(tip, tip0);
	/* restored; then the manifest is rewritten */
	ck_assert_int_eq(cu_write_file(patch, text, len), 0);
	free(text);
	text = cu_read_file(man, &len);
	ck_assert_ptr_nonnull(text);
	hex = strstr(text, "\"sha256\": \"");	/* the patch's, first */
	ck_assert_ptr_nonnull(hex);
	hex[11] = hex[11] == '0' ? '1' : '0';
	ck_assert_int_eq(cu_write_file(man, text, len), 0);
	out = corral(&status, "apply %s --into side", id);
	ck_assert_int_eq(status, 1);
	ck_assert_ptr_nonnull(strstr(out, "manifest.json"));
	free(out);
	branch_tip("side", tip);
	ck_assert_str_eq(tip, tip0);
	r = record(id);
	ck_assert_int_eq(r.state, LEASE_STATE_RESULT_READY);
	lease_record_clear(&r);
	free(text);
	free(man);
	free(patch);
	free(rdir);
}
END_TEST

/* A NUL past git's 8000-byte sniff: quarantined as binary, reviewable. */
START_TEST(test_result_late_nul)
{
	char id[LEASE_ID_LEN + 1], late[9001];
	char *p, *out;
	json_t *res;
	int status;

	new_lease(id, NULL);
	memset(late, 'a', sizeof late);
	late[sizeof late - 1] = '\0';
	p = ws_path(id, "late.txt");
	ck_assert_int_eq(cu_write_file(p, late, sizeof late), 0);
	free(p);
	ck_assert_int_eq(finish(id, NULL), LEASE_EINVALID);
	res = result_of(id);
	ck_assert_str_eq(jstr(res, "status"), "quarantined");
	json_decref(res);
	out = corral(&status, "review %s", id);
	ck_assert_int_eq(status, 0);
	ck_assert_ptr_nonnull(strstr(out, "binary"));
	ck_assert_ptr_nonnull(strstr(out, "late.txt"));
	free(out);
}
END_TEST

START_TEST(test_result_ready_without_result)
{
	char id[LEASE_ID_LEN + 1];
	struct lease_record r;
	json_t *res;

	new_lease(id, NULL);
	agent_write(id, "README", "late\n");
	ck_assert_int_eq(lease_record_transition(st, id, LEASE_EV_RESULT,
	    "exit 0", NULL), 0);
	finish_ok(id);
	res = result_of(id);
	ck_assert_str_eq(jstr(res, "status"), "ready");
	ck_assert_ptr_nonnull(jstr(res, "commit"));
	json_decref(res);
	r = record(id);
	ck_assert_int_eq(r.state, LEASE_STATE_RESULT_READY);
	lease_record_clear(&r);
}
END_TEST

START_TEST(test_result_empty)
{
	char id[LEASE_ID_LEN + 1];
	json_t *res;

	new_lease(id, NULL);
	finish_ok(id);
	res = result_of(id);
	ck_assert_str_eq(jstr(res, "status"), "ready");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(
	    res, "counts"), "files")), 0);
	json_decref(res);
	corral_ok("review %s", id);
}
END_TEST

Suite *result_suite(void);

Suite *
result_suite(void)
{
	Suite *s = suite_create("result");
	TCase *tc = tcase_create("Flow");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_result_two_leases);
	tcase_add_test(tc, test_result_unreviewed_and_stale);
	tcase_add_test(tc, test_result_untracked_in_worktree);
	tcase_add_test(tc, test_result_advanced_target);
	tcase_add_test(tc, test_result_no_longer_applies);
	tcase_add_test(tc, test_result_checked_out_in_worktree);
	tcase_add_test(tc, test_result_hunks);
	tcase_add_test(tc, test_result_tampered);
	suite_add_tcase(s, tc);

	tc = tcase_create("Results");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_result_quarantine);
	tcase_add_test(tc, test_result_escaped_content);
	tcase_add_test(tc, test_result_late_nul);
	tcase_add_test(tc, test_result_holder_lost);
	tcase_add_test(tc, test_result_checks);
	tcase_add_test(tc, test_result_states);
	tcase_add_test(tc, test_result_empty);
	tcase_add_test(tc, test_result_ready_without_result);
	tcase_add_test(tc, test_result_reject_callback);
	suite_add_tcase(s, tc);
	return s;
}
