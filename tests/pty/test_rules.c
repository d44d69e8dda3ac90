/*
 * test_rules.c: rule files as data (SPEC 5.3): the shipped rule files
 * load cleanly, agents are identified behind launchers, malformed files
 * are named with file and line while the others keep working, and the
 * operator's directory overrides the shipped one.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pty/pty.h"
#include "support/check_util.h"

/* Collected error messages, "file:line: msg\n" each. */
struct errs {
	char text[8192];
	int n;
};

static void
collect(const char *file, int line, const char *msg, void *ud)
{
	struct errs *e = ud;
	const char *base = strrchr(file, '/');
	size_t o = strlen(e->text);

	snprintf(e->text + o, sizeof e->text - o, "%s:%d: %s\n",
	    base != NULL ? base + 1 : file, line, msg);
	e->n++;
}

static struct pty_rules *
shipped(void)
{
	struct pty_rules *rs;
	struct errs e = { .n = 0 };
	char *dir = cu_src_path("agents");
	const char *dirs[] = { dir };

	ck_assert_int_eq(pty_rules_new(&rs), 0);
	ck_assert_int_eq(pty_rules_load_dirs(rs, dirs, 1, collect, &e), 0);
	ck_assert_str_eq(e.text, "");
	free(dir);
	return rs;
}

/* Parse text as agent "t" and return the errors it produced. */
static int
parse(const char *text, struct errs *e)
{
	struct pty_rules *rs;
	int rc;

	memset(e, 0, sizeof *e);
	ck_assert_int_eq(pty_rules_new(&rs), 0);
	rc = pty_rules_load_text(rs, "t", "t.rules", text, strlen(text),
	    collect, e);
	ck_assert_uint_eq(pty_rules_count(rs), rc == 0 ? 1 : 0);
	pty_rules_free(rs);
	return rc;
}

static void
write_file(const char *dir, const char *name, const char *text)
{
	char path[4096];

	snprintf(path, sizeof path, "%s/%s", dir, name);
	ck_assert_int_eq(cu_write_file(path, text, strlen(text)), 0);
}

START_TEST(test_rules_shipped)
{
	static const char *const want[] = { "claude-code", "codex",
		"generic", "python-input", "shell" };
	struct pty_rules *rs = shipped();
	const struct pty_rules_agent *a;
	struct pty_rule_info ri;
	size_t i;
	int k;

	ck_assert_uint_eq(pty_rules_count(rs), 5);
	for (i = 0; i < 5; i++) {
		a = pty_rules_at(rs, i);
		ck_assert_str_eq(pty_rules_agent_name(a), want[i]);
		ck_assert_ptr_nonnull(strstr(pty_rules_agent_file(a),
		    ".rules"));
		ck_assert_int_gt(pty_rules_agent_nrules(a), 1);
		for (k = 0; k < pty_rules_agent_nrules(a); k++) {
			pty_rules_agent_rule(a, k, &ri);
			ck_assert(ri.state == PTY_DETECT_WORKING ||
			    ri.state == PTY_DETECT_PROMPT ||
			    ri.state == PTY_DETECT_BLOCKED);
		}
	}
	ck_assert_ptr_null(pty_rules_at(rs, 6));
	a = pty_rules_find(rs, "claude-code");
	ck_assert_ptr_nonnull(a);
	pty_rules_agent_rule(a, 0, &ri);
	ck_assert_str_eq(ri.name, "permission");
	ck_assert_int_eq(ri.state, PTY_DETECT_BLOCKED);
	ck_assert_int_eq(ri.region, PTY_RULES_BOTTOM);
	ck_assert_int_eq(ri.rows, 16);
	ck_assert_int_eq(ri.priority, 90);
	ck_assert_uint_eq(ri.hold_ms, 150);
	ck_assert_ptr_null(pty_rules_find(rs, "nope"));
	/* Aliases: a command spelled out finds its profile; a glob not. */
	ck_assert_ptr_eq(pty_rules_find(rs, "claude"), a);
	ck_assert_ptr_eq(pty_rules_find(rs, "codex"),
	    pty_rules_find(rs, "codex"));
	ck_assert_str_eq(pty_rules_agent_name(pty_rules_find(rs, "codex")),
	    "codex");
	ck_assert_ptr_null(pty_rules_find(rs, "codex-*"));
	ck_assert_ptr_null(pty_rules_find(rs, "codex-x"));
	pty_rules_free(rs);
}
END_TEST

/* The model endpoints an agent needs (SPEC 8.7: the doctor's egress). */
START_TEST(test_rules_endpoints)
{
	struct pty_rules *rs = shipped();
	const char *const *ep;
	struct errs e;

	ep = pty_rules_agent_endpoints(pty_rules_find(rs, "claude-code"));
	ck_assert_ptr_nonnull(ep);
	ck_assert_str_eq(ep[0], "api.anthropic.com:443");
	ck_assert_ptr_null(ep[1]);
	ep = pty_rules_agent_endpoints(pty_rules_find(rs, "codex"));
	ck_assert_ptr_nonnull(ep);
	ck_assert_str_eq(ep[0], "api.openai.com:443");
	ck_assert_ptr_null(pty_rules_agent_endpoints(pty_rules_find(rs,
	    "shell")));
	pty_rules_free(rs);
	/* Blanks or commas between them; each must be host:port. */
	ck_assert_int_eq(parse("[agent]\ncommands = t\nendpoints = a.x:1, "
	    "b.y:2\n[rule a]\nstate = prompt\npattern = x\n", &e), 0);
	ck_assert_int_ne(parse("[agent]\ncommands = t\nendpoints = nohost\n"
	    "[rule a]\nstate = prompt\npattern = x\n", &e), 0);
	ck_assert_ptr_nonnull(strstr(e.text, "t.rules:3: bad endpoint "
	    "'nohost'"));
	ck_assert_int_ne(parse("[agent]\nendpoints = a:1\nendpoints = b:2\n"
	    "[rule a]\nstate = prompt\npattern = x\n", &e), 0);
	ck_assert_ptr_nonnull(strstr(e.text, "duplicate key 'endpoints'"));
}
END_TEST

struct idcase {
	const char *argv[8];
	const char *agent;	/* NULL: none */
};

START_TEST(test_rules_identify)
{
	static const struct idcase cases[] = {
		{ { "claude" }, "claude-code" },
		{ { "claude", "--resume" }, "claude-code" },
		{ { "node", "/usr/local/bin/claude", "-c" }, "claude-code" },
		{ { "node", "/usr/lib/node_modules/@anthropic-ai/claude-code/"
		    "cli.js" }, "claude-code" },
		{ { "/usr/bin/env", "node", "--max-old-space-size=4096",
		    "/home/a/.npm/bin/claude" }, "claude-code" },
		{ { "sh", "-c", "exec claude --model opus" }, "claude-code" },
		{ { "bash", "-lc", "FOO=1 claude | tee log" }, "claude-code" },
		{ { "codex" }, "codex" },
		{ { "node", "/usr/lib/node_modules/@openai/codex/bin/codex.js",
		    "exec" }, "codex" },
		{ { "/usr/lib/node_modules/@openai/codex/vendor/x86_64/codex/"
		    "codex-x86_64-unknown-linux-musl" }, "codex" },
		{ { "-bash" }, "shell" },
		{ { "/bin/zsh", "-l" }, "shell" },
		{ { "bash", "./setup.sh" }, "shell" },
		{ { "python3", "ask.py" }, "python-input" },
		{ { "python3.11", "-u", "-W", "ignore", "x.py" },
		    "python-input" },
		{ { "python" }, "python-input" },
		{ { "node", "server.js" }, NULL },
		{ { "vim", "notes.txt" }, NULL },
		{ { "" }, NULL },
	};
	struct pty_rules *rs = shipped();
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct pty_rules_agent *a;
		int argc = 0;

		while (argc < 8 && cases[i].argv[argc] != NULL)
			argc++;
		a = pty_rules_identify(rs, cases[i].argv, argc);
		if (cases[i].agent == NULL)
			ck_assert_msg(a == NULL, "case %zu: %s", i,
			    pty_rules_agent_name(a));
		else
			ck_assert_msg(a != NULL && strcmp(
			    pty_rules_agent_name(a), cases[i].agent) == 0,
			    "case %zu (%s): got %s", i, cases[i].argv[0],
			    a != NULL ? pty_rules_agent_name(a) : "none");
	}
	ck_assert_ptr_null(pty_rules_identify(rs, NULL, 0));
	ck_assert_ptr_null(pty_rules_identify(NULL, cases[0].argv, 1));
	pty_rules_free(rs);
}
END_TEST

START_TEST(test_rules_unwrap)
{
	static const char *const a1[] = { "/usr/bin/env", "-u", "X", "A=b",
		"node", "-r", "ts-node/register", "/x/bin/claude.js" };
	static const char *const a2[] = { "python3", "-m", "aider.main" };
	static const char *const a3[] = { "sh", "-c",
		"exec env A=1 python3 'my tool.py'" };
	static const char *const a4[] = { "node", "-e", "1+1" };
	static const char *const a5[] = { "bun", "run", "agent.ts" };
	char names[8][PTY_RULES_NAME_MAX];
	int n;

	n = pty_rules_unwrap(a1, 8, names, 8);
	ck_assert_int_eq(n, 3);
	ck_assert_str_eq(names[0], "env");
	ck_assert_str_eq(names[1], "node");
	ck_assert_str_eq(names[2], "claude");
	n = pty_rules_unwrap(a2, 3, names, 8);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(names[1], "aider");
	n = pty_rules_unwrap(a3, 3, names, 8);
	ck_assert_int_eq(n, 4);
	ck_assert_str_eq(names[0], "sh");
	ck_assert_str_eq(names[1], "env");
	ck_assert_str_eq(names[2], "python3");
	ck_assert_str_eq(names[3], "my tool");
	n = pty_rules_unwrap(a4, 3, names, 8);
	ck_assert_int_eq(n, 1);
	n = pty_rules_unwrap(a5, 3, names, 8);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(names[1], "agent");
	/* bounded by max */
	ck_assert_int_eq(pty_rules_unwrap(a1, 8, names, 2), 2);
}
END_TEST

static const char *
rule_name(const struct pty_rules_agent *a, int i)
{
	struct pty_rule_info ri;

	pty_rules_agent_rule(a, i, &ri);
	return ri.name;
}

START_TEST(test_rules_match)
{
	static const char text[] = "│ Do you want to proceed?\n"
	    "│ ❯ 1. Yes\n│   2. No";
	struct pty_rules *rs = shipped();
	const struct pty_rules_agent *a = pty_rules_find(rs, "claude-code");
	const char *line = NULL;
	size_t len = 0;

	ck_assert(pty_rules_agent_test(a, 0, text, &line, &len));
	ck_assert_uint_eq(len, strlen("│ Do you want to proceed?"));
	ck_assert_int_eq(strncmp(line, "│ Do you want", 10), 0);
	/* unless: the spinner says it still works */
	ck_assert(!pty_rules_agent_test(a, 0, "Do you want to proceed?\n"
	    "1. Yes\n✻ Thinking… (3s · esc to interrupt)", NULL, NULL));
	/* both patterns are needed */
	ck_assert(!pty_rules_agent_test(a, 0, "Do you want to proceed?",
	    NULL, NULL));
	/* Claude Code's title: a braille dot while a turn runs, ✳ idle */
	ck_assert_str_eq(rule_name(a, 5), "title-spinner");
	ck_assert(pty_rules_agent_test(a, 5, "⠂ Fix the tests", NULL, NULL));
	ck_assert(pty_rules_agent_test(a, 5, "⠐", NULL, NULL));
	ck_assert(!pty_rules_agent_test(a, 5, "✳ Claude Code", NULL, NULL));
	ck_assert(!pty_rules_agent_test(a, 5, "⠂Fix", NULL, NULL));
	/* Codex's status line, with its key remapped or animations off */
	a = pty_rules_find(rs, "codex");
	ck_assert_str_eq(rule_name(a, 1), "working");
	ck_assert(pty_rules_agent_test(a, 1, "• Working (12s • esc to "
	    "interrupt)", NULL, NULL));
	ck_assert(pty_rules_agent_test(a, 1, "• Preparing the report (1m "
	    "04s • esc to interrupt)", NULL, NULL));
	ck_assert(pty_rules_agent_test(a, 1, "Thinking (1m 03s, f12 to "
	    "interrupt)", NULL, NULL));
	ck_assert(pty_rules_agent_test(a, 1, "• Working (2h 01m 03s)", NULL,
	    NULL));
	ck_assert(!pty_rules_agent_test(a, 1, "the build took (2s) here",
	    NULL, NULL));
	pty_rules_free(rs);
}
END_TEST

struct badcase {
	const char *text;
	const char *err;	/* expected "t.rules:LINE: ..." prefix */
};

START_TEST(test_rules_errors)
{
	static const struct badcase cases[] = {
		{ "[rule a]\nstate = blocked\npattern = (unclosed\n",
		    "t.rules:3: bad pattern regex '(unclosed':" },
		{ "[rule a]\nstate = prompt\npattern = x\ncolour = red\n",
		    "t.rules:4: unknown key 'colour' in a rule" },
		{ "[rule a]\nstate = idle\npattern = x\n",
		    "t.rules:2: bad state 'idle' (working, prompt or "
		    "blocked)" },
		{ "[rule a]\nstate = done\npattern = x\n",
		    "t.rules:2: bad state 'done'" },
		{ "[rule a]\nstate = prompt\nregion = top 3\npattern = x\n",
		    "t.rules:3: bad region 'top 3'" },
		{ "[rule a]\nstate = prompt\nregion = bottom 65\npattern = "
		    "x\n", "t.rules:3: bad region 'bottom 65'" },
		{ "# c\n\n[rule a]\nstate = prompt\n",
		    "t.rules:3: rule 'a' has no pattern" },
		{ "[rule a]\npattern = x\n", "t.rules:1: rule 'a' has no "
		    "state" },
		{ "state = prompt\n", "t.rules:1: key 'state' outside a "
		    "section" },
		{ "[agents]\n", "t.rules:1: unknown section [agents]" },
		{ "[rule a]\nstate=prompt\npattern=x\n[rule a]\n",
		    "t.rules:4: duplicate rule 'a'" },
		{ "[rule a\n", "t.rules:1: section header without a closing "
		    "']'" },
		{ "[rule a]\nstate = prompt\njust words\npattern = x\n",
		    "t.rules:3: expected NAME = VALUE" },
		{ "[rule a]\nstate = prompt\nstate = blocked\npattern = x\n",
		    "t.rules:3: duplicate key 'state'" },
		{ "[rule a]\nstate = prompt\npriority = high\npattern = x\n",
		    "t.rules:3: bad priority 'high'" },
		{ "[rule a]\nstate = prompt\nhold = -1\npattern = x\n",
		    "t.rules:3: bad hold '-1'" },
		{ "[agent]\nname = x\n", "t.rules:2: unknown key 'name' in "
		    "[agent]" },
		{ "[agent]\nargv = [z-a]\n", "t.rules:2: bad argv regex" },
		{ "[agent]\n[agent]\n", "t.rules:2: second [agent] section" },
		{ "[rule a]\nstate = prompt\npattern =\n",
		    "t.rules:3: empty pattern" },
		{ "[rule a b]\n", "t.rules:1: bad rule name 'a b'" },
	};
	struct errs e;
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ck_assert_int_eq(parse(cases[i].text, &e), -EINVAL);
		ck_assert_msg(strncmp(e.text, cases[i].err,
		    strlen(cases[i].err)) == 0, "case %zu: got \"%s\"", i,
		    e.text);
	}
}
END_TEST

/* Every error of a file is named, each with its line. */
START_TEST(test_rules_errors_all)
{
	struct errs e;

	ck_assert_int_eq(parse("[rule a]\nstate = nope\npattern = (\n"
	    "[rule b]\nstate = prompt\nregion = side\npattern = ok\n", &e),
	    -EINVAL);
	ck_assert_int_eq(e.n, 3);
	ck_assert_ptr_nonnull(strstr(e.text, "t.rules:2: bad state"));
	ck_assert_ptr_nonnull(strstr(e.text, "t.rules:3: bad pattern"));
	ck_assert_ptr_nonnull(strstr(e.text, "t.rules:6: bad region"));
}
END_TEST

START_TEST(test_rules_syntax_details)
{
	struct pty_rules *rs;
	const struct pty_rules_agent *a;
	struct pty_rule_info ri;
	struct errs e = { .n = 0 };
	/* BOM, CRLF, indentation, comments, ':' separators, inline ';' */
	static const char text[] = "\xef\xbb\xbf# head\r\n"
	    "[agent]\r\n"
	    "  commands = foo bar*\r\n"
	    "[rule q]\r\n"
	    "\tstate: blocked\r\n"
	    "    region = title ; the window title\r\n"
	    "pattern = ^ok=yes$\r\n"
	    "; a comment\r\n"
	    "[rule p]\n"
	    "state = prompt\n"
	    "region = notify\n"
	    "hold = 0\n"
	    "pattern = x\n";

	ck_assert_int_eq(pty_rules_new(&rs), 0);
	ck_assert_int_eq(pty_rules_load_text(rs, "t", "t.rules", text,
	    strlen(text), collect, &e), 0);
	ck_assert_str_eq(e.text, "");
	a = pty_rules_find(rs, "t");
	ck_assert_int_eq(pty_rules_agent_nrules(a), 2);
	pty_rules_agent_rule(a, 0, &ri);
	ck_assert_int_eq(ri.region, PTY_RULES_TITLE);
	ck_assert_int_eq(ri.state, PTY_DETECT_BLOCKED);
	ck_assert(pty_rules_agent_test(a, 0, "ok=yes", NULL, NULL));
	pty_rules_agent_rule(a, 1, &ri);
	ck_assert_int_eq(ri.region, PTY_RULES_NOTIFY);
	ck_assert_uint_eq(ri.hold_ms, 0);
	{
		const char *argv[] = { "barista" };

		ck_assert_ptr_eq(pty_rules_identify(rs, argv, 1), a);
	}
	pty_rules_free(rs);
}
END_TEST

/* A malformed file is named; the others keep working. */
START_TEST(test_rules_bad_file_others_work)
{
	char *dir = cu_tmpdir("rules");
	const char *dirs[] = { dir };
	struct pty_rules *rs;
	struct errs e = { .n = 0 };
	char want[4200];

	write_file(dir, "good.rules", "[agent]\ncommands = good\n"
	    "[rule p]\nstate = prompt\npattern = >$\n");
	write_file(dir, "broken.rules", "[agent]\ncommands = broken\n\n"
	    "[rule p]\nstate = prompt\npattern = ((\n");
	write_file(dir, "notes.txt", "not a rule file");
	write_file(dir, "bad name!.rules", "[rule p]\n");
	ck_assert_int_eq(pty_rules_new(&rs), 0);
	ck_assert_int_eq(pty_rules_load_dirs(rs, dirs, 1, collect, &e), 1);
	ck_assert_int_eq(e.n, 1);
	snprintf(want, sizeof want, "broken.rules:6: bad pattern regex '((':");
	ck_assert_msg(strncmp(e.text, want, strlen(want)) == 0, "%s",
	    e.text);
	ck_assert_uint_eq(pty_rules_count(rs), 1);
	ck_assert_ptr_nonnull(pty_rules_find(rs, "good"));
	ck_assert_ptr_null(pty_rules_find(rs, "broken"));
	pty_rules_free(rs);
	cu_rmrf(dir);
	free(dir);
}
END_TEST

/* The operator's directory overrides a shipped file of the same name;
 * a broken override leaves the shipped one in force. */
START_TEST(test_rules_override)
{
	char *shipdir = cu_src_path("agents");
	char *user = cu_tmpdir("rules-user");
	const char *dirs[] = { shipdir, user, "/nonexistent/corral" };
	struct pty_rules *rs;
	struct errs e = { .n = 0 };
	const struct pty_rules_agent *a;
	struct pty_rule_info ri;

	write_file(user, "codex.rules", "[agent]\ncommands = codex\n"
	    "[rule mine]\nstate = blocked\nregion = bottom 2\n"
	    "pattern = ^Approve\\?\n");
	write_file(user, "claude-code.rules", "[rule x]\nstate = maybe\n"
	    "pattern = .\n");
	write_file(user, "extra.rules", "[rule p]\nstate = prompt\n"
	    "pattern = >$\n");
	ck_assert_int_eq(pty_rules_new(&rs), 0);
	ck_assert_int_eq(pty_rules_load_dirs(rs, dirs, 3, collect, &e), 1);
	ck_assert_ptr_nonnull(strstr(e.text, "claude-code.rules:2: bad "
	    "state 'maybe'"));
	ck_assert_uint_eq(pty_rules_count(rs), 6);
	a = pty_rules_find(rs, "codex");
	ck_assert_int_eq(pty_rules_agent_nrules(a), 1);
	pty_rules_agent_rule(a, 0, &ri);
	ck_assert_str_eq(ri.name, "mine");
	ck_assert_ptr_nonnull(strstr(pty_rules_agent_file(a), user));
	a = pty_rules_find(rs, "claude-code");
	ck_assert_int_gt(pty_rules_agent_nrules(a), 3);
	ck_assert_ptr_nonnull(strstr(pty_rules_agent_file(a), shipdir));
	pty_rules_free(rs);
	cu_rmrf(user);
	free(user);
	free(shipdir);
}
END_TEST

START_TEST(test_rules_user_dir)
{
	char buf[256];

	setenv("XDG_CONFIG_HOME", "/cfg", 1);
	ck_assert_int_eq(pty_rules_user_dir(buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "/cfg/corral/agents");
	setenv("XDG_CONFIG_HOME", "relative", 1);
	setenv("HOME", "/home/ann", 1);
	ck_assert_int_eq(pty_rules_user_dir(buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "/home/ann/.config/corral/agents");
	ck_assert_int_eq(pty_rules_user_dir(buf, 8), -ENAMETOOLONG);
	unsetenv("XDG_CONFIG_HOME");
	unsetenv("HOME");
	ck_assert_int_eq(pty_rules_user_dir(buf, sizeof buf), -ENOENT);
}
END_TEST

/* Bad input: long lines, huge files, NUL bytes, too many rules. */
START_TEST(test_rules_limits)
{
	struct errs e;
	char *big, *many;
	size_t o = 0;
	int i;

	big = malloc(300 * 1024);
	ck_assert_ptr_nonnull(big);
	snprintf(big, 300 * 1024, "[rule a]\nstate = prompt\npattern = ");
	o = strlen(big);
	memset(big + o, 'x', 1000);
	snprintf(big + o + 1000, 300 * 1024 - o - 1000, "\n");
	ck_assert_int_eq(parse(big, &e), -EINVAL);
	ck_assert_ptr_nonnull(strstr(e.text, "t.rules:3: line too long"));
	/* A file of 300 KB. */
	memset(big, 'y', 300 * 1024 - 1);
	big[300 * 1024 - 1] = '\0';
	ck_assert_int_eq(parse(big, &e), -EINVAL);
	ck_assert_ptr_nonnull(strstr(e.text, "t.rules:0: file over"));
	free(big);
	{
		static const char nul[] = "[rule a]\nstate = pr\0ompt\n";
		struct pty_rules *rs;

		memset(&e, 0, sizeof e);
		ck_assert_int_eq(pty_rules_new(&rs), 0);
		ck_assert_int_eq(pty_rules_load_text(rs, "t", "t.rules", nul,
		    sizeof nul - 1, collect, &e), -EINVAL);
		ck_assert_ptr_nonnull(strstr(e.text, "t.rules:2: NUL byte"));
		ck_assert_int_eq(pty_rules_load_text(rs, "../x", "f", "", 0,
		    collect, &e), -EINVAL);
		pty_rules_free(rs);
	}
	many = malloc(65 * 64);
	ck_assert_ptr_nonnull(many);
	o = 0;
	for (i = 0; i < 65; i++)
		o += (size_t)snprintf(many + o, 65 * 64 - o,
		    "[rule r%d]\nstate=prompt\npattern=x\n", i);
	ck_assert_int_eq(parse(many, &e), -EINVAL);
	ck_assert_ptr_nonnull(strstr(e.text, "t.rules:193: more than 64 "
	    "rules"));
	free(many);
}
END_TEST

/* The example in docs/detection.md is a valid rule file. */
START_TEST(test_rules_doc_example)
{
	char *path = cu_src_path("docs/detection.md"), *doc, *b, *e;
	const char *argv[] = { "node", "/opt/mytool/cli.js" };
	struct pty_rules *rs;
	struct errs er = { .n = 0 };
	const struct pty_rules_agent *a;
	struct pty_rule_info ri;

	doc = cu_read_file(path, NULL);
	ck_assert_ptr_nonnull(doc);
	b = strstr(doc, "```ini\n");
	ck_assert_ptr_nonnull(b);
	b += 7;
	e = strstr(b, "```");
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(pty_rules_new(&rs), 0);
	ck_assert_int_eq(pty_rules_load_text(rs, "mytool", "doc", b,
	    (size_t)(e - b), collect, &er), 0);
	ck_assert_str_eq(er.text, "");
	a = pty_rules_identify(rs, argv, 2);
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(pty_rules_agent_nrules(a), 2);
	pty_rules_agent_rule(a, 0, &ri);
	ck_assert_int_eq(ri.rows, 4);
	ck_assert_int_eq(ri.priority, 90);
	ck_assert(pty_rules_agent_test(a, 0, "Apply these changes? [y/n]",
	    NULL, NULL));
	ck_assert(!pty_rules_agent_test(a, 0, "Apply these changes? [y/n]\n"
	    "(esc to interrupt)", NULL, NULL));
	pty_rules_free(rs);
	free(doc);
	free(path);
}
END_TEST

Suite *rules_suite(void);

Suite *
rules_suite(void)
{
	Suite *su = suite_create("rules");
	TCase *tc = tcase_create("Core");
	TCase *te = tcase_create("Errors");

	tcase_add_test(tc, test_rules_shipped);
	tcase_add_test(tc, test_rules_endpoints);
	tcase_add_test(tc, test_rules_identify);
	tcase_add_test(tc, test_rules_unwrap);
	tcase_add_test(tc, test_rules_match);
	tcase_add_test(tc, test_rules_syntax_details);
	tcase_add_test(tc, test_rules_override);
	tcase_add_test(tc, test_rules_user_dir);
	tcase_add_test(tc, test_rules_doc_example);
	suite_add_tcase(su, tc);
	tcase_add_test(te, test_rules_errors);
	tcase_add_test(te, test_rules_errors_all);
	tcase_add_test(te, test_rules_bad_file_others_work);
	tcase_add_test(te, test_rules_limits);
	suite_add_tcase(su, te);
	return su;
}
