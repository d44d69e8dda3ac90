/*
 * sbx_bwrap.c: the bwrap adapter's agent zone (SPEC 8.2, 8.3; SANDBOX.md
 * 0, 5.a, 5.b). .plan is pure: it turns a request into bwrap 0.8's options
 * (sent through `--args FD`, so nothing of the policy is on any argv), the
 * per-lease uid drop, no_new_privs and the /etc data files. .probe checks
 * the bwrap binary itself. Both zones share one builder: the agent zone
 * (the lease PTY, corral-sbx-init first) and the exec zone (declared
 * checks: hermetic, pipes, no helper). The egress shim's seam is marked.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"

/* The agent zone's fixed environment (an allowlist: SPEC 8.3). */
static const char *const agent_env[][2] = {
	{ "PATH", "/usr/local/bin:/usr/bin:/bin" },
	{ "HOME", SBX_BWRAP_HOME },
	{ "TMPDIR", "/tmp" },
	{ "LANG", "C.UTF-8" },
	{ "TERM", "xterm-256color" },
};

/* The exec zone's: hermetic (SPEC 8.2), the base time added per request. */
static const char *const exec_env[][2] = {
	{ "PATH", "/usr/local/bin:/usr/bin:/bin" },
	{ "HOME", SBX_BWRAP_HOME },
	{ "TMPDIR", "/tmp" },
	{ "LANG", "C.UTF-8" },
	{ "LC_ALL", "C.UTF-8" },
	{ "TZ", "UTC" },
	{ "PYTHONHASHSEED", "0" },
	{ "PYTHONDONTWRITEBYTECODE", "1" },
	{ "PERL_HASH_SEED", "0" },
	{ "PERL_PERTURB_KEYS", "0" },
	{ "GIT_CONFIG_NOSYSTEM", "1" },
	{ "GIT_TERMINAL_PROMPT", "0" },
};

/* Names a policy's env allowlist may not set: the zones own them. */
static const char *const reserved_env[] = { "PATH", "HOME", "TMPDIR",
	"LANG", "LC_ALL", "TERM", "TZ", "SOURCE_DATE_EPOCH", "PYTHONHASHSEED",
	"PERL_HASH_SEED", "PERL_PERTURB_KEYS", "FAKETIME", "NO_FAKE_STAT",
	"HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "NO_PROXY",
	"no_proxy", "ALL_PROXY", "all_proxy", "NODE_USE_ENV_PROXY", "SHELL",
	"USER", "LOGNAME" };

enum zone {
	ZONE_AGENT,
	ZONE_EXEC,
};

/* bwrap's options, NUL-separated, as `--args FD` reads them. */
struct nulbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void
put(struct nulbuf *b, const char *s)
{
	size_t n = strlen(s) + 1;
	char *np;

	if (b->oom)
		return;
	if (b->len + n > b->cap) {
		size_t cap = (b->cap + n) * 2;

		if ((np = realloc(b->p, cap)) == NULL) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

/* Append each argument up to a NULL. */
static void
opts(struct nulbuf *b, ...)
{
	const char *s;
	va_list ap;

	va_start(ap, b);
	while ((s = va_arg(ap, const char *)) != NULL)
		put(b, s);
	va_end(ap);
}

/* Absolute, no "." or ".." component, not "/" itself. */
static bool
path_ok(const char *p)
{
	const char *c;

	if (p == NULL || p[0] != '/' || p[1] == '\0')
		return false;
	for (c = p; *c != '\0';) {
		size_t n;

		while (*c == '/')
			c++;
		n = strcspn(c, "/");
		if ((n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c += n;
	}
	return true;
}

/* A variable name: [A-Za-z_][A-Za-z0-9_]*. */
static bool
env_name_ok(const char *s, size_t n)
{
	if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || c == '_'))
			return false;
	}
	return true;
}

/* NAME=VALUE with a valid name; *eq at the '='. */
static bool
env_entry_ok(const char *e, const char **eq)
{
	const char *q;

	if (e == NULL || (q = strchr(e, '=')) == NULL ||
	    !env_name_ok(e, (size_t)(q - e)))
		return false;
	*eq = q;
	return true;
}

bool
sbx__env_reserved(const char *name)
{
	if (strncmp(name, "LD_", 3) == 0)
		return true;
	for (size_t k = 0; k < sizeof reserved_env / sizeof reserved_env[0];
	    k++) {
		if (strcmp(name, reserved_env[k]) == 0)
			return true;
	}
	return false;
}

/* 0, -EINVAL (malformed) or SBX_EPOLICY (a name no policy may pass). */
int
sbx__env_ok(char *const *env)
{
	const char *eq;
	char name[256];

	for (size_t i = 0; env != NULL && env[i] != NULL; i++) {
		size_t n;

		if (!env_entry_ok(env[i], &eq) ||
		    (n = (size_t)(eq - env[i])) >= sizeof name)
			return -EINVAL;
		memcpy(name, env[i], n);
		name[n] = '\0';
		if (sbx_policy_env_credential_shaped(name) ||
		    strncmp(name, "LD_", 3) == 0)
			return SBX_EPOLICY;
		for (size_t k = 0; k < sizeof reserved_env /
		    sizeof reserved_env[0]; k++) {
			if (strcmp(name, reserved_env[k]) == 0)
				return SBX_EPOLICY;
		}
	}
	return 0;
}

static int
request_ok(const struct sbx_request *req, enum zone z)
{
	if (req->cmd == NULL || req->cmd[0] == NULL || req->cmd[0][0] == '\0')
		return -EINVAL;
	if (!path_ok(req->workspace))
		return -EINVAL;
	if (z == ZONE_AGENT && !path_ok(req->init_path))
		return -EINVAL;
	/* SANDBOX.md 0.1: as root, bwrap keeps every capability. */
	if (req->uid == 0 || req->gid == 0)
		return -EINVAL;
	if (req->nro_binds < 0 || (req->nro_binds > 0 && req->ro_binds == NULL))
		return -EINVAL;
	for (int i = 0; i < req->nro_binds; i++) {
		if (!path_ok(req->ro_binds[i].src) ||
		    !path_ok(req->ro_binds[i].dst))
			return -EINVAL;
	}
	if (z == ZONE_EXEC) {
		/* The exec zone never holds a credential (SPEC 8.5). */
		if (req->credential != NULL || req->source_date_epoch < 0)
			return -EINVAL;
		if (req->faketime != NULL && !path_ok(req->faketime))
			return -EINVAL;
	} else if (req->credential != NULL) {
		/* One mechanism: sbx_cred_plan_add's data fd (SPEC 8.5). */
		return -EINVAL;
	}
	return sbx__env_ok(req->env);
}

static void
fdstr(char *buf, size_t sz, int fd)
{
	snprintf(buf, sz, "%d", fd);
}

static unsigned long long
tmpfs_size(unsigned long long req, unsigned long long lim,
    unsigned long long dflt)
{
	return req != 0 ? req : lim != 0 ? lim : dflt;
}

/* "YYYY-MM-DD hh:mm:ss" (UTC): libfaketime's absolute, frozen form. */
static void
faketime_str(char *buf, size_t sz, long long t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (gmtime_r(&tt, &tm) == NULL ||
	    strftime(buf, sz, "%Y-%m-%d %H:%M:%S", &tm) == 0)
		snprintf(buf, sz, "1970-01-01 00:00:00");
}

/* Each NAME=VALUE as --setenv NAME VALUE (already validated). */
static void
env_options(struct nulbuf *b, const char *entry)
{
	const char *eq = strchr(entry, '=');
	char name[256];
	size_t n = (size_t)(eq - entry);

	memcpy(name, entry, n);
	name[n] = '\0';
	opts(b, "--setenv", name, eq + 1, NULL);
}

/* A zone's bwrap options, in the order bwrap applies them. */
static void
zone_options(struct nulbuf *b, const struct sbx_request *req, enum zone z)
{
	const struct sbx_limits *lim = req->limits;
	char num[32], fd[16], when[64];

	/* Each namespace spelled out, never a "try" (SANDBOX.md 0.2). */
	opts(b, "--unshare-user", "--unshare-ipc", "--unshare-pid",
	    "--unshare-net", "--unshare-uts", "--unshare-cgroup", NULL);
	opts(b, "--disable-userns", "--assert-userns-disabled", NULL);
	/* Dies with its holder; no TIOCSTI into another session (0.3). */
	opts(b, "--die-with-parent", "--new-session", "--cap-drop", "ALL",
	    NULL);
	opts(b, "--hostname", "sbx", "--clearenv", NULL);
	if (z == ZONE_AGENT) {
		for (size_t i = 0; i < sizeof agent_env / sizeof agent_env[0];
		    i++)
			opts(b, "--setenv", agent_env[i][0], agent_env[i][1],
			    NULL);
	} else {
		for (size_t i = 0; i < sizeof exec_env / sizeof exec_env[0];
		    i++)
			opts(b, "--setenv", exec_env[i][0], exec_env[i][1],
			    NULL);
		snprintf(num, sizeof num, "%lld", req->source_date_epoch);
		opts(b, "--setenv", "SOURCE_DATE_EPOCH", num, NULL);
		if (req->faketime != NULL) {
			/* Frozen at the base time; monotonic clocks and
			 * file times stay real, so timeouts and make work. */
			faketime_str(when, sizeof when,
			    req->source_date_epoch);
			opts(b, "--setenv", "LD_PRELOAD", SBX_EXEC_FAKETIME,
			    "--setenv", "FAKETIME", when, "--setenv",
			    "FAKETIME_DONT_FAKE_MONOTONIC", "1", "--setenv",
			    "NO_FAKE_STAT", "1", NULL);
		}
	}
	for (size_t i = 0; req->env != NULL && req->env[i] != NULL; i++)
		env_options(b, req->env[i]);
	/* The root from /usr up, never the host's / (0.4). */
	opts(b, "--ro-bind", "/usr", "/usr", NULL);
	opts(b, "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin",
	    "/sbin", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64",
	    "/lib64", NULL);
	opts(b, "--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache", NULL);
	/* Debian's /usr/bin/x -> /etc/alternatives/x; absent is fine. */
	opts(b, "--ro-bind-try", "/etc/alternatives", "/etc/alternatives",
	    NULL);
	fdstr(fd, sizeof fd, SBX_BWRAP_PASSWD_FD);
	opts(b, "--perms", "0644", "--ro-bind-data", fd, "/etc/passwd", NULL);
	fdstr(fd, sizeof fd, SBX_BWRAP_GROUP_FD);
	opts(b, "--perms", "0644", "--ro-bind-data", fd, "/etc/group", NULL);
	fdstr(fd, sizeof fd, SBX_BWRAP_HOSTS_FD);
	opts(b, "--perms", "0644", "--ro-bind-data", fd, "/etc/hosts", NULL);
	opts(b, "--proc", "/proc", "--dev", "/dev", NULL);
	/* --perms and --size apply to the next --tmpfs: keep them before. */
	snprintf(num, sizeof num, "%llu", tmpfs_size(req->tmp_bytes,
	    lim != NULL ? lim->tmp : 0, SBX_BWRAP_TMP_BYTES));
	opts(b, "--perms", "1777", "--size", num, "--tmpfs", "/tmp", NULL);
	snprintf(num, sizeof num, "%llu", tmpfs_size(req->home_bytes,
	    lim != NULL ? lim->home : 0, SBX_BWRAP_HOME_BYTES));
	opts(b, "--perms", "0700", "--size", num, "--tmpfs", SBX_BWRAP_HOME,
	    NULL);
	opts(b, z == ZONE_EXEC && req->workspace_ro ? "--ro-bind" : "--bind",
	    z == ZONE_EXEC && req->workspace_private ? SBX_EXEC_MNT :
	    req->workspace, SBX_BWRAP_WORK, NULL);
	for (int i = 0; i < req->nro_binds; i++)
		opts(b, "--ro-bind", req->ro_binds[i].src,
		    req->ro_binds[i].dst, NULL);
	if (z == ZONE_AGENT)
		opts(b, "--ro-bind", req->init_path, SBX_BWRAP_INIT, NULL);
	else if (req->faketime != NULL)
		opts(b, "--ro-bind", req->faketime, SBX_EXEC_FAKETIME, NULL);
	opts(b, "--chdir", SBX_BWRAP_WORK, NULL);
	/* Last mount step: bwrap's tmpfs root becomes read-only. */
	opts(b, "--remount-ro", "/", NULL);
	/* The filter, loaded by bwrap right before it execs (SANDBOX 0.6). */
	fdstr(fd, sizeof fd, SBX_BWRAP_SECCOMP_FD);
	opts(b, "--seccomp", fd, NULL);
	/*
	 * Seam (egress issue): the agent zone's proxy socket bind
	 * (--ro-bind <lease>/egress.sock /run/egress/proxy.sock) and
	 * --json-status-fd go here.
	 */
}

static int
etc_data(struct sbx_plan *p, const struct sbx_request *req)
{
	char buf[512];
	int n, rc;

	n = snprintf(buf, sizeof buf,
	    "sbx:x:%u:%u:corral sandbox:%s:/bin/sh\n"
	    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
	    (unsigned)req->uid, (unsigned)req->gid, SBX_BWRAP_HOME);
	if ((rc = sbx_plan_data(p, SBX_BWRAP_PASSWD_FD, buf, (size_t)n)) < 0)
		return rc;
	n = snprintf(buf, sizeof buf, "sbx:x:%u:\nnogroup:x:65534:\n",
	    (unsigned)req->gid);
	if ((rc = sbx_plan_data(p, SBX_BWRAP_GROUP_FD, buf, (size_t)n)) < 0)
		return rc;
	n = snprintf(buf, sizeof buf, "127.0.0.1\tlocalhost sbx\n"
	    "::1\tlocalhost ip6-localhost ip6-loopback\n");
	return sbx_plan_data(p, SBX_BWRAP_HOSTS_FD, buf, (size_t)n);
}

static int
seccomp_data(struct sbx_plan *p)
{
	unsigned char *bpf = NULL;
	size_t len = 0;
	int rc;

	if ((rc = sbx_seccomp_build(&bpf, &len)) < 0)
		return rc;
	rc = sbx_plan_data(p, SBX_BWRAP_SECCOMP_FD, bpf, len);
	free(bpf);
	return rc;
}

static void
rlimit_add(struct sbx_plan *p, int res, unsigned long long cur,
    unsigned long long max)
{
	if (p->nrlimits >= SBX_PLAN_MAX_RLIMITS)
		return;
	p->rlimits[p->nrlimits++] = (struct sbx_rlimit){ res, (rlim_t)cur,
		(rlim_t)max };
}

/*
 * The rlimits (SANDBOX.md 3.6): no core files; then per the policy the
 * per-file cap (SIGXFSZ), open files, a CPU-seconds backstop (SIGXCPU,
 * then SIGKILL at the hard limit) and the process count (the uid is the
 * lease's alone). Never RLIMIT_AS.
 */
static void
rlimits(struct sbx_plan *p, const struct sbx_limits *lim, enum zone z)
{
	rlimit_add(p, RLIMIT_CORE, 0, 0);
	if (lim == NULL)
		return;
	if (lim->file_size != 0)
		rlimit_add(p, RLIMIT_FSIZE, lim->file_size, lim->file_size);
	if (lim->nofile != 0)
		rlimit_add(p, RLIMIT_NOFILE, lim->nofile, lim->nofile);
	if (lim->cpu_time != 0)
		rlimit_add(p, RLIMIT_CPU, lim->cpu_time, lim->cpu_time + 5);
	/*
	 * The agent's zone: its cgroup's pids.max bounds the lease and counts
	 * the forks it refused (limit_pids); RLIMIT_NPROC, which bwrap's own
	 * processes use up first, stays a backstop above it. Otherwise a
	 * refused fork showed only as the agent's exit. The exec zone too: an
	 * exact RLIMIT_NPROC made bwrap's own forks fail (EAGAIN) whenever
	 * other sandboxes ran on the host (make test beside its second
	 * tenant); its caller bounds forks with the run's pids cgroup.
	 */
	(void)z;
	if (lim->pids != 0)
		rlimit_add(p, RLIMIT_NPROC, lim->pids * 2 + 16,
		    lim->pids * 2 + 16);
}

static int
zone_plan(const struct sbx_request *req, enum zone z, struct sbx_plan **out)
{
	struct nulbuf b = { 0 };
	struct sbx_plan *p;
	char fd[16];
	int rc;

	if (req == NULL || out == NULL)
		return -EINVAL;
	if ((rc = request_ok(req, z)) < 0)
		return rc;
	if ((p = sbx_plan_new()) == NULL)
		return -ENOMEM;
	zone_options(&b, req, z);
	rc = b.oom ? -ENOMEM : sbx_plan_data(p, SBX_BWRAP_ARGS_FD, b.p, b.len);
	free(b.p);
	if (rc == 0)
		rc = etc_data(p, req);
	if (rc == 0)
		rc = seccomp_data(p);
	/* argv: the binary, the options fd, then (the helper and) the cmd. */
	fdstr(fd, sizeof fd, SBX_BWRAP_ARGS_FD);
	if (rc == 0)
		rc = sbx_plan_arg(p, SBX_BWRAP_PATH);
	if (rc == 0)
		rc = sbx_plan_arg(p, "--args");
	if (rc == 0)
		rc = sbx_plan_arg(p, fd);
	if (rc == 0)
		rc = sbx_plan_arg(p, "--");
	if (rc == 0 && z == ZONE_AGENT)
		rc = sbx_plan_arg(p, SBX_BWRAP_INIT);
	if (rc == 0 && z == ZONE_AGENT)
		rc = sbx_plan_arg(p, "--");
	for (size_t i = 0; rc == 0 && req->cmd[i] != NULL; i++)
		rc = sbx_plan_arg(p, req->cmd[i]);
	if (rc == 0)
		rc = sbx_plan_cwd(p, "/");
	if (rc == 0 && z == ZONE_EXEC && req->workspace_private &&
	    ((p->bind_src = strdup(req->workspace)) == NULL ||
	    (p->bind_dst = strdup(SBX_EXEC_MNT)) == NULL))
		rc = -ENOMEM;
	if (rc < 0) {
		sbx_plan_free(p);
		return rc;
	}
	/* The pre-exec recipe: rlimits, the lease uid, no new privs. */
	rlimits(p, req->limits, z);
	p->drop_uid = true;
	p->uid = req->uid;
	p->gid = req->gid;
	p->no_new_privs = true;
	p->inherit_env = false;
	/* bwrap keeps the caller's umask for the command. */
	p->umask = z == ZONE_EXEC ? 022 : -1;
	snprintf(p->label, sizeof p->label, "bwrap");
	*out = p;
	return 0;
}

static int
bwrap_plan(const struct sbx_request *req, struct sbx_plan **out)
{
	return zone_plan(req, ZONE_AGENT, out);
}

int
sbx_bwrap_exec_plan(const struct sbx_request *req, struct sbx_plan **out)
{
	return zone_plan(req, ZONE_EXEC, out);
}

const char *
sbx_bwrap_faketime_path(void)
{
	static const char *const paths[] = {
		"/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
		"/usr/lib/faketime/libfaketime.so.1",
	};
	struct stat sb;

	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		if (stat(paths[i], &sb) == 0 && S_ISREG(sb.st_mode))
			return paths[i];
	}
	return NULL;
}

/* "bubblewrap X.Y.Z" at least 0.8.0? */
static bool
version_ok(const char *text, char *why, size_t whysz)
{
	unsigned maj = 0, min = 0, pat = 0;

	if (sscanf(text, "bubblewrap %u.%u.%u", &maj, &min, &pat) < 2) {
		snprintf(why, whysz, "%s --version: unexpected output",
		    SBX_BWRAP_PATH);
		return false;
	}
	if (maj == 0 && min < 8) {
		snprintf(why, whysz, "bubblewrap %u.%u.%u is older than 0.8.0",
		    maj, min, pat);
		return false;
	}
	return true;
}

/* Run `bwrap --version` with an empty environment; its stdout in buf. */
static int
run_version(char *buf, size_t sz)
{
	char *const argv[] = { (char *)SBX_BWRAP_PATH, (char *)"--version",
		NULL };
	char *const envp[] = { NULL };
	posix_spawn_file_actions_t fa;
	size_t off = 0;
	int pp[2], st, rc;
	ssize_t n;
	pid_t pid;

	if (pipe2(pp, O_CLOEXEC) < 0)
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pp[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	rc = posix_spawn(&pid, SBX_BWRAP_PATH, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(pp[1]);
	if (rc != 0) {
		close(pp[0]);
		return -rc;
	}
	while (off + 1 < sz) {
		n = read(pp[0], buf + off, sz - 1 - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	buf[off] = '\0';
	close(pp[0]);
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

int
sbx__bwrap_version(char *buf, size_t sz)
{
	unsigned maj = 0, min = 0, pat = 0;
	char out[256];
	int rc;

	if ((rc = run_version(out, sizeof out)) < 0)
		return rc;
	if (sscanf(out, "bubblewrap %u.%u.%u", &maj, &min, &pat) < 2)
		return -EINVAL;
	snprintf(buf, sz, "%u.%u.%u", maj, min, pat);
	return 0;
}

static int
bwrap_probe(char *why, size_t whysz)
{
	struct stat sb;
	char out[256];
	int rc;

	if (whysz > 0)
		why[0] = '\0';
	if (stat(SBX_BWRAP_PATH, &sb) < 0) {
		snprintf(why, whysz, "%s: %s", SBX_BWRAP_PATH,
		    strerror(errno));
		return SBX_EPROBE;
	}
	if (!S_ISREG(sb.st_mode) || (sb.st_mode & 0111) == 0) {
		snprintf(why, whysz, "%s is not an executable file",
		    SBX_BWRAP_PATH);
		return SBX_EPROBE;
	}
	/* A setuid bwrap has different rules (no user namespace of ours). */
	if (sb.st_mode & (S_ISUID | S_ISGID)) {
		snprintf(why, whysz, "%s is setuid or setgid", SBX_BWRAP_PATH);
		return SBX_EPROBE;
	}
	if ((rc = run_version(out, sizeof out)) < 0) {
		snprintf(why, whysz, "%s --version failed: %s", SBX_BWRAP_PATH,
		    strerror(-rc));
		return SBX_EPROBE;
	}
	if (!version_ok(out, why, whysz))
		return SBX_EPROBE;
	return 0;
}

const struct sbx_adapter sbx_adapter_bwrap = {
	.name = "bwrap",
	.isolation = "bwrap",
	.probe = bwrap_probe,
	.plan = bwrap_plan,
	.provision = sbx__bwrap_host_provision,	/* sbx_bwrap_host.c */
	.workspace = sbx__workspace_make,	/* sbx_workspace.c */
	.teardown = sbx__bwrap_host_teardown,
	.list = sbx__bwrap_host_list,
	.attach = sbx__bwrap_run_attach,	/* sbx_bwrap_run.c */
	.enter = sbx__bwrap_run_enter,
	.signal = sbx__bwrap_run_signal,
	.usage = sbx__bwrap_run_usage,
	.stop = sbx__bwrap_run_stop,
	.detach = sbx__bwrap_run_detach,
	.exec = sbx__bwrap_run_exec,	/* sbx_bwrap_run.c, the exec zone */
	.exec_plan = sbx__bwrap_run_exec_plan,
	.faketime = sbx_bwrap_faketime_path,
};
