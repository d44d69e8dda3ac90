/*
 * cmd_ls.c: `corral ls` and `corral show` (SPEC 11): the journal's view of
 * every lease, joined with a status ping of each live holder (with a
 * deadline: a dead or wedged holder shows as lost, with the reason).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "lease/lease.h"
#include "tui/cli/cli.h"
#include "tui/console/console.h"
#include "tui/runtime/runtime.h"

#define LS_PING_MS 1000

static bool
needs_holder(const struct lease_record *r)
{
	return r->state == LEASE_STATE_RUNNING ||
	    (r->state == LEASE_STATE_PROVISIONING && r->holder_pid > 0);
}

/*
 * The holder's journal: "ok", "waiting" (another process holds the write
 * lock) or "unwritable" (disk full, I/O error); the holder keeps what it
 * could not write and retries. ls prints journal_unwritable.
 */
static void
add_journal(json_t *o, json_t *st)
{
	const char *j = json_string_value(json_object_get(st, "journal"));

	if (j == NULL)
		return;
	json_object_set_new(o, "journal", json_string(j));
	if (strcmp(j, "ok") != 0)
		json_object_set(o, "journal_error",
		    json_object_get(st, "journal_error"));
}

/* What LAST says: a journal the holder cannot write comes first. */
static const char *
journal_note(json_t *o, const char *last)
{
	const char *j = json_string_value(json_object_get(o, "journal"));

	if (j != NULL && strcmp(j, "unwritable") == 0)
		return "journal_unwritable (the holder retries)";
	if (j != NULL && strcmp(j, "waiting") == 0)
		return "journal busy (the holder waits for it)";
	return last;
}

/*
 * Add the live holder's view (or why it is lost) to a lease object. A
 * holder that ends between the listing and the ping (a check finishing,
 * the agent exiting) is not lost: it journaled its end first. So with
 * reread, a holder that does not answer makes the row be read again, and
 * if the row moved on, *r becomes the new row and false is returned: the
 * caller builds the object again (SPEC 9.2).
 */
static bool
add_live(struct tui_ctx *c, struct lease_record *r, json_t *o, bool reread)
{
	char why[256], *js = NULL;
	struct lease_record again;
	enum tui_holder_state hs;
	json_t *st;

	long procs = -1;

	/* trusted_local: the processes its tracking cgroup holds now */
	if (tui_track_count(c, r, &procs) < 0)
		procs = -1;
	json_object_set_new(o, "processes", procs >= 0 ?
	    json_integer(procs) : json_null());
	if (!needs_holder(r)) {
		json_object_set_new(o, "lost", json_null());
		return true;
	}
	hs = tui_probe_holder(c, r, LS_PING_MS, &js, why, sizeof why);
	if (hs != TUI_HOLDER_ALIVE) {
		memset(&again, 0, sizeof again);
		if (reread && lease_record_get(c->store, r->id, &again) == 0 &&
		    (again.state != r->state ||
		    again.holder_pid != r->holder_pid)) {
			lease_record_clear(r);
			*r = again;
			return false;
		}
		lease_record_clear(&again);
		json_object_set_new(o, "lost", json_string(why));
		return true;
	}
	json_object_set_new(o, "lost", json_null());
	if ((st = json_loads(js, 0, NULL)) != NULL) {
		json_object_set(o, "title", json_object_get(st, "title"));
		json_object_set(o, "last_line",
		    json_object_get(st, "last_line"));
		json_object_set(o, "child_pid",
		    json_object_get(st, "child_pid"));
		json_object_set(o, "question", json_object_get(st,
		    "question"));
		json_object_set(o, "transcript_truncated",
		    json_object_get(st, "transcript_truncated"));
		add_journal(o, st);
		json_decref(st);
	}
	free(js);
	return true;
}

static void
print_field(const char *s, int width)
{
	char buf[256];
	size_t n;

	if (s == NULL)
		s = "-";
	tui_escape(s, strlen(s), buf, sizeof buf);
	n = strlen(buf);
	if (width > 0 && n > (size_t)width) {
		buf[width - 1] = '~';
		buf[width] = '\0';
	}
	printf("%-*s ", width, buf);
}

static int
ls_exec(struct tui_ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "failed", no_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct lease_record *v = NULL;
	struct lease_store *st;
	bool all = false, failed = false;
	size_t n = 0, hidden = 0;
	json_t *arr;
	int ch;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "afj", opts, NULL)) != -1) {
		if (ch == 'a')
			all = true;
		else if (ch == 'f')
			failed = true;
		else if (ch == 'j')
			c->json = true;
		else
			return tui_ctx_usage(c, "unknown option '%.64s'",
			    argv[optind - 1]);
	}
	if (optind < argc)
		return tui_ctx_usage(c, "unexpected argument '%.64s'",
		    argv[optind]);
	if (failed && !all)
		return tui_ctx_usage(c, "--failed goes with --all (ls --all "
		    "--failed)");
	if ((st = tui_ctx_store(c)) == NULL)
		return TUI_EXIT_FAIL;
	if (lease_record_list(st, all ? LEASE_LIST_ALL : 0, &v, &n) < 0)
		return tui_ctx_err(c, "%s", lease_store_errmsg(st));
	arr = json_array();
	for (size_t i = 0; i < n; i++) {
		json_t *o;
		int tries = 0;

		/*
		 * A `corral new` that failed before creating anything: only
		 * with --failed in text; --json marks it (issue 21).
		 */
		if (tui_view_stillborn(&v[i]) && !failed && !c->json) {
			hidden++;
			continue;
		}
		while (o = lease_json_record(&v[i], 0),
		    !add_live(c, &v[i], o, tries++ < 2))
			json_decref(o);
		json_object_set_new(o, "created_nothing",
		    json_boolean(tui_view_stillborn(&v[i])));
		json_array_append_new(arr, o);
	}
	if (c->json) {
		tui_ctx_print_json(arr);
	} else {
		printf("%-24s %-16s %-12s %-10s %-13s %-5s %s\n", "ID",
		    "NAME", "STATE", "ACTIVITY", "MODE", "PROCS", "LAST");
		for (size_t i = 0; i < json_array_size(arr); i++) {
			json_t *o = json_array_get(arr, i);
			const char *lost = json_string_value(
			    json_object_get(o, "lost"));
			const char *last = json_string_value(
			    json_object_get(o, "last_line"));

			print_field(json_string_value(json_object_get(o, "id")),
			    24);
			print_field(json_string_value(
			    json_object_get(o, "name")), 16);
			print_field(json_string_value(
			    json_object_get(o, "lease_state")), 12);
			print_field(lost ? "lost" : json_string_value(
			    json_object_get(o, "activity")), 10);
			json_t *pr = json_object_get(o, "processes");
			char procs[24] = "-";

			print_field(json_string_value(
			    json_object_get(o, "adapter")), 13);
			if (json_is_integer(pr))
				snprintf(procs, sizeof procs, "%lld",
				    (long long)json_integer_value(pr));
			print_field(procs, 5);
			print_field(lost ? lost : journal_note(o, last), 0);
			printf("\n");
		}
		if (hidden > 0)
			printf("(and %zu failed attempt%s that created nothing: "
			    "corral ls --all --failed)\n", hidden, hidden == 1 ?
			    "" : "s");
		json_decref(arr);
	}
	lease_record_list_free(v, n);
	return TUI_EXIT_OK;
}

const struct tui_cmd tui_cmd_ls = {
	.name = "ls",
	.usage = "[--all [--failed]] [--json]",
	.help = "List live leases (--all adds finished ones, but for the "
		"failed attempts\nthat created nothing, which --failed adds: a "
		"bad policy, not a repository,\na preflight refusal): ID, "
		"name, lease "
		"state, activity,\nmode label, the processes of a trusted_local "
		"lease (PROCS: every one it\nstarted, tracked; - for other "
		"leases) and the last line of output. A\nlease whose holder is "
		"dead or does not answer within 1 s shows as lost,\nwith the "
		"reason; one whose holder cannot write the journal (its disk\n"
		"full) says journal_unwritable: the holder keeps what it could "
		"not write and\nretries. --json prints an array of objects with "
		"id, name, lease_state,\nactivity, unseen, mode, adapter, branch, "
		"worktree, workspace, sandbox_id,\nholder_pid, cleanup, "
		"processes, usage (the model's tokens and cost: requests,\n"
		"input, output, cache_write, cache_read, cost_usd, unknown_cost) "
		"and, for a\nlive holder, journal (ok, waiting, unwritable); "
		"--json lists every lease, the\nfailed attempts with "
		"created_nothing true.",
	.exec = ls_exec,
};

void
tui_cmd_ls_mark_seen(struct tui_ctx *c, const char *id, bool unseen)
{
	if (!unseen || c->json || !isatty(STDOUT_FILENO) || c->store == NULL)
		return;
	TUI_BEST_EFFORT(lease_record_mark_seen(c->store, id));
}

/*
 * The effective policy (INI text from the journal) as indented lines,
 * "[section]" then "  key = value", blank lines and comments left out;
 * escaped like everything else `show` prints (SPEC 4.7).
 */
static void
show_policy(const char *text)
{
	const char *p = text, *e;

	printf("policy:\n");
	for (; *p != '\0'; p = *e ? e + 1 : e) {
		size_t n;

		e = p + strcspn(p, "\n");
		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		n = (size_t)(e - p);
		while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t' ||
		    p[n - 1] == '\r'))
			n--;
		if (n == 0 || *p == ';' || *p == '#')
			continue;
		printf(*p == '[' ? "  " : "    ");
		tui_ctx_put_escaped(stdout, p, n);
		printf("\n");
	}
}

/* The limits object as "  key = value" lines. */
static void
show_limits(json_t *lim)
{
	const char *k;
	json_t *v;

	printf("limits:\n");
	json_object_foreach(lim, k, v) {
		char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY |
		    JSON_ENSURE_ASCII);

		printf("  %-18s = ", k);
		if (s != NULL)
			tui_ctx_put_escaped(stdout, s, strlen(s));
		printf("\n");
		free(s);
	}
}

/* The model usage (the gateway's totals on the lease row) as one line. */
static void
show_usage(json_t *u)
{
	long long unknown = (long long)json_integer_value(json_object_get(u,
	    "unknown_cost"));

	printf("%-16s %lld requests, %lld tokens in, %lld out, cache %lld "
	    "written, %lld read; %s USD", "usage",
	    (long long)json_integer_value(json_object_get(u, "requests")),
	    (long long)json_integer_value(json_object_get(u, "input")),
	    (long long)json_integer_value(json_object_get(u, "output")),
	    (long long)json_integer_value(json_object_get(u, "cache_write")),
	    (long long)json_integer_value(json_object_get(u, "cache_read")),
	    json_string_value(json_object_get(u, "cost_usd")));
	if (unknown > 0)
		printf(" and %lld request%s of unknown cost", unknown,
		    unknown == 1 ? "" : "s");
	printf("\n");
}

static int
show_exec(struct tui_ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct lease_record rec;
	json_t *o = NULL, *rcpt;
	json_int_t more;
	const char *k;
	json_t *val;
	int ch, rc;
	bool unseen;
	char id[LEASE_ID_LEN + 1];

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
	for (int tries = 0;; tries++) {
		if (lease_json_show(c->store, rec.id, &o) < 0) {
			lease_record_clear(&rec);
			return tui_ctx_err(c, "%s",
			    lease_store_errmsg(c->store));
		}
		if (add_live(c, &rec, o, tries < 2))
			break;
		json_decref(o);
	}
	unseen = rec.unseen;
	snprintf(id, sizeof id, "%s", rec.id);
	lease_record_clear(&rec);
	if (c->json) {
		tui_ctx_print_json(o);
		return TUI_EXIT_OK;
	}
	json_object_foreach(o, k, val) {
		char *s;

		if (strcmp(k, "receipts") == 0 || strcmp(k, "transitions") == 0
		    || strcmp(k, "resources") == 0 ||
		    strcmp(k, "receipts_omitted") == 0 ||
		    strcmp(k, "transitions_omitted") == 0)
			continue;
		if (strcmp(k, "policy") == 0 && json_is_string(val)) {
			show_policy(json_string_value(val));
			continue;
		}
		if (strcmp(k, "limits") == 0 && json_is_object(val) &&
		    json_object_size(val) > 0) {
			show_limits(val);
			continue;
		}
		if (strcmp(k, "usage") == 0 && json_is_object(val)) {
			show_usage(val);
			continue;
		}
		printf("%-16s ", k);
		/* the receipt, then what its proxy decided (issue 21) */
		if (strcmp(k, "receipt") == 0 && json_is_object(val)) {
			printf("%lld %s, head %.16s, %s\n", (long long)
			    json_integer_value(json_object_get(val, "length")),
			    json_integer_value(json_object_get(val,
			    "length")) == 1 ? "entry" : "entries",
			    json_string_value(json_object_get(val, "head")) ?
			    json_string_value(json_object_get(val, "head")) :
			    "-", json_is_true(json_object_get(val,
			    "verified")) ? "verified" : "FAILS VERIFICATION");
			tui_egress_line(stdout, json_object_get(o,
			    "receipts"), "egress           ");
			continue;
		}
		if (json_is_string(val)) {
			tui_ctx_put_escaped(stdout, json_string_value(val),
			    json_string_length(val));
		} else if ((s = json_dumps(val, JSON_COMPACT |
		    JSON_ENCODE_ANY | JSON_ENSURE_ASCII)) != NULL) {
			tui_ctx_put_escaped(stdout, s, strlen(s));
			free(s);
		}
		printf("\n");
	}
	rcpt = json_object_get(o, "transitions");
	printf("transitions:\n");
	more = json_integer_value(json_object_get(o, "transitions_omitted"));
	for (size_t i = 0; i < json_array_size(rcpt); i++) {
		char *s = json_dumps(json_array_get(rcpt, i),
		    JSON_COMPACT | JSON_ENSURE_ASCII);

		/* A long journal: the oldest and the newest, and how many. */
		if (i == LEASE_SHOW_FIRST && more > 0)
			printf("  ... %lld more transitions, not listed\n",
			    (long long)more);
		printf("  ");
		if (s != NULL)
			tui_ctx_put_escaped(stdout, s, strlen(s));
		printf("\n");
		free(s);
	}
	json_decref(o);
	tui_cmd_ls_mark_seen(c, id, unseen);
	return TUI_EXIT_OK;
}

const struct tui_cmd tui_cmd_show = {
	.name = "show",
	.usage = "ID [--json]",
	.help = "Print one lease in full: base and ref, branch, "
		"worktree, workspace,\nsandbox, policy, limits, cleanup, the "
		"model's usage (requests, tokens and\ncost), the receipt chain "
		"(length, head, and whether it verifies), the result\nand the "
		"transitions. Text that came from a sandbox is printed escaped. "
		"Shown\non a terminal, a done or failed lease counts as seen "
		"(its unseen mark\nclears); --json and output into a pipe or "
		"file leave the mark.",
	.exec = show_exec,
};
