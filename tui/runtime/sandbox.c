/*
 * sandbox.c: the host side of a bwrap lease that belongs to the composition
 * root (SPEC 6, 8.3, 9.2): the helper's path, hashes and preflight facts
 * for receipts, the adapter's steps journaled on the lease's rows, the
 * lease's policy read and kept as
 * text, and its bounded workspace released. The exact-ID teardown is
 * sandbox_teardown.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <jansson.h>

#include "lease/lease.h"
#include "sandbox-adapters/sbx.h"
#include "tui/runtime/runtime_int.h"

/* ---- paths and hashes ------------------------------------------------- */

static bool
executable(const char *p)
{
	struct stat sb;

	return p != NULL && p[0] == '/' && stat(p, &sb) == 0 &&
	    S_ISREG(sb.st_mode) && (sb.st_mode & 0111) != 0;
}

char *
tui_sandbox_helper_path(const struct tui_ctx *c, const char *name,
    const char *envname)
{
	const char *env = getenv(envname);
	char *dir, *s, *p = NULL;

	if (env != NULL && *env != '\0')
		return executable(env) ? strdup(env) : NULL;
	if (c->self == NULL || (dir = strdup(c->self)) == NULL)
		return NULL;
	if ((s = strrchr(dir, '/')) != NULL) {
		*s = '\0';
		/* Installed side by side, in libexec, or the build tree. */
		static const char *const where[] = { "%s/%s",
			"%s/../libexec/corral/%s", "%s/../sandbox-adapters/%s" };

		for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
			if (asprintf(&p, where[i], dir, name) < 0) {
				p = NULL;
				break;
			}
			if (executable(p))
				break;
			free(p);
			p = NULL;
		}
	}
	free(dir);
	return p;
}

int
tui_sandbox_read_file(const char *path, size_t max, char **out, size_t *len)
{
	struct stat sb;
	size_t got = 0;
	ssize_t n;
	char *buf;
	int fd, rc;

	*out = NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return -errno;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		rc = S_ISDIR(sb.st_mode) ? -EISDIR : -EINVAL;
		close(fd);
		return rc;
	}
	if ((size_t)sb.st_size > max) {
		close(fd);
		return -EFBIG;
	}
	if ((buf = malloc(max + 1)) == NULL) {
		close(fd);
		return -ENOMEM;
	}
	while ((n = read(fd, buf + got, max + 1 - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			free(buf);
			close(fd);
			return rc;
		}
		got += (size_t)n;
		if (got > max) {
			free(buf);
			close(fd);
			return -EFBIG;
		}
	}
	close(fd);
	buf[got] = '\0';
	*out = buf;
	if (len != NULL)
		*len = got;
	return 0;
}

int
tui_sandbox_write_file(const char *path, const void *buf, size_t len)
{
	const char *p = buf;
	int fd, rc = 0;
	ssize_t w;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd < 0)
		return -errno;
	while (len > 0) {
		w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = w < 0 ? -errno : -EIO;
			break;
		}
		p += w;
		len -= (size_t)w;
	}
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc < 0)
		unlink(path);
	return rc;
}

int
tui_sandbox_sha256_file(const char *path, char hex[65])
{
	hex[0] = '\0';
	return sbx_sha256_file(path, hex);
}

/* ---- the adapter's steps, journaled (SPEC 6, 9.2) ------------------------ */

/*
 * The journal identity of a check run's resource: "check:CHECKID:COPY\n"
 * then the adapter's identity, so each is unique to its run and the
 * lease's teardown knows whose it is and where its copy is.
 */
const char *
tui_sandbox_jsteps_ident(struct tui_sandbox_jsteps *j, const char *ident)
{
	if (j->tag == NULL)
		return ident;
	if ((size_t)snprintf(j->buf, sizeof j->buf, "%.*s%s", j->taglen > 0 ?
	    (int)j->taglen : (int)strlen(j->tag), j->tag, ident) >=
	    sizeof j->buf)
		return NULL;
	return j->buf;
}

static int
res_kind(const char *kind, enum lease_resource *k)
{
	if (strcmp(kind, SBX_RES_CGROUP) == 0)
		*k = LEASE_RES_CGROUP;
	else if (strcmp(kind, SBX_RES_SANDBOX) == 0)
		*k = LEASE_RES_SANDBOX;
	else
		return -EINVAL;
	return 0;
}

static void
fault(const struct tui_sandbox_jsteps *j, const char *kind, const char *when)
{
	char point[64];

	if (!j->faults)
		return;
	snprintf(point, sizeof point, "provision.%s.%s", kind, when);
	lease_fault_point(point);
}

static int
j_plan(void *ud, const char *kind, const char *ident)
{
	struct tui_sandbox_jsteps *j = ud;
	enum lease_resource k;
	int rc;

	if ((ident = tui_sandbox_jsteps_ident(j, ident)) == NULL)
		return -ENAMETOOLONG;
	if ((rc = res_kind(kind, &k)) < 0 ||
	    (rc = lease_resource_plan(j->st, j->id, k, ident,
	    NULL)) < 0)
		return rc;
	fault(j, kind, "before");
	return 0;
}

static int
j_created(void *ud, const char *kind, const char *ident)
{
	struct tui_sandbox_jsteps *j = ud;
	enum lease_resource k;
	int rc;

	fault(j, kind, "created");
	if ((ident = tui_sandbox_jsteps_ident(j, ident)) == NULL)
		return -ENAMETOOLONG;
	if ((rc = res_kind(kind, &k)) < 0 ||
	    (rc = lease_resource_created(j->st, j->id, k, ident)) < 0)
		return rc;
	fault(j, kind, "after");
	return 0;
}

static int
j_removed(void *ud, const char *kind, const char *ident)
{
	struct tui_sandbox_jsteps *j = ud;
	enum lease_resource k;
	int rc;

	if ((ident = tui_sandbox_jsteps_ident(j, ident)) == NULL)
		return -ENAMETOOLONG;
	if ((rc = res_kind(kind, &k)) < 0)
		return rc;
	return lease_resource_removed(j->st, j->id, k, ident);
}

/* A point inside a step that is no journaled resource (crash tests). */
static void
j_point(void *ud, const char *step, const char *when)
{
	fault(ud, step, when);
}

void
tui_sandbox_jsteps_init(struct sbx_steps *s, struct tui_sandbox_jsteps *j,
    struct lease_store *st, const char *id, bool faults)
{
	j->st = st;
	j->id = id;
	j->faults = faults;
	j->tag = NULL;
	j->taglen = 0;
	s->plan = j_plan;
	s->created = j_created;
	s->removed = j_removed;
	s->point = j_point;
	s->ud = j;
}

/* Config errors for err: the first, as FILE:LINE: message. */
struct cfgerr {
	char *err;
	size_t errsz;
	int n;
};

static void
cfg_error(const char *file, int line, const char *msg, void *ud)
{
	struct cfgerr *e = ud;

	if (e->n++ == 0)
		snprintf(e->err, e->errsz, "%s:%d: %s", file, line, msg);
}

int
tui_sandbox_command_config(struct tui_config *cf, struct sbx_command_config *cc,
    char *err, size_t errsz)
{
	struct cfgerr e = { err, errsz, 0 };
	char path[4096];
	int rc;

	memset(cc, 0, sizeof *cc);
	if ((rc = tui_config_load(cf, cfg_error, &e)) < 0)
		return rc;
	cc->provision = cf->cmd_provision;
	cc->exec = cf->cmd_exec;
	cc->teardown = cf->cmd_teardown;
	cc->list = cf->cmd_list;
	cc->timeout_ms = cf->cmd_timeout_ms;
	if ((rc = sbx_command_check(cc, err, errsz)) < 0) {
		size_t used = strlen(err);

		if (tui_config_path(path, sizeof path) == 0)
			snprintf(err + used, errsz - used, " in %s", path);
	}
	return rc;
}

int
tui_sandbox_provision(struct tui_ctx *c, struct lease_store *st,
    const struct sbx_adapter *ad, const struct sbx_request *req,
    struct sbx_provisioned *out, char *err, size_t errsz)
{
	struct sbx_steps s;
	struct tui_sandbox_jsteps j;

	(void)c;
	if (ad->provision == NULL) {
		snprintf(err, errsz, "adapter %s cannot provision", ad->name);
		return SBX_EUNAVAIL;
	}
	tui_sandbox_jsteps_init(&s, &j, st, req->id, true);
	return ad->provision(req, &s, out, err, errsz);
}

/* ---- preflight facts ---------------------------------------------------- */

static bool
regular(const char *p)
{
	struct stat sb;

	return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

char *
tui_sandbox_zone_program(const char *cmd0)
{
	static const char *const path[] = { "/usr/local/bin", "/usr/bin",
		"/bin" };
	static const char *const links[][2] = { { "/bin/", "/usr/bin/" },
		{ "/sbin/", "/usr/sbin/" }, { "/lib/", "/usr/lib/" },
		{ "/lib64/", "/usr/lib64/" } };
	char *p = NULL;

	if (cmd0 == NULL || *cmd0 == '\0')
		return NULL;
	if (cmd0[0] == '/') {
		if (strncmp(cmd0, "/usr/", 5) == 0)
			return regular(cmd0) ? strdup(cmd0) : NULL;
		for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
			size_t n = strlen(links[i][0]);

			if (strncmp(cmd0, links[i][0], n) == 0 &&
			    asprintf(&p, "%s%s", links[i][1], cmd0 + n) > 0) {
				if (regular(p))
					return p;
				free(p);
				return NULL;
			}
		}
		return NULL;
	}
	if (strchr(cmd0, '/') != NULL)
		return NULL;	/* relative to /work: the agent's own file */
	for (size_t i = 0; i < sizeof path / sizeof path[0]; i++) {
		if (asprintf(&p, "%s/%s", path[i], cmd0) < 0)
			return NULL;
		if (strncmp(p, "/bin/", 5) == 0) {
			char *q = NULL;

			if (asprintf(&q, "/usr%s", p) < 0)
				q = NULL;
			free(p);
			p = q;
		}
		if (p != NULL && executable(p))
			return p;
		free(p);
		p = NULL;
	}
	return NULL;
}

json_t *
tui_sandbox_facts_json(const struct sbx_facts *f, const char *init,
    const char *cmd0)
{
	char hex[65], *prog;
	json_t *j = json_object();

	if (j == NULL)
		return NULL;
	json_object_set_new(j, "kernel", json_string(f->kernel));
	json_object_set_new(j, "bwrap_path", json_string(f->bwrap_path));
	json_object_set_new(j, "bwrap_version", json_string(f->bwrap_version));
	json_object_set_new(j, "bwrap_sha256", json_string(f->bwrap_sha256));
	json_object_set_new(j, "filter_sha256", json_string(f->filter_sha256));
	json_object_set_new(j, "policy_sha256", json_string(f->policy_sha256));
	json_object_set_new(j, "cgroup_mode", json_string(f->cgroup_mode));
	json_object_set_new(j, "landlock_abi", json_integer(f->landlock_abi));
	json_object_set_new(j, "legacy_tiocsti",
	    json_integer(f->legacy_tiocsti));
	json_object_set_new(j, "corral_version",
	    json_string(f->corral_version));
	json_object_set_new(j, "verified", json_boolean(f->verified));
	json_object_set_new(j, "init_sha256", init != NULL &&
	    tui_sandbox_sha256_file(init, hex) == 0 ? json_string(hex) :
						   json_null());
	prog = tui_sandbox_zone_program(cmd0);
	json_object_set_new(j, "agent_path", prog ? json_string(prog) :
						    json_null());
	json_object_set_new(j, "agent_sha256", prog != NULL &&
	    tui_sandbox_sha256_file(prog, hex) == 0 ? json_string(hex) :
						   json_null());
	free(prog);
	return j;
}

/* ---- policy ---------------------------------------------------------------- */

#define POLICY_MAX (1u << 20)

static int
policy_path(char *buf, size_t sz)
{
	return tui_config_file("policy.ini", buf, sz);
}

static int
read_policy(const char *path, char **text, struct sbx_policy_error *err)
{
	int rc = tui_sandbox_read_file(path, POLICY_MAX, text, NULL);

	if (rc < 0) {
		snprintf(err->file, sizeof err->file, "%s", path);
		err->line = 0;
		snprintf(err->msg, sizeof err->msg, "%s", rc == -EFBIG ?
		    "larger than 1 MiB" : strerror(-rc));
	}
	return rc;
}

void
tui_sandbox_policy_src_clear(struct tui_sandbox_policy_src *src)
{
	free(src->op_text);
	free(src->file_text);
	memset(src, 0, sizeof *src);
}

int
tui_sandbox_policy_read(const char *file, struct tui_sandbox_policy_src *src,
    struct sbx_policy_error *err)
{
	int rc;

	memset(src, 0, sizeof *src);
	memset(err, 0, sizeof *err);
	/* The operator's, when there is one; else the shipped defaults. */
	if (policy_path(src->op_name, sizeof src->op_name) == 0 &&
	    access(src->op_name, F_OK) == 0 &&
	    (rc = read_policy(src->op_name, &src->op_text, err)) < 0)
		return rc;
	if (file != NULL) {
		snprintf(src->file_name, sizeof src->file_name, "%s", file);
		if ((rc = read_policy(file, &src->file_text, err)) < 0) {
			tui_sandbox_policy_src_clear(src);
			return rc;
		}
	}
	return 0;
}

int
tui_sandbox_policy_build(const struct tui_sandbox_policy_src *src,
    struct sbx_policy **out, struct sbx_policy_error *err)
{
	struct sbx_policy *op = NULL;
	int rc;

	*out = NULL;
	memset(err, 0, sizeof *err);
	if (src->op_text != NULL)
		rc = sbx_policy_load(src->op_text, src->op_name, NULL, &op,
		    err);
	else
		rc = (op = sbx_policy_new_default()) != NULL ? 0 : -ENOMEM;
	if (rc < 0)
		return rc;
	if (src->file_text == NULL) {
		*out = op;
		return 0;
	}
	/* A lease's own policy may only narrow the operator's (SPEC 8.6). */
	rc = sbx_policy_narrow(op, src->file_text, src->file_name, out, err);
	sbx_policy_free(op);
	return rc;
}

int
tui_sandbox_policy(const char *file, struct sbx_policy **out,
    struct sbx_policy_error *err)
{
	struct tui_sandbox_policy_src src;
	int rc;

	*out = NULL;
	if ((rc = tui_sandbox_policy_read(file, &src, err)) < 0)
		return rc;
	rc = tui_sandbox_policy_build(&src, out, err);
	tui_sandbox_policy_src_clear(&src);
	return rc;
}

/* ---- the policy as text the journal keeps ---------------------------- */

struct tbuf {
	char *p;
	size_t len;
	bool oom;
};

static void
tput(struct tbuf *b, const char *fmt, ...) __attribute__((format(printf, 2,
    3)));

static void
tput(struct tbuf *b, const char *fmt, ...)
{
	va_list ap;
	char *np;
	int n;

	if (b->oom)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || (np = realloc(b->p, b->len + (size_t)n + 1)) == NULL) {
		b->oom = true;
		return;
	}
	b->p = np;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* One item per line: a repeated list key continues the list. */
static void
tlist(struct tbuf *b, const char *key, char *const *v, size_t n)
{
	if (n == 0)
		tput(b, "%s =\n", key);
	for (size_t i = 0; i < n; i++)
		tput(b, "%s = %s\n", key, v[i]);
}

char *
tui_sandbox_policy_text(const struct sbx_policy *p)
{
	const struct sbx_limits *l = &p->limits;
	struct tbuf b = { 0 };

	tput(&b, "# the lease's effective policy\n[network]\n");
	tlist(&b, "allow", p->net_allow, p->nnet_allow);
	tput(&b, "on_egress_violation = %s\nloopback_port = %u\n",
	    p->on_egress == SBX_EGRESS_RECORD ? "record" : "fail",
	    p->loopback_port);
	tput(&b, "[limits]\nwall_time = %llu\ncpu_time = %llu\n"
	    "cpu = %llu.%03llu\nmemory = %llu\nswap = %llu\npids = %llu\n"
	    "disk = %llu\ninodes = %llu\noutput = %llu\nfile_size = %llu\n"
	    "nofile = %llu\ntmp = %llu\nhome = %llu\n", l->wall_time,
	    l->cpu_time, l->cpu_milli / 1000, l->cpu_milli % 1000, l->memory,
	    l->swap, l->pids, l->disk, l->inodes, l->output, l->file_size,
	    l->nofile, l->tmp, l->home);
	tput(&b, "[env]\n");
	tlist(&b, "allow", p->env_allow, p->nenv_allow);
	tput(&b, "[mounts]\n");
	tlist(&b, "ro", p->mounts_ro, p->nmounts_ro);
	tput(&b, "[checks]\ntimeout = %llu\n", p->check_timeout);
	for (size_t i = 0; i < p->nchecks; i++)
		tput(&b, "%s = %s\n", p->checks[i].name, p->checks[i].cmd);
	tput(&b, "[result]\nmax_files = %llu\nmax_file_bytes = %llu\n"
	    "max_total_bytes = %llu\nallow_binary = %s\n"
	    "allow_symlinks = %s\n", p->max_files, p->max_file_bytes,
	    p->max_total_bytes, p->allow_binary ? "true" : "false",
	    p->allow_symlinks ? "true" : "false");
	if (p->output_dir[0] != '\0')
		tput(&b, "output_dir = %s\n", p->output_dir);
	if (p->keep_workspace)
		tput(&b, "keep_workspace = true\n");
	if (p->git_history == SBX_HISTORY_ALL)
		tput(&b, "[git]\nhistory = all\n");
	else
		tput(&b, "[git]\nhistory = %llu\n", p->git_history);
	if (p->spend_cap != 0) {
		char usd[32];

		sbx_policy_usd(p->spend_cap, usd, sizeof usd);
		tput(&b, "[model]\nspend_cap = %s\n", usd);
	}
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

/* ---- the bounded workspace --------------------------------------------- */

int
tui_sandbox_workspace_release(struct tui_ctx *c, const char *id, char *err,
    size_t errsz)
{
	char *ws = lease_path_workspace(c->state_dir, id);
	int rc = 0;

	if (ws == NULL)
		return -ENOMEM;
	if ((rc = sbx_workspace_release(ws)) < 0)
		snprintf(err, errsz, "%s: %s", ws, strerror(-rc));
	free(ws);
	return rc;
}
