/*
 * fuzz_gateway.c: libFuzzer target over the model gateway's readers
 * (SPEC 8.5): the first byte picks the API and the side; the rest is an
 * agent's request (the request reader, re-run after each request ends as
 * a kept-alive connection would) or an upstream's answer (the response
 * reader, usage read from events or JSON), fed in pieces whose sizes come
 * from the input.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
request(enum sbx_gateway_api api, const char *p, size_t size)
{
	struct sbx_gateway_req_opts o = { .api = api, .host = "up.example",
		.base_path = "/b", .key = "sk-fuzz-key" };
	struct sbx_gateway_req *r = sbx_gateway_req_new(&o);
	size_t off = 0;
	int idle = 0;

	if (r == NULL)
		return;
	while (off < size && idle < 4) {
		size_t step = 1 + (unsigned char)p[off] % 61, used = 0, n;
		enum sbx_gateway_req_ev ev;
		bool m;

		if (step > size - off)
			step = size - off;
		ev = sbx_gateway_req_feed(r, p + off, step, &used);
		off += used;
		idle = used == 0 ? idle + 1 : 0;
		(void)sbx_gateway_req_out(r, &n);
		sbx_gateway_req_out_clear(r);
		if (ev == SBX_GWREQ_HEAD) {
			(void)sbx_gateway_req_allowed(r, &m);
			if (strlen(sbx_gateway_req_path(r)) > 200 ||
			    strlen(sbx_gateway_req_method(r)) > 15)
				__builtin_trap();
			idle = 0;
		}
		if (ev == SBX_GWREQ_DONE || ev == SBX_GWREQ_BAD) {
			sbx_gateway_req_reset(r);
			idle = 0;
			if (ev == SBX_GWREQ_BAD)
				break;
		}
	}
	sbx_gateway_req_free(r);
}

static void
response(enum sbx_gateway_api api, bool metered, const char *p, size_t size)
{
	struct sbx_gateway_meter *m = sbx_gateway_meter_new(api, metered);
	struct sbx_gateway_usage u;
	size_t off = 0;
	int rc = 0, idle = 0;

	if (m == NULL)
		return;
	while (off < size && rc == 0 && idle < 4) {
		size_t step = 1 + (unsigned char)p[off] % 97, used = 0;

		if (step > size - off)
			step = size - off;
		rc = sbx_gateway_meter_feed(m, p + off, step, &used);
		off += used;
		idle = used == 0 ? idle + 1 : 0;
	}
	if (rc == 0)
		(void)sbx_gateway_meter_eof(m);
	sbx_gateway_meter_usage(m, &u);
	if (strnlen(u.model, sizeof u.model) == sizeof u.model ||
	    strnlen(u.stop_reason, sizeof u.stop_reason) ==
	    sizeof u.stop_reason)
		__builtin_trap();
	(void)sbx_gateway_meter_keep_alive(m);
	(void)sbx_gateway_meter_status(m);
	sbx_gateway_meter_free(m);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum sbx_gateway_api api;

	if (size < 1)
		return 0;
	api = (data[0] & 1) ? SBX_GATEWAY_OPENAI : SBX_GATEWAY_ANTHROPIC;
	if (data[0] & 2)
		response(api, (data[0] & 4) != 0, (const char *)data + 1,
		    size - 1);
	else
		request(api, (const char *)data + 1, size - 1);
	return 0;
}
