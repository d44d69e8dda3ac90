/*
 * sbx_cgroup_kill.c: ending what runs in a lease's cgroups (SPEC 5.5,
 * 8.4, 9.2): the live pids, the graceful signal that spares bwrap (and
 * the expected daemons a caller keeps, judged while frozen), and teardown
 * by exact ID (freeze, kill, thaw, wait, rmdir).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"
#include "sandbox-adapters/sbx_cgroup_int.h"

/* ---- time --------------------------------------------------------- */

static void
nap(void)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

/* ---- processes ------------------------------------------------------- */

static int
cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int
sbx_cgroup_pids(const struct sbx_cgroup *cg, pid_t **pids, size_t *n)
{
	pid_t *v = NULL;
	size_t nv = 0, cap = 0, w = 0;
	char path[1100];

	if (cg == NULL || pids == NULL || n == NULL)
		return -EINVAL;
	for (int i = 0; i < cg->n; i++) {
		FILE *f;
		long pid;

		snprintf(path, sizeof path, "%s/cgroup.procs", cg->c[i].dir);
		if ((f = fopen(path, "re")) == NULL) {
			if (errno == ENOENT)
				continue;
			free(v);
			return -errno;
		}
		while (fscanf(f, "%ld", &pid) == 1) {
			if (nv == cap) {
				pid_t *nvp;

				cap = cap ? cap * 2 : 64;
				if ((nvp = realloc(v, cap * sizeof *v)) ==
				    NULL) {
					fclose(f);
					free(v);
					return -ENOMEM;
				}
				v = nvp;
			}
			v[nv++] = (pid_t)pid;
		}
		fclose(f);
	}
	if (nv > 0)
		qsort(v, nv, sizeof *v, cmp_pid);
	for (size_t i = 0; i < nv; i++) {
		if (w == 0 || v[w - 1] != v[i])
			v[w++] = v[i];
	}
	*pids = v;
	*n = w;
	return 0;
}

/*
 * bwrap itself (the outer one in our pid namespace, the sandbox's pid 1)
 * and corral-sbx-init (the sandbox's pid 2, named after SBX_BWRAP_INIT)
 * are spared the graceful signal: killing any of them ends everything at
 * once.
 */
static bool
spared(pid_t pid)
{
	char path[64], buf[4096], *ns, *nl, *last = NULL;
	long levels = 0, inner;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if (sbx__read_file(path, buf, sizeof buf) <= 0 ||
	    (ns = strstr(buf, "\nNSpid:")) == NULL)
		return true;	/* gone, or unknowable: leave it to SIGKILL */
	ns += 7;
	if ((nl = strchr(ns, '\n')) != NULL)
		*nl = '\0';
	for (char *t = strtok(ns, " \t"); t != NULL; t = strtok(NULL, " \t")) {
		last = t;
		levels++;
	}
	if (levels <= 1 || last == NULL)
		return true;
	inner = strtol(last, NULL, 10);
	if (inner == 1)
		return true;
	/* The helper bwrap's pid 1 started first: SBX_BWRAP_INIT's name. */
	if (inner == 2) {
		const char *base = strrchr(SBX_BWRAP_INIT, '/') + 1;

		snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
		if (sbx__read_file(path, buf, sizeof buf) > 0 &&
		    strncmp(buf, base, strlen(base)) == 0 &&
		    buf[strlen(base)] == '\n')
			return true;
	}
	return false;
}

static int freeze(const struct sbx_cgroup *, bool on,
    unsigned long long deadline);

/* Is this process one of pids (n, sorted)? */
static bool
has_self(const pid_t *pids, size_t n)
{
	pid_t me = getpid();

	for (size_t i = 0; i < n; i++) {
		if (pids[i] == me)
			return true;
	}
	return false;
}

static int signal_all(const struct sbx_cgroup *, int sig,
    bool (*keep)(pid_t, void *), void *ud);

static bool
keep_spared(pid_t pid, void *ud)
{
	(void)ud;
	return spared(pid);
}

int
sbx_cgroup_signal(const struct sbx_cgroup *cg, int sig)
{
	return signal_all(cg, sig, keep_spared, NULL);
}

int
sbx_cgroup_kill(const struct sbx_cgroup *cg, int sig)
{
	return signal_all(cg, sig, NULL, NULL);
}

int
sbx_cgroup_kill_unless(const struct sbx_cgroup *cg, int sig,
    bool (*keep)(pid_t, void *), void *ud)
{
	return signal_all(cg, sig, keep, ud);
}

static int
signal_all(const struct sbx_cgroup *cg, int sig, bool (*keep)(pid_t, void *),
    void *ud)
{
	pid_t *pids = NULL;
	size_t n = 0;
	bool frozen = false;
	int rc, count = 0;

	if (cg == NULL || sig <= 0 || sig >= NSIG)
		return -EINVAL;
	if ((rc = sbx_cgroup_pids(cg, &pids, &n)) < 0)
		return rc;
	/*
	 * Frozen while signalled (never with ourselves inside): no process
	 * of the lease can exit and have its pid reused by another's between
	 * the read and the kill. The signal is delivered at the thaw.
	 */
	if (n > 0 && !has_self(pids, n) && freeze(cg, true, sbx__now_ms() +
	    1000) == 0) {
		frozen = true;
		free(pids);
		pids = NULL;
		if ((rc = sbx_cgroup_pids(cg, &pids, &n)) < 0) {
			(void)freeze(cg, false, 0);
			return rc;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (pids[i] <= 1 || pids[i] == getpid() ||
		    (keep != NULL && keep(pids[i], ud)))
			continue;
		if (kill(pids[i], sig) == 0)
			count++;
	}
	if (frozen)
		(void)freeze(cg, false, 0);
	free(pids);
	return count;
}

/* ---- teardown -------------------------------------------------------- */

static bool
any_dir(const struct sbx_cgroup *cg)
{
	struct stat sb;

	for (int i = 0; i < cg->n; i++) {
		if (stat(cg->c[i].dir, &sb) == 0)
			return true;
	}
	return false;
}

static int
freeze(const struct sbx_cgroup *cg, bool on, unsigned long long deadline)
{
	const char *d;
	char path[1100], buf[64];

	if (cg->mode == SBX_CGROUP_V2) {
		d = cg->c[0].dir;
		if (!sbx__cgroup_exists_at(d, "cgroup.freeze"))
			return 0;
		return sbx__cgroup_write_at(d, "cgroup.freeze", on ? "1" : "0");
	}
	if ((d = sbx__cgroup_dir_of(cg, "freezer")) == NULL ||
	    !sbx__cgroup_exists_at(d, "freezer.state"))
		return 0;
	if (sbx__cgroup_write_at(d, "freezer.state",
	    on ? "FROZEN" : "THAWED") < 0)
		return -errno;
	snprintf(path, sizeof path, "%s/freezer.state", d);
	/* FREEZING until every task stopped: wait, bounded. */
	while (on && sbx__read_file(path, buf, sizeof buf) > 0 &&
	    strncmp(buf, "FROZEN", 6) != 0 && sbx__now_ms() < deadline)
		nap();
	return 0;
}

static void
kill_all(const struct sbx_cgroup *cg)
{
	pid_t *pids = NULL;
	size_t n = 0;

	if (cg->mode == SBX_CGROUP_V2 && sbx__cgroup_exists_at(cg->c[0].dir,
	    "cgroup.kill")) {
		if (sbx__cgroup_write_at(cg->c[0].dir, "cgroup.kill", "1") == 0)
			return;
	}
	if (sbx_cgroup_pids(cg, &pids, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		if (pids[i] > 1 && pids[i] != getpid())
			kill(pids[i], SIGKILL);
	}
	free(pids);
}

int
sbx_cgroup_teardown(const struct sbx_cgroup *cg, unsigned timeout_ms)
{
	unsigned long long deadline = sbx__now_ms() + timeout_ms;
	pid_t *pids = NULL;
	size_t n = 0;
	int rc;

	if (cg == NULL || !sbx__cgroup_id_ok(cg->id))
		return -EINVAL;
	for (int i = 0; i < cg->n; i++) {
		if (!sbx__cgroup_dir_ok(cg->c[i].dir, cg->id))
			return -EINVAL;
	}
	if (!any_dir(cg)) {
		/* A teardown killed after its rmdir: the parent still. */
		for (int i = 0; i < cg->n; i++)
			sbx__cgroup_drop_parent(cg->c[i].dir);
		return 0;
	}
	for (;;) {
		/* Frozen, no pid can exit and be reused under the kill. */
		freeze(cg, true, deadline);
		kill_all(cg);
		freeze(cg, false, deadline);
		if ((rc = sbx_cgroup_pids(cg, &pids, &n)) < 0)
			return rc;
		free(pids);
		pids = NULL;
		if (n == 0)
			break;
		if (sbx__now_ms() >= deadline)
			return -EBUSY;
		nap();
	}
	for (;;) {
		bool busy = false;

		for (int i = 0; i < cg->n; i++) {
			if (rmdir(cg->c[i].dir) < 0 && errno != ENOENT) {
				if (errno != EBUSY)
					return -errno;
				busy = true;
			}
		}
		if (!busy) {
			for (int i = 0; i < cg->n; i++)
				sbx__cgroup_drop_parent(cg->c[i].dir);
			return 0;
		}
		if (sbx__now_ms() >= deadline)
			return -EBUSY;
		nap();
	}
}
