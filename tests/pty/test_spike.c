/*
 * test_spike.c: the sandbox spike (issue 2, SPEC 8.3): the fake agent runs
 * through a real holder under the real bwrap plan (sbx_adapter_bwrap), with
 * corral-sbx-init inside making the lease PTY its controlling terminal.
 * Output, input, resize, the foreground facts, cancel of every process (a
 * double-forked daemon included) and reattach all work; every isolation
 * fact is read from the host side (/proc), never taken from the sandbox.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "pty/pty.h"
#include "sandbox-adapters/sbx.h"
#include "support/check_util.h"

Suite *spike_suite(void);

#define AGENT_IN "/opt/corral-test/fake_agent"
#define CANARY_NAME "CORRAL_SPIKE_CANARY_TOKEN"
#define CANARY_VALUE "canary-7f3a9e"

struct spk {
	char *dir;	/* lease directory (0700, root): holder.sock */
	char *ws;	/* workspace, owned by the lease uid */
	char *stage;	/* 0755: the agent and the helper, bound read-only */
	char *sock;
	char *uiddir;
	char id[64];
	unsigned slot;
	uid_t uid;
	gid_t gid;
	pid_t pid;	/* the holder */
	pid_t child;	/* the holder's child: the outer bwrap */
	char ready[256];
};

static void
copy_exe(const char *from, const char *to)
{
	size_t len = 0;
	char *buf = cu_read_file(from, &len);

	ck_assert_msg(buf != NULL, "cannot read %s", from);
	ck_assert_int_eq(cu_write_file(to, buf, len), 0);
	ck_assert_int_eq(chmod(to, 0755), 0);
	free(buf);
}

/*
 * Slots of earlier runs that died before releasing them ("spike-PID" with
 * PID gone) go back to the pool; a live run's slot is never touched.
 */
static void
sweep_stale_slots(const char *dir)
{
	char path[4096], *owner;
	long pid;

	for (unsigned n = 0; n < 64; n++) {
		snprintf(path, sizeof path, "%s/slot-%u/owner", dir, n);
		if ((owner = cu_read_file(path, NULL)) == NULL)
			continue;
		snprintf(path, sizeof path, "/proc/%ld", strtol(owner + 6,
		    NULL, 10));
		if (strncmp(owner, "spike-", 6) == 0 &&
		    (pid = strtol(owner + 6, NULL, 10)) > 0 &&
		    kill((pid_t)pid, 0) < 0 && errno == ESRCH &&
		    sbx_uid_release(dir, n, path, owner) < 0) {
			/* another run swept it first */
		}
		free(owner);
	}
}

static char *
init_path(void)
{
	const char *e = getenv("CORRAL_SBX_INIT");

	ck_assert_msg(e != NULL && *e != '\0',
	    "CORRAL_SBX_INIT is not set (run through ctest)");
	return strdup(e);
}

/*
 * Start a holder (forked, as corral __holder would be) running cmd inside
 * the agent zone on a rows x cols PTY, with the helper and fake_agent
 * bound read-only.
 */
static void
spk_start(struct spk *t, char *const *cmd, int rows, int cols)
{
	struct sbx_request req;
	struct sbx_mount mnt;
	struct sbx_plan *plan = NULL;
	char why[256], *agent, *init, *agent_st, *init_st;
	int rp[2];
	ssize_t n;

	memset(t, 0, sizeof *t);
	/* bwrap 0.8 and user namespaces are required: fail, never skip. */
	ck_assert_msg(sbx_adapter_bwrap.probe(why, sizeof why) == 0,
	    "bwrap probe: %s", why);
	ck_assert_int_gt(asprintf(&t->uiddir, "%s", SBX_UID_DIR), 0);
	snprintf(t->id, sizeof t->id, "spike-%d", (int)getpid());
	sweep_stale_slots(t->uiddir);
	ck_assert_int_eq(sbx_uid_claim(t->uiddir, cu_scope(), t->id,
	    &t->slot), 0);
	ck_assert_int_eq(sbx_uid_of_slot(t->slot, &t->uid, &t->gid), 0);

	t->dir = cu_tmpdir("spike-lease");
	ck_assert_int_gt(asprintf(&t->sock, "%s/holder.sock", t->dir), 0);
	/* The workspace belongs to the lease uid, so the agent can write. */
	t->ws = cu_tmpdir("spike-work");
	ck_assert_int_eq(chown(t->ws, t->uid, t->gid), 0);
	ck_assert_int_eq(chmod(t->ws, 0700), 0);
	/* bwrap resolves bind sources as the lease uid: a 0755 stage. */
	t->stage = cu_tmpdir("spike-bin");
	ck_assert_int_eq(chmod(t->stage, 0755), 0);
	agent = cu_fixture_path("fake_agent");
	init = init_path();
	ck_assert_int_gt(asprintf(&agent_st, "%s/fake_agent", t->stage), 0);
	ck_assert_int_gt(asprintf(&init_st, "%s/corral-sbx-init", t->stage),
	    0);
	copy_exe(agent, agent_st);
	copy_exe(init, init_st);

	memset(&req, 0, sizeof req);
	mnt.src = agent_st;
	mnt.dst = AGENT_IN;
	req.id = t->id;
	req.lease_dir = t->dir;
	req.workspace = t->ws;
	req.cmd = cmd;
	req.init_path = init_st;
	req.uid = t->uid;
	req.gid = t->gid;
	req.ro_binds = &mnt;
	req.nro_binds = 1;
	ck_assert_int_eq(sbx_adapter_bwrap.plan(&req, &plan), 0);
	ck_assert_int_eq(sbx_plan_open_data(plan), 0);
	/* A secret-shaped variable in the supervisor's own environment. */
	ck_assert_int_eq(setenv(CANARY_NAME, CANARY_VALUE, 1), 0);

	ck_assert_int_eq(pipe2(rp, O_CLOEXEC), 0);
	t->pid = fork();
	ck_assert_int_ge(t->pid, 0);
	if (t->pid == 0) {
		struct pty_holder_opts o;
		uv_loop_t loop;
		int rc;

		/* If the test dies, the holder cancels its lease. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		close(rp[0]);
		memset(&o, 0, sizeof o);
		o.id = t->id;
		o.dir = t->dir;
		o.plan = plan;
		o.ctty = PTY_CTTY_NONE;	/* the helper inside takes it */
		o.rows = rows;
		o.cols = cols;
		o.sb_lines = 1000;
		o.transcript_max = 1 << 20;
		o.allow_control = true;
		o.trusted_local = false;
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
	free(agent);
	free(init);
	free(agent_st);
	free(init_st);
	ck_assert_msg(strncmp(t->ready, "ok ", 3) == 0, "holder: %s",
	    t->ready);
	t->child = (pid_t)atoi(t->ready + 3);
	ck_assert_int_gt(t->child, 1);
}

static int
spk_wait(struct spk *t)
{
	int st;

	while (waitpid(t->pid, &st, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	t->pid = 0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void
spk_stop(struct spk *t)
{
	if (t->pid > 0 && kill(t->pid, 0) == 0) {
		kill(t->pid, SIGTERM);
		spk_wait(t);
	}
	ck_assert_int_eq(sbx_uid_release(t->uiddir, t->slot, cu_scope(),
	    t->id), 0);
	cu_rmrf(t->dir);
	cu_rmrf(t->ws);
	cu_rmrf(t->stage);
	free(t->dir);
	free(t->ws);
	free(t->stage);
	free(t->sock);
	free(t->uiddir);
}

/* ---- host-side /proc readers ------------------------------------- */

/* The value after "key" in /proc/pid/status, malloc'd, or NULL. */
static char *
status_field(pid_t pid, const char *key)
{
	char path[64], *st, *p, *e, *v = NULL;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if ((st = cu_read_file(path, NULL)) == NULL)
		return NULL;
	for (p = st; *p != '\0'; p = e + 1) {
		e = strchr(p, '\n');
		if (strncmp(p, key, strlen(key)) == 0) {
			p += strlen(key);
			p += strspn(p, " \t");
			v = strndup(p, e != NULL ? (size_t)(e - p) : strlen(p));
			break;
		}
		if (e == NULL)
			break;
	}
	free(st);
	return v;
}

static bool
ns_link(pid_t pid, const char *ns, char *buf, size_t sz)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof path, "/proc/%d/ns/%s", (int)pid, ns);
	if ((n = readlink(path, buf, sz - 1)) <= 0)
		return false;
	buf[n] = '\0';
	return true;
}

/* The pid as the innermost pid namespace sees it (last NSpid field). */
static long
inner_pid(pid_t pid)
{
	char *v = status_field(pid, "NSpid:"), *last;
	long r;

	if (v == NULL)
		return -1;
	last = strrchr(v, '\t');
	r = strtol(last != NULL ? last + 1 : v, NULL, 10);
	free(v);
	return r;
}

/* Field 6 (session) of /proc/pid/stat. */
static long
session_of(pid_t pid)
{
	char path[64], *st, *rp;
	long sid = -1;
	char state;
	int ppid, pgrp;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((st = cu_read_file(path, NULL)) == NULL)
		return -1;
	if ((rp = strrchr(st, ')')) != NULL &&
	    sscanf(rp + 1, " %c %d %d %ld", &state, &ppid, &pgrp, &sid) != 4)
		sid = -1;
	free(st);
	return sid;
}

struct scan {
	const char *pidns;	/* match this pid namespace, or */
	long uid;		/* this real uid (when pidns is NULL) */
	long want_inner;	/* record the host pid with this inner pid */
	pid_t found;
	int n;
};

/* Count live (non-zombie) processes in a pid namespace or of a uid. */
static int
scan_procs(struct scan *s)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char buf[128];

	ck_assert_ptr_nonnull(d);
	s->n = 0;
	s->found = 0;
	while ((e = readdir(d)) != NULL) {
		pid_t pid = (pid_t)strtol(e->d_name, NULL, 10);
		char *state, *uid;
		bool match;

		if (pid <= 0)
			continue;
		if (s->pidns != NULL)
			match = ns_link(pid, "pid", buf, sizeof buf) &&
			    strcmp(buf, s->pidns) == 0;
		else {
			uid = status_field(pid, "Uid:");
			match = uid != NULL && strtol(uid, NULL, 10) == s->uid;
			free(uid);
		}
		if (!match)
			continue;
		state = status_field(pid, "State:");
		if (state != NULL && state[0] != 'Z' && state[0] != 'X') {
			s->n++;
			if (s->want_inner > 0 && inner_pid(pid) ==
			    s->want_inner)
				s->found = pid;
		}
		free(state);
	}
	closedir(d);
	return s->n;
}

/* ---- holder client helpers --------------------------------------- */

static void
row_text(const struct pty_mirror *m, int r, char *line, size_t sz)
{
	size_t len = 0;

	for (int col = 0; col < m->cols && len + 32 < sz; col++) {
		const struct pty_cell *cell = pty_mirror_cell(m, r, col);

		if (cell->width == 0)
			continue;
		if (cell->cp[0] == 0)
			line[len++] = ' ';
		else
			len += pty_cell_utf8(cell, line + len, sz - len);
	}
	while (len > 0 && line[len - 1] == ' ')
		len--;
	line[len] = '\0';
}

/* The first row containing text, or -1. */
static int
find_row(const struct pty_mirror *m, const char *text)
{
	char line[4096];

	for (int r = 0; r < m->rows; r++) {
		row_text(m, r, line, sizeof line);
		if (strstr(line, text) != NULL)
			return r;
	}
	return -1;
}

/* Apply frames to m until some row contains text, or the deadline. */
static bool
wait_text(struct pty_holder_client *c, struct pty_mirror *m, const char *text,
    int ms)
{
	uint64_t end = cu_now_ms() + (uint64_t)ms;
	const uint8_t *p;
	size_t plen;
	uint8_t type;

	while (find_row(m, text) < 0) {
		if (cu_now_ms() >= end)
			return false;
		if (pty_holder_client_recv(c, &type, &p, &plen,
		    (int)(end - cu_now_ms())) != 1)
			return false;
		ck_assert_int_eq(pty_mirror_apply(m, type, p, plen), 0);
	}
	return true;
}

/* Apply frames until the holder answers a status ping (all sent before). */
static void
drain(struct pty_holder_client *c, struct pty_mirror *m)
{
	uint8_t seq[4] = { 0x5a, 0, 0, 0 };
	const uint8_t *p;
	size_t plen;
	uint8_t type;

	ck_assert_int_eq(pty_holder_client_send(c, PTY_W_STATUS, seq, 4), 0);
	for (;;) {
		ck_assert_int_eq(pty_holder_client_recv(c, &type, &p, &plen,
		    5000), 1);
		if (type == PTY_W_STATUS_REPLY)
			return;
		ck_assert_int_eq(pty_mirror_apply(m, type, p, plen), 0);
	}
}

static void
send_str(struct pty_holder_client *c, const char *s)
{
	ck_assert_int_eq(pty_holder_client_send(c, PTY_W_INPUT, s, strlen(s)),
	    0);
}

/* A status reply parsed; the caller json_decref()s it. */
static json_t *
status(struct pty_holder_client *ctl)
{
	int err = 0;
	char *js = pty_holder_client_status(ctl, 3000, &err);
	json_t *j;

	ck_assert_msg(js != NULL, "status: %s", pty_strerror(err));
	j = json_loads(js, 0, NULL);
	ck_assert_msg(j != NULL, "status JSON: %s", js);
	free(js);
	return j;
}

/*
 * Poll the holder's status until the foreground process waits in a
 * terminal read; returns its pid (the fg process group) as the host sees it.
 */
static pid_t
wait_fg_read(struct pty_holder_client *ctl, const char *comm)
{
	uint64_t end = cu_now_ms() + 5000;
	pid_t fg = -1;

	for (;;) {
		json_t *j = status(ctl);
		json_t *r = json_object_get(j, "fg_tty_read");
		const char *cm = json_string_value(json_object_get(j,
		    "fg_comm"));
		bool ok = json_is_true(r) && cm != NULL &&
		    strcmp(cm, comm) == 0;

		fg = (pid_t)json_integer_value(json_object_get(j, "fg_pgrp"));
		json_decref(j);
		if (ok)
			return fg;
		ck_assert_msg(cu_now_ms() < end,
		    "the agent never showed as waiting in a terminal read");
		usleep(20000);
	}
}

static bool
cell_eq(const struct pty_cell *a, const struct pty_cell *b)
{
	return memcmp(a->cp, b->cp, sizeof a->cp) == 0 && a->fg == b->fg &&
	    a->bg == b->bg && a->attrs == b->attrs && a->width == b->width;
}

/* ---- tests ---------------------------------------------------------- */

/*
 * Output, input, resize (SIGWINCH inside: the PTY is the agent's
 * controlling terminal), the foreground facts from the host, and the
 * agent's identity: lease uid, no capabilities, no new privileges, its own
 * namespaces, only fds 0-2, a clean environment, a clean pid-1 cmdline.
 */
START_TEST(test_spike_io_resize_facts)
{
	char *cmd[] = { AGENT_IN, NULL };
	uint8_t rs[4] = { 30, 0, 100, 0 };
	struct pty_holder_client *c = NULL, *ctl = NULL;
	struct pty_mirror m;
	struct spk t;
	struct scan sc;
	char a[128], b[128], *v, path[64], *env, *cl;
	size_t envlen = 0, cllen = 0;
	static const char *const nss[] = { "net", "pid", "user", "mnt", "ipc",
		"uts", "cgroup" };
	DIR *d;
	struct dirent *e;
	pid_t agent;
	json_t *j;
	int nfd = 0;

	spk_start(&t, cmd, 24, 80);
	ck_assert_int_eq(pty_holder_client_open(&c, t.sock, PTY_HELLO_LIVE,
	    2000), 0);
	ck_assert_int_eq(pty_holder_client_open(&ctl, t.sock, 0, 2000), 0);
	pty_mirror_init(&m);
	/* Output arrives; the agent sees its terminal's size. */
	ck_assert(wait_text(c, &m, "ready 24x80", 10000));
	/* Input reaches it. */
	send_str(c, "echo hello from the host\r");
	ck_assert(wait_text(c, &m, "got: hello from the host", 5000));
	/* Resize: TIOCSWINSZ on the master reaches the fg group inside. */
	ck_assert_int_eq(pty_holder_client_send(c, PTY_W_RESIZE, rs, 4), 0);
	ck_assert(wait_text(c, &m, "winch 30x100", 5000));
	ck_assert_int_eq(m.rows, 30);
	ck_assert_int_eq(m.cols, 100);

	/* Foreground facts, from the host's side of the PTY. */
	agent = wait_fg_read(ctl, "fake_agent");
	ck_assert_int_gt(agent, 1);
	ck_assert_int_ne(agent, t.child);
	j = status(ctl);
	ck_assert_str_eq(json_string_value(json_object_get(j, "state")),
	    "running");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "child_pid")),
	    t.child);
	ck_assert_int_ge(json_integer_value(json_object_get(j, "nprocs")), 2);
	json_decref(j);
	/* The fg group leader is the agent inside the pid namespace. */
	ck_assert_int_gt(inner_pid(agent), 1);
	ck_assert_int_ne(inner_pid(agent), agent);

	/* The lease uid, everywhere. */
	v = status_field(agent, "Uid:");
	snprintf(a, sizeof a, "%u\t%u\t%u\t%u", t.uid, t.uid, t.uid, t.uid);
	ck_assert_str_eq(v, a);
	free(v);
	v = status_field(agent, "Gid:");
	snprintf(a, sizeof a, "%u\t%u\t%u\t%u", t.gid, t.gid, t.gid, t.gid);
	ck_assert_str_eq(v, a);
	free(v);
	v = status_field(agent, "Groups:");
	ck_assert_msg(v != NULL && (v[0] == '\0' || strtoul(v, NULL, 10) ==
	    t.gid), "supplementary groups: %s", v);
	free(v);
	/* No capabilities, no new privileges. */
	v = status_field(agent, "CapEff:");
	ck_assert_str_eq(v, "0000000000000000");
	free(v);
	v = status_field(agent, "CapPrm:");
	ck_assert_str_eq(v, "0000000000000000");
	free(v);
	v = status_field(agent, "CapBnd:");
	ck_assert_str_eq(v, "0000000000000000");
	free(v);
	v = status_field(agent, "NoNewPrivs:");
	ck_assert_str_eq(v, "1");
	free(v);
	/* Its own namespaces, the network one included. */
	for (size_t i = 0; i < sizeof nss / sizeof nss[0]; i++) {
		ck_assert(ns_link(getpid(), nss[i], a, sizeof a));
		ck_assert(ns_link(agent, nss[i], b, sizeof b));
		ck_assert_msg(strcmp(a, b) != 0, "%s namespace shared: %s",
		    nss[i], a);
	}
	/* Only the terminal: no inherited fd (SANDBOX.md 0.7). */
	snprintf(path, sizeof path, "/proc/%d/fd", (int)agent);
	ck_assert_ptr_nonnull(d = opendir(path));
	while ((e = readdir(d)) != NULL) {
		long fd;

		if (e->d_name[0] == '.')
			continue;
		fd = strtol(e->d_name, NULL, 10);
		ck_assert_msg(fd >= 0 && fd <= 2, "agent holds fd %ld", fd);
		nfd++;
	}
	closedir(d);
	ck_assert_int_eq(nfd, 3);
	/* A clean environment: the allowlist, never the canary. */
	snprintf(path, sizeof path, "/proc/%d/environ", (int)agent);
	env = cu_read_file(path, &envlen);
	ck_assert_ptr_nonnull(env);
	ck_assert_ptr_null(memmem(env, envlen, CANARY_VALUE,
	    strlen(CANARY_VALUE)));
	ck_assert_ptr_null(memmem(env, envlen, CANARY_NAME,
	    strlen(CANARY_NAME)));
	ck_assert_ptr_nonnull(memmem(env, envlen, "TERM=xterm-256color", 19));
	ck_assert_ptr_nonnull(memmem(env, envlen, "HOME=/home/sbx", 14));
	free(env);
	/*
	 * The sandbox's pid 1 is bwrap: its cmdline, which anything inside
	 * can read, carries no --setenv value and no policy (SANDBOX.md 0.8).
	 */
	ck_assert(ns_link(agent, "pid", b, sizeof b));
	memset(&sc, 0, sizeof sc);
	sc.pidns = b;
	sc.want_inner = 1;
	scan_procs(&sc);
	ck_assert_int_gt(sc.found, 0);
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)sc.found);
	cl = cu_read_file(path, &cllen);
	ck_assert_ptr_nonnull(cl);
	ck_assert_str_eq(cl, SBX_BWRAP_PATH);
	ck_assert_ptr_nonnull(memmem(cl, cllen, "--args", 6));
	ck_assert_ptr_null(memmem(cl, cllen, "--setenv", 8));
	ck_assert_ptr_null(memmem(cl, cllen, "xterm-256color", 14));
	ck_assert_ptr_null(memmem(cl, cllen, "/home/sbx", 9));
	ck_assert_ptr_null(memmem(cl, cllen, "--ro-bind", 9));
	free(cl);

	send_str(c, "exit 7\r");
	ck_assert_int_eq(spk_wait(&t), 7);
	pty_mirror_free(&m);
	pty_holder_client_free(ctl);
	pty_holder_client_free(c);
	spk_stop(&t);
}
END_TEST

/*
 * Cancel (SPEC 5.5) ends every process of the lease, including a daemon the
 * agent double-forked into a new session: checked on the host by the
 * sandbox's pid namespace and by the lease uid.
 */
START_TEST(test_spike_cancel_daemon)
{
	char *cmd[] = { AGENT_IN, NULL };
	struct pty_holder_client *c = NULL, *ctl = NULL;
	struct pty_mirror m;
	struct spk t;
	struct scan ns, us;
	char nsl[128], *pidfile, *txt;
	const uint8_t *p;
	size_t plen;
	uint8_t type;
	struct stat sb;
	long dinner;
	pid_t agent;
	bool got_exit = false;
	uint64_t end;

	spk_start(&t, cmd, 24, 80);
	ck_assert_int_eq(pty_holder_client_open(&c, t.sock, PTY_HELLO_LIVE,
	    2000), 0);
	ck_assert_int_eq(pty_holder_client_open(&ctl, t.sock, 0, 2000), 0);
	pty_mirror_init(&m);
	ck_assert(wait_text(c, &m, "ready", 10000));
	send_str(c, "daemon /work/daemon.pid\r");
	ck_assert(wait_text(c, &m, "daemon started", 5000));
	agent = wait_fg_read(ctl, "fake_agent");
	/* The daemon wrote /work: on the host, a file of the lease uid. */
	ck_assert_int_gt(asprintf(&pidfile, "%s/daemon.pid", t.ws), 0);
	end = cu_now_ms() + 5000;
	while ((txt = cu_read_file(pidfile, NULL)) == NULL ||
	    strchr(txt, '\n') == NULL) {
		free(txt);
		ck_assert_msg(cu_now_ms() < end, "no daemon pid file");
		usleep(10000);
	}
	dinner = strtol(txt, NULL, 10);
	free(txt);
	ck_assert_int_gt(dinner, 1);
	ck_assert_int_eq(stat(pidfile, &sb), 0);
	ck_assert_uint_eq(sb.st_uid, t.uid);
	ck_assert_uint_eq(sb.st_gid, t.gid);

	/* Before: bwrap's pid 1, the helper, the agent and the daemon. */
	ck_assert(ns_link(agent, "pid", nsl, sizeof nsl));
	memset(&ns, 0, sizeof ns);
	ns.pidns = nsl;
	ns.want_inner = dinner;
	ck_assert_int_ge(scan_procs(&ns), 4);
	ck_assert_msg(ns.found > 0, "daemon (inner pid %ld) not found",
	    dinner);
	/* It really left the agent's session (setsid + double fork). */
	ck_assert_int_ne(session_of(ns.found), session_of(agent));
	memset(&us, 0, sizeof us);
	us.uid = t.uid;
	/* ...plus the outer bwrap, all as the lease uid. */
	ck_assert_int_ge(scan_procs(&us), 5);

	ck_assert_int_eq(pty_holder_client_send(c, PTY_W_CANCEL, NULL, 0), 0);
	while (pty_holder_client_recv(c, &type, &p, &plen, 10000) == 1) {
		ck_assert_int_eq(pty_mirror_apply(&m, type, p, plen), 0);
		if (type == PTY_W_EXIT) {
			got_exit = true;
			break;
		}
	}
	ck_assert(got_exit);
	spk_wait(&t);
	/* After: nothing of the lease is left, whatever its session. */
	end = cu_now_ms() + 5000;
	while ((scan_procs(&ns) > 0 || scan_procs(&us) > 0) &&
	    cu_now_ms() < end)
		usleep(20000);
	ck_assert_msg(ns.n == 0, "%d process(es) left in %s", ns.n, nsl);
	ck_assert_msg(us.n == 0, "%d process(es) of uid %u left", us.n,
	    t.uid);
	free(pidfile);
	pty_mirror_free(&m);
	pty_holder_client_free(ctl);
	pty_holder_client_free(c);
	spk_stop(&t);
}
END_TEST

/* SPEC 8.3: the zone dies with its holder, even under kill -9. */
START_TEST(test_spike_dies_with_holder)
{
	char *cmd[] = { AGENT_IN, NULL };
	struct pty_holder_client *c = NULL, *ctl = NULL;
	struct pty_mirror m;
	struct spk t;
	struct scan ns, us;
	char nsl[128];
	uint64_t end;
	pid_t agent;

	spk_start(&t, cmd, 24, 80);
	ck_assert_int_eq(pty_holder_client_open(&c, t.sock, PTY_HELLO_LIVE,
	    2000), 0);
	ck_assert_int_eq(pty_holder_client_open(&ctl, t.sock, 0, 2000), 0);
	pty_mirror_init(&m);
	ck_assert(wait_text(c, &m, "ready", 10000));
	send_str(c, "daemon /work/daemon.pid\r");
	ck_assert(wait_text(c, &m, "daemon started", 5000));
	agent = wait_fg_read(ctl, "fake_agent");
	ck_assert(ns_link(agent, "pid", nsl, sizeof nsl));
	memset(&ns, 0, sizeof ns);
	ns.pidns = nsl;
	ck_assert_int_ge(scan_procs(&ns), 4);
	memset(&us, 0, sizeof us);
	us.uid = t.uid;
	ck_assert_int_eq(kill(t.pid, SIGKILL), 0);
	ck_assert_int_eq(spk_wait(&t), 128 + SIGKILL);
	end = cu_now_ms() + 5000;
	while ((scan_procs(&ns) > 0 || scan_procs(&us) > 0) &&
	    cu_now_ms() < end)
		usleep(20000);
	ck_assert_msg(ns.n == 0, "%d process(es) left in %s", ns.n, nsl);
	ck_assert_msg(us.n == 0, "%d process(es) of uid %u left", us.n,
	    t.uid);
	pty_mirror_free(&m);
	pty_holder_client_free(ctl);
	pty_holder_client_free(c);
	spk_stop(&t);
}
END_TEST

/* Close the client, open a new one: every cell and the cursor are equal. */
START_TEST(test_spike_reattach)
{
	char *cmd[] = { AGENT_IN, NULL };
	struct pty_holder_client *c = NULL, *ctl = NULL;
	struct pty_mirror m1, m2;
	struct spk t;
	const uint8_t *p;
	size_t plen;
	uint8_t type;
	bool full = false;
	int red = 0;

	spk_start(&t, cmd, 24, 80);
	ck_assert_int_eq(pty_holder_client_open(&c, t.sock, PTY_HELLO_LIVE,
	    2000), 0);
	ck_assert_int_eq(pty_holder_client_open(&ctl, t.sock, 0, 2000), 0);
	pty_mirror_init(&m1);
	ck_assert(wait_text(c, &m1, "ready", 10000));
	send_str(c, "color\r");
	ck_assert(wait_text(c, &m1, "red green rgb", 5000));
	send_str(c, "title spike lease\r");
	send_str(c, "echo before detach\r");
	ck_assert(wait_text(c, &m1, "got: before detach", 5000));
	/* Quiet: the agent waits for input and every frame is applied. */
	wait_fg_read(ctl, "fake_agent");
	drain(c, &m1);
	drain(c, &m1);
	ck_assert_str_eq(m1.title, "spike lease");
	pty_holder_client_free(c);
	c = NULL;

	ck_assert_int_eq(pty_holder_client_open(&c, t.sock, PTY_HELLO_LIVE,
	    2000), 0);
	pty_mirror_init(&m2);
	/* The attach sends the whole screen: wait for a full ROWS frame. */
	while (!full) {
		ck_assert_int_eq(pty_holder_client_recv(c, &type, &p, &plen,
		    5000), 1);
		ck_assert_int_eq(pty_mirror_apply(&m2, type, p, plen), 0);
		if (type == PTY_W_ROWS && plen >= 4) {
			struct pty_rd r;
			unsigned first, n;

			pty_rd_init(&r, p, plen);
			first = pty_rd_u16(&r);
			n = pty_rd_u16(&r);
			full = first == 0 && (int)n == m2.rows;
		}
	}
	drain(c, &m2);
	ck_assert_int_eq(m2.rows, m1.rows);
	ck_assert_int_eq(m2.cols, m1.cols);
	for (int r = 0; r < m1.rows; r++) {
		for (int col = 0; col < m1.cols; col++) {
			const struct pty_cell *x = pty_mirror_cell(&m1, r, col);
			const struct pty_cell *y = pty_mirror_cell(&m2, r, col);

			ck_assert_msg(cell_eq(x, y), "cell %d,%d differs", r,
			    col);
			if (x->fg == PTY_COLOR_INDEXED(1) ||
			    x->fg == PTY_COLOR_INDEXED(9))
				red++;
		}
	}
	/* The comparison covered real content: "red" in red. */
	ck_assert_int_eq(red, 3);
	ck_assert_int_eq(m2.meta.cur_row, m1.meta.cur_row);
	ck_assert_int_eq(m2.meta.cur_col, m1.meta.cur_col);
	ck_assert_int_eq(m2.meta.cur_visible, m1.meta.cur_visible);
	ck_assert_int_eq(m2.meta.modes, m1.meta.modes);
	ck_assert_str_eq(m2.title, m1.title);
	/* And the new client drives the same agent. */
	send_str(c, "echo after reattach\r");
	ck_assert(wait_text(c, &m2, "got: after reattach", 5000));
	send_str(c, "exit 0\r");
	ck_assert_int_eq(spk_wait(&t), 0);
	pty_mirror_free(&m1);
	pty_mirror_free(&m2);
	pty_holder_client_free(ctl);
	pty_holder_client_free(c);
	spk_stop(&t);
}
END_TEST

/*
 * What the zone looks like from inside, as a shell sees it: the lease user
 * by name, /dev/tty usable (the PTY is the controlling terminal), a
 * read-only root and /usr, a writable /work, no host secrets, nothing but
 * stdio inherited. Each line is then confirmed or complemented on the host.
 */
START_TEST(test_spike_inside_view)
{
	char *cmd[] = { "/bin/sh", "-c",
		"echo \"user=$(id -un) home=$HOME pwd=$(pwd)\"; "
		"if tr '\\0' ' ' </proc/1/cmdline | grep -q -e --set''env "
		"-e --ro-b''ind; then echo cmdline-leak; else "
		"echo cmdline-clean; fi; "
		"echo \"fds=$(ls /proc/self/fd | tr '\\n' ' ')\"; "
		"(: </dev/tty) 2>/dev/null && echo devtty-ok; "
		"touch /x 2>/dev/null || echo root-ro; "
		"touch /usr/x 2>/dev/null || echo usr-ro; "
		"touch /work/w && echo work-rw; "
		"test -e /etc/shadow || echo no-shadow; "
		"test -e /root || test -e /sys/kernel || echo no-root-no-sys; "
		"env | grep -q CANARY || echo env-clean; "
		"echo end-of-probe; read x", NULL };
	static const char *const want[] = { "user=sbx home=/home/sbx pwd=/work",
		"cmdline-clean", "fds=0 1 2 3", "devtty-ok", "root-ro",
		"usr-ro", "work-rw", "no-shadow", "no-root-no-sys",
		"env-clean", NULL };
	struct pty_holder_client *c = NULL;
	struct pty_mirror m;
	struct spk t;
	struct stat sb;
	const uint8_t *p;
	size_t plen;
	uint8_t type;
	char *w;
	bool got_exit = false;

	spk_start(&t, cmd, 40, 200);
	ck_assert_int_eq(pty_holder_client_open(&c, t.sock, PTY_HELLO_LIVE,
	    2000), 0);
	pty_mirror_init(&m);
	ck_assert(wait_text(c, &m, "end-of-probe", 10000));
	for (int i = 0; want[i] != NULL; i++)
		ck_assert_msg(find_row(&m, want[i]) >= 0, "missing: %s",
		    want[i]);
	ck_assert_int_lt(find_row(&m, "cmdline-leak"), 0);
	/* Host side: the file the sandbox wrote is the lease uid's. */
	ck_assert_int_gt(asprintf(&w, "%s/w", t.ws), 0);
	ck_assert_int_eq(stat(w, &sb), 0);
	ck_assert_uint_eq(sb.st_uid, t.uid);
	free(w);
	ck_assert_int_ne(stat("/x", &sb), 0);
	/* The exit status comes back through the helper and bwrap. */
	send_str(c, "\r");
	while (pty_holder_client_recv(c, &type, &p, &plen, 5000) == 1) {
		ck_assert_int_eq(pty_mirror_apply(&m, type, p, plen), 0);
		if (type == PTY_W_EXIT) {
			got_exit = true;
			break;
		}
	}
	ck_assert(got_exit);
	ck_assert(WIFEXITED(m.exit_status));
	ck_assert_int_eq(WEXITSTATUS(m.exit_status), 0);
	ck_assert_int_eq(spk_wait(&t), 0);
	pty_mirror_free(&m);
	pty_holder_client_free(c);
	spk_stop(&t);
}
END_TEST

Suite *
spike_suite(void)
{
	Suite *s = suite_create("spike");
	TCase *tc = tcase_create("Integration");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_spike_io_resize_facts);
	tcase_add_test(tc, test_spike_cancel_daemon);
	tcase_add_test(tc, test_spike_dies_with_holder);
	tcase_add_test(tc, test_spike_reattach);
	tcase_add_test(tc, test_spike_inside_view);
	suite_add_tcase(s, tc);
	return s;
}
