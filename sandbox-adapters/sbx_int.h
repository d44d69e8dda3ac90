/*
 * sbx_int.h: declarations shared between files of sandbox-adapters/ that
 * are not part of the module's public interface (sbx.h).
 */
#ifndef CORRAL_SBX_INT_H
#define CORRAL_SBX_INT_H

#include <stdbool.h>
#include <stddef.h>

/* sbx_bwrap.c: "X.Y.Z" from `bwrap --version` into buf. 0 or -errno. */
int sbx__bwrap_version(char *buf, size_t sz);

struct sbx_request;
struct sbx_steps;
struct sbx_resource;
struct sbx_provisioned;
/* sbx_bwrap_host.c: the bwrap adapter's .provision, .teardown, .list. */
int sbx__bwrap_host_provision(const struct sbx_request *,
    const struct sbx_steps *, struct sbx_provisioned *, char *err,
    size_t errsz);
int sbx__bwrap_host_teardown(const struct sbx_request *,
    const struct sbx_resource *, size_t, const struct sbx_steps *, char *err,
    size_t errsz);
int sbx__bwrap_host_list(const struct sbx_request *, char ***ids, char *err,
    size_t errsz);

/* sbx_strv.c: a and b (sorted, unique) merged into *out. 0, -ENOMEM. */
int sbx__strv_union(char *const *a, char *const *b, char ***out);

/*
 * sbx_policy.c: what the narrowing check and the canonical form share with
 * the parser: the key table, the parse with the line each key was set on.
 */
struct sbx_policy;
struct sbx_policy_error;
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
/* Fill err (NULL: nothing) with file ("policy" if NULL), line and text. */
void sbx__policy_errf(struct sbx_policy_error *err, const char *file,
    int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

struct sbx_plan;

/*
 * sbx_egress.c: insert bwrap options into a bwrap plan's --args data,
 * right before its "--remount-ro /" (mounts need the root still writable),
 * and arguments
 * for corral-sbx-init right after the helper's path in argv. Before
 * sbx_plan_open_data only: -EBUSY after. 0, -EINVAL (not a bwrap agent
 * zone plan), -ENOMEM; on error the plan is unchanged.
 */
int sbx__egress_plan_insert(struct sbx_plan *, const char *const *opts,
    size_t nopts, const char *const *init_args, size_t ninit);

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

#endif /* CORRAL_SBX_INT_H */
