/*
 * test_fleet.c: the SSH fleet's pieces that need no host (issue 23): the
 * fleet file (every problem named file:line:field, nothing applied in
 * part), words quoted for the remote shell (checked by a real /bin/sh),
 * the bounded runner (its output cap, its deadline killing the whole
 * process group, exit statuses) and placement's refusal by name when no
 * host matches. The hosts themselves are e2e/fleet's (real sshd).
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tui/runtime/fleet.h"

Suite *fleet_suite(void);

static struct tui_fleet F;
static struct tui_fleet_error E;

static int
parse(const char *text)
{
	return tui_fleet_parse(&F, "/cfg/fleet.ini", text, strlen(text), &E);
}

START_TEST(test_fleet_parse_ok)
{
	ck_assert_int_eq(parse("; a comment\n[fleet]\nssh_config = /etc/f.ssh\n"
	    "connect_timeout = 5\n\n[host a]\nssh = root@a.example\n"
	    "capacity = 2   ; two\nlabels = x, big y\n[host b.2]\n"
	    "ssh = ssh://u@127.0.0.1:2222\ncapacity = 1000\n"
	    "corral = /opt/corral/bin/corral\n"), 0);
	ck_assert_uint_eq(F.nhosts, 2);
	ck_assert_str_eq(F.ssh_config, "/etc/f.ssh");
	ck_assert_uint_eq(F.connect_timeout, 5);
	ck_assert_str_eq(F.hosts[0].name, "a");
	ck_assert_str_eq(F.hosts[0].dest, "root@a.example");
	ck_assert_uint_eq(F.hosts[0].capacity, 2);
	ck_assert_uint_eq(F.hosts[0].nlabels, 3);
	ck_assert_str_eq(F.hosts[0].labels[2], "y");
	ck_assert_str_eq(F.hosts[0].corral, "corral");
	ck_assert(tui_fleet_has_label(&F.hosts[0], "big"));
	ck_assert(!tui_fleet_has_label(&F.hosts[1], "big"));
	ck_assert_str_eq(F.hosts[1].corral, "/opt/corral/bin/corral");
	ck_assert_ptr_eq(tui_fleet_find(&F, "b.2"), &F.hosts[1]);
	ck_assert_ptr_null(tui_fleet_find(&F, "c"));
	/* The default timeout without [fleet]. */
	ck_assert_int_eq(parse("[host a]\nssh = a\ncapacity = 1\n"), 0);
	ck_assert_uint_eq(F.connect_timeout, TUI_FLEET_TIMEOUT_DEFAULT);
}
END_TEST

static const struct {
	const char *text, *msg;
} bad[] = {
	{ "[host a]\nssh = a\ncapacity = 0\n",
	  "/cfg/fleet.ini:3: capacity: want 1..1000" },
	{ "[host a]\nssh = a\ncapacity = 1001\n",
	  "/cfg/fleet.ini:3: capacity: want 1..1000" },
	{ "[host a]\nssh = a\ncapacity = 2x\n",
	  "/cfg/fleet.ini:3: capacity:" },
	{ "[host a]\nssh = -oProxyCommand=sh\ncapacity = 1\n",
	  "/cfg/fleet.ini:2: ssh: want an ssh destination" },
	{ "[host a]\nssh = a b\ncapacity = 1\n",
	  "/cfg/fleet.ini:2: ssh: want an ssh destination" },
	{ "\n[host a]\ncapacity = 1\n",
	  "/cfg/fleet.ini:2: ssh: [host a] has no ssh destination" },
	{ "[host a]\nssh = a\n[host b]\nssh = b\ncapacity = 1\n",
	  "/cfg/fleet.ini:1: capacity: [host a] has no capacity" },
	{ "[host a]\nssh = a\nssh = b\ncapacity = 1\n",
	  "/cfg/fleet.ini:3: ssh: set twice" },
	{ "[host a]\nssh = a\ncapacity = 1\n[host a]\n",
	  "/cfg/fleet.ini:4: host: host a is named twice" },
	{ "[host A]\n", "/cfg/fleet.ini:1: host: a host name is lower-case" },
	{ "[host -x]\n", "/cfg/fleet.ini:1: host: a host name" },
	{ "[hosts]\n", "/cfg/fleet.ini:1: section: unknown section" },
	{ "ssh = a\n", "/cfg/fleet.ini:1: ssh: outside a section" },
	{ "[host a]\nssh = a\ncapacity = 1\nport = 22\n",
	  "/cfg/fleet.ini:4: port: unknown key in [host a]" },
	{ "[host a]\nssh = a\ncapacity = 1\nlabels = Big\n",
	  "/cfg/fleet.ini:4: labels: a label is lower-case" },
	{ "[host a]\nssh = a\ncapacity = 1\ncorral = bin/corral\n",
	  "/cfg/fleet.ini:4: corral: want the absolute path" },
	{ "[fleet]\nconnect_timeout = 0\n",
	  "/cfg/fleet.ini:2: connect_timeout: want 1..300" },
	{ "[fleet]\nssh_config = fleet.ssh\n",
	  "/cfg/fleet.ini:2: ssh_config: want an absolute path" },
	{ "[host a\n", "/cfg/fleet.ini:1: section: want [fleet]" },
	{ "[host a]\nssh\n", "/cfg/fleet.ini:2: line: want KEY = VALUE" },
};

START_TEST(test_fleet_parse_bad)
{
	/* A good file first: a bad one must not apply in part. */
	ck_assert_int_eq(parse("[host keep]\nssh = k\ncapacity = 3\n"), 0);
	ck_assert_int_eq(parse(bad[_i].text), -EINVAL);
	if (strncmp(E.msg, bad[_i].msg, strlen(bad[_i].msg)) != 0)
		ck_abort_msg("for %s: got \"%s\", want \"%s...\"",
		    bad[_i].text, E.msg, bad[_i].msg);
	ck_assert_uint_eq(F.nhosts, 1);
	ck_assert_str_eq(F.hosts[0].name, "keep");
}
END_TEST

START_TEST(test_fleet_parse_nul)
{
	static const char text[] = "[host a]\nssh = a\0b\ncapacity = 1\n";

	ck_assert_int_eq(tui_fleet_parse(&F, "f", text, sizeof text - 1, &E),
	    -EINVAL);
	ck_assert_str_eq(E.msg, "f:2: line: a NUL byte");
}
END_TEST

/* What /bin/sh makes of the quoted word: the word itself. */
START_TEST(test_fleet_shquote)
{
	static const char *const words[] = { "plain", "", "it's", "a b",
		"$(touch /tmp/corral-fleet-pwned)", "`id`", "\\'\"'", "-n",
		"x;y|z&", "\n" };

	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
		char *q = tui_fleet_shquote(words[i]), *cmd = NULL;
		char *argv[] = { "/bin/sh", "-c", NULL, NULL };
		struct tui_fleet_out o;

		ck_assert_ptr_nonnull(q);
		ck_assert_int_gt(asprintf(&cmd, "printf %%s %s", q), 0);
		argv[2] = cmd;
		ck_assert_int_eq(tui_fleet_run(argv, NULL, -1, -1, 4096, 10000,
		    &o), 0);
		ck_assert_int_eq(o.status, 0);
		ck_assert_str_eq(o.out, words[i]);
		tui_fleet_out_clear(&o);
		free(q);
		free(cmd);
	}
	ck_assert_int_ne(access("/tmp/corral-fleet-pwned", F_OK), 0);
}
END_TEST

START_TEST(test_fleet_run_bounded)
{
	char *big[] = { "/bin/sh", "-c", "head -c 100000 /dev/zero; echo oops "
		">&2; exit 3", NULL };
	char *slow[] = { "/bin/sh", "-c", "sleep 30 & echo $! >&2; wait", NULL };
	struct tui_fleet_out o;
	char why[256];
	int pid;

	ck_assert_int_eq(tui_fleet_run(big, NULL, -1, -1, 1000, 20000, &o), 0);
	ck_assert_uint_eq(o.outlen, 1000);
	ck_assert(o.out_over);
	ck_assert_int_eq(o.status, 3);
	tui_fleet_out_why(&o, why, sizeof why);
	ck_assert_str_eq(why, "exited 3: oops");
	tui_fleet_out_clear(&o);
	/* The deadline kills the whole group: the sleep too. */
	ck_assert_int_eq(tui_fleet_run(slow, NULL, -1, -1, 1000, 500, &o), 0);
	ck_assert(o.timed_out);
	pid = atoi(o.err);
	ck_assert_int_gt(pid, 1);
	for (int i = 0; i < 200 && kill(pid, 0) == 0; i++)
		usleep(10000);
	ck_assert_int_ne(kill(pid, 0), 0);
	tui_fleet_out_clear(&o);
}
END_TEST

START_TEST(test_fleet_place_none)
{
	struct tui_fleet_probe pr[2];
	size_t np = 9, pick = 9;
	char why[512];

	ck_assert_int_eq(parse("[host a]\nssh = a\ncapacity = 1\nlabels = x\n"),
	    0);
	ck_assert_int_eq(tui_fleet_place(&F, "b", NULL, pr, &np, &pick, why,
	    sizeof why), -ENOENT);
	ck_assert_uint_eq(np, 0);
	ck_assert_str_eq(why, "no_such_host: b is not a host in "
	    "/cfg/fleet.ini");
	ck_assert_int_eq(tui_fleet_place(&F, NULL, "gpu", pr, &np, &pick, why,
	    sizeof why), -ENOENT);
	ck_assert_str_eq(why, "no_such_host: no host in /cfg/fleet.ini has "
	    "label gpu");
}
END_TEST

Suite *
fleet_suite(void)
{
	Suite *s = suite_create("fleet");
	TCase *tc = tcase_create("Core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_fleet_parse_ok);
	tcase_add_loop_test(tc, test_fleet_parse_bad, 0,
	    (int)(sizeof bad / sizeof bad[0]));
	tcase_add_test(tc, test_fleet_parse_nul);
	tcase_add_test(tc, test_fleet_shquote);
	tcase_add_test(tc, test_fleet_run_bounded);
	tcase_add_test(tc, test_fleet_place_none);
	suite_add_tcase(s, tc);
	return s;
}
