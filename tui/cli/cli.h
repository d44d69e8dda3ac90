/*
 * cli.h: the command line (SPEC 11, STYLE A): the command table (cmd.c),
 * the one-shot commands, one family per file (cmd_*.c), and the
 * durations they take (duration.c). main.c dispatches to it.
 */
#ifndef CORRAL_TUI_CLI_H
#define CORRAL_TUI_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tui/tui.h"

/* ------------------------------------------------------------------ */
/* cmd.c: the command table (the tmux cmd_table pattern)              */

struct tui_cmd {
	const char *name;
	const char *usage;	/* after "corral NAME " */
	const char *help;	/* one paragraph */
	int (*exec)(struct tui_ctx *, int argc, char **argv);
};

extern const struct tui_cmd *const tui_cmds[];
int tui_cmd_main(int argc, char **argv);
/* Print `corral NAME --help` text. */
void tui_cmd_help(const struct tui_cmd *, FILE *);

/* cmd_new.c */
extern const struct tui_cmd tui_cmd_new;
extern const struct tui_cmd tui_cmd_wrap;
/* A lease request from inside corral (`corral demo`). */
struct tui_new {
	const char *name, *sandbox, *repo, *base, *agent;
	bool allow_control;
	char **cmd;
	/* NULL: a renamed lease is said on stderr; else the name it got
	 * (TUI_NAME_MAX bytes: names are unique among live leases) */
	char *name_out;
};
/* Create a lease and start its holder; id gets the ID (41 bytes ok). */
int tui_cmd_new_lease(struct tui_ctx *, const struct tui_new *, int owner_fd,
    char id[25]);
/* cmd_fleet.c: the SSH fleet (issue 23) */
extern const struct tui_cmd tui_cmd_fleet;
struct tui_fleet_new {
	const char *host, *label, *repo, *base, *policy, *name, *agent;
	bool allow_control;
	char **cmd;
};
/* `corral new --host NAME | --label LABEL`: the lease on a fleet host. */
int tui_cmd_fleet_new(struct tui_ctx *, const struct tui_fleet_new *);
/* cmd_demo.c */
extern const struct tui_cmd tui_cmd_demo;
/* cmd_usage.c: the models' usage and cost, the spend cap (SPEC 8.5) */
extern const struct tui_cmd tui_cmd_usage;
extern const struct tui_cmd tui_cmd_budget;
/* cmd_ls.c */
extern const struct tui_cmd tui_cmd_ls;
extern const struct tui_cmd tui_cmd_show;
/*
 * The operator looked at lease id (`show` or `screen` printed on a
 * terminal): clear its unseen mark if set (SPEC 5.2). --json and output
 * into a pipe or a file are for scripts and leave the mark. Best effort.
 */
void tui_cmd_ls_mark_seen(struct tui_ctx *, const char *id, bool unseen);
/*
 * cmd_demo.c: remove the demo repositories ($STATE/demo/repo-*) that no
 * lease uses and that have not changed for min_age_ms (gc --older-than),
 * each printed; how many, or -1.
 */
long tui_cmd_demo_prune(struct tui_ctx *, int64_t min_age_ms);
/* cmd_endpoint.c */
extern const struct tui_cmd tui_cmd_screen;
extern const struct tui_cmd tui_cmd_send;
extern const struct tui_cmd tui_cmd_answer;
extern const struct tui_cmd tui_cmd_cancel;
/*
 * Through an open holder connection (freed here): print its screen (after
 * the scrollback with sb; TUI_EXIT_OK, -1 when it sent no whole screen),
 * or type text (escapes as `corral send`) and await the holder's verdict.
 */
struct pty_holder_client;
int tui_cmd_screen_live(struct tui_ctx *, struct pty_holder_client *,
    bool sb);
int tui_cmd_send_live(struct tui_ctx *, struct pty_holder_client *,
    const char *text);
/* cmd_recover.c */
extern const struct tui_cmd tui_cmd_reconcile;
extern const struct tui_cmd tui_cmd_gc;
/*
 * A finished trusted_local lease's processes left in its tracking cgroup
 * (a lost holder's, an expected daemon): killed, the cgroup removed, in a
 * processes_ended receipt "by" by (cmd_recover.c).
 */
void tui_cmd_end_tracked(struct tui_ctx *, const struct lease_record *,
    const char *by);
/* cmd_result.c: results (SPEC 7) */
extern const struct tui_cmd tui_cmd_review;
extern const struct tui_cmd tui_cmd_apply;
extern const struct tui_cmd tui_cmd_reject;
/* cmd_watch.c */
extern const struct tui_cmd tui_cmd_explain;
extern const struct tui_cmd tui_cmd_wait;
extern const struct tui_cmd tui_cmd_events;
extern const struct tui_cmd tui_cmd_report;
/* cmd_doctor.c */
extern const struct tui_cmd tui_cmd_doctor;
/* cmd_attach.c: `corral attach ID` (and `corral` alone: the console) */
extern const struct tui_cmd tui_cmd_attach;

/* ------------------------------------------------------------------ */
/* duration.c: durations on the command line                          */

/* "90", "30s", "10m", "2h", "1d", "1h30m" -> ms; 0 or -EINVAL */
int tui_duration_parse(const char *, int64_t *ms);

#endif /* CORRAL_TUI_CLI_H */
