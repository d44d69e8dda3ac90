/*
 * test_policy.c: the sandbox policy (SPEC 8.6, 9.4): the shipped defaults,
 * every value syntax, errors naming the file and line, and the narrowing
 * rule key by key (each key narrower, equal and wider), the canonical form
 * and its hash, and the environment allowlist.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"
#include "sandbox-adapters/sbx_int.h"
#include "support/check_util.h"

Suite *policy_suite(void);

static struct sbx_policy *
load_ok(const char *text)
{
	struct sbx_policy_error err;
	struct sbx_policy *p = NULL;
	int rc = sbx_policy_load(text, "op.ini", NULL, &p, &err);

	ck_assert_msg(rc == 0, "%s:%d: %s", err.file, err.line, err.msg);
	ck_assert_ptr_nonnull(p);
	return p;
}

/* Load must fail at line with msg containing want. */
static void
load_bad(const char *text, int line, const char *want)
{
	struct sbx_policy_error err;
	struct sbx_policy *p = NULL;

	ck_assert_int_eq(sbx_policy_load(text, "bad.ini", NULL, &p, &err),
	    SBX_EPOLICY);
	ck_assert_ptr_null(p);
	ck_assert_str_eq(err.file, "bad.ini");
	ck_assert_msg(err.line == line, "line %d, want %d (%s) for: %s",
	    err.line, line, err.msg, text);
	ck_assert_msg(strstr(err.msg, want) != NULL, "'%s' lacks '%s'",
	    err.msg, want);
}

START_TEST(test_policy_defaults)
{
	struct sbx_policy *d = sbx_policy_new_default(), *f;
	char *path = cu_src_path("policies/default.ini");
	char *text = cu_read_file(path, NULL), *c1, *c2;
	char h1[SBX_SHA256_HEX], h2[SBX_SHA256_HEX];

	ck_assert_ptr_nonnull(d);
	ck_assert_ptr_nonnull(text);
	/* The compiled-in defaults are exactly the shipped file. */
	f = load_ok(text);
	c1 = sbx_policy_canonical(d);
	c2 = sbx_policy_canonical(f);
	ck_assert_str_eq(c1, c2);
	ck_assert_int_eq(sbx_policy_hash(d, h1), 0);
	ck_assert_int_eq(sbx_policy_hash(f, h2), 0);
	ck_assert_str_eq(h1, h2);
	/* Fail closed by default: no network, no extra mounts, no env. */
	ck_assert_uint_eq(d->nnet_allow, 0);
	ck_assert_uint_eq(d->nmounts_ro, 0);
	ck_assert_uint_eq(d->nenv_allow, 0);
	ck_assert_int_eq(d->on_egress, SBX_EGRESS_FAIL);
	ck_assert_uint_eq(d->loopback_port, 0);
	ck_assert(!d->allow_binary);
	ck_assert(!d->allow_symlinks);
	/* Every limit is set. */
	ck_assert_uint_eq(d->limits.memory, 4ull << 30);
	ck_assert_uint_eq(d->limits.swap, 0);
	ck_assert_uint_eq(d->limits.wall_time, 8 * 3600);
	ck_assert_uint_eq(d->limits.cpu_milli, 2000);
	ck_assert_uint_gt(d->limits.pids, 0);
	ck_assert_uint_gt(d->limits.disk, 0);
	ck_assert_uint_gt(d->limits.inodes, 0);
	ck_assert_uint_gt(d->limits.output, 0);
	ck_assert_uint_gt(d->limits.file_size, 0);
	ck_assert_uint_gt(d->limits.nofile, 0);
	ck_assert_uint_gt(d->limits.cpu_time, 0);
	ck_assert_uint_gt(d->max_files, 0);
	free(c1);
	free(c2);
	free(text);
	free(path);
	sbx_policy_free(d);
	sbx_policy_free(f);
	sbx_policy_free(NULL);
}
END_TEST

START_TEST(test_policy_values)
{
	struct sbx_policy *p = load_ok(
	    "; a comment\n# another\n"
	    "[limits]\n"
	    "memory = 512M\nswap = 1GiB\ndisk = 3G\noutput = 1024\n"
	    "file_size = 2KB\ntmp = 1T\nhome = 64k\n"
	    "wall_time = 90m\ncpu_time = 2h\ncpu = 1.5\npids = 64\n"
	    "inodes = 1000\nnofile = 256\n"
	    "[result]\nallow_binary = yes\nallow_symlinks = off\n"
	    "max_files = 10\nmax_file_bytes = 1M\nmax_total_bytes = 5M\n"
	    "[network]\nallow = API.Example.com.:443, b.example:8080\n"
	    "allow = c.example:443\non_egress_violation = record\n"
	    "loopback_port = 11434\n"
	    "[mounts]\nro = /opt//tools/, /srv/data\n"
	    "[checks]\ntest = make test\nlint = ./lint && echo ok\n");

	ck_assert_uint_eq(p->limits.memory, 512ull << 20);
	ck_assert_uint_eq(p->limits.swap, 1ull << 30);
	ck_assert_uint_eq(p->limits.disk, 3ull << 30);
	ck_assert_uint_eq(p->limits.output, 1024);
	ck_assert_uint_eq(p->limits.file_size, 2048);
	ck_assert_uint_eq(p->limits.tmp, 1ull << 40);
	ck_assert_uint_eq(p->limits.home, 64 << 10);
	ck_assert_uint_eq(p->limits.wall_time, 5400);
	ck_assert_uint_eq(p->limits.cpu_time, 7200);
	ck_assert_uint_eq(p->limits.cpu_milli, 1500);
	ck_assert_uint_eq(p->limits.pids, 64);
	ck_assert_uint_eq(p->limits.inodes, 1000);
	ck_assert_uint_eq(p->limits.nofile, 256);
	ck_assert(p->allow_binary);
	ck_assert(!p->allow_symlinks);
	ck_assert_uint_eq(p->max_files, 10);
	ck_assert_uint_eq(p->max_file_bytes, 1 << 20);
	ck_assert_uint_eq(p->max_total_bytes, 5 << 20);
	/* Lists: lower case, no trailing dot, sorted; a repeat appends. */
	ck_assert_uint_eq(p->nnet_allow, 3);
	ck_assert_str_eq(p->net_allow[0], "api.example.com:443");
	ck_assert_str_eq(p->net_allow[1], "b.example:8080");
	ck_assert_str_eq(p->net_allow[2], "c.example:443");
	ck_assert_int_eq(p->on_egress, SBX_EGRESS_RECORD);
	ck_assert_uint_eq(p->loopback_port, 11434);
	ck_assert_uint_eq(p->nmounts_ro, 2);
	ck_assert_str_eq(p->mounts_ro[0], "/opt/tools");
	ck_assert_str_eq(p->mounts_ro[1], "/srv/data");
	/* Checks sorted by name. */
	ck_assert_uint_eq(p->nchecks, 2);
	ck_assert_str_eq(p->checks[0].name, "lint");
	ck_assert_str_eq(p->checks[0].cmd, "./lint && echo ok");
	ck_assert_str_eq(p->checks[1].name, "test");
	ck_assert_str_eq(p->checks[1].cmd, "make test");
	/* Keys not set keep the defaults. */
	ck_assert_uint_eq(p->nenv_allow, 0);
	sbx_policy_free(p);

	/* cpu decimals. */
	p = load_ok("[limits]\ncpu = 0.25\n");
	ck_assert_uint_eq(p->limits.cpu_milli, 250);
	sbx_policy_free(p);
	p = load_ok("[limits]\ncpu = 3.125\n");
	ck_assert_uint_eq(p->limits.cpu_milli, 3125);
	sbx_policy_free(p);
	/* An empty file is the base. */
	p = load_ok("");
	ck_assert_uint_eq(p->limits.memory, 4ull << 30);
	sbx_policy_free(p);
}
END_TEST

/*
 * The host's system paths, their parents and (but for /tmp) what is below
 * them are never mounted: with /proc an agent reads every host process's
 * command line (SPEC 8.3). Refused where the file and line are known.
 */
START_TEST(test_policy_mount_host_system)
{
	static const char *const bad[] = { "/proc", "/sys", "/dev", "/tmp",
		"/run/corral", "/sys/fs/cgroup", "/run", "/sys/fs", "/proc/1",
		"/proc//self/environ", "/dev/shm", "/run/corral/checks",
		"/sys/fs/cgroup/corral", "/tmp/" };
	struct sbx_policy *p;
	char text[256];

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(text, sizeof text, "[mounts]\nro = /opt/ok, %s\n",
		    bad[i]);
		load_bad(text, 2, "a host system path");
	}
	p = load_ok("[mounts]\nro = /tmp/tools, /opt, /run/other, /srv\n");
	ck_assert_uint_eq(p->nmounts_ro, 4);
	sbx_policy_free(p);
}
END_TEST

/* SPEC 9.4: a named error with the file and the line. */
START_TEST(test_policy_errors)
{
	load_bad("[limits]\nmemory = 4G\n\nbogus = 1\n", 4,
	    "unknown key 'bogus' in [limits]");
	/* the header's line, not its first key's (issue 21) */
	load_bad("# c\n[limts]\nmemory = 1G\n", 2, "unknown section [limts]");
	load_bad("[mounts]\nro = /ok, relative/path\n", 2,
	    "relative mount path");
	load_bad("[mounts]\nro = /opt/../etc\n", 2, ". or ..");
	load_bad("[mounts]\nro = /\n", 2, "host's /");
	load_bad("[mounts]\nro = //\n", 2, "host's /");
	load_bad("[limits]\nmemory = 4X\n", 2, "bad value '4X'");
	/* the form it should have, too (issue 21) */
	load_bad("[limits]\nwall_time = lots\n", 2, "bad value 'lots' "
	    "(seconds, or a number with s, m, h or d: 3600, 90m, 1h)");
	load_bad("[limits]\nmemory = 4X\n", 2, "(bytes, or a number with "
	    "K, M, G or T: 512M)");
	load_bad("[limits]\nmemory = -1\n", 2, "bad value");
	load_bad("[limits]\nmemory = 99999999999999999999\n", 2, "bad value");
	load_bad("[limits]\nmemory = 17179869184T\n", 2, "bad value");
	load_bad("[limits]\nmemory = 0\n", 2, "greater than 0");
	load_bad("[limits]\npids = 0\n", 2, "greater than 0");
	load_bad("[limits]\nwall_time = 5w\n", 2, "bad value");
	load_bad("[limits]\ncpu = 1.2345\n", 2, "bad value");
	load_bad("[limits]\ncpu = 2000\n", 2, "bad value");
	load_bad("[limits]\ncpu = .5\n", 2, "bad value");
	load_bad("[limits]\nmemory = 1G\nmemory = 2G\n", 3, "set twice");
	load_bad("[result]\nallow_binary = maybe\n", 2, "not true or false");
	load_bad("[network]\non_egress_violation = ignore\n", 2,
	    "not fail or record");
	load_bad("[network]\nloopback_port = 70000\n", 2, "bad port");
	load_bad("[network]\nallow = example.com\n", 2, "host:port");
	load_bad("[network]\nallow = example.com:0\n", 2, "bad port");
	load_bad("[network]\nallow = example.com:https\n", 2, "bad port");
	load_bad("[network]\nallow = example.com:*\n", 2, "bad port");
	load_bad("[network]\nallow = 10.0.0.1:443\n", 2, "IP literal");
	load_bad("[network]\nallow = [::1]:443\n", 2, "IP literal");
	load_bad("[network]\nallow = ex_ample.com:443\n", 2, "bad host");
	load_bad("[network]\nallow = -a.com:443\n", 2, "bad host");
	load_bad("[network]\nallow = *.example.com:443\n", 2, "bad host");
	load_bad("[env]\nallow = OK, 1BAD\n", 2, "not a variable name");
	load_bad("[checks]\nbad name! = x\n", 2, "not a check name");
	load_bad("[checks]\nt = make ; rm -rf /\n", 2, "starts a comment");
	load_bad("[checks]\nt = a\nt = b\n", 3, "set twice");
	/* inih's own syntax error. */
	load_bad("[limits]\nmemory 4G\n", 2, "syntax error");
	load_bad("[limits\n", 1, "syntax error");
	/* The first error wins. */
	load_bad("[x]\na = 1\n[limits]\nmemory = 1Q\n", 1, "unknown section");
}
END_TEST

/*
 * A disk too small for its inode count cannot make the workspace's
 * filesystem: refused at parse time naming both keys (the default
 * 262144 inodes need 256M; 64M gave an I/O error at `corral new`).
 */
START_TEST(test_policy_disk_inodes)
{
	struct sbx_policy *p;

	load_bad("[limits]\ndisk = 64M\n", 2, "disk = 65536K cannot hold "
	    "inodes = 262144");
	load_bad("[limits]\ndisk = 64M\n", 2, "raise disk to 256M or lower "
	    "inodes to 65536");
	load_bad("[limits]\ndisk = 8M\n\ninodes = 65536\n", 4,
	    "disk = 8192K cannot hold inodes = 65536");
	p = load_ok("[limits]\ndisk = 64M\ninodes = 65536\n");
	sbx_policy_free(p);
	p = load_ok("[limits]\ndisk = 2M\ninodes = 16\n");
	sbx_policy_free(p);
}
END_TEST

START_TEST(test_policy_long_line)
{
	char text[600];
	int n;

	n = snprintf(text, sizeof text, "[network]\nallow = ");
	while (n < 400)
		n += snprintf(text + n, sizeof text - (size_t)n,
		    "host%d.example:443,", n);
	snprintf(text + n, sizeof text - (size_t)n, "\n");
	/* Never a silently cut list: the line is refused. */
	load_bad(text, 2, "longer than");
}
END_TEST

START_TEST(test_policy_env_credentials)
{
	static const char *const shaped[] = { "GITHUB_TOKEN", "NPM_TOKEN",
		"HF_TOKEN", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "MY_KEY",
		"DB_PASSWORD", "client_secret", "AWS_ACCESS_KEY_ID",
		"AWS_PROFILE", "SSH_AUTH_SOCK", "GPG_AGENT_INFO",
		"DOCKER_HOST", "DBUS_SESSION_BUS_ADDRESS", "KUBECONFIG",
		"GOOGLE_APPLICATION_CREDENTIALS", "SECRET", "X_PASSWD",
		"STRIPEAPIKEY", "GH_PAT", "" };
	static const char *const plain[] = { "LANG", "EDITOR", "GOPATH",
		"CARGO_HOME", "TZ", "GIT_AUTHOR_NAME", "KEYBOARD", "MONKEYS",
		"TOKENIZERS_PARALLELISM" };
	struct sbx_policy *p;
	char *environ_[] = { "EDITOR=vi", "GITHUB_TOKEN=ghp_canary",
		"CARGO_HOME=/c", "EDITORX=no", "SSH_AUTH_SOCK=/tmp/agent",
		NULL };
	char **env = NULL;

	for (size_t i = 0; i < sizeof shaped / sizeof shaped[0]; i++)
		ck_assert_msg(sbx_policy_env_credential_shaped(shaped[i]), "%s",
		    shaped[i]);
	for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
		ck_assert_msg(!sbx_policy_env_credential_shaped(plain[i]), "%s",
		    plain[i]);
	/* Listed, yet never passed. */
	p = load_ok("[env]\nallow = EDITOR GITHUB_TOKEN, SSH_AUTH_SOCK\n"
	    "allow = CARGO_HOME, AWS_SECRET_ACCESS_KEY, ABSENT\n");
	ck_assert_uint_eq(p->nenv_allow, 3);
	ck_assert_str_eq(p->env_allow[0], "ABSENT");
	ck_assert_str_eq(p->env_allow[1], "CARGO_HOME");
	ck_assert_str_eq(p->env_allow[2], "EDITOR");
	ck_assert_uint_eq(p->env_dropped, 3);
	ck_assert_int_eq(sbx_policy_env(p, environ_, &env), 0);
	ck_assert_ptr_nonnull(env);
	ck_assert_str_eq(env[0], "CARGO_HOME=/c");
	ck_assert_str_eq(env[1], "EDITOR=vi");
	ck_assert_ptr_null(env[2]);
	sbx_strv_free(env);
	/* Even a hand-made policy cannot pass one. */
	free(p->env_allow[0]);
	p->env_allow[0] = strdup("GITHUB_TOKEN");
	ck_assert_int_eq(sbx_policy_env(p, environ_, &env), 0);
	for (size_t i = 0; env[i] != NULL; i++)
		ck_assert_ptr_null(strstr(env[i], "canary"));
	sbx_strv_free(env);
	sbx_policy_free(p);
}
END_TEST

/* [result] output_dir: one relative directory; narrower only if the same. */
START_TEST(test_policy_output_dir)
{
	struct sbx_policy_error err;
	struct sbx_policy *p = load_ok("[result]\noutput_dir = build/out//\n"),
	    *q = NULL;
	char *text;

	ck_assert_str_eq(p->output_dir, "build/out");
	text = sbx_policy_canonical(p);
	ck_assert_ptr_nonnull(strstr(text, "output_dir = build/out\n"));
	free(text);
	/* a repository's policy may repeat it or drop it, not move it */
	ck_assert_int_eq(sbx_policy_narrow(p, "[result]\noutput_dir = "
	    "build/out\n", "r", &q, &err), 0);
	ck_assert_str_eq(q->output_dir, "build/out");
	sbx_policy_free(q);
	ck_assert_int_eq(sbx_policy_narrow(p, "[result]\noutput_dir =\n",
	    "r", &q, &err), 0);
	ck_assert_str_eq(q->output_dir, "");
	sbx_policy_free(q);
	ck_assert_int_eq(sbx_policy_narrow(p, "[result]\noutput_dir = src\n",
	    "r", &q, &err), SBX_EWIDER);
	ck_assert_ptr_nonnull(strstr(err.msg, "output_dir"));
	sbx_policy_free(p);
	p = load_ok("[limits]\nmemory = 1G\n");
	ck_assert_str_eq(p->output_dir, "");
	text = sbx_policy_canonical(p);
	ck_assert_ptr_null(strstr(text, "output_dir"));
	free(text);
	sbx_policy_free(p);
	load_bad("[result]\noutput_dir = /abs\n", 2, "not a relative");
	load_bad("[result]\noutput_dir = a/../b\n", 2, "not a relative");
	load_bad("[result]\noutput_dir = ./out\n", 2, "not a relative");
	load_bad("[result]\noutput_dir = out/.GIT\n", 2, "not a relative");
	load_bad("[result]\noutput_dir = -out\n", 2, "not a relative");
	load_bad("[result]\noutput_dir = a b\n", 2, "not a relative");
	load_bad("[result]\noutput_dir = a//b\n", 2, "not a relative");
}
END_TEST

/* The operator's policy for the narrowing tests. */
static const char op_text[] =
    "[network]\nallow = a.example:443, b.example:443\n"
    "on_egress_violation = record\nloopback_port = 11434\n"
    "[limits]\nwall_time = 2h\ncpu_time = 2h\ncpu = 2\nmemory = 2G\n"
    "swap = 512M\npids = 256\ndisk = 2G\ninodes = 10000\noutput = 8M\n"
    "file_size = 512M\nnofile = 1024\ntmp = 256M\nhome = 128M\n"
    "[env]\nallow = EDITOR, LANGUAGE\n"
    "[mounts]\nro = /opt/a, /opt/b\n"
    "[checks]\ntest = make test\n"
    "[result]\nmax_files = 100\nmax_file_bytes = 1M\n"
    "max_total_bytes = 8M\nallow_binary = true\nallow_symlinks = true\n";

static int
narrow(const char *repo, struct sbx_policy **out,
    struct sbx_policy_error *err)
{
	struct sbx_policy *op = load_ok(op_text);
	int rc;

	*out = NULL;
	rc = sbx_policy_narrow(op, repo, "repo:.corral/policy.ini", out,
	    err);
	sbx_policy_free(op);
	return rc;
}

static void
narrow_ok(const char *repo)
{
	struct sbx_policy_error err;
	struct sbx_policy *p;
	int rc = narrow(repo, &p, &err);

	ck_assert_msg(rc == 0, "%s -> %s:%d: %s", repo, err.file, err.line,
	    err.msg);
	ck_assert_ptr_nonnull(p);
	sbx_policy_free(p);
}

static void
narrow_wider(const char *repo, int line, const char *want)
{
	struct sbx_policy_error err;
	struct sbx_policy *p;

	ck_assert_msg(narrow(repo, &p, &err) == SBX_EWIDER,
	    "not refused: %s", repo);
	ck_assert_ptr_null(p);
	ck_assert_str_eq(err.file, "repo:.corral/policy.ini");
	ck_assert_msg(err.line == line, "line %d, want %d (%s): %s",
	    err.line, line, err.msg, repo);
	ck_assert_msg(strstr(err.msg, want) != NULL, "'%s' lacks '%s'",
	    err.msg, want);
}

/* Each limit, key by key: lower and equal narrow, higher widens. */
START_TEST(test_policy_narrow_limits)
{
	static const struct {
		const char *key, *lower, *equal, *higher;
	} lim[] = {
		{ "wall_time", "1h", "7200", "121m" },
		{ "cpu_time", "30m", "2h", "3h" },
		{ "cpu", "1.5", "2", "2.001" },
		{ "memory", "1G", "2048M", "2049M" },
		{ "swap", "0", "512M", "513M" },
		{ "pids", "1", "256", "257" },
		{ "disk", "1G", "2G", "3G" },
		{ "inodes", "5000", "10000", "10001" },
		{ "output", "1M", "8M", "9M" },
		{ "file_size", "1M", "512M", "1G" },
		{ "nofile", "64", "1024", "1025" },
		{ "tmp", "1M", "256M", "257M" },
		{ "home", "1M", "128M", "129M" },
	};
	char text[256];

	for (size_t i = 0; i < sizeof lim / sizeof lim[0]; i++) {
		snprintf(text, sizeof text, "[limits]\n%s = %s\n", lim[i].key,
		    lim[i].lower);
		narrow_ok(text);
		snprintf(text, sizeof text, "[limits]\n%s = %s\n", lim[i].key,
		    lim[i].equal);
		narrow_ok(text);
		/* The line of the wider key, with others before it. */
		snprintf(text, sizeof text, "# repo\n[result]\nmax_files = 2\n"
		    "[limits]\n%s = %s\n", lim[i].key, lim[i].higher);
		narrow_wider(text, 5, lim[i].key);
	}
}
END_TEST

START_TEST(test_policy_narrow_lists)
{
	struct sbx_policy_error err;
	struct sbx_policy *p;

	/* network: a subset, the empty set, exact strings after folding. */
	narrow_ok("[network]\nallow = a.example:443\n");
	narrow_ok("[network]\nallow = A.EXAMPLE.:443, b.example:443\n");
	narrow_ok("[network]\nallow =\n");
	narrow_wider("[network]\nallow = a.example:443, c.example:443\n", 2,
	    "c.example:443");
	narrow_wider("[network]\nallow = a.example:8443\n", 2, "a.example");
	narrow_wider("[network]\nallow = *\n", 2, "*:*");
	narrow_wider("[env]\nallow = EDITOR\n[network]\n\nallow = x.y:1\n",
	    5, "x.y:1");
	/* env: a subset; a credential name is dropped, not widening. */
	narrow_ok("[env]\nallow = EDITOR\n");
	narrow_ok("[env]\nallow = EDITOR, GITHUB_TOKEN\n");
	narrow_wider("[env]\nallow = EDITOR, HOME_DIR\n", 2, "HOME_DIR");
	/* mounts: fewer; normalised before comparing. */
	narrow_ok("[mounts]\nro = /opt/a\n");
	narrow_ok("[mounts]\nro = /opt//b/\n");
	narrow_ok("[mounts]\nro =\n");
	narrow_wider("[mounts]\nro = /opt/a, /home\n", 2, "/home");
	narrow_wider("[mounts]\nro = /opt\n", 2, "/opt");
	/* checks: more is narrower; the operator's stay as they are. */
	ck_assert_int_eq(narrow("[checks]\nlint = make lint\n", &p, &err), 0);
	ck_assert_uint_eq(p->nchecks, 2);
	ck_assert_str_eq(p->checks[0].name, "lint");
	ck_assert_str_eq(p->checks[1].name, "test");
	ck_assert_str_eq(p->checks[1].cmd, "make test");
	sbx_policy_free(p);
	narrow_ok("[checks]\ntest = make test\n");
	narrow_wider("[checks]\nlint = x\ntest = true\n", 3, "test");
}
END_TEST

START_TEST(test_policy_narrow_scalars)
{
	struct sbx_policy_error err;
	struct sbx_policy *p, *op2;

	narrow_ok("[network]\non_egress_violation = fail\n");
	narrow_ok("[network]\non_egress_violation = record\n");
	narrow_ok("[network]\nloopback_port = 0\n");
	narrow_ok("[network]\nloopback_port = 11434\n");
	narrow_wider("[network]\nloopback_port = 8080\n", 2, "loopback_port");
	narrow_ok("[result]\nallow_binary = false\nallow_symlinks = no\n");
	narrow_ok("[result]\nmax_files = 1\nmax_file_bytes = 1K\n"
	    "max_total_bytes = 8M\n");
	narrow_wider("[result]\nmax_files = 101\n", 2, "max_files");
	narrow_wider("[result]\nmax_total_bytes = 9M\n", 2,
	    "max_total_bytes");
	/* fail over record is narrower; record over fail is wider. */
	op2 = load_ok("[network]\non_egress_violation = fail\n"
	    "[result]\nallow_binary = false\n");
	ck_assert_int_eq(sbx_policy_narrow(op2,
	    "[network]\non_egress_violation = record\n", "r.ini", &p, &err),
	    SBX_EWIDER);
	ck_assert_int_eq(err.line, 2);
	ck_assert_ptr_nonnull(strstr(err.msg, "on_egress_violation"));
	ck_assert_int_eq(sbx_policy_narrow(op2,
	    "[result]\n\nallow_binary = true\n", "r.ini", &p, &err),
	    SBX_EWIDER);
	ck_assert_int_eq(err.line, 3);
	ck_assert_ptr_nonnull(strstr(err.msg, "allow_binary"));
	/* A malformed repository policy is a policy error, not a widening. */
	ck_assert_int_eq(sbx_policy_narrow(op2, "[limits]\nbogus = 1\n",
	    "r.ini", &p, &err), SBX_EPOLICY);
	ck_assert_int_eq(err.line, 2);
	ck_assert_ptr_null(p);
	sbx_policy_free(op2);
}
END_TEST

/* The effective policy: the operator's, with the repository's narrowing. */
START_TEST(test_policy_narrow_result)
{
	struct sbx_policy_error err;
	struct sbx_policy *p, *op = load_ok(op_text);

	ck_assert_int_eq(sbx_policy_narrow(op, "[limits]\nmemory = 1G\n"
	    "[network]\nallow = b.example:443\non_egress_violation = fail\n",
	    "r", &p, &err), 0);
	ck_assert_uint_eq(p->limits.memory, 1ull << 30);
	ck_assert_uint_eq(p->limits.pids, 256);
	ck_assert_uint_eq(p->nnet_allow, 1);
	ck_assert_str_eq(p->net_allow[0], "b.example:443");
	ck_assert_int_eq(p->on_egress, SBX_EGRESS_FAIL);
	ck_assert_uint_eq(p->nmounts_ro, 2);
	ck_assert_int_eq(sbx_policy_within(op, p, &err), 0);
	/* ...and the operator's own policy is not within the narrowed one. */
	ck_assert_int_eq(sbx_policy_within(p, op, &err), SBX_EWIDER);
	ck_assert_int_eq(err.line, 0);
	ck_assert_int_eq(sbx_policy_within(op, op, &err), 0);
	sbx_policy_free(p);
	sbx_policy_free(op);
}
END_TEST

START_TEST(test_policy_git_history)
{
	struct sbx_policy_error err;
	struct sbx_policy *d = sbx_policy_new_default(), *p, *q = NULL;
	struct sbx_policy *w = NULL;
	char *text;

	/* the base commit alone unless asked */
	ck_assert_uint_eq(d->git_history, 0);
	text = sbx_policy_canonical(d);
	ck_assert_ptr_nonnull(strstr(text, "[git]\nhistory = 0\n"));
	free(text);
	p = load_ok("[git]\nhistory = 25\n");
	ck_assert_uint_eq(p->git_history, 25);
	sbx_policy_free(p);
	p = load_ok("[git]\nhistory = all\n");
	ck_assert(p->git_history == SBX_HISTORY_ALL);
	text = sbx_policy_canonical(p);
	ck_assert_ptr_nonnull(strstr(text, "[git]\nhistory = all\n"));
	free(text);
	/* a repository's policy may ask for less, never more */
	ck_assert_int_eq(sbx_policy_narrow(p, "[git]\nhistory = 3\n", "r", &q,
	    &err), 0);
	ck_assert_uint_eq(q->git_history, 3);
	ck_assert_int_eq(sbx_policy_narrow(q, "[git]\nhistory = all\n", "r",
	    &w, &err), SBX_EWIDER);
	ck_assert_ptr_null(w);
	ck_assert_ptr_nonnull(strstr(err.msg, "history"));
	sbx_policy_free(q);
	sbx_policy_free(p);
	load_bad("[git]\nhistory = some\n", 2, "[git] history: bad value");
	load_bad("[git]\nhistory = -1\n", 2, "[git] history");
	load_bad("[git]\ndepth = 1\n", 2, "unknown key 'depth' in [git]");
	sbx_policy_free(d);
}
END_TEST

/* SPEC 8.5: a policy's spend cap may only narrow: lower, never none. */
START_TEST(test_policy_spend_cap)
{
	struct sbx_policy_error err;
	struct sbx_policy *d = sbx_policy_new_default(), *p, *q = NULL;
	struct sbx_policy *w = NULL;
	char *text, usd[32];

	ck_assert_uint_eq(d->spend_cap, 0);	/* none by default */
	text = sbx_policy_canonical(d);
	ck_assert_ptr_null(strstr(text, "[model]"));
	free(text);
	p = load_ok("[model]\nspend_cap = 5.00\n");
	ck_assert_uint_eq(p->spend_cap, 5000000000ull);
	text = sbx_policy_canonical(p);
	ck_assert_ptr_nonnull(strstr(text, "[model]\nspend_cap = 5.00\n"));
	free(text);
	/* with no cap of the operator's, a repository sets one */
	ck_assert_int_eq(sbx_policy_narrow(d, "[model]\nspend_cap = 9.5\n",
	    "r", &q, &err), 0);
	ck_assert_uint_eq(q->spend_cap, 9500000000ull);
	sbx_policy_free(q);
	/* lower and equal narrow; higher and none widen, named by line */
	ck_assert_int_eq(sbx_policy_narrow(p, "[model]\nspend_cap = 0.25\n",
	    "r", &q, &err), 0);
	ck_assert_uint_eq(q->spend_cap, 250000000ull);
	sbx_policy_free(q);
	ck_assert_int_eq(sbx_policy_narrow(p, "[model]\nspend_cap = 5\n", "r",
	    &q, &err), 0);
	sbx_policy_free(q);
	ck_assert_int_eq(sbx_policy_narrow(p, "# r\n[model]\nspend_cap = "
	    "5.000000001\n", "r", &w, &err), SBX_EWIDER);
	ck_assert_ptr_null(w);
	ck_assert_int_eq(err.line, 3);
	ck_assert_str_eq(err.msg, "[model] spend_cap: 5.000000001 is wider "
	    "than the operator's 5.00 USD");
	ck_assert_int_eq(sbx_policy_narrow(p, "[model]\nspend_cap = none\n",
	    "r", &w, &err), SBX_EWIDER);
	ck_assert_ptr_null(w);
	ck_assert_int_eq(err.line, 2);
	ck_assert_ptr_nonnull(strstr(err.msg, "none is wider"));
	sbx_policy_free(p);
	load_bad("[model]\nspend_cap = 0\n", 2, "must be greater than 0");
	load_bad("[model]\nspend_cap = 5 USD\n", 2, "not an amount in USD");
	load_bad("[model]\nspend_cap = 1.0000000001\n", 2, "not an amount");
	load_bad("[model]\ncap = 1\n", 2, "unknown key 'cap' in [model]");
	sbx_policy_usd(125000, usd, sizeof usd);
	ck_assert_str_eq(usd, "0.000125");
	sbx_policy_usd(3000000000ull, usd, sizeof usd);
	ck_assert_str_eq(usd, "3.00");
	sbx_policy_free(d);
}
END_TEST

START_TEST(test_policy_canonical_hash)
{
	struct sbx_policy *a = load_ok("[network]\nallow = b.x:1, a.x:2\n"
	    "[checks]\nz = 1\ny = 2\n[limits]\nmemory = 1G\n");
	struct sbx_policy *b = load_ok("# same, written otherwise\n"
	    "[limits]\nmemory = 1024M ; inline comment\n"
	    "[checks]\ny = 2\nz = 1\n"
	    "[network]\nallow = A.X.:2\nallow = b.x:1 a.x:2\n");
	struct sbx_policy *c = load_ok("[network]\nallow = b.x:1, a.x:2\n"
	    "[checks]\nz = 1\ny = 2\n[limits]\nmemory = 1025M\n");
	char ha[SBX_SHA256_HEX], hb[SBX_SHA256_HEX], hc[SBX_SHA256_HEX];
	char *ca = sbx_policy_canonical(a);

	ck_assert_int_eq(sbx_policy_hash(a, ha), 0);
	ck_assert_int_eq(sbx_policy_hash(b, hb), 0);
	ck_assert_int_eq(sbx_policy_hash(c, hc), 0);
	ck_assert_str_eq(ha, hb);
	ck_assert_str_ne(ha, hc);
	ck_assert_ptr_nonnull(strstr(ca, "allow = a.x:2,b.x:1\n"));
	ck_assert_ptr_nonnull(strstr(ca, "memory = 1073741824\n"));
	ck_assert_ptr_nonnull(strstr(ca, "[checks]\ntimeout = 900\ny = 2\nz = 1\n"));
	free(ca);
	sbx_policy_free(a);
	sbx_policy_free(b);
	sbx_policy_free(c);
}
END_TEST

START_TEST(test_policy_operator_over_base)
{
	struct sbx_policy_error err;
	struct sbx_policy *base = load_ok("[mounts]\nro = /opt/a\n"
	    "[checks]\nt = x\n"), *p;

	/* The operator may widen the shipped defaults: that is its role. */
	ck_assert_int_eq(sbx_policy_load("[limits]\nmemory = 64G\n"
	    "[mounts]\nro = /opt/b\n[checks]\nu = y\n", "op", base, &p, &err),
	    0);
	ck_assert_uint_eq(p->limits.memory, 64ull << 30);
	/* A list set in the file replaces the base's list. */
	ck_assert_uint_eq(p->nmounts_ro, 1);
	ck_assert_str_eq(p->mounts_ro[0], "/opt/b");
	/* Checks accumulate by name. */
	ck_assert_uint_eq(p->nchecks, 2);
	sbx_policy_free(p);
	sbx_policy_free(base);
	ck_assert_int_eq(sbx_policy_load(NULL, "x", NULL, &p, &err), -EINVAL);
}
END_TEST

/*
 * [checks] timeout (issue 15 item 1): each check's own time limit, 15
 * minutes as shipped, set like a duration; a repository may only lower it,
 * and "timeout" is never taken for a check's name.
 */
START_TEST(test_policy_check_timeout)
{
	struct sbx_policy_error err;
	struct sbx_policy *d = sbx_policy_new_default(), *p, *q = NULL;

	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(d->check_timeout, 15 * 60);
	p = load_ok("[checks]\ntimeout = 2m\nunit = make test\n");
	ck_assert_uint_eq(p->check_timeout, 120);
	ck_assert_uint_eq(p->nchecks, 1);
	ck_assert_str_eq(p->checks[0].name, "unit");
	ck_assert_int_eq(sbx_policy_narrow(p, "[checks]\ntimeout = 30s\n",
	    "r", &q, &err), 0);
	ck_assert_uint_eq(q->check_timeout, 30);
	sbx_policy_free(q);
	q = NULL;
	ck_assert_int_eq(sbx_policy_narrow(p, "[checks]\ntimeout = 1h\n",
	    "r", &q, &err), SBX_EWIDER);
	ck_assert_ptr_nonnull(strstr(err.msg, "timeout"));
	sbx_policy_free(p);
	sbx_policy_free(d);
}
END_TEST

/* An agent profile's endpoint and install widen the operator's policy. */
START_TEST(test_policy_grant)
{
	struct sbx_policy *p = load_ok("[network]\nallow = a.example:443\n");
	char why[256];

	ck_assert_int_eq(sbx_policy_grant(p, "Models.Example:8443", 0, NULL,
	    why, sizeof why), 0);
	ck_assert_uint_eq(p->nnet_allow, 2);
	ck_assert_str_eq(p->net_allow[1], "models.example:8443");
	/* again: no duplicate */
	ck_assert_int_eq(sbx_policy_grant(p, "models.example:8443", 0, NULL,
	    why, sizeof why), 0);
	ck_assert_uint_eq(p->nnet_allow, 2);
	ck_assert_int_eq(sbx_policy_grant(p, NULL, 8080, "/opt/x//node_modules",
	    why, sizeof why), 0);
	ck_assert_uint_eq(p->loopback_port, 8080);
	ck_assert_uint_eq(p->nmounts_ro, 1);
	ck_assert_str_eq(p->mounts_ro[0], "/opt/x/node_modules");
	/* refused, the policy unchanged */
	ck_assert_int_eq(sbx_policy_grant(p, NULL, 9090, NULL, why,
	    sizeof why), SBX_EPOLICY);
	ck_assert_ptr_nonnull(strstr(why, "another"));
	ck_assert_int_eq(sbx_policy_grant(p, NULL, SBX_EGRESS_PORT, NULL, why,
	    sizeof why), SBX_EPOLICY);
	ck_assert_int_eq(sbx_policy_grant(p, "1.2.3.4:443", 0, NULL, why,
	    sizeof why), SBX_EPOLICY);
	ck_assert_int_eq(sbx_policy_grant(p, "*:*", 0, NULL, why,
	    sizeof why), SBX_EPOLICY);
	ck_assert_int_eq(sbx_policy_grant(p, NULL, 0, "/proc/self", why,
	    sizeof why), SBX_EPOLICY);
	ck_assert_int_eq(sbx_policy_grant(p, NULL, 0, "relative", why,
	    sizeof why), SBX_EPOLICY);
	ck_assert_uint_eq(p->loopback_port, 8080);
	ck_assert_uint_eq(p->nnet_allow, 2);
	ck_assert_uint_eq(p->nmounts_ro, 1);
	sbx_policy_free(p);
}
END_TEST

Suite *
policy_suite(void)
{
	Suite *s = suite_create("policy");
	TCase *tc = tcase_create("Core");

	tcase_add_test(tc, test_policy_defaults);
	tcase_add_test(tc, test_policy_values);
	tcase_add_test(tc, test_policy_errors);
	tcase_add_test(tc, test_policy_disk_inodes);
	tcase_add_test(tc, test_policy_mount_host_system);
	tcase_add_test(tc, test_policy_output_dir);
	tcase_add_test(tc, test_policy_git_history);
	tcase_add_test(tc, test_policy_spend_cap);
	tcase_add_test(tc, test_policy_long_line);
	tcase_add_test(tc, test_policy_env_credentials);
	tcase_add_test(tc, test_policy_narrow_limits);
	tcase_add_test(tc, test_policy_narrow_lists);
	tcase_add_test(tc, test_policy_narrow_scalars);
	tcase_add_test(tc, test_policy_narrow_result);
	tcase_add_test(tc, test_policy_canonical_hash);
	tcase_add_test(tc, test_policy_check_timeout);
	tcase_add_test(tc, test_policy_operator_over_base);
	tcase_add_test(tc, test_policy_grant);
	suite_add_tcase(s, tc);
	return s;
}
