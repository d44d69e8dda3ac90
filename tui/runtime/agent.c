/*
 * agent.c: how a known agent runs sandboxed (issue 18; SPEC 8.2, 8.3,
 * 8.5): the sibling of its rules file, agents/NAME.sandbox (the
 * operator's file of that name replaces the shipped one whole), read with
 * inih, and what it means on this host: the agent's command found in
 * corral's PATH (symlinks resolved) and the read-only mount its install
 * needs, its runtime, the model endpoint the operator configured for it
 * ([agent NAME] endpoint = URL in the config file) and the grant that
 * endpoint needs, the environment knobs and the files seeded into its
 * fresh HOME (templates), and the background destinations refused without
 * ending the lease, and the daemons a trusted_local lease may leave
 * running ([processes] expected_daemon, track.c). `corral new` resolves it before the preflight and
 * leaves what the holder needs in the lease directory ("agent.json");
 * `corral doctor --agent` reports it.
 */
#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "pty/pty.h"
#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"
#include "tui/runtime/runtime_int.h"

#define PROFILE_MAX (64u * 1024u)
#define TEMPLATE_MAX (64u * 1024u)
#define ENV_MAX 32
#define HOME_MAX SBX_AGENT_FILES_MAX
#define BACKGROUND_MAX 64
#define WORKSPACE_MAX 32	/* [workspace] patterns of each kind */
#define PATTERN_MAX 200

struct prof {
	const char *file;	/* for messages: at most 300 bytes shown */
	char command[256];
	char root[64];
	char runtime[64];
	char hint[256];
	char args[256];
	char base_url_env[64];
	char base_path[64];	/* after the gateway's address: "/v1" */
	char key_env[64];
	char placeholder[128];
	char api[16];
	char *env[ENV_MAX][2];
	int nenv;
	char *home[HOME_MAX][2];
	int nhome;
	char *background[BACKGROUND_MAX];
	int nbackground;
	char *exclude[WORKSPACE_MAX];	/* [workspace]: left out of the result */
	int nexclude;
	char *review[WORKSPACE_MAX];	/* ... flagged "agent" for review */
	int nreview;
	/* [processes] expected_daemon: comms that may outlive the lease */
	char daemon[TUI_DAEMON_MAX][TUI_COMM_MAX];
	int ndaemon;
	char err[512];
};

static void
prof_clear(struct prof *p)
{
	for (int i = 0; i < p->nenv; i++) {
		free(p->env[i][0]);
		free(p->env[i][1]);
	}
	for (int i = 0; i < p->nhome; i++) {
		free(p->home[i][0]);
		free(p->home[i][1]);
	}
	for (int i = 0; i < p->nbackground; i++)
		free(p->background[i]);
	for (int i = 0; i < p->nexclude; i++)
		free(p->exclude[i]);
	for (int i = 0; i < p->nreview; i++)
		free(p->review[i]);
	memset(p, 0, sizeof *p);
}

static int
bad(struct prof *p, int line, const char *what)
{
	if (p->err[0] == '\0')
		snprintf(p->err, sizeof p->err, "%.300s:%d: %s", p->file,
		    line, what);
	return 0;
}

static int
set_str(struct prof *p, char *dst, size_t dsz, const char *v, int line)
{
	if (dst[0] != '\0')
		return bad(p, line, "duplicate key");
	if (strlen(v) >= dsz || v[0] == '\0')
		return bad(p, line, "empty or too long a value");
	snprintf(dst, dsz, "%s", v);
	return 1;
}

static bool
name_ok(const char *s)
{
	if (s[0] == '\0' || (s[0] >= '0' && s[0] <= '9'))
		return false;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789_") == strlen(s);
}

/*
 * A [workspace] pattern: gitignore-style, of the agent's own state in
 * /work; no negation, no "." or ".." component, no backslash.
 */
static bool
pattern_ok(const char *s)
{
	size_t n = strlen(s);
	const char *c;

	if (n == 0 || n > PATTERN_MAX || s[0] == '!' || strchr(s, '\\') ||
	    strcmp(s, "/") == 0)
		return false;
	for (c = s; *c != '\0'; c++)
		if ((unsigned char)*c < 0x21 || *c == 0x7f)
			return false;
	for (c = s; c != NULL; c = strchr(c, '/'), c = c != NULL ? c + 1 :
	    NULL) {
		size_t k = strcspn(c, "/");

		if ((k == 1 && c[0] == '.') || (k == 2 && c[0] == '.' &&
		    c[1] == '.'))
			return false;
	}
	return true;
}

/*
 * [processes] expected_daemon = COMM...: an executable's name as the
 * kernel keeps it (comm, at most 15 bytes), of a daemon the agent starts
 * that may outlive its lease (track.c leaves it running, listed).
 */
static int
processes_key(struct prof *p, const char *name, const char *value, int line)
{
	char dup[256], *tok, *save = NULL;

	if (strcmp(name, "expected_daemon") != 0)
		return bad(p, line, "unknown key in [processes] "
		    "(expected_daemon)");
	if (strlen(value) >= sizeof dup)
		return bad(p, line, "too long a value");
	snprintf(dup, sizeof dup, "%s", value);
	for (tok = strtok_r(dup, ", \t", &save); tok != NULL;
	    tok = strtok_r(NULL, ", \t", &save)) {
		if (strlen(tok) >= TUI_COMM_MAX || strspn(tok,
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		    "0123456789._+-") != strlen(tok))
			return bad(p, line, "not a program name of at most "
			    "15 letters, digits or ._+-");
		if (p->ndaemon == TUI_DAEMON_MAX)
			return bad(p, line, "too many expected daemons");
		snprintf(p->daemon[p->ndaemon++], TUI_COMM_MAX, "%s", tok);
	}
	return 1;
}

/* [workspace] exclude = PATTERN... / review = PATTERN... */
static int
workspace_key(struct prof *p, const char *name, const char *value, int line)
{
	char *dup, *tok, *save = NULL, **v;
	int *n;

	if (strcmp(name, "exclude") == 0) {
		v = p->exclude;
		n = &p->nexclude;
	} else if (strcmp(name, "review") == 0) {
		v = p->review;
		n = &p->nreview;
	} else
		return bad(p, line, "unknown key in [workspace] (exclude, "
		    "review)");
	if ((dup = strdup(value)) == NULL)
		return bad(p, line, "out of memory");
	for (tok = strtok_r(dup, " \t", &save); tok != NULL;
	    tok = strtok_r(NULL, " \t", &save)) {
		if (!pattern_ok(tok)) {
			free(dup);
			return bad(p, line, "a [workspace] pattern is a path "
			    "pattern without '!', '\\', . or ..");
		}
		if (*n == WORKSPACE_MAX || (v[*n] = strdup(tok)) == NULL) {
			free(dup);
			return bad(p, line, "too many [workspace] patterns");
		}
		(*n)++;
	}
	free(dup);
	return 1;
}

static int
handler(void *user, const char *section, const char *name,
    const char *value, int line)
{
	struct prof *p = user;

	if (strcmp(section, "install") == 0) {
		if (strcmp(name, "command") == 0)
			return set_str(p, p->command, sizeof p->command, value,
			    line);
		if (strcmp(name, "root") == 0)
			return set_str(p, p->root, sizeof p->root, value, line);
		if (strcmp(name, "runtime") == 0)
			return set_str(p, p->runtime, sizeof p->runtime, value,
			    line);
		if (strcmp(name, "hint") == 0)
			return set_str(p, p->hint, sizeof p->hint, value, line);
		if (strcmp(name, "args") == 0)
			return set_str(p, p->args, sizeof p->args, value, line);
		return bad(p, line, "unknown key in [install] (command, root, "
		    "runtime, args, hint)");
	}
	if (strcmp(section, "model") == 0) {
		if (strcmp(name, "base_url_env") == 0 ||
		    strcmp(name, "key_env") == 0) {
			if (!name_ok(value))
				return bad(p, line, "not a variable name");
			return name[0] == 'b' ? set_str(p, p->base_url_env,
			    sizeof p->base_url_env, value, line) : set_str(p,
			    p->key_env, sizeof p->key_env, value, line);
		}
		if (strcmp(name, "placeholder") == 0)
			return set_str(p, p->placeholder,
			    sizeof p->placeholder, value, line);
		if (strcmp(name, "base_path") == 0) {
			if (value[0] != '/' || strstr(value, "..") != NULL ||
			    strspn(value, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij"
			    "klmnopqrstuvwxyz0123456789._-/") != strlen(value))
				return bad(p, line, "base_path is a URL path "
				    "(/v1)");
			return set_str(p, p->base_path, sizeof p->base_path,
			    value, line);
		}
		if (strcmp(name, "api") == 0) {
			enum sbx_gateway_api api;

			if (sbx_gateway_api_parse(value, &api) < 0)
				return bad(p, line, "api is anthropic or "
				    "openai");
			return set_str(p, p->api, sizeof p->api, value, line);
		}
		return bad(p, line, "unknown key in [model] (base_url_env, "
		    "base_path, key_env, placeholder, api)");
	}
	if (strcmp(section, "env") == 0) {
		if (!name_ok(name))
			return bad(p, line, "not a variable name");
		if (p->nenv == ENV_MAX)
			return bad(p, line, "too many variables");
		if ((p->env[p->nenv][0] = strdup(name)) == NULL ||
		    (p->env[p->nenv][1] = strdup(value)) == NULL) {
			free(p->env[p->nenv][0]);
			return bad(p, line, "out of memory");
		}
		p->nenv++;
		return 1;
	}
	if (strcmp(section, "home") == 0) {
		if (!sbx_agent_path_ok(name) || !sbx_agent_path_ok(value))
			return bad(p, line, "a [home] file and its template "
			    "are relative paths without . or ..");
		if (p->nhome == HOME_MAX)
			return bad(p, line, "too many [home] files");
		if ((p->home[p->nhome][0] = strdup(name)) == NULL ||
		    (p->home[p->nhome][1] = strdup(value)) == NULL) {
			free(p->home[p->nhome][0]);
			return bad(p, line, "out of memory");
		}
		p->nhome++;
		return 1;
	}
	if (strcmp(section, "background") == 0) {
		char *dup, *tok, *save = NULL;

		if (strcmp(name, "refuse") != 0)
			return bad(p, line, "unknown key in [background] "
			    "(refuse)");
		if ((dup = strdup(value)) == NULL)
			return bad(p, line, "out of memory");
		for (tok = strtok_r(dup, ", \t", &save); tok != NULL;
		    tok = strtok_r(NULL, ", \t", &save)) {
			if (!sbx_egress_entry_valid(tok)) {
				free(dup);
				return bad(p, line, "not an exact host:port");
			}
			if (p->nbackground == BACKGROUND_MAX) {
				free(dup);
				return bad(p, line, "too many destinations");
			}
			if ((p->background[p->nbackground] = strdup(tok)) ==
			    NULL) {
				free(dup);
				return bad(p, line, "out of memory");
			}
			p->nbackground++;
		}
		free(dup);
		return 1;
	}
	if (strcmp(section, "workspace") == 0)
		return workspace_key(p, name, value, line);
	if (strcmp(section, "processes") == 0)
		return processes_key(p, name, value, line);
	return bad(p, line, "unknown section (install, model, env, home, "
	    "background, workspace, processes)");
}

/* inih's handler without the line: the line comes from the reader. */
struct rd {
	struct prof *p;
	const char *s, *end;
	int line;
};

static char *
reader(char *str, int num, void *stream)
{
	struct rd *r = stream;
	size_t n = 0;

	if (r->s >= r->end || num < 2)
		return NULL;
	while (r->s < r->end && n + 1 < (size_t)num) {
		char ch = *r->s++;

		str[n++] = ch;
		if (ch == '\n')
			break;
	}
	str[n] = '\0';
	r->line++;
	return str;
}

static int
line_cb(void *user, const char *section, const char *name, const char *value)
{
	struct rd *r = user;

	return handler(r->p, section, name, value, r->line) ? 1 : 0;
}

/* Parse the text of a .sandbox file into p; 0 or -EINVAL (p->err). */
static int
prof_parse(struct prof *p, const char *file, const char *text, size_t len)
{
	struct rd r = { p, text, text + len, 0 };
	int rc;

	memset(p, 0, sizeof *p);
	p->file = file;
	rc = ini_parse_stream(reader, &r, line_cb, &r);
	if (rc != 0 && p->err[0] == '\0')
		snprintf(p->err, sizeof p->err, "%.300s:%d: not an INI "
		    "line", file, rc > 0 ? rc : 0);
	return p->err[0] != '\0' ? -EINVAL : 0;
}

/* ---- finding things ------------------------------------------------------ */

static bool
under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && (path[n] == '/' ||
	    path[n] == '\0');
}

/* A system directory every zone has (SPEC 8.3: the root from /usr up). */
static bool
system_path(const char *real)
{
	return under(real, "/usr");
}

/* name in PATH (or name itself when it holds a '/'): 0 and out, -ENOENT. */
static int
which(const char *name, char *out, size_t outsz)
{
	const char *path = getenv("PATH"), *c;
	struct stat sb;

	if (strchr(name, '/') != NULL) {
		if (stat(name, &sb) < 0 || !S_ISREG(sb.st_mode) ||
		    access(name, X_OK) < 0)
			return -ENOENT;
		if (name[0] == '/')
			snprintf(out, outsz, "%s", name);
		else if (realpath(name, out) == NULL)
			return -ENOENT;
		return 0;
	}
	if (path == NULL || path[0] == '\0')
		path = "/usr/local/bin:/usr/bin:/bin";
	for (c = path; *c != '\0';) {
		size_t n = strcspn(c, ":");

		if (n > 0 && c[0] == '/' && n + strlen(name) + 2 < outsz) {
			snprintf(out, outsz, "%.*s/%s", (int)n, c, name);
			if (stat(out, &sb) == 0 && S_ISREG(sb.st_mode) &&
			    access(out, X_OK) == 0)
				return 0;
		}
		c += n;
		if (*c == ':')
			c++;
	}
	return -ENOENT;
}

/* The nearest directory of real named root, else real itself. */
static void
install_dir(const char *real, const char *root, char *out, size_t outsz)
{
	char buf[PATH_MAX];
	char *slash;

	snprintf(buf, sizeof buf, "%s", real);
	if (root[0] != '\0') {
		size_t rl = strlen(root);

		for (;;) {
			if ((slash = strrchr(buf, '/')) == NULL || slash == buf)
				break;
			*slash = '\0';
			if ((slash = strrchr(buf, '/')) != NULL &&
			    strlen(slash + 1) == rl &&
			    strcmp(slash + 1, root) == 0) {
				snprintf(out, outsz, "%s", buf);
				return;
			}
		}
	}
	/* A single program (a native build): that file alone. */
	snprintf(out, outsz, "%s", real);
}

/*
 * The endpoint URL the operator configured: http to a loopback address
 * and port (a local model server: the host loopback grant), or https to a
 * name (the allowlist). 0 or -EINVAL with why.
 */
static int
endpoint_parse(const char *url, struct tui_agent *a, char *why, size_t whysz)
{
	const char *rest, *slash, *colon, *host;
	char hostbuf[256];
	unsigned long port = 0;
	size_t hn;
	bool https;

	if (strncmp(url, "http://", 7) == 0) {
		https = false;
		rest = url + 7;
	} else if (strncmp(url, "https://", 8) == 0) {
		https = true;
		rest = url + 8;
	} else
		goto invalid;
	slash = strchr(rest, '/');
	hn = slash != NULL ? (size_t)(slash - rest) : strlen(rest);
	if (hn == 0 || hn >= sizeof hostbuf || memchr(rest, '@', hn) != NULL)
		goto invalid;
	memcpy(hostbuf, rest, hn);
	hostbuf[hn] = '\0';
	host = hostbuf;
	if (strcmp(host, "[::1]") == 0 || strncmp(host, "[::1]:", 6) == 0)
		colon = host + 5;
	else if (host[0] == '[')
		goto invalid;
	else
		colon = strrchr(host, ':');
	if (colon != NULL && *colon == ':') {
		char *e;

		port = strtoul(colon + 1, &e, 10);
		if (*e != '\0' || port == 0 || port > 65535 || colon[1] == '0')
			goto invalid;
		hostbuf[colon - host] = '\0';
	} else
		port = https ? 443 : 80;
	if (strcmp(hostbuf, "127.0.0.1") == 0 ||
	    strcmp(hostbuf, "localhost") == 0 || strcmp(hostbuf, "[::1]") == 0) {
		if (https) {
			snprintf(why, whysz, "endpoint '%.300s': a local model "
			    "server is reached over plain http (the sandbox "
			    "has no TLS to it)", url);
			return -EINVAL;
		}
		if (colon == NULL) {
			snprintf(why, whysz, "endpoint '%.300s': a loopback "
			    "endpoint names its port", url);
			return -EINVAL;
		}
		a->loopback_port = (unsigned)port;
		snprintf(a->base_url, sizeof a->base_url, "http://127.0.0.1:%lu%s",
		    port, slash != NULL ? slash : "");
		return 0;
	}
	if (!https) {
		snprintf(why, whysz, "endpoint '%.300s': only a loopback "
		    "endpoint may be plain http; any other is https", url);
		return -EINVAL;
	}
	snprintf(a->allow, sizeof a->allow, "%.255s:%lu", hostbuf, port);
	if (!sbx_egress_entry_valid(a->allow)) {
		snprintf(why, whysz, "endpoint '%.300s': the host is not a "
		    "plain name (no IP literal)", url);
		a->allow[0] = '\0';
		return -EINVAL;
	}
	snprintf(a->base_url, sizeof a->base_url, "%s", url);
	return 0;
invalid:
	snprintf(why, whysz, "endpoint '%.300s' is not a URL "
	    "http://127.0.0.1:PORT or https://HOST[:PORT][/PATH]", url);
	return -EINVAL;
}

/* {{work}}, {{home}}, {{base_url}} in s; {{key_tail}} is kept for later. */
static char *
render(const char *s, const struct tui_agent *a)
{
	static const char *const keys[] = { "{{work}}", "{{home}}",
		"{{base_url}}" };
	const char *vals[] = { "/work", SBX_BWRAP_HOME, a->base_url };
	size_t cap = strlen(s) + 1, len = 0;
	char *out = malloc(cap);

	if (out == NULL)
		return NULL;
	while (*s != '\0') {
		size_t k;

		for (k = 0; k < 3; k++)
			if (strncmp(s, keys[k], strlen(keys[k])) == 0)
				break;
		if (k < 3) {
			size_t vl = strlen(vals[k]);
			char *nb;

			if (len + vl + strlen(s) + 1 > cap) {
				cap = len + vl + strlen(s) + 1;
				if ((nb = realloc(out, cap)) == NULL) {
					free(out);
					return NULL;
				}
				out = nb;
			}
			memcpy(out + len, vals[k], vl);
			len += vl;
			s += strlen(keys[k]);
			continue;
		}
		out[len++] = *s++;
	}
	out[len] = '\0';
	return out;
}

/* setup[key] = the patterns (none: no key). */
static int
workspace_json(json_t *setup, const char *key, char *const *v, int n)
{
	json_t *a;

	if (n == 0)
		return 0;
	if ((a = json_array()) == NULL)
		return -ENOMEM;
	for (int i = 0; i < n; i++)
		if (json_array_append_new(a, json_string(v[i])) < 0) {
			json_decref(a);
			return -ENOMEM;
		}
	return json_object_set_new(setup, key, a) < 0 ? -ENOMEM : 0;
}

/* The profile's file: the operator's first, else the shipped one. */
static int
profile_read(struct tui_ctx *c, const char *name, char *path, size_t pathsz,
    char **text, size_t *len)
{
	char user[PATH_MAX], *shipped = tui_ctx_data_path(c, "agents");
	const char *dirs[2];
	int n = 0, rc = -ENOENT;

	if (pty_rules_user_dir(user, sizeof user) == 0)
		dirs[n++] = user;
	if (shipped != NULL)
		dirs[n++] = shipped;
	for (int i = 0; i < n && rc == -ENOENT; i++) {
		snprintf(path, pathsz, "%s/%s.sandbox", dirs[i], name);
		if (access(path, F_OK) == 0)
			rc = tui_sandbox_read_file(path, PROFILE_MAX, text, len);
	}
	free(shipped);
	return rc;
}

/* The API the profile speaks: its own api = NAME, else its key's name. */
static const char *
prof_api(const struct prof *p)
{
	if (p->api[0] != '\0')
		return p->api;
	if (strcmp(p->key_env, "ANTHROPIC_API_KEY") == 0)
		return "anthropic";
	if (strcmp(p->key_env, "OPENAI_API_KEY") == 0)
		return "openai";
	return NULL;
}

bool
tui_agent_uses_gateway(struct tui_ctx *c, const char *name)
{
	struct tui_config cf;
	struct prof p;
	char path[PATH_MAX], *text = NULL;
	const char *api;
	size_t len = 0;
	bool yes = false;

	if (name == NULL || profile_read(c, name, path, sizeof path, &text,
	    &len) < 0)
		return false;
	if (prof_parse(&p, path, text, len) == 0 &&
	    (api = prof_api(&p)) != NULL) {
		tui_config_default(&cf);
		TUI_BEST_EFFORT(tui_config_load(&cf, NULL, NULL));
		yes = tui_config_provider(&cf, api) != NULL;
	}
	prof_clear(&p);
	free(text);
	return yes;
}

int
tui_agent_expected_daemons(struct tui_ctx *c, const char *name,
    char (*out)[TUI_COMM_MAX])
{
	struct prof p;
	char path[PATH_MAX], *text = NULL;
	size_t len = 0;
	int n = 0;

	if (name == NULL || profile_read(c, name, path, sizeof path, &text,
	    &len) < 0)
		return 0;
	if (prof_parse(&p, path, text, len) == 0)
		for (n = 0; n < p.ndaemon; n++)
			memcpy(out[n], p.daemon[n], TUI_COMM_MAX);
	else
		fprintf(stderr, "corral: %s\n", p.err);
	prof_clear(&p);
	free(text);
	return n;
}

/*
 * The [provider API] section: the agent reaches its model through the
 * lease's gateway at SBX_GATEWAY_URL; the upstream and the key are the
 * holder's (agent.json's "gateway"), never the zone's.
 */
static int
gateway_setup(struct tui_agent *a, const struct tui_config_provider *pv,
    char *why, size_t whysz)
{
	struct sbx_gateway_url u;
	const char *up = pv->upstream[0] != '\0' ? pv->upstream :
	    strcmp(pv->name, "anthropic") == 0 ? "https://api.anthropic.com" :
	    "https://api.openai.com";
	json_t *g;

	if (sbx_gateway_url_parse(up, &u, why, whysz) < 0) {
		a->status = TUI_AGENT_ENDPOINT_INVALID;
		return -EINVAL;
	}
	if (pv->key_file[0] != '\0' && access(pv->key_file, R_OK) < 0) {
		a->status = TUI_AGENT_ENDPOINT_INVALID;
		snprintf(why, whysz, "[provider %s] key_file %.300s: %s",
		    pv->name, pv->key_file, strerror(errno));
		return -EINVAL;
	}
	if (pv->ca_file[0] != '\0' && access(pv->ca_file, R_OK) < 0) {
		a->status = TUI_AGENT_ENDPOINT_INVALID;
		snprintf(why, whysz, "[provider %s] ca_file %.300s: %s",
		    pv->name, pv->ca_file, strerror(errno));
		return -EINVAL;
	}
	a->gateway = true;
	snprintf(a->endpoint, sizeof a->endpoint, "%s", up);
	snprintf(a->base_url, sizeof a->base_url, "%s", SBX_GATEWAY_URL);
	a->allow[0] = '\0';
	a->loopback_port = 0;
	g = json_pack("{s:s, s:s}", "api", pv->name, "upstream", up);
	if (g == NULL)
		return -ENOMEM;
	if (pv->key_file[0] != '\0')
		json_object_set_new(g, "key_file", json_string(pv->key_file));
	if (pv->ca_file[0] != '\0')
		json_object_set_new(g, "ca_file", json_string(pv->ca_file));
	if (pv->spend_cap[0] != '\0')
		json_object_set_new(g, "spend_cap", json_string(pv->spend_cap));
	json_object_set_new(a->setup, "gateway", g);
	return 0;
}

void
tui_agent_clear(struct tui_agent *a)
{
	json_decref(a->setup);
	memset(a, 0, sizeof *a);
}

static int
fail(struct tui_agent *a, enum tui_agent_status st, char *why, size_t whysz,
    const char *fmt, const char *arg)
{
	a->status = st;
	snprintf(why, whysz, fmt, arg);
	return -EINVAL;
}

int
tui_agent_setup(struct tui_ctx *c, const char *agent, char *const *cmd,
    struct tui_agent *a, char *why, size_t whysz)
{
	const struct pty_rules_agent *ra = NULL;
	struct pty_rules *rules;
	const struct tui_config_provider *pv;
	struct tui_config cf;
	struct prof p;
	char path[PATH_MAX], *text = NULL, *dir;
	const char *ep, *cmd0;
	json_t *env, *home, *bg, *pathv;
	size_t len = 0;
	int rc, argc = 0;

	memset(a, 0, sizeof *a);
	if (whysz > 0)
		why[0] = '\0';
	if ((rules = tui_ctx_rules_load(c, NULL, NULL)) == NULL)
		return -ENOMEM;
	if (agent != NULL)
		ra = pty_rules_find(rules, agent);
	else if (cmd != NULL) {
		while (cmd[argc] != NULL)
			argc++;
		ra = pty_rules_identify(rules, (const char *const *)cmd, argc);
	}
	if (ra != NULL)
		snprintf(a->name, sizeof a->name, "%s", pty_rules_agent_name(ra));
	pty_rules_free(rules);
	if (a->name[0] == '\0')
		return 0;	/* no profile: nothing to set up */
	rc = profile_read(c, a->name, a->profile_file, sizeof a->profile_file,
	    &text, &len);
	if (rc == -ENOENT) {
		a->profile_file[0] = '\0';
		return 0;	/* a rules file alone: detection only */
	}
	if (rc < 0)
		return fail(a, TUI_AGENT_PROFILE_INVALID, why, whysz,
		    "cannot read %s", a->profile_file);
	rc = prof_parse(&p, a->profile_file, text, len);
	free(text);
	text = NULL;
	if (rc < 0) {
		a->status = TUI_AGENT_PROFILE_INVALID;
		snprintf(why, whysz, "%s", p.err);
		prof_clear(&p);
		return -EINVAL;
	}
	a->sandboxed = true;
	snprintf(a->command, sizeof a->command, "%s", p.command);
	snprintf(a->hint, sizeof a->hint, "%s", p.hint);
	/* The install: the command line's program, else the profile's. */
	cmd0 = cmd != NULL && cmd[0] != NULL ? cmd[0] : p.command;
	if (cmd0[0] == '\0') {
		rc = fail(a, TUI_AGENT_NOT_INSTALLED, why, whysz, "%s names "
		    "no command: it runs the lease's", a->profile_file);
		prof_clear(&p);
		return rc;
	}
	if (which(cmd0, a->exe, sizeof a->exe) < 0) {
		rc = fail(a, TUI_AGENT_NOT_INSTALLED, why, whysz, "'%s' is not "
		    "installed (not found in PATH)", cmd0);
		if (p.hint[0] != '\0') {
			size_t l = strlen(why);

			snprintf(why + l, whysz - l, ": %s", p.hint);
		}
		prof_clear(&p);
		return rc;
	}
	if (realpath(a->exe, a->real) == NULL) {
		rc = fail(a, TUI_AGENT_NOT_INSTALLED, why, whysz, "'%s': its "
		    "installation does not resolve", a->exe);
		prof_clear(&p);
		return rc;
	}
	if (!system_path(a->real))
		install_dir(a->real, p.root, a->install, sizeof a->install);
	/* argv[0] as the zone sees it: the PATH entry when it is mounted. */
	if (!system_path(a->exe) && (a->install[0] == '\0' ||
	    !under(a->exe, a->install)))
		snprintf(a->exe, sizeof a->exe, "%s", a->real);
	if (p.runtime[0] != '\0') {
		char rt[PATH_MAX];

		if (which(p.runtime, rt, sizeof rt) < 0 ||
		    realpath(rt, a->runtime) == NULL) {
			rc = fail(a, TUI_AGENT_RUNTIME_NOT_FOUND, why, whysz,
			    "its runtime '%s' is not found in PATH",
			    p.runtime);
			prof_clear(&p);
			return rc;
		}
		if (!system_path(a->runtime)) {
			/* PREFIX/bin/node: PREFIX mounted, its bin on PATH */
			snprintf(a->runtime_dir, sizeof a->runtime_dir, "%s",
			    a->runtime);
			if ((dir = strrchr(a->runtime_dir, '/')) != NULL)
				*dir = '\0';
		}
	}
	/* The model endpoint the operator configured for it: its API's
	 * gateway, else an endpoint the zone reaches itself. */
	tui_config_default(&cf);
	TUI_BEST_EFFORT(tui_config_load(&cf, NULL, NULL));
	if (prof_api(&p) != NULL)
		snprintf(a->api, sizeof a->api, "%s", prof_api(&p));
	pv = a->api[0] != '\0' ? tui_config_provider(&cf, a->api) : NULL;
	if (pv == NULL &&
	    (ep = tui_config_agent_endpoint(&cf, a->name)) != NULL) {
		snprintf(a->endpoint, sizeof a->endpoint, "%s", ep);
		if (endpoint_parse(ep, a, why, whysz) < 0) {
			a->status = TUI_AGENT_ENDPOINT_INVALID;
			prof_clear(&p);
			return -EINVAL;
		}
	}
	/* What the holder needs, rendered but for the key's tail. */
	a->setup = json_object();
	env = json_array();
	home = json_array();
	bg = json_array();
	pathv = json_array();
	if (a->setup == NULL || env == NULL || home == NULL || bg == NULL ||
	    pathv == NULL) {
		json_decref(env);
		json_decref(home);
		json_decref(bg);
		json_decref(pathv);
		prof_clear(&p);
		return -ENOMEM;
	}
	json_object_set_new(a->setup, "profile", json_string(a->name));
	json_object_set_new(a->setup, "exe", json_string(a->exe));
	json_object_set_new(a->setup, "env", env);
	json_object_set_new(a->setup, "home", home);
	json_object_set_new(a->setup, "background", bg);
	json_object_set_new(a->setup, "path", pathv);
	if (pv != NULL && (rc = gateway_setup(a, pv, why, whysz)) < 0) {
		prof_clear(&p);
		return rc;
	}
	if (p.args[0] != '\0') {
		json_t *av = json_array();
		char *save = NULL, *tok;

		/* Its own options, right after its name (blank-separated). */
		for (tok = strtok_r(p.args, " \t", &save); av != NULL &&
		    tok != NULL; tok = strtok_r(NULL, " \t", &save))
			json_array_append_new(av, json_string(tok));
		json_object_set_new(a->setup, "args", av);
	}
	if (a->runtime_dir[0] != '\0')
		json_array_append_new(pathv, json_string(a->runtime_dir));
	for (int i = 0; i < p.nenv; i++) {
		char *v;

		/* A knob about the endpoint only when one is configured. */
		if (strstr(p.env[i][1], "{{base_url}}") != NULL &&
		    a->base_url[0] == '\0')
			continue;
		if ((v = render(p.env[i][1], a)) == NULL)
			goto oom;
		json_array_append_new(env, json_pack("[s,s]", p.env[i][0], v));
		free(v);
	}
	if (p.base_url_env[0] != '\0' && a->base_url[0] != '\0') {
		char url[sizeof a->base_url + sizeof p.base_path];

		/* Through the gateway, the path its SDK expects (an
		 * OpenAI-compatible one adds /chat/completions to /v1). */
		snprintf(url, sizeof url, "%s%s", a->base_url, a->gateway ?
		    p.base_path : "");
		json_array_append_new(env, json_pack("[s,s]", p.base_url_env,
		    url));
	}
	if (p.key_env[0] != '\0') {
		json_object_set_new(a->setup, "key_env", json_string(p.key_env));
		json_object_set_new(a->setup, "placeholder",
		    json_string(p.placeholder));
	}
	for (int i = 0; i < p.nhome; i++) {
		char tpath[PATH_MAX - 256], *t = NULL, *v;
		size_t tl = 0;

		snprintf(tpath, sizeof tpath, "%.3800s", a->profile_file);
		if ((dir = strrchr(tpath, '/')) != NULL)
			*dir = '\0';
		snprintf(path, sizeof path, "%s/%.200s", tpath, p.home[i][1]);
		if ((rc = tui_sandbox_read_file(path, TEMPLATE_MAX, &t,
		    &tl)) < 0 || memchr(t, '\0', tl) != NULL) {
			free(t);
			rc = fail(a, TUI_AGENT_PROFILE_INVALID, why, whysz,
			    "template %s does not read", path);
			prof_clear(&p);
			return rc;
		}
		v = render(t, a);
		free(t);
		if (v == NULL)
			goto oom;
		json_array_append_new(home, json_pack("[s,s]", p.home[i][0],
		    v));
		free(v);
	}
	for (int i = 0; i < p.nbackground; i++)
		json_array_append_new(bg, json_string(p.background[i]));
	if (workspace_json(a->setup, "exclude", p.exclude, p.nexclude) < 0 ||
	    workspace_json(a->setup, "review", p.review, p.nreview) < 0)
		goto oom;
	prof_clear(&p);
	return 0;
oom:
	prof_clear(&p);
	return -ENOMEM;
}

int
tui_agent_grant(const struct tui_agent *a, struct sbx_policy *pol, char *why,
    size_t whysz)
{
	int rc = 0;

	if (!a->sandboxed)
		return 0;
	if (a->install[0] != '\0')
		rc = sbx_policy_grant(pol, NULL, 0, a->install, why, whysz);
	if (rc == 0 && a->runtime_dir[0] != '\0') {
		char prefix[PATH_MAX], *s;

		/* PREFIX/bin/node: the whole PREFIX (its lib/ too). */
		snprintf(prefix, sizeof prefix, "%s", a->runtime_dir);
		if ((s = strrchr(prefix, '/')) != NULL && s != prefix)
			*s = '\0';
		rc = sbx_policy_grant(pol, NULL, 0, prefix, why, whysz);
	}
	if (rc == 0 && (a->allow[0] != '\0' || a->loopback_port != 0))
		rc = sbx_policy_grant(pol, a->allow[0] ? a->allow : NULL,
		    a->loopback_port, NULL, why, whysz);
	return rc;
}

int
tui_agent_endpoint_entry(const char *url, char *entry, size_t entrysz)
{
	struct tui_agent a;
	char why[8];

	memset(&a, 0, sizeof a);
	if (endpoint_parse(url, &a, why, sizeof why) < 0)
		return -EINVAL;
	if (a.allow[0] != '\0')
		snprintf(entry, entrysz, "%s", a.allow);
	else
		snprintf(entry, entrysz, "localhost:%u", a.loopback_port);
	return 0;
}

const char *
tui_agent_status_name(enum tui_agent_status st)
{
	switch (st) {
	case TUI_AGENT_OK: return "ok";
	case TUI_AGENT_NOT_INSTALLED: return "agent_not_installed";
	case TUI_AGENT_RUNTIME_NOT_FOUND: return "agent_runtime_not_found";
	case TUI_AGENT_ENDPOINT_INVALID: return "agent_endpoint_invalid";
	case TUI_AGENT_PROFILE_INVALID: return "agent_profile_invalid";
	}
	return "?";
}
