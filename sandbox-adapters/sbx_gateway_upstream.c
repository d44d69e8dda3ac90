/*
 * sbx_gateway_upstream.c: the model gateway's connection to its upstream
 * (SPEC 8.5): dialled on the first request of an agent connection and
 * kept for the next; plain TCP to a loopback upstream, else TLS with
 * OpenSSL over memory BIOs on the libuv loop (never blocking it): the
 * peer's certificate verified against the system's store or the
 * operator's CA file, its name (or IP address) checked, SNI and ALPN
 * http/1.1 sent. Plaintext written before the connection is ready is
 * held until it is.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <uv.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"
#include "sandbox-adapters/sbx_gateway_int.h"

struct wreq {
	uv_write_t w;
	struct gw_up *up;
	size_t n;
	char data[];
};

SSL_CTX *
sbx__gateway_tls_new(const char *ca_file)
{
	static const unsigned char alpn[] = "\x08http/1.1";
	SSL_CTX *ctx;

	/*
	 * Verifying a certificate's signature looks its digest up by name:
	 * a process that left libcrypto's digest tables out (corral-holder
	 * does, to stay small) would find none and call every certificate
	 * "too weak". These are the ones certificates are signed with.
	 */
	EVP_add_digest(EVP_sha1());
	EVP_add_digest(EVP_sha224());
	EVP_add_digest(EVP_sha256());
	EVP_add_digest(EVP_sha384());
	EVP_add_digest(EVP_sha512());
	if ((ctx = SSL_CTX_new(TLS_client_method())) == NULL)
		return NULL;
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	if ((ca_file != NULL ? SSL_CTX_load_verify_locations(ctx, ca_file,
	    NULL) : SSL_CTX_set_default_verify_paths(ctx)) != 1 ||
	    SSL_CTX_set_alpn_protos(ctx, alpn, sizeof alpn - 1) != 0) {
		SSL_CTX_free(ctx);
		ERR_clear_error();
		return NULL;
	}
	return ctx;
}

int
sbx_gateway_ca_check(const char *ca_file)
{
	SSL_CTX *ctx = sbx__gateway_tls_new(ca_file);

	if (ctx == NULL)
		return -EPROTO;
	SSL_CTX_free(ctx);
	return 0;
}

bool
sbx__gateway_up_open(const struct gw_up *up)
{
	return up->tcp_init && !up->closing;
}

static void
fail(struct gw_up *up, const char *why)
{
	if (!up->closing)
		sbx__gateway_upstream_ended(up->c, why);
}

static void
on_written(uv_write_t *w, int status)
{
	struct wreq *r = w->data;
	struct gw_up *up = r->up;
	bool above = up->pending >= GW_PENDING_MAX / 4;

	up->pending -= r->n;
	explicit_bzero(r->data, r->n);
	free(r);
	if (status < 0) {
		fail(up, "the upstream connection failed while writing");
		return;
	}
	if (above && up->pending < GW_PENDING_MAX / 4)
		sbx__gateway_upstream_drained(up->c);
}

static int
raw_write(struct gw_up *up, const char *s, size_t n)
{
	struct wreq *r;
	uv_buf_t b;
	int rc;

	if (n == 0)
		return 0;
	if ((r = malloc(sizeof *r + n)) == NULL)
		return -ENOMEM;
	memcpy(r->data, s, n);
	r->n = n;
	r->up = up;
	r->w.data = r;
	b = uv_buf_init(r->data, (unsigned)n);
	if ((rc = uv_write(&r->w, (uv_stream_t *)&up->tcp, &b, 1,
	    on_written)) < 0) {
		free(r);
		return rc;
	}
	up->pending += n;
	return 0;
}

/* What TLS wants to send, onto the socket. */
static int
flush_tls(struct gw_up *up)
{
	char buf[GW_READ_SZ];
	int n, rc;

	while (BIO_ctrl_pending(up->wbio) > 0) {
		n = BIO_read(up->wbio, buf, sizeof buf);
		if (n <= 0)
			break;
		if ((rc = raw_write(up, buf, (size_t)n)) < 0)
			return rc;
	}
	return 0;
}

static int
send_plain(struct gw_up *up, const char *s, size_t n)
{
	if (up->ssl == NULL)
		return raw_write(up, s, n);
	while (n > 0) {
		int k = SSL_write(up->ssl, s, n > 1u << 30 ? 1 << 30 : (int)n);

		if (k <= 0)
			return -EPROTO;
		s += k;
		n -= (size_t)k;
	}
	return flush_tls(up);
}

static int
release_held(struct gw_up *up)
{
	int rc = 0;

	if (up->held_len > 0)
		rc = send_plain(up, up->held, up->held_len);
	if (up->held != NULL)
		explicit_bzero(up->held, up->held_len);
	up->held_len = 0;
	if (up->pending < GW_PENDING_MAX / 4)
		sbx__gateway_upstream_drained(up->c);
	return rc;
}

static void
tls_error(struct gw_up *up, const char *stage)
{
	char why[320];
	long v = SSL_get_verify_result(up->ssl);
	unsigned long e = ERR_get_error();

	if (v != X509_V_OK)
		snprintf(why, sizeof why, "TLS %s: certificate verify failed "
		    "(%s)", stage, X509_verify_cert_error_string(v));
	else if (e != 0)
		snprintf(why, sizeof why, "TLS %s: %s", stage,
		    ERR_reason_error_string(e) != NULL ?
		    ERR_reason_error_string(e) : "error");
	else
		snprintf(why, sizeof why, "TLS %s failed", stage);
	ERR_clear_error();
	fail(up, why);
}

/* Drive the handshake, then hand every decrypted byte on. */
static void
tls_drive(struct gw_up *up)
{
	char buf[GW_READ_SZ];
	int r;

	if (!up->handshaken) {
		r = SSL_do_handshake(up->ssl);
		if (r != 1) {
			int e = SSL_get_error(up->ssl, r);

			if (e == SSL_ERROR_WANT_READ ||
			    e == SSL_ERROR_WANT_WRITE) {
				if (flush_tls(up) < 0)
					fail(up, "the upstream connection "
					    "failed");
				return;
			}
			tls_error(up, "handshake");
			return;
		}
		up->handshaken = true;
		if (flush_tls(up) < 0 || release_held(up) < 0) {
			fail(up, "the upstream connection failed");
			return;
		}
	}
	while (!up->closing && up->ssl != NULL) {
		r = SSL_read(up->ssl, buf, sizeof buf);
		if (r > 0) {
			sbx__gateway_from_upstream(up->c, buf, (size_t)r);
			continue;
		}
		switch (SSL_get_error(up->ssl, r)) {
		case SSL_ERROR_WANT_READ:
		case SSL_ERROR_WANT_WRITE:
			if (flush_tls(up) < 0)
				fail(up, "the upstream connection failed");
			return;
		case SSL_ERROR_ZERO_RETURN:
			up->eof = true;
			sbx__gateway_upstream_ended(up->c, NULL);
			return;
		default:
			tls_error(up, "read");
			return;
		}
	}
}

static void
on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
	static char buf[GW_READ_SZ * 4];	/* the loop's one thread */

	(void)h;
	(void)hint;
	*b = uv_buf_init(buf, sizeof buf);
}

static void
on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct gw_up *up = s->data;

	if (n == 0 || up->closing)
		return;
	if (n < 0) {
		up->eof = true;
		if (up->ssl != NULL && !up->handshaken)
			fail(up, "TLS handshake: the upstream closed the "
			    "connection");
		else
			sbx__gateway_upstream_ended(up->c, n == UV_EOF ? NULL :
			    "the upstream connection was reset");
		return;
	}
	if (up->ssl == NULL) {
		sbx__gateway_from_upstream(up->c, b->base, (size_t)n);
		return;
	}
	if (BIO_write(up->rbio, b->base, (int)n) != (int)n) {
		fail(up, "out of memory");
		return;
	}
	tls_drive(up);
}

void
sbx__gateway_up_read(struct gw_up *up, bool on)
{
	if (!up->connected || up->closing || on == up->reading)
		return;
	up->reading = on;
	if (on)
		uv_read_start((uv_stream_t *)&up->tcp, on_alloc, on_read);
	else
		uv_read_stop((uv_stream_t *)&up->tcp);
}

static int
tls_start(struct gw_up *up)
{
	struct sbx_gateway *g = up->c->g;
	struct in6_addr a6;
	struct in_addr a4;
	bool ip = inet_pton(AF_INET, g->url.host, &a4) == 1 ||
	    inet_pton(AF_INET6, g->url.host, &a6) == 1;

	if ((up->ssl = SSL_new(g->tls)) == NULL ||
	    (up->rbio = BIO_new(BIO_s_mem())) == NULL ||
	    (up->wbio = BIO_new(BIO_s_mem())) == NULL)
		return -ENOMEM;
	SSL_set_bio(up->ssl, up->rbio, up->wbio);
	SSL_set_connect_state(up->ssl);
	/* SNI for a name; the name or the address checked either way. */
	if (ip) {
		if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(up->ssl),
		    g->url.host) != 1)
			return -EPROTO;
	} else if (SSL_set_tlsext_host_name(up->ssl, g->url.host) != 1 ||
	    SSL_set1_host(up->ssl, g->url.host) != 1)
		return -EPROTO;
	tls_drive(up);
	return 0;
}

static void
on_connect(uv_connect_t *req, int status)
{
	struct gw_up *up = req->data;
	char why[160];

	if (up->closing)
		return;
	if (status < 0) {
		snprintf(why, sizeof why, "cannot connect to the upstream "
		    "(%s)", uv_strerror(status));
		fail(up, why);
		return;
	}
	up->connected = true;
	sbx__gateway_up_read(up, true);
	if (up->c->g->url.tls) {
		if (tls_start(up) < 0)
			fail(up, "TLS: cannot start");
		return;
	}
	if (release_held(up) < 0)
		fail(up, "the upstream connection failed");
}

static int
dial_addr(struct gw_up *up, const struct sockaddr *sa)
{
	int rc;

	up->creq.data = up;
	if ((rc = uv_tcp_connect(&up->creq, &up->tcp, sa, on_connect)) < 0)
		return rc;
	return 0;
}

static void
on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
	struct gw_up *up = req->data;
	struct gw_conn *c = up->c;
	char why[160];
	int rc;

	up->resolving = false;
	if (status == 0 && !up->closing && res != NULL) {
		if ((rc = dial_addr(up, res->ai_addr)) < 0) {
			snprintf(why, sizeof why, "cannot connect to the "
			    "upstream (%s)", uv_strerror(rc));
			fail(up, why);
		}
	} else if (!up->closing) {
		snprintf(why, sizeof why, "cannot resolve the upstream's name "
		    "(%s)", uv_strerror(status));
		fail(up, why);
	}
	uv_freeaddrinfo(res);
	sbx__gateway_conn_unref(c);
}

static void
on_tcp_closed(uv_handle_t *h)
{
	struct gw_up *up = h->data;
	struct gw_conn *c = up->c;

	if (up->ssl != NULL)
		SSL_free(up->ssl);	/* and its BIOs */
	up->ssl = NULL;
	up->rbio = up->wbio = NULL;
	if (up->held != NULL)
		explicit_bzero(up->held, up->held_cap);
	free(up->held);
	up->held = NULL;
	up->held_len = up->held_cap = 0;
	up->tcp_init = up->connected = up->closing = up->eof = false;
	up->handshaken = up->reading = false;
	up->pending = 0;
	sbx__gateway_conn_unref(c);
}

void
sbx__gateway_up_close(struct gw_up *up)
{
	if (!up->tcp_init || up->closing)
		return;
	up->closing = true;
	if (up->resolving)
		uv_cancel((uv_req_t *)&up->gai);
	uv_close((uv_handle_t *)&up->tcp, on_tcp_closed);
}

static int
dial(struct gw_up *up)
{
	struct sbx_gateway *g = up->c->g;
	struct sockaddr_storage ss;
	struct addrinfo hints;
	char port[8];
	int rc;

	if ((rc = uv_tcp_init(g->loop, &up->tcp)) < 0)
		return rc;
	up->tcp.data = up;
	up->tcp_init = true;
	up->c->refs++;
	uv_tcp_nodelay(&up->tcp, 1);
	if (uv_ip4_addr(g->url.host, (int)g->url.port,
	    (struct sockaddr_in *)&ss) == 0 || uv_ip6_addr(g->url.host,
	    (int)g->url.port, (struct sockaddr_in6 *)&ss) == 0)
		return dial_addr(up, (struct sockaddr *)&ss);
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(port, sizeof port, "%u", g->url.port);
	up->gai.data = up;
	if ((rc = uv_getaddrinfo(g->loop, &up->gai, on_resolved, g->url.host,
	    port, &hints)) < 0)
		return rc;
	up->resolving = true;
	up->c->refs++;
	return 0;
}

static int
hold(struct gw_up *up, const char *s, size_t n)
{
	if (up->held_len + n > up->held_cap) {
		size_t cap = up->held_cap ? up->held_cap : 16384;
		char *nb;

		while (cap < up->held_len + n)
			cap *= 2;
		if ((nb = malloc(cap)) == NULL)
			return -ENOMEM;
		if (up->held != NULL) {
			memcpy(nb, up->held, up->held_len);
			explicit_bzero(up->held, up->held_cap);
			free(up->held);
		}
		up->held = nb;
		up->held_cap = cap;
	}
	memcpy(up->held + up->held_len, s, n);
	up->held_len += n;
	return 0;
}

int
sbx__gateway_up_write(struct gw_up *up, const char *s, size_t n)
{
	int rc;

	if (up->closing)
		return -ECONNRESET;
	if (!up->tcp_init && (rc = dial(up)) < 0) {
		sbx__gateway_up_close(up);
		return rc;
	}
	if (!up->connected || (up->ssl != NULL && !up->handshaken) ||
	    (up->c->g->url.tls && up->ssl == NULL))
		return hold(up, s, n);
	return send_plain(up, s, n);
}
