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
#define SBX_PLAN_MAX_DATA 6

struct sbx_rlimit {
	int resource;
	rlim_t cur, max;
};

/* Keep fd `from` open in the child as fd `to` (dup2), then close the rest. */
struct sbx_fdmap {
	int from;
	int to;
};

/*
 * Bytes the zone reads from fd `to` when it starts (bwrap --args, and
 * --ro-bind-data for /etc/passwd...): kept in the plan as data so .plan
 * stays pure; sbx_plan_open_data() turns each into a sealed memfd mapped to
 * `to` in fds[] just before the spawn.
 */
struct sbx_data {
	int to;
	char *bytes;
	size_t len;
	int fd;		/* the memfd once opened, else -1; the plan owns it */
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
	struct sbx_data data[SBX_PLAN_MAX_DATA];
	int ndata;
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
/*
 * Attach len bytes (copied) for the zone to read from fd `to` (3..99, not
 * already used). Returns 0, -EINVAL or -ENOMEM. Pure.
 */
SBX_NODISCARD int sbx_plan_data(struct sbx_plan *, int to, const void *buf,
    size_t len);
/* The data attached for fd `to`, or NULL. */
const struct sbx_data *sbx_plan_data_find(const struct sbx_plan *, int to);
/*
 * Not pure: put each data item in a sealed, close-on-exec memfd and map it
 * to its fd in fds[] (pty/proc.c then dup2s it into the child). Call once,
 * right before the spawn: the child reads from the memfd's shared offset.
 * Idempotent; sbx_plan_free closes the memfds. Returns 0 or -errno.
 */
SBX_NODISCARD int sbx_plan_open_data(struct sbx_plan *);

/* ------------------------------------------------------------------ */
/* sbx_adapters.c: the adapter table (the tmux cmd_table pattern)     */

/* A host path bound read-only into a sandbox at dst (both absolute). */
struct sbx_mount {
	const char *src;
	const char *dst;
};

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
	const struct sbx_mount *ro_binds; /* extra read-only mounts, or NULL */
	int nro_binds;
	unsigned long long tmp_bytes;	/* size of /tmp; 0: the default */
	unsigned long long home_bytes;	/* size of $HOME; 0: the default */
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

/* sbx_bwrap.c: the bwrap adapter, agent zone (SPEC 8.2, 8.3) */
extern const struct sbx_adapter sbx_adapter_bwrap;
#define SBX_BWRAP_PATH "/usr/bin/bwrap"	/* absolute, never from PATH */
#define SBX_BWRAP_INIT "/run/corral/init" /* corral-sbx-init, inside */
#define SBX_BWRAP_HOME "/home/sbx"
#define SBX_BWRAP_WORK "/work"
#define SBX_BWRAP_ARGS_FD 3	/* bwrap --args: the policy, off the argv */
#define SBX_BWRAP_PASSWD_FD 4	/* --ro-bind-data: /etc/passwd */
#define SBX_BWRAP_GROUP_FD 5	/* --ro-bind-data: /etc/group */
#define SBX_BWRAP_HOSTS_FD 6	/* --ro-bind-data: /etc/hosts */
#define SBX_BWRAP_TMP_BYTES (64ull << 20)
#define SBX_BWRAP_HOME_BYTES (64ull << 20)

/*
 * sbx_uid.c: per-lease uids (SANDBOX.md 0.1). Slot N is uid and gid
 * SBX_UID_BASE + N, never a uid of the host's passwd: unique per live lease,
 * so RLIMIT_NPROC, file ownership and host-side process checks are exact.
 * A slot is claimed by creating DIR/slot-N (mkdir is atomic) holding the
 * lease ID; the lowest free slot wins, so allocation is deterministic.
 */
#define SBX_UID_BASE 2000000u
#define SBX_UID_SLOTS 4096u
/* The uid/gid of slot (pure). -EINVAL if slot >= SBX_UID_SLOTS. */
SBX_NODISCARD int sbx_uid_of_slot(unsigned slot, uid_t *uid, gid_t *gid);
/* Claim the lowest free slot under dir for lease id. 0, -ENOSPC, -errno. */
SBX_NODISCARD int sbx_uid_claim(const char *dir, const char *id,
    unsigned *slot);
/* Release slot if id holds it: 0, -ENOENT, -EPERM (another ID), -errno. */
SBX_NODISCARD int sbx_uid_release(const char *dir, unsigned slot,
    const char *id);

#endif /* CORRAL_SBX_H */
