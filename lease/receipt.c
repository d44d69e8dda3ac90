/*
 * receipt.c: hash-chained receipts in the journal (SPEC 2, 9.1). One chain
 * per lease; every entry is canonical JSON and carries, through its hash,
 * the SHA-256 of the entry before it; the chain's head and length sit on
 * the lease row and move in the same IMMEDIATE transaction as the entry,
 * so writers in different processes serialize and never fork the chain.
 */
#include <assert.h>
#include <errno.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease/lease_int.h"

#define HASH_LEN 32
#define HEX_LEN (2 * HASH_LEN)
#define KIND_MAX 64
#define CANON_FLAGS (JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII)

static const char zero_hex[HEX_LEN + 1] =
    "0000000000000000000000000000000000000000000000000000000000000000";

static void
to_hex(const unsigned char *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 0xf];
	}
	out[2 * n] = '\0';
}

static int
from_hex(const char *hex, unsigned char out[HASH_LEN])
{
	size_t i;
	int hi, lo;

	if (hex == NULL || strlen(hex) != HEX_LEN)
		return -EINVAL;
	for (i = 0; i < HASH_LEN; i++) {
		hi = hex[2 * i];
		lo = hex[2 * i + 1];
		hi = hi >= '0' && hi <= '9' ? hi - '0' :
		    hi >= 'a' && hi <= 'f' ? hi - 'a' + 10 : -1;
		lo = lo >= '0' && lo <= '9' ? lo - '0' :
		    lo >= 'a' && lo <= 'f' ? lo - 'a' + 10 : -1;
		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}

/* hash_hex = hex(SHA-256(prev bytes || text)); prev_hex "" means zeros. */
static int
chain_hash(const char *prev_hex, const char *text, char hash_hex[HEX_LEN + 1])
{
	unsigned char prev[HASH_LEN], md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	EVP_MD_CTX *ctx;
	int ok;

	if (*prev_hex == '\0')
		memset(prev, 0, sizeof prev);
	else if (from_hex(prev_hex, prev) < 0)
		return -EINVAL;
	if ((ctx = EVP_MD_CTX_new()) == NULL)
		return -ENOMEM;
	ok = EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 &&
	    EVP_DigestUpdate(ctx, prev, sizeof prev) == 1 &&
	    EVP_DigestUpdate(ctx, text, strlen(text)) == 1 &&
	    EVP_DigestFinal_ex(ctx, md, &mdlen) == 1 && mdlen == HASH_LEN;
	EVP_MD_CTX_free(ctx);
	if (!ok)
		return -EIO;
	to_hex(md, HASH_LEN, hash_hex);
	return 0;
}

static bool
kind_valid(const char *k)
{
	size_t i, n;

	if (k == NULL || (n = strlen(k)) == 0 || n > KIND_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (!((k[i] >= 'a' && k[i] <= 'z') ||
		    (k[i] >= '0' && k[i] <= '9') || k[i] == '_' ||
		    k[i] == '.' || k[i] == '-'))
			return false;
	return true;
}

static const char sql_head[] =
    "SELECT receipt_head, receipt_len FROM leases WHERE id = ?1";
static const char sql_add[] =
    "INSERT INTO receipts (lease_id, seq, at, entry, prev, hash) VALUES"
    " (?1, ?2, ?3, ?4, ?5, ?6)";
static const char sql_move_head[] =
    "UPDATE leases SET receipt_head = ?2, receipt_len = ?3 WHERE id = ?1";

static int
read_head(struct lease_store *s, const char *id, char head[HEX_LEN + 1],
    int64_t *len)
{
	sqlite3_stmt *st;
	const unsigned char *t;
	int rc;

	if ((rc = lease__store_stmt(s, sql_head, &st)) < 0)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		t = sqlite3_column_text(st, 0);
		snprintf(head, HEX_LEN + 1, "%s", t != NULL ?
		    (const char *)t : "");
		*len = sqlite3_column_int64(st, 1);
	}
	sqlite3_reset(st);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc == SQLITE_DONE) {
		lease__store_msg(s, "no lease %s", id);
		return LEASE_ENOTFOUND;
	}
	return lease__store_fail(s, rc, "read receipt head");
}

/* Inside a transaction on id: append the entry (lease_int.h). */
int
lease__receipt_append_tx(struct lease_store *s, const char *id,
    const char *kind, json_t *fields, int64_t *seq_out)
{
	char head[HEX_LEN + 1], hash[HEX_LEN + 1];
	sqlite3_stmt *st;
	json_t *entry = NULL;
	char *text = NULL;
	int64_t len, seq, now;
	int rc;

	if (!kind_valid(kind) || (fields != NULL && !json_is_object(fields))) {
		lease__store_msg(s, "receipt: kind must be [a-z0-9_.-]{1,%d} "
		    "and fields an object", KIND_MAX);
		return -EINVAL;
	}
	if ((rc = read_head(s, id, head, &len)) < 0)
		goto out;
	seq = len + 1;
	now = lease_id_now_ms();
	/* "o" steals the reference we take here, even on failure */
	entry = json_pack("{s:I, s:I, s:s, s:o}", "seq", (json_int_t)seq,
	    "at", (json_int_t)now, "kind", kind, "fields",
	    fields != NULL ? json_incref(fields) : json_object());
	if (entry == NULL || (text = json_dumps(entry, CANON_FLAGS)) == NULL) {
		lease__store_msg(s, "receipt: cannot encode entry");
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = chain_hash(head, text, hash)) < 0) {
		lease__store_msg(s, "lease %s: receipt head is malformed", id);
		rc = rc == -EINVAL ? LEASE_ETAMPERED : rc;
		goto out;
	}
	if ((rc = lease__store_stmt(s, sql_add, &st)) < 0)
		goto out;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, seq);
	sqlite3_bind_int64(st, 3, now);
	sqlite3_bind_text(st, 4, text, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, *head != '\0' ? head : zero_hex, -1,
	    SQLITE_STATIC);
	sqlite3_bind_text(st, 6, hash, -1, SQLITE_STATIC);
	if ((rc = lease__store_step_done(s, st, "append receipt")) < 0)
		goto out;
	if ((rc = lease__store_stmt(s, sql_move_head, &st)) < 0)
		goto out;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, hash, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, seq);
	if ((rc = lease__store_step_done(s, st, "move receipt head")) < 0)
		goto out;
	if (seq_out != NULL)
		*seq_out = seq;
out:
	json_decref(entry);
	free(text);
	return rc;
}

static const char sql_add_usage[] =
    "UPDATE leases SET usage_requests = usage_requests + ?2,"
    " usage_input = usage_input + ?3, usage_output = usage_output + ?4,"
    " usage_cache_write = usage_cache_write + ?5,"
    " usage_cache_read = usage_cache_read + ?6,"
    " usage_cost_nano = usage_cost_nano + ?7,"
    " usage_cost_unknown = usage_cost_unknown + ?8 WHERE id = ?1";

/* Inside the receipt's transaction: the row's usage totals move. */
static int
usage_add_tx(struct lease_store *s, const char *id,
    const struct lease_usage *u)
{
	sqlite3_stmt *st;
	int rc;

	if (s->version < 5) {
		lease__store_msg(s, "%s: schema version %d has no usage; open "
		    "it with the current schema", s->path, s->version);
		return LEASE_ESCHEMA;
	}
	if ((rc = lease__store_stmt(s, sql_add_usage, &st)) < 0)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, u->requests);
	sqlite3_bind_int64(st, 3, u->input);
	sqlite3_bind_int64(st, 4, u->output);
	sqlite3_bind_int64(st, 5, u->cache_write);
	sqlite3_bind_int64(st, 6, u->cache_read);
	sqlite3_bind_int64(st, 7, u->cost_nano);
	sqlite3_bind_int64(st, 8, u->cost_unknown);
	return lease__store_step_done(s, st, "add usage");
}

int
lease_receipt_append(struct lease_store *s, const char *id, const char *kind,
    json_t *fields, int64_t *seq_out)
{
	return lease_receipt_append_usage(s, id, kind, fields, NULL, seq_out);
}

int
lease_receipt_append_usage(struct lease_store *s, const char *id,
    const char *kind, json_t *fields, const struct lease_usage *add,
    int64_t *seq_out)
{
	int64_t seq = 0;
	int rc;

	assert(s != NULL && s->db != NULL);
	if (!kind_valid(kind) || (fields != NULL && !json_is_object(fields))) {
		lease__store_msg(s, "receipt: kind must be [a-z0-9_.-]{1,%d} "
		    "and fields an object", KIND_MAX);
		return -EINVAL;
	}
	if ((rc = lease__store_begin_lease(s, id)) < 0)
		return rc;
	if ((rc = lease__receipt_append_tx(s, id, kind, fields, &seq)) < 0 ||
	    (add != NULL && (rc = usage_add_tx(s, id, add)) < 0)) {
		lease__store_rollback(s);
		return rc;
	}
	if ((rc = lease__store_commit(s)) < 0)
		return rc;
	if (seq_out != NULL)
		*seq_out = seq;
	return 0;
}

static const char sql_chain[] =
    "SELECT seq, entry, prev, hash FROM receipts WHERE lease_id = ?1"
    " ORDER BY seq";

/* Which entries a walk collects: the first and the last so many. */
struct window {
	json_t *collect;	/* NULL: none */
	int64_t first, last;
	int64_t omitted;	/* out: entries of the chain not collected */
};

/* Walk and check the chain; w (optional) collects entries + hash. */
static int
walk(struct lease_store *s, const char *id, int64_t *len_out, char *head_out,
    struct window *w)
{
	char rowhead[HEX_LEN + 1], head[HEX_LEN + 1] = "", hash[HEX_LEN + 1];
	const char *text, *prev, *rowhash;
	sqlite3_stmt *st;
	json_t *entry, *jseq;
	int64_t rowlen, n = 0, seq;
	int rc, step;

	if (!lease_id_valid(id))
		return LEASE_EBADID;
	/* One read transaction: the row and the chain from one snapshot. */
	if ((rc = lease__store_exec(s, "BEGIN", "begin read")) < 0)
		return rc;
	if ((rc = read_head(s, id, rowhead, &rowlen)) < 0)
		goto out;
	if ((rc = lease__store_stmt(s, sql_chain, &st)) < 0)
		goto out;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		seq = sqlite3_column_int64(st, 0);
		text = (const char *)sqlite3_column_text(st, 1);
		prev = (const char *)sqlite3_column_text(st, 2);
		rowhash = (const char *)sqlite3_column_text(st, 3);
		n++;
		rc = LEASE_ETAMPERED;
		if (seq != n) {
			lease__store_msg(s, "lease %s: receipt %lld is missing "
			    "(next is %lld)", id, (long long)n,
			    (long long)seq);
			goto fail_step;
		}
		if (text == NULL || prev == NULL || rowhash == NULL ||
		    strcmp(prev, n == 1 ? zero_hex : head) != 0) {
			lease__store_msg(s, "lease %s: receipt %lld does not "
			    "link to the one before", id, (long long)n);
			goto fail_step;
		}
		if ((rc = chain_hash(head, text, hash)) < 0)
			goto fail_step;
		rc = LEASE_ETAMPERED;
		if (strcmp(hash, rowhash) != 0) {
			lease__store_msg(s, "lease %s: receipt %lld was edited "
			    "(hash mismatch)", id, (long long)n);
			goto fail_step;
		}
		entry = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
		jseq = json_object_get(entry, "seq");
		if (!json_is_integer(jseq) || json_integer_value(jseq) != n ||
		    !json_is_string(json_object_get(entry, "kind"))) {
			json_decref(entry);
			lease__store_msg(s, "lease %s: receipt %lld is not a "
			    "well-formed entry", id, (long long)n);
			goto fail_step;
		}
		if (w != NULL && (n <= w->first || n > rowlen - w->last)) {
			json_object_set_new(entry, "hash", json_string(hash));
			json_array_append(w->collect, entry);
		} else if (w != NULL) {
			w->omitted++;
		}
		json_decref(entry);
		memcpy(head, hash, sizeof head);
	}
	sqlite3_reset(st);
	if (step != SQLITE_DONE) {
		rc = lease__store_fail(s, step, "read receipts");
		goto out;
	}
	if (len_out != NULL)
		*len_out = n;
	if (head_out != NULL)
		memcpy(head_out, head, sizeof head);
	rc = 0;
	if (n != rowlen) {
		lease__store_msg(s, "lease %s: receipt chain has %lld entries "
		    "but the lease records %lld (%s)", id, (long long)n,
		    (long long)rowlen, n < rowlen ? "truncated" : "added");
		rc = LEASE_ETAMPERED;
	} else if (strcmp(head, rowhead) != 0) {
		lease__store_msg(s, "lease %s: receipt chain head differs from "
		    "the lease's (rewritten)", id);
		rc = LEASE_ETAMPERED;
	}
	goto out;
fail_step:
	sqlite3_reset(st);
out:
	lease__store_exec(s, "COMMIT", "end read");
	return rc;
}

int
lease_receipt_verify(struct lease_store *s, const char *id, int64_t *len,
    char *head_hex)
{
	assert(s != NULL && s->db != NULL);
	return walk(s, id, len, head_hex, NULL);
}

int
lease_receipt_entries_window(struct lease_store *s, const char *id,
    int64_t first, int64_t last, json_t **out, int64_t *omitted)
{
	struct window w = { .first = first, .last = last };
	int rc;

	assert(s != NULL && s->db != NULL && out != NULL && first >= 0 &&
	    last >= 0);
	*out = NULL;
	if (omitted != NULL)
		*omitted = 0;
	if ((w.collect = json_array()) == NULL)
		return -ENOMEM;
	if ((rc = walk(s, id, NULL, NULL, &w)) < 0 && rc != LEASE_ETAMPERED) {
		json_decref(w.collect);
		return rc;
	}
	*out = w.collect;
	if (omitted != NULL)
		*omitted = w.omitted;
	return rc;
}

int
lease_receipt_entries(struct lease_store *s, const char *id, json_t **out)
{
	return lease_receipt_entries_window(s, id, INT64_MAX, 0, out, NULL);
}
