/*
 * fleet.c: the operator's fleet file and placement (issue 23, SPEC 8.1
 * "SSH hosts"). fleet.ini names hosts reached with the real OpenSSH
 * client, each with a capacity in live leases and labels. A probe runs
 * `corral fleet probe` on the host over ssh: its corral version, its
 * sandbox preflight (`corral doctor`) and its live leases. A lease goes to
 * the least loaded host that answers, runs the same corral, passes its
 * preflight and has room; a host that is down is reported, never fatal to
 * the others.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sandbox-adapters/sbx.h"
#include "tui/runtime/fleet.h"
#include "tui/runtime/runtime_int.h"
#include "tui/tui.h"

#define FLEET_FILE_MAX (256u * 1024u)
#define FLEET_PROBE_OUT_MAX (4u * 1024u * 1024u)
#define FLEET_PROBE_SLACK_MS 120000u	/* the host's preflight, loaded */

#define NAME_CHARS "abcdefghijklmnopqrstuvwxyz0123456789-_."

struct fparse {
	struct tui_fleet *f;
	struct tui_fleet_error *err;
	int line;
	int section;		/* 0 none, 1 [fleet], 2 [host] */
	struct tui_fleet_host *host;
	unsigned seen;		/* keys of the current section */
};

static int
bad(struct fparse *ps, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
bad(struct fparse *ps, const char *field, const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(ps->err->msg, sizeof ps->err->msg, "%.150s:%d: %s: %s",
	    ps->f->file, ps->line, field, msg);
	return -EINVAL;
}

static bool
is_name(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n < TUI_FLEET_NAME_MAX && strspn(s, NAME_CHARS) == n &&
	    s[0] != '-' && s[0] != '.';
}

/* Printable ASCII without blanks: a destination or a path for argv. */
static bool
is_word(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++)
		if (*s <= ' ' || *s > '~')
			return false;
	return true;
}

static int
parse_uint(const char *v, unsigned lo, unsigned hi, unsigned *out)
{
	char *e;
	long n;

	errno = 0;
	n = strtol(v, &e, 10);
	if (errno != 0 || e == v || *e != '\0' || n < (long)lo ||
	    n > (long)hi)
		return -EINVAL;
	*out = (unsigned)n;
	return 0;
}

static int
once(struct fparse *ps, const char *key, unsigned bit)
{
	if (ps->seen & bit)
		return bad(ps, key, "set twice in this section");
	ps->seen |= bit;
	return 0;
}

static int
labels(struct fparse *ps, const char *v)
{
	struct tui_fleet_host *h = ps->host;

	while (*v != '\0') {
		size_t n = strcspn(v, ", \t");
		char w[TUI_FLEET_NAME_MAX];

		if (n == 0) {
			v++;
			continue;
		}
		if (n >= sizeof w)
			return bad(ps, "labels", "a label is at most %d bytes",
			    TUI_FLEET_NAME_MAX - 1);
		memcpy(w, v, n);
		w[n] = '\0';
		if (!is_name(w))
			return bad(ps, "labels", "a label is lower-case "
			    "letters, digits, '-', '_' and '.'");
		if (h->nlabels == TUI_FLEET_LABELS_MAX)
			return bad(ps, "labels", "at most %d labels a host",
			    TUI_FLEET_LABELS_MAX);
		memcpy(h->labels[h->nlabels++], w, n + 1);
		v += n;
	}
	return 0;
}

static int
key_value(struct fparse *ps, const char *k, const char *v)
{
	struct tui_fleet_host *h = ps->host;

	if (ps->section == 1) {
		if (strcmp(k, "ssh_config") == 0) {
			if (once(ps, k, 1) < 0)
				return -EINVAL;
			if (v[0] != '/' || !is_word(v) ||
			    strlen(v) >= sizeof ps->f->ssh_config)
				return bad(ps, k, "want an absolute path");
			snprintf(ps->f->ssh_config, sizeof ps->f->ssh_config,
			    "%s", v);
			return 0;
		}
		if (strcmp(k, "connect_timeout") == 0) {
			if (once(ps, k, 2) < 0)
				return -EINVAL;
			if (parse_uint(v, 1, 300, &ps->f->connect_timeout) < 0)
				return bad(ps, k, "want 1..300 seconds");
			return 0;
		}
		return bad(ps, k, "unknown key in [fleet] (want ssh_config "
		    "or connect_timeout)");
	}
	if (strcmp(k, "ssh") == 0) {
		if (once(ps, k, 1) < 0)
			return -EINVAL;
		/* Never an option to ssh: no leading '-'. */
		if (!is_word(v) || v[0] == '-' || strlen(v) >= sizeof h->dest)
			return bad(ps, k, "want an ssh destination ([user@]"
			    "host or ssh://[user@]host[:port])");
		snprintf(h->dest, sizeof h->dest, "%s", v);
		return 0;
	}
	if (strcmp(k, "capacity") == 0) {
		if (once(ps, k, 2) < 0)
			return -EINVAL;
		if (parse_uint(v, 1, TUI_FLEET_CAPACITY_MAX, &h->capacity) < 0)
			return bad(ps, k, "want 1..%d live leases",
			    TUI_FLEET_CAPACITY_MAX);
		return 0;
	}
	if (strcmp(k, "labels") == 0)
		return once(ps, k, 4) < 0 ? -EINVAL : labels(ps, v);
	if (strcmp(k, "corral") == 0) {
		if (once(ps, k, 8) < 0)
			return -EINVAL;
		if (v[0] != '/' || !is_word(v) || strlen(v) >= sizeof h->corral)
			return bad(ps, k, "want the absolute path of corral "
			    "on the host");
		snprintf(h->corral, sizeof h->corral, "%s", v);
		return 0;
	}
	return bad(ps, k, "unknown key in [host %s] (want ssh, capacity, "
	    "labels or corral)", h->name);
}

static int
end_host(struct fparse *ps)
{
	struct tui_fleet_host *h = ps->host;
	int line = ps->line, rc = 0;

	if (h == NULL)
		return 0;
	ps->line = h->line;
	if (h->dest[0] == '\0')
		rc = bad(ps, "ssh", "[host %s] has no ssh destination",
		    h->name);
	else if (h->capacity == 0)
		rc = bad(ps, "capacity", "[host %s] has no capacity", h->name);
	ps->line = line;
	ps->host = NULL;
	return rc;
}

static int
section(struct fparse *ps, char *s)
{
	char *name;

	if (end_host(ps) < 0)
		return -EINVAL;
	ps->seen = 0;
	if (strcmp(s, "fleet") == 0) {
		ps->section = 1;
		return 0;
	}
	if (strncmp(s, "host ", 5) != 0)
		return bad(ps, "section", "unknown section (want [fleet] or "
		    "[host NAME])");
	name = s + 5;
	while (*name == ' ')
		name++;
	if (!is_name(name))
		return bad(ps, "host", "a host name is lower-case letters, "
		    "digits, '-', '_' and '.', at most %d bytes",
		    TUI_FLEET_NAME_MAX - 1);
	if (tui_fleet_find(ps->f, name) != NULL)
		return bad(ps, "host", "host %s is named twice", name);
	if (ps->f->nhosts == TUI_FLEET_HOSTS_MAX)
		return bad(ps, "host", "at most %d hosts", TUI_FLEET_HOSTS_MAX);
	ps->host = &ps->f->hosts[ps->f->nhosts++];
	memset(ps->host, 0, sizeof *ps->host);
	snprintf(ps->host->name, sizeof ps->host->name, "%s", name);
	snprintf(ps->host->corral, sizeof ps->host->corral, "corral");
	ps->host->line = ps->line;
	ps->section = 2;
	return 0;
}

static char *
trim(char *s)
{
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' ||
	    s[n - 1] == '\r'))
		s[--n] = '\0';
	return s;
}

static int
one_line(struct fparse *ps, char *l)
{
	char *eq, *c;

	l = trim(l);
	if (l[0] == '\0' || l[0] == ';' || l[0] == '#')
		return 0;
	if (l[0] == '[') {
		c = strchr(l, ']');
		if (c == NULL || trim(c + 1)[0] != '\0')
			return bad(ps, "section", "want [fleet] or [host NAME]");
		*c = '\0';
		return section(ps, trim(l + 1));
	}
	/* An inline comment starts at a blank followed by ';' or '#'. */
	for (c = l; *c != '\0'; c++)
		if ((*c == ';' || *c == '#') && c > l &&
		    (c[-1] == ' ' || c[-1] == '\t')) {
			*c = '\0';
			break;
		}
	if ((eq = strchr(l, '=')) == NULL)
		return bad(ps, "line", "want KEY = VALUE");
	*eq = '\0';
	if (ps->section == 0)
		return bad(ps, trim(l), "outside a section (want [fleet] or "
		    "[host NAME] first)");
	return key_value(ps, trim(l), trim(eq + 1));
}

int
tui_fleet_parse(struct tui_fleet *out, const char *file, const char *text,
    size_t len, struct tui_fleet_error *err)
{
	struct tui_fleet *f;
	struct fparse ps;
	const char *p = text, *end = text + len;
	int rc = 0;

	memset(err, 0, sizeof *err);
	if ((f = calloc(1, sizeof *f)) == NULL)
		return -ENOMEM;
	snprintf(f->file, sizeof f->file, "%s", file);
	f->connect_timeout = TUI_FLEET_TIMEOUT_DEFAULT;
	memset(&ps, 0, sizeof ps);
	ps.f = f;
	ps.err = err;
	while (rc == 0 && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		char line[4096];

		ps.line++;
		if (n >= sizeof line)
			rc = bad(&ps, "line", "longer than %zu bytes",
			    sizeof line - 1);
		else if (memchr(p, '\0', n) != NULL)
			rc = bad(&ps, "line", "a NUL byte");
		else {
			memcpy(line, p, n);
			line[n] = '\0';
			rc = one_line(&ps, line);
		}
		p = nl != NULL ? nl + 1 : end;
	}
	if (rc == 0)
		rc = end_host(&ps);
	if (rc == 0)
		*out = *f;
	free(f);
	return rc;
}

int
tui_fleet_load(struct tui_fleet *f, struct tui_fleet_error *err)
{
	char path[TUI_FLEET_PATH_MAX], *text;
	size_t n;
	FILE *fp;
	int rc, e;

	memset(err, 0, sizeof *err);
	if (tui_config_file("fleet.ini", path, sizeof path) < 0) {
		snprintf(err->msg, sizeof err->msg, "no config directory "
		    "($XDG_CONFIG_HOME or $HOME) for fleet.ini");
		return -ENOENT;
	}
	if ((fp = fopen(path, "r")) == NULL) {
		e = errno;
		snprintf(err->msg, sizeof err->msg, "%.400s: %s", path,
		    e == ENOENT ? "no fleet file (see 'More machines' in the "
		    "user guide)" : strerror(e));
		return -e;
	}
	if ((text = malloc(FLEET_FILE_MAX + 1)) == NULL) {
		fclose(fp);
		return -ENOMEM;
	}
	n = fread(text, 1, FLEET_FILE_MAX + 1, fp);
	e = ferror(fp) ? EIO : n > FLEET_FILE_MAX ? EFBIG : 0;
	fclose(fp);
	if (e != 0) {
		snprintf(err->msg, sizeof err->msg, "%.400s: %s", path,
		    e == EFBIG ? "larger than 256 KiB" : strerror(e));
		free(text);
		return -e;
	}
	rc = tui_fleet_parse(f, path, text, n, err);
	free(text);
	return rc;
}

const struct tui_fleet_host *
tui_fleet_find(const struct tui_fleet *f, const char *name)
{
	for (size_t i = 0; i < f->nhosts; i++)
		if (strcmp(f->hosts[i].name, name) == 0)
			return &f->hosts[i];
	return NULL;
}

bool
tui_fleet_has_label(const struct tui_fleet_host *h, const char *label)
{
	for (size_t i = 0; i < h->nlabels; i++)
		if (strcmp(h->labels[i], label) == 0)
			return true;
	return false;
}

char *
tui_fleet_policy_text(const char *file, char *why, size_t whysz)
{
	struct sbx_policy_error perr;
	struct sbx_policy *pol = NULL;
	char *text;
	int rc;

	if ((rc = tui_sandbox_policy(file, &pol, &perr)) < 0) {
		if (perr.line > 0)
			snprintf(why, whysz, "%s: %.400s:%d: %.400s", rc ==
			    SBX_EWIDER ? "policy_wider" : "policy_invalid",
			    perr.file, perr.line, perr.msg);
		else
			snprintf(why, whysz, "policy_invalid: %.400s: %.400s",
			    perr.file, perr.msg);
		return NULL;
	}
	if ((text = tui_sandbox_policy_text(pol)) == NULL)
		snprintf(why, whysz, "out of memory");
	sbx_policy_free(pol);
	return text;
}

/* ---- ssh ---------------------------------------------------------------- */

void
tui_fleet_argv_free(char **v)
{
	for (size_t i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

char **
tui_fleet_ssh_argv(const struct tui_fleet *f, const struct tui_fleet_host *h,
    const char *remote)
{
	char **v = calloc(16, sizeof *v);
	size_t n = 0;
	bool ok = v != NULL;

#define ADD(s) do { if (ok && (v[n++] = strdup(s)) == NULL) ok = false; } \
	while (0)
	ADD("/usr/bin/ssh");
	if (f->ssh_config[0] != '\0') {
		ADD("-F");
		ADD(f->ssh_config);
	}
	/* Never a password prompt, an agent or X11 forwarded to a host. */
	ADD("-o");
	ADD("BatchMode=yes");
	ADD("-a");
	ADD("-x");
	ADD("-o");
	if (ok && asprintf(&v[n++], "ConnectTimeout=%u",
	    f->connect_timeout) < 0) {
		v[n - 1] = NULL;
		ok = false;
	}
	ADD("--");
	ADD(h->dest);
	ADD(remote);
#undef ADD
	if (!ok) {
		tui_fleet_argv_free(v);
		return NULL;
	}
	return v;
}

void
tui_fleet_probe_clear(struct tui_fleet_probe *p)
{
	json_decref(p->json);
	memset(p, 0, sizeof *p);
}

static void
probe_read(struct tui_fleet_probe *p, const char *out)
{
	json_error_t je;
	json_t *j = json_loads(out, 0, &je), *pf, *live;
	const char *v, *halt;

	if (!json_is_object(j)) {
		json_decref(j);
		snprintf(p->why, sizeof p->why, "corral fleet probe on the "
		    "host answered no JSON document");
		return;
	}
	p->json = j;
	v = json_string_value(json_object_get(j, "version"));
	snprintf(p->version, sizeof p->version, "%s", v != NULL &&
	    strlen(v) < sizeof p->version && strspn(v, NAME_CHARS "+~") ==
	    strlen(v) ? v : "?");
	p->same_version = strcmp(p->version, CORRAL_VERSION) == 0;
	pf = json_object_get(j, "preflight");
	halt = json_string_value(json_object_get(pf, "halt"));
	p->preflight_ok = json_is_object(pf) && halt == NULL &&
	    json_integer_value(json_object_get(pf, "exit_class")) == 0;
	snprintf(p->halt, sizeof p->halt, "%s", halt != NULL &&
	    strlen(halt) < sizeof p->halt && strspn(halt, NAME_CHARS) ==
	    strlen(halt) ? halt : p->preflight_ok ? "" : "unknown");
	live = json_object_get(j, "live");
	p->live = json_is_integer(live) && json_integer_value(live) >= 0 &&
	    json_integer_value(live) < 1000000 ?
	    (unsigned)json_integer_value(live) : 0;
	if (!json_is_integer(live))
		snprintf(p->why, sizeof p->why, "the host's probe has no "
		    "lease count");
	else if (!p->same_version)
		snprintf(p->why, sizeof p->why, "version_mismatch: the host "
		    "runs corral %s, this machine %s", p->version,
		    CORRAL_VERSION);
	else if (!p->preflight_ok)
		snprintf(p->why, sizeof p->why, "preflight failed on the "
		    "host: %s", p->halt);
	else if (p->live >= p->host->capacity)
		snprintf(p->why, sizeof p->why, "at capacity (%u of %u "
		    "leases)", p->live, p->host->capacity);
}

void
tui_fleet_probe(const struct tui_fleet *f, const struct tui_fleet_host *h,
    struct tui_fleet_probe *p)
{
	struct tui_fleet_out o;
	char *q = tui_fleet_shquote(h->corral), *remote = NULL, **argv = NULL;
	char why[700];

	memset(p, 0, sizeof *p);
	p->host = h;
	if (q == NULL || asprintf(&remote, "%s fleet probe", q) < 0 ||
	    (argv = tui_fleet_ssh_argv(f, h, remote)) == NULL) {
		snprintf(p->why, sizeof p->why, "out of memory");
		goto out;
	}
	if (tui_fleet_run(argv, NULL, -1, -1, FLEET_PROBE_OUT_MAX,
	    f->connect_timeout * 1000u + FLEET_PROBE_SLACK_MS, &o) < 0) {
		snprintf(p->why, sizeof p->why, "cannot run ssh: %s",
		    strerror(errno));
		goto out;
	}
	tui_fleet_out_why(&o, why, sizeof why);
	if (o.timed_out || o.status == 255)
		snprintf(p->why, sizeof p->why, "unreachable: ssh %s", why);
	else if (o.out_over)
		snprintf(p->why, sizeof p->why, "the host's probe answered "
		    "more than 4 MiB");
	else if (o.status != 0)
		snprintf(p->why, sizeof p->why, "corral fleet probe on the "
		    "host %s", why);
	p->reachable = !o.timed_out && o.status != 255;
	if (o.status == 0 && !o.out_over)
		probe_read(p, o.out);
	tui_fleet_out_clear(&o);
out:
	free(q);
	free(remote);
	tui_fleet_argv_free(argv);
}

struct probe_job {
	const struct tui_fleet *f;
	const struct tui_fleet_host *h;
	struct tui_fleet_probe *p;
};

static void *
probe_thread(void *arg)
{
	struct probe_job *j = arg;

	tui_fleet_probe(j->f, j->h, j->p);
	return NULL;
}

void
tui_fleet_probe_many(const struct tui_fleet *f,
    const struct tui_fleet_host *const *hosts, size_t n,
    struct tui_fleet_probe *out)
{
	struct probe_job *jobs = calloc(n + 1, sizeof *jobs);
	pthread_t *th = calloc(n + 1, sizeof *th);
	bool *started = calloc(n + 1, sizeof *started);

	/* One thread a host, so a slow or down host costs its own time only. */
	for (size_t i = 0; i < n; i++) {
		if (jobs != NULL && th != NULL && started != NULL) {
			jobs[i] = (struct probe_job){ f, hosts[i], &out[i] };
			started[i] = pthread_create(&th[i], NULL, probe_thread,
			    &jobs[i]) == 0;
		}
		if (started == NULL || !started[i])
			tui_fleet_probe(f, hosts[i], &out[i]);
	}
	for (size_t i = 0; started != NULL && i < n; i++)
		if (started[i])
			pthread_join(th[i], NULL);
	free(jobs);
	free(th);
	free(started);
}

bool
tui_fleet_probe_usable(const struct tui_fleet_probe *p)
{
	return p->reachable && p->json != NULL && p->why[0] == '\0';
}

int
tui_fleet_place(const struct tui_fleet *f, const char *host,
    const char *label, struct tui_fleet_probe *probes, size_t *nprobes,
    size_t *pick, char *why, size_t whysz)
{
	size_t n = 0, best = SIZE_MAX, used = 0;

	const struct tui_fleet_host *match[TUI_FLEET_HOSTS_MAX] = { NULL };

	*nprobes = 0;
	for (size_t i = 0; i < f->nhosts; i++) {
		const struct tui_fleet_host *h = &f->hosts[i];

		if ((host != NULL && strcmp(h->name, host) != 0) ||
		    (label != NULL && !tui_fleet_has_label(h, label)))
			continue;
		match[n++] = h;
	}
	tui_fleet_probe_many(f, match, n, probes);
	for (size_t i = 0; i < n; i++)
		if (tui_fleet_probe_usable(&probes[i]) && (best == SIZE_MAX ||
		    probes[i].live < probes[best].live))
			best = i;
	*nprobes = n;
	if (n == 0) {
		if (host != NULL)
			snprintf(why, whysz, "no_such_host: %s is not a host "
			    "in %s", host, f->file);
		else
			snprintf(why, whysz, "no_such_host: no host in %s has "
			    "label %s", f->file, label != NULL ? label : "");
		return -ENOENT;
	}
	if (best != SIZE_MAX) {
		*pick = best;
		return 0;
	}
	used = (size_t)snprintf(why, whysz, "fleet_unavailable: no host can "
	    "take the lease:");
	for (size_t i = 0; i < n && used < whysz; i++)
		used += (size_t)snprintf(why + used, whysz - used, "%s %s: %s",
		    i ? ";" : "", probes[i].host->name, probes[i].why);
	return -EAGAIN;
}
