/*
 * tui.h: the public interface of the composition root (STYLE A): the
 * command table (cmd.c), the shared command context (ctx.c), the holder
 * entry point (holder_main.c) and the one-shot commands (cmd_*.c). The
 * pure console core (keys, layout, redraw, draw, theme, escape) is
 * declared in tui_core.h.
 */
#ifndef CORRAL_TUI_H
#define CORRAL_TUI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "tui/tui_core.h"

struct lease_store;
struct lease_record;
struct json_t;
struct pty_rules;

/* Exit codes (SPEC 11). */
#define TUI_EXIT_OK 0
#define TUI_EXIT_FAIL 1
#define TUI_EXIT_USAGE 2
#define TUI_EXIT_WAIT_OTHER 3
#define TUI_EXIT_TIMEOUT 124

/*
 * A journal write whose failure must not stop the caller (the message is
 * on the store handle and the next reconcile corrects the journal).
 */
#define TUI_BEST_EFFORT(expr)                                             \
	do {                                                              \
		if ((expr) < 0) {                                         \
		}                                                         \
	} while (0)

/* ------------------------------------------------------------------ */
/* ctx.c: what every command shares                                    */

struct tui_ctx {
	const char *argv0;
	char *self;		/* absolute path of this binary */
	char *state_dir;	/* SPEC 11 */
	struct lease_store *store; /* opened by tui_ctx_store */
	bool json;
	const char *cmd;	/* the command word, for messages */
};

int tui_ctx_init(struct tui_ctx *, const char *argv0);
void tui_ctx_free(struct tui_ctx *);
/* Open the journal (creating the state dir 0700). NULL after an error. */
struct lease_store *tui_ctx_store(struct tui_ctx *);
/* "corral CMD: message" on stderr; returns TUI_EXIT_FAIL. */
int tui_err(struct tui_ctx *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Usage error: message, then "try corral CMD --help"; returns 2. */
int tui_usage(struct tui_ctx *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Print a JSON value (one document) to stdout and free it. */
void tui_print_json(struct json_t *);
/* Path of lease id's directory / holder socket (malloc'd). */
char *tui_lease_dir(const struct tui_ctx *, const char *id);
char *tui_holder_sock(const struct tui_ctx *, const char *id);
/*
 * Look up a lease by exact ID or unique name; fills rec. Prints the error
 * and returns non-zero when there is none.
 */
int tui_find_lease(struct tui_ctx *, const char *idname,
    struct lease_record *rec);
/*
 * Load the agent rule files: the shipped ones, then the operator's
 * ($XDG_CONFIG_HOME/corral/agents) overriding by name; problems go to err
 * (file, line, message) and the rest keep working. NULL on -ENOMEM.
 */
struct pty_rules *tui_rules_load(struct tui_ctx *, void (*err)(const char *,
    int, const char *, void *), void *ud);
/* Print untrusted text escaped (SPEC 4.7) to f. */
void tui_put_escaped(FILE *f, const char *s, size_t len);

/* ------------------------------------------------------------------ */
/* cmd.c: the command table (the tmux cmd_table pattern)               */

struct tui_cmd {
	const char *name;
	const char *usage;	/* after "corral NAME " */
	const char *help;	/* one paragraph */
	int (*exec)(struct tui_ctx *, int argc, char **argv);
	bool hidden;
};

extern const struct tui_cmd *const tui_cmds[];
int tui_cmd_main(int argc, char **argv);
/* Print `corral NAME --help` text. */
void tui_cmd_help(const struct tui_cmd *, FILE *);
/* True if argv holds -h/--help before any "--". */
bool tui_wants_help(int argc, char **argv);

/* cmd_new.c */
extern const struct tui_cmd tui_cmd_new;
extern const struct tui_cmd tui_cmd_wrap;
/* A lease request from inside corral (demo, console). */
struct tui_new {
	const char *name, *sandbox, *repo, *base, *agent;
	bool allow_control;
	char **cmd;
};
/* Create a lease and start its holder; id gets the ID (41 bytes ok). */
int tui_new_lease(struct tui_ctx *, const struct tui_new *, int owner_fd,
    char id[25]);
/* cmd_demo.c */
extern const struct tui_cmd tui_cmd_demo;
/* A data file (demo/, themes/, agents/): env, install tree, source tree. */
char *tui_data_path(const struct tui_ctx *, const char *rel);
/* app.c: the console; focus_id may be NULL. Returns the exit code. */
int tui_console_run(struct tui_ctx *, const char *focus_id);
/* cmd_ls.c */
extern const struct tui_cmd tui_cmd_ls;
extern const struct tui_cmd tui_cmd_show;
/* cmd_endpoint.c */
extern const struct tui_cmd tui_cmd_screen;
extern const struct tui_cmd tui_cmd_send;
extern const struct tui_cmd tui_cmd_cancel;
/* cmd_recover.c */
extern const struct tui_cmd tui_cmd_reconcile;
extern const struct tui_cmd tui_cmd_gc;
/* cmd_watch.c */
extern const struct tui_cmd tui_cmd_explain;
extern const struct tui_cmd tui_cmd_wait;
extern const struct tui_cmd tui_cmd_events;
extern const struct tui_cmd tui_cmd_report;
/* duration.c: "90", "30s", "10m", "2h", "1d", "1h30m" -> ms; 0 or -EINVAL */
int tui_duration_parse(const char *, int64_t *ms);
/* holder_main.c */
extern const struct tui_cmd tui_cmd_holder;

/* wrap.c: this terminal as the owner's view of a trusted_local lease */
int tui_wrap_attach(struct tui_ctx *, const char *id, int sockfd);

/* ------------------------------------------------------------------ */
/* spawn.c: starting a detached holder                                  */

struct tui_spawn {
	const char *id;
	const char *sandbox;	/* adapter name */
	char *const *cmd;
	const char *cwd;
	const char *agent;	/* --agent PROFILE, or NULL */
	bool allow_control;
	int rows, cols;
	int owner_fd;		/* -1, or a socket to hand to the holder */
};

/*
 * Start `corral __holder` for a lease, detached (its own session, reparented
 * away from the caller), and wait for its readiness line: 0 and *child_pid
 * when the agent runs, else a negative code with the reason in err.
 */
int tui_spawn_holder(struct tui_ctx *, const struct tui_spawn *,
    pid_t *child_pid, char *err, size_t errsz);

/* ------------------------------------------------------------------ */
/* probe.c: liveness of holders (SPEC 9.2)                              */

enum tui_holder_state { TUI_HOLDER_ALIVE, TUI_HOLDER_DEAD, TUI_HOLDER_WEDGED };

/*
 * Probe the holder of rec: PID and start time, then a status ping with a
 * deadline. On ALIVE, *status_json (optional) gets the malloc'd status.
 * why (optional) gets a reason for DEAD/WEDGED.
 */
enum tui_holder_state tui_probe_holder(const struct tui_ctx *,
    const struct lease_record *, int timeout_ms, char **status_json,
    char *why, size_t whysz);

#endif /* CORRAL_TUI_H */
