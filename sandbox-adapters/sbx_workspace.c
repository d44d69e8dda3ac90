/*
 * sbx_workspace.c: the lease's bounded workspace (SPEC 8.4; SANDBOX.md
 * 3.6): a per-lease ext4 image loop-mounted nosuid,nodev, bounded in bytes
 * and inodes; and removal of a hostile tree (SPEC 9.3; SANDBOX.md 5.d)
 * that never follows a symlink nor crosses a mount, whatever the agent
 * left behind (chmod 000 directories, FIFOs, sockets, symlinks).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/loop.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"

#define MKFS "/usr/sbin/mkfs.ext4"
/* ext4 needs room for its metadata: below this, mkfs refuses. */
#define MIN_BYTES (2ull << 20)

/* ---- the image -------------------------------------------------------- */

static int
image_path(const char *dir, char *out, size_t sz)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if ((size_t)snprintf(out, sz, "%.*s.img", (int)n, dir) >= sz)
		return -ENAMETOOLONG;
	return 0;
}

static int
run_mkfs(const char *img, unsigned long long inodes, uid_t uid, gid_t gid)
{
	char n[32], owner[128];
	char *const argv[] = { (char *)MKFS, (char *)"-q", (char *)"-F",
		(char *)"-m", (char *)"0", (char *)"-N", n, (char *)"-E", owner,
		(char *)img, NULL };
	char *const envp[] = { (char *)"PATH=/usr/sbin:/usr/bin:/sbin:/bin",
		(char *)"LC_ALL=C", NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int rc, st;

	snprintf(n, sizeof n, "%llu", inodes);
	/* The root directory belongs to the lease uid from the start. */
	/* A fresh sparse image reads as zeros: nothing to discard, and the
	 * journal and inode tables need no zeroing (now or in the kernel's
	 * background thread: the mount says noinit_itable). */
	snprintf(owner, sizeof owner, "root_owner=%u:%u,nodiscard,"
	    "lazy_itable_init=1,lazy_journal_init=1", (unsigned)uid,
	    (unsigned)gid);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	rc = posix_spawn(&pid, MKFS, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		return -rc;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

/* Attach img to a free loop device named after the lease; its fd. */
static int
loop_attach(const char *id, const char *img, char *dev, size_t devsz)
{
	struct loop_config cfg;
	int ctl, lfd = -1, ifd, rc = -EBUSY;

	if ((ifd = open(img, O_RDWR | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return -errno;
	if ((ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC)) < 0) {
		rc = -errno;
		close(ifd);
		return rc;
	}
	/* Another process may take the free device first: try again. */
	for (int tries = 0; tries < 64; tries++) {
		long nr = ioctl(ctl, LOOP_CTL_GET_FREE);

		if (nr < 0) {
			rc = -errno;
			break;
		}
		snprintf(dev, devsz, "/dev/loop%ld", nr);
		if ((lfd = open(dev, O_RDWR | O_CLOEXEC)) < 0) {
			rc = -errno;
			break;
		}
		memset(&cfg, 0, sizeof cfg);
		cfg.fd = (unsigned)ifd;
		/* Gone with the last unmount; named for reconciliation. */
		cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
		snprintf((char *)cfg.info.lo_file_name, LO_NAME_SIZE,
		    "corral-lease-%s", id);
		if (ioctl(lfd, LOOP_CONFIGURE, &cfg) == 0) {
			rc = lfd;
			break;
		}
		rc = -errno;
		close(lfd);
		lfd = -1;
		if (rc != -EBUSY)
			break;
	}
	close(ctl);
	close(ifd);
	return rc;
}

bool
sbx_workspace_mounted(const char *dir)
{
	struct statx a, b;
	char parent[PATH_MAX];

	if (dir == NULL)
		return false;
	if (statx(AT_FDCWD, dir, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS |
	    STATX_MNT_ID, &a) < 0)
		return false;
	if (a.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)
		return (a.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
	snprintf(parent, sizeof parent, "%s/..", dir);
	if (statx(AT_FDCWD, parent, 0, STATX_BASIC_STATS | STATX_MNT_ID,
	    &b) < 0)
		return false;
	return a.stx_mnt_id != b.stx_mnt_id;
}

/* sbx_workspace_mount, but for a root owner too (sbx__workspace_make). */
static int
mount_image(const char *id, const char *dir, unsigned long long bytes,
    unsigned long long inodes, uid_t uid, gid_t gid)
{
	char img[PATH_MAX], dev[64], lf[PATH_MAX + 16];
	bool made_dir = false;
	int fd = -1, lfd = -1, rc;
	struct stat sb;

	if (id == NULL || *id == '\0' || strchr(id, '/') != NULL ||
	    dir == NULL || dir[0] != '/' || bytes < MIN_BYTES ||
	    inodes < 16 || inodes > 0xffffffffull)
		return -EINVAL;
	if ((rc = image_path(dir, img, sizeof img)) < 0)
		return rc;
	if (sbx_workspace_mounted(dir))
		return -EBUSY;
	if (mkdir(dir, 0700) == 0)
		made_dir = true;
	else if (errno != EEXIST)
		return -errno;
	if (lstat(dir, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
		rc = -ENOTDIR;
		goto fail;
	}
	/* A fresh image, never one left behind by someone else. */
	fd = open(img, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
	    0600);
	if (fd < 0) {
		rc = -errno;
		goto fail_dir;
	}
	/* Sparse: it takes what the lease writes; sbx__workspace_bound
	 * admits it only when free space covers every live lease's limit. */
	if (ftruncate(fd, (off_t)bytes) < 0) {
		rc = -errno;
		goto fail_img;
	}
	close(fd);
	fd = -1;
	if ((rc = run_mkfs(img, inodes, uid, gid)) < 0)
		goto fail_img;
	if ((lfd = loop_attach(id, img, dev, sizeof dev)) < 0) {
		rc = lfd;
		goto fail_img;
	}
	if (mount(dev, dir, "ext4", MS_NOSUID | MS_NODEV,
	    "errors=remount-ro,noinit_itable")
	    < 0) {
		rc = -errno;
		ioctl(lfd, LOOP_CLR_FD, 0);
		close(lfd);
		goto fail_img;
	}
	/* The mount holds the device now; autoclear frees it on unmount. */
	close(lfd);
	/* No lost+found in the agent's tree (e2fsck makes it if needed). */
	snprintf(lf, sizeof lf, "%s/lost+found", dir);
	if (rmdir(lf) < 0 && errno != ENOENT) {
		rc = -errno;
		goto fail_mount;
	}
	if (chown(dir, uid, gid) < 0 || chmod(dir, 0700) < 0) {
		rc = -errno;
		goto fail_mount;
	}
	return 0;
fail_mount:
	umount2(dir, MNT_DETACH);
fail_img:
	if (fd >= 0)
		close(fd);
	unlink(img);
fail_dir:
	if (made_dir)
		rmdir(dir);
	return rc;
fail:
	if (made_dir)
		rmdir(dir);
	return rc;
}

int
sbx_workspace_mount(const char *id, const char *dir, unsigned long long bytes,
    unsigned long long inodes, uid_t uid, gid_t gid)
{
	if (uid == 0)
		return -EINVAL;	/* the agent's tree is never root's */
	return mount_image(id, dir, bytes, inodes, uid, gid);
}

int
sbx_workspace_umount(const char *dir)
{
	char img[PATH_MAX];
	int rc;

	if (dir == NULL || dir[0] != '/')
		return -EINVAL;
	if ((rc = image_path(dir, img, sizeof img)) < 0)
		return rc;
	for (int tries = 0; sbx_workspace_mounted(dir) && tries < 100;
	    tries++) {
		if (umount2(dir, UMOUNT_NOFOLLOW) == 0)
			continue;
		if (errno != EBUSY)
			return -errno;
		/* Something still has a file open: detach it now. */
		if (umount2(dir, MNT_DETACH | UMOUNT_NOFOLLOW) < 0)
			return -errno;
	}
	if (sbx_workspace_mounted(dir))
		return -EBUSY;
	if (unlink(img) < 0 && errno != ENOENT)
		return -errno;
	/* The mount point itself: empty unless someone wrote under it. */
	if (rmdir(dir) < 0 && errno != ENOENT) {
		if (errno != ENOTEMPTY && errno != EEXIST)
			return -errno;
		return sbx_workspace_rmtree_safe(dir);
	}
	return 0;
}

/* ---- safe removal ------------------------------------------------------ */

/*
 * The one removal of trees a sandbox may have written, for the whole
 * project (lease/ calls it too). It is iterative: one directory is open
 * at a time (and its parent while stepping up), the way down is kept as
 * (dev, ino) pairs on the heap, so neither the fd limit nor the stack
 * bounds the depth. A directory is left for its child and re-read from
 * its start when the walk comes back up; an entry that cannot go is
 * remembered and skipped from then on, so every pass makes progress.
 * Going up opens "..", which must be the directory the walk came down
 * from (else -ESTALE: the tree moved under us; nothing outside it is
 * touched).
 */
#define RM_SKIP_MAX 1024	/* entries given up on before we give up */

struct rm_id {
	dev_t dev;
	ino_t ino;
};

struct walk {
	unsigned long long mnt_id;	/* the tree's own mount */
	bool crossed;			/* a mount was met and left */
	int first;			/* the first error, the walk goes on */
	struct rm_id *down;		/* the directories from the top */
	size_t depth, cap;
	struct rm_id skip[RM_SKIP_MAX];	/* entries that would not go */
	size_t nskip;
};

static int
mnt_of(int dfd, const char *name, int flags, unsigned long long *mnt,
    mode_t *mode)
{
	struct statx sx;

	if (statx(dfd, name, flags | AT_SYMLINK_NOFOLLOW, STATX_TYPE |
	    STATX_MNT_ID, &sx) < 0)
		return -errno;
	if (!(sx.stx_mask & STATX_MNT_ID))
		return -ENOTSUP;
	*mnt = sx.stx_mnt_id;
	*mode = sx.stx_mode;
	return 0;
}

/*
 * Open the directory `name` under dfd for reading without following a
 * symlink, making it u+rwx first (the agent may have chmod 000 it): an
 * O_PATH handle, checked, chmod'ed through its /proc/self/fd magic link
 * (which names exactly that inode), then reopened.
 */
static int
open_dir(int dfd, const char *name, struct walk *w, bool *crossed)
{
	char link[64];
	unsigned long long mnt = 0;
	mode_t mode;
	int pfd, fd, rc;

	*crossed = false;
	pfd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	if ((rc = mnt_of(pfd, "", AT_EMPTY_PATH, &mnt, &mode)) < 0) {
		close(pfd);
		return rc;
	}
	if (!S_ISDIR(mode)) {
		close(pfd);
		return -ENOTDIR;
	}
	if (mnt != w->mnt_id) {
		*crossed = true;
		close(pfd);
		return -EXDEV;
	}
	snprintf(link, sizeof link, "/proc/self/fd/%d", pfd);
	if ((mode & 0700) != 0700 && chmod(link, (mode & 07777) | 0700) < 0 &&
	    errno != EPERM) {
		rc = -errno;
		close(pfd);
		return rc;
	}
	fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	rc = fd < 0 ? -errno : fd;
	close(pfd);
	return rc;
}

static void
walk_fail(struct walk *w, int rc)
{
	if (w->first == 0)
		w->first = rc;
}

static bool
skipped(const struct walk *w, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < w->nskip; i++)
		if (w->skip[i].dev == dev && w->skip[i].ino == ino)
			return true;
	return false;
}

/* Give up on an entry; -ENOSPC once too many were. */
static int
skip_add(struct walk *w, dev_t dev, ino_t ino)
{
	if (w->nskip == RM_SKIP_MAX)
		return -ENOSPC;
	w->skip[w->nskip].dev = dev;
	w->skip[w->nskip].ino = ino;
	w->nskip++;
	return 0;
}

static int
push(struct walk *w, int fd)
{
	struct stat sb;

	if (fstat(fd, &sb) < 0)
		return -errno;
	if (w->depth == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 64;
		struct rm_id *n = realloc(w->down, cap * sizeof *n);

		if (n == NULL)
			return -ENOMEM;
		w->down = n;
		w->cap = cap;
	}
	w->down[w->depth].dev = sb.st_dev;
	w->down[w->depth].ino = sb.st_ino;
	w->depth++;
	return 0;
}

/* A stream over the open directory dfd from its start (dfd stays open). */
static DIR *
rewound(int dfd)
{
	DIR *d;
	int fd, e;

	if ((fd = dup(dfd)) < 0)
		return NULL;
	if ((d = fdopendir(fd)) == NULL) {
		e = errno;
		close(fd);
		errno = e;
		return NULL;
	}
	rewinddir(d);	/* dup shares the offset of the last pass */
	return d;
}

/*
 * One pass over the open directory dfd: files, symlinks and the like
 * unlinked, empty directories removed. 1 with the first non-empty
 * directory's name in sub (the walk goes down), 0 when nothing is left
 * but what would not go, <0 a fatal error.
 */
static int
scan(int dfd, struct walk *w, char sub[NAME_MAX + 1], struct rm_id *subid)
{
	struct dirent *e;
	DIR *d;
	int rc = 0;

	if ((d = rewound(dfd)) == NULL)
		return -errno;
	for (;;) {
		struct statx sx;

		errno = 0;
		if ((e = readdir(d)) == NULL) {
			if (errno != 0)
				walk_fail(w, -errno);
			break;
		}
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (statx(dfd, e->d_name, AT_SYMLINK_NOFOLLOW, STATX_TYPE |
		    STATX_INO | STATX_MNT_ID, &sx) < 0) {
			if (errno != ENOENT) {
				/* an entry we cannot even stat: no id to skip */
				rc = -errno;
				break;
			}
			continue;
		}
		if (!(sx.stx_mask & STATX_MNT_ID)) {
			rc = -ENOTSUP;
			break;
		}
		dev_t dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);

		if (skipped(w, dev, sx.stx_ino))
			continue;
		if (sx.stx_mnt_id != w->mnt_id) {
			/* A mount point inside: leave it and what is under. */
			w->crossed = true;
			if ((rc = skip_add(w, dev, sx.stx_ino)) < 0)
				break;
			continue;
		}
		if (!S_ISDIR(sx.stx_mode)) {
			/* Files, symlinks, FIFOs, sockets, devices: the entry. */
			if (unlinkat(dfd, e->d_name, 0) == 0 || errno == ENOENT)
				continue;
		} else {
			if (unlinkat(dfd, e->d_name, AT_REMOVEDIR) == 0 ||
			    errno == ENOENT)
				continue;
			if (errno == ENOTEMPTY || errno == EEXIST) {
				memcpy(sub, e->d_name, strlen(e->d_name) + 1);
				subid->dev = dev;
				subid->ino = sx.stx_ino;
				rc = 1;
				break;
			}
		}
		walk_fail(w, -errno);
		if ((rc = skip_add(w, dev, sx.stx_ino)) < 0)
			break;
	}
	closedir(d);
	return rc;
}

/* The name of the directory id in the open directory dfd, or -ENOENT. */
static int
name_of(int dfd, const struct rm_id *id, char name[NAME_MAX + 1])
{
	struct dirent *e;
	struct stat sb;
	DIR *d;
	int rc = -ENOENT;

	if ((d = rewound(dfd)) == NULL)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
			continue;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (fstatat(dfd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
		    sb.st_dev == id->dev && sb.st_ino == id->ino) {
			memcpy(name, e->d_name, strlen(e->d_name) + 1);
			rc = 0;
			break;
		}
	}
	closedir(d);
	return rc;
}

/*
 * Empty the directory base under pfd (left in place). 0 when it is
 * empty, else the first error (w->crossed set for a mount left inside).
 */
static int
empty_tree(int pfd, const char *base, struct walk *w)
{
	char sub[NAME_MAX + 1];
	struct rm_id subid = { 0, 0 }, child;
	struct stat sb;
	bool crossed;
	int fd, nfd, rc;

	if ((fd = open_dir(pfd, base, w, &crossed)) < 0)
		return fd;
	if ((rc = push(w, fd)) < 0)
		goto out;
	for (;;) {
		if ((rc = scan(fd, w, sub, &subid)) < 0)
			break;
		if (rc == 1) {
			rc = 0;
			if ((nfd = open_dir(fd, sub, w, &crossed)) < 0) {
				if (crossed)
					w->crossed = true;
				else
					walk_fail(w, nfd);
				if ((rc = skip_add(w, subid.dev, subid.ino)) < 0)
					break;
				continue;
			}
			if ((rc = push(w, nfd)) < 0) {
				close(nfd);
				break;
			}
			close(fd);
			fd = nfd;
			continue;
		}
		/* fd is as empty as it gets: back up to its parent. */
		if (w->depth == 1)
			break;
		nfd = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		if (nfd < 0) {
			rc = -errno;
			break;
		}
		if (fstat(nfd, &sb) < 0 ||
		    sb.st_dev != w->down[w->depth - 2].dev ||
		    sb.st_ino != w->down[w->depth - 2].ino) {
			close(nfd);
			rc = -ESTALE;
			break;
		}
		child = w->down[--w->depth];
		close(fd);
		fd = nfd;
		if ((rc = name_of(fd, &child, sub)) == -ENOENT) {
			rc = 0;
			continue;
		}
		if (rc < 0)
			break;
		if (unlinkat(fd, sub, AT_REMOVEDIR) == 0 || errno == ENOENT)
			continue;
		if (errno != ENOTEMPTY && errno != EEXIST)
			walk_fail(w, -errno);
		if ((rc = skip_add(w, child.dev, child.ino)) < 0)
			break;
	}
out:
	close(fd);
	if (rc < 0)
		return rc;
	return w->first;
}

int
sbx_workspace_rmtree_safe(const char *path)
{
	char parent[PATH_MAX], base[NAME_MAX + 1], *slash;
	const char *name;
	struct walk *w;
	unsigned long long mnt = 0, pmnt = 0;
	mode_t mode, pmode;
	size_t n;
	int pfd, rc;

	if (path == NULL || path[0] != '/' || strlen(path) >= sizeof parent)
		return -EINVAL;
	snprintf(parent, sizeof parent, "%s", path);
	while (strlen(parent) > 1 && parent[strlen(parent) - 1] == '/')
		parent[strlen(parent) - 1] = '\0';
	if (strcmp(parent, "/") == 0)
		return -EINVAL;
	slash = strrchr(parent, '/');
	name = path + (slash - parent) + 1;
	*slash = '\0';
	/* The name alone, trailing slashes cut. */
	if ((n = strcspn(name, "/")) >= sizeof base)
		return -ENAMETOOLONG;
	memcpy(base, name, n);
	base[n] = '\0';
	if (strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return -EINVAL;
	pfd = open(parent[0] ? parent : "/", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	if ((rc = mnt_of(pfd, base, 0, &mnt, &mode)) < 0) {
		close(pfd);
		return rc == -ENOENT ? 0 : rc;
	}
	/* A mount point itself is not ours to empty: unmount first. */
	if ((rc = mnt_of(pfd, "", AT_EMPTY_PATH, &pmnt, &pmode)) < 0 ||
	    pmnt != mnt) {
		close(pfd);
		return rc < 0 ? rc : -EXDEV;
	}
	if (!S_ISDIR(mode)) {
		/* A file or a symlink: the entry itself. */
		rc = unlinkat(pfd, base, 0) < 0 && errno != ENOENT ? -errno : 0;
		close(pfd);
		return rc;
	}
	if ((w = calloc(1, sizeof *w)) == NULL) {
		close(pfd);
		return -ENOMEM;
	}
	w->mnt_id = mnt;
	rc = empty_tree(pfd, base, w);
	if (rc == 0 && w->crossed)
		rc = -EXDEV;
	if (rc == 0 && unlinkat(pfd, base, AT_REMOVEDIR) < 0 &&
	    errno != ENOENT)
		rc = -errno;
	free(w->down);
	free(w);
	close(pfd);
	return rc;
}

/* ---- handing a tree to a uid ------------------------------------------ */

static int
chown_at(int dfd, const char *name, uid_t uid, gid_t gid, dev_t dev,
    int depth)
{
	struct dirent *e;
	struct stat sb;
	DIR *d;
	int fd, rc = 0;

	if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fchownat(dfd, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (S_ISREG(sb.st_mode) && (sb.st_mode & (S_ISUID | S_ISGID))) {
		/* chown cleared them already on Linux; make sure. */
		fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
		    O_CLOEXEC);
		if (fd < 0)
			return -errno;
		rc = fchmod(fd, sb.st_mode & 0777) < 0 ? -errno : 0;
		close(fd);
		return rc;
	}
	if (!S_ISDIR(sb.st_mode))
		return 0;
	if (sb.st_dev != dev)
		return -EXDEV;	/* a mount point: never cross it */
	if (depth >= SBX_TREE_DEPTH)
		return -ELOOP;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if ((d = fdopendir(fd)) == NULL) {
		rc = -errno;
		close(fd);
		return rc;
	}
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if ((rc = chown_at(dirfd(d), e->d_name, uid, gid, dev,
		    depth + 1)) < 0)
			break;
	}
	closedir(d);
	return rc;
}

int
sbx_workspace_chown_tree(const char *path, uid_t uid, gid_t gid)
{
	struct stat sb;
	int rc;

	if (path == NULL || path[0] != '/')
		return -EINVAL;
	if (lstat(path, &sb) < 0)
		return -errno;
	if (!S_ISDIR(sb.st_mode))
		return -ENOTDIR;
	rc = chown_at(AT_FDCWD, path, uid, gid, sb.st_dev, 0);
	return rc;
}

int
sbx_workspace_release(const char *dir)
{
	return sbx_workspace_mounted(dir) ? sbx_workspace_umount(dir) : 0;
}

/* ---- the bounded workspace, seeded ----------------------------------- */

/* Copy the tree at (sfd) into (dfd), as root, never following a symlink. */
static int
copy_tree(int sfd, int dfd, int depth)
{
	struct dirent *e;
	struct stat sb;
	DIR *d;
	int rc = 0, dup_fd;

	if (depth >= SBX_TREE_DEPTH)
		return -ELOOP;
	if ((dup_fd = dup(sfd)) < 0)
		return -errno;
	if ((d = fdopendir(dup_fd)) == NULL) {
		rc = -errno;
		close(dup_fd);
		return rc;
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		const char *n = e->d_name;

		if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0 ||
		    strcmp(n, "lost+found") == 0)
			continue;
		if (fstatat(sfd, n, &sb, AT_SYMLINK_NOFOLLOW) < 0) {
			rc = -errno;
			break;
		}
		if (S_ISDIR(sb.st_mode)) {
			int s2, d2;

			if (mkdirat(dfd, n, sb.st_mode & 07777) < 0) {
				rc = -errno;
				break;
			}
			s2 = openat(sfd, n, O_RDONLY | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC);
			d2 = openat(dfd, n, O_RDONLY | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC);
			if (s2 < 0 || d2 < 0)
				rc = -errno;
			else
				rc = copy_tree(s2, d2, depth + 1);
			if (s2 >= 0)
				close(s2);
			if (d2 >= 0)
				close(d2);
		} else if (S_ISLNK(sb.st_mode)) {
			char target[PATH_MAX];
			ssize_t len = readlinkat(sfd, n, target,
			    sizeof target - 1);

			if (len < 0) {
				rc = -errno;
				break;
			}
			target[len] = '\0';
			if (symlinkat(target, dfd, n) < 0)
				rc = -errno;
		} else if (S_ISREG(sb.st_mode)) {
			char buf[65536];
			ssize_t r, w;
			int in = openat(sfd, n, O_RDONLY | O_NOFOLLOW |
			    O_CLOEXEC), o;

			if (in < 0) {
				rc = -errno;
				break;
			}
			o = openat(dfd, n, O_WRONLY | O_CREAT | O_EXCL |
			    O_NOFOLLOW | O_CLOEXEC, sb.st_mode & 0777);
			if (o < 0) {
				rc = -errno;
				close(in);
				break;
			}
			while (rc == 0 && (r = read(in, buf, sizeof buf)) > 0)
				for (ssize_t off = 0; off < r; off += w) {
					w = write(o, buf + off, (size_t)(r -
					    off));
					if (w <= 0) {
						rc = w < 0 ? -errno : -EIO;
						break;
					}
				}
			if (rc == 0 && fchmod(o, sb.st_mode & 0777) < 0)
				rc = -errno;
			close(in);
			if (close(o) < 0 && rc == 0)
				rc = -errno;
		}
		/* Sockets, FIFOs and devices are not part of a checkout. */
	}
	closedir(d);
	return rc;
}

/*
 * Sparse images must never overcommit the disk (a full disk under one
 * turns the lease's ext4 read-only): the free space of the filesystem
 * holding ws must cover what every live lease's image may still grow by
 * (its size less its blocks; they are DIR/../<lease>/work.img) plus this
 * one's whole limit. -ENOSPC, naming the figures, when it cannot.
 */
static int
room(const char *ws, unsigned long long bytes, char *err, size_t errsz)
{
	char leases[PATH_MAX], *slash;
	unsigned long long live = 0, avail;
	struct statvfs sv;
	struct dirent *e;
	struct stat sb;
	DIR *d;
	int dfd;

	if (snprintf(leases, sizeof leases, "%s", ws) >= (int)sizeof leases)
		return -ENAMETOOLONG;
	for (int up = 0; up < 2; up++) {
		if ((slash = strrchr(leases, '/')) == NULL || slash == leases)
			return 0;	/* not under a leases directory */
		*slash = '\0';
	}
	if (statvfs(leases, &sv) < 0 || (d = opendir(leases)) == NULL)
		return 0;	/* the mount's own errors say more */
	dfd = dirfd(d);
	while ((e = readdir(d)) != NULL) {
		char rel[NAME_MAX + 16];

		if (e->d_name[0] == '.')
			continue;
		snprintf(rel, sizeof rel, "%s/work.img", e->d_name);
		if (fstatat(dfd, rel, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(sb.st_mode) && (unsigned long long)sb.st_size >
		    (unsigned long long)sb.st_blocks * 512)
			live += (unsigned long long)sb.st_size -
			    (unsigned long long)sb.st_blocks * 512;
	}
	closedir(d);
	avail = (unsigned long long)sv.f_bavail * sv.f_frsize;
	if (avail >= live && avail - live >= bytes)
		return 0;
	snprintf(err, errsz, "bounded workspace %s: %llu MiB free, but the "
	    "live leases' workspaces may still take %llu MiB and this one "
	    "needs %llu MiB ([limits] disk)", ws, avail >> 20, live >> 20,
	    bytes >> 20);
	return -ENOSPC;
}

static void
point(const struct sbx_steps *s, const char *when)
{
	if (s != NULL && s->point != NULL)
		s->point(s->ud, "bound", when);
}

int
sbx__workspace_bound(const char *id, const char *ws,
    const struct sbx_limits *l, uid_t uid, gid_t gid,
    const struct sbx_steps *s, char *err, size_t errsz)
{
	char *seed = NULL;
	int rc, sfd = -1, dfd = -1;

	if (sbx_workspace_mounted(ws)) {
		/* made by sbx__workspace_make and seeded in place */
		point(s, "before");
		point(s, "created");
		return 0;
	}
	if ((rc = room(ws, l->disk, err, errsz)) < 0)
		return rc;
	if (asprintf(&seed, "%s.seed", ws) < 0) {
		snprintf(err, errsz, "out of memory");
		return -ENOMEM;
	}
	if (rename(ws, seed) < 0) {
		rc = -errno;
		snprintf(err, errsz, "%s: %s", ws, strerror(errno));
		goto out;
	}
	point(s, "before");
	if ((rc = sbx_workspace_mount(id, ws, l->disk, l->inodes, uid,
	    gid)) < 0) {
		snprintf(err, errsz, "bounded workspace %s: %s", ws,
		    sbx_strerror(rc));
		goto out;
	}
	point(s, "created");
	sfd = open(seed, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	dfd = open(ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0 || dfd < 0) {
		rc = -errno;
		snprintf(err, errsz, "%s: %s", ws, strerror(errno));
		goto out;
	}
	if ((rc = copy_tree(sfd, dfd, 0)) < 0) {
		snprintf(err, errsz, "seeding %s: %s", ws, rc == -ENOSPC ?
		    "the repository does not fit the disk limit" :
		    strerror(-rc));
		goto out;
	}
	if ((rc = sbx_workspace_rmtree_safe(seed)) < 0)
		snprintf(err, errsz, "%s: %s", seed, strerror(-rc));
out:
	if (sfd >= 0)
		close(sfd);
	if (dfd >= 0)
		close(dfd);
	if (rc < 0 && sbx_workspace_rmtree_safe(seed) < 0) {
		/* best effort: the seed stays for the teardown to remove */
	}
	free(seed);
	return rc;
}

int
sbx__workspace_make(const struct sbx_request *req, char *err, size_t errsz)
{
	const struct sbx_limits *l = req->limits;
	int rc;

	if (req->id == NULL || req->workspace == NULL ||
	    req->workspace[0] != '/') {
		snprintf(err, errsz, "no workspace to make");
		return -EINVAL;
	}
	if (l == NULL || l->disk == 0) {
		if (mkdir(req->workspace, 0700) == 0)
			return 0;
		rc = -errno;
		snprintf(err, errsz, "%s: %s", req->workspace,
		    strerror(errno));
		return rc;
	}
	if (access(req->workspace, F_OK) == 0) {
		snprintf(err, errsz, "%s: workspace already exists",
		    req->workspace);
		return -EEXIST;
	}
	if ((rc = room(req->workspace, l->disk, err, errsz)) < 0)
		return rc;
	/* root's until .provision hands the seeded tree to the lease uid */
	if ((rc = mount_image(req->id, req->workspace, l->disk, l->inodes, 0,
	    0)) < 0)
		snprintf(err, errsz, "bounded workspace %s: %s",
		    req->workspace, sbx_strerror(rc));
	return rc;
}
