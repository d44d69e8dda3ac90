/*
 * facts.c: agent-agnostic process facts from /proc (SPEC 5.3): the PTY's
 * foreground process group, whether a foreground process is asleep in a
 * terminal read (true for shells, `read`, Python input() and simple CLIs;
 * false for event-loop agents such as node, which sleep in epoll), the CPU
 * ticks of the session's processes, whether any foreground thread waits on
 * the terminal at all (a read, a poll/select, or an epoll set holding it),
 * and process start times (PID reuse).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pty/pty.h"
#include "pty/pty_int.h"

#define FACTS_TREE_MAX 4096	/* processes of one lease looked at */

struct stat_fields {
	char comm[64];
	char state;
	pid_t pgrp, session;
	uint64_t utime, stime, starttime;
};

static ssize_t
read_small(const char *path, char *buf, size_t sz)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	do
		n = read(fd, buf, sz - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

static int
read_stat(pid_t pid, struct stat_fields *f)
{
	char path[64], buf[1024], *rp, *save = NULL, *tok;
	const char *lp;
	int field = 3;
	size_t cl;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (read_small(path, buf, sizeof buf) <= 0)
		return -1;
	/* comm may hold spaces and parentheses: take the last ')'. */
	lp = strchr(buf, '(');
	rp = strrchr(buf, ')');
	if (lp == NULL || rp == NULL || rp < lp)
		return -1;
	cl = (size_t)(rp - lp - 1);
	if (cl >= sizeof f->comm)
		cl = sizeof f->comm - 1;
	memcpy(f->comm, lp + 1, cl);
	f->comm[cl] = '\0';
	for (tok = strtok_r(rp + 1, " ", &save); tok != NULL;
	     tok = strtok_r(NULL, " ", &save), field++) {
		switch (field) {
		case 3:
			f->state = tok[0];
			break;
		case 5:
			f->pgrp = (pid_t)strtol(tok, NULL, 10);
			break;
		case 6:
			f->session = (pid_t)strtol(tok, NULL, 10);
			break;
		case 14:
			f->utime = strtoull(tok, NULL, 10);
			break;
		case 15:
			f->stime = strtoull(tok, NULL, 10);
			break;
		case 22:
			f->starttime = strtoull(tok, NULL, 10);
			return 0;
		default:
			break;
		}
	}
	return -1;
}

uint64_t
pty__facts_starttime(pid_t pid)
{
	struct stat_fields f;

	if (pid <= 0 || read_stat(pid, &f) < 0)
		return 0;
	return f.starttime;
}

/* Calls fn for every numeric /proc entry; stops when fn returns nonzero. */
static void
each_pid(int (*fn)(pid_t, void *), void *ud)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		if (fn((pid_t)strtol(e->d_name, NULL, 10), ud))
			break;
	}
	closedir(d);
}

struct session_scan {
	pid_t sid;
	pid_t *pids;
	int n, max;
};

static int
session_one(pid_t pid, void *ud)
{
	struct session_scan *s = ud;
	struct stat_fields f;

	if (read_stat(pid, &f) == 0 && f.session == s->sid && f.state != 'Z') {
		if (s->n >= s->max)
			return 1;
		s->pids[s->n++] = pid;
	}
	return 0;
}

int
pty__facts_session_pids(pid_t sid, pid_t *pids, int max)
{
	struct session_scan s = { sid, pids, 0, max };

	if (sid <= 0 || max <= 0)
		return 0;
	each_pid(session_one, &s);
	return s.n;
}

/* Is fd N of pid a terminal device? */
static bool
fd_is_tty(pid_t pid, long fd)
{
	char path[64], target[128];
	ssize_t n;

	snprintf(path, sizeof path, "/proc/%d/fd/%ld", (int)pid, fd);
	if ((n = readlink(path, target, sizeof target - 1)) <= 0)
		return false;
	target[n] = '\0';
	return strncmp(target, "/dev/pts/", 9) == 0 ||
	    strncmp(target, "/dev/tty", 8) == 0 ||
	    strcmp(target, "/dev/console") == 0;
}

/*
 * Asleep in a terminal read: /proc/PID/syscall names the blocking call.
 * read(2) on a tty fd, or select/poll family waiting with fd 0 a tty (how
 * readline-based shells and Python's input() wait). epoll (node, most event
 * loops) deliberately does not count: it says nothing about the terminal.
 */
static bool
in_tty_read(pid_t pid)
{
	char path[64], buf[256];
	long nr;
	unsigned long arg0;

	snprintf(path, sizeof path, "/proc/%d/syscall", (int)pid);
	if (read_small(path, buf, sizeof buf) <= 0)
		return false;
	if (sscanf(buf, "%ld %lx", &nr, &arg0) != 2)
		return false;
	switch (nr) {
	case SYS_read:
	case SYS_readv:
		return fd_is_tty(pid, (long)arg0);
	case SYS_select:
	case SYS_pselect6:
	case SYS_poll:
	case SYS_ppoll:
		return fd_is_tty(pid, 0);
	default:
		return false;
	}
}

/* Does the epoll instance epfd of pid watch a terminal? (fdinfo "tfd:") */
static bool
epoll_has_tty(pid_t pid, long epfd)
{
	char path[64], buf[8192], *p;

	snprintf(path, sizeof path, "/proc/%d/fdinfo/%ld", (int)pid, epfd);
	if (read_small(path, buf, sizeof buf) <= 0)
		return false;
	for (p = buf; (p = strstr(p, "tfd:")) != NULL; p += 4) {
		long fd = strtol(p + 4, NULL, 10);

		if (fd >= 0 && fd_is_tty(pid, fd))
			return true;
	}
	return false;
}

/* What one thread is blocked in, as far as the terminal goes. */
enum twait { TW_UNKNOWN, TW_OTHER, TW_TTY };

/*
 * Thread tid of pid waits on the terminal: read(2) on a tty fd, a
 * select/poll family call with fd 0 a tty (the same approximation as
 * in_tty_read), or epoll_wait on a set that holds a tty fd (node, Python
 * asyncio, Rust's mio: event loops listening to their terminal). A thread
 * running, sleeping, waiting on children, a futex or a socket does not.
 * TW_UNKNOWN when its syscall file cannot be read (another user's process
 * without ptrace rights).
 */
static enum twait
thread_wait(pid_t pid, const char *tid)
{
	char path[320], buf[256];
	long nr;
	unsigned long arg0;

	snprintf(path, sizeof path, "/proc/%d/task/%s/syscall", (int)pid, tid);
	if (read_small(path, buf, sizeof buf) <= 0)
		return TW_UNKNOWN;
	if (sscanf(buf, "%ld %lx", &nr, &arg0) != 2)
		return TW_OTHER;	/* "running", or not in a syscall */
	switch (nr) {
	case SYS_read:
	case SYS_readv:
		return fd_is_tty(pid, (long)arg0) ? TW_TTY : TW_OTHER;
	case SYS_select:
	case SYS_pselect6:
	case SYS_poll:
	case SYS_ppoll:
		return fd_is_tty(pid, 0) ? TW_TTY : TW_OTHER;
	case SYS_epoll_wait:
	case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
	case SYS_epoll_pwait2:
#endif
		return epoll_has_tty(pid, (long)arg0) ? TW_TTY : TW_OTHER;
	default:
		return TW_OTHER;
	}
}

/* The terminal waits of every thread of pid: sets *wait and *known. */
static void
proc_wait(pid_t pid, bool *wait, bool *known)
{
	char path[64];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL)
		return;
	while ((e = readdir(d)) != NULL && !*wait) {
		enum twait w;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		w = thread_wait(pid, e->d_name);
		if (w != TW_UNKNOWN)
			*known = true;
		if (w == TW_TTY)
			*wait = true;
	}
	closedir(d);
}

struct fg_scan {
	pid_t pgrp, sid;
	bool tty_read, tty_wait, wait_known;
	uint64_t ticks;
	int nprocs, nbeyond;
	char comm[64];
};

/* Count pid in: its CPU, and its terminal waits when it is in the fg. */
static void
fg_add(struct fg_scan *s, pid_t pid, bool any)
{
	struct stat_fields f;

	if (read_stat(pid, &f) < 0 || f.state == 'Z')
		return;
	if (!any && f.session != s->sid && f.pgrp != s->pgrp)
		return;
	s->nprocs++;
	s->ticks += f.utime + f.stime;
	if (f.pgrp == s->pgrp) {
		if (pid == s->pgrp || s->comm[0] == '\0')
			snprintf(s->comm, sizeof s->comm, "%s", f.comm);
		if (f.state == 'S' && in_tty_read(pid))
			s->tty_read = true;
		proc_wait(pid, &s->tty_wait, &s->wait_known);
	}
}

static int
fg_one(pid_t pid, void *ud)
{
	fg_add(ud, pid, false);
	return 0;
}

/* Append the pids listed in a children file to v (up to max). */
static int
read_children(const char *path, pid_t *v, int n, int max)
{
	char buf[4096], *p, *e;

	if (read_small(path, buf, sizeof buf) <= 0)
		return n;
	for (p = buf; n < max; p = e) {
		long pid = strtol(p, &e, 10);

		if (e == p)
			break;
		if (pid > 0)
			v[n++] = (pid_t)pid;
	}
	return n;
}

/*
 * The leader and its descendants from /proc/PID/task/TID/children
 * (CONFIG_PROC_CHILDREN): a few reads per process of the lease instead of
 * one per process on the machine, so sampling stays cheap on a busy host.
 * Returns how many, or -1 when the kernel has no children files.
 */
static int
tree_pids(pid_t leader, pid_t *v, int max)
{
	char path[64];
	struct dirent *e;
	int n = 0, i;
	DIR *d;

	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)leader,
	    (int)leader);
	if (access(path, R_OK) < 0)	/* gone, or no children files */
		return access("/proc/thread-self/children", R_OK) < 0 ? -1 : 0;
	v[n++] = leader;
	for (i = 0; i < n && n < max; i++) {
		snprintf(path, sizeof path, "/proc/%d/task", (int)v[i]);
		if ((d = opendir(path)) == NULL)
			continue;
		while ((e = readdir(d)) != NULL && n < max) {
			char cp[320];

			if (!isdigit((unsigned char)e->d_name[0]))
				continue;
			snprintf(cp, sizeof cp, "/proc/%d/task/%s/children",
			    (int)v[i], e->d_name);
			n = read_children(cp, v, n, max);
		}
		closedir(d);
	}
	return n;
}

static int
pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/*
 * The agent's processes outside what was scanned (tree: sorted, n of
 * them; NULL when the whole of /proc was scanned by session): their CPU
 * is the lease's work too (issue 20: a trusted_local agent's daemon that
 * streams a turn after leaving the session, SPEC 5.3).
 */
static void
extra_add(struct fg_scan *s, const pid_t *tree, int n, const pid_t *extra,
    size_t nextra)
{
	for (size_t i = 0; i < nextra && i < FACTS_TREE_MAX; i++) {
		struct stat_fields f;
		int k;

		if (extra[i] <= 0)
			continue;
		if (tree != NULL) {
			if (bsearch(&extra[i], tree, (size_t)n, sizeof *tree,
			    pid_cmp) != NULL)
				continue;
		} else if (read_stat(extra[i], &f) < 0 ||
		    f.session == s->sid || f.pgrp == s->pgrp) {
			continue;	/* the scan by session counted these */
		}
		k = s->nprocs;
		fg_add(s, extra[i], true);
		s->nbeyond += s->nprocs - k;
	}
}

int
pty__facts_sample(int master_fd, pid_t sid, const pid_t *extra,
    size_t nextra, struct pty_facts *out)
{
	struct fg_scan s;
	pid_t *tree;
	int n = -1;

	memset(out, 0, sizeof *out);
	out->fg_pgrp = -1;
	if (sid <= 0)
		return -EINVAL;
	memset(&s, 0, sizeof s);
	s.sid = sid;
	s.pgrp = master_fd >= 0 ? tcgetpgrp(master_fd) : -1;
	if ((tree = malloc(FACTS_TREE_MAX * sizeof *tree)) != NULL &&
	    (n = tree_pids(sid, tree, FACTS_TREE_MAX)) >= 0) {
		/* The lease's processes are the leader's descendants. */
		for (int i = 0; i < n; i++)
			fg_add(&s, tree[i], true);
		qsort(tree, (size_t)n, sizeof *tree, pid_cmp);
		extra_add(&s, tree, n, extra, nextra);
	} else {
		each_pid(fg_one, &s);
		extra_add(&s, NULL, 0, extra, nextra);
	}
	free(tree);
	out->fg_pgrp = s.pgrp;
	out->fg_tty_read = s.tty_read;
	out->fg_tty_wait = s.tty_wait || s.tty_read;
	out->fg_wait_known = s.wait_known || s.tty_read;
	out->cpu_ticks = s.ticks;
	out->nprocs = s.nprocs;
	out->nbeyond = s.nbeyond;
	snprintf(out->fg_comm, sizeof out->fg_comm, "%s", s.comm);
	return 0;
}

int
pty__facts_cmdline(pid_t pid, char *buf, size_t bufsz, const char **argv,
    int max)
{
	char path[64];
	ssize_t n;
	int argc = 0;

	if (pid <= 0 || bufsz < 2 || max <= 0)
		return 0;
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	if ((n = read_small(path, buf, bufsz)) <= 0)
		return 0;
	buf[n] = '\0';
	for (ssize_t i = 0; i < n && argc < max; ) {
		argv[argc++] = buf + i;
		i += (ssize_t)strlen(buf + i) + 1;
	}
	return argc;
}
