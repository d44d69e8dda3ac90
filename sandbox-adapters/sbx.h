/*
 * sbx.h: the public interface of the sandbox adapters module (STYLE A):
 * exec plans (sbx_plan.c), the adapter table (sbx_adapters.c) and one file
 * per adapter (sbx_local.c, sbx_bwrap.c, ...). A plan is data: argv, envp,
 * cwd and the whole pre-exec recipe (uid, rlimits, cgroups, fd map), so
 * `.plan` stays pure and unit tests compare argv arrays (SPEC 8.1).
 */
#ifndef CORRAL_SBX_H
#define CORRAL_SBX_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

#define SBX_NODISCARD __attribute__((warn_unused_result))

enum {
	SBX_EBASE = -30000,
	SBX_EUNAVAIL,	/* adapter not available on this host */
	SBX_EPOLICY,	/* policy refuses the request */
	SBX_EPROBE,	/* a preflight probe failed */
};
const char *sbx_strerror(int);

/* ------------------------------------------------------------------ */
/* sbx_plan.c: exec plans                                             */

#define SBX_PLAN_MAX_RLIMITS 8
#define SBX_PLAN_MAX_CGROUPS 8
#define SBX_PLAN_MAX_FDS 8
#define SBX_PLAN_MAX_DATA 6

struct sbx_rlimit {
	int resource;
	rlim_t cur, max;
};

/* Keep fd `from` open in the child as fd `to` (dup2), then close the rest. */
struct sbx_fdmap {
	int from;
	int to;
};

/*
 * Bytes the zone reads from fd `to` when it starts (bwrap --args, and
 * --ro-bind-data for /etc/passwd...): kept in the plan as data so .plan
 * stays pure; sbx_plan_open_data() turns each into a sealed memfd mapped to
 * `to` in fds[] just before the spawn.
 */
struct sbx_data {
	int to;
	char *bytes;
	size_t len;
	int fd;		/* the memfd once opened, else -1; the plan owns it */
};

struct sbx_plan {
	char **argv;	/* NULL-terminated; argv[0] is an absolute path */
	char **envp;	/* NULL-terminated; NULL means an empty environment */
	char *cwd;	/* NULL: do not chdir */
	bool inherit_env; /* trusted_local only: the owner's environment */
	/* pre-exec recipe, applied in the child in this order: */
	char *cgroup_procs[SBX_PLAN_MAX_CGROUPS]; /* cgroup.procs to join */
	int ncgroups;
	struct sbx_fdmap fds[SBX_PLAN_MAX_FDS];
	int nfds;
	struct sbx_data data[SBX_PLAN_MAX_DATA];
	int ndata;
	struct sbx_rlimit rlimits[SBX_PLAN_MAX_RLIMITS];
	int nrlimits;
	bool drop_uid;	/* setgroups(0), setresgid, setresuid to uid/gid */
	uid_t uid;
	gid_t gid;
	bool no_new_privs;
	char label[32];	/* isolation class shown to the operator */
};

struct sbx_plan *sbx_plan_new(void);
void sbx_plan_free(struct sbx_plan *);
/* Append to argv/envp (copied). Return 0 or -ENOMEM. */
SBX_NODISCARD int sbx_plan_arg(struct sbx_plan *, const char *);
SBX_NODISCARD int sbx_plan_env(struct sbx_plan *, const char *name,
    const char *value);
SBX_NODISCARD int sbx_plan_cwd(struct sbx_plan *, const char *);
size_t sbx_plan_argc(const struct sbx_plan *);
/*
 * Attach len bytes (copied) for the zone to read from fd `to` (3..99, not
 * already used). Returns 0, -EINVAL or -ENOMEM. Pure.
 */
SBX_NODISCARD int sbx_plan_data(struct sbx_plan *, int to, const void *buf,
    size_t len);
/* The data attached for fd `to`, or NULL. */
const struct sbx_data *sbx_plan_data_find(const struct sbx_plan *, int to);
/*
 * Not pure: put each data item in a sealed, close-on-exec memfd and map it
 * to its fd in fds[] (pty/proc.c then dup2s it into the child). Call once,
 * right before the spawn: the child reads from the memfd's shared offset.
 * Idempotent; sbx_plan_free closes the memfds. Returns 0 or -errno.
 */
SBX_NODISCARD int sbx_plan_open_data(struct sbx_plan *);

/* ------------------------------------------------------------------ */
/* sbx_adapters.c: the adapter table (the tmux cmd_table pattern)     */

/* A host path bound read-only into a sandbox at dst (both absolute). */
struct sbx_mount {
	const char *src;
	const char *dst;
};

/* What a lease asks of an adapter. */
struct sbx_request {
	const char *id;		/* lease ID */
	const char *lease_dir;	/* per-lease directory (0700) */
	const char *workspace;	/* host path of the workspace, or NULL */
	char *const *cmd;	/* the agent command, NULL-terminated */
	const char *cwd;	/* trusted_local: where to run */
	const char *init_path;	/* host path of corral-sbx-init */
	uid_t uid;		/* per-lease unprivileged uid (bwrap) */
	gid_t gid;
	const struct sbx_mount *ro_binds; /* extra read-only mounts, or NULL */
	int nro_binds;
	unsigned long long tmp_bytes;	/* size of /tmp; 0: the default */
	unsigned long long home_bytes;	/* size of $HOME; 0: the default */
};

struct sbx_adapter {
	const char *name;
	const char *isolation;	/* label: "bwrap", "trusted_local", ... */
	/* Preflight: 0 if usable, else a code with a reason in why. */
	int (*probe)(char *why, size_t whysz);
	/* Build the exec plan (pure). */
	int (*plan)(const struct sbx_request *, struct sbx_plan **out);
};

extern const struct sbx_adapter *const sbx_adapters[];
const struct sbx_adapter *sbx_adapter_find(const char *name);

/* sbx_local.c */
extern const struct sbx_adapter sbx_adapter_local;

/* sbx_bwrap.c: the bwrap adapter, agent zone (SPEC 8.2, 8.3) */
extern const struct sbx_adapter sbx_adapter_bwrap;
#define SBX_BWRAP_PATH "/usr/bin/bwrap"	/* absolute, never from PATH */
#define SBX_BWRAP_INIT "/run/corral/init" /* corral-sbx-init, inside */
#define SBX_BWRAP_HOME "/home/sbx"
#define SBX_BWRAP_WORK "/work"
#define SBX_BWRAP_ARGS_FD 3	/* bwrap --args: the policy, off the argv */
#define SBX_BWRAP_PASSWD_FD 4	/* --ro-bind-data: /etc/passwd */
#define SBX_BWRAP_GROUP_FD 5	/* --ro-bind-data: /etc/group */
#define SBX_BWRAP_HOSTS_FD 6	/* --ro-bind-data: /etc/hosts */
#define SBX_BWRAP_TMP_BYTES (64ull << 20)
#define SBX_BWRAP_HOME_BYTES (64ull << 20)

/*
 * sbx_uid.c: per-lease uids (SANDBOX.md 0.1). Slot N is uid and gid
 * SBX_UID_BASE + N, never a uid of the host's passwd: unique per live lease,
 * so RLIMIT_NPROC, file ownership and host-side process checks are exact.
 * A slot is claimed by creating DIR/slot-N (mkdir is atomic) holding the
 * lease ID; the lowest free slot wins, so allocation is deterministic.
 */
#define SBX_UID_BASE 2000000u
#define SBX_UID_SLOTS 4096u
/* The uid/gid of slot (pure). -EINVAL if slot >= SBX_UID_SLOTS. */
SBX_NODISCARD int sbx_uid_of_slot(unsigned slot, uid_t *uid, gid_t *gid);
/* Claim the lowest free slot under dir for lease id. 0, -ENOSPC, -errno. */
SBX_NODISCARD int sbx_uid_claim(const char *dir, const char *id,
    unsigned *slot);
/* Release slot if id holds it: 0, -ENOENT, -EPERM (another ID), -errno. */
SBX_NODISCARD int sbx_uid_release(const char *dir, unsigned slot,
    const char *id);

/* ------------------------------------------------------------------ */
/*
 * sbx_egress.c: the agent zone's egress, the pure half (SPEC 8.2, 8.7;
 * SANDBOX.md 5.b). Inside the zone corral-sbx-init listens on
 * 127.0.0.1:SBX_EGRESS_PORT and pipes each connection to the lease's
 * proxy socket, bound at SBX_EGRESS_SOCK; the agent's *_PROXY variables
 * point there. A CONNECT target is decided before any DNS lookup: lower
 * case, then an exact host:port match against the allowlist; IP literals
 * in any spelling, trailing dots, non-LDH names, percent or other
 * encodings and ports with leading zeros are refused.
 */
#define SBX_EGRESS_PORT 3128
#define SBX_EGRESS_PROXY_URL "http://127.0.0.1:3128"
#define SBX_EGRESS_SOCK "/run/egress/proxy.sock"	/* inside */
#define SBX_EGRESS_NAME_MAX 253

struct sockaddr;

/* Why a request was allowed, refused, or a tunnel ended. */
enum sbx_egress_reason {
	SBX_EGRESS_OK = 0,		/* on the allowlist */
	SBX_EGRESS_LOOPBACK_GRANT,	/* the policy's host loopback port */
	/* refused before any lookup: */
	SBX_EGRESS_NOT_CONNECT,		/* GET, POST... (absolute form) */
	SBX_EGRESS_MALFORMED,		/* not an HTTP/1.x request, no port */
	SBX_EGRESS_IP_LITERAL,		/* 1.2.3.4, 0x7f.1, 2130706433, [::1] */
	SBX_EGRESS_TRAILING_DOT,	/* "allowed.example." */
	SBX_EGRESS_BAD_NAME,		/* not a plain LDH host name */
	SBX_EGRESS_BAD_PORT,		/* 0, 65536, 0443, "https" */
	SBX_EGRESS_NOT_ALLOWED,		/* host:port not on the allowlist */
	/* refused after the lookup (anti-rebinding): */
	SBX_EGRESS_PRIVATE_ADDRESS,	/* private, loopback, link-local... */
	/* failures and limits, not violations: */
	SBX_EGRESS_RESOLVE_FAILED,
	SBX_EGRESS_DIAL_FAILED,
	SBX_EGRESS_CAP_CONNECTIONS,
	SBX_EGRESS_CAP_BYTES,
	SBX_EGRESS_CAP_TIME,
	SBX_EGRESS_TIMEOUT,		/* no complete request in time */
	SBX_EGRESS_CLOSED,		/* a tunnel ended normally */
	SBX_EGRESS_FOREIGN_PEER,	/* a peer uid not the lease's */
};
/* "blocked-by-allowlist", "ip-literal", ... (the 403 body and logs). */
const char *sbx_egress_reason_name(enum sbx_egress_reason);
/* Is r a refusal that counts as hermeticity_violation (SPEC 8.7)? */
bool sbx_egress_reason_denies(enum sbx_egress_reason r);

struct sbx_egress_rules {
	const char *const *allow;	/* exact "host:port", NULL-terminated */
	const char *loopback_name;	/* e.g. "localhost"; NULL: no grant */
	unsigned loopback_port;		/* the granted 127.0.0.1 port */
};

struct sbx_egress_target {
	char host[SBX_EGRESS_NAME_MAX + 1];	/* lower case */
	unsigned port;
};

/*
 * Parse an authority-form target "host:port" (len bytes, no NUL needed)
 * into *out (lower-cased host). SBX_EGRESS_OK or the refusal. Pure.
 */
enum sbx_egress_reason sbx_egress_parse(const char *target, size_t len,
    struct sbx_egress_target *out);
/* Is entry an exact "host:port" the allowlist can hold? Pure. */
bool sbx_egress_entry_valid(const char *entry);
/*
 * The decision on a CONNECT target, before any lookup: SBX_EGRESS_OK (an
 * allowlist entry matched exactly), SBX_EGRESS_LOOPBACK_GRANT (the grant's
 * name and port: dial 127.0.0.1:port, no lookup), or the refusal. *out is
 * filled on OK and LOOPBACK_GRANT, zeroed otherwise. Pure.
 */
enum sbx_egress_reason sbx_egress_decide(const struct sbx_egress_rules *,
    const char *target, size_t len, struct sbx_egress_target *out);
/*
 * May the proxy dial this resolved address? Only global unicast: no
 * private, loopback, link-local, CGNAT, ULA, multicast, unspecified,
 * documentation, benchmarking or reserved range; IPv4-mapped, NAT64 and
 * 6to4 IPv6 forms are judged by the IPv4 address inside. Pure.
 */
bool sbx_egress_addr_global(const struct sockaddr *);
/*
 * Give a bwrap agent-zone plan its egress (before sbx_plan_open_data):
 * bind host_sock (the lease proxy's socket) read-only at SBX_EGRESS_SOCK;
 * set HTTPS_PROXY, https_proxy, HTTP_PROXY, http_proxy, ALL_PROXY,
 * all_proxy to SBX_EGRESS_PROXY_URL, NO_PROXY and no_proxy to "" (or, with
 * loopback_port, "localhost,127.0.0.1"), NODE_USE_ENV_PROXY=1; and start
 * corral-sbx-init with "--egress SBX_EGRESS_SOCK" (plus "--loopback PORT":
 * it then also listens on 127.0.0.1:PORT inside and tunnels that port
 * through the proxy with CONNECT localhost:PORT). Without it the zone has
 * no network at all. 0, -EINVAL, -EBUSY, -ENOMEM. Pure.
 */
SBX_NODISCARD int sbx_egress_plan_add(struct sbx_plan *,
    const char *host_sock, unsigned loopback_port);

/* The doctor's egress checks (SPEC 8.7). */
struct sbx_egress_check {
	struct sbx_egress_rules rules;	/* the effective policy's */
	bool unrestricted;	/* the policy asks for unrestricted network */
	const char *agent;	/* the agent profile's name, for why */
	bool needs_model;	/* the profile needs a model endpoint */
	/* the endpoints it can use ("host:port"), NULL-terminated; NULL:
	 * any allowlisted destination or the loopback grant will do */
	const char *const *model_endpoints;
};
/*
 * 0, or SBX_EPOLICY with why filled: the lease halts with
 * isolation_unsatisfiable (SBX_HALT_ISOLATION_UNSATISFIABLE, 30) when the
 * policy asks for unrestricted network (unrestricted, or a '*' entry),
 * holds an entry that is not an exact host:port, or a malformed loopback
 * grant, or the agent needs a model endpoint none of which is allowed.
 * Pure.
 */
int sbx_egress_preflight(const struct sbx_egress_check *, char *why,
    size_t whysz);

/* ------------------------------------------------------------------ */
/*
 * sbx_proxy.c: the lease's auditing egress proxy (SPEC 8.2, 8.7;
 * SANDBOX.md 5.b), on the holder's loop so it lives and dies with the
 * lease. It listens only on the per-lease unix socket (0600, owned by the
 * lease uid; a peer of any other uid but root is refused), takes one
 * HTTP/1.x request per connection (http-parser) and allows only CONNECT to
 * a target sbx_egress_decide allows, decided before any lookup. It then
 * resolves the name on the host, refuses it if any address is not global
 * (sbx_egress_addr_global), dials the vetted address itself (never
 * re-resolving), replies 200 and splices both ways under the caps.
 * Refusals get 403 with the reason in the body and an X-Corral-Egress
 * header. Every decision and every tunnel's end is reported to .event.
 */
struct sbx_proxy;
struct uv_loop_s;
struct uv_tcp_s;
struct uv_connect_s;
struct sockaddr_storage;

enum sbx_proxy_verdict {
	SBX_PROXY_ALLOW,	/* a tunnel was opened (.address dialled) */
	SBX_PROXY_DENY,		/* refused: hermeticity_violation */
	SBX_PROXY_LIMIT,	/* refused by a cap (503) */
	SBX_PROXY_ERROR,	/* lookup or dial failed, timeout, bad peer */
	SBX_PROXY_CLOSE,	/* an allowed tunnel ended (bytes, ms) */
};
const char *sbx_proxy_verdict_name(enum sbx_proxy_verdict);

/* One decision, for the receipt. Borrowed for the callback's duration. */
struct sbx_proxy_event {
	enum sbx_proxy_verdict verdict;
	enum sbx_egress_reason reason;
	unsigned long long conn;	/* connection number, from 1 */
	const char *method;	/* "CONNECT", "GET", ...; "" if none */
	const char *target;	/* as sent (non-printables as '?', capped) */
	const char *host;	/* normalised host, "" if refused early */
	unsigned port;
	const char *address;	/* dialled "1.2.3.4:443" / "[::1]:443", "" */
	unsigned long long bytes_up;	/* CLOSE: agent to upstream */
	unsigned long long bytes_down;	/* CLOSE: upstream to agent */
	unsigned long long ms;		/* CLOSE: tunnel lifetime */
	bool test_override;	/* resolved through the test host map */
};

typedef void (*sbx_proxy_event_cb)(const struct sbx_proxy_event *,
    void *ud);
/* The number of requests in flight changed (the detector's EGRESS). */
typedef void (*sbx_proxy_inflight_cb)(unsigned inflight, void *ud);
typedef void (*sbx_proxy_close_cb)(void *ud);
/*
 * Resolver injection. start() looks host up and calls done(token, status,
 * addrs, n) exactly once, later or before it returns (status 0 and n >= 1,
 * or a negative status), and returns 0; or returns a negative error and
 * never calls done. Only names that passed the decision get here. The
 * default (NULL) is uv_getaddrinfo on the loop.
 */
typedef void (*sbx_proxy_resolved_fn)(void *token, int status,
    const struct sockaddr_storage *addrs, size_t n);
typedef int (*sbx_proxy_resolve_fn)(struct uv_loop_s *, const char *host,
    sbx_proxy_resolved_fn done, void *token, void *ud);
/*
 * Dialer injection: connect the initialised tcp handle to addr, as
 * uv_tcp_connect(req, tcp, addr, cb) does (the default, NULL).
 */
typedef int (*sbx_proxy_dial_fn)(struct uv_connect_s *req,
    struct uv_tcp_s *tcp, const struct sockaddr *addr,
    void (*cb)(struct uv_connect_s *, int), void *ud);

#define SBX_PROXY_MAX_ACTIVE 32		/* tunnels at once */
#define SBX_PROXY_MAX_TOTAL 100000	/* connections over the lease */
#define SBX_PROXY_MAX_BYTES (4ull << 30) /* both ways over the lease */
#define SBX_PROXY_TUNNEL_MS (4ull * 3600 * 1000)	/* one tunnel */
#define SBX_PROXY_REQUEST_MS 10000	/* request, lookup and dial */
#define SBX_PROXY_QUIET_MS 1500		/* see sbx_proxy_opts.quiet_ms */

struct sbx_proxy_opts {
	const char *sock_path;	/* absolute; its directory must exist */
	uid_t uid;		/* the lease uid: owner of the socket */
	gid_t gid;
	const char *const *allow;	/* exact "host:port", NULL-terminated */
	const char *loopback_name;	/* "localhost" with loopback_port */
	unsigned loopback_port;		/* 0: no host loopback grant */
	/* caps; 0 means the SBX_PROXY_* default */
	unsigned max_active;
	unsigned long long max_total;
	unsigned long long max_bytes;
	unsigned long long max_tunnel_ms;
	unsigned long long request_ms;
	/*
	 * A tunnel counts as in flight while its lookup or dial runs, while
	 * the agent has sent bytes the upstream has not answered, and for
	 * quiet_ms after the upstream's last bytes (a streamed reply).
	 */
	unsigned long long quiet_ms;
	sbx_proxy_resolve_fn resolve;	/* NULL: uv_getaddrinfo */
	void *resolve_ud;
	sbx_proxy_dial_fn dial;		/* NULL: uv_tcp_connect */
	void *dial_ud;
	/*
	 * The test override, never from a policy: "name=addr[,name=addr]"
	 * maps allowlisted names to fixed addresses with no lookup, and those
	 * addresses skip the global-address filter (a test upstream on
	 * loopback or in a test's network namespace). The holder takes it
	 * from sbx_proxy_test_env() only; it marks every event it touches
	 * (.test_override) and belongs in the receipt and the doctor's
	 * report. -ENOTSUP in a build without test overrides.
	 */
	const char *test_hosts;
	sbx_proxy_event_cb event;	/* every decision; may be NULL */
	sbx_proxy_inflight_cb inflight;	/* may be NULL */
	void *ud;
};

/*
 * $CORRAL_TEST_EGRESS_HOSTS in builds with test overrides (CMake
 * CORRAL_TEST_OVERRIDES, on with CORRAL_TESTS), else always NULL.
 */
const char *sbx_proxy_test_env(void);
/*
 * Create the socket (replacing a stale socket, never another file), and
 * listen on loop. The proxy's own handles do not keep the loop alive.
 * 0 and *out, -EINVAL (bad path or allowlist entry, bad test_hosts),
 * -EEXIST, -ENOTSUP, -ENOMEM, or a libuv error.
 */
SBX_NODISCARD int sbx_proxy_start(struct uv_loop_s *,
    const struct sbx_proxy_opts *, struct sbx_proxy **out);
/*
 * Stop: unlink the socket, end every tunnel (each reported as CLOSE),
 * close every handle; cb(ud) once all are closed, after which the proxy
 * is freed. Lookups in progress are waited for. NULL is a no-op.
 */
void sbx_proxy_close(struct sbx_proxy *, sbx_proxy_close_cb cb, void *ud);
/* Requests in flight now (see quiet_ms). */
unsigned sbx_proxy_inflight(const struct sbx_proxy *);

struct sbx_proxy_stats {
	unsigned active;		/* open connections */
	unsigned long long total;	/* connections accepted */
	unsigned long long allowed, denied;
	unsigned long long bytes;	/* both ways, every tunnel */
};
void sbx_proxy_stats(const struct sbx_proxy *, struct sbx_proxy_stats *);

/* end of the egress blocks (sbx_egress, sbx_proxy, sbx_cred, sbx_command) */

#endif /* CORRAL_SBX_H */
