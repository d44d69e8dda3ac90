/*
 * lock.c: the state-directory lock (SPEC 9.2): an exclusive flock on
 * $STATE/corral.lock, polled until a timeout, held by reconciliation, gc
 * and provisioning so they never race one another.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "lease/lease_int.h"

#define LOCK_POLL_MS 10

struct lease_lock {
	int fd;
};

int
lease_lock_acquire(const char *state_dir, int timeout_ms,
    struct lease_lock **out)
{
	struct timespec ts = { 0, LOCK_POLL_MS * 1000000L };
	struct lease_lock *l;
	char *path;
	int fd, waited = 0, e;

	assert(out != NULL);
	*out = NULL;
	if (state_dir == NULL || timeout_ms < 0)
		return -EINVAL;
	if ((path = malloc(strlen(state_dir) + sizeof "/corral.lock")) ==
	    NULL)
		return -ENOMEM;
	strcpy(path, state_dir);
	strcat(path, "/corral.lock");
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	e = errno;
	free(path);
	if (fd < 0)
		return e == EROFS || e == EACCES || e == EPERM ?
		    LEASE_EREADONLY : -e;
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK || waited >= timeout_ms) {
			e = errno;
			close(fd);
			return e == EWOULDBLOCK ? LEASE_ELOCKED : -e;
		}
		nanosleep(&ts, NULL);
		waited += LOCK_POLL_MS;
	}
	if ((l = malloc(sizeof *l)) == NULL) {
		close(fd);
		return -ENOMEM;
	}
	l->fd = fd;
	*out = l;
	return 0;
}

void
lease_lock_release(struct lease_lock *l)
{
	if (l == NULL)
		return;
	close(l->fd);	/* drops the flock */
	free(l);
}
