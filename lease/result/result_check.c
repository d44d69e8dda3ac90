/*
 * result_check.c: the declared checks on a materialised result (SPEC
 * 7.3): each check gets a fresh copy of the result tree, dated by the
 * base commit, run through the injected runner (the exec zone); its
 * outcome, log and changed inputs go into a receipt and the outcomes into
 * the result JSON.
 */
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lease/result/result_int.h"

#define CHANGED_INPUTS 16	/* changed inputs listed per check */

static const char *const check_names[LEASE_CHECK_STATUS_COUNT] = {
	"pass", "fail", "error", "unavailable",
};

const char *
lease_result_check_status_name(enum lease_check_status st)
{
	return (unsigned)st < LEASE_CHECK_STATUS_COUNT ? check_names[st] : "?";
}

/* Every copied file and directory carries the base commit's time. */
static void
stamp(int dirfd, const char *name, int64_t epoch)
{
	struct timespec ts[2];

	ts[0].tv_sec = ts[1].tv_sec = (time_t)epoch;
	ts[0].tv_nsec = ts[1].tv_nsec = 0;
	if (utimensat(dirfd, name, ts, AT_SYMLINK_NOFOLLOW) < 0) {
		/* a time is a nicety: the copy is still right */
	}
}

/* Write tree into the directory dirfd (a fresh copy for a check). */
static int
write_tree(struct lease__rctx *c, git_tree *t, int dirfd, int depth,
    int64_t epoch)
{
	git_repository *repo = lease__git_repo(c->g);
	const git_tree_entry *e;
	git_blob *b = NULL;
	git_tree *sub = NULL;
	const char *name;
	size_t i, off;
	ssize_t k;
	int fd, rc = 0;

	if (depth > 256)
		return -ELOOP;
	for (i = 0; rc == 0 && i < git_tree_entrycount(t); i++) {
		e = git_tree_entry_byindex(t, i);
		name = git_tree_entry_name(e);
		switch (git_tree_entry_filemode(e)) {
		case GIT_FILEMODE_TREE:
			if (git_tree_lookup(&sub, repo, git_tree_entry_id(e)) <
			    0)
				return lease__rctx_gitfail(c, LEASE_EGIT,
				    "tree");
			if (mkdirat(dirfd, name, 0755) < 0 ||
			    (fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC)) < 0) {
				rc = -errno;
			} else {
				rc = write_tree(c, sub, fd, depth + 1, epoch);
				close(fd);
			}
			git_tree_free(sub);
			stamp(dirfd, name, epoch);
			break;
		case GIT_FILEMODE_BLOB:
		case GIT_FILEMODE_BLOB_EXECUTABLE:
		case GIT_FILEMODE_LINK:
			if (git_blob_lookup(&b, repo, git_tree_entry_id(e)) < 0)
				return lease__rctx_gitfail(c, LEASE_EGIT,
				    "blob");
			if (git_tree_entry_filemode(e) == GIT_FILEMODE_LINK) {
				char target[4097];
				size_t n = (size_t)git_blob_rawsize(b);

				if (n >= sizeof target) {
					rc = -ENAMETOOLONG;
				} else {
					memcpy(target, git_blob_rawcontent(b),
					    n);
					target[n] = '\0';
					if (symlinkat(target, dirfd, name) < 0)
						rc = -errno;
				}
				git_blob_free(b);
				stamp(dirfd, name, epoch);
				break;
			}
			fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL |
			    O_NOFOLLOW | O_CLOEXEC, git_tree_entry_filemode(e)
			    == GIT_FILEMODE_BLOB_EXECUTABLE ? 0755 : 0644);
			if (fd < 0) {
				rc = -errno;
				git_blob_free(b);
				break;
			}
			for (off = 0; off < (size_t)git_blob_rawsize(b);
			    off += (size_t)k) {
				k = write(fd, (const char *)
				    git_blob_rawcontent(b) + off,
				    (size_t)git_blob_rawsize(b) - off);
				if (k <= 0) {
					rc = -EIO;
					break;
				}
			}
			close(fd);
			git_blob_free(b);
			stamp(dirfd, name, epoch);
			break;
		case GIT_FILEMODE_COMMIT:
			if (mkdirat(dirfd, name, 0755) < 0)
				rc = -errno;
			stamp(dirfd, name, epoch);
			break;
		default:
			break;
		}
	}
	return rc;
}

/* A fresh copy of the result tree at path, dated epoch. */
static int
copy_tree(struct lease__rctx *c, const char *tree_hex, const char *path,
    int64_t epoch)
{
	git_tree *t = NULL;
	git_oid oid;
	int fd, rc;

	if ((rc = lease__fs_rmtree(path)) < 0)
		return rc;
	if (mkdir(path, 0755) < 0)
		return -errno;
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) < 0)
		return -errno;
	if (git_oid_fromstr(&oid, tree_hex) < 0 ||
	    git_tree_lookup(&t, lease__git_repo(c->g), &oid) < 0)
		rc = lease__rctx_gitfail(c, LEASE_EGIT, "result tree");
	else
		rc = write_tree(c, t, fd, 0, epoch);
	git_tree_free(t);
	close(fd);
	if (rc == 0)
		stamp(AT_FDCWD, path, epoch);
	return rc;
}

static int64_t
base_time(struct lease__rctx *c)
{
	git_commit *cm = NULL;
	git_oid oid;
	int64_t t = 0;

	if (c->rec.base != NULL && git_oid_fromstr(&oid, c->rec.base) == 0 &&
	    git_commit_lookup(&cm, lease__git_repo(c->g), &oid) == 0)
		t = (int64_t)git_commit_time(cm);
	git_commit_free(cm);
	return t;
}

static json_t *
argv_json(char *const *argv)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a != NULL && argv != NULL && argv[i] != NULL; i++)
		json_array_append_new(a, lease__gate_json_bytes(argv[i],
		    strlen(argv[i])));
	return a;
}

static int
run_one(struct lease__rctx *c, size_t i, const char *tree, char *log,
    json_t *all)
{
	const struct lease_check *ck = &c->pol.checks[i];
	struct lease_check_outcome oc;
	struct lease_check_run run;
	json_t *inputs = json_array(), *e;
	char *dir, *base, name[32], why[600];
	bool independent = true;
	size_t k, n = 0;
	int rc;

	for (k = 0; c->m != NULL && k < c->m->nfiles; k++) {
		if (!lease_gate_check_input(ck, c->m->files[k].path))
			continue;
		independent = false;
		if (n++ < CHANGED_INPUTS)
			json_array_append_new(inputs,
			    json_string(c->m->files[k].path));
	}
	memset(&oc, 0, sizeof oc);
	oc.exit_code = -1;
	/* In the lease's own directory, never a machine-wide one. */
	snprintf(name, sizeof name, "checks/%zu", i);
	base = lease__rctx_path(c, "checks");
	dir = lease__rctx_path(c, name);
	if (base == NULL || dir == NULL) {
		free(base);
		free(dir);
		json_decref(inputs);
		return -ENOMEM;
	}
	if (mkdir(base, 0755) < 0 && errno != EEXIST) {
		oc.status = LEASE_CHECK_ERROR;
		snprintf(oc.detail, sizeof oc.detail, "%s: %s", base,
		    strerror(errno));
	} else if (c->run == NULL) {
		oc.status = LEASE_CHECK_UNAVAILABLE;
		snprintf(oc.detail, sizeof oc.detail, "no exec zone in this "
		    "build");
	} else if ((rc = copy_tree(c, tree, dir, base_time(c))) < 0) {
		if (lease__result_disk_full(c, rc))
			goto full;
		oc.status = LEASE_CHECK_ERROR;
		snprintf(oc.detail, sizeof oc.detail, "cannot copy the result "
		    "tree: %s", rc > -4096 ? strerror(-rc) : "libgit2");
	} else {
		memset(&run, 0, sizeof run);
		run.id = c->id;
		run.check = ck;
		run.dir = dir;
		run.source_date_epoch = base_time(c);
		run.log = log;
		run.log_max = LEASE_RESULT_LOG_MAX;
		if ((rc = c->run(&run, &oc, c->ud)) < 0) {
			if (lease__result_disk_full(c, rc))
				goto full;
			oc.status = LEASE_CHECK_ERROR;
			snprintf(oc.detail, sizeof oc.detail, "the runner "
			    "failed: %s", rc > -4096 ? strerror(-rc) :
			    "error");
		}
		if (oc.log_len > LEASE_RESULT_LOG_MAX)
			oc.log_len = LEASE_RESULT_LOG_MAX;
	}
	/*
	 * The copy goes now; if it cannot, that is said in the receipt and
	 * the lease's cleanup stays failed until reject, gc or reconcile
	 * remove the lease's directory (SPEC 9.2).
	 */
	if ((rc = lease__fs_rmtree(dir)) < 0) {
		snprintf(why, sizeof why, "check copy %s not removed: %s", dir,
		    strerror(-rc));
		if (lease_record_set_cleanup(c->s, c->id, LEASE_CLEANUP_FAILED,
		    why) < 0) {
			/* the receipt below still says so */
		}
	}
	free(dir);
	free(base);
	e = json_pack("{s:s, s:o, s:s, s:i, s:i, s:I, s:b, s:o, s:b, s:b, "
	    "s:s}", "name", ck->name ? ck->name : "check", "argv",
	    argv_json(ck->argv), "status",
	        lease_result_check_status_name(oc.status),
	    "exit", oc.exit_code, "signal", oc.signal, "duration_ms",
	    (json_int_t)oc.duration_ms, "independent", independent,
	    "changed_inputs", inputs, "faketime", oc.faketime,
	    "log_truncated", oc.log_truncated, "detail", oc.detail);
	if (e == NULL)
		return -ENOMEM;
	json_array_append(all, e);
	json_object_set_new(e, "log", lease__gate_json_bytes(log, oc.log_len));
	json_object_set_new(e, "copy_removed", json_boolean(rc >= 0));
	if (rc < 0)
		json_object_set_new(e, "copy_error", json_string(why));
	json_object_set_new(e, "commit", lease__result_str(lease__rctx_str(c,
	    "commit")));
	return lease__rctx_receipt(c, "check", e);
full:
	/*
	 * No outcome: the finish is tried again once space returns (it
	 * makes a fresh result directory, this copy with it).
	 */
	if (lease__fs_rmtree(dir) < 0) {
		/* removed with the result directory on the retry */
	}
	free(dir);
	free(base);
	json_decref(inputs);
	return -ENOSPC;
}

int
lease__result_checks(struct lease__rctx *c)
{
	const char *tree = lease__rctx_str(c, "tree");
	json_t *all, *e;
	char *log;
	size_t i;
	int rc = 0;

	if (tree == NULL)
		return LEASE_ENORESULT;
	if ((all = json_array()) == NULL ||
	    (log = malloc(LEASE_RESULT_LOG_MAX)) == NULL) {
		json_decref(all);
		return -ENOMEM;
	}
	for (i = 0; rc == 0 && i < c->pol.nchecks; i++)
		rc = run_one(c, i, tree, log, all);
	free(log);
	/* the result JSON keeps the outcomes; the logs live in receipts */
	json_array_foreach(all, i, e)
		json_object_del(e, "log");
	lease__result_set(c->result, "checks", all);
	/* inside an open move of corral/<id> the JSON goes with its close */
	if (rc == 0 && c->move_seq == 0)
		rc = lease__rctx_save(c);
	return rc;
}
