/*
 * test_adapters.c: the adapter interface (SPEC 8.1, 6, 9.2): every built-in
 * adapter fills probe, plan, provision, teardown and list; each resource
 * goes through the journaling steps (planned before it exists, created
 * after, removed once gone); bwrap's uid slot and cgroups are made and
 * removed for real and its list names them, scoped to a state directory;
 * the command adapter's hooks take the exact ID; trusted_local makes
 * its tracking cgroup only. Also the slot helpers (find, list, scope) on a private dir.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"
#include "support/check_util.h"

Suite *adapters_suite(void);

#define MAX_STEPS 16

/* What the steps saw: "plan sandbox uid:...", in order. */
struct rec {
	char *v[MAX_STEPS];
	int n;
	int fail_at;	/* step number that fails with -EIO; -1: none */
};

static int
rec_add(struct rec *r, const char *what, const char *kind, const char *ident)
{
	ck_assert_int_lt(r->n, MAX_STEPS);
	ck_assert_int_gt(asprintf(&r->v[r->n], "%s %s %s", what, kind, ident),
	    0);
	return r->n++ == r->fail_at ? -EIO : 0;
}

static int
on_plan(void *ud, const char *kind, const char *ident)
{
	return rec_add(ud, "plan", kind, ident);
}

static int
on_created(void *ud, const char *kind, const char *ident)
{
	return rec_add(ud, "created", kind, ident);
}

static int
on_removed(void *ud, const char *kind, const char *ident)
{
	return rec_add(ud, "removed", kind, ident);
}

static void
rec_init(struct rec *r, struct sbx_steps *s)
{
	memset(r, 0, sizeof *r);
	memset(s, 0, sizeof *s);
	r->fail_at = -1;
	s->plan = on_plan;
	s->created = on_created;
	s->removed = on_removed;
	s->ud = r;
}

static void
rec_clear(struct rec *r)
{
	for (int i = 0; i < r->n; i++)
		free(r->v[i]);
	memset(r, 0, sizeof *r);
}

/* Does the step list begin "what kind" at i? */
static bool
rec_is(const struct rec *r, int i, const char *prefix)
{
	return i < r->n && strncmp(r->v[i], prefix, strlen(prefix)) == 0;
}

static bool
strv_has(char *const *v, const char *s)
{
	for (size_t i = 0; v != NULL && v[i] != NULL; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

START_TEST(test_adapters_table)
{
	size_t n = 0;

	for (; sbx_adapters[n] != NULL; n++) {
		const struct sbx_adapter *a = sbx_adapters[n];

		ck_assert_ptr_nonnull(a->name);
		ck_assert_ptr_nonnull(a->isolation);
		ck_assert(a->probe != NULL);
		ck_assert(a->plan != NULL);
		ck_assert(a->provision != NULL);
		ck_assert(a->teardown != NULL);
		ck_assert(a->list != NULL);
		ck_assert_ptr_eq(sbx_adapters_find(a->name), a);
	}
	ck_assert_uint_eq(n, 3);
	ck_assert_ptr_eq(sbx_adapters_find("command"), &sbx_adapter_command);
	ck_assert_str_eq(sbx_adapter_command.isolation, "operator-asserted");
	ck_assert_ptr_null(sbx_adapters_find("docker"));
	/* the exec zone: bwrap's; a lease of an adapter without one uses it */
	ck_assert(sbx_adapter_bwrap.exec != NULL &&
	    sbx_adapter_bwrap.exec_plan != NULL &&
	    sbx_adapter_bwrap.faketime != NULL);
	ck_assert(sbx_adapter_local.exec == NULL &&
	    sbx_adapter_command.exec == NULL);
	ck_assert_ptr_eq(sbx_adapters_exec("bwrap"), &sbx_adapter_bwrap);
	ck_assert_ptr_eq(sbx_adapters_exec("trusted_local"), &sbx_adapter_bwrap);
	ck_assert_ptr_eq(sbx_adapters_exec("command"), &sbx_adapter_bwrap);
	ck_assert_ptr_eq(sbx_adapters_exec(NULL), &sbx_adapter_bwrap);
}
END_TEST

/*
 * trusted_local's one resource: a tracking cgroup (pids and freezer, no
 * limit) journaled through the steps; the holder's side joins the agent
 * to it, lists and kills what is in it, sparing none (a daemon that left
 * the session is the lease's too); teardown kills and removes it.
 */
START_TEST(test_adapters_local)
{
	const struct sbx_adapter *ad = &sbx_adapter_local;
	struct sbx_provisioned out;
	struct sbx_request req;
	struct sbx_resource res;
	struct sbx_running *run = NULL;
	struct sbx_plan *plan = NULL;
	struct sbx_steps s;
	struct rec r;
	char *argv[] = { "true", NULL };
	char err[256], **ids = NULL, *ident, *scope = cu_tmpdir("local");
	pid_t *pids = NULL, child;
	size_t n = 0;
	int status;

	memset(&req, 0, sizeof req);
	req.id = "20261129-120000-000-0001";
	req.cmd = argv;
	ck_assert_int_eq(ad->provision(&req, NULL, &out, err, sizeof err),
	    -EINVAL);	/* no state directory to scope it to */
	req.scope = scope;
	rec_init(&r, &s);
	memset(&out, 0xff, sizeof out);
	ck_assert_msg(ad->provision(&req, &s, &out, err, sizeof err) == 0,
	    "%s", err);
	ck_assert_str_eq(out.sandbox_id, "");
	ck_assert(!out.has_uid);
	ck_assert_int_eq(r.n, 2);
	ck_assert(rec_is(&r, 0, "plan cgroup v1\n"));
	ck_assert(rec_is(&r, 1, "created cgroup v1\n"));
	ident = strchr(r.v[1], ' ') + strlen(" cgroup ");
	/* it tracks, never limits: no memory or cpu controller */
	ck_assert_ptr_nonnull(strstr(ident, "\npids /sys/fs/cgroup/pids/"));
	ck_assert_ptr_nonnull(strstr(ident, "\nfreezer "));
	ck_assert_ptr_null(strstr(ident, "\nmemory "));
	ck_assert_ptr_null(strstr(ident, "\ncpu"));
	/* the holder's side: the agent joins it before exec */
	res.kind = SBX_RES_CGROUP;
	res.identity = ident;
	ck_assert_msg(ad->attach(&req, &res, 1, NULL, &run, err,
	    sizeof err) == 0, "%s", err);
	ck_assert_int_eq(ad->enter(run, &req, &plan), 0);
	ck_assert_int_eq(plan->ncgroups, 2);
	/* a process of the host pid namespace in it is listed and killed */
	if ((child = fork()) == 0) {
		char path[1200];
		FILE *f;

		signal(SIGTERM, SIG_DFL);	/* not Check's handler */
		for (int i = 0; i < plan->ncgroups; i++) {
			snprintf(path, sizeof path, "%s", plan->cgroup_procs[i]);
			if ((f = fopen(path, "we")) == NULL)
				_exit(2);
			fprintf(f, "%d\n", (int)getpid());
			fclose(f);
		}
		setsid();
		pause();
		_exit(0);
	}
	ck_assert_int_gt(child, 0);
	for (int i = 0; i < 500 && n == 0; i++) {
		free(pids);
		pids = NULL;
		ck_assert_int_eq(ad->procs(run, &pids, &n), 0);
		if (n == 0)
			usleep(10000);
	}
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(pids[0], child);
	ck_assert_int_eq(ad->signal(run, SIGTERM), 1);
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	free(pids);
	sbx_plan_free(plan);
	ad->detach(run);
	/* teardown by exact ID: removed, journaled */
	ck_assert_msg(ad->teardown(&req, &res, 1, &s, err, sizeof err) == 0,
	    "%s", err);
	ck_assert_int_eq(r.n, 3);
	ck_assert(rec_is(&r, 2, "removed cgroup v1\n"));
	ck_assert_int_eq(ad->attach(&req, &res, 1, NULL, &run, err,
	    sizeof err), 0);
	ck_assert_int_eq(ad->procs(run, &pids, &n), 0);	/* gone: none */
	ck_assert_uint_eq(n, 0);
	free(pids);
	ad->detach(run);
	ck_assert_int_eq(ad->list(NULL, &ids, err, sizeof err), 0);
	ck_assert_ptr_nonnull(ids);
	ck_assert_ptr_null(ids[0]);	/* bwrap's .list names its cgroup */
	sbx_strv_free(ids);
	rec_clear(&r);
	cu_rmrf(scope);
	free(scope);
}
END_TEST

START_TEST(test_adapters_bwrap_ids)
{
	char sid[64];
	unsigned slot = 99;
	uid_t uid;
	gid_t gid;

	sbx_bwrap_host_sandbox_id(7, sid, sizeof sid);
	ck_assert_str_eq(sid, "uid:2000007");
	ck_assert_int_eq(sbx_bwrap_host_slot_of(sid, &slot), 0);
	ck_assert_uint_eq(slot, 7);
	ck_assert_int_eq(sbx_bwrap_host_slot_of("uid:1999999", &slot), -EINVAL);
	ck_assert_int_eq(sbx_bwrap_host_slot_of("uid:2004096", &slot), -EINVAL);
	ck_assert_int_eq(sbx_bwrap_host_slot_of("uid:+2000001", &slot), -EINVAL);
	ck_assert_int_eq(sbx_bwrap_host_slot_of("uid:2000001x", &slot), -EINVAL);
	ck_assert_int_eq(sbx_bwrap_host_slot_of("command:x", &slot), -EINVAL);
	ck_assert_int_eq(sbx_bwrap_host_uid_of(sid, &uid, &gid), 0);
	ck_assert_uint_eq(uid, SBX_UID_BASE + 7);
	ck_assert_uint_eq(gid, SBX_UID_BASE + 7);
	ck_assert_int_eq(sbx_bwrap_host_uid_of("command:x", &uid, &gid),
	    -EINVAL);
}
END_TEST

START_TEST(test_adapters_slots)
{
	char *dir = cu_tmpdir("slots"), **ids = NULL, *text;
	char *one = cu_tmpdir("state-one"), *two = cu_tmpdir("state-two");
	char path[4200];
	unsigned a, b, found;
	int rc;
	struct dirent *e;
	DIR *d;

	/* A claim names its state directory: without one there is none. */
	ck_assert_int_eq(sbx_uid_claim(dir, NULL, "lease-a", &a), -EINVAL);
	ck_assert_int_eq(sbx_uid_claim(dir, "relative", "lease-a", &a),
	    -EINVAL);
	ck_assert_int_eq(sbx_uid_claim(dir, one, "lease-a", &a), 0);
	ck_assert_int_eq(sbx_uid_claim(dir, two, "lease-b", &b), 0);
	/* Owner and scope both in place (and no staging left behind). */
	snprintf(path, sizeof path, "%s/slot-%u/scope", dir, a);
	ck_assert_ptr_nonnull(text = cu_read_file(path, NULL));
	ck_assert_str_eq(text, one);
	free(text);
	ck_assert_ptr_nonnull(d = opendir(dir));
	while ((e = readdir(d)) != NULL)
		ck_assert_msg(e->d_name[0] != '.' || strcmp(e->d_name, ".") ==
		    0 || strcmp(e->d_name, "..") == 0, "left: %s", e->d_name);
	closedir(d);
	/* Found, listed and released only by owner and scope together. */
	ck_assert_int_eq(sbx_uid_find(dir, two, "lease-b", &found),
	    0);
	ck_assert_uint_eq(found, b);
	ck_assert_int_eq(sbx_uid_find(dir, one, "lease-b", &found),
	    -ENOENT);
	ck_assert_int_eq(sbx_uid_find(dir, one, "lease-c", &found),
	    -ENOENT);
	ck_assert_int_eq(sbx_uid_list(dir, one, &ids), 0);
	ck_assert(strv_has(ids, "lease-a") && !strv_has(ids, "lease-b"));
	sbx_strv_free(ids);
	ck_assert_int_eq(sbx_uid_list(dir, dir, &ids), 0);
	ck_assert_ptr_null(ids[0]);
	sbx_strv_free(ids);
	ck_assert_int_eq(sbx_uid_release(dir, b, one, "lease-b"),
	    -EPERM);
	ck_assert_int_eq(sbx_uid_release(dir, b, two, "lease-a"),
	    -EPERM);
	/* Release removes the scope too (the slot directory goes). */
	ck_assert_int_eq(sbx_uid_release(dir, a, one, "lease-a"), 0);
	ck_assert_int_eq(sbx_uid_find(dir, one, "lease-a", &found),
	    -ENOENT);
	ck_assert_int_eq(sbx_uid_release(dir, b, two, "lease-b"), 0);
	ck_assert_int_eq(sbx_uid_list(dir, two, &ids), 0);
	ck_assert_ptr_null(ids[0]);
	sbx_strv_free(ids);
	/* A claim from slot N never hands out a lower one (the bwrap
	 * adapter planned N in the journal: a lower slot is unplanned). A
	 * slot whose uid runs something is skipped, so only ">=" holds. */
	ck_assert_int_eq(sbx_uid_claim_from(dir, one, "lease-e", 5, &a), 0);
	ck_assert_uint_ge(a, 5);
	ck_assert_int_eq(sbx_uid_claim_from(dir, one, "lease-f", a, &b), 0);
	ck_assert_uint_gt(b, a);
	/* No slot left: the lease fails naming the pool, not the disk. */
	rc = sbx_uid_claim_from(dir, one, "lease-g", SBX_UID_SLOTS, &found);
	ck_assert_int_eq(rc, SBX_EUIDPOOL);
	ck_assert_str_eq(sbx_provision_reason(rc), "uid_pool_exhausted");
	ck_assert_str_eq(sbx_provision_reason(-ENOSPC), "disk_full");
	ck_assert_int_eq(sbx_uid_release(dir, a, one, "lease-e"), 0);
	ck_assert_int_eq(sbx_uid_release(dir, b, one, "lease-f"), 0);
	cu_rmrf(dir);
	cu_rmrf(one);
	cu_rmrf(two);
	free(dir);
	free(one);
	free(two);
}
END_TEST

/*
 * A child that takes gid (all three) and uids (real, effective, saved),
 * optionally non-dumpable, then waits to be killed: its pid, once it runs
 * so.
 */
static pid_t
run_as(gid_t gid, uid_t ruid, uid_t euid, uid_t suid, bool nodump)
{
	int p[2];
	pid_t pid;
	char c;

	ck_assert_int_eq(pipe(p), 0);
	if ((pid = fork()) == 0) {
		close(p[0]);
		if ((gid != 0 && setresgid(gid, gid, gid) < 0) ||
		    setresuid(ruid, euid, suid) < 0 ||
		    (nodump && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0))
			_exit(1);
		(void)!write(p[1], "r", 1);
		pause();
		_exit(0);
	}
	close(p[1]);
	ck_assert_int_eq(read(p[0], &c, 1), 1);
	close(p[0]);
	return pid;
}

/*
 * A uid any process on the machine runs under is never handed out, even
 * one whose /proc entry is root's (a non-dumpable process): a child that
 * takes slot 0's uid as its saved uid only (and stays non-dumpable) makes
 * the claim skip slot 0.
 */
START_TEST(test_adapters_slots_busy)
{
	char *dir = cu_tmpdir("slots-busy");
	unsigned got = 0;
	pid_t pid;

	ck_assert_int_eq(geteuid(), 0);
	/* A uid far up the pool: no lease of a concurrent run holds it. */
	pid = run_as(0, 0, 0, SBX_UID_BASE + SBX_UID_SLOTS - 1, true);
	ck_assert(sbx_uid_busy(SBX_UID_BASE + SBX_UID_SLOTS - 1));
	ck_assert_int_eq(sbx_uid_claim_from(dir, dir, "lease-a",
	    SBX_UID_SLOTS - 1, &got), SBX_EUIDPOOL);
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	ck_assert(!sbx_uid_busy(SBX_UID_BASE + SBX_UID_SLOTS - 1));
	ck_assert_int_eq(sbx_uid_claim_from(dir, dir, "lease-a",
	    SBX_UID_SLOTS - 1, &got), 0);
	ck_assert_uint_eq(got, SBX_UID_SLOTS - 1);
	ck_assert_int_eq(sbx_uid_release(dir, got, dir, "lease-a"), 0);
	cu_rmrf(dir);
	free(dir);
}
END_TEST

/*
 * A slot whose state directory is gone (a killed run whose directory was
 * removed) is taken back by the next claim, unless its uid still runs
 * something; a slot whose state directory exists is never taken.
 */
START_TEST(test_adapters_slots_stale)
{
	char *dir = cu_tmpdir("slots"), *live = cu_tmpdir("live-state");
	char gone[4200];
	unsigned a, b, d, found;
	bool busy;

	snprintf(gone, sizeof gone, "%s/removed-state", dir);
	/* b first: a claim takes a stale slot back, b's own included. */
	ck_assert_int_eq(sbx_uid_claim(dir, live, "lease-b", &b), 0);
	ck_assert_int_eq(sbx_uid_claim(dir, gone, "lease-a", &a), 0);
	/* From a up: a lower slot skipped as busy (another corral's agent
	 * on the host) may have come free meanwhile. */
	busy = sbx_uid_busy((uid_t)(SBX_UID_BASE + a));
	ck_assert_int_eq(sbx_uid_claim_from(dir, live, "lease-d", a, &d), 0);
	busy = busy || sbx_uid_busy((uid_t)(SBX_UID_BASE + a));
	if (d == a) {
		/* lowest, taken back */
		ck_assert_int_eq(sbx_uid_find(dir, gone, "lease-a", &found),
		    -ENOENT);
	} else {
		ck_assert_msg(busy, "stale slot %u not taken back (got %u)",
		    a, d);
		ck_assert_int_eq(sbx_uid_find(dir, gone, "lease-a", &found),
		    0);
	}
	ck_assert_int_eq(sbx_uid_find(dir, live, "lease-b", &found), 0);
	ck_assert_uint_eq(found, b);
	ck_assert_uint_ne(d, b);
	cu_rmrf(dir);
	cu_rmrf(live);
	free(dir);
	free(live);
}
END_TEST

/*
 * Claim slot *a from first up for scope in a child that has a mount
 * namespace of its own (with a tmpfs over hid when hide: scope exists
 * there only); the child waits until *to is closed. Its PID.
 */
static pid_t
claim_elsewhere(const char *dir, const char *hid, const char *scope,
    bool hide, unsigned first, unsigned *a, int *to)
{
	int tp[2], fp[2];
	char buf[8];
	pid_t pid;

	ck_assert(pipe(tp) == 0 && pipe(fp) == 0);
	if ((pid = fork()) == 0) {
		close(tp[1]);
		close(fp[0]);
		if (unshare(CLONE_NEWNS) < 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    (hide && (mount("tmpfs", hid, "tmpfs", 0, "size=1m") < 0 ||
		    mkdir(scope, 0700) < 0)) ||
		    sbx_uid_claim_from(dir, scope, "lease-far", first, a) < 0)
			_exit(1);
		if (write(fp[1], a, sizeof *a) != sizeof *a)
			_exit(1);
		(void)read(tp[0], buf, 1);
		_exit(0);
	}
	ck_assert_int_gt(pid, 0);
	close(tp[0]);
	close(fp[1]);
	ck_assert_int_eq(read(fp[0], a, sizeof *a), (ssize_t)sizeof *a);
	close(fp[0]);
	*to = tp[1];
	return pid;
}

/*
 * A claim made in another mount namespace (a container or a fresh root
 * sharing the pool) whose state directory only exists there is not stale
 * while that namespace lives, and is once nothing runs in it. The old
 * rule (stat the scope here) took it back at once: two leases, one uid.
 * One made in a namespace that saw this one's directories (a holder's
 * private one) stays while its directory exists here, also once that
 * namespace is gone.
 */
START_TEST(test_adapters_slots_other_mntns)
{
	char *dir = cu_tmpdir("slots"), *hid = cu_tmpdir("hidden");
	char scope[4200];
	unsigned a = 0, d, found;
	int to;
	pid_t pid;

	ck_assert_int_eq(geteuid(), 0);
	snprintf(scope, sizeof scope, "%s/state", hid);
	pid = claim_elsewhere(dir, hid, scope, true, SBX_UID_SLOTS - 40, &a,
	    &to);
	ck_assert_int_eq(access(scope, F_OK), -1);	/* not from here */
	/* From a up: never a's slot while its namespace lives. */
	ck_assert_int_eq(sbx_uid_claim_from(dir, hid, "lease-near", a, &d), 0);
	ck_assert_uint_ne(d, a);
	ck_assert_int_eq(sbx_uid_find(dir, scope, "lease-far", &found), 0);
	ck_assert_uint_eq(found, a);
	ck_assert_int_eq(sbx_uid_release(dir, d, hid, "lease-near"), 0);
	/* Its namespace gone with its last process: stale, taken back. */
	close(to);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	ck_assert_int_eq(sbx_uid_claim_from(dir, hid, "lease-near", a, &d), 0);
	ck_assert_uint_eq(d, a);
	ck_assert_int_eq(sbx_uid_find(dir, scope, "lease-far", &found),
	    -ENOENT);
	ck_assert_int_eq(sbx_uid_release(dir, d, hid, "lease-near"), 0);
	/* A holder's: its scope is here too; gone with it, the claim stays. */
	ck_assert_int_eq(mkdir(scope, 0700), 0);
	pid = claim_elsewhere(dir, hid, scope, false, SBX_UID_SLOTS - 40, &a,
	    &to);
	close(to);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	ck_assert_int_eq(sbx_uid_claim_from(dir, hid, "lease-near", a, &d), 0);
	ck_assert_uint_ne(d, a);
	ck_assert_int_eq(sbx_uid_find(dir, scope, "lease-far", &found), 0);
	ck_assert_int_eq(sbx_uid_release(dir, d, hid, "lease-near"), 0);
	ck_assert_int_eq(sbx_uid_release(dir, a, scope, "lease-far"), 0);
	cu_rmrf(dir);
	cu_rmrf(hid);
	free(dir);
	free(hid);
}
END_TEST

/*
 * Claims without a scope (an older corral's: owner only; or a newer
 * claim's mntns an older release left) go back to the pool once they are
 * old, their uid runs nothing and no process names their owner; a young
 * one, one whose owner a live process names, and one whose uid runs
 * something stay. The old rule kept every one of them until reboot.
 */
static void
plant(const char *dir, unsigned n, const char *file, const char *text,
    bool old)
{
	struct timespec t[2];
	char path[4200];

	snprintf(path, sizeof path, "%s/slot-%u", dir, n);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof path, "%s/slot-%u/%s", dir, n, file);
	ck_assert_int_eq(cu_write_file(path, text, strlen(text)), 0);
	if (!old)
		return;
	t[0].tv_sec = t[1].tv_sec = time(NULL) - 2 * SBX_UID_SCOPELESS_GRACE_S;
	t[0].tv_nsec = t[1].tv_nsec = 0;
	ck_assert_int_eq(utimensat(AT_FDCWD, path, t, AT_SYMLINK_NOFOLLOW), 0);
	*strrchr(path, '/') = '\0';
	ck_assert_int_eq(utimensat(AT_FDCWD, path, t, AT_SYMLINK_NOFOLLOW), 0);
}

START_TEST(test_adapters_slots_scopeless)
{
	char *dir = cu_tmpdir("slots-old"), *state = cu_tmpdir("state-new");
	char named[64], scope[4200];
	const unsigned s = SBX_UID_SLOTS - 60;
	unsigned got;
	pid_t holder, busy;
	int st;

	ck_assert_int_eq(geteuid(), 0);
	snprintf(named, sizeof named, "old-lease-%d", (int)getpid());
	plant(dir, s, "owner", "old-lease-gone", true);
	plant(dir, s + 1, "mntns", "mnt:[4026531841]", true);
	plant(dir, s + 2, "owner", "old-lease-young", false);
	plant(dir, s + 3, "owner", named, true);
	plant(dir, s + 4, "owner", "old-lease-busy", true);
	/* a process whose command line names s+3's owner (as a holder's) */
	if ((holder = fork()) == 0) {
		execl("/bin/sleep", named, "600", (char *)NULL);
		_exit(127);
	}
	ck_assert_int_gt(holder, 0);
	busy = run_as(SBX_UID_BASE + s + 4, SBX_UID_BASE + s + 4,
	    SBX_UID_BASE + s + 4, SBX_UID_BASE + s + 4, false);
	/* wait until its command line shows (exec done) */
	for (int i = 0; i < 500; i++) {
		char p[64], *c;

		snprintf(p, sizeof p, "/proc/%d/cmdline", (int)holder);
		c = cu_read_file(p, NULL);
		if (c != NULL && strcmp(c, named) == 0) {
			free(c);
			break;
		}
		free(c);
		usleep(10000);
	}
	ck_assert_msg(sbx_uid_free(dir, s), "an old owner-only claim kept");
	ck_assert_msg(sbx_uid_free(dir, s + 1), "a lone mntns claim kept");
	ck_assert_msg(!sbx_uid_free(dir, s + 2), "a young claim taken");
	ck_assert_msg(!sbx_uid_free(dir, s + 3), "a live owner's claim taken");
	ck_assert_msg(!sbx_uid_free(dir, s + 4), "a busy uid's claim taken");
	/* The claims take the two back, then skip the other three. */
	ck_assert_int_eq(sbx_uid_claim_from(dir, state, "new-a", s, &got), 0);
	ck_assert_uint_eq(got, s);
	ck_assert_int_eq(sbx_uid_claim_from(dir, state, "new-b", s, &got), 0);
	ck_assert_uint_eq(got, s + 1);
	ck_assert_int_eq(sbx_uid_claim_from(dir, state, "new-c", s, &got), 0);
	ck_assert_uint_ge(got, s + 5);
	snprintf(scope, sizeof scope, "%s/slot-%u/owner", dir, s + 3);
	ck_assert_int_eq(access(scope, F_OK), 0);
	kill(holder, SIGKILL);
	kill(busy, SIGKILL);
	ck_assert_int_eq(waitpid(holder, &st, 0), holder);
	ck_assert_int_eq(waitpid(busy, &st, 0), busy);
	cu_rmrf(dir);
	cu_rmrf(state);
	free(dir);
	free(state);
}
END_TEST

START_TEST(test_adapters_union)
{
	char *a[] = { "a", "c", "e", NULL }, *b[] = { "b", "c", "f", NULL };
	char **u = NULL;

	ck_assert_int_eq(sbx__strv_union(a, b, &u), 0);
	ck_assert_str_eq(u[0], "a");
	ck_assert_str_eq(u[1], "b");
	ck_assert_str_eq(u[2], "c");
	ck_assert_str_eq(u[3], "e");
	ck_assert_str_eq(u[4], "f");
	ck_assert_ptr_null(u[5]);
	sbx_strv_free(u);
	ck_assert_int_eq(sbx__strv_union(NULL, b, &u), 0);
	ck_assert_str_eq(u[2], "f");
	sbx_strv_free(u);
}
END_TEST

/* A bwrap request for lease id in workspace ws, 64 pids at most. */
static void
bwrap_req(struct sbx_request *req, struct sbx_limits *lim, const char *id,
    const char *ws)
{
	memset(lim, 0, sizeof *lim);
	lim->pids = 64;
	memset(req, 0, sizeof *req);
	req->id = id;
	req->workspace = ws;
	req->limits = lim;
}

/*
 * Tear the bwrap lease id down (res NULL: as an orphan): its cgroups, then
 * its uid slot, each reported removed, both gone on the host.
 */
static void
bwrap_teardown_both(const struct sbx_request *req,
    const struct sbx_resource *res, size_t n, const struct sbx_cgroup *cg)
{
	struct sbx_steps s;
	struct rec r;
	struct stat sb;
	char err[512];
	unsigned slot;

	rec_init(&r, &s);
	ck_assert_msg(sbx_adapter_bwrap.teardown(req, res, n, &s, err,
	    sizeof err) == 0, "teardown: %s", err);
	ck_assert_int_eq(r.n, 2);
	ck_assert(rec_is(&r, 0, "removed cgroup "));
	ck_assert(rec_is(&r, 1, "removed sandbox uid:"));
	ck_assert_int_eq(stat(cg->c[0].dir, &sb), -1);
	ck_assert_int_eq(sbx_uid_find(SBX_UID_DIR, req->scope, req->id,
	    &slot), -ENOENT);
	rec_clear(&r);
}

/*
 * bwrap for real (root, cgroup v1 here): a uid slot and the lease cgroups,
 * each planned before and created after, listed under its scope only;
 * teardown removes both, each reported removed, and is idempotent.
 */
START_TEST(test_adapters_bwrap_lifecycle)
{
	struct sbx_provisioned out;
	struct sbx_limits lim;
	struct sbx_request req;
	struct sbx_resource res[2];
	struct sbx_cgroup *cg = NULL;
	struct sbx_steps s;
	struct rec r;
	char id[64], err[512], **ids = NULL, *ws = cu_tmpdir("bwrap-ws");
	char scope[128], *cgtext;
	unsigned slot;
	struct stat sb;

	ck_assert_int_eq(geteuid(), 0);
	snprintf(id, sizeof id, "sbxtest-%ld", (long)getpid());
	snprintf(scope, sizeof scope, "/tmp/adapters-scope-%ld",
	    (long)getpid());
	/* A scope names a live state directory: one that is gone is stale. */
	ck_assert(mkdir(scope, 0700) == 0 || errno == EEXIST);
	bwrap_req(&req, &lim, id, ws);
	req.scope = scope;
	rec_init(&r, &s);
	ck_assert_msg(sbx_adapter_bwrap.provision(&req, &s, &out, err,
	    sizeof err) == 0, "provision: %s", err);
	ck_assert(out.has_uid);
	ck_assert_int_eq(sbx_bwrap_host_slot_of(out.sandbox_id, &slot), 0);
	ck_assert_uint_eq(out.uid, SBX_UID_BASE + slot);
	/*
	 * The order SPEC 9.2 asks for: identity first. A slot another
	 * corral on the host took first is planned and given back (a pair
	 * each) before the one claimed.
	 */
	ck_assert_int_ge(r.n, 4);
	ck_assert_int_eq(r.n % 2, 0);
	for (int i = 0; i + 4 < r.n; i += 2) {
		ck_assert(rec_is(&r, i, "plan sandbox uid:"));
		ck_assert(rec_is(&r, i + 1, "removed sandbox uid:"));
	}
	ck_assert(rec_is(&r, r.n - 4, "plan sandbox uid:"));
	ck_assert(rec_is(&r, r.n - 3, "created sandbox uid:"));
	ck_assert(rec_is(&r, r.n - 2, "plan cgroup "));
	ck_assert(rec_is(&r, r.n - 1, "created cgroup "));
	ck_assert_int_eq(sbx_cgroup_locate(scope, id, &cg), 0);
	ck_assert_int_eq(stat(cg->c[0].dir, &sb), 0);
	/* Listed under its own scope, not another's. */
	ck_assert_int_eq(sbx_adapter_bwrap.list(&req, &ids, err, sizeof err),
	    0);
	ck_assert(strv_has(ids, id));
	sbx_strv_free(ids);
	req.scope = "/elsewhere";
	ck_assert_int_eq(sbx_adapter_bwrap.list(&req, &ids, err, sizeof err),
	    0);
	ck_assert(!strv_has(ids, id));
	sbx_strv_free(ids);
	req.scope = scope;
	/* Teardown by exact ID: both removed, each reported. */
	res[0].kind = SBX_RES_SANDBOX;
	res[0].identity = out.sandbox_id;
	res[1].kind = SBX_RES_CGROUP;
	/* the last record: pairs for slots another corral took come first */
	cgtext = strdup(strchr(r.v[r.n - 1], ' ') + strlen(" cgroup "));
	res[1].identity = cgtext;
	rec_clear(&r);
	bwrap_teardown_both(&req, res, 2, cg);
	rec_init(&r, &s);
	/* The workspace was handed back to root. */
	ck_assert_int_eq(stat(ws, &sb), 0);
	ck_assert_uint_eq(sb.st_uid, 0);
	ck_assert_uint_eq(sb.st_mode & 0777, 0700);
	/* Idempotent. */
	ck_assert_int_eq(sbx_adapter_bwrap.teardown(&req, res, 2, &s, err,
	    sizeof err), 0);
	/* A cgroup record of another lease is never touched. */
	res[1].identity = "v1\nmemory /sys/fs/cgroup/memory/corral/lease-x\n";
	ck_assert_int_lt(sbx_adapter_bwrap.teardown(&req, &res[1], 1, &s, err,
	    sizeof err), 0);
	rec_clear(&r);
	free(cgtext);
	sbx_cgroup_free(cg);
	rmdir(scope);
	cu_rmrf(ws);
	free(ws);
}
END_TEST

/*
 * An orphan (gc, reconcile): no journal names its resources; teardown
 * with res NULL finds the uid slot and the cgroups by exact ID itself.
 */
START_TEST(test_adapters_bwrap_orphan)
{
	struct sbx_provisioned out;
	struct sbx_limits lim;
	struct sbx_request req;
	struct sbx_cgroup *cg = NULL;
	struct sbx_steps s;
	struct rec r;
	char id[64], err[512], *ws = cu_tmpdir("bwrap-orphan");
	unsigned slot;
	struct stat sb;

	ck_assert_int_eq(geteuid(), 0);
	snprintf(id, sizeof id, "sbxorphan-%ld", (long)getpid());
	bwrap_req(&req, &lim, id, ws);
	req.scope = ws;
	rec_init(&r, &s);
	ck_assert_msg(sbx_adapter_bwrap.provision(&req, &s, &out, err,
	    sizeof err) == 0, "provision: %s", err);
	ck_assert_int_eq(sbx_uid_find(SBX_UID_DIR, ws, id, &slot), 0);
	ck_assert_int_eq(sbx_cgroup_locate(ws, id, &cg), 0);
	ck_assert_int_eq(stat(cg->c[0].dir, &sb), 0);
	rec_clear(&r);
	bwrap_teardown_both(&req, NULL, 0, cg);
	/* Idempotent: absent is removed; no uid slot is named any more. */
	rec_clear(&r);
	rec_init(&r, &s);
	ck_assert_int_eq(sbx_adapter_bwrap.teardown(&req, NULL, 0, &s, err,
	    sizeof err), 0);
	for (int i = 0; i < r.n; i++)
		ck_assert(!rec_is(&r, i, "removed sandbox"));
	rec_clear(&r);
	sbx_cgroup_free(cg);
	cu_rmrf(ws);
	free(ws);
}
END_TEST

/* A journal that refuses the first step: nothing is made. */
START_TEST(test_adapters_bwrap_journal_refuses)
{
	struct sbx_provisioned out;
	struct sbx_request req;
	struct sbx_steps s;
	struct rec r;
	char id[64], err[512];
	unsigned slot;

	snprintf(id, sizeof id, "sbxtest-%ld", (long)getpid());
	memset(&req, 0, sizeof req);
	req.id = id;
	req.scope = "/tmp";
	rec_init(&r, &s);
	r.fail_at = 0;
	ck_assert_int_eq(sbx_adapter_bwrap.provision(&req, &s, &out, err,
	    sizeof err), -EIO);
	ck_assert_int_eq(r.n, 1);
	ck_assert_int_eq(sbx_uid_find(SBX_UID_DIR, "/tmp", id, &slot),
	    -ENOENT);
	rec_clear(&r);
}
END_TEST

/*
 * Two state directories on one host (SPEC 9.2): lease X of state A is
 * neither listed nor found by state B, and B's teardown of X as an orphan
 * (gc from the wrong state directory) touches nothing of A's: its cgroup,
 * its slot and the process in its cgroup all stay.
 */
START_TEST(test_adapters_bwrap_other_state)
{
	struct sbx_provisioned out;
	struct sbx_limits lim;
	struct sbx_request req;
	struct sbx_cgroup *cg = NULL;
	char id[64], err[512], **ids = NULL, *ws = cu_tmpdir("bwrap-a");
	char *stb = cu_tmpdir("state-b"), *procs, pid_s[32];
	unsigned slot;
	struct stat sb;
	pid_t pid;

	ck_assert_int_eq(geteuid(), 0);
	snprintf(id, sizeof id, "sbxtenant-%ld", (long)getpid());
	bwrap_req(&req, &lim, id, ws);
	req.scope = ws;		/* state A */
	ck_assert_msg(sbx_adapter_bwrap.provision(&req, NULL, &out, err,
	    sizeof err) == 0, "provision: %s", err);
	ck_assert_int_eq(sbx_cgroup_locate(ws, id, &cg), 0);
	/* A process of A's lease, in its cgroup (as the holder puts it). */
	if ((pid = fork()) == 0) {
		pause();
		_exit(0);
	}
	ck_assert_int_gt(asprintf(&procs, "%s/cgroup.procs", cg->c[0].dir), 0);
	snprintf(pid_s, sizeof pid_s, "%d", (int)pid);
	ck_assert_int_eq(cu_write_file(procs, pid_s, strlen(pid_s)), 0);
	/* State B: not listed, not found, not torn down. */
	req.scope = stb;
	ck_assert_int_eq(sbx_adapter_bwrap.list(&req, &ids, err, sizeof err),
	    0);
	ck_assert(!strv_has(ids, id));
	sbx_strv_free(ids);
	ck_assert_int_eq(sbx_adapter_bwrap.teardown(&req, NULL, 0, NULL, err,
	    sizeof err), 0);
	ck_assert_int_eq(kill(pid, 0), 0);
	ck_assert_int_eq(waitpid(pid, NULL, WNOHANG), 0);
	ck_assert_int_eq(stat(cg->c[0].dir, &sb), 0);
	ck_assert_int_eq(sbx_uid_find(SBX_UID_DIR, ws, id, &slot), 0);
	/* A's own teardown ends it. */
	req.scope = ws;
	ck_assert_msg(sbx_adapter_bwrap.teardown(&req, NULL, 0, NULL, err,
	    sizeof err) == 0, "teardown: %s", err);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	ck_assert_int_eq(stat(cg->c[0].dir, &sb), -1);
	free(procs);
	sbx_cgroup_free(cg);
	cu_rmrf(stb);
	cu_rmrf(ws);
	free(stb);
	free(ws);
}
END_TEST

/*
 * Teardown signals only what is in the lease's own cgroups, never every
 * process of its uid (another corral's agent, once uids are shared by
 * mistake, was killed that way): a process of the lease uid outside the
 * cgroups survives teardown, and the slot stays claimed (-EBUSY, cleanup
 * pending) until that uid runs nothing.
 */
START_TEST(test_adapters_bwrap_teardown_by_cgroup)
{
	struct sbx_provisioned out;
	struct sbx_limits lim;
	struct sbx_request req;
	char id[64], err[512], *ws = cu_tmpdir("bwrap-uid");
	unsigned slot;
	pid_t pid;

	ck_assert_int_eq(geteuid(), 0);
	snprintf(id, sizeof id, "sbxuid-%ld", (long)getpid());
	bwrap_req(&req, &lim, id, ws);
	req.scope = ws;
	ck_assert_msg(sbx_adapter_bwrap.provision(&req, NULL, &out, err,
	    sizeof err) == 0, "provision: %s", err);
	pid = run_as(out.gid, out.uid, out.uid, out.uid, false);
	ck_assert_int_eq(sbx_adapter_bwrap.teardown(&req, NULL, 0, NULL, err,
	    sizeof err), -EBUSY);
	ck_assert_ptr_nonnull(strstr(err, "not signalled"));
	ck_assert_int_eq(waitpid(pid, NULL, WNOHANG), 0);
	ck_assert_int_eq(sbx_uid_find(SBX_UID_DIR, ws, id, &slot), 0);
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	ck_assert_msg(sbx_adapter_bwrap.teardown(&req, NULL, 0, NULL, err,
	    sizeof err) == 0, "teardown: %s", err);
	ck_assert_int_eq(sbx_uid_find(SBX_UID_DIR, ws, id, &slot), -ENOENT);
	cu_rmrf(ws);
	free(ws);
}
END_TEST

/* The command adapter through the fixture hooks: exact IDs both ways. */
START_TEST(test_adapters_command)
{
	char *src = cu_src_path("tests/fixtures/command-adapter");
	char *st = cu_tmpdir("adapters-cmd"), *ws = cu_tmpdir("adapters-ws");
	char prov[1024], exec[1024], tear[1024], list[1024], err[512];
	char **ids = NULL, sid[160];
	struct sbx_command_config cc;
	struct sbx_provisioned out;
	struct sbx_request req;
	struct sbx_resource res;
	struct sbx_steps s;
	struct rec r;
	const char *id = "20261129-120000-000-00aa";

	snprintf(prov, sizeof prov, "%s/provision.sh '%s/m'", src, st);
	snprintf(exec, sizeof exec, "%s/exec.sh '%s/m'", src, st);
	snprintf(tear, sizeof tear, "%s/teardown.sh '%s/m'", src, st);
	snprintf(list, sizeof list, "%s/list.sh '%s/m'", src, st);
	memset(&cc, 0, sizeof cc);
	cc.provision = prov;
	cc.exec = exec;
	cc.teardown = tear;
	cc.list = list;
	cc.timeout_ms = 20000;
	memset(&req, 0, sizeof req);
	req.id = id;
	req.workspace = ws;
	req.lease_dir = st;
	/* No hooks: refused before anything is planned. */
	rec_init(&r, &s);
	ck_assert_int_eq(sbx_adapter_command.provision(&req, &s, &out, err,
	    sizeof err), SBX_EPOLICY);
	ck_assert_int_eq(r.n, 0);
	req.command = &cc;
	ck_assert_msg(sbx_adapter_command.provision(&req, &s, &out, err,
	    sizeof err) == 0, "provision: %s", err);
	snprintf(sid, sizeof sid, "command:%s", id);
	ck_assert_str_eq(out.sandbox_id, sid);
	ck_assert_int_eq(r.n, 2);
	ck_assert(rec_is(&r, 0, "plan sandbox command:"));
	ck_assert(rec_is(&r, 1, "created sandbox command:"));
	ck_assert_ptr_nonnull(strstr(out.note, "local-bwrap"));
	ck_assert_int_eq(sbx_adapter_command.list(&req, &ids, err,
	    sizeof err), 0);
	ck_assert(strv_has(ids, id));
	sbx_strv_free(ids);
	/* A second provision of the same ID fails: left planned. */
	rec_clear(&r);
	rec_init(&r, &s);
	ck_assert_int_eq(sbx_adapter_command.provision(&req, &s, &out, err,
	    sizeof err), SBX_EPROBE);
	ck_assert_int_eq(r.n, 1);
	ck_assert(rec_is(&r, 0, "plan sandbox command:"));
	/* Teardown: only the lease's own record, by exact ID. */
	rec_clear(&r);
	rec_init(&r, &s);
	res.kind = SBX_RES_SANDBOX;
	res.identity = "command:20261129-120000-000-00bb";
	ck_assert_int_eq(sbx_adapter_command.teardown(&req, &res, 1, &s, err,
	    sizeof err), -EINVAL);
	ck_assert_int_eq(r.n, 0);
	res.identity = sid;
	ck_assert_int_eq(sbx_adapter_command.teardown(&req, &res, 1, &s, err,
	    sizeof err), 0);
	ck_assert_int_eq(r.n, 1);
	ck_assert(rec_is(&r, 0, "removed sandbox command:"));
	/* An orphan: its sandbox named by the ID (the hook is idempotent). */
	rec_clear(&r);
	rec_init(&r, &s);
	ck_assert_int_eq(sbx_adapter_command.teardown(&req, NULL, 0, &s, err,
	    sizeof err), 0);
	ck_assert_int_eq(r.n, 1);
	ck_assert(rec_is(&r, 0, "removed sandbox command:"));
	ck_assert_int_eq(sbx_adapter_command.list(&req, &ids, err,
	    sizeof err), 0);
	ck_assert(!strv_has(ids, id));
	sbx_strv_free(ids);
	rec_clear(&r);
	cu_rmrf(st);
	cu_rmrf(ws);
	free(st);
	free(ws);
	free(src);
}
END_TEST

Suite *
adapters_suite(void)
{
	Suite *s = suite_create("adapters");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_adapters_table);
	tcase_add_test(tc, test_adapters_local);
	tcase_add_test(tc, test_adapters_bwrap_ids);
	tcase_add_test(tc, test_adapters_slots);
	tcase_add_test(tc, test_adapters_slots_stale);
	tcase_add_test(tc, test_adapters_slots_scopeless);
	tcase_add_test(tc, test_adapters_slots_other_mntns);
	tcase_add_test(tc, test_adapters_slots_busy);
	tcase_add_test(tc, test_adapters_union);
	tcase_add_test(tc, test_adapters_bwrap_lifecycle);
	tcase_add_test(tc, test_adapters_bwrap_orphan);
	tcase_add_test(tc, test_adapters_bwrap_journal_refuses);
	tcase_add_test(tc, test_adapters_bwrap_other_state);
	tcase_add_test(tc, test_adapters_bwrap_teardown_by_cgroup);
	tcase_add_test(tc, test_adapters_command);
	suite_add_tcase(s, tc);
	return s;
}
