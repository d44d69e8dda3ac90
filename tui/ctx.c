/*
 * ctx.c: what every command shares: the state directory (SPEC 11), the
 * journal handle, lease lookup by ID or name, error and usage messages,
 * and escaped printing of untrusted text (SPEC 4.7).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "lease/lease.h"
#include "pty/pty.h"
#include "tui/tui.h"

static char *
state_dir_default(void)
{
	const char *s = getenv("CORRAL_STATE_DIR"), *home;
	char *p = NULL;

	if (s != NULL && *s != '\0')
		return strdup(s);
	if ((s = getenv("XDG_STATE_HOME")) != NULL && *s == '/') {
		if (asprintf(&p, "%s/corral", s) < 0)
			return NULL;
		return p;
	}
	home = getenv("HOME");
	if (home == NULL || *home == '\0')
		home = "/";
	if (asprintf(&p, "%s/.local/state/corral", home) < 0)
		return NULL;
	return p;
}

int
tui_ctx_init(struct tui_ctx *c, const char *argv0)
{
	char buf[PATH_MAX];
	ssize_t n;

	memset(c, 0, sizeof *c);
	c->argv0 = argv0;
	n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	if (n > 0) {
		buf[n] = '\0';
		c->self = strdup(buf);
	} else {
		c->self = strdup(argv0);
	}
	c->state_dir = state_dir_default();
	if (c->self == NULL || c->state_dir == NULL)
		return -ENOMEM;
	return 0;
}

const char *
tui_ctx_scope(struct tui_ctx *c)
{
	if (c->scope == NULL && (c->scope = realpath(c->state_dir,
	    NULL)) == NULL && c->state_dir[0] == '/')
		c->scope = strdup(c->state_dir);
	return c->scope;
}

void
tui_ctx_free(struct tui_ctx *c)
{
	lease_store_close(c->store);
	free(c->self);
	free(c->state_dir);
	free(c->scope);
	memset(c, 0, sizeof *c);
}

/* mkdir -p with mode 0700 for the directories we create. */
static int
mkdirs(const char *path)
{
	char *p = strdup(path), *s;
	int rc = 0;

	if (p == NULL)
		return -ENOMEM;
	for (s = p + 1; rc == 0; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			rc = -errno;
		*s = c;
		if (c == '\0')
			break;
	}
	free(p);
	return rc;
}

struct lease_store *
tui_ctx_store(struct tui_ctx *c)
{
	char *db;
	int rc;

	if (c->store != NULL)
		return c->store;
	if ((rc = mkdirs(c->state_dir)) < 0) {
		tui_ctx_err(c, "state directory %s: %s", c->state_dir,
		    strerror(-rc));
		return NULL;
	}
	if ((db = lease_path_db(c->state_dir)) == NULL) {
		tui_ctx_err(c, "out of memory");
		return NULL;
	}
	rc = lease_store_open_ex(&c->store, db, &(struct lease_store_opts){
	    .cache_kib = c->store_cache_kib });
	free(db);
	if (rc < 0) {
		tui_ctx_err(c, "%s", c->store ? lease_store_errmsg(c->store) :
					    lease_strerror(rc));
		lease_store_close(c->store);
		c->store = NULL;
	}
	return c->store;
}

static void
vmsg(struct tui_ctx *c, const char *fmt, va_list ap)
{
	fprintf(stderr, "corral%s%s: ", c->cmd ? " " : "", c->cmd ? c->cmd :
								   "");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int
tui_ctx_err(struct tui_ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(c, fmt, ap);
	va_end(ap);
	return TUI_EXIT_FAIL;
}

int
tui_ctx_usage(struct tui_ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(c, fmt, ap);
	va_end(ap);
	fprintf(stderr, "try 'corral %s%s--help'\n", c->cmd ? c->cmd : "",
	    c->cmd ? " " : "");
	return TUI_EXIT_USAGE;
}

void
tui_ctx_print_json(json_t *j)
{
	if (j == NULL)
		return;
	json_dumpf(j, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII);
	fputc('\n', stdout);
	json_decref(j);
}

char *
tui_ctx_lease_dir(const struct tui_ctx *c, const char *id)
{
	return lease_path_lease_dir(c->state_dir, id);
}

char *
tui_ctx_holder_sock(const struct tui_ctx *c, const char *id)
{
	char *d = tui_ctx_lease_dir(c, id), *p = NULL;

	if (d != NULL && asprintf(&p, "%s/holder.sock", d) < 0)
		p = NULL;
	free(d);
	return p;
}

int
tui_ctx_find_lease(struct tui_ctx *c, const char *idname,
    struct lease_record *rec)
{
	struct lease_store *st = tui_ctx_store(c);
	struct lease_record *v = NULL;
	size_t n = 0, hits = 0, hit = 0, live = 0, live_hit = 0;
	int rc;

	memset(rec, 0, sizeof *rec);
	if (st == NULL)
		return TUI_EXIT_FAIL;
	if (lease_id_valid(idname)) {
		rc = lease_record_get(st, idname, rec);
		if (rc == 0)
			return 0;
		if (rc != LEASE_ENOTFOUND)
			return tui_ctx_err(c, "%s", lease_store_errmsg(st));
	}
	/* Not an ID: a lease name, the live one if several have it. */
	if ((rc = lease_record_list(st, LEASE_LIST_ALL, &v, &n)) < 0)
		return tui_ctx_err(c, "%s", lease_store_errmsg(st));
	for (size_t i = 0; i < n; i++) {
		if (v[i].name != NULL && strcmp(v[i].name, idname) == 0) {
			hits++;
			hit = i;
			if (!lease_fsm_state_final(v[i].state)) {
				live++;
				live_hit = i;
			}
		}
	}
	if (hits > 1 && live == 1) {
		hits = 1;
		hit = live_hit;
	}
	if (hits == 1) {
		*rec = v[hit];
		memset(&v[hit], 0, sizeof v[hit]);
		lease_record_list_free(v, n);
		return 0;
	}
	fprintf(stderr, "corral %s: ", c->cmd ? c->cmd : "");
	if (hits == 0)
		fprintf(stderr, "no lease with ID or name '");
	else
		fprintf(stderr, "%zu leases are named '", hits);
	tui_ctx_put_escaped(stderr, idname, strlen(idname));
	fprintf(stderr, "'%s\n", hits ? "; use one of their IDs:" : "");
	for (size_t i = 0, shown = 0; hits > 0 && i < n; i++) {
		if (v[i].name == NULL || strcmp(v[i].name, idname) != 0)
			continue;
		if (shown++ == 20) {
			fprintf(stderr, "  ... and %zu more (corral ls --all)\n",
			    hits - 20);
			break;
		}
		fprintf(stderr, "  %s  %s%s%s\n", v[i].id,
		    lease_fsm_state_name(v[i].state), v[i].failed_reason ?
		    " " : "", v[i].failed_reason ? v[i].failed_reason : "");
	}
	lease_record_list_free(v, n);
	return TUI_EXIT_FAIL;
}

void
tui_ctx_name_notice(const struct tui_ctx *c, const char *asked,
    const char *got)
{
	if (asked == NULL || got == NULL || strcmp(asked, got) == 0)
		return;
	fprintf(stderr, "corral %s: a live lease is named '", c->cmd ?
	    c->cmd : "new");
	tui_ctx_put_escaped(stderr, asked, strlen(asked));
	fprintf(stderr, "': this one is '");
	tui_ctx_put_escaped(stderr, got, strlen(got));
	fprintf(stderr, "'\n");
}

void
tui_ctx_put_escaped(FILE *f, const char *s, size_t len)
{
	size_t need;
	char *buf;

	if (s == NULL)
		return;
	need = tui_escape_size(s, len, 0) + 1;
	if ((buf = malloc(need)) == NULL)
		return;
	tui_escape(s, len, buf, need);
	fputs(buf, f);
	free(buf);
}

struct pty_rules *
tui_ctx_rules_load(struct tui_ctx *c, void (*err)(const char *, int,
    const char *, void *), void *ud)
{
	char user[4096], *shipped = tui_ctx_data_path(c, "agents");
	const char *dirs[2];
	struct pty_rules *r = NULL;
	size_t n = 0;

	/* Shipped rules first, then the operator's (same name overrides). */
	if (pty_rules_new(&r) < 0) {
		free(shipped);
		return NULL;
	}
	if (shipped != NULL)
		dirs[n++] = shipped;
	if (pty_rules_user_dir(user, sizeof user) == 0)
		dirs[n++] = user;
	if (pty_rules_load_dirs(r, dirs, n, err, ud) < 0) {
		pty_rules_free(r);
		r = NULL;
	}
	free(shipped);
	return r;
}

/* A file corral ships (agents/, demo/, tests/adversarial/). */
char *
tui_ctx_data_path(const struct tui_ctx *c, const char *rel)
{
	const char *env = getenv("CORRAL_DATA_DIR");
	char *cands[3] = { NULL, NULL, NULL }, *dir, *found = NULL;
	struct stat sb;

	/* $CORRAL_DATA_DIR, the install tree, then the source tree. */
	if (env != NULL && *env != '\0' &&
	    asprintf(&cands[0], "%s/%s", env, rel) < 0)
		cands[0] = NULL;
	if ((dir = strdup(c->self)) != NULL) {
		char *s = strrchr(dir, '/');
		if (s != NULL) {
			*s = '\0';
			if (asprintf(&cands[1], "%s/../share/corral/%s", dir,
			    rel) < 0)
				cands[1] = NULL;
		}
		free(dir);
	}
	if (asprintf(&cands[2], "%s/%s", CORRAL_SOURCE_DIR, rel) < 0)
		cands[2] = NULL;
	for (int i = 0; i < 3; i++) {
		if (found == NULL && cands[i] != NULL &&
		    stat(cands[i], &sb) == 0)
			found = cands[i];
		else
			free(cands[i]);
	}
	return found;
}

bool
tui_ctx_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return false;
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return true;
	}
	return false;
}
