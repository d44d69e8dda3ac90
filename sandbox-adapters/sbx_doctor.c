/*
 * sbx_doctor.c: the preflight (SPEC 8.7; SANDBOX.md 5.c), run by `corral
 * doctor` and before every lease. It fails closed with named halt reasons:
 * the policy (credential paths, unrestricted network), bwrap itself, the
 * egress allowlist, then the checks that run sandboxes (sbx_doctor_probe.c:
 * user namespaces, the seccomp filter in the real agent zone, the exec
 * zone's network, cgroups). It also gathers the facts every receipt
 * carries and keeps the `doctor --adversarial` marker.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"
#include "sandbox-adapters/sbx_int.h"

#ifndef CORRAL_VERSION
#define CORRAL_VERSION "0"
#endif
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif

/* Inside a home: what must never be mounted into a zone (SPEC 8.3). */
static const char *const home_creds[] = { ".ssh", ".claude", ".claude.json",
	".config", ".aws", ".gnupg", ".docker", ".kube", ".netrc",
	".git-credentials", ".npmrc", ".pypirc", ".cargo/credentials",
	".cargo/credentials.toml", ".local/share/keyrings", ".azure",
	".password-store", ".vault-token" };

/* Host-wide: sockets and secrets of the machine itself. */
static const char *const host_creds[] = { "/root", "/run/docker.sock",
	"/var/run/docker.sock", "/run/containerd", "/run/podman", "/run/user",
	"/run/dbus", "/var/run/dbus", "/etc/shadow", "/etc/gshadow",
	"/etc/ssh", "/etc/sudoers", "/var/lib/docker" };

/* ---- report helpers --------------------------------------------------- */

void
sbx__doctor_check(struct sbx_doctor_report *r, const char *name, bool ok,
    int halt,
    const char *fmt, ...)
{
	struct sbx_doctor_check *c;
	va_list ap;

	if (r->nchecks >= SBX_DOCTOR_MAX_CHECKS)
		return;
	c = &r->checks[r->nchecks++];
	snprintf(c->name, sizeof c->name, "%s", name);
	c->ok = ok;
	c->halt = ok ? SBX_HALT_NONE : halt;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof c->detail, fmt, ap);
	va_end(ap);
	if (!ok && r->halt == SBX_HALT_NONE) {
		r->halt = halt;
		snprintf(r->detail, sizeof r->detail, "%s: %s", name,
		    c->detail);
	}
}


/* ---- credential paths and the policy (pure) -------------------------- */

static int
vec_add(char ***v, size_t *n, const char *a, const char *b)
{
	char **nv = realloc(*v, (*n + 2) * sizeof *nv), *s;

	if (nv == NULL)
		return -ENOMEM;
	*v = nv;
	if (asprintf(&s, "%s%s%s", a, b != NULL ? "/" : "", b != NULL ? b :
	    "") < 0)
		return -ENOMEM;
	nv[(*n)++] = s;
	nv[*n] = NULL;
	return 0;
}

int
sbx_doctor_credential_paths(char *const *homes, const char *ssh_auth_sock,
    char ***out)
{
	char **v = NULL, **hv = NULL;
	size_t n = 0, nh = 0;
	const char *home;
	int rc = -ENOMEM;

	if (out == NULL)
		return -EINVAL;
	*out = NULL;
	if ((v = calloc(1, sizeof *v)) == NULL)
		return -ENOMEM;
	if (homes == NULL) {
		DIR *d;
		struct dirent *e;

		/* Every home on the host, root's and the caller's. */
		if ((home = getenv("HOME")) != NULL && home[0] == '/' &&
		    vec_add(&hv, &nh, home, NULL) < 0)
			goto out;
		if (vec_add(&hv, &nh, "/root", NULL) < 0)
			goto out;
		if ((d = opendir("/home")) != NULL) {
			while ((e = readdir(d)) != NULL) {
				if (e->d_name[0] == '.')
					continue;
				if (vec_add(&hv, &nh, "/home", e->d_name) < 0) {
					closedir(d);
					goto out;
				}
			}
			closedir(d);
		}
		homes = hv;
	}
	for (size_t i = 0; homes[i] != NULL; i++) {
		for (size_t k = 0; k < sizeof home_creds / sizeof home_creds[0];
		    k++) {
			if (vec_add(&v, &n, homes[i], home_creds[k]) < 0)
				goto out;
		}
	}
	for (size_t k = 0; k < sizeof host_creds / sizeof host_creds[0]; k++) {
		if (vec_add(&v, &n, host_creds[k], NULL) < 0)
			goto out;
	}
	if (ssh_auth_sock != NULL && ssh_auth_sock[0] == '/' &&
	    vec_add(&v, &n, ssh_auth_sock, NULL) < 0)
		goto out;
	*out = v;
	v = NULL;
	rc = 0;
out:
	sbx_strv_free(v);
	sbx_strv_free(hv);
	return rc;
}

/* a equal to b, or a under b (path components). */
static bool
path_within(const char *a, const char *b)
{
	size_t n = strlen(b);

	while (n > 1 && b[n - 1] == '/')
		n--;
	if (strncmp(a, b, n) != 0)
		return false;
	return a[n] == '\0' || a[n] == '/' || (n == 1 && b[0] == '/');
}

int
sbx_doctor_policy(const struct sbx_policy *p, char *const *cred, char *why,
    size_t whysz)
{
	if (whysz > 0)
		why[0] = '\0';
	if (p == NULL)
		return SBX_HALT_ISOLATION_UNSATISFIABLE;
	/* Unrestricted network: a wildcard host (SPEC 8.7). */
	for (size_t i = 0; i < p->nnet_allow; i++) {
		if (strncmp(p->net_allow[i], "*", 1) == 0) {
			snprintf(why, whysz, "the policy asks for unrestricted "
			    "network ([network] allow = %s)", p->net_allow[i]);
			return SBX_HALT_ISOLATION_UNSATISFIABLE;
		}
	}
	for (size_t i = 0; i < p->nmounts_ro; i++) {
		const char *m = p->mounts_ro[i];

		for (size_t k = 0; cred != NULL && cred[k] != NULL; k++) {
			if (path_within(m, cred[k]) ||
			    path_within(cred[k], m)) {
				snprintf(why, whysz, "[mounts] ro = %s would "
				    "mount the host's %s", m, cred[k]);
				return SBX_HALT_CREDENTIAL_SCOPE_INVALID;
			}
		}
	}
	return SBX_HALT_NONE;
}

/* ---- facts --------------------------------------------------------- */

static bool
marker_key(const struct sbx_facts *f, char *key, size_t sz)
{
	int n = snprintf(key, sz, "kernel=%s\nbwrap_sha256=%s\n"
	    "filter_sha256=%s\ncorral_version=%s\n", f->kernel,
	    f->bwrap_sha256, f->filter_sha256, f->corral_version);

	return n > 0 && (size_t)n < sz && f->bwrap_sha256[0] != '\0' &&
	    f->filter_sha256[0] != '\0';
}

static int
marker_path(const char *state_dir, const char *key, char *path, size_t sz)
{
	char hex[SBX_SHA256_HEX];
	int rc;

	if ((rc = sbx_sha256_hex(key, strlen(key), hex)) < 0)
		return rc;
	if ((size_t)snprintf(path, sz, "%s/sandbox-verified/%s", state_dir,
	    hex) >= sz)
		return -ENAMETOOLONG;
	return 0;
}

int
sbx_doctor_mark_verified(const char *state_dir, const struct sbx_facts *f)
{
	char key[1024], path[PATH_MAX], dir[PATH_MAX], tmp[PATH_MAX + 8];
	size_t len;
	int fd, rc;

	if (state_dir == NULL || f == NULL || !marker_key(f, key, sizeof key))
		return -EINVAL;
	snprintf(dir, sizeof dir, "%s/sandbox-verified", state_dir);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	if ((rc = marker_path(state_dir, key, path, sizeof path)) < 0)
		return rc;
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
	    0600);
	if (fd < 0)
		return -errno;
	len = strlen(key);
	if (write(fd, key, len) != (ssize_t)len || fsync(fd) < 0) {
		rc = errno ? -errno : -EIO;
		close(fd);
		unlink(tmp);
		return rc;
	}
	close(fd);
	if (rename(tmp, path) < 0) {
		rc = -errno;
		unlink(tmp);
		return rc;
	}
	return 0;
}

bool
sbx_doctor_verified(const char *state_dir, const struct sbx_facts *f)
{
	char key[1024], path[PATH_MAX], have[1024];

	if (state_dir == NULL || f == NULL || !marker_key(f, key, sizeof key) ||
	    marker_path(state_dir, key, path, sizeof path) < 0)
		return false;
	return sbx__read_file(path, have, sizeof have) > 0 &&
	    strcmp(have, key) == 0;
}

int
sbx_doctor_facts(const struct sbx_policy *p, const char *state_dir,
    struct sbx_facts *f)
{
	struct utsname u;
	enum sbx_cgroup_mode mode = SBX_CGROUP_NONE;
	char buf[64];
	long abi;

	if (f == NULL)
		return -EINVAL;
	memset(f, 0, sizeof *f);
	if (uname(&u) == 0)
		snprintf(f->kernel, sizeof f->kernel,
		    "%.32s %.64s %.100s %.32s", u.sysname, u.release,
		    u.version, u.machine);
	snprintf(f->bwrap_path, sizeof f->bwrap_path, "%s", SBX_BWRAP_PATH);
	if (sbx__bwrap_version(f->bwrap_version, sizeof f->bwrap_version) < 0)
		f->bwrap_version[0] = '\0';
	if (sbx_sha256_file(SBX_BWRAP_PATH, f->bwrap_sha256) < 0)
		f->bwrap_sha256[0] = '\0';
	if (sbx_seccomp_hash(f->filter_sha256) < 0)
		f->filter_sha256[0] = '\0';
	if (p == NULL || sbx_policy_hash(p, f->policy_sha256) < 0)
		f->policy_sha256[0] = '\0';
	if (sbx_cgroup_detect(&mode) < 0)
		mode = SBX_CGROUP_NONE;
	snprintf(f->cgroup_mode, sizeof f->cgroup_mode, "%s",
	    sbx_cgroup_mode_name(mode));
	/* LANDLOCK_CREATE_RULESET_VERSION: the ABI, reported only. */
	abi = syscall(SYS_landlock_create_ruleset, NULL, 0, 1U);
	f->landlock_abi = abi > 0 ? (int)abi : -1;
	f->legacy_tiocsti = sbx__read_file("/proc/sys/dev/tty/legacy_tiocsti",
	    buf,
	    sizeof buf) > 0 ? atoi(buf) : -1;
	snprintf(f->corral_version, sizeof f->corral_version, "%s",
	    CORRAL_VERSION);
	f->verified = sbx_doctor_verified(state_dir, f);
	return 0;
}

/*
 * A mount that is, holds or is below a host system path or the state
 * directory (the parser refuses the first by name; here the state
 * directory, and both after symlinks): named is the policy's own path.
 */
static int
policy_host(const struct sbx_policy *named, const struct sbx_policy *p,
    const char *state_dir, char *why, size_t whysz)
{
	char host[200];

	for (size_t i = 0; i < p->nmounts_ro; i++) {
		if (!sbx__policy_mount_host(p->mounts_ro[i], state_dir, host,
		    sizeof host))
			continue;
		if (strcmp(named->mounts_ro[i], p->mounts_ro[i]) == 0)
			snprintf(why, whysz, "[mounts] ro = %s: %s",
			    p->mounts_ro[i], host);
		else
			snprintf(why, whysz, "[mounts] ro = %s (%s): %s",
			    named->mounts_ro[i], p->mounts_ro[i], host);
		return SBX_HALT_CREDENTIAL_SCOPE_INVALID;
	}
	return SBX_HALT_NONE;
}

/* Policy mounts resolved on this host (symlinks followed), for the check. */
static void
check_policy(const struct sbx_doctor_opts *o, struct sbx_doctor_report *r)
{
	char **cred = NULL, why[256], real[PATH_MAX], state[PATH_MAX];
	const char *sd = o->state_dir;
	struct sbx_policy *resolved;
	int halt, rc;

	if ((rc = sbx_doctor_credential_paths(o->homes, o->ssh_auth_sock,
	    &cred)) < 0) {
		sbx__doctor_check(r, "policy", false,
		    SBX_HALT_ISOLATION_UNSATISFIABLE,
		    "%s", sbx_strerror(rc));
		return;
	}
	halt = sbx_doctor_policy(o->policy, cred, why, sizeof why);
	if (halt == SBX_HALT_NONE && o->policy != NULL)
		halt = policy_host(o->policy, o->policy, sd, why, sizeof why);
	/* A mount that is a symlink to a credential path is one. */
	if (halt == SBX_HALT_NONE && o->policy != NULL &&
	    (resolved = sbx_policy_dup(o->policy)) != NULL) {
		for (size_t i = 0; i < resolved->nmounts_ro; i++) {
			char *d;

			if (realpath(resolved->mounts_ro[i], real) == NULL ||
			    (d = strdup(real)) == NULL)
				continue;
			free(resolved->mounts_ro[i]);
			resolved->mounts_ro[i] = d;
		}
		halt = sbx_doctor_policy(resolved, cred, why, sizeof why);
		if (sd != NULL && realpath(sd, state) != NULL)
			sd = state;
		if (halt == SBX_HALT_NONE)
			halt = policy_host(o->policy, resolved, sd, why,
			    sizeof why);
		sbx_policy_free(resolved);
	}
	sbx__doctor_check(r, "policy", halt == SBX_HALT_NONE, halt,
	    halt == SBX_HALT_NONE ?
	    "no credential or host system path mounted, no "
	    "unrestricted network" : "%s", why);
	sbx_strv_free(cred);
}

/*
 * The egress checks (SPEC 8.7): the allowlist holds only exact host:port
 * names (no wildcard: no unrestricted network), the loopback grant is
 * sane, and an agent profile that needs a model endpoint finds one
 * allowed. The test resolver override, if any, is reported (never a halt;
 * it only exists in test builds and only from the environment).
 */
static void
check_egress(const struct sbx_doctor_opts *o, struct sbx_doctor_report *r)
{
	struct sbx_egress_check ec;
	const char **allow = NULL;
	const char *test = sbx_proxy_test_env();
	char why[256];
	int rc;

	if (o->policy == NULL)
		return;
	if ((allow = calloc(o->policy->nnet_allow + 1, sizeof *allow)) ==
	    NULL) {
		sbx__doctor_check(r, "egress", false,
		    SBX_HALT_ISOLATION_UNSATISFIABLE,
		    "out of memory");
		return;
	}
	for (size_t i = 0; i < o->policy->nnet_allow; i++)
		allow[i] = o->policy->net_allow[i];
	memset(&ec, 0, sizeof ec);
	ec.rules.allow = allow;
	ec.rules.loopback_port = o->policy->loopback_port;
	ec.rules.loopback_name = ec.rules.loopback_port ? "localhost" : NULL;
	ec.agent = o->agent;
	ec.needs_model = o->model_endpoints != NULL &&
	    o->model_endpoints[0] != NULL;
	ec.model_endpoints = o->model_endpoints;
	rc = sbx_egress_preflight(&ec, why, sizeof why);
	if (rc != 0)
		sbx__doctor_check(r, "egress", false,
		    SBX_HALT_ISOLATION_UNSATISFIABLE,
		    "%s", why);
	else
		sbx__doctor_check(r, "egress", true, SBX_HALT_NONE,
		    "%zu allowlisted "
		    "destination(s)%s%s%s", o->policy->nnet_allow,
		    ec.needs_model ? ", the agent's model endpoint among "
		    "them" : "", test != NULL ? "; TEST resolver override: " :
		    "", test != NULL ? test : "");
	free(allow);
}

int
sbx_doctor_run(const struct sbx_doctor_opts *o, struct sbx_doctor_report *r)
{
	char why[256];
	int rc;

	if (o == NULL || r == NULL)
		return -EINVAL;
	memset(r, 0, sizeof *r);
	if (!o->quick && (o->init_path == NULL || o->probe_path == NULL ||
	    o->uid == 0 || o->gid == 0))
		return -EINVAL;
	if (o->state_dir == NULL || o->state_dir[0] != '/')
		return -EINVAL;
	if ((rc = sbx_doctor_facts(o->policy, o->state_dir, &r->facts)) < 0)
		return rc;
	/* Without a journal, what dead runs left is found by name. */
	if (o->steps == NULL)
		sbx_doctor_reclaim(o->state_dir);
	check_policy(o, r);
	check_egress(o, r);
	rc = sbx_adapter_bwrap.probe(why, sizeof why);
	sbx__doctor_check(r, "bwrap", rc == 0, SBX_HALT_ISOLATION_UNSATISFIABLE,
	    rc == 0 ?
	    "%s %s, not setuid, sha256 %.16s..." : "%s", rc == 0 ?
	    SBX_BWRAP_PATH : why, r->facts.bwrap_version,
	    r->facts.bwrap_sha256);
	sbx__doctor_check(r, "filter", r->facts.filter_sha256[0] != '\0',
	    SBX_HALT_ISOLATION_UNSATISFIABLE, r->facts.filter_sha256[0] ?
	    "seccomp filter sha256 %.16s..." : "the seccomp filter cannot be "
	    "built", r->facts.filter_sha256);
	sbx__doctor_cgroups(o, r);
	/* Reported, not a halt: --new-session and the filter cover it. */
	sbx__doctor_check(r, "tiocsti", true, SBX_HALT_NONE,
	    "dev.tty.legacy_tiocsti=%d%s",
	    r->facts.legacy_tiocsti, r->facts.legacy_tiocsti == 1 ?
	    " (mitigated by --new-session and the seccomp filter)" : "");
	if (!o->quick && r->halt == SBX_HALT_NONE)
		sbx__doctor_zones(o, r);
	return r->halt == SBX_HALT_NONE ? 0 : SBX_EPROBE;
}
