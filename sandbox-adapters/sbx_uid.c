/*
 * sbx_uid.c: per-lease unprivileged uids (SANDBOX.md 0.1, SPEC 8.3). Slot N
 * maps to uid = gid = SBX_UID_BASE + N. A slot is claimed by an atomic
 * mkdir of DIR/slot-N holding an "owner" file with the lease ID; the lowest
 * free slot wins, so the allocator is deterministic and two live leases
 * never share a uid. Release checks the owner first (exact ID, SPEC 9). A
 * slot whose state directory (its "scope") no longer exists and whose uid
 * runs nothing is stale (a run that was killed with its state directory
 * removed): a claim takes it back, under a lock on DIR.
 */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"

static int read_owner(const char *dir, unsigned n, char *held, size_t sz);
static int read_file_in(const char *dir, unsigned n, const char *name,
    char *buf, size_t sz);

int
sbx_uid_of_slot(unsigned slot, uid_t *uid, gid_t *gid)
{
	assert(uid != NULL && gid != NULL);
	if (slot >= SBX_UID_SLOTS)
		return -EINVAL;
	*uid = (uid_t)(SBX_UID_BASE + slot);
	*gid = (gid_t)(SBX_UID_BASE + slot);
	return 0;
}

static int
write_owner(const char *path, const char *id)
{
	size_t len = strlen(id);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, id, len) != (ssize_t)len)
		rc = errno ? -errno : -EIO;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

bool
sbx_uid_busy(uid_t uid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	struct stat sb;
	char path[300];
	bool busy = false;

	if (d == NULL)
		return false;
	while (!busy && (e = readdir(d)) != NULL) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s", e->d_name);
		busy = stat(path, &sb) == 0 && sb.st_uid == uid;
	}
	closedir(d);
	return busy;
}

/*
 * Take back slot n if it is stale: its scope names a state directory that
 * is gone and its uid runs nothing. Serialised by an flock on dir so two
 * claimers never both remove it; a slot being claimed right now has no
 * scope yet and is never stale. True when the slot directory was removed.
 */
static bool
slot_stale(const char *dir, unsigned n)
{
	char scope[4096];
	struct stat sb;

	return read_file_in(dir, n, "scope", scope, sizeof scope) == 0 &&
	    scope[0] == '/' && stat(scope, &sb) < 0 && errno == ENOENT;
}

bool
sbx_uid_free(const char *dir, unsigned n)
{
	char path[4200];
	struct stat sb;

	snprintf(path, sizeof path, "%s/slot-%u", dir, n);
	if (lstat(path, &sb) == 0 ? !slot_stale(dir, n) : errno != ENOENT)
		return false;
	return !sbx_uid_busy((uid_t)(SBX_UID_BASE + n));
}

static bool
reclaim_stale(const char *dir, unsigned n)
{
	char path[4200];
	bool done = false;
	int lk;

	if (!slot_stale(dir, n) || sbx_uid_busy((uid_t)(SBX_UID_BASE + n)))
		return false;
	if ((lk = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return false;
	if (flock(lk, LOCK_EX) == 0 && slot_stale(dir, n)) {
		snprintf(path, sizeof path, "%s/slot-%u/scope", dir, n);
		unlink(path);
		snprintf(path, sizeof path, "%s/slot-%u/owner", dir, n);
		unlink(path);
		snprintf(path, sizeof path, "%s/slot-%u", dir, n);
		done = rmdir(path) == 0;
	}
	close(lk);
	return done;
}

int
sbx_uid_claim(const char *dir, const char *id, unsigned *slot)
{
	return sbx_uid_claim_from(dir, id, 0, slot);
}

int
sbx_uid_claim_from(const char *dir, const char *id, unsigned first,
    unsigned *slot)
{
	char path[4096], owner[4200];
	int rc;

	if (dir == NULL || id == NULL || slot == NULL || *id == '\0' ||
	    strchr(id, '/') != NULL)
		return -EINVAL;
	if (mkdir(dir, 0700) < 0 && errno == ENOENT) {
		/* The parent (e.g. /run/corral) on first use. */
		char parent[4096], *sl;

		snprintf(parent, sizeof parent, "%s", dir);
		if ((sl = strrchr(parent, '/')) != NULL && sl != parent) {
			*sl = '\0';
			if (mkdir(parent, 0755) < 0 && errno != EEXIST)
				return -errno;
		}
		if (mkdir(dir, 0700) < 0 && errno != EEXIST)
			return -errno;
	} else if (access(dir, W_OK | X_OK) < 0) {
		return -errno;
	}
	for (unsigned n = first; n < SBX_UID_SLOTS; n++) {
		snprintf(path, sizeof path, "%s/slot-%u", dir, n);
		if (mkdir(path, 0700) < 0) {
			if (errno != EEXIST)
				return -errno;
			if (!reclaim_stale(dir, n) || mkdir(path, 0700) < 0)
				continue;
		}
		/*
		 * A uid whose processes have not all gone yet (a teardown
		 * still reaping) is not handed out again: skip the slot.
		 */
		if (sbx_uid_busy((uid_t)(SBX_UID_BASE + n))) {
			rmdir(path);
			continue;
		}
		snprintf(owner, sizeof owner, "%s/owner", path);
		if ((rc = write_owner(owner, id)) < 0) {
			unlink(owner);
			rmdir(path);
			return rc;
		}
		*slot = n;
		return 0;
	}
	return -ENOSPC;
}

int
sbx_uid_release(const char *dir, unsigned slot, const char *id)
{
	char path[4096], owner[4200], held[256];
	ssize_t n;
	int fd;

	if (dir == NULL || id == NULL || slot >= SBX_UID_SLOTS)
		return -EINVAL;
	snprintf(path, sizeof path, "%s/slot-%u", dir, slot);
	snprintf(owner, sizeof owner, "%s/owner", path);
	if ((fd = open(owner, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return -errno;
	n = read(fd, held, sizeof held - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	held[n] = '\0';
	if (strcmp(held, id) != 0)
		return -EPERM;
	snprintf(owner, sizeof owner, "%s/scope", path);
	if (unlink(owner) < 0 && errno != ENOENT)
		return -errno;
	snprintf(owner, sizeof owner, "%s/owner", path);
	if (unlink(owner) < 0 || rmdir(path) < 0)
		return -errno;
	return 0;
}

int
sbx_uid_set_scope(const char *dir, unsigned slot, const char *id,
    const char *scope)
{
	char held[256], path[4200];

	if (dir == NULL || id == NULL || scope == NULL ||
	    slot >= SBX_UID_SLOTS)
		return -EINVAL;
	if (read_owner(dir, slot, held, sizeof held) < 0 ||
	    strcmp(held, id) != 0)
		return -EPERM;
	snprintf(path, sizeof path, "%s/slot-%u/scope", dir, slot);
	return write_owner(path, scope);
}

/* The owner file of slot n under dir into held (NUL-terminated). */
static int
read_owner(const char *dir, unsigned n, char *held, size_t sz)
{
	return read_file_in(dir, n, "owner", held, sz);
}

static int
read_file_in(const char *dir, unsigned n, const char *name, char *held,
    size_t sz)
{
	char path[4200];
	ssize_t got;
	int fd;

	snprintf(path, sizeof path, "%s/slot-%u/%s", dir, n, name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return -errno;
	got = read(fd, held, sz - 1);
	close(fd);
	if (got < 0)
		return -EIO;
	held[got] = '\0';
	return 0;
}

/* Slot number of a directory entry "slot-N", or -1. */
static long
slot_name(const char *name)
{
	unsigned long v;
	char *end;

	if (strncmp(name, "slot-", 5) != 0 || name[5] < '0' || name[5] > '9')
		return -1;
	errno = 0;
	v = strtoul(name + 5, &end, 10);
	if (errno != 0 || *end != '\0' || v >= SBX_UID_SLOTS)
		return -1;
	return (long)v;
}

int
sbx_uid_find(const char *dir, const char *id, unsigned *slot)
{
	char held[256];
	struct dirent *e;
	DIR *d;
	int rc = -ENOENT;

	if (dir == NULL || id == NULL || slot == NULL)
		return -EINVAL;
	if ((d = opendir(dir)) == NULL)
		return errno == ENOENT ? -ENOENT : -errno;
	while (rc == -ENOENT && (e = readdir(d)) != NULL) {
		long n = slot_name(e->d_name);

		if (n >= 0 && read_owner(dir, (unsigned)n, held,
		    sizeof held) == 0 && strcmp(held, id) == 0) {
			*slot = (unsigned)n;
			rc = 0;
		}
	}
	closedir(d);
	return rc;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
sbx_uid_list(const char *dir, const char *scope, char ***out)
{
	char held[256], sc[4096], **v, **nv;
	size_t n = 0, k;
	struct dirent *e;
	DIR *d;
	int rc = 0;

	if (dir == NULL || out == NULL)
		return -EINVAL;
	*out = NULL;
	if ((v = calloc(1, sizeof *v)) == NULL)
		return -ENOMEM;
	if ((d = opendir(dir)) == NULL) {
		if (errno == ENOENT) {
			*out = v;
			return 0;
		}
		rc = -errno;
		free(v);
		return rc;
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		long s = slot_name(e->d_name);

		if (s < 0 || read_owner(dir, (unsigned)s, held,
		    sizeof held) < 0 || held[0] == '\0')
			continue;
		/* Another state directory's lease: not ours to name. */
		if (scope != NULL && read_file_in(dir, (unsigned)s, "scope",
		    sc, sizeof sc) == 0 && strcmp(sc, scope) != 0)
			continue;
		if ((nv = realloc(v, (n + 2) * sizeof *v)) == NULL) {
			rc = -ENOMEM;
			break;
		}
		v = nv;
		if ((v[n] = strdup(held)) == NULL) {
			rc = -ENOMEM;
			break;
		}
		v[++n] = NULL;
	}
	closedir(d);
	if (rc < 0) {
		sbx_strv_free(v);
		return rc;
	}
	qsort(v, n, sizeof *v, cmp_str);
	/* unique */
	for (k = 0; n > 0 && k + 1 < n;) {
		if (strcmp(v[k], v[k + 1]) == 0) {
			free(v[k + 1]);
			memmove(&v[k + 1], &v[k + 2], (n - k - 1) * sizeof *v);
			n--;
		} else {
			k++;
		}
	}
	*out = v;
	return 0;
}

int
sbx_uid_mkdir_root(const char *path, mode_t mode)
{
	struct stat sb;

	if (mkdir(path, mode) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(path, &sb) < 0)
		return -errno;
	if (!S_ISDIR(sb.st_mode) || sb.st_uid != 0)
		return -EPERM;
	return 0;
}
