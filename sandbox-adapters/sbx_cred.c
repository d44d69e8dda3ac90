/*
 * sbx_cred.c: minted credentials (SPEC 8.5). The operator's mint hook
 * yields one short-lived credential for a lease; it lives in a 0600 file in
 * the lease directory (so a revoke after a crash can find it) and reaches
 * the agent zone as one variable through a --ro-bind-data memfd that
 * corral-sbx-init turns into the agent's environment; no argv ever holds
 * it. The revoke hook gets it on stdin. The scrubber (sbx_scrub.c) replaces
 * it in every stream corral stores or prints.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"
#include "sandbox-adapters/sbx_int.h"

#define HOOK_OUT_MAX (SBX_CRED_MAX + 2)

/* ------------------------------------------------------------------ */
/* Mint, store, inject, revoke.                                        */

static bool
var_ok(const char *v)
{
	if (v == NULL || !((*v >= 'A' && *v <= 'Z') || *v == '_'))
		return false;
	for (const char *c = v; *c != '\0'; c++) {
		if (!((*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		    *c == '_'))
			return false;
	}
	return strlen(v) < SBX_CRED_VAR_MAX;
}

/* A visible, single-token value (no blanks, controls or quotes). */
static bool
value_ok(const char *v, size_t n)
{
	if (n == 0 || n > SBX_CRED_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)v[i];

		if (c <= 0x20 || c >= 0x7f)
			return false;
	}
	return true;
}

int
sbx_cred_config_check(const struct sbx_cred_config *c, char *why,
    size_t whysz)
{
	if (whysz > 0)
		why[0] = '\0';
	if (c == NULL || c->mint == NULL || *c->mint == '\0')
		return 0;	/* no credentials: nothing to check */
	if (c->revoke == NULL || *c->revoke == '\0') {
		snprintf(why, whysz, "[credentials] mint needs a revoke hook "
		    "(revoke runs on every exit path)");
		return SBX_EPOLICY;
	}
	if (!var_ok(c->variable)) {
		snprintf(why, whysz, "[credentials] variable must be an "
		    "upper-case NAME");
		return SBX_EPOLICY;
	}
	if (c->spend_cap != NULL && strpbrk(c->spend_cap, "\n\r") != NULL) {
		snprintf(why, whysz, "[credentials] spend_cap is one line");
		return SBX_EPOLICY;
	}
	return 0;
}

static int
cred_path(char *buf, size_t sz, const char *lease_dir)
{
	if (lease_dir == NULL || lease_dir[0] != '/')
		return -EINVAL;
	if ((size_t)snprintf(buf, sz, "%s/" SBX_CRED_FILE, lease_dir) >= sz)
		return -ENAMETOOLONG;
	return 0;
}

static int
store(const char *path, const char *value, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600), rc = 0;
	size_t off = 0;

	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0600) < 0)
		rc = -errno;
	while (rc == 0 && off < n) {
		ssize_t w = write(fd, value + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			rc = w < 0 ? -errno : -EIO;
		else
			off += (size_t)w;
	}
	if (rc == 0 && (write(fd, "\n", 1) != 1 || fsync(fd) < 0))
		rc = -EIO;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc < 0)
		unlink(path);
	return rc;
}

void
sbx_cred_free(struct sbx_cred *c)
{
	if (c == NULL)
		return;
	if (c->value != NULL) {
		explicit_bzero(c->value, strlen(c->value));
		free(c->value);
	}
	explicit_bzero(c, sizeof *c);
	free(c);
}

int
sbx_cred_mint(const struct sbx_cred_config *cfg, const char *id,
    const char *lease_dir, unsigned long long wall_time_s,
    struct sbx_cred **out, char *why, size_t whysz)
{
	char path[4096], elease[256], elife[64], ecap[192], escope[192];
	char life[32];
	const char *extra[5], *args[5];
	struct sbx_cred *c = NULL;
	struct sbx__hook r;
	unsigned long long lifetime;
	size_t n;
	int rc;

	memset(&r, 0, sizeof r);
	if (whysz > 0)
		why[0] = '\0';
	if (cfg == NULL || out == NULL || id == NULL || *id == '\0' ||
	    strpbrk(id, "/\n") != NULL)
		return -EINVAL;
	*out = NULL;
	if ((rc = sbx_cred_config_check(cfg, why, whysz)) < 0)
		return rc;
	if (cfg->mint == NULL || *cfg->mint == '\0')
		return -EINVAL;
	if ((rc = cred_path(path, sizeof path, lease_dir)) < 0)
		return rc;
	/* Never longer than the lease may live (SPEC 8.5). */
	lifetime = cfg->lifetime_s;
	if (wall_time_s > 0 && (lifetime == 0 || lifetime > wall_time_s))
		lifetime = wall_time_s;
	if (lifetime == 0) {
		snprintf(why, whysz, "no lifetime: set [credentials] lifetime "
		    "or a wall_time limit");
		return SBX_EPOLICY;
	}
	snprintf(life, sizeof life, "%llu", lifetime);
	snprintf(elease, sizeof elease, "CORRAL_LEASE_ID=%s", id);
	snprintf(elife, sizeof elife, "CORRAL_CRED_LIFETIME=%s", life);
	snprintf(ecap, sizeof ecap, "CORRAL_CRED_SPEND_CAP=%s",
	    cfg->spend_cap ? cfg->spend_cap : "");
	snprintf(escope, sizeof escope, "CORRAL_CRED_SCOPE=%s",
	    cfg->scope ? cfg->scope : "");
	extra[0] = elease;
	extra[1] = elife;
	extra[2] = ecap;
	extra[3] = escope;
	extra[4] = NULL;
	args[0] = "corral-mint";
	args[1] = id;
	args[2] = life;
	args[3] = cfg->spend_cap ? cfg->spend_cap : "";
	args[4] = NULL;
	if ((rc = sbx__hook_run(cfg->mint, args, extra, NULL, 0,
	    cfg->timeout_ms, HOOK_OUT_MAX, &r)) < 0) {
		snprintf(why, whysz, "mint hook: %s", strerror(-rc));
		return rc;
	}
	/* Exactly one line: the credential. */
	n = r.outlen;
	if (n > 0 && r.out[n - 1] == '\n')
		n--;
	if (n > 0 && r.out[n - 1] == '\r')
		n--;
	r.out[n] = '\0';
	if (r.timed_out || !WIFEXITED(r.status) ||
	    WEXITSTATUS(r.status) != 0) {
		sbx__hook_why(why, whysz, "mint", &r, n > 0 ? r.out : NULL);
		rc = SBX_EPROBE;
		goto out;
	}
	if (r.out_over || !value_ok(r.out, n)) {
		snprintf(why, whysz, "mint hook must print one credential "
		    "(1..%d visible characters, no blanks) and a newline",
		    SBX_CRED_MAX);
		rc = SBX_EPROBE;
		goto out;
	}
	if ((c = calloc(1, sizeof *c)) == NULL ||
	    (c->value = strdup(r.out)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = sbx_sha256_hex(c->value, n, c->fingerprint)) < 0)
		goto out;
	snprintf(c->variable, sizeof c->variable, "%s", cfg->variable);
	snprintf(c->scope, sizeof c->scope, "%s", cfg->scope ?
	    cfg->scope : "");
	snprintf(c->spend_cap, sizeof c->spend_cap, "%s", cfg->spend_cap ?
	    cfg->spend_cap : "");
	c->lifetime_s = lifetime;
	c->expires = (long long)time(NULL) + (long long)lifetime;
	if ((rc = store(path, c->value, n)) < 0) {
		snprintf(why, whysz, "%s: %s", path, strerror(-rc));
		goto out;
	}
	*out = c;
	c = NULL;
	rc = 0;
out:
	sbx__hook_clear(&r);
	sbx_cred_free(c);
	return rc;
}

/* The stored value (one line), malloc'd; -ENOENT when there is none. */
static int
load(const char *path, char **value)
{
	char buf[SBX_CRED_MAX + 2];
	struct stat sb;
	size_t len = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) ||
	    (sb.st_mode & 077) != 0 || sb.st_uid != geteuid()) {
		close(fd);
		return -EPERM;
	}
	while (len < sizeof buf - 1 &&
	    (n = read(fd, buf + len, sizeof buf - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	buf[len] = '\0';
	if (!value_ok(buf, len)) {
		explicit_bzero(buf, sizeof buf);
		return -EINVAL;
	}
	*value = strdup(buf);
	explicit_bzero(buf, sizeof buf);
	return *value != NULL ? 0 : -ENOMEM;
}

int
sbx_cred_read(const char *lease_dir, char **value)
{
	char path[4096];
	int rc;

	if (value == NULL)
		return -EINVAL;
	*value = NULL;
	if ((rc = cred_path(path, sizeof path, lease_dir)) < 0)
		return rc;
	return load(path, value);
}

bool
sbx_cred_present(const char *lease_dir)
{
	char path[4096];
	struct stat sb;

	return cred_path(path, sizeof path, lease_dir) == 0 &&
	    lstat(path, &sb) == 0;
}

int
sbx_cred_revoke(const struct sbx_cred_config *cfg, const char *id,
    const char *lease_dir, char *why, size_t whysz)
{
	char path[4096], elease[256], efp[128];
	char fp[SBX_SHA256_HEX];
	const char *extra[3], *args[4];
	struct sbx__hook r;
	char *value = NULL;
	int rc;

	memset(&r, 0, sizeof r);

	if (whysz > 0)
		why[0] = '\0';
	if (id == NULL || *id == '\0' || strpbrk(id, "/\n") != NULL)
		return -EINVAL;
	if ((rc = cred_path(path, sizeof path, lease_dir)) < 0)
		return rc;
	if ((rc = load(path, &value)) == -ENOENT)
		return 0;	/* nothing minted, or already revoked */
	if (rc < 0) {
		snprintf(why, whysz, "%s: %s", path, strerror(-rc));
		return rc;
	}
	if (cfg == NULL || cfg->revoke == NULL || *cfg->revoke == '\0') {
		/* Keep the file: a configured revoke can still run later. */
		snprintf(why, whysz, "a credential was minted and no revoke "
		    "hook is configured");
		rc = SBX_EPOLICY;
		goto out;
	}
	if ((rc = sbx_sha256_hex(value, strlen(value), fp)) < 0)
		goto out;
	snprintf(elease, sizeof elease, "CORRAL_LEASE_ID=%s", id);
	snprintf(efp, sizeof efp, "CORRAL_CRED_FINGERPRINT=%s", fp);
	extra[0] = elease;
	extra[1] = efp;
	extra[2] = NULL;
	args[0] = "corral-revoke";
	args[1] = id;
	args[2] = fp;
	args[3] = NULL;
	/* The value on stdin, never on an argv. */
	if ((rc = sbx__hook_run(cfg->revoke, args, extra, value,
	    strlen(value), cfg->timeout_ms, 1024, &r)) < 0) {
		snprintf(why, whysz, "revoke hook: %s", strerror(-rc));
		goto out;
	}
	if (r.timed_out || !WIFEXITED(r.status) ||
	    WEXITSTATUS(r.status) != 0) {
		sbx__hook_why(why, whysz, "revoke", &r, value);
		rc = SBX_EPROBE;	/* kept: a later revoke retries */
		goto out;
	}
	if (unlink(path) < 0 && errno != ENOENT) {
		rc = -errno;
		snprintf(why, whysz, "%s: %s", path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (value != NULL) {
		explicit_bzero(value, strlen(value));
		free(value);
	}
	sbx__hook_clear(&r);
	return rc;
}

int
sbx_cred_plan_add(struct sbx_plan *p, const struct sbx_cred *c)
{
	char fd[16];
	const char *opts[] = { "--perms", "0400", "--ro-bind-data", fd,
		SBX_CRED_IN };
	const char *init[] = { "--cred-env", NULL };
	int rc;

	if (p == NULL || c == NULL || c->value == NULL ||
	    !var_ok(c->variable) || !value_ok(c->value, strlen(c->value)))
		return -EINVAL;
	init[1] = c->variable;
	snprintf(fd, sizeof fd, "%d", SBX_CRED_FD);
	for (int i = 0; i < p->ndata; i++) {
		if (p->data[i].fd >= 0)
			return -EBUSY;
	}
	if ((rc = sbx_plan_data(p, SBX_CRED_FD, c->value,
	    strlen(c->value))) < 0)
		return rc;
	if ((rc = sbx__egress_plan_insert(p, opts, 5, init, 2)) < 0) {
		/* Take the data back out: the plan stays as it was. */
		struct sbx_data *d = &p->data[--p->ndata];

		explicit_bzero(d->bytes, d->len);
		free(d->bytes);
		memset(d, 0, sizeof *d);
		d->fd = -1;
	}
	return rc;
}
