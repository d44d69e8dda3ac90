/*
 * sbx_agent.c: what an agent profile adds to a bwrap agent-zone plan
 * (issue 18; SPEC 8.3): its environment knobs (names checked as a
 * policy's are: nothing credential-shaped but the profile's placeholder
 * key, nothing the zone owns), directories put before the zone's PATH,
 * and files written into its fresh HOME before it starts (bwrap --file
 * from sealed memfds, 0600, owned by the zone's user, writable by it:
 * agents rewrite their own state). Never into /work. Pure until
 * sbx_plan_open_data.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"

#define OPTS_MAX (4 + 3 * 64 + 6 * SBX_AGENT_FILES_MAX + 3 * 64)

/* Printable, no newline: a value bwrap's --args carries as is. */
static bool
value_ok(const char *v)
{
	for (const unsigned char *c = (const unsigned char *)v; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return false;
	return strlen(v) < 4096;
}

bool
sbx_agent_path_ok(const char *s)
{
	const char *c = s;

	if (s == NULL || s[0] == '\0' || s[0] == '/' || strlen(s) > 255)
		return false;
	while (*c != '\0') {
		size_t n = strcspn(c, "/");

		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 &&
		    c[0] == '.' && c[1] == '.'))
			return false;
		c += n;
		if (*c == '/')
			c++;
	}
	return s[strlen(s) - 1] != '/';
}

static bool
name_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n < 128 && !(s[0] >= '0' && s[0] <= '9') &&
	    strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789_") == n;
}

static bool
dirs_ok(const char *p)
{
	/* absolute directories, ':' separated, no empty entry */
	if (p == NULL)
		return true;
	if (p[0] != '/' || strstr(p, "::") != NULL || strstr(p, "/../") ||
	    p[strlen(p) - 1] == ':' || !value_ok(p))
		return false;
	for (const char *c = p; (c = strchr(c, ':')) != NULL; c++)
		if (c[1] != '/')
			return false;
	return true;
}

int
sbx_agent_plan_add(struct sbx_plan *p, const struct sbx_agent_plan *a)
{
	const char *opts[OPTS_MAX];
	char *own[OPTS_MAX];
	size_t n = 0, nown = 0;
	int rc = 0, nd = 0;

	if (p == NULL || a == NULL || a->nfiles < 0 ||
	    a->nfiles > SBX_AGENT_FILES_MAX || !dirs_ok(a->path_prefix))
		return -EINVAL;
	/*
	 * A knob's value comes from the profile, never from corral's
	 * environment: a vendor's name (ANTHROPIC_BASE_URL) is fine, a
	 * secret-shaped one (*_KEY, *TOKEN, *SECRET*) is not; the
	 * placeholder key alone may be (it is no secret: a minted key goes
	 * by sbx_cred_plan_add).
	 */
	for (size_t i = 0; a->env != NULL && a->env[i] != NULL; i++) {
		const char *eq = strchr(a->env[i], '=');
		char name[130];

		if (eq == NULL || eq == a->env[i] ||
		    (size_t)(eq - a->env[i]) >= sizeof name ||
		    !value_ok(eq + 1))
			return -EINVAL;
		memcpy(name, a->env[i], (size_t)(eq - a->env[i]));
		name[eq - a->env[i]] = '\0';
		if (!name_ok(name))
			return -EINVAL;
		if (sbx__env_reserved(name) || sbx__env_shaped(name, false))
			return SBX_EPOLICY;
	}
	if (a->key_env != NULL) {
		if (!name_ok(a->key_env) || a->key_value == NULL ||
		    !value_ok(a->key_value))
			return -EINVAL;
		if (sbx__env_reserved(a->key_env))
			return SBX_EPOLICY;
	}
	for (int i = 0; i < a->nfiles; i++) {
		if (!sbx_agent_path_ok(a->files[i].path) || (a->files[i].len > 0 &&
		    a->files[i].text == NULL))
			return -EINVAL;
	}
	for (int i = 0; i < p->ndata; i++) {
		if (p->data[i].fd >= 0)
			return -EBUSY;
	}
	if (p->ndata + a->nfiles > SBX_PLAN_MAX_DATA)
		return -ENOSPC;
	for (size_t i = 0; a->env != NULL && a->env[i] != NULL; i++) {
		const char *eq = strchr(a->env[i], '=');
		char *name;

		if (n + 3 > OPTS_MAX || (name = strndup(a->env[i],
		    (size_t)(eq - a->env[i]))) == NULL) {
			rc = -ENOMEM;
			goto out;
		}
		own[nown++] = name;
		opts[n++] = "--setenv";
		opts[n++] = name;
		opts[n++] = eq + 1;
	}
	if (a->key_env != NULL) {
		opts[n++] = "--setenv";
		opts[n++] = a->key_env;
		opts[n++] = a->key_value;
	}
	if (a->path_prefix != NULL) {
		char *pv;

		if (asprintf(&pv, "%s:/usr/local/bin:/usr/bin:/bin",
		    a->path_prefix) < 0) {
			rc = -ENOMEM;
			goto out;
		}
		own[nown++] = pv;
		opts[n++] = "--setenv";
		opts[n++] = "PATH";
		opts[n++] = pv;
	}
	for (int i = 0; i < a->nfiles; i++) {
		const char *rel = a->files[i].path;
		char *dst, *fd, *sl;

		/* Its parent directories first, then the file. */
		for (sl = strchr(rel, '/'); sl != NULL;
		    sl = strchr(sl + 1, '/')) {
			char *d;

			if (n + 4 > OPTS_MAX || asprintf(&d, "%s/%.*s",
			    SBX_BWRAP_HOME, (int)(sl - rel), rel) < 0) {
				rc = -ENOMEM;
				goto out;
			}
			own[nown++] = d;
			opts[n++] = "--perms";
			opts[n++] = "0700";
			opts[n++] = "--dir";
			opts[n++] = d;
		}
		if (n + 5 > OPTS_MAX || asprintf(&dst, "%s/%s", SBX_BWRAP_HOME,
		    rel) < 0) {
			rc = -ENOMEM;
			goto out;
		}
		own[nown++] = dst;
		if (asprintf(&fd, "%d", SBX_AGENT_FD + i) < 0) {
			rc = -ENOMEM;
			goto out;
		}
		own[nown++] = fd;
		if ((rc = sbx_plan_data(p, SBX_AGENT_FD + i, a->files[i].text,
		    a->files[i].len)) < 0)
			goto out;
		nd++;
		opts[n++] = "--perms";
		opts[n++] = "0600";
		opts[n++] = "--file";
		opts[n++] = fd;
		opts[n++] = dst;
	}
	if (n > 0)
		rc = sbx__egress_plan_insert(p, opts, n, NULL, 0);
out:
	if (rc < 0) {
		/* Take the data back out: the plan stays as it was. */
		while (nd-- > 0) {
			struct sbx_data *d = &p->data[--p->ndata];

			free(d->bytes);
			memset(d, 0, sizeof *d);
			d->fd = -1;
		}
	}
	for (size_t i = 0; i < nown; i++)
		free(own[i]);
	return rc;
}
