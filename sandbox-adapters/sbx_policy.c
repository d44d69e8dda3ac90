/*
 * sbx_policy.c: the sandbox policy (SPEC 8.6), parsed: an INI file read with
 * inih over a base (the shipped defaults or the operator's policy), key by
 * key, each value validated. Pure: text in, struct out, errors naming the
 * file and line. The narrowing check is sbx_policy_narrow.c, the canonical
 * form sbx_policy_canon.c, the environment allowlist sbx_policy_env.c.
 */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ini.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"
#include "sandbox-adapters/sbx_int.h"
#include "sbx_default_policy.h"

#define LIM(f) offsetof(struct sbx_policy, limits.f)
#define POL(f) offsetof(struct sbx_policy, f)

static const struct sbx__policy_key keys[] = {
	{ "network", "allow", SBX_PK_NET, 0, true },
	{ "network", "on_egress_violation", SBX_PK_EGRESS, 0, true },
	{ "network", "loopback_port", SBX_PK_PORT, 0, true },
	{ "limits", "wall_time", SBX_PK_DURATION, LIM(wall_time), false },
	{ "limits", "cpu_time", SBX_PK_DURATION, LIM(cpu_time), false },
	{ "limits", "cpu", SBX_PK_CPU, LIM(cpu_milli), false },
	{ "limits", "memory", SBX_PK_BYTES, LIM(memory), false },
	{ "limits", "swap", SBX_PK_BYTES, LIM(swap), true },
	{ "limits", "pids", SBX_PK_COUNT, LIM(pids), false },
	{ "limits", "disk", SBX_PK_BYTES, LIM(disk), false },
	{ "limits", "inodes", SBX_PK_COUNT, LIM(inodes), false },
	{ "limits", "output", SBX_PK_BYTES, LIM(output), false },
	{ "limits", "file_size", SBX_PK_BYTES, LIM(file_size), false },
	{ "limits", "nofile", SBX_PK_COUNT, LIM(nofile), false },
	{ "limits", "tmp", SBX_PK_BYTES, LIM(tmp), false },
	{ "limits", "home", SBX_PK_BYTES, LIM(home), false },
	{ "env", "allow", SBX_PK_ENV, 0, true },
	{ "mounts", "ro", SBX_PK_MOUNTS, 0, true },
	/* the one key among the check names: each check's own time limit */
	{ "checks", "timeout", SBX_PK_DURATION, POL(check_timeout), false },
	{ "result", "max_files", SBX_PK_COUNT, POL(max_files), false },
	{ "result", "max_file_bytes", SBX_PK_BYTES, POL(max_file_bytes), false },
	{ "result", "max_total_bytes", SBX_PK_BYTES, POL(max_total_bytes), false },
	{ "result", "allow_binary", SBX_PK_BOOL, POL(allow_binary), true },
	{ "result", "allow_symlinks", SBX_PK_BOOL, POL(allow_symlinks), true },
	{ "result", "output_dir", SBX_PK_RELDIR, POL(output_dir), true },
	{ "result", "keep_workspace", SBX_PK_BOOL, POL(keep_workspace), true },
	{ "git", "history", SBX_PK_HISTORY, POL(git_history), true },
	{ "model", "spend_cap", SBX_PK_USD, POL(spend_cap), true },
};
#define NKEYS (sizeof keys / sizeof keys[0])

static const char *const sections[] = { "network", "limits", "env",
	"mounts", "checks", "result", "git", "model" };

/* inih's line buffer (INI_MAX_LINE 200): a longer line is an error. */
#define LINE_MAX_BYTES 198

struct check_line {
	char *name;
	int line;
};

struct pctx {
	struct sbx_policy *p;
	struct sbx_policy_error *err;
	const char *name;
	const char *text;
	size_t off;
	int line;
	int section_line;	/* the last [section] header's line */
	char raw[LINE_MAX_BYTES + 2];
	bool failed;
	bool oom;
	int seen[NKEYS];	/* line the key was first set, 0: not set */
	struct check_line *clines;
	size_t nclines;
};

/* ---- errors ---------------------------------------------------------- */

static void
err_set(struct sbx_policy_error *err, const char *file, int line,
    const char *fmt, va_list ap)
{
	if (err == NULL)
		return;
	snprintf(err->file, sizeof err->file, "%s", file != NULL ? file :
	    "policy");
	err->line = line;
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
}

/* Record the first error at the current line; returns 0 for inih. */
static int
fail(struct pctx *c, const char *fmt, ...)
{
	va_list ap;

	if (c->failed)
		return 0;
	c->failed = true;
	va_start(ap, fmt);
	err_set(c->err, c->name, c->line, fmt, ap);
	va_end(ap);
	return 0;
}

void
sbx__policy_errf(struct sbx_policy_error *err, const char *file, int line,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_set(err, file, line, fmt, ap);
	va_end(ap);
}

/* ---- string vectors -------------------------------------------------- */

int
sbx__policy_vec_push(char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 2) * sizeof *nv);
	char *d;

	if (nv == NULL)
		return -ENOMEM;
	*v = nv;
	if ((d = strdup(s)) == NULL)
		return -ENOMEM;
	nv[(*n)++] = d;
	nv[*n] = NULL;
	return 0;
}

static void
vec_clear(char ***v, size_t *n)
{
	for (size_t i = 0; i < *n; i++)
		free((*v)[i]);
	free(*v);
	*v = NULL;
	*n = 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
vec_sort_unique(char **v, size_t *n)
{
	size_t w = 0;

	if (*n == 0)
		return;
	qsort(v, *n, sizeof *v, cmp_str);
	for (size_t i = 0; i < *n; i++) {
		if (w > 0 && strcmp(v[w - 1], v[i]) == 0) {
			free(v[i]);
			continue;
		}
		v[w++] = v[i];
	}
	*n = w;
	v[w] = NULL;
}

bool
sbx__policy_vec_has(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(v[i], s) == 0)
			return true;
	}
	return false;
}

static int
vec_copy(char ***dst, size_t *dn, char *const *src, size_t sn)
{
	*dst = NULL;
	*dn = 0;
	for (size_t i = 0; i < sn; i++) {
		if (sbx__policy_vec_push(dst, dn, src[i]) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* ---- the policy object ----------------------------------------------- */

void
sbx_policy_free(struct sbx_policy *p)
{
	if (p == NULL)
		return;
	vec_clear(&p->net_allow, &p->nnet_allow);
	vec_clear(&p->env_allow, &p->nenv_allow);
	vec_clear(&p->mounts_ro, &p->nmounts_ro);
	for (size_t i = 0; i < p->nchecks; i++) {
		free(p->checks[i].name);
		free(p->checks[i].cmd);
	}
	free(p->checks);
	free(p);
}

struct sbx_policy *
sbx_policy_dup(const struct sbx_policy *src)
{
	struct sbx_policy *p;

	if (src == NULL || (p = malloc(sizeof *p)) == NULL)
		return NULL;
	*p = *src;
	p->net_allow = p->env_allow = p->mounts_ro = NULL;
	p->nnet_allow = p->nenv_allow = p->nmounts_ro = 0;
	p->checks = NULL;
	p->nchecks = 0;
	if (vec_copy(&p->net_allow, &p->nnet_allow, src->net_allow,
	    src->nnet_allow) < 0 || vec_copy(&p->env_allow, &p->nenv_allow,
	    src->env_allow, src->nenv_allow) < 0 || vec_copy(&p->mounts_ro,
	    &p->nmounts_ro, src->mounts_ro, src->nmounts_ro) < 0)
		goto fail;
	if (src->nchecks > 0) {
		p->checks = calloc(src->nchecks, sizeof *p->checks);
		if (p->checks == NULL)
			goto fail;
		for (size_t i = 0; i < src->nchecks; i++) {
			p->checks[i].name = strdup(src->checks[i].name);
			p->checks[i].cmd = strdup(src->checks[i].cmd);
			p->nchecks++;
			if (p->checks[i].name == NULL ||
			    p->checks[i].cmd == NULL)
				goto fail;
		}
	}
	return p;
fail:
	sbx_policy_free(p);
	return NULL;
}

/* ---- values ---------------------------------------------------------- */

static bool
parse_u64(const char *s, size_t n, unsigned long long *out)
{
	unsigned long long v = 0;

	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (v > (ULLONG_MAX - (unsigned)(s[i] - '0')) / 10)
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	*out = v;
	return true;
}

static bool
mul_ok(unsigned long long v, unsigned long long m, unsigned long long *out)
{
	if (m != 0 && v > ULLONG_MAX / m)
		return false;
	*out = v * m;
	return true;
}

static bool
parse_bytes(const char *s, unsigned long long *out)
{
	size_t n = strspn(s, "0123456789");
	unsigned long long v, m = 1;
	const char *u = s + n;

	if (!parse_u64(s, n, &v))
		return false;
	switch (toupper((unsigned char)*u)) {
	case '\0':
		return (*out = v), true;
	case 'K':
		m = 1ull << 10;
		break;
	case 'M':
		m = 1ull << 20;
		break;
	case 'G':
		m = 1ull << 30;
		break;
	case 'T':
		m = 1ull << 40;
		break;
	case 'B':
		return u[1] == '\0' && ((*out = v), true);
	default:
		return false;
	}
	u++;
	if (*u != '\0' && strcmp(u, "B") != 0 && strcmp(u, "iB") != 0)
		return false;
	return mul_ok(v, m, out);
}

static bool
parse_duration(const char *s, unsigned long long *out)
{
	size_t n = strspn(s, "0123456789");
	unsigned long long v, m = 1;
	const char *u = s + n;

	if (!parse_u64(s, n, &v))
		return false;
	if (*u != '\0') {
		if (u[1] != '\0')
			return false;
		switch (*u) {
		case 's':
			m = 1;
			break;
		case 'm':
			m = 60;
			break;
		case 'h':
			m = 3600;
			break;
		case 'd':
			m = 86400;
			break;
		default:
			return false;
		}
	}
	return mul_ok(v, m, out);
}

/* "1", "1.5", "0.25": cores x 1000, at most 1024 cores. */
static bool
parse_cpu(const char *s, unsigned long long *out)
{
	size_t n = strspn(s, "0123456789"), f = 0;
	unsigned long long whole, frac = 0;

	if (!parse_u64(s, n, &whole) || whole > 1024)
		return false;
	if (s[n] == '.') {
		const char *d = s + n + 1;

		f = strspn(d, "0123456789");
		if (f == 0 || f > 3 || d[f] != '\0' ||
		    !parse_u64(d, f, &frac))
			return false;
		for (size_t i = f; i < 3; i++)
			frac *= 10;
	} else if (s[n] != '\0') {
		return false;
	}
	*out = whole * 1000 + frac;
	return *out <= 1024000;
}

static bool
parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };

	for (size_t i = 0; i < 4; i++) {
		if (strcmp(s, yes[i]) == 0)
			return (*out = true), true;
		if (strcmp(s, no[i]) == 0)
			return (*out = false), true;
	}
	return false;
}

/* ---- list items ------------------------------------------------------ */

static bool
env_name_valid(const char *s)
{
	if (*s == '\0' || isdigit((unsigned char)*s))
		return false;
	for (; *s != '\0'; s++) {
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	}
	return true;
}

/* A DNS name: labels of [a-z0-9-], 1..63 bytes, not all digits at the end. */
static bool
host_valid(const char *h, const char **why)
{
	size_t len = strlen(h), lab = 0;
	bool digits = true;

	if (len == 0 || len > 253) {
		*why = "bad host name";
		return false;
	}
	for (size_t i = 0; i <= len; i++) {
		char ch = h[i];

		if (ch == '.' || ch == '\0') {
			if (lab == 0 || h[i - 1] == '-') {
				*why = "bad host name";
				return false;
			}
			if (ch == '\0')
				break;
			lab = 0;
			digits = true;
			continue;
		}
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
		    ch == '-') || (ch == '-' && lab == 0) || ++lab > 63) {
			*why = ch == ':' || ch == '[' ? "IP literals are not "
			    "allowed (names only)" : "bad host name";
			return false;
		}
		if (!(ch >= '0' && ch <= '9'))
			digits = false;
	}
	/* 10.0.0.1 or a bare number: an IP literal, which the proxy refuses. */
	if (digits) {
		*why = "IP literals are not allowed (names only)";
		return false;
	}
	return true;
}

/* host:port, normalised into out ("*" alone means "*:*"). */
static bool
net_item(const char *item, char *out, size_t sz, const char **why)
{
	char host[300];
	const char *colon = strrchr(item, ':'), *port;
	unsigned long long pv = 0;
	size_t hn;

	*why = "expected host:port";
	if (strcmp(item, "*") == 0) {
		snprintf(out, sz, "*:*");
		return true;
	}
	if (colon == NULL || (hn = (size_t)(colon - item)) == 0 ||
	    hn >= sizeof host)
		return false;
	for (size_t i = 0; i < hn; i++)
		host[i] = (char)tolower((unsigned char)item[i]);
	host[hn] = '\0';
	if (hn > 1 && host[hn - 1] == '.')
		host[--hn] = '\0';
	port = colon + 1;
	/* A wildcard port only with the wildcard host ("*:*"). */
	if (strcmp(port, "*") == 0 && strcmp(host, "*") != 0) {
		*why = "bad port (a name takes an exact port)";
		return false;
	}
	if (strcmp(port, "*") != 0) {
		if (!parse_u64(port, strlen(port), &pv) || pv == 0 ||
		    pv > 65535) {
			*why = "bad port";
			return false;
		}
	}
	if (strcmp(host, "*") != 0 && !host_valid(host, why))
		return false;
	if (strcmp(port, "*") == 0)
		snprintf(out, sz, "%s:*", host);
	else
		snprintf(out, sz, "%s:%llu", host, pv);
	return true;
}

/* An absolute path, slashes collapsed, no trailing slash, no . or .. */
static bool
mount_item(const char *item, char *out, size_t sz, const char **why)
{
	size_t w = 0;
	const char *c = item;

	if (item[0] != '/') {
		*why = "relative mount path (must be absolute)";
		return false;
	}
	*why = "bad mount path";
	while (*c != '\0') {
		size_t n;

		while (*c == '/')
			c++;
		if (*c == '\0')
			break;
		n = strcspn(c, "/");
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' &&
		    c[1] == '.')) {
			*why = "mount path with a . or .. component";
			return false;
		}
		if (w + n + 2 > sz)
			return false;
		out[w++] = '/';
		memcpy(out + w, c, n);
		w += n;
		c += n;
	}
	if (w == 0) {
		*why = "the host's / cannot be mounted";
		return false;
	}
	out[w] = '\0';
	return true;
}

/*
 * The host's system paths (SPEC 8.3): no zone sees them, nor a parent of
 * one; below them only /tmp's children may be mounted (a directory the
 * operator chose, not the shared /tmp itself).
 */
static const struct {
	const char *path;
	bool under;	/* what is below it is refused too */
	const char *what;
} host_system[] = {
	{ "/proc", true, "every host process's command line and environment" },
	{ "/sys", true, "the kernel's and the devices' state" },
	{ "/sys/fs/cgroup", true, "every lease's cgroup" },
	{ "/dev", true, "the host's devices" },
	{ "/run/corral", true, "corral's uid slots and check copies" },
	{ "/tmp", false, "the host's shared temporary files" },
};

/* a equal to b, or a under b (path components, both normalised). */
static bool
path_within(const char *a, const char *b)
{
	size_t n = strlen(b);

	if (strncmp(a, b, n) != 0)
		return false;
	return a[n] == '\0' || a[n] == '/' || (n == 1 && b[0] == '/');
}

bool
sbx__policy_mount_host(const char *m, const char *state_dir, char *why,
    size_t whysz)
{
	for (size_t i = 0; i < sizeof host_system / sizeof host_system[0];
	    i++) {
		const char *h = host_system[i].path;

		if (path_within(h, m) || (host_system[i].under &&
		    path_within(m, h))) {
			snprintf(why, whysz, "a host system path (%s: %s) "
			    "cannot be mounted", h, host_system[i].what);
			return true;
		}
	}
	if (state_dir != NULL && state_dir[0] == '/' &&
	    (path_within(state_dir, m) || path_within(m, state_dir))) {
		snprintf(why, whysz, "corral's state directory %s (the "
		    "journal, every lease's files) cannot be mounted",
		    state_dir);
		return true;
	}
	return false;
}

/* ---- the INI handler ------------------------------------------------- */

static int
list_item(struct pctx *c, const struct sbx__policy_key *k, const char *item)
{
	char norm[4096], host[160];
	const char *why = "";
	int rc = 0;

	switch (k->type) {
	case SBX_PK_NET:
		if (!net_item(item, norm, sizeof norm, &why))
			return fail(c, "[network] allow: '%s': %s", item, why);
		rc = sbx__policy_vec_push(&c->p->net_allow, &c->p->nnet_allow, norm);
		break;
	case SBX_PK_ENV:
		if (!env_name_valid(item))
			return fail(c, "[env] allow: '%s' is not a variable "
			    "name", item);
		/* Never passed, even if listed (SPEC 8.3). */
		if (sbx_policy_env_credential_shaped(item)) {
			c->p->env_dropped++;
			return 1;
		}
		rc = sbx__policy_vec_push(&c->p->env_allow, &c->p->nenv_allow, item);
		break;
	case SBX_PK_MOUNTS:
		if (!mount_item(item, norm, sizeof norm, &why))
			return fail(c, "[mounts] ro: '%s': %s", item, why);
		if (sbx__policy_mount_host(norm, NULL, host, sizeof host))
			return fail(c, "[mounts] ro: '%s': %s", item, host);
		rc = sbx__policy_vec_push(&c->p->mounts_ro, &c->p->nmounts_ro, norm);
		break;
	default:
		assert(0);
	}
	if (rc < 0) {
		c->oom = true;
		return fail(c, "out of memory");
	}
	return 1;
}

static int
list_value(struct pctx *c, const struct sbx__policy_key *k, const char *value)
{
	char item[4096];
	const char *s = value;

	while (*s != '\0') {
		size_t n;

		s += strspn(s, ", \t");
		n = strcspn(s, ", \t");
		if (n == 0)
			break;
		if (n >= sizeof item)
			return fail(c, "list item too long");
		memcpy(item, s, n);
		item[n] = '\0';
		if (list_item(c, k, item) == 0)
			return 0;
		s += n;
	}
	return 1;
}

/*
 * A relative directory of the workspace: "" (none), else components of
 * [A-Za-z0-9._-] with no ".", ".." or ".git" (any case), not starting
 * with '-'; trailing slashes dropped.
 */
static int
reldir_value(struct pctx *c, const struct sbx__policy_key *k, char *dst,
    const char *value)
{
	char v[256];
	const char *s;
	size_t n = strlen(value), i = 0;

	while (n > 0 && value[n - 1] == '/')
		n--;
	if (n >= sizeof v)
		return fail(c, "[%s] %s: longer than %zu bytes", k->section,
		    k->name, sizeof v - 1);
	memcpy(v, value, n);
	v[n] = '\0';
	for (s = v; n > 0; s += i + (s[i] == '/')) {
		i = strcspn(s, "/");
		if (i == 0 || (i == 1 && s[0] == '.') || (i == 2 &&
		    strncmp(s, "..", 2) == 0) || (i == 4 &&
		    strncasecmp(s, ".git", 4) == 0) || s[0] == '-' ||
		    strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuv"
		    "wxyz0123456789._-") < i)
			return fail(c, "[%s] %s: '%s' is not a relative "
			    "directory (letters, digits, '.', '_', '-'; no "
			    "'.', '..' or '.git')", k->section, k->name,
			    value);
		if (s[i] == '\0')
			break;
	}
	memcpy(dst, v, n + 1);
	return 1;
}

static int
scalar_value(struct pctx *c, const struct sbx__policy_key *k, const char *value)
{
	unsigned long long v = 0;
	bool b, ok;
	char *base = (char *)c->p;

	switch (k->type) {
	case SBX_PK_DURATION:
		ok = parse_duration(value, &v);
		break;
	case SBX_PK_BYTES:
		ok = parse_bytes(value, &v);
		break;
	case SBX_PK_COUNT:
		ok = parse_u64(value, strlen(value), &v);
		break;
	case SBX_PK_HISTORY:
		v = SBX_HISTORY_ALL;
		ok = strcmp(value, "all") == 0 || parse_u64(value,
		    strlen(value), &v);
		break;
	case SBX_PK_CPU:
		ok = parse_cpu(value, &v);
		break;
	case SBX_PK_USD:
		if ((ok = strcmp(value, "none") == 0))
			break;
		{
			uint64_t nano = 0;

			ok = sbx_gateway_usd_parse(value, &nano) == 0;
			v = nano;
		}
		if (ok && v == 0)
			return fail(c, "[%s] %s: must be greater than 0 (none: "
			    "no cap of the policy's)", k->section, k->name);
		if (!ok)
			return fail(c, "[%s] %s: '%s' is not an amount in USD "
			    "(e.g. 5.00) or none", k->section, k->name, value);
		break;
	case SBX_PK_PORT:
		ok = parse_u64(value, strlen(value), &v) && v <= 65535;
		if (ok)
			c->p->loopback_port = (unsigned)v;
		return ok ? 1 : fail(c, "[%s] %s: bad port '%s'", k->section,
		    k->name, value);
	case SBX_PK_EGRESS:
		if (strcmp(value, "fail") == 0)
			c->p->on_egress = SBX_EGRESS_FAIL;
		else if (strcmp(value, "record") == 0)
			c->p->on_egress = SBX_EGRESS_RECORD;
		else
			return fail(c, "[network] on_egress_violation: "
			    "'%s' is not fail or record", value);
		return 1;
	case SBX_PK_BOOL:
		if (!parse_bool(value, &b))
			return fail(c, "[%s] %s: '%s' is not true or false",
			    k->section, k->name, value);
		*(bool *)(base + k->off) = b;
		return 1;
	case SBX_PK_RELDIR:
		return reldir_value(c, k, base + k->off, value);
	default:
		assert(0);
		return 0;
	}
	if (!ok)	/* the value, then the form it should have */
		return fail(c, "[%s] %s: bad value '%s' (%s)", k->section,
		    k->name, value, k->type == SBX_PK_DURATION ? "seconds, or "
		    "a number with s, m, h or d: 3600, 90m, 1h" : k->type ==
		    SBX_PK_BYTES ? "bytes, or a number with K, M, G or T: 512M" :
		    k->type == SBX_PK_CPU ? "cores, up to 3 decimals: 2, 0.5" :
		    k->type == SBX_PK_HISTORY ? "a count of generations, or "
		    "all" : "a whole number: 128");
	if (v == 0 && !k->zero_ok)
		return fail(c, "[%s] %s: must be greater than 0", k->section,
		    k->name);
	*(unsigned long long *)(base + k->off) = v;
	return 1;
}

static bool
check_name_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 64)
		return false;
	for (; *s != '\0'; s++) {
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' &&
		    *s != '.')
			return false;
	}
	return true;
}

static int
check_value(struct pctx *c, const char *name, const char *cmd)
{
	struct sbx_policy *p = c->p;
	struct check_line *cl;
	struct sbx_check *nc;
	const char *semi;

	if (!check_name_valid(name))
		return fail(c, "[checks] '%s' is not a check name "
		    "([A-Za-z0-9_.-], 1 to 64 bytes)", name);
	if (*cmd == '\0')
		return fail(c, "[checks] %s: empty command", name);
	/* inih cut the line at " ;": refuse rather than run half of it. */
	if ((semi = strchr(c->raw, ';')) != NULL && semi > c->raw &&
	    (semi[-1] == ' ' || semi[-1] == '\t'))
		return fail(c, "[checks] %s: ' ;' starts a comment here; use "
		    "&& or a script", name);
	for (size_t i = 0; i < c->nclines; i++) {
		if (strcmp(c->clines[i].name, name) == 0)
			return fail(c, "[checks] %s: set twice", name);
	}
	cl = realloc(c->clines, (c->nclines + 1) * sizeof *cl);
	if (cl == NULL)
		goto oom;
	c->clines = cl;
	if ((cl[c->nclines].name = strdup(name)) == NULL)
		goto oom;
	cl[c->nclines++].line = c->line;
	for (size_t i = 0; i < p->nchecks; i++) {
		char *d;

		if (strcmp(p->checks[i].name, name) != 0)
			continue;
		if ((d = strdup(cmd)) == NULL)
			goto oom;
		free(p->checks[i].cmd);
		p->checks[i].cmd = d;
		return 1;
	}
	nc = realloc(p->checks, (p->nchecks + 1) * sizeof *nc);
	if (nc == NULL)
		goto oom;
	p->checks = nc;
	nc[p->nchecks].name = strdup(name);
	nc[p->nchecks].cmd = strdup(cmd);
	p->nchecks++;
	if (nc[p->nchecks - 1].name == NULL || nc[p->nchecks - 1].cmd == NULL)
		goto oom;
	return 1;
oom:
	c->oom = true;
	return fail(c, "out of memory");
}

static int
handler(void *user, const char *section, const char *name,
    const char *value)
{
	struct pctx *c = user;
	bool known = false;

	if (c->failed)
		return 0;
	for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
		known = known || strcmp(section, sections[i]) == 0;
	if (!known) {
		/* named at its header, not at its first key (issue 21) */
		if (c->section_line > 0)
			c->line = c->section_line;
		return fail(c, "unknown section [%s]", section);
	}
	if (strcmp(section, "checks") == 0 && strcmp(name, "timeout") != 0)
		return check_value(c, name, value);
	for (size_t i = 0; i < NKEYS; i++) {
		const struct sbx__policy_key *k = &keys[i];
		bool list = k->type == SBX_PK_NET || k->type == SBX_PK_ENV ||
		    k->type == SBX_PK_MOUNTS;

		if (strcmp(section, k->section) != 0 ||
		    strcmp(name, k->name) != 0)
			continue;
		if (c->seen[i] != 0 && !list)
			return fail(c, "[%s] %s: set twice", section, name);
		if (c->seen[i] == 0) {
			c->seen[i] = c->line;
			/* A file that sets a list replaces the base's. */
			if (k->type == SBX_PK_NET)
				vec_clear(&c->p->net_allow, &c->p->nnet_allow);
			else if (k->type == SBX_PK_ENV) {
				vec_clear(&c->p->env_allow, &c->p->nenv_allow);
				c->p->env_dropped = 0;
			} else if (k->type == SBX_PK_MOUNTS)
				vec_clear(&c->p->mounts_ro, &c->p->nmounts_ro);
		}
		return list ? list_value(c, k, value) :
		    scalar_value(c, k, value);
	}
	return fail(c, "unknown key '%s' in [%s]", name, section);
}

/* inih's reader: one line of the text at a time, counted. */
static char *
reader(char *str, int num, void *stream)
{
	struct pctx *c = stream;
	const char *s = c->text + c->off, *nl;
	size_t len;

	if (*s == '\0')
		return NULL;
	nl = strchr(s, '\n');
	len = nl != NULL ? (size_t)(nl - s) + 1 : strlen(s);
	c->off += len;
	c->line++;
	if (len - (nl != NULL) > LINE_MAX_BYTES || len + 1 > (size_t)num) {
		fail(c, "line longer than %d bytes (repeat the key to "
		    "continue a list)", LINE_MAX_BYTES);
		snprintf(str, (size_t)num, "\n");
		c->raw[0] = '\0';
		return str;
	}
	memcpy(str, s, len);
	str[len] = '\0';
	if (s[strspn(s, " \t")] == '[')
		c->section_line = c->line;
	memcpy(c->raw, s, len);
	c->raw[len] = '\0';
	return str;
}

static void
sort_checks(struct sbx_policy *p)
{
	/* Insertion sort: a handful of checks. */
	for (size_t i = 1; i < p->nchecks; i++) {
		struct sbx_check t = p->checks[i];
		size_t j = i;

		while (j > 0 && strcmp(p->checks[j - 1].name, t.name) > 0) {
			p->checks[j] = p->checks[j - 1];
			j--;
		}
		p->checks[j] = t;
	}
}

static void
normalise(struct sbx_policy *p)
{
	vec_sort_unique(p->net_allow, &p->nnet_allow);
	vec_sort_unique(p->env_allow, &p->nenv_allow);
	vec_sort_unique(p->mounts_ro, &p->nmounts_ro);
	sort_checks(p);
}

int
sbx_policy_grant(struct sbx_policy *p, const char *allow, unsigned loopback,
    const char *mount, char *why, size_t whysz)
{
	char norm[4096], host[160];
	const char *w = "";

	if (p == NULL)
		return -EINVAL;
	if (allow != NULL) {
		if (!net_item(allow, norm, sizeof norm, &w) ||
		    strchr(norm, '*') != NULL) {
			snprintf(why, whysz, "'%.300s': %s", allow, w);
			return SBX_EPOLICY;
		}
		if (!sbx__policy_vec_has(p->net_allow, p->nnet_allow, norm) &&
		    sbx__policy_vec_push(&p->net_allow, &p->nnet_allow,
		    norm) < 0)
			return -ENOMEM;
	}
	if (loopback != 0) {
		if (loopback > 65535 || loopback == SBX_EGRESS_PORT ||
		    (p->loopback_port != 0 && p->loopback_port != loopback)) {
			snprintf(why, whysz, "loopback port %u: %s", loopback,
			    loopback > 65535 || loopback == SBX_EGRESS_PORT ?
			    "not a usable port" : "the policy grants another "
			    "one");
			return SBX_EPOLICY;
		}
		p->loopback_port = loopback;
	}
	if (mount != NULL) {
		if (!mount_item(mount, norm, sizeof norm, &w)) {
			snprintf(why, whysz, "'%.300s': %s", mount, w);
			return SBX_EPOLICY;
		}
		if (sbx__policy_mount_host(norm, NULL, host, sizeof host)) {
			snprintf(why, whysz, "'%.300s': %s", mount, host);
			return SBX_EPOLICY;
		}
		if (!sbx__policy_vec_has(p->mounts_ro, p->nmounts_ro, norm) &&
		    sbx__policy_vec_push(&p->mounts_ro, &p->nmounts_ro,
		    norm) < 0)
			return -ENOMEM;
	}
	normalise(p);
	return 0;
}

static size_t
key_index(const char *section, const char *name)
{
	size_t i;

	for (i = 0; i < NKEYS; i++)
		if (strcmp(keys[i].section, section) == 0 &&
		    strcmp(keys[i].name, name) == 0)
			break;
	return i;
}

/*
 * The workspace is an ext4 image of `disk` bytes with `inodes` inodes
 * (sbx_workspace.c): mkfs.ext4 refuses more than one inode per KiB at some
 * sizes (64M with 262144 inodes, 2M with 4096), so a policy asking for it
 * is refused here, naming both keys, not when a lease is made.
 */
static void
check_disk_inodes(struct pctx *c, const struct sbx_limits *l)
{
	size_t kd = key_index("limits", "disk"),
	    ki = key_index("limits", "inodes");

	if (l->disk == 0 || l->inodes == 0 || l->inodes <= l->disk / 1024)
		return;
	c->line = c->seen[kd] > c->seen[ki] ? c->seen[kd] : c->seen[ki];
	fail(c, "[limits] disk = %lluK cannot hold inodes = %llu (a "
	    "workspace needs 1 KiB of disk per inode): raise disk to %lluM "
	    "or lower inodes to %llu", l->disk >> 10, l->inodes,
	    (l->inodes + 1023) / 1024, l->disk / 1024);
}

/* Parse text over *p (modified in place); c->seen says what it set. */
static int
parse_into(struct pctx *c, struct sbx_policy *p, const char *text,
    const char *name, struct sbx_policy_error *err)
{
	int line;

	c->p = p;
	c->err = err;
	c->name = name;
	c->text = text;
	line = ini_parse_stream(reader, c, handler, c);
	if (c->oom)
		return -ENOMEM;
	/* inih's own syntax errors, if one comes before ours. */
	if (line > 0 && (!c->failed || (err != NULL && line < err->line))) {
		c->failed = false;
		c->line = line;
		fail(c, "syntax error (expected [section] or key = value)");
	} else if (line < 0) {
		return -ENOMEM;
	}
	if (!c->failed)
		check_disk_inodes(c, &p->limits);
	if (c->failed)
		return SBX_EPOLICY;
	normalise(p);
	return 0;
}

static void
pctx_free(struct pctx *c)
{
	for (size_t i = 0; i < c->nclines; i++)
		free(c->clines[i].name);
	free(c->clines);
}

int
sbx_policy_load(const char *text, const char *name,
    const struct sbx_policy *base, struct sbx_policy **out,
    struct sbx_policy_error *err)
{
	struct sbx_policy *p;
	struct pctx c;
	int rc;

	if (out != NULL)
		*out = NULL;
	if (text == NULL || out == NULL)
		return -EINVAL;
	if (err != NULL)
		memset(err, 0, sizeof *err);
	p = base != NULL ? sbx_policy_dup(base) : sbx_policy_new_default();
	if (p == NULL)
		return -ENOMEM;
	memset(&c, 0, sizeof c);
	rc = parse_into(&c, p, text, name, err);
	pctx_free(&c);
	if (rc < 0) {
		sbx_policy_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

struct sbx_policy *
sbx_policy_new_default(void)
{
	struct sbx_policy *p = calloc(1, sizeof *p);
	struct sbx_policy_error err;
	struct pctx c;
	int rc;

	if (p == NULL)
		return NULL;
	memset(&c, 0, sizeof c);
	rc = parse_into(&c, p, sbx_default_policy, "policies/default.ini",
	    &err);
	pctx_free(&c);
	/* The shipped file is tested; only memory can fail here. */
	assert(rc != SBX_EPOLICY);
	if (rc < 0) {
		sbx_policy_free(p);
		return NULL;
	}
	return p;
}

/* ---- for the narrowing check (sbx_policy_narrow.c) ------------------- */

const struct sbx__policy_key *
sbx__policy_keys(size_t *n)
{
	*n = NKEYS;
	return keys;
}

struct sbx__policy_parse {
	struct pctx c;
};

int
sbx__policy_parse(struct sbx_policy *p, const char *text, const char *name,
    struct sbx_policy_error *err, struct sbx__policy_parse **out)
{
	struct sbx__policy_parse *pp;
	int rc;

	*out = NULL;
	if ((pp = calloc(1, sizeof *pp)) == NULL)
		return -ENOMEM;
	rc = parse_into(&pp->c, p, text, name, err);
	*out = pp;
	return rc;
}

int
sbx__policy_parse_line(const struct sbx__policy_parse *pp, size_t key,
    const char *check)
{
	if (key < NKEYS)
		return pp->c.seen[key];
	for (size_t i = 0; check != NULL && i < pp->c.nclines; i++) {
		if (strcmp(pp->c.clines[i].name, check) == 0)
			return pp->c.clines[i].line;
	}
	return 0;
}

void
sbx__policy_parse_free(struct sbx__policy_parse *pp)
{
	if (pp == NULL)
		return;
	pctx_free(&pp->c);
	free(pp);
}
