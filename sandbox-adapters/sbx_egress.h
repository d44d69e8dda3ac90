/*
 * sbx_egress.h: the agent zone's way out, the sandbox adapters module's
 * second public header (STYLE A): the egress decisions (sbx_egress.c),
 * the auditing CONNECT proxy (sbx_proxy*.c), the model gateway
 * (sbx_gateway*.c), the credential minted for the zone (sbx_cred.c) and
 * the scrubber that keeps its secret out of what is printed
 * (sbx_scrub.c). sbx.h is the adapter interface every caller needs; this
 * is for the holder and the checks that run the zone's services, so the
 * interface does not carry them. Blocks as in sbx.h, one per .c file.
 */
#ifndef CORRAL_SBX_EGRESS_H
#define CORRAL_SBX_EGRESS_H

#include <stdint.h>

#include "sandbox-adapters/sbx.h"

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
/* Is entry an exact "host:port" the allowlist can hold? Pure. */
bool sbx_egress_entry_valid(const char *entry);
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
 * The proxy's request reader (pure; fuzz/fuzz_proxy_request.c): buf is
 * everything the agent sent so far. 0: the head is not complete; 1: it
 * is, and decided (.reason: only a CONNECT whose target the rules allow
 * is SBX_EGRESS_OK or SBX_EGRESS_LOOPBACK_GRANT); -1: not an HTTP
 * request (SBX_EGRESS_MALFORMED). The bytes after .head_len are the
 * tunnel's.
 */
#define SBX_EGRESS_URL_MAX 1024
struct sbx_egress_request {
	char method[16];		/* "" when not read */
	char url[SBX_EGRESS_URL_MAX];	/* the target as sent (capped) */
	size_t urllen;
	bool url_long;			/* longer than SBX_EGRESS_URL_MAX */
	size_t head_len;
	enum sbx_egress_reason reason;
	struct sbx_egress_target target;
};
int sbx_egress_request_read(const struct sbx_egress_rules *,
    const char *buf, size_t n, struct sbx_egress_request *);

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
	 * loopback or in a test's network namespace); "name~addr" is instead
	 * what a lookup of the name answers, vetted like any answer (a
	 * rebinding name on a host without /etc/hosts). The holder takes it
	 * from sbx_proxy_test_env() only; it marks every event it touches
	 * (.test_override) and belongs in the receipt and the doctor's
	 * report. -ENOTSUP in a build without test overrides.
	 */
	const char *test_hosts;
	sbx_proxy_event_cb event;	/* every decision; may be NULL */
	sbx_proxy_inflight_cb inflight;	/* may be NULL */
	void *ud;
	/*
	 * The lease's minted credential (SPEC 8.5), or NULL: scrubbed from
	 * every event's target and host (a CONNECT to "<secret>.evil:443"
	 * must not put the secret in the receipt). Copied.
	 */
	const char *redact;
};

/*
 * $CORRAL_TEST_EGRESS_HOSTS in builds with test overrides (CMake
 * CORRAL_TEST_OVERRIDES, on with CORRAL_TESTS), else always NULL.
 */
const char *sbx_proxy_test_env(void);
/*
 * Create the socket (replacing a stale socket, never another file), and
 * listen on loop. The proxy's own handles do not keep the loop alive.
 * SIGPIPE is set to be ignored (process-wide, as pty_holder_run does).
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

struct sbx_proxy_stats {
	unsigned active;		/* open connections */
	unsigned long long total;	/* connections accepted */
	unsigned long long allowed, denied;
	unsigned long long bytes;	/* both ways, every tunnel */
};
void sbx_proxy_stats(const struct sbx_proxy *, struct sbx_proxy_stats *);

/* ------------------------------------------------------------------ */
/*
 * sbx_gateway.c, sbx_gateway_upstream.c, sbx_gateway_http.c: the lease's
 * model gateway (SPEC 8.5), on the holder's loop next to the egress
 * proxy. Inside the zone corral-sbx-init listens on
 * 127.0.0.1:SBX_GATEWAY_PORT and pipes each connection, byte for byte, to
 * the gateway's socket bound at SBX_GATEWAY_SOCK; the agent's base URL
 * points there and it holds only a placeholder key. The gateway reads
 * each HTTP/1.1 request (http-parser), allows only its API's method and
 * path (sbx_gateway_allowed), replaces every credential header with the
 * real key, and forwards the request to the upstream: plain http to a
 * loopback upstream, else TLS with OpenSSL (the peer verified against
 * the system's store or a CA file, SNI, ALPN http/1.1), one upstream
 * connection per agent connection, kept alive. The response goes back as
 * it comes (server-sent events are never held whole) while its usage is
 * read (sbx_gateway_meter). Every request ends in one event.
 */
#define SBX_GATEWAY_PORT 3129
#define SBX_GATEWAY_URL "http://127.0.0.1:3129"
#define SBX_GATEWAY_SOCK "/run/egress/gateway.sock"	/* inside */
#define SBX_GATEWAY_MODEL_MAX 128
#define SBX_GATEWAY_STOP_MAX 64

struct sbx_gateway;

enum sbx_gateway_api {
	SBX_GATEWAY_ANTHROPIC,	/* Messages, count_tokens, models */
	SBX_GATEWAY_OPENAI,	/* Responses, chat completions, models */
};
/* "anthropic", "openai"; parse: 0 or -EINVAL. */
const char *sbx_gateway_api_name(enum sbx_gateway_api);
SBX_NODISCARD int sbx_gateway_api_parse(const char *,
    enum sbx_gateway_api *);
/*
 * An amount in USD ("5", "0.25", at most nine decimals, up to 10^9) as
 * nano-USD: a spend cap's, a price's. 0 or -EINVAL. Pure.
 */
SBX_NODISCARD int sbx_gateway_usd_parse(const char *s, uint64_t *nano);
/*
 * Would the gateway's TLS set up with ca_file (NULL: the system's trust
 * store)? 0, or -EPROTO when it does not load (for `corral doctor`).
 */
SBX_NODISCARD int sbx_gateway_ca_check(const char *ca_file);
/*
 * Is method + path (the request target up to '?', exactly as sent) one
 * of api's? *metered: it is a model call whose response carries usage.
 * Pure.
 */
bool sbx_gateway_allowed(enum sbx_gateway_api, const char *method,
    const char *path, bool *metered);

/* What one response said it used. */
struct sbx_gateway_usage {
	char model[SBX_GATEWAY_MODEL_MAX];	/* as the upstream names it */
	unsigned long long input;	/* input tokens not read from cache */
	unsigned long long output;
	unsigned long long cache_write;
	unsigned long long cache_read;
	char stop_reason[SBX_GATEWAY_STOP_MAX];	/* "end_turn", "tool_use" */
	bool found;		/* a usage block was read */
	bool unparseable;	/* a metered answer whose usage is unknown */
};

/*
 * The response reader (pure): feed the upstream's bytes as they come;
 * it follows the HTTP framing and reads usage from server-sent events
 * (Anthropic message_start / message_delta; OpenAI response.completed,
 * chat completion chunks) or a JSON body, each bounded. metered: the
 * request was a model call, so a 2xx answer without usage is
 * .unparseable.
 */
struct sbx_gateway_meter;
struct sbx_gateway_meter *sbx_gateway_meter_new(enum sbx_gateway_api,
    bool metered);
void sbx_gateway_meter_free(struct sbx_gateway_meter *);
/*
 * Bytes of the response; *used is how many belong to it (the rest is a
 * next response's). 1: the response is complete; 0: more is wanted; -1:
 * not a valid HTTP response.
 */
int sbx_gateway_meter_feed(struct sbx_gateway_meter *, const char *,
    size_t n, size_t *used);
/* The upstream closed: 1 if that completed the response, else -1. */
int sbx_gateway_meter_eof(struct sbx_gateway_meter *);
int sbx_gateway_meter_status(const struct sbx_gateway_meter *);
/* May the connection carry another request after this response? */
bool sbx_gateway_meter_keep_alive(const struct sbx_gateway_meter *);
void sbx_gateway_meter_usage(const struct sbx_gateway_meter *,
    struct sbx_gateway_usage *);

/*
 * The request reader (pure): feed the agent's bytes; at the end of the
 * head it decides (sbx_gateway_allowed) and, if allowed, writes the
 * upstream's request head: the target under the upstream's base path, a
 * Host of the upstream, no hop-by-hop, credential or Accept-Encoding
 * header of the agent's, the real key in the API's own header
 * (x-api-key / Authorization: Bearer), then the body, re-chunked when it
 * came chunked.
 */
struct sbx_gateway_req;
struct sbx_gateway_req_opts {
	enum sbx_gateway_api api;
	const char *host;	/* the upstream's Host header value */
	const char *base_path;	/* "" or "/prefix" (no trailing '/') */
	const char *key;	/* the real key (not copied) */
};
enum sbx_gateway_req_ev {
	SBX_GWREQ_MORE,		/* everything was used; more is wanted */
	SBX_GWREQ_HEAD,		/* the head ended: decided */
	SBX_GWREQ_DONE,		/* the request ended */
	SBX_GWREQ_BAD,		/* not a request the gateway reads */
};
struct sbx_gateway_req *sbx_gateway_req_new(
    const struct sbx_gateway_req_opts *);
void sbx_gateway_req_free(struct sbx_gateway_req *);
/* Ready for the next request of the connection. */
void sbx_gateway_req_reset(struct sbx_gateway_req *);
/* Bytes of the agent; *used of them were read. */
enum sbx_gateway_req_ev sbx_gateway_req_feed(struct sbx_gateway_req *,
    const char *, size_t n, size_t *used);
/* After HEAD: method, path (printable, capped), allowed, metered. */
const char *sbx_gateway_req_method(const struct sbx_gateway_req *);
const char *sbx_gateway_req_path(const struct sbx_gateway_req *);
bool sbx_gateway_req_allowed(const struct sbx_gateway_req *, bool *metered);
/* The upstream's bytes produced so far; taken, they are gone. */
const char *sbx_gateway_req_out(const struct sbx_gateway_req *, size_t *n);
void sbx_gateway_req_out_clear(struct sbx_gateway_req *);

enum sbx_gateway_verdict {
	SBX_GATEWAY_DONE,	/* forwarded and answered (any status) */
	SBX_GATEWAY_REFUSED,	/* not the API's method and path */
	SBX_GATEWAY_HELD,	/* refused by .admit (a spend cap) */
	SBX_GATEWAY_FAILED,	/* the upstream failed (dial, TLS, reset) */
};
const char *sbx_gateway_verdict_name(enum sbx_gateway_verdict);

/* One request, for the receipt. Borrowed for the callback's duration. */
struct sbx_gateway_event {
	enum sbx_gateway_verdict verdict;
	unsigned long long conn, request;	/* from 1 */
	const char *method, *path;	/* printable, capped */
	int status;		/* the upstream's, or the gateway's own */
	const char *error;	/* why FAILED / HELD / REFUSED, else NULL */
	bool metered;
	struct sbx_gateway_usage usage;
	unsigned long long bytes_up, bytes_down, ms;
};
typedef void (*sbx_gateway_event_cb)(const struct sbx_gateway_event *,
    void *ud);
/* Model requests in flight: n; how the last one stopped, or NULL. */
typedef void (*sbx_gateway_inflight_cb)(unsigned n, const char *stop,
    void *ud);
/*
 * Asked before each allowed request is forwarded: NULL lets it go; else
 * the reason it is held (the agent gets an error body saying so).
 */
typedef const char *(*sbx_gateway_admit_fn)(const char *method,
    const char *path, void *ud);
typedef void (*sbx_gateway_close_cb)(void *ud);

#define SBX_GATEWAY_MAX_ACTIVE 32	/* agent connections at once */
#define SBX_GATEWAY_REQUEST_MS 30000	/* an agent's request head */
#define SBX_GATEWAY_ANSWER_MS 600000	/* the upstream's first bytes */

struct sbx_gateway_opts {
	const char *sock_path;	/* absolute; its directory must exist */
	uid_t uid;		/* the lease uid: owner of the socket */
	gid_t gid;
	enum sbx_gateway_api api;
	/* http://127.0.0.1:PORT[/base] or https://HOST[:PORT][/base] */
	const char *upstream;
	const char *key;	/* the real key: copied, wiped at close */
	const char *ca_file;	/* NULL: the system's trust store */
	sbx_gateway_event_cb event;	/* may be NULL */
	sbx_gateway_inflight_cb inflight;	/* may be NULL */
	sbx_gateway_admit_fn admit;	/* may be NULL */
	void *ud;
};
/*
 * Check the upstream URL: 0 and its parts, or -EINVAL (why says what).
 * A plain http upstream must be a loopback address. Pure.
 */
struct sbx_gateway_url {
	bool tls;
	char host[256];		/* no brackets */
	unsigned port;
	char authority[272];	/* the Host header: host[:port] */
	char base_path[512];	/* "" or "/prefix" */
};
SBX_NODISCARD int sbx_gateway_url_parse(const char *url,
    struct sbx_gateway_url *, char *why, size_t whysz);
/*
 * Create the socket (0600, owned by uid; replacing a stale socket) and
 * the TLS context (its CA file read now), and listen on loop. The
 * gateway's handles do not keep the loop alive. 0 and *out, -EINVAL,
 * -EEXIST, -ENOMEM, -EPROTO (the TLS context or its CA file), a libuv
 * error.
 */
SBX_NODISCARD int sbx_gateway_start(struct uv_loop_s *,
    const struct sbx_gateway_opts *, struct sbx_gateway **out);
/* Stop: unlink, end every connection; cb(ud) once all is closed. */
void sbx_gateway_close(struct sbx_gateway *, sbx_gateway_close_cb cb,
    void *ud);
struct sbx_gateway_stats {
	unsigned long long connections, requests, refused, held, failed;
	unsigned long long bytes_up, bytes_down;
};
void sbx_gateway_stats(const struct sbx_gateway *,
    struct sbx_gateway_stats *);
/*
 * Give a bwrap agent-zone plan the gateway (before sbx_plan_open_data):
 * bind host_sock read-only at SBX_GATEWAY_SOCK, start corral-sbx-init
 * with "--gateway SBX_GATEWAY_SOCK" (it listens on 127.0.0.1:3129), and
 * NO_PROXY / no_proxy "localhost,127.0.0.1" (the zone's proxy never sees
 * the gateway's traffic). 0, -EINVAL, -EBUSY, -ENOMEM. Pure.
 */
SBX_NODISCARD int sbx_gateway_plan_add(struct sbx_plan *,
    const char *host_sock);

/* ------------------------------------------------------------------ */
/*
 * sbx_cred.c: minted credentials (SPEC 8.5). The operator's config
 * ([credentials] mint, revoke, variable, scope, spend_cap, lifetime) names
 * two hook commands, each run as `/bin/sh -c 'CMD "$@"' NAME ARGS...` (the
 * arguments follow the command line's own) with corral's environment plus
 * the CORRAL_* variables below, stdout and stderr captured, killed (its
 * whole process group) at the timeout:
 *
 *   mint   $1 = lease ID, $2 = lifetime in seconds (never more than the
 *          wall-time limit), $3 = spend cap; also CORRAL_LEASE_ID,
 *          CORRAL_CRED_LIFETIME, CORRAL_CRED_SPEND_CAP, CORRAL_CRED_SCOPE.
 *          Prints the credential (1..SBX_CRED_MAX visible characters) and a
 *          newline on stdout; exit 0.
 *   revoke $1 = lease ID, $2 = SHA-256 fingerprint; also CORRAL_LEASE_ID,
 *          CORRAL_CRED_FINGERPRINT; the credential itself on stdin. Exit 0
 *          once it no longer works (already revoked or expired counts).
 *
 * The value goes to LEASE_DIR/SBX_CRED_FILE (0600, O_EXCL) and into the
 * agent zone as one variable (sbx_cred_plan_add); never on an argv, never
 * in a receipt: receipts take .fingerprint, .scope, .lifetime_s,
 * .spend_cap and .expires. Mint and revoke block: run them off the loop
 * (before pty_holder_run, after it returns, or in uv_queue_work).
 */
#define SBX_CRED_MAX 4096	/* bytes of a credential */
#define SBX_CRED_VAR_MAX 64
#define SBX_CRED_FILE "credential"	/* in the lease directory */
#define SBX_CRED_IN "/run/corral/credential"	/* inside the agent zone */
#define SBX_CRED_FD 9		/* --ro-bind-data: the credential */

struct sbx_cred_config {
	const char *mint;	/* shell command; NULL: no credentials */
	const char *revoke;	/* shell command; required with mint */
	const char *variable;	/* what the agent sees: ANTHROPIC_API_KEY */
	const char *scope;	/* free text for receipts, e.g. "messages" */
	const char *spend_cap;	/* free text handed to mint, e.g. "5 USD" */
	unsigned long long lifetime_s;	/* 0: the wall-time limit */
	unsigned long long timeout_ms;	/* per hook run; 0: 30 s */
};

struct sbx_cred {
	char *value;		/* the secret: wiped by sbx_cred_free */
	char fingerprint[SBX_SHA256_HEX];	/* SHA-256 of value */
	char variable[SBX_CRED_VAR_MAX];
	char scope[128];
	char spend_cap[64];
	unsigned long long lifetime_s;
	long long expires;	/* unix time */
};

/*
 * No mint: 0. With mint: revoke and an upper-case variable are required.
 * 0 or SBX_EPOLICY with why filled. Pure.
 */
int sbx_cred_config_check(const struct sbx_cred_config *, char *why,
    size_t whysz);
/*
 * Run the mint hook for lease id (lifetime = min(cfg->lifetime_s,
 * wall_time_s), either 0 meaning unset), store the value, return it in
 * *out (sbx_cred_free). 0; SBX_EPOLICY (configuration), SBX_EPROBE (the
 * hook failed or printed no valid credential; why says how, the value
 * scrubbed), -EEXIST (a credential of this lease is already stored:
 * revoke it first), -errno. Blocking.
 */
SBX_NODISCARD int sbx_cred_mint(const struct sbx_cred_config *,
    const char *id, const char *lease_dir, unsigned long long wall_time_s,
    struct sbx_cred **out, char *why, size_t whysz);
void sbx_cred_free(struct sbx_cred *);
/*
 * Revoke lease id's stored credential, if any: 0 when there is none (never
 * minted, already revoked) or the revoke hook succeeded (the file is then
 * removed). On failure the file stays, so a later call (reconcile after a
 * crash) retries: SBX_EPROBE (the hook failed), SBX_EPOLICY (no revoke
 * hook), -errno. Idempotent; call on every exit path. Blocking.
 */
SBX_NODISCARD int sbx_cred_revoke(const struct sbx_cred_config *,
    const char *id, const char *lease_dir, char *why, size_t whysz);
/* Is a credential stored in lease_dir (minted and not yet revoked)? */
bool sbx_cred_present(const char *lease_dir);
/*
 * The stored value of lease_dir's credential (malloc'd; the caller wipes
 * and frees it): for the result gate after a lost holder (SPEC 8.5).
 * 0, -ENOENT (none), -EPERM (not a 0600 regular file of ours), -EINVAL.
 */
SBX_NODISCARD int sbx_cred_read(const char *lease_dir, char **value);
/*
 * Give a bwrap agent-zone plan the credential (before sbx_plan_open_data):
 * the value as a data fd SBX_CRED_FD bound read-only at SBX_CRED_IN, and
 * corral-sbx-init started with "--cred-env VARIABLE", which sets it in the
 * agent's environment only. 0, -EINVAL, -EBUSY, -ENOMEM. Pure.
 */
SBX_NODISCARD int sbx_cred_plan_add(struct sbx_plan *,
    const struct sbx_cred *);

/* ------------------------------------------------------------------ */
/*
 * sbx_scrub.c: the scrubber (pure): every occurrence of the secret becomes
 * "[REDACTED]". The streaming form holds back at most strlen(secret) - 1
 * bytes that could begin an occurrence split across chunks; flush releases
 * them at the end. Apply it to transcripts, logs, receipts and hook or
 * command output.
 */
struct sbx_scrub;
typedef void (*sbx_scrub_out_fn)(const char *buf, size_t len, void *ud);
/* NULL for a NULL or empty secret, or on ENOMEM. The secret is copied. */
struct sbx_scrub *sbx_scrub_new(const char *secret);
void sbx_scrub_free(struct sbx_scrub *);	/* wipes the copy */
void sbx_scrub_feed(struct sbx_scrub *, const void *buf, size_t len,
    sbx_scrub_out_fn out, void *ud);
void sbx_scrub_flush(struct sbx_scrub *, sbx_scrub_out_fn out, void *ud);
size_t sbx_scrub_held(const struct sbx_scrub *);	/* bytes held back */

#endif /* CORRAL_SBX_EGRESS_H */
