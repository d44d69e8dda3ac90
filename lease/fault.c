/*
 * fault.c: the crash-test hook. In builds made with CORRAL_TESTING, the
 * environment variable CORRAL_FAULT=<point> makes the process _exit(137)
 * when it reaches that point (docs/schema.md lists them), so tests can
 * kill provisioning and teardown before and after every step; and
 * CORRAL_FAULT_WAIT=<point> with CORRAL_FAULT_DIR=<dir> makes it stop
 * there: it writes its PID to <dir>/<point>.reached and waits (at most two
 * minutes) until <dir>/<point>.go exists, so a test can order two
 * processes at exactly that point. Elsewhere both do nothing.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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

void
lease_fault_wait(const char *point)
{
#ifdef CORRAL_TESTING
	const char *want = getenv("CORRAL_FAULT_WAIT");
	const char *dir = getenv("CORRAL_FAULT_DIR");
	struct timespec ts = { 0, 20 * 1000000L };
	char path[4096];
	int fd, i;

	if (want == NULL || dir == NULL || point == NULL ||
	    strcmp(want, point) != 0)
		return;
	snprintf(path, sizeof path, "%s/%s.reached", dir, point);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) >= 0) {
		dprintf(fd, "%d\n", (int)getpid());
		close(fd);
	}
	snprintf(path, sizeof path, "%s/%s.go", dir, point);
	for (i = 0; i < 6000 && access(path, F_OK) != 0; i++)
		nanosleep(&ts, NULL);
#else
	(void)point;
#endif
}
