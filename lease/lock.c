/*
 * lock.c: the state-directory lock (SPEC 9.2): an exclusive flock on
 * $STATE/corral.lock, polled until a timeout, held by reconciliation, gc
 * and provisioning so they never race one another; and the narrower locks
 * of the operator's repository changes (SPEC 7.6, 9.2): one per lease
 * ($STATE/locks/<id>.lock: apply, reject, gc and reconciliation of that
 * lease, one at a time) and one per target branch ($STATE/locks/ref-<hash>
 * .lock: one apply into a branch at a time).
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lease/lease_int.h"

#define LOCK_POLL_MS 10

struct lease_lock {
	int fd;
	char *path;
};

/*
 * Lock the file at path (created 0600). A lock file that is unlinked while
 * we wait (lease_lock_forget) is no lock: after taking it, the path must
 * still name the file we hold, else open it again.
 */
static int
lock_file(char *path, int timeout_ms, struct lease_lock **out)
{
	struct timespec ts = { 0, LOCK_POLL_MS * 1000000L };
	struct stat held, now;
	struct lease_lock *l;
	int fd, waited = 0, e;

again:
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		e = errno;
		free(path);
		return e == EROFS || e == EACCES || e == EPERM ?
		    LEASE_EREADONLY : -e;
	}
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK || waited >= timeout_ms) {
			e = errno;
			close(fd);
			free(path);
			return e == EWOULDBLOCK ? LEASE_ELOCKED : -e;
		}
		nanosleep(&ts, NULL);
		waited += LOCK_POLL_MS;
	}
	if (fstat(fd, &held) < 0 || stat(path, &now) < 0 ||
	    held.st_ino != now.st_ino || held.st_dev != now.st_dev) {
		close(fd);
		goto again;
	}
	if ((l = malloc(sizeof *l)) == NULL) {
		close(fd);
		free(path);
		return -ENOMEM;
	}
	l->fd = fd;
	l->path = path;
	*out = l;
	return 0;
}

int
lease_lock_acquire(const char *state_dir, int timeout_ms,
    struct lease_lock **out)
{
	char *path;

	assert(out != NULL);
	*out = NULL;
	if (state_dir == NULL || timeout_ms < 0)
		return -EINVAL;
	if ((path = malloc(strlen(state_dir) + sizeof "/corral.lock")) ==
	    NULL)
		return -ENOMEM;
	strcpy(path, state_dir);
	strcat(path, "/corral.lock");
	return lock_file(path, timeout_ms, out);
}

/* "$STATE/locks/<name>.lock" with $STATE/locks made (0700). */
static char *
locks_path(const char *state_dir, const char *name, int *rc)
{
	char *dir = lease__path(state_dir, "/locks", NULL, ""), *p = NULL;
	size_t n;

	*rc = -ENOMEM;
	if (dir == NULL)
		return NULL;
	if ((*rc = lease__fs_mkdirs(dir, 0700)) == 0) {
		n = strlen(dir) + strlen(name) + sizeof "/.lock";
		if ((p = malloc(n)) != NULL)
			snprintf(p, n, "%s/%s.lock", dir, name);
		else
			*rc = -ENOMEM;
	}
	free(dir);
	return p;
}

int
lease_lock_lease(const char *state_dir, const char *id, int timeout_ms,
    struct lease_lock **out)
{
	char *path;
	int rc;

	assert(out != NULL);
	*out = NULL;
	if (state_dir == NULL || timeout_ms < 0)
		return -EINVAL;
	if (!lease_id_valid(id))
		return LEASE_EBADID;
	if ((path = locks_path(state_dir, id, &rc)) == NULL)
		return rc;
	return lock_file(path, timeout_ms, out);
}

int
lease_lock_ref(const char *state_dir, const char *repo, const char *ref,
    int timeout_ms, struct lease_lock **out)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a over repo NUL ref */
	const char *p;
	char name[32], *path;
	int rc;

	assert(out != NULL);
	*out = NULL;
	if (state_dir == NULL || repo == NULL || ref == NULL ||
	    timeout_ms < 0)
		return -EINVAL;
	for (p = repo;; p++) {
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
		if (*p == '\0')
			break;
	}
	for (p = ref; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	/* a collision only makes two branches share a lock */
	snprintf(name, sizeof name, "ref-%016llx", (unsigned long long)h);
	if ((path = locks_path(state_dir, name, &rc)) == NULL)
		return rc;
	return lock_file(path, timeout_ms, out);
}

void
lease_lock_release(struct lease_lock *l)
{
	if (l == NULL)
		return;
	close(l->fd);	/* drops the flock */
	free(l->path);
	free(l);
}

void
lease_lock_forget(struct lease_lock *l)
{
	if (l == NULL)
		return;
	/* unlinked while held: a waiter sees its file is gone (lock_file) */
	(void)unlink(l->path);
	lease_lock_release(l);
}
