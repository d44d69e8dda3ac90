/*
 * bench_scale.c: leases on a large repository (issue 17 item 2): the
 * repository bench_repo generates (50,000 commits over 5,000 files, the
 * build directory's cache), `corral new` to the agent's first byte with
 * [git] history = 0 next to `git worktree add` and `git clone --depth 1
 * --no-local` of the same repository; the peak RSS of corral's processes
 * while provisioning; the disk a lease takes against the checked-out
 * tree, while its agent runs and once its result is checked out in the
 * review worktree (the workspace released then); 16 leases started at
 * once; and what reject and gc of those give back (free space before and
 * after).
 *
 *	bench_scale TMPDIR CACHEDIR [RUNS]
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/lib/bench_util.h"

int main(int, char **);

#define COMMITS "50000"
#define FILES "5000"
#define SEED "1"
#define MANY 16
#define MB (1024.0 * 1024.0)

extern char **environ;

static char corral[PATH_MAX];
static char state[PATH_MAX];

/* Start argv in dir, stdout to out (or /dev/null); its pid. */
static pid_t
start(char *const *argv, const char *dir, const char *out)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int rc;

	posix_spawn_file_actions_init(&fa);
	if (dir != NULL)
		posix_spawn_file_actions_addchdir_np(&fa, dir);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, out ? out : "/dev/null",
	    O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		bu_die("%s: %s", argv[0], strerror(rc));
	return pid;
}

/* Wait for pid; its exit status, its (and its children's) peak RSS. */
static int
finish(pid_t pid, long *maxrss_kb)
{
	struct rusage ru;
	int st;

	while (wait4(pid, &st, 0, &ru) < 0)
		if (errno != EINTR)
			bu_die("wait4: %s", strerror(errno));
	if (maxrss_kb != NULL && ru.ru_maxrss > *maxrss_kb)
		*maxrss_kb = ru.ru_maxrss;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static double
timed(char *const *argv, const char *dir)
{
	uint64_t t0 = bu_now_ns();

	if (finish(start(argv, dir, NULL), NULL) != 0)
		bu_die("%s %s failed", argv[0], argv[1]);
	return (double)(bu_now_ns() - t0) / 1e6;
}

static int
sh(const char *cmd)
{
	return system(cmd);
}

/* The first line of a command's output (static buffer). */
static const char *
sh_line(const char *cmd)
{
	static char buf[256];
	FILE *p = popen(cmd, "r");

	buf[0] = '\0';
	if (p == NULL || fgets(buf, sizeof buf, p) == NULL)
		buf[0] = '\0';
	if (p != NULL)
		pclose(p);
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* Allocated bytes under path on its own filesystem (du -sxB1). */
static double
du_bytes(const char *path, const char *exclude)
{
	char *cmd = bu_fmt("du -sxB1 %s%s '%s' 2>/dev/null | cut -f1",
	    exclude ? "--exclude=" : "", exclude ? exclude : "", path);
	double v = atof(sh_line(cmd));

	free(cmd);
	return v;
}

static double
free_bytes(const char *path)
{
	struct statvfs sv;

	if (statvfs(path, &sv) < 0)
		bu_die("statvfs %s: %s", path, strerror(errno));
	return (double)sv.f_bavail * (double)sv.f_frsize;
}

/* The holder's peak RSS (VmHWM, kB), 0 once it is gone. */
static long
holder_hwm(const char *id)
{
	char *cmd = bu_fmt("'%s' ls --json | jq -r '.[] | select(.id == "
	    "\"%s\") | .holder_pid // 0'", corral, id);
	long pid = atol(sh_line(cmd)), kb = 0;
	char path[64], line[128];
	FILE *f;

	free(cmd);
	if (pid <= 0)
		return 0;
	snprintf(path, sizeof path, "/proc/%ld/status", pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (fgets(line, sizeof line, f) != NULL)
		if (strncmp(line, "VmHWM:", 6) == 0)
			kb = atol(line + 6);
	fclose(f);
	return kb;
}

struct lease {
	char id[64];
	char out[PATH_MAX];
	pid_t pid;
	uint64_t first;		/* the agent's first byte, wall ns */
};

static void
lease_start(struct lease *l, const char *tmp, const char *repo, int i,
    const char *agent)
{
	char name[32];
	char *argv[] = { corral, "new", "--name", name, "--", "/bin/sh",
		"-c", (char *)agent, NULL };

	snprintf(name, sizeof name, "scale-%d", i);
	snprintf(l->out, sizeof l->out, "%s/new-%d.out", tmp, i);
	l->first = 0;
	l->pid = start(argv, repo, l->out);
}

/* corral new has returned: its ID; 0, or -1 if it failed. */
static int
lease_started(struct lease *l, long *maxrss)
{
	FILE *f;

	if (finish(l->pid, maxrss) != 0)
		return -1;
	if ((f = fopen(l->out, "r")) == NULL || fgets(l->id, sizeof l->id,
	    f) == NULL)
		bu_die("corral new printed no ID");
	fclose(f);
	l->id[strcspn(l->id, "\n")] = '\0';
	return 0;
}

/* Poll for the agent's first line (the wall clock it printed). */
static int
lease_first(struct lease *l)
{
	char tr[PATH_MAX + 128], buf[64];
	FILE *f;

	snprintf(tr, sizeof tr, "%s/leases/%s/transcript", state, l->id);
	if ((f = fopen(tr, "r")) == NULL)
		return 0;
	if (fgets(buf, sizeof buf, f) != NULL && strchr(buf, '\n') != NULL)
		l->first = strtoull(buf, NULL, 10);
	fclose(f);
	return l->first != 0;
}

/* Wait until no lease of the state directory has a live holder. */
static void
wait_ended(void)
{
	char *cmd = bu_fmt("'%s' ls --json | grep -q '\"holder_pid\": [1-9]'",
	    corral);

	for (int i = 0; i < 3000 && sh(cmd) == 0; i++)
		usleep(20000);
	free(cmd);
}

static void
reject_gc(const char *id)
{
	char *cmd = bu_fmt("'%s' reject '%s' >/dev/null 2>&1 && '%s' gc "
	    "'%s' >/dev/null 2>&1", corral, id, corral, id);

	if (sh(cmd) != 0)
		fprintf(stderr, "bench_scale: reject/gc %s failed\n", id);
	free(cmd);
}

/* What a lease takes: its directory (the image by its blocks, not the
 * mount) and its review worktree, once the image's own writes reached it
 * (sync: ext4 in the image delays them). */
static double
lease_bytes(const char *id)
{
	char *a = bu_fmt("%s/leases/%s", state, id);
	char *b = bu_fmt("%s/worktrees/%s", state, id);
	double v;

	sync();
	v = du_bytes(a, NULL) + du_bytes(b, NULL);

	free(a);
	free(b);
	return v;
}

static void
verdict_row(const char *figure, const char *unit, double v, double base,
    double third, const char *third_name, const char *target, bool met)
{
	bu_result("scale", figure, unit, v, base, third, third_name, target,
	    met ? "MET" : "MISSED");
}

int
main(int argc, char **argv)
{
	char repo[PATH_MAX], cfg[PATH_MAX], dst[PATH_MAX], *p;
	char *wt_add[] = { "/usr/bin/git", "worktree", "add", "-q",
		"--detach", dst, "HEAD", NULL };
	char *clone[] = { "/usr/bin/git", "clone", "-q", "--depth", "1",
		"--no-local", repo, dst, NULL };
	static struct lease many[MANY];
	double single[8], git_wt[8], git_cl[8], m_single, m_wt, m_cl;
	double tree, lease_disk = 0, result_disk = 0, before, after, taken = 0;
	double left;
	int mounts;
	long rss = 0, hwm;
	int runs = argc > 3 ? atoi(argv[3]) : 3, failed = 0;
	unsigned long long tree_bytes = 0, pack_bytes = 0;
	unsigned long ncommits = 0, nfiles = 0;
	uint64_t t0, last = 0;
	ssize_t n;
	FILE *f;

	if (argc < 3)
		bu_die("usage: bench_scale TMPDIR CACHEDIR [RUNS]");
	if (runs < 1 || runs > 8)
		runs = 3;
	if (geteuid() != 0) {
		printf("scale: skipped (sandboxed leases need root)\n");
		return 0;
	}
	if ((n = readlink("/proc/self/exe", corral, sizeof corral - 32)) <= 0)
		bu_die("readlink: %s", strerror(errno));
	corral[n] = '\0';
	*strrchr(corral, '/') = '\0';
	p = bu_fmt("'%s/bench_repo' '%s/repo' " COMMITS " " FILES " " SEED,
	    corral, argv[2]);
	strcat(corral, "/../tui/corral");
	printf("scale: generating (or reusing) the repository: %s\n", p);
	fflush(stdout);
	if (sscanf(sh_line(p), "%lu %lu %llu %llu", &ncommits, &nfiles,
	    &tree_bytes, &pack_bytes) != 4)
		bu_die("bench_repo failed");
	free(p);
	if (strlen(argv[1]) > 512 || strlen(argv[2]) > 512)
		bu_die("bench_scale: directory names too long");
	snprintf(repo, sizeof repo, "%.512s/repo", argv[2]);
	snprintf(state, sizeof state, "%.512s/scale-state", argv[1]);
	snprintf(cfg, sizeof cfg, "%.512s/scale-config", argv[1]);
	setenv("CORRAL_STATE_DIR", state, 1);
	setenv("XDG_CONFIG_HOME", cfg, 1);
	bu_mkdir(cfg);
	p = bu_fmt("%s/corral", cfg);
	bu_mkdir(p);
	free(p);
	/* 16 live leases must fit the disk: a 1 GiB workspace each */
	p = bu_fmt("%s/corral/policy.ini", cfg);
	if ((f = fopen(p, "w")) == NULL)
		bu_die("%s: %s", p, strerror(errno));
	fputs("[limits]\ndisk = 1G\n[git]\nhistory = 0\n", f);
	fclose(f);
	free(p);
	tree = du_bytes(repo, ".git");
	printf("scale: %lu commits, %lu files, tree %.1f MB (%.1f MB on disk), "
	    "pack %.1f MB, median of %d\n", ncommits, nfiles,
	    (double)tree_bytes / MB, tree / MB, (double)pack_bytes / MB, runs);

	/* One lease at a time: first byte, peak RSS, disk. */
	for (int i = 0; i < runs; i++) {
		struct lease l;

		t0 = bu_wall_ns();
		lease_start(&l, argv[1], repo, i, "date +%s%N; exec sleep 3");
		if (lease_started(&l, &rss) != 0)
			bu_die("corral new failed (run %d)", i);
		for (int k = 0; k < 1000 && !lease_first(&l); k++)
			usleep(5000);
		if (l.first == 0)
			bu_die("no first output from lease %s", l.id);
		single[i] = (double)(l.first - t0) / 1e6;
		if ((hwm = holder_hwm(l.id)) > rss)
			rss = hwm;
		/* while the agent runs (it sleeps 3 s), then with its result */
		if (i == 0)
			lease_disk = lease_bytes(l.id);
		wait_ended();
		if (i == 0)
			result_disk = lease_bytes(l.id);
		reject_gc(l.id);
	}
	for (int i = 0; i < runs; i++) {
		snprintf(dst, sizeof dst, "%.512s/wt-%d", argv[1], i);
		git_wt[i] = timed(wt_add, repo);
		p = bu_fmt("git -C '%s' worktree remove --force '%s'", repo,
		    dst);
		sh(p);
		free(p);
	}
	for (int i = 0; i < runs; i++) {
		snprintf(dst, sizeof dst, "%.512s/clone-%d", argv[1], i);
		git_cl[i] = timed(clone, NULL);
		bu_rmrf(dst);
	}
	m_single = bu_quantile(single, (size_t)runs, 0.5);
	m_wt = bu_quantile(git_wt, (size_t)runs, 0.5);
	m_cl = bu_quantile(git_cl, (size_t)runs, 0.5);
	verdict_row("big repo: new to first byte", "ms", m_single, m_wt, m_cl,
	    "clone1", "<=1.5x", m_single <= 1.5 * m_wt);
	verdict_row("big repo: disk per running lease", "MB", lease_disk / MB,
	    tree / MB, NAN, "", "<=2x", lease_disk <= 2 * tree);
	/* its result checked out in the review worktree, the workspace released */
	verdict_row("big repo: disk with its result", "MB", result_disk / MB,
	    tree / MB, NAN, "", "<=2x", result_disk <= 2 * tree);

	/*
	 * 16 at once, then reject and gc of all of them. Each agent waits
	 * for /work/.bench-go, made once all of them run: a lease that ended
	 * early would extract its result while the others start.
	 */
	before = free_bytes(state);
	t0 = bu_wall_ns();
	for (int i = 0; i < MANY; i++)
		lease_start(&many[i], argv[1], repo, 100 + i,
		    "date +%s%N; while [ ! -e /work/.bench-go ]; do sleep 0.2; "
		    "done; rm -f /work/.bench-go");
	for (int i = 0; i < MANY; i++)
		if (lease_started(&many[i], &rss) != 0)
			failed++;
	for (int k = 0; k < 6000; k++) {
		int done = 0;

		for (int i = 0; i < MANY; i++)
			done += many[i].id[0] == '\0' || many[i].first != 0 ||
			    lease_first(&many[i]);
		if (done == MANY)
			break;
		usleep(10000);
	}
	for (int i = 0; i < MANY; i++) {
		if (many[i].first == 0)
			failed++;
		else if (many[i].first > last)
			last = many[i].first;
		if (many[i].id[0] != '\0' && (hwm = holder_hwm(many[i].id)) >
		    rss)
			rss = hwm;
	}
	for (int i = 0; i < MANY; i++) {
		char *go;
		FILE *g;

		if (many[i].id[0] == '\0')
			continue;
		go = bu_fmt("%s/leases/%s/work/.bench-go", state, many[i].id);
		if ((g = fopen(go, "w")) != NULL)
			fclose(g);
		free(go);
	}
	wait_ended();
	for (int i = 0; i < MANY; i++) {
		if (many[i].id[0] != '\0')
			taken += lease_bytes(many[i].id);
	}
	for (int i = 0; i < MANY; i++)
		if (many[i].id[0] != '\0')
			reject_gc(many[i].id);
	after = free_bytes(state);
	verdict_row("big repo: 16 at once, all running", "ms",
	    last > t0 ? (double)(last - t0) / 1e6 : NAN, 16 * m_single,
	    (double)failed, "failed", "<=16x single", failed == 0 &&
	    last > t0 && (double)(last - t0) / 1e6 <= 16 * m_single);
	verdict_row("big repo: peak RSS, any corral", "MB", (double)rss / 1024,
	    100, NAN, "", "<=100 MB", rss <= 100 * 1024);
	/*
	 * What is left of them: bytes under the state directory's leases/
	 * and worktrees/, and their mounts. The free space before and after
	 * is shown too, but others write on this filesystem meanwhile.
	 */
	sync();
	p = bu_fmt("%s/leases", state);
	left = du_bytes(p, NULL) - 4096;
	free(p);
	p = bu_fmt("%s/worktrees", state);
	left += du_bytes(p, NULL) - 4096;
	free(p);
	p = bu_fmt("grep -c ' %s/' /proc/self/mountinfo", state);
	mounts = atoi(sh_line(p));
	free(p);
	verdict_row("big repo: reject+gc of 16 leaves", "MB", left / MB,
	    taken / MB, (before - after) / MB, "df delta", "0 left",
	    left < MB && mounts == 0);
	return 0;
}
