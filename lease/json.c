/*
 * json.c: JSON views of leases and reconcile reports for the command line
 * (SPEC 11: `ls --json`, `show --json`, `reconcile --json`). Absent values
 * are null; stored JSON text (limits, result, cmd) is embedded parsed.
 * Escaping for terminals (SPEC 4.7) is the printer's job, not this file's.
 */
#include <assert.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease/lease_int.h"

/* A string, or null; bytes that are not UTF-8 become '?'. */
static json_t *
str(const char *s)
{
	json_t *j;
	char *copy;
	size_t i;

	if (s == NULL)
		return json_null();
	if ((j = json_string(s)) != NULL)
		return j;
	if ((copy = strdup(s)) == NULL)
		return NULL;
	for (i = 0; copy[i] != '\0'; i++)
		if ((unsigned char)copy[i] >= 0x80)
			copy[i] = '?';
	j = json_string(copy);
	free(copy);
	return j;
}

/* Stored JSON text parsed, or null. */
static json_t *
parsed(const char *text)
{
	json_t *j;

	if (text == NULL)
		return json_null();
	j = json_loads(text, JSON_DECODE_ANY, NULL);
	return j != NULL ? j : json_null();
}

static int
set(json_t *o, const char *k, json_t *v)
{
	return v != NULL ? json_object_set_new(o, k, v) : -1;
}

void
lease_usd(int64_t nano, char *buf, size_t bufsz)
{
	uint64_t n = nano > 0 ? (uint64_t)nano : 0;

	snprintf(buf, bufsz, "%llu.%06llu", (unsigned long long)(n /
	    1000000000ull), (unsigned long long)(n % 1000000000ull / 1000ull));
}

json_t *
lease_json_usage(const struct lease_usage *u)
{
	char usd[32];

	lease_usd(u->cost_nano, usd, sizeof usd);
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:s, s:I}", "requests",
	    (json_int_t)u->requests, "input", (json_int_t)u->input, "output",
	    (json_int_t)u->output, "cache_write", (json_int_t)u->cache_write,
	    "cache_read", (json_int_t)u->cache_read, "cost_usd", usd,
	    "unknown_cost", (json_int_t)u->cost_unknown);
}

json_t *
lease_json_record(const struct lease_record *r, unsigned flags)
{
	json_t *o, *rc;
	int bad = 0;

	assert(r != NULL);
	if ((o = json_object()) == NULL)
		return NULL;
	bad |= set(o, "id", json_string(r->id));
	bad |= set(o, "name", str(r->name));
	bad |= set(o, "lease_state",
	    json_string(lease_fsm_state_name(r->state)));
	bad |= set(o, "activity", json_string(lease_fsm_activity_name(
	    r->activity)));
	bad |= set(o, "unseen", json_boolean(r->unseen));
	bad |= set(o, "mode", json_string(lease_fsm_mode_name(r->mode)));
	bad |= set(o, "adapter", str(r->adapter));
	bad |= set(o, "isolation", str(r->isolation));
	bad |= set(o, "branch", str(r->branch));
	bad |= set(o, "worktree", str(r->worktree));
	bad |= set(o, "workspace", str(r->workspace));
	bad |= set(o, "sandbox_id", str(r->sandbox_id));
	bad |= set(o, "holder_pid", r->holder_pid > 0 ?
	    json_integer(r->holder_pid) : json_null());
	bad |= set(o, "cleanup",
	    json_string(lease_fsm_cleanup_name(r->cleanup)));
	bad |= set(o, "failed_reason", str(r->failed_reason));
	bad |= set(o, "created_at", json_integer(r->created_at));
	bad |= set(o, "updated_at", json_integer(r->updated_at));
	bad |= set(o, "usage", lease_json_usage(&r->usage));
	if (flags & LEASE_JSON_FULL) {
		bad |= set(o, "repo", str(r->repo));
		bad |= set(o, "base", str(r->base));
		bad |= set(o, "base_ref", str(r->base_ref));
		bad |= set(o, "policy", str(r->policy));
		bad |= set(o, "limits", parsed(r->limits));
		bad |= set(o, "result", parsed(r->result));
		bad |= set(o, "cmd", parsed(r->cmd));
		bad |= set(o, "holder_start", r->holder_start > 0 ?
		    json_integer(r->holder_start) : json_null());
		rc = json_pack("{s:I, s:o, s:n}", "length",
		    (json_int_t)r->receipt_len, "head",
		    r->receipt_head[0] != '\0' ? json_string(r->receipt_head) :
		    json_null(), "verified");
		bad |= set(o, "receipt", rc);
	}
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The first LEASE_SHOW_FIRST rows, then a ring of the last ones. */
struct tr_window {
	json_t *a;
	json_t *ring[LEASE_SHOW_LAST];
	int64_t n;		/* rows seen */
};

static int
on_transition(const struct lease_event_row *ev, void *ud)
{
	struct tr_window *w = ud;
	json_t *e = json_pack("{s:I, s:I, s:s, s:o, s:o, s:o}", "seq",
	    (json_int_t)ev->seq, "at", (json_int_t)ev->at, "kind", ev->kind,
	    "from", str(ev->from), "to", str(ev->to), "reason",
	    str(ev->reason));
	size_t k;

	if (e == NULL)
		return -ENOMEM;
	if (w->n++ < LEASE_SHOW_FIRST)
		return json_array_append_new(w->a, e) == 0 ? 0 : -ENOMEM;
	k = (size_t)((w->n - LEASE_SHOW_FIRST - 1) % LEASE_SHOW_LAST);
	json_decref(w->ring[k]);
	w->ring[k] = e;
	return 0;
}

/* The ring after the first rows, oldest first; returns the rows left out. */
static int64_t
tr_window_end(struct tr_window *w)
{
	int64_t rest = w->n - LEASE_SHOW_FIRST, kept, i;

	if (rest <= 0)
		return 0;
	kept = rest < LEASE_SHOW_LAST ? rest : LEASE_SHOW_LAST;
	for (i = rest - kept; i < rest; i++) {
		size_t k = (size_t)(i % LEASE_SHOW_LAST);

		json_array_append_new(w->a, w->ring[k]);
		w->ring[k] = NULL;
	}
	return rest - kept;
}

static void
tr_window_free(struct tr_window *w)
{
	for (size_t i = 0; i < LEASE_SHOW_LAST; i++)
		json_decref(w->ring[i]);
	free(w);
}

int
lease_json_show(struct lease_store *s, const char *id, json_t **out)
{
	struct lease_resource_row *res = NULL;
	struct lease_record r;
	json_t *o = NULL, *entries = NULL, *tr = NULL, *ra = NULL, *e;
	struct tr_window *tw = NULL;
	int64_t omitted = 0;
	size_t n = 0, i;
	int rc, vrc;

	assert(s != NULL && out != NULL);
	*out = NULL;
	if ((rc = lease_record_get(s, id, &r)) < 0)
		return rc;
	if ((o = lease_json_record(&r, LEASE_JSON_FULL)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	/* Bounded however long the lease's journal (issue 15). */
	vrc = lease_receipt_entries_window(s, id, LEASE_SHOW_FIRST,
	    LEASE_SHOW_LAST, &entries, &omitted);
	if (vrc < 0 && vrc != LEASE_ETAMPERED) {
		rc = vrc;
		goto out;
	}
	json_object_set_new(json_object_get(o, "receipt"), "verified",
	    json_boolean(vrc == 0));
	json_object_set_new(o, "receipts", entries);
	json_object_set_new(o, "receipts_omitted",
	    json_integer((json_int_t)omitted));
	entries = NULL;
	if ((tw = calloc(1, sizeof *tw)) == NULL ||
	    (tw->a = tr = json_array()) == NULL ||
	    (rc = lease_event_list(s, id, 0, 0, on_transition, tw,
	    NULL)) < 0) {
		rc = rc < 0 ? rc : -ENOMEM;
		goto out;
	}
	omitted = tr_window_end(tw);
	json_object_set_new(o, "transitions", tr);
	json_object_set_new(o, "transitions_omitted",
	    json_integer((json_int_t)omitted));
	tr = NULL;
	if ((rc = lease_resource_list(s, id, &res, &n)) < 0)
		goto out;
	if ((ra = json_array()) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		e = json_pack("{s:s, s:o, s:o, s:s, s:I}", "kind",
		    lease_resource_name(res[i].kind), "identity",
		    str(res[i].identity), "scope", str(res[i].scope), "state",
		    lease_resource_state_name(res[i].state), "at",
		    (json_int_t)res[i].at);
		if (e == NULL || json_array_append_new(ra, e) < 0) {
			rc = -ENOMEM;
			goto out;
		}
	}
	json_object_set_new(o, "resources", ra);
	ra = NULL;
	*out = o;
	o = NULL;
	rc = 0;
out:
	json_decref(ra);
	json_decref(tr);
	if (tw != NULL)
		tr_window_free(tw);
	json_decref(entries);
	json_decref(o);
	lease_resource_list_free(res, n);
	lease_record_clear(&r);
	return rc;
}

json_t *
lease_json_report(const struct lease_report *rep)
{
	const struct lease_finding *f;
	json_t *o, *a, *e;
	size_t i;

	assert(rep != NULL);
	if ((a = json_array()) == NULL)
		return NULL;
	for (i = 0; i < rep->n; i++) {
		f = &rep->v[i];
		e = json_pack("{s:s, s:o, s:o, s:o, s:o, s:i, s:b, s:o}",
		    "kind", lease_recover_finding_name(f->kind), "id",
		    f->id[0] != '\0' ? json_string(f->id) : json_null(),
		    "resource", f->resource < LEASE_RES_COUNT ?
		    json_string(lease_resource_name(f->resource)) :
		    json_null(), "identity", str(f->identity), "scope",
		    str(f->scope), "seen", f->seen, "removable", f->removable,
		    "detail", str(f->detail));
		if (e == NULL || json_array_append_new(a, e) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	o = json_pack("{s:b, s:o}", "dry_run", rep->dry_run, "findings", a);
	return o;
}
