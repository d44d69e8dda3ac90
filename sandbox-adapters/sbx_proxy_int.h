/*
 * sbx_proxy_int.h: the egress proxy's own layout, shared by its files only
 * (sbx_proxy.c: the proxy, its listener and each connection's lifetime;
 * sbx_proxy_request.c: the request; sbx_proxy_upstream.c: the lookup and
 * the dial; sbx_proxy_splice.c: the bytes both ways).
 */
#ifndef CORRAL_SBX_PROXY_INT_H
#define CORRAL_SBX_PROXY_INT_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <uv.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"
#include "sandbox-adapters/sbx_int.h"

#define REQ_MAX 8192		/* request line and headers */
#define URL_MAX SBX_EGRESS_URL_MAX
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
	char req[REQ_MAX];
	size_t reqlen, parsed;
	char url[URL_MAX];
	size_t urllen;
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

/* sbx_proxy.c: events, refusals and the end of a connection. */
void sbx__proxy_emit(struct tunnel *t, enum sbx_proxy_verdict v,
    enum sbx_egress_reason r);
void sbx__proxy_inflight_update(struct sbx_proxy *px);
void sbx__proxy_tunnel_unref(struct tunnel *t);
void sbx__proxy_tunnel_end(struct tunnel *t, enum sbx_egress_reason why);
/* Write an HTTP refusal (code, status) and end; report v, why. */
void sbx__proxy_refuse(struct tunnel *t, int code, const char *status,
    enum sbx_proxy_verdict v, enum sbx_egress_reason why);
/* 403: the request is refused for why. */
void sbx__proxy_deny(struct tunnel *t, enum sbx_egress_reason why);
/* The tunnel's deadline (request, dial, or its whole lifetime). */
void sbx__proxy_on_timer(uv_timer_t *h);

/* sbx_proxy_request.c: the agent's bytes before the tunnel is open. */
void sbx__proxy_request_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b);

/* sbx_proxy_upstream.c: resolve, vet and dial the target. */
void sbx__proxy_upstream_dial(struct tunnel *t);
void sbx__proxy_upstream_resolved(void *token, int status,
    const struct sockaddr_storage *addrs, size_t n);
/* The resolver of a proxy started without one: uv_getaddrinfo. */
int sbx__proxy_upstream_resolve(uv_loop_t *loop, const char *host,
    sbx_proxy_resolved_fn done, void *token, void *ud);

/* sbx_proxy_splice.c: the open tunnel. */
void sbx__proxy_splice_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b);
/* The 200 went out: start splicing. */
void sbx__proxy_splice_start(uv_write_t *w, int status);
/* Bytes from the agent on an open tunnel. */
void sbx__proxy_splice_client(struct tunnel *t, ssize_t n, const uv_buf_t *b);

#endif /* CORRAL_SBX_PROXY_INT_H */
