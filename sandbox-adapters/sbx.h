/*
 * sbx.h: the public interface of the sandbox adapters module (STYLE A),
 * organised as tmux.h is: the module-wide codes first, then one block per
 * .c file, headed by its name, which is also the prefix of what it
 * declares. Exec plans (sbx_plan.c), the pre-exec recipe (sbx_recipe.c),
 * the adapter table (sbx_adapters.c) and one file per adapter (sbx_local.c,
 * sbx_bwrap.c, sbx_command.c), then the host resources, the policy and
 * the preflight. The agent zone's egress, proxy, model gateway,
 * credentials and scrubber are in sbx_egress.h. A plan is data: argv, envp, cwd and the whole
 * pre-exec recipe (uid, rlimits, cgroups, fd map), so `.plan` stays pure
 * and unit tests compare argv arrays (SPEC 8.1). What only the module's
 * own files share is in sbx_int.h.
 */
#ifndef CORRAL_SBX_H
#define CORRAL_SBX_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

#define SBX_NODISCARD __attribute__((warn_unused_result))

struct sbx_limits;
struct sbx_plan;

/* sbx_plan.c: the module's error codes and halt reasons. */
enum {
	SBX_EBASE = -30000,
	SBX_EUNAVAIL,	/* adapter not available on this host */
	SBX_EPOLICY,	/* policy refuses the request / malformed policy */
	SBX_EPROBE,	/* a preflight probe failed */
	SBX_EWIDER,	/* a repository policy widens the operator's */
	SBX_ELIMIT,	/* a limit was hit (output cap, wall time) */
	SBX_EUIDPOOL,	/* every uid slot of the pool is taken */
};
const char *sbx_strerror(int);
/*
 * The failed reason a lease's provisioning error names (SPEC 8.7):
 * "uid_pool_exhausted", "disk_full" (-ENOSPC), else "provision_error".
 */
const char *sbx_provision_reason(int);

/*
 * Halt reasons of the preflight and of a run (SPEC 8.7). The value of each
 * is its exit class: `corral` exits with it when a lease halts for it.
 */
enum sbx_halt {
	SBX_HALT_NONE = 0,
	SBX_HALT_CREDENTIAL_SCOPE_INVALID = 13,
	SBX_HALT_HERMETICITY_VIOLATION = 14,
	SBX_HALT_ISOLATION_UNSATISFIABLE = 30,
};
/* "isolation_unsatisfiable", ...; "none" for 0; NULL if unknown. */
const char *sbx_halt_name(int halt);

/* ------------------------------------------------------------------ */
/* sbx_sha256.c: SHA-256 for receipts (libcrypto EVP)                  */

#define SBX_SHA256_HEX 65	/* 64 lowercase hex digits and a NUL */
/* Hash len bytes of buf into hex. 0 or -EIO (libcrypto failure). */
SBX_NODISCARD int sbx_sha256_hex(const void *buf, size_t len,
    char hex[SBX_SHA256_HEX]);
/* Hash the regular file at path (O_NOFOLLOW). 0 or -errno. */
SBX_NODISCARD int sbx_sha256_file(const char *path, char hex[SBX_SHA256_HEX]);

/* ------------------------------------------------------------------ */
/* sbx_strv.c: string vectors                                          */

/* Free a NULL-terminated string vector returned by this module. */
void sbx_strv_free(char **);

/* ------------------------------------------------------------------ */
/* sbx_plan.c: exec plans                                             */

#define SBX_PLAN_MAX_RLIMITS 8
#define SBX_PLAN_MAX_CGROUPS 8
#define SBX_PLAN_MAX_FDS 12
#define SBX_PLAN_MAX_DATA 10

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
	/*
	 * bind_src non-NULL: right after the cgroup join the child enters a
	 * mount namespace of its own (slave to the host's) and binds
	 * bind_src on bind_dst (made if absent), still as root: a path the
	 * zone's uid could never walk to reaches it (the exec zone's copy
	 * inside the lease directory). Nothing of it is seen on the host.
	 */
	char *bind_src;
	char *bind_dst;
	int umask;	/* -1: inherit; else umask(umask) in the child */
	char label[32];	/* isolation class shown to the operator */
};

void sbx_plan_free(struct sbx_plan *);
/*
 * Not pure: put each data item in a sealed, close-on-exec memfd and map it
 * to its fd in fds[] (pty/proc.c then dup2s it into the child). Call once,
 * right before the spawn: the child reads from the memfd's shared offset.
 * Idempotent; sbx_plan_free closes the memfds. Returns 0 or -errno.
 */
SBX_NODISCARD int sbx_plan_open_data(struct sbx_plan *);

/* ------------------------------------------------------------------ */
/*
 * sbx_recipe.c: the pre-exec recipe, the only code between fork and exec
 * for either zone (the agent on its PTY in pty/proc.c, the exec zone in
 * sbx_exec.c). In the child, in this order: default signal dispositions
 * and an empty mask, the cgroup join, the private bind (bind_src), setsid (and TIOCSCTTY on stdio[0]
 * if take_ctty), stdio and the plan's fd map, close_range of every other
 * fd, rlimits, then with drop_uid an empty capability bounding set and no
 * ambient set, setgroups(0)/setresgid/setresuid (checked), no_new_privs,
 * umask, cwd, execve. Test builds (CORRAL_TEST_OVERRIDES) honour
 * $CORRAL_TEST_RECIPE_DIR: the child writes its /proc/self/status, a
 * line "Fds:\t0 1 2 ..." (the fds the exec passes on), "MntNs:\t" its
 * mount namespace and, with bind_src, "Bind:\t1" if bind_dst is bind_src
 * (else 0) to DIR/<its pid> right before the exec.
 */
struct sbx_recipe {
	const struct sbx_plan *plan;
	int stdio[3];		/* become fds 0, 1 and 2 */
	bool take_ctty;		/* stdio[0] becomes the controlling tty */
	int errfd;		/* close-on-exec pipe: "errno what" on failure */
	/* set by sbx_recipe_prepare, in the parent: */
	const char *path;	/* what to execve: argv[0], found on PATH */
	char **envp;		/* the environment to execve with */
	char **env_own;
	char pathbuf[4096];
	char hook[4096];
};

/*
 * Parent side, before fork: resolve argv[0] and the environment (the
 * plan's, or with inherit_env the owner's with env_set, "NAME=value" or
 * NULL, put in). Set plan, stdio, take_ctty and errfd first. 0, -EINVAL
 * or -ENOMEM; sbx_recipe_clear releases it once the child is forked.
 */
SBX_NODISCARD int sbx_recipe_prepare(struct sbx_recipe *, const char *env_set);
void sbx_recipe_clear(struct sbx_recipe *);
/* Child side: async-signal-safe; execs, or reports on errfd and _exits. */
void sbx_recipe_exec(const struct sbx_recipe *) __attribute__((noreturn));
/*
 * Parent side, after fork: read the error pipe until EOF. 0 if the child
 * exec'd, else -errno of the failed step, whose name goes to what.
 */
SBX_NODISCARD int sbx_recipe_wait(int errfd, char *what, size_t whatsz);

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
	/*
	 * Both bwrap zones, optional. limits: the rlimits of the plan
	 * (RLIMIT_FSIZE, NOFILE, CPU, NPROC; CORE is always 0) and the
	 * tmpfs sizes where tmp_bytes/home_bytes are 0. env: NAME=VALUE
	 * strings from the policy's allowlist (sbx_policy_env); a
	 * credential-shaped or fixed name (PATH, HOME, ...) is refused with
	 * SBX_EPOLICY. They travel through the --args memfd, never an argv.
	 */
	const struct sbx_limits *limits;
	char *const *env;
	/* Agent zone: the minted credential, NAME=VALUE (SPEC 8.5), or NULL. */
	const char *credential;
	/* Exec zone (sbx_bwrap_exec_plan) only: */
	bool workspace_ro;		/* bind /work read-only */
	/*
	 * workspace is a path the zone's uid cannot walk to (a check's copy
	 * in the lease directory): the plan's child binds it at
	 * SBX_EXEC_MNT in a mount namespace of its own (plan->bind_src)
	 * and bwrap binds SBX_EXEC_MNT on /work.
	 */
	bool workspace_private;
	long long source_date_epoch;	/* the base commit's time (>= 0) */
	const char *faketime;	/* host path of libfaketime.so.1, or NULL */
	/* The command adapter (sbx_command.c): the operator's hooks. */
	const struct sbx_command_config *command;
	/* .provision, .list: whose resources (the state directory). */
	const char *scope;
};

/*
 * The resources an adapter makes for a lease, as the caller's journal
 * names them (SPEC 6, 9.2: every identity is recorded before the resource
 * is made). kind is SBX_RES_SANDBOX or SBX_RES_CGROUP; identity is the
 * text the journal keeps ("uid:2000003", sbx_cgroup_describe text,
 * "command:ID").
 */
#define SBX_RES_SANDBOX "sandbox"
#define SBX_RES_CGROUP "cgroup"

/*
 * The journaling callbacks of .provision and .teardown. plan() runs before
 * a resource is made (an error stops the step before it exists),
 * created() once it exists, removed() once it is gone, or when a planned
 * one turned out not to be made. Each returns 0 or a negative code that
 * stops the adapter (which then returns it). Any may be NULL.
 */
struct sbx_steps {
	int (*plan)(void *ud, const char *kind, const char *identity);
	int (*created)(void *ud, const char *kind, const char *identity);
	int (*removed)(void *ud, const char *kind, const char *identity);
	/*
	 * A step that makes no journaled resource (bwrap: "bound", the
	 * bounded workspace) passes its points "before" and "created"
	 * here, for crash tests. May be NULL.
	 */
	void (*point)(void *ud, const char *step, const char *when);
	void *ud;
};

/* One resource the journal holds for the lease and has not removed. */
struct sbx_resource {
	const char *kind;
	const char *identity;
};

/* What .provision made. */
struct sbx_provisioned {
	char sandbox_id[160];	/* the journal's sandbox identity, or "" */
	bool has_uid;		/* bwrap: the lease's own uid */
	uid_t uid;
	gid_t gid;
	char note[256];		/* command: the provision hook's note */
};

/*
 * A lease's sandbox as its holder runs it, from .attach to .detach: the
 * adapter's own (opaque).
 */
struct sbx_running;

/* What .attach found and made, for the holder's receipts. */
struct sbx_attached {
	char sandbox_id[160];	/* the journal's sandbox identity */
	uid_t uid;		/* the lease's own */
	gid_t gid;
	char init_sha256[SBX_SHA256_HEX];	/* corral-sbx-init as it runs */
};

/* What a running lease's processes used (.usage; SPEC 8.4). */
struct sbx_usage {
	unsigned long long mem_max_usage;
	unsigned long long oom_kills;	/* processes the OOM killer took */
	unsigned long long pids_max;	/* forks refused at the pids limit */
	unsigned long long pids_current;
	unsigned long long cpu_usage_ns;	/* 0 if not accounted */
	unsigned long long cpu_throttled;	/* periods throttled */
	const char *limit;	/* the limit they show hit: "memory", "pids",
				   or NULL */
};

struct sbx_adapter {
	const char *name;
	const char *isolation;	/* label: "bwrap", "trusted_local", ... */
	/* Preflight: 0 if usable, else a code with a reason in why. */
	int (*probe)(char *why, size_t whysz);
	/* Build the exec plan (pure). */
	int (*plan)(const struct sbx_request *, struct sbx_plan **out);
	/*
	 * Make the lease's sandbox resources (req: id, workspace, lease_dir,
	 * limits; command), each through steps. On failure what was made is
	 * left journaled for .teardown. 0 and *out, or a negative code with
	 * the reason in err. Blocking.
	 */
	int (*provision)(const struct sbx_request *, const struct sbx_steps *,
	    struct sbx_provisioned *out, char *err, size_t errsz);
	/*
	 * Make req->workspace (req: id, workspace, limits), which must not
	 * exist, as the empty directory seeding fills, before .provision
	 * (bwrap: the lease's bounded image mounted there when
	 * limits->disk is set, so the base is checked out straight into
	 * it; .provision then keeps it). Undone by sbx_workspace_release.
	 * NULL: a plain directory. 0 or a negative code with err (-EEXIST:
	 * it exists). Blocking.
	 */
	int (*workspace)(const struct sbx_request *, char *err, size_t errsz);
	/*
	 * Remove the resources res[0..n) of lease req->id, by exact ID
	 * (req: id, workspace, command), each removal reported through
	 * steps->removed once done. res NULL: an orphan no journal names,
	 * whose resources the adapter finds on this host by exact ID.
	 * Idempotent: absent is removed. 0, or the first error (err) with
	 * what is left not reported.
	 */
	int (*teardown)(const struct sbx_request *,
	    const struct sbx_resource *res, size_t n,
	    const struct sbx_steps *, char *err, size_t errsz);
	/*
	 * The lease IDs this adapter holds resources for on this host
	 * (reconciliation, SPEC 9.2), sorted, unique, NULL-terminated
	 * (sbx_strv_free). req: command only (may be NULL otherwise).
	 * 0, or a negative code with err.
	 */
	int (*list)(const struct sbx_request *, char ***ids, char *err,
	    size_t errsz);
	/*
	 * The holder's side of a running lease (SPEC 6.6, 8.4). NULL for an
	 * adapter whose agent is the holder's plain child (command);
	 * trusted_local has attach, enter, signal, stop, detach and procs
	 * for its tracking cgroup only (no uid, no private runtime). attach: lease req->id's sandbox from the resources its
	 * journal records as made (res[0..n)), and the holder's own view of
	 * req->workspace, req->init_path and req->ro_binds (bwrap: a private
	 * mount namespace the holder moves into; nothing reaches the host).
	 * Once, in the holder, before its loop runs. 0 with *out and *info,
	 * or a negative code with err (*out NULL). Blocking.
	 */
	int (*attach)(const struct sbx_request *, const struct sbx_resource *res,
	    size_t n, struct sbx_attached *info, struct sbx_running **out,
	    char *err, size_t errsz);
	/*
	 * The agent's exec plan for req (as .plan) inside the running
	 * sandbox: its uid, the holder's view of the paths, and the lease's
	 * resources joined before exec (bwrap: its cgroups).
	 */
	int (*enter)(const struct sbx_running *, const struct sbx_request *,
	    struct sbx_plan **out);
	/*
	 * Send sig to every process of the lease but the sandbox's own
	 * (bwrap, corral-sbx-init), so SIGINT/SIGTERM reach the agent before
	 * SIGKILL (SPEC 5.5). How many were signalled, or -errno.
	 */
	int (*signal)(const struct sbx_running *, int sig);
	/*
	 * The same, but to none of the processes keep(pid, ud) keeps, judged
	 * while the lease is frozen (trusted_local: its expected daemons).
	 * NULL for an adapter without it.
	 */
	int (*signal_unless)(const struct sbx_running *, int sig,
	    bool (*keep)(pid_t, void *), void *ud);
	/* What the lease's processes used so far. 0 or -errno. */
	int (*usage)(const struct sbx_running *, struct sbx_usage *);
	/*
	 * End every process of the lease at once (a limit was hit): freeze,
	 * kill, thaw, wait at most timeout_ms. 0, -EBUSY (some remain),
	 * -errno. The resources stay for .teardown.
	 */
	int (*stop)(const struct sbx_running *, unsigned timeout_ms);
	void (*detach)(struct sbx_running *);	/* NULL is a no-op */
	/*
	 * The lease's processes now, sorted and unique, malloc'd into
	 * *pids (trusted_local: everything in its tracking cgroup). 0 or
	 * -errno. NULL for an adapter that does not list them.
	 */
	int (*procs)(const struct sbx_running *, pid_t **pids, size_t *n);
	/*
	 * The exec zone (SPEC 7.3, 8.2, 8.4): a check run as an sbx_running
	 * of its own, with no private runtime. NULL for an adapter without
	 * one (trusted_local, command). exec provisions req->id (the run's
	 * own ID) through .provision and steps (bwrap: a uid slot, cgroups
	 * with req->limits, and req->workspace, the copy, moved into a
	 * bounded image of req->limits->disk, which must be set). exec_plan
	 * builds the zone's plan for req (bwrap: sbx_bwrap_exec_plan, the
	 * copy bound privately, its uid) joined to its resources. .usage,
	 * .signal, .stop and .detach take it; .teardown removes what steps
	 * journaled. 0 and *out, or a negative code with err (what was made
	 * stays journaled for .teardown). faketime: the host path of
	 * libfaketime for req->faketime, or NULL (not installed; not pure).
	 */
	int (*exec)(const struct sbx_request *, const struct sbx_steps *,
	    struct sbx_running **out, char *err, size_t errsz);
	int (*exec_plan)(const struct sbx_running *,
	    const struct sbx_request *, struct sbx_plan **out);
	const char *(*faketime)(void);
};

extern const struct sbx_adapter *const sbx_adapters[];
const struct sbx_adapter *sbx_adapters_find(const char *name);
/*
 * The adapter whose exec zone runs the checks of a lease of adapter name:
 * its own where it has one, else the first built-in that has one. NULL:
 * none has.
 */
const struct sbx_adapter *sbx_adapters_exec(const char *name);

/* ------------------------------------------------------------------ */
/* sbx_local.c: the trusted_local adapter (SPEC 3)                   */

extern const struct sbx_adapter sbx_adapter_local;

/* ------------------------------------------------------------------ */
/* sbx_bwrap.c: the bwrap adapter, both zones (SPEC 8.2, 8.3)       */

extern const struct sbx_adapter sbx_adapter_bwrap;
#define SBX_BWRAP_PATH "/usr/bin/bwrap"	/* absolute, never from PATH */
#define SBX_BWRAP_INIT "/run/corral/init" /* corral-sbx-init, inside */
#define SBX_BWRAP_HOME "/home/sbx"
#define SBX_BWRAP_WORK "/work"
#define SBX_BWRAP_ARGS_FD 3	/* bwrap --args: the policy, off the argv */
#define SBX_BWRAP_PASSWD_FD 4	/* --ro-bind-data: /etc/passwd */
#define SBX_BWRAP_GROUP_FD 5	/* --ro-bind-data: /etc/group */
#define SBX_BWRAP_HOSTS_FD 6	/* --ro-bind-data: /etc/hosts */
#define SBX_BWRAP_SECCOMP_FD 7	/* --seccomp: the cBPF filter (sbx_seccomp) */
#define SBX_BWRAP_TMP_BYTES (64ull << 20)
#define SBX_BWRAP_HOME_BYTES (64ull << 20)
#define SBX_EXEC_FAKETIME "/run/corral/libfaketime.so.1" /* inside */
/*
 * The holder's private runtime (sbx_bwrap_run.c, .attach): a tmpfs of
 * the holder's own mount namespace; on the host an empty directory. The
 * holder keeps its egress socket there too.
 */
#define SBX_BWRAP_RT_DIR "/run/corral/rt"
#define SBX_EXEC_MNT "/run/corral/exec"	/* host: a private bind only */

/*
 * The exec zone (SPEC 8.2; SANDBOX.md 5.a): the agent zone's hardening
 * (namespaces, seccomp, uid, root from /usr up), no network at all, no
 * helper (req->init_path is not used), and a hermetic environment: TZ=UTC,
 * LC_ALL/LANG=C.UTF-8, umask 022 (plan->umask), SOURCE_DATE_EPOCH =
 * req->source_date_epoch, PYTHONHASHSEED=0 and the other fixed seeds, and
 * where req->faketime is set, libfaketime bound read-only at
 * SBX_EXEC_FAKETIME, preloaded, with the clock frozen at the base commit's
 * time (monotonic clocks stay real, so timeouts work). Fresh /tmp and
 * $HOME each run. Pure. 0, -EINVAL (bad request), SBX_EPOLICY, -ENOMEM.
 */
SBX_NODISCARD int sbx_bwrap_exec_plan(const struct sbx_request *,
    struct sbx_plan **out);
/* Host path of libfaketime.so.1 if installed, else NULL (not pure). */
const char *sbx_bwrap_faketime_path(void);

/* ------------------------------------------------------------------ */
/*
 * sbx_bwrap_host.c: the bwrap adapter's resources on the host. A lease
 * gets a uid slot (sandbox ID "uid:<uid>", its scope req->scope, which
 * .provision, .teardown and .list all require) and its cgroups under
 * req->scope's tag; teardown kills what is left in those cgroups (and
 * signals nothing by uid: a slot whose uid still runs something outside
 * them stays claimed), hands req->workspace (kept for extraction) back to
 * root, and releases the slot if it is still the lease's. Its list: the
 * IDs of the uid slots claimed with exactly scope req->scope, and of
 * req->scope's lease cgroups that no slot claims (a live lease always
 * holds its slot), never a preflight's probe cgroup.
 */
#define SBX_BWRAP_ID_PREFIX "uid:"
void sbx_bwrap_host_sandbox_id(unsigned slot, char *buf, size_t sz);
/* 0 and *slot, or -EINVAL (not a slot's sandbox ID). Pure. */
SBX_NODISCARD int sbx_bwrap_host_slot_of(const char *sandbox_id,
    unsigned *slot);
/* The uid and gid a sandbox ID names. 0 or -EINVAL. Pure. */
SBX_NODISCARD int sbx_bwrap_host_uid_of(const char *sandbox_id, uid_t *uid,
    gid_t *gid);

/* ------------------------------------------------------------------ */
/*
 * sbx_uid.c: per-lease uids (SANDBOX.md 0.1). Slot N is uid and gid
 * SBX_UID_BASE + N, never a uid of the host's passwd: unique per live lease,
 * so RLIMIT_NPROC, file ownership and host-side process checks are exact.
 * A claim is DIR/slot-N holding the lease ID ("owner") and the state
 * directory that owns it ("scope"), both in place from the instant the
 * claim exists (a staging directory renamed onto slot-N); the lowest free
 * slot wins, so allocation is deterministic. Find and release match owner
 * and scope both: no state directory names or frees another's (SPEC 9.2).
 */
#define SBX_UID_BASE 2000000u
/*
 * The one machine-wide slot directory: uids are global, so every state
 * directory, test and tool on the host must claim from the same pool, or
 * two leases could run as one uid (SPEC 7.7).
 */
#define SBX_UID_DIR "/run/corral/uids"
#define SBX_UID_SLOTS 4096u
/*
 * A claim without a scope (an older corral's) goes back to the pool once
 * it is this old, its uid runs nothing and no process names its owner.
 */
#define SBX_UID_SCOPELESS_GRACE_S 600
/* The uid/gid of slot (pure). -EINVAL if slot >= SBX_UID_SLOTS. */
SBX_NODISCARD int sbx_uid_of_slot(unsigned slot, uid_t *uid, gid_t *gid);
/*
 * Claim the lowest free slot under dir for lease id of state directory
 * scope (absolute; it names the claim's owner, and a claim whose scope is
 * gone is stale), never one whose uid any process on the machine runs
 * under, taking back a stale slot (see sbx_uid_free) under an flock on
 * dir. 0, -EINVAL (no scope), SBX_EUIDPOOL (no free slot), -errno.
 */
SBX_NODISCARD int sbx_uid_claim(const char *dir, const char *scope,
    const char *id, unsigned *slot);
/*
 * mkdir path (mode) unless it exists; either way it must be a directory
 * owned by root (someone else's is not ours to use): 0, -EPERM, -errno.
 */
SBX_NODISCARD int sbx_uid_mkdir_root(const char *path, mode_t mode);
/* The slot under dir that (scope, id) holds: 0 and *slot, -ENOENT, -errno. */
SBX_NODISCARD int sbx_uid_find(const char *dir, const char *scope,
    const char *id, unsigned *slot);
/*
 * Release slot if (scope, id) holds it: 0, -ENOENT, -EPERM (another
 * lease's or another state directory's), -errno.
 */
SBX_NODISCARD int sbx_uid_release(const char *dir, unsigned slot,
    const char *scope, const char *id);

/* ------------------------------------------------------------------ */
/*
 * sbx_policy.c: policy (SPEC 8.6). An INI file (inih):
 *
 *   [network] allow = host:port, ...   on_egress_violation = fail|record
 *             loopback_port = PORT (0: none)
 *   [limits]  wall_time, cpu_time (s, m, h suffixes), cpu (cores, e.g.
 *             1.5), memory, swap, disk, tmp, home, file_size, output
 *             (bytes; K, M, G, T suffixes, powers of 1024), inodes, pids,
 *             nofile
 *   [env]     allow = NAME, ...
 *   [mounts]  ro = /abs/path, ...
 *   [checks]  NAME = shell command; timeout = the time limit of each
 *             check (a duration; "timeout" is no check name)
 *   [result]  max_files, max_file_bytes, max_total_bytes, allow_binary,
 *             allow_symlinks (true/false), output_dir (a relative
 *             directory of the workspace whose files are the artifacts;
 *             a narrower policy may only repeat the operator's or drop it),
 *             keep_workspace (true: the workspace stays until reject
 *             once the result is a commit; default false: released)
 *
 * Lists are comma or blank separated; a repeated list key appends within
 * one file. The shipped defaults are policies/default.ini (compiled in).
 * Everything here is pure.
 */
struct sbx_limits {
	unsigned long long wall_time;	/* seconds */
	unsigned long long cpu_time;	/* CPU seconds: RLIMIT_CPU */
	unsigned long long cpu_milli;	/* cores x 1000: the cfs quota */
	unsigned long long memory;	/* bytes: the memory cgroup */
	unsigned long long swap;	/* bytes beyond memory (0: none) */
	unsigned long long pids;	/* pids.max and RLIMIT_NPROC */
	unsigned long long disk;	/* workspace bytes */
	unsigned long long inodes;	/* workspace inodes */
	unsigned long long output;	/* PTY / pipe output bytes */
	unsigned long long file_size;	/* RLIMIT_FSIZE */
	unsigned long long nofile;	/* RLIMIT_NOFILE */
	unsigned long long tmp;		/* /tmp tmpfs bytes */
	unsigned long long home;	/* $HOME tmpfs bytes */
};

struct sbx_check {
	char *name;	/* [A-Za-z0-9_.-]+ */
	char *cmd;	/* run by /bin/sh -c in the exec zone */
};

enum sbx_egress_action {
	SBX_EGRESS_FAIL = 0,	/* end the lease: hermeticity_violation */
	SBX_EGRESS_RECORD,	/* record it and go on */
};

struct sbx_policy {
	char **net_allow;	/* "host:port", lowercase, sorted, unique */
	size_t nnet_allow;
	enum sbx_egress_action on_egress;
	unsigned loopback_port;
	struct sbx_limits limits;
	char **env_allow;	/* sorted, unique; never credential-shaped */
	size_t nenv_allow;
	size_t env_dropped;	/* credential-shaped names that were listed */
	char **mounts_ro;	/* absolute, normalised, sorted, unique */
	size_t nmounts_ro;
	struct sbx_check *checks;	/* sorted by name */
	size_t nchecks;
	unsigned long long check_timeout;	/* seconds, each check */
	unsigned long long max_files, max_file_bytes, max_total_bytes;
	bool allow_binary, allow_symlinks;
	bool keep_workspace;	/* kept past a materialised result */
	/* artifacts (SPEC 7.1): relative, no trailing '/'; "": none */
	char output_dir[256];
	/* [git] history (SPEC 6.4): generations of the base's ancestors the
	 * workspace gets; 0 the base alone, SBX_HISTORY_ALL every one */
	unsigned long long git_history;
	/* [model] spend_cap (SPEC 8.5): nano-USD a lease's model may cost,
	 * the lower of it and the provider's holds; 0: the policy sets none */
	unsigned long long spend_cap;
};
#define SBX_HISTORY_ALL ULLONG_MAX

/* A spend cap's nano-USD as the policy writes it: "5.00", "0.000125". */
void sbx_policy_usd(unsigned long long nano, char *buf, size_t bufsz);

/* Where a policy went wrong: "FILE:LINE: message". */
struct sbx_policy_error {
	char file[256];
	int line;	/* 0 when not about one line */
	char msg[256];
};

/* The shipped defaults (policies/default.ini). NULL on -ENOMEM. */
struct sbx_policy *sbx_policy_new_default(void);
void sbx_policy_free(struct sbx_policy *);
/*
 * The operator's policy: text (named `name` in errors) applied over base
 * (NULL: the shipped defaults); keys it sets replace base's. 0 and *out,
 * or SBX_EPOLICY with err filled (unknown section or key, bad value,
 * duplicate scalar, relative mount path, ...), or -ENOMEM.
 */
SBX_NODISCARD int sbx_policy_load(const char *text, const char *name,
    const struct sbx_policy *base, struct sbx_policy **out,
    struct sbx_policy_error *err);

/*
 * Widen p by what an agent profile's configured model endpoint and
 * installation need (the operator's configuration, never a repository's):
 * allow "host:port" (NULL: none), the host loopback port (0: none; another
 * one already granted is refused), one read-only mount (NULL: none), each
 * validated as a policy line would be. 0, SBX_EPOLICY with why, -ENOMEM.
 */
SBX_NODISCARD int sbx_policy_grant(struct sbx_policy *p, const char *allow,
    unsigned loopback, const char *mount, char *why, size_t whysz);

/* ------------------------------------------------------------------ */
/* sbx_agent.c: an agent profile's part of an agent-zone plan          */

#define SBX_AGENT_FILES_MAX 4
#define SBX_AGENT_FD 10		/* --file: the first seeded HOME file */

struct sbx_agent_file {
	const char *path;	/* relative to the zone's HOME */
	const char *text;
	size_t len;
};

struct sbx_agent_plan {
	char *const *env;	/* NAME=VALUE knobs (sbx__env_ok), or NULL */
	/* the placeholder key (no secret; a minted one goes by
	 * sbx_cred_plan_add): its name may be credential-shaped */
	const char *key_env, *key_value;
	const char *path_prefix;	/* "/a:/b" before the zone's PATH */
	const struct sbx_agent_file *files;	/* into HOME, 0600 */
	int nfiles;		/* at most SBX_AGENT_FILES_MAX */
};

/*
 * Add a to a bwrap agent-zone plan, before sbx_plan_open_data: --setenv
 * for each knob (a name the zone owns, LD_* or credential-shaped is
 * SBX_EPOLICY), PATH with path_prefix first, and each file written into
 * HOME from a data fd (SBX_AGENT_FD + i) with its parent directories.
 * 0, -EINVAL, -EBUSY, -ENOSPC, SBX_EPOLICY, -ENOMEM (the plan unchanged).
 */
SBX_NODISCARD int sbx_agent_plan_add(struct sbx_plan *,
    const struct sbx_agent_plan *);
/* A path below HOME: relative, no empty, '.' or '..' component. Pure. */
bool sbx_agent_path_ok(const char *path);

/* ------------------------------------------------------------------ */
/* sbx_policy_narrow.c: a repository's policy only narrows (SPEC 8.6)  */

/*
 * A repository's policy (text read from the base commit by the caller)
 * over the operator's: each key it sets may only narrow op's (a subset of
 * the allowlists and mounts, lower limits, fail over record, no loopback
 * port or the same one, false over true, op's checks kept and more added).
 * 0 and the effective policy in *out; SBX_EPOLICY (malformed) or
 * SBX_EWIDER (naming the key and line) with err filled; -ENOMEM.
 */
SBX_NODISCARD int sbx_policy_narrow(const struct sbx_policy *op,
    const char *text, const char *name, struct sbx_policy **out,
    struct sbx_policy_error *err);

/* ------------------------------------------------------------------ */
/* sbx_policy_canon.c: the canonical form, for receipts                */

/* SHA-256 of sbx_policy_canonical(p). 0 or -ENOMEM/-EIO. */
SBX_NODISCARD int sbx_policy_hash(const struct sbx_policy *,
    char hex[SBX_SHA256_HEX]);

/* ------------------------------------------------------------------ */
/* sbx_policy_env.c: the environment allowlist                         */

/*
 * NAME=VALUE for each allowlisted name present in environ (a
 * NULL-terminated "NAME=VALUE" vector, e.g. corral's own environ), never
 * a credential-shaped one. *out is NULL-terminated (sbx_strv_free).
 */
SBX_NODISCARD int sbx_policy_env(const struct sbx_policy *,
    char *const *environ, char ***out);

/* ------------------------------------------------------------------ */
/*
 * sbx_cgroup.c: per-lease cgroups (SPEC 8.4, 9.2; SANDBOX.md 3.6). Each
 * lease gets `corral/state-<tag>/lease-<id>` under corral's own cgroup
 * (this process's, from /proc/self/cgroup) in each controller, where the
 * tag (sbx_cgroup_scope_name) names the state directory that owns it: v1 memory, pids, cpu, freezer
 * (and cpuacct for accounting when mounted apart); v2 one directory. The
 * directories are absolute paths in struct sbx_cgroup; sbx_cgroup_describe
 * turns them into text for the lease journal (record before create: SPEC
 * 9.2) and sbx_cgroup_parse takes them back in another process. v2 is
 * implemented but untested on this host (docs/security-model.md).
 */
enum sbx_cgroup_mode {
	SBX_CGROUP_NONE = 0,	/* no usable hierarchy: fail closed */
	SBX_CGROUP_V1,
	SBX_CGROUP_V2,
};

#define SBX_CGROUP_MAX 6

struct sbx_cgroup {
	enum sbx_cgroup_mode mode;
	char id[128];
	int n;
	struct {
		char ctrl[16];	/* "memory", "pids", ...; "unified" (v2) */
		char *dir;	/* absolute: .../corral/lease-<id> */
	} c[SBX_CGROUP_MAX];
};

/*
 * "state-" and 16 hex digits of the SHA-256 of scope (the state
 * directory, absolute): the cgroup directory holding that state
 * directory's leases. 0 or -EINVAL.
 */
SBX_NODISCARD int sbx_cgroup_scope_name(const char *scope, char *buf,
    size_t sz);
/*
 * Where lease id of state directory scope has its cgroups, or will (no
 * side effect). 0, SBX_EUNAVAIL (no usable mode), -EINVAL (bad id, no
 * scope), -ENOMEM.
 */
SBX_NODISCARD int sbx_cgroup_locate(const char *scope, const char *id,
    struct sbx_cgroup **out);
/*
 * The same place with only what tracks processes, never limits them (a
 * trusted_local lease, SPEC 3): v1 pids and freezer; v2 its directory.
 */
SBX_NODISCARD int sbx_cgroup_locate_track(const char *scope, const char *id,
    struct sbx_cgroup **out);
/* "mode\nctrl dir\n..." for the journal, malloc'd; NULL on ENOMEM. */
char *sbx_cgroup_describe(const struct sbx_cgroup *);
/*
 * Back from sbx_cgroup_describe text, validated: every dir under
 * /sys/fs/cgroup, ending in /corral/state-<tag>/lease-<id> (or the
 * /corral/lease-<id> of journals older than state tags), no "." or ".."
 * component.
 * 0, -EINVAL, -ENOMEM.
 */
SBX_NODISCARD int sbx_cgroup_parse(const char *id, const char *text,
    struct sbx_cgroup **out);
void sbx_cgroup_free(struct sbx_cgroup *);

/* sbx_cgroup_limits.c: the plan's joins, and what the cgroups counted */
/* Append each cgroup.procs path to plan (the child joins before exec). */
SBX_NODISCARD int sbx_cgroup_plan(const struct sbx_cgroup *,
    struct sbx_plan *);

/* What the cgroups counted: which limit was hit (SPEC 8.4). */
struct sbx_cgroup_facts {
	unsigned long long mem_failcnt;	/* times the limit was reached */
	unsigned long long mem_max_usage;
	unsigned long long oom_kills;	/* processes the OOM killer took */
	bool under_oom;
	unsigned long long pids_max;	/* forks refused at pids.max */
	unsigned long long pids_current;
	unsigned long long cpu_throttled;	/* periods throttled */
	unsigned long long cpu_usage_ns;	/* 0 if not accounted */
};
SBX_NODISCARD int sbx_cgroup_facts(const struct sbx_cgroup *,
    struct sbx_cgroup_facts *);
/* The named reason a limit gives: "memory", "pids", or NULL (pure). */
const char *sbx_cgroup_limit_hit(const struct sbx_cgroup_facts *);

/* sbx_cgroup_kill.c: signals and teardown */
/*
 * Send sig to every process of the lease but bwrap itself (the outer bwrap
 * in corral's pid namespace and the sandbox's pid 1) and corral-sbx-init,
 * so SIGINT/SIGTERM reach the agent inside before SIGKILL (SPEC 5.5).
 * The cgroups are frozen while the pids are read and signalled (no pid
 * can be freed and reused by another process meanwhile) and thawed after.
 * Returns how many were signalled, or -errno.
 */
int sbx_cgroup_signal(const struct sbx_cgroup *, int sig);
/* The same, sparing none: every process of the cgroups (trusted_local). */
int sbx_cgroup_kill(const struct sbx_cgroup *, int sig);
/* ... but those keep(pid, ud) says to keep (read while frozen). */
int sbx_cgroup_kill_unless(const struct sbx_cgroup *, int sig,
    bool (*keep)(pid_t, void *), void *ud);
/*
 * Teardown by exact ID: freeze, SIGKILL every pid, thaw, wait (at most
 * timeout_ms) until empty, rmdir. Idempotent: absent is done. 0, -EBUSY
 * (processes remain at the deadline), -errno.
 */
SBX_NODISCARD int sbx_cgroup_teardown(const struct sbx_cgroup *,
    unsigned timeout_ms);

/* ------------------------------------------------------------------ */
/*
 * sbx_workspace.c: the bounded workspace and safe removal (SPEC 8.4; 9.2).
 * A per-lease ext4 image DIR.img (sparse, mkfs.ext4 -m 0 -N inodes,
 * root owned by the lease uid, 0700) loop-mounted on DIR with nosuid,nodev
 * (the loop device named "corral-lease-<id>", auto-cleared on unmount):
 * bytes and inodes are bounded exactly and nothing is charged to memory.
 */
SBX_NODISCARD int sbx_workspace_mount(const char *id, const char *dir,
    unsigned long long bytes, unsigned long long inodes, uid_t uid,
    gid_t gid);
/* Is dir a mount point? */
bool sbx_workspace_mounted(const char *dir);
/*
 * Unmount dir (lazily if busy), then remove DIR.img and the empty DIR.
 * Nothing of the agent's tree is walked. Idempotent. 0 or -errno.
 */
SBX_NODISCARD int sbx_workspace_umount(const char *dir);
/*
 * The end of a lease's bounded workspace: sbx_workspace_umount if dir is
 * mounted, else nothing (a workspace that never had a disk limit). 0 or
 * -errno.
 */
SBX_NODISCARD int sbx_workspace_release(const char *dir);
/*
 * rm -rf path without following a symlink or crossing a mount, whatever
 * the tree (chmod 000 directories, FIFOs, sockets, symlinks to /etc, any
 * depth): each directory is opened O_NOFOLLOW|O_DIRECTORY, made u+rwx
 * before reading, and descended only on the same mount; the walk holds
 * two fds at most and no recursion. The project's one removal of a tree
 * a sandbox may have written (lease/ removes its directories with it).
 * 0 (gone, or absent), -EXDEV (a mount was met and left in place; the
 * rest is removed), -ESTALE (the tree moved while walked), -errno.
 */
SBX_NODISCARD int sbx_workspace_rmtree_safe(const char *path);
/*
 * chown a directory tree (a workspace) to uid:gid without following a
 * symlink or crossing a mount, clearing set-id bits of regular files; at
 * most SBX_TREE_DEPTH levels (deeper: -ELOOP, the rest left as it is).
 * 0 or -errno.
 */
#define SBX_TREE_DEPTH 512
SBX_NODISCARD int sbx_workspace_chown_tree(const char *path, uid_t uid,
    gid_t gid);

/* ------------------------------------------------------------------ */
/* sbx_exec.c: running a plan without a PTY (the exec zone, the doctor)   */

struct sbx_exec_opts {
	size_t cap;		/* bytes kept of stdout + stderr together */
	unsigned long long timeout_ms;	/* wall time; 0: none */
	int stdin_fd;		/* -1: /dev/null */
};

struct sbx_exec_result {
	int wstatus;		/* as waitpid gives it */
	bool timed_out;		/* killed at the wall-time limit */
	bool truncated;		/* output beyond cap was dropped */
	bool output_killed;	/* killed: overflow went on past 4 x cap */
	char *out, *err;	/* NUL-terminated, each at most cap bytes */
	size_t out_len, err_len;
	unsigned long long wall_ms;
	pid_t pid;		/* the child (bwrap), reaped */
};

/*
 * Open the plan's data fds, spawn it (stdin from opts->stdin_fd, stdout
 * and stderr to pipes), apply the pre-exec recipe in the child (cgroups,
 * fd map then close the rest, rlimits, uid drop, no_new_privs, umask,
 * cwd), read both pipes with the byte cap, kill at the timeout, reap.
 * Blocking: run it off any event loop (uv_queue_work). 0 and *res (free
 * with sbx_exec_result_clear), or -errno if it could not start.
 */
SBX_NODISCARD int sbx_exec_run(struct sbx_plan *, const struct sbx_exec_opts *,
    struct sbx_exec_result *res);
void sbx_exec_result_clear(struct sbx_exec_result *);
/*
 * Versions of the exec zone's tools (sh, cc, python3, make, git when
 * present) as "name: version\n" lines, malloc'd. 0 or -errno.
 */
SBX_NODISCARD int sbx_exec_tool_versions(char **text);

/* ------------------------------------------------------------------ */
/*
 * sbx_doctor.c: the preflight (SPEC 8.7; SANDBOX.md 5.c). It fails closed:
 * each failed check names its halt reason; report->halt is the first.
 */
#define SBX_PROBE_IN "/run/corral/probe"	/* corral-sbx-probe, inside */
/* The IDs of a preflight's own resources: "doctor-<pid>". */
#define SBX_DOCTOR_ID_PREFIX "doctor-"
#define SBX_DOCTOR_MAX_CHECKS 32

/* Preflight facts for every receipt. */
struct sbx_facts {
	char kernel[256];	/* uname: sysname release version machine */
	char bwrap_path[64];
	char bwrap_version[64];
	char bwrap_sha256[SBX_SHA256_HEX];
	char filter_sha256[SBX_SHA256_HEX];
	char policy_sha256[SBX_SHA256_HEX];
	char cgroup_mode[8];		/* "v1", "v2", "none" */
	int landlock_abi;		/* report only; -1: none */
	int legacy_tiocsti;	/* dev.tty.legacy_tiocsti; -1: unknown */
	char corral_version[32];
	bool verified;			/* `doctor --adversarial` passed here */
};

struct sbx_doctor_check {
	char name[32];		/* "bwrap", "userns", "seccomp", ... */
	bool ok;
	int halt;		/* enum sbx_halt when !ok */
	char detail[256];
};

struct sbx_doctor_report {
	int halt;		/* 0, or the first failed check's halt */
	char detail[512];	/* the first failure, for the operator */
	struct sbx_facts facts;
	struct sbx_doctor_check checks[SBX_DOCTOR_MAX_CHECKS];
	int nchecks;
};

struct sbx_doctor_opts {
	const struct sbx_policy *policy;	/* the effective policy */
	const char *state_dir;	/* corral's state dir (absolute): the
				 * owner of what the run makes, marker */
	const char *init_path;	/* host path of corral-sbx-init */
	const char *probe_path;	/* host path of corral-sbx-probe */
	/*
	 * An unprivileged lease uid to probe as: the lease's own slot before
	 * a lease, or a slot claimed for the doctor run (sbx_uid_claim with
	 * an ID like "doctor-<pid>") and released after.
	 */
	uid_t uid;
	gid_t gid;
	char *const *homes;	/* host homes; NULL: $HOME, /root, /home/... */
	const char *ssh_auth_sock; /* the operator's SSH agent socket */
	bool quick;		/* skip the sandboxed probes (facts, policy) */
	/*
	 * The agent profile (an agents/ rules file) and the model endpoints
	 * ("host:port", NULL-terminated) it needs, one of which must be
	 * allowlisted (SPEC 8.7); NULL: it needs none.
	 */
	const char *agent;
	const char *const *model_endpoints;
	/*
	 * The journal's steps for what the run makes on the host: plan
	 * before, created after, removed once gone, with kind
	 * SBX_DOCTOR_CGROUP (identity the cgroup's lease ID, "doctor-<pid>")
	 * or SBX_DOCTOR_DIR (the scratch directory's path). NULL: none.
	 */
	const struct sbx_steps *steps;
};
#define SBX_DOCTOR_CGROUP "probe_cgroup"
#define SBX_DOCTOR_DIR "probe_dir"

/*
 * Run every check: bwrap (absolute path, regular, not setuid, >= 0.8, its
 * hash), user namespaces as opts->uid (a real bwrap run), the real seccomp
 * filter inside the real sandbox (corral-sbx-probe: TIOCSTI with and
 * without high bits, TIOCLINUX, unshare/clone(CLONE_NEWUSER), AF_VSOCK,
 * io_uring_setup, mount; confirmed on the host where it can be: nothing
 * injected into the probe's terminal, Seccomp mode 2, no capabilities,
 * only fds 0-2), the exec zone has no network, cgroups create/remove round
 * trip, and the policy (sbx_doctor_policy). Fills report->facts either
 * way. Returns 0 when all passed, SBX_EPROBE when one failed (see
 * report->halt), -EINVAL / -ENOMEM.
 */
SBX_NODISCARD int sbx_doctor_run(const struct sbx_doctor_opts *,
    struct sbx_doctor_report *report);
/*
 * The adversarial marker: a file in state_dir keyed by (kernel, bwrap
 * hash, filter hash, corral version), written when `corral doctor
 * --adversarial` passed. A configuration without one is `unverified`.
 */
SBX_NODISCARD int sbx_doctor_mark_verified(const char *state_dir,
    const struct sbx_facts *);

/* sbx_doctor_probe.c: the checks that run sandboxes, and their leftovers */
/*
 * Take back what runs of state_dir's preflight left when killed midway
 * (their pid is gone): probe cgroups (state_dir's "doctor-<pid>") and
 * scratch directories (/tmp/corral-doctor-<tag>-<pid>-*, root's only).
 * sbx_doctor_run does this first. How many it removed, or -EINVAL.
 */
int sbx_doctor_reclaim(const char *state_dir);
/*
 * Remove one thing a preflight of state_dir made, by the identity its
 * journal row holds (kind SBX_DOCTOR_CGROUP or SBX_DOCTOR_DIR; a directory
 * only under state_dir's scratch prefix and root's). 0 when it is gone
 * (or never was), -EINVAL for what is not such a thing, -errno.
 */
SBX_NODISCARD int sbx_doctor_remove(const char *state_dir, const char *kind,
    const char *identity);

/* ------------------------------------------------------------------ */
/*
 * sbx_command.c: the command adapter (SPEC 8.1, 3). The operator's config
 * ([command] provision, exec, teardown, list, timeout) names four hook
 * commands that run the agent wherever the operator wants (a remote VM,
 * SSH hosts, a cluster engine). Each runs as `/bin/sh -c 'CMD "$@"' NAME
 * ARGS...` (see sbx_cred.c) with corral's environment:
 *
 *   provision ID WORKSPACE  (CORRAL_LEASE_ID, CORRAL_WORKSPACE,
 *             CORRAL_LEASE_DIR) prepare the lease; exit 0; an optional
 *             first stdout line is a note for the receipt.
 *   exec      ID WORKSPACE -- CMD...  the plan: stdio is the lease PTY;
 *             run CMD there; its exit status is the agent's (125: the
 *             adapter itself failed); the workspace's contents must be
 *             back in WORKSPACE when it returns.
 *   teardown  ID  remove everything of the lease; exit 0 also when
 *             nothing is left (idempotent); non-zero is retried later.
 *   list      print one lease ID per line for everything still held.
 *
 * corral cannot check what the hooks do: the label is SBX_COMMAND_LABEL.
 * The contract in full: docs/command-adapter.md.
 */
#define SBX_COMMAND_LABEL "command (operator-asserted)"
#define SBX_COMMAND_ID_PREFIX "command:"	/* its journal sandbox ID */
#define SBX_COMMAND_EXIT_ADAPTER 125	/* exec: the adapter failed */

struct sbx_command_config {
	const char *provision;
	const char *exec;
	const char *teardown;
	const char *list;
	unsigned long long timeout_ms;	/* per hook but exec; 0: defaults */
	/*
	 * The state directory the hooks work for, passed to provision,
	 * teardown and list as CORRAL_SCOPE (the adapter sets it from
	 * req->scope): list names only what was provisioned with the same.
	 */
	const char *scope;
};

/*
 * .plan needs req->command (SBX_EPOLICY without all four hooks) and
 * req->id, req->workspace, req->cmd; the plan inherits corral's
 * environment and runs the exec hook. .probe, having no configuration,
 * always says SBX_EUNAVAIL: use sbx_command_probe. .provision,
 * .teardown and .list run the hooks of req->command (sandbox ID
 * "command:ID"); .list sorts nothing: the hook's answer as printed.
 */
extern const struct sbx_adapter sbx_adapter_command;
/* All four hooks set? 0 or SBX_EPOLICY with why. Pure. */
int sbx_command_check(const struct sbx_command_config *, char *why,
    size_t whysz);
/* The list hook runs and answers sanely: 0, SBX_EPOLICY, SBX_EPROBE. */
SBX_NODISCARD int sbx_command_probe(const struct sbx_command_config *,
    char *why, size_t whysz);

#endif /* CORRAL_SBX_H */
