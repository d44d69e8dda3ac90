/*
 * test_tmuxdiff.c: the screen model against tmux 3.3a, cell by cell.
 * (SPEC 4.1, 4.5; issue 22.) Each recording tests/fixtures/tmuxdiff/NAME.bytes (what a real
 * program wrote to its terminal, taken with script(1)) is fed to corral's
 * screen model and shown in a tmux pane of the same size (its own server,
 * no configuration, the bytes through `stty raw`); then text, widths,
 * colours and attributes are compared cell by cell, and the cursor and the
 * input modes. tmux's pane is read back with capture-pane -e (drawn into a
 * second model, which only has to read SGR and text) and display -p.
 *
 * Then again after a resize (issue 22): the bytes shown, both resized to
 * each of RESIZES (relative to the recording's size), compared the same
 * way, and the scrollback too (its line count and text): tmux rewraps
 * the primary screen and its history, and so must corral.
 *
 * INDEX lists "NAME ROWS COLS"; KNOWN lists the justified differences,
 * "NAME KIND reason" (NAME@ROWSxCOLS for one after a resize), KIND one
 * of text, width, fg, bg, erasebg (a blank whose background tmux's
 * capture does not show), attrs, cursor, visible, alt, mouse, mousesgr,
 * appcursor, appkeypad, history. A difference not in KNOWN fails, and so
 * does a KNOWN line that no longer matches one.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pty/pty.h"
#include "support/check_util.h"

Suite *tmuxdiff_suite(void);

#define MAXREC 64

/* The sizes each recording is resized to: rows and columns added. */
static const int RESIZES[][2] = {
	{ 0, -17 },	/* narrower: lines split */
	{ 0, 40 },	/* wider: wrapped lines join */
	{ -7, -25 },	/* shorter and narrower: rows go to the scrollback */
	{ 6, 9 },	/* taller and wider: lines come back */
};
#define NRESIZE ((int)(sizeof RESIZES / sizeof RESIZES[0]))

struct rec {
	char name[64];
	int rows, cols;
};

static int
read_index(struct rec *v)
{
	char *path = cu_src_path("tests/fixtures/tmuxdiff/INDEX");
	char *text = cu_read_file(path, NULL), *line, *save = NULL;
	int n = 0;

	/* Called outside a test too (the suite's loop count): no asserts. */
	for (line = text == NULL ? NULL : strtok_r(text, "\n", &save);
	    line != NULL && n < MAXREC; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#' || line[0] == '\0')
			continue;
		if (sscanf(line, "%63s %d %d", v[n].name, &v[n].rows,
		    &v[n].cols) != 3)
			return -1;
		n++;
	}
	free(text);
	free(path);
	return n;
}

/* The kinds KNOWN allows for name (space-separated, with spaces around). */
static void
known_kinds(const char *name, char *out, size_t outsz)
{
	char *path = cu_src_path("tests/fixtures/tmuxdiff/KNOWN");
	char *text = cu_read_file(path, NULL), *line, *save = NULL;
	char n[64], k[32];

	ck_assert_msg(text != NULL, "cannot read %s", path);
	snprintf(out, outsz, " ");
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#' || line[0] == '\0')
			continue;
		ck_assert_msg(sscanf(line, "%63s %31s", n, k) == 2 &&
		    strlen(line) > strlen(n) + strlen(k) + 2,
		    "KNOWN: a line without its reason: %s", line);
		if (strcmp(n, name) == 0)
			snprintf(out + strlen(out), outsz - strlen(out),
			    "%s ", k);
	}
	free(text);
	free(path);
}

/* tmux's view of the bytes: capture-pane -e text and display -p fields. */
static void
tmux_view(const struct rec *r, const char *bytes_path, int dsr, int rrows,
    int rcols, char **cap, char **info, char **hist)
{
	char *dir = cu_tmpdir("tmuxdiff"), cmd[4096], rs[128] = "";
	int st;

	/* resize-window has resized the pane's screen when it returns. */
	if (rrows > 0)
		snprintf(rs, sizeof rs, "$T resize-window -x %d -y %d && ",
		    rcols, rrows);

	/*
	 * The pane answers one DSR after the bytes (and one for each the
	 * program asked): once the shell has read them all, tmux has parsed
	 * every byte before them.
	 */
	snprintf(cmd, sizeof cmd,
	    "T='tmux -S %s/sock -f /dev/null'; "
	    "$T new-session -d -x %d -y %d \"stty raw -echo; "
	    "cat '%s'; printf '\\033[6n'; "
	    "for i in \\$(seq %d); do IFS= read -r -s -d R x; done; "
	    "$T wait-for -S done; exec sleep 600\" && "
	    "timeout 60 $T wait-for done && %s"
	    "$T capture-pane -e -p -N > %s/cap && "
	    "$T capture-pane -e -p -S - -E -1 > %s/hist && "
	    "$T display -p '#{cursor_x} #{cursor_y} #{cursor_flag} "
	    "#{alternate_on} #{mouse_any_flag} #{mouse_sgr_flag} "
	    "#{keypad_cursor_flag} #{keypad_flag} #{history_size}' > %s/info; "
	    "rc=$?; $T kill-server; exit $rc",
	    dir, r->cols, r->rows, bytes_path, dsr + 1, rs, dir, dir, dir);
	free(cu_run(cmd, &st));
	ck_assert_msg(st == 0, "%s: tmux did not show the bytes (status %d)",
	    r->name, st);
	snprintf(cmd, sizeof cmd, "%s/cap", dir);
	*cap = cu_read_file(cmd, NULL);
	snprintf(cmd, sizeof cmd, "%s/info", dir);
	*info = cu_read_file(cmd, NULL);
	snprintf(cmd, sizeof cmd, "%s/hist", dir);
	*hist = cu_read_file(cmd, NULL);
	ck_assert_ptr_nonnull(*cap);
	ck_assert_ptr_nonnull(*info);
	ck_assert_ptr_nonnull(*hist);
	cu_rmrf(dir);
	free(dir);
}

/* Draw capture-pane -e output (rows of SGR and text) into a model. */
static struct pty_screen *
from_capture(const struct rec *r, const char *cap)
{
	struct pty_screen *s = NULL;
	const char *p = cap;
	char cup[32];
	int row = 0;

	ck_assert_int_eq(pty_screen_new(&s, r->rows, r->cols, 0), 0);
	/* capture-pane writes line drawing between SO and SI: G1 is DEC's. */
	pty_screen_feed(s, "\033)0", 3);
	while (*p != '\0' && row < r->rows) {
		const char *e = strchr(p, '\n');
		size_t n = e != NULL ? (size_t)(e - p) : strlen(p);

		snprintf(cup, sizeof cup, "\033[%d;1H", row + 1);
		pty_screen_feed(s, cup, strlen(cup));
		pty_screen_feed(s, p, n);
		row++;
		p += n + (e != NULL);
	}
	return s;
}

static void
add(char *kinds, size_t sz, const char *k)
{
	char pat[40];

	snprintf(pat, sizeof pat, " %s ", k);
	if (strstr(kinds, pat) == NULL)
		snprintf(kinds + strlen(kinds), sz - strlen(kinds), "%s ", k);
}

static int
count_dsr(const char *b, size_t n)
{
	int k = 0;

	for (size_t i = 0; i + 4 <= n; i++)
		if (memcmp(b + i, "\033[6n", 4) == 0)
			k++;
	return k;
}

/*
 * Compare the two models; every difference found goes to report (first
 * few of each kind) and its kind to kinds.
 */
static void
compare(const struct rec *r, struct pty_screen *a, struct pty_screen *b,
    const char *info, char *kinds, size_t ksz, char *report, size_t rsz)
{
	struct pty_cursor cur;
	struct pty_modes m;
	int tx, ty, tvis, talt, tmouse, tsgr, tcur, tkey, nrep = 0;

	/* The first few of each kind go to the report. */
#define DIFF(kind, ...) do {						\
		char pat_[40];						\
									\
		snprintf(pat_, sizeof pat_, " %s ", kind);		\
		if (strstr(kinds, pat_) == NULL)			\
			nrep = 0;					\
		add(kinds, ksz, kind);					\
		if (nrep++ < 4 && strstr(kinds, pat_) + strlen(pat_) ==	\
		    kinds + strlen(kinds))				\
			snprintf(report + strlen(report), rsz -	\
			    strlen(report), __VA_ARGS__);		\
	} while (0)
	for (int y = 0; y < r->rows; y++) {
		for (int x = 0; x < r->cols; x++) {
			struct pty_cell c, t;

			pty_screen_cell(a, y, x, &c);
			pty_screen_cell(b, y, x, &t);
			/* A blank is a space (capture-pane writes both so). */
			if (c.cp[0] == ' ' && c.cp[1] == 0)
				c.cp[0] = 0;
			if (t.cp[0] == ' ' && t.cp[1] == 0)
				t.cp[0] = 0;
			if (memcmp(c.cp, t.cp, sizeof c.cp) != 0)
				DIFF("text", "  %d,%d text U+%04X/U+%04X\n", y,
				    x, c.cp[0], t.cp[0]);
			else if (c.width != t.width)
				DIFF("width", "  %d,%d width %u/%u\n", y, x,
				    c.width, t.width);
			if (c.fg != t.fg)
				DIFF("fg", "  %d,%d fg %08x/%08x\n", y, x, c.fg,
				    t.fg);
			if (c.bg != t.bg && c.cp[0] == 0 && t.cp[0] == 0 &&
			    t.bg == PTY_COLOR_DEFAULT)
				DIFF("erasebg", "  %d,%d erased bg %08x/%08x\n",
				    y, x, c.bg, t.bg);
			else if (c.bg != t.bg)
				DIFF("bg", "  %d,%d bg %08x/%08x\n", y, x, c.bg,
				    t.bg);
			if (c.attrs != t.attrs)
				DIFF("attrs", "  %d,%d attrs %04x/%04x\n", y,
				    x, c.attrs, t.attrs);
		}
	}
	ck_assert_int_eq(sscanf(info, "%d %d %d %d %d %d %d %d", &tx, &ty,
	    &tvis, &talt, &tmouse, &tsgr, &tcur, &tkey), 8);
	pty_screen_cursor(a, &cur);
	pty_screen_modes(a, &m);
	if (cur.row != ty || cur.col != tx)
		DIFF("cursor", "  cursor %d,%d/%d,%d\n", cur.row, cur.col, ty,
		    tx);
	if (cur.visible != (tvis != 0))
		DIFF("visible", "  cursor visible %d/%d\n", cur.visible, tvis);
	if (m.altscreen != (talt != 0))
		DIFF("alt", "  alternate screen %d/%d\n", m.altscreen, talt);
	if ((m.mouse != PTY_MOUSE_NONE) != (tmouse != 0))
		DIFF("mouse", "  mouse %u/%d\n", m.mouse, tmouse);
	if (m.mouse_sgr != (tsgr != 0))
		DIFF("mousesgr", "  mouse sgr %d/%d\n", m.mouse_sgr, tsgr);
	if (m.app_cursor != (tcur != 0))
		DIFF("appcursor", "  app cursor %d/%d\n", m.app_cursor, tcur);
	if (m.app_keypad != (tkey != 0))
		DIFF("appkeypad", "  app keypad %d/%d\n", m.app_keypad, tkey);
#undef DIFF
}

/* Scrollback line idx of a as text, as pty_screen_row_text writes a row. */
static void
sb_text(struct pty_screen *a, size_t idx, char *buf, size_t bufsz)
{
	struct pty_cell cells[1000];
	size_t len = 0;
	int n = pty_screen_sb_line(a, idx, cells, 1000);

	buf[0] = '\0';
	for (int x = 0; x < n && x < 1000; x++) {
		char t[64];
		size_t tl;

		if (cells[x].width == 0)
			continue;
		if (cells[x].cp[0] == 0)
			snprintf(t, sizeof t, " ");
		else
			pty_cell_utf8(&cells[x], t, sizeof t);
		tl = strlen(t);
		if (len + tl + 1 > bufsz)
			break;
		memcpy(buf + len, t, tl + 1);
		len += tl;
	}
	while (len > 0 && buf[len - 1] == ' ')
		buf[--len] = '\0';
}

/* Line text (capture-pane -e) as a one-row model reads it. */
static void
cap_text(const char *line, size_t n, int cols, char *buf, size_t bufsz)
{
	struct pty_screen *m = NULL;

	ck_assert_int_eq(pty_screen_new(&m, 1, cols, 0), 0);
	pty_screen_feed(m, "\033)0", 3);
	pty_screen_feed(m, line, n);
	pty_screen_row_text(m, 0, buf, bufsz);
	pty_screen_free(m);
}

/*
 * The scrollback: as many lines as tmux's history, each the same text
 * (capture-pane -p, trailing blanks dropped).
 */
static void
compare_history(struct pty_screen *a, int cols, const char *info,
    const char *hist, char *kinds, size_t ksz, char *report, size_t rsz)
{
	const char *p = hist;
	long th = -1;
	int f[8], nrep = 0;
	char mine[2048], theirs[2048];

	ck_assert_int_eq(sscanf(info, "%d %d %d %d %d %d %d %d %ld", &f[0],
	    &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &th), 9);
	if ((size_t)th != pty_screen_sb_count(a)) {
		add(kinds, ksz, "history");
		snprintf(report + strlen(report), rsz - strlen(report),
		    "  history %zu lines/%ld\n", pty_screen_sb_count(a), th);
		return;
	}
	for (long i = 0; i < th && *p != '\0'; i++) {
		const char *e = strchr(p, '\n');
		size_t n = e != NULL ? (size_t)(e - p) : strlen(p);

		sb_text(a, (size_t)i, mine, sizeof mine);
		cap_text(p, n, cols, theirs, sizeof theirs);
		if (strcmp(mine, theirs) != 0) {
			add(kinds, ksz, "history");
			if (nrep++ < 4)
				snprintf(report + strlen(report), rsz -
				    strlen(report), "  history %ld: \"%s\"/"
				    "\"%s\"\n", i, mine, theirs);
		}
		p += n + (e != NULL);
	}
}

/*
 * Feed recording r to the model and to tmux, resized to rrows x rcols
 * after (0: not), and compare; the differences must be those KNOWN lists
 * for key (NAME, or NAME@ROWSxCOLS).
 */
static void
run_case(const struct rec *r, int rrows, int rcols)
{
	char path[512], key[96], *rel, *bytes, *cap, *info, *hist;
	char kinds[512] = " ", allowed[512], also[512] = " ";
	char report[16384] = "";
	struct pty_screen *a = NULL, *b;
	struct rec shown = *r;
	size_t len;

	snprintf(path, sizeof path, "tests/fixtures/tmuxdiff/%s.bytes",
	    r->name);
	rel = cu_src_path(path);
	bytes = cu_read_file(rel, &len);
	ck_assert_msg(bytes != NULL, "cannot read %s", rel);
	ck_assert_int_eq(pty_screen_new(&a, r->rows, r->cols, 1000), 0);
	pty_screen_feed(a, bytes, len);
	if (rrows > 0) {
		ck_assert_int_eq(pty_screen_resize(a, rrows, rcols), 0);
		shown.rows = rrows;
		shown.cols = rcols;
		snprintf(key, sizeof key, "%s@%dx%d", r->name, rrows, rcols);
	} else {
		snprintf(key, sizeof key, "%s", r->name);
	}
	tmux_view(r, rel, count_dsr(bytes, len), rrows, rcols, &cap, &info,
	    &hist);
	b = from_capture(&shown, cap);
	compare(&shown, a, b, info, kinds, sizeof kinds, report,
	    sizeof report);
	if (rrows > 0)
		compare_history(a, rcols, info, hist, kinds, sizeof kinds,
		    report, sizeof report);
	known_kinds(key, allowed, sizeof allowed);
	/*
	 * Resized, what KNOWN says of the recording itself may stay (or be
	 * gone when its cells are cut): allowed, not required.
	 */
	if (rrows > 0)
		known_kinds(r->name, also, sizeof also);
	/* Every difference must be known, every known one still there. */
	for (char *k = strtok(kinds, " "); k != NULL; k = strtok(NULL, " ")) {
		char pat[40];

		snprintf(pat, sizeof pat, " %s ", k);
		if (strstr(allowed, pat) == NULL && strstr(also, pat) != NULL)
			continue;
		ck_assert_msg(strstr(allowed, pat) != NULL,
		    "%s: corral and tmux differ (%s) and KNOWN does not say "
		    "why (corral/tmux):\n%s", key, k, report);
		memmove(strstr(allowed, pat), strstr(allowed, pat) +
		    strlen(pat) - 1, strlen(strstr(allowed, pat) +
		    strlen(pat) - 1) + 1);
	}
	ck_assert_msg(strcmp(allowed, " ") == 0, "%s: KNOWN lists "
	    "differences no longer seen:%s", key, allowed);
	pty_screen_free(a);
	pty_screen_free(b);
	free(bytes);
	free(cap);
	free(info);
	free(hist);
	free(rel);
}

/* Loop index _i: the _i-th recording of INDEX. */
START_TEST(test_tmuxdiff_recording)
{
	struct rec v[MAXREC];
	int n = read_index(v);

	ck_assert_msg(_i < n, "no recording %d in a readable "
	    "tests/fixtures/tmuxdiff/INDEX", _i);
	run_case(&v[_i], 0, 0);
}
END_TEST

/* Loop index _i: recording _i / NRESIZE, resized by RESIZES[_i % NRESIZE]. */
START_TEST(test_tmuxdiff_resized)
{
	struct rec v[MAXREC];
	int n = read_index(v), k = _i % NRESIZE;
	const struct rec *r;

	ck_assert_msg(_i / NRESIZE < n, "no recording %d in a readable "
	    "tests/fixtures/tmuxdiff/INDEX", _i / NRESIZE);
	r = &v[_i / NRESIZE];
	run_case(r, r->rows + RESIZES[k][0], r->cols + RESIZES[k][1]);
}
END_TEST

Suite *
tmuxdiff_suite(void)
{
	Suite *s = suite_create("tmuxdiff");
	TCase *tc = tcase_create("Recordings");
	struct rec v[MAXREC];
	int n = read_index(v);

	TCase *rs = tcase_create("Resized");

	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, test_tmuxdiff_recording, 0, n > 0 ? n : 1);
	suite_add_tcase(s, tc);
	tcase_set_timeout(rs, 600);
	tcase_add_loop_test(rs, test_tmuxdiff_resized, 0,
	    n > 0 ? n * NRESIZE : 1);
	suite_add_tcase(s, rs);
	return s;
}
