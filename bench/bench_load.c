/*
 * bench_load.c: what many endpoints cost (issue 2 item 5), corral holders
 * (each its own bench_holder process, no client attached) against one
 * detached tmux 3.3a server with one 200x50 window per endpoint:
 *   busy    16 endpoints each printing a coloured line every millisecond
 *           for 10 s: CPU (utime+stime from /proc) of every holder summed
 *           vs the tmux server; once with the reaped children included
 *           (the agents, the same work on both sides) and once for the
 *           multiplexer alone;
 *   idle    64 idle endpoints: CPU ticks over 10 s; with them live, the
 *           console (`corral attach` of one, in a 200x50 PTY) against a
 *           tmux client attached to the 64 windows: CPU over 10 s, RSS;
 *   memory  PSS (smaps_rollup) per endpoint, idle and with 2,000 lines of
 *           scrollback filled; tmux per pane = (server PSS with the panes
 *           - server PSS with only its base pane) / panes.
 * Idle and memory run real leases (issue 17): `corral new --sandbox
 * trusted_local` in a private state directory, sized 200x50 by a PTY on
 * its stdin, so each endpoint is a corral-holder with its journal.
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
	char *corral;	/* build/tui/corral, the real binary */
};

/* Real leases in a private state directory (idle, memory). */
struct leases {
	char *state;
	char **ids;
	pid_t *pids;	/* their corral-holder processes */
	int n;
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
    int lines, const char *wait)
{
	struct bu_holder_cfg cfg = { .transcript = -1 };
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
	h = holders_start(x, "busy", BUSY_N, "tick", 0, NULL);
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
 * n leases of `bench_agent lines LINES DONE [wait]`, each its
 * corral-holder, sized 200x50; returns once every agent has had its last
 * line parsed and the holders are quiet.
 */
static void
leases_start(struct ctx *x, struct leases *L, const char *tag, int n,
    int lines, const char *wait)
{
	char *prefix = bu_fmt("%s-done", tag), *nl = bu_fmt("%d", lines);
	char out[512];
	int master, slave = bu_pty_slave(&master);

	L->state = bu_fmt("%s/%s-state", x->tmp, tag);
	bu_mkdir(L->state);
	L->n = n;
	if ((L->ids = calloc((size_t)n, sizeof *L->ids)) == NULL ||
	    (L->pids = calloc((size_t)n, sizeof *L->pids)) == NULL)
		bu_die("out of memory");
	for (int i = 0; i < n; i++) {
		char *done = bu_fmt("%s/%s%d", x->tmp, prefix, i);
		char *args[] = { "new", "--sandbox", "trusted_local",
			"--allow-control", "--", x->agent, "lines", nl, done,
			(char *)wait, NULL };

		if (bu_corral(x->corral, L->state, slave, out, sizeof out,
		    args) != 0 || out[0] == '\0')
			bu_die("%s: corral new failed: %s", tag, out);
		L->ids[i] = bu_fmt("%s", out);
		if ((L->pids[i] = bu_corral_holder(out)) < 0)
			bu_die("%s: no corral-holder for lease %s", tag, out);
		free(done);
	}
	close(slave);
	close(master);
	if (bu_wait_files(x->tmp, prefix, n, 60000) < 0)
		bu_die("%s: the agents under holders did not finish", tag);
	if (bu_wait_quiet(L->pids, n, 300, 5000) < 0)
		printf("    (%s: the holders' CPU still moves after 5 s)\n",
		    tag);
	free(nl);
	free(prefix);
}

/* Cancel every lease, wait until none is live, remove the state. */
static void
leases_stop(struct ctx *x, struct leases *L)
{
	char out[4096];

	for (int i = 0; i < L->n; i++) {
		char *args[] = { "cancel", L->ids[i], NULL };

		if (bu_corral(x->corral, L->state, -1, out, sizeof out,
		    args) != 0)
			fprintf(stderr, "bench_load: corral cancel %s: %s\n",
			    L->ids[i], out);
		free(L->ids[i]);
	}
	for (int i = 0;; i++) {
		char *args[] = { "ls", "--json", NULL };

		if (bu_corral(x->corral, L->state, -1, out, sizeof out,
		    args) == 0 && strstr(out, "\"id\"") == NULL)
			break;
		if (i > 400)
			bu_die("leases still live 20 s after cancel");
		bu_sleep_ms(50);
	}
	bu_rmrf(L->state);
	free(L->state);
	free(L->ids);
	free(L->pids);
}

static double
leases_pss(struct leases *L)
{
	long sum = 0;

	for (int i = 0; i < L->n; i++) {
		long kb = bu_pss_kb(L->pids[i]);

		if (kb < 0)
			bu_die("no PSS for holder %d", (int)L->pids[i]);
		sum += kb;
	}
	return (double)sum / L->n;
}

struct client_fig {
	double ticks, rss, server_rss;
};

/*
 * A terminal client (argv) on a 200x50 PTY: let it draw, then its CPU
 * ticks (and server's, if > 0) over IDLE_SECS while we read what it
 * draws, and its RSS.
 */
static struct client_fig
client_idle(char *const *argv, const char *state, pid_t server)
{
	struct client_fig f;
	struct bu_cpu c0, c1, s0 = { 0, 0 }, s1 = { 0, 0 };
	int master;
	pid_t pid = bu_term_spawn(&master, argv, state);

	bu_term_drain(master, 3000);
	if (bu_cpu_read(pid, &c0) < 0)
		bu_die("%s %s: the client ended", argv[0], argv[1]);
	if (server > 0)
		bu_cpu_read(server, &s0);
	bu_term_drain(master, IDLE_SECS * 1000);
	if (bu_cpu_read(pid, &c1) < 0)
		bu_die("%s %s: the client ended", argv[0], argv[1]);
	if (server > 0)
		bu_cpu_read(server, &s1);
	f.ticks = (double)(c1.self - c0.self + s1.self - s0.self);
	f.rss = (double)bu_rss_kb(pid);
	f.server_rss = server > 0 ? (double)bu_rss_kb(server) : NAN;
	bu_term_stop(pid, master);
	return f;
}

/*
 * n endpoints of `bench_agent lines LINES DONE` on both sides. With idle,
 * CPU ticks over IDLE_SECS, and the console against a tmux client; then
 * PSS per endpoint.
 */
static void
bench_mem(struct ctx *x, const char *tag, int n, int lines, bool idle)
{
	struct bu_tmux t;
	struct bu_cpu c0, c1;
	struct leases L;
	struct client_fig con = { NAN, NAN, NAN }, tcl = { NAN, NAN, NAN };
	double hpss, tpss, base;
	uint64_t hticks = 0, tticks = 0;
	char fig[96], *prefix = bu_fmt("%s-done", tag);

	/* corral */
	leases_start(x, &L, tag, n, lines, NULL);
	if (idle) {
		char *argv[] = { x->corral, "attach", L.ids[0], NULL };
		uint64_t a = bu_cpu_sum(L.pids, n);

		bu_sleep_ms(IDLE_SECS * 1000);
		hticks = bu_cpu_sum(L.pids, n) - a;
		con = client_idle(argv, L.state, 0);
	}
	hpss = leases_pss(&L);
	leases_stop(x, &L);
	done_files_clear(x, prefix, n);

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
		char *argv[] = { "tmux", "-L", t.name, "-f", t.conf, "attach",
			"-t", "base", NULL };

		bu_cpu_read(t.server, &c0);
		bu_sleep_ms(IDLE_SECS * 1000);
		bu_cpu_read(t.server, &c1);
		tticks = c1.self - c0.self;
		tpss = ((double)bu_pss_kb(t.server) - base) / n;
		tcl = client_idle(argv, NULL, t.server);
	} else {
		tpss = ((double)bu_pss_kb(t.server) - base) / n;
	}
	bu_tmux_stop(&t);
	done_files_clear(x, prefix, n);

	if (idle) {
		uint64_t pticks;

		bu_result("idle", "idle CPU, 64 endpoints, 10 s", "ticks",
		    (double)hticks, (double)tticks, NAN, "", "0",
		    hticks == 0 ? "MET" : "MISSED");
		/* Agents asleep outside a terminal read (node in epoll). */
		leases_start(x, &L, tag, n, lines, "pause");
		pticks = bu_cpu_sum(L.pids, n);
		bu_sleep_ms(IDLE_SECS * 1000);
		pticks = bu_cpu_sum(L.pids, n) - pticks;
		leases_stop(x, &L);
		done_files_clear(x, prefix, n);
		bu_result("idle", "  same, agents asleep in pause()", "ticks",
		    (double)pticks, NAN, NAN, "", "info", "-");
		/* One of 64 focused: corral attach vs tmux attach (+server). */
		bu_result("idle", "console CPU, 64 listed, 10 s", "ticks",
		    con.ticks, tcl.ticks, NAN, "", "info", "-");
		bu_result("idle", "console RSS, 64 listed", "kB", con.rss,
		    tcl.rss, tcl.server_rss, "tmux-server", "info", "-");
	}
	snprintf(fig, sizeof fig, "PSS per endpoint, %s",
	    idle ? "idle" : "2000 lines history");
	bu_result("memory", fig, "kB", hpss, tpss, NAN, "",
	    idle ? "<= 600 kB" : "<= tmux", (idle ? hpss <= 600 :
	    hpss <= tpss) ? "MET" : "MISSED");
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
	x.corral = bu_fmt("%s/../tui/corral", x.bindir);
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
	free(x.corral);
	free(x.agent);
	free(x.bindir);
	return 0;
}
