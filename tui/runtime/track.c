/*
 * track.c: the processes of a trusted_local lease (SPEC 3, 5.5, 9.2): its
 * tracking cgroup made at `corral new` (journaled, no limit), the agent
 * joined to it before exec, and every process it starts counted and ended
 * through the adapter (.attach, .enter, .procs, .signal, .detach) --
 * including one that left its session (setsid, a double fork, reparented
 * to init). When the agent exits or is cancelled, the holder ends what is
 * left (SIGTERM, then SIGKILL), on its loop with a timer, before the lease
 * is done or failed. A daemon the agent's profile expects ([processes]
 * expected_daemon, matched by comm while the cgroup is frozen, so no PID
 * is reused meanwhile) is neither signalled nor waited for:
 * the lease ends with it running, listed in the receipt, and its cgroup
 * stays (cleanup pending) for reject or gc. A teardown (the holder's last step, reconcile after
 * a lost holder, gc) kills anything still there and removes the cgroup.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include <jansson.h>

#include "lease/lease.h"
#include "sandbox-adapters/sbx.h"
#include "tui/runtime/runtime_int.h"

#define TRACK_POLL_MS 100
#define TRACK_TERM_MS 2000	/* SIGTERM, then this long before SIGKILL */
#define TRACK_KILL_MS 5000	/* after SIGKILL, this long at most */
#define TRACK_LIST_MAX 32	/* processes named in the receipt */

struct tui_track {
	const struct sbx_adapter *ad;
	struct sbx_running *run;
	uv_timer_t timer;
	bool timer_init, timer_closed;
	int phase;		/* 0: idle, 1: SIGTERM sent, 2: SIGKILL sent */
	uint64_t t0;
	size_t found, left;
	json_t *procs;		/* what was left at the agent's exit */
	json_t *kept;		/* the expected daemons left running */
	char expected[TUI_DAEMON_MAX][TUI_COMM_MAX];
	int nexpected;
	size_t nkept;
	tui_track_done_cb done;
	void *ud;
};

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The lease's tracking cgroup back from the journal: 0 and *run, or < 0. */
static int
attach(struct lease_store *st, const struct sbx_adapter *ad, const char *id,
    struct sbx_running **run, char *err, size_t errsz)
{
	struct lease_resource_row *v = NULL;
	struct sbx_resource *res;
	struct sbx_request req;
	size_t n = 0, k;
	int rc;

	*run = NULL;
	if (ad->attach == NULL || ad->procs == NULL)
		return -ENOTSUP;
	if ((rc = lease_resource_list(st, id, &v, &n)) < 0) {
		snprintf(err, errsz, "journal: %s", lease_store_errmsg(st));
		return rc;
	}
	if ((res = calloc(n + 1, sizeof *res)) == NULL) {
		lease_resource_list_free(v, n);
		return -ENOMEM;
	}
	k = tui_sandbox_resources(v, n, true, res);
	memset(&req, 0, sizeof req);
	req.id = id;
	rc = k == 0 ? -ENOENT : ad->attach(&req, res, k, NULL, run, err,
	    errsz);
	free(res);
	lease_resource_list_free(v, n);
	return rc;
}

/* The comm of pid (escaped on output like any process text), or "". */
static void
comm_of(pid_t pid, char *buf, size_t sz)
{
	char path[64];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return;
	if (fgets(buf, (int)sz, f) == NULL)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* The processes of run as [{pid, comm}] (at most TRACK_LIST_MAX), *n all. */
static json_t *
procs_json(const struct sbx_adapter *ad, const struct sbx_running *run,
    size_t *n)
{
	pid_t *pids = NULL;
	json_t *a;
	char comm[64];

	*n = 0;
	if (ad->procs(run, &pids, n) < 0 || (a = json_array()) == NULL) {
		free(pids);
		*n = 0;
		return NULL;
	}
	for (size_t i = 0; i < *n && i < TRACK_LIST_MAX; i++) {
		comm_of(pids[i], comm, sizeof comm);
		json_array_append_new(a, json_pack("{s:i, s:s}", "pid",
		    (int)pids[i], "comm", comm));
	}
	free(pids);
	return a;
}

static bool
expected(const struct tui_track *t, pid_t pid, char *comm, size_t sz)
{
	comm_of(pid, comm, sz);
	for (int i = 0; i < t->nexpected; i++)
		if (comm[0] != '\0' && strcmp(comm, t->expected[i]) == 0)
			return true;
	return false;
}

static bool
keep_expected(pid_t pid, void *ud)
{
	char comm[TUI_COMM_MAX + 48];

	return expected(ud, pid, comm, sizeof comm);
}

/*
 * The processes left that the profile does not expect, each sent sig
 * when sig != 0 (the adapter's signal, sparing the expected ones, judged
 * while the cgroup is frozen); *kept, when not NULL, the expected ones as
 * [{pid, comm}].
 */
static size_t
sweep(struct tui_track *t, int sig, json_t **kept)
{
	pid_t *pids = NULL;
	size_t n = 0, left = 0, k = 0;
	char comm[TUI_COMM_MAX + 48];

	if (kept != NULL)
		*kept = json_array();
	if (sig != 0 && t->nexpected > 0 && t->ad->signal_unless != NULL)
		(void)t->ad->signal_unless(t->run, sig, keep_expected, t);
	else if (sig != 0)
		(void)t->ad->signal(t->run, sig);
	if (t->ad->procs(t->run, &pids, &n) < 0)
		n = 0;
	for (size_t i = 0; i < n; i++) {
		if (t->nexpected > 0 && expected(t, pids[i], comm,
		    sizeof comm)) {
			if (kept != NULL && *kept != NULL &&
			    k++ < TRACK_LIST_MAX)
				json_array_append_new(*kept, json_pack(
				    "{s:i, s:s}", "pid", (int)pids[i], "comm",
				    comm));
			continue;
		}
		left++;
	}
	t->nkept = n - left;
	free(pids);
	return left;
}

int
tui_track_procs(const struct tui_track *t, pid_t **pids, size_t *n)
{
	*pids = NULL;
	*n = 0;
	if (t == NULL || t->run == NULL || t->ad->procs == NULL)
		return -ENOENT;
	return t->ad->procs(t->run, pids, n);
}

static size_t
count(struct tui_track *t)
{
	return sweep(t, 0, NULL);
}

void
tui_track_expect(struct tui_track *t, const char (*comm)[TUI_COMM_MAX],
    int n)
{
	for (t->nexpected = 0; t->nexpected < n &&
	    t->nexpected < TUI_DAEMON_MAX; t->nexpected++)
		memcpy(t->expected[t->nexpected], comm[t->nexpected],
		    TUI_COMM_MAX);
}

size_t
tui_track_expected_left(const struct tui_track *t)
{
	return t != NULL ? t->nkept : 0;
}

void
tui_track_provision(struct tui_ctx *c, struct lease_store *st,
    const struct sbx_adapter *ad, const char *id)
{
	struct sbx_provisioned prov;
	struct sbx_request req;
	char err[512];
	json_t *j;
	int rc;

	memset(&req, 0, sizeof req);
	req.id = id;
	req.scope = tui_ctx_scope(c);
	rc = tui_sandbox_provision(c, st, ad, &req, &prov, err, sizeof err);
	j = json_pack("{s:b, s:o}", "tracked", rc == 0, "reason", rc == 0 ?
	    json_null() : json_string(err));
	if (j != NULL && lease_receipt_append(st, id, "tracking", j,
	    NULL) < 0)
		fprintf(stderr, "corral: lease %s: receipt: %s\n", id,
		    lease_store_errmsg(st));
	json_decref(j);
	if (rc < 0)
		fprintf(stderr, "corral: lease %s runs untracked: %s\n", id,
		    err);
}

int
tui_track_plan(struct tui_ctx *c, const struct sbx_adapter *ad,
    const char *id, const struct sbx_request *req, struct tui_track **out,
    struct sbx_plan **plan)
{
	struct tui_track *t;
	char err[256];
	int rc;

	*out = NULL;
	if (tui_ctx_store(c) == NULL || ad->enter == NULL)
		return ad->plan(req, plan);
	if ((t = calloc(1, sizeof *t)) == NULL)
		return -ENOMEM;
	t->ad = ad;
	/* No tracking cgroup (none could be made): the lease's receipt says so. */
	if (attach(c->store, ad, id, &t->run, err, sizeof err) < 0) {
		free(t);
		return ad->plan(req, plan);
	}
	if ((rc = ad->enter(t->run, req, plan)) < 0) {
		tui_track_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

static void
on_close(uv_handle_t *h)
{
	struct tui_track *t = h->data;

	t->timer_closed = true;
}

static void
end(struct tui_track *t)
{
	json_decref(t->kept);
	t->left = sweep(t, 0, &t->kept);
	if (t->timer_init && !uv_is_closing((uv_handle_t *)&t->timer)) {
		uv_timer_stop(&t->timer);
		uv_close((uv_handle_t *)&t->timer, on_close);
	}
	if (t->done != NULL)
		t->done(t->ud);
	t->done = NULL;
}

static void
on_timer(uv_timer_t *tm)
{
	struct tui_track *t = tm->data;
	uint64_t dt = now_ms() - t->t0;

	if (count(t) == 0 || dt >= TRACK_TERM_MS + TRACK_KILL_MS) {
		end(t);
		return;
	}
	if (t->phase == 1 && dt >= TRACK_TERM_MS) {
		(void)sweep(t, SIGKILL, NULL);
		t->phase = 2;
	}
}

void
tui_track_end(struct tui_track *t, uv_loop_t *loop, tui_track_done_cb done,
    void *ud)
{
	t->done = done;
	t->ud = ud;
	json_decref(t->procs);
	t->procs = procs_json(t->ad, t->run, &t->found);
	if (t->found == 0 || count(t) == 0 || uv_timer_init(loop, &t->timer) < 0) {
		end(t);
		return;
	}
	t->timer_init = true;
	t->timer.data = t;
	(void)sweep(t, SIGTERM, NULL);
	t->phase = 1;
	t->t0 = now_ms();
	if (uv_timer_start(&t->timer, on_timer, TRACK_POLL_MS,
	    TRACK_POLL_MS) < 0)
		end(t);
}

json_t *
tui_track_receipt(const struct tui_track *t)
{
	return json_pack("{s:I, s:O?, s:I, s:s, s:O?}", "found",
	    (json_int_t)t->found, "processes", t->procs, "left",
	    (json_int_t)t->left, "signals", t->phase == 0 ? "none" :
	    t->phase == 1 ? "SIGTERM" : "SIGTERM, SIGKILL", "expected",
	    t->kept);
}

void
tui_track_free(struct tui_track *t)
{
	if (t == NULL)
		return;
	/* The timer is closed by end(); its callback ran on the loop. */
	if (t->timer_init && !t->timer_closed &&
	    !uv_is_closing((uv_handle_t *)&t->timer)) {
		uv_loop_t *loop = t->timer.loop;

		uv_close((uv_handle_t *)&t->timer, on_close);
		uv_run(loop, UV_RUN_NOWAIT);
	}
	if (t->ad->detach != NULL)
		t->ad->detach(t->run);
	json_decref(t->procs);
	json_decref(t->kept);
	free(t);
}

int
tui_track_count(struct tui_ctx *c, const struct lease_record *r, long *n)
{
	const struct sbx_adapter *ad;
	struct sbx_running *run = NULL;
	pid_t *pids = NULL;
	size_t k = 0;
	char err[256];
	int rc;

	*n = -1;
	if (r->adapter == NULL || strcmp(r->adapter, "trusted_local") != 0 ||
	    (ad = sbx_adapters_find(r->adapter)) == NULL ||
	    tui_ctx_store(c) == NULL)
		return 0;
	if ((rc = attach(c->store, ad, r->id, &run, err, sizeof err)) < 0)
		return rc == -ENOENT ? 0 : rc;
	if ((rc = ad->procs(run, &pids, &k)) == 0)
		*n = (long)k;
	free(pids);
	ad->detach(run);
	return rc;
}

json_t *
tui_track_list(struct tui_ctx *c, const struct lease_record *r)
{
	const struct sbx_adapter *ad;
	struct sbx_running *run = NULL;
	json_t *a;
	size_t k;
	char err[256];

	if (r->adapter == NULL || strcmp(r->adapter, "trusted_local") != 0 ||
	    (ad = sbx_adapters_find(r->adapter)) == NULL ||
	    tui_ctx_store(c) == NULL ||
	    attach(c->store, ad, r->id, &run, err, sizeof err) < 0)
		return NULL;
	a = procs_json(ad, run, &k);
	ad->detach(run);
	return a;
}
