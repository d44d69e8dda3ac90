/*
 * test_review.c: the review view's model (SPEC 7.4, tui/console/review.c): a
 * review document becomes lines with files and hunks, hunks are dropped
 * and kept, the kept set becomes `corral apply --hunks`'s LIST bound to
 * the patch digest, whole-only files, bad documents, a failing check's
 * log. Its drawing is tested in test_draw.c.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/console/console.h"

Suite *review_suite(void);

/* Two files: a.txt modified with two hunks, new.txt added (one hunk). */
static const char doc[] =
    "{\"id\": \"L1\", \"name\": \"n\\u001b]52;c;x\\u0007\", "
    "\"lease_state\": \"result_ready\", \"reviewed\": true, \"stale\": null,"
    " \"receipt\": {\"length\": 9, \"head\": \"abcdef\", \"verified\": true},"
    " \"result\": {\"status\": \"ready\", \"base\": \"1111111111111111\","
    " \"commit\": \"2222222222222222\", \"patch\": {\"sha256\": "
    "\"115e3d6a99\", \"bytes\": 10}, \"checks\": [{\"name\": \"make\", "
    "\"status\": \"pass\", \"exit\": 0, \"duration_ms\": 1200, "
    "\"independent\": false, \"changed_inputs\": [\"Makefile\"]}]},"
    " \"manifest\": {\"files\": [{\"path\": \"a.txt\", \"status\": "
    "\"modified\", \"flags\": [\"ci\"]}]},"
    " \"diff\": ["
    "{\"id\": \"115e3d6a:1\", \"file\": 1, \"path\": \"a.txt\", \"status\":"
    " \"modified\", \"binary\": false, \"hunks\": ["
    "{\"id\": \"115e3d6a:1:1\", \"header\": \"@@ -1,3 +1,3 @@\", \"lines\":"
    " [[\" \", \"x\"], [\"-\", \"old\"], [\"+\", \"n\\tw\\u001b[31m\"]]},"
    "{\"id\": \"115e3d6a:1:2\", \"header\": \"@@ -20,3 +20,3 @@\", "
    "\"lines\": [[\"-\", \"b\"], [\"+\", \"c\"], [\"\\\\\", \"No newline\"]]}"
    "]},"
    "{\"id\": \"115e3d6a:2\", \"file\": 2, \"path\": \"new.txt\", "
    "\"status\": \"added\", \"binary\": false, \"hunks\": ["
    "{\"id\": \"115e3d6a:2:1\", \"header\": \"@@ -0,0 +1 @@\", \"lines\": "
    "[[\"+\", \"hi\"]]}]}"
    "]}";

static void
load(struct tui_review *rv)
{
	char err[128];

	tui_review_init(rv);
	ck_assert_int_eq(tui_review_parse(rv, doc, strlen(doc), err,
	    sizeof err), 0);
}

/* The index of the first line whose text contains s. */
static size_t
line_of(const struct tui_review *rv, const char *s)
{
	for (size_t i = 0; i < rv->n; i++)
		if (strstr(rv->lines[i].text, s) != NULL)
			return i;
	ck_abort_msg("no line with '%s'", s);
	return 0;
}

START_TEST(test_review_parse)
{
	struct tui_review rv;
	size_t kept, total, i;

	load(&rv);
	ck_assert_str_eq(rv.id, "L1");
	ck_assert_str_eq(rv.digest8, "115e3d6a");
	ck_assert(rv.ready);
	ck_assert_uint_eq(rv.nfiles, 2);
	ck_assert_uint_eq(rv.files[0].nhunks, 2);
	ck_assert(!rv.files[0].whole);
	ck_assert(rv.files[1].whole);	/* added: whole only */
	tui_review_counts(&rv, &kept, &total);
	ck_assert_uint_eq(kept, 3);
	ck_assert_uint_eq(total, 3);
	/* the cursor starts on the first file of the diff */
	ck_assert_int_eq(rv.lines[rv.cur].kind, TUI_RV_FILE);
	/* kinds for colour; tabs expanded; raw text kept for the drawer */
	i = line_of(&rv, "+n");
	ck_assert_int_eq(rv.lines[i].kind, TUI_RV_ADD);
	ck_assert_ptr_nonnull(strstr(rv.lines[i].text, "+n      w\x1b[31m"));
	ck_assert_int_eq(rv.lines[line_of(&rv, "-old")].kind, TUI_RV_DEL);
	ck_assert_int_eq(rv.lines[line_of(&rv, "\\ No newline")].kind,
	    TUI_RV_META);
	ck_assert_int_eq(rv.lines[line_of(&rv, "NOT independent (Makefile)")]
	    .kind, TUI_RV_GOOD);
	ck_assert_int_eq(rv.lines[line_of(&rv, "[ci]")].kind, TUI_RV_WARN);
	line_of(&rv, "verified");
	tui_review_free(&rv);
	tui_review_free(&rv);	/* twice: a no-op */
}
END_TEST

START_TEST(test_review_hunks_list)
{
	struct tui_review rv;
	char buf[256];

	load(&rv);
	/* everything kept: no --hunks at all */
	ck_assert_int_eq(tui_review_hunks(&rv, buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "");
	/* drop the second hunk of a.txt */
	rv.cur = 0;
	tui_review_next_hunk(&rv, 1);
	ck_assert_uint_eq(rv.cur, rv.files[0].hline[0]);
	tui_review_next_hunk(&rv, 1);
	ck_assert_uint_eq(rv.cur, rv.files[0].hline[1]);
	tui_review_move(&rv, 1);	/* a line inside the hunk */
	ck_assert(tui_review_toggle(&rv));
	ck_assert(tui_review_line_dropped(&rv, rv.files[0].hline[1]));
	ck_assert(!tui_review_line_dropped(&rv, rv.files[0].hline[0]));
	ck_assert_int_eq(tui_review_hunks(&rv, buf, sizeof buf), 1);
	ck_assert_str_eq(buf, "115e3d6a:1:1,115e3d6a:2");
	/* the added file goes whole, from any of its lines */
	rv.cur = rv.files[1].hline[0] + 1;
	ck_assert(tui_review_toggle(&rv));
	ck_assert(tui_review_line_dropped(&rv, rv.files[1].line));
	ck_assert_int_eq(tui_review_hunks(&rv, buf, sizeof buf), 1);
	ck_assert_str_eq(buf, "115e3d6a:1:1");
	/* the file header toggles its hunks: dropped ones back first */
	rv.cur = rv.files[0].line;
	ck_assert(tui_review_toggle(&rv));
	ck_assert_int_eq(tui_review_hunks(&rv, buf, sizeof buf), 1);
	ck_assert_str_eq(buf, "115e3d6a:1");
	ck_assert(tui_review_toggle(&rv));
	ck_assert_int_eq(tui_review_hunks(&rv, buf, sizeof buf), -ENOENT);
	/* a buffer too small says so and holds nothing */
	ck_assert(tui_review_toggle(&rv));
	rv.cur = rv.files[0].hline[0];
	ck_assert(tui_review_toggle(&rv));
	ck_assert_int_eq(tui_review_hunks(&rv, buf, 8), -ENOSPC);
	ck_assert_str_eq(buf, "");
	/* a title line is no hunk */
	rv.cur = 0;
	ck_assert(!tui_review_toggle(&rv));
	tui_review_free(&rv);
}
END_TEST

START_TEST(test_review_navigation)
{
	struct tui_review rv;

	load(&rv);
	rv.cur = 0;
	tui_review_next_file(&rv, 1);
	ck_assert_uint_eq(rv.cur, rv.files[0].line);
	tui_review_next_file(&rv, 1);
	ck_assert_uint_eq(rv.cur, rv.files[1].line);
	tui_review_next_file(&rv, 1);	/* the last: stays */
	ck_assert_uint_eq(rv.cur, rv.files[1].line);
	tui_review_next_hunk(&rv, -1);
	ck_assert_uint_eq(rv.cur, rv.files[0].hline[1]);
	tui_review_move(&rv, -100000);
	ck_assert_uint_eq(rv.cur, 0);
	tui_review_move(&rv, 100000);
	ck_assert_uint_eq(rv.cur, rv.n - 1);
	tui_review_scroll(&rv, 5);
	ck_assert_uint_eq(rv.top, rv.n - 5);
	rv.cur = 1;
	tui_review_scroll(&rv, 5);
	ck_assert_uint_eq(rv.top, 1);
	tui_review_free(&rv);
}
END_TEST

START_TEST(test_review_bad_documents)
{
	static const char *const bad[] = { "", "[]", "{\"x\": 1}", "{\"id\"",
		"\x1b]52;c;x\x07" };
	static const char quar[] = "{\"id\": \"Q\", \"lease_state\": "
	    "\"failed\", \"result\": {\"status\": \"quarantined\", "
	    "\"reasons\": [{\"reason\": \"symlink\", \"path\": \"l\"}]}}";
	struct tui_review rv;
	char err[128];

	tui_review_init(&rv);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_int_eq(tui_review_parse(&rv, bad[i], strlen(bad[i]),
		    err, sizeof err), -EINVAL);
		ck_assert_ptr_nonnull(strstr(err, "not a review document"));
		ck_assert_uint_eq(rv.n, 0);
	}
	/* a quarantined result: reasons, nothing to apply */
	ck_assert_int_eq(tui_review_parse(&rv, quar, strlen(quar), err,
	    sizeof err), 0);
	ck_assert(!rv.ready);
	ck_assert_uint_eq(rv.nfiles, 0);
	ck_assert_int_eq(rv.lines[line_of(&rv, "import gate")].kind,
	    TUI_RV_TITLE);
	ck_assert_int_eq(rv.lines[line_of(&rv, "symlink")].kind,
	    TUI_RV_WARN);
	tui_review_free(&rv);
}
END_TEST

/* A failing check shows the tail of its log, from its receipt. */
START_TEST(test_review_failed_check_log)
{
	static const char d2[] = "{\"id\": \"C\", \"lease_state\": "
	    "\"result_ready\", \"result\": {\"status\": \"ready\", "
	    "\"commit\": \"c1\", \"artifacts\": {\"files\": 2, \"bytes\": "
	    "10, \"dir\": \"out\"}, \"checks\": [{\"name\": \"test\", "
	    "\"status\": \"fail\", \"exit\": 2, \"commit\": \"c1\"}]}, "
	    "\"receipts\": [{\"kind\": \"check\", \"fields\": {\"name\": "
	    "\"test\", \"commit\": \"c0\", \"log\": \"old run\"}}, "
	    "{\"kind\": \"check\", \"fields\": {\"name\": \"test\", "
	    "\"commit\": \"c1\", \"log\": \"l1\\nl2\\nl3\\nl4\\nl5\\nl6"
	    "\\nl7\\nl8\\nl9\\nl10\\nl11\\nl12\\nl13\\nFAIL: \\u001b[31m"
	    "boom\\n\"}}]}";
	struct tui_review rv;
	char err[128];
	size_t i, logs = 0;

	tui_review_init(&rv);
	ck_assert_int_eq(tui_review_parse(&rv, d2, strlen(d2), err,
	    sizeof err), 0);
	ck_assert_int_eq(rv.lines[line_of(&rv, "test")].kind, TUI_RV_BAD);
	line_of(&rv, "artifacts 2 file(s), 10 bytes in out");
	for (i = 0; i < rv.n; i++)
		logs += strncmp(rv.lines[i].text, "    | ", 6) == 0;
	ck_assert_uint_eq(logs, 12);
	ck_assert_int_eq(rv.lines[line_of(&rv, "| FAIL: ")].kind,
	    TUI_RV_META);
	line_of(&rv, "| l3");
	ck_assert_ptr_null(strstr(rv.lines[line_of(&rv, "| l4")].text,
	    "old run"));
	for (i = 0; i < rv.n; i++) {
		ck_assert_ptr_null(strstr(rv.lines[i].text, "| l2"));
		ck_assert_ptr_null(strstr(rv.lines[i].text, "old run"));
	}
	tui_review_free(&rv);
}
END_TEST

Suite *
review_suite(void)
{
	Suite *s = suite_create("review");
	TCase *tc = tcase_create("Core");

	tcase_add_test(tc, test_review_parse);
	tcase_add_test(tc, test_review_hunks_list);
	tcase_add_test(tc, test_review_navigation);
	tcase_add_test(tc, test_review_bad_documents);
	tcase_add_test(tc, test_review_failed_check_log);
	suite_add_tcase(s, tc);
	return s;
}
