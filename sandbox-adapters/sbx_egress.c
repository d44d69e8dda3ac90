/*
 * sbx_egress.c: the pure half of the agent zone's egress (SPEC 8.2, 8.7;
 * SANDBOX.md 5.b): the decision on a CONNECT target, made before any DNS
 * lookup against the exact allowlist; the address filter applied to what a
 * permitted name resolves to; the bwrap options that bind the lease's proxy
 * socket into a plan; and the doctor's egress checks. No I/O here.
 */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <http_parser.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"
#include "sandbox-adapters/sbx_int.h"

static const char *const reason_names[] = {
	[SBX_EGRESS_OK] = "allowed",
	[SBX_EGRESS_LOOPBACK_GRANT] = "loopback-grant",
	[SBX_EGRESS_NOT_CONNECT] = "method-not-connect",
	[SBX_EGRESS_MALFORMED] = "malformed-request",
	[SBX_EGRESS_IP_LITERAL] = "ip-literal",
	[SBX_EGRESS_TRAILING_DOT] = "trailing-dot",
	[SBX_EGRESS_BAD_NAME] = "bad-name",
	[SBX_EGRESS_BAD_PORT] = "bad-port",
	[SBX_EGRESS_NOT_ALLOWED] = "blocked-by-allowlist",
	[SBX_EGRESS_PRIVATE_ADDRESS] = "non-global-address",
	[SBX_EGRESS_RESOLVE_FAILED] = "resolve-failed",
	[SBX_EGRESS_DIAL_FAILED] = "connect-failed",
	[SBX_EGRESS_CAP_CONNECTIONS] = "cap-connections",
	[SBX_EGRESS_CAP_BYTES] = "cap-bytes",
	[SBX_EGRESS_CAP_TIME] = "cap-time",
	[SBX_EGRESS_TIMEOUT] = "request-timeout",
	[SBX_EGRESS_CLOSED] = "closed",
	[SBX_EGRESS_FOREIGN_PEER] = "foreign-peer",
};

const char *
sbx_egress_reason_name(enum sbx_egress_reason r)
{
	if ((unsigned)r >= sizeof reason_names / sizeof reason_names[0] ||
	    reason_names[r] == NULL)
		return "unknown";
	return reason_names[r];
}

bool
sbx_egress_reason_denies(enum sbx_egress_reason r)
{
	switch (r) {
	case SBX_EGRESS_NOT_CONNECT:
	case SBX_EGRESS_MALFORMED:
	case SBX_EGRESS_IP_LITERAL:
	case SBX_EGRESS_TRAILING_DOT:
	case SBX_EGRESS_BAD_NAME:
	case SBX_EGRESS_BAD_PORT:
	case SBX_EGRESS_NOT_ALLOWED:
	case SBX_EGRESS_PRIVATE_ADDRESS:
		return true;
	default:
		return false;
	}
}

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool
is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f');
}

/* "1".."65535", no sign, no leading zero, no blanks. */
static bool
port_parse(const char *s, size_t n, unsigned *port)
{
	unsigned v = 0;

	if (n == 0 || n > 5 || s[0] == '0')
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!is_digit(s[i]))
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return false;
	*port = v;
	return true;
}

/*
 * A label any inet_aton()-style parser would take as part of an address:
 * decimal, octal (leading 0) or hex (0x...), possibly empty after 0x.
 */
static bool
label_numeric(const char *l, size_t n)
{
	if (n >= 2 && l[0] == '0' && l[1] == 'x') {
		for (size_t i = 2; i < n; i++) {
			if (!is_hex(l[i]))
				return false;
		}
		return true;
	}
	for (size_t i = 0; i < n; i++) {
		if (!is_digit(l[i]))
			return false;
	}
	return n > 0;
}

/*
 * Check a lower-cased host name: LDH labels of 1..63 bytes, 253 in all, no
 * trailing dot, not an address in any spelling (dotted, partial, decimal,
 * octal, hex: every such string has a numeric last label, which no real
 * top-level domain has).
 */
static enum sbx_egress_reason
host_check(const char *h, size_t n)
{
	size_t start = 0, last = 0;
	bool all_numeric = true;

	if (n == 0)
		return SBX_EGRESS_MALFORMED;
	if (n > SBX_EGRESS_NAME_MAX)
		return SBX_EGRESS_BAD_NAME;
	for (size_t i = 0; i < n; i++) {
		char c = h[i];

		if (!(is_digit(c) || (c >= 'a' && c <= 'z') || c == '-' ||
		    c == '.'))
			return SBX_EGRESS_BAD_NAME;
	}
	if (h[n - 1] == '.') {
		/* "name." or "name..": a dot-trick either way. */
		return SBX_EGRESS_TRAILING_DOT;
	}
	for (size_t i = 0; i <= n; i++) {
		size_t len;

		if (i < n && h[i] != '.')
			continue;
		len = i - start;
		if (len == 0 || len > 63 || h[start] == '-' ||
		    h[i - 1] == '-')
			return SBX_EGRESS_BAD_NAME;
		if (!label_numeric(h + start, len))
			all_numeric = false;
		last = start;
		start = i + 1;
	}
	if (all_numeric || label_numeric(h + last, n - last))
		return SBX_EGRESS_IP_LITERAL;
	return SBX_EGRESS_OK;
}

enum sbx_egress_reason
sbx_egress_parse(const char *target, size_t len, struct sbx_egress_target *out)
{
	const char *colon;
	size_t hlen;
	enum sbx_egress_reason r;

	assert(out != NULL);
	memset(out, 0, sizeof *out);
	if (target == NULL || len == 0)
		return SBX_EGRESS_MALFORMED;
	if (memchr(target, '\0', len) != NULL)
		return SBX_EGRESS_BAD_NAME;
	/* "[::1]:443" or a bare "::1": IPv6 literals. */
	if (target[0] == '[')
		return SBX_EGRESS_IP_LITERAL;
	if ((colon = memchr(target, ':', len)) == NULL)
		return SBX_EGRESS_MALFORMED;
	if (memchr(colon + 1, ':', len - (size_t)(colon + 1 - target)) != NULL)
		return SBX_EGRESS_IP_LITERAL;
	hlen = (size_t)(colon - target);
	if (hlen > SBX_EGRESS_NAME_MAX)
		return SBX_EGRESS_BAD_NAME;
	for (size_t i = 0; i < hlen; i++) {
		char c = target[i];

		out->host[i] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
	}
	out->host[hlen] = '\0';
	if ((r = host_check(out->host, hlen)) != SBX_EGRESS_OK) {
		memset(out, 0, sizeof *out);
		return r;
	}
	if (!port_parse(colon + 1, len - hlen - 1, &out->port)) {
		memset(out, 0, sizeof *out);
		return SBX_EGRESS_BAD_PORT;
	}
	return SBX_EGRESS_OK;
}

bool
sbx_egress_entry_valid(const char *entry)
{
	struct sbx_egress_target t;

	return entry != NULL &&
	    sbx_egress_parse(entry, strlen(entry), &t) == SBX_EGRESS_OK;
}

enum sbx_egress_reason
sbx_egress_decide(const struct sbx_egress_rules *rules, const char *target,
    size_t len, struct sbx_egress_target *out)
{
	struct sbx_egress_target t, e;
	enum sbx_egress_reason r;

	assert(rules != NULL && out != NULL);
	memset(out, 0, sizeof *out);
	if ((r = sbx_egress_parse(target, len, &t)) != SBX_EGRESS_OK)
		return r;
	/* The one host loopback grant: its exact name and port only. */
	if (rules->loopback_name != NULL && rules->loopback_port != 0 &&
	    t.port == rules->loopback_port &&
	    strcmp(t.host, rules->loopback_name) == 0) {
		*out = t;
		return SBX_EGRESS_LOOPBACK_GRANT;
	}
	for (size_t i = 0; rules->allow != NULL && rules->allow[i] != NULL;
	    i++) {
		const char *a = rules->allow[i];

		/* Entries are matched exactly; an invalid one matches none. */
		if (sbx_egress_parse(a, strlen(a), &e) != SBX_EGRESS_OK)
			continue;
		if (e.port == t.port && strcmp(e.host, t.host) == 0) {
			*out = t;
			return SBX_EGRESS_OK;
		}
	}
	return SBX_EGRESS_NOT_ALLOWED;
}

/* In prefix/bits (host order)? */
static bool
in4(uint32_t a, uint32_t prefix, unsigned bits)
{
	uint32_t mask = bits == 0 ? 0 : 0xffffffffu << (32 - bits);

	return (a & mask) == (prefix & mask);
}

static bool
global4(uint32_t a)
{
	static const struct {
		uint32_t prefix;
		unsigned bits;
	} deny[] = {
		{ 0x00000000, 8 },	/* "this network", unspecified */
		{ 0x0a000000, 8 },	/* private */
		{ 0x64400000, 10 },	/* CGNAT */
		{ 0x7f000000, 8 },	/* loopback */
		{ 0xa9fe0000, 16 },	/* link-local */
		{ 0xac100000, 12 },	/* private */
		{ 0xc0000000, 24 },	/* IETF protocol assignments */
		{ 0xc0000200, 24 },	/* TEST-NET-1 */
		{ 0xc0586300, 24 },	/* 6to4 relay anycast */
		{ 0xc0a80000, 16 },	/* private */
		{ 0xc6120000, 15 },	/* benchmarking */
		{ 0xc6336400, 24 },	/* TEST-NET-2 */
		{ 0xcb007100, 24 },	/* TEST-NET-3 */
		{ 0xe0000000, 4 },	/* multicast */
		{ 0xf0000000, 4 },	/* reserved, broadcast */
	};

	for (size_t i = 0; i < sizeof deny / sizeof deny[0]; i++) {
		if (in4(a, deny[i].prefix, deny[i].bits))
			return false;
	}
	return true;
}

static uint32_t
v4_at(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	    (uint32_t)b[2] << 8 | b[3];
}

static bool
global6(const uint8_t *b)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0xff, 0xff };
	static const uint8_t nat64[12] = { 0, 0x64, 0xff, 0x9b, 0, 0, 0, 0,
		0, 0, 0, 0 };

	/* An IPv4 address in disguise is judged as that address. */
	if (memcmp(b, mapped, 12) == 0 || memcmp(b, nat64, 12) == 0)
		return global4(v4_at(b + 12));
	if (b[0] == 0x20 && b[1] == 0x02)	/* 6to4 2002::/16 */
		return global4(v4_at(b + 2));
	/* Only global unicast 2000::/3 (loopback, ULA, link-local... out) */
	if ((b[0] & 0xe0) != 0x20)
		return false;
	/* 2001::/23 IETF protocol assignments (Teredo...), 2001:db8::/32 */
	if (b[0] == 0x20 && b[1] == 0x01 && b[2] < 0x02)
		return false;
	if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8)
		return false;
	return true;
}

bool
sbx_egress_addr_global(const struct sockaddr *sa)
{
	if (sa == NULL)
		return false;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		return global4(ntohl(in->sin_addr.s_addr));
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 =
		    (const struct sockaddr_in6 *)sa;

		return global6(in6->sin6_addr.s6_addr);
	}
	return false;
}

/* ------------------------------------------------------------------ */
/* Plans: insert bwrap options before the root goes read-only.         */

static int
strv_insert(char ***vp, size_t at, const char *const *add, size_t nadd)
{
	size_t n = 0;
	char **nv;

	while ((*vp)[n] != NULL)
		n++;
	assert(at <= n);
	if ((nv = realloc(*vp, (n + nadd + 1) * sizeof *nv)) == NULL)
		return -ENOMEM;
	*vp = nv;
	memmove(nv + at + nadd, nv + at, (n - at + 1) * sizeof *nv);
	for (size_t i = 0; i < nadd; i++) {
		if ((nv[at + i] = strdup(add[i])) == NULL) {
			/* Undo: nothing half-inserted stays. */
			for (size_t j = 0; j < i; j++)
				free(nv[at + j]);
			memmove(nv + at, nv + at + nadd,
			    (n - at + 1) * sizeof *nv);
			return -ENOMEM;
		}
	}
	return 0;
}

int
sbx__egress_plan_insert(struct sbx_plan *p, const char *const *opts,
    size_t nopts, const char *const *init_args, size_t ninit)
{
	static const char remount[] = "--remount-ro\0/";
	struct sbx_data *d = NULL;
	size_t at = 0, add = 0, ai = 0, off;
	bool found = false;
	char *nb;

	if (p == NULL)
		return -EINVAL;
	for (int i = 0; i < p->ndata; i++) {
		if (p->data[i].to == SBX_BWRAP_ARGS_FD)
			d = &p->data[i];
	}
	if (d == NULL)
		return -EINVAL;
	if (d->fd >= 0)
		return -EBUSY;	/* already sealed into a memfd */
	/* The options: before "--remount-ro /", at an option boundary. */
	for (off = 0; off < d->len; off += strlen(d->bytes + off) + 1) {
		if (d->len - off >= sizeof remount &&
		    memcmp(d->bytes + off, remount, sizeof remount) == 0) {
			at = off;
			found = true;
		}
	}
	if (!found)
		return -EINVAL;
	/* The helper's arguments: right after the helper's path. */
	for (ai = 0; p->argv[ai] != NULL; ai++) {
		if (strcmp(p->argv[ai], SBX_BWRAP_INIT) == 0)
			break;
	}
	if (p->argv[ai] == NULL)
		return -EINVAL;
	for (size_t i = 0; i < nopts; i++)
		add += strlen(opts[i]) + 1;
	if ((nb = malloc(d->len + add)) == NULL)
		return -ENOMEM;
	if (strv_insert(&p->argv, ai + 1, init_args, ninit) < 0) {
		free(nb);
		return -ENOMEM;
	}
	memcpy(nb, d->bytes, at);
	off = at;
	for (size_t i = 0; i < nopts; i++) {
		size_t n = strlen(opts[i]) + 1;

		memcpy(nb + off, opts[i], n);
		off += n;
	}
	memcpy(nb + off, d->bytes + at, d->len - at);
	free(d->bytes);
	d->bytes = nb;
	d->len += add;
	return 0;
}

int
sbx_egress_plan_add(struct sbx_plan *p, const char *host_sock,
    unsigned loopback_port)
{
	const char *no_proxy = loopback_port ? "localhost,127.0.0.1" : "";
	const char *opts[] = {
		"--ro-bind", host_sock, SBX_EGRESS_SOCK,
		"--setenv", "HTTPS_PROXY", SBX_EGRESS_PROXY_URL,
		"--setenv", "https_proxy", SBX_EGRESS_PROXY_URL,
		"--setenv", "HTTP_PROXY", SBX_EGRESS_PROXY_URL,
		"--setenv", "http_proxy", SBX_EGRESS_PROXY_URL,
		"--setenv", "ALL_PROXY", SBX_EGRESS_PROXY_URL,
		"--setenv", "all_proxy", SBX_EGRESS_PROXY_URL,
		"--setenv", "NO_PROXY", no_proxy,
		"--setenv", "no_proxy", no_proxy,
		"--setenv", "NODE_USE_ENV_PROXY", "1",
	};
	char port[8];
	const char *init[] = { "--egress", SBX_EGRESS_SOCK, "--loopback",
		port };

	if (p == NULL || host_sock == NULL || host_sock[0] != '/' ||
	    strstr(host_sock, "/../") != NULL || loopback_port > 65535 ||
	    loopback_port == SBX_EGRESS_PORT)
		return -EINVAL;
	snprintf(port, sizeof port, "%u", loopback_port);
	return sbx__egress_plan_insert(p, opts, sizeof opts / sizeof opts[0], init,
	    loopback_port ? 4 : 2);
}

/* ------------------------------------------------------------------ */
/* The proxy's request (pure).                                          */

struct rqp {
	struct sbx_egress_request *rq;
	bool done;
};

static int
rq_on_url(http_parser *p, const char *at, size_t n)
{
	struct sbx_egress_request *rq = ((struct rqp *)p->data)->rq;

	if (rq->urllen + n > sizeof rq->url) {
		rq->url_long = true;
		n = sizeof rq->url - rq->urllen;
	}
	memcpy(rq->url + rq->urllen, at, n);
	rq->urllen += n;
	return 0;
}

static int
rq_on_headers_complete(http_parser *p)
{
	((struct rqp *)p->data)->done = true;
	return 0;
}

static const http_parser_settings rq_settings = {
	.on_url = rq_on_url,
	.on_headers_complete = rq_on_headers_complete,
};

int
sbx_egress_request_read(const struct sbx_egress_rules *r, const char *buf,
    size_t n, struct sbx_egress_request *rq)
{
	struct rqp st = { rq, false };
	http_parser hp;
	size_t k;

	memset(rq, 0, sizeof *rq);
	rq->reason = SBX_EGRESS_MALFORMED;
	if (n == 0)
		return 0;
	http_parser_init(&hp, HTTP_REQUEST);
	hp.data = &st;
	k = http_parser_execute(&hp, &rq_settings, buf, n);
	rq->head_len = k < n ? k : n;
	/* A CONNECT's head ends the parse (an upgrade); any other method
	 * is refused once its head is read, whatever follows. */
	if (st.done && (hp.http_errno == HPE_OK || hp.method != HTTP_CONNECT)) {
		snprintf(rq->method, sizeof rq->method, "%s",
		    http_method_str((enum http_method)hp.method));
		if (hp.method != HTTP_CONNECT)
			rq->reason = SBX_EGRESS_NOT_CONNECT;
		else if (rq->url_long)
			rq->reason = SBX_EGRESS_BAD_NAME;
		else
			rq->reason = sbx_egress_decide(r, rq->url, rq->urllen,
			    &rq->target);
		return 1;
	}
	return hp.http_errno != HPE_OK ? -1 : 0;
}

int
sbx_gateway_plan_add(struct sbx_plan *p, const char *host_sock)
{
	const char *opts[] = {
		"--ro-bind", host_sock, SBX_GATEWAY_SOCK,
		"--setenv", "NO_PROXY", "localhost,127.0.0.1",
		"--setenv", "no_proxy", "localhost,127.0.0.1",
	};
	const char *init[] = { "--gateway", SBX_GATEWAY_SOCK };

	if (p == NULL || host_sock == NULL || host_sock[0] != '/' ||
	    strstr(host_sock, "/../") != NULL)
		return -EINVAL;
	return sbx__egress_plan_insert(p, opts, sizeof opts / sizeof opts[0],
	    init, 2);
}

/* ------------------------------------------------------------------ */
/* Doctor (SPEC 8.7).                                                  */

static bool
allowed(const struct sbx_egress_rules *r, const char *entry)
{
	struct sbx_egress_target t;
	enum sbx_egress_reason v = sbx_egress_decide(r, entry, strlen(entry),
	    &t);

	return v == SBX_EGRESS_OK || v == SBX_EGRESS_LOOPBACK_GRANT;
}

int
sbx_egress_preflight(const struct sbx_egress_check *c, char *why,
    size_t whysz)
{
	size_t nallow = 0;

	assert(c != NULL);
	if (whysz > 0)
		why[0] = '\0';
	if (c->unrestricted) {
		snprintf(why, whysz, "the policy asks for unrestricted "
		    "network; the agent zone only has an allowlist");
		return SBX_EPOLICY;
	}
	for (size_t i = 0; c->rules.allow != NULL &&
	    c->rules.allow[i] != NULL; i++, nallow++) {
		const char *a = c->rules.allow[i];

		if (strchr(a, '*') != NULL) {
			snprintf(why, whysz, "allowlist entry '%s' is a "
			    "wildcard: unrestricted network", a);
			return SBX_EPOLICY;
		}
		if (!sbx_egress_entry_valid(a)) {
			snprintf(why, whysz, "allowlist entry '%.200s' is not "
			    "an exact host:port name", a);
			return SBX_EPOLICY;
		}
	}
	if (c->rules.loopback_name != NULL || c->rules.loopback_port != 0) {
		const char *n = c->rules.loopback_name;

		if (n == NULL || c->rules.loopback_port == 0 ||
		    c->rules.loopback_port > 65535) {
			snprintf(why, whysz, "the loopback grant needs a name "
			    "and a port 1..65535");
			return SBX_EPOLICY;
		}
		if (host_check(n, strlen(n)) != SBX_EGRESS_OK) {
			snprintf(why, whysz, "loopback grant name '%.100s' is "
			    "not a plain lower-case host name", n);
			return SBX_EPOLICY;
		}
	}
	if (!c->needs_model)
		return 0;
	if (c->model_endpoints == NULL || c->model_endpoints[0] == NULL) {
		/* Any allowed destination may be the model. */
		if (nallow > 0 || c->rules.loopback_port != 0)
			return 0;
		snprintf(why, whysz, "agent '%s' needs a model endpoint and "
		    "the allowlist is empty", c->agent ? c->agent : "?");
		return SBX_EPOLICY;
	}
	for (size_t i = 0; c->model_endpoints[i] != NULL; i++) {
		if (allowed(&c->rules, c->model_endpoints[i]))
			return 0;
	}
	snprintf(why, whysz, "agent '%s' needs a model endpoint (%s%s) and "
	    "none is in the allowlist: configure one in corral's config "
	    "([agent %s] endpoint = URL)", c->agent ? c->agent : "?",
	    c->model_endpoints[0], c->model_endpoints[1] ? ", ..." : "",
	    c->agent ? c->agent : "NAME");
	return SBX_EPOLICY;
}
