/*
 * notify.c: the operator's notification hook (SPEC 5.6), run by a lease's
 * holder when its activity enters blocked, done or failed (config.c), so
 * it works with no console open, overnight. The hook is detached (its own
 * session), gets the lease ID, state and name as arguments and the rest
 * escaped in its environment, writes to the lease's holder.log, and is
 * killed with its process group after a timeout. An agent decides when
 * its activity changes, so the runs are bounded: one per change of state
 * (a repeat of the state is no change), at most one at a time per lease,
 * and at least the configured interval apart. A change inside the
 * interval, or while a hook runs, waits as the one pending run (the
 * latest state wins; a change to a state that does not notify cancels
 * it) and runs when the interval has passed; the one pending when the
 * holder ends still runs then. A blocked lease's question goes with its
 * run as JSON in CORRAL_QUESTION (SPEC 5.4).
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "tui/runtime/runtime.h"

#define NOTIFY_ENV_MAX 512

struct hook_run {
	uv_process_t proc;
	uv_timer_t timer;
	struct tui_notify *n;
	struct hook_run *next;
	pid_t pid;
	uint64_t deadline_ms;
	char state[16];
	int open;		/* handles not yet closed */
	bool exited;
};

/* The run a change asked for, waiting for the interval or a hook. */
struct pending {
	bool set;
	char id[64], name[128], state[16], signal[256], detail[512];
	char *question;		/* JSON, or NULL */
};

struct tui_notify {
	uv_loop_t *loop;
	struct tui_config cf;
	int log_fd;
	struct hook_run *runs;
	int running;
	bool freeing;		/* tui_notify_free owns the runs now */
	char cur[16];		/* the last state reported: a change is news */
	uint64_t last_ms;	/* when the last hook started; 0: never */
	struct pending p;
	unsigned deferred;	/* changes folded into a later run */
	uv_timer_t wait;	/* until the interval has passed */
	char *question;		/* for the next change (tui_notify_question) */
	bool wait_init;
};

static int try_run(struct tui_notify *);

static void
logf_(struct tui_notify *n, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
logf_(struct tui_notify *n, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int len;

	if (n->log_fd < 0)
		return;
	len = snprintf(buf, sizeof buf, "corral notify: ");
	va_start(ap, fmt);
	len += vsnprintf(buf + len, sizeof buf - (size_t)len, fmt, ap);
	va_end(ap);
	if (len >= (int)sizeof buf)
		len = (int)sizeof buf - 1;
	buf[len++] = '\n';
	if (write(n->log_fd, buf, (size_t)len) < 0) {
		/* nowhere else to say it */
	}
}

int
tui_notify_new(struct tui_notify **out, uv_loop_t *loop,
    const struct tui_config *cf, int log_fd)
{
	struct tui_notify *n;

	if (out == NULL || loop == NULL || cf == NULL)
		return -EINVAL;
	if ((n = calloc(1, sizeof *n)) == NULL)
		return -ENOMEM;
	n->loop = loop;
	n->cf = *cf;
	n->log_fd = log_fd;
	if (uv_timer_init(loop, &n->wait) == 0) {
		n->wait.data = n;
		n->wait_init = true;
	}
	*out = n;
	return 0;
}

static void
unlink_run(struct hook_run *r)
{
	struct hook_run **pp;

	for (pp = &r->n->runs; *pp != NULL; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			break;
		}
}

static void
run_closed(uv_handle_t *h)
{
	struct hook_run *r = h->data;

	if (--r->open > 0 || r->n->freeing)
		return;
	unlink_run(r);
	free(r);
}

static void
run_close(struct hook_run *r)
{
	if (!uv_is_closing((uv_handle_t *)&r->timer))
		uv_close((uv_handle_t *)&r->timer, run_closed);
	if (!uv_is_closing((uv_handle_t *)&r->proc))
		uv_close((uv_handle_t *)&r->proc, run_closed);
}

static void
hook_exit(uv_process_t *p, int64_t status, int sig)
{
	struct hook_run *r = p->data;

	r->exited = true;
	r->n->running--;
	if (sig != 0)
		logf_(r->n, "hook for %s (pid %d) killed by signal %d",
		    r->state, (int)r->pid, sig);
	else if (status != 0)
		logf_(r->n, "hook for %s (pid %d) exited %lld", r->state,
		    (int)r->pid, (long long)status);
	uv_timer_stop(&r->timer);
	run_close(r);
	if (!r->n->freeing)
		TUI_BEST_EFFORT(try_run(r->n));
}

static void
on_timeout(uv_timer_t *t)
{
	struct hook_run *r = t->data;

	if (r->exited)
		return;
	logf_(r->n, "hook for %s (pid %d) still running after %u s: killed",
	    r->state, (int)r->pid, r->n->cf.hook_timeout_ms / 1000u);
	kill(-r->pid, SIGKILL);	/* detached: its own process group */
}

/* "NAME=value" into env, value escaped (SPEC 4.7) and bounded. */
static char *
env_var(const char *name, const char *value, bool escape)
{
	char esc[NOTIFY_ENV_MAX], *s;

	if (value == NULL)
		value = "";
	if (escape)
		tui_escape(value, strlen(value), esc, sizeof esc);
	else
		snprintf(esc, sizeof esc, "%s", value);
	if (asprintf(&s, "%s=%s", name, esc) < 0)
		return NULL;
	return s;
}

static bool
ours(const char *var)
{
	static const char *const names[] = { "CORRAL_LEASE_ID=",
		"CORRAL_LEASE_NAME=", "CORRAL_STATE=", "CORRAL_SIGNAL=",
		"CORRAL_DETAIL=", "CORRAL_QUESTION=" };

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strncmp(var, names[i], strlen(names[i])) == 0)
			return true;
	return false;
}

static int
spawn_hook(struct tui_notify *n, const char *id, const char *name,
    const char *state, const char *signal, const char *detail,
    const char *question)
{
	uv_process_options_t po;
	uv_stdio_container_t stdio[3];
	struct hook_run *r = NULL;
	char *cmdline = NULL, **env = NULL, *args[8];
	size_t ne = 0, i;
	int rc;

	for (i = 0; environ[i] != NULL; i++)
		;
	rc = -ENOMEM;
	if ((env = calloc(i + 7, sizeof *env)) == NULL ||
	    (r = calloc(1, sizeof *r)) == NULL ||
	    asprintf(&cmdline, "%s \"$@\"", n->cf.hook) < 0) {
		cmdline = NULL;
		goto out;
	}
	for (i = 0; environ[i] != NULL; i++)
		if (!ours(environ[i]))
			env[ne++] = environ[i];
	{
		size_t first = ne;

		if ((env[ne++] = env_var("CORRAL_LEASE_ID", id, false)) ==
		    NULL || (env[ne++] = env_var("CORRAL_LEASE_NAME", name,
		    true)) == NULL || (env[ne++] = env_var("CORRAL_STATE",
		    state, false)) == NULL || (env[ne++] = env_var(
		    "CORRAL_SIGNAL", signal, true)) == NULL ||
		    (env[ne++] = env_var("CORRAL_DETAIL", detail, true)) ==
		    NULL || (question != NULL && asprintf(&env[ne++],
		    "CORRAL_QUESTION=%s", question) < 0)) {
			ne--;
			for (i = first; i < ne; i++)
				free(env[i]);
			ne = first;
			goto out;
		}
		env[ne] = NULL;
		/* The hook's own words first, then ours as "$@". */
		args[0] = "/bin/sh";
		args[1] = "-c";
		args[2] = cmdline;
		args[3] = "corral-notify";
		args[4] = (char *)id;
		args[5] = (char *)state;
		args[6] = (char *)(name != NULL ? name : "");
		args[7] = NULL;
		memset(&po, 0, sizeof po);
		memset(stdio, 0, sizeof stdio);
		stdio[0].flags = UV_IGNORE;
		for (i = 1; i < 3; i++) {
			stdio[i].flags = n->log_fd >= 0 ? UV_INHERIT_FD :
			    UV_IGNORE;
			stdio[i].data.fd = n->log_fd;
		}
		po.file = args[0];
		po.args = args;
		po.env = env;
		po.flags = UV_PROCESS_DETACHED;
		po.stdio_count = 3;
		po.stdio = stdio;
		po.exit_cb = hook_exit;
		r->n = n;
		r->proc.data = r->timer.data = r;
		snprintf(r->state, sizeof r->state, "%s", state);
		uv_timer_init(n->loop, &r->timer);
		r->open = 2;
		r->next = n->runs;
		n->runs = r;
		rc = uv_spawn(n->loop, &r->proc, &po);
		for (i = first; i < ne; i++)
			free(env[i]);
		ne = first;
		if (rc < 0) {
			logf_(n, "hook for %s: %s", state, uv_strerror(rc));
			r->exited = true;
			run_close(r);	/* the handle was initialised */
			r = NULL;
			goto out;
		}
	}
	r->pid = r->proc.pid;
	n->last_ms = lease_mono_ms();
	r->deadline_ms = n->last_ms + n->cf.hook_timeout_ms;
	n->running++;
	uv_timer_start(&r->timer, on_timeout, n->cf.hook_timeout_ms, 0);
	logf_(n, "hook for %s started (pid %d)", state, (int)r->pid);
	r = NULL;
	rc = 1;
out:
	free(r);
	free(env);
	free(cmdline);
	return rc;
}

static void
on_wait(uv_timer_t *t)
{
	TUI_BEST_EFFORT(try_run(t->data));
}

/*
 * The pending run, if no hook runs and the interval has passed (else the
 * timer or the running hook's exit calls again). Returns 1 when started.
 */
static int
try_run(struct tui_notify *n)
{
	struct pending *p = &n->p;
	uint64_t now = lease_mono_ms(), next;
	int rc;

	if (!p->set || n->running > 0)
		return 0;
	next = n->last_ms != 0 ? n->last_ms + n->cf.hook_interval_ms : 0;
	if (now < next && !n->freeing) {
		if (n->wait_init)
			uv_timer_start(&n->wait, on_wait, next - now, 0);
		return 0;
	}
	p->set = false;
	if (n->deferred > 0)
		logf_(n, "hook for %s: %u earlier change(s) folded into this "
		    "run", p->state, n->deferred);
	n->deferred = 0;
	rc = spawn_hook(n, p->id, p->name, p->state, p->signal, p->detail,
	    p->question);
	if (rc < 0)	/* a failed start counts: the agent may cause those */
		n->last_ms = now;
	return rc;
}

int
tui_notify_fire(struct tui_notify *n, const char *id, const char *name,
    const char *state, const char *signal, const char *detail)
{
	struct pending *p;

	if (n == NULL || id == NULL || state == NULL)
		return -EINVAL;
	if (strcmp(n->cur, state) == 0)
		return 0;	/* no change */
	snprintf(n->cur, sizeof n->cur, "%s", state);
	p = &n->p;
	if (n->cf.hook[0] == '\0' || !tui_config_notifies(&n->cf, state)) {
		p->set = false;	/* what it said is no longer so */
		return 0;
	}
	if (p->set)
		n->deferred++;
	p->set = true;
	snprintf(p->id, sizeof p->id, "%s", id);
	snprintf(p->name, sizeof p->name, "%s", name != NULL ? name : "");
	snprintf(p->state, sizeof p->state, "%s", state);
	snprintf(p->signal, sizeof p->signal, "%s", signal != NULL ?
	    signal : "");
	snprintf(p->detail, sizeof p->detail, "%s", detail != NULL ?
	    detail : "");
	free(p->question);
	p->question = n->question;
	n->question = NULL;
	return try_run(n);
}

void
tui_notify_question(struct tui_notify *n, const char *json)
{
	if (n == NULL)
		return;
	free(n->question);
	n->question = json != NULL ? strdup(json) : NULL;
}

/* Close and reap every run (each up to its deadline, then killed). */
static void
reap_all(struct tui_notify *n)
{
	struct hook_run *r, *next;

	for (r = n->runs; r != NULL; r = r->next)
		run_close(r);
	uv_run(n->loop, UV_RUN_NOWAIT);
	for (r = n->runs; r != NULL; r = next) {
		int st;

		next = r->next;
		while (!r->exited && r->pid > 0) {
			pid_t w = waitpid(r->pid, &st, WNOHANG);

			if (w == r->pid || (w < 0 && errno != EINTR)) {
				r->exited = true;
				break;
			}
			if (lease_mono_ms() >= r->deadline_ms) {
				logf_(n, "hook for %s (pid %d) still running "
				    "at exit: killed", r->state, (int)r->pid);
				kill(-r->pid, SIGKILL);
				while (waitpid(r->pid, &st, 0) < 0 &&
				    errno == EINTR)
					;
				r->exited = true;
				break;
			}
			{
				struct timespec ts = { 0, 20 * 1000000L };

				nanosleep(&ts, NULL);
			}
		}
		free(r);
	}
	n->runs = NULL;
	n->running = 0;
}

void
tui_notify_free(struct tui_notify *n)
{
	if (n == NULL)
		return;
	/*
	 * The loop has ended. Close what is still open and deliver the close
	 * callbacks (handles the holder's shutdown closed need none); then
	 * reap each hook still running by its deadline, killing it there.
	 * The agent has ended: the pending run goes now, after the others.
	 */
	n->freeing = true;
	if (n->wait_init && !uv_is_closing((uv_handle_t *)&n->wait))
		uv_close((uv_handle_t *)&n->wait, NULL);
	reap_all(n);
	if (try_run(n) == 1)
		reap_all(n);
	free(n->question);
	free(n->p.question);
	free(n);
}
