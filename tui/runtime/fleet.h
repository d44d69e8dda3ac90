/*
 * fleet.h: the SSH fleet (issue 23, SPEC 8.1 "SSH hosts"): the operator's
 * fleet file (fleet.c), programs run with bounded output and a deadline
 * (fleet_run.c: ssh, git), each host's probe over the real OpenSSH client
 * and the placement of a lease on the least loaded host that can take it
 * (fleet.c). corral itself runs on every host; the operator's machine
 * keeps the policy and sends it with every lease.
 */
#ifndef CORRAL_TUI_RUNTIME_FLEET_H
#define CORRAL_TUI_RUNTIME_FLEET_H

#include <stdbool.h>
#include <stddef.h>

struct json_t;

#define TUI_FLEET_HOSTS_MAX 64
#define TUI_FLEET_LABELS_MAX 8
#define TUI_FLEET_NAME_MAX 64
#define TUI_FLEET_DEST_MAX 256
#define TUI_FLEET_PATH_MAX 1024
#define TUI_FLEET_CAPACITY_MAX 1000
#define TUI_FLEET_TIMEOUT_DEFAULT 10	/* seconds, ssh's ConnectTimeout */

/*
 * $XDG_CONFIG_HOME/corral/fleet.ini (else ~/.config/corral/fleet.ini):
 *
 *   [fleet]
 *   ssh_config = /root/.config/corral/fleet.ssh   ; optional: ssh -F FILE
 *   connect_timeout = 10                         ; seconds, 1..300
 *
 *   [host build1]
 *   ssh = root@build1.example.com   ; ssh's destination ([user@]host or
 *                                   ; ssh://[user@]host[:port])
 *   capacity = 4                    ; live leases at most, 1..1000
 *   labels = big, linux             ; optional
 *   corral = /usr/local/bin/corral  ; optional: corral on the host
 */
struct tui_fleet_host {
	char name[TUI_FLEET_NAME_MAX];
	char dest[TUI_FLEET_DEST_MAX];
	char corral[TUI_FLEET_PATH_MAX];	/* "corral" when unset */
	unsigned capacity;
	char labels[TUI_FLEET_LABELS_MAX][TUI_FLEET_NAME_MAX];
	size_t nlabels;
	int line;				/* of its [host NAME] */
};

struct tui_fleet {
	char file[TUI_FLEET_PATH_MAX];
	char ssh_config[TUI_FLEET_PATH_MAX];	/* "" when unset */
	unsigned connect_timeout;		/* seconds */
	struct tui_fleet_host hosts[TUI_FLEET_HOSTS_MAX];
	size_t nhosts;
};

/* A problem in the fleet file: "FILE:LINE: FIELD: message" in msg. */
struct tui_fleet_error {
	char msg[512];
};

/*
 * Parse text as if read from file: 0, -EINVAL (the first problem in err,
 * naming file, line and field), -ENOMEM. Nothing is applied in part.
 */
int tui_fleet_parse(struct tui_fleet *, const char *file, const char *text,
    size_t len, struct tui_fleet_error *);
/* Load the operator's fleet file: 0, -ENOENT (none), -EINVAL, -errno. */
int tui_fleet_load(struct tui_fleet *, struct tui_fleet_error *);
const struct tui_fleet_host *tui_fleet_find(const struct tui_fleet *,
    const char *name);
bool tui_fleet_has_label(const struct tui_fleet_host *, const char *label);

/* ---- fleet_run.c: a program with bounded output and a deadline ------- */

struct tui_fleet_out {
	char *out;		/* stdout, NUL-terminated (malloc'd) */
	size_t outlen;
	bool out_over;		/* more than the cap was written */
	char err[1024];		/* stderr's start, NUL-terminated */
	int status;		/* exit status, 128+N for signal N */
	bool timed_out;		/* killed at the deadline */
};

/*
 * Run argv[0] (an absolute path) with stdin from in_fd (-1: /dev/null),
 * stdout kept up to outcap bytes, stderr's first KiB; its process group is
 * killed at timeout_ms. 0 once it ended (see o->status), -errno when it
 * could not run. env: NULL for corral's own.
 */
int tui_fleet_run(char *const argv[], char *const env[], int in_fd,
    int out_fd, size_t outcap, unsigned timeout_ms, struct tui_fleet_out *o);
void tui_fleet_out_clear(struct tui_fleet_out *);
/* "exited N: STDERR" (escaped) or "timed out after S s" into buf. */
void tui_fleet_out_why(const struct tui_fleet_out *, char *buf, size_t sz);
/* s quoted for a POSIX shell (the remote side's): malloc'd. */
char *tui_fleet_shquote(const char *s);

/*
 * The operator's effective policy (policy.ini narrowed by file, if any)
 * as the text a host's `corral new --policy` reads; NULL with why.
 */
char *tui_fleet_policy_text(const char *file, char *why, size_t whysz);

/* ---- fleet.c: probes and placement ----------------------------------- */

/* What `corral fleet probe` on a host said, over ssh. */
struct tui_fleet_probe {
	const struct tui_fleet_host *host;
	bool reachable;			/* ssh ran corral there */
	char why[1100];			/* when not usable: the reason */
	char version[64];		/* the host's corral */
	bool same_version;
	bool preflight_ok;
	char halt[64];			/* the preflight's halt, or "" */
	unsigned live;			/* its live leases */
	struct json_t *json;		/* the probe's document, or NULL */
};

/*
 * The ssh argv that runs remote (a shell command line) on host: malloc'd,
 * NULL-terminated, free with tui_fleet_argv_free.
 */
char **tui_fleet_ssh_argv(const struct tui_fleet *, const struct
    tui_fleet_host *, const char *remote);
void tui_fleet_argv_free(char **);
/* Probe one host (`ssh DEST corral fleet probe`); never fails the caller. */
void tui_fleet_probe(const struct tui_fleet *, const struct tui_fleet_host *,
    struct tui_fleet_probe *);
void tui_fleet_probe_clear(struct tui_fleet_probe *);
/* Probe n hosts at once (a thread each); out[i] for hosts[i]. */
void tui_fleet_probe_many(const struct tui_fleet *,
    const struct tui_fleet_host *const *hosts, size_t n,
    struct tui_fleet_probe *out);
/* Usable for a new lease: reachable, same version, preflight, room. */
bool tui_fleet_probe_usable(const struct tui_fleet_probe *);

/*
 * Placement: among the hosts named host (or, without, those with label;
 * neither: all), probe each and pick the least loaded usable one (the
 * first in the file on a tie). 0 with *pick an index into probes (nprobes
 * of them, to clear), or -ENOENT (none matches) / -EAGAIN (none usable)
 * with the reason in why.
 */
int tui_fleet_place(const struct tui_fleet *, const char *host,
    const char *label, struct tui_fleet_probe *probes, size_t *nprobes,
    size_t *pick, char *why, size_t whysz);

#endif /* CORRAL_TUI_RUNTIME_FLEET_H */
