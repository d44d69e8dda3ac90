/*
 * fs.c: the few filesystem helpers lease/ needs for its own directories:
 * mkdir -p, an existence test, the recursive remove (sandbox-adapters'
 * one: it never follows a symlink, never crosses into another mount and
 * makes directories u+rwx first; an agent can chmod 000 its workspace,
 * SANDBOX 5.d), and whole files read under a cap or written and fsync'd
 * (lease/result/).
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lease/lease_int.h"
#include "sandbox-adapters/sbx.h"

int
lease__fs_mkdirs(const char *path, mode_t mode)
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
lease__fs_exists(const char *path)
{
	struct stat sb;

	if (lstat(path, &sb) == 0)
		return 1;
	return errno == ENOENT ? 0 : -errno;
}

/*
 * The one removal of a tree a sandbox may have written is
 * sandbox-adapters/' (sbx_workspace_rmtree_safe: no symlink followed, no
 * mount crossed, any depth in two fds); lease/ only makes a relative path
 * absolute for it.
 */
int
lease__fs_rmtree(const char *path)
{
	char cwd[PATH_MAX], *abs;
	size_t n;
	int rc;

	assert(path != NULL && *path != '\0');
	if (path[0] == '/')
		return sbx_workspace_rmtree_safe(path);
	if (getcwd(cwd, sizeof cwd) == NULL)
		return -errno;
	n = strlen(cwd) + strlen(path) + 2;
	if ((abs = malloc(n)) == NULL)
		return -ENOMEM;
	snprintf(abs, n, "%s/%s", cwd, path);
	rc = sbx_workspace_rmtree_safe(abs);
	free(abs);
	return rc;
}

int
lease__fs_read_capped(const char *path, uint64_t max, char **out, size_t *len)
{
	struct stat sb;
	char *buf;
	size_t got = 0;
	ssize_t k;
	int fd, rc;

	*out = NULL;
	*len = 0;
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -errno;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		rc = S_ISREG(sb.st_mode) ? -errno : -EINVAL;
		close(fd);
		return rc;
	}
	if ((uint64_t)sb.st_size > max) {
		close(fd);
		return -EFBIG;
	}
	if ((buf = malloc((size_t)sb.st_size + 1)) == NULL) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)sb.st_size) {
		k = read(fd, buf + got, (size_t)sb.st_size - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(fd);
	buf[got] = '\0';
	*out = buf;
	*len = got;
	return 0;
}

int
lease__fs_write_file(const char *path, const void *buf, size_t len,
    unsigned mode)
{
	const char *p = buf;
	size_t n = strlen(path) + 8, off = 0;
	char *tmp;
	ssize_t k;
	int fd, rc = 0;

	if ((tmp = malloc(n)) == NULL)
		return -ENOMEM;
	snprintf(tmp, n, "%s.tmp", path);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    (mode_t)mode);
	if (fd < 0) {
		rc = -errno;
		free(tmp);
		return rc;
	}
	while (off < len) {
		k = write(fd, p + off, len - off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			rc = -errno;
			break;
		}
		off += (size_t)k;
	}
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc < 0)
		unlink(tmp);
	free(tmp);
	return rc;
}
