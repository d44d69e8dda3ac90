/*
 * test_line.c: the packed line codec (line.c), used by the scrollback and
 * the holder wire (SPEC 9.5): round trips, trimming, sizes, and refusal of
 * truncated or hostile bytes; plus the cell helpers and pty_strerror.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pty/pty.h"

Suite *line_suite(void);

static struct pty_cell
cell(uint32_t cp, uint32_t fg, uint32_t bg, uint16_t attrs)
{
	struct pty_cell c;

	memset(&c, 0, sizeof c);
	c.cp[0] = cp;
	c.fg = fg;
	c.bg = bg;
	c.attrs = attrs;
	c.width = 1;
	return c;
}

static void
assert_cells_eq(const struct pty_cell *a, const struct pty_cell *b, int n)
{
	int i, k;

	for (i = 0; i < n; i++) {
		for (k = 0; k < PTY_CELL_MAXCP; k++)
			ck_assert_msg(a[i].cp[k] == b[i].cp[k],
			    "cell %d cp[%d]: %x != %x", i, k, a[i].cp[k],
			    b[i].cp[k]);
		ck_assert_msg(a[i].fg == b[i].fg, "cell %d fg", i);
		ck_assert_msg(a[i].bg == b[i].bg, "cell %d bg", i);
		ck_assert_msg(a[i].attrs == b[i].attrs, "cell %d attrs", i);
		ck_assert_msg(a[i].width == b[i].width, "cell %d width %u/%u",
		    i, a[i].width, b[i].width);
	}
}

/* A line with every kind of cell. */
static int
sample(struct pty_cell *c)
{
	int n = 0, k;

	c[n++] = cell('h', PTY_COLOR_DEFAULT, PTY_COLOR_DEFAULT, 0);
	c[n++] = cell('i', PTY_COLOR_INDEXED(1), PTY_COLOR_DEFAULT,
	    PTY_ATTR_BOLD);
	c[n++] = cell(0, PTY_COLOR_DEFAULT, PTY_COLOR_DEFAULT, 0);
	c[n++] = cell(0x4e2d, PTY_COLOR_RGB(1, 2, 3), PTY_COLOR_INDEXED(200),
	    PTY_ATTR_ITALIC | (3u << PTY_ATTR_UNDERLINE_SHIFT));
	c[n] = c[n - 1];
	c[n - 1].width = 2;
	c[n].cp[0] = 0;
	c[n++].width = 0;
	c[n++] = cell(0xe9, PTY_COLOR_DEFAULT, PTY_COLOR_RGB(255, 255, 255),
	    PTY_ATTR_REVERSE | PTY_ATTR_STRIKE | PTY_ATTR_BLINK |
	    PTY_ATTR_CONCEAL);
	c[n] = cell('e', PTY_COLOR_DEFAULT, PTY_COLOR_DEFAULT, 0);
	for (k = 1; k < PTY_CELL_MAXCP; k++)
		c[n].cp[k] = 0x300 + (uint32_t)k;
	n++;
	c[n++] = cell(0x1f600, PTY_COLOR_DEFAULT, PTY_COLOR_DEFAULT, 0);
	c[n - 1].width = 2;
	c[n] = cell(0, PTY_COLOR_DEFAULT, PTY_COLOR_DEFAULT, 0);
	c[n++].width = 0;
	c[n++] = cell(' ', PTY_COLOR_DEFAULT, PTY_COLOR_DEFAULT, 0);
	c[n++] = cell('z', PTY_COLOR_DEFAULT, PTY_COLOR_DEFAULT, 0);
	return n;
}

START_TEST(test_line_roundtrip)
{
	struct pty_cell in[32], out[40];
	uint8_t buf[2048];
	size_t len, used = 0;
	int n = sample(in);

	len = pty_line_pack(in, n, buf, sizeof buf);
	ck_assert_uint_gt(len, 0);
	ck_assert_uint_le(len, pty_line_packed_max(n));
	/* Extra bytes after the line are not consumed. */
	memset(buf + len, 0xee, 16);
	ck_assert_int_eq(pty_line_unpack(buf, len + 16, out, 40, &used), n);
	ck_assert_uint_eq(used, len);
	assert_cells_eq(in, out, n);
	/* The rest up to maxcells is blank. */
	ck_assert_uint_eq(out[n].cp[0], 0);
	ck_assert_uint_eq(out[39].width, 1);
	ck_assert_uint_eq(out[39].fg, PTY_COLOR_DEFAULT);
	/* Fewer cells than the line: the count is still the line's. */
	ck_assert_int_eq(pty_line_unpack(buf, len, out, 3, &used), n);
	assert_cells_eq(in, out, 3);
	ck_assert_int_eq(pty_line_unpack(buf, len, NULL, 0, NULL), n);
}
END_TEST

START_TEST(test_line_trim)
{
	struct pty_cell c[10];
	uint8_t buf[512];
	size_t len;
	int i;

	for (i = 0; i < 10; i++)
		c[i] = cell(i < 3 ? 'a' : (i % 2 ? ' ' : 0), 0, 0, 0);
	len = pty_line_pack(c, 10, buf, sizeof buf);
	/* u16 ncells + one run header + 3 bytes. */
	ck_assert_uint_eq(len, 2 + 12 + 3);
	ck_assert_int_eq(pty_line_unpack(buf, len, c, 10, NULL), 3);
	/* All blank: just the count. */
	for (i = 0; i < 10; i++)
		c[i] = cell(' ', 0, 0, 0);
	ck_assert_uint_eq(pty_line_pack(c, 10, buf, sizeof buf), 2);
	ck_assert_int_eq(pty_line_unpack(buf, 2, c, 10, NULL), 0);
	/* A coloured blank is content. */
	c[7].bg = PTY_COLOR_INDEXED(4);
	len = pty_line_pack(c, 10, buf, sizeof buf);
	ck_assert_int_eq(pty_line_unpack(buf, len, c, 10, NULL), 8);
	ck_assert_uint_eq(c[7].bg, PTY_COLOR_INDEXED(4));
	/* So is underline on a space. */
	for (i = 0; i < 10; i++)
		c[i] = cell(' ', 0, 0, 0);
	c[9].attrs = 1u << PTY_ATTR_UNDERLINE_SHIFT;
	len = pty_line_pack(c, 10, buf, sizeof buf);
	ck_assert_int_eq(pty_line_unpack(buf, len, c, 10, NULL), 10);
	/* The right half of a trailing wide char stays. */
	for (i = 0; i < 10; i++)
		c[i] = cell(0, 0, 0, 0);
	c[8] = cell(0x4e2d, 0, 0, 0);
	c[8].width = 2;
	c[9].width = 0;
	len = pty_line_pack(c, 10, buf, sizeof buf);
	ck_assert_int_eq(pty_line_unpack(buf, len, c, 10, NULL), 10);
	ck_assert_uint_eq(c[8].width, 2);
	ck_assert_uint_eq(c[9].width, 0);
	/* 80 coloured blanks: one run, a byte each. */
	{
		struct pty_cell w[80];

		for (i = 0; i < 80; i++)
			w[i] = cell(0, 0, PTY_COLOR_RGB(9, 9, 9), 0);
		ck_assert_uint_eq(pty_line_pack(w, 80, buf, sizeof buf),
		    2 + 12 + 80);
	}
}
END_TEST

/* The worst case fits packed_max exactly; any smaller buffer gives 0. */
START_TEST(test_line_sizes)
{
	enum { N = 50 };
	struct pty_cell c[N];
	uint8_t *buf;
	size_t max = pty_line_packed_max(N), len, sz;
	int i, k;

	for (i = 0; i < N; i++) {
		c[i] = cell(0x10000 + (uint32_t)i, PTY_COLOR_RGB(i, 0, 0),
		    PTY_COLOR_INDEXED(i), 0);
		for (k = 1; k < PTY_CELL_MAXCP; k++)
			c[i].cp[k] = 0x10300 + (uint32_t)k;
	}
	buf = malloc(max);
	ck_assert_ptr_nonnull(buf);
	len = pty_line_pack(c, N, buf, max);
	ck_assert_uint_eq(len, max);
	for (sz = 0; sz < len; sz++)
		ck_assert_uint_eq(pty_line_pack(c, N, buf, sz), 0);
	ck_assert_uint_eq(pty_line_packed_max(0), 2);
	ck_assert_uint_eq(pty_line_packed_max(-5), 2);
	ck_assert_uint_eq(pty_line_packed_max(100000),
	    pty_line_packed_max(4096));
	/* Negative ncells packs an empty line. */
	ck_assert_uint_eq(pty_line_pack(c, -1, buf, max), 2);
	free(buf);
}
END_TEST

/* Every strict prefix of a valid line is refused. */
START_TEST(test_line_truncated)
{
	struct pty_cell in[32], out[32];
	uint8_t buf[2048];
	size_t len, i, used;
	int n = sample(in);

	len = pty_line_pack(in, n, buf, sizeof buf);
	for (i = 0; i < len; i++) {
		used = 99;
		ck_assert_int_eq(pty_line_unpack(buf, i, out, 32, &used),
		    PTY_EPROTO);
		ck_assert_uint_eq(used, 0);
		/* A refused line leaves blanks, not half a line. */
		ck_assert_uint_eq(out[0].cp[0], 0);
	}
}
END_TEST

static int
unpack_hex(const char *hex)
{
	uint8_t b[256];
	struct pty_cell c[8];
	size_t n = 0;
	unsigned v;

	while (*hex != '\0') {
		if (*hex == ' ') {
			hex++;
			continue;
		}
		ck_assert_int_eq(sscanf(hex, "%2x", &v), 1);
		b[n++] = (uint8_t)v;
		hex += 2;
	}
	return pty_line_unpack(b, n, c, 8, NULL);
}

/* Hand-made hostile lines. Run header: count fg bg attrs. */
START_TEST(test_line_garbage)
{
	/* Valid references first, so the refusals mean something. */
	ck_assert_int_eq(unpack_hex("0200 0200 00000000 00000000 0000 41 42"),
	    2);
	ck_assert_int_eq(unpack_hex("0200 0200 00000000 00000000 0000 "
	    "83e4b8ad 80"), 2);
	ck_assert_int_eq(unpack_hex("0100 0100 ff000001 56341202 ff00 41"), 1);
	ck_assert_int_eq(unpack_hex("0000"), 0);
	/* Too many cells. */
	ck_assert_int_eq(unpack_hex("0110 0100 00000000 00000000 0000 41"),
	    PTY_EPROTO);
	ck_assert_int_eq(unpack_hex("ffff"), PTY_EPROTO);
	/* Run of 0 cells, run longer than the line. */
	ck_assert_int_eq(unpack_hex("0100 0000 00000000 00000000 0000 41"),
	    PTY_EPROTO);
	ck_assert_int_eq(unpack_hex("0100 0200 00000000 00000000 0000 41 41"),
	    PTY_EPROTO);
	/* Bad colours and attributes. */
	ck_assert_int_eq(unpack_hex("0100 0100 01000000 00000000 0000 41"),
	    PTY_EPROTO);
	ck_assert_int_eq(unpack_hex("0100 0100 00000003 00000000 0000 41"),
	    PTY_EPROTO);
	ck_assert_int_eq(unpack_hex("0100 0100 00000000 00010001 0000 41"),
	    PTY_EPROTO);
	ck_assert_int_eq(unpack_hex("0100 0100 00000000 00000000 0002 41"),
	    PTY_EPROTO);
	/* A right half with nothing on its left. */
	ck_assert_int_eq(unpack_hex("0100 0100 00000000 00000000 0000 80"),
	    PTY_EPROTO);
	ck_assert_int_eq(unpack_hex("0200 0200 00000000 00000000 0000 00 80"),
	    PTY_EPROTO);
	ck_assert_int_eq(unpack_hex("0300 0300 00000000 00000000 0000 "
	    "41 80 80"), PTY_EPROTO);
	/* Unknown cell bytes, text longer than the buffer. */
	ck_assert_int_eq(unpack_hex("0100 0100 00000000 00000000 0000 99"),
	    PTY_EPROTO);
	ck_assert_int_eq(unpack_hex("0100 0100 00000000 00000000 0000 ff"),
	    PTY_EPROTO);
	ck_assert_int_eq(unpack_hex("0100 0100 00000000 00000000 0000 "
	    "84e4b8ad"), PTY_EPROTO);
	/* Bad UTF-8: overlong, surrogate, too big, NUL, stray byte. */
	ck_assert_int_eq(unpack_hex("0100 0100 00000000 00000000 0000 "
	    "82c0af"), PTY_EPROTO);
	ck_assert_int_eq(unpack_hex("0100 0100 00000000 00000000 0000 "
	    "83eda080"), PTY_EPROTO);
	ck_assert_int_eq(unpack_hex("0100 0100 00000000 00000000 0000 "
	    "84f4908080"), PTY_EPROTO);
	ck_assert_int_eq(unpack_hex("0100 0100 00000000 00000000 0000 8100"),
	    PTY_EPROTO);
	ck_assert_int_eq(unpack_hex("0100 0100 00000000 00000000 0000 "
	    "82e4b8"), PTY_EPROTO);
	ck_assert_int_eq(unpack_hex("0100 0100 00000000 00000000 0000 8180"),
	    PTY_EPROTO);
	/* Twelve codepoints in one cell (PTY_CELL_MAXCP is 11). */
	ck_assert_int_eq(unpack_hex("0100 0100 00000000 00000000 0000 "
	    "8c 61 61 61 61 61 61 61 61 61 61 61 61"), PTY_EPROTO);
	ck_assert_int_eq(unpack_hex("0100 0100 00000000 00000000 0000 "
	    "8b 61 61 61 61 61 61 61 61 61 61 61"), 1);
	/* Short buffers. */
	ck_assert_int_eq(unpack_hex(""), PTY_EPROTO);
	ck_assert_int_eq(unpack_hex("01"), PTY_EPROTO);
	ck_assert_int_eq(pty_line_unpack(NULL, 0, NULL, 0, NULL), PTY_EPROTO);
}
END_TEST

/* Random bytes never crash; what is accepted packs back the same. */
START_TEST(test_line_random)
{
	uint8_t b[96], p[4096];
	struct pty_cell c[24], d[24];
	unsigned seed = 12345;
	int i, j, n, m, ok = 0;

	for (i = 0; i < 200000; i++) {
		size_t len = (size_t)(i % 96), used;

		for (j = 0; j < (int)len; j++) {
			seed = seed * 1103515245u + 12345u;
			b[j] = (uint8_t)(seed >> 16);
		}
		/* Make plausible headers common. */
		if (len >= 2 && i % 3 == 0) {
			b[0] = (uint8_t)(i % 7);
			b[1] = 0;
		}
		if (len >= 14 && i % 3 == 0) {
			b[2] = (uint8_t)(1 + i % 5);
			b[3] = 0;
			memset(b + 4, 0, 10);
		}
		n = pty_line_unpack(b, len, c, 24, &used);
		if (n < 0) {
			ck_assert_int_eq(n, PTY_EPROTO);
			continue;
		}
		ok++;
		ck_assert_uint_le(used, len);
		ck_assert_int_le(n, 4096);
		if (n > 24)
			continue;
		len = pty_line_pack(c, n, p, sizeof p);
		ck_assert_uint_gt(len, 0);
		m = pty_line_unpack(p, len, d, 24, NULL);
		ck_assert_int_ge(m, 0);
		ck_assert_int_le(m, n);
		assert_cells_eq(c, d, m);
		/* Only trailing blanks went. */
		for (j = m; j < n; j++) {
			ck_assert(c[j].cp[0] == 0 || c[j].cp[0] == ' ');
			ck_assert_uint_ne(c[j].width, 0);
			ck_assert_uint_eq(c[j].fg | c[j].bg | c[j].attrs, 0);
		}
	}
	ck_assert_int_gt(ok, 100);
}
END_TEST

/* Pack normalises what it cannot express. */
START_TEST(test_line_normalise)
{
	struct pty_cell c[4], d[4];
	uint8_t buf[256];
	size_t len;

	c[0] = cell(0, 0, 0, 0);
	c[0].width = 0;		/* orphan right half */
	c[1] = cell(0xd800, 0x05000000, 0, 0xfe00); /* surrogate, bad fg */
	c[2] = cell('x', 0, 0, 0);
	c[2].width = 2;		/* wide without its right half */
	c[3] = cell('y', 0, 0, 0);
	len = pty_line_pack(c, 4, buf, sizeof buf);
	ck_assert_int_eq(pty_line_unpack(buf, len, d, 4, NULL), 4);
	ck_assert_uint_eq(d[0].cp[0], 0);
	ck_assert_uint_eq(d[0].width, 1);
	ck_assert_uint_eq(d[1].cp[0], 0xfffd);
	ck_assert_uint_eq(d[1].fg, PTY_COLOR_DEFAULT);
	ck_assert_uint_eq(d[1].attrs, 0);
	ck_assert_uint_eq(d[2].width, 1);
	ck_assert_uint_eq(d[3].cp[0], 'y');
}
END_TEST

START_TEST(test_line_cell_helpers)
{
	struct pty_cell c[3];
	char buf[4 * PTY_CELL_MAXCP + 1];

	memset(c, 0x5a, sizeof c);
	pty_cell_blank(c, 3);
	ck_assert_uint_eq(c[2].cp[0], 0);
	ck_assert_uint_eq(c[2].cp[5], 0);
	ck_assert_uint_eq(c[2].width, 1);
	ck_assert_uint_eq(c[2].fg, 0);
	ck_assert_uint_eq(pty_cell_utf8(&c[0], buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "");
	c[0].cp[0] = 'e';
	c[0].cp[1] = 0x301;
	c[0].cp[2] = 0x110000;
	ck_assert_uint_eq(pty_cell_utf8(&c[0], buf, sizeof buf), 6);
	ck_assert_str_eq(buf, "e\xcc\x81\xef\xbf\xbd");
	/* Truncation at a codepoint boundary. */
	ck_assert_uint_eq(pty_cell_utf8(&c[0], buf, 3), 1);
	ck_assert_str_eq(buf, "e");
	ck_assert_uint_eq(pty_cell_utf8(&c[0], buf, 1), 0);
	ck_assert_uint_eq(pty_cell_utf8(&c[0], buf, 0), 0);
	/* All six codepoints of 4 bytes fit the documented size. */
	{
		int k;

		for (k = 0; k < PTY_CELL_MAXCP; k++)
			c[1].cp[k] = 0x10000 + (uint32_t)k;
		ck_assert_uint_eq(pty_cell_utf8(&c[1], buf, sizeof buf),
		    4 * PTY_CELL_MAXCP);
	}
}
END_TEST

START_TEST(test_line_strerror)
{
	ck_assert_str_eq(pty_strerror(0), "success");
	ck_assert_ptr_nonnull(strstr(pty_strerror(PTY_EPROTO), "malformed"));
	ck_assert_ptr_nonnull(pty_strerror(PTY_ECLOSED));
	ck_assert_str_eq(pty_strerror(-ENOMEM), strerror(ENOMEM));
	ck_assert_str_eq(pty_strerror(PTY_EBASE - 100), "unknown error");
	ck_assert_str_eq(pty_strerror(7), "unknown error");
}
END_TEST

Suite *
line_suite(void)
{
	Suite *s = suite_create("line");
	TCase *tc = tcase_create("Core");

	tcase_add_test(tc, test_line_roundtrip);
	tcase_add_test(tc, test_line_trim);
	tcase_add_test(tc, test_line_sizes);
	tcase_add_test(tc, test_line_normalise);
	tcase_add_test(tc, test_line_cell_helpers);
	tcase_add_test(tc, test_line_strerror);
	suite_add_tcase(s, tc);
	tc = tcase_create("Errors");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_line_truncated);
	tcase_add_test(tc, test_line_garbage);
	tcase_add_test(tc, test_line_random);
	suite_add_tcase(s, tc);
	return s;
}
