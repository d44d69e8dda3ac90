/*
 * bench_ingest.c: ingest throughput (issue 2 item 5). One endpoint cats a
 * file; the time runs from spawning it to its end:
 *   corral  a holder (bench_holder: pty_holder_run, 200x50 screen, no
 *           client attached) running `cat FILE`, until the holder exits;
 *   tmux    a new window of a detached tmux 3.3a server (status off,
 *           history-limit 2000, 200x50) running `cat FILE`, until the
 *           pane's command has ended (it then writes to a FIFO we read);
 *   raw     a plain program reading the PTY master and discarding, until
 *           EOF and the child is reaped: the upper bound.
 * Each is run REPS times, interleaved; the median counts. Targets (issue
 * 17 item 5): agent output >= 2.5x tmux, plain scrolling text >= 2x.
 *
 * usage: bench_ingest TMPDIR AGENT_FILE PLAIN_FILE [REPS]
 *        bench_ingest --screen FILE   (the screen model alone)
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/lib/bench_util.h"
#include "pty/pty.h"

int main(int, char **);

#define MAX_REPS 9

static double
mib(const char *file)
{
	struct stat st;

	if (stat(file, &st) < 0)
		bu_die("%s: %s", file, strerror(errno));
	return (double)st.st_size / (1024.0 * 1024.0);
}

/* Seconds to read everything `cat file` writes on a fresh PTY. */
static double
run_raw(const char *file)
{
	uint64_t t0 = bu_now_ns();
	static char buf[65536];
	int master, slave = bu_pty_slave(&master), st;
	pid_t pid;

	if ((pid = fork()) < 0)
		bu_die("fork: %s", strerror(errno));
	if (pid == 0) {
		bu_pty_child(master, slave);
		execlp("cat", "cat", file, (char *)NULL);
		_exit(127);
	}
	close(slave);
	for (;;) {
		ssize_t n = read(master, buf, sizeof buf);

		if (n > 0 || (n < 0 && errno == EINTR))
			continue;
		break; /* EIO once the slave is closed */
	}
	close(master);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		bu_die("raw: cat %s failed", file);
	return (double)(bu_now_ns() - t0) / 1e9;
}

static double
tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* Seconds from spawning a holder running `cat file` to its exit. */
static double
run_holder(const char *bindir, const char *tmp, const char *file, int rep,
    double *cpu)
{
	char *cmd[] = { "cat", (char *)file, NULL };
	char *dir = bu_fmt("%s/ingest-%d", tmp, rep);
	struct bu_holder h;
	struct rusage ru;
	uint64_t t0 = bu_now_ns();
	double secs;
	int st;

	bu_holder_start(&h, bindir, dir, NULL, cmd);
	st = bu_holder_wait(&h, &ru);
	secs = (double)(bu_now_ns() - t0) / 1e9;
	/* The holder and what it reaped: cat. */
	*cpu = tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		bu_die("holder: cat %s ended with status %d", file, st);
	bu_holder_stop(&h);
	free(dir);
	return secs;
}

/* Seconds from asking tmux for a window running `cat file` to its end. */
static double
run_tmux(struct bu_tmux *t, const char *tmp, const char *file, double *cpu)
{
	char *fifo = bu_fmt("%s/ingest.fifo", tmp), *cmd, buf[64];
	struct bu_cpu c0, c1;
	uint64_t t0;
	double secs;
	int fd;

	if (bu_cpu_read(t->server, &c0) < 0)
		bu_die("tmux server gone");
	unlink(fifo);
	if (mkfifo(fifo, 0600) < 0)
		bu_die("mkfifo: %s", strerror(errno));
	cmd = bu_fmt("cat '%s'; echo done > '%s'", file, fifo);
	t0 = bu_now_ns();
	if (bu_tmux(t, "new-window", "-d", "-t", "base", cmd, NULL) != 0)
		bu_die("tmux new-window failed");
	/* Blocks until the pane's command has finished cat. */
	if ((fd = open(fifo, O_RDONLY | O_CLOEXEC)) < 0)
		bu_die("%s: %s", fifo, strerror(errno));
	while (read(fd, buf, sizeof buf) > 0)
		;
	secs = (double)(bu_now_ns() - t0) / 1e9;
	close(fd);
	/* The server, and what it reaped (sh, cat) once the window closed. */
	while (bu_tmux_panes(t) > 1)
		bu_sleep_ms(20);
	if (bu_cpu_read(t->server, &c1) < 0)
		bu_die("tmux server gone");
	*cpu = bu_ticks_ms(c1.self + c1.children - c0.self - c0.children) /
	    1e3;
	unlink(fifo);
	free(fifo);
	free(cmd);
	return secs;
}

static double
cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * CPU seconds for pty_screen_feed alone to take the file from memory in
 * 4 KiB pieces (what a PTY read returns), newlines as the tty's ONLCR
 * leaves them: the holder's time apart from the PTY and the process.
 */
static double
run_screen(const char *file)
{
	struct pty_screen *scr;
	char *in, *buf;
	size_t len = 0, n = 0, cap;
	double t0;
	FILE *f;

	if ((f = fopen(file, "rb")) == NULL)
		bu_die("%s: %s", file, strerror(errno));
	fseek(f, 0, SEEK_END);
	cap = (size_t)ftell(f);
	rewind(f);
	if ((in = malloc(cap)) == NULL || (buf = malloc(2 * cap)) == NULL ||
	    fread(in, 1, cap, f) != cap)
		bu_die("%s: cannot read", file);
	fclose(f);
	for (size_t i = 0; i < cap; i++) {
		if (in[i] == '\n')
			buf[n++] = '\r';
		buf[n++] = in[i];
	}
	free(in);
	if (pty_screen_new(&scr, BU_ROWS, BU_COLS, PTY_SCREEN_SB_DEFAULT) < 0)
		bu_die("pty_screen_new failed");
	t0 = cpu_now();
	for (; len < n; len += 4096)
		pty_screen_feed(scr, buf + len,
		    n - len < 4096 ? n - len : 4096);
	t0 = cpu_now() - t0;
	pty_screen_free(scr);
	free(buf);
	return t0;
}

static double
median(double *v, int n)
{
	return bu_quantile(v, (size_t)n, 0.5);
}

static void
bench_file(const char *bindir, const char *tmp, struct bu_tmux *t,
    const char *label, const char *file, int reps, double target)
{
	double raw[MAX_REPS], hol[MAX_REPS], tm[MAX_REPS], size = mib(file);
	double hcpu[MAX_REPS], tcpu[MAX_REPS], c, x, r;
	char fig[64], tgt[64];

	for (int i = 0; i < reps; i++) {
		raw[i] = run_raw(file);
		hol[i] = run_holder(bindir, tmp, file, i, &hcpu[i]);
		tm[i] = run_tmux(t, tmp, file, &tcpu[i]);
		printf("    %s run %d: raw %.2fs  corral %.2fs (cpu %.2fs)  "
		    "tmux %.2fs (cpu %.2fs)\n", label, i + 1, raw[i], hol[i],
		    hcpu[i], tm[i], tcpu[i]);
		fflush(stdout);
	}
	c = size / median(hol, reps);
	x = size / median(tm, reps);
	r = size / median(raw, reps);
	snprintf(fig, sizeof fig, "ingest %s (%.0f MiB)", label, size);
	snprintf(tgt, sizeof tgt, ">=%.1fx tmux", target);
	bu_result("ingest", fig, "MiB/s", c, x, r, "raw-PTY", tgt,
	    c >= target * x ? "MET" : "MISSED");
	/* CPU seconds, less sensitive to other load on the machine. */
	snprintf(fig, sizeof fig, "  cpu, %s (incl. cat)", label);
	bu_result("ingest", fig, "cpu-s", median(hcpu, reps),
	    median(tcpu, reps), NAN, "", "info", "-");
	snprintf(fig, sizeof fig, "  screen model alone, %s", label);
	bu_result("ingest", fig, "cpu-s", run_screen(file), NAN, NAN, "",
	    "info", "-");
}

int
main(int argc, char **argv)
{
	struct bu_tmux t;
	char *bindir;
	int reps = argc > 4 ? atoi(argv[4]) : 3;

	/* bench_ingest --screen FILE: the screen model alone, for profiling. */
	if (argc == 3 && strcmp(argv[1], "--screen") == 0) {
		printf("%.3f cpu-s\n", run_screen(argv[2]));
		return 0;
	}
	if (argc < 4 || reps < 1 || reps > MAX_REPS) {
		fprintf(stderr, "usage: bench_ingest TMPDIR AGENT_FILE "
		    "PLAIN_FILE [REPS]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	bindir = bu_bindir();
	printf("ingest: one endpoint cats a file, %dx%d, median of %d "
	    "(corral: holder spawn to exit; tmux: window spawn to the end of "
	    "its command; raw: PTY read and discard)\n", BU_COLS, BU_ROWS,
	    reps);
	bu_tmux_start(&t, argv[1]);
	bench_file(bindir, argv[1], &t, "agent output", argv[2], reps, 2.5);
	bench_file(bindir, argv[1], &t, "plain text", argv[3], reps, 2.0);
	bu_tmux_stop(&t);
	free(bindir);
	return 0;
}
