/*
 * store.c: the journal's handle (SPEC 9.1): one SQLite file in WAL mode
 * with a busy timeout, schema migrations by PRAGMA user_version, the
 * prepared-statement cache, error mapping and IMMEDIATE transactions.
 * Never recreates or overwrites a file it cannot read: it names the file
 * and stops. The tables' rows are record.c, resource.c and event.c.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lease/lease_int.h"

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

/* Version 3: intents on the operator's repository (SPEC 9.2), journaled
 * before the change they announce and closed after it (intent.c). */
static const char schema_v3[] =
    "CREATE TABLE intents ("
    " lease_id TEXT NOT NULL REFERENCES leases(id) ON DELETE CASCADE,"
    " seq INTEGER NOT NULL,"
    " op TEXT NOT NULL CHECK (op IN ('apply')),"
    " repo TEXT NOT NULL,"
    " ref TEXT NOT NULL,"
    " old TEXT NOT NULL,"
    " new TEXT NOT NULL,"
    " how TEXT NOT NULL,"
    " state TEXT NOT NULL CHECK (state IN ('open','done','undone')),"
    " at INTEGER NOT NULL,"
    " closed_at INTEGER,"
    " PRIMARY KEY (lease_id, seq)"
    ");"
    "CREATE INDEX intents_open ON intents(state) WHERE state = 'open';";

/* Version 4: the preflight's own host resources (probe.c), journaled
 * before they exist and deleted once gone (SPEC 9.2). */
static const char schema_v4[] =
    "CREATE TABLE probes ("
    " run TEXT NOT NULL,"
    " kind TEXT NOT NULL,"
    " identity TEXT NOT NULL,"
    " state TEXT NOT NULL CHECK (state IN ('planned','created')),"
    " at INTEGER NOT NULL,"
    " PRIMARY KEY (run, kind, identity)"
    ");";

/* Version 5: a lease's model usage on its row (SPEC 8.5), moved with each
 * model_request receipt (lease_receipt_append_usage). */
static const char schema_v5[] =
    "ALTER TABLE leases ADD COLUMN usage_requests INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE leases ADD COLUMN usage_input INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE leases ADD COLUMN usage_output INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE leases ADD COLUMN usage_cache_write INTEGER NOT NULL"
    " DEFAULT 0;"
    "ALTER TABLE leases ADD COLUMN usage_cache_read INTEGER NOT NULL"
    " DEFAULT 0;"
    "ALTER TABLE leases ADD COLUMN usage_cost_nano INTEGER NOT NULL"
    " DEFAULT 0;"
    "ALTER TABLE leases ADD COLUMN usage_cost_unknown INTEGER NOT NULL"
    " DEFAULT 0;";

static const char *const migrations[LEASE_SCHEMA_VERSION] = {
	schema_v1,
	schema_v2,
	schema_v3,
	schema_v4,
	schema_v5,
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

/*
 * The turn: SQLite's write lock is not fair. A writer that commits short
 * transactions back to back (a holder recording a flood) takes it again
 * microseconds after each commit, and a one-shot command polling for it
 * can miss every gap for seconds on a loaded machine. So a handle that
 * waits holds a shared flock on <path>-turn (a file of its own: a
 * descriptor of the database file itself, once closed, would drop the
 * POSIX locks SQLite holds on it), and a handle that has just committed,
 * finding the turn taken, stands aside up to TURN_YIELD_MS before it
 * goes on. Best effort: without the file, no turn.
 */
#define TURN_YIELD_MS	20

static int
turn_fd(struct lease_store *s)
{
	char p[4200];

	if (s->turn_fd >= 0 || s->path == NULL)
		return s->turn_fd;
	if ((size_t)snprintf(p, sizeof p, "%s-turn", s->path) >= sizeof p)
		return -1;
	s->turn_fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	return s->turn_fd;
}

/* This handle waits for the write lock: others should let it in. */
static void
turn_wait(struct lease_store *s)
{
	int fd;

	if (!s->turn_held && (fd = turn_fd(s)) >= 0 &&
	    flock(fd, LOCK_SH | LOCK_NB) == 0)
		s->turn_held = true;
}

static void
turn_leave(struct lease_store *s)
{
	if (s->turn_held) {
		(void)flock(s->turn_fd, LOCK_UN);
		s->turn_held = false;
	}
}

/* Just committed: while another handle waits, up to TURN_YIELD_MS. */
static void
turn_yield(struct lease_store *s)
{
	struct timespec ts = { 0, 1000000L };
	int fd = turn_fd(s);

	if (fd < 0)
		return;
	for (int i = 0; i < TURN_YIELD_MS; i++) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			(void)flock(fd, LOCK_UN);
			return;
		}
		if (errno != EWOULDBLOCK)
			return;
		nanosleep(&ts, NULL);
	}
}

int
lease__store_exec(struct lease_store *s, const char *sql, const char *what)
{
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);

	turn_leave(s);	/* it has what it waited for, or gave up */
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
	else
		turn_yield(s);
	return rc;
}

void
lease__store_rollback(struct lease_store *s)
{
	if (!sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

char *
lease__store_col_text(sqlite3_stmt *st, int col, bool *oom)
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

/*
 * Waiting for the write lock. SQLite's own busy timeout sleeps ever
 * longer, up to 100 ms a try; a writer that commits many short
 * transactions back to back (a holder recording a flood) then holds the
 * lock at nearly every try, and a one-shot command gave up after 55 of
 * them. Short tries at a random interval of 1-8 ms, until busy_ms have
 * passed, find the gaps between such transactions.
 */
static int
busy_wait(void *ud, int count)
{
	struct lease_store *s = ud;
	uint64_t now = lease_mono_ms(), left;
	struct timespec ts;
	unsigned ms;

	if (count == 0)
		s->busy_since = now;
	if (now - s->busy_since >= (uint64_t)s->busy_ms) {
		turn_leave(s);
		return 0;
	}
	turn_wait(s);
	left = (uint64_t)s->busy_ms - (now - s->busy_since);
	ms = 1 + (unsigned)rand_r(&s->busy_seed) % 8;
	if (ms > left)
		ms = (unsigned)left;
	ts.tv_sec = 0;
	ts.tv_nsec = (long)ms * 1000000L;
	nanosleep(&ts, NULL);
	return 1;
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
	s->turn_fd = -1;
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
	s->busy_seed = (unsigned)getpid() ^ (unsigned)lease_mono_ms();
	sqlite3_busy_handler(s->db, busy_wait, s);
	if (sqlite3_db_readonly(s->db, "main") == 1) {
		lease__store_msg(s, "%s: database file is read-only", path);
		rc = LEASE_EREADONLY;
		goto fail;
	}
	if (opts != NULL && opts->cache_kib > 0) {
		char sql[64];

		/* Before the check, which reads every page of the file. */
		snprintf(sql, sizeof sql, "PRAGMA cache_size = -%d",
		    opts->cache_kib);
		if ((rc = lease__store_exec(s, sql, "set the cache size")) < 0)
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

int
lease_store_config_lean(void)
{
	/* No memory given and no lines: no bulk allocation per cache. */
	return sqlite3_config(SQLITE_CONFIG_PAGECACHE, NULL, 0, 0) ==
	    SQLITE_OK ? 0 : LEASE_EDB;
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
	if (s->turn_fd >= 0)
		close(s->turn_fd);
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
	s->busy_ms = ms;	/* busy_wait reads it */
	return 0;
}

/* ------------------------------------------------------------------ */
/* Transactions on one lease                                            */

static const char sql_exists[] = "SELECT 1 FROM leases WHERE id = ?1";

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
