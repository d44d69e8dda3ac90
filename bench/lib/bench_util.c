/*
 * bench_util.c: helpers shared by the `make bench` programs: clocks, /proc
 * readings (CPU ticks, PSS), holders started as separate processes, a
 * private tmux server, and result rows (see bench_util.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

#define BU_TMUX_MAXARGS 32

uint64_t
bu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t
bu_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void
bu_sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
		.tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void
bu_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

char *
bu_fmt(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		bu_die("out of memory");
	return s;
}

char *
bu_bindir(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	char *slash;

	if (n <= 0)
		bu_die("readlink /proc/self/exe: %s", strerror(errno));
	buf[n] = '\0';
	if ((slash = strrchr(buf, '/')) != NULL)
		*slash = '\0';
	return bu_fmt("%s", buf);
}

void
bu_mkdir(const char *path)
{
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		bu_die("mkdir %s: %s", path, strerror(errno));
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double
bu_quantile(double *v, size_t n, double p)
{
	size_t k;

	if (n == 0)
		return NAN;
	qsort(v, n, sizeof *v, cmp_double);
	k = (size_t)ceil(p * (double)n);
	if (k > 0)
		k--;
	if (k >= n)
		k = n - 1;
	return v[k];
}

double
bu_median3(double a, double b, double c)
{
	double v[3] = { a, b, c };

	return bu_quantile(v, 3, 0.5);
}

/* ---- /proc ----------------------------------------------------------- */

int
bu_cpu_read(pid_t pid, struct bu_cpu *out)
{
	char path[64], buf[1024], *p;
	unsigned long long f[20];
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* Fields after the command name: state is field 3. */
	if ((p = strrchr(buf, ')')) == NULL)
		return -1;
	p += 2;
	p = strchr(p, ' '); /* skip the state */
	for (i = 4; i <= 17 && p != NULL; i++) {
		f[i - 4] = strtoull(p, &p, 10);
	}
	if (i <= 17)
		return -1;
	/* utime 14, stime 15, cutime 16, cstime 17 */
	out->self = f[14 - 4] + f[15 - 4];
	out->children = f[16 - 4] + f[17 - 4];
	return 0;
}

double
bu_ticks_ms(uint64_t ticks)
{
	return (double)ticks * 1000.0 / (double)sysconf(_SC_CLK_TCK);
}

long
bu_pss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/smaps_rollup", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL) {
		if (strncmp(line, "Pss:", 4) == 0) {
			kb = strtol(line + 4, NULL, 10);
			break;
		}
	}
	fclose(f);
	return kb;
}

long
bu_rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL) {
		if (strncmp(line, "VmRSS:", 6) == 0) {
			kb = strtol(line + 6, NULL, 10);
			break;
		}
	}
	fclose(f);
	return kb;
}

uint64_t
bu_cpu_sum(const pid_t *pids, int n)
{
	struct bu_cpu c;
	uint64_t sum = 0;

	for (int i = 0; i < n; i++)
		if (bu_cpu_read(pids[i], &c) == 0)
			sum += c.self;
	return sum;
}

int
bu_wait_quiet(const pid_t *pids, int n, unsigned quiet_ms,
    unsigned timeout_ms)
{
	uint64_t end = bu_now_ns() + (uint64_t)timeout_ms * 1000000u;
	uint64_t last = bu_cpu_sum(pids, n), since = bu_now_ns(), now;

	for (;;) {
		uint64_t cur;

		bu_sleep_ms(100);
		now = bu_now_ns();
		cur = bu_cpu_sum(pids, n);
		if (cur != last) {
			last = cur;
			since = now;
		} else if (now - since >= (uint64_t)quiet_ms * 1000000u) {
			return 0;
		}
		if (now > end)
			return -1;
	}
}

int
bu_wait_files(const char *dir, const char *prefix, int n,
    unsigned timeout_ms)
{
	uint64_t end = bu_now_ns() + (uint64_t)timeout_ms * 1000000u;
	char path[PATH_MAX];
	int i = 0;

	while (i < n) {
		snprintf(path, sizeof path, "%s/%s%d", dir, prefix, i);
		if (access(path, F_OK) == 0) {
			i++;
			continue;
		}
		if (bu_now_ns() > end)
			return -1;
		bu_sleep_ms(20);
	}
	return 0;
}

/* ---- processes ------------------------------------------------------- */

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void
bu_rmrf(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* waitpid with a deadline; SIGKILL after it. Returns the wait status. */
static int
reap(pid_t pid, unsigned timeout_ms, struct rusage *ru)
{
	uint64_t end = bu_now_ns() + (uint64_t)timeout_ms * 1000000u;
	struct rusage dummy;
	int st = 0;
	pid_t w;

	for (;;) {
		w = wait4(pid, &st, WNOHANG, ru ? ru : &dummy);
		if (w == pid)
			return st;
		if (w < 0 && errno != EINTR)
			return -1;
		if (bu_now_ns() > end) {
			kill(pid, SIGKILL);
			while (wait4(pid, &st, 0, ru ? ru : &dummy) < 0 &&
			    errno == EINTR)
				;
			return st;
		}
		bu_sleep_ms(5);
	}
}

void
bu_holder_start(struct bu_holder *h, const char *bindir, const char *dir,
    const struct bu_holder_cfg *cfg, char *const *cmd)
{
	char *argv[64], *exe, *tr = NULL, *sz = NULL, ready[128];
	int rp[2], n = 0, argc = 0;
	ssize_t r;

	memset(h, 0, sizeof *h);
	h->dir = bu_fmt("%s", dir);
	h->sock = bu_fmt("%s/holder.sock", dir);
	bu_mkdir(dir);
	exe = bu_fmt("%s/%s", bindir, cfg != NULL && cfg->exe != NULL ?
	    cfg->exe : "bench_holder");
	argv[argc++] = exe;
	argv[argc++] = "--dir";
	argv[argc++] = h->dir;
	if (cfg != NULL && cfg->control)
		argv[argc++] = "--allow-control";
	if (cfg != NULL && cfg->transcript >= 0) {
		tr = bu_fmt("%ld", cfg->transcript);
		argv[argc++] = "--transcript";
		argv[argc++] = tr;
	}
	if (cfg != NULL && cfg->rows > 0 && cfg->cols > 0) {
		sz = bu_fmt("%dx%d", cfg->rows, cfg->cols);
		argv[argc++] = "--size";
		argv[argc++] = sz;
	}
	argv[argc++] = "--";
	while (cmd[n] != NULL && argc < 62)
		argv[argc++] = cmd[n++];
	argv[argc] = NULL;
	if (pipe(rp) < 0)
		bu_die("pipe: %s", strerror(errno));
	if ((h->pid = fork()) < 0)
		bu_die("fork: %s", strerror(errno));
	if (h->pid == 0) {
		int null = open("/dev/null", O_RDWR);

		close(rp[0]);
		if (rp[1] != 3) {
			dup2(rp[1], 3);
			close(rp[1]);
		}
		fcntl(3, F_SETFD, 0);
		dup2(null, 0);
		dup2(null, 1);
		execv(exe, argv);
		_exit(127);
	}
	close(rp[1]);
	do
		r = read(rp[0], ready, sizeof ready - 1);
	while (r < 0 && errno == EINTR);
	close(rp[0]);
	ready[r > 0 ? r : 0] = '\0';
	if (strncmp(ready, "ok ", 3) != 0)
		bu_die("holder in %s did not start: %s", dir,
		    ready[0] ? ready : "(no answer)");
	h->agent = (pid_t)atoi(ready + 3);
	free(exe);
	free(tr);
	free(sz);
}

int
bu_holder_wait(struct bu_holder *h, struct rusage *ru)
{
	int st = reap(h->pid, 600000, ru);

	h->pid = 0;
	return st;
}

void
bu_holder_stop(struct bu_holder *h)
{
	if (h->pid > 0) {
		kill(h->pid, SIGTERM);
		reap(h->pid, 3000, NULL);
		h->pid = 0;
	}
	if (h->dir != NULL)
		bu_rmrf(h->dir);
	free(h->dir);
	free(h->sock);
	h->dir = h->sock = NULL;
}

/* ---- tmux ------------------------------------------------------------ */

static int
tmux_run(struct bu_tmux *t, char *out, size_t outsz, va_list ap)
{
	char *argv[BU_TMUX_MAXARGS];
	int argc = 0, op[2] = { -1, -1 }, st;
	size_t len = 0;
	const char *a;
	pid_t pid;

	argv[argc++] = "tmux";
	argv[argc++] = "-L";
	argv[argc++] = t->name;
	argv[argc++] = "-f";
	argv[argc++] = t->conf;
	while ((a = va_arg(ap, const char *)) != NULL &&
	    argc < BU_TMUX_MAXARGS - 1)
		argv[argc++] = (char *)a;
	argv[argc] = NULL;
	if (out != NULL && pipe(op) < 0)
		bu_die("pipe: %s", strerror(errno));
	if ((pid = fork()) < 0)
		bu_die("fork: %s", strerror(errno));
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		unsetenv("TMUX");
		dup2(null, 0);
		dup2(out != NULL ? op[1] : null, 1);
		if (out != NULL) {
			close(op[0]);
			close(op[1]);
		}
		execvp("tmux", argv);
		_exit(127);
	}
	if (out != NULL) {
		ssize_t n;

		close(op[1]);
		while (len + 1 < outsz &&
		    ((n = read(op[0], out + len, outsz - 1 - len)) > 0 ||
			(n < 0 && errno == EINTR)))
			if (n > 0)
				len += (size_t)n;
		close(op[0]);
		out[len] = '\0';
		while (len > 0 && out[len - 1] == '\n')
			out[--len] = '\0';
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int
bu_tmux(struct bu_tmux *t, ...)
{
	va_list ap;
	int rc;

	va_start(ap, t);
	rc = tmux_run(t, NULL, 0, ap);
	va_end(ap);
	return rc;
}

int
bu_tmux_out(struct bu_tmux *t, char *out, size_t outsz, ...)
{
	va_list ap;
	int rc;

	va_start(ap, outsz);
	rc = tmux_run(t, out, outsz, ap);
	va_end(ap);
	return rc;
}

void
bu_tmux_start(struct bu_tmux *t, const char *tmpdir)
{
	char size[16], rows[16], pid[32], sock[4096];
	FILE *f;

	memset(t, 0, sizeof *t);
	/* Unique per server; run.sh cleans up corral-bench-PID-* after us. */
	t->name = bu_fmt("corral-bench-%d-%llu", (int)getpid(),
	    (unsigned long long)(bu_now_ns() / 1000u));
	t->conf = bu_fmt("%s/%s.conf", tmpdir, t->name);
	if ((f = fopen(t->conf, "we")) == NULL)
		bu_die("%s: %s", t->conf, strerror(errno));
	fprintf(f, "set -g status off\n"
		   "set -g history-limit %d\n"
		   "set -g default-size %dx%d\n"
		   "set -g remain-on-exit off\n"
		   "set -g exit-empty off\n",
	    BU_TMUX_HISTORY, BU_COLS, BU_ROWS);
	fclose(f);
	snprintf(size, sizeof size, "%d", BU_COLS);
	snprintf(rows, sizeof rows, "%d", BU_ROWS);
	if (bu_tmux(t, "new-session", "-d", "-s", "base", "-x", size, "-y",
	    rows, "exec sleep 1000000", NULL) != 0)
		bu_die("tmux new-session failed (is tmux 3.3a installed?)");
	if (bu_tmux_out(t, pid, sizeof pid, "display-message", "-p",
	    "-t", "base", "#{pid}", NULL) != 0 || (t->server = atoi(pid)) <= 0)
		bu_die("tmux: no server pid");
	if (bu_tmux_out(t, sock, sizeof sock, "display-message", "-p",
	    "-t", "base", "#{socket_path}", NULL) == 0 && sock[0] == '/')
		t->sock = bu_fmt("%s", sock);
	if (bu_tmux_out(t, size, sizeof size, "display-message", "-p",
	    "-t", "base", "#{window_width}x#{window_height}", NULL) != 0 ||
	    strcmp(size, "200x50") != 0)
		bu_die("tmux: base window is %s, not 200x50", size);
}

int
bu_tmux_panes(struct bu_tmux *t)
{
	char out[65536];
	int n = 0;

	if (bu_tmux_out(t, out, sizeof out, "list-panes", "-a", "-F", "x",
	    NULL) != 0)
		return -1;
	for (char *p = out; *p != '\0'; p++)
		n += *p == 'x';
	return n;
}

void
bu_tmux_stop(struct bu_tmux *t)
{
	uint64_t end = bu_now_ns() + 3000000000u;

	if (t->name == NULL)
		return;
	bu_tmux(t, "kill-server", NULL);
	while (t->server > 0 && kill(t->server, 0) == 0 &&
	    bu_now_ns() < end)
		bu_sleep_ms(10);
	if (t->server > 0 && kill(t->server, 0) == 0)
		kill(t->server, SIGKILL);
	/* tmux leaves its socket file behind. */
	if (t->sock != NULL)
		unlink(t->sock);
	unlink(t->conf);
	free(t->name);
	free(t->conf);
	free(t->sock);
	t->name = t->conf = t->sock = NULL;
}

/* ---- results --------------------------------------------------------- */

static void
num(char *buf, size_t sz, double v)
{
	if (isnan(v))
		snprintf(buf, sz, "-");
	else if (v == floor(v) && fabs(v) < 1e9)
		snprintf(buf, sz, "%.0f", v);
	else if (fabs(v) >= 100)
		snprintf(buf, sz, "%.0f", v);
	else if (fabs(v) >= 10)
		snprintf(buf, sz, "%.1f", v);
	else
		snprintf(buf, sz, "%.2f", v);
}

void
bu_ratio(char *buf, size_t sz, double corral, double tmux)
{
	if (isnan(corral) || isnan(tmux) || tmux == 0)
		snprintf(buf, sz, "-");
	else
		snprintf(buf, sz, "%.2fx", corral / tmux);
}

void
bu_result(const char *section, const char *figure, const char *unit,
    double corral, double tmux, double third, const char *third_name,
    const char *target, const char *verdict)
{
	char c[32], t[32], x[32], r[32];
	const char *path = getenv("BENCH_RESULTS");
	FILE *f;

	num(c, sizeof c, corral);
	num(t, sizeof t, tmux);
	num(x, sizeof x, third);
	bu_ratio(r, sizeof r, corral, tmux);
	printf("  %-34s corral %9s  tmux %9s %-6s ratio %-7s", figure, c, t,
	    unit, r);
	if (!isnan(third))
		printf("  %s %s", third_name, x);
	printf("  target %s  %s\n", target, verdict);
	fflush(stdout);
	if (path == NULL || (f = fopen(path, "ae")) == NULL)
		return;
	fprintf(f, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", section, figure,
	    unit, c, t, r, isnan(third) ? "" : third_name,
	    isnan(third) ? "" : x, target, verdict);
	fclose(f);
}

/* ---- the real corral ------------------------------------------------ */

int
bu_corral(const char *corral, const char *state, int in_fd, char *out,
    size_t outsz, char *const *args)
{
	char *argv[16];
	int argc = 0, op[2], st;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	argv[argc++] = (char *)corral;
	while (*args != NULL && argc < 15)
		argv[argc++] = *args++;
	argv[argc] = NULL;
	if (pipe(op) < 0)
		bu_die("pipe: %s", strerror(errno));
	if ((pid = fork()) < 0)
		bu_die("fork: %s", strerror(errno));
	if (pid == 0) {
		int in = in_fd >= 0 ? in_fd : open("/dev/null", O_RDWR);

		if (chdir(state) < 0)
			_exit(126);
		setenv("CORRAL_STATE_DIR", state, 1);
		dup2(in, 0);
		dup2(op[1], 1);
		close(op[0]);
		close(op[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(op[1]);
	while (len + 1 < outsz && ((n = read(op[0], out + len,
	    outsz - 1 - len)) > 0 || (n < 0 && errno == EINTR)))
		if (n > 0)
			len += (size_t)n;
	close(op[0]);
	out[len] = '\0';
	while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == ' '))
		out[--len] = '\0';
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

pid_t
bu_corral_holder(const char *id)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = -1;

	if (d == NULL)
		return -1;
	while (found < 0 && (e = readdir(d)) != NULL) {
		char path[64], buf[4096];
		const char *arg[4];
		ssize_t n;
		int fd, k = 0;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%.16s/cmdline", e->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		n = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		/* corral-holder --id ID ... */
		for (ssize_t i = 0; i < n && k < 4; i += (ssize_t)strlen(buf + i) + 1)
			arg[k++] = buf + i;
		if (k >= 3 && strlen(arg[0]) >= 13 &&
		    strcmp(arg[0] + strlen(arg[0]) - 13, "corral-holder") == 0 &&
		    strcmp(arg[1], "--id") == 0 && strcmp(arg[2], id) == 0)
			found = (pid_t)atoi(e->d_name);
	}
	closedir(d);
	return found;
}

int
bu_pty_slave(int *master)
{
	struct winsize ws = { .ws_row = BU_ROWS, .ws_col = BU_COLS };
	int slave;

	if (openpty(master, &slave, NULL, NULL, &ws) < 0)
		bu_die("openpty: %s", strerror(errno));
	return slave;
}

void
bu_pty_child(int master, int slave)
{
	close(master);
	setsid();
	ioctl(slave, TIOCSCTTY, 0);
	dup2(slave, 0);
	dup2(slave, 1);
	dup2(slave, 2);
	if (slave > 2)
		close(slave);
}

pid_t
bu_term_spawn(int *master, char *const *argv, const char *state)
{
	int slave = bu_pty_slave(master);
	pid_t pid;

	if ((pid = fork()) < 0)
		bu_die("fork: %s", strerror(errno));
	if (pid == 0) {
		bu_pty_child(*master, slave);
		setenv("TERM", "xterm-256color", 1);
		unsetenv("TMUX");
		if (state != NULL) {
			setenv("CORRAL_STATE_DIR", state, 1);
			setenv("LANG", "C.UTF-8", 1);
			setenv("LC_ALL", "C.UTF-8", 1);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	close(slave);
	fcntl(*master, F_SETFL, fcntl(*master, F_GETFL) | O_NONBLOCK);
	return pid;
}

void
bu_term_drain(int master, unsigned ms)
{
	uint64_t end = bu_now_ns() + (uint64_t)ms * 1000000u;
	char buf[65536];

	for (;;) {
		struct pollfd pf = { .fd = master, .events = POLLIN };
		uint64_t now = bu_now_ns();

		if (now >= end)
			return;
		if (poll(&pf, 1, (int)((end - now) / 1000000u) + 1) > 0 &&
		    read(master, buf, sizeof buf) == 0)
			return;
	}
}

void
bu_term_stop(pid_t client, int master)
{
	if (client > 0) {
		kill(client, SIGTERM);
		while (waitpid(client, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (master >= 0)
		close(master);
}
