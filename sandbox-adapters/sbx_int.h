/*
 * sbx_int.h: what the files of sandbox-adapters/ share that is not the
 * module's public interface (sbx.h), in blocks per .c file as sbx.h is.
 * Only the module and its own tests include it (style/boundaries). The
 * egress proxy's own layout is in sbx_proxy_int.h.
 */
#ifndef CORRAL_SBX_INT_H
#define CORRAL_SBX_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"

/* ------------------------------------------------------------------ */
/*
 * A lease's sandbox as its holder runs it (struct sbx_running, opaque
 * outside the module): its cgroups, every adapter that has a holder side;
 * for bwrap (sbx_bwrap_run.c) also its uid and the private runtime's
 * read-only sources; trusted_local (sbx_local.c) has the cgroups only.
 */
#define SBX__RUN_MAX_RO 64

struct sbx_running {
	struct sbx_cgroup *cg;
	uid_t uid;
	gid_t gid;
	char *ro[SBX__RUN_MAX_RO];	/* runtime paths of the ro sources */
	struct sbx_mount mnt[SBX__RUN_MAX_RO];
	int nro;
};

/* ------------------------------------------------------------------ */
/* sbx_strv.c: a and b (sorted, unique) merged into *out. 0, -ENOMEM. */
int sbx__strv_union(char *const *a, char *const *b, char ***out);

/* ------------------------------------------------------------------ */
/* sbx_exec.c: CLOCK_MONOTONIC in milliseconds, for deadlines. */
unsigned long long sbx__now_ms(void);

/* sbx_plan.c */

struct sbx_plan *sbx_plan_new(void);
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

/* ------------------------------------------------------------------ */
/* sbx_bwrap.c: "X.Y.Z" from `bwrap --version` into buf. 0 or -errno. */
int sbx__bwrap_version(char *buf, size_t sz);

/* ------------------------------------------------------------------ */
/* sbx_bwrap_host.c: the bwrap adapter's .provision, .teardown, .list. */
int sbx__bwrap_host_provision(const struct sbx_request *,
    const struct sbx_steps *, struct sbx_provisioned *, char *err,
    size_t errsz);
int sbx__bwrap_host_teardown(const struct sbx_request *,
    const struct sbx_resource *, size_t, const struct sbx_steps *, char *err,
    size_t errsz);
int sbx__bwrap_host_list(const struct sbx_request *, char ***ids, char *err,
    size_t errsz);

/* ------------------------------------------------------------------ */
/* sbx_bwrap_run.c: the bwrap adapter's holder side (.attach to .detach), exec zone. */
int sbx__bwrap_run_attach(const struct sbx_request *,
    const struct sbx_resource *, size_t, struct sbx_attached *,
    struct sbx_running **, char *err, size_t errsz);
int sbx__bwrap_run_enter(const struct sbx_running *,
    const struct sbx_request *, struct sbx_plan **);
int sbx__bwrap_run_signal(const struct sbx_running *, int sig);
int sbx__bwrap_run_usage(const struct sbx_running *, struct sbx_usage *);
int sbx__bwrap_run_stop(const struct sbx_running *, unsigned timeout_ms);
void sbx__bwrap_run_detach(struct sbx_running *);
int sbx__bwrap_run_exec(const struct sbx_request *, const struct sbx_steps *,
    struct sbx_running **out, char *err, size_t errsz);
int sbx__bwrap_run_exec_plan(const struct sbx_running *,
    const struct sbx_request *, struct sbx_plan **out);

/* ------------------------------------------------------------------ */
/* sbx_command.c */

/* A lease ID the hooks may take or name (printable, no '/'). Pure. */
bool sbx_command_id_ok(const char *id, size_t len);
/*
 * Run list: the IDs it holds, NULL-terminated (sbx_strv_free). A line that
 * is not an ID fails the whole answer (SBX_EPROBE). Blocking.
 */
SBX_NODISCARD int sbx_command_list(const struct sbx_command_config *,
    char ***ids, char *why, size_t whysz);
/*
 * Run provision for req (id, workspace, lease_dir). 0 with the hook's
 * first stdout line in note; SBX_EPROBE (the hook failed: why), SBX_EPOLICY,
 * -EINVAL, -errno. Blocking.
 */
SBX_NODISCARD int sbx_command_provision(const struct sbx_command_config *,
    const struct sbx_request *req, char *note, size_t notesz, char *why,
    size_t whysz);
/* Run teardown for id: 0, or SBX_EPROBE (retry later). Blocking. */
SBX_NODISCARD int sbx_command_teardown(const struct sbx_command_config *,
    const char *id, char *why, size_t whysz);

/* ------------------------------------------------------------------ */
/* sbx_hook.c: operator hook commands (credentials, command adapter). */
#define SBX_HOOK_TIMEOUT_MS 30000
#define SBX_HOOK_ERR_MAX 2048

struct sbx__hook {
	char *out;		/* stdout, NUL-terminated, at most outcap */
	size_t outlen, outcap;
	bool out_over;		/* stdout went past outcap (dropped) */
	char err[SBX_HOOK_ERR_MAX + 1];
	size_t errlen;
	int status;		/* wait status */
	bool timed_out;		/* killed (process group) at the timeout */
};

/*
 * Run `/bin/sh -c 'cmd "$@"' args...` (args[0] is $0) with corral's
 * environment plus extra_env ("NAME=VALUE", replacing the same names),
 * in (inlen bytes, may be NULL) on stdin, stdout and stderr captured;
 * 0 timeout_ms means SBX_HOOK_TIMEOUT_MS. Blocking. 0 with *r filled
 * (sbx__hook_clear), or -errno.
 */
int sbx__hook_run(const char *cmd, const char *const *args,
    const char *const *extra_env, const char *in, size_t inlen,
    unsigned long long timeout_ms, size_t outcap, struct sbx__hook *r);
void sbx__hook_clear(struct sbx__hook *);
/* "NAME hook exited N: its stderr on one line", secret scrubbed. */
void sbx__hook_why(char *why, size_t whysz, const char *hook,
    const struct sbx__hook *, const char *secret);

/* ------------------------------------------------------------------ */
/* sbx_uid.c */

/*
 * Does any process on the machine run as uid (real, effective, saved or
 * filesystem uid or gid; a zombie runs nothing)? sbx_uid_claim skips such
 * slots; a caller
 * predicting the next free slot must skip them too. True when /proc
 * cannot be read.
 */
bool sbx_uid_busy(uid_t uid);
/* 0: nothing runs as uid; 1: zombies only; 2: a live process (or unknown). */
int sbx_uid_procs(uid_t uid);
/*
 * sbx_uid_claim, considering only slots first and above (a caller that
 * planned slot `first` never gets a lower one it did not plan).
 */
SBX_NODISCARD int sbx_uid_claim_from(const char *dir, const char *scope,
    const char *id, unsigned first, unsigned *slot);
/*
 * Is slot n under dir free to claim now: no claim directory, or a stale
 * one (its scope names a state directory that is gone), and its uid runs
 * nothing? A prediction; sbx_uid_claim decides.
 */
bool sbx_uid_free(const char *dir, unsigned n);
/*
 * The lease IDs holding slots under dir with exactly this scope (sorted,
 * unique; sbx_strv_free). Another scope's claims, and claims without one,
 * are never named.
 */
SBX_NODISCARD int sbx_uid_list(const char *dir, const char *scope,
    char ***ids);
/* Does (scope, id) hold slot under dir? 0, -ENOENT, -EPERM, -EINVAL. */
SBX_NODISCARD int sbx_uid_held(const char *dir, unsigned slot,
    const char *scope, const char *id);

/* ------------------------------------------------------------------ */
/* sbx_cgroup.c */

/*
 * v1 when memory, pids, cpu and freezer are mounted as v1 hierarchies
 * (hybrid hosts included: a v2 tree with no controllers is ignored), v2
 * when /sys/fs/cgroup is cgroup2 with memory, pids and cpu available,
 * else NONE. 0 or -errno.
 */
SBX_NODISCARD int sbx_cgroup_detect(enum sbx_cgroup_mode *mode);
/*
 * The IDs of state directory scope's lease cgroups (corral/state-<tag>/
 * in any controller; for reconciliation), sorted, unique. Another state
 * directory's are never named. *ids is NULL-terminated (sbx_strv_free).
 * 0 or -errno.
 */
SBX_NODISCARD int sbx_cgroup_list(const char *scope, char ***ids);
const char *sbx_cgroup_mode_name(enum sbx_cgroup_mode);
/*
 * Read the file at path into buf, NUL-terminated, up to sz - 1 bytes
 * (short reads and EINTR go on reading). Its length, or -errno.
 */
int sbx__read_file(const char *path, char *buf, size_t sz);

/* sbx_cgroup_limits.c */

/*
 * Make the directories and write the limits (memory and memory+swap,
 * pids.max, the cfs quota over a 100 ms period; 0 leaves one unlimited).
 * An existing directory of the same lease is reused. On failure what was
 * made is removed. 0 or -errno.
 */
SBX_NODISCARD int sbx_cgroup_create(const struct sbx_cgroup *,
    const struct sbx_limits *);

/* sbx_cgroup_kill.c */

/*
 * The live pids in the lease's cgroups (union, sorted), malloc'd in *pids.
 * An absent cgroup has none. 0 or -errno.
 */
SBX_NODISCARD int sbx_cgroup_pids(const struct sbx_cgroup *, pid_t **pids,
    size_t *n);

/* ------------------------------------------------------------------ */
/* sbx_workspace.c */

/*
 * Put workspace ws (lease id's seed) on its own bounded filesystem
 * (sbx_workspace_mount: l->disk bytes, l->inodes inodes, root owned by
 * uid:gid): the seed is moved aside to ws.seed, the image mounted at ws
 * and the seed copied in (never following a symlink), then removed; a ws
 * that is mounted already (sbx__workspace_make, seeded in place) is kept
 * as it is. The points "bound" "before" (seed moved) and "created" (image
 * mounted) go to s->point. 0 or a negative code with err filled.
 */
int sbx__workspace_bound(const char *id, const char *ws,
    const struct sbx_limits *l, uid_t uid, gid_t gid,
    const struct sbx_steps *s, char *err, size_t errsz);
/*
 * The bwrap adapter's .workspace: with req->limits->disk set, the bounded
 * image of that size mounted at req->workspace (root's, 0700, empty; the
 * disk admitted as sbx__workspace_bound admits it), else a plain 0700
 * directory.
 */
int sbx__workspace_make(const struct sbx_request *req, char *err,
    size_t errsz);

/* ------------------------------------------------------------------ */
/*
 * sbx_seccomp.c: the zones' seccomp filter (SPEC 8.3; SANDBOX.md 0.3,
 * 0.6). A flatpak-style denylist over a default allow, built with
 * libseccomp for x86_64 only (syscalls of any other ABI, i386 int 0x80 and
 * x32 included, fail with EPERM). Denied with EPERM: ioctl TIOCSTI and
 * TIOCLINUX (32-bit masked compare: CVE-2019-10063), socket() of any family
 * but AF_UNIX, AF_INET, AF_INET6, AF_NETLINK (so AF_VSOCK), io_uring_*,
 * unshare/clone with CLONE_NEWUSER, setns, the mount API, ptrace and
 * process_vm_*, keyrings, bpf, perf_event_open, userfaultfd, kexec_*,
 * modules, swap, reboot, acct, quotactl, *_handle_at, unsafe personality
 * flags. clone3 fails with ENOSYS (its flags cannot be inspected; libc falls
 * back to clone). The bwrap plans pass it as `--seccomp SBX_BWRAP_SECCOMP_FD`.
 */

/* The filter as cBPF (struct sock_filter[]), malloc'd. 0 or -errno. */
SBX_NODISCARD int sbx_seccomp_build(unsigned char **bpf, size_t *len);
/* SHA-256 of the exact bytes sbx_seccomp_build yields (for receipts). */
SBX_NODISCARD int sbx_seccomp_hash(char hex[SBX_SHA256_HEX]);
/*
 * Install bpf in the calling thread (sets no_new_privs first): for tests and
 * probes of the filter outside bwrap. Irreversible. 0 or -errno.
 */
SBX_NODISCARD int sbx_seccomp_load(const unsigned char *bpf, size_t len);

/* ------------------------------------------------------------------ */
/*
 * sbx_policy.c: what the narrowing check and the canonical form share with
 * the parser: the key table, the parse with the line each key was set on.
 */

struct sbx__policy_parse;

enum sbx__policy_ktype {
	SBX_PK_DURATION,	/* seconds; s, m, h, d */
	SBX_PK_BYTES,	/* bytes; K, M, G, T */
	SBX_PK_COUNT,	/* a positive integer */
	SBX_PK_CPU,		/* cores, up to 3 decimals */
	SBX_PK_BOOL,
	SBX_PK_PORT,		/* 0..65535 */
	SBX_PK_EGRESS,	/* fail | record */
	SBX_PK_NET,		/* list of host:port */
	SBX_PK_ENV,		/* list of names */
	SBX_PK_MOUNTS,	/* list of absolute paths */
	SBX_PK_RELDIR,	/* one relative directory (char array) */
	SBX_PK_HISTORY,	/* a count, 0 included, or "all" */
	SBX_PK_USD,		/* nano-USD from "5.00"; "none": 0 */
};

struct sbx__policy_key {
	const char *section;
	const char *name;
	enum sbx__policy_ktype type;
	size_t off;	/* scalars: offset in struct sbx_policy */
	bool zero_ok;
};

/* The key table, in the order of the canonical form; *n its length. */
const struct sbx__policy_key *sbx__policy_keys(size_t *n);
/*
 * Parse text over p (modified in place), as sbx_policy_load does, keeping
 * in *out (always set; sbx__policy_parse_free) the line each key was set
 * on. 0, SBX_EPOLICY (err says where), -ENOMEM.
 */
int sbx__policy_parse(struct sbx_policy *p, const char *text,
    const char *name, struct sbx_policy_error *err,
    struct sbx__policy_parse **out);
/*
 * The line key (an index in the table) was set on, or for key == its
 * length, the line of the check named check; 0 if not set.
 */
int sbx__policy_parse_line(const struct sbx__policy_parse *, size_t key,
    const char *check);
void sbx__policy_parse_free(struct sbx__policy_parse *);
/* The policy's string lists: push a copy, NULL-terminated; membership. */
int sbx__policy_vec_push(char ***v, size_t *n, const char *s);
bool sbx__policy_vec_has(char *const *v, size_t n, const char *s);
/*
 * m (absolute, normalised) is, holds or (but for /tmp) is below a host
 * system path (/proc, /sys, /dev, /tmp, /run/corral, /sys/fs/cgroup), or
 * is, holds or is below state_dir (NULL: not checked): true and why said.
 */
bool sbx__policy_mount_host(const char *m, const char *state_dir, char *why,
    size_t whysz);
/* Fill err (NULL: nothing) with file ("policy" if NULL), line and text. */
void sbx__policy_errf(struct sbx_policy_error *err, const char *file,
    int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A deep copy of a policy; NULL on ENOMEM. */
struct sbx_policy *sbx_policy_dup(const struct sbx_policy *);

/* ------------------------------------------------------------------ */
/* sbx_policy_narrow.c */

/*
 * Is `p` at most as wide as `op`, key by key? 0, or SBX_EWIDER with the
 * first wider key named in err->msg (err->line 0).
 */
SBX_NODISCARD int sbx_policy_within(const struct sbx_policy *op,
    const struct sbx_policy *p, struct sbx_policy_error *err);

/* ------------------------------------------------------------------ */
/* sbx_policy_canon.c */

/* The canonical text of p (sorted, normalised), malloc'd; NULL: ENOMEM. */
char *sbx_policy_canonical(const struct sbx_policy *);

/* ------------------------------------------------------------------ */
/* sbx_policy_env.c */

/* *_TOKEN, *_KEY, *SECRET*, *PASSWORD*, AWS_*, SSH_AUTH_SOCK, ... */
bool sbx_policy_env_credential_shaped(const char *name);

/* ------------------------------------------------------------------ */
/* sbx_doctor.c */

/* The host's credential paths for homes (+ the agent socket), malloc'd. */
SBX_NODISCARD int sbx_doctor_credential_paths(char *const *homes,
    const char *ssh_auth_sock, char ***out);
/* Facts only (no probes): kernel, bwrap, filter, cgroup mode, ... */
SBX_NODISCARD int sbx_doctor_facts(const struct sbx_policy *,
    const char *state_dir, struct sbx_facts *);
/*
 * The policy checks alone (pure): unrestricted network (a '*' in the
 * allowlist) is isolation_unsatisfiable; a read-only mount equal to,
 * under, or containing a credential path (each home's .ssh, .claude,
 * .config, .aws, .gnupg, .docker, .kube, .netrc..., /root, docker.sock,
 * the SSH agent socket, /run/user, D-Bus) is credential_scope_invalid.
 * cred is a NULL-terminated list of absolute paths
 * (sbx_doctor_credential_paths). Returns the halt, why filled.
 */
int sbx_doctor_policy(const struct sbx_policy *, char *const *cred,
    char *why, size_t whysz);
bool sbx_doctor_verified(const char *state_dir, const struct sbx_facts *);
/* Add a check to the report; the first that fails sets its halt. */
void sbx__doctor_check(struct sbx_doctor_report *, const char *name,
    bool ok, int halt, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* ------------------------------------------------------------------ */
/* sbx_doctor_probe.c */

/* The cgroups check: an enforcing mode, a create/remove round trip. */
void sbx__doctor_cgroups(const struct sbx_doctor_opts *,
    struct sbx_doctor_report *);
/*
 * The checks that run sandboxes as o->uid: user namespaces, then (if
 * those passed) the probe in a real agent zone and an exec zone, in a
 * scratch directory journaled through o->steps and removed after.
 */
void sbx__doctor_zones(const struct sbx_doctor_opts *,
    struct sbx_doctor_report *);

/* ------------------------------------------------------------------ */
/*
 * sbx_egress.c: insert bwrap options into a bwrap plan's --args data,
 * right before its "--remount-ro /" (mounts need the root still writable),
 * and arguments for corral-sbx-init right after the helper's path in argv.
 * Before sbx_plan_open_data only: -EBUSY after. 0, -EINVAL (not a bwrap
 * agent zone plan), -ENOMEM; on error the plan is unchanged.
 */
int sbx__egress_plan_insert(struct sbx_plan *, const char *const *opts,
    size_t nopts, const char *const *init_args, size_t ninit);
/*
 * sbx_bwrap.c: are these NAME=VALUE entries ones a zone may be given? 0,
 * -EINVAL (malformed), SBX_EPOLICY (credential-shaped, LD_*, or a name
 * the zone owns: PATH, HOME, the proxies...).
 */
int sbx__env_ok(char *const *env);
/* Is name a zone-owned one (PATH, HOME, the proxies...) or LD_*? */
bool sbx__env_reserved(const char *name);
/*
 * sbx_policy_env.c: credential-shaped (*_TOKEN, *_KEY, *SECRET*, ...;
 * with vendor, also every AWS_*, ANTHROPIC_*, OPENAI_* ... name).
 */
bool sbx__env_shaped(const char *name, bool vendor);

/*
 * May the proxy dial this resolved address? Only global unicast: no
 * private, loopback, link-local, CGNAT, ULA, multicast, unspecified,
 * documentation, benchmarking or reserved range; IPv4-mapped, NAT64 and
 * 6to4 IPv6 forms are judged by the IPv4 address inside. Pure.
 */
bool sbx_egress_addr_global(const struct sockaddr *);
/*
 * The decision on a CONNECT target, before any lookup: SBX_EGRESS_OK (an
 * allowlist entry matched exactly), SBX_EGRESS_LOOPBACK_GRANT (the grant's
 * name and port: dial 127.0.0.1:port, no lookup), or the refusal. *out is
 * filled on OK and LOOPBACK_GRANT, zeroed otherwise. Pure.
 */
enum sbx_egress_reason sbx_egress_decide(const struct sbx_egress_rules *,
    const char *target, size_t len, struct sbx_egress_target *out);
/*
 * Parse an authority-form target "host:port" (len bytes, no NUL needed)
 * into *out (lower-cased host). SBX_EGRESS_OK or the refusal. Pure.
 */
enum sbx_egress_reason sbx_egress_parse(const char *target, size_t len,
    struct sbx_egress_target *out);
/*
 * 0, or SBX_EPOLICY with why filled: the lease halts with
 * isolation_unsatisfiable (SBX_HALT_ISOLATION_UNSATISFIABLE, 30) when the
 * policy asks for unrestricted network (unrestricted, or a '*' entry),
 * holds an entry that is not an exact host:port, or a malformed loopback
 * grant, or the agent needs a model endpoint none of which is allowed.
 * Pure.
 */
int sbx_egress_preflight(const struct sbx_egress_check *, char *why,
    size_t whysz);

/* ------------------------------------------------------------------ */
/* sbx_proxy.c */

/* Requests in flight now (see quiet_ms). */
unsigned sbx_proxy_inflight(const struct sbx_proxy *);
/*
 * The lease's unix sockets (the proxy's, the model gateway's): bind l at
 * path 0600 (umask around bind; a stale socket replaced, never another
 * file), owned by uid:gid. 0, -EEXIST, -EPERM, -errno or a libuv error.
 */
struct uv_pipe_s;
struct uv_handle_s;
int sbx__sock_bind(struct uv_pipe_s *l, const char *path, uid_t uid,
    gid_t gid);
/* The peer of an accepted connection is uid, or root. */
bool sbx__sock_peer_ok(struct uv_handle_s *client, uid_t uid);

/* ------------------------------------------------------------------ */
/* sbx_scrub.c */

/* One buffer: a scrubbed, NUL-terminated malloc'd copy (NULL: ENOMEM). */
char *sbx_scrub_copy(const void *buf, size_t len, const char *secret,
    size_t *outlen);
/* How many occurrences were replaced so far. */
unsigned long long sbx_scrub_hits(const struct sbx_scrub *);

#endif /* CORRAL_SBX_INT_H */
