/*
 * bench_repo.c: a large git repository for `make bench` and the seeding
 * smoke test (issue 17): COMMITS commits over FILES files, fed to
 * `git fast-import`, the same bytes (so the same commit IDs) for the same
 * seed. Each commit after the first rewrites a run of lines in one to
 * three files, so the history grows far beyond the checked-out tree. A
 * repository already made with the same parameters is kept (the cache):
 * DIR/.git/bench-params names them.
 *
 *	bench_repo DIR COMMITS FILES SEED
 *
 * prints "commits files tree_bytes pack_bytes head" on one line.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/lib/bench_util.h"

int main(int, char **);

#define PARAMS_VERSION 2
#define LINE_MAX_BYTES 64
#define FILE_LINES_MIN 120
#define FILE_LINES_MAX 480
#define DIRS_TOP 50
#define DIRS_SUB 4

struct file {
	char path[64];
	char **lines;
	size_t n;
};

static uint64_t rng;

static uint32_t
rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

/* One line of made-up C: random identifiers, so it packs like code. */
static char *
line_new(void)
{
	static const char *const ops[] = { "+", "-", "*", "^", "|", "&" };
	char *s = malloc(LINE_MAX_BYTES);

	if (s == NULL)
		bu_die("out of memory");
	switch (rnd(4)) {
	case 0:
		snprintf(s, LINE_MAX_BYTES, "\tv%07x = f%05x(v%07x, %u);\n",
		    rnd(1u << 28), rnd(1u << 20), rnd(1u << 28), rnd(100000));
		break;
	case 1:
		snprintf(s, LINE_MAX_BYTES, "\tif (v%07x %s %u > k%06x)\n",
		    rnd(1u << 28), ops[rnd(6)], rnd(4096), rnd(1u << 24));
		break;
	case 2:
		snprintf(s, LINE_MAX_BYTES, "\t\treturn g%06x[%u] %s 0x%08x;\n",
		    rnd(1u << 24), rnd(64), ops[rnd(6)], rnd(UINT32_MAX));
		break;
	default:
		snprintf(s, LINE_MAX_BYTES, "/* %08x %08x */\n",
		    rnd(UINT32_MAX), rnd(UINT32_MAX));
		break;
	}
	return s;
}

static size_t
file_bytes(const struct file *f)
{
	size_t len = 0;

	for (size_t i = 0; i < f->n; i++)
		len += strlen(f->lines[i]);
	return len;
}

/* "M 100644 inline PATH" and its data. */
static void
file_emit(FILE *out, const struct file *f)
{
	fprintf(out, "M 100644 inline %s\ndata %zu\n", f->path, file_bytes(f));
	for (size_t i = 0; i < f->n; i++)
		fputs(f->lines[i], out);
	fputc('\n', out);
}

/* Replace a run of lines with as many new ones, give or take a few. */
static void
file_change(struct file *f)
{
	size_t at = rnd((uint32_t)f->n), run = 8 + rnd(40), add;
	char **v;

	if (at + run > f->n)
		run = f->n - at;
	add = run + rnd(5);
	if (f->n + add - run > FILE_LINES_MAX)
		add = run;
	v = malloc((f->n - run + add) * sizeof *v);
	if (v == NULL)
		bu_die("out of memory");
	memcpy(v, f->lines, at * sizeof *v);
	for (size_t i = 0; i < run; i++)
		free(f->lines[at + i]);
	for (size_t i = 0; i < add; i++)
		v[at + i] = line_new();
	memcpy(v + at + add, f->lines + at + run, (f->n - at - run) *
	    sizeof *v);
	free(f->lines);
	f->lines = v;
	f->n = f->n - run + add;
}

static void
commit_head(FILE *out, unsigned long i)
{
	char msg[64];
	int len = snprintf(msg, sizeof msg, "change %lu", i);

	fprintf(out, "commit refs/heads/main\nmark :%lu\n"
	    "committer Bench <bench@example.invalid> %lu +0000\n"
	    "data %d\n%s\n", i + 1, 1700000000ul + i * 60, len, msg);
	if (i > 0)
		fprintf(out, "from :%lu\n", i);
}

static void
generate(const char *dir, unsigned long commits, unsigned long nfiles)
{
	struct file *files = calloc(nfiles, sizeof *files);
	char *cmd;
	FILE *out;

	if (files == NULL)
		bu_die("out of memory");
	cmd = bu_fmt("git init -q -b main '%s' && cd '%s' && git fast-import "
	    "--quiet --done", dir, dir);
	if ((out = popen(cmd, "w")) == NULL)
		bu_die("cannot run git fast-import");
	free(cmd);
	commit_head(out, 0);
	for (unsigned long f = 0; f < nfiles; f++) {
		struct file *fl = &files[f];

		snprintf(fl->path, sizeof fl->path, "m%02lu/s%lu/f%05lu.c",
		    f % DIRS_TOP, (f / DIRS_TOP) % DIRS_SUB, f);
		fl->n = FILE_LINES_MIN + rnd(FILE_LINES_MAX * 3 / 4 -
		    FILE_LINES_MIN);
		if ((fl->lines = malloc(fl->n * sizeof *fl->lines)) == NULL)
			bu_die("out of memory");
		for (size_t l = 0; l < fl->n; l++)
			fl->lines[l] = line_new();
		file_emit(out, fl);
	}
	fputc('\n', out);
	for (unsigned long i = 1; i < commits; i++) {
		unsigned k = 1 + rnd(3);

		commit_head(out, i);
		for (unsigned j = 0; j < k; j++) {
			struct file *fl = &files[rnd((uint32_t)nfiles)];

			file_change(fl);
			file_emit(out, fl);
		}
		fputc('\n', out);
	}
	fputs("done\n", out);
	if (pclose(out) != 0)
		bu_die("git fast-import failed in %s", dir);
	for (unsigned long f = 0; f < nfiles; f++) {
		for (size_t l = 0; l < files[f].n; l++)
			free(files[f].lines[l]);
		free(files[f].lines);
	}
	free(files);
	cmd = bu_fmt("cd '%s' && git checkout -q -f main", dir);
	if (system(cmd) != 0)
		bu_die("git checkout in %s failed", dir);
	free(cmd);
}

/* Bytes of the regular files under path, not descending into .git. */
static unsigned long long
tree_bytes(const char *path)
{
	unsigned long long sum = 0;
	struct dirent *e;
	struct stat sb;
	DIR *d = opendir(path);
	char *p;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") ==
		    0 || strcmp(e->d_name, ".git") == 0)
			continue;
		p = bu_fmt("%s/%s", path, e->d_name);
		if (lstat(p, &sb) == 0) {
			if (S_ISDIR(sb.st_mode))
				sum += tree_bytes(p);
			else if (S_ISREG(sb.st_mode))
				sum += (unsigned long long)sb.st_size;
		}
		free(p);
	}
	closedir(d);
	return sum;
}

static unsigned long long
pack_bytes(const char *dir)
{
	char *p = bu_fmt("%s/.git/objects/pack", dir);
	unsigned long long sum = tree_bytes(p);

	free(p);
	return sum;
}

int
main(int argc, char **argv)
{
	unsigned long commits, nfiles, seed, c = 0, f = 0, s = 0;
	char *params, *tmp, *cmd, head[64] = "";
	int v = 0;
	FILE *pf;

	if (argc != 5)
		bu_die("usage: bench_repo DIR COMMITS FILES SEED");
	commits = strtoul(argv[2], NULL, 10);
	nfiles = strtoul(argv[3], NULL, 10);
	seed = strtoul(argv[4], NULL, 10);
	if (commits < 1 || nfiles < 1 || nfiles > 1000000)
		bu_die("bench_repo: COMMITS and FILES must be positive");
	params = bu_fmt("%s/.git/bench-params", argv[1]);
	if ((pf = fopen(params, "r")) == NULL || fscanf(pf, "%d %lu %lu %lu",
	    &v, &c, &f, &s) != 4 || v != PARAMS_VERSION || c != commits ||
	    f != nfiles || s != seed) {
		if (pf != NULL)
			fclose(pf);
		tmp = bu_fmt("%s.tmp", argv[1]);
		bu_rmrf(tmp);
		bu_rmrf(argv[1]);
		rng = 0x9e3779b97f4a7c15ull ^ (seed * 0x2545f4914f6cdd1dull);
		if (rng == 0)
			rng = 1;
		generate(tmp, commits, nfiles);
		if (rename(tmp, argv[1]) < 0)
			bu_die("%s: %s", argv[1], strerror(errno));
		free(tmp);
		if ((pf = fopen(params, "w")) == NULL)
			bu_die("%s: %s", params, strerror(errno));
		fprintf(pf, "%d %lu %lu %lu\n", PARAMS_VERSION, commits,
		    nfiles, seed);
	}
	fclose(pf);
	free(params);
	cmd = bu_fmt("git -C '%s' rev-parse HEAD", argv[1]);
	if ((pf = popen(cmd, "r")) == NULL || fgets(head, sizeof head,
	    pf) == NULL)
		bu_die("git rev-parse in %s failed", argv[1]);
	pclose(pf);
	free(cmd);
	head[strcspn(head, "\n")] = '\0';
	printf("%lu %lu %llu %llu %s\n", commits, nfiles,
	    tree_bytes(argv[1]), pack_bytes(argv[1]), head);
	return 0;
}
