/*
 * holder_main.c: the corral-holder program (main/corral_holder.c), a
 * lease's holder process (SPEC 2). The composition root of the holder: it builds
 * the exec plan through the lease's sandbox adapter, runs pty_holder_run on
 * its own loop, and turns the holder's callbacks into journal transitions
 * and receipt entries (so pty/ never includes lease/), written off the
 * loop by holder_journal.c's queue: only the claim, before the agent is
 * spawned, is written on this thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include <jansson.h>

#include "lease/lease.h"
#include "pty/pty.h"
#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"
#include "tui/tui.h"
#include "tui/runtime/runtime_int.h"

#define HOLDER_TRANSCRIPT_MAX (64ull << 20)
/*
 * The journal lines an agent can cause, per lease (issue 15): holder
 * events of each kind (a reply the holder drops...) and activity changes;
 * past these they are counted in one journal_summary receipt.
 * docs/security-model.md states the bound.
 */
#define HOLDER_EVENTS_PER_KIND 64
#define HOLDER_ACTIVITY_ROWS 4096
#define HOLDER_ACTIVITY_BURST 256	/* ... of which at once */
#define HOLDER_ACTIVITY_PER_SEC 8	/* ... then so many a second */
/*
 * The finishing thread's own journal handle waits this long for the write
 * lock (off the loop: a busy journal delays the result, never loses it).
 */
#define HOLDER_FINISH_BUSY_MS 600000
#define HOLDER_CLAIM_BUSY_MS 15000	/* the claim, before the agent runs */
/* The result's retries while the disk is full: 100 ms doubling to 2 s. */
#define HOLDER_FULL_RETRY_MS 100u
#define HOLDER_FULL_RETRY_MAX_MS 2000u

struct hmain {
	struct tui_ctx *ctx;
	const char *id;
	bool trusted_local;
	char *sock;
	char holder_ident[64];
	int64_t holder_start;
	char name[128];			/* the lease's name, for the hook */
	struct tui_notify *notify;	/* SPEC 5.6 */
	struct tui_holder_sbx *sbx;	/* bwrap leases: holder_sbx.c */
	struct tui_holder_cmd *cmd;	/* command leases: holder_cmd.c */
	struct tui_track *track;	/* trusted_local leases: track.c */
	int64_t exit_ws;		/* the agent's exit, while the */
	bool exit_cancelled;		/* tracked processes are ended */
	bool in_exit;			/* inside hooks.exited */
	bool track_done;		/* track.c called back */
	bool journal_held;		/* held until the queue is written */
	struct sbx_scrub *scrub;	/* the holder's output filter */
	struct tui_tally events;	/* hooks.event receipts */
	struct tui_tally activity;	/* activity transition rows */
	bool summarised;
	struct tui_holder_journal *jq;	/* the loop's writes, off it */
	char fail_reason[64];		/* why the lease did not succeed */
	/* the finishing phase (SPEC 7): on a thread, the socket still up */
	uv_loop_t *loop;
	struct pty_holder *ph;
	uv_work_t work;
	struct tui_ctx wctx;		/* its own journal handle */
	bool async;
	bool finishing;			/* the thread runs (cancel_held) */
	uint64_t finish_mark;		/* what it waits to be written */
	struct tui_checks_stop stop;	/* cancel while checks run */
};

static void finish_start(struct hmain *);
static void summarise(struct hmain *);
static void written(void *);

/* The credential scrubber as the holder's output filter (SPEC 8.5). */
static void
scrub_feed(const char *buf, size_t len, pty_holder_out_cb out, void *out_ud,
    void *ud)
{
	sbx_scrub_feed(ud, buf, len, out, out_ud);
}

static void
scrub_flush(pty_holder_out_cb out, void *out_ud, void *ud)
{
	sbx_scrub_flush(ud, out, out_ud);
}

static size_t
scrub_held(void *ud)
{
	return sbx_scrub_held(ud);
}

/*
 * A sandboxed lease's minted credential never reaches the screen or the
 * transcript: its scrubber filters the holder's output. Returns 0 or
 * -ENOMEM.
 */
static int
scrub_wire(struct hmain *m, struct pty_holder_opts *ho)
{
	const char *secret = tui_holder_sbx_secret(m->sbx);

	if (secret == NULL || secret[0] == '\0')
		return 0;
	if ((m->scrub = sbx_scrub_new(secret)) == NULL)
		return -ENOMEM;
	ho->filter = (struct pty_holder_filter){ .feed = scrub_feed,
		.flush = scrub_flush, .held = scrub_held, .ud = m->scrub };
	return 0;
}

/* A receipt line: through the queue (holder_journal.c) once it exists. */
static void
receipt(struct hmain *m, const char *kind, json_t *fields)
{
	struct lease_store *st = m->ctx->store;

	if (m->jq != NULL) {
		TUI_BEST_EFFORT(tui_holder_journal_receipt(m->jq, kind,
		    fields));
		return;
	}
	if (st != NULL && lease_receipt_append(st, m->id, kind, fields,
	    NULL) < 0)
		fprintf(stderr, "corral holder %s: receipt: %s\n", m->id,
		    lease_store_errmsg(st));
	json_decref(fields);
}

/*
 * The socket listens and the agent is not spawned yet: take the lease,
 * the holder's PID and the start transition in one transaction, only
 * while it is still provisioning (SPEC 9.2). `corral new` holds the state
 * lock until this is done; if it was killed, a reconcile may have failed
 * the lease first, and then the agent never runs. The one write the
 * holder makes itself, before its loop first runs: nothing waits on the
 * loop yet, and reconcile pings a holder only once it is recorded.
 */
static int
on_claim(char *err, size_t errsz, void *ud)
{
	struct hmain *m = ud;
	struct lease_store *st = m->ctx->store;
	int64_t start = 0;
	int rc;

	if (lease_proc_start(getpid(), &start) < 0)
		start = 0;
	lease_fault_wait("holder.claim.before");
	/* `corral new` waits for it (and keeps the state lock) 20 s. */
	TUI_BEST_EFFORT(lease_store_set_busy_timeout(st, HOLDER_CLAIM_BUSY_MS));
	rc = lease_record_claim(st, m->id, getpid(), start, "endpoint running");
	TUI_BEST_EFFORT(lease_store_set_busy_timeout(st, LEASE_BUSY_MS));
	if (rc < 0) {
		snprintf(err, errsz, "journal: %s", lease_store_errmsg(st));
		return rc;
	}
	snprintf(m->holder_ident, sizeof m->holder_ident, "%d:%lld",
	    (int)getpid(), (long long)start);
	m->holder_start = start;
	return 0;
}

static void
on_started(pid_t child, void *ud)
{
	struct hmain *m = ud;

	TUI_BEST_EFFORT(tui_holder_journal_resource(m->jq,
	    TUI_HOLDER_JOURNAL_PLAN, LEASE_RES_HOLDER, m->holder_ident));
	TUI_BEST_EFFORT(tui_holder_journal_resource(m->jq,
	    TUI_HOLDER_JOURNAL_CREATED, LEASE_RES_HOLDER, m->holder_ident));
	TUI_BEST_EFFORT(tui_holder_journal_resource(m->jq,
	    TUI_HOLDER_JOURNAL_CREATED, LEASE_RES_SOCKET, m->sock));
	TUI_BEST_EFFORT(tui_holder_journal_activity(m->jq,
	    LEASE_ACT_STARTING, "spawned", true));
	receipt(m, "holder_started", json_pack("{s:i, s:i, s:I}", "holder_pid",
	    (int)getpid(), "child_pid", (int)child, "holder_start",
	    (json_int_t)m->holder_start));
	/*
	 * From here until the loop ends every write goes through the queue's
	 * own handle: this one (the claim's) is closed, and opened again for
	 * the end (holder_exec). What the start freed (the rules' checks, the
	 * config, the handle) goes back to the system: a live holder keeps
	 * only what it uses (issue 17).
	 */
	lease_store_close(m->ctx->store);
	m->ctx->store = NULL;
	malloc_trim(0);
}

/* The journal's state for the status reply (hooks.status_json). */
static char *
on_status(void *ud)
{
	struct hmain *m = ud;
	enum tui_holder_journal_state s;
	char err[256];
	size_t n = 0;
	json_t *j;
	char *out;

	s = tui_holder_journal_status(m->jq, &n, err, sizeof err);
	j = json_pack("{s:s, s:I}", "journal",
	    tui_holder_journal_state_name(s), "journal_queued",
	    (json_int_t)n);
	if (j != NULL && s != TUI_HOLDER_JOURNAL_OK)
		json_object_set_new(j, "journal_error", json_string(err));
	out = j != NULL ? json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII) :
	    NULL;
	json_decref(j);
	return out;
}

static void exited(struct hmain *, int64_t ws, bool cancelled);

/*
 * A tracked trusted_local lease's processes are ended (track.c) before
 * its exit is journaled: it is not done or failed while a process it
 * started still runs.
 */
static void
track_ended(void *ud)
{
	struct hmain *m = ud;

	m->track_done = true;
	receipt(m, "processes_ended", tui_track_receipt(m->track));
	exited(m, m->exit_ws, m->exit_cancelled);
	/* From a timer, not the exit hook: let go unless the queue waits. */
	if (!m->in_exit && !m->journal_held)
		pty_holder_finished(m->ph);
}

/* Its tracking cgroup's processes count for its activity (SPEC 5.3). */
static int
on_procs(pid_t **pids, size_t *n, void *ud)
{
	struct hmain *m = ud;

	return tui_track_procs(m->track, pids, n);
}

static void
on_exited(int64_t ws, bool cancelled, void *ud)
{
	struct hmain *m = ud;

	if (m->track != NULL && m->ph != NULL && m->loop != NULL) {
		m->exit_ws = ws;
		m->exit_cancelled = cancelled;
		m->in_exit = true;
		tui_track_end(m->track, m->loop, track_ended, m);
		m->in_exit = false;
		/* Nothing was left to end: it called back at once. */
		if (!m->track_done)
			pty_holder_hold(m->ph, "ending its processes");
		return;
	}
	exited(m, ws, cancelled);
}

static void
exited(struct hmain *m, int64_t ws, bool cancelled)
{
	enum lease_activity act;
	enum lease_event ev;
	const char *limit;
	char why[64];
	int status = (int)ws;

	limit = m->sbx != NULL ? tui_holder_sbx_exit_reason(m->sbx, status) :
				 NULL;
	if (limit != NULL) {
		/* A limit ended it (SPEC 8.4): the named reason. */
		act = LEASE_ACT_FAILED;
		ev = LEASE_EV_FAIL;
		snprintf(why, sizeof why, "%s", limit);
	} else if (cancelled) {
		act = LEASE_ACT_CANCELLED;
		ev = LEASE_EV_CANCEL;
		snprintf(why, sizeof why, "cancelled by the operator");
	} else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		act = LEASE_ACT_DONE;
		/* trusted_local has no result to review (SPEC 3). */
		ev = LEASE_EV_RESULT;
		snprintf(why, sizeof why, "exit 0");
	} else {
		act = LEASE_ACT_FAILED;
		ev = LEASE_EV_FAIL;
		if (WIFEXITED(status))
			snprintf(why, sizeof why, "exit %d",
			    WEXITSTATUS(status));
		else
			snprintf(why, sizeof why, "signal %d",
			    WTERMSIG(status));
	}
	TUI_BEST_EFFORT(tui_holder_journal_activity(m->jq, act, why, true));
	/* A sandboxed exit 0 stays running until its result exists. */
	if (m->sbx == NULL || ev != LEASE_EV_RESULT)
		TUI_BEST_EFFORT(tui_holder_journal_transition(m->jq, ev, why));
	if (ev != LEASE_EV_RESULT)
		snprintf(m->fail_reason, sizeof m->fail_reason, "%s", why);
	receipt(m, "agent_exited", json_pack("{s:b, s:b, s:i, s:s}",
	    "cancelled", cancelled, "exited", WIFEXITED(status),
	    "code", WIFEXITED(status) ? WEXITSTATUS(status) :
					WTERMSIG(status), "reason", why));
	if (m->sbx != NULL) {
		finish_start(m);
		return;
	}
	/* The socket serves until every write is made (reconcile sees it). */
	summarise(m);
	if (!tui_holder_journal_when_drained(m->jq, written, m)) {
		m->journal_held = true;
		pty_holder_hold(m->ph, "journal");
	}
}

/* The detector's verdict: journal it with the deciding signal (SPEC 5.3). */
static void
on_activity(const char *state, const char *signal, const char *detail,
    void *ud)
{
	struct hmain *m = ud;
	enum lease_activity act;
	char why[512], *q = NULL;
	json_t *qj;
	size_t o;

	if (lease_fsm_activity_parse(state, &act) < 0)
		return;
	if (m->sbx != NULL)
		tui_holder_sbx_activity(m->sbx, state,
		    m->holder_ident[0] != '\0');
	/* Blocked on a choice: the question, as data (SPEC 5.4). */
	if (act == LEASE_ACT_BLOCKED && m->ph != NULL)
		q = pty_holder_question(m->ph);
	/* The operator's hook on blocked, done, failed (SPEC 5.6). */
	if (m->notify != NULL) {
		tui_notify_question(m->notify, q);
		TUI_BEST_EFFORT(tui_notify_fire(m->notify, m->id, m->name,
		    state, signal, detail));
	}
	/* Exits are journaled by on_exited with the lease transition. */
	if (act == LEASE_ACT_DONE || act == LEASE_ACT_FAILED ||
	    act == LEASE_ACT_CANCELLED) {
		free(q);
		return;
	}
	o = (size_t)snprintf(why, sizeof why, "%s%s%.200s", signal,
	    detail && *detail ? ": " : "", detail ? detail : "");
	/* ... and in its transition: the question's digest and text */
	if (q != NULL && o < sizeof why && (qj = json_loads(q, 0, NULL)) !=
	    NULL) {
		const char *t = json_string_value(json_object_get(qj, "text"));

		snprintf(why + o, sizeof why - o, "; question %s: %.*s",
		    json_string_value(json_object_get(qj, "digest")) ?
		    json_string_value(json_object_get(qj, "digest")) : "?",
		    t != NULL ? (int)strcspn(t, "\n") : 0, t != NULL ? t : "");
		json_decref(qj);
	}
	free(q);
	/* Past the budget the row changes but no transition is logged. */
	TUI_BEST_EFFORT(tui_holder_journal_activity(m->jq, act, why,
	    tui_tally_admit(&m->activity, "activity")));
}

static void
rules_error(const char *file, int line, const char *msg, void *ud)
{
	struct hmain *m = ud;

	fprintf(stderr, "corral holder %s: %s:%d: %s\n", m->id, file, line,
	    msg);
	receipt(m, "rules_error", json_pack("{s:s, s:i, s:s}", "file", file,
	    "line", line, "message", msg));
}

static void
config_error(const char *file, int line, const char *msg, void *ud)
{
	struct hmain *m = ud;

	fprintf(stderr, "corral holder %s: %s:%d: %s (defaults used)\n",
	    m->id, file, line, msg);
}

static void
on_event(const char *kind, const char *detail, void *ud)
{
	struct hmain *m = ud;

	if (tui_tally_admit(&m->events, kind))
		receipt(m, kind, json_pack("{s:s}", "detail", detail));
	if (m->sbx != NULL)
		tui_holder_sbx_event(m->sbx, kind, detail);
}

static void
on_running(struct pty_holder *ph, void *ud)
{
	struct hmain *m = ud;

	m->ph = ph;
	tui_holder_sbx_running(m->sbx, ph);
}

/* What the budgets left out, counted: one receipt, if anything was. */
static void
summarise(struct hmain *m)
{
	json_t *u;

	if (m->summarised)
		return;
	m->summarised = true;
	if (tui_tally_total_unrecorded(&m->events) == 0 &&
	    tui_tally_total_unrecorded(&m->activity) == 0)
		return;
	if ((u = json_object()) == NULL ||
	    tui_tally_add_json(&m->events, u) < 0 ||
	    tui_tally_add_json(&m->activity, u) < 0) {
		json_decref(u);
		return;
	}
	receipt(m, "journal_summary", json_pack("{s:o, s:I, s:I}",
	    "unrecorded", u, "events_per_kind",
	    (json_int_t)HOLDER_EVENTS_PER_KIND, "activity_rows",
	    (json_int_t)HOLDER_ACTIVITY_ROWS));
}

static void
on_closing(void *ud)
{
	struct hmain *m = ud;

	summarise(m);
	m->ph = NULL;
	tui_holder_sbx_closing(m->sbx);
	tui_holder_journal_detach(m->jq);
}

static void
written(void *ud)
{
	struct hmain *m = ud;

	pty_holder_finished(m->ph);
}

/*
 * The agent has ended and the holder's own work is done: its summaries
 * go in, and the holder keeps serving (status says the phase, and the
 * journal's state) until the journal has every write it queued, so a
 * journal that is busy or full never makes it look lost.
 */
static void
let_go(struct hmain *m)
{
	summarise(m);
	tui_holder_sbx_summary(m->sbx);
	if (tui_holder_journal_when_drained(m->jq, written, m))
		pty_holder_finished(m->ph);
}

/*
 * The result, extracted and checked, tried again while a full disk stops
 * it (issue 16): the lease stays running with its workspace kept, the
 * status says the journal is unwritable, a result_waiting receipt goes
 * through the loop's queue (written once space returns), and each retry
 * starts from a fresh result directory, 100 ms after the last, doubling
 * to 2 s. A cancel meanwhile makes the retry a quarantine for inspection.
 */
static int
finish_result(struct hmain *m, struct tui_ctx *c, const char *secret)
{
	struct timespec ts;
	unsigned delay = HOLDER_FULL_RETRY_MS, tries = 0;
	char msg[256];
	int frc;

	for (;;) {
		frc = tui_checks_finish(c, m->id, m->fail_reason[0] != '\0' ?
		    m->fail_reason : NULL, secret, &m->stop);
		if (frc != -ENOSPC)
			break;
		snprintf(msg, sizeof msg, "%.250s", lease_store_errmsg(c->store));
		if (tries++ == 0) {
			fprintf(stderr, "corral holder %s: %s; retried until "
			    "space returns\n", m->id, msg);
			TUI_BEST_EFFORT(tui_holder_journal_receipt(m->jq,
			    "result_waiting", json_pack("{s:s, s:s}", "reason",
			    "disk_full", "detail", msg)));
		}
		tui_holder_journal_finish_blocked(m->jq, msg);
		ts.tv_sec = delay / 1000;
		ts.tv_nsec = (long)(delay % 1000) * 1000000L;
		nanosleep(&ts, NULL);
		if ((delay *= 2) > HOLDER_FULL_RETRY_MAX_MS)
			delay = HOLDER_FULL_RETRY_MAX_MS;
	}
	tui_holder_journal_finish_blocked(m->jq, NULL);
	if (tries > 0)
		TUI_BEST_EFFORT(tui_holder_journal_receipt(m->jq,
		    "result_resumed", json_pack("{s:I}", "retries",
		    (json_int_t)tries)));
	return frc;
}

/*
 * A sandboxed lease's end (SPEC 7, 9.2): the runtime by exact ID (every
 * process of the lease is stopped, the credential revoked), then the
 * result from the kept workspace: a lease that did not succeed goes to
 * quarantine with its reason. An exit 0 left the lease running:
 * tui_checks_finish moves it (result_ready, or failed result_invalid);
 * if nothing did, it fails here rather than stay running.
 */
static void
finish_sbx(struct hmain *m, struct tui_ctx *c)
{
	struct lease_record r;
	const char *s;
	char *secret = NULL;
	int frc;

	if (c->store == NULL)
		return;
	/* Kept past the revoke (which wipes it) for the result's gate. */
	if ((s = tui_holder_sbx_secret(m->sbx)) != NULL)
		secret = strdup(s);
	if (tui_holder_sbx_finish(m->sbx, c) == 0 &&
	    m->holder_ident[0] != '\0') {
		frc = finish_result(m, c, secret);
		/* Quarantined (LEASE_EINVALID) is an outcome, not an error. */
		if (frc < 0 && frc != LEASE_EINVALID)
			fprintf(stderr, "corral holder %s: result: %s\n",
			    m->id, lease_store_errmsg(c->store));
	}
	if (lease_record_get(c->store, m->id, &r) == 0) {
		if (r.state == LEASE_STATE_RUNNING && m->holder_ident[0])
			TUI_BEST_EFFORT(lease_record_transition(c->store,
			    m->id, LEASE_EV_FAIL, "finish_failed", NULL));
		lease_record_clear(&r);
	}
	if (secret != NULL) {
		explicit_bzero(secret, strlen(secret));
		free(secret);
	}
}

/*
 * On the thread pool: first what the loop queued before (agent_exited
 * and the rest: while the disk is full or the journal busy, the result
 * waits on the workspace, not lost), then the result with a handle that
 * waits for the journal as long as it must.
 */
static void
finish_work(uv_work_t *w)
{
	struct hmain *m = w->data;

	tui_holder_journal_wait(m->jq, m->finish_mark);
	if (tui_ctx_store(&m->wctx) != NULL) {
		TUI_BEST_EFFORT(lease_store_set_busy_timeout(m->wctx.store,
		    HOLDER_FINISH_BUSY_MS));
		finish_sbx(m, &m->wctx);
	}
}

static void
finish_after(uv_work_t *w, int status)
{
	struct hmain *m = w->data;

	(void)status;
	lease_store_close(m->wctx.store);
	m->wctx.store = NULL;
	m->finishing = false;
	/* Now the holder may stop serving (status said "finishing"). */
	let_go(m);
}

/* After the exit: finish on a thread while the socket keeps serving. */
static void
finish_start(struct hmain *m)
{
	if (m->sbx == NULL || m->ph == NULL || m->async || m->loop == NULL)
		return;
	pty_holder_hold(m->ph, "finishing");
	/* made once here, so the worker's copy shares it (ctx frees it) */
	(void)tui_ctx_scope(m->ctx);
	m->wctx = *m->ctx;
	m->wctx.store = NULL;
	m->work.data = m;
	m->finish_mark = tui_holder_journal_mark(m->jq);
	if (uv_queue_work(m->loop, &m->work, finish_work, finish_after) == 0)
		m->async = m->finishing = true;
	else
		let_go(m);
}

/*
 * The operator's cancel once the agent has exited, while the result is
 * made and its checks run (SPEC 5.5, 7.3): the lease, still running, ends
 * cancelled now, no further check starts and the one running is killed
 * (tui_checks_run then tears it down). Refused once the lease moved on
 * (result_ready, failed).
 */
static int
cancel_write(struct lease_store *st, void *ud)
{
	struct hmain *m = ud;
	int rc;

	/* On the journal's worker, in order with the loop's other writes. */
	if ((rc = lease_record_transition(st, m->id, LEASE_EV_CANCEL,
	    "cancelled by the operator while its checks ran", NULL)) < 0)
		return rc;	/* moved on (result_ready, failed): refused */
	TUI_BEST_EFFORT(tui_holder_journal_activity(m->jq,
	    LEASE_ACT_CANCELLED, "cancelled by the operator", true));
	snprintf(m->fail_reason, sizeof m->fail_reason, "cancelled");
	tui_checks_stop_request(&m->stop);
	return 0;
}

static int
on_cancel_held(void *ud)
{
	struct hmain *m = ud;

	if (m->sbx == NULL || !m->finishing)
		return -EINVAL;
	return tui_holder_journal_call(m->jq, cancel_write, m);
}

static int
on_signal_agent(int sig, void *ud)
{
	struct hmain *m = ud;

	return tui_holder_sbx_signal(m->sbx, sig);
}

static int
holder_exec(struct tui_ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "id", required_argument, NULL, 'i' },
		{ "sandbox", required_argument, NULL, 's' },
		{ "rows", required_argument, NULL, 'r' },
		{ "cols", required_argument, NULL, 'c' },
		{ "cwd", required_argument, NULL, 'd' },
		{ "allow-control", no_argument, NULL, 'a' },
		{ "owner", no_argument, NULL, 'o' },
		{ "agent", required_argument, NULL, 'g' },
		{ NULL, 0, NULL, 0 },
	};
	const char *id = NULL, *sandbox = "trusted_local", *cwd = NULL;
	const char *agent = NULL;
	struct pty_rules *rules = NULL;
	const struct sbx_adapter *ad;
	struct pty_holder_opts ho;
	struct sbx_request req;
	struct sbx_plan *plan = NULL;
	struct lease_record rec;
	struct hmain m;
	struct tui_config cfg;
	uv_loop_t loop;
	int logfd = -1;
	int ch, rows = 24, cols = 80, rc;
	bool allow = false, owner = false;
	size_t kept;
	char *dir = NULL;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (ch) {
		case 'i': id = optarg; break;
		case 's': sandbox = optarg; break;
		case 'r': rows = atoi(optarg); break;
		case 'c': cols = atoi(optarg); break;
		case 'd': cwd = optarg; break;
		case 'a': allow = true; break;
		case 'o': owner = true; break;
		case 'g': agent = optarg; break;
		default: return TUI_EXIT_USAGE;
		}
	}
	if (id == NULL || !lease_id_valid(id) || optind >= argc) {
		fprintf(stderr, "corral-holder: bad arguments\n");
		if (write(3, "err bad holder arguments\n", 25) < 0) {
			/* nobody to tell */
		}
		return TUI_EXIT_USAGE;
	}
	if (tui_ctx_store(c) == NULL ||
	    lease_record_get(c->store, id, &rec) < 0) {
		dprintf(3, "err journal: %s\n",
		    c->store ? lease_store_errmsg(c->store) : "unavailable");
		return TUI_EXIT_FAIL;
	}
	memset(&m, 0, sizeof m);
	tui_checks_stop_init(&m.stop);
	if (rec.name != NULL)
		snprintf(m.name, sizeof m.name, "%s", rec.name);
	lease_record_clear(&rec);
	if ((ad = sbx_adapters_find(sandbox)) == NULL) {
		dprintf(3, "err unknown sandbox adapter\n");
		return TUI_EXIT_FAIL;
	}
	memset(&req, 0, sizeof req);
	dir = tui_ctx_lease_dir(c, id);
	req.id = id;
	req.lease_dir = dir;
	req.cmd = argv + optind;
	req.cwd = cwd;
	if (strcmp(ad->name, "trusted_local") == 0) {
		/* Its tracking cgroup, joined before exec (track.c). */
		char daemons[TUI_DAEMON_MAX][TUI_COMM_MAX];

		if ((rc = tui_track_plan(c, ad, id, &req, &m.track,
		    &plan)) < 0) {
			dprintf(3, "err sandbox plan: %s\n", sbx_strerror(rc));
			free(dir);
			return TUI_EXIT_FAIL;
		}
		/* The daemons its profile expects to outlive it (SPEC 3). */
		if (m.track != NULL)
			tui_track_expect(m.track, (const char (*)[
			    TUI_COMM_MAX])daemons, tui_agent_expected_daemons(
			    c, agent, daemons));
	} else if (strcmp(ad->name, "bwrap") == 0) {
		char err[512];

		/* The lease's uid, cgroups, policy and private mounts. */
		if ((rc = tui_holder_sbx_prepare(c, ad, id, argv + optind,
		    &m.sbx, &plan, err, sizeof err)) < 0) {
			dprintf(3, "err sandbox: %s\n", err);
			tui_holder_sbx_free(m.sbx);
			sbx_plan_free(plan);
			free(dir);
			return TUI_EXIT_FAIL;
		}
	} else if ((rc = tui_holder_cmd_plan(c, ad, &req, &m.cmd,
	    &plan)) < 0) {
		dprintf(3, "err sandbox plan: %s\n", sbx_strerror(rc));
		free(dir);
		return TUI_EXIT_FAIL;
	}
	m.ctx = c;
	tui_tally_init(&m.events, HOLDER_EVENTS_PER_KIND);
	tui_tally_init(&m.activity, HOLDER_ACTIVITY_ROWS);
	tui_tally_set_rate(&m.activity, HOLDER_ACTIVITY_BURST,
	    HOLDER_ACTIVITY_PER_SEC);
	m.id = id;
	m.trusted_local = strcmp(ad->name, "trusted_local") == 0;
	m.sock = tui_ctx_holder_sock(c, id);

	memset(&ho, 0, sizeof ho);
	ho.id = id;
	ho.dir = dir;
	ho.plan = plan;
	/* The command adapter's exec hook is the operator's own program. */
	ho.ctty = m.trusted_local || m.cmd != NULL ? PTY_CTTY_TAKE :
	    PTY_CTTY_NONE;
	ho.rows = rows > 0 && rows <= 1000 ? rows : 24;
	ho.cols = cols > 0 && cols <= 1000 ? cols : 80;
	ho.sb_lines = PTY_SCREEN_SB_DEFAULT;
	ho.transcript_max = HOLDER_TRANSCRIPT_MAX;
	/* The output cap (SPEC 8.4): the transcript stops there. */
	if (m.sbx != NULL && tui_holder_sbx_output_cap(m.sbx) > 0)
		ho.transcript_max = tui_holder_sbx_output_cap(m.sbx);
	ho.allow_control = allow;
	ho.trusted_local = m.trusted_local;
	ho.ready_fd = 3;
	ho.owner_fd = owner ? 4 : -1;
	ho.cancel_wait_ms = 2000;
	ho.hooks.claim = on_claim;
	ho.hooks.started = on_started;
	ho.hooks.exited = on_exited;
	ho.hooks.event = on_event;
	ho.hooks.activity = on_activity;
	ho.hooks.status_json = on_status;
	ho.hooks.running = on_running;
	if (m.track != NULL)
		ho.hooks.procs = on_procs;
	ho.hooks.closing = on_closing;
	if (m.sbx != NULL) {
		/* Egress, graceful cancel (SPEC 8.2, 5.5); scrub_wire below. */
		ho.hooks.signal_agent = on_signal_agent;
		ho.hooks.cancel_held = on_cancel_held;
	}
	uv_loop_init(&loop);
	m.loop = &loop;
	/* From here on the holder's writes go through the queue. */
	if ((rc = tui_holder_journal_new(&m.jq, c->state_dir, id,
	    &loop)) < 0) {
		dprintf(3, "err journal queue: %s\n", strerror(-rc));
		uv_loop_close(&loop);
		tui_holder_sbx_free(m.sbx);
		sbx_plan_free(plan);
		free(m.sock);
		free(dir);
		return TUI_EXIT_FAIL;
	}
	tui_holder_sbx_set_journal(m.sbx, m.jq);
	rules = tui_ctx_rules_load(c, rules_error, &m);
	ho.rules = rules;
	ho.agent = agent;
	ho.hooks.ud = &m;

	tui_config_load(&cfg, config_error, &m);
	if (cfg.hook[0] != '\0') {
		char *log = NULL;

		if (asprintf(&log, "%s/holder.log", dir) > 0)
			logfd = open(log, O_WRONLY | O_CREAT | O_APPEND |
			    O_CLOEXEC, 0600);
		free(log);
		if (tui_notify_new(&m.notify, &loop, &cfg, logfd) < 0)
			m.notify = NULL;
	}
	rc = 0;
	if (m.sbx != NULL) {
		char err[512];

		if ((rc = tui_holder_sbx_start(m.sbx, &loop, err,
		    sizeof err)) < 0) {
			fprintf(stderr, "corral holder %s: %s\n", id, err);
			if (ho.ready_fd >= 0)
				dprintf(ho.ready_fd, "err %s\n", err);
		}
	}
	if (rc == 0 && (rc = scrub_wire(&m, &ho)) < 0 && ho.ready_fd >= 0)
		dprintf(ho.ready_fd, "err scrubber: %s\n", strerror(-rc));
	if (rc == 0)
		rc = pty_holder_run(&loop, &ho);
	/*
	 * The end's journal handle (on_started closed the claim's); a failure
	 * is on stderr, the holder.log, and the end does without it.
	 */
	(void)tui_ctx_store(c);
	/* The proxy's last tunnels and handles (they end with the agent). */
	tui_holder_sbx_drain(m.sbx, &loop);
	/* The loop has ended: what it queued first, then the rest in turn. */
	tui_holder_journal_wait(m.jq, tui_holder_journal_mark(m.jq));
	if (rc < 0 && m.holder_ident[0] != '\0') {
		/* The agent never ran: the lease fails with the reason. */
		TUI_BEST_EFFORT(tui_holder_journal_transition(m.jq,
		    LEASE_EV_FAIL, "exec_failed"));
		TUI_BEST_EFFORT(tui_holder_journal_activity(m.jq,
		    LEASE_ACT_FAILED, "exec_failed", true));
		tui_holder_journal_wait(m.jq, tui_holder_journal_mark(m.jq));
	}
	/* The sandbox's end, unless the finishing thread did it (SPEC 7). */
	if (m.sbx != NULL && !m.async)
		finish_sbx(&m, c);
	/* The command adapter: its teardown hook, then the result. */
	if (m.cmd != NULL)
		tui_holder_cmd_finish(c, id, m.holder_ident[0] != '\0',
		    m.fail_reason[0] != '\0' ? m.fail_reason : NULL);
	tui_holder_cmd_free(m.cmd);
	/*
	 * trusted_local: what is left of its processes, then the cgroup --
	 * unless expected daemons still run in it: then it stays, cleanup
	 * pending, for reject or gc (which kill them and remove it).
	 */
	kept = tui_track_expected_left(m.track);
	tui_track_free(m.track);
	if (m.trusted_local && kept == 0) {
		char err[512];

		if (tui_sandbox_teardown(c, c->store, id, err, sizeof err) < 0)
			fprintf(stderr, "corral holder %s: teardown: %s\n",
			    id, err);
	}
	if (m.holder_ident[0] != '\0') {
		TUI_BEST_EFFORT(tui_holder_journal_holder(m.jq, 0, 0));
		TUI_BEST_EFFORT(tui_holder_journal_resource(m.jq,
		    TUI_HOLDER_JOURNAL_REMOVED, LEASE_RES_HOLDER,
		    m.holder_ident));
	}
	TUI_BEST_EFFORT(tui_holder_journal_resource(m.jq,
	    TUI_HOLDER_JOURNAL_REMOVED, LEASE_RES_SOCKET, m.sock));
	/* Every write is made before the holder goes (SPEC 9.1). */
	tui_holder_journal_free(m.jq);
	m.jq = NULL;
	tui_notify_free(m.notify);	/* waits for running hooks */
	if (logfd >= 0)
		close(logfd);
	uv_loop_close(&loop);
	pty_rules_free(rules);
	sbx_plan_free(plan);
	tui_holder_sbx_free(m.sbx);
	sbx_scrub_free(m.scrub);
	tui_checks_stop_destroy(&m.stop);
	free(m.sock);
	free(dir);
	return rc < 0 ? TUI_EXIT_FAIL : TUI_EXIT_OK;
}

static const char holder_usage[] =
    "usage: corral-holder --id ID [--sandbox NAME] [--rows N --cols N] "
    "[--cwd DIR] [--agent NAME] [--allow-control] [--owner] -- CMD [ARG...]"
    "\n\nInternal: the per-lease holder process. Started by 'corral new' "
    "and 'corral wrap'; not for direct use.\n";

int
tui_holder_main_run(int argc, char **argv)
{
	struct tui_ctx ctx;
	int rc;

	if (tui_ctx_wants_help(argc, argv)) {
		fputs(holder_usage, stdout);
		return TUI_EXIT_OK;
	}
	if (tui_ctx_init(&ctx, argv[0]) < 0) {
		fprintf(stderr, "corral: out of memory\n");
		return TUI_EXIT_FAIL;
	}
	ctx.cmd = "corral-holder";
	ctx.store_cache_kib = TUI_HOLDER_STORE_CACHE_KIB;
	rc = holder_exec(&ctx, argc, argv);
	tui_ctx_free(&ctx);
	return rc;
}
