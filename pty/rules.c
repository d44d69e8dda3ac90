/*
 * rules.c: per-agent screen rules kept as data files (SPEC 5.3): parsing
 * agents/NAME.rules (an INI dialect read with inih), overriding shipped
 * files with the operator's, identifying the agent behind launchers from a
 * foreground argv, and testing a rule's POSIX regexes against a region.
 */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <ini.h>
#include <limits.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pty/pty.h"

#define PAT_MAX 16		/* pattern / unless lines per rule */
#define CMD_MAX 32		/* command globs per agent */
#define AGENTS_MAX 256		/* agents in a set */
#define FILE_MAX (256 * 1024)	/* bytes in a rule file */
#define ARGV_TEXT_MAX 4096	/* joined command line tested by argv */
#define UNWRAP_DEPTH 8		/* launchers unwrapped at most */

struct rule {
	char name[PTY_RULES_NAME_MAX];
	enum pty_detect_state state;
	enum pty_rules_region region;
	int rows;
	int priority;
	uint32_t hold_ms;
	int line;
	bool have_state, have_region, have_priority, have_hold;
	bool tried_state, tried_pat;	/* the key was there, but bad */
	int npat, nunless;
	/*
	 * The patterns as written, checked at load; compiled on the rule's
	 * first test (a holder tests one agent's rules, and a compiled regex
	 * holds tens of kB).
	 */
	char *src[2][PAT_MAX];		/* [0] pattern, [1] unless */
	bool broken;
	regex_t *re;	/* compiled: npat patterns, then nunless */
};

struct pty_rules_agent {
	char *name;
	char *file;
	int ncommands;
	char *commands[CMD_MAX];
	/* model endpoints it needs ("host:port"), NULL-terminated */
	char *endpoints[CMD_MAX + 1];
	int nendpoints;
	bool have_argv;
	regex_t argv_re;
	int nrules;
	struct rule *rules[PTY_RULES_MAX];
};

struct pty_rules {
	size_t n;
	struct pty_rules_agent *agents[AGENTS_MAX];
};

enum section { SEC_NONE, SEC_AGENT, SEC_RULE, SEC_SKIP };

struct parse {
	struct pty_rules_agent *a;
	const char *file;
	pty_rules_error_cb err;
	void *ud;
	int nerr;
	bool oom;
	/* the reader over the text */
	const char *p, *end;
	int line;
	/* the section being read */
	enum section sec;
	struct rule *cur;
	bool agent_seen, have_argv_key, have_commands_key;
};

/* ------------------------------------------------------------------ */

static void
report(struct parse *ps, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
report(struct parse *ps, int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	ps->nerr++;
	if (ps->err != NULL)
		ps->err(ps->file, line, msg, ps->ud);
}

static void
rule_free(struct rule *r)
{
	int i;

	if (r == NULL)
		return;
	for (i = 0; r->re != NULL && i < r->npat + r->nunless; i++)
		regfree(&r->re[i]);
	free(r->re);
	for (i = 0; i < r->npat; i++)
		free(r->src[0][i]);
	for (i = 0; i < r->nunless; i++)
		free(r->src[1][i]);
	free(r);
}

static void
agent_free(struct pty_rules_agent *a)
{
	int i;

	if (a == NULL)
		return;
	for (i = 0; i < a->nrules; i++)
		rule_free(a->rules[i]);
	for (i = 0; i < a->ncommands; i++)
		free(a->commands[i]);
	for (i = 0; i < a->nendpoints; i++)
		free(a->endpoints[i]);
	if (a->have_argv)
		regfree(&a->argv_re);
	free(a->name);
	free(a->file);
	free(a);
}

static char *
trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' ||
	    e[-1] == '\n'))
		*--e = '\0';
	return s;
}

/* Compile an extended regex, naming the problem on failure. */
static bool
compile(struct parse *ps, regex_t *re, const char *pat, const char *key)
{
	char msg[256];
	int rc;

	if (*pat == '\0') {
		report(ps, ps->line, "empty %s", key);
		return false;
	}
	rc = regcomp(re, pat, REG_EXTENDED | REG_NEWLINE);
	if (rc != 0) {
		if (rc == REG_ESPACE)
			ps->oom = true;
		regerror(rc, re, msg, sizeof msg);
		report(ps, ps->line, "bad %s regex '%s': %s", key, pat, msg);
		return false;
	}
	return true;
}

/* Check a finished [rule] section; defaults its hold by state. */
static void
rule_finish(struct parse *ps, struct rule *r)
{
	if (!r->have_state && !r->tried_state)
		report(ps, r->line, "rule '%s' has no state", r->name);
	if (r->npat == 0 && !r->tried_pat)
		report(ps, r->line, "rule '%s' has no pattern", r->name);
	if (!r->have_region) {
		r->region = PTY_RULES_BOTTOM;
		r->rows = 1;
	}
	if (!r->have_hold)
		r->hold_ms = r->state == PTY_DETECT_BLOCKED ? 150
		    : r->state == PTY_DETECT_PROMPT ? 150 : 0;
}

static void
section_end(struct parse *ps)
{
	if (ps->sec == SEC_RULE && ps->cur != NULL)
		rule_finish(ps, ps->cur);
	ps->sec = SEC_NONE;
	ps->cur = NULL;
}

/* A "[...]" line: start the section it names. */
static void
section_begin(struct parse *ps, char *hdr)
{
	char *close = strrchr(hdr, ']'), *arg;
	struct rule *r;
	int i;

	section_end(ps);
	ps->sec = SEC_SKIP;
	if (close == NULL || trim(close + 1)[0] != '\0') {
		report(ps, ps->line, "section header without a closing ']'");
		return;
	}
	*close = '\0';
	hdr = trim(hdr + 1);
	if (strcmp(hdr, "agent") == 0) {
		if (ps->agent_seen) {
			report(ps, ps->line, "second [agent] section");
			return;
		}
		ps->agent_seen = true;
		ps->sec = SEC_AGENT;
		return;
	}
	if (strncmp(hdr, "rule", 4) != 0 || (hdr[4] != ' ' &&
	    hdr[4] != '\t')) {
		report(ps, ps->line,
		    "unknown section [%s] (expected [agent] or [rule NAME])",
		    hdr);
		return;
	}
	arg = trim(hdr + 4);
	if (*arg == '\0' || strlen(arg) >= PTY_RULES_NAME_MAX ||
	    strpbrk(arg, " \t:") != NULL) {
		report(ps, ps->line, "bad rule name '%s'", arg);
		return;
	}
	for (i = 0; i < ps->a->nrules; i++)
		if (strcmp(ps->a->rules[i]->name, arg) == 0) {
			report(ps, ps->line, "duplicate rule '%s'", arg);
			return;
		}
	if (ps->a->nrules == PTY_RULES_MAX) {
		report(ps, ps->line, "more than %d rules", PTY_RULES_MAX);
		return;
	}
	r = calloc(1, sizeof *r);
	if (r == NULL) {
		ps->oom = true;
		return;
	}
	snprintf(r->name, sizeof r->name, "%s", arg);
	r->line = ps->line;
	ps->a->rules[ps->a->nrules++] = r;
	ps->cur = r;
	ps->sec = SEC_RULE;
}

/*
 * inih's reader: hands over one line at a time, so ps->line is the line
 * inih is parsing when it calls the handler. Section headers, comments and
 * malformed lines are dealt with here, with their line numbers; inih only
 * splits NAME = VALUE. Leading blanks are dropped (no continuation lines).
 */
static char *
reader(char *str, int num, void *stream)
{
	struct parse *ps = stream;
	const char *nl, *s;
	size_t len;
	char *t;

	if (ps->p >= ps->end)
		return NULL;
	ps->line++;
	nl = memchr(ps->p, '\n', (size_t)(ps->end - ps->p));
	s = ps->p;
	len = nl != NULL ? (size_t)(nl - ps->p) : (size_t)(ps->end - ps->p);
	ps->p = nl != NULL ? nl + 1 : ps->end;
	if (ps->line == 1 && len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0) {
		s += 3;
		len -= 3;
	}
	while (len > 0 && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	str[0] = '\n';
	str[1] = '\0';
	if (num < 4)
		return str;
	if (len + 3 > (size_t)num) {
		report(ps, ps->line, "line too long (at most %d bytes)",
		    num - 3);
		return str;
	}
	if (memchr(s, '\0', len) != NULL) {
		report(ps, ps->line, "NUL byte in line");
		return str;
	}
	memcpy(str, s, len);
	str[len] = '\0';
	t = trim(str);
	if (*t == '\0' || *t == ';' || *t == '#') {
		str[0] = '\n';
		str[1] = '\0';
	} else if (*t == '[') {
		section_begin(ps, t);
		str[0] = '\n';
		str[1] = '\0';
	} else if (strpbrk(t, "=:") == NULL) {
		report(ps, ps->line, "expected NAME = VALUE");
		str[0] = '\n';
		str[1] = '\0';
	} else {
		memmove(str, t, strlen(t) + 1);
		len = strlen(str);
		str[len] = '\n';
		str[len + 1] = '\0';
	}
	return str;
}

static bool
parse_int(const char *v, long lo, long hi, long *out)
{
	char *e;
	long n;

	errno = 0;
	n = strtol(v, &e, 10);
	if (errno != 0 || e == v || *trim(e) != '\0' || n < lo || n > hi)
		return false;
	*out = n;
	return true;
}

static void
agent_key(struct parse *ps, const char *name, char *value)
{
	struct pty_rules_agent *a = ps->a;
	char *tok, *save = NULL;

	if (strcmp(name, "commands") == 0) {
		if (ps->have_commands_key) {
			report(ps, ps->line, "duplicate key 'commands'");
			return;
		}
		ps->have_commands_key = true;
		for (tok = strtok_r(value, " \t", &save); tok != NULL;
		    tok = strtok_r(NULL, " \t", &save)) {
			if (a->ncommands == CMD_MAX ||
			    strlen(tok) >= PTY_RULES_NAME_MAX) {
				report(ps, ps->line,
				    "too many or too long commands");
				return;
			}
			a->commands[a->ncommands] = strdup(tok);
			if (a->commands[a->ncommands] == NULL) {
				ps->oom = true;
				return;
			}
			a->ncommands++;
		}
	} else if (strcmp(name, "endpoints") == 0) {
		/* SPEC 8.7: the doctor wants one of them allowlisted. */
		if (a->nendpoints > 0) {
			report(ps, ps->line, "duplicate key 'endpoints'");
			return;
		}
		for (tok = strtok_r(value, " \t,", &save); tok != NULL;
		    tok = strtok_r(NULL, " \t,", &save)) {
			if (a->nendpoints == CMD_MAX || strchr(tok, ':') ==
			    NULL || strlen(tok) > 260) {
				report(ps, ps->line, "bad endpoint '%.64s' "
				    "(host:port)", tok);
				return;
			}
			if ((a->endpoints[a->nendpoints] = strdup(tok)) ==
			    NULL) {
				ps->oom = true;
				return;
			}
			a->nendpoints++;
		}
	} else if (strcmp(name, "argv") == 0) {
		if (ps->have_argv_key) {
			report(ps, ps->line, "duplicate key 'argv'");
			return;
		}
		ps->have_argv_key = true;
		a->have_argv = compile(ps, &a->argv_re, value, "argv");
	} else {
		report(ps, ps->line,
		    "unknown key '%s' in [agent] (commands, argv, endpoints)",
		    name);
	}
}

static void
rule_region(struct parse *ps, struct rule *r, char *v)
{
	long n;

	if (strcmp(v, "title") == 0) {
		r->region = PTY_RULES_TITLE;
	} else if (strcmp(v, "notify") == 0) {
		r->region = PTY_RULES_NOTIFY;
	} else if (strcmp(v, "screen") == 0) {
		r->region = PTY_RULES_BOTTOM;
		r->rows = PTY_RULES_ROWS_MAX;
	} else if (strncmp(v, "bottom", 6) == 0 && (v[6] == ' ' ||
	    v[6] == '\t') && parse_int(v + 7, 1, PTY_RULES_ROWS_MAX, &n)) {
		r->region = PTY_RULES_BOTTOM;
		r->rows = (int)n;
	} else {
		report(ps, ps->line,
		    "bad region '%s' (bottom N with N 1..%d, screen, title, "
		    "notify)", v, PTY_RULES_ROWS_MAX);
	}
}

static void
rule_key(struct parse *ps, const char *name, char *v)
{
	struct rule *r = ps->cur;
	long n;

	if (strcmp(name, "pattern") == 0 || strcmp(name, "unless") == 0) {
		bool un = name[0] == 'u';
		int *cnt = un ? &r->nunless : &r->npat;
		regex_t re;

		if (*cnt == PAT_MAX) {
			report(ps, ps->line, "more than %d %s lines", PAT_MAX,
			    name);
			return;
		}
		if (!compile(ps, &re, v, name)) {
			if (!un)
				r->tried_pat = true;
			return;
		}
		regfree(&re);	/* checked; rule_compile makes it again */
		if ((r->src[un][*cnt] = strdup(v)) == NULL) {
			ps->oom = true;
			report(ps, ps->line, "out of memory");
			return;
		}
		(*cnt)++;
		return;
	}
	if (strcmp(name, "state") == 0) {
		r->tried_state = true;
		if (r->have_state)
			report(ps, ps->line, "duplicate key 'state'");
		else if (pty_detect_state_parse(v, &r->state) < 0 ||
		    (r->state != PTY_DETECT_WORKING &&
		    r->state != PTY_DETECT_PROMPT &&
		    r->state != PTY_DETECT_BLOCKED))
			report(ps, ps->line,
			    "bad state '%s' (working, prompt or blocked)", v);
		else
			r->have_state = true;
	} else if (strcmp(name, "region") == 0) {
		if (r->have_region)
			report(ps, ps->line, "duplicate key 'region'");
		r->have_region = true;
		rule_region(ps, r, v);
	} else if (strcmp(name, "priority") == 0) {
		if (r->have_priority)
			report(ps, ps->line, "duplicate key 'priority'");
		else if (!parse_int(v, -1000, 1000, &n))
			report(ps, ps->line,
			    "bad priority '%s' (-1000..1000)", v);
		else
			r->priority = (int)n;
		r->have_priority = true;
	} else if (strcmp(name, "hold") == 0) {
		if (r->have_hold)
			report(ps, ps->line, "duplicate key 'hold'");
		else if (!parse_int(v, 0, 60000, &n))
			report(ps, ps->line, "bad hold '%s' (0..60000 ms)", v);
		else
			r->hold_ms = (uint32_t)n;
		r->have_hold = true;
	} else {
		report(ps, ps->line,
		    "unknown key '%s' in a rule (state, region, pattern, "
		    "unless, priority, hold)", name);
	}
}

static int
handler(void *user, const char *section, const char *name,
    const char *value)
{
	struct parse *ps = user;
	char buf[512];

	(void)section;	/* the reader tracks sections, with line numbers */
	snprintf(buf, sizeof buf, "%s", value);
	switch (ps->sec) {
	case SEC_NONE:
		report(ps, ps->line, "key '%s' outside a section", name);
		break;
	case SEC_AGENT:
		agent_key(ps, name, trim(buf));
		break;
	case SEC_RULE:
		rule_key(ps, name, trim(buf));
		break;
	case SEC_SKIP:
		break;	/* the section header was already reported */
	}
	return 1;
}

static bool
valid_name(const char *name)
{
	const char *s;

	if (*name == '\0' || *name == '.' || strlen(name) >= 64)
		return false;
	for (s = name; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' ||
		    *s == '.'))
			return false;
	return true;
}

/* Put a into the set, replacing the agent of the same name. */
static int
set_put(struct pty_rules *rs, struct pty_rules_agent *a)
{
	size_t i, j;

	for (i = 0; i < rs->n; i++) {
		int c = strcmp(rs->agents[i]->name, a->name);

		if (c == 0) {
			agent_free(rs->agents[i]);
			rs->agents[i] = a;
			return 0;
		}
		if (c > 0)
			break;
	}
	if (rs->n == AGENTS_MAX)
		return -ENOSPC;
	for (j = rs->n; j > i; j--)
		rs->agents[j] = rs->agents[j - 1];
	rs->agents[i] = a;
	rs->n++;
	return 0;
}

/* ------------------------------------------------------------------ */

int
pty_rules_new(struct pty_rules **out)
{
	if (out == NULL)
		return -EINVAL;
	*out = calloc(1, sizeof **out);
	return *out == NULL ? -ENOMEM : 0;
}

void
pty_rules_free(struct pty_rules *rs)
{
	size_t i;

	if (rs == NULL)
		return;
	for (i = 0; i < rs->n; i++)
		agent_free(rs->agents[i]);
	free(rs);
}

int
pty_rules_load_text(struct pty_rules *rs, const char *name,
    const char *file, const char *text, size_t len, pty_rules_error_cb err,
    void *ud)
{
	struct parse ps = { .file = file, .err = err, .ud = ud };
	int rc;

	if (rs == NULL || name == NULL || file == NULL ||
	    (text == NULL && len > 0))
		return -EINVAL;
	if (!valid_name(name)) {
		report(&ps, 0, "bad agent name '%s'", name);
		return -EINVAL;
	}
	if (len > FILE_MAX) {
		report(&ps, 0, "file over %d bytes", FILE_MAX);
		return -EINVAL;
	}
	ps.a = calloc(1, sizeof *ps.a);
	if (ps.a == NULL)
		return -ENOMEM;
	ps.a->name = strdup(name);
	ps.a->file = strdup(file);
	if (ps.a->name == NULL || ps.a->file == NULL) {
		agent_free(ps.a);
		return -ENOMEM;
	}
	ps.p = text;
	ps.end = text + len;
	rc = ini_parse_stream(reader, &ps, handler, &ps);
	section_end(&ps);
	if (rc == -2 || ps.oom) {
		agent_free(ps.a);
		return -ENOMEM;
	}
	if (rc > 0 && ps.nerr == 0)
		report(&ps, rc, "syntax error");
	if (ps.nerr > 0) {
		agent_free(ps.a);
		return -EINVAL;
	}
	rc = set_put(rs, ps.a);
	if (rc < 0) {
		report(&ps, 0, "more than %d agents", AGENTS_MAX);
		agent_free(ps.a);
		return -EINVAL;
	}
	return 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Load one file; returns 0, -EINVAL (reported) or -ENOMEM. */
static int
load_file(struct pty_rules *rs, const char *path, const char *name,
    pty_rules_error_cb err, void *ud)
{
	struct parse ps = { .file = path, .err = err, .ud = ud };
	FILE *f = fopen(path, "rb");
	char *buf;
	size_t n;
	int rc;

	if (f == NULL) {
		report(&ps, 0, "cannot open: %s", strerror(errno));
		return -EINVAL;
	}
	buf = malloc(FILE_MAX + 1);
	if (buf == NULL) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(buf, 1, FILE_MAX + 1, f);
	if (ferror(f)) {
		report(&ps, 0, "read error");
		rc = -EINVAL;
	} else if (n > FILE_MAX) {
		report(&ps, 0, "file over %d bytes", FILE_MAX);
		rc = -EINVAL;
	} else {
		rc = pty_rules_load_text(rs, name, path, buf, n, err, ud);
	}
	fclose(f);
	free(buf);
	return rc;
}

/* The stem of "NAME.rules", or false. */
static bool
rules_stem(const char *fname, char *stem, size_t sz)
{
	size_t len = strlen(fname);

	if (len <= 6 || strcmp(fname + len - 6, ".rules") != 0 ||
	    len - 6 >= sz)
		return false;
	memcpy(stem, fname, len - 6);
	stem[len - 6] = '\0';
	return valid_name(stem);
}

static int
load_dir(struct pty_rules *rs, const char *dir, pty_rules_error_cb err,
    void *ud)
{
	char *names[AGENTS_MAX], stem[64], path[PATH_MAX];
	size_t n = 0, i;
	struct dirent *de;
	struct stat st;
	int bad = 0, rc = 0;
	DIR *d = opendir(dir);

	if (d == NULL)
		return 0;	/* a missing directory holds no rules */
	while ((de = readdir(d)) != NULL && n < AGENTS_MAX) {
		if (!rules_stem(de->d_name, stem, sizeof stem))
			continue;
		names[n] = strdup(de->d_name);
		if (names[n] == NULL) {
			rc = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof names[0], cmp_str);
	for (i = 0; i < n && rc == 0; i++) {
		int r;

		if (snprintf(path, sizeof path, "%s/%s", dir, names[i]) >=
		    (int)sizeof path || stat(path, &st) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (!rules_stem(names[i], stem, sizeof stem))
			continue;
		r = load_file(rs, path, stem, err, ud);
		if (r == -ENOMEM)
			rc = r;
		else if (r < 0)
			bad++;
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	return rc < 0 ? rc : bad;
}

int
pty_rules_load_dirs(struct pty_rules *rs, const char *const *dirs,
    size_t ndirs, pty_rules_error_cb err, void *ud)
{
	size_t i;
	int bad = 0, rc;

	if (rs == NULL || (dirs == NULL && ndirs > 0))
		return -EINVAL;
	for (i = 0; i < ndirs; i++) {
		if (dirs[i] == NULL)
			continue;
		rc = load_dir(rs, dirs[i], err, ud);
		if (rc < 0)
			return rc;
		bad += rc;
	}
	return bad;
}

int
pty_rules_user_dir(char *buf, size_t bufsz)
{
	const char *x = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");
	int n;

	if (buf == NULL || bufsz == 0)
		return -EINVAL;
	if (x != NULL && x[0] == '/')
		n = snprintf(buf, bufsz, "%s/corral/agents", x);
	else if (h != NULL && h[0] == '/')
		n = snprintf(buf, bufsz, "%s/.config/corral/agents", h);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= bufsz ? -ENAMETOOLONG : 0;
}

size_t
pty_rules_count(const struct pty_rules *rs)
{
	return rs == NULL ? 0 : rs->n;
}

const struct pty_rules_agent *
pty_rules_at(const struct pty_rules *rs, size_t i)
{
	return rs == NULL || i >= rs->n ? NULL : rs->agents[i];
}

const struct pty_rules_agent *
pty_rules_find(const struct pty_rules *rs, const char *name)
{
	size_t i;

	if (rs == NULL || name == NULL)
		return NULL;
	for (i = 0; i < rs->n; i++)
		if (strcmp(rs->agents[i]->name, name) == 0)
			return rs->agents[i];
	/* An alias: one of its commands, spelled out (no glob). */
	for (i = 0; i < rs->n; i++) {
		const struct pty_rules_agent *a = rs->agents[i];

		for (int k = 0; k < a->ncommands; k++)
			if (strpbrk(a->commands[k], "*?[") == NULL &&
			    strcmp(a->commands[k], name) == 0)
				return a;
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Launchers                                                            */

enum launcher { L_NONE, L_ENV, L_NODE, L_PYTHON, L_SHELL };

static enum launcher
launcher_of(const char *name)
{
	static const char *const node[] = { "node", "nodejs", "bun", "deno",
		"npx", "tsx", "ts-node", NULL };
	static const char *const sh[] = { "sh", "bash", "dash", "zsh", "ksh",
		"mksh", "ash", "fish", "busybox", NULL };
	int i;

	if (strcmp(name, "env") == 0)
		return L_ENV;
	for (i = 0; node[i] != NULL; i++)
		if (strcmp(name, node[i]) == 0)
			return L_NODE;
	if (fnmatch("python", name, 0) == 0 ||
	    fnmatch("python[0-9]*", name, 0) == 0 ||
	    fnmatch("pypy*", name, 0) == 0)
		return L_PYTHON;
	for (i = 0; sh[i] != NULL; i++)
		if (strcmp(name, sh[i]) == 0)
			return L_SHELL;
	return L_NONE;
}

/* The program name of a path: basename, no leading '-', no script suffix. */
static void
prog_name(const char *arg, char *out, size_t sz)
{
	static const char *const ext[] = { ".js", ".mjs", ".cjs", ".ts",
		".py", ".sh", NULL };
	const char *b = strrchr(arg, '/');
	size_t len, el;
	int i;

	b = b != NULL ? b + 1 : arg;
	while (*b == '-')
		b++;
	snprintf(out, sz, "%s", b);
	len = strlen(out);
	for (i = 0; ext[i] != NULL; i++) {
		el = strlen(ext[i]);
		if (len > el && strcmp(out + len - el, ext[i]) == 0) {
			out[len - el] = '\0';
			break;
		}
	}
}

static bool
in_list(const char *s, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

/*
 * Split a `sh -c` command string into words (quotes removed, no
 * expansion) into buf; returns the number of words.
 */
static int
split_words(const char *s, char *buf, size_t bufsz, const char **words,
    int max)
{
	size_t o = 0;
	int n = 0;
	char q;

	while (*s != '\0' && n < max) {
		while (*s == ' ' || *s == '\t' || *s == '\n' || *s == ';' ||
		    *s == '&' || *s == '(')
			s++;
		if (*s == '\0' || o + 1 >= bufsz)
			break;
		words[n++] = buf + o;
		q = 0;
		while (*s != '\0' && o + 1 < bufsz) {
			if (q != 0 && *s == q) {
				q = 0;
			} else if (q == 0 && (*s == '\'' || *s == '"')) {
				q = *s;
			} else if (q == 0 && (*s == ' ' || *s == '\t' ||
			    *s == '\n' || *s == ';' || *s == '&' ||
			    *s == '|')) {
				break;
			} else {
				buf[o++] = *s;
			}
			s++;
		}
		buf[o++] = '\0';
		if (*s == '|')
			break;	/* the first command of a pipeline */
	}
	return n;
}

int
pty_rules_unwrap(const char *const *argv, int argc,
    char (*names)[PTY_RULES_NAME_MAX], int max)
{
	static const char *const node_arg[] = { "-r", "--require", "--import",
		"--loader", "--experimental-loader", "-C", "--conditions",
		"--title", "--env-file", NULL };
	static const char *const node_stop[] = { "-e", "--eval", "-p",
		"--print", "-i", "--interactive", NULL };
	static const char *const py_arg[] = { "-W", "-X", "-Q", NULL };
	static const char *const sh_arg[] = { "-o", "+o", "-O", "+O", NULL };
	static const char *const shell_kw[] = { "exec", "nohup", "command",
		"time", NULL };
	const char *words[64];
	char wbuf[1024];
	const char *const *av = argv;
	int ac = argc, i = 0, n = 0, depth = 0;

	if (argv == NULL || names == NULL || max <= 0)
		return 0;
	while (i < ac && n < max && depth++ < UNWRAP_DEPTH) {
		enum launcher l;
		int j;

		if (av[i] == NULL || av[i][0] == '\0')
			break;
		prog_name(av[i], names[n], PTY_RULES_NAME_MAX);
		l = launcher_of(names[n]);
		n++;
		j = i + 1;
		switch (l) {
		case L_NONE:
			return n;
		case L_ENV:
			while (j < ac && av[j] != NULL && (av[j][0] == '-' ||
			    strchr(av[j], '=') != NULL)) {
				if (strcmp(av[j], "-u") == 0 ||
				    strcmp(av[j], "-C") == 0)
					j++;
				j++;
			}
			break;
		case L_NODE:
			while (j < ac && av[j] != NULL && av[j][0] == '-') {
				if (in_list(av[j], node_stop))
					return n;
				if (in_list(av[j], node_arg))
					j++;
				j++;
			}
			/* deno run, bun run, bun x, npx --yes pkg */
			if (j < ac && av[j] != NULL && (strcmp(av[j], "run") ==
			    0 || strcmp(av[j], "x") == 0 ||
			    strcmp(av[j], "exec") == 0)) {
				j++;
				while (j < ac && av[j] != NULL &&
				    av[j][0] == '-')
					j++;
			}
			break;
		case L_PYTHON:
			while (j < ac && av[j] != NULL && av[j][0] == '-') {
				if (strcmp(av[j], "-c") == 0)
					return n;
				if (strncmp(av[j], "-m", 2) == 0) {
					const char *m = av[j][2] != '\0' ?
					    av[j] + 2 : j + 1 < ac ?
					    av[j + 1] : NULL;
					size_t k;

					if (m == NULL || n == max)
						return n;
					snprintf(names[n], PTY_RULES_NAME_MAX,
					    "%s", m);
					k = strcspn(names[n], ".");
					names[n][k] = '\0';
					return n + 1;
				}
				if (in_list(av[j], py_arg))
					j++;
				j++;
			}
			break;
		case L_SHELL:
			while (j < ac && av[j] != NULL && (av[j][0] == '-' ||
			    av[j][0] == '+')) {
				if (strcmp(av[j], "-c") == 0 ||
				    (av[j][0] == '-' && av[j][1] != '-' &&
				    strchr(av[j], 'c') != NULL &&
				    strchr(av[j], 'o') == NULL)) {
					int k = 0, nw;

					if (j + 1 >= ac || av[j + 1] == NULL ||
					    av == words)
						return n;
					nw = split_words(av[j + 1], wbuf,
					    sizeof wbuf, words, 64);
					while (k < nw && (in_list(words[k],
					    shell_kw) || strchr(words[k], '=')
					    != NULL))
						k++;
					av = words;
					ac = nw;
					j = k;
					goto next;
				}
				if (in_list(av[j], sh_arg))
					j++;
				j++;
			}
			break;
		}
next:
		if (j >= ac)
			break;
		i = j;
	}
	return n;
}

static bool
agent_has_command(const struct pty_rules_agent *a, const char *name)
{
	int i;

	for (i = 0; i < a->ncommands; i++)
		if (fnmatch(a->commands[i], name, 0) == 0)
			return true;
	return false;
}

const struct pty_rules_agent *
pty_rules_identify(const struct pty_rules *rs, const char *const *argv,
    int argc)
{
	char names[UNWRAP_DEPTH + 1][PTY_RULES_NAME_MAX];
	char line[ARGV_TEXT_MAX];
	size_t o = 0, i, len;
	int n, k;

	if (rs == NULL || argv == NULL || argc <= 0)
		return NULL;
	line[0] = '\0';
	for (k = 0; k < argc && argv[k] != NULL; k++) {
		len = strlen(argv[k]);
		if (o + len + 2 > sizeof line)
			len = sizeof line - o - 2;
		if (k > 0)
			line[o++] = ' ';
		memcpy(line + o, argv[k], len);
		o += len;
		line[o] = '\0';
		if (o + 2 >= sizeof line)
			break;
	}
	for (i = 0; i < rs->n; i++)
		if (rs->agents[i]->have_argv &&
		    regexec(&rs->agents[i]->argv_re, line, 0, NULL, 0) == 0)
			return rs->agents[i];
	n = pty_rules_unwrap(argv, argc, names, UNWRAP_DEPTH + 1);
	for (k = n - 1; k >= 0; k--)
		for (i = 0; i < rs->n; i++)
			if (agent_has_command(rs->agents[i], names[k]))
				return rs->agents[i];
	return NULL;
}

const char *
pty_rules_agent_name(const struct pty_rules_agent *a)
{
	return a == NULL ? NULL : a->name;
}

const char *
pty_rules_agent_file(const struct pty_rules_agent *a)
{
	return a == NULL ? NULL : a->file;
}

const char *const *
pty_rules_agent_endpoints(const struct pty_rules_agent *a)
{
	return a == NULL || a->nendpoints == 0 ? NULL :
	    (const char *const *)a->endpoints;
}

int
pty_rules_agent_nrules(const struct pty_rules_agent *a)
{
	return a == NULL ? 0 : a->nrules;
}

void
pty_rules_agent_rule(const struct pty_rules_agent *a, int i,
    struct pty_rule_info *out)
{
	const struct rule *r;

	assert(a != NULL && i >= 0 && i < a->nrules && out != NULL);
	r = a->rules[i];
	out->name = r->name;
	out->state = r->state;
	out->region = r->region;
	out->rows = r->rows;
	out->priority = r->priority;
	out->hold_ms = r->hold_ms;
}

/*
 * The rule's patterns, compiled the first time it is tested (each was
 * checked at load). false if that fails (out of memory): the rule then
 * never matches.
 */
static bool
rule_compile(struct rule *r)
{
	int n = 0, total = r->npat + r->nunless;
	regex_t *re;

	if (r->re != NULL || r->broken)
		return r->re != NULL;
	if ((re = calloc((size_t)total + 1, sizeof *re)) == NULL)
		goto fail;
	for (; n < total; n++)
		if (regcomp(&re[n], n < r->npat ? r->src[0][n] :
		    r->src[1][n - r->npat], REG_EXTENDED | REG_NEWLINE) != 0)
			goto fail;
	r->re = re;
	return true;
fail:
	while (n > 0)
		regfree(&re[--n]);
	free(re);
	r->broken = true;
	return false;
}

bool
pty_rules_agent_test(const struct pty_rules_agent *a, int i,
    const char *text, const char **line, size_t *linelen)
{
	struct rule *r;
	regmatch_t m[1];
	const char *s, *e;
	int k;

	assert(a != NULL && i >= 0 && i < a->nrules && text != NULL);
	r = a->rules[i];
	if (!rule_compile(r))
		return false;
	for (k = 0; k < r->nunless; k++)
		if (regexec(&r->re[r->npat + k], text, 0, NULL, 0) == 0)
			return false;
	for (k = 0; k < r->npat; k++) {
		if (regexec(&r->re[k], text, 1, m, 0) != 0)
			return false;
		if (k == 0 && line != NULL) {
			s = text + m[0].rm_so;
			while (s > text && s[-1] != '\n')
				s--;
			e = strchr(text + m[0].rm_so, '\n');
			if (e == NULL)
				e = text + strlen(text);
			*line = s;
			if (linelen != NULL)
				*linelen = (size_t)(e - s);
		}
	}
	return true;
}
