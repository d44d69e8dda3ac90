/*
 * error.c: lease_strerror, the static text of every code the lease module
 * returns (STYLE C.1). Detailed messages live on the handles.
 */
#include <string.h>

#include "lease/lease.h"

static const char *const lease_errors[] = {
	[LEASE_EBADTRANSITION - LEASE_EBASE] = "illegal lease state transition",
	[LEASE_ENOTFOUND - LEASE_EBASE] = "no such lease",
	[LEASE_EBADID - LEASE_EBASE] = "malformed lease ID",
	[LEASE_ECORRUPT - LEASE_EBASE] = "database is corrupt or not corral's",
	[LEASE_ESCHEMA - LEASE_EBASE] = "database is from a newer corral",
	[LEASE_ELOCKED - LEASE_EBASE] = "locked by another process",
	[LEASE_EREADONLY - LEASE_EBASE] = "state directory is read-only",
	[LEASE_EDB - LEASE_EBASE] = "database error",
	[LEASE_ENOTREPO - LEASE_EBASE] = "not a git repository",
	[LEASE_EBARE - LEASE_EBASE] = "bare repository",
	[LEASE_EOWNER - LEASE_EBASE] = "repository owned by another user",
	[LEASE_EBADBASE - LEASE_EBASE] = "unknown base",
	[LEASE_EBRANCHEXISTS - LEASE_EBASE] = "branch already exists",
	[LEASE_EEXIST - LEASE_EBASE] = "path already exists",
	[LEASE_EGIT - LEASE_EBASE] = "git error",
	[LEASE_ETAMPERED - LEASE_EBASE] = "receipt chain fails verification",
	[LEASE_EBUSY - LEASE_EBASE] = "lease is live",
	[LEASE_ENOTREMOVABLE - LEASE_EBASE] =
	    "orphan not yet seen by two inventories",
	[LEASE_ETOOLARGE - LEASE_EBASE] = "base does not fit the workspace",
	/* results (gate.c, extract.c, result.c, apply.c) */
	[LEASE_EINVALID - LEASE_EBASE] = "result failed the import gate",
	[LEASE_ENORESULT - LEASE_EBASE] = "no materialised result",
	[LEASE_ESTALE - LEASE_EBASE] =
	    "branch or review worktree no longer match the result",
	[LEASE_EUNREVIEWED - LEASE_EBASE] = "result not reviewed",
	[LEASE_ECHECKEDOUT - LEASE_EBASE] = "target branch is checked out",
	[LEASE_EADVANCED - LEASE_EBASE] = "target advanced: back to review",
	[LEASE_ENOAPPLY - LEASE_EBASE] = "patch no longer applies",
	[LEASE_EHUNKS - LEASE_EBASE] = "bad hunk list",
	[LEASE_ETARGET - LEASE_EBASE] = "no usable target branch",
};

const char *
lease_strerror(int code)
{
	unsigned i;

	if (code >= 0)
		return "success";
	if (code > LEASE_EBASE && code < LEASE_EBASE + 1000) {
		i = (unsigned)(code - LEASE_EBASE);
		if (i < sizeof lease_errors / sizeof lease_errors[0] &&
		    lease_errors[i] != NULL)
			return lease_errors[i];
		return "unknown lease error";
	}
	if (code > -4096)
		return strerror(-code);
	return "unknown error";
}
