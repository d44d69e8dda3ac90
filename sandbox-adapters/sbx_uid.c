/*
 * sbx_uid.c: per-lease unprivileged uids (SANDBOX.md 0.1, SPEC 8.3, 9.2).
 * Slot N maps to uid = gid = SBX_UID_BASE + N. A claim is a directory
 * DIR/slot-N holding two files: "owner" (the lease ID) and "scope" (the
 * state directory that owns it). Both are written into a private staging
 * directory first, which is then renamed onto slot-N (atomic; it fails
 * while slot-N holds a claim), so no slot is ever seen claimed without its
 * scope. The lowest free slot wins. A uid is handed out only while no
 * process on the machine runs under it (real, effective, saved or
 * filesystem id). Release, find and list match owner and scope both: a
 * state directory never names or frees another's slot. A slot whose scope
 * no longer exists and whose uid runs nothing is stale (a run killed with
 * its state directory removed): a claim takes it back, under a lock on DIR.
 * "Exists" is judged where the claim was made: a third file, "mntns", names
 * the claimer's mount namespace, and a scope claimed in another one (a
 * container or root sharing the pool) is looked up through the root of a
 * process still in it, or here once nothing runs there. A claim without a
 * scope (an older corral's) is stale once it is SBX_UID_SCOPELESS_GRACE_S
 * old, its uid runs nothing and no process names its owner.
 */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"

#define STAGE_PREFIX ".claim-"

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
write_new(const char *path, const char *text)
{
	size_t len = strlen(text);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
	    O_NOFOLLOW, 0600);
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		rc = errno ? -errno : -EIO;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

/* Does one of the ids on a "Uid:" or "Gid:" line of status equal id? */
static bool
status_has(const char *status, const char *key, unsigned long id)
{
	const char *p = strstr(status, key);
	char *end;

	if (p == NULL)
		return false;
	p += strlen(key);
	for (int i = 0; i < 4; i++) {
		unsigned long v = strtoul(p, &end, 10);

		if (end == p)
			return false;
		if (v == id)
			return true;
		p = end;
	}
	return false;
}

int
sbx_uid_procs(uid_t uid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char path[300], buf[4096];
	int found = 0;
	ssize_t got;
	int fd;

	if (d == NULL)
		return 2;	/* unknowable: not free */
	while (found < 2 && (e = readdir(d)) != NULL) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		/*
		 * The status lines, not the owner of /proc/PID: a process
		 * that made itself non-dumpable shows as root's there.
		 */
		snprintf(path, sizeof path, "/proc/%s/status", e->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;	/* gone meanwhile */
		got = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (got <= 0)
			continue;
		buf[got] = '\0';
		if (!status_has(buf, "\nUid:", uid) &&
		    !status_has(buf, "\nGid:", uid))
			continue;
		/* A zombie runs nothing: its parent has yet to reap it. */
		if (strstr(buf, "\nState:\tZ") != NULL ||
		    strstr(buf, "\nState:\tX") != NULL)
			found = 1;
		else
			found = 2;
	}
	closedir(d);
	return found;
}

bool
sbx_uid_busy(uid_t uid)
{
	return sbx_uid_procs(uid) == 2;
}

/* This process's mount namespace, as /proc names it ("mnt:[N]"). */
static int
own_mntns(char *buf, size_t sz)
{
	ssize_t n = readlink("/proc/self/ns/mnt", buf, sz - 1);

	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = '\0';
	return 0;
}

/*
 * Is path gone as seen from mount namespace ns: through the root of a
 * process in it; when nothing runs in ns any more, as seen from here (a
 * holder's private namespace, gone with the holder, saw the host's
 * directories; a container's that is gone took its own with it).
 */
static bool
gone_in(const char *ns, const char *path)
{
	char link[64], got[64], p[4200];
	struct dirent *e;
	struct stat sb;
	bool gone = true, seen = false;
	ssize_t n;
	DIR *d;

	if ((d = opendir("/proc")) == NULL)
		return false;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(link, sizeof link, "/proc/%.16s/ns/mnt", e->d_name);
		if ((n = readlink(link, got, sizeof got - 1)) <= 0)
			continue;
		got[n] = '\0';
		if (strcmp(got, ns) != 0)
			continue;
		seen = true;
		snprintf(p, sizeof p, "/proc/%.16s/root%s", e->d_name, path);
		if (stat(p, &sb) == 0 || errno != ENOENT) {
			gone = false;
			break;
		}
		/* gone there, or the process just exited: ask another */
	}
	closedir(d);
	if (!seen)
		return stat(path, &sb) < 0 && errno == ENOENT;
	return gone;
}

/* Does a process on the machine have id in its command line? */
static bool
named_by_a_process(const char *id)
{
	char path[64], buf[4096];
	struct dirent *e;
	bool found = false;
	ssize_t k;
	DIR *d;
	int fd;

	if ((d = opendir("/proc")) == NULL)
		return true;	/* cannot tell: it may */
	while (!found && (e = readdir(d)) != NULL) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%.16s/cmdline", e->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		k = read(fd, buf, sizeof buf);
		close(fd);
		found = k > 0 && memmem(buf, (size_t)k, id, strlen(id)) != NULL;
	}
	closedir(d);
	return found;
}

/*
 * A claim without a scope: an older corral's (it wrote the owner first
 * and the scope after), or what an older corral's release left of a newer
 * claim (the mntns it did not know). Stale once nothing in it changed for
 * SBX_UID_SCOPELESS_GRACE_S seconds (an older corral between its claim and
 * the first process of the uid) and its owner, if it names one, is in no
 * process's command line (a holder's names its lease). The uid running
 * nothing is the caller's test.
 */
static bool
scopeless_stale(const char *dir, unsigned n)
{
	char path[4200], owner[256];
	struct stat sb;
	time_t last;
	int rc;

	snprintf(path, sizeof path, "%s/slot-%u", dir, n);
	if (lstat(path, &sb) < 0 || !S_ISDIR(sb.st_mode))
		return false;
	last = sb.st_mtime;
	snprintf(path, sizeof path, "%s/slot-%u/owner", dir, n);
	if (lstat(path, &sb) == 0 && sb.st_mtime > last)
		last = sb.st_mtime;
	if (time(NULL) - last < SBX_UID_SCOPELESS_GRACE_S)
		return false;
	rc = read_file_in(dir, n, "owner", owner, sizeof owner);
	if (rc == 0)
		owner[strcspn(owner, "\r\n")] = '\0';
	if (rc == -ENOENT || (rc == 0 && owner[0] == '\0'))
		return true;
	return rc == 0 && !named_by_a_process(owner);
}

/*
 * Is slot n stale: its scope names a state directory that is gone, where
 * the claim was made, or it has no scope and nothing lives that it names
 * (scopeless_stale)?
 */
static bool
slot_stale(const char *dir, unsigned n)
{
	char scope[4096], ns[64], own[64];
	struct stat sb;

	if (read_file_in(dir, n, "scope", scope, sizeof scope) < 0 ||
	    scope[0] != '/')
		return scopeless_stale(dir, n);
	if (read_file_in(dir, n, "mntns", ns, sizeof ns) == 0 &&
	    own_mntns(own, sizeof own) == 0 && strcmp(ns, own) != 0)
		return gone_in(ns, scope);
	return stat(scope, &sb) < 0 && errno == ENOENT;
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

/* Remove claim directory path (owner, scope, mntns, itself). */
static int
remove_claim(const char *path)
{
	char f[4200];

	snprintf(f, sizeof f, "%s/mntns", path);
	if (unlink(f) < 0 && errno != ENOENT)
		return -errno;
	snprintf(f, sizeof f, "%s/scope", path);
	if (unlink(f) < 0 && errno != ENOENT)
		return -errno;
	snprintf(f, sizeof f, "%s/owner", path);
	if (unlink(f) < 0 && errno != ENOENT)
		return -errno;
	return rmdir(path) < 0 ? -errno : 0;
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
		snprintf(path, sizeof path, "%s/slot-%u", dir, n);
		done = remove_claim(path) == 0;
	}
	close(lk);
	return done;
}

/* Staging directories of claimers that died between mkdir and rename. */
static void
sweep_stages(const char *dir)
{
	char path[4200];
	struct dirent *e;
	DIR *d;
	long pid;

	if ((d = opendir(dir)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, STAGE_PREFIX, strlen(STAGE_PREFIX)) != 0)
			continue;
		pid = strtol(e->d_name + strlen(STAGE_PREFIX), NULL, 10);
		if (pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (remove_claim(path) < 0) {
			/* another claimer swept it first */
		}
	}
	closedir(d);
}

static bool
scope_ok(const char *scope)
{
	size_t n;

	return scope != NULL && scope[0] == '/' &&
	    (n = strlen(scope)) < 4000 && strchr(scope, '\n') == NULL;
}

/* The slot pool directory, made on first use (its parent too). */
static int
pool_dir(const char *dir)
{
	char parent[4096], *sl;

	if (mkdir(dir, 0700) == 0 || errno == EEXIST)
		return access(dir, W_OK | X_OK) < 0 ? -errno : 0;
	if (errno != ENOENT)
		return -errno;
	snprintf(parent, sizeof parent, "%s", dir);
	if ((sl = strrchr(parent, '/')) != NULL && sl != parent) {
		*sl = '\0';
		if (mkdir(parent, 0755) < 0 && errno != EEXIST)
			return -errno;
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* A staging directory under dir holding owner id and scope: its path. */
static int
stage_claim(const char *dir, const char *scope, const char *id, char *stage,
    size_t sz)
{
	char f[4300], ns[64];
	unsigned r = 0;
	int rc;

	if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
		r = (unsigned)getpid() * 2654435761u;
	snprintf(stage, sz, "%s/" STAGE_PREFIX "%d-%08x", dir, (int)getpid(),
	    r);
	if (mkdir(stage, 0700) < 0)
		return -errno;
	snprintf(f, sizeof f, "%s/owner", stage);
	if ((rc = write_new(f, id)) == 0) {
		snprintf(f, sizeof f, "%s/scope", stage);
		rc = write_new(f, scope);
	}
	if (rc == 0 && (rc = own_mntns(ns, sizeof ns)) == 0) {
		snprintf(f, sizeof f, "%s/mntns", stage);
		rc = write_new(f, ns);
	}
	if (rc < 0 && remove_claim(stage) < 0) {
		/* left to sweep_stages once this process is gone */
	}
	return rc;
}

int
sbx_uid_claim(const char *dir, const char *scope, const char *id,
    unsigned *slot)
{
	return sbx_uid_claim_from(dir, scope, id, 0, slot);
}

int
sbx_uid_claim_from(const char *dir, const char *scope, const char *id,
    unsigned first, unsigned *slot)
{
	char stage[4200], path[4200];
	int rc;

	if (dir == NULL || id == NULL || slot == NULL || *id == '\0' ||
	    strchr(id, '/') != NULL || strchr(id, '\n') != NULL ||
	    strlen(id) > 200 || !scope_ok(scope))
		return -EINVAL;
	if ((rc = pool_dir(dir)) < 0)
		return rc;
	sweep_stages(dir);
	if ((rc = stage_claim(dir, scope, id, stage, sizeof stage)) < 0)
		return rc;
	rc = SBX_EUIDPOOL;
	for (unsigned n = first; n < SBX_UID_SLOTS; n++) {
		uid_t uid = (uid_t)(SBX_UID_BASE + n);

		snprintf(path, sizeof path, "%s/slot-%u", dir, n);
		/* Never a uid that still runs something (SPEC 9.2). */
		if (sbx_uid_busy(uid))
			continue;
		if (rename(stage, path) < 0) {
			if (errno != EEXIST && errno != ENOTEMPTY) {
				rc = -errno;
				break;
			}
			if (!reclaim_stale(dir, n) || rename(stage, path) < 0)
				continue;
		}
		/*
		 * Claimed, owner and scope at once. Looked at again: a
		 * process that started as the uid after the first look gives
		 * the slot back to the pool.
		 */
		if (sbx_uid_busy(uid)) {
			if (rename(path, stage) < 0 && remove_claim(path) < 0)
				break;
			continue;
		}
		*slot = n;
		return 0;
	}
	if (remove_claim(stage) < 0) {
		/* left to sweep_stages */
	}
	return rc;
}

/* Does slot under dir carry exactly (scope, id)? 0, -ENOENT, -EPERM. */
static int
held_by(const char *dir, unsigned slot, const char *scope, const char *id)
{
	char held[256], sc[4096];
	int rc;

	if ((rc = read_file_in(dir, slot, "owner", held, sizeof held)) < 0)
		return rc;
	if (strcmp(held, id) != 0)
		return -EPERM;
	if (read_file_in(dir, slot, "scope", sc, sizeof sc) < 0 ||
	    strcmp(sc, scope) != 0)
		return -EPERM;
	return 0;
}

int
sbx_uid_held(const char *dir, unsigned slot, const char *scope,
    const char *id)
{
	if (dir == NULL || id == NULL || scope == NULL ||
	    slot >= SBX_UID_SLOTS)
		return -EINVAL;
	return held_by(dir, slot, scope, id);
}

int
sbx_uid_release(const char *dir, unsigned slot, const char *scope,
    const char *id)
{
	char path[4200];
	int rc;

	if ((rc = sbx_uid_held(dir, slot, scope, id)) < 0)
		return rc;
	snprintf(path, sizeof path, "%s/slot-%u", dir, slot);
	return remove_claim(path);
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
sbx_uid_find(const char *dir, const char *scope, const char *id,
    unsigned *slot)
{
	struct dirent *e;
	DIR *d;
	int rc = -ENOENT;

	if (dir == NULL || id == NULL || slot == NULL || scope == NULL)
		return -EINVAL;
	if ((d = opendir(dir)) == NULL)
		return errno == ENOENT ? -ENOENT : -errno;
	while (rc == -ENOENT && (e = readdir(d)) != NULL) {
		long n = slot_name(e->d_name);

		if (n >= 0 && held_by(dir, (unsigned)n, scope, id) == 0) {
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

	if (dir == NULL || out == NULL || scope == NULL)
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

		if (s < 0 || read_file_in(dir, (unsigned)s, "owner", held,
		    sizeof held) < 0 || held[0] == '\0')
			continue;
		/* Another state directory's (or an unscoped) claim. */
		if (read_file_in(dir, (unsigned)s, "scope", sc,
		    sizeof sc) < 0 || strcmp(sc, scope) != 0)
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
