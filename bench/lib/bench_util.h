/*
 * bench_util.h: helpers shared by the `make bench` programs (issue 2 item
 * 5): clocks, /proc CPU and PSS readings, holders started as their own
 * processes (bench_holder), a private tmux 3.3a server, and the result
 * rows that bench/run.sh turns into the summary table.
 */
#ifndef CORRAL_BENCH_UTIL_H
#define CORRAL_BENCH_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

/* Every endpoint of the bench, corral and tmux alike (issue 2 item 5). */
#define BU_ROWS 50
#define BU_COLS 200
#define BU_TMUX_HISTORY 2000

/* ---- misc ------------------------------------------------------------ */

uint64_t bu_now_ns(void);
/* The wall clock (what an agent's `date +%s%N` prints), in ns. */
uint64_t bu_wall_ns(void);
void bu_sleep_ms(unsigned ms);
/* Print to stderr and exit 1 (bench programs only). */
void bu_die(const char *fmt, ...) __attribute__((format(printf, 1, 2),
    noreturn));
/* malloc'd printf; dies on failure. */
char *bu_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The directory holding this executable (and its sibling bench programs). */
char *bu_bindir(void);
/* mkdir -m 0700, dying on failure other than EEXIST. */
void bu_mkdir(const char *path);
/* rm -rf path (best effort). */
void bu_rmrf(const char *path);
/* Sort v and return its p-quantile (0..1), nearest rank. */
double bu_quantile(double *v, size_t n, double p);
double bu_median3(double a, double b, double c);

/* ---- /proc ----------------------------------------------------------- */

struct bu_cpu {
	uint64_t self;		/* utime + stime, clock ticks */
	uint64_t children;	/* cutime + cstime of reaped children */
};
/* Returns 0 or -1 when the process is gone. */
int bu_cpu_read(pid_t, struct bu_cpu *);
/* The summed utime + stime ticks (self) of pids; a gone one counts 0. */
uint64_t bu_cpu_sum(const pid_t *pids, int n);
/* Clock ticks to milliseconds. */
double bu_ticks_ms(uint64_t ticks);
/* PSS in kB from /proc/PID/smaps_rollup, or -1. */
long bu_pss_kb(pid_t);
/* RSS in kB (VmRSS of /proc/PID/status), or -1. */
long bu_rss_kb(pid_t);
/*
 * Wait until the summed CPU of pids has not moved for quiet_ms (checked
 * every 100 ms), at most timeout_ms. Returns 0, or -1 on timeout.
 */
int bu_wait_quiet(const pid_t *pids, int n, unsigned quiet_ms,
    unsigned timeout_ms);
/* Wait until DIR/PREFIX0 .. PREFIX(n-1) all exist. 0 or -1 on timeout. */
int bu_wait_files(const char *dir, const char *prefix, int n,
    unsigned timeout_ms);

/* ---- holders --------------------------------------------------------- */

/*
 * One endpoint: bench_holder (pty_holder_run in its own process, like
 * corral-holder) running cmd on a BU_ROWS x BU_COLS PTY, lease
 * directory dir (created), socket dir/holder.sock.
 */
struct bu_holder {
	pid_t pid;	/* the holder */
	pid_t agent;	/* its child */
	char *dir;
	char *sock;
};
struct bu_holder_cfg {
	bool control;		/* --allow-control */
	long transcript;	/* bytes; < 0: the product default */
	const char *exe;	/* NULL: "bench_holder" */
	int rows, cols;		/* 0: BU_ROWS x BU_COLS */
};
void bu_holder_start(struct bu_holder *, const char *bindir, const char *dir,
    const struct bu_holder_cfg *, char *const *cmd);
/* Reap the holder (blocking); ru gets its rusage (children included). */
int bu_holder_wait(struct bu_holder *, struct rusage *ru);
/* SIGTERM (the holder cancels its agent), reap, remove the directory. */
void bu_holder_stop(struct bu_holder *);

/* ---- the real corral ------------------------------------------------ */

/*
 * Run `CORRAL ARGS...` (NULL-terminated) in state (its CORRAL_STATE_DIR
 * and cwd), stdin in_fd (-1: /dev/null; a PTY gives `corral new` its
 * size); its stdout, trimmed, into out. Returns the exit status.
 */
int bu_corral(const char *corral, const char *state, int in_fd, char *out,
    size_t outsz, char *const *args);
/* The corral-holder process of lease id (its --id), or -1. */
pid_t bu_corral_holder(const char *id);
/*
 * A BU_ROWS x BU_COLS PTY's slave, for `corral new` to size a lease by
 * (closed with close()); *master gets the other side.
 */
int bu_pty_slave(int *master);
/* In a forked child: slave becomes the controlling terminal and stdio. */
void bu_pty_child(int master, int slave);
/*
 * Run argv as a terminal client on a new BU_ROWS x BU_COLS PTY
 * (TERM=xterm-256color; state, if not NULL, as CORRAL_STATE_DIR, UTF-8
 * locale). *master gets the PTY's master side, non-blocking.
 */
pid_t bu_term_spawn(int *master, char *const *argv, const char *state);
/* Read and discard what the client draws, for ms. */
void bu_term_drain(int master, unsigned ms);
/* SIGTERM the client, reap it, close master. */
void bu_term_stop(pid_t client, int master);

/* ---- tmux ------------------------------------------------------------ */

/*
 * A private tmux server (-L corral-bench-PID-USEC, its own config: status off,
 * history-limit 2000, default-size 200x50) with one session "base" whose
 * only pane sleeps, so the server stays up between measurements.
 */
struct bu_tmux {
	char *name;
	char *conf;
	char *sock;	/* the server's socket, removed by bu_tmux_stop */
	pid_t server;
};
void bu_tmux_start(struct bu_tmux *, const char *tmpdir);
/* Run one tmux command (NULL-terminated args); returns its exit status. */
int bu_tmux(struct bu_tmux *, ...) __attribute__((sentinel));
/* The same, capturing stdout (NUL-terminated, newline stripped). */
int bu_tmux_out(struct bu_tmux *, char *out, size_t outsz, ...)
    __attribute__((sentinel));
/* Panes the server has, including base's. */
int bu_tmux_panes(struct bu_tmux *);
void bu_tmux_stop(struct bu_tmux *);

/* ---- results --------------------------------------------------------- */

enum bu_better { BU_HIGHER, BU_LOWER };

/*
 * One figure: printed as a line, and appended as a row to the file named by
 * $BENCH_RESULTS for the closing table. third is the extra column (the raw
 * PTY bound), NAN when there is none. verdict is
 * "MET", "MISSED" or "-" (no target: for information).
 */
void bu_result(const char *section, const char *figure, const char *unit,
    double corral, double tmux, double third, const char *third_name,
    const char *target, const char *verdict);
/* corral/tmux formatted as "1.23x" (or "-" when tmux is 0). */
void bu_ratio(char *buf, size_t sz, double corral, double tmux);

#endif /* CORRAL_BENCH_UTIL_H */
