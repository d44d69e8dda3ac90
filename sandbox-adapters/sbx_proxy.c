/*
 * sbx_proxy.c: the lease's auditing egress proxy on the holder's libuv loop
 * (SPEC 8.2, 8.7; SANDBOX.md 5.b). One request per connection on the
 * lease's unix socket; only CONNECT to an allowed target, decided before
 * any lookup (sbx_egress.c); the resolved addresses are vetted and the
 * vetted one is dialled; then bytes are spliced both ways, one buffer per
 * direction (reading stops while a write is in flight: backpressure).
 */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <http_parser.h>
#include <uv.h>

#include "sandbox-adapters/sbx.h"

#define REQ_MAX 8192		/* request line and headers */
#define URL_MAX 1024
#define BUF_SZ 16384		/* one direction's splice buffer */
#define MAX_ADDRS 8
#define TICK_MS 250
#define TEST_HOSTS_MAX 16
#define TARGET_SHOWN 255

enum tstate {
	T_REQUEST,	/* reading the request */
	T_LOOKUP,	/* the resolver has the name */
	T_DIAL,		/* connecting to the vetted address */
	T_OPEN,		/* 200 sent or being sent; splicing */
	T_DONE,		/* a refusal is being written, or ending */
};

struct test_host {
	char host[SBX_EGRESS_NAME_MAX + 1];
	struct sockaddr_storage ss;
	bool answer;	/* "name~addr": a resolver's answer, vetted as one */
};

struct tunnel {
	struct sbx_proxy *px;
	struct tunnel *prev, *next;
	unsigned long long no;
	enum tstate st;
	uv_pipe_t client;
	uv_tcp_t up;
	uv_timer_t timer;
	uv_connect_t creq;
	uv_write_t wc, wu;	/* writes to the client, to the upstream */
	uv_shutdown_t sc, su;
	http_parser hp;
	char req[REQ_MAX];
	size_t reqlen, parsed;
	bool hdr_done;
	char url[URL_MAX];
	size_t urllen;
	bool url_long;
	char method[16];
	struct sbx_egress_target target;
	bool test_mapped;
	struct sockaddr_storage addrs[MAX_ADDRS];
	size_t naddrs, ai;
	char address[INET6_ADDRSTRLEN + 16];
	char bu[BUF_SZ];	/* towards the upstream */
	char bd[BUF_SZ];	/* towards the client */
	bool wu_busy, wc_busy;
	bool c_eof, u_eof;
	bool up_init;		/* up is initialised and not closing */
	bool lookup_pending;
	bool closing;
	bool allowed;		/* an ALLOW was reported: report a CLOSE */
	bool awaiting;		/* the agent spoke; the upstream not since */
	int refs;		/* open handles + the lookup */
	uint64_t t_open, last_down;
	unsigned long long bytes_up, bytes_down;
	enum sbx_egress_reason end;
};

struct sbx_proxy {
	uv_loop_t *loop;
	uv_pipe_t listener;
	uv_timer_t tick;
	int refs;		/* listener + tick + tunnels */
	char *sock_path;
	char **allow;
	char *loopback_name;
	struct sbx_egress_rules rules;
	struct test_host test[TEST_HOSTS_MAX];
	size_t ntest;
	uid_t uid;
	gid_t gid;
	unsigned max_active;
	unsigned long long max_total, max_bytes, max_tunnel_ms, request_ms;
	unsigned long long quiet_ms;
	sbx_proxy_resolve_fn resolve;
	void *resolve_ud;
	sbx_proxy_dial_fn dial;
	void *dial_ud;
	sbx_proxy_event_cb event;
	sbx_proxy_inflight_cb inflight_cb;
	void *ud;
	char *redact;		/* the lease's credential, or NULL */
	struct tunnel *head;
	unsigned active, inflight;
	unsigned long long total, allowed, denied, bytes;
	bool closing;
	sbx_proxy_close_cb close_cb;
	void *close_ud;
};

static const char *const verdict_names[] = {
	[SBX_PROXY_ALLOW] = "allow",
	[SBX_PROXY_DENY] = "deny",
	[SBX_PROXY_LIMIT] = "limit",
	[SBX_PROXY_ERROR] = "error",
	[SBX_PROXY_CLOSE] = "close",
};

const char *
sbx_proxy_verdict_name(enum sbx_proxy_verdict v)
{
	if ((unsigned)v >= sizeof verdict_names / sizeof verdict_names[0])
		return "unknown";
	return verdict_names[v];
}

const char *
sbx_proxy_test_env(void)
{
#ifdef SBX_TEST_OVERRIDES
	const char *e = getenv("CORRAL_TEST_EGRESS_HOSTS");

	return e != NULL && *e != '\0' ? e : NULL;
#else
	return NULL;
#endif
}

static void proxy_unref(struct sbx_proxy *);
static void tunnel_end(struct tunnel *, enum sbx_egress_reason);
static void dial_next(struct tunnel *);

/* ------------------------------------------------------------------ */
/* Events and the in-flight count.                                     */

static void
show_target(const struct tunnel *t, char *buf, size_t sz)
{
	size_t n = t->urllen < sz - 1 ? t->urllen : sz - 1;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)t->url[i];

		buf[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	buf[n] = '\0';
}

static void
emit(struct tunnel *t, enum sbx_proxy_verdict v, enum sbx_egress_reason r)
{
	struct sbx_proxy *px = t->px;
	struct sbx_proxy_event ev;
	char target[TARGET_SHOWN + 1], *rt = NULL, *rh = NULL;

	if (v == SBX_PROXY_DENY)
		px->denied++;
	if (v == SBX_PROXY_ALLOW)
		px->allowed++;
	if (px->event == NULL)
		return;
	show_target(t, target, sizeof target);
	/* A name may carry the lease's credential: never into a receipt. */
	if (px->redact != NULL) {
		rt = sbx_scrub_copy(target, strlen(target), px->redact, NULL);
		rh = sbx_scrub_copy(t->target.host, strlen(t->target.host),
		    px->redact, NULL);
	}
	memset(&ev, 0, sizeof ev);
	ev.verdict = v;
	ev.reason = r;
	ev.conn = t->no;
	ev.method = t->method;
	ev.target = px->redact == NULL ? target : rt != NULL ? rt :
	    "[REDACTED]";
	ev.host = px->redact == NULL ? t->target.host : rh != NULL ? rh :
	    "[REDACTED]";
	ev.port = t->target.port;
	ev.address = t->address;
	ev.bytes_up = t->bytes_up;
	ev.bytes_down = t->bytes_down;
	ev.ms = t->t_open ? uv_now(px->loop) - t->t_open : 0;
	ev.test_override = t->test_mapped;
	px->event(&ev, px->ud);
	free(rt);
	free(rh);
}

static bool
busy(const struct tunnel *t, uint64_t now, unsigned long long quiet)
{
	if (t->closing)
		return false;
	if (t->st == T_LOOKUP || t->st == T_DIAL)
		return true;
	if (t->st != T_OPEN)
		return false;
	return t->awaiting || (t->last_down != 0 && now - t->last_down <
	    quiet);
}

static void
inflight_update(struct sbx_proxy *px)
{
	uint64_t now = uv_now(px->loop);
	unsigned n = 0;
	bool open = false;

	for (struct tunnel *t = px->head; t != NULL; t = t->next) {
		if (busy(t, now, px->quiet_ms))
			n++;
		if (t->st == T_OPEN && !t->closing)
			open = true;
	}
	/* The tick decays "recently answered" tunnels; idle, it stops. */
	if (!px->closing) {
		if (open && !uv_is_active((uv_handle_t *)&px->tick))
			uv_timer_again(&px->tick);
		else if (!open)
			uv_timer_stop(&px->tick);
	}
	if (n != px->inflight) {
		px->inflight = n;
		if (px->inflight_cb != NULL)
			px->inflight_cb(n, px->ud);
	}
}

static void
on_tick(uv_timer_t *h)
{
	inflight_update(h->data);
}

/* ------------------------------------------------------------------ */
/* Tunnel lifetime.                                                    */

static void
tunnel_unref(struct tunnel *t)
{
	struct sbx_proxy *px = t->px;

	assert(t->refs > 0);
	if (--t->refs > 0)
		return;
	if (t->prev != NULL)
		t->prev->next = t->next;
	else
		px->head = t->next;
	if (t->next != NULL)
		t->next->prev = t->prev;
	px->active--;
	free(t);
	inflight_update(px);
	proxy_unref(px);
}

static void
on_tunnel_handle_closed(uv_handle_t *h)
{
	tunnel_unref(h->data);
}

static void
close_handle(struct tunnel *t, uv_handle_t *h)
{
	if (!uv_is_closing(h))
		uv_close(h, on_tunnel_handle_closed);
	(void)t;
}

/* End t: report its close if it was open, then close every handle. */
static void
tunnel_end(struct tunnel *t, enum sbx_egress_reason why)
{
	if (t->closing)
		return;
	t->closing = true;
	t->st = T_DONE;
	t->end = why;
	if (t->allowed)
		emit(t, SBX_PROXY_CLOSE, why);
	close_handle(t, (uv_handle_t *)&t->client);
	close_handle(t, (uv_handle_t *)&t->timer);
	if (t->up_init) {
		t->up_init = false;
		close_handle(t, (uv_handle_t *)&t->up);
	}
	inflight_update(t->px);
}

static void
on_reply_written(uv_write_t *w, int status)
{
	struct tunnel *t = w->data;

	t->wc_busy = false;
	if (!t->closing)
		tunnel_end(t, t->end);
}

/* Answer with an HTTP status and end (refusals, failures). */
static void
refuse(struct tunnel *t, int code, const char *status,
    enum sbx_proxy_verdict v, enum sbx_egress_reason why)
{
	const char *name = sbx_egress_reason_name(why);
	uv_buf_t b;
	int n;

	if (t->closing || t->st == T_DONE)
		return;
	t->st = T_DONE;
	t->end = why;
	uv_read_stop((uv_stream_t *)&t->client);
	emit(t, v, why);
	n = snprintf(t->bd, sizeof t->bd, "HTTP/1.1 %d %s\r\n"
	    "Content-Type: text/plain\r\nContent-Length: %zu\r\n"
	    "Connection: close\r\nX-Corral-Egress: %s\r\n\r\n%s\n", code,
	    status, strlen(name) + 1, name, name);
	b = uv_buf_init(t->bd, (unsigned)n);
	t->wc.data = t;
	if (uv_write(&t->wc, (uv_stream_t *)&t->client, &b, 1,
	    on_reply_written) == 0)
		t->wc_busy = true;
	else
		tunnel_end(t, why);
	inflight_update(t->px);
}

static void
deny(struct tunnel *t, enum sbx_egress_reason why)
{
	refuse(t, 403, "Forbidden", SBX_PROXY_DENY, why);
}

static void
on_timer(uv_timer_t *h)
{
	struct tunnel *t = h->data;

	if (t->closing)
		return;
	if (t->st == T_OPEN) {
		tunnel_end(t, SBX_EGRESS_CAP_TIME);
		return;
	}
	if (t->st == T_DONE) {
		/* A refusal the client would not read: drop it. */
		tunnel_end(t, t->end);
		return;
	}
	if (t->st == T_REQUEST)
		refuse(t, 408, "Request Timeout", SBX_PROXY_ERROR,
		    SBX_EGRESS_TIMEOUT);
	else
		refuse(t, 504, "Gateway Timeout", SBX_PROXY_ERROR,
		    SBX_EGRESS_TIMEOUT);
}

/* ------------------------------------------------------------------ */
/* Splicing.                                                           */

static void maybe_finish(struct tunnel *);

static void
alloc_up(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
	struct tunnel *t = h->data;

	*b = uv_buf_init(t->bd, sizeof t->bd);
}

static void
alloc_client(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
	struct tunnel *t = h->data;

	if (t->st == T_REQUEST)
		*b = uv_buf_init(t->req + t->reqlen,
		    (unsigned)(sizeof t->req - t->reqlen));
	else
		*b = uv_buf_init(t->bu, sizeof t->bu);
}

static void on_client_read(uv_stream_t *, ssize_t, const uv_buf_t *);
static void on_up_read(uv_stream_t *, ssize_t, const uv_buf_t *);

static void
on_shutdown(uv_shutdown_t *req, int status)
{
	struct tunnel *t = req->data;

	if (status < 0 && status != UV_ECANCELED && !t->closing)
		tunnel_end(t, SBX_EGRESS_CLOSED);
}

static void
shut(struct tunnel *t, uv_shutdown_t *req, uv_stream_t *s)
{
	req->data = t;
	if (uv_shutdown(req, s, on_shutdown) < 0)
		tunnel_end(t, SBX_EGRESS_CLOSED);
}

static void
on_wrote_up(uv_write_t *w, int status)
{
	struct tunnel *t = w->data;

	t->wu_busy = false;
	if (t->closing)
		return;
	if (status < 0) {
		tunnel_end(t, SBX_EGRESS_CLOSED);
		return;
	}
	if (t->c_eof)
		shut(t, &t->su, (uv_stream_t *)&t->up);
	else if (uv_read_start((uv_stream_t *)&t->client, alloc_client,
	    on_client_read) < 0)
		tunnel_end(t, SBX_EGRESS_CLOSED);
	maybe_finish(t);
}

static void
on_wrote_client(uv_write_t *w, int status)
{
	struct tunnel *t = w->data;

	t->wc_busy = false;
	if (t->closing)
		return;
	if (status < 0) {
		tunnel_end(t, SBX_EGRESS_CLOSED);
		return;
	}
	if (t->u_eof)
		shut(t, &t->sc, (uv_stream_t *)&t->client);
	else if (uv_read_start((uv_stream_t *)&t->up, alloc_up,
	    on_up_read) < 0)
		tunnel_end(t, SBX_EGRESS_CLOSED);
	maybe_finish(t);
}

static void
maybe_finish(struct tunnel *t)
{
	if (!t->closing && t->c_eof && t->u_eof && !t->wu_busy &&
	    !t->wc_busy)
		tunnel_end(t, SBX_EGRESS_CLOSED);
}

/* Count n more bytes; false (and the tunnel ended) past the byte cap. */
static bool
count_bytes(struct tunnel *t, size_t n)
{
	struct sbx_proxy *px = t->px;

	if (px->bytes + n > px->max_bytes) {
		/* Spent: every later request is refused up front. */
		px->bytes = px->max_bytes;
		tunnel_end(t, SBX_EGRESS_CAP_BYTES);
		return false;
	}
	px->bytes += n;
	return true;
}

static void
forward_up(struct tunnel *t, const char *data, size_t n)
{
	uv_buf_t b = uv_buf_init((char *)data, (unsigned)n);

	if (!count_bytes(t, n))
		return;
	t->bytes_up += n;
	t->awaiting = true;
	uv_read_stop((uv_stream_t *)&t->client);
	t->wu.data = t;
	if (uv_write(&t->wu, (uv_stream_t *)&t->up, &b, 1, on_wrote_up) < 0) {
		tunnel_end(t, SBX_EGRESS_CLOSED);
		return;
	}
	t->wu_busy = true;
	inflight_update(t->px);
}

static void
on_up_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct tunnel *t = s->data;
	uv_buf_t out;

	if (t->closing || n == 0)
		return;
	if (n < 0) {
		if (n != UV_EOF) {
			tunnel_end(t, SBX_EGRESS_CLOSED);
			return;
		}
		t->u_eof = true;
		uv_read_stop(s);
		if (!t->wc_busy)
			shut(t, &t->sc, (uv_stream_t *)&t->client);
		maybe_finish(t);
		return;
	}
	if (!count_bytes(t, (size_t)n))
		return;
	t->bytes_down += (size_t)n;
	t->awaiting = false;
	t->last_down = uv_now(t->px->loop);
	uv_read_stop(s);
	out = uv_buf_init(b->base, (unsigned)n);
	t->wc.data = t;
	if (uv_write(&t->wc, (uv_stream_t *)&t->client, &out, 1,
	    on_wrote_client) < 0) {
		tunnel_end(t, SBX_EGRESS_CLOSED);
		return;
	}
	t->wc_busy = true;
	inflight_update(t->px);
}

static void
on_client_data(struct tunnel *t, ssize_t n, const uv_buf_t *b)
{
	if (n < 0) {
		if (n != UV_EOF) {
			tunnel_end(t, SBX_EGRESS_CLOSED);
			return;
		}
		t->c_eof = true;
		uv_read_stop((uv_stream_t *)&t->client);
		if (!t->wu_busy)
			shut(t, &t->su, (uv_stream_t *)&t->up);
		maybe_finish(t);
		return;
	}
	forward_up(t, b->base, (size_t)n);
}

/* The 200 went out: flush what came early, then splice. */
static void
on_established(uv_write_t *w, int status)
{
	struct tunnel *t = w->data;
	size_t early;

	t->wc_busy = false;
	if (t->closing)
		return;
	if (status < 0) {
		tunnel_end(t, SBX_EGRESS_CLOSED);
		return;
	}
	if (uv_read_start((uv_stream_t *)&t->up, alloc_up, on_up_read) < 0) {
		tunnel_end(t, SBX_EGRESS_CLOSED);
		return;
	}
	early = t->reqlen - t->parsed;
	if (early > 0) {
		memcpy(t->bu, t->req + t->parsed, early);
		forward_up(t, t->bu, early);
	} else if (uv_read_start((uv_stream_t *)&t->client, alloc_client,
	    on_client_read) < 0) {
		tunnel_end(t, SBX_EGRESS_CLOSED);
	}
}

/* ------------------------------------------------------------------ */
/* Dialling the vetted address.                                       */

static void
format_address(const struct sockaddr_storage *ss, char *buf, size_t sz)
{
	char a[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &in->sin_addr, a, sizeof a);
		snprintf(buf, sz, "%s:%u", a, ntohs(in->sin_port));
	} else {
		const struct sockaddr_in6 *in6 =
		    (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof a);
		snprintf(buf, sz, "[%s]:%u", a, ntohs(in6->sin6_port));
	}
}

static void
on_connected(uv_connect_t *req, int status)
{
	struct tunnel *t = req->data;
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	uv_buf_t b;

	if (t->closing)
		return;
	if (status < 0) {
		if (t->ai + 1 < t->naddrs) {
			t->ai++;
			dial_next(t);
			return;
		}
		refuse(t, 502, "Bad Gateway", SBX_PROXY_ERROR,
		    SBX_EGRESS_DIAL_FAILED);
		return;
	}
	t->st = T_OPEN;
	t->allowed = true;
	t->t_open = uv_now(t->px->loop);
	emit(t, SBX_PROXY_ALLOW, SBX_EGRESS_OK);
	uv_timer_start(&t->timer, on_timer, t->px->max_tunnel_ms, 0);
	memcpy(t->bd, ok, sizeof ok - 1);
	b = uv_buf_init(t->bd, sizeof ok - 1);
	t->wc.data = t;
	if (uv_write(&t->wc, (uv_stream_t *)&t->client, &b, 1,
	    on_established) < 0) {
		tunnel_end(t, SBX_EGRESS_CLOSED);
		return;
	}
	t->wc_busy = true;
	inflight_update(t->px);
}

static void
dial(struct tunnel *t)
{
	struct sbx_proxy *px = t->px;
	const struct sockaddr *sa = (const struct sockaddr *)&t->addrs[t->ai];
	int rc;

	format_address(&t->addrs[t->ai], t->address, sizeof t->address);
	if ((rc = uv_tcp_init(px->loop, &t->up)) < 0) {
		refuse(t, 502, "Bad Gateway", SBX_PROXY_ERROR,
		    SBX_EGRESS_DIAL_FAILED);
		return;
	}
	t->up.data = t;
	t->up_init = true;
	t->refs++;
	t->creq.data = t;
	if (px->dial != NULL)
		rc = px->dial(&t->creq, &t->up, sa, on_connected, px->dial_ud);
	else
		rc = uv_tcp_connect(&t->creq, &t->up, sa, on_connected);
	if (rc < 0) {
		if (t->ai + 1 < t->naddrs) {
			t->ai++;
			dial_next(t);
		} else {
			refuse(t, 502, "Bad Gateway", SBX_PROXY_ERROR,
			    SBX_EGRESS_DIAL_FAILED);
		}
	}
}

static void
on_up_closed_redial(uv_handle_t *h)
{
	struct tunnel *t = h->data;

	if (!t->closing)
		dial(t);
	tunnel_unref(t);
}

/* The last dial failed: close that handle, then try t->ai. */
static void
dial_next(struct tunnel *t)
{
	t->up_init = false;
	uv_close((uv_handle_t *)&t->up, on_up_closed_redial);
}

static void
set_port(struct sockaddr_storage *ss, unsigned port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port =
		    htons((uint16_t)port);
}

static void
start_dial(struct tunnel *t)
{
	t->st = T_DIAL;
	t->ai = 0;
	for (size_t i = 0; i < t->naddrs; i++)
		set_port(&t->addrs[i], t->target.port);
	inflight_update(t->px);
	dial(t);
}

/* The resolver's answer: vet every address before dialling any. */
static void
on_resolved(void *token, int status, const struct sockaddr_storage *addrs,
    size_t n)
{
	struct tunnel *t = token;
	size_t k = 0;

	t->lookup_pending = false;
	if (t->closing) {
		tunnel_unref(t);
		return;
	}
	if (status < 0 || n == 0 || addrs == NULL) {
		refuse(t, 502, "Bad Gateway", SBX_PROXY_ERROR,
		    SBX_EGRESS_RESOLVE_FAILED);
		tunnel_unref(t);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct sockaddr *sa = (const struct sockaddr *)&addrs[i];

		if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)
			continue;
		if (!sbx_egress_addr_global(sa)) {
			/* One bad answer spoils the set (anti-rebinding). */
			format_address(&addrs[i], t->address,
			    sizeof t->address);
			deny(t, SBX_EGRESS_PRIVATE_ADDRESS);
			tunnel_unref(t);
			return;
		}
	}
	/* IPv4 first, then IPv6, each in the resolver's order. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n && k < MAX_ADDRS; i++) {
			int fam = addrs[i].ss_family;

			if ((pass == 0 && fam == AF_INET) ||
			    (pass == 1 && fam == AF_INET6))
				t->addrs[k++] = addrs[i];
		}
	}
	t->naddrs = k;
	if (k == 0) {
		refuse(t, 502, "Bad Gateway", SBX_PROXY_ERROR,
		    SBX_EGRESS_RESOLVE_FAILED);
		tunnel_unref(t);
		return;
	}
	start_dial(t);
	tunnel_unref(t);
}

/* The default resolver: uv_getaddrinfo on the loop. */
struct gai {
	uv_getaddrinfo_t req;
	sbx_proxy_resolved_fn done;
	void *token;
};

static void
on_gai(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
	struct gai *g = req->data;
	struct sockaddr_storage ss[MAX_ADDRS];
	size_t n = 0;

	for (struct addrinfo *a = res; status == 0 && a != NULL &&
	    n < MAX_ADDRS; a = a->ai_next) {
		if ((a->ai_family == AF_INET || a->ai_family == AF_INET6) &&
		    a->ai_addrlen <= sizeof ss[0]) {
			memset(&ss[n], 0, sizeof ss[n]);
			memcpy(&ss[n], a->ai_addr, a->ai_addrlen);
			n++;
		}
	}
	g->done(g->token, status < 0 ? status : n > 0 ? 0 : UV_EAI_NONAME,
	    ss, n);
	uv_freeaddrinfo(res);
	free(g);
}

static int
default_resolve(uv_loop_t *loop, const char *host, sbx_proxy_resolved_fn done,
    void *token, void *ud)
{
	struct addrinfo hints;
	struct gai *g = calloc(1, sizeof *g);
	int rc;

	if (g == NULL)
		return -ENOMEM;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	g->done = done;
	g->token = token;
	g->req.data = g;
	if ((rc = uv_getaddrinfo(loop, &g->req, on_gai, host, NULL,
	    &hints)) < 0)
		free(g);
	return rc;
}

/* ------------------------------------------------------------------ */
/* The request.                                                        */

static int
on_url(http_parser *p, const char *at, size_t n)
{
	struct tunnel *t = p->data;

	if (t->urllen + n > sizeof t->url) {
		t->url_long = true;
		n = sizeof t->url - t->urllen;
	}
	memcpy(t->url + t->urllen, at, n);
	t->urllen += n;
	return 0;
}

static int
on_headers_complete(http_parser *p)
{
	struct tunnel *t = p->data;

	t->hdr_done = true;
	return 0;
}

static const http_parser_settings parser_settings = {
	.on_url = on_url,
	.on_headers_complete = on_headers_complete,
};

static const struct test_host *
test_lookup(const struct sbx_proxy *px, const char *host)
{
	for (size_t i = 0; i < px->ntest; i++) {
		if (strcmp(px->test[i].host, host) == 0)
			return &px->test[i];
	}
	return NULL;
}

/* A complete request: decide, then look up or dial. */
static void
handle_request(struct tunnel *t)
{
	struct sbx_proxy *px = t->px;
	const struct test_host *th;
	enum sbx_egress_reason r;
	int rc;

	snprintf(t->method, sizeof t->method, "%s",
	    http_method_str((enum http_method)t->hp.method));
	uv_read_stop((uv_stream_t *)&t->client);
	if (t->hp.method != HTTP_CONNECT) {
		deny(t, SBX_EGRESS_NOT_CONNECT);
		return;
	}
	if (t->url_long) {
		deny(t, SBX_EGRESS_BAD_NAME);
		return;
	}
	r = sbx_egress_decide(&px->rules, t->url, t->urllen, &t->target);
	if (r != SBX_EGRESS_OK && r != SBX_EGRESS_LOOPBACK_GRANT) {
		deny(t, r);
		return;
	}
	/* Allowed by name; now the caps. */
	if (px->active > px->max_active) {
		refuse(t, 503, "Service Unavailable", SBX_PROXY_LIMIT,
		    SBX_EGRESS_CAP_CONNECTIONS);
		return;
	}
	if (px->bytes >= px->max_bytes) {
		refuse(t, 503, "Service Unavailable", SBX_PROXY_LIMIT,
		    SBX_EGRESS_CAP_BYTES);
		return;
	}
	if (r == SBX_EGRESS_LOOPBACK_GRANT) {
		struct sockaddr_in *in = (struct sockaddr_in *)&t->addrs[0];

		memset(&t->addrs[0], 0, sizeof t->addrs[0]);
		in->sin_family = AF_INET;
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		t->naddrs = 1;
		start_dial(t);
		return;
	}
	if ((th = test_lookup(px, t->target.host)) != NULL && th->answer) {
		/* What a lookup would have answered: through on_resolved,
		 * so the global-address filter applies as it does to any. */
		t->test_mapped = true;
		t->st = T_LOOKUP;
		t->lookup_pending = true;
		t->refs++;
		on_resolved(t, 0, &th->ss, 1);
		return;
	}
	if (th != NULL) {
		t->test_mapped = true;
		t->addrs[0] = th->ss;
		t->naddrs = 1;
		start_dial(t);
		return;
	}
	t->st = T_LOOKUP;
	t->lookup_pending = true;
	t->refs++;
	inflight_update(px);
	if (px->resolve != NULL)
		rc = px->resolve(px->loop, t->target.host, on_resolved, t,
		    px->resolve_ud);
	else
		rc = default_resolve(px->loop, t->target.host, on_resolved,
		    t, NULL);
	if (rc < 0) {
		t->lookup_pending = false;
		refuse(t, 502, "Bad Gateway", SBX_PROXY_ERROR,
		    SBX_EGRESS_RESOLVE_FAILED);
		tunnel_unref(t);
	}
}

static void
on_client_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct tunnel *t = s->data;
	size_t done;

	if (t->closing || n == 0)
		return;
	if (t->st != T_REQUEST) {
		on_client_data(t, n, b);
		return;
	}
	if (n < 0) {
		/* Gone before a whole request: nothing was asked. */
		tunnel_end(t, SBX_EGRESS_CLOSED);
		return;
	}
	t->reqlen += (size_t)n;
	done = http_parser_execute(&t->hp, &parser_settings,
	    t->req + t->parsed, t->reqlen - t->parsed);
	t->parsed += done;
	if (t->hdr_done && (t->hp.http_errno == HPE_OK ||
	    t->hp.method != HTTP_CONNECT)) {
		handle_request(t);
		return;
	}
	if (t->hp.http_errno != HPE_OK) {
		deny(t, SBX_EGRESS_MALFORMED);
		return;
	}
	if (t->reqlen == sizeof t->req)
		deny(t, SBX_EGRESS_MALFORMED);
}

/* The peer's uid: the lease's own, or root (corral's tests, the doctor). */
static bool
peer_ok(struct tunnel *t)
{
	struct ucred cr;
	socklen_t len = sizeof cr;
	uv_os_fd_t fd;

	if (uv_fileno((uv_handle_t *)&t->client, &fd) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
		return false;
	return cr.uid == t->px->uid || cr.uid == 0;
}

static void
on_connection(uv_stream_t *server, int status)
{
	struct sbx_proxy *px = server->data;
	struct tunnel *t;

	if (status < 0 || px->closing)
		return;
	if ((t = calloc(1, sizeof *t)) == NULL)
		return;
	t->px = px;
	t->no = ++px->total;
	t->st = T_REQUEST;
	t->end = SBX_EGRESS_CLOSED;
	if (uv_pipe_init(px->loop, &t->client, 0) < 0 ||
	    uv_timer_init(px->loop, &t->timer) < 0) {
		/* uv_pipe_init cannot fail on Linux; keep it simple. */
		free(t);
		return;
	}
	t->client.data = t;
	t->timer.data = t;
	t->refs = 2;
	t->next = px->head;
	if (px->head != NULL)
		px->head->prev = t;
	px->head = t;
	px->active++;
	px->refs++;
	http_parser_init(&t->hp, HTTP_REQUEST);
	t->hp.data = t;
	if (uv_accept(server, (uv_stream_t *)&t->client) < 0) {
		tunnel_end(t, SBX_EGRESS_CLOSED);
		return;
	}
	if (!peer_ok(t)) {
		emit(t, SBX_PROXY_ERROR, SBX_EGRESS_FOREIGN_PEER);
		tunnel_end(t, SBX_EGRESS_FOREIGN_PEER);
		return;
	}
	if (px->total > px->max_total) {
		refuse(t, 503, "Service Unavailable", SBX_PROXY_LIMIT,
		    SBX_EGRESS_CAP_CONNECTIONS);
		return;
	}
	uv_timer_start(&t->timer, on_timer, px->request_ms, 0);
	if (uv_read_start((uv_stream_t *)&t->client, alloc_client,
	    on_client_read) < 0)
		tunnel_end(t, SBX_EGRESS_CLOSED);
}

/* ------------------------------------------------------------------ */
/* The proxy.                                                          */

static void
proxy_free(struct sbx_proxy *px)
{
	if (px == NULL)
		return;
	if (px->allow != NULL) {
		for (size_t i = 0; px->allow[i] != NULL; i++)
			free(px->allow[i]);
		free(px->allow);
	}
	free(px->loopback_name);
	free(px->sock_path);
	if (px->redact != NULL) {
		explicit_bzero(px->redact, strlen(px->redact));
		free(px->redact);
	}
	free(px);
}

static void
proxy_unref(struct sbx_proxy *px)
{
	sbx_proxy_close_cb cb;
	void *ud;

	assert(px->refs > 0);
	if (--px->refs > 0)
		return;
	cb = px->close_cb;
	ud = px->close_ud;
	proxy_free(px);
	if (cb != NULL)
		cb(ud);
}

static void
on_proxy_handle_closed(uv_handle_t *h)
{
	proxy_unref(h->data);
}

/* "name=addr[,name~addr...]" into px->test. */
static int
parse_test_hosts(struct sbx_proxy *px, const char *spec)
{
	const char *p = spec;

	while (*p != '\0') {
		size_t n = strcspn(p, ","), eq;
		struct test_host *th;
		struct sbx_egress_target t;
		char name[SBX_EGRESS_NAME_MAX + 8], addr[INET6_ADDRSTRLEN];

		if (n == 0 || px->ntest >= TEST_HOSTS_MAX)
			return -EINVAL;
		eq = strcspn(p, "=~");
		if (eq >= n || eq > SBX_EGRESS_NAME_MAX ||
		    n - eq - 1 >= sizeof addr)
			return -EINVAL;
		snprintf(name, sizeof name, "%.*s:1", (int)eq, p);
		if (sbx_egress_parse(name, strlen(name), &t) != SBX_EGRESS_OK)
			return -EINVAL;
		snprintf(addr, sizeof addr, "%.*s", (int)(n - eq - 1),
		    p + eq + 1);
		th = &px->test[px->ntest];
		memset(th, 0, sizeof *th);
		snprintf(th->host, sizeof th->host, "%s", t.host);
		th->answer = p[eq] == '~';
		if (inet_pton(AF_INET, addr,
		    &((struct sockaddr_in *)&th->ss)->sin_addr) == 1)
			th->ss.ss_family = AF_INET;
		else if (inet_pton(AF_INET6, addr,
		    &((struct sockaddr_in6 *)&th->ss)->sin6_addr) == 1)
			th->ss.ss_family = AF_INET6;
		else
			return -EINVAL;
		px->ntest++;
		p += n;
		if (*p == ',')
			p++;
	}
	return px->ntest > 0 ? 0 : -EINVAL;
}

static int
copy_opts(struct sbx_proxy *px, const struct sbx_proxy_opts *o)
{
	size_t n = 0;

	if ((px->sock_path = strdup(o->sock_path)) == NULL)
		return -ENOMEM;
	while (o->allow != NULL && o->allow[n] != NULL) {
		if (!sbx_egress_entry_valid(o->allow[n]))
			return -EINVAL;
		n++;
	}
	if ((px->allow = calloc(n + 1, sizeof *px->allow)) == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if ((px->allow[i] = strdup(o->allow[i])) == NULL)
			return -ENOMEM;
	}
	if (o->loopback_port != 0) {
		struct sbx_egress_target t;
		char probe[SBX_EGRESS_NAME_MAX + 8];

		if (o->loopback_name == NULL || o->loopback_port > 65535)
			return -EINVAL;
		snprintf(probe, sizeof probe, "%s:%u", o->loopback_name,
		    o->loopback_port);
		if (sbx_egress_parse(probe, strlen(probe), &t) !=
		    SBX_EGRESS_OK || strcmp(t.host, o->loopback_name) != 0)
			return -EINVAL;
		if ((px->loopback_name = strdup(o->loopback_name)) == NULL)
			return -ENOMEM;
	}
	px->rules.allow = (const char *const *)px->allow;
	px->rules.loopback_name = px->loopback_name;
	px->rules.loopback_port = o->loopback_port;
	if (o->test_hosts != NULL) {
#ifdef SBX_TEST_OVERRIDES
		if (parse_test_hosts(px, o->test_hosts) < 0)
			return -EINVAL;
#else
		return -ENOTSUP;
#endif
	}
	px->uid = o->uid;
	px->gid = o->gid;
	px->max_active = o->max_active ? o->max_active : SBX_PROXY_MAX_ACTIVE;
	px->max_total = o->max_total ? o->max_total : SBX_PROXY_MAX_TOTAL;
	px->max_bytes = o->max_bytes ? o->max_bytes : SBX_PROXY_MAX_BYTES;
	px->max_tunnel_ms = o->max_tunnel_ms ? o->max_tunnel_ms :
	    SBX_PROXY_TUNNEL_MS;
	px->request_ms = o->request_ms ? o->request_ms : SBX_PROXY_REQUEST_MS;
	px->quiet_ms = o->quiet_ms ? o->quiet_ms : SBX_PROXY_QUIET_MS;
	px->resolve = o->resolve;
	px->resolve_ud = o->resolve_ud;
	px->dial = o->dial;
	px->dial_ud = o->dial_ud;
	px->event = o->event;
	px->inflight_cb = o->inflight;
	px->ud = o->ud;
	if (o->redact != NULL && *o->redact != '\0' &&
	    (px->redact = strdup(o->redact)) == NULL)
		return -ENOMEM;
	return 0;
}

/* Bind the socket 0600 (umask around bind), owned by the lease uid. */
static int
bind_socket(struct sbx_proxy *px)
{
	struct stat sb;
	mode_t old;
	int rc;

	if (lstat(px->sock_path, &sb) == 0) {
		if (!S_ISSOCK(sb.st_mode))
			return -EEXIST;
		if (unlink(px->sock_path) < 0)
			return -errno;
	} else if (errno != ENOENT) {
		return -errno;
	}
	old = umask(0177);
	rc = uv_pipe_bind(&px->listener, px->sock_path);
	umask(old);
	if (rc < 0)
		return rc;
	if (lchown(px->sock_path, px->uid, px->gid) < 0 ||
	    lstat(px->sock_path, &sb) < 0)
		return -errno;
	if (!S_ISSOCK(sb.st_mode) || (sb.st_mode & 07777) != 0600)
		return -EPERM;
	return 0;
}

int
sbx_proxy_start(uv_loop_t *loop, const struct sbx_proxy_opts *o,
    struct sbx_proxy **out)
{
	struct sbx_proxy *px;
	int rc;

	if (loop == NULL || o == NULL || out == NULL ||
	    o->sock_path == NULL || o->sock_path[0] != '/' ||
	    strlen(o->sock_path) >= sizeof ((struct sockaddr_un *)0)->sun_path)
		return -EINVAL;
	*out = NULL;
	/*
	 * libuv writes with write(2): an agent hanging up on a tunnel would
	 * SIGPIPE the holder. pty_holder_run ignores it too; a proxy started
	 * before it must not depend on that.
	 */
	signal(SIGPIPE, SIG_IGN);
	if ((px = calloc(1, sizeof *px)) == NULL)
		return -ENOMEM;
	px->loop = loop;
	if ((rc = copy_opts(px, o)) < 0) {
		proxy_free(px);
		return rc;
	}
	if ((rc = uv_pipe_init(loop, &px->listener, 0)) < 0) {
		proxy_free(px);
		return rc;
	}
	px->listener.data = px;
	uv_timer_init(loop, &px->tick);
	px->tick.data = px;
	uv_timer_start(&px->tick, on_tick, TICK_MS, TICK_MS);
	uv_timer_stop(&px->tick);	/* sets the repeat for uv_timer_again */
	uv_unref((uv_handle_t *)&px->tick);
	px->refs = 2;
	if ((rc = bind_socket(px)) < 0 ||
	    (rc = uv_listen((uv_stream_t *)&px->listener, 64,
	    on_connection)) < 0) {
		if (rc != -EEXIST)
			unlink(px->sock_path);
		px->closing = true;
		uv_close((uv_handle_t *)&px->listener, on_proxy_handle_closed);
		uv_close((uv_handle_t *)&px->tick, on_proxy_handle_closed);
		return rc;
	}
	uv_unref((uv_handle_t *)&px->listener);
	*out = px;
	return 0;
}

void
sbx_proxy_close(struct sbx_proxy *px, sbx_proxy_close_cb cb, void *ud)
{
	struct tunnel *t, *next;

	if (px == NULL)
		return;
	assert(!px->closing);
	px->closing = true;
	px->close_cb = cb;
	px->close_ud = ud;
	unlink(px->sock_path);
	uv_close((uv_handle_t *)&px->listener, on_proxy_handle_closed);
	uv_close((uv_handle_t *)&px->tick, on_proxy_handle_closed);
	for (t = px->head; t != NULL; t = next) {
		next = t->next;
		tunnel_end(t, SBX_EGRESS_CLOSED);
	}
}

unsigned
sbx_proxy_inflight(const struct sbx_proxy *px)
{
	return px != NULL ? px->inflight : 0;
}

void
sbx_proxy_stats(const struct sbx_proxy *px, struct sbx_proxy_stats *st)
{
	memset(st, 0, sizeof *st);
	if (px == NULL)
		return;
	st->active = px->active;
	st->total = px->total;
	st->allowed = px->allowed;
	st->denied = px->denied;
	st->bytes = px->bytes;
}
