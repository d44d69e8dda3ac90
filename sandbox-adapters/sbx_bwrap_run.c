/*
 * sbx_bwrap_run.c: a bwrap lease's sandbox as its holder runs it (SPEC
 * 6.6, 8.3, 8.4; SANDBOX.md 3.6, 5): .attach takes the uid slot and the
 * cgroups back from what the journal recorded and moves the holder into
 * its private runtime (a mount namespace of its own with the workspace,
 * corral-sbx-init and the policy's read-only sources at fixed paths),
 * .enter builds the agent's plan there and joins it to the cgroups,
 * .signal, .usage and .stop reach the lease's processes through its
 * cgroups, .detach lets go. The resources themselves are made and removed
 * by sbx_bwrap_host.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"

/* Machine-wide runtime directory (root, 0755): it holds SBX_UID_DIR. */
#define RUN_DIR "/run/corral"
#define RT_TMPFS_OPTS "mode=0711,size=32m,nr_inodes=1024"
#define RT_WORK SBX_BWRAP_RT_DIR "/work"
#define RT_INIT SBX_BWRAP_RT_DIR "/init"
#define RT_MAX_RO SBX__RUN_MAX_RO

/* ---- the holder's private runtime ---------------------------------------- */

static int
copy_file(const char *from, const char *to, mode_t mode, char sha[65])
{
	unsigned char buf[65536];
	int in, out, rc = 0;
	ssize_t r, w;

	if ((in = open(from, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
	    mode);
	if (out < 0) {
		rc = -errno;
		close(in);
		return rc;
	}
	while ((r = read(in, buf, sizeof buf)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -errno;
			break;
		}
		for (ssize_t off = 0; off < r; off += w) {
			w = write(out, buf + off, (size_t)(r - off));
			if (w < 0 && errno == EINTR) {
				w = 0;
				continue;
			}
			if (w <= 0) {
				rc = w < 0 ? -errno : -EIO;
				break;
			}
		}
		if (rc < 0)
			break;
	}
	close(in);
	if (rc == 0 && fchmod(out, mode) < 0)
		rc = -errno;
	if (close(out) < 0 && rc == 0)
		rc = -errno;
	/* Hash what the sandbox will run: the copy, not the source. */
	if (rc == 0 && sha != NULL) {
		sha[0] = '\0';
		rc = sbx_sha256_file(to, sha);
	}
	return rc;
}

/* An empty file or directory to mount src on, matching its type. */
static int
mount_point_for(const char *src, const char *dst)
{
	struct stat sb;
	int fd;

	if (stat(src, &sb) < 0)
		return -errno;
	if (S_ISDIR(sb.st_mode))
		return mkdir(dst, 0755) < 0 ? -errno : 0;
	if ((fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) <
	    0)
		return -errno;
	close(fd);
	return 0;
}

/*
 * bwrap runs as the lease uid and resolves its bind sources as that uid,
 * but the state directory and the lease directory stay 0700 root (under
 * /root by default). So the holder moves into a private mount namespace
 * (slave of the host's: nothing propagates back), mounts a small tmpfs on
 * SBX_BWRAP_RT_DIR, bind-mounts the workspace at RT_WORK and copies
 * corral-sbx-init to RT_INIT (hashing what it copied). Extra read-only
 * sources are bound at rt/ro/<n>. Nothing is widened on the host and
 * nothing is left behind: the namespace dies with the holder and its
 * sandbox.
 */
static int
runtime_setup(struct sbx_running *r, const struct sbx_request *req,
    char init_sha[65], char *err, size_t errsz)
{
	char path[PATH_MAX];
	int rc;

	if ((rc = sbx_uid_mkdir_root(RUN_DIR, 0755)) < 0 ||
	    (rc = sbx_uid_mkdir_root(SBX_BWRAP_RT_DIR, 0755)) < 0) {
		snprintf(err, errsz, "%s: %s", SBX_BWRAP_RT_DIR,
		    strerror(-rc));
		return rc;
	}
	if (unshare(CLONE_NEWNS) < 0) {
		snprintf(err, errsz, "private mount namespace: %s",
		    strerror(errno));
		return -errno;
	}
	/* Host mounts still reach us; ours never reach the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0 ||
	    mount("corral-rt", SBX_BWRAP_RT_DIR, "tmpfs", MS_NOSUID | MS_NODEV,
	    RT_TMPFS_OPTS) < 0) {
		rc = -errno;
		snprintf(err, errsz, "runtime tmpfs on %s: %s",
		    SBX_BWRAP_RT_DIR, strerror(errno));
		return rc;
	}
	if (mkdir(RT_WORK, 0755) < 0 ||
	    mount(req->workspace, RT_WORK, NULL, MS_BIND | MS_REC,
	    NULL) < 0) {
		rc = -errno;
		snprintf(err, errsz, "bind %s: %s", req->workspace,
		    strerror(errno));
		return rc;
	}
	if ((rc = copy_file(req->init_path, RT_INIT, 0755, init_sha)) < 0) {
		snprintf(err, errsz, "%s: %s", req->init_path, strerror(-rc));
		return rc;
	}
	if (req->nro_binds > 0 && mkdir(SBX_BWRAP_RT_DIR "/ro", 0711) < 0) {
		rc = -errno;
		snprintf(err, errsz, "%s/ro: %s", SBX_BWRAP_RT_DIR,
		    strerror(errno));
		return rc;
	}
	for (int i = 0; i < req->nro_binds; i++) {
		const char *src = req->ro_binds[i].src;

		snprintf(path, sizeof path, "%s/ro/%d", SBX_BWRAP_RT_DIR, i);
		if ((rc = mount_point_for(src, path)) < 0 ||
		    (rc = mount(src, path, NULL, MS_BIND | MS_REC,
		    NULL) < 0 ? -errno : 0) < 0) {
			snprintf(err, errsz, "bind %s: %s", src,
			    strerror(-rc));
			return rc;
		}
		if ((r->ro[i] = strdup(path)) == NULL) {
			snprintf(err, errsz, "out of memory");
			return -ENOMEM;
		}
		r->mnt[i].src = r->ro[i];
		r->mnt[i].dst = req->ro_binds[i].dst;
		r->nro = i + 1;
	}
	return 0;
}

/* ---- the adapter's members ------------------------------------------------ */

/* The uid slot and the first cgroup record among the journal's resources. */
static int
from_resources(struct sbx_running *r, const char *id,
    const struct sbx_resource *res, size_t n, struct sbx_attached *info,
    char *err, size_t errsz)
{
	const char *sid = NULL;
	int rc;

	for (size_t i = 0; i < n; i++) {
		if (strcmp(res[i].kind, SBX_RES_SANDBOX) == 0) {
			sid = res[i].identity;
		} else if (strcmp(res[i].kind, SBX_RES_CGROUP) == 0 &&
		    r->cg == NULL &&
		    (rc = sbx_cgroup_parse(id, res[i].identity, &r->cg)) < 0) {
			snprintf(err, errsz, "cgroup record: %s",
			    sbx_strerror(rc));
			return rc;
		}
	}
	if (sid == NULL || sbx_bwrap_host_uid_of(sid, &r->uid, &r->gid) < 0 ||
	    r->cg == NULL) {
		snprintf(err, errsz, "the journal names no uid slot or cgroup "
		    "for this lease");
		return -EINVAL;
	}
	snprintf(info->sandbox_id, sizeof info->sandbox_id, "%s", sid);
	info->uid = r->uid;
	info->gid = r->gid;
	return 0;
}

int
sbx__bwrap_run_attach(const struct sbx_request *req,
    const struct sbx_resource *res, size_t n, struct sbx_attached *info,
    struct sbx_running **out, char *err, size_t errsz)
{
	struct sbx_running *r;
	int rc;

	*out = NULL;
	if (errsz > 0)
		err[0] = '\0';
	memset(info, 0, sizeof *info);
	if (req == NULL || req->id == NULL || req->workspace == NULL ||
	    req->init_path == NULL || req->nro_binds < 0 ||
	    (req->nro_binds > 0 && req->ro_binds == NULL) ||
	    (res == NULL && n > 0)) {
		snprintf(err, errsz, "bad request");
		return -EINVAL;
	}
	if (req->nro_binds > RT_MAX_RO) {
		snprintf(err, errsz, "too many read-only mounts");
		return -E2BIG;
	}
	if ((r = calloc(1, sizeof *r)) == NULL) {
		snprintf(err, errsz, "out of memory");
		return -ENOMEM;
	}
	if ((rc = from_resources(r, req->id, res, n, info, err, errsz)) < 0 ||
	    (rc = runtime_setup(r, req, info->init_sha256, err, errsz)) < 0) {
		sbx__bwrap_run_detach(r);
		return rc;
	}
	*out = r;
	return 0;
}

/* A plan just built for r (rc its code), joined to r's cgroups. */
static int
joined(const struct sbx_running *r, int rc, struct sbx_plan **out)
{
	if (rc < 0)
		return rc;
	if ((rc = sbx_cgroup_plan(r->cg, *out)) < 0) {
		sbx_plan_free(*out);
		*out = NULL;
	}
	return rc;
}

int
sbx__bwrap_run_enter(const struct sbx_running *r,
    const struct sbx_request *req, struct sbx_plan **out)
{
	struct sbx_request in;

	*out = NULL;
	if (r == NULL || req == NULL)
		return -EINVAL;
	in = *req;
	in.lease_dir = NULL;
	in.workspace = RT_WORK;
	in.init_path = RT_INIT;
	in.uid = r->uid;
	in.gid = r->gid;
	in.ro_binds = r->nro > 0 ? r->mnt : NULL;
	in.nro_binds = r->nro;
	return joined(r, sbx_adapter_bwrap.plan(&in, out), out);
}

int
sbx__bwrap_run_signal(const struct sbx_running *r, int sig)
{
	/* Spares bwrap and corral-sbx-init: the agent exits on its own. */
	return r != NULL ? sbx_cgroup_signal(r->cg, sig) : -EINVAL;
}

int
sbx__bwrap_run_usage(const struct sbx_running *r, struct sbx_usage *u)
{
	struct sbx_cgroup_facts f;
	int rc;

	memset(u, 0, sizeof *u);
	if (r == NULL)
		return -EINVAL;
	if ((rc = sbx_cgroup_facts(r->cg, &f)) < 0)
		return rc;
	u->mem_max_usage = f.mem_max_usage;
	u->oom_kills = f.oom_kills;
	u->pids_max = f.pids_max;
	u->pids_current = f.pids_current;
	u->cpu_usage_ns = f.cpu_usage_ns;
	u->cpu_throttled = f.cpu_throttled;
	u->limit = sbx_cgroup_limit_hit(&f);
	return 0;
}

int
sbx__bwrap_run_stop(const struct sbx_running *r, unsigned timeout_ms)
{
	/* Atomic: freeze, kill, thaw (SANDBOX.md 3.6). */
	return r != NULL ? sbx_cgroup_teardown(r->cg, timeout_ms) : -EINVAL;
}

void
sbx__bwrap_run_detach(struct sbx_running *r)
{
	if (r == NULL)
		return;
	sbx_cgroup_free(r->cg);
	for (int i = 0; i < r->nro; i++)
		free(r->ro[i]);
	free(r);
}

/* ---- a check run's exec zone ---------------------------------------------- */

/* The caller's steps, and what they saw made: the run's cgroups and uid. */
struct xsteps {
	const struct sbx_steps *up;
	struct sbx_running *r;
	const char *id;
	bool has_uid;
};

static int
xs_plan(void *ud, const char *kind, const char *ident)
{
	struct xsteps *x = ud;

	return x->up->plan != NULL ? x->up->plan(x->up->ud, kind, ident) : 0;
}

static int
xs_created(void *ud, const char *kind, const char *ident)
{
	struct xsteps *x = ud;
	int rc;

	if (x->up->created != NULL &&
	    (rc = x->up->created(x->up->ud, kind, ident)) < 0)
		return rc;
	if (strcmp(kind, SBX_RES_CGROUP) == 0 && x->r->cg == NULL)
		return sbx_cgroup_parse(x->id, ident, &x->r->cg);
	if (strcmp(kind, SBX_RES_SANDBOX) == 0 &&
	    sbx_bwrap_host_uid_of(ident, &x->r->uid, &x->r->gid) == 0)
		x->has_uid = true;
	return 0;
}

static int
xs_removed(void *ud, const char *kind, const char *ident)
{
	struct xsteps *x = ud;

	return x->up->removed != NULL ? x->up->removed(x->up->ud, kind,
	    ident) : 0;
}

static void
xs_point(void *ud, const char *step, const char *when)
{
	struct xsteps *x = ud;

	if (x->up->point != NULL)
		x->up->point(x->up->ud, step, when);
}

int
sbx__bwrap_run_exec(const struct sbx_request *req, const struct sbx_steps *s,
    struct sbx_running **out, char *err, size_t errsz)
{
	static const struct sbx_steps none;
	struct sbx_provisioned prov;
	struct sbx_steps xs;
	struct xsteps x;
	struct sbx_running *r;
	int rc;

	*out = NULL;
	if (errsz > 0)
		err[0] = '\0';
	if (req == NULL || req->id == NULL || req->workspace == NULL ||
	    req->limits == NULL || req->limits->disk == 0) {
		snprintf(err, errsz, "bad request (a bounded copy is needed)");
		return -EINVAL;
	}
	if ((r = calloc(1, sizeof *r)) == NULL) {
		snprintf(err, errsz, "out of memory");
		return -ENOMEM;
	}
	x = (struct xsteps){ s != NULL ? s : &none, r, req->id, false };
	xs = (struct sbx_steps){ xs_plan, xs_created, xs_removed, xs_point,
		&x };
	/* uid slot, cgroups, the copy moved into its bounded image */
	rc = sbx_adapter_bwrap.provision(req, &xs, &prov, err, errsz);
	if (rc == 0 && (r->cg == NULL || !x.has_uid)) {
		snprintf(err, errsz, "no cgroup or uid made for %s", req->id);
		rc = -EINVAL;
	}
	if (rc < 0) {
		sbx__bwrap_run_detach(r);
		return rc;
	}
	*out = r;
	return 0;
}

int
sbx__bwrap_run_exec_plan(const struct sbx_running *r,
    const struct sbx_request *req, struct sbx_plan **out)
{
	struct sbx_request in;

	*out = NULL;
	if (r == NULL || req == NULL)
		return -EINVAL;
	in = *req;
	in.uid = r->uid;
	in.gid = r->gid;
	in.workspace_private = true;
	return joined(r, sbx_bwrap_exec_plan(&in, out), out);
}
