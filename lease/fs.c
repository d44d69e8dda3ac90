/*
 * fs.c: the few filesystem helpers lease/ needs for its own directories:
 * mkdir -p, an existence test, and a recursive remove that never follows
 * a symlink, never crosses into another mount and first makes directories
 * u+rwx (an agent can chmod 000 its workspace; SANDBOX 5.d).
 */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lease/lease_int.h"

#define RM_PASSES 3

int
lease__mkdirs(const char *path, mode_t mode)
{
	char *p, *q;
	int rc = 0;

	assert(path != NULL);
	if ((p = strdup(path)) == NULL)
		return -ENOMEM;
	for (q = p + 1;; q++) {
		if (*q != '/' && *q != '\0')
			continue;
		char c = *q;

		*q = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST) {
			rc = -errno;
			break;
		}
		*q = c;
		if (c == '\0')
			break;
	}
	if (rc == 0) {
		struct stat sb;

		if (stat(p, &sb) < 0)
			rc = -errno;
		else if (!S_ISDIR(sb.st_mode))
			rc = -ENOTDIR;
	}
	free(p);
	return rc;
}

int
lease__exists(const char *path)
{
	struct stat sb;

	if (lstat(path, &sb) == 0)
		return 1;
	return errno == ENOENT ? 0 : -errno;
}

static int
rm_at(int dirfd, const char *name, dev_t dev)
{
	struct dirent *e;
	struct stat sb;
	DIR *d;
	int fd, rc = 0, pass;

	if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(sb.st_mode)) {
		if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
			return -errno;
		return 0;
	}
	if (sb.st_dev != dev)
		return -EXDEV;	/* a mount point: never cross it */
	if ((sb.st_mode & S_IRWXU) != S_IRWXU &&
	    fchmodat(dirfd, name, (sb.st_mode | S_IRWXU) & 07777, 0) < 0)
		return -errno;
	for (pass = 0; pass < RM_PASSES; pass++) {
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		if (fd < 0)
			return -errno;
		if ((d = fdopendir(fd)) == NULL) {
			rc = -errno;
			close(fd);
			return rc;
		}
		while ((e = readdir(d)) != NULL) {
			if (strcmp(e->d_name, ".") == 0 ||
			    strcmp(e->d_name, "..") == 0)
				continue;
			if ((rc = rm_at(fd, e->d_name, dev)) < 0)
				break;
		}
		closedir(d);
		if (rc < 0)
			return rc;
		if (unlinkat(dirfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
			return 0;
		if (errno != ENOTEMPTY && errno != EEXIST)
			return -errno;
	}
	return -ENOTEMPTY;
}

int
lease__rmtree(const char *path)
{
	struct stat sb;
	char *copy, *slash, *base;
	const char *parent;
	int pfd, rc;

	assert(path != NULL && *path != '\0');
	if (lstat(path, &sb) < 0)
		return errno == ENOENT ? 0 : -errno;
	if ((copy = strdup(path)) == NULL)
		return -ENOMEM;
	/* strip trailing slashes */
	while (strlen(copy) > 1 && copy[strlen(copy) - 1] == '/')
		copy[strlen(copy) - 1] = '\0';
	slash = strrchr(copy, '/');
	if (slash == NULL) {
		parent = ".";
		base = copy;
	} else if (slash == copy) {
		parent = "/";
		base = slash + 1;
	} else {
		*slash = '\0';
		parent = copy;
		base = slash + 1;
	}
	if (*base == '\0' || strcmp(base, ".") == 0 ||
	    strcmp(base, "..") == 0) {
		free(copy);
		return -EINVAL;
	}
	pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0) {
		rc = -errno;
		free(copy);
		return rc;
	}
	rc = rm_at(pfd, base, sb.st_dev);
	close(pfd);
	free(copy);
	return rc;
}
