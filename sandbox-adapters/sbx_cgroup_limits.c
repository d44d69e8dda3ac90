/*
 * sbx_cgroup_limits.c: a lease's cgroups made with their limits (SPEC
 * 8.4; SANDBOX.md 3.6): memory and memory+swap, pids.max and the cfs
 * quota, in v1 hierarchies or the v2 tree; the plan's joins before exec;
 * and the counters that name the limit a lease hit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"
#include "sandbox-adapters/sbx_cgroup_int.h"

#define CPU_PERIOD_US 100000ull

/* ---- counters ---------------------------------------------------------- */

/* "key value" line of a flat keyed file, or 0. */
static unsigned long long
keyed(const char *text, const char *key)
{
	size_t kl = strlen(key);

	for (const char *p = text; p != NULL && *p != '\0';) {
		if (strncmp(p, key, kl) == 0 && (p[kl] == ' ' ||
		    p[kl] == '\t'))
			return strtoull(p + kl + 1, NULL, 10);
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return 0;
}

static unsigned long long
read_u64_at(const char *dir, const char *file)
{
	char path[1024], buf[64];

	snprintf(path, sizeof path, "%s/%s", dir, file);
	if (sbx__read_file(path, buf, sizeof buf) <= 0)
		return 0;
	return strtoull(buf, NULL, 10);
}

/* ---- create ------------------------------------------------------ */

static int
v1_limits(const struct sbx_cgroup *cg, const struct sbx_limits *lim)
{
	const char *d;
	char num[32];
	int rc;

	if ((d = sbx__cgroup_dir_of(cg, "memory")) != NULL &&
	    lim->memory != 0) {
		char sw[32];
		bool memsw = sbx__cgroup_exists_at(d,
		    "memory.memsw.limit_in_bytes");

		snprintf(num, sizeof num, "%llu", lim->memory);
		snprintf(sw, sizeof sw, "%llu", lim->memory + lim->swap);
		/* memsw >= memory at every step: order by direction. */
		rc = sbx__cgroup_write_at(d, "memory.limit_in_bytes", num);
		if (rc == -EINVAL && memsw) {
			if ((rc = sbx__cgroup_write_at(d,
			    "memory.memsw.limit_in_bytes",
			    sw)) < 0 || (rc = sbx__cgroup_write_at(d,
			    "memory.limit_in_bytes", num)) < 0)
				return rc;
		} else if (rc < 0) {
			return rc;
		} else if (memsw && (rc = sbx__cgroup_write_at(d,
		    "memory.memsw.limit_in_bytes", sw)) < 0) {
			return rc;
		}
	}
	if ((d = sbx__cgroup_dir_of(cg, "pids")) != NULL && lim->pids != 0) {
		snprintf(num, sizeof num, "%llu", lim->pids);
		if ((rc = sbx__cgroup_write_at(d, "pids.max", num)) < 0)
			return rc;
	}
	if ((d = sbx__cgroup_dir_of(cg, "cpu")) != NULL &&
	    lim->cpu_milli != 0) {
		snprintf(num, sizeof num, "%llu", CPU_PERIOD_US);
		if ((rc = sbx__cgroup_write_at(d, "cpu.cfs_period_us",
		    num)) < 0)
			return rc;
		snprintf(num, sizeof num, "%llu", lim->cpu_milli *
		    CPU_PERIOD_US / 1000);
		if ((rc = sbx__cgroup_write_at(d, "cpu.cfs_quota_us", num)) < 0)
			return rc;
	}
	return 0;
}

/* v2 (untested on this host): delegate, then the limits. */
static int
v2_limits(const struct sbx_cgroup *cg, const struct sbx_limits *lim)
{
	const char *d = cg->c[0].dir;
	char num[64];
	int rc;

	if (lim->memory != 0) {
		snprintf(num, sizeof num, "%llu", lim->memory);
		if ((rc = sbx__cgroup_write_at(d, "memory.max", num)) < 0)
			return rc;
		snprintf(num, sizeof num, "%llu", lim->swap);
		if (sbx__cgroup_exists_at(d, "memory.swap.max") &&
		    (rc = sbx__cgroup_write_at(d, "memory.swap.max", num)) < 0)
			return rc;
		if (sbx__cgroup_exists_at(d, "memory.oom.group") &&
		    (rc = sbx__cgroup_write_at(d, "memory.oom.group", "1")) < 0)
			return rc;
	}
	if (lim->pids != 0) {
		snprintf(num, sizeof num, "%llu", lim->pids);
		if ((rc = sbx__cgroup_write_at(d, "pids.max", num)) < 0)
			return rc;
	}
	if (lim->cpu_milli != 0) {
		snprintf(num, sizeof num, "%llu %llu", lim->cpu_milli *
		    CPU_PERIOD_US / 1000, CPU_PERIOD_US);
		if ((rc = sbx__cgroup_write_at(d, "cpu.max", num)) < 0)
			return rc;
	}
	return 0;
}

/*
 * The directories above lease dir: corral's (and the state directory's
 * tag under it) made if missing; v2 hands the controllers down each step,
 * from corral's own cgroup to the lease's parent.
 */
static int
make_parents(const struct sbx_cgroup *cg, const char *dir)
{
	char up[3][1024];
	const char *base;
	int n = 0, rc;

	/* corral, or its tag */
	sbx__cgroup_parent_of(dir, up[1], sizeof up[1]);
	base = strrchr(up[1], '/') + 1;
	if (sbx__cgroup_tag_ok(base, strlen(base))) {
		snprintf(up[2], sizeof up[2], "%s", up[1]);
		sbx__cgroup_parent_of(up[2], up[1], sizeof up[1]);
		n = 1;
	}
	/* corral's own */
	sbx__cgroup_parent_of(up[1], up[0], sizeof up[0]);
	for (int k = 1; k <= 1 + n; k++) {
		if (mkdir(up[k], 0755) < 0 && errno != EEXIST)
			return -errno;
	}
	if (cg->mode != SBX_CGROUP_V2)
		return 0;
	for (int k = 0; k <= 1 + n; k++) {
		if ((rc = sbx__cgroup_write_at(up[k], "cgroup.subtree_control",
		    "+memory +pids +cpu")) < 0)
			return rc;
	}
	return 0;
}

int
sbx_cgroup_create(const struct sbx_cgroup *cg, const struct sbx_limits *lim)
{
	static const struct sbx_limits none;
	bool made[SBX_CGROUP_MAX] = { false };
	int rc = 0;

	if (cg == NULL || cg->n == 0 || !sbx__cgroup_id_ok(cg->id))
		return -EINVAL;
	for (int i = 0; i < cg->n; i++) {
		if (!sbx__cgroup_dir_ok(cg->c[i].dir, cg->id))
			return -EINVAL;
	}
	if (lim == NULL)
		lim = &none;
	for (int i = 0; i < cg->n; i++) {
		/* ENOENT: the last lease of the tag took the parent along. */
		for (int tries = 0;; tries++) {
			if ((rc = make_parents(cg, cg->c[i].dir)) < 0)
				goto fail;
			if (mkdir(cg->c[i].dir, 0755) == 0) {
				made[i] = true;
				break;
			}
			if (errno == EEXIST)
				break;
			if (errno != ENOENT || tries == 16) {
				rc = -errno;
				goto fail;
			}
		}
	}
	rc = cg->mode == SBX_CGROUP_V2 ? v2_limits(cg, lim) :
	    v1_limits(cg, lim);
	if (rc == 0)
		return 0;
fail:
	for (int i = 0; i < cg->n; i++) {
		if (made[i] && rmdir(cg->c[i].dir) == 0)
			sbx__cgroup_drop_parent(cg->c[i].dir);
	}
	return rc;
}

int
sbx_cgroup_plan(const struct sbx_cgroup *cg, struct sbx_plan *p)
{
	char path[1100];

	if (cg == NULL || p == NULL)
		return -EINVAL;
	for (int i = 0; i < cg->n; i++) {
		if (p->ncgroups >= SBX_PLAN_MAX_CGROUPS)
			return -ENOSPC;
		snprintf(path, sizeof path, "%s/cgroup.procs", cg->c[i].dir);
		if ((p->cgroup_procs[p->ncgroups] = strdup(path)) == NULL)
			return -ENOMEM;
		p->ncgroups++;
	}
	return 0;
}

/* ---- facts --------------------------------------------------------- */

int
sbx_cgroup_facts(const struct sbx_cgroup *cg, struct sbx_cgroup_facts *f)
{
	char path[1100], buf[4096];
	const char *d;

	if (cg == NULL || f == NULL)
		return -EINVAL;
	memset(f, 0, sizeof *f);
	if (cg->mode == SBX_CGROUP_V2) {
		d = cg->c[0].dir;
		snprintf(path, sizeof path, "%s/memory.events", d);
		if (sbx__read_file(path, buf, sizeof buf) > 0) {
			f->mem_failcnt = keyed(buf, "max");
			f->oom_kills = keyed(buf, "oom_kill");
		}
		f->mem_max_usage = read_u64_at(d, "memory.peak");
		snprintf(path, sizeof path, "%s/pids.events", d);
		if (sbx__read_file(path, buf, sizeof buf) > 0)
			f->pids_max = keyed(buf, "max");
		f->pids_current = read_u64_at(d, "pids.current");
		snprintf(path, sizeof path, "%s/cpu.stat", d);
		if (sbx__read_file(path, buf, sizeof buf) > 0) {
			f->cpu_throttled = keyed(buf, "nr_throttled");
			f->cpu_usage_ns = keyed(buf, "usage_usec") * 1000;
		}
		return 0;
	}
	if ((d = sbx__cgroup_dir_of(cg, "memory")) != NULL) {
		unsigned long long sw = read_u64_at(d,
		    "memory.memsw.failcnt");

		/* With swap capped too, memory+swap is the limit reached. */
		f->mem_failcnt = read_u64_at(d, "memory.failcnt");
		if (sw > f->mem_failcnt)
			f->mem_failcnt = sw;
		f->mem_max_usage = read_u64_at(d,
		    "memory.max_usage_in_bytes");
		snprintf(path, sizeof path, "%s/memory.oom_control", d);
		if (sbx__read_file(path, buf, sizeof buf) > 0) {
			f->oom_kills = keyed(buf, "oom_kill");
			f->under_oom = keyed(buf, "under_oom") != 0;
		}
	}
	if ((d = sbx__cgroup_dir_of(cg, "pids")) != NULL) {
		snprintf(path, sizeof path, "%s/pids.events", d);
		if (sbx__read_file(path, buf, sizeof buf) > 0)
			f->pids_max = keyed(buf, "max");
		f->pids_current = read_u64_at(d, "pids.current");
	}
	if ((d = sbx__cgroup_dir_of(cg, "cpu")) != NULL) {
		snprintf(path, sizeof path, "%s/cpu.stat", d);
		if (sbx__read_file(path, buf, sizeof buf) > 0)
			f->cpu_throttled = keyed(buf, "nr_throttled");
	}
	if ((d = sbx__cgroup_dir_of(cg, "cpuacct")) != NULL)
		f->cpu_usage_ns = read_u64_at(d, "cpuacct.usage");
	return 0;
}

const char *
sbx_cgroup_limit_hit(const struct sbx_cgroup_facts *f)
{
	if (f == NULL)
		return NULL;
	if (f->oom_kills > 0 || f->under_oom)
		return "memory";
	if (f->pids_max > 0)
		return "pids";
	return NULL;
}
