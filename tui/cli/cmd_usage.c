/*
 * cmd_usage.c: what the leases' models cost (SPEC 8.5; issue 19):
 * `corral usage [ID] [--since DURATION] [--json]` sums the model
 * gateway's model_request receipts per lease and per model (tokens and
 * cost; a request of unknown cost is counted as such, never as free),
 * and `corral budget ID AMOUNT` sets a lease's spend cap (the holder
 * reads it while its model requests are held), with a receipt.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "lease/lease.h"
#include "sandbox-adapters/sbx_egress.h"
#include "tui/cli/cli.h"
#include "tui/runtime/runtime.h"

/* A lease's or a model's sums: the lease row's own shape (lease.h). */
#define tally lease_usage

static void
tally_add(struct tally *t, const struct tally *a)
{
	t->requests += a->requests;
	t->input += a->input;
	t->output += a->output;
	t->cache_write += a->cache_write;
	t->cache_read += a->cache_read;
	t->cost_unknown += a->cost_unknown;
	t->cost_nano += a->cost_nano;
}

static int64_t
jnum(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_integer(v) && json_integer_value(v) > 0 ?
	    (int64_t)json_integer_value(v) : 0;
}

static void
tally_print(const char *lease, const char *model, const struct tally *t)
{
	char usd[32];

	lease_usd(t->cost_nano, usd, sizeof usd);
	printf("%-24s %-30.30s %5lld %9lld %8lld %8lld %9lld %11s%s\n", lease,
	    model, (long long)t->requests, (long long)t->input,
	    (long long)t->output, (long long)t->cache_write,
	    (long long)t->cache_read, usd, t->cost_unknown ? " +unknown" : "");
}

#define MODELS_MAX 64

struct per_model {
	char model[SBX_GATEWAY_MODEL_MAX];
	struct tally t;
};

/* The row of model in m (n of them), a new one if there is room. */
static struct tally *
model_row(struct per_model *m, size_t *n, const char *model)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp(m[i].model, model) == 0)
			return &m[i].t;
	if (*n == MODELS_MAX)
		model = "(other models)";
	for (size_t i = 0; i < *n; i++)
		if (strcmp(m[i].model, model) == 0)
			return &m[i].t;
	snprintf(m[*n].model, sizeof m[*n].model, "%s", model);
	memset(&m[*n].t, 0, sizeof m[*n].t);
	return &m[(*n)++].t;
}

/*
 * One lease's model_request receipts since since_ms, per model: printed,
 * or into o (--json); added to total.
 */
static int
lease_usage(struct tui_ctx *c, const char *id, int64_t since_ms, json_t *o,
    struct tally *total)
{
	static struct per_model m[MODELS_MAX + 1];
	json_t *entries = NULL, *e, *arr;
	struct tally lt = { 0 };
	size_t i, n = 0;
	int rc;

	rc = lease_receipt_entries(c->store, id, &entries);
	if (rc < 0 && entries == NULL)
		return rc;
	json_array_foreach(entries, i, e) {
		json_t *f = json_object_get(e, "fields"), *u;
		const char *model, *cost, *kind;
		struct tally *t;
		uint64_t nano;

		kind = json_string_value(json_object_get(e, "kind"));
		if (kind == NULL || strcmp(kind, "model_request") != 0 ||
		    (u = json_object_get(f, "usage")) == NULL ||
		    json_integer_value(json_object_get(e, "at")) < since_ms)
			continue;
		model = json_string_value(json_object_get(f, "model"));
		t = model_row(m, &n, model != NULL && model[0] != '\0' ?
		    model : "(unknown model)");
		t->requests++;
		t->input += jnum(u, "input");
		t->output += jnum(u, "output");
		t->cache_write += jnum(u, "cache_write");
		t->cache_read += jnum(u, "cache_read");
		cost = json_string_value(json_object_get(f, "cost_usd"));
		if (cost != NULL && tui_prices_usd_parse(cost, &nano) == 0 &&
		    nano <= INT64_MAX)
			t->cost_nano += (int64_t)nano;
		else
			t->cost_unknown++;
	}
	json_decref(entries);
	arr = o != NULL ? json_array() : NULL;
	for (i = 0; i < n; i++) {
		if (arr != NULL) {
			json_t *row = lease_json_usage(&m[i].t);

			json_object_set_new(row, "model",
			    json_string(m[i].model));
			json_array_append_new(arr, row);
		} else if (o == NULL)
			tally_print(id, m[i].model, &m[i].t);
		tally_add(&lt, &m[i].t);
	}
	if (arr != NULL && lt.requests > 0) {
		json_t *l = lease_json_usage(&lt);

		json_object_set_new(l, "id", json_string(id));
		json_object_set_new(l, "models", arr);
		json_array_append_new(o, l);
	} else
		json_decref(arr);
	tally_add(total, &lt);
	return 0;
}

static int
usage_exec(struct tui_ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "since", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct lease_record rec, *recs = NULL;
	struct tally total = { 0 };
	json_t *leases = NULL;
	int64_t since = 0, d;
	bool json = false;
	size_t n = 0;
	int ch, rc = 0;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "s:j", opts, NULL)) != -1) {
		if (ch == 's') {
			if (tui_duration_parse(optarg, &d) < 0)
				return tui_ctx_usage(c, "bad duration '%.64s'",
				    optarg);
			since = lease_id_now_ms() - d;
		} else if (ch == 'j') {
			json = true;
		} else {
			return tui_ctx_usage(c, "unknown option '%.64s'",
			    argv[optind - 1]);
		}
	}
	if (argc - optind > 1)
		return tui_ctx_usage(c, "unexpected argument '%.64s'",
		    argv[optind + 1]);
	if (tui_ctx_store(c) == NULL)
		return TUI_EXIT_FAIL;
	if (json && (leases = json_array()) == NULL)
		return tui_ctx_err(c, "out of memory");
	if (!json)
		printf("%-24s %-30s %5s %9s %8s %8s %9s %11s\n", "LEASE",
		    "MODEL", "REQS", "INPUT", "OUTPUT", "CACHE_W", "CACHE_R",
		    "COST_USD");
	if (optind < argc) {
		if (tui_ctx_find_lease(c, argv[optind], &rec) != 0) {
			json_decref(leases);
			return TUI_EXIT_FAIL;
		}
		rc = lease_usage(c, rec.id, since, leases, &total);
		lease_record_clear(&rec);
	} else if ((rc = lease_record_list(c->store, LEASE_LIST_ALL, &recs,
	    &n)) == 0) {
		for (size_t i = 0; i < n && rc == 0; i++)
			rc = lease_usage(c, recs[i].id, since, leases, &total);
		lease_record_list_free(recs, n);
	}
	if (rc < 0) {
		json_decref(leases);
		return tui_ctx_err(c, "%s", lease_store_errmsg(c->store));
	}
	if (json) {
		json_t *o = json_pack("{s:o, s:o}", "leases", leases, "total",
		    lease_json_usage(&total));

		tui_ctx_print_json(o);
		return TUI_EXIT_OK;
	}
	tally_print("total", "", &total);
	return TUI_EXIT_OK;
}

const struct tui_cmd tui_cmd_usage = {
	.name = "usage",
	.usage = "[ID] [--since DURATION] [--json]",
	.help = "Print what the leases' models were asked and what it cost, "
		"from the model\ngateway's record of every request: tokens in "
		"and out, cache writes and reads,\nand the cost by the price "
		"table, per lease and model, then the total. A\nrequest whose "
		"cost is unknown (no price for its model, or an answer whose\n"
		"usage could not be read) is marked +unknown, never counted as "
		"free. --since\nlimits to the last DURATION (2h, 30m...).",
	.exec = usage_exec,
};

static int
budget_exec(struct tui_ctx *c, int argc, char **argv)
{
	struct lease_record rec;
	char *dir, path[4096], tmp[4200], usd[32];
	uint64_t nano;
	json_t *f;
	int fd, rc;

	if (argc != 3)
		return tui_ctx_usage(c, "want ID AMOUNT");
	if (tui_prices_usd_parse(argv[2], &nano) < 0 || nano == 0)
		return tui_ctx_usage(c, "'%.40s' is not an amount in USD "
		    "(e.g. 10.00)", argv[2]);
	if (tui_ctx_store(c) == NULL || tui_ctx_find_lease(c, argv[1],
	    &rec) != 0)
		return TUI_EXIT_FAIL;
	if ((dir = tui_ctx_lease_dir(c, rec.id)) == NULL) {
		lease_record_clear(&rec);
		return tui_ctx_err(c, "out of memory");
	}
	tui_prices_usd(nano, usd, sizeof usd);
	snprintf(path, sizeof path, "%s/%s", dir, TUI_GATEWAY_BUDGET_FILE);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	free(dir);
	/* Whole or not at all: the holder reads it while requests wait. */
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) < 0 || dprintf(fd, "%s\n", usd) < 0 ||
	    fsync(fd) < 0 || close(fd) < 0 || rename(tmp, path) < 0) {
		rc = tui_ctx_err(c, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			unlink(tmp);
		lease_record_clear(&rec);
		return rc;
	}
	f = json_pack("{s:s, s:s}", "cap_usd", usd, "by", "operator");
	rc = f != NULL ? lease_receipt_append(c->store, rec.id, "budget", f,
	    NULL) : -ENOMEM;
	json_decref(f);
	if (rc < 0) {
		rc = tui_ctx_err(c, "%s", lease_store_errmsg(c->store));
		lease_record_clear(&rec);
		return rc;
	}
	printf("%s: spend cap %s USD; model requests it held go on\n", rec.id,
	    usd);
	lease_record_clear(&rec);
	return TUI_EXIT_OK;
}

const struct tui_cmd tui_cmd_budget = {
	.name = "budget",
	.usage = "ID AMOUNT",
	.help = "Set the lease's spend cap on its model to AMOUNT (USD, e.g. "
		"10.00), recorded\nin its receipt. When its model requests are "
		"held (the cap was reached, or an\nanswer's cost could not be "
		"known), the next request goes on under the new cap.",
	.exec = budget_exec,
};
