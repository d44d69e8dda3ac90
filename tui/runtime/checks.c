/*
 * checks.c: the results layer (lease/, SPEC 7) wired to the sandbox
 * module: the lease's policy turned into result caps and checks, the
 * check runner (each check in the exec zone through sbx_bwrap_exec_plan and
 * sbx_exec_run, as a uid slot of its own, on a fresh copy of the result
 * tree) and tui_checks_finish, the one call the holder makes when its
 * agent has ended (and reconciliation makes for a lost holder).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lease/lease.h"
#include "lease/result/result.h"
#include "sandbox-adapters/sbx.h"
#include "tui/runtime/runtime_int.h"

extern char **environ;

#define RESULT_RUN_DIR "/run/corral"		/* machine-wide, 0755 */
#define RESULT_CHECKS_DIR RESULT_RUN_DIR "/checks"
#define RESULT_CHECK_TIMEOUT_MS (30ull * 60 * 1000)
#define RESULT_TREE_DEPTH 512

struct tui_checks_env {
	struct sbx_policy *sbx;
	struct lease_result_policy pol;
	struct lease_check *checks;
	char **argvs;		/* 3 per check: /bin/sh -c CMD */
	char *policy_err;
	struct lease_flag_rules rules;	/* shipped and the operator's */
};

void
tui_checks_env_free(struct tui_checks_env *e)
{
	if (e == NULL)
		return;
	sbx_policy_free(e->sbx);
	free(e->checks);
	free(e->argvs);
	free(e->policy_err);
	lease_gate_rules_free(&e->rules);
	free(e);
}

const struct lease_result_policy *
tui_checks_env_policy(const struct tui_checks_env *e)
{
	return &e->pol;
}

#define REVIEW_FLAGS_MAX (1u << 20)

int
tui_checks_review_flags(struct lease_flag_rules *out, char *err, size_t errsz)
{
	char path[4096], *text = NULL;
	size_t len = 0;
	int rc;

	memset(out, 0, sizeof *out);
	rc = tui_config_file("review-flags", path, sizeof path);
	if (rc == 0 && (rc = tui_sandbox_read_file(path, REVIEW_FLAGS_MAX,
	    &text, &len)) < 0 && rc != -ENOENT) {
		snprintf(err, errsz, "%s: %s", path, rc == -EFBIG ?
		    "larger than 1 MiB" : strerror(-rc));
		return rc;
	}
	if (text != NULL && strlen(text) != len) {
		snprintf(err, errsz, "%s: a NUL byte in the file", path);
		free(text);
		return -EINVAL;
	}
	rc = lease_result_flag_rules_load(out, text, path, err, errsz);
	free(text);
	return rc;
}

int
tui_checks_env_new(const struct lease_record *r, struct tui_checks_env **out,
    char *err, size_t errsz)
{
	struct sbx_policy_error perr;
	struct tui_checks_env *e;
	size_t i;
	int rc = 0;

	*out = NULL;
	if ((e = calloc(1, sizeof *e)) == NULL)
		return -ENOMEM;
	lease_result_policy_defaults(&e->pol);
	if ((rc = tui_checks_review_flags(&e->rules, err, errsz)) < 0) {
		tui_checks_env_free(e);
		return rc;
	}
	e->pol.flag_rules = &e->rules;
	memset(&perr, 0, sizeof perr);
	if (r->policy != NULL && *r->policy != '\0')
		rc = sbx_policy_load(r->policy, "lease policy", NULL, &e->sbx,
		    &perr);
	else if ((e->sbx = sbx_policy_new_default()) == NULL)
		rc = -ENOMEM;
	if (rc < 0) {
		snprintf(err, errsz, "policy: %s:%d: %s", perr.file, perr.line,
		    perr.msg);
		tui_checks_env_free(e);
		return rc;
	}
	if (e->sbx->max_files > 0)
		e->pol.max_files = e->sbx->max_files;
	if (e->sbx->max_file_bytes > 0)
		e->pol.max_file_bytes = e->sbx->max_file_bytes;
	if (e->sbx->max_total_bytes > 0)
		e->pol.max_total_bytes = e->sbx->max_total_bytes;
	if (e->sbx->output_dir[0] != '\0')
		e->pol.output_dir = e->sbx->output_dir;
	/* a patch of the total plus its framing */
	if (e->pol.max_total_bytes * 2 > e->pol.max_patch_bytes)
		e->pol.max_patch_bytes = e->pol.max_total_bytes * 2;
	e->pol.allow_binary = e->sbx->allow_binary;
	e->pol.allow_symlinks = e->sbx->allow_symlinks;
	if (e->sbx->nchecks > 0) {
		e->checks = calloc(e->sbx->nchecks, sizeof *e->checks);
		e->argvs = calloc(e->sbx->nchecks * 4, sizeof *e->argvs);
		if (e->checks == NULL || e->argvs == NULL) {
			tui_checks_env_free(e);
			return -ENOMEM;
		}
		for (i = 0; i < e->sbx->nchecks; i++) {
			e->argvs[4 * i] = "/bin/sh";
			e->argvs[4 * i + 1] = "-c";
			e->argvs[4 * i + 2] = e->sbx->checks[i].cmd;
			e->argvs[4 * i + 3] = NULL;
			e->checks[i].name = e->sbx->checks[i].name;
			e->checks[i].argv = &e->argvs[4 * i];
		}
		e->pol.checks = e->checks;
		e->pol.nchecks = e->sbx->nchecks;
	}
	*out = e;
	return 0;
}

/* chown a fresh tree we wrote ourselves, without following links. */
static int
chown_tree(int dirfd, const char *name, uid_t uid, gid_t gid, int depth)
{
	struct dirent *d;
	struct stat sb;
	DIR *dir;
	int fd, rc = 0;

	if (depth > RESULT_TREE_DEPTH)
		return -ELOOP;
	if (fchownat(dirfd, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISDIR(sb.st_mode))
		return 0;
	if ((fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) < 0)
		return -errno;
	if ((dir = fdopendir(fd)) == NULL) {
		close(fd);
		return -errno;
	}
	while (rc == 0 && (d = readdir(dir)) != NULL)
		if (strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0)
			rc = chown_tree(fd, d->d_name, uid, gid, depth + 1);
	closedir(dir);
	return rc;
}

/* The exec zone's tools, as one short line for the receipt. */
static void
tool_versions(char *out, size_t sz)
{
	char *text = NULL, *p;

	out[0] = '\0';
	if (sbx_exec_tool_versions(&text) < 0 || text == NULL)
		return;
	for (p = text; *p != '\0'; p++)
		if (*p == '\n')
			*p = ';';
	snprintf(out, sz, "tools: %s", text);
	free(text);
}

int
tui_checks_run(const struct lease_check_run *run,
    struct lease_check_outcome *oc, void *ud)
{
	struct tui_checks_env *e = ud;
	struct sbx_exec_opts eo;
	struct sbx_exec_result res;
	struct sbx_request req;
	struct sbx_mount mnt[64];
	struct sbx_plan *plan = NULL;
	char **env = NULL;
	unsigned slot = 0;
	size_t i, n;
	uid_t uid;
	gid_t gid;
	int rc, ws;

	memset(&res, 0, sizeof res);
	/*
	 * A uid of its own for the run, never another lease's, its claim
	 * scoped to the run's copy: no state directory names it as its own.
	 */
	if ((rc = sbx_uid_claim(SBX_UID_DIR, run->dir, run->id, &slot)) < 0) {
		oc->status = LEASE_CHECK_ERROR;
		snprintf(oc->detail, sizeof oc->detail, "no uid slot: %s",
		    sbx_strerror(rc));
		return 0;
	}
	if ((rc = sbx_uid_of_slot(slot, &uid, &gid)) < 0 ||
	    (rc = chown_tree(AT_FDCWD, run->dir, uid, gid, 0)) < 0) {
		oc->status = LEASE_CHECK_ERROR;
		snprintf(oc->detail, sizeof oc->detail, "cannot hand the copy "
		    "to uid %u: %s", (unsigned)uid, strerror(-rc));
		goto out;
	}
	memset(&req, 0, sizeof req);
	req.id = run->id;
	req.workspace = run->dir;
	req.cmd = run->check->argv;
	req.uid = uid;
	req.gid = gid;
	req.limits = &e->sbx->limits;
	req.source_date_epoch = run->source_date_epoch;
	req.faketime = sbx_bwrap_faketime_path();
	for (i = 0, n = 0; i < e->sbx->nmounts_ro && n < 64; i++, n++) {
		mnt[n].src = e->sbx->mounts_ro[i];
		mnt[n].dst = e->sbx->mounts_ro[i];
	}
	req.ro_binds = mnt;
	req.nro_binds = (int)n;
	if ((rc = sbx_policy_env(e->sbx, environ, &env)) == 0) {
		req.env = env;
		rc = sbx_bwrap_exec_plan(&req, &plan);
	}
	if (rc < 0) {
		oc->status = LEASE_CHECK_ERROR;
		snprintf(oc->detail, sizeof oc->detail, "exec zone: %s",
		    sbx_strerror(rc));
		goto out;
	}
	memset(&eo, 0, sizeof eo);
	eo.cap = run->log_max;
	eo.timeout_ms = e->sbx->limits.wall_time > 0 ?
	    e->sbx->limits.wall_time * 1000 : RESULT_CHECK_TIMEOUT_MS;
	eo.stdin_fd = -1;
	if ((rc = sbx_exec_run(plan, &eo, &res)) < 0) {
		oc->status = LEASE_CHECK_ERROR;
		snprintf(oc->detail, sizeof oc->detail, "cannot start: %s",
		    sbx_strerror(rc));
		goto out;
	}
	oc->faketime = req.faketime != NULL;
	oc->duration_ms = (int64_t)res.wall_ms;
	oc->log_truncated = res.truncated;
	n = res.out_len < run->log_max ? res.out_len : run->log_max;
	memcpy(run->log, res.out, n);
	ws = n + res.err_len < run->log_max ? (int)res.err_len :
	    (int)(run->log_max - n);
	memcpy(run->log + n, res.err, (size_t)ws);
	oc->log_len = n + (size_t)ws;
	if (WIFEXITED(res.wstatus)) {
		oc->exit_code = WEXITSTATUS(res.wstatus);
		oc->status = oc->exit_code == 0 && !res.timed_out ?
		    LEASE_CHECK_PASS : LEASE_CHECK_FAIL;
	} else {
		oc->signal = WIFSIGNALED(res.wstatus) ? WTERMSIG(res.wstatus) :
		    0;
		oc->status = LEASE_CHECK_FAIL;
	}
	if (res.timed_out)
		snprintf(oc->detail, sizeof oc->detail, "timed out");
	else
		tool_versions(oc->detail, sizeof oc->detail);
out:
	sbx_exec_result_clear(&res);
	sbx_plan_free(plan);
	sbx_strv_free(env);
	TUI_BEST_EFFORT(sbx_uid_release(SBX_UID_DIR, slot, run->dir, run->id));
	return 0;
}

/* Where check copies go: reachable by the check's uid (0711 parents). */
const char *
tui_checks_dir(void)
{
	if (mkdir(RESULT_RUN_DIR, 0755) < 0 && errno != EEXIST)
		return NULL;
	if (mkdir(RESULT_CHECKS_DIR, 0711) < 0 && errno != EEXIST)
		return NULL;
	return RESULT_CHECKS_DIR;
}

int
tui_checks_finish(struct tui_ctx *c, const char *id, const char *fail_reason,
    const char *secret)
{
	struct lease_result_policy pol;
	struct lease_result_opts o;
	struct tui_checks_env *e = NULL;
	struct lease_record r;
	char err[512];
	int rc;

	if (tui_ctx_store(c) == NULL)
		return -EIO;
	if ((rc = lease_record_get(c->store, id, &r)) < 0)
		return rc;
	rc = tui_checks_env_new(&r, &e, err, sizeof err);
	lease_record_clear(&r);
	if (rc < 0) {
		fprintf(stderr, "corral: lease %s: %s\n", id, err);
		return rc;
	}
	memset(&o, 0, sizeof o);
	pol = *tui_checks_env_policy(e);
	pol.secret = secret;	/* SPEC 8.5: refused in any result */
	o.policy = &pol;
	o.run_check = tui_checks_run;
	o.ud = e;
	o.fail_reason = fail_reason;
	o.checks_dir = tui_checks_dir();
	lease_git_init();
	rc = lease_result_finish(c->store, c->state_dir, id, &o);
	lease_git_shutdown();
	tui_checks_env_free(e);
	return rc;
}

int
tui_checks_before_teardown(const char *id, void *ud)
{
	struct tui_ctx *c = ud;
	char *ws = lease_path_workspace(c->state_dir, id);
	int rc = 0;

	if (ws == NULL)
		return -ENOMEM;
	/* a bwrap lease's workspace is an ext4 image mounted there */
	if ((rc = sbx_workspace_release(ws)) < 0)
		fprintf(stderr, "corral: %s: cannot unmount the workspace: "
		    "%s\n", ws, strerror(-rc));
	free(ws);
	return rc;
}
