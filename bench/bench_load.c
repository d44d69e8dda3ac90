/*
 * bench_load.c: what many endpoints cost (issue 2 item 5), corral holders
 * (each its own bench_holder process, no client attached) against one
 * detached tmux 3.3a server with one 200x50 window per endpoint:
 *   busy    16 endpoints each printing a coloured line every millisecond
 *           for 10 s: CPU (utime+stime from /proc) of every holder summed
 *           vs the tmux server; once with the reaped children included
 *           (the agents, the same work on both sides) and once for the
 *           multiplexer alone;
 *   idle    64 idle endpoints: CPU ticks over 10 s;
 *   memory  PSS (smaps_rollup) per endpoint, idle and with 2,000 lines of
 *           scrollback filled; tmux per pane = (server PSS with the panes
 *           - server PSS with only its base pane) / panes. The extra
 *           column is the same holder linked with pty/ only: what the
 *           libraries of the corral binary cost each holder process.
 *
 * usage: bench_load TMPDIR [busy|idle|memory...]
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/lib/bench_util.h"

int main(int, char **);

#define BUSY_N 16
#define BUSY_SECS 10
#define IDLE_N 64
#define IDLE_SECS 10
#define HIST_N 64
/* 49 lines stay on a 50-row screen (the last row holds the cursor). */
#define HIST_LINES (BU_TMUX_HISTORY + BU_ROWS - 1)

struct ctx {
	const char *tmp;
	char *bindir;
	char *agent;	/* bench_agent */
};

static double
tv_ms(struct timeval tv)
{
	return (double)tv.tv_sec * 1e3 + (double)tv.tv_usec / 1e3;
}

/*
 * Start n holders running bench_agent: mode "tick" (BUSY_SECS of lines),
 * or "lines" (lines lines, then TMP/TAG-doneI, then asleep in a terminal
 * read, or in pause() when wait is "pause").
 */
static struct bu_holder *
holders_start(struct ctx *x, const char *tag, int n, const char *mode,
    int lines, const char *wait, const char *exe)
{
	struct bu_holder_cfg cfg = { .transcript = -1, .exe = exe };
	struct bu_holder *h = calloc((size_t)n, sizeof *h);

	if (h == NULL)
		bu_die("out of memory");
	for (int i = 0; i < n; i++) {
		char *dir = bu_fmt("%s/%s-%d", x->tmp, tag, i);
		char *cmd[] = { x->agent, (char *)mode, NULL, NULL,
			(char *)wait, NULL };

		if (strcmp(mode, "tick") == 0) {
			cmd[2] = bu_fmt("%d", BUSY_SECS);
			cmd[3] = bu_fmt("0.5");
			cmd[4] = NULL;
		} else {
			cmd[2] = bu_fmt("%d", lines);
			cmd[3] = bu_fmt("%s/%s-done%d", x->tmp, tag, i);
		}
		bu_holder_start(&h[i], x->bindir, dir, &cfg, cmd);
		free(cmd[2]);
		free(cmd[3]);
		free(dir);
	}
	return h;
}

static void
holders_stop(struct bu_holder *h, int n)
{
	for (int i = 0; i < n; i++)
		bu_holder_stop(&h[i]);
	free(h);
}

static uint64_t
holders_self(struct bu_holder *h, int n)
{
	struct bu_cpu c;
	uint64_t sum = 0;

	for (int i = 0; i < n; i++)
		if (bu_cpu_read(h[i].pid, &c) == 0)
			sum += c.self;
	return sum;
}

/* n tmux windows in session base running the agent. */
static void
tmux_windows(struct ctx *x, struct bu_tmux *t, int n, const char *mode,
    const char *tag, int lines)
{
	for (int i = 0; i < n; i++) {
		char *cmd;

		if (strcmp(mode, "tick") == 0)
			cmd = bu_fmt("exec '%s' tick %d 0.5", x->agent,
			    BUSY_SECS);
		else
			cmd = bu_fmt("exec '%s' lines %d '%s/%s-done%d'",
			    x->agent, lines, x->tmp, tag, i);
		if (bu_tmux(t, "new-window", "-d", "-t", "base", cmd,
		    NULL) != 0)
			bu_die("tmux new-window failed");
		free(cmd);
	}
}

/* ---- busy ------------------------------------------------------------ */

static void
bench_busy(struct ctx *x)
{
	struct bu_holder *h;
	struct bu_tmux t;
	struct bu_cpu c0, c1;
	double hall = 0, hself, tall, tself;
	uint64_t t0;

	printf("busy: %d endpoints, a coloured line every ms for %d s each\n",
	    BUSY_N, BUSY_SECS);
	/* corral */
	t0 = bu_now_ns();
	h = holders_start(x, "busy", BUSY_N, "tick", 0, NULL, NULL);
	/* Each agent ticks BUSY_SECS then idles 0.5 s before it exits. */
	while (bu_now_ns() - t0 < (uint64_t)(BUSY_SECS * 1000 + 250) *
	    1000000u)
		bu_sleep_ms(20);
	hself = bu_ticks_ms(holders_self(h, BUSY_N));
	for (int i = 0; i < BUSY_N; i++) {
		struct rusage ru;
		int st = bu_holder_wait(&h[i], &ru);

		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			bu_die("busy holder %d ended with %d", i, st);
		hall += tv_ms(ru.ru_utime) + tv_ms(ru.ru_stime);
	}
	holders_stop(h, BUSY_N);

	/* tmux */
	bu_tmux_start(&t, x->tmp);
	bu_cpu_read(t.server, &c0);
	t0 = bu_now_ns();
	tmux_windows(x, &t, BUSY_N, "tick", "busy", 0);
	while (bu_now_ns() - t0 < (uint64_t)(BUSY_SECS * 1000 + 250) *
	    1000000u)
		bu_sleep_ms(20);
	bu_cpu_read(t.server, &c1);
	tself = bu_ticks_ms(c1.self - c0.self);
	while (bu_tmux_panes(&t) > 1)
		bu_sleep_ms(50);
	bu_cpu_read(t.server, &c1);
	tall = bu_ticks_ms(c1.self + c1.children - c0.self - c0.children);
	bu_tmux_stop(&t);

	bu_result("busy", "busy CPU, 16 endpoints (incl. agents)", "cpu-ms",
	    hall, tall, NAN, "", "<= tmux", hall <= tall ? "MET" : "MISSED");
	bu_result("busy", "busy CPU, 16 endpoints (mux only)", "cpu-ms",
	    hself, tself, NAN, "", "<= tmux",
	    hself <= tself ? "MET" : "MISSED");
}

/* ---- idle and memory ------------------------------------------------- */

static double
holders_pss(struct bu_holder *h, int n)
{
	long sum = 0;

	for (int i = 0; i < n; i++) {
		long kb = bu_pss_kb(h[i].pid);

		if (kb < 0)
			bu_die("no PSS for holder %d", (int)h[i].pid);
		sum += kb;
	}
	return (double)sum / n;
}

static void
done_files_clear(struct ctx *x, const char *prefix, int n)
{
	for (int i = 0; i < n; i++) {
		char *f = bu_fmt("%s/%s%d", x->tmp, prefix, i);

		unlink(f);
		free(f);
	}
}

/*
 * Start n holders (exe) of `bench_agent lines LINES DONE`, wait until each
 * agent has had its last line parsed and the holders are quiet. With
 * ticks, count their CPU ticks over IDLE_SECS. Returns the mean PSS.
 */
static double
holders_mem(struct ctx *x, const char *tag, int n, int lines,
    const char *wait, const char *exe, uint64_t *ticks)
{
	char *prefix = bu_fmt("%s-done", tag);
	pid_t *pids = calloc((size_t)n, sizeof *pids);
	struct bu_holder *h;
	double pss;

	if (pids == NULL)
		bu_die("out of memory");
	h = holders_start(x, tag, n, "lines", lines, wait, exe);
	if (bu_wait_files(x->tmp, prefix, n, 60000) < 0)
		bu_die("%s: the agents under holders did not finish", tag);
	for (int i = 0; i < n; i++)
		pids[i] = h[i].pid;
	if (bu_wait_quiet(pids, n, 300, 5000) < 0)
		printf("    (%s: the holders' CPU still moves after 5 s)\n",
		    tag);
	if (ticks != NULL) {
		uint64_t a = holders_self(h, n);

		bu_sleep_ms(IDLE_SECS * 1000);
		*ticks = holders_self(h, n) - a;
	}
	pss = holders_pss(h, n);
	holders_stop(h, n);
	done_files_clear(x, prefix, n);
	free(prefix);
	free(pids);
	return pss;
}

/*
 * n endpoints of `bench_agent lines LINES DONE` on both sides. With idle,
 * CPU ticks over IDLE_SECS; then PSS per endpoint. The third column is
 * the same holder linked with pty/ only (bench_holder_lean).
 */
static void
bench_mem(struct ctx *x, const char *tag, int n, int lines, bool idle)
{
	struct bu_tmux t;
	struct bu_cpu c0, c1;
	double hpss, lpss, tpss, base;
	uint64_t hticks = 0, tticks = 0;
	char fig[96], *prefix = bu_fmt("%s-done", tag);

	/* corral, then the lean holder */
	hpss = holders_mem(x, tag, n, lines, NULL, NULL,
	    idle ? &hticks : NULL);
	lpss = holders_mem(x, tag, n, lines, NULL, "bench_holder_lean",
	    NULL);

	/* tmux */
	bu_tmux_start(&t, x->tmp);
	bu_sleep_ms(200);
	base = (double)bu_pss_kb(t.server);
	tmux_windows(x, &t, n, "lines", tag, lines);
	if (bu_wait_files(x->tmp, prefix, n, 60000) < 0)
		bu_die("%s: the agents in tmux did not finish", tag);
	if (bu_wait_quiet(&t.server, 1, 300, 5000) < 0)
		printf("    (%s: tmux's CPU still moves after 5 s)\n", tag);
	if (idle) {
		bu_cpu_read(t.server, &c0);
		bu_sleep_ms(IDLE_SECS * 1000);
		bu_cpu_read(t.server, &c1);
		tticks = c1.self - c0.self;
	}
	tpss = ((double)bu_pss_kb(t.server) - base) / n;
	bu_tmux_stop(&t);
	done_files_clear(x, prefix, n);

	if (idle) {
		uint64_t pticks = 0;

		bu_result("idle", "idle CPU, 64 endpoints, 10 s", "ticks",
		    (double)hticks, (double)tticks, NAN, "", "0",
		    hticks == 0 ? "MET" : "MISSED");
		/* Agents asleep outside a terminal read (node in epoll). */
		holders_mem(x, tag, n, lines, "pause", NULL, &pticks);
		bu_result("idle", "  same, agents asleep in pause()", "ticks",
		    (double)pticks, NAN, NAN, "", "info", "-");
	}
	snprintf(fig, sizeof fig, "PSS per endpoint, %s",
	    idle ? "idle" : "2000 lines history");
	bu_result("memory", fig, "kB", hpss, tpss, lpss, "lean-holder",
	    idle ? "info" : "<= tmux", idle ? "-" :
	    hpss <= tpss ? "MET" : "MISSED");
	free(prefix);
}

int
main(int argc, char **argv)
{
	struct ctx x;
	bool all = argc < 3;

	if (argc < 2) {
		fprintf(stderr, "usage: bench_load TMPDIR [busy|idle|memory]"
		    "...\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	x.tmp = argv[1];
	x.bindir = bu_bindir();
	x.agent = bu_fmt("%s/bench_agent", x.bindir);
	for (int i = 2; i < argc || all; i++) {
		const char *what = all ? NULL : argv[i];

		if (all || strcmp(what, "busy") == 0)
			bench_busy(&x);
		if (all || strcmp(what, "idle") == 0) {
			printf("idle: %d endpoints waiting on their terminal, "
			    "CPU over %d s, then PSS\n", IDLE_N, IDLE_SECS);
			bench_mem(&x, "idle", IDLE_N, 0, true);
		}
		if (all || strcmp(what, "memory") == 0) {
			printf("memory: %d endpoints after %d lines each "
			    "(%d in history)\n", HIST_N, HIST_LINES,
			    BU_TMUX_HISTORY);
			bench_mem(&x, "hist", HIST_N, HIST_LINES, false);
		}
		if (all)
			break;
	}
	free(x.agent);
	free(x.bindir);
	return 0;
}
