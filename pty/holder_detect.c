/*
 * holder_detect.c: the holder's side of lifecycle detection (SPEC 5.3,
 * 5.4). The pure detector (detect.c) gets events from the PTY and the
 * screen, the screen's rows and title, and process facts sampled only when
 * it asks (quiet and unsettled), so an idle settled endpoint runs no timer.
 * Steps are coalesced: at most one every HOLDER_DETECT_MIN_MS while output
 * flows. State changes go to the composition root through hooks.activity.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "pty/pty.h"
#include "pty/pty_holder_int.h"
#include "pty/pty_int.h"

#define HOLDER_DETECT_MIN_MS 50
#define ANSWER_GAP_MS 40	/* between the keys of an answer */

static uint64_t
det_now(void)
{
	return uv_hrtime() / 1000000u;
}

static void det_step(struct holder *);

static void
det_timer_cb(uv_timer_t *t)
{
	det_step(t->data);
}

static void
det_arm(struct holder *h, uint64_t at)
{
	uint64_t now = det_now();

	if (h->det == NULL)
		return;
	uv_timer_stop(&h->det_timer);
	uv_timer_start(&h->det_timer, det_timer_cb, at > now ? at - now : 0,
	    0);
}

/* Step soon, but not more often than HOLDER_DETECT_MIN_MS. */
static void
det_soon(struct holder *h)
{
	uint64_t at = h->det_last_ms + HOLDER_DETECT_MIN_MS;

	if (h->det == NULL)
		return;
	if (uv_is_active((uv_handle_t *)&h->det_timer) &&
	    h->det_res.next_ms != PTY_DETECT_NEVER && h->det_res.next_ms <= at)
		return;
	det_arm(h, at);
}

static int
rows_alloc(struct holder *h, int rows)
{
	char **v;

	if (rows == h->det_nrows)
		return 0;
	for (int i = 0; i < h->det_nrows; i++)
		free(h->det_rows[i]);
	free(h->det_rows);
	h->det_rows = NULL;
	h->det_nrows = 0;
	if (rows == 0)
		return 0;	/* freed (pty__holder_detect_free) */
	if ((v = calloc((size_t)rows, sizeof *v)) == NULL)
		return -ENOMEM;
	for (int i = 0; i < rows; i++) {
		if ((v[i] = malloc(PTY_DETECT_ROW_MAX)) == NULL) {
			for (int k = 0; k < i; k++)
				free(v[k]);
			free(v);
			return -ENOMEM;
		}
	}
	h->det_rows = v;
	h->det_nrows = rows;
	return 0;
}

static void
feed_screen(struct holder *h, uint64_t now)
{
	int rows, cols;

	pty_screen_size(h->screen, &rows, &cols);
	if (rows_alloc(h, rows) < 0)
		return;
	for (int r = 0; r < rows; r++)
		pty_screen_row_text(h->screen, r, h->det_rows[r],
		    PTY_DETECT_ROW_MAX);
	/*
	 * Dated when it changed, not now: a step runs up to
	 * HOLDER_DETECT_MIN_MS after the output, and a rule's hold counts
	 * from the change.
	 */
	pty_detect_set_screen(h->det, (const char *const *)h->det_rows, rows,
	    pty_screen_title(h->screen), h->det_dirty_ms != 0 &&
	    h->det_dirty_ms <= now ? h->det_dirty_ms : now);
	h->det_screen_dirty = false;
}

/* Identify the agent from the foreground process (unless --agent). */
static void
identify(struct holder *h, pid_t fg)
{
	const struct pty_rules_agent *a;
	const char *argv[64];
	char buf[4096];
	int argc;

	if (h->o->rules == NULL || h->o->agent != NULL || fg <= 0 ||
	    fg == h->det_fg)
		return;
	h->det_fg = fg;
	argc = pty__facts_cmdline(fg, buf, sizeof buf, argv, 64);
	if (argc <= 0)
		return;
	a = pty_rules_identify(h->o->rules, argv, argc);
	if (a != NULL && a != pty_detect_agent(h->det)) {
		pty_detect_set_agent(h->det, a);
		pty__holder_event(h, "agent", "identified as %s",
		    pty_rules_agent_name(a));
	}
}

int
pty__holder_facts(struct holder *h, struct pty_facts *out)
{
	const struct pty_holder_opts *o = h->o;
	pid_t *extra = NULL;
	size_t n = 0;
	int rc;

	if (o->hooks.procs == NULL || o->hooks.procs(&extra, &n,
	    o->hooks.ud) < 0)
		extra = NULL, n = 0;
	rc = pty__facts_sample(pty_proc_master_fd(h->proc), h->child, extra,
	    n, out);
	free(extra);
	return rc;
}

static void
det_step(struct holder *h)
{
	const struct pty_holder_opts *o = h->o;
	struct pty_detect_result *res = &h->det_res;
	enum pty_detect_state before = res->state;
	uint64_t now = det_now();

	if (h->det == NULL)
		return;
	uv_timer_stop(&h->det_timer);
	if (h->det_screen_dirty)
		feed_screen(h, now);
	pty_detect_step(h->det, now, res);
	if (res->want_facts && h->proc != NULL &&
	    h->state == PTY_RUN_RUNNING) {
		struct pty_facts f;

		if (pty__holder_facts(h, &f) == 0) {
			identify(h, f.fg_pgrp);
			pty_detect_set_facts(h->det, &f, now);
			pty_detect_step(h->det, now, res);
		}
	}
	h->det_last_ms = now;
	if (res->state != before || res->changed) {
		if (o->hooks.activity != NULL)
			o->hooks.activity(pty_detect_state_name(res->state),
			    res->signal, res->detail, o->hooks.ud);
		/*
		 * Summary clients (the console's list) hear of a new state
		 * at once, not at the next 250 ms output push: states are
		 * debounced already, so this stays rare.
		 */
		uv_timer_stop(&h->summary_timer);
		pty__holder_server_summary_cb(&h->summary_timer);
	}
	if (res->next_ms != PTY_DETECT_NEVER)
		det_arm(h, res->next_ms);
}

int
pty__holder_detect_init(struct holder *h)
{
	const struct pty_rules_agent *a = NULL;
	int rc;

	uv_timer_init(h->loop, &h->det_timer);
	h->det_timer.data = h;
	uv_timer_init(h->loop, &h->ans_timer);
	h->ans_timer.data = h;
	/* The holder samples facts whenever the detector asks. */
	if ((rc = pty_detect_new(&h->det, &(struct pty_detect_opts){
	    .flags = PTY_DETECT_F_FACTS }, det_now())) < 0)
		return rc;
	if (h->o->rules != NULL && h->o->agent != NULL &&
	    (a = pty_rules_find(h->o->rules, h->o->agent)) != NULL)
		pty_detect_set_agent(h->det, a);
	memset(&h->det_res, 0, sizeof h->det_res);
	h->det_res.state = PTY_DETECT_STARTING;
	h->det_res.next_ms = PTY_DETECT_NEVER;
	/*
	 * A first step once the loop runs (the agent spawned by then): a
	 * program that never writes a byte still gets its quiet timer, and
	 * facts, so it leaves starting.
	 */
	det_arm(h, det_now());
	return 0;
}

void
pty__holder_detect_free(struct holder *h)
{
	pty_detect_free(h->det);
	h->det = NULL;
	rows_alloc(h, 0);
}

void
pty__holder_detect_trim(struct holder *h)
{
	rows_alloc(h, 0);
}

void
pty__holder_detect_event(struct holder *h, const struct pty_detect_event *e)
{
	struct pty_detect_event ev = *e;

	if (h->det == NULL)
		return;
	ev.now_ms = det_now();
	pty_detect_feed_event(h->det, &ev);
	det_soon(h);
}

void
pty__holder_detect_output(struct holder *h, size_t bytes)
{
	struct pty_detect_event ev = { .kind = PTY_DETECT_EV_OUTPUT,
		.bytes = bytes };

	h->det_screen_dirty = true;
	h->det_dirty_ms = det_now();
	pty__holder_detect_event(h, &ev);
}

void
pty__holder_detect_screen_event(struct holder *h,
    enum pty_screen_event_kind kind, const char *text, size_t len)
{
	struct pty_detect_event ev = { 0 };

	switch (kind) {
	case PTY_SEV_BELL:
		ev.kind = PTY_DETECT_EV_BELL;
		break;
	case PTY_SEV_OSC:
		ev.kind = PTY_DETECT_EV_OSC;
		ev.text = text;
		ev.len = len;
		break;
	case PTY_SEV_TITLE:
		h->det_screen_dirty = true;
	h->det_dirty_ms = det_now();
		det_soon(h);
		return;
	default:
		return;
	}
	pty__holder_detect_event(h, &ev);
}

void
pty__holder_detect_exit(struct holder *h, int64_t ws)
{
	struct pty_detect_event ev = { .kind = PTY_DETECT_EV_EXIT };
	int st = (int)ws;

	if (h->det == NULL)
		return;
	if (WIFSIGNALED(st))
		ev.signo = WTERMSIG(st);
	else
		ev.status = WEXITSTATUS(st);
	ev.now_ms = det_now();
	pty_detect_feed_event(h->det, &ev);
	h->det_screen_dirty = true;
	h->det_dirty_ms = det_now();
	det_step(h);
	uv_timer_stop(&h->det_timer);
}

/*
 * The question a blocked lease asks (SPEC 5.4): its text, its options
 * (the name drawn, the label) and the default, with the digest `corral
 * answer` must name. The bytes are the screen's; JSON escapes them, and
 * every field is bounded by dialog.c.
 */
static json_t *
question_json(const struct pty_dialog *dl)
{
	json_t *q, *opts = json_array();
	char hex[17];

	for (int i = 0; i < dl->noptions; i++)
		json_array_append_new(opts, json_pack("{s:s%, s:s%}", "key",
		    dl->options[i].name, strlen(dl->options[i].name), "label",
		    dl->options[i].label, strlen(dl->options[i].label)));
	pty_dialog_digest_hex(dl, hex);
	q = json_pack("{s:s%, s:o, s:i, s:s}", "text", dl->question,
	    strlen(dl->question), "options", opts, "shown", dl->nseen,
	    "digest", hex);
	if (q == NULL)
		return json_null();
	json_object_set_new(q, "default", dl->def >= 0 &&
	    dl->def < dl->noptions ? json_stringn_nocheck(
	    dl->options[dl->def].name, strlen(dl->options[dl->def].name)) :
	    json_null());
	return q;
}

static void answer_key_cb(uv_timer_t *);

/* One key of an answer's keys: a CSI arrow, or one byte. */
static size_t
key_len(const char *k, size_t n)
{
	return n >= 3 && k[0] == '\033' && k[1] == '[' ? 3 : 1;
}

/*
 * Type the next key of the answer. One key a write, ANSWER_GAP_MS apart:
 * a TUI that reads a whole chunk as one key (Ink took "ESC [ A CR" for
 * none) sees each.
 */
static int
answer_key(struct holder *h)
{
	struct pty_detect_event ev = { .kind = PTY_DETECT_EV_INPUT };
	size_t k;

	if (h->proc == NULL || h->state != PTY_RUN_RUNNING ||
	    h->ans_off >= h->ans_len)
		return -ENOENT;
	k = key_len(h->ans_keys + h->ans_off, h->ans_len - h->ans_off);
	if (pty_proc_write(h->proc, h->ans_keys + h->ans_off, k) < 0)
		return -ENOBUFS;
	h->ans_off += k;
	ev.bytes = k;
	pty__holder_detect_event(h, &ev);
	if (h->ans_off < h->ans_len)
		uv_timer_start(&h->ans_timer, answer_key_cb, ANSWER_GAP_MS,
		    0);
	return 0;
}

static void
answer_key_cb(uv_timer_t *t)
{
	(void)answer_key(t->data);
}

/*
 * `corral answer`: type exactly the keys of option `option` of the dialog
 * on the screen now, if it is still the one the operator saw (digest);
 * the receipt says who answered what. The keys come from dialog.c (a
 * name or a one-key shortcut, at most PTY_DIALOG_KEYS_MAX bytes), never
 * other text from the screen.
 */
int
pty__holder_detect_answer(struct holder *h, const struct hclient *c,
    uint64_t digest, const char *what, size_t len, char *why, size_t whysz)
{
	const struct pty_dialog *dl;
	const struct pty_dialog_option *op;
	char hex[17], q[120], name[PTY_DIALOG_ANSWER_MAX + 1];
	size_t ql;
	int option;

	if (len > PTY_DIALOG_ANSWER_MAX || memchr(what, '\0', len) != NULL) {
		snprintf(why, whysz, "bad option");
		return -EINVAL;
	}
	memcpy(name, what, len);
	name[len] = '\0';

	if (h->det == NULL || h->proc == NULL) {
		snprintf(why, whysz, "no screen to answer");
		return -ENOENT;
	}
	if (h->det_screen_dirty)
		feed_screen(h, det_now());
	if (h->det_res.state != PTY_DETECT_BLOCKED ||
	    (dl = pty_detect_dialog(h->det)) == NULL) {
		snprintf(why, whysz, "no question on the screen now");
		return -ENOENT;
	}
	if (dl->digest != digest) {
		snprintf(why, whysz, "the question on the screen changed");
		return -ESTALE;
	}
	if ((option = pty_dialog_option_find(dl, name)) < 0) {
		snprintf(why, whysz, option == -2 ? "the option is ambiguous: "
		    "name it by its number" : "no such option");
		return -EINVAL;
	}
	if (h->ans_off < h->ans_len) {
		snprintf(why, whysz, "an answer is still being typed");
		return -EBUSY;
	}
	op = &dl->options[option];
	h->ans_len = pty_dialog_keys(dl, option, h->ans_keys,
	    sizeof h->ans_keys);
	h->ans_off = 0;
	if (answer_key(h) < 0) {
		h->ans_len = 0;
		snprintf(why, whysz, "input queue full");
		return -ENOBUFS;
	}
	pty_dialog_digest_hex(dl, hex);
	ql = strcspn(dl->question, "\n");
	snprintf(q, sizeof q, "%.*s", (int)(ql < sizeof q - 1 ? ql :
	    sizeof q - 1), dl->question);
	pty__holder_event(h, "answer", "uid %u (pid %d) answered %s (%.80s) "
	    "to \"%s\" (question %s)", (unsigned)c->uid, (int)c->pid, op->name,
	    op->label, q, hex);
	return 0;
}

char *
pty_holder_question(struct pty_holder *ph)
{
	struct holder *h = ph != NULL ? ph->h : NULL;
	const struct pty_dialog *dl;
	json_t *q;
	char *s;

	if (h == NULL || h->det == NULL ||
	    h->det_res.state != PTY_DETECT_BLOCKED ||
	    (dl = pty_detect_dialog(h->det)) == NULL)
		return NULL;
	q = question_json(dl);
	s = json_is_object(q) ? json_dumps(q, JSON_COMPACT |
	    JSON_ENSURE_ASCII) : NULL;
	json_decref(q);
	return s;
}

void
pty__holder_detect_status(struct holder *h, json_t *j)
{
	char buf[2048];
	const struct pty_dialog *dl;

	if (h->det == NULL)
		return;
	dl = h->det_res.state == PTY_DETECT_BLOCKED ?
	    pty_detect_dialog(h->det) : NULL;
	json_object_set_new(j, "question", dl != NULL ? question_json(dl) :
	    json_null());
	json_object_set_new(j, "activity",
	    json_string(pty_detect_state_name(h->det_res.state)));
	json_object_set_new(j, "signal", json_stringn_nocheck(
	    h->det_res.signal, strlen(h->det_res.signal)));
	json_object_set_new(j, "agent", pty_detect_agent(h->det) ?
	    json_string(pty_rules_agent_name(pty_detect_agent(h->det))) :
	    json_null());
	pty_detect_explain(h->det, det_now(), buf, sizeof buf);
	json_object_set_new(j, "explain", json_stringn_nocheck(buf,
	    strlen(buf)));
}
