/*
 * bench_echo.c: keystroke round trip (issue 2 item 5), median and p99,
 * with no other load and with 16 busy endpoints (a coloured line every
 * millisecond each). The agent is `bench_agent echo` (raw mode, writes
 * back every byte) on a 200x50 terminal. One byte is typed; the clock
 * stops when the echoed character is visible to the client:
 *   tmux     a real `tmux attach` client inside a PTY we own;
 *   console  the real `corral attach ID` (issue 3 item 7) inside a PTY we
 *            own, on leases from `corral new` in a private state
 *            directory (Enter starts typing);
 *            for both the byte is written to that PTY and the clock stops
 *            when the client's output, fed into a pty_screen, holds the
 *            character in the pane cell where the agent echoed it (not
 *            merely any printed copy of it: the lease list redraws text
 *            too): the headline rows, like for like (issue 17 item 4);
 *   corral   the holder alone, through its socket: PTY_W_INPUT, then ROWS
 *            frames into a pty_mirror until the cell holds the character.
 * Each column is a struct echo_side in sides[].
 *
 * usage: bench_echo TMPDIR [KEYS]
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/lib/bench_util.h"
#include "pty/pty.h"

int main(int, char **);

#define BUSY_N 16
#define KEY_TIMEOUT_MS 2000
#define MAX_KEYS 5000
/* The agent prints this on row 0 once it is in raw mode. */
#define READY "echo-ready"

struct ctx {
	const char *tmp;
	char *bindir;
	char *agent;
	char *corral;	/* build/tui/corral, the real binary */
};

/* One measured endpoint: state for whichever side runs it. */
struct echo_run {
	struct ctx *x;
	bool busy;
	/* corral */
	struct bu_holder echo;
	struct bu_holder busyh[BUSY_N];
	struct pty_holder_client *client;
	struct pty_mirror mirror;
	/* tmux (and any client drawn in a PTY) */
	struct bu_tmux tmux;
	int master;
	pid_t client_pid;
	/* console: leases in a private state directory, its drawn screen */
	char *state;		/* CORRAL_STATE_DIR (and the leases' cwd) */
	char *ids[BUSY_N + 1];	/* every lease, the echo one first */
	int nids;
	struct pty_screen *screen;
	int row0, col0, width;	/* where the pane shows READY; its width */
};

static void screen_client(struct echo_run *, const char *who);

struct echo_side {
	const char *name;
	/* Start the echo endpoint (and the busy ones); false if unavailable. */
	bool (*setup)(struct echo_run *);
	/* Type c as keystroke k: ms until it is visible, < 0 if lost. */
	double (*key)(struct echo_run *, int k, uint8_t c);
	void (*teardown)(struct echo_run *);
};

/* ---- corral: through the holder socket ------------------------------- */

static char *
mirror_row(const struct pty_mirror *m, int row, char *buf, size_t sz)
{
	size_t len = 0;

	for (int col = 0; col < m->cols && len + 8 < sz; col++) {
		const struct pty_cell *c = pty_mirror_cell(m, row, col);

		if (c->width == 0)
			continue;
		buf[len++] = c->cp[0] > 0 && c->cp[0] < 0x80 ?
		    (char)c->cp[0] : ' ';
	}
	buf[len] = '\0';
	return buf;
}

/* Apply frames until pred(row, col) holds c, or the deadline passes. */
static bool
mirror_wait(struct echo_run *r, int row, int col, uint32_t c, int ms)
{
	uint64_t end = bu_now_ns() + (uint64_t)ms * 1000000u;
	const uint8_t *p;
	size_t plen;
	uint8_t type;

	for (;;) {
		if (row < r->mirror.rows && col < r->mirror.cols &&
		    pty_mirror_cell(&r->mirror, row, col)->cp[0] == c)
			return true;
		uint64_t now = bu_now_ns();
		if (now >= end)
			return false;
		if (pty_holder_client_recv(r->client, &type, &p, &plen,
		    (int)((end - now) / 1000000u) + 1) != 1)
			return false;
		if (pty_mirror_apply(&r->mirror, type, p, plen) < 0)
			bu_die("corral: bad frame from the holder");
	}
}

static void
busy_holders(struct echo_run *r)
{
	for (int i = 0; i < BUSY_N; i++) {
		char *dir = bu_fmt("%s/echo-busy-%d", r->x->tmp, i);
		char *cmd[] = { r->x->agent, "tick", "3600", "0", NULL };

		bu_holder_start(&r->busyh[i], r->x->bindir, dir, NULL, cmd);
		free(dir);
	}
}

static bool
corral_setup(struct echo_run *r)
{
	struct bu_holder_cfg cfg = { .control = true, .transcript = -1 };
	char *dir = bu_fmt("%s/echo", r->x->tmp), line[256];
	char *cmd[] = { r->x->agent, "echo", NULL };
	uint64_t end;
	int rc;

	if (r->busy)
		busy_holders(r);
	bu_holder_start(&r->echo, r->x->bindir, dir, &cfg, cmd);
	free(dir);
	if ((rc = pty_holder_client_open(&r->client, r->echo.sock,
	    PTY_HELLO_LIVE | PTY_HELLO_CONTROL, 5000)) < 0)
		bu_die("corral: connect: %s", pty_strerror(rc));
	pty_mirror_init(&r->mirror);
	end = bu_now_ns() + 5000000000u;
	for (;;) {
		if (mirror_wait(r, 0, 0, READY[0], 100) &&
		    strstr(mirror_row(&r->mirror, 0, line, sizeof line),
		    READY) != NULL)
			break;
		if (bu_now_ns() > end)
			bu_die("corral: the echo agent did not start");
	}
	return true;
}

static double
corral_key(struct echo_run *r, int k, uint8_t c)
{
	uint64_t t0 = bu_now_ns();
	int rc;

	if ((rc = pty_holder_client_send(r->client, PTY_W_INPUT, &c, 1)) < 0)
		bu_die("corral: send: %s", pty_strerror(rc));
	/* Keystrokes land on rows 1.. (row 0 holds READY). */
	if (!mirror_wait(r, 1 + k / BU_COLS, k % BU_COLS, c, KEY_TIMEOUT_MS))
		return -1;
	return (double)(bu_now_ns() - t0) / 1e6;
}

static void
corral_teardown(struct echo_run *r)
{
	pty_holder_client_free(r->client);
	pty_mirror_free(&r->mirror);
	bu_holder_stop(&r->echo);
	if (r->busy)
		for (int i = 0; i < BUSY_N; i++)
			bu_holder_stop(&r->busyh[i]);
}

/* ---- a client drawn in a PTY we own (tmux; later the console) -------- */

/* Run argv as a terminal client on a 200x50 PTY we own. */
static void
term_spawn(struct echo_run *r, char *const *argv)
{
	r->client_pid = bu_term_spawn(&r->master, argv, r->state);
}

/*
 * Let ms pass (the gap between keystrokes) while reading whatever the
 * client draws meanwhile, so it never blocks on a full PTY.
 */
static void
term_pause(struct echo_run *r, unsigned ms)
{
	uint64_t end = bu_now_ns() + (uint64_t)ms * 1000000u;
	uint8_t buf[65536];

	if (r->master < 0) {
		bu_sleep_ms(ms);
		return;
	}
	for (;;) {
		struct pollfd pf = { .fd = r->master, .events = POLLIN };
		uint64_t now = bu_now_ns();
		ssize_t n;

		if (now >= end)
			return;
		if (poll(&pf, 1, (int)((end - now) / 1000000u) + 1) <= 0)
			continue;
		if ((n = read(r->master, buf, sizeof buf)) <= 0)
			continue;
		if (r->screen != NULL)
			pty_screen_feed(r->screen, (const char *)buf,
			    (size_t)n);
	}
}

static void
term_stop(struct echo_run *r)
{
	bu_term_stop(r->client_pid, r->master);
	r->client_pid = 0;
	r->master = -1;
}

static bool
tmux_setup(struct echo_run *r)
{
	char size[16], rows[16], *cmd;
	char *argv[] = { "tmux", "-L", NULL, "-f", NULL, "attach", "-t",
		"echo", NULL };

	bu_tmux_start(&r->tmux, r->x->tmp);
	snprintf(size, sizeof size, "%d", BU_COLS);
	snprintf(rows, sizeof rows, "%d", BU_ROWS);
	cmd = bu_fmt("exec '%s' echo", r->x->agent);
	if (bu_tmux(&r->tmux, "new-session", "-d", "-s", "echo", "-x", size,
	    "-y", rows, cmd, NULL) != 0)
		bu_die("tmux: new-session echo failed");
	free(cmd);
	if (r->busy) {
		cmd = bu_fmt("exec '%s' tick 3600 0", r->x->agent);
		for (int i = 0; i < BUSY_N; i++)
			if (bu_tmux(&r->tmux, "new-window", "-d", "-t",
			    "base", cmd, NULL) != 0)
				bu_die("tmux: new-window failed");
		free(cmd);
	}
	/* The agent is in raw mode once it has printed READY. */
	for (int i = 0;; i++) {
		char out[16384];

		if (bu_tmux_out(&r->tmux, out, sizeof out, "capture-pane",
		    "-p", "-t", "echo", NULL) == 0 && strstr(out, READY))
			break;
		if (i > 250)
			bu_die("tmux: the echo agent did not start");
		bu_sleep_ms(20);
	}
	argv[2] = r->tmux.name;
	argv[4] = r->tmux.conf;
	term_spawn(r, argv);
	/* Its drawing in a screen model, as the console's (screen_key). */
	screen_client(r, "tmux");
	return true;
}

static void
tmux_teardown(struct echo_run *r)
{
	term_stop(r);
	bu_tmux_stop(&r->tmux);
	pty_screen_free(r->screen);
}

/* ---- console: `corral attach ID` in a PTY we own (issue 3 item 7) ---- */

/* Run `corral ARGS...` in r->state; its stdout (trimmed) into out. */
static int
corral_cli(struct echo_run *r, char *out, size_t outsz, char *const *args)
{
	return bu_corral(r->x->corral, r->state, -1, out, outsz, args);
}

/* `corral new --sandbox trusted_local --allow-control -- AGENT MODE...` */
static void
console_lease(struct echo_run *r, char *const *agent_args)
{
	char *args[12], id[256];
	int n = 0;

	args[n++] = "new";
	args[n++] = "--sandbox";
	args[n++] = "trusted_local";
	args[n++] = "--allow-control";
	args[n++] = "--";
	args[n++] = r->x->agent;
	while (*agent_args != NULL && n < 11)
		args[n++] = *agent_args++;
	args[n] = NULL;
	if (corral_cli(r, id, sizeof id, args) != 0 || id[0] == '\0')
		bu_die("console: corral new failed: %s", id);
	r->ids[r->nids++] = bu_fmt("%s", id);
}

/* The console's terminal replies (DA, DSR) go back to it. */
static void
console_reply(const char *buf, size_t len, void *ud)
{
	struct echo_run *r = ud;

	if (write(r->master, buf, len) < 0)
		bu_die("write to the console PTY: %s", strerror(errno));
}

/* Feed the console's output into r->screen until ok() holds. */
static bool
screen_wait(struct echo_run *r, int ms,
    bool (*ok)(struct echo_run *, const void *), const void *arg)
{
	uint64_t end = bu_now_ns() + (uint64_t)ms * 1000000u;
	char buf[65536];

	for (;;) {
		struct pollfd pf = { .fd = r->master, .events = POLLIN };
		uint64_t now = bu_now_ns();
		ssize_t n;

		if (ok(r, arg))
			return true;
		if (now >= end)
			return false;
		if (poll(&pf, 1, (int)((end - now) / 1000000u) + 1) <= 0)
			continue;
		n = read(r->master, buf, sizeof buf);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return false;
		pty_screen_feed(r->screen, buf, (size_t)n);
	}
}

/* Does row hold the ASCII text s from column col? */
static bool
screen_has(struct echo_run *r, int row, int col, const char *s)
{
	struct pty_cell cell;

	for (; *s != '\0'; s++, col++) {
		if (col >= BU_COLS)
			return false;
		pty_screen_cell(r->screen, row, col, &cell);
		if (cell.cp[0] != (uint8_t)*s)
			return false;
	}
	return true;
}

/* The pane shows READY: remember where (the agent's row 0, column 0). */
static bool
screen_ready(struct echo_run *r, const void *arg)
{
	(void)arg;
	for (int row = 0; row < BU_ROWS; row++)
		for (int col = 0; col < BU_COLS; col++)
			if (screen_has(r, row, col, READY)) {
				r->row0 = row;
				r->col0 = col;
				return true;
			}
	return false;
}

/* The status line (the last row) shows text somewhere. */
static bool
screen_status(struct echo_run *r, const void *text)
{
	for (int col = 0; col < BU_COLS; col++)
		if (screen_has(r, BU_ROWS - 1, col, text))
			return true;
	return false;
}

struct echo_cell {
	int row, col;
	uint32_t c;
};

static bool
screen_cell_is(struct echo_run *r, const void *arg)
{
	const struct echo_cell *e = arg;
	struct pty_cell cell;

	pty_screen_cell(r->screen, e->row, e->col, &cell);
	return cell.cp[0] == e->c;
}

static bool
console_setup(struct echo_run *r)
{
	char *echo[] = { "echo", NULL };
	char *tick[] = { "tick", "3600", "0", NULL };
	char *argv[] = { r->x->corral, "attach", NULL, NULL };

	if (access(r->x->corral, X_OK) != 0)
		bu_die("console: %s is missing (make build)", r->x->corral);
	r->state = bu_fmt("%s/console-%s", r->x->tmp,
	    r->busy ? "busy" : "idle");
	bu_mkdir(r->state);
	/* The echo lease first: `corral attach` focuses it anyway. */
	console_lease(r, echo);
	if (r->busy)
		for (int i = 0; i < BUSY_N; i++)
			console_lease(r, tick);
	argv[2] = r->ids[0];
	term_spawn(r, argv);
	screen_client(r, "console");
	if (write(r->master, "\r", 1) != 1)
		bu_die("write to the console PTY: %s", strerror(errno));
	if (!screen_wait(r, 5000, screen_status, "TYPING"))
		bu_die("console: Enter did not start typing");
	/* Let the resize reach the agent, and the console settle. */
	term_pause(r, 300);
	return true;
}

/*
 * The client's drawing (tmux's or the console's) fed into r->screen
 * until the agent's READY shows: where its pane is, and how wide.
 */
static void
screen_client(struct echo_run *r, const char *who)
{
	int rc;

	if ((rc = pty_screen_new(&r->screen, BU_ROWS, BU_COLS, 0)) < 0)
		bu_die("%s: pty_screen_new: %s", who, strerror(-rc));
	pty_screen_set_output(r->screen, console_reply, r);
	if (!screen_wait(r, 5000, screen_ready, NULL))
		bu_die("%s: the echo agent never showed in the pane", who);
	/* The pane runs to the right edge; the agent's PTY has its width. */
	r->width = BU_COLS - r->col0;
}

/*
 * Both clients alike: the byte goes to the client's PTY; the clock stops
 * when the client's drawing, in the screen model, holds it in the cell
 * where the agent echoed it.
 */
static double
screen_key(struct echo_run *r, int k, uint8_t c)
{
	/* Keystrokes land on the pane's rows 1.. (row 0 holds READY). */
	struct echo_cell e = { .row = r->row0 + 1 + k / r->width,
		.col = r->col0 + k % r->width, .c = c };
	uint64_t t0;

	if (e.row >= BU_ROWS - 1)
		bu_die("console: %d keystrokes do not fit the pane", k);
	t0 = bu_now_ns();
	if (write(r->master, &c, 1) != 1)
		bu_die("write to the console PTY: %s", strerror(errno));
	if (!screen_wait(r, KEY_TIMEOUT_MS, screen_cell_is, &e))
		return -1;
	return (double)(bu_now_ns() - t0) / 1e6;
}

static void
console_teardown(struct echo_run *r)
{
	char out[4096];

	term_stop(r);
	for (int i = 0; i < r->nids; i++) {
		char *args[] = { "cancel", r->ids[i], NULL };

		if (corral_cli(r, out, sizeof out, args) != 0)
			fprintf(stderr, "bench_echo: corral cancel %s: %s\n",
			    r->ids[i], out);
		free(r->ids[i]);
	}
	/* Every holder gone before the next measurement starts. */
	for (int i = 0;; i++) {
		char *args[] = { "ls", "--json", NULL };

		if (corral_cli(r, out, sizeof out, args) == 0 &&
		    strstr(out, "\"id\"") == NULL)
			break;
		if (i > 100)
			bu_die("console: leases still live after cancel");
		bu_sleep_ms(50);
	}
	pty_screen_free(r->screen);
	bu_rmrf(r->state);
	free(r->state);
}

static const struct echo_side sides[] = {
	{ .name = "corral", .setup = corral_setup, .key = corral_key,
	    .teardown = corral_teardown },
	{ .name = "tmux", .setup = tmux_setup, .key = screen_key,
	    .teardown = tmux_teardown },
	{ .name = "console", .setup = console_setup, .key = screen_key,
	    .teardown = console_teardown },
};
#define NSIDES (sizeof sides / sizeof sides[0])

struct figures {
	double median, p99, max;
	bool ok;
};

/* A console row: the median against tmux's (<= 1.0x), a p99 for info. */
static void
echo_row(const char *fig, double corral, double tmux, bool ok, bool median)
{
	bu_result("echo", fig, "ms", corral, tmux, NAN, "", median ?
	    "<= 1.0x tmux" : "info", !median ? "-" : ok && corral <= tmux ?
	    "MET" : "MISSED");
}

static struct figures
measure(struct ctx *x, const struct echo_side *s, bool busy, int keys)
{
	struct echo_run r;
	struct figures f = { NAN, NAN, NAN, false };
	double *v = calloc((size_t)keys, sizeof *v);
	int lost = 0;

	if (v == NULL)
		bu_die("out of memory");
	memset(&r, 0, sizeof r);
	r.x = x;
	r.busy = busy;
	r.master = -1;
	if (!s->setup(&r)) {
		free(v);
		return f;
	}
	if (busy)
		term_pause(&r, 500); /* let the busy endpoints get going */
	for (int k = 0; k < keys; k++) {
		double ms = s->key(&r, k, (uint8_t)('a' + k % 26));

		if (ms < 0) {
			lost++;
			ms = KEY_TIMEOUT_MS;
		}
		v[k] = ms;
		/* 1-3 ms between keystrokes, as typing never waits on us. */
		term_pause(&r, 1 + (unsigned)(k % 3));
	}
	s->teardown(&r);
	if (lost > 0)
		fprintf(stderr, "bench_echo: %s: %d keystrokes lost\n",
		    s->name, lost);
	f.median = bu_quantile(v, (size_t)keys, 0.5);
	f.p99 = bu_quantile(v, (size_t)keys, 0.99);
	f.max = v[keys - 1];
	f.ok = lost == 0;
	free(v);
	return f;
}

int
main(int argc, char **argv)
{
	struct figures fig[2][NSIDES];
	struct ctx x;
	int keys = argc > 2 ? atoi(argv[2]) : 500;

	if (argc < 2 || keys < 10 || keys > MAX_KEYS) {
		fprintf(stderr, "usage: bench_echo TMPDIR [KEYS]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	x.tmp = argv[1];
	x.bindir = bu_bindir();
	x.agent = bu_fmt("%s/bench_agent", x.bindir);
	x.corral = bu_fmt("%s/../tui/corral", x.bindir);
	printf("echo: %d keystrokes, one byte each, until visible to the "
	    "client (%dx%d)\n", keys, BU_COLS, BU_ROWS);
	for (int b = 0; b < 2; b++)
		for (size_t s = 0; s < NSIDES; s++) {
			fig[b][s] = measure(&x, &sides[s], b == 1, keys);
			printf("    %-7s %-24s median %.3f ms  p99 %.3f ms  "
			    "max %.3f ms%s\n", sides[s].name,
			    b ? "16 busy endpoints" : "idle", fig[b][s].median,
			    fig[b][s].p99, fig[b][s].max,
			    fig[b][s].ok ? "" : "  (keystrokes lost)");
			fflush(stdout);
		}
	/*
	 * The headline, like for like (issue 17): the console (`corral
	 * attach` in a PTY) against tmux's attached client, each until the
	 * echo is in the cell on the client's terminal.
	 */
	echo_row("console echo median, idle", fig[0][2].median,
	    fig[0][1].median, fig[0][2].ok, true);
	echo_row("console echo p99, idle", fig[0][2].p99, fig[0][1].p99,
	    fig[0][2].ok, false);
	echo_row("console echo median, 16 busy", fig[1][2].median,
	    fig[1][1].median, fig[1][2].ok, true);
	echo_row("console echo p99, 16 busy", fig[1][2].p99, fig[1][1].p99,
	    fig[1][2].ok, false);
	/* The holder alone, at its socket (no client drawing): absolute. */
	bu_result("echo", "  holder socket echo median, 16 busy", "ms",
	    fig[1][0].median, fig[1][1].median, NAN, "", "< 1 ms",
	    fig[1][0].ok && fig[1][0].median < 1.0 ? "MET" : "MISSED");
	bu_result("echo", "  holder socket echo p99, 16 busy", "ms",
	    fig[1][0].p99, fig[1][1].p99, NAN, "", "< 10 ms",
	    fig[1][0].ok && fig[1][0].p99 < 10.0 ? "MET" : "MISSED");
	free(x.corral);
	free(x.agent);
	free(x.bindir);
	return 0;
}
