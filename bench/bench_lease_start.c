/*
 * bench_lease_start.c: the start overhead of a sandboxed lease (issue 6):
 * from `corral new` to the agent's first output byte, median of runs, for
 * a repository of 2,000 files, next to what it is built from: a bare
 * `bwrap ... true` and a plain `git clone --no-local` of the same
 * repository. The agent prints the wall clock (the host's: no time
 * namespace) as its very first output, so nothing of the holder's or the
 * console's reading is counted.
 *
 *	bench_lease_start TMPDIR [RUNS]
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/lib/bench_util.h"

int main(int, char **);

#define FILES 2000
#define DIRS 40

extern char **environ;

static char corral[PATH_MAX];

/* Run argv in dir with stdout to out_path (or /dev/null); exit status. */
static int
run(char *const *argv, const char *dir, const char *out_path)
{
	posix_spawn_file_actions_t fa;
	char cwd[PATH_MAX];
	pid_t pid;
	int st, rc;

	if (getcwd(cwd, sizeof cwd) == NULL || (dir && chdir(dir) < 0))
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, out_path ? out_path :
	    "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (chdir(cwd) < 0 || rc != 0)
		return -1;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int
sh(const char *fmt, const char *a, const char *b)
{
	char cmd[4 * PATH_MAX];

	snprintf(cmd, sizeof cmd, fmt, a, b);
	return system(cmd);
}

/* A repository of FILES small files in DIRS directories, one commit. */
static void
make_repo(const char *repo)
{
	char path[PATH_MAX + 64];
	FILE *f;

	if (mkdir(repo, 0755) < 0 && errno != EEXIST)
		bu_die("%s: %s", repo, strerror(errno));
	for (int i = 0; i < FILES; i++) {
		snprintf(path, sizeof path, "%s/d%02d", repo, i % DIRS);
		mkdir(path, 0755);
		snprintf(path, sizeof path, "%s/d%02d/f%04d.c", repo, i % DIRS,
		    i);
		if ((f = fopen(path, "w")) == NULL)
			bu_die("%s: %s", path, strerror(errno));
		for (int l = 0; l < 24; l++)
			fprintf(f, "int f%04d_%02d(int x) { return x * %d; }\n",
			    i, l, i + l);
		fclose(f);
	}
	if (sh("cd '%s' && git init -q && git add -A && git -c user.name=b "
	    "-c user.email=b@x.invalid commit -q -m files%s", repo, "") != 0)
		bu_die("git init/commit in %s failed", repo);
}

/* One lease: ms from `corral new` to the agent's first output byte. */
static double
lease_once(const char *tmp, const char *repo, int i, double *new_ms)
{
	char *argv[] = { corral, "new", "--name", NULL, "--", "/bin/sh", "-c",
		"date +%s%N; exec sleep 0.2", NULL };
	char name[32], out[PATH_MAX], id[64], tr[PATH_MAX + 128], buf[64];
	const char *state = getenv("CORRAL_STATE_DIR");
	uint64_t t0, t1, first = 0;
	FILE *f;

	snprintf(name, sizeof name, "bench-%d", i);
	argv[3] = name;
	snprintf(out, sizeof out, "%s/lease-new.out", tmp);
	t0 = bu_wall_ns();
	if (run(argv, repo, out) != 0)
		bu_die("corral new failed (run %d)", i);
	t1 = bu_wall_ns();
	*new_ms = (double)(t1 - t0) / 1e6;
	if ((f = fopen(out, "r")) == NULL || fgets(id, sizeof id, f) == NULL)
		bu_die("corral new printed no ID");
	fclose(f);
	id[strcspn(id, "\n")] = '\0';
	snprintf(tr, sizeof tr, "%s/leases/%s/transcript", state, id);
	for (int tries = 0; tries < 500 && first == 0; tries++) {
		if ((f = fopen(tr, "r")) != NULL) {
			if (fgets(buf, sizeof buf, f) != NULL &&
			    strchr(buf, '\n') != NULL)
				first = strtoull(buf, NULL, 10);
			fclose(f);
		}
		if (first == 0)
			usleep(10000);
	}
	if (first == 0 || first < t0)
		bu_die("no first output from lease %s", id);
	return (double)(first - t0) / 1e6;
}

static double
timed(char *const *argv, const char *dir)
{
	uint64_t t0 = bu_now_ns();

	if (run(argv, dir, NULL) != 0)
		bu_die("%s failed", argv[0]);
	return (double)(bu_now_ns() - t0) / 1e6;
}

int
main(int argc, char **argv)
{
	char repo[PATH_MAX], state[PATH_MAX], cfg[PATH_MAX], dst[PATH_MAX];
	char *bw[] = { "/usr/bin/bwrap", "--unshare-user", "--unshare-ipc",
		"--unshare-pid", "--unshare-net", "--unshare-uts",
		"--unshare-cgroup", "--die-with-parent", "--new-session",
		"--ro-bind", "/usr", "/usr", "--symlink", "usr/lib64", "/lib64",
		"--symlink", "usr/lib", "/lib", "--symlink", "usr/bin", "/bin",
		"--proc", "/proc", "--dev", "/dev", "--", "/usr/bin/true",
		NULL };
	char *clone[] = { "/usr/bin/git", "clone", "-q", "--no-local", repo,
		dst, NULL };
	double lease[32], news[32], bwrap[32], git[32], m;
	int runs = argc > 2 ? atoi(argv[2]) : 7;
	ssize_t n;

	if (argc < 2)
		bu_die("usage: bench_lease_start TMPDIR [RUNS]");
	if (runs < 3 || runs > 32)
		runs = 7;
	if (geteuid() != 0) {
		printf("lease start: skipped (sandboxed leases need root)\n");
		return 0;
	}
	/* The corral binary next to this build's bench directory. */
	if ((n = readlink("/proc/self/exe", corral, sizeof corral - 32)) <= 0)
		bu_die("readlink: %s", strerror(errno));
	corral[n] = '\0';
	*strrchr(corral, '/') = '\0';
	strcat(corral, "/../tui/corral");
	snprintf(repo, sizeof repo, "%s/lease-repo", argv[1]);
	snprintf(state, sizeof state, "%s/lease-state", argv[1]);
	snprintf(cfg, sizeof cfg, "%s/lease-config", argv[1]);
	setenv("CORRAL_STATE_DIR", state, 1);
	setenv("XDG_CONFIG_HOME", cfg, 1);
	printf("lease start: `corral new` to the agent's first output byte, "
	    "%d files, median of %d\n", FILES, runs);
	make_repo(repo);
	for (int i = 0; i < runs; i++)
		lease[i] = lease_once(argv[1], repo, i, &news[i]);
	for (int i = 0; i < runs; i++)
		bwrap[i] = timed(bw, NULL);
	for (int i = 0; i < runs; i++) {
		snprintf(dst, sizeof dst, "%s/clone-%d", argv[1], i);
		git[i] = timed(clone, NULL);
	}
	m = bu_quantile(lease, (size_t)runs, 0.5);
	bu_result("lease", "lease start, 2000 files (first byte)", "ms", m,
	    NAN, NAN, "", "-", "-");
	bu_result("lease", "  corral new returns", "ms",
	    bu_quantile(news, (size_t)runs, 0.5), NAN, NAN, "", "-", "-");
	bu_result("lease", "  bare bwrap ... true", "ms",
	    bu_quantile(bwrap, (size_t)runs, 0.5), NAN, NAN, "", "-", "-");
	bu_result("lease", "  git clone --no-local", "ms",
	    bu_quantile(git, (size_t)runs, 0.5), NAN, NAN, "", "-", "-");
	/* The leases end by themselves; their kept workspaces are mounts. */
	for (int i = 0; i < 300; i++) {
		if (sh("CORRAL_STATE_DIR='%s' '%s' ls --json | grep -q "
		    "'\"holder_pid\": [1-9]'", state, corral) != 0)
			break;
		usleep(20000);
	}
	sh("grep -F ' %s/' /proc/self/mountinfo | awk '{print $5}' | "
	    "while read -r m; do umount -l \"$m\"; done%s", argv[1], "");
	return 0;
}
