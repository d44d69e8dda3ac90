/*
 * sbx_proxy.c: the lease's auditing egress proxy on the holder's libuv loop
 * (SPEC 8.2, 8.7; SANDBOX.md 5.b). One request per connection on the
 * lease's unix socket; only CONNECT to an allowed target, decided before
 * any lookup (sbx_egress.c); the resolved addresses are vetted and the
 * vetted one is dialled; then bytes are spliced both ways. This file: the
 * proxy, its listener, each connection's lifetime and events; the request,
 * the upstream and the splice are sbx_proxy_{request,upstream,splice}.c.
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

#include <uv.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"
#include "sandbox-adapters/sbx_proxy_int.h"

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

void
sbx__proxy_emit(struct tunnel *t, enum sbx_proxy_verdict v,
    enum sbx_egress_reason r)
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

void
sbx__proxy_inflight_update(struct sbx_proxy *px)
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
	sbx__proxy_inflight_update(h->data);
}

/* ------------------------------------------------------------------ */
/* Tunnel lifetime.                                                    */

void
sbx__proxy_tunnel_unref(struct tunnel *t)
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
	sbx__proxy_inflight_update(px);
	proxy_unref(px);
}

static void
on_tunnel_handle_closed(uv_handle_t *h)
{
	sbx__proxy_tunnel_unref(h->data);
}

static void
close_handle(struct tunnel *t, uv_handle_t *h)
{
	if (!uv_is_closing(h))
		uv_close(h, on_tunnel_handle_closed);
	(void)t;
}

/* End t: report its close if it was open, then close every handle. */
void
sbx__proxy_tunnel_end(struct tunnel *t, enum sbx_egress_reason why)
{
	if (t->closing)
		return;
	t->closing = true;
	t->st = T_DONE;
	t->end = why;
	if (t->allowed)
		sbx__proxy_emit(t, SBX_PROXY_CLOSE, why);
	close_handle(t, (uv_handle_t *)&t->client);
	close_handle(t, (uv_handle_t *)&t->timer);
	if (t->up_init) {
		t->up_init = false;
		close_handle(t, (uv_handle_t *)&t->up);
	}
	sbx__proxy_inflight_update(t->px);
}

static void
on_reply_written(uv_write_t *w, int status)
{
	struct tunnel *t = w->data;

	t->wc_busy = false;
	if (!t->closing)
		sbx__proxy_tunnel_end(t, t->end);
}

/* Answer with an HTTP status and end (refusals, failures). */
void
sbx__proxy_refuse(struct tunnel *t, int code, const char *status,
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
	sbx__proxy_emit(t, v, why);
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
		sbx__proxy_tunnel_end(t, why);
	sbx__proxy_inflight_update(t->px);
}

void
sbx__proxy_deny(struct tunnel *t, enum sbx_egress_reason why)
{
	sbx__proxy_refuse(t, 403, "Forbidden", SBX_PROXY_DENY, why);
}

void
sbx__proxy_on_timer(uv_timer_t *h)
{
	struct tunnel *t = h->data;

	if (t->closing)
		return;
	if (t->st == T_OPEN) {
		sbx__proxy_tunnel_end(t, SBX_EGRESS_CAP_TIME);
		return;
	}
	if (t->st == T_DONE) {
		/* A refusal the client would not read: drop it. */
		sbx__proxy_tunnel_end(t, t->end);
		return;
	}
	if (t->st == T_REQUEST)
		sbx__proxy_refuse(t, 408, "Request Timeout", SBX_PROXY_ERROR,
		    SBX_EGRESS_TIMEOUT);
	else
		sbx__proxy_refuse(t, 504, "Gateway Timeout", SBX_PROXY_ERROR,
		    SBX_EGRESS_TIMEOUT);
}

/* ------------------------------------------------------------------ */
/* Accepting a connection.                                             */

/* The peer's uid: the lease's own, or root (corral's tests, the doctor). */
bool
sbx__sock_peer_ok(uv_handle_t *client, uid_t uid)
{
	struct ucred cr;
	socklen_t len = sizeof cr;
	uv_os_fd_t fd;

	if (uv_fileno(client, &fd) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
		return false;
	return cr.uid == uid || cr.uid == 0;
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
	if (uv_accept(server, (uv_stream_t *)&t->client) < 0) {
		sbx__proxy_tunnel_end(t, SBX_EGRESS_CLOSED);
		return;
	}
	if (!sbx__sock_peer_ok((uv_handle_t *)&t->client, px->uid)) {
		sbx__proxy_emit(t, SBX_PROXY_ERROR, SBX_EGRESS_FOREIGN_PEER);
		sbx__proxy_tunnel_end(t, SBX_EGRESS_FOREIGN_PEER);
		return;
	}
	if (px->total > px->max_total) {
		sbx__proxy_refuse(t, 503, "Service Unavailable", SBX_PROXY_LIMIT,
		    SBX_EGRESS_CAP_CONNECTIONS);
		return;
	}
	uv_timer_start(&t->timer, sbx__proxy_on_timer, px->request_ms, 0);
	if (uv_read_start((uv_stream_t *)&t->client, sbx__proxy_splice_alloc,
	    sbx__proxy_request_read) < 0)
		sbx__proxy_tunnel_end(t, SBX_EGRESS_CLOSED);
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

#ifdef SBX_TEST_OVERRIDES
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
#endif

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

int
sbx__sock_bind(uv_pipe_t *l, const char *path, uid_t uid, gid_t gid)
{
	struct stat sb;
	mode_t old;
	int rc;

	if (lstat(path, &sb) == 0) {
		if (!S_ISSOCK(sb.st_mode))
			return -EEXIST;
		if (unlink(path) < 0)
			return -errno;
	} else if (errno != ENOENT) {
		return -errno;
	}
	old = umask(0177);
	rc = uv_pipe_bind(l, path);
	umask(old);
	if (rc < 0)
		return rc;
	if (lchown(path, uid, gid) < 0 || lstat(path, &sb) < 0)
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
	if ((rc = sbx__sock_bind(&px->listener, px->sock_path, px->uid,
	    px->gid)) < 0 ||
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
		sbx__proxy_tunnel_end(t, SBX_EGRESS_CLOSED);
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
