/*
 * sbx.h: the public interface of the sandbox adapters module (STYLE A):
 * exec plans (sbx_plan.c), the adapter table (sbx_adapters.c) and one file
 * per adapter (sbx_local.c, sbx_bwrap.c, ...). A plan is data: argv, envp,
 * cwd and the whole pre-exec recipe (uid, rlimits, cgroups, fd map), so
 * `.plan` stays pure and unit tests compare argv arrays (SPEC 8.1).
 */
#ifndef CORRAL_SBX_H
#define CORRAL_SBX_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

#define SBX_NODISCARD __attribute__((warn_unused_result))

enum {
	SBX_EBASE = -30000,
	SBX_EUNAVAIL,	/* adapter not available on this host */
	SBX_EPOLICY,	/* policy refuses the request */
	SBX_EPROBE,	/* a preflight probe failed */
};
const char *sbx_strerror(int);

/* ------------------------------------------------------------------ */
/* sbx_plan.c: exec plans                                             */

#define SBX_PLAN_MAX_RLIMITS 8
#define SBX_PLAN_MAX_CGROUPS 8
#define SBX_PLAN_MAX_FDS 8

struct sbx_rlimit {
	int resource;
	rlim_t cur, max;
};

/* Keep fd `from` open in the child as fd `to` (dup2), then close the rest. */
struct sbx_fdmap {
	int from;
	int to;
};

struct sbx_plan {
	char **argv;	/* NULL-terminated; argv[0] is an absolute path */
	char **envp;	/* NULL-terminated; NULL means an empty environment */
	char *cwd;	/* NULL: do not chdir */
	bool inherit_env; /* trusted_local only: the owner's environment */
	/* pre-exec recipe, applied in the child in this order: */
	char *cgroup_procs[SBX_PLAN_MAX_CGROUPS]; /* cgroup.procs to join */
	int ncgroups;
	struct sbx_fdmap fds[SBX_PLAN_MAX_FDS];
	int nfds;
	struct sbx_rlimit rlimits[SBX_PLAN_MAX_RLIMITS];
	int nrlimits;
	bool drop_uid;	/* setgroups(0), setresgid, setresuid to uid/gid */
	uid_t uid;
	gid_t gid;
	bool no_new_privs;
	char label[32];	/* isolation class shown to the operator */
};

struct sbx_plan *sbx_plan_new(void);
void sbx_plan_free(struct sbx_plan *);
/* Append to argv/envp (copied). Return 0 or -ENOMEM. */
SBX_NODISCARD int sbx_plan_arg(struct sbx_plan *, const char *);
SBX_NODISCARD int sbx_plan_env(struct sbx_plan *, const char *name,
    const char *value);
SBX_NODISCARD int sbx_plan_cwd(struct sbx_plan *, const char *);
size_t sbx_plan_argc(const struct sbx_plan *);

/* ------------------------------------------------------------------ */
/* sbx_adapters.c: the adapter table (the tmux cmd_table pattern)     */

/* What a lease asks of an adapter. */
struct sbx_request {
	const char *id;		/* lease ID */
	const char *lease_dir;	/* per-lease directory (0700) */
	const char *workspace;	/* host path of the workspace, or NULL */
	char *const *cmd;	/* the agent command, NULL-terminated */
	const char *cwd;	/* trusted_local: where to run */
	const char *init_path;	/* host path of corral-sbx-init */
	uid_t uid;		/* per-lease unprivileged uid (bwrap) */
	gid_t gid;
};

struct sbx_adapter {
	const char *name;
	const char *isolation;	/* label: "bwrap", "trusted_local", ... */
	/* Preflight: 0 if usable, else a code with a reason in why. */
	int (*probe)(char *why, size_t whysz);
	/* Build the exec plan (pure). */
	int (*plan)(const struct sbx_request *, struct sbx_plan **out);
};

extern const struct sbx_adapter *const sbx_adapters[];
const struct sbx_adapter *sbx_adapter_find(const char *name);

/* sbx_local.c */
extern const struct sbx_adapter sbx_adapter_local;

#endif /* CORRAL_SBX_H */
