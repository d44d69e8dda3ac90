/*
 * test_theme.c: themes (SPEC 4.6): the shipped files load and cover every
 * element, malformed files name file and line and fall back to defaults,
 * NO_COLOR keeps things visible, colours degrade to the nearest.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/check_util.h"
#include "tui/console/console.h"

Suite *theme_suite(void);

static const char *const shipped[] = { "default", "light", "high-contrast",
	"monochrome" };

static char *tmp;

static void
setup_tmp(void)
{
	tmp = cu_tmpdir("theme");
}

static void
teardown_tmp(void)
{
	cu_rmrf(tmp);
	free(tmp);
}

/* Write text to a theme file in the temp dir; returns its path. */
static char *
write_theme(const char *name, const char *text)
{
	char *path;

	ck_assert_int_ge(asprintf(&path, "%s/%s", tmp, name), 0);
	ck_assert_int_eq(cu_write_file(path, text, strlen(text)), 0);
	return path;
}

static bool
same_styles(const struct tui_theme *a, const struct tui_theme *b)
{
	/* Field by field: struct tui_style has padding memcmp would read. */
	for (size_t i = 0; i < sizeof a->el / sizeof a->el[0]; i++) {
		if (a->el[i].fg != b->el[i].fg || a->el[i].bg != b->el[i].bg ||
		    a->el[i].attrs != b->el[i].attrs)
			return false;
	}
	return true;
}

START_TEST(test_theme_shipped_files_load)
{
	struct tui_theme th, def;
	char rel[64], *path, *text, key[64], err[512];
	int el;

	tui_theme_default(&def);
	snprintf(rel, sizeof rel, "themes/%s.theme", shipped[_i]);
	path = cu_src_path(rel);
	err[0] = 'x';
	ck_assert_int_eq(tui_theme_load(path, &th, err, sizeof err), 0);
	ck_assert_str_eq(err, "");
	ck_assert_str_eq(th.name, shipped[_i]);
	/* each file sets every element explicitly */
	text = cu_read_file(path, NULL);
	ck_assert_ptr_nonnull(text);
	for (el = 0; el < TUI_EL_COUNT; el++) {
		snprintf(key, sizeof key, "\n%s = ",
		    tui_theme_el_name((enum tui_el)el));
		ck_assert_msg(strstr(text, key) != NULL, "%s lacks %s",
		    shipped[_i], key + 1);
	}
	/* the default file is the built-in theme */
	if (_i == 0)
		ck_assert(same_styles(&th, &def));
	else
		ck_assert(!same_styles(&th, &def));
	/* monochrome has no colour at all */
	if (strcmp(shipped[_i], "monochrome") == 0) {
		for (el = 0; el < TUI_EL_COUNT; el++) {
			ck_assert_uint_eq(th.el[el].fg, PTY_COLOR_DEFAULT);
			ck_assert_uint_eq(th.el[el].bg, PTY_COLOR_DEFAULT);
		}
		ck_assert_uint_ne(th.el[TUI_EL_LIST_SELECTED].attrs, 0);
	}
	free(text);
	free(path);
}
END_TEST

START_TEST(test_theme_partial_file)
{
	struct tui_theme th, def;
	char err[256];
	char *path = write_theme("p.theme", "# only one key\n\n"
	    "list.selected = #ff8000 on colour17 bold underline ; note\n");

	tui_theme_default(&def);
	ck_assert_int_eq(tui_theme_load(path, &th, err, sizeof err), 0);
	ck_assert_uint_eq(th.el[TUI_EL_LIST_SELECTED].fg,
	    PTY_COLOR_RGB(0xff, 0x80, 0x00));
	ck_assert_uint_eq(th.el[TUI_EL_LIST_SELECTED].bg,
	    PTY_COLOR_INDEXED(17));
	ck_assert_uint_eq(th.el[TUI_EL_LIST_SELECTED].attrs,
	    PTY_ATTR_BOLD | (1u << PTY_ATTR_UNDERLINE_SHIFT));
	/* the rest kept the defaults */
	ck_assert_int_eq(memcmp(&th.el[TUI_EL_STATUS], &def.el[TUI_EL_STATUS],
	    sizeof th.el[0]), 0);
	free(path);
}
END_TEST

START_TEST(test_theme_malformed_names_line)
{
	static const struct {
		const char *text, *line, *what;
	} cases[] = {
		{ "list = red\nstatus = blue\nbadge.done = purple\n", ":3: ",
		  "bad style 'purple'" },
		{ "list = red\nthis line has no equals sign\n", ":2: ",
		  "syntax error" },
		{ "# c\nlist.selectd = red\n", ":2: ",
		  "unknown key 'list.selectd'" },
		{ "[colours]\nlist = red\n", ":2: ", "sections are not used" },
		{ "list = red on\n", ":1: ", "bad style" },
		{ "list = \x1b]52;c;eA==\x07\n", ":1: ", "\\x1b]52" },
	};
	struct tui_theme th, def;
	char err[512], want[512], *path;

	tui_theme_default(&def);
	path = write_theme("bad.theme", cases[_i].text);
	ck_assert_int_eq(tui_theme_load(path, &th, err, sizeof err), -EINVAL);
	snprintf(want, sizeof want, "%s%s", path, cases[_i].line);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "got '%s'", err);
	ck_assert_msg(strstr(err, cases[_i].what) != NULL, "got '%s'", err);
	ck_assert_ptr_null(strchr(err, '\x1b'));
	/* never half a theme: the valid first lines did not stick */
	ck_assert(same_styles(&th, &def));
	free(path);
}
END_TEST

START_TEST(test_theme_missing_file)
{
	struct tui_theme th, def;
	char err[512], *path;

	tui_theme_default(&def);
	ck_assert_int_ge(asprintf(&path, "%s/nope.theme", tmp), 0);
	memset(&th, 0xa5, sizeof th);
	ck_assert_int_eq(tui_theme_load(path, &th, err, sizeof err), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, path));
	/* whatever was there before, the result is the defaults */
	ck_assert(same_styles(&th, &def));
	ck_assert(!th.no_color);
	ck_assert_str_eq(th.name, "default");
	ck_assert_int_eq(tui_theme_load(NULL, &th, NULL, 0), -EINVAL);
	free(path);
}
END_TEST

START_TEST(test_theme_parse_color)
{
	static const struct {
		const char *in;
		uint32_t want;
	} ok[] = {
		{ "default", PTY_COLOR_DEFAULT },
		{ "red", PTY_COLOR_INDEXED(1) },
		{ "WHITE", PTY_COLOR_INDEXED(7) },
		{ "bright-red", PTY_COLOR_INDEXED(9) },
		{ "brightblue", PTY_COLOR_INDEXED(12) },
		{ "bright_white", PTY_COLOR_INDEXED(15) },
		{ "grey", PTY_COLOR_INDEXED(8) },
		{ "colour0", PTY_COLOR_INDEXED(0) },
		{ "color255", PTY_COLOR_INDEXED(255) },
		{ "#00ff7F", PTY_COLOR_RGB(0, 255, 127) },
	};
	static const char *const bad[] = { "", "purple", "colour256",
		"colour", "colour-1", "colour1x", "colour0001", "#ff80",
		"#gg0000", "#ff00000", "bright-", "on" };
	uint32_t c;
	size_t i;

	for (i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		ck_assert_msg(tui_theme_parse_color(ok[i].in, &c) == 0, "%s",
		    ok[i].in);
		ck_assert_uint_eq(c, ok[i].want);
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(tui_theme_parse_color(bad[i], &c) == -EINVAL,
		    "'%s'", bad[i]);
}
END_TEST

START_TEST(test_theme_parse_style)
{
	static const char *const bad[] = { "", "red blue", "on", "red on",
		"on red on blue", "blinky", "bold on", "on bold" };
	struct tui_style st;
	size_t i;

	ck_assert_int_eq(tui_theme_parse_style("black on cyan bold", &st), 0);
	ck_assert_uint_eq(st.fg, PTY_COLOR_INDEXED(0));
	ck_assert_uint_eq(st.bg, PTY_COLOR_INDEXED(6));
	ck_assert_uint_eq(st.attrs, PTY_ATTR_BOLD);
	ck_assert_int_eq(tui_theme_parse_style("on red", &st), 0);
	ck_assert_uint_eq(st.fg, PTY_COLOR_DEFAULT);
	ck_assert_uint_eq(st.bg, PTY_COLOR_INDEXED(1));
	ck_assert_int_eq(tui_theme_parse_style("bold, red, reverse", &st), 0);
	ck_assert_uint_eq(st.fg, PTY_COLOR_INDEXED(1));
	ck_assert_uint_eq(st.attrs, PTY_ATTR_BOLD | PTY_ATTR_REVERSE);
	ck_assert_int_eq(tui_theme_parse_style("none", &st), 0);
	ck_assert_uint_eq(st.attrs, 0);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(tui_theme_parse_style(bad[i], &st) == -EINVAL,
		    "'%s'", bad[i]);
}
END_TEST

START_TEST(test_theme_no_color)
{
	struct tui_theme th;
	struct tui_style st, plain;
	int el;

	tui_theme_default(&th);
	tui_theme_style(&th, TUI_EL_LIST_SELECTED, &plain);
	ck_assert_uint_ne(plain.bg, PTY_COLOR_DEFAULT);
	tui_theme_set_no_color(&th, true);
	for (el = 0; el < TUI_EL_COUNT; el++) {
		tui_theme_style(&th, (enum tui_el)el, &st);
		ck_assert_uint_eq(st.fg, PTY_COLOR_DEFAULT);
		ck_assert_uint_eq(st.bg, PTY_COLOR_DEFAULT);
		/* attributes are kept */
		ck_assert_uint_eq(st.attrs & th.el[el].attrs, th.el[el].attrs);
	}
	/* the selection and the status bar stay visible */
	tui_theme_style(&th, TUI_EL_LIST_SELECTED, &st);
	ck_assert_uint_ne(st.attrs & PTY_ATTR_REVERSE, 0);
	tui_theme_style(&th, TUI_EL_STATUS, &st);
	ck_assert_uint_ne(st.attrs & PTY_ATTR_REVERSE, 0);
	tui_theme_style(&th, TUI_EL_BADGE + TUI_ACTIVITY_FAILED, &st);
	ck_assert_uint_ne(st.attrs & PTY_ATTR_BOLD, 0);
	/* and the list itself stays plain */
	tui_theme_style(&th, TUI_EL_LIST, &st);
	ck_assert_uint_eq(st.attrs, 0);
}
END_TEST

START_TEST(test_theme_degrade_known)
{
	const uint32_t red = PTY_COLOR_RGB(255, 0, 0);

	ck_assert_uint_eq(tui_theme_degrade(red, TUI_COLORS_TRUE), red);
	ck_assert_uint_eq(tui_theme_degrade(red, TUI_COLORS_256),
	    PTY_COLOR_INDEXED(196));
	ck_assert_uint_eq(tui_theme_degrade(red, TUI_COLORS_16),
	    PTY_COLOR_INDEXED(9));
	ck_assert_uint_eq(tui_theme_degrade(red, TUI_COLORS_8),
	    PTY_COLOR_INDEXED(1));
	ck_assert_uint_eq(tui_theme_degrade(red, TUI_COLORS_NONE),
	    PTY_COLOR_DEFAULT);
	ck_assert_uint_eq(tui_theme_degrade(PTY_COLOR_RGB(128, 128, 128),
	    TUI_COLORS_256), PTY_COLOR_INDEXED(244));
	ck_assert_uint_eq(tui_theme_degrade(PTY_COLOR_RGB(0, 95, 135),
	    TUI_COLORS_256), PTY_COLOR_INDEXED(24));
	ck_assert_uint_eq(tui_theme_degrade(PTY_COLOR_INDEXED(196),
	    TUI_COLORS_16), PTY_COLOR_INDEXED(9));
	ck_assert_uint_eq(tui_theme_degrade(PTY_COLOR_INDEXED(9),
	    TUI_COLORS_16), PTY_COLOR_INDEXED(9));
	ck_assert_uint_eq(tui_theme_degrade(PTY_COLOR_INDEXED(9),
	    TUI_COLORS_8), PTY_COLOR_INDEXED(1));
	/* dark grey on 8 colours becomes white, not invisible black */
	ck_assert_uint_eq(tui_theme_degrade(PTY_COLOR_INDEXED(8),
	    TUI_COLORS_8), PTY_COLOR_INDEXED(7));
	ck_assert_uint_eq(tui_theme_degrade(PTY_COLOR_INDEXED(232),
	    TUI_COLORS_8), PTY_COLOR_INDEXED(0));
	ck_assert_uint_eq(tui_theme_degrade(PTY_COLOR_DEFAULT,
	    TUI_COLORS_8), PTY_COLOR_DEFAULT);
	ck_assert_uint_eq(tui_theme_degrade(PTY_COLOR_DEFAULT,
	    TUI_COLORS_TRUE), PTY_COLOR_DEFAULT);
}
END_TEST

static unsigned
d2(const uint8_t a[3], const uint8_t b[3])
{
	int dr = a[0] - b[0], dg = a[1] - b[1], db = a[2] - b[2];

	return (unsigned)(dr * dr + dg * dg + db * db);
}

START_TEST(test_theme_degrade_nearest)
{
	/* over a grid of RGB values, the 256 pick is the nearest of 16..255 */
	uint8_t rgb[3], pick[3], other[3];
	unsigned r, g, b, i, best, got;
	uint32_t c;

	for (r = 0; r < 256; r += 15) {
		for (g = 0; g < 256; g += 15) {
			for (b = 0; b < 256; b += 15) {
				rgb[0] = (uint8_t)r;
				rgb[1] = (uint8_t)g;
				rgb[2] = (uint8_t)b;
				c = tui_theme_degrade(PTY_COLOR_RGB(r, g, b),
				    TUI_COLORS_256);
				ck_assert_uint_eq(PTY_COLOR_KIND(c),
				    PTY_COLOR_KIND_INDEXED);
				got = c & 0xff;
				ck_assert_uint_ge(got, 16);
				tui_theme_index_rgb(got, pick);
				best = ~0u;
				for (i = 16; i < 256; i++) {
					tui_theme_index_rgb(i, other);
					if (d2(rgb, other) < best)
						best = d2(rgb, other);
				}
				if (d2(rgb, pick) != best)
					ck_abort_msg("%u,%u,%u -> %u (d %u, "
					    "best %u)", r, g, b, got,
					    d2(rgb, pick), best);
			}
		}
	}
	/* every index lands inside the smaller palettes */
	for (i = 0; i < 256; i++) {
		c = tui_theme_degrade(PTY_COLOR_INDEXED(i), TUI_COLORS_16);
		ck_assert_uint_lt(c & 0xff, 16);
		c = tui_theme_degrade(PTY_COLOR_INDEXED(i), TUI_COLORS_8);
		ck_assert_uint_lt(c & 0xff, 8);
	}
}
END_TEST

START_TEST(test_theme_colors_detect)
{
	ck_assert_int_eq(tui_theme_colors_detect(256, "truecolor", "1"),
	    TUI_COLORS_NONE);
	ck_assert_int_eq(tui_theme_colors_detect(256, NULL, ""),
	    TUI_COLORS_256);
	ck_assert_int_eq(tui_theme_colors_detect(256, "truecolor", NULL),
	    TUI_COLORS_TRUE);
	ck_assert_int_eq(tui_theme_colors_detect(8, "24bit", NULL),
	    TUI_COLORS_TRUE);
	ck_assert_int_eq(tui_theme_colors_detect(16, NULL, NULL),
	    TUI_COLORS_16);
	ck_assert_int_eq(tui_theme_colors_detect(8, NULL, NULL),
	    TUI_COLORS_8);
	ck_assert_int_eq(tui_theme_colors_detect(0, "truecolor", NULL),
	    TUI_COLORS_NONE);
	ck_assert_int_eq(tui_theme_colors_detect(-1, NULL, NULL),
	    TUI_COLORS_NONE);
	ck_assert_int_eq(tui_theme_colors_detect(0x1000000, NULL, NULL),
	    TUI_COLORS_TRUE);
}
END_TEST

START_TEST(test_theme_names)
{
	char seen[128] = { 0 };
	int el, a;
	char l;

	for (el = 0; el < TUI_EL_COUNT; el++) {
		ck_assert_str_ne(tui_theme_el_name((enum tui_el)el), "?");
		ck_assert_int_eq(tui_theme_el_from_name(
		    tui_theme_el_name((enum tui_el)el)), el);
	}
	ck_assert_int_eq(tui_theme_el_from_name("nope"), -1);
	for (a = 0; a < TUI_ACTIVITY_COUNT; a++) {
		ck_assert_int_eq(tui_activity_from_name(
		    tui_activity_name((enum tui_activity)a)), a);
		l = tui_activity_letter((enum tui_activity)a);
		ck_assert_int_eq(seen[(unsigned char)l], 0);
		seen[(unsigned char)l] = 1;
	}
	ck_assert_int_eq(tui_activity_letter(TUI_ACTIVITY_WORKING), 'W');
	ck_assert_int_eq(tui_activity_letter(TUI_ACTIVITY_LOST), 'L');
	ck_assert_int_eq(tui_activity_from_name("bogus"),
	    TUI_ACTIVITY_UNKNOWN);
	ck_assert_int_eq(tui_activity_from_name(NULL), TUI_ACTIVITY_UNKNOWN);
}
END_TEST

Suite *
theme_suite(void)
{
	Suite *s = suite_create("theme");
	TCase *tc = tcase_create("Files");

	tcase_add_checked_fixture(tc, setup_tmp, teardown_tmp);
	tcase_add_loop_test(tc, test_theme_shipped_files_load, 0,
	    (int)(sizeof shipped / sizeof shipped[0]));
	tcase_add_test(tc, test_theme_partial_file);
	tcase_add_loop_test(tc, test_theme_malformed_names_line, 0, 6);
	tcase_add_test(tc, test_theme_missing_file);
	suite_add_tcase(s, tc);
	tc = tcase_create("Core");
	tcase_add_test(tc, test_theme_parse_color);
	tcase_add_test(tc, test_theme_parse_style);
	tcase_add_test(tc, test_theme_no_color);
	tcase_add_test(tc, test_theme_degrade_known);
	tcase_add_test(tc, test_theme_degrade_nearest);
	tcase_add_test(tc, test_theme_colors_detect);
	tcase_add_test(tc, test_theme_names);
	suite_add_tcase(s, tc);
	return s;
}
