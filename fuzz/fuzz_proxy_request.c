/*
 * fuzz_proxy_request.c: libFuzzer target over the egress proxy's request
 * reader (SPEC 8.2): arbitrary bytes as the agent's first bytes, read
 * again at every cut the input picks as the proxy reads them (each read
 * appends); every answer is checked for what the proxy relies on: a head
 * within the bytes, a bounded target, and an allowed verdict only for a
 * CONNECT to a target on the allowlist or the loopback grant.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char *const allow[] = { "api.anthropic.com:443",
	"allowed.example:8443", NULL };
static const struct sbx_egress_rules rules = {
	.allow = allow,
	.loopback_name = "localhost",
	.loopback_port = 8080,
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_egress_request rq;
	size_t len = 0;

	if (size > 8192)
		size = 8192;	/* the proxy's REQ_MAX */
	while (len < size) {
		size_t step = 1 + data[len] % 53;
		int rc;

		len = len + step > size ? size : len + step;
		rc = sbx_egress_request_read(&rules, (const char *)data, len,
		    &rq);
		if (rq.head_len > len || rq.urllen > sizeof rq.url ||
		    memchr(rq.method, '\0', sizeof rq.method) == NULL)
			__builtin_trap();
		if (rc == 1 && (rq.reason == SBX_EGRESS_OK ||
		    rq.reason == SBX_EGRESS_LOOPBACK_GRANT)) {
			char entry[SBX_EGRESS_NAME_MAX + 16];
			bool listed = false;

			if (strcmp(rq.method, "CONNECT") != 0 || rq.url_long)
				__builtin_trap();
			snprintf(entry, sizeof entry, "%s:%u", rq.target.host,
			    rq.target.port);
			for (size_t i = 0; allow[i] != NULL; i++)
				listed |= strcmp(allow[i], entry) == 0;
			if (rq.reason == SBX_EGRESS_OK ? !listed :
			    strcmp(entry, "localhost:8080") != 0)
				__builtin_trap();
		}
		if (rc != 0)
			break;
	}
	return 0;
}
