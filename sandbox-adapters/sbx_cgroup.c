/*
 * sbx_cgroup.c: per-lease cgroups (SPEC 8.4, 9.2; SANDBOX.md 3.6): mode
 * detection, `corral/state-<tag>/lease-<id>` under corral's own cgroup in
 * each controller (the tag names the state directory that owns it, SPEC
 * 9.2), locating a lease's cgroups, their journal form and the listing of
 * one state directory's cgroups for reconciliation. Making them with
 * their limits and reading their counters is sbx_cgroup_limits.c; the
 * signals and teardown by exact ID are sbx_cgroup_kill.c. v1 is what this
 * host enforces; the v2 path is written to the same contract but untested
 * here.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"
#include "sandbox-adapters/sbx_cgroup_int.h"

#define CG_ROOT "/sys/fs/cgroup"
#define CG_SUB "corral"
#define CG_PREFIX "lease-"
#define CG_STATE "state-"
#define TAG_HEX 16	/* hex digits of the state directory's tag */

/* v1 controllers: the four that enforce, and cpuacct for accounting. */
static const struct {
	const char *name;
	bool required;
} v1_ctrls[] = {
	{ "memory", true },
	{ "pids", true },
	{ "cpu", true },
	{ "freezer", true },
	{ "cpuacct", false },
};
#define NV1 (sizeof v1_ctrls / sizeof v1_ctrls[0])

/* Where each hierarchy is mounted and where this process sits in it. */
struct hier {
	char mnt[256];		/* mount point */
	char root[256];		/* the mount's root within the hierarchy */
	char self[512];		/* this process's cgroup in the hierarchy */
	bool found;
};

struct layout {
	struct hier v1[NV1];
	struct hier v2;
	bool v2_ctrls;		/* cgroup2 has memory, pids and cpu */
};

/* ---- small file helpers ------------------------------------------------ */

int
sbx__read_file(const char *path, char *buf, size_t sz)
{
	size_t off = 0;
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	while (off + 1 < sz) {
		n = read(fd, buf + off, sz - 1 - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			close(fd);
			return (int)n;
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	buf[off] = '\0';
	close(fd);
	return (int)off;
}

static int
write_file(const char *path, const char *s)
{
	size_t len = strlen(s);
	ssize_t n;
	int fd, rc = 0;

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return -errno;
	do
		n = write(fd, s, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		rc = -errno;
	else if ((size_t)n != len)
		rc = -EIO;
	close(fd);
	return rc;
}

int
sbx__cgroup_write_at(const char *dir, const char *file, const char *s)
{
	char path[1024];

	snprintf(path, sizeof path, "%s/%s", dir, file);
	return write_file(path, s);
}

bool
sbx__cgroup_exists_at(const char *dir, const char *file)
{
	char path[1024];

	snprintf(path, sizeof path, "%s/%s", dir, file);
	return access(path, F_OK) == 0;
}

/* ---- where things are --------------------------------------------------- */

bool
sbx__cgroup_id_ok(const char *id)
{
	size_t n;

	if (id == NULL || (n = strlen(id)) == 0 || n > 100 ||
	    strcmp(id, ".") == 0 || strcmp(id, "..") == 0)
		return false;
	for (; *id != '\0'; id++) {
		char c = *id;

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_' ||
		    c == '.'))
			return false;
	}
	return true;
}

static bool
has_opt(const char *opts, const char *want)
{
	size_t n = strlen(want);

	for (const char *p = opts; p != NULL && *p != '\0';) {
		if (strncmp(p, want, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return true;
		p = strchr(p, ',');
		if (p != NULL)
			p++;
	}
	return false;
}

/* Fill mount points from /proc/self/mountinfo. */
static int
scan_mounts(struct layout *l)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];

	if (f == NULL)
		return -errno;
	while (fgets(line, sizeof line, f) != NULL) {
		char root[256], mnt[256], fstype[64], super[512];
		char *dash = strstr(line, " - ");

		if (dash == NULL || sscanf(line, "%*s %*s %*s %255s %255s",
		    root, mnt) != 2 || sscanf(dash + 3, "%63s %*s %511s",
		    fstype, super) != 2)
			continue;
		if (strcmp(fstype, "cgroup") == 0) {
			for (size_t i = 0; i < NV1; i++) {
				if (l->v1[i].found ||
				    !has_opt(super, v1_ctrls[i].name))
					continue;
				snprintf(l->v1[i].mnt, sizeof l->v1[i].mnt,
				    "%s", mnt);
				snprintf(l->v1[i].root, sizeof l->v1[i].root,
				    "%s", root);
				l->v1[i].found = true;
			}
		} else if (strcmp(fstype, "cgroup2") == 0 && !l->v2.found) {
			snprintf(l->v2.mnt, sizeof l->v2.mnt, "%s", mnt);
			snprintf(l->v2.root, sizeof l->v2.root, "%s", root);
			l->v2.found = true;
		}
	}
	fclose(f);
	return 0;
}

/* Fill each hierarchy's own path from /proc/self/cgroup. */
static int
scan_self(struct layout *l)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[4096];

	if (f == NULL)
		return -errno;
	while (fgets(line, sizeof line, f) != NULL) {
		char *c1 = strchr(line, ':'), *c2, *nl;

		if (c1 == NULL || (c2 = strchr(c1 + 1, ':')) == NULL)
			continue;
		*c2 = '\0';
		if ((nl = strchr(c2 + 1, '\n')) != NULL)
			*nl = '\0';
		if (c1[1] == '\0') {
			snprintf(l->v2.self, sizeof l->v2.self, "%s", c2 + 1);
			continue;
		}
		for (size_t i = 0; i < NV1; i++) {
			if (has_opt(c1 + 1, v1_ctrls[i].name))
				snprintf(l->v1[i].self, sizeof l->v1[i].self,
				    "%s", c2 + 1);
		}
	}
	fclose(f);
	return 0;
}

static int
layout_read(struct layout *l)
{
	char path[512], buf[512];
	int rc;

	memset(l, 0, sizeof *l);
	if ((rc = scan_mounts(l)) < 0 || (rc = scan_self(l)) < 0)
		return rc;
	if (l->v2.found) {
		snprintf(path, sizeof path, "%s/cgroup.controllers", l->v2.mnt);
		if (sbx__read_file(path, buf, sizeof buf) > 0)
			l->v2_ctrls = strstr(buf, "memory") != NULL &&
			    strstr(buf, "pids") != NULL &&
			    strstr(buf, "cpu") != NULL;
	}
	return 0;
}

static enum sbx_cgroup_mode
layout_mode(const struct layout *l)
{
	bool v1 = true;

	for (size_t i = 0; i < NV1; i++) {
		if (v1_ctrls[i].required && !l->v1[i].found)
			v1 = false;
	}
	/* Hybrid hosts: the v1 controllers enforce; a bare v2 tree is not. */
	if (v1)
		return SBX_CGROUP_V1;
	if (l->v2.found && l->v2_ctrls)
		return SBX_CGROUP_V2;
	return SBX_CGROUP_NONE;
}

/* mnt + (self relative to the mount's root) + suffix. */
static int
hier_path(const struct hier *h, const char *suffix, char *out, size_t sz)
{
	const char *rel = h->self;
	size_t rl = strlen(h->root);

	if (strcmp(h->root, "/") != 0) {
		if (strncmp(rel, h->root, rl) != 0 ||
		    (rel[rl] != '/' && rel[rl] != '\0'))
			return -ENOENT;
		rel += rl;
	}
	if (strcmp(rel, "/") == 0)
		rel = "";
	if ((size_t)snprintf(out, sz, "%s%s%s", h->mnt, rel, suffix) >= sz)
		return -ENAMETOOLONG;
	return 0;
}

int
sbx_cgroup_detect(enum sbx_cgroup_mode *mode)
{
	struct layout l;
	int rc;

	if (mode == NULL)
		return -EINVAL;
	if ((rc = layout_read(&l)) < 0)
		return rc;
	*mode = layout_mode(&l);
	return 0;
}

const char *
sbx_cgroup_mode_name(enum sbx_cgroup_mode m)
{
	switch (m) {
	case SBX_CGROUP_V1:
		return "v1";
	case SBX_CGROUP_V2:
		return "v2";
	default:
		return "none";
	}
}

void
sbx_cgroup_free(struct sbx_cgroup *cg)
{
	if (cg == NULL)
		return;
	for (int i = 0; i < cg->n; i++)
		free(cg->c[i].dir);
	free(cg);
}

static int
cg_add(struct sbx_cgroup *cg, const char *ctrl, const char *dir)
{
	/* Co-mounted controllers (cpu,cpuacct) share one directory. */
	for (int i = 0; i < cg->n; i++) {
		if (strcmp(cg->c[i].dir, dir) == 0)
			return 0;
	}
	if (cg->n >= SBX_CGROUP_MAX)
		return -ENOSPC;
	if ((cg->c[cg->n].dir = strdup(dir)) == NULL)
		return -ENOMEM;
	snprintf(cg->c[cg->n].ctrl, sizeof cg->c[cg->n].ctrl, "%s", ctrl);
	cg->n++;
	return 0;
}

int
sbx_cgroup_scope_name(const char *scope, char *buf, size_t sz)
{
	char hex[SBX_SHA256_HEX];
	int rc;

	if (scope == NULL || scope[0] != '/' || buf == NULL ||
	    sz < sizeof CG_STATE + TAG_HEX)
		return -EINVAL;
	if ((rc = sbx_sha256_hex(scope, strlen(scope), hex)) < 0)
		return rc;
	snprintf(buf, sz, CG_STATE "%.*s", TAG_HEX, hex);
	return 0;
}

/* Is v1 controller i one of a tracking cgroup's (pids, freezer)? */
static bool
track_ctrl(size_t i)
{
	return strcmp(v1_ctrls[i].name, "pids") == 0 ||
	    strcmp(v1_ctrls[i].name, "freezer") == 0;
}

static int locate(const char *scope, const char *id, bool track,
    struct sbx_cgroup **out);

int
sbx_cgroup_locate(const char *scope, const char *id, struct sbx_cgroup **out)
{
	return locate(scope, id, false, out);
}

int
sbx_cgroup_locate_track(const char *scope, const char *id,
    struct sbx_cgroup **out)
{
	return locate(scope, id, true, out);
}

static int
locate(const char *scope, const char *id, bool track, struct sbx_cgroup **out)
{
	struct sbx_cgroup *cg;
	struct layout l;
	char suffix[200], dir[1024], tag[32];
	int rc;

	if (out == NULL)
		return -EINVAL;
	*out = NULL;
	if (!sbx__cgroup_id_ok(id) || sbx_cgroup_scope_name(scope, tag,
	    sizeof tag) < 0)
		return -EINVAL;
	if ((rc = layout_read(&l)) < 0)
		return rc;
	if ((cg = calloc(1, sizeof *cg)) == NULL)
		return -ENOMEM;
	cg->mode = layout_mode(&l);
	snprintf(cg->id, sizeof cg->id, "%s", id);
	snprintf(suffix, sizeof suffix, "/" CG_SUB "/%s/" CG_PREFIX "%s", tag,
	    id);
	if (cg->mode == SBX_CGROUP_V1) {
		for (size_t i = 0; i < NV1; i++) {
			if (!l.v1[i].found || (track && !track_ctrl(i)))
				continue;
			if ((rc = hier_path(&l.v1[i], suffix, dir,
			    sizeof dir)) < 0 || (rc = cg_add(cg,
			    v1_ctrls[i].name, dir)) < 0)
				goto fail;
		}
	} else if (cg->mode == SBX_CGROUP_V2) {
		if ((rc = hier_path(&l.v2, suffix, dir, sizeof dir)) < 0 ||
		    (rc = cg_add(cg, "unified", dir)) < 0)
			goto fail;
	} else {
		rc = SBX_EUNAVAIL;
		goto fail;
	}
	*out = cg;
	return 0;
fail:
	sbx_cgroup_free(cg);
	return rc;
}

/* ---- the journal form ------------------------------------------------- */

char *
sbx_cgroup_describe(const struct sbx_cgroup *cg)
{
	size_t len = 16;
	char *s;

	if (cg == NULL)
		return NULL;
	for (int i = 0; i < cg->n; i++)
		len += strlen(cg->c[i].ctrl) + strlen(cg->c[i].dir) + 2;
	if ((s = malloc(len)) == NULL)
		return NULL;
	len = (size_t)sprintf(s, "%s\n", sbx_cgroup_mode_name(cg->mode));
	for (int i = 0; i < cg->n; i++)
		len += (size_t)sprintf(s + len, "%s %s\n", cg->c[i].ctrl,
		    cg->c[i].dir);
	return s;
}

static bool
ctrl_ok(enum sbx_cgroup_mode m, const char *ctrl)
{
	if (m == SBX_CGROUP_V2)
		return strcmp(ctrl, "unified") == 0;
	for (size_t i = 0; i < NV1; i++) {
		if (strcmp(ctrl, v1_ctrls[i].name) == 0)
			return true;
	}
	return false;
}

/* "state-" and TAG_HEX lowercase hex digits, n bytes at p? */
bool
sbx__cgroup_tag_ok(const char *p, size_t n)
{
	if (n != strlen(CG_STATE) + TAG_HEX || strncmp(p, CG_STATE,
	    strlen(CG_STATE)) != 0)
		return false;
	for (size_t i = strlen(CG_STATE); i < n; i++) {
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' &&
		    p[i] <= 'f')))
			return false;
	}
	return true;
}

/*
 * Under /sys/fs/cgroup, ending in /corral/state-<tag>/lease-<id> (or
 * /corral/lease-<id>, as journals written before state tags name it), no
 * "." or ".." component.
 */
bool
sbx__cgroup_dir_ok(const char *dir, const char *id)
{
	char tail[160];
	size_t dl = strlen(dir), tl, sl = strlen("/" CG_SUB);
	const char *c, *up;

	if (strncmp(dir, CG_ROOT "/", sizeof CG_ROOT) != 0)
		return false;
	tl = (size_t)snprintf(tail, sizeof tail, "/" CG_PREFIX "%s", id);
	if (dl <= tl || strcmp(dir + dl - tl, tail) != 0)
		return false;
	/* The component above: corral itself, or a state tag under it. */
	for (up = dir + dl - tl; up > dir && up[-1] != '/'; up--)
		;
	if (up > dir && sbx__cgroup_tag_ok(up, (size_t)(dir + dl - tl - up)))
		dl = (size_t)(up - 1 - dir);
	else
		dl -= tl;
	if (dl < sl || strncmp(dir + dl - sl, "/" CG_SUB, sl) != 0)
		return false;
	for (c = dir; *c != '\0';) {
		size_t n;

		while (*c == '/')
			c++;
		n = strcspn(c, "/");
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' &&
		    c[1] == '.'))
			return false;
		c += n;
	}
	return strstr(dir, "//") == NULL;
}

int
sbx_cgroup_parse(const char *id, const char *text, struct sbx_cgroup **out)
{
	struct sbx_cgroup *cg;
	char line[1200], ctrl[32], dir[1100];
	const char *p = text;
	int rc = -EINVAL, first = 1;

	if (out == NULL)
		return -EINVAL;
	*out = NULL;
	if (!sbx__cgroup_id_ok(id) || text == NULL)
		return -EINVAL;
	if ((cg = calloc(1, sizeof *cg)) == NULL)
		return -ENOMEM;
	snprintf(cg->id, sizeof cg->id, "%s", id);
	while (*p != '\0') {
		size_t n = strcspn(p, "\n");

		if (n >= sizeof line)
			goto fail;
		memcpy(line, p, n);
		line[n] = '\0';
		p += n + (p[n] == '\n');
		if (n == 0)
			continue;
		if (first) {
			first = 0;
			if (strcmp(line, "v1") == 0)
				cg->mode = SBX_CGROUP_V1;
			else if (strcmp(line, "v2") == 0)
				cg->mode = SBX_CGROUP_V2;
			else
				goto fail;
			continue;
		}
		if (sscanf(line, "%31s %1099s", ctrl, dir) != 2 ||
		    !ctrl_ok(cg->mode, ctrl) || !sbx__cgroup_dir_ok(dir, id) ||
		    strchr(line + strlen(ctrl) + 1, ' ') != NULL)
			goto fail;
		if ((rc = cg_add(cg, ctrl, dir)) < 0)
			goto fail;
		rc = -EINVAL;
	}
	if (cg->mode == SBX_CGROUP_NONE || cg->n == 0)
		goto fail;
	*out = cg;
	return 0;
fail:
	sbx_cgroup_free(cg);
	return rc;
}

/* ---- a lease's directories ------------------------------------------ */

const char *
sbx__cgroup_dir_of(const struct sbx_cgroup *cg, const char *ctrl)
{
	for (int i = 0; i < cg->n; i++) {
		if (strcmp(cg->c[i].ctrl, ctrl) == 0)
			return cg->c[i].dir;
	}
	return NULL;
}

void
sbx__cgroup_parent_of(const char *dir, char *out, size_t sz)
{
	const char *slash = strrchr(dir, '/');
	size_t n = slash != NULL ? (size_t)(slash - dir) : 0;

	if (n >= sz)
		n = sz - 1;
	memcpy(out, dir, n);
	out[n] = '\0';
}

/*
 * After the lease cgroup dir is gone: its state directory's parent too,
 * when that was its last child. rmdir refuses a cgroup with children
 * (EBUSY), so a lease made meanwhile keeps it, and sbx_cgroup_create
 * makes it again if it went between its two mkdirs. Only the tag right
 * above this very path: never another state directory's.
 */
void
sbx__cgroup_drop_parent(const char *dir)
{
	char up[1024];
	const char *base;

	sbx__cgroup_parent_of(dir, up, sizeof up);
	if ((base = strrchr(up, '/')) == NULL)
		return;
	base++;
	if (sbx__cgroup_tag_ok(base, strlen(base)))
		(void)rmdir(up);	/* EBUSY: another lease's; ENOENT: gone */
}

/* ---- listing and facts --------------------------------------------- */

static int
list_dir(const char *dir, char ***ids, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d == NULL)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d)) != NULL) {
		const char *id = e->d_name + strlen(CG_PREFIX);
		char **nv;
		bool dup = false;

		if (strncmp(e->d_name, CG_PREFIX, strlen(CG_PREFIX)) != 0 ||
		    !sbx__cgroup_id_ok(id))
			continue;
		for (size_t i = 0; i < *n; i++)
			dup = dup || strcmp((*ids)[i], id) == 0;
		if (dup)
			continue;
		if ((nv = realloc(*ids, (*n + 2) * sizeof *nv)) == NULL)
			goto oom;
		*ids = nv;
		if ((nv[*n] = strdup(id)) == NULL)
			goto oom;
		nv[++*n] = NULL;
	}
	closedir(d);
	return 0;
oom:
	closedir(d);
	return -ENOMEM;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
sbx_cgroup_list(const char *scope, char ***out)
{
	struct layout l;
	char dir[1024], sub[64], tag[32];
	char **ids;
	size_t n = 0;
	int rc;

	if (out == NULL)
		return -EINVAL;
	*out = NULL;
	if (sbx_cgroup_scope_name(scope, tag, sizeof tag) < 0)
		return -EINVAL;
	snprintf(sub, sizeof sub, "/" CG_SUB "/%s", tag);
	if ((rc = layout_read(&l)) < 0)
		return rc;
	if ((ids = calloc(1, sizeof *ids)) == NULL)
		return -ENOMEM;
	for (size_t i = 0; i <= NV1; i++) {
		const struct hier *h = i < NV1 ? &l.v1[i] : &l.v2;

		if (!h->found || hier_path(h, sub, dir, sizeof dir) < 0)
			continue;
		if ((rc = list_dir(dir, &ids, &n)) < 0) {
			sbx_strv_free(ids);
			return rc;
		}
	}
	if (n > 0)
		qsort(ids, n, sizeof *ids, cmp_str);
	*out = ids;
	return 0;
}
