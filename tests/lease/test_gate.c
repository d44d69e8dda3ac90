/*
 * test_gate.c: the pure rules of the import gate (SPEC 7.2), exhaustively:
 * path rules (every .git spelling git itself refuses, escapes, control
 * characters, newlines, invalid UTF-8, a leading '-', lengths), mode
 * rules, review flags, check independence, globbing, the pre-parse patch
 * scan against each cap, and the manifest format (round trip and strict
 * parsing).
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lease/result/result.h"

struct pcase {
	const char *path;
	enum lease_gate_reason want;
};

static const struct pcase paths[] = {
	{ "README", LEASE_GATE_OK },
	{ "src/a.c", LEASE_GATE_OK },
	{ "a/b/c/d.txt", LEASE_GATE_OK },
	{ "caf\xc3\xa9.txt", LEASE_GATE_OK },		/* UTF-8 */
	{ "\xe6\x97\xa5\xe6\x9c\xac/x", LEASE_GATE_OK },
	{ "with space", LEASE_GATE_OK },
	{ "a-b", LEASE_GATE_OK },
	{ ".gitignore", LEASE_GATE_OK },
	{ ".gitmodules", LEASE_GATE_OK },
	{ ".github/workflows/ci.yml", LEASE_GATE_OK },
	{ "git", LEASE_GATE_OK },
	{ ".gitx", LEASE_GATE_OK },
	{ "x.git", LEASE_GATE_OK },
	{ "git~2", LEASE_GATE_OK },
	{ ".git~1", LEASE_GATE_OK },
	{ "...", LEASE_GATE_OK },
	{ "", LEASE_GATE_EMPTY_PATH },
	{ "/etc/passwd", LEASE_GATE_ABSOLUTE },
	{ "/", LEASE_GATE_ABSOLUTE },
	{ "../escape", LEASE_GATE_ESCAPE },
	{ "a/../../b", LEASE_GATE_ESCAPE },
	{ "a/..", LEASE_GATE_ESCAPE },
	{ "./a", LEASE_GATE_ESCAPE },
	{ "a/./b", LEASE_GATE_ESCAPE },
	{ "a//b", LEASE_GATE_ESCAPE },
	{ "b//etc/evil", LEASE_GATE_ESCAPE },
	{ "a/", LEASE_GATE_ESCAPE },
	{ ".", LEASE_GATE_ESCAPE },
	{ "..", LEASE_GATE_ESCAPE },
	{ ".git", LEASE_GATE_GIT_PATH },
	{ ".git/config", LEASE_GATE_GIT_PATH },
	{ ".git/hooks/pre-commit", LEASE_GATE_GIT_PATH },
	{ "sub/.git/config", LEASE_GATE_GIT_PATH },
	{ ".GIT/config", LEASE_GATE_GIT_PATH },
	{ "sub/.GiT", LEASE_GATE_GIT_PATH },
	{ ".git./x", LEASE_GATE_GIT_PATH },		/* NTFS */
	{ ".git ", LEASE_GATE_GIT_PATH },
	{ ".git. . .", LEASE_GATE_GIT_PATH },
	{ ".git::$INDEX_ALLOCATION/x", LEASE_GATE_GIT_PATH },
	{ ".git:stream", LEASE_GATE_GIT_PATH },
	{ "git~1/config", LEASE_GATE_GIT_PATH },	/* 8.3 name */
	{ "GIT~1", LEASE_GATE_GIT_PATH },
	{ "git~1.", LEASE_GATE_GIT_PATH },
	{ "a\\.git\\config", LEASE_GATE_GIT_PATH },	/* backslashes */
	{ ".g\xe2\x80\x8cit/config", LEASE_GATE_GIT_PATH },	/* HFS ZWNJ */
	{ "\xe2\x80\x8e.git", LEASE_GATE_GIT_PATH },	/* LRM */
	{ ".git\xef\xbb\xbf", LEASE_GATE_GIT_PATH },	/* BOM */
	{ ".\xe2\x80\xaeGIT", LEASE_GATE_GIT_PATH },	/* RLO */
	{ ".gi\xe2\x81\xaft", LEASE_GATE_GIT_PATH },	/* U+206F */
	{ "-rf", LEASE_GATE_LEADING_DASH },
	{ "docs/-n", LEASE_GATE_LEADING_DASH },
	{ "--help", LEASE_GATE_LEADING_DASH },
	{ "a\xff", LEASE_GATE_INVALID_UTF8 },
	{ "\xc0\xaf", LEASE_GATE_INVALID_UTF8 },	/* overlong '/' */
	{ "\xed\xa0\x80", LEASE_GATE_INVALID_UTF8 },	/* surrogate */
	{ "\xf4\x90\x80\x80", LEASE_GATE_INVALID_UTF8 },	/* > U+10FFFF */
	{ "\xe2\x82", LEASE_GATE_INVALID_UTF8 },	/* truncated */
	{ "line\nbreak", LEASE_GATE_NEWLINE },
	{ "a/b\n", LEASE_GATE_NEWLINE },
	{ "esc\x1b]52;c;aGk=\x07", LEASE_GATE_CONTROL_CHAR },
	{ "tab\there", LEASE_GATE_CONTROL_CHAR },
	{ "cr\r", LEASE_GATE_CONTROL_CHAR },
	{ "del\x7f", LEASE_GATE_CONTROL_CHAR },
	{ "c1\xc2\x9b", LEASE_GATE_CONTROL_CHAR },	/* U+009B CSI */
	{ "esc\x1bthen\nnewline", LEASE_GATE_NEWLINE },
	/* invisible and bidi code points: the name is not what it shows */
	{ "evil\xe2\x80\xaetxt.sh", LEASE_GATE_INVISIBLE },	/* RLO */
	{ "a\xe2\x80\xaa" "b", LEASE_GATE_INVISIBLE },	/* U+202A LRE */
	{ "a\xe2\x80\xac" "b", LEASE_GATE_INVISIBLE },	/* U+202C PDF */
	{ "a\xe2\x81\xa6" "b", LEASE_GATE_INVISIBLE },	/* U+2066 LRI */
	{ "dir\xe2\x81\xa9/x", LEASE_GATE_INVISIBLE },	/* U+2069 PDI */
	{ "zero\xe2\x80\x8bwidth", LEASE_GATE_INVISIBLE },	/* ZWSP */
	{ "zw\xe2\x80\x8dj", LEASE_GATE_INVISIBLE },	/* ZWJ */
	{ "word\xe2\x81\xa0joiner", LEASE_GATE_INVISIBLE },	/* U+2060 */
	{ "bom\xef\xbb\xbf.c", LEASE_GATE_INVISIBLE },	/* U+FEFF */
	{ "soft\xc2\xadhyphen", LEASE_GATE_INVISIBLE },	/* U+00AD */
	{ "line\xe2\x80\xa8sep", LEASE_GATE_INVISIBLE },	/* U+2028 */
	{ "tag\xf3\xa0\x81\x81", LEASE_GATE_INVISIBLE },	/* U+E0041 */
	{ "filler\xe3\x85\xa4", LEASE_GATE_INVISIBLE },	/* U+3164 */
	{ "a\xe2\x80\x8f" "b", LEASE_GATE_INVISIBLE },	/* RLM */
	{ "caf\xc3\xa9.txt", LEASE_GATE_OK },
	{ "cafe\xcc\x81.txt", LEASE_GATE_OK },	/* NFD: visible */
	{ "\xe6\x97\xa5\xe6\x9c\xac/\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d.md",
	    LEASE_GATE_OK },
};

START_TEST(test_gate_paths)
{
	const struct pcase *c = &paths[_i];
	enum lease_gate_reason got = lease_gate_path(c->path, strlen(c->path));

	ck_assert_msg(got == c->want, "case %d: got %s, want %s", _i,
	    lease_gate_reason_name(got), lease_gate_reason_name(c->want));
}
END_TEST

START_TEST(test_gate_path_lengths)
{
	char name[300], path[5000];
	size_t i;

	memset(name, 'a', 255);
	name[255] = '\0';
	ck_assert_int_eq(lease_gate_path(name, 255), LEASE_GATE_OK);
	name[255] = 'a';
	name[256] = '\0';
	ck_assert_int_eq(lease_gate_path(name, 256),
	    LEASE_GATE_NAME_TOO_LONG);
	/* 4096 bytes in components of 9 + '/' */
	for (i = 0; i + 10 <= 4090; i += 10)
		memcpy(path + i, "aaaaaaaaa/", 10);
	memcpy(path + i, "bbbbbb", 6);
	path[i + 6] = '\0';
	ck_assert_uint_eq(strlen(path), 4096);
	ck_assert_int_eq(lease_gate_path(path, 4096), LEASE_GATE_OK);
	memcpy(path + i, "bbbbbbb", 8);
	ck_assert_int_eq(lease_gate_path(path, 4097),
	    LEASE_GATE_NAME_TOO_LONG);
	/* a NUL inside the length is a control character */
	ck_assert_int_eq(lease_gate_path("a\0b", 3), LEASE_GATE_CONTROL_CHAR);
}
END_TEST

START_TEST(test_gate_dotgit)
{
	ck_assert(lease_gate_name_dotgit(".git", 4));
	ck_assert(lease_gate_name_dotgit(".GIT", 4));
	ck_assert(lease_gate_name_dotgit("Git~1", 5));
	ck_assert(!lease_gate_name_dotgit(".gi", 3));
	ck_assert(!lease_gate_name_dotgit("", 0));
	ck_assert(!lease_gate_name_dotgit(".gitattributes", 14));
	ck_assert(!lease_gate_name_dotgit(".git-blame", 10));
	ck_assert(!lease_gate_name_dotgit("\xc3\xa9.git", 6));
	ck_assert(lease_gate_name_dotgit("x\\.git", 6));
	ck_assert(lease_gate_name_dotgit(".git\\x", 6));
	/* only the given length counts */
	ck_assert(lease_gate_name_dotgit(".gitmodules", 4));
}
END_TEST

START_TEST(test_gate_modes)
{
	unsigned g = 1;

	ck_assert_int_eq(lease_gate_mode(0100644, false), LEASE_GATE_OK);
	ck_assert_int_eq(lease_gate_mode(0100755, false), LEASE_GATE_OK);
	ck_assert_int_eq(lease_gate_mode(0120000, false), LEASE_GATE_SYMLINK);
	ck_assert_int_eq(lease_gate_mode(0120000, true), LEASE_GATE_OK);
	ck_assert_int_eq(lease_gate_mode(0160000, true), LEASE_GATE_GITLINK);
	ck_assert_int_eq(lease_gate_mode(0040000, true), LEASE_GATE_BAD_MODE);
	ck_assert_int_eq(lease_gate_mode(0100664, false), LEASE_GATE_BAD_MODE);
	ck_assert_int_eq(lease_gate_mode(0100777, false), LEASE_GATE_BAD_MODE);
	ck_assert_int_eq(lease_gate_mode(0, false), LEASE_GATE_BAD_MODE);

	ck_assert_int_eq(lease_gate_file_mode(S_IFREG | 0644, &g),
	    LEASE_GATE_OK);
	ck_assert_uint_eq(g, 0100644);
	ck_assert_int_eq(lease_gate_file_mode(S_IFREG | 0755, &g),
	    LEASE_GATE_OK);
	ck_assert_uint_eq(g, 0100755);
	ck_assert_int_eq(lease_gate_file_mode(S_IFREG | 0600, &g),
	    LEASE_GATE_OK);
	ck_assert_uint_eq(g, 0100644);
	ck_assert_int_eq(lease_gate_file_mode(S_IFREG | 0700, &g),
	    LEASE_GATE_OK);
	ck_assert_uint_eq(g, 0100755);
	ck_assert_int_eq(lease_gate_file_mode(S_IFREG | 0444, &g),
	    LEASE_GATE_OK);
	ck_assert_uint_eq(g, 0100644);
	ck_assert_int_eq(lease_gate_file_mode(S_IFREG | 0777, &g),
	    LEASE_GATE_BAD_MODE);
	ck_assert_uint_eq(g, 0);
	ck_assert_int_eq(lease_gate_file_mode(S_IFREG | 0666, NULL),
	    LEASE_GATE_BAD_MODE);
	ck_assert_int_eq(lease_gate_file_mode(S_IFREG | 0664, NULL),
	    LEASE_GATE_BAD_MODE);
	ck_assert_int_eq(lease_gate_file_mode(S_IFREG | 0000, NULL),
	    LEASE_GATE_BAD_MODE);
	ck_assert_int_eq(lease_gate_file_mode(S_IFREG | 0244, NULL),
	    LEASE_GATE_BAD_MODE);
	ck_assert_int_eq(lease_gate_file_mode(S_IFREG | 04755, NULL),
	    LEASE_GATE_BAD_MODE);
	ck_assert_int_eq(lease_gate_file_mode(S_IFREG | 02755, NULL),
	    LEASE_GATE_BAD_MODE);
	ck_assert_int_eq(lease_gate_file_mode(S_IFREG | 01644, NULL),
	    LEASE_GATE_BAD_MODE);
	ck_assert_int_eq(lease_gate_file_mode(S_IFLNK | 0777, NULL),
	    LEASE_GATE_SYMLINK);
	ck_assert_int_eq(lease_gate_file_mode(S_IFCHR | 0666, NULL),
	    LEASE_GATE_DEVICE);
	ck_assert_int_eq(lease_gate_file_mode(S_IFBLK | 0660, NULL),
	    LEASE_GATE_DEVICE);
	ck_assert_int_eq(lease_gate_file_mode(S_IFIFO | 0644, NULL),
	    LEASE_GATE_FIFO);
	ck_assert_int_eq(lease_gate_file_mode(S_IFSOCK | 0755, NULL),
	    LEASE_GATE_SOCKET);
	ck_assert_int_eq(lease_gate_file_mode(S_IFDIR | 0755, NULL),
	    LEASE_GATE_BAD_MODE);
}
END_TEST

struct fcase {
	const char *path;
	unsigned want;
};

static const struct fcase flagcases[] = {
	{ "src/main.c", 0 },
	{ "README.md", 0 },
	{ ".github/workflows/ci.yml", LEASE_FLAG_CI },
	{ ".GitHub/Workflows/release.yaml", LEASE_FLAG_CI },
	{ ".gitlab-ci.yml", LEASE_FLAG_CI },
	{ ".circleci/config.yml", LEASE_FLAG_CI },
	{ "Jenkinsfile", LEASE_FLAG_CI },
	{ ".gitattributes", LEASE_FLAG_GIT_CONFIG },
	{ "sub/.gitattributes", LEASE_FLAG_GIT_CONFIG },
	{ ".gitmodules", LEASE_FLAG_GIT_CONFIG },
	{ ".gitignore", LEASE_FLAG_GIT_CONFIG },
	{ ".vscode/settings.json", LEASE_FLAG_EDITOR },
	{ ".idea/workspace.xml", LEASE_FLAG_EDITOR },
	{ ".editorconfig", LEASE_FLAG_EDITOR },
	{ "x.code-workspace", LEASE_FLAG_EDITOR },
	{ ".claude/settings.json", LEASE_FLAG_AGENT },
	{ ".cursor/rules/a.mdc", LEASE_FLAG_AGENT },
	{ "AGENTS.md", LEASE_FLAG_AGENT },
	{ "CLAUDE.md", LEASE_FLAG_AGENT },
	{ "sub/claude.md", LEASE_FLAG_AGENT },
	{ ".cursorrules", LEASE_FLAG_AGENT },
	{ ".mcp.json", LEASE_FLAG_AGENT },
	{ ".github/copilot-instructions.md", LEASE_FLAG_AGENT },
	{ ".bashrc", LEASE_FLAG_SHELL },
	{ "home/.zshrc", LEASE_FLAG_SHELL },
	{ ".profile", LEASE_FLAG_SHELL },
	{ ".envrc", LEASE_FLAG_SHELL },
	{ ".husky/pre-commit", LEASE_FLAG_HOOKS },
	{ ".pre-commit-config.yaml", LEASE_FLAG_HOOKS },
	{ "Makefile", LEASE_FLAG_BUILD },
	{ "sub/GNUmakefile", LEASE_FLAG_BUILD },
	{ "rules.mk", LEASE_FLAG_BUILD },
	{ "CMakeLists.txt", LEASE_FLAG_BUILD },
	{ "cmake/x.cmake", LEASE_FLAG_BUILD },
	{ "package.json", LEASE_FLAG_BUILD },
	{ "setup.py", LEASE_FLAG_BUILD },
	{ "pyproject.toml", LEASE_FLAG_BUILD },
	{ "Cargo.toml", LEASE_FLAG_BUILD },
	{ "Dockerfile", LEASE_FLAG_BUILD },
	{ "tests/test_a.py", LEASE_FLAG_TEST },
	{ "src/a_test.go", LEASE_FLAG_TEST },
	{ "web/a.test.js", LEASE_FLAG_TEST },
	{ "spec/x_spec.rb", LEASE_FLAG_TEST },
	{ "test_util.c", LEASE_FLAG_TEST },
	{ "run.sh", LEASE_FLAG_SCRIPT },
	{ "scripts/release", LEASE_FLAG_SCRIPT },
	{ "bin/tool", LEASE_FLAG_SCRIPT },
	{ ".corral/policy.ini", LEASE_FLAG_POLICY },
	{ "corral.ini", LEASE_FLAG_POLICY },
	{ "tests/conftest.py", LEASE_FLAG_TEST | LEASE_FLAG_BUILD },
	{ "scripts/test.sh", LEASE_FLAG_SCRIPT },
	{ ".github/workflows/x.sh", LEASE_FLAG_CI | LEASE_FLAG_SCRIPT },
};

START_TEST(test_gate_flags)
{
	const struct fcase *c = &flagcases[_i];
	unsigned got = lease_gate_flags(c->path, lease_result_flag_rules_shipped(), NULL, 0);

	ck_assert_msg(got == c->want, "%s: got %#x want %#x", c->path, got,
	    c->want);
}
END_TEST

START_TEST(test_gate_flag_names)
{
	unsigned b;

	for (b = 1; b < 1u << LEASE_FLAG_COUNT; b <<= 1)
		ck_assert_str_ne(lease_gate_flag_name(b), "?");
	ck_assert_str_eq(lease_gate_flag_name(LEASE_FLAG_CI), "ci");
	ck_assert_str_eq(lease_gate_flag_name(LEASE_FLAG_CHECK),
	    "check_input");
	ck_assert_str_eq(lease_gate_flag_name(3), "?");
	ck_assert_uint_eq(LEASE_FLAGS_SENSITIVE & LEASE_FLAGS_EXECUTED, 0);
	ck_assert_uint_eq(LEASE_FLAGS_SENSITIVE | LEASE_FLAGS_EXECUTED,
	    (1u << LEASE_FLAG_COUNT) - 1);
	for (b = 0; b < LEASE_GATE_REASON_COUNT; b++)
		ck_assert_str_ne(lease_gate_reason_name(b), "?");
	ck_assert_str_eq(lease_gate_reason_name(LEASE_GATE_CHANGED),
	    "changed_during_extraction");
	ck_assert_str_eq(lease_gate_reason_name(LEASE_GATE_REASON_COUNT), "?");
}
END_TEST

/*
 * Names that are one file on macOS and Windows: case twins and NFC/NFD
 * twins, and everything below twin directories.
 */
START_TEST(test_gate_twins)
{
	static const char *const tree[] = {
		"README.md", "readme.md",
		"caf\xc3\xa9.txt", "cafe\xcc\x81.txt",
		"Docs/a.md", "docs/b.md",
		"src/main.c", "src/Main.h", "src/util.c",
		"\xc3\x85ngstr\xc3\xb6m", "A\xcc\x8angstro\xcc\x88M",
		"x/y/Z.txt",
	};
	static const bool want[] = {
		true, true, true, true, true, true, false, false, false, true,
		true, false,
	};
	bool got[sizeof tree / sizeof tree[0]];
	size_t n = sizeof tree / sizeof tree[0];

	ck_assert_int_eq(lease_gate_twins(tree, n, got), 0);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(got[i] == want[i], "%s: twin %d", tree[i],
		    got[i]);
	ck_assert_int_eq(lease_gate_twins(tree, 0, got), 0);
	ck_assert_str_eq(lease_gate_flag_name(LEASE_FLAG_TWIN), "name_twin");
	ck_assert_uint_ne(LEASE_FLAGS_SENSITIVE & LEASE_FLAG_TWIN, 0);
	ck_assert_str_eq(lease_gate_reason_name(LEASE_GATE_INVISIBLE),
	    "invisible_char");
}
END_TEST

/* Config-as-code that tools execute, across ecosystems: all flagged. */
START_TEST(test_gate_flags_executed_config)
{
	static const char *const exec[] = {
		".pylintrc", ".bazelrc", ".eslintrc.js", "web/eslint.config.mjs",
		"jest.config.js", "vite.config.ts", "webpack.config.js",
		"babel.config.js", ".babelrc", "prettier.config.js",
		".prettierrc.cjs", ".mocharc.js", "Vagrantfile", "tasks.py",
		"fabfile.py", ".gdbinit", ".lldbinit", ".jvmopts",
		"src/App/App.csproj", "action.yml", ".github/CODEOWNERS",
		"turbo.json", "Pipfile", "lib/sitecustomize.py", "conanfile.py",
		"Tiltfile", "vitest.config.ts", "rollup.config.mjs",
		"karma.conf.js", "build.sbt", "mypy.ini", "pkgs/tool.nix",
	};
	const struct lease_flag_rules *r = lease_result_flag_rules_shipped();

	ck_assert_ptr_nonnull(r);
	ck_assert_uint_gt(r->n, 300);
	ck_assert_uint_eq(sizeof exec / sizeof exec[0], 32);
	for (size_t i = 0; i < sizeof exec / sizeof exec[0]; i++)
		ck_assert_msg(lease_gate_flags(exec[i], r, NULL, 0) != 0,
		    "%s is not flagged", exec[i]);
	ck_assert_uint_eq(lease_gate_flags("docs/guide.md", r, NULL, 0), 0);
	ck_assert_uint_eq(lease_gate_flags("src/lib.rs", r, NULL, 0), 0);
	ck_assert_uint_eq(lease_gate_flags("README.md", NULL, NULL, 0), 0);
}
END_TEST

/* The operator's patterns: added, and a bad line named by file:line. */
START_TEST(test_gate_flags_operator)
{
	struct lease_flag_rules r = { NULL, 0, 0 };
	char err[256];

	ck_assert_int_eq(lease_gate_rules_parse(&r, "# mine\n\nbuild *.weird\n"
	    "  ci\t/deploy/  \nscript tools/run-*\n", "op", err, sizeof err),
	    0);
	ck_assert_uint_eq(r.n, 3);
	ck_assert_uint_eq(lease_gate_flags("a/b.WEIRD", &r, NULL, 0),
	    LEASE_FLAG_BUILD);
	ck_assert_uint_eq(lease_gate_flags("deploy/x.yml", &r, NULL, 0),
	    LEASE_FLAG_CI);
	ck_assert_uint_eq(lease_gate_flags("x/deploy/y", &r, NULL, 0), 0);
	ck_assert_uint_eq(lease_gate_flags("tools/run-all", &r, NULL, 0),
	    LEASE_FLAG_SCRIPT);
	ck_assert_uint_eq(lease_gate_flags("x/tools/run-all", &r, NULL, 0), 0);
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "nosuch x\n", "op:1: unknown flag" },
		{ "build x\ncheck_input y\n", "op:2: unknown flag" },
		{ "build x\nname_twin y\n", "op:2: unknown flag" },
		{ "build\n", "op:1: one pattern a line" },
		{ "build a b\n", "op:1: one pattern a line" },
		{ "\n\nbuild ../x\n", "op:3: . or .." },
		{ "build a//b\n", "op:1: empty component" },
		{ "build /\n", "op:1: bad pattern" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_int_eq(lease_gate_rules_parse(&r, bad[i].text, "op",
		    err, sizeof err), -EINVAL);
		ck_assert_msg(strstr(err, bad[i].want) != NULL, "'%s' lacks "
		    "'%s'", err, bad[i].want);
		ck_assert_uint_eq(r.n, 3);	/* nothing of a bad file kept */
	}
	lease_gate_rules_free(&r);
	ck_assert_uint_eq(r.n, 0);
}
END_TEST

START_TEST(test_gate_check_inputs)
{
	char *make[] = { "make", "-C", "build", "check", NULL };
	char *script[] = { "./scripts/test.sh", "--fast", NULL };
	char *shc[] = { "/bin/sh", "-c", "cd src && make test; ./run.sh",
	    NULL };
	char *py[] = { "python3", "-m", "pytest", "tests/unit", NULL };
	char *env[] = { "npm", "test", "--prefix=web", NULL };
	const char *inputs[] = { "*.conf", "data/**", NULL };
	struct lease_check c[] = {
		{ "make", make, NULL },
		{ "script", script, NULL },
		{ "shc", shc, NULL },
		{ "py", py, inputs },
		{ "npm", env, NULL },
	};

	ck_assert(lease_gate_check_input(&c[0], "Makefile"));
	ck_assert(lease_gate_check_input(&c[0], "sub/rules.mk"));
	ck_assert(lease_gate_check_input(&c[0], "build/x.o"));
	ck_assert(!lease_gate_check_input(&c[0], "src/main.c"));
	/* a make target is also a file make would look at: conservative */
	ck_assert(lease_gate_check_input(&c[0], "check"));
	ck_assert(lease_gate_check_input(&c[1], "scripts/test.sh"));
	ck_assert(!lease_gate_check_input(&c[1], "scripts/other.sh"));
	ck_assert(lease_gate_check_input(&c[2], "run.sh"));
	ck_assert(lease_gate_check_input(&c[2], "src/x.c"));	/* 'src' */
	ck_assert(lease_gate_check_input(&c[2], "Makefile"));
	ck_assert(!lease_gate_check_input(&c[2], "docs/a.md"));
	ck_assert(lease_gate_check_input(&c[3], "tests/unit/test_a.py"));
	ck_assert(lease_gate_check_input(&c[3], "setup.cfg"));
	ck_assert(lease_gate_check_input(&c[3], "x/y.conf"));
	ck_assert(lease_gate_check_input(&c[3], "data/a/b.csv"));
	ck_assert(!lease_gate_check_input(&c[3], "tests/other/x.py"));
	ck_assert(lease_gate_check_input(&c[4], "package.json"));
	ck_assert(lease_gate_check_input(&c[4], "web/index.js"));
	ck_assert(!lease_gate_check_input(&c[4], "src/a.c"));
	ck_assert_uint_eq(lease_gate_flags("src/main.c", NULL, c, 5),
	    LEASE_FLAG_CHECK);
	ck_assert_uint_eq(lease_gate_flags("docs/a.md", NULL, c, 5), 0);
}
END_TEST

struct gcase {
	const char *pat, *path;
	bool want;
};

static const struct gcase globs[] = {
	{ "*.o", "a.o", true },
	{ "*.o", "dir/a.o", false },
	{ "a?c", "abc", true },
	{ "a?c", "a/c", false },
	{ "[abc].x", "b.x", true },
	{ "[!abc].x", "b.x", false },
	{ "[^abc].x", "d.x", true },
	{ "[a-f]*", "cat", true },
	{ "[a-f]*", "zoo", false },
	{ "[]]", "]", true },
	{ "[a", "a", false },
	{ "\\*", "*", true },
	{ "\\*", "a", false },
	{ "**/foo", "foo", true },
	{ "**/foo", "a/b/foo", true },
	{ "**/foo", "a/b/foox", false },
	{ "**", "a/b", true },
	{ "a/**", "a", false },
	{ "*.c", "", false },
	{ "", "", true },
	{ "a/**", "a/b/c", true },
	{ "a/**", "b/c", false },
	{ "a/**/b", "a/b", true },
	{ "a/**/b", "a/x/y/b", true },
	{ "a/**/b", "a/x/y/c", false },
	{ "build", "build", true },
	{ "*", "anything", true },
	{ "*", "a/b", false },
	{ "a*b*c*d*e*f*g*h", "aXbXcXdXeXfXgXh", true },
	{ "a*a*a*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	    false },
};

START_TEST(test_gate_glob)
{
	const struct gcase *c = &globs[_i];

	ck_assert_msg(lease_gate_glob(c->pat, c->path) == c->want,
	    "'%s' vs '%s'", c->pat, c->path);
}
END_TEST

static const char small_patch[] =
    "diff --git a/a.txt b/a.txt\n"
    "index 1111111..2222222 100644\n"
    "--- a/a.txt\n"
    "+++ b/a.txt\n"
    "@@ -1 +1,2 @@\n"
    " one\n"
    "+two\n"
    "diff --git a/b.txt b/b.txt\n"
    "new file mode 100644\n"
    "index 0000000..3333333\n"
    "--- /dev/null\n"
    "+++ b/b.txt\n"
    "@@ -0,0 +1 @@\n"
    "+++ not a header\n";

START_TEST(test_gate_scan)
{
	struct lease_result_policy p;
	struct lease_gate_scan sc;
	static const char bin[] =
	    "diff --git a/x b/x\nnew file mode 100644\nindex 0..1\n"
	    "GIT binary patch\nliteral 99999999\nzcmV\n\n"
	    "literal 0\nHcmV?d00001\n";
	static const char nul[] = "diff --git a/x b/x\n@@ -0,0 +1 @@\n+a\0b\n";
	/* a NUL inside a binary patch (base85 has none) */
	static const char binnul[] =
	    "diff --git a/x b/x\nnew file mode 100644\nindex 0..1\n"
	    "GIT binary patch\nliteral 1\nI\0cmV\n\nliteral 0\nHcmV?d00001\n";

	lease_result_policy_defaults(&p);
	ck_assert_int_eq(lease_gate_patch_scan(small_patch,
	    strlen(small_patch), &p, &sc), LEASE_GATE_OK);
	ck_assert_uint_eq(sc.files, 2);
	ck_assert_uint_eq(sc.hunks, 2);
	/* "+two\n" and "+++ not a header\n" are content lines */
	ck_assert_uint_eq(sc.added_bytes, 4 + 16);
	ck_assert_int_eq(lease_gate_patch_scan("", 0, &p, &sc),
	    LEASE_GATE_OK);

	p.max_patch_bytes = 10;
	ck_assert_int_eq(lease_gate_patch_scan(small_patch,
	    strlen(small_patch), &p, &sc), LEASE_GATE_PATCH_TOO_LARGE);
	lease_result_policy_defaults(&p);
	p.max_files = 1;
	ck_assert_int_eq(lease_gate_patch_scan(small_patch,
	    strlen(small_patch), &p, &sc), LEASE_GATE_TOO_MANY_FILES);
	lease_result_policy_defaults(&p);
	p.max_file_bytes = 10;
	ck_assert_int_eq(lease_gate_patch_scan(small_patch,
	    strlen(small_patch), &p, &sc), LEASE_GATE_FILE_TOO_LARGE);
	lease_result_policy_defaults(&p);
	p.max_total_bytes = 5;
	ck_assert_int_eq(lease_gate_patch_scan(small_patch,
	    strlen(small_patch), &p, &sc), LEASE_GATE_TOTAL_TOO_LARGE);

	lease_result_policy_defaults(&p);
	ck_assert_int_eq(lease_gate_patch_scan(bin, sizeof bin - 1, &p, &sc),
	    LEASE_GATE_BINARY);
	p.allow_binary = true;
	ck_assert_int_eq(lease_gate_patch_scan(bin, sizeof bin - 1, &p, &sc),
	    LEASE_GATE_FILE_TOO_LARGE);
	p.max_file_bytes = 100000000;
	ck_assert_int_eq(lease_gate_patch_scan(bin, sizeof bin - 1, &p, &sc),
	    LEASE_GATE_OK);
	ck_assert_uint_eq(sc.binary_files, 1);
	ck_assert_int_eq(lease_gate_patch_scan(nul, sizeof nul - 1, &p, &sc),
	    LEASE_GATE_PATCH_MALFORMED);
	ck_assert_int_eq(lease_gate_patch_scan(binnul, sizeof binnul - 1, &p,
	    &sc), LEASE_GATE_PATCH_MALFORMED);
}
END_TEST

/* Header lines as written, before libgit2 normalises anything. */
static const struct {
	const char *text;
	enum lease_gate_reason want;
} headers[] = {
	{ "--- a/x\n+++ b/x\n", LEASE_GATE_OK },
	{ "--- /dev/null\n+++ b/new\n", LEASE_GATE_OK },
	{ "--- a/x\t2024-01-01\n+++ b/x\n", LEASE_GATE_OK },
	{ "+++ b//etc/evil\n", LEASE_GATE_ABSOLUTE },
	{ "+++ b/../x\n", LEASE_GATE_ESCAPE },
	{ "+++ b/.git/config\n", LEASE_GATE_GIT_PATH },
	{ "+++ b/.GIT/config\n", LEASE_GATE_GIT_PATH },
	{ "+++ x\n", LEASE_GATE_PATCH_MALFORMED },
	{ "--- b/x\n", LEASE_GATE_PATCH_MALFORMED },
	{ "+++ \"b/esc\\033]52\"\n", LEASE_GATE_CONTROL_CHAR },
	{ "+++ \"b/nl\\nx\"\n", LEASE_GATE_NEWLINE },
	{ "+++ \"b/caf\\303\\251\"\n", LEASE_GATE_OK },
	{ "+++ \"b/unterminated\n", LEASE_GATE_PATCH_MALFORMED },
	{ "+++ b/-rf\n", LEASE_GATE_LEADING_DASH },
	{ "rename from a\nrename to b\n", LEASE_GATE_PATCH_MALFORMED },
	{ "new mode 100777\n", LEASE_GATE_BAD_MODE },
	{ "new file mode 120000\n", LEASE_GATE_SYMLINK },
	{ "new file mode 160000\n", LEASE_GATE_GITLINK },
	{ "index 1234567..89abcde 100644\n", LEASE_GATE_OK },
	{ "index 1234567..89abcde 100664\n", LEASE_GATE_BAD_MODE },
	{ "index 1234567..89abcde\n", LEASE_GATE_OK },
	{ "new mode 10064\n", LEASE_GATE_BAD_MODE },
	/* inside a hunk, the same text is content */
	{ "@@ -1 +1 @@\n--- a/../x\n++++ b//y\n", LEASE_GATE_OK },
};

START_TEST(test_gate_scan_headers)
{
	struct lease_result_policy p;
	struct lease_gate_scan sc;
	enum lease_gate_reason got;

	lease_result_policy_defaults(&p);
	got = lease_gate_patch_scan(headers[_i].text, strlen(headers[_i].text),
	    &p, &sc);
	ck_assert_msg(got == headers[_i].want, "case %d: got %s want %s", _i,
	    lease_gate_reason_name(got),
	    lease_gate_reason_name(headers[_i].want));
}
END_TEST

static struct lease_manifest *
sample_manifest(void)
{
	struct lease_manifest *m = calloc(1, sizeof *m);
	struct lease_manifest_file *f;

	ck_assert_ptr_nonnull(m);
	m->version = 1;
	memset(m->base, 'a', 40);
	memset(m->base_tree, 'b', 40);
	memset(m->tree, 'c', 40);
	memset(m->patch_sha256, 'd', 64);
	m->patch_bytes = 123;
	m->nfiles = 3;
	m->files = calloc(3, sizeof *m->files);
	f = &m->files[0];
	f->path = strdup("a.txt");
	f->status = 'M';
	f->old_mode = f->new_mode = 0100644;
	f->old_size = 4;
	f->new_size = 8;
	memset(f->old_blob, '1', 40);
	memset(f->new_blob, '2', 40);
	memset(f->sha256, 'e', 64);
	f->insertions = 1;
	f->flags = LEASE_FLAG_BUILD | LEASE_FLAG_CHECK;
	f = &m->files[1];
	f->path = strdup("b/new.sh");
	f->status = 'A';
	f->new_mode = 0100755;
	f->new_size = 10;
	memset(f->new_blob, '3', 40);
	memset(f->sha256, 'f', 64);
	f->insertions = 2;
	f = &m->files[2];
	f->path = strdup("gone");
	f->status = 'D';
	f->old_mode = 0100644;
	f->old_size = 5;
	memset(f->old_blob, '4', 40);
	f->deletions = 1;
	m->added = m->modified = m->deleted = 1;
	m->insertions = 3;
	m->deletions = 1;
	m->new_bytes = 18;
	return m;
}

START_TEST(test_gate_manifest_roundtrip)
{
	struct lease_manifest *m = sample_manifest(), *back = NULL;
	char *text = lease_manifest_dump(m), *again;

	ck_assert_ptr_nonnull(text);
	ck_assert_int_eq(lease_manifest_parse(text, strlen(text), &back), 0);
	ck_assert_uint_eq(back->nfiles, 3);
	ck_assert_str_eq(back->files[1].path, "b/new.sh");
	ck_assert_int_eq(back->files[1].status, 'A');
	ck_assert_uint_eq(back->files[1].new_mode, 0100755);
	ck_assert_uint_eq(back->files[0].flags, LEASE_FLAG_BUILD |
	    LEASE_FLAG_CHECK);
	ck_assert_str_eq(back->patch_sha256, m->patch_sha256);
	ck_assert_uint_eq(back->new_bytes, 18);
	again = lease_manifest_dump(back);
	ck_assert_str_eq(again, text);
	free(again);
	free(text);
	lease_manifest_free(back);
	lease_manifest_free(m);
	lease_manifest_free(NULL);
}
END_TEST

/* Each edit of the sample's JSON text must make parsing fail. */
static const char *const breakers[][2] = {
	{ "\"version\": 1", "\"version\": 2" },
	{ "\"a.txt\"", "\"../a.txt\"" },
	{ "\"a.txt\"", "\".git/config\"" },
	{ "\"a.txt\"", "\"zzz\"" },			/* unsorted */
	{ "\"gone\"", "\"b/new.sh\"" },			/* duplicate */
	{ "\"added\"", "\"renamed\"" },
	{ "\"100755\"", "\"100855\"" },
	{ "\"100755\"", "null" },
	{ "\"files\": 3", "\"files\": 4" },
	{ "\"new_bytes\": 18", "\"new_bytes\": 19" },
	{ "\"insertions\": 3", "\"insertions\": 2" },
	{ "\"check_input\"", "\"bogus\"" },
	{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "AAAA" },
	{ "\"binary\": false", "\"binary\": 0" },
	{ "\"deleted\": 1", "\"deleted\": -1" },
};

static char *
replace(const char *text, const char *a, const char *b)
{
	const char *at = strstr(text, a);
	size_t n = strlen(text) - strlen(a) + strlen(b) + 1;
	char *out;

	ck_assert_msg(at != NULL, "'%s' not in the sample", a);
	out = malloc(n);
	memcpy(out, text, (size_t)(at - text));
	strcpy(out + (at - text), b);
	strcat(out, at + strlen(a));
	return out;
}

START_TEST(test_gate_manifest_strict)
{
	struct lease_manifest *m = sample_manifest(), *back = NULL;
	char *text = lease_manifest_dump(m);
	char *bad = replace(text, breakers[_i][0], breakers[_i][1]);

	ck_assert_int_eq(lease_manifest_parse(bad, strlen(bad), &back),
	    -EINVAL);
	ck_assert_ptr_null(back);
	free(bad);
	free(text);
	lease_manifest_free(m);
}
END_TEST

START_TEST(test_gate_manifest_garbage)
{
	struct lease_manifest *m = NULL;

	ck_assert_int_eq(lease_manifest_parse("", 0, &m), -EINVAL);
	ck_assert_int_eq(lease_manifest_parse("[]", 2, &m), -EINVAL);
	ck_assert_int_eq(lease_manifest_parse("{\"version\":1}", 13, &m),
	    -EINVAL);
	ck_assert_int_eq(lease_manifest_parse("{\"version\":1,\"version\":1}",
	    25, &m), -EINVAL);
	ck_assert_int_eq(lease_manifest_parse(NULL, 0, &m), -EINVAL);
	ck_assert_ptr_null(m);
}
END_TEST

START_TEST(test_gate_report)
{
	struct lease_gate_report r;
	size_t i;

	memset(&r, 0, sizeof r);
	ck_assert(!lease_gate_report_has(&r, LEASE_GATE_SYMLINK));
	ck_assert_int_eq(lease_gate_report_add(&r, LEASE_GATE_SYMLINK, "l",
	    NULL), 0);
	ck_assert(lease_gate_report_has(&r, LEASE_GATE_SYMLINK));
	for (i = 0; i < LEASE_GATE_MAX_FINDINGS + 10; i++)
		ck_assert_int_eq(lease_gate_report_add(&r, LEASE_GATE_FIFO,
		    NULL, "d"), 0);
	ck_assert_uint_eq(r.n, LEASE_GATE_MAX_FINDINGS);
	ck_assert_uint_eq(r.dropped, 11);
	ck_assert_str_eq(r.v[0].path, "l");
	lease_gate_report_free(&r);
	ck_assert_uint_eq(r.n, 0);
	lease_gate_report_free(NULL);
}
END_TEST

START_TEST(test_gate_report_ok_asserts)
{
	struct lease_gate_report r;

	memset(&r, 0, sizeof r);
	/* LEASE_GATE_OK is no finding: a programming error */
	if (lease_gate_report_add(&r, LEASE_GATE_OK, NULL, NULL) == 0)
		lease_gate_report_free(&r);
}
END_TEST

START_TEST(test_gate_errors_named)
{
	ck_assert_str_eq(lease_strerror(LEASE_EINVALID),
	    "result failed the import gate");
	ck_assert_str_eq(lease_strerror(LEASE_ECHECKEDOUT),
	    "target branch is checked out");
	ck_assert_str_ne(lease_strerror(LEASE_ETARGET), "unknown lease error");
	ck_assert_str_eq(lease_result_check_status_name(
	    LEASE_CHECK_UNAVAILABLE), "unavailable");
}
END_TEST

Suite *gate_suite(void);

Suite *
gate_suite(void)
{
	Suite *s = suite_create("gate");
	TCase *tc = tcase_create("Rules");

	tcase_add_loop_test(tc, test_gate_paths, 0,
	    sizeof paths / sizeof paths[0]);
	tcase_add_test(tc, test_gate_path_lengths);
	tcase_add_test(tc, test_gate_dotgit);
	tcase_add_test(tc, test_gate_modes);
	tcase_add_loop_test(tc, test_gate_flags, 0,
	    sizeof flagcases / sizeof flagcases[0]);
	tcase_add_test(tc, test_gate_flag_names);
	tcase_add_test(tc, test_gate_check_inputs);
	tcase_add_test(tc, test_gate_twins);
	tcase_add_test(tc, test_gate_flags_executed_config);
	tcase_add_test(tc, test_gate_flags_operator);
	tcase_add_loop_test(tc, test_gate_glob, 0,
	    sizeof globs / sizeof globs[0]);
	suite_add_tcase(s, tc);

	tc = tcase_create("Formats");
	tcase_add_test(tc, test_gate_scan);
	tcase_add_loop_test(tc, test_gate_scan_headers, 0,
	    sizeof headers / sizeof headers[0]);
	tcase_add_test(tc, test_gate_manifest_roundtrip);
	tcase_add_loop_test(tc, test_gate_manifest_strict, 0,
	    sizeof breakers / sizeof breakers[0]);
	tcase_add_test(tc, test_gate_manifest_garbage);
	tcase_add_test(tc, test_gate_report);
	tcase_add_test_raise_signal(tc, test_gate_report_ok_asserts, SIGABRT);
	tcase_add_test(tc, test_gate_errors_named);
	suite_add_tcase(s, tc);
	return s;
}
