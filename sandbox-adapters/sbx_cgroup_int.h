/*
 * sbx_cgroup_int.h: what the per-lease cgroup files share (sbx_cgroup.c,
 * sbx_cgroup_limits.c, sbx_cgroup_kill.c) and nothing else includes.
 */
#ifndef CORRAL_SBX_CGROUP_INT_H
#define CORRAL_SBX_CGROUP_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "sandbox-adapters/sbx.h"

/* sbx_cgroup.c */

/* Write s to the file dir/file (a cgroup knob). 0 or -errno. */
int sbx__cgroup_write_at(const char *dir, const char *file, const char *s);
bool sbx__cgroup_exists_at(const char *dir, const char *file);
/* A lease ID a cgroup name can hold: 1-100 of [A-Za-z0-9._-], not . or .. */
bool sbx__cgroup_id_ok(const char *id);
/* "state-" and the tag's lowercase hex digits, n bytes at p? */
bool sbx__cgroup_tag_ok(const char *p, size_t n);
/* Is dir a lease id's cgroup directory under /sys/fs/cgroup/.../corral? */
bool sbx__cgroup_dir_ok(const char *dir, const char *id);
/* cg's directory in controller ctrl, or NULL. */
const char *sbx__cgroup_dir_of(const struct sbx_cgroup *, const char *ctrl);
/* dir up to its last '/', truncated to sz - 1 bytes. */
void sbx__cgroup_parent_of(const char *dir, char *out, size_t sz);
/* Remove dir's state-<tag> parent if that was its last child. */
void sbx__cgroup_drop_parent(const char *dir);

#endif /* CORRAL_SBX_CGROUP_INT_H */
