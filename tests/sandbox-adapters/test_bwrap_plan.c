/*
 * test_bwrap_plan.c: unit tests of the bwrap adapter's pure plan (SPEC 8.1,
 * 8.3; SANDBOX.md 0, 5.a, 5.b): the exact argv and the exact options sent
 * through `--args`, the pre-exec recipe, refused requests, the data fds,
 * the per-lease uid allocator and the probe on this host.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-adapters/sbx.h"
#include "support/check_util.h"
#include "sbx_test.h"

Suite *bwrap_plan_suite(void);

#define UID 2000007u
#define WS "/var/lib/corral/leases/x/work"
#define INIT "/usr/libexec/corral/corral-sbx-init"

static char *cmd_default[] = { "/opt/agent/bin/agent", "--flag", "a b",
	NULL };

static void
req_default(struct sbx_request *r)
{
	memset(r, 0, sizeof *r);
	r->id = "20261129-000000-000-0000";
	r->lease_dir = "/var/lib/corral/leases/x";
	r->workspace = WS;
	r->cmd = cmd_default;
	r->init_path = INIT;
	r->uid = UID;
	r->gid = UID;
}

/* The options bwrap reads from the --args fd, split at NULs. */
struct optv {
	char **v;
	int n;
};

static void
optv_from_plan(const struct sbx_plan *p, struct optv *o)
{
	const struct sbx_data *d = sbx_plan_data_find(p, SBX_BWRAP_ARGS_FD);
	size_t off = 0;

	ck_assert_ptr_nonnull(d);
	ck_assert_int_gt(d->len, 0);
	ck_assert_int_eq(d->bytes[d->len - 1], '\0');
	o->v = calloc(d->len + 1, sizeof *o->v);
	o->n = 0;
	while (off < d->len) {
		o->v[o->n++] = d->bytes + off;
		off += strlen(d->bytes + off) + 1;
	}
}

static int
optv_find(const struct optv *o, int from, const char *a, const char *b,
    const char *c)
{
	for (int i = from; i < o->n; i++) {
		if (strcmp(o->v[i], a) != 0)
			continue;
		if (b != NULL && (i + 1 >= o->n || strcmp(o->v[i + 1], b) != 0))
			continue;
		if (c != NULL && (i + 2 >= o->n || strcmp(o->v[i + 2], c) != 0))
			continue;
		return i;
	}
	return -1;
}

static struct sbx_plan *
plan_ok(const struct sbx_request *r)
{
	struct sbx_plan *p = NULL;

	ck_assert_int_eq(sbx_adapter_bwrap.plan(r, &p), 0);
	ck_assert_ptr_nonnull(p);
	return p;
}

START_TEST(test_bwrap_plan_argv_exact)
{
	static const char *const want[] = { "/usr/bin/bwrap", "--args", "3",
		"--", "/run/corral/init", "--", "/opt/agent/bin/agent",
		"--flag", "a b", NULL };
	struct sbx_request r;
	struct sbx_plan *p;
	size_t i;

	req_default(&r);
	p = plan_ok(&r);
	/* Only the fd and the command on the argv: no policy, no values. */
	for (i = 0; want[i] != NULL; i++) {
		ck_assert_ptr_nonnull(p->argv[i]);
		ck_assert_str_eq(p->argv[i], want[i]);
	}
	ck_assert_ptr_null(p->argv[i]);
	ck_assert_int_eq(p->argv[0][0], '/');
	ck_assert_str_eq(p->label, "bwrap");
	sbx_plan_free(p);
}
END_TEST

/* The whole option list, in bwrap's order (SANDBOX.md 5.a/5.b). */
START_TEST(test_bwrap_plan_options_exact)
{
	static const char *const want[] = {
		"--unshare-user", "--unshare-ipc", "--unshare-pid",
		"--unshare-net", "--unshare-uts", "--unshare-cgroup",
		"--disable-userns", "--assert-userns-disabled",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--hostname", "sbx", "--clearenv",
		"--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin",
		"--setenv", "HOME", "/home/sbx",
		"--setenv", "TMPDIR", "/tmp",
		"--setenv", "LANG", "C.UTF-8",
		"--setenv", "TERM", "xterm-256color",
		"--ro-bind", "/usr", "/usr",
		"--symlink", "usr/bin", "/bin",
		"--symlink", "usr/sbin", "/sbin",
		"--symlink", "usr/lib", "/lib",
		"--symlink", "usr/lib64", "/lib64",
		"--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache",
		"--ro-bind-try", "/etc/alternatives", "/etc/alternatives",
		"--perms", "0644", "--ro-bind-data", "4", "/etc/passwd",
		"--perms", "0644", "--ro-bind-data", "5", "/etc/group",
		"--perms", "0644", "--ro-bind-data", "6", "/etc/hosts",
		"--proc", "/proc", "--dev", "/dev",
		"--perms", "1777", "--size", "67108864", "--tmpfs", "/tmp",
		"--perms", "0700", "--size", "67108864", "--tmpfs", "/home/sbx",
		"--bind", WS, "/work",
		"--ro-bind", INIT, "/run/corral/init",
		"--chdir", "/work",
		"--remount-ro", "/",
		"--seccomp", "7",
		NULL };
	struct sbx_request r;
	struct sbx_plan *p;
	struct optv o;
	int i;

	req_default(&r);
	p = plan_ok(&r);
	optv_from_plan(p, &o);
	for (i = 0; want[i] != NULL; i++) {
		ck_assert_msg(i < o.n, "options end early at %d", i);
		ck_assert_str_eq(o.v[i], want[i]);
	}
	ck_assert_int_eq(o.n, i);
	free(o.v);
	sbx_plan_free(p);
}
END_TEST

/* Properties that must hold whatever else changes in the list. */
START_TEST(test_bwrap_plan_options_invariants)
{
	static const struct sbx_mount extra[] = {
		{ "/opt/toolchains", "/opt/toolchains" },
		{ "/srv/agent/bin/agent", "/opt/agent/bin/agent" },
	};
	struct sbx_request r;
	struct sbx_plan *p;
	struct optv o;
	int i, k, last_mount = -1, rro, clear, tmp, home;

	req_default(&r);
	r.ro_binds = extra;
	r.nro_binds = 2;
	r.tmp_bytes = 1u << 20;
	r.home_bytes = 2u << 20;
	p = plan_ok(&r);
	optv_from_plan(p, &o);
	for (i = 0; i < o.n; i++) {
		const char *a = o.v[i];

		/* Nothing "try", nothing shared, no whole-host bind. */
		if (strncmp(a, "--unshare-", 10) == 0)
			ck_assert_msg(strstr(a, "-try") == NULL, "%s", a);
		ck_assert_str_ne(a, "--unshare-all");
		ck_assert_str_ne(a, "--share-net");
		ck_assert_str_ne(a, "--dev-bind");
		ck_assert_str_ne(a, "--cap-add");
		ck_assert_str_ne(a, "--as-pid-1");
		if ((strcmp(a, "--ro-bind") == 0 || strcmp(a, "--bind") == 0 ||
		    strcmp(a, "--ro-bind-try") == 0) && i + 2 < o.n) {
			ck_assert_str_ne(o.v[i + 1], "/");
			ck_assert_str_ne(o.v[i + 2], "/");
		}
		if (strcmp(a, "--bind") == 0 || strncmp(a, "--ro-bind", 9) ==
		    0 || strcmp(a, "--tmpfs") == 0 || strcmp(a, "--proc") ==
		    0 || strcmp(a, "--dev") == 0 || strcmp(a, "--symlink") == 0)
			last_mount = i;
	}
	/* Every namespace, each spelled out. */
	ck_assert_int_ge(optv_find(&o, 0, "--unshare-user", NULL, NULL), 0);
	ck_assert_int_ge(optv_find(&o, 0, "--unshare-ipc", NULL, NULL), 0);
	ck_assert_int_ge(optv_find(&o, 0, "--unshare-pid", NULL, NULL), 0);
	ck_assert_int_ge(optv_find(&o, 0, "--unshare-net", NULL, NULL), 0);
	ck_assert_int_ge(optv_find(&o, 0, "--unshare-uts", NULL, NULL), 0);
	ck_assert_int_ge(optv_find(&o, 0, "--unshare-cgroup", NULL, NULL), 0);
	ck_assert_int_ge(optv_find(&o, 0, "--new-session", NULL, NULL), 0);
	ck_assert_int_ge(optv_find(&o, 0, "--die-with-parent", NULL, NULL), 0);
	ck_assert_int_ge(optv_find(&o, 0, "--cap-drop", "ALL", NULL), 0);
	ck_assert_int_ge(optv_find(&o, 0, "--assert-userns-disabled", NULL,
	    NULL), 0);
	/* --perms then --size immediately before each --tmpfs. */
	tmp = optv_find(&o, 0, "--tmpfs", "/tmp", NULL);
	home = optv_find(&o, 0, "--tmpfs", "/home/sbx", NULL);
	ck_assert_int_ge(tmp, 4);
	ck_assert_int_ge(home, 4);
	ck_assert_str_eq(o.v[tmp - 4], "--perms");
	ck_assert_str_eq(o.v[tmp - 3], "1777");
	ck_assert_str_eq(o.v[tmp - 2], "--size");
	ck_assert_str_eq(o.v[tmp - 1], "1048576");
	ck_assert_str_eq(o.v[home - 4], "--perms");
	ck_assert_str_eq(o.v[home - 3], "0700");
	ck_assert_str_eq(o.v[home - 2], "--size");
	ck_assert_str_eq(o.v[home - 1], "2097152");
	/* The extra read-only binds are there, read-only. */
	ck_assert_int_ge(optv_find(&o, 0, "--ro-bind", "/opt/toolchains",
	    "/opt/toolchains"), 0);
	ck_assert_int_ge(optv_find(&o, 0, "--ro-bind", "/srv/agent/bin/agent",
	    "/opt/agent/bin/agent"), 0);
	/* The root goes read-only after the last mount. */
	rro = optv_find(&o, 0, "--remount-ro", "/", NULL);
	ck_assert_int_gt(rro, last_mount);
	/* --clearenv before any --setenv, and only the allowlist is set. */
	clear = optv_find(&o, 0, "--clearenv", NULL, NULL);
	ck_assert_int_ge(clear, 0);
	for (i = 0, k = 0; i < o.n; i++) {
		if (strcmp(o.v[i], "--setenv") != 0)
			continue;
		ck_assert_int_gt(i, clear);
		ck_assert_msg(strcmp(o.v[i + 1], "PATH") == 0 ||
		    strcmp(o.v[i + 1], "HOME") == 0 ||
		    strcmp(o.v[i + 1], "TMPDIR") == 0 ||
		    strcmp(o.v[i + 1], "LANG") == 0 ||
		    strcmp(o.v[i + 1], "TERM") == 0, "unexpected env %s",
		    o.v[i + 1]);
		k++;
	}
	ck_assert_int_eq(k, 5);
	free(o.v);
	sbx_plan_free(p);
}
END_TEST

START_TEST(test_bwrap_plan_recipe)
{
	struct sbx_request r;
	struct sbx_plan *p;
	bool core0 = false;

	req_default(&r);
	p = plan_ok(&r);
	ck_assert(p->drop_uid);
	ck_assert_uint_eq(p->uid, UID);
	ck_assert_uint_eq(p->gid, UID);
	ck_assert(p->no_new_privs);
	ck_assert(!p->inherit_env);
	/* bwrap itself runs with an empty environment. */
	ck_assert_ptr_nonnull(p->envp);
	ck_assert_ptr_null(p->envp[0]);
	ck_assert_ptr_nonnull(p->cwd);
	ck_assert_str_eq(p->cwd, "/");
	for (int i = 0; i < p->nrlimits; i++) {
		if (p->rlimits[i].resource == RLIMIT_CORE &&
		    p->rlimits[i].cur == 0 && p->rlimits[i].max == 0)
			core0 = true;
	}
	ck_assert(core0);
	/* Pure: no fd opened yet. */
	ck_assert_int_eq(p->nfds, 0);
	ck_assert_int_eq(p->ndata, 5);
	sbx_plan_free(p);
}
END_TEST

START_TEST(test_bwrap_plan_etc_data)
{
	struct sbx_request r;
	struct sbx_plan *p;
	const struct sbx_data *d;
	char want[128];

	req_default(&r);
	p = plan_ok(&r);
	d = sbx_plan_data_find(p, SBX_BWRAP_PASSWD_FD);
	ck_assert_ptr_nonnull(d);
	snprintf(want, sizeof want, "sbx:x:%u:%u:", UID, UID);
	ck_assert_int_eq(strncmp(d->bytes, want, strlen(want)), 0);
	ck_assert_ptr_nonnull(memmem(d->bytes, d->len, ":/home/sbx:", 11));
	d = sbx_plan_data_find(p, SBX_BWRAP_GROUP_FD);
	ck_assert_ptr_nonnull(d);
	snprintf(want, sizeof want, "sbx:x:%u:\n", UID);
	ck_assert_int_eq(strncmp(d->bytes, want, strlen(want)), 0);
	d = sbx_plan_data_find(p, SBX_BWRAP_HOSTS_FD);
	ck_assert_ptr_nonnull(d);
	ck_assert_ptr_nonnull(memmem(d->bytes, d->len, "localhost", 9));
	/* fd 7: the seccomp filter, the exact bytes of sbx_seccomp_build. */
	d = sbx_plan_data_find(p, SBX_BWRAP_SECCOMP_FD);
	ck_assert_ptr_nonnull(d);
	{
		unsigned char *bpf = NULL;
		size_t len = 0;

		ck_assert_int_eq(sbx_seccomp_build(&bpf, &len), 0);
		ck_assert_uint_eq(d->len, len);
		ck_assert_mem_eq(d->bytes, bpf, len);
		free(bpf);
	}
	ck_assert_ptr_null(sbx_plan_data_find(p, 8));
	sbx_plan_free(p);
}
END_TEST

START_TEST(test_bwrap_plan_refuses)
{
	static const struct sbx_mount rel[] = { { "opt/x", "/opt/x" } };
	static const struct sbx_mount dots[] = { { "/opt/../etc", "/x" } };
	static const struct sbx_mount root[] = { { "/", "/host" } };
	static char *empty[] = { NULL };
	struct sbx_request r;
	struct sbx_plan *p = NULL;

	req_default(&r);
	r.uid = 0;	/* never bwrap as root (SANDBOX.md 0.1) */
	ck_assert_int_eq(sbx_adapter_bwrap.plan(&r, &p), -EINVAL);
	req_default(&r);
	r.gid = 0;
	ck_assert_int_eq(sbx_adapter_bwrap.plan(&r, &p), -EINVAL);
	req_default(&r);
	r.workspace = "work";
	ck_assert_int_eq(sbx_adapter_bwrap.plan(&r, &p), -EINVAL);
	req_default(&r);
	r.workspace = NULL;
	ck_assert_int_eq(sbx_adapter_bwrap.plan(&r, &p), -EINVAL);
	req_default(&r);
	r.workspace = "/";
	ck_assert_int_eq(sbx_adapter_bwrap.plan(&r, &p), -EINVAL);
	req_default(&r);
	r.init_path = "corral-sbx-init";
	ck_assert_int_eq(sbx_adapter_bwrap.plan(&r, &p), -EINVAL);
	req_default(&r);
	r.cmd = empty;
	ck_assert_int_eq(sbx_adapter_bwrap.plan(&r, &p), -EINVAL);
	req_default(&r);
	r.ro_binds = rel;
	r.nro_binds = 1;
	ck_assert_int_eq(sbx_adapter_bwrap.plan(&r, &p), -EINVAL);
	r.ro_binds = dots;
	ck_assert_int_eq(sbx_adapter_bwrap.plan(&r, &p), -EINVAL);
	r.ro_binds = root;
	ck_assert_int_eq(sbx_adapter_bwrap.plan(&r, &p), -EINVAL);
	r.ro_binds = NULL;
	ck_assert_int_eq(sbx_adapter_bwrap.plan(&r, &p), -EINVAL);
	ck_assert_ptr_null(p);
}
END_TEST

START_TEST(test_bwrap_plan_open_data)
{
	struct sbx_request r;
	struct sbx_plan *p;
	int fds[SBX_PLAN_MAX_FDS], n;

	req_default(&r);
	p = plan_ok(&r);
	ck_assert_int_eq(sbx_plan_open_data(p), 0);
	ck_assert_int_eq(p->nfds, 5);
	/* Idempotent. */
	ck_assert_int_eq(sbx_plan_open_data(p), 0);
	ck_assert_int_eq(p->nfds, 5);
	for (int i = 0; i < p->nfds; i++) {
		const struct sbx_data *d = sbx_plan_data_find(p, p->fds[i].to);
		char *buf;

		ck_assert_ptr_nonnull(d);
		ck_assert_int_eq(d->fd, p->fds[i].from);
		/* Close-on-exec in the parent; proc.c dup2s it into place. */
		ck_assert_int_eq(fcntl(d->fd, F_GETFD) & FD_CLOEXEC,
		    FD_CLOEXEC);
		buf = malloc(d->len + 1);
		n = (int)read(d->fd, buf, d->len + 1);
		ck_assert_int_eq(n, (int)d->len);
		ck_assert_mem_eq(buf, d->bytes, d->len);
		ck_assert_int_eq(lseek(d->fd, 0, SEEK_SET), 0);
		/* Sealed: the zone's data cannot change under it. */
		ck_assert_int_eq(write(d->fd, "x", 1), -1);
		ck_assert_int_eq(errno, EPERM);
		free(buf);
		fds[i] = d->fd;
	}
	n = p->nfds;
	/* A data fd may not shadow a mapped one. */
	ck_assert_int_eq(sbx_plan_data(p, SBX_BWRAP_ARGS_FD, "x", 1),
	    -EINVAL);
	ck_assert_int_eq(sbx_plan_data(p, 2, "x", 1), -EINVAL);
	sbx_plan_free(p);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(fcntl(fds[i], F_GETFD), -1);
}
END_TEST

START_TEST(test_bwrap_plan_table)
{
	ck_assert_str_eq(sbx_adapter_bwrap.name, "bwrap");
	ck_assert_str_eq(sbx_adapter_bwrap.isolation, "bwrap");
	ck_assert(sbx_adapter_bwrap.probe != NULL);
	ck_assert(sbx_adapter_bwrap.plan != NULL);
	ck_assert_ptr_eq(sbx_adapters_find("trusted_local"),
	    &sbx_adapter_local);
}
END_TEST

/* bwrap 0.8 is a dependency (SPEC 1): its absence fails, never skips. */
START_TEST(test_bwrap_plan_probe_host)
{
	char why[256] = "unset";

	ck_assert_msg(sbx_adapter_bwrap.probe(why, sizeof why) == 0,
	    "probe: %s", why);
	ck_assert_str_eq(why, "");
}
END_TEST

START_TEST(test_bwrap_plan_uid_slots)
{
	char *dir = cu_tmpdir("uids");
	char *sub, path[4200], owner[64], held[32];
	unsigned a, b, c, x, y, lo, hi;
	uid_t uid;
	gid_t gid;

	ck_assert_int_gt(asprintf(&sub, "%s/uids", dir), 0);
	ck_assert_int_eq(sbx_uid_of_slot(0, &uid, &gid), 0);
	ck_assert_uint_eq(uid, SBX_UID_BASE);
	ck_assert_uint_eq(gid, SBX_UID_BASE);
	ck_assert_int_eq(sbx_uid_of_slot(SBX_UID_SLOTS - 1, &uid, &gid), 0);
	ck_assert_uint_eq(uid, SBX_UID_BASE + SBX_UID_SLOTS - 1);
	ck_assert_int_eq(sbx_uid_of_slot(SBX_UID_SLOTS, &uid, &gid), -EINVAL);
	/*
	 * Two uids that nothing runs under and no lease takes meanwhile,
	 * claimed in the machine-wide pool the product uses: any slot may
	 * serve another corral's agents (a demo left running). Every other
	 * slot below the higher one is held in the test's own pool, so the
	 * lowest free slot there is known.
	 */
	snprintf(owner, sizeof owner, "sbxtest-%d", (int)getpid());
	st_sweep(SBX_UID_DIR);
	ck_assert_int_eq(sbx_uid_claim(SBX_UID_DIR, cu_scope(), owner, &x), 0);
	ck_assert_int_eq(sbx_uid_claim(SBX_UID_DIR, cu_scope(), owner, &y), 0);
	ck_assert_uint_ne(x, y);
	lo = x < y ? x : y;
	hi = x < y ? y : x;
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	for (unsigned n = 0; n < hi; n++) {
		if (n == lo)
			continue;
		snprintf(path, sizeof path, "%s/slot-%u", sub, n);
		ck_assert_int_eq(mkdir(path, 0700), 0);
		snprintf(path, sizeof path, "%s/slot-%u/owner", sub, n);
		snprintf(held, sizeof held, "held-%u", n);
		ck_assert_int_eq(cu_write_file(path, held, strlen(held)), 0);
	}
	/* Lowest free slot, never shared by two live leases. */
	ck_assert_int_eq(sbx_uid_claim(sub, cu_scope(), "lease-a", &a), 0);
	ck_assert_int_eq(sbx_uid_claim(sub, cu_scope(), "lease-b", &b), 0);
	ck_assert_uint_eq(a, lo);
	ck_assert_uint_eq(b, hi);
	/* Release by exact ID only. */
	ck_assert_int_eq(sbx_uid_release(sub, a, cu_scope(), "lease-b"), -EPERM);
	ck_assert_int_eq(sbx_uid_release(sub, a, cu_scope(), "lease-a"), 0);
	ck_assert_int_eq(sbx_uid_release(sub, a, cu_scope(), "lease-a"), -ENOENT);
	ck_assert_int_eq(sbx_uid_claim(sub, cu_scope(), "lease-c", &c), 0);
	ck_assert_uint_eq(c, lo);
	ck_assert_int_eq(sbx_uid_claim(sub, cu_scope(), "../x", &c), -EINVAL);
	ck_assert_int_eq(sbx_uid_release(sub, b, cu_scope(), "lease-b"), 0);
	ck_assert_int_eq(sbx_uid_release(sub, lo, cu_scope(), "lease-c"), 0);
	ck_assert_int_eq(sbx_uid_release(SBX_UID_DIR, x, cu_scope(), owner), 0);
	ck_assert_int_eq(sbx_uid_release(SBX_UID_DIR, y, cu_scope(), owner), 0);
	free(sub);
	cu_rmrf(dir);
	free(dir);
}
END_TEST

Suite *
bwrap_plan_suite(void)
{
	Suite *s = suite_create("bwrap_plan");
	TCase *tc = tcase_create("Core");

	tcase_add_test(tc, test_bwrap_plan_argv_exact);
	tcase_add_test(tc, test_bwrap_plan_options_exact);
	tcase_add_test(tc, test_bwrap_plan_options_invariants);
	tcase_add_test(tc, test_bwrap_plan_recipe);
	tcase_add_test(tc, test_bwrap_plan_etc_data);
	tcase_add_test(tc, test_bwrap_plan_refuses);
	tcase_add_test(tc, test_bwrap_plan_open_data);
	tcase_add_test(tc, test_bwrap_plan_table);
	tcase_add_test(tc, test_bwrap_plan_probe_host);
	tcase_add_test(tc, test_bwrap_plan_uid_slots);
	suite_add_tcase(s, tc);
	return s;
}
