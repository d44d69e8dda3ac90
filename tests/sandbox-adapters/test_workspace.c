/*
 * test_workspace.c: the bounded workspace (SPEC 8.4) and safe removal
 * (SPEC 9.3; SANDBOX.md 5.d). A real loop-mounted ext4 image is filled by
 * a sandboxed process until ENOSPC, then until its inodes run out; hostile
 * trees made by a real sandboxed process (chmod 000 directories, FIFOs,
 * sockets, symlinks to host paths, symlink loops, deep nesting) and a bind
 * mount inside are removed without following or crossing anything: the
 * host canaries are checked afterwards.
 */
#include <check.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/wait.h>

#include "sbx_test.h"

Suite *workspace_suite(void);

static void
zone(const struct st_lease *l, const char *ws, const char *script,
    struct sbx_exec_result *res)
{
	char *cmd[] = { "/bin/sh", "-c", (char *)script, NULL };
	struct sbx_exec_opts o = { 1 << 16, 60000, -1 };
	struct sbx_request r;
	struct sbx_plan *p = NULL;
	int rc;

	st_exec_req(&r, l, cmd);
	r.workspace = ws;
	ck_assert_int_eq(sbx_bwrap_exec_plan(&r, &p), 0);
	rc = sbx_exec_run(p, &o, res);
	ck_assert_msg(rc == 0, "exec: %s", sbx_strerror(rc));
	sbx_plan_free(p);
}

static char *
path2(const char *a, const char *b)
{
	char *p;

	ck_assert_int_gt(asprintf(&p, "%s/%s", a, b), 0);
	return p;
}

START_TEST(test_workspace_bounds)
{
	struct sbx_exec_result res;
	struct st_lease l;
	struct statvfs vfs;
	struct stat sb;
	char *dir, *img, *lf, id[64];

	st_lease_init(&l, "ws-bound");
	snprintf(id, sizeof id, "test-ws-%d", (int)getpid());
	dir = path2(l.ws, "work");
	img = path2(l.ws, "work.img");
	ck_assert_int_eq(sbx_workspace_mount(id, dir, 8ull << 20, 128, l.uid,
	    l.gid), 0);
	ck_assert(sbx_workspace_mounted(dir));
	/* A second mount on it is refused. */
	ck_assert_int_eq(sbx_workspace_mount(id, dir, 8ull << 20, 128, l.uid,
	    l.gid), -EBUSY);
	ck_assert_int_eq(stat(dir, &sb), 0);
	ck_assert_uint_eq(sb.st_uid, l.uid);
	ck_assert_uint_eq(sb.st_mode & 07777, 0700);
	lf = path2(dir, "lost+found");
	ck_assert_int_ne(stat(lf, &sb), 0);
	free(lf);
	ck_assert_int_eq(stat(img, &sb), 0);
	ck_assert_uint_eq(sb.st_uid, 0);
	ck_assert_uint_eq(sb.st_mode & 0777, 0600);
	ck_assert_int_eq(statvfs(dir, &vfs), 0);
	ck_assert(vfs.f_flag & ST_NOSUID);
	ck_assert(vfs.f_flag & ST_NODEV);

	/* Bytes: a sandboxed writer meets ENOSPC near 8 MiB. */
	zone(&l, dir, "head -c 64M /dev/zero > /work/big; echo rc=$?; "
	    "ls -l /work/big", &res);
	ck_assert_msg(strstr(res.err, "No space left") != NULL, "%s",
	    res.err);
	sbx_exec_result_clear(&res);
	lf = path2(dir, "big");
	ck_assert_int_eq(stat(lf, &sb), 0);
	ck_assert_int_lt(sb.st_size, 8ll << 20);
	ck_assert_int_gt(sb.st_size, 4ll << 20);
	ck_assert_int_eq(unlink(lf), 0);
	free(lf);

	/* Inodes: many small files stop at the inode count. */
	zone(&l, dir, "i=0; while touch /work/f$i 2>/dev/null; do "
	    "i=$((i+1)); [ $i -gt 5000 ] && break; done; echo files=$i", &res);
	ck_assert_ptr_nonnull(strstr(res.out, "files="));
	ck_assert_int_lt(atoi(strstr(res.out, "files=") + 6), 300);
	ck_assert_int_gt(atoi(strstr(res.out, "files=") + 6), 50);
	sbx_exec_result_clear(&res);
	ck_assert_int_eq(statvfs(dir, &vfs), 0);
	ck_assert_uint_eq(vfs.f_favail, 0);

	/* Teardown: unmounted, image and mount point gone; idempotent. */
	ck_assert_int_eq(sbx_workspace_release(dir), 0);
	ck_assert(!sbx_workspace_mounted(dir));
	ck_assert_int_ne(stat(dir, &sb), 0);
	ck_assert_int_ne(stat(img, &sb), 0);
	ck_assert_int_eq(sbx_workspace_umount(dir), 0);
	ck_assert_int_eq(sbx_workspace_release(dir), 0);
	/* Bad requests. */
	ck_assert_int_eq(sbx_workspace_mount(id, "rel", 8ull << 20, 128, l.uid,
	    l.gid), -EINVAL);
	ck_assert_int_eq(sbx_workspace_mount(id, dir, 8ull << 20, 128, 0, 0),
	    -EINVAL);
	ck_assert_int_eq(sbx_workspace_mount("a/b", dir, 8ull << 20, 128,
	    l.uid, l.gid), -EINVAL);
	ck_assert_int_eq(sbx_workspace_mount(id, dir, 1024, 128, l.uid, l.gid),
	    -EINVAL);
	free(dir);
	free(img);
	st_lease_fini(&l);
}
END_TEST

/* An image left behind is never reused: the next mount refuses. */
START_TEST(test_workspace_no_reuse)
{
	struct st_lease l;
	char *dir, *img, id[64];
	struct stat sb;

	st_lease_init(&l, "ws-reuse");
	snprintf(id, sizeof id, "test-reuse-%d", (int)getpid());
	dir = path2(l.ws, "work");
	img = path2(l.ws, "work.img");
	ck_assert_int_eq(cu_write_file(img, "planted", 7), 0);
	ck_assert_int_eq(sbx_workspace_mount(id, dir, 4ull << 20, 64, l.uid,
	    l.gid), -EEXIST);
	ck_assert(!sbx_workspace_mounted(dir));
	ck_assert_int_ne(stat(dir, &sb), 0);
	ck_assert_int_eq(unlink(img), 0);
	free(dir);
	free(img);
	st_lease_fini(&l);
}
END_TEST

/*
 * A host canary directory with a file "keep" (returned), and an empty
 * directory "tree" in l's workspace owned by the lease uid.
 */
static char *
canary_tree(const struct st_lease *l, char **keep, char **tree)
{
	char *canary = cu_tmpdir("canary");

	*keep = path2(canary, "keep");
	ck_assert_int_eq(cu_write_file(*keep, "keep", 4), 0);
	*tree = path2(l->ws, "tree");
	ck_assert_int_eq(mkdir(*tree, 0700), 0);
	ck_assert_int_eq(chown(*tree, l->uid, l->gid), 0);
	return canary;
}

/* A hostile tree, made by the sandboxed agent itself. */
static const char hostile[] =
    "cd /work || exit 1\n"
    "mkdir -p a/b/c && echo x > a/b/c/f && chmod 000 a/b/c a/b a\n"
    "mkdir locked && touch locked/x && chmod 000 locked\n"
    "touch f000 && chmod 000 f000\n"
    "mkfifo fifo\n"
    "python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); "
    "s.bind(\"/work/sock\")'\n"
    "ln -s /etc etc\n"
    "ln -s \"$CANARY\" canary-dir\n"
    "ln -s \"$CANARY/keep\" canary-file\n"
    "ln -s . loop\n"
    "ln -s loop2 loop1; ln -s loop1 loop2\n"
    "d=deep; i=0; while [ $i -lt 200 ]; do mkdir $d/n 2>/dev/null || "
    "mkdir -p $d; d=$d/n; i=$((i+1)); done; chmod 000 deep\n"
    "mkdir mnt\n"
    "echo made\n";

START_TEST(test_workspace_rmtree_hostile)
{
	struct sbx_exec_result res;
	struct st_lease l;
	char *canary, *keep, *tree, *script, *mnt, *inside;
	struct stat sb;

	st_lease_init(&l, "ws-hostile");
	canary = canary_tree(&l, &keep, &tree);
	ck_assert_int_gt(asprintf(&script, "CANARY=%s\n%s", canary, hostile),
	    0);
	zone(&l, tree, script, &res);
	ck_assert_msg(strstr(res.out, "made") != NULL, "st %d out [%s] err "
	    "[%s]", res.wstatus, res.out, res.err);
	sbx_exec_result_clear(&res);
	/* And a bind mount inside, from the host: a mount to never cross. */
	mnt = path2(tree, "mnt");
	ck_assert_int_eq(mount(canary, mnt, NULL, MS_BIND, NULL), 0);
	inside = path2(mnt, "keep");
	ck_assert_int_eq(stat(inside, &sb), 0);

	ck_assert_int_eq(sbx_workspace_rmtree_safe(tree), -EXDEV);
	/* The mount and what is under it are untouched... */
	ck_assert_int_eq(stat(inside, &sb), 0);
	/* ...everything else is gone, symlink targets intact. */
	ck_assert_int_eq(stat(keep, &sb), 0);
	ck_assert_int_eq(stat("/etc/passwd", &sb), 0);
	{
		char *a = path2(tree, "a"), *f = path2(tree, "fifo");

		ck_assert_int_ne(lstat(a, &sb), 0);
		ck_assert_int_ne(lstat(f, &sb), 0);
		free(a);
		free(f);
	}
	ck_assert_int_eq(umount2(mnt, 0), 0);
	ck_assert_int_eq(sbx_workspace_rmtree_safe(tree), 0);
	ck_assert_int_ne(lstat(tree, &sb), 0);
	ck_assert_int_eq(stat(keep, &sb), 0);
	/* Idempotent. */
	ck_assert_int_eq(sbx_workspace_rmtree_safe(tree), 0);
	free(inside);
	free(mnt);
	free(script);
	free(tree);
	cu_rmrf(canary);
	free(canary);
	free(keep);
	st_lease_fini(&l);
}
END_TEST

START_TEST(test_workspace_rmtree_edges)
{
	char *d = cu_tmpdir("rm-edges"), *link, *file, *sub;
	struct stat sb;

	ck_assert_int_eq(sbx_workspace_rmtree_safe("/"), -EINVAL);
	ck_assert_int_eq(sbx_workspace_rmtree_safe("relative"), -EINVAL);
	ck_assert_int_eq(sbx_workspace_rmtree_safe(NULL), -EINVAL);
	sub = path2(d, "absent");
	ck_assert_int_eq(sbx_workspace_rmtree_safe(sub), 0);
	free(sub);
	/* A symlink given as the path: only the link goes. */
	link = path2(d, "link");
	ck_assert_int_eq(symlink("/etc", link), 0);
	ck_assert_int_eq(sbx_workspace_rmtree_safe(link), 0);
	ck_assert_int_ne(lstat(link, &sb), 0);
	ck_assert_int_eq(stat("/etc/passwd", &sb), 0);
	/* A file. */
	file = path2(d, "file");
	ck_assert_int_eq(cu_write_file(file, "x", 1), 0);
	ck_assert_int_eq(sbx_workspace_rmtree_safe(file), 0);
	ck_assert_int_ne(lstat(file, &sb), 0);
	/* A mount point itself is refused until unmounted. */
	sub = path2(d, "m");
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	ck_assert_int_eq(mount("none", sub, "tmpfs", 0, "size=1m"), 0);
	ck_assert_int_eq(cu_write_file(file, "x", 1), 0);
	ck_assert_int_eq(sbx_workspace_rmtree_safe(sub), -EXDEV);
	ck_assert_int_eq(umount2(sub, 0), 0);
	/* Trailing slashes. */
	{
		char *slash;

		ck_assert_int_gt(asprintf(&slash, "%s//", d), 0);
		ck_assert_int_eq(sbx_workspace_rmtree_safe(slash), 0);
		free(slash);
	}
	ck_assert_int_ne(lstat(d, &sb), 0);
	free(sub);
	free(file);
	free(link);
	free(d);
}
END_TEST

/*
 * A tree 10,000 levels deep of 255-byte names, made by the sandboxed
 * agent, some levels chmod 000 or 0500, symlinks out at the bottom, and a
 * wide level of non-empty directories: removed with the fd limit at 32
 * (the walk holds two fds, whatever the depth), the links' targets intact.
 */
static const char deep_py[] =
    "import os\n"
    "os.chdir('/work')\n"
    "for i in range(400):\n"
    "    os.mkdir('w%d' % i)\n"
    "    open('w%d/f' % i, 'w').close()\n"
    "N = 10000\n"
    "name = lambda i: ('d%05d' % i).ljust(255, 'x')\n"
    "for i in range(N):\n"
    "    os.mkdir(name(i))\n"
    "    os.chdir(name(i))\n"
    "open('leaf', 'w').write('x')\n"
    "os.symlink('/etc', 'etc')\n"
    "os.symlink(os.environ['CANARY'], 'canary')\n"
    "for i in range(N - 1, -1, -1):\n"
    "    os.chdir('..')\n"
    "    if i % 997 == 0:\n"
    "        os.chmod(name(i), 0)\n"
    "    elif i % 101 == 0:\n"
    "        os.chmod(name(i), 0o500)\n"
    "print('deep', N)\n";

START_TEST(test_workspace_rmtree_deep)
{
	struct sbx_exec_result res;
	struct st_lease l;
	struct rlimit low, was;
	char *canary, *keep, *tree, *script;
	struct stat sb;

	st_lease_init(&l, "ws-deep");
	canary = canary_tree(&l, &keep, &tree);
	ck_assert_int_gt(asprintf(&script, "CANARY=%s python3 - <<'PY'\n%sPY\n",
	    canary, deep_py), 0);
	zone(&l, tree, script, &res);
	ck_assert_msg(strstr(res.out, "deep 10000") != NULL, "st %d out [%s] "
	    "err [%s]", res.wstatus, res.out, res.err);
	sbx_exec_result_clear(&res);

	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &was), 0);
	low.rlim_cur = 32;
	low.rlim_max = was.rlim_max;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	ck_assert_int_eq(sbx_workspace_rmtree_safe(tree), 0);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &was), 0);
	ck_assert_int_ne(lstat(tree, &sb), 0);
	ck_assert_int_eq(stat(keep, &sb), 0);
	ck_assert_int_eq(stat("/etc/passwd", &sb), 0);
	free(script);
	free(tree);
	cu_rmrf(canary);
	free(canary);
	free(keep);
	st_lease_fini(&l);
}
END_TEST

/*
 * Sparse images never overcommit: a lease whose limit the free space
 * covers only if the live leases' images never grow is refused, by name,
 * before its image exists.
 */
START_TEST(test_workspace_no_overcommit)
{
	struct sbx_limits lim;
	char *d = cu_tmpdir("ws-room"), *leases = path2(d, "leases");
	char *a = path2(leases, "a"), *b = path2(leases, "b");
	char *aimg = path2(a, "work.img"), *ws = path2(b, "work");
	char *img = path2(b, "work.img"), *seed = path2(b, "work.seed");
	char err[512] = "";
	struct stat sb;
	int fd;

	ck_assert_int_eq(mount("none", d, "tmpfs", 0, "size=64m"), 0);
	ck_assert_int_eq(mkdir(leases, 0700), 0);
	ck_assert_int_eq(mkdir(a, 0700), 0);
	ck_assert_int_eq(mkdir(b, 0700), 0);
	ck_assert_int_eq(mkdir(ws, 0700), 0);
	/* a live lease's image of 40 MiB, nothing written in it yet */
	fd = open(aimg, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 40 << 20), 0);
	close(fd);
	memset(&lim, 0, sizeof lim);
	lim.disk = 32ull << 20;	/* fits the 64 MiB free, not beside a's */
	lim.inodes = 1024;
	ck_assert_int_eq(sbx__workspace_bound("b", ws, &lim, 65534, 65534,
	    NULL, err, sizeof err), -ENOSPC);
	ck_assert_msg(strstr(err, "may still take 40 MiB") != NULL &&
	    strstr(err, "[limits] disk") != NULL, "%s", err);
	/* nothing was made: the seed is where it was, no image */
	ck_assert_int_eq(lstat(ws, &sb), 0);
	ck_assert_int_ne(lstat(seed, &sb), 0);
	ck_assert_int_ne(lstat(img, &sb), 0);
	ck_assert_int_eq(umount2(d, MNT_DETACH), 0);
	cu_rmrf(d);
	free(seed);
	free(img);
	free(ws);
	free(aimg);
	free(b);
	free(a);
	free(leases);
	free(d);
}
END_TEST

Suite *
workspace_suite(void)
{
	Suite *s = suite_create("workspace");
	TCase *tc = tcase_create("Integration");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_workspace_bounds);
	tcase_add_test(tc, test_workspace_no_reuse);
	tcase_add_test(tc, test_workspace_rmtree_hostile);
	tcase_add_test(tc, test_workspace_rmtree_edges);
	tcase_add_test(tc, test_workspace_rmtree_deep);
	tcase_add_test(tc, test_workspace_no_overcommit);
	suite_add_tcase(s, tc);
	return s;
}
