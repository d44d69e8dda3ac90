/*
 * test_egress.c: the pure half of egress (SPEC 8.2, 8.7; SANDBOX.md 5.b;
 * issue 7's adversarial list): the decision on every CONNECT target
 * spelling, the resolved-address filter, the plan binding of the proxy
 * socket and the doctor's egress checks.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"
#include "sandbox-adapters/sbx_int.h"
#include "support/check_util.h"

Suite *egress_suite(void);

static const char *const allow_default[] = { "allowed.example:443",
	"api.anthropic.com:443", NULL };

static const struct sbx_egress_rules rules_default = {
	.allow = allow_default,
};

static enum sbx_egress_reason
decide(const char *target, struct sbx_egress_target *t)
{
	return sbx_egress_decide(&rules_default, target, strlen(target), t);
}

struct want {
	const char *target;
	enum sbx_egress_reason reason;
};

/* Every spelling of the adversarial list, and its exact refusal. */
static const struct want denied[] = {
	{ "evil.example.com:443", SBX_EGRESS_NOT_ALLOWED },
	{ "allowed.example:80", SBX_EGRESS_NOT_ALLOWED },
	{ "allowed.example:8443", SBX_EGRESS_NOT_ALLOWED },
	{ "allowed.example.evil:443", SBX_EGRESS_NOT_ALLOWED },
	{ "evil.allowed.example:443", SBX_EGRESS_NOT_ALLOWED },
	{ "xallowed.example:443", SBX_EGRESS_NOT_ALLOWED },
	{ "allowed.exampl:443", SBX_EGRESS_NOT_ALLOWED },
	{ "allowed-example:443", SBX_EGRESS_NOT_ALLOWED },
	{ "sk-ant-canary-5f2a.attacker.example:443", SBX_EGRESS_NOT_ALLOWED },
	/* IP literals, every spelling inet_aton and friends take */
	{ "1.2.3.4:443", SBX_EGRESS_IP_LITERAL },
	{ "127.0.0.1:443", SBX_EGRESS_IP_LITERAL },
	{ "10.0.0.1:443", SBX_EGRESS_IP_LITERAL },
	{ "127.1:443", SBX_EGRESS_IP_LITERAL },
	{ "0x7f.1:443", SBX_EGRESS_IP_LITERAL },
	{ "0x7f000001:443", SBX_EGRESS_IP_LITERAL },
	{ "0X7F000001:443", SBX_EGRESS_IP_LITERAL },
	{ "2130706433:443", SBX_EGRESS_IP_LITERAL },
	{ "017700000001:443", SBX_EGRESS_IP_LITERAL },
	{ "0177.0.0.1:443", SBX_EGRESS_IP_LITERAL },
	{ "0x7f.0x0.0x0.0x1:443", SBX_EGRESS_IP_LITERAL },
	{ "1.1.1.1:443", SBX_EGRESS_IP_LITERAL },
	{ "example.123:443", SBX_EGRESS_IP_LITERAL },
	{ "[::1]:443", SBX_EGRESS_IP_LITERAL },
	{ "[::ffff:127.0.0.1]:443", SBX_EGRESS_IP_LITERAL },
	{ "[2606:4700::1111]:443", SBX_EGRESS_IP_LITERAL },
	{ "::1:443", SBX_EGRESS_IP_LITERAL },
	{ "fe80::1%25eth0:443", SBX_EGRESS_IP_LITERAL },
	/* dot and case tricks */
	{ "allowed.example.:443", SBX_EGRESS_TRAILING_DOT },
	{ "allowed.example..:443", SBX_EGRESS_TRAILING_DOT },
	{ "ALLOWED.EXAMPLE.:443", SBX_EGRESS_TRAILING_DOT },
	{ ".allowed.example:443", SBX_EGRESS_BAD_NAME },
	{ "allowed..example:443", SBX_EGRESS_BAD_NAME },
	{ "ALLOWED.EXAMPLE.EVIL:443", SBX_EGRESS_NOT_ALLOWED },
	/* encodings and other characters */
	{ "allowed%2eexample:443", SBX_EGRESS_BAD_NAME },
	{ "allowed.example%00:443", SBX_EGRESS_BAD_NAME },
	{ "user@allowed.example:443", SBX_EGRESS_BAD_NAME },
	{ "allowed.example/x:443", SBX_EGRESS_BAD_NAME },
	{ "allowed_example:443", SBX_EGRESS_BAD_NAME },
	{ "\xd0\xb0llowed.example:443", SBX_EGRESS_BAD_NAME },
	{ "xn--llowed-2nf.example:443", SBX_EGRESS_NOT_ALLOWED },
	{ "allowed.example :443", SBX_EGRESS_BAD_NAME },
	{ "-allowed.example:443", SBX_EGRESS_BAD_NAME },
	{ "allowed-.example:443", SBX_EGRESS_BAD_NAME },
	/* ports */
	{ "allowed.example:0443", SBX_EGRESS_BAD_PORT },
	{ "allowed.example:+443", SBX_EGRESS_BAD_PORT },
	{ "allowed.example:443 ", SBX_EGRESS_BAD_PORT },
	{ "allowed.example:", SBX_EGRESS_BAD_PORT },
	{ "allowed.example:0", SBX_EGRESS_BAD_PORT },
	{ "allowed.example:65536", SBX_EGRESS_BAD_PORT },
	{ "allowed.example:https", SBX_EGRESS_BAD_PORT },
	{ "allowed.example:4430000", SBX_EGRESS_BAD_PORT },
	/* shapes */
	{ "allowed.example", SBX_EGRESS_MALFORMED },
	{ ":443", SBX_EGRESS_MALFORMED },
	{ "", SBX_EGRESS_MALFORMED },
};

START_TEST(test_egress_denied_spellings)
{
	const struct want *w = &denied[_i];
	struct sbx_egress_target t;
	enum sbx_egress_reason r;

	memset(&t, 0x5a, sizeof t);
	r = decide(w->target, &t);
	ck_assert_msg(r == w->reason, "%s: %s, want %s", w->target,
	    sbx_egress_reason_name(r), sbx_egress_reason_name(w->reason));
	ck_assert(sbx_egress_reason_denies(r));
	/* Nothing of a refused target is handed on. */
	ck_assert_str_eq(t.host, "");
	ck_assert_uint_eq(t.port, 0);
}
END_TEST

START_TEST(test_egress_allowed_exact)
{
	struct sbx_egress_target t;

	ck_assert_int_eq(decide("allowed.example:443", &t), SBX_EGRESS_OK);
	ck_assert_str_eq(t.host, "allowed.example");
	ck_assert_uint_eq(t.port, 443);
	ck_assert_int_eq(decide("api.anthropic.com:443", &t), SBX_EGRESS_OK);
	ck_assert_str_eq(t.host, "api.anthropic.com");
	/* Case is folded, then matched exactly: the lookup sees lower case. */
	ck_assert_int_eq(decide("ALLOWED.Example:443", &t), SBX_EGRESS_OK);
	ck_assert_str_eq(t.host, "allowed.example");
	ck_assert(!sbx_egress_reason_denies(SBX_EGRESS_OK));
	ck_assert(!sbx_egress_reason_denies(SBX_EGRESS_LOOPBACK_GRANT));
}
END_TEST

/* An embedded NUL must not cut the name short. */
START_TEST(test_egress_embedded_nul)
{
	static const char t1[] = "allowed.example\0.evil:443";
	static const char t2[] = "allowed.example:443\0junk";
	struct sbx_egress_target t;

	ck_assert_int_eq(sbx_egress_decide(&rules_default, t1, sizeof t1 - 1,
	    &t), SBX_EGRESS_BAD_NAME);
	ck_assert_int_eq(sbx_egress_decide(&rules_default, t2, sizeof t2 - 1,
	    &t), SBX_EGRESS_BAD_NAME);
	/* len is honoured: no NUL needed at the end. */
	ck_assert_int_eq(sbx_egress_decide(&rules_default,
	    "allowed.example:4431", 19, &t), SBX_EGRESS_OK);
}
END_TEST

START_TEST(test_egress_lengths)
{
	char name[400], target[420];
	struct sbx_egress_target t;
	const char *allow[] = { NULL, NULL };
	struct sbx_egress_rules r = { .allow = allow };

	/* A 63-byte label is fine, 64 is not. */
	memset(name, 'a', 63);
	snprintf(name + 63, sizeof name - 63, ".example");
	snprintf(target, sizeof target, "%s:443", name);
	allow[0] = target;
	ck_assert_int_eq(sbx_egress_decide(&r, target, strlen(target), &t),
	    SBX_EGRESS_OK);
	memset(name, 'a', 64);
	snprintf(name + 64, sizeof name - 64, ".example");
	snprintf(target, sizeof target, "%s:443", name);
	ck_assert_int_eq(sbx_egress_decide(&r, target, strlen(target), &t),
	    SBX_EGRESS_BAD_NAME);
	/* 253 bytes in all at most: labels of 63 and dots. */
	memset(name, 'a', 253);
	for (int i = 63; i < 253; i += 64)
		name[i] = '.';
	name[253] = '\0';
	snprintf(target, sizeof target, "%s:443", name);
	allow[0] = target;
	ck_assert_int_eq(sbx_egress_decide(&r, target, strlen(target), &t),
	    SBX_EGRESS_OK);
	name[253] = 'a';
	name[254] = '\0';
	snprintf(target, sizeof target, "%s:443", name);
	ck_assert_int_eq(sbx_egress_decide(&r, target, strlen(target), &t),
	    SBX_EGRESS_BAD_NAME);
}
END_TEST

START_TEST(test_egress_loopback_grant)
{
	static const char *const allow[] = { "allowed.example:443", NULL };
	struct sbx_egress_rules r = { .allow = allow,
		.loopback_name = "localhost", .loopback_port = 11434 };
	struct sbx_egress_target t;

	ck_assert_int_eq(sbx_egress_decide(&r, "localhost:11434", 15, &t),
	    SBX_EGRESS_LOOPBACK_GRANT);
	ck_assert_str_eq(t.host, "localhost");
	ck_assert_uint_eq(t.port, 11434);
	ck_assert_int_eq(sbx_egress_decide(&r, "LOCALHOST:11434", 15, &t),
	    SBX_EGRESS_LOOPBACK_GRANT);
	/* Only that port, only that name, never as an address. */
	ck_assert_int_eq(sbx_egress_decide(&r, "localhost:11435", 15, &t),
	    SBX_EGRESS_NOT_ALLOWED);
	ck_assert_int_eq(sbx_egress_decide(&r, "localhost:22", 12, &t),
	    SBX_EGRESS_NOT_ALLOWED);
	ck_assert_int_eq(sbx_egress_decide(&r, "127.0.0.1:11434", 15, &t),
	    SBX_EGRESS_IP_LITERAL);
	ck_assert_int_eq(sbx_egress_decide(&r, "localhost.:11434", 16, &t),
	    SBX_EGRESS_TRAILING_DOT);
	/* No grant: localhost is a name like any other, and not listed. */
	r.loopback_port = 0;
	ck_assert_int_eq(sbx_egress_decide(&r, "localhost:11434", 15, &t),
	    SBX_EGRESS_NOT_ALLOWED);
}
END_TEST

/* An allowlist entry that is not exact matches nothing. */
START_TEST(test_egress_entries)
{
	static const char *const bad[] = { "*:443", "*.example:443",
		"allowed.example", "allowed.example.:443", "1.2.3.4:443",
		"[::1]:443", "allowed.example:0443", "", NULL };
	static const char *const allow[] = { "*:443", "ALLOWED.EXAMPLE:443",
		NULL };
	struct sbx_egress_rules r = { .allow = allow };
	struct sbx_egress_target t;

	for (int i = 0; bad[i] != NULL; i++)
		ck_assert_msg(!sbx_egress_entry_valid(bad[i]), "%s", bad[i]);
	ck_assert(!sbx_egress_entry_valid(NULL));
	ck_assert(sbx_egress_entry_valid("api.anthropic.com:443"));
	ck_assert(sbx_egress_entry_valid("localhost:11434"));
	ck_assert_int_eq(sbx_egress_decide(&r, "evil.example:443", 16, &t),
	    SBX_EGRESS_NOT_ALLOWED);
	/* An upper-case entry is folded like the target. */
	ck_assert_int_eq(sbx_egress_decide(&r, "allowed.example:443", 19,
	    &t), SBX_EGRESS_OK);
	/* An empty or absent allowlist allows nothing. */
	r.allow = NULL;
	ck_assert_int_eq(sbx_egress_decide(&r, "allowed.example:443", 19,
	    &t), SBX_EGRESS_NOT_ALLOWED);
}
END_TEST

struct addr_case {
	const char *addr;
	bool global;
};

static const struct addr_case addrs[] = {
	{ "93.184.216.34", true },
	{ "1.1.1.1", true },
	{ "8.8.8.8", true },
	{ "160.79.104.10", true },
	{ "0.0.0.0", false },
	{ "0.1.2.3", false },
	{ "10.0.0.1", false },
	{ "10.255.255.255", false },
	{ "100.64.0.1", false },
	{ "100.127.255.254", false },
	{ "100.128.0.1", true },
	{ "127.0.0.1", false },
	{ "127.255.255.254", false },
	{ "169.254.169.254", false },
	{ "172.16.0.1", false },
	{ "172.31.255.255", false },
	{ "172.32.0.1", true },
	{ "192.0.0.8", false },
	{ "192.0.2.1", false },
	{ "192.88.99.1", false },
	{ "192.168.1.1", false },
	{ "198.18.0.1", false },
	{ "198.19.255.255", false },
	{ "198.51.100.7", false },
	{ "203.0.113.7", false },
	{ "224.0.0.251", false },
	{ "239.255.255.250", false },
	{ "240.0.0.1", false },
	{ "255.255.255.255", false },
	{ "2606:4700:4700::1111", true },
	{ "2a00:1450:4001:82a::200e", true },
	{ "::", false },
	{ "::1", false },
	{ "::ffff:127.0.0.1", false },
	{ "::ffff:10.1.2.3", false },
	{ "::ffff:93.184.216.34", true },
	{ "64:ff9b::7f00:1", false },
	{ "64:ff9b::5db8:d822", true },
	{ "2002:7f00:1::1", false },
	{ "2002:5db8:d822::1", true },
	{ "2001::1", false },
	{ "2001:db8::1", false },
	{ "fc00::1", false },
	{ "fd12:3456::1", false },
	{ "fe80::1", false },
	{ "fec0::1", false },
	{ "ff02::1", false },
	{ "100::1", false },
	{ "::127.0.0.1", false },
};

START_TEST(test_egress_addr_filter)
{
	const struct addr_case *c = &addrs[_i];
	struct sockaddr_storage ss;

	memset(&ss, 0, sizeof ss);
	if (strchr(c->addr, ':') != NULL) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		in6->sin6_family = AF_INET6;
		ck_assert_int_eq(inet_pton(AF_INET6, c->addr,
		    &in6->sin6_addr), 1);
	} else {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		in->sin_family = AF_INET;
		ck_assert_int_eq(inet_pton(AF_INET, c->addr, &in->sin_addr),
		    1);
	}
	ck_assert_msg(sbx_egress_addr_global((struct sockaddr *)&ss) ==
	    c->global, "%s: want %s", c->addr, c->global ? "global" :
	    "refused");
}
END_TEST

START_TEST(test_egress_addr_other_families)
{
	struct sockaddr sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_family = AF_UNIX;
	ck_assert(!sbx_egress_addr_global(&sa));
	ck_assert(!sbx_egress_addr_global(NULL));
}
END_TEST

/* ------------------------------------------------------------------ */
/* Plans.                                                              */

static char *cmd_default[] = { "/opt/agent/bin/agent", "--x", NULL };

static void
req_default(struct sbx_request *r)
{
	memset(r, 0, sizeof *r);
	r->id = "20261129-000000-000-0000";
	r->lease_dir = "/var/lib/corral/leases/x";
	r->workspace = "/var/lib/corral/leases/x/work";
	r->cmd = cmd_default;
	r->init_path = "/usr/libexec/corral/corral-sbx-init";
	r->uid = 2000007;
	r->gid = 2000007;
}

/* The --args options, split at NULs (pointers into the plan). */
static int
split_opts(const struct sbx_plan *p, const char **v, int max)
{
	const struct sbx_data *d = sbx_plan_data_find(p, SBX_BWRAP_ARGS_FD);
	size_t off = 0;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(d->bytes[d->len - 1], '\0');
	while (off < d->len && n < max) {
		v[n++] = d->bytes + off;
		off += strlen(d->bytes + off) + 1;
	}
	ck_assert_uint_eq(off, d->len);
	return n;
}

static int
find3(const char **v, int n, const char *a, const char *b, const char *c)
{
	for (int i = 0; i + 2 < n; i++) {
		if (strcmp(v[i], a) == 0 && strcmp(v[i + 1], b) == 0 &&
		    strcmp(v[i + 2], c) == 0)
			return i;
	}
	return -1;
}

START_TEST(test_egress_plan_add)
{
	static const char *const want_argv_tail[] = { SBX_BWRAP_INIT,
		"--egress", SBX_EGRESS_SOCK, "--", "/opt/agent/bin/agent",
		"--x", NULL };
	static const char *const vars[] = { "HTTPS_PROXY", "https_proxy",
		"HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", NULL };
	const char *v[512];
	struct sbx_request r;
	struct sbx_plan *p = NULL;
	size_t before, i;
	int n, bind, remount = -1;

	req_default(&r);
	ck_assert_int_eq(sbx_adapter_bwrap.plan(&r, &p), 0);
	before = sbx_plan_data_find(p, SBX_BWRAP_ARGS_FD)->len;
	ck_assert_int_eq(sbx_egress_plan_add(p,
	    "/var/lib/corral/leases/x/egress/proxy.sock", 0), 0);
	ck_assert_uint_gt(sbx_plan_data_find(p, SBX_BWRAP_ARGS_FD)->len,
	    before);
	n = split_opts(p, v, 512);
	bind = find3(v, n, "--ro-bind",
	    "/var/lib/corral/leases/x/egress/proxy.sock", SBX_EGRESS_SOCK);
	ck_assert_int_ge(bind, 0);
	for (int k = 0; k + 1 < n; k++) {
		if (strcmp(v[k], "--remount-ro") == 0 &&
		    strcmp(v[k + 1], "/") == 0)
			remount = k;
	}
	/* The bind needs the root still writable. */
	ck_assert_int_gt(remount, bind);
	for (i = 0; vars[i] != NULL; i++)
		ck_assert_msg(find3(v, n, "--setenv", vars[i],
		    SBX_EGRESS_PROXY_URL) >= 0, "%s", vars[i]);
	ck_assert_int_ge(find3(v, n, "--setenv", "NO_PROXY", ""), 0);
	ck_assert_int_ge(find3(v, n, "--setenv", "no_proxy", ""), 0);
	/* The helper forwards: its options before the command's "--". */
	for (i = 0; p->argv[i] != NULL; i++) {
		if (strcmp(p->argv[i], SBX_BWRAP_INIT) == 0)
			break;
	}
	for (size_t k = 0; want_argv_tail[k] != NULL; k++) {
		ck_assert_ptr_nonnull(p->argv[i + k]);
		ck_assert_str_eq(p->argv[i + k], want_argv_tail[k]);
	}
	ck_assert_ptr_null(p->argv[i + 6]);
	/* The socket path is not on the argv (only the inside path). */
	for (i = 0; p->argv[i] != NULL; i++)
		ck_assert_ptr_null(strstr(p->argv[i], "/var/lib/corral"));
	/* Once the data is sealed it can no longer change. */
	ck_assert_int_eq(sbx_plan_open_data(p), 0);
	ck_assert_int_eq(sbx_egress_plan_add(p, "/x/proxy.sock", 0), -EBUSY);
	sbx_plan_free(p);
}
END_TEST

START_TEST(test_egress_plan_loopback)
{
	const char *v[512];
	struct sbx_request r;
	struct sbx_plan *p = NULL;
	size_t i;
	int n;

	req_default(&r);
	ck_assert_int_eq(sbx_adapter_bwrap.plan(&r, &p), 0);
	ck_assert_int_eq(sbx_egress_plan_add(p, "/l/proxy.sock", 11434), 0);
	n = split_opts(p, v, 512);
	ck_assert_int_ge(find3(v, n, "--setenv", "NO_PROXY",
	    "localhost,127.0.0.1"), 0);
	for (i = 0; p->argv[i] != NULL; i++) {
		if (strcmp(p->argv[i], SBX_BWRAP_INIT) == 0)
			break;
	}
	ck_assert_str_eq(p->argv[i + 1], "--egress");
	ck_assert_str_eq(p->argv[i + 3], "--loopback");
	ck_assert_str_eq(p->argv[i + 4], "11434");
	ck_assert_str_eq(p->argv[i + 5], "--");
	sbx_plan_free(p);
}
END_TEST

/* An agent profile's knobs, placeholder key, PATH and HOME files. */
START_TEST(test_agent_plan_add)
{
	static char *env[] = { "ANTHROPIC_BASE_URL=http://127.0.0.1:9",
		"DISABLE_AUTOUPDATER=1", NULL };
	static char *bad_env[][2] = { { "GITHUB_TOKEN=x", NULL },
		{ "PATH=/evil", NULL }, { "HTTPS_PROXY=http://x", NULL },
		{ "LD_PRELOAD=/x.so", NULL }, { "MY_SECRET_THING=x", NULL } };
	struct sbx_agent_file files[] = {
		{ ".claude.json", "{\"a\": 1}", 8 },
		{ ".codex/config.toml", "x = 1\n", 6 },
	};
	struct sbx_agent_plan a = { env, "ANTHROPIC_API_KEY", "sk-placeholder",
		"/opt/node/bin", files, 2 };
	const struct sbx_data *d;
	const char *v[512];
	struct sbx_request r;
	struct sbx_plan *p = NULL;
	int n, ndata, at, remount = -1, dir;

	req_default(&r);
	ck_assert_int_eq(sbx_adapter_bwrap.plan(&r, &p), 0);
	ndata = p->ndata;
	ck_assert_int_eq(sbx_agent_plan_add(p, &a), 0);
	n = split_opts(p, v, 512);
	ck_assert_int_ge(find3(v, n, "--setenv", "ANTHROPIC_BASE_URL",
	    "http://127.0.0.1:9"), 0);
	ck_assert_int_ge(find3(v, n, "--setenv", "DISABLE_AUTOUPDATER", "1"),
	    0);
	ck_assert_int_ge(find3(v, n, "--setenv", "ANTHROPIC_API_KEY",
	    "sk-placeholder"), 0);
	ck_assert_int_ge(find3(v, n, "--setenv", "PATH",
	    "/opt/node/bin:/usr/local/bin:/usr/bin:/bin"), 0);
	/* Each file from its own data fd, its directory made first. */
	at = find3(v, n, "--file", "10", SBX_BWRAP_HOME "/.claude.json");
	ck_assert_int_ge(at, 2);
	ck_assert_str_eq(v[at - 1], "0600");
	dir = find3(v, n, "--perms", "0700", "--dir");
	ck_assert_int_ge(dir, 0);
	ck_assert_str_eq(v[dir + 3], SBX_BWRAP_HOME "/.codex");
	ck_assert_int_gt(find3(v, n, "--file", "11",
	    SBX_BWRAP_HOME "/.codex/config.toml"), dir);
	for (int k = 0; k + 1 < n; k++)
		if (strcmp(v[k], "--remount-ro") == 0 && strcmp(v[k + 1], "/")
		    == 0)
			remount = k;
	ck_assert_int_gt(remount, at);
	ck_assert_int_eq(p->ndata, ndata + 2);
	ck_assert_ptr_nonnull(d = sbx_plan_data_find(p, SBX_AGENT_FD));
	ck_assert_uint_eq(d->len, 8);
	ck_assert_int_eq(memcmp(d->bytes, "{\"a\": 1}", 8), 0);
	/* Nothing of it on the argv. */
	for (int i = 0; p->argv[i] != NULL; i++)
		ck_assert_ptr_null(strstr(p->argv[i], "placeholder"));
	sbx_plan_free(p);

	/* Refused: secrets, names the zone owns, paths out of HOME. */
	for (size_t i = 0; i < sizeof bad_env / sizeof bad_env[0]; i++) {
		struct sbx_agent_plan b = { bad_env[i], NULL, NULL, NULL, NULL,
			0 };
		size_t len;

		ck_assert_int_eq(sbx_adapter_bwrap.plan(&r, &p), 0);
		len = sbx_plan_data_find(p, SBX_BWRAP_ARGS_FD)->len;
		ck_assert_msg(sbx_agent_plan_add(p, &b) == SBX_EPOLICY, "%s",
		    bad_env[i][0]);
		ck_assert_uint_eq(sbx_plan_data_find(p, SBX_BWRAP_ARGS_FD)->len,
		    len);
		sbx_plan_free(p);
	}
	{
		struct sbx_agent_file out[] = { { "../escape", "x", 1 } },
		    abs[] = { { "/etc/passwd", "x", 1 } };
		struct sbx_agent_plan b = { NULL, NULL, NULL, NULL, out, 1 };
		struct sbx_agent_plan c = { NULL, "PATH", "x", NULL, NULL, 0 };

		ck_assert_int_eq(sbx_adapter_bwrap.plan(&r, &p), 0);
		ndata = p->ndata;
		ck_assert_int_eq(sbx_agent_plan_add(p, &b), -EINVAL);
		b.files = abs;
		ck_assert_int_eq(sbx_agent_plan_add(p, &b), -EINVAL);
		ck_assert_int_eq(sbx_agent_plan_add(p, &c), SBX_EPOLICY);
		ck_assert_int_eq(p->ndata, ndata);
		sbx_plan_free(p);
	}
}
END_TEST

START_TEST(test_egress_plan_refuses)
{
	char *cmd[] = { "/bin/true", NULL };
	struct sbx_request r;
	struct sbx_plan *p = NULL, *loc = NULL;
	size_t len;

	req_default(&r);
	ck_assert_int_eq(sbx_adapter_bwrap.plan(&r, &p), 0);
	len = sbx_plan_data_find(p, SBX_BWRAP_ARGS_FD)->len;
	ck_assert_int_eq(sbx_egress_plan_add(p, "relative.sock", 0), -EINVAL);
	ck_assert_int_eq(sbx_egress_plan_add(p, "/a/../b.sock", 0), -EINVAL);
	ck_assert_int_eq(sbx_egress_plan_add(p, NULL, 0), -EINVAL);
	ck_assert_int_eq(sbx_egress_plan_add(p, "/a.sock", 3128), -EINVAL);
	ck_assert_int_eq(sbx_egress_plan_add(p, "/a.sock", 70000), -EINVAL);
	/* Refused means untouched. */
	ck_assert_uint_eq(sbx_plan_data_find(p, SBX_BWRAP_ARGS_FD)->len, len);
	sbx_plan_free(p);
	/* The exec zone never gets network (SPEC 8.2): no helper to start. */
	ck_assert_int_eq(sbx_bwrap_exec_plan(&r, &p), 0);
	len = sbx_plan_data_find(p, SBX_BWRAP_ARGS_FD)->len;
	ck_assert_int_eq(sbx_egress_plan_add(p, "/a.sock", 0), -EINVAL);
	ck_assert_uint_eq(sbx_plan_data_find(p, SBX_BWRAP_ARGS_FD)->len, len);
	sbx_plan_free(p);
	/* Not a bwrap zone: nothing to bind into. */
	r.cmd = cmd;
	r.cwd = "/";
	ck_assert_int_eq(sbx_adapter_local.plan(&r, &loc), 0);
	ck_assert_int_eq(sbx_egress_plan_add(loc, "/a.sock", 0), -EINVAL);
	sbx_plan_free(loc);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Doctor (SPEC 8.7).                                                  */

START_TEST(test_egress_preflight)
{
	static const char *const anthropic[] = { "api.anthropic.com:443",
		NULL };
	static const char *const none[] = { NULL };
	static const char *const star[] = { "api.anthropic.com:443", "*",
		NULL };
	static const char *const starport[] = { "*.anthropic.com:443",
		NULL };
	static const char *const other[] = { "pypi.org:443", NULL };
	static const char *const local[] = { "localhost:11434", NULL };
	struct sbx_egress_check c;
	char why[256];

	memset(&c, 0, sizeof c);
	c.rules.allow = anthropic;
	c.agent = "claude-code";
	c.needs_model = true;
	c.model_endpoints = anthropic;
	ck_assert_int_eq(sbx_egress_preflight(&c, why, sizeof why), 0);
	ck_assert_str_eq(why, "");
	/* Unrestricted, asked for or spelled as a wildcard. */
	c.unrestricted = true;
	ck_assert_int_eq(sbx_egress_preflight(&c, why, sizeof why),
	    SBX_EPOLICY);
	ck_assert_ptr_nonnull(strstr(why, "unrestricted"));
	c.unrestricted = false;
	c.rules.allow = star;
	ck_assert_int_eq(sbx_egress_preflight(&c, why, sizeof why),
	    SBX_EPOLICY);
	ck_assert_ptr_nonnull(strstr(why, "unrestricted"));
	c.rules.allow = starport;
	ck_assert_int_eq(sbx_egress_preflight(&c, why, sizeof why),
	    SBX_EPOLICY);
	/* A model endpoint needed, none allowed. */
	c.rules.allow = none;
	ck_assert_int_eq(sbx_egress_preflight(&c, why, sizeof why),
	    SBX_EPOLICY);
	ck_assert_ptr_nonnull(strstr(why, "claude-code"));
	c.rules.allow = other;
	ck_assert_int_eq(sbx_egress_preflight(&c, why, sizeof why),
	    SBX_EPOLICY);
	ck_assert_ptr_nonnull(strstr(why, "api.anthropic.com:443"));
	/* No endpoints named: any destination may be the model... */
	c.model_endpoints = NULL;
	ck_assert_int_eq(sbx_egress_preflight(&c, why, sizeof why), 0);
	c.rules.allow = none;
	ck_assert_int_eq(sbx_egress_preflight(&c, why, sizeof why),
	    SBX_EPOLICY);
	/* ...and the loopback grant serves a local model server. */
	c.rules.loopback_name = "localhost";
	c.rules.loopback_port = 11434;
	ck_assert_int_eq(sbx_egress_preflight(&c, why, sizeof why), 0);
	c.model_endpoints = local;
	ck_assert_int_eq(sbx_egress_preflight(&c, why, sizeof why), 0);
	c.rules.loopback_port = 11435;
	ck_assert_int_eq(sbx_egress_preflight(&c, why, sizeof why),
	    SBX_EPOLICY);
	/* A malformed grant. */
	c.rules.loopback_name = "LOCAL HOST";
	ck_assert_int_eq(sbx_egress_preflight(&c, why, sizeof why),
	    SBX_EPOLICY);
	c.rules.loopback_name = NULL;
	ck_assert_int_eq(sbx_egress_preflight(&c, why, sizeof why),
	    SBX_EPOLICY);
	/* An agent that needs no model, with no network, is fine. */
	c.rules.loopback_port = 0;
	c.needs_model = false;
	ck_assert_int_eq(sbx_egress_preflight(&c, why, sizeof why), 0);
	/* Entries that are not exact fail closed. */
	c.rules.allow = (const char *const[]){ "allowed.example", NULL };
	ck_assert_int_eq(sbx_egress_preflight(&c, why, sizeof why),
	    SBX_EPOLICY);
}
END_TEST

START_TEST(test_egress_reason_names)
{
	ck_assert_str_eq(sbx_egress_reason_name(SBX_EGRESS_NOT_ALLOWED),
	    "blocked-by-allowlist");
	ck_assert_str_eq(sbx_egress_reason_name(SBX_EGRESS_IP_LITERAL),
	    "ip-literal");
	ck_assert_str_eq(sbx_egress_reason_name(SBX_EGRESS_PRIVATE_ADDRESS),
	    "non-global-address");
	ck_assert_str_eq(sbx_egress_reason_name((enum sbx_egress_reason)999),
	    "unknown");
	for (int r = SBX_EGRESS_OK; r <= SBX_EGRESS_FOREIGN_PEER; r++)
		ck_assert_str_ne(sbx_egress_reason_name(r), "unknown");
	ck_assert(!sbx_egress_reason_denies(SBX_EGRESS_CAP_BYTES));
	ck_assert(!sbx_egress_reason_denies(SBX_EGRESS_RESOLVE_FAILED));
	ck_assert(sbx_egress_reason_denies(SBX_EGRESS_PRIVATE_ADDRESS));
}
END_TEST

Suite *
egress_suite(void)
{
	Suite *s = suite_create("egress");
	TCase *tc = tcase_create("Core");

	tcase_add_loop_test(tc, test_egress_denied_spellings, 0,
	    (int)(sizeof denied / sizeof denied[0]));
	tcase_add_test(tc, test_egress_allowed_exact);
	tcase_add_test(tc, test_egress_embedded_nul);
	tcase_add_test(tc, test_egress_lengths);
	tcase_add_test(tc, test_egress_loopback_grant);
	tcase_add_test(tc, test_egress_entries);
	tcase_add_loop_test(tc, test_egress_addr_filter, 0,
	    (int)(sizeof addrs / sizeof addrs[0]));
	tcase_add_test(tc, test_egress_addr_other_families);
	tcase_add_test(tc, test_egress_plan_add);
	tcase_add_test(tc, test_egress_plan_loopback);
	tcase_add_test(tc, test_agent_plan_add);
	tcase_add_test(tc, test_egress_plan_refuses);
	tcase_add_test(tc, test_egress_preflight);
	tcase_add_test(tc, test_egress_reason_names);
	suite_add_tcase(s, tc);
	return s;
}
