/*
 * test_holder_hooks.c: the holder's hooks for sandboxed leases (issues 6
 * and 7): the secret scrubbed from the screen and transcript (SPEC 8.5,
 * also split across reads), the finishing phase (status keeps answering
 * with its phase after the exit until pty_holder_finished), and cancel's
 * SIGINT and SIGTERM through hooks.signal_agent with only SIGKILL left to
 * the PTY's session (SPEC 5.5).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "pty/pty.h"
#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"
#include "support/check_util.h"

Suite *holder_hooks_suite(void);

#define SECRET "corralSECRETcanary42"

/* The child holder's side: what the hooks record and do. */
struct hk {
	uv_loop_t loop;
	uv_timer_t timer;
	struct pty_holder *ph;
	const char *dir;
	bool hold;		/* pty_holder_hold in exited, finish 800 ms on */
	bool closing_seen;
	FILE *log;		/* dir/hooks.log */
};

static void
hk_running(struct pty_holder *ph, void *ud)
{
	struct hk *k = ud;

	k->ph = ph;
	fprintf(k->log, "running\n");
}

static void
hk_finish(uv_timer_t *t)
{
	struct hk *k = t->data;

	fprintf(k->log, "finished\n");
	pty_holder_finished(k->ph);
}

static void
hk_exited(int64_t ws, bool cancelled, void *ud)
{
	struct hk *k = ud;

	fprintf(k->log, "exited %lld %d\n", (long long)ws, cancelled);
	if (!k->hold)
		return;
	pty_holder_hold(k->ph, "finishing");
	uv_timer_init(&k->loop, &k->timer);
	k->timer.data = k;
	uv_timer_start(&k->timer, hk_finish, 800, 0);
}

static void
hk_event(const char *kind, const char *detail, void *ud)
{
	struct hk *k = ud;

	fprintf(k->log, "event %s: %s\n", kind, detail);
}

static int
hk_signal(int sig, void *ud)
{
	struct hk *k = ud;

	/* A sandbox would signal its agent here; the agent ignores both. */
	fprintf(k->log, "signal_agent %d\n", sig);
	return 1;
}

static void
hk_closing(void *ud)
{
	struct hk *k = ud;

	k->closing_seen = true;
	fprintf(k->log, "closing\n");
}

/* The scrubber as the holder's output filter, as the composition root
 * injects it (tui/runtime/holder_main.c). */
static void
scrub_feed(const char *buf, size_t len, pty_holder_out_cb out, void *out_ud,
    void *ud)
{
	sbx_scrub_feed(ud, buf, len, out, out_ud);
}

static void
scrub_flush(pty_holder_out_cb out, void *out_ud, void *ud)
{
	sbx_scrub_flush(ud, out, out_ud);
}

static size_t
scrub_held(void *ud)
{
	return sbx_scrub_held(ud);
}

/* A holder for cmd in a fresh directory; returns its pid. */
static pid_t
start(const char *dir, char *const *cmd, bool hold, const char *redact,
    char *ready, size_t readysz)
{
	struct sbx_request req = { 0 };
	struct sbx_plan *plan = NULL;
	int rp[2];
	ssize_t n;
	pid_t pid;

	req.cmd = cmd;
	req.cwd = dir;
	ck_assert_int_eq(sbx_adapter_local.plan(&req, &plan), 0);
	ck_assert_int_eq(pipe2(rp, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct pty_holder_opts o = { 0 };
		struct hk k = { 0 };
		char *log;
		int rc;

		close(rp[0]);
		if (asprintf(&log, "%s/hooks.log", dir) < 0 ||
		    (k.log = fopen(log, "w")) == NULL)
			_exit(99);
		setvbuf(k.log, NULL, _IONBF, 0);
		k.dir = dir;
		k.hold = hold;
		o.id = "20261129-000000-000-0001";
		o.dir = dir;
		o.plan = plan;
		o.ctty = PTY_CTTY_TAKE;
		o.rows = 24;
		o.cols = 80;
		o.sb_lines = 100;
		o.transcript_max = 1 << 20;
		o.allow_control = true;
		o.trusted_local = false;
		o.ready_fd = rp[1];
		o.owner_fd = -1;
		o.cancel_wait_ms = 300;
		if (redact != NULL) {
			struct sbx_scrub *sc = sbx_scrub_new(redact);

			if (sc == NULL)
				_exit(98);
			o.filter = (struct pty_holder_filter){
				.feed = scrub_feed, .flush = scrub_flush,
				.held = scrub_held, .ud = sc };
		}
		o.hooks.running = hk_running;
		o.hooks.exited = hk_exited;
		o.hooks.event = hk_event;
		o.hooks.signal_agent = hk_signal;
		o.hooks.closing = hk_closing;
		o.hooks.ud = &k;
		uv_loop_init(&k.loop);
		rc = pty_holder_run(&k.loop, &o);
		fprintf(k.log, "done closing=%d\n", k.closing_seen);
		_exit(rc < 0 ? 100 : rc);
	}
	close(rp[1]);
	n = read(rp[0], ready, readysz - 1);
	close(rp[0]);
	ready[n > 0 ? n : 0] = '\0';
	sbx_plan_free(plan);
	return pid;
}

static int
wait_for(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	return st;
}

static char *
file_in(const char *dir, const char *name)
{
	char *p, *s;

	ck_assert_int_gt(asprintf(&p, "%s/%s", dir, name), 0);
	s = cu_read_file(p, NULL);
	free(p);
	return s;
}

static int
count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

START_TEST(test_holder_hooks_redact)
{
	char *dir = cu_tmpdir("holder-hooks");
	/* Whole, split across two writes, and inside an assignment. */
	char *cmd[] = { "/bin/sh", "-c",
		"printf 'a " SECRET " b\\n'; printf 'split corralSECR';"
		" sleep 0.05; printf 'ETcanary42 end\\n'; printf 'k=%s\\n' "
		SECRET "; printf 'near corralSECRETcanary4 miss\\n'", NULL };
	char ready[256], *tr, *fin, *log;
	size_t flen = 0;
	pid_t pid;
	int st;

	pid = start(dir, cmd, false, SECRET, ready, sizeof ready);
	ck_assert_msg(strncmp(ready, "ok ", 3) == 0, "ready: %s", ready);
	st = wait_for(pid);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	tr = file_in(dir, "transcript");
	ck_assert_ptr_nonnull(tr);
	ck_assert_msg(strstr(tr, SECRET) == NULL, "%s", tr);
	ck_assert_int_eq(count(tr, "[REDACTED]"), 3);
	ck_assert_ptr_nonnull(strstr(tr, "split [REDACTED] end"));
	/* A near miss is kept as it is (the positive control). */
	ck_assert_ptr_nonnull(strstr(tr, "near corralSECRETcanary4 miss"));
	{
		char *p;

		ck_assert_int_gt(asprintf(&p, "%s/final.screen", dir), 0);
		fin = cu_read_file(p, &flen);
		free(p);
	}
	ck_assert_ptr_nonnull(fin);
	ck_assert_ptr_null(memmem(fin, flen, SECRET, strlen(SECRET)));
	ck_assert_ptr_nonnull(memmem(fin, flen, "[REDACTED]", 10));
	log = file_in(dir, "hooks.log");
	ck_assert_ptr_nonnull(log);
	ck_assert_ptr_nonnull(strstr(log, "running\n"));
	ck_assert_ptr_nonnull(strstr(log, "done closing=1\n"));
	free(log);
	free(fin);
	free(tr);
	cu_rmrf(dir);
	free(dir);
}
END_TEST

/* A prompt ending in the secret's first letters still shows. */
START_TEST(test_holder_hooks_redact_release)
{
	char *dir = cu_tmpdir("holder-hooks");
	char *cmd[] = { "/bin/sh", "-c",
		"printf 'prompt> corralSE'; sleep 3", NULL };
	struct pty_holder_client *c = NULL;
	char ready[256], *sock, *js;
	uint64_t end;
	pid_t pid;
	int err = 0;
	bool shown = false;

	pid = start(dir, cmd, false, SECRET, ready, sizeof ready);
	ck_assert_msg(strncmp(ready, "ok ", 3) == 0, "ready: %s", ready);
	ck_assert_int_gt(asprintf(&sock, "%s/holder.sock", dir), 0);
	ck_assert_int_eq(pty_holder_client_open(&c, sock, 0, 2000), 0);
	end = cu_now_ms() + 2000;
	while (!shown && cu_now_ms() < end) {
		js = pty_holder_client_status(c, 1000, &err);
		ck_assert_msg(js != NULL, "status: %d", err);
		shown = strstr(js, "prompt> corralSE") != NULL;
		free(js);
		if (!shown)
			usleep(20000);
	}
	ck_assert_msg(shown, "the held-back prompt never showed");
	pty_holder_client_free(c);
	kill(pid, SIGTERM);
	wait_for(pid);
	free(sock);
	cu_rmrf(dir);
	free(dir);
}
END_TEST

START_TEST(test_holder_hooks_finishing_phase)
{
	char *dir = cu_tmpdir("holder-hooks");
	char *cmd[] = { "/bin/sh", "-c", "echo bye; exit 4", NULL };
	struct pty_holder_client *c = NULL;
	char ready[256], *sock, *js = NULL, *log;
	uint64_t end;
	pid_t pid;
	int err = 0, st;
	bool seen = false;

	pid = start(dir, cmd, true, NULL, ready, sizeof ready);
	ck_assert_msg(strncmp(ready, "ok ", 3) == 0, "ready: %s", ready);
	ck_assert_int_gt(asprintf(&sock, "%s/holder.sock", dir), 0);
	/* After the exit, within the 800 ms hold: status still answers. */
	end = cu_now_ms() + 5000;
	while (!seen && cu_now_ms() < end) {
		if (c == NULL && pty_holder_client_open(&c, sock, 0,
		    1000) < 0) {
			c = NULL;
			usleep(20000);
			continue;
		}
		js = pty_holder_client_status(c, 1000, &err);
		ck_assert_msg(js != NULL, "status: %d", err);
		seen = strstr(js, "\"state\":\"exited\"") != NULL;
		if (seen)
			ck_assert_msg(strstr(js, "\"phase\":\"finishing\"") !=
			    NULL, "%s", js);
		free(js);
		if (!seen)
			usleep(20000);
	}
	ck_assert_msg(seen, "never saw the exited holder serving status");
	pty_holder_client_free(c);
	st = wait_for(pid);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 4);
	log = file_in(dir, "hooks.log");
	ck_assert_ptr_nonnull(log);
	/* The order: exited, the hold's end, then the handles close. */
	ck_assert_ptr_nonnull(strstr(log, "finished\nclosing\n"));
	ck_assert_ptr_nonnull(strstr(log, "exited 1024 0\nfinished\n"));
	free(log);
	free(sock);
	cu_rmrf(dir);
	free(dir);
}
END_TEST

START_TEST(test_holder_hooks_signal_agent)
{
	char *dir = cu_tmpdir("holder-hooks");
	char *cmd[] = { "/bin/sh", "-c",
		"trap '' INT TERM; echo up; while :; do sleep 0.05; done",
		NULL };
	struct pty_holder_client *c = NULL;
	const uint8_t *p;
	size_t plen;
	uint8_t type;
	char ready[256], *sock, *log;
	pid_t pid;
	int st;

	pid = start(dir, cmd, false, NULL, ready, sizeof ready);
	ck_assert_msg(strncmp(ready, "ok ", 3) == 0, "ready: %s", ready);
	ck_assert_int_gt(asprintf(&sock, "%s/holder.sock", dir), 0);
	ck_assert_int_eq(pty_holder_client_open(&c, sock, PTY_HELLO_CONTROL,
	    2000), 0);
	ck_assert_int_eq(pty_holder_client_send(c, PTY_W_CANCEL, NULL, 0), 0);
	while (pty_holder_client_recv(c, &type, &p, &plen, 5000) == 1 &&
	    type != PTY_W_EXIT)
		;
	pty_holder_client_free(c);
	st = wait_for(pid);
	/* Only SIGKILL (the last step, to the session) ended it. */
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 128 + SIGKILL);
	log = file_in(dir, "hooks.log");
	ck_assert_ptr_nonnull(log);
	ck_assert_msg(strstr(log, "signal_agent 2\nevent cancel: sent SIGINT "
	    "to 1 target(s) of the sandbox at ") != NULL, "%s", log);
	ck_assert_msg(strstr(log, "signal_agent 15\nevent cancel: sent "
	    "SIGTERM to 1 target(s) of the sandbox at ") != NULL, "%s", log);
	ck_assert_int_eq(count(log, "signal_agent 9"), 0);
	ck_assert_msg(strstr(log, "sent SIGKILL to ") != NULL &&
	    count(log, "of the sandbox") == 2, "%s", log);
	ck_assert_ptr_nonnull(strstr(log, "exited 9 1\n"));
	free(log);
	free(sock);
	cu_rmrf(dir);
	free(dir);
}
END_TEST

Suite *
holder_hooks_suite(void)
{
	Suite *s = suite_create("holder_hooks");
	TCase *tc = tcase_create("Integration");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_holder_hooks_redact);
	tcase_add_test(tc, test_holder_hooks_redact_release);
	tcase_add_test(tc, test_holder_hooks_finishing_phase);
	tcase_add_test(tc, test_holder_hooks_signal_agent);
	suite_add_tcase(s, tc);
	return s;
}
