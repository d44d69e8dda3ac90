/*
 * sbx_bwrap.c: the bwrap adapter's agent zone (SPEC 8.2, 8.3; SANDBOX.md
 * 0, 5.a, 5.b). .plan is pure: it turns a request into bwrap 0.8's options
 * (sent through `--args FD`, so nothing of the policy is on any argv), the
 * per-lease uid drop, no_new_privs and the /etc data files. .probe checks
 * the bwrap binary itself. Seccomp, cgroups and the egress shim come with
 * the sandbox issue; their seams are marked below.
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
#include <unistd.h>

#include "sandbox-adapters/sbx.h"

/* The agent zone's whole environment (an allowlist: SPEC 8.3). */
static const char *const bwrap_env[][2] = {
	{ "PATH", "/usr/local/bin:/usr/bin:/bin" },
	{ "HOME", SBX_BWRAP_HOME },
	{ "TMPDIR", "/tmp" },
	{ "LANG", "C.UTF-8" },
	{ "TERM", "xterm-256color" },
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

static bool
request_ok(const struct sbx_request *req)
{
	if (req->cmd == NULL || req->cmd[0] == NULL || req->cmd[0][0] == '\0')
		return false;
	if (!path_ok(req->workspace) || !path_ok(req->init_path))
		return false;
	/* SANDBOX.md 0.1: as root, bwrap keeps every capability. */
	if (req->uid == 0 || req->gid == 0)
		return false;
	if (req->nro_binds < 0 || (req->nro_binds > 0 && req->ro_binds == NULL))
		return false;
	for (int i = 0; i < req->nro_binds; i++) {
		if (!path_ok(req->ro_binds[i].src) ||
		    !path_ok(req->ro_binds[i].dst))
			return false;
	}
	return true;
}

static void
fdstr(char *buf, size_t sz, int fd)
{
	snprintf(buf, sz, "%d", fd);
}

/* The agent zone's bwrap options, in the order bwrap applies them. */
static void
zone_options(struct nulbuf *b, const struct sbx_request *req)
{
	char num[32], fd[16];

	/* Each namespace spelled out, never a "try" (SANDBOX.md 0.2). */
	opts(b, "--unshare-user", "--unshare-ipc", "--unshare-pid",
	    "--unshare-net", "--unshare-uts", "--unshare-cgroup", NULL);
	opts(b, "--disable-userns", "--assert-userns-disabled", NULL);
	/* Dies with its holder; no TIOCSTI into another session (0.3). */
	opts(b, "--die-with-parent", "--new-session", "--cap-drop", "ALL",
	    NULL);
	opts(b, "--hostname", "sbx", "--clearenv", NULL);
	for (size_t i = 0; i < sizeof bwrap_env / sizeof bwrap_env[0]; i++)
		opts(b, "--setenv", bwrap_env[i][0], bwrap_env[i][1], NULL);
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
	snprintf(num, sizeof num, "%llu",
	    req->tmp_bytes ? req->tmp_bytes : SBX_BWRAP_TMP_BYTES);
	opts(b, "--perms", "1777", "--size", num, "--tmpfs", "/tmp", NULL);
	snprintf(num, sizeof num, "%llu",
	    req->home_bytes ? req->home_bytes : SBX_BWRAP_HOME_BYTES);
	opts(b, "--perms", "0700", "--size", num, "--tmpfs", SBX_BWRAP_HOME,
	    NULL);
	opts(b, "--bind", req->workspace, SBX_BWRAP_WORK, NULL);
	for (int i = 0; i < req->nro_binds; i++)
		opts(b, "--ro-bind", req->ro_binds[i].src,
		    req->ro_binds[i].dst, NULL);
	opts(b, "--ro-bind", req->init_path, SBX_BWRAP_INIT, NULL);
	opts(b, "--chdir", SBX_BWRAP_WORK, NULL);
	/* Last mount step: bwrap's tmpfs root becomes read-only. */
	opts(b, "--remount-ro", "/", NULL);
	/*
	 * Seam (sandbox issue): "--seccomp FD" with the libseccomp filter
	 * (TIOCSTI/TIOCLINUX masked, vsock, io_uring, userns, mount APIs,
	 * ptrace, keyrings) goes here, its blob a data fd like the others;
	 * so do the egress socket bind and --json-status-fd.
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
bwrap_plan(const struct sbx_request *req, struct sbx_plan **out)
{
	struct nulbuf b = { 0 };
	struct sbx_plan *p;
	char fd[16];
	int rc;

	if (req == NULL || out == NULL || !request_ok(req))
		return -EINVAL;
	if ((p = sbx_plan_new()) == NULL)
		return -ENOMEM;
	zone_options(&b, req);
	rc = b.oom ? -ENOMEM : sbx_plan_data(p, SBX_BWRAP_ARGS_FD, b.p, b.len);
	free(b.p);
	if (rc == 0)
		rc = etc_data(p, req);
	/* argv: the binary, the options fd, then the helper and the command. */
	fdstr(fd, sizeof fd, SBX_BWRAP_ARGS_FD);
	if (rc == 0)
		rc = sbx_plan_arg(p, SBX_BWRAP_PATH);
	if (rc == 0)
		rc = sbx_plan_arg(p, "--args");
	if (rc == 0)
		rc = sbx_plan_arg(p, fd);
	if (rc == 0)
		rc = sbx_plan_arg(p, "--");
	if (rc == 0)
		rc = sbx_plan_arg(p, SBX_BWRAP_INIT);
	if (rc == 0)
		rc = sbx_plan_arg(p, "--");
	for (size_t i = 0; rc == 0 && req->cmd[i] != NULL; i++)
		rc = sbx_plan_arg(p, req->cmd[i]);
	if (rc == 0)
		rc = sbx_plan_cwd(p, "/");
	if (rc < 0) {
		sbx_plan_free(p);
		return rc;
	}
	/* The pre-exec recipe: no core files, the lease uid, no new privs. */
	p->rlimits[p->nrlimits++] = (struct sbx_rlimit){ RLIMIT_CORE, 0, 0 };
	p->drop_uid = true;
	p->uid = req->uid;
	p->gid = req->gid;
	p->no_new_privs = true;
	p->inherit_env = false;
	snprintf(p->label, sizeof p->label, "bwrap");
	*out = p;
	return 0;
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
};
