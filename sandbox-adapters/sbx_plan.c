/*
 * sbx_plan.c: exec plans as data (SPEC 8.1). A plan is built by an
 * adapter's pure .plan function and executed by pty/proc.c in the child.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"

const char *
sbx_strerror(int code)
{
	switch (code) {
	case SBX_EUNAVAIL:
		return "sandbox adapter not available";
	case SBX_EPOLICY:
		return "refused by policy";
	case SBX_EPROBE:
		return "preflight probe failed";
	case SBX_EWIDER:
		return "repository policy is wider than the operator's";
	case SBX_ELIMIT:
		return "limit reached";
	case SBX_EUIDPOOL:
		return "no free uid slot";
	default:
		return code < 0 && code > -4096 ? strerror(-code) : "unknown error";
	}
}

const char *
sbx_provision_reason(int code)
{
	switch (code) {
	case SBX_EUIDPOOL:
		return "uid_pool_exhausted";
	case -ENOSPC:
		return "disk_full";
	default:
		return "provision_error";
	}
}

const char *
sbx_halt_name(int halt)
{
	switch (halt) {
	case SBX_HALT_NONE:
		return "none";
	case SBX_HALT_CREDENTIAL_SCOPE_INVALID:
		return "credential_scope_invalid";
	case SBX_HALT_HERMETICITY_VIOLATION:
		return "hermeticity_violation";
	case SBX_HALT_ISOLATION_UNSATISFIABLE:
		return "isolation_unsatisfiable";
	default:
		return NULL;
	}
}

struct sbx_plan *
sbx_plan_new(void)
{
	struct sbx_plan *p = calloc(1, sizeof *p);

	if (p == NULL)
		return NULL;
	p->argv = calloc(1, sizeof *p->argv);
	p->envp = calloc(1, sizeof *p->envp);
	p->umask = -1;
	if (p->argv == NULL || p->envp == NULL) {
		sbx_plan_free(p);
		return NULL;
	}
	return p;
}

static void
strv_free(char **v)
{
	if (v == NULL)
		return;
	for (char **s = v; *s != NULL; s++)
		free(*s);
	free(v);
}

void
sbx_plan_free(struct sbx_plan *p)
{
	if (p == NULL)
		return;
	strv_free(p->argv);
	strv_free(p->envp);
	free(p->cwd);
	free(p->bind_src);
	free(p->bind_dst);
	for (int i = 0; i < p->ncgroups; i++)
		free(p->cgroup_procs[i]);
	for (int i = 0; i < p->ndata; i++) {
		free(p->data[i].bytes);
		if (p->data[i].fd >= 0)
			close(p->data[i].fd);
	}
	free(p);
}

static size_t
strv_len(char *const *v)
{
	size_t n = 0;

	while (v != NULL && v[n] != NULL)
		n++;
	return n;
}

static int
strv_push(char ***vp, char *s)
{
	size_t n = strv_len(*vp);
	char **nv;

	if (s == NULL)
		return -ENOMEM;
	nv = realloc(*vp, (n + 2) * sizeof *nv);
	if (nv == NULL) {
		free(s);
		return -ENOMEM;
	}
	nv[n] = s;
	nv[n + 1] = NULL;
	*vp = nv;
	return 0;
}

int
sbx_plan_arg(struct sbx_plan *p, const char *a)
{
	assert(p != NULL && a != NULL);
	return strv_push(&p->argv, strdup(a));
}

int
sbx_plan_env(struct sbx_plan *p, const char *name, const char *value)
{
	char *s;

	assert(p != NULL && name != NULL && value != NULL);
	if (strchr(name, '=') != NULL || *name == '\0')
		return -EINVAL;
	s = malloc(strlen(name) + strlen(value) + 2);
	if (s == NULL)
		return -ENOMEM;
	sprintf(s, "%s=%s", name, value);
	return strv_push(&p->envp, s);
}

int
sbx_plan_cwd(struct sbx_plan *p, const char *cwd)
{
	char *c = strdup(cwd);

	if (c == NULL)
		return -ENOMEM;
	free(p->cwd);
	p->cwd = c;
	return 0;
}

size_t
sbx_plan_argc(const struct sbx_plan *p)
{
	return strv_len(p->argv);
}

int
sbx_plan_data(struct sbx_plan *p, int to, const void *buf, size_t len)
{
	struct sbx_data *d;

	assert(p != NULL && (buf != NULL || len == 0));
	if (to < 3 || to > 99 || p->ndata >= SBX_PLAN_MAX_DATA ||
	    sbx_plan_data_find(p, to) != NULL)
		return -EINVAL;
	for (int i = 0; i < p->nfds; i++) {
		if (p->fds[i].to == to)
			return -EINVAL;
	}
	d = &p->data[p->ndata];
	if ((d->bytes = malloc(len > 0 ? len : 1)) == NULL)
		return -ENOMEM;
	if (len > 0)
		memcpy(d->bytes, buf, len);
	d->len = len;
	d->to = to;
	d->fd = -1;
	p->ndata++;
	return 0;
}

const struct sbx_data *
sbx_plan_data_find(const struct sbx_plan *p, int to)
{
	for (int i = 0; i < p->ndata; i++) {
		if (p->data[i].to == to)
			return &p->data[i];
	}
	return NULL;
}

/* One sealed memfd holding d's bytes, offset 0. */
static int
data_memfd(const struct sbx_data *d)
{
	size_t off = 0;
	ssize_t n;
	int fd = memfd_create("corral-sbx-data", MFD_CLOEXEC |
	    MFD_ALLOW_SEALING), err;

	if (fd < 0)
		return -errno;
	while (off < d->len) {
		n = write(fd, d->bytes + off, d->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail;
		off += (size_t)n;
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
	    F_SEAL_WRITE | F_SEAL_SEAL) < 0 || lseek(fd, 0, SEEK_SET) != 0)
		goto fail;
	return fd;
fail:
	err = errno ? errno : EIO;
	close(fd);
	return -err;
}

int
sbx_plan_open_data(struct sbx_plan *p)
{
	int fd;

	if (p == NULL)
		return -EINVAL;
	for (int i = 0; i < p->ndata; i++) {
		struct sbx_data *d = &p->data[i];

		if (d->fd >= 0)
			continue;
		if (p->nfds >= SBX_PLAN_MAX_FDS)
			return -ENOSPC;
		if ((fd = data_memfd(d)) < 0)
			return fd;
		d->fd = fd;
		p->fds[p->nfds].from = fd;
		p->fds[p->nfds].to = d->to;
		p->nfds++;
	}
	return 0;
}
