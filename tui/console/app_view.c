/*
 * app_view.c: the console's review view (SPEC 7.4) and timeline (issue
 * 9), and the commands behind them. The loop never blocks: the data
 * comes from this binary run as a child (`corral review ID --json`,
 * `corral events --since 12h --json`), read asynchronously into bounded
 * buffers, and apply/reject run the same way (`corral apply ID [--hunks
 * LIST]`, `corral reject ID`) with their outcome on the status line.
 * The timeline's names come from `corral ls --all --json` the same way.
 * Jobs carry lease IDs, never session pointers (STYLE D.4); the focus
 * never moves on their account (SPEC 4.2).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "tui/console/console_int.h"

#define JOB_OUT_MAX (64u << 20)	/* a review document, an event log */
#define JOB_ERR_MAX (64u << 10)
#define TL_WINDOW_MS (12 * 3600 * 1000LL)	/* the last 12 hours */
#define TL_MIN_MS (60 * 1000LL)
#define HUNKS_MAX 65536

enum job_kind { JOB_REVIEW, JOB_EVENTS, JOB_NAMES, JOB_APPLY, JOB_REJECT,
	JOB_RECONCILE, JOB_ANSWER };

struct tui_job {
	struct tui_job *next;
	struct tui_app *app;
	enum job_kind kind;
	char id[LEASE_ID_LEN + 1];	/* the lease ("" for events) */
	uint64_t started;
	uv_process_t proc;
	uv_pipe_t out, err;
	int open;			/* handles not closed yet */
	int eofs;			/* pipes at EOF */
	bool exited, overflow, closing, detached;
	int64_t status;
	int term_signal;
	char *obuf, *ebuf;
	size_t olen, ocap, elen;
};

static const char *const job_verbs[] = {
	[JOB_REVIEW] = "loading the review",
	[JOB_EVENTS] = "loading the timeline",
	[JOB_NAMES] = "loading names",
	[JOB_APPLY] = "applying",
	[JOB_REJECT] = "rejecting",
	[JOB_RECONCILE] = "reconciling",
	[JOB_ANSWER] = "answering",
};

/* ---- jobs: this binary as a child, read without blocking --------------- */

static void
job_closed(uv_handle_t *h)
{
	struct tui_job *j = h->data;

	if (--j->open > 0)
		return;
	free(j->obuf);
	free(j->ebuf);
	free(j);
}

static void
job_unlink(struct tui_app *a, struct tui_job *j)
{
	struct tui_job **pp;

	for (pp = &a->jobs; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == j) {
			*pp = j->next;
			return;
		}
	}
}

static void
job_close(struct tui_job *j)
{
	if (j->closing)
		return;
	j->closing = true;
	uv_close((uv_handle_t *)&j->out, job_closed);
	uv_close((uv_handle_t *)&j->err, job_closed);
	uv_close((uv_handle_t *)&j->proc, job_closed);
}

static void job_done(struct tui_app *, struct tui_job *);

static void
job_maybe_done(struct tui_job *j)
{
	struct tui_app *a = j->app;

	if (!j->exited || j->eofs < 2 || j->closing)
		return;
	job_unlink(a, j);
	job_done(a, j);
	job_close(j);
}

static void
job_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
	struct tui_job *j = h->data;
	bool is_out = h == (uv_handle_t *)&j->out;
	static const size_t chunk = 65536;

	(void)hint;
	if (is_out) {
		if (j->ocap - j->olen < chunk) {
			size_t cap = j->ocap ? j->ocap * 2 : 4 * chunk;
			char *p;

			if (cap > JOB_OUT_MAX + chunk)
				cap = JOB_OUT_MAX + chunk;
			if (cap <= j->ocap || (p = realloc(j->obuf, cap)) ==
			    NULL) {
				*buf = uv_buf_init(NULL, 0);
				return;
			}
			j->obuf = p;
			j->ocap = cap;
		}
		*buf = uv_buf_init(j->obuf + j->olen,
		    (unsigned)(j->ocap - j->olen));
		return;
	}
	if (j->ebuf == NULL && (j->ebuf = malloc(JOB_ERR_MAX)) == NULL) {
		*buf = uv_buf_init(NULL, 0);
		return;
	}
	*buf = uv_buf_init(j->ebuf + j->elen, (unsigned)(JOB_ERR_MAX - 1 -
	    j->elen));
}

static void
job_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	struct tui_job *j = s->data;
	bool is_out = s == (uv_stream_t *)&j->out;

	(void)buf;
	if (n > 0) {
		if (is_out)
			j->olen += (size_t)n;
		else
			j->elen += (size_t)n;
		if (j->olen > JOB_OUT_MAX || j->elen >= JOB_ERR_MAX - 1) {
			/* bounded: stop reading, stop the child */
			j->overflow = true;
			uv_read_stop(s);
			if (!j->exited)
				uv_process_kill(&j->proc, SIGTERM);
			j->eofs++;
			job_maybe_done(j);
		}
		return;
	}
	if (n == 0)
		return;
	if (n == UV_ENOBUFS) {
		j->overflow = true;
		if (!j->exited)
			uv_process_kill(&j->proc, SIGTERM);
	}
	uv_read_stop(s);
	j->eofs++;
	job_maybe_done(j);
}

static void
job_exit(uv_process_t *p, int64_t status, int sig)
{
	struct tui_job *j = p->data;

	j->exited = true;
	j->status = status;
	j->term_signal = sig;
	job_maybe_done(j);
}

static struct tui_job *
job_find(struct tui_app *a, enum job_kind kind, const char *id)
{
	for (struct tui_job *j = a->jobs; j != NULL; j = j->next)
		if (j->kind == kind && (id == NULL || strcmp(j->id, id) == 0))
			return j;
	return NULL;
}

/* Run `corral ARGS...` (this binary) as a job; 0 or a libuv error. */
static int
job_start(struct tui_app *a, enum job_kind kind, const char *id,
    const char *const *args)
{
	uv_process_options_t po;
	uv_stdio_container_t io[3];
	struct tui_job *j;
	char *argv[10];
	int n = 0, rc;

	if ((j = calloc(1, sizeof *j)) == NULL)
		return UV_ENOMEM;
	j->app = a;
	j->kind = kind;
	snprintf(j->id, sizeof j->id, "%s", id != NULL ? id : "");
	j->started = tui_app_now(a);
	argv[n++] = a->ctx->self;
	while (*args != NULL && n < 9)
		argv[n++] = (char *)*args++;
	argv[n] = NULL;
	uv_pipe_init(&a->loop, &j->out, 0);
	uv_pipe_init(&a->loop, &j->err, 0);
	j->out.data = j->err.data = j->proc.data = j;
	memset(io, 0, sizeof io);
	io[0].flags = UV_IGNORE;
	io[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	io[1].data.stream = (uv_stream_t *)&j->out;
	io[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	io[2].data.stream = (uv_stream_t *)&j->err;
	memset(&po, 0, sizeof po);
	po.file = a->ctx->self;
	po.args = argv;
	po.exit_cb = job_exit;
	po.stdio = io;
	po.stdio_count = 3;
	/* its own session: a console that goes away never stops an apply */
	po.flags = UV_PROCESS_DETACHED;
	j->open = 3;
	if ((rc = uv_spawn(&a->loop, &j->proc, &po)) < 0) {
		/* libuv initialised the process handle: close it too */
		job_close(j);
		return rc;
	}
	uv_read_start((uv_stream_t *)&j->out, job_alloc, job_read);
	uv_read_start((uv_stream_t *)&j->err, job_alloc, job_read);
	j->next = a->jobs;
	a->jobs = j;
	tui_app_log(a, "started: corral %s %s", argv[1] != NULL ? argv[1] :
	    "?", id != NULL ? id : "");
	tui_app_mark(a, TUI_DIRTY_LIST | TUI_DIRTY_STATUS, false);
	return 0;
}

/* The first lines of the job's stderr (or stdout), joined, for a toast. */
static void
job_text(struct tui_job *j, bool use_err, char *buf, size_t bufsz)
{
	const char *s = use_err ? j->ebuf : j->obuf;
	size_t len = use_err ? j->elen : j->olen, o = 0, i;

	buf[0] = '\0';
	if (s == NULL)
		return;
	for (i = 0; i < len && o + 1 < bufsz; i++) {
		if (s[i] == '\n') {
			if (i + 1 < len && o + 3 < bufsz) {
				buf[o++] = ' ';
				buf[o++] = '|';
				buf[o++] = ' ';
			}
			continue;
		}
		buf[o++] = s[i];
	}
	buf[o] = '\0';
}

/*
 * Parsing a review document or an event log can take a while (up to
 * JOB_OUT_MAX bytes): it runs on libuv's thread pool, and only the
 * finished model is swapped in on the loop (STYLE E). The work owns the
 * job's buffers; the loop runs until it is done, even while quitting.
 */
/* A lease's name from `corral ls --all --json`, for the timeline. */
struct tl_name {
	char id[LEASE_ID_LEN + 1];
	char name[64];
};

struct parse_work {
	uv_work_t req;
	struct tui_app *app;
	enum job_kind kind;
	char id[LEASE_ID_LEN + 1];
	char *obuf;
	size_t olen;
	bool failed, overflow;
	char text[256];		/* the command's stderr, joined */
	int rc;
	char err[256];
	struct tui_review rv;
	struct tui_timeline tl;
	struct tl_name *names;
	size_t nnames;
};

/* ls --json: [{"id": ..., "name": ...}, ...] into w->names (bounded). */
static void
parse_names(struct parse_work *w)
{
	json_t *a = json_loadb(w->obuf, w->olen, 0, NULL), *o;
	const char *id, *name;
	size_t i, max = json_array_size(a);

	if (max > 4 * TUI_TIMELINE_MAX_LEASES)
		max = 4 * TUI_TIMELINE_MAX_LEASES;
	if (max > 0 && (w->names = calloc(max, sizeof *w->names)) == NULL)
		max = 0;
	json_array_foreach(a, i, o) {
		if (w->nnames >= max)
			break;
		id = json_string_value(json_object_get(o, "id"));
		name = json_string_value(json_object_get(o, "name"));
		if (id == NULL || name == NULL || strlen(id) > LEASE_ID_LEN)
			continue;
		snprintf(w->names[w->nnames].id, sizeof w->names[0].id, "%s",
		    id);
		snprintf(w->names[w->nnames].name, sizeof w->names[0].name,
		    "%s", name);
		w->nnames++;
	}
	json_decref(a);
}

static void
parse_run(uv_work_t *req)
{
	struct parse_work *w = req->data;
	const char *p, *end, *nl;

	if (w->kind == JOB_REVIEW) {
		tui_review_init(&w->rv);
		w->rc = tui_review_parse(&w->rv, w->obuf, w->olen, w->err,
		    sizeof w->err);
		return;
	}
	if (w->kind == JOB_NAMES) {
		parse_names(w);
		return;
	}
	tui_timeline_init(&w->tl);
	p = w->obuf;
	end = p != NULL ? p + w->olen : NULL;
	while (p != NULL && p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if ((w->rc = tui_timeline_add_json(&w->tl, p, nl ?
		    (size_t)(nl - p) : (size_t)(end - p))) < 0)
			break;
		p = nl != NULL ? nl + 1 : end;
	}
}

static void
review_parsed(struct tui_app *a, struct parse_work *w)
{
	size_t cur = a->rv.cur, top = a->rv.top;
	bool same = a->rv_have && strcmp(a->rv.id, w->id) == 0;

	a->rv_loading = false;
	if (strcmp(a->rv_id, w->id) != 0)
		return;		/* the operator moved on */
	if (w->overflow) {
		snprintf(a->rv_err, sizeof a->rv_err, "the review of %s is "
		    "too large for the console: 'corral review %s'", w->id,
		    w->id);
	} else if (w->rc < 0) {
		snprintf(a->rv_err, sizeof a->rv_err, "no review of %s: "
		    "%.200s", w->id, w->text[0] ? w->text : w->err[0] ?
		    w->err : "corral review failed");
		a->rv_have = false;
	} else {
		tui_review_free(&a->rv);
		a->rv = w->rv;		/* moved: the work no longer owns it */
		tui_review_init(&w->rv);
		a->rv_have = true;
		a->rv_err[0] = '\0';
		if (same) {
			/* a reload keeps the place */
			a->rv.cur = cur < a->rv.n ? cur : a->rv.cur;
			a->rv.top = top;
		}
		if (w->failed && w->text[0] != '\0')
			tui_app_message(a, true, "%s", w->text);
	}
}

static void
names_load(struct tui_app *a)
{
	const char *args[] = { "ls", "--all", "--json", NULL };

	if (job_find(a, JOB_NAMES, NULL) == NULL &&
	    job_start(a, JOB_NAMES, NULL, args) < 0)
		tui_app_log(a, "cannot run corral ls for the timeline's names");
}

static void
names_parsed(struct tui_app *a, struct parse_work *w)
{
	for (size_t i = 0; i < a->tl.n; i++) {
		for (size_t k = 0; k < w->nnames; k++) {
			if (strcmp(a->tl.l[i].id, w->names[k].id) != 0)
				continue;
			snprintf(a->tl.l[i].name, sizeof a->tl.l[i].name, "%s",
			    w->names[k].name);
			break;
		}
	}
}

static void
events_parsed(struct tui_app *a, struct parse_work *w)
{
	a->tl_loading = false;
	a->tl_now = lease_id_now_ms();
	if (w->failed || w->overflow) {
		snprintf(a->tl_err, sizeof a->tl_err, "events: %.200s",
		    w->overflow ? "too many" : w->text[0] ? w->text :
		    "failed");
		return;
	}
	tui_timeline_free(&a->tl);
	a->tl = w->tl;
	tui_timeline_init(&w->tl);
	a->tl_have = true;
	a->tl_err[0] = '\0';
	if (w->rc == -E2BIG)
		snprintf(a->tl_err, sizeof a->tl_err, "more than %d leases or "
		    "%d changes of one: the oldest are shown",
		    TUI_TIMELINE_MAX_LEASES, TUI_TIMELINE_MAX_SPANS);
	/* names of leases the list does not show: `corral ls`, off-loop */
	names_load(a);
}

static void
parse_done(uv_work_t *req, int status)
{
	struct parse_work *w = req->data;
	struct tui_app *a = w->app;

	if (status == 0 && !a->quit) {
		if (w->kind == JOB_REVIEW)
			review_parsed(a, w);
		else if (w->kind == JOB_NAMES)
			names_parsed(a, w);
		else
			events_parsed(a, w);
		tui_app_mark(a, TUI_DIRTY_ALL, false);
	}
	tui_review_free(&w->rv);
	tui_timeline_free(&w->tl);
	free(w->names);
	free(w->obuf);
	free(w);
}

/* Hand the job's output to the thread pool to parse. */
static void
parse_start(struct tui_app *a, struct tui_job *j)
{
	struct parse_work *w = calloc(1, sizeof *w);

	if (w == NULL) {
		if (j->kind == JOB_REVIEW)
			a->rv_loading = false;
		else if (j->kind == JOB_EVENTS)
			a->tl_loading = false;
		return;
	}
	w->req.data = w;
	w->app = a;
	w->kind = j->kind;
	memcpy(w->id, j->id, sizeof w->id);
	w->failed = !j->exited || j->status != 0 || j->term_signal != 0;
	w->overflow = j->overflow;
	job_text(j, true, w->text, sizeof w->text);
	/* the review exits 1 with a document when stale: parse it anyway */
	if (!w->overflow && (j->kind == JOB_REVIEW || !w->failed)) {
		w->obuf = j->obuf;
		w->olen = j->olen;
		j->obuf = NULL;
		j->olen = j->ocap = 0;
	}
	if (w->obuf == NULL)
		w->rc = -EINVAL;
	if (w->obuf == NULL || uv_queue_work(&a->loop, &w->req, parse_run,
	    parse_done) < 0) {
		parse_done(&w->req, 0);
		return;
	}
}

static void
result_done(struct tui_app *a, struct tui_job *j)
{
	char text[200];
	bool ok = j->exited && j->status == 0 && j->term_signal == 0;
	const char *hint, *nl;

	job_text(j, !ok, text, sizeof text);
	hint = j->ebuf != NULL && j->elen < JOB_ERR_MAX ? j->ebuf : NULL;
	if (hint != NULL) {
		j->ebuf[j->elen] = '\0';
		hint = strstr(hint, "\n  cd ");
	}
	if (!ok && hint != NULL) {
		/* SPEC 7.6: the merge the owner can run where it is out */
		nl = strchr(hint + 3, '\n');
		tui_app_message(a, true, "checked out; run there: %.*s",
		    (int)(nl ?
		    nl - hint - 3 : (long)strlen(hint + 3)), hint + 3);
		tui_app_log(a, "apply %s refused: %s", j->id, text);
	} else if (ok)
		tui_app_message(a, false, "%s", text[0] ? text : "done");
	else
		tui_app_message(a, true, "%s %s failed: %s", j->kind ==
		    JOB_APPLY ? "apply" : "reject", j->id, text[0] ? text :
		    "no reason given");
	a->msg_until = 0;	/* an outcome stays until replaced */
	a->want_journal = true;
	tui_app_log(a, "%s %s: exit %lld", j->kind == JOB_APPLY ? "apply" :
	    "reject", j->id, (long long)j->status);
	/* the review shows the new state */
	if (a->view == TUI_VIEW_REVIEW && strcmp(a->rv_id, j->id) == 0)
		tui_app_view_reload(a);
}

/* The start's reconcile ended: the journal it corrected is read again. */
static void
reconcile_done(struct tui_app *a, struct tui_job *j)
{
	char text[200];

	a->want_journal = true;
	tui_app_log(a, "reconcile: exit %lld", (long long)j->status);
	if (!j->exited || j->status != 0 || j->term_signal != 0) {
		job_text(j, true, text, sizeof text);
		tui_app_message(a, true, "reconcile failed: %s", text[0] ?
		    text : "no reason given");
	}
}

void
tui_app_view_reconcile(struct tui_app *a)
{
	const char *args[] = { "reconcile", NULL };

	if (job_find(a, JOB_RECONCILE, NULL) == NULL &&
	    job_start(a, JOB_RECONCILE, NULL, args) < 0)
		tui_app_log(a, "cannot run corral reconcile");
}

/* `corral answer` ended: what it printed, on the lease's own status. */
static void
answer_done(struct tui_app *a, struct tui_job *j)
{
	char text[200];
	bool ok = j->exited && j->status == 0 && j->term_signal == 0;

	job_text(j, !ok, text, sizeof text);
	if (strcmp(a->sel, j->id) == 0)
		tui_app_message(a, !ok, "%s", text[0] ? text : ok ? "answered" :
		    "not answered");
	tui_app_log(a, "answer %s: exit %lld", j->id, (long long)j->status);
}

void
tui_app_view_answer_run(struct tui_app *a, const struct tui_session *s,
    unsigned n)
{
	char num[8];
	const char *args[] = { "answer", s->id, num, "--digest", s->qdigest,
		NULL };
	int rc;

	if (job_find(a, JOB_ANSWER, s->id) != NULL) {
		tui_app_message(a, true, "%s: an answer is on its way",
		    tui_app_name(s));
		return;
	}
	snprintf(num, sizeof num, "%u", n);
	/* SPEC 4.8: the command's own path, its digest check and receipt */
	if ((rc = job_start(a, JOB_ANSWER, s->id, args)) < 0)
		tui_app_message(a, true, "cannot run corral answer: %s",
		    uv_strerror(rc));
	else
		tui_app_message(a, false, "answering %s...", tui_app_name(s));
}

static void
job_done(struct tui_app *a, struct tui_job *j)
{
	switch (j->kind) {
	case JOB_ANSWER:
		answer_done(a, j);
		break;
	case JOB_RECONCILE:
		reconcile_done(a, j);
		break;
	case JOB_REVIEW:
	case JOB_EVENTS:
	case JOB_NAMES:
		parse_start(a, j);
		break;
	case JOB_APPLY:
	case JOB_REJECT:
		result_done(a, j);
		break;
	}
	tui_app_mark(a, TUI_DIRTY_LIST | TUI_DIRTY_STATUS, false);
}

void
tui_app_view_stop(struct tui_app *a)
{
	struct tui_job *j;

	/* Running commands carry on (their own session); we stop reading. */
	while ((j = a->jobs) != NULL) {
		a->jobs = j->next;
		job_close(j);
	}
	tui_review_free(&a->rv);
	tui_timeline_free(&a->tl);
}

/* ---- opening and closing the views ------------------------------------- */

static void
load_review(struct tui_app *a)
{
	const char *args[] = { "review", a->rv_id, "--json", NULL };
	int rc;

	if (job_find(a, JOB_REVIEW, a->rv_id) != NULL)
		return;
	a->rv_loading = true;
	if ((rc = job_start(a, JOB_REVIEW, a->rv_id, args)) < 0) {
		a->rv_loading = false;
		snprintf(a->rv_err, sizeof a->rv_err, "cannot run corral "
		    "review: %s", uv_strerror(rc));
	}
}

void
tui_app_view_review_open(struct tui_app *a)
{
	struct tui_session *s = tui_app_focused(a);

	if (s == NULL || s->rec.mode == LEASE_MODE_TRUSTED_LOCAL) {
		tui_keys_set_mode(&a->keys, TUI_MODE_NORMAL);
		if (s == NULL)
			tui_app_message(a, true, "no lease focused");
		else
			tui_app_message(a, true, "%s is trusted_local: it has "
			    "no result to review", tui_app_name(s));
		return;
	}
	if (!a->rv_have || strcmp(a->rv_id, s->id) != 0) {
		tui_review_free(&a->rv);
		a->rv_have = false;
	}
	memcpy(a->rv_id, s->id, sizeof a->rv_id);
	a->rv_err[0] = '\0';
	a->view = TUI_VIEW_REVIEW;
	load_review(a);
	tui_app_mark(a, TUI_DIRTY_ALL, true);
}

void
tui_app_view_timeline_open(struct tui_app *a)
{
	const char *args[] = { "events", "--since", "12h", "--json", NULL };
	int rc;

	a->view = TUI_VIEW_TIMELINE;
	a->tl_err[0] = '\0';
	if (job_find(a, JOB_EVENTS, NULL) == NULL) {
		a->tl_loading = true;
		if ((rc = job_start(a, JOB_EVENTS, NULL, args)) < 0) {
			a->tl_loading = false;
			snprintf(a->tl_err, sizeof a->tl_err, "cannot run "
			    "corral events: %s", uv_strerror(rc));
		}
	}
	tui_app_mark(a, TUI_DIRTY_ALL, true);
}

void
tui_app_view_close(struct tui_app *a)
{
	a->view = TUI_VIEW_NONE;
	if (a->keys.mode == TUI_MODE_REVIEW ||
	    a->keys.mode == TUI_MODE_TIMELINE)
		tui_keys_set_mode(&a->keys, TUI_MODE_NORMAL);
	a->relayout = true;
	tui_app_mark(a, TUI_DIRTY_ALL, true);
}

void
tui_app_view_reload(struct tui_app *a)
{
	if (a->view == TUI_VIEW_REVIEW)
		load_review(a);
	else if (a->view == TUI_VIEW_TIMELINE)
		tui_app_view_timeline_open(a);
	tui_app_mark(a, TUI_DIRTY_ALL, true);
}

/* Rows of the review body (the screen but the title and status rows). */
static int
review_height(struct tui_app *a)
{
	int w = 0, h = 0;

	a->draw.surface->ops->size(a->draw.surface->ud, &w, &h);
	return h - 3 > 1 ? h - 3 : 1;
}

void
tui_app_view_key(struct tui_app *a, const struct tui_act *act)
{
	long h = review_height(a), n;

	if (a->view != TUI_VIEW_REVIEW || !a->rv_have)
		return;
	switch (act->action) {
	case TUI_ACT_VIEW_MOVE:
		n = act->unit == TUI_SCROLL_LINE ? 1 : act->unit ==
		    TUI_SCROLL_HALF ? (h / 2 > 0 ? h / 2 : 1) : h;
		tui_review_move(&a->rv, n * act->arg);
		break;
	case TUI_ACT_VIEW_TOP:
		a->rv.cur = 0;
		break;
	case TUI_ACT_VIEW_BOTTOM:
		tui_review_move(&a->rv, (long)a->rv.n);
		break;
	case TUI_ACT_HUNK_NEXT:
		tui_review_next_hunk(&a->rv, act->arg);
		break;
	case TUI_ACT_FILE_NEXT:
		tui_review_next_file(&a->rv, act->arg);
		break;
	case TUI_ACT_VIEW_SIDEWAYS:
		tui_review_hscroll(&a->rv, act->arg == 0 ? LONG_MIN :
		    (long)act->arg * TUI_REVIEW_HSTEP);
		break;
	case TUI_ACT_HUNK_TOGGLE:
		if (!tui_review_toggle(&a->rv))
			tui_app_message(a, false, "not on a file or hunk: n/p "
			    "moves to one");
		break;
	default:
		break;
	}
	tui_app_mark(a, TUI_DIRTY_ALL, true);
}

/* ---- apply and reject --------------------------------------------------- */

/* The lease a result action is about: the review's, else the focused. */
static struct tui_session *
result_target(struct tui_app *a)
{
	if (a->view == TUI_VIEW_REVIEW && a->rv_id[0] != '\0')
		return tui_app_find(a, a->rv_id);
	return tui_app_focused(a);
}

/* The lease's result changes nothing (an empty patch): nothing to apply. */
static bool
result_empty(const struct tui_session *s)
{
	json_t *r = s->rec.result != NULL ? json_loads(s->rec.result, 0,
	    NULL) : NULL;
	json_t *c = json_object_get(r, "counts");
	bool empty = json_is_object(c) &&
	    json_integer_value(json_object_get(c, "files")) == 0 &&
	    json_integer_value(json_object_get(json_object_get(r, "patch"),
	    "bytes")) == 0;

	json_decref(r);
	return empty;
}

bool
tui_app_view_result_ask(struct tui_app *a, enum tui_action what)
{
	struct tui_session *s = result_target(a);
	char list[256];
	size_t kept, total;
	int rc;

	if (s == NULL) {
		tui_app_message(a, true, "no lease focused");
		return false;
	}
	if (s->rec.mode == LEASE_MODE_TRUSTED_LOCAL) {
		tui_app_message(a, true, "%s is trusted_local: it has no "
		    "result to %s", tui_app_name(s), what ==
		    TUI_ACT_APPLY ? "apply" : "reject");
		return false;
	}
	if (job_find(a, JOB_APPLY, s->id) || job_find(a, JOB_REJECT, s->id)) {
		tui_app_message(a, true, "%s: already running", s->id);
		return false;
	}
	if (what == TUI_ACT_REJECT) {
		tui_app_message(a, true, "reject %s (removes its workspace and "
		    "review worktree, keeps the result)? y/n",
		    tui_app_name(s));
		a->msg_until = 0;
		return true;
	}
	if (result_empty(s)) {
		tui_app_message(a, true, "%s changed nothing: nothing to apply "
		    "(r rejects it)", tui_app_name(s));
		return false;
	}
	if (a->view == TUI_VIEW_REVIEW && a->rv_have &&
	    strcmp(a->rv.id, s->id) == 0) {
		if (!a->rv.ready) {
			tui_app_message(a, true, "%s is %s: nothing reviewed "
			    "to apply", tui_app_name(s), a->rv.state);
			return false;
		}
		tui_review_counts(&a->rv, &kept, &total);
		rc = tui_review_hunks(&a->rv, list, sizeof list);
		if (rc == -ENOENT) {
			tui_app_message(a, true, "every hunk is dropped: "
			    "nothing to apply (r rejects)");
			return false;
		}
		tui_app_message(a, true, "apply %s%s%zu of %zu hunk(s)%s "
		    "(fast-forward, never forced)? y/n", tui_app_name(s),
		    rc > 0 ? ": a new commit of " : ": all ", kept, total,
		    rc > 0 ? ", verified and checked again" : "");
	} else if (s->rec.state == LEASE_STATE_FAILED) {
		tui_app_message(a, true, "%s failed%s%s%s: no result to apply",
		    tui_app_name(s), s->rec.failed_reason ? " (" : "",
		    s->rec.failed_reason ? s->rec.failed_reason : "",
		    s->rec.failed_reason ? ")" : "");
		return false;
	} else if (s->rec.state != LEASE_STATE_RESULT_READY) {
		tui_app_message(a, true, "%s is %s: no result to apply",
		    tui_app_name(s), lease_fsm_state_name(s->rec.state));
		return false;
	} else {
		/* nothing is applied unseen: the review first, a from there */
		tui_keys_set_mode(&a->keys, TUI_MODE_REVIEW);
		tui_app_view_review_open(a);
		tui_app_message(a, false, "the review of %s: a applies what it "
		    "shows", tui_app_name(s));
		return false;
	}
	a->msg_until = 0;
	return true;
}

void
tui_app_view_result_run(struct tui_app *a, enum tui_action what)
{
	struct tui_session *s = result_target(a);
	const char *args[6];
	char *list = NULL;
	int rc = 0, n = 0;

	if (s == NULL)
		return;
	if (what == TUI_ACT_REJECT) {
		args[n++] = "reject";
		args[n++] = s->id;
	} else {
		args[n++] = "apply";
		args[n++] = s->id;
		if (a->view == TUI_VIEW_REVIEW && a->rv_have &&
		    strcmp(a->rv.id, s->id) == 0) {
			if ((list = malloc(HUNKS_MAX)) == NULL ||
			    (rc = tui_review_hunks(&a->rv, list,
			    HUNKS_MAX)) < 0) {
				tui_app_message(a, true, "cannot build the "
				    "hunk list: %s", rc == -ENOSPC ? "too "
				    "long" : rc == -ENOENT ? "nothing kept" :
				    "out of memory");
				free(list);
				return;
			}
			if (rc > 0) {
				args[n++] = "--hunks";
				args[n++] = list;
			}
		}
	}
	args[n] = NULL;
	rc = job_start(a, what == TUI_ACT_REJECT ? JOB_REJECT : JOB_APPLY,
	    s->id, args);
	if (rc < 0)
		tui_app_message(a, true, "cannot run corral %s: %s", args[0],
		    uv_strerror(rc));
	else
		tui_app_message(a, false, "%s %s...", what == TUI_ACT_REJECT ?
		    "rejecting" : "applying", tui_app_name(s));
	free(list);
}

/* ---- progress in the list row ------------------------------------------ */

bool
tui_app_view_progress(struct tui_app *a, const struct tui_session *s, char *buf,
    size_t bufsz)
{
	char d[16];
	int64_t now = lease_id_now_ms();

	for (struct tui_job *j = a->jobs; j != NULL; j = j->next) {
		if (strcmp(j->id, s->id) != 0 || j->kind == JOB_EVENTS)
			continue;
		tui_draw_view_duration((int64_t)(tui_app_now(a) - j->started),
		    d,
		    sizeof d);
		snprintf(buf, bufsz, "%s... %s", job_verbs[j->kind], d);
		return true;
	}
	return tui_view_progress(&s->rec, now, buf, bufsz);
}

/* ---- drawing ------------------------------------------------------------ */

void
tui_app_view_draw(struct tui_app *a, const struct tui_rect *r)
{
	struct tui_tl_row *rows;
	char msg[300], (*prog)[96];
	size_t n = 0, i;
	long sel = tui_app_focus_index(a);
	int64_t from, to;

	if (a->view == TUI_VIEW_REVIEW) {
		msg[0] = '\0';
		if (a->rv_loading)
			snprintf(msg, sizeof msg, " loading the review of %s "
			    "(corral review %s --json)...", a->rv_id,
			    a->rv_id);
		else if (a->rv_err[0] != '\0')
			snprintf(msg, sizeof msg, " %s", a->rv_err);
		if (a->rv_have && strcmp(a->rv.id, a->rv_id) == 0) {
			tui_review_scroll(&a->rv, r->h - 1 - (msg[0] != 0));
			tui_draw_view_review(&a->draw, r, &a->rv, msg);
		} else {
			tui_draw_view_review(&a->draw, r, NULL, msg);
		}
		return;
	}
	/* the timeline: console leases first, then the journal's others */
	if ((rows = calloc(a->n + a->tl.n + 1, sizeof *rows)) == NULL)
		return;
	if ((prog = calloc(a->n + 1, sizeof *prog)) == NULL) {
		free(rows);
		return;
	}
	for (i = 0; i < a->n; i++) {
		rows[n].id = a->s[i]->id;
		rows[n].name = a->s[i]->rec.name;
		rows[n].state = lease_fsm_state_name(a->s[i]->rec.state);
		/* a long step shows its progress here too */
		if (tui_app_view_progress(a, a->s[i], prog[i], sizeof prog[i]))
			rows[n].state = prog[i];
		rows[n].selected = (long)i == sel;
		n++;
	}
	for (i = 0; i < a->tl.n; i++) {
		if (tui_app_find(a, a->tl.l[i].id) != NULL)
			continue;
		rows[n].id = a->tl.l[i].id;
		rows[n].name = a->tl.l[i].name;
		rows[n].state = a->tl.l[i].ended ? "ended" : "";
		n++;
	}
	to = a->tl_now > 0 ? a->tl_now : lease_id_now_ms();
	from = to - TL_WINDOW_MS;
	/* zoom to the leases' own span when it is shorter */
	if (a->tl.oldest_ms > from)
		from = a->tl.oldest_ms;
	if (to - from < TL_MIN_MS)
		from = to - TL_MIN_MS;
	msg[0] = '\0';
	if (a->tl_loading)
		snprintf(msg, sizeof msg, " loading (corral events --since "
		    "12h --json)...");
	else if (a->tl_err[0] != '\0')
		snprintf(msg, sizeof msg, " %s", a->tl_err);
	tui_draw_view_timeline(&a->draw, r, &a->tl, rows, n, from, to, msg);
	free(prog);
	free(rows);
}
