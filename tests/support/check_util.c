/*
 * check_util.c: helpers shared by the Check suites (see check_util.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "support/check_util.h"

char *
cu_tmpdir(const char *tag)
{
	const char *base = getenv("TMPDIR");
	char *p;

	if (base == NULL || *base == '\0')
		base = "/tmp";
	if (asprintf(&p, "%s/corral-%s-XXXXXX", base, tag) < 0)
		abort();
	if (mkdtemp(p) == NULL)
		abort();
	return p;
}

void
cu_rmrf(const char *path)
{
	char *cmd;

	if (path == NULL || *path == '\0' || strcmp(path, "/") == 0)
		return;
	if (asprintf(&cmd, "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'",
	    path, path) < 0)
		abort();
	if (system(cmd) != 0) {
		/* best effort */
	}
	free(cmd);
}

char *
cu_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0, r;

	if (f == NULL)
		return NULL;
	do {
		if (cap - n < 4096) {
			cap = cap * 2 + 8192;
			buf = realloc(buf, cap);
			if (buf == NULL)
				abort();
		}
		r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
	} while (r > 0);
	fclose(f);
	buf[n] = '\0';
	if (len != NULL)
		*len = n;
	return buf;
}

int
cu_write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	const char *p = buf;

	if (fd < 0)
		return -errno;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			int e = errno;
			close(fd);
			return -e;
		}
		p += w;
		len -= (size_t)w;
	}
	return close(fd) < 0 ? -errno : 0;
}

static char *
env_path(const char *var, const char *fallback, const char *rel)
{
	const char *base = getenv(var);
	char *p;

	if (base == NULL || *base == '\0')
		base = fallback;
	if (rel == NULL)
		p = strdup(base);
	else if (asprintf(&p, "%s/%s", base, rel) < 0)
		p = NULL;
	if (p == NULL)
		abort();
	return p;
}

char *
cu_src_path(const char *rel)
{
	return env_path("CORRAL_SRC", ".", rel);
}

char *
cu_fixture_path(const char *name)
{
	return env_path("CORRAL_FIXTURES", ".", name);
}

char *
cu_corral_bin(void)
{
	return env_path("CORRAL_BIN", "corral", NULL);
}

uint64_t
cu_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

char *
cu_run(const char *cmd, int *status)
{
	FILE *p = popen(cmd, "r");
	char *buf = NULL;
	size_t n = 0, cap = 0, r;
	int st;

	if (p == NULL)
		abort();
	do {
		if (cap - n < 4096) {
			cap = cap * 2 + 8192;
			if ((buf = realloc(buf, cap)) == NULL)
				abort();
		}
		r = fread(buf + n, 1, cap - n - 1, p);
		n += r;
	} while (r > 0);
	buf[n] = '\0';
	st = pclose(p);
	if (status != NULL)
		*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return buf;
}

const char *
cu_scope(void)
{
	static char scope[32];

	snprintf(scope, sizeof scope, "/proc/%d", (int)getpid());
	return scope;
}
