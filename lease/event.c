/*
 * event.c: the transitions log of the journal (SPEC 9.1): a row appended
 * inside each state change's transaction, read back in cursor order.
 */
#include <assert.h>

#include "lease/lease_int.h"

static const char sql_log[] =
    "INSERT INTO transitions (lease_id, seq, at, kind, from_state,"
    " to_state, reason) VALUES (?1, (SELECT coalesce(max(seq), 0) + 1"
    " FROM transitions WHERE lease_id = ?1), ?2, ?3, ?4, ?5, ?6)";

int
lease__event_log(struct lease_store *s, const char *id, int64_t at,
    const char *kind, const char *from, const char *to, const char *reason)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = lease__store_stmt(s, sql_log, &st)) < 0)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, at);
	sqlite3_bind_text(st, 3, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, from, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 5, to, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 6, reason, -1, SQLITE_TRANSIENT);
	return lease__store_step_done(s, st, "record transition");
}

static const char sql_events_all[] =
    "SELECT n, lease_id, seq, at, kind, from_state, to_state, reason FROM"
    " transitions WHERE at >= ?1 AND n > ?2 ORDER BY n";
static const char sql_events_one[] =
    "SELECT n, lease_id, seq, at, kind, from_state, to_state, reason FROM"
    " transitions WHERE at >= ?1 AND n > ?2 AND lease_id = ?3 ORDER BY n";

int
lease_event_list(struct lease_store *s, const char *id, int64_t since_ms,
    int64_t after, lease_event_cb cb, void *ud, int64_t *last)
{
	struct lease_event_row ev;
	sqlite3_stmt *st;
	int rc, stop = 0;

	assert(s != NULL && s->db != NULL && cb != NULL);
	if (id != NULL && !lease_id_valid(id))
		return LEASE_EBADID;
	if ((rc = lease__store_stmt(s, id != NULL ? sql_events_one :
	    sql_events_all, &st)) < 0)
		return rc;
	sqlite3_bind_int64(st, 1, since_ms);
	sqlite3_bind_int64(st, 2, after);
	if (id != NULL)
		sqlite3_bind_text(st, 3, id, -1, SQLITE_STATIC);
	if (last != NULL)
		*last = after;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ev.cursor = sqlite3_column_int64(st, 0);
		ev.id = (const char *)sqlite3_column_text(st, 1);
		ev.seq = sqlite3_column_int64(st, 2);
		ev.at = sqlite3_column_int64(st, 3);
		ev.kind = (const char *)sqlite3_column_text(st, 4);
		ev.from = (const char *)sqlite3_column_text(st, 5);
		ev.to = (const char *)sqlite3_column_text(st, 6);
		ev.reason = (const char *)sqlite3_column_text(st, 7);
		if (last != NULL)
			*last = ev.cursor;
		if ((stop = cb(&ev, ud)) != 0)
			break;
	}
	sqlite3_reset(st);
	if (stop != 0)
		return stop;
	if (rc != SQLITE_DONE)
		return lease__store_fail(s, rc, "read events");
	return 0;
}
