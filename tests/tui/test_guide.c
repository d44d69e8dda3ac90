/*
 * test_guide.c: docs/user-guide.md keeps up with the console: its key
 * table has a row for every line of the help overlay (tui_keys_help),
 * with the same keys and words, and it lists every visible command.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/check_util.h"
#include "tui/cli/cli.h"
#include "tui/console/console.h"

Suite *guide_suite(void);

static char *
guide(void)
{
	char *path = cu_src_path("docs/user-guide.md");
	char *text = cu_read_file(path, NULL);

	free(path);
	ck_assert_ptr_nonnull(text);
	return text;
}

/* The table row of a help line: "| `k1` `k2` | what |". */
static void
row_for(const struct tui_help_line *h, char *buf, size_t bufsz)
{
	char keys[128], *tok, *save = NULL;
	size_t n = 0;

	snprintf(keys, sizeof keys, "%s", h->keys != NULL ? h->keys : "C-b");
	n += (size_t)snprintf(buf + n, bufsz - n, "|");
	for (tok = strtok_r(keys, " ", &save); tok != NULL;
	    tok = strtok_r(NULL, " ", &save))
		n += (size_t)snprintf(buf + n, bufsz - n, " `%s%s`",
		    h->prefixed ? "C-b " : "", tok);
	snprintf(buf + n, bufsz - n, " | %s |", h->what);
}

START_TEST(test_guide_key_table_matches_help)
{
	const struct tui_help_line *h;
	char *text = guide(), row[256];
	size_t n, i;

	h = tui_keys_help(&n);
	ck_assert_uint_gt(n, 0);
	for (i = 0; i < n; i++) {
		row_for(&h[i], row, sizeof row);
		if (strstr(text, row) == NULL)
			ck_abort_msg("docs/user-guide.md lacks the key row "
			    "\"%s\"", row);
	}
	free(text);
}
END_TEST

START_TEST(test_guide_lists_commands)
{
	char *text = guide(), want[64];

	for (size_t i = 0; tui_cmds[i] != NULL; i++) {
		snprintf(want, sizeof want, "`corral %s", tui_cmds[i]->name);
		if (strstr(text, want) == NULL)
			ck_abort_msg("docs/user-guide.md does not list "
			    "'corral %s'", tui_cmds[i]->name);
	}
	free(text);
}
END_TEST

Suite *
guide_suite(void)
{
	Suite *s = suite_create("guide");
	TCase *tc = tcase_create("Core");

	tcase_add_test(tc, test_guide_key_table_matches_help);
	tcase_add_test(tc, test_guide_lists_commands);
	suite_add_tcase(s, tc);
	return s;
}
