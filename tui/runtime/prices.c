/*
 * prices.c: the model gateway's price table (SPEC 8.5; issue 19), kept
 * as data: models/prices (the operator's $XDG_CONFIG_HOME/corral/prices
 * replaces it whole), USD per million tokens per model name or prefix,
 * with the date the prices were taken. Costs are kept in nano-USD, so a
 * request's cost is exact: tokens times the price per million tokens is
 * micro-USD, times 1000 nano.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"
#include "tui/runtime/runtime_int.h"

#define PRICES_MAX (256u * 1024u)

/* "3.75" (USD per million tokens) as nano-USD per token: 3750. */
static int
price_parse(const char *s, uint64_t *out)
{
	uint64_t whole = 0, frac = 0, scale = 1000;
	const char *c = s;

	if (*c < '0' || *c > '9')
		return -EINVAL;
	for (; *c >= '0' && *c <= '9'; c++) {
		whole = whole * 10 + (uint64_t)(*c - '0');
		if (whole > 1000000)
			return -EINVAL;
	}
	if (*c == '.') {
		c++;
		for (int k = 0; *c >= '0' && *c <= '9'; c++, k++) {
			if (k >= 3)
				return -EINVAL;	/* below a nano-USD a token */
			scale /= 10;
			frac += (uint64_t)(*c - '0') * scale;
		}
	}
	if (*c != '\0')
		return -EINVAL;
	*out = whole * 1000 + frac;
	return 0;
}

int
tui_prices_parse(const char *text, size_t len, struct tui_prices *p,
    char *why, size_t whysz)
{
	char *copy, *line, *save = NULL;
	int ln = 0;

	memset(p, 0, sizeof *p);
	if (memchr(text, '\0', len) != NULL ||
	    (copy = strndup(text, len)) == NULL) {
		snprintf(why, whysz, "not a text file");
		return -EINVAL;
	}
	for (line = strtok_r(copy, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		char *f[6], *tok, *s2 = NULL;
		int n = 0;

		ln++;
		if (line[0] == '#' || strspn(line, " \t\r") == strlen(line))
			continue;
		if (strncmp(line, "date = ", 7) == 0) {
			snprintf(p->date, sizeof p->date, "%.10s", line + 7);
			continue;
		}
		for (tok = strtok_r(line, " \t\r", &s2); tok != NULL && n < 6;
		    tok = strtok_r(NULL, " \t\r", &s2))
			f[n++] = tok;
		if (n != 5 || strlen(f[0]) >= sizeof p->m[0].model ||
		    p->n == TUI_PRICES_MAX) {
			snprintf(why, whysz, "line %d: want MODEL INPUT OUTPUT "
			    "CACHE_WRITE CACHE_READ", ln);
			free(copy);
			return -EINVAL;
		}
		snprintf(p->m[p->n].model, sizeof p->m[p->n].model, "%s", f[0]);
		for (int i = 0; i < 4; i++) {
			if (price_parse(f[1 + i], &p->m[p->n].nano[i]) < 0) {
				snprintf(why, whysz, "line %d: '%.40s' is not a "
				    "price in USD per million tokens", ln,
				    f[1 + i]);
				free(copy);
				return -EINVAL;
			}
		}
		p->n++;
	}
	free(copy);
	return 0;
}

int
tui_prices_load(struct tui_ctx *c, struct tui_prices *p, char *path,
    size_t pathsz, char *why, size_t whysz)
{
	char *text = NULL, *shipped = NULL;
	size_t len = 0;
	int rc;

	if (tui_config_file("prices", path, pathsz) < 0 ||
	    access(path, F_OK) != 0) {
		if ((shipped = tui_ctx_data_path(c, "models/prices")) == NULL) {
			memset(p, 0, sizeof *p);
			snprintf(why, whysz, "no price table (models/prices)");
			return -ENOENT;
		}
		snprintf(path, pathsz, "%s", shipped);
		free(shipped);
	}
	if ((rc = tui_sandbox_read_file(path, PRICES_MAX, &text, &len)) < 0) {
		snprintf(why, whysz, "%.300s: %s", path, strerror(-rc));
		return rc;
	}
	rc = tui_prices_parse(text, len, p, why, whysz);
	free(text);
	return rc;
}

int
tui_prices_cost(const struct tui_prices *p, const char *model,
    const struct sbx_gateway_usage *u, uint64_t *nano)
{
	const struct tui_price *best = NULL;
	size_t bl = 0;
	const unsigned long long t[4] = { u->input, u->output, u->cache_write,
		u->cache_read };
	uint64_t sum = 0;

	*nano = 0;
	for (size_t i = 0; model != NULL && i < p->n; i++) {
		size_t l = strlen(p->m[i].model);

		if (l > bl && strncmp(model, p->m[i].model, l) == 0) {
			best = &p->m[i];
			bl = l;
		}
	}
	if (best == NULL)
		return -ENOENT;
	for (int i = 0; i < 4; i++) {
		if (t[i] != 0 && best->nano[i] > UINT64_MAX / t[i])
			return -ERANGE;
		if (sum > UINT64_MAX - t[i] * best->nano[i])
			return -ERANGE;
		sum += t[i] * best->nano[i];
	}
	*nano = sum;
	return 0;
}

void
tui_prices_usd(uint64_t nano, char *buf, size_t bufsz)
{
	lease_usd(nano > INT64_MAX ? INT64_MAX : (int64_t)nano, buf, bufsz);
}

int
tui_prices_usd_parse(const char *s, uint64_t *nano)
{
	/* The same grammar, at most nine decimals: nano-USD. */
	return sbx_gateway_usd_parse(s, nano);
}
