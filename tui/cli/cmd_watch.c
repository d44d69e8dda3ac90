/*
 * cmd_watch.c: commands about lifecycle (SPEC 5, 11): `corral explain`
 * (which signal decided the activity), `corral wait` (until a state, with
 * exit 0 / 124 / 3), `corral events` (the journal's transitions, --follow)
 * and `corral report` (run inside a lease by an agent's hook: the private
 * OSC on its own terminal, so nothing can speak for another lease).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "lease/lease.h"
#include "pty/pty.h"
#include "tui/cli/cli.h"
#include "tui/runtime/runtime.h"

#define WATCH_POLL_MS 100

static void
sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int
explain_exec(struct tui_ctx *c, int argc, char **argv)
{
	struct lease_record rec;
	char *js = NULL, why[256] = "";
	json_t *st, *o;
	int rc;

	optind = 1;
	if (argc == 3 && strcmp(argv[2], "--json") == 0) {
		c->json = true;
		argc = 2;
	}
	if (argc != 2 || argv[1][0] == '-')
		return tui_ctx_usage(c, "expected: corral explain ID [--json]");
	if ((rc = tui_ctx_find_lease(c, argv[1], &rec)) != 0)
		return rc;
	o = json_pack("{s:s, s:s}", "id", rec.id, "activity",
	    lease_fsm_activity_name(rec.activity));
	if (tui_probe_holder(c, &rec, 2000, &js, why, sizeof why) ==
	    TUI_HOLDER_ALIVE && (st = json_loads(js, 0, NULL)) != NULL) {
		json_object_set(o, "activity", json_object_get(st, "activity"));
		json_object_set(o, "signal", json_object_get(st, "signal"));
		json_object_set(o, "agent", json_object_get(st, "agent"));
		json_object_set(o, "explain", json_object_get(st, "explain"));
		json_object_set_new(o, "source", json_string("holder"));
		json_decref(st);
	} else {
		/* Ended or lost: the last activity transition says why. */
		struct { char *reason; } last = { NULL };
		json_t *tr = NULL;

		if (lease_json_show(c->store, rec.id, &tr) == 0) {
			json_t *v = json_object_get(tr, "transitions"), *t;
			size_t i;

			json_array_foreach(v, i, t) {
				const char *k = json_string_value(
				    json_object_get(t, "kind"));
				if (k != NULL && strcmp(k, "activity") == 0) {
					free(last.reason);
					last.reason = json_dumps(
					    json_object_get(t, "reason"),
					    JSON_ENCODE_ANY);
				}
			}
			json_decref(tr);
		}
		json_object_set_new(o, "signal", last.reason ?
		    json_loads(last.reason, JSON_DECODE_ANY, NULL) :
		    json_null());
		json_object_set_new(o, "source", json_string("journal"));
		json_object_set_new(o, "lost",
		    !lease_fsm_state_final(rec.state) &&
		    why[0] ? json_string(why) : json_null());
		free(last.reason);
	}
	free(js);
	lease_record_clear(&rec);
	if (c->json) {
		tui_ctx_print_json(o);
		return TUI_EXIT_OK;
	}
	printf("activity: %s\n", json_string_value(json_object_get(o,
	    "activity")));
	printf("decided by: ");
	{
		const char *s = json_string_value(json_object_get(o, "signal"));
		tui_ctx_put_escaped(stdout, s ? s : "-", s ? strlen(s) : 1);
	}
	printf(" (%s)\n", json_string_value(json_object_get(o, "source")));
	if (json_is_string(json_object_get(o, "explain"))) {
		const char *e = json_string_value(json_object_get(o,
		    "explain"));
		char *buf = malloc(tui_escape_size(e, strlen(e),
		    TUI_ESC_KEEP_NL) + 1);

		if (buf != NULL) {
			tui_escape_ex(e, strlen(e), buf,
			    tui_escape_size(e, strlen(e), TUI_ESC_KEEP_NL) + 1,
			    TUI_ESC_KEEP_NL);
			printf("%s%s", buf, buf[0] &&
			    buf[strlen(buf) - 1] != '\n' ? "\n" : "");
			free(buf);
		}
	}
	json_decref(o);
	return TUI_EXIT_OK;
}

const struct tui_cmd tui_cmd_explain = {
	.name = "explain",
	.usage = "ID [--json]",
	.help = "Say which signal decided the lease's current activity state"
		":\na screen rule, a process fact, an OSC mark, a "
		"report, an exit... with the\nevidence the detector holds. "
		"After the agent ends, the journal's last\nactivity transition "
		"answers.",
	.exec = explain_exec,
};

/* Is word one of the comma-separated names in list? */
static bool
in_list(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; *p != '\0';) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len == n && strncmp(p, word, n) == 0)
			return true;
		p += len + (e ? 1 : 0);
	}
	return false;
}

static int
wait_exec(struct tui_ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "until", required_argument, NULL, 'u' },
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	const char *until = NULL;
	int64_t timeout = -1, start = lease_id_now_ms();
	struct lease_record rec;
	char id[LEASE_ID_LEN + 1];
	int ch, rc;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch == 'u')
			until = optarg;
		else if (ch == 't' && tui_duration_parse(optarg, &timeout) == 0)
			continue;
		else
			return tui_ctx_usage(c, "bad option '%.64s'",
			    argv[optind - 1]);
	}
	if (until == NULL || optind != argc - 1)
		return tui_ctx_usage(c, "expected: corral wait ID --until "
		    "STATE[,STATE...] [--timeout SEC]");
	/* Every word must be an activity or a lease state (SPEC 5.1, 5.2). */
	for (const char *p = until; *p != '\0';) {
		char w[32];
		size_t len = strcspn(p, ",");
		enum lease_activity a;
		enum lease_state s;

		if (len == 0 || len >= sizeof w)
			return tui_ctx_usage(c,
			    "bad state list '%.64s'", until);
		memcpy(w, p, len);
		w[len] = '\0';
		if (lease_fsm_activity_parse(w, &a) < 0 &&
		    lease_fsm_state_parse(w, &s) < 0)
			return tui_ctx_usage(c, "unknown state '%s'", w);
		p += len + (p[len] == ',');
	}
	if ((rc = tui_ctx_find_lease(c, argv[optind], &rec)) != 0)
		return rc;
	memcpy(id, rec.id, sizeof id);
	for (;;) {
		const char *act = lease_fsm_activity_name(rec.activity);
		const char *st = lease_fsm_state_name(rec.state);

		if (in_list(until, act) || in_list(until, st)) {
			printf("%s %s\n", id, in_list(until, act) ? act : st);
			lease_record_clear(&rec);
			return TUI_EXIT_OK;
		}
		if (lease_fsm_state_final(rec.state) ||
		    rec.state == LEASE_STATE_RESULT_READY) {
			fprintf(stderr, "corral wait: %s ended %s (%s)\n", id,
			    st, act);
			lease_record_clear(&rec);
			return TUI_EXIT_WAIT_OTHER;
		}
		lease_record_clear(&rec);
		if (timeout >= 0 && lease_id_now_ms() - start >= timeout)
			return TUI_EXIT_TIMEOUT;
		sleep_ms(WATCH_POLL_MS);
		if (lease_record_get(c->store, id, &rec) < 0)
			return tui_ctx_err(c,
			    "%s", lease_store_errmsg(c->store));
	}
}

const struct tui_cmd tui_cmd_wait = {
	.name = "wait",
	.usage = "ID --until STATE[,STATE...] [--timeout SEC]",
	.help = "Wait until the lease's activity (starting, working, prompt, "
		"blocked, done,\nfailed, cancelled) or lease state "
		"(provisioning, running, result_ready,\napplied, rejected, "
		"failed, cancelled) is one of STATEs. Exit 0 when reached,\n"
		"124 on timeout (30, 90s, 5m...), 3 when the lease ended in a "
		"state not\nasked for.",
	.exec = wait_exec,
};

#define EV_NAMES 32	/* leases whose names are kept while printing */

struct ev_print {
	bool json;
	int64_t last;
	struct lease_store *st;
	char ids[EV_NAMES][LEASE_ID_LEN + 1];
	char *names[EV_NAMES];	/* NULL: none (or gc'd) */
	size_t next;
};

/* The lease's name for an event line, looked up once (issue 21). */
static const char *
ev_name(struct ev_print *pp, const char *id)
{
	struct lease_record r;
	size_t i = pp->next;

	for (size_t k = 0; k < EV_NAMES; k++)
		if (strcmp(pp->ids[k], id) == 0)
			return pp->names[k];
	pp->next = (pp->next + 1) % EV_NAMES;
	free(pp->names[i]);
	pp->names[i] = NULL;
	snprintf(pp->ids[i], sizeof pp->ids[i], "%s", id);
	if (lease_record_get(pp->st, id, &r) == 0) {
		if (r.name != NULL)
			pp->names[i] = strdup(r.name);
		lease_record_clear(&r);
	}
	return pp->names[i];
}

static int
print_event(const struct lease_event_row *e, void *ud)
{
	struct ev_print *pp = ud;
	char ts[32];
	time_t t = (time_t)(e->at / 1000);
	struct tm tm;

	const char *name = ev_name(pp, e->id);

	pp->last = e->cursor;
	if (pp->json) {
		json_t *o = json_pack("{s:I, s:s, s:s?, s:I, s:I, s:s, s:s?, "
		    "s:s?, s:s?}", "cursor", (json_int_t)e->cursor, "id", e->id,
		    "name", name, "seq", (json_int_t)e->seq, "at",
		    (json_int_t)e->at, "kind", e->kind, "from", e->from, "to",
		    e->to, "reason", e->reason);
		char *s = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) :
			      NULL;

		if (s != NULL)
			printf("%s\n", s);
		free(s);
		json_decref(o);
	} else {
		gmtime_r(&t, &tm);
		strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
		printf("%s.%03dZ %s ", ts, (int)(e->at % 1000), e->id);
		/* the name came from whoever made the lease: escaped */
		tui_ctx_put_escaped(stdout, name != NULL ? name : "-",
		    name != NULL ? strlen(name) : 1);
		printf(" %-8s %s -> %s", e->kind, e->from ? e->from : "-",
		    e->to ? e->to : "-");
		if (e->reason != NULL) {
			printf("  ");
			tui_ctx_put_escaped(stdout, e->reason,
			    strlen(e->reason));
		}
		printf("\n");
	}
	return 0;
}

static int
events_exec(struct tui_ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "since", required_argument, NULL, 's' },
		{ "follow", no_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct ev_print pp;
	int64_t since = 0, d;
	bool follow = false;
	int ch, rc = TUI_EXIT_OK;

	memset(&pp, 0, sizeof pp);

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "s:fj", opts, NULL)) != -1) {
		if (ch == 's') {
			if (tui_duration_parse(optarg, &d) < 0)
				return tui_ctx_usage(c, "bad duration '%.64s'",
				    optarg);
			since = lease_id_now_ms() - d;
		} else if (ch == 'f') {
			follow = true;
		} else if (ch == 'j') {
			pp.json = true;
		} else {
			return tui_ctx_usage(c, "unknown option '%.64s'",
			    argv[optind - 1]);
		}
	}
	if (optind != argc)
		return tui_ctx_usage(c, "unexpected argument '%.64s'",
		    argv[optind]);
	if ((pp.st = tui_ctx_store(c)) == NULL)
		return TUI_EXIT_FAIL;
	do {
		if (lease_event_list(c->store, NULL, since, pp.last,
		    print_event, &pp, NULL) < 0) {
			rc = tui_ctx_err(c, "%s", lease_store_errmsg(c->store));
			break;
		}
		fflush(stdout);
		if (follow)
			sleep_ms(250);
	} while (follow);
	for (size_t k = 0; k < EV_NAMES; k++)
		free(pp.names[k]);
	return rc;
}

const struct tui_cmd tui_cmd_events = {
	.name = "events",
	.usage = "[--since DURATION] [--follow] [--json]",
	.help = "Print the journal's transitions (lease, activity and cleanup "
		"changes, with\ntime and reason), oldest first; --since limits "
		"to the last DURATION (2h,\n30m...), --follow keeps printing "
		"new ones, --json prints one object per line.",
	.exec = events_exec,
};

static int
report_exec(struct tui_ctx *c, int argc, char **argv)
{
	char seq[128];
	int fd, n;

	if (argc != 2)
		return tui_ctx_usage(c, "expected: corral report STATE");
	n = pty_detect_report_seq(argv[1], seq, sizeof seq);
	if (n < 0)
		return tui_ctx_usage(c, "a report is one of working, prompt, "
		    "blocked, done, failed");
	/* Our own terminal: the report travels on the lease's PTY. */
	if ((fd = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC)) < 0)
		return tui_ctx_err(c,
		    "no terminal to report on (run it inside a "
		    "lease): %s", strerror(errno));
	if (write(fd, seq, (size_t)n) != n) {
		close(fd);
		return tui_ctx_err(c, "write: %s", strerror(errno));
	}
	close(fd);
	return TUI_EXIT_OK;
}

const struct tui_cmd tui_cmd_report = {
	.name = "report",
	.usage = "STATE",
	.help = "Inside a lease, report the agent's own state (working, "
		"prompt, blocked,\ndone, failed) from a hook. It writes the "
		"private sequence ESC ] 7717 ;\ncorral-report ; STATE BEL to "
		"this terminal, so the report travels on the\nlease's own PTY; "
		"any hook can printf it instead. A report is one signal\namong "
		"others and never leaves a state stuck (docs/detection.md).",
	.exec = report_exec,
};
