/*
 * test_escape.c: untrusted text is printed with controls, bidi overrides
 * and invalid UTF-8 escaped, bounded and never split (SPEC 4.7).
 */
#include <check.h>
#include <locale.h>
#include <string.h>

#include "tui/console/console.h"

Suite *escape_suite(void);

static const char *
esc(const char *in, size_t len, char *out, size_t outsz)
{
	tui_escape(in, len, out, outsz);
	return out;
}

#define ESC(lit, buf) esc((lit), sizeof(lit) - 1, (buf), sizeof(buf))

START_TEST(test_escape_plain_passes)
{
	char out[128];
	size_t n;

	n = tui_escape("build-fix 01J", 13, out, sizeof out);
	ck_assert_uint_eq(n, 13);
	ck_assert_str_eq(out, "build-fix 01J");
	ck_assert_str_eq(ESC("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac", out),
	    "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac");
	/* a backslash is kept unless asked */
	ck_assert_str_eq(ESC("a\\b", out), "a\\b");
	tui_escape_ex("a\\b", 3, out, sizeof out, TUI_ESC_BACKSLASH);
	ck_assert_str_eq(out, "a\\\\b");
}
END_TEST

START_TEST(test_escape_csi_and_osc)
{
	char out[256];

	/* clear screen, set title, OSC 52 clipboard, 8-bit CSI */
	ck_assert_str_eq(ESC("\x1b[2J\x1b]0;pwned\x07", out),
	    "\\x1b[2J\\x1b]0;pwned\\x07");
	ck_assert_str_eq(ESC("\x1b]52;c;Y3VybCBldmlsfHNo\x1b\\", out),
	    "\\x1b]52;c;Y3VybCBldmlsfHNo\\x1b\\");
	ck_assert_str_eq(ESC("a\xc2\x9b" "31mb", out), "a\\u009b31mb");
	ck_assert_str_eq(ESC("x\x7fy\x00z", out), "x\\x7fy\\x00z");
	ck_assert_str_eq(ESC("l1\nl2\tt\rr", out), "l1\\nl2\\tt\\rr");
	tui_escape_ex("l1\nl2\tt\x1b", 8, out, sizeof out,
	    TUI_ESC_KEEP_NL | TUI_ESC_KEEP_TAB);
	ck_assert_str_eq(out, "l1\nl2\tt\\x1b");
}
END_TEST

START_TEST(test_escape_bidi)
{
	char out[256];

	/* Trojan Source: RLO/LRI/PDI and marks */
	ck_assert_str_eq(ESC("ab\xe2\x80\xaeQ\xe2\x80\xac", out),
	    "ab\\u202eQ\\u202c");
	ck_assert_str_eq(ESC("\xe2\x81\xa6x\xe2\x81\xa9", out),
	    "\\u2066x\\u2069");
	ck_assert_str_eq(ESC("\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c", out),
	    "\\u200e\\u200f\\u061c");
	ck_assert_str_eq(ESC("a\xe2\x80\xa8" "b", out), "a\\u2028b");
	/* zero-width joiner is not a bidi control */
	ck_assert_str_eq(ESC("\xe2\x80\x8d", out), "\xe2\x80\x8d");
}
END_TEST

START_TEST(test_escape_invalid_utf8)
{
	char out[256];

	ck_assert_str_eq(ESC("a\xff" "b", out), "a\\xffb");
	/* overlong '/' and overlong NUL */
	ck_assert_str_eq(ESC("\xc0\xaf", out), "\\xc0\\xaf");
	ck_assert_str_eq(ESC("\xc0\x80", out), "\\xc0\\x80");
	/* UTF-16 surrogate encoded in UTF-8 */
	ck_assert_str_eq(ESC("\xed\xa0\x80", out), "\\xed\\xa0\\x80");
	/* above U+10FFFF */
	ck_assert_str_eq(ESC("\xf4\x90\x80\x80", out),
	    "\\xf4\\x90\\x80\\x80");
	/* truncated sequence at the end, and one cut by ASCII */
	ck_assert_str_eq(ESC("ok\xe6\x97", out), "ok\\xe6\\x97");
	ck_assert_str_eq(ESC("\xe6" "A", out), "\\xe6A");
	/* a lone continuation byte: 8-bit CSI of a non-UTF-8 terminal */
	ck_assert_str_eq(ESC("\x9b" "2J", out), "\\x9b2J");
}
END_TEST

START_TEST(test_escape_truncation_bounds)
{
	char out[8];
	size_t n;

	memset(out, 'Z', sizeof out);
	n = tui_escape("abcdefghij", 10, out, sizeof out);
	ck_assert_uint_eq(n, 7);
	ck_assert_str_eq(out, "abcdefg");

	/* an escape never gets split: "ab" + "\x1b" (4) fits 7, next not */
	n = tui_escape("ab\x1b\x1b", 4, out, sizeof out);
	ck_assert_uint_eq(n, 6);
	ck_assert_str_eq(out, "ab\\x1b");

	/* a character never gets split: 3-byte chars into 7 bytes -> 2 */
	n = tui_escape("\xe6\x97\xa5\xe6\x9c\xac\xe6\x97\xa5", 9, out,
	    sizeof out);
	ck_assert_uint_eq(n, 6);
	ck_assert_str_eq(out, "\xe6\x97\xa5\xe6\x9c\xac");

	/* outsz 1 gives the empty string, outsz 0 writes nothing */
	out[0] = 'Z';
	ck_assert_uint_eq(tui_escape("abc", 3, out, 1), 0);
	ck_assert_str_eq(out, "");
	out[0] = 'Z';
	ck_assert_uint_eq(tui_escape("abc", 3, out, 0), 0);
	ck_assert_int_eq(out[0], 'Z');
}
END_TEST

START_TEST(test_escape_every_boundary)
{
	/* for each buffer size the output is a prefix of the full output */
	const char in[] = "n\xc3\xa9\x1b]52;\xe2\x80\xae\xff"
	    "end\xf0\x9f\x90\x8d";
	char full[128], out[128];
	size_t full_n, sz, n;

	full_n = tui_escape(in, sizeof in - 1, full, sizeof full);
	ck_assert_uint_eq(full_n, tui_escape_size(in, sizeof in - 1, 0));
	for (sz = 1; sz <= full_n + 1; sz++) {
		n = tui_escape(in, sizeof in - 1, out, sz);
		ck_assert_uint_lt(n, sz);
		ck_assert_uint_eq(strlen(out), n);
		ck_assert_int_eq(memcmp(out, full, n), 0);
		/* the prefix is itself valid, printable text */
		ck_assert_uint_eq(tui_escape_size(out, n, 0), n);
	}
	ck_assert_uint_eq(n, full_n);
}
END_TEST

START_TEST(test_escape_size_and_null)
{
	char out[4];

	ck_assert_uint_eq(tui_escape_size("\x1b", 1, 0), 4);
	ck_assert_uint_eq(tui_escape_size("\xe2\x80\xae", 3, 0), 6);
	ck_assert_uint_eq(tui_escape_size("", 0, 0), 0);
	ck_assert_uint_eq(tui_escape(NULL, 0, out, sizeof out), 0);
	ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(test_escape_utf8_roundtrip)
{
	static const uint32_t cps[] = { 0x24, 0x7f, 0x80, 0x7ff, 0x800,
		0xffff, 0x10000, 0x1f40d, 0x10ffff };
	char buf[4];
	uint32_t cp;
	size_t i, n;

	for (i = 0; i < sizeof cps / sizeof cps[0]; i++) {
		n = tui_escape_utf8_encode(cps[i], buf);
		ck_assert_int_eq(tui_escape_utf8_decode(buf, n, &cp), (int)n);
		ck_assert_uint_eq(cp, cps[i]);
		/* one byte short is invalid */
		if (n > 1)
			ck_assert_int_eq(tui_escape_utf8_decode(buf, n - 1,
			    &cp), -1);
	}
}
END_TEST

START_TEST(test_escape_widths)
{
	ck_assert_int_eq(tui_escape_cp_width('a'), 1);
	ck_assert_int_eq(tui_escape_cp_width(0x65e5), 2);	/* CJK */
	ck_assert_int_eq(tui_escape_cp_width(0x0301), 0);	/* combining */
	ck_assert_int_eq(tui_escape_cp_width(0x1b), 0);
	ck_assert_uint_eq(tui_escape_width("a\xe6\x97\xa5" "e\xcc\x81", 7),
	    4);
}
END_TEST

static void
setup_locale(void)
{
	ck_assert_ptr_nonnull(setlocale(LC_CTYPE, "C.UTF-8"));
}

Suite *
escape_suite(void)
{
	Suite *s = suite_create("escape");
	TCase *tc = tcase_create("Core");

	tcase_add_checked_fixture(tc, setup_locale, NULL);
	tcase_add_test(tc, test_escape_plain_passes);
	tcase_add_test(tc, test_escape_csi_and_osc);
	tcase_add_test(tc, test_escape_bidi);
	tcase_add_test(tc, test_escape_invalid_utf8);
	tcase_add_test(tc, test_escape_utf8_roundtrip);
	tcase_add_test(tc, test_escape_widths);
	suite_add_tcase(s, tc);
	tc = tcase_create("Limits");
	tcase_add_test(tc, test_escape_truncation_bounds);
	tcase_add_test(tc, test_escape_every_boundary);
	tcase_add_test(tc, test_escape_size_and_null);
	suite_add_tcase(s, tc);
	return s;
}
