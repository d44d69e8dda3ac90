/*
 * sbx_bwrap_host.c: the bwrap adapter's resources on the host (SPEC 8.1,
 * 9.2; SANDBOX.md 0.1, 3.6, 5.d): .provision claims a uid slot of the
 * lease's own, scoped to its state directory, and makes its cgroups under
 * that state directory's tag; .teardown removes both by exact ID (killing
 * what is left in the lease's own cgroups, never anything by uid, and
 * handing the kept workspace back to root); .list names the leases of one
 * state directory holding a cgroup or slot. Each resource goes through the
 * caller's journaling steps before and after it is made or removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"

#define RUN_DIR "/run/corral"
#define CLAIM_TRIES 16
#define KILL_WAIT_MS 5000
#define ZOMBIE_WAIT_MS 2000

void
sbx_bwrap_host_sandbox_id(unsigned slot, char *buf, size_t sz)
{
	snprintf(buf, sz, SBX_BWRAP_ID_PREFIX "%u", SBX_UID_BASE + slot);
}

int
sbx_bwrap_host_slot_of(const char *sid, unsigned *slot)
{
	unsigned long v;
	char *end;

	if (sid == NULL || strncmp(sid, SBX_BWRAP_ID_PREFIX,
	    strlen(SBX_BWRAP_ID_PREFIX)) != 0)
		return -EINVAL;
	sid += strlen(SBX_BWRAP_ID_PREFIX);
	if (*sid < '0' || *sid > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(sid, &end, 10);
	if (errno != 0 || *end != '\0' || v < SBX_UID_BASE ||
	    v >= (unsigned long)SBX_UID_BASE + SBX_UID_SLOTS)
		return -EINVAL;
	*slot = (unsigned)(v - SBX_UID_BASE);
	return 0;
}

int
sbx_bwrap_host_uid_of(const char *sid, uid_t *uid, gid_t *gid)
{
	unsigned slot;
	int rc;

	if ((rc = sbx_bwrap_host_slot_of(sid, &slot)) < 0)
		return rc;
	return sbx_uid_of_slot(slot, uid, gid);
}

static int
step(int (*fn)(void *, const char *, const char *), void *ud,
    const char *kind, const char *identity)
{
	return fn != NULL ? fn(ud, kind, identity) : 0;
}

/* ---- provision ---------------------------------------------------------- */

/* The lowest slot free to claim now (a prediction: sbx_uid_free). */
static int
free_slot(unsigned first, unsigned *slot)
{
	for (unsigned n = first; n < SBX_UID_SLOTS; n++) {
		if (sbx_uid_free(SBX_UID_DIR, n)) {
			*slot = n;
			return 0;
		}
	}
	return SBX_EUIDPOOL;
}

/*
 * The uid slot: the identity of the slot that will be claimed is planned
 * before the claim, created after; a slot taken meanwhile by another
 * state directory is released again and the next one up tried. The
 * prediction only moves up, so no identity is planned twice (the journal
 * never plans a removed one again).
 */
static int
claim_slot(const char *scope, const char *id, const struct sbx_steps *s,
    unsigned *slot, char *err, size_t errsz)
{
	char sid[64];
	unsigned want, got, next = 0;
	int rc;

	if ((rc = sbx_uid_mkdir_root(RUN_DIR, 0755)) < 0 ||
	    (rc = sbx_uid_mkdir_root(SBX_UID_DIR, 0700)) < 0) {
		snprintf(err, errsz, "%s: %s", SBX_UID_DIR, strerror(-rc));
		return rc;
	}
	for (int i = 0; i < CLAIM_TRIES; i++) {
		if ((rc = free_slot(next, &want)) < 0) {
			snprintf(err, errsz, "no free uid slot (%u in use)",
			    SBX_UID_SLOTS);
			return rc;
		}
		sbx_bwrap_host_sandbox_id(want, sid, sizeof sid);
		if ((rc = step(s->plan, s->ud, SBX_RES_SANDBOX, sid)) < 0) {
			snprintf(err, errsz, "journal: %s", strerror(-rc));
			return rc;
		}
		if ((rc = sbx_uid_claim_from(SBX_UID_DIR, scope, id, want,
		    &got)) < 0) {
			snprintf(err, errsz, "uid slot: %s", sbx_strerror(rc));
			(void)step(s->removed, s->ud, SBX_RES_SANDBOX, sid);
			return rc;
		}
		if (got == want) {
			if ((rc = step(s->created, s->ud, SBX_RES_SANDBOX,
			    sid)) < 0) {
				snprintf(err, errsz, "journal: %s",
				    strerror(-rc));
				return rc;
			}
			*slot = got;
			return 0;
		}
		/*
		 * Another state directory took the predicted slot: give
		 * back what we got (it carries our exact ID) and try again.
		 */
		if (sbx_uid_release(SBX_UID_DIR, got, scope, id) < 0) {
			/* left to the orphan inventory (.list) */
		}
		(void)step(s->removed, s->ud, SBX_RES_SANDBOX, sid);
		next = want + 1;
	}
	snprintf(err, errsz, "uid slots are contended; try again");
	return -EAGAIN;
}

/* The lease's cgroups: identity planned, created, limits written. */
static int
make_cgroups(const struct sbx_request *req, const struct sbx_steps *s,
    char *err, size_t errsz)
{
	struct sbx_cgroup *cg = NULL;
	char *text = NULL;
	int rc;

	if ((rc = sbx_cgroup_locate(req->scope, req->id, &cg)) < 0) {
		snprintf(err, errsz, "cgroups: %s", sbx_strerror(rc));
		return rc;
	}
	if ((text = sbx_cgroup_describe(cg)) == NULL) {
		sbx_cgroup_free(cg);
		snprintf(err, errsz, "out of memory");
		return -ENOMEM;
	}
	if ((rc = step(s->plan, s->ud, SBX_RES_CGROUP, text)) < 0)
		snprintf(err, errsz, "journal: %s", strerror(-rc));
	else if ((rc = sbx_cgroup_create(cg, req->limits)) < 0)
		snprintf(err, errsz, "cgroups: %s", sbx_strerror(rc));
	else if ((rc = step(s->created, s->ud, SBX_RES_CGROUP, text)) < 0)
		snprintf(err, errsz, "journal: %s", strerror(-rc));
	free(text);
	sbx_cgroup_free(cg);
	return rc;
}

/*
 * The workspace to the lease uid: with a disk limit on a bounded
 * filesystem of its own first (SPEC 8.4), then the tree chowned (teardown
 * hands it back to root).
 */
static int
hand_workspace(const struct sbx_request *r, const struct sbx_provisioned *out,
    const struct sbx_steps *s, char *err, size_t errsz)
{
	int rc;

	if (r->workspace == NULL)
		return 0;
	if (r->limits->disk > 0 && (rc = sbx__workspace_bound(r->id,
	    r->workspace, r->limits, out->uid, out->gid, s, err, errsz)) < 0)
		return rc;
	if ((rc = sbx_workspace_chown_tree(r->workspace, out->uid,
	    out->gid)) < 0)
		snprintf(err, errsz, "%s: %s", r->workspace, strerror(-rc));
	return rc;
}

int
sbx__bwrap_host_provision(const struct sbx_request *req,
    const struct sbx_steps *s, struct sbx_provisioned *out, char *err,
    size_t errsz)
{
	static const struct sbx_steps none;
	struct sbx_limits nolimits;
	struct sbx_request r;
	unsigned slot;
	int rc;

	if (req == NULL || out == NULL || req->id == NULL ||
	    !sbx_command_id_ok(req->id, strlen(req->id)))
		return -EINVAL;
	if (s == NULL)
		s = &none;
	memset(out, 0, sizeof *out);
	if (req->scope == NULL || req->scope[0] != '/') {
		snprintf(err, errsz, "lease %s: no state directory to own its "
		    "sandbox", req->id);
		return -EINVAL;
	}
	r = *req;
	if (r.limits == NULL) {
		memset(&nolimits, 0, sizeof nolimits);
		r.limits = &nolimits;
	}
	/* A uid of its own (SANDBOX.md 0.1), then the limits (3.6). */
	if ((rc = claim_slot(r.scope, r.id, s, &slot, err, errsz)) < 0)
		return rc;
	sbx_bwrap_host_sandbox_id(slot, out->sandbox_id, sizeof out->sandbox_id);
	if ((rc = sbx_uid_of_slot(slot, &out->uid, &out->gid)) < 0)
		return rc;
	out->has_uid = true;
	if ((rc = make_cgroups(&r, s, err, errsz)) < 0)
		return rc;
	return hand_workspace(&r, out, s, err, errsz);
}

/* ---- teardown ----------------------------------------------------------- */

static void
nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The workspace's top directory: root's, 0700 (never a symlink). */
static int
hand_back_top(const char *ws)
{
	int fd = open(ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC),
	    rc = 0;

	if (fd < 0)
		return -errno;
	if (fchown(fd, 0, 0) < 0 || fchmod(fd, 0700) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

/*
 * The lease's uid slot, after its cgroups are gone. Nothing is signalled
 * here: a process of the uid outside the lease's cgroups is not known to
 * be the lease's (SPEC 9.2), so the slot stays claimed (cleanup pending)
 * until the uid runs nothing. A slot that is gone, or held by another
 * lease or state directory, is not ours: left as it is.
 */
static int
release_slot(const struct sbx_request *req, const char *sid, char *err,
    size_t errsz)
{
	unsigned slot;
	uid_t uid;
	gid_t gid;
	int rc, held;

	if ((rc = sbx_bwrap_host_slot_of(sid, &slot)) < 0 ||
	    (rc = sbx_uid_of_slot(slot, &uid, &gid)) < 0) {
		snprintf(err, errsz, "lease %s: bad sandbox ID '%.64s'",
		    req->id, sid);
		return rc;
	}
	if (req->scope == NULL) {
		snprintf(err, errsz, "lease %s: no state directory to match "
		    "uid slot %u against", req->id, slot);
		return -EINVAL;
	}
	held = sbx_uid_held(SBX_UID_DIR, slot, req->scope, req->id);
	/*
	 * A process of the cgroups still exiting, or dead and not yet reaped
	 * (an orphan the host's init reaps): a bounded wait for the uid to
	 * run nothing at all, zombies included; live ones stop the release.
	 */
	for (int ms = 0, st; held == 0 && ms < KILL_WAIT_MS &&
	    (st = sbx_uid_procs(uid)) != 0 && (st == 2 ||
	    ms < ZOMBIE_WAIT_MS); ms += 10)
		nap_ms(10);
	if (held == 0 && sbx_uid_busy(uid)) {
		snprintf(err, errsz, "uid %u still runs processes outside the "
		    "lease's cgroups (not signalled); its slot stays claimed",
		    (unsigned)uid);
		return -EBUSY;
	}
	/*
	 * The workspace is kept for extraction (SPEC 9.2) but given back to
	 * root before the slot is free for another lease: its top first
	 * (root, 0700: from then on no process of that uid can reach any of
	 * it), then the whole tree as far as it goes, so nothing on the host
	 * belongs to the slot; a tree deeper than the walk goes stays
	 * unreachable behind its top.
	 */
	if (req->workspace != NULL) {
		rc = hand_back_top(req->workspace);
		if (rc == -ENOENT)
			rc = 0;
		if (rc < 0) {
			snprintf(err, errsz, "%s: cannot hand back to root: "
			    "%s", req->workspace, strerror(-rc));
			return rc;
		}
		if (sbx_workspace_chown_tree(req->workspace, 0, 0) < 0) {
			/* deeper than the walk: unreachable behind its top */
		}
	}
	/* Gone, or another's: not ours any more. */
	if (held == -ENOENT || held == -EPERM)
		return 0;
	if (held < 0 || (rc = sbx_uid_release(SBX_UID_DIR, slot, req->scope,
	    req->id)) < 0) {
		rc = held < 0 ? held : rc;
		snprintf(err, errsz, "uid slot %u: %s", slot, strerror(-rc));
		return rc;
	}
	return 0;
}

/*
 * An orphan (no journal names its resources): what this host holds of
 * lease req->id, found by exact ID, then removed as a journaled one is.
 */
static int
teardown_found(const struct sbx_request *req, const struct sbx_steps *s,
    char *err, size_t errsz)
{
	struct sbx_resource res[2];
	struct sbx_cgroup *cg = NULL;
	char sid[160], *text = NULL;
	unsigned slot;
	size_t n = 0;
	int rc;

	if (req->scope == NULL) {
		snprintf(err, errsz, "lease %s: no state directory to look "
		    "for its sandbox in", req->id);
		return -EINVAL;
	}
	if (sbx_cgroup_locate(req->scope, req->id, &cg) == 0 &&
	    (text = sbx_cgroup_describe(cg)) != NULL) {
		res[n].kind = SBX_RES_CGROUP;
		res[n++].identity = text;
	}
	if (sbx_uid_find(SBX_UID_DIR, req->scope, req->id, &slot) == 0) {
		sbx_bwrap_host_sandbox_id(slot, sid, sizeof sid);
		res[n].kind = SBX_RES_SANDBOX;
		res[n++].identity = sid;
	}
	rc = n == 0 ? 0 : sbx__bwrap_host_teardown(req, res, n, s, err, errsz);
	free(text);
	sbx_cgroup_free(cg);
	return rc;
}

int
sbx__bwrap_host_teardown(const struct sbx_request *req,
    const struct sbx_resource *res, size_t n, const struct sbx_steps *s,
    char *err, size_t errsz)
{
	static const struct sbx_steps none;
	int rc, first = 0;

	if (errsz > 0)
		err[0] = '\0';
	if (req == NULL || req->id == NULL ||
	    !sbx_command_id_ok(req->id, strlen(req->id)))
		return -EINVAL;
	if (res == NULL)
		return teardown_found(req, s, err, errsz);
	if (s == NULL)
		s = &none;
	/* The cgroups first: nothing of the lease runs after this. */
	for (size_t i = 0; i < n; i++) {
		struct sbx_cgroup *cg = NULL;

		if (strcmp(res[i].kind, SBX_RES_CGROUP) != 0)
			continue;
		/* Parsing validates: only this lease's own directories. */
		if ((rc = sbx_cgroup_parse(req->id, res[i].identity,
		    &cg)) < 0) {
			snprintf(err, errsz, "lease %s: cgroup record is not "
			    "one of its own; not touched", req->id);
		} else if ((rc = sbx_cgroup_teardown(cg, KILL_WAIT_MS)) < 0) {
			snprintf(err, errsz, "lease %s cgroups: %s", req->id,
			    strerror(-rc));
		} else if ((rc = step(s->removed, s->ud, SBX_RES_CGROUP,
		    res[i].identity)) < 0) {
			snprintf(err, errsz, "journal: %s", strerror(-rc));
		}
		sbx_cgroup_free(cg);
		if (rc < 0 && first == 0)
			first = rc;
	}
	for (size_t i = 0; i < n; i++) {
		if (strcmp(res[i].kind, SBX_RES_SANDBOX) != 0)
			continue;
		if (first < 0)
			break;	/* cgroups left: keep the uid claimed */
		rc = release_slot(req, res[i].identity, err, errsz);
		if (rc == 0 && (rc = step(s->removed, s->ud, SBX_RES_SANDBOX,
		    res[i].identity)) < 0)
			snprintf(err, errsz, "journal: %s", strerror(-rc));
		if (rc < 0 && first == 0)
			first = rc;
	}
	return first;
}

/* ---- list --------------------------------------------------------------- */

int
sbx__bwrap_host_list(const struct sbx_request *req, char ***ids, char *err,
    size_t errsz)
{
	char **cg = NULL, **slots = NULL;
	const char *scope = req != NULL ? req->scope : NULL;
	size_t k = 0;
	unsigned slot;
	int rc;

	if (ids == NULL)
		return -EINVAL;
	*ids = NULL;
	if (scope == NULL) {
		snprintf(err, errsz, "no state directory to list the "
		    "sandboxes of");
		return -EINVAL;
	}
	if ((rc = sbx_cgroup_list(scope, &cg)) < 0) {
		snprintf(err, errsz, "cgroups: %s", strerror(-rc));
		return rc;
	}
	if ((rc = sbx_uid_list(SBX_UID_DIR, scope, &slots)) < 0) {
		snprintf(err, errsz, "%s: %s", SBX_UID_DIR, strerror(-rc));
		sbx_strv_free(cg);
		return rc;
	}
	/*
	 * A cgroup whose lease holds a slot is that slot's to name; a
	 * preflight's probe cgroup is the preflight's (sbx_doctor_reclaim).
	 */
	for (size_t i = 0; cg[i] != NULL; i++) {
		if (strncmp(cg[i], SBX_DOCTOR_ID_PREFIX,
		    strlen(SBX_DOCTOR_ID_PREFIX)) == 0 ||
		    sbx_uid_find(SBX_UID_DIR, scope, cg[i], &slot) == 0) {
			free(cg[i]);
			continue;
		}
		cg[k++] = cg[i];
	}
	cg[k] = NULL;
	rc = sbx__strv_union(cg, slots, ids);
	sbx_strv_free(cg);
	sbx_strv_free(slots);
	if (rc < 0)
		snprintf(err, errsz, "out of memory");
	return rc;
}
