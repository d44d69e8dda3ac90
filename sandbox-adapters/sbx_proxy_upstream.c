/*
 * sbx_proxy_upstream.c: the egress proxy's way to an allowed target: the
 * lookup (libuv's resolver, or an injected one), every answer vetted
 * (sbx_egress.c), then the vetted addresses dialled in turn.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox-adapters/sbx_proxy_int.h"

static void dial_next(struct tunnel *);

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
		sbx__proxy_refuse(t, 502, "Bad Gateway", SBX_PROXY_ERROR,
		    SBX_EGRESS_DIAL_FAILED);
		return;
	}
	t->st = T_OPEN;
	t->allowed = true;
	t->t_open = uv_now(t->px->loop);
	sbx__proxy_emit(t, SBX_PROXY_ALLOW, SBX_EGRESS_OK);
	uv_timer_start(&t->timer, sbx__proxy_on_timer, t->px->max_tunnel_ms, 0);
	memcpy(t->bd, ok, sizeof ok - 1);
	b = uv_buf_init(t->bd, sizeof ok - 1);
	t->wc.data = t;
	if (uv_write(&t->wc, (uv_stream_t *)&t->client, &b, 1,
	    sbx__proxy_splice_start) < 0) {
		sbx__proxy_tunnel_end(t, SBX_EGRESS_CLOSED);
		return;
	}
	t->wc_busy = true;
	sbx__proxy_inflight_update(t->px);
}

static void
dial(struct tunnel *t)
{
	struct sbx_proxy *px = t->px;
	const struct sockaddr *sa = (const struct sockaddr *)&t->addrs[t->ai];
	int rc;

	format_address(&t->addrs[t->ai], t->address, sizeof t->address);
	if ((rc = uv_tcp_init(px->loop, &t->up)) < 0) {
		sbx__proxy_refuse(t, 502, "Bad Gateway", SBX_PROXY_ERROR,
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
			sbx__proxy_refuse(t, 502, "Bad Gateway", SBX_PROXY_ERROR,
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
	sbx__proxy_tunnel_unref(t);
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

void
sbx__proxy_upstream_dial(struct tunnel *t)
{
	t->st = T_DIAL;
	t->ai = 0;
	for (size_t i = 0; i < t->naddrs; i++)
		set_port(&t->addrs[i], t->target.port);
	sbx__proxy_inflight_update(t->px);
	dial(t);
}

/* The resolver's answer: vet every address before dialling any. */
void
sbx__proxy_upstream_resolved(void *token, int status,
    const struct sockaddr_storage *addrs, size_t n)
{
	struct tunnel *t = token;
	size_t k = 0;

	t->lookup_pending = false;
	if (t->closing) {
		sbx__proxy_tunnel_unref(t);
		return;
	}
	if (status < 0 || n == 0 || addrs == NULL) {
		sbx__proxy_refuse(t, 502, "Bad Gateway", SBX_PROXY_ERROR,
		    SBX_EGRESS_RESOLVE_FAILED);
		sbx__proxy_tunnel_unref(t);
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
			sbx__proxy_deny(t, SBX_EGRESS_PRIVATE_ADDRESS);
			sbx__proxy_tunnel_unref(t);
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
		sbx__proxy_refuse(t, 502, "Bad Gateway", SBX_PROXY_ERROR,
		    SBX_EGRESS_RESOLVE_FAILED);
		sbx__proxy_tunnel_unref(t);
		return;
	}
	sbx__proxy_upstream_dial(t);
	sbx__proxy_tunnel_unref(t);
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

int
sbx__proxy_upstream_resolve(uv_loop_t *loop, const char *host,
    sbx_proxy_resolved_fn done, void *token, void *ud)
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
