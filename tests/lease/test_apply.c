/*
 * test_apply.c: apply, reject, gc and reconcile against the operator's
 * repository when they race, are killed, or find the journal unwritable
 * (SPEC 7.6, 9.2, issue 16). Real repositories, the real corral binary
 * for the commands, leases made ready and reviewed through the library.
 * Two applies of one lease into two branches: exactly one moves its
 * branch; apply racing reject: never a rejected lease whose commit moved
 * the target; a kill after the intent or after the ref move, then
 * reconcile: the journal and the branch agree; a held journal lock or a
 * full state disk: the branch is not moved; what a killed corral leaves
 * in .git (a ref lock, a worktree's admin entry) is removed by reconcile,
 * the operator's own never. The crash sweep kills apply (its fast-forward
 * and its rebase onto an advanced target), reject, gc and new at each of
 * their state-changing syscalls (strace), then reconciles.
 */
#include <fcntl.h>
#include <git2.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdarg.h>

#include "lease/result/result.h"
#include "lease_test.h"


/*
 * A traced corral: LeakSanitizer cannot run under ptrace and aborts the
 * process at exit (ASan builds: exit 134), so leak checks are off there.
 */
#define TRACED "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 "

static char *tmp, *repo, *state;
static char c[3][41];
static struct lease_store *st;

static void
open_store(void)
{
	char *db = lt_fmt("%s/%s", state, "corral.db");

	ck_assert_int_eq(lease_store_open(&st, db), 0);
	free(db);
}

static void
setup(void)
{
	ck_assert_int_ge(lease_git_init(), 0);
	tmp = cu_tmpdir("apply");
	repo = lt_make_repo(tmp, c);
	state = lt_fmt("%s/%s", tmp, "state");
	ck_assert_int_eq(mkdir(state, 0700), 0);
	open_store();
	ck_assert_int_eq(setenv("CORRAL_STATE_DIR", state, 1), 0);
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

/* A result_ready lease from main, its result commit reviewed. */
static void
ready_lease(char id[LEASE_ID_LEN + 1], const char *text)
{
	struct lease_result_opts o;
	struct lease_spec spec;
	struct lease_lock *lk;
	json_t *doc = NULL;
	char *ws;

	memset(&spec, 0, sizeof spec);
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
	ws = lease_path_workspace(state, id);
	lt_write(ws, "README", text);
	free(ws);
	memset(&o, 0, sizeof o);
	ck_assert_msg(lease_result_finish(st, state, id, &o) == 0, "finish: "
	    "%s", lease_store_errmsg(st));
	ck_assert_msg(lease_result_review(st, state, id, LEASE_REVIEW_MARK,
	    &doc) == 0, "review: %s", lease_store_errmsg(st));
	json_decref(doc);
}

static struct lease_record
record(const char *id)
{
	struct lease_record r;

	ck_assert_int_eq(lease_record_get(st, id, &r), 0);
	return r;
}

/* The lease's result commit. */
static void
commit_of(const char *id, char out[41])
{
	struct lease_record r = record(id);
	json_t *j = json_loads(r.result, 0, NULL);

	ck_assert_ptr_nonnull(j);
	snprintf(out, 41, "%s", json_string_value(json_object_get(j,
	    "commit")));
	json_decref(j);
	lease_record_clear(&r);
}

static void
make_branch(const char *name)
{
	git_repository *r;
	git_reference *ref;
	git_commit *cm;
	git_oid oid;

	ck_assert_int_eq(git_repository_open(&r, repo), 0);
	git_oid_fromstr(&oid, c[2]);
	ck_assert_int_eq(git_commit_lookup(&cm, r, &oid), 0);
	ck_assert_int_eq(git_branch_create(&ref, r, name, cm, 0), 0);
	git_reference_free(ref);
	git_commit_free(cm);
	git_repository_free(r);
}

/* The tip of refs/heads/<name> (a fresh repository handle each time). */
static void
tip_of(const char *name, char out[41])
{
	git_repository *r;
	git_oid oid;
	char ref[256];

	snprintf(ref, sizeof ref, "refs/heads/%s", name);
	ck_assert_int_eq(git_repository_open(&r, repo), 0);
	ck_assert_int_eq(git_reference_name_to_id(&oid, r, ref), 0);
	git_oid_tostr(out, 41, &oid);
	git_repository_free(r);
}

/* How many receipts of kind the lease's (verified) chain has. */
static int
receipts_of(const char *id, const char *kind)
{
	json_t *a = NULL, *e;
	size_t i;
	int n = 0;

	ck_assert_int_eq(lease_receipt_entries(st, id, &a), 0);
	json_array_foreach(a, i, e)
		n += strcmp(json_string_value(json_object_get(e, "kind")),
		    kind) == 0;
	json_decref(a);
	return n;
}

/* Run the real corral (sh -c): stdout+stderr, *status its exit code. */
static char *
corral(int *status, const char *env, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static char *
corral(int *status, const char *env, const char *fmt, ...)
{
	char args[2048], cmd[4096];
	char *bin = cu_corral_bin();
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof args, fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof cmd, "%s '%s' %s 2>&1", env != NULL ? env : "",
	    bin, args);
	free(bin);
	return cu_run(cmd, status);
}

/* Fork a shell running cmd once gate[0] reads EOF; output to log. */
static pid_t
spawn_gated(const int gate[2], const char *cmd, const char *log)
{
	char byte;
	pid_t pid = fork();
	int fd;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(gate[1]);
		while (read(gate[0], &byte, 1) < 0 && errno == EINTR)
			;
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/*
 * Two corral commands started at the same moment (a after a_ms more);
 * their exit codes.
 */
static void
race_after(const char *a, int a_ms, const char *b, int *ra, int *rb)
{
	char *bin = cu_corral_bin(), ca[1024], cb[1024], *la, *lb;
	int gate[2];
	pid_t pa, pb;

	snprintf(ca, sizeof ca, "%s%d; exec '%s' %s", a_ms > 0 ?
	    "sleep 0.0" : ": ", a_ms / 10, bin, a);
	snprintf(cb, sizeof cb, "exec '%s' %s", bin, b);
	free(bin);
	la = lt_fmt("%s/%s", tmp, "race-a.log");
	lb = lt_fmt("%s/%s", tmp, "race-b.log");
	ck_assert_int_eq(pipe(gate), 0);
	pa = spawn_gated(gate, ca, la);
	pb = spawn_gated(gate, cb, lb);
	close(gate[0]);
	close(gate[1]);		/* both go */
	*ra = lt_wait(pa);
	*rb = lt_wait(pb);
	free(la);
	free(lb);
}

static void
race(const char *a, const char *b, int *ra, int *rb)
{
	race_after(a, 0, b, ra, rb);
}

/* ---- races --------------------------------------------------------------- */

/* 100 rounds of each race; CORRAL_RACES=N for another count. */
static int
races(void)
{
	const char *e = getenv("CORRAL_RACES");

	return e != NULL && atoi(e) > 0 ? atoi(e) : 100;
}

START_TEST(test_apply_two_into_two)
{
	char id[LEASE_ID_LEN + 1], cm[41], t1[41], t2[41];
	char b1[32], b2[32], a1[128], a2[128];
	struct lease_record r;
	int i, x, y, moved, won = 0;

	for (i = 0; i < races(); i++) {
		snprintf(b1, sizeof b1, "one-%d", i);
		snprintf(b2, sizeof b2, "two-%d", i);
		make_branch(b1);
		make_branch(b2);
		ready_lease(id, "raced\n");
		commit_of(id, cm);
		snprintf(a1, sizeof a1, "apply %s --into %s", id, b1);
		snprintf(a2, sizeof a2, "apply %s --into %s", id, b2);
		race(a1, a2, &x, &y);
		tip_of(b1, t1);
		tip_of(b2, t2);
		moved = (strcmp(t1, cm) == 0) + (strcmp(t2, cm) == 0);
		ck_assert_msg(moved == 1, "race %d: %d branches moved", i,
		    moved);
		ck_assert_msg((x == 0) + (y == 0) == 1, "race %d: exits %d "
		    "and %d", i, x, y);
		/* the winner's branch is the one that moved */
		ck_assert_str_eq(x == 0 ? t1 : t2, cm);
		ck_assert_str_eq(x == 0 ? t2 : t1, c[2]);
		r = record(id);
		ck_assert_int_eq(r.state, LEASE_STATE_APPLIED);
		lease_record_clear(&r);
		ck_assert_int_eq(receipts_of(id, "applied"), 1);
		won++;
	}
	ck_assert_int_eq(won, races());
}
END_TEST

START_TEST(test_apply_vs_reject)
{
	char id[LEASE_ID_LEN + 1], cm[41], t[41], b[32], a[128], j[128];
	struct lease_record r;
	int i, x, y, applied = 0, rejected = 0;

	for (i = 0; i < races(); i++) {
		snprintf(b, sizeof b, "side-%d", i);
		make_branch(b);
		ready_lease(id, "raced\n");
		commit_of(id, cm);
		snprintf(a, sizeof a, "apply %s --into %s", id, b);
		snprintf(j, sizeof j, "reject %s", id);
		race(a, j, &x, &y);
		tip_of(b, t);
		r = record(id);
		if (r.state == LEASE_STATE_APPLIED) {
			ck_assert_str_eq(t, cm);
			ck_assert_int_eq(x, 0);
			ck_assert_int_ne(y, 0);
			applied++;
		} else {
			ck_assert_msg(r.state == LEASE_STATE_REJECTED, "race "
			    "%d: %s", i, lease_fsm_state_name(r.state));
			ck_assert_msg(strcmp(t, c[2]) == 0, "race %d: a "
			    "rejected lease moved %s", i, b);
			ck_assert_int_ne(x, 0);
			ck_assert_int_eq(y, 0);
			ck_assert_int_eq(receipts_of(id, "applied"), 0);
			rejected++;
		}
		lease_record_clear(&r);
	}
	fprintf(stderr, "apply vs reject: %d applied, %d rejected\n",
	    applied, rejected);
	ck_assert_int_eq(applied + rejected, races());
}
END_TEST

/*
 * apply racing gc (SPEC 7.4, 9.4): gc removes finished leases only, so it
 * either finds the lease still result_ready and refuses, or finds it
 * applied and removes it; the branch moved exactly when apply says it
 * did, and an applied lease that is still listed has its one receipt.
 */
START_TEST(test_apply_vs_gc)
{
	char id[LEASE_ID_LEN + 1], cm[41], t[41], b[32], a[128], g[128];
	struct lease_record r;
	int i, x, y, rc, applied = 0, collected = 0;

	for (i = 0; i < races(); i++) {
		snprintf(b, sizeof b, "gcside-%d", i);
		make_branch(b);
		ready_lease(id, "raced\n");
		commit_of(id, cm);
		snprintf(a, sizeof a, "apply %s --into %s", id, b);
		snprintf(g, sizeof g, "gc %s", id);
		/* gc does more before it takes the lease's lock: apply
		 * starts up to 90 ms later, so each side wins some rounds */
		race_after(a, (i % 10) * 10, g, &x, &y);
		tip_of(b, t);
		ck_assert_msg((strcmp(t, cm) == 0) == (x == 0), "race %d: "
		    "apply exit %d, %s %s", i, x, b, strcmp(t, cm) == 0 ?
		    "moved" : "did not move");
		if (x != 0)
			ck_assert_str_eq(t, c[2]);
		memset(&r, 0, sizeof r);
		rc = lease_record_get(st, id, &r);
		if (rc == 0) {
			if (x == 0) {
				ck_assert_int_eq(r.state,
				    LEASE_STATE_APPLIED);
				ck_assert_int_eq(receipts_of(id, "applied"),
				    1);
				applied++;
			} else {
				ck_assert_msg(r.state ==
				    LEASE_STATE_RESULT_READY, "race %d: %s", i,
				    lease_fsm_state_name(r.state));
			}
			lease_record_clear(&r);
		} else {
			/* gone: gc took it, and only once it was applied */
			ck_assert_int_eq(rc, LEASE_ENOTFOUND);
			ck_assert_int_eq(x, 0);
			ck_assert_int_eq(y, 0);
			collected++;
		}
	}
	fprintf(stderr, "apply vs gc: %d applied and kept, %d applied and "
	    "collected\n", applied, collected);
}
END_TEST

/* ---- kills --------------------------------------------------------------- */

/* The lease's open intent: 1 and its target, or 0. */
static int
open_intent(const char *id, char *target, size_t sz)
{
	struct lease_intent in;
	int rc = lease_intent_get_open(st, id, &in);

	ck_assert_int_ge(rc, 0);
	if (rc == 1 && target != NULL)
		snprintf(target, sz, "%s", in.ref);
	lease_intent_clear(&in);
	return rc;
}

static void
reconcile_ok(void)
{
	int status;
	char *out = corral(&status, NULL, "reconcile");

	ck_assert_msg(status == 0, "reconcile: %s", out);
	free(out);
}

START_TEST(test_apply_killed_after_ref_move)
{
	char id[LEASE_ID_LEN + 1], cm[41], t[41], target[256];
	struct lease_record r;
	char *out;
	int status;

	make_branch("side");
	ready_lease(id, "killed\n");
	commit_of(id, cm);
	out = corral(&status, "CORRAL_FAULT=apply.ref.after",
	    "apply %s --into side", id);
	ck_assert_msg(status == 137, "exit %d: %s", status, out);
	free(out);
	/* the branch moved; the journal says an apply is under way */
	tip_of("side", t);
	ck_assert_str_eq(t, cm);
	ck_assert_int_eq(open_intent(id, target, sizeof target), 1);
	ck_assert_str_eq(target, "refs/heads/side");
	ck_assert_int_eq(receipts_of(id, "applying"), 1);
	r = record(id);
	ck_assert_int_eq(r.state, LEASE_STATE_RESULT_READY);
	lease_record_clear(&r);
	/* reconcile finishes it from what the branch holds */
	out = corral(&status, NULL, "reconcile");
	ck_assert_msg(status == 0, "reconcile: %s", out);
	ck_assert_msg(strstr(out, "finished") != NULL, "%s", out);
	free(out);
	r = record(id);
	ck_assert_int_eq(r.state, LEASE_STATE_APPLIED);
	ck_assert_int_eq(r.cleanup, LEASE_CLEANUP_CONFIRMED);
	lease_record_clear(&r);
	ck_assert_int_eq(open_intent(id, NULL, 0), 0);
	ck_assert_int_eq(receipts_of(id, "applied"), 1);
	ck_assert_int_eq(lease_receipt_verify(st, id, NULL, NULL), 0);
	tip_of("side", t);
	ck_assert_str_eq(t, cm);
	/* and again: nothing left to do */
	reconcile_ok();
	ck_assert_int_eq(receipts_of(id, "applied"), 1);
}
END_TEST

START_TEST(test_apply_killed_after_intent)
{
	char id[LEASE_ID_LEN + 1], cm[41], t[41];
	struct lease_record r;
	char *out;
	int status;

	make_branch("side");
	ready_lease(id, "killed early\n");
	commit_of(id, cm);
	out = corral(&status, "CORRAL_FAULT=apply.intent.after",
	    "apply %s --into side", id);
	ck_assert_msg(status == 137, "exit %d: %s", status, out);
	free(out);
	tip_of("side", t);
	ck_assert_str_eq(t, c[2]);
	ck_assert_int_eq(open_intent(id, NULL, 0), 1);
	/* a second apply will not stack on an unsettled intent */
	out = corral(&status, NULL, "apply %s --into side", id);
	ck_assert_int_eq(status, 1);
	ck_assert_msg(strstr(out, "reconcile") != NULL, "%s", out);
	free(out);
	tip_of("side", t);
	ck_assert_str_eq(t, c[2]);
	/* reconcile undoes it; the lease can be applied again */
	out = corral(&status, NULL, "reconcile");
	ck_assert_msg(status == 0 && strstr(out, "undone") != NULL, "%s",
	    out);
	free(out);
	ck_assert_int_eq(open_intent(id, NULL, 0), 0);
	r = record(id);
	ck_assert_int_eq(r.state, LEASE_STATE_RESULT_READY);
	lease_record_clear(&r);
	ck_assert_int_eq(receipts_of(id, "apply_undone"), 1);
	out = corral(&status, NULL, "apply %s --into side", id);
	ck_assert_msg(status == 0, "apply: %s", out);
	free(out);
	tip_of("side", t);
	ck_assert_str_eq(t, cm);
	ck_assert_int_eq(lease_receipt_verify(st, id, NULL, NULL), 0);
}
END_TEST

/*
 * SIGKILL at the entry of the first rename of `corral apply` (strace):
 * libgit2 has written refs/heads/side.lock and is about to rename it over
 * the branch. The lock blocks git itself until reconcile removes it.
 */
START_TEST(test_apply_killed_holding_target_lock)
{
	char id[LEASE_ID_LEN + 1], cm[41], t[41], *lock, *out, *bin;
	struct lease_record r;
	int status;

	make_branch("side");
	ready_lease(id, "locked\n");
	commit_of(id, cm);
	bin = cu_corral_bin();
	{
		char cmd[4096];

		snprintf(cmd, sizeof cmd, TRACED "strace -f -qq -o /dev/null "
		    "-e trace=rename,renameat,renameat2 -e inject=rename,"
		    "renameat,renameat2:signal=SIGKILL:when=1 '%s' apply %s "
		    "--into side 2>&1", bin, id);
		out = cu_run(cmd, &status);
	}
	free(bin);
	ck_assert_msg(status == 137, "exit %d: %s", status, out);
	free(out);
	lock = lt_fmt("%s/%s", repo, ".git/refs/heads/side.lock");
	ck_assert_int_eq(access(lock, F_OK), 0);
	tip_of("side", t);
	ck_assert_str_eq(t, c[2]);
	/* git is blocked by it */
	out = lt_fmt("cd '%s' && git update-ref refs/heads/side HEAD 2>&1%s",
	    repo, "");
	free(cu_run(out, &status));
	ck_assert_int_ne(status, 0);
	reconcile_ok();
	ck_assert_int_eq(access(lock, F_OK), -1);
	ck_assert_int_eq(open_intent(id, NULL, 0), 0);
	r = record(id);
	ck_assert_int_eq(r.state, LEASE_STATE_RESULT_READY);
	lease_record_clear(&r);
	tip_of("side", t);
	ck_assert_str_eq(t, c[2]);
	/* git works again, and so does apply */
	free(cu_run(out, &status));
	ck_assert_int_eq(status, 0);
	free(out);
	out = lt_fmt("cd '%s' && git update-ref refs/heads/side %s", repo,
	    c[2]);
	free(cu_run(out, &status));
	ck_assert_int_eq(status, 0);
	free(out);
	out = corral(&status, NULL, "apply %s --into side", id);
	ck_assert_msg(status == 0, "apply: %s", out);
	free(out);
	tip_of("side", t);
	ck_assert_str_eq(t, cm);
	free(lock);
}
END_TEST

/* ---- an unwritable journal ----------------------------------------------- */

START_TEST(test_apply_journal_locked)
{
	char id[LEASE_ID_LEN + 1], cm[41], t[41], *db, *out;
	struct lease_record r;
	sqlite3 *h;
	int status;

	make_branch("side");
	ready_lease(id, "locked out\n");
	commit_of(id, cm);
	db = lt_fmt("%s/%s", state, "corral.db");
	ck_assert_int_eq(sqlite3_open(db, &h), SQLITE_OK);
	free(db);
	/* another process in a write transaction for the whole apply */
	ck_assert_int_eq(sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL),
	    SQLITE_OK);
	out = corral(&status, NULL, "apply %s --into side", id);
	ck_assert_int_eq(status, 1);
	ck_assert_msg(strstr(out, "locked") != NULL, "%s", out);
	free(out);
	ck_assert_int_eq(sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL),
	    SQLITE_OK);
	sqlite3_close(h);
	/* the branch never moved: nothing to settle */
	tip_of("side", t);
	ck_assert_str_eq(t, c[2]);
	ck_assert_int_eq(open_intent(id, NULL, 0), 0);
	r = record(id);
	ck_assert_int_eq(r.state, LEASE_STATE_RESULT_READY);
	lease_record_clear(&r);
	out = corral(&status, NULL, "apply %s --into side", id);
	ck_assert_msg(status == 0, "apply: %s", out);
	free(out);
	tip_of("side", t);
	ck_assert_str_eq(t, cm);
}
END_TEST

START_TEST(test_apply_disk_full)
{
	char id[LEASE_ID_LEN + 1], cm[41], t[41], *fill, *out, buf[65536];
	struct lease_record r;
	int status, fd;
	ssize_t w;

	/* the state directory on a small filesystem of its own */
	lease_store_close(st);
	st = NULL;
	lt_private_tmpfs(state, "size=32m,mode=0700");
	open_store();
	make_branch("side");
	ready_lease(id, "full\n");
	commit_of(id, cm);
	/* the journal stays open here (as the console keeps it) */
	fill = lt_fmt("%s/%s", state, "ballast");
	ck_assert_int_ge(fd = open(fill, O_WRONLY | O_CREAT, 0600), 0);
	memset(buf, 'x', sizeof buf);
	while ((w = write(fd, buf, sizeof buf)) > 0)
		;
	ck_assert_int_eq(errno, ENOSPC);
	while (write(fd, buf, 1) > 0)
		;
	close(fd);
	out = corral(&status, NULL, "apply %s --into side", id);
	ck_assert_int_eq(status, 1);
	ck_assert_msg(strstr(out, "disk full") != NULL, "%s", out);
	free(out);
	tip_of("side", t);
	ck_assert_str_eq(t, c[2]);
	/* space again: nothing was lost, the apply goes through */
	ck_assert_int_eq(unlink(fill), 0);
	free(fill);
	ck_assert_int_eq(open_intent(id, NULL, 0), 0);
	r = record(id);
	ck_assert_int_eq(r.state, LEASE_STATE_RESULT_READY);
	lease_record_clear(&r);
	reconcile_ok();
	out = corral(&status, NULL, "apply %s --into side", id);
	ck_assert_msg(status == 0, "apply: %s", out);
	free(out);
	tip_of("side", t);
	ck_assert_str_eq(t, cm);
	ck_assert_int_eq(lease_receipt_verify(st, id, NULL, NULL), 0);
	lease_store_close(st);
	st = NULL;
	ck_assert_int_eq(umount2(state, MNT_DETACH), 0);
}
END_TEST

/* ---- what a killed corral leaves in .git --------------------------------- */

static bool
exists(const char *path)
{
	struct stat sb;

	return lstat(path, &sb) == 0;
}

START_TEST(test_apply_git_leftovers)
{
	char a[LEASE_ID_LEN + 1], b[LEASE_ID_LEN + 1], n[LEASE_ID_LEN + 1];
	char *wa, *wb, *la, *op_lock, *op_wt, *out, *cmd;
	struct lease_record r;
	int status;

	ready_lease(a, "one\n");
	ready_lease(b, "two\n");
	/* the operator's own lock and worktree, which corral never touches */
	op_lock = lt_fmt("%s/%s", repo, ".git/refs/heads/mine.lock");
	ck_assert_int_eq(cu_write_file(op_lock, "x\n", 2), 0);
	op_wt = lt_fmt("%s/%s", tmp, "opwt");
	cmd = lt_fmt("cd '%s' && git worktree add -q -b opb '%s' 2>&1", repo,
	    op_wt);
	free(cu_run(cmd, &status));
	ck_assert_int_eq(status, 0);
	free(cmd);
	/* reject both, each killed between the worktree and its admin entry */
	out = corral(&status, "CORRAL_FAULT=teardown.worktree.dir_removed",
	    "reject %s", a);
	ck_assert_msg(status == 137, "exit %d: %s", status, out);
	free(out);
	out = corral(&status, "CORRAL_FAULT=teardown.worktree.dir_removed",
	    "reject %s", b);
	ck_assert_msg(status == 137, "exit %d: %s", status, out);
	free(out);
	wa = lt_fmt("%s/.git/worktrees/%s", repo, a);
	wb = lt_fmt("%s/.git/worktrees/%s", repo, b);
	ck_assert(exists(wa) && exists(wb));
	/* a kill around corral/<a> leaves its lock */
	la = lt_fmt("%s/.git/refs/heads/corral/%s.lock", repo, a);
	ck_assert_int_eq(cu_write_file(la, c[2], 40), 0);
	reconcile_ok();
	/* only corral's own are gone; the worktree counts gone only now */
	ck_assert(!exists(wa));
	ck_assert(!exists(wb));
	ck_assert(!exists(la));
	ck_assert(exists(op_lock));
	cmd = lt_fmt("%s/.git/worktrees/%s", repo, "opwt");
	ck_assert(exists(cmd));
	free(cmd);
	ck_assert(exists(op_wt));
	r = record(a);
	ck_assert_int_eq(r.state, LEASE_STATE_REJECTED);
	ck_assert_int_eq(r.cleanup, LEASE_CLEANUP_CONFIRMED);
	lease_record_clear(&r);
	/* gc and new work */
	out = corral(&status, NULL, "gc %s", a);
	ck_assert_msg(status == 0, "gc: %s", out);
	free(out);
	out = corral(&status, NULL, "gc %s", b);
	ck_assert_msg(status == 0, "gc: %s", out);
	free(out);
	ck_assert_int_eq(lease_record_get(st, a, &r), LEASE_ENOTFOUND);
	ready_lease(n, "three\n");
	ck_assert(exists(op_lock));
	free(wa);
	free(wb);
	free(la);
	free(op_lock);
	free(op_wt);
}
END_TEST

/* ---- the crash-point sweep ----------------------------------------------- */

/*
 * Every syscall that changes the repository, the journal or the state
 * directory. strace counts injections per syscall name, so the kth of
 * them in a run is "the jth call of its name", found in a traced run.
 */
#define SWEEP_SET "rename,renameat,renameat2,unlink,unlinkat,mkdir,mkdirat," \
	"rmdir,write,pwrite64,pwritev,pwritev2,fsync,fdatasync,ftruncate," \
	"fallocate,link,linkat,symlink,symlinkat,chmod,fchmod,fchmodat"
#define SWEEP_MAX 4096

struct sweep {
	char (*name)[24];	/* the state-changing syscalls, in order */
	size_t n;
	bool own;		/* the command's own, not its children's */
	size_t cur;		/* the kill point at work */
	int exit;		/* the command's exit when not killed */
	int killed, finished, undone, applied_first;	/* counts */
};

/* corral new also mounts the workspace image and sets up its loop device. */
#define SWEEP_SET_NEW SWEEP_SET ",mount,umount2,ioctl"

/* The state-changing syscalls of `corral ARGS`, in order, into sw. */
static void
sweep_trace(struct sweep *sw, const char *args, const char *set)
{
	char *bin = cu_corral_bin(), *log = lt_fmt("%s/%s", tmp, "trace.log");
	char cmd[4096], line[4096], *p, *q;
	FILE *f;
	int status;

	snprintf(cmd, sizeof cmd, TRACED "strace %s-qq -o '%s' -e trace=%s "
	    "'%s' %s >/dev/null 2>&1", sw->own ? "" : "-f ", log, set, bin,
	    args);
	free(bin);
	free(cu_run(cmd, &status));
	ck_assert_msg(status == sw->exit, "traced %s: exit %d", args, status);
	sw->name = calloc(SWEEP_MAX, sizeof *sw->name);
	ck_assert_ptr_nonnull(sw->name);
	ck_assert_ptr_nonnull(f = fopen(log, "r"));
	while (fgets(line, sizeof line, f) != NULL && sw->n < SWEEP_MAX) {
		if (strstr(line, "resumed>") != NULL || line[0] == '+' ||
		    strstr(line, "--- ") != NULL)
			continue;
		p = line;
		while (*p >= '0' && *p <= '9')
			p++;
		while (*p == ' ')
			p++;
		if ((q = strchr(p, '(')) == NULL || q - p >= 24)
			continue;
		memcpy(sw->name[sw->n], p, (size_t)(q - p));
		sw->name[sw->n][q - p] = '\0';
		sw->n++;
	}
	fclose(f);
	free(log);
}

/* No lock file anywhere under the repository's .git. */
static void
no_locks(int k)
{
	char *cmd = lt_fmt("find '%s/.git' -name '*.lock'%s", repo, "");
	char *out = cu_run(cmd, NULL);

	ck_assert_msg(out[0] == '\0', "kill %d: lock files left: %s", k, out);
	free(out);
	free(cmd);
}

/* The kth syscall of the trace as "NAME #j" for strace's when=j. */
static size_t
sweep_nth(const struct sweep *sw, size_t k)
{
	size_t i, j = 0;

	for (i = 0; i <= k; i++)
		j += strcmp(sw->name[i], sw->name[k]) == 0;
	return j;
}

/* `corral ARGS` under strace, SIGKILLed at the entry of trace entry k. */
static void
sweep_kill(struct sweep *sw, size_t k, const char *args)
{
	char cmd[4096], *bin = cu_corral_bin();
	size_t j = sweep_nth(sw, k);
	int status;

	snprintf(cmd, sizeof cmd, TRACED "strace %s-qq -o /dev/null "
	    "-e trace=%s -e "
	    "inject=%s:signal=SIGKILL:when=%zu '%s' %s >/dev/null 2>&1",
	    sw->own ? "" : "-f ", sw->name[k], sw->name[k], j, bin, args);
	free(bin);
	free(cu_run(cmd, &status));
	ck_assert_msg(status == 137 || status == sw->exit, "kill %zu (%s "
	    "#%zu): exit %d", k, sw->name[k], j, status);
	sw->killed += status == 137;
}

/* corral reconcile, counting the intents it settled. */
static void
sweep_reconcile(struct sweep *sw, size_t k, const char *id)
{
	int status;
	char *out = corral(&status, NULL, "reconcile");

	ck_assert_msg(status == 0, "kill %zu: reconcile: %s", k, out);
	sw->finished += strstr(out, " finished: the branch holds") != NULL;
	sw->undone += strstr(out, " undone: the branch holds") != NULL;
	ck_assert_msg(open_intent(id, NULL, 0) == 0, "kill %zu (%s): intent "
	    "left open: %s", k, sw->name[k], out);
	free(out);
}

/* Neither review worktree nor git's entry for it is left. */
static void
no_worktree(size_t k, const char *id)
{
	char *p = lease_path_worktree(state, id);

	ck_assert_msg(!exists(p), "kill %zu: %s left", k, p);
	free(p);
	p = lt_fmt("%s/.git/worktrees/%s", repo, id);
	ck_assert_msg(!exists(p), "kill %zu: %s left", k, p);
	free(p);
}

enum sweep_cmd { SWEEP_APPLY, SWEEP_REJECT, SWEEP_GC, SWEEP_REBASE };

/*
 * Branch b gains a commit of a file of its own (other.txt), so an apply
 * into it takes the rebase path: the patch is re-verified on top of it,
 * corral/<id> moves to a new commit and the lease goes back to review.
 */
static void
advance(const char *b)
{
	char cmd[2048];
	int status;

	snprintf(cmd, sizeof cmd, "cd '%s' && export GIT_AUTHOR_NAME=t "
	    "GIT_AUTHOR_EMAIL=t@example.invalid GIT_COMMITTER_NAME=t "
	    "GIT_COMMITTER_EMAIL=t@example.invalid && "
	    "o=$(echo other | git hash-object -w --stdin) && "
	    "t=$( (git ls-tree %s; printf '100644 blob %%s\tother.txt\n' "
	    "\"$o\") | git mktree) && "
	    "n=$(git commit-tree \"$t\" -p %s -m advance) && "
	    "git update-ref refs/heads/%s \"$n\" 2>&1", repo, b, b, b);
	free(cu_run(cmd, &status));
	ck_assert_int_eq(status, 0);
}

/* A lease ready for cmd; for apply, b is its target branch. */
static void
sweep_lease(enum sweep_cmd cmd, char id[LEASE_ID_LEN + 1], const char *b,
    char args[256])
{
	if (cmd == SWEEP_APPLY || cmd == SWEEP_REBASE)
		make_branch(b);
	ready_lease(id, "swept\n");
	if (cmd == SWEEP_GC)
		ck_assert_int_eq(lease_result_reject(st, state, id), 0);
	if (cmd == SWEEP_REBASE)
		advance(b);
	if (cmd == SWEEP_APPLY || cmd == SWEEP_REBASE)
		snprintf(args, 256, "apply %s --into %s", id, b);
	else
		snprintf(args, 256, "%s %s", cmd == SWEEP_GC ? "gc" : "reject",
		    id);
}

/*
 * After a kill of an apply that rebases onto an advanced target, and
 * reconcile: the target never moved; the result names the old commit cm
 * (the move put back: corral/<id> at cm, apply rebases again) or the new
 * one on top of the target (corral/<id> there, back to review); either
 * way, review and apply then integrate it.
 */
static void
sweep_rebased(struct sweep *sw, size_t k, const char *id, const char *b,
    const char *cm, const char *args)
{
	char now[41], t[41], tb[41], *out;
	struct lease_record r;
	json_t *doc = NULL;
	int status, rc;

	tip_of(b, tb);
	ck_assert_int_eq(lease_receipt_verify(st, id, NULL, NULL), 0);
	r = record(id);
	ck_assert_msg(r.state == LEASE_STATE_RESULT_READY, "kill %zu (%s): "
	    "%s", k, sw->name[k], lease_fsm_state_name(r.state));
	lease_record_clear(&r);
	commit_of(id, now);
	snprintf(t, sizeof t, "corral/%s", id);
	tip_of(t, t);
	ck_assert_msg(strcmp(t, now) == 0, "kill %zu (%s): corral/%s at "
	    "%.12s, the result names %.12s", k, sw->name[k], id, t, now);
	no_locks((int)k);
	if (strcmp(now, cm) == 0) {
		sw->undone++;
		out = corral(&status, NULL, "%s", args);
		ck_assert_msg(status == 1 && strstr(out, "review it again") !=
		    NULL, "kill %zu (%s): %s again: exit %d: %s", k,
		    sw->name[k], args, status, out);
		free(out);
		commit_of(id, now);
	} else
		sw->finished++;
	ck_assert_str_ne(now, cm);
	rc = lease_result_review(st, state, id, LEASE_REVIEW_MARK, &doc);
	ck_assert_msg(rc == 0, "kill %zu: review: %s", k,
	    lease_store_errmsg(st));
	json_decref(doc);
	out = corral(&status, NULL, "%s", args);
	ck_assert_msg(status == 0, "kill %zu (%s): apply after: %s", k,
	    sw->name[k], out);
	free(out);
	tip_of(b, t);
	ck_assert_str_eq(t, now);
	ck_assert_str_ne(tb, now);	/* the rebased commit, on top of it */
	sw->applied_first++;
}

/*
 * Kill the command at the entry of its kth state-changing syscall (so
 * after the first k-1), reconcile, and check that the journal, the
 * branches, the worktree and .git agree; a lease left short of the
 * command's end gets there when the command runs again.
 */
static void
sweep_one(struct sweep *sw, enum sweep_cmd cmd, size_t k)
{
	char id[LEASE_ID_LEN + 1], cm[41], t[41], b[32], args[256], *out;
	struct lease_record r;
	int status, done, rc;

	snprintf(b, sizeof b, "sweep-%zu", k);
	sweep_lease(cmd, id, b, args);
	commit_of(id, cm);
	sweep_kill(sw, k, args);
	sweep_reconcile(sw, k, id);
	if (cmd == SWEEP_REBASE) {
		sweep_rebased(sw, k, id, b, cm, args);
		return;
	}
	if (cmd == SWEEP_GC) {
		rc = lease_record_get(st, id, &r);
		ck_assert_msg(rc == 0 || rc == LEASE_ENOTFOUND, "kill %zu: %d",
		    k, rc);
		done = rc == LEASE_ENOTFOUND;
		if (rc == 0) {
			ck_assert_int_eq(r.state, LEASE_STATE_REJECTED);
			lease_record_clear(&r);
			ck_assert_int_eq(lease_receipt_verify(st, id, NULL, NULL),
			    0);
		}
	} else {
		ck_assert_int_eq(lease_receipt_verify(st, id, NULL, NULL), 0);
		r = record(id);
		done = r.state == (cmd == SWEEP_APPLY ? LEASE_STATE_APPLIED :
		    LEASE_STATE_REJECTED);
		ck_assert_msg(done || r.state == LEASE_STATE_RESULT_READY,
		    "kill %zu (%s): %s", k, sw->name[k],
		    lease_fsm_state_name(r.state));
		if (done)
			ck_assert_msg(r.cleanup == LEASE_CLEANUP_CONFIRMED,
			    "kill %zu: cleanup %s", k,
			    lease_fsm_cleanup_name(r.cleanup));
		lease_record_clear(&r);
		if (done)
			no_worktree(k, id);
	}
	if (cmd == SWEEP_APPLY) {
		/* the branch moved if and only if the journal says applied */
		tip_of(b, t);
		ck_assert_msg(strcmp(t, done ? cm : c[2]) == 0, "kill %zu "
		    "(%s): applied %d, branch at %.12s", k, sw->name[k], done,
		    t);
		ck_assert_int_eq(receipts_of(id, "applied"), done);
	}
	no_locks((int)k);
	sw->applied_first += done;
	if (!done) {
		/* nothing is stuck: it goes through now */
		out = corral(&status, NULL, "%s", args);
		ck_assert_msg(status == 0, "kill %zu: %s after: %s", k, args,
		    out);
		free(out);
	}
	if (cmd == SWEEP_APPLY) {
		tip_of(b, t);
		ck_assert_str_eq(t, cm);
	}
	if (cmd == SWEEP_GC) {
		/* nothing of it is left: no row, branch, worktree, directory */
		ck_assert_int_eq(lease_record_get(st, id, &r), LEASE_ENOTFOUND);
		out = lt_fmt("%s/.git/refs/heads/corral/%s", repo, id);
		ck_assert_msg(!exists(out), "kill %zu: %s left", k, out);
		free(out);
		no_worktree(k, id);
		out = lease_path_lease_dir(state, id);
		ck_assert_msg(!exists(out), "kill %zu: %s left", k, out);
		free(out);
	}
}

/*
 * Kill point k this run? CORRAL_SWEEP=all: every one; CORRAL_SWEEP=N:
 * that one alone (to see one again); by default the first head and every
 * 16th after.
 */
static bool
sweep_at(const char *e, bool all, size_t head, size_t k)
{
	if (e != NULL && *e >= '0' && *e <= '9')
		return k == (size_t)strtoul(e, NULL, 10);
	return all || k < head || k % 16 == 0;
}

/* one(sw, k, ud) at each kill point this run takes; how many it took. */
static size_t
sweep_each(struct sweep *sw, size_t head,
    void (*one)(struct sweep *, size_t, void *), void *ud)
{
	const char *e = getenv("CORRAL_SWEEP");
	bool all = e != NULL && strcmp(e, "all") == 0;
	size_t k, runs = 0;

	for (k = 0; k < sw->n; k++) {
		if (!sweep_at(e, all, head, k))
			continue;
		one(sw, k, ud);
		runs++;
	}
	return runs;
}

static void
sweep_cmd_one(struct sweep *sw, size_t k, void *ud)
{
	sweep_one(sw, *(enum sweep_cmd *)ud, k);
}

/*
 * CORRAL_SWEEP=all kills at every state-changing syscall (make stress);
 * by default the first `head` (the locks, the journal, the move) and
 * every 16th after (the teardown).
 */
static void
sweep_run(enum sweep_cmd cmd, size_t head, const char *what)
{
	char id[LEASE_ID_LEN + 1], args[256];
	struct sweep sw;
	size_t runs;

	memset(&sw, 0, sizeof sw);
	sw.exit = cmd == SWEEP_REBASE ? 1 : 0;
	/*
	 * The first lease's quarantine holds objects no later one writes
	 * (they are in the repository by then): its trace would have kill
	 * points the swept runs never reach. Trace the second.
	 */
	sweep_lease(cmd, id, "warm", args);
	{
		int st0;

		free(corral(&st0, NULL, "%s", args));
		ck_assert_int_eq(st0, sw.exit);
	}
	sweep_lease(cmd, id, "traced", args);
	sweep_trace(&sw, args, SWEEP_SET);
	ck_assert_uint_gt(sw.n, 10);
	runs = sweep_each(&sw, head, sweep_cmd_one, &cmd);
	if (cmd == SWEEP_REBASE)
		fprintf(stderr, "%s crash sweep: %zu state-changing syscalls, "
		    "%zu kill points, %d killed; after reconcile %d kept the "
		    "old commit (the move undone or never made) and %d had the "
		    "rebased one; %d then reviewed and applied\n", what, sw.n,
		    runs, sw.killed, sw.undone, sw.finished, sw.applied_first);
	else
		fprintf(stderr, "%s crash sweep: %zu state-changing syscalls, "
		    "%zu kill points, %d killed; reconcile finished %d intents "
		    "and undid %d; %d done after reconcile, %zu left short and "
		    "done again\n", what, sw.n, runs, sw.killed, sw.finished,
		    sw.undone, sw.applied_first, runs -
		    (size_t)sw.applied_first);
	if (cmd == SWEEP_REBASE)
		ck_assert_int_eq(sw.applied_first, (int)runs);
	/* a point the traced run alone reached (a directory made once) */
	ck_assert_int_ge(sw.killed, (int)runs * 4 / 5);
	free(sw.name);
}

START_TEST(test_apply_crash_sweep)
{
	sweep_run(SWEEP_APPLY, 48, "apply");
}
END_TEST

START_TEST(test_apply_crash_sweep_reject)
{
	sweep_run(SWEEP_REJECT, 24, "reject");
}
END_TEST

START_TEST(test_apply_crash_sweep_gc)
{
	sweep_run(SWEEP_GC, 24, "gc");
}
END_TEST

START_TEST(test_apply_crash_sweep_rebase)
{
	sweep_run(SWEEP_REBASE, 48, "apply (rebase)");
}
END_TEST

/* ---- the crash-point sweep of corral new ---------------------------------- */

/*
 * `corral new` runs the lease's provisioning itself (the journal, the
 * branch, the review worktree, the workspace, the uid slot, the cgroups,
 * the bounded image and its mount), then starts the holder, which goes on
 * without it. It is traced without -f: the kth state-changing syscall is
 * its own, never the holder's or mkfs's. The agent is /bin/true.
 */
#define NEW_WAIT_MS 120000

/* The IDs of the leases named name (each lease once: at most one). */
static int
leases_named(const char *name, char id[LEASE_ID_LEN + 1])
{
	struct lease_record *v = NULL;
	size_t n = 0;
	int found = 0;

	ck_assert_int_eq(lease_record_list(st, LEASE_LIST_ALL, &v, &n), 0);
	for (size_t i = 0; i < n; i++) {
		if (v[i].name == NULL || strcmp(v[i].name, name) != 0)
			continue;
		if (found++ == 0)
			snprintf(id, LEASE_ID_LEN + 1, "%s", v[i].id);
	}
	lease_record_list_free(v, n);
	return found;
}

/* The lease's holder is gone and it is past running (or deadline). */
static struct lease_record
settled_lease(size_t k, const char *id)
{
	struct lease_record r;
	int i;

	for (i = 0; i < NEW_WAIT_MS / 50; i++) {
		r = record(id);
		if (r.state != LEASE_STATE_PROVISIONING &&
		    r.state != LEASE_STATE_RUNNING && (r.holder_pid <= 0 ||
		    !lease_proc_alive((pid_t)r.holder_pid, r.holder_start)))
			return r;
		lease_record_clear(&r);
		usleep(50000);
	}
	r = record(id);
	ck_assert_msg(0, "kill %zu: lease %s still %s after %d s", k, id,
	    lease_fsm_state_name(r.state), NEW_WAIT_MS / 1000);
	return r;
}

/* Lines of `cmd` output naming needle (none expected): "" or them. */
static void
none_named(size_t k, const char *what, const char *cmd)
{
	char *out = cu_run(cmd, NULL);

	ck_assert_msg(out[0] == '\0', "kill %zu: %s left: %s", k, what, out);
	free(out);
}

/*
 * Nothing of lease id anywhere: its row, branch corral/<id>, review
 * worktree and git's entry, lease directory, uid slot, cgroups, mounts
 * and loop devices.
 */
static void
nothing_of(size_t k, const char *id)
{
	struct lease_record r;
	char *p, cmd[2048];

	ck_assert_int_eq(lease_record_get(st, id, &r), LEASE_ENOTFOUND);
	p = lt_fmt("%s/.git/refs/heads/corral/%s", repo, id);
	ck_assert_msg(!exists(p), "kill %zu: %s left", k, p);
	free(p);
	no_worktree(k, id);
	p = lease_path_lease_dir(state, id);
	ck_assert_msg(!exists(p), "kill %zu: %s left", k, p);
	free(p);
	snprintf(cmd, sizeof cmd, "cd '%s' && git for-each-ref "
	    "refs/heads/corral/%s", repo, id);
	none_named(k, "branch", cmd);
	snprintf(cmd, sizeof cmd, "grep -ls '^%s' /run/corral/uids/*/owner",
	    id);
	none_named(k, "uid slot", cmd);
	snprintf(cmd, sizeof cmd, "find /sys/fs/cgroup -maxdepth 6 -type d "
	    "-name 'lease-%s*' 2>/dev/null", id);
	none_named(k, "cgroup", cmd);
	snprintf(cmd, sizeof cmd, "grep -F ' %s/' /proc/self/mountinfo",
	    state);
	none_named(k, "mount", cmd);
	snprintf(cmd, sizeof cmd, "grep -lsF '%s/' "
	    "/sys/block/loop*/loop/backing_file", state);
	none_named(k, "loop device", cmd);
}

/*
 * Kill corral new at its kth state-changing syscall, reconcile, and
 * check: the lease exists at most once; it is never left provisioning;
 * once its holder (if it started) is done, reject and gc take it and
 * leave nothing of it. *made counts the kills that left a lease row.
 */
static void sweep_new_end(struct sweep *, const char *name);

static void
sweep_new_one(struct sweep *sw, size_t k, void *ud)
{
	char id[LEASE_ID_LEN + 1], name[32], args[512], *out;
	int *made = ud, status, n;

	sw->cur = k;
	snprintf(name, sizeof name, "sweep-%zu", k);
	snprintf(args, sizeof args, "new --repo '%s' --name %s -- /bin/true",
	    repo, name);
	sweep_kill(sw, k, args);
	out = corral(&status, NULL, "reconcile");
	ck_assert_msg(status == 0, "kill %zu: reconcile: %s", k, out);
	free(out);
	no_locks((int)k);
	if ((n = leases_named(name, id)) == 0) {
		/* killed before the row: nothing was made for it */
		return;
	}
	ck_assert_msg(n == 1, "kill %zu (%s): %d leases named %s", k,
	    sw->name[k], n, name);
	(*made)++;
	sweep_new_end(sw, name);
}

/* The lease named name, settled, rejected, gc'd: nothing of it is left. */
static void
sweep_new_end(struct sweep *sw, const char *name)
{
	char id[LEASE_ID_LEN + 1], *out;
	struct lease_record r;
	size_t k = sw->cur;
	int status;

	ck_assert_int_eq(leases_named(name, id), 1);
	r = settled_lease(k, id);
	ck_assert_msg(r.state == LEASE_STATE_RESULT_READY ||
	    r.state == LEASE_STATE_FAILED, "kill %zu (%s): %s", k,
	    sw->name[k], lease_fsm_state_name(r.state));
	if (r.state == LEASE_STATE_FAILED)
		sw->undone++;
	else
		sw->finished++;
	lease_record_clear(&r);
	ck_assert_int_eq(lease_receipt_verify(st, id, NULL, NULL), 0);
	/* a second reconcile finds it settled; reject and gc end it */
	out = corral(&status, NULL, "reconcile");
	ck_assert_msg(status == 0, "kill %zu: reconcile: %s", k, out);
	free(out);
	r = record(id);
	if (r.state == LEASE_STATE_RESULT_READY) {
		out = corral(&status, NULL, "reject %s", id);
		ck_assert_msg(status == 0, "kill %zu: reject: %s", k, out);
		free(out);
	}
	lease_record_clear(&r);
	out = corral(&status, NULL, "gc %s", id);
	ck_assert_msg(status == 0, "kill %zu (%s): gc: %s", k, sw->name[k],
	    out);
	free(out);
	nothing_of(k, id);
	no_locks((int)k);
	sw->applied_first++;
}

START_TEST(test_apply_crash_sweep_new)
{
	char args[512];
	struct sweep sw;
	size_t runs;
	int made = 0;

	memset(&sw, 0, sizeof sw);
	sw.own = true;	/* corral new's own syscalls, not the holder's */
	snprintf(args, sizeof args, "new --repo '%s' --name traced -- "
	    "/bin/true", repo);
	sweep_trace(&sw, args, SWEEP_SET_NEW);
	ck_assert_uint_gt(sw.n, 50);
	sweep_new_end(&sw, "traced");
	sw.undone = sw.finished = sw.applied_first = 0;
	runs = sweep_each(&sw, 24, sweep_new_one, &made);
	fprintf(stderr, "new crash sweep: %zu state-changing syscalls, %zu "
	    "kill points, %d killed; %d left a lease (%d failed, %d with a "
	    "result), each reconciled, rejected and gc'd with nothing left "
	    "(%d)\n", sw.n, runs, sw.killed, made, sw.undone, sw.finished,
	    sw.applied_first);
	ck_assert_int_ge(sw.killed, (int)runs * 4 / 5);
	ck_assert_int_eq(sw.applied_first, made);
	free(sw.name);
}
END_TEST

/* ---- the workspace released once the result is a commit (issue 17) ------- */

/* The result's "workspace": "releasing", "released" or "" (kept). */
static void
ws_state(const char *id, char out[16])
{
	struct lease_record r = record(id);
	json_t *j = json_loads(r.result, 0, NULL);
	const char *v;

	ck_assert_ptr_nonnull(j);
	v = json_string_value(json_object_get(j, "workspace"));
	snprintf(out, 16, "%s", v != NULL ? v : "");
	json_decref(j);
	lease_record_clear(&r);
}

/* The workspace's journal row is removed (and was recorded). */
static bool
ws_row_removed(const char *id)
{
	struct lease_resource_row *v = NULL;
	char *ws = lease_path_workspace(state, id);
	size_t n = 0;
	int rows = 0, removed = 0;

	ck_assert_int_eq(lease_resource_list(st, id, &v, &n), 0);
	for (size_t i = 0; i < n; i++) {
		if (v[i].kind != LEASE_RES_WORKSPACE ||
		    strcmp(v[i].identity, ws) != 0)
			continue;
		rows++;
		removed += v[i].state == LEASE_RS_REMOVED;
	}
	lease_resource_list_free(v, n);
	free(ws);
	return rows == 1 && removed == 1;
}

/*
 * Released, and the operator loses nothing: the journal says so once,
 * the chain verifies, review and apply (into b) work from the commit.
 */
static void
released_then_applied(const char *what, const char *id, const char *b)
{
	char w[16], cm[41], t[41], *ws = lease_path_workspace(state, id), *out;
	struct lease_record r;
	json_t *doc = NULL;
	int status;

	ck_assert_msg(!exists(ws), "%s: %s left", what, ws);
	free(ws);
	ws_state(id, w);
	ck_assert_msg(strcmp(w, "released") == 0, "%s: workspace '%s'", what,
	    w);
	ck_assert_msg(ws_row_removed(id), "%s: its row is not removed", what);
	ck_assert_int_eq(lease_receipt_verify(st, id, NULL, NULL), 0);
	ck_assert_int_eq(receipts_of(id, "workspace_release"), 1);
	ck_assert_int_eq(receipts_of(id, "workspace_released"), 1);
	r = record(id);
	ck_assert_int_eq(r.state, LEASE_STATE_RESULT_READY);
	lease_record_clear(&r);
	ck_assert_msg(lease_result_review(st, state, id, LEASE_REVIEW_MARK,
	    &doc) == 0, "%s: review: %s", what, lease_store_errmsg(st));
	json_decref(doc);
	commit_of(id, cm);
	make_branch(b);
	out = corral(&status, NULL, "apply %s --into %s", id, b);
	ck_assert_msg(status == 0, "%s: apply: %s", what, out);
	free(out);
	tip_of(b, t);
	ck_assert_str_eq(t, cm);
}

START_TEST(test_apply_release_workspace)
{
	char id[LEASE_ID_LEN + 1], w[16], *ws;

	ready_lease(id, "released\n");
	ws = lease_path_workspace(state, id);
	ck_assert(exists(ws));
	ws_state(id, w);
	ck_assert_str_eq(w, "");
	ck_assert_msg(lease_release_workspace(st, state, id, "test") == 0,
	    "%s", lease_store_errmsg(st));
	/* again: nothing more to do, nothing more journaled */
	ck_assert_int_eq(lease_release_workspace(st, state, id, "test"), 0);
	free(ws);
	released_then_applied("release", id, "rel-0");
	/* a rejected lease's workspace is teardown's, never released */
	ready_lease(id, "rejected\n");
	ck_assert_int_eq(lease_result_reject(st, state, id), 0);
	ck_assert_int_eq(lease_release_workspace(st, state, id, "test"), 0);
	ck_assert_int_eq(receipts_of(id, "workspace_release"), 0);
}
END_TEST

/* A child's release of id, killed at fault point (or run to its end). */
static int
release_child(const char *id, const char *point)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct lease_store *cs;
		char *db = lt_fmt("%s/%s", state, "corral.db");

		if (point != NULL)
			setenv("CORRAL_FAULT", point, 1);
		if (lease_store_open(&cs, db) != 0)
			_exit(2);
		_exit(lease_release_workspace(cs, state, id, "test") == 0 ?
		    0 : 3);
	}
	return lt_wait(pid);
}

static const char *const release_points[] = {
	"release.workspace.before", "release.workspace.unmounted",
	"release.workspace.removed", "release.workspace.after",
};

/* Killed at each step of a release: reconcile finishes it. */
START_TEST(test_apply_release_killed)
{
	const char *point = release_points[_i];
	char id[LEASE_ID_LEN + 1], w[16], b[32], *out;
	int status;

	ready_lease(id, "killed\n");
	ck_assert_msg(release_child(id, point) == 137, "fault %s did not "
	    "fire", point);
	ws_state(id, w);
	ck_assert_str_eq(w, _i < 3 ? "releasing" : "released");
	out = corral(&status, NULL, "reconcile");
	ck_assert_msg(status == 0, "%s: reconcile: %s", point, out);
	ck_assert_msg(_i == 3 || strstr(out, "interrupted release finished") !=
	    NULL, "%s: reconcile said: %s", point, out);
	free(out);
	snprintf(b, sizeof b, "killed-%d", _i);
	released_then_applied(point, id, b);
}
END_TEST

/*
 * The resume swept: a release killed after its intent, then `corral
 * reconcile` killed at each of its state-changing syscalls, then
 * reconcile again: released, journaled once, applied.
 */
static void
sweep_release_one(struct sweep *sw, size_t k, void *ud)
{
	char id[LEASE_ID_LEN + 1], b[32];

	(void)ud;
	ready_lease(id, "swept\n");
	ck_assert_int_eq(release_child(id, "release.workspace.before"), 137);
	sweep_kill(sw, k, "reconcile");
	sweep_reconcile(sw, k, id);
	snprintf(b, sizeof b, "rel-sweep-%zu", k);
	released_then_applied(sw->name[k], id, b);
	sw->applied_first++;
}

START_TEST(test_apply_crash_sweep_release)
{
	char id[LEASE_ID_LEN + 1];
	struct sweep sw;
	size_t runs;

	memset(&sw, 0, sizeof sw);
	ready_lease(id, "traced\n");
	ck_assert_int_eq(release_child(id, "release.workspace.before"), 137);
	sweep_trace(&sw, "reconcile", SWEEP_SET);
	ck_assert_uint_gt(sw.n, 5);
	runs = sweep_each(&sw, 24, sweep_release_one, NULL);
	fprintf(stderr, "release crash sweep: %zu state-changing syscalls, "
	    "%zu kill points, %d killed; each released and applied after "
	    "reconcile (%d)\n", sw.n, runs, sw.killed, sw.applied_first);
	ck_assert_int_eq(sw.applied_first, (int)runs);
	ck_assert_int_ge(sw.killed, (int)runs * 4 / 5);
	free(sw.name);
}
END_TEST

Suite *apply_suite(void);

Suite *
apply_suite(void)
{
	Suite *s = suite_create("apply");
	TCase *tc = tcase_create("Races");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_apply_two_into_two);
	tcase_add_test(tc, test_apply_vs_reject);
	tcase_add_test(tc, test_apply_vs_gc);
	suite_add_tcase(s, tc);

	tc = tcase_create("Crashes");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_apply_killed_after_ref_move);
	tcase_add_test(tc, test_apply_killed_after_intent);
	tcase_add_test(tc, test_apply_killed_holding_target_lock);
	tcase_add_test(tc, test_apply_journal_locked);
	tcase_add_test(tc, test_apply_disk_full);
	tcase_add_test(tc, test_apply_git_leftovers);
	tcase_add_test(tc, test_apply_release_workspace);
	tcase_add_loop_test(tc, test_apply_release_killed, 0, 4);
	suite_add_tcase(s, tc);

	tc = tcase_create("Sweep");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 3600);
	tcase_add_test(tc, test_apply_crash_sweep);
	tcase_add_test(tc, test_apply_crash_sweep_reject);
	tcase_add_test(tc, test_apply_crash_sweep_gc);
	tcase_add_test(tc, test_apply_crash_sweep_rebase);
	tcase_add_test(tc, test_apply_crash_sweep_release);
	suite_add_tcase(s, tc);

	tc = tcase_create("SweepNew");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 7200);
	tcase_add_test(tc, test_apply_crash_sweep_new);
	suite_add_tcase(s, tc);
	return s;
}
