/*
 * fuzz_patch.c: libFuzzer target over the import gate's parsing (SPEC 7.2):
 * an input "MANIFEST\n%%\nPATCH" (or a bare PATCH) goes through the
 * pre-parse scan, the strict manifest parser (whose dump must parse back
 * to the same text) and lease_gate_odb_verify against a small base commit
 * (a file, a directory, a symlink) in a throwaway repository, with the
 * quarantine object database under a temp directory. With
 * CORRAL_FUZZ_PATCH_SEEDS=DIR set, it first writes a consistent seed made
 * by extraction itself into DIR.
 */
#include <ftw.h>
#include <git2.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lease/result/result.h"

int LLVMFuzzerInitialize(int *, char ***);
int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static char tmp[64];
static char base_hex[41];
static struct lease_git *g;
static struct lease_gate_odb *q;

static int
rm_one(const char *path, const struct stat *sb, int flag, struct FTW *f)
{
	(void)sb;
	(void)flag;
	(void)f;
	return remove(path);
}

static void
cleanup(void)
{
	lease_gate_odb_free(q);
	lease_git_free(g);
	if (tmp[0] != '\0')
		nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void die(const char *) __attribute__((noreturn));

static void
die(const char *what)
{
	const git_error *e = git_error_last();

	fprintf(stderr, "fuzz_patch: %s: %s\n", what, e ? e->message : "");
	abort();
}

static void
add(git_repository *r, git_index *idx, const char *path, unsigned mode,
    const char *text)
{
	git_index_entry e;

	memset(&e, 0, sizeof e);
	e.mode = mode;
	e.path = path;
	if (git_blob_create_from_buffer(&e.id, r, text, strlen(text)) < 0 ||
	    git_index_add(idx, &e) < 0)
		die(path);
}

/* A tree of idx committed with a fixed time; hex in out. */
static void
commit(git_repository *r, git_index *idx, char out[41])
{
	git_signature *sig = NULL;
	git_tree *t = NULL;
	git_oid tid, cid;

	if (git_index_write_tree_to(&tid, idx, r) < 0 ||
	    git_tree_lookup(&t, r, &tid) < 0 ||
	    git_signature_new(&sig, "fuzz", "fuzz@localhost", 1700000000, 0) <
	    0 || git_commit_create_v(&cid, r, "HEAD", sig, sig, NULL, "base", t,
	    0) < 0)
		die("commit");
	git_oid_tostr(out, 41, &cid);
	git_signature_free(sig);
	git_tree_free(t);
}

/* One consistent manifest + patch, made by extraction, as a seed. */
static void
write_seed(const char *dir, git_repository *r, git_index *idx)
{
	struct lease_result_policy pol;
	struct lease_gate_report rep;
	struct lease_manifest *m = NULL;
	char path[512], tree[41], *text, buf[65536];
	git_oid tid;
	FILE *in, *out;
	size_t n;

	add(r, idx, "README", 0100644, "hello\nfrom the seed\n");
	add(r, idx, "src/new.c", 0100755, "int fresh;\n");
	if (git_index_remove(idx, "src/b.c", 0) < 0 ||
	    git_index_write_tree_to(&tid, idx, r) < 0)
		die("seed tree");
	git_oid_tostr(tree, sizeof tree, &tid);
	lease_result_policy_defaults(&pol);
	memset(&rep, 0, sizeof rep);
	snprintf(path, sizeof path, "%s/seed.patch", tmp);
	if (lease_patch_write(q, base_hex, tree, &pol, path, &rep, &m) < 0 ||
	    m == NULL || (text = lease_manifest_dump(m)) == NULL)
		die("seed patch");
	snprintf(buf, sizeof buf, "%s/extracted", dir);
	if ((out = fopen(buf, "w")) == NULL || (in = fopen(path, "r")) == NULL)
		die("seed file");
	fprintf(out, "%s\n%%%%\n", text);
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		fwrite(buf, 1, n, out);
	fclose(in);
	fclose(out);
	free(text);
	lease_manifest_free(m);
	lease_gate_report_free(&rep);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	git_repository *r;
	git_index *idx;
	char path[128];
	const char *seeds = getenv("CORRAL_FUZZ_PATCH_SEEDS");

	(void)argc;
	(void)argv;
	snprintf(tmp, sizeof tmp, "/tmp/corral-fuzz-patch.XXXXXX");
	if (mkdtemp(tmp) == NULL)
		abort();
	atexit(cleanup);
	if (lease_git_init() < 0)
		abort();
	snprintf(path, sizeof path, "%s/repo", tmp);
	if (git_repository_init(&r, path, 0) < 0 || git_index_new(&idx) < 0)
		die("init");
	add(r, idx, "README", 0100644, "hello\n");
	add(r, idx, "src/a.c", 0100644, "int a;\nint b;\nint c;\n");
	add(r, idx, "src/b.c", 0100644, "int b;\n");
	add(r, idx, "link", 0120000, "README");
	commit(r, idx, base_hex);
	if (lease_git_open(&g, path) < 0)
		die("open");
	snprintf(path, sizeof path, "%s/quarantine", tmp);
	if (lease_gate_odb_open(g, path, &q) < 0)
		die("quarantine");
	if (seeds != NULL)
		write_seed(seeds, r, idx);
	git_index_free(idx);
	git_repository_free(r);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char sep[] = "\n%%\n";
	const char *text = (const char *)data, *patch = text;
	struct lease_result_policy pol;
	struct lease_gate_report rep;
	struct lease_gate_scan sc;
	struct lease_manifest *m = NULL, *again = NULL;
	char *dump = NULL, *dump2 = NULL;
	size_t plen = size, i;

	for (i = 0; i + sizeof sep - 1 <= size; i++)
		if (memcmp(text + i, sep, sizeof sep - 1) == 0) {
			if (lease_manifest_parse(text, i, &m) == 0) {
				/* what parses dumps and parses back the same */
				dump = lease_manifest_dump(m);
				if (dump == NULL || lease_manifest_parse(dump,
				    strlen(dump), &again) != 0 ||
				    (dump2 = lease_manifest_dump(again)) ==
				    NULL || strcmp(dump, dump2) != 0)
					abort();
			}
			patch = text + i + sizeof sep - 1;
			plen = size - i - (sizeof sep - 1);
			break;
		}
	lease_result_policy_defaults(&pol);
	pol.max_patch_bytes = 1 << 16;
	pol.allow_binary = size > 0 && (data[0] & 1);
	pol.allow_symlinks = size > 0 && (data[0] & 2);
	(void)lease_gate_patch_scan(patch, plen, &pol, &sc);
	for (i = 0; i < 2; i++) {
		memset(&rep, 0, sizeof rep);
		if (lease_gate_odb_verify(q, base_hex, patch, plen,
		    i ? NULL : m,
		    &pol, &rep) == 0 && rep.n == 0 && rep.tree[0] == '\0')
			abort();	/* passed without a resulting tree */
		lease_gate_report_free(&rep);
	}
	free(dump);
	free(dump2);
	lease_manifest_free(again);
	lease_manifest_free(m);
	return 0;
}
