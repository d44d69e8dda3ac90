/*
 * test_recipe.c: the pre-exec recipe (sbx_recipe.c) seen from the child
 * itself, right before its exec, through the recipe's test hook, on both
 * zones' real spawn paths: the agent zone (pty_proc_spawn of the bwrap
 * adapter's plan) and the exec zone (sbx_exec_run of sbx_bwrap_exec_plan).
 * bwrap sets no_new_privs and drops capabilities itself, so only this view
 * shows what corral's own code does: no capability in any set, no way to
 * gain one (NoNewPrivs 1), the lease uid, and no fd beyond the plan's;
 * and a check's copy bound at SBX_EXEC_MNT in a mount namespace of the
 * child's own (the step bwrap then binds as the workspace), never on the
 * host's.
 */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <uv.h>

#include "pty/pty.h"
#include "sbx_test.h"

Suite *recipe_suite(void);

/* Fds the test process holds open without close-on-exec: none may pass. */
#define LEAK_LOW 77
#define LEAK_HIGH 150

struct rcp {
	struct st_lease l;
	char *dir;	/* $CORRAL_TEST_RECIPE_DIR */
};

static void
rcp_init(struct rcp *t)
{
	int fd;

	st_lease_init(&t->l, "recipe-ws");
	t->dir = cu_tmpdir("recipe-hook");
	ck_assert_int_eq(setenv("CORRAL_TEST_RECIPE_DIR", t->dir, 1), 0);
	fd = open("/dev/null", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(dup2(fd, LEAK_LOW), LEAK_LOW);
	ck_assert_int_eq(dup2(fd, LEAK_HIGH), LEAK_HIGH);
	close(fd);
}

static void
rcp_fini(struct rcp *t)
{
	close(LEAK_LOW);
	close(LEAK_HIGH);
	unsetenv("CORRAL_TEST_RECIPE_DIR");
	cu_rmrf(t->dir);
	free(t->dir);
	st_lease_fini(&t->l);
}

/* The one record the hook wrote (the child's pid names it). */
static char *
record(const struct rcp *t, pid_t pid)
{
	char path[4096];
	char *s;

	snprintf(path, sizeof path, "%s/%d", t->dir, (int)pid);
	s = cu_read_file(path, NULL);
	ck_assert_msg(s != NULL, "no recipe record at %s: was this built "
	    "with CORRAL_TEST_OVERRIDES?", path);
	return s;
}

/* The value of "key:" in a status record, malloc'd. */
static char *
field(const char *rec, const char *key)
{
	size_t kl = strlen(key);

	for (const char *p = rec; p != NULL && *p != '\0';) {
		const char *e = strchr(p, '\n');

		if (strncmp(p, key, kl) == 0 && p[kl] == ':') {
			p += kl + 1;
			p += strspn(p, " \t");
			return strndup(p, e != NULL ? (size_t)(e - p) :
			    strlen(p));
		}
		p = e != NULL ? e + 1 : NULL;
	}
	ck_abort_msg("record has no %s line:\n%s", key, rec);
	return NULL;
}

static void
expect_field(const char *rec, const char *key, const char *want)
{
	char *v = field(rec, key);

	ck_assert_msg(strcmp(v, want) == 0, "%s is \"%s\", want \"%s\"", key,
	    v, want);
	free(v);
}

/*
 * The child kept no capability and cannot gain one, runs as the lease uid,
 * and passes on exactly 0, 1, 2 and the plan's fds.
 */
static void
check_record(const struct rcp *t, const struct sbx_plan *pl, const char *rec)
{
	static const char *const caps[] = { "CapInh", "CapPrm", "CapEff",
		"CapBnd", "CapAmb" };
	char want[256], ids[64];
	size_t n = 0;
	bool keep[4096] = { false };
	char *fds;

	for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
		expect_field(rec, caps[i], "0000000000000000");
	expect_field(rec, "NoNewPrivs", "1");
	snprintf(ids, sizeof ids, "%u\t%u\t%u\t%u", (unsigned)t->l.uid,
	    (unsigned)t->l.uid, (unsigned)t->l.uid, (unsigned)t->l.uid);
	expect_field(rec, "Uid", ids);
	snprintf(ids, sizeof ids, "%u\t%u\t%u\t%u", (unsigned)t->l.gid,
	    (unsigned)t->l.gid, (unsigned)t->l.gid, (unsigned)t->l.gid);
	expect_field(rec, "Gid", ids);
	expect_field(rec, "Groups", "");

	keep[0] = keep[1] = keep[2] = true;
	for (int i = 0; i < pl->nfds; i++)
		keep[pl->fds[i].to] = true;
	for (int i = 0; i < 4096; i++) {
		if (keep[i])
			n += (size_t)snprintf(want + n, sizeof want - n, "%d ",
			    i);
	}
	fds = field(rec, "Fds");
	ck_assert_msg(strcmp(fds, want) == 0, "the child passes on fds "
	    "\"%s\", want \"%s\"", fds, want);
	free(fds);
}

/* This process's mount namespace, "mnt:[N]", malloc'd. */
static char *
own_mntns(void)
{
	char buf[256];
	ssize_t n = readlink("/proc/self/ns/mnt", buf, sizeof buf - 1);

	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	return strdup(buf);
}

/*
 * The exec zone's child (sbx_exec_run of sbx_bwrap_exec_plan), with the
 * check's copy bound privately (the adapter's .exec_plan) or not: private,
 * the recipe binds it at SBX_EXEC_MNT in a mount namespace of the child's
 * own, never the host's; else the child stays in the host's until bwrap
 * makes its own.
 */
static void
exec_zone(bool private)
{
	static char *cmd[] = { "/bin/true", NULL };
	struct sbx_exec_opts o = { 4096, 30000, -1 };
	struct sbx_exec_result res;
	struct sbx_request r;
	struct sbx_plan *p = NULL;
	struct stat ws, mnt;
	struct rcp t;
	char *rec, *ns, *cns;

	rcp_init(&t);
	st_exec_req(&r, &t.l, cmd);
	r.workspace_private = private;
	ck_assert_int_eq(sbx_bwrap_exec_plan(&r, &p), 0);
	ck_assert(private == (p->bind_src != NULL));
	ck_assert_int_eq(sbx_exec_run(p, &o, &res), 0);
	ck_assert_msg(WIFEXITED(res.wstatus) && WEXITSTATUS(res.wstatus) == 0,
	    "the zone did not run: %d %s", res.wstatus, res.err);
	rec = record(&t, res.pid);
	check_record(&t, p, rec);
	ns = own_mntns();
	cns = field(rec, "MntNs");
	if (private) {
		expect_field(rec, "Bind", "1");
		ck_assert_msg(strcmp(ns, cns) != 0, "the copy was bound in "
		    "the host's mount namespace %s", ns);
		/* and the host's SBX_EXEC_MNT is not the copy */
		ck_assert_int_eq(stat(t.l.ws, &ws), 0);
		ck_assert(stat(SBX_EXEC_MNT, &mnt) != 0 ||
		    mnt.st_dev != ws.st_dev || mnt.st_ino != ws.st_ino);
	} else
		ck_assert_str_eq(cns, ns);
	free(cns);
	free(ns);
	free(rec);
	sbx_exec_result_clear(&res);
	sbx_plan_free(p);
	rcp_fini(&t);
}

START_TEST(test_recipe_exec_zone)
{
	exec_zone(false);
}
END_TEST

START_TEST(test_recipe_exec_zone_private)
{
	exec_zone(true);
}
END_TEST

static void
on_exit_cb(struct pty_proc *p, int64_t status, void *ud)
{
	(void)p;
	(void)status;
	*(bool *)ud = true;
}

static void
closed_cb(void *ud)
{
	*(bool *)ud = true;
}

START_TEST(test_recipe_agent_zone)
{
	static char *cmd[] = { "/bin/sh", "-c", "exit 0", NULL };
	struct pty_proc_opts o;
	struct pty_proc *proc = NULL;
	struct sbx_request r;
	struct sbx_plan *p = NULL;
	uv_loop_t loop;
	struct rcp t;
	bool exited = false, closed = false;
	char err[256], *rec, *init = st_helper("corral-sbx-init");
	int rc;

	rcp_init(&t);
	st_exec_req(&r, &t.l, cmd);
	r.source_date_epoch = 0;
	r.lease_dir = t.dir;
	r.init_path = init;
	ck_assert_int_eq(sbx_adapter_bwrap.plan(&r, &p), 0);
	ck_assert_int_eq(sbx_plan_open_data(p), 0);
	ck_assert(p->drop_uid);

	memset(&o, 0, sizeof o);
	o.plan = p;
	o.rows = 24;
	o.cols = 80;
	o.ctty = PTY_CTTY_NONE;
	o.on_exit = on_exit_cb;
	o.ud = &exited;
	ck_assert_int_eq(uv_loop_init(&loop), 0);
	rc = pty_proc_spawn(&proc, &loop, &o, err, sizeof err);
	ck_assert_msg(rc == 0, "spawn: %d %s", rc, err);
	rec = record(&t, pty_proc_pid(proc));
	check_record(&t, p, rec);
	free(rec);

	(void)pty_proc_signal(proc, SIGKILL);
	while (!exited)
		uv_run(&loop, UV_RUN_ONCE);
	pty_proc_close(proc, closed_cb, &closed);
	while (!closed)
		uv_run(&loop, UV_RUN_ONCE);
	ck_assert_int_eq(uv_loop_close(&loop), 0);
	sbx_plan_free(p);
	free(init);
	rcp_fini(&t);
}
END_TEST

Suite *
recipe_suite(void)
{
	Suite *s = suite_create("recipe");
	TCase *tc = tcase_create("Integration");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_recipe_exec_zone);
	tcase_add_test(tc, test_recipe_exec_zone_private);
	tcase_add_test(tc, test_recipe_agent_zone);
	suite_add_tcase(s, tc);
	return s;
}
