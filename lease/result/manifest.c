/*
 * manifest.c: the result manifest (SPEC 7.1) as JSON: written by
 * extraction, read back strictly by the gate, review and apply (every
 * field checked: hex IDs, modes, statuses, sorted unique paths that pass
 * the path rules, counts). docs/results.md describes the format. Pure
 * (jansson only); fuzzed with the patch scan (fuzz/fuzz_patch.c).
 */
#include <assert.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "lease/result/result_int.h"

#define MANIFEST_VERSION 1

void
lease_manifest_free(struct lease_manifest *m)
{
	size_t i;

	if (m == NULL)
		return;
	for (i = 0; i < m->nfiles; i++)
		free(m->files[i].path);
	free(m->files);
	free(m);
}

static const char *
status_word(char st)
{
	switch (st) {
	case 'A':
		return "added";
	case 'M':
		return "modified";
	case 'D':
		return "deleted";
	default:
		return NULL;
	}
}

static json_t *
hex_or_null(const char *hex)
{
	return hex[0] != '\0' ? json_string(hex) : json_null();
}

static json_t *
mode_or_null(unsigned mode)
{
	char buf[16];

	if (mode == 0)
		return json_null();
	snprintf(buf, sizeof buf, "%06o", mode);
	return json_string(buf);
}

static json_t *
flags_json(unsigned fl)
{
	json_t *a = json_array();
	unsigned i;

	for (i = 0; a != NULL && i < LEASE_FLAG_COUNT; i++)
		if (fl & (1u << i))
			json_array_append_new(a,
			    json_string(lease_gate_flag_name(1u << i)));
	return a;
}

static json_t *
file_json(const struct lease_manifest_file *f)
{
	return json_pack("{s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b, "
	    "s:I, s:I, s:o}",
	    "path", lease__gate_json_bytes(f->path, strlen(f->path)),
	    "status", status_word(f->status),
	    "old_mode", mode_or_null(f->old_mode),
	    "new_mode", mode_or_null(f->new_mode),
	    "old_size", f->status != 'A' ? json_integer((json_int_t)
	    f->old_size) : json_null(),
	    "new_size", f->status != 'D' ? json_integer((json_int_t)
	    f->new_size) : json_null(),
	    "old_blob", hex_or_null(f->old_blob),
	    "new_blob", hex_or_null(f->new_blob),
	    "sha256", hex_or_null(f->sha256),
	    "binary", f->binary,
	    "insertions", (json_int_t)f->insertions,
	    "deletions", (json_int_t)f->deletions,
	    "flags", flags_json(f->flags));
}

char *
lease_manifest_dump(const struct lease_manifest *m)
{
	json_t *o, *files, *f;
	char *text = NULL;
	size_t i;

	assert(m != NULL);
	if ((files = json_array()) == NULL)
		return NULL;
	for (i = 0; i < m->nfiles; i++) {
		if ((f = file_json(&m->files[i])) == NULL ||
		    json_array_append_new(files, f) < 0) {
			json_decref(files);
			return NULL;
		}
	}
	o = json_pack("{s:i, s:s, s:s, s:s, s:{s:s, s:I}, s:{s:I, s:I, s:I, "
	    "s:I, s:I, s:I, s:I}, s:o}",
	    "version", MANIFEST_VERSION, "base", m->base, "base_tree",
	    m->base_tree, "tree", m->tree, "patch", "sha256", m->patch_sha256,
	    "bytes", (json_int_t)m->patch_bytes, "counts",
	    "files", (json_int_t)m->nfiles, "added", (json_int_t)m->added,
	    "modified", (json_int_t)m->modified, "deleted",
	    (json_int_t)m->deleted, "insertions", (json_int_t)m->insertions,
	    "deletions", (json_int_t)m->deletions, "new_bytes",
	    (json_int_t)m->new_bytes, "files", files);
	if (o != NULL)
		text = json_dumps(o, JSON_INDENT(1) | JSON_ENSURE_ASCII);
	json_decref(o);
	return text;
}

/* ---- parsing ------------------------------------------------------------- */

static bool
is_hex(const char *s, size_t n)
{
	size_t i;

	if (s == NULL || strlen(s) != n)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* A hex string of n digits (or null when nullable) into out. */
static int
get_hex(json_t *o, const char *k, size_t n, bool nullable, char *out)
{
	json_t *v = json_object_get(o, k);

	out[0] = '\0';
	if (v != NULL && json_is_null(v) && nullable)
		return 0;
	if (!json_is_string(v) || !is_hex(json_string_value(v), n))
		return -EINVAL;
	memcpy(out, json_string_value(v), n + 1);
	return 0;
}

static int
get_count(json_t *o, const char *k, uint64_t *out)
{
	json_t *v = json_object_get(o, k);

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -EINVAL;
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

/* "100644" style, or null when nullable (then 0). */
static int
get_mode(json_t *o, const char *k, bool nullable, unsigned *out)
{
	json_t *v = json_object_get(o, k);
	const char *s;
	unsigned m = 0;
	size_t i;

	*out = 0;
	if (v != NULL && json_is_null(v) && nullable)
		return 0;
	if (!json_is_string(v) || strlen(s = json_string_value(v)) != 6)
		return -EINVAL;
	for (i = 0; i < 6; i++) {
		if (s[i] < '0' || s[i] > '7')
			return -EINVAL;
		m = m << 3 | (unsigned)(s[i] - '0');
	}
	if (m == 0)
		return -EINVAL;
	*out = m;
	return 0;
}

static int
get_flags(json_t *o, unsigned *out)
{
	json_t *a = json_object_get(o, "flags"), *v;
	unsigned bit;
	size_t i;

	*out = 0;
	if (!json_is_array(a))
		return -EINVAL;
	json_array_foreach(a, i, v) {
		if (!json_is_string(v))
			return -EINVAL;
		for (bit = 1; bit < 1u << LEASE_FLAG_COUNT; bit <<= 1)
			if (strcmp(lease_gate_flag_name(bit),
			    json_string_value(v)) == 0)
				break;
		if (bit >= 1u << LEASE_FLAG_COUNT || (*out & bit))
			return -EINVAL;
		*out |= bit;
	}
	return 0;
}

static int
parse_file(json_t *o, struct lease_manifest_file *f)
{
	json_t *p = json_object_get(o, "path"), *st, *bin;
	const char *s;
	uint64_t n;

	if (!json_is_object(o) || !json_is_string(p))
		return -EINVAL;
	if (lease_gate_path(json_string_value(p), json_string_length(p)) !=
	    LEASE_GATE_OK || strlen(json_string_value(p)) !=
	    json_string_length(p))
		return -EINVAL;
	st = json_object_get(o, "status");
	if (!json_is_string(st))
		return -EINVAL;
	s = json_string_value(st);
	if (strcmp(s, "added") == 0)
		f->status = 'A';
	else if (strcmp(s, "modified") == 0)
		f->status = 'M';
	else if (strcmp(s, "deleted") == 0)
		f->status = 'D';
	else
		return -EINVAL;
	if (get_mode(o, "old_mode", f->status == 'A', &f->old_mode) < 0 ||
	    get_mode(o, "new_mode", f->status == 'D', &f->new_mode) < 0 ||
	    get_hex(o, "old_blob", 40, f->status == 'A', f->old_blob) < 0 ||
	    get_hex(o, "new_blob", 40, f->status == 'D', f->new_blob) < 0 ||
	    get_hex(o, "sha256", 64, f->status == 'D', f->sha256) < 0 ||
	    get_flags(o, &f->flags) < 0)
		return -EINVAL;
	/* absent sides are null, present sides are not */
	if ((f->status == 'A') != (f->old_mode == 0) ||
	    (f->status == 'D') != (f->new_mode == 0) ||
	    (f->status == 'A') != (f->old_blob[0] == '\0') ||
	    (f->status == 'D') != (f->new_blob[0] == '\0') ||
	    (f->status == 'D') != (f->sha256[0] == '\0'))
		return -EINVAL;
	if (f->status != 'A') {
		if (get_count(o, "old_size", &f->old_size) < 0)
			return -EINVAL;
	} else if (!json_is_null(json_object_get(o, "old_size"))) {
		return -EINVAL;
	}
	if (f->status != 'D') {
		if (get_count(o, "new_size", &f->new_size) < 0)
			return -EINVAL;
	} else if (!json_is_null(json_object_get(o, "new_size"))) {
		return -EINVAL;
	}
	bin = json_object_get(o, "binary");
	if (!json_is_boolean(bin))
		return -EINVAL;
	f->binary = json_is_true(bin);
	if (get_count(o, "insertions", &n) < 0)
		return -EINVAL;
	f->insertions = (size_t)n;
	if (get_count(o, "deletions", &n) < 0)
		return -EINVAL;
	f->deletions = (size_t)n;
	if ((f->path = strdup(json_string_value(p))) == NULL)
		return -ENOMEM;
	return 0;
}

static int
parse_counts(json_t *c, struct lease_manifest *m)
{
	uint64_t files, a, md, d, ins, del, nb;
	size_t i, ca = 0, cm = 0, cd = 0, ci = 0, cdl = 0;
	uint64_t cnb = 0;

	if (!json_is_object(c) || get_count(c, "files", &files) < 0 ||
	    get_count(c, "added", &a) < 0 ||
	    get_count(c, "modified", &md) < 0 ||
	    get_count(c, "deleted", &d) < 0 ||
	    get_count(c, "insertions", &ins) < 0 ||
	    get_count(c, "deletions", &del) < 0 ||
	    get_count(c, "new_bytes", &nb) < 0)
		return -EINVAL;
	for (i = 0; i < m->nfiles; i++) {
		const struct lease_manifest_file *f = &m->files[i];

		ca += f->status == 'A';
		cm += f->status == 'M';
		cd += f->status == 'D';
		ci += f->insertions;
		cdl += f->deletions;
		if (f->status != 'D')
			cnb += f->new_size;
	}
	if (files != m->nfiles || a != ca || md != cm || d != cd ||
	    ins != ci || del != cdl || nb != cnb)
		return -EINVAL;
	m->added = ca;
	m->modified = cm;
	m->deleted = cd;
	m->insertions = ci;
	m->deletions = cdl;
	m->new_bytes = cnb;
	return 0;
}

int
lease_manifest_parse(const char *text, size_t len, struct lease_manifest **out)
{
	struct lease_manifest *m = NULL;
	json_t *o, *files, *v, *patch;
	size_t i;
	int rc = -EINVAL;

	assert(out != NULL);
	*out = NULL;
	if (text == NULL)
		return -EINVAL;
	o = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(o))
		goto out;
	if ((m = calloc(1, sizeof *m)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	v = json_object_get(o, "version");
	if (!json_is_integer(v) || json_integer_value(v) != MANIFEST_VERSION)
		goto out;
	m->version = MANIFEST_VERSION;
	patch = json_object_get(o, "patch");
	if (get_hex(o, "base", 40, false, m->base) < 0 ||
	    get_hex(o, "base_tree", 40, false, m->base_tree) < 0 ||
	    get_hex(o, "tree", 40, false, m->tree) < 0 ||
	    !json_is_object(patch) ||
	    get_hex(patch, "sha256", 64, false, m->patch_sha256) < 0 ||
	    get_count(patch, "bytes", &m->patch_bytes) < 0)
		goto out;
	files = json_object_get(o, "files");
	if (!json_is_array(files))
		goto out;
	if (json_array_size(files) > 0 &&
	    (m->files = calloc(json_array_size(files),
	    sizeof *m->files)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	json_array_foreach(files, i, v) {
		if ((rc = parse_file(v, &m->files[i])) < 0)
			goto out;
		m->nfiles = i + 1;
		if (i > 0 && strcmp(m->files[i - 1].path, m->files[i].path)
		    >= 0) {
			rc = -EINVAL;	/* sorted and unique */
			goto out;
		}
	}
	rc = -EINVAL;
	if (parse_counts(json_object_get(o, "counts"), m) < 0)
		goto out;
	*out = m;
	m = NULL;
	rc = 0;
out:
	lease_manifest_free(m);
	json_decref(o);
	return rc;
}
