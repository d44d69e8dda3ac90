/*
 * sbx_recipe.c: the pre-exec recipe, the only code that runs between fork
 * and exec for either zone (the agent on its PTY, pty/proc.c; checks and
 * probes, sbx_exec.c). The parent prepares everything that allocates (the
 * path to exec, the environment); the child only makes async-signal-safe
 * calls: signals, cgroup join, session, fd map and close_range, rlimits,
 * the capability bounding set, the uid drop, no_new_privs, umask, cwd.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"

extern char **environ;

/* The copies of the kept fds go this high before they take their place. */
#define RECIPE_FD_HIGH 100
#define RECIPE_ERRFD_HIGH 200

/* ---- parent side: everything that may allocate ------------------------ */

/* The first executable `name` on PATH, as execvp would find it. */
static void
resolve(struct sbx_recipe *r, const char *name)
{
	const char *path = getenv("PATH"), *p, *e;
	struct stat sb;
	size_t n, dl;

	r->path = name;
	if (strchr(name, '/') != NULL || *name == '\0')
		return;
	if (path == NULL)
		path = "/bin:/usr/bin";
	n = strlen(name);
	for (p = path;; p = e + 1) {
		e = strchr(p, ':');
		dl = e != NULL ? (size_t)(e - p) : strlen(p);
		if (dl == 0) {
			p = ".";
			dl = 1;
		}
		if (dl + 1 + n < sizeof r->pathbuf) {
			memcpy(r->pathbuf, p, dl);
			r->pathbuf[dl] = '/';
			memcpy(r->pathbuf + dl + 1, name, n + 1);
			if (stat(r->pathbuf, &sb) == 0 && S_ISREG(sb.st_mode) &&
			    access(r->pathbuf, X_OK) == 0) {
				r->path = r->pathbuf;
				return;
			}
		}
		if (e == NULL)
			break;
	}
}

/* The owner's environment with `set` (NAME=value) put in. */
static int
inherit(struct sbx_recipe *r, const char *set)
{
	const char *eq = strchr(set, '=');
	size_t n = 0, k = 0, nl;

	if (eq == NULL)
		return -EINVAL;
	nl = (size_t)(eq - set) + 1;
	while (environ != NULL && environ[n] != NULL)
		n++;
	if ((r->env_own = calloc(n + 2, sizeof *r->env_own)) == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (strncmp(environ[i], set, nl) != 0)
			r->env_own[k++] = environ[i];
	}
	r->env_own[k++] = (char *)set;
	r->env_own[k] = NULL;
	r->envp = r->env_own;
	return 0;
}

int
sbx_recipe_prepare(struct sbx_recipe *r, const char *env_set)
{
	static char *empty[] = { NULL };
	const char *hook;
	int rc;

	if (r == NULL || r->plan == NULL || r->plan->argv == NULL ||
	    r->plan->argv[0] == NULL || r->errfd < 0)
		return -EINVAL;
	r->env_own = NULL;
	r->hook[0] = '\0';
	resolve(r, r->plan->argv[0]);
	if (!r->plan->inherit_env)
		r->envp = r->plan->envp != NULL ? r->plan->envp : empty;
	else if (env_set == NULL)
		r->envp = environ != NULL ? environ : empty;
	else if ((rc = inherit(r, env_set)) < 0)
		return rc;
#ifdef SBX_TEST_OVERRIDES
	hook = getenv("CORRAL_TEST_RECIPE_DIR");
	if (hook != NULL && *hook == '/' && strlen(hook) + 24 <
	    sizeof r->hook)
		memcpy(r->hook, hook, strlen(hook) + 1);
#else
	(void)hook;
#endif
	return 0;
}

void
sbx_recipe_clear(struct sbx_recipe *r)
{
	if (r == NULL)
		return;
	free(r->env_own);
	r->env_own = NULL;
	r->envp = NULL;
}

int
sbx_recipe_wait(int errfd, char *what, size_t whatsz)
{
	char msg[512], *sp;
	long err;
	ssize_t n;

	if (whatsz > 0)
		what[0] = '\0';
	do
		n = read(errfd, msg, sizeof msg - 1);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		return 0;
	if (n < 0)
		return -errno;
	msg[n] = '\0';
	err = strtol(msg, &sp, 10);
	if (*sp == ' ')
		sp++;
	if (whatsz > 0) {
		strncpy(what, sp, whatsz - 1);
		what[whatsz - 1] = '\0';
	}
	return err > 0 && err < 4096 ? -(int)err : -EIO;
}

/* ---- child side: async-signal-safe calls only -------------------------- */

/* Decimal digits of v at buf (no NUL); their count. */
static size_t
utoa(char *buf, unsigned long v)
{
	char tmp[24];
	size_t n = 0, k = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n > 0)
		buf[k++] = tmp[--n];
	return k;
}

/* Tell the parent "errno what" on the error pipe, and die. */
static void __attribute__((noreturn))
fail(int errfd, const char *what, int err)
{
	char msg[512];
	size_t n = utoa(msg, (unsigned long)(err > 0 ? err : EIO)), wl;

	msg[n++] = ' ';
	wl = strlen(what);
	if (wl > sizeof msg - n)
		wl = sizeof msg - n;
	memcpy(msg + n, what, wl);
	n += wl;
	if (write(errfd, msg, n) < 0) {
		/* the parent sees a bare failure */
	}
	_exit(127);
}

#ifdef SBX_TEST_OVERRIDES
/*
 * The test hook (builds with tests only): the child's own view of itself
 * right before exec, in $CORRAL_TEST_RECIPE_DIR/<pid>: its /proc/self/status
 * (CapEff, CapPrm, CapBnd, CapAmb, NoNewPrivs, Uid...), a line
 * "Fds:\t0 1 2 ..." listing every fd the exec will pass on, "MntNs:\t" its
 * mount namespace, and for a plan with a private bind "Bind:\t1" where
 * bind_dst is bind_src (same device and inode), else "Bind:\t0".
 */
static int
hook_open(const struct sbx_recipe *r)
{
	char path[sizeof r->hook];
	size_t n;

	if (r->hook[0] == '\0')
		return -1;
	n = strlen(r->hook);
	memcpy(path, r->hook, n);
	path[n++] = '/';
	n += utoa(path + n, (unsigned long)getpid());
	path[n] = '\0';
	return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

static void
hook_write(int hookfd, const struct sbx_plan *pl)
{
	struct stat a, b;
	char buf[8192];
	size_t len = 0;
	ssize_t n;
	int fd;

	if (hookfd < 0)
		return;
	if ((fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC)) >= 0) {
		while (len < sizeof buf && (n = read(fd, buf + len,
		    sizeof buf - len)) > 0)
			len += (size_t)n;
		close(fd);
	}
	if (write(hookfd, buf, len) < 0)
		return;
	len = 0;
	memcpy(buf, "Fds:\t", 5);
	len = 5;
	for (int i = 0; i < 65536 && len + 24 + 300 < sizeof buf; i++) {
		int fl = fcntl(i, F_GETFD);

		if (fl < 0 || (fl & FD_CLOEXEC))
			continue;
		len += utoa(buf + len, (unsigned long)i);
		buf[len++] = ' ';
	}
	buf[len++] = '\n';
	memcpy(buf + len, "MntNs:\t", 7);
	len += 7;
	if ((n = readlink("/proc/self/ns/mnt", buf + len, 256)) > 0)
		len += (size_t)n;
	buf[len++] = '\n';
	if (pl->bind_src != NULL) {
		memcpy(buf + len, "Bind:\t", 6);
		len += 6;
		buf[len++] = stat(pl->bind_src, &a) == 0 &&
		    stat(pl->bind_dst, &b) == 0 && a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino ? '1' : '0';
		buf[len++] = '\n';
	}
	if (write(hookfd, buf, len) < 0)
		return;
	close(hookfd);
}
#endif

void
sbx_recipe_exec(const struct sbx_recipe *r)
{
	const struct sbx_plan *pl = r->plan;
	int lo[3], hi[SBX_PLAN_MAX_FDS], maxfd = 2, errfd = r->errfd, fd;
	int hookfd = -1;
	sigset_t none;

	/* Default dispositions first, then unblock: no inherited handler runs. */
	for (int s = 1; s < NSIG; s++)
		signal(s, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Join the lease's cgroups first: everything after is counted. */
	for (int i = 0; i < pl->ncgroups; i++) {
		if ((fd = open(pl->cgroup_procs[i], O_WRONLY | O_CLOEXEC)) < 0)
			fail(errfd, pl->cgroup_procs[i], errno);
		if (write(fd, "0", 1) != 1)
			fail(errfd, pl->cgroup_procs[i], errno);
		close(fd);
	}
	if (pl->bind_src != NULL) {
		if (unshare(CLONE_NEWNS) < 0)
			fail(errfd, "mount namespace", errno);
		if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
			fail(errfd, "mount namespace", errno);
		if (mkdir(pl->bind_dst, 0755) < 0 && errno != EEXIST)
			fail(errfd, pl->bind_dst, errno);
		if (mount(pl->bind_src, pl->bind_dst, NULL, MS_BIND | MS_REC,
		    NULL) < 0)
			fail(errfd, pl->bind_dst, errno);
	}
	if (setsid() < 0)
		fail(errfd, "setsid", errno);
	if (r->take_ctty && ioctl(r->stdio[0], TIOCSCTTY, 0) < 0)
		fail(errfd, "TIOCSCTTY", errno);
	/* Every fd we keep goes high first, then to its place. */
	for (int i = 0; i < 3; i++) {
		if ((lo[i] = fcntl(r->stdio[i], F_DUPFD_CLOEXEC,
		    RECIPE_FD_HIGH)) < 0)
			fail(errfd, "dup", errno);
	}
	for (int i = 0; i < pl->nfds; i++) {
		if ((hi[i] = fcntl(pl->fds[i].from, F_DUPFD_CLOEXEC,
		    RECIPE_FD_HIGH)) < 0)
			fail(errfd, "dup fd", errno);
	}
	if ((errfd = fcntl(errfd, F_DUPFD_CLOEXEC, RECIPE_ERRFD_HIGH)) < 0)
		_exit(127);
	for (int i = 0; i < 3; i++) {
		if (dup2(lo[i], i) < 0)
			fail(errfd, "dup2", errno);
	}
	for (int i = 0; i < pl->nfds; i++) {
		if (dup2(hi[i], pl->fds[i].to) < 0)
			fail(errfd, "dup2", errno);
		if (pl->fds[i].to > maxfd)
			maxfd = pl->fds[i].to;
	}
	/*
	 * Close everything from the first fd after the zone's own (stdio,
	 * --args, data, seccomp), keeping only the error pipe, which is
	 * close-on-exec: bwrap would pass every other one on (SANDBOX.md 0.7
	 * and its correction).
	 */
	if (errfd > maxfd + 1 && close_range((unsigned)maxfd + 1,
	    (unsigned)errfd - 1, 0) < 0)
		fail(errfd, "close_range", errno);
	if (close_range((unsigned)errfd + 1, ~0U, 0) < 0)
		fail(errfd, "close_range", errno);
#ifdef SBX_TEST_OVERRIDES
	hookfd = hook_open(r);
#endif
	for (int i = 0; i < pl->nrlimits; i++) {
		struct rlimit rl = { pl->rlimits[i].cur, pl->rlimits[i].max };

		if (setrlimit(pl->rlimits[i].resource, &rl) < 0)
			fail(errfd, "setrlimit", errno);
	}
	if (pl->drop_uid) {
		/*
		 * An empty capability bounding set first (it needs
		 * CAP_SETPCAP, gone with the uid): the zone keeps no
		 * capability it could ever regain (SPEC 8.3; issue 6d).
		 */
		for (int cap = 0; cap <= 63; cap++) {
			if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 &&
			    errno != EINVAL)
				fail(errfd, "capability bounding set", errno);
		}
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0
		    && errno != EINVAL)
			fail(errfd, "ambient capabilities", errno);
		if (setgroups(0, NULL) < 0)
			fail(errfd, "setgroups", errno);
		if (setresgid(pl->gid, pl->gid, pl->gid) < 0)
			fail(errfd, "setresgid", errno);
		if (setresuid(pl->uid, pl->uid, pl->uid) < 0)
			fail(errfd, "setresuid", errno);
		if (getuid() != pl->uid || geteuid() != pl->uid ||
		    getgid() != pl->gid || getegid() != pl->gid)
			fail(errfd, "uid drop", EPERM);
	}
	if (pl->no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		fail(errfd, "no_new_privs", errno);
	if (pl->umask >= 0)
		umask((mode_t)pl->umask);
	if (pl->cwd != NULL && chdir(pl->cwd) < 0)
		fail(errfd, pl->cwd, errno);
#ifdef SBX_TEST_OVERRIDES
	hook_write(hookfd, pl);
#else
	(void)hookfd;
#endif
	execve(r->path, pl->argv, r->envp);
	fail(errfd, pl->argv[0], errno);
}
