/*
 * test_cgroup.c: per-lease cgroups (SPEC 8.4, 9.2; SANDBOX.md 3.6) on this
 * host's real hierarchies: detection, the journal form and its validation,
 * limits written and read back, a fork bomb and a memory hog inside a real
 * exec zone stopped and named, the graceful signal that reaches the agent
 * while bwrap lives, teardown of a zone with a daemon (nothing left, on the
 * host's side), idempotence and listing. Missing cgroups fail the suite.
 */
#include <check.h>
#include <pthread.h>
#include <sys/wait.h>

#include "sbx_test.h"

Suite *cgroup_suite(void);

/* The state directory the suite's cgroups belong to. */
#define SCOPE "/var/empty/corral-test-cgroup"

static void
lease_id(char *buf, size_t sz, const char *tag)
{
	snprintf(buf, sz, "test-%s-%d", tag, (int)getpid());
}

static struct sbx_cgroup *
locate(const char *id)
{
	struct sbx_cgroup *cg = NULL;
	int rc = sbx_cgroup_locate(SCOPE, id, &cg);

	ck_assert_msg(rc == 0, "locate: %s", sbx_strerror(rc));
	return cg;
}

static unsigned long long
read_num(const char *dir, const char *file)
{
	char path[1200], *t;
	unsigned long long v;

	snprintf(path, sizeof path, "%s/%s", dir, file);
	t = cu_read_file(path, NULL);
	ck_assert_msg(t != NULL, "cannot read %s", path);
	v = strtoull(t, NULL, 10);
	free(t);
	return v;
}

static const char *
dir_of(const struct sbx_cgroup *cg, const char *ctrl)
{
	for (int i = 0; i < cg->n; i++) {
		if (strcmp(cg->c[i].ctrl, ctrl) == 0)
			return cg->c[i].dir;
	}
	ck_abort_msg("no %s cgroup", ctrl);
	return NULL;
}

static bool
listed_in(const char *scope, const char *id)
{
	char **ids = NULL;
	bool found = false;

	ck_assert_int_eq(sbx_cgroup_list(scope, &ids), 0);
	for (size_t i = 0; ids[i] != NULL; i++)
		found = found || strcmp(ids[i], id) == 0;
	sbx_strv_free(ids);
	return found;
}

static bool
listed(const char *id)
{
	return listed_in(SCOPE, id);
}

/* This host enforces through v1 (SANDBOX.md 0.9): anything else fails. */
START_TEST(test_cgroup_detect)
{
	enum sbx_cgroup_mode m = SBX_CGROUP_NONE;

	ck_assert_int_eq(sbx_cgroup_detect(&m), 0);
	ck_assert_str_eq(sbx_cgroup_mode_name(m), "v1");
	ck_assert_str_eq(sbx_cgroup_mode_name(SBX_CGROUP_V2), "v2");
	ck_assert_str_eq(sbx_cgroup_mode_name(SBX_CGROUP_NONE), "none");
}
END_TEST

START_TEST(test_cgroup_describe_parse)
{
	struct sbx_cgroup *cg, *back = NULL;
	char id[64], *text, *bad;
	static const char *const evil[] = {
		"v1\nmemory /sys/fs/cgroup/memory/corral/lease-OTHER\n",
		"v1\nmemory /tmp/corral/lease-%s\n",
		"v1\nmemory /sys/fs/cgroup/memory/../x/corral/lease-%s\n",
		"v1\nmemory /sys/fs/cgroup/memory/corral/lease-%s/..\n",
		"v1\nbogus /sys/fs/cgroup/memory/corral/lease-%s\n",
		"v1\nmemory /sys/fs/cgroup/memory/corral/lease-%s extra\n",
		"v3\nmemory /sys/fs/cgroup/memory/corral/lease-%s\n",
		"v2\nmemory /sys/fs/cgroup/corral/lease-%s\n",
		"v1\nmemory /sys/fs/cgroup/memory/corral/other/lease-%s\n",
		"v1\nmemory /sys/fs/cgroup/memory/corral/state-0123/lease-%s\n",
		"v1\nmemory /sys/fs/cgroup/memory/corral/state-0123456789abcdeF"
		    "/lease-%s\n",
		"v1\nmemory /sys/fs/cgroup/memory/x/state-0123456789abcdef"
		    "/lease-%s\n",
		"v1\n",
		"",
	};
	char tag[32], *legacy;

	lease_id(id, sizeof id, "desc");
	cg = locate(id);
	ck_assert_int_eq(cg->mode, SBX_CGROUP_V1);
	/* memory, pids, cpu, freezer, and cpuacct mounted apart here. */
	ck_assert_int_eq(cg->n, 5);
	/* Under the state directory's tag (SPEC 9.2). */
	ck_assert_int_eq(sbx_cgroup_scope_name(SCOPE, tag, sizeof tag), 0);
	ck_assert_uint_eq(strlen(tag), 22);
	ck_assert(strncmp(tag, "state-", 6) == 0);
	for (int i = 0; i < cg->n; i++) {
		char tail[128];

		snprintf(tail, sizeof tail, "/corral/%s/lease-%s", tag, id);
		ck_assert(strncmp(cg->c[i].dir, "/sys/fs/cgroup/", 15) == 0);
		ck_assert_str_eq(cg->c[i].dir + strlen(cg->c[i].dir) -
		    strlen(tail), tail);
	}
	text = sbx_cgroup_describe(cg);
	ck_assert_ptr_nonnull(text);
	ck_assert(strncmp(text, "v1\nmemory /sys/fs/cgroup/memory/", 32) == 0);
	ck_assert_int_eq(sbx_cgroup_parse(id, text, &back), 0);
	ck_assert_int_eq(back->n, cg->n);
	for (int i = 0; i < cg->n; i++) {
		ck_assert_str_eq(back->c[i].ctrl, cg->c[i].ctrl);
		ck_assert_str_eq(back->c[i].dir, cg->c[i].dir);
	}
	sbx_cgroup_free(back);
	/* The journal's text for another ID never resolves to this one. */
	ck_assert_int_eq(sbx_cgroup_parse("other", text, &back), -EINVAL);
	ck_assert_ptr_null(back);
	for (size_t i = 0; i < sizeof evil / sizeof evil[0]; i++) {
		ck_assert_int_ge(asprintf(&bad, evil[i], id), 0);
		ck_assert_msg(sbx_cgroup_parse(id, bad, &back) == -EINVAL,
		    "accepted: %s", bad);
		free(bad);
	}
	/* A journal written before state tags still names its own. */
	ck_assert_int_ge(asprintf(&legacy, "v1\nmemory /sys/fs/cgroup/memory/"
	    "corral/lease-%s\n", id), 0);
	ck_assert_int_eq(sbx_cgroup_parse(id, legacy, &back), 0);
	sbx_cgroup_free(back);
	back = NULL;
	free(legacy);
	ck_assert_int_eq(sbx_cgroup_locate(SCOPE, "../x", &back), -EINVAL);
	ck_assert_int_eq(sbx_cgroup_locate(SCOPE, "", &back), -EINVAL);
	ck_assert_int_eq(sbx_cgroup_locate(NULL, id, &back), -EINVAL);
	ck_assert_int_eq(sbx_cgroup_locate("rel", id, &back), -EINVAL);
	free(text);
	sbx_cgroup_free(cg);
	sbx_cgroup_free(NULL);
}
END_TEST

START_TEST(test_cgroup_limits_written)
{
	struct sbx_limits lim = { 0 };
	struct sbx_cgroup *cg;
	struct sbx_plan *p;
	char id[64], **none = NULL;
	struct stat sb;

	lease_id(id, sizeof id, "lim");
	cg = locate(id);
	lim.memory = 96ull << 20;
	lim.swap = 0;
	lim.pids = 40;
	lim.cpu_milli = 500;
	ck_assert(!listed(id));
	ck_assert_int_eq(sbx_cgroup_create(cg, &lim), 0);
	ck_assert(listed(id));
	/* Another state directory's list never names it. */
	ck_assert(!listed_in("/var/empty/another-state", id));
	ck_assert_int_eq(sbx_cgroup_list(NULL, &none), -EINVAL);
	ck_assert_uint_eq(read_num(dir_of(cg, "memory"),
	    "memory.limit_in_bytes"), 96ull << 20);
	ck_assert_uint_eq(read_num(dir_of(cg, "memory"),
	    "memory.memsw.limit_in_bytes"), 96ull << 20);
	ck_assert_uint_eq(read_num(dir_of(cg, "pids"), "pids.max"), 40);
	ck_assert_uint_eq(read_num(dir_of(cg, "cpu"), "cpu.cfs_period_us"),
	    100000);
	ck_assert_uint_eq(read_num(dir_of(cg, "cpu"), "cpu.cfs_quota_us"),
	    50000);
	/* Recreating the same lease rewrites its limits, lower or higher. */
	lim.memory = 200ull << 20;
	lim.swap = 10ull << 20;
	ck_assert_int_eq(sbx_cgroup_create(cg, &lim), 0);
	ck_assert_uint_eq(read_num(dir_of(cg, "memory"),
	    "memory.memsw.limit_in_bytes"), 210ull << 20);
	lim.memory = 64ull << 20;
	lim.swap = 0;
	ck_assert_int_eq(sbx_cgroup_create(cg, &lim), 0);
	ck_assert_uint_eq(read_num(dir_of(cg, "memory"),
	    "memory.limit_in_bytes"), 64ull << 20);
	ck_assert_uint_eq(read_num(dir_of(cg, "memory"),
	    "memory.memsw.limit_in_bytes"), 64ull << 20);
	/* The plan joins every hierarchy. */
	p = sbx_plan_new();
	ck_assert_int_eq(sbx_cgroup_plan(cg, p), 0);
	ck_assert_int_eq(p->ncgroups, cg->n);
	for (int i = 0; i < p->ncgroups; i++)
		ck_assert_ptr_nonnull(strstr(p->cgroup_procs[i],
		    "/cgroup.procs"));
	sbx_plan_free(p);
	/* Teardown by exact ID, idempotent. */
	ck_assert_int_eq(sbx_cgroup_teardown(cg, 5000), 0);
	for (int i = 0; i < cg->n; i++)
		ck_assert_int_ne(stat(cg->c[i].dir, &sb), 0);
	ck_assert(!listed(id));
	ck_assert_int_eq(sbx_cgroup_teardown(cg, 5000), 0);
	sbx_cgroup_free(cg);
}
END_TEST

/*
 * A state directory's cgroup parent goes with its last lease cgroup, and
 * only then: two leases of a scope of this test's own, the parent kept
 * while one is left, gone after both; a lease made while another of the
 * same scope is torn down, 200 times over from two processes, is always
 * made (the creator makes a parent the remover took again).
 */
#define SOLO "/var/empty/corral-test-cgroup-parent"

static bool
parent_there(const struct sbx_cgroup *cg)
{
	char up[1024];
	struct stat sb;

	for (int i = 0; i < cg->n; i++) {
		snprintf(up, sizeof up, "%s", cg->c[i].dir);
		*strrchr(up, '/') = '\0';
		ck_assert_ptr_nonnull(strstr(up, "/corral/state-"));
		if (stat(up, &sb) == 0)
			return true;
	}
	return false;
}

static void
churn(const char *scope, const char *tag, int rounds)
{
	char id[64];

	for (int k = 0; k < rounds; k++) {
		struct sbx_cgroup *cg = NULL;

		snprintf(id, sizeof id, "test-%s%d-%d", tag, k, (int)getpid());
		ck_assert_int_eq(sbx_cgroup_locate(scope, id, &cg), 0);
		ck_assert_int_eq(sbx_cgroup_create(cg, NULL), 0);
		ck_assert_int_eq(sbx_cgroup_teardown(cg, 5000), 0);
		sbx_cgroup_free(cg);
	}
}

START_TEST(test_cgroup_state_parent)
{
	struct sbx_cgroup *a = NULL, *b = NULL;
	char ida[64], idb[64];
	pid_t pid;
	int st;

	lease_id(ida, sizeof ida, "pa");
	lease_id(idb, sizeof idb, "pb");
	ck_assert_int_eq(sbx_cgroup_locate(SOLO, ida, &a), 0);
	ck_assert_int_eq(sbx_cgroup_locate(SOLO, idb, &b), 0);
	ck_assert_int_eq(sbx_cgroup_create(a, NULL), 0);
	ck_assert_int_eq(sbx_cgroup_create(b, NULL), 0);
	ck_assert(parent_there(a));
	ck_assert_int_eq(sbx_cgroup_teardown(a, 5000), 0);
	ck_assert_msg(parent_there(b), "the parent went with a lease left");
	ck_assert_int_eq(sbx_cgroup_teardown(b, 5000), 0);
	ck_assert_msg(!parent_there(b), "the last lease left its parent");
	/* Idempotent: a teardown again leaves nothing either. */
	ck_assert_int_eq(sbx_cgroup_teardown(b, 5000), 0);

	ck_assert_int_ge(pid = fork(), 0);
	if (pid == 0) {
		churn(SOLO, "x", 200);
		_exit(0);
	}
	churn(SOLO, "y", 200);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the other "
	    "creator failed: status %d", st);
	ck_assert(!parent_there(b));
	sbx_cgroup_free(a);
	sbx_cgroup_free(b);
}
END_TEST

/* Run cmd in a real exec zone joined to cg; returns the result. */
static void
zone_run(const struct st_lease *l, struct sbx_cgroup *cg, char **cmd,
    unsigned long long timeout, struct sbx_exec_result *res)
{
	struct sbx_exec_opts o = { 1 << 16, timeout, -1 };
	struct sbx_request r;
	struct sbx_plan *p = NULL;
	int rc;

	st_exec_req(&r, l, cmd);
	ck_assert_int_eq(sbx_bwrap_exec_plan(&r, &p), 0);
	ck_assert_int_eq(sbx_cgroup_plan(cg, p), 0);
	rc = sbx_exec_run(p, &o, res);
	ck_assert_msg(rc == 0, "exec: %s", sbx_strerror(rc));
	sbx_plan_free(p);
}

/* SPEC 8.4: a fork bomb stops at pids.max, named "pids". */
START_TEST(test_cgroup_fork_bomb)
{
	static char *cmd[] = { "/bin/sh", "-c",
		"i=0; while [ $i -lt 200 ]; do sleep 5 & i=$((i+1)); done; "
		"wait", NULL };
	struct sbx_limits lim = { 0 };
	struct sbx_cgroup_facts f;
	struct sbx_exec_result res;
	struct st_lease l;
	struct sbx_cgroup *cg;
	char id[64];

	st_lease_init(&l, "cg-bomb");
	lease_id(id, sizeof id, "bomb");
	cg = locate(id);
	lim.pids = 24;
	lim.memory = 256ull << 20;
	ck_assert_int_eq(sbx_cgroup_create(cg, &lim), 0);
	zone_run(&l, cg, cmd, 20000, &res);
	ck_assert_int_eq(sbx_cgroup_facts(cg, &f), 0);
	ck_assert_uint_gt(f.pids_max, 0);
	ck_assert_str_eq(sbx_cgroup_limit_hit(&f), "pids");
	ck_assert_msg(strstr(res.err, "fork") != NULL ||
	    strstr(res.err, "Resource") != NULL, "%s", res.err);
	sbx_exec_result_clear(&res);
	ck_assert_int_eq(sbx_cgroup_teardown(cg, 5000), 0);
	ck_assert_int_eq(st_wait_no_procs(l.uid, 5000), 0);
	sbx_cgroup_free(cg);
	st_lease_fini(&l);
}
END_TEST

/* SPEC 8.4: a memory hog is OOM-killed in its cgroup, named "memory". */
START_TEST(test_cgroup_memory_hog)
{
	static char *cmd[] = { "/usr/bin/python3", "-c",
		"b = []\nwhile True:\n    b.append(bytearray(4 << 20))\n",
		NULL };
	struct sbx_limits lim = { 0 };
	struct sbx_cgroup_facts f;
	struct sbx_exec_result res;
	struct st_lease l;
	struct sbx_cgroup *cg;
	char id[64];

	st_lease_init(&l, "cg-mem");
	lease_id(id, sizeof id, "mem");
	cg = locate(id);
	lim.memory = 64ull << 20;
	lim.swap = 0;
	lim.pids = 64;
	ck_assert_int_eq(sbx_cgroup_create(cg, &lim), 0);
	zone_run(&l, cg, cmd, 30000, &res);
	ck_assert(!res.timed_out);
	/* The hog died of SIGKILL inside; bwrap reports it as a failure. */
	ck_assert(!WIFEXITED(res.wstatus) || WEXITSTATUS(res.wstatus) != 0);
	ck_assert_int_eq(sbx_cgroup_facts(cg, &f), 0);
	ck_assert_uint_gt(f.oom_kills, 0);
	ck_assert_uint_le(f.mem_max_usage, 64ull << 20);
	ck_assert_str_eq(sbx_cgroup_limit_hit(&f), "memory");
	sbx_exec_result_clear(&res);
	ck_assert_int_eq(sbx_cgroup_teardown(cg, 5000), 0);
	sbx_cgroup_free(cg);
	st_lease_fini(&l);
}
END_TEST

struct bg {
	const struct st_lease *l;
	struct sbx_cgroup *cg;
	char **cmd;
	struct sbx_exec_result res;
};

static void *
bg_run(void *arg)
{
	struct bg *b = arg;

	zone_run(b->l, b->cg, b->cmd, 30000, &b->res);
	return NULL;
}

struct bga_arg {
	struct sbx_plan *p;
	struct sbx_exec_opts *o;
	struct sbx_exec_result res;
};

static void *
bga_run(void *arg)
{
	struct bga_arg *b = arg;

	if (sbx_exec_run(b->p, b->o, &b->res) < 0)
		b->res.wstatus = -1;
	return NULL;
}

/* Wait until the cgroup holds at least n processes. */
static void
wait_pids(const struct sbx_cgroup *cg, size_t n)
{
	uint64_t end = cu_now_ms() + 10000;
	pid_t *pids;
	size_t have = 0;

	for (;;) {
		ck_assert_int_eq(sbx_cgroup_pids(cg, &pids, &have), 0);
		free(pids);
		if (have >= n)
			return;
		ck_assert_msg(cu_now_ms() < end, "only %zu process(es)", have);
		usleep(20000);
	}
}

static bool
wait_file(const char *path, int ms)
{
	uint64_t end = cu_now_ms() + (uint64_t)ms;
	struct stat sb;

	while (stat(path, &sb) < 0) {
		if (cu_now_ms() >= end)
			return false;
		usleep(20000);
	}
	return true;
}

/*
 * SPEC 5.5: SIGTERM reaches the agent inside while bwrap survives to
 * report its exit: the agent's trap runs (a canary file on the host) and
 * the zone exits with the agent's own status.
 */
START_TEST(test_cgroup_graceful_signal)
{
	static char *cmd[] = { "/bin/sh", "-c",
		"trap 'echo term > /work/term; exit 42' TERM; "
		"touch /work/ready; while :; do sleep 0.05; done", NULL };
	struct sbx_limits lim = { 0 };
	struct st_lease l;
	struct bg b;
	pthread_t th;
	char id[64], *ready, *term;
	int n;

	st_lease_init(&l, "cg-sig");
	lease_id(id, sizeof id, "sig");
	memset(&b, 0, sizeof b);
	b.l = &l;
	b.cg = locate(id);
	b.cmd = cmd;
	lim.pids = 64;
	ck_assert_int_eq(sbx_cgroup_create(b.cg, &lim), 0);
	ck_assert_int_gt(asprintf(&ready, "%s/ready", l.ws), 0);
	ck_assert_int_gt(asprintf(&term, "%s/term", l.ws), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, bg_run, &b), 0);
	ck_assert(wait_file(ready, 10000));
	/* outer bwrap, bwrap pid 1, sh (and maybe a sleep) */
	wait_pids(b.cg, 3);
	n = sbx_cgroup_signal(b.cg, SIGTERM);
	ck_assert_int_ge(n, 1);
	/* Frozen while signalled, never left frozen. */
	{
		char *fs = NULL, *st;

		ck_assert_int_gt(asprintf(&fs, "%s/freezer.state",
		    dir_of(b.cg, "freezer")), 0);
		ck_assert_ptr_nonnull(st = cu_read_file(fs, NULL));
		ck_assert_str_eq(st, "THAWED\n");
		free(st);
		free(fs);
	}
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	/* Host side: the agent handled it, bwrap carried its status. */
	ck_assert(wait_file(term, 1000));
	ck_assert_msg(WIFEXITED(b.res.wstatus), "status %d", b.res.wstatus);
	ck_assert_int_eq(WEXITSTATUS(b.res.wstatus), 42);
	sbx_exec_result_clear(&b.res);
	ck_assert_int_eq(sbx_cgroup_signal(b.cg, 0), -EINVAL);
	ck_assert_int_eq(sbx_cgroup_teardown(b.cg, 5000), 0);
	/* Gone: nothing to signal. */
	ck_assert_int_eq(sbx_cgroup_signal(b.cg, SIGTERM), 0);
	sbx_cgroup_free(b.cg);
	free(ready);
	free(term);
	st_lease_fini(&l);
}
END_TEST

/*
 * The same in the agent zone, where corral-sbx-init is the agent's parent:
 * it is spared too, waits for the agent and hands its status back.
 */
START_TEST(test_cgroup_graceful_signal_agent)
{
	static char *cmd[] = { "/bin/sh", "-c",
		"trap 'echo term > /work/term; exit 43' TERM; "
		"touch /work/ready; while :; do sleep 0.05; done", NULL };
	struct sbx_exec_opts o = { 1 << 16, 30000, -1 };
	struct sbx_limits lim = { 0 };
	struct sbx_request req;
	struct st_lease l;
	struct bga_arg b;
	struct sbx_cgroup *cg;
	pthread_t th;
	char id[64], *ready, *term, *init = st_helper("corral-sbx-init");
	char *stage = cu_tmpdir("cg-agent-stage"), *init_st, *buf;
	size_t len = 0;
	int n;

	st_lease_init(&l, "cg-agent");
	/* bwrap resolves bind sources as the lease uid: a 0755 stage. */
	ck_assert_int_eq(chmod(stage, 0755), 0);
	ck_assert_int_gt(asprintf(&init_st, "%s/corral-sbx-init", stage), 0);
	buf = cu_read_file(init, &len);
	ck_assert_int_eq(cu_write_file(init_st, buf, len), 0);
	ck_assert_int_eq(chmod(init_st, 0755), 0);
	free(buf);
	lease_id(id, sizeof id, "sigagent");
	cg = locate(id);
	lim.pids = 64;
	ck_assert_int_eq(sbx_cgroup_create(cg, &lim), 0);
	memset(&req, 0, sizeof req);
	req.workspace = l.ws;
	req.cmd = cmd;
	req.init_path = init_st;
	req.uid = l.uid;
	req.gid = l.gid;
	memset(&b, 0, sizeof b);
	ck_assert_int_eq(sbx_adapter_bwrap.plan(&req, &b.p), 0);
	ck_assert_int_eq(sbx_cgroup_plan(cg, b.p), 0);
	b.o = &o;
	ck_assert_int_gt(asprintf(&ready, "%s/ready", l.ws), 0);
	ck_assert_int_gt(asprintf(&term, "%s/term", l.ws), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, bga_run, &b), 0);
	ck_assert(wait_file(ready, 10000));
	/* outer bwrap, bwrap pid 1, the helper, sh */
	wait_pids(cg, 4);
	n = sbx_cgroup_signal(cg, SIGTERM);
	ck_assert_int_ge(n, 1);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	ck_assert(wait_file(term, 1000));
	ck_assert_msg(WIFEXITED(b.res.wstatus), "status %d", b.res.wstatus);
	ck_assert_int_eq(WEXITSTATUS(b.res.wstatus), 43);
	sbx_exec_result_clear(&b.res);
	sbx_plan_free(b.p);
	ck_assert_int_eq(sbx_cgroup_teardown(cg, 5000), 0);
	sbx_cgroup_free(cg);
	cu_rmrf(stage);
	free(stage);
	free(init_st);
	free(init);
	free(ready);
	free(term);
	st_lease_fini(&l);
}
END_TEST

/*
 * Teardown of a live zone with a double-forked daemon in its own session:
 * freeze, kill, thaw, wait, rmdir; on the host nothing of the uid is left.
 */
START_TEST(test_cgroup_teardown_live)
{
	static char *cmd[] = { "/bin/sh", "-c",
		"(setsid sh -c 'trap \"\" TERM HUP; touch /work/daemon; "
		"exec sleep 1000' &); exec sleep 1000", NULL };
	struct sbx_limits lim = { 0 };
	struct st_lease l;
	struct bg b;
	pthread_t th;
	char id[64], *daemon;
	struct stat sb;

	st_lease_init(&l, "cg-down");
	lease_id(id, sizeof id, "down");
	memset(&b, 0, sizeof b);
	b.l = &l;
	b.cg = locate(id);
	b.cmd = cmd;
	lim.pids = 64;
	ck_assert_int_eq(sbx_cgroup_create(b.cg, &lim), 0);
	ck_assert_int_gt(asprintf(&daemon, "%s/daemon", l.ws), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, bg_run, &b), 0);
	ck_assert(wait_file(daemon, 10000));
	wait_pids(b.cg, 4);
	ck_assert_int_gt(st_procs_of_uid(l.uid), 3);
	ck_assert_int_eq(sbx_cgroup_teardown(b.cg, 5000), 0);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	ck_assert(WIFSIGNALED(b.res.wstatus));
	for (int i = 0; i < b.cg->n; i++)
		ck_assert_int_ne(stat(b.cg->c[i].dir, &sb), 0);
	ck_assert_int_eq(st_wait_no_procs(l.uid, 5000), 0);
	ck_assert(!listed(id));
	sbx_exec_result_clear(&b.res);
	sbx_cgroup_free(b.cg);
	free(daemon);
	st_lease_fini(&l);
}
END_TEST

START_TEST(test_cgroup_limit_hit_pure)
{
	struct sbx_cgroup_facts f;

	memset(&f, 0, sizeof f);
	ck_assert_ptr_null(sbx_cgroup_limit_hit(&f));
	/* Reclaim at the limit is not an OOM. */
	f.mem_failcnt = 100;
	ck_assert_ptr_null(sbx_cgroup_limit_hit(&f));
	f.pids_max = 1;
	ck_assert_str_eq(sbx_cgroup_limit_hit(&f), "pids");
	f.oom_kills = 1;
	ck_assert_str_eq(sbx_cgroup_limit_hit(&f), "memory");
	ck_assert_ptr_null(sbx_cgroup_limit_hit(NULL));
}
END_TEST

Suite *
cgroup_suite(void)
{
	Suite *s = suite_create("cgroup");
	TCase *tc = tcase_create("Core");
	TCase *ti = tcase_create("Integration");

	tcase_add_test(tc, test_cgroup_detect);
	tcase_add_test(tc, test_cgroup_describe_parse);
	tcase_add_test(tc, test_cgroup_limits_written);
	tcase_add_test(tc, test_cgroup_limit_hit_pure);
	tcase_set_timeout(ti, 60);
	tcase_add_test(ti, test_cgroup_fork_bomb);
	tcase_add_test(ti, test_cgroup_memory_hog);
	tcase_add_test(ti, test_cgroup_graceful_signal);
	tcase_add_test(ti, test_cgroup_graceful_signal_agent);
	tcase_add_test(ti, test_cgroup_teardown_live);
	tcase_add_test(ti, test_cgroup_state_parent);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, ti);
	return s;
}
