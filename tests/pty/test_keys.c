/*
 * test_keys.c: the key, character and paste encoding (keys.c), alone,
 * against a table of what libvterm 0.1.4 itself sends for each (recorded
 * from it when keys.c replaced vterm_keyboard_*): cursor and function
 * keys in normal and application mode, Enter in newline mode, 8-bit
 * controls after S8C1T, CSI u for what a byte cannot say, pastes.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "pty/pty_int.h"

Suite *keys_suite(void);

/* Mode sets: none, DECCKM, LNM, S8C1T, DECCKM + S8C1T. */
static const struct pty__keys_modes modes[] = {
	{ 0 },
	{ .app_cursor = true },
	{ .newline = true },
	{ .c1_8bit = true },
	{ .app_cursor = true, .c1_8bit = true },
};

#define S 1	/* PTY_MOD_SHIFT */
#define A 2	/* PTY_MOD_ALT */
#define C 4	/* PTY_MOD_CTRL */

static const struct {
	int modes;
	int key;	/* enum pty_key, or -1: cp is a character */
	uint32_t cp;
	unsigned mods;
	const char *want;
	size_t len;	/* of want, which may hold a NUL */
} cases[] = {
#define K(m, k, mods, w) { m, k, 0, mods, w, sizeof w - 1 }
#define U(m, cp, mods, w) { m, -1, cp, mods, w, sizeof w - 1 }
	K(0, PTY_KEY_NONE, 0, ""),
	K(0, PTY_KEY_MAX, 0, ""),
	K(0, PTY_KEY_ENTER, 0, "\r"),
	K(0, PTY_KEY_ENTER, S, "\033[13;2u"),
	K(0, PTY_KEY_ENTER, A, "\033\r"),
	K(0, PTY_KEY_ENTER, C, "\033[13;5u"),
	K(2, PTY_KEY_ENTER, 0, "\r\n"),
	K(2, PTY_KEY_ENTER, C, "\r\n"),
	K(0, PTY_KEY_TAB, 0, "\t"),
	K(0, PTY_KEY_TAB, S, "\033[Z"),
	K(0, PTY_KEY_TAB, C, "\033[9;5u"),
	K(0, PTY_KEY_TAB, S | C, "\033[1;6Z"),
	K(0, PTY_KEY_BACKSPACE, 0, "\x7f"),
	K(0, PTY_KEY_ESCAPE, A, "\033\033"),
	K(0, PTY_KEY_UP, 0, "\033[A"),
	K(0, PTY_KEY_UP, C, "\033[1;5A"),
	K(1, PTY_KEY_UP, 0, "\033OA"),
	K(1, PTY_KEY_UP, C, "\033[1;5A"),
	K(3, PTY_KEY_UP, 0, "\x9b" "A"),
	K(4, PTY_KEY_UP, 0, "\x8f" "A"),
	K(4, PTY_KEY_UP, C, "\x9b" "1;5A"),
	K(0, PTY_KEY_HOME, A, "\033[1;3H"),
	K(0, PTY_KEY_F1, 0, "\033OP"),
	K(0, PTY_KEY_F1, S, "\033[1;2P"),
	K(0, PTY_KEY_F1 + 4, 0, "\033[15~"),
	K(0, PTY_KEY_F12, C, "\033[24;5~"),
	K(0, PTY_KEY_DEL, A, "\033[3;3~"),
	K(0, PTY_KEY_UP, 8, "\033[A"),	/* bits past Ctrl are ignored */
	U(0, 'c', C, "\x03"),
	U(0, 'i', C, "\033[105;5u"),
	U(3, 'i', C, "\x9b" "105;5u"),
	U(0, ' ', S, "\033[32;2u"),
	U(0, 'A', S, "A"),
	U(0, 'x', A, "\033x"),
	U(0, 0xe9, 0, "\xc3\xa9"),
	U(0, 0xe9, A, "\033\xe9"),
	U(0, 0x100, A, "\033\0"),	/* one byte, as libvterm's %c */
	U(0, 0xe9, C, "\033[233;5u"),
	U(0, 0x1f600, 0, "\xf0\x9f\x98\x80"),
	U(0, 0, 0, ""),
	U(0, 0xd800, 0, ""),
	U(0, 0x110000, 0, ""),
#undef K
#undef U
};

static void
hex(const char *p, size_t n, char *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", (unsigned char)p[i]);
	out[2 * n] = '\0';
}

/* Loop index _i: one row of the table. */
START_TEST(test_keys_table)
{
	char buf[PTY__KEYS_MAX], got[2 * PTY__KEYS_MAX + 1];
	char want[2 * PTY__KEYS_MAX + 1];
	size_t n;

	if (cases[_i].key >= 0)
		n = pty__keys_key(&modes[cases[_i].modes],
		    (enum pty_key)cases[_i].key, cases[_i].mods, buf);
	else
		n = pty__keys_unichar(&modes[cases[_i].modes], cases[_i].cp,
		    cases[_i].mods, buf);
	hex(buf, n, got);
	hex(cases[_i].want, cases[_i].len, want);
	ck_assert_msg(strcmp(got, want) == 0, "case %d: got %s, want %s", _i,
	    got, want);
}
END_TEST

struct acc {
	char buf[256];
	size_t len;
	int calls;
};

static void
acc_out(const char *p, size_t n, void *ud)
{
	struct acc *a = ud;

	ck_assert_uint_le(a->len + n, sizeof a->buf);
	memcpy(a->buf + a->len, p, n);
	a->len += n;
	a->calls++;
}

/* A paste: as is, or bracketed with its own end marks dropped. */
START_TEST(test_keys_paste)
{
	struct pty__keys_modes m = { .paste_marks = true };
	const char text[] = "x\033[201~rm -rf ~\n";
	struct acc a = { 0 };

	pty__keys_paste(&m, false, text, sizeof text - 1, acc_out, &a);
	ck_assert_mem_eq(a.buf, text, sizeof text - 1);
	ck_assert_uint_eq(a.len, sizeof text - 1);
	memset(&a, 0, sizeof a);
	pty__keys_paste(&m, true, text, sizeof text - 1, acc_out, &a);
	ck_assert_uint_eq(a.len, 22);
	ck_assert_mem_eq(a.buf, "\033[200~xrm -rf ~\n\033[201~", 22);
	/* After S8C1T the marks are 8-bit too. */
	m.c1_8bit = true;
	memset(&a, 0, sizeof a);
	pty__keys_paste(&m, true, "q", 1, acc_out, &a);
	ck_assert_uint_eq(a.len, 11);
	ck_assert_mem_eq(a.buf, "\x9b" "200~q\x9b" "201~", 11);
	/* libvterm's own copy of 2004 off: no marks, end marks still go. */
	m.paste_marks = false;
	memset(&a, 0, sizeof a);
	pty__keys_paste(&m, true, "a\033[201~b", 8, acc_out, &a);
	ck_assert_uint_eq(a.len, 2);
	ck_assert_mem_eq(a.buf, "ab", 2);
	/* Nothing pasted, nothing sent unbracketed. */
	memset(&a, 0, sizeof a);
	pty__keys_paste(&m, false, "", 0, acc_out, &a);
	ck_assert_int_eq(a.calls, 0);
}
END_TEST

Suite *
keys_suite(void)
{
	Suite *s = suite_create("keys");
	TCase *tc = tcase_create("Core");

	tcase_add_loop_test(tc, test_keys_table, 0,
	    (int)(sizeof cases / sizeof cases[0]));
	tcase_add_test(tc, test_keys_paste);
	suite_add_tcase(s, tc);
	return s;
}
