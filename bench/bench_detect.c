/*
 * bench_detect.c: lifecycle detection figures for `make bench` (issue 4):
 *   latency    from an agent blocking (it prints Claude Code's permission
 *              dialog) or finishing (it exits 0) to the state change a
 *              client sees (the holder's summary push, what the console's
 *              list lives on), median and p95 over 50 trials of each kind;
 *              target p95 <= 300 ms;
 *   idle       CPU (utime+stime from /proc) of 64 holders whose agents sit
 *              settled at their prompt, over 10 s: detection must cost
 *              nothing measurable (a settled endpoint runs no timer);
 *   unsettled  (information) the same for 64 agents working silently,
 *              where the detector keeps sampling /proc facts with backoff;
 *   replay     latency on the real CLIs' output (issue 20): the bytes the
 *              real Claude Code and Codex wrote in a session, recorded at
 *              each state (tests/fixtures/tmuxdiff/AGENT-STATE.bytes, each
 *              a prefix of the next), written in steps through a holder of
 *              the recording's size by an agent named as the CLI (so the
 *              shipped rules identify it) that waits in epoll as node
 *              does: from each step's bytes to the state a client sees,
 *              prompt -> working -> blocked -> prompt, p95 over 20
 *              sessions of each; target p95 <= 300 ms.
 * The agent is this program started through a symlink named "claude", so
 * the shipped claude-code rules identify it as they would the real one.
 * Holders are bench_holder processes (pty_holder_run as corral-holder
 * runs it).
 *
 * usage: bench_detect TMPDIR [latency|replay|idle...]
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "bench/lib/bench_util.h"
#include "pty/pty.h"

int main(int, char **);

#define TRIALS 50
#define IDLE_N 64
#define IDLE_SECS 10
#define TARGET_MS 300.0

/* ---- the agent --------------------------------------------------------- */

#define BOX_TOP "╭──────────────────────────────────────────────────╮\r\n"
#define BOX_BOT "╰──────────────────────────────────────────────────╯\r\n"

static const char prompt_box[] =
    "\033[H\033[J"
    "● Ready.\r\n\r\n"
    BOX_TOP
    "│ > Try \"write a test for detect.c\"                │\r\n"
    BOX_BOT
    "  ? for shortcuts\r\n";

static const char dialog[] =
    "\033[H\033[J"
    "● Bash(npm test)\r\n"
    BOX_TOP
    "│ Bash command                                     │\r\n"
    "│                                                  │\r\n"
    "│   npm test                                       │\r\n"
    "│   Run the test suite                             │\r\n"
    "│                                                  │\r\n"
    "│ Do you want to proceed?                          │\r\n"
    "│ ❯ 1. Yes                                         │\r\n"
    "│   2. Yes, and don't ask again for npm commands   │\r\n"
    "│   3. No, and tell Claude what to do differently  │\r\n"
    BOX_BOT;

static void
put_n(const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(1, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			_exit(1);
		s += w;
		n -= (size_t)w;
	}
}

static void
put(const char *s)
{
	put_n(s, strlen(s));
}

/* Append the monotonic time (ns) of the event about to happen. */
static void
stamp(const char *path)
{
	char buf[32];
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	int n = snprintf(buf, sizeof buf, "%llu\n",
	    (unsigned long long)bu_now_ns());

	if (fd >= 0) {
		if (write(fd, buf, (size_t)n) < 0) {
			/* the bench reports the missing stamp */
		}
		close(fd);
	}
}

/*
 * agent STAMPFILE [silent]: the prompt box, then keys from a blocking read
 * (a terminal read, settled): 'b' stamps and shows the dialog, 'n' goes
 * back to the prompt, 'x' stamps and exits 0. silent: one line, then
 * asleep without reading its terminal (working, never settled).
 */
static int
agent(int argc, char **argv)
{
	struct termios t;
	char c;

	if (argc > 3 && strcmp(argv[3], "silent") == 0) {
		put("working quietly...\r\n");
		for (;;)
			pause();
	}
	if (tcgetattr(0, &t) == 0) {
		t.c_lflag &= ~(tcflag_t)(ECHO | ICANON);
		tcsetattr(0, TCSANOW, &t);
	}
	put("\033]0;\xe2\x9c\xb3 Claude Code\007");
	put(prompt_box);
	for (;;) {
		ssize_t r = read(0, &c, 1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return 1;
		if (c == 'b') {
			stamp(argv[2]);
			put(dialog);
		} else if (c == 'n') {
			put(prompt_box);
		} else if (c == 'x') {
			stamp(argv[2]);
			return 0;
		}
	}
}

/* The whole of a file (the bench dies if it cannot), *len its size. */
static char *
slurp(const char *path, size_t *len)
{
	struct stat st;
	char *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0)
		bu_die("%s: %s", path, strerror(errno));
	if ((buf = malloc((size_t)st.st_size + 1)) == NULL)
		bu_die("out of memory");
	*len = 0;
	while (*len < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + *len, (size_t)st.st_size - *len);

		if (r <= 0)
			bu_die("%s: short read", path);
		*len += (size_t)r;
	}
	close(fd);
	return buf;
}

/*
 * replay STAMPFILE FIFO FILE...: writes FILE 1, then for each byte read
 * from FIFO stamps and writes what the next FILE adds to the one before
 * (each is a prefix of the next); waits in epoll on its terminal and the
 * FIFO, as a node CLI waits (no terminal read). After the last file it
 * waits until the holder ends it.
 */
static int
replay(int argc, char **argv)
{
	struct epoll_event ev = { .events = EPOLLIN }, got[2];
	size_t prev = 0, len;
	int ep, fifo, i = 4;
	char *data = slurp(argv[i], &len), c;

	put_n(data, len);
	prev = len;
	free(data);
	if ((fifo = open(argv[3], O_RDWR | O_CLOEXEC)) < 0 ||
	    (ep = epoll_create1(EPOLL_CLOEXEC)) < 0)
		return 1;
	ev.data.fd = 0;
	epoll_ctl(ep, EPOLL_CTL_ADD, 0, &ev);
	ev.data.fd = fifo;
	epoll_ctl(ep, EPOLL_CTL_ADD, fifo, &ev);
	for (;;) {
		int n = epoll_wait(ep, got, 2, -1);

		for (int k = 0; k < n; k++) {
			if (got[k].data.fd == 0) {
				char sink[256];

				if (read(0, sink, sizeof sink) <= 0)
					return 0;
				continue;
			}
			if (read(fifo, &c, 1) != 1 || ++i >= argc)
				continue;
			data = slurp(argv[i], &len);
			if (len < prev)
				_exit(3);
			stamp(argv[2]);
			put_n(data + prev, len - prev);
			prev = len;
			free(data);
		}
	}
}

/* ---- the client ------------------------------------------------------ */

struct ctx {
	const char *tmp;
	char *bindir;
	char *claude;	/* TMP/claude -> this program */
	char *codex;	/* TMP/codex -> this program */
};

static uint64_t
last_stamp(const char *path)
{
	char *text = NULL, *p;
	FILE *f = fopen(path, "r");
	size_t cap = 0;
	uint64_t v = 0;

	if (f == NULL)
		return 0;
	while (getline(&text, &cap, f) > 0)
		v = strtoull(text, &p, 10);
	free(text);
	fclose(f);
	return v;
}

/* The activity in a status JSON text, into buf. */
static bool
activity_of(const uint8_t *p, size_t len, char *buf, size_t bufsz)
{
	static const char key[] = "\"activity\":\"";
	const char *s, *e;
	char *js = malloc(len + 1);

	if (js == NULL)
		return false;
	memcpy(js, p, len);
	js[len] = '\0';
	s = strstr(js, key);
	if (s == NULL || (e = strchr(s + sizeof key - 1, '"')) == NULL) {
		free(js);
		return false;
	}
	s += sizeof key - 1;
	snprintf(buf, bufsz, "%.*s", (int)(e - s), s);
	free(js);
	return true;
}

/*
 * Wait (up to ms) until the holder reports activity want: a status
 * request first (the current state), then its summary pushes. Returns
 * the monotonic ns it was seen, or 0.
 */
static uint64_t
wait_state(struct pty_holder_client *cl, const char *want, int ms)
{
	uint64_t end = bu_now_ns() + (uint64_t)ms * 1000000u;
	uint8_t seq[4] = { 1, 0, 0, 0 };
	const uint8_t *p;
	size_t plen;
	uint8_t type;
	char act[32];

	if (pty_holder_client_send(cl, PTY_W_STATUS, seq, sizeof seq) < 0)
		return 0;
	for (;;) {
		uint64_t now = bu_now_ns();
		int rc;

		if (now >= end)
			return 0;
		rc = pty_holder_client_recv(cl, &type, &p, &plen,
		    (int)((end - now) / 1000000u) + 1);
		if (rc != 1)
			return 0;
		if (type == PTY_W_STATUS_REPLY && plen > 4 &&
		    activity_of(p + 4, plen - 4, act, sizeof act) &&
		    strcmp(act, want) == 0)
			return bu_now_ns();
	}
}

static void
type_key(struct bu_holder *h, char key)
{
	struct pty_holder_client *cl = NULL;
	uint8_t seq[4] = { 2, 0, 0, 0 };
	const uint8_t *p;
	size_t plen;
	uint8_t type;
	int rc;

	if ((rc = pty_holder_client_open(&cl, h->sock, 0, 2000)) < 0)
		bu_die("connect %s: %s", h->sock, pty_strerror(rc));
	if (pty_holder_client_send(cl, PTY_W_INPUT, &key, 1) < 0 ||
	    pty_holder_client_send(cl, PTY_W_STATUS, seq, sizeof seq) < 0)
		bu_die("send to %s", h->sock);
	while ((rc = pty_holder_client_recv(cl, &type, &p, &plen, 2000)) == 1 &&
	    type != PTY_W_STATUS_REPLY)
		;
	pty_holder_client_free(cl);
}

static struct pty_holder_client *
summary_client(struct bu_holder *h)
{
	struct pty_holder_client *cl = NULL;
	int rc;

	if ((rc = pty_holder_client_open(&cl, h->sock, PTY_HELLO_SUMMARY,
	    2000)) < 0)
		bu_die("connect %s: %s", h->sock, pty_strerror(rc));
	return cl;
}

static void
holder_up(struct ctx *x, struct bu_holder *h, const char *dir,
    const char *stamps, bool silent)
{
	char *cmd[] = { x->claude, "agent", (char *)stamps,
		silent ? "silent" : NULL, NULL };
	struct bu_holder_cfg cfg = { .control = true, .transcript = 0 };

	bu_holder_start(h, x->bindir, dir, &cfg, cmd);
}

static void
report(const char *kind, double *v, int n)
{
	double med, p95;
	char fig[64];

	med = bu_quantile(v, (size_t)n, 0.5);
	p95 = bu_quantile(v, (size_t)n, 0.95);
	snprintf(fig, sizeof fig, "detect %s latency median", kind);
	bu_result("detect", fig, "ms", med, NAN, NAN, "", "-", "-");
	snprintf(fig, sizeof fig, "detect %s latency p95", kind);
	bu_result("detect", fig, "ms", p95, NAN, NAN, "", "<= 300 ms",
	    p95 <= TARGET_MS ? "MET" : "MISSED");
}

static void
latency(struct ctx *x)
{
	double blocked[TRIALS], done[TRIALS];
	struct bu_holder h;
	struct pty_holder_client *cl;
	char *dir, *stamps;
	uint64_t seen, t0;
	int i;

	printf("detection latency: agent event -> state seen by a client, "
	    "%d trials each\n", TRIALS);
	/* blocked: one agent, dialog up and down again */
	dir = bu_fmt("%s/lat-blocked", x->tmp);
	stamps = bu_fmt("%s/lat-blocked.stamps", x->tmp);
	holder_up(x, &h, dir, stamps, false);
	cl = summary_client(&h);
	if (wait_state(cl, "prompt", 10000) == 0)
		bu_die("the agent never reached its prompt");
	for (i = 0; i < TRIALS; i++) {
		type_key(&h, 'b');
		if ((seen = wait_state(cl, "blocked", 5000)) == 0)
			bu_die("trial %d: blocked was never reported", i);
		t0 = last_stamp(stamps);
		if (t0 == 0 || seen < t0)
			bu_die("trial %d: no stamp", i);
		blocked[i] = (double)(seen - t0) / 1e6;
		type_key(&h, 'n');
		if (wait_state(cl, "prompt", 5000) == 0)
			bu_die("trial %d: prompt never came back", i);
	}
	pty_holder_client_free(cl);
	bu_holder_stop(&h);
	free(dir);
	free(stamps);
	report("blocked", blocked, TRIALS);

	/* done: a fresh agent per trial, settled at its prompt, then exit */
	for (i = 0; i < TRIALS; i++) {
		dir = bu_fmt("%s/lat-done-%d", x->tmp, i);
		stamps = bu_fmt("%s/lat-done-%d.stamps", x->tmp, i);
		holder_up(x, &h, dir, stamps, false);
		cl = summary_client(&h);
		if (wait_state(cl, "prompt", 10000) == 0)
			bu_die("trial %d: the agent never reached its prompt",
			    i);
		type_key(&h, 'x');
		if ((seen = wait_state(cl, "done", 5000)) == 0)
			bu_die("trial %d: done was never reported", i);
		t0 = last_stamp(stamps);
		if (t0 == 0 || seen < t0)
			bu_die("trial %d: no stamp", i);
		done[i] = (double)(seen - t0) / 1e6;
		pty_holder_client_free(cl);
		bu_holder_wait(&h, NULL);
		bu_holder_stop(&h);
		free(dir);
		free(stamps);
	}
	report("done", done, TRIALS);
}

#define REPLAY_TRIALS 20
#define REPLAY_STEPS 3

/* One real CLI's recorded session, replayed in steps. */
static void
replay_agent(struct ctx *x, const char *agent, const char *exe)
{
	static const char *const files[] = { "prompt", "working", "blocked",
		"prompt-answered" };
	static const char *const want[] = { "working", "blocked", "prompt" };
	double v[REPLAY_STEPS][REPLAY_TRIALS];
	char *cmd[16], *fig, *fifo;
	int i, s, n = 0;

	fifo = bu_fmt("%s/replay-%s.fifo", x->tmp, agent);
	unlink(fifo);
	if (mkfifo(fifo, 0600) < 0)
		bu_die("mkfifo %s: %s", fifo, strerror(errno));
	for (i = 0; i < REPLAY_TRIALS; i++) {
		struct bu_holder_cfg cfg = { .transcript = 0, .rows = 24,
			.cols = 80 };
		struct pty_holder_client *cl;
		struct bu_holder h;
		char *dir = bu_fmt("%s/replay-%s-%d", x->tmp, agent, i);
		char *stamps = bu_fmt("%s.stamps", dir);
		int wfd;

		n = 0;
		cmd[n++] = (char *)exe;
		cmd[n++] = "replay";
		cmd[n++] = stamps;
		cmd[n++] = fifo;
		for (s = 0; s < 4; s++)
			cmd[n++] = bu_fmt("%s/%s-%s.bytes",
			    BENCH_RECORDINGS_DIR, agent, files[s]);
		cmd[n] = NULL;
		bu_holder_start(&h, x->bindir, dir, &cfg, cmd);
		cl = summary_client(&h);
		if (wait_state(cl, "prompt", 10000) == 0)
			bu_die("%s replay %d: never at its prompt", agent, i);
		if ((wfd = open(fifo, O_WRONLY | O_CLOEXEC)) < 0)
			bu_die("open %s: %s", fifo, strerror(errno));
		for (s = 0; s < REPLAY_STEPS; s++) {
			uint64_t seen, t0;

			if (write(wfd, "n", 1) != 1)
				bu_die("write %s", fifo);
			if ((seen = wait_state(cl, want[s], 5000)) == 0)
				bu_die("%s replay %d: %s never reported "
				    "(step %d)", agent, i, want[s], s);
			t0 = last_stamp(stamps);
			if (t0 == 0 || seen < t0)
				bu_die("%s replay %d: no stamp", agent, i);
			v[s][i] = (double)(seen - t0) / 1e6;
		}
		close(wfd);
		pty_holder_client_free(cl);
		bu_holder_stop(&h);
		for (s = 4; s < n; s++)
			free(cmd[s]);
		free(dir);
		free(stamps);
	}
	for (s = 0; s < REPLAY_STEPS; s++) {
		fig = bu_fmt("%s replay -> %s", agent, want[s]);
		report(fig, v[s], REPLAY_TRIALS);
		free(fig);
	}
	unlink(fifo);
	free(fifo);
}

static void
replay_all(struct ctx *x)
{
	printf("detection latency on the real CLIs' recorded output, "
	    "%d sessions each\n", REPLAY_TRIALS);
	replay_agent(x, "claude-code", x->claude);
	replay_agent(x, "codex", x->codex);
}

/* CPU ticks of the holders (their own, not their agents') over secs. */
static uint64_t
holders_ticks(struct bu_holder *h, int n, unsigned secs)
{
	uint64_t a = 0, b = 0;
	struct bu_cpu c;
	int i;

	for (i = 0; i < n; i++)
		if (bu_cpu_read(h[i].pid, &c) == 0)
			a += c.self;
	bu_sleep_ms(secs * 1000u);
	for (i = 0; i < n; i++)
		if (bu_cpu_read(h[i].pid, &c) == 0)
			b += c.self;
	return b >= a ? b - a : 0;
}

static int
count_state(struct bu_holder *h, int n, const char *want)
{
	int i, k = 0;

	for (i = 0; i < n; i++) {
		struct pty_holder_client *cl = summary_client(&h[i]);

		k += wait_state(cl, want, 3000) != 0;
		pty_holder_client_free(cl);
	}
	return k;
}

static void
idle(struct ctx *x, bool silent)
{
	struct bu_holder *h = calloc(IDLE_N, sizeof *h);
	pid_t pids[IDLE_N];
	const char *want = silent ? "working" : "prompt";
	uint64_t ticks;
	char fig[64];
	int i, k;

	if (h == NULL)
		bu_die("out of memory");
	for (i = 0; i < IDLE_N; i++) {
		char *dir = bu_fmt("%s/%s-%d", x->tmp, silent ? "silent" :
		    "idle", i);
		char *stamps = bu_fmt("%s.stamps", dir);

		holder_up(x, &h[i], dir, stamps, silent);
		pids[i] = h[i].pid;
		free(dir);
		free(stamps);
	}
	if ((k = count_state(h, IDLE_N, want)) != IDLE_N)
		bu_die("%d of %d endpoints %s", k, IDLE_N, want);
	/* Settled: the status pings above are over, CPU stands still. */
	if (!silent && bu_wait_quiet(pids, IDLE_N, 1500, 20000) < 0)
		printf("  (holders did not go quiet within 20 s)\n");
	ticks = holders_ticks(h, IDLE_N, IDLE_SECS);
	if (silent) {
		snprintf(fig, sizeof fig, "detect %d working silently, %d s",
		    IDLE_N, IDLE_SECS);
		bu_result("detect", fig, "ms CPU", bu_ticks_ms(ticks), NAN,
		    NAN, "", "-", "-");
	} else {
		snprintf(fig, sizeof fig, "detect %d settled idle, %d s",
		    IDLE_N, IDLE_SECS);
		/* One tick is the clock's grain: "no measurable cost". */
		bu_result("detect", fig, "ms CPU", bu_ticks_ms(ticks), NAN,
		    NAN, "", "<= 1 tick", ticks <= 1 ? "MET" : "MISSED");
	}
	k = count_state(h, IDLE_N, want);
	if (k != IDLE_N)
		printf("  note: %d of %d endpoints still %s afterwards\n", k,
		    IDLE_N, want);
	for (i = 0; i < IDLE_N; i++)
		bu_holder_stop(&h[i]);
	free(h);
}

int
main(int argc, char **argv)
{
	struct ctx x;
	char self[4096];
	ssize_t n;
	int i;

	if (argc >= 3 && strcmp(argv[1], "agent") == 0)
		return agent(argc, argv);
	if (argc >= 5 && strcmp(argv[1], "replay") == 0)
		return replay(argc, argv);
	if (argc < 2) {
		fprintf(stderr,
		    "usage: bench_detect TMPDIR [latency|replay|idle...]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	memset(&x, 0, sizeof x);
	x.tmp = argv[1];
	x.bindir = bu_bindir();
	if ((n = readlink("/proc/self/exe", self, sizeof self - 1)) <= 0)
		bu_die("readlink /proc/self/exe: %s", strerror(errno));
	self[n] = '\0';
	x.claude = bu_fmt("%s/claude", x.tmp);
	unlink(x.claude);
	if (symlink(self, x.claude) < 0)
		bu_die("symlink %s: %s", x.claude, strerror(errno));
	x.codex = bu_fmt("%s/codex", x.tmp);
	unlink(x.codex);
	if (symlink(self, x.codex) < 0)
		bu_die("symlink %s: %s", x.codex, strerror(errno));
	printf("lifecycle detection (issue 4)\n");
	for (i = 2; i < argc || i == 2; i++) {
		const char *what = i < argc ? argv[i] : "all";

		if (strcmp(what, "latency") == 0 || strcmp(what, "all") == 0)
			latency(&x);
		if (strcmp(what, "replay") == 0 || strcmp(what, "all") == 0)
			replay_all(&x);
		if (strcmp(what, "idle") == 0 || strcmp(what, "all") == 0) {
			idle(&x, false);
			idle(&x, true);
		}
	}
	unlink(x.claude);
	free(x.claude);
	unlink(x.codex);
	free(x.codex);
	free(x.bindir);
	return 0;
}
