/*
 * sbx_doctor_probe.c: the preflight's checks that run sandboxes (SPEC 8.7;
 * SANDBOX.md 5.c), for sbx_doctor_run: user namespaces as a lease uid,
 * the real seccomp filter inside the real agent zone (corral-sbx-probe,
 * confirmed on the host: nothing injected into its terminal, its /proc
 * entry), an exec zone without network (a host listener never reached)
 * and a cgroup create/remove round trip. What a run makes on the host
 * (its probe cgroup, its scratch directory under /tmp) is named by the
 * state directory's tag and the run's pid, so another state directory
 * never sees it, and journaled through the caller's steps before it
 * exists (kinds probe_cgroup, probe_dir), so a run killed at any point
 * leaves rows naming it: the next preflight or reconcile removes it by
 * that identity (sbx_doctor_remove). What older runs left without a row
 * is found by name (sbx_doctor_reclaim).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"

#define SCRATCH_DIR "/tmp"
#define SCRATCH_NAME "corral-doctor-"

#define PROBE_TIMEOUT_MS 20000
#define READY "PROBE-READY"

/* The probe lines that must read EPERM (SPEC 8.3). */
static const char *const must_eperm[] = { "tiocsti", "tiocsti_hi",
	"tioclinux", "unshare_user", "clone_newuser", "vsock", "packet",
	"io_uring_setup", "mount", "ptrace", "keyctl", "bpf", "setns" };

/* ---- the checks that run sandboxes ----------------------------------- */

/* bwrap with a user namespace, as the lease uid (SANDBOX.md 5.c.2). */
static void
check_userns(const struct sbx_doctor_opts *o, struct sbx_doctor_report *r)
{
	static const char *const argv[] = { SBX_BWRAP_PATH, "--unshare-user",
		"--unshare-net", "--disable-userns", "--assert-userns-disabled",
		"--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib",
		"--symlink", "usr/lib64", "/lib64", "--", "/usr/bin/true",
		NULL };
	struct sbx_exec_opts eo = { 4096, 10000, -1 };
	struct sbx_exec_result res;
	struct sbx_plan *p = sbx_plan_new();
	int rc = p == NULL ? -ENOMEM : 0;

	for (size_t i = 0; rc == 0 && argv[i] != NULL; i++)
		rc = sbx_plan_arg(p, argv[i]);
	if (rc == 0)
		rc = sbx_plan_cwd(p, "/");
	if (rc == 0) {
		p->drop_uid = true;
		p->uid = o->uid;
		p->gid = o->gid;
		p->no_new_privs = true;
		rc = sbx_exec_run(p, &eo, &res);
	}
	sbx_plan_free(p);
	if (rc < 0) {
		sbx__doctor_check(r, "userns", false,
		    SBX_HALT_ISOLATION_UNSATISFIABLE,
		    "could not run bwrap as uid %u: %s", (unsigned)o->uid,
		    sbx_strerror(rc));
		return;
	}
	res.err[strcspn(res.err, "\n")] = '\0';
	if (WIFEXITED(res.wstatus) && WEXITSTATUS(res.wstatus) == 0)
		sbx__doctor_check(r, "userns", true, SBX_HALT_NONE,
		    "bwrap made a user "
		    "namespace as uid %u", (unsigned)o->uid);
	else
		sbx__doctor_check(r, "userns", false,
		    SBX_HALT_ISOLATION_UNSATISFIABLE,
		    "bwrap cannot make a user namespace as uid %u: %s (see "
		    "user.max_user_namespaces and "
		    "kernel.unprivileged_userns_clone)", (unsigned)o->uid,
		    res.err);
	sbx_exec_result_clear(&res);
}

/* A 0755 scratch directory with a 0700 workspace of the lease uid. */
struct scratch {
	char dir[PATH_MAX];
	char ws[PATH_MAX + 8];
	char init[PATH_MAX + 8];
	char probe[PATH_MAX + 8];
};

static int
copy_exe(const char *from, const char *to)
{
	char buf[65536];
	int in, out, rc = 0;
	ssize_t n;

	if ((in = open(from, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
	    0755);
	if (out < 0) {
		rc = -errno;
		close(in);
		return rc;
	}
	while ((n = read(in, buf, sizeof buf)) > 0) {
		if (write(out, buf, (size_t)n) != n) {
			rc = -EIO;
			break;
		}
	}
	if (n < 0)
		rc = -errno;
	close(in);
	if (close(out) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

/* "/tmp/corral-doctor-<tag>-": a state directory's scratch prefix. */
static int
scratch_prefix(const char *state_dir, char *buf, size_t sz)
{
	char tag[32];
	int rc;

	if ((rc = sbx_cgroup_scope_name(state_dir, tag, sizeof tag)) < 0)
		return rc;
	snprintf(buf, sz, SCRATCH_DIR "/" SCRATCH_NAME "%s-", tag);
	return 0;
}

/* The journal's steps for what a run makes (none when o->steps is NULL). */
static int
step(const struct sbx_doctor_opts *o, int which, const char *kind,
    const char *identity)
{
	const struct sbx_steps *st = o->steps;
	int (*fn)(void *, const char *, const char *);

	if (st == NULL)
		return 0;
	fn = which == 0 ? st->plan : which == 1 ? st->created : st->removed;
	return fn != NULL ? fn(st->ud, kind, identity) : 0;
}

static int
scratch_make(const struct sbx_doctor_opts *o, struct scratch *s)
{
	char pre[128], dir[PATH_MAX];
	unsigned r;
	int rc, tries;

	/* Under /tmp: bwrap resolves the binds as the lease uid. */
	if ((rc = scratch_prefix(o->state_dir, pre, sizeof pre)) < 0)
		return rc;
	/* Named before it exists, so the journal holds the name first. */
	for (tries = 0;; tries++) {
		if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
			r = (unsigned)time(NULL) * 2654435761u + (unsigned)tries;
		snprintf(dir, sizeof dir, "%s%d-%08x", pre, (int)getpid(), r);
		if ((rc = step(o, 0, SBX_DOCTOR_DIR, dir)) < 0)
			return rc;
		if (mkdir(dir, 0700) == 0)
			break;
		rc = -errno;
		/* Another's name, or none made: the row goes again. */
		if (step(o, 2, SBX_DOCTOR_DIR, dir) < 0 || rc != -EEXIST ||
		    tries == 8)
			return rc;
	}
	snprintf(s->dir, sizeof s->dir, "%s", dir);
	if ((rc = step(o, 1, SBX_DOCTOR_DIR, s->dir)) < 0)
		return rc;
	snprintf(s->ws, sizeof s->ws, "%s/work", s->dir);
	snprintf(s->init, sizeof s->init, "%s/init", s->dir);
	snprintf(s->probe, sizeof s->probe, "%s/probe", s->dir);
	if (chmod(s->dir, 0755) < 0 || mkdir(s->ws, 0700) < 0 ||
	    chown(s->ws, o->uid, o->gid) < 0)
		return -errno;
	if ((rc = copy_exe(o->init_path, s->init)) < 0 ||
	    (rc = copy_exe(o->probe_path, s->probe)) < 0)
		return rc;
	return 0;
}

static void
scratch_free(const struct sbx_doctor_opts *o, struct scratch *s)
{
	if (s->dir[0] == '\0')
		return;
	if (sbx_workspace_rmtree_safe(s->dir) < 0) {
		/* its row stays: the next preflight or reconcile */
		return;
	}
	if (step(o, 2, SBX_DOCTOR_DIR, s->dir) < 0) {
		/* a row of a gone directory: the next one forgets it */
	}
}

/* A loopback listener on the host; its port. */
static int
host_listener(int *port)
{
	struct sockaddr_in a;
	socklen_t len = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 ||
	    listen(fd, 8) < 0 || getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		close(fd);
		return -errno;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

/* Did anything connect? (The listener is non-blocking.) */
static bool
host_reached(int fd)
{
	int c = accept(fd, NULL, NULL);

	if (c >= 0) {
		close(c);
		return true;
	}
	return false;
}

/* The value of "name RESULT" in the probe's output, or NULL. */
static const char *
probe_value(const char *out, const char *name, char *buf, size_t sz)
{
	size_t n = strlen(name);

	for (const char *p = out; p != NULL && *p != '\0';) {
		if (strncmp(p, name, n) == 0 && p[n] == ' ') {
			size_t l = strcspn(p + n + 1, "\n");

			snprintf(buf, sz, "%.*s", (int)l, p + n + 1);
			return buf;
		}
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return NULL;
}

struct run_arg {
	struct sbx_plan *plan;
	struct sbx_exec_opts eo;
	struct sbx_exec_result res;
	int rc;
};

static void *
run_thread(void *arg)
{
	struct run_arg *a = arg;

	a->rc = sbx_exec_run(a->plan, &a->eo, &a->res);
	return NULL;
}

/* Is pid a descendant of ours (at most depth levels up)? */
static bool
our_descendant(pid_t pid, int depth)
{
	char path[64], buf[2048], *pp;

	for (int i = 0; i < depth && pid > 1; i++) {
		snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
		if (sbx__read_file(path, buf, sizeof buf) <= 0 ||
		    (pp = strstr(buf, "\nPPid:")) == NULL)
			return false;
		pid = (pid_t)strtol(pp + 6, NULL, 10);
		if (pid == getpid())
			return true;
	}
	return false;
}

/* The probe process of this run: comm, uid, and our descendant. */
static pid_t
find_probe(uid_t uid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char path[64], buf[2048], *u;
	pid_t found = -1;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL && found < 0) {
		pid_t pid = (pid_t)strtol(e->d_name, NULL, 10);

		if (pid <= 0)
			continue;
		snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
		if (sbx__read_file(path, buf, sizeof buf) <= 0 ||
		    strncmp(buf, "Name:\tprobe\n", 12) != 0 ||
		    (u = strstr(buf, "\nUid:")) == NULL ||
		    strtoul(u + 5, NULL, 10) != uid)
			continue;
		if (our_descendant(pid, 8))
			found = pid;
	}
	closedir(d);
	return found;
}

static const char *
status_field(const char *st, const char *key, char *buf, size_t sz)
{
	const char *p = strstr(st, key);
	size_t n;

	if (p == NULL)
		return NULL;
	p += strlen(key);
	p += strspn(p, " \t");
	n = strcspn(p, "\n");
	snprintf(buf, sz, "%.*s", (int)n, p);
	return buf;
}

/*
 * The host's own view of the paused probe: the lease uid, no capability,
 * no new privileges, seccomp filtering, only fds 0-2, its own namespaces.
 * Returns NULL when all hold, else what did not.
 */
static const char *
inspect_probe(pid_t pid, uid_t uid, char *why, size_t sz)
{
	static const char *const nss[] = { "user", "net", "pid", "mnt", "ipc",
		"uts", "cgroup" };
	char path[64], st[4096], v[128], want[128], a[128], b[128];
	struct dirent *e;
	DIR *d;
	ssize_t n;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if (sbx__read_file(path, st, sizeof st) <= 0)
		return "the probe is gone";
	snprintf(want, sizeof want, "%u\t%u\t%u\t%u", uid, uid, uid, uid);
	if (status_field(st, "\nUid:", v, sizeof v) == NULL ||
	    strcmp(v, want) != 0)
		return snprintf(why, sz, "probe uid is %s", v), why;
	if (status_field(st, "\nCapEff:", v, sizeof v) == NULL ||
	    strcmp(v, "0000000000000000") != 0 ||
	    status_field(st, "\nCapPrm:", v, sizeof v) == NULL ||
	    strcmp(v, "0000000000000000") != 0 ||
	    status_field(st, "\nCapBnd:", v, sizeof v) == NULL ||
	    strcmp(v, "0000000000000000") != 0)
		return "the probe holds capabilities";
	if (status_field(st, "\nNoNewPrivs:", v, sizeof v) == NULL ||
	    strcmp(v, "1") != 0)
		return "no_new_privs is not set";
	if (status_field(st, "\nSeccomp:", v, sizeof v) == NULL ||
	    strcmp(v, "2") != 0)
		return "no seccomp filter on the probe";
	snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
	if ((d = opendir(path)) == NULL)
		return "cannot list the probe's fds";
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (atoi(e->d_name) > 2) {
			snprintf(why, sz, "the probe holds fd %.16s",
			    e->d_name);
			closedir(d);
			return why;
		}
	}
	closedir(d);
	for (size_t i = 0; i < sizeof nss / sizeof nss[0]; i++) {
		snprintf(path, sizeof path, "/proc/self/ns/%s", nss[i]);
		n = readlink(path, a, sizeof a - 1);
		a[n > 0 ? n : 0] = '\0';
		snprintf(path, sizeof path, "/proc/%d/ns/%s", (int)pid, nss[i]);
		n = readlink(path, b, sizeof b - 1);
		b[n > 0 ? n : 0] = '\0';
		if (a[0] == '\0' || b[0] == '\0' || strcmp(a, b) == 0) {
			snprintf(why, sz, "the %s namespace is shared", nss[i]);
			return why;
		}
	}
	return NULL;
}

/* Read the master until text appears (or the deadline); into acc. */
static bool
master_wait(int master, const char *text, char *acc, size_t accsz,
    size_t *len, unsigned long long deadline)
{
	while (strstr(acc, text) == NULL) {
		struct pollfd pf = { master, POLLIN, 0 };
		unsigned long long now = sbx__now_ms();
		ssize_t n;

		if (now >= deadline)
			return false;
		if (poll(&pf, 1, (int)(deadline - now)) <= 0)
			continue;
		n = read(master, acc + *len, accsz - 1 - *len);
		if (n <= 0)
			return false;
		*len += (size_t)n;
		acc[*len] = '\0';
		if (*len + 1 >= accsz)
			return strstr(acc, text) != NULL;
	}
	return true;
}

static void
check_agent_zone(const struct sbx_doctor_opts *o, const struct scratch *s,
    struct sbx_doctor_report *r)
{
	struct sbx_mount mnt = { s->probe, SBX_PROBE_IN };
	struct sbx_request req;
	struct run_arg a;
	char mark[64], portstr[16], v[64], why[160], acc[8192];
	char *cmd[] = { (char *)SBX_PROBE_IN, (char *)"--inject", mark,
		(char *)"--tcp", portstr, (char *)"--pause", NULL };
	int master = -1, slave = -1, lfd, port = 0, rc;
	unsigned long long deadline;
	const char *bad = NULL;
	size_t acclen = 0;
	pthread_t th;
	pid_t probe;

	acc[0] = '\0';
	snprintf(mark, sizeof mark, "corral-inject-%08lx%04x",
	    (unsigned long)time(NULL), (unsigned)getpid() & 0xffff);
	if ((lfd = host_listener(&port)) < 0) {
		sbx__doctor_check(r, "seccomp", false,
		    SBX_HALT_ISOLATION_UNSATISFIABLE,
		    "no host listener: %s", sbx_strerror(lfd));
		return;
	}
	snprintf(portstr, sizeof portstr, "%d", port);
	memset(&req, 0, sizeof req);
	req.id = "doctor";
	req.workspace = s->ws;
	req.cmd = cmd;
	req.init_path = s->init;
	req.uid = o->uid;
	req.gid = o->gid;
	req.ro_binds = &mnt;
	req.nro_binds = 1;
	memset(&a, 0, sizeof a);
	if ((rc = sbx_adapter_bwrap.plan(&req, &a.plan)) < 0 ||
	    (rc = openpty(&master, &slave, NULL, NULL, NULL)) < 0) {
		rc = rc < 0 && errno ? -errno : rc;
		sbx__doctor_check(r, "seccomp", false,
		    SBX_HALT_ISOLATION_UNSATISFIABLE,
		    "cannot set up the probe: %s", sbx_strerror(rc));
		goto out;
	}
	a.eo.cap = 1 << 16;
	a.eo.timeout_ms = PROBE_TIMEOUT_MS;
	a.eo.stdin_fd = slave;
	if (pthread_create(&th, NULL, run_thread, &a) != 0) {
		sbx__doctor_check(r, "seccomp", false,
		    SBX_HALT_ISOLATION_UNSATISFIABLE,
		    "cannot start the probe");
		goto out;
	}
	deadline = sbx__now_ms() + PROBE_TIMEOUT_MS;
	/* Paused: the host looks at the probe itself. */
	if (!master_wait(master, READY, acc, sizeof acc, &acclen, deadline))
		bad = "the probe never paused";
	else if ((probe = find_probe(o->uid)) < 0)
		bad = "the probe's process was not found";
	else
		bad = inspect_probe(probe, o->uid, why, sizeof why);
	if (write(master, "go\r", 3) < 0 && bad == NULL)
		bad = "cannot resume the probe";
	pthread_join(th, NULL);
	/* Whatever else it wrote to its terminal. */
	{
		struct pollfd pf = { master, POLLIN, 0 };

		while (acclen + 1 < sizeof acc && poll(&pf, 1, 100) > 0) {
			ssize_t n = read(master, acc + acclen,
			    sizeof acc - 1 - acclen);

			if (n <= 0)
				break;
			acclen += (size_t)n;
			acc[acclen] = '\0';
		}
	}
	if (a.rc < 0) {
		sbx__doctor_check(r, "seccomp", false,
		    SBX_HALT_ISOLATION_UNSATISFIABLE,
		    "the probe did not run: %s", sbx_strerror(a.rc));
		goto out;
	}
	if (bad == NULL && strstr(a.res.out, "\nend\n") == NULL)
		bad = "the probe did not finish";
	for (size_t i = 0; bad == NULL && i < sizeof must_eperm /
	    sizeof must_eperm[0]; i++) {
		const char *got = probe_value(a.res.out, must_eperm[i], v,
		    sizeof v);

		if (got == NULL || strcmp(got, "EPERM") != 0) {
			snprintf(why, sizeof why, "%s gave %s inside the agent "
			    "zone, not EPERM", must_eperm[i], got ? got :
			    "nothing");
			bad = why;
		}
	}
	if (bad == NULL && (probe_value(a.res.out, "fds", v, sizeof v) ==
	    NULL || strcmp(v, "0 1 2") != 0))
		bad = (snprintf(why, sizeof why, "inherited fds: %s", v), why);
	/* Confirmed on the host: nothing reached the terminal's input. */
	if (bad == NULL && strstr(acc, mark) != NULL)
		bad = "TIOCSTI reached the terminal (host side)";
	if (bad == NULL && host_reached(lfd))
		bad = "the agent zone reached a host loopback listener";
	if (bad == NULL && (probe_value(a.res.out, "tcp_host", v, sizeof v) ==
	    NULL || strcmp(v, "ok") == 0))
		bad = "the agent zone connected to the host's loopback";
	sbx__doctor_check(r, "seccomp", bad == NULL,
	    SBX_HALT_ISOLATION_UNSATISFIABLE,
	    bad == NULL ? "the real filter refuses TIOCSTI (also with high "
	    "bits), TIOCLINUX, user namespaces, vsock, io_uring, mount, "
	    "ptrace, keyrings, bpf inside the agent zone; confirmed on the "
	    "host" :
	    "%s", bad);
out:
	if (a.plan != NULL)
		sbx_plan_free(a.plan);
	sbx_exec_result_clear(&a.res);
	if (master >= 0)
		close(master);
	if (slave >= 0)
		close(slave);
	close(lfd);
}

/* The exec zone has no network at all (SPEC 8.2). */
static void
check_exec_zone(const struct sbx_doctor_opts *o, const struct scratch *s,
    struct sbx_doctor_report *r)
{
	struct sbx_mount mnt = { s->probe, SBX_PROBE_IN };
	struct sbx_exec_opts eo = { 1 << 16, PROBE_TIMEOUT_MS, -1 };
	struct sbx_exec_result res;
	struct sbx_request req;
	struct sbx_plan *p = NULL;
	const struct sbx_data *d;
	char portstr[16], v[64];
	char *cmd[] = { (char *)SBX_PROBE_IN, (char *)"--tcp", portstr, NULL };
	const char *bad = NULL;
	int lfd, port = 0, rc;
	bool unshared = false;

	if ((lfd = host_listener(&port)) < 0) {
		sbx__doctor_check(r, "exec_network", false,
		    SBX_HALT_ISOLATION_UNSATISFIABLE, "no host listener");
		return;
	}
	snprintf(portstr, sizeof portstr, "%d", port);
	memset(&req, 0, sizeof req);
	req.id = "doctor";
	req.workspace = s->ws;
	req.cmd = cmd;
	req.uid = o->uid;
	req.gid = o->gid;
	req.ro_binds = &mnt;
	req.nro_binds = 1;
	if ((rc = sbx_bwrap_exec_plan(&req, &p)) < 0) {
		sbx__doctor_check(r, "exec_network", false,
		    SBX_HALT_ISOLATION_UNSATISFIABLE, "no exec plan: %s",
		    sbx_strerror(rc));
		close(lfd);
		return;
	}
	/* The plan itself: its own network namespace, never the host's. */
	d = sbx_plan_data_find(p, SBX_BWRAP_ARGS_FD);
	for (size_t off = 0; d != NULL && off < d->len;
	    off += strlen(d->bytes + off) + 1) {
		if (strcmp(d->bytes + off, "--unshare-net") == 0)
			unshared = true;
		if (strcmp(d->bytes + off, "--share-net") == 0)
			bad = "the exec zone's plan shares the host network";
	}
	if (!unshared && bad == NULL)
		bad = "the exec zone's plan keeps the host network";
	if (bad == NULL && (rc = sbx_exec_run(p, &eo, &res)) < 0)
		bad = "the exec-zone probe did not run";
	if (bad == NULL) {
		if (host_reached(lfd))
			bad = "the exec zone reached a host listener";
		else if (probe_value(res.out, "tcp_host", v, sizeof v) ==
		    NULL || strcmp(v, "ok") == 0)
			bad = "the exec zone connected to the host's loopback";
		else if (probe_value(res.out, "ifaces", v, sizeof v) == NULL ||
		    strcmp(v, "lo") != 0)
			bad = "the exec zone has a network interface";
		else if (probe_value(res.out, "vsock", v, sizeof v) == NULL ||
		    strcmp(v, "EPERM") != 0)
			bad = "vsock is open in the exec zone";
		sbx_exec_result_clear(&res);
	}
	sbx__doctor_check(r, "exec_network", bad == NULL,
	    SBX_HALT_ISOLATION_UNSATISFIABLE,
	    bad == NULL ? "the exec zone has no network (only lo; a host "
	    "listener was never reached)" : "%s", bad);
	sbx_plan_free(p);
	close(lfd);
}

/* cgroups: a mode that enforces, and a create/remove round trip. */
void
sbx__doctor_cgroups(const struct sbx_doctor_opts *o,
    struct sbx_doctor_report *r)
{
	struct sbx_limits lim = { 0 };
	struct sbx_cgroup *cg = NULL;
	char id[64];
	int rc;

	snprintf(id, sizeof id, SBX_DOCTOR_ID_PREFIX "%d", (int)getpid());
	lim.memory = 64ull << 20;
	lim.pids = 16;
	lim.cpu_milli = 500;
	if ((rc = sbx_cgroup_locate(o->state_dir, id, &cg)) < 0) {
		sbx__doctor_check(r, "cgroups", false,
		    SBX_HALT_ISOLATION_UNSATISFIABLE,
		    "no cgroup hierarchy enforces memory, pids and cpu here: "
		    "%s", sbx_strerror(rc));
		return;
	}
	if ((rc = step(o, 0, SBX_DOCTOR_CGROUP, id)) < 0) {
		sbx__doctor_check(r, "cgroups", false,
		    SBX_HALT_ISOLATION_UNSATISFIABLE,
		    "cannot journal the probe cgroup: %s", sbx_strerror(rc));
	} else if ((rc = sbx_cgroup_create(cg, &lim)) < 0 ||
	    (rc = step(o, 1, SBX_DOCTOR_CGROUP, id)) < 0) {
		sbx__doctor_check(r, "cgroups", false,
		    SBX_HALT_ISOLATION_UNSATISFIABLE,
		    "cannot create %s: %s", cg->c[0].dir, sbx_strerror(rc));
		if (sbx_cgroup_teardown(cg, 5000) == 0 &&
		    step(o, 2, SBX_DOCTOR_CGROUP, id) < 0) {
			/* the next preflight or reconcile */
		}
	} else if ((rc = sbx_cgroup_teardown(cg, 5000)) < 0) {
		sbx__doctor_check(r, "cgroups", false,
		    SBX_HALT_ISOLATION_UNSATISFIABLE,
		    "cannot remove %s: %s", cg->c[0].dir, sbx_strerror(rc));
	} else if ((rc = step(o, 2, SBX_DOCTOR_CGROUP, id)) < 0) {
		sbx__doctor_check(r, "cgroups", false,
		    SBX_HALT_ISOLATION_UNSATISFIABLE,
		    "cannot journal the probe cgroup's removal: %s",
		    sbx_strerror(rc));
	} else {
		sbx__doctor_check(r, "cgroups", true, SBX_HALT_NONE,
		    "cgroup %s: memory, "
		    "pids, cpu and freezer writable", sbx_cgroup_mode_name(
		    cg->mode));
	}
	sbx_cgroup_free(cg);
}
/* The pid a "<pid>" or "<pid>-..." name starts with, if it is gone. */
static bool
pid_gone(const char *name)
{
	char *end;
	long pid = strtol(name, &end, 10);

	return end != name && pid > 0 && (*end == '\0' || *end == '-') &&
	    kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

int
sbx_doctor_reclaim(const char *state_dir)
{
	char **ids = NULL, pre[128], path[PATH_MAX];
	const char *base = SCRATCH_NAME;
	struct dirent *e;
	struct stat sb;
	int n = 0;
	DIR *d;

	if (scratch_prefix(state_dir, pre, sizeof pre) < 0)
		return -EINVAL;
	if (sbx_cgroup_list(state_dir, &ids) == 0) {
		for (size_t i = 0; ids[i] != NULL; i++) {
			struct sbx_cgroup *cg = NULL;
			const char *id = ids[i];

			if (strncmp(id, SBX_DOCTOR_ID_PREFIX,
			    strlen(SBX_DOCTOR_ID_PREFIX)) != 0 ||
			    !pid_gone(id + strlen(SBX_DOCTOR_ID_PREFIX)))
				continue;
			if (sbx_cgroup_locate(state_dir, id, &cg) == 0 &&
			    sbx_cgroup_teardown(cg, 5000) == 0)
				n++;
			sbx_cgroup_free(cg);
		}
		sbx_strv_free(ids);
	}
	/* Only root's directories of this state directory's dead runs. */
	base = strrchr(pre, '/') + 1;
	if ((d = opendir(SCRATCH_DIR)) == NULL)
		return n;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, base, strlen(base)) != 0 ||
		    !pid_gone(e->d_name + strlen(base)))
			continue;
		snprintf(path, sizeof path, SCRATCH_DIR "/%s", e->d_name);
		if (lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode) &&
		    sb.st_uid == 0 && sbx_workspace_rmtree_safe(path) == 0)
			n++;
	}
	closedir(d);
	return n;
}

int
sbx_doctor_remove(const char *state_dir, const char *kind,
    const char *identity)
{
	char pre[128];
	struct stat sb;
	int rc;

	if (state_dir == NULL || kind == NULL || identity == NULL)
		return -EINVAL;
	if (strcmp(kind, SBX_DOCTOR_CGROUP) == 0) {
		struct sbx_cgroup *cg = NULL;

		if (strncmp(identity, SBX_DOCTOR_ID_PREFIX,
		    strlen(SBX_DOCTOR_ID_PREFIX)) != 0)
			return -EINVAL;
		if ((rc = sbx_cgroup_locate(state_dir, identity, &cg)) < 0)
			return rc;
		rc = sbx_cgroup_teardown(cg, 5000);
		sbx_cgroup_free(cg);
		return rc;
	}
	if (strcmp(kind, SBX_DOCTOR_DIR) != 0)
		return -EINVAL;
	/* Only this state directory's scratch, one level under /tmp. */
	if ((rc = scratch_prefix(state_dir, pre, sizeof pre)) < 0)
		return rc;
	if (strncmp(identity, pre, strlen(pre)) != 0 ||
	    strchr(identity + strlen(pre), '/') != NULL ||
	    strstr(identity, "..") != NULL)
		return -EINVAL;
	if (lstat(identity, &sb) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(sb.st_mode) || sb.st_uid != 0)
		return -EPERM;
	return sbx_workspace_rmtree_safe(identity);
}

/* The checks that run a sandbox (not in a quick run). */
void
sbx__doctor_zones(const struct sbx_doctor_opts *o,
    struct sbx_doctor_report *r)
{
	struct scratch s;
	int rc;

	check_userns(o, r);
	memset(&s, 0, sizeof s);
	if (r->halt == SBX_HALT_NONE) {
		if ((rc = scratch_make(o, &s)) < 0)
			sbx__doctor_check(r, "seccomp", false,
			    SBX_HALT_ISOLATION_UNSATISFIABLE,
			    "no scratch directory for the probe: %s",
			    sbx_strerror(rc));
		else {
			check_agent_zone(o, &s, r);
			check_exec_zone(o, &s, r);
		}
	}
	scratch_free(o, &s);
}
