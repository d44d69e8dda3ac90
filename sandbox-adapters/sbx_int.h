/*
 * sbx_int.h: declarations shared between files of sandbox-adapters/ that
 * are not part of the module's public interface (sbx.h).
 */
#ifndef CORRAL_SBX_INT_H
#define CORRAL_SBX_INT_H

#include <stddef.h>

/* sbx_bwrap.c: "X.Y.Z" from `bwrap --version` into buf. 0 or -errno. */
int sbx__bwrap_version(char *buf, size_t sz);

#endif /* CORRAL_SBX_INT_H */
