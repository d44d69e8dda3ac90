/*
 * sbx_gateway.c: the lease's model gateway on the holder's libuv loop
 * (SPEC 8.5): its socket (0600, the lease uid's; a peer of any other uid
 * but root refused), each agent connection read one request at a time
 * (sbx_gateway_http.c), refused with a JSON error body unless its API
 * allows it and .admit lets it go, else forwarded with the real key
 * (sbx_gateway_upstream.c) and answered as the upstream answers, every
 * request ending in one event with its usage. The upstream's answer is
 * passed on as it comes; reading stops on either side while the other
 * has too much queued.
 */
#include <assert.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <openssl/ssl.h>
#include <uv.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"
#include "sandbox-adapters/sbx_gateway_int.h"
#include "sandbox-adapters/sbx_int.h"

static void gw_unref(struct sbx_gateway *);
static void conn_end(struct gw_conn *);
static void process(struct gw_conn *);

/* ---- events --------------------------------------------------------------- */

static void
inflight_update(struct sbx_gateway *g)
{
	unsigned n = 0;

	for (struct gw_conn *c = g->head; c != NULL; c = c->next)
		if (c->active && c->metered && !c->closing)
			n++;
	if (n != g->inflight_n) {
		g->inflight_n = n;
		if (g->inflight != NULL)
			g->inflight(n, g->last_stop[0] ? g->last_stop : NULL,
			    g->ud);
	}
}

static void
emit(struct gw_conn *c, enum sbx_gateway_verdict v, int status,
    const char *error)
{
	struct sbx_gateway *g = c->g;
	struct sbx_gateway_event ev;

	memset(&ev, 0, sizeof ev);
	ev.verdict = v;
	ev.conn = c->no;
	ev.request = c->req_no;
	ev.method = c->method;
	ev.path = c->path;
	ev.status = status;
	ev.error = error;
	ev.metered = c->metered;
	if (c->meter != NULL && v == SBX_GATEWAY_DONE)
		sbx_gateway_meter_usage(c->meter, &ev.usage);
	ev.bytes_up = c->bytes_up;
	ev.bytes_down = c->bytes_down;
	ev.ms = uv_now(g->loop) - c->t0;
	g->st.bytes_up += c->bytes_up;
	g->st.bytes_down += c->bytes_down;
	switch (v) {
	case SBX_GATEWAY_DONE: g->st.requests++; break;
	case SBX_GATEWAY_REFUSED: g->st.refused++; break;
	case SBX_GATEWAY_HELD: g->st.held++; break;
	case SBX_GATEWAY_FAILED: g->st.failed++; break;
	}
	if (v == SBX_GATEWAY_DONE && c->metered)
		snprintf(g->last_stop, sizeof g->last_stop, "%s",
		    ev.usage.stop_reason[0] ? ev.usage.stop_reason :
		    "unknown");
	c->active = false;
	if (g->event != NULL)
		g->event(&ev, g->ud);
	inflight_update(g);
}

/* ---- writes to the agent ------------------------------------------------- */

struct cwrite {
	uv_write_t w;
	struct gw_conn *c;
	size_t n;
	char data[];
};

static void
on_client_written(uv_write_t *w, int status)
{
	struct cwrite *r = w->data;
	struct gw_conn *c = r->c;
	bool above = c->c_pending >= GW_PENDING_MAX;

	c->c_pending -= r->n;
	free(r);
	if (c->closing)
		return;
	if (status < 0) {
		conn_end(c);
		return;
	}
	if (c->end_after_write && c->c_pending == 0) {
		conn_end(c);
		return;
	}
	if (above && c->c_pending < GW_PENDING_MAX)
		sbx__gateway_up_read(&c->up, true);
}

static int
client_write(struct gw_conn *c, const char *s, size_t n)
{
	struct cwrite *r;
	uv_buf_t b;
	int rc;

	if ((r = malloc(sizeof *r + n)) == NULL)
		return -ENOMEM;
	memcpy(r->data, s, n);
	r->n = n;
	r->c = c;
	r->w.data = r;
	b = uv_buf_init(r->data, (unsigned)n);
	if ((rc = uv_write(&r->w, (uv_stream_t *)&c->client, &b, 1,
	    on_client_written)) < 0) {
		free(r);
		return rc;
	}
	c->c_pending += n;
	if (c->c_pending >= GW_PENDING_MAX)
		sbx__gateway_up_read(&c->up, false);
	return 0;
}

/* JSON-escaped text of the gateway's own (printable already). */
static void
json_text(char *dst, size_t dsz, const char *s)
{
	size_t k = 0;

	for (; *s != '\0' && k + 2 < dsz; s++) {
		if (*s == '"' || *s == '\\')
			dst[k++] = '\\';
		dst[k++] = *s;
	}
	dst[k] = '\0';
}

/*
 * The gateway's own answer (a refusal, a failure): a JSON error body in
 * the API's shape, which the agent shows; the connection then ends.
 */
static void
answer(struct gw_conn *c, int code, const char *status, const char *type,
    const char *msg)
{
	char body[1024], text[600], head[512];
	int bl, hl;

	json_text(text, sizeof text, msg);
	if (c->g->api == SBX_GATEWAY_ANTHROPIC)
		bl = snprintf(body, sizeof body, "{\"type\":\"error\",\"error\":"
		    "{\"type\":\"%s\",\"message\":\"%s\"}}", type, text);
	else
		bl = snprintf(body, sizeof body, "{\"error\":{\"type\":\"%s\","
		    "\"code\":\"%s\",\"message\":\"%s\"}}", type, type, text);
	hl = snprintf(head, sizeof head, "HTTP/1.1 %d %s\r\nContent-Type: "
	    "application/json\r\nContent-Length: %d\r\nConnection: close\r\n"
	    "X-Corral-Gateway: %s\r\n\r\n", code, status, bl, type);
	uv_read_stop((uv_stream_t *)&c->client);
	c->c_reading = false;
	c->end_after_write = true;
	if (client_write(c, head, (size_t)hl) < 0 ||
	    client_write(c, body, (size_t)bl) < 0)
		conn_end(c);
}

/* ---- the upstream's side -------------------------------------------------- */

void
sbx__gateway_from_upstream(struct gw_conn *c, const char *s, size_t n)
{
	size_t used = 0;
	int rc;

	if (c->closing)
		return;
	if (!c->active || c->meter == NULL) {
		/* Bytes no request asked for: the connection is done. */
		conn_end(c);
		return;
	}
	rc = sbx_gateway_meter_feed(c->meter, s, n, &used);
	if (rc < 0) {
		if (!c->answered) {
			emit(c, SBX_GATEWAY_FAILED, 502, "the upstream's answer "
			    "is not HTTP");
			answer(c, 502, "Bad Gateway", "api_error", "corral "
			    "gateway: the upstream's answer is not HTTP");
		} else {
			emit(c, SBX_GATEWAY_FAILED, sbx_gateway_meter_status(
			    c->meter), "the upstream's answer is not HTTP");
			conn_end(c);
		}
		return;
	}
	if (used > 0) {
		c->answered = true;
		c->bytes_down += used;
		if (client_write(c, s, used) < 0) {
			conn_end(c);
			return;
		}
	}
	if (rc == 0)
		return;
	/* The answer is complete. */
	emit(c, SBX_GATEWAY_DONE, sbx_gateway_meter_status(c->meter), NULL);
	if (!sbx_gateway_meter_keep_alive(c->meter) || used < n ||
	    !c->req_done) {
		/* The agent reads the upstream's own end of it. */
		sbx__gateway_up_close(&c->up);
		c->end_after_write = true;
		if (c->c_pending == 0)
			conn_end(c);
		return;
	}
	/* Kept alive: the agent's next request on it is read now. */
	sbx_gateway_meter_free(c->meter);
	c->meter = NULL;
	c->answered = false;
	c->req_done = false;
	sbx_gateway_req_reset(c->rq);
	process(c);
}

void
sbx__gateway_upstream_ended(struct gw_conn *c, const char *err)
{
	if (c->closing)
		return;
	if (c->active && c->meter != NULL && err == NULL &&
	    sbx_gateway_meter_eof(c->meter) == 1) {
		emit(c, SBX_GATEWAY_DONE, sbx_gateway_meter_status(c->meter),
		    NULL);
		sbx__gateway_up_close(&c->up);
		c->end_after_write = true;
		if (c->c_pending == 0)
			conn_end(c);
		return;
	}
	sbx__gateway_up_close(&c->up);
	if (!c->active) {
		/* An idle upstream went: the next request dials again. */
		return;
	}
	if (!c->answered) {
		char msg[400];

		emit(c, SBX_GATEWAY_FAILED, 502, err != NULL ? err :
		    "the upstream closed the connection");
		snprintf(msg, sizeof msg, "corral gateway: %s", err != NULL ?
		    err : "the upstream closed the connection");
		answer(c, 502, "Bad Gateway", "api_error", msg);
		return;
	}
	emit(c, SBX_GATEWAY_FAILED, c->meter != NULL ?
	    sbx_gateway_meter_status(c->meter) : 0, err != NULL ? err :
	    "the upstream closed the connection mid-answer");
	conn_end(c);
}

void
sbx__gateway_upstream_drained(struct gw_conn *c)
{
	if (!c->closing && !c->c_reading && !c->c_eof &&
	    !c->end_after_write)
		process(c);
}

/* ---- the agent's side ---------------------------------------------------- */

static bool
upstream_full(const struct gw_conn *c)
{
	return c->up.pending + c->up.held_len > GW_PENDING_MAX;
}

static void on_client_read(uv_stream_t *, ssize_t, const uv_buf_t *);

static void
on_client_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
	struct gw_conn *c = h->data;

	(void)hint;
	*b = uv_buf_init(c->in + c->inlen, (unsigned)(GW_IN_MAX - c->inlen));
}

static void
client_read(struct gw_conn *c, bool on)
{
	if (c->closing || c->c_eof || on == c->c_reading)
		return;
	c->c_reading = on;
	if (on)
		uv_read_start((uv_stream_t *)&c->client, on_client_alloc,
		    on_client_read);
	else
		uv_read_stop((uv_stream_t *)&c->client);
}

/* The head of a request was read: refuse it, hold it, or forward it. */
static bool
decide(struct gw_conn *c)
{
	struct sbx_gateway *g = c->g;
	const char *held;
	char msg[400];
	bool metered;

	c->req_no++;
	c->t0 = uv_now(g->loop);
	c->bytes_up = c->bytes_down = 0;
	c->answered = false;
	c->req_done = false;
	snprintf(c->method, sizeof c->method, "%s",
	    sbx_gateway_req_method(c->rq));
	snprintf(c->path, sizeof c->path, "%s", sbx_gateway_req_path(c->rq));
	if (!sbx_gateway_req_allowed(c->rq, &metered)) {
		c->metered = false;
		snprintf(msg, sizeof msg, "corral gateway: %s %s is not an "
		    "%s API call this lease may make", c->method, c->path,
		    sbx_gateway_api_name(g->api));
		emit(c, SBX_GATEWAY_REFUSED, 403, "not_allowed");
		answer(c, 403, "Forbidden", "permission_error", msg);
		return false;
	}
	c->metered = metered;
	if (g->admit != NULL && (held = g->admit(c->method, c->path,
	    g->ud)) != NULL) {
		snprintf(msg, sizeof msg, "corral gateway: the lease's model "
		    "requests are held (%s); the operator decides", held);
		emit(c, SBX_GATEWAY_HELD, 429, held);
		answer(c, 429, "Too Many Requests", c->g->api ==
		    SBX_GATEWAY_ANTHROPIC ? "rate_limit_error" :
		    "insufficient_quota", msg);
		return false;
	}
	if ((c->meter = sbx_gateway_meter_new(g->api, metered)) == NULL) {
		conn_end(c);
		return false;
	}
	c->active = true;
	inflight_update(g);
	return true;
}

/* Read what the agent sent as far as the request in hand allows. */
static void
process(struct gw_conn *c)
{
	while (!c->closing && !c->end_after_write) {
		enum sbx_gateway_req_ev ev;
		const char *out;
		size_t used = 0, n;

		if (upstream_full(c)) {
			client_read(c, false);
			return;
		}
		if (c->req_done) {
			/* The next request waits for this one's answer. */
			client_read(c, false);
			return;
		}
		ev = sbx_gateway_req_feed(c->rq, c->in, c->inlen, &used);
		if (used > 0) {
			memmove(c->in, c->in + used, c->inlen - used);
			c->inlen -= used;
		}
		if (ev == SBX_GWREQ_BAD) {
			if (c->active) {
				emit(c, SBX_GATEWAY_FAILED, 400, "the agent's "
				    "request is malformed");
				conn_end(c);
			} else
				answer(c, 400, "Bad Request",
				    "invalid_request_error", "corral gateway: "
				    "not an HTTP/1.1 request it reads");
			return;
		}
		if (ev == SBX_GWREQ_HEAD && !decide(c))
			return;
		out = sbx_gateway_req_out(c->rq, &n);
		if (n > 0 && c->active) {
			c->bytes_up += n;
			if (sbx__gateway_up_write(&c->up, out, n) < 0) {
				sbx_gateway_req_out_clear(c->rq);
				sbx__gateway_upstream_ended(c, "cannot reach "
				    "the upstream");
				return;
			}
		}
		sbx_gateway_req_out_clear(c->rq);
		if (ev == SBX_GWREQ_DONE) {
			c->req_done = true;
			continue;
		}
		if (ev == SBX_GWREQ_MORE && used == 0) {
			if (c->c_eof) {
				/* It hung up: mid-request, that ends it. */
				if (c->active)
					emit(c, SBX_GATEWAY_FAILED, 0, "the "
					    "agent hung up mid-request");
				conn_end(c);
				return;
			}
			if (c->inlen == GW_IN_MAX) {
				answer(c, 431, "Request Header Fields Too "
				    "Large", "invalid_request_error",
				    "corral gateway: the request's head is "
				    "too large");
				return;
			}
			client_read(c, true);
			return;
		}
	}
}

static void
on_client_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct gw_conn *c = s->data;

	(void)b;
	if (c->closing)
		return;
	if (n < 0) {
		c->c_eof = true;
		c->c_reading = false;
		uv_read_stop(s);
		if (!c->active && c->inlen == 0) {
			conn_end(c);
			return;
		}
		if (c->active && c->req_done)
			return;	/* the answer still goes out: then the end */
		process(c);
		return;
	}
	/* A new request's first bytes: its head has so long. */
	if (!c->active && c->inlen == 0)
		c->t_head = uv_now(c->g->loop);
	c->inlen += (size_t)n;
	process(c);
}

/* ---- a connection's lifetime --------------------------------------------- */

void
sbx__gateway_conn_unref(struct gw_conn *c)
{
	struct sbx_gateway *g = c->g;

	assert(c->refs > 0);
	if (--c->refs > 0)
		return;
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		g->head = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	g->active--;
	sbx_gateway_req_free(c->rq);
	sbx_gateway_meter_free(c->meter);
	explicit_bzero(c->in, sizeof c->in);
	free(c);
	inflight_update(g);
	gw_unref(g);
}

static void
on_conn_handle_closed(uv_handle_t *h)
{
	sbx__gateway_conn_unref(h->data);
}

static void
conn_end(struct gw_conn *c)
{
	if (c->closing)
		return;
	if (c->active)
		emit(c, SBX_GATEWAY_FAILED, 0, "the connection ended "
		    "mid-request");
	c->closing = true;
	sbx__gateway_up_close(&c->up);
	uv_close((uv_handle_t *)&c->client, on_conn_handle_closed);
	uv_close((uv_handle_t *)&c->timer, on_conn_handle_closed);
	inflight_update(c->g);
}

/* A head that takes too long, or an upstream that never answers. */
static void
on_timer(uv_timer_t *t)
{
	struct gw_conn *c = t->data;
	uint64_t now = uv_now(c->g->loop);

	if (c->closing || c->answered)
		return;
	if (c->active) {
		if (now - c->t0 >= SBX_GATEWAY_ANSWER_MS)
			sbx__gateway_upstream_ended(c, "the upstream did not "
			    "answer in time");
		return;
	}
	if (c->inlen > 0 && now - c->t_head >= SBX_GATEWAY_REQUEST_MS)
		answer(c, 408, "Request Timeout", "invalid_request_error",
		    "corral gateway: no complete request in time");
}

static void
on_connection(uv_stream_t *server, int status)
{
	struct sbx_gateway *g = server->data;
	struct sbx_gateway_req_opts ro;
	struct gw_conn *c;

	if (status < 0 || g->closing)
		return;
	if ((c = calloc(1, sizeof *c)) == NULL)
		return;
	c->g = g;
	c->no = ++g->st.connections;
	c->up.c = c;
	uv_pipe_init(g->loop, &c->client, 0);
	uv_timer_init(g->loop, &c->timer);
	c->client.data = c;
	c->timer.data = c;
	c->refs = 2;
	c->next = g->head;
	if (g->head != NULL)
		g->head->prev = c;
	g->head = c;
	g->active++;
	g->refs++;
	memset(&ro, 0, sizeof ro);
	ro.api = g->api;
	ro.host = g->url.authority;
	ro.base_path = g->url.base_path;
	ro.key = g->key;
	c->rq = sbx_gateway_req_new(&ro);
	if (uv_accept(server, (uv_stream_t *)&c->client) < 0 || c->rq == NULL ||
	    !sbx__sock_peer_ok((uv_handle_t *)&c->client, g->uid) ||
	    g->active > SBX_GATEWAY_MAX_ACTIVE) {
		conn_end(c);
		return;
	}
	uv_timer_start(&c->timer, on_timer, GW_TICK_MS, GW_TICK_MS);
	client_read(c, true);
}

/* ---- the gateway -------------------------------------------------------- */

static void
gw_free(struct sbx_gateway *g)
{
	if (g->key != NULL) {
		explicit_bzero(g->key, strlen(g->key));
		free(g->key);
	}
	if (g->tls != NULL)
		SSL_CTX_free(g->tls);
	free(g->sock_path);
	free(g);
}

static void
gw_unref(struct sbx_gateway *g)
{
	sbx_gateway_close_cb cb;
	void *ud;

	assert(g->refs > 0);
	if (--g->refs > 0)
		return;
	cb = g->close_cb;
	ud = g->close_ud;
	gw_free(g);
	if (cb != NULL)
		cb(ud);
}

static void
on_listener_closed(uv_handle_t *h)
{
	gw_unref(h->data);
}

int
sbx_gateway_start(uv_loop_t *loop, const struct sbx_gateway_opts *o,
    struct sbx_gateway **out)
{
	struct sbx_gateway *g;
	char why[512];
	int rc;

	if (loop == NULL || o == NULL || out == NULL || o->sock_path == NULL ||
	    o->sock_path[0] != '/' || strlen(o->sock_path) >=
	    sizeof ((struct sockaddr_un *)0)->sun_path || o->key == NULL ||
	    o->key[0] == '\0' || strpbrk(o->key, "\r\n") != NULL)
		return -EINVAL;
	*out = NULL;
	signal(SIGPIPE, SIG_IGN);
	if ((g = calloc(1, sizeof *g)) == NULL)
		return -ENOMEM;
	g->loop = loop;
	g->uid = o->uid;
	g->gid = o->gid;
	g->api = o->api;
	g->event = o->event;
	g->inflight = o->inflight;
	g->admit = o->admit;
	g->ud = o->ud;
	if (sbx_gateway_url_parse(o->upstream, &g->url, why, sizeof why) < 0) {
		gw_free(g);
		return -EINVAL;
	}
	if ((g->sock_path = strdup(o->sock_path)) == NULL ||
	    (g->key = strdup(o->key)) == NULL) {
		gw_free(g);
		return -ENOMEM;
	}
	if (g->url.tls && (g->tls = sbx__gateway_tls_new(o->ca_file)) ==
	    NULL) {
		gw_free(g);
		return -EPROTO;
	}
	if ((rc = uv_pipe_init(loop, &g->listener, 0)) < 0) {
		gw_free(g);
		return rc;
	}
	g->listener.data = g;
	g->refs = 1;
	if ((rc = sbx__sock_bind(&g->listener, g->sock_path, g->uid,
	    g->gid)) < 0 || (rc = uv_listen(
	    (uv_stream_t *)&g->listener, 64, on_connection)) < 0) {
		if (rc != -EEXIST)
			unlink(g->sock_path);
		g->closing = true;
		uv_close((uv_handle_t *)&g->listener, on_listener_closed);
		return rc;
	}
	uv_unref((uv_handle_t *)&g->listener);
	*out = g;
	return 0;
}

void
sbx_gateway_close(struct sbx_gateway *g, sbx_gateway_close_cb cb, void *ud)
{
	struct gw_conn *c, *next;

	if (g == NULL)
		return;
	assert(!g->closing);
	g->closing = true;
	g->close_cb = cb;
	g->close_ud = ud;
	unlink(g->sock_path);
	uv_close((uv_handle_t *)&g->listener, on_listener_closed);
	for (c = g->head; c != NULL; c = next) {
		next = c->next;
		conn_end(c);
	}
}

void
sbx_gateway_stats(const struct sbx_gateway *g, struct sbx_gateway_stats *st)
{
	memset(st, 0, sizeof *st);
	if (g != NULL)
		*st = g->st;
}
