/*
 * test_exec.c: the exec zone (SPEC 8.2; SANDBOX.md 5.a) run for real with
 * sbx_exec_run under bwrap as a lease uid: the hermetic environment
 * (TZ, locale, umask, SOURCE_DATE_EPOCH, seeds, the frozen clock), no
 * network (a host listener is never reached), stdin /dev/null, the output
 * cap, the wall-time limit, a read-only workspace, tool versions, and its
 * pure plan. Breaches are confirmed on the host side.
 */
#include <arpa/inet.h>
#include <check.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "sbx_test.h"

Suite *exec_suite(void);

static struct sbx_plan *
exec_plan(const struct sbx_request *r)
{
	struct sbx_plan *p = NULL;
	int rc = sbx_bwrap_exec_plan(r, &p);

	ck_assert_msg(rc == 0, "plan: %s", sbx_strerror(rc));
	return p;
}

static void
run(struct sbx_plan *p, size_t cap, unsigned long long timeout,
    struct sbx_exec_result *res)
{
	struct sbx_exec_opts o = { cap, timeout, -1 };
	int rc = sbx_exec_run(p, &o, res);

	ck_assert_msg(rc == 0, "exec: %s", sbx_strerror(rc));
}

static bool
has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; p != NULL && *p != '\0';) {
		if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0'))
			return true;
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return false;
}

/* The options bwrap reads, as one string with '|' between them. */
static char *
options(const struct sbx_plan *p)
{
	const struct sbx_data *d = sbx_plan_data_find(p, SBX_BWRAP_ARGS_FD);
	char *s;

	ck_assert_ptr_nonnull(d);
	s = malloc(d->len + 1);
	for (size_t i = 0; i < d->len; i++)
		s[i] = d->bytes[i] == '\0' ? '|' : d->bytes[i];
	s[d->len] = '\0';
	return s;
}

START_TEST(test_exec_plan_pure)
{
	static char *cmd[] = { "/bin/sh", "-c", "make test", NULL };
	static const struct sbx_mount tc[] = { { "/opt/tc", "/opt/tc" } };
	struct sbx_request r;
	struct sbx_plan *p;
	char *o;
	const char *ft = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

	memset(&r, 0, sizeof r);
	r.id = "x";
	r.workspace = "/var/lib/corral/leases/x/work";
	r.cmd = cmd;
	r.uid = r.gid = 2000001;
	r.source_date_epoch = 1700000000;
	r.faketime = ft;
	r.ro_binds = tc;
	r.nro_binds = 1;
	p = exec_plan(&r);
	/* No helper in the exec zone: bwrap runs the command itself. */
	ck_assert_str_eq(p->argv[0], SBX_BWRAP_PATH);
	ck_assert_str_eq(p->argv[1], "--args");
	ck_assert_str_eq(p->argv[3], "--");
	ck_assert_str_eq(p->argv[4], "/bin/sh");
	ck_assert_int_eq(p->umask, 022);
	ck_assert(p->drop_uid && p->no_new_privs);
	ck_assert_ptr_nonnull(sbx_plan_data_find(p, SBX_BWRAP_SECCOMP_FD));
	o = options(p);
	ck_assert_ptr_nonnull(strstr(o, "|--unshare-net|"));
	ck_assert_ptr_null(strstr(o, "|--share-net|"));
	ck_assert_ptr_nonnull(strstr(o, "|--setenv|TZ|UTC|"));
	ck_assert_ptr_nonnull(strstr(o, "|--setenv|LC_ALL|C.UTF-8|"));
	ck_assert_ptr_nonnull(strstr(o, "|--setenv|PYTHONHASHSEED|0|"));
	ck_assert_ptr_nonnull(strstr(o,
	    "|--setenv|SOURCE_DATE_EPOCH|1700000000|"));
	ck_assert_ptr_nonnull(strstr(o,
	    "|--setenv|FAKETIME|2023-11-14 22:13:20|"));
	ck_assert_ptr_nonnull(strstr(o, "|--setenv|LD_PRELOAD|"
	    SBX_EXEC_FAKETIME "|"));
	ck_assert_ptr_nonnull(strstr(o, "|--ro-bind|/usr/lib/x86_64-linux-gnu/"
	    "faketime/libfaketime.so.1|" SBX_EXEC_FAKETIME "|"));
	ck_assert_ptr_nonnull(strstr(o, "|--bind|/var/lib/corral/leases/x/"
	    "work|/work|"));
	ck_assert_ptr_nonnull(strstr(o, "|--ro-bind|/opt/tc|/opt/tc|"));
	ck_assert_ptr_null(strstr(o, "|TERM|"));
	ck_assert_ptr_null(strstr(o, SBX_BWRAP_INIT));
	ck_assert_ptr_nonnull(strstr(o, "|--remount-ro|/|--seccomp|7|"));
	free(o);
	sbx_plan_free(p);

	/* Read-only workspace; no faketime: no preload at all. */
	r.workspace_ro = true;
	r.faketime = NULL;
	p = exec_plan(&r);
	o = options(p);
	ck_assert_ptr_nonnull(strstr(o, "|--ro-bind|/var/lib/corral/leases/"
	    "x/work|/work|"));
	ck_assert_ptr_null(strstr(o, "LD_PRELOAD"));
	ck_assert_ptr_null(strstr(o, "FAKETIME"));
	free(o);
	sbx_plan_free(p);

	/* Refused: a credential, a negative time, a bad faketime path. */
	r.credential = "ANTHROPIC_API_KEY=x";
	ck_assert_int_eq(sbx_bwrap_exec_plan(&r, &p), -EINVAL);
	r.credential = NULL;
	r.source_date_epoch = -1;
	ck_assert_int_eq(sbx_bwrap_exec_plan(&r, &p), -EINVAL);
	r.source_date_epoch = 0;
	r.faketime = "libfaketime.so.1";
	ck_assert_int_eq(sbx_bwrap_exec_plan(&r, &p), -EINVAL);
}
END_TEST

/* The environment allowlist through the plan; credential names refused. */
START_TEST(test_exec_plan_env)
{
	static char *cmd[] = { "/bin/true", NULL };
	char *good[] = { "EDITOR=vi", "CARGO_HOME=/c", NULL };
	char *cred[] = { "EDITOR=vi", "GITHUB_TOKEN=ghp_x", NULL };
	char *fixed[] = { "PATH=/evil", NULL };
	char *preload[] = { "LD_PRELOAD=/x.so", NULL };
	char *bad[] = { "NOEQUALS", NULL };
	struct sbx_request r;
	struct sbx_plan *p;
	char *o;

	memset(&r, 0, sizeof r);
	r.workspace = "/w";
	r.cmd = cmd;
	r.uid = r.gid = 2000001;
	r.env = good;
	p = exec_plan(&r);
	o = options(p);
	ck_assert_ptr_nonnull(strstr(o, "|--setenv|EDITOR|vi|"));
	ck_assert_ptr_nonnull(strstr(o, "|--setenv|CARGO_HOME|/c|"));
	free(o);
	sbx_plan_free(p);
	/* Nothing of it on the argv. */
	r.env = cred;
	ck_assert_int_eq(sbx_bwrap_exec_plan(&r, &p), SBX_EPOLICY);
	ck_assert_int_eq(sbx_adapter_bwrap.plan(&r, &p), -EINVAL);
	r.env = fixed;
	ck_assert_int_eq(sbx_bwrap_exec_plan(&r, &p), SBX_EPOLICY);
	r.env = preload;
	ck_assert_int_eq(sbx_bwrap_exec_plan(&r, &p), SBX_EPOLICY);
	r.env = bad;
	ck_assert_int_eq(sbx_bwrap_exec_plan(&r, &p), -EINVAL);
}
END_TEST

/* SPEC 8.2: hermetic, inside a real exec zone, as the lease uid. */
START_TEST(test_exec_hermetic)
{
	static char *cmd[] = { "/bin/sh", "-c",
		"env | sort; echo umask=$(umask); echo uid=$(id -u); "
		"echo date=$(date +%s); echo year=$(date +%Y); "
		"echo fds=$(env -u LD_PRELOAD ls /proc/self/fd | "
		"tr '\\n' ' '); "
		"if read x; then echo stdin=data; else echo stdin=eof; fi; "
		"python3 -c 'print(\"hash=%d\" % hash(\"corral\"))'; "
		"touch /work/made; echo done", NULL };
	struct st_lease l;
	struct sbx_request r;
	struct sbx_exec_result res;
	struct sbx_plan *p;
	struct stat sb;
	char *made, *first = NULL;
	const char *ft = sbx_bwrap_faketime_path();

	/* libfaketime is a dependency (SPEC 1): its absence fails. */
	ck_assert_ptr_nonnull(ft);
	/* Whatever corral's own umask, the zone's is 022. */
	umask(077);
	st_lease_init(&l, "exec-herm");
	st_exec_req(&r, &l, cmd);
	r.faketime = ft;
	for (int round = 0; round < 2; round++) {
		p = exec_plan(&r);
		run(p, 1 << 16, 30000, &res);
		sbx_plan_free(p);
		ck_assert_msg(WIFEXITED(res.wstatus) &&
		    WEXITSTATUS(res.wstatus) == 0, "status %d: %s",
		    res.wstatus, res.err);
		ck_assert_msg(has_line(res.out, "done"), "%s\n%s", res.out,
		    res.err);
		ck_assert(has_line(res.out, "TZ=UTC"));
		ck_assert(has_line(res.out, "LC_ALL=C.UTF-8"));
		ck_assert(has_line(res.out, "LANG=C.UTF-8"));
		ck_assert(has_line(res.out, "SOURCE_DATE_EPOCH=1700000000"));
		ck_assert(has_line(res.out, "PYTHONHASHSEED=0"));
		ck_assert(has_line(res.out, "HOME=/home/sbx"));
		ck_assert(has_line(res.out, "umask=0022"));
		ck_assert(has_line(res.out, "stdin=eof"));
		/* The clock is frozen at the base commit's time. */
		ck_assert_msg(has_line(res.out, "date=1700000000"), "%s",
		    res.out);
		ck_assert(has_line(res.out, "year=2023"));
		/* Only stdio is inherited (ls holds 3 for its listing). */
		ck_assert_msg(has_line(res.out, "fds=0 1 2 3"), "%s",
		    res.out);
		{
			char want[64];

			snprintf(want, sizeof want, "uid=%u", l.uid);
			ck_assert(has_line(res.out, want));
		}
		ck_assert_ptr_null(strstr(res.out, "TERM="));
		ck_assert(!res.truncated && !res.timed_out);
		/* Same bytes out each run: hermetic. */
		if (round == 0)
			first = strdup(res.out);
		else
			ck_assert_str_eq(res.out, first);
		sbx_exec_result_clear(&res);
	}
	free(first);
	/* Host side: the file is the lease uid's, mode from umask 022. */
	ck_assert_int_gt(asprintf(&made, "%s/made", l.ws), 0);
	ck_assert_int_eq(stat(made, &sb), 0);
	ck_assert_uint_eq(sb.st_uid, l.uid);
	ck_assert_uint_eq(sb.st_mode & 0777, 0644);
	free(made);
	ck_assert_int_eq(st_wait_no_procs(l.uid, 5000), 0);
	st_lease_fini(&l);
}
END_TEST

/*
 * No network at all: a listener on the host's 127.0.0.1 is never reached
 * (checked on the host), DNS fails, vsock is refused.
 */
START_TEST(test_exec_no_network)
{
	static char cmd_s[512];
	static char *cmd[] = { "/usr/bin/python3", "-c", cmd_s, NULL };
	struct st_lease l;
	struct sbx_request r;
	struct sbx_exec_result res;
	struct sbx_plan *p;
	struct sockaddr_in a;
	socklen_t alen = sizeof a;
	int ls, c;

	ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(ls, 0);
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(ls, (struct sockaddr *)&a, sizeof a), 0);
	ck_assert_int_eq(listen(ls, 4), 0);
	ck_assert_int_eq(getsockname(ls, (struct sockaddr *)&a, &alen), 0);
	snprintf(cmd_s, sizeof cmd_s,
	    "import socket\n"
	    "def t(name, f):\n"
	    "    try:\n"
	    "        f(); print(name, 'open')\n"
	    "    except OSError as e:\n"
	    "        print(name, 'refused', e.errno)\n"
	    "t('tcp', lambda: socket.create_connection(('127.0.0.1', %d), 2))\n"
	    "t('dns', lambda: socket.getaddrinfo('example.com', 443))\n"
	    "t('vsock', lambda: socket.socket(socket.AF_VSOCK, "
	    "socket.SOCK_STREAM))\n"
	    "print('ifaces', sorted(n for i, n in socket.if_nameindex()))\n",
	    ntohs(a.sin_port));
	st_lease_init(&l, "exec-net");
	st_exec_req(&r, &l, cmd);
	p = exec_plan(&r);
	run(p, 1 << 16, 30000, &res);
	sbx_plan_free(p);
	ck_assert_msg(has_line(res.out, "tcp refused 111"), "%s\n%s",
	    res.out, res.err);
	ck_assert_msg(strstr(res.out, "dns refused") != NULL, "%s", res.out);
	ck_assert_msg(has_line(res.out, "vsock refused 1"), "%s", res.out);
	ck_assert_msg(has_line(res.out, "ifaces ['lo']"), "%s", res.out);
	/* Host side: nobody ever connected. */
	c = accept(ls, NULL, NULL);
	ck_assert_int_eq(c, -1);
	ck_assert_int_eq(errno, EAGAIN);
	close(ls);
	sbx_exec_result_clear(&res);
	st_lease_fini(&l);
}
END_TEST

/* Output past the cap is dropped; a flood that goes on is killed. */
START_TEST(test_exec_output_cap)
{
	static char *flood[] = { "/usr/bin/yes", "corral", NULL };
	static char *some[] = { "/bin/sh", "-c",
		"head -c 3000 /dev/zero | tr '\\0' a; echo err >&2", NULL };
	struct st_lease l;
	struct sbx_request r;
	struct sbx_exec_result res;
	struct sbx_plan *p;

	st_lease_init(&l, "exec-cap");
	st_exec_req(&r, &l, some);
	p = exec_plan(&r);
	run(p, 1000, 30000, &res);
	sbx_plan_free(p);
	ck_assert(res.truncated);
	ck_assert(!res.output_killed);
	ck_assert_uint_eq(res.out_len + res.err_len, 1000);
	ck_assert_uint_eq(strlen(res.out), res.out_len);
	ck_assert(WIFEXITED(res.wstatus));
	sbx_exec_result_clear(&res);

	st_exec_req(&r, &l, flood);
	p = exec_plan(&r);
	run(p, 4096, 60000, &res);
	sbx_plan_free(p);
	ck_assert(res.truncated);
	ck_assert(res.output_killed);
	ck_assert(!res.timed_out);
	ck_assert_uint_eq(res.out_len, 4096);
	ck_assert(WIFSIGNALED(res.wstatus));
	ck_assert_int_eq(WTERMSIG(res.wstatus), SIGKILL);
	ck_assert_int_eq(st_wait_no_procs(l.uid, 5000), 0);
	sbx_exec_result_clear(&res);
	st_lease_fini(&l);
}
END_TEST

/* The wall-time limit kills the whole zone, daemons included. */
START_TEST(test_exec_timeout)
{
	static char *cmd[] = { "/bin/sh", "-c",
		"(setsid sh -c 'sleep 1000' &); echo started; exec sleep 1000",
		NULL };
	struct st_lease l;
	struct sbx_request r;
	struct sbx_exec_result res;
	struct sbx_plan *p;

	st_lease_init(&l, "exec-time");
	st_exec_req(&r, &l, cmd);
	p = exec_plan(&r);
	run(p, 4096, 700, &res);
	sbx_plan_free(p);
	ck_assert_msg(res.timed_out, "status %d err %s out %s", res.wstatus,
	    res.err, res.out);
	ck_assert(WIFSIGNALED(res.wstatus));
	ck_assert_uint_ge(res.wall_ms, 700);
	ck_assert_uint_lt(res.wall_ms, 10000);
	ck_assert(has_line(res.out, "started"));
	ck_assert_int_eq(st_wait_no_procs(l.uid, 5000), 0);
	sbx_exec_result_clear(&res);
	st_lease_fini(&l);
}
END_TEST

START_TEST(test_exec_status_and_ro)
{
	static char *cmd[] = { "/bin/sh", "-c",
		"touch /work/x 2>/dev/null && echo wrote || echo ro; "
		"touch /x 2>/dev/null || echo root-ro; exit 3", NULL };
	struct st_lease l;
	struct sbx_request r;
	struct sbx_exec_result res;
	struct sbx_plan *p;
	struct sbx_exec_opts o = { 100, 1000, -1 };
	char *x;
	struct stat sb;

	st_lease_init(&l, "exec-ro");
	st_exec_req(&r, &l, cmd);
	r.workspace_ro = true;
	p = exec_plan(&r);
	run(p, 4096, 30000, &res);
	sbx_plan_free(p);
	ck_assert(WIFEXITED(res.wstatus));
	ck_assert_int_eq(WEXITSTATUS(res.wstatus), 3);
	ck_assert(has_line(res.out, "ro"));
	ck_assert(has_line(res.out, "root-ro"));
	ck_assert_int_gt(asprintf(&x, "%s/x", l.ws), 0);
	ck_assert_int_ne(stat(x, &sb), 0);
	free(x);
	sbx_exec_result_clear(&res);
	/* A plan that cannot exec: the error, not a status. */
	p = sbx_plan_new();
	ck_assert_int_eq(sbx_plan_arg(p, "/nonexistent/prog"), 0);
	ck_assert_int_eq(sbx_exec_run(p, &o, &res), -ENOENT);
	sbx_plan_free(p);
	st_lease_fini(&l);
}
END_TEST

static bool
has_rlimit(const struct sbx_plan *p, int res, unsigned long long cur,
    unsigned long long max)
{
	for (int i = 0; i < p->nrlimits; i++) {
		if (p->rlimits[i].resource == res && p->rlimits[i].cur == cur &&
		    p->rlimits[i].max == max)
			return true;
	}
	return false;
}

/* The policy's limits in the plan (SANDBOX.md 3.6): rlimits and tmpfs. */
START_TEST(test_exec_plan_limits)
{
	static char *cmd[] = { "/bin/true", NULL };
	struct sbx_limits lim = { 0 };
	struct sbx_request r;
	struct sbx_plan *p;
	char *o;

	memset(&r, 0, sizeof r);
	r.workspace = "/w";
	r.cmd = cmd;
	r.uid = r.gid = 2000001;
	p = exec_plan(&r);
	/* Without limits: no core files, nothing else. */
	ck_assert_int_eq(p->nrlimits, 1);
	ck_assert(has_rlimit(p, RLIMIT_CORE, 0, 0));
	sbx_plan_free(p);
	lim.file_size = 1 << 20;
	lim.nofile = 256;
	lim.cpu_time = 60;
	lim.pids = 32;
	lim.tmp = 8 << 20;
	lim.home = 4 << 20;
	lim.memory = 1ull << 30;
	r.limits = &lim;
	p = exec_plan(&r);
	ck_assert(has_rlimit(p, RLIMIT_CORE, 0, 0));
	ck_assert(has_rlimit(p, RLIMIT_FSIZE, 1 << 20, 1 << 20));
	ck_assert(has_rlimit(p, RLIMIT_NOFILE, 256, 256));
	ck_assert(has_rlimit(p, RLIMIT_CPU, 60, 65));
	ck_assert(has_rlimit(p, RLIMIT_NPROC, 2 * 32 + 16, 2 * 32 + 16));
	for (int i = 0; i < p->nrlimits; i++)
		ck_assert_int_ne(p->rlimits[i].resource, RLIMIT_AS);
	o = options(p);
	ck_assert_ptr_nonnull(strstr(o, "|--size|8388608|--tmpfs|/tmp|"));
	ck_assert_ptr_nonnull(strstr(o, "|--size|4194304|--tmpfs|/home/sbx|"));
	free(o);
	sbx_plan_free(p);
	/* An explicit request size wins over the policy's. */
	r.tmp_bytes = 1 << 20;
	p = exec_plan(&r);
	o = options(p);
	ck_assert_ptr_nonnull(strstr(o, "|--size|1048576|--tmpfs|/tmp|"));
	free(o);
	sbx_plan_free(p);
}
END_TEST

/*
 * The limits hold inside a real zone: SIGXFSZ at the per-file cap, ENOSPC
 * at the /tmp size, no core files, the fd cap, and RLIMIT_NPROC's
 * backstop stopping forks.
 */
START_TEST(test_exec_rlimits_hold)
{
	static char *cmd[] = { "/bin/sh", "-c",
		"head -c 3M /dev/zero > /work/big; echo fsize=$?; "
		"head -c 800K /dev/zero > /tmp/t 2>/dev/null; echo tmp=$?; "
		"ulimit -c; ulimit -n; "
		"i=0; while [ $i -lt 80 ]; do "
		"(sleep 2 &) 2>/dev/null || break; "
		"i=$((i+1)); done; echo forks=$i", NULL };
	struct sbx_limits lim = { 0 };
	struct st_lease l;
	struct sbx_request r;
	struct sbx_exec_result res;
	struct sbx_plan *p;
	char *big;
	struct stat sb;

	st_lease_init(&l, "exec-rlim");
	st_exec_req(&r, &l, cmd);
	lim.file_size = 1 << 20;
	lim.nofile = 128;
	lim.pids = 12;
	lim.tmp = 512 << 10;
	r.limits = &lim;
	p = exec_plan(&r);
	run(p, 1 << 16, 30000, &res);
	sbx_plan_free(p);
	/* 128 + SIGXFSZ from the per-file cap. */
	ck_assert_msg(has_line(res.out, "fsize=153"), "%s\n%s", res.out,
	    res.err);
	ck_assert_msg(has_line(res.out, "tmp=1"), "%s", res.out);
	ck_assert(has_line(res.out, "0"));
	ck_assert(has_line(res.out, "128"));
	ck_assert_ptr_nonnull(strstr(res.out, "forks="));
	/* the backstop: twice pids plus 16 (the pids cgroup binds first) */
	ck_assert_int_lt(atoi(strstr(res.out, "forks=") + 6), 2 * 12 + 16);
	ck_assert_int_gt(asprintf(&big, "%s/big", l.ws), 0);
	ck_assert_int_eq(stat(big, &sb), 0);
	ck_assert_int_eq(sb.st_size, 1 << 20);
	free(big);
	sbx_exec_result_clear(&res);
	ck_assert_int_eq(st_wait_no_procs(l.uid, 10000), 0);
	st_lease_fini(&l);
}
END_TEST

START_TEST(test_exec_tool_versions)
{
	char *t = NULL;

	ck_assert_int_eq(sbx_exec_tool_versions(&t), 0);
	ck_assert_ptr_nonnull(t);
	ck_assert_msg(strncmp(t, "sh: /usr/bin/", 13) == 0, "%s", t);
	ck_assert_msg(strstr(t, "\ncc: ") != NULL, "%s", t);
	ck_assert_msg(strstr(t, "\npython3: Python 3.") != NULL, "%s", t);
	ck_assert_msg(strstr(t, "\nmake: GNU Make") != NULL, "%s", t);
	ck_assert_msg(strstr(t, "\ngit: git version") != NULL, "%s", t);
	free(t);
}
END_TEST

Suite *
exec_suite(void)
{
	Suite *s = suite_create("exec");
	TCase *tc = tcase_create("Core");
	TCase *ti = tcase_create("Integration");

	tcase_add_test(tc, test_exec_plan_pure);
	tcase_add_test(tc, test_exec_plan_env);
	tcase_add_test(tc, test_exec_plan_limits);
	tcase_add_test(tc, test_exec_tool_versions);
	tcase_set_timeout(ti, 60);
	tcase_add_test(ti, test_exec_hermetic);
	tcase_add_test(ti, test_exec_no_network);
	tcase_add_test(ti, test_exec_output_cap);
	tcase_add_test(ti, test_exec_timeout);
	tcase_add_test(ti, test_exec_status_and_ro);
	tcase_add_test(ti, test_exec_rlimits_hold);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, ti);
	return s;
}
