/*
 * test_keymap.c: the operator's keymap file (issue 9, tui/console/keymap.c):
 * bind/unbind/prefix lines change the tmux-like defaults in each table, a
 * malformed line is named (file:line) and changes nothing, the file is
 * found under $XDG_CONFIG_HOME.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support/check_util.h"
#include "tui/console/console.h"

Suite *keymap_suite(void);

static enum tui_action
press(struct tui_keys *k, struct tui_key key)
{
	struct tui_act a;

	return tui_keys_feed(k, &key, &a);
}

static int
parse(struct tui_keys *k, const char *text, char *err, size_t errsz)
{
	return tui_keymap_parse(k, "keys", text, strlen(text), err, errsz);
}

START_TEST(test_keymap_defaults_are_tmux_like)
{
	struct tui_keys k;

	tui_keys_init(&k);
	ck_assert_int_eq(press(&k, tui_keys_char('b', PTY_MOD_CTRL)),
	    TUI_ACT_MODE);
	ck_assert_int_eq(k.mode, TUI_MODE_PREFIX);
	ck_assert_int_eq(press(&k, tui_keys_char('d', 0)), TUI_ACT_QUIT);
	ck_assert_int_eq(press(&k, tui_keys_char('t', 0)), TUI_ACT_TIMELINE);
	ck_assert_int_eq(k.mode, TUI_MODE_TIMELINE);
	ck_assert_int_eq(press(&k, tui_keys_char('q', 0)), TUI_ACT_VIEW_CLOSE);
	ck_assert_int_eq(k.mode, TUI_MODE_NORMAL);
}
END_TEST

START_TEST(test_keymap_bind_and_unbind)
{
	struct tui_keys k;
	char err[256];

	tui_keys_init(&k);
	ck_assert_int_eq(parse(&k, "# comment\n\nbind T timeline\n"
	    "unbind t\r\nbind -T review J hunk-next  # trailing\n"
	    "bind -T normal C-r review\n", err, sizeof err), 0);
	ck_assert_str_eq(err, "");
	ck_assert_int_eq(press(&k, tui_keys_char('t', 0)), TUI_ACT_NONE);
	ck_assert_int_eq(k.mode, TUI_MODE_NORMAL);
	ck_assert_int_eq(press(&k, tui_keys_char('T', PTY_MOD_SHIFT)),
	    TUI_ACT_TIMELINE);
	ck_assert_int_eq(press(&k, tui_keys_char('q', 0)), TUI_ACT_VIEW_CLOSE);
	ck_assert_int_eq(press(&k, tui_keys_char('r', PTY_MOD_CTRL)),
	    TUI_ACT_REVIEW);
	ck_assert_int_eq(k.mode, TUI_MODE_REVIEW);
	ck_assert_int_eq(press(&k, tui_keys_char('J', 0)), TUI_ACT_HUNK_NEXT);
	/* the review's own defaults stay */
	ck_assert_int_eq(press(&k, tui_keys_char('n', 0)), TUI_ACT_HUNK_NEXT);
	ck_assert_int_eq(k.mode, TUI_MODE_REVIEW);
	/* a command bound with STAY keeps the mode it was pressed in */
	ck_assert_int_eq(press(&k, tui_keys_char(' ', 0)),
	    TUI_ACT_HUNK_TOGGLE);
	ck_assert_int_eq(k.mode, TUI_MODE_REVIEW);
	/* a later binding of the same key replaces the earlier one */
	ck_assert_int_eq(parse(&k, "bind T review\n", err, sizeof err), 0);
	tui_keys_set_mode(&k, TUI_MODE_NORMAL);
	ck_assert_int_eq(press(&k, tui_keys_char('T', 0)), TUI_ACT_REVIEW);
	tui_keys_unbind_all(&k);
	tui_keys_set_mode(&k, TUI_MODE_NORMAL);
	ck_assert_int_eq(press(&k, tui_keys_char('t', 0)), TUI_ACT_TIMELINE);
}
END_TEST

START_TEST(test_keymap_prefix)
{
	struct tui_keys k;
	struct tui_key ca = tui_keys_char('a', PTY_MOD_CTRL);
	char err[256];

	tui_keys_init(&k);
	ck_assert_int_eq(parse(&k, "prefix C-a\nbind -T prefix x cancel\n",
	    err, sizeof err), 0);
	ck_assert(tui_keys_eq(&k.prefix, &ca));
	ck_assert_int_eq(press(&k, ca), TUI_ACT_MODE);
	ck_assert_int_eq(press(&k, tui_keys_char('x', 0)),
	    TUI_ACT_CONFIRM_ASK);
	ck_assert_int_eq(k.mode, TUI_MODE_CONFIRM);
}
END_TEST

/* Each malformed line: its line number and why, nothing applied. */
static const struct {
	const char *text;
	const char *want;
} bad[] = {
	{ "bind T timeline\nbind Q nope\n", "keys:2: unknown command 'nope'" },
	{ "bind\n", "keys:1: want: bind" },
	{ "\n\nfrobnicate x\n", "keys:3: unknown directive" },
	{ "bind -T nowhere x quit\n", "keys:1: unknown table" },
	{ "bind NoSuchKey quit\n", "keys:1: unknown key 'NoSuchKey'" },
	{ "unbind x y\n", "keys:1: want: unbind" },
	{ "prefix\n", "keys:1: want: prefix KEY" },
	{ "bind C-b quit\n", "keys:1: cannot bind the prefix key" },
	{ "bind a b c d e f g\n", "keys:1: too many words" },
	{ "bind T time\x1bline\n", "keys:1: unknown command 'time\\x1bline'" },
};

START_TEST(test_keymap_malformed_keeps_defaults)
{
	struct tui_keys k;
	char err[256];

	tui_keys_init(&k);
	ck_assert_int_eq(parse(&k, bad[_i].text, err, sizeof err), -EINVAL);
	ck_assert_msg(strstr(err, bad[_i].want) != NULL, "got '%s', want "
	    "'%s'", err, bad[_i].want);
	ck_assert_uint_eq(k.nuser, 0);
	ck_assert_int_eq(press(&k, tui_keys_char('t', 0)), TUI_ACT_TIMELINE);
}
END_TEST

START_TEST(test_keymap_too_many)
{
	struct tui_keys k;
	char *text = malloc(64 * 1024), err[256];
	size_t o = 0;

	ck_assert_ptr_nonnull(text);
	tui_keys_init(&k);
	for (int i = 0; i <= TUI_KEYS_USER_MAX; i++)
		o += (size_t)snprintf(text + o, 64 * 1024 - o,
		    "bind -T %s %s quit\n", (const char *[]){ "normal",
		    "review", "timeline" }[i % 3],
		    (const char *[]){ "F1", "F2", "F3", "F4", "F5", "F6", "F7",
		    "F8", "F9", "F10", "F11", "F12", "a", "b", "c", "d", "e",
		    "f", "h", "l", "m", "o", "s", "u", "v", "w", "y", "0", "1",
		    "2", "3", "4", "5", "6", "7", "8", "9", "!", "@", "$",
		    "%", "^", "&", "*", "(", ")", "-", "_", "=", "+", "{", "}",
		    "|", ";", ":", "'", ",", ".", "<", ">", "/", "~", "`" }
		    [i / 3]);
	ck_assert_int_eq(parse(&k, text, err, sizeof err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "too many bindings"));
	ck_assert_uint_eq(k.nuser, 0);
	free(text);
}
END_TEST

START_TEST(test_keymap_load_file)
{
	char *dir = cu_tmpdir("keymap"), path[4096], err[4608], sub[4096];
	struct tui_keys k;

	snprintf(sub, sizeof sub, "%s/corral", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	setenv("XDG_CONFIG_HOME", dir, 1);
	ck_assert_int_eq(tui_keymap_path(path, sizeof path), 0);
	ck_assert_ptr_nonnull(strstr(path, "/corral/keys"));
	tui_keys_init(&k);
	/* no file: the defaults, no error */
	ck_assert_int_eq(tui_keymap_load(&k, NULL, err, sizeof err), 0);
	ck_assert_uint_eq(k.nuser, 0);
	ck_assert_int_eq(cu_write_file(path, "bind Z zoom\n", 12), 0);
	ck_assert_int_eq(tui_keymap_load(&k, NULL, err, sizeof err), 0);
	ck_assert_int_eq(press(&k, tui_keys_char('Z', 0)),
	    TUI_ACT_ZOOM_TOGGLE);
	ck_assert_int_eq(cu_write_file(path, "bind Z\n", 7), 0);
	tui_keys_init(&k);
	ck_assert_int_eq(tui_keymap_load(&k, NULL, err, sizeof err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, path));
	ck_assert_ptr_nonnull(strstr(err, ":1:"));
	cu_rmrf(dir);
	free(dir);
}
END_TEST

START_TEST(test_keymap_command_names)
{
	ck_assert_int_ge(tui_keys_command_find("apply"), 0);
	ck_assert_int_eq(tui_keys_command_find("nope"), -1);
	for (size_t i = 0; i < tui_keys_command_count(); i++)
		ck_assert_int_eq(tui_keys_command_find(
		    tui_keys_command_name((int)i)), (int)i);
	ck_assert_str_eq(tui_keys_table_name(TUI_TABLE_REVIEW), "review");
	ck_assert_int_eq(tui_keys_table_from_name("timeline"),
	    TUI_TABLE_TIMELINE);
}
END_TEST

Suite *
keymap_suite(void)
{
	Suite *s = suite_create("keymap");
	TCase *tc = tcase_create("Core");

	tcase_add_test(tc, test_keymap_defaults_are_tmux_like);
	tcase_add_test(tc, test_keymap_bind_and_unbind);
	tcase_add_test(tc, test_keymap_prefix);
	tcase_add_loop_test(tc, test_keymap_malformed_keeps_defaults, 0,
	    (int)(sizeof bad / sizeof bad[0]));
	tcase_add_test(tc, test_keymap_too_many);
	tcase_add_test(tc, test_keymap_load_file);
	tcase_add_test(tc, test_keymap_command_names);
	suite_add_tcase(s, tc);
	return s;
}
