/*
 * test_vtfilter.c: the VT filter in front of libvterm (vtfilter.c), alone,
 * in the style of libvterm's t/ tests: each file
 * tests/fixtures/vtfilter/NN-name.test feeds byte strings to a filter
 * whose sink prints every pass and event as a canonical line, and the
 * lines must be the expected ones.
 *
 * .test format: '#' lines are comments; a command line starts in column 0,
 * and the lines after it indented by two spaces are what it must print.
 *   PUSH "bytes" [* N]   feed the bytes (N times over, in one feed), with
 *                        \e \a \r \n \t \\ \" and \xHH escapes
 *   SINK fast=no|done|stop mark=no|yes   how the sink answers from now on
 *   MODES                print the modes the filter tracks
 *   CUT                  pty__vtfilter_cut (the model reset the parser)
 * Printed lines: pass "bytes", reply "bytes", rep N, cursor save|restore|forget, pen [faint] [conceal], mark U+XXXX,
 * fast "bytes", modes ...; bytes longer than 64 as N "head"..."tail".
 */
#include <check.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pty/pty_int.h"
#include "support/check_util.h"

Suite *vtfilter_suite(void);

struct out {
	char *p;
	size_t len, cap;
	enum pty__vtf_fast fast;	/* the sink's answer to ascii_run */
	bool mark;			/* ... and to join_mark */
};

static void
out_printf(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(o->p + o->len, o->cap - o->len, fmt, ap);
		va_end(ap);
		ck_assert_int_ge(n, 0);
		if ((size_t)n < o->cap - o->len)
			break;
		o->cap = (o->cap + (size_t)n + 1) * 2;
		o->p = realloc(o->p, o->cap);
		ck_assert_ptr_nonnull(o->p);
	}
	o->len += (size_t)n;
}

/* Bytes as a quoted canonical string. */
static void
out_quoted(struct out *o, const uint8_t *p, size_t n)
{
	size_t i;

	out_printf(o, "\"");
	for (i = 0; i < n; i++) {
		switch (p[i]) {
		case 0x1b:
			out_printf(o, "\\e");
			break;
		case '\a':
			out_printf(o, "\\a");
			break;
		case '\r':
			out_printf(o, "\\r");
			break;
		case '\n':
			out_printf(o, "\\n");
			break;
		case '\t':
			out_printf(o, "\\t");
			break;
		case '\\':
		case '"':
			out_printf(o, "\\%c", p[i]);
			break;
		default:
			if (p[i] >= 0x20 && p[i] < 0x7f)
				out_printf(o, "%c", p[i]);
			else
				out_printf(o, "\\x%02x", p[i]);
		}
	}
	out_printf(o, "\"");
}

/* WORD "bytes", or WORD N "head"..."tail" past 64 bytes. */
static void
out_bytes(struct out *o, const char *word, const uint8_t *p, size_t n)
{
	out_printf(o, "%s ", word);
	if (n > 64) {
		out_printf(o, "%zu ", n);
		out_quoted(o, p, 16);
		out_printf(o, "...");
		out_quoted(o, p + n - 16, 16);
	} else {
		out_quoted(o, p, n);
	}
	out_printf(o, "\n");
}

static void
sink_pass(const uint8_t *p, size_t n, void *ud)
{
	ck_assert_uint_gt(n, 0);
	ck_assert_uint_le(n, PTY__VTF_WRITE_MAX);
	out_bytes(ud, "pass", p, n);
}

static void
sink_reply(const char *p, size_t n, void *ud)
{
	struct out *o = ud;

	out_printf(o, "reply ");
	out_quoted(o, (const uint8_t *)p, n);
	out_printf(o, "\n");
}

static void
sink_rep(uint32_t count, void *ud)
{
	out_printf(ud, "rep %u\n", count);
}

static void
sink_cursor(enum pty__vtf_cursor op, void *ud)
{
	static const char *const names[] = { "save", "restore", "forget" };

	out_printf(ud, "cursor %s\n", names[op]);
}

static void
sink_pen(uint16_t attrs, void *ud)
{
	out_printf(ud, "pen%s%s\n", attrs & PTY_ATTR_FAINT ? " faint" : "",
	    attrs & PTY_ATTR_CONCEAL ? " conceal" : "");
}

static bool
sink_mark(uint32_t cp, void *ud)
{
	struct out *o = ud;

	out_printf(o, "mark U+%04X\n", cp);
	return o->mark;
}

static enum pty__vtf_fast
sink_fast(const uint8_t *p, size_t m, void *ud)
{
	struct out *o = ud;

	out_bytes(o, "fast", p, m);
	return o->fast;
}

static const struct pty__vtfilter_sink sink = {
	.pass = sink_pass,
	.reply = sink_reply,
	.rep = sink_rep,
	.cursor = sink_cursor,
	.pen = sink_pen,
	.join_mark = sink_mark,
	.ascii_run = sink_fast,
};

/* Unescape a quoted string at s (after the opening quote) into buf. */
static size_t
unquote(const char *s, char *buf, size_t bufsz, const char **end)
{
	size_t n = 0;
	unsigned v;

	while (*s != '\0' && *s != '"') {
		ck_assert_uint_lt(n, bufsz);
		if (*s != '\\') {
			buf[n++] = *s++;
			continue;
		}
		s++;
		switch (*s) {
		case 'e':
			buf[n++] = 0x1b;
			break;
		case 'a':
			buf[n++] = '\a';
			break;
		case 'r':
			buf[n++] = '\r';
			break;
		case 'n':
			buf[n++] = '\n';
			break;
		case 't':
			buf[n++] = '\t';
			break;
		case 'x':
			ck_assert_int_eq(sscanf(s + 1, "%2x", &v), 1);
			buf[n++] = (char)v;
			s += 2;
			break;
		default:
			buf[n++] = *s;
			break;
		}
		s++;
	}
	ck_assert_msg(*s == '"', "unterminated string");
	*end = s + 1;
	return n;
}

static void
run_command(struct pty__vtfilter *f, struct out *o, const char *line)
{
	if (strncmp(line, "PUSH \"", 6) == 0) {
		static char one[4096];
		const char *rest;
		size_t n = unquote(line + 6, one, sizeof one, &rest), times = 1;
		size_t i;
		char *all;

		if (sscanf(rest, " * %zu", &times) != 1)
			times = 1;
		all = malloc(n * times + 1);
		ck_assert_ptr_nonnull(all);
		for (i = 0; i < times; i++)
			memcpy(all + i * n, one, n);
		pty__vtfilter_feed(f, (const uint8_t *)all, n * times);
		free(all);
	} else if (strncmp(line, "SINK", 4) == 0) {
		const char *p;

		if ((p = strstr(line, "fast=")) != NULL)
			o->fast = strncmp(p + 5, "done", 4) == 0 ?
			    PTY__VTF_FAST_DONE : strncmp(p + 5, "stop", 4) == 0 ?
			    PTY__VTF_FAST_STOP : PTY__VTF_FAST_NO;
		if ((p = strstr(line, "mark=")) != NULL)
			o->mark = strncmp(p + 5, "yes", 3) == 0;
	} else if (strcmp(line, "MODES") == 0) {
		out_printf(o, "modes appcursor=%d appkeypad=%d paste=%d "
		    "mousesgr=%d focus=%d irm=%d decom=%d\n", f->app_cursor,
		    f->app_keypad, f->bracketed_paste, f->mouse_sgr,
		    f->focus_events, f->insert, f->origin);
		out_printf(o, "keys decckm=%d lnm=%d c1=%d marks=%d\n",
		    f->keys.app_cursor, f->keys.newline, f->keys.c1_8bit,
		    f->keys.paste_marks);
	} else if (strcmp(line, "CUT") == 0) {
		pty__vtfilter_cut(f);
	} else {
		ck_abort_msg("unknown command: %s", line);
	}
}

/*
 * Run one .test text: returns NULL when every command printed what it
 * must, else a malloc'd report of the first that did not.
 */
static char *
run_test(const char *name, char *text)
{
	struct pty__vtfilter *f = malloc(sizeof *f);
	struct out o = { 0 };
	char *line, *save = NULL, *cmd = NULL, *want = NULL, *bad = NULL;
	size_t wlen = 0, wcap = 0, from = 0;
	int lineno = 0, cmdline = 0;

	ck_assert_ptr_nonnull(f);
	pty__vtfilter_init(f, &sink, &o);
	out_printf(&o, "%s", "");
	/* One extra pass flushes the last command. */
	for (line = strtok_r(text, "\n", &save);; line = strtok_r(NULL, "\n",
	    &save)) {
		if (line != NULL)
			lineno++;
		if (line != NULL && line[0] == '#')
			continue;
		if (line != NULL && strncmp(line, "  ", 2) == 0) {
			size_t n = strlen(line + 2);

			if (wlen + n + 2 > wcap) {
				wcap = (wlen + n + 2) * 2;
				want = realloc(want, wcap);
				ck_assert_ptr_nonnull(want);
			}
			memcpy(want + wlen, line + 2, n);
			wlen += n;
			want[wlen++] = '\n';
			want[wlen] = '\0';
			continue;
		}
		if (cmd != NULL) {
			/* The previous command's output against its lines. */
			size_t glen = o.len - from;

			if (glen != wlen || (wlen > 0 &&
			    memcmp(o.p + from, want, wlen) != 0)) {
				size_t sz = glen + wlen + strlen(cmd) + 256;

				bad = malloc(sz);
				ck_assert_ptr_nonnull(bad);
				snprintf(bad, sz, "%s:%d: %s\nwant:\n%.*s"
				    "got:\n%.*s", name, cmdline, cmd, (int)wlen,
				    wlen > 0 ? want : "", (int)glen,
				    o.p + from);
				break;
			}
		}
		if (line == NULL)
			break;
		cmd = line;
		cmdline = lineno;
		wlen = 0;
		from = o.len;
		run_command(f, &o, line);
	}
	free(want);
	free(o.p);
	free(f);
	return bad;
}

/* The sorted .test names of tests/fixtures/vtfilter, NULL-terminated. */
static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char **
test_names(int *count)
{
	char *dir = cu_src_path("tests/fixtures/vtfilter");
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	int n = 0;

	ck_assert_msg(d != NULL, "cannot open %s", dir);
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);

		if (l < 6 || strcmp(e->d_name + l - 5, ".test") != 0)
			continue;
		v = realloc(v, sizeof *v * (size_t)(n + 2));
		ck_assert_ptr_nonnull(v);
		v[n] = strdup(e->d_name);
		ck_assert_ptr_nonnull(v[n]);
		n++;
	}
	closedir(d);
	free(dir);
	ck_assert_int_gt(n, 0);
	qsort(v, (size_t)n, sizeof *v, name_cmp);
	v[n] = NULL;
	*count = n;
	return v;
}

#define NTESTS 15

/* Loop index _i: the _i-th .test file in name order. */
START_TEST(test_vtfilter_golden)
{
	int n, k;
	char **names = test_names(&n);
	char path[512], *rel, *text, *bad;

	/* A new file needs NTESTS raised, or it would never run. */
	ck_assert_int_eq(n, NTESTS);
	snprintf(path, sizeof path, "tests/fixtures/vtfilter/%s", names[_i]);
	rel = cu_src_path(path);
	text = cu_read_file(rel, NULL);
	ck_assert_msg(text != NULL, "cannot read %s", rel);
	bad = run_test(names[_i], text);
	ck_assert_msg(bad == NULL, "%s", bad);
	free(rel);
	free(text);
	for (k = 0; k < n; k++)
		free(names[k]);
	free(names);
}
END_TEST

/* The runner itself: a wrong expectation is reported, not passed. */
START_TEST(test_vtfilter_runner_fails)
{
	char text[] = "PUSH \"ab\"\n  pass \"ax\"\n";
	char *bad = run_test("self", text);

	ck_assert_ptr_nonnull(bad);
	ck_assert_ptr_nonnull(strstr(bad, "self:1: PUSH"));
	free(bad);
	{
		char none[] = "PUSH \"ab\"\n";

		bad = run_test("self", none);
		ck_assert_ptr_nonnull(bad);
		free(bad);
	}
}
END_TEST

Suite *
vtfilter_suite(void)
{
	Suite *s = suite_create("vtfilter");
	TCase *tc = tcase_create("Golden");

	tcase_add_loop_test(tc, test_vtfilter_golden, 0, NTESTS);
	tcase_add_test(tc, test_vtfilter_runner_fails);
	suite_add_tcase(s, tc);
	return s;
}
