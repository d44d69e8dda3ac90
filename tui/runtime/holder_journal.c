/*
 * holder_journal.c: the holder's writes to the journal, off its loop
 * (SPEC 9.1, 9.2; issue 16 items 9 and 10). The loop only queues: one
 * worker thread with its own journal handle writes the entries in the
 * order they were queued (a lease's receipt chain is one sequence) and
 * keeps an entry until it is written: a busy journal (another process in
 * a long write transaction) or a full or failing disk is retried, never
 * dropped, and said in the holder's status ("journal": "waiting" or
 * "unwritable"), so a status ping always answers and reconciliation never
 * takes a holder that waits for the journal for a wedged one.
 *
 * Memory is bounded by what the holder may write at all: the tallies of
 * holder_main.c and holder_sbx.c cap what an agent can cause (about 9,000
 * entries, docs/security-model.md), an activity change past its budget
 * only replaces the row (consecutive ones coalesce into one entry), and
 * the queue refuses past HJ_MAX entries, counting them in one
 * journal_overflow receipt written once the queue drains.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include <jansson.h>

#include "lease/lease.h"
#include "tui/runtime/runtime_int.h"

#define HJ_MAX 16384		/* entries queued at most */
#define HJ_BUSY_MS 1000		/* one try's wait for the write lock */
#define HJ_RETRY_MIN_MS 100	/* between tries of a failed entry ... */
#define HJ_RETRY_MAX_MS 2000	/* ... doubling up to this */
#define HJ_WAITING_MS 1000	/* a head older than this is "waiting" */
#define HJ_IDLE_CLOSE_MS 5000	/* the handle, unused so long, is closed */

enum hj_op {
	HJ_RECEIPT,
	HJ_RECEIPT_USAGE,
	HJ_ACTIVITY,
	HJ_ACTIVITY_UNLOGGED,
	HJ_TRANSITION,
	HJ_HOLDER,
	HJ_RES_PLAN,
	HJ_RES_CREATED,
	HJ_RES_REMOVED,
	HJ_CALL,
};

struct hj_entry {
	struct hj_entry *next;
	enum hj_op op;
	uint64_t seq;
	int a;			/* activity, event, resource kind */
	int64_t pid, start;
	char *s;		/* kind, reason, identity */
	json_t *fields;
	struct lease_usage usage;	/* HJ_RECEIPT_USAGE */
	tui_holder_journal_fn fn;
	void *ud;
};

struct tui_holder_journal {
	char id[LEASE_ID_LEN + 1];
	char *db;
	uv_thread_t thread;
	bool thread_up;
	uv_mutex_t mu;
	uv_cond_t cond;		/* worker: work or stop; waiters: progress */
	struct hj_entry *head, *tail;
	size_t n;
	uint64_t queued, done;	/* seqs: last queued, last written */
	bool stop;
	/* what the status says (under mu) */
	enum tui_holder_journal_state state;
	char err[256];
	uint64_t head_since_ms;	/* the head's first try, or 0 */
	char finish_err[256];	/* the finishing thread's full disk, or "" */
	unsigned long long overflow;
	/* the loop's side: told when the queue has drained */
	uv_async_t async;
	bool async_live;
	tui_holder_journal_drained_cb drained;
	void *drained_ud;
	uint64_t drained_seq;
};

static void
entry_free(struct hj_entry *e)
{
	if (e == NULL)
		return;
	free(e->s);
	json_decref(e->fields);
	free(e);
}

/*
 * Worth another try: the write lock, the disk, the file. A refusal of the
 * journal's own (a transition the state machine forbids, a lease gone) is
 * an answer, not a failure to write.
 */
static bool
transient(int rc)
{
	return rc == LEASE_ELOCKED || rc == -ENOSPC || rc == -EIO ||
	    rc == -ENOMEM || rc == LEASE_EREADONLY || rc == LEASE_EDB ||
	    rc == -EDQUOT || rc == -ENOENT;
}

static int
run_entry(struct tui_holder_journal *q, struct lease_store *st,
    struct hj_entry *e)
{
	switch (e->op) {
	case HJ_RECEIPT:
		return lease_receipt_append(st, q->id, e->s, e->fields, NULL);
	case HJ_RECEIPT_USAGE:
		return lease_receipt_append_usage(st, q->id, e->s, e->fields,
		    &e->usage, NULL);
	case HJ_ACTIVITY:
		return lease_record_set_activity(st, q->id,
		    (enum lease_activity)e->a, e->s);
	case HJ_ACTIVITY_UNLOGGED:
		return lease_record_set_activity_unlogged(st, q->id,
		    (enum lease_activity)e->a);
	case HJ_TRANSITION:
		return lease_record_transition(st, q->id,
		    (enum lease_event)e->a, e->s, NULL);
	case HJ_HOLDER:
		return lease_record_set_holder(st, q->id, (pid_t)e->pid,
		    e->start);
	case HJ_RES_PLAN:
		return lease_resource_plan(st, q->id,
		    (enum lease_resource)e->a, e->s, NULL);
	case HJ_RES_CREATED:
		return lease_resource_created(st, q->id,
		    (enum lease_resource)e->a, e->s);
	case HJ_RES_REMOVED:
		return lease_resource_removed(st, q->id,
		    (enum lease_resource)e->a, e->s);
	case HJ_CALL:
		return e->fn(st, e->ud);
	}
	return -EINVAL;
}

/* Sleep on the condition for ms, unless told to stop. Under mu. */
static void
nap(struct tui_holder_journal *q, unsigned ms)
{
	uint64_t until = uv_hrtime() + (uint64_t)ms * 1000000ull, now;

	while (!q->stop && (now = uv_hrtime()) < until)
		(void)uv_cond_timedwait(&q->cond, &q->mu, until - now);
}

static void
tell_loop(struct tui_holder_journal *q)
{
	if (q->async_live && q->drained != NULL && q->done >= q->drained_seq)
		uv_async_send(&q->async);
}

static void
worker(void *arg)
{
	struct tui_holder_journal *q = arg;
	struct lease_store *st = NULL;
	struct lease_store_opts so = { .busy_ms = HJ_BUSY_MS,
		.cache_kib = TUI_HOLDER_STORE_CACHE_KIB };
	unsigned backoff = HJ_RETRY_MIN_MS;
	bool opened;
	struct hj_entry *e;
	char msg[256];
	int rc;

	uv_mutex_lock(&q->mu);
	for (;;) {
		while (q->head == NULL && q->overflow == 0 && !q->stop) {
			if (st == NULL) {
				uv_cond_wait(&q->cond, &q->mu);
				continue;
			}
			/*
			 * Idle a while: the handle (its cache and schema) is
			 * let go, and what it held goes back to the system;
			 * the next write opens it again (issue 17).
			 */
			if (uv_cond_timedwait(&q->cond, &q->mu,
			    HJ_IDLE_CLOSE_MS * 1000000ull) != UV_ETIMEDOUT ||
			    q->head != NULL || q->overflow > 0 || q->stop)
				continue;
			uv_mutex_unlock(&q->mu);
			lease_store_close(st);
			st = NULL;
			malloc_trim(0);
			uv_mutex_lock(&q->mu);
		}
		if (q->head == NULL && q->overflow > 0) {
			/* What the cap refused, counted once the queue drained. */
			struct hj_entry *o = calloc(1, sizeof *o);

			if (o != NULL && (o->s = strdup("journal_overflow")) !=
			    NULL && (o->fields = json_pack("{s:I}", "refused",
			    (json_int_t)q->overflow)) != NULL) {
				q->overflow = 0;
				o->seq = ++q->queued;
				q->head = q->tail = o;
				q->n = 1;
			} else {
				entry_free(o);
				nap(q, HJ_RETRY_MAX_MS);
				continue;
			}
		}
		if (q->head == NULL)
			break;		/* stopped with nothing left */
		e = q->head;
		if (q->head_since_ms == 0)
			q->head_since_ms = uv_hrtime() / 1000000ull;
		uv_mutex_unlock(&q->mu);

		rc = 0;
		msg[0] = '\0';
		opened = st == NULL;
		if (st == NULL && (rc = lease_store_open_ex(&st, q->db,
		    &so)) < 0) {
			snprintf(msg, sizeof msg, "%s", lease_store_errmsg(st));
			lease_store_close(st);
			st = NULL;
		} else if (opened) {
			opened = false;
			/* What the open's file check freed, back to the system. */
			malloc_trim(0);
		}
		if (st != NULL) {
			rc = run_entry(q, st, e);
			if (rc < 0)
				snprintf(msg, sizeof msg, "%s",
				    lease_store_errmsg(st));
		}

		uv_mutex_lock(&q->mu);
		if (rc < 0 && transient(rc)) {
			q->state = rc == LEASE_ELOCKED ?
			    TUI_HOLDER_JOURNAL_WAITING :
			    TUI_HOLDER_JOURNAL_UNWRITABLE;
			snprintf(q->err, sizeof q->err, "%s", msg);
			/* Kept at the head: the caller drains before a stop. */
			nap(q, rc == LEASE_ELOCKED ? 1 : backoff);
			if (rc != LEASE_ELOCKED && backoff < HJ_RETRY_MAX_MS)
				backoff *= 2;
			continue;
		}
		if (rc < 0)
			fprintf(stderr, "corral holder %s: journal: %s\n", q->id,
			    msg);
		backoff = HJ_RETRY_MIN_MS;
		q->head = e->next;
		if (q->head == NULL)
			q->tail = NULL;
		q->n--;
		q->done = e->seq;
		q->head_since_ms = 0;
		q->state = TUI_HOLDER_JOURNAL_OK;
		q->err[0] = '\0';
		tell_loop(q);
		uv_cond_broadcast(&q->cond);
		uv_mutex_unlock(&q->mu);
		entry_free(e);
		uv_mutex_lock(&q->mu);
	}
	uv_mutex_unlock(&q->mu);
	lease_store_close(st);
}

static void
async_cb(uv_async_t *a)
{
	struct tui_holder_journal *q = a->data;
	tui_holder_journal_drained_cb cb = NULL;
	void *ud = NULL;

	uv_mutex_lock(&q->mu);
	if (q->drained != NULL && q->done >= q->drained_seq) {
		cb = q->drained;
		ud = q->drained_ud;
		q->drained = NULL;
	}
	uv_mutex_unlock(&q->mu);
	if (cb != NULL)
		cb(ud);
}

int
tui_holder_journal_new(struct tui_holder_journal **out, const char *state_dir,
    const char *id, uv_loop_t *loop)
{
	struct tui_holder_journal *q;

	*out = NULL;
	if (!lease_id_valid(id) || (q = calloc(1, sizeof *q)) == NULL)
		return -ENOMEM;
	snprintf(q->id, sizeof q->id, "%s", id);
	if ((q->db = lease_path_db(state_dir)) == NULL) {
		free(q);
		return -ENOMEM;
	}
	uv_mutex_init(&q->mu);
	uv_cond_init(&q->cond);
	if (uv_thread_create(&q->thread, worker, q) != 0) {
		uv_cond_destroy(&q->cond);
		uv_mutex_destroy(&q->mu);
		free(q->db);
		free(q);
		return -EAGAIN;
	}
	q->thread_up = true;
	if (loop != NULL && uv_async_init(loop, &q->async, async_cb) == 0) {
		q->async.data = q;
		q->async_live = true;
	}
	*out = q;
	return 0;
}

/* Append e (or, for an unlogged activity, replace a queued one). */
static void
push(struct tui_holder_journal *q, struct hj_entry *e)
{
	uv_mutex_lock(&q->mu);
	if (e->op == HJ_ACTIVITY_UNLOGGED && q->tail != NULL &&
	    q->tail != q->head && q->tail->op == HJ_ACTIVITY_UNLOGGED) {
		/* Only the row's current value: the newer one stands. */
		q->tail->a = e->a;
		uv_mutex_unlock(&q->mu);
		entry_free(e);
		return;
	}
	if (q->n >= HJ_MAX) {
		q->overflow++;
		uv_mutex_unlock(&q->mu);
		entry_free(e);
		return;
	}
	e->seq = ++q->queued;
	if (q->tail != NULL)
		q->tail->next = e;
	else
		q->head = e;
	q->tail = e;
	q->n++;
	uv_cond_broadcast(&q->cond);
	uv_mutex_unlock(&q->mu);
}

static struct hj_entry *
entry(enum hj_op op, int a, const char *s)
{
	struct hj_entry *e = calloc(1, sizeof *e);

	if (e == NULL)
		return NULL;
	e->op = op;
	e->a = a;
	if (s != NULL && (e->s = strdup(s)) == NULL) {
		free(e);
		return NULL;
	}
	return e;
}

static int
queue(struct tui_holder_journal *q, struct hj_entry *e)
{
	if (q == NULL || e == NULL) {
		entry_free(e);
		if (q != NULL) {
			uv_mutex_lock(&q->mu);
			q->overflow++;	/* out of memory: counted */
			uv_cond_broadcast(&q->cond);
			uv_mutex_unlock(&q->mu);
		}
		return -ENOMEM;
	}
	push(q, e);
	return 0;
}

int
tui_holder_journal_receipt(struct tui_holder_journal *q, const char *kind,
    json_t *fields)
{
	return tui_holder_journal_receipt_usage(q, kind, fields, NULL);
}

int
tui_holder_journal_receipt_usage(struct tui_holder_journal *q,
    const char *kind, json_t *fields, const struct lease_usage *add)
{
	struct hj_entry *e;

	if (fields == NULL) {
		/* json_pack failed: the entry still counts. */
		if ((fields = json_object()) == NULL)
			return queue(q, NULL);
	}
	if ((e = entry(add != NULL ? HJ_RECEIPT_USAGE : HJ_RECEIPT, 0,
	    kind)) == NULL) {
		json_decref(fields);
		return queue(q, NULL);
	}
	e->fields = fields;
	if (add != NULL)
		e->usage = *add;
	return queue(q, e);
}

int
tui_holder_journal_activity(struct tui_holder_journal *q,
    enum lease_activity act, const char *why, bool logged)
{
	return queue(q, entry(logged ? HJ_ACTIVITY : HJ_ACTIVITY_UNLOGGED,
	    (int)act, logged ? why : NULL));
}

int
tui_holder_journal_transition(struct tui_holder_journal *q,
    enum lease_event ev, const char *why)
{
	return queue(q, entry(HJ_TRANSITION, (int)ev, why));
}

int
tui_holder_journal_holder(struct tui_holder_journal *q, pid_t pid,
    int64_t start)
{
	struct hj_entry *e = entry(HJ_HOLDER, 0, NULL);

	if (e != NULL) {
		e->pid = pid;
		e->start = start;
	}
	return queue(q, e);
}

int
tui_holder_journal_resource(struct tui_holder_journal *q,
    enum tui_holder_journal_res how, enum lease_resource kind,
    const char *identity)
{
	static const enum hj_op ops[] = {
		[TUI_HOLDER_JOURNAL_PLAN] = HJ_RES_PLAN,
		[TUI_HOLDER_JOURNAL_CREATED] = HJ_RES_CREATED,
		[TUI_HOLDER_JOURNAL_REMOVED] = HJ_RES_REMOVED,
	};

	return queue(q, entry(ops[how], (int)kind, identity));
}

int
tui_holder_journal_call(struct tui_holder_journal *q, tui_holder_journal_fn fn,
    void *ud)
{
	struct hj_entry *e = entry(HJ_CALL, 0, NULL);

	if (e != NULL) {
		e->fn = fn;
		e->ud = ud;
	}
	return queue(q, e);
}

uint64_t
tui_holder_journal_mark(struct tui_holder_journal *q)
{
	uint64_t s;

	if (q == NULL)
		return 0;
	uv_mutex_lock(&q->mu);
	s = q->queued;
	uv_mutex_unlock(&q->mu);
	return s;
}

void
tui_holder_journal_wait(struct tui_holder_journal *q, uint64_t mark)
{
	if (q == NULL)
		return;
	uv_mutex_lock(&q->mu);
	while (q->done < mark && !(q->head == NULL && q->overflow == 0))
		uv_cond_wait(&q->cond, &q->mu);
	uv_mutex_unlock(&q->mu);
}

bool
tui_holder_journal_when_drained(struct tui_holder_journal *q,
    tui_holder_journal_drained_cb cb, void *ud)
{
	bool now;

	if (q == NULL)
		return true;
	uv_mutex_lock(&q->mu);
	now = q->head == NULL && q->overflow == 0;
	if (!now && q->async_live) {
		q->drained = cb;
		q->drained_ud = ud;
		q->drained_seq = q->queued;
	}
	uv_mutex_unlock(&q->mu);
	return now || !q->async_live;
}

void
tui_holder_journal_detach(struct tui_holder_journal *q)
{
	if (q == NULL)
		return;
	uv_mutex_lock(&q->mu);
	if (!q->async_live) {
		uv_mutex_unlock(&q->mu);
		return;
	}
	q->async_live = false;
	q->drained = NULL;
	uv_mutex_unlock(&q->mu);
	uv_close((uv_handle_t *)&q->async, NULL);
}

enum tui_holder_journal_state
tui_holder_journal_status(struct tui_holder_journal *q, size_t *queued,
    char *err, size_t errsz)
{
	enum tui_holder_journal_state s;
	uint64_t now = uv_hrtime() / 1000000ull;

	if (q == NULL) {
		if (queued != NULL)
			*queued = 0;
		return TUI_HOLDER_JOURNAL_OK;
	}
	uv_mutex_lock(&q->mu);
	s = q->state;
	/* the finishing thread's own writes meet a full disk: unwritable */
	if (s == TUI_HOLDER_JOURNAL_OK && q->finish_err[0] != '\0')
		s = TUI_HOLDER_JOURNAL_UNWRITABLE;
	/* A write that waits past a second for the lock is "waiting". */
	if (s == TUI_HOLDER_JOURNAL_OK && q->head_since_ms != 0 &&
	    now - q->head_since_ms >= HJ_WAITING_MS)
		s = TUI_HOLDER_JOURNAL_WAITING;
	if (queued != NULL)
		*queued = q->n;
	if (err != NULL && errsz > 0)
		snprintf(err, errsz, "%s", s == TUI_HOLDER_JOURNAL_OK ? "" :
		    q->err[0] != '\0' ? q->err : q->finish_err[0] != '\0' ?
		    q->finish_err :
		    "waiting for the journal's write lock");
	uv_mutex_unlock(&q->mu);
	return s;
}

void
tui_holder_journal_finish_blocked(struct tui_holder_journal *q,
    const char *err)
{
	if (q == NULL)
		return;
	uv_mutex_lock(&q->mu);
	snprintf(q->finish_err, sizeof q->finish_err, "%s", err != NULL ? err :
	    "");
	uv_mutex_unlock(&q->mu);
}

const char *
tui_holder_journal_state_name(enum tui_holder_journal_state s)
{
	switch (s) {
	case TUI_HOLDER_JOURNAL_WAITING:
		return "waiting";
	case TUI_HOLDER_JOURNAL_UNWRITABLE:
		return "unwritable";
	default:
		return "ok";
	}
}

void
tui_holder_journal_free(struct tui_holder_journal *q)
{
	struct hj_entry *e, *next;

	if (q == NULL)
		return;
	tui_holder_journal_detach(q);
	/* Everything queued is written first (the caller's drain). */
	tui_holder_journal_wait(q, tui_holder_journal_mark(q));
	uv_mutex_lock(&q->mu);
	q->stop = true;
	uv_cond_broadcast(&q->cond);
	uv_mutex_unlock(&q->mu);
	if (q->thread_up)
		uv_thread_join(&q->thread);
	for (e = q->head; e != NULL; e = next) {
		next = e->next;
		entry_free(e);
	}
	uv_cond_destroy(&q->cond);
	uv_mutex_destroy(&q->mu);
	free(q->db);
	free(q);
}
