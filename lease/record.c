/*
 * store.c: the journal (SPEC 9.1): one SQLite file in WAL mode with a busy
 * timeout, schema migrations by PRAGMA user_version, prepared statements,
 * and one short IMMEDIATE transaction per state change, writing the new
 * state and its transition row together so a committed transition
 * survives a SIGKILL at any point. Never recreates or overwrites a file
 * it cannot read: it names the file and stops.
 */
#include <assert.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lease/lease_int.h"

#define NAME_MAX_BYTES 128
#define ID_RETRIES 32

/* ------------------------------------------------------------------ */
/* Schema                                                              */

/* Version 1: leases, transitions, resources, receipts, and every ID ever
 * issued (so none is reused after gc). */
static const char schema_v1[] =
    "CREATE TABLE ids ("
    " id TEXT PRIMARY KEY,"
    " at INTEGER NOT NULL"
    ") WITHOUT ROWID;"
    "CREATE TABLE leases ("
    " id TEXT PRIMARY KEY REFERENCES ids(id),"
    " name TEXT NOT NULL,"
    " mode TEXT NOT NULL CHECK (mode IN ('sandboxed','trusted_local')),"
    " adapter TEXT NOT NULL,"
    " isolation TEXT NOT NULL,"
    " lease_state TEXT NOT NULL CHECK (lease_state IN ('provisioning',"
    "  'running','result_ready','applied','rejected','failed',"
    "  'cancelled')),"
    " activity TEXT NOT NULL CHECK (activity IN ('starting','working',"
    "  'prompt','blocked','done','failed','cancelled')),"
    " unseen INTEGER NOT NULL DEFAULT 0,"
    " failed_reason TEXT,"
    " cleanup TEXT NOT NULL CHECK (cleanup IN ('none','pending',"
    "  'confirmed','failed')),"
    " repo TEXT, base TEXT, base_ref TEXT, branch TEXT, worktree TEXT,"
    " workspace TEXT, sandbox_id TEXT, policy TEXT, limits TEXT,"
    " holder_pid INTEGER, holder_start INTEGER,"
    " created_at INTEGER NOT NULL,"
    " updated_at INTEGER NOT NULL,"
    " receipt_head TEXT NOT NULL DEFAULT '',"
    " receipt_len INTEGER NOT NULL DEFAULT 0,"
    " result TEXT,"
    " cmd TEXT"
    ");"
    "CREATE INDEX leases_state ON leases(lease_state);"
    "CREATE TABLE transitions ("
    " n INTEGER PRIMARY KEY AUTOINCREMENT,"
    " lease_id TEXT NOT NULL REFERENCES leases(id) ON DELETE CASCADE,"
    " seq INTEGER NOT NULL,"
    " at INTEGER NOT NULL,"
    " kind TEXT NOT NULL CHECK (kind IN ('lease','activity','cleanup')),"
    " from_state TEXT,"
    " to_state TEXT NOT NULL,"
    " reason TEXT,"
    " UNIQUE (lease_id, seq)"
    ");"
    "CREATE TABLE resources ("
    " lease_id TEXT NOT NULL REFERENCES leases(id) ON DELETE CASCADE,"
    " kind TEXT NOT NULL,"
    " identity TEXT NOT NULL,"
    " scope TEXT,"
    " state TEXT NOT NULL CHECK (state IN ('planned','created',"
    "  'removed')),"
    " at INTEGER NOT NULL,"
    " PRIMARY KEY (lease_id, kind, identity)"
    ");"
    "CREATE TABLE receipts ("
    " lease_id TEXT NOT NULL REFERENCES leases(id) ON DELETE CASCADE,"
    " seq INTEGER NOT NULL,"
    " at INTEGER NOT NULL,"
    " entry TEXT NOT NULL,"
    " prev TEXT NOT NULL,"
    " hash TEXT NOT NULL,"
    " PRIMARY KEY (lease_id, seq)"
    ");";

/* Version 2: the persisted orphan inventory (two consistent inventories
 * before anything is removable, SPEC 9.2) and an index for events. */
static const char schema_v2[] =
    "CREATE TABLE inventory ("
    " kind TEXT NOT NULL,"
    " identity TEXT NOT NULL,"
    " scope TEXT NOT NULL DEFAULT '',"
    " lease_id TEXT NOT NULL,"
    " first_seen INTEGER NOT NULL,"
    " last_seen INTEGER NOT NULL,"
    " seen INTEGER NOT NULL,"
    " PRIMARY KEY (kind, identity, scope)"
    ");"
    "CREATE INDEX transitions_at ON transitions(at);";

static const char *const migrations[LEASE_SCHEMA_VERSION] = {
	schema_v1,
	schema_v2,
};

/* ------------------------------------------------------------------ */
/* Handle, messages, errors                                            */

void
lease__store_msg(struct lease_store *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->errmsg, sizeof s->errmsg, fmt, ap);
	va_end(ap);
}

static char *
dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *d;

	if (slash == NULL)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	d = strndup(path, (size_t)(slash - path));
	return d;
}

/* errno of a write probe on the directory holding the file, or 0. */
static int
dir_writable(const char *path)
{
	char *d = dir_of(path);
	int e = 0;

	if (d == NULL)
		return ENOMEM;
	if (access(d, W_OK) < 0)
		e = errno;
	free(d);
	return e;
}

int
lease__store_fail(struct lease_store *s, int src, const char *what)
{
	const char *m = s->db != NULL ? sqlite3_errmsg(s->db) :
	    sqlite3_errstr(src);
	int e;

	switch (src & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		lease__store_msg(s, "%s: %s: database is locked by another "
		    "process (waited %d ms)", s->path, what, s->busy_ms);
		return LEASE_ELOCKED;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		lease__store_msg(s, "%s: %s: database file is corrupt or not a "
		    "database (%s); the file was left untouched", s->path,
		    what, m);
		return LEASE_ECORRUPT;
	case SQLITE_READONLY:
		lease__store_msg(s, "%s: %s: database is read-only (%s)",
		    s->path, what, m);
		return LEASE_EREADONLY;
	case SQLITE_CANTOPEN:
		e = dir_writable(s->path);
		if (e == EROFS || e == EACCES || e == EPERM) {
			lease__store_msg(s, "%s: %s: state directory is "
			    "read-only (%s)", s->path, what, strerror(e));
			return LEASE_EREADONLY;
		}
		if (e == ENOENT) {
			lease__store_msg(s, "%s: %s: state directory does not "
			    "exist", s->path, what);
			return -ENOENT;
		}
		lease__store_msg(s, "%s: %s: cannot open database (%s)",
		    s->path, what, m);
		return LEASE_EDB;
	case SQLITE_FULL:
		lease__store_msg(s, "%s: %s: disk full (%s)", s->path, what,
		    m);
		return -ENOSPC;
	case SQLITE_IOERR:
		lease__store_msg(s, "%s: %s: I/O error (%s)", s->path, what,
		    m);
		return -EIO;
	case SQLITE_NOMEM:
		lease__store_msg(s, "%s: %s: out of memory", s->path, what);
		return -ENOMEM;
	default:
		lease__store_msg(s, "%s: %s: %s", s->path, what, m);
		return LEASE_EDB;
	}
}

int
lease__store_stmt(struct lease_store *s, const char *sql, sqlite3_stmt **out)
{
	struct lease__stmt *slot = NULL;
	int i, rc;

	assert(s->db != NULL);
	for (i = 0; i < LEASE__STMT_CACHE; i++) {
		if (s->stmts[i].sql == sql) {
			sqlite3_reset(s->stmts[i].st);
			sqlite3_clear_bindings(s->stmts[i].st);
			*out = s->stmts[i].st;
			return 0;
		}
		if (s->stmts[i].sql == NULL && slot == NULL)
			slot = &s->stmts[i];
	}
	assert(slot != NULL);	/* raise LEASE__STMT_CACHE */
	rc = sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT,
	    &slot->st, NULL);
	if (rc != SQLITE_OK) {
		slot->st = NULL;
		return lease__store_fail(s, rc, "prepare");
	}
	slot->sql = sql;
	*out = slot->st;
	return 0;
}

/* Run a statement with no result rows and reset it. */
int
lease__store_step_done(struct lease_store *s, sqlite3_stmt *st,
    const char *what)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return lease__store_fail(s, rc, what);
	return 0;
}

int
lease__store_exec(struct lease_store *s, const char *sql, const char *what)
{
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);

	if (rc != SQLITE_OK)
		return lease__store_fail(s, rc, what);
	return 0;
}

int
lease__store_begin(struct lease_store *s)
{
	return lease__store_exec(s, "BEGIN IMMEDIATE", "begin transaction");
}

int
lease__store_commit(struct lease_store *s)
{
	int rc = lease__store_exec(s, "COMMIT", "commit");

	if (rc < 0)
		lease__store_rollback(s);
	return rc;
}

void
lease__store_rollback(struct lease_store *s)
{
	if (!sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

char *
lease__col_text(sqlite3_stmt *st, int col, bool *oom)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	char *d;

	if (t == NULL)
		return NULL;
	d = strdup((const char *)t);
	if (d == NULL)
		*oom = true;
	return d;
}

/* One-value pragma or query returning an integer. */
static int
query_int(struct lease_store *s, const char *sql, const char *what,
    int64_t *v)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return lease__store_fail(s, rc, what);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return lease__store_fail(s, rc, what);
	return 0;
}

static int
query_text(struct lease_store *s, const char *sql, const char *what,
    char *buf, size_t len)
{
	sqlite3_stmt *st;
	const unsigned char *t;
	int rc;

	rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return lease__store_fail(s, rc, what);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		t = sqlite3_column_text(st, 0);
		snprintf(buf, len, "%s", t != NULL ? (const char *)t : "");
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return lease__store_fail(s, rc, what);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Open, check, migrate                                                */

static int
migrate(struct lease_store *s, int want)
{
	char sql[64];
	int64_t v;
	int rc, i;

	if ((rc = lease__store_begin(s)) < 0)
		return rc;
	/* Re-read under the write lock: another process may have won. */
	if ((rc = query_int(s, "PRAGMA user_version", "read schema version",
	    &v)) < 0)
		goto fail;
	if (v > LEASE_SCHEMA_VERSION) {
		lease__store_rollback(s);
		lease__store_msg(s, "%s: database schema version %lld is newer "
		    "than this corral's (%d)", s->path, (long long)v,
		    LEASE_SCHEMA_VERSION);
		return LEASE_ESCHEMA;
	}
	if (v == 0 && (rc = lease__store_exec(s,
	    "PRAGMA application_id = 1668248172", "set application id")) < 0)
		goto fail;
	for (i = (int)v; i < want; i++) {
		char what[32];

		snprintf(what, sizeof what, "migrate to version %d", i + 1);
		if ((rc = lease__store_exec(s, migrations[i], what)) < 0)
			goto fail;
	}
	if (v < want) {
		snprintf(sql, sizeof sql, "PRAGMA user_version = %d", want);
		if ((rc = lease__store_exec(s, sql, "set schema version")) < 0)
			goto fail;
	}
	if ((rc = lease__store_commit(s)) < 0)
		return rc;
	s->version = v > want ? (int)v : want;
	return 0;
fail:
	lease__store_rollback(s);
	return rc;
}

/* Read-only checks: a foreign, newer or damaged file stops here. */
static int
check_file(struct lease_store *s, bool existed)
{
	int64_t v, app, ntables;
	char ok[256];
	int rc;

	if ((rc = query_int(s, "PRAGMA user_version", "read schema version",
	    &v)) < 0)
		return rc;
	if ((rc = query_int(s, "PRAGMA application_id", "read application id",
	    &app)) < 0)
		return rc;
	if ((rc = query_int(s, "SELECT count(*) FROM sqlite_master",
	    "read schema", &ntables)) < 0)
		return rc;
	if (v == 0 && ntables > 0) {
		lease__store_msg(s, "%s: not a corral database (it has tables "
		    "but no corral schema); the file was left untouched",
		    s->path);
		return LEASE_ECORRUPT;
	}
	if (v > 0 && app != LEASE__APPLICATION_ID) {
		lease__store_msg(s, "%s: not a corral database (application "
		    "id %lld); the file was left untouched", s->path,
		    (long long)app);
		return LEASE_ECORRUPT;
	}
	if (v > LEASE_SCHEMA_VERSION) {
		lease__store_msg(s, "%s: database schema version %lld is newer "
		    "than this corral's (%d)", s->path, (long long)v,
		    LEASE_SCHEMA_VERSION);
		return LEASE_ESCHEMA;
	}
	if (existed) {
		if ((rc = query_text(s, "PRAGMA quick_check(1)",
		    "check database", ok, sizeof ok)) < 0)
			return rc;
		if (strcmp(ok, "ok") != 0) {
			lease__store_msg(s, "%s: database file is corrupt "
			    "(%s); the file was left untouched", s->path, ok);
			return LEASE_ECORRUPT;
		}
	}
	s->version = (int)v;
	return 0;
}

int
lease_store_open(struct lease_store **out, const char *path)
{
	return lease_store_open_ex(out, path, NULL);
}

int
lease_store_open_ex(struct lease_store **out, const char *path,
    const struct lease_store_opts *opts)
{
	struct lease_store *s;
	struct stat sb;
	bool existed;
	char mode[32];
	int rc, want, flags;

	assert(out != NULL);
	*out = NULL;
	if (path == NULL || *path == '\0')
		return -EINVAL;
	if ((s = calloc(1, sizeof *s)) == NULL)
		return -ENOMEM;
	if ((s->path = strdup(path)) == NULL) {
		free(s);
		return -ENOMEM;
	}
	*out = s;
	s->busy_ms = opts != NULL && opts->busy_ms > 0 ? opts->busy_ms :
	    LEASE_BUSY_MS;
	want = opts != NULL && opts->max_version > 0 ? opts->max_version :
	    LEASE_SCHEMA_VERSION;
	if (want > LEASE_SCHEMA_VERSION)
		return -EINVAL;

	existed = stat(path, &sb) == 0;
	if (existed && !S_ISREG(sb.st_mode)) {
		lease__store_msg(s, "%s: not a regular file", path);
		return LEASE_ECORRUPT;
	}
	if (!existed && errno != ENOENT) {
		rc = -errno;
		lease__store_msg(s, "%s: %s", path, strerror(errno));
		return rc;
	}
	if (!existed) {
		int e = dir_writable(path);

		if (e == EROFS || e == EACCES || e == EPERM) {
			lease__store_msg(s, "%s: state directory is read-only "
			    "(%s)", path, strerror(e));
			return LEASE_EREADONLY;
		}
	}
	/* Never O_CREAT an existing path: open what is there or fail. */
	flags = SQLITE_OPEN_READWRITE | (existed ? 0 : SQLITE_OPEN_CREATE);
	rc = sqlite3_open_v2(path, &s->db, flags, NULL);
	if (rc != SQLITE_OK) {
		rc = lease__store_fail(s, rc, "open");
		sqlite3_close(s->db);
		s->db = NULL;
		return rc;
	}
	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, s->busy_ms);
	if (sqlite3_db_readonly(s->db, "main") == 1) {
		lease__store_msg(s, "%s: database file is read-only", path);
		rc = LEASE_EREADONLY;
		goto fail;
	}
	if ((rc = check_file(s, existed && sb.st_size > 0)) < 0)
		goto fail;
	/*
	 * Ask first: a journal already in WAL mode needs no change, and
	 * asking for one takes a lock that a busy writer can hold past the
	 * busy timeout.
	 */
	if ((rc = query_text(s, "PRAGMA journal_mode", "read the journal "
	    "mode", mode, sizeof mode)) < 0)
		goto fail;
	if (strcmp(mode, "wal") != 0 &&
	    (rc = query_text(s, "PRAGMA journal_mode = WAL",
	    "set WAL mode", mode, sizeof mode)) < 0)
		goto fail;
	if (strcmp(mode, "wal") != 0) {
		lease__store_msg(s, "%s: cannot use WAL mode (journal mode "
		    "is %s)", path, mode);
		rc = LEASE_EDB;
		goto fail;
	}
	if ((rc = lease__store_exec(s, "PRAGMA synchronous = FULL; "
	    "PRAGMA foreign_keys = ON", "set pragmas")) < 0)
		goto fail;
	if (s->version < want && (rc = migrate(s, want)) < 0)
		goto fail;
	return 0;
fail:
	sqlite3_close(s->db);
	s->db = NULL;
	return rc;
}

void
lease_store_close(struct lease_store *s)
{
	int i;

	if (s == NULL)
		return;
	for (i = 0; i < LEASE__STMT_CACHE; i++)
		sqlite3_finalize(s->stmts[i].st);
	sqlite3_close(s->db);
	free(s->path);
	free(s);
}

const char *
lease_store_errmsg(const struct lease_store *s)
{
	return s != NULL ? s->errmsg : "out of memory";
}

const char *
lease_store_path(const struct lease_store *s)
{
	assert(s != NULL);
	return s->path;
}

int
lease_store_version(struct lease_store *s)
{
	assert(s != NULL);
	return s->version;
}

int
lease_store_set_busy_timeout(struct lease_store *s, int ms)
{
	assert(s != NULL && s->db != NULL);
	if (ms <= 0)
		return -EINVAL;
	s->busy_ms = ms;
	if (sqlite3_busy_timeout(s->db, ms) != SQLITE_OK)
		return lease__store_fail(s, SQLITE_ERROR, "busy timeout");
	return 0;
}

/* ------------------------------------------------------------------ */
/* Rows                                                                 */

#define LEASE_COLUMNS \
	"id, name, mode, adapter, isolation, lease_state, activity, unseen," \
	" failed_reason, cleanup, repo, base, base_ref, branch, worktree," \
	" workspace, sandbox_id, policy, limits, holder_pid, holder_start," \
	" created_at, updated_at, receipt_head, receipt_len, result, cmd"

static const char sql_get[] =
    "SELECT " LEASE_COLUMNS " FROM leases WHERE id = ?1";
static const char sql_list_all[] =
    "SELECT " LEASE_COLUMNS " FROM leases ORDER BY id";
static const char sql_list_live[] =
    "SELECT " LEASE_COLUMNS " FROM leases WHERE lease_state NOT IN"
    " ('applied','rejected','failed','cancelled')"
    " OR cleanup IN ('pending','failed') ORDER BY id";

void
lease_record_clear(struct lease_record *r)
{
	if (r == NULL)
		return;
	free(r->name);
	free(r->adapter);
	free(r->isolation);
	free(r->failed_reason);
	free(r->repo);
	free(r->base);
	free(r->base_ref);
	free(r->branch);
	free(r->worktree);
	free(r->workspace);
	free(r->sandbox_id);
	free(r->policy);
	free(r->limits);
	free(r->result);
	free(r->cmd);
	memset(r, 0, sizeof *r);
}

void
lease_records_free(struct lease_record *v, size_t n)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; i < n; i++)
		lease_record_clear(&v[i]);
	free(v);
}

static int
row_to_record(struct lease_store *s, sqlite3_stmt *st, struct lease_record *r)
{
	const char *t;
	bool oom = false;

	memset(r, 0, sizeof *r);
	t = (const char *)sqlite3_column_text(st, 0);
	snprintf(r->id, sizeof r->id, "%s", t != NULL ? t : "");
	r->name = lease__col_text(st, 1, &oom);
	if (lease_mode_parse((const char *)sqlite3_column_text(st, 2),
	    &r->mode) < 0 ||
	    lease_state_parse((const char *)sqlite3_column_text(st, 5),
	    &r->state) < 0 ||
	    lease_activity_parse((const char *)sqlite3_column_text(st, 6),
	    &r->activity) < 0 ||
	    lease_cleanup_parse((const char *)sqlite3_column_text(st, 9),
	    &r->cleanup) < 0) {
		lease_record_clear(r);
		lease__store_msg(s, "%s: lease row with an unknown state",
		    s->path);
		return LEASE_ECORRUPT;
	}
	r->adapter = lease__col_text(st, 3, &oom);
	r->isolation = lease__col_text(st, 4, &oom);
	r->unseen = sqlite3_column_int(st, 7) != 0;
	r->failed_reason = lease__col_text(st, 8, &oom);
	r->repo = lease__col_text(st, 10, &oom);
	r->base = lease__col_text(st, 11, &oom);
	r->base_ref = lease__col_text(st, 12, &oom);
	r->branch = lease__col_text(st, 13, &oom);
	r->worktree = lease__col_text(st, 14, &oom);
	r->workspace = lease__col_text(st, 15, &oom);
	r->sandbox_id = lease__col_text(st, 16, &oom);
	r->policy = lease__col_text(st, 17, &oom);
	r->limits = lease__col_text(st, 18, &oom);
	r->holder_pid = sqlite3_column_int64(st, 19);
	r->holder_start = sqlite3_column_int64(st, 20);
	r->created_at = sqlite3_column_int64(st, 21);
	r->updated_at = sqlite3_column_int64(st, 22);
	t = (const char *)sqlite3_column_text(st, 23);
	snprintf(r->receipt_head, sizeof r->receipt_head, "%s",
	    t != NULL ? t : "");
	r->receipt_len = sqlite3_column_int64(st, 24);
	r->result = lease__col_text(st, 25, &oom);
	r->cmd = lease__col_text(st, 26, &oom);
	if (oom) {
		lease_record_clear(r);
		return -ENOMEM;
	}
	return 0;
}

int
lease_store_get(struct lease_store *s, const char *id,
    struct lease_record *out)
{
	sqlite3_stmt *st;
	int rc;

	assert(s != NULL && s->db != NULL && out != NULL);
	memset(out, 0, sizeof *out);
	if (!lease_id_valid(id))
		return LEASE_EBADID;
	if ((rc = lease__store_stmt(s, sql_get, &st)) < 0)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		rc = row_to_record(s, st, out);
		sqlite3_reset(st);
		return rc;
	}
	sqlite3_reset(st);
	if (rc == SQLITE_DONE) {
		lease__store_msg(s, "no lease %s", id);
		return LEASE_ENOTFOUND;
	}
	return lease__store_fail(s, rc, "read lease");
}

int
lease_store_list(struct lease_store *s, unsigned flags,
    struct lease_record **out, size_t *n)
{
	struct lease_record *v = NULL, *nv;
	size_t len = 0, cap = 0;
	sqlite3_stmt *st;
	int rc;

	assert(s != NULL && s->db != NULL && out != NULL && n != NULL);
	*out = NULL;
	*n = 0;
	rc = lease__store_stmt(s, (flags & LEASE_LIST_ALL) ? sql_list_all :
	    sql_list_live, &st);
	if (rc < 0)
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == cap) {
			cap = cap ? cap * 2 : 16;
			if ((nv = realloc(v, cap * sizeof *v)) == NULL) {
				rc = -ENOMEM;
				goto fail;
			}
			v = nv;
		}
		if ((rc = row_to_record(s, st, &v[len])) < 0)
			goto fail;
		len++;
	}
	if (rc != SQLITE_DONE) {
		rc = lease__store_fail(s, rc, "list leases");
		goto fail;
	}
	sqlite3_reset(st);
	*out = v;
	*n = len;
	return 0;
fail:
	sqlite3_reset(st);
	lease_records_free(v, len);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Writes                                                               */

static const char sql_exists[] = "SELECT 1 FROM leases WHERE id = ?1";
static const char sql_log[] =
    "INSERT INTO transitions (lease_id, seq, at, kind, from_state,"
    " to_state, reason) VALUES (?1, (SELECT coalesce(max(seq), 0) + 1"
    " FROM transitions WHERE lease_id = ?1), ?2, ?3, ?4, ?5, ?6)";

int
lease__store_exists(struct lease_store *s, const char *id)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = lease__store_stmt(s, sql_exists, &st)) < 0)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	return lease__store_fail(s, rc, "read lease");
}

int
lease__store_log(struct lease_store *s, const char *id, int64_t at,
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

int
lease__store_begin_lease(struct lease_store *s, const char *id)
{
	int rc;

	if (!lease_id_valid(id))
		return LEASE_EBADID;
	if ((rc = lease__store_begin(s)) < 0)
		return rc;
	rc = lease__store_exists(s, id);
	if (rc == 1)
		return 0;
	lease__store_rollback(s);
	if (rc == 0) {
		lease__store_msg(s, "no lease %s", id);
		return LEASE_ENOTFOUND;
	}
	return rc;
}

static int
cmd_json(char *const *cmd, char **out)
{
	json_t *a;
	size_t i;

	*out = NULL;
	if (cmd == NULL)
		return 0;
	if ((a = json_array()) == NULL)
		return -ENOMEM;
	for (i = 0; cmd[i] != NULL; i++) {
		if (json_array_append_new(a, json_string(cmd[i])) < 0) {
			json_decref(a);
			return -EINVAL;	/* not UTF-8 */
		}
	}
	*out = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	return *out != NULL ? 0 : -ENOMEM;
}

static bool
is_json(const char *text)
{
	json_t *j;

	if (text == NULL)
		return true;
	j = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL);
	json_decref(j);
	return j != NULL;
}

static const char sql_id_claim[] =
    "INSERT OR IGNORE INTO ids (id, at) VALUES (?1, ?2)";
static const char sql_insert[] =
    "INSERT INTO leases (id, name, mode, adapter, isolation, lease_state,"
    " activity, unseen, cleanup, repo, policy, limits, cmd, created_at,"
    " updated_at) VALUES (?1, ?2, ?3, ?4, ?5, 'provisioning', 'starting',"
    " 0, 'none', ?6, ?7, ?8, ?9, ?10, ?10)";

int
lease_store_insert(struct lease_store *s, const struct lease_spec *spec,
    char id_out[LEASE_ID_LEN + 1])
{
	char id[LEASE_ID_LEN + 1];
	sqlite3_stmt *st;
	char *cmd = NULL;
	int64_t now;
	int rc, tries;

	assert(s != NULL && s->db != NULL && spec != NULL && id_out != NULL);
	if ((unsigned)spec->mode >= LEASE_MODE_COUNT ||
	    (spec->name != NULL && strlen(spec->name) > NAME_MAX_BYTES) ||
	    !is_json(spec->limits)) {
		lease__store_msg(s, "invalid lease request (mode, name over "
		    "%d bytes, or limits not JSON)", NAME_MAX_BYTES);
		return -EINVAL;
	}
	if ((rc = cmd_json(spec->cmd, &cmd)) < 0) {
		lease__store_msg(s, "invalid lease command");
		return rc;
	}
	if ((rc = lease__store_begin(s)) < 0)
		goto out;
	for (tries = 0;; tries++) {
		if (tries == ID_RETRIES) {
			lease__store_msg(s, "no free lease ID after %d tries",
			    tries);
			rc = LEASE_EDB;
			goto fail;
		}
		if ((rc = lease_id_new(id)) < 0) {
			lease__store_msg(s, "getrandom: %s", strerror(-rc));
			goto fail;
		}
		now = lease_now_ms();
		if ((rc = lease__store_stmt(s, sql_id_claim, &st)) < 0)
			goto fail;
		sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, now);
		if ((rc = lease__store_step_done(s, st, "claim lease ID")) < 0)
			goto fail;
		if (sqlite3_changes(s->db) == 1)
			break;
	}
	if ((rc = lease__store_stmt(s, sql_insert, &st)) < 0)
		goto fail;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, spec->name != NULL && *spec->name != '\0' ?
	    spec->name : id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, lease_mode_name(spec->mode), -1,
	    SQLITE_STATIC);
	sqlite3_bind_text(st, 4, spec->adapter != NULL ? spec->adapter :
	    (spec->mode == LEASE_MODE_TRUSTED_LOCAL ? "trusted_local" :
	    "bwrap"), -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 5, spec->isolation != NULL ? spec->isolation :
	    (spec->mode == LEASE_MODE_TRUSTED_LOCAL ? "trusted_local" :
	    "unknown"), -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 6, spec->repo, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 7, spec->policy, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 8, spec->limits, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 9, cmd, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 10, now);
	if ((rc = lease__store_step_done(s, st, "insert lease")) < 0)
		goto fail;
	if ((rc = lease__store_log(s, id, now, "lease", NULL, "provisioning",
	    "created")) < 0)
		goto fail;
	if ((rc = lease__store_commit(s)) < 0)
		goto out;
	memcpy(id_out, id, sizeof id);
	rc = 0;
	goto out;
fail:
	lease__store_rollback(s);
out:
	free(cmd);
	return rc;
}

static const char sql_state_of[] =
    "SELECT lease_state, cleanup FROM leases WHERE id = ?1";
static const char sql_set_state[] =
    "UPDATE leases SET lease_state = ?2, failed_reason = CASE WHEN ?3"
    " THEN ?4 ELSE failed_reason END, updated_at = ?5 WHERE id = ?1";
static const char sql_runtime_left[] =
    "SELECT count(*) FROM resources WHERE lease_id = ?1 AND state !="
    " 'removed' AND kind NOT IN ('branch','lease_dir')";
static const char sql_set_cleanup[] =
    "UPDATE leases SET cleanup = ?2, updated_at = ?3 WHERE id = ?1";

/* Inside a transaction: the lease's state and cleanup. */
static int
read_state(struct lease_store *s, const char *id, enum lease_state *state,
    enum lease_cleanup *cleanup)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = lease__store_stmt(s, sql_state_of, &st)) < 0)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		sqlite3_reset(st);
		return rc == SQLITE_DONE ? LEASE_ENOTFOUND :
		    lease__store_fail(s, rc, "read lease state");
	}
	rc = 0;
	if (lease_state_parse((const char *)sqlite3_column_text(st, 0),
	    state) < 0 ||
	    lease_cleanup_parse((const char *)sqlite3_column_text(st, 1),
	    cleanup) < 0) {
		lease__store_msg(s, "%s: lease %s has an unknown state",
		    s->path, id);
		rc = LEASE_ECORRUPT;
	}
	sqlite3_reset(st);
	return rc;
}

static int
runtime_left(struct lease_store *s, const char *id, int64_t *n)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = lease__store_stmt(s, sql_runtime_left, &st)) < 0)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*n = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return rc == SQLITE_ROW ? 0 : lease__store_fail(s, rc,
	    "count resources");
}

static int
write_cleanup(struct lease_store *s, const char *id, enum lease_cleanup from,
    enum lease_cleanup to, const char *reason, int64_t at)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = lease__store_stmt(s, sql_set_cleanup, &st)) < 0)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, lease_cleanup_name(to), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, at);
	if ((rc = lease__store_step_done(s, st, "set cleanup")) < 0)
		return rc;
	return lease__store_log(s, id, at, "cleanup",
	    lease_cleanup_name(from), lease_cleanup_name(to), reason);
}

int
lease__store_cleanup_eval(struct lease_store *s, const char *id, int64_t at)
{
	enum lease_state state;
	enum lease_cleanup cleanup;
	int64_t left = 0;
	int rc;

	if ((rc = read_state(s, id, &state, &cleanup)) < 0)
		return rc;
	if (!lease_state_final(state))
		return 0;
	if ((rc = runtime_left(s, id, &left)) < 0)
		return rc;
	if (left == 0 && (cleanup == LEASE_CLEANUP_PENDING ||
	    cleanup == LEASE_CLEANUP_FAILED))
		return write_cleanup(s, id, cleanup, LEASE_CLEANUP_CONFIRMED,
		    "runtime resources removed", at);
	if (left > 0 && cleanup != LEASE_CLEANUP_PENDING &&
	    cleanup != LEASE_CLEANUP_FAILED)
		return write_cleanup(s, id, cleanup, LEASE_CLEANUP_PENDING,
		    "runtime resources left", at);
	return 0;
}

int
lease_store_transition(struct lease_store *s, const char *id,
    enum lease_event ev, const char *reason, enum lease_state *next)
{
	enum lease_state cur, to;
	enum lease_cleanup cleanup;
	sqlite3_stmt *st;
	int64_t now = lease_now_ms();
	int rc;

	assert(s != NULL && s->db != NULL);
	if ((rc = lease__store_begin_lease(s, id)) < 0)
		return rc;
	if ((rc = read_state(s, id, &cur, &cleanup)) < 0)
		goto fail;
	if ((rc = lease_fsm_next(cur, ev, &to)) < 0) {
		lease__store_msg(s, "lease %s: %s is not allowed from %s", id,
		    lease_event_name(ev), lease_state_name(cur));
		goto fail;
	}
	if ((rc = lease__store_stmt(s, sql_set_state, &st)) < 0)
		goto fail;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, lease_state_name(to), -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 3, ev == LEASE_EV_FAIL);
	sqlite3_bind_text(st, 4, reason, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 5, now);
	if ((rc = lease__store_step_done(s, st, "set lease state")) < 0)
		goto fail;
	if ((rc = lease__store_log(s, id, now, "lease", lease_state_name(cur),
	    lease_state_name(to), reason)) < 0)
		goto fail;
	if (lease_state_final(to) &&
	    (rc = lease__store_cleanup_eval(s, id, now)) < 0)
		goto fail;
	if ((rc = lease__store_commit(s)) < 0)
		return rc;
	if (next != NULL)
		*next = to;
	return 0;
fail:
	lease__store_rollback(s);
	return rc;
}

static const char sql_activity_of[] =
    "SELECT activity FROM leases WHERE id = ?1";
static const char sql_set_activity[] =
    "UPDATE leases SET activity = ?2, unseen = CASE WHEN ?3 THEN 1 ELSE"
    " unseen END, updated_at = ?4 WHERE id = ?1";

int
lease_store_set_activity(struct lease_store *s, const char *id,
    enum lease_activity act, const char *signal)
{
	sqlite3_stmt *st;
	char cur[32] = "";
	int64_t now = lease_now_ms();
	const unsigned char *t;
	int rc;

	assert(s != NULL && s->db != NULL);
	if ((unsigned)act >= LEASE_ACT_COUNT)
		return -EINVAL;
	if ((rc = lease__store_begin_lease(s, id)) < 0)
		return rc;
	if ((rc = lease__store_stmt(s, sql_activity_of, &st)) < 0)
		goto fail;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		t = sqlite3_column_text(st, 0);
		snprintf(cur, sizeof cur, "%s", t != NULL ? (const char *)t :
		    "");
	}
	sqlite3_reset(st);
	if (rc != SQLITE_ROW) {
		rc = lease__store_fail(s, rc, "read activity");
		goto fail;
	}
	if (strcmp(cur, lease_activity_name(act)) == 0) {
		lease__store_rollback(s);
		return 0;
	}
	if ((rc = lease__store_stmt(s, sql_set_activity, &st)) < 0)
		goto fail;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, lease_activity_name(act), -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 3, act == LEASE_ACT_DONE ||
	    act == LEASE_ACT_FAILED);
	sqlite3_bind_int64(st, 4, now);
	if ((rc = lease__store_step_done(s, st, "set activity")) < 0)
		goto fail;
	if ((rc = lease__store_log(s, id, now, "activity", cur,
	    lease_activity_name(act), signal)) < 0)
		goto fail;
	return lease__store_commit(s);
fail:
	lease__store_rollback(s);
	return rc;
}

static const char sql_seen[] =
    "UPDATE leases SET unseen = 0 WHERE id = ?1";

int
lease_store_mark_seen(struct lease_store *s, const char *id)
{
	sqlite3_stmt *st;
	int rc;

	assert(s != NULL && s->db != NULL);
	if ((rc = lease__store_begin_lease(s, id)) < 0)
		return rc;
	if ((rc = lease__store_stmt(s, sql_seen, &st)) < 0) {
		lease__store_rollback(s);
		return rc;
	}
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	if ((rc = lease__store_step_done(s, st, "mark seen")) < 0) {
		lease__store_rollback(s);
		return rc;
	}
	return lease__store_commit(s);
}

int
lease_store_set_cleanup(struct lease_store *s, const char *id,
    enum lease_cleanup to, const char *reason)
{
	enum lease_state state;
	enum lease_cleanup cur;
	int rc;

	assert(s != NULL && s->db != NULL);
	if ((unsigned)to >= LEASE_CLEANUP_COUNT)
		return -EINVAL;
	if ((rc = lease__store_begin_lease(s, id)) < 0)
		return rc;
	if ((rc = read_state(s, id, &state, &cur)) < 0)
		goto fail;
	if (cur == to) {
		lease__store_rollback(s);
		return 0;
	}
	if ((rc = write_cleanup(s, id, cur, to, reason, lease_now_ms())) < 0)
		goto fail;
	return lease__store_commit(s);
fail:
	lease__store_rollback(s);
	return rc;
}

#define SET_TEXT(col) \
	"UPDATE leases SET " col " = ?2, updated_at = ?3 WHERE id = ?1"

static const char *const sql_set_text[LEASE_FIELD_COUNT] = {
	[LEASE_FIELD_NAME] = SET_TEXT("name"),
	[LEASE_FIELD_ADAPTER] = SET_TEXT("adapter"),
	[LEASE_FIELD_ISOLATION] = SET_TEXT("isolation"),
	[LEASE_FIELD_REPO] = SET_TEXT("repo"),
	[LEASE_FIELD_BASE] = SET_TEXT("base"),
	[LEASE_FIELD_BASE_REF] = SET_TEXT("base_ref"),
	[LEASE_FIELD_BRANCH] = SET_TEXT("branch"),
	[LEASE_FIELD_WORKTREE] = SET_TEXT("worktree"),
	[LEASE_FIELD_WORKSPACE] = SET_TEXT("workspace"),
	[LEASE_FIELD_SANDBOX_ID] = SET_TEXT("sandbox_id"),
	[LEASE_FIELD_POLICY] = SET_TEXT("policy"),
	[LEASE_FIELD_LIMITS] = SET_TEXT("limits"),
	[LEASE_FIELD_RESULT] = SET_TEXT("result"),
};

int
lease__store_set_text(struct lease_store *s, const char *id,
    enum lease_field f, const char *value, int64_t at)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = lease__store_stmt(s, sql_set_text[f], &st)) < 0)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, value, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, at);
	return lease__store_step_done(s, st, "set lease field");
}

int
lease_store_set_text(struct lease_store *s, const char *id,
    enum lease_field f, const char *value)
{
	int rc;

	assert(s != NULL && s->db != NULL);
	if ((unsigned)f >= LEASE_FIELD_COUNT)
		return -EINVAL;
	if ((f == LEASE_FIELD_NAME && (value == NULL ||
	    strlen(value) > NAME_MAX_BYTES)) ||
	    ((f == LEASE_FIELD_LIMITS || f == LEASE_FIELD_RESULT) &&
	    !is_json(value)) ||
	    ((f == LEASE_FIELD_ADAPTER || f == LEASE_FIELD_ISOLATION) &&
	    value == NULL)) {
		lease__store_msg(s, "invalid value for lease field %d", f);
		return -EINVAL;
	}
	if ((rc = lease__store_begin_lease(s, id)) < 0)
		return rc;
	if ((rc = lease__store_set_text(s, id, f, value, lease_now_ms())) < 0) {
		lease__store_rollback(s);
		return rc;
	}
	return lease__store_commit(s);
}

static const char sql_set_holder[] =
    "UPDATE leases SET holder_pid = ?2, holder_start = ?3, updated_at = ?4"
    " WHERE id = ?1";

int
lease_store_set_holder(struct lease_store *s, const char *id, pid_t pid,
    int64_t start)
{
	sqlite3_stmt *st;
	int rc;

	assert(s != NULL && s->db != NULL);
	if (pid < 0)
		return -EINVAL;
	if ((rc = lease__store_begin_lease(s, id)) < 0)
		return rc;
	if ((rc = lease__store_stmt(s, sql_set_holder, &st)) < 0)
		goto fail;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	if (pid > 0) {
		sqlite3_bind_int64(st, 2, pid);
		sqlite3_bind_int64(st, 3, start);
	}
	sqlite3_bind_int64(st, 4, lease_now_ms());
	if ((rc = lease__store_step_done(s, st, "set holder")) < 0)
		goto fail;
	return lease__store_commit(s);
fail:
	lease__store_rollback(s);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Resources                                                            */

static const char *const resource_names[LEASE_RES_COUNT] = {
	[LEASE_RES_BRANCH] = "branch",
	[LEASE_RES_WORKTREE] = "worktree",
	[LEASE_RES_LEASE_DIR] = "lease_dir",
	[LEASE_RES_WORKSPACE] = "workspace",
	[LEASE_RES_HOLDER] = "holder",
	[LEASE_RES_SOCKET] = "socket",
	[LEASE_RES_CGROUP] = "cgroup",
	[LEASE_RES_CREDENTIAL] = "credential",
	[LEASE_RES_SANDBOX] = "sandbox",
};

static const char *const res_state_names[LEASE_RS_COUNT] = {
	[LEASE_RS_PLANNED] = "planned",
	[LEASE_RS_CREATED] = "created",
	[LEASE_RS_REMOVED] = "removed",
};

const char *
lease_resource_name(enum lease_resource k)
{
	return (unsigned)k < LEASE_RES_COUNT ? resource_names[k] : "?";
}

int
lease_resource_parse(const char *name, enum lease_resource *out)
{
	int i;

	assert(out != NULL);
	for (i = 0; name != NULL && i < LEASE_RES_COUNT; i++) {
		if (strcmp(resource_names[i], name) == 0) {
			*out = (enum lease_resource)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *
lease_res_state_name(enum lease_res_state st)
{
	return (unsigned)st < LEASE_RS_COUNT ? res_state_names[st] : "?";
}

bool
lease_resource_runtime(enum lease_resource k)
{
	return k != LEASE_RES_BRANCH && k != LEASE_RES_LEASE_DIR;
}

static const char sql_res_state[] =
    "SELECT state FROM resources WHERE lease_id = ?1 AND kind = ?2 AND"
    " identity = ?3";
static const char sql_res_insert[] =
    "INSERT INTO resources (lease_id, kind, identity, scope, state, at)"
    " VALUES (?1, ?2, ?3, ?4, 'planned', ?5)";
static const char sql_res_update[] =
    "UPDATE resources SET state = ?4, at = ?5 WHERE lease_id = ?1 AND"
    " kind = ?2 AND identity = ?3";

/* Inside a transaction: current state, or -1 when there is no row. */
static int
res_state(struct lease_store *s, const char *id, enum lease_resource k,
    const char *identity, int *state)
{
	sqlite3_stmt *st;
	const char *t;
	int rc, i;

	if ((rc = lease__store_stmt(s, sql_res_state, &st)) < 0)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, resource_names[k], -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, identity, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	*state = -1;
	if (rc == SQLITE_ROW) {
		t = (const char *)sqlite3_column_text(st, 0);
		for (i = 0; t != NULL && i < LEASE_RS_COUNT; i++)
			if (strcmp(t, res_state_names[i]) == 0)
				*state = i;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return lease__store_fail(s, rc, "read resource");
	return 0;
}

static int
res_update(struct lease_store *s, const char *id, enum lease_resource k,
    const char *identity, enum lease_res_state to, int64_t at)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = lease__store_stmt(s, sql_res_update, &st)) < 0)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, resource_names[k], -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, identity, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, res_state_names[to], -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, at);
	return lease__store_step_done(s, st, "update resource");
}

/* The lease column mirroring a resource's identity, or -1. */
static int
res_field(enum lease_resource k)
{
	switch (k) {
	case LEASE_RES_BRANCH:
		return LEASE_FIELD_BRANCH;
	case LEASE_RES_WORKTREE:
		return LEASE_FIELD_WORKTREE;
	case LEASE_RES_WORKSPACE:
		return LEASE_FIELD_WORKSPACE;
	case LEASE_RES_SANDBOX:
		return LEASE_FIELD_SANDBOX_ID;
	default:
		return -1;
	}
}

int
lease_store_resource_plan(struct lease_store *s, const char *id,
    enum lease_resource k, const char *identity, const char *scope)
{
	sqlite3_stmt *st;
	int64_t now = lease_now_ms();
	int rc, cur, f;

	assert(s != NULL && s->db != NULL);
	if ((unsigned)k >= LEASE_RES_COUNT || identity == NULL ||
	    *identity == '\0')
		return -EINVAL;
	if ((rc = lease__store_begin_lease(s, id)) < 0)
		return rc;
	if ((rc = res_state(s, id, k, identity, &cur)) < 0)
		goto fail;
	if (cur == LEASE_RS_REMOVED) {
		lease__store_msg(s, "lease %s: %s %s was already removed", id,
		    resource_names[k], identity);
		rc = LEASE_EEXIST;
		goto fail;
	}
	if (cur >= 0) {
		lease__store_rollback(s);
		return 0;
	}
	if ((rc = lease__store_stmt(s, sql_res_insert, &st)) < 0)
		goto fail;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, resource_names[k], -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, identity, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, scope, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 5, now);
	if ((rc = lease__store_step_done(s, st, "record resource")) < 0)
		goto fail;
	if ((f = res_field(k)) >= 0 &&
	    (rc = lease__store_set_text(s, id, (enum lease_field)f,
	    identity, now)) < 0)
		goto fail;
	return lease__store_commit(s);
fail:
	lease__store_rollback(s);
	return rc;
}

static int
res_move(struct lease_store *s, const char *id, enum lease_resource k,
    const char *identity, enum lease_res_state to)
{
	int64_t now = lease_now_ms();
	int rc, cur;

	assert(s != NULL && s->db != NULL);
	if ((unsigned)k >= LEASE_RES_COUNT || identity == NULL)
		return -EINVAL;
	if ((rc = lease__store_begin_lease(s, id)) < 0)
		return rc;
	if ((rc = res_state(s, id, k, identity, &cur)) < 0)
		goto fail;
	if (cur < 0) {
		lease__store_msg(s, "lease %s: %s %s was never recorded", id,
		    resource_names[k], identity);
		rc = LEASE_ENOTFOUND;
		goto fail;
	}
	if (cur == (int)to) {
		lease__store_rollback(s);
		return 0;
	}
	if (cur == LEASE_RS_REMOVED) {
		lease__store_msg(s, "lease %s: %s %s was already removed", id,
		    resource_names[k], identity);
		rc = LEASE_EEXIST;
		goto fail;
	}
	if ((rc = res_update(s, id, k, identity, to, now)) < 0)
		goto fail;
	if (to == LEASE_RS_REMOVED &&
	    (rc = lease__store_cleanup_eval(s, id, now)) < 0)
		goto fail;
	return lease__store_commit(s);
fail:
	lease__store_rollback(s);
	return rc;
}

int
lease_store_resource_created(struct lease_store *s, const char *id,
    enum lease_resource k, const char *identity)
{
	return res_move(s, id, k, identity, LEASE_RS_CREATED);
}

int
lease_store_resource_removed(struct lease_store *s, const char *id,
    enum lease_resource k, const char *identity)
{
	return res_move(s, id, k, identity, LEASE_RS_REMOVED);
}

static const char sql_resources[] =
    "SELECT kind, state, identity, scope, at FROM resources WHERE"
    " lease_id = ?1 ORDER BY rowid";

void
lease_resources_free(struct lease_resource_row *v, size_t n)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; i < n; i++) {
		free(v[i].identity);
		free(v[i].scope);
	}
	free(v);
}

int
lease_store_resources(struct lease_store *s, const char *id,
    struct lease_resource_row **out, size_t *n)
{
	struct lease_resource_row *v = NULL, *nv, *r;
	size_t len = 0, cap = 0;
	sqlite3_stmt *st;
	bool oom = false;
	const char *t;
	int rc, i;

	assert(s != NULL && s->db != NULL && out != NULL && n != NULL);
	*out = NULL;
	*n = 0;
	if (!lease_id_valid(id))
		return LEASE_EBADID;
	if ((rc = lease__store_stmt(s, sql_resources, &st)) < 0)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == cap) {
			cap = cap ? cap * 2 : 8;
			if ((nv = realloc(v, cap * sizeof *v)) == NULL) {
				rc = -ENOMEM;
				goto fail;
			}
			v = nv;
		}
		r = &v[len++];
		memset(r, 0, sizeof *r);
		if (lease_resource_parse((const char *)sqlite3_column_text(st,
		    0), &r->kind) < 0)
			r->kind = LEASE_RES_COUNT;
		t = (const char *)sqlite3_column_text(st, 1);
		r->state = LEASE_RS_COUNT;
		for (i = 0; t != NULL && i < LEASE_RS_COUNT; i++)
			if (strcmp(t, res_state_names[i]) == 0)
				r->state = (enum lease_res_state)i;
		r->identity = lease__col_text(st, 2, &oom);
		r->scope = lease__col_text(st, 3, &oom);
		r->at = sqlite3_column_int64(st, 4);
		if (oom) {
			rc = -ENOMEM;
			goto fail;
		}
		if (r->kind == LEASE_RES_COUNT || r->state == LEASE_RS_COUNT) {
			lease__store_msg(s, "%s: lease %s has an unknown "
			    "resource row", s->path, id);
			rc = LEASE_ECORRUPT;
			goto fail;
		}
	}
	if (rc != SQLITE_DONE) {
		rc = lease__store_fail(s, rc, "list resources");
		goto fail;
	}
	sqlite3_reset(st);
	*out = v;
	*n = len;
	return 0;
fail:
	sqlite3_reset(st);
	lease_resources_free(v, len);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Events and deletion                                                  */

static const char sql_events_all[] =
    "SELECT n, lease_id, seq, at, kind, from_state, to_state, reason FROM"
    " transitions WHERE at >= ?1 AND n > ?2 ORDER BY n";
static const char sql_events_one[] =
    "SELECT n, lease_id, seq, at, kind, from_state, to_state, reason FROM"
    " transitions WHERE at >= ?1 AND n > ?2 AND lease_id = ?3 ORDER BY n";

int
lease_store_events(struct lease_store *s, const char *id, int64_t since_ms,
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

static const char sql_delete[] = "DELETE FROM leases WHERE id = ?1";

int
lease_store_delete(struct lease_store *s, const char *id)
{
	enum lease_state state;
	enum lease_cleanup cleanup;
	sqlite3_stmt *st;
	int rc;

	assert(s != NULL && s->db != NULL);
	if ((rc = lease__store_begin_lease(s, id)) < 0)
		return rc;
	if ((rc = read_state(s, id, &state, &cleanup)) < 0)
		goto fail;
	if (!lease_state_final(state)) {
		lease__store_msg(s, "lease %s is %s: cancel or finish it first",
		    id, lease_state_name(state));
		rc = LEASE_EBUSY;
		goto fail;
	}
	if ((rc = lease__store_stmt(s, sql_delete, &st)) < 0)
		goto fail;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	if ((rc = lease__store_step_done(s, st, "delete lease")) < 0)
		goto fail;
	return lease__store_commit(s);
fail:
	lease__store_rollback(s);
	return rc;
}
