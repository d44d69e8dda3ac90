/*
 * test_running.c: the holder's side of the adapter interface (SPEC 6.6,
 * 8.4): bwrap's .attach takes a provisioned lease back from the resources
 * a journal records (its uid, its cgroups) and moves this process into the
 * private runtime (workspace, corral-sbx-init and a read-only source at
 * their fixed paths); .enter plans the agent there, joined to the
 * cgroups; .signal reaches a process in the lease's cgroups, .usage counts
 * it, .stop kills it; a journal without a uid slot or with another lease's
 * cgroup is refused. Real root, real cgroups (v1 on this host).
 */
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"
#include "support/check_util.h"

Suite *running_suite(void);

#define RT_WORK SBX_BWRAP_RT_DIR "/work"

/* What provision reported: the journal's identities, as the holder reads them. */
struct made {
	char *kind[4];
	char *identity[4];
	int n;
};

static int
on_created(void *ud, const char *kind, const char *identity)
{
	struct made *m = ud;

	ck_assert_int_lt(m->n, 4);
	m->kind[m->n] = strdup(kind);
	m->identity[m->n++] = strdup(identity);
	return 0;
}

static void
made_res(const struct made *m, struct sbx_resource *res)
{
	for (int i = 0; i < m->n; i++) {
		res[i].kind = m->kind[i];
		res[i].identity = m->identity[i];
	}
}

static void
made_clear(struct made *m)
{
	for (int i = 0; i < m->n; i++) {
		free(m->kind[i]);
		free(m->identity[i]);
	}
	memset(m, 0, sizeof *m);
}

/* Do the options bwrap reads from its --args fd hold "a b c" in a row? */
static bool
args_have(const struct sbx_plan *p, const char *a, const char *b,
    const char *c)
{
	const struct sbx_data *d = sbx_plan_data_find(p, SBX_BWRAP_ARGS_FD);
	char pat[4096];
	int n;

	ck_assert_ptr_nonnull(d);
	n = snprintf(pat, sizeof pat, "%c%s%c%s%c%s%c", '\0', a, '\0', b,
	    '\0', c, '\0');
	ck_assert(n > 0 && (size_t)n < sizeof pat);
	return memmem(d->bytes, d->len, pat, (size_t)n) != NULL;
}

/* Wait for pid; exit as it ended (128 + the signal that killed it). */
static void __attribute__((noreturn))
exit_as(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		_exit(1);
	_exit(WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st));
}

/*
 * A process of the lease as the agent is one: pid 2 of a pid namespace of
 * its own (pid 1 is the sandbox's, never signalled gracefully), in every
 * cgroup of plan. Returns our child, which exits as that process ends.
 */
static pid_t
lease_process(const struct sbx_plan *p)
{
	int fds[2];
	pid_t pid;
	char c;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		pid_t init, agent;
		char me[32];

		close(fds[0]);
		/* As the recipe leaves an agent: Check's handlers are not its. */
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		if (unshare(CLONE_NEWPID) < 0 || (init = fork()) < 0)
			_exit(2);
		if (init > 0)
			exit_as(init);
		if ((agent = fork()) < 0)
			_exit(2);
		if (agent > 0) {
			close(fds[1]);
			exit_as(agent);
		}
		snprintf(me, sizeof me, "%ld", (long)getpid());
		for (int i = 0; i < p->ncgroups; i++)
			if (cu_write_file(p->cgroup_procs[i], me,
			    strlen(me)) < 0)
				_exit(3);
		if (write(fds[1], "j", 1) != 1)
			_exit(4);
		for (;;)
			pause();
	}
	close(fds[1]);
	ck_assert_int_eq(read(fds[0], &c, 1), 1);
	close(fds[0]);
	return pid;
}

START_TEST(test_running_table)
{
	const struct sbx_adapter *b = &sbx_adapter_bwrap;

	/* bwrap has the holder's side whole; trusted_local its tracking. */
	ck_assert(b->attach != NULL && b->enter != NULL && b->signal != NULL &&
	    b->usage != NULL && b->stop != NULL && b->detach != NULL);
	ck_assert(sbx_adapter_local.attach != NULL &&
	    sbx_adapter_local.procs != NULL);
	ck_assert(sbx_adapter_command.attach == NULL);
}
END_TEST

START_TEST(test_running_bwrap)
{
	const struct sbx_adapter *ad = &sbx_adapter_bwrap;
	char *ws = cu_tmpdir("run-ws"), *ro = cu_tmpdir("run-ro");
	const char *init = getenv("CORRAL_SBX_INIT");
	char id[64], scope[128], err[512], sha[SBX_SHA256_HEX], *text;
	char *cmd[] = { "/bin/true", NULL };
	struct sbx_resource res[4];
	struct sbx_provisioned out;
	struct sbx_attached info;
	struct sbx_running *run = NULL;
	struct sbx_plan *plan = NULL;
	struct sbx_mount mnt[1];
	struct sbx_limits lim;
	struct sbx_request req;
	struct sbx_steps s;
	struct sbx_usage u;
	struct stat a, b;
	struct made m;
	int status;
	size_t len;
	pid_t pid;

	ck_assert_int_eq(geteuid(), 0);
	ck_assert_ptr_nonnull(init);
	snprintf(id, sizeof id, "sbxrun-%ld", (long)getpid());
	snprintf(scope, sizeof scope, "/tmp/running-scope-%ld",
	    (long)getpid());
	ck_assert(mkdir(scope, 0700) == 0 || errno == EEXIST);
	{
		char *f;

		ck_assert_int_gt(asprintf(&f, "%s/hello", ws), 0);
		ck_assert_int_eq(cu_write_file(f, "from the host", 13), 0);
		free(f);
	}
	memset(&lim, 0, sizeof lim);
	lim.pids = 64;
	memset(&req, 0, sizeof req);
	req.id = id;
	req.workspace = ws;
	req.init_path = init;
	req.cmd = cmd;
	req.limits = &lim;
	req.scope = scope;
	mnt[0].src = ro;
	mnt[0].dst = "/opt/ro";
	req.ro_binds = mnt;
	req.nro_binds = 1;
	memset(&m, 0, sizeof m);
	memset(&s, 0, sizeof s);
	s.created = on_created;
	s.ud = &m;
	ck_assert_msg(ad->provision(&req, &s, &out, err, sizeof err) == 0,
	    "provision: %s", err);
	ck_assert_int_eq(m.n, 2);
	made_res(&m, res);

	/* No uid slot in the journal, or another lease's cgroup: refused. */
	ck_assert_int_eq(ad->attach(&req, &res[1], 1, &info, &run, err,
	    sizeof err), -EINVAL);
	ck_assert_ptr_null(run);
	ck_assert_ptr_nonnull(strstr(err, "no uid slot"));
	res[1].identity = "v1\nmemory /sys/fs/cgroup/memory/corral/lease-x\n";
	ck_assert_int_lt(ad->attach(&req, res, 2, &info, &run, err,
	    sizeof err), 0);
	ck_assert_ptr_null(run);
	ck_assert_ptr_nonnull(strstr(err, "cgroup record"));
	made_res(&m, res);

	ck_assert_msg(ad->attach(&req, res, 2, &info, &run, err,
	    sizeof err) == 0, "attach: %s", err);
	ck_assert_ptr_nonnull(run);
	ck_assert_str_eq(info.sandbox_id, out.sandbox_id);
	ck_assert_uint_eq(info.uid, out.uid);
	ck_assert_uint_eq(info.gid, out.gid);
	/* The init it copied is the one it hashed, and the host's. */
	ck_assert_int_eq(sbx_sha256_file(init, sha), 0);
	ck_assert_str_eq(info.init_sha256, sha);
	ck_assert_int_eq(sbx_sha256_file(SBX_BWRAP_RT_DIR "/init", sha), 0);
	ck_assert_str_eq(info.init_sha256, sha);
	/* Here, the workspace and the source at their runtime paths. */
	text = cu_read_file(RT_WORK "/hello", &len);
	ck_assert_ptr_nonnull(text);
	ck_assert_str_eq(text, "from the host");
	free(text);
	ck_assert_int_eq(stat(ro, &a), 0);
	ck_assert_int_eq(stat(SBX_BWRAP_RT_DIR "/ro/0", &b), 0);
	ck_assert(a.st_dev == b.st_dev && a.st_ino == b.st_ino);

	/* The plan: the lease's uid, the runtime paths, its cgroups. */
	ck_assert_int_eq(ad->enter(run, &req, &plan), 0);
	ck_assert(plan->drop_uid);
	ck_assert_uint_eq(plan->uid, out.uid);
	ck_assert(args_have(plan, "--bind", RT_WORK, SBX_BWRAP_WORK));
	ck_assert(args_have(plan, "--ro-bind", SBX_BWRAP_RT_DIR "/ro/0",
	    "/opt/ro"));
	ck_assert(args_have(plan, "--ro-bind", SBX_BWRAP_RT_DIR "/init",
	    SBX_BWRAP_INIT));
	ck_assert_int_gt(plan->ncgroups, 0);
	for (int i = 0; i < plan->ncgroups; i++)
		ck_assert_ptr_nonnull(strstr(plan->cgroup_procs[i],
		    "/lease-sbxrun-"));

	/* Nobody in the cgroups yet. */
	ck_assert_int_eq(ad->usage(run, &u), 0);
	ck_assert_uint_eq(u.pids_current, 0);
	ck_assert_ptr_null(u.limit);
	ck_assert_int_eq(ad->signal(run, SIGTERM), 0);

	/* A process of the lease: counted, signalled, then stopped. */
	pid = lease_process(plan);
	ck_assert_int_eq(ad->usage(run, &u), 0);
	ck_assert_uint_eq(u.pids_current, 1);
	ck_assert_int_eq(ad->signal(run, SIGTERM), 1);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 128 + SIGTERM);
	pid = lease_process(plan);
	ck_assert_int_eq(ad->stop(run, 3000), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 128 + SIGKILL);

	sbx_plan_free(plan);
	ad->detach(run);
	ad->detach(NULL);
	ck_assert_msg(ad->teardown(&req, res, 2, NULL, err, sizeof err) == 0,
	    "teardown: %s", err);
	made_clear(&m);
	rmdir(scope);
	cu_rmrf(ws);
	cu_rmrf(ro);
	free(ws);
	free(ro);
}
END_TEST

Suite *
running_suite(void)
{
	Suite *s = suite_create("running");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_running_table);
	tcase_add_test(tc, test_running_bwrap);
	suite_add_tcase(s, tc);
	return s;
}
