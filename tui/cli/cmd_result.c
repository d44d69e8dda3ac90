/*
 * cmd_result.c: `corral review`, `corral reject` and `corral apply` (SPEC
 * 7.4-7.6, 11): the result printed from lease_result_review's document
 * (manifest, findings, flags, files, checks, the diff per file and per
 * hunk with hunk IDs, the receipt), every text that came from a sandbox
 * escaped (SPEC 4.7), colour only on a terminal without NO_COLOR.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "lease/lease.h"
#include "lease/result/result.h"
#include "tui/cli/cli.h"
#include "tui/runtime/runtime.h"

#define LOG_SHOWN 2000		/* bytes of a failed check's log shown */

struct out {
	FILE *f;
	bool color;
};

enum { C_OFF, C_BOLD, C_RED, C_GREEN, C_YELLOW, C_CYAN, C_DIM };

static void
sgr(const struct out *o, int c)
{
	static const char *const codes[] = {
		"\033[m", "\033[1m", "\033[31m", "\033[32m", "\033[33m",
		"\033[36m", "\033[2m",
	};

	if (o->color)
		fputs(codes[c], o->f);
}

/* Untrusted text, escaped; tabs kept for diff lines. */
static void
put(const struct out *o, const char *s, size_t n, unsigned flags)
{
	size_t need;
	char *buf;

	if (s == NULL)
		return;
	need = tui_escape_size(s, n, flags) + 1;
	if ((buf = malloc(need)) == NULL)
		return;
	tui_escape_ex(s, n, buf, need, flags);
	fputs(buf, o->f);
	free(buf);
}

static void
puts_j(const struct out *o, json_t *v)
{
	if (json_is_string(v))
		put(o, json_string_value(v), json_string_length(v), 0);
	else if (json_is_integer(v))
		fprintf(o->f, "%lld", (long long)json_integer_value(v));
	else
		fputs("-", o->f);
}

static const char *
jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static void
label(const struct out *o, const char *l)
{
	sgr(o, C_BOLD);
	fprintf(o->f, "%-10s", l);
	sgr(o, C_OFF);
}

static void
flags_line(const struct out *o, json_t *flags)
{
	json_t *v;
	size_t i;

	if (json_array_size(flags) == 0)
		return;
	sgr(o, C_YELLOW);
	fputs(" [", o->f);
	json_array_foreach(flags, i, v) {
		fputs(i ? ", " : "", o->f);
		puts_j(o, v);
	}
	fputs("]", o->f);
	sgr(o, C_OFF);
}

/* A ready result with no change at all: nothing to apply (issue 21). */
static bool
empty_result(json_t *r)
{
	json_t *c = json_object_get(r, "counts");

	return jstr(r, "commit") != NULL && json_is_object(c) &&
	    json_integer_value(json_object_get(c, "files")) == 0 &&
	    json_integer_value(json_object_get(json_object_get(r, "patch"),
	    "bytes")) == 0;
}

static void
print_head(const struct out *o, json_t *d)
{
	json_t *r = json_object_get(d, "result"), *p, *a;

	sgr(o, C_BOLD);
	fprintf(o->f, "lease %s", jstr(d, "id") ? jstr(d, "id") : "?");
	sgr(o, C_OFF);
	if (jstr(d, "name") != NULL) {
		fputs(" (", o->f);
		puts_j(o, json_object_get(d, "name"));
		fputs(")", o->f);
	}
	fprintf(o->f, "  %s", jstr(d, "lease_state"));
	if (jstr(d, "failed_reason") != NULL)
		fprintf(o->f, " (%s)", jstr(d, "failed_reason"));
	fputs("  result ", o->f);
	sgr(o, strcmp(jstr(r, "status") ? jstr(r, "status") : "", "ready") ==
	    0 ? C_GREEN : C_RED);
	fputs(jstr(r, "status") ? jstr(r, "status") : "none", o->f);
	sgr(o, C_OFF);
	fputs("\n", o->f);
	label(o, "base");
	fprintf(o->f, "%.12s", jstr(r, "base") ? jstr(r, "base") : "-");
	if (jstr(r, "base_ref") != NULL)
		fprintf(o->f, " (%s)", jstr(r, "base_ref"));
	if (jstr(r, "parent") != NULL && jstr(r, "base") != NULL &&
	    strcmp(jstr(r, "parent"), jstr(r, "base")) != 0)
		fprintf(o->f, ", on top of %.12s", jstr(r, "parent"));
	fputs("\n", o->f);
	if (jstr(r, "commit") != NULL) {
		label(o, "commit");
		fprintf(o->f, "%s on %s, tree %.12s, via %s\n",
		    jstr(r, "commit"), jstr(r, "branch") ? jstr(r, "branch") :
		    "corral/?", jstr(r, "tree") ? jstr(r, "tree") : "-",
		    jstr(r, "via") ? jstr(r, "via") : "-");
	}
	if (jstr(r, "summary") != NULL) {
		label(o, "summary");
		fprintf(o->f, "%s\n", jstr(r, "summary"));
	}
	if (empty_result(r)) {
		label(o, "empty");
		fputs("the agent changed nothing in the repository: nothing to "
		    "apply\n", o->f);
	}
	if ((p = json_object_get(r, "patch")) != NULL && jstr(p, "sha256")) {
		label(o, "patch");
		fprintf(o->f, "sha256:%s, %lld bytes; hunk IDs "
		    "%.8s:FILE:HUNK\n",
		    jstr(p, "sha256"), (long long)json_integer_value(
		    json_object_get(p, "bytes")), jstr(p, "sha256"));
	}
	a = json_object_get(r, "artifacts");
	if (json_integer_value(json_object_get(a, "files")) > 0) {
		label(o, "artifacts");
		fprintf(o->f, "%lld file(s), %lld bytes in ",
		    (long long)json_integer_value(json_object_get(a, "files")),
		    (long long)json_integer_value(json_object_get(a, "bytes")));
		puts_j(o, json_object_get(a, "dir"));
		fputs("\n", o->f);
	}
	if (jstr(d, "worktree") != NULL && jstr(r, "commit") != NULL) {
		label(o, "worktree");
		puts_j(o, json_object_get(d, "worktree"));
		fputs("\n", o->f);
	}
}

static void
print_reasons(const struct out *o, json_t *r)
{
	json_t *a = json_object_get(r, "reasons"), *v;
	size_t i;

	if (json_array_size(a) == 0)
		return;
	sgr(o, C_BOLD);
	fputs("rejected by the import gate (quarantined, never "
	    "materialised):\n", o->f);
	sgr(o, C_OFF);
	json_array_foreach(a, i, v) {
		fputs("  ", o->f);
		sgr(o, C_RED);
		fprintf(o->f, "%-26s", jstr(v, "reason"));
		sgr(o, C_OFF);
		puts_j(o, json_object_get(v, "path"));
		if (jstr(v, "detail") != NULL) {
			fputs("  (", o->f);
			puts_j(o, json_object_get(v, "detail"));
			fputs(")", o->f);
		}
		fputs("\n", o->f);
	}
	if (json_integer_value(json_object_get(r, "findings_dropped")) > 0)
		fprintf(o->f, "  ... and %lld more\n", (long long)
		    json_integer_value(json_object_get(r, "findings_dropped")));
}

/* What the agent profile's workspace rules left out of the result. */
static void
print_excluded(const struct out *o, json_t *r)
{
	json_t *x = json_object_get(r, "excluded"), *v;
	size_t i;

	if (json_integer_value(json_object_get(x, "entries")) <= 0)
		return;
	sgr(o, C_YELLOW);
	fprintf(o->f, "left out: %lld new name(s) in the workspace matching "
	    "the agent profile's [workspace] exclude:", (long long)
	    json_integer_value(json_object_get(x, "entries")));
	json_array_foreach(json_object_get(x, "patterns"), i, v) {
		fputs(" ", o->f);
		puts_j(o, v);
	}
	fputs("\n", o->f);
	sgr(o, C_OFF);
}

static void
print_files(const struct out *o, json_t *m)
{
	json_t *files = json_object_get(m, "files"), *f;
	size_t i;
	unsigned fl = 0;

	if (json_array_size(files) == 0)
		return;
	sgr(o, C_BOLD);
	fputs("files:\n", o->f);
	sgr(o, C_OFF);
	json_array_foreach(files, i, f) {
		const char *st = jstr(f, "status");

		fl |= json_array_size(json_object_get(f, "flags")) > 0;
		fprintf(o->f, "  %c %-6s ", st ? (char)(st[0] - 32) : '?',
		    jstr(f, "new_mode") ? jstr(f, "new_mode") :
		    jstr(f, "old_mode") ? jstr(f, "old_mode") : "");
		puts_j(o, json_object_get(f, "path"));
		fprintf(o->f, "  (+%lld -%lld", (long long)json_integer_value(
		    json_object_get(f, "insertions")), (long long)
		    json_integer_value(json_object_get(f, "deletions")));
		if (json_is_integer(json_object_get(f, "new_size")))
			fprintf(o->f, ", %lld bytes", (long long)
			    json_integer_value(json_object_get(f,
			    "new_size")));
		if (jstr(f, "old_mode") && jstr(f, "new_mode") &&
		    strcmp(jstr(f, "old_mode"), jstr(f, "new_mode")) != 0)
			fprintf(o->f, ", mode %s -> %s", jstr(f, "old_mode"),
			    jstr(f, "new_mode"));
		if (json_is_true(json_object_get(f, "binary")))
			fputs(", binary", o->f);
		fputs(")", o->f);
		flags_line(o, json_object_get(f, "flags"));
		fputs("\n", o->f);
	}
	if (fl) {
		sgr(o, C_YELLOW);
		fputs("  flagged paths change CI, git or editor/agent config, "
		    "shell rc files, or what the\n  declared checks execute: "
		    "review them explicitly\n", o->f);
		sgr(o, C_OFF);
	}
}

/* The log of a check, from its receipt entry. */
static json_t *
check_log(json_t *d, const char *name, const char *commit)
{
	json_t *rc = json_object_get(d, "receipts"), *e, *f, *found = NULL;
	size_t i;

	json_array_foreach(rc, i, e) {
		f = json_object_get(e, "fields");
		if (jstr(e, "kind") == NULL || strcmp(jstr(e, "kind"), "check"))
			continue;
		if (jstr(f, "name") == NULL || strcmp(jstr(f, "name"), name))
			continue;
		if (commit != NULL && jstr(f, "commit") != NULL &&
		    strcmp(jstr(f, "commit"), commit) != 0)
			continue;
		found = json_object_get(f, "log");
	}
	return found;
}

static void
print_checks(const struct out *o, json_t *d)
{
	json_t *r = json_object_get(d, "result");
	json_t *a = json_object_get(r, "checks"), *c, *log;
	const char *st;
	size_t i, n;

	if (json_is_null(a) || a == NULL) {
		if (jstr(r, "commit") != NULL) {
			label(o, "checks");
			fputs("pending\n", o->f);
		}
		return;
	}
	if (json_array_size(a) == 0) {
		label(o, "checks");
		fputs("none declared by the policy\n", o->f);
		return;
	}
	sgr(o, C_BOLD);
	fputs("checks (exec zone, on a copy of the result):\n", o->f);
	sgr(o, C_OFF);
	json_array_foreach(a, i, c) {
		st = jstr(c, "status") ? jstr(c, "status") : "?";
		fputs("  ", o->f);
		puts_j(o, json_object_get(c, "name"));
		fputs("  ", o->f);
		sgr(o, strcmp(st, "pass") == 0 ? C_GREEN : C_RED);
		fputs(st, o->f);
		sgr(o, C_OFF);
		fprintf(o->f, "  exit %lld, %.1f s",
		    (long long)json_integer_value(json_object_get(c, "exit")),
		    (double)json_integer_value(json_object_get(c,
		    "duration_ms")) / 1000.0);
		if (json_is_false(json_object_get(c, "independent"))) {
			sgr(o, C_YELLOW);
			fputs("  NOT independent (the agent changed its "
			    "inputs: ", o->f);
			json_t *v;
			size_t k;

			json_array_foreach(json_object_get(c, "changed_inputs"),
			    k, v) {
				fputs(k ? ", " : "", o->f);
				puts_j(o, v);
			}
			fputs(")", o->f);
			sgr(o, C_OFF);
		} else {
			fputs("  independent", o->f);
		}
		if (jstr(c, "detail") != NULL && *jstr(c, "detail")) {
			fputs("\n    ", o->f);
			puts_j(o, json_object_get(c, "detail"));
		}
		fputs("\n", o->f);
		if (strcmp(st, "pass") == 0 || strcmp(st, "unavailable") == 0)
			continue;
		log = check_log(d, jstr(c, "name") ? jstr(c, "name") : "",
		    jstr(c, "commit"));
		if (!json_is_string(log) || json_string_length(log) == 0)
			continue;
		n = json_string_length(log);
		sgr(o, C_DIM);
		fputs("    log (tail):\n", o->f);
		put(o, json_string_value(log) + (n > LOG_SHOWN ? n - LOG_SHOWN :
		    0), n > LOG_SHOWN ? LOG_SHOWN : n, TUI_ESC_KEEP_NL |
		    TUI_ESC_KEEP_TAB);
		fputs("\n", o->f);
		sgr(o, C_OFF);
	}
}

static void
print_diff(const struct out *o, json_t *d)
{
	json_t *files = json_object_get(d, "diff"), *f, *h, *l;
	size_t i, j, k;

	if (json_array_size(files) == 0)
		return;
	sgr(o, C_BOLD);
	fputs("diff:\n", o->f);
	sgr(o, C_OFF);
	json_array_foreach(files, i, f) {
		sgr(o, C_BOLD);
		fprintf(o->f, "file %lld  ", (long long)json_integer_value(
		    json_object_get(f, "file")));
		puts_j(o, json_object_get(f, "path"));
		fprintf(o->f, "  (%s", jstr(f, "status"));
		if (json_is_true(json_object_get(f, "binary")))
			fputs(", binary", o->f);
		fprintf(o->f, ")  [%s]", jstr(f, "id"));
		sgr(o, C_OFF);
		flags_line(o, json_object_get(f, "flags"));
		fputs("\n", o->f);
		json_array_foreach(json_object_get(f, "hunks"), j, h) {
			sgr(o, C_CYAN);
			puts_j(o, json_object_get(h, "header"));
			sgr(o, C_OFF);
			sgr(o, C_DIM);
			fprintf(o->f, "  [%s]\n", jstr(h, "id"));
			sgr(o, C_OFF);
			json_array_foreach(json_object_get(h, "lines"), k, l) {
				const char *org = json_string_value(
				    json_array_get(l, 0));
				json_t *t = json_array_get(l, 1);

				if (org == NULL)
					continue;
				sgr(o, *org == '+' ? C_GREEN : *org == '-' ?
				    C_RED : *org == '\\' ? C_DIM : C_OFF);
				fputs(*org == '\\' ? "\\ " : org, o->f);
				if (json_is_string(t))
					put(o, json_string_value(t),
					    json_string_length(t),
					    TUI_ESC_KEEP_TAB);
				sgr(o, C_OFF);
				fputs("\n", o->f);
			}
		}
	}
}

static void
print_tail(const struct out *o, json_t *d)
{
	json_t *rc = json_object_get(d, "receipt"), *r;
	const char *id = jstr(d, "id");

	if (tui_egress_line(NULL, json_object_get(d, "receipts"), "")) {
		label(o, "egress");
		tui_egress_line(o->f, json_object_get(d, "receipts"), "");
	}
	label(o, "receipt");
	fprintf(o->f, "%lld %s, head %.16s, %s\n", (long long)
	    json_integer_value(json_object_get(rc, "length")),
	    json_integer_value(json_object_get(rc, "length")) == 1 ?
	    "entry" : "entries", jstr(rc, "head") ? jstr(rc, "head") : "-",
	    json_is_true(json_object_get(rc, "verified")) ? "verified" :
	    "FAILS VERIFICATION");
	r = json_object_get(d, "result");
	if (jstr(d, "stale") != NULL) {
		sgr(o, C_RED);
		fputs("stale: ", o->f);
		puts_j(o, json_object_get(d, "stale"));
		fputs("\n", o->f);
		sgr(o, C_OFF);
		return;
	}
	if (empty_result(r) &&
	    strcmp(jstr(d, "lease_state"), "result_ready") == 0) {
		label(o, "next");
		fprintf(o->f, "corral reject %s (nothing to apply; keeps the "
		    "receipts and history)\n", id);
	} else if (json_is_true(json_object_get(d, "reviewed")) &&
	    strcmp(jstr(d, "lease_state"), "result_ready") == 0) {
		label(o, "next");
		fprintf(o->f, "corral apply %s [--into BRANCH] [--hunks "
		    "%.8s:F:H,...]  or  corral reject %s\n", id,
		    jstr(json_object_get(r, "patch"), "sha256") ?
		    jstr(json_object_get(r, "patch"), "sha256") : "", id);
	} else if (strcmp(jstr(r, "status") ? jstr(r, "status") : "",
	    "quarantined") == 0) {
		label(o, "next");
		fprintf(o->f, "corral reject %s (keeps the quarantine and "
		    "history; corral gc %s removes them)\n", id, id);
	}
}

static int
review_exec(struct tui_ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct lease_record rec;
	struct out o;
	json_t *doc = NULL;
	int ch, rc;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "j", opts, NULL)) != -1) {
		if (ch == 'j')
			c->json = true;
		else
			return tui_ctx_usage(c, "unknown option '%.64s'",
			    argv[optind - 1]);
	}
	if (optind != argc - 1)
		return tui_ctx_usage(c, "expected one lease ID or name");
	if ((rc = tui_ctx_find_lease(c, argv[optind], &rec)) != 0)
		return rc;
	lease_git_init();
	rc = lease_result_review(c->store, c->state_dir, rec.id,
	    LEASE_REVIEW_MARK, &doc);
	lease_git_shutdown();
	lease_record_clear(&rec);
	if (doc == NULL)
		return tui_ctx_err(c, "%s", lease_store_errmsg(c->store));
	if (c->json) {
		tui_ctx_print_json(doc);
	} else {
		o.f = stdout;
		o.color = isatty(STDOUT_FILENO) && getenv("NO_COLOR") == NULL;
		print_head(&o, doc);
		print_reasons(&o, json_object_get(doc, "result"));
		print_files(&o, json_object_get(doc, "manifest"));
		print_excluded(&o, json_object_get(doc, "result"));
		print_checks(&o, doc);
		print_diff(&o, doc);
		print_tail(&o, doc);
		json_decref(doc);
	}
	if (rc == LEASE_ESTALE) {
		fprintf(stderr, "corral review: ");
		tui_ctx_put_escaped(stderr, lease_store_errmsg(c->store),
		    strlen(lease_store_errmsg(c->store)));
		fprintf(stderr, " (not recorded as reviewed)\n");
		return TUI_EXIT_FAIL;
	}
	return rc < 0 ? TUI_EXIT_FAIL : TUI_EXIT_OK;
}

const struct tui_cmd tui_cmd_review = {
	.name = "review",
	.usage = "ID [--json]",
	.help = "Print a lease's result: status, base, the result "
		"commit on\ncorral/ID, the manifest's files with their flags, "
		"findings of the import\ngate, the declared checks, the diff "
		"per file and per hunk with hunk IDs\n(DIGEST:FILE:HUNK, bound "
		"to the patch digest, for apply --hunks) and the\nreceipt. "
		"Reviewing records the commit as reviewed, which apply "
		"requires; it\nrefuses (exit 1) if corral/ID or the review "
		"worktree no longer match it.\nText from the sandbox is "
		"escaped; colour only on a terminal (NO_COLOR).",
	.exec = review_exec,
};

static int
reject_exec(struct tui_ctx *c, int argc, char **argv)
{
	struct lease_record rec;
	int rc;

	if (argc != 2 || argv[1][0] == '-')
		return tui_ctx_usage(c, "expected one lease ID or name");
	if ((rc = tui_ctx_find_lease(c, argv[1], &rec)) != 0)
		return rc;
	lease_git_init();
	rc = lease_result_reject_ex(c->store, c->state_dir, rec.id,
	    tui_checks_before_teardown, c);
	lease_git_shutdown();
	if (rc < 0) {
		lease_record_clear(&rec);
		return tui_ctx_err(c, "%s", lease_store_errmsg(c->store)[0] ?
		    lease_store_errmsg(c->store) : lease_strerror(rc));
	}
	/* trusted_local: an expected daemon still running, and its cgroup */
	if (rec.mode == LEASE_MODE_TRUSTED_LOCAL)
		tui_cmd_end_tracked(c, &rec, "reject");
	printf("rejected %s: runtime resources removed; the result, "
	    "receipts and history are kept\n", rec.id);
	lease_record_clear(&rec);
	return TUI_EXIT_OK;
}

const struct tui_cmd tui_cmd_reject = {
	.name = "reject",
	.usage = "ID",
	.help = "Reject a lease's result: a result_ready lease "
		"becomes rejected;\na failed one (holder_lost, result_invalid) "
		"keeps its state. Either way the\nsandbox workspace and the "
		"review worktree are removed; the patch, manifest,\n"
		"quarantine, branch corral/ID, receipts and history stay until "
		"'corral gc ID'.",
	.exec = reject_exec,
};

static int
apply_exec(struct tui_ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "into", required_argument, NULL, 'i' },
		{ "hunks", required_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct lease_apply_outcome out;
	struct lease_apply_opts ao;
	struct tui_checks_env *env = NULL;
	struct lease_record rec;
	char err[512];
	int ch, rc;

	memset(&ao, 0, sizeof ao);
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch == 'i')
			ao.into = optarg;
		else if (ch == 'h')
			ao.hunks = optarg;
		else
			return tui_ctx_usage(c, "unknown or incomplete option "
			    "'%.64s'", argv[optind - 1]);
	}
	if (optind != argc - 1)
		return tui_ctx_usage(c, "expected one lease ID or name");
	if ((rc = tui_ctx_find_lease(c, argv[optind], &rec)) != 0)
		return rc;
	if (tui_checks_env_new(c, &rec, NULL, &env, err, sizeof err) < 0) {
		lease_record_clear(&rec);
		return tui_ctx_err(c, "%s", err);
	}
	ao.policy = tui_checks_env_policy(env);
	ao.run_check = tui_checks_run;
	ao.ud = env;
	ao.before_teardown = tui_checks_before_teardown;
	ao.teardown_ud = c;
	lease_git_init();
	rc = lease_apply(c->store, c->state_dir, rec.id, &ao, &out);
	lease_git_shutdown();
	tui_checks_env_free(env);
	if (rc == 0) {
		/* from == to: the owner ran the merge; it was in already */
		printf("applied %s: %s %.12s..%.12s (%s)\n", rec.id,
		    out.target, out.from, out.to,
		    strcmp(out.from, out.to) == 0 ?
		    "the reviewed commit was in the target already" :
		    "fast-forward to the reviewed commit");
		lease_record_clear(&rec);
		return TUI_EXIT_OK;
	}
	fprintf(stderr, "corral apply: ");
	tui_ctx_put_escaped(stderr, lease_store_errmsg(c->store),
	    strlen(lease_store_errmsg(c->store)));
	fputc('\n', stderr);
	if (rc == LEASE_ECHECKEDOUT) {
		/* the command the owner can run where the branch is out */
		fprintf(stderr, "  cd ");
		tui_ctx_put_escaped(stderr, out.checked_out,
		    strlen(out.checked_out));
		fprintf(stderr, " && git merge --ff-only corral/%s\n", rec.id);
	}
	lease_record_clear(&rec);
	return TUI_EXIT_FAIL;
}

const struct tui_cmd tui_cmd_apply = {
	.name = "apply",
	.usage = "ID [--into BRANCH] [--hunks LIST]",
	.help = "Integrate a lease's reviewed result commit into "
		"BRANCH (default:\nthe base ref) by fast-forward only: never "
		"forced, never pushed, never into a\nbranch checked out in any "
		"worktree (then it prints the 'git merge --ff-only\n"
		"corral/ID' to run there). It refuses when corral/ID or the "
		"review worktree\nno longer match the reviewed commit. If "
		"BRANCH advanced past the base, the\npatch is re-verified on "
		"top of it and the lease goes back to review (or is\nrefused "
		"when it no longer applies). --hunks DIGEST:FILE:HUNK,... "
		"(IDs from\n'corral review') first makes a commit of only "
		"those hunks, verified and\nchecked again. On success the "
		"review worktree and workspace are removed.\nOne apply or "
		"reject of a lease runs at a time. The move is written to\n"
		"the journal before BRANCH changes; an apply that is "
		"interrupted is finished\nor undone by 'corral reconcile', "
		"from what BRANCH holds.",
	.exec = apply_exec,
};
