/*
 * probe.c: the preflight's own host resources (its probe cgroup, its
 * scratch directory) in the journal, as a lease's are (SPEC 9.2): a row
 * `planned` before the resource exists, `created` after, deleted once it
 * is gone. A preflight killed at any point leaves rows naming everything
 * it may have made; the next preflight or reconcile removes those of runs
 * that no longer live, by the identity the row holds, and the table only
 * ever holds what may still be on the host.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lease/lease_int.h"

static const char sql_probe_plan[] =
    "INSERT OR IGNORE INTO probes (run, kind, identity, state, at)"
    " VALUES (?1, ?2, ?3, 'planned', ?4)";
static const char sql_probe_created[] =
    "UPDATE probes SET state = 'created', at = ?4 WHERE run = ?1 AND"
    " kind = ?2 AND identity = ?3";
static const char sql_probe_removed[] =
    "DELETE FROM probes WHERE run = ?1 AND kind = ?2 AND identity = ?3";
static const char sql_probe_list[] =
    "SELECT run, kind, identity, state FROM probes ORDER BY at, run";

static int
probe_step(struct lease_store *s, const char *sql, const char *run,
    const char *kind, const char *identity, const char *what)
{
	sqlite3_stmt *st;
	int rc;

	assert(s != NULL && s->db != NULL);
	if (run == NULL || *run == '\0' || kind == NULL || *kind == '\0' ||
	    identity == NULL || *identity == '\0')
		return -EINVAL;
	if ((rc = lease__store_stmt(s, sql, &st)) < 0)
		return rc;
	sqlite3_bind_text(st, 1, run, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, kind, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, identity, -1, SQLITE_TRANSIENT);
	if (sql != sql_probe_removed)
		sqlite3_bind_int64(st, 4, lease_id_now_ms());
	return lease__store_step_done(s, st, what);
}

int
lease_probe_plan(struct lease_store *s, const char *run, const char *kind,
    const char *identity)
{
	return probe_step(s, sql_probe_plan, run, kind, identity,
	    "record probe resource");
}

int
lease_probe_created(struct lease_store *s, const char *run,
    const char *kind, const char *identity)
{
	return probe_step(s, sql_probe_created, run, kind, identity,
	    "mark probe resource created");
}

int
lease_probe_removed(struct lease_store *s, const char *run,
    const char *kind, const char *identity)
{
	return probe_step(s, sql_probe_removed, run, kind, identity,
	    "forget probe resource");
}

void
lease_probe_list_free(struct lease_probe_row *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++) {
		free(v[i].run);
		free(v[i].kind);
		free(v[i].identity);
	}
	free(v);
}

int
lease_probe_list(struct lease_store *s, struct lease_probe_row **out,
    size_t *n)
{
	struct lease_probe_row *v = NULL, *nv;
	sqlite3_stmt *st;
	size_t cap = 0;
	bool oom = false;
	int rc;

	assert(s != NULL && out != NULL && n != NULL);
	*out = NULL;
	*n = 0;
	if ((rc = lease__store_stmt(s, sql_probe_list, &st)) < 0)
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 8;
			if ((nv = realloc(v, cap * sizeof *v)) == NULL) {
				oom = true;
				break;
			}
			v = nv;
		}
		memset(&v[*n], 0, sizeof v[*n]);
		v[*n].run = lease__store_col_text(st, 0, &oom);
		v[*n].kind = lease__store_col_text(st, 1, &oom);
		v[*n].identity = lease__store_col_text(st, 2, &oom);
		v[*n].created = strcmp((const char *)sqlite3_column_text(st, 3),
		    "created") == 0;
		(*n)++;
		if (oom)
			break;
	}
	sqlite3_reset(st);
	if (oom) {
		lease_probe_list_free(v, *n);
		*n = 0;
		return -ENOMEM;
	}
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		lease_probe_list_free(v, *n);
		*n = 0;
		return lease__store_fail(s, rc, "list probe resources");
	}
	*out = v;
	return 0;
}
