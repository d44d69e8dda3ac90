/*
 * path.c: where a lease's things live under the state directory (SPEC 9):
 * the journal, the review worktree, the lease directory, its workspace
 * and its result. Always computed from the state directory and a
 * validated ID; NULL for a bad ID or on -ENOMEM.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease/lease_int.h"

char *
lease__path(const char *state_dir, const char *a, const char *id, const char *b)
{
	size_t n;
	char *p;

	if (state_dir == NULL || (id != NULL && !lease_id_valid(id)))
		return NULL;
	n = strlen(state_dir) + strlen(a) + (id ? strlen(id) : 0) +
	    strlen(b) + 1;
	if ((p = malloc(n)) == NULL)
		return NULL;
	snprintf(p, n, "%s%s%s%s", state_dir, a, id ? id : "", b);
	return p;
}

char *
lease_path_db(const char *state_dir)
{
	return lease__path(state_dir, "/corral.db", NULL, "");
}

char *
lease_path_worktree(const char *state_dir, const char *id)
{
	return lease__path(state_dir, "/worktrees/", id, "");
}

char *
lease_path_lease_dir(const char *state_dir, const char *id)
{
	return lease__path(state_dir, "/leases/", id, "");
}

char *
lease_path_workspace(const char *state_dir, const char *id)
{
	return lease__path(state_dir, "/leases/", id, "/work");
}

char *
lease_path_result(const char *state_dir, const char *id)
{
	char *dir = lease_path_lease_dir(state_dir, id), *p;
	size_t n;

	if (dir == NULL)
		return NULL;
	n = strlen(dir) + 8;
	if ((p = malloc(n)) != NULL)
		snprintf(p, n, "%s/result", dir);
	free(dir);
	return p;
}
