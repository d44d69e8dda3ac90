/*
 * test_recover.c: provisioning (SPEC 6), teardown, reconciliation and gc
 * (SPEC 9.2, 9.3) on real journals and repositories: the happy path, bad
 * input (not a repository, unknown base, bare, branch collision, malformed
 * gc ID), holders alive, dead and wedged, orphans after two inventories,
 * and a crash (the CORRAL_FAULT hook) before and after every provisioning
 * and teardown step followed by reconciliation.
 */
#include <stdbool.h>
#include <time.h>

#include "lease_recover_util.h"

static struct rt t;

/*
 * The lease library's wall clock (lease_id_now_ms reads CLOCK_REALTIME),
 * frozen by a test that needs an exact time: test_lease links with
 * --wrap=clock_gettime (tests/CMakeLists.txt); every other caller and
 * clock passes through.
 */
int __real_clock_gettime(clockid_t clk, struct timespec *ts);
int __wrap_clock_gettime(clockid_t clk, struct timespec *ts);
static bool clock_frozen;
static int64_t clock_frozen_ms;

int
__wrap_clock_gettime(clockid_t clk, struct timespec *ts)
{
	if (clock_frozen && clk == CLOCK_REALTIME) {
		ts->tv_sec = clock_frozen_ms / 1000;
		ts->tv_nsec = (long)(clock_frozen_ms % 1000) * 1000000L;
		return 0;
	}
	return __real_clock_gettime(clk, ts);
}

static void
setup(void)
{
	rt_setup(&t, "recover");
}

static void
teardown(void)
{
	umount2(t.state, MNT_DETACH);
	rt_teardown(&t);
}

static char *
state_path(const char *rel)
{
	return lt_fmt("%s/%s", t.state, rel);
}

static bool
exists(const char *p)
{
	return access(p, F_OK) == 0;
}

static int
branch_exists(const char *id)
{
	struct lease_git *g;
	int rc;

	ck_assert_int_eq(lease_git_open(&g, t.repo), 0);
	rc = lease_git_branch_exists(g, id);
	lease_git_free(g);
	return rc;
}

/* ------------------------------------------------------------------ */

START_TEST(test_recover_lock)
{
	struct lease_lock *a, *b;
	uint64_t t0;

	ck_assert_int_eq(lease_lock_acquire(t.state, 0, &a), 0);
	t0 = cu_now_ms();
	ck_assert_int_eq(lease_lock_acquire(t.state, 100, &b), LEASE_ELOCKED);
	ck_assert_uint_lt(cu_now_ms() - t0, 3000);
	ck_assert_ptr_null(b);
	lease_lock_release(a);
	ck_assert_int_eq(lease_lock_acquire(t.state, 0, &b), 0);
	lease_lock_release(b);
	lease_lock_release(NULL);
}
END_TEST

START_TEST(test_recover_lock_released_by_death)
{
	struct lease_lock *a;
	pid_t pid;
	int p[2];
	char c;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct lease_lock *l;

		if (lease_lock_acquire(t.state, 0, &l) != 0)
			_exit(1);
		if (write(p[1], "x", 1) != 1)
			_exit(2);
		pause();
		_exit(0);
	}
	ck_assert_int_eq(read(p[0], &c, 1), 1);
	ck_assert_int_eq(lease_lock_acquire(t.state, 0, &a), LEASE_ELOCKED);
	kill(pid, SIGKILL);
	ck_assert_int_eq(lt_wait(pid), 128 + SIGKILL);
	ck_assert_int_eq(lease_lock_acquire(t.state, 1000, &a), 0);
	lease_lock_release(a);
	close(p[0]);
	close(p[1]);
}
END_TEST

START_TEST(test_recover_lock_readonly_state)
{
	struct lease_lock *a;

	lt_private_tmpfs(t.state, "size=1m");
	lt_remount_ro(t.state);
	ck_assert_int_eq(lease_lock_acquire(t.state, 0, &a), LEASE_EREADONLY);
}
END_TEST

START_TEST(test_recover_paths)
{
	char *p = lease_path_workspace("/s", "20261129-084512-123-a3f9");

	ck_assert_str_eq(p, "/s/leases/20261129-084512-123-a3f9/work");
	free(p);
	p = lease_path_worktree("/s", "20261129-084512-123-a3f9");
	ck_assert_str_eq(p, "/s/worktrees/20261129-084512-123-a3f9");
	free(p);
	p = lease_path_db("/s");
	ck_assert_str_eq(p, "/s/corral.db");
	free(p);
	ck_assert_ptr_null(lease_path_lease_dir("/s", "../../etc"));
	ck_assert_ptr_null(lease_path_worktree("/s", "*"));
}
END_TEST

START_TEST(test_recover_provision_reject_gc)
{
	char id[LEASE_ID_LEN + 1];
	struct lease_record r;
	struct lease_resource_row *v;
	struct lease_lock *lk;
	size_t n, i;
	char *wt, *ws, *ld, *head;

	ck_assert_msg(rt_provision(&t, "main", id) == 0, "%s",
	    lease_store_errmsg(t.s));
	ck_assert_int_eq(lease_record_get(t.s, id, &r), 0);
	ck_assert_int_eq(r.state, LEASE_STATE_PROVISIONING);
	ck_assert_str_eq(r.base, t.c[2]);
	ck_assert_str_eq(r.base_ref, "refs/heads/main");
	ck_assert_str_eq(r.repo, t.repo);
	wt = lease_path_worktree(t.state, id);
	ws = lease_path_workspace(t.state, id);
	ld = lease_path_lease_dir(t.state, id);
	ck_assert_str_eq(r.worktree, wt);
	ck_assert_str_eq(r.workspace, ws);
	ck_assert_str_eq(r.branch + 7, id);
	lease_record_clear(&r);
	ck_assert(exists(wt));
	ck_assert(exists(ws));
	head = lt_fmt("%s/%s", ws, ".git/HEAD");
	{
		char *body = lt_slurp(head, NULL);
		char *want = lt_fmt("%s%s", t.c[2], "\n");

		ck_assert_str_eq(body, want);
		free(body);
		free(want);
	}
	free(head);
	ck_assert_int_eq(branch_exists(id), 1);
	ck_assert_int_eq(lease_resource_list(t.s, id, &v, &n), 0);
	ck_assert_uint_eq(n, 4);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(v[i].state, LEASE_RS_CREATED);
	lease_resource_list_free(v, n);

	/* run, result, reject: runtime resources go, the branch stays */
	ck_assert_int_eq(lease_record_transition(t.s, id, LEASE_EV_START, NULL,
	    NULL), 0);
	ck_assert_int_eq(lease_record_transition(t.s, id, LEASE_EV_RESULT,
	    NULL, NULL), 0);
	ck_assert_int_eq(lease_record_transition(t.s, id, LEASE_EV_REJECT,
	    "operator", NULL), 0);
	ck_assert_int_eq(lease_record_get(t.s, id, &r), 0);
	ck_assert_int_eq(r.cleanup, LEASE_CLEANUP_PENDING);
	lease_record_clear(&r);
	ck_assert_int_eq(lease_provision_teardown(t.s, t.state, id,
	    LEASE_TEARDOWN_RUNTIME), 0);
	ck_assert_int_eq(lease_provision_teardown(t.s, t.state, id,
	    LEASE_TEARDOWN_RUNTIME), 0);	/* idempotent */
	ck_assert_int_eq(lease_record_get(t.s, id, &r), 0);
	ck_assert_int_eq(r.cleanup, LEASE_CLEANUP_CONFIRMED);
	lease_record_clear(&r);
	ck_assert(!exists(wt));
	ck_assert(!exists(ws));
	ck_assert(exists(ld));
	ck_assert_int_eq(branch_exists(id), 1);
	rt_invariants(&t);

	/* gc: everything goes, the row too */
	ck_assert_int_eq(lease_lock_acquire(t.state, 1000, &lk), 0);
	ck_assert_int_eq(lease_recover_gc_id(t.s, lk, t.state, id), 0);
	ck_assert_int_eq(lease_recover_gc_id(t.s, lk, t.state, id),
	    LEASE_ENOTFOUND);
	lease_lock_release(lk);
	ck_assert(!exists(ld));
	ck_assert_int_eq(branch_exists(id), 0);
	ck_assert_int_eq(lease_record_get(t.s, id, &r), LEASE_ENOTFOUND);
	ck_assert_uint_eq(rt_invariants(&t), 0);
	free(wt);
	free(ws);
	free(ld);
}
END_TEST

START_TEST(test_recover_two_leases_one_base)
{
	char a[LEASE_ID_LEN + 1], b[LEASE_ID_LEN + 1];
	struct lease_record ra, rb;

	ck_assert_int_eq(rt_provision(&t, NULL, a), 0);
	ck_assert_int_eq(rt_provision(&t, NULL, b), 0);
	ck_assert_int_eq(lease_record_get(t.s, a, &ra), 0);
	ck_assert_int_eq(lease_record_get(t.s, b, &rb), 0);
	ck_assert_str_eq(ra.base, rb.base);
	ck_assert_str_ne(ra.branch, rb.branch);
	ck_assert_str_ne(ra.worktree, rb.worktree);
	ck_assert_str_ne(ra.workspace, rb.workspace);
	ck_assert(exists(ra.worktree) && exists(rb.worktree));
	ck_assert(exists(ra.workspace) && exists(rb.workspace));
	lease_record_clear(&ra);
	lease_record_clear(&rb);
	ck_assert_uint_eq(rt_invariants(&t), 2);
}
END_TEST

/* A refused request: named error and reason, nothing created. */
static void
expect_refused(const char *repo, const char *base, int want,
    const char *reason)
{
	char id[LEASE_ID_LEN + 1];
	struct lease_lock *lk;
	struct lease_record r;
	struct lease_resource_row *v;
	size_t n;
	char *wt = state_path("worktrees"), *ld = state_path("leases");
	int rc;

	ck_assert_int_eq(lease_lock_acquire(t.state, 1000, &lk), 0);
	rt_insert(&t, id);
	rc = lease_provision_git(t.s, lk, t.state, id, repo, base, NULL);
	lease_lock_release(lk);
	ck_assert_msg(rc == want, "provision gave %d (%s), want %d", rc,
	    lease_store_errmsg(t.s), want);
	ck_assert_str_ne(lease_store_errmsg(t.s), "");
	ck_assert_int_eq(lease_record_get(t.s, id, &r), 0);
	ck_assert_int_eq(r.state, LEASE_STATE_FAILED);
	ck_assert_str_eq(r.failed_reason, reason);
	ck_assert_int_eq(r.cleanup, LEASE_CLEANUP_NONE);
	lease_record_clear(&r);
	ck_assert_int_eq(lease_resource_list(t.s, id, &v, &n), 0);
	ck_assert_uint_eq(n, 0);
	lease_resource_list_free(v, n);
	ck_assert(!exists(wt));
	ck_assert(!exists(ld));
	ck_assert_int_eq(branch_exists(id), 0);
	free(wt);
	free(ld);
}

START_TEST(test_recover_refused_requests)
{
	char *plain = lt_fmt("%s/%s", t.tmp, "plain");
	char *bare = lt_fmt("%s/%s", t.tmp, "bare.git");
	git_repository *r;

	ck_assert_int_eq(mkdir(plain, 0755), 0);
	ck_assert_int_eq(git_repository_init(&r, bare, 1), 0);
	git_repository_free(r);
	expect_refused(plain, NULL, LEASE_ENOTREPO, "not_a_repository");
	expect_refused(bare, NULL, LEASE_EBARE, "bare_repository");
	expect_refused(t.repo, "no-such-ref", LEASE_EBADBASE, "unknown_base");
	expect_refused(t.repo, "HEAD^{tree}", LEASE_EBADBASE, "unknown_base");
	rt_invariants(&t);
	free(plain);
	free(bare);
}
END_TEST

START_TEST(test_recover_branch_collision)
{
	char id[LEASE_ID_LEN + 1];
	struct lease_lock *lk;
	struct lease_record r;
	struct lease_git *g;
	git_repository *repo;
	git_reference *ref;
	git_oid oid;
	char *wt = state_path("worktrees");

	ck_assert_int_eq(lease_lock_acquire(t.state, 1000, &lk), 0);
	rt_insert(&t, id);
	/* someone already has corral/<id>, at another commit */
	ck_assert_int_eq(lease_git_open(&g, t.repo), 0);
	ck_assert_int_eq(lease_git_branch_create(g, id, t.c[0]), 0);
	lease_git_free(g);
	ck_assert_int_eq(lease_provision_git(t.s, lk, t.state, id, t.repo,
	    NULL, NULL), LEASE_EBRANCHEXISTS);
	lease_lock_release(lk);
	ck_assert_ptr_nonnull(strstr(lease_store_errmsg(t.s),
	    "already exists"));
	ck_assert_int_eq(lease_record_get(t.s, id, &r), 0);
	ck_assert_int_eq(r.state, LEASE_STATE_FAILED);
	ck_assert_str_eq(r.failed_reason, "branch_exists");
	lease_record_clear(&r);
	/* the other branch is untouched: never removed, never moved */
	ck_assert_int_eq(git_repository_open(&repo, t.repo), 0);
	{
		char *name = lt_fmt("corral/%s%s", id, "");

		ck_assert_int_eq(git_branch_lookup(&ref, repo, name,
		    GIT_BRANCH_LOCAL), 0);
		free(name);
	}
	git_oid_fromstr(&oid, t.c[0]);
	ck_assert(git_oid_equal(git_reference_target(ref), &oid));
	git_reference_free(ref);
	git_repository_free(repo);
	ck_assert(!exists(wt));
	free(wt);
}
END_TEST

START_TEST(test_recover_gc_bad_ids)
{
	static const char *const bad[] = { "", "*", "../x",
		"20261129-*", "20261129-084512-123-a3f9/..",
		"corral/20261129-084512-123-a3f9", "20261129-084512-123-A3F9" };
	struct lease_lock *lk;
	size_t i;

	ck_assert_int_eq(lease_lock_acquire(t.state, 1000, &lk), 0);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_int_eq(lease_recover_gc_id(t.s, lk, t.state, bad[i]),
		    LEASE_EBADID);
		ck_assert_ptr_nonnull(strstr(lease_store_errmsg(t.s),
		    "not a lease or check run ID"));
	}
	ck_assert_int_eq(lease_recover_gc_id(t.s, lk, t.state, NULL),
	    LEASE_EBADID);
	ck_assert_int_eq(lease_recover_gc_id(t.s, lk, t.state,
	    "20261129-084512-123-a3f9"), LEASE_ENOTFOUND);
	/* a check run's ID is an ID: nothing is known by it here */
	ck_assert_int_eq(lease_recover_gc_id(t.s, lk, t.state,
	    "20261129-084512-123-a3f9.1764633600000.2"), LEASE_ENOTFOUND);
	lease_lock_release(lk);
}
END_TEST

START_TEST(test_recover_gc_refuses_live)
{
	char id[LEASE_ID_LEN + 1];
	struct lease_lock *lk;

	ck_assert_int_eq(rt_provision(&t, NULL, id), 0);
	ck_assert_int_eq(lease_lock_acquire(t.state, 1000, &lk), 0);
	ck_assert_int_eq(lease_recover_gc_id(t.s, lk, t.state, id),
	    LEASE_EBUSY);
	lease_lock_release(lk);
	ck_assert_int_eq(lease_provision_teardown(t.s, t.state, id,
	    LEASE_TEARDOWN_ALL), LEASE_EBUSY);
	ck_assert_int_eq(rt_invariants(&t), 1);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Holders                                                              */

START_TEST(test_recover_holder_alive_once)
{
	char id[LEASE_ID_LEN + 1];
	struct lease_report *rep;
	struct lease_record r;

	ck_assert_int_eq(rt_provision(&t, NULL, id), 0);
	ck_assert_int_eq(lease_record_set_holder(t.s, id, 4242, 1), 0);
	ck_assert_int_eq(lease_record_transition(t.s, id, LEASE_EV_START, NULL,
	    NULL), 0);
	rep = rt_reconcile(&t, rt_alive, 0);
	ck_assert_uint_eq(rt_count(rep, LEASE_FIND_LIVE), 1);
	ck_assert_uint_eq(rt_count(rep, LEASE_FIND_ORPHAN), 0);
	lease_recover_report_free(rep);
	rep = rt_reconcile(&t, rt_alive, 0);
	ck_assert_uint_eq(rt_count(rep, LEASE_FIND_LIVE), 1);
	lease_recover_report_free(rep);
	ck_assert_int_eq(lease_record_get(t.s, id, &r), 0);
	ck_assert_int_eq(r.state, LEASE_STATE_RUNNING);
	lease_record_clear(&r);
	ck_assert_uint_eq(rt_invariants(&t), 1);
}
END_TEST

static enum lease_holder_status
wedged(const struct lease_record *r, void *ud)
{
	(void)r;
	(void)ud;
	return LEASE_HOLDER_WEDGED;
}

START_TEST(test_recover_holder_lost)
{
	char id[LEASE_ID_LEN + 1];
	struct lease_report *rep;
	struct lease_record r;
	struct lease_lock *lk;
	json_t *j;

	ck_assert_int_eq(rt_provision(&t, NULL, id), 0);
	ck_assert_int_eq(lease_record_transition(t.s, id, LEASE_EV_START, NULL,
	    NULL), 0);
	/* dry run: reported, nothing written */
	rep = rt_reconcile(&t, _i == 0 ? rt_dead : wedged,
	    LEASE_RECONCILE_DRY_RUN);
	ck_assert_uint_eq(rt_count(rep, LEASE_FIND_HOLDER_LOST), 1);
	ck_assert(rep->dry_run);
	lease_recover_report_free(rep);
	ck_assert_int_eq(lease_record_get(t.s, id, &r), 0);
	ck_assert_int_eq(r.state, LEASE_STATE_RUNNING);
	lease_record_clear(&r);

	rep = rt_reconcile(&t, _i == 0 ? rt_dead : wedged, 0);
	ck_assert_uint_eq(rt_count(rep, LEASE_FIND_HOLDER_LOST), 1);
	j = lease_json_report(rep);
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    json_object_get(j, "findings"), 0), "kind")), "holder_lost");
	json_decref(j);
	lease_recover_report_free(rep);
	ck_assert_int_eq(lease_record_get(t.s, id, &r), 0);
	ck_assert_int_eq(r.state, LEASE_STATE_FAILED);
	ck_assert_str_eq(r.failed_reason, "holder_lost");
	ck_assert_int_eq(r.cleanup, LEASE_CLEANUP_PENDING);
	/* the workspace is kept for quarantine */
	ck_assert(exists(r.workspace));
	lease_record_clear(&r);
	/* a second reconcile keeps it and says so */
	rep = rt_reconcile(&t, rt_dead, 0);
	ck_assert_uint_eq(rt_count(rep, LEASE_FIND_CLEANUP_PENDING), 1);
	ck_assert_uint_eq(rt_count(rep, LEASE_FIND_HOLDER_LOST), 0);
	lease_recover_report_free(rep);
	ck_assert_uint_eq(rt_invariants(&t), 1);
	/* gc removes it all */
	ck_assert_int_eq(lease_lock_acquire(t.state, 1000, &lk), 0);
	ck_assert_int_eq(lease_recover_gc_id(t.s, lk, t.state, id), 0);
	lease_lock_release(lk);
	ck_assert_uint_eq(rt_invariants(&t), 0);
}
END_TEST

/* The default probe: PID plus start time from /proc. */
START_TEST(test_recover_default_probe)
{
	char id[LEASE_ID_LEN + 1];
	struct lease_report *rep;
	struct lease_record r;
	int64_t start;
	pid_t pid;

	ck_assert_int_eq(rt_provision(&t, NULL, id), 0);
	ck_assert_int_eq(lease_record_transition(t.s, id, LEASE_EV_START, NULL,
	    NULL), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	ck_assert_int_eq(lease_proc_start(pid, &start), 0);
	ck_assert(lease_proc_alive(pid, start));
	ck_assert(!lease_proc_alive(pid, start + 1));	/* a reused PID */
	ck_assert_int_eq(lease_record_set_holder(t.s, id, pid, start), 0);
	rep = rt_reconcile(&t, NULL, 0);
	ck_assert_uint_eq(rt_count(rep, LEASE_FIND_LIVE), 1);
	lease_recover_report_free(rep);
	kill(pid, SIGKILL);
	ck_assert_int_eq(lt_wait(pid), 128 + SIGKILL);
	ck_assert(!lease_proc_alive(pid, start));
	ck_assert_int_eq(lease_proc_start(pid, &start), -ESRCH);
	rep = rt_reconcile(&t, NULL, 0);
	ck_assert_uint_eq(rt_count(rep, LEASE_FIND_HOLDER_LOST), 1);
	lease_recover_report_free(rep);
	ck_assert_int_eq(lease_record_get(t.s, id, &r), 0);
	ck_assert_int_eq(r.state, LEASE_STATE_FAILED);
	lease_record_clear(&r);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Orphans                                                              */

#define ORPHAN_ID "20250101-000000-000-dead"

static const struct lease_finding *
find_orphan(const struct lease_report *rep, enum lease_resource k)
{
	size_t i;

	for (i = 0; i < rep->n; i++)
		if (rep->v[i].kind == LEASE_FIND_ORPHAN &&
		    rep->v[i].resource == k &&
		    strcmp(rep->v[i].id, ORPHAN_ID) == 0)
			return &rep->v[i];
	return NULL;
}

START_TEST(test_recover_orphans_two_inventories)
{
	char id[LEASE_ID_LEN + 1];
	char *owt = state_path("worktrees/" ORPHAN_ID);
	char *old = state_path("leases/" ORPHAN_ID);
	char *junk = state_path("leases/junk");
	struct lease_report *rep;
	const struct lease_finding *f;
	struct lease_lock *lk;
	struct lease_git *g;
	size_t i;

	/* a running lease makes the repository known to the journal */
	ck_assert_int_eq(rt_provision(&t, NULL, id), 0);
	ck_assert_int_eq(lease_record_set_holder(t.s, id, 4242, 1), 0);
	ck_assert_int_eq(lease_record_transition(t.s, id, LEASE_EV_START, NULL,
	    NULL), 0);
	ck_assert_int_eq(mkdir(owt, 0700), 0);
	ck_assert_int_eq(mkdir(old, 0700), 0);
	ck_assert_int_eq(mkdir(junk, 0700), 0);
	ck_assert_int_eq(lease_git_open(&g, t.repo), 0);
	ck_assert_int_eq(lease_git_branch_create(g, ORPHAN_ID, t.c[0]), 0);
	lease_git_free(g);

	/* a dry run twice never makes anything removable */
	for (i = 0; i < 2; i++) {
		rep = rt_reconcile(&t, rt_alive, LEASE_RECONCILE_DRY_RUN);
		f = find_orphan(rep, LEASE_RES_WORKTREE);
		ck_assert_ptr_nonnull(f);
		ck_assert_int_eq(f->seen, 1);
		ck_assert(!f->removable);
		lease_recover_report_free(rep);
	}
	/* first inventory: reported, not removable */
	rep = rt_reconcile(&t, rt_alive, 0);
	ck_assert_uint_eq(rt_count(rep, LEASE_FIND_ORPHAN), 4);
	ck_assert_ptr_nonnull(f = find_orphan(rep, LEASE_RES_BRANCH));
	ck_assert(!f->removable);
	ck_assert_str_eq(f->scope, t.repo);
	lease_recover_report_free(rep);
	ck_assert_int_eq(lease_lock_acquire(t.state, 1000, &lk), 0);
	ck_assert_int_eq(lease_recover_gc_id(t.s, lk, t.state, ORPHAN_ID),
	    LEASE_ENOTREMOVABLE);
	lease_lock_release(lk);
	ck_assert(exists(owt));
	/* second consistent inventory: removable, by exact ID only */
	rep = rt_reconcile(&t, rt_alive, 0);
	ck_assert_ptr_nonnull(f = find_orphan(rep, LEASE_RES_WORKTREE));
	ck_assert_int_eq(f->seen, 2);
	ck_assert(f->removable);
	ck_assert_ptr_nonnull(f = find_orphan(rep, LEASE_RES_LEASE_DIR));
	ck_assert(f->removable);
	for (i = 0; i < rep->n; i++)
		if (rep->v[i].identity != NULL &&
		    strstr(rep->v[i].identity, "junk") != NULL) {
			ck_assert_str_eq(rep->v[i].id, "");
			ck_assert(!rep->v[i].removable);
		}
	lease_recover_report_free(rep);
	ck_assert_int_eq(lease_lock_acquire(t.state, 1000, &lk), 0);
	ck_assert_int_eq(lease_recover_gc_id(t.s, lk, t.state, ORPHAN_ID), 0);
	lease_lock_release(lk);
	ck_assert(!exists(owt));
	ck_assert(!exists(old));
	ck_assert(exists(junk));	/* no ID: corral never removes it */
	ck_assert_int_eq(branch_exists(ORPHAN_ID), 0);
	ck_assert_int_eq(branch_exists(id), 1);	/* the lease's own */
	rep = rt_reconcile(&t, rt_alive, 0);
	ck_assert_uint_eq(rt_count(rep, LEASE_FIND_ORPHAN), 1);	/* junk */
	lease_recover_report_free(rep);
	free(owt);
	free(old);
	free(junk);
}
END_TEST

START_TEST(test_recover_orphan_inconsistent_inventory)
{
	char *owt = state_path("worktrees/" ORPHAN_ID);
	char *parent = state_path("worktrees");
	struct lease_report *rep;
	const struct lease_finding *f;

	ck_assert_int_eq(mkdir(parent, 0700), 0);
	ck_assert_int_eq(mkdir(owt, 0700), 0);
	rep = rt_reconcile(&t, rt_alive, 0);
	ck_assert_ptr_nonnull(find_orphan(rep, LEASE_RES_WORKTREE));
	lease_recover_report_free(rep);
	/* gone from one inventory: the count starts again */
	ck_assert_int_eq(rmdir(owt), 0);
	rep = rt_reconcile(&t, rt_alive, 0);
	ck_assert_ptr_null(find_orphan(rep, LEASE_RES_WORKTREE));
	lease_recover_report_free(rep);
	ck_assert_int_eq(mkdir(owt, 0700), 0);
	rep = rt_reconcile(&t, rt_alive, 0);
	ck_assert_ptr_nonnull(f = find_orphan(rep, LEASE_RES_WORKTREE));
	ck_assert_int_eq(f->seen, 1);
	ck_assert(!f->removable);
	lease_recover_report_free(rep);
	free(owt);
	free(parent);
}
END_TEST

START_TEST(test_recover_gc_older_than)
{
	char a[LEASE_ID_LEN + 1], b[LEASE_ID_LEN + 1], c[LEASE_ID_LEN + 1];
	struct lease_lock *lk;
	struct lease_record r;
	size_t removed = 99;

	ck_assert_int_eq(rt_provision(&t, NULL, a), 0);	/* rejected */
	ck_assert_int_eq(rt_provision(&t, NULL, b), 0);	/* holder_lost */
	ck_assert_int_eq(rt_provision(&t, NULL, c), 0);	/* live */
	ck_assert_int_eq(lease_record_transition(t.s, a, LEASE_EV_START, NULL,
	    NULL), 0);
	ck_assert_int_eq(lease_record_transition(t.s, a, LEASE_EV_RESULT, NULL,
	    NULL), 0);
	ck_assert_int_eq(lease_record_transition(t.s, a, LEASE_EV_REJECT, NULL,
	    NULL), 0);
	ck_assert_int_eq(lease_provision_teardown(t.s, t.state, a,
	    LEASE_TEARDOWN_RUNTIME), 0);
	ck_assert_int_eq(lease_record_transition(t.s, b, LEASE_EV_FAIL,
	    "holder_lost", NULL), 0);
	ck_assert_int_eq(lease_lock_acquire(t.state, 1000, &lk), 0);
	/* nothing is older than an hour */
	ck_assert_int_eq(lease_recover_gc_older_than(t.s, lk, t.state, 3600000,
	    &removed), 0);
	ck_assert_uint_eq(removed, 0);
	/*
	 * The clock stopped at the very millisecond a was last updated (a
	 * fast machine, a tmpfs journal): younger than 1 ms it is not, but
	 * age 0 takes it.
	 */
	ck_assert_int_eq(lease_record_get(t.s, a, &r), 0);
	clock_frozen_ms = r.updated_at;
	lease_record_clear(&r);
	clock_frozen = true;
	ck_assert_int_eq(lease_recover_gc_older_than(t.s, lk, t.state, 1,
	    &removed),
	    0);
	ck_assert_uint_eq(removed, 0);
	ck_assert_int_eq(lease_recover_gc_older_than(t.s, lk, t.state, 0,
	    &removed),
	    0);
	clock_frozen = false;
	lease_lock_release(lk);
	ck_assert_uint_eq(removed, 1);
	ck_assert_int_eq(lease_record_get(t.s, a, &r), LEASE_ENOTFOUND);
	ck_assert_int_eq(lease_record_get(t.s, b, &r), 0);	/* pending */
	lease_record_clear(&r);
	ck_assert_int_eq(lease_record_get(t.s, c, &r), 0);	/* live */
	lease_record_clear(&r);
	ck_assert_uint_eq(rt_invariants(&t), 2);
}
END_TEST

START_TEST(test_recover_show_json)
{
	char id[LEASE_ID_LEN + 1];
	json_t *j, *rc;

	ck_assert_int_eq(rt_provision(&t, NULL, id), 0);
	ck_assert_int_eq(lease_receipt_append(t.s, id, "provision", NULL,
	    NULL), 0);
	ck_assert_int_eq(lease_json_show(t.s, id, &j), 0);
	ck_assert_str_eq(json_string_value(json_object_get(j, "id")), id);
	ck_assert_str_eq(json_string_value(json_object_get(j, "lease_state")),
	    "provisioning");
	ck_assert_str_eq(json_string_value(json_object_get(j, "mode")),
	    "sandboxed");
	ck_assert_str_eq(json_string_value(json_object_get(j, "base")),
	    t.c[2]);
	ck_assert_str_eq(json_string_value(json_object_get(j, "base_ref")),
	    "refs/heads/main");
	ck_assert(json_is_null(json_object_get(j, "holder_pid")));
	ck_assert(json_is_null(json_object_get(j, "result")));
	ck_assert(json_is_null(json_object_get(j, "sandbox_id")));
	ck_assert(json_is_array(json_object_get(j, "cmd")));
	rc = json_object_get(j, "receipt");
	ck_assert_int_eq(json_integer_value(json_object_get(rc, "length")), 1);
	ck_assert(json_is_true(json_object_get(rc, "verified")));
	ck_assert_uint_eq(json_array_size(json_object_get(j, "receipts")), 1);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "resources")), 4);
	ck_assert_uint_ge(json_array_size(json_object_get(j, "transitions")),
	    1);
	json_decref(j);
	ck_assert_int_eq(lease_json_show(t.s, "x", &j), LEASE_EBADID);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Crashes at every step, then reconciliation                          */

static const char *const provision_points[] = {
	"provision.base.before", "provision.base.after",
	"provision.branch.before", "provision.branch.created",
	"provision.branch.after",
	"provision.worktree.before", "provision.worktree.created",
	"provision.worktree.after",
	"provision.lease_dir.before", "provision.lease_dir.created",
	"provision.lease_dir.after",
	"provision.workspace.before", "provision.workspace.created",
	"provision.workspace.after",
};

START_TEST(test_recover_fault_hook_compiled_in)
{
	/* the crash tests below need it: fail, never skip */
	ck_assert(lease_fault_enabled());
}
END_TEST

START_TEST(test_recover_crash_during_provisioning)
{
	const char *point = provision_points[_i];
	struct lease_report *rep;
	struct lease_record *v;
	size_t n;

	ck_assert_msg(rt_child(&t, point, true, NULL, NULL) == 137,
	    "fault %s did not fire", point);
	rep = rt_reconcile(&t, rt_dead, 0);
	ck_assert_uint_eq(rt_count(rep, LEASE_FIND_INTERRUPTED), 1);
	ck_assert_uint_eq(rt_count(rep, LEASE_FIND_ORPHAN), 0);
	lease_recover_report_free(rep);
	ck_assert_uint_eq(rt_invariants(&t), 1);
	ck_assert_int_eq(lease_record_list(t.s, LEASE_LIST_ALL, &v, &n), 0);
	ck_assert_int_eq(v[0].state, LEASE_STATE_FAILED);
	ck_assert_str_eq(v[0].failed_reason, "provisioning_interrupted");
	ck_assert(v[0].cleanup == LEASE_CLEANUP_CONFIRMED ||
	    v[0].cleanup == LEASE_CLEANUP_NONE);
	ck_assert(!rt_has_row(t.s, v[0].id, LEASE_RES_BRANCH));
	ck_assert(!rt_has_row(t.s, v[0].id, LEASE_RES_WORKSPACE));
	lease_record_list_free(v, n);
	/* a second reconcile finds nothing more to do */
	rep = rt_reconcile(&t, rt_dead, 0);
	ck_assert_uint_eq(rep->n, 0);
	lease_recover_report_free(rep);
	/* and a new lease provisions fine afterwards */
	{
		char id[LEASE_ID_LEN + 1];

		ck_assert_int_eq(rt_provision(&t, NULL, id), 0);
	}
	ck_assert_uint_eq(rt_invariants(&t), 2);
}
END_TEST

static void
then_reject_teardown(struct lease_store *s, struct lease_lock *lk,
    const char *state, const char *id)
{
	(void)lk;
	if (lease_record_transition(s, id, LEASE_EV_START, NULL, NULL) != 0 ||
	    lease_record_transition(s, id, LEASE_EV_RESULT, NULL, NULL) != 0 ||
	    lease_record_transition(s, id, LEASE_EV_REJECT, "operator",
	    NULL) != 0)
		_exit(6);
	if (lease_provision_teardown(s, state, id, LEASE_TEARDOWN_RUNTIME) != 0)
		_exit(7);
}

static const char *const teardown_points[] = {
	"teardown.workspace.before", "teardown.workspace.removed",
	"teardown.workspace.after",
	"teardown.worktree.before", "teardown.worktree.removed",
	"teardown.worktree.after",
};

START_TEST(test_recover_crash_during_teardown)
{
	const char *point = teardown_points[_i];
	struct lease_report *rep;
	struct lease_record *v;
	size_t n;

	ck_assert_msg(rt_child(&t, point, true, NULL, then_reject_teardown) ==
	    137, "fault %s did not fire", point);
	ck_assert_uint_eq(rt_invariants(&t), 1);
	rep = rt_reconcile(&t, rt_dead, 0);
	/* resumed, unless the crash came after the last removal */
	ck_assert_uint_le(rt_count(rep, LEASE_FIND_CLEANED), 1);
	ck_assert_uint_eq(rt_count(rep, LEASE_FIND_ORPHAN), 0);
	lease_recover_report_free(rep);
	ck_assert_uint_eq(rt_invariants(&t), 1);
	ck_assert_int_eq(lease_record_list(t.s, LEASE_LIST_ALL, &v, &n), 0);
	ck_assert_int_eq(v[0].state, LEASE_STATE_REJECTED);
	ck_assert_int_eq(v[0].cleanup, LEASE_CLEANUP_CONFIRMED);
	ck_assert(!exists(v[0].worktree));
	ck_assert(!exists(v[0].workspace));
	ck_assert_int_eq(branch_exists(v[0].id), 1);	/* kept until gc */
	lease_record_list_free(v, n);
}
END_TEST

static void
then_gc(struct lease_store *s, struct lease_lock *lk, const char *state,
    const char *id)
{
	then_reject_teardown(s, lk, state, id);
	/* the child holds the state lock (rt_child) */
	if (lease_recover_gc_id(s, lk, state, id) != 0)
		_exit(8);
}

static const char *const gc_points[] = {
	"teardown.lease_dir.before", "teardown.lease_dir.removed",
	"teardown.lease_dir.after",
	"teardown.branch.before", "teardown.branch.removed",
	"teardown.branch.after", "gc.delete.before",
};

START_TEST(test_recover_crash_during_gc)
{
	const char *point = gc_points[_i];
	struct lease_report *rep;
	struct lease_record *v;
	struct lease_lock *lk;
	size_t n;

	ck_assert_msg(rt_child(&t, point, true, NULL, then_gc) == 137,
	    "fault %s did not fire", point);
	ck_assert_uint_eq(rt_invariants(&t), 1);
	rep = rt_reconcile(&t, rt_dead, 0);
	ck_assert_uint_eq(rt_count(rep, LEASE_FIND_ORPHAN), 0);
	lease_recover_report_free(rep);
	ck_assert_uint_eq(rt_invariants(&t), 1);
	/* gc again: it finishes */
	ck_assert_int_eq(lease_record_list(t.s, LEASE_LIST_ALL, &v, &n), 0);
	ck_assert_int_eq(lease_lock_acquire(t.state, 1000, &lk), 0);
	ck_assert_msg(lease_recover_gc_id(t.s, lk, t.state, v[0].id) == 0, "%s",
	    lease_store_errmsg(t.s));
	lease_lock_release(lk);
	lease_record_list_free(v, n);
	ck_assert_uint_eq(rt_invariants(&t), 0);
}
END_TEST

Suite *recover_suite(void);

Suite *
recover_suite(void)
{
	Suite *s = suite_create("recover");
	TCase *tc = tcase_create("Core");
	TCase *orph = tcase_create("Orphans");
	TCase *crash = tcase_create("Crash");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_recover_lock);
	tcase_add_test(tc, test_recover_lock_released_by_death);
	tcase_add_test(tc, test_recover_lock_readonly_state);
	tcase_add_test(tc, test_recover_paths);
	tcase_add_test(tc, test_recover_provision_reject_gc);
	tcase_add_test(tc, test_recover_two_leases_one_base);
	tcase_add_test(tc, test_recover_refused_requests);
	tcase_add_test(tc, test_recover_branch_collision);
	tcase_add_test(tc, test_recover_gc_bad_ids);
	tcase_add_test(tc, test_recover_gc_refuses_live);
	tcase_add_test(tc, test_recover_holder_alive_once);
	tcase_add_loop_test(tc, test_recover_holder_lost, 0, 2);
	tcase_add_test(tc, test_recover_default_probe);
	tcase_add_test(tc, test_recover_gc_older_than);
	tcase_add_test(tc, test_recover_show_json);
	suite_add_tcase(s, tc);

	tcase_add_checked_fixture(orph, setup, teardown);
	tcase_set_timeout(orph, 60);
	tcase_add_test(orph, test_recover_orphans_two_inventories);
	tcase_add_test(orph, test_recover_orphan_inconsistent_inventory);
	suite_add_tcase(s, orph);

	tcase_add_checked_fixture(crash, setup, teardown);
	tcase_set_timeout(crash, 60);
	tcase_add_test(crash, test_recover_fault_hook_compiled_in);
	tcase_add_loop_test(crash, test_recover_crash_during_provisioning, 0,
	    (int)(sizeof provision_points / sizeof provision_points[0]));
	tcase_add_loop_test(crash, test_recover_crash_during_teardown, 0,
	    (int)(sizeof teardown_points / sizeof teardown_points[0]));
	tcase_add_loop_test(crash, test_recover_crash_during_gc, 0,
	    (int)(sizeof gc_points / sizeof gc_points[0]));
	suite_add_tcase(s, crash);
	return s;
}
