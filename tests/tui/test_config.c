/*
 * test_config.c: the operator's config file (SPEC 5.6, tui/config.c) and
 * the notification hook runner (tui/runtime/notify.c): parsing, every error named
 * with file and line and the defaults kept, loading from XDG_CONFIG_HOME,
 * and a real hook run on a loop (arguments, escaped environment, timeout
 * kill, waiting for it at shutdown).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "support/check_util.h"
#include "tui/runtime/runtime.h"

Suite *config_suite(void);

struct errs {
	int n;
	int line;
	char msg[512];
};

static void
on_err(const char *file, int line, const char *msg, void *ud)
{
	struct errs *e = ud;

	if (e->n++ == 0) {
		e->line = line;
		snprintf(e->msg, sizeof e->msg, "%s:%d: %s", file, line, msg);
	}
}

static int
parse(struct tui_config *cf, const char *text, struct errs *e)
{
	memset(e, 0, sizeof *e);
	return tui_config_parse(cf, "config", text, strlen(text), on_err, e);
}

/*
 * text is refused whole: -EINVAL, and the first error names config, the
 * line and what is wrong (needle). case_no names the table row.
 */
static void
refused(struct tui_config *cf, struct errs *e, size_t case_no,
    const char *text, int line, const char *needle)
{
	ck_assert_int_eq(parse(cf, text, e), -EINVAL);
	ck_assert_int_ge(e->n, 1);
	ck_assert_msg(e->line == line, "case %zu: line %d: %s", case_no,
	    e->line, e->msg);
	ck_assert_msg(strstr(e->msg, needle) != NULL, "case %zu: %s", case_no,
	    e->msg);
	ck_assert_msg(strncmp(e->msg, "config:", 7) == 0, "%s", e->msg);
}

START_TEST(test_config_defaults)
{
	struct tui_config cf;
	struct errs e;

	ck_assert_int_eq(parse(&cf, "", &e), 0);
	ck_assert_int_eq(e.n, 0);
	ck_assert_str_eq(cf.hook, "");
	ck_assert(!cf.bell);
	ck_assert(!cf.osc9);
	ck_assert_uint_eq(cf.hook_timeout_ms, 10000);
	ck_assert(tui_config_notifies(&cf, "blocked"));
	ck_assert(tui_config_notifies(&cf, "done"));
	ck_assert(tui_config_notifies(&cf, "failed"));
	ck_assert(!tui_config_notifies(&cf, "working"));
	ck_assert(!tui_config_notifies(&cf, "prompt"));
	ck_assert(!tui_config_notifies(&cf, "cancelled"));
	ck_assert(!tui_config_notifies(&cf, "bogus"));
}
END_TEST

START_TEST(test_config_full)
{
	static const char text[] =
	    "# corral config\n"
	    "; comments both ways\n"
	    "\n"
	    "[notify]\n"
	    "hook = notify-send -u critical corral\n"
	    "  on = blocked, failed prompt\n"
	    "timeout=3\n"
	    "interval = 30\n"
	    "bell = on\n"
	    "osc9 = yes ; inline comment\n";
	struct tui_config cf;
	struct errs e;

	ck_assert_int_eq(parse(&cf, text, &e), 0);
	ck_assert_int_eq(e.n, 0);
	ck_assert_str_eq(cf.hook, "notify-send -u critical corral");
	ck_assert_uint_eq(cf.hook_timeout_ms, 3000);
	ck_assert_uint_eq(cf.hook_interval_ms, 30000);
	ck_assert(cf.bell);
	ck_assert(cf.osc9);
	ck_assert(tui_config_notifies(&cf, "blocked"));
	ck_assert(tui_config_notifies(&cf, "failed"));
	ck_assert(tui_config_notifies(&cf, "prompt"));
	ck_assert(!tui_config_notifies(&cf, "done"));
	ck_assert_uint_eq(cf.notify_on, TUI_CONFIG_ON(TUI_ACTIVITY_BLOCKED) |
	    TUI_CONFIG_ON(TUI_ACTIVITY_FAILED) |
	    TUI_CONFIG_ON(TUI_ACTIVITY_PROMPT));
}
END_TEST

/* Each malformed file: the error names its line; the defaults stand. */
/* SPEC 4.6: the console's theme from the config. */
START_TEST(test_config_console_theme)
{
	struct tui_config cf;
	struct errs e;

	ck_assert_int_eq(parse(&cf, "", &e), 0);
	ck_assert_str_eq(cf.theme, "");
	ck_assert_int_eq(parse(&cf, "[notify]\nbell = on\n[console]\n"
	    "theme = high-contrast\n", &e), 0);
	ck_assert_str_eq(cf.theme, "high-contrast");
	ck_assert(cf.bell);
}
END_TEST

START_TEST(test_config_errors)
{
	static const struct {
		const char *text;
		int line;
		const char *msg;
	} bad[] = {
		{ "[notify]\nbell = loud\n", 2, "bad bell 'loud'" },
		{ "[notify]\nosc9 = on\nfrobnicate = 1\n", 3,
		  "unknown key 'frobnicate'" },
		{ "[colours]\nbell = on\n", 1, "unknown section [colours]" },
		{ "bell = on\n", 1, "'bell' outside a section" },
		{ "[notify]\nbell = on\nbell = off\n", 3, "duplicate key" },
		{ "[notify]\non = blocked, asleep\n", 2,
		  "unknown state 'asleep'" },
		{ "[notify]\ntimeout = 0\n", 2, "bad timeout '0'" },
		{ "[notify]\ntimeout = 10s\n", 2, "bad timeout '10s'" },
		{ "[notify]\ninterval = 0\n", 2, "bad interval '0'" },
		{ "[notify]\ninterval = 5m\n", 2, "bad interval '5m'" },
		{ "[notify]\nbell = on\nthis line has no equals sign\n", 3,
		  "syntax error" },
		{ "[console]\ncolour = red\n", 2,
		  "unknown key 'colour' in [console]" },
		{ "[console]\ntheme = light\ntheme = dark\n", 3,
		  "duplicate key 'theme'" },
		{ "[agent claude-code]\nurl = http://x\n", 2,
		  "unknown key 'url' in [agent claude-code]" },
		{ "[agent Claude Code]\nendpoint = http://x\n", 2,
		  "bad agent profile name" },
		{ "[agent codex]\nendpoint = https://a\nendpoint = https://b\n",
		  3, "duplicate key 'endpoint'" },
		{ "[agent codex]\nendpoint =\n", 2, "bad endpoint" },
	};
	struct tui_config cf;
	struct errs e;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		refused(&cf, &e, i, bad[i].text, bad[i].line, bad[i].msg);
		/* Never applied in part: the defaults. */
		ck_assert(!cf.bell);
		ck_assert(!cf.osc9);
		ck_assert_uint_eq(cf.hook_timeout_ms, 10000);
		ck_assert_uint_eq(cf.hook_interval_ms, 10000);
	}
}
END_TEST

/* [agent NAME] endpoint = URL: each profile's model endpoint (issue 18). */
START_TEST(test_config_agent_endpoint)
{
	struct tui_config cf;
	struct errs e;

	ck_assert_int_eq(parse(&cf, "[agent claude-code]\n"
	    "endpoint = http://127.0.0.1:8080\n[agent codex]\n"
	    "endpoint = https://models.example/v1\n", &e), 0);
	ck_assert_int_eq(e.n, 0);
	ck_assert_uint_eq(cf.nagents, 2);
	ck_assert_str_eq(tui_config_agent_endpoint(&cf, "claude-code"),
	    "http://127.0.0.1:8080");
	ck_assert_str_eq(tui_config_agent_endpoint(&cf, "codex"),
	    "https://models.example/v1");
	ck_assert_ptr_null(tui_config_agent_endpoint(&cf, "aider"));
	ck_assert_ptr_null(tui_config_agent_endpoint(&cf, NULL));
}
END_TEST

/* [provider NAME]: the model gateway's upstream and key (issue 19). */
START_TEST(test_config_provider)
{
	static const struct {
		const char *text;
		int line;
		const char *needle;
	} bad[] = {
		{ "[provider google]\nupstream = https://x\n", 2, "unknown "
		  "provider" },
		{ "[provider anthropic]\nkey_file = key\n", 2,
		  "absolute path" },
		{ "[provider openai]\nca_file = ./ca.pem\n", 2,
		  "absolute path" },
		{ "[provider anthropic]\nspend_cap = -1\n", 2,
		  "bad spend_cap" },
		{ "[provider anthropic]\nspend_cap = 5 USD\n", 2,
		  "bad spend_cap" },
		{ "[provider anthropic]\nkey = sk-inline\n", 2, "unknown key" },
		{ "[provider anthropic]\nupstream = https://a\n"
		  "upstream = https://b\n", 3, "duplicate key" },
	};
	const struct tui_config_provider *pv;
	struct tui_config cf;
	struct errs e;

	ck_assert_int_eq(parse(&cf, "[provider anthropic]\n"
	    "upstream = https://127.0.0.1:8443\nkey_file = /etc/k\n"
	    "ca_file = /etc/ca.pem\nspend_cap = 2.50\n[provider openai]\n"
	    "key_file = /etc/o\n", &e), 0);
	ck_assert_int_eq(e.n, 0);
	ck_assert_ptr_nonnull(pv = tui_config_provider(&cf, "anthropic"));
	ck_assert_str_eq(pv->upstream, "https://127.0.0.1:8443");
	ck_assert_str_eq(pv->key_file, "/etc/k");
	ck_assert_str_eq(pv->ca_file, "/etc/ca.pem");
	ck_assert_str_eq(pv->spend_cap, "2.50");
	ck_assert_ptr_nonnull(pv = tui_config_provider(&cf, "openai"));
	ck_assert_str_eq(pv->upstream, "");
	ck_assert_str_eq(pv->key_file, "/etc/o");
	ck_assert_ptr_null(tui_config_provider(&cf, "aider"));
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		refused(&cf, &e, i, bad[i].text, bad[i].line, bad[i].needle);
		ck_assert_uint_eq(cf.nproviders, 0);
	}
}
END_TEST

/* [command]: the command adapter's hooks (SPEC 8.1), absolute only. */
START_TEST(test_config_command)
{
	static const struct {
		const char *text;
		int line;
		const char *needle;
	} bad[] = {
		{ "[command]\nexec = vm-exec\n", 2, "exec must start with an "
		  "absolute path" },
		{ "[command]\nlist = ./list\n", 2, "absolute path" },
		{ "[command]\nlist = /a\nlist = /b\n", 3, "duplicate key "
		  "'list' in [command]" },
		{ "[command]\nmint = /a\n", 2, "unknown key 'mint' in "
		  "[command]" },
		{ "[command]\ntimeout = 0\n", 2, "bad [command] timeout" },
		{ "[command]\ntimeout = 5m\n", 2, "bad [command] timeout" },
	};
	struct tui_config cf;
	struct errs e;

	ck_assert_int_eq(parse(&cf, "[notify]\nbell = on\n[command]\n"
	    "provision = /opt/h/provision --pool gpu\nexec = /opt/h/exec\n"
	    "teardown = /opt/h/teardown\nlist = /opt/h/list\n"
	    "timeout = 90\n", &e), 0);
	ck_assert_int_eq(e.n, 0);
	ck_assert(cf.bell);
	ck_assert_str_eq(cf.cmd_provision, "/opt/h/provision --pool gpu");
	ck_assert_str_eq(cf.cmd_exec, "/opt/h/exec");
	ck_assert_str_eq(cf.cmd_teardown, "/opt/h/teardown");
	ck_assert_str_eq(cf.cmd_list, "/opt/h/list");
	ck_assert_uint_eq(cf.cmd_timeout_ms, 90000);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		refused(&cf, &e, i, bad[i].text, bad[i].line, bad[i].needle);
		/* A malformed file is ignored whole: no hook is set. */
		ck_assert_str_eq(cf.cmd_list, "");
		ck_assert_str_eq(cf.cmd_exec, "");
	}
}
END_TEST

START_TEST(test_config_long_line)
{
	char text[4096];
	struct tui_config cf;
	struct errs e;

	snprintf(text, sizeof text, "[notify]\nbell = on\nhook = %0*d\n", 2000,
	    7);
	ck_assert_int_eq(parse(&cf, text, &e), -EINVAL);
	ck_assert_int_eq(e.line, 3);
	ck_assert_ptr_nonnull(strstr(e.msg, "too long"));
	ck_assert_str_eq(cf.hook, "");
	ck_assert(!cf.bell);
	/* Hostile bytes are escaped in the message. */
	ck_assert_int_eq(parse(&cf, "[notify]\nbell = \033]0;x\a\n", &e),
	    -EINVAL);
	ck_assert_ptr_null(strchr(e.msg, '\033'));
	ck_assert_ptr_null(strchr(e.msg, '\a'));
}
END_TEST

START_TEST(test_config_load)
{
	char *dir = cu_tmpdir("config"), path[4096], sub[4096];
	struct tui_config cf;
	struct errs e = { 0 };

	setenv("XDG_CONFIG_HOME", dir, 1);
	ck_assert_int_eq(tui_config_path(path, sizeof path), 0);
	snprintf(sub, sizeof sub, "%s/corral/config", dir);
	ck_assert_str_eq(path, sub);
	/* No file: the defaults, no error. */
	ck_assert_int_eq(tui_config_load(&cf, on_err, &e), 0);
	ck_assert_int_eq(e.n, 0);
	ck_assert_str_eq(cf.hook, "");
	snprintf(sub, sizeof sub, "%s/corral", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	ck_assert_int_eq(cu_write_file(path, "[notify]\nhook = true\n"
	    "osc9 = on\n", 30), 0);
	ck_assert_int_eq(tui_config_load(&cf, on_err, &e), 0);
	ck_assert_str_eq(cf.hook, "true");
	ck_assert(cf.osc9);
	/* Malformed: named by its full path and line, defaults used. */
	ck_assert_int_eq(cu_write_file(path, "[notify]\nosc9 = on\nbell=x\n",
	    25), 0);
	ck_assert_int_eq(tui_config_load(&cf, on_err, &e), -EINVAL);
	snprintf(sub, sizeof sub, "%s/corral/config:3: bad bell", dir);
	ck_assert_msg(strncmp(e.msg, sub, strlen(sub)) == 0, "%s", e.msg);
	ck_assert(!cf.osc9);
	unsetenv("XDG_CONFIG_HOME");
	cu_rmrf(dir);
	free(dir);
}
END_TEST

/* The example in docs/detection.md is a valid config. */
START_TEST(test_config_doc_example)
{
	char *path = cu_src_path("docs/detection.md"), *doc, *b, *e;
	struct tui_config cf;
	struct errs er = { 0 };

	doc = cu_read_file(path, NULL);
	ck_assert_ptr_nonnull(doc);
	b = strstr(doc, "```dosini\n");
	ck_assert_ptr_nonnull(b);
	b += 10;
	e = strstr(b, "```");
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(tui_config_parse(&cf, "doc", b, (size_t)(e - b),
	    on_err, &er), 0);
	ck_assert_int_eq(er.n, 0);
	ck_assert_str_eq(cf.hook, "notify-send -u critical corral");
	ck_assert_uint_eq(cf.hook_timeout_ms, 10000);
	ck_assert(tui_config_notifies(&cf, "blocked"));
	ck_assert(!cf.bell);
	free(doc);
	free(path);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The hook runner                                                       */

static void
run_until_file(uv_loop_t *loop, const char *path, const char *text,
    int ms)
{
	uint64_t end = cu_now_ms() + (uint64_t)ms;

	for (;;) {
		char *got = cu_read_file(path, NULL);
		bool done = got != NULL && strstr(got, text) != NULL;

		free(got);
		if (done || cu_now_ms() >= end)
			return;
		uv_run(loop, UV_RUN_NOWAIT);
		usleep(10000);
	}
}

static void
close_walk(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

START_TEST(test_config_notify_hook)
{
	static const char script[] =
	    "#!/bin/sh\n"
	    "printf '%s|%s|%s|%s|%s|%s\\n' \"$1\" \"$2\" \"$3\" "
	    "\"$CORRAL_STATE\" \"$CORRAL_SIGNAL\" \"$CORRAL_DETAIL\" >>"
	    " \"$OUT\"\n"
	    "echo hook-stdout\n";
	static const char want[] = "ID1|blocked|alpha|blocked|"
	    "rule:claude-code:permission|Do you want to proceed? "
	    "$(touch /tmp/pwned) `id` ";
	char *dir = cu_tmpdir("notify"), *out, *log, *hook, *got;
	struct tui_config cf;
	struct tui_notify *n = NULL;
	uv_loop_t loop;
	uint64_t t0;
	int logfd;

	ck_assert_int_gt(asprintf(&out, "%s/calls", dir), 0);
	ck_assert_int_gt(asprintf(&log, "%s/holder.log", dir), 0);
	ck_assert_int_gt(asprintf(&hook, "%s/hook.sh", dir), 0);
	ck_assert_int_eq(cu_write_file(hook, script, strlen(script)), 0);
	ck_assert_int_eq(chmod(hook, 0700), 0);
	setenv("OUT", out, 1);
	logfd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
	ck_assert_int_ge(logfd, 0);
	tui_config_default(&cf);
	snprintf(cf.hook, sizeof cf.hook, "%s", hook);
	cf.hook_timeout_ms = 1000;
	ck_assert_int_eq(uv_loop_init(&loop), 0);
	ck_assert_int_eq(tui_notify_new(&n, &loop, &cf, logfd), 0);
	/* Not a notifying state: nothing runs. */
	ck_assert_int_eq(tui_notify_fire(n, "ID1", "alpha", "working",
	    "output", ""), 0);
	/* Agent text with $(...), backquotes and escapes: never run. */
	ck_assert_int_eq(tui_notify_fire(n, "ID1", "alpha", "blocked",
	    "rule:claude-code:permission",
	    "Do you want to proceed? $(touch /tmp/pwned) `id` \033]0;t\a"),
	    1);
	run_until_file(&loop, out, "ID1|", 5000);
	got = cu_read_file(out, NULL);
	ck_assert_ptr_nonnull(got);
	ck_assert_msg(strncmp(got, want, strlen(want)) == 0, "%s", got);
	ck_assert_ptr_null(strchr(got, '\033'));
	ck_assert_ptr_null(strchr(got, '\a'));
	free(got);
	run_until_file(&loop, log, "hook-stdout", 5000);
	uv_run(&loop, UV_RUN_NOWAIT);
	tui_notify_free(n);

	/* A hook that hangs is killed (its process group) at its timeout. */
	snprintf(cf.hook, sizeof cf.hook, "exec sleep 30 #");
	ck_assert_int_eq(tui_notify_new(&n, &loop, &cf, logfd), 0);
	ck_assert_int_eq(tui_notify_fire(n, "ID2", NULL, "failed", "exit:1",
	    NULL), 1);
	run_until_file(&loop, log, "killed", 5000);
	got = cu_read_file(log, NULL);
	ck_assert_ptr_nonnull(strstr(got, "hook-stdout"));
	ck_assert_ptr_nonnull(strstr(got, "hook for failed"));
	ck_assert_ptr_nonnull(strstr(got, "killed"));
	free(got);
	run_until_file(&loop, log, "killed by signal 9", 5000);
	tui_notify_free(n);

	/* Still running when the loop ends: waited for, then killed. */
	ck_assert_int_eq(tui_notify_new(&n, &loop, &cf, logfd), 0);
	ck_assert_int_eq(tui_notify_fire(n, "ID3", "c", "done", "exit:0", ""),
	    1);
	t0 = cu_now_ms();
	uv_walk(&loop, close_walk, NULL);
	uv_run(&loop, UV_RUN_NOWAIT);
	tui_notify_free(n);
	ck_assert_uint_ge(cu_now_ms() - t0, 900);
	ck_assert_uint_lt(cu_now_ms() - t0, 5000);
	ck_assert_int_eq(uv_loop_close(&loop), 0);
	close(logfd);
	unsetenv("OUT");
	cu_rmrf(dir);
	free(out);
	free(log);
	free(hook);
	free(dir);
}
END_TEST

/* Lines of path holding text (0 when it does not exist). */
static int
count_lines(const char *path, const char *text)
{
	char *got = cu_read_file(path, NULL), *p, *save = NULL;
	int k = 0;

	for (p = got != NULL ? strtok_r(got, "\n", &save) : NULL; p != NULL;
	    p = strtok_r(NULL, "\n", &save))
		k += strstr(p, text) != NULL;
	free(got);
	return k;
}

/*
 * An agent flipping blocked/working (issue 15): one run per change, at
 * most one at a time, the interval between two; the flips in between fold
 * into the one pending run; the pending run at the holder's end still
 * goes.
 */
START_TEST(test_config_notify_bounded)
{
	static const char script[] =
	    "#!/bin/sh\n"
	    "echo \"start $2\" >>\"$OUT\"\n"
	    "sleep 0.2\n"
	    "echo \"end $2\" >>\"$OUT\"\n";
	char *dir = cu_tmpdir("notifyb"), *out, *hook, *got;
	struct tui_config cf;
	struct tui_notify *n = NULL;
	uv_loop_t loop;
	int i;

	ck_assert_int_gt(asprintf(&out, "%s/calls", dir), 0);
	ck_assert_int_gt(asprintf(&hook, "%s/hook.sh", dir), 0);
	ck_assert_int_eq(cu_write_file(hook, script, strlen(script)), 0);
	ck_assert_int_eq(chmod(hook, 0700), 0);
	setenv("OUT", out, 1);
	tui_config_default(&cf);
	snprintf(cf.hook, sizeof cf.hook, "%s", hook);
	cf.hook_timeout_ms = 5000;
	cf.hook_interval_ms = 600;
	ck_assert_int_eq(uv_loop_init(&loop), 0);
	ck_assert_int_eq(tui_notify_new(&n, &loop, &cf, -1), 0);
	ck_assert_int_eq(tui_notify_fire(n, "ID", "a", "blocked", "s", ""),
	    1);
	/* The same state again is no change; 200 flips fold into one. */
	ck_assert_int_eq(tui_notify_fire(n, "ID", "a", "blocked", "s", ""),
	    0);
	for (i = 0; i < 200; i++) {
		ck_assert_int_eq(tui_notify_fire(n, "ID", "a", "working", "s",
		    ""), 0);
		ck_assert_int_eq(tui_notify_fire(n, "ID", "a", "blocked", "s",
		    ""), 0);
	}
	/* The loop ends when the pending run has run: no timer is left. */
	uv_run(&loop, UV_RUN_DEFAULT);
	ck_assert_int_eq(count_lines(out, "start blocked"), 2);
	got = cu_read_file(out, NULL);
	ck_assert_str_eq(got, "start blocked\nend blocked\n"
	    "start blocked\nend blocked\n");
	free(got);
	/* A change to a state that does not notify cancels the pending. */
	ck_assert_int_eq(tui_notify_fire(n, "ID", "a", "working", "s", ""),
	    0);
	ck_assert_int_eq(tui_notify_fire(n, "ID", "a", "blocked", "s", ""),
	    0);
	ck_assert_int_eq(tui_notify_fire(n, "ID", "a", "working", "s", ""),
	    0);
	uv_run(&loop, UV_RUN_DEFAULT);
	ck_assert_int_eq(count_lines(out, "start"), 2);
	/* Pending at the end (inside the interval): it runs at free. */
	cf.hook_interval_ms = 60000;
	tui_notify_free(n);
	ck_assert_int_eq(tui_notify_new(&n, &loop, &cf, -1), 0);
	ck_assert_int_eq(tui_notify_fire(n, "ID", "a", "blocked", "s", ""),
	    1);
	ck_assert_int_eq(tui_notify_fire(n, "ID", "a", "done", "s", ""), 0);
	uv_run(&loop, UV_RUN_NOWAIT);
	uv_walk(&loop, close_walk, NULL);
	uv_run(&loop, UV_RUN_NOWAIT);
	tui_notify_free(n);
	ck_assert_int_eq(count_lines(out, "start"), 4);
	ck_assert_int_eq(count_lines(out, "end done"), 1);
	got = cu_read_file(out, NULL);
	ck_assert_ptr_nonnull(strstr(got, "start blocked\nend blocked\n"
	    "start done\nend done\n"));
	free(got);
	ck_assert_int_eq(uv_loop_close(&loop), 0);
	unsetenv("OUT");
	cu_rmrf(dir);
	free(out);
	free(hook);
	free(dir);
}
END_TEST

Suite *
config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("Core");
	TCase *ti = tcase_create("Integration");

	tcase_add_test(tc, test_config_defaults);
	tcase_add_test(tc, test_config_full);
	tcase_add_test(tc, test_config_errors);
	tcase_add_test(tc, test_config_console_theme);
	tcase_add_test(tc, test_config_long_line);
	tcase_add_test(tc, test_config_command);
	tcase_add_test(tc, test_config_agent_endpoint);
	tcase_add_test(tc, test_config_provider);
	tcase_add_test(tc, test_config_load);
	tcase_add_test(tc, test_config_doc_example);
	suite_add_tcase(s, tc);
	tcase_set_timeout(ti, 20);
	tcase_add_test(ti, test_config_notify_hook);
	tcase_add_test(ti, test_config_notify_bounded);
	suite_add_tcase(s, ti);
	return s;
}
