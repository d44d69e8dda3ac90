/*
 * test_detect.c: the pure lifecycle detector (SPEC 5.2-5.4) driven with
 * synthetic events, screens, facts and time; each test asserts the exact
 * timeline of states. Agent-agnostic cases run twice: with the shipped
 * rule files (agent identified from argv) and with no rule file at all.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pty/pty.h"
#include "support/check_util.h"

#define T0 1000000u

/* A caller of the detector: a loop with one timer and a fake process. */
struct sim {
	struct pty_detect *d;
	struct pty_rules *rules;
	uint64_t now, next;
	/* the fake foreground process */
	bool facts_on;
	bool tty_read;
	bool wait_known, tty_wait;	/* fg threads' terminal waits */
	bool busy;
	int beyond;			/* processes outside the session */
	uint64_t busy_ms, clock_ms;
	const char *comm;
	int nfacts, nsteps;
	/* what the caller saw */
	char tl[1024];
	struct pty_detect_result last;
	uint64_t changed_ms;
	/* the screen */
	const char *rows[80];
	int nrows;
	const char *title;
};

static void
sim_clock(struct sim *s)
{
	if (s->busy)
		s->busy_ms += s->now - s->clock_ms;
	s->clock_ms = s->now;
}

static void
sim_record(struct sim *s, const struct pty_detect_result *r)
{
	s->last = *r;
	if (r->changed) {
		size_t n = strlen(s->tl);

		snprintf(s->tl + n, sizeof s->tl - n, ",%s",
		    pty_detect_state_name(r->state));
		s->changed_ms = s->now;
	}
}

static void
sim_step(struct sim *s)
{
	struct pty_detect_result r;

	pty_detect_step(s->d, s->now, &r);
	s->nsteps++;
	sim_record(s, &r);
	if (r.want_facts && s->facts_on) {
		struct pty_facts f;

		memset(&f, 0, sizeof f);
		sim_clock(s);
		f.fg_pgrp = 42;
		f.fg_tty_read = s->tty_read;
		f.fg_wait_known = s->wait_known;
		f.fg_tty_wait = s->tty_wait;
		f.cpu_ticks = 5000 + s->busy_ms / 10;
		f.nprocs = 1 + s->beyond;
		f.nbeyond = s->beyond;
		snprintf(f.fg_comm, sizeof f.fg_comm, "%s", s->comm);
		pty_detect_set_facts(s->d, &f, s->now);
		s->nfacts++;
		pty_detect_step(s->d, s->now, &r);
		sim_record(s, &r);
	}
	/* The contract: a wakeup is always in the future. */
	ck_assert(r.next_ms == PTY_DETECT_NEVER || r.next_ms > s->now);
	s->next = r.next_ms;
}

/* Let ms pass, stepping at each wakeup the detector asked for. */
static void
sim_run(struct sim *s, uint64_t ms)
{
	uint64_t end = s->now + ms;

	while (s->next != PTY_DETECT_NEVER && s->next <= end) {
		s->now = s->next;
		sim_step(s);
	}
	s->now = end;
	sim_clock(s);
}

static void
sim_event(struct sim *s, enum pty_detect_ev kind, size_t bytes)
{
	struct pty_detect_event ev = { .kind = kind, .now_ms = s->now,
		.bytes = bytes };

	pty_detect_feed_event(s->d, &ev);
}

static void
sim_show(struct sim *s, const char *const *rows, int n)
{
	int i;

	ck_assert_int_le(n, 80);
	for (i = 0; i < n; i++)
		s->rows[i] = rows[i];
	s->nrows = n;
	pty_detect_set_screen(s->d, s->rows, s->nrows, s->title, s->now);
}

/* Output of some bytes (the screen already shows them), then a step. */
static void
sim_out(struct sim *s, size_t bytes)
{
	sim_event(s, PTY_DETECT_EV_OUTPUT, bytes);
	pty_detect_set_screen(s->d, s->rows, s->nrows, s->title, s->now);
	sim_step(s);
}

static void
sim_osc(struct sim *s, const char *text)
{
	struct pty_detect_event ev = { .kind = PTY_DETECT_EV_OSC,
		.now_ms = s->now, .text = text, .len = strlen(text) };

	pty_detect_feed_event(s->d, &ev);
	sim_out(s, strlen(text) + 3);
}

static void
sim_exit(struct sim *s, int status, int signo)
{
	struct pty_detect_event ev = { .kind = PTY_DETECT_EV_EXIT,
		.now_ms = s->now, .status = status, .signo = signo };

	pty_detect_feed_event(s->d, &ev);
	sim_step(s);
}

static void
rules_err(const char *file, int line, const char *msg, void *ud)
{
	(void)ud;
	ck_abort_msg("shipped rules: %s:%d: %s", file, line, msg);
}

/*
 * A detector at T0 for the program argv; with_rules loads the shipped
 * agents/ directory and identifies the agent from argv.
 */
static void
sim_init_flags(struct sim *s, bool with_rules, const char *const *argv,
    int argc, uint32_t flags)
{
	struct pty_detect_opts o = { .flags = flags };

	memset(s, 0, sizeof *s);
	s->now = s->clock_ms = T0;
	s->next = PTY_DETECT_NEVER;
	s->facts_on = true;
	s->comm = argc > 0 ? argv[0] : "?";
	snprintf(s->tl, sizeof s->tl, "starting");
	ck_assert_int_eq(pty_detect_new(&s->d, &o, T0), 0);
	if (with_rules) {
		char *dir = cu_src_path("agents");
		const char *dirs[] = { dir };

		ck_assert_int_eq(pty_rules_new(&s->rules), 0);
		ck_assert_int_eq(pty_rules_load_dirs(s->rules, dirs, 1,
		    rules_err, NULL), 0);
		free(dir);
		pty_detect_set_agent(s->d, pty_rules_identify(s->rules, argv,
		    argc));
	}
	sim_step(s);
}

static void
sim_init(struct sim *s, bool with_rules, const char *const *argv, int argc)
{
	sim_init_flags(s, with_rules, argv, argc, 0);
}

static void
sim_free(struct sim *s)
{
	pty_detect_free(s->d);
	pty_rules_free(s->rules);
}

static const char *const bash_argv[] = { "-bash" };
static const char *const node_argv[] = { "node", "/srv/agent/main.js" };
static const char *const py_argv[] = { "python3", "ask.py" };
static const char *const claude_argv[] = { "node", "/usr/local/bin/claude" };
static const char *const codex_argv[] = { "codex" };

/* ------------------------------------------------------------------ */
/* Agent-agnostic cases: _i == 0 with the rule files, 1 without.        */

START_TEST(test_detect_shell_prompt)
{
	static const char *const rows[] = { "ann@box:~$", "", "" };
	struct sim s;

	sim_init(&s, _i == 0, bash_argv, 1);
	if (_i == 0)
		ck_assert_str_eq(pty_rules_agent_name(pty_detect_agent(s.d)),
		    "shell");
	s.tty_read = true;
	sim_show(&s, rows, 3);
	sim_out(&s, 12);
	ck_assert_str_eq(s.tl, "starting,working");
	/* its prompt rule after 150 ms (held, quiet); else the read at 250 */
	sim_run(&s, _i == 0 ? 149 : 249);
	ck_assert_str_eq(s.tl, "starting,working");
	sim_run(&s, 1);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	ck_assert_uint_eq(s.changed_ms, T0 + (_i == 0 ? 150 : 250));
	ck_assert_str_eq(s.last.signal, _i == 0 ? "rule:shell:prompt" :
	    "fact:tty-read");
	/*
	 * Settled once quiet (one more look at 250 ms after a rule's early
	 * prompt): no timer, no sampling, however long it idles.
	 */
	sim_run(&s, _i == 0 ? 100 : 0);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	ck_assert(s.next == PTY_DETECT_NEVER);
	s.nsteps = 0;
	s.nfacts = 0;
	sim_run(&s, 3600 * 1000);
	ck_assert_int_eq(s.nsteps, 0);
	ck_assert_int_eq(s.nfacts, 0);
	sim_free(&s);
}
END_TEST

/* `read -p` inside a shell script: only the tty-read fact tells. */
START_TEST(test_detect_read_p)
{
	static const char *const argv[] = { "bash", "./setup.sh" };
	static const char *const rows[] = { "Setting up...", "Name for the",
		"project? my-app" };
	struct sim s;

	sim_init(&s, _i == 0, argv, 2);
	sim_show(&s, rows, 2);
	sim_out(&s, 30);
	sim_run(&s, 200);
	sim_show(&s, rows, 3);
	sim_out(&s, 10);	/* the operator's answer echoed... */
	s.tty_read = true;	/* ...and read asks again */
	sim_run(&s, 1000);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	ck_assert_str_eq(s.last.signal, "fact:tty-read");
	ck_assert_str_eq(s.last.detail, "bash asleep in a terminal read");
	sim_free(&s);
}
END_TEST

START_TEST(test_detect_python_input)
{
	static const char *const rows[] = { "Loading model list...",
		"Pick a model" };
	struct sim s;

	sim_init(&s, _i == 0, py_argv, 2);
	if (_i == 0)
		ck_assert_str_eq(pty_rules_agent_name(pty_detect_agent(s.d)),
		    "python-input");
	sim_show(&s, rows, 1);
	sim_out(&s, 22);
	s.busy = true;
	sim_run(&s, 2000);	/* silent work between the two lines */
	ck_assert_str_eq(s.tl, "starting,working");
	s.busy = false;
	s.tty_read = true;
	sim_show(&s, rows, 2);
	sim_out(&s, 14);
	sim_run(&s, 250);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	ck_assert_uint_eq(s.changed_ms, T0 + 2250);
	ck_assert_str_eq(s.last.signal, "fact:tty-read");
	sim_free(&s);
}
END_TEST

/*
 * An event-loop agent idle in its epoll (waiting on the terminal, no
 * read) whose daemon, outside its session, starts a silent turn: the
 * detector keeps sampling at rest while such processes exist, so the
 * CPU makes it working (issue 20 item 6, SPEC 5.3). With none beyond
 * the session (_i == 1) nothing is sampled at rest: it stays prompt.
 */
START_TEST(test_detect_daemon_beyond)
{
	static const char *const argv[] = { "mytui" };
	static const char *const rows[] = { "mytui ready", "> " };
	struct sim s;
	int before;

	sim_init(&s, false, argv, 1);
	s.wait_known = s.tty_wait = true;
	s.beyond = _i == 0 ? 1 : 0;
	sim_show(&s, rows, 2);
	sim_out(&s, 20);
	sim_run(&s, 8000);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	before = s.nfacts;
	s.busy = true;
	sim_run(&s, 8000);
	if (_i == 0) {
		ck_assert_str_eq(s.tl, "starting,working,prompt,working");
		ck_assert_str_eq(s.last.signal, "fact:cpu");
		s.busy = false;
		sim_run(&s, 8000);
		ck_assert_str_eq(s.tl,
		    "starting,working,prompt,working,prompt");
	} else {
		ck_assert_str_eq(s.tl, "starting,working,prompt");
		ck_assert_int_eq(s.nfacts, before);
	}
	sim_free(&s);
}
END_TEST

START_TEST(test_detect_exit_done)
{
	struct sim s;

	sim_init(&s, _i == 0, node_argv, 2);
	sim_out(&s, 100);
	sim_run(&s, 50);
	sim_exit(&s, 0, 0);
	ck_assert_str_eq(s.tl, "starting,working,done");
	ck_assert(s.last.final);
	ck_assert_str_eq(s.last.signal, "exit:0");
	ck_assert(s.next == PTY_DETECT_NEVER);
	/* Final: nothing moves it any more. */
	sim_out(&s, 10);
	sim_osc(&s, "7717;corral-report;working");
	sim_run(&s, 10000);
	ck_assert_str_eq(s.tl, "starting,working,done");
	sim_free(&s);
}
END_TEST

START_TEST(test_detect_exit_failed)
{
	struct sim s;

	sim_init(&s, _i == 0, node_argv, 2);
	sim_out(&s, 100);
	sim_exit(&s, 3, 0);
	ck_assert_str_eq(s.tl, "starting,working,failed");
	ck_assert_str_eq(s.last.signal, "exit:3");
	sim_free(&s);

	sim_init(&s, _i == 0, node_argv, 2);
	sim_exit(&s, 0, 9);
	ck_assert_str_eq(s.tl, "starting,failed");
	ck_assert_str_eq(s.last.signal, "signal:9");
	ck_assert(s.last.final);
	sim_free(&s);
}
END_TEST

START_TEST(test_detect_cancel)
{
	struct sim s;

	sim_init(&s, _i == 0, node_argv, 2);
	sim_out(&s, 100);
	sim_event(&s, PTY_DETECT_EV_CANCEL, 0);
	sim_step(&s);
	/* Cancelling is not the end: the state waits for the exit. */
	ck_assert_str_eq(s.tl, "starting,working");
	sim_run(&s, 120);
	sim_exit(&s, 0, 2);
	ck_assert_str_eq(s.tl, "starting,working,cancelled");
	ck_assert_str_eq(s.last.signal, "cancel");
	ck_assert_str_eq(s.last.detail,
	    "operator cancel, then signal:2 120 ms later");
	ck_assert(s.last.final);
	sim_free(&s);
}
END_TEST

/* Silent compute: no output for seconds, CPU advancing: still working. */
START_TEST(test_detect_silent_compute)
{
	struct sim s;

	sim_init(&s, _i == 0, node_argv, 2);
	sim_out(&s, 500);
	s.busy = true;
	sim_run(&s, 8000);
	ck_assert_str_eq(s.tl, "starting,working");
	ck_assert_int_gt(s.nfacts, 2);
	/* Sampling backs off: far fewer samples than 8 s / 250 ms. */
	ck_assert_int_lt(s.nfacts, 10);
	s.busy = false;
	sim_run(&s, 5000);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	ck_assert_str_eq(s.last.signal, "quiet");
	ck_assert(s.next == PTY_DETECT_NEVER);
	sim_free(&s);
}
END_TEST

/* Spinner frames every 100 ms keep working; no sampling meanwhile. */
START_TEST(test_detect_spinner)
{
	static const char *const frames[] = { "⠋ Thinking", "⠙ Thinking",
		"⠹ Thinking", "⠸ Thinking" };
	struct sim s;
	int k;

	sim_init(&s, _i == 0, node_argv, 2);
	for (k = 0; k < 50; k++) {
		sim_show(&s, &frames[k % 4], 1);
		sim_out(&s, 12);
		sim_run(&s, 100);
	}
	ck_assert_str_eq(s.tl, "starting,working");
	ck_assert_int_eq(s.nfacts, 0);
	sim_free(&s);
}
END_TEST

/* Debounce: pauses shorter than the quiet hold change nothing. */
START_TEST(test_detect_debounce_hold)
{
	struct sim s;
	int k;

	sim_init(&s, _i == 0, bash_argv, 1);
	s.tty_read = true;	/* would say prompt at once if asked */
	for (k = 0; k < 20; k++) {
		sim_out(&s, 80);
		sim_run(&s, 240);
	}
	ck_assert_str_eq(s.tl, "starting,working");
	ck_assert_int_eq(s.nfacts, 0);
	sim_run(&s, 9);
	ck_assert_str_eq(s.tl, "starting,working");
	sim_run(&s, 1);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	sim_free(&s);
}
END_TEST

/* A short redraw at the prompt (flicker) does not flap to working. */
START_TEST(test_detect_flicker)
{
	struct sim s;

	sim_init(&s, _i == 0, bash_argv, 1);
	s.tty_read = true;
	sim_out(&s, 20);
	sim_run(&s, 300);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	sim_out(&s, 200);
	sim_run(&s, 100);
	sim_out(&s, 200);
	sim_run(&s, 2000);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	/* A sustained burst is work. */
	s.tty_read = false;
	s.busy = true;
	sim_out(&s, 200);
	sim_run(&s, 150);
	sim_out(&s, 200);
	sim_run(&s, 150);
	sim_out(&s, 200);
	ck_assert_str_eq(s.tl, "starting,working,prompt,working");
	ck_assert_str_eq(s.last.signal, "output");
	sim_free(&s);
}
END_TEST

/* The operator typing at a prompt: echo is not work. */
START_TEST(test_detect_typing_echo)
{
	struct sim s;
	int k;

	sim_init(&s, _i == 0, node_argv, 2);
	sim_out(&s, 300);
	sim_run(&s, 1500);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	for (k = 0; k < 30; k++) {
		sim_event(&s, PTY_DETECT_EV_INPUT, 1);
		sim_run(&s, 20);
		sim_out(&s, 1);
		sim_run(&s, 130);
	}
	sim_event(&s, PTY_DETECT_EV_RESIZE, 0);
	sim_run(&s, 30);
	sim_out(&s, 4000);	/* the redraw after a resize */
	sim_run(&s, 300);
	sim_out(&s, 40);
	sim_run(&s, 3000);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	sim_free(&s);
}
END_TEST

/* No facts at all (the caller cannot sample): quiet for long is prompt. */
START_TEST(test_detect_blind)
{
	struct sim s;

	sim_init(&s, _i == 0, node_argv, 2);
	s.facts_on = false;
	sim_out(&s, 300);
	sim_run(&s, 2999);
	ck_assert_str_eq(s.tl, "starting,working");
	sim_run(&s, 1);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	ck_assert_str_eq(s.last.signal, "quiet");
	ck_assert(s.next == PTY_DETECT_NEVER);
	sim_free(&s);
}
END_TEST

/* A report is one signal: output after it ends it. */
START_TEST(test_detect_report_overridden)
{
	struct sim s;
	int k;

	sim_init(&s, _i == 0, node_argv, 2);
	sim_out(&s, 300);
	sim_osc(&s, "7717;corral-report;blocked");
	ck_assert_str_eq(s.tl, "starting,working,blocked");
	ck_assert_str_eq(s.last.signal, "report:blocked");
	sim_run(&s, 5000);
	ck_assert_str_eq(s.tl, "starting,working,blocked");
	/* The agent carries on by itself: output resumes. */
	for (k = 0; k < 5; k++) {
		sim_out(&s, 100);
		sim_run(&s, 100);
	}
	ck_assert_str_eq(s.tl, "starting,working,blocked,working");
	sim_run(&s, 2000);
	ck_assert_str_eq(s.tl, "starting,working,blocked,working,prompt");
	sim_free(&s);
}
END_TEST

/*
 * The stuck-report case: a hook reported blocked, the operator rejects the
 * permission, the agent goes back to its prompt and no hook fires.
 */
START_TEST(test_detect_report_rejected)
{
	struct sim s;

	sim_init(&s, _i == 0, node_argv, 2);
	sim_out(&s, 300);
	sim_run(&s, 100);
	sim_osc(&s, "7717;corral-report;blocked");
	sim_run(&s, 4000);
	ck_assert_str_eq(s.tl, "starting,working,blocked");
	sim_event(&s, PTY_DETECT_EV_INPUT, 1);
	sim_run(&s, 30);
	sim_out(&s, 600);	/* the dialog goes, the prompt comes back */
	sim_run(&s, 5000);
	ck_assert_str_eq(s.tl, "starting,working,blocked,prompt");
	sim_free(&s);
}
END_TEST

START_TEST(test_detect_report_states)
{
	struct sim s;

	sim_init(&s, _i == 0, node_argv, 2);
	sim_osc(&s, "7717;corral-report;working");
	ck_assert_str_eq(s.tl, "starting,working");
	ck_assert_str_eq(s.last.signal, "report:working");
	sim_run(&s, 400);
	sim_osc(&s, "7717;corral-report;done");
	/* done from a hook means the turn ended: the agent is alive. */
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	ck_assert_str_eq(s.last.signal, "report:done");
	ck_assert(!s.last.final);
	sim_run(&s, 400);
	sim_osc(&s, "7717;corral-report;bogus");
	sim_osc(&s, "7717;other-tag;blocked");
	sim_run(&s, 5000);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	sim_free(&s);
}
END_TEST

START_TEST(test_detect_osc133)
{
	static const char *const argv[] = { "zsh" };
	struct sim s;

	sim_init(&s, _i == 0, argv, 1);
	s.facts_on = false;	/* marks alone */
	sim_osc(&s, "133;A");
	sim_run(&s, 300);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	sim_event(&s, PTY_DETECT_EV_INPUT, 1);
	sim_osc(&s, "133;C");
	ck_assert_str_eq(s.tl, "starting,working,prompt,working");
	ck_assert_str_eq(s.last.signal, "osc133:C");
	sim_run(&s, 10000);	/* a quiet command: still running */
	ck_assert_str_eq(s.tl, "starting,working,prompt,working");
	sim_osc(&s, "133;D;0");
	sim_osc(&s, "133;A;cl=m");
	sim_run(&s, 300);
	ck_assert_str_eq(s.tl, "starting,working,prompt,working,prompt");
	ck_assert_str_eq(s.last.signal, "osc133:A");
	sim_free(&s);
}
END_TEST

/*
 * A sandboxed shell's curl: polling a socket with the terminal on fd 0
 * looks like a tty read; while its request is in flight it is working,
 * then the tty read settles it at prompt.
 */
START_TEST(test_detect_egress_over_tty_read)
{
	static const char *const rows[] = { "", "", "" };
	struct sim s;
	struct pty_detect_event ev = { .kind = PTY_DETECT_EV_EGRESS };

	sim_init(&s, false, bash_argv, 1);
	s.tty_read = true;
	sim_show(&s, rows, 3);
	ev.now_ms = s.now;
	ev.inflight = 1;
	pty_detect_feed_event(s.d, &ev);
	sim_step(&s);
	sim_run(&s, 5000);
	ck_assert_str_eq(s.tl, "starting,working");
	ev.now_ms = s.now;
	ev.inflight = 0;
	pty_detect_feed_event(s.d, &ev);
	sim_step(&s);
	sim_run(&s, 2000);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	sim_free(&s);
}
END_TEST

/*
 * The model gateway holds the lease's model requests (a spend cap): the
 * agent is blocked on the operator, whatever its screen shows, and the
 * signal names the reason; released, it rests again (issue 19).
 */
START_TEST(test_detect_gateway_held)
{
	static const char *const rows[] = { "", "", "" };
	struct sim s;
	struct pty_detect_event ev = { .kind = PTY_DETECT_EV_HELD };

	sim_init(&s, false, bash_argv, 1);
	s.tty_read = true;
	sim_show(&s, rows, 3);
	sim_run(&s, 3000);
	ck_assert_str_eq(s.tl, "starting,prompt");
	ev.now_ms = s.now;
	ev.text = "spend_cap";
	pty_detect_feed_event(s.d, &ev);
	sim_step(&s);
	sim_run(&s, 2000);
	ck_assert_str_eq(s.tl, "starting,prompt,blocked");
	ck_assert_str_eq(s.last.signal, "gateway:spend_cap");
	ev.now_ms = s.now;
	ev.text = NULL;
	pty_detect_feed_event(s.d, &ev);
	sim_step(&s);
	sim_run(&s, 3000);
	ck_assert_str_eq(s.tl, "starting,prompt,blocked,prompt");
	sim_free(&s);
}
END_TEST

/* A model request through the gateway: in flight, then answered (its
 * stop reason, or none), the answer drawn after it. */
static void
sim_model(struct sim *s, const char *stop)
{
	struct pty_detect_event ev = { .kind = PTY_DETECT_EV_EGRESS };
	struct pty_detect_event st = { .kind = PTY_DETECT_EV_STOP };

	ev.now_ms = s->now;
	ev.inflight = 1;
	pty_detect_feed_event(s->d, &ev);
	sim_step(s);
	sim_run(s, 2000);
	ev.now_ms = st.now_ms = s->now;
	ev.inflight = 0;
	pty_detect_feed_event(s->d, &ev);
	if (stop != NULL) {
		st.text = stop;
		pty_detect_feed_event(s->d, &st);
	}
	sim_out(s, 200);
}

/*
 * How the model's turn ended, from the gateway (issue 19): end_turn with
 * nothing running is a prompt as soon as the agent is quiet, with no
 * wait for idle; once the user typed it is forgotten; tool_use is left
 * to the facts (the quiet rest waits for idle). Explain names it.
 */
START_TEST(test_detect_gateway_stop)
{
	struct pty_detect_event st = { .kind = PTY_DETECT_EV_STOP };
	struct sim s;
	char buf[2048];
	uint64_t t;

	sim_init(&s, false, node_argv, 2);
	sim_run(&s, 5000);
	ck_assert_str_eq(s.tl, "starting,prompt");
	sim_model(&s, "end_turn");
	t = s.now;
	sim_run(&s, 3000);
	ck_assert_str_eq(s.tl, "starting,prompt,working,prompt");
	ck_assert_str_eq(s.last.signal, "model:end_turn");
	ck_assert_uint_lt(s.changed_ms - t, 1000);
	pty_detect_explain(s.d, s.now, buf, sizeof buf);
	ck_assert_msg(strstr(buf, "model: the last turn ended end_turn") !=
	    NULL, "%s", buf);

	/* typed: the stop is forgotten, a quiet rest waits for idle */
	sim_event(&s, PTY_DETECT_EV_INPUT, 1);
	sim_model(&s, NULL);
	t = s.now;
	sim_run(&s, 3000);
	ck_assert_str_eq(s.tl, "starting,prompt,working,prompt,working,"
	    "prompt");
	ck_assert_str_eq(s.last.signal, "quiet");
	ck_assert_uint_ge(s.changed_ms - t, 1000);

	/* a tool call: no early prompt either */
	sim_model(&s, "tool_use");
	t = s.now;
	sim_run(&s, 3000);
	ck_assert_str_eq(s.last.signal, "quiet");
	ck_assert_uint_ge(s.changed_ms - t, 1000);
	pty_detect_explain(s.d, s.now, buf, sizeof buf);
	ck_assert_ptr_nonnull(strstr(buf, "ended tool_use"));
	/* from the upstream: a word only, bounded */
	st.now_ms = s.now;
	st.text = "end_turn\x1b[2J";
	pty_detect_feed_event(s.d, &st);
	pty_detect_explain(s.d, s.now, buf, sizeof buf);
	ck_assert_ptr_nonnull(strstr(buf, "ended other"));
	sim_free(&s);
}
END_TEST

START_TEST(test_detect_egress_progress)
{
	struct sim s;
	struct pty_detect_event ev = { .kind = PTY_DETECT_EV_EGRESS };

	sim_init(&s, _i == 0, node_argv, 2);
	sim_out(&s, 100);
	ev.now_ms = s.now;
	ev.inflight = 1;
	pty_detect_feed_event(s.d, &ev);
	sim_run(&s, 6000);	/* waiting on the model, no CPU */
	ck_assert_str_eq(s.tl, "starting,working");
	ck_assert_str_eq(s.last.signal, "output");
	ev.now_ms = s.now;
	ev.inflight = 0;
	pty_detect_feed_event(s.d, &ev);
	sim_step(&s);
	sim_run(&s, 2000);
	ck_assert_str_eq(s.tl, "starting,working,prompt");

	/* OSC 9;4 progress shown: working until it is removed. */
	sim_osc(&s, "9;4;3;0");
	sim_run(&s, 400);
	sim_osc(&s, "9;4;1;40");
	sim_run(&s, 6000);
	ck_assert_str_eq(s.tl, "starting,working,prompt,working");
	sim_osc(&s, "9;4;0;0");
	sim_run(&s, 2000);
	ck_assert_str_eq(s.tl, "starting,working,prompt,working,prompt");
	sim_free(&s);
}
END_TEST

/* A progress bar left behind expires instead of getting stuck. */
START_TEST(test_detect_progress_expires)
{
	struct sim s;

	sim_init(&s, _i == 0, node_argv, 2);
	sim_osc(&s, "9;4;3;0");
	sim_run(&s, 29000);
	ck_assert_str_eq(s.tl, "starting,working");
	sim_run(&s, 2000);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	sim_free(&s);
}
END_TEST

START_TEST(test_detect_notification)
{
	struct sim s;

	sim_init(&s, _i == 0, node_argv, 2);
	s.facts_on = false;
	sim_out(&s, 400);
	sim_run(&s, 100);
	sim_osc(&s, "9;\n\nBuild finished");
	sim_run(&s, 300);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	ck_assert_str_eq(s.last.signal, "osc9");
	ck_assert_str_eq(s.last.detail, "Build finished");
	sim_free(&s);

	sim_init(&s, _i == 0, node_argv, 2);
	s.facts_on = false;
	sim_out(&s, 400);
	sim_event(&s, PTY_DETECT_EV_BELL, 0);
	sim_run(&s, 300);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	ck_assert_str_eq(s.last.signal, "bel");
	sim_free(&s);
}
END_TEST

/* A program that shows nothing at all: only facts can tell. */
START_TEST(test_detect_silent_start)
{
	static const char *const cat_argv[] = { "cat" };
	struct sim s;

	sim_init(&s, _i == 0, cat_argv, 1);
	s.tty_read = true;
	sim_run(&s, 249);
	ck_assert_str_eq(s.tl, "starting");
	sim_run(&s, 1);
	ck_assert_str_eq(s.tl, "starting,prompt");
	ck_assert_str_eq(s.last.signal, "fact:tty-read");
	ck_assert(s.next == PTY_DETECT_NEVER);
	sim_free(&s);

	/* Loads for two seconds on the CPU, then waits on a socket. */
	sim_init(&s, _i == 0, node_argv, 2);
	s.busy = true;
	sim_run(&s, 2000);
	ck_assert_str_eq(s.tl, "starting,working");
	ck_assert_str_eq(s.last.signal, "fact:cpu");
	s.busy = false;
	sim_run(&s, 10000);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	ck_assert(s.next == PTY_DETECT_NEVER);
	sim_free(&s);

	/* Idle from the start: still starting for a while, then settled. */
	sim_init(&s, _i == 0, node_argv, 2);
	sim_run(&s, 2999);
	ck_assert_str_eq(s.tl, "starting");
	sim_run(&s, 1);
	ck_assert_str_eq(s.tl, "starting,prompt");
	ck_assert(s.next == PTY_DETECT_NEVER);
	sim_free(&s);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Known agents, with their rule files                                  */

#define BOX_TOP "╭──────────────────────────────────────────────────╮"
#define BOX_BOT "╰──────────────────────────────────────────────────╯"

static const char *const claude_idle[] = {
	BOX_TOP,
	"│ ✻ Welcome to Claude Code!                        │",
	BOX_BOT,
	"",
	BOX_TOP,
	"│ > Try \"write a test for detect.c\"                │",
	BOX_BOT,
	"  ? for shortcuts",
	"", "", "",
};

static const char *const claude_work1[] = {
	"> fix the failing test",
	"",
	"● I'll run the tests first.",
	"",
	"✻ Thinking… (3s · esc to interrupt)",
	"",
	BOX_TOP,
	"│ >                                                │",
	BOX_BOT,
	"", "",
};

static const char *const claude_work2[] = {
	"> fix the failing test",
	"",
	"● I'll run the tests first.",
	"",
	"✽ Thinking… (4s · esc to interrupt)",
	"",
	BOX_TOP,
	"│ >                                                │",
	BOX_BOT,
	"", "",
};

static const char *const claude_perm[] = {
	"> fix the failing test",
	"",
	"● Bash(rm -rf build && make test)",
	BOX_TOP,
	"│ Bash command                                     │",
	"│                                                  │",
	"│   rm -rf build && make test                      │",
	"│   Clean and rebuild                              │",
	"│                                                  │",
	"│ Do you want to proceed?                          │",
	"│ ❯ 1. Yes                                         │",
	"│   2. Yes, and don't ask again for make commands  │",
	"│   3. No, and tell Claude what to do differently  │",
	BOX_BOT,
	"",
};

static const char *const claude_perm_sel2[] = {
	"> fix the failing test",
	"",
	"● Bash(rm -rf build && make test)",
	BOX_TOP,
	"│ Bash command                                     │",
	"│                                                  │",
	"│   rm -rf build && make test                      │",
	"│   Clean and rebuild                              │",
	"│                                                  │",
	"│ Do you want to proceed?                          │",
	"│   1. Yes                                         │",
	"│ ❯ 2. Yes, and don't ask again for make commands  │",
	"│   3. No, and tell Claude what to do differently  │",
	BOX_BOT,
	"",
};

static const char *const claude_rejected[] = {
	"> fix the failing test",
	"",
	"● Bash(rm -rf build && make test)",
	"  ⎿  No (tell Claude what to do differently)",
	"",
	BOX_TOP,
	"│ >                                                │",
	BOX_BOT,
	"  ? for shortcuts",
	"",
};

static const char *const claude_done[] = {
	"● The test passes now.",
	"",
	BOX_TOP,
	"│ >                                                │",
	BOX_BOT,
	"  ? for shortcuts",
	"",
};

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Claude Code: spinner frames until the dialog, which holds still. */
static void
claude_spin(struct sim *s, int frames)
{
	int k;

	for (k = 0; k < frames; k++) {
		if (k % 2 == 0)
			sim_show(s, claude_work1, N(claude_work1));
		else
			sim_show(s, claude_work2, N(claude_work2));
		sim_out(s, 60);
		sim_run(s, 100);
	}
}

START_TEST(test_detect_claude_permission)
{
	struct sim s;
	uint64_t t;

	sim_init(&s, true, claude_argv, 2);
	ck_assert_str_eq(pty_rules_agent_name(pty_detect_agent(s.d)),
	    "claude-code");
	sim_show(&s, claude_idle, N(claude_idle));
	sim_out(&s, 2000);
	sim_run(&s, 250);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	ck_assert_str_eq(s.last.signal, "rule:claude-code:prompt");
	ck_assert(s.next == PTY_DETECT_NEVER);

	sim_event(&s, PTY_DETECT_EV_INPUT, 1);
	claude_spin(&s, 20);
	ck_assert_str_eq(s.tl, "starting,working,prompt,working");
	ck_assert_str_eq(s.last.signal, "rule:claude-code:working");

	sim_show(&s, claude_perm, N(claude_perm));
	sim_out(&s, 900);
	sim_run(&s, 149);
	ck_assert_str_eq(s.tl, "starting,working,prompt,working");
	sim_run(&s, 1);
	ck_assert_str_eq(s.tl, "starting,working,prompt,working,blocked");
	ck_assert_str_eq(s.last.signal, "rule:claude-code:permission");
	ck_assert_str_eq(s.last.detail,
	    "│ Do you want to proceed?                          │");
	sim_run(&s, 60000);
	ck_assert(s.next == PTY_DETECT_NEVER);

	/* Approved: the spinner comes back, then the turn ends. */
	sim_event(&s, PTY_DETECT_EV_INPUT, 1);
	claude_spin(&s, 10);
	sim_show(&s, claude_done, N(claude_done));
	t = s.now;
	sim_out(&s, 300);
	sim_run(&s, 1000);
	ck_assert_str_eq(s.tl,
	    "starting,working,prompt,working,blocked,working,prompt");
	/*
	 * By its own prompt rule, held and quiet 150 ms after the screen
	 * changed, not after the general 250 ms quiet (issue 20).
	 */
	ck_assert_str_eq(s.last.signal, "rule:claude-code:prompt");
	ck_assert_uint_eq(s.changed_ms, t + 150);
	sim_free(&s);
}
END_TEST

/* Blocked is never shown as prompt or working while the dialog is up. */
START_TEST(test_detect_claude_blocked_holds)
{
	struct sim s;
	int k;

	sim_init(&s, true, claude_argv, 2);
	claude_spin(&s, 5);
	sim_show(&s, claude_perm, N(claude_perm));
	sim_out(&s, 900);
	sim_run(&s, 200);
	ck_assert_str_eq(s.tl, "starting,working,blocked");
	/* The operator moves the selection up and down for a while. */
	for (k = 0; k < 40; k++) {
		sim_event(&s, PTY_DETECT_EV_INPUT, 3);
		sim_run(&s, 10);
		if (k % 2 == 0)
			sim_show(&s, claude_perm_sel2, N(claude_perm_sel2));
		else
			sim_show(&s, claude_perm, N(claude_perm));
		sim_out(&s, 200);
		sim_run(&s, 90);
	}
	/* A title animation and a hook claiming prompt change nothing. */
	s.title = "⠂ Fix failing test";
	sim_out(&s, 30);
	sim_osc(&s, "7717;corral-report;prompt");
	sim_run(&s, 400);
	sim_osc(&s, "7717;corral-report;working");
	sim_run(&s, 20000);
	ck_assert_str_eq(s.tl, "starting,working,blocked");
	sim_free(&s);
}
END_TEST

/* Rejected with no hook firing: ends in prompt. */
START_TEST(test_detect_claude_rejected)
{
	struct sim s;

	sim_init(&s, true, claude_argv, 2);
	claude_spin(&s, 5);
	sim_show(&s, claude_perm, N(claude_perm));
	sim_out(&s, 900);
	sim_osc(&s, "7717;corral-report;blocked");
	sim_run(&s, 3000);
	ck_assert_str_eq(s.tl, "starting,working,blocked");
	sim_event(&s, PTY_DETECT_EV_INPUT, 1);	/* "3" */
	sim_run(&s, 40);
	sim_show(&s, claude_rejected, N(claude_rejected));
	sim_out(&s, 700);
	sim_run(&s, 149);	/* its prompt rule: held and quiet 150 ms */
	ck_assert_str_eq(s.tl, "starting,working,blocked");
	sim_run(&s, 1);
	ck_assert_str_eq(s.tl, "starting,working,blocked,prompt");
	ck_assert_str_eq(s.last.signal, "rule:claude-code:prompt");
	sim_free(&s);
}
END_TEST

/* Prose holding the dialog's words while the agent keeps working. */
START_TEST(test_detect_claude_prose)
{
	const char *rows[40];
	struct sim s;
	int k, i;

	sim_init(&s, _i == 0, claude_argv, 2);
	for (k = 0; k < 30; k++) {
		for (i = 0; i < 30; i++)
			rows[i] = "● Streaming the explanation, line by line.";
		rows[10] = "The installer asks \"Do you want to proceed?\" and";
		rows[11] = "offers 1. Yes 2. No; we pass --yes instead.";
		rows[30] = "";
		rows[31] = k % 2 ? claude_work1[4] : claude_work2[4];
		rows[32] = "";
		rows[33] = BOX_TOP;
		rows[34] = claude_work1[7];
		rows[35] = BOX_BOT;
		sim_show(&s, rows, 36);
		sim_out(&s, 300);
		sim_run(&s, 100);
	}
	ck_assert_str_eq(s.tl, "starting,working");
	/* Now the words right above the spinner, which stalls a while. */
	rows[28] = rows[10];
	rows[29] = "│ ❯ 1. Yes │ is what the dialog would show.";
	sim_show(&s, rows, 36);
	sim_out(&s, 300);
	s.busy = true;
	sim_run(&s, 5000);
	ck_assert_str_eq(s.tl, "starting,working");
	sim_free(&s);
}
END_TEST

START_TEST(test_detect_claude_notify)
{
	struct sim s;

	sim_init(&s, true, claude_argv, 2);
	claude_spin(&s, 5);
	/* A dialog this rule file does not know, announced by OSC 9. */
	sim_show(&s, claude_done, 2);
	sim_out(&s, 300);
	sim_osc(&s, "9;\n\nClaude needs your permission to use WebFetch");
	sim_run(&s, 1000);
	ck_assert_str_eq(s.tl, "starting,working,blocked");
	ck_assert_str_eq(s.last.signal, "rule:claude-code:notify-permission");
	sim_free(&s);
}
END_TEST

static const char *const codex_work[] = {
	"› add a --json flag to ls",
	"",
	"• Working (12s • esc to interrupt)",
	"",
	"› Ask Codex to do anything",
	"",
	"  ⏎ send   ⇧⏎ newline   ⌃T transcript   ⌃C quit",
};

static const char *const codex_approval[] = {
	"› add a --json flag to ls",
	"",
	"  Would you like to run the following command?",
	"",
	"  $ cargo test",
	"",
	"› 1. Yes, proceed",
	"  2. Yes, and don't ask again for this command",
	"  3. No, and tell Codex what to do differently",
	"",
	"  Press enter to confirm or esc to cancel",
};

static const char *const codex_idle[] = {
	"• Added the flag and a test.",
	"",
	"› Ask Codex to do anything",
	"",
	"  100% context left · ? for shortcuts",
};

START_TEST(test_detect_codex)
{
	struct sim s;
	int k;

	sim_init(&s, true, codex_argv, 1);
	ck_assert_str_eq(pty_rules_agent_name(pty_detect_agent(s.d)),
	    "codex");
	sim_show(&s, codex_work, N(codex_work));
	for (k = 0; k < 3; k++) {	/* the timer ticks once a second */
		sim_out(&s, 40);
		sim_run(&s, 1000);
	}
	ck_assert_str_eq(s.tl, "starting,working");
	sim_show(&s, codex_approval, N(codex_approval));
	sim_out(&s, 400);
	sim_run(&s, 5000);
	ck_assert_str_eq(s.tl, "starting,working,blocked");
	ck_assert_str_eq(s.last.signal, "rule:codex:approval");
	sim_event(&s, PTY_DETECT_EV_INPUT, 1);
	sim_run(&s, 30);
	sim_show(&s, codex_work, N(codex_work));
	sim_out(&s, 400);
	sim_run(&s, 2000);
	sim_show(&s, codex_idle, N(codex_idle));
	sim_out(&s, 400);
	sim_run(&s, 1000);
	ck_assert_str_eq(s.tl, "starting,working,blocked,working,prompt");
	ck_assert_str_eq(s.last.signal, "rule:codex:prompt");
	sim_free(&s);
}
END_TEST

/* A y/n question in a shell: blocked with the rules, and without them
 * (the agent-agnostic dialog, SPEC 5.3), never prompt. */
START_TEST(test_detect_shell_question)
{
	static const char *const rows[] = { "ann@box:~$ sudo apt upgrade",
		"After this operation, 12 MB will be used.",
		"Do you want to continue? [Y/n]" };
	struct sim s;

	sim_init(&s, _i == 0, bash_argv, 1);
	s.tty_read = true;
	sim_show(&s, rows, 3);
	sim_out(&s, 300);
	sim_run(&s, 1000);
	ck_assert_str_eq(s.tl, "starting,working,blocked");
	if (_i == 1)
		ck_assert_str_eq(s.last.signal, "dialog");
	sim_free(&s);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Bad input                                                            */

START_TEST(test_detect_huge_line_title)
{
	const char *rows[3];
	struct sim s;
	char *big = malloc(1 << 20), *title = malloc(1 << 20);
	size_t mem;

	ck_assert_ptr_nonnull(big);
	ck_assert_ptr_nonnull(title);
	memset(big, 'x', (1 << 20) - 1);
	big[(1 << 20) - 1] = '\0';
	/* a title of 1 MB of multibyte characters */
	for (size_t i = 0; i + 3 < (1 << 20); i += 3)
		memcpy(title + i, "\xe2\xa0\x8b", 3);
	title[(1 << 20) - 1] = '\0';
	sim_init(&s, _i == 0, claude_argv, 2);
	rows[0] = big;
	rows[1] = big;
	rows[2] = "│ > ";
	s.title = title;
	sim_show(&s, rows, 3);
	sim_out(&s, 3 << 20);
	sim_run(&s, 3000);
	mem = pty_detect_memory(s.d);
	ck_assert_uint_lt(mem, 64 * 1024);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	free(big);
	free(title);
	sim_free(&s);
}
END_TEST

START_TEST(test_detect_osc_flood)
{
	static const char *const kinds[] = { "133;A", "133;C", "9;4;1;50",
		"9;Hello", "777;notify;T;B", "7717;corral-report;blocked",
		"7717;corral-report;", "7717;", "0;title", "999999999;x", ";",
		"9;4;", "133;", "777;", "633;B" };
	struct sim s;
	size_t mem0;
	char *huge = malloc(1 << 20);
	int k;

	ck_assert_ptr_nonnull(huge);
	memcpy(huge, "9;", 2);
	memset(huge + 2, 'n', (1 << 20) - 2);
	sim_init(&s, _i == 0, node_argv, 2);
	sim_out(&s, 10);
	mem0 = pty_detect_memory(s.d);
	/* Ten thousand OSC sequences in one second. */
	for (k = 0; k < 10000; k++) {
		struct pty_detect_event ev = { .kind = PTY_DETECT_EV_OSC,
			.now_ms = s.now };

		if (k % 1000 == 999) {
			ev.text = huge;
			ev.len = 1 << 20;
		} else {
			ev.text = kinds[k % N(kinds)];
			ev.len = strlen(ev.text);
		}
		pty_detect_feed_event(s.d, &ev);
		if (k % 10 == 0) {
			sim_out(&s, 20);
			s.now++;
		}
	}
	ck_assert_uint_eq(pty_detect_memory(s.d), mem0);
	/*
	 * The flood held fresh "blocked" reports among the garbage, and no
	 * output ends the last one: blocked until the exit.
	 */
	ck_assert_str_eq(s.tl, "starting,working,blocked");
	sim_run(&s, 40000);
	ck_assert_str_eq(s.tl, "starting,working,blocked");
	sim_exit(&s, 0, 0);
	ck_assert_str_eq(s.tl, "starting,working,blocked,done");
	free(huge);
	sim_free(&s);
}
END_TEST

/* Binary rows: control bytes and broken UTF-8 do not upset anything. */
START_TEST(test_detect_binary_rows)
{
	static const char *const rows[] = { "\x01\x02\xff\xfe\x80\x1b[31m",
		"\xc3", "ok\x7f\x9b" };
	struct sim s;
	char buf[2048];

	sim_init(&s, _i == 0, claude_argv, 2);
	sim_show(&s, rows, 3);
	sim_out(&s, 100);
	sim_run(&s, 4000);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	ck_assert_uint_gt(pty_detect_explain(s.d, s.now, buf, sizeof buf),
	    0);
	ck_assert_ptr_nonnull(strstr(buf, "signal: quiet"));
	sim_free(&s);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Small API pieces                                                     */

START_TEST(test_detect_names)
{
	enum pty_detect_state st;
	int i;

	for (i = 0; i < PTY_DETECT_NSTATES; i++) {
		ck_assert_int_eq(pty_detect_state_parse(
		    pty_detect_state_name((enum pty_detect_state)i), &st), 0);
		ck_assert_int_eq(st, i);
	}
	ck_assert_str_eq(pty_detect_state_name(PTY_DETECT_BLOCKED),
	    "blocked");
	ck_assert_int_eq(pty_detect_state_parse("idle", &st), -EINVAL);
}
END_TEST

START_TEST(test_detect_report_seq)
{
	char buf[64];

	ck_assert_int_eq(pty_detect_report_seq("blocked", buf, sizeof buf),
	    29);
	ck_assert_str_eq(buf, "\033]7717;corral-report;blocked\007");
	ck_assert_int_eq(pty_detect_report_seq("done", buf, sizeof buf), 26);
	ck_assert_int_eq(pty_detect_report_seq("starting", buf, sizeof buf),
	    -EINVAL);
	ck_assert_int_eq(pty_detect_report_seq("prompt", buf, 10), -ENOBUFS);
}
END_TEST

START_TEST(test_detect_explain)
{
	struct sim s;
	char buf[1024];
	size_t n;

	sim_init(&s, true, claude_argv, 2);
	claude_spin(&s, 3);
	sim_show(&s, claude_perm, N(claude_perm));
	sim_out(&s, 900);
	sim_run(&s, 500);
	n = pty_detect_explain(s.d, s.now, buf, sizeof buf);
	ck_assert_uint_eq(n, strlen(buf));
	ck_assert_ptr_nonnull(strstr(buf, "state: blocked for 350 ms\n"));
	/* longer: seconds and minutes, never 25359 ms (issue 21) */
	pty_detect_explain(s.d, s.now + 25009, buf, sizeof buf);
	ck_assert_ptr_nonnull(strstr(buf, "state: blocked for 25.3 s\n"));
	pty_detect_explain(s.d, s.now + 431650, buf, sizeof buf);
	ck_assert_ptr_nonnull(strstr(buf, "state: blocked for 7m12s\n"));
	n = pty_detect_explain(s.d, s.now, buf, sizeof buf);
	ck_assert_ptr_nonnull(strstr(buf,
	    "signal: rule:claude-code:permission\n"));
	ck_assert_ptr_nonnull(strstr(buf, "agent: claude-code\n"));
	/* A small buffer gets a truncated, terminated text and the size. */
	ck_assert_uint_eq(pty_detect_explain(s.d, s.now, buf, 8), n);
	ck_assert_uint_eq(strlen(buf), 7);
	sim_free(&s);
}
END_TEST

/*
 * Explain quotes only what is on the screen now (issue 20): a state kept
 * after its rule stopped matching (a short redraw into a screen no rule
 * knows) says its evidence is gone, never a row that was.
 */
START_TEST(test_detect_explain_current)
{
	static const char *const other[] = { "  Folder access", "  /work" };
	struct sim s;
	char buf[1024];

	sim_init(&s, true, codex_argv, 1);
	sim_show(&s, codex_idle, N(codex_idle));
	sim_out(&s, 400);
	sim_run(&s, 1000);
	ck_assert_str_eq(s.last.signal, "rule:codex:prompt");
	pty_detect_explain(s.d, s.now, buf, sizeof buf);
	ck_assert_ptr_nonnull(strstr(buf, "detail: › Ask Codex"));
	sim_show(&s, other, N(other));
	sim_out(&s, 100);	/* a redraw: short of work */
	sim_run(&s, 100);
	ck_assert_int_eq(s.last.state, PTY_DETECT_PROMPT);
	pty_detect_explain(s.d, s.now, buf, sizeof buf);
	ck_assert_msg(strstr(buf, "Ask Codex") == NULL, "%s", buf);
	ck_assert_ptr_nonnull(strstr(buf, "detail: not on the screen now "
	    "(rule prompt no longer matches)\n"));
	sim_free(&s);
}
END_TEST

/* A rule file swapped in at run time: detection follows the new agent. */
START_TEST(test_detect_set_agent_late)
{
	static const char *const rows[] = { "Continue? [y/N]" };
	struct sim s;
	struct pty_rules *rs;
	const char *dirs[1];
	char *dir = cu_src_path("agents");

	sim_init(&s, false, bash_argv, 1);
	sim_show(&s, rows, 1);
	sim_out(&s, 20);
	sim_run(&s, 100);
	ck_assert_int_eq(pty_rules_new(&rs), 0);
	dirs[0] = dir;
	ck_assert_int_eq(pty_rules_load_dirs(rs, dirs, 1, rules_err, NULL),
	    0);
	pty_detect_set_agent(s.d, pty_rules_find(rs, "shell"));
	sim_step(&s);
	sim_run(&s, 1000);
	ck_assert_str_eq(s.tl, "starting,working,blocked");
	pty_detect_set_agent(s.d, NULL);
	pty_rules_free(rs);
	free(dir);
	sim_free(&s);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Through the real screen model: OSC and BEL as pty_screen reports them */

static void
glue_event(enum pty_screen_event_kind k, const char *text, size_t len,
    void *ud)
{
	struct sim *s = ud;
	struct pty_detect_event ev = { .now_ms = s->now };

	if (k == PTY_SEV_BELL) {
		ev.kind = PTY_DETECT_EV_BELL;
	} else if (k == PTY_SEV_OSC) {
		ev.kind = PTY_DETECT_EV_OSC;
		ev.text = text;
		ev.len = len;
	} else {
		return;	/* titles come in with the screen */
	}
	pty_detect_feed_event(s->d, &ev);
}

static void
glue_feed(struct sim *s, struct pty_screen *sc, const char *bytes)
{
	char buf[24][512];
	const char *rows[24];
	int r;

	pty_screen_feed(sc, bytes, strlen(bytes));
	for (r = 0; r < 24; r++) {
		pty_screen_row_text(sc, r, buf[r], sizeof buf[r]);
		rows[r] = buf[r];
	}
	sim_event(s, PTY_DETECT_EV_OUTPUT, strlen(bytes));
	pty_detect_set_screen(s->d, rows, 24, pty_screen_title(sc), s->now);
	sim_step(s);
}

START_TEST(test_detect_screen_glue)
{
	struct pty_screen *sc;
	struct sim s;
	int k;

	sim_init(&s, true, claude_argv, 2);
	ck_assert_int_eq(pty_screen_new(&sc, 24, 80, 100), 0);
	pty_screen_set_event(sc, glue_event, &s);
	glue_feed(&s, sc, "\033]0;\xe2\x9c\xb3 Claude Code\007"
	    "\xe2\x95\xad\xe2\x94\x80\xe2\x95\xae\r\n"
	    "\xe2\x94\x82 > \xe2\x94\x82\r\n"
	    "\xe2\x95\xb0\xe2\x94\x80\xe2\x95\xaf\r\n"
	    "  ? for shortcuts");
	sim_run(&s, 300);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	ck_assert_str_eq(s.last.signal, "rule:claude-code:prompt");
	for (k = 0; k < 10; k++) {
		glue_feed(&s, sc, k % 2 ? "\033[H\033[2J\xe2\x9c\xbb Thinking"
		    "\xe2\x80\xa6 (2s \xc2\xb7 esc to interrupt)\r\n> " :
		    "\033[H\033[2J\xe2\x9c\xbd Thinking\xe2\x80\xa6 (3s "
		    "\xc2\xb7 esc to interrupt)\r\n> ");
		sim_run(&s, 100);
	}
	ck_assert_str_eq(s.tl, "starting,working,prompt,working");
	/* The dialog comes with a hook's report, ended by ST. */
	glue_feed(&s, sc, "\033[H\033[2JDo you want to proceed?\r\n"
	    "\xe2\x9d\xaf 1. Yes\r\n  2. No\033]7717;corral-report;blocked"
	    "\033\\");
	ck_assert_str_eq(s.tl, "starting,working,prompt,working,blocked");
	ck_assert_str_eq(s.last.signal, "report:blocked");
	sim_run(&s, 1000);
	/* Rejected: back to the box, a BEL, no hook. */
	sim_event(&s, PTY_DETECT_EV_INPUT, 1);
	sim_run(&s, 20);
	glue_feed(&s, sc, "\033[H\033[2J\xe2\x94\x82 > \xe2\x94\x82\007");
	sim_run(&s, 1000);
	ck_assert_str_eq(s.tl,
	    "starting,working,prompt,working,blocked,prompt");
	pty_screen_free(sc);
	sim_free(&s);

	/* A shell with OSC 133 marks and no rules. */
	sim_init(&s, false, bash_argv, 1);
	s.facts_on = false;
	ck_assert_int_eq(pty_screen_new(&sc, 24, 80, 100), 0);
	pty_screen_set_event(sc, glue_event, &s);
	glue_feed(&s, sc, "\033]133;A\007$ \033]133;B\007");
	sim_run(&s, 300);
	glue_feed(&s, sc, "make\r\n\033]133;C\007");
	sim_run(&s, 5000);
	glue_feed(&s, sc, "\033]9;4;1;50\007");
	sim_run(&s, 5000);
	ck_assert_str_eq(s.tl, "starting,working,prompt,working");
	ck_assert_str_eq(s.last.signal, "osc133:C");
	glue_feed(&s, sc, "\033]9;4;0;0\007\033]133;D;0\007"
	    "\033]133;A\007$ ");
	sim_run(&s, 300);
	ck_assert_str_eq(s.tl, "starting,working,prompt,working,prompt");
	ck_assert_str_eq(s.last.signal, "osc133:A");
	pty_screen_free(sc);
	sim_free(&s);
}
END_TEST

/*
 * A command in the foreground of an interactive shell (`sleep 2` typed at
 * its prompt): the shell waits on its child, the child on a timer, nobody
 * on the terminal. Working until the shell reads again, with or without
 * shell.rules, and no prompt rule can say otherwise (the holder's case:
 * the caller samples facts whenever asked).
 */
START_TEST(test_detect_fg_command)
{
	static const char *const at_prompt[] = { "bash-5.2#" };
	static const char *const typed[] = { "bash-5.2# sleep 2" };
	static const char *const back[] = { "bash-5.2# sleep 2", "bash-5.2#" };
	struct sim s;

	sim_init_flags(&s, _i == 0, bash_argv, 1, PTY_DETECT_F_FACTS);
	if (_i == 0) {
		/* The prompt rule: a prompt alone, never a typed command. */
		const struct pty_rules_agent *a = pty_detect_agent(s.d);
		struct pty_rule_info ri;
		int k, pr = -1;

		for (k = 0; k < pty_rules_agent_nrules(a); k++) {
			pty_rules_agent_rule(a, k, &ri);
			if (strcmp(ri.name, "prompt") == 0)
				pr = k;
		}
		ck_assert_int_ge(pr, 0);
		ck_assert(pty_rules_agent_test(a, pr, "bash-5.2#", NULL, NULL));
		ck_assert(pty_rules_agent_test(a, pr, "ann@box:~/src$", NULL,
		    NULL));
		ck_assert(!pty_rules_agent_test(a, pr, "bash-5.2# sleep 2",
		    NULL, NULL));
		ck_assert(!pty_rules_agent_test(a, pr, "ann@box:~/src$ make "
		    "test", NULL, NULL));
	}
	s.tty_read = s.tty_wait = s.wait_known = true;
	sim_show(&s, at_prompt, 1);
	sim_out(&s, 10);
	sim_run(&s, 300);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	/* Typed and echoed: the shell forks sleep and waits. */
	sim_event(&s, PTY_DETECT_EV_INPUT, 8);
	sim_run(&s, 5);
	sim_show(&s, typed, 1);
	sim_out(&s, 19);
	s.tty_read = s.tty_wait = false;
	s.comm = "sleep";
	sim_run(&s, 249);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	sim_run(&s, 1);
	ck_assert_str_eq(s.tl, "starting,working,prompt,working");
	ck_assert_str_eq(s.last.signal, "fact:no-tty-wait");
	ck_assert_str_eq(s.last.detail, "sleep is not waiting on the terminal");
	/* It keeps looking (backing off) while the command runs. */
	s.nfacts = 0;
	sim_run(&s, 1750);
	ck_assert_str_eq(s.tl, "starting,working,prompt,working");
	ck_assert_int_ge(s.nfacts, 2);
	ck_assert_int_le(s.nfacts, 4);
	/* The shell is back in its read: prompt. */
	s.tty_read = s.tty_wait = true;
	s.comm = "bash";
	sim_show(&s, back, 2);
	sim_out(&s, 11);
	sim_run(&s, 300);
	ck_assert_str_eq(s.tl, "starting,working,prompt,working,prompt");
	ck_assert_str_eq(s.last.signal, _i == 0 ? "rule:shell:prompt" :
	    "fact:tty-read");
	/*
	 * It keeps looking for 10 s after the last key (a command typed
	 * may start after a sample, and print nothing), then settles.
	 */
	ck_assert(s.next != PTY_DETECT_NEVER);
	sim_run(&s, 8000);
	ck_assert_str_eq(s.tl, "starting,working,prompt,working,prompt");
	ck_assert(s.next == PTY_DETECT_NEVER);
	sim_free(&s);
}
END_TEST

/*
 * A typed command that starts after the one sample of its quiet spell
 * (the shell still in its read when it was taken) and prints nothing:
 * the samples after the key find it (issue 13: a loaded machine).
 */
START_TEST(test_detect_fg_command_late)
{
	static const char *const at_prompt[] = { "ann@box:~$ " };
	static const char *const typed[] = { "ann@box:~$ make check" };
	struct sim s;

	sim_init_flags(&s, _i == 0, bash_argv, 1, PTY_DETECT_F_FACTS);
	s.tty_read = s.tty_wait = s.wait_known = true;
	sim_show(&s, at_prompt, 1);
	sim_out(&s, 10);
	sim_run(&s, 300);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	sim_event(&s, PTY_DETECT_EV_INPUT, 11);
	sim_run(&s, 5);
	sim_show(&s, typed, 1);
	sim_out(&s, 12);
	sim_run(&s, 400);	/* sampled: still in its read */
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	s.tty_read = s.tty_wait = false;	/* now it runs, silent */
	s.comm = "make";
	sim_run(&s, 3000);
	ck_assert_str_eq(s.tl, "starting,working,prompt,working");
	ck_assert_str_eq(s.last.signal, "fact:no-tty-wait");
	sim_free(&s);
}
END_TEST

/*
 * A command whose last row looks like a prompt ("... 45%" ends like a
 * shell prompt) stalls while it downloads: the shell's prompt rule must
 * not call that a prompt.
 */
START_TEST(test_detect_fg_prompt_lookalike)
{
	static const char *const rows[] = { "bash-5.2# ./fetch.sh",
		"Downloading model... 45%" };
	struct sim s;
	char buf[1024];

	sim_init_flags(&s, true, bash_argv, 1, PTY_DETECT_F_FACTS);
	s.wait_known = true;
	s.comm = "fetch.sh";
	sim_show(&s, rows, 2);
	sim_out(&s, 60);
	sim_run(&s, 5000);
	ck_assert_str_eq(s.tl, "starting,working");
	pty_detect_explain(s.d, s.now, buf, sizeof buf);
	ck_assert_ptr_nonnull(strstr(buf, "foreground fetch.sh, not in a tty "
	    "read, not waiting on the terminal"));
	sim_free(&s);

	/* The same screen without the flag decides from the rule alone. */
	sim_init(&s, true, bash_argv, 1);
	s.wait_known = true;
	sim_show(&s, rows, 2);
	sim_out(&s, 60);
	sim_run(&s, 5000);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	sim_free(&s);
}
END_TEST

/*
 * An agent busy under its prompt (Claude Code starting up after its
 * first-run dialogs: nothing of it waits on the terminal for a second or
 * two) is working, and prompt within 300 ms once it waits again: while its
 * prompt shows, facts are sampled at the shortest interval, not backed off
 * (it took up to 2 s, issue 20's samples).
 */
START_TEST(test_detect_busy_under_prompt)
{
	struct sim s;
	uint64_t at;

	sim_init_flags(&s, true, claude_argv, 2, PTY_DETECT_F_FACTS);
	s.wait_known = true;
	s.tty_wait = false;
	sim_show(&s, claude_idle, N(claude_idle));
	sim_out(&s, 800);
	sim_run(&s, 6100);
	ck_assert_str_eq(s.tl, "starting,working");
	s.tty_wait = true;
	at = s.now;
	sim_run(&s, 3000);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	ck_assert_uint_le(s.changed_ms - at, 300);
	sim_free(&s);
}
END_TEST

/*
 * An event-loop program listening to its terminal through epoll (node,
 * asyncio): not a tty read, but waiting on the terminal, so quiet and
 * idle is prompt as before. When the waits cannot be read (another
 * user's process), the fact says nothing either way.
 */
START_TEST(test_detect_fg_listening)
{
	struct sim s;

	sim_init_flags(&s, _i == 0, node_argv, 2, PTY_DETECT_F_FACTS);
	s.wait_known = s.tty_wait = true;
	sim_out(&s, 300);
	sim_run(&s, 1300);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	ck_assert_str_eq(s.last.signal, "quiet");
	sim_free(&s);

	sim_init_flags(&s, _i == 0, node_argv, 2, PTY_DETECT_F_FACTS);
	s.wait_known = false;
	sim_out(&s, 300);
	sim_run(&s, 1300);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	sim_free(&s);

	/* Not listening at all: a program that waits on the network. */
	sim_init_flags(&s, _i == 0, node_argv, 2, PTY_DETECT_F_FACTS);
	s.wait_known = true;
	sim_out(&s, 300);
	sim_run(&s, 10000);
	ck_assert_str_eq(s.tl, "starting,working");
	ck_assert(s.next != PTY_DETECT_NEVER);	/* still looking */
	sim_free(&s);
}
END_TEST

/* Asked for facts that never come: decide without them, no busy loop. */
START_TEST(test_detect_facts_not_delivered)
{
	static const char *const rows[] = { "ann@box:~$" };
	struct sim s;

	sim_init_flags(&s, true, bash_argv, 1, PTY_DETECT_F_FACTS);
	s.facts_on = false;
	sim_show(&s, rows, 1);
	sim_out(&s, 12);
	sim_run(&s, 2000);
	ck_assert_str_eq(s.tl, "starting,working,prompt");
	ck_assert_str_eq(s.last.signal, "rule:shell:prompt");
	ck_assert_uint_eq(s.changed_ms, T0 + 500);
	ck_assert(s.next == PTY_DETECT_NEVER);
	ck_assert_int_lt(s.nsteps, 8);
	sim_free(&s);
}
END_TEST

/*
 * A fast operator: the question comes at the end of a long burst of
 * output and is answered at once. The answer's echo is no work, and the
 * burst before the question does not carry over past it.
 */
START_TEST(test_detect_quick_answer)
{
	static const char *const lines[] = { "Unpacking 1", "Unpacking 2" };
	static const char *const ask[] = { "Unpacking 2",
		"Continue? [y/N]" };
	static const char *const answered[] = { "Continue? [y/N] n",
		"Abort.", "ann@box:~$" };
	struct sim s;
	int k;

	sim_init_flags(&s, true, bash_argv, 1, PTY_DETECT_F_FACTS);
	for (k = 0; k < 10; k++) {
		sim_show(&s, lines, 2);
		sim_out(&s, 40);
		sim_run(&s, 100);
	}
	sim_show(&s, ask, 2);
	sim_out(&s, 20);
	s.tty_read = s.tty_wait = s.wait_known = true;
	sim_run(&s, 150);
	ck_assert_str_eq(s.tl, "starting,working,blocked");
	sim_event(&s, PTY_DETECT_EV_INPUT, 2);
	sim_run(&s, 10);
	sim_show(&s, answered, 3);
	sim_out(&s, 30);
	sim_run(&s, 2000);
	ck_assert_str_eq(s.tl, "starting,working,blocked,prompt");
	sim_free(&s);
}
END_TEST

/*
 * A hook reports blocked and the operator rejects within the report's
 * grace: the agent's redraw right after the keys still ends the report
 * (no hook fires afterwards, so nothing else would).
 */
START_TEST(test_detect_quick_reject_report)
{
	struct sim s;

	sim_init(&s, _i == 0, node_argv, 2);
	sim_out(&s, 300);
	sim_run(&s, 100);
	sim_osc(&s, "7717;corral-report;blocked");
	ck_assert_str_eq(s.tl, "starting,working,blocked");
	sim_run(&s, 20);
	sim_event(&s, PTY_DETECT_EV_INPUT, 1);
	sim_run(&s, 50);
	sim_out(&s, 600);	/* the dialog goes, the prompt comes back */
	sim_run(&s, 3000);
	ck_assert_str_eq(s.tl, "starting,working,blocked,prompt");
	sim_free(&s);
}
END_TEST

Suite *detect_suite(void);

/*
 * The detection corpus of real screens (issues 18, 20): each
 * tests/fixtures/agent-screens/PROFILE/STATE[-what].screen is what
 * `corral screen` showed of the real CLI in that state, recorded by
 * tests/agents (CORRAL_RECORD_SCREENS). Shown still after output, the
 * profile's rules must give STATE by a rule (never the quiet fallback),
 * within 300 ms of the output (SPEC 5.3), and every screen rule of the
 * profile must decide at least one recorded screen.
 */
#define CORPUS_MS 300

struct corpus {
	char fails[4096];
	char used[2048];		/* " profile:rule" deciding some screen */
	int seen;
};

static void
corpus_fail(struct corpus *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
corpus_fail(struct corpus *c, const char *fmt, ...)
{
	size_t l = strlen(c->fails);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->fails + l, sizeof c->fails - l, fmt, ap);
	va_end(ap);
}

static void
corpus_one(struct corpus *c, const char *profile, const char *file,
    const char *want)
{
	char *text = cu_read_file(file, NULL), *line, *save = NULL;
	const char *rows[80], *base = strrchr(file, '/') + 1;
	struct sim s;
	uint64_t shown;
	int n = 0;

	ck_assert_ptr_nonnull(text);
	for (line = strtok_r(text, "\n", &save); line != NULL && n < 80;
	    line = strtok_r(NULL, "\n", &save))
		rows[n++] = line;
	sim_init(&s, true, codex_argv, 0);
	ck_assert_ptr_nonnull(pty_rules_find(s.rules, profile));
	pty_detect_set_agent(s.d, pty_rules_find(s.rules, profile));
	sim_show(&s, rows, n);
	sim_out(&s, 4096);
	shown = s.now;
	sim_run(&s, 5000);
	c->seen++;
	if (strcmp(pty_detect_state_name(s.last.state), want) != 0 ||
	    strncmp(s.last.signal, "rule:", 5) != 0)
		corpus_fail(c, " %s/%.100s: %s by %.100s (want %s by a rule);",
		    profile, base, pty_detect_state_name(s.last.state),
		    s.last.signal, want);
	else if (s.changed_ms - shown > CORPUS_MS)
		corpus_fail(c, " %s/%.100s: %s after %llu ms (at most %d);",
		    profile, base, want,
		    (unsigned long long)(s.changed_ms - shown), CORPUS_MS);
	else {
		size_t l = strlen(c->used);

		snprintf(c->used + l, sizeof c->used - l, " %s ",
		    s.last.signal + 5);
	}
	sim_free(&s);
	/*
	 * With no rules at all, every recorded dialog is still blocked, by
	 * the screen's structure, and no other screen is read as one.
	 */
	sim_init(&s, false, codex_argv, 0);
	sim_show(&s, rows, n);
	sim_out(&s, 4096);
	shown = s.now;
	sim_run(&s, 5000);
	if (strcmp(want, "blocked") == 0 &&
	    (s.last.state != PTY_DETECT_BLOCKED ||
	    strcmp(s.last.signal, "dialog") != 0 ||
	    s.changed_ms - shown > CORPUS_MS))
		corpus_fail(c, " %s/%.100s with no rules: %s by %.100s after "
		    "%llu ms (want blocked by dialog);", profile, base,
		    pty_detect_state_name(s.last.state), s.last.signal,
		    (unsigned long long)(s.changed_ms - shown));
	else if (strcmp(want, "blocked") != 0 &&
	    s.last.state == PTY_DETECT_BLOCKED)
		corpus_fail(c, " %s/%.100s with no rules: blocked by %.100s;",
		    profile, base, s.last.signal);
	sim_free(&s);
	free(text);
}

/* Every rule of profile that looks at the screen decided some screen. */
static void
corpus_coverage(struct corpus *c, const char *profile)
{
	struct pty_rules *rs;
	const struct pty_rules_agent *a;
	char *dir = cu_src_path("agents"), key[512];
	const char *dirs[] = { dir };
	struct pty_rule_info ri;
	int i;

	ck_assert_int_eq(pty_rules_new(&rs), 0);
	ck_assert_int_eq(pty_rules_load_dirs(rs, dirs, 1, rules_err, NULL), 0);
	ck_assert_ptr_nonnull(a = pty_rules_find(rs, profile));
	for (i = 0; i < pty_rules_agent_nrules(a); i++) {
		pty_rules_agent_rule(a, i, &ri);
		if (ri.region != PTY_RULES_BOTTOM)
			continue;	/* titles and notifications: no screen */
		snprintf(key, sizeof key, " %s:%s ", profile, ri.name);
		if (strstr(c->used, key) == NULL)
			corpus_fail(c, " rule %s:%s decides no recorded "
			    "screen;", profile, ri.name);
	}
	pty_rules_free(rs);
	free(dir);
}

START_TEST(test_detect_real_screens)
{
	char *dir = cu_src_path("tests/fixtures/agent-screens"), path[2048],
	    want[32];
	struct corpus *c = calloc(1, sizeof *c);
	struct dirent *pe, *fe;
	DIR *pd, *fd;

	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_nonnull(pd = opendir(dir));
	while ((pe = readdir(pd)) != NULL) {
		if (pe->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, pe->d_name);
		ck_assert_ptr_nonnull(fd = opendir(path));
		while ((fe = readdir(fd)) != NULL) {
			size_t l = strlen(fe->d_name);
			char file[4096];

			if (l < 8 || strcmp(fe->d_name + l - 7, ".screen") != 0)
				continue;
			snprintf(want, sizeof want, "%.*s", (int)strcspn(
			    fe->d_name, "-."), fe->d_name);
			snprintf(file, sizeof file, "%s/%s", path, fe->d_name);
			corpus_one(c, pe->d_name, file, want);
		}
		closedir(fd);
		corpus_coverage(c, pe->d_name);
	}
	closedir(pd);
	free(dir);
	ck_assert_int_ge(c->seen, 4);
	ck_assert_msg(c->fails[0] == '\0', "real screens:%s", c->fails);
	free(c);
}
END_TEST

Suite *
detect_suite(void)
{
	Suite *su = suite_create("detect");
	TCase *tc = tcase_create("Agnostic");
	TCase *ta = tcase_create("Agents");
	TCase *tb = tcase_create("Limits");
	TCase *tu = tcase_create("Core");

	/* _i == 0: shipped rule files; _i == 1: no rule file at all. */
	tcase_add_loop_test(tc, test_detect_shell_prompt, 0, 2);
	tcase_add_loop_test(tc, test_detect_read_p, 0, 2);
	tcase_add_loop_test(tc, test_detect_python_input, 0, 2);
	tcase_add_loop_test(tc, test_detect_daemon_beyond, 0, 2);
	tcase_add_loop_test(tc, test_detect_exit_done, 0, 2);
	tcase_add_loop_test(tc, test_detect_exit_failed, 0, 2);
	tcase_add_loop_test(tc, test_detect_cancel, 0, 2);
	tcase_add_loop_test(tc, test_detect_silent_compute, 0, 2);
	tcase_add_loop_test(tc, test_detect_spinner, 0, 2);
	tcase_add_loop_test(tc, test_detect_debounce_hold, 0, 2);
	tcase_add_loop_test(tc, test_detect_flicker, 0, 2);
	tcase_add_loop_test(tc, test_detect_typing_echo, 0, 2);
	tcase_add_loop_test(tc, test_detect_blind, 0, 2);
	tcase_add_loop_test(tc, test_detect_report_overridden, 0, 2);
	tcase_add_loop_test(tc, test_detect_report_rejected, 0, 2);
	tcase_add_loop_test(tc, test_detect_report_states, 0, 2);
	tcase_add_loop_test(tc, test_detect_osc133, 0, 2);
	tcase_add_loop_test(tc, test_detect_egress_progress, 0, 2);
	tcase_add_test(tc, test_detect_egress_over_tty_read);
	tcase_add_test(tc, test_detect_gateway_held);
	tcase_add_test(tc, test_detect_gateway_stop);
	tcase_add_loop_test(tc, test_detect_progress_expires, 0, 2);
	tcase_add_loop_test(tc, test_detect_notification, 0, 2);
	tcase_add_loop_test(tc, test_detect_claude_prose, 0, 2);
	tcase_add_loop_test(tc, test_detect_shell_question, 0, 2);
	tcase_add_loop_test(tc, test_detect_silent_start, 0, 2);
	tcase_add_loop_test(tc, test_detect_fg_command, 0, 2);
	tcase_add_loop_test(tc, test_detect_fg_command_late, 0, 2);
	tcase_add_loop_test(tc, test_detect_fg_listening, 0, 2);
	tcase_add_test(tc, test_detect_fg_prompt_lookalike);
	tcase_add_test(tc, test_detect_busy_under_prompt);
	tcase_add_test(tc, test_detect_facts_not_delivered);
	tcase_add_test(tc, test_detect_quick_answer);
	tcase_add_loop_test(tc, test_detect_quick_reject_report, 0, 2);
	suite_add_tcase(su, tc);

	tcase_add_test(ta, test_detect_claude_permission);
	tcase_add_test(ta, test_detect_claude_blocked_holds);
	tcase_add_test(ta, test_detect_claude_rejected);
	tcase_add_test(ta, test_detect_claude_notify);
	tcase_add_test(ta, test_detect_codex);
	tcase_add_test(ta, test_detect_set_agent_late);
	tcase_add_test(ta, test_detect_screen_glue);
	tcase_add_test(ta, test_detect_real_screens);
	suite_add_tcase(su, ta);

	tcase_add_loop_test(tb, test_detect_huge_line_title, 0, 2);
	tcase_add_loop_test(tb, test_detect_osc_flood, 0, 2);
	tcase_add_loop_test(tb, test_detect_binary_rows, 0, 2);
	suite_add_tcase(su, tb);

	tcase_add_test(tu, test_detect_names);
	tcase_add_test(tu, test_detect_report_seq);
	tcase_add_test(tu, test_detect_explain);
	tcase_add_test(tu, test_detect_explain_current);
	suite_add_tcase(su, tu);
	return su;
}
