/*
 * sbx_test.h: helpers shared by the sandbox-adapters suites that run real
 * sandboxes: a per-lease uid slot (returned even if an earlier run died),
 * a workspace owned by it, the helper binaries, and host-side process
 * scans by uid. Static inline: each suite file includes it.
 */
#ifndef CORRAL_SBX_TEST_H
#define CORRAL_SBX_TEST_H

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"
#include "support/check_util.h"

struct st_lease {
	char *uiddir;
	char owner[64];
	unsigned slot;
	uid_t uid;
	gid_t gid;
	char *ws;	/* workspace: a 0700 directory of the lease uid */
};

/* Slots of dead earlier runs ("sbxtest-PID", PID gone) return to the pool. */
static inline void
st_sweep(const char *dir)
{
	char path[4096], *owner, *scope;
	long pid;

	for (unsigned n = 0; n < 64; n++) {
		snprintf(path, sizeof path, "%s/slot-%u/owner", dir, n);
		if ((owner = cu_read_file(path, NULL)) == NULL)
			continue;
		snprintf(path, sizeof path, "%s/slot-%u/scope", dir, n);
		scope = cu_read_file(path, NULL);
		if (scope != NULL && strncmp(owner, "sbxtest-", 8) == 0 &&
		    (pid = strtol(owner + 8, NULL, 10)) > 0 &&
		    kill((pid_t)pid, 0) < 0 && errno == ESRCH &&
		    sbx_uid_release(dir, n, scope, owner) < 0) {
			/* another run swept it first */
		}
		free(scope);
		free(owner);
	}
}

static inline void
st_lease_init(struct st_lease *l, const char *tag)
{

	memset(l, 0, sizeof *l);
	ck_assert_int_gt(asprintf(&l->uiddir, "%s", SBX_UID_DIR), 0);
	snprintf(l->owner, sizeof l->owner, "sbxtest-%d", (int)getpid());
	st_sweep(l->uiddir);
	ck_assert_int_eq(sbx_uid_claim(l->uiddir, cu_scope(), l->owner,
	    &l->slot), 0);
	ck_assert_int_eq(sbx_uid_of_slot(l->slot, &l->uid, &l->gid), 0);
	l->ws = cu_tmpdir(tag);
	ck_assert_int_eq(chown(l->ws, l->uid, l->gid), 0);
	ck_assert_int_eq(chmod(l->ws, 0700), 0);
}

static inline void
st_lease_fini(struct st_lease *l)
{
	ck_assert_int_eq(sbx_uid_release(l->uiddir, l->slot, cu_scope(),
	    l->owner), 0);
	if (l->ws != NULL) {
		cu_rmrf(l->ws);
		free(l->ws);
	}
	free(l->uiddir);
}

/* An exec-zone request for cmd in l's workspace. */
static inline void
st_exec_req(struct sbx_request *r, const struct st_lease *l, char **cmd)
{
	memset(r, 0, sizeof *r);
	r->id = l->owner;
	r->workspace = l->ws;
	r->cmd = cmd;
	r->uid = l->uid;
	r->gid = l->gid;
	r->source_date_epoch = 1700000000;
}

/* $CORRAL_SBX_INIT, and corral-sbx-probe next to it (malloc'd). */
static inline char *
st_helper(const char *name)
{
	const char *init = getenv("CORRAL_SBX_INIT");
	const char *slash;
	char *p;

	ck_assert_msg(init != NULL && *init == '/',
	    "CORRAL_SBX_INIT is not set (run through ctest)");
	if (strcmp(name, "corral-sbx-init") == 0)
		return strdup(init);
	slash = strrchr(init, '/');
	ck_assert_int_gt(asprintf(&p, "%.*s/%s", (int)(slash - init), init,
	    name), 0);
	return p;
}

/* Live (non-zombie) processes whose real uid is uid, counted from /proc. */
static inline int
st_procs_of_uid(uid_t uid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char path[64], *st;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL) {
		long pid = strtol(e->d_name, NULL, 10);
		char *u, *s;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof path, "/proc/%ld/status", pid);
		if ((st = cu_read_file(path, NULL)) == NULL)
			continue;
		u = strstr(st, "\nUid:");
		s = strstr(st, "\nState:");
		if (u != NULL && s != NULL && strtoul(u + 5, NULL, 10) == uid &&
		    strchr("ZX", s[7 + strspn(s + 7, " \t")]) == NULL)
			n++;
		free(st);
	}
	closedir(d);
	return n;
}

/* Wait (bounded) until no process of uid is left; returns how many are. */
static inline int
st_wait_no_procs(uid_t uid, int ms)
{
	uint64_t end = cu_now_ms() + (uint64_t)ms;
	int n;

	while ((n = st_procs_of_uid(uid)) > 0 && cu_now_ms() < end)
		usleep(20000);
	return n;
}

#endif
