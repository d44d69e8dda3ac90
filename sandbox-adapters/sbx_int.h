/*
 * sbx_int.h: declarations shared between files of sandbox-adapters/ that
 * are not part of the module's public interface (sbx.h).
 */
#ifndef CORRAL_SBX_INT_H
#define CORRAL_SBX_INT_H

#include <stddef.h>

/* sbx_bwrap.c: "X.Y.Z" from `bwrap --version` into buf. 0 or -errno. */
int sbx__bwrap_version(char *buf, size_t sz);

struct sbx_request;
struct sbx_steps;
struct sbx_resource;
struct sbx_provisioned;
/* sbx_bwrap_host.c: the bwrap adapter's .provision, .teardown, .list. */
int sbx__bwrap_host_provision(const struct sbx_request *, const struct sbx_steps *,
    struct sbx_provisioned *, char *err, size_t errsz);
int sbx__bwrap_host_teardown(const struct sbx_request *,
    const struct sbx_resource *, size_t, const struct sbx_steps *, char *err,
    size_t errsz);
int sbx__bwrap_host_list(const struct sbx_request *, char ***ids, char *err,
    size_t errsz);

/* sbx_strv.c: a and b (sorted, unique) merged into *out. 0, -ENOMEM. */
int sbx__strv_union(char *const *a, char *const *b, char ***out);

#endif /* CORRAL_SBX_INT_H */
