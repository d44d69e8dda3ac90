/*
 * git.c: everything corral does to git, through libgit2 only and on the
 * trusted side (SPEC 6.2-6.4): open the operator's repository (with the
 * owner check relaxed only for the directory the operator named), resolve
 * the base, create and delete corral/<id>, add and prune the review
 * worktree, and seed the sandbox workspace as a detached clone with its
 * own object database (the pack of a limited history is seed.c's).
 */
#include <assert.h>
#include <errno.h>
#include <git2.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lease/lease_int.h"

struct lease_git {
	git_repository *repo;
	char *workdir;
	bool owner_override;	/* opened with owner validation off */
	char *state;		/* lease_git_set_owner: canonical, or NULL */
	char *state_as;		/* ... and as given */
	char errmsg[LEASE__ERRMSG];
};

/* The reflog message a branch is created with: names its state directory. */
#define OWNER_MARK "corral: lease of "

/*
 * Pack windows: libgit2 maps up to 8 GiB of packs in 1 GiB windows by
 * default, and every page read stays in the process's RSS. Seeding reads
 * the base's objects from all over a long history's pack (a 445 MB pack
 * gave 135 MB of RSS), so corral maps 8 MiB windows, 64 MiB at most.
 */
#define MWINDOW_SIZE (8u << 20)
#define MWINDOW_MAPPED_LIMIT (64u << 20)

int
lease_git_init(void)
{
	int rc = git_libgit2_init();

	if (rc < 0)
		return LEASE_EGIT;
	if (git_libgit2_opts(GIT_OPT_SET_MWINDOW_SIZE,
	    (size_t)MWINDOW_SIZE) < 0 ||
	    git_libgit2_opts(GIT_OPT_SET_MWINDOW_MAPPED_LIMIT,
	    (size_t)MWINDOW_MAPPED_LIMIT) < 0)
		return LEASE_EGIT;
	return 0;
}

void
lease_git_shutdown(void)
{
	git_libgit2_shutdown();
}

/* Set the message "<text>: <libgit2 message>" and return code. */
static int
gfail(struct lease_git *g, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
gfail(struct lease_git *g, int code, const char *fmt, ...)
{
	const git_error *e = git_error_last();
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(g->errmsg, sizeof g->errmsg, fmt, ap);
	va_end(ap);
	n = strlen(g->errmsg);
	if (e != NULL && e->message != NULL && n < sizeof g->errmsg)
		snprintf(g->errmsg + n, sizeof g->errmsg - n, ": %s",
		    e->message);
	return code;
}

/*
 * Owner validation is a process-wide libgit2 option: switch it off only
 * around calls on the repository the operator named, and restore it.
 */
static int
owner_off(const struct lease_git *g)
{
	int prev = 1;

	if (g == NULL || g->owner_override) {
		git_libgit2_opts(GIT_OPT_GET_OWNER_VALIDATION, &prev);
		git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0);
	}
	return prev;
}

static void
owner_restore(const struct lease_git *g, int prev)
{
	if (g == NULL || g->owner_override)
		git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, prev);
}

const char *
lease_git_errmsg(const struct lease_git *g)
{
	return g != NULL ? g->errmsg : "out of memory";
}

const char *
lease_git_workdir(const struct lease_git *g)
{
	assert(g != NULL);
	return g->workdir;
}

/* Strip trailing slashes (but keep "/"). */
static void
chop_slashes(char *p)
{
	size_t n = strlen(p);

	while (n > 1 && p[n - 1] == '/')
		p[--n] = '\0';
}

/* True when the directory holding the repository is not ours. */
static bool
foreign_owner(const char *gitdir, const char *top)
{
	struct stat sb;
	uid_t me = geteuid();

	if (stat(gitdir, &sb) == 0 && sb.st_uid != me)
		return true;
	return stat(top, &sb) == 0 && sb.st_uid != me;
}

int
lease_git_open(struct lease_git **out, const char *dir)
{
	struct lease_git *g;
	char abs[PATH_MAX], gitdir[PATH_MAX], top[PATH_MAX];
	git_buf found = { 0 };
	const char *wd;
	size_t n;
	int rc, prev;

	assert(out != NULL);
	*out = NULL;
	if ((g = calloc(1, sizeof *g)) == NULL)
		return -ENOMEM;
	*out = g;
	if (dir == NULL || *dir == '\0')
		dir = ".";
	if (realpath(dir, abs) == NULL) {
		rc = errno;
		snprintf(g->errmsg, sizeof g->errmsg, "%s: %s", dir,
		    strerror(rc));
		return rc == ENOENT || rc == ENOTDIR ? LEASE_ENOTREPO : -rc;
	}
	/* Find the repository as git does (discovery checks no owner). */
	rc = git_repository_discover(&found, abs, 0, NULL);
	if (rc == GIT_ENOTFOUND) {
		snprintf(g->errmsg, sizeof g->errmsg, "%s: not a git "
		    "repository (or any parent directory)", abs);
		return LEASE_ENOTREPO;
	}
	if (rc < 0)
		return gfail(g, LEASE_EGIT, "%s: cannot find repository", abs);
	snprintf(gitdir, sizeof gitdir, "%s", found.ptr);
	git_buf_dispose(&found);
	chop_slashes(gitdir);
	snprintf(top, sizeof top, "%s", gitdir);
	n = strlen(top);
	if (n > 5 && strcmp(top + n - 5, "/.git") == 0)
		top[n - 5] = '\0';

	/* With the owner check on first. */
	rc = git_repository_open_ext(&g->repo, abs, 0, NULL);
	if (rc < 0 && foreign_owner(gitdir, top)) {
		/*
		 * libgit2 1.5.1 refuses a repository owned by someone else
		 * (and reports it as "not found"). Trust it only when dir
		 * is that repository's top (or git) directory, which the
		 * operator named; never one found by searching upward.
		 */
		if (strcmp(abs, top) != 0 && strcmp(abs, gitdir) != 0) {
			snprintf(g->errmsg, sizeof g->errmsg, "%.3000s: the "
			    "repository at %.3000s is owned by another user; "
			    "name its top directory to use it", abs, top);
			return LEASE_EOWNER;
		}
		prev = owner_off(NULL);
		rc = git_repository_open_ext(&g->repo, abs,
		    GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
		owner_restore(NULL, prev);
		if (rc == 0)
			g->owner_override = true;
	}
	if (rc < 0)
		return gfail(g, LEASE_EGIT, "%s: cannot open repository", abs);
	if (git_repository_is_bare(g->repo)) {
		snprintf(g->errmsg, sizeof g->errmsg, "%s: bare repository "
		    "(corral needs a repository with a working tree)", abs);
		return LEASE_EBARE;
	}
	wd = git_repository_workdir(g->repo);
	if (wd == NULL || (g->workdir = strdup(wd)) == NULL)
		return -ENOMEM;
	return 0;
}

void
lease_git_free(struct lease_git *g)
{
	if (g == NULL)
		return;
	git_repository_free(g->repo);
	free(g->workdir);
	free(g->state);
	free(g->state_as);
	free(g);
}

int
lease_git_resolve(struct lease_git *g, const char *base, char oid_hex[41],
    char **ref_out)
{
	git_object *obj = NULL, *commit = NULL;
	git_reference *ref = NULL, *resolved = NULL;
	const char *spec = base != NULL && *base != '\0' ? base : "HEAD";
	int rc;

	assert(g != NULL && g->repo != NULL && oid_hex != NULL &&
	    ref_out != NULL);
	*ref_out = NULL;
	if (*spec == '-') {
		snprintf(g->errmsg, sizeof g->errmsg, "unknown base '%s'",
		    spec);
		return LEASE_EBADBASE;
	}
	if (git_revparse_ext(&obj, &ref, g->repo, spec) < 0) {
		rc = gfail(g, LEASE_EBADBASE, "unknown base '%s' in %s", spec,
		    g->workdir);
		goto out;
	}
	if (git_object_peel(&commit, obj, GIT_OBJECT_COMMIT) < 0) {
		rc = gfail(g, LEASE_EBADBASE, "base '%s' does not name a "
		    "commit", spec);
		goto out;
	}
	git_oid_tostr(oid_hex, 41, git_object_id(commit));
	/* HEAD (or any symbolic ref) names the branch it points to. */
	if (ref != NULL && git_reference_resolve(&resolved, ref) == 0 &&
	    strcmp(git_reference_name(resolved), "HEAD") != 0) {
		if ((*ref_out = strdup(git_reference_name(resolved))) == NULL) {
			rc = -ENOMEM;
			goto out;
		}
	}
	rc = 0;
out:
	git_reference_free(resolved);
	git_reference_free(ref);
	git_object_free(commit);
	git_object_free(obj);
	return rc;
}

static int
lookup_commit(struct lease_git *g, const char *oid_hex, git_commit **out)
{
	git_oid oid;

	if (oid_hex == NULL || strlen(oid_hex) != GIT_OID_HEXSZ ||
	    git_oid_fromstr(&oid, oid_hex) < 0) {
		snprintf(g->errmsg, sizeof g->errmsg, "malformed commit ID");
		return -EINVAL;
	}
	if (git_commit_lookup(out, g->repo, &oid) < 0)
		return gfail(g, LEASE_EBADBASE, "commit %s not found", oid_hex);
	return 0;
}

void
lease_git_set_owner(struct lease_git *g, const char *state_dir)
{
	char *p;

	assert(g != NULL);
	free(g->state);
	free(g->state_as);
	g->state = g->state_as = NULL;
	if (state_dir == NULL)
		return;
	g->state_as = strdup(state_dir);
	if ((p = realpath(state_dir, NULL)) == NULL)
		p = strdup(state_dir);
	/* One line in a reflog: a newline would end the message. */
	if (p != NULL && strchr(p, '\n') != NULL) {
		free(p);
		p = NULL;
	}
	g->state = p;
}

/* The state directory a branch's oldest reflog message names, or NULL. */
static char *
branch_owner(struct lease_git *g, const char *refname)
{
	git_reflog *log = NULL;
	const git_reflog_entry *e;
	const char *msg;
	char *owner = NULL;
	size_t n;

	if (git_reflog_read(&log, g->repo, refname) < 0)
		return NULL;
	if ((n = git_reflog_entrycount(log)) > 0 &&
	    (e = git_reflog_entry_byindex(log, n - 1)) != NULL &&
	    (msg = git_reflog_entry_message(e)) != NULL &&
	    strncmp(msg, OWNER_MARK, strlen(OWNER_MARK)) == 0)
		owner = strdup(msg + strlen(OWNER_MARK));
	git_reflog_free(log);
	return owner;
}

int
lease_git_branch_create(struct lease_git *g, const char *id,
    const char *oid_hex)
{
	char name[LEASE_BRANCH_LEN + 1], full[LEASE_BRANCH_LEN + 16];
	char *msg = NULL;
	git_commit *c = NULL;
	git_reference *ref = NULL;
	int rc;

	assert(g != NULL && g->repo != NULL);
	if ((rc = lease_id_branch(name, id)) < 0)
		return rc;
	if ((rc = lookup_commit(g, oid_hex, &c)) < 0)
		return rc;
	/*
	 * Created with a reflog message naming the state directory (SPEC
	 * 9.2): another state directory on the same repository never takes
	 * it for one of its own orphans.
	 */
	snprintf(full, sizeof full, "refs/heads/%s", name);
	if (g->state != NULL) {
		size_t len = strlen(OWNER_MARK) + strlen(g->state) + 1;

		if ((msg = malloc(len)) == NULL) {
			git_commit_free(c);
			return -ENOMEM;
		}
		snprintf(msg, len, OWNER_MARK "%s", g->state);
	}
	rc = msg != NULL ? git_reference_create(&ref, g->repo, full,
	    git_commit_id(c), 0, msg) : git_branch_create(&ref, g->repo, name,
	    c, 0);
	free(msg);
	if (rc == GIT_EEXISTS)
		rc = gfail(g, LEASE_EBRANCHEXISTS, "branch %s already exists "
		    "in %s", name, g->workdir);
	else if (rc < 0)
		rc = gfail(g, LEASE_EGIT, "cannot create branch %s", name);
	git_reference_free(ref);
	git_commit_free(c);
	return rc;
}

int
lease_git_branch_exists(struct lease_git *g, const char *id)
{
	char name[LEASE_BRANCH_LEN + 1];
	git_reference *ref = NULL;
	int rc;

	assert(g != NULL && g->repo != NULL);
	if ((rc = lease_id_branch(name, id)) < 0)
		return rc;
	rc = git_branch_lookup(&ref, g->repo, name, GIT_BRANCH_LOCAL);
	git_reference_free(ref);
	if (rc == 0)
		return 1;
	if (rc == GIT_ENOTFOUND)
		return 0;
	return gfail(g, LEASE_EGIT, "cannot look up branch %s", name);
}

int
lease_git_branch_delete(struct lease_git *g, const char *id)
{
	char name[LEASE_BRANCH_LEN + 1];
	git_reference *ref = NULL;
	int rc, prev;

	assert(g != NULL && g->repo != NULL);
	if ((rc = lease_id_branch(name, id)) < 0)
		return rc;
	rc = git_branch_lookup(&ref, g->repo, name, GIT_BRANCH_LOCAL);
	if (rc == GIT_ENOTFOUND)
		return 0;
	if (rc < 0)
		return gfail(g, LEASE_EGIT, "cannot look up branch %s", name);
	/*
	 * git_branch_delete would also drop a branch.<name> config section
	 * (we never write one), and leaks in libgit2 1.5.1's config regex
	 * path: check the worktrees ourselves and delete the reference (and
	 * its reflog). The check opens worktrees of the operator's repo.
	 */
	prev = owner_off(g);
	rc = git_branch_is_checked_out(ref);
	owner_restore(g, prev);
	if (rc == 1) {
		git_reference_free(ref);
		snprintf(g->errmsg, sizeof g->errmsg, "branch %s is checked "
		    "out in a worktree", name);
		return LEASE_EBUSY;
	}
	rc = rc < 0 ? rc : git_reference_delete(ref);
	git_reference_free(ref);
	if (rc < 0)
		return gfail(g, LEASE_EGIT, "cannot delete branch %s", name);
	return 0;
}

int
lease_git_worktree_add(struct lease_git *g, const char *id, const char *path)
{
	char name[LEASE_BRANCH_LEN + 1];
	git_worktree_add_options o;
	git_reference *ref = NULL;
	git_worktree *wt = NULL;
	int rc, prev;

	assert(g != NULL && g->repo != NULL && path != NULL);
	if ((rc = lease_id_branch(name, id)) < 0)
		return rc;
	if ((rc = lease__fs_exists(path)) != 0) {
		snprintf(g->errmsg, sizeof g->errmsg, "%s: %s", path, rc > 0 ?
		    "worktree path already exists" : strerror(-rc));
		return rc > 0 ? LEASE_EEXIST : rc;
	}
	rc = git_branch_lookup(&ref, g->repo, name, GIT_BRANCH_LOCAL);
	if (rc == GIT_ENOTFOUND)
		return gfail(g, LEASE_ENOTFOUND, "no branch %s", name);
	if (rc < 0)
		return gfail(g, LEASE_EGIT, "cannot look up branch %s", name);
	git_worktree_add_options_init(&o, GIT_WORKTREE_ADD_OPTIONS_VERSION);
	o.ref = ref;
	/*
	 * Registered on the branch, nothing written: the result fills it
	 * (lease__git_worktree_checkout), so a running lease's disk is its
	 * workspace alone (issue 17: a checkout here doubled it).
	 */
	o.checkout_options.checkout_strategy = GIT_CHECKOUT_NONE;
	/* libgit2 opens the new worktree, whose common dir is the operator's */
	prev = owner_off(g);
	rc = git_worktree_add(&wt, g->repo, id, path, &o);
	owner_restore(g, prev);
	if (rc < 0)
		rc = gfail(g, LEASE_EGIT, "cannot add worktree %s", path);
	git_worktree_free(wt);
	git_reference_free(ref);
	return rc;
}

/* "<common dir>/worktrees/<id>" (malloc'd), the worktree's admin entry. */
static char *
admin_dir(struct lease_git *g, const char *id)
{
	const char *common = git_repository_commondir(g->repo);
	size_t n;
	char *p;

	if (common == NULL)
		return NULL;
	n = strlen(common) + strlen(id) + sizeof "/worktrees/";
	if ((p = malloc(n)) != NULL)
		snprintf(p, n, "%s%sworktrees/%s", common,
		    common[0] != '\0' && common[strlen(common) - 1] == '/' ?
		    "" : "/", id);
	return p;
}

int
lease_git_worktree_exists(struct lease_git *g, const char *id)
{
	char *admin;
	int rc;

	assert(g != NULL && g->repo != NULL);
	if (!lease_id_valid(id))
		return LEASE_EBADID;
	/* the entry itself, also one too broken for git_worktree_list */
	if ((admin = admin_dir(g, id)) == NULL)
		return -ENOMEM;
	rc = lease__fs_exists(admin);
	free(admin);
	if (rc < 0)
		return gfail(g, rc, "cannot look up worktree %s", id);
	return rc;
}

/*
 * Whether the admin entry at admin names path as its working tree: its
 * gitdir file holds "<path>/.git" (the path as given or with its parent
 * resolved). An entry without a gitdir file, or with an empty one (a crash
 * while git wrote it), is taken to be the one named by the lease's ID.
 */
static bool
admin_points_at(const char *admin, const char *path)
{
	char *file, *text = NULL, *slash, real[PATH_MAX], *parent;
	size_t len = 0, n;
	bool ours;

	if ((file = malloc(strlen(admin) + sizeof "/gitdir")) == NULL)
		return false;
	strcpy(file, admin);
	strcat(file, "/gitdir");
	if (lease__fs_read_capped(file, PATH_MAX, &text, &len) < 0) {
		ours = lease__fs_exists(file) == 0;
		free(file);
		return ours;
	}
	free(file);
	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '/'))
		text[--len] = '\0';
	if (len > 5 && strcmp(text + len - 5, "/.git") == 0)
		text[len -= 5] = '\0';
	/* empty: made and not yet written (git never leaves one so) */
	ours = len == 0 || strcmp(text, path) == 0;
	if (!ours && (parent = strdup(path)) != NULL) {
		/* the same place through a resolved parent directory */
		if ((slash = strrchr(parent, '/')) != NULL && slash != parent) {
			*slash = '\0';
			n = strlen(slash + 1);
			if (realpath(parent, real) != NULL &&
			    strlen(real) + 1 + n < sizeof real) {
				strcat(real, "/");
				strcat(real, slash + 1);
				ours = strcmp(text, real) == 0;
			}
		}
		free(parent);
	}
	free(text);
	return ours;
}

int
lease_git_worktree_remove(struct lease_git *g, const char *id,
    const char *path)
{
	git_worktree_prune_options o;
	git_worktree *wt = NULL;
	char *admin;
	int rc, prev;

	assert(g != NULL && g->repo != NULL && path != NULL);
	if ((rc = lease_git_worktree_exists(g, id)) <= 0)
		return rc;	/* absent (0) or an error */
	if ((admin = admin_dir(g, id)) == NULL)
		return -ENOMEM;
	if (!admin_points_at(admin, path)) {
		/* an operator's worktree that happens to carry this name */
		snprintf(g->errmsg, sizeof g->errmsg, "worktree %s of %s is "
		    "not corral's (its working tree is not %s): left alone",
		    id, g->workdir, path);
		free(admin);
		return LEASE_EBUSY;
	}
	git_worktree_prune_options_init(&o,
	    GIT_WORKTREE_PRUNE_OPTIONS_VERSION);
	/* Admin entry only: the caller removes the directory it created. */
	o.flags = GIT_WORKTREE_PRUNE_VALID | GIT_WORKTREE_PRUNE_LOCKED;
	prev = owner_off(g);
	rc = git_worktree_lookup(&wt, g->repo, id);
	if (rc == 0)
		rc = git_worktree_prune(wt, &o);
	owner_restore(g, prev);
	git_worktree_free(wt);
	/* an entry git cannot read (half written): ours, remove it as is */
	if (rc < 0 && (rc = lease__fs_rmtree(admin)) < 0)
		rc = gfail(g, LEASE_EGIT, "cannot prune worktree %s", id);
	else if (rc == 0 && (rc = lease__fs_exists(admin)) != 0)
		rc = rc > 0 ? gfail(g, LEASE_EGIT, "worktree %s: %s is still "
		    "there after pruning", id, admin) : rc;
	free(admin);
	return rc;
}

/*
 * The indexer counts objects in the progress it is given: appends and the
 * final commit must share one (a fresh one per call made commit see more
 * indexed than total objects as soon as the pack held a delta: "early
 * EOF").
 */
struct pack_ctx {
	git_odb_writepack *wp;
	git_indexer_progress stats;
};

static int
pack_cb(void *buf, size_t size, void *ud)
{
	struct pack_ctx *pc = ud;

	return pc->wp->append(pc->wp, buf, size, &pc->stats);
}

/*
 * Copy the commit, its tree and as much history as asked into dst's object
 * database (SPEC 6.4): a limited history is seed.c's, whose cost follows
 * the base tree; every ancestor is the packbuilder's, with deltas.
 */
static int
copy_objects(struct lease_git *g, const git_oid *base, git_repository *dst,
    unsigned long long history)
{
	git_packbuilder *pb = NULL;
	git_revwalk *walk = NULL;
	git_odb *odb = NULL;
	git_odb_writepack *wp = NULL;
	struct pack_ctx pc;
	int rc;

	if (history != LEASE_HISTORY_ALL)
		return lease__seed_objects(g->repo, base, history, dst,
		    g->errmsg, sizeof g->errmsg);
	memset(&pc, 0, sizeof pc);
	if ((rc = git_packbuilder_new(&pb, g->repo)) < 0 ||
	    (rc = git_revwalk_new(&walk, g->repo)) < 0 ||
	    (rc = git_revwalk_push(walk, base)) < 0 ||
	    (rc = git_packbuilder_insert_walk(pb, walk)) < 0 ||
	    (rc = git_repository_odb(&odb, dst)) < 0 ||
	    (rc = git_odb_write_pack(&wp, odb, NULL, NULL)) < 0)
		rc = gfail(g, LEASE_EGIT, "cannot copy objects");
	else if ((pc.wp = wp, rc = git_packbuilder_foreach(pb, pack_cb,
	    &pc)) < 0 || (rc = wp->commit(wp, &pc.stats)) < 0 ||
	    (rc = git_odb_refresh(odb)) < 0)
		rc = gfail(g, LEASE_EGIT, "cannot copy objects");
	if (wp != NULL)
		wp->free(wp);
	git_odb_free(odb);
	git_revwalk_free(walk);
	git_packbuilder_free(pb);
	return rc;
}

/*
 * A seeding that failed for want of space (the workspace's disk or the
 * state directory's filesystem filled while it was written): -ENOSPC,
 * naming the path, so the lease fails disk_full; else rc as it was.
 */
static int
seed_full(struct lease_git *g, int rc, int err, const char *path)
{
	const char *full = strerror(ENOSPC);
	char *msg;

	if (err != ENOSPC && strstr(g->errmsg, full) == NULL)
		return rc;
	if ((msg = strdup(g->errmsg)) == NULL)
		return -ENOSPC;
	if (snprintf(g->errmsg, sizeof g->errmsg, "%s: no space left while "
	    "seeding the workspace (%s)", path, msg) >= (int)sizeof g->errmsg)
		g->errmsg[sizeof g->errmsg - 1] = '\0';	/* cut, said */
	free(msg);
	return -ENOSPC;
}

int
lease__git_workspace_fill(struct lease_git *g, const char *oid_hex,
    const char *path, unsigned long long history)
{
	git_repository_init_options io;
	git_checkout_options co;
	git_repository *dst = NULL;
	git_config *cfg = NULL, *local = NULL;
	git_commit *c = NULL;
	int rc;

	assert(g != NULL && g->repo != NULL && path != NULL);
	if ((rc = lookup_commit(g, oid_hex, &c)) < 0)
		return rc;
	errno = 0;
	git_repository_init_options_init(&io,
	    GIT_REPOSITORY_INIT_OPTIONS_VERSION);
	io.flags = GIT_REPOSITORY_INIT_NO_REINIT;
	if (git_repository_init_ext(&dst, path, &io) < 0) {
		rc = gfail(g, LEASE_EGIT, "%s: cannot create repository",
		    path);
		goto out;
	}
	if ((rc = copy_objects(g, git_commit_id(c), dst, history)) < 0)
		goto out;
	if (git_repository_set_head_detached(dst, git_commit_id(c)) < 0) {
		rc = gfail(g, LEASE_EGIT, "%s: cannot detach HEAD", path);
		goto out;
	}
	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	co.checkout_strategy = GIT_CHECKOUT_FORCE;
	if (git_checkout_head(dst, &co) < 0) {
		rc = gfail(g, LEASE_EGIT, "%s: cannot check out the base",
		    path);
		goto out;
	}
	if (git_repository_config(&cfg, dst) < 0 ||
	    git_config_open_level(&local, cfg, GIT_CONFIG_LEVEL_LOCAL) < 0 ||
	    git_config_set_string(local, "core.hooksPath", "/dev/null") < 0 ||
	    git_config_set_string(local, "credential.helper", "") < 0) {
		rc = gfail(g, LEASE_EGIT, "%s: cannot write config", path);
		goto out;
	}
	rc = 0;
out:
	if (rc < 0)
		rc = seed_full(g, rc, errno, path);
	git_config_free(local);
	git_config_free(cfg);
	git_repository_free(dst);
	git_commit_free(c);
	return rc;
}

int
lease_git_workspace_seed(struct lease_git *g, const char *oid_hex,
    const char *path, unsigned long long history)
{
	git_commit *c = NULL;
	int rc;

	assert(g != NULL && g->repo != NULL && path != NULL);
	if ((rc = lookup_commit(g, oid_hex, &c)) < 0)
		return rc;	/* nothing made for a base that is not there */
	git_commit_free(c);
	if (mkdir(path, 0700) < 0) {
		rc = errno == EEXIST ? LEASE_EEXIST : -errno;
		snprintf(g->errmsg, sizeof g->errmsg, "%s: %s", path,
		    rc == LEASE_EEXIST ? "workspace already exists" :
		    strerror(errno));
		return rc;
	}
	return lease__git_workspace_fill(g, oid_hex, path, history);
}

/* Marked as another state directory's (a handle with an owner only)? */
static bool
foreign_branch(struct lease_git *g, const char *refname)
{
	char *owner;
	bool foreign;

	if (g->state == NULL || (owner = branch_owner(g, refname)) == NULL)
		return false;	/* unmarked: an older corral's, listed */
	foreign = strcmp(owner, g->state) != 0;
	free(owner);
	return foreign;
}

/* Is path under dir/worktrees/? */
static bool
in_worktrees(const char *path, const char *dir)
{
	size_t n = dir != NULL ? strlen(dir) : 0;

	return n > 0 && strncmp(path, dir, n) == 0 &&
	    strncmp(path + n, "/worktrees/", 11) == 0;
}

/* Registered at a path outside the owner's worktrees/ directory? */
static bool
foreign_worktree(struct lease_git *g, const char *name)
{
	git_worktree *wt = NULL;
	const char *path;
	bool foreign = false;

	if (g->state == NULL || git_worktree_lookup(&wt, g->repo, name) < 0)
		return false;
	if ((path = git_worktree_path(wt)) != NULL)
		foreign = !in_worktrees(path, g->state) &&
		    !in_worktrees(path, g->state_as);
	git_worktree_free(wt);
	return foreign;
}

int
lease_git_branches(struct lease_git *g, lease_git_name_cb cb, void *ud)
{
	git_branch_iterator *it = NULL;
	git_reference *ref;
	git_branch_t type;
	const char *name;
	size_t plen = strlen(LEASE_BRANCH_PREFIX);
	int grc, rc = 0;

	assert(g != NULL && g->repo != NULL && cb != NULL);
	if (git_branch_iterator_new(&it, g->repo, GIT_BRANCH_LOCAL) < 0)
		return gfail(g, LEASE_EGIT, "cannot list branches");
	while (rc == 0 && (grc = git_branch_next(&ref, &type, it)) == 0) {
		name = NULL;
		if (git_branch_name(&name, ref) == 0 &&
		    strncmp(name, LEASE_BRANCH_PREFIX, plen) == 0 &&
		    strchr(name + plen, '/') == NULL &&
		    !foreign_branch(g, git_reference_name(ref)))
			rc = cb(name + plen, ud);
		git_reference_free(ref);
	}
	git_branch_iterator_free(it);
	if (rc != 0)
		return rc;
	if (grc != GIT_ITEROVER)
		return gfail(g, LEASE_EGIT, "cannot list branches");
	return 0;
}

int
lease_git_worktrees(struct lease_git *g, lease_git_name_cb cb, void *ud)
{
	git_strarray names = { NULL, 0 };
	size_t i;
	int rc = 0;

	assert(g != NULL && g->repo != NULL && cb != NULL);
	if (git_worktree_list(&names, g->repo) < 0)
		return gfail(g, LEASE_EGIT, "cannot list worktrees");
	for (i = 0; i < names.count && rc == 0; i++) {
		if (!foreign_worktree(g, names.strings[i]))
			rc = cb(names.strings[i], ud);
	}
	git_strarray_dispose(&names);
	return rc;
}

int
lease_git_diffstat(struct lease_git *g, const char *from_hex,
    const char *to_hex, struct lease_diffstat *out)
{
	git_commit *a = NULL, *b = NULL;
	git_tree *ta = NULL, *tb = NULL;
	git_diff *diff = NULL;
	git_diff_stats *st = NULL;
	int rc;

	assert(g != NULL && g->repo != NULL && out != NULL);
	memset(out, 0, sizeof *out);
	if ((rc = lookup_commit(g, from_hex, &a)) < 0 ||
	    (rc = lookup_commit(g, to_hex, &b)) < 0)
		goto out;
	if (git_commit_tree(&ta, a) < 0 || git_commit_tree(&tb, b) < 0 ||
	    git_diff_tree_to_tree(&diff, g->repo, ta, tb, NULL) < 0 ||
	    git_diff_get_stats(&st, diff) < 0) {
		rc = gfail(g, LEASE_EGIT, "cannot diff %s..%s", from_hex,
		    to_hex);
		goto out;
	}
	out->files = git_diff_stats_files_changed(st);
	out->insertions = git_diff_stats_insertions(st);
	out->deletions = git_diff_stats_deletions(st);
	rc = 0;
out:
	git_diff_stats_free(st);
	git_diff_free(diff);
	git_tree_free(ta);
	git_tree_free(tb);
	git_commit_free(a);
	git_commit_free(b);
	return rc;
}

int
lease_git_read_blob(struct lease_git *g, const char *commit_hex,
    const char *path, size_t max, char **buf, size_t *len)
{
	git_commit *c = NULL;
	git_tree *t = NULL;
	git_tree_entry *e = NULL;
	git_blob *b = NULL;
	git_object_size_t size;
	int rc;

	assert(g != NULL && g->repo != NULL && path != NULL && buf != NULL);
	*buf = NULL;
	if (len != NULL)
		*len = 0;
	if ((rc = lookup_commit(g, commit_hex, &c)) < 0)
		goto out;
	if (git_commit_tree(&t, c) < 0) {
		rc = gfail(g, LEASE_EGIT, "%s: cannot read its tree",
		    commit_hex);
		goto out;
	}
	rc = git_tree_entry_bypath(&e, t, path);
	if (rc == GIT_ENOTFOUND) {
		snprintf(g->errmsg, sizeof g->errmsg, "%s: no %s", commit_hex,
		    path);
		rc = LEASE_ENOTFOUND;
		goto out;
	}
	if (rc < 0) {
		rc = gfail(g, LEASE_EGIT, "%s:%s", commit_hex, path);
		goto out;
	}
	/* A regular file only: never a symlink, a tree or a gitlink. */
	if (git_tree_entry_filemode(e) != GIT_FILEMODE_BLOB &&
	    git_tree_entry_filemode(e) != GIT_FILEMODE_BLOB_EXECUTABLE) {
		snprintf(g->errmsg, sizeof g->errmsg, "%s:%s is not a regular "
		    "file", commit_hex, path);
		rc = -EINVAL;
		goto out;
	}
	if (git_blob_lookup(&b, g->repo, git_tree_entry_id(e)) < 0) {
		rc = gfail(g, LEASE_EGIT, "%s:%s: cannot read", commit_hex,
		    path);
		goto out;
	}
	size = git_blob_rawsize(b);
	if (size > (git_object_size_t)max) {
		snprintf(g->errmsg, sizeof g->errmsg, "%s:%s is larger than "
		    "%zu bytes", commit_hex, path, max);
		rc = -EFBIG;
		goto out;
	}
	if ((*buf = malloc((size_t)size + 1)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	memcpy(*buf, git_blob_rawcontent(b), (size_t)size);
	(*buf)[size] = '\0';
	if (len != NULL)
		*len = (size_t)size;
	rc = 0;
out:
	git_blob_free(b);
	git_tree_entry_free(e);
	git_tree_free(t);
	git_commit_free(c);
	return rc;
}

/* ---- for the result files (lease_int.h) ---------------------------- */

git_repository *
lease__git_repo(struct lease_git *g)
{
	assert(g != NULL && g->repo != NULL);
	return g->repo;
}

int
lease__git_owner_off(const struct lease_git *g)
{
	assert(g != NULL);
	return owner_off(g);
}

void
lease__git_owner_restore(const struct lease_git *g, int prev)
{
	assert(g != NULL);
	owner_restore(g, prev);
}

int
lease__git_worktree_open(struct lease_git *g, const char *id,
    git_repository **out)
{
	git_worktree *wt = NULL;
	int rc, prev;

	assert(g != NULL && out != NULL);
	*out = NULL;
	if (git_worktree_lookup(&wt, g->repo, id) < 0)
		return LEASE_ESTALE;
	prev = owner_off(g);
	rc = git_repository_open_from_worktree(out, wt);
	owner_restore(g, prev);
	git_worktree_free(wt);
	return rc < 0 ? LEASE_ESTALE : 0;
}

int
lease__git_worktree_checkout(struct lease_git *g, const char *id,
    const git_oid *commit)
{
	git_checkout_options o;
	git_repository *wr = NULL;
	git_commit *cm = NULL;
	int rc, prev;

	if ((rc = lease__git_worktree_open(g, id, &wr)) < 0)
		return rc;
	git_checkout_options_init(&o, GIT_CHECKOUT_OPTIONS_VERSION);
	/* the first result fills an empty worktree: every file is missing */
	o.checkout_strategy = GIT_CHECKOUT_FORCE |
	    GIT_CHECKOUT_REMOVE_UNTRACKED | GIT_CHECKOUT_RECREATE_MISSING;
	prev = owner_off(g);
	if (git_commit_lookup(&cm, wr, commit) < 0 ||
	    git_checkout_tree(wr, (git_object *)cm, &o) < 0)
		rc = gfail(g, LEASE_EGIT, "checkout in the review worktree");
	owner_restore(g, prev);
	git_commit_free(cm);
	git_repository_free(wr);
	return rc;
}
