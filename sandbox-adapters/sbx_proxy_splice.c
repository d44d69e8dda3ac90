/*
 * sbx_proxy_splice.c: an open tunnel of the egress proxy: bytes both ways
 * between the agent's connection and the upstream, one buffer per
 * direction (reading stops while a write is in flight: backpressure),
 * counted against the byte cap, half-closes passed on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox-adapters/sbx_proxy_int.h"

/* ------------------------------------------------------------------ */
/* Splicing.                                                           */

static void maybe_finish(struct tunnel *);

static void
alloc_up(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
	struct tunnel *t = h->data;

	*b = uv_buf_init(t->bd, sizeof t->bd);
}

void
sbx__proxy_splice_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
	struct tunnel *t = h->data;

	if (t->st == T_REQUEST)
		*b = uv_buf_init(t->req + t->reqlen,
		    (unsigned)(sizeof t->req - t->reqlen));
	else
		*b = uv_buf_init(t->bu, sizeof t->bu);
}

static void on_up_read(uv_stream_t *, ssize_t, const uv_buf_t *);

static void
on_shutdown(uv_shutdown_t *req, int status)
{
	struct tunnel *t = req->data;

	if (status < 0 && status != UV_ECANCELED && !t->closing)
		sbx__proxy_tunnel_end(t, SBX_EGRESS_CLOSED);
}

static void
shut(struct tunnel *t, uv_shutdown_t *req, uv_stream_t *s)
{
	req->data = t;
	if (uv_shutdown(req, s, on_shutdown) < 0)
		sbx__proxy_tunnel_end(t, SBX_EGRESS_CLOSED);
}

static void
on_wrote_up(uv_write_t *w, int status)
{
	struct tunnel *t = w->data;

	t->wu_busy = false;
	if (t->closing)
		return;
	if (status < 0) {
		sbx__proxy_tunnel_end(t, SBX_EGRESS_CLOSED);
		return;
	}
	if (t->c_eof)
		shut(t, &t->su, (uv_stream_t *)&t->up);
	else if (uv_read_start((uv_stream_t *)&t->client, sbx__proxy_splice_alloc,
	    sbx__proxy_request_read) < 0)
		sbx__proxy_tunnel_end(t, SBX_EGRESS_CLOSED);
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
		sbx__proxy_tunnel_end(t, SBX_EGRESS_CLOSED);
		return;
	}
	if (t->u_eof)
		shut(t, &t->sc, (uv_stream_t *)&t->client);
	else if (uv_read_start((uv_stream_t *)&t->up, alloc_up,
	    on_up_read) < 0)
		sbx__proxy_tunnel_end(t, SBX_EGRESS_CLOSED);
	maybe_finish(t);
}

static void
maybe_finish(struct tunnel *t)
{
	if (!t->closing && t->c_eof && t->u_eof && !t->wu_busy &&
	    !t->wc_busy)
		sbx__proxy_tunnel_end(t, SBX_EGRESS_CLOSED);
}

/* Count n more bytes; false (and the tunnel ended) past the byte cap. */
static bool
count_bytes(struct tunnel *t, size_t n)
{
	struct sbx_proxy *px = t->px;

	if (px->bytes + n > px->max_bytes) {
		/* Spent: every later request is refused up front. */
		px->bytes = px->max_bytes;
		sbx__proxy_tunnel_end(t, SBX_EGRESS_CAP_BYTES);
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
		sbx__proxy_tunnel_end(t, SBX_EGRESS_CLOSED);
		return;
	}
	t->wu_busy = true;
	sbx__proxy_inflight_update(t->px);
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
			sbx__proxy_tunnel_end(t, SBX_EGRESS_CLOSED);
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
		sbx__proxy_tunnel_end(t, SBX_EGRESS_CLOSED);
		return;
	}
	t->wc_busy = true;
	sbx__proxy_inflight_update(t->px);
}

void
sbx__proxy_splice_client(struct tunnel *t, ssize_t n, const uv_buf_t *b)
{
	if (n < 0) {
		if (n != UV_EOF) {
			sbx__proxy_tunnel_end(t, SBX_EGRESS_CLOSED);
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
void
sbx__proxy_splice_start(uv_write_t *w, int status)
{
	struct tunnel *t = w->data;
	size_t early;

	t->wc_busy = false;
	if (t->closing)
		return;
	if (status < 0) {
		sbx__proxy_tunnel_end(t, SBX_EGRESS_CLOSED);
		return;
	}
	if (uv_read_start((uv_stream_t *)&t->up, alloc_up, on_up_read) < 0) {
		sbx__proxy_tunnel_end(t, SBX_EGRESS_CLOSED);
		return;
	}
	early = t->reqlen - t->parsed;
	if (early > 0) {
		memcpy(t->bu, t->req + t->parsed, early);
		forward_up(t, t->bu, early);
	} else if (uv_read_start((uv_stream_t *)&t->client, sbx__proxy_splice_alloc,
	    sbx__proxy_request_read) < 0) {
		sbx__proxy_tunnel_end(t, SBX_EGRESS_CLOSED);
	}
}
