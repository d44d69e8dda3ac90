/*
 * sbx_gateway_http.c: the model gateway's pure half (SPEC 8.5): which
 * method and path each API allows, the upstream URL, the request reader
 * (the agent's head in, the upstream's head with the real key out, the
 * body passed on) and the response reader (the framing followed, usage
 * read from server-sent events or a JSON body). No I/O; every buffer is
 * bounded. fuzz/fuzz_gateway.c drives both readers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <http_parser.h>
#include <jansson.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"

#define HEAD_MAX (64u * 1024u)		/* the agent's request head */
#define URL_MAX 4096
#define NAME_MAX_ 256
#define SHOWN_MAX 200			/* a path in events and receipts */
#define OUT_MAX (1u << 20)		/* produced, not yet taken */
#define EVENT_MAX (4u << 20)		/* one server-sent event's data */
#define JSON_MAX (16u << 20)		/* a JSON answer read for usage */

/* ---- the APIs --------------------------------------------------------- */

struct route {
	const char *method, *path;
	bool metered;
};

static const struct route anthropic_routes[] = {
	{ "POST", "/v1/messages", true },
	{ "POST", "/v1/messages/count_tokens", false },
	{ "GET", "/v1/models", false },
	{ NULL, NULL, false },
};

static const struct route openai_routes[] = {
	{ "POST", "/v1/responses", true },
	{ "POST", "/v1/chat/completions", true },
	{ "GET", "/v1/models", false },
	{ NULL, NULL, false },
};

const char *
sbx_gateway_api_name(enum sbx_gateway_api a)
{
	return a == SBX_GATEWAY_ANTHROPIC ? "anthropic" : "openai";
}

int
sbx_gateway_api_parse(const char *s, enum sbx_gateway_api *out)
{
	if (s != NULL && strcmp(s, "anthropic") == 0)
		*out = SBX_GATEWAY_ANTHROPIC;
	else if (s != NULL && strcmp(s, "openai") == 0)
		*out = SBX_GATEWAY_OPENAI;
	else
		return -EINVAL;
	return 0;
}

int
sbx_gateway_usd_parse(const char *s, uint64_t *nano)
{
	uint64_t whole = 0, frac = 0, scale = 1000000000ull;
	const char *c = s;

	if (s == NULL || *c < '0' || *c > '9')
		return -EINVAL;
	for (; *c >= '0' && *c <= '9'; c++) {
		whole = whole * 10 + (uint64_t)(*c - '0');
		if (whole > 1000000000ull)
			return -EINVAL;
	}
	if (*c == '.') {
		c++;
		for (int k = 0; *c >= '0' && *c <= '9'; c++, k++) {
			if (k >= 9)
				return -EINVAL;
			scale /= 10;
			frac += (uint64_t)(*c - '0') * scale;
		}
	}
	if (*c != '\0')
		return -EINVAL;
	*nano = whole * 1000000000ull + frac;
	return 0;
}

bool
sbx_gateway_allowed(enum sbx_gateway_api api, const char *method,
    const char *path, bool *metered)
{
	const struct route *r = api == SBX_GATEWAY_ANTHROPIC ?
	    anthropic_routes : openai_routes;

	if (metered != NULL)
		*metered = false;
	for (; method != NULL && path != NULL && r->method != NULL; r++) {
		if (strcmp(r->method, method) == 0 &&
		    strcmp(r->path, path) == 0) {
			if (metered != NULL)
				*metered = r->metered;
			return true;
		}
	}
	return false;
}

const char *
sbx_gateway_verdict_name(enum sbx_gateway_verdict v)
{
	switch (v) {
	case SBX_GATEWAY_DONE: return "done";
	case SBX_GATEWAY_REFUSED: return "refused";
	case SBX_GATEWAY_HELD: return "held";
	case SBX_GATEWAY_FAILED: return "failed";
	}
	return "unknown";
}

/* ---- the upstream URL --------------------------------------------------- */

static bool
loopback_host(const char *h)
{
	struct in_addr a4;

	if (strcmp(h, "localhost") == 0 || strcmp(h, "::1") == 0)
		return true;
	return inet_pton(AF_INET, h, &a4) == 1 &&
	    (ntohl(a4.s_addr) >> 24) == 127;
}

int
sbx_gateway_url_parse(const char *url, struct sbx_gateway_url *u, char *why,
    size_t whysz)
{
	const char *rest, *slash, *hp, *colon = NULL;
	size_t hn;

	memset(u, 0, sizeof *u);
	if (url != NULL && strncmp(url, "https://", 8) == 0) {
		u->tls = true;
		rest = url + 8;
	} else if (url != NULL && strncmp(url, "http://", 7) == 0) {
		rest = url + 7;
	} else
		goto invalid;
	for (const char *c = rest; *c != '\0'; c++)
		if ((unsigned char)*c <= 0x20 || *c == 0x7f || *c == '?' ||
		    *c == '#' || *c == '@' || *c == '\\')
			goto invalid;
	slash = strchr(rest, '/');
	hn = slash != NULL ? (size_t)(slash - rest) : strlen(rest);
	if (hn == 0 || hn >= sizeof u->authority)
		goto invalid;
	hp = rest;
	if (*hp == '[') {
		const char *close = memchr(hp, ']', hn);

		if (close == NULL || (size_t)(close - hp) - 1 >= sizeof u->host)
			goto invalid;
		memcpy(u->host, hp + 1, (size_t)(close - hp) - 1);
		if (close + 1 < hp + hn) {
			if (close[1] != ':')
				goto invalid;
			colon = close + 1;
		}
	} else {
		const char *c = memchr(hp, ':', hn);
		size_t n = c != NULL ? (size_t)(c - hp) : hn;

		if (n == 0 || n >= sizeof u->host)
			goto invalid;
		memcpy(u->host, hp, n);
		colon = c;
	}
	if (colon != NULL) {
		unsigned long p = 0;
		const char *c = colon + 1;

		if (c == hp + hn || *c == '0')
			goto invalid;
		for (; c < hp + hn; c++) {
			if (*c < '0' || *c > '9' || (p = p * 10 +
			    (unsigned long)(*c - '0')) > 65535)
				goto invalid;
		}
		u->port = (unsigned)p;
	} else
		u->port = u->tls ? 443 : 80;
	memcpy(u->authority, rest, hn);
	if (slash != NULL) {
		size_t bl = strlen(slash);

		while (bl > 0 && slash[bl - 1] == '/')
			bl--;
		if (bl >= sizeof u->base_path || strstr(slash, "/../") ||
		    strstr(slash, "/./"))
			goto invalid;
		memcpy(u->base_path, slash, bl);
	}
	if (!u->tls && !loopback_host(u->host)) {
		snprintf(why, whysz, "upstream '%.300s': only a loopback "
		    "upstream may be plain http; any other is https", url);
		return -EINVAL;
	}
	return 0;
invalid:
	snprintf(why, whysz, "upstream '%.300s' is not a URL "
	    "http://127.0.0.1:PORT[/PATH] or https://HOST[:PORT][/PATH]",
	    url != NULL ? url : "");
	return -EINVAL;
}

/* ---- a bounded growable buffer ----------------------------------------- */

struct gbuf {
	char *p;
	size_t len, cap, max;
	bool over;
};

static bool
gbuf_add(struct gbuf *b, const char *s, size_t n)
{
	if (b->over || n > b->max - b->len) {
		b->over = true;
		return false;
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 1024;
		char *np;

		while (cap < b->len + n + 1)
			cap *= 2;
		if ((np = realloc(b->p, cap)) == NULL) {
			b->over = true;
			return false;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return true;
}

static bool
gbuf_str(struct gbuf *b, const char *s)
{
	return gbuf_add(b, s, strlen(s));
}

static void
gbuf_free(struct gbuf *b)
{
	if (b->p != NULL)
		explicit_bzero(b->p, b->cap);
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
	b->over = false;
}

static void
printable(char *dst, size_t dsz, const char *s, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n && k + 1 < dsz; i++) {
		unsigned char c = (unsigned char)s[i];

		dst[k++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	dst[k] = '\0';
}

/* ---- the request reader ------------------------------------------------- */

struct sbx_gateway_req {
	struct sbx_gateway_req_opts o;
	http_parser hp;
	http_parser_settings hs;
	char url[URL_MAX + 1];
	size_t urllen;
	bool url_long;
	struct gbuf head;	/* "Name: value\r\n" lines of the agent's */
	struct gbuf field, value;
	bool in_value;
	struct gbuf out;	/* towards the upstream */
	char method[16];
	char path[SHOWN_MAX + 1];
	bool head_done, done, allowed, metered, chunked, bad;
};

/* Headers of the agent's that never go on: hop-by-hop, its credentials
 * (the placeholder), and encodings the meter could not read. */
static bool
dropped(const char *name)
{
	static const char *const names[] = { "host", "connection",
		"keep-alive", "proxy-connection", "proxy-authorization", "te",
		"trailer", "upgrade", "expect", "accept-encoding", "x-api-key",
		"authorization", "cookie", NULL };

	for (size_t i = 0; names[i] != NULL; i++)
		if (strcasecmp(name, names[i]) == 0)
			return true;
	return false;
}

static bool
flush_header(struct sbx_gateway_req *r)
{
	bool ok = true;

	if (r->field.len == 0)
		return true;
	if (r->field.over || r->value.over)
		ok = false;
	else if (!dropped(r->field.p))
		ok = gbuf_add(&r->head, r->field.p, r->field.len) &&
		    gbuf_str(&r->head, ": ") && gbuf_add(&r->head,
		    r->value.p != NULL ? r->value.p : "", r->value.len) &&
		    gbuf_str(&r->head, "\r\n");
	if (r->value.p != NULL)
		explicit_bzero(r->value.p, r->value.len);
	r->field.len = r->value.len = 0;
	r->in_value = false;
	return ok;
}

static int
rq_url(http_parser *p, const char *at, size_t n)
{
	struct sbx_gateway_req *r = p->data;

	if (n > URL_MAX - r->urllen) {
		r->url_long = true;
		return 0;
	}
	memcpy(r->url + r->urllen, at, n);
	r->urllen += n;
	r->url[r->urllen] = '\0';
	return 0;
}

static int
rq_field(http_parser *p, const char *at, size_t n)
{
	struct sbx_gateway_req *r = p->data;

	if (r->in_value && !flush_header(r)) {
		r->bad = true;
		return 1;
	}
	if (r->field.p == NULL)
		r->field.max = NAME_MAX_;
	gbuf_add(&r->field, at, n);
	return 0;
}

static int
rq_value(http_parser *p, const char *at, size_t n)
{
	struct sbx_gateway_req *r = p->data;

	r->in_value = true;
	if (r->value.p == NULL)
		r->value.max = HEAD_MAX;
	gbuf_add(&r->value, at, n);
	return 0;
}

static bool
upstream_head(struct sbx_gateway_req *r)
{
	struct gbuf *o = &r->out;
	bool ok = gbuf_str(o, r->method) && gbuf_str(o, " ") &&
	    gbuf_str(o, r->o.base_path) && gbuf_add(o, r->url, r->urllen) &&
	    gbuf_str(o, " HTTP/1.1\r\nHost: ") && gbuf_str(o, r->o.host) &&
	    gbuf_str(o, "\r\n") && (r->head.len == 0 ||
	    gbuf_add(o, r->head.p, r->head.len));

	if (r->o.api == SBX_GATEWAY_ANTHROPIC)
		ok = ok && gbuf_str(o, "x-api-key: ") && gbuf_str(o, r->o.key);
	else
		ok = ok && gbuf_str(o, "Authorization: Bearer ") &&
		    gbuf_str(o, r->o.key);
	return ok && gbuf_str(o, "\r\nAccept-Encoding: identity\r\n"
	    "Connection: keep-alive\r\n\r\n");
}

static int
rq_headers_complete(http_parser *p)
{
	struct sbx_gateway_req *r = p->data;
	size_t pl;

	if (!flush_header(r) || r->head.over || r->url_long ||
	    r->urllen == 0 || r->url[0] != '/' || p->http_major != 1 ||
	    p->upgrade) {
		r->bad = true;
		return 1;
	}
	snprintf(r->method, sizeof r->method, "%s",
	    http_method_str((enum http_method)p->method));
	pl = strcspn(r->url, "?#");
	printable(r->path, sizeof r->path, r->url, pl);
	/* Exactly as sent: no decoding, no NUL inside (memchr). */
	if (memchr(r->url, '\0', pl) == NULL) {
		char exact[URL_MAX + 1];

		memcpy(exact, r->url, pl);
		exact[pl] = '\0';
		r->allowed = sbx_gateway_allowed(r->o.api, r->method, exact,
		    &r->metered);
	}
	r->chunked = (p->flags & F_CHUNKED) != 0;
	r->head_done = true;
	if (r->allowed && !upstream_head(r)) {
		r->bad = true;
		return 1;
	}
	http_parser_pause(p, 1);
	return 0;
}

static int
rq_body(http_parser *p, const char *at, size_t n)
{
	struct sbx_gateway_req *r = p->data;
	char sz[24];

	if (!r->allowed)
		return 0;
	if (r->chunked) {
		snprintf(sz, sizeof sz, "%zx\r\n", n);
		gbuf_str(&r->out, sz);
	}
	gbuf_add(&r->out, at, n);
	if (r->chunked)
		gbuf_str(&r->out, "\r\n");
	return 0;
}

static int
rq_complete(http_parser *p)
{
	struct sbx_gateway_req *r = p->data;

	if (r->allowed && r->chunked)
		gbuf_str(&r->out, "0\r\n\r\n");
	r->done = true;
	http_parser_pause(p, 1);
	return 0;
}

struct sbx_gateway_req *
sbx_gateway_req_new(const struct sbx_gateway_req_opts *o)
{
	struct sbx_gateway_req *r;

	if (o == NULL || o->host == NULL || o->key == NULL ||
	    o->base_path == NULL || (r = calloc(1, sizeof *r)) == NULL)
		return NULL;
	r->o = *o;
	r->hs.on_url = rq_url;
	r->hs.on_header_field = rq_field;
	r->hs.on_header_value = rq_value;
	r->hs.on_headers_complete = rq_headers_complete;
	r->hs.on_body = rq_body;
	r->hs.on_message_complete = rq_complete;
	r->out.max = OUT_MAX + HEAD_MAX;
	sbx_gateway_req_reset(r);
	return r;
}

void
sbx_gateway_req_reset(struct sbx_gateway_req *r)
{
	http_parser_init(&r->hp, HTTP_REQUEST);
	r->hp.data = r;
	r->urllen = 0;
	r->url[0] = '\0';
	r->url_long = false;
	gbuf_free(&r->head);
	r->head.max = HEAD_MAX;
	gbuf_free(&r->field);
	gbuf_free(&r->value);
	r->in_value = false;
	r->method[0] = r->path[0] = '\0';
	r->head_done = r->done = r->allowed = r->metered = false;
	r->chunked = r->bad = false;
}

void
sbx_gateway_req_free(struct sbx_gateway_req *r)
{
	if (r == NULL)
		return;
	gbuf_free(&r->head);
	gbuf_free(&r->field);
	gbuf_free(&r->value);
	gbuf_free(&r->out);
	free(r);
}

enum sbx_gateway_req_ev
sbx_gateway_req_feed(struct sbx_gateway_req *r, const char *buf, size_t n,
    size_t *used)
{
	bool had_head = r->head_done;
	size_t k;

	*used = 0;
	if (r->bad)
		return SBX_GWREQ_BAD;
	if (r->done)
		return SBX_GWREQ_DONE;
	/* What was produced must be taken before more is read. */
	if (r->out.len > OUT_MAX)
		return SBX_GWREQ_MORE;
	if (HTTP_PARSER_ERRNO(&r->hp) == HPE_PAUSED)
		http_parser_pause(&r->hp, 0);
	/* No bytes is no news (http-parser would take it for the end). */
	if (n == 0)
		return SBX_GWREQ_MORE;
	if (n > OUT_MAX)
		n = OUT_MAX;
	k = http_parser_execute(&r->hp, &r->hs, buf, n);
	*used = k < n ? k : n;
	if (r->bad || r->out.over || (HTTP_PARSER_ERRNO(&r->hp) != HPE_OK &&
	    HTTP_PARSER_ERRNO(&r->hp) != HPE_PAUSED)) {
		r->bad = true;
		return SBX_GWREQ_BAD;
	}
	if (r->done)
		return SBX_GWREQ_DONE;
	if (r->head_done && !had_head)
		return SBX_GWREQ_HEAD;
	return SBX_GWREQ_MORE;
}

const char *
sbx_gateway_req_method(const struct sbx_gateway_req *r)
{
	return r->method;
}

const char *
sbx_gateway_req_path(const struct sbx_gateway_req *r)
{
	return r->path;
}

bool
sbx_gateway_req_allowed(const struct sbx_gateway_req *r, bool *metered)
{
	if (metered != NULL)
		*metered = r->metered;
	return r->allowed;
}

const char *
sbx_gateway_req_out(const struct sbx_gateway_req *r, size_t *n)
{
	*n = r->out.len;
	return r->out.p;
}

void
sbx_gateway_req_out_clear(struct sbx_gateway_req *r)
{
	if (r->out.p != NULL)
		explicit_bzero(r->out.p, r->out.len);
	r->out.len = 0;
}

/* ---- the response reader ------------------------------------------------ */

enum body_kind { BODY_OTHER, BODY_SSE, BODY_JSON };

struct sbx_gateway_meter {
	enum sbx_gateway_api api;
	bool metered;
	http_parser hp;
	http_parser_settings hs;
	struct gbuf field, value;
	bool in_value;
	enum body_kind kind;
	bool encoded;		/* a Content-Encoding the meter cannot read */
	bool done, bad;
	struct gbuf line;	/* SSE: the line being read */
	struct gbuf data;	/* SSE: the event's data; JSON: the body */
	bool skip_line;		/* a line over the bound: its event lost */
	bool lost;		/* some usage could not be read */
	struct sbx_gateway_usage u;
};

static unsigned long long
num(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_integer(v) && json_integer_value(v) > 0 ?
	    (unsigned long long)json_integer_value(v) : 0;
}

static bool
has_num(json_t *o, const char *k)
{
	return json_is_integer(json_object_get(o, k));
}

static void
set_str(char *dst, size_t dsz, json_t *v)
{
	const char *s = json_string_value(v);

	if (s != NULL)
		printable(dst, dsz, s, strlen(s));
}

/* Anthropic's usage object (message_start's, message_delta's, a body's). */
static void
anthropic_usage(struct sbx_gateway_meter *m, json_t *u)
{
	if (!json_is_object(u))
		return;
	if (!has_num(u, "input_tokens") && !has_num(u, "output_tokens")) {
		m->lost = true;
		return;
	}
	m->u.found = true;
	/* message_delta's counts are cumulative: the last one stands. */
	if (has_num(u, "input_tokens"))
		m->u.input = num(u, "input_tokens");
	if (has_num(u, "output_tokens"))
		m->u.output = num(u, "output_tokens");
	if (has_num(u, "cache_creation_input_tokens"))
		m->u.cache_write = num(u, "cache_creation_input_tokens");
	if (has_num(u, "cache_read_input_tokens"))
		m->u.cache_read = num(u, "cache_read_input_tokens");
}

/* OpenAI's: Responses (input/output_tokens) or chat (prompt/completion). */
static void
openai_usage(struct sbx_gateway_meter *m, json_t *u)
{
	const char *in = "input_tokens", *out = "output_tokens",
	    *det = "input_tokens_details";
	unsigned long long cached;

	if (!json_is_object(u))
		return;
	if (!has_num(u, in)) {
		in = "prompt_tokens";
		out = "completion_tokens";
		det = "prompt_tokens_details";
	}
	if (!has_num(u, in) || !has_num(u, out)) {
		m->lost = true;
		return;
	}
	m->u.found = true;
	cached = num(json_object_get(u, det), "cached_tokens");
	m->u.input = num(u, in) > cached ? num(u, in) - cached : 0;
	m->u.cache_read = cached;
	m->u.output = num(u, out);
}

static void
openai_chat_choice(struct sbx_gateway_meter *m, json_t *o)
{
	json_t *c = json_array_get(json_object_get(o, "choices"), 0);

	if (json_is_string(json_object_get(c, "finish_reason")))
		set_str(m->u.stop_reason, sizeof m->u.stop_reason,
		    json_object_get(c, "finish_reason"));
}

/* One JSON object: an event's data or the whole body. */
static void
read_object(struct sbx_gateway_meter *m, json_t *o)
{
	const char *type = json_string_value(json_object_get(o, "type"));
	json_t *msg;

	if (!json_is_object(o))
		return;
	if (m->api == SBX_GATEWAY_ANTHROPIC) {
		if (type != NULL && strcmp(type, "message_start") == 0) {
			msg = json_object_get(o, "message");
			set_str(m->u.model, sizeof m->u.model,
			    json_object_get(msg, "model"));
			anthropic_usage(m, json_object_get(msg, "usage"));
		} else if (type != NULL && strcmp(type, "message_delta") == 0) {
			set_str(m->u.stop_reason, sizeof m->u.stop_reason,
			    json_object_get(json_object_get(o, "delta"),
			    "stop_reason"));
			anthropic_usage(m, json_object_get(o, "usage"));
		} else if (type != NULL && strcmp(type, "message") == 0) {
			set_str(m->u.model, sizeof m->u.model,
			    json_object_get(o, "model"));
			set_str(m->u.stop_reason, sizeof m->u.stop_reason,
			    json_object_get(o, "stop_reason"));
			anthropic_usage(m, json_object_get(o, "usage"));
		}
		return;
	}
	if (type != NULL && (strcmp(type, "response.completed") == 0 ||
	    strcmp(type, "response.incomplete") == 0 ||
	    strcmp(type, "response.failed") == 0)) {
		msg = json_object_get(o, "response");
		set_str(m->u.model, sizeof m->u.model,
		    json_object_get(msg, "model"));
		set_str(m->u.stop_reason, sizeof m->u.stop_reason,
		    json_object_get(msg, "status"));
		openai_usage(m, json_object_get(msg, "usage"));
		return;
	}
	if (type != NULL)
		return;
	/* A Responses body, a chat completion or one of its chunks. */
	if (json_is_string(json_object_get(o, "model")))
		set_str(m->u.model, sizeof m->u.model,
		    json_object_get(o, "model"));
	if (json_is_string(json_object_get(o, "status")))
		set_str(m->u.stop_reason, sizeof m->u.stop_reason,
		    json_object_get(o, "status"));
	openai_chat_choice(m, o);
	if (json_is_object(json_object_get(o, "usage")))
		openai_usage(m, json_object_get(o, "usage"));
}

static void
read_json(struct sbx_gateway_meter *m, const char *s, size_t n)
{
	json_error_t je;
	json_t *o;

	if (n == 0)
		return;
	if (n == 6 && memcmp(s, "[DONE]", 6) == 0)
		return;
	if ((o = json_loadb(s, n, JSON_REJECT_DUPLICATES, &je)) == NULL) {
		m->lost = true;
		return;
	}
	read_object(m, o);
	json_decref(o);
}

/* One line of the event stream (without its end of line). */
static void
sse_line(struct sbx_gateway_meter *m, const char *s, size_t n)
{
	if (n == 0) {
		if (m->data.over)
			m->lost = true;
		else if (m->data.len > 0)
			read_json(m, m->data.p, m->data.len);
		m->data.len = 0;
		m->data.over = false;
		return;
	}
	if (n >= 5 && memcmp(s, "data:", 5) == 0) {
		s += 5;
		n -= 5;
		if (n > 0 && *s == ' ') {
			s++;
			n--;
		}
		if (m->data.len > 0)
			gbuf_add(&m->data, "\n", 1);
		gbuf_add(&m->data, s, n);
	}
}

static void
sse_feed(struct sbx_gateway_meter *m, const char *s, size_t n)
{
	while (n > 0) {
		const char *nl = memchr(s, '\n', n);
		size_t k = nl != NULL ? (size_t)(nl - s) : n;

		if (!m->skip_line && !gbuf_add(&m->line, s, k)) {
			/* A line past the bound: that event's data is lost. */
			m->skip_line = true;
			m->data.over = true;
		}
		if (nl == NULL)
			return;
		if (!m->skip_line) {
			size_t l = m->line.len;

			if (l > 0 && m->line.p[l - 1] == '\r')
				l--;
			sse_line(m, m->line.p != NULL ? m->line.p : "", l);
		}
		m->skip_line = false;
		m->line.len = 0;
		m->line.over = false;
		s += k + 1;
		n -= k + 1;
	}
}

static int
rs_field(http_parser *p, const char *at, size_t n)
{
	struct sbx_gateway_meter *m = p->data;

	if (m->in_value) {
		m->field.len = m->value.len = 0;
		m->field.over = m->value.over = false;
		m->in_value = false;
	}
	gbuf_add(&m->field, at, n);
	return 0;
}

static void
rs_header(struct sbx_gateway_meter *m)
{
	const char *f = m->field.p, *v = m->value.p;

	if (f == NULL || v == NULL || m->field.over || m->value.over)
		return;
	if (strcasecmp(f, "content-type") == 0) {
		if (strncasecmp(v, "text/event-stream", 17) == 0)
			m->kind = BODY_SSE;
		else if (strncasecmp(v, "application/json", 16) == 0)
			m->kind = BODY_JSON;
	} else if (strcasecmp(f, "content-encoding") == 0 &&
	    strcasecmp(v, "identity") != 0)
		m->encoded = true;
}

static int
rs_value(http_parser *p, const char *at, size_t n)
{
	struct sbx_gateway_meter *m = p->data;

	m->in_value = true;
	gbuf_add(&m->value, at, n);
	return 0;
}

static int
rs_headers_complete(http_parser *p)
{
	struct sbx_gateway_meter *m = p->data;

	if (m->in_value)
		rs_header(m);
	m->in_value = false;
	m->field.len = m->value.len = 0;
	return 0;
}

/* Header values end at the next field or at the end of the head. */
static int
rs_value_end(http_parser *p, const char *at, size_t n)
{
	struct sbx_gateway_meter *m = p->data;

	if (m->in_value)
		rs_header(m);
	return rs_field(p, at, n);
}

static int
rs_body(http_parser *p, const char *at, size_t n)
{
	struct sbx_gateway_meter *m = p->data;

	if (!m->metered || p->status_code / 100 != 2 || m->encoded)
		return 0;
	if (m->kind == BODY_SSE)
		sse_feed(m, at, n);
	else if (m->kind == BODY_JSON)
		gbuf_add(&m->data, at, n);
	return 0;
}

static int
rs_complete(http_parser *p)
{
	struct sbx_gateway_meter *m = p->data;

	/* A 1xx is not the answer: the real one follows. */
	if (p->status_code / 100 == 1)
		return 0;
	if (m->metered && p->status_code / 100 == 2 && !m->encoded) {
		if (m->kind == BODY_SSE) {
			if (m->line.len > 0)
				sse_line(m, m->line.p, m->line.len);
			sse_line(m, "", 0);
		} else if (m->kind == BODY_JSON) {
			if (m->data.over)
				m->lost = true;
			else
				read_json(m, m->data.p != NULL ? m->data.p :
				    "", m->data.len);
		}
	}
	m->done = true;
	http_parser_pause(p, 1);
	return 0;
}

struct sbx_gateway_meter *
sbx_gateway_meter_new(enum sbx_gateway_api api, bool metered)
{
	struct sbx_gateway_meter *m = calloc(1, sizeof *m);

	if (m == NULL)
		return NULL;
	m->api = api;
	m->metered = metered;
	http_parser_init(&m->hp, HTTP_RESPONSE);
	m->hp.data = m;
	m->hs.on_header_field = rs_value_end;
	m->hs.on_header_value = rs_value;
	m->hs.on_headers_complete = rs_headers_complete;
	m->hs.on_body = rs_body;
	m->hs.on_message_complete = rs_complete;
	m->field.max = NAME_MAX_;
	m->value.max = 4096;
	m->line.max = EVENT_MAX;
	m->data.max = JSON_MAX;
	return m;
}

void
sbx_gateway_meter_free(struct sbx_gateway_meter *m)
{
	if (m == NULL)
		return;
	gbuf_free(&m->field);
	gbuf_free(&m->value);
	gbuf_free(&m->line);
	gbuf_free(&m->data);
	free(m);
}

int
sbx_gateway_meter_feed(struct sbx_gateway_meter *m, const char *buf,
    size_t n, size_t *used)
{
	size_t k;

	*used = 0;
	if (m->bad)
		return -1;
	if (m->done)
		return 1;
	if (n == 0)
		return 0;
	k = http_parser_execute(&m->hp, &m->hs, buf, n);
	*used = k < n ? k : n;
	if (HTTP_PARSER_ERRNO(&m->hp) != HPE_OK &&
	    HTTP_PARSER_ERRNO(&m->hp) != HPE_PAUSED) {
		m->bad = true;
		return -1;
	}
	return m->done ? 1 : 0;
}

int
sbx_gateway_meter_eof(struct sbx_gateway_meter *m)
{
	if (m->done)
		return 1;
	if (m->bad)
		return -1;
	http_parser_execute(&m->hp, &m->hs, NULL, 0);
	return m->done ? 1 : -1;
}

int
sbx_gateway_meter_status(const struct sbx_gateway_meter *m)
{
	return (int)m->hp.status_code;
}

bool
sbx_gateway_meter_keep_alive(const struct sbx_gateway_meter *m)
{
	return m->done && !m->bad && http_should_keep_alive(&m->hp) != 0;
}

void
sbx_gateway_meter_usage(const struct sbx_gateway_meter *m,
    struct sbx_gateway_usage *u)
{
	*u = m->u;
	/* A model's answer whose usage is unknown: its cost is too. */
	u->unparseable = m->metered && m->hp.status_code / 100 == 2 &&
	    (!m->done || m->encoded || m->lost || !m->u.found ||
	    m->kind == BODY_OTHER);
}
