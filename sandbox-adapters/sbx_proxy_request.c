/*
 * sbx_proxy_request.c: the egress proxy's request: the agent's first bytes
 * up to the end of the headers, read and decided by the pure reader
 * (sbx_egress_request_read, before any lookup); only a CONNECT to a
 * target the allowlist holds goes on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox-adapters/sbx_proxy_int.h"

static const struct test_host *
test_lookup(const struct sbx_proxy *px, const char *host)
{
	for (size_t i = 0; i < px->ntest; i++) {
		if (strcmp(px->test[i].host, host) == 0)
			return &px->test[i];
	}
	return NULL;
}

/* A complete request, decided: refuse, or look up or dial. */
static void
handle_request(struct tunnel *t, const struct sbx_egress_request *rq)
{
	struct sbx_proxy *px = t->px;
	const struct test_host *th;
	enum sbx_egress_reason r = rq->reason;
	int rc;

	snprintf(t->method, sizeof t->method, "%s", rq->method);
	t->target = rq->target;
	uv_read_stop((uv_stream_t *)&t->client);
	if (r != SBX_EGRESS_OK && r != SBX_EGRESS_LOOPBACK_GRANT) {
		sbx__proxy_deny(t, r);
		return;
	}
	/* Allowed by name; now the caps. */
	if (px->active > px->max_active) {
		sbx__proxy_refuse(t, 503, "Service Unavailable", SBX_PROXY_LIMIT,
		    SBX_EGRESS_CAP_CONNECTIONS);
		return;
	}
	if (px->bytes >= px->max_bytes) {
		sbx__proxy_refuse(t, 503, "Service Unavailable", SBX_PROXY_LIMIT,
		    SBX_EGRESS_CAP_BYTES);
		return;
	}
	if (r == SBX_EGRESS_LOOPBACK_GRANT) {
		struct sockaddr_in *in = (struct sockaddr_in *)&t->addrs[0];

		memset(&t->addrs[0], 0, sizeof t->addrs[0]);
		in->sin_family = AF_INET;
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		t->naddrs = 1;
		sbx__proxy_upstream_dial(t);
		return;
	}
	if ((th = test_lookup(px, t->target.host)) != NULL && th->answer) {
		/*
		 * What a lookup would have answered: through
		 * sbx__proxy_upstream_resolved, so the global-address filter
		 * applies as it does to any.
		 */
		t->test_mapped = true;
		t->st = T_LOOKUP;
		t->lookup_pending = true;
		t->refs++;
		sbx__proxy_upstream_resolved(t, 0, &th->ss, 1);
		return;
	}
	if (th != NULL) {
		t->test_mapped = true;
		t->addrs[0] = th->ss;
		t->naddrs = 1;
		sbx__proxy_upstream_dial(t);
		return;
	}
	t->st = T_LOOKUP;
	t->lookup_pending = true;
	t->refs++;
	sbx__proxy_inflight_update(px);
	if (px->resolve != NULL)
		rc = px->resolve(px->loop, t->target.host,
		    sbx__proxy_upstream_resolved, t, px->resolve_ud);
	else
		rc = sbx__proxy_upstream_resolve(px->loop, t->target.host,
		    sbx__proxy_upstream_resolved, t, NULL);
	if (rc < 0) {
		t->lookup_pending = false;
		sbx__proxy_refuse(t, 502, "Bad Gateway", SBX_PROXY_ERROR,
		    SBX_EGRESS_RESOLVE_FAILED);
		sbx__proxy_tunnel_unref(t);
	}
}

void
sbx__proxy_request_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct tunnel *t = s->data;
	struct sbx_egress_request rq;
	int rc;

	if (t->closing || n == 0)
		return;
	if (t->st != T_REQUEST) {
		sbx__proxy_splice_client(t, n, b);
		return;
	}
	if (n < 0) {
		/* Gone before a whole request: nothing was asked. */
		sbx__proxy_tunnel_end(t, SBX_EGRESS_CLOSED);
		return;
	}
	t->reqlen += (size_t)n;
	/* The head so far, read again whole (at most REQ_MAX bytes). */
	rc = sbx_egress_request_read(&t->px->rules, t->req, t->reqlen, &rq);
	memcpy(t->url, rq.url, rq.urllen);
	t->urllen = rq.urllen;
	if (rc == 1) {
		t->parsed = rq.head_len;
		handle_request(t, &rq);
		return;
	}
	if (rc < 0) {
		sbx__proxy_deny(t, SBX_EGRESS_MALFORMED);
		return;
	}
	if (t->reqlen == sizeof t->req)
		sbx__proxy_deny(t, SBX_EGRESS_MALFORMED);
}
