/*
 * gate_scan.c: the import gate's pre-parse scan of a patch (SPEC 7.2): the
 * patch text, before libgit2 parses any of it, against the caps (files,
 * hunks, lines, the size of a line) with every path and mode the headers
 * name through the gate's path and mode rules (gate.c). Pure: no I/O, no
 * libgit2; fuzzed (fuzz/fuzz_patch.c).
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lease/result/result_int.h"

#define SCAN_MAX_HUNKS (1u << 20)

static bool
starts(const char *s, size_t n, const char *lit)
{
	size_t k = strlen(lit);

	return n >= k && memcmp(s, lit, k) == 0;
}

/* The decimal number after a prefix of k bytes, saturating. */
static uint64_t
number_after(const char *s, size_t n, size_t k)
{
	uint64_t v = 0;

	for (; k < n && s[k] >= '0' && s[k] <= '9'; k++)
		v = v > UINT64_MAX / 16 ? UINT64_MAX : v * 10 +
		    (uint64_t)(s[k] - '0');
	return v;
}

/*
 * The path of a "--- a/P" or "+++ b/P" line, as written (libgit2 would
 * normalise "b//etc/evil" to "etc/evil" before anyone saw it): C-quoted
 * names are unquoted, the a/ or b/ prefix is required, then the path
 * rules apply. "/dev/null" is no path.
 */
static enum lease_gate_reason
scan_path(const char *s, size_t n, char side)
{
	char out[4100];
	size_t i, o = 0;
	unsigned v;
	int k;

	if (n > 0 && s[n - 1] == '\r')
		n--;
	if (n == 9 && memcmp(s, "/dev/null", 9) == 0)
		return LEASE_GATE_OK;
	if (n > 0 && s[0] == '"') {
		for (i = 1; i < n && s[i] != '"'; i++) {
			if (o >= sizeof out - 1)
				return LEASE_GATE_NAME_TOO_LONG;
			if (s[i] != '\\' || i + 1 >= n) {
				out[o++] = s[i];
				continue;
			}
			i++;
			if (s[i] >= '0' && s[i] <= '7') {
				for (v = 0, k = 0; k < 3 && i < n && s[i] >=
				    '0' && s[i] <= '7'; k++, i++)
					v = v * 8 + (unsigned)(s[i] - '0');
				i--;
				out[o++] = (char)v;
				continue;
			}
			switch (s[i]) {
			case 'n': out[o++] = '\n'; break;
			case 't': out[o++] = '\t'; break;
			case 'r': out[o++] = '\r'; break;
			case 'a': out[o++] = '\a'; break;
			case 'b': out[o++] = '\b'; break;
			case 'f': out[o++] = '\f'; break;
			case 'v': out[o++] = '\v'; break;
			default: out[o++] = s[i];
			}
		}
		if (i >= n)
			return LEASE_GATE_PATCH_MALFORMED;
	} else {
		/* an unquoted name ends at a tab (a timestamp may follow) */
		for (i = 0; i < n && s[i] != '\t'; i++) {
			if (o >= sizeof out - 1)
				return LEASE_GATE_NAME_TOO_LONG;
			out[o++] = s[i];
		}
	}
	if (o < 2 || out[0] != side || out[1] != '/')
		return LEASE_GATE_PATCH_MALFORMED;
	return lease_gate_path(out + 2, o - 2);
}

/*
 * The mode a header line gives ("new mode M", "new file mode M", "index
 * A..B M"): git canonicalises 100777 to 100755 when it parses, so the text
 * itself is held to the two modes (and 120000 when symlinks are allowed).
 */
static enum lease_gate_reason
scan_mode(const char *s, size_t n, const struct lease_result_policy *pol)
{
	unsigned m = 0;
	size_t i = n, digits = 0;

	while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '7') {
		i--;
		digits++;
	}
	if (digits == 0 || i == 0 || s[i - 1] != ' ') {
		/* "index A..B" without a mode: nothing to check */
		return starts(s, n, "index ") ? LEASE_GATE_OK :
		    LEASE_GATE_BAD_MODE;
	}
	if (digits != 6)
		return LEASE_GATE_BAD_MODE;
	for (; i < n; i++)
		m = m << 3 | (unsigned)(s[i] - '0');
	return lease_gate_mode(m, pol->allow_symlinks);
}

enum lease_gate_reason
lease_gate_patch_scan(const char *buf, size_t len,
    const struct lease_result_policy *pol, struct lease_gate_scan *out)
{
	const char *line = buf, *end = buf + len, *nl;
	enum lease_gate_reason r;
	bool in_hunk = false, in_binary = false;
	uint64_t file_added = 0;
	size_t n;

	assert((buf != NULL || len == 0) && pol != NULL && out != NULL);
	memset(out, 0, sizeof *out);
	if (len > pol->max_patch_bytes)
		return LEASE_GATE_PATCH_TOO_LARGE;
	while (line < end) {
		nl = memchr(line, '\n', (size_t)(end - line));
		n = nl != NULL ? (size_t)(nl - line) : (size_t)(end - line);
		if (starts(line, n, "diff --git ")) {
			if (++out->files > pol->max_files)
				return LEASE_GATE_TOO_MANY_FILES;
			in_hunk = in_binary = false;
			file_added = 0;
		} else if (starts(line, n, "GIT binary patch")) {
			out->binary_files++;
			in_binary = true;
			in_hunk = false;
			if (!pol->allow_binary)
				return LEASE_GATE_BINARY;
		} else if (in_binary && (starts(line, n, "literal ") ||
		    starts(line, n, "delta "))) {
			if (number_after(line, n, line[0] == 'l' ? 8 : 6) >
			    pol->max_file_bytes)
				return LEASE_GATE_FILE_TOO_LARGE;
		} else if (!in_hunk && !in_binary && (starts(line, n, "--- ") ||
		    starts(line, n, "+++ "))) {
			if ((r = scan_path(line + 4, n - 4, line[0] == '-' ?
			    'a' : 'b')) != LEASE_GATE_OK)
				return r;
		} else if (!in_hunk && (starts(line, n, "rename ") ||
		    starts(line, n, "copy ") ||
		    starts(line, n, "similarity index"))) {
			return LEASE_GATE_PATCH_MALFORMED;
		} else if (!in_hunk && (starts(line, n, "new mode ") ||
		    starts(line, n, "new file mode ") ||
		    starts(line, n, "index "))) {
			if ((r = scan_mode(line, n, pol)) != LEASE_GATE_OK)
				return r;
		} else if (!in_binary && starts(line, n, "@@ ")) {
			in_hunk = true;
			if (++out->hunks > SCAN_MAX_HUNKS)
				return LEASE_GATE_PATCH_TOO_LARGE;
		} else if (in_hunk && n > 0 && line[0] == '+') {
			file_added += n;
			out->added_bytes += n;
			if (file_added > out->max_file_added)
				out->max_file_added = file_added;
			/* a '+' line is as long as its content with '\n' */
			if (file_added > pol->max_file_bytes + 1)
				return LEASE_GATE_FILE_TOO_LARGE;
			if (out->added_bytes > pol->max_total_bytes +
			    out->files)
				return LEASE_GATE_TOTAL_TOO_LARGE;
		}
		/*
		 * No NUL anywhere, binary patches included (base85 has
		 * none): libgit2 1.5.1's parser measures lines past a NUL
		 * beyond its copy of the buffer.
		 */
		if (memchr(line, '\0', n) != NULL)
			return LEASE_GATE_PATCH_MALFORMED;
		line += n + (nl != NULL);
	}
	return LEASE_GATE_OK;
}
