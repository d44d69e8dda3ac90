/*
 * tui.h: what the three rooms of tui/ share (STYLE A): the command
 * context (ctx.c: the state directory, the journal handle, lease paths,
 * messages), the operator's config file (config.c), untrusted text made
 * safe to print (escape.c), the activity states' names (activity.c) and
 * a lease's egress decisions (egress.c).
 * Each room has its own header: tui/cli/cli.h (the command line),
 * tui/console/console.h (the console), tui/runtime/runtime.h (a lease's
 * runtime: provisioning and the holder process).
 */
#ifndef CORRAL_TUI_H
#define CORRAL_TUI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

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
	char *scope;		/* tui_ctx_scope */
	struct lease_store *store; /* opened by tui_ctx_store */
	int store_cache_kib;	/* its page cache (lease_store_opts) */
	bool json;
	const char *cmd;	/* the command word, for messages */
};

int tui_ctx_init(struct tui_ctx *, const char *argv0);
void tui_ctx_free(struct tui_ctx *);
/* Open the journal (creating the state dir 0700). NULL after an error. */
struct lease_store *tui_ctx_store(struct tui_ctx *);
/*
 * The state directory as the owner of host resources (uid slots, cgroups,
 * probes: SPEC 9.2): its canonical absolute path, or NULL if there is
 * none (a relative path that does not exist yet).
 */
const char *tui_ctx_scope(struct tui_ctx *);
/* "corral CMD: message" on stderr; returns TUI_EXIT_FAIL. */
int tui_ctx_err(struct tui_ctx *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Usage error: message, then "try corral CMD --help"; returns 2. */
int tui_ctx_usage(struct tui_ctx *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Print a JSON value (one document) to stdout and free it. */
void tui_ctx_print_json(struct json_t *);
/* Path of lease id's directory / holder socket (malloc'd). */
char *tui_ctx_lease_dir(const struct tui_ctx *, const char *id);
/*
 * Names are unique among live leases (issue 21): the journal's insert
 * gives a name a live lease has "-2", "-3"... in its own transaction
 * (lease_spec.unique_name). A buffer of TUI_NAME_MAX bytes holds any
 * name. tui_ctx_name_notice says on stderr that got is not asked.
 */
#define TUI_NAME_MAX 140
void tui_ctx_name_notice(const struct tui_ctx *, const char *asked,
    const char *got);
char *tui_ctx_holder_sock(const struct tui_ctx *, const char *id);
/*
 * Look up a lease by exact ID or name; fills rec. A name held by several
 * leases means the live one (names are unique among live leases); with
 * none live and several ended, the error lists their IDs and states.
 * Prints the error and returns non-zero when there is none.
 */
int tui_ctx_find_lease(struct tui_ctx *, const char *idname,
    struct lease_record *rec);
/*
 * Load the agent rule files: the shipped ones, then the operator's
 * ($XDG_CONFIG_HOME/corral/agents) overriding by name; problems go to err
 * (file, line, message) and the rest keep working. NULL on -ENOMEM.
 */
struct pty_rules *tui_ctx_rules_load(struct tui_ctx *, void (*err)(const char *,
    int, const char *, void *), void *ud);
/* Print untrusted text escaped (SPEC 4.7) to f. */
void tui_ctx_put_escaped(FILE *f, const char *s, size_t len);
/* True if argv holds -h/--help before any "--". */
bool tui_ctx_wants_help(int argc, char **argv);
/* A data file (demo/, themes/, agents/): env, install tree, source tree. */
char *tui_ctx_data_path(const struct tui_ctx *, const char *rel);

/* ------------------------------------------------------------------ */
/* config.c: the operator's config file (SPEC 5.6)                      */

/*
 * $XDG_CONFIG_HOME/corral/config (else ~/.config/corral/config), INI:
 *
 *   [notify]
 *   hook = notify-send corral    ; shell command line; gets ID STATE NAME
 *   on = blocked, done, failed   ; the activity states that notify
 *   timeout = 10                 ; seconds before the hook is killed
 *   interval = 10                ; seconds at least between two hook runs
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
#define TUI_CONFIG_INTERVAL_DEFAULT 10	/* seconds */
#define TUI_CONFIG_ON(a) (1u << (unsigned)(a)) /* a: enum tui_activity */

/*
 * [command]: the command adapter's hooks (SPEC 8.1, docs/command-adapter.md)
 *   provision, exec, teardown, list = /abs/program [ARGS]  (absolute only)
 *   timeout = 300                ; seconds, each hook but exec
 */
#define TUI_CONFIG_CMD_MAX 1024
#define TUI_CONFIG_AGENTS_MAX 16
#define TUI_CONFIG_PROVIDERS_MAX 2

struct tui_config {
	char hook[TUI_CONFIG_HOOK_MAX];	/* "" when none */
	unsigned notify_on;		/* TUI_CONFIG_ON() bits */
	unsigned hook_timeout_ms;
	unsigned hook_interval_ms;	/* between two runs of one lease */
	bool bell;
	bool osc9;
	/* [command]: "" when unset */
	char cmd_provision[TUI_CONFIG_CMD_MAX], cmd_exec[TUI_CONFIG_CMD_MAX];
	char cmd_teardown[TUI_CONFIG_CMD_MAX], cmd_list[TUI_CONFIG_CMD_MAX];
	unsigned long long cmd_timeout_ms;	/* 0: the adapter's defaults */
	/* [console] */
	char theme[256];		/* theme name or file; "" default */
	/* [agent NAME]: each agent profile's model endpoint */
	struct tui_config_agent {
		char name[64];
		char endpoint[512];
	} agents[TUI_CONFIG_AGENTS_MAX];
	size_t nagents;
	/*
	 * [provider NAME] (anthropic, openai): the model gateway's upstream
	 * for every agent that speaks that API (SPEC 8.5); the key never
	 * enters the sandbox. "" when unset.
	 *   upstream = https://api.anthropic.com   ; the default, or a local
	 *                                         ; http://127.0.0.1:PORT
	 *   key_file = /root/.config/corral/anthropic.key   ; absolute, 0600
	 *   ca_file = /etc/corral/ca.pem         ; else the system's store
	 *   spend_cap = 5.00                     ; USD a lease, by default
	 * Without key_file the credentials mint hook supplies the key.
	 */
	struct tui_config_provider {
		char name[16];
		char upstream[512];
		char key_file[1024];
		char ca_file[1024];
		char spend_cap[32];
	} providers[TUI_CONFIG_PROVIDERS_MAX];
	size_t nproviders;
};
/* The endpoint configured for agent profile name, or NULL. */
const char *tui_config_agent_endpoint(const struct tui_config *,
    const char *name);
/* The [provider NAME] section, or NULL. */
const struct tui_config_provider *tui_config_provider(
    const struct tui_config *, const char *name);

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
/*
 * A file of corral's config directory: $XDG_CONFIG_HOME/corral/
 * NAME, else $HOME/.config/corral/NAME (absolute ones only). 0, -ENOENT or
 * -ENAMETOOLONG.
 */
int tui_config_file(const char *name, char *buf, size_t bufsz);
/* Does entering this activity state (a name) notify? */
bool tui_config_notifies(const struct tui_config *, const char *state);

/* ------------------------------------------------------------------ */
/* escape.c: untrusted text made safe to display (SPEC 4.7)            */

/* Flags for tui_escape_ex. */
#define TUI_ESC_BACKSLASH 0x01u /* also write '\' as "\\" (unambiguous) */
#define TUI_ESC_KEEP_NL 0x02u	/* let '\n' through (multi-line output) */
#define TUI_ESC_KEEP_TAB 0x04u	/* let '\t' through */

/*
 * Copy in[0..len) to out as printable UTF-8: C0 controls, DEL, C1 (U+0080
 * to U+009F), bidi controls (U+202A-202E, U+2066-2069, U+200E, U+200F,
 * U+061C), line/paragraph separators (U+2028/2029) and invalid UTF-8 are
 * written visibly as "\t", "\n", "\r", "\xNN" (bytes) or "\uNNNN"
 * (characters). At most outsz-1 bytes are written, never part of a
 * character or of an escape, and out is always NUL-terminated when
 * outsz > 0. Returns the bytes written (without the NUL). Used by the
 * console and the command line alike.
 */
size_t tui_escape(const char *in, size_t len, char *out, size_t outsz);
size_t tui_escape_ex(const char *in, size_t len, char *out, size_t outsz,
    unsigned flags);
/* Bytes tui_escape_ex would need for the whole input (without the NUL). */
size_t tui_escape_size(const char *in, size_t len, unsigned flags);
/*
 * Decode one strict UTF-8 character (no overlongs, surrogates or values
 * over U+10FFFF) from s[0..len): returns its length (1-4) and sets *cp, or
 * -1 when s does not start with a valid character.
 */
int tui_escape_utf8_decode(const char *s, size_t len, uint32_t *cp);
/* Encode cp (<= U+10FFFF) into out[0..4); returns the length (1-4). */
size_t tui_escape_utf8_encode(uint32_t cp, char *out);
/* True when tui_escape would escape the character cp. */
bool tui_escape_cp_unsafe(uint32_t cp);
/*
 * Terminal columns of a printable character: 0 (combining), 1 or 2, from
 * wcwidth() so it agrees with curses (set a UTF-8 LC_CTYPE); characters
 * wcwidth does not know count as 1.
 */
int tui_escape_cp_width(uint32_t cp);
/* Columns of already-escaped (valid, printable) UTF-8 text. */
size_t tui_escape_width(const char *s, size_t len);

/* ------------------------------------------------------------------ */
/* activity.c: activity states as the console shows them               */

/* Activity states (SPEC 5.2) plus the console's own lost/unknown. */
enum tui_activity {
	TUI_ACTIVITY_UNKNOWN,
	TUI_ACTIVITY_STARTING,
	TUI_ACTIVITY_WORKING,
	TUI_ACTIVITY_PROMPT,
	TUI_ACTIVITY_BLOCKED,
	TUI_ACTIVITY_DONE,
	TUI_ACTIVITY_FAILED,
	TUI_ACTIVITY_CANCELLED,
	TUI_ACTIVITY_LOST,
	TUI_ACTIVITY_COUNT
};
/* "working" -> TUI_ACTIVITY_WORKING; unknown words -> UNKNOWN. */
enum tui_activity tui_activity_from_name(const char *);
const char *tui_activity_name(enum tui_activity);
/* The badge letter: S W P B D F C L, '?' for unknown. */
char tui_activity_letter(enum tui_activity);

/* ---- egress.c: a lease's egress decisions (issue 21) ---- */

#define TUI_EGRESS_TARGETS 3

struct tui_egress {
	long long allowed, denied;	/* connections its proxy decided */
	bool proxy;			/* the lease had one */
	const char *targets[TUI_EGRESS_TARGETS];	/* first denied */
	size_t ntargets;
};

/*
 * Count the egress decisions in a lease's receipt entries (a JSON array,
 * as `show --json` has them; targets point into it). False when the lease
 * had no proxy and no decision.
 */
bool tui_egress_count(struct json_t *receipts, struct tui_egress *out);
/*
 * prefix, then "N allowed, N denied (TARGET, ...)" and a newline, targets
 * escaped; false, printing nothing, when there is nothing to say. With a
 * NULL file, only whether there is.
 */
bool tui_egress_line(FILE *, struct json_t *receipts, const char *prefix);

#endif /* CORRAL_TUI_H */
