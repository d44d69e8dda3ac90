/*
 * review.c: the review view's model (SPEC 7.4): `corral review --json`'s
 * document turned into lines (manifest, flags, findings, checks, the
 * diff per file and per hunk, the receipt), a cursor, and which hunks the
 * reviewer keeps; the kept set becomes `corral apply --hunks`'s LIST
 * (IDs bound to the patch digest). Pure: no terminal, no I/O. Text stays
 * raw here; the drawing escapes it (SPEC 4.7).
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "tui/console/console.h"

void
tui_review_init(struct tui_review *rv)
{
	assert(rv != NULL);
	memset(rv, 0, sizeof *rv);
}

void
tui_review_free(struct tui_review *rv)
{
	size_t i, j;

	if (rv == NULL)
		return;
	for (i = 0; i < rv->n; i++)
		free(rv->lines[i].text);
	free(rv->lines);
	for (i = 0; i < rv->nfiles; i++) {
		struct tui_rv_file *f = &rv->files[i];

		for (j = 0; j < f->nhunks; j++)
			free(f->hid[j]);
		free(f->id);
		free(f->path);
		free(f->hkeep);
		free(f->hline);
		free(f->hid);
	}
	free(rv->files);
	memset(rv, 0, sizeof *rv);
}

/* Append a line (text copied whole, tabs expanded); -ENOMEM. */
static int
add_n(struct tui_review *rv, enum tui_rv_kind kind, int file, int hunk,
    const char *s, size_t len)
{
	struct tui_rv_line *l;
	char *t, *esc;
	size_t i, o = 0, need = 0, elen;

	if (rv->n >= TUI_REVIEW_LINES_MAX) {
		rv->truncated = true;
		return 0;
	}
	if (rv->n == rv->cap) {
		size_t cap = rv->cap ? rv->cap * 2 : 64;

		if ((l = realloc(rv->lines, cap * sizeof *l)) == NULL)
			return -ENOMEM;
		rv->lines = l;
		rv->cap = cap;
	}
	for (i = 0; i < len; i++)
		need += s[i] == '\t' ? 8 - need % 8 : 1;
	if ((t = malloc(need + 1)) == NULL)	/* only what the line needs */
		return -ENOMEM;
	for (i = 0; i < len; i++) {
		if (s[i] == '\t') {
			do
				t[o++] = ' ';
			while (o % 8 != 0);
		} else {
			t[o++] = s[i];
		}
	}
	t[o] = '\0';
	/* Its width as drawn: escaped, at most 4 columns a byte. */
	if ((esc = malloc(4 * o + 1)) == NULL) {
		free(t);
		return -ENOMEM;
	}
	elen = tui_escape(t, o, esc, 4 * o + 1);
	l = &rv->lines[rv->n++];
	l->kind = kind;
	l->file = file;
	l->hunk = hunk;
	l->text = t;
	l->width = tui_escape_width(esc, elen);
	free(esc);
	if (l->width > rv->maxw)
		rv->maxw = l->width;
	return 0;
}

static int
addf(struct tui_review *rv, enum tui_rv_kind kind, int file, int hunk,
    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int
addf(struct tui_review *rv, enum tui_rv_kind kind, int file, int hunk,
    const char *fmt, ...)
{
	char buf[TUI_REVIEW_TEXT_MAX + 1];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	return add_n(rv, kind, file, hunk, buf, strlen(buf));
}

static const char *
js(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s != NULL ? s : NULL;
}

static const char *
jsd(json_t *o, const char *k, const char *dflt)
{
	const char *s = js(o, k);

	return s != NULL ? s : dflt;
}

static long long
ji(json_t *o, const char *k)
{
	return (long long)json_integer_value(json_object_get(o, k));
}

/* "a, b, c" of a string array into buf. */
static void
join(json_t *a, char *buf, size_t bufsz)
{
	json_t *v;
	size_t i, o = 0;

	buf[0] = '\0';
	json_array_foreach(a, i, v) {
		int n = snprintf(buf + o, bufsz - o, "%s%s", i ? ", " : "",
		    json_is_string(v) ? json_string_value(v) : "?");

		if (n < 0 || (size_t)n >= bufsz - o)
			break;
		o += (size_t)n;
	}
}

static int
head(struct tui_review *rv, json_t *d)
{
	json_t *r = json_object_get(d, "result"), *rc, *p;
	struct tui_egress eg;
	int e = 0;

	e |= addf(rv, TUI_RV_TITLE, -1, -1, "lease %s%s%s%s  %s  result %s",
	    jsd(d, "id", "?"), js(d, "name") ? " (" : "", jsd(d, "name", ""),
	    js(d, "name") ? ")" : "", jsd(d, "lease_state", "?"),
	    jsd(r, "status", "none"));
	if (js(d, "failed_reason") != NULL)
		e |= addf(rv, TUI_RV_WARN, -1, -1, "failed: %s",
		    js(d, "failed_reason"));
	e |= addf(rv, TUI_RV_TEXT, -1, -1, "base      %.12s (%s)",
	    jsd(r, "base", "-"), jsd(r, "base_ref", "a commit"));
	if (js(r, "commit") != NULL)
		e |= addf(rv, TUI_RV_TEXT, -1, -1, "commit    %.12s on %s, "
		    "tree %.12s, via %s", js(r, "commit"), jsd(r, "branch",
		    "corral/?"), jsd(r, "tree", "-"), jsd(r, "via", "-"));
	if (js(r, "summary") != NULL)
		e |= addf(rv, TUI_RV_TEXT, -1, -1, "summary   %s",
		    js(r, "summary"));
	if ((p = json_object_get(r, "patch")) != NULL && js(p, "sha256"))
		e |= addf(rv, TUI_RV_TEXT, -1, -1, "patch     sha256:%.16s..."
		    ", %lld bytes", js(p, "sha256"), ji(p, "bytes"));
	if (js(d, "worktree") != NULL)
		e |= addf(rv, TUI_RV_TEXT, -1, -1, "worktree  %s",
		    js(d, "worktree"));
	p = json_object_get(r, "artifacts");
	if (ji(p, "files") > 0)
		e |= addf(rv, TUI_RV_TEXT, -1, -1, "artifacts %lld file(s), "
		    "%lld bytes in %s", ji(p, "files"), ji(p, "bytes"),
		    jsd(p, "dir", "-"));
	if (tui_egress_count(json_object_get(d, "receipts"), &eg))
		e |= addf(rv, eg.denied > 0 ? TUI_RV_WARN : TUI_RV_TEXT, -1,
		    -1, "egress    %lld allowed, %lld denied%s%s%s", eg.allowed,
		    eg.denied, eg.ntargets > 0 ? " (first: " : "",
		    eg.ntargets > 0 ? eg.targets[0] : "", eg.ntargets > 0 ?
		    ")" : "");
	rc = json_object_get(d, "receipt");
	e |= addf(rv, json_is_true(json_object_get(rc, "verified")) ?
	    TUI_RV_TEXT : TUI_RV_BAD, -1, -1, "receipt   %lld %s, head "
	    "%.16s, %s", ji(rc, "length"), ji(rc, "length") == 1 ? "entry" :
	    "entries", jsd(rc, "head", "-"),
	    json_is_true(json_object_get(rc, "verified")) ? "verified" :
	    "FAILS VERIFICATION");
	if (js(d, "stale") != NULL)
		e |= addf(rv, TUI_RV_BAD, -1, -1, "stale: %s (apply refuses)",
		    js(d, "stale"));
	return e;
}

static int
reasons(struct tui_review *rv, json_t *r)
{
	json_t *a = json_object_get(r, "reasons"), *v;
	size_t i;
	int e = 0;

	if (json_array_size(a) == 0)
		return 0;
	e |= addf(rv, TUI_RV_TITLE, -1, -1, "rejected by the import gate "
	    "(quarantined, never materialised):");
	json_array_foreach(a, i, v)
		e |= addf(rv, TUI_RV_WARN, -1, -1, "  %-24s %s%s%s%s",
		    jsd(v, "reason", "?"), jsd(v, "path", ""),
		    js(v, "detail") ? "  (" : "", jsd(v, "detail", ""),
		    js(v, "detail") ? ")" : "");
	if (ji(r, "findings_dropped") > 0)
		e |= addf(rv, TUI_RV_WARN, -1, -1, "  ... and %lld more",
		    ji(r, "findings_dropped"));
	return e;
}

static int
manifest(struct tui_review *rv, json_t *m)
{
	json_t *files = json_object_get(m, "files"), *f;
	char fl[256];
	size_t i;
	int e = 0;

	if (json_array_size(files) == 0)
		return 0;
	e |= addf(rv, TUI_RV_TITLE, -1, -1, "files (manifest):");
	json_array_foreach(files, i, f) {
		join(json_object_get(f, "flags"), fl, sizeof fl);
		e |= addf(rv, fl[0] ? TUI_RV_WARN : TUI_RV_TEXT, -1, -1,
		    "  %-8s %-6s %s  (+%lld -%lld)%s%s%s",
		    jsd(f, "status", "?"), jsd(f, "new_mode", jsd(f,
		    "old_mode", "")), jsd(f, "path", "?"),
		    ji(f, "insertions"), ji(f, "deletions"),
		    fl[0] ? "  [" : "", fl, fl[0] ? "]" : "");
	}
	return e;
}

#define LOG_LINES 12	/* lines of a failed check's log shown */

/* The log of a check from its receipt entry (the last one for commit). */
static json_t *
check_log(json_t *d, const char *name, const char *commit)
{
	json_t *e, *f, *found = NULL;
	size_t i;

	json_array_foreach(json_object_get(d, "receipts"), i, e) {
		f = json_object_get(e, "fields");
		if (strcmp(jsd(e, "kind", ""), "check") != 0 ||
		    strcmp(jsd(f, "name", ""), name) != 0)
			continue;
		if (commit != NULL && js(f, "commit") != NULL &&
		    strcmp(js(f, "commit"), commit) != 0)
			continue;
		found = json_object_get(f, "log");
	}
	return found;
}

/* The last LOG_LINES lines of a log, each its own line. */
static int
log_tail(struct tui_review *rv, json_t *log)
{
	const char *s = json_string_value(log), *p, *nl;
	size_t n = json_string_length(log), lines = 0;
	int e = 0;

	if (s == NULL || n == 0)
		return 0;
	while (n > 0 && s[n - 1] == '\n')
		n--;
	for (p = s + n; p > s; p--)
		if (p[-1] == '\n' && ++lines == LOG_LINES)
			break;
	while (p < s + n) {
		nl = memchr(p, '\n', (size_t)(s + n - p));
		if (nl == NULL)
			nl = s + n;
		e |= addf(rv, TUI_RV_META, -1, -1, "    | %.*s",
		    (int)((size_t)(nl - p) < TUI_REVIEW_TEXT_MAX ?
		    (size_t)(nl - p) : TUI_REVIEW_TEXT_MAX), p);
		p = nl + 1;
	}
	return e;
}

static int
checks(struct tui_review *rv, json_t *d, json_t *r)
{
	json_t *a = json_object_get(r, "checks"), *c;
	char ins[256];
	const char *st;
	size_t i;
	int e = 0;

	if (!json_is_array(a)) {
		if (js(r, "commit") != NULL)
			e |= addf(rv, TUI_RV_TEXT, -1, -1, "checks    pending "
			    "(running)");
		return e;
	}
	if (json_array_size(a) == 0)
		return addf(rv, TUI_RV_TEXT, -1, -1, "checks    none declared "
		    "by the policy");
	e |= addf(rv, TUI_RV_TITLE, -1, -1, "checks (exec zone, on a copy):");
	json_array_foreach(a, i, c) {
		st = jsd(c, "status", "?");
		join(json_object_get(c, "changed_inputs"), ins, sizeof ins);
		e |= addf(rv, strcmp(st, "pass") == 0 ? TUI_RV_GOOD :
		    TUI_RV_BAD, -1, -1, "  %-20s %-6s exit %lld, %.1f s, %s%s%s",
		    jsd(c, "name", "?"), st, ji(c, "exit"),
		    (double)ji(c, "duration_ms") / 1000.0,
		    json_is_false(json_object_get(c, "independent")) ?
		    "NOT independent (" : "independent", json_is_false(
		    json_object_get(c, "independent")) ? ins : "",
		    json_is_false(json_object_get(c, "independent")) ? ")" :
		    "");
		if (js(c, "detail") != NULL && js(c, "detail")[0] != '\0')
			e |= addf(rv, TUI_RV_META, -1, -1, "    %s",
			    js(c, "detail"));
		if (strcmp(st, "pass") != 0 && strcmp(st, "unavailable") != 0)
			e |= log_tail(rv, check_log(d, jsd(c, "name", ""),
			    js(c, "commit")));
	}
	return e;
}

static int
hunk_lines(struct tui_review *rv, json_t *h, int fi, int hi)
{
	json_t *l, *t;
	size_t k;
	const char *org, *v;
	enum tui_rv_kind kind;
	char *buf;
	size_t n;
	int e = 0;

	json_array_foreach(json_object_get(h, "lines"), k, l) {
		org = json_string_value(json_array_get(l, 0));
		t = json_array_get(l, 1);
		if (org == NULL)
			continue;
		kind = *org == '+' ? TUI_RV_ADD : *org == '-' ? TUI_RV_DEL :
		    *org == '\\' ? TUI_RV_META : TUI_RV_CTX;
		v = json_is_string(t) ? json_string_value(t) : "";
		n = json_is_string(t) ? json_string_length(t) : 0;
		/* Every byte of the line: the view scrolls to it. */
		if ((buf = malloc(n + 3)) == NULL)
			return -ENOMEM;
		if (*org == '\\') {
			memcpy(buf, "\\ ", 2);
		} else {
			buf[0] = *org == '+' || *org == '-' ? *org : ' ';
		}
		memcpy(buf + (*org == '\\' ? 2 : 1), v, n);
		n += *org == '\\' ? 2 : 1;
		e |= add_n(rv, kind, fi, hi, buf, n);
		free(buf);
	}
	return e;
}

static int
diff(struct tui_review *rv, json_t *d)
{
	json_t *files = json_object_get(d, "diff"), *f, *h, *hs;
	struct tui_rv_file *rf;
	char fl[256];
	size_t i, j, nf;
	int e = 0;

	nf = json_array_size(files);
	if (nf == 0)
		return 0;
	if ((rv->files = calloc(nf, sizeof *rv->files)) == NULL)
		return -ENOMEM;
	e |= addf(rv, TUI_RV_TITLE, -1, -1, "diff (Space drops or keeps the "
	    "hunk under the cursor):");
	json_array_foreach(files, i, f) {
		const char *st = jsd(f, "status", "modified");

		rf = &rv->files[rv->nfiles++];
		hs = json_object_get(f, "hunks");
		rf->id = strdup(jsd(f, "id", "?"));
		rf->path = strdup(jsd(f, "path", "?"));
		rf->whole = strcmp(st, "modified") != 0 ||
		    json_is_true(json_object_get(f, "binary")) ||
		    json_array_size(hs) == 0;
		rf->keep = true;
		rf->line = rv->n;
		rf->nhunks = json_array_size(hs);
		if (rf->id == NULL || rf->path == NULL)
			return -ENOMEM;
		if (rf->nhunks > 0 && ((rf->hkeep = calloc(rf->nhunks,
		    sizeof *rf->hkeep)) == NULL || (rf->hline = calloc(
		    rf->nhunks, sizeof *rf->hline)) == NULL || (rf->hid =
		    calloc(rf->nhunks, sizeof *rf->hid)) == NULL))
			return -ENOMEM;
		join(json_object_get(f, "flags"), fl, sizeof fl);
		e |= addf(rv, TUI_RV_FILE, (int)i, -1, "%s (%s%s)  [%s]%s%s%s",
		    rf->path, st, json_is_true(json_object_get(f, "binary")) ?
		    ", binary" : "", rf->id, fl[0] ? "  flagged: " : "", fl,
		    rf->whole ? "  (whole file only)" : "");
		json_array_foreach(hs, j, h) {
			rf->hkeep[j] = true;
			rf->hline[j] = rv->n;
			if ((rf->hid[j] = strdup(jsd(h, "id", "?"))) == NULL)
				return -ENOMEM;
			e |= addf(rv, TUI_RV_HUNK, (int)i, (int)j, "%s  [%s]",
			    jsd(h, "header", "@@"), rf->hid[j]);
			e |= hunk_lines(rv, h, (int)i, (int)j);
		}
	}
	return e;
}

int
tui_review_parse(struct tui_review *rv, const char *text, size_t len,
    char *err, size_t errsz)
{
	json_error_t je;
	json_t *d, *r;
	const char *p;
	int e = 0;

	assert(rv != NULL);
	tui_review_free(rv);
	if (err != NULL && errsz > 0)
		err[0] = '\0';
	d = json_loadb(text != NULL ? text : "", len, JSON_REJECT_DUPLICATES,
	    &je);
	if (!json_is_object(d) || js(d, "id") == NULL) {
		if (err != NULL)
			snprintf(err, errsz, "not a review document%s%.100s",
			    d == NULL ? ": " : "", d == NULL ? je.text : "");
		json_decref(d);
		return -EINVAL;
	}
	r = json_object_get(d, "result");
	snprintf(rv->id, sizeof rv->id, "%s", js(d, "id"));
	snprintf(rv->state, sizeof rv->state, "%s", jsd(d, "lease_state",
	    "?"));
	p = js(json_object_get(r, "patch"), "sha256");
	snprintf(rv->digest8, sizeof rv->digest8, "%.8s", p ? p : "");
	rv->ready = json_is_true(json_object_get(d, "reviewed")) &&
	    strcmp(rv->state, "result_ready") == 0 && js(d, "stale") == NULL;
	e |= head(rv, d);
	e |= reasons(rv, r);
	e |= manifest(rv, json_object_get(d, "manifest"));
	e |= checks(rv, d, r);
	e |= diff(rv, d);
	if (rv->nfiles == 0 && strcmp(jsd(r, "status", ""), "ready") == 0)
		e |= addf(rv, TUI_RV_TEXT, -1, -1, "(an empty patch: the agent "
		    "changed nothing, there is nothing to apply; r rejects)");
	if (rv->truncated)
		e |= addf(rv, TUI_RV_WARN, -1, -1, "... cut at %d lines: "
		    "'corral review %s' prints it all", TUI_REVIEW_LINES_MAX,
		    rv->id);
	json_decref(d);
	if (e != 0) {
		tui_review_free(rv);
		return -ENOMEM;
	}
	/* start on the first file of the diff, if any */
	rv->cur = rv->nfiles > 0 ? rv->files[0].line : 0;
	return 0;
}

void
tui_review_move(struct tui_review *rv, long delta)
{
	long c;

	assert(rv != NULL);
	if (rv->n == 0)
		return;
	c = (long)rv->cur + delta;
	if (c < 0)
		c = 0;
	if (c >= (long)rv->n)
		c = (long)rv->n - 1;
	rv->cur = (size_t)c;
}

/* Header lines of hunks (and files with hunks' place taken by files). */
static bool
is_stop(const struct tui_review *rv, size_t i, bool files_only)
{
	const struct tui_rv_line *l = &rv->lines[i];

	return files_only ? l->kind == TUI_RV_FILE : l->kind == TUI_RV_HUNK ||
	    (l->kind == TUI_RV_FILE && rv->files[l->file].nhunks == 0);
}

static void
next_stop(struct tui_review *rv, int dir, bool files_only)
{
	size_t i = rv->cur;

	while (dir > 0 ? i + 1 < rv->n : i > 0) {
		i = dir > 0 ? i + 1 : i - 1;
		if (is_stop(rv, i, files_only)) {
			rv->cur = i;
			return;
		}
	}
}

void
tui_review_next_hunk(struct tui_review *rv, int dir)
{
	assert(rv != NULL);
	next_stop(rv, dir, false);
}

void
tui_review_next_file(struct tui_review *rv, int dir)
{
	assert(rv != NULL);
	next_stop(rv, dir, true);
}

bool
tui_review_toggle(struct tui_review *rv)
{
	const struct tui_rv_line *l;
	struct tui_rv_file *f;
	bool all;
	size_t j;

	assert(rv != NULL);
	if (rv->cur >= rv->n)
		return false;
	l = &rv->lines[rv->cur];
	if (l->file < 0 || (size_t)l->file >= rv->nfiles)
		return false;
	f = &rv->files[l->file];
	if (f->whole || l->hunk < 0) {
		/* the whole file: all hunks follow it */
		if (f->whole) {
			f->keep = !f->keep;
			all = f->keep;
		} else {
			all = false;
			for (j = 0; j < f->nhunks; j++)
				all = all || !f->hkeep[j];
		}
		f->keep = all;
		for (j = 0; j < f->nhunks; j++)
			f->hkeep[j] = all;
		return true;
	}
	f->hkeep[l->hunk] = !f->hkeep[l->hunk];
	return true;
}

bool
tui_review_line_dropped(const struct tui_review *rv, size_t i)
{
	const struct tui_rv_line *l;
	const struct tui_rv_file *f;

	assert(rv != NULL);
	if (i >= rv->n)
		return false;
	l = &rv->lines[i];
	if (l->file < 0 || (size_t)l->file >= rv->nfiles)
		return false;
	f = &rv->files[l->file];
	if (f->whole || f->nhunks == 0)
		return !f->keep;
	if (l->hunk < 0) {
		for (size_t j = 0; j < f->nhunks; j++)
			if (f->hkeep[j])
				return false;
		return true;
	}
	return !f->hkeep[l->hunk];
}

void
tui_review_counts(const struct tui_review *rv, size_t *kept, size_t *total)
{
	size_t i, j, k = 0, t = 0;

	assert(rv != NULL && kept != NULL && total != NULL);
	for (i = 0; i < rv->nfiles; i++) {
		const struct tui_rv_file *f = &rv->files[i];

		if (f->whole || f->nhunks == 0) {
			t++;
			k += f->keep;
			continue;
		}
		for (j = 0; j < f->nhunks; j++) {
			t++;
			k += f->hkeep[j];
		}
	}
	*kept = k;
	*total = t;
}

/* Append ",s" (or "s" first) to buf at *o; false when it does not fit. */
static bool
cat(char *buf, size_t bufsz, size_t *o, const char *s)
{
	int n = snprintf(buf + *o, bufsz - *o, "%s%s", *o ? "," : "", s);

	if (n < 0 || (size_t)n >= bufsz - *o)
		return false;
	*o += (size_t)n;
	return true;
}

int
tui_review_hunks(const struct tui_review *rv, char *buf, size_t bufsz)
{
	size_t kept, total, i, j, o = 0, hk;

	assert(rv != NULL && buf != NULL && bufsz > 0);
	buf[0] = '\0';
	tui_review_counts(rv, &kept, &total);
	if (kept == total)
		return 0;
	if (kept == 0)
		return -ENOENT;
	for (i = 0; i < rv->nfiles; i++) {
		const struct tui_rv_file *f = &rv->files[i];

		if (f->whole || f->nhunks == 0) {
			if (f->keep && !cat(buf, bufsz, &o, f->id))
				goto full;
			continue;
		}
		for (j = hk = 0; j < f->nhunks; j++)
			hk += f->hkeep[j];
		if (hk == f->nhunks) {
			if (!cat(buf, bufsz, &o, f->id))
				goto full;
			continue;
		}
		for (j = 0; j < f->nhunks; j++)
			if (f->hkeep[j] && !cat(buf, bufsz, &o, f->hid[j]))
				goto full;
	}
	return 1;
full:
	buf[0] = '\0';
	return -ENOSPC;
}

void
tui_review_hscroll(struct tui_review *rv, long delta)
{
	size_t max;

	assert(rv != NULL);
	max = rv->maxw > 0 ? rv->maxw - 1 : 0;
	if (delta == LONG_MIN || (delta < 0 && (size_t)-delta > rv->hcol))
		rv->hcol = 0;
	else if (delta < 0)
		rv->hcol -= (size_t)-delta;
	else
		rv->hcol = (size_t)delta > max - rv->hcol ? max :
		    rv->hcol + (size_t)delta;
	if (rv->hcol > max)
		rv->hcol = max;
}

void
tui_review_scroll(struct tui_review *rv, int height)
{
	assert(rv != NULL);
	if (height <= 0)
		return;
	if (rv->cur < rv->top)
		rv->top = rv->cur;
	else if (rv->cur >= rv->top + (size_t)height)
		rv->top = rv->cur - (size_t)height + 1;
	if (rv->n > (size_t)height && rv->top > rv->n - (size_t)height)
		rv->top = rv->n - (size_t)height;
	if (rv->n <= (size_t)height)
		rv->top = 0;
}
