/*
 * test_lifecycle.c: the lifecycle detection corpus (issue 4, SPEC 5.2-5.4)
 * through real holders: scripted fake agents (tests/fixtures/agents:
 * Claude Code, Codex, a full-screen agent, silent workers) and real
 * programs (bash -i, read -p, Python input(), exits) each run under a
 * forked pty_holder_run with the shipped rules; the operator's keys go
 * through the holder socket; the exact timeline of activity states is
 * asserted from the hooks.activity calls. Cases of a batch run side by
 * side. The agent-agnostic batch runs a second time with no rules at all.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include <jansson.h>

#include "pty/pty.h"
#include "sandbox-adapters/sbx.h"
#include "support/check_util.h"

Suite *lifecycle_suite(void);

#define LC_MAX_STEPS 6
#define LC_MAX_CASES 12
#define PY "/usr/bin/python3"

/*
 * One case: a command, the operator's script and the expected timelines.
 * argv words starting with "@" name a file of tests/fixtures/agents/.
 * A step is "TRIGGER>KEYS": TRIGGER is a state the timeline must reach
 * (after the previous step), or "~TEXT" (the screen's last line holds
 * TEXT); KEYS are typed through the holder.
 */
struct lc_case {
	const char *name;
	const char *argv[10];
	const char *steps[LC_MAX_STEPS];
	const char *steps_bare[LC_MAX_STEPS]; /* with no rules, if not */
	const char *expect;		/* with the shipped rules */
	const char *expect_bare;	/* with no rules (NULL: the same) */
};

struct lc_run {
	const struct lc_case *c;
	const char *const *steps;
	char *dir, *sock;
	pid_t holder;
	int fd;			/* activity lines from the holder */
	char buf[8192];
	size_t len;
	char tl[512];		/* "starting,working,..." */
	char log[4096];		/* every transition with its signal */
	int nstates;
	int step, fired_at;
	uint64_t next_poll;
	bool final, eof;
};

/* ------------------------------------------------------------------ */
/* A holder in a child process, its activity hook writing to a pipe     */

static void
on_activity(const char *state, const char *signal, const char *detail,
    void *ud)
{
	char line[512];
	int n, fd = *(int *)ud;

	n = snprintf(line, sizeof line, "%s\t%s\t%s\n", state, signal,
	    detail != NULL ? detail : "");
	if (n > (int)sizeof line - 1)
		n = (int)sizeof line - 1, line[n - 1] = '\n';
	if (write(fd, line, (size_t)n) < 0) {
		/* the test went away */
	}
}

static char *
arg_path(const char *a)
{
	char *rel, *p;

	if (a[0] != '@')
		return strdup(a);
	if (asprintf(&rel, "tests/fixtures/agents/%s", a + 1) < 0)
		abort();
	p = cu_src_path(rel);
	free(rel);
	return p;
}

static void
run_start(struct lc_run *r, const struct lc_case *c,
    const struct pty_rules *rules, bool bare)
{
	struct sbx_request req = { 0 };
	struct sbx_plan *plan = NULL;
	char *cmd[10], ready[256];
	int ap[2], rp[2], n = 0;
	ssize_t got;

	memset(r, 0, sizeof *r);
	r->c = c;
	r->steps = bare && c->steps_bare[0] != NULL ? c->steps_bare :
	    c->steps;
	r->fired_at = -1;
	snprintf(r->tl, sizeof r->tl, "starting");
	r->dir = cu_tmpdir("lifecycle");
	ck_assert_int_gt(asprintf(&r->sock, "%s/holder.sock", r->dir), 0);
	for (n = 0; c->argv[n] != NULL; n++)
		cmd[n] = arg_path(c->argv[n]);
	cmd[n] = NULL;
	req.cmd = cmd;
	req.cwd = r->dir;
	ck_assert_int_eq(sbx_adapter_local.plan(&req, &plan), 0);
	ck_assert_int_eq(pipe2(ap, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(rp, O_CLOEXEC), 0);
	r->holder = fork();
	ck_assert_int_ge(r->holder, 0);
	if (r->holder == 0) {
		struct pty_holder_opts o = { 0 };
		uv_loop_t loop;
		int fd = ap[1], rc;

		close(ap[0]);
		close(rp[0]);
		setenv("HISTFILE", "/dev/null", 1);
		o.id = "20261129-000000-000-0000";
		o.dir = r->dir;
		o.plan = plan;
		o.ctty = PTY_CTTY_TAKE;
		o.rows = 24;
		o.cols = 80;
		o.sb_lines = 1000;
		o.transcript_max = 1 << 20;
		o.allow_control = true;
		o.trusted_local = true;
		o.ready_fd = rp[1];
		o.owner_fd = -1;
		o.cancel_wait_ms = 300;
		o.rules = rules;
		o.hooks.activity = on_activity;
		o.hooks.ud = &fd;
		uv_loop_init(&loop);
		rc = pty_holder_run(&loop, &o);
		_exit(rc < 0 ? 100 : rc);
	}
	close(ap[1]);
	close(rp[1]);
	got = read(rp[0], ready, sizeof ready - 1);
	close(rp[0]);
	ready[got > 0 ? got : 0] = '\0';
	ck_assert_msg(strncmp(ready, "ok ", 3) == 0, "%s: holder: %s", c->name,
	    ready);
	r->fd = ap[0];
	ck_assert_int_eq(fcntl(r->fd, F_SETFL, O_NONBLOCK), 0);
	sbx_plan_free(plan);
	for (n = 0; cmd[n] != NULL; n++)
		free(cmd[n]);
}

static void
run_stop(struct lc_run *r)
{
	int st;

	if (r->holder > 0) {
		if (!r->final)
			kill(r->holder, SIGKILL);
		while (waitpid(r->holder, &st, 0) < 0 && errno == EINTR)
			;
	}
	if (r->fd > 0)
		close(r->fd);
	cu_rmrf(r->dir);
	free(r->dir);
	free(r->sock);
}

/* Unescape nothing: the C string already holds the bytes to type. */
static void
run_type(struct lc_run *r, const char *keys)
{
	struct pty_holder_client *cl = NULL;
	char *js;
	int err = 0;

	ck_assert_msg(pty_holder_client_open(&cl, r->sock, 0, 3000) == 0,
	    "%s: connect", r->c->name);
	ck_assert_int_eq(pty_holder_client_send(cl, PTY_W_INPUT, keys,
	    strlen(keys)), 0);
	/*
	 * A status round trip: the input was taken before we go on. A key
	 * that ends the agent may end the holder first: then it went away.
	 */
	js = pty_holder_client_status(cl, 3000, &err);
	ck_assert_msg(js != NULL || err == -ECONNRESET || err == -EPIPE ||
	    err == PTY_ECLOSED, "%s: status after input: %d", r->c->name,
	    err);
	free(js);
	pty_holder_client_free(cl);
}

/*
 * A step whose keys are ":NAME" creates the file NAME in the case's
 * directory (its working directory) instead of typing: a command that
 * waits for it runs until the test has seen what it expects, however
 * slow the machine (no command that merely lasts "long enough").
 */
static void
run_touch(struct lc_run *r, const char *name)
{
	char *p;
	int fd;

	ck_assert_int_gt(asprintf(&p, "%s/%s", r->dir, name), 0);
	fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	ck_assert_msg(fd >= 0, "%s: create %s: %s", r->c->name, p,
	    strerror(errno));
	close(fd);
	free(p);
}

/* The screen's last line (status "last_line") holds text? */
static bool
run_screen_has(struct lc_run *r, const char *text)
{
	struct pty_holder_client *cl = NULL;
	json_t *j;
	char *js;
	int err = 0;
	bool has = false;

	if (pty_holder_client_open(&cl, r->sock, 0, 3000) < 0)
		return false;
	js = pty_holder_client_status(cl, 3000, &err);
	pty_holder_client_free(cl);
	if (js != NULL && (j = json_loads(js, 0, NULL)) != NULL) {
		const char *l = json_string_value(json_object_get(j,
		    "last_line"));

		has = l != NULL && strstr(l, text) != NULL;
		json_decref(j);
	}
	free(js);
	return has;
}

/* Fire the next step if its trigger holds. */
static void
run_steps(struct lc_run *r, const char *state)
{
	const char *s, *gt;
	char trig[64];

	if (r->final || r->step >= LC_MAX_STEPS ||
	    (s = r->steps[r->step]) == NULL)
		return;
	gt = strchr(s, '>');
	ck_assert_ptr_nonnull(gt);
	snprintf(trig, sizeof trig, "%.*s", (int)(gt - s), s);
	if (trig[0] == '~') {
		uint64_t now = cu_now_ms();

		if (now < r->next_poll)
			return;
		r->next_poll = now + 100;
		if (!run_screen_has(r, trig + 1))
			return;
	} else if (state == NULL || strcmp(state, trig) != 0) {
		return;
	}
	if (gt[1] == ':')
		run_touch(r, gt + 2);
	else
		run_type(r, gt + 1);
	r->fired_at = r->nstates;
	r->step++;
}

static void
run_line(struct lc_run *r, char *line)
{
	char *sig = strchr(line, '\t'), *detail;
	size_t n;

	ck_assert_ptr_nonnull(sig);
	*sig++ = '\0';
	detail = strchr(sig, '\t');
	if (detail != NULL)
		*detail++ = '\0';
	n = strlen(r->tl);
	snprintf(r->tl + n, sizeof r->tl - n, ",%s", line);
	n = strlen(r->log);
	snprintf(r->log + n, sizeof r->log - n, "\n    %s (%s: %.60s)", line,
	    sig, detail != NULL ? detail : "");
	r->nstates++;
	if (strcmp(line, "done") == 0 || strcmp(line, "failed") == 0 ||
	    strcmp(line, "cancelled") == 0)
		r->final = true;
	run_steps(r, line);
}

static void
run_read(struct lc_run *r)
{
	ssize_t n;
	char *nl;

	while ((n = read(r->fd, r->buf + r->len, sizeof r->buf - 1 -
	    r->len)) > 0) {
		r->len += (size_t)n;
		r->buf[r->len] = '\0';
		while ((nl = strchr(r->buf, '\n')) != NULL) {
			*nl = '\0';
			run_line(r, r->buf);
			r->len -= (size_t)(nl + 1 - r->buf);
			memmove(r->buf, nl + 1, r->len + 1);
		}
	}
	if (n == 0)
		r->eof = true;
}

/*
 * Run the cases side by side until each ends (a final state) or the
 * deadline; then assert every timeline. bare: no rules at all.
 */
static void
run_batch(const struct lc_case *cases, int n, bool bare, int deadline_s)
{
	struct lc_run runs[LC_MAX_CASES];
	struct pollfd pfd[LC_MAX_CASES];
	struct pty_rules *rules = NULL;
	uint64_t end = cu_now_ms() + (uint64_t)deadline_s * 1000u;
	char fails[8192] = "";
	int i, open_runs;

	ck_assert_int_le(n, LC_MAX_CASES);
	if (!bare) {
		char *dir = cu_src_path("agents");
		const char *dirs[] = { dir };

		ck_assert_int_eq(pty_rules_new(&rules), 0);
		ck_assert_int_eq(pty_rules_load_dirs(rules, dirs, 1, NULL,
		    NULL), 0);
		free(dir);
	}
	for (i = 0; i < n; i++)
		run_start(&runs[i], &cases[i], rules, bare);
	for (;;) {
		open_runs = 0;
		for (i = 0; i < n; i++) {
			pfd[i].fd = runs[i].final || runs[i].eof ? -1 :
			    runs[i].fd;
			pfd[i].events = POLLIN;
			open_runs += pfd[i].fd >= 0;
		}
		if (open_runs == 0 || cu_now_ms() >= end)
			break;
		if (poll(pfd, (nfds_t)n, 50) < 0 && errno != EINTR)
			break;
		for (i = 0; i < n; i++) {
			if (pfd[i].fd >= 0 && (pfd[i].revents & (POLLIN |
			    POLLHUP)))
				run_read(&runs[i]);
			run_steps(&runs[i], NULL);	/* screen triggers */
		}
	}
	for (i = 0; i < n; i++) {
		const struct lc_case *c = &cases[i];
		const char *want = bare && c->expect_bare ? c->expect_bare :
		    c->expect;
		size_t k = strlen(fails);

		if (strcmp(runs[i].tl, want) != 0)
			snprintf(fails + k, sizeof fails - k,
			    "\n%s%s: got %s, want %s (step %d)%s", c->name,
			    bare ? " (no rules)" : "", runs[i].tl, want,
			    runs[i].step, runs[i].log);
	}
	for (i = 0; i < n; i++)
		run_stop(&runs[i]);
	pty_rules_free(rules);
	ck_assert_msg(fails[0] == '\0', "timelines:%s", fails);
}

/* ------------------------------------------------------------------ */
/* Known agents with their rule files                                   */

static const struct lc_case agent_cases[] = {
	{
		.name = "claude: permission granted",
		.argv = { PY, "@claude", "--scenario", "turn" },
		.steps = { "prompt>fix the failing test\r", "blocked>1",
			   "prompt>/exit\r" },
		.expect = "starting,working,prompt,working,blocked,working,"
			  "prompt,done",
	},
	{
		/* A hook reported blocked; after the no, nothing fires. */
		.name = "claude: permission rejected (Esc), hooks on",
		.argv = { PY, "@claude", "--scenario", "reject", "--hooks" },
		.steps = { "prompt>fix the failing test\r", "blocked>\033",
			   "prompt>/exit\r" },
		.expect = "starting,working,prompt,working,blocked,prompt,done",
	},
	{
		.name = "claude: prose quoting a dialog while working",
		.argv = { PY, "@claude", "--scenario", "prose" },
		.steps = { "prompt>refactor the helpers\r", "prompt>/exit\r" },
		.expect = "starting,working,prompt,working,prompt,done",
	},
	{
		.name = "codex: approval granted",
		.argv = { PY, "@codex" },
		.steps = { "prompt>add a test\r", "blocked>y",
			   "prompt>/quit\r" },
		.expect = "starting,working,prompt,working,blocked,working,"
			  "prompt,done",
	},
	{
		/* The operator moves the selection (still blocked), then no. */
		.name = "codex: approval rejected with arrows + Enter",
		.argv = { PY, "@codex" },
		.steps = { "prompt>add a test\r", "blocked>\033[B\033[B\r",
			   "prompt>/quit\r" },
		.expect = "starting,working,prompt,working,blocked,prompt,done",
	},
};

START_TEST(test_lifecycle_agents)
{
	run_batch(agent_cases, (int)(sizeof agent_cases /
	    sizeof agent_cases[0]), false, 40);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Agent-agnostic cases: _i == 0 with the rules, 1 with none at all     */

static const struct lc_case agnostic_cases[] = {
	{
		/*
		 * A command typed at the prompt: working while it runs. It
		 * runs until the test saw working (the file "go"): a fixed
		 * `sleep 2` ended before a loaded machine's first sample of
		 * the foreground (after 250 ms quiet), and bash was back in
		 * its read: no working at all.
		 */
		.name = "bash -i: a command in the foreground",
		.argv = { "/bin/bash", "--norc", "--noprofile", "-i" },
		.steps = { "prompt>until [ -e go ]; do sleep 0.1; done\r",
			   "working>:go", "prompt>exit\r" },
		.expect = "starting,working,prompt,working,prompt,done",
	},
	{
		.name = "read -p in a script",
		.argv = { "/bin/bash", "--norc", "-c",
			  "read -p 'Name for the project? ' n; "
			  "read -p \"Overwrite $n? (y/n) \" a; "
			  "[ \"$a\" = y ]" },
		/* blocked with no rules too: a y/n question (pty/dialog.c) */
		.steps = { "prompt>my-app\r", "blocked>y\r" },
		.expect = "starting,working,prompt,blocked,done",
	},
	{
		.name = "Python input()",
		.argv = { PY, "@ask.py" },
		/* blocked with no rules too: a y/n question (pty/dialog.c) */
		.steps = { "prompt>my-app\r", "blocked>y\r" },
		.expect = "starting,working,prompt,blocked,done",
	},
	{
		.name = "a full-screen agent (alternate screen)",
		.argv = { PY, "@fullscreen.py" },
		.steps = { "prompt>r", "prompt>q" },
		.expect = "starting,working,prompt,working,prompt,done",
	},
	{
		/* Shows nothing at all: only the tty-read fact tells. */
		.name = "cat: a silent start at a terminal read",
		.argv = { "/bin/cat" },
		.steps = { "prompt>\004" },
		.expect = "starting,prompt,done",
	},
	{
		.name = "silent compute (CPU busy, no output)",
		.argv = { PY, "@silent.py", "compute", "3" },
		.expect = "starting,working,done",
	},
	{
		/* No CPU, no output, not reading its terminal: working. */
		.name = "silent wait (asleep, not on the terminal)",
		.argv = { PY, "@silent.py", "wait", "3" },
		.expect = "starting,working,done",
	},
	{
		.name = "exit 0",
		.argv = { "/bin/sh", "-c", "echo building; sleep 0.5; "
			  "echo built" },
		.expect = "starting,working,done",
	},
	{
		.name = "exit 3",
		.argv = { "/bin/sh", "-c", "echo failing; sleep 0.5; exit 3" },
		.expect = "starting,working,failed",
	},
	{
		.name = "killed by a signal",
		.argv = { "/bin/sh", "-c", "echo dying; sleep 0.5; "
			  "kill -KILL $$" },
		.expect = "starting,working,failed",
	},
};

START_TEST(test_lifecycle_agnostic)
{
	run_batch(agnostic_cases, (int)(sizeof agnostic_cases /
	    sizeof agnostic_cases[0]), _i == 1, 40);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Recorded transcripts (asciicast v2), replayed through screen+detector */

/*
 * Each tests/fixtures/transcripts/NAME.cast is an asciinema v2 recording
 * (record.py made these from the fake agents; a real session recorded with
 * `asciinema rec --stdin` works the same once given a "corral" header
 * object): output ("o") goes through a real screen model into the detector
 * at its recorded time, input ("i") is the operator's, the exit ends it.
 * Time is virtual, so a replay is exact and takes no wall time. No process
 * facts exist in a recording: rules, marks and quiet decide.
 */
struct replay {
	struct pty_detect *d;
	struct pty_screen *sc;
	uint64_t now, next;
	char tl[512];
	char log[4096];
	char rowbuf[64][PTY_DETECT_ROW_MAX];
};

static void
replay_screen_event(enum pty_screen_event_kind k, const char *text,
    size_t len, void *ud)
{
	struct replay *p = ud;
	struct pty_detect_event ev = { .now_ms = p->now };

	if (k == PTY_SEV_BELL) {
		ev.kind = PTY_DETECT_EV_BELL;
	} else if (k == PTY_SEV_OSC) {
		ev.kind = PTY_DETECT_EV_OSC;
		ev.text = text;
		ev.len = len;
	} else {
		return;	/* the title comes in with the rows */
	}
	pty_detect_feed_event(p->d, &ev);
}

static void
replay_step(struct replay *p)
{
	struct pty_detect_result r;
	size_t n;

	pty_detect_step(p->d, p->now, &r);
	if (r.changed) {
		n = strlen(p->tl);
		snprintf(p->tl + n, sizeof p->tl - n, ",%s",
		    pty_detect_state_name(r.state));
		n = strlen(p->log);
		snprintf(p->log + n, sizeof p->log - n,
		    "\n    %.3f s %s (%s: %.50s)", (double)(p->now - 1000000u) /
		    1000.0, pty_detect_state_name(r.state), r.signal, r.detail);
	}
	ck_assert(r.next_ms == PTY_DETECT_NEVER || r.next_ms > p->now);
	p->next = r.next_ms;
}

/* Let time pass to t, stepping at every wakeup the detector asked for. */
static void
replay_until(struct replay *p, uint64_t t)
{
	while (p->next != PTY_DETECT_NEVER && p->next <= t) {
		p->now = p->next;
		replay_step(p);
	}
	if (t > p->now)
		p->now = t;
}

static void
replay_rows(struct replay *p)
{
	const char *rows[64];
	int nr, nc, r;

	pty_screen_size(p->sc, &nr, &nc);
	ck_assert_int_le(nr, 64);
	for (r = 0; r < nr; r++) {
		pty_screen_row_text(p->sc, r, p->rowbuf[r], PTY_DETECT_ROW_MAX);
		rows[r] = p->rowbuf[r];
	}
	pty_detect_set_screen(p->d, rows, nr, pty_screen_title(p->sc),
	    p->now);
}

/* Replay one file; returns NULL when its timeline is the expected one. */
static char *
replay_file(const char *path, const struct pty_rules *rules)
{
	const uint64_t t0 = 1000000u;
	struct replay *p = calloc(1, sizeof *p);
	json_t *head, *corral, *ex;
	const char *want, *agent;
	char *text = cu_read_file(path, NULL), *line, *save = NULL;
	char *fail = NULL;
	struct pty_detect_event ev = { 0 };
	double at;

	ck_assert_ptr_nonnull(p);
	ck_assert_msg(text != NULL, "%s: unreadable", path);
	line = strtok_r(text, "\n", &save);
	ck_assert_ptr_nonnull(line);
	head = json_loads(line, 0, NULL);
	ck_assert_msg(head != NULL, "%s: bad header", path);
	ck_assert_int_eq(json_integer_value(json_object_get(head, "version")),
	    2);
	corral = json_object_get(head, "corral");
	want = json_string_value(json_object_get(corral, "expect"));
	ck_assert_msg(want != NULL, "%s: no corral.expect", path);
	ck_assert_int_eq(pty_screen_new(&p->sc,
	    (int)json_integer_value(json_object_get(head, "height")),
	    (int)json_integer_value(json_object_get(head, "width")), 1000), 0);
	ck_assert_int_eq(pty_detect_new(&p->d, NULL, t0), 0);
	pty_screen_set_event(p->sc, replay_screen_event, p);
	agent = json_string_value(json_object_get(corral, "agent"));
	if (agent != NULL) {
		const struct pty_rules_agent *a = pty_rules_find(rules, agent);

		ck_assert_msg(a != NULL, "%s: no rules for %s", path, agent);
		pty_detect_set_agent(p->d, a);
	}
	snprintf(p->tl, sizeof p->tl, "starting");
	p->now = t0;
	replay_step(p);
	while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
		json_t *e = json_loads(line, 0, NULL);
		const char *kind, *data;
		size_t len;

		ck_assert_msg(json_is_array(e) && json_array_size(e) == 3,
		    "%s: bad event %.60s", path, line);
		at = json_number_value(json_array_get(e, 0));
		kind = json_string_value(json_array_get(e, 1));
		data = json_string_value(json_array_get(e, 2));
		len = json_string_length(json_array_get(e, 2));
		ck_assert_ptr_nonnull(kind);
		ck_assert_ptr_nonnull(data);
		replay_until(p, t0 + (uint64_t)(at * 1000.0 + 0.5));
		memset(&ev, 0, sizeof ev);
		ev.now_ms = p->now;
		ev.bytes = len;
		if (strcmp(kind, "o") == 0) {
			ev.kind = PTY_DETECT_EV_OUTPUT;
			pty_detect_feed_event(p->d, &ev);
			pty_screen_feed(p->sc, data, len);
			replay_rows(p);
			replay_step(p);
		} else if (strcmp(kind, "i") == 0) {
			ev.kind = PTY_DETECT_EV_INPUT;
			pty_detect_feed_event(p->d, &ev);
			replay_step(p);
		}
		json_decref(e);
	}
	ex = json_object_get(corral, "exit");
	if (json_is_object(ex)) {
		at = json_number_value(json_object_get(ex, "at"));
		replay_until(p, t0 + (uint64_t)(at * 1000.0 + 0.5));
		memset(&ev, 0, sizeof ev);
		ev.kind = PTY_DETECT_EV_EXIT;
		ev.now_ms = p->now;
		ev.status = (int)json_integer_value(json_object_get(ex,
		    "status"));
		ev.signo = (int)json_integer_value(json_object_get(ex,
		    "signal"));
		pty_detect_feed_event(p->d, &ev);
		replay_step(p);
	} else {
		replay_until(p, p->now + 10000);
	}
	if (strcmp(p->tl, want) != 0 && asprintf(&fail, "%s: got %s, want %s%s",
	    path, p->tl, want, p->log) < 0)
		abort();
	json_decref(head);
	pty_detect_free(p->d);
	pty_screen_free(p->sc);
	free(p);
	free(text);
	return fail;
}

static int
cast_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

START_TEST(test_lifecycle_transcripts)
{
	char *dir = cu_src_path("tests/fixtures/transcripts");
	char *adir = cu_src_path("agents"), *names[64], fails[16384] = "";
	const char *dirs[] = { adir };
	struct pty_rules *rules = NULL;
	struct dirent *e;
	DIR *d;
	int n = 0, i;

	ck_assert_int_eq(pty_rules_new(&rules), 0);
	ck_assert_int_eq(pty_rules_load_dirs(rules, dirs, 1, NULL, NULL), 0);
	ck_assert_ptr_nonnull(d = opendir(dir));
	while ((e = readdir(d)) != NULL && n < 64) {
		size_t l = strlen(e->d_name);

		if (l > 5 && strcmp(e->d_name + l - 5, ".cast") == 0)
			ck_assert_int_gt(asprintf(&names[n++], "%s/%s", dir,
			    e->d_name), 0);
	}
	closedir(d);
	ck_assert_int_ge(n, 5);
	qsort(names, (size_t)n, sizeof names[0], cast_cmp);
	for (i = 0; i < n; i++) {
		char *f = replay_file(names[i], rules);

		if (f != NULL) {
			size_t k = strlen(fails);

			snprintf(fails + k, sizeof fails - k, "\n%s", f);
			free(f);
		}
		free(names[i]);
	}
	pty_rules_free(rules);
	free(dir);
	free(adir);
	ck_assert_msg(fails[0] == '\0', "transcripts:%s", fails);
}
END_TEST

Suite *
lifecycle_suite(void)
{
	Suite *s = suite_create("lifecycle");
	TCase *tc = tcase_create("Integration");
	TCase *tt = tcase_create("Transcripts");

	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, test_lifecycle_agents);
	tcase_add_loop_test(tc, test_lifecycle_agnostic, 0, 2);
	suite_add_tcase(s, tc);
	tcase_add_test(tt, test_lifecycle_transcripts);
	suite_add_tcase(s, tt);
	return s;
}
