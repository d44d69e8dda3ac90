/*
 * config.c: the operator's config file (SPEC 5.6), read with inih from
 * $XDG_CONFIG_HOME/corral/config (else ~/.config/corral/config): the
 * notification hook the holder runs on blocked, done and failed, and the
 * bell / OSC 9 switches the console reads. A malformed file is reported
 * with its file and line and ignored whole: the defaults stay in force.
 */
#include <assert.h>
#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tui/tui.h"

#define CONFIG_FILE_MAX (64u * 1024u)

struct cparse {
	struct tui_config cf;
	const char *file;
	const char *p, *end;
	int line;
	int section_line;	/* the last [section] header's line */
	int errors;
	unsigned seen;		/* keys set, to refuse duplicates */
	unsigned cmd_seen;	/* [command] keys set */
	bool console_seen;	/* [console] theme set */
	tui_config_error_cb err;
	void *ud;
};

enum { K_HOOK = 1, K_ON = 2, K_TIMEOUT = 4, K_BELL = 8, K_OSC9 = 16,
    K_INTERVAL = 32 };

static void
report(struct cparse *ps, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
report(struct cparse *ps, int line, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	ps->errors++;
	if (ps->err == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	ps->err(ps->file, line, msg, ps->ud);
}

void
tui_config_default(struct tui_config *cf)
{
	assert(cf != NULL);
	memset(cf, 0, sizeof *cf);
	cf->notify_on = TUI_CONFIG_ON(TUI_ACTIVITY_BLOCKED) |
	    TUI_CONFIG_ON(TUI_ACTIVITY_DONE) |
	    TUI_CONFIG_ON(TUI_ACTIVITY_FAILED);
	cf->hook_timeout_ms = TUI_CONFIG_TIMEOUT_DEFAULT * 1000u;
	cf->hook_interval_ms = TUI_CONFIG_INTERVAL_DEFAULT * 1000u;
}

/* Whole seconds, 1..max, as milliseconds into *ms; 0 or -EINVAL. */
static int
parse_seconds(const char *v, long max, unsigned *ms)
{
	char *e;
	long n;

	errno = 0;
	n = strtol(v, &e, 10);
	if (errno != 0 || e == v || *e != '\0' || n < 1 || n > max)
		return -EINVAL;
	*ms = (unsigned)n * 1000u;
	return 0;
}

static int
parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = { "on", "yes", "true", "1" };
	static const char *const no[] = { "off", "no", "false", "0" };

	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(v, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(v, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

/* "blocked, done failed": activity names split by commas or blanks. */
static int
parse_states(const char *v, unsigned *out, char *bad, size_t badsz)
{
	unsigned set = 0;

	while (*v != '\0') {
		char w[32];
		size_t n = strcspn(v, ", \t");
		enum tui_activity a;

		if (n == 0) {
			v++;
			continue;
		}
		snprintf(w, sizeof w, "%.*s", (int)(n < 31 ? n : 31), v);
		a = tui_activity_from_name(w);
		if (n >= sizeof w || a == TUI_ACTIVITY_UNKNOWN ||
		    a == TUI_ACTIVITY_LOST) {
			tui_escape(v, n, bad, badsz);
			return -EINVAL;
		}
		set |= TUI_CONFIG_ON(a);
		v += n;
	}
	*out = set;
	return 0;
}

/*
 * [command] (SPEC 8.1): each hook a command line whose program is an
 * absolute path (never searched along PATH), set once.
 */
static int
command_key(struct cparse *ps, const char *name, const char *value)
{
	static const char *const keys[] = { "provision", "exec", "teardown",
		"list", "timeout" };
	char *slot[4] = { ps->cf.cmd_provision, ps->cf.cmd_exec,
		ps->cf.cmd_teardown, ps->cf.cmd_list };
	char safe[80];
	size_t k;
	long n;
	char *e;

	for (k = 0; k < 5 && strcmp(name, keys[k]) != 0; k++)
		;
	tui_escape(name, strlen(name), safe, sizeof safe);
	if (k == 5) {
		report(ps, ps->line, "unknown key '%s' in [command] (want "
		    "provision, exec, teardown, list or timeout)", safe);
		return 1;
	}
	if (ps->cmd_seen & (1u << k)) {
		report(ps, ps->line, "duplicate key '%s' in [command]", safe);
		return 1;
	}
	ps->cmd_seen |= 1u << k;
	if (k == 4) {
		errno = 0;
		n = strtol(value, &e, 10);
		if (errno != 0 || e == value || *e != '\0' || n < 1 ||
		    n > 86400)
			report(ps, ps->line, "bad [command] timeout (want "
			    "1..86400 seconds)");
		else
			ps->cf.cmd_timeout_ms = (unsigned long long)n * 1000;
		return 1;
	}
	if (value[0] != '/')
		report(ps, ps->line, "[command] %s must start with an "
		    "absolute path (never searched along PATH)", safe);
	else if (strlen(value) >= TUI_CONFIG_CMD_MAX)
		report(ps, ps->line, "[command] %s too long (at most %d "
		    "bytes)", safe, TUI_CONFIG_CMD_MAX - 1);
	else
		snprintf(slot[k], TUI_CONFIG_CMD_MAX, "%s", value);
	return 1;
}

/* [console] theme = NAME (SPEC 4.6): a name in themes/ or a file. */
static int
console_key(struct cparse *ps, const char *name, const char *value)
{
	char safe[80];

	tui_escape(name, strlen(name), safe, sizeof safe);
	if (strcmp(name, "theme") != 0)
		report(ps, ps->line, "unknown key '%s' in [console] (want "
		    "theme)", safe);
	else if (ps->console_seen)
		report(ps, ps->line, "duplicate key 'theme' in [console]");
	else if (value[0] == '\0' || strlen(value) >= sizeof ps->cf.theme)
		report(ps, ps->line, "bad [console] theme (a name or a file, "
		    "at most %zu bytes)", sizeof ps->cf.theme - 1);
	else
		snprintf(ps->cf.theme, sizeof ps->cf.theme, "%s", value);
	ps->console_seen = true;
	return 1;
}

/*
 * [agent NAME] endpoint = URL: where that agent profile's model API is
 * (issue 18): http://127.0.0.1:PORT (a local model server) or
 * https://HOST[:PORT][/PATH]. The URL is checked where it is used.
 */
static int
agent_key(struct cparse *ps, const char *section, const char *name,
    const char *value)
{
	const char *prof = section + 6;
	struct tui_config_agent *ag = NULL;
	char safe[80];

	tui_escape(name, strlen(name), safe, sizeof safe);
	if (prof[0] == '\0' || strlen(prof) >= sizeof ag->name ||
	    strspn(prof, "abcdefghijklmnopqrstuvwxyz0123456789-_.") !=
	    strlen(prof)) {
		report(ps, ps->line, "bad agent profile name in [%.70s]",
		    section);
		return 1;
	}
	if (strcmp(name, "endpoint") != 0) {
		report(ps, ps->line, "unknown key '%s' in [%.70s] (want "
		    "endpoint)", safe, section);
		return 1;
	}
	for (size_t i = 0; i < ps->cf.nagents; i++)
		if (strcmp(ps->cf.agents[i].name, prof) == 0)
			ag = &ps->cf.agents[i];
	if (ag != NULL) {
		report(ps, ps->line, "duplicate key 'endpoint' in [%.70s]",
		    section);
		return 1;
	}
	if (ps->cf.nagents == TUI_CONFIG_AGENTS_MAX) {
		report(ps, ps->line, "more than %d [agent ...] sections",
		    TUI_CONFIG_AGENTS_MAX);
		return 1;
	}
	if (value[0] == '\0' || strlen(value) >= sizeof ag->endpoint) {
		report(ps, ps->line, "bad endpoint in [%.70s] (a URL of at "
		    "most %zu bytes)", section, sizeof ag->endpoint - 1);
		return 1;
	}
	ag = &ps->cf.agents[ps->cf.nagents++];
	snprintf(ag->name, sizeof ag->name, "%s", prof);
	snprintf(ag->endpoint, sizeof ag->endpoint, "%s", value);
	return 1;
}

/*
 * [provider NAME]: the model gateway's upstream, key source, CA file and
 * default spend cap for the API NAME (anthropic or openai). The upstream
 * URL is checked where it is used; paths must be absolute here.
 */
static int
provider_key(struct cparse *ps, const char *section, const char *name,
    const char *value)
{
	const char *prov = section + 9;
	struct tui_config_provider *pv = NULL;
	char safe[80], *dst;
	size_t dsz;

	tui_escape(name, strlen(name), safe, sizeof safe);
	if (strcmp(prov, "anthropic") != 0 && strcmp(prov, "openai") != 0) {
		report(ps, ps->line, "unknown provider in [%.70s] (want "
		    "[provider anthropic] or [provider openai])", section);
		return 1;
	}
	for (size_t i = 0; i < ps->cf.nproviders; i++)
		if (strcmp(ps->cf.providers[i].name, prov) == 0)
			pv = &ps->cf.providers[i];
	if (pv == NULL) {
		pv = &ps->cf.providers[ps->cf.nproviders++];
		snprintf(pv->name, sizeof pv->name, "%s", prov);
	}
	if (strcmp(name, "upstream") == 0) {
		dst = pv->upstream;
		dsz = sizeof pv->upstream;
	} else if (strcmp(name, "key_file") == 0) {
		dst = pv->key_file;
		dsz = sizeof pv->key_file;
	} else if (strcmp(name, "ca_file") == 0) {
		dst = pv->ca_file;
		dsz = sizeof pv->ca_file;
	} else if (strcmp(name, "spend_cap") == 0) {
		dst = pv->spend_cap;
		dsz = sizeof pv->spend_cap;
	} else {
		report(ps, ps->line, "unknown key '%s' in [%.70s] (want "
		    "upstream, key_file, ca_file or spend_cap)", safe, section);
		return 1;
	}
	if (dst[0] != '\0') {
		report(ps, ps->line, "duplicate key '%s' in [%.70s]", safe,
		    section);
		return 1;
	}
	if (value[0] == '\0' || strlen(value) >= dsz) {
		report(ps, ps->line, "bad %s in [%.70s] (at most %zu bytes)",
		    safe, section, dsz - 1);
		return 1;
	}
	if ((dst == pv->key_file || dst == pv->ca_file) && value[0] != '/') {
		report(ps, ps->line, "%s in [%.70s] must be an absolute path",
		    safe, section);
		return 1;
	}
	if (dst == pv->spend_cap) {
		char *end;
		double d = strtod(value, &end);

		if (*end != '\0' || !(d > 0) || d > 1e9 ||
		    strspn(value, "0123456789.") != strlen(value)) {
			report(ps, ps->line, "bad spend_cap in [%.70s] (an "
			    "amount in USD, e.g. 5.00)", section);
			return 1;
		}
	}
	snprintf(dst, dsz, "%s", value);
	return 1;
}

static int
handler(void *user, const char *section, const char *name,
    const char *value)
{
	struct cparse *ps = user;
	char safe[80], bad[64];
	unsigned key;

	if (strcmp(section, "command") == 0)
		return command_key(ps, name, value);
	if (strcmp(section, "console") == 0)
		return console_key(ps, name, value);
	if (strncmp(section, "agent ", 6) == 0)
		return agent_key(ps, section, name, value);
	if (strncmp(section, "provider ", 9) == 0)
		return provider_key(ps, section, name, value);
	if (strcmp(section, "notify") != 0) {
		tui_escape(section, strlen(section), safe, sizeof safe);
		/* an unknown section at its header, not its first key */
		report(ps, section[0] != '\0' && ps->section_line > 0 ?
		    ps->section_line : ps->line, section[0] == '\0' ?
		    "'%s' outside a "
		    "section (want [notify], [command], [console], [agent NAME] "
		    "or [provider NAME])" :
		    "unknown section [%s]", section[0] == '\0' ? name : safe);
		return 1;
	}
	key = strcmp(name, "hook") == 0 ? K_HOOK : strcmp(name, "on") == 0 ?
	    K_ON : strcmp(name, "timeout") == 0 ? K_TIMEOUT :
	    strcmp(name, "bell") == 0 ? K_BELL : strcmp(name, "osc9") == 0 ?
	    K_OSC9 : strcmp(name, "interval") == 0 ? K_INTERVAL : 0;
	if (key == 0) {
		tui_escape(name, strlen(name), safe, sizeof safe);
		report(ps, ps->line, "unknown key '%s' (want hook, on, "
		    "timeout, interval, bell or osc9)", safe);
		return 1;
	}
	if (ps->seen & key) {
		report(ps, ps->line, "duplicate key '%s'", name);
		return 1;
	}
	ps->seen |= key;
	tui_escape(value, strlen(value), safe, sizeof safe);
	switch (key) {
	case K_HOOK:
		if (strlen(value) >= sizeof ps->cf.hook)
			report(ps, ps->line, "hook too long (at most %zu "
			    "bytes)", sizeof ps->cf.hook - 1);
		else
			snprintf(ps->cf.hook, sizeof ps->cf.hook, "%s", value);
		break;
	case K_ON:
		if (parse_states(value, &ps->cf.notify_on, bad,
		    sizeof bad) < 0)
			report(ps, ps->line, "unknown state '%s' (want "
			    "starting, working, prompt, blocked, done, "
			    "failed, cancelled)", bad);
		break;
	case K_TIMEOUT:
	case K_INTERVAL:
		if (parse_seconds(value, key == K_TIMEOUT ? 3600 : 86400,
		    key == K_TIMEOUT ? &ps->cf.hook_timeout_ms :
		    &ps->cf.hook_interval_ms) < 0)
			report(ps, ps->line, "bad %s '%s' (want 1..%d "
			    "seconds)", name, safe, key == K_TIMEOUT ? 3600 :
			    86400);
		break;
	case K_BELL:
	case K_OSC9:
		if (parse_bool(value, key == K_BELL ? &ps->cf.bell :
		    &ps->cf.osc9) < 0)
			report(ps, ps->line, "bad %s '%s' (want on or off)",
			    name, safe);
		break;
	}
	return 1;
}

/* inih's reader: one line per call, counted, leading blanks dropped. */
static char *
reader(char *str, int num, void *stream)
{
	struct cparse *ps = stream;
	const char *nl, *s;
	size_t len;

	if (ps->p >= ps->end)
		return NULL;
	ps->line++;
	nl = memchr(ps->p, '\n', (size_t)(ps->end - ps->p));
	s = ps->p;
	len = nl != NULL ? (size_t)(nl - ps->p) : (size_t)(ps->end - ps->p);
	ps->p = nl != NULL ? nl + 1 : ps->end;
	while (len > 0 && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	if (len > 0 && s[len - 1] == '\r')
		len--;
	str[0] = '\n';
	str[1] = '\0';
	if (len + 2 > (size_t)num) {
		report(ps, ps->line, "line too long (at most %d bytes)",
		    num - 2);
		return str;
	}
	if (memchr(s, '\0', len) != NULL) {
		report(ps, ps->line, "NUL byte in line");
		return str;
	}
	memcpy(str, s, len);
	str[len] = '\n';
	str[len + 1] = '\0';
	if (len > 0 && s[0] == '[')	/* blanks dropped above */
		ps->section_line = ps->line;
	return str;
}

int
tui_config_parse(struct tui_config *cf, const char *file, const char *text,
    size_t len, tui_config_error_cb err, void *ud)
{
	struct cparse *ps;
	int rc;

	if (cf == NULL || file == NULL || (text == NULL && len > 0))
		return -EINVAL;
	tui_config_default(cf);
	if ((ps = calloc(1, sizeof *ps)) == NULL)
		return -ENOMEM;
	tui_config_default(&ps->cf);
	ps->file = file;
	ps->p = text;
	ps->end = text + len;
	ps->err = err;
	ps->ud = ud;
	rc = ini_parse_stream(reader, ps, handler, ps);
	if (rc > 0 && ps->errors == 0)
		report(ps, rc, "syntax error (want [notify] and NAME = "
		    "VALUE lines)");
	else if (rc < 0)
		report(ps, 0, "cannot parse (out of memory)");
	if (ps->errors == 0)
		*cf = ps->cf;
	rc = ps->errors == 0 ? 0 : -EINVAL;
	free(ps);
	return rc;
}

int
tui_config_file(const char *name, char *buf, size_t bufsz)
{
	const char *x = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	int n;

	/* SPEC 9.1; a relative XDG_CONFIG_HOME or HOME is ignored. */
	if (x != NULL && x[0] == '/')
		n = snprintf(buf, bufsz, "%s/corral/%s", x, name);
	else if (home != NULL && home[0] == '/')
		n = snprintf(buf, bufsz, "%s/.config/corral/%s", home, name);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= bufsz ? -ENAMETOOLONG : 0;
}

int
tui_config_path(char *buf, size_t bufsz)
{
	return tui_config_file("config", buf, bufsz);
}

int
tui_config_load(struct tui_config *cf, tui_config_error_cb err, void *ud)
{
	char path[4096];
	FILE *f;
	char *text;
	size_t n;
	int rc, e;

	if (cf == NULL)
		return -EINVAL;
	tui_config_default(cf);
	if (tui_config_path(path, sizeof path) < 0)
		return 0;
	if ((f = fopen(path, "r")) == NULL) {
		e = errno;
		if (e == ENOENT || e == ENOTDIR)
			return 0;	/* no config: the defaults */
		if (err != NULL)
			err(path, 0, strerror(e), ud);
		return -e;
	}
	if ((text = malloc(CONFIG_FILE_MAX + 1)) == NULL) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(text, 1, CONFIG_FILE_MAX + 1, f);
	e = ferror(f) ? EIO : 0;
	fclose(f);
	if (e == 0 && n > CONFIG_FILE_MAX)
		e = EFBIG;
	if (e != 0) {
		if (err != NULL)
			err(path, 0, e == EFBIG ? "file too large" :
			    strerror(e), ud);
		free(text);
		return -e;
	}
	rc = tui_config_parse(cf, path, text, n, err, ud);
	free(text);
	return rc;
}

bool
tui_config_notifies(const struct tui_config *cf, const char *state)
{
	enum tui_activity a = tui_activity_from_name(state);

	assert(cf != NULL);
	return a != TUI_ACTIVITY_UNKNOWN &&
	    (cf->notify_on & TUI_CONFIG_ON(a)) != 0;
}

const struct tui_config_provider *
tui_config_provider(const struct tui_config *cf, const char *name)
{
	for (size_t i = 0; cf != NULL && name != NULL && i < cf->nproviders;
	    i++)
		if (strcmp(cf->providers[i].name, name) == 0)
			return &cf->providers[i];
	return NULL;
}

const char *
tui_config_agent_endpoint(const struct tui_config *cf, const char *name)
{
	for (size_t i = 0; cf != NULL && name != NULL && i < cf->nagents; i++)
		if (strcmp(cf->agents[i].name, name) == 0)
			return cf->agents[i].endpoint;
	return NULL;
}
