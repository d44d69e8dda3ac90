/*
 * detect.c: the pure lifecycle detector of one endpoint (SPEC 5.2-5.4).
 * Events, screen text, terminal signals, process facts, hook reports and
 * the time go in; the activity state, the signal that decided it, when to
 * be called again and whether facts are wanted come out. No I/O, no
 * timers: the caller owns the clock (docs/detection.md).
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pty/pty.h"

#define TICKS_HZ 100		/* /proc CPU times are in USER_HZ: 100 */
#define NOTIFY_MAX 256		/* bytes of a notification kept */
#define OSC_MAX 512		/* bytes of an OSC payload looked at */
#define DIALOG_HOLD_MS 150	/* a dialog holds still before it counts */

static const char *const state_names[PTY_DETECT_NSTATES] = {
	[PTY_DETECT_STARTING] = "starting",
	[PTY_DETECT_WORKING] = "working",
	[PTY_DETECT_PROMPT] = "prompt",
	[PTY_DETECT_BLOCKED] = "blocked",
	[PTY_DETECT_DONE] = "done",
	[PTY_DETECT_FAILED] = "failed",
	[PTY_DETECT_CANCELLED] = "cancelled",
};

#define INPUT_WATCH_MS 10000	/* facts sampled at rest after a key */

static const struct pty_detect_opts defaults = {
	.quiet_ms = 250,
	.rule_quiet_ms = 150,
	.work_ms = 300,
	.echo_ms = 250,
	.resize_ms = 500,
	.idle_ms = 1000,
	.blind_ms = 3000,
	.grace_ms = 300,
	.facts_min_ms = 250,
	.facts_max_ms = 2000,
	.progress_ms = 30000,
};

/* What the detector knows of one rule of its agent. */
struct rstate {
	struct pty_rule_info info;
	uint64_t hash;		/* of the region's text */
	uint64_t since_ms;	/* the region's text unchanged since */
	bool valid;
	bool matched;
};

struct pty_detect {
	struct pty_detect_opts o;
	const struct pty_rules_agent *agent;
	int nrules;
	struct rstate rs[PTY_RULES_MAX];

	/* the decision */
	enum pty_detect_state state;
	enum pty_detect_state shown;	/* what the last step returned */
	bool final;
	uint64_t since_ms;
	char signal[PTY_DETECT_SIGNAL_MAX];
	char detail[PTY_DETECT_DETAIL_MAX];
	int rule;			/* the deciding rule, or -1 */

	/* the choice dialog on the screen (dialog.c) */
	bool dlg_on;
	uint64_t dlg_ms;		/* it has been the same since */
	struct pty_dialog dlg;

	/* output */
	uint64_t t0;
	bool any_out;
	uint64_t last_out_ms;
	uint64_t out_bytes;
	bool burst;			/* counted output seen */
	uint64_t burst_start_ms, last_counted_ms;
	bool any_input, any_resize;
	uint64_t input_ms, resize_ms;

	/* the screen: the last rows that hold text, joined by '\n' */
	char *text;
	size_t textcap;
	int nrows;
	size_t rowoff[PTY_RULES_ROWS_MAX + 1];
	char title[PTY_SCREEN_TITLE_MAX + 1];
	uint64_t screen_ms;		/* last set_screen */

	/* terminal signals */
	char mark;			/* last OSC 133 mark: A B C D, or 0 */
	const char *mark_src;
	uint64_t mark_ms;
	int progress;			/* OSC 9;4 state: 0 none, 1..4 */
	uint64_t progress_ms;
	bool notify_on;
	const char *notify_src;
	char notify[NOTIFY_MAX];
	uint64_t notify_ms;
	bool bell_on;
	uint64_t bell_ms, bells, oscs;

	/* the last report (`corral report`) */
	bool report_on;
	enum pty_detect_state report;
	char report_name[16];
	uint64_t report_ms, reports;

	/* process facts */
	bool facts_ever;
	uint64_t facts_ms;
	bool tty_read;
	bool tty_wait, wait_known;	/* a fg thread waits on the tty */
	char fg_comm[64];
	bool have_ticks;
	uint64_t ticks, ticks_ms;
	bool cpu_valid, cpu_busy;
	int beyond;		/* its processes outside the session */
	uint64_t cpu_from_ms, cpu_ms, cpu_iv;
	uint64_t facts_iv, facts_due;
	bool asked;			/* want_facts was returned... */
	uint64_t ask_ms;		/* ...at this time */
	unsigned inflight;
	char held[32];			/* the gateway holds requests: why */
	char stop[24];			/* the model's last turn ended so */
	uint64_t stop_ms;		/* ... then; "" once the user typed */

	/* the end */
	bool cancel;
	uint64_t cancel_ms;
	int status, signo;
};

/* A decision in the making. */
struct eval {
	bool keep;		/* nothing decided: keep the current state */
	enum pty_detect_state st;
	int rule;		/* deciding rule index, or -1 */
	char sig[PTY_DETECT_SIGNAL_MAX];
	char detail[PTY_DETECT_DETAIL_MAX];
	bool facts;		/* the decision waits on process facts */
	bool quiet;		/* no output for quiet_ms */
	bool facts_fast;	/* sample facts at facts_min_ms, no backoff */
	uint64_t wake;
};

/* ------------------------------------------------------------------ */

const char *
pty_detect_state_name(enum pty_detect_state s)
{
	if ((unsigned)s >= PTY_DETECT_NSTATES)
		return "unknown";
	return state_names[s];
}

int
pty_detect_state_parse(const char *name, enum pty_detect_state *out)
{
	int i;

	if (name == NULL || out == NULL)
		return -EINVAL;
	for (i = 0; i < PTY_DETECT_NSTATES; i++)
		if (strcmp(name, state_names[i]) == 0) {
			*out = (enum pty_detect_state)i;
			return 0;
		}
	return -EINVAL;
}

/* The states a report can carry, and what each means here. */
static bool
report_state(const char *name, enum pty_detect_state *out)
{
	if (strcmp(name, "working") == 0)
		*out = PTY_DETECT_WORKING;
	else if (strcmp(name, "prompt") == 0 || strcmp(name, "done") == 0 ||
	    strcmp(name, "failed") == 0)
		*out = PTY_DETECT_PROMPT;	/* alive: waiting for input */
	else if (strcmp(name, "blocked") == 0)
		*out = PTY_DETECT_BLOCKED;
	else
		return false;
	return true;
}

int
pty_detect_report_seq(const char *state, char *buf, size_t bufsz)
{
	enum pty_detect_state st;
	int n;

	if (state == NULL || buf == NULL || !report_state(state, &st))
		return -EINVAL;
	n = snprintf(buf, bufsz, "\033]%d;%s;%s\007", PTY_DETECT_REPORT_OSC,
	    PTY_DETECT_REPORT_TAG, state);
	if (n < 0 || (size_t)n >= bufsz)
		return -ENOBUFS;
	return n;
}

/*
 * The UTF-8 length of the Unicode space at s (no-break, en/em/thin/hair,
 * narrow no-break, medium mathematical, ideographic, ogham), or 0. Rules
 * see each as an ASCII space: Claude Code draws its input row as U+276F
 * and a no-break space (SPEC 5.3).
 */
static size_t
uspace_len(const unsigned char *s, size_t n)
{
	if (n >= 2 && s[0] == 0xc2 && s[1] == 0xa0)
		return 2;
	if (n < 3)
		return 0;
	if (s[0] == 0xe2 && s[1] == 0x80 && ((s[2] >= 0x80 && s[2] <= 0x8a) ||
	    s[2] == 0xaf))
		return 3;
	if ((s[0] == 0xe2 && s[1] == 0x81 && s[2] == 0x9f) ||
	    (s[0] == 0xe3 && s[1] == 0x80 && s[2] == 0x80) ||
	    (s[0] == 0xe1 && s[1] == 0x9a && s[2] == 0x80))
		return 3;
	return 0;
}

/*
 * Copy at most sz-1 bytes, cut on a UTF-8 boundary, C0/DEL as repl and
 * Unicode spaces as ' '; returns the bytes written.
 */
static size_t
copy_clean(char *dst, size_t sz, const char *src, size_t len, char repl)
{
	const unsigned char *u = (const unsigned char *)src;
	size_t i = 0, o = 0, n = len < sz - 1 ? len : sz - 1, k;

	if (n < len)
		while (n > 0 && (u[n] & 0xc0) == 0x80)
			n--;
	while (i < n) {
		if ((k = uspace_len(u + i, n - i)) > 0) {
			dst[o++] = ' ';
			i += k;
			continue;
		}
		dst[o++] = u[i] < 0x20 || u[i] == 0x7f ? repl : (char)u[i];
		i++;
	}
	dst[o] = '\0';
	return o;
}

static uint64_t
fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ull;
	}
	return h;
}

/* ------------------------------------------------------------------ */
/* Rules                                                                */

/* The text a rule looks at now, or NULL when its region is empty. */
static const char *
region_text(const struct pty_detect *d, const struct pty_rule_info *ri)
{
	int start;

	switch (ri->region) {
	case PTY_RULES_BOTTOM:
		if (d->nrows == 0)
			return "";
		start = d->nrows > ri->rows ? d->nrows - ri->rows : 0;
		return d->text + d->rowoff[start];
	case PTY_RULES_TITLE:
		return d->title;
	case PTY_RULES_NOTIFY:
		return d->notify_on ? d->notify : NULL;
	}
	return NULL;
}

/* Re-test rule i if its region's text changed since the last look. */
static void
rule_update(struct pty_detect *d, int i, uint64_t now)
{
	struct rstate *r = &d->rs[i];
	const char *text = region_text(d, &r->info);
	uint64_t h;

	if (text == NULL) {
		r->valid = false;
		r->matched = false;
		return;
	}
	h = fnv1a(text);
	if (r->valid && h == r->hash)
		return;
	r->valid = true;
	r->hash = h;
	r->since_ms = now;
	r->matched = pty_rules_agent_test(d->agent, i, text, NULL, NULL);
}

static void
rules_update(struct pty_detect *d, enum pty_rules_region region,
    uint64_t now)
{
	int i;

	for (i = 0; i < d->nrules; i++)
		if (d->rs[i].info.region == region)
			rule_update(d, i, now);
}

/* ------------------------------------------------------------------ */

int
pty_detect_new(struct pty_detect **out, const struct pty_detect_opts *opts,
    uint64_t now_ms)
{
	struct pty_detect *d;

	if (out == NULL)
		return -EINVAL;
	d = calloc(1, sizeof *d);
	if (d == NULL)
		return -ENOMEM;
	d->o = opts != NULL ? *opts : defaults;
#define DEF(f) if (d->o.f == 0) d->o.f = defaults.f
	DEF(quiet_ms);
	DEF(rule_quiet_ms);
	DEF(work_ms);
	DEF(echo_ms);
	DEF(resize_ms);
	DEF(idle_ms);
	DEF(blind_ms);
	DEF(grace_ms);
	DEF(facts_min_ms);
	DEF(facts_max_ms);
	DEF(progress_ms);
#undef DEF
	d->state = d->shown = PTY_DETECT_STARTING;
	d->t0 = d->since_ms = d->screen_ms = now_ms;
	snprintf(d->signal, sizeof d->signal, "start");
	d->rule = -1;
	d->facts_iv = d->o.facts_min_ms;
	*out = d;
	return 0;
}

void
pty_detect_free(struct pty_detect *d)
{
	if (d == NULL)
		return;
	free(d->text);
	free(d);
}

void
pty_detect_set_agent(struct pty_detect *d, const struct pty_rules_agent *a)
{
	int i;

	assert(d != NULL);
	d->agent = a;
	d->rule = -1;
	d->nrules = pty_rules_agent_nrules(a);
	assert(d->nrules <= PTY_RULES_MAX);
	for (i = 0; i < d->nrules; i++) {
		memset(&d->rs[i], 0, sizeof d->rs[i]);
		pty_rules_agent_rule(a, i, &d->rs[i].info);
		rule_update(d, i, d->screen_ms);
	}
}

const struct pty_rules_agent *
pty_detect_agent(const struct pty_detect *d)
{
	assert(d != NULL);
	return d->agent;
}

/*
 * Hints (report, notification, bell) end with output after their grace,
 * or with any output once the operator typed after them: that output is
 * the agent's answer to the keys (a rejected permission redrawn at once),
 * not part of the drawing the hint came with.
 */
static bool
hint_over(const struct pty_detect *d, uint64_t at, uint64_t now)
{
	return now >= at + d->o.grace_ms || (d->any_input && d->input_ms >= at);
}

static void
hints_end(struct pty_detect *d, uint64_t now)
{
	if (d->report_on && hint_over(d, d->report_ms, now))
		d->report_on = false;
	if (d->bell_on && hint_over(d, d->bell_ms, now))
		d->bell_on = false;
	if (d->notify_on && hint_over(d, d->notify_ms, now)) {
		d->notify_on = false;
		rules_update(d, PTY_RULES_NOTIFY, now);
	}
}

static void
on_output(struct pty_detect *d, size_t bytes, uint64_t now)
{
	bool echo = d->any_input && now - d->input_ms < d->o.echo_ms;
	bool redraw = d->any_resize && now - d->resize_ms < d->o.resize_ms;

	d->any_out = true;
	d->last_out_ms = now;
	d->out_bytes += bytes;
	if (!echo && !redraw) {
		if (!d->burst || now - d->last_counted_ms >= d->o.quiet_ms)
			d->burst_start_ms = now;
		d->burst = true;
		d->last_counted_ms = now;
	}
	hints_end(d, now);
	d->facts_iv = d->o.facts_min_ms;
	d->facts_due = 0;
}

static void
on_exit_event(struct pty_detect *d, int status, int signo, uint64_t now)
{
	char what[32];

	d->status = status;
	d->signo = signo;
	if (signo > 0)
		snprintf(what, sizeof what, "signal:%d", signo);
	else
		snprintf(what, sizeof what, "exit:%d", status);
	d->final = true;
	d->since_ms = now;
	if (d->cancel) {
		d->state = PTY_DETECT_CANCELLED;
		snprintf(d->signal, sizeof d->signal, "cancel");
		snprintf(d->detail, sizeof d->detail,
		    "operator cancel, then %s %" PRIu64 " ms later", what,
		    now - d->cancel_ms);
	} else {
		d->state = signo > 0 || status != 0 ? PTY_DETECT_FAILED :
		    PTY_DETECT_DONE;
		snprintf(d->signal, sizeof d->signal, "%s", what);
		d->detail[0] = '\0';
	}
}

static void
set_notify(struct pty_detect *d, const char *src, const char *text,
    uint64_t now)
{
	while (*text == ' ' || *text == '\n' || *text == '\r' || *text == '\t')
		text++;
	copy_clean(d->notify, sizeof d->notify, text, strlen(text), ' ');
	d->notify_on = true;
	d->notify_src = src;
	d->notify_ms = now;
	rules_update(d, PTY_RULES_NOTIFY, now);
}

static void
set_mark(struct pty_detect *d, const char *src, char mark, uint64_t now)
{
	d->mark = mark;
	d->mark_src = src;
	d->mark_ms = now;
}

/* One OSC "NUM;payload" (PTY_SEV_OSC); anything unknown is ignored. */
static void
on_osc(struct pty_detect *d, const char *text, size_t len, uint64_t now)
{
	char buf[OSC_MAX];
	const char *p;
	char *semi;
	long num = 0;
	size_t i;

	d->oscs++;
	if (text == NULL || len == 0)
		return;
	/* Keep raw C0 (a notification may start with newlines). */
	len = len < sizeof buf - 1 ? len : sizeof buf - 1;
	memcpy(buf, text, len);
	buf[len] = '\0';
	len = strlen(buf);
	for (i = 0; i < len && buf[i] >= '0' && buf[i] <= '9' && i < 6; i++)
		num = num * 10 + (buf[i] - '0');
	if (i == 0 || (buf[i] != ';' && buf[i] != '\0'))
		return;
	p = buf[i] == ';' ? buf + i + 1 : buf + i;
	switch (num) {
	case 133:
	case 633:
		if (p[0] >= 'A' && p[0] <= 'D' && (p[1] == '\0' || p[1] == ';'))
			set_mark(d, num == 133 ? "osc133" : "osc633", p[0],
			    now);
		break;
	case 9:
		if (p[0] == '4' && p[1] == ';') {
			int st = p[2] >= '0' && p[2] <= '4' ? p[2] - '0' : 0;

			d->progress = st;
			d->progress_ms = now;
			break;
		}
		for (i = 0; p[i] >= '0' && p[i] <= '9'; i++)
			;
		if (i > 0 && (p[i] == ';' || p[i] == '\0'))
			break;	/* another ConEmu OSC 9;N command */
		set_notify(d, "osc9", p, now);
		break;
	case 777:
		if (strncmp(p, "notify;", 7) == 0) {
			char note[NOTIFY_MAX];

			semi = strchr(p + 7, ';');
			if (semi != NULL)
				snprintf(note, sizeof note, "%.*s: %s",
				    (int)(semi - (p + 7)), p + 7, semi + 1);
			else
				snprintf(note, sizeof note, "%s", p + 7);
			set_notify(d, "osc777", note, now);
		} else if (strcmp(p, "precmd") == 0) {
			set_mark(d, "osc777", 'A', now);
		} else if (strcmp(p, "preexec") == 0) {
			set_mark(d, "osc777", 'C', now);
		}
		break;
	case PTY_DETECT_REPORT_OSC: {
		enum pty_detect_state st;
		size_t tl = strlen(PTY_DETECT_REPORT_TAG);

		if (strncmp(p, PTY_DETECT_REPORT_TAG, tl) != 0 ||
		    p[tl] != ';' || !report_state(p + tl + 1, &st))
			break;
		d->report_on = true;
		d->report = st;
		d->report_ms = now;
		d->reports++;
		snprintf(d->report_name, sizeof d->report_name, "%s",
		    p + tl + 1);
		break;
	}
	default:
		break;
	}
}

/*
 * The model's stop reason, from the upstream through the gateway: kept
 * only as a word ([a-z_], bounded), else "other".
 */
static void
on_stop(struct pty_detect *d, const char *text, uint64_t now)
{
	size_t n = text != NULL ? strlen(text) : 0;

	if (n == 0 || n >= sizeof d->stop ||
	    strspn(text, "abcdefghijklmnopqrstuvwxyz_") != n)
		text = "other";
	snprintf(d->stop, sizeof d->stop, "%s", text);
	d->stop_ms = now;
}

/* The model's turn ended with its answer (not a tool call): Anthropic's
 * end_turn, chat completions' stop. */
static bool
turn_ended(const struct pty_detect *d)
{
	return strcmp(d->stop, "end_turn") == 0 || strcmp(d->stop, "stop") == 0;
}

void
pty_detect_feed_event(struct pty_detect *d, const struct pty_detect_event *ev)
{
	uint64_t now;

	assert(d != NULL && ev != NULL);
	now = ev->now_ms;
	if (d->final)
		return;
	switch (ev->kind) {
	case PTY_DETECT_EV_OUTPUT:
		if (ev->bytes > 0)
			on_output(d, ev->bytes, now);
		break;
	case PTY_DETECT_EV_INPUT:
		d->any_input = true;
		d->input_ms = now;
		d->stop[0] = '\0';	/* what it asks for next is unknown */
		break;
	case PTY_DETECT_EV_RESIZE:
		d->any_resize = true;
		d->resize_ms = now;
		break;
	case PTY_DETECT_EV_CANCEL:
		if (!d->cancel) {
			d->cancel = true;
			d->cancel_ms = now;
		}
		break;
	case PTY_DETECT_EV_EXIT:
		on_exit_event(d, ev->status, ev->signo, now);
		break;
	case PTY_DETECT_EV_BELL:
		d->bells++;
		d->bell_on = true;
		d->bell_ms = now;
		break;
	case PTY_DETECT_EV_OSC:
		on_osc(d, ev->text, ev->len, now);
		break;
	case PTY_DETECT_EV_EGRESS:
		d->inflight = ev->inflight;
		break;
	case PTY_DETECT_EV_HELD:
		snprintf(d->held, sizeof d->held, "%s", ev->text != NULL ?
		    ev->text : "");
		break;
	case PTY_DETECT_EV_STOP:
		on_stop(d, ev->text, now);
		break;
	}
}

static bool
blank_row(const char *s)
{
	if (s == NULL)
		return true;
	for (; *s != '\0'; s++)
		if (*s != ' ')
			return false;
	return true;
}

/* Read the screen's dialog again; a new or changed one holds anew. */
static void
dialog_update(struct pty_detect *d, uint64_t now)
{
	bool had = d->dlg_on;
	uint64_t was = d->dlg.digest;

	d->dlg_on = d->nrows > 0 && d->text != NULL &&
	    pty_dialog_parse(d->text, &d->dlg);
	if (d->dlg_on && (!had || d->dlg.digest != was))
		d->dlg_ms = now;
}

void
pty_detect_set_screen(struct pty_detect *d, const char *const *rows,
    int nrows, const char *title, uint64_t now_ms)
{
	int last, first, i, k;
	size_t need = 1, o = 0, len;

	assert(d != NULL && nrows >= 0 && (rows != NULL || nrows == 0));
	for (last = nrows - 1; last >= 0 && blank_row(rows[last]); last--)
		;
	first = last + 1 > PTY_RULES_ROWS_MAX ? last + 1 -
	    PTY_RULES_ROWS_MAX : 0;
	for (i = first; i <= last; i++) {
		len = rows[i] != NULL ? strlen(rows[i]) : 0;
		need += (len < PTY_DETECT_ROW_MAX ? len : PTY_DETECT_ROW_MAX) +
		    1;
	}
	if (need > d->textcap || need < d->textcap / 4) {
		char *t = realloc(d->text, need);

		if (t == NULL && need > d->textcap) {
			d->nrows = 0;	/* no memory: no screen rules */
			goto title;
		}
		if (t != NULL) {
			d->text = t;
			d->textcap = need;
		}
	}
	for (i = first, k = 0; i <= last; i++, k++) {
		d->rowoff[k] = o;
		len = rows[i] != NULL ? strlen(rows[i]) : 0;
		o += copy_clean(d->text + o, PTY_DETECT_ROW_MAX + 1,
		    rows[i] != NULL ? rows[i] : "", len, ' ');
		d->text[o++] = '\n';
	}
	if (o > 0)
		o--;	/* no newline after the last row */
	if (d->text != NULL)
		d->text[o] = '\0';
	d->nrows = k;
	d->rowoff[k] = o;
title:
	d->screen_ms = now_ms;
	copy_clean(d->title, sizeof d->title, title != NULL ? title : "",
	    title != NULL ? strlen(title) : 0, ' ');
	rules_update(d, PTY_RULES_BOTTOM, now_ms);
	rules_update(d, PTY_RULES_TITLE, now_ms);
	dialog_update(d, now_ms);
}

void
pty_detect_set_facts(struct pty_detect *d, const struct pty_facts *f,
    uint64_t now_ms)
{
	assert(d != NULL && f != NULL);
	d->facts_ever = true;
	d->facts_ms = now_ms;
	d->tty_read = f->fg_tty_read;
	d->beyond = f->nbeyond;
	d->wait_known = f->fg_wait_known || f->fg_tty_read;
	d->tty_wait = f->fg_tty_wait || f->fg_tty_read;
	copy_clean(d->fg_comm, sizeof d->fg_comm, f->fg_comm,
	    strnlen(f->fg_comm, sizeof f->fg_comm), '?');
	if (d->have_ticks && now_ms <= d->ticks_ms)
		return;	/* same instant: no interval to measure */
	if (d->have_ticks && f->cpu_ticks >= d->ticks) {
		uint64_t dt = f->cpu_ticks - d->ticks;

		d->cpu_valid = true;
		d->cpu_from_ms = d->ticks_ms;
		d->cpu_iv = now_ms - d->ticks_ms;
		d->cpu_ms = dt * 1000 / TICKS_HZ;
		/* at least two ticks and a tenth of one CPU */
		d->cpu_busy = dt >= 2 && d->cpu_ms * 10 >= d->cpu_iv;
	} else {
		d->cpu_valid = false;	/* first sample, or a process left */
	}
	d->have_ticks = true;
	d->ticks = f->cpu_ticks;
	d->ticks_ms = now_ms;
}

/* ------------------------------------------------------------------ */
/* The decision                                                         */

static void
wake_at(struct eval *e, uint64_t now, uint64_t t)
{
	if (t > now && t < e->wake)
		e->wake = t;
}

static void
decide(struct eval *e, enum pty_detect_state st, const char *sig,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
decide(struct eval *e, enum pty_detect_state st, const char *sig,
    const char *fmt, ...)
{
	va_list ap;

	e->keep = false;
	e->st = st;
	snprintf(e->sig, sizeof e->sig, "%s", sig);
	va_start(ap, fmt);
	vsnprintf(e->detail, sizeof e->detail, fmt, ap);
	va_end(ap);
}

static void
decide_rule(struct eval *e, const struct pty_detect *d, int i)
{
	e->keep = false;
	e->st = d->rs[i].info.state;
	e->rule = i;
	snprintf(e->sig, sizeof e->sig, "rule:%s:%s",
	    pty_rules_agent_name(d->agent), d->rs[i].info.name);
	e->detail[0] = '\0';	/* filled in on a transition only */
}

/*
 * The matching rule of highest priority among blocked rules (blocked) or
 * the others; a rule counts once its region held still for its hold,
 * except that a blocked state keeps while any blocked rule matches.
 */
static int
best_rule(const struct pty_detect *d, uint64_t now, bool blocked,
    struct eval *e)
{
	int i, b = -1;

	for (i = 0; i < d->nrules; i++) {
		const struct rstate *r = &d->rs[i];

		if (!r->matched ||
		    (r->info.state == PTY_DETECT_BLOCKED) != blocked)
			continue;
		if (!(blocked && d->state == PTY_DETECT_BLOCKED) &&
		    now < r->since_ms + r->info.hold_ms) {
			wake_at(e, now, r->since_ms + r->info.hold_ms);
			continue;
		}
		if (b < 0 || r->info.priority > d->rs[b].info.priority)
			b = i;
	}
	return b;
}

/* A working rule matches the screen now (held or not). */
static bool
working_match(const struct pty_detect *d)
{
	for (int i = 0; i < d->nrules; i++)
		if (d->rs[i].matched &&
		    d->rs[i].info.state == PTY_DETECT_WORKING)
			return true;
	return false;
}

/*
 * Keep sampling a resting agent for INPUT_WATCH_MS after the operator's
 * keys (backed off as ever): a command typed at a prompt may start after
 * the one sample of the quiet spell (a loaded machine, a shell still
 * reading the line) and print nothing while it runs.
 */
static bool
input_watch(const struct pty_detect *d, uint64_t now)
{
	return d->any_input && now - d->input_ms < INPUT_WATCH_MS;
}

static void
evaluate(const struct pty_detect *d, uint64_t now, struct eval *e)
{
	uint64_t last = d->any_out ? d->last_out_ms : d->t0;
	uint64_t qfor = now >= last ? now - last : 0, idle;
	bool quiet = qfor >= d->o.quiet_ms, fresh, cpu_fresh;
	int b;

	memset(e, 0, sizeof *e);
	e->quiet = quiet;
	e->keep = true;
	e->rule = -1;
	e->wake = PTY_DETECT_NEVER;
	if (!quiet)
		wake_at(e, now, last + d->o.quiet_ms);

	/* A blocked agent is never shown as prompt or working (SPEC 5.4). */
	b = best_rule(d, now, true, e);
	if (b >= 0) {
		decide_rule(e, d, b);
		return;
	}
	/* Its model requests are held (SPEC 8.5): the operator decides. */
	if (d->held[0] != '\0') {
		char sig[48];

		snprintf(sig, sizeof sig, "gateway:%s", d->held);
		decide(e, PTY_DETECT_BLOCKED, sig, "its model requests are "
		    "held (%s) until the operator raises its budget", d->held);
		return;
	}
	/*
	 * Any agent's choice dialog, known to its rules or not, once it held
	 * still (SPEC 5.3): unless its status line says it works, or nothing
	 * in the foreground reads the terminal to take an answer.
	 */
	fresh = d->facts_ever && d->facts_ms >= last;
	if (d->dlg_on && !working_match(d) &&
	    !(fresh && d->wait_known && !d->tty_wait)) {
		if (d->state == PTY_DETECT_BLOCKED ||
		    now >= d->dlg_ms + DIALOG_HOLD_MS) {
			decide(e, PTY_DETECT_BLOCKED, "dialog", "%s",
			    d->dlg.evidence);
			return;
		}
		wake_at(e, now, d->dlg_ms + DIALOG_HOLD_MS);
	}
	/* A report holds until output after it (hints_end). */
	if (d->report_on) {
		char sig[32];

		snprintf(sig, sizeof sig, "report:%s", d->report_name);
		decide(e, d->report, sig, "corral report %s",
		    d->report_name);
		return;
	}
	b = best_rule(d, now, false, e);
	if (b >= 0 && d->rs[b].info.state == PTY_DETECT_WORKING) {
		decide_rule(e, d, b);
		return;
	}

	/*
	 * A command runs (OSC 133 C) until the next mark, unless it sits in
	 * a terminal read.
	 */
	if (d->mark == 'C' && !(quiet && fresh && d->tty_read)) {
		char sig[32];

		snprintf(sig, sizeof sig, "%s:C", d->mark_src);
		e->facts = quiet;
		decide(e, PTY_DETECT_WORKING, sig, "command running");
		return;
	}
	/*
	 * The agent's own prompt rule, held still for its hold, no working
	 * rule matching, output quiet for rule_quiet_ms and the last facts
	 * (for a caller that samples them: once one came) not against it:
	 * its screen says the turn is over, without waiting out the general
	 * quiet (issue 20: a transition within 300 ms of the screen change).
	 */
	if (b >= 0 && d->rs[b].info.state == PTY_DETECT_PROMPT &&
	    !working_match(d) && (d->facts_ever ||
	    !(d->o.flags & PTY_DETECT_F_FACTS)) &&
	    (!d->wait_known || d->tty_wait)) {
		if (qfor >= d->o.rule_quiet_ms) {
			e->facts = input_watch(d, now);
			decide_rule(e, d, b);
			return;
		}
		wake_at(e, now, last + d->o.rule_quiet_ms);
	}
	/* Output: a spinner frame keeps working; a rest needs a burst. */
	if (d->burst && now - d->last_counted_ms < d->o.quiet_ms &&
	    (d->state == PTY_DETECT_STARTING ||
	    d->state == PTY_DETECT_WORKING ||
	    d->last_counted_ms - d->burst_start_ms >= d->o.work_ms)) {
		decide(e, PTY_DETECT_WORKING, "output",
		    "%" PRIu64 " bytes so far", d->out_bytes);
		return;
	}
	if (!quiet)
		return;	/* echo, redraw or a short burst: keep */

	/*
	 * Quiet. A caller that samples facts gets asked once before any
	 * resting state is decided (one sample per quiet spell, not per
	 * idle second); when the sample does not come, decide without.
	 */
	if ((d->o.flags & PTY_DETECT_F_FACTS) && !fresh &&
	    !(d->asked && d->ask_ms >= last && now > d->ask_ms)) {
		e->facts = true;
		return;
	}
	/*
	 * Nothing in the foreground waits on the terminal (a command runs
	 * under a shell, a silent download, a sleep): it cannot be waiting
	 * for an instruction, whatever its screen shows (SPEC 5.3).
	 */
	if (fresh && d->wait_known && !d->tty_wait) {
		e->facts = true;	/* keep looking: it may start reading */
		/*
		 * Its screen already shows a prompt (an agent busy starting
		 * up after a dialog): it reads again any moment, so look
		 * again soon, not at a backed-off interval.
		 */
		e->facts_fast = b >= 0;
		decide(e, PTY_DETECT_WORKING, "fact:no-tty-wait",
		    "%s is not waiting on the terminal", d->fg_comm);
		return;
	}
	if (b >= 0) {
		e->facts = input_watch(d, now);
		decide_rule(e, d, b);
		return;
	}
	/*
	 * Requests in flight through the lease's proxy outrank a terminal
	 * read: a program polling a socket with a terminal on fd 0 (curl)
	 * looks like one (facts.c), and the agent is waiting on its model.
	 */
	if (d->inflight > 0) {
		decide(e, PTY_DETECT_WORKING, "egress",
		    "%u model requests in flight", d->inflight);
		return;
	}
	if (fresh && d->tty_read) {
		e->facts = input_watch(d, now);
		decide(e, PTY_DETECT_PROMPT, "fact:tty-read",
		    "%s asleep in a terminal read", d->fg_comm);
		return;
	}
	if (d->mark != 0) {
		char sig[32];

		snprintf(sig, sizeof sig, "%s:%c", d->mark_src, d->mark);
		decide(e, PTY_DETECT_PROMPT, sig, "shell integration mark");
		return;
	}
	if (d->progress == 1 || d->progress == 3) {
		uint64_t from = d->progress_ms > last ? d->progress_ms : last;

		if (now < from + d->o.progress_ms) {
			wake_at(e, now, from + d->o.progress_ms);
			decide(e, PTY_DETECT_WORKING, "osc9;4",
			    "progress shown");
			return;
		}
	}
	if (d->notify_on) {
		decide(e, PTY_DETECT_PROMPT, d->notify_src, "%s", d->notify);
		return;
	}
	if (d->bell_on) {
		decide(e, PTY_DETECT_PROMPT, "bel", "bell after output");
		return;
	}
	cpu_fresh = d->cpu_valid && d->cpu_from_ms >= last;
	if (cpu_fresh && d->cpu_busy) {
		e->facts = true;	/* keep looking: it may stop */
		decide(e, PTY_DETECT_WORKING, "fact:cpu",
		    "%" PRIu64 " ms CPU in %" PRIu64 " ms", d->cpu_ms,
		    d->cpu_iv);
		return;
	}
	/*
	 * Its model's turn ended with an answer, nothing is in flight and
	 * nothing runs: it waits for its user, with no wait for idle (the
	 * gateway saw the turn end, SPEC 5.3, 8.5). A tool call (tool_use)
	 * is left to the facts: the tool runs, or the agent asks first.
	 */
	if (d->stop[0] != '\0' && turn_ended(d)) {
		char sig[48];

		snprintf(sig, sizeof sig, "model:%s", d->stop);
		decide(e, PTY_DETECT_PROMPT, sig, "its model's turn ended and "
		    "nothing runs");
		return;
	}
	/* Nothing shown yet and idle: a longer wait before saying so. */
	idle = d->state == PTY_DETECT_STARTING ? d->o.blind_ms : d->o.idle_ms;
	if (cpu_fresh) {
		if (qfor >= idle) {
			/*
			 * Its processes outside the session (a daemon of a
			 * trusted_local agent) may start a turn with no output
			 * on this terminal: keep sampling, backed off (issue
			 * 20 item 6).
			 */
			e->facts = d->beyond > 0;
			decide(e, PTY_DETECT_PROMPT, "quiet",
			    "no output for %" PRIu64 " ms, CPU idle", qfor);
			return;
		}
		wake_at(e, now, last + idle);
	} else if (!d->facts_ever) {
		if (qfor >= d->o.blind_ms) {
			decide(e, PTY_DETECT_PROMPT, "quiet",
			    "no output for %" PRIu64 " ms, no process facts",
			    qfor);
			return;
		}
		wake_at(e, now, last + d->o.blind_ms);
	}
	e->facts = true;
}

void
pty_detect_step(struct pty_detect *d, uint64_t now_ms,
    struct pty_detect_result *out)
{
	struct eval e;

	assert(d != NULL && out != NULL);
	memset(out, 0, sizeof *out);
	out->next_ms = PTY_DETECT_NEVER;
	if (!d->final) {
		evaluate(d, now_ms, &e);
		if (!e.keep && e.st != d->state) {
			d->state = e.st;
			d->since_ms = now_ms;
			/*
			 * At a rest, work must start anew: the burst that
			 * led up to a dialog is not work after its answer.
			 */
			if (e.st == PTY_DETECT_PROMPT ||
			    e.st == PTY_DETECT_BLOCKED)
				d->burst = false;
			snprintf(d->signal, sizeof d->signal, "%s", e.sig);
			d->rule = e.rule;
			if (e.rule >= 0) {
				const char *text = region_text(d,
				    &d->rs[e.rule].info), *line = NULL;
				size_t ll = 0;

				if (text != NULL)
					pty_rules_agent_test(d->agent, e.rule,
					    text, &line, &ll);
				copy_clean(d->detail, sizeof d->detail,
				    line != NULL ? line : "", ll, '?');
			} else {
				copy_clean(d->detail, sizeof d->detail,
				    e.detail, strlen(e.detail), '?');
			}
		}
		out->next_ms = e.wake;
		if (e.facts && e.quiet) {
			if (e.facts_fast) {
				d->facts_iv = d->o.facts_min_ms;
				if (d->facts_due > now_ms + d->facts_iv)
					d->facts_due = now_ms + d->facts_iv;
			}
			if (now_ms >= d->facts_due) {
				out->want_facts = true;
				d->asked = true;
				d->ask_ms = now_ms;
				d->facts_due = now_ms + d->facts_iv;
				d->facts_iv = d->facts_iv * 2 >
				    d->o.facts_max_ms ? d->o.facts_max_ms :
				    d->facts_iv * 2;
			}
			if (d->facts_due < out->next_ms)
				out->next_ms = d->facts_due;
		}
	}
	out->state = d->state;
	out->prev = d->shown;
	out->changed = d->state != d->shown;
	out->final = d->final;
	out->since_ms = d->since_ms;
	snprintf(out->signal, sizeof out->signal, "%s", d->signal);
	snprintf(out->detail, sizeof out->detail, "%s", d->detail);
	d->shown = d->state;
}

/* ------------------------------------------------------------------ */

static void
put(char *buf, size_t bufsz, size_t *o, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
put(char *buf, size_t bufsz, size_t *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(*o < bufsz ? buf + *o : NULL,
	    *o < bufsz ? bufsz - *o : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		*o += (size_t)n;
}

static uint64_t
ago(uint64_t now, uint64_t t)
{
	return now > t ? now - t : 0;
}

/*
 * What on the screen decided, quoted only from the screen as it is now: a
 * state kept after its rule stopped matching (the screen moved on, and
 * nothing else decided yet) says so rather than cite a row that is gone.
 */
static void
explain_evidence(const struct pty_detect *d, char *buf, size_t bufsz,
    size_t *o)
{
	char q[PTY_DETECT_DETAIL_MAX];
	const char *text, *line = NULL;
	size_t ll = 0;

	if (d->final || (d->rule < 0 && strcmp(d->signal, "dialog") != 0)) {
		if (d->detail[0] != '\0')
			put(buf, bufsz, o, "detail: %s\n", d->detail);
		return;
	}
	if (d->rule >= 0) {
		text = region_text(d, &d->rs[d->rule].info);
		if (text != NULL && pty_rules_agent_test(d->agent, d->rule, text,
		    &line, &ll)) {
			copy_clean(q, sizeof q, line, ll, '?');
			put(buf, bufsz, o, "detail: %s\n", q);
		} else {
			put(buf, bufsz, o, "detail: not on the screen now "
			    "(rule %s no longer matches)\n",
			    d->rs[d->rule].info.name);
		}
		return;
	}
	if (!d->dlg_on) {
		put(buf, bufsz, o, "detail: not on the screen now (the dialog "
		    "is gone)\n");
		return;
	}
	copy_clean(q, sizeof q, d->dlg.question, strcspn(d->dlg.question,
	    "\n"), '?');
	put(buf, bufsz, o, "detail: %s: %s\n", d->dlg.evidence, q);
}

size_t
pty_detect_explain(const struct pty_detect *d, uint64_t now_ms, char *buf,
    size_t bufsz)
{
	size_t o = 0;

	assert(d != NULL && (buf != NULL || bufsz == 0));
	if (bufsz > 0)
		buf[0] = '\0';
	uint64_t ms = ago(now_ms, d->since_ms);
	char dur[48];

	/* "350 ms", "25.4 s", "7m12s", "2h05m" (issue 21) */
	if (ms < 1000)
		snprintf(dur, sizeof dur, "%" PRIu64 " ms", ms);
	else if (ms < 60000)
		snprintf(dur, sizeof dur, "%" PRIu64 ".%" PRIu64 " s",
		    ms / 1000, ms % 1000 / 100);
	else if (ms < 3600000)
		snprintf(dur, sizeof dur, "%" PRIu64 "m%02" PRIu64 "s",
		    ms / 60000, ms % 60000 / 1000);
	else
		snprintf(dur, sizeof dur, "%" PRIu64 "h%02" PRIu64 "m",
		    ms / 3600000, ms % 3600000 / 60000);
	put(buf, bufsz, &o, "state: %s%s for %s\n",
	    pty_detect_state_name(d->state), d->final ? " (final)" : "", dur);
	put(buf, bufsz, &o, "signal: %s\n", d->signal);
	explain_evidence(d, buf, bufsz, &o);
	put(buf, bufsz, &o, "agent: %s\n", d->agent != NULL ?
	    pty_rules_agent_name(d->agent) : "(none: agent-agnostic)");
	if (d->any_out)
		put(buf, bufsz, &o,
		    "output: %" PRIu64 " bytes, last %" PRIu64 " ms ago\n",
		    d->out_bytes, ago(now_ms, d->last_out_ms));
	else
		put(buf, bufsz, &o, "output: none yet\n");
	if (d->facts_ever)
		put(buf, bufsz, &o,
		    "facts: %" PRIu64 " ms ago: foreground %s, %s, %s, "
		    "cpu %s\n", ago(now_ms, d->facts_ms),
		    d->fg_comm[0] != '\0' ? d->fg_comm : "?", d->tty_read ?
		    "in a tty read" : "not in a tty read", !d->wait_known ?
		    "terminal wait unknown" : d->tty_wait ?
		    "waiting on the terminal" : "not waiting on the terminal",
		    !d->cpu_valid ? "unknown" : d->cpu_busy ? "busy" : "idle");
	else
		put(buf, bufsz, &o, "facts: none sampled\n");
	if (d->mark != 0)
		put(buf, bufsz, &o, "mark: %s %c, %" PRIu64 " ms ago\n",
		    d->mark_src, d->mark, ago(now_ms, d->mark_ms));
	if (d->reports > 0)
		put(buf, bufsz, &o, "report: %s, %" PRIu64 " ms ago (%s)\n",
		    d->report_name, ago(now_ms, d->report_ms),
		    d->report_on ? "in force" : "ended by later output");
	if (d->notify_on)
		put(buf, bufsz, &o, "notification: %s\n", d->notify);
	if (d->inflight > 0)
		put(buf, bufsz, &o, "egress: %u in flight\n", d->inflight);
	if (d->held[0] != '\0')
		put(buf, bufsz, &o, "gateway: model requests held (%s)\n",
		    d->held);
	if (d->stop[0] != '\0')
		put(buf, bufsz, &o, "model: the last turn ended %s, %" PRIu64
		    " ms ago\n", d->stop, ago(now_ms, d->stop_ms));
	if (d->cancel)
		put(buf, bufsz, &o, "cancel: requested %" PRIu64 " ms ago\n",
		    ago(now_ms, d->cancel_ms));
	return o;
}

size_t
pty_detect_memory(const struct pty_detect *d)
{
	assert(d != NULL);
	return sizeof *d + d->textcap;
}

const struct pty_dialog *
pty_detect_dialog(const struct pty_detect *d)
{
	assert(d != NULL);
	return d->dlg_on && !d->final ? &d->dlg : NULL;
}
