/*
 * sbx_proxy_int.h: declarations shared by the egress, proxy and credential
 * files of sandbox-adapters/ (not part of the module's public interface).
 */
#ifndef CORRAL_SBX_PROXY_INT_H
#define CORRAL_SBX_PROXY_INT_H

#include <stddef.h>

struct sbx_plan;

/*
 * Insert bwrap options into a bwrap plan's --args data, right before its
 * "--remount-ro /" (mounts need the root still writable), and arguments
 * for corral-sbx-init right after the helper's path in argv. Before
 * sbx_plan_open_data only: -EBUSY after. 0, -EINVAL (not a bwrap agent
 * zone plan), -ENOMEM; on error the plan is unchanged.
 */
int sbx__plan_insert(struct sbx_plan *, const char *const *opts,
    size_t nopts, const char *const *init_args, size_t ninit);

#endif /* CORRAL_SBX_PROXY_INT_H */
