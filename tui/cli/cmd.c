/*
 * cmd.c: the command table and dispatcher (SPEC 11), in the tmux cmd_table
 * style: one entry per command family file, `corral --help`, `corral
 * --version` and `corral CMD --help` printed from the same table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/cli/cli.h"
#include "tui/console/console.h"

const struct tui_cmd *const tui_cmds[] = {
	&tui_cmd_attach,
	&tui_cmd_new,
	&tui_cmd_wrap,
	&tui_cmd_ls,
	&tui_cmd_show,
	&tui_cmd_screen,
	&tui_cmd_send,
	&tui_cmd_answer,
	&tui_cmd_cancel,
	&tui_cmd_review,
	&tui_cmd_apply,
	&tui_cmd_reject,
	&tui_cmd_explain,
	&tui_cmd_wait,
	&tui_cmd_events,
	&tui_cmd_usage,
	&tui_cmd_budget,
	&tui_cmd_report,
	&tui_cmd_reconcile,
	&tui_cmd_gc,
	&tui_cmd_doctor,
	&tui_cmd_fleet,
	&tui_cmd_demo,
	NULL,
};

static const struct tui_cmd *
cmd_find(const char *name)
{
	for (size_t i = 0; tui_cmds[i] != NULL; i++) {
		if (strcmp(tui_cmds[i]->name, name) == 0)
			return tui_cmds[i];
	}
	return NULL;
}

/* Edits (insert, delete, change a byte) from a to b, capped at 3. */
static int
edits(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int row[33], prev, tmp;

	if (la > 32 || lb > 32)
		return 3;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			tmp = row[j];
			row[j] = prev + (a[i - 1] != b[j - 1]);
			if (row[j - 1] + 1 < row[j])
				row[j] = row[j - 1] + 1;
			if (tmp + 1 < row[j])
				row[j] = tmp + 1;
			prev = tmp;
		}
	}
	return row[lb] < 3 ? row[lb] : 3;
}

/* An unknown command: one line, the nearest command if one is near. */
static void
unknown(const char *name)
{
	const struct tui_cmd *best = NULL;
	int d, bd = 3;

	for (size_t i = 0; tui_cmds[i] != NULL; i++)
		if ((d = edits(name, tui_cmds[i]->name)) < bd) {
			bd = d;
			best = tui_cmds[i];
		}
	fprintf(stderr, "corral: unknown command '");
	tui_ctx_put_escaped(stderr, name, strnlen(name, 64));
	fprintf(stderr, "'");
	if (best != NULL)
		fprintf(stderr, "; did you mean '%s'?", best->name);
	fprintf(stderr, " (corral --help lists the commands)\n");
}

void
tui_cmd_help(const struct tui_cmd *c, FILE *f)
{
	fprintf(f, "usage: corral %s %s\n\n%s\n", c->name, c->usage, c->help);
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: corral [--help | --version] [--theme NAME] "
		   "[COMMAND [ARGS...]]\n\n"
		   "corral supervises coding agents: each on its own lease, in "
		   "its own sandbox,\non its own PTY, watched live, with its "
		   "result handed back as a patch.\nWith no command it opens "
		   "the console on every live lease.\n\ncommands:\n");
	for (size_t i = 0; tui_cmds[i] != NULL; i++)
		fprintf(f, "  %-8s %s\n", tui_cmds[i]->name,
		    tui_cmds[i]->usage);
	fprintf(f, "\n'corral COMMAND --help' describes one command. State "
		   "lives in $CORRAL_STATE_DIR,\nelse $XDG_STATE_HOME/corral, "
		   "else ~/.local/state/corral.\n");
}

int
tui_cmd_main(int argc, char **argv)
{
	const struct tui_cmd *c;
	struct tui_ctx ctx;
	int rc;

	if (argc < 2 || strncmp(argv[1], "--theme", 7) == 0) {
		/* `corral` alone: the console on every live lease (SPEC 11). */
		if (tui_ctx_init(&ctx, argv[0]) < 0) {
			fprintf(stderr, "corral: out of memory\n");
			return TUI_EXIT_FAIL;
		}
		rc = tui_cmd_attach_console(&ctx, argc, argv);
		tui_ctx_free(&ctx);
		return rc;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		if (argc > 2 && (c = cmd_find(argv[2])) != NULL) {
			tui_cmd_help(c, stdout);
			return TUI_EXIT_OK;
		}
		usage(stdout);
		return TUI_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("corral %s\n", CORRAL_VERSION);
		return TUI_EXIT_OK;
	}
	if ((c = cmd_find(argv[1])) == NULL) {
		unknown(argv[1]);
		return TUI_EXIT_USAGE;
	}
	if (tui_ctx_wants_help(argc - 1, argv + 1)) {
		tui_cmd_help(c, stdout);
		return TUI_EXIT_OK;
	}
	if (tui_ctx_init(&ctx, argv[0]) < 0) {
		fprintf(stderr, "corral: out of memory\n");
		return TUI_EXIT_FAIL;
	}
	ctx.cmd = c->name;
	rc = c->exec(&ctx, argc - 1, argv + 1);
	tui_ctx_free(&ctx);
	return rc;
}
