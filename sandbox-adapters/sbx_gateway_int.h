/*
 * sbx_gateway_int.h: the model gateway's own layout, shared by its files
 * only (sbx_gateway.c: the gateway, its listener and each agent
 * connection; sbx_gateway_upstream.c: the upstream connection, plain or
 * TLS; sbx_gateway_http.c: the pure readers).
 */
#ifndef CORRAL_SBX_GATEWAY_INT_H
#define CORRAL_SBX_GATEWAY_INT_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <openssl/ssl.h>
#include <uv.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"

#define GW_READ_SZ 16384
#define GW_PENDING_MAX (1u << 20)	/* queued writes before reads stop */
#define GW_IN_MAX (256u * 1024u)	/* agent bytes held, unread */
#define GW_TICK_MS 1000			/* the deadlines' resolution */

struct gw_conn;

/* The upstream connection of one agent connection. */
struct gw_up {
	struct gw_conn *c;
	uv_tcp_t tcp;
	uv_connect_t creq;
	uv_getaddrinfo_t gai;
	bool tcp_init, connected, closing, eof, resolving;
	SSL *ssl;
	BIO *rbio, *wbio;	/* memory BIOs: the TLS bytes */
	bool handshaken;
	char *held;		/* plaintext before the connection is ready */
	size_t held_len, held_cap;
	size_t pending;		/* bytes of writes not yet done */
	bool reading;
};

struct gw_conn {
	struct sbx_gateway *g;
	struct gw_conn *prev, *next;
	unsigned long long no;
	uv_pipe_t client;
	uv_timer_t timer;
	int refs;		/* open handles */
	bool closing;
	struct sbx_gateway_req *rq;
	struct sbx_gateway_meter *meter;
	struct gw_up up;
	char in[GW_IN_MAX];	/* agent bytes not yet read by rq */
	size_t inlen;
	bool c_reading, c_eof;
	size_t c_pending;	/* bytes of writes to the agent not yet done */
	bool end_after_write;	/* a refusal or a last answer */
	/* the request in hand */
	bool active;		/* forwarded, not yet answered */
	bool answered;		/* some of the answer reached the agent */
	bool req_done;		/* all of the request was read */
	unsigned long long req_no;
	uint64_t t0, t_head;	/* forwarded; its head's first bytes */
	unsigned long long bytes_up, bytes_down;
	char method[16];
	char path[201];
	bool metered;
};

struct sbx_gateway {
	uv_loop_t *loop;
	uv_pipe_t listener;
	int refs;		/* listener + connections */
	bool closing;
	char *sock_path;
	uid_t uid;
	gid_t gid;
	enum sbx_gateway_api api;
	struct sbx_gateway_url url;
	char *key;
	SSL_CTX *tls;
	sbx_gateway_event_cb event;
	sbx_gateway_inflight_cb inflight;
	sbx_gateway_admit_fn admit;
	void *ud;
	struct gw_conn *head;
	unsigned active, inflight_n;
	char last_stop[SBX_GATEWAY_STOP_MAX];
	struct sbx_gateway_stats st;
	sbx_gateway_close_cb close_cb;
	void *close_ud;
};

/* sbx_gateway.c: the agent's side. */
/* Bytes of the upstream's (plaintext): to the meter and the agent. */
void sbx__gateway_from_upstream(struct gw_conn *, const char *, size_t);
/* The upstream ended (eof) or failed (err: why, before any answer). */
void sbx__gateway_upstream_ended(struct gw_conn *, const char *err);
/* The upstream's writes drained below the mark: read the agent again. */
void sbx__gateway_upstream_drained(struct gw_conn *);
void sbx__gateway_conn_unref(struct gw_conn *);

/* sbx_gateway_upstream.c */
SSL_CTX *sbx__gateway_tls_new(const char *ca_file);
/* Queue plaintext for the upstream, dialling it first if need be. */
int sbx__gateway_up_write(struct gw_up *, const char *, size_t);
/* Stop or start reading the upstream (the agent's backpressure). */
void sbx__gateway_up_read(struct gw_up *, bool on);
/* Close it (the handles hold a reference on the connection). */
void sbx__gateway_up_close(struct gw_up *);
bool sbx__gateway_up_open(const struct gw_up *);

#endif /* CORRAL_SBX_GATEWAY_INT_H */
