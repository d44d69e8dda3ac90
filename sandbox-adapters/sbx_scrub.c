/*
 * sbx_scrub.c: the credential scrubber (SPEC 8.5), pure: it replaces every
 * occurrence of a lease's minted secret in a byte stream with [REDACTED],
 * across chunk boundaries (a KMP matcher holds back a partial match until
 * the next chunk or the flush), and counts the hits.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"
#include "sandbox-adapters/sbx_int.h"

#define REDACTED "[REDACTED]"

struct sbx_scrub {
	char *secret;
	size_t len;
	size_t q;		/* bytes of secret matched and held back */
	size_t *fail;		/* KMP failure function */
	char out[4096];		/* batched output */
	size_t outlen;
	unsigned long long hits;
};

struct sbx_scrub *
sbx_scrub_new(const char *secret)
{
	struct sbx_scrub *s;
	size_t k = 0;

	if (secret == NULL || *secret == '\0')
		return NULL;
	if ((s = calloc(1, sizeof *s)) == NULL)
		return NULL;
	s->len = strlen(secret);
	s->secret = strdup(secret);
	s->fail = calloc(s->len, sizeof *s->fail);
	if (s->secret == NULL || s->fail == NULL) {
		sbx_scrub_free(s);
		return NULL;
	}
	/* fail[i]: the longest proper border of secret[0..i]. */
	for (size_t i = 1; i < s->len; i++) {
		while (k > 0 && secret[i] != secret[k])
			k = s->fail[k - 1];
		if (secret[i] == secret[k])
			k++;
		s->fail[i] = k;
	}
	return s;
}

void
sbx_scrub_free(struct sbx_scrub *s)
{
	if (s == NULL)
		return;
	if (s->secret != NULL) {
		explicit_bzero(s->secret, s->len);
		free(s->secret);
	}
	free(s->fail);
	explicit_bzero(s, sizeof *s);
	free(s);
}

static void
emit(struct sbx_scrub *s, const char *p, size_t n, sbx_scrub_out_fn out,
    void *ud)
{
	while (n > 0) {
		size_t k = sizeof s->out - s->outlen;

		if (k > n)
			k = n;
		memcpy(s->out + s->outlen, p, k);
		s->outlen += k;
		p += k;
		n -= k;
		if (s->outlen == sizeof s->out) {
			out(s->out, s->outlen, ud);
			s->outlen = 0;
		}
	}
}

static void
emit_flush(struct sbx_scrub *s, sbx_scrub_out_fn out, void *ud)
{
	if (s->outlen > 0) {
		out(s->out, s->outlen, ud);
		s->outlen = 0;
	}
}

void
sbx_scrub_feed(struct sbx_scrub *s, const void *buf, size_t len,
    sbx_scrub_out_fn out, void *ud)
{
	const char *p = buf;

	assert(s != NULL && out != NULL);
	for (size_t i = 0; i < len; i++) {
		char c = p[i];

		/* A mismatch releases the held bytes that cannot start one. */
		while (s->q > 0 && s->secret[s->q] != c) {
			size_t nq = s->fail[s->q - 1];

			emit(s, s->secret, s->q - nq, out, ud);
			s->q = nq;
		}
		if (s->secret[s->q] == c)
			s->q++;
		else
			emit(s, &c, 1, out, ud);
		if (s->q == s->len) {
			emit(s, REDACTED, sizeof REDACTED - 1, out, ud);
			s->q = 0;
			s->hits++;
		}
	}
	emit_flush(s, out, ud);
}

void
sbx_scrub_flush(struct sbx_scrub *s, sbx_scrub_out_fn out, void *ud)
{
	assert(s != NULL && out != NULL);
	emit(s, s->secret, s->q, out, ud);
	s->q = 0;
	emit_flush(s, out, ud);
}

size_t
sbx_scrub_held(const struct sbx_scrub *s)
{
	return s != NULL ? s->q : 0;
}

unsigned long long
sbx_scrub_hits(const struct sbx_scrub *s)
{
	return s != NULL ? s->hits : 0;
}

struct growbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void
grow_out(const char *buf, size_t len, void *ud)
{
	struct growbuf *g = ud;

	if (g->oom)
		return;
	if (g->len + len + 1 > g->cap) {
		size_t cap = (g->len + len + 1) * 2;
		char *np = realloc(g->p, cap);

		if (np == NULL) {
			g->oom = true;
			return;
		}
		g->p = np;
		g->cap = cap;
	}
	memcpy(g->p + g->len, buf, len);
	g->len += len;
	g->p[g->len] = '\0';
}

char *
sbx_scrub_copy(const void *buf, size_t len, const char *secret,
    size_t *outlen)
{
	struct growbuf g = { 0 };
	struct sbx_scrub *s;

	if (secret == NULL || *secret == '\0') {
		grow_out(buf, len, &g);
	} else {
		if ((s = sbx_scrub_new(secret)) == NULL)
			return NULL;
		sbx_scrub_feed(s, buf, len, grow_out, &g);
		sbx_scrub_flush(s, grow_out, &g);
		sbx_scrub_free(s);
	}
	if (g.oom || (g.p == NULL && (g.p = calloc(1, 1)) == NULL)) {
		free(g.p);
		return NULL;
	}
	if (outlen != NULL)
		*outlen = g.len;
	return g.p;
}
