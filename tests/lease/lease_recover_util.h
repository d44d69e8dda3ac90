/*
 * lease_recover_util.h: fixtures shared by test_recover.c and
 * test_stress.c: a state directory with a journal and a repository, a
 * child that provisions a lease (and may die at a fault point), and the
 * invariant check run after every crash: one lease per ID, contiguous
 * transitions ending in the lease's state, and nothing on disk (worktree,
 * lease directory, corral/ branch) without a live journal row.
 */
#ifndef CORRAL_LEASE_RECOVER_UTIL_H
#define CORRAL_LEASE_RECOVER_UTIL_H

#include <dirent.h>
#include <jansson.h>

#include "lease_test.h"

struct rt {
	char *tmp;
	char *state;
	char *db;
	char *repo;
	char c[3][41];
	struct lease_store *s;
};

static inline void
rt_setup(struct rt *t, const char *tag)
{
	ck_assert_int_ge(lease_git_init(), 0);
	t->tmp = cu_tmpdir(tag);
	t->state = lt_fmt("%s/%s", t->tmp, "state");
	ck_assert_int_eq(mkdir(t->state, 0700), 0);
	t->db = lt_fmt("%s/%s", t->state, "corral.db");
	t->repo = lt_make_repo(t->tmp, t->c);
	ck_assert_int_eq(lease_store_open(&t->s, t->db), 0);
}

static inline void
rt_teardown(struct rt *t)
{
	lease_store_close(t->s);
	cu_rmrf(t->tmp);
	free(t->tmp);
	free(t->state);
	free(t->db);
	free(t->repo);
	lease_git_shutdown();
}

static inline void
rt_insert(struct rt *t, char id[LEASE_ID_LEN + 1])
{
	char *const cmd[] = { "agent", NULL };
	struct lease_spec sp = { .mode = LEASE_MODE_SANDBOXED,
		.adapter = "bwrap", .isolation = "bwrap", .repo = t->repo,
		.cmd = cmd };

	ck_assert_int_eq(lease_record_insert(t->s, &sp, id), 0);
}

/* insert + provision under the lock; returns provision's code. */
static inline int
rt_provision(struct rt *t, const char *base, char id[LEASE_ID_LEN + 1])
{
	struct lease_lock *lk;
	int rc;

	ck_assert_int_eq(lease_lock_acquire(t->state, 5000, &lk), 0);
	rt_insert(t, id);
	rc = lease_provision_git(t->s, lk, t->state, id, t->repo, base,
	    NULL);
	lease_lock_release(lk);
	return rc;
}

/*
 * In a child: open the journal, insert and provision one lease with
 * CORRAL_FAULT=point, then (if still alive) run `then` on it. The child's
 * exit code is returned: 137 when the fault point fired.
 */
typedef void (*rt_then_fn)(struct lease_store *, struct lease_lock *,
    const char *state, const char *id);

static inline int
rt_child(struct rt *t, const char *point, bool provision, const char *id_in,
    rt_then_fn then)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct lease_store *cs;
		struct lease_lock *lk;
		char id[LEASE_ID_LEN + 1];
		struct lease_spec sp = { .mode = LEASE_MODE_SANDBOXED,
			.repo = t->repo };

		if (point != NULL)
			setenv("CORRAL_FAULT", point, 1);
		if (lease_store_open(&cs, t->db) != 0)
			_exit(2);
		if (lease_lock_acquire(t->state, 5000, &lk) != 0)
			_exit(3);
		if (provision) {
			if (lease_record_insert(cs, &sp, id) != 0)
				_exit(4);
			if (lease_provision_git(cs, lk, t->state, id, t->repo,
			    NULL, NULL) != 0)
				_exit(5);
		} else {
			memcpy(id, id_in, sizeof id);
		}
		if (then != NULL)
			then(cs, lk, t->state, id);
		lease_lock_release(lk);
		lease_store_close(cs);
		_exit(0);
	}
	return lt_wait(pid);
}

static inline enum lease_holder_status
rt_dead(const struct lease_record *r, void *ud)
{
	(void)r;
	(void)ud;
	return LEASE_HOLDER_DEAD;
}

static inline enum lease_holder_status
rt_alive(const struct lease_record *r, void *ud)
{
	(void)r;
	(void)ud;
	return LEASE_HOLDER_ALIVE;
}

static inline struct lease_report *
rt_reconcile(struct rt *t, lease_holder_probe_cb probe, unsigned flags)
{
	struct lease_report *rep = NULL;
	struct lease_lock *lk;
	int rc;

	ck_assert_int_eq(lease_lock_acquire(t->state, 5000, &lk), 0);
	rc = lease_recover_reconcile(t->s, lk, t->state, probe, NULL, flags,
	    &rep);
	ck_assert_msg(rc == 0, "reconcile: %d %s", rc,
	    lease_store_errmsg(t->s));
	lease_lock_release(lk);
	return rep;
}

static inline size_t
rt_count(const struct lease_report *rep, enum lease_finding_kind k)
{
	size_t i, n = 0;

	for (i = 0; i < rep->n; i++)
		if (rep->v[i].kind == k)
			n++;
	return n;
}

/* The journal's non-removed resource of kind for lease id, or NULL. */
static inline bool
rt_has_row(struct lease_store *s, const char *id, enum lease_resource k)
{
	struct lease_resource_row *v;
	size_t n, i;
	bool found = false;

	if (!lease_id_valid(id) || lease_resource_list(s, id, &v, &n) != 0)
		return false;
	for (i = 0; i < n; i++)
		if (v[i].kind == k && v[i].state != LEASE_RS_REMOVED)
			found = true;
	lease_resource_list_free(v, n);
	return found;
}

struct rt_ctx {
	struct lease_store *s;
	int bad;
};

static inline int
rt_branch_cb(const char *name, void *ud)
{
	struct rt_ctx *c = ud;

	if (!rt_has_row(c->s, name, LEASE_RES_BRANCH)) {
		fprintf(stderr, "branch corral/%s without a lease row\n", name);
		c->bad++;
	}
	return 0;
}

static inline int
rt_scan(struct lease_store *s, const char *state, const char *sub,
    enum lease_resource k)
{
	char *dir = lt_fmt("%s/%s", state, sub);
	struct dirent *e;
	DIR *d = opendir(dir);
	int bad = 0;

	free(dir);
	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (!rt_has_row(s, e->d_name, k)) {
			fprintf(stderr, "%s/%s without a lease row\n", sub,
			    e->d_name);
			bad++;
		}
		if (k == LEASE_RES_LEASE_DIR) {
			char *ld = lt_fmt("%s/leases/%s", state, e->d_name);
			char *w = lt_fmt("%s/%s", ld, "work");

			if (access(w, F_OK) == 0 &&
			    !rt_has_row(s, e->d_name, LEASE_RES_WORKSPACE)) {
				fprintf(stderr, "%s without a lease row\n", w);
				bad++;
			}
			free(ld);
			free(w);
		}
	}
	closedir(d);
	return bad;
}

struct rt_seq {
	int64_t n;
	int64_t max;
	char last_lease_to[32];
};

static inline int
rt_seq_cb(const struct lease_event_row *ev, void *ud)
{
	struct rt_seq *q = ud;

	q->n++;
	if (ev->seq > q->max)
		q->max = ev->seq;
	if (strcmp(ev->kind, "lease") == 0)
		snprintf(q->last_lease_to, sizeof q->last_lease_to, "%s",
		    ev->to);
	return 0;
}

/* The crash invariants (SPEC 9.2). Returns the number of leases. */
static inline size_t
rt_invariants(struct rt *t)
{
	struct lease_record *v;
	struct lease_git *g;
	struct rt_ctx c = { t->s, 0 };
	size_t n, i;

	ck_assert_int_eq(lease_record_list(t->s, LEASE_LIST_ALL, &v, &n), 0);
	for (i = 0; i < n; i++) {
		struct rt_seq q = { 0, 0, "" };

		/* no duplicate IDs (list is sorted) */
		if (i > 0)
			ck_assert_str_ne(v[i - 1].id, v[i].id);
		/* no lost transition: contiguous, ending in the state */
		ck_assert_int_eq(lease_event_list(t->s, v[i].id, 0, 0,
		    rt_seq_cb, &q, NULL), 0);
		ck_assert_int_eq(q.n, q.max);
		ck_assert_str_eq(q.last_lease_to,
		    lease_fsm_state_name(v[i].state));
		ck_assert_int_eq(lease_receipt_verify(t->s, v[i].id, NULL,
		    NULL), 0);
	}
	lease_record_list_free(v, n);
	/* nothing on disk without a live journal row */
	c.bad += rt_scan(t->s, t->state, "worktrees", LEASE_RES_WORKTREE);
	c.bad += rt_scan(t->s, t->state, "leases", LEASE_RES_LEASE_DIR);
	ck_assert_int_eq(lease_git_open(&g, t->repo), 0);
	ck_assert_int_eq(lease_git_branches(g, rt_branch_cb, &c), 0);
	lease_git_free(g);
	ck_assert_int_eq(c.bad, 0);
	return n;
}

#endif
