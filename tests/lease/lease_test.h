/*
 * lease_test.h: helpers shared by the lease suites (header-only, since the
 * test build compiles only test_*.c here): fresh git repositories made with
 * libgit2, whole-file comparison, private mounts for read-only and full
 * filesystems, and a child process that must die at a fault point.
 */
#ifndef CORRAL_LEASE_TEST_H
#define CORRAL_LEASE_TEST_H

#include <check.h>
#include <errno.h>
#include <git2.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lease/lease.h"
#include "support/check_util.h"

/* A malloc'd formatted string with two string arguments (aborts on OOM). */
static inline char *
lt_fmt(const char *fmt, const char *a, const char *b)
{
	int n = snprintf(NULL, 0, fmt, a, b);
	char *out;

	if (n < 0 || (out = malloc((size_t)n + 1)) == NULL)
		abort();
	snprintf(out, (size_t)n + 1, fmt, a, b);
	return out;
}

/* Write rel (under dir) with text, creating parent directories. */
static inline void
lt_write(const char *dir, const char *rel, const char *text)
{
	char *p = lt_fmt("%s/%s", dir, rel);
	size_t i;

	/* mkdir -p the parents inside dir */
	for (i = strlen(dir) + 1; p[i] != '\0'; i++) {
		if (p[i] != '/')
			continue;
		p[i] = '\0';
		ck_assert(mkdir(p, 0755) == 0 || errno == EEXIST);
		p[i] = '/';
	}
	ck_assert_int_eq(cu_write_file(p, text, strlen(text)), 0);
	free(p);
}

/*
 * Commit every file of the working directory of repo on HEAD with message
 * msg (libgit2 only: index add_all, write tree, commit). Returns the new
 * commit's hex ID in oid_hex.
 */
static inline void
lt_commit_all(git_repository *repo, const char *msg, char oid_hex[41])
{
	git_index *idx;
	git_oid tree_id, commit_id, parent_id;
	git_tree *tree;
	git_signature *sig;
	git_commit *parent = NULL;
	const git_commit *parents[1];
	int nparents = 0;

	ck_assert_int_eq(git_repository_index(&idx, repo), 0);
	ck_assert_int_eq(git_index_add_all(idx, NULL, 0, NULL, NULL), 0);
	ck_assert_int_eq(git_index_write(idx), 0);
	ck_assert_int_eq(git_index_write_tree(&tree_id, idx), 0);
	ck_assert_int_eq(git_tree_lookup(&tree, repo, &tree_id), 0);
	ck_assert_int_eq(git_signature_new(&sig, "Test", "test@example.com",
	    1700000000, 0), 0);
	if (git_reference_name_to_id(&parent_id, repo, "HEAD") == 0) {
		ck_assert_int_eq(git_commit_lookup(&parent, repo, &parent_id),
		    0);
		parents[0] = parent;
		nparents = 1;
	}
	ck_assert_int_eq(git_commit_create(&commit_id, repo, "HEAD", sig, sig,
	    NULL, msg, tree, (size_t)nparents, parents), 0);
	git_oid_tostr(oid_hex, 41, &commit_id);
	git_commit_free(parent);
	git_signature_free(sig);
	git_tree_free(tree);
	git_index_free(idx);
}

/*
 * A fresh repository at dir/repo on branch main with three commits
 * (README, src/a.c, src/b.c). c[i] get the commit IDs. Returns the path.
 */
static inline char *
lt_make_repo(const char *dir, char c[3][41])
{
	char *path = lt_fmt("%s/%s", dir, "repo");
	git_repository_init_options o;
	git_repository *repo;

	ck_assert_int_eq(git_repository_init_options_init(&o,
	    GIT_REPOSITORY_INIT_OPTIONS_VERSION), 0);
	o.flags = GIT_REPOSITORY_INIT_MKPATH;
	o.initial_head = "main";
	ck_assert_int_eq(git_repository_init_ext(&repo, path, &o), 0);
	lt_write(path, "README", "hello\n");
	lt_commit_all(repo, "first", c[0]);
	lt_write(path, "src/a.c", "int a;\n");
	lt_commit_all(repo, "second", c[1]);
	lt_write(path, "src/b.c", "int b;\n");
	lt_write(path, "README", "hello again\n");
	lt_commit_all(repo, "third", c[2]);
	git_repository_free(repo);
	return path;
}

/* lease_git_open that must succeed (the message on failure). */
static inline struct lease_git *
lt_git_open(const char *dir)
{
	struct lease_git *g;
	int rc = lease_git_open(&g, dir);

	ck_assert_msg(rc == 0, "open %s: %d %s", dir, rc, lease_git_errmsg(g));
	return g;
}

/* The whole file, for byte-for-byte "unchanged" checks. */
static inline char *
lt_slurp(const char *path, size_t *len)
{
	char *b = cu_read_file(path, len);

	ck_assert_ptr_nonnull(b);
	return b;
}

/*
 * Enter a private mount namespace (we are a forked Check child) and mount
 * a tmpfs of size bytes at dir.
 */
static inline void
lt_private_tmpfs(const char *dir, const char *opts)
{
	ck_assert_int_eq(unshare(CLONE_NEWNS), 0);
	ck_assert_int_eq(mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL),
	    0);
	ck_assert_int_eq(mount("tmpfs", dir, "tmpfs", 0, opts), 0);
}

static inline void
lt_remount_ro(const char *dir)
{
	ck_assert_int_eq(mount("tmpfs", dir, "tmpfs", MS_REMOUNT | MS_RDONLY,
	    NULL), 0);
}

/* Wait for pid; return its exit code, or 128 + signal. */
static inline int
lt_wait(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		ck_assert_int_eq(errno, EINTR);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Open the journal at db, or fail the test with its message. */
static inline struct lease_store *
lt_store_open(const char *db)
{
	struct lease_store *s;
	int rc = lease_store_open(&s, db);

	ck_assert_msg(rc == 0, "open: %s", lease_store_errmsg(s));
	return s;
}

#endif
