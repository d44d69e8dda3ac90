/*
 * test_screen.c: the screen model (SPEC 4.1, 4.5, 5.3; STYLE G). Golden
 * transcripts tests/fixtures/screens/NN-name.in are fed whole and then one
 * byte at a time, and both dumps must equal NN-name.out; then the limits
 * (bounded title, OSC, scrollback), key encoding and the API edges.
 *
 * .in format: lines starting with '#' are comments; lines starting with
 * '@' are directives (@screen ROWS COLS SB, first; @resize ROWS COLS;
 * @key NAME [MODS]; @unichar HEX [MODS]; @paste TEXT; @clear clears the
 * dirty range); any other line is bytes to feed, with \e \a \r \n \t \b
 * \\ and \xHH escapes (the file's own newlines are not fed).
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pty/pty.h"
#include "support/check_util.h"

Suite *screen_suite(void);

/* ------------------------------------------------------------------ */
/* A growable text buffer and a recorder for callbacks                  */

struct sbuf {
	char *p;
	size_t len, cap;
};

static void
sb_put(struct sbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = realloc(b->p, b->cap);
		ck_assert_ptr_nonnull(b->p);
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void
sb_printf(struct sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
sb_printf(struct sbuf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	ck_assert_int_ge(n, 0);
	sb_put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* Quoted, with control bytes escaped. */
static void
sb_quote(struct sbuf *b, const char *s, size_t n)
{
	size_t i;

	sb_put(b, "\"", 1);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == 0x1b)
			sb_put(b, "\\e", 2);
		else if (c == '\a')
			sb_put(b, "\\a", 2);
		else if (c == '"' || c == '\\') {
			sb_put(b, "\\", 1);
			sb_put(b, s + i, 1);
		} else if (c < 0x20 || c == 0x7f)
			sb_printf(b, "\\x%02x", c);
		else
			sb_put(b, s + i, 1);
	}
	sb_put(b, "\"", 1);
}

struct rec {
	struct sbuf out;	/* output callback bytes */
	struct sbuf ev;		/* one line per event */
};

static void
rec_output(const char *buf, size_t len, void *ud)
{
	struct rec *r = ud;

	sb_put(&r->out, buf, len);
}

static void
rec_event(enum pty_screen_event_kind k, const char *text, size_t len,
    void *ud)
{
	struct rec *r = ud;

	switch (k) {
	case PTY_SEV_BELL:
		sb_printf(&r->ev, "event bell\n");
		return;
	case PTY_SEV_TITLE:
		sb_printf(&r->ev, "event title ");
		break;
	case PTY_SEV_OSC:
		sb_printf(&r->ev, "event osc ");
		break;
	}
	sb_quote(&r->ev, text, len);
	sb_put(&r->ev, "\n", 1);
}

static void
rec_free(struct rec *r)
{
	free(r->out.p);
	free(r->ev.p);
	memset(r, 0, sizeof *r);
}

static struct pty_screen *
screen(int rows, int cols, size_t sb, struct rec *r)
{
	struct pty_screen *s = NULL;

	ck_assert_int_eq(pty_screen_new(&s, rows, cols, sb), 0);
	ck_assert_ptr_nonnull(s);
	if (r != NULL) {
		pty_screen_set_output(s, rec_output, r);
		pty_screen_set_event(s, rec_event, r);
	}
	return s;
}

static void
feed(struct pty_screen *s, const char *str)
{
	pty_screen_feed(s, str, strlen(str));
}

/* ------------------------------------------------------------------ */
/* Dumping a screen as canonical text                                   */

static void
dump_color(struct sbuf *b, const char *name, uint32_t c)
{
	switch (PTY_COLOR_KIND(c)) {
	case PTY_COLOR_KIND_DEFAULT:
		return;
	case PTY_COLOR_KIND_INDEXED:
		sb_printf(b, " %s=%u", name, c & 0xffu);
		return;
	default:
		sb_printf(b, " %s=#%06x", name, c & 0xffffffu);
		return;
	}
}

static void
dump_pen(struct sbuf *b, const struct pty_cell *c)
{
	static const char *names[] = { "bold", NULL, NULL, "italic", "blink",
		"reverse", "strike", "conceal", "faint" };
	int i;

	dump_color(b, "fg", c->fg);
	dump_color(b, "bg", c->bg);
	for (i = 0; i < 9; i++)
		if (names[i] != NULL && (c->attrs & (1u << i)))
			sb_printf(b, " %s", names[i]);
	if (c->attrs & PTY_ATTR_UNDERLINE)
		sb_printf(b, " ul=%u", (c->attrs & PTY_ATTR_UNDERLINE) >>
		    PTY_ATTR_UNDERLINE_SHIFT);
}

static bool
pen_default(const struct pty_cell *c)
{
	return c->fg == PTY_COLOR_DEFAULT && c->bg == PTY_COLOR_DEFAULT &&
	    c->attrs == 0;
}

static bool
pen_eq(const struct pty_cell *a, const struct pty_cell *b)
{
	return a->fg == b->fg && a->bg == b->bg && a->attrs == b->attrs;
}

/* Text, pens, wide and combining cells of one line of cells. */
static void
dump_cells(struct sbuf *b, const char *tag, int row, const struct pty_cell *c,
    int n)
{
	int i, j, k, end = n;
	char u[4 * PTY_CELL_MAXCP + 1];
	struct sbuf t = { 0 };

	while (end > 0 && c[end - 1].width != 0 &&
	    (c[end - 1].cp[0] == 0 || c[end - 1].cp[0] == ' '))
		end--;
	for (i = 0; i < end; i++) {
		if (c[i].width == 0)
			continue;
		if (c[i].cp[0] == 0)
			sb_put(&t, " ", 1);
		else
			sb_put(&t, u, pty_cell_utf8(&c[i], u, sizeof u));
	}
	sb_printf(b, "%s %d: ", tag, row);
	sb_quote(b, t.p != NULL ? t.p : "", t.len);
	sb_put(b, "\n", 1);
	free(t.p);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && pen_eq(&c[i], &c[j]); j++)
			;
		if (pen_default(&c[i]))
			continue;
		sb_printf(b, "  pen %d-%d:", i, j - 1);
		dump_pen(b, &c[i]);
		sb_put(b, "\n", 1);
	}
	for (i = 0; i < n; i++) {
		if (c[i].width == 2)
			sb_printf(b, "  wide %d\n", i);
		if (c[i].width == 0 && (i == 0 || c[i - 1].width != 2))
			sb_printf(b, "  orphan %d\n", i);
		if (c[i].cp[1] != 0) {
			sb_printf(b, "  comb %d:", i);
			for (k = 0; k < PTY_CELL_MAXCP && c[i].cp[k]; k++)
				sb_printf(b, " U+%04X", c[i].cp[k]);
			sb_put(b, "\n", 1);
		}
	}
}

static void
dump(struct sbuf *b, struct pty_screen *s, struct rec *r)
{
	struct pty_cursor cur;
	struct pty_modes m;
	struct pty_cell *cells;
	int rows, cols, i, a, z;
	size_t k, nsb;
	char text[4096];

	pty_screen_size(s, &rows, &cols);
	sb_printf(b, "size %dx%d\n", rows, cols);
	pty_screen_cursor(s, &cur);
	sb_printf(b, "cursor %d,%d %s%s shape=%u\n", cur.row, cur.col,
	    cur.visible ? "visible" : "hidden", cur.blink ? " blink" : "",
	    cur.shape);
	pty_screen_modes(s, &m);
	sb_printf(b, "modes alt=%d appcursor=%d appkeypad=%d paste=%d "
	    "mousesgr=%d reverse=%d focus=%d mouse=%u\n", m.altscreen,
	    m.app_cursor, m.app_keypad, m.bracketed_paste, m.mouse_sgr,
	    m.reverse, m.focus_events, m.mouse);
	sb_printf(b, "title ");
	sb_quote(b, pty_screen_title(s), strlen(pty_screen_title(s)));
	sb_printf(b, "\nbells %llu\n",
	    (unsigned long long)pty_screen_bells(s));
	if (pty_screen_dirty(s, &a, &z))
		sb_printf(b, "dirty %d..%d\n", a, z);
	else
		sb_printf(b, "dirty none\n");
	cells = calloc((size_t)cols, sizeof *cells);
	ck_assert_ptr_nonnull(cells);
	for (i = 0; i < rows; i++) {
		int j;
		size_t tl;

		for (j = 0; j < cols; j++)
			pty_screen_cell(s, i, j, &cells[j]);
		dump_cells(b, "row", i, cells, cols);
		/* row_text must agree with the cells' text. */
		tl = pty_screen_row_text(s, i, text, sizeof text);
		ck_assert_uint_eq(tl, strlen(text));
	}
	nsb = pty_screen_sb_count(s);
	sb_printf(b, "sb %zu\n", nsb);
	for (k = 0; k < nsb; k++) {
		int n = pty_screen_sb_line(s, k, cells, cols);

		ck_assert_int_ge(n, 0);
		dump_cells(b, "sb", (int)k, cells, cols);
	}
	free(cells);
	if (r != NULL) {
		if (r->out.len > 0) {
			sb_printf(b, "output ");
			sb_quote(b, r->out.p, r->out.len);
			sb_put(b, "\n", 1);
		}
		if (r->ev.len > 0)
			sb_put(b, r->ev.p, r->ev.len);
	}
}

/* ------------------------------------------------------------------ */
/* Running a transcript                                                  */

static size_t
unescape(const char *s, char *out)
{
	size_t n = 0;

	while (*s != '\0') {
		if (*s != '\\' || s[1] == '\0') {
			out[n++] = *s++;
			continue;
		}
		s++;
		switch (*s) {
		case 'e':
			out[n++] = 0x1b;
			break;
		case 'a':
			out[n++] = '\a';
			break;
		case 'r':
			out[n++] = '\r';
			break;
		case 'n':
			out[n++] = '\n';
			break;
		case 't':
			out[n++] = '\t';
			break;
		case 'b':
			out[n++] = '\b';
			break;
		case 'x': {
			unsigned v = 0;

			ck_assert_int_eq(sscanf(s + 1, "%2x", &v), 1);
			out[n++] = (char)v;
			s += 2;
			break;
		}
		default:
			out[n++] = *s;
			break;
		}
		s++;
	}
	return n;
}

static const struct {
	const char *name;
	enum pty_key key;
} key_names[] = {
	{ "enter", PTY_KEY_ENTER }, { "tab", PTY_KEY_TAB },
	{ "backspace", PTY_KEY_BACKSPACE }, { "escape", PTY_KEY_ESCAPE },
	{ "up", PTY_KEY_UP }, { "down", PTY_KEY_DOWN },
	{ "left", PTY_KEY_LEFT }, { "right", PTY_KEY_RIGHT },
	{ "ins", PTY_KEY_INS }, { "del", PTY_KEY_DEL },
	{ "home", PTY_KEY_HOME }, { "end", PTY_KEY_END },
	{ "pageup", PTY_KEY_PAGEUP }, { "pagedown", PTY_KEY_PAGEDOWN },
	{ "f1", PTY_KEY_F1 }, { "f5", PTY_KEY_F1 + 4 }, { "f12", PTY_KEY_F12 },
};

static unsigned
parse_mods(const char *m)
{
	unsigned mods = 0;

	for (; m != NULL && *m != '\0'; m++) {
		if (*m == 's')
			mods |= PTY_MOD_SHIFT;
		else if (*m == 'a')
			mods |= PTY_MOD_ALT;
		else if (*m == 'c')
			mods |= PTY_MOD_CTRL;
	}
	return mods;
}

static void
send_data(struct pty_screen *s, const char *d, size_t n, bool bytewise)
{
	size_t i;

	if (!bytewise) {
		pty_screen_feed(s, d, n);
		return;
	}
	for (i = 0; i < n; i++)
		pty_screen_feed(s, d + i, 1);
}

/* Run transcript text; returns the dump (malloc'd). */
static char *
run_transcript(const char *in, bool bytewise)
{
	struct pty_screen *s = NULL;
	struct rec r = { 0 };
	struct sbuf data = { 0 }, d = { 0 };
	char *copy = strdup(in), *line, *save = NULL;
	char *tmp;

	ck_assert_ptr_nonnull(copy);
	tmp = malloc(strlen(in) + 1);
	ck_assert_ptr_nonnull(tmp);
	for (line = strtok_r(copy, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		char word[32], arg[256];
		int x, y;
		size_t z;

		if (line[0] == '#')
			continue;
		if (line[0] != '@') {
			ck_assert_ptr_nonnull(s);
			sb_put(&data, tmp, unescape(line, tmp));
			continue;
		}
		if (s != NULL && data.len > 0) {
			send_data(s, data.p, data.len, bytewise);
			data.len = 0;
		}
		arg[0] = '\0';
		ck_assert_int_ge(sscanf(line + 1, "%31s", word), 1);
		if (strcmp(word, "screen") == 0) {
			ck_assert_ptr_null(s);
			ck_assert_int_eq(sscanf(line + 1, "%*s %d %d %zu", &x,
			    &y, &z), 3);
			s = screen(x, y, z, &r);
		} else if (strcmp(word, "resize") == 0) {
			ck_assert_int_eq(sscanf(line + 1, "%*s %d %d", &x, &y),
			    2);
			ck_assert_int_eq(pty_screen_resize(s, x, y), 0);
		} else if (strcmp(word, "clear") == 0) {
			pty_screen_dirty_clear(s);
		} else if (strcmp(word, "key") == 0) {
			size_t i;
			bool found = false;

			ck_assert_int_ge(sscanf(line + 1, "%*s %255s %31s",
			    arg, word), 1);
			for (i = 0; i < sizeof key_names / sizeof key_names[0];
			    i++) {
				if (strcmp(key_names[i].name, arg) != 0)
					continue;
				pty_screen_key(s, key_names[i].key,
				    strcmp(word, "key") ? parse_mods(word) : 0);
				found = true;
			}
			ck_assert_msg(found, "unknown key %s", arg);
		} else if (strcmp(word, "unichar") == 0) {
			unsigned cp;

			ck_assert_int_ge(sscanf(line + 1, "%*s %x %31s", &cp,
			    word), 1);
			pty_screen_unichar(s, cp,
			    strcmp(word, "unichar") ? parse_mods(word) : 0);
		} else if (strcmp(word, "paste") == 0) {
			const char *p = line + 1 + strlen("paste");

			while (*p == ' ')
				p++;
			pty_screen_paste(s, tmp, unescape(p, tmp));
		} else {
			ck_abort_msg("unknown directive %s", line);
		}
	}
	ck_assert_ptr_nonnull(s);
	if (data.len > 0)
		send_data(s, data.p, data.len, bytewise);
	dump(&d, s, &r);
	pty_screen_free(s);
	rec_free(&r);
	free(data.p);
	free(copy);
	free(tmp);
	return d.p;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted transcript base names (NN-name), NULL-terminated. */
static char **
transcripts(int *count)
{
	char *dir = cu_src_path("tests/fixtures/screens");
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	int n = 0;

	*count = 0;
	if (d == NULL) {
		free(dir);
		return NULL;
	}
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);

		if (l < 4 || strcmp(e->d_name + l - 3, ".in") != 0)
			continue;
		v = realloc(v, sizeof *v * (size_t)(n + 2));
		if (v == NULL || (v[n] = strndup(e->d_name, l - 3)) == NULL)
			abort();
		n++;
	}
	closedir(d);
	free(dir);
	if (v != NULL) {
		qsort(v, (size_t)n, sizeof *v, name_cmp);
		v[n] = NULL;
	}
	*count = n;
	return v;
}

static void
free_names(char **v)
{
	char **p;

	for (p = v; p != NULL && *p != NULL; p++)
		free(*p);
	free(v);
}

/* Loop index _i: transcript _i / 2, fed whole (even) or bytewise (odd). */
START_TEST(test_screen_golden)
{
	int n;
	char **names = transcripts(&n);
	char path[1024], *in, *want, *got, *rel;
	bool bytewise = _i % 2 == 1;

	ck_assert_msg(_i / 2 < n, "no transcript %d in "
	    "$CORRAL_SRC/tests/fixtures/screens", _i / 2);
	snprintf(path, sizeof path, "tests/fixtures/screens/%s.in",
	    names[_i / 2]);
	rel = cu_src_path(path);
	in = cu_read_file(rel, NULL);
	ck_assert_msg(in != NULL, "cannot read %s", rel);
	free(rel);
	snprintf(path, sizeof path, "tests/fixtures/screens/%s.out",
	    names[_i / 2]);
	rel = cu_src_path(path);
	want = cu_read_file(rel, NULL);
	got = run_transcript(in, bytewise);
	if (want == NULL || strcmp(want, got) != 0) {
		/* Leave the actual dump next to the build for a diff. */
		char apath[1100];

		snprintf(apath, sizeof apath, "%s.actual", names[_i / 2]);
		(void)cu_write_file(apath, got, strlen(got));
	}
	ck_assert_msg(want != NULL, "cannot read %s", rel);
	ck_assert_msg(strcmp(want, got) == 0, "%s (%s) differs:\n%s",
	    names[_i / 2], bytewise ? "bytewise" : "whole", got);
	free(rel);
	free(in);
	free(want);
	free(got);
	free_names(names);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Limits                                                                */

/* A 1 MB title, fed whole and in odd chunks, is cut to the cap. */
START_TEST(test_screen_title_bounded)
{
	struct rec r = { 0 };
	struct pty_screen *s = screen(5, 20, 10, &r);
	size_t n = 1u << 20, i;
	char *big = malloc(n + 16);
	const char *t;

	ck_assert_ptr_nonnull(big);
	memcpy(big, "\033]2;", 4);
	for (i = 4; i < n + 4; i++)
		big[i] = (char)('a' + i % 26);
	memcpy(big + n + 4, "\033\\after", 8);
	pty_screen_feed(s, big, n + 12);
	t = pty_screen_title(s);
	ck_assert_uint_le(strlen(t), PTY_SCREEN_TITLE_MAX);
	ck_assert_uint_ge(strlen(t), PTY_SCREEN_TITLE_MAX - 3);
	ck_assert_int_eq(strncmp(t, "efghij", 6), 0);
	/* The text after the title is shown; nothing of the title is. */
	{
		char row[64];

		pty_screen_row_text(s, 0, row, sizeof row);
		ck_assert_str_eq(row, "after");
	}
	/* Again in 4097-byte chunks, with a multibyte title. */
	for (i = 4; i + 3 <= n + 4; i += 3)
		memcpy(big + i, "\xc3\xa9x", 3);
	for (; i < n + 4; i++)
		big[i] = 'y';
	for (i = 0; i < n + 12; i += 4097)
		pty_screen_feed(s, big + i, n + 12 - i < 4097 ? n + 12 - i :
		    4097);
	t = pty_screen_title(s);
	ck_assert_uint_le(strlen(t), PTY_SCREEN_TITLE_MAX);
	ck_assert_int_eq(strncmp(t, "\xc3\xa9x\xc3\xa9x", 6), 0);
	/* Cut at a character boundary: never half an e-acute at the end. */
	ck_assert_uint_ne((unsigned char)t[strlen(t) - 1], 0xc3);
	ck_assert_uint_eq(pty_screen_sb_bytes(s), 0);
	free(big);
	pty_screen_free(s);
	rec_free(&r);
}
END_TEST

/* OSC events are cut to 4 KiB; an endless OSC swallows but holds nothing. */
START_TEST(test_screen_osc_bounded)
{
	struct rec r = { 0 };
	struct pty_screen *s = screen(5, 20, 10, &r);
	char chunk[65536];
	size_t i;
	char row[64];

	memset(chunk, 'z', sizeof chunk);
	feed(s, "\033]52;c;");
	for (i = 0; i < 64; i++)
		pty_screen_feed(s, chunk, sizeof chunk);
	feed(s, "\a");
	/* One event, "52;c;zzz...", at most 4096 bytes. */
	ck_assert_ptr_nonnull(r.ev.p);
	ck_assert_int_eq(strncmp(r.ev.p, "event osc \"52;c;zzz", 19), 0);
	ck_assert_uint_le(r.ev.len, 4096 + 32);
	ck_assert_uint_ge(r.ev.len, 4096);
	ck_assert_ptr_null(strchr(strchr(r.ev.p, '\n') + 1, '\n'));
	/* An OSC that never ends: 64 MB in, nothing shown, nothing kept. */
	r.ev.len = 0;
	feed(s, "\033]133;");
	for (i = 0; i < 1024; i++)
		pty_screen_feed(s, chunk, sizeof chunk);
	ck_assert_uint_eq(r.ev.len, 0);
	ck_assert_uint_eq(pty_screen_sb_bytes(s), 0);
	ck_assert_uint_eq(pty_screen_sb_count(s), 0);
	pty_screen_row_text(s, 0, row, sizeof row);
	ck_assert_str_eq(row, "");
	/* ST ends it and the screen works again. */
	feed(s, "\033\\ok");
	pty_screen_row_text(s, 0, row, sizeof row);
	ck_assert_str_eq(row, "ok");
	ck_assert_uint_eq(strlen(pty_screen_title(s)), 0);
	pty_screen_free(s);
	rec_free(&r);
}
END_TEST

/* More lines than sb_max: the count is the cap, oldest lines dropped. */
START_TEST(test_screen_sb_cap)
{
	struct pty_screen *s = screen(4, 30, 100, NULL);
	struct pty_cell cells[30];
	char line[64], text[64];
	size_t bytes_at_cap = 0;
	int i, j, n;

	for (i = 0; i < 1000; i++) {
		snprintf(line, sizeof line, "line %04d\r\n", i);
		feed(s, line);
		if (i == 200)
			bytes_at_cap = pty_screen_sb_bytes(s);
	}
	ck_assert_uint_eq(pty_screen_sb_count(s), 100);
	/* 1000 lines + the cursor line: lines 0..896 left the screen. */
	n = pty_screen_sb_line(s, 0, cells, 30);
	ck_assert_int_eq(n, 9);
	for (j = 0; j < n; j++)
		text[j] = (char)cells[j].cp[0];
	text[n] = '\0';
	ck_assert_str_eq(text, "line 0897");
	n = pty_screen_sb_line(s, 99, cells, 30);
	for (j = 0; j < n; j++)
		text[j] = (char)cells[j].cp[0];
	text[n] = '\0';
	ck_assert_str_eq(text, "line 0996");
	ck_assert_int_eq(pty_screen_sb_line(s, 100, cells, 30), -EINVAL);
	/* Full ring: memory stays where it was when it filled. */
	ck_assert_uint_eq(pty_screen_sb_bytes(s), bytes_at_cap);
	/* Packed: 9 cells of text take far less than 30 cells. */
	ck_assert_uint_lt(pty_screen_sb_bytes(s), 100 * 40);
	pty_screen_row_text(s, 0, text, sizeof text);
	ck_assert_str_eq(text, "line 0997");
	pty_screen_free(s);
}
END_TEST

/* sb_max 0 keeps nothing; alt-screen scrolls never reach scrollback. */
START_TEST(test_screen_sb_none)
{
	struct pty_screen *s = screen(3, 10, 0, NULL);
	int i;

	for (i = 0; i < 50; i++)
		feed(s, "x\r\n");
	ck_assert_uint_eq(pty_screen_sb_count(s), 0);
	ck_assert_uint_eq(pty_screen_sb_bytes(s), 0);
	pty_screen_free(s);
	s = screen(3, 10, 100, NULL);
	feed(s, "\033[?1049h");
	for (i = 0; i < 50; i++)
		feed(s, "x\r\n");
	ck_assert_uint_eq(pty_screen_sb_count(s), 0);
	feed(s, "\033[?1049l");
	for (i = 0; i < 5; i++)
		feed(s, "y\r\n");
	ck_assert_uint_eq(pty_screen_sb_count(s), 3);
	pty_screen_free(s);
}
END_TEST

/* Huge writes in one call (libvterm 0.1.4 would overflow its stack). */
START_TEST(test_screen_huge_write)
{
	struct pty_screen *s = screen(24, 80, 50, NULL);
	size_t n = 16u << 20, i;
	char *big = malloc(n);
	char row[128];

	ck_assert_ptr_nonnull(big);
	for (i = 0; i < n; i++)
		big[i] = (i % 81 == 80) ? '\n' : (char)('a' + i % 26);
	pty_screen_feed(s, big, n);
	ck_assert_uint_eq(pty_screen_sb_count(s), 50);
	/* A DCS and a title of 16 MB each. */
	memcpy(big, "\033P", 2);
	memset(big + 2, 'q', n - 4);
	memcpy(big + n - 2, "\033\\", 2);
	pty_screen_feed(s, big, n);
	memcpy(big, "\033]0;", 4);
	big[n - 2] = 'q';
	big[n - 1] = '\a';
	pty_screen_feed(s, big, n);
	ck_assert_uint_eq(strlen(pty_screen_title(s)), PTY_SCREEN_TITLE_MAX);
	feed(s, "\033[H\033[2Jdone");
	pty_screen_row_text(s, 0, row, sizeof row);
	ck_assert_str_eq(row, "done");
	free(big);
	pty_screen_free(s);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Keys, replies, API edges                                              */

START_TEST(test_screen_keys)
{
	struct rec r = { 0 };
	struct pty_screen *s = screen(5, 20, 0, &r);
	struct pty_modes m;

	pty_screen_key(s, PTY_KEY_UP, 0);
	ck_assert_str_eq(r.out.p, "\033[A");
	r.out.len = 0;
	feed(s, "\033[?1h");
	pty_screen_key(s, PTY_KEY_UP, 0);
	ck_assert_str_eq(r.out.p, "\033OA");
	r.out.len = 0;
	pty_screen_key(s, PTY_KEY_UP, PTY_MOD_CTRL);
	ck_assert_str_eq(r.out.p, "\033[1;5A");
	r.out.len = 0;
	/* libvterm 0.1.4 ignores DECSTR; the tracked mode agrees with it. */
	feed(s, "\033[!p");
	pty_screen_key(s, PTY_KEY_UP, 0);
	ck_assert_str_eq(r.out.p, "\033OA");
	pty_screen_modes(s, &m);
	ck_assert(m.app_cursor);
	r.out.len = 0;
	/* RIS resets both. */
	feed(s, "\033c");
	pty_screen_key(s, PTY_KEY_UP, 0);
	ck_assert_str_eq(r.out.p, "\033[A");
	pty_screen_modes(s, &m);
	ck_assert(!m.app_cursor);
	r.out.len = 0;
	pty_screen_key(s, PTY_KEY_F1, 0);
	ck_assert_str_eq(r.out.p, "\033OP");
	r.out.len = 0;
	pty_screen_key(s, PTY_KEY_F12, 0);
	ck_assert_str_eq(r.out.p, "\033[24~");
	r.out.len = 0;
	pty_screen_key(s, PTY_KEY_ENTER, 0);
	ck_assert_str_eq(r.out.p, "\r");
	r.out.len = 0;
	pty_screen_unichar(s, 'c', PTY_MOD_CTRL);
	ck_assert_str_eq(r.out.p, "\003");
	r.out.len = 0;
	pty_screen_unichar(s, 0xe9, 0);
	ck_assert_str_eq(r.out.p, "\xc3\xa9");
	r.out.len = 0;
	pty_screen_unichar(s, 'x', PTY_MOD_ALT);
	ck_assert_str_eq(r.out.p, "\033x");
	r.out.len = 0;
	/* Bad keys and codepoints send nothing. */
	pty_screen_key(s, PTY_KEY_NONE, 0);
	pty_screen_key(s, PTY_KEY_MAX, 0);
	pty_screen_key(s, (enum pty_key)-3, 0);
	pty_screen_unichar(s, 0xd800, 0);
	pty_screen_unichar(s, 0x110000, 0);
	ck_assert_uint_eq(r.out.len, 0);
	pty_screen_free(s);
	rec_free(&r);
}
END_TEST

START_TEST(test_screen_paste)
{
	struct rec r = { 0 };
	struct pty_screen *s = screen(5, 20, 0, &r);

	pty_screen_paste(s, "a\nb", 3);
	ck_assert_str_eq(r.out.p, "a\nb");
	r.out.len = 0;
	feed(s, "\033[?2004h");
	pty_screen_paste(s, "a\nb", 3);
	ck_assert_str_eq(r.out.p, "\033[200~a\nb\033[201~");
	r.out.len = 0;
	/* A pasted end mark cannot close the bracket early. */
	pty_screen_paste(s, "x\033[201~rm -rf ~\n", 16);
	ck_assert_str_eq(r.out.p, "\033[200~xrm -rf ~\n\033[201~");
	r.out.len = 0;
	feed(s, "\033[?2004l");
	pty_screen_paste(s, "q", 1);
	ck_assert_str_eq(r.out.p, "q");
	pty_screen_free(s);
	rec_free(&r);
}
END_TEST

/* Mode sequences split at every byte position give the same modes. */
START_TEST(test_screen_modes_split)
{
	static const char seq[] =
	    "ab\033[?1;1004;2004h\033[?1006h\033=\033]0;t\a\033[?1004l";
	size_t cut, n = sizeof seq - 1;

	for (cut = 0; cut <= n; cut++) {
		struct pty_screen *s = screen(3, 20, 0, NULL);
		struct pty_modes m;
		char row[32];

		pty_screen_feed(s, seq, cut);
		pty_screen_feed(s, seq + cut, n - cut);
		pty_screen_modes(s, &m);
		ck_assert(m.app_cursor);
		ck_assert(m.bracketed_paste);
		ck_assert(m.mouse_sgr);
		ck_assert(m.app_keypad);
		ck_assert(!m.focus_events);
		ck_assert_str_eq(pty_screen_title(s), "t");
		pty_screen_row_text(s, 0, row, sizeof row);
		ck_assert_str_eq(row, "ab");
		feed(s, "\033c");
		pty_screen_modes(s, &m);
		ck_assert(!m.app_cursor && !m.bracketed_paste && !m.app_keypad);
		pty_screen_free(s);
	}
}
END_TEST

START_TEST(test_screen_api_edges)
{
	struct pty_screen *s = NULL;
	struct pty_cell c;
	char buf[8];
	uint8_t pk[256];
	int rows, cols;

	ck_assert_int_eq(pty_screen_new(&s, 0, 10, 0), -EINVAL);
	ck_assert_ptr_null(s);
	ck_assert_int_eq(pty_screen_new(&s, 10, 1001, 0), -EINVAL);
	ck_assert_int_eq(pty_screen_new(NULL, 10, 10, 0), -EINVAL);
	pty_screen_free(NULL);
	s = screen(2, 4, 0, NULL);
	ck_assert_int_eq(pty_screen_resize(s, 0, 4), -EINVAL);
	ck_assert_int_eq(pty_screen_resize(s, 2, 1001), -EINVAL);
	pty_screen_size(s, &rows, &cols);
	ck_assert_int_eq(rows, 2);
	ck_assert_int_eq(cols, 4);
	feed(s, "\033[31mabcd");
	pty_screen_cell(s, -1, 0, &c);
	ck_assert_uint_eq(c.cp[0], 0);
	ck_assert_uint_eq(c.fg, PTY_COLOR_DEFAULT);
	pty_screen_cell(s, 0, 4, &c);
	ck_assert_uint_eq(c.cp[0], 0);
	ck_assert_uint_eq(c.width, 1);
	pty_screen_cell(s, 0, 3, &c);
	ck_assert_uint_eq(c.cp[0], 'd');
	ck_assert_uint_eq(c.fg, PTY_COLOR_INDEXED(1));
	/* row_text truncates at a character boundary and NUL-terminates. */
	ck_assert_uint_eq(pty_screen_row_text(s, 0, buf, 3), 2);
	ck_assert_str_eq(buf, "ab");
	ck_assert_uint_eq(pty_screen_row_text(s, 5, buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "");
	ck_assert_uint_eq(pty_screen_row_text(s, 0, buf, 0), 0);
	/* row_pack agrees with cell + pty_line_pack. */
	{
		struct pty_cell cells[4];
		uint8_t pk2[256];
		size_t a, b;
		int j;

		for (j = 0; j < 4; j++)
			pty_screen_cell(s, 0, j, &cells[j]);
		a = pty_screen_row_pack(s, 0, pk, sizeof pk);
		b = pty_line_pack(cells, 4, pk2, sizeof pk2);
		ck_assert_uint_gt(a, 0);
		ck_assert_uint_eq(a, b);
		ck_assert_mem_eq(pk, pk2, a);
		ck_assert_uint_eq(pty_screen_row_pack(s, 2, pk, sizeof pk), 0);
		ck_assert_uint_eq(pty_screen_row_pack(s, 0, pk, 3), 0);
	}
	ck_assert_int_eq(pty_screen_sb_line(s, 0, &c, 1), -EINVAL);
	pty_screen_free(s);
}
END_TEST

/* Resize keeps scrollback and can shrink to 1x1 and back. */
START_TEST(test_screen_resize_extremes)
{
	struct pty_screen *s = screen(10, 40, 100, NULL);
	int i;
	char row[64];

	for (i = 0; i < 30; i++) {
		snprintf(row, sizeof row, "%d \xe4\xb8\xad\xcc\x81\r\n", i);
		feed(s, row);
	}
	ck_assert_int_eq(pty_screen_resize(s, 1, 1), 0);
	feed(s, "\xe4\xb8\xadZ");
	ck_assert_int_eq(pty_screen_resize(s, 1000, 1000), 0);
	ck_assert_int_eq(pty_screen_resize(s, 5, 3), 0);
	feed(s, "\033[?1049hhello\033[5;5r\n\n\n\033[?1049l");
	ck_assert_int_eq(pty_screen_resize(s, 24, 80), 0);
	ck_assert_uint_le(pty_screen_sb_count(s), 100);
	pty_screen_free(s);
	/* A double-width line on one column (libvterm 0.1.4: column -1). */
	s = screen(1, 1, 0, NULL);
	feed(s, "\033#3\033[4hzz\n\033[K\033[20;1h~\033[1;5H\033H\tq");
	{
		struct pty_cursor cur;

		pty_screen_cursor(s, &cur);
		ck_assert_int_eq(cur.row, 0);
		ck_assert_int_eq(cur.col, 0);
	}
	pty_screen_free(s);
}
END_TEST

/* Scrollback line idx as text (its first maxcols cells, blanks trimmed). */
static void
sb_text(struct pty_screen *s, size_t idx, char *text, int maxcols)
{
	struct pty_cell cells[64];
	int n, j;

	ck_assert_int_le(maxcols, 64);
	n = pty_screen_sb_line(s, idx, cells, maxcols);
	ck_assert_int_ge(n, 0);
	for (j = 0; j < n && j < maxcols; j++)
		text[j] = cells[j].cp[0] ? (char)cells[j].cp[0] : ' ';
	while (j > 0 && text[j - 1] == ' ')
		j--;
	text[j] = '\0';
}

/*
 * A resize rewraps the newest 2,000 scrollback lines with the screen
 * (issue 22: the holder's loop is not held 25-80 ms by a full
 * scrollback); older lines keep their breaks, whole. 500 lines of 35
 * characters and 1,600 of 20 at 40 columns, narrowed to 20: the 96
 * oldest are kept at 35, the rest split or kept as they fit. Made 1,000
 * rows tall, the screen takes lines back and the scrollback is short
 * enough to be rewrapped whole: at 30 columns, the kept 35-character
 * lines are split whole (not cut at the 20 columns the screen had).
 */
START_TEST(test_screen_resize_bounded)
{
	struct pty_screen *s = screen(5, 40, 10000, NULL);
	char line[64], text[64];
	int k;

	for (k = 0; k < 2100; k++) {
		if (k < 500)
			snprintf(line, sizeof line,
			    "L%04d-abcdefghijklmnopqrstuvwxyzABC\r\n", k);
		else
			snprintf(line, sizeof line, "S%04d-abcdefghijklmn\r\n",
			    k);
		feed(s, line);
	}
	ck_assert_uint_eq(pty_screen_sb_count(s), 2096);
	ck_assert_int_eq(pty_screen_resize(s, 5, 20), 0);
	sb_text(s, 0, text, 40);
	ck_assert_str_eq(text, "L0000-abcdefghijklmnopqrstuvwxyzABC");
	sb_text(s, 95, text, 40);
	ck_assert_str_eq(text, "L0095-abcdefghijklmnopqrstuvwxyzABC");
	sb_text(s, 96, text, 40);
	ck_assert_str_eq(text, "L0096-abcdefghijklmn");
	sb_text(s, 97, text, 40);
	ck_assert_str_eq(text, "opqrstuvwxyzABC");
	ck_assert_int_eq(pty_screen_resize(s, 1000, 20), 0);
	ck_assert_uint_lt(pty_screen_sb_count(s), 2000);
	ck_assert_int_eq(pty_screen_resize(s, 1000, 30), 0);
	for (k = 0; k < 96; k++) {
		char want[64];

		snprintf(want, sizeof want, "L%04d-abcdefghijklmnopqrstuvwx",
		    k);
		sb_text(s, 2 * (size_t)k, text, 40);
		ck_assert_str_eq(text, want);
		sb_text(s, 2 * (size_t)k + 1, text, 40);
		ck_assert_str_eq(text, "yzABC");
	}
	pty_screen_free(s);
}
END_TEST

/*
 * A pen with every attribute, an underline style and two 24-bit colours,
 * saved and restored (1049h, 1049l): put back without crashing 0.1.4
 * (one SGR of 17 parameters did: more than its 16), and whole.
 */
START_TEST(test_screen_restore_full_pen)
{
	struct pty_screen *s = screen(5, 20, 0, NULL);
	struct pty_cell c;

	feed(s, "\033[1;3;4;5;7;9;38;2;1;2;3;48;2;4;5;6m\033[?1049h"
	    "\033[0malt\033[?1049lX");
	pty_screen_cell(s, 0, 0, &c);
	ck_assert_uint_eq(c.cp[0], 'X');
	ck_assert_uint_eq(c.fg, PTY_COLOR_RGB(1, 2, 3));
	ck_assert_uint_eq(c.bg, PTY_COLOR_RGB(4, 5, 6));
	ck_assert_uint_eq(c.attrs & (PTY_ATTR_BOLD | PTY_ATTR_ITALIC |
	    PTY_ATTR_BLINK | PTY_ATTR_REVERSE | PTY_ATTR_STRIKE),
	    PTY_ATTR_BOLD | PTY_ATTR_ITALIC | PTY_ATTR_BLINK |
	    PTY_ATTR_REVERSE | PTY_ATTR_STRIKE);
	ck_assert_uint_eq((c.attrs & PTY_ATTR_UNDERLINE) >>
	    PTY_ATTR_UNDERLINE_SHIFT, 1);
	pty_screen_free(s);
}
END_TEST

Suite *
screen_suite(void)
{
	Suite *s = suite_create("screen");
	TCase *tc = tcase_create("Golden");
	int n;
	char **names = transcripts(&n);

	free_names(names);
	/* No transcripts found: one iteration that fails, never a skip. */
	tcase_add_loop_test(tc, test_screen_golden, 0, n > 0 ? 2 * n : 1);
	suite_add_tcase(s, tc);

	tc = tcase_create("Limits");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_screen_title_bounded);
	tcase_add_test(tc, test_screen_osc_bounded);
	tcase_add_test(tc, test_screen_sb_cap);
	tcase_add_test(tc, test_screen_sb_none);
	tcase_add_test(tc, test_screen_huge_write);
	suite_add_tcase(s, tc);

	tc = tcase_create("Core");
	tcase_add_test(tc, test_screen_keys);
	tcase_add_test(tc, test_screen_paste);
	tcase_add_test(tc, test_screen_modes_split);
	tcase_add_test(tc, test_screen_api_edges);
	tcase_add_test(tc, test_screen_resize_extremes);
	tcase_add_test(tc, test_screen_resize_bounded);
	tcase_add_test(tc, test_screen_restore_full_pen);
	suite_add_tcase(s, tc);
	return s;
}
