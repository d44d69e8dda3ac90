/*
 * fault.c: the crash-test hook. In builds made with CORRAL_TESTING, the
 * environment variable CORRAL_FAULT=<point> makes the process _exit(137)
 * when it reaches that point (docs/schema.md lists them), so tests can
 * kill provisioning and teardown before and after every step. Elsewhere
 * lease_fault_point does nothing.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lease/lease.h"

bool
lease_fault_enabled(void)
{
#ifdef CORRAL_TESTING
	return true;
#else
	return false;
#endif
}

void
lease_fault_point(const char *point)
{
#ifdef CORRAL_TESTING
	const char *want = getenv("CORRAL_FAULT");

	if (want != NULL && point != NULL && strcmp(want, point) == 0)
		_exit(137);
#else
	(void)point;
#endif
}
