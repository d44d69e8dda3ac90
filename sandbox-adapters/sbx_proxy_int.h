/*
 * sbx_proxy_int.h: declarations shared by the egress, proxy and credential
 * files of sandbox-adapters/ (not part of the module's public interface).
 */
#ifndef CORRAL_SBX_PROXY_INT_H
#define CORRAL_SBX_PROXY_INT_H

#include <stdbool.h>
#include <stddef.h>

struct sbx_plan;

/*
 * Insert bwrap options into a bwrap plan's --args data, right before its
 * "--remount-ro /" (mounts need the root still writable), and arguments
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

#endif /* CORRAL_SBX_PROXY_INT_H */
