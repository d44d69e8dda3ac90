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

#include "tui/console/console.h"

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
/* True if argv holds -h/--help before any "--". */
bool tui_wants_help(int argc, char **argv);

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
/*
 * The operator looked at lease id (`show` or `screen` printed on a
 * terminal): clear its unseen mark if set (SPEC 5.2). --json and output
 * into a pipe or a file are for scripts and leave the mark. Best effort.
 */
void tui_mark_seen(struct tui_ctx *, const char *id, bool unseen);
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
/*
 * holder_main.c: `corral __holder ...` (argv[1] is "__holder"), the
 * holder process; main.c dispatches it before the command table.
 */
int tui_holder_main_run(int argc, char **argv);

/* wrap.c: this terminal as the owner's view of a trusted_local lease */
int tui_wrap_attach(struct tui_ctx *, const char *id, int sockfd);

/* ------------------------------------------------------------------ */
/* config.c: the operator's config file (SPEC 5.6)                      */

/*
 * $XDG_CONFIG_HOME/corral/config (else ~/.config/corral/config), INI:
 *
 *   [notify]
 *   hook = notify-send corral    ; shell command line; gets ID STATE NAME
 *   on = blocked, done, failed   ; the activity states that notify
 *   timeout = 10                 ; seconds before the hook is killed
 *   bell = off                   ; console: BEL to the outer terminal
 *   osc9 = off                   ; console: OSC 9 to the outer terminal
 *
 *   [console]
 *   theme = light                ; themes/NAME.theme or a theme file
 *
 * `on` applies to the hook, the bell and OSC 9 alike. The holder runs the
 * hook (so it works with no console); the console rings and sends OSC 9.
 */
#define TUI_CONFIG_HOOK_MAX 256
#define TUI_CONFIG_TIMEOUT_DEFAULT 10	/* seconds */
#define TUI_CONFIG_ON(a) (1u << (unsigned)(a)) /* a: enum tui_activity */

/*
 * [command]: the command adapter's hooks (SPEC 8.1, docs/command-adapter.md)
 *   provision, exec, teardown, list = /abs/program [ARGS]  (absolute only)
 *   timeout = 300                ; seconds, each hook but exec
 */
#define TUI_CONFIG_CMD_MAX 1024

struct tui_config {
	char hook[TUI_CONFIG_HOOK_MAX];	/* "" when none */
	unsigned notify_on;		/* TUI_CONFIG_ON() bits */
	unsigned hook_timeout_ms;
	bool bell;
	bool osc9;
	/* [command]: "" when unset */
	char cmd_provision[TUI_CONFIG_CMD_MAX], cmd_exec[TUI_CONFIG_CMD_MAX];
	char cmd_teardown[TUI_CONFIG_CMD_MAX], cmd_list[TUI_CONFIG_CMD_MAX];
	unsigned long long cmd_timeout_ms;	/* 0: the adapter's defaults */
	/* [console] */
	char theme[256];		/* theme name or file; "" default */
};

/* A problem in the config: file, 1-based line (0: the whole file). */
typedef void (*tui_config_error_cb)(const char *file, int line,
    const char *msg, void *ud);

/* The defaults: no hook, on = blocked done failed, 10 s, bell/osc9 off. */
void tui_config_default(struct tui_config *);
/*
 * Parse text as if read from file. Every problem goes to err with its
 * line; if there is any, *cf gets the defaults (a file is never applied in
 * part) and -EINVAL is returned. 0 on success, -ENOMEM.
 */
int tui_config_parse(struct tui_config *, const char *file,
    const char *text, size_t len, tui_config_error_cb err, void *ud);
/*
 * Load the operator's config file into *cf: 0 (also when there is none:
 * the defaults), -EINVAL for a malformed file (reported through err, the
 * defaults in *cf), or -errno when it cannot be read.
 */
int tui_config_load(struct tui_config *, tui_config_error_cb err, void *ud);
/* The config file's path into buf; 0, -ENOENT or -ENAMETOOLONG. */
int tui_config_path(char *buf, size_t bufsz);
/* Does entering this activity state (a name) notify? */
bool tui_config_notifies(const struct tui_config *, const char *state);

/* ------------------------------------------------------------------ */
/* notify.c: the notification hook, run by the holder (SPEC 5.6)        */

struct tui_notify;
struct uv_loop_s;

/*
 * Hooks of one holder on loop; their stdout and stderr go to log_fd
 * (the lease's holder.log; borrowed). Returns 0 or -ENOMEM.
 */
int tui_notify_new(struct tui_notify **, struct uv_loop_s *loop,
    const struct tui_config *, int log_fd);
/*
 * Run the hook for a lease entering state, if the config says so:
 * detached (its own session), argv sh -c 'HOOK "$@"' with ID STATE NAME,
 * env CORRAL_LEASE_ID, CORRAL_LEASE_NAME, CORRAL_STATE, and the deciding
 * signal and its evidence escaped (SPEC 4.7) in CORRAL_SIGNAL and
 * CORRAL_DETAIL; agent text is never part of the command line. Killed
 * (its process group) after the timeout. Returns 1 when started, 0 when
 * not configured for state, negative on failure (also logged).
 */
int tui_notify_fire(struct tui_notify *, const char *id, const char *name,
    const char *state, const char *signal, const char *detail);
/*
 * When the loop is done with (the holder's has ended): close the hooks'
 * handles and run the loop once for their close callbacks, wait for hooks
 * still running, each up to its deadline, kill what is left, free all.
 */
void tui_notify_free(struct tui_notify *);

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

/* ------------------------------------------------------------------ */
/* cmd_result.c, result.c: results (SPEC 7)                            */

struct lease_check_run;
struct lease_check_outcome;
struct lease_result_policy;

extern const struct tui_cmd tui_cmd_review;
extern const struct tui_cmd tui_cmd_apply;
extern const struct tui_cmd tui_cmd_reject;

/*
 * tui_result_finish: the end of a sandboxed lease, the one call the
 * holder makes once its agent has ended and every process of the lease
 * has stopped, before the workspace is unmounted or removed (and the call
 * reconciliation makes for a lost holder, with fail_reason "holder_lost":
 * the result then goes to quarantine). The lease's policy gives the caps
 * and checks; checks run in the exec zone (tui_result_run_check). Returns
 * lease_result_finish's code: 0 result_ready, LEASE_EINVALID quarantined,
 * another negative code on error (message on c->store). secret: the
 * lease's minted credential while the holder still has it, or NULL; a
 * result holding it is refused (LEASE_GATE_CREDENTIAL, SPEC 8.5).
 */
int tui_result_finish(struct tui_ctx *, const char *id,
    const char *fail_reason, const char *secret);

/* The lease's policy as result caps and checks (sandbox-adapters' INI). */
struct tui_result_env;
int tui_result_env_new(const struct lease_record *,
    struct tui_result_env **out, char *err, size_t errsz);
void tui_result_env_free(struct tui_result_env *);
const struct lease_result_policy *tui_result_env_policy(
    const struct tui_result_env *);
/*
 * A lease_check_run_cb (ud: the tui_result_env): one check in the exec
 * zone (sbx_plan_exec_zone + sbx_exec_run), as a uid slot claimed for the
 * run, on the copy lease/ made; the log is stdout then stderr, capped.
 */
int tui_result_run_check(const struct lease_check_run *,
    struct lease_check_outcome *, void *ud);
/* Where check copies go (/run/corral/checks), or NULL: the lease dir. */
const char *tui_result_checks_dir(void);
/*
 * A lease_teardown_cb (ud: the tui_ctx) for reject and apply: unmounts a
 * bwrap lease's workspace image (sbx_workspace_umount) so lease_teardown
 * can journal it removed.
 */
int tui_result_before_teardown(const char *id, void *ud);

#endif /* CORRAL_TUI_H */
