/*
 * test_keys.c: the key/prefix state machine (SPEC 4.3, issue 3): the
 * selection never types, typing needs an explicit key, the prefix stops
 * it, scrollback, confirmation and resize in every mode.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "tui/console/console.h"

Suite *keys_suite(void);

static struct tui_key
ch(uint32_t c)
{
	return tui_keys_char(c, 0);
}

static struct tui_key
ctrl(uint32_t c)
{
	return tui_keys_char(c, PTY_MOD_CTRL);
}

static struct tui_key
sp(int code)
{
	return tui_keys_special(code, 0);
}

static enum tui_action
feed(struct tui_keys *k, struct tui_key key, struct tui_act *out)
{
	return tui_keys_feed(k, &key, out);
}

/* Every key a person could press, for exhaustive checks. */
static size_t
universe(struct tui_key *keys, size_t max)
{
	size_t n = 0;
	uint32_t c;
	int code;

	for (c = 0; c < 0x80 && n < max; c++)
		keys[n++] = tui_keys_from_char(c);
	for (c = 'a'; c <= 'z' && n < max; c++)
		keys[n++] = tui_keys_char(c, PTY_MOD_ALT);
	for (code = PTY_KEY_ENTER; code < PTY_KEY_MAX && n < max; code++)
		keys[n++] = sp(code);
	keys[n++] = sp(TUI_KEY_WHEEL_UP);
	keys[n++] = sp(TUI_KEY_WHEEL_DOWN);
	keys[n++] = sp(TUI_KEY_CLICK);
	keys[n++] = tui_keys_char(0xe9, 0);
	return n;
}

START_TEST(test_keys_init)
{
	struct tui_keys k;
	struct tui_key cb = ctrl('b');

	tui_keys_init(&k);
	ck_assert_int_eq(k.mode, TUI_MODE_NORMAL);
	ck_assert(tui_keys_eq(&k.prefix, &cb));
	ck_assert_str_eq(tui_keys_mode_name(k.mode), "NORMAL");
}
END_TEST

START_TEST(test_keys_selection_never_types)
{
	static const struct {
		int code;
		uint32_t cp;
		enum tui_action want;
	} cases[] = {
		{ PTY_KEY_NONE, 'j', TUI_ACT_SELECT_NEXT },
		{ PTY_KEY_DOWN, 0, TUI_ACT_SELECT_NEXT },
		{ PTY_KEY_NONE, 'k', TUI_ACT_SELECT_PREV },
		{ PTY_KEY_UP, 0, TUI_ACT_SELECT_PREV },
		{ PTY_KEY_NONE, 'g', TUI_ACT_SELECT_FIRST },
		{ PTY_KEY_END, 0, TUI_ACT_SELECT_LAST },
		{ PTY_KEY_NONE, 'G', TUI_ACT_SELECT_LAST },
	};
	struct tui_keys k;
	struct tui_act a;
	struct tui_key key;
	size_t i;

	tui_keys_init(&k);
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		key = cases[i].code == PTY_KEY_NONE ? ch(cases[i].cp) :
		    sp(cases[i].code);
		ck_assert_int_eq(tui_keys_feed(&k, &key, &a), cases[i].want);
		ck_assert_int_eq(k.mode, TUI_MODE_NORMAL);
		ck_assert(!a.mode_changed);
	}
}
END_TEST

START_TEST(test_keys_no_send_outside_typing)
{
	/* from every non-typing mode, no single key sends anything */
	static const enum tui_mode modes[] = { TUI_MODE_NORMAL,
		TUI_MODE_SCROLL, TUI_MODE_CONFIRM, TUI_MODE_PREFIX };
	struct tui_key keys[256];
	struct tui_keys k;
	struct tui_act a;
	size_t n, i, m;

	n = universe(keys, 200);
	for (m = 0; m < sizeof modes / sizeof modes[0]; m++) {
		for (i = 0; i < n; i++) {
			tui_keys_init(&k);
			if (modes[m] == TUI_MODE_CONFIRM)
				feed(&k, ch('x'), &a);
			else if (modes[m] == TUI_MODE_PREFIX)
				feed(&k, ctrl('b'), &a);
			else
				tui_keys_set_mode(&k, modes[m]);
			ck_assert_int_eq(k.mode, modes[m]);
			tui_keys_feed(&k, &keys[i], &a);
			ck_assert_msg(a.action != TUI_ACT_SEND_KEY,
			    "mode %s key %zu sent a key",
			    tui_keys_mode_name(modes[m]), i);
			/* typing starts only through the explicit key */
			if (k.mode == TUI_MODE_TYPING)
				ck_assert_int_eq(a.action, TUI_ACT_TYPE_START);
		}
	}
}
END_TEST

START_TEST(test_keys_typing_start_and_send)
{
	struct tui_keys k;
	struct tui_act a;
	struct tui_key keys[256], cc = ctrl('c');
	size_t n, i;

	tui_keys_init(&k);
	ck_assert_int_eq(feed(&k, ch('i'), &a), TUI_ACT_TYPE_START);
	ck_assert_int_eq(k.mode, TUI_MODE_TYPING);
	ck_assert(a.mode_changed);
	/* every key but the prefix and the wheel goes to the agent */
	n = universe(keys, 200);
	for (i = 0; i < n; i++) {
		if (tui_keys_eq(&keys[i], &k.prefix) ||
		    keys[i].code == TUI_KEY_WHEEL_UP ||
		    keys[i].code == TUI_KEY_WHEEL_DOWN ||
		    keys[i].code == TUI_KEY_CLICK)
			continue;
		ck_assert_int_eq(tui_keys_feed(&k, &keys[i], &a),
		    TUI_ACT_SEND_KEY);
		ck_assert(tui_keys_eq(&a.key, &keys[i]));
		ck_assert_int_eq(a.arg, 1);
		ck_assert_int_eq(k.mode, TUI_MODE_TYPING);
	}
	ck_assert_int_eq(feed(&k, cc, &a), TUI_ACT_SEND_KEY);
	ck_assert_uint_eq(a.key.cp, 'c');
	ck_assert_uint_eq(a.key.mods, PTY_MOD_CTRL);

	tui_keys_init(&k);
	ck_assert_int_eq(feed(&k, sp(PTY_KEY_ENTER), &a), TUI_ACT_TYPE_START);
	ck_assert_int_eq(k.mode, TUI_MODE_TYPING);
}
END_TEST

START_TEST(test_keys_prefix_stops_typing)
{
	struct tui_keys k;
	struct tui_act a;

	tui_keys_init(&k);
	feed(&k, ch('i'), &a);
	ck_assert_int_eq(feed(&k, ctrl('b'), &a), TUI_ACT_MODE);
	ck_assert_int_eq(k.mode, TUI_MODE_PREFIX);
	ck_assert(a.mode_changed);
	ck_assert_int_eq(feed(&k, sp(PTY_KEY_ESCAPE), &a), TUI_ACT_MODE);
	ck_assert_int_eq(k.mode, TUI_MODE_NORMAL);
	/* now j moves the selection again */
	ck_assert_int_eq(feed(&k, ch('j'), &a), TUI_ACT_SELECT_NEXT);
}
END_TEST

START_TEST(test_keys_prefix_twice_sends_prefix)
{
	struct tui_keys k;
	struct tui_act a;
	struct tui_key cb = ctrl('b');

	tui_keys_init(&k);
	feed(&k, ch('i'), &a);
	feed(&k, ctrl('b'), &a);
	ck_assert_int_eq(feed(&k, ctrl('b'), &a), TUI_ACT_SEND_KEY);
	ck_assert(tui_keys_eq(&a.key, &cb));
	ck_assert_int_eq(k.mode, TUI_MODE_TYPING);
	/* from NORMAL the double prefix sends nothing */
	tui_keys_init(&k);
	feed(&k, ctrl('b'), &a);
	ck_assert_int_eq(feed(&k, ctrl('b'), &a), TUI_ACT_MODE);
	ck_assert_int_eq(k.mode, TUI_MODE_NORMAL);
	/* the raw byte 0x02 from the terminal is the same key */
	tui_keys_init(&k);
	feed(&k, tui_keys_from_char(0x02), &a);
	ck_assert_int_eq(k.mode, TUI_MODE_PREFIX);
}
END_TEST

START_TEST(test_keys_prefix_commands)
{
	struct tui_keys k;
	struct tui_act a;

	tui_keys_init(&k);
	feed(&k, ch('i'), &a);
	feed(&k, ctrl('b'), &a);
	ck_assert_int_eq(feed(&k, ch('d'), &a), TUI_ACT_QUIT);
	/* plain d toggles the detail panel instead */
	tui_keys_init(&k);
	ck_assert_int_eq(feed(&k, ch('d'), &a), TUI_ACT_DETAIL_TOGGLE);

	tui_keys_init(&k);
	feed(&k, ch('i'), &a);
	feed(&k, ctrl('b'), &a);
	ck_assert_int_eq(feed(&k, ch('n'), &a), TUI_ACT_SELECT_NEXT);
	ck_assert_int_eq(k.mode, TUI_MODE_NORMAL);
	feed(&k, ctrl('b'), &a);
	ck_assert_int_eq(feed(&k, ch('p'), &a), TUI_ACT_SELECT_PREV);
	feed(&k, ctrl('b'), &a);
	ck_assert_int_eq(feed(&k, ch('?'), &a), TUI_ACT_HELP);
	ck_assert_int_eq(k.mode, TUI_MODE_NORMAL);
	/* an unbound key after the prefix only returns to NORMAL */
	feed(&k, ch('i'), &a);
	feed(&k, ctrl('b'), &a);
	ck_assert_int_eq(feed(&k, ch('Z'), &a), TUI_ACT_MODE);
	ck_assert_int_eq(k.mode, TUI_MODE_NORMAL);
	ck_assert(a.mode_changed);
}
END_TEST

START_TEST(test_keys_scrollback)
{
	struct tui_keys k;
	struct tui_act a;

	tui_keys_init(&k);
	ck_assert_int_eq(feed(&k, sp(PTY_KEY_PAGEUP), &a), TUI_ACT_SCROLL);
	ck_assert_int_eq(a.arg, 1);
	ck_assert_int_eq(a.unit, TUI_SCROLL_PAGE);
	ck_assert_int_eq(k.mode, TUI_MODE_SCROLL);
	ck_assert_int_eq(feed(&k, ch('k'), &a), TUI_ACT_SCROLL);
	ck_assert_int_eq(a.arg, 1);
	ck_assert_int_eq(a.unit, TUI_SCROLL_LINE);
	ck_assert_int_eq(feed(&k, sp(PTY_KEY_DOWN), &a), TUI_ACT_SCROLL);
	ck_assert_int_eq(a.arg, -1);
	ck_assert_int_eq(feed(&k, sp(TUI_KEY_WHEEL_DOWN), &a), TUI_ACT_SCROLL);
	ck_assert_int_eq(a.arg, -3);
	ck_assert_int_eq(feed(&k, ctrl('u'), &a), TUI_ACT_SCROLL);
	ck_assert_int_eq(a.unit, TUI_SCROLL_HALF);
	ck_assert_int_eq(feed(&k, ch('g'), &a), TUI_ACT_SCROLL_TOP);
	ck_assert_int_eq(feed(&k, ch('G'), &a), TUI_ACT_SCROLL_BOTTOM);
	ck_assert_int_eq(k.mode, TUI_MODE_SCROLL);
	ck_assert_int_eq(feed(&k, ch('q'), &a), TUI_ACT_SCROLL_EXIT);
	ck_assert_int_eq(k.mode, TUI_MODE_NORMAL);

	/* [ enters without moving; Esc leaves */
	ck_assert_int_eq(feed(&k, ch('['), &a), TUI_ACT_SCROLL);
	ck_assert_int_eq(a.arg, 0);
	ck_assert_int_eq(k.mode, TUI_MODE_SCROLL);
	ck_assert_int_eq(feed(&k, sp(PTY_KEY_ESCAPE), &a), TUI_ACT_SCROLL_EXIT);
	ck_assert_int_eq(k.mode, TUI_MODE_NORMAL);

	/* the wheel from NORMAL enters scrollback */
	ck_assert_int_eq(feed(&k, sp(TUI_KEY_WHEEL_UP), &a), TUI_ACT_SCROLL);
	ck_assert_int_eq(a.arg, 3);
	ck_assert_int_eq(k.mode, TUI_MODE_SCROLL);

	/* the prefix then [ while typing */
	tui_keys_init(&k);
	feed(&k, ch('i'), &a);
	feed(&k, ctrl('b'), &a);
	ck_assert_int_eq(feed(&k, ch('['), &a), TUI_ACT_SCROLL);
	ck_assert_int_eq(k.mode, TUI_MODE_SCROLL);
	feed(&k, ch('q'), &a);
	ck_assert_int_eq(k.mode, TUI_MODE_NORMAL);
}
END_TEST

START_TEST(test_keys_wheel_while_typing)
{
	struct tui_keys k;
	struct tui_act a;

	tui_keys_init(&k);
	feed(&k, ch('i'), &a);
	ck_assert_int_eq(feed(&k, sp(TUI_KEY_WHEEL_DOWN), &a), TUI_ACT_NONE);
	ck_assert_int_eq(k.mode, TUI_MODE_TYPING);
	ck_assert_int_eq(feed(&k, sp(TUI_KEY_WHEEL_UP), &a), TUI_ACT_SCROLL);
	ck_assert_int_eq(k.mode, TUI_MODE_SCROLL);
	/* leaving a wheel scroll goes back to typing */
	ck_assert_int_eq(feed(&k, ch('q'), &a), TUI_ACT_SCROLL_EXIT);
	ck_assert_int_eq(k.mode, TUI_MODE_TYPING);

	/* a full-screen agent gets arrow keys for the wheel */
	tui_keys_set_altscreen(&k, true);
	ck_assert_int_eq(feed(&k, sp(TUI_KEY_WHEEL_UP), &a), TUI_ACT_SEND_KEY);
	ck_assert_int_eq(a.key.code, PTY_KEY_UP);
	ck_assert_int_eq(a.arg, 3);
	ck_assert_int_eq(k.mode, TUI_MODE_TYPING);
}
END_TEST

START_TEST(test_keys_confirm)
{
	struct tui_keys k;
	struct tui_act a;

	tui_keys_init(&k);
	ck_assert_int_eq(feed(&k, ch('x'), &a), TUI_ACT_CONFIRM_ASK);
	ck_assert_int_eq(a.arg, TUI_ACT_CANCEL);
	ck_assert_int_eq(k.mode, TUI_MODE_CONFIRM);
	ck_assert_int_eq(feed(&k, ch('y'), &a), TUI_ACT_CANCEL);
	ck_assert_int_eq(k.mode, TUI_MODE_NORMAL);

	feed(&k, ch('x'), &a);
	ck_assert_int_eq(feed(&k, ch('n'), &a), TUI_ACT_CONFIRM_NO);
	ck_assert_int_eq(k.mode, TUI_MODE_NORMAL);
	/* any other key declines, and does not act */
	feed(&k, ch('x'), &a);
	ck_assert_int_eq(feed(&k, ch('j'), &a), TUI_ACT_CONFIRM_NO);
	/* the prefix declines as well */
	feed(&k, ch('x'), &a);
	ck_assert_int_eq(feed(&k, ctrl('b'), &a), TUI_ACT_CONFIRM_NO);
	ck_assert_int_eq(k.mode, TUI_MODE_NORMAL);

	feed(&k, ch('r'), &a);
	ck_assert_int_eq(a.arg, TUI_ACT_REJECT);
	ck_assert_int_eq(feed(&k, ch('Y'), &a), TUI_ACT_REJECT);
	feed(&k, ch('a'), &a);
	ck_assert_int_eq(feed(&k, ch('y'), &a), TUI_ACT_APPLY);
	ck_assert_int_eq(feed(&k, ch('R'), &a), TUI_ACT_REVIEW);
	ck_assert_int_eq(k.mode, TUI_MODE_REVIEW);
	/* a question asked in the review view returns there */
	ck_assert_int_eq(feed(&k, ch('a'), &a), TUI_ACT_CONFIRM_ASK);
	ck_assert_int_eq(k.mode, TUI_MODE_CONFIRM);
	ck_assert_int_eq(feed(&k, ch('n'), &a), TUI_ACT_CONFIRM_NO);
	ck_assert_int_eq(k.mode, TUI_MODE_REVIEW);
	ck_assert_int_eq(feed(&k, ch('r'), &a), TUI_ACT_CONFIRM_ASK);
	ck_assert_int_eq(feed(&k, ch('y'), &a), TUI_ACT_REJECT);
	ck_assert_int_eq(k.mode, TUI_MODE_REVIEW);
	ck_assert_int_eq(feed(&k, ch('q'), &a), TUI_ACT_VIEW_CLOSE);
	ck_assert_int_eq(k.mode, TUI_MODE_NORMAL);
}
END_TEST

START_TEST(test_keys_resize_every_mode)
{
	struct tui_keys k;
	struct tui_act a;
	enum tui_mode m;

	tui_keys_init(&k);
	feed(&k, ch('x'), &a);
	ck_assert_int_eq(feed(&k, sp(TUI_KEY_RESIZE), &a), TUI_ACT_RESIZE);
	ck_assert_int_eq(k.mode, TUI_MODE_CONFIRM);
	/* the question survives the resize */
	ck_assert_int_eq(feed(&k, ch('y'), &a), TUI_ACT_CANCEL);
	for (m = TUI_MODE_NORMAL; m < TUI_MODE_COUNT; m++) {
		tui_keys_set_mode(&k, m);
		ck_assert_int_eq(feed(&k, sp(TUI_KEY_RESIZE), &a),
		    TUI_ACT_RESIZE);
		ck_assert_int_eq(k.mode, m);
		ck_assert(!a.mode_changed);
	}
}
END_TEST

START_TEST(test_keys_custom_prefix)
{
	struct tui_keys k;
	struct tui_act a;
	struct tui_key p, none = sp(PTY_KEY_NONE), res = sp(TUI_KEY_RESIZE);

	tui_keys_init(&k);
	ck_assert_int_eq(tui_keys_parse("C-a", &p), 0);
	ck_assert_int_eq(tui_keys_set_prefix(&k, &p), 0);
	feed(&k, ch('i'), &a);
	/* C-b is an ordinary key now */
	ck_assert_int_eq(feed(&k, ctrl('b'), &a), TUI_ACT_SEND_KEY);
	ck_assert_int_eq(feed(&k, tui_keys_from_char(0x01), &a), TUI_ACT_MODE);
	ck_assert_int_eq(k.mode, TUI_MODE_PREFIX);
	ck_assert_int_eq(feed(&k, ctrl('a'), &a), TUI_ACT_SEND_KEY);
	ck_assert_uint_eq(a.key.cp, 'a');
	ck_assert_int_eq(tui_keys_set_prefix(&k, &none), -EINVAL);
	ck_assert_int_eq(tui_keys_set_prefix(&k, &res), -EINVAL);
	ck_assert_int_eq(tui_keys_set_prefix(&k, NULL), -EINVAL);
	ck_assert(tui_keys_eq(&k.prefix, &p));
}
END_TEST

START_TEST(test_keys_from_char)
{
	struct tui_key k;

	k = tui_keys_from_char('\r');
	ck_assert_int_eq(k.code, PTY_KEY_ENTER);
	k = tui_keys_from_char('\n');
	ck_assert_int_eq(k.code, PTY_KEY_ENTER);
	k = tui_keys_from_char(0x7f);
	ck_assert_int_eq(k.code, PTY_KEY_BACKSPACE);
	k = tui_keys_from_char(0x1b);
	ck_assert_int_eq(k.code, PTY_KEY_ESCAPE);
	k = tui_keys_from_char('\t');
	ck_assert_int_eq(k.code, PTY_KEY_TAB);
	k = tui_keys_from_char(0x1f);
	ck_assert_uint_eq(k.cp, '_');
	ck_assert_uint_eq(k.mods, PTY_MOD_CTRL);
	k = tui_keys_from_char(0x03);
	ck_assert_uint_eq(k.cp, 'c');
	ck_assert_uint_eq(k.mods, PTY_MOD_CTRL);
	k = tui_keys_from_char('A');
	ck_assert_uint_eq(k.cp, 'A');
	ck_assert_uint_eq(k.mods, 0);
}
END_TEST

START_TEST(test_keys_parse_and_name)
{
	static const struct {
		const char *in, *name;
	} ok[] = {
		{ "C-b", "C-b" }, { "^a", "C-a" }, { "C-B", "C-b" },
		{ "M-x", "M-x" }, { "C-M-q", "C-M-q" }, { "enter", "Enter" },
		{ "Esc", "Esc" }, { "F5", "F5" }, { "F12", "F12" },
		{ "PageUp", "PgUp" }, { "Space", "Space" },
		{ "C-Space", "C-Space" }, { "q", "q" },
		{ "\xc3\xa9", "\xc3\xa9" },
	};
	static const char *const bad[] = { "", "C-", "F13", "F0", "ab",
		"C-\xc3\xa9", "\x1b", "M-" };
	struct tui_key k;
	char buf[32];
	size_t i;

	for (i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		ck_assert_msg(tui_keys_parse(ok[i].in, &k) == 0, "%s",
		    ok[i].in);
		tui_keys_name(&k, buf, sizeof buf);
		ck_assert_str_eq(buf, ok[i].name);
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(tui_keys_parse(bad[i], &k) == -EINVAL, "'%s'",
		    bad[i]);
	/* a short buffer is truncated, not overrun */
	k = ctrl('b');
	ck_assert_uint_eq(tui_keys_name(&k, buf, 2), 1);
	ck_assert_str_eq(buf, "C");
}
END_TEST

START_TEST(test_keys_names_and_hints)
{
	struct tui_keys k;
	struct tui_act a;
	struct tui_key p = ctrl('a');
	const struct tui_help_line *h;
	char buf[256];
	size_t n, i;
	int m;

	for (m = 0; m < TUI_MODE_COUNT; m++)
		ck_assert_str_ne(tui_keys_mode_name((enum tui_mode)m), "?");
	for (m = 0; m < TUI_ACT_COUNT; m++)
		ck_assert_str_ne(tui_keys_action_name((enum tui_action)m), "?");
	ck_assert_str_eq(tui_keys_action_name(TUI_ACT_COUNT), "?");
	tui_keys_init(&k);
	feed(&k, ch('i'), &a);
	tui_keys_hints(&k, buf, sizeof buf);
	ck_assert_ptr_nonnull(strstr(buf, "C-b Esc"));
	ck_assert_int_eq(tui_keys_set_prefix(&k, &p), 0);
	n = tui_keys_hints(&k, buf, sizeof buf);
	ck_assert_ptr_nonnull(strstr(buf, "C-a Esc"));
	ck_assert_uint_eq(n, strlen(buf));
	n = tui_keys_hints(&k, buf, 10);
	ck_assert_uint_eq(n, 9);
	ck_assert_uint_eq(strlen(buf), 9);
	h = tui_keys_help(&n);
	ck_assert_uint_gt(n, 10);
	for (i = 0; i < n; i++)
		ck_assert_ptr_nonnull(h[i].what);
}
END_TEST

START_TEST(test_keys_feed_null_asserts)
{
	struct tui_act a;
	struct tui_key key = ch('j');

	tui_keys_feed(NULL, &key, &a);
}
END_TEST

Suite *
keys_suite(void)
{
	Suite *s = suite_create("keys");
	TCase *tc = tcase_create("Core");

	tcase_add_test(tc, test_keys_init);
	tcase_add_test(tc, test_keys_selection_never_types);
	tcase_add_test(tc, test_keys_no_send_outside_typing);
	tcase_add_test(tc, test_keys_typing_start_and_send);
	tcase_add_test(tc, test_keys_prefix_stops_typing);
	tcase_add_test(tc, test_keys_prefix_twice_sends_prefix);
	tcase_add_test(tc, test_keys_prefix_commands);
	tcase_add_test(tc, test_keys_scrollback);
	tcase_add_test(tc, test_keys_wheel_while_typing);
	tcase_add_test(tc, test_keys_confirm);
	tcase_add_test(tc, test_keys_resize_every_mode);
	tcase_add_test(tc, test_keys_custom_prefix);
	suite_add_tcase(s, tc);
	tc = tcase_create("Names");
	tcase_add_test(tc, test_keys_from_char);
	tcase_add_test(tc, test_keys_parse_and_name);
	tcase_add_test(tc, test_keys_names_and_hints);
	suite_add_tcase(s, tc);
	tc = tcase_create("Errors");
	tcase_add_test_raise_signal(tc, test_keys_feed_null_asserts, SIGABRT);
	suite_add_tcase(s, tc);
	return s;
}
