/*
 * gate.c: the pure rules of the import gate (SPEC 7.2): path rules (.git
 * in any spelling, escapes, control characters, UTF-8, a leading '-'),
 * mode rules, case twins, check independence and gitignore-style
 * globbing (the pre-parse scan of a patch against the caps is
 * gate_scan.c, the review flags gate_flags.c). No I/O, no libgit2: unit-tested exhaustively and
 * fuzzed (fuzz/fuzz_patch.c).
 */
#include <assert.h>
#include <errno.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unicase.h>
#include <unictype.h>
#include <uninorm.h>

#include "lease/result/result_int.h"

static const char *const reason_names[LEASE_GATE_REASON_COUNT] = {
	[LEASE_GATE_OK] = "ok",
	[LEASE_GATE_EMPTY_PATH] = "empty_path",
	[LEASE_GATE_ABSOLUTE] = "absolute_path",
	[LEASE_GATE_ESCAPE] = "path_escape",
	[LEASE_GATE_GIT_PATH] = "git_path",
	[LEASE_GATE_LEADING_DASH] = "leading_dash",
	[LEASE_GATE_INVALID_UTF8] = "invalid_utf8",
	[LEASE_GATE_NEWLINE] = "newline",
	[LEASE_GATE_CONTROL_CHAR] = "control_char",
	[LEASE_GATE_NAME_TOO_LONG] = "name_too_long",
	[LEASE_GATE_SYMLINK] = "symlink",
	[LEASE_GATE_BEYOND_SYMLINK] = "beyond_symlink",
	[LEASE_GATE_DEVICE] = "device",
	[LEASE_GATE_FIFO] = "fifo",
	[LEASE_GATE_SOCKET] = "socket",
	[LEASE_GATE_GITLINK] = "gitlink",
	[LEASE_GATE_BAD_MODE] = "bad_mode",
	[LEASE_GATE_BINARY] = "binary",
	[LEASE_GATE_TOO_MANY_FILES] = "too_many_files",
	[LEASE_GATE_FILE_TOO_LARGE] = "file_too_large",
	[LEASE_GATE_TOTAL_TOO_LARGE] = "total_too_large",
	[LEASE_GATE_PATCH_TOO_LARGE] = "patch_too_large",
	[LEASE_GATE_CHANGED] = "changed_during_extraction",
	[LEASE_GATE_UNREADABLE] = "unreadable",
	[LEASE_GATE_PATCH_MALFORMED] = "patch_malformed",
	[LEASE_GATE_PATCH_MISMATCH] = "patch_mismatch",
	[LEASE_GATE_MANIFEST_MISMATCH] = "manifest_mismatch",
	[LEASE_GATE_LEASE_FAILED] = "lease_failed",
	[LEASE_GATE_CREDENTIAL] = "credential",
	[LEASE_GATE_INVISIBLE] = "invisible_char",
};

const char *
lease_gate_reason_name(enum lease_gate_reason r)
{
	if ((unsigned)r >= LEASE_GATE_REASON_COUNT)
		return "?";
	return reason_names[r];
}

/* ---- findings ------------------------------------------------------- */

void
lease_gate_report_free(struct lease_gate_report *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->n; i++) {
		free(r->v[i].path);
		free(r->v[i].detail);
	}
	free(r->v);
	memset(r, 0, sizeof *r);
}

int
lease_gate_report_add(struct lease_gate_report *r, enum lease_gate_reason why,
    const char *path, const char *detail)
{
	struct lease_gate_finding *f, *nv;
	size_t ncap;

	assert(r != NULL && why != LEASE_GATE_OK);
	if (r->n >= LEASE_GATE_MAX_FINDINGS) {
		r->dropped++;
		return 0;
	}
	if (r->n == r->cap) {
		ncap = r->cap ? r->cap * 2 : 8;
		if ((nv = realloc(r->v, ncap * sizeof *nv)) == NULL)
			return -ENOMEM;
		r->v = nv;
		r->cap = ncap;
	}
	f = &r->v[r->n];
	f->reason = why;
	f->path = path != NULL ? strdup(path) : NULL;
	f->detail = detail != NULL ? strdup(detail) : NULL;
	if ((path != NULL && f->path == NULL) ||
	    (detail != NULL && f->detail == NULL)) {
		free(f->path);
		free(f->detail);
		return -ENOMEM;
	}
	r->n++;
	return 0;
}

bool
lease_gate_report_has(const struct lease_gate_report *r,
    enum lease_gate_reason why)
{
	size_t i;

	for (i = 0; r != NULL && i < r->n; i++)
		if (r->v[i].reason == why)
			return true;
	return false;
}

/* ---- UTF-8 -------------------------------------------------------------- */

/*
 * One strict UTF-8 character from s[0..len): its length (1-4) and *cp, or
 * 0 when s does not start with a valid one (overlongs, surrogates and
 * values past U+10FFFF are invalid).
 */
static size_t
utf8_char(const unsigned char *s, size_t len, unsigned *cp)
{
	unsigned c = s[0], v, min;
	size_t n, i;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		v = c & 0x1f;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		v = c & 0x0f;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		v = c & 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if (len < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return n;
}

/* Code points HFS+ ignores when it compares names (as git lists them). */
static bool
hfs_ignorable(unsigned cp)
{
	return (cp >= 0x200c && cp <= 0x200f) ||
	    (cp >= 0x202a && cp <= 0x202e) ||
	    (cp >= 0x206a && cp <= 0x206f) || cp == 0xfeff;
}

int
lease__gate_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 'a' - 'A' : c;
}

bool
lease__gate_fold_path(const char *path, char *buf, size_t sz)
{
	size_t i, n = strlen(path);

	if (n >= sz)
		return false;
	for (i = 0; i <= n; i++)
		buf[i] = (char)lease__gate_lower((unsigned char)path[i]);
	return true;
}

/*
 * One backslash-free part of a component: fold it the way HFS+ compares
 * (ignorables dropped, ASCII case folded; any other non-ASCII character
 * makes it no .git), then apply NTFS's rule: ".git" or "git~1" followed
 * only by dots and spaces, up to the end or a ':' (a stream name).
 */
static bool
part_dotgit(const char *s, size_t len)
{
	char fold[16];
	size_t i = 0, n = 0, k, j;
	unsigned cp;

	while (i < len) {
		if ((k = utf8_char((const unsigned char *)s + i, len - i,
		    &cp)) == 0)
			return false;
		i += k;
		if (cp >= 0x80) {
			if (hfs_ignorable(cp))
				continue;
			return false;
		}
		if (cp == ':')
			break;	/* an NTFS stream: the name ends here */
		if (n == sizeof fold)
			return false;	/* longer than any spelling we know */
		fold[n++] = (char)lease__gate_lower((int)cp);
	}
	if (n >= 4 && memcmp(fold, ".git", 4) == 0)
		j = 4;
	else if (n >= 5 && memcmp(fold, "git~1", 5) == 0)
		j = 5;
	else
		return false;
	for (; j < n; j++)
		if (fold[j] != '.' && fold[j] != ' ')
			return false;
	return true;
}

bool
lease_gate_name_dotgit(const char *name, size_t len)
{
	size_t i = 0, j;

	assert(name != NULL || len == 0);
	while (i <= len) {
		for (j = i; j < len && name[j] != '\\'; j++)
			;
		if (part_dotgit(name + i, j - i))
			return true;
		i = j + 1;
	}
	return false;
}

/*
 * A code point that shows as nothing or reorders what follows: bidi
 * controls, zero-width and other default ignorable code points (soft
 * hyphen, fillers, variation selectors, tags), line and paragraph
 * separators. Such a name is not the name the reviewer reads.
 */
static bool
invisible(unsigned cp)
{
	return uc_is_property_bidi_control(cp) ||
	    uc_is_property_default_ignorable_code_point(cp) ||
	    cp == 0x2028 || cp == 0x2029;
}

/* The rules for one component (not empty, not "." or ".."). */
static enum lease_gate_reason
component(const char *c, size_t n)
{
	const unsigned char *s = (const unsigned char *)c;
	enum lease_gate_reason worst = LEASE_GATE_OK;
	size_t i = 0, k;
	unsigned cp;

	if (lease_gate_name_dotgit(c, n))
		return LEASE_GATE_GIT_PATH;
	if (c[0] == '-')
		return LEASE_GATE_LEADING_DASH;
	while (i < n) {
		if ((k = utf8_char(s + i, n - i, &cp)) == 0)
			return LEASE_GATE_INVALID_UTF8;
		i += k;
		if (cp == '\n')
			return LEASE_GATE_NEWLINE;
		if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f))
			worst = LEASE_GATE_CONTROL_CHAR;
		else if (cp >= 0x80 && invisible(cp) &&
		    worst == LEASE_GATE_OK)
			worst = LEASE_GATE_INVISIBLE;
	}
	if (worst != LEASE_GATE_OK)
		return worst;
	if (n > LEASE__GATE_NAME_MAX)
		return LEASE_GATE_NAME_TOO_LONG;
	return LEASE_GATE_OK;
}

enum lease_gate_reason
lease_gate_path(const char *p, size_t len)
{
	enum lease_gate_reason r;
	size_t i = 0, j;

	assert(p != NULL || len == 0);
	if (len == 0)
		return LEASE_GATE_EMPTY_PATH;
	if (p[0] == '/')
		return LEASE_GATE_ABSOLUTE;
	for (;;) {
		for (j = i; j < len && p[j] != '/'; j++)
			;
		if (j == i || (j - i == 1 && p[i] == '.') ||
		    (j - i == 2 && p[i] == '.' && p[i + 1] == '.'))
			return LEASE_GATE_ESCAPE;
		if ((r = component(p + i, j - i)) != LEASE_GATE_OK)
			return r;
		if (j == len)
			break;
		i = j + 1;
	}
	if (len > LEASE__GATE_PATH_MAX)
		return LEASE_GATE_NAME_TOO_LONG;
	return LEASE_GATE_OK;
}

/* ---- twins --------------------------------------------------------------- */

/* A path or one of its directories: folded and as written. */
struct twin_ent {
	const uint8_t *key;
	size_t klen;
	const char *name;
	size_t nlen;
	size_t idx;
};

static int
bytes_cmp(const void *a, size_t an, const void *b, size_t bn)
{
	int c = memcmp(a, b, an < bn ? an : bn);

	if (c != 0)
		return c;
	return an < bn ? -1 : an > bn;
}

static int
twin_cmp(const void *a, const void *b)
{
	const struct twin_ent *x = a, *y = b;
	int c = bytes_cmp(x->key, x->klen, y->key, y->klen);

	return c != 0 ? c : bytes_cmp(x->name, x->nlen, y->name, y->nlen);
}

static int
twin_push(struct twin_ent **v, size_t *n, size_t *cap, struct twin_ent e)
{
	struct twin_ent *nv;

	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		if ((nv = realloc(*v, *cap * sizeof *nv)) == NULL)
			return -ENOMEM;
		*v = nv;
	}
	(*v)[(*n)++] = e;
	return 0;
}

/*
 * Each path folded once (case folding, then NFC: libunistring); '/' folds
 * to itself, so the k-th '/' of the key ends the same directory as the
 * k-th of the name. Sorted by key, a run of one key with two spellings is
 * a twin: every path in it is marked.
 */
int
lease_gate_twins(const char *const *paths, size_t n, bool *twin)
{
	uint8_t **keys;
	struct twin_ent *v = NULL;
	size_t nv = 0, cap = 0, i, j, klen;
	int rc = 0;

	assert(paths != NULL || n == 0);
	if ((keys = calloc(n > 0 ? n : 1, sizeof *keys)) == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const char *p = paths[i];
		size_t plen = strlen(p), a = 0, b = 0;

		twin[i] = false;
		keys[i] = u8_casefold((const uint8_t *)p, plen, NULL,
		    UNINORM_NFC, NULL, &klen);
		if (keys[i] == NULL) {
			if (errno == ENOMEM) {
				rc = -ENOMEM;
				goto out;
			}
			continue;	/* not UTF-8: the path rules refuse it */
		}
		for (;;) {
			while (a < plen && p[a] != '/')
				a++;
			while (b < klen && keys[i][b] != '/')
				b++;
			if ((a == plen) != (b == klen))
				break;	/* cannot happen; never a guess */
			if ((rc = twin_push(&v, &nv, &cap, (struct twin_ent){
			    keys[i], b, p, a, i })) < 0)
				goto out;
			if (a == plen)
				break;
			a++;
			b++;
		}
	}
	if (nv > 1)
		qsort(v, nv, sizeof *v, twin_cmp);
	for (i = 0; i < nv; i = j) {
		for (j = i + 1; j < nv && bytes_cmp(v[i].key, v[i].klen,
		    v[j].key, v[j].klen) == 0; j++)
			;
		if (bytes_cmp(v[i].name, v[i].nlen, v[j - 1].name,
		    v[j - 1].nlen) == 0)
			continue;
		for (size_t k = i; k < j; k++)
			twin[v[k].idx] = true;
	}
out:
	for (i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
	free(v);
	return rc;
}

/* ---- modes -------------------------------------------------------------- */

enum lease_gate_reason
lease_gate_mode(unsigned mode, bool allow_symlinks)
{
	switch (mode) {
	case 0100644:
	case 0100755:
		return LEASE_GATE_OK;
	case 0120000:
		return allow_symlinks ? LEASE_GATE_OK : LEASE_GATE_SYMLINK;
	case 0160000:
		return LEASE_GATE_GITLINK;
	default:
		return LEASE_GATE_BAD_MODE;
	}
}

enum lease_gate_reason
lease_gate_file_mode(unsigned st_mode, unsigned *git_mode)
{
	unsigned perm = st_mode & 07777;

	if (git_mode != NULL)
		*git_mode = 0;
	if (S_ISLNK(st_mode))
		return LEASE_GATE_SYMLINK;
	if (S_ISCHR(st_mode) || S_ISBLK(st_mode))
		return LEASE_GATE_DEVICE;
	if (S_ISFIFO(st_mode))
		return LEASE_GATE_FIFO;
	if (S_ISSOCK(st_mode))
		return LEASE_GATE_SOCKET;
	if (!S_ISREG(st_mode))
		return LEASE_GATE_BAD_MODE;
	if ((perm & 07000) != 0 || (perm & 0022) != 0 || (perm & 0400) == 0)
		return LEASE_GATE_BAD_MODE;
	if (git_mode != NULL)
		*git_mode = (perm & 0100) ? 0100755 : 0100644;
	return LEASE_GATE_OK;
}

/* ---- globbing ------------------------------------------------------------ */

/*
 * One character of a pattern component at p[*pi] against c: '?', a
 * "[...]" class ('!' or '^' negates, ranges, a leading ']' literal), a
 * '\'-escaped character or a literal. Advances *pi on a match.
 */
static bool
one(const char *p, size_t pn, size_t *pi, char c)
{
	size_t i = *pi;
	bool neg = false, hit = false;
	unsigned char lo, hi, u = (unsigned char)c;

	if (p[i] == '?') {
		*pi = i + 1;
		return true;
	}
	if (p[i] == '[') {
		i++;
		if (i < pn && (p[i] == '!' || p[i] == '^')) {
			neg = true;
			i++;
		}
		if (i < pn && p[i] == ']') {
			hit = c == ']';
			i++;
		}
		while (i < pn && p[i] != ']') {
			if (p[i] == '\\' && i + 1 < pn)
				i++;
			lo = (unsigned char)p[i++];
			if (i + 1 < pn && p[i] == '-' && p[i + 1] != ']') {
				i++;
				if (p[i] == '\\' && i + 1 < pn)
					i++;
				hi = (unsigned char)p[i++];
				if (u >= lo && u <= hi)
					hit = true;
			} else if (u == lo) {
				hit = true;
			}
		}
		if (i >= pn)
			return false;	/* unterminated: matches nothing */
		if (hit == neg)
			return false;
		*pi = i + 1;
		return true;
	}
	if (p[i] == '\\' && i + 1 < pn)
		i++;
	if (p[i] != c)
		return false;
	*pi = i + 1;
	return true;
}

/* One component (no '/'): '*' backtracks linearly to the last star. */
static bool
component_match(const char *p, size_t pn, const char *s, size_t sn)
{
	size_t pi = 0, si = 0, star = SIZE_MAX, mark = 0;

	while (si < sn) {
		if (pi < pn && p[pi] == '*') {
			star = pi++;
			mark = si;
			continue;
		}
		if (pi < pn && one(p, pn, &pi, s[si])) {
			si++;
			continue;
		}
		if (star == SIZE_MAX)
			return false;
		pi = star + 1;
		si = ++mark;
	}
	while (pi < pn && p[pi] == '*')
		pi++;
	return pi == pn;
}

static size_t
comp_len(const char *s)
{
	return strcspn(s, "/");
}

/* Component by component; "**" alone spans any number of components. */
static bool
glob_at(const char *p, const char *s, int depth)
{
	size_t pn, sn;

	if (depth > 32)
		return false;	/* bounds patterns full of "**" */
	for (;;) {
		pn = comp_len(p);
		if (pn == 2 && p[0] == '*' && p[1] == '*') {
			if (p[2] == '\0')
				/* a trailing "**": inside only */
				return *s != '\0';
			for (;;) {	/* zero or more components */
				if (glob_at(p + 3, s, depth + 1))
					return true;
				if ((s = strchr(s, '/')) == NULL)
					return false;
				s++;
			}
		}
		sn = comp_len(s);
		if (!component_match(p, pn, s, sn))
			return false;
		if (p[pn] == '\0' || s[sn] == '\0')
			return p[pn] == '\0' && s[sn] == '\0';
		p += pn + 1;
		s += sn + 1;
	}
}

bool
lease_gate_glob(const char *pattern, const char *path)
{
	assert(pattern != NULL && path != NULL);
	return glob_at(pattern, path, 0);
}

/* ---- check inputs -------------------------------------------------------- */

static bool
in_list(const char *s, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

static bool
has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool
has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The path (in f, folded) is named by the word w[0..n). */
static bool
word_names(const char *w, size_t n, const char *path)
{
	char buf[LEASE__GATE_PATH_MAX + 1];
	const char *eq;
	size_t k;

	/* --file=X and X=Y: the value */
	if ((eq = memchr(w, '=', n)) != NULL) {
		n -= (size_t)(eq + 1 - w);
		w = eq + 1;
	}
	if (n > 0 && w[0] == '-')
		return false;	/* an option */
	while (n >= 2 && w[0] == '.' && w[1] == '/') {
		w += 2;
		n -= 2;
	}
	while (n > 0 && w[n - 1] == '/')
		n--;
	if (n == 0 || w[0] == '/' || n >= sizeof buf)
		return false;
	memcpy(buf, w, n);
	buf[n] = '\0';
	k = strlen(path);
	return strcmp(buf, path) == 0 ||
	    (k > n && strncmp(path, buf, n) == 0 && path[n] == '/');
}

/* Every build file tool (a folded basename) reads. */
static bool
tool_input(const char *tool, const char *base)
{
	static const char *const py[] = {
		"setup.py", "setup.cfg", "pyproject.toml", "conftest.py",
		"pytest.ini", "tox.ini", "noxfile.py", NULL,
	};
	static const char *const js[] = {
		"package.json", "package-lock.json", NULL,
	};

	if (strcmp(tool, "make") == 0 || strcmp(tool, "gmake") == 0)
		return strcmp(base, "makefile") == 0 ||
		    strcmp(base, "gnumakefile") == 0 ||
		    has_suffix(base, ".mk");
	if (strcmp(tool, "cmake") == 0 || strcmp(tool, "ctest") == 0)
		return strcmp(base, "cmakelists.txt") == 0 ||
		    has_suffix(base, ".cmake");
	if (strcmp(tool, "npm") == 0 || strcmp(tool, "npx") == 0 ||
	    strcmp(tool, "yarn") == 0 || strcmp(tool, "pnpm") == 0 ||
	    strcmp(tool, "node") == 0 || strcmp(tool, "bun") == 0)
		return in_list(base, js);
	if (has_prefix(tool, "python") || strcmp(tool, "pytest") == 0 ||
	    strcmp(tool, "tox") == 0 || strcmp(tool, "nox") == 0)
		return in_list(base, py);
	if (strcmp(tool, "cargo") == 0)
		return strcmp(base, "cargo.toml") == 0 ||
		    strcmp(base, "build.rs") == 0;
	if (strcmp(tool, "go") == 0)
		return strcmp(base, "go.mod") == 0;
	if (strcmp(tool, "meson") == 0 || strcmp(tool, "ninja") == 0)
		return strcmp(base, "meson.build") == 0 ||
		    strcmp(base, "build.ninja") == 0;
	return false;
}

/* The folded basename of a word (the tool it runs). */
static void
tool_of(const char *w, size_t n, char *out, size_t sz)
{
	const char *slash;
	size_t i;

	for (slash = w + n; slash > w && slash[-1] != '/'; slash--)
		;
	n -= (size_t)(slash - w);
	if (n >= sz)
		n = sz - 1;
	for (i = 0; i < n; i++)
		out[i] = (char)lease__gate_lower((unsigned char)slash[i]);
	out[n] = '\0';
}

/* Check one shell-ish string: its words and its first word's tool. */
static bool
words_name(const char *s, const char *path, const char *base, bool first)
{
	char tool[64];
	size_t n;

	while (*s != '\0') {
		while (*s != '\0' && strchr(" \t\n;&|()'\"`", *s) != NULL) {
			if (strchr(";&|", *s) != NULL)
				first = true;	/* a new command */
			s++;
		}
		for (n = 0; s[n] != '\0' &&
		    strchr(" \t\n;&|()'\"`", s[n]) == NULL; n++)
			;
		if (n == 0)
			break;
		if (word_names(s, n, path))
			return true;
		if (first) {
			tool_of(s, n, tool, sizeof tool);
			if (tool_input(tool, base))
				return true;
			first = false;
		}
		s += n;
	}
	return false;
}

bool
lease_gate_check_input(const struct lease_check *c, const char *path)
{
	char f[LEASE__GATE_PATH_MAX + 1], tool[64];
	const char *base, *const *in;
	size_t i;

	assert(c != NULL && path != NULL);
	if (!lease__gate_fold_path(path, f, sizeof f))
		return false;
	base = strrchr(f, '/') != NULL ? strrchr(f, '/') + 1 : f;
	for (i = 0; c->argv != NULL && c->argv[i] != NULL; i++) {
		if (word_names(c->argv[i], strlen(c->argv[i]), path))
			return true;
		if (i == 0) {
			tool_of(c->argv[0], strlen(c->argv[0]), tool,
			    sizeof tool);
			if (tool_input(tool, base))
				return true;
		}
	}
	/* sh -c 'STRING': the words of the string too */
	if (c->argv != NULL && c->argv[0] != NULL && c->argv[1] != NULL &&
	    strcmp(c->argv[1], "-c") == 0 && c->argv[2] != NULL) {
		tool_of(c->argv[0], strlen(c->argv[0]), tool, sizeof tool);
		if ((strcmp(tool, "sh") == 0 || strcmp(tool, "bash") == 0 ||
		    strcmp(tool, "dash") == 0 || strcmp(tool, "zsh") == 0) &&
		    words_name(c->argv[2], path, base, true))
			return true;
	}
	for (in = c->inputs; in != NULL && *in != NULL; in++) {
		if (strchr(*in, '/') == NULL ?
		    lease_gate_glob(*in, strrchr(path, '/') != NULL ?
		    strrchr(path, '/') + 1 : path) :
		    lease_gate_glob(**in == '/' ? *in + 1 : *in, path))
			return true;
	}
	return false;
}

/* ---- helpers shared by the result files (lease_int.h) -------------------- */

int
lease__gate_sha256_hex(const void *buf, size_t len, char out[65])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;

	if (EVP_Digest(buf, len, md, &mdlen, EVP_sha256(), NULL) != 1 ||
	    mdlen != 32)
		return -ENOMEM;
	for (i = 0; i < 32; i++) {
		out[2 * i] = digits[md[i] >> 4];
		out[2 * i + 1] = digits[md[i] & 0xf];
	}
	out[64] = '\0';
	return 0;
}

json_t *
lease__gate_json_bytes(const char *s, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, k, o = 0;
	unsigned cp;
	json_t *j;
	char *buf;

	if (s == NULL)
		return json_null();
	if ((buf = malloc(len * 4 + 1)) == NULL)
		return NULL;
	while (i < len) {
		if (u[i] != 0 && (k = utf8_char(u + i, len - i, &cp)) > 0) {
			memcpy(buf + o, s + i, k);
			o += k;
			i += k;
			continue;
		}
		buf[o++] = '\\';
		buf[o++] = 'x';
		buf[o++] = digits[u[i] >> 4];
		buf[o++] = digits[u[i] & 0xf];
		i++;
	}
	j = json_stringn(buf, o);
	free(buf);
	return j;
}
