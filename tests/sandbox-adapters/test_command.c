/*
 * test_command.c: the command adapter (SPEC 8.1, 3; issue 7) against the
 * hook scripts in tests/fixtures/command-adapter/, which run the work under
 * bwrap on this machine: the pure plan, provision/list/teardown, the exec
 * hook on a real PTY (its stdio is the lease PTY), the exit-code contract,
 * and answers a careful corral refuses.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"
#include "support/check_util.h"

Suite *command_suite(void);

struct kfx {
	char *state;	/* the hooks' "machines" */
	char *ws;	/* the workspace (owned by 65534, the hook's uid) */
	char *lease;
	char provision[1024], exec[1024], teardown[1024], list[1024];
	struct sbx_command_config cfg;
};

static void
kfx_init(struct kfx *k)
{
	char *src = cu_src_path("tests/fixtures/command-adapter");
	char *st = cu_tmpdir("cmd-state");

	memset(k, 0, sizeof *k);
	ck_assert_int_gt(asprintf(&k->state, "%s/machines", st), 0);
	free(st);
	k->ws = cu_tmpdir("cmd-work");
	ck_assert_int_eq(chown(k->ws, 65534, 65534), 0);
	k->lease = cu_tmpdir("cmd-lease");
	snprintf(k->provision, sizeof k->provision, "%s/provision.sh '%s'",
	    src, k->state);
	snprintf(k->exec, sizeof k->exec, "%s/exec.sh '%s'", src, k->state);
	snprintf(k->teardown, sizeof k->teardown, "%s/teardown.sh '%s'", src,
	    k->state);
	snprintf(k->list, sizeof k->list, "%s/list.sh '%s'", src, k->state);
	k->cfg.provision = k->provision;
	k->cfg.exec = k->exec;
	k->cfg.teardown = k->teardown;
	k->cfg.list = k->list;
	k->cfg.timeout_ms = 20000;
	free(src);
}

static void
kfx_done(struct kfx *k)
{
	char *p = strdup(k->state);

	*strrchr(p, '/') = '\0';
	cu_rmrf(p);
	cu_rmrf(k->ws);
	cu_rmrf(k->lease);
	free(p);
	free(k->state);
	free(k->ws);
	free(k->lease);
}

static void
req_of(struct kfx *k, struct sbx_request *r, const char *id, char **cmd)
{
	memset(r, 0, sizeof *r);
	r->id = id;
	r->lease_dir = k->lease;
	r->workspace = k->ws;
	r->cmd = cmd;
	r->command = &k->cfg;
}

/* ------------------------------------------------------------------ */

START_TEST(test_command_plan_exact)
{
	char *cmd[] = { "claude", "--print", "a b", NULL };
	struct sbx_command_config c = { .provision = "p", .exec = "ssh-run -x",
		.teardown = "t", .list = "l" };
	const char *want[] = { "/bin/sh", "-c", "ssh-run -x \"$@\"",
		"corral-exec", "20261129-000000-000-0001", "/srv/ws", "--",
		"claude", "--print", "a b", NULL };
	struct sbx_request r;
	struct sbx_plan *p = NULL;
	size_t i;

	memset(&r, 0, sizeof r);
	r.id = "20261129-000000-000-0001";
	r.workspace = "/srv/ws";
	r.cmd = cmd;
	r.command = &c;
	ck_assert_int_eq(sbx_adapter_command.plan(&r, &p), 0);
	for (i = 0; want[i] != NULL; i++) {
		ck_assert_ptr_nonnull(p->argv[i]);
		ck_assert_str_eq(p->argv[i], want[i]);
	}
	ck_assert_ptr_null(p->argv[i]);
	ck_assert(p->inherit_env);
	ck_assert(!p->drop_uid);
	ck_assert_int_eq(p->ndata, 0);
	ck_assert_str_eq(p->label, SBX_COMMAND_LABEL);
	ck_assert_str_eq(p->label, "command (operator-asserted)");
	ck_assert_str_eq(sbx_adapter_command.isolation, "operator-asserted");
	ck_assert_str_eq(sbx_adapter_command.name, "command");
	sbx_plan_free(p);
}
END_TEST

START_TEST(test_command_plan_refuses)
{
	char *cmd[] = { "agent", NULL };
	struct sbx_command_config c = { .provision = "p", .exec = "e",
		.teardown = "t", .list = "l" };
	struct sbx_request r;
	struct sbx_plan *p = NULL;
	char why[128];

	memset(&r, 0, sizeof r);
	r.id = "x1";
	r.workspace = "/ws";
	r.cmd = cmd;
	/* No configuration, or a hook missing: fail closed. */
	ck_assert_int_eq(sbx_adapter_command.plan(&r, &p), SBX_EPOLICY);
	r.command = &c;
	c.list = "";
	ck_assert_int_eq(sbx_adapter_command.plan(&r, &p), SBX_EPOLICY);
	ck_assert_int_eq(sbx_command_check(&c, why, sizeof why), SBX_EPOLICY);
	ck_assert_str_eq(why, "the command adapter needs [command] list");
	c.list = "l";
	ck_assert_int_eq(sbx_command_check(&c, why, sizeof why), 0);
	r.id = "../x";
	ck_assert_int_eq(sbx_adapter_command.plan(&r, &p), -EINVAL);
	r.id = "a b";
	ck_assert_int_eq(sbx_adapter_command.plan(&r, &p), -EINVAL);
	r.id = "x1";
	r.workspace = "ws";
	ck_assert_int_eq(sbx_adapter_command.plan(&r, &p), -EINVAL);
	r.workspace = "/ws";
	r.cmd = NULL;
	ck_assert_int_eq(sbx_adapter_command.plan(&r, &p), -EINVAL);
	ck_assert_ptr_null(p);
	/* The table's probe has no hooks to probe. */
	ck_assert_int_eq(sbx_adapter_command.probe(why, sizeof why),
	    SBX_EUNAVAIL);
	ck_assert(sbx_command_id_ok("20261129-000000-000-0001", 24));
	ck_assert(!sbx_command_id_ok("..", 2));
	ck_assert(!sbx_command_id_ok("", 0));
}
END_TEST

/* The full cycle: provision, list, exec (under bwrap), teardown. */
START_TEST(test_command_lifecycle)
{
	char *cmd[] = { "/bin/sh", "-c", "id -u; echo made > /work/out; "
	    "test -e /etc/shadow && echo shadow-visible; exit 3", NULL };
	char note[256], why[256], *out, path[4096], **ids = NULL;
	struct sbx_exec_opts o = { .cap = 65536, .timeout_ms = 30000,
		.stdin_fd = -1 };
	struct sbx_exec_result res;
	struct sbx_request r;
	struct sbx_plan *p = NULL;
	struct kfx k;

	kfx_init(&k);
	ck_assert_int_eq(sbx_command_probe(&k.cfg, why, sizeof why), 0);
	req_of(&k, &r, "lease-a", cmd);
	ck_assert_msg(sbx_command_provision(&k.cfg, &r, note, sizeof note,
	    why, sizeof why) == 0, "%s", why);
	ck_assert_ptr_nonnull(strstr(note, "local-bwrap "));
	ck_assert_int_eq(sbx_command_list(&k.cfg, &ids, why, sizeof why), 0);
	ck_assert_str_eq(ids[0], "lease-a");
	ck_assert_ptr_null(ids[1]);
	sbx_strv_free(ids);
	/* Provisioning the same ID twice is the hook's error, reported. */
	ck_assert_int_eq(sbx_command_provision(&k.cfg, &r, note, sizeof note,
	    why, sizeof why), SBX_EPROBE);
	ck_assert_str_eq(why, "provision hook exited 1: lease lease-a already "
	    "provisioned");
	ck_assert_int_eq(sbx_adapter_command.plan(&r, &p), 0);
	ck_assert_int_eq(sbx_exec_run(p, &o, &res), 0);
	/* The agent's status passes through; it ran as the hook's uid. */
	ck_assert(WIFEXITED(res.wstatus));
	ck_assert_int_eq(WEXITSTATUS(res.wstatus), 3);
	ck_assert_str_eq(res.out, "65534\n");
	snprintf(path, sizeof path, "%s/out", k.ws);
	out = cu_read_file(path, NULL);
	ck_assert_str_eq(out, "made\n");
	free(out);
	sbx_exec_result_clear(&res);
	sbx_plan_free(p);
	/* Teardown removes it; again is still fine. */
	ck_assert_int_eq(sbx_command_teardown(&k.cfg, "lease-a", why,
	    sizeof why), 0);
	ck_assert_int_eq(sbx_command_teardown(&k.cfg, "lease-a", why,
	    sizeof why), 0);
	ck_assert_int_eq(sbx_command_list(&k.cfg, &ids, why, sizeof why), 0);
	ck_assert_ptr_null(ids[0]);
	sbx_strv_free(ids);
	kfx_done(&k);
}
END_TEST

/* exec before provision: the adapter's own failure, 125. */
START_TEST(test_command_exec_unprovisioned)
{
	char *cmd[] = { "/bin/true", NULL };
	struct sbx_exec_opts o = { .cap = 4096, .timeout_ms = 20000,
		.stdin_fd = -1 };
	struct sbx_exec_result res;
	struct sbx_request r;
	struct sbx_plan *p = NULL;
	struct kfx k;

	kfx_init(&k);
	req_of(&k, &r, "lease-b", cmd);
	ck_assert_int_eq(sbx_adapter_command.plan(&r, &p), 0);
	ck_assert_int_eq(sbx_exec_run(p, &o, &res), 0);
	ck_assert(WIFEXITED(res.wstatus));
	ck_assert_int_eq(WEXITSTATUS(res.wstatus), SBX_COMMAND_EXIT_ADAPTER);
	ck_assert_ptr_nonnull(strstr(res.err, "not provisioned"));
	sbx_exec_result_clear(&res);
	sbx_plan_free(p);
	kfx_done(&k);
}
END_TEST

/* The exec hook's stdio is the lease PTY: a terminal, with its size. */
START_TEST(test_command_exec_on_pty)
{
	char *cmd[] = { "/bin/sh", "-c", "test -t 0 && test -t 1 && "
	    "echo tty-yes; stty size; echo done-$?", NULL };
	struct winsize ws = { .ws_row = 33, .ws_col = 101 };
	char note[256], why[256], buf[4096];
	struct sbx_request r;
	struct sbx_plan *p = NULL;
	struct kfx k;
	size_t len = 0;
	int master, slave, st;
	pid_t pid;

	kfx_init(&k);
	req_of(&k, &r, "lease-c", cmd);
	ck_assert_msg(sbx_command_provision(&k.cfg, &r, note, sizeof note,
	    why, sizeof why) == 0, "%s", why);
	ck_assert_int_eq(sbx_adapter_command.plan(&r, &p), 0);
	ck_assert_int_eq(openpty(&master, &slave, NULL, NULL, &ws), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* What pty/proc.c does with a plan, in short. */
		setsid();
		ioctl(slave, TIOCSCTTY, 0);
		dup2(slave, 0);
		dup2(slave, 1);
		dup2(slave, 2);
		closefrom(3);
		if (chdir(p->cwd) < 0)
			_exit(126);
		setenv("TERM", "xterm-256color", 1);
		execv(p->argv[0], p->argv);
		_exit(127);
	}
	close(slave);
	for (;;) {
		struct pollfd pf = { .fd = master, .events = POLLIN };
		ssize_t n;

		if (poll(&pf, 1, 20000) <= 0)
			break;
		n = read(master, buf + len, sizeof buf - 1 - len);
		if (n <= 0)
			break;	/* EIO: the slave side is gone */
		len += (size_t)n;
	}
	buf[len] = '\0';
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	ck_assert_msg(strstr(buf, "tty-yes") != NULL, "%s", buf);
	ck_assert_msg(strstr(buf, "33 101") != NULL, "%s", buf);
	ck_assert_msg(strstr(buf, "done-0") != NULL, "%s", buf);
	close(master);
	sbx_plan_free(p);
	ck_assert_int_eq(sbx_command_teardown(&k.cfg, "lease-c", why,
	    sizeof why), 0);
	kfx_done(&k);
}
END_TEST

struct bad_list {
	const char *body;
	int rc;
};

static const struct bad_list bad_lists[] = {
	{ "printf 'ok-1\\n../etc\\n'", SBX_EPROBE },
	{ "printf 'a b\\n'", SBX_EPROBE },
	{ "exit 4", SBX_EPROBE },
	{ "sleep 30", SBX_EPROBE },
	{ "printf 'x-1\\r\\n\\nx-2\\n'", 0 },
};

START_TEST(test_command_list_answers)
{
	const struct bad_list *b = &bad_lists[_i];
	char body[512], *path, why[256], **ids = (char **)1;
	struct kfx k;

	kfx_init(&k);
	ck_assert_int_gt(asprintf(&path, "%s-list-bad.sh", k.state), 0);
	snprintf(body, sizeof body, "#!/bin/sh\n%s\n", b->body);
	ck_assert_int_eq(cu_write_file(path, body, strlen(body)), 0);
	ck_assert_int_eq(chmod(path, 0755), 0);
	k.cfg.list = path;
	k.cfg.timeout_ms = 300;
	ck_assert_int_eq(sbx_command_list(&k.cfg, &ids, why, sizeof why),
	    b->rc);
	if (b->rc == 0) {
		ck_assert_str_eq(ids[0], "x-1");
		ck_assert_str_eq(ids[1], "x-2");
		ck_assert_ptr_null(ids[2]);
		sbx_strv_free(ids);
	} else {
		ck_assert_ptr_null(ids);
		ck_assert_str_ne(why, "");
		ck_assert_int_eq(sbx_command_probe(&k.cfg, why, sizeof why),
		    SBX_EPROBE);
	}
	free(path);
	kfx_done(&k);
}
END_TEST

/*
 * Two state directories on one host (SPEC 9.2): every hook learns whose
 * it works for (CORRAL_SCOPE, from the request's scope), so a list hook
 * answers state A with A's leases only, and teardown knows whose to remove.
 */
START_TEST(test_command_scope)
{
	char *list, *tear, *seen, why[256], **ids = NULL;
	static const char lbody[] = "#!/bin/sh\n"
	    "[ \"$CORRAL_SCOPE\" = /state/a ] && echo lease-of-a\nexit 0\n";
	char tbody[512];
	struct sbx_request r;
	struct kfx k;

	kfx_init(&k);
	ck_assert_int_gt(asprintf(&list, "%s-list-scope.sh", k.state), 0);
	ck_assert_int_gt(asprintf(&tear, "%s-tear-scope.sh", k.state), 0);
	ck_assert_int_gt(asprintf(&seen, "%s-seen", k.state), 0);
	snprintf(tbody, sizeof tbody, "#!/bin/sh\nprintf %%s \"$CORRAL_SCOPE\" "
	    ">'%s'\n", seen);
	ck_assert_int_eq(cu_write_file(list, lbody, strlen(lbody)), 0);
	ck_assert_int_eq(cu_write_file(tear, tbody, strlen(tbody)), 0);
	ck_assert_int_eq(chmod(list, 0755), 0);
	ck_assert_int_eq(chmod(tear, 0755), 0);
	k.cfg.list = list;
	k.cfg.teardown = tear;
	req_of(&k, &r, "lease-of-a", NULL);
	r.scope = "/state/a";
	ck_assert_int_eq(sbx_adapter_command.list(&r, &ids, why, sizeof why),
	    0);
	ck_assert_str_eq(ids[0], "lease-of-a");
	ck_assert_ptr_null(ids[1]);
	sbx_strv_free(ids);
	r.scope = "/state/b";
	ck_assert_int_eq(sbx_adapter_command.list(&r, &ids, why, sizeof why),
	    0);
	ck_assert_ptr_null(ids[0]);
	sbx_strv_free(ids);
	ck_assert_int_eq(sbx_adapter_command.teardown(&r, NULL, 0, NULL, why,
	    sizeof why), 0);
	free(list);
	ck_assert_ptr_nonnull(list = cu_read_file(seen, NULL));
	ck_assert_str_eq(list, "/state/b");
	free(list);
	free(tear);
	free(seen);
	kfx_done(&k);
}
END_TEST

Suite *
command_suite(void)
{
	Suite *s = suite_create("command");
	TCase *tc = tcase_create("Core");
	TCase *ti = tcase_create("Integration");

	tcase_add_test(tc, test_command_plan_exact);
	tcase_add_test(tc, test_command_plan_refuses);
	tcase_add_test(tc, test_command_scope);
	tcase_add_loop_test(tc, test_command_list_answers, 0,
	    (int)(sizeof bad_lists / sizeof bad_lists[0]));
	suite_add_tcase(s, tc);
	tcase_set_timeout(ti, 60);
	tcase_add_test(ti, test_command_lifecycle);
	tcase_add_test(ti, test_command_exec_unprovisioned);
	tcase_add_test(ti, test_command_exec_on_pty);
	suite_add_tcase(s, ti);
	return s;
}
