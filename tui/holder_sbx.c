/*
 * holder_sbx.c: the holder's side of a bwrap lease (SPEC 6.6, 6.7, 8.3,
 * 8.4): the exec plan built from the journal and the lease's policy inside
 * the holder's private runtime mounts, the limits watched on the holder's
 * loop (wall time, memory, pids, disk, output, CPU time: hitting one ends
 * the lease with a named reason), the initial prompt sent once the agent
 * first waits at its prompt, and the teardown by exact ID when the agent
 * has ended. holder_main.c calls these from its hooks.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include <jansson.h>

#include "lease/lease.h"
#include "pty/pty.h"
#include "sandbox-adapters/sbx.h"
#include "tui/tui_sbx.h"

#define MONITOR_MS 200
#define LIMIT_KILL_MS 3000

extern char **environ;

struct tui_holder_sbx {
	struct tui_ctx *ctx;
	char id[LEASE_ID_LEN + 1];
	uv_loop_t *loop;
	struct sbx_policy *pol;
	struct sbx_cgroup *cg;
	char *ws;		/* host path of the workspace */
	uid_t uid;
	gid_t gid;
	char sid[64];
	char init_sha[SBX_SHA256_HEX];
	char *ro[64];		/* runtime paths of the policy's mounts */
	struct sbx_mount mnt[64];
	int nro;
	char **env;
	/* limits */
	uv_timer_t wall, monitor;
	bool timers;
	const char *limit;	/* the first limit hit, or NULL */
	/* the initial prompt (SPEC 6.7) */
	char *prompt;
	size_t prompt_len;
	bool prompt_sent;
	uv_pipe_t pipe;
	uv_connect_t conn;
	uv_write_t wr;
	struct pty_wbuf wb;
	bool pipe_open;
};

static void
receipt(struct tui_holder_sbx *h, const char *kind, json_t *fields)
{
	struct lease_store *st = h->ctx->store;

	if (fields != NULL && st != NULL &&
	    lease_receipt_append(st, h->id, kind, fields, NULL) < 0)
		fprintf(stderr, "corral holder %s: receipt: %s\n", h->id,
		    lease_store_errmsg(st));
	json_decref(fields);
}

static char *
lease_file(struct tui_holder_sbx *h, const char *name)
{
	char *dir = tui_lease_dir(h->ctx, h->id), *p = NULL;

	if (dir != NULL && asprintf(&p, "%s/%s", dir, name) < 0)
		p = NULL;
	free(dir);
	return p;
}

/* The lease's cgroups and uid as the journal records them. */
static int
from_journal(struct tui_holder_sbx *h, char *err, size_t errsz)
{
	struct lease_resource_row *v = NULL;
	unsigned slot;
	size_t n = 0;
	int rc;

	if ((rc = lease_store_resources(h->ctx->store, h->id, &v, &n)) < 0) {
		snprintf(err, errsz, "journal: %s",
		    lease_store_errmsg(h->ctx->store));
		return rc;
	}
	for (size_t i = 0; i < n; i++) {
		if (v[i].state != LEASE_RS_CREATED)
			continue;
		if (v[i].kind == LEASE_RES_SANDBOX)
			snprintf(h->sid, sizeof h->sid, "%s", v[i].identity);
		else if (v[i].kind == LEASE_RES_CGROUP && h->cg == NULL &&
		    (rc = sbx_cgroup_parse(h->id, v[i].identity, &h->cg)) < 0)
			break;
	}
	lease_resources_free(v, n);
	if (rc < 0) {
		snprintf(err, errsz, "cgroup record: %s", sbx_strerror(rc));
		return rc;
	}
	if (tui_sbx_slot_of_id(h->sid, &slot) < 0 ||
	    sbx_uid_of_slot(slot, &h->uid, &h->gid) < 0 || h->cg == NULL) {
		snprintf(err, errsz, "the journal names no uid slot or cgroup "
		    "for this lease");
		return -EINVAL;
	}
	return 0;
}

/* A lease file into *text (NULL when absent). */
static int
read_lease_file(struct tui_holder_sbx *h, const char *name, char *path_out,
    size_t pathsz, char **text, size_t *len)
{
	char *path = lease_file(h, name);
	int rc = 0;

	*text = NULL;
	if (path == NULL)
		return -ENOMEM;
	snprintf(path_out, pathsz, "%s", path);
	if (access(path, F_OK) == 0)
		rc = tui_sbx_read_file(path, 1u << 20, text, len);
	free(path);
	return rc;
}

/* The policy `corral new` validated, as the journal keeps it. */
static int
load_policy(struct tui_holder_sbx *h, char *err, size_t errsz)
{
	struct sbx_policy_error perr;
	struct lease_record r;
	char path[4096];
	int rc;

	if ((rc = lease_store_get(h->ctx->store, h->id, &r)) < 0) {
		snprintf(err, errsz, "journal: %s",
		    lease_store_errmsg(h->ctx->store));
		return rc;
	}
	if (r.policy == NULL)
		rc = -EINVAL;
	else if ((rc = sbx_policy_load(r.policy, "lease policy", NULL,
	    &h->pol, &perr)) < 0)
		snprintf(err, errsz, "policy: line %d: %s", perr.line,
		    perr.msg);
	lease_record_clear(&r);
	if (rc == -EINVAL)
		snprintf(err, errsz, "the journal has no policy for the lease");
	if (rc < 0)
		return rc;
	/* The prompt, if the lease has one. */
	if ((rc = read_lease_file(h, "prompt", path, sizeof path, &h->prompt,
	    &h->prompt_len)) < 0)
		snprintf(err, errsz, "%s: %s", path, strerror(-rc));
	return rc;
}

int
tui_holder_sbx_prepare(struct tui_ctx *c, const char *id, char *const *cmd,
    struct tui_holder_sbx **out, struct sbx_plan **plan, char *err,
    size_t errsz)
{
	struct tui_holder_sbx *h;
	struct sbx_request req;
	char *init = NULL;
	const char *src[64];
	int rc;

	*out = NULL;
	*plan = NULL;
	if ((h = calloc(1, sizeof *h)) == NULL)
		return -ENOMEM;
	h->ctx = c;
	snprintf(h->id, sizeof h->id, "%s", id);
	pty_wbuf_init(&h->wb);
	*out = h;
	if ((rc = from_journal(h, err, errsz)) < 0 ||
	    (rc = load_policy(h, err, errsz)) < 0)
		return rc;
	if ((h->ws = lease_path_workspace(c->state_dir, id)) == NULL)
		return -ENOMEM;
	init = tui_sbx_helper_path(c, "corral-sbx-init", "CORRAL_SBX_INIT");
	if (init == NULL) {
		snprintf(err, errsz, "corral-sbx-init not found");
		return -ENOENT;
	}
	if (h->pol->nmounts_ro > sizeof h->ro / sizeof h->ro[0]) {
		free(init);
		snprintf(err, errsz, "too many read-only mounts");
		return -E2BIG;
	}
	h->nro = (int)h->pol->nmounts_ro;
	for (int i = 0; i < h->nro; i++)
		src[i] = h->pol->mounts_ro[i];
	rc = tui_sbx_runtime_setup(h->ws, init, h->init_sha, src, h->nro,
	    h->ro, err, errsz);
	free(init);
	if (rc < 0)
		return rc;
	for (int i = 0; i < h->nro; i++) {
		h->mnt[i].src = h->ro[i];
		h->mnt[i].dst = h->pol->mounts_ro[i];
	}
	if ((rc = sbx_policy_env(h->pol, environ, &h->env)) < 0) {
		snprintf(err, errsz, "environment: %s", sbx_strerror(rc));
		return rc;
	}

	memset(&req, 0, sizeof req);
	req.id = id;
	req.lease_dir = NULL;
	req.workspace = TUI_SBX_RT_WORK;
	req.init_path = TUI_SBX_RT_INIT;
	req.cmd = cmd;
	req.uid = h->uid;
	req.gid = h->gid;
	req.ro_binds = h->nro > 0 ? h->mnt : NULL;
	req.nro_binds = h->nro;
	req.limits = &h->pol->limits;
	req.env = h->env;
	if ((rc = sbx_adapter_bwrap.plan(&req, plan)) < 0) {
		snprintf(err, errsz, "sandbox plan: %s", sbx_strerror(rc));
		return rc;
	}
	if ((rc = sbx_cgroup_plan(h->cg, *plan)) < 0 ||
	    (rc = sbx_plan_open_data(*plan)) < 0) {
		snprintf(err, errsz, "sandbox plan: %s", sbx_strerror(rc));
		return rc;
	}
	receipt(h, "sandbox", json_pack("{s:s, s:s, s:i, s:s, s:s}",
	    "adapter", "bwrap", "sandbox_id", h->sid, "uid", (int)h->uid,
	    "workspace", h->ws, "init_sha256", h->init_sha));
	return 0;
}

size_t
tui_holder_sbx_output_cap(const struct tui_holder_sbx *h)
{
	return h->pol->limits.output > 0 ? (size_t)h->pol->limits.output : 0;
}

/* ---- limits ---------------------------------------------------------------- */

/* End the lease for a limit: record it, then kill everything it runs. */
static void
hit(struct tui_holder_sbx *h, const char *limit, const char *detail)
{
	struct sbx_cgroup_facts f;
	json_t *j;
	int rc;

	if (h->limit != NULL)
		return;
	h->limit = limit;
	j = json_pack("{s:s, s:s}", "limit", limit, "detail", detail);
	if (j != NULL && sbx_cgroup_facts(h->cg, &f) == 0) {
		json_object_set_new(j, "mem_max_usage",
		    json_integer((json_int_t)f.mem_max_usage));
		json_object_set_new(j, "oom_kills",
		    json_integer((json_int_t)f.oom_kills));
		json_object_set_new(j, "pids_max_hits",
		    json_integer((json_int_t)f.pids_max));
		json_object_set_new(j, "cpu_usage_ns",
		    json_integer((json_int_t)f.cpu_usage_ns));
	}
	receipt(h, "limit_hit", j);
	/* Atomic: freeze, kill, thaw (SANDBOX.md 3.6); the agent exits. */
	if ((rc = sbx_cgroup_teardown(h->cg, LIMIT_KILL_MS)) < 0)
		fprintf(stderr, "corral holder %s: limit kill: %s\n", h->id,
		    strerror(-rc));
}

static void
wall_cb(uv_timer_t *t)
{
	struct tui_holder_sbx *h = t->data;
	char d[64];

	snprintf(d, sizeof d, "wall time %llu s",
	    h->pol->limits.wall_time);
	hit(h, "wall_time", d);
}

static void
monitor_cb(uv_timer_t *t)
{
	struct tui_holder_sbx *h = t->data;
	const struct sbx_limits *l = &h->pol->limits;
	struct sbx_cgroup_facts f;
	struct statvfs vfs;
	const char *why;
	char d[128];

	if (h->limit != NULL)
		return;
	if (sbx_cgroup_facts(h->cg, &f) == 0) {
		/*
		 * RLIMIT_NPROC (the same count: the uid is the lease's
		 * alone) may refuse forks before pids.max does.
		 */
		why = sbx_cgroup_limit_hit(&f);
		if (why == NULL && l->pids > 0 && f.pids_current >= l->pids)
			why = "pids";
		if (why != NULL) {
			snprintf(d, sizeof d, "%s limit reached (oom kills "
			    "%llu, forks refused %llu)", why, f.oom_kills,
			    f.pids_max);
			hit(h, why, d);
			return;
		}
		if (l->cpu_time > 0 && f.cpu_usage_ns / 1000000000ull >=
		    l->cpu_time) {
			snprintf(d, sizeof d, "CPU time %llu s",
			    l->cpu_time);
			hit(h, "cpu_time", d);
			return;
		}
	}
	/*
	 * The bounded workspace is full: bytes or inodes (SPEC 8.4). ext4
	 * keeps a few blocks for itself that writes never get, so "full" is
	 * less than 1/256 of it (at least 256 KiB) or 8 inodes left.
	 */
	if (l->disk > 0 && statvfs(h->ws, &vfs) == 0) {
		unsigned long long bsz = vfs.f_frsize ? vfs.f_frsize :
		    vfs.f_bsize;
		unsigned long long left = (unsigned long long)vfs.f_bavail *
		    bsz, total = (unsigned long long)vfs.f_blocks * bsz;
		unsigned long long floor = total / 256 > (256u << 10) ?
		    total / 256 : (256u << 10);
		bool bytes = left < floor, inodes = vfs.f_favail < 8;

		if (bytes || inodes) {
			snprintf(d, sizeof d, "workspace full (%s)", bytes ?
			    "bytes" : "inodes");
			hit(h, "disk", d);
		}
	}
}

void
tui_holder_sbx_start(struct tui_holder_sbx *h, uv_loop_t *loop)
{
	h->loop = loop;
	uv_timer_init(loop, &h->wall);
	uv_timer_init(loop, &h->monitor);
	h->wall.data = h->monitor.data = h;
	h->timers = true;
	if (h->pol->limits.wall_time > 0)
		uv_timer_start(&h->wall, wall_cb,
		    h->pol->limits.wall_time * 1000ull, 0);
	uv_timer_start(&h->monitor, monitor_cb, MONITOR_MS, MONITOR_MS);
}

void
tui_holder_sbx_event(struct tui_holder_sbx *h, const char *kind,
    const char *detail)
{
	/* The holder stops keeping output past the cap: end the lease. */
	if (strcmp(kind, "transcript") == 0 &&
	    strstr(detail, "truncated at") != NULL)
		hit(h, "output", detail);
}

const char *
tui_holder_sbx_exit_reason(struct tui_holder_sbx *h, int wstatus)
{
	static const char *const names[] = { "wall_time", "memory", "pids",
		"disk", "output", "cpu_time", "file_size" };
	static const char *const reasons[] = { "limit_wall_time",
		"limit_memory", "limit_pids", "limit_disk", "limit_output",
		"limit_cpu_time", "limit_file_size" };

	int sig = 0;

	/*
	 * An rlimit's signal (RLIMIT_CPU, RLIMIT_FSIZE) that killed the
	 * agent, directly or as bwrap reports it (128 + the signal).
	 */
	if (WIFSIGNALED(wstatus))
		sig = WTERMSIG(wstatus);
	else if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) > 128)
		sig = WEXITSTATUS(wstatus) - 128;
	if (h->limit == NULL && sig == SIGXCPU && h->pol->limits.cpu_time > 0)
		h->limit = "cpu_time";
	if (h->limit == NULL && sig == SIGXFSZ &&
	    h->pol->limits.file_size > 0)
		h->limit = "file_size";
	/* The OOM killer may end the agent before the monitor looks. */
	if (h->limit == NULL && h->timers)
		monitor_cb(&h->monitor);
	if (h->limit == NULL)
		return NULL;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (strcmp(h->limit, names[i]) == 0)
			return reasons[i];
	}
	return "limit";
}

/* ---- the initial prompt ----------------------------------------------------- */

static void
pipe_closed(uv_handle_t *hd)
{
	(void)hd;
}

static void
prompt_written(uv_write_t *w, int status)
{
	struct tui_holder_sbx *h = w->data;

	if (status < 0)
		fprintf(stderr, "corral holder %s: prompt: %s\n", h->id,
		    uv_strerror(status));
	if (!uv_is_closing((uv_handle_t *)&h->pipe))
		uv_close((uv_handle_t *)&h->pipe, pipe_closed);
}

static void
prompt_connected(uv_connect_t *cr, int status)
{
	struct tui_holder_sbx *h = cr->data;
	uint8_t hello[5] = { PTY_WIRE_VERSION, 0, 0, 0, PTY_HELLO_CONTROL };
	char hex[SBX_SHA256_HEX];
	size_t st, len = h->prompt_len;
	uv_buf_t b;

	if (status < 0) {
		fprintf(stderr, "corral holder %s: prompt: %s\n", h->id,
		    uv_strerror(status));
		if (!uv_is_closing((uv_handle_t *)&h->pipe))
			uv_close((uv_handle_t *)&h->pipe, pipe_closed);
		return;
	}
	/* The text as a paste (bracketed if the agent asked), then Enter. */
	while (len > 0 && (h->prompt[len - 1] == '\n' ||
	    h->prompt[len - 1] == '\r'))
		len--;
	pty_wbuf_reset(&h->wb);
	st = pty_wire_begin(&h->wb, PTY_W_HELLO);
	pty_wbuf_put(&h->wb, hello, sizeof hello);
	pty_wire_end(&h->wb, st);
	st = pty_wire_begin(&h->wb, PTY_W_PASTE);
	pty_wbuf_put(&h->wb, h->prompt, len);
	pty_wire_end(&h->wb, st);
	st = pty_wire_begin(&h->wb, PTY_W_INPUT);
	pty_wbuf_put(&h->wb, "\r", 1);
	pty_wire_end(&h->wb, st);
	if (h->wb.oom) {
		uv_close((uv_handle_t *)&h->pipe, pipe_closed);
		return;
	}
	b = uv_buf_init((char *)h->wb.buf, (unsigned)h->wb.len);
	h->wr.data = h;
	if (uv_write(&h->wr, (uv_stream_t *)&h->pipe, &b, 1,
	    prompt_written) < 0) {
		uv_close((uv_handle_t *)&h->pipe, pipe_closed);
		return;
	}
	TUI_BEST_EFFORT(sbx_sha256_hex(h->prompt, h->prompt_len, hex));
	receipt(h, "prompt_sent", json_pack("{s:s, s:I}", "sha256", hex,
	    "bytes", (json_int_t)h->prompt_len));
}

void
tui_holder_sbx_activity(struct tui_holder_sbx *h, const char *state,
    bool bound)
{
	/*
	 * SPEC 6.7: only once every identity is bound (the holder has
	 * recorded itself) and the agent first waits at its prompt. The
	 * prompt goes in like any client's input: through the socket.
	 */
	if (h->prompt == NULL || h->prompt_sent || !bound || h->loop == NULL ||
	    strcmp(state, "prompt") != 0)
		return;
	h->prompt_sent = true;
	uv_pipe_init(h->loop, &h->pipe, 0);
	h->pipe.data = h;
	h->conn.data = h;
	uv_pipe_connect(&h->conn, &h->pipe, "holder.sock", prompt_connected);
}

/* ---- the end ------------------------------------------------------------------ */

int
tui_holder_sbx_finish(struct tui_holder_sbx *h)
{
	struct sbx_cgroup_facts f;
	char err[512];
	json_t *j;
	int rc;

	if (h == NULL || h->cg == NULL)
		return 0;
	j = json_object();
	if (j != NULL && sbx_cgroup_facts(h->cg, &f) == 0) {
		json_object_set_new(j, "mem_max_usage",
		    json_integer((json_int_t)f.mem_max_usage));
		json_object_set_new(j, "oom_kills",
		    json_integer((json_int_t)f.oom_kills));
		json_object_set_new(j, "pids_max_hits",
		    json_integer((json_int_t)f.pids_max));
		json_object_set_new(j, "cpu_usage_ns",
		    json_integer((json_int_t)f.cpu_usage_ns));
		json_object_set_new(j, "cpu_throttled",
		    json_integer((json_int_t)f.cpu_throttled));
	}
	/* Exact ID: the lease's cgroups and uid slot (SPEC 9.2). */
	rc = tui_sbx_teardown(h->ctx, h->ctx->store, h->id, err, sizeof err);
	if (j != NULL) {
		json_object_set_new(j, "ok", json_boolean(rc == 0));
		json_object_set_new(j, "error", rc == 0 ? json_null() :
							  json_string(err));
		json_object_set_new(j, "sandbox_id", json_string(h->sid));
	}
	receipt(h, "teardown", j);
	if (rc < 0)
		fprintf(stderr, "corral holder %s: teardown: %s\n", h->id,
		    err);
	return rc;
}

void
tui_holder_sbx_free(struct tui_holder_sbx *h)
{
	if (h == NULL)
		return;
	sbx_policy_free(h->pol);
	sbx_cgroup_free(h->cg);
	sbx_strv_free(h->env);
	for (int i = 0; i < h->nro; i++)
		free(h->ro[i]);
	free(h->ws);
	free(h->prompt);
	pty_wbuf_free(&h->wb);
	free(h);
}
