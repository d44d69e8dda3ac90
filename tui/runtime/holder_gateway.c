/*
 * holder_gateway.c: the holder's side of the lease's model gateway (SPEC
 * 8.5): the operator's provider (agent.json's "gateway", written by
 * `corral new` from the config's [provider API] section), the real key
 * (its key file, read here: the operator's own, 0600 or stricter; or the
 * minted credential), the gateway's socket in the holder's private
 * runtime tmpfs bound into the zone, and one receipt line per request.
 * The key lives in this process's memory and in the upstream's requests;
 * the zone holds the profile's placeholder.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"
#include "tui/runtime/runtime_int.h"

#define KEY_MAX 4096

struct tui_holder_gw {
	struct tui_ctx *ctx;
	enum sbx_gateway_api api;
	/* metering and the cap */
	struct tui_prices prices;
	char prices_file[4096];
	uint64_t spent;		/* nano-USD, requests of known cost */
	unsigned long long unknown;	/* requests of unknown cost */
	uint64_t cap;		/* nano-USD; 0: none */
	const char *cap_from;	/* "provider" or "policy" */
	uint64_t policy_cap;	/* the policy's, held or not; 0: none */
	const char *held;	/* why requests are held, or NULL */
	char budget[4096];	/* LEASE_DIR/budget */
	char *upstream;
	char *ca_file;
	char *key;
	const char *key_source;	/* "key_file" or "minted" */
	char fingerprint[SBX_SHA256_HEX];
	char sock[256];
	struct sbx_gateway *gw;
	bool closing, closed;
	bool held_said;		/* model_requests_held written */
	tui_holder_gw_receipt_fn receipt;
	tui_holder_gw_hold_fn hold;
	tui_holder_gw_inflight_fn inflight;
	void *ud;
};

/* The key file: a regular file of this uid's, no access for others. */
static int
key_read(const char *path, char **out, char *err, size_t errsz)
{
	char buf[KEY_MAX + 2];
	struct stat sb;
	size_t len = 0;
	ssize_t n;
	int fd;

	*out = NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		snprintf(err, errsz, "key file %.300s: %s", path,
		    strerror(errno));
		return -errno;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) ||
	    sb.st_uid != geteuid() || (sb.st_mode & 077) != 0) {
		close(fd);
		snprintf(err, errsz, "key file %.300s: must be a regular file "
		    "of corral's user that no one else may read (chmod 600)",
		    path);
		return -EPERM;
	}
	while (len < sizeof buf - 1 && (n = read(fd, buf + len,
	    sizeof buf - 1 - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		len--;
	buf[len] = '\0';
	for (size_t i = 0; i < len; i++) {
		if ((unsigned char)buf[i] <= 0x20 ||
		    (unsigned char)buf[i] >= 0x7f)
			len = 0;
	}
	if (len == 0 || len > KEY_MAX) {
		explicit_bzero(buf, sizeof buf);
		snprintf(err, errsz, "key file %.300s: one line, the key "
		    "(printable, no blanks, at most %d bytes)", path, KEY_MAX);
		return -EINVAL;
	}
	*out = strdup(buf);
	explicit_bzero(buf, sizeof buf);
	return *out != NULL ? 0 : -ENOMEM;
}

int
tui_holder_gw_prepare(struct tui_ctx *c, json_t *cfg, const char *minted,
    uint64_t policy_cap, const char *lease_dir, const char *dir,
    struct tui_holder_gw **out, char *err, size_t errsz)
{
	struct tui_holder_gw *g;
	const char *api = json_string_value(json_object_get(cfg, "api"));
	const char *up = json_string_value(json_object_get(cfg, "upstream"));
	const char *kf = json_string_value(json_object_get(cfg, "key_file"));
	const char *ca = json_string_value(json_object_get(cfg, "ca_file"));
	const char *cap = json_string_value(json_object_get(cfg, "spend_cap"));
	struct sbx_gateway_url u;
	char why[512];
	int rc;

	*out = NULL;
	if ((g = calloc(1, sizeof *g)) == NULL)
		return -ENOMEM;
	*out = g;
	g->ctx = c;
	snprintf(g->budget, sizeof g->budget, "%s/%s", lease_dir,
	    TUI_GATEWAY_BUDGET_FILE);
	if (cap != NULL && tui_prices_usd_parse(cap, &g->cap) < 0) {
		snprintf(err, errsz, "spend_cap '%.40s' is not an amount in USD",
		    cap);
		return -EINVAL;
	}
	/*
	 * A policy may only narrow the operator's cap (SPEC 8.5): the lower
	 * holds; a higher one is ignored, and the receipt says both.
	 */
	g->cap_from = "provider";
	g->policy_cap = policy_cap;
	if (policy_cap != 0 && (g->cap == 0 || policy_cap < g->cap)) {
		g->cap = policy_cap;
		g->cap_from = "policy";
	}
	/* A cap is only as good as the prices: without them, none holds. */
	if (tui_prices_load(c, &g->prices, g->prices_file,
	    sizeof g->prices_file, why, sizeof why) < 0 && g->cap != 0) {
		snprintf(err, errsz, "the spend cap needs the price table: %s",
		    why);
		return -EINVAL;
	}
	if (sbx_gateway_api_parse(api, &g->api) < 0 ||
	    sbx_gateway_url_parse(up, &u, err, errsz) < 0) {
		if (sbx_gateway_api_parse(api, &g->api) < 0)
			snprintf(err, errsz, "model gateway: no API");
		return -EINVAL;
	}
	if ((g->upstream = strdup(up)) == NULL || (ca != NULL &&
	    (g->ca_file = strdup(ca)) == NULL))
		return -ENOMEM;
	if (kf != NULL) {
		if ((rc = key_read(kf, &g->key, err, errsz)) < 0)
			return rc;
		g->key_source = "key_file";
	} else if (minted != NULL) {
		if ((g->key = strdup(minted)) == NULL)
			return -ENOMEM;
		g->key_source = "minted";
	} else {
		snprintf(err, errsz, "[provider %s]: no key_file and no mint "
		    "hook ([credentials] mint) to give the gateway a key", api);
		return -EINVAL;
	}
	if (sbx_sha256_hex(g->key, strlen(g->key), g->fingerprint) < 0)
		return -ENOMEM;
	snprintf(g->sock, sizeof g->sock, "%s/gateway.sock", dir);
	return 0;
}

json_t *
tui_holder_gw_doctor(json_t *cfg)
{
	const char *kf = json_string_value(json_object_get(cfg, "key_file"));
	const char *ca = json_string_value(json_object_get(cfg, "ca_file"));
	const char *cap = json_string_value(json_object_get(cfg, "spend_cap"));
	struct tui_holder_cred_cfg cred;
	char err[512] = "", *key = NULL;
	bool ok = true;
	json_t *o;
	int rc;

	o = json_pack("{s:s?, s:s?, s:s?, s:s?}", "provider",
	    json_string_value(json_object_get(cfg, "api")), "upstream",
	    json_string_value(json_object_get(cfg, "upstream")), "ca_file", ca,
	    "spend_cap_usd", cap);
	if (o == NULL)
		return NULL;
	/* The key, as the holder will read it (then wiped). */
	if (kf != NULL) {
		json_object_set_new(o, "key_source", json_string("key_file"));
		json_object_set_new(o, "key_file", json_string(kf));
		if (key_read(kf, &key, err, sizeof err) < 0)
			ok = false;
		if (key != NULL) {
			explicit_bzero(key, strlen(key));
			free(key);
		}
	} else {
		json_object_set_new(o, "key_source", json_string("minted"));
		rc = tui_holder_cred_load(&cred, err, sizeof err);
		if (rc == 0 && cred.cfg.mint == NULL)
			snprintf(err, sizeof err, "no key_file and no mint "
			    "hook ([credentials] mint in credentials.ini)");
		ok = rc == 0 && cred.cfg.mint != NULL;
		if (rc == 0)
			tui_holder_cred_clear(&cred);
	}
	if (ok && sbx_gateway_ca_check(ca) < 0) {
		ok = false;
		snprintf(err, sizeof err, "%s does not load as a CA file",
		    ca != NULL ? ca : "the system's trust store");
	}
	json_object_set_new(o, "ok", json_boolean(ok));
	if (!ok)
		json_object_set_new(o, "problem", json_string(err));
	return o;
}

const char *
tui_holder_gw_key(const struct tui_holder_gw *g)
{
	return g != NULL ? g->key : NULL;
}

int
tui_holder_gw_plan(struct tui_holder_gw *g, struct sbx_plan *plan)
{
	return sbx_gateway_plan_add(plan, g->sock);
}

/*
 * The request's cost into j and the lease's totals: unknown when its
 * usage is (then requests are held: fail closed) or its model has no
 * price (held too when there is a cap to keep).
 */
static void
meter(struct tui_holder_gw *g, const struct sbx_gateway_event *e, json_t *j,
    struct lease_usage *add)
{
	char usd[32];
	uint64_t nano = 0;
	int rc = -ENOENT;

	if (!e->usage.unparseable)
		rc = tui_prices_cost(&g->prices, e->usage.model, &e->usage,
		    &nano);
	if (rc == 0) {
		g->spent += nano;
		add->cost_nano = nano > INT64_MAX ? INT64_MAX : (int64_t)nano;
		tui_prices_usd(nano, usd, sizeof usd);
		json_object_set_new(j, "cost_usd", json_string(usd));
		json_object_set_new(j, "price_date", json_string(
		    g->prices.date));
	} else {
		g->unknown++;
		add->cost_unknown = 1;
		json_object_set_new(j, "cost_usd", json_null());
		json_object_set_new(j, "cost_unknown", json_string(
		    e->usage.unparseable ? "usage unparseable" :
		    "no price for the model"));
	}
	tui_prices_usd(g->spent, usd, sizeof usd);
	json_object_set_new(j, "lease_spent_usd", json_string(usd));
	if (g->held != NULL)
		return;
	if (e->usage.unparseable)
		g->held = "usage_unparseable";
	else if (rc != 0 && g->cap != 0)
		g->held = "cost_unknown";
	else if (g->cap != 0 && g->spent >= g->cap)
		g->held = "spend_cap";
	if (g->held != NULL)
		g->held_said = false;
}

/*
 * The operator's new budget (`corral budget ID AMOUNT`): read only while
 * requests are held, a small file of the lease directory's.
 */
static void
budget_read(struct tui_holder_gw *g)
{
	char *text = NULL, usd[32], was[32];
	uint64_t cap;
	size_t len = 0;

	if (tui_sandbox_read_file(g->budget, 64, &text, &len) < 0)
		return;
	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
		text[--len] = '\0';
	if (tui_prices_usd_parse(text, &cap) == 0 && cap > g->spent &&
	    cap != g->cap) {
		tui_prices_usd(g->cap, was, sizeof was);
		tui_prices_usd(cap, usd, sizeof usd);
		g->receipt(g->ud, "spend_cap_raised", json_pack("{s:s, s:s?, "
		    "s:s, s:s}", "cap_usd", usd, "was_usd", g->cap ? was :
		    NULL, "held_was", g->held, "by", "operator"), NULL);
		g->cap = cap;
		g->held = NULL;
		if (g->hold != NULL)
			g->hold(NULL, g->ud);
	}
	free(text);
}

static const char *
admit(const char *method, const char *path, void *ud)
{
	struct tui_holder_gw *g = ud;

	(void)method;
	(void)path;
	if (g->held != NULL)
		budget_read(g);
	return g->held;
}

/* One request: one receipt line, never a prompt or a completion. */
static void
on_event(const struct sbx_gateway_event *e, void *ud)
{
	struct tui_holder_gw *g = ud;
	struct lease_usage add = { 0 };
	bool metered = false;
	json_t *j;

	j = json_pack("{s:s, s:s, s:I, s:I, s:s, s:s, s:i, s:I, s:I, s:I}",
	    "provider", sbx_gateway_api_name(g->api), "verdict",
	    sbx_gateway_verdict_name(e->verdict), "conn", (json_int_t)e->conn,
	    "request", (json_int_t)e->request, "method", e->method, "path",
	    e->path, "status", e->status, "bytes_up",
	    (json_int_t)e->bytes_up, "bytes_down", (json_int_t)e->bytes_down,
	    "ms", (json_int_t)e->ms);
	if (j == NULL)
		return;
	if (e->error != NULL)
		json_object_set_new(j, "error", json_string(e->error));
	if (e->verdict == SBX_GATEWAY_DONE && e->metered) {
		const struct sbx_gateway_usage *u = &e->usage;

		json_object_set_new(j, "model", json_string(u->model));
		json_object_set_new(j, "stop_reason", u->stop_reason[0] ?
		    json_string(u->stop_reason) : json_null());
		json_object_set_new(j, "usage", json_pack("{s:I, s:I, s:I, "
		    "s:I}", "input", (json_int_t)u->input, "output",
		    (json_int_t)u->output, "cache_write",
		    (json_int_t)u->cache_write, "cache_read",
		    (json_int_t)u->cache_read));
		json_object_set_new(j, "usage_unparseable",
		    json_boolean(u->unparseable));
		add.requests = 1;
		add.input = (int64_t)u->input;
		add.output = (int64_t)u->output;
		add.cache_write = (int64_t)u->cache_write;
		add.cache_read = (int64_t)u->cache_read;
		meter(g, e, j, &add);
		metered = true;
	}
	g->receipt(g->ud, "model_request", j, metered ? &add : NULL);
	if (g->held != NULL && !g->held_said) {
		char spent[32], cap[32];

		g->held_said = true;
		tui_prices_usd(g->spent, spent, sizeof spent);
		tui_prices_usd(g->cap, cap, sizeof cap);
		g->receipt(g->ud, "model_requests_held", json_pack("{s:s, s:s, "
		    "s:s?, s:I}", "reason", g->held, "spent_usd", spent,
		    "cap_usd", g->cap ? cap : NULL, "unknown_cost",
		    (json_int_t)g->unknown), NULL);
		if (g->hold != NULL)
			g->hold(g->held, g->ud);
	}
}

static void
on_inflight(unsigned n, const char *stop, void *ud)
{
	struct tui_holder_gw *g = ud;

	if (g->inflight != NULL)
		g->inflight(n, stop, g->ud);
}

int
tui_holder_gw_start(struct tui_holder_gw *g, struct uv_loop_s *loop,
    uid_t uid, gid_t gid, tui_holder_gw_receipt_fn receipt,
    tui_holder_gw_inflight_fn inflight, tui_holder_gw_hold_fn hold,
    void *ud, char *err, size_t errsz)
{
	struct sbx_gateway_opts o;
	char cap[32], pcap[32];
	int rc;

	g->receipt = receipt;
	g->inflight = inflight;
	g->hold = hold;
	g->ud = ud;
	memset(&o, 0, sizeof o);
	o.sock_path = g->sock;
	o.uid = uid;
	o.gid = gid;
	o.api = g->api;
	o.upstream = g->upstream;
	o.key = g->key;
	o.ca_file = g->ca_file;
	o.event = on_event;
	o.inflight = on_inflight;
	o.admit = admit;
	o.ud = g;
	if ((rc = sbx_gateway_start(loop, &o, &g->gw)) < 0) {
		snprintf(err, errsz, "model gateway: %s", rc == -EPROTO ?
		    "cannot set up TLS (the CA file does not load)" :
		    sbx_strerror(rc));
		g->gw = NULL;
		return rc;
	}
	tui_prices_usd(g->cap, cap, sizeof cap);
	tui_prices_usd(g->policy_cap, pcap, sizeof pcap);
	receipt(ud, "model_gateway", json_pack("{s:s, s:s, s:s, s:s, s:s?, "
	    "s:s, s:s?, s:s?, s:s?, s:s, s:s}", "provider",
	    sbx_gateway_api_name(g->api), "upstream", g->upstream,
	    "key_source", g->key_source, "key_fingerprint", g->fingerprint,
	    "ca_file", g->ca_file, "base_url", SBX_GATEWAY_URL,
	    "spend_cap_usd", g->cap ? cap : NULL, "spend_cap_from", g->cap ?
	    g->cap_from : NULL, "policy_spend_cap_usd", g->policy_cap ? pcap :
	    NULL, "prices", g->prices_file, "price_date", g->prices.date),
	    NULL);
	/* The policy's cap above the operator's: ignored, and said so. */
	if (g->policy_cap > g->cap && strcmp(g->cap_from, "provider") == 0)
		receipt(ud, "policy_spend_cap_ignored", json_pack("{s:s, s:s, "
		    "s:s}", "policy_cap_usd", pcap, "cap_usd", cap, "why",
		    "a policy may only lower the operator's spend cap"), NULL);
	return 0;
}

static void
on_closed(void *ud)
{
	struct tui_holder_gw *g = ud;

	g->gw = NULL;
	g->closed = true;
}

static void
gw_summary(struct tui_holder_gw *g)
{
	struct sbx_gateway_stats st;
	char spent[32];

	if (g == NULL || g->gw == NULL || g->closing)
		return;
	sbx_gateway_stats(g->gw, &st);
	tui_prices_usd(g->spent, spent, sizeof spent);
	g->receipt(g->ud, "model_gateway_summary", json_pack("{s:I, s:I, "
	    "s:I, s:I, s:I, s:I, s:I, s:s, s:I}", "connections",
	    (json_int_t)st.connections, "requests", (json_int_t)st.requests,
	    "refused", (json_int_t)st.refused, "held", (json_int_t)st.held,
	    "failed", (json_int_t)st.failed, "bytes_up",
	    (json_int_t)st.bytes_up, "bytes_down", (json_int_t)st.bytes_down,
	    "spent_usd", spent, "unknown_cost", (json_int_t)g->unknown), NULL);
}

void
tui_holder_gw_close(struct tui_holder_gw *g)
{
	if (g == NULL || g->gw == NULL || g->closing)
		return;
	gw_summary(g);
	g->closing = true;
	sbx_gateway_close(g->gw, on_closed, g);
}

bool
tui_holder_gw_closed(const struct tui_holder_gw *g)
{
	return g == NULL || g->gw == NULL || g->closed;
}

void
tui_holder_gw_free(struct tui_holder_gw *g)
{
	if (g == NULL)
		return;
	if (g->key != NULL) {
		explicit_bzero(g->key, strlen(g->key));
		free(g->key);
	}
	free(g->upstream);
	free(g->ca_file);
	free(g);
}
