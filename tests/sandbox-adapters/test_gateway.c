/*
 * test_gateway.c: the model gateway's pure half (SPEC 8.5; issue 19):
 * each API's method + path allowlist, the upstream URL, the request
 * reader (the placeholder and hop-by-hop headers dropped, the real key
 * added, a chunked body re-chunked, a request in pieces) and the
 * response reader (usage from Anthropic and OpenAI event streams and JSON
 * bodies, byte by byte; malformed usage unparseable; an error answer not).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"
#include "support/check_util.h"

Suite *gateway_suite(void);

START_TEST(test_gateway_allowlist)
{
	bool m;

	ck_assert(sbx_gateway_allowed(SBX_GATEWAY_ANTHROPIC, "POST",
	    "/v1/messages", &m) && m);
	ck_assert(sbx_gateway_allowed(SBX_GATEWAY_ANTHROPIC, "POST",
	    "/v1/messages/count_tokens", &m) && !m);
	ck_assert(sbx_gateway_allowed(SBX_GATEWAY_ANTHROPIC, "GET",
	    "/v1/models", &m) && !m);
	ck_assert(!sbx_gateway_allowed(SBX_GATEWAY_ANTHROPIC, "GET",
	    "/v1/messages", &m));
	ck_assert(!sbx_gateway_allowed(SBX_GATEWAY_ANTHROPIC, "POST",
	    "/v1/responses", &m));
	ck_assert(!sbx_gateway_allowed(SBX_GATEWAY_ANTHROPIC, "POST",
	    "/v1/messages/", &m));
	ck_assert(!sbx_gateway_allowed(SBX_GATEWAY_ANTHROPIC, "POST",
	    "/v1/%6Dessages", &m));
	ck_assert(!sbx_gateway_allowed(SBX_GATEWAY_ANTHROPIC, "POST",
	    "/v1/messages/../files", &m));
	ck_assert(sbx_gateway_allowed(SBX_GATEWAY_OPENAI, "POST",
	    "/v1/responses", &m) && m);
	ck_assert(sbx_gateway_allowed(SBX_GATEWAY_OPENAI, "POST",
	    "/v1/chat/completions", &m) && m);
	ck_assert(!sbx_gateway_allowed(SBX_GATEWAY_OPENAI, "POST",
	    "/v1/files", &m));
	ck_assert(!sbx_gateway_allowed(SBX_GATEWAY_OPENAI, "DELETE",
	    "/v1/models", &m));
}
END_TEST

START_TEST(test_gateway_url)
{
	struct sbx_gateway_url u;
	char why[512];

	ck_assert_int_eq(sbx_gateway_url_parse("https://api.anthropic.com", &u,
	    why, sizeof why), 0);
	ck_assert(u.tls);
	ck_assert_str_eq(u.host, "api.anthropic.com");
	ck_assert_uint_eq(u.port, 443);
	ck_assert_str_eq(u.authority, "api.anthropic.com");
	ck_assert_str_eq(u.base_path, "");
	ck_assert_int_eq(sbx_gateway_url_parse("http://127.0.0.1:1234/llm/", &u,
	    why, sizeof why), 0);
	ck_assert(!u.tls);
	ck_assert_uint_eq(u.port, 1234);
	ck_assert_str_eq(u.authority, "127.0.0.1:1234");
	ck_assert_str_eq(u.base_path, "/llm");
	ck_assert_int_eq(sbx_gateway_url_parse("https://[::1]:8443", &u, why,
	    sizeof why), 0);
	ck_assert_str_eq(u.host, "::1");
	ck_assert_uint_eq(u.port, 8443);
	/* Plain http only to loopback; no credentials, queries, odd ports. */
	ck_assert_int_eq(sbx_gateway_url_parse("http://api.example.com", &u,
	    why, sizeof why), -EINVAL);
	ck_assert(strstr(why, "loopback") != NULL);
	ck_assert_int_eq(sbx_gateway_url_parse("https://u:p@h.example", &u,
	    why, sizeof why), -EINVAL);
	ck_assert_int_eq(sbx_gateway_url_parse("https://h.example/?x", &u, why,
	    sizeof why), -EINVAL);
	ck_assert_int_eq(sbx_gateway_url_parse("https://h.example:0443", &u,
	    why, sizeof why), -EINVAL);
	ck_assert_int_eq(sbx_gateway_url_parse("https://h.example:99999", &u,
	    why, sizeof why), -EINVAL);
	ck_assert_int_eq(sbx_gateway_url_parse("ftp://h.example", &u, why,
	    sizeof why), -EINVAL);
	ck_assert_int_eq(sbx_gateway_url_parse(NULL, &u, why, sizeof why),
	    -EINVAL);
}
END_TEST

/* Feed s in pieces of step bytes; the upstream's bytes into out. */
static enum sbx_gateway_req_ev
req_run(struct sbx_gateway_req *r, const char *s, size_t step, char *out,
    size_t outsz, bool *head)
{
	size_t len = strlen(s), off = 0, olen = 0;
	enum sbx_gateway_req_ev ev = SBX_GWREQ_MORE;

	*head = false;
	out[0] = '\0';
	while (off < len || ev == SBX_GWREQ_HEAD) {
		size_t n = len - off < step ? len - off : step, used = 0, k;
		const char *o;

		ev = sbx_gateway_req_feed(r, s + off, n, &used);
		off += used;
		if (ev == SBX_GWREQ_HEAD)
			*head = true;
		o = sbx_gateway_req_out(r, &k);
		ck_assert_uint_lt(olen + k, outsz);
		if (k > 0)	/* nothing out: o may be NULL */
			memcpy(out + olen, o, k);
		olen += k;
		out[olen] = '\0';
		sbx_gateway_req_out_clear(r);
		if (ev == SBX_GWREQ_DONE || ev == SBX_GWREQ_BAD)
			break;
		if (ev == SBX_GWREQ_MORE && used == 0 && n > 0)
			ck_abort_msg("no progress at %zu", off);
	}
	return ev;
}

static struct sbx_gateway_req *
req_new(enum sbx_gateway_api api)
{
	struct sbx_gateway_req_opts o = { .api = api,
		.host = "api.example.com", .base_path = "/base",
		.key = "sk-REAL-KEY" };

	return sbx_gateway_req_new(&o);
}

START_TEST(test_gateway_req_rewrite)
{
	static const char in[] = "POST /v1/messages?beta=true HTTP/1.1\r\n"
	    "Host: 127.0.0.1:3129\r\nx-api-key: sk-ant-placeholder\r\n"
	    "Authorization: Bearer sk-placeholder\r\nConnection: keep-alive\r\n"
	    "Accept-Encoding: gzip, br\r\nContent-Type: application/json\r\n"
	    "anthropic-version: 2023-06-01\r\nContent-Length: 7\r\n\r\n"
	    "{\"a\":1}";
	static const char line1[] = "POST /base/v1/messages?beta=true "
	    "HTTP/1.1\r\nHost: api.example.com\r\n";
	struct sbx_gateway_req *r = req_new(SBX_GATEWAY_ANTHROPIC);
	size_t steps[] = { 1, 3, 17, sizeof in };
	char out[4096];
	bool head, m;

	ck_assert_ptr_nonnull(r);
	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
		sbx_gateway_req_reset(r);
		ck_assert_int_eq(req_run(r, in, steps[i], out, sizeof out,
		    &head), SBX_GWREQ_DONE);
		ck_assert(head);
		ck_assert(sbx_gateway_req_allowed(r, &m) && m);
		ck_assert_str_eq(sbx_gateway_req_method(r), "POST");
		ck_assert_str_eq(sbx_gateway_req_path(r), "/v1/messages");
		ck_assert_msg(strncmp(out, line1, strlen(line1)) == 0, "%s",
		    out);
		ck_assert(strstr(out, "placeholder") == NULL);
		ck_assert(strstr(out, "gzip") == NULL);
		ck_assert(strstr(out, "x-api-key: sk-REAL-KEY\r\n") != NULL);
		ck_assert(strstr(out, "Authorization") == NULL);
		ck_assert(strstr(out, "anthropic-version: 2023-06-01\r\n"));
		ck_assert(strstr(out, "Accept-Encoding: identity\r\n"));
		ck_assert(strstr(out, "\r\n\r\n{\"a\":1}") != NULL);
	}
	sbx_gateway_req_free(r);
}
END_TEST

START_TEST(test_gateway_req_chunked)
{
	static const char in[] = "POST /v1/responses HTTP/1.1\r\n"
	    "Host: x\r\nAuthorization: Bearer sk-placeholder\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"
	    "GET /v1/models HTTP/1.1\r\n\r\n";
	struct sbx_gateway_req *r = req_new(SBX_GATEWAY_OPENAI);
	char out[4096];
	bool head;

	ck_assert_int_eq(req_run(r, in, 5, out, sizeof out, &head),
	    SBX_GWREQ_DONE);
	ck_assert(strstr(out, "Authorization: Bearer sk-REAL-KEY\r\n"));
	ck_assert(strstr(out, "Transfer-Encoding: chunked\r\n"));
	ck_assert(strstr(out, "sk-placeholder") == NULL);
	/* the body passes as its bytes, re-chunked, and ends */
	ck_assert_msg(strstr(out, "\r\n\r\n") != NULL && strstr(out,
	    "0\r\n\r\n") != NULL, "%s", out);
	{
		const char *b = strstr(out, "\r\n\r\n") + 4;
		char body[64] = "";
		size_t bl = 0;

		/* de-chunk what was produced */
		while (*b != '\0') {
			unsigned long n = strtoul(b, NULL, 16);

			b = strstr(b, "\r\n") + 2;
			if (n == 0)
				break;
			memcpy(body + bl, b, n);
			bl += n;
			b += n + 2;
		}
		body[bl] = '\0';
		ck_assert_str_eq(body, "abcde");
	}
	sbx_gateway_req_free(r);
}
END_TEST

START_TEST(test_gateway_req_refused)
{
	struct sbx_gateway_req *r = req_new(SBX_GATEWAY_ANTHROPIC);
	char out[4096];
	bool head, m;

	ck_assert_int_eq(req_run(r, "POST /v1/files HTTP/1.1\r\nHost: x\r\n"
	    "Content-Length: 2\r\n\r\n{}", 64, out, sizeof out, &head),
	    SBX_GWREQ_DONE);
	ck_assert(head);
	ck_assert(!sbx_gateway_req_allowed(r, &m));
	ck_assert_str_eq(sbx_gateway_req_path(r), "/v1/files");
	ck_assert_str_eq(out, "");	/* nothing for the upstream */
	/* Not HTTP/1.x origin-form: refused as unreadable. */
	sbx_gateway_req_reset(r);
	ck_assert_int_eq(req_run(r, "CONNECT api.anthropic.com:443 HTTP/1.1"
	    "\r\n\r\n", 64, out, sizeof out, &head), SBX_GWREQ_BAD);
	sbx_gateway_req_reset(r);
	ck_assert_int_eq(req_run(r, "POST http://evil/v1/messages HTTP/1.1"
	    "\r\n\r\n", 64, out, sizeof out, &head), SBX_GWREQ_BAD);
	sbx_gateway_req_reset(r);
	ck_assert_int_eq(req_run(r, "garbage\r\n\r\n", 64, out, sizeof out,
	    &head), SBX_GWREQ_BAD);
	sbx_gateway_req_free(r);
}
END_TEST

/* Feed a whole response in pieces of step bytes: its last rc. */
static int
meter_run(struct sbx_gateway_meter *m, const char *s, size_t step)
{
	size_t len = strlen(s), off = 0;
	int rc = 0;

	while (off < len && rc == 0) {
		size_t n = len - off < step ? len - off : step, used;

		rc = sbx_gateway_meter_feed(m, s + off, n, &used);
		off += used;
	}
	return rc;
}

#define SSE_HEAD "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n" \
	"Transfer-Encoding: chunked\r\n\r\n"

static char *
chunked(const char *head, const char *body)
{
	size_t bl = strlen(body), cap = strlen(head) + bl * 2 + 64, len;
	char *s = malloc(cap);

	len = (size_t)snprintf(s, cap, "%s", head);
	/* two chunks, the cut inside an event */
	len += (size_t)snprintf(s + len, cap - len, "%zx\r\n%.*s\r\n",
	    bl / 2, (int)(bl / 2), body);
	snprintf(s + len, cap - len, "%zx\r\n%s\r\n0\r\n\r\n", bl - bl / 2,
	    body + bl / 2);
	return s;
}

START_TEST(test_gateway_meter_anthropic_sse)
{
	static const char ev[] = "event: message_start\n"
	    "data: {\"type\":\"message_start\",\"message\":{\"model\":"
	    "\"claude-x\",\"usage\":{\"input_tokens\":10,\"output_tokens\":1,"
	    "\"cache_creation_input_tokens\":3,\"cache_read_input_tokens\":7}}}"
	    "\n\nevent: ping\ndata: {\"type\":\"ping\"}\n\n"
	    "event: content_block_delta\r\ndata: {\"type\":\"content_block_"
	    "delta\",\"delta\":{\"text\":\"hi\"}}\r\n\r\n"
	    "event: message_delta\ndata: {\"type\":\"message_delta\","
	    "\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":"
	    "{\"output_tokens\":5}}\n\n";
	size_t steps[] = { 1, 7, 4096 };
	char *resp = chunked(SSE_HEAD, ev);

	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
		struct sbx_gateway_meter *m = sbx_gateway_meter_new(
		    SBX_GATEWAY_ANTHROPIC, true);
		struct sbx_gateway_usage u;

		ck_assert_int_eq(meter_run(m, resp, steps[i]), 1);
		ck_assert_int_eq(sbx_gateway_meter_status(m), 200);
		ck_assert(sbx_gateway_meter_keep_alive(m));
		sbx_gateway_meter_usage(m, &u);
		ck_assert(u.found && !u.unparseable);
		ck_assert_str_eq(u.model, "claude-x");
		ck_assert_uint_eq(u.input, 10);
		ck_assert_uint_eq(u.output, 5);
		ck_assert_uint_eq(u.cache_write, 3);
		ck_assert_uint_eq(u.cache_read, 7);
		ck_assert_str_eq(u.stop_reason, "tool_use");
		sbx_gateway_meter_free(m);
	}
	free(resp);
}
END_TEST

START_TEST(test_gateway_meter_openai)
{
	static const char ev[] = "event: response.created\ndata: {\"type\":"
	    "\"response.created\",\"response\":{\"model\":\"gpt-x\"}}\n\n"
	    "event: response.completed\ndata: {\"type\":\"response.completed\","
	    "\"response\":{\"model\":\"gpt-x\",\"status\":\"completed\","
	    "\"usage\":{\"input_tokens\":12,\"output_tokens\":5,"
	    "\"input_tokens_details\":{\"cached_tokens\":2}}}}\n\n";
	static const char chat[] = "HTTP/1.1 200 OK\r\nContent-Type: "
	    "application/json\r\nContent-Length: 112\r\n\r\n"
	    "{\"model\":\"gpt-c\",\"choices\":[{\"finish_reason\":\"stop\"}],"
	    "\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":4}}        ";
	char *resp = chunked(SSE_HEAD, ev);
	struct sbx_gateway_meter *m = sbx_gateway_meter_new(SBX_GATEWAY_OPENAI,
	    true);
	struct sbx_gateway_usage u;

	ck_assert_int_eq(meter_run(m, resp, 3), 1);
	sbx_gateway_meter_usage(m, &u);
	ck_assert(u.found && !u.unparseable);
	ck_assert_str_eq(u.model, "gpt-x");
	ck_assert_uint_eq(u.input, 10);	/* 12 less the 2 from cache */
	ck_assert_uint_eq(u.cache_read, 2);
	ck_assert_uint_eq(u.output, 5);
	ck_assert_str_eq(u.stop_reason, "completed");
	sbx_gateway_meter_free(m);
	free(resp);
	ck_assert_uint_eq(strlen(strstr(chat, "\r\n\r\n") + 4), 112);
	m = sbx_gateway_meter_new(SBX_GATEWAY_OPENAI, true);
	ck_assert_int_eq(meter_run(m, chat, 11), 1);
	sbx_gateway_meter_usage(m, &u);
	ck_assert(u.found && !u.unparseable);
	ck_assert_str_eq(u.model, "gpt-c");
	ck_assert_uint_eq(u.input, 9);
	ck_assert_uint_eq(u.output, 4);
	ck_assert_str_eq(u.stop_reason, "stop");
	sbx_gateway_meter_free(m);
}
END_TEST

START_TEST(test_gateway_meter_unparseable)
{
	static const char bad[] = "event: message_start\ndata: {\"type\":"
	    "\"message_start\",\"message\":{\"model\":\"m\",\"usage\":"
	    "{\"input_tokens\":\"ten\"}}}\n\n";
	static const char broken[] = "event: message_start\ndata: {\"type\":"
	    "\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1\n\n";
	static const char err[] = "HTTP/1.1 400 Bad Request\r\nContent-Type: "
	    "application/json\r\nContent-Length: 2\r\n\r\n{}";
	static const char gz[] = "HTTP/1.1 200 OK\r\nContent-Type: "
	    "application/json\r\nContent-Encoding: gzip\r\nContent-Length: 2"
	    "\r\n\r\n{}";
	const char *cases[] = { bad, broken, NULL };
	struct sbx_gateway_usage u;
	struct sbx_gateway_meter *m;

	for (int i = 0; cases[i] != NULL; i++) {
		char *resp = chunked(SSE_HEAD, cases[i]);

		m = sbx_gateway_meter_new(SBX_GATEWAY_ANTHROPIC, true);
		ck_assert_int_eq(meter_run(m, resp, 5), 1);
		sbx_gateway_meter_usage(m, &u);
		ck_assert_msg(u.unparseable, "case %d", i);
		sbx_gateway_meter_free(m);
		free(resp);
	}
	/* An error answer carries no usage and costs nothing: not unknown. */
	m = sbx_gateway_meter_new(SBX_GATEWAY_ANTHROPIC, true);
	ck_assert_int_eq(meter_run(m, err, 100), 1);
	sbx_gateway_meter_usage(m, &u);
	ck_assert(!u.unparseable && !u.found);
	ck_assert_int_eq(sbx_gateway_meter_status(m), 400);
	sbx_gateway_meter_free(m);
	/* An encoding it cannot read: unknown. */
	m = sbx_gateway_meter_new(SBX_GATEWAY_ANTHROPIC, true);
	ck_assert_int_eq(meter_run(m, gz, 100), 1);
	sbx_gateway_meter_usage(m, &u);
	ck_assert(u.unparseable);
	sbx_gateway_meter_free(m);
	/* A count_tokens answer is not metered. */
	m = sbx_gateway_meter_new(SBX_GATEWAY_ANTHROPIC, false);
	ck_assert_int_eq(meter_run(m, gz, 100), 1);
	sbx_gateway_meter_usage(m, &u);
	ck_assert(!u.unparseable);
	sbx_gateway_meter_free(m);
	/* An answer cut short by the upstream's close: unknown. */
	m = sbx_gateway_meter_new(SBX_GATEWAY_ANTHROPIC, true);
	ck_assert_int_eq(meter_run(m, SSE_HEAD "5\r\nevent", 100), 0);
	ck_assert_int_eq(sbx_gateway_meter_eof(m), -1);
	sbx_gateway_meter_usage(m, &u);
	ck_assert(u.unparseable);
	sbx_gateway_meter_free(m);
	/* Not HTTP. */
	m = sbx_gateway_meter_new(SBX_GATEWAY_ANTHROPIC, true);
	ck_assert_int_eq(meter_run(m, "SSH-2.0-x\r\n", 100), -1);
	sbx_gateway_meter_free(m);
}
END_TEST

START_TEST(test_gateway_meter_close_delimited)
{
	static const char resp[] = "HTTP/1.1 200 OK\r\nContent-Type: "
	    "text/event-stream\r\nConnection: close\r\n\r\n"
	    "data: {\"type\":\"message_start\",\"message\":{\"model\":\"m\","
	    "\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n"
	    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
	    "\"end_turn\"},\"usage\":{\"output_tokens\":5}}\n\n";
	struct sbx_gateway_meter *m = sbx_gateway_meter_new(
	    SBX_GATEWAY_ANTHROPIC, true);
	struct sbx_gateway_usage u;

	ck_assert_int_eq(meter_run(m, resp, 9), 0);
	ck_assert_int_eq(sbx_gateway_meter_eof(m), 1);
	ck_assert(!sbx_gateway_meter_keep_alive(m));
	sbx_gateway_meter_usage(m, &u);
	ck_assert(u.found && !u.unparseable);
	ck_assert_uint_eq(u.input, 10);
	ck_assert_uint_eq(u.output, 5);
	ck_assert_str_eq(u.stop_reason, "end_turn");
	sbx_gateway_meter_free(m);
}
END_TEST

Suite *
gateway_suite(void)
{
	Suite *s = suite_create("gateway");
	TCase *tc = tcase_create("pure");

	tcase_add_test(tc, test_gateway_allowlist);
	tcase_add_test(tc, test_gateway_url);
	tcase_add_test(tc, test_gateway_req_rewrite);
	tcase_add_test(tc, test_gateway_req_chunked);
	tcase_add_test(tc, test_gateway_req_refused);
	tcase_add_test(tc, test_gateway_meter_anthropic_sse);
	tcase_add_test(tc, test_gateway_meter_openai);
	tcase_add_test(tc, test_gateway_meter_unparseable);
	tcase_add_test(tc, test_gateway_meter_close_delimited);
	suite_add_tcase(s, tc);
	return s;
}
