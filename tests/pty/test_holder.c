/*
 * test_holder.c: integration tests of the per-lease holder (SPEC 2) with a
 * real PTY and the fake_agent fixture: attach, input, resize (SIGWINCH
 * reaches the agent), status, refusal without --allow-control (SPEC 3),
 * exit and the final screen, cancel escalation (SPEC 5.5) including a
 * double-forked daemon of the session, exec failure, and hostile frames.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "pty/pty.h"
#include "sandbox-adapters/sbx.h"
#include "support/check_util.h"

Suite *holder_suite(void);

struct th {
	char *dir;
	char *sock;
	pid_t pid;	/* the holder process */
	char ready[256];
};

static void th_start_dir(struct th *, const char *dir, char *const *cmd,
    bool allow, bool trusted);

static void
th_start(struct th *t, char *const *cmd, bool allow, bool trusted)
{
	th_start_dir(t, NULL, cmd, allow, trusted);
}

static void
th_start_in(struct th *t, const char *dir, char *const *cmd)
{
	th_start_dir(t, dir, cmd, true, true);
}

static void
th_start_dir(struct th *t, const char *dir, char *const *cmd, bool allow,
    bool trusted)
{
	struct sbx_request req = { 0 };
	struct sbx_plan *plan = NULL;
	int rp[2];
	ssize_t n;

	memset(t, 0, sizeof *t);
	t->dir = dir != NULL ? strdup(dir) : cu_tmpdir("holder");
	ck_assert_int_eq(asprintf(&t->sock, "%s/holder.sock", t->dir) > 0, 1);
	req.cmd = cmd;
	req.cwd = t->dir;
	ck_assert_int_eq(sbx_adapter_local.plan(&req, &plan), 0);
	ck_assert_int_eq(pipe2(rp, O_CLOEXEC), 0);
	t->pid = fork();
	ck_assert_int_ge(t->pid, 0);
	if (t->pid == 0) {
		struct pty_holder_opts o = { 0 };
		uv_loop_t loop;
		int rc;

		close(rp[0]);
		o.id = "20261129-000000-000-0000";
		o.dir = t->dir;
		o.plan = plan;
		o.ctty = PTY_CTTY_TAKE;
		o.rows = 24;
		o.cols = 80;
		o.sb_lines = 1000;
		o.transcript_max = 1 << 20;
		o.allow_control = allow;
		o.trusted_local = trusted;
		o.ready_fd = rp[1];
		o.owner_fd = -1;
		o.cancel_wait_ms = 300;
		uv_loop_init(&loop);
		rc = pty_holder_run(&loop, &o);
		_exit(rc < 0 ? 100 : rc);
	}
	close(rp[1]);
	n = read(rp[0], t->ready, sizeof t->ready - 1);
	close(rp[0]);
	t->ready[n > 0 ? n : 0] = '\0';
	sbx_plan_free(plan);
}

static int
th_wait(struct th *t)
{
	int st;

	while (waitpid(t->pid, &st, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void
th_stop(struct th *t)
{
	if (t->pid > 0 && kill(t->pid, 0) == 0) {
		kill(t->pid, SIGTERM);
		th_wait(t);
	}
	cu_rmrf(t->dir);
	free(t->dir);
	free(t->sock);
}

/* Alive and not a zombie. */
static bool
proc_alive(pid_t pid)
{
	char path[64], *st, *rp;
	bool alive;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((st = cu_read_file(path, NULL)) == NULL)
		return false;
	rp = strrchr(st, ')');
	alive = rp != NULL && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
	free(st);
	return alive;
}

static char *
agent_cmd(void)
{
	return cu_fixture_path("fake_agent");
}

/* Receive frames into m until some row contains text (or deadline). */
static bool
wait_text(struct pty_holder_client *c, struct pty_mirror *m, const char *text,
    int ms)
{
	uint64_t end = cu_now_ms() + (uint64_t)ms;
	const uint8_t *p;
	size_t plen;
	uint8_t type;

	for (;;) {
		for (int r = 0; r < m->rows; r++) {
			char line[1024];
			size_t len = 0;

			for (int col = 0; col < m->cols; col++) {
				const struct pty_cell *cell =
				    pty_mirror_cell(m, r, col);
				if (cell->width == 0)
					continue;
				if (cell->cp[0] == 0)
					line[len++] = ' ';
				else
					len += pty_cell_utf8(cell, line + len,
					    sizeof line - len);
				if (len > sizeof line - 32)
					break;
			}
			line[len] = '\0';
			if (strstr(line, text) != NULL)
				return true;
		}
		if (cu_now_ms() >= end)
			return false;
		if (pty_holder_client_recv(c, &type, &p, &plen,
		    (int)(end - cu_now_ms())) != 1)
			return false;
		ck_assert_int_eq(pty_mirror_apply(m, type, p, plen), 0);
	}
}

/* The next ERROR frame's code, or 0 if a STATUS_REPLY came first. */
static int
next_error(struct pty_holder_client *c)
{
	uint8_t seq[4] = { 9, 0, 0, 0 };
	const uint8_t *p;
	size_t plen;
	uint8_t type;

	int code = 0;

	/* Everything up to the status reply: errors come before it. */
	ck_assert_int_eq(pty_holder_client_send(c, PTY_W_STATUS, seq, 4), 0);
	while (pty_holder_client_recv(c, &type, &p, &plen, 5000) == 1) {
		if (type == PTY_W_ERROR && code == 0) {
			struct pty_rd r;
			pty_rd_init(&r, p, plen);
			code = (int)pty_rd_u32(&r);
		}
		if (type == PTY_W_STATUS_REPLY)
			return code;
	}
	return 1;
}

START_TEST(test_holder_attach_input_resize)
{
	char *agent = agent_cmd();
	char *cmd[] = { agent, NULL };
	struct pty_holder_client *c = NULL;
	struct pty_mirror m;
	struct th t;
	uint8_t rs[4] = { 30, 0, 100, 0 };
	int err = 0;
	char *js;

	th_start(&t, cmd, true, true);
	ck_assert_msg(strncmp(t.ready, "ok ", 3) == 0, "ready: %s", t.ready);
	ck_assert_int_eq(pty_holder_client_open(&c, t.sock, PTY_HELLO_LIVE,
	    2000), 0);
	pty_mirror_init(&m);
	ck_assert(wait_text(c, &m, "ready 24x80", 5000));
	ck_assert_int_eq(pty_holder_client_send(c, PTY_W_INPUT, "echo hello\r",
	    11), 0);
	ck_assert(wait_text(c, &m, "got: hello", 5000));
	/* Resize reaches the agent as SIGWINCH with the new size. */
	ck_assert_int_eq(pty_holder_client_send(c, PTY_W_RESIZE, rs, 4), 0);
	ck_assert(wait_text(c, &m, "winch 30x100", 5000));
	ck_assert_int_eq(m.rows, 30);
	ck_assert_int_eq(m.cols, 100);
	/* Colours survive the trip through the wire. */
	ck_assert_int_eq(pty_holder_client_send(c, PTY_W_INPUT, "color\r", 6),
	    0);
	ck_assert(wait_text(c, &m, "red green rgb", 5000));
	js = pty_holder_client_status(c, 2000, &err);
	ck_assert_ptr_nonnull(js);
	ck_assert_ptr_nonnull(strstr(js, "\"state\":\"running\""));
	ck_assert_ptr_nonnull(strstr(js, "\"rows\":30"));
	free(js);
	pty_mirror_free(&m);
	pty_holder_client_free(c);
	th_stop(&t);
	free(agent);
}
END_TEST

START_TEST(test_holder_refuses_without_control)
{
	char *agent = agent_cmd();
	char *cmd[] = { agent, NULL };
	struct pty_holder_client *c = NULL;
	struct pty_mirror m;
	struct th t;

	th_start(&t, cmd, false, true);
	ck_assert_msg(strncmp(t.ready, "ok ", 3) == 0, "ready: %s", t.ready);
	ck_assert_int_eq(pty_holder_client_open(&c, t.sock, PTY_HELLO_LIVE,
	    2000), 0);
	pty_mirror_init(&m);
	ck_assert(wait_text(c, &m, "ready", 5000));
	ck_assert_int_eq(pty_holder_client_send(c, PTY_W_INPUT, "echo no\r", 8),
	    0);
	ck_assert_int_eq(next_error(c), PTY_EDENIED);
	ck_assert_int_eq(pty_holder_client_send(c, PTY_W_CANCEL, NULL, 0), 0);
	ck_assert_int_eq(next_error(c), PTY_EDENIED);
	/* The agent is still there and never saw the input. */
	ck_assert_int_eq(kill(t.pid, 0), 0);
	ck_assert(!wait_text(c, &m, "got: no", 300));
	pty_mirror_free(&m);
	pty_holder_client_free(c);
	th_stop(&t);
	free(agent);
}
END_TEST

START_TEST(test_holder_exit_final_screen)
{
	char *agent = agent_cmd();
	char *cmd[] = { agent, NULL };
	struct pty_holder_client *c = NULL;
	struct pty_mirror m;
	struct th t;
	const uint8_t *p;
	size_t plen;
	uint8_t type;
	char *final, *tr;
	size_t flen = 0;
	bool got_exit = false;

	th_start(&t, cmd, true, true);
	ck_assert_int_eq(pty_holder_client_open(&c, t.sock, PTY_HELLO_LIVE,
	    2000), 0);
	pty_mirror_init(&m);
	ck_assert(wait_text(c, &m, "ready", 5000));
	ck_assert_int_eq(pty_holder_client_send(c, PTY_W_INPUT,
	    "echo last words\rexit 3\r", 23), 0);
	while (pty_holder_client_recv(c, &type, &p, &plen, 5000) == 1) {
		ck_assert_int_eq(pty_mirror_apply(&m, type, p, plen), 0);
		if (type == PTY_W_EXIT) {
			got_exit = true;
			break;
		}
	}
	ck_assert(got_exit);
	ck_assert(WIFEXITED(m.exit_status));
	ck_assert_int_eq(WEXITSTATUS(m.exit_status), 3);
	ck_assert_int_eq(th_wait(&t), 3);
	t.pid = 0;
	/* The final screen is on disk, in the wire format. */
	{
		char *path;
		ck_assert_int_gt(asprintf(&path, "%s/final.screen", t.dir), 0);
		final = cu_read_file(path, &flen);
		free(path);
		ck_assert_ptr_nonnull(final);
		ck_assert_int_gt(flen, 0);
		ck_assert_ptr_nonnull(memmem(final, flen, "last words", 10) ?
			final : NULL);
		free(final);
		ck_assert_int_gt(asprintf(&path, "%s/transcript", t.dir), 0);
		tr = cu_read_file(path, NULL);
		free(path);
		ck_assert_ptr_nonnull(tr);
		ck_assert_ptr_nonnull(strstr(tr, "got: last words"));
		free(tr);
	}
	pty_mirror_free(&m);
	pty_holder_client_free(c);
	th_stop(&t);
	free(agent);
}
END_TEST

START_TEST(test_holder_cancel_kills_session)
{
	char *agent = agent_cmd();
	char *cmd[] = { "/bin/sh", "-c",
		"trap '' INT; exec \"$0\"", agent, NULL };
	struct pty_holder_client *c = NULL;
	struct pty_mirror m;
	struct th t;
	char *pidfile, *pidtxt, in[512];
	const uint8_t *p;
	size_t plen;
	uint8_t type;
	pid_t dpid;
	bool got_exit = false;

	th_start(&t, cmd, true, false);
	ck_assert_msg(strncmp(t.ready, "ok ", 3) == 0, "ready: %s", t.ready);
	ck_assert_int_eq(pty_holder_client_open(&c, t.sock, PTY_HELLO_LIVE,
	    2000), 0);
	pty_mirror_init(&m);
	ck_assert(wait_text(c, &m, "ready", 5000));
	/* A background child that stays in the agent's session. */
	ck_assert_int_gt(asprintf(&pidfile, "%s/bg.pid", t.dir), 0);
	snprintf(in, sizeof in, "bg %s\r", pidfile);
	ck_assert_int_eq(pty_holder_client_send(c, PTY_W_INPUT, in, strlen(in)),
	    0);
	ck_assert(wait_text(c, &m, "bg started", 5000));
	pidtxt = cu_read_file(pidfile, NULL);
	ck_assert_ptr_nonnull(pidtxt);
	dpid = (pid_t)atoi(pidtxt);
	free(pidtxt);
	ck_assert_int_gt(dpid, 1);
	/* The agent ignores SIGINT: escalation must reach SIGTERM. */
	ck_assert_int_eq(pty_holder_client_send(c, PTY_W_CANCEL, NULL, 0), 0);
	while (pty_holder_client_recv(c, &type, &p, &plen, 5000) == 1) {
		if (type == PTY_W_EXIT) {
			got_exit = true;
			break;
		}
	}
	ck_assert(got_exit);
	th_wait(&t);
	t.pid = 0;
	/* Every process of the session is gone (zombies count as gone). */
	{
		uint64_t end = cu_now_ms() + 3000;
		bool alive = true;

		while (alive && cu_now_ms() < end) {
			alive = proc_alive(dpid);
			if (alive)
				usleep(20000);
		}
		if (alive)
			kill(dpid, SIGKILL);
		ck_assert_msg(!alive, "background child %d survived cancel",
		    (int)dpid);
	}
	pty_mirror_free(&m);
	pty_holder_client_free(c);
	th_stop(&t);
	free(pidfile);
	free(agent);
}
END_TEST

START_TEST(test_holder_exec_failure)
{
	char *cmd[] = { "/nonexistent/agent-binary", NULL };
	struct th t;
	struct stat sb;

	th_start(&t, cmd, true, true);
	ck_assert_msg(strncmp(t.ready, "err ", 4) == 0, "ready: %s", t.ready);
	ck_assert_ptr_nonnull(strstr(t.ready, "No such file"));
	ck_assert_int_eq(th_wait(&t), 100);
	t.pid = 0;
	/* No socket left behind, no orphan. */
	ck_assert_int_ne(stat(t.sock, &sb), 0);
	th_stop(&t);
}
END_TEST

START_TEST(test_holder_hostile_frames)
{
	char *agent = agent_cmd();
	char *cmd[] = { agent, NULL };
	struct pty_holder_client *c = NULL, *c2 = NULL;
	struct pty_mirror m;
	struct th t;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	unsigned char junk[4096];
	int fd;

	th_start(&t, cmd, true, true);
	/* Garbage, an oversized length, and a truncated frame. */
	for (size_t i = 0; i < sizeof junk; i++)
		junk[i] = (unsigned char)(i * 7919u >> 3);
	junk[0] = 0xff;
	junk[1] = 0xff;
	junk[2] = 0xff;
	junk[3] = 0x7f;
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", t.sock);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	ck_assert_int_gt(write(fd, junk, sizeof junk), 0);
	{
		/* The holder drops this client: read until EOF. */
		char b[256];
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		ssize_t n = 1;
		while (n > 0 && poll(&pf, 1, 3000) == 1)
			n = read(fd, b, sizeof b);
		ck_assert_int_le(n, 0);
	}
	close(fd);
	/* Others are still served. */
	ck_assert_int_eq(pty_holder_client_open(&c, t.sock, PTY_HELLO_LIVE,
	    2000), 0);
	pty_mirror_init(&m);
	ck_assert(wait_text(c, &m, "ready", 5000));
	/* A bad key code, an absurd resize: errors, no crash. */
	ck_assert_int_eq(pty_holder_client_open(&c2, t.sock, 0, 2000), 0);
	{
		uint8_t bad[4] = { 0, 0, 0, 0 };
		ck_assert_int_eq(pty_holder_client_send(c2, PTY_W_RESIZE, bad,
		    4), 0);
	}
	ck_assert_int_eq(kill(t.pid, 0), 0);
	ck_assert_int_eq(pty_holder_client_send(c, PTY_W_INPUT, "echo alive\r",
	    11), 0);
	ck_assert(wait_text(c, &m, "got: alive", 5000));
	pty_holder_client_free(c2);
	pty_mirror_free(&m);
	pty_holder_client_free(c);
	th_stop(&t);
	free(agent);
}
END_TEST

START_TEST(test_holder_backpressure_flood)
{
	char *agent = agent_cmd();
	char *cmd[] = { agent, NULL };
	struct pty_holder_client *c = NULL;
	struct pty_mirror m;
	struct th t;

	th_start(&t, cmd, true, true);
	ck_assert_int_eq(pty_holder_client_open(&c, t.sock, PTY_HELLO_LIVE,
	    2000), 0);
	pty_mirror_init(&m);
	ck_assert(wait_text(c, &m, "ready", 5000));
	/* 200k lines while this client reads slowly: coalesced, bounded. */
	ck_assert_int_eq(pty_holder_client_send(c, PTY_W_INPUT, "spam 200000\r",
	    12), 0);
	usleep(300000);
	ck_assert_int_eq(pty_holder_client_send(c, PTY_W_INPUT, "echo done\r",
	    10), 0);
	ck_assert(wait_text(c, &m, "got: done", 20000));
	ck_assert(wait_text(c, &m, "line 199999", 100));
	pty_mirror_free(&m);
	pty_holder_client_free(c);
	th_stop(&t);
	free(agent);
}
END_TEST

START_TEST(test_holder_summary_push)
{
	char *agent = agent_cmd();
	char *cmd[] = { agent, NULL };
	struct pty_holder_client *sum = NULL, *ctl = NULL;
	struct th t;
	const uint8_t *p;
	size_t plen;
	uint8_t type;
	int pushes = 0;
	bool seen = false;

	th_start(&t, cmd, true, true);
	ck_assert_int_eq(pty_holder_client_open(&sum, t.sock, PTY_HELLO_SUMMARY,
	    2000), 0);
	ck_assert_int_eq(pty_holder_client_open(&ctl, t.sock, 0, 2000), 0);
	ck_assert_int_eq(pty_holder_client_send(ctl, PTY_W_INPUT,
	    "echo summary\r", 13), 0);
	/* Pushed statuses (seq 0) follow the output, rate-limited. */
	while (!seen && pty_holder_client_recv(sum, &type, &p, &plen,
	    3000) == 1) {
		ck_assert_int_eq(type, PTY_W_STATUS_REPLY);
		ck_assert_int_ge(plen, 4);
		ck_assert_int_eq(p[0] | p[1] | p[2] | p[3], 0);
		pushes++;
		seen = memmem(p, plen, "got: summary", 12) != NULL;
	}
	ck_assert(seen);
	ck_assert_int_le(pushes, 6);
	pty_holder_client_free(ctl);
	pty_holder_client_free(sum);
	th_stop(&t);
	free(agent);
}
END_TEST

/*
 * A full disk under the transcript: the agent keeps running and the holder
 * says the transcript is truncated (issue 2, "Bad input"). The lease
 * directory is a 64 KiB tmpfs in a private mount namespace of this test.
 */
START_TEST(test_holder_transcript_full_disk)
{
	char *agent = agent_cmd();
	char *cmd[] = { agent, NULL };
	struct pty_holder_client *c = NULL;
	struct pty_mirror m;
	char *dir = cu_tmpdir("fulldisk"), *sock, *js;
	int err = 0;
	struct th t;

	/* Check runs each test in its own child: the mount goes with it. */
	ck_assert_int_eq(unshare(CLONE_NEWNS), 0);
	ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	ck_assert_int_eq(mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV,
	    "size=64k,mode=0700"), 0);
	th_start_in(&t, dir, cmd);
	ck_assert_msg(strncmp(t.ready, "ok ", 3) == 0, "ready: %s", t.ready);
	sock = t.sock;
	ck_assert_int_eq(pty_holder_client_open(&c, sock, PTY_HELLO_LIVE, 2000),
	    0);
	pty_mirror_init(&m);
	ck_assert(wait_text(c, &m, "ready", 5000));
	/* ~100 KiB of output into a 64 KiB filesystem. */
	ck_assert_int_eq(pty_holder_client_send(c, PTY_W_INPUT, "spam 10000\r",
	    11), 0);
	ck_assert(wait_text(c, &m, "line 9999", 20000));
	ck_assert_int_eq(pty_holder_client_send(c, PTY_W_INPUT,
	    "echo still here\r", 16), 0);
	ck_assert(wait_text(c, &m, "got: still here", 5000));
	js = pty_holder_client_status(c, 2000, &err);
	ck_assert_ptr_nonnull(js);
	ck_assert_msg(strstr(js, "\"transcript_truncated\":true") != NULL,
	    "%s", js);
	ck_assert_ptr_nonnull(strstr(js, "\"state\":\"running\""));
	free(js);
	pty_mirror_free(&m);
	pty_holder_client_free(c);
	th_stop(&t);
	umount2(dir, MNT_DETACH);
	rmdir(dir);
	free(dir);
	free(agent);
}
END_TEST

/* The transcript's size, or -1. */
static long
transcript_size(const char *dir)
{
	char *path;
	struct stat sb;
	long n;

	ck_assert_int_gt(asprintf(&path, "%s/transcript", dir), 0);
	n = stat(path, &sb) == 0 ? (long)sb.st_size : -1;
	free(path);
	return n;
}

/* "FROM\r\n...TO\r\n" appended to b (malloc'd, *len updated). */
static char *
seq_crlf(char *b, size_t *len, int from, int to)
{
	size_t cap = *len + (size_t)(to - from + 1) * 9 + 1;

	b = realloc(b, cap);
	ck_assert_ptr_nonnull(b);
	for (int i = from; i <= to; i++)
		*len += (size_t)snprintf(b + *len, cap - *len, "%d\r\n", i);
	return b;
}

/*
 * The transcript is written in batches (issue 17), yet what the agent
 * wrote is on disk while it runs (the batch's timer) and byte for byte,
 * in order, up to the cap (1 MiB here), which it then meets exactly.
 */
START_TEST(test_holder_transcript_batches)
{
	char *cmd[] = { "/bin/sh", "-c", "seq 1 20000; echo marker-early; "
		"while [ ! -e go ]; do sleep 0.05; done; seq 20001 300000; "
		"exec sleep 30", NULL };
	char *want = NULL, *got, *path;
	size_t wlen = 0, glen = 0;
	struct th t;
	int i;

	th_start(&t, cmd, true, true);
	ck_assert_msg(strncmp(t.ready, "ok ", 3) == 0, "ready: %s", t.ready);
	want = seq_crlf(want, &wlen, 1, 20000);
	memcpy(want + wlen, "marker-early\r\n", 14);
	wlen += 14;
	/* written while the agent runs, not only at its end */
	for (i = 0; i < 1000 && transcript_size(t.dir) < (long)wlen; i++)
		usleep(10000);
	ck_assert_msg(transcript_size(t.dir) >= (long)wlen, "transcript %ld "
	    "bytes after 10 s, want %zu", transcript_size(t.dir), wlen);
	ck_assert(proc_alive(t.pid));
	ck_assert_int_gt(asprintf(&path, "%s/go", t.dir), 0);
	ck_assert_int_eq(cu_write_file(path, "", 0), 0);
	free(path);
	want = seq_crlf(want, &wlen, 20001, 300000);
	ck_assert_uint_gt(wlen, 1u << 20);
	for (i = 0; i < 3000 && transcript_size(t.dir) < (1l << 20); i++)
		usleep(10000);
	ck_assert_int_eq(transcript_size(t.dir), 1l << 20);
	ck_assert_int_gt(asprintf(&path, "%s/transcript", t.dir), 0);
	got = cu_read_file(path, &glen);
	free(path);
	ck_assert_ptr_nonnull(got);
	ck_assert_uint_eq(glen, 1u << 20);
	ck_assert_msg(memcmp(got, want, glen) == 0, "the transcript differs "
	    "from what the agent wrote");
	free(got);
	free(want);
	th_stop(&t);
}
END_TEST

Suite *
holder_suite(void)
{
	Suite *s = suite_create("holder");
	TCase *tc = tcase_create("Integration");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_holder_attach_input_resize);
	tcase_add_test(tc, test_holder_refuses_without_control);
	tcase_add_test(tc, test_holder_exit_final_screen);
	tcase_add_test(tc, test_holder_cancel_kills_session);
	tcase_add_test(tc, test_holder_exec_failure);
	tcase_add_test(tc, test_holder_hostile_frames);
	tcase_add_test(tc, test_holder_backpressure_flood);
	tcase_add_test(tc, test_holder_summary_push);
	tcase_add_test(tc, test_holder_transcript_full_disk);
	tcase_add_test(tc, test_holder_transcript_batches);
	suite_add_tcase(s, tc);
	return s;
}
