/*
 * cmd_fleet.c: `corral fleet ls|probe|receive` and `corral new --host|
 * --label` (issue 23, SPEC 8.1 "SSH hosts"). The operator's machine reads
 * fleet.ini and reaches each host with the real OpenSSH client; corral
 * itself runs on the host.
 *
 *   fleet ls       each host: reachable, corral version, sandbox preflight,
 *                  live leases against capacity, and the leases this
 *                  machine placed there
 *   fleet probe    on a host, for the operator's machine: one JSON document
 *                  (version, `corral doctor --json`, live leases)
 *   fleet receive  on a host, for `corral new --host`: reads the operator's
 *                  policy and a pack of the base commit's tree from stdin,
 *                  makes a repository of it under the host's state
 *                  directory and runs `corral new` there with that policy
 *                  (which can only narrow the host's own: SPEC 8.6), so a
 *                  host's looser policy never applies
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "lease/lease.h"
#include "pty/pty.h"
#include "tui/cli/cli.h"
#include "tui/runtime/fleet.h"
#include "tui/runtime/runtime.h"

#define SEED_MAGIC "corral-fleet-seed 1 "
#define SEED_POLICY_MAX (1024u * 1024u)
#define SEED_PACK_MAX "4294967296"/* git unpack-objects --max-input-size */
#define LOCAL_TIMEOUT_MS 600000u	/* git on either side, a remote new */
#define GIT "/usr/bin/git"

/* ---- the leases this machine placed (STATE/fleet/leases/ID.json) ------- */

static char *
fleet_dir(struct tui_ctx *c, const char *sub)
{
	char *p = NULL;

	if (asprintf(&p, "%s/fleet%s%s", c->state_dir, sub[0] ? "/" : "",
	    sub) < 0)
		return NULL;
	return p;
}

static int
mkdirs(struct tui_ctx *c, const char *sub)
{
	char *a = fleet_dir(c, ""), *b = fleet_dir(c, sub);
	int rc = 0;

	if (a == NULL || b == NULL)
		rc = -ENOMEM;
	else if ((mkdir(c->state_dir, 0700) < 0 && errno != EEXIST) ||
	    (mkdir(a, 0700) < 0 && errno != EEXIST) ||
	    (mkdir(b, 0700) < 0 && errno != EEXIST))
		rc = -errno;
	free(a);
	free(b);
	return rc;
}

/* Write j to STATE/fleet/leases/NAME.json, 0600, atomically. */
static int
record_write(struct tui_ctx *c, const char *name, json_t *j)
{
	char *dir = fleet_dir(c, "leases"), *path = NULL, *tmp = NULL;
	int rc = -ENOMEM;

	if (dir != NULL && asprintf(&path, "%s/%s.json", dir, name) > 0 &&
	    asprintf(&tmp, "%s/.%s.tmp", dir, name) > 0) {
		rc = json_dump_file(j, tmp, JSON_COMPACT) == 0 &&
		    chmod(tmp, 0600) == 0 && rename(tmp, path) == 0 ? 0 : -EIO;
		if (rc < 0)
			unlink(tmp);
	}
	free(dir);
	free(path);
	free(tmp);
	return rc;
}

static void
record_remove(struct tui_ctx *c, const char *name)
{
	char *dir = fleet_dir(c, "leases"), *path = NULL;

	if (dir != NULL && asprintf(&path, "%s/%s.json", dir, name) > 0)
		unlink(path);
	free(dir);
	free(path);
}

static const char *
str_or(const json_t *j, const char *dflt)
{
	return json_is_string(j) ? json_string_value(j) : dflt;
}

/* The records of host (NULL: all), as a JSON array, in ID order. */
static json_t *
records(struct tui_ctx *c, const char *host)
{
	char *dir = fleet_dir(c, "leases");
	json_t *a = json_array();
	struct dirent **ents = NULL;
	int n;

	if (dir == NULL || a == NULL) {
		free(dir);
		return a;
	}
	n = scandir(dir, &ents, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		const char *e = ents[i]->d_name;
		size_t len = strlen(e);
		char *path = NULL;
		json_t *j = NULL;

		if (len > 5 && e[0] != '.' && strcmp(e + len - 5, ".json") == 0 &&
		    asprintf(&path, "%s/%s", dir, e) > 0)
			j = json_load_file(path, 0, NULL);
		if (json_is_object(j) && (host == NULL || strcmp(host,
		    str_or(json_object_get(j, "host"), "")) == 0))
			json_array_append(a, j);
		json_decref(j);
		free(path);
		free(ents[i]);
	}
	free(ents);
	free(dir);
	return a;
}

static int
load_fleet(struct tui_ctx *c, struct tui_fleet **f)
{
	struct tui_fleet_error err;
	int rc;

	if ((*f = calloc(1, sizeof **f)) == NULL)
		return tui_ctx_err(c, "out of memory");
	if ((rc = tui_fleet_load(*f, &err)) < 0) {
		free(*f);
		*f = NULL;
		return tui_ctx_err(c, "%s%s", rc == -EINVAL ?
		    "fleet_config_invalid: " : "", err.msg);
	}
	return 0;
}

/* ---- fleet probe (on a host) ---------------------------------------- */

/* Run this corral with args; its stdout as JSON, or NULL. */
static json_t *
self_json(struct tui_ctx *c, const char *a1, const char *a2, int *status)
{
	char *argv[] = { c->self, (char *)a1, (char *)a2, "--json", NULL };
	struct tui_fleet_out o;
	json_t *j = NULL;

	*status = -1;
	if (a2 == NULL) {
		argv[2] = "--json";
		argv[3] = NULL;
	}
	if (tui_fleet_run(argv, NULL, -1, -1, 4u << 20, LOCAL_TIMEOUT_MS,
	    &o) < 0)
		return NULL;
	*status = o.status;
	if (!o.out_over)
		j = json_loads(o.out, 0, NULL);
	tui_fleet_out_clear(&o);
	return j;
}

static int
probe_exec(struct tui_ctx *c)
{
	json_t *doc, *ls, *leases = json_array(), *v;
	int dst, lst;
	size_t i;

	doc = self_json(c, "doctor", NULL, &dst);
	ls = self_json(c, "ls", NULL, &lst);
	json_array_foreach(ls, i, v)
		json_array_append_new(leases, json_pack("{s:O?, s:O?, s:O?, "
		    "s:O?}", "id", json_object_get(v, "id"), "name",
		    json_object_get(v, "name"), "lease_state",
		    json_object_get(v, "lease_state"), "activity",
		    json_object_get(v, "activity")));
	tui_ctx_print_json(json_pack("{s:s, s:s, s:o, s:i, s:o, s:o}",
	    "version", CORRAL_VERSION, "state_dir", c->state_dir,
	    "preflight", doc != NULL ? doc : json_null(), "preflight_exit",
	    dst, "live", json_is_array(ls) ? json_integer((json_int_t)
	    json_array_size(ls)) : json_null(), "leases", leases));
	json_decref(ls);
	return TUI_EXIT_OK;
}

/* ---- fleet ls (on the operator's machine) --------------------------- */

static json_t *
probe_json(struct tui_ctx *c, const struct tui_fleet_probe *p)
{
	const struct tui_fleet_host *h = p->host;
	json_t *labels = json_array(), *mine = records(c, h->name);

	for (size_t i = 0; i < h->nlabels; i++)
		json_array_append_new(labels, json_string(h->labels[i]));
	return json_pack("{s:s, s:s, s:i, s:o, s:b, s:s?, s:b, s:s?, s:O?, "
	    "s:b, s:s?, s:o, s:O?}", "host", h->name, "ssh", h->dest,
	    "capacity", (int)h->capacity, "labels", labels, "reachable",
	    p->reachable, "version", p->json != NULL ? p->version : NULL,
	    "same_version", p->same_version, "preflight", p->json == NULL ?
	    NULL : p->preflight_ok ? "passed" : p->halt, "live",
	    p->json != NULL ? json_object_get(p->json, "live") : NULL,
	    "usable", tui_fleet_probe_usable(p), "reason", p->why[0] ? p->why :
	    NULL, "placed", mine, "leases", p->json != NULL ?
	    json_object_get(p->json, "leases") : NULL);
}

static void
probe_text(struct tui_ctx *c, const struct tui_fleet_probe *p)
{
	const struct tui_fleet_host *h = p->host;
	json_t *mine = records(c, h->name), *v;
	size_t i;

	printf("%-16s %s\n", h->name, h->dest);
	if (p->json != NULL) {
		printf("  corral         %s%s\n", p->version, p->same_version ?
		    "" : " (not this machine's " CORRAL_VERSION ")");
		printf("  preflight      %s\n", p->preflight_ok ? "passed" :
		    p->halt);
		printf("  leases         %u of %u\n", p->live, h->capacity);
	}
	printf("  %-14s ", "state");
	tui_ctx_put_escaped(stdout, p->why[0] ? p->why : "ready",
	    strlen(p->why[0] ? p->why : "ready"));
	printf("\n");
	json_array_foreach(mine, i, v) {
		const char *id = str_or(json_object_get(v, "id"), "?");
		const char *st = "not live there";
		json_t *l;
		size_t k;

		json_array_foreach(p->json != NULL ? json_object_get(p->json,
		    "leases") : NULL, k, l)
			if (strcmp(str_or(json_object_get(l, "id"), ""), id) == 0)
				st = str_or(json_object_get(l, "activity"), "?");
		printf("  placed         %s ", id);
		tui_ctx_put_escaped(stdout, st, strlen(st));
		printf("\n");
	}
	json_decref(mine);
}

static int
ls_exec(struct tui_ctx *c, int argc, char **argv)
{
	struct tui_fleet_probe *p;
	struct tui_fleet *f;
	json_t *a;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			c->json = true;
		else
			return tui_ctx_usage(c, "unexpected argument '%.64s'",
			    argv[i]);
	}
	if ((rc = load_fleet(c, &f)) != 0)
		return rc;
	if ((p = calloc(f->nhosts + 1, sizeof *p)) == NULL) {
		free(f);
		return tui_ctx_err(c, "out of memory");
	}
	a = json_array();
	{
		const struct tui_fleet_host *hosts[TUI_FLEET_HOSTS_MAX] = { NULL };

		for (size_t i = 0; i < f->nhosts; i++)
			hosts[i] = &f->hosts[i];
		tui_fleet_probe_many(f, hosts, f->nhosts, p);
	}
	for (size_t i = 0; i < f->nhosts; i++) {
		if (c->json)
			json_array_append_new(a, probe_json(c, &p[i]));
		else
			probe_text(c, &p[i]);
		tui_fleet_probe_clear(&p[i]);
	}
	if (c->json)
		tui_ctx_print_json(a);
	else
		json_decref(a);
	free(p);
	free(f);
	/* A host that is down is reported, not an error of the listing. */
	return TUI_EXIT_OK;
}

/* ---- fleet receive (on a host) -------------------------------------- */

/* Read exactly n bytes of fd; 0 or -1. */
static int
read_full(int fd, char *buf, size_t n)
{
	while (n > 0) {
		ssize_t r = read(fd, buf, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		buf += r;
		n -= (size_t)r;
	}
	return 0;
}

/* An absolute path a host gave: printable, no blank, no ':' (ssh -L). */
static bool
safe_path(const char *s)
{
	if (s[0] != '/' || strlen(s) > 200 || strstr(s, "/../") != NULL)
		return false;
	for (; *s != '\0'; s++)
		if (*s <= ' ' || *s > '~' || *s == ':')
			return false;
	return true;
}

static bool
is_hex(const char *s, size_t len)
{
	return strlen(s) == len && strspn(s, "0123456789abcdef") == len;
}

/* git ARGS in repo; 0 when it exited 0 (its stdout in o, to clear). */
static int
git_in(const char *repo, const char *const *args, int in_fd,
    struct tui_fleet_out *o, char *why, size_t whysz)
{
	char *argv[16] = { GIT, "-C", (char *)repo };
	size_t n = 3;
	int rc;

	for (; *args != NULL && n < 15; args++)
		argv[n++] = (char *)*args;
	argv[n] = NULL;
	if ((rc = tui_fleet_run(argv, NULL, in_fd, -1, 1u << 20,
	    LOCAL_TIMEOUT_MS, o)) < 0) {
		snprintf(why, whysz, "cannot run git: %s", strerror(-rc));
		return -1;
	}
	if (o->status != 0 || o->timed_out) {
		char w[700];

		tui_fleet_out_why(o, w, sizeof w);
		snprintf(why, whysz, "git %s %s", argv[3], w);
		tui_fleet_out_clear(o);
		return -1;
	}
	return 0;
}

static int
receive_exec(struct tui_ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tree", required_argument, NULL, 't' },
		{ "from", required_argument, NULL, 'f' },
		{ "time", required_argument, NULL, 'T' },
		{ "name", required_argument, NULL, 'n' },
		{ "agent", required_argument, NULL, 'a' },
		{ "allow-control", no_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 },
	};
	const char *tree = NULL, *from = NULL, *when = NULL, *name = NULL;
	const char *agent = NULL;
	char hdr[64], *pol = NULL, *dir = NULL, *seeds, *repo = NULL;
	char *polf = NULL, why[1024], commit[41], msg[128];
	char *nargv[32];
	struct tui_fleet_out o;
	bool allow = false, made = false;
	size_t hn = 0, n = 0;
	unsigned long plen;
	int ch, fd, rc = TUI_EXIT_FAIL;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (ch) {
		case 't': tree = optarg; break;
		case 'f': from = optarg; break;
		case 'T': when = optarg; break;
		case 'n': name = optarg; break;
		case 'a': agent = optarg; break;
		case 'C': allow = true; break;
		default:
			return tui_ctx_usage(c, "unknown or incomplete option "
			    "'%.64s'", argv[optind - 1]);
		}
	}
	if (tree == NULL || !is_hex(tree, 40) || from == NULL ||
	    !is_hex(from, 40) || when == NULL || when[0] == '\0' ||
	    strspn(when, "0123456789") != strlen(when) || strlen(when) > 12 ||
	    optind >= argc || argc - optind > 16)
		return tui_ctx_usage(c, "want --tree TREE --from COMMIT --time "
		    "EPOCH [--name N] [--agent P] -- CMD (run by 'corral new "
		    "--host' over ssh)");
	/* The header: magic, then the policy's length, on one line. */
	while (hn < sizeof hdr - 1 && read_full(0, hdr + hn, 1) == 0 &&
	    hdr[hn] != '\n')
		hn++;
	hdr[hn] = '\0';
	if (strncmp(hdr, SEED_MAGIC, strlen(SEED_MAGIC)) != 0 ||
	    (plen = strtoul(hdr + strlen(SEED_MAGIC), NULL, 10)) == 0 ||
	    plen > SEED_POLICY_MAX)
		return tui_ctx_err(c, "seed_invalid: the stream does not "
		    "start with a corral seed header");
	if ((pol = malloc(plen)) == NULL || read_full(0, pol, plen) < 0) {
		free(pol);
		return tui_ctx_err(c, "seed_invalid: the policy was cut "
		    "short");
	}
	if (mkdirs(c, "seeds") < 0 || (seeds = fleet_dir(c, "seeds")) ==
	    NULL || asprintf(&dir, "%s/XXXXXX", seeds) < 0) {
		free(pol);
		return tui_ctx_err(c, "cannot make the seed directory");
	}
	free(seeds);
	if (mkdtemp(dir) != NULL)
		made = true;
	if (!made || asprintf(&repo, "%s/repo", dir) < 0 ||
	    asprintf(&polf, "%s/policy.ini", dir) < 0) {
		rc = tui_ctx_err(c, "cannot make the seed directory: %s",
		    strerror(errno));
		goto out;
	}
	/* The operator's policy, as sent: `new --policy` narrows by it. */
	fd = open(polf, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, pol, plen) != (ssize_t)plen || close(fd) < 0) {
		rc = tui_ctx_err(c, "cannot write the policy: %s",
		    strerror(errno));
		goto out;
	}
	{
		const char *init[] = { "init", "-q", "-b", "main", NULL };
		const char *unpack[] = { "unpack-objects", "-q",
			"--max-input-size=" SEED_PACK_MAX, NULL };
		char ttree[64];
		const char *check[] = { "cat-file", "-e", ttree, NULL };
		const char *ct[] = { "commit-tree", tree, "-m", msg, NULL };

		snprintf(ttree, sizeof ttree, "%s^{tree}", tree);
		snprintf(msg, sizeof msg, "corral fleet seed of %s", from);
		/* A fixed identity and time: the same base on every host. */
		setenv("GIT_AUTHOR_NAME", "corral", 1);
		setenv("GIT_AUTHOR_EMAIL", "corral@localhost", 1);
		setenv("GIT_COMMITTER_NAME", "corral", 1);
		setenv("GIT_COMMITTER_EMAIL", "corral@localhost", 1);
		snprintf(why, sizeof why, "@%s +0000", when);
		setenv("GIT_AUTHOR_DATE", why, 1);
		setenv("GIT_COMMITTER_DATE", why, 1);
		if (mkdir(repo, 0700) < 0 ||
		    git_in(repo, init, -1, &o, why, sizeof why) < 0 ||
		    (tui_fleet_out_clear(&o), git_in(repo, unpack, 0, &o, why,
		    sizeof why)) < 0 ||
		    (tui_fleet_out_clear(&o), git_in(repo, check, -1, &o, why,
		    sizeof why)) < 0) {
			rc = tui_ctx_err(c, "seed_invalid: %s", why);
			goto out;
		}
		tui_fleet_out_clear(&o);
		if (git_in(repo, ct, -1, &o, why, sizeof why) < 0) {
			rc = tui_ctx_err(c, "seed_invalid: %s", why);
			goto out;
		}
		snprintf(commit, sizeof commit, "%.40s", o.out);
		tui_fleet_out_clear(&o);
		{
			const char *ref[] = { "update-ref", "refs/heads/main",
				commit, NULL };
			const char *co[] = { "checkout", "-q", "-f", "main",
				NULL };

			if (!is_hex(commit, 40) || git_in(repo, ref, -1, &o,
			    why, sizeof why) < 0 || (tui_fleet_out_clear(&o),
			    git_in(repo, co, -1, &o, why, sizeof why)) < 0) {
				rc = tui_ctx_err(c, "seed_invalid: %s", why);
				goto out;
			}
			tui_fleet_out_clear(&o);
		}
	}
	/* Now this host's own `corral new`, with the operator's policy. */
	nargv[n++] = c->self;
	nargv[n++] = "new";
	nargv[n++] = "--repo";
	nargv[n++] = repo;
	nargv[n++] = "--base";
	nargv[n++] = commit;
	nargv[n++] = "--policy";
	nargv[n++] = polf;
	if (name != NULL) {
		nargv[n++] = "--name";
		nargv[n++] = (char *)name;
	}
	if (agent != NULL) {
		nargv[n++] = "--agent";
		nargv[n++] = (char *)agent;
	}
	if (allow)
		nargv[n++] = "--allow-control";
	nargv[n++] = "--";
	for (int i = optind; i < argc; i++)
		nargv[n++] = argv[i];
	nargv[n] = NULL;
	fflush(NULL);
	execv(c->self, nargv);
	rc = tui_ctx_err(c, "cannot run corral new: %s", strerror(errno));
out:
	/* A seed that did not become a lease leaves nothing behind. */
	if (rc != TUI_EXIT_OK && made) {
		char *rm[] = { "/bin/rm", "-rf", "--", dir, NULL };

		if (tui_fleet_run(rm, NULL, -1, -1, 1024, LOCAL_TIMEOUT_MS,
		    &o) == 0)
			tui_fleet_out_clear(&o);
	}
	free(pol);
	free(dir);
	free(repo);
	free(polf);
	return rc;
}

/* ---- corral new --host|--label (on the operator's machine) ---------- */

/* git ARGS in repo, its first line of output into out (outsz). */
static int
git_line(const char *repo, const char *const *args, char *out, size_t outsz,
    char *why, size_t whysz)
{
	struct tui_fleet_out o;

	if (git_in(repo, args, -1, &o, why, whysz) < 0)
		return -1;
	snprintf(out, outsz, "%.*s", (int)strcspn(o.out, "\n"), o.out);
	tui_fleet_out_clear(&o);
	return 0;
}

/*
 * The upload: the seed header, the operator's policy, then a pack of the
 * base's tree (its objects only, never its history), into a file.
 */
static int
upload(struct tui_ctx *c, const char *repo, const char *tree,
    const char *pol, char *why, size_t whysz)
{
	char *dir = fleet_dir(c, ""), *tmpl = NULL;
	char *argv[] = { "/bin/sh", "-c", "set -e; " GIT " -C \"$1\" rev-list "
		"--objects \"$2\" | " GIT " -C \"$1\" pack-objects -q --stdout",
		"corral-fleet-pack", (char *)repo, (char *)tree, NULL };
	struct tui_fleet_out o;
	int fd = -1;

	if (dir == NULL || asprintf(&tmpl, "%s/.upload.XXXXXX", dir) < 0 ||
	    (fd = mkostemp(tmpl, O_CLOEXEC)) < 0) {
		snprintf(why, whysz, "cannot make the upload: %s",
		    strerror(errno));
		goto fail;
	}
	unlink(tmpl);
	if (dprintf(fd, SEED_MAGIC "%zu\n%s", strlen(pol), pol) < 0) {
		snprintf(why, whysz, "cannot write the upload: %s",
		    strerror(errno));
		goto fail;
	}
	if (tui_fleet_run(argv, NULL, -1, fd, 0, LOCAL_TIMEOUT_MS, &o) < 0 ||
	    o.status != 0 || o.timed_out) {
		char w[700] = "could not run";

		if (o.out != NULL)
			tui_fleet_out_why(&o, w, sizeof w);
		snprintf(why, whysz, "cannot pack the base's tree: %s", w);
		tui_fleet_out_clear(&o);
		goto fail;
	}
	tui_fleet_out_clear(&o);
	if (lseek(fd, 0, SEEK_SET) < 0) {
		snprintf(why, whysz, "lseek: %s", strerror(errno));
		goto fail;
	}
	free(dir);
	free(tmpl);
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	free(dir);
	free(tmpl);
	return -1;
}

/* The remote command line: `corral fleet receive ... -- CMD`, quoted. */
static char *
receive_cmd(const struct tui_fleet_host *h, const struct tui_fleet_new *a,
    const char *tree, const char *from, const char *when)
{
	const char *fixed[] = { h->corral, "fleet", "receive", "--tree", tree,
		"--from", from, "--time", when };
	size_t len = 0, cap = 256;
	char *s = malloc(cap), *q;
	bool ok = s != NULL;

#define PUT(word) do {							\
	if (ok && (q = tui_fleet_shquote(word)) != NULL) {		\
		size_t ql = strlen(q);					\
		char *ns = len + ql + 2 > cap ? realloc(s, cap = 2 * (len + \
		    ql + 2)) : s;					\
		if (ns == NULL) {					\
			ok = false;					\
		} else {						\
			s = ns;						\
			memcpy(s + len, q, ql);				\
			len += ql;					\
			s[len++] = ' ';					\
			s[len] = '\0';					\
		}							\
		free(q);						\
	} else {							\
		ok = false;						\
	}								\
} while (0)
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		PUT(fixed[i]);
	if (a->name != NULL) {
		PUT("--name");
		PUT(a->name);
	}
	if (a->agent != NULL) {
		PUT("--agent");
		PUT(a->agent);
	}
	if (a->allow_control)
		PUT("--allow-control");
	PUT("--");
	for (char **w = a->cmd; *w != NULL; w++)
		PUT(*w);
#undef PUT
	if (!ok) {
		free(s);
		return NULL;
	}
	return s;
}

int
tui_cmd_fleet_new(struct tui_ctx *c, const struct tui_fleet_new *a)
{
	struct tui_fleet_probe *pr = NULL;
	struct tui_fleet_out o = { 0 };
	struct tui_fleet *f = NULL;
	const struct tui_fleet_host *h;
	char why[4096], from[64], tw[128], tree[41], when[24], pending[64];
	char ref[300], id[LEASE_ID_LEN + 1], *text = NULL, *remote = NULL;
	char **argv = NULL, cwd[4096];
	const char *repo = a->repo;
	size_t np = 0, pick = 0;
	int rc, fd = -1;
	json_t *rec;

	if (a->base != NULL && a->base[0] == '-')
		return tui_ctx_usage(c, "bad --base '%.64s'", a->base);
	if (repo == NULL) {
		if (getcwd(cwd, sizeof cwd) == NULL)
			return tui_ctx_err(c, "getcwd: %s", strerror(errno));
		repo = cwd;
	}
	if ((rc = load_fleet(c, &f)) != 0)
		return rc;
	/* The operator's effective policy: what the host must apply. */
	if ((text = tui_fleet_policy_text(a->policy, why, sizeof why)) ==
	    NULL) {
		rc = tui_ctx_err(c, "%s", why);
		goto out;
	}
	snprintf(ref, sizeof ref, "%.280s^{commit}", a->base != NULL ?
	    a->base : "HEAD");
	{
		const char *rp[] = { "rev-parse", "--verify", "-q",
			"--end-of-options", ref, NULL };
		const char *sh[] = { "show", "-s", "--format=%T %ct", from,
			NULL };

		if (git_line(repo, rp, from, sizeof from, why, sizeof why) < 0
		    || !is_hex(from, 40)) {
			rc = tui_ctx_err(c, "base_unresolved: %.300s in %.300s",
			    a->base != NULL ? a->base : "HEAD", repo);
			goto out;
		}
		if (git_line(repo, sh, tw, sizeof tw, why, sizeof why) < 0 ||
		    sscanf(tw, "%40s %20s", tree, when) != 2 ||
		    !is_hex(tree, 40)) {
			rc = tui_ctx_err(c, "base_unresolved: %s", why);
			goto out;
		}
	}
	if ((pr = calloc(f->nhosts + 1, sizeof *pr)) == NULL) {
		rc = tui_ctx_err(c, "out of memory");
		goto out;
	}
	if ((rc = tui_fleet_place(f, a->host, a->label, pr, &np, &pick, why,
	    sizeof why)) < 0) {
		rc = tui_ctx_err(c, "%s", why);
		goto out;
	}
	h = pr[pick].host;
	/* The intent, before anything exists on the host (SPEC 9.2). */
	snprintf(pending, sizeof pending, "pending-%ld-%ld", (long)getpid(),
	    (long)time(NULL));
	rec = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:s}", "host",
	    h->name, "ssh", h->dest, "state", "provisioning", "base", from,
	    "tree", tree, "created", (json_int_t)time(NULL), "repo", repo);
	if (mkdirs(c, "leases") < 0 || rec == NULL ||
	    record_write(c, pending, rec) < 0) {
		json_decref(rec);
		rc = tui_ctx_err(c, "cannot record the lease's intent in %s/"
		    "fleet: %s", c->state_dir, strerror(errno));
		goto out;
	}
	if ((fd = upload(c, repo, tree, text, why, sizeof why)) < 0 ||
	    (remote = receive_cmd(h, a, tree, from, when)) == NULL ||
	    (argv = tui_fleet_ssh_argv(f, h, remote)) == NULL) {
		json_decref(rec);
		record_remove(c, pending);
		rc = tui_ctx_err(c, "%s", fd < 0 ? why : "out of memory");
		goto out;
	}
	rc = tui_fleet_run(argv, NULL, fd, -1, 64u << 10, f->connect_timeout *
	    1000u + LOCAL_TIMEOUT_MS, &o);
	/* The last line the host's `corral new` printed: the lease's ID. */
	if (rc == 0 && o.status == 0) {
		char *nl;

		while (o.outlen > 0 && o.out[o.outlen - 1] == '\n')
			o.out[--o.outlen] = '\0';
		nl = strrchr(o.out, '\n');
		snprintf(id, sizeof id, "%.24s", nl != NULL ? nl + 1 : o.out);
	}
	if (rc < 0 || o.status != 0 || !lease_id_valid(id)) {
		char w[1100] = "could not run ssh";

		if (rc == 0)
			tui_fleet_out_why(&o, w, sizeof w);
		json_decref(rec);
		record_remove(c, pending);
		rc = tui_ctx_err(c, "remote_new_failed: on %s: %s", h->name, w);
		if (o.status > 1 && o.status < 126 && o.status != 255)
			rc = o.status;	/* the host's class: 30, 13... */
		goto out;
	}
	json_object_set_new(rec, "id", json_string(id));
	/* What the host said of itself when it took the lease (bounded). */
	json_object_set_new(rec, "host_corral_version",
	    json_string(pr[pick].version));
	{
		json_t *facts = json_object_get(json_object_get(pr[pick].json,
		    "preflight"), "facts");
		char *d = json_is_object(facts) ? json_dumps(facts,
		    JSON_COMPACT) : NULL;

		if (d != NULL && strlen(d) <= 8192)
			json_object_set_new(rec, "host_preflight",
			    json_deep_copy(facts));
		free(d);
	}
	/* Where its holder listens there, for the relay (a safe path only). */
	{
		const char *sd = str_or(json_object_get(pr[pick].json,
		    "state_dir"), "");

		if (safe_path(sd))
			json_object_set_new(rec, "host_state_dir",
			    json_string(sd));
	}
	json_object_set_new(rec, "state", json_string("running"));
	if (record_write(c, id, rec) < 0) {
		json_decref(rec);
		rc = tui_ctx_err(c, "lease %s runs on %s but cannot be "
		    "recorded here", id, h->name);
		goto out;
	}
	record_remove(c, pending);
	json_decref(rec);
	if (c->json)
		tui_ctx_print_json(json_pack("{s:s, s:s}", "id", id, "host",
		    h->name));
	else
		printf("%s\n", id);
	rc = TUI_EXIT_OK;
out:
	for (size_t i = 0; pr != NULL && i < np; i++)
		tui_fleet_probe_clear(&pr[i]);
	free(pr);
	tui_fleet_out_clear(&o);
	if (fd >= 0)
		close(fd);
	tui_fleet_argv_free(argv);
	free(remote);
	free(text);
	free(f);
	return rc;
}

/* ---- fleet screen|send ID (the relay, on the operator's machine) ------- */

/*
 * The relay: `ssh -N -L LOCAL:REMOTE DEST`, a unix socket here forwarded to
 * the remote holder's socket, so the holder's own wire protocol (and its
 * peer check, against the ssh login) runs end to end. Nothing of the lease
 * depends on the connection: the holder runs on when it drops.
 */
struct relay {
	pid_t pid;
	char local[108];
	char errf[TUI_FLEET_PATH_MAX];
};

static void
relay_close(struct relay *r)
{
	int st;

	if (r->pid > 0) {
		kill(-r->pid, SIGTERM);
		while (waitpid(r->pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	if (r->local[0] != '\0')
		unlink(r->local);
	if (r->errf[0] != '\0')
		unlink(r->errf);
	r->pid = 0;
}

static int
relay_open(struct tui_ctx *c, const struct tui_fleet *f, const char *id,
    unsigned flags, struct relay *r, struct pty_holder_client **cl)
{
	json_t *rec = NULL, *a = records(c, NULL), *v;
	const struct tui_fleet_host *h = NULL;
	char *dir = NULL, fwd[512], **argv = NULL;
	const char *sd = NULL;
	struct timespec ts = { 0, 50000000 };
	size_t i;
	int rc = -1, fd = -1;

	memset(r, 0, sizeof *r);
	json_array_foreach(a, i, v)
		if (strcmp(str_or(json_object_get(v, "id"), ""), id) == 0)
			rec = v;
	if (rec == NULL) {
		json_decref(a);
		return tui_ctx_err(c, "no lease %.64s was placed on a fleet "
		    "host from here", id);
	}
	h = tui_fleet_find(f, str_or(json_object_get(rec, "host"), ""));
	sd = str_or(json_object_get(rec, "host_state_dir"), "");
	if (h == NULL || !safe_path(sd) || !lease_id_valid(id)) {
		rc = tui_ctx_err(c, "lease %s: its host %s is not in %s (or "
		    "its record has no state directory)", id,
		    str_or(json_object_get(rec, "host"), "?"), f->file);
		goto out;
	}
	if (mkdirs(c, "relay") < 0 || (dir = fleet_dir(c, "relay")) == NULL) {
		rc = tui_ctx_err(c, "cannot make %s/fleet/relay", c->state_dir);
		goto out;
	}
	if ((size_t)snprintf(r->local, sizeof r->local, "%s/%s.%ld", dir,
	    id, (long)getpid()) >= sizeof r->local) {
		r->local[0] = '\0';
		rc = tui_ctx_err(c, "the state directory's path is too long "
		    "for a relay socket");
		goto out;
	}
	snprintf(r->errf, sizeof r->errf, "%s/.%s.%ld.err", dir, id,
	    (long)getpid());
	snprintf(fwd, sizeof fwd, "%s:%s/leases/%s/holder.sock", r->local, sd,
	    id);
	unlink(r->local);
	if ((argv = tui_fleet_ssh_argv(f, h, "-N")) == NULL) {
		rc = tui_ctx_err(c, "out of memory");
		goto out;
	}
	/* ssh ... -- DEST -N: the options go before the "--" instead. */
	{
		size_t n = 0, k;
		char **nv;

		while (argv[n] != NULL)
			n++;
		nv = calloc(n + 10, sizeof *nv);
		if (nv == NULL) {
			rc = tui_ctx_err(c, "out of memory");
			goto out;
		}
		for (k = 0; k < n - 3; k++)	/* before "--", DEST, "-N" */
			nv[k] = argv[k];
		nv[k++] = strdup("-N");
		nv[k++] = strdup("-o");
		nv[k++] = strdup("ExitOnForwardFailure=yes");
		nv[k++] = strdup("-o");
		nv[k++] = strdup("StreamLocalBindMask=0177");
		nv[k++] = strdup("-L");
		nv[k++] = strdup(fwd);
		nv[k++] = argv[n - 3];
		nv[k++] = argv[n - 2];
		free(argv[n - 1]);
		free(argv);
		argv = nv;
		for (size_t j = 0; j < k; j++)
			if (argv[j] == NULL) {
				rc = tui_ctx_err(c, "out of memory");
				goto out;
			}
	}
	if ((fd = open(r->errf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) < 0 || (fflush(NULL), r->pid = fork()) < 0) {
		rc = tui_ctx_err(c, "cannot start ssh: %s", strerror(errno));
		r->pid = 0;
		goto out;
	}
	if (r->pid == 0) {
		int nul = open("/dev/null", O_RDWR);

		setpgid(0, 0);
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(nul, 1) < 0 ||
		    dup2(fd, 2) < 0)
			_exit(127);
		close_range(3, ~0U, 0);
		execv(argv[0], argv);
		_exit(127);
	}
	setpgid(r->pid, r->pid);
	/* Until the forward answers, ssh ends, or the deadline. */
	for (unsigned t = 0; t < (f->connect_timeout + 20) * 20; t++) {
		int st;

		if (access(r->local, F_OK) == 0 && pty_holder_client_open(cl,
		    r->local, flags, 3000) == 0) {
			rc = 0;
			goto out;
		}
		if (waitpid(r->pid, &st, WNOHANG) == r->pid) {
			char msg[1024] = "";
			int ef = open(r->errf, O_RDONLY | O_CLOEXEC);
			ssize_t n = ef >= 0 ? read(ef, msg, sizeof msg - 1) : 0;
			char safe[1100];

			if (ef >= 0)
				close(ef);
			msg[n > 0 ? n : 0] = '\0';
			msg[strcspn(msg, "\r\n")] = '\0';
			tui_escape(msg, strlen(msg), safe, sizeof safe);
			r->pid = 0;
			rc = tui_ctx_err(c, "host_unreachable: %s: ssh exited "
			    "%d: %s", h->name, WIFEXITED(st) ?
			    WEXITSTATUS(st) : 128 + WTERMSIG(st), safe);
			goto out;
		}
		nanosleep(&ts, NULL);
	}
	rc = tui_ctx_err(c, "host_unreachable: %s: the relay did not answer "
	    "in %u s", h->name, f->connect_timeout + 20);
out:
	if (fd >= 0)
		close(fd);
	if (rc != 0)
		relay_close(r);
	tui_fleet_argv_free(argv);
	free(dir);
	json_decref(a);
	return rc;
}

static int
endpoint_exec(struct tui_ctx *c, int argc, char **argv, bool send)
{
	struct pty_holder_client *cl = NULL;
	struct tui_fleet *f;
	struct relay r;
	bool sb = false;
	int rc, i = 1;

	for (; i < argc && argv[i][0] == '-' && !send; i++) {
		if (strcmp(argv[i], "--json") == 0)
			c->json = true;
		else if (strcmp(argv[i], "--scrollback") == 0)
			sb = true;
		else
			return tui_ctx_usage(c, "unknown option '%.64s'",
			    argv[i]);
	}
	if (argc - i != (send ? 2 : 1))
		return tui_ctx_usage(c, send ? "expected: corral fleet send ID "
		    "TEXT" : "expected: corral fleet screen ID");
	if ((rc = load_fleet(c, &f)) != 0)
		return rc;
	rc = relay_open(c, f, argv[i], send ? 0 : PTY_HELLO_LIVE, &r, &cl);
	free(f);
	if (rc != 0)
		return rc;
	if (send)
		rc = tui_cmd_send_live(c, cl, argv[i + 1]);
	else if ((rc = tui_cmd_screen_live(c, cl, sb)) != TUI_EXIT_OK)
		rc = tui_ctx_err(c, "the holder of %s sent no screen (ended, "
		    "or the host's sshd refuses socket forwarding: "
		    "AllowStreamLocalForwarding, AllowTcpForwarding)", argv[i]);
	relay_close(&r);
	return rc;
}

/*
 * fleet cancel ID: the holder's own cancel (SIGINT, SIGTERM, SIGKILL to
 * the agent there) through the relay, then its exit awaited (bounded).
 */
static int
cancel_exec(struct tui_ctx *c, int argc, char **argv)
{
	struct pty_holder_client *cl = NULL;
	struct tui_fleet *f;
	const uint8_t *p;
	size_t plen;
	uint8_t type;
	struct relay r;
	int rc, got = 0;

	if (argc != 2 || argv[1][0] == '-')
		return tui_ctx_usage(c, "expected: corral fleet cancel ID");
	if ((rc = load_fleet(c, &f)) != 0)
		return rc;
	rc = relay_open(c, f, argv[1], PTY_HELLO_LIVE, &r, &cl);
	free(f);
	if (rc != 0)
		return rc;
	if (pty_holder_client_send(cl, PTY_W_CANCEL, NULL, 0) < 0) {
		rc = tui_ctx_err(c, "cancel: the relay closed");
		goto out;
	}
	/* Its verdict, then the agent's exit. */
	while ((got = pty_holder_client_recv(cl, &type, &p, &plen, 15000)) ==
	    1 && type != PTY_W_EXIT) {
		if (type == PTY_W_ERROR && plen >= 4) {
			fprintf(stderr, "corral fleet: holder refused: ");
			tui_ctx_put_escaped(stderr, (const char *)p + 4,
			    plen - 4);
			fputc('\n', stderr);
			rc = TUI_EXIT_FAIL;
			goto out;
		}
	}
	if (got != 1) {
		rc = tui_ctx_err(c, "lease %s did not end in time (or the "
		    "relay dropped): see 'corral fleet screen %s'", argv[1],
		    argv[1]);
		goto out;
	}
	printf("%s cancelled\n", argv[1]);
	rc = TUI_EXIT_OK;
out:
	pty_holder_client_free(cl);
	relay_close(&r);
	return rc;
}

static int
fleet_exec(struct tui_ctx *c, int argc, char **argv)
{
	if (argc < 2)
		return tui_ctx_usage(c, "want ls, screen, send, cancel, "
		    "probe or receive");
	if (strcmp(argv[1], "ls") == 0)
		return ls_exec(c, argc - 1, argv + 1);
	if (strcmp(argv[1], "probe") == 0 && argc == 2)
		return probe_exec(c);
	if (strcmp(argv[1], "receive") == 0)
		return receive_exec(c, argc - 1, argv + 1);
	if (strcmp(argv[1], "cancel") == 0)
		return cancel_exec(c, argc - 1, argv + 1);
	if (strcmp(argv[1], "screen") == 0 || strcmp(argv[1], "send") == 0)
		return endpoint_exec(c, argc - 1, argv + 1,
		    strcmp(argv[1], "send") == 0);
	return tui_ctx_usage(c, "unknown fleet command '%.64s' (want ls, "
	    "screen, send, cancel, probe or receive)", argv[1]);
}

const struct tui_cmd tui_cmd_fleet = {
	.name = "fleet",
	.usage = "ls [--json] | screen [--scrollback] [--json] ID | send ID "
		 "TEXT | cancel ID",
	.help = "The hosts of the fleet file (fleet.ini in corral's config "
		"directory), each\nreached with ssh: whether it answers, its "
		"corral version, its sandbox\npreflight, its live leases "
		"against its capacity and the leases placed there\nfrom "
		"here. A host that is down is reported, the others are still "
		"listed.\n'corral new --host NAME' or '--label LABEL' places "
		"a lease on one of them.\n'fleet screen', 'fleet send' and "
		"'fleet cancel' reach such a lease's holder\nthrough a unix "
		"socket forwarded over ssh; the lease runs on when the\n"
		"connection drops. (probe and receive are what this machine "
		"runs on a host.)",
	.exec = fleet_exec,
};
