/*
 * sbx_policy.c: the sandbox policy (SPEC 8.6): an INI file parsed with
 * inih over a base (the shipped defaults or the operator's policy), key by
 * key; the narrowing check for a repository's policy; the canonical form
 * and its hash for receipts; the environment allowlist. Pure: text in,
 * struct out, errors naming the file and line.
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
#include "sbx_default_policy.h"

enum ktype {
	K_DURATION,	/* seconds; s, m, h, d */
	K_BYTES,	/* bytes; K, M, G, T */
	K_COUNT,	/* a positive integer */
	K_CPU,		/* cores, up to 3 decimals */
	K_BOOL,
	K_PORT,		/* 0..65535 */
	K_EGRESS,	/* fail | record */
	K_NET,		/* list of host:port */
	K_ENV,		/* list of names */
	K_MOUNTS,	/* list of absolute paths */
	K_RELDIR,	/* one relative directory (char array) */
};

struct key {
	const char *section;
	const char *name;
	enum ktype type;
	size_t off;	/* scalars: offset in struct sbx_policy */
	bool zero_ok;
};

#define LIM(f) offsetof(struct sbx_policy, limits.f)
#define POL(f) offsetof(struct sbx_policy, f)

static const struct key keys[] = {
	{ "network", "allow", K_NET, 0, true },
	{ "network", "on_egress_violation", K_EGRESS, 0, true },
	{ "network", "loopback_port", K_PORT, 0, true },
	{ "limits", "wall_time", K_DURATION, LIM(wall_time), false },
	{ "limits", "cpu_time", K_DURATION, LIM(cpu_time), false },
	{ "limits", "cpu", K_CPU, LIM(cpu_milli), false },
	{ "limits", "memory", K_BYTES, LIM(memory), false },
	{ "limits", "swap", K_BYTES, LIM(swap), true },
	{ "limits", "pids", K_COUNT, LIM(pids), false },
	{ "limits", "disk", K_BYTES, LIM(disk), false },
	{ "limits", "inodes", K_COUNT, LIM(inodes), false },
	{ "limits", "output", K_BYTES, LIM(output), false },
	{ "limits", "file_size", K_BYTES, LIM(file_size), false },
	{ "limits", "nofile", K_COUNT, LIM(nofile), false },
	{ "limits", "tmp", K_BYTES, LIM(tmp), false },
	{ "limits", "home", K_BYTES, LIM(home), false },
	{ "env", "allow", K_ENV, 0, true },
	{ "mounts", "ro", K_MOUNTS, 0, true },
	{ "result", "max_files", K_COUNT, POL(max_files), false },
	{ "result", "max_file_bytes", K_BYTES, POL(max_file_bytes), false },
	{ "result", "max_total_bytes", K_BYTES, POL(max_total_bytes), false },
	{ "result", "allow_binary", K_BOOL, POL(allow_binary), true },
	{ "result", "allow_symlinks", K_BOOL, POL(allow_symlinks), true },
	{ "result", "output_dir", K_RELDIR, POL(output_dir), true },
};
#define NKEYS (sizeof keys / sizeof keys[0])
#define KEY_CHECKS NKEYS	/* "which key" for a check */

static const char *const sections[] = { "network", "limits", "env",
	"mounts", "checks", "result" };

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

static void
err_fmt(struct sbx_policy_error *err, const char *file, int line,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_set(err, file, line, fmt, ap);
	va_end(ap);
}

/* ---- string vectors -------------------------------------------------- */

static int
vec_push(char ***v, size_t *n, const char *s)
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

static bool
vec_has(char *const *v, size_t n, const char *s)
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
		if (vec_push(dst, dn, src[i]) < 0)
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

static bool
ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);

	return a >= b && strcmp(s + a - b, suf) == 0;
}

bool
sbx_policy_env_credential_shaped(const char *name)
{
	static const char *const exact[] = { "SSH_AUTH_SOCK", "SSH_AGENT_PID",
		"GPG_AGENT_INFO", "KRB5CCNAME", "DOCKER_HOST", "DOCKER_CONFIG",
		"DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS", "NETRC",
		"GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "KUBECONFIG" };
	static const char *const suffix[] = { "TOKEN", "TOKENS", "_KEY",
		"_KEYS", "APIKEY", "_PAT", "_COOKIE", "_COOKIES" };
	static const char *const infix[] = { "SECRET", "PASSWORD", "PASSWD",
		"CREDENTIAL", "API_KEY", "PRIVATE_KEY", "ACCESS_KEY" };
	static const char *const prefix[] = { "AWS_", "AZURE_", "GOOGLE_",
		"GCLOUD_", "OPENAI_", "ANTHROPIC_" };
	char up[256];
	size_t n;

	if (name == NULL || (n = strlen(name)) == 0 || n >= sizeof up)
		return true;
	for (size_t i = 0; i <= n; i++)
		up[i] = (char)toupper((unsigned char)name[i]);
	for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++) {
		if (strcmp(up, exact[i]) == 0)
			return true;
	}
	for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
		if (ends_with(up, suffix[i]))
			return true;
	}
	for (size_t i = 0; i < sizeof infix / sizeof infix[0]; i++) {
		if (strstr(up, infix[i]) != NULL)
			return true;
	}
	for (size_t i = 0; i < sizeof prefix / sizeof prefix[0]; i++) {
		if (strncmp(up, prefix[i], strlen(prefix[i])) == 0)
			return true;
	}
	return false;
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

/* ---- the INI handler ------------------------------------------------- */

static int
list_item(struct pctx *c, const struct key *k, const char *item)
{
	char norm[4096];
	const char *why = "";
	int rc = 0;

	switch (k->type) {
	case K_NET:
		if (!net_item(item, norm, sizeof norm, &why))
			return fail(c, "[network] allow: '%s': %s", item, why);
		rc = vec_push(&c->p->net_allow, &c->p->nnet_allow, norm);
		break;
	case K_ENV:
		if (!env_name_valid(item))
			return fail(c, "[env] allow: '%s' is not a variable "
			    "name", item);
		/* Never passed, even if listed (SPEC 8.3). */
		if (sbx_policy_env_credential_shaped(item)) {
			c->p->env_dropped++;
			return 1;
		}
		rc = vec_push(&c->p->env_allow, &c->p->nenv_allow, item);
		break;
	case K_MOUNTS:
		if (!mount_item(item, norm, sizeof norm, &why))
			return fail(c, "[mounts] ro: '%s': %s", item, why);
		rc = vec_push(&c->p->mounts_ro, &c->p->nmounts_ro, norm);
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
list_value(struct pctx *c, const struct key *k, const char *value)
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
reldir_value(struct pctx *c, const struct key *k, char *dst,
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
scalar_value(struct pctx *c, const struct key *k, const char *value)
{
	unsigned long long v = 0;
	bool b, ok;
	char *base = (char *)c->p;

	switch (k->type) {
	case K_DURATION:
		ok = parse_duration(value, &v);
		break;
	case K_BYTES:
		ok = parse_bytes(value, &v);
		break;
	case K_COUNT:
		ok = parse_u64(value, strlen(value), &v);
		break;
	case K_CPU:
		ok = parse_cpu(value, &v);
		break;
	case K_PORT:
		ok = parse_u64(value, strlen(value), &v) && v <= 65535;
		if (ok)
			c->p->loopback_port = (unsigned)v;
		return ok ? 1 : fail(c, "[%s] %s: bad port '%s'", k->section,
		    k->name, value);
	case K_EGRESS:
		if (strcmp(value, "fail") == 0)
			c->p->on_egress = SBX_EGRESS_FAIL;
		else if (strcmp(value, "record") == 0)
			c->p->on_egress = SBX_EGRESS_RECORD;
		else
			return fail(c, "[network] on_egress_violation: "
			    "'%s' is not fail or record", value);
		return 1;
	case K_BOOL:
		if (!parse_bool(value, &b))
			return fail(c, "[%s] %s: '%s' is not true or false",
			    k->section, k->name, value);
		*(bool *)(base + k->off) = b;
		return 1;
	case K_RELDIR:
		return reldir_value(c, k, base + k->off, value);
	default:
		assert(0);
		return 0;
	}
	if (!ok)
		return fail(c, "[%s] %s: bad value '%s'", k->section, k->name,
		    value);
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
	if (!known)
		return fail(c, "unknown section [%s]", section);
	if (strcmp(section, "checks") == 0)
		return check_value(c, name, value);
	for (size_t i = 0; i < NKEYS; i++) {
		const struct key *k = &keys[i];
		bool list = k->type == K_NET || k->type == K_ENV ||
		    k->type == K_MOUNTS;

		if (strcmp(section, k->section) != 0 ||
		    strcmp(name, k->name) != 0)
			continue;
		if (c->seen[i] != 0 && !list)
			return fail(c, "[%s] %s: set twice", section, name);
		if (c->seen[i] == 0) {
			c->seen[i] = c->line;
			/* A file that sets a list replaces the base's. */
			if (k->type == K_NET)
				vec_clear(&c->p->net_allow, &c->p->nnet_allow);
			else if (k->type == K_ENV) {
				vec_clear(&c->p->env_allow, &c->p->nenv_allow);
				c->p->env_dropped = 0;
			} else if (k->type == K_MOUNTS)
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

/* ---- narrowing ------------------------------------------------------- */

static int
key_index(const char *section, const char *name)
{
	for (size_t i = 0; i < NKEYS; i++) {
		if (strcmp(keys[i].section, section) == 0 &&
		    strcmp(keys[i].name, name) == 0)
			return (int)i;
	}
	assert(0);
	return 0;
}

/* Does op's allowlist cover host:port item (exactly or by "*")? */
static bool
net_covered(const struct sbx_policy *op, const char *item)
{
	const char *colon = strrchr(item, ':');
	char any[16];

	if (vec_has(op->net_allow, op->nnet_allow, item) ||
	    vec_has(op->net_allow, op->nnet_allow, "*:*"))
		return true;
	snprintf(any, sizeof any, "*%s", colon != NULL ? colon : "");
	return strlen(colon != NULL ? colon : "") < 8 &&
	    strcmp(item, "*:*") != 0 && vec_has(op->net_allow,
	    op->nnet_allow, any);
}

/*
 * The first key where p is wider than op: its index (KEY_CHECKS for a
 * check, *check its name), with err->msg said; -1 when p is within op.
 */
static int
first_wider(const struct sbx_policy *op, const struct sbx_policy *p,
    struct sbx_policy_error *err, const char **check)
{
	const char *base_op = (const char *)op, *base_p = (const char *)p;

	*check = NULL;
	for (size_t i = 0; i < p->nnet_allow; i++) {
		if (!net_covered(op, p->net_allow[i])) {
			err_fmt(err, NULL, 0, "[network] allow: '%s' is not "
			    "in the operator's allowlist", p->net_allow[i]);
			return key_index("network", "allow");
		}
	}
	if (p->on_egress == SBX_EGRESS_RECORD &&
	    op->on_egress == SBX_EGRESS_FAIL) {
		err_fmt(err, NULL, 0, "[network] on_egress_violation: record "
		    "is wider than the operator's fail");
		return key_index("network", "on_egress_violation");
	}
	if (p->loopback_port != 0 && p->loopback_port != op->loopback_port) {
		err_fmt(err, NULL, 0, "[network] loopback_port: %u is not the "
		    "operator's (%u)", p->loopback_port, op->loopback_port);
		return key_index("network", "loopback_port");
	}
	for (size_t i = 0; i < NKEYS; i++) {
		const struct key *k = &keys[i];
		unsigned long long a, b;
		bool x, y;

		if (k->off == 0)
			continue;
		if (k->type == K_RELDIR) {
			const char *so = base_op + k->off;
			const char *sp = base_p + k->off;

			if (sp[0] != '\0' && strcmp(so, sp) != 0) {
				err_fmt(err, NULL, 0, "[%s] %s: '%s' is not "
				    "the operator's ('%s')", k->section,
				    k->name, sp, so);
				return (int)i;
			}
			continue;
		}
		if (k->type == K_BOOL) {
			x = *(const bool *)(base_op + k->off);
			y = *(const bool *)(base_p + k->off);
			if (y && !x) {
				err_fmt(err, NULL, 0, "[%s] %s: true is wider "
				    "than the operator's false", k->section,
				    k->name);
				return (int)i;
			}
			continue;
		}
		a = *(const unsigned long long *)(base_op + k->off);
		b = *(const unsigned long long *)(base_p + k->off);
		if (b > a) {
			err_fmt(err, NULL, 0, "[%s] %s: %llu is above the "
			    "operator's %llu", k->section, k->name, b, a);
			return (int)i;
		}
	}
	for (size_t i = 0; i < p->nenv_allow; i++) {
		if (!vec_has(op->env_allow, op->nenv_allow, p->env_allow[i])) {
			err_fmt(err, NULL, 0, "[env] allow: '%s' is not in "
			    "the operator's allowlist", p->env_allow[i]);
			return key_index("env", "allow");
		}
	}
	for (size_t i = 0; i < p->nmounts_ro; i++) {
		if (!vec_has(op->mounts_ro, op->nmounts_ro, p->mounts_ro[i])) {
			err_fmt(err, NULL, 0, "[mounts] ro: '%s' is not one "
			    "of the operator's mounts", p->mounts_ro[i]);
			return key_index("mounts", "ro");
		}
	}
	/* Every check of the operator's stays, unchanged. */
	for (size_t i = 0; i < op->nchecks; i++) {
		bool same = false;

		for (size_t j = 0; j < p->nchecks; j++) {
			if (strcmp(op->checks[i].name, p->checks[j].name) == 0)
				same = strcmp(op->checks[i].cmd,
				    p->checks[j].cmd) == 0;
		}
		if (!same) {
			err_fmt(err, NULL, 0, "[checks] %s: the operator's "
			    "check may not be changed or removed",
			    op->checks[i].name);
			*check = op->checks[i].name;
			return (int)KEY_CHECKS;
		}
	}
	return -1;
}

int
sbx_policy_within(const struct sbx_policy *op, const struct sbx_policy *p,
    struct sbx_policy_error *err)
{
	const char *check;

	if (op == NULL || p == NULL)
		return -EINVAL;
	if (err != NULL)
		memset(err, 0, sizeof *err);
	return first_wider(op, p, err, &check) < 0 ? 0 : SBX_EWIDER;
}

int
sbx_policy_narrow(const struct sbx_policy *op, const char *text,
    const char *name, struct sbx_policy **out, struct sbx_policy_error *err)
{
	struct sbx_policy_error tmp;
	struct sbx_policy *p;
	const char *check;
	struct pctx c;
	int rc, k;

	if (out != NULL)
		*out = NULL;
	if (op == NULL || text == NULL || out == NULL)
		return -EINVAL;
	if (err == NULL)
		err = &tmp;
	memset(err, 0, sizeof *err);
	if ((p = sbx_policy_dup(op)) == NULL)
		return -ENOMEM;
	memset(&c, 0, sizeof c);
	if ((rc = parse_into(&c, p, text, name, err)) < 0)
		goto out;
	if ((k = first_wider(op, p, err, &check)) >= 0) {
		snprintf(err->file, sizeof err->file, "%s", name != NULL ?
		    name : "policy");
		if (k < (int)NKEYS)
			err->line = c.seen[k];
		for (size_t i = 0; k == (int)KEY_CHECKS && i < c.nclines; i++) {
			if (strcmp(c.clines[i].name, check) == 0)
				err->line = c.clines[i].line;
		}
		rc = SBX_EWIDER;
	}
out:
	pctx_free(&c);
	if (rc < 0) {
		sbx_policy_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

/* ---- canonical form and hash ----------------------------------------- */

struct sbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void
sb_add(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p != NULL ? b->p + b->len : NULL,
		    b->p != NULL ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if (b->p != NULL && b->len + (size_t)n < b->cap) {
			b->len += (size_t)n;
			return;
		}
		{
			size_t cap = (b->cap + (size_t)n + 1) * 2;
			char *np = realloc(b->p, cap);

			if (np == NULL) {
				b->oom = true;
				return;
			}
			b->p = np;
			b->cap = cap;
		}
	}
}

static void
sb_list(struct sbuf *b, const char *key, char *const *v, size_t n)
{
	sb_add(b, "%s =", key);
	for (size_t i = 0; i < n; i++)
		sb_add(b, "%s%s", i == 0 ? " " : ",", v[i]);
	sb_add(b, "\n");
}

char *
sbx_policy_canonical(const struct sbx_policy *p)
{
	struct sbuf b = { 0 };
	const char *section = "";

	if (p == NULL)
		return NULL;
	sb_add(&b, "# corral policy, canonical form 1\n[network]\n");
	sb_list(&b, "allow", p->net_allow, p->nnet_allow);
	sb_add(&b, "on_egress_violation = %s\nloopback_port = %u\n",
	    p->on_egress == SBX_EGRESS_RECORD ? "record" : "fail",
	    p->loopback_port);
	for (size_t i = 0; i < NKEYS; i++) {
		const struct key *k = &keys[i];

		if (k->off == 0 || strcmp(k->section, "limits") != 0)
			continue;
		if (strcmp(section, k->section) != 0)
			sb_add(&b, "[%s]\n", section = k->section);
		sb_add(&b, "%s = %llu\n", k->name,
		    *(const unsigned long long *)((const char *)p + k->off));
	}
	sb_add(&b, "[env]\n");
	sb_list(&b, "allow", p->env_allow, p->nenv_allow);
	sb_add(&b, "[mounts]\n");
	sb_list(&b, "ro", p->mounts_ro, p->nmounts_ro);
	sb_add(&b, "[checks]\n");
	for (size_t i = 0; i < p->nchecks; i++)
		sb_add(&b, "%s = %s\n", p->checks[i].name, p->checks[i].cmd);
	sb_add(&b, "[result]\nmax_files = %llu\nmax_file_bytes = %llu\n"
	    "max_total_bytes = %llu\nallow_binary = %s\nallow_symlinks = %s\n",
	    p->max_files, p->max_file_bytes, p->max_total_bytes,
	    p->allow_binary ? "true" : "false",
	    p->allow_symlinks ? "true" : "false");
	if (p->output_dir[0] != '\0')
		sb_add(&b, "output_dir = %s\n", p->output_dir);
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

int
sbx_policy_hash(const struct sbx_policy *p, char hex[SBX_SHA256_HEX])
{
	char *text;
	int rc;

	if (p == NULL || hex == NULL)
		return -EINVAL;
	if ((text = sbx_policy_canonical(p)) == NULL)
		return -ENOMEM;
	rc = sbx_sha256_hex(text, strlen(text), hex);
	free(text);
	return rc;
}

/* ---- the environment allowlist --------------------------------------- */

int
sbx_policy_env(const struct sbx_policy *p, char *const *environ,
    char ***out)
{
	char **v = NULL;
	size_t n = 0;

	if (p == NULL || out == NULL)
		return -EINVAL;
	if ((v = calloc(1, sizeof *v)) == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < p->nenv_allow; i++) {
		const char *name = p->env_allow[i];
		size_t len = strlen(name);

		if (sbx_policy_env_credential_shaped(name))
			continue;
		for (size_t j = 0; environ != NULL && environ[j] != NULL;
		    j++) {
			if (strncmp(environ[j], name, len) != 0 ||
			    environ[j][len] != '=')
				continue;
			if (vec_push(&v, &n, environ[j]) < 0) {
				sbx_strv_free(v);
				return -ENOMEM;
			}
			break;
		}
	}
	*out = v;
	return 0;
}
